#!/usr/bin/env bash
# make deb-postgres [PG=<major>]: the extension for one PostgreSQL major, as
#   dist/postgresql-<major>-flakeid_<version>_<arch>.deb      (Debian's paths), and
#   dist/postgresql-<major>-flakeid-<version>-<arch>-linux-gnu.tar.gz
#     (any other host: paths relative to pg_config, and an install.sh that copies
#     them into `pg_config --pkglibdir` and `--sharedir`/extension)
# from one `cargo pgrx package` (release profile: what ships) against PG_CONFIG
# (FLAKEID_DEB_OUT: another directory than dist/).
# The .deb lays the files out where Debian's PostgreSQL of that major looks
# (/usr/lib/postgresql/<major>/lib, /usr/share/postgresql/<major>/extension: what
# pg_config says for Debian's 15), depends on that server package and on the libraries
# the .so needs. `apt install ./<deb>` needs no Rust; then shared_preload_libraries =
# 'flakeid' and CREATE EXTENSION flakeid (docs/postgres.md; tests/postgres/deb.py
# checks exactly that, and the contents of a major no Debian server of this host has).
# The tools (the 1.96.0 toolchain, cargo-pgrx, pgrx init) are make's setup-postgres;
# PGRX_PG_CONFIG_PATH makes pgrx build against PG_CONFIG without `cargo pgrx init`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
crate=$root/bindings/postgres
cd "$crate"
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
arch=$(dpkg --print-architecture)
name=postgresql-$major-flakeid
out=${FLAKEID_DEB_OUT:-$root/dist}
stage=$root/target/deb-postgres/$name

# cargo pgrx package lays the files out under cargo's target directory.
pkg=${CARGO_TARGET_DIR:-$crate/target}/release/flakeid-pg$major
rm -rf "$pkg"
PGRX_PG_CONFIG_PATH=$PG_CONFIG cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$pkg"
built_so=$pkg$("$PG_CONFIG" --pkglibdir)/flakeid.so
built_ext=$pkg$("$PG_CONFIG" --sharedir)/extension
[ -f "$built_so" ] || { echo "package-deb: cargo pgrx package made no $built_so" >&2; exit 1; }
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$out"
# Debian's layout for every major (postgresql-common: /usr/lib/postgresql/<major>).
so=$stage/usr/lib/postgresql/$major/lib/flakeid.so
install -D -m 755 "$built_so" "$so"
strip --strip-unneeded "$so"
# The 0.1.0 -> 0.2.0 update script is there (ALTER EXTENSION flakeid UPDATE); 0.1.0's
# install script is not: new installs start at the current version.
mkdir -p "$stage/usr/share/postgresql/$major/extension"
install -m 644 "$built_ext"/flakeid* "$stage/usr/share/postgresql/$major/extension/"
docdir=$stage/usr/share/doc/$name
mkdir -p "$docdir"
cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$docdir/"

# The tarball: the same files, relative to pg_config.
tar_name=$name-$version-$(uname -m)-linux-gnu
tar_stage=$root/target/deb-postgres/$tar_name
rm -rf "$tar_stage"
mkdir -p "$tar_stage/pkglibdir" "$tar_stage/sharedir/extension"
install -m 755 "$so" "$tar_stage/pkglibdir/"
install -m 644 "$stage/usr/share/postgresql/$major/extension"/* "$tar_stage/sharedir/extension/"
cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$tar_stage/"
sed "s/@MAJOR@/$major/g; s/@VERSION@/$version/g" "$crate/install.sh.in" > "$tar_stage/install.sh"
chmod 755 "$tar_stage/install.sh"
tar -C "$(dirname "$tar_stage")" --owner=0 --group=0 --numeric-owner --sort=name \
  -czf "$out/$tar_name.tar.gz" "$tar_name"
echo "package-deb: $out/$tar_name.tar.gz ($(du -h "$out/$tar_name.tar.gz" | cut -f1))"

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
Maintainer: flakeid developers <flakeid@users.noreply.github.com>
Depends: $depends
Section: database
Priority: optional
Installed-Size: $size
Homepage: https://github.com/flakeid/flakeid
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
