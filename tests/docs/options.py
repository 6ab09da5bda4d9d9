#!/usr/bin/env python3
"""Every binding's documentation of the generator's options, from the core's table.

  tests/docs/options.py            check (make test-docs): exit 1 naming each stale doc
  tests/docs/options.py --write    rewrite them from the table

The table is crates/flakeid-core/src/options.rs, as tests/vectors/options.json
carries it (`make vectors`). For each option a binding documents, the first paragraph
of its doc comment is written from the table's row: what it is (`doc`), its choices or
range, its default or what leaving it unset means (`unset`), and the option it needs,
each named as that binding names it. What follows a blank comment line is the
binding's own (its types, its units). The sites: the Node addon's `GeneratorOptions`
(node/index.d.ts is generated from it), WebAssembly's TypeScript `GeneratorOptions`, the
C `flakeid_options` (include/flakeid.h is
generated from it), Go's `Options`, Java's `Generator.Builder`, and the docstrings of
Python's `Generator` and `UuidGenerator` (python/flakeid/_flakeid.pyi). Standard
library only.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "tests/vectors/options.json").read_text())["options"]
WIDTH = 92


def pascal(name: str) -> str:
    return "".join(w.capitalize() for w in name.split("_"))


class Site:
    """A binding: how it names options and values, and where its docs are."""

    def __init__(self, path, names, choice, boolean, only=None, wide=False):
        self.wide = wide  # the 128-bit generator's options (its defaults)
        self.path = path
        self.names = names  # option name -> the binding's name of it
        self.choice = choice  # (option, word) -> the binding's spelling
        self.boolean = boolean  # "true"/"false" -> the binding's spelling
        self.only = only  # the options documented there (default: every one named)

    def options(self):
        return [
            o
            for o in TABLE
            if o["name"] in self.names and (not self.only or o["name"] in self.only)
        ]

    def text(self, o) -> str:
        """The first paragraph for option o, in this binding's names."""
        doc = re.sub(
            r"\b[a-z]+(?:_[a-z0-9]+)+\b",
            lambda m: self.names.get(m.group(0), m.group(0)),
            o["doc"],
        )
        out = doc[0].upper() + doc[1:] + "."
        kind, default = o["kind"], (self.wide and o["default_128"]) or o["default"]
        if kind == "choice":
            words = [self.choice(o["name"], w) for w in o["choices"]]
            out += f" One of {', '.join(words)}; default {self.choice(o['name'], default)}."
        elif kind == "bool":
            out += f" Default {self.boolean(default)}."
        elif kind == "uint" and "min" in o:
            unit = " ms" if o["name"].endswith("_ms") else ""
            out += f" {o['min']} to {o['max']}{unit}; default {default}{unit}."
        elif kind in ("uint", "node") and o["name"] != "max_sequence":
            out += " Within the layout's range."
        if o["unset"]:
            out += f" Unset: {o['unset']}."
        elif kind == "layout":
            out += f" Default {default}."
        if o["requires"]:
            out += f" Needs {self.names[o['requires']]}."
        return out


def wrap(text: str, prefix: str) -> list[str]:
    return [
        prefix + line for line in textwrap.wrap(text, WIDTH - len(prefix), break_on_hyphens=False)
    ]


def paragraphs(body: list[str]) -> tuple[list[str], list[str]]:
    """A comment's lines (prefix stripped) as its first paragraph and the rest."""
    if "" in body:
        i = body.index("")
        return body[:i], body[i + 1 :]
    return body, []


