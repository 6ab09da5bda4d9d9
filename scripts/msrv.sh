#!/usr/bin/env bash
# The published crates and the rust-version each declares (its own manifest's, or
# the workspace's when it inherits it):
#   scripts/msrv.sh list       "crate version" per line
#   scripts/msrv.sh versions   the distinct versions (for make setup-ports, mk/rust.mk)
#   scripts/msrv.sh check      `cargo +<version> check` of each crate (make check-ports)
set -euo pipefail
cd "$(dirname "$0")/.."
CRATES="flakeid-core flakeid-lease-net flakeid-server flakeid-cli"
workspace=$(sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
list() {
  local c v
  for c in $CRATES; do
    v=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "crates/$c/Cargo.toml")
    [ -n "$v" ] || v=$workspace
    # rustup wants a full version: 1.89 -> 1.89.0
    [[ $v == *.*.* ]] || v=$v.0
    echo "$c $v"
  done
}
case ${1:-list} in
  list) list ;;
  versions) list | awk '{print $2}' | sort -u ;;
  check)
    # One `cargo check` per rust-version for the crates that declare it, but
    # flakeid-core alone: it has code for its build without features
    # (cfg(not(feature = "lease")), what wasm builds), which the others turn on.
    # Features only add code to the others (the CLI's code without `serve` is not
    # built with its default features either), so checking them together checks
    # every line each checks alone, and their dependencies once, with one feature
    # set: one by one, flakeid-lease-net's and the server's own features compiled
    # tokio, hyper, tonic and the crates above them again (CONTRIBUTING.md, "Where
    # the time goes").
    list | awk '{ print $2, $1 }' | sort -s -k1,1 | awk '
      $2 == "flakeid-core" { print $1, "-p " $2; next }
      { pk[$1] = pk[$1] " -p " $2 } END { for (v in pk) print v, pk[v] }' |
      while read -r v pkgs; do
        echo "msrv: cargo +$v check $pkgs"
        # Its own target dir: another compiler's artifacts would only churn the main one.
        # shellcheck disable=SC2086 # $pkgs is a list of -p flags
        CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv" cargo "+$v" check --quiet --locked $pkgs
      done
    ;;
  *) echo "usage: scripts/msrv.sh [list|versions|check]" >&2; exit 2 ;;
esac
