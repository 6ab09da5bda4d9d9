#!/usr/bin/env bash
# `make test`, `make ci`, `make release-check`: runs each suite of the tier (the
# tables in the Makefile) in turn, with TIER set (the share of a suite the tier
# runs), stops at the first that fails, and ends with each one's wall time and CPU
# time (user + system of everything it ran), so a slow CI run says where it went. On
# a busy machine wall time grows and CPU time stays: the CPU seconds divided by the
# cores is what the suite costs on an idle one.
#   TIER=ci BACKGROUND='@A B1>S1 B2>S2 | @C B3>S3 | @A S4>S4' run-suites.sh SUITE...
# BACKGROUND (the Makefile's CI_BACKGROUND): chains of make targets run in the
# background, as SCHED_IDLE with idle I/O priority (a CPU only when no test wants
# one); `|` separates chains that run side by side, each running its targets in
# turn, started once the suite of its `@SUITE` has passed (or at once, without one).
# Suite S waits for target B of `B>S` before it starts, fails when B did, and is run
# as `make S BUILT='B...'` (the builds it waited for: its recipe need not make them
# again, which would wait for the locks of the builds still running). A
# suite in a chain (`S>S`: it runs beside the others) is not run again at its turn:
# its log is printed there, and its times are its row; it first waits for the builds
# of other chains it needs (`B>S`). A chain whose first word (after `@SUITE`) is
# `normal` runs at normal priority, for suites that mostly wait (beside a foreground
# suite, SCHED_IDLE would leave them no CPU). The chains end with the run, also when
# a suite fails or the run is interrupted. Logs: target/background/<B>.log.
set -uo pipefail
make=${MAKE:-make}
tier_args=()
[ -z "${TIER:-}" ] || tier_args=("TIER=$TIER")
root=$(cd "$(dirname "$0")/.." && pwd)
bg_dir=${CARGO_TARGET_DIR:-$root/target}/background
started=$SECONDS
done_=()
cpu_file=$(mktemp)
bg_pids=()
in_chain=
[ "${1:-}" != --chain ] || in_chain=1

cpu() { # sets CPU: CPU seconds used so far by this script's finished children
  # `times` in this shell (a pipe or $(...) would run it in a subshell, which has no
  # finished children): its second line is the children's user and system time.
  times > "$cpu_file"
  CPU=$(awk 'END { s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } printf "%d", s }' "$cpu_file")
}

