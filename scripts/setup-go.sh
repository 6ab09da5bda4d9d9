#!/usr/bin/env bash
# What `make test-go` needs: Go 1.24+ (go/go.mod; runtime.AddCleanup) and
# a C compiler for cgo. Idempotent, non-interactive. Debian 12 packages Go 1.19 only,
# so a machine without a newer go (the project's have /usr/local/go) gets a clear
# failure rather than an install. The Go modules of go/bench (the peers) come from
# the module proxy when the bench first runs.
set -euo pipefail
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
bash "$(dirname "$0")/apt-install.sh" setup-go "${need[@]}"
go=$(command -v go || true)
[ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; }
if [ -z "$go" ]; then
  echo "setup-go: no go on PATH or in /usr/local/go (Go 1.24+ needed)" >&2
  exit 1
fi
v=$("$go" env GOVERSION)
minor=$(sed -n 's/^go1\.\([0-9]*\).*/\1/p' <<<"$v")
if [ "${minor:-0}" -lt 24 ]; then
  echo "setup-go: $v is too old (Go 1.24+ needed)" >&2
  exit 1
fi
[ "$("$go" env CGO_ENABLED)" = 1 ] || { echo "setup-go: cgo is disabled (CGO_ENABLED=0)" >&2; exit 1; }

# `setup-go.sh --release` (make release-check-go): also what builds and runs the
# linux/arm64 flavour on this machine: Debian's aarch64 cross compiler (cgo's CC) and
# qemu-user-static.
if [ "${1:-}" = --release ]; then
  need=()
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
  command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
  bash "$(dirname "$0")/apt-install.sh" setup-go "${need[@]}"
fi
