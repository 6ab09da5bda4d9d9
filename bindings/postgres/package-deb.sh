#!/usr/bin/env bash
# make deb-postgres: the extension as a Debian package,
#   dist/postgresql-<major>-flakeid_<version>_<arch>.deb
# from `cargo pgrx package` (release profile: what ships), laid out where Debian's
# PostgreSQL looks (pg_config's pkglibdir and sharedir), depending on that server
# package and on the libraries the .so needs. `apt install ./<deb>` needs no Rust;
# then shared_preload_libraries = 'flakeid' and CREATE EXTENSION flakeid
# (docs/postgres.md; tests/postgres/deb.sh checks exactly that).
# The tools (the 1.96.0 toolchain, cargo-pgrx, pgrx init) are make's setup-postgres.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
crate=$root/bindings/postgres
cd "$crate"
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
arch=$(dpkg --print-architecture)
name=postgresql-$major-flakeid
out=$root/dist
stage=$root/target/deb-postgres/$name

# cargo pgrx package lays the files out under cargo's target directory.
pkg=${CARGO_TARGET_DIR:-$crate/target}/release/flakeid-pg$major
cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$pkg"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$out"
cp -a "$pkg/." "$stage/"
so=$stage$("$PG_CONFIG" --pkglibdir)/flakeid.so
[ -f "$so" ] || { echo "package-deb: cargo pgrx package made no $so" >&2; exit 1; }
strip --strip-unneeded "$so"
# The 0.1.0 -> 0.2.0 update script is there (ALTER EXTENSION flakeid UPDATE); 0.1.0's
# install script is not: new installs start at the current version.
docdir=$stage/usr/share/doc/$name
mkdir -p "$docdir"
cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$docdir/"

# Depends: the server, and the libraries the .so links (libc at the newest symbol
# version it uses).
glibc=$(objdump -T "$so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
depends="postgresql-$major, libc6 (>= $glibc)"
readelf -d "$so" | grep -q 'NEEDED.*\[libgcc_s.so.1\]' && depends="$depends, libgcc-s1"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: $name
Version: $version
Architecture: $arch
Maintainer: flakeid developers <flakeid@example.invalid>
Depends: $depends
Section: database
Priority: optional
Installed-Size: $size
Homepage: https://example.invalid/flakeid
Description: flakeid for PostgreSQL $major: Snowflake-family 64-bit IDs
 CREATE EXTENSION flakeid: k-ordered, collision-free, decodable 64-bit IDs as
 column defaults (flakeid_next()), from the same engine as the flakeid CLI and
 its Python, Node, WebAssembly, C, Go and Java bindings. Needs
 shared_preload_libraries = 'flakeid' and a node id per server (flakeid.node).
CONTROL
deb=$out/${name}_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "package-deb: $deb ($(du -h "$deb" | cut -f1))"
dpkg-deb --contents "$deb" | awk '{print "  " $NF}'