# Starts the chains whose `@SUITE` is $1 (those with none for an empty $1).
start_background() {
  local chain words priority label
  local IFS='|'
  for chain in ${BACKGROUND}; do
    IFS=' '
    # shellcheck disable=SC2206 # a chain is a list of words
    words=($chain)
    if [ "${words[0]}" = "@$1" ]; then
      words=("${words[@]:1}")
    elif [ -n "$1" ] || [ "${words[0]#@}" != "${words[0]}" ]; then
      IFS='|'
      continue
    fi
    priority=(chrt --idle 0 ionice -c 3) label=SCHED_IDLE
    if [ "${words[0]}" = normal ]; then
      words=("${words[@]:1}")
      priority=() label="normal priority"
    fi
    setsid "${priority[@]}" bash "$0" --chain "${words[@]}" </dev/null >>"$bg_dir/chains.log" 2>&1 &
    bg_pids+=($!)
    echo "background: started ${words[*]} ($label; logs in $bg_dir)"
    IFS='|'
  done
}
# Whether suite $1 runs beside the others (`$1>$1` in a chain).
beside() {
  local step
  for step in ${BACKGROUND:-}; do [ "$step" = "$1>$1" ] && return 0; done
  return 1
}
stop_background() {
  local pid
  for pid in "${bg_pids[@]}"; do
    # setsid made each chain a process group leader: the group is every build under it.
    kill -0 "$pid" 2>/dev/null && kill -TERM -- "-$pid" 2>/dev/null && echo "background: stopped chain $pid"
  done
  return 0
}
# The B of each `B>$1` step of BACKGROUND, one a line (`$1>$1`, a suite beside the
# others, names $1 itself).
builds_for() {
  local step
  for step in ${BACKGROUND:-}; do
    [ "$step" != '|' ] && [ "${step#*>}" = "$1" ] && echo "${step%%>*}"
  done
  return 0
}
# Waits for the background builds suite $1 needs; 1 when one failed or its chain ended
# without it. In a chain (a suite beside the others), the builds of the other chains:
# the chains are the main script's children, so it waits for their files only.
wait_background() {
  local b t0=$SECONDS
  for b in $(builds_for "$1"); do
    [ -z "$in_chain" ] || [ "$b" != "$1" ] || continue
    while [ ! -f "$bg_dir/$b.done" ] && [ ! -f "$bg_dir/$b.failed" ] && { [ -n "$in_chain" ] || any_chain_runs; }; do
      sleep 1
    done
    if [ -f "$bg_dir/$b.done" ]; then
      echo "background: $b ran in $(cut -d' ' -f1 "$bg_dir/$b.done") s; $1 waited $((SECONDS - t0)) s for it"
    else
      echo "background: $b failed (or its chain ended without it); its log:" >&2
      sed 's/^/  /' "$bg_dir/$b.log" >&2 2>/dev/null
      return 1
    fi
  done
}
# The other builds suite $1 waits for, as BUILT='B...' for its make.
built_for() {
  local b out=()
  for b in $(builds_for "$1"); do [ "$b" = "$1" ] || out+=("$b"); done
  [ ${#out[@]} -eq 0 ] || echo "BUILT=${out[*]}"
}
any_chain_runs() {
  local pid
  for pid in "${bg_pids[@]}"; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

# One chain of background builds (run by start_background in a session of its own).
if [ -n "$in_chain" ]; then
  shift
  unset MAKEFLAGS MFLAGS MAKELEVEL CARGO_MAKEFLAGS
  rc=0
  for step in "$@"; do
    b=${step%%>*}
    # A suite beside the others: the builds it needs from other chains first.
    if [ "$b" = "${step#*>}" ] && ! wait_background "$b" >"$bg_dir/$b.log" 2>&1; then
      echo "0 0" >"$bg_dir/$b.failed"
      rc=1
      break
    fi
    t0=$SECONDS
    cpu
    c0=$CPU
    built=$(built_for "$b")
    "$make" --no-print-directory -C "$root" "$b" "${tier_args[@]}" ${built:+"$built"} >>"$bg_dir/$b.log" 2>&1 </dev/null
    rc=$?
    cpu
    # Its wall and CPU seconds, in .done or .failed.
    ended="done"
    [ $rc -eq 0 ] || ended="failed"
    echo "$((SECONDS - t0)) $((CPU - c0))" >"$bg_dir/$b.$ended"
    [ $rc -eq 0 ] || break
  done
  rm -f "$cpu_file"
  [ $rc -eq 0 ] && exit 0
  # The steps after the failed one will not run: each is failed too, so that a suite
  # waiting for one in another chain (which sees files only) stops waiting.
  seen=
  for step in "$@"; do
    [ -n "$seen" ] && { echo "not run: $b failed first" >>"$bg_dir/${step%%>*}.log"; echo "0 0" >"$bg_dir/${step%%>*}.failed"; }
    [ "${step%%>*}" = "$b" ] && seen=1
  done
  exit 1
fi

trap 'rm -f "$cpu_file"; stop_background' EXIT
report() {
  local line
  printf '%-22s %7s %7s\n' "suite" "wall s" "cpu s"
  for line in "${done_[@]}"; do printf '  %-20s %7d %7d\n' ${line}; done
  cpu
  printf '  %-20s %7d %7d\n' total $((SECONDS - started)) "$CPU"
  for line in "$bg_dir"/*.done; do
    [ -n "${BACKGROUND:-}" ] && [ -f "$line" ] || continue
    beside "$(basename "$line" .done)" && continue
    printf '  %-20s %7d %7s\n' "$(basename "$line" .done)" "$(cut -d' ' -f1 "$line")" "(background)"
  done
}
if [ -n "${BACKGROUND:-}" ]; then
  rm -rf "$bg_dir" && mkdir -p "$bg_dir"
  start_background ''
fi
for t in "$@"; do
  t0=$SECONDS
  cpu
  c0=$CPU
  if beside "$t"; then
    # It ran in a chain of its own: its log here, its own times in its row.
    wait_background "$t" && sed 's/^/  /' "$bg_dir/$t.log"
    rc=$?
    read -r wall c < <(cat "$bg_dir/$t.done" "$bg_dir/$t.failed" 2>/dev/null)
    note=", beside the others"
  elif wait_background "$t"; then
    built=$(built_for "$t")
    "$make" --no-print-directory "$t" "${tier_args[@]}" ${built:+"$built"}
    rc=$?
  else
    rc=1
  fi
  if ! beside "$t"; then
    cpu
    wall=$((SECONDS - t0)) c=$((CPU - c0)) note=
  fi
  done_+=("$t ${wall:-0} ${c:-0}")
  # Each as it ends too (a run that is cut short still says where its time went).
  printf '== %s: %d s wall, %d s cpu (exit %d%s)\n' "$t" "${wall:-0}" "${c:-0}" $rc "$note"
  if [ $rc -ne 0 ]; then
    report
    echo "$t FAILED (exit $rc)" >&2
    exit $rc
  fi
  [ -z "${BACKGROUND:-}" ] || start_background "$t"
done
report
echo "every suite passed ($*)"
