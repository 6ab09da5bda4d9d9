#!/usr/bin/env bash
# The one way every setup script installs Debian packages: a no-op without packages;
# otherwise root and apt-get are required (a clear failure naming the caller and
# the packages if not), then a quiet apt-get update (once per hour at most) and an
# install without recommends.
#   usage: scripts/apt-install.sh CALLER [--reinstall] [PACKAGE ... | ./FILE.deb ...]
# Setups may run at once (`make -j setup TIER=ci`): apt-get waits for the dpkg lock
# instead of failing. A dpkg left half-configured (an earlier install that was
# killed; a cold bootstrap hit it once) is repaired first, then the install is
# tried once more after `apt-get --fix-broken install`.
set -euo pipefail
who=$1
shift
opts=()
if [ "${1:-}" = --reinstall ]; then opts+=(--reinstall); shift; fi
[ $# -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "$who: cannot install $* (not root or no apt-get)" >&2
  exit 1
fi
echo "$who: installing $*"
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -qq -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
# A fresh image has no package lists; a stale one (over an hour) may name versions
# the mirror no longer has.
lists=/var/lib/apt/lists
if [ -z "$(find "$lists" -maxdepth 1 -name '*Packages*' -mmin -60 -print -quit 2>/dev/null)" ]; then
  "${apt[@]}" update
fi
repair() {
  echo "$who: repairing the package database (dpkg --configure -a; apt-get --fix-broken install)" >&2
  dpkg --configure -a || true
  "${apt[@]}" -y --no-install-recommends --fix-broken install >/dev/null
}
if ! "${apt[@]}" -y --no-install-recommends "${opts[@]}" install "$@" >/dev/null; then
  repair
  "${apt[@]}" update
  "${apt[@]}" -y --no-install-recommends "${opts[@]}" install "$@" >/dev/null
fi
