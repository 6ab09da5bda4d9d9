#!/usr/bin/env bash
# The published crates and the rust-version each declares (its own manifest's, or
# the workspace's when it inherits it):
#   scripts/msrv.sh list       "crate version" per line
#   scripts/msrv.sh versions   the distinct versions (for scripts/setup-msrv.sh)
#   scripts/msrv.sh check      `cargo +<version> check` of each crate (make lint)
set -euo pipefail
cd "$(dirname "$0")/.."
CRATES="flakeid-core flakeid-lease-net flakeid-server flakeid-cli"
workspace=$(sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
list() {
  local c v
  for c in $CRATES; do
    v=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "crates/$c/Cargo.toml")
    [ -n "$v" ] || v=$workspace
    # rustup wants a full version: 1.88 -> 1.88.0
    [[ $v == *.*.* ]] || v=$v.0
    echo "$c $v"
  done
}
case ${1:-list} in
  list) list ;;
  versions) list | awk '{print $2}' | sort -u ;;
  check)
    list | while read -r c v; do
      echo "msrv: cargo +$v check -p $c"
      # Its own target dir: another compiler's artifacts would only churn the main one.
      CARGO_TARGET_DIR=target/msrv cargo "+$v" check --quiet --locked -p "$c"
    done
    ;;
  *) echo "usage: scripts/msrv.sh [list|versions|check]" >&2; exit 2 ;;
esac
