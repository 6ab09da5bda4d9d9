#!/usr/bin/env bash
# `make dist`: every release artifact, built on this machine with no toolchain but
# rustup's and PyPI's, directly in dist/:
#   flakeid_engine-<v>-cp39-abi3-manylinux2014_{x86_64,aarch64}.manylinux_2_17_*.whl,
#   flakeid_engine-<v>-cp39-abi3-musllinux_1_2_x86_64.whl, flakeid_engine-<v>.tar.gz (maturin)
#   (every name: tests/docs/artifacts.py, which tests/dist/run.py holds against dist/)
#   flakeid-node-<v>.tgz, flakeid-node-linux-{x64-gnu,arm64-gnu,x64-musl}-<v>.tgz,
#   flakeid-wasm-<v>.tgz                                                   (npm pack)
#   flakeid-<v>-{x86_64,aarch64}-unknown-linux-gnu.tar.gz                  (C SDK)
#   flakeid-<v>-{x86_64,aarch64}-unknown-linux-musl                        (CLI, static)
#   and for x86_64-apple-darwin, aarch64-apple-darwin, x86_64-pc-windows-gnu (parts macos,
#   windows; see macos_dist): macosx / win_amd64 wheels, flakeid-node-{darwin-x64,
#   darwin-arm64,win32-x64-gnu}-<v>.tgz, C SDKs (.tar.gz; .zip for Windows), CLIs
#   SHA256SUMS
# Cross builds link with zig (cargo-zigbuild, also for maturin): glibc 2.17 for the gnu
# targets (manylinux2014), musl for the rest. The version is the workspace's
# (Cargo.toml [workspace.package]) and is stamped into every artifact.
# Usage: scripts/dist.sh [python|node|node-main|wasm|c|cli|macos|windows ...]
#   (default: all but node-main, then SHA256SUMS)
# FLAKEID_DIST_HOST=1 (make ci's test-dist, TIER=ci): only this machine's artifacts, the
# x86_64 glibc wheel, addon and C SDK and the static x86_64 CLI; make release-check
# builds and checks the whole matrix. The wheel, the addon and the C library are then
# built for the host, without zig or --target, exactly as make test's suites build
# them (mk/c.mk's lib-c, `pip install ./python`, node/package.json's napi build), so
# cargo finds them built: the x86_64 glibc 2.17 builds with zig compiled the lease
# stack (fat LTO) three more times in make ci. Their glibc
# floor is this machine's (the wheel: the manylinux tag auditwheel finds); the
# manylinux2014 artifacts are make dist's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

tools="$root/${FLAKEID_DIST_TOOLS:-target/dist-tools}"
export PATH="$tools/bin:$PATH"
out="$root/dist"
stage="$root/target/dist-stage"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$version" ] || { echo "dist: no version in Cargo.toml [workspace.package]" >&2; exit 1; }
# The shipped settings: fat LTO, one codegen unit, stripped (Cargo.toml [profile.dist]).
profile=dist
# Zig caches its compiled C runtimes here, inside target/ (so `cargo clean` resets it).
export ZIG_GLOBAL_CACHE_DIR="$root/target/zig-cache"

host_only=${FLAKEID_DIST_HOST:-0}
# cross TARGET: true when TARGET is left out of a host-only build.
cross() { [ "$host_only" = 1 ] && [[ $1 != x86_64-unknown-linux-gnu* ]]; }
log() { printf '== dist [%4d s]: %s\n' "$SECONDS" "$*"; }

# zig links musl shared objects against a libc stub without a soname, so they need
# "libc.so"; musl systems name their libc libc.musl-<arch>.so.1 (musl's loader maps
# every libc.* name to itself, so both load, but auditwheel's musllinux policy, like
# Alpine's own toolchain, expects the latter). Rename it, as auditwheel repair would.
musl_libc_name() { # file arch
  patchelf --replace-needed libc.so "libc.musl-$2.so.1" "$1"
  readelf -d "$1" | grep "NEEDED.*\[libc.musl-$2.so.1\]" >/dev/null || { echo "dist: patchelf failed on $1" >&2; exit 1; }
}

