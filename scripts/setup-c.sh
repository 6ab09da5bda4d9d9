#!/usr/bin/env bash
# What `make test-c` needs beyond Rust: a C compiler with AddressSanitizer, make,
# pkg-config, cmake (the installed CMake package is checked too). A no-op when
# present. (cbindgen is a pinned dev-dependency of bindings/c, fetched by cargo; no
# CLI to install.)
set -euo pipefail
need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || need+=(make)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
if [ ${#need[@]} -eq 0 ]; then
  # The compiler is there: can it build and run an ASan program?
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo 'int main(void){return 0;}' > "$tmp/a.c"
  if ! cc -fsanitize=address,undefined "$tmp/a.c" -o "$tmp/a" >/dev/null 2>&1 || ! "$tmp/a"; then
    need+=(gcc libc6-dev)
  fi
fi
bash "$(dirname "$0")/apt-install.sh" setup-c "${need[@]}"
