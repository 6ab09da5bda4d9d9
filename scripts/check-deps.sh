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
# The crates `cargo tree ARGS` lists, one line each (name, version, and what -f adds).
tree_crates() {
  "$cargo" tree --locked -q --prefix none "$@" | sed -e 's/ (\*)$//' -e 's/ (proc-macro)$//' | LC_ALL=C sort -u
}

# crate  budget  why
budgets="
flakeid-core        2   the engine and libc
flakeid-c           3   + the C glue
flakeid-python     13   + pyo3 (4 crates) and its macros' syn, quote, proc-macro2, heck, once_cell
"
while read -r crate budget _; do
  [ -n "$crate" ] || continue
  n=$(tree_crates -e normal -p "$crate" --no-default-features --no-dedupe | wc -l)
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

# The C library, the wheel and the Node addon build in one target directory with one
# profile (dist), so they share every dependency they select the same features of;
# one feature more in one of them builds that crate again for it, and everything
# above it (the lease stack: tonic, tokio-postgres, flakeid-lease-net) in each.
# bindings/c and bindings/python carry the features napi and pyo3 select (the
# workspace's Cargo.toml, beside futures).
features() { tree_crates -p "$1" -f '{p}|{f}' -e normal,build --target x86_64-unknown-linux-gnu; }
c=$(features flakeid-c)
aligned=1
for b in flakeid-python flakeid-node; do
  diff=$(LC_ALL=C join -t'|' <(echo "$c") <(features "$b") | awk -F'|' '$2 != $3')
  if [ -n "$diff" ]; then
    echo "check-deps: flakeid-c and $b select different features of (crate|flakeid-c's|$b's):" >&2
    echo "$diff" >&2
    echo "  so each builds them, and what is above them, again: add the features to bindings/c and bindings/python" >&2
    status=1 aligned=0
  fi
done
[ $aligned -eq 0 ] || echo "check-deps: the C library, the wheel and the addon select the same features of what they share"
exit $status
