#!/usr/bin/env bash
# A fresh machine, for measuring `make test` the way a newcomer meets it, on a machine
# that has run the project before (docs/development.md, "make test on a fresh machine").
#   sudo scripts/fresh-machine.sh SINCE [DIR] [COMMAND...]
# SINCE is when this machine's own start-up work ended, after boot (the platform
# installs and updates some tools then: apt's history and the ctime of
# /usr/lib/node_modules/npm show it): everything installed after it is taken away
# again, in an overlay of / (the real root is untouched):
#   - Debian packages that apt's history shows installed since (purged, with what they
#     pulled in);
#   - rustup's other toolchains, targets and components (the image's toolchains keep
#     the host target and cargo, clippy, rustfmt, rust-docs);
#   - every other file made since under /root, /usr/local, /opt, /srv and
#     /usr/lib/node_modules: caches of cargo, Go, npm, pip and Maven, tools the
#     project installed, Wine's prefix, pgrx's PostgreSQL builds.
# Kept: what the platform writes at each session's start (shell profiles, git and npm
# settings, its tools in /usr/local/bin), and the network (the chroot shares it, so
# the registries answer as they do for CI). Then COMMAND (default: a clone of this
# checkout's HEAD, `make test` in it, and its wall time) runs in a chroot of the
# overlay. DIR (default /work/fresh) holds a loop-mounted ext4 image for the overlay's
# upper layer: overlayfs takes no upper layer on the file system of its lower one.
# Needs root, overlayfs with redirect_dir (rustup renames directories), a loop device.
set -euo pipefail
since=${1:?usage: scripts/fresh-machine.sh SINCE [DIR] [COMMAND...]}
dir=${2:-/work/fresh}
shift $(($# < 2 ? $# : 2))
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$dir/root

unmount() {
  local m
  for m in dev/shm dev/pts dev sys proc ""; do
    ! mountpoint -q "$root/$m" || umount "$root/$m"
  done
}
unmount
mkdir -p "$dir/layer" "$root"
! mountpoint -q "$dir/layer" || umount "$dir/layer"
rm -f "$dir/layer.img"
truncate -s 80G "$dir/layer.img"
mkfs.ext4 -q -F "$dir/layer.img"
mount -o loop "$dir/layer.img" "$dir/layer"
mkdir -p "$dir/layer/upper" "$dir/layer/work"
mount -t overlay overlay -o "lowerdir=/,upperdir=$dir/layer/upper,workdir=$dir/layer/work,redirect_dir=on" "$root"
for m in proc sys dev dev/pts dev/shm; do mount --bind "/$m" "$root/$m"; done

# Debian packages installed since SINCE, by apt's history (with their dependencies).
python3 - "$since" >"$root/fresh-purge" <<'EOF'
import re, sys
since = tuple(sys.argv[1].split())
names = set()
for entry in open("/var/log/apt/history.log").read().split("\n\n"):
    m = re.search(r"Start-Date: (\S+)\s+(\S+)", entry)
    if m and (m.group(1), m.group(2)) > since:
        for line in entry.splitlines():
            if line.startswith("Install: "):
                names.update(re.findall(r"(\S+?):\S+ \(", line[len("Install: "):]))
print(" ".join(sorted(names)))
EOF

chroot "$root" env SINCE="$since" /bin/bash -s <<'EOF'
set -u
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2046 # one word per package
apt-get purge -y -qq $(cat /fresh-purge) >/dev/null && apt-get autoremove --purge -y -qq >/dev/null && apt-get clean
echo "fresh-machine: purged $(wc -w </fresh-purge) Debian packages (and what they pulled in)"
for tc in $(rustup toolchain list | sed 's/ .*//'); do
  case $tc in stable-* | nightly-* | "$(rustup run stable rustc --version | cut -d' ' -f2)"-*) ;; *) rustup toolchain uninstall "$tc" >/dev/null ;; esac
done
for tc in stable nightly; do
  for t in $(rustup target list --installed --toolchain $tc | grep -vx x86_64-unknown-linux-gnu); do
    rustup target remove --toolchain $tc "$t" >/dev/null
  done
  for c in llvm-tools rust-src miri rust-analyzer; do
    rustup component remove --toolchain $tc $c >/dev/null 2>&1 || true
  done
done
keep=(-path /root/.rustup -o -path /root/.bashrc -o -path /root/.profile -o -path /root/.gitconfig
  -o -path /root/.npmrc -o -path /root/.pyenv/shims -o -path /usr/local/bin)
for d in /root /usr/local /opt /srv /usr/lib/node_modules; do
  find "$d" -xdev \( "${keep[@]}" \) -prune -o -newerct "$SINCE" ! -type d -print0 2>/dev/null | xargs -0 rm -f
  find "$d" -xdev -depth -newerct "$SINCE" -type d -empty -delete 2>/dev/null
done
rm -rf /tmp/* /var/tmp/* /fresh-purge
echo "fresh-machine: $(du -sh /root | cut -f1) left in /root"
EOF

if [ $# -eq 0 ]; then
  set -- /bin/bash -c "git clone -q --no-hardlinks file://$repo /tmp/clone && cd /tmp/clone \
    && git log --oneline -1 && s=\$SECONDS && make test </dev/null; rc=\$?; \
    echo \"fresh-machine: make test exit \$rc in \$((SECONDS - s)) s\"; exit \$rc"
fi
rc=0
chroot "$root" "$@" || rc=$?
unmount
umount "$dir/layer"
rm -f "$dir/layer.img"
exit $rc
