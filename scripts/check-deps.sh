#!/usr/bin/env bash
# Dependency weight, checked by `make lint`:
#  * the lean builds (`--no-default-features`: the engine with file leases only)
#    compile at most the crates budgeted here (`cargo tree -e normal`, which counts
#    proc-macro crates and theirs too);
#  * no crate is compiled in two versions for Linux, except the ones listed with
#    the reason (each goes when its cause does; a new one fails here).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
status=0

# crate  budget  why
budgets="
flakeid-core        2   the engine and libc
flakeid-c           3   + the C glue
flakeid-python     13   + pyo3 (4 crates) and its macros' syn, quote, proc-macro2, heck, once_cell
"
while read -r crate budget _; do
  [ -n "$crate" ] || continue
  n=$("$cargo" tree --locked -q -e normal -p "$crate" --no-default-features --prefix none --no-dedupe |
    sed -e 's/ (\*)$//' -e 's/ (proc-macro)$//' | sort -u | wc -l)
  if [ "$n" -gt "$budget" ]; then
    echo "check-deps: the lean build of $crate compiles $n crates, over its budget of $budget:" >&2
    "$cargo" tree --locked -q -e normal -p "$crate" --no-default-features >&2
    status=1
  else
    echo "check-deps: lean $crate: $n crates (budget $budget)"
  fi
done <<<"$budgets"

# name  why (two versions of it are compiled)
allowed="
syn          proc-macros mid-migration: syn 2 under prost-derive, pin-project, tracing-attributes, der_derive; syn 3 under async-trait, clap_derive, pyo3, napi
const-oid    0.9 under x509-cert 0.2 (tokio-postgres-rustls 0.14, the latest), 0.10 under digest 0.11 (sha2, hmac, md-5)
getrandom    0.2 under ring 0.17 (the latest), 0.4 under rand 0.10 (postgres-protocol)
"
dups=$("$cargo" tree --locked -q -d -e normal --workspace --target x86_64-unknown-linux-gnu |
  grep -E '^[a-z0-9_-]+ v' | awk '{print $1}' | sort -u)
for d in $dups; do
  if ! grep -qE "^$d " <<<"$allowed"; then
    echo "check-deps: $d is compiled in two versions (cargo tree -d -i $d); unify them or justify it in scripts/check-deps.sh" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check-deps: duplicate versions: $(echo $dups) (each justified)"
exit $status