# Cargo's output folder for a target (strip a zigbuild glibc suffix such as .2.17).
# (CARGO_TARGET_DIR moves it, as it moves cargo's, maturin's and napi's.)
target_dir=${CARGO_TARGET_DIR:-$root/target}
artifact_dir() { echo "$target_dir/${1%.2.17}/$profile"; }

# The environment cargo-zigbuild gives cargo for target $1: the zig wrappers as
# CC_<target>, AR_<target> and the linker, one line per variable. maturin runs with
# it instead of its own --zig, whose wrappers live at another path: with two paths for
# CC, ring's build script reruns and ring, rustls, tonic, etcd-client and everything
# above them were compiled again for every wheel, addon and C library (about twice
# the build time). cargo-zigbuild only sets
# variables and runs $CARGO, so a stand-in that records its environment reads them.
zig_env() {
  local dir
  dir=$(mktemp -d)
  # (For Apple targets cargo-zigbuild first asks `cargo metadata`: the real cargo answers.)
  printf '#!/bin/sh\n[ "$1" = metadata ] && exec "%s" "$@"\nenv > "%s/env"\n' "$(command -v cargo)" "$dir" > "$dir/cargo"
  chmod +x "$dir/cargo"
  CARGO="$dir/cargo" cargo-zigbuild zigbuild --target "$1" >/dev/null
  grep -E '^(CC|CXX|AR|RANLIB|CMAKE_TOOLCHAIN_FILE|CARGO_ZIGBUILD_TARGET)_|^CARGO_TARGET_[A-Z0-9_]+_LINKER=|^(CARGO_TARGET_APPLIES_TO_HOST|CARGO_UNSTABLE_TARGET_APPLIES_TO_HOST|CARGO_ZIGBUILD_TARGET|CARGO_ZIGBUILD_RUSTC_VERSION|__CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS)=' "$dir/env"
  rm -rf "$dir"
}

