#!/usr/bin/env python3
"""Every relative cross-reference resolves inside the repository (make test-docs).

  tests/docs/links.py [ROOT]

Reads every tracked Markdown file's relative links and images (`[x](path)`,
`[x](path#anchor)`, `![x](path)`, `[x]: path`) outside code, and the file paths cited
in include/flakeid.h's comments, and fails naming file:line for each one whose file
is not in the repository. A Markdown link is relative to its file's folder (a leading
`/` to the repository's root), as GitHub reads it; a path in the header is relative
to the repository's root. Anchors are not checked; URLs (any `scheme:`) are not read.
Standard library only.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys

HEADER = "include/flakeid.h"
# [text](target) and ![alt](target); the target may be <bracketed> and have a "title".
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+[\"'(][^)]*)?\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# A path in a C comment: folders and a file name with an extension (globs allowed).
HEADER_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.*-]+\.[A-Za-z]{1,5})(?![\w/])")


def tracked(root: str) -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True, text=True
        ).stdout
        return [p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk it
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [
                x for x in dirs if not x.startswith(".") and x not in ("target", "node_modules")
            ]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return files


def markdown_targets(text: str):
    """(line number, target) of each link outside fenced code and code spans."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark
            elif (
                mark[0] == fence[0]
                and len(mark) >= len(fence)
                and not line.strip()[len(mark) :].strip()
            ):
                fence = None
            continue
        if fence is not None:
            continue
        line = CODE_SPAN.sub("", line)
        for m in INLINE.finditer(line):
            yield n, m.group(1)
        m = REFDEF.match(line)
        if m:
            yield n, m.group(1)


def resolves(root: str, base: str, target: str) -> bool:
    target = target.strip("<>").split("#", 1)[0].split("?", 1)[0]
    if not target:
        return True  # an anchor in the same file
    path = os.path.normpath(
        os.path.join(root, target.lstrip("/"))
        if target.startswith("/")
        else os.path.join(root, base, target)
    )
    if os.path.commonpath([path, root]) != root:
        return False  # outside the repository
    return bool(glob.glob(path)) if "*" in path else os.path.exists(path)


def check(root: str) -> list[str]:
    root = os.path.abspath(root)
    bad = []
    for rel in tracked(root):
        if not rel.endswith(".md"):
            continue
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        for n, target in markdown_targets(text):
            if SCHEME.match(target.strip("<>")) or target.startswith("#"):
                continue
            if not resolves(root, os.path.dirname(rel), target):
                bad.append(f"{rel}:{n}: link to {target}, which is not in the repository")
    header = os.path.join(root, HEADER)
    if os.path.exists(header):
        in_comment = False
        with open(header, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                # The comment parts of the line: /* … */ blocks and // tails.
                parts, rest = [], line
                while rest:
                    if in_comment:
                        end = rest.find("*/")
                        parts.append(rest if end < 0 else rest[:end])
                        if end < 0:
                            break
                        in_comment, rest = False, rest[end + 2 :]
                    else:
                        start, slash = rest.find("/*"), rest.find("//")
                        if slash >= 0 and (start < 0 or slash < start):
                            parts.append(rest[slash + 2 :])
                            break
                        if start < 0:
                            break
                        in_comment, rest = True, rest[start + 2 :]
                for part in parts:
                    for m in HEADER_PATH.finditer(part):
                        if not resolves(root, "", m.group(1)):
                            bad.append(
                                f"{HEADER}:{n}: cites {m.group(1)}, which is not in the repository"
                            )
    return bad


def main() -> int:
    root = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    )
    bad = check(root)
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print(f"links: {len(bad)} cross-reference(s) that do not resolve", file=sys.stderr)
        return 1
    print("links: every relative cross-reference resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
