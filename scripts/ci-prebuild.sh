#!/usr/bin/env bash
# make ci's longest builds, in the background while the suites that mostly wait
# run (scripts/ci-prebuild.sh start ... wait; the CI_SUITES table in the Makefile):
#   - the PostgreSQL extension's release build and its .deb (make deb-postgres, for
#     test-postgres), whose fat-LTO tail runs on one core;
#   - the release CLI that test-serve-abuse attacks (make serve-release);
#   - the static musl CLI (scripts/dist.sh cli, for test-artifacts);
#   - then the extension's packages for the other PostgreSQL majors make ci tests
#     (make deb-postgres-ci-majors, for test-postgres-ci-majors): each reuses the
#     first's dependencies, so it is bindgen, pgrx and the extension again.
# The suites in between (test-lease ... test-faults) mostly wait and leave a core
# idle. The builds run as SCHED_IDLE (chrt --idle), with idle I/O priority where the
# disk's scheduler has one: a CPU only when no test wants one. Not from the start of
# make ci, beside make test's compiling suites: tried, lint and test-rust then took
# far longer with the same CPU time (docs/performance.md, "Where the time goes").
# No cargo in the foreground waits for their locks: the extension and the
# static CLI build in target directories of their own (bindings/postgres/target,
# target/static-cli), and the release CLI in target/release, whose lock (cargo locks
# each profile's directory) nothing in the foreground takes before
# test-serve-abuse; the suites that need them later find them built.
#   start   launch `run` (a session of its own; its log in target/ci-prebuild/log)
#   wait    wait for it, print its log, exit with its status
#   wait STEP  wait for one step (cli, deb-postgres, serve-release, ci-majors)
#   stop    kill it if it still runs (scripts/run-suites.sh, when a suite fails)
set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/.."
dir=target/ci-prebuild
make=${MAKE:-make}
# The background build's pid, if it still runs (a pid reused since by another
# process does not count: its command line must be this script's build).
running() {
  local pid cmd
  pid=$(cat "$dir/pid" 2>/dev/null) || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *"ci-prebuild.sh run"* ]] || return 1
  echo "$pid"
}

case ${1:-} in
  start)
    bash "$self" stop
    rm -rf "$dir" && mkdir -p "$dir"
    # Its own make, not a part of the one that started it (whose jobserver ends with it).
    unset MAKEFLAGS MFLAGS MAKELEVEL CARGO_MAKEFLAGS
    setsid chrt --idle 0 ionice -c 3 bash "$self" run </dev/null >"$dir/log" 2>&1 &
    echo $! > "$dir/pid"
    echo "ci-prebuild: started (pid $!, SCHED_IDLE): scripts/dist.sh cli beside make deb-postgres, serve-release, deb-postgres-ci-majors; log $dir/log"
    ;;
  run)
    # The work itself (start runs it), with its CPU seconds (bash's `times`, in this
    # shell: the children's user and system time) and status at the end.
    # Two chains side by side, so that one's single-core tail (fat LTO, one codegen
    # unit: the extension's and the static CLI's last minute or two) leaves the
    # other core to the other: the static CLI; the extension's .deb (first: make ci
    # waits for it alone, `wait deb-postgres`, and runs test-postgres while the rest
    # builds), the release CLI, then the other majors' packages (which reuse the
    # first's dependencies, and take the extension's target directory's lock: not
    # while test-postgres's own `make deb-postgres` looks at it, at its start).
    # Each step leaves $dir/done-STEP.
    started=$SECONDS
    rc=0 cli_rc=0
    step() { "${@:2}" && touch "$dir/done-$1"; }
    step cli env FLAKEID_DIST_HOST=1 bash scripts/dist.sh cli >"$dir/cli.log" 2>&1 &
    cli=$!
    step deb-postgres "$make" --no-print-directory deb-postgres \
      && step serve-release "$make" --no-print-directory serve-release \
      && step ci-majors "$make" --no-print-directory deb-postgres-ci-majors || rc=$?
    wait "$cli" || cli_rc=$?
    cat "$dir/cli.log"
    [ "$rc" != 0 ] || rc=$cli_rc
    times >"$dir/times"
    cpu=$(awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%d", s }' "$dir/times")
    echo "ci-prebuild: exit $rc after $((SECONDS - started)) s, $cpu s of CPU"
    echo "$rc" >"$dir/status"
    ;;
  wait)
    # `wait STEP`: until that step is done (its log comes with the last wait);
    # `wait`: until every step is, then its log and status.
    [ -f "$dir/pid" ] || [ -f "$dir/status" ] || { echo "ci-prebuild: not started (scripts/ci-prebuild.sh start)" >&2; exit 2; }
    t0=$SECONDS
    if [ -n "${2:-}" ]; then
      while [ ! -f "$dir/done-$2" ] && running >/dev/null; do sleep 1; done
      if [ -f "$dir/done-$2" ]; then echo "ci-prebuild: waited $((SECONDS - t0)) s for $2"; exit 0; fi
      echo "ci-prebuild: ended before $2 was done; its log:"
    else
      while running >/dev/null; do sleep 1; done
      echo "ci-prebuild: waited $((SECONDS - t0)) s for it; its log:"
    fi
    rm -f "$dir/pid"
    sed 's/^/  /' "$dir/log"
    [ -f "$dir/status" ] || { echo "ci-prebuild: ended without a status (killed?)" >&2; exit 1; }
    [ -z "${2:-}" ] || exit 1
    exit "$(cat "$dir/status")"
    ;;
  stop)
    if pid=$(running); then
      # setsid made it a process group leader: the group is every build under it.
      kill -TERM -- "-$pid" 2>/dev/null || true
      echo "ci-prebuild: stopped"
    fi
    rm -f "$dir/pid"
    ;;
  *)
    echo "usage: scripts/ci-prebuild.sh start|wait|stop" >&2
    exit 2
    ;;
esac