python_dist() {
  local t compat zt zenv
  for t in x86_64-unknown-linux-gnu:manylinux2014 aarch64-unknown-linux-gnu:manylinux2014 \
           x86_64-unknown-linux-musl:musllinux_1_2; do
    compat=${t#*:}
    t=${t%%:*}
    cross "$t" && continue
    if [ "$host_only" = 1 ]; then
      # As `pip install ./python` builds it (python/pyproject.toml: profile dist,
      # strip); maturin tags it with the manylinux policy auditwheel finds. With make
      # test-python's interpreter when there is one: pyo3's build script reruns when
      # PYO3_PYTHON changes, and pyo3 and the module with it (pip passes the venv's
      # python3, sys.executable).
      local py=python3
      [ -x "$root/python/.venv/bin/python3" ] && py="$root/python/.venv/bin/python3"
      # --target: as make's pip installs ask for it (PIP_BUILD_ENV in the Makefile).
      log "wheel $t (host, $py)"
      (cd python && maturin build --quiet --interpreter "$py" --target "$t" --out "$out")
      continue
    fi
    log "wheel $t ($compat)"
    # glibc 2.17 for manylinux2014, as the addon and the C library (see zig_env).
    zt=$t
    [[ $t == *gnu ]] && zt=$t.2.17
    mapfile -t zenv < <(zig_env "$zt")
    (cd python && env "${zenv[@]}" maturin build --quiet --profile "$profile" --target "$t" \
      --compatibility "$compat" --out "$out")
    if [ "$compat" = musllinux_1_2 ]; then
      local whl unpacked
      whl=$(ls "$out"/flakeid_engine-"$version"-*-musllinux_1_2_x86_64.whl)
      unpacked="$stage/wheel-musl"
      rm -rf "$unpacked"
      python -m wheel unpack --dest "$unpacked" "$whl" >/dev/null
      musl_libc_name "$unpacked/flakeid_engine-$version/flakeid/_flakeid.abi3.so" x86_64
      rm "$whl"
      python -m wheel pack --dest-dir "$out" "$unpacked/flakeid_engine-$version" >/dev/null
      [ -f "$whl" ] || { echo "dist: repacking renamed $whl" >&2; exit 1; }
    fi
  done
  log "sdist"
  (cd python && maturin sdist --out "$out")
}

# One npm package per platform (napi-rs convention: the loader in index.js requires
# @flakeid/node-<platform>), then @flakeid/node with them as optionalDependencies.
node_dist() {
  local spec t plat os cpu libc dir so
  rm -rf "$stage/node"
  mkdir -p "$stage/node"
  for spec in x86_64-unknown-linux-gnu.2.17:linux-x64-gnu:x64:glibc \
              aarch64-unknown-linux-gnu.2.17:linux-arm64-gnu:arm64:glibc \
              x86_64-unknown-linux-musl:linux-x64-musl:x64:musl; do
    IFS=: read -r t plat cpu libc <<<"$spec"
    cross "$t" && continue
    dir="$stage/node/$plat"
    mkdir -p "$dir"
    if [ "$host_only" = 1 ]; then
      # node/package.json's own napi build (as make test-node runs it), writing into
      # the stage instead of node/.
      log "node addon ${t%.2.17} (host)"
      local napi
      napi=$(node -p "require('./node/package.json').scripts.install")
      [[ $napi == *"--output-dir . "* ]] || { echo "dist: node/package.json's install script has no '--output-dir .': $napi" >&2; exit 1; }
      (cd node && eval "${napi/--output-dir . /--output-dir "$dir" }") >/dev/null
      [ -f "$dir/flakeid.$plat.node" ] || { echo "dist: napi build wrote no $dir/flakeid.$plat.node" >&2; exit 1; }
      rm -f "$dir/index.js" "$dir/index.d.ts"
    else
    log "node addon $t"
    # A musl addon is loaded by node with dlopen, so it links libc dynamically; the
    # same flag maturin sets for the musllinux wheel (so the two share their deps).
    local rustflags=${RUSTFLAGS:-}
    [[ $t == *musl ]] && rustflags="$rustflags -C target-feature=-crt-static"
    RUSTFLAGS=$rustflags cargo zigbuild --quiet --profile "$profile" -p flakeid-node --target "$t"
    so="$(artifact_dir "$t")/libflakeid_node.so"
    cp "$so" "$dir/flakeid.$plat.node"
    [[ $t == *musl ]] && musl_libc_name "$dir/flakeid.$plat.node" x86_64
    fi
    node_platform_package "$dir" "$plat" linux "$cpu" "$libc"
  done

  node_main_package
}

# @flakeid/node itself: the JS, with every platform package as an optionalDependency.
node_main_package() {
  local dir
  log "@flakeid/node"
  dir="$stage/node/main"
  mkdir -p "$dir"
  cp node/loader.js node/index.d.ts node/flake-idgen.js node/flake-idgen.d.ts node/README.md \
    LICENSE-MIT LICENSE-APACHE "$dir/"
  # The JSON and ORM helpers (@flakeid/node/json, /drizzle, ...; their peers optional).
  mkdir -p "$dir/frameworks" && cp node/frameworks/*.js node/frameworks/*.d.ts "$dir/frameworks/"
  # napi's loader checks the platform package's version against its own.
  sed "s/bindingPackageVersion !== '[^']*'/bindingPackageVersion !== '$version'/g" node/index.js > "$dir/index.js"
  # node/package.json without the build-from-source hooks and dev tooling.
  node - "$dir/package.json" "$version" <<'JS'
const fs = require('node:fs')
const [out, version] = process.argv.slice(2)
const pkg = JSON.parse(fs.readFileSync('node/package.json', 'utf8'))
pkg.version = version
delete pkg.scripts
delete pkg.devDependencies
delete pkg.napi
pkg.files = pkg.files.filter((f) => f !== '*.node').concat(['LICENSE-MIT', 'LICENSE-APACHE'])
pkg.dependencies = { '@flakeid/wasm': version }
pkg.optionalDependencies = Object.fromEntries(
  ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-gnu'].map((p) => [
    `@flakeid/node-${p}`,
    version,
  ]),
)
fs.writeFileSync(out, JSON.stringify(pkg, null, 2) + '\n')
JS
  npm pack --silent "$dir" --pack-destination "$out" >/dev/null
}

wasm_dist() {
  log "@flakeid/wasm"
  FLAKEID_WASM_TARGET_DIR="$root/target/wasm-build" bash bindings/wasm/build.sh
  npm pack --silent bindings/wasm/pkg --pack-destination "$out" >/dev/null
}

# The C SDK: flakeid-<v>-<target>/{include,lib/{libflakeid.so,.so.0,.a,pkgconfig,cmake/flakeid}}.
c_dist() {
  local t name sdk libdir objcopy libs
  objcopy="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-objcopy"
  for t in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
    cross "$t" && continue
    if [ "$host_only" = 1 ]; then
      # make test-c's own build (mk/c.mk's lib-c), so cargo finds it built.
      log "C SDK $t (host: make lib-c)"
      make -s --no-print-directory lib-c C_PROFILE="$profile" CARGO="cargo --quiet"
    else
      log "C SDK $t"
      # Only the C crate types: flakeid-c is also an rlib (for its Rust tests), which
      # would make cargo build every dependency again with machine code beside the
      # bitcode that LTO needs, instead of reusing the wheel's and the addon's.
      cargo-zigbuild rustc --quiet --profile "$profile" -p flakeid-c --lib --crate-type cdylib,staticlib \
        --target "$t.2.17"
    fi
    libs=$(artifact_dir "$t")
    name="flakeid-$version-$t"
    sdk="$stage/c/$name"
    rm -rf "$sdk"
    libdir="$sdk/lib"
    mkdir -p "$sdk/include" "$libdir/pkgconfig" "$libdir/cmake/flakeid"
    cp include/flakeid.h "$sdk/include/"
    cp "$libs/libflakeid.so" "$libdir/"
    # Without the LLVM bitcode that Rust's own objects carry for LTO (.llvmbc,
    # .llvmcmd; C linkers ignore it) and without debug info, like the stripped .so:
    # 31 MB -> 22 MB.
    "$objcopy" --strip-debug --remove-section=.llvmbc --remove-section=.llvmcmd \
      "$libs/libflakeid.a" "$libdir/libflakeid.a"
    ln -s libflakeid.so "$libdir/libflakeid.so.0"
    sed -e 's|^prefix=@PREFIX@|prefix=${pcfiledir}/../..|' -e "s|@VERSION@|$version|" \
      -e "s|@LIBS_PRIVATE@|$(bash scripts/native-libs.sh linux) -lc|" \
      bindings/c/flakeid.pc.in > "$libdir/pkgconfig/flakeid.pc"
    cp bindings/c/cmake/flakeidConfig.cmake "$libdir/cmake/flakeid/"
    sed "s/@VERSION@/$version/" bindings/c/cmake/flakeidConfigVersion.cmake.in \
      > "$libdir/cmake/flakeid/flakeidConfigVersion.cmake"
    cp LICENSE-MIT LICENSE-APACHE "$sdk/"
    cp examples/c/example.c examples/c/CMakeLists.txt "$sdk/"
    tar -C "$stage/c" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
  done
}

# The static CLIs build in a target directory of their own: nothing else builds for
# musl, so they share only build scripts and proc-macros with the rest (those are
# built a second time), and make ci builds the x86_64 one in the background
# (the Makefile's CI_BACKGROUND: make dist-cli) while suites in the foreground use target/'s locks.
cli_dist() {
  local t features
  for t in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
    [ "$host_only" = 1 ] && [ "$t" != x86_64-unknown-linux-musl ] && continue
    log "CLI $t"
    # jemalloc on x86_64 only (crates/flakeid-cli/Cargo.toml says why), for 48-bit
    # addresses: its configure runs a program to read the CPU's address width, which a
    # cross build cannot, and then assumes 57 bits, with which its radix tree of pages
    # takes 16 bytes a page in three levels instead of 8 in two (docs/service.md,
    # "Memory budget"). Linux maps above 47 bits only for a process that asks (an
    # mmap hint), which neither jemalloc nor musl does.
    features=()
    [ "$t" = x86_64-unknown-linux-musl ] && features=(--features jemalloc)
    CARGO_TARGET_DIR="$target_dir/static-cli" JEMALLOC_SYS_WITH_LG_VADDR=48 \
      cargo zigbuild --quiet --profile "$profile" -p flakeid-cli --bin flakeid --target "$t" "${features[@]}"
    cp "$target_dir/static-cli/$t/$profile/flakeid" "$out/flakeid-$version-$t"
  done
}

# ------------------------------------------------------------------ macOS and Windows
# `scripts/dist.sh macos` (make dist-macos) and `windows` (make dist-windows): for
# x86_64-apple-darwin, aarch64-apple-darwin and x86_64-pc-windows-gnu, each package's
# artifact: the abi3 wheel, the npm platform package, the C SDK (which make dist-go and
# make dist-java take the Go module's static libraries and the jar's natives from) and
# the CLI. Names: RELEASING.md.
#
# macOS from Linux links with zig (cargo-zigbuild's environment, as the Linux cross
# builds) and WITHOUT the network lease stores: redis-rs's rustls TLS needs
# rustls-native-certs, which on macOS links Apple's Security and CoreFoundation
# frameworks, and no macOS SDK (their link stubs) can be had here. On a Mac (the
# release runners, `uname -s` = Darwin) the same part builds natively with every
# feature, as users get it (RELEASING.md, "macOS"). FLAKEID_DIST_MACOS_LEAN=1 forces
# the lean build there too.
on_mac() { [ "$(uname -s)" = Darwin ]; }
macos_lean() { [ "${FLAKEID_DIST_MACOS_LEAN:-0}" = 1 ] || ! on_mac; }
# cargo for a macOS target: in cargo-zigbuild's environment for it from Linux
# ($zenv, set by macos_dist: the one maturin builds the wheel in, so the wheel, the
# addon and the C library share their dependency builds), Apple's toolchain on a Mac.
cargo_mac() { env "${zenv[@]}" cargo "$@"; }

# What the C static library needs beside it (flakeid.pc's Libs.private, CMake's
# INTERFACE_LINK_LIBRARIES): go/native_libs.go's (scripts/native-libs.sh); the lean
# macOS build (no network lease stores, so no Apple frameworks) needs only these two.
static_libs() { # target
  case $1 in
    *-apple-darwin)
      if macos_lean; then echo "-liconv -lm"; else bash scripts/native-libs.sh darwin; fi ;;
    *-windows-gnu) bash scripts/native-libs.sh windows ;;
  esac
}

# One npm platform package: $dir holds the .node; writes package.json and packs it.
node_platform_package() { # dir plat os cpu libc(or "")
  local dir=$1 plat=$2 os=$3 cpu=$4 libc=$5 libc_line="" for="$3 $4"
  [ -n "$libc" ] && libc_line="\"libc\": [\"$libc\"]," for="$os $cpu ($libc)"
  cat > "$dir/package.json" <<JSON
{
  "name": "@flakeid/node-$plat",
  "version": "$version",
  "description": "The prebuilt flakeid addon for $for; installed by @flakeid/node",
  "license": "MIT OR Apache-2.0",
  "repository": { "type": "git", "url": "git+https://github.com/flakeid/flakeid.git", "directory": "node" },
  "main": "flakeid.$plat.node",
  "files": ["flakeid.$plat.node", "LICENSE-MIT", "LICENSE-APACHE"],
  "os": ["$os"],
  "cpu": ["$cpu"],${libc_line:+
  $libc_line}
  "engines": { "node": ">=18" }
}
JSON
  cp LICENSE-MIT LICENSE-APACHE "$dir/"
  npm pack --silent "$dir" --pack-destination "$out" >/dev/null
}

# The C SDK's CMake package for a platform: bindings/c/cmake's (written for the ELF
# library) with the library's file names and the static library's needs replaced.
cmake_config() { # target dest
  local libs
  libs=$(static_libs "$1" | python3 -c '
import sys, shlex
w = shlex.split(sys.stdin.read()); out = []; i = 0
while i < len(w):
    if w[i] == "-framework": out.append("-framework " + w[i + 1]); i += 2
    else: out.append(w[i][2:] if w[i].startswith("-l") else w[i]); i += 1
print(";".join(out))')
  case $1 in
    *-apple-darwin)
      sed -e 's|/lib/libflakeid.so"|/lib/libflakeid.dylib"|' \
          -e 's|IMPORTED_SONAME "libflakeid.so.0"|IMPORTED_SONAME "@rpath/libflakeid.dylib"|' \
          -e 's|(libflakeid.so, soname libflakeid.so.0)|(libflakeid.dylib, install name @rpath/libflakeid.dylib)|' \
          -e "s|\"gcc_s;util;rt;pthread;m;dl;c\"|\"$libs\"|" bindings/c/cmake/flakeidConfig.cmake > "$2" ;;
    *-windows-gnu)
      sed -e 's|IMPORTED_LOCATION "${_flakeid_root}/lib/libflakeid.so"|IMPORTED_LOCATION "${_flakeid_root}/bin/flakeid.dll"\n    IMPORTED_IMPLIB "${_flakeid_root}/lib/libflakeid.dll.a"|' \
          -e '/IMPORTED_SONAME/d' \
          -e 's|(libflakeid.so, soname libflakeid.so.0)|(bin/flakeid.dll, import library lib/libflakeid.dll.a)|' \
          -e "s|\"gcc_s;util;rt;pthread;m;dl;c\"|\"$libs\"|" bindings/c/cmake/flakeidConfig.cmake > "$2" ;;
  esac
  ! grep -q 'libflakeid\.so\|gcc_s' "$2" || { echo "dist: $2 still names the ELF library (bindings/c/cmake changed?)" >&2; exit 1; }
}

# A C SDK's common files: header, pkg-config, CMake, licences, the example.
c_sdk_common() { # target sdk
  local libdir="$2/lib"
  mkdir -p "$2/include" "$libdir/pkgconfig" "$libdir/cmake/flakeid"
  cp include/flakeid.h "$2/include/"
  sed -e 's|^prefix=@PREFIX@|prefix=${pcfiledir}/../..|' -e "s|@VERSION@|$version|" \
    -e "s|@LIBS_PRIVATE@|$(static_libs "$1")|" bindings/c/flakeid.pc.in > "$libdir/pkgconfig/flakeid.pc"
  cmake_config "$1" "$libdir/cmake/flakeid/flakeidConfig.cmake"
  sed "s/@VERSION@/$version/" bindings/c/cmake/flakeidConfigVersion.cmake.in \
    > "$libdir/cmake/flakeid/flakeidConfigVersion.cmake"
  cp LICENSE-MIT LICENSE-APACHE examples/c/example.c examples/c/CMakeLists.txt "$2/"
}

llvm_objcopy() { echo "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-objcopy"; }

macos_dist() {
  local spec t plat cpu lean_py=() lean_node=() lean_c=() lean_cli=() zenv=() dir libs name sdk
  # Lean: every default feature but the network lease stores (sealing and the
  # 128-bit family stay: tests/dist/cross.py checks the C SDK's exports and the wheel).
  if macos_lean; then
    lean_py=(--no-default-features --features "seal,uuid7") lean_node=(--no-default-features)
    lean_c=(--no-default-features --features "seal,uuid7") lean_cli=(--no-default-features --features serve)
  fi
  for spec in x86_64-apple-darwin:darwin-x64:x64 aarch64-apple-darwin:darwin-arm64:arm64; do
    IFS=: read -r t plat cpu <<<"$spec"
    libs=$(artifact_dir "$t")
    zenv=()
    on_mac || mapfile -t zenv < <(zig_env "$t")
    on_mac || [ ${#zenv[@]} -gt 0 ] || { echo "dist: cargo-zigbuild gave no environment for $t" >&2; exit 1; }
    log "macOS $t: wheel$(macos_lean && echo ' (lean: no network lease stores)')"
    (cd python && env "${zenv[@]}" maturin build --quiet --profile "$profile" --target "$t" "${lean_py[@]}" --out "$out")
    # (A compiler probe in that environment leaves an empty a.o where maturin runs.)
    [ -s python/a.o ] || rm -f python/a.o
    log "macOS $t: node addon"
    cargo_mac build --quiet --profile "$profile" -p flakeid-node --target "$t" "${lean_node[@]}"
    dir="$stage/node/$plat"
    rm -rf "$dir" && mkdir -p "$dir"
    cp "$libs/libflakeid_node.dylib" "$dir/flakeid.$plat.node"
    node_platform_package "$dir" "$plat" darwin "$cpu" ""
    log "macOS $t: C SDK"
    # The dylib's install name: @rpath/libflakeid.dylib (rustc's is its build path).
    cargo_mac rustc --quiet --profile "$profile" -p flakeid-c --lib --crate-type cdylib,staticlib \
      --target "$t" "${lean_c[@]}" -- -C link-arg=-Wl,-install_name,@rpath/libflakeid.dylib
    name="flakeid-$version-$t"
    sdk="$stage/c/$name"
    rm -rf "$sdk"
    c_sdk_common "$t" "$sdk"
    cp "$libs/libflakeid.dylib" "$sdk/lib/"
    "$(llvm_objcopy)" --strip-debug --remove-section=__LLVM,__bitcode --remove-section=__LLVM,__cmdline \
      "$libs/libflakeid.a" "$sdk/lib/libflakeid.a"
    tar -C "$stage/c" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
    log "macOS $t: CLI"
    cargo_mac build --quiet --profile "$profile" -p flakeid-cli --bin flakeid --target "$t" "${lean_cli[@]}"
    cp "$libs/flakeid" "$out/flakeid-$version-$t"
  done
}

# napi-build links a windows-gnu addon against an import library for node.exe, the
# process that exports N-API (LIBNODE_PATH): made with mingw's dlltool from the
# functions napi-sys declares (the crate the addon calls N-API through).
libnode_import_lib() { # dir
  local sys
  sys=$(cargo metadata --format-version 1 --filter-platform x86_64-pc-windows-gnu 2>/dev/null |
    python3 -c 'import json, sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "napi-sys"))')
  mkdir -p "$1"
  { echo "LIBRARY node.exe"; echo "EXPORTS"
    grep -ohE '\bfn (napi|node_api)_[a-z0-9_]+' "$(dirname "$sys")"/src/*.rs | sed 's/^fn /    /' | sort -u; } > "$1/node.def"
  x86_64-w64-mingw32-dlltool -d "$1/node.def" -D node.exe -l "$1/libnode.dll.a"
  # napi-build only checks that libnode.dll is there; the linker takes libnode.dll.a first.
  cp "$1/libnode.dll.a" "$1/libnode.dll"
}

windows_dist() {
  local t=x86_64-pc-windows-gnu plat=win32-x64-gnu dir libs name sdk
  libs=$(artifact_dir "$t")
  log "Windows $t: wheel"
  (cd python && maturin build --quiet --profile "$profile" --target "$t" --out "$out")
  log "Windows $t: node addon"
  libnode_import_lib "$stage/libnode"
  LIBNODE_PATH="$stage/libnode" cargo build --quiet --profile "$profile" -p flakeid-node --target "$t"
  dir="$stage/node/$plat"
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$libs/flakeid_node.dll" "$dir/flakeid.$plat.node"
  node_platform_package "$dir" "$plat" win32 x64 ""
  log "Windows $t: C SDK"
  cargo rustc --quiet --profile "$profile" -p flakeid-c --lib --crate-type cdylib,staticlib --target "$t"
  name="flakeid-$version-$t"
  sdk="$stage/c/$name"
  rm -rf "$sdk"
  c_sdk_common "$t" "$sdk"
  mkdir -p "$sdk/bin"
  cp "$libs/flakeid.dll" "$sdk/bin/"
  cp "$libs/libflakeid.dll.a" "$sdk/lib/"
  "$(llvm_objcopy)" --strip-debug --remove-section=.llvmbc --remove-section=.llvmcmd \
    "$libs/libflakeid.a" "$sdk/lib/libflakeid.a"
  rm -f "$out/$name.zip"
  (cd "$stage/c" && find "$name" -print | LC_ALL=C sort | TZ=UTC zip -q -X -D "$out/$name.zip" -@)
  log "Windows $t: CLI"
  cargo build --quiet --profile "$profile" -p flakeid-cli --bin flakeid --target "$t"
  cp "$libs/flakeid.exe" "$out/flakeid-$version-$t.exe"
}

parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
  parts=(python node wasm c cli macos windows)
  [ "$host_only" = 1 ] && parts=(python node wasm c cli)
  rm -rf "$out"
fi
mkdir -p "$out"
started=$SECONDS
for p in "${parts[@]}"; do
  case $p in
    python | node | wasm | c | cli | macos | windows) "${p}_dist" ;;
    node-main) node_main_package ;; # only @flakeid/node, without building an addon
    *) echo "dist: unknown part '$p' (python, node, node-main, wasm, c, cli, macos, windows)" >&2; exit 2 ;;
  esac
done
(cd "$out" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum > SHA256SUMS)
log "flakeid $version in dist/ after $((SECONDS - started)) s:"
(cd "$out" && ls -l --time-style=+ | awk 'NR > 1 { printf "   %10d  %s\n", $5, $NF }')
