#!/usr/bin/env bash
# make test-postgres-deb [PG=<major>]: the extension's packages for one major as a user
# gets them (bindings/postgres/package-deb.sh made them).
#   - Every major: the .deb holds exactly flakeid.so, the control file, the install
#     and update scripts under Debian's paths for that major, and the licences; it
#     depends on postgresql-<major>; the tarball holds the same .so and scripts.
#   - Debian's 15 (PG_CONFIG is /usr/lib/postgresql/<major>/bin/pg_config): the .deb
#     installed with apt (scripts/apt-install.sh), every installed file the package's.
#   - A major this host has no Debian server for (PyPI's, setup-postgres-major): the
#     tarball's install.sh run against its pg_config.
# Then, with no cargo, rustc or rustup on PATH, a fresh private cluster of that
# PostgreSQL (tests/env/testenv.py) with shared_preload_libraries = 'flakeid' and
# flakeid.node = 77: CREATE EXTENSION flakeid, its version, flakeid_next() carrying
# node 77.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' bindings/postgres/Cargo.toml | head -n 1)
name=postgresql-$major-flakeid
deb=$PWD/dist/${name}_${version}_$(dpkg --print-architecture).deb
tarball=$PWD/dist/$name-$version-$(uname -m)-linux-gnu.tar.gz
fail() { echo "test-postgres-deb: FAIL: $*" >&2; exit 1; }
[ -f "$deb" ] || fail "no $deb (make deb-postgres PG=$major)"
[ -f "$tarball" ] || fail "no $tarball (make deb-postgres PG=$major)"

# The packages' contents.
lib=usr/lib/postgresql/$major/lib
ext=usr/share/postgresql/$major/extension
want_deb=$(printf '%s\n' "$lib/flakeid.so" "$ext/flakeid.control" "$ext/flakeid--$version.sql" \
  "$ext/flakeid--0.1.0--$version.sql" "usr/share/doc/$name/LICENSE-APACHE" "usr/share/doc/$name/LICENSE-MIT" | sort)
got_deb=$(dpkg-deb --fsys-tarfile "$deb" | tar -t | grep -v '/$' | sed 's|^\./||' | sort)
[ "$got_deb" = "$want_deb" ] || fail "$deb holds:\n$got_deb\nexpected:\n$want_deb"
dpkg-deb -f "$deb" Depends | grep -Eq "(^|, )postgresql-$major(,|$)" || fail "$deb does not depend on postgresql-$major"
top=$name-$version-$(uname -m)-linux-gnu
want_tar=$(printf '%s\n' "$top/install.sh" "$top/pkglibdir/flakeid.so" "$top/sharedir/extension/flakeid.control" \
  "$top/sharedir/extension/flakeid--$version.sql" "$top/sharedir/extension/flakeid--0.1.0--$version.sql" \
  "$top/LICENSE-APACHE" "$top/LICENSE-MIT" | sort)
got_tar=$(tar -tzf "$tarball" | grep -v '/$' | sort)
[ "$got_tar" = "$want_tar" ] || fail "$tarball holds:\n$got_tar\nexpected:\n$want_tar"
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked/deb"
tar -xzf "$tarball" -C "$unpacked"
cmp "$unpacked/deb/$lib/flakeid.so" "$unpacked/$top/pkglibdir/flakeid.so" || fail "the .deb's and the tarball's flakeid.so differ"
echo "test-postgres-deb: $(basename "$deb") and $(basename "$tarball"): contents as expected"

if [ "$PG_CONFIG" = "/usr/lib/postgresql/$major/bin/pg_config" ]; then
  # --reinstall: the same version rebuilt from changed sources is still installed.
  bash scripts/apt-install.sh test-postgres-deb --reinstall "$deb"
  [ "$(dpkg-query -W -f='${Status} ${Version}' "$name")" = "install ok installed $version" ] \
    || fail "dpkg does not list $name $version as installed"
  for f in "$($PG_CONFIG --pkglibdir)/flakeid.so" "$($PG_CONFIG --sharedir)/extension/flakeid.control" \
           "$($PG_CONFIG --sharedir)/extension/flakeid--$version.sql"; do
    dpkg -S "$f" >/dev/null 2>&1 || fail "$f is not the package's"
  done
else
  PG_CONFIG=$PG_CONFIG sh "$unpacked/$top/install.sh"
  cmp "$($PG_CONFIG --pkglibdir)/flakeid.so" "$unpacked/$top/pkglibdir/flakeid.so" \
    || fail "install.sh did not install the tarball's flakeid.so"
fi

# A user's PATH: no ~/.cargo/bin, no rustup.
user_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
for tool in cargo rustc rustup; do
  ! env PATH="$user_path" bash -c "command -v $tool" >/dev/null || fail "$tool is on the user's PATH"
done
env -i PATH="$user_path" HOME=/nonexistent LANG=C.UTF-8 FLAKEID_PGBIN="$(dirname "$PG_CONFIG")" \
  python3 - "$version" <<'PY'
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
print(f"test-postgres-deb: CREATE EXTENSION flakeid {version} on a fresh PostgreSQL {testenv.PGBIN} cluster "
      "(no Rust on PATH): "
      f"1000 increasing IDs with node 77")
PY
