#!/usr/bin/env bash
# The setup scripts' one way to install Debian packages: a no-op without packages;
# otherwise root and apt-get are required (a clear failure naming the caller and
# the packages if not), then a quiet apt-get update + install without recommends.
#   usage: scripts/apt-install.sh CALLER [PACKAGE ...]
set -euo pipefail
who=$1
shift
[ $# -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "$who: cannot install $* (not root or no apt-get)" >&2
  exit 1
fi
echo "$who: installing $*"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "$@" >/dev/null
