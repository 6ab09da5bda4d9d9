#!/usr/bin/env bash
# The C suite's one build command, for every platform: make test-c (Linux, with
# ASan + UBSan), scripts/test-windows.sh (mingw-w64, run under Wine) and the native
# CI jobs (macOS, Windows) call it; a Mac or Windows contributor runs it the same way.
#   CC=cc tests/c/build.sh OUT [FLAGS ...] LIBRARY [FLAGS ...]
# compiles the suite's sources (the list is here) with the project's warnings
# against include/flakeid.h into OUT, linked with LIBRARY (libflakeid.a for the
# static build; `-L<dir> -lflakeid` or flakeid.dll.a for the shared one) and the
# caller's FLAGS. A static library gets the system libraries it needs beside it
# (scripts/native-libs.sh, for the OS CC targets). Then: OUT tests/vectors runs it
# (its last line: `ok: N checks passed, 0 failed`). Relative paths are the
# repository's root's: it runs there (relative, the paths suit every platform's
# compiler, Git Bash's MinGW gcc included).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: CC=cc tests/c/build.sh OUT [FLAGS ...] LIBRARY [FLAGS ...]" >&2; exit 2; }
out=$1
shift
cc=${CC:-cc}
src=(tests/c/main.c tests/c/test_*.c tests/c/json.c)
flags=(-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
  -Iinclude -Itests/c)
case $("$cc" -dumpmachine) in
  *mingw* | *windows*) os=windows
    # C99 printf formats (PRIu64) instead of msvcrt's.
    flags+=(-D__USE_MINGW_ANSI_STDIO=1) ;;
  *apple* | *darwin*) os=darwin ;;
  *) os=linux ;;
esac
libs=()
for a in "$@"; do
  case $a in
    *.dll.a) ;;
    *.a) read -ra libs < <(bash scripts/native-libs.sh "$os") ;;
  esac
done
set -x
"$cc" "${flags[@]}" "${src[@]}" "$@" "${libs[@]}" -o "$out"
