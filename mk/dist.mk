# Release artifacts: wheels, sdist, npm tarballs, C SDK tarballs, static
# CLI binaries and SHA256SUMS, all directly in dist/ (RELEASING.md has the names).
#   make dist            scripts/dist.sh: cross builds with zig (cargo-zigbuild; maturin
#                        in its environment), every target
#   make test-dist       tests/dist/run.sh: install and use every artifact as a user
#                        would, with no cargo, rustc or maturin on PATH (make release-check)
#   make test-artifacts  the same for this machine's artifacts only (FLAKEID_DIST_HOST=1:
#                        x86_64 glibc wheel, npm tarballs, C SDK, static CLI; make ci)
# The wasm package is built by bindings/wasm/build.sh (setup-wasm).
.PHONY: dist dist-host setup-dist setup-dist-host test-dist test-artifacts

setup-dist: setup-rust
	bash scripts/setup-dist.sh

setup-dist-host: setup-rust
	bash scripts/setup-dist.sh --host

dist: setup-dist setup-wasm setup-node
	bash scripts/dist.sh

dist-host: setup-dist-host setup-wasm setup-node
	FLAKEID_DIST_HOST=1 bash scripts/dist.sh

test-dist: dist
	bash tests/dist/run.sh

test-artifacts: dist-host
	FLAKEID_DIST_HOST=1 bash tests/dist/run.sh
