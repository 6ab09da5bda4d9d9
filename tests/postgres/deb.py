#!/usr/bin/env python3
"""make test-postgres-deb [PG=<major>]: the extension's packages for one major as a
user gets them (bindings/postgres/package-deb.sh made them).
  - Every major: the .deb holds exactly flakeid.so, the control file, the install
    and update scripts under Debian's paths for that major, and the licences; it
    depends on postgresql-<major>; the tarball holds the same .so and scripts.
  - Debian's 15 (PG_CONFIG is /usr/lib/postgresql/<major>/bin/pg_config): the .deb
    installed with apt (scripts/apt-install.sh), every installed file the package's.
  - A major this host has no Debian server for (PyPI's, setup-postgres-major): the
    tarball's install.sh run against its pg_config.
Then, with no cargo, rustc or rustup on PATH, a fresh private cluster of that
PostgreSQL (tests/env/testenv.py) with shared_preload_libraries = 'flakeid' and
flakeid.node = 77: CREATE EXTENSION flakeid, its version, flakeid_next() carrying
node 77."""

import filecmp
import os
import platform
import re
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
USER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def fail(what):
    sys.exit(f"test-postgres-deb: FAIL: {what}")


def out(*cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw).stdout.strip()


def packages():
    """Checks both packages' contents; installs the one this major takes."""
    pg_config = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
    major = re.match(r"PostgreSQL (\d+)", out(pg_config, "--version")).group(1)
    with open(os.path.join(ROOT, "bindings", "postgres", "Cargo.toml")) as f:
        version = re.search(r'^version = "(.*)"', f.read(), re.M).group(1)
    name = f"postgresql-{major}-flakeid"
    deb = os.path.join(ROOT, "dist", f"{name}_{version}_{out('dpkg', '--print-architecture')}.deb")
    top = f"{name}-{version}-{platform.machine()}-linux-gnu"
    tarball = os.path.join(ROOT, "dist", f"{top}.tar.gz")
    for p in (deb, tarball):
        if not os.path.isfile(p):
            fail(f"no {p} (make deb-postgres PG={major})")

    lib, ext = f"usr/lib/postgresql/{major}/lib", f"usr/share/postgresql/{major}/extension"
    scripts = ["flakeid.control", f"flakeid--{version}.sql", f"flakeid--0.1.0--{version}.sql"]
    want = sorted(
        [
            f"{lib}/flakeid.so",
            *(f"{ext}/{s}" for s in scripts),
            *(f"usr/share/doc/{name}/LICENSE-{k}" for k in ("APACHE", "MIT")),
        ]
    )
    listing = subprocess.run(
        f"dpkg-deb --fsys-tarfile '{deb}' | tar -t",
        shell=True,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    got = sorted(p.removeprefix("./") for p in listing if not p.endswith("/"))
    if got != want:
        fail(f"{deb} holds {got}, expected {want}")
    if not re.search(rf"(^|, )postgresql-{major}(,|$)", out("dpkg-deb", "-f", deb, "Depends")):
        fail(f"{deb} does not depend on postgresql-{major}")
    want = sorted(
        [
            f"{top}/install.sh",
            f"{top}/pkglibdir/flakeid.so",
            *(f"{top}/sharedir/extension/{s}" for s in scripts),
            f"{top}/LICENSE-APACHE",
            f"{top}/LICENSE-MIT",
        ]
    )
    with tarfile.open(tarball) as t:
        got = sorted(m.name for m in t.getmembers() if not m.isdir())
    if got != want:
        fail(f"{tarball} holds {got}, expected {want}")
    with tempfile.TemporaryDirectory() as unpacked:
        subprocess.run(["dpkg-deb", "-x", deb, f"{unpacked}/deb"], check=True)
        subprocess.run(["tar", "-xzf", tarball, "-C", unpacked], check=True)
        so = f"{unpacked}/{top}/pkglibdir/flakeid.so"
        if not filecmp.cmp(f"{unpacked}/deb/{lib}/flakeid.so", so, shallow=False):
            fail("the .deb's and the tarball's flakeid.so differ")
        print(
            f"test-postgres-deb: {os.path.basename(deb)} and {os.path.basename(tarball)}: contents "
            "as expected"
        )
        # install.sh refuses a pg_config it cannot run, and one of another major, saying which.
        for pgc, said in (
            (f"{unpacked}/no-such-pg_config", "cannot run"),
            (
                "/bin/echo",
                f"not a PostgreSQL version: set PG_CONFIG to the pg_config of PostgreSQL {major}",
            ),
        ):
            r = subprocess.run(
                ["sh", f"{unpacked}/{top}/install.sh"],
                env={**os.environ, "PG_CONFIG": pgc},
                capture_output=True,
                text=True,
            )
            if r.returncode == 0 or said not in r.stderr:
                fail(f"install.sh with PG_CONFIG={pgc}: exit {r.returncode}, {r.stderr.strip()!r}")
        if pg_config == f"/usr/lib/postgresql/{major}/bin/pg_config":
            # --reinstall: the same version rebuilt from changed sources is still installed.
            subprocess.run(
                ["bash", "scripts/apt-install.sh", "test-postgres-deb", "--reinstall", deb],
                check=True,
            )
            if (
                out("dpkg-query", "-W", "-f=${Status} ${Version}", name)
                != f"install ok installed {version}"
            ):
                fail(f"dpkg does not list {name} {version} as installed")
            share = out(pg_config, "--sharedir")
            for f in (
                f"{out(pg_config, '--pkglibdir')}/flakeid.so",
                *(f"{share}/extension/{s}" for s in scripts[:2]),
            ):
                if subprocess.run(["dpkg", "-S", f], capture_output=True).returncode != 0:
                    fail(f"{f} is not the package's")
        else:
            subprocess.run(
                ["sh", f"{unpacked}/{top}/install.sh"],
                env={**os.environ, "PG_CONFIG": pg_config},
                check=True,
            )
            if not filecmp.cmp(f"{out(pg_config, '--pkglibdir')}/flakeid.so", so, shallow=False):
                fail("install.sh did not install the tarball's flakeid.so")

    # A user's PATH: no ~/.cargo/bin, no rustup; then this file again, as a user would run it.
    for tool in ("cargo", "rustc", "rustup"):
        if (
            subprocess.run(
                ["bash", "-c", f"command -v {tool}"], env={"PATH": USER_PATH}, capture_output=True
            ).returncode
            == 0
        ):
            fail(f"{tool} is on the user's PATH")
    env = {
        "PATH": USER_PATH,
        "HOME": "/nonexistent",
        "LANG": "C.UTF-8",
        "FLAKEID_PGBIN": os.path.dirname(pg_config),
    }
    subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--create", version],
        env=env,
        cwd=ROOT,
        check=True,
    )


