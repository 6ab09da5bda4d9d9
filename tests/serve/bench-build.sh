# Sourced by tests/serve/bench.sh and tests/serve/instructions.sh: builds the flakeid
# binary and the examples named in "$@" with the shipped settings (--profile dist;
# BENCH_PROFILE=dev only to try a script quickly) and sets `bin`, their folder. Two
# steps: with --example, cargo builds only the examples, not the flakeid binary.
CARGO=${CARGO:-cargo}
profile=${BENCH_PROFILE:-dist}
bin=${CARGO_TARGET_DIR:-target}/$([ "$profile" = dev ] && echo debug || echo "$profile")
$CARGO build -q --profile "$profile" -p flakeid-cli
$CARGO build -q --profile "$profile" -p flakeid-server $(printf -- '--example %s ' "$@")
