#!/usr/bin/env bash
# make bench-serve, in one run, every server on a free 127.0.0.1 port, wrk with
# keep-alive connections and a thread per core:
#   1. GET /v1/id beside an axum hello-world route (crates/flakeid-server/examples/hello_axum.rs: the same
#      axum, hyper and tokio), same wrk settings, at 4 and 64 connections: PAIRS
#      (default 3) alternating runs of each, the median of the pairs' ratios (on a
#      shared machine the load drifts between two back-to-back runs), and each
#      server's CPU time per request (user + system, from /proc), which the other
#      load on the machine disturbs less than req/s;
#   2. p99 of /v1/id at about half of its peak (paced connections);
#   3. TLS (--tls-cert/--tls-key) vs plaintext /v1/id, 4 and 64 kept-alive connections,
#      PAIRS alternating runs and the median ratio;
#   4. flakeid serve vs pysnowflake 0.1.3 (PyPI, tornado), 2 connections per core;
#   5. IDs/s of /v1/ids?n=100000 as octet-stream (wrk) and of the gRPC Stream.
# No targets are asserted: the numbers are for reading (load: `uptime`, printed).
#   env: DURATION (wrk seconds per run, default 10); PAIRS (sections 1 and 3, default
#   3); BENCH_PROFILE (cargo profile, default dist: the shipped settings; `dev` only to
#   try the script quickly)
# The figures, and how /v1/id got to them: docs/performance.md (Service).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/serve/bench-build.sh grpc_stream_bench hello_axum
venv=${FLAKEID_BENCH_VENV:-target/bench-serve-venv}
cores=$(nproc)
conns=$((2 * cores))
dur=${DURATION:-10}
work=$(mktemp -d /tmp/flakeid-bench-serve.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 tests/env/testenv.py port --not "$@"; }  # ports this run has
wait_http() { for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.05; done; echo "no answer from $1" >&2; exit 1; }

fport=$(free_port)
FLAKEID_LOG=warn $bin/flakeid serve --listen 127.0.0.1:$fport --node 1 2>"$work/flakeid.log" &
pids+=($!)
fpid=$!
hport=$(free_port "$fport")
$bin/examples/hello_axum 127.0.0.1:$hport 2>"$work/hello.log" &
pids+=($!)
hpid=$!
# TLS: a self-signed P-256 certificate for 127.0.0.1 (wrk does not verify it).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/tls.key" -out "$work/tls.pem" 2>/dev/null
tport=$(free_port "$fport" "$hport")
FLAKEID_LOG=warn $bin/flakeid serve --listen 127.0.0.1:$tport --node 3 \
  --tls-cert "$work/tls.pem" --tls-key "$work/tls.key" 2>"$work/tls.log" &
pids+=($!)
pport=$(free_port "$fport" "$hport" "$tport")
"$venv/bin/snowflake_start_server" --address=127.0.0.1 --port=$pport --worker=1 >"$work/psf.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$fport/readyz"
wait_http "http://127.0.0.1:$hport/"
for _ in $(seq 200); do curl -skf -o /dev/null "https://127.0.0.1:$tport/readyz" && break; sleep 0.05; done
wait_http "http://127.0.0.1:$pport/"

summary() { # name, wrk output file
  awk -v n="$1" '/Requests\/sec/ {r=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
    END {printf "%-44s %12s req/s   p50 %8s   p99 %8s\n", n, r, p50, p99}' "$2"
}
rps() { awk '/Requests\/sec/ {print $2}' "$1"; }
ratio() { awk -v a="$2" -v b="$3" -v n="$1" 'BEGIN {printf "  ratio %s = %.2f\n", n, a / b}'; }
echo "== $(date -u +%FT%TZ) $(nproc) cores; load: $(uptime | sed 's/.*load average: //')"
pairs=${PAIRS:-3}
median() { sort -g | awk '{v[NR] = $1} END {printf "%.2f", v[int((NR + 1) / 2)]}'; }
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
timed_wrk() { # pid, output file, wrk arguments...: wrk, then the server's CPU µs per request
  local pid=$1 out=$2 t0; shift 2
  t0=$(cpu_ticks "$pid")
  wrk "$@" >"$out"
  awk -v d=$(($(cpu_ticks "$pid") - t0)) -v t="$tck" '/requests in/ {printf "%.2f\n", d * 1e6 / t / $1}' "$out" >"$out.cpu"
}
echo "== 1. GET /v1/id beside an axum hello world: wrk -t$cores -d${dur}s --latency, keep-alive, 4 and 64 connections, $pairs alternating pairs"
for c in 4 64; do
  for i in $(seq "$pairs"); do
    timed_wrk "$fpid" "$work/f$c.$i.txt" -t"$cores" -c$c -d"${dur}s" --latency "http://127.0.0.1:$fport/v1/id"
    timed_wrk "$hpid" "$work/h$c.$i.txt" -t"$cores" -c$c -d"${dur}s" --latency "http://127.0.0.1:$hport/"
    summary "flakeid serve GET /v1/id, $c conns, run $i" "$work/f$c.$i.txt"
    summary "axum hello world GET /, $c conns, run $i" "$work/h$c.$i.txt"
    echo "$i $(rps "$work/f$c.$i.txt") $(rps "$work/h$c.$i.txt") $(cat "$work/f$c.$i.txt.cpu") $(cat "$work/h$c.$i.txt.cpu")" >>"$work/pairs$c"
  done
  # The median pair by req/s ratio; its flakeid run stands for the peak and TLS below.
  med=$(awk '{print $2 / $3, $1}' "$work/pairs$c" | sort -g | awk '{r[NR] = $2} END {print r[int((NR + 1) / 2)]}')
  cp "$work/f$c.$med.txt" "$work/f$c.txt"
  awk -v c=$c '{printf "  ratio flakeid / hello world (%s conns), run %s = %.2f   CPU per request: flakeid %s us, hello world %s us (hello/flakeid = %.2f)\n", c, $1, $2 / $3, $4, $5, $5 / $4}' "$work/pairs$c"
  r=$(awk '{print $2 / $3}' "$work/pairs$c" | median)
  u=$(awk '{print $5 / $4}' "$work/pairs$c" | median)
  echo "  median ratio flakeid / hello world ($c conns) = $r   (median CPU per request, hello/flakeid = $u)"
