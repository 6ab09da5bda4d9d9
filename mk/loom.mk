# The generator's counter protocol under the loom model checker: the
# real generator, built with `--cfg loom` so its atomics and thread-locals are
# loom's, explored over every interleaving up to LOOM_MAX_PREEMPTIONS (default 2)
# in tests/loom.rs. Its own target dir: the cfg flag rebuilds everything (the core
# alone: no dependencies, so that is quick).
# `make stress` runs the real-clock contention tests (30 s) longer than make test (0.5 s)
# and make ci (3 s).
.PHONY: test-loom stress
STRESS_SECS ?= 30

test-loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom $(CARGO) test -p flakeid-core --release --test loom

stress:
	FLAKEID_STRESS_SECS=$(STRESS_SECS) $(CARGO) test -p flakeid-core --release --test race -- --test-threads 1
