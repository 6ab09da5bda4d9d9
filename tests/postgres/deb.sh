#!/usr/bin/env bash
# make test-postgres-deb: the extension's Debian package as a user gets it. Installs
# dist/postgresql-15-flakeid_<version>_<arch>.deb with apt (scripts/apt-install.sh),
# then, with no cargo, rustc or rustup on PATH, starts a fresh private cluster of
# Debian's PostgreSQL 15 (tests/env/testenv.py) with shared_preload_libraries =
# 'flakeid' and flakeid.node = 77, and checks CREATE EXTENSION flakeid, its version,
# flakeid_next() carrying node 77, and that every installed file is the package's.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' bindings/postgres/Cargo.toml | head -n 1)
deb=$PWD/dist/postgresql-15-flakeid_${version}_$(dpkg --print-architecture).deb
fail() { echo "test-postgres-deb: FAIL: $*" >&2; exit 1; }
[ -f "$deb" ] || fail "no $deb (make deb-postgres)"

# --reinstall: the same version rebuilt from changed sources is still installed.
bash scripts/apt-install.sh test-postgres-deb --reinstall "$deb"
[ "$(dpkg-query -W -f='${Status} ${Version}' postgresql-15-flakeid)" = "install ok installed $version" ] \
  || fail "dpkg does not list postgresql-15-flakeid $version as installed"
for f in "$($PG_CONFIG --pkglibdir)/flakeid.so" "$($PG_CONFIG --sharedir)/extension/flakeid.control" \
         "$($PG_CONFIG --sharedir)/extension/flakeid--$version.sql"; do
  dpkg -S "$f" >/dev/null 2>&1 || fail "$f is not the package's"
done

# A user's PATH: no ~/.cargo/bin, no rustup.
user_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
for tool in cargo rustc rustup; do
  ! env PATH="$user_path" bash -c "command -v $tool" >/dev/null || fail "$tool is on the user's PATH"
done
env -i PATH="$user_path" HOME=/nonexistent LANG=C.UTF-8 python3 - "$version" <<'PY'
import sys
sys.path.insert(0, "tests/env")
import testenv

version = sys.argv[1]
stack = testenv.Stack()  # its work directory is removed at exit, and on a signal
pg = testenv.Postgres(stack.work, conf=["shared_preload_libraries = 'flakeid'", "flakeid.node = 77"])
stack.servers.append(pg)
pg.start()
pg.psql("CREATE EXTENSION flakeid")
got = pg.psql("SELECT extversion FROM pg_extension WHERE extname = 'flakeid'").strip()
assert got == version, f"extension version {got!r}, expected {version!r}"
ids = pg.psql("SELECT flakeid_next() FROM generate_series(1, 1000)").split()
assert len(set(ids)) == 1000, "duplicate IDs"
assert ids == sorted(ids, key=int), "IDs not increasing"
node = pg.psql(f"SELECT (flakeid_decompose({ids[-1]})).node").strip()
assert node == "77", f"node {node}, expected 77"
print(f"test-postgres-deb: CREATE EXTENSION flakeid {version} on a fresh cluster (no Rust on PATH): "
      f"1000 increasing IDs with node 77")
PY
