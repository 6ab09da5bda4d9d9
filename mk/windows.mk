# Windows x86_64 (the GNU target, mingw-w64) from Linux, its tests under Wine.
#   make test-windows   the core's unit and integration tests (--features lease) for
#                       x86_64-pc-windows-gnu, run by Wine 8; names each skip
#                       (scripts/test-windows.sh). In make release-check, not make ci.
WIN_TRIPLE  := x86_64-pc-windows-gnu
WINEPREFIX_DIR := $(TARGET)/wine
WIN_STUB    := $(WINEPREFIX_DIR)/drive_c/windows/system32/bcryptprimitives.dll
# Debian's wine64 package puts its loader and server here, not on PATH (the `wine`
# package's wrapper would add the 32-bit half, which nothing here needs).
WINE        := /usr/lib/wine/wine64
WINESERVER  := /usr/lib/wine/wineserver

.PHONY: setup-windows test-windows

##@ Windows (GNU target) under Wine
# The Rust target, Debian's mingw-w64 C compiler and linker (ring and the core's
# tests link with it) and wine64 (1.4 GB with its dependencies), then a WINEPREFIX of
# our own under $(TARGET), so no user's ~/.wine is touched. Wine 8 lacks
# bcryptprimitives.dll, without which no Rust >= 1.78 program starts (each exits 53
# with no output): tests/windows/bcryptprimitives.c stands in, built into the
# prefix's system32. Each step is skipped when its result is there.
setup-windows: setup-rust ## the windows-gnu target, mingw-w64, wine64, a WINEPREFIX with the ProcessPrng stub
	@rustup target list --installed | grep -qx $(WIN_TRIPLE) || rustup target add $(WIN_TRIPLE)
	@$(APT_INSTALL) setup-windows $(call need,x86_64-w64-mingw32-gcc,gcc-mingw-w64-x86-64) \
	  $(call need-file,$(WINE),wine64)
	@[ -f $(WIN_STUB) ] || { \
	  echo "setup-windows: a WINEPREFIX in $(WINEPREFIX_DIR)"; \
	  WINEPREFIX=$(WINEPREFIX_DIR) WINEDEBUG=-all $(WINE) wineboot --init >/dev/null 2>&1; \
	  WINEPREFIX=$(WINEPREFIX_DIR) $(WINESERVER) --wait; \
	  x86_64-w64-mingw32-gcc -shared -O2 -Wall -Wextra -Werror -o $(WIN_STUB).tmp \
	    tests/windows/bcryptprimitives.c -ladvapi32 && mv $(WIN_STUB).tmp $(WIN_STUB); }

test-windows: setup-windows ## the core's tests for x86_64-pc-windows-gnu under Wine, each skip named
	CARGO=$(CARGO) WINE=$(WINE) bash scripts/test-windows.sh
