#!/usr/bin/env bash
# Installs what a tier needs on a fresh machine; a no-op when all is present.
#   scripts/bootstrap.sh [test|ci|release]     (default: ci; what .ci/run uses)
# = make setup TIER=<tier>: the setup targets the tier's suites have as prerequisites
# (Makefile: SETUP_test, SETUP_ci, SETUP_release), each in the mk/<language>.mk it serves.
# They run four at a time, the ones that compile first (the Makefile's order): most
# of a cold bootstrap is downloads (apt, rustup, npm, PyPI, Maven), which need no
# CPU, beside two cargo installs and the Node addon's build, which take both cores;
# two at a time, the two compiling setups held both slots and the downloads waited
# for them. apt installs wait for each other on the dpkg lock (scripts/apt-install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:-ci}
case $tier in test | ci | release) ;; *) echo "usage: scripts/bootstrap.sh [test|ci|release]" >&2; exit 2 ;; esac
# A cold run takes about 15 GB in the checkout (target/, dist/) and 5 GB of
# toolchains; say what there is, so a full disk is recognised as such when a step
# later fails with ENOSPC.
df -h . /tmp 2>/dev/null | sed 's/^/bootstrap: /' || true
started=$SECONDS
make --no-print-directory -j "${BOOTSTRAP_JOBS:-4}" --output-sync=target setup TIER="$tier"
echo "bootstrap: make setup TIER=$tier done in $((SECONDS - started)) s"
