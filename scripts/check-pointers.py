#!/usr/bin/env python3
"""The pointers in the build's comments resolve (part of make lint).

A comment in the Makefile, mk/, scripts/, tests/, .ci/ or .github/ that names a
file of the repository (`scripts/dist.sh`, `docs/performance.md`) names one that is
tracked (or one the build writes: a git-ignored path); one that names a section
(`docs/development.md, "Where the time goes"` or `FILE#anchor`) names a heading that
FILE has. A section named without quotes (a Markdown file, a comma and a bare
title) is refused: quoted, the check can read it. And comments that rot in another way:
no commit hash and no measured time in those comments (timings live in
docs/performance.md, which says when and how each was measured), and no cell of
CONTRIBUTING.md's tier tables longer than MAX_CELL characters (the reasons stay short;
the numbers are in docs/performance.md). Exits 1 with each stale pointer's place.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCOPE = ["Makefile", "mk", "scripts", "tests", ".ci", ".github"]
TOP = (
    "crates",
    "bindings",
    "scripts",
    "tests",
    "mk",
    "docs",
    "go",
    "java",
    "node",
    "python",
    "examples",
    "include",
    "fuzz",
    ".github",
    ".ci",
)
TOP_FILES = {p.name for p in ROOT.iterdir() if p.is_file()}

# A path: a top-level directory and what follows, or a top-level file's name.
PATH_RE = re.compile(
    r"(?<![\w./$-])((?:%s)/[\w./*-]*[\w*]|(?:%s))(?![\w-])"
    % (
        "|".join(re.escape(t) for t in TOP),
        "|".join(re.escape(f) for f in sorted(TOP_FILES, key=len, reverse=True)),
    )
)
SECTION_RE = re.compile(r'([\w./-]+\.md),\s+"([^"]+)"')
ANCHOR_RE = re.compile(r"([\w./-]+\.md)#([\w-]+)")
UNQUOTED_RE = re.compile(r"([\w./-]+\.md),\s+([A-Z][a-z]+(?: [a-zA-Z]+)*)")
# A commit hash (7 to 12 hex digits, letters and digits both), not a pinned 40-digit one.
COMMIT_RE = re.compile(r"(?<![\w@])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,12}(?![\w])")
# A measured time: CPU seconds, "instead of N s", "N s cold/warm/wall", "~N s/min".
TIMING_RE = re.compile(
    r"CPU-s\b|instead of [\d,.]+ ?s\b|\b\d[\d,.]* ?s (of )?(cold|warm|wall)\b|~[\d.]+ ?(s|min)\b"
)
MAX_CELL = 200
# A list of targets and what each does, in a comment: the `## ` line says it, once.
TARGET_LIST_RE = re.compile(r"^#\s+make [a-z][\w-]*( [A-Z_]+=\S*)*\s{3,}\S")
HASH_COMMENT = re.compile(r"^\s*@?#|\s##?\s")


def comments(path, text):
    """(line number, comment text) of the file's comment lines."""
    slash = path.suffix in (".c", ".h", ".go", ".mjs", ".js", ".rs", ".java")
    in_doc = False
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if path.suffix == ".py" and s.count('"""') % 2 == 1:
            in_doc = not in_doc
            yield n, s
            continue
        if in_doc:
            yield n, s
        elif slash and (s.startswith("//") or s.startswith("/*") or s.startswith("*")):
            yield n, s
        elif not slash and HASH_COMMENT.search(line):
            yield n, line[HASH_COMMENT.search(line).start() :]


def slug(heading):
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def headings(md, cache={}):
    if md not in cache:
        p = ROOT / md
        text = p.read_text() if p.is_file() else ""
        cache[md] = [
            re.sub(r"^#+\s*", "", h).strip() for h in re.findall(r"^#{1,6} .*$", text, re.M)
        ]
    return cache[md]


def main():
    tracked = set(
        subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    )
    dirs = {str(p) for f in tracked for p in Path(f).parents}
    files = subprocess.run(
        ["git", "ls-files", "--", *SCOPE], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    stale = []

    def exists(p):
        p = p.rstrip("/.")
        if "*" in p:
            return any(Path(f).match(p) for f in tracked) or bool(list(ROOT.glob(p)))
        if p in tracked or p in dirs:
            return True
        # Written by the build (git-ignored: python/.venv, bindings/postgres/target ...).
        return any(
            subprocess.run(["git", "check-ignore", "-q", "--no-index", q], cwd=ROOT).returncode == 0
            for q in (p, p + "/x")
        )

    for f in files:
        path = ROOT / f
        if path.suffix in (".json", ".toml", ".lua", ".md") or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, c in comments(path, text):
            where = f"{f}:{n}"
            if (f == "Makefile" or f.startswith("mk/")) and TARGET_LIST_RE.match(c):
                stale.append(
                    f"{where}: a target described in a comment list: "
                    "say it on the target's `## ` line"
                )
            for md, sec in SECTION_RE.findall(c):
                if not any(h.lower().startswith(sec.lower()) for h in headings(md)):
                    stale.append(f'{where}: {md} has no section "{sec}"')
            for md, anchor in ANCHOR_RE.findall(c):
                if anchor not in {slug(h) for h in headings(md)}:
                    stale.append(f"{where}: {md} has no heading #{anchor}")
            for md, words in UNQUOTED_RE.findall(c):
                stale.append(f'{where}: quote the section: {md}, "{words}"')
            for m in COMMIT_RE.findall(c) + [m.group(0) for m in TIMING_RE.finditer(c)]:
                stale.append(
                    f"{where}: a commit hash or a timing in a comment ({m}): "
                    "it belongs in docs/development.md, docs/performance.md or the commit message"
                )
            for p in PATH_RE.findall(c):
                if any(ch in p for ch in "<{$") or "..." in p:
                    continue
                if not exists(p):
                    stale.append(f"{where}: no such file: {p}")
    tiers = False
    for n, line in enumerate((ROOT / "docs" / "development.md").read_text().splitlines(), 1):
        tiers = line.startswith("## The three test tiers") or (tiers and not line.startswith("## "))
        if tiers and line.startswith("|"):
            for cell in line.strip("|").split(" | "):
                if len(cell) > MAX_CELL:
                    stale.append(
                        f"docs/development.md:{n}: a tier table cell of {len(cell)} characters "
                        f'(at most {MAX_CELL}; the numbers go to its "The tiers\' figures")'
                    )
                for m in COMMIT_RE.findall(cell):
                    stale.append(f"docs/development.md:{n}: a commit hash in the tier table ({m})")
    for s in stale:
        print(s)
    if stale:
        print(
            f"check-pointers: {len(stale)} stale pointer(s) in comments above "
            "(a file or a section that moved: point to where it is now)",
            file=sys.stderr,
        )
        return 1
    print(f"check-pointers: every pointer in the comments of {len(files)} build files resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