done

# Latency at about half of flakeid's peak: paced connections (1 request per ms each).
peak=$(printf '%s\n' "$(rps "$work/f4.txt")" "$(rps "$work/f64.txt")" | sort -g | tail -1)
half=$(awk -v p="$peak" 'BEGIN {printf "%d", p / 2 / 1000 + 1}')
echo "== 2. p99 at half the peak ($peak req/s): $half connections x 1 request/ms"
wrk -t"$cores" -c"$half" -d"${dur}s" --latency -s tests/serve/paced.lua "http://127.0.0.1:$fport/v1/id" >"$work/fh.txt"
summary "flakeid /v1/id paced ($half conns x 1/ms)" "$work/fh.txt"

echo "== 3. TLS vs plaintext GET /v1/id, kept-alive connections, $pairs alternating pairs"
for c in 4 64; do
  for i in $(seq "$pairs"); do
    wrk -t"$cores" -c$c -d"${dur}s" --latency "http://127.0.0.1:$fport/v1/id" >"$work/p$c.$i.txt"
    wrk -t"$cores" -c$c -d"${dur}s" --latency "https://127.0.0.1:$tport/v1/id" >"$work/t$c.$i.txt"
    summary "flakeid serve TLS GET /v1/id, $c conns, run $i" "$work/t$c.$i.txt"
    ratio "TLS / plaintext ($c conns), run $i, plaintext $(rps "$work/p$c.$i.txt") req/s" "$(rps "$work/t$c.$i.txt")" "$(rps "$work/p$c.$i.txt")"
    awk -v a="$(rps "$work/t$c.$i.txt")" -v b="$(rps "$work/p$c.$i.txt")" 'BEGIN {print a / b}' >>"$work/tls$c"
  done
  echo "  median ratio TLS / plaintext ($c conns) = $(median <"$work/tls$c")"
done

echo "== 4. flakeid serve vs pysnowflake 0.1.3: wrk -t$cores -c$conns -d${dur}s --latency"
wrk -t"$cores" -c"$conns" -d"${dur}s" --latency "http://127.0.0.1:$fport/v1/id" >"$work/f1.txt"
wrk -t"$cores" -c"$conns" -d"${dur}s" --latency "http://127.0.0.1:$pport/" >"$work/p1.txt"
summary "flakeid serve GET /v1/id" "$work/f1.txt"
summary "pysnowflake 0.1.3 GET /" "$work/p1.txt"
awk 'FNR==1{f++} /Requests\/sec/ {r[f]=$2} END {printf "ratio: flakeid / pysnowflake = %.1fx\n", r[1]/r[2]}' "$work/f1.txt" "$work/p1.txt"

echo "== 5. bulk"
wrk -t"$cores" -c"$conns" -d"${dur}s" -H 'Accept: application/octet-stream' \
  "http://127.0.0.1:$fport/v1/ids?n=100000" >"$work/fb.txt"
awk '/Requests\/sec/ {printf "flakeid GET /v1/ids?n=100000 octet-stream: %.0f req/s = %.2f M IDs/s\n", $2, $2*100000/1e6}' "$work/fb.txt"
$bin/examples/grpc_stream_bench "http://127.0.0.1:$fport" $((dur * 4000000)) 65536
echo "(strict mode: one snowflake node issues at most 4096 IDs per ms = 4.1 M IDs/s; the sequence field bounds it)"

# Bulk with borrowing (the service's >= 50 M IDs/s goal): a one-day window (the most
# max_borrow_ms allows: 354 G IDs; a 10-minute one ran out within the first run) lets the
# counter run ahead of the clock, so the network path, not the engine, is the limit.
bport=$(free_port "$fport" "$pport")
FLAKEID_LOG=warn $bin/flakeid serve --listen 127.0.0.1:$bport --node 2 --overflow borrow \
  --max-borrow-ms 86400000 --max-batch 1000000 2>"$work/borrow.log" &
pids+=($!)
wait_http "http://127.0.0.1:$bport/readyz"
wrk -t"$cores" -c"$conns" -d"${dur}s" -H 'Accept: application/octet-stream' \
  "http://127.0.0.1:$bport/v1/ids?n=1000000" >"$work/bb.txt"
awk '/Requests\/sec/ {printf "flakeid --overflow borrow GET /v1/ids?n=1000000 octet-stream: %.1f req/s = %.1f M IDs/s\n", $2, $2*1000000/1e6}' "$work/bb.txt"
$bin/examples/grpc_stream_bench "http://127.0.0.1:$bport" $((dur * 100000000)) 65536
