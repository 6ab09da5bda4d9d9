#!/usr/bin/env bash
# `make test`, `make ci`, `make release-check`: runs each suite of the tier (the
# tables in the Makefile) in turn, stops at the first that fails, and ends with each
# one's wall time and CPU time (user + system of everything it ran), so a slow CI
# run says where it went. On a busy machine wall time grows and CPU time stays: the
# CPU seconds divided by the cores is what the suite costs on an idle one.
set -uo pipefail
make=${MAKE:-make}
started=$SECONDS
done_=()
cpu_file=$(mktemp)
# make ci's background builds (scripts/ci-prebuild.sh) end with the run that started
# them, also when a suite fails or the run is interrupted.
trap 'rm -f "$cpu_file"; bash "$(dirname "$0")/ci-prebuild.sh" stop' EXIT
cpu() { # sets CPU: CPU seconds used so far by this script's finished children
  # `times` in this shell (a pipe or $(...) would run it in a subshell, which has no
  # finished children): its second line is the children's user and system time.
  times > "$cpu_file"
  CPU=$(awk 'END { s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%d", s }' "$cpu_file")
}
report() {
  local line
  printf '%-22s %7s %7s\n' "suite" "wall s" "cpu s"
  for line in "${done_[@]}"; do printf '  %-20s %7d %7d\n' ${line}; done
  cpu
  printf '  %-20s %7d %7d\n' total $((SECONDS - started)) "$CPU"
}
for t in "$@"; do
  t0=$SECONDS
  cpu
  c0=$CPU
  "$make" --no-print-directory "$t"
  rc=$?
  cpu
  done_+=("$t $((SECONDS - t0)) $((CPU - c0))")
  # Each as it ends too (a run that is cut short still says where its time went).
  printf '== %s: %d s wall, %d s cpu (exit %d)\n' "$t" $((SECONDS - t0)) $((CPU - c0)) $rc
  if [ $rc -ne 0 ]; then
    report
    echo "$t FAILED (exit $rc)" >&2
    exit $rc
  fi
done
report
echo "every suite passed ($*)"
