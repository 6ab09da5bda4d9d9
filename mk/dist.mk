# Release artifacts (issue 14): wheels, sdist, npm tarballs, C SDK tarballs, static
# CLI binaries and SHA256SUMS, all directly in dist/ (RELEASING.md has the names).
#   make dist        scripts/dist.sh: cross builds with zig (cargo-zigbuild; maturin in its environment)
#   make test-dist   tests/dist/run.sh: install and use every artifact as a user would,
#                    with no cargo, rustc or maturin on PATH
.PHONY: dist setup-dist test-dist

setup-dist:
	bash scripts/setup-dist.sh

dist:
	bash scripts/dist.sh

test-dist: dist
	bash tests/dist/run.sh

TEST_TARGETS += test-dist
