#!/usr/bin/env python3
"""Runs the fenced code blocks of the docs (make test-docs); Python's run in pytest.

  tests/docs/run.py [--cli DIR] [--lib DIR] [--only LANG] [--list]

--cli: the directory holding the built `flakeid` (put first on PATH for sh blocks);
--lib: the directory holding libflakeid.so (C blocks link it, with an rpath).
JS blocks resolve @flakeid/node to node/ (built by make setup-node) and @flakeid/wasm
to bindings/wasm/pkg (built by bindings/wasm/build.sh): missing is an error, not a skip.
Shell blocks run in their own network namespace where the machine allows it (as
root), so `flakeid serve --listen 127.0.0.1:7676` never meets another test's port.
SQL, Go and Java blocks run in their own suites (`blocks.py extract`); --list shows
every block and what runs it. The rule for blocks that do not run:
tests/docs/blocks.py, CONTRIBUTING.md (Docs: every code block runs).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks as B  # noqa: E402
import artifacts  # noqa: E402

sys.path.insert(0, os.path.join(B.ROOT, "tests", "env"))
from cases import Cases  # noqa: E402

TIMEOUT_S = 60


def run(cmd, cwd, env=None, timeout=TIMEOUT_S, stdin=None):
    p = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    try:
        out, _ = p.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, _ = p.communicate()
        return 124, out + f"\n(timed out after {timeout} s)"
    finally:
        try:  # background jobs a block started (flakeid serve &)
            os.killpg(p.pid, 15)
        except ProcessLookupError:
            pass
    return p.returncode, out


def netns_prefix() -> list[str]:
    if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip"):
        rc, _ = run(["unshare", "--net", "true"], "/")
        if rc == 0:
            return ["unshare", "--net", "--"]
    return []


def run_sh(b, work, env):
    script = "set -euo pipefail\n"
    if NETNS:
        script += "ip link set lo up\n"
    script += "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + b.code
    return run(NETNS + ["bash", "-c", script], work, env)


def run_js(b, work, env):
    ext = ".mjs" if re.search(r"^\s*(import|export)\s", b.code, re.M) else ".cjs"
    f = os.path.join(work, "block" + ext)
    open(f, "w").write(b.code)
    return run(["node", f], work, env)


def run_c(b, work, env, lib):
    code = b.code
    if not re.search(r"\bint\s+main\s*\(", code):
        # A fragment: its #includes on top, the rest in main (the fragment may `return 1`).
        inc = [ln for ln in code.splitlines() if ln.startswith("#include")]
        body = [ln for ln in code.splitlines() if not ln.startswith("#include")]
        code = (
            "\n".join(["#include <stdio.h>", "#include <stdint.h>", *inc])
            + "\nint main(void) {\n"
            + "\n".join(body)
            + "\n  return 0;\n}\n"
        )
    src = os.path.join(work, "block.c")
    open(src, "w").write(code)
    exe = os.path.join(work, "block")
    rc, out = run(
        [
            os.environ.get("CC", "cc"),
            "-std=c11",
            "-Wall",
            "-Werror",
            "-I",
            os.path.join(B.ROOT, "include"),
            src,
            "-L",
            lib,
            "-lflakeid",
            f"-Wl,-rpath,{lib}",
            "-o",
            exe,
        ],
        work,
        env,
    )
    if rc:
        return rc, out
    return run([exe], work, env)


def rust_included() -> set[str]:
    """Docs that a crate includes as doc-tests (#[doc = include_str!(...)])."""
    found = set()
    for dirpath, _, files in os.walk(os.path.join(B.ROOT, "crates")):
        for fn in files:
            if fn.endswith(".rs"):
                p = os.path.join(dirpath, fn)
                for m in re.finditer(
                    r'include_str!\("([^"]+\.md)"\)', open(p, encoding="utf-8").read()
                ):
                    found.add(
                        os.path.relpath(os.path.normpath(os.path.join(dirpath, m.group(1))), B.ROOT)
                    )
    return found


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli")
    ap.add_argument("--lib")
    ap.add_argument("--only", action="append")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()

    blocks = B.all_blocks()
    cases = Cases("test-docs")
    failures = B.check_info_strings(blocks) + artifacts.check_docs()
    if a.list:
        for b in blocks:
            print(
                f"{b.id:32} {b.lang:8} {' '.join(sorted(b.flags)) or ('runs' if b.runs else '-')}"
            )
        return 0

    included = rust_included()
    for b in blocks:
        if b.lang == "rust" and b.path not in included:
            failures.append(
                f"{b.id}: a rust block in a file no crate includes as doc-tests (include_str!)"
            )

    env = dict(os.environ)
    if a.cli:
        env["PATH"] = os.path.abspath(a.cli) + os.pathsep + env["PATH"]
    nm = tempfile.mkdtemp(prefix="flakeid-docs-")
    os.makedirs(os.path.join(nm, "node_modules", "@flakeid"))
    os.symlink(os.path.join(B.ROOT, "node"), os.path.join(nm, "node_modules", "@flakeid", "node"))
    os.symlink(
        os.path.join(B.ROOT, "bindings", "wasm", "pkg"),
        os.path.join(nm, "node_modules", "@flakeid", "wasm"),
    )
    # The peers docs/migrating.md's JS blocks run against: node/'s devDependencies.
    peers = os.path.join(B.ROOT, "node", "node_modules")
    for name in sorted(os.listdir(peers)) if os.path.isdir(peers) else []:
        if not name.startswith(".") and name != "@flakeid":
            os.symlink(os.path.join(peers, name), os.path.join(nm, "node_modules", name))
    ran, not_run = Counter(), Counter()
    for b in blocks:
        if not b.runs or b.lang in ("python", "rust", "sql", "go", "java"):
            if b.flags == {"frameworks"}:
                not_run[f"{b.lang} frameworks (its language's suite)"] += 1
            else:
                not_run[
                    b.lang if b.runs else "not run (" + (" ".join(sorted(b.flags)) or b.lang) + ")"
                ] += 1
            continue
        if a.only and b.lang not in a.only:
            continue
        work = tempfile.mkdtemp(dir=nm)
        with open(os.path.join(work, "seal.key"), "w") as f:
            f.write(B.SEAL_KEY)
        if b.lang == "sh":
            if not a.cli:
                failures.append(f"{b.id}: sh block, but no --cli given")
                continue
            rc, out = run_sh(b, work, env)
        elif b.lang == "js":
            if "@flakeid/wasm" in b.code and not os.path.isdir(
                os.path.join(B.ROOT, "bindings/wasm/pkg/node")
            ):
                failures.append(f"{b.id}: needs bindings/wasm/pkg (bash bindings/wasm/build.sh)")
                continue
            rc, out = run_js(b, work, env)
        elif b.lang == "c":
            if not a.lib:
                failures.append(f"{b.id}: C block, but no --lib given")
                continue
            rc, out = run_c(b, work, env, os.path.abspath(a.lib))
        else:
            continue
        ran[b.lang] += 1
        cases.record(
            f"{b.id} ({b.lang})", rc == 0, "" if rc == 0 else f"exit {rc}:\n{out.rstrip()}"
        )
    shutil.rmtree(nm, ignore_errors=True)
    print(
        "test-docs: ran "
        + ", ".join(f"{n} {k}" for k, n in sorted(ran.items()))
        + "; elsewhere or not run: "
        + ", ".join(f"{n} {k}" for k, n in sorted(not_run.items()))
    )
    # Each problem found without running a block (an info string, an artifact name, a
    # block that cannot run here) is a failed case named by its block.
    for f in failures:
        name, _, why = f.partition(": ")
        cases.failed(name, why)
    return cases.finish()


NETNS = netns_prefix()

if __name__ == "__main__":
    sys.exit(main())
