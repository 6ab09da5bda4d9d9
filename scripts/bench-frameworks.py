#!/usr/bin/env python3
"""The framework adapters' costs, in one run (docs/frameworks.md, "Costs"):

  python3 tests/env/testenv.py run --postgres -- python3 scripts/bench-frameworks.py

Per insert, one row per statement on the fixture's PostgreSQL, flakeid's default
beside the framework's own identity/sequence key: Go (database/sql with pgx, GORM:
go/frameworks/bench_test.go), Node (Drizzle, Kysely: node/bench/frameworks.mjs),
Python (Django, SQLAlchemy: python/benchmarks/frameworks.py), Java (Hibernate:
java/hibernate/src/test/.../InsertBench.java). Then the install size
of each adapter's dependencies (the framework and its driver, with everything they
pull in). Needs what make test-go, test-node, test-python and test-java set up. BENCH_N
inserts per case (2000).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = ROOT / "python" / ".venv" / "bin" / "python"
N = int(os.environ.get("BENCH_N", "2000"))


def du(paths) -> int:
    total = 0
    for p in paths:
        for dirpath, _, files in os.walk(p):
            for f in files:
                fp = os.path.join(dirpath, f)
                if not os.path.islink(fp):
                    total += os.path.getsize(fp)
    return total


def go_rows():
    env = {**os.environ, "CGO_ENABLED": "1", "BENCH_N": str(N)}
    out = subprocess.run(
        [
            "go",
            "test",
            "-run",
            "^$",
            "-bench",
            "^BenchmarkInsert",
            "-benchtime",
            "1x",
            "-count",
            "1",
            ".",
        ],
        cwd=ROOT / "go" / "frameworks",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {
        ("SQL", "flakeid"): "database/sql + pgx, flakeid.ID",
        ("SQL", "identity"): "database/sql + pgx, identity",
        ("GORM", "flakeid"): "GORM, flakeid.ID (BeforeCreate)",
        ("GORM", "bigserial"): "GORM, autoIncrement (bigserial)",
    }
    for m in re.finditer(r"BenchmarkInsert(\w+?)-\d+\s+\d+\s+\d+ ns/op(.*)", out):
        for v, side in re.findall(r"([\d.]+) µs/insert-(\w+)", m.group(2)):
            yield {
                "lang": "go",
                "case": names.get((m.group(1), side), side),
                "us_per_insert": float(v),
                "n": N,
            }


def json_lines(cmd, cwd):
    r = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, "BENCH_N": str(N)}
    )
    if r.returncode:
        sys.exit(f"bench-frameworks: {' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    out = r.stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def java_env():
    """The environment with JAVA_HOME set to the JDK scripts/setup-java.sh finds."""
    setup = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup-java.sh")],
        capture_output=True,
        text=True,
        check=True,
    )
    return {**os.environ, "JAVA_HOME": setup.stdout.strip()}


def java_rows():
    hib = ROOT / "java" / "hibernate"
    env = java_env()
    mvn = ["mvn", "-B", "-ntp", "-q", "-Dstyle.color=never"]
    subprocess.run(
        [
            *mvn,
            "test-compile",
            "dependency:build-classpath",
            "-Dmdep.includeScope=test",
            "-Dmdep.outputFile=target/bench-cp.txt",
        ],
        cwd=hib,
        env=env,
        check=True,
        capture_output=True,
    )
    cp = (
        f"{hib}/target/test-classes:{hib}/target/classes:"
        + (hib / "target" / "bench-cp.txt").read_text().strip()
    )
    java = f"{env['JAVA_HOME']}/bin/java"
    return json_lines(
        [
            java,
            "--enable-native-access=ALL-UNNAMED",
            "-cp",
            cp,
            "io.github.flakeid.hibernate.InsertBench",
        ],
        hib,
    )


def java_size():
    hib = ROOT / "java" / "hibernate"
    env = java_env()
    subprocess.run(
        [
            "mvn",
            "-B",
            "-ntp",
            "-q",
            "dependency:build-classpath",
            "-Dmdep.includeScope=compile",
            "-Dmdep.outputFile=target/size-cp.txt",
        ],
        cwd=hib,
        env=env,
        check=True,
        capture_output=True,
    )
    jars = [
        j
        for j in (hib / "target" / "size-cp.txt").read_text().strip().split(":")
        if "/io/github/flakeid/" not in j
    ]
    return sum(os.path.getsize(j) for j in jars), len(jars)


def go_size(pkgs):
    out = subprocess.run(
        [
            "go",
            "list",
            "-deps",
            "-f",
            "{{with .Module}}{{if not .Main}}{{.Path}}\t{{.Dir}}{{end}}{{end}}",
            *pkgs,
        ],
        cwd=ROOT / "go" / "frameworks",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    dirs = {
        line.split("\t")[1]
        for line in out.splitlines()
        if line and "flakeid" not in line.split("\t")[0]
    }
    return du(dirs), len(dirs)


def node_size(roots):
    nm = ROOT / "node" / "node_modules"
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen or not (nm / name / "package.json").exists():
            continue
        seen.add(name)
        deps = json.loads((nm / name / "package.json").read_text()).get("dependencies", {})
        todo.extend(deps)
    return du(nm / n for n in seen), len(seen)


PY_SIZE = r"""
import json, sys
from importlib import metadata
from packaging.requirements import Requirement
def closure(names):
    seen, todo = {}, list(names)
    while todo:
        req = Requirement(todo.pop())
        key = req.name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            d = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        seen[key] = sum(f.size or 0 for f in d.files or [])
        for r in d.requires or []:
            rr = Requirement(r)
            if rr.marker is None or rr.marker.evaluate({"extra": ""}) or any(
                rr.marker.evaluate({"extra": e}) for e in req.extras
            ):
                todo.append(r)
    return sum(seen.values()), len(seen)
