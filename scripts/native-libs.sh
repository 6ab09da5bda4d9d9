#!/usr/bin/env bash
# The system libraries a static flakeid library needs beside it, per OS, in one
# generated file: go/native_libs.go (cgo reads its #cgo lines; everything else that
# links libflakeid.a statically reads them through this script: mk/c.mk's
# C_LIBS_PRIVATE and flakeid.pc, tests/c/build.sh, scripts/dist.sh's C SDKs,
# scripts/test-windows.sh and the native CI jobs).
#   scripts/native-libs.sh OS             print OS's libraries (linux, darwin, windows)
#   scripts/native-libs.sh check OS LOG   compare them with the `native-static-libs`
#                                         note rustc wrote into LOG (`cargo rustc -p
#                                         flakeid-c ... -- --print native-static-libs`);
#                                         FLAKEID_REGENERATE_NATIVE_LIBS=1 rewrites the
#                                         file's line instead of failing
# The libraries are rustc's list, each once, less the C runtime (-lc; on macOS
# -lSystem), which every C compiler's driver and cgo's linker bring themselves.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
file=$root/go/native_libs.go
# (A checkout with CRLF line ends, as Windows runners make, reads the same.)
line_of() { tr -d '\r' <"$file" | sed -n "s/^#cgo $1 LDFLAGS: //p"; }
case ${1:-} in
  linux | darwin | windows)
    libs=$(line_of "$1")
    [ -n "$libs" ] || { echo "native-libs: no '#cgo $1 LDFLAGS' line in $file" >&2; exit 1; }
    echo "$libs"
    ;;
  check)
    os=${2:?usage: scripts/native-libs.sh check OS LOG} log=${3:?usage: scripts/native-libs.sh check OS LOG}
    note=$(tr -d '\r' <"$log" | sed -n 's/^note: native-static-libs: //p' | tail -n 1)
    [ -n "$note" ] || { echo "native-libs: no native-static-libs note in $log (was the library built with -- --print native-static-libs?)" >&2; exit 1; }
    # Each library once (rustc repeats one that several crates name), `-framework X`
    # as one, in rustc's order; less the C runtime.
    want=$(awk '{ for (i = 1; i <= NF; i++) { u = $i; if (u == "-framework") u = u " " $(++i)
      if (u != "-lc" && u != "-lSystem" && !seen[u]++) printf "%s%s", (n++ ? " " : ""), u } }' <<<"$note")
    have=$(line_of "$os")
    [ "$want" = "$have" ] && exit 0
    if [ "${FLAKEID_REGENERATE_NATIVE_LIBS:-}" = 1 ]; then
      sed -i.bak "s|^#cgo $os LDFLAGS: .*|#cgo $os LDFLAGS: $want|" "$file" && rm -f "$file.bak"
      echo "native-libs: rewrote the $os line of $file: $want"
      exit 0
    fi
    echo "native-libs: rustc now names for $os: $want" >&2
    echo "native-libs: $file has:            $have" >&2
    echo "native-libs: rerun with FLAKEID_REGENERATE_NATIVE_LIBS=1 to rewrite it, and commit it" >&2
    exit 1
    ;;
  *)
    echo "usage: scripts/native-libs.sh linux|darwin|windows | check OS LOG" >&2
    exit 2
    ;;
esac
