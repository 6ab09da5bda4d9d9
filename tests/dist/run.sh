#!/usr/bin/env bash
# `make test-dist`: the artifacts in dist/ (from `make dist`), installed and
# used as a user would, on a PATH with no cargo, rustc or maturin:
#   * names, the one version in each artifact, SHA256SUMS;
#   * the x86_64 wheel in fresh venvs of Python 3.9 and 3.13 (pyenv), running
#     python/tests against the installed package; auditwheel on every wheel; the
#     sdist builds from source (that step alone gets cargo back);
#   * the npm tarballs installed offline into a fresh project, running node/test
#     against the installed @flakeid/node; then without the native package, the
#     wasm fallback (warned once) runs the same suite; @flakeid/wasm from ESM and CJS;
#   * examples/c against the unpacked (and moved) C SDK: CMake find_package and
#     pkg-config, shared and static;
#   * the aarch64 CLI under qemu-aarch64-static decodes the seed's worked example;
#     every aarch64 artifact is an aarch64 ELF with the claimed tags.
# FLAKEID_DIST_HOST=1 (make ci, after `FLAKEID_DIST_HOST=1 scripts/dist.sh`): the same
# checks of this machine's artifacts only; no aarch64, musl wheel or addon, sdist build.
# Those are built for the host, not glibc 2.17: the wheel's tag is the manylinux policy
# of this machine's build (auditwheel agrees), not manylinux2014.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
dist="$root/dist"
tools="$root/${FLAKEID_DIST_TOOLS:-target/dist-tools}"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
host_only=${FLAKEID_DIST_HOST:-0}
full() { [ "$host_only" != 1 ]; }
work=$(mktemp -d "${TMPDIR:-/tmp}/flakeid-test-dist.XXXXXX")
trap 'rm -rf "$work"' EXIT

step() { printf '\n== test-dist: %s\n' "$*"; }
fail() { echo "test-dist: FAIL: $*" >&2; exit 1; }
has() { grep -q -- "$2" <<<"$1" || fail "$3: expected '$2' in: $1"; }

# A user's PATH: the system's, without cargo, rustc or maturin.
user_path=/usr/local/bin:/usr/bin:/bin
for tool in cargo rustc maturin; do
  if PATH=$user_path command -v "$tool" >/dev/null; then fail "$tool is on the user PATH ($user_path)"; fi
done
as_user() { env PATH="$user_path" CARGO_HOME=/nonexistent RUSTUP_HOME=/nonexistent "$@"; }

pyenv_python() {
  local p
  for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python3; do
    [ -x "$p" ] && { echo "$p"; return; }
  done
  fail "Python $1 not found under ${PYENV_ROOT:-$HOME/.pyenv}/versions (pyenv install $1)"
}

# ------------------------------------------------------------------ the inventory
step "artifacts of flakeid $version"
[ -d "$dist" ] || fail "no dist/ (run make dist)"
# The copies of the version that make dist does not stamp (RELEASING.md, step 1).
node_v=$(node -p "require('$root/node/package.json').version")
# (The PostgreSQL extension has a version of its own: its SQL's, which ALTER EXTENSION
# UPDATE steps through; bindings/postgres/Cargo.toml says it.)
[ "$node_v" = "$version" ] ||
  fail "versions disagree: Cargo.toml $version, node/package.json $node_v"
whl_gnu_x64=$(ls "$dist"/flakeid_engine-"$version"-cp39-abi3-manylinux*_x86_64.whl)
whl_gnu_arm="" whl_musl=""
if full; then
  whl_gnu_arm=$(ls "$dist"/flakeid_engine-"$version"-cp39-abi3-manylinux*_aarch64.whl)
  whl_musl=$(ls "$dist"/flakeid_engine-"$version"-cp39-abi3-musllinux_1_2_x86_64.whl)
fi
expected=(
  "flakeid_engine-$version.tar.gz"
  "flakeid-node-$version.tgz"
  "flakeid-node-linux-x64-gnu-$version.tgz"
  "flakeid-node-linux-arm64-gnu-$version.tgz"
  "flakeid-node-linux-x64-musl-$version.tgz"
  "flakeid-wasm-$version.tgz"
  "flakeid-$version-x86_64-unknown-linux-gnu.tar.gz"
  "flakeid-$version-aarch64-unknown-linux-gnu.tar.gz"
  "flakeid-$version-x86_64-unknown-linux-musl"
  "flakeid-$version-aarch64-unknown-linux-musl"
  SHA256SUMS
)
if ! full; then
  expected=("flakeid_engine-$version.tar.gz" "flakeid-node-$version.tgz" "flakeid-node-linux-x64-gnu-$version.tgz"
            "flakeid-wasm-$version.tgz" "flakeid-$version-x86_64-unknown-linux-gnu.tar.gz"
            "flakeid-$version-x86_64-unknown-linux-musl" SHA256SUMS)
