#!/usr/bin/env python3
"""The release artifacts' names, once: what scripts/dist.sh writes into dist/.

check_docs() (make test-docs): every artifact name a doc mentions is one of these.
--dist DIR (tests/dist/run.py, after make dist): dist/ holds exactly these, so this
list cannot drift from what dist.sh (and maturin, napi, npm pack) really write.
A doc may write <v> for the version, `*` or `…` for any text, {a,b} for either.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The Python distribution's name (python/pyproject.toml [project] name), as wheel and
# sdist file names spell it (PEP 427/625: lowercase, `-` becomes `_`).
PY = "flakeid_engine"
NAMES = [
    # maturin puts the legacy tag first: manylinux2014_<arch>.manylinux_2_17_<arch>
    PY + "-<v>-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    PY + "-<v>-cp39-abi3-manylinux2014_aarch64.manylinux_2_17_aarch64.whl",
    PY + "-<v>-cp39-abi3-musllinux_1_2_x86_64.whl",
    PY + "-<v>.tar.gz",
    "flakeid-node-<v>.tgz",
    "flakeid-node-linux-x64-gnu-<v>.tgz",
    "flakeid-node-linux-arm64-gnu-<v>.tgz",
    "flakeid-node-linux-x64-musl-<v>.tgz",
    "flakeid-wasm-<v>.tgz",
    "flakeid-<v>-x86_64-unknown-linux-gnu.tar.gz",
    "flakeid-<v>-aarch64-unknown-linux-gnu.tar.gz",
    "flakeid-<v>-x86_64-unknown-linux-musl",
    "flakeid-<v>-aarch64-unknown-linux-musl",
    "SHA256SUMS",
]
# macOS (x86_64, arm64) and Windows x64 (GNU): scripts/dist.sh macos / windows.
CROSS = [
    PY + "-<v>-cp39-abi3-macosx_10_12_x86_64.whl",
    PY + "-<v>-cp39-abi3-macosx_11_0_arm64.whl",
    PY + "-<v>-cp39-abi3-win_amd64.whl",
    "flakeid-node-darwin-x64-<v>.tgz",
    "flakeid-node-darwin-arm64-<v>.tgz",
    "flakeid-node-win32-x64-gnu-<v>.tgz",
    "flakeid-<v>-x86_64-apple-darwin.tar.gz",
    "flakeid-<v>-aarch64-apple-darwin.tar.gz",
    "flakeid-<v>-x86_64-pc-windows-gnu.zip",
    "flakeid-<v>-x86_64-apple-darwin",
    "flakeid-<v>-aarch64-apple-darwin",
    "flakeid-<v>-x86_64-pc-windows-gnu.exe",
]
NAMES += CROSS
# Made by other targets into dist/ as well (make dist-go, make dist-java, the Go proxy).
OTHERS = ["flakeid-go-<v>.zip", "flakeid-java-<v>.jar", "flakeid-java-<v>.pom", "goproxy"]

DOCS = [
    "README.md",
    "RELEASING.md",
    "python/README.md",
    "node/README.md",
    "bindings/c/README.md",
    "bindings/wasm/README.md",
    "go/README.md",
    "java/README.md",
]
# (A name inside a longer one, as in postgresql-17-flakeid-…, is not a mention of its tail.)
MENTION = re.compile(
    r"(?:(?<![\w-])flakeid|flakeid_engine|postgresql-[0-9]+-flakeid)[-_][A-Za-z0-9_.<>*{},…-]*?(?:\.whl|\.tgz|\.tar\.gz|\.zip|\.jar|\.pom|unknown-linux-musl\b)"
)


def version() -> str:
    text = open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read()
    return re.search(r'\[workspace\.package\][^\[]*?\nversion = "([^"]+)"', text).group(1)


def postgres_tarballs() -> list[str]:
    """The PostgreSQL extension's tarballs (make deb-postgres PG=<major>, one per major
    of mk/postgres.mk's PG_MAJORS), named with the extension's own version."""
    mk = open(os.path.join(ROOT, "mk", "postgres.mk"), encoding="utf-8").read()
    majors = re.search(r"^PG_MAJORS\s*:=\s*(.*)$", mk, re.M).group(1).split()
    cargo = open(os.path.join(ROOT, "bindings", "postgres", "Cargo.toml"), encoding="utf-8").read()
    e = re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)
    return [f"postgresql-{m}-flakeid-{e}-x86_64-linux-gnu.tar.gz" for m in majors]


def expand(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [
        x
        for alt in m.group(1).split(",")
        for x in expand(pattern[: m.start()] + alt + pattern[m.end() :])
    ]


def check_docs() -> list[str]:
    v = version()
    names = [n.replace("<v>", v) for n in NAMES + OTHERS] + postgres_tarballs()
    errors = []
    for doc in DOCS + sorted(
        "docs/" + f for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")
    ):
        for i, line in enumerate(open(os.path.join(ROOT, doc), encoding="utf-8"), 1):
            for m in MENTION.finditer(line):
                mention = m.group(0)
                for concrete in expand(mention.replace("<v>", v).replace("…", "*")):
                    if not any(fnmatch.fnmatchcase(n, concrete) for n in names):
                        errors.append(
                            f"{doc}:{i}: {mention!r} is not an artifact make dist writes "
                            f"(tests/docs/artifacts.py NAMES)"
                        )
    return errors


# What `FLAKEID_DIST_HOST=1 scripts/dist.sh` (make test-dist TIER=ci, in make ci) writes:
# this machine's artifacts only, no cross builds.
# The wheel is built for the host there, not with zig for glibc 2.17: its tag is the
# manylinux policy of this machine's glibc (tests/dist/run.py checks it with auditwheel).
HOST = {
    n.replace("manylinux2014_x86_64.manylinux_2_17_x86_64", "manylinux_2_*_x86_64")
    for n in NAMES
    if "aarch64" not in n
    and "arm64" not in n
    and "musllinux" not in n
    and "x64-musl" not in n
    and n not in CROSS
}


def check_dist(dist: str, host_only: bool = False) -> list[str]:
    v = version()
    want = {n.replace("<v>", v) for n in (HOST if host_only else NAMES)}
    have = set(os.listdir(dist))
    others = {n.replace("<v>", v) for n in OTHERS}
    # (fnmatch: the host wheel's tag is a pattern; every other name matches only itself)
    extra = {h for h in have - others if not any(fnmatch.fnmatchcase(h, w) for w in want)}
    lacking = {w for w in want if not any(fnmatch.fnmatchcase(h, w) for h in have)}
    return [f"dist/ lacks {n} (tests/docs/artifacts.py NAMES)" for n in sorted(lacking)] + [
        f"dist/ has {n}, unknown to tests/docs/artifacts.py NAMES" for n in sorted(extra)
    ]


if __name__ == "__main__":
    host_only = os.environ.get("FLAKEID_DIST_HOST") == "1"
    errs = check_dist(sys.argv[2], host_only) if sys.argv[1:2] == ["--dist"] else check_docs()
    for e in errs:
        print("artifacts: " + e, file=sys.stderr)
    sys.exit(1 if errs else 0)
