#!/usr/bin/env bash
# The new lease URLs through every binding and the CLI: each builds a
# generator on etcd://, etcds://, rediss:// and postgres://…sslmode=verify-full URLs
# of the servers tests/env/testenv.py started, checks the ID carries the leased node
# id, and that a wrong CA comes back as that binding's lease error naming the cause.
# Run by make test-lease-bindings (testenv.py run --all -- tests/lease/bindings.sh),
# after the Python package, the Node addon and libflakeid were built.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${PY:=python/.venv/bin/python}"
# libflakeid.a as make lib-c builds it (mk/c.mk).
: "${C_LIB_DIR:?make test-lease-bindings sets it (mk/c.mk)}"
CARGO=${CARGO:-cargo}
check() { # binding url expect(OK|unknown CA) output
  local who=$1 url=$2 want=$3 out=$4
  local redacted=${url%%\?*}
  if [ "$want" = OK ]; then
    if [[ "$out" =~ ^OK\ ([0-9]+)\ ([0-9]+) ]]; then
      local node=${BASH_REMATCH[1]} id=${BASH_REMATCH[2]}
      # Snowflake: the node id sits in bits 12..21.
      if [ $(( (id >> 12) & 1023 )) -ne "$node" ]; then
        echo "FAIL $who $redacted: ID $id does not carry node $node"; return
      fi
      echo "ok   $who $redacted: node $node"
    else
      echo "FAIL $who $redacted: $out"
    fi
  else
    if [[ "$out" == *"$want"* ]]; then
      echo "ok   $who $redacted: refused ($want)"
    else
      echo "FAIL $who $redacted: expected an error naming '$want', got: $out"
    fi
  fi
}

cli=("${CARGO_TARGET_DIR:-target}/debug/flakeid")
# make's package selection (Makefile, RUST_TEST_PKGS): one build of the dependencies.
$CARGO build -q ${FLAKEID_CARGO_PKGS:--p flakeid-cli}
cc -std=c11 -Iinclude tests/lease/lease_url.c "$C_LIB_DIR/libflakeid.a" -lpthread -ldl -lm -lrt -o target/lease_url_c

py_prog='
import sys, flakeid
try:
    g = flakeid.Generator(lease=sys.argv[1], lease_ttl_ms=2000)
    print("OK", g.node, g.next_id())
    g.release_lease()
except flakeid.FlakeIdError as e:
    print("ERROR", type(e).__name__, e)
'
node_prog='
const { Generator } = require(process.cwd() + "/node");
try {
  const g = new Generator({ lease: process.argv[1], leaseTtlMs: 2000 });
  console.log("OK", g.node, String(g.nextId()));
  g.releaseLease();
} catch (e) { console.log("ERROR", e.code, e.message); }
'
urls=()
for v in FLAKEID_TEST_ETCD_URL FLAKEID_TEST_ETCDS_URL FLAKEID_TEST_REDISS_URL FLAKEID_TEST_POSTGRES_TLS_URL; do
  [ -n "${!v:-}" ] && urls+=("${!v}")
done
[ ${#urls[@]} -gt 0 ] || { echo "bindings: no lease servers"; exit 1; }
# Each check mostly waits (a lease on a new namespace, its lock delay): every
# binding's checks of every URL run at once, each in a namespace of its own, and
# their lines are printed in order once all have ended.
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
run_binding() { # who url
  case $1 in
    cli) local out; out=$("${cli[@]}" generate -n 1 --lease "$2" --lease-ttl-ms 2000 2>&1 || true)
         [[ "$out" =~ ^[0-9]+$ ]] && out="OK $(( (out >> 12) & 1023 )) $out"; echo "$out" ;;
    python) "$PY" -c "$py_prog" "$2" 2>&1 || true ;;
    node) node -e "$node_prog" "$2" 2>&1 || true ;;
    c) target/lease_url_c "$2" 2>&1 || true ;;
  esac
}
pids=()
n=0
checks=0
for base in "${urls[@]}"; do
  n=$((n + 1))
  sep='?'; [[ "$base" == *\?* ]] && sep='&'
  tls=0; [[ "$base" == *ca.pem* || "$base" == *sslrootcert* ]] && tls=1
  for who in cli python node c; do
    checks=$((checks + 1 + tls))
    good="${base}${sep}namespace=bindings-$$-$n-$who"
    ( check "$who" "$good" OK "$(run_binding "$who" "$good")"
      if [ "$tls" = 1 ]; then
        bad="${good//\/ca.pem//other-ca.pem}"
        check "$who" "$bad" "unknown CA" "$(run_binding "$who" "$bad")"
      fi ) >"$out_dir/$n-$who" 2>&1 &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
cat "$out_dir"/*
oks=$(cat "$out_dir"/* | grep -c '^ok ' || true)
[ "$oks" = "$checks" ] || { echo "bindings: $((checks - oks)) of $checks checks failed or gave no answer"; exit 1; }
echo "bindings: every binding and the CLI leased through every new URL"
