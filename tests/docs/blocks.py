"""The fenced code blocks of the user-facing docs, and what each one is for.

Shared by run.py (shell, JS, C, the Rust checks, artifact names),
test_python_blocks.py (Python, through pytest), and, through `blocks.py extract`, the
suites that run the other languages' blocks: SQL (tests/postgres/run.py), Go
(go/docblocks_test.go) and Java (java/src/test/.../DocBlocksTest.java). One parser for
every language, so every runner reads fences and flags the same way. Standard
library only.

  python3 tests/docs/blocks.py extract LANG DIR
writes each block of LANG that runs to DIR/NNN.LANG, DIR/index.tsv (a line per block:
file, doc path, line of the opening fence) and DIR/seal.key (SEAL_KEY).

The rule (CONTRIBUTING.md, "Docs: every code block runs"): every fenced block runs, unless its
info string says it does not. The first word is the language; further words are flags:
  no_run   never run (a command that installs, builds or needs a cluster; an outline)
  browser  JS for browsers only (the headless-Chromium test of make test-wasm covers it)
  frameworks  needs a framework and a database (docs/frameworks.md): run by its
           language's framework tests (make test-go, test-node, test-python, test-java), with the
           framework installed and DATABASE_URL naming the fixture's PostgreSQL
Languages that are never run: text, ini, yaml, toml, json, diff, xml, console output.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# docs/sealing.md's examples run "from a folder holding a seal.key": the runners
# write this one there (NIST's FF1 AES-256 sample key, hex, as "Generating a key"
# makes a key file).
SEAL_KEY = "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94\n"

# The files whose blocks are checked, relative to the repository root.
DOC_GLOBS = [
    "README.md",
    "python/README.md",
    "node/README.md",
    "bindings/*/README.md",
    "go/README.md",
    "java/README.md",
    "docs/*.md",
]

# What each language's blocks are run by.
RUNNERS = {
    "python": "pytest (tests/docs/test_python_blocks.py) against the installed package",
    "js": "node, against node/ (@flakeid/node) and bindings/wasm/pkg (@flakeid/wasm)",
    "sh": "bash, with the built flakeid CLI first on PATH",
    "c": "cc, against include/flakeid.h and libflakeid",
    "rust": "cargo test --doc (the file is include_str!'d by a crate)",
    "sql": "the PostgreSQL suite (make test-postgres: tests/postgres/run.py docs)",
    "go": "go test (go/docblocks_test.go), as written",
    "java": "the Java suite (DocBlocksTest), as written",
}
ALIASES = {
    "bash": "sh",
    "shell": "sh",
    "javascript": "js",
    "mjs": "js",
    "cjs": "js",
    "py": "python",
}
NEVER_RUN = {
    "text",
    "ini",
    "yaml",
    "yml",
    "toml",
    "json",
    "diff",
    "xml",
    "console",
    "output",
    "proto",
}
FLAGS = {"no_run", "browser", "frameworks"}


@dataclass
class Block:
    path: str  # relative to ROOT
    line: int  # line of the opening fence (1-based)
    lang: str
    flags: set = field(default_factory=set)
    code: str = ""

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.lang in RUNNERS and not (self.flags & FLAGS)


def doc_files() -> list[str]:
    seen = []
    for g in DOC_GLOBS:
        for p in sorted(glob.glob(os.path.join(ROOT, g))):
            rel = os.path.relpath(p, ROOT)
            if rel not in seen:
                seen.append(rel)
    return seen


FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*(.*)$")


def parse(path: str) -> list[Block]:
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        if j == len(lines):
            raise ValueError(f"{path}:{i + 1}: unclosed code fence")
        words = re.split(r"[\s,]+", info) if info else [""]
        lang = ALIASES.get(words[0].lower(), words[0].lower())
        body = [ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines[i + 1 : j]]
        out.append(Block(path, i + 1, lang, set(w for w in words[1:] if w), "\n".join(body) + "\n"))
        i = j + 1
    return out


def all_blocks() -> list[Block]:
    return [b for p in doc_files() for b in parse(p)]


def check_info_strings(blocks: list[Block]) -> list[str]:
    """Every block says what it is: a language this suite knows, run or never run."""
    errors = []
    for b in blocks:
        if not b.lang:
            errors.append(
                f"{b.id}: a fence without a language: use ```text for output, or the language"
            )
        elif b.lang not in RUNNERS and b.lang not in NEVER_RUN:
            errors.append(
                f"{b.id}: unknown language {b.lang!r} (tests/docs/blocks.py RUNNERS / NEVER_RUN)"
            )
        unknown = {f for f in b.flags if f not in FLAGS and not (b.lang == "rust")}
        if unknown:
            errors.append(f"{b.id}: unknown flag(s) {sorted(unknown)} (known: {sorted(FLAGS)})")
    return errors


def extract(lang: str, out_dir: str, frameworks: bool = False) -> list[Block]:
    """Writes the blocks of `lang` that run to out_dir, for a suite in another language;
    with `frameworks`, the blocks flagged frameworks instead."""
    lang = ALIASES.get(lang, lang)
    if lang not in RUNNERS:
        raise SystemExit(f"blocks.py: unknown language {lang!r} (known: {sorted(RUNNERS)})")
    os.makedirs(out_dir, exist_ok=True)
    if frameworks:
        chosen = [b for b in all_blocks() if b.lang == lang and b.flags == {"frameworks"}]
    else:
        chosen = [b for b in all_blocks() if b.lang == lang and b.runs]
    with open(os.path.join(out_dir, "index.tsv"), "w", encoding="utf-8") as index:
        for n, b in enumerate(chosen, 1):
            name = f"{n:03}.{lang}"
            with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
                f.write(b.code)
            index.write(f"{name}\t{b.path}\t{b.line}\n")
    with open(os.path.join(out_dir, "seal.key"), "w") as f:
        f.write(SEAL_KEY)
    return chosen


if __name__ == "__main__":
    import sys

    args = [a for a in sys.argv[1:] if a != "--frameworks"]
    if len(args) != 3 or args[0] != "extract":
        raise SystemExit("usage: blocks.py extract LANG DIR [--frameworks]")
    for b in extract(args[1], args[2], frameworks="--frameworks" in sys.argv):
        print(b.id)
