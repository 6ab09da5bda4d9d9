#!/usr/bin/env python3
"""The module import graph of each Rust crate, and its circles.

A crate's modules form floors: each file may use the ones below it, never one that
uses it back (directly or through others). This reads every `crate::a::b` path
outside comments and `#[cfg(test)]` modules, maps it to the module file that holds
it, and fails when the graph has a cycle, printing it.

    python3 tests/docs/imports.py [--graph] [crate_dir ...]
"""

import os
import re
import sys

ROOT = os.environ.get("FLAKEID_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
CRATES = [
    "crates/flakeid-core",
    "crates/flakeid-js",
    "crates/flakeid-lease-net",
    "crates/flakeid-seal",
    "crates/flakeid-server",
    "crates/flakeid-cli",
    "bindings/c",
    "bindings/python",
    "bindings/node",
    "bindings/wasm",
    "bindings/postgres",
]
PATH = re.compile(r"\b(?:crate|super)((?:::[a-z_][a-z0-9_]*)+)")


def modules(src: str) -> dict[str, str]:
    """Module path (`lease::gate`) -> file, for every .rs file under src."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3]
            parts = rel.split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            out["::".join(parts)] = os.path.join(dirpath, f)
    return out


def code_lines(text: str) -> str:
    """The text without comments and without `#[cfg(test)]` items (to their closing brace)."""
    out, depth, skip_at = [], 0, None
    lines = text.split("\n")
    pending_test = False
    for line in lines:
        stripped = line.strip()
        if skip_at is None and stripped.startswith("#[cfg(test)]"):
            pending_test = True
            continue
        code = re.sub(r"//.*", "", line)
        opens, closes = code.count("{"), code.count("}")
        if pending_test:
            pending_test = False
            if opens > closes:
                skip_at = depth
                depth += opens - closes
                continue
            continue  # a one-line item (`use` or `mod tests;`)
        depth += opens - closes
        if skip_at is not None:
            if depth <= skip_at:
                skip_at = None
            continue
        out.append(code)
    return "\n".join(out)


def graph(crate: str) -> dict[str, set[str]]:
    src = os.path.join(ROOT, crate, "src")
    mods = modules(src)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        with open(path, encoding="utf-8") as f:
            text = code_lines(f.read())
        here = mod.split("::") if mod else []
        for m in PATH.finditer(text):
            kind = text[m.start() : m.start() + 5]
            segs = m.group(1).split("::")[1:]
            if kind == "super":
                segs = here[:-1] + segs
            # the longest known module prefix
            for n in range(len(segs), 0, -1):
                target = "::".join(segs[:n])
                if target in mods:
                    break
            else:
                continue
            # A module's own children and parents are its inside, not a floor.
            if (
                target != mod
                and not mod.startswith(target + "::")
                and not (mod and target.startswith(mod + "::"))
            ):
                edges[mod].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show = "--graph" in sys.argv
    failed = False
    for crate in args or CRATES:
        if not os.path.isdir(os.path.join(ROOT, crate, "src")):
            continue
        edges = graph(crate)
        if show:
            for m in sorted(edges):
                print(f"{crate}: {m or '(root)'} -> {', '.join(sorted(edges[m])) or '-'}")
        for comp in cycles(edges):
            failed = True
            print(f"{crate}: import circle among {', '.join(comp)}", file=sys.stderr)
    if failed:
        print(
            "imports.py: a module uses one that uses it back; move what both need one floor down",
            file=sys.stderr,
        )
        return 1
    print("imports.py: no import circle in", len(args or CRATES), "crates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