def create(version):
    """CREATE EXTENSION on a fresh cluster, with the environment the caller gave."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
    import testenv

    stack = testenv.Stack()  # its work directory is removed at exit, and on a signal
    pg = testenv.Postgres(
        stack.work, conf=["shared_preload_libraries = 'flakeid'", "flakeid.node = 77"]
    )
    stack.servers.append(pg)
    pg.start()
    pg.psql("CREATE EXTENSION flakeid")
    got = pg.psql("SELECT extversion FROM pg_extension WHERE extname = 'flakeid'").strip()
    if got != version:
        fail(f"extension version {got!r}, expected {version!r}")
    ids = pg.psql("SELECT flakeid_next() FROM generate_series(1, 1000)").split()
    if len(set(ids)) != 1000 or ids != sorted(ids, key=int):
        fail("duplicate or decreasing IDs")
    node = pg.psql(f"SELECT (flakeid_decompose({ids[-1]})).node").strip()
    if node != "77":
        fail(f"node {node}, expected 77")
    print(
        f"test-postgres-deb: CREATE EXTENSION flakeid {version} on a fresh PostgreSQL "
        f"{testenv.PGBIN} cluster "
        "(no Rust on PATH): 1000 increasing IDs with node 77"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--create"]:
        create(sys.argv[2])
    else:
        os.chdir(ROOT)
        packages()
