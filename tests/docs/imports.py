#!/usr/bin/env python3
"""The module import graph of each Rust crate, and its circles.

A crate's modules form floors: each file may use the ones below it, never one that
uses it back (directly or through others). Outside comments and `#[cfg(test)]`
items, this reads every module's
- `use` trees, grouped ones included (`use crate::{a, b::{c, D}}`), each leaf an edge
  to the module that defines it; a glob (`use crate::x::*`) is an edge to `x`;
- paths written in the code from `crate::`, `self::` and `super::`, and paths that
  start with a name a `use` brought in (`use crate::conn;` then `conn::Flow`);
and resolves each name through the `pub use` re-exports of the module it is named in
(`crate::Service`, re-exported by lib.rs, is an edge to the module that defines
`Service`). A module's own parents and children are its inside, not floors. It fails
when the graph has a circle, printing it.

Every run first reads the fixture crate tests/docs/imports_fixture, whose circles are
known, and fails if it does not report exactly those.

    python3 tests/docs/imports.py [--graph] [crate_dir ...]
"""

import glob
import os
import re
import sys
import tomllib

ROOT = os.environ.get("FLAKEID_ROOT") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
FIXTURE = "tests/docs/imports_fixture"
FIXTURE_CIRCLES = [["alpha", "beta::gamma"], ["delta::epsilon", "zeta"]]
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
USE = re.compile(r"(?:^|(?<=[;{}]))[ \t]*(pub(?:\([^)]*\))?\s+)?use\s+(?:::)?([^;]*);", re.M)
INCLUDE = re.compile(r"\binclude!\(\s*\"([^\"]+)\"")
PATH = re.compile(rf"(?<![\w:])({IDENT}(?:\s*::\s*{IDENT})+)")


def crates() -> list[str]:
    """Every Rust crate of the workspace: its members, and crates/* and bindings/*
    with a Cargo.toml."""
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as f:
        members = tomllib.load(f).get("workspace", {}).get("members", [])
    found = set(members)
    for pattern in ("crates/*/Cargo.toml", "bindings/*/Cargo.toml"):
        found.update(
            os.path.relpath(os.path.dirname(p), ROOT)
            for p in glob.glob(os.path.join(ROOT, pattern))
        )
    return sorted(c for c in found if os.path.isdir(os.path.join(ROOT, c, "src")))


def modules(src: str) -> dict[str, str]:
    """Module path (`lease::gate`) -> file, for every module .rs file under src
    (not files an `include!` pastes in, nor names that are no identifier)."""
    out, included = {}, set()
    for dirpath, _, files in os.walk(src):
        for f in files:
            if f.endswith(".rs"):
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    for m in INCLUDE.finditer(fh.read()):
                        included.add(os.path.normpath(os.path.join(dirpath, m.group(1))))
    for dirpath, _, files in os.walk(src):
        for f in files:
            path = os.path.normpath(os.path.join(dirpath, f))
            if not f.endswith(".rs") or path in included:
                continue
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if not all(re.fullmatch(IDENT, p) for p in parts):
                continue
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            out["::".join(parts)] = path
    return out


LEXEME = re.compile(
    r'//[^\n]*|/\*.*?\*/|r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?\'(?:\\.|[^\\\'])\'', re.S
)


def blank(m: re.Match) -> str:
    """A comment or a literal, as `""` or nothing, keeping its line breaks."""
    keep = "\n" * m.group(0).count("\n")
    return keep if m.group(0).startswith("/") else '""' + keep


def code_lines(text: str) -> str:
    """The text without comments, literals and `#[cfg(test)]` items (to their closing brace)."""
    text = LEXEME.sub(blank, text)
    out, depth, skip_at = [], 0, None
    pending_test = False
    for line in text.split("\n"):
        stripped = line.strip()
        if skip_at is None and stripped.startswith("#[cfg(test)]"):
            pending_test = True
            continue
        opens, closes = line.count("{"), line.count("}")
        if pending_test:
            pending_test = False
            if opens > closes:
                skip_at = depth
                depth += opens - closes
            continue  # a one-line item (`use` or `mod tests;`) or the opening of a test item
        depth += opens - closes
        if skip_at is not None:
            if depth <= skip_at:
                skip_at = None
            continue
        out.append(line)
    return "\n".join(out)


