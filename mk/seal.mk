# Sealed IDs: crates/flakeid-seal (FF1-AES), tests/vectors/seal.json, docs/sealing.md.
#   make test-rust      runs its unit, property, NIST-sample, vector (staleness included)
#                       and doc tests (make lint: its clippy and rustdoc)
#   make test-seal      those tests alone
#   make bench-seal     seal/unseal ns per ID (criterion).
#   make vectors        also regenerates tests/vectors/seal.json (vectors-seal).
.PHONY: test-seal bench-seal vectors-seal

test-seal:
	$(CARGO) test -p flakeid-seal --all-targets
	$(CARGO) test -p flakeid-seal --doc

bench-seal:
	$(CARGO) bench -p flakeid-seal

vectors: vectors-seal
vectors-seal:
	FLAKEID_REGENERATE_VECTORS=1 $(CARGO) test -p flakeid-seal --test vectors vectors_are_fresh
