#!/usr/bin/env bash
# User-space instructions per request of GET /v1/id and of the axum hello world
# (crates/flakeid-server/examples/hello_axum.rs), each server under valgrind --tool=callgrind: the figure
# of tests/serve/bench.sh's header that other load on a shared machine barely moves
# (req/s ratios swing between runs; instruction counts vary by about 1%).
# Each server gets wrk -t1 -c4 for 2 s to warm up, then its counts are zeroed
# (callgrind_control -z), wrk -t1 -c4 runs DURATION seconds (default 5), the counts
# are dumped (-d), and Ir / requests is printed. Needs valgrind and wrk.
#   env: BENCH_PROFILE (cargo profile, default dist, as bench.sh); DURATION
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/serve/bench-build.sh hello_axum
dur=${DURATION:-5}
work=$(mktemp -d /tmp/flakeid-instructions.XXXXXX)
vpid=
cleanup() { [ -n "$vpid" ] && kill "$vpid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

measure() { # key, label, URL path, command... (PORT in it: the server's port)
  local name=$1 label=$2 path=$3 port; shift 3
  port=$(python3 tests/env/testenv.py port)
  FLAKEID_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$work/$name.%p" \
    $(echo "$@" | sed "s/PORT/$port/g") 2>"$work/$name.log" &
  vpid=$!
  for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$port$path" && break; sleep 0.1; done
  wrk -t1 -c4 -d2s "http://127.0.0.1:$port$path" >/dev/null
  callgrind_control -z "$vpid" >/dev/null 2>&1
  wrk -t1 -c4 -d"${dur}s" "http://127.0.0.1:$port$path" >"$work/$name.wrk"
  callgrind_control -d "$vpid" >/dev/null 2>&1
  kill "$vpid"
  wait "$vpid" || true
  vpid=
  local reqs ir
  reqs=$(awk '/requests in/ {print $1}' "$work/$name.wrk")
  # The dump (file .1) holds the counts from the zeroing to the dump.
  ir=$(awk '/^summary:/ {print $2}' "$work/$name".*.1)
  awk -v n="$label" -v r="$reqs" -v i="$ir" 'BEGIN {printf "%-34s %8d requests  %14d Ir  %8.0f Ir/request\n", n, r, i, i / r}'
  echo "$ir $reqs" >"$work/$name.ir"
}
echo "== $(date -u +%FT%TZ) instructions per request, wrk -t1 -c4 -d${dur}s; load: $(uptime | sed 's/.*load average: //')"
measure flakeid "flakeid serve GET /v1/id" /v1/id "$bin/flakeid serve --listen 127.0.0.1:PORT --node 1"
measure hello "axum hello world GET /" / "$bin/examples/hello_axum 127.0.0.1:PORT"
awk 'FNR == 1 {v[++n] = $1 / $2} END {printf "hello world / flakeid, instructions per request: %.2f\n", v[2] / v[1]}' \
  "$work/flakeid.ir" "$work/hello.ir"