def use_leaves(tree: str) -> list[list[str]]:
    """`a::{b, c::{d, *}}` -> [["a","b"], ["a","c","d"], ["a","c","*"]]: each leaf's path."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix: list[str], s: str) -> None:
        depth, start, items = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(s[start:i])
                start = i + 1
        items.append(s[start:])
        for item in items:
            brace = item.find("{")
            if brace >= 0:
                head = [p for p in item[:brace].split("::") if p]
                walk(prefix + head, item[brace + 1 : item.rindex("}")])
            elif item:
                out.append(prefix + [p for p in item.split("::") if p])

    walk([], tree)
    return out


def split_alias(raw: str) -> list[tuple[list[str], str]]:
    """use_leaves with `x as y` read before whitespace is dropped."""
    # mark ` as ` so it survives the whitespace removal
    marked = re.sub(rf"({IDENT}|\*)\s+as\s+({IDENT})", r"\1@\2", raw)
    leaves = []
    for segs in use_leaves(marked):
        *head, last = segs
        if "@" in last:
            name, alias = last.split("@", 1)
            leaves.append((head + [name], alias))
        elif last == "self":
            leaves.append((head, head[-1] if head else "self"))
        else:
            leaves.append((segs, last))
    return leaves


class Crate:
    def __init__(self, src: str) -> None:
        self.mods = modules(src)
        self.text = {}
        for mod, path in self.mods.items():
            with open(path, encoding="utf-8") as f:
                self.text[mod] = code_lines(f.read())
        # names a module re-exports (`pub use ...`): module -> name -> absolute path
        self.reexports: dict[str, dict[str, list[str]]] = {m: {} for m in self.mods}
        # names a module's `use` lines bring in: module -> name -> absolute path
        self.imports: dict[str, dict[str, list[str]]] = {m: {} for m in self.mods}
        for mod, text in self.text.items():
            for m in USE.finditer(text):
                public = m.group(1) is not None
                for segs, name in split_alias(m.group(2)):
                    absolute = self.absolute(mod, segs)
                    if absolute is None or name == "*":
                        continue
                    self.imports[mod][name] = absolute
                    if public:
                        self.reexports[mod][name] = absolute

    @staticmethod
    def parent(mod: str) -> str:
        return mod.rsplit("::", 1)[0] if "::" in mod else ""

    def absolute(self, here: str, segs: list[str]) -> list[str] | None:
        """A path as written in module `here`, from the crate root; None if it leaves the crate."""
        if not segs:
            return None
        base = here.split("::") if here else []
        if segs[0] == "crate":
            return segs[1:]
        if segs[0] in ("self", "super"):
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            return base + segs
        child = "::".join(base + [segs[0]])
        if child in self.mods:
            return base + segs
        return None  # another crate, std, or a name in scope

    def resolve(self, segs: list[str], seen: int = 0) -> str | None:
        """The module that defines what an absolute path names (through re-exports)."""
        cur: list[str] = []
        for i, seg in enumerate(segs):
            if seg == "*":
                break
            nxt = "::".join(cur + [seg])
            if nxt in self.mods:
                cur.append(seg)
                continue
            target = self.reexports.get("::".join(cur), {}).get(seg)
            if target is not None and seen < 16:
                return self.resolve(target + segs[i + 1 :], seen + 1)
            break
        mod = "::".join(cur)
        return mod if mod in self.mods else None

    def edges(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {m: set() for m in self.mods}
        for mod, text in self.text.items():
            targets = []
            for m in USE.finditer(text):
                for segs, _ in split_alias(m.group(2)):
                    absolute = self.absolute(mod, segs)
                    if absolute is not None:
                        targets.append(self.resolve(absolute))
            body = USE.sub(";", text)
            for m in PATH.finditer(body):
                segs = re.sub(r"\s+", "", m.group(1)).split("::")
                absolute = self.absolute(mod, segs)
                if absolute is None and segs[0] in self.imports[mod]:
                    absolute = self.imports[mod][segs[0]] + segs[1:]
                if absolute is not None:
                    targets.append(self.resolve(absolute))
            for target in targets:
                # A module's own children and parents are its inside, not a floor.
                if target is None or target == mod:
                    continue
                if (
                    mod.startswith(target + "::")
                    or target == ""
                    or mod == ""
                    or target.startswith(mod + "::")
                ):
                    continue
                out[mod].add(target)
        return out


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
    return sorted(out)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show = "--graph" in sys.argv
    seen = cycles(Crate(os.path.join(ROOT, FIXTURE, "src")).edges())
    if seen != FIXTURE_CIRCLES:
        print(
            f"imports.py: the fixture {FIXTURE} has the circles {FIXTURE_CIRCLES}, read {seen}",
            file=sys.stderr,
        )
        return 1
    failed = False
    todo = args or crates()
    for crate in todo:
        edges = Crate(os.path.join(ROOT, crate, "src")).edges()
        if show:
            for m in sorted(edges):
                print(f"{crate}: {m or '(root)'} -> {', '.join(sorted(edges[m])) or '-'}")
        for comp in cycles(edges):
            failed = True
            inner = sum(len(edges[m] & set(comp)) for m in comp)
            print(
                f"{crate}: import circle of {len(comp)} modules, {inner} edges: {', '.join(comp)}",
                file=sys.stderr,
            )
    if failed:
        print(
            "imports.py: a module uses one that uses it back; move what both need one floor down",
            file=sys.stderr,
        )
        return 1
    print(
        f"imports.py: the fixture's {len(FIXTURE_CIRCLES)} circles seen;"
        f" no import circle in {len(todo)} crates"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
