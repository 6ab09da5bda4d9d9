# Sealed IDs (issue 26): crates/flakeid-seal (FF1-AES), tests/vectors/seal.json, docs/sealing.md.
#   make test-seal      unit, property, NIST-sample, vector (staleness included) and doc
#                       tests; clippy and rustdoc with -D warnings.
#   make bench-seal     seal/unseal ns per ID (criterion).
#   make vectors        also regenerates tests/vectors/seal.json (vectors-seal).
TEST_TARGETS  += test-seal
BENCH_TARGETS += bench-seal

.PHONY: test-seal bench-seal vectors-seal

test-seal:
	$(CARGO) test -p flakeid-seal --all-targets
	$(CARGO) test -p flakeid-seal --doc
	$(CARGO) clippy -p flakeid-seal --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p flakeid-seal --no-deps --quiet

bench-seal:
	$(CARGO) bench -p flakeid-seal

vectors: vectors-seal
vectors-seal:
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-seal --test vectors vectors_are_fresh
