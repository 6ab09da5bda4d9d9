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
    # docs/sealing.md's examples run from a folder holding a seal.key (as run.py does).
    (tmp_path / "seal.key").write_text("2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94\n")
    # Line numbers in tracebacks point into the doc: pad to the block's first line.
    code = compile("\n" * block.line + block.code, os.path.join(B.ROOT, block.path), "exec")
    exec(code, {"__name__": "__doc_block__"})
