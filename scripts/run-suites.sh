#!/usr/bin/env bash
# `make test`, `make ci`, `make release-check`: runs each suite of the tier (the tables
# in the Makefile) in turn, stops at the first
# that fails, and ends with each one's wall time, so a slow CI run says where it went.
set -uo pipefail
make=${MAKE:-make}
started=$SECONDS
done_=()
report() {
  local line
  echo "wall time per suite"
  for line in "${done_[@]}"; do printf '  %-22s %5d s\n' ${line}; done
  printf '  %-22s %5d s\n' total $((SECONDS - started))
}
for t in "$@"; do
  t0=$SECONDS
  "$make" --no-print-directory "$t"
  rc=$?
  done_+=("$t $((SECONDS - t0))")
  if [ $rc -ne 0 ]; then
    report
    echo "$t FAILED (exit $rc)" >&2
    exit $rc
  fi
done
report
echo "every suite passed ($*)"
