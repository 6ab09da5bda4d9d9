#!/usr/bin/env python3
"""`make lint`: no placeholder host comes back as the project's home.

The project's names are real (RELEASING.md, "Names"): the repository is
github.com/flakeid/flakeid, the Go module github.com/flakeid/flakeid-go, the Java
groupId and package io.github.flakeid. A placeholder host in a module path, a
groupId, a URL or a package's metadata is a release blocker that spreads to every
file that copies it, so every file git knows of (tracked, or untracked and not
ignored) is searched for the RFC 2606 names a placeholder is made of, and each hit
must be one of ALLOWED: a path, the exact text it may hold there, and why. An
allowance that no longer matches anything fails too, so the list stays true.
"""

import re
import subprocess
import sys
from pathlib import Path

# The reserved second-level names, and the reversed form a Java package or a Maven
# path takes. Spelled in pieces so that this file does not match itself.
PLACEHOLDER = re.compile(
    r"example\.(?:com|net|org|in" r"valid)\b|in" r"valid[./]example\b", re.IGNORECASE
)

ALLOWED = [
    # RFC 2606 names used as test data, never as a home:
    (
        "python/tests/test_generator.py",
        "db-12.example.com",
        "a host name whose ordinal host_ordinal reads",
    ),
    (
        "python/tests-frameworks/djangoproject/orders/tests.py",
        "admin@example.com",
        "the Django admin user's address",
    ),
]


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    files = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    me = Path(__file__).resolve().relative_to(root).as_posix()
    used = set()
    bad = []
    for name in sorted(set(f for f in files if f)):
        path = root / name
        if name == me or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        for lineno, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if not PLACEHOLDER.search(line):
                continue
            rest = line
            for i, (apath, text, _why) in enumerate(ALLOWED):
                if apath == name and text in rest:
                    used.add(i)
                    rest = rest.replace(text, "")
            if PLACEHOLDER.search(rest):
                bad.append(f"{name}:{lineno}: {line.strip()}")
    for line in bad:
        print(line, file=sys.stderr)
    if bad:
        print(
            "check-names: a placeholder host above: use the real names (RELEASING.md, "
            '"Names"), or add a reasoned allowance to scripts/check-names.py',
            file=sys.stderr,
        )
    stale = [a for i, a in enumerate(ALLOWED) if i not in used]
    for apath, text, _why in stale:
        print(
            f"check-names: the allowance for {text!r} in {apath} matches nothing: delete it",
            file=sys.stderr,
        )
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