fi
# macOS and Windows (scripts/dist.sh macos, windows): tests/dist/cross.sh checks them.
cross=()
if full; then
  cross=("flakeid-node-darwin-x64-$version.tgz" "flakeid-node-darwin-arm64-$version.tgz"
         "flakeid-node-win32-x64-gnu-$version.tgz" "flakeid-$version-x86_64-apple-darwin.tar.gz"
         "flakeid-$version-aarch64-apple-darwin.tar.gz" "flakeid-$version-x86_64-pc-windows-gnu.zip"
         "flakeid-$version-x86_64-apple-darwin" "flakeid-$version-aarch64-apple-darwin"
         "flakeid-$version-x86_64-pc-windows-gnu.exe")
  expected+=("${cross[@]}")
fi
for f in "${expected[@]}"; do [ -f "$dist/$f" ] || fail "dist/$f missing"; done
# The names the docs may mention (make test-docs checks them) are exactly these files.
python3 "$root/tests/docs/artifacts.py" --dist "$dist" || fail "dist/ and tests/docs/artifacts.py disagree"
count=$(find "$dist" -maxdepth 1 -type f | wc -l)
wheels=6; full || wheels=1 # manylinux x86_64 and aarch64, musllinux; macOS x86_64 and arm64, win_amd64
[ "$count" -eq $((${#expected[@]} + wheels)) ] || fail "dist/ holds $count files, expected $((${#expected[@]} + wheels)): $(ls "$dist")"
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match dist/"
[ "$(wc -l < "$dist/SHA256SUMS")" -eq $((count - 1)) ] || fail "SHA256SUMS does not list every artifact"
ls -l "$dist" | awk 'NR > 1 { printf "   %10d  %s\n", $5, $NF }'

step "size budgets (bytes of each file in dist/)"
# What each kind of artifact may weigh. A dependency or feature that grows one past
# its budget fails here: find the weight (cargo bloat, nm --size-sort) before raising
# a budget. Sizes before lean-by-default: wheel 3.0 MB, .node 3.0 MB,
# static CLI 9.3 MB, C SDK 8.3 MB; the aims: wheel and .node <= 2 MB, CLI <= 6 MB.
# Since every crate is optimised for speed in [profile.dist] (no opt-level "s" for the
# TLS stack and store clients: docs/performance.md, "Build profiles"), the wheel and
# the .node weigh 15 % more (1.94 -> 2.23 MB each on x86_64), the C SDK 14 %, the
# static CLI 11 %: the price of the faster TLS handshakes measured there.
budget_of() { # file name -> budget in bytes
  case "$1" in
    *.whl)                                 echo 2400000 ;;  # the pyo3 module: engine, leases (3 stores, rustls), sealing
    "flakeid_engine-$version.tar.gz")    echo 2000000 ;;  # the sdist: the crates' sources
    "flakeid-node-$version.tgz")           echo 300000 ;;   # JS glue and types only
    flakeid-node-linux-*)                  echo 2400000 ;;  # one .node addon
    flakeid-wasm-*)                        echo 400000 ;;   # the .wasm (its own budget: mk/wasm.mk) and glue
    flakeid-"$version"-*-linux-gnu.tar.gz) echo 8300000 ;;  # C SDK: .so, trimmed .a, header, pkg-config, CMake
    flakeid-"$version"-*-linux-musl)       echo 9300000 ;;  # the static CLI with the service
    SHA256SUMS)                            echo 10000 ;;
    postgresql-*-flakeid_*.deb)            echo 4000000 ;;  # the PostgreSQL extension (make deb-postgres PG=<major>)
    postgresql-*-flakeid-*-linux-gnu.tar.gz) echo 4500000 ;;  # the same .so and SQL, pg_config-relative (gzip: 3.8 MB)
    *) fail "no size budget for dist/$1: add one here" ;;
  esac
}
over=0
for path in "$dist"/*; do
  f=$(basename "$path")
  case $f in # macOS and Windows: their budgets are tests/dist/cross.sh's
    *-macosx_*.whl | *-win_amd64.whl | flakeid-node-darwin-* | flakeid-node-win32-* | *-apple-darwin* | *-windows-gnu*) continue ;;
  esac
  size=$(stat -c %s "$path") budget=$(budget_of "$f")
  if [ "$size" -gt "$budget" ]; then
    echo "   OVER  $f: $size bytes, budget $budget" >&2
    over=1
  else
    printf '   ok    %-72s %9d <= %9d\n' "$f" "$size" "$budget"
  fi
done
[ $over -eq 0 ] || fail "artifacts over their size budget (see above)"

# ------------------------------------------------------------------ Python
step "wheels: tags, architectures, auditwheel"
wheel_info() { # wheel -> the WHEEL file's text
  unzip -p "$1" "flakeid_engine-$version.dist-info/WHEEL"
}
wheel_specs=("$whl_gnu_x64:x86-64:manylinux_2_17_x86_64")
if ! full; then
  # Built for this machine (no zig): tagged with the manylinux policy its glibc symbols
  # allow, the last of the name's platform tags; auditwheel must find the same below.
  host_tag=$(basename "$whl_gnu_x64" .whl)
  host_tag=${host_tag##*[.-]}
  [[ $host_tag =~ ^manylinux_2_[0-9]+_x86_64$ ]] || fail "$(basename "$whl_gnu_x64"): platform tag $host_tag, expected manylinux_2_<glibc minor>_x86_64"
  wheel_specs=("$whl_gnu_x64:x86-64:$host_tag")
fi
full && wheel_specs+=("$whl_gnu_arm:ARM aarch64:manylinux_2_17_aarch64" "$whl_musl:x86-64:musllinux_1_2_x86_64")
for spec in "${wheel_specs[@]}"; do
  IFS=: read -r whl arch tag <<<"$spec"
  info=$(wheel_info "$whl")
  has "$info" "Tag: cp39-abi3-$tag" "$(basename "$whl") WHEEL"
  has "$(unzip -p "$whl" "flakeid_engine-$version.dist-info/METADATA")" "Version: $version" "$(basename "$whl") METADATA"
  so=$work/$(basename "$whl").so
  unzip -p "$whl" 'flakeid/_flakeid.abi3.so' > "$so"
  has "$(file -b "$so")" "ELF 64-bit LSB shared object, $arch" "$(basename "$whl") extension"
  # auditwheel: the tag it finds is the one claimed, and the wheel needs no library
  # outside that policy (nothing to graft).
  shown=$("$tools/bin/auditwheel" show --json "$whl" 2>"$work/auditwheel.err") || fail "auditwheel show $(basename "$whl"): $(cat "$work/auditwheel.err")"
  verdict=$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d["overall_tag"], sorted(d["external_libs"]))' "$shown")
  [ "$verdict" = "$tag []" ] || fail "auditwheel show $(basename "$whl"): tag and external libraries are $verdict, expected $tag []"
  echo "   $(basename "$whl"): $tag, $(stat -c %s "$whl") bytes"
done
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
! full || [ "$(needed "$work/$(basename "$whl_musl").so")" = "libc.musl-x86_64.so.1 " ] ||
  fail "the musllinux wheel's extension needs $(needed "$work/$(basename "$whl_musl").so"), expected musl's libc only"

for py in 3.9 3.13; do
  step "Python $py: the manylinux wheel in a fresh venv, python/tests against it"
  python=$(pyenv_python "$py")
  venv="$work/venv-$py"
  as_user "$python" -m venv "$venv"
  # Only the wheel: --no-index, so pip cannot fall back to building from source.
  as_user "$venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$whl_gnu_x64"
  if [ "$py" = 3.9 ]; then test_deps=(pytest==8.4.2 hypothesis==6.141.1); else
    test_deps=($(sed -n 's/^test = \[\(.*\)\]/\1/p' python/pyproject.toml | tr -d '",' | tr ' ' '\n' | grep -v '^mypy'))
  fi
  as_user "$venv/bin/pip" install --quiet --disable-pip-version-check "${test_deps[@]}"
  rm -rf "$work/pytests" && cp -r python/tests "$work/pytests"
  where=$(cd "$work" && as_user "$venv/bin/python" -c 'import flakeid, sys; print(flakeid.__file__, flakeid.__version__)')
  has "$where" "$venv/lib/python$py/site-packages/flakeid/__init__.py $version" "the installed package"
  (cd "$work/pytests" && as_user FLAKEID_VECTORS="$root/tests/vectors" FLAKEID_DOCS="$root/docs" "$venv/bin/python" -m pytest -q -p no:cacheprovider .)
done

if full; then
  step "sdist: builds from source (cargo back on PATH for this step only)"
  tar -tzf "$dist/flakeid_engine-$version.tar.gz" > "$work/sdist.list"
  for f in PKG-INFO pyproject.toml Cargo.lock bindings/python/Cargo.toml crates/flakeid-core/src/lib.rs; do
    grep -qx "flakeid_engine-$version/$f" "$work/sdist.list" || fail "the sdist lacks $f"
  done
  venv="$work/venv-sdist"
  "$(pyenv_python 3.13)" -m venv "$venv"
  # The sdist's crates compile into the workspace's target directory (sharing its dependencies).
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" "$venv/bin/pip" install --quiet --disable-pip-version-check "$dist/flakeid_engine-$version.tar.gz"
  # The program starts at column 0: Python refuses an indented first line.
  (cd "$work" && as_user "$venv/bin/python" -c '
import flakeid
g = flakeid.Generator(datacenter=1, worker=2)
a, b = g.next_id(), g.next_id()
assert 0 < a < b, (a, b)
assert flakeid.decompose(b).worker == 2
print("   the sdist-built package issues", a, b)')
fi

# ------------------------------------------------------------------ Node
step "npm: @flakeid/node and its linux-x64-gnu package, offline, into a fresh project"
app="$work/app"
mkdir -p "$app"
echo '{ "name": "flakeid-dist-app", "private": true }' > "$app/package.json"
(cd "$app" && as_user npm install --offline --no-audit --no-fund --loglevel=error \
  "$dist/flakeid-node-$version.tgz" "$dist/flakeid-node-linux-x64-gnu-$version.tgz" "$dist/flakeid-wasm-$version.tgz")
for p in node node-linux-x64-gnu wasm; do
  v=$(node -p "require('$app/node_modules/@flakeid/$p/package.json').version")
  [ "$v" = "$version" ] || fail "@flakeid/$p is version $v, expected $version"
done
[ ! -e "$app/node_modules/@flakeid/node-linux-x64-musl" ] || fail "npm installed the musl package on glibc"
[ ! -e "$app/node_modules/@flakeid/node-linux-arm64-gnu" ] || fail "npm installed the arm64 package on x64"
# The suite's own devDependencies, pinned as in node/package.json, one folder up (Node
# resolves them from there; the app's node_modules holds only what the tarballs brought).
deps=$(node -p "const d = require('$root/node/package.json').devDependencies; ['fast-check', 'flake-idgen'].map((n) => n + '@' + d[n]).join(' ')")
(cd "$work" && echo '{ "private": true }' > package.json && as_user npm install --no-audit --no-fund --loglevel=error $deps)
cp -r node/test "$app/test"

step "node: the suite against the installed @flakeid/node (native)"
(cd "$app" && as_user FLAKEID_FROM=package FLAKEID_VECTORS="$root/tests/vectors" FLAKEID_DOCS="$root/docs" node --test --test-reporter=dot test/*.test.mjs)
esm=$(cd "$app" && as_user node --input-type=module -e "
import { Generator, decompose } from '@flakeid/node'
import FlakeId from '@flakeid/node/flake-idgen'
const id = new Generator({ worker: 5 }).nextId()
console.log(decompose(id).worker, new FlakeId({ id: 3 }).next().length)")
[ "$esm" = "5 8" ] || fail "ESM import of @flakeid/node printed: $esm"

step "node: no native package -> the @flakeid/wasm fallback, announced once"
rm -rf "$app/node_modules/@flakeid/node-linux-x64-gnu"
warned=$(cd "$app" && as_user node -e "
require('@flakeid/node'); require('@flakeid/node/flake-idgen'); require('@flakeid/node')
const { Generator } = require('@flakeid/node')
console.log(typeof new Generator().nextId())" 2>&1)
has "$warned" "bigint" "the fallback issues IDs"
[ "$(grep -c FLAKEID_WASM_FALLBACK <<<"$warned")" -eq 1 ] || fail "the fallback warning is not printed exactly once: $warned"
(cd "$app" && as_user FLAKEID_FROM=package FLAKEID_BACKEND=wasm FLAKEID_VECTORS="$root/tests/vectors" FLAKEID_DOCS="$root/docs" \
  node --no-warnings --test --test-reporter=dot test/*.test.mjs)

step "@flakeid/wasm: CJS, Node ESM, and the web build"
out=$(cd "$app" && as_user node -e "
const { Generator, decompose } = require('@flakeid/wasm')
console.log(decompose(new Generator({ worker: 7 }).nextId()).worker)")
[ "$out" = 7 ] || fail "require('@flakeid/wasm') printed: $out"
out=$(cd "$app" && as_user node --input-type=module -e "
import { Generator, decompose } from '@flakeid/wasm'
console.log(decompose(new Generator({ worker: 8 }).nextId()).worker)")
[ "$out" = 8 ] || fail "import from '@flakeid/wasm' printed: $out"
out=$(cd "$app" && as_user node --input-type=module -e "
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import init, { Generator, decompose } from '@flakeid/wasm/web'
const wasm = createRequire(process.cwd() + '/').resolve('@flakeid/wasm/web/flakeid_bg.wasm')
await init({ module_or_path: readFileSync(wasm) })
console.log(decompose(new Generator({ worker: 9 }).nextId()).worker)")
[ "$out" = 9 ] || fail "the web build printed: $out"

if full; then
  step "npm: the other platform packages"
  for spec in linux-arm64-gnu:arm64:glibc:"ARM aarch64" linux-x64-musl:x64:musl:x86-64; do
    IFS=: read -r plat cpu libc arch <<<"$spec"
    x="$work/pkg-$plat"
    mkdir -p "$x" && tar -xzf "$dist/flakeid-node-$plat-$version.tgz" -C "$x"
    meta=$(node -p "const p = require('$x/package/package.json'); [p.name, p.version, p.os, p.cpu, p.libc, p.main, JSON.stringify(p.scripts || {})].join(' ')")
    [ "$meta" = "@flakeid/node-$plat $version linux $cpu $libc flakeid.$plat.node {}" ] || fail "$plat package.json: $meta"
    has "$(file -b "$x/package/flakeid.$plat.node")" "ELF 64-bit LSB shared object, $arch" "flakeid.$plat.node"
  done
  [ "$(needed "$work/pkg-linux-x64-musl/package/flakeid.linux-x64-musl.node")" = "libc.musl-x86_64.so.1 " ] ||
    fail "the musl addon needs $(needed "$work/pkg-linux-x64-musl/package/flakeid.linux-x64-musl.node"), expected musl's libc only"
fi

# ------------------------------------------------------------------ C
step "C SDK: examples/c with CMake find_package and pkg-config, shared and static"
tar -xzf "$dist/flakeid-$version-x86_64-unknown-linux-gnu.tar.gz" -C "$work"
# Relocatable: move it after unpacking.
mkdir -p "$work/elsewhere" && mv "$work/flakeid-$version-x86_64-unknown-linux-gnu" "$work/elsewhere/sdk"
sdk="$work/elsewhere/sdk"
for f in include/flakeid.h lib/libflakeid.so lib/libflakeid.a lib/pkgconfig/flakeid.pc \
         lib/cmake/flakeid/flakeidConfig.cmake lib/cmake/flakeid/flakeidConfigVersion.cmake LICENSE-MIT LICENSE-APACHE; do
  [ -f "$sdk/$f" ] || fail "C SDK: $f missing"
done
[ "$(readlink "$sdk/lib/libflakeid.so.0")" = libflakeid.so ] || fail "C SDK: lib/libflakeid.so.0 is not a link to libflakeid.so"
readelf -d "$sdk/lib/libflakeid.so" | grep 'SONAME.*\[libflakeid.so.0\]' >/dev/null || fail "libflakeid.so has no soname libflakeid.so.0"
run_example() { # name binary
  local got
  got=$("$2") || fail "$1: the example exited with $?"
  has "$got" "datacenter 1, worker 2" "$1"
  ldd "$2" | grep 'libflakeid.so' >/dev/null && echo "   $1: ok (links $(ldd "$2" | awk '/libflakeid/ {print $1}'))" || echo "   $1: ok (static)"
}
for mode in OFF ON; do
  as_user cmake -S examples/c -B "$work/cmake-$mode" -DCMAKE_PREFIX_PATH="$sdk" -DFLAKEID_STATIC=$mode >/dev/null
  as_user cmake --build "$work/cmake-$mode" >/dev/null
done
ldd "$work/cmake-OFF/example" | grep "libflakeid.so.0 => $sdk/lib/libflakeid.so.0" >/dev/null || fail "the CMake shared build does not load the SDK's libflakeid.so.0"
ldd "$work/cmake-ON/example" | grep libflakeid >/dev/null && fail "the CMake static build loads libflakeid.so"
run_example "cmake find_package, shared" "$work/cmake-OFF/example"
run_example "cmake find_package, static" "$work/cmake-ON/example"
export PKG_CONFIG_PATH="$sdk/lib/pkgconfig"
[ "$(pkg-config --modversion flakeid)" = "$version" ] || fail "flakeid.pc version $(pkg-config --modversion flakeid)"
as_user cc -std=c11 -Wall -Wextra -Werror examples/c/example.c $(pkg-config --cflags --libs flakeid) \
  -Wl,-rpath,"$(pkg-config --variable=libdir flakeid)" -o "$work/pc-shared"
as_user cc -std=c11 -Wall -Wextra -Werror examples/c/example.c \
  $(pkg-config --cflags --libs --static flakeid | sed 's/-lflakeid\b/-l:libflakeid.a/') -o "$work/pc-static"
ldd "$work/pc-static" | grep libflakeid >/dev/null && fail "the pkg-config static build loads libflakeid.so"
run_example "pkg-config, shared" "$work/pc-shared"
run_example "pkg-config, static" "$work/pc-static"
unset PKG_CONFIG_PATH
arm=""
if full; then
  tar -xzf "$dist/flakeid-$version-aarch64-unknown-linux-gnu.tar.gz" -C "$work"
  arm="$work/flakeid-$version-aarch64-unknown-linux-gnu/lib"
  has "$(file -b "$arm/libflakeid.so")" "ELF 64-bit LSB shared object, ARM aarch64" "aarch64 libflakeid.so"
  readelf -d "$arm/libflakeid.so" | grep 'SONAME.*\[libflakeid.so.0\]' >/dev/null || fail "aarch64 libflakeid.so has no soname"
  has "$(readelf -h "$arm/libflakeid.a" 2>/dev/null | grep -m1 Machine)" "AArch64" "aarch64 libflakeid.a"
fi
# The static libraries ship without LLVM bitcode (dist.sh trims it; 91 MB before).
for a in "$sdk/lib/libflakeid.a" ${arm:+"$arm/libflakeid.a"}; do
  sections=$(readelf -S -W "$a") || fail "readelf cannot read $a"
  ! grep -F '.llvmbc' <<<"$sections" >/dev/null || fail "$a still carries LLVM bitcode (.llvmbc)"
done

# ------------------------------------------------------------------ CLI
if full; then
  step "CLI: static musl binaries; aarch64 under qemu-aarch64-static"
  for t in x86_64 aarch64; do
    bin="$dist/flakeid-$version-$t-unknown-linux-musl"
    desc=$(file -b "$bin")
    has "$desc" "statically linked" "$(basename "$bin")"
    [ $t = aarch64 ] && has "$desc" "ARM aarch64" "$(basename "$bin")"
  done
  host=$(as_user "$dist/flakeid-$version-x86_64-unknown-linux-musl" decode 910499571847892992)
  arm=$(as_user qemu-aarch64-static "$dist/flakeid-$version-aarch64-unknown-linux-musl" decode 910499571847892992)
  for line in "time        2017-09-20T13:43:08.849Z" "datacenter  17" "worker      25" "sequence    0" "base62      15G63YLn9Ae"; do
    has "$arm" "$line" "the aarch64 CLI's decode of the seed's worked example"
  done
  [ "$arm" = "$host" ] || fail "aarch64 and x86_64 CLIs disagree: $arm / $host"
  [ "$(as_user qemu-aarch64-static "$dist/flakeid-$version-aarch64-unknown-linux-musl" --version)" = "flakeid $version" ] ||
    fail "the aarch64 CLI's version"
  echo "$arm" | sed 's/^/   /'
else
  step "CLI: the static x86_64 musl binary"
  bin="$dist/flakeid-$version-x86_64-unknown-linux-musl"
  has "$(file -b "$bin")" "statically linked" "$(basename "$bin")"
  host=$(as_user "$bin" decode 910499571847892992)
  for line in "time        2017-09-20T13:43:08.849Z" "datacenter  17" "worker      25" "sequence    0" "base62      15G63YLn9Ae"; do
    has "$host" "$line" "the CLI's decode of the seed's worked example"
  done
  [ "$(as_user "$bin" --version)" = "flakeid $version" ] || fail "the CLI's version"
  echo "$host" | sed 's/^/   /'
fi

step "every artifact installed and ran"