print(json.dumps({k: closure(v) for k, v in json.loads(sys.argv[1]).items()}))
"""


def main() -> int:
    if not os.environ.get("FLAKEID_TEST_POSTGRES_URL"):
        sys.exit("bench-frameworks: run under tests/env/testenv.py run --postgres")
    rows = list(go_rows())
    rows += json_lines(["node", "bench/frameworks.mjs"], ROOT / "node")
    rows += json_lines(
        [str(PY), str(ROOT / "python" / "benchmarks" / "frameworks.py")], ROOT / "python" / ".venv"
    )
    rows += java_rows()
    print(
        f"\nPer insert, one row per statement, {N} rows per case, "
        "PostgreSQL 15 on 127.0.0.1 (µs):\n"
    )
    print("| language | case | µs/insert |\n|---|---|---:|")
    for r in rows:
        print(f"| {r['lang']} | {r['case']} | {r['us_per_insert']} |")

    sizes = []
    for label, pkgs in [
        ("GORM + its postgres driver (pgx)", ["gorm.io/gorm", "gorm.io/driver/postgres"]),
        ("database/sql driver pgx (stdlib)", ["github.com/jackc/pgx/v5/stdlib"]),
    ]:
        b, n = go_size(pkgs)
        sizes.append(("go", label, b, n, "module sources compiled in"))
    for label, roots in [("drizzle-orm", ["drizzle-orm"]), ("kysely", ["kysely"]), ("pg", ["pg"])]:
        b, n = node_size(roots)
        sizes.append(("node", label, b, n, "node_modules"))
    py = {
        "django": ["django"],
        "sqlalchemy (+ asyncio: greenlet)": ["sqlalchemy[asyncio]"],
        "pydantic": ["pydantic"],
        "psycopg[binary] (the PostgreSQL driver)": ["psycopg[binary]"],
    }
    out = subprocess.run(
        [str(PY), "-c", PY_SIZE, json.dumps(py)], capture_output=True, text=True, check=True
    ).stdout
    for label, (b, n) in json.loads(out).items():
        sizes.append(("python", label, b, n, "site-packages"))
    b, n = java_size()
    sizes.append(("java", "Hibernate ORM 7.4 (hibernate-core and what it needs)", b, n, "jars"))
    print(
        "\nInstall size of each adapter's dependencies "
        "(the adapters themselves are a few KB inside the packages):\n"
    )
    print("| language | dependency | size | packages | measured as |\n|---|---|---:|---:|---|")
    for lang, label, b, n, how in sizes:
        print(f"| {lang} | {label} | {b / 1e6:.1f} MB | {n} | {how} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
