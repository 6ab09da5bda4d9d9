#!/usr/bin/env bash
# The bindings must ask for the same features of every dependency they share, or
# cargo builds that dependency (and everything above it) once per binding, and
# `make dist` compiles tonic, tokio-postgres and etcd-client three times per target.
# crates/workspace-hack keeps them equal; this check fails, naming the dependency,
# when a new dependency or feature makes them drift apart. Run by `make lint`.
# It compares what is compiled for the target (normal dependencies, proc-macros left
# out): each such crate has one feature set per build, so a difference is a rebuild.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in flakeid-python flakeid-node flakeid-c; do
  # "name@version [features]" per line, the bindings themselves left out.
  "$cargo" tree --locked -q -p "$p" --target x86_64-unknown-linux-gnu -e normal,no-proc-macro \
    -f '{p} [{f}]' --prefix none --no-dedupe |
    sed -E -e 's/ \(\*\)$//' -e 's/ \([^)]*\) \[/ [/' -e 's/^([^ ]+) v([^ ]+) /\1@\2 /' |
    grep -vE '^flakeid-(python|node|c)@' | sort -u > "$tmp/$p"
done
status=0
for p in flakeid-node flakeid-c; do
  # Shared dependencies (in both trees) whose features differ.
  diff=$(awk -v other="$p" 'NR == FNR { py[$1] = $2; next }
                            ($1 in py) && py[$1] != $2 { printf "  %s: flakeid-python %s, %s %s\n", $1, py[$1], other, $2 }' \
         "$tmp/flakeid-python" "$tmp/$p")
  if [ -n "$diff" ]; then
    echo "check-shared-deps: flakeid-python and $p build these shared dependencies with different features:" >&2
    echo "$diff" >&2
    echo "  so each is compiled twice per target; add the features to crates/workspace-hack/Cargo.toml" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check-shared-deps: the wheel, the addon and the C library share the build of each of the $(wc -l < "$tmp/flakeid-python") crates under the Python binding"
exit $status
