"""The docs' Python blocks, each run as written against the installed package.

make test-docs runs this file with python/.venv's pytest: `import flakeid` is the
package `pip install ./python` installed, not the source folder.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks as B  # noqa: E402

PY_BLOCKS = [b for b in B.all_blocks() if b.lang == "python" and b.runs]


def test_there_are_python_blocks():
    assert len(PY_BLOCKS) >= 2


@pytest.mark.parametrize("block", PY_BLOCKS, ids=[b.id for b in PY_BLOCKS])
def test_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seal.key").write_text(B.SEAL_KEY)  # as run.py: docs/sealing.md's examples read it
    # Line numbers in tracebacks point into the doc: pad to the block's first line.
    code = compile("\n" * block.line + block.code, os.path.join(B.ROOT, block.path), "exec")
    exec(code, {"__name__": "__doc_block__"})