class LineComments(Site):
    """Fields documented by line comments above them (`///` in Rust, `//` in Go)."""

    def __init__(self, path, struct, field, mark, names, choice, boolean, only=None):
        super().__init__(path, names, choice, boolean, only)
        self.struct, self.field, self.mark = struct, field, mark

    def rewrite(self, lines: list[str], adopt: bool) -> list[str]:
        for o in self.options():
            start = next(i for i, ln in enumerate(lines) if re.match(self.struct, ln))
            name = self.names[o["name"]] if self.field is None else self.field(o["name"])
            at = next(
                i
                for i in range(start, len(lines))
                if re.match(rf"\s*(pub )?{re.escape(name)}\b[ :]", lines[i])
            )
            j = at
            while lines[j - 1].lstrip().startswith("#["):
                j -= 1
            k = j
            while lines[k - 1].lstrip().startswith(self.mark):
                k -= 1
            indent = re.match(r"\s*", lines[at]).group(0)
            body = [ln.strip()[len(self.mark) :].removeprefix(" ") for ln in lines[k:j]]
            first, rest = ([], body) if adopt else paragraphs(body)
            new = wrap(self.text(o), indent + self.mark + " ")
            if rest:
                new += [indent + self.mark] + [
                    indent + self.mark + (" " + r if r else "") for r in rest
                ]
            lines[k:j] = new
        return lines


class Javadoc(Site):
    """Members documented by a `/** … */` comment above them: Java's Builder methods
    (paragraphs after the first start with <p>), a TypeScript interface's fields."""

    def __init__(self, path, member, para, names, choice, boolean, only=None):
        super().__init__(path, names, choice, boolean, only)
        self.member, self.para = member, para

    def rewrite(self, lines: list[str], adopt: bool) -> list[str]:
        for o in self.options():
            m = re.escape(self.names[o["name"]])
            at = next(i for i, ln in enumerate(lines) if re.match(self.member.format(m), ln))
            end = at - 1
            k = end
            if not lines[end].strip().endswith("*/"):  # none yet
                k = end = at
            while k < at and not lines[k].strip().startswith("/**"):
                k -= 1
            raw = "\n".join(lines[k : end + 1]).strip() if k < at else "/***/"
            raw = raw.removeprefix("/**").removesuffix("*/")
            body = [re.sub(r"^\s*\* ?", "", ln).rstrip() for ln in raw.split("\n")]
            while body and not body[0].strip():
                body.pop(0)
            while body and not body[-1].strip():
                body.pop()
            body = [b.strip() for b in body]
            first, rest = ([], body) if adopt else paragraphs(body)
            if rest and self.para and rest[0].startswith(self.para):
                rest[0] = rest[0][len(self.para) :]
            indent = re.match(r"\s*", lines[at]).group(0)
            new = [indent + "/**"] + wrap(self.text(o), indent + " * ")
            if rest:
                new += [indent + " *"]
                new += [
                    indent + " * " + (self.para if n == 0 else "") + r if r else indent + " *"
                    for n, r in enumerate(rest)
                ]
            new += [indent + " */"]
            lines[k:at] = new
        return lines


class Docstring(Site):
    """A Python stub's `__new__`, documented as a whole by its docstring."""

    def __init__(self, path, cls, names, choice, boolean, only=None):
        super().__init__(path, names, choice, boolean, only, wide=cls == "UuidGenerator")
        self.cls = cls

    def rewrite(self, lines: list[str], adopt: bool) -> list[str]:
        c = next(i for i, ln in enumerate(lines) if ln.startswith(f"class {self.cls}:"))
        n = next(i for i in range(c, len(lines)) if lines[i].strip().startswith("def __new__("))
        end = next(i for i in range(n, len(lines)) if re.match(r"\s*\) -> \w+:", lines[i]))
        after = end + 1
        if lines[end].rstrip().endswith("..."):
            lines[end] = lines[end].rstrip()[:-4].rstrip()
        else:  # a docstring follows: replace it
            close = next(i for i in range(after + 1, len(lines)) if lines[i].strip() == '"""')
            del lines[after : close + 1]
        ind = " " * 8
        doc = [ind + '"""Keyword options:', ""]
        for o in self.options():
            doc += wrap(f"{o['name']}: {self.text(o)}", ind)
            doc.append("")
        doc[-1] = ind + '"""'
        lines[after:after] = doc
        return lines


