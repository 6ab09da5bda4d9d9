#!/usr/bin/env bash
# make test-windows: the core's unit and integration tests (with file leases and the
# lease gate: --features lease), built for x86_64-pc-windows-gnu by mingw-w64 and run
# under Wine, in a WINEPREFIX of our own ($CARGO_TARGET_DIR/wine, made by make
# setup-windows, with the ProcessPrng stub of tests/windows/bcryptprimitives.c).
# Then it names every skip: each test the host's build has that the Windows build
# compiles out (cfg(unix) code: fork detection, file leases' flock), each #[ignore]d
# one, and the doc tests, which run on the host only (make test-rust).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
cargo=${CARGO:-cargo}
triple=x86_64-pc-windows-gnu
args=(-p flakeid-core --features lease --lib --tests)
export WINEPREFIX="$target/wine" WINEDEBUG=-all
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=${WINE:-/usr/lib/wine/wine64}
export FLAKEID_STRESS_SECS=${FLAKEID_STRESS_SECS:-0.5}
# Tests built for Windows that test what flakeid does not do there yet, each with why.
skips=(
  "a_leased_generator_reports_its_lease|a file:// lease: file leases are unix-only, refused on Windows by the core's rule"
)
skip_args=()
for s in "${skips[@]}"; do skip_args+=(--skip "${s%%|*}"); done
[ -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ] \
  || { echo "test-windows: no WINEPREFIX with the ProcessPrng stub at $WINEPREFIX: run make setup-windows" >&2; exit 1; }

log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
"$cargo" test --target "$triple" "${args[@]}" -- "${skip_args[@]}" 2>&1 | tee "$log"

# Every test binary prints one summary line; add them up.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^(passed|failed|ignored);?$/) { k = $(i); sub(/;/, "", k); n[k] += $(i-1) } } }
     END { printf "test-windows: %d passed, %d failed, %d ignored under Wine\n", n["passed"], n["failed"], n["ignored"] }' "$log"

# The skips, by name: what the host's build lists and the Windows build does not.
list() { "$cargo" test -q "$@" "${args[@]}" -- --list --format terse 2>/dev/null | sed -n 's/: test$//p' | sort -u; }
list --target "$triple" > "$log.win"
list --target "$(rustc -vV | sed -n 's/^host: //p')" > "$log.host"
skipped=$(comm -23 "$log.host" "$log.win")
echo "test-windows: compiled out on Windows ($(printf '%s' "$skipped" | grep -c . || true)), then the skips:"
printf '%s\n' "$skipped" | sed '/^$/d; s/^/  /'
for s in "${skips[@]}"; do echo "  skipped: ${s%%|*} (${s#*|})"; done
grep -E '^test .* \.\.\. ignored' "$log" | sed 's/^test /  ignored: /; s/ \.\.\. ignored.*//' || true
echo "  the doc tests: run on the host only (make test-rust)"