SNAKE = {o["name"]: o["name"] for o in TABLE}
CAMEL = {o["name"]: o["camel_name"] for o in TABLE}
GO = {o["name"]: pascal(o["name"]) for o in TABLE} | {
    "max_borrow_ms": "MaxBorrow",
    "max_wait_ms": "MaxWait",
    "lease_ttl_ms": "LeaseTTL",
}
GO.pop("single_instance")  # Set("single_instance", …): no field
JAVA = CAMEL | {"max_borrow_ms": "maxBorrow", "max_wait_ms": "maxWait", "lease_ttl_ms": "leaseTtl"}
JAVA.pop("single_instance")  # set("single_instance", …): no method
C = {k: v for k, v in SNAKE.items() if k != "single_instance"} | {"lease": "lease_url"}
# WebAssembly's GeneratorOptions (a TypeScript block): no leases, no state file; its
# leaseTtlMs (always refused there) keeps its own comment.
WASM = {
    k: v for k, v in CAMEL.items() if k not in ("lease", "lease_ttl_ms", "state", "single_instance")
}

SITES = [
    LineComments(
        "bindings/node/src/generator.rs",
        r"pub struct GeneratorOptions",
        lambda n: n,
        "///",
        CAMEL,
        lambda o, w: f"`'{w}'`",
        lambda b: f"`{b}`",
    ),
    LineComments(
        "bindings/c/src/generator.rs",
        r"pub struct flakeid_options",
        lambda n: C[n],
        "///",
        C,
        lambda o, w: f"`FLAKEID_{o.upper()}_{w.upper()}`",
        lambda b: "1" if b == "true" else "0",
    ),
    LineComments(
        "go/generator.go",
        r"type Options struct",
        lambda n: GO[n],
        "//",
        GO,
        lambda o, w: pascal(o) + pascal(w),
        lambda b: b,
    ),
    Javadoc(
        "java/src/main/java/io/github/flakeid/Generator.java",
        r"\s*public Builder {}\(",
        "<p>",
        JAVA,
        lambda o, w: f"{{@link {pascal(o)}#{w.upper()}}}",
        lambda b: f"{{@code {b}}}",
    ),
    Javadoc(
        "bindings/wasm/src/generator.rs",
        r"\s*{}\?:",
        "",
        WASM,
        lambda o, w: f'"{w}"',
        lambda b: f"`{b}`",
    ),
    Docstring(
        "python/flakeid/_flakeid.pyi",
        "Generator",
        SNAKE,
        lambda o, w: f'"{w}"',
        lambda b: b.capitalize(),
    ),
    Docstring(
        "python/flakeid/_flakeid.pyi",
        "UuidGenerator",
        SNAKE,
        lambda o, w: f'"{w}"',
        lambda b: b.capitalize(),
        only={o["name"] for o in TABLE if o["applies_128"]},
    ),
]


def main(argv: list[str]) -> int:
    write = "--write" in argv
    adopt = "--adopt" in argv  # once, for a site not yet written: keeps its doc as the rest
    stale = []
    only = argv[argv.index("--only") + 1] if "--only" in argv else None
    for site in SITES:
        if only and site.path != only:
            continue
        path = ROOT / site.path
        old = path.read_text()
        lines = old.split("\n")
        new = "\n".join(site.rewrite(lines, adopt))
        if new != old:
            if write or adopt:
                path.write_text(new)
                print(f"options: wrote {site.path}")
            else:
                stale.append(site.path)
    for s in stale:
        print(
            f"options: {s} documents the options otherwise than the core's table says",
            file=sys.stderr,
        )
    if stale:
        print(
            "options: run `python3 tests/docs/options.py --write` (then regenerate "
            "node/index.d.ts and include/flakeid.h)",
            file=sys.stderr,
        )
        return 1
    if not (write or adopt):
        print(f"options: {len(SITES)} sites document every option as the core's table says")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
