# C ABI: libflakeid.so / libflakeid.a, include/flakeid.h, flakeid.pc and the CMake
# package (find_package(flakeid CONFIG)). The Rust side of the C suite (header
# freshness included) is in make test-rust.
C_OUT        := $(TARGET)/flakeid-c
# The shipped settings ([profile.dist]: LTO across crates), for the tests, the bench
# and `make install` alike; built for --target $(HOST_TRIPLE) (the Makefile says why).
C_PROFILE    ?= dist
C_LIB_DIR    := $(TARGET)/$(HOST_TRIPLE)/$(C_PROFILE)
C_SO         := $(C_LIB_DIR)/libflakeid.so
C_A          := $(C_LIB_DIR)/libflakeid.a
C_CC         ?= $(CC)
C_STD        := -std=c11 -D_POSIX_C_SOURCE=200809L
C_WARN       := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
C_SAN        := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
# What the static library needs beside it (go/native_libs.go, through
# scripts/native-libs.sh; lib-c checks it against rustc's list), and the C runtime.
C_LIBS_PRIVATE := $(shell bash scripts/native-libs.sh linux) -lc
C_VERSION    := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
PREFIX       ?= /usr/local
C_STAGE      := $(abspath $(C_OUT))/prefix


.PHONY: setup-c lib-c header-c test-c bench-c install

##@ C: libflakeid, include/flakeid.h, flakeid.pc, the CMake package
# A C compiler whose AddressSanitizer and UBSan programs build and run, make,
# pkg-config, cmake (the installed CMake package is checked too). cbindgen is a pinned
# dev-dependency of bindings/c, fetched by cargo: no CLI to install.
setup-c: ## a C compiler with ASan and UBSan, make, pkg-config, cmake
	@$(APT_INSTALL) setup-c $(call need,cc,gcc libc6-dev) $(call need,make,make) $(call need,pkg-config,pkg-config) \
	  $(call need,cmake,cmake)
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; echo 'int main(void){return 0;}' >"$$d/a.c"; \
	  { cc -fsanitize=address,undefined "$$d/a.c" -o "$$d/a" && "$$d/a"; } >/dev/null 2>&1 || $(APT_INSTALL) setup-c gcc libc6-dev

# Only the C crate types: flakeid-c is also an rlib (for the fuzz targets), which would
# make cargo build every dependency again with machine code beside the bitcode that LTO
# needs, instead of reusing the Node addon's and the Python module's.
lib-c: setup-c ## libflakeid.so and .a, shipped settings (profile dist)
	mkdir -p $(C_OUT)
	$(CARGO) rustc -p flakeid-c --lib --crate-type cdylib,staticlib --profile $(C_PROFILE) --target $(HOST_TRIPLE) \
	  -- --print native-static-libs 2>&1 | tee $(C_OUT)/lib-c.log
	bash scripts/native-libs.sh check linux $(C_OUT)/lib-c.log
	ln -sf libflakeid.so $(C_LIB_DIR)/libflakeid.so.0

header-c: ## regenerate include/flakeid.h (cbindgen, pinned)
	FLAKEID_REGENERATE_HEADER=1 $(CARGO) test -p flakeid-c --test header

# The suite's two ASan builds (tests/c/build.sh, the one command every platform's
# build of the suite runs) are skipped when no input is newer than the binary (the
# sources, the header, the libraries, the build script, this file).
C_TEST_INPUTS := $(wildcard tests/c/*.c tests/c/*.h tests/c/build.sh) include/flakeid.h go/native_libs.go mk/c.mk
c_stale = test ! -e $(1) || test -n "$$(find $(C_TEST_INPUTS) $(2) -newer $(1) | head -n 1)"

# The suite (-Wall -Wextra -Werror, ASan + UBSan) against each library, then the
# install into a staging prefix and the examples built the way users do (pkg-config,
# CMake, docs/sealing.md's C example).
test-c: setup-c lib-c ## the C suite (ASan + UBSan, .so and .a), the pkg-config and CMake examples
	mkdir -p $(C_OUT)
	if $(call c_stale,$(C_OUT)/flakeid_test_shared,$(C_SO)); then CC=$(C_CC) bash tests/c/build.sh \
	  $(C_OUT)/flakeid_test_shared $(C_SAN) -L$(C_LIB_DIR) -lflakeid -Wl,-rpath,$(C_LIB_DIR) -lpthread; fi
	if $(call c_stale,$(C_OUT)/flakeid_test_static,$(C_A)); then CC=$(C_CC) bash tests/c/build.sh \
	  $(C_OUT)/flakeid_test_static $(C_SAN) $(C_A); fi
	@# Prove which library each binary uses.
	ldd $(C_OUT)/flakeid_test_shared | grep 'libflakeid\.so' > /dev/null
	! ldd $(C_OUT)/flakeid_test_static | grep 'libflakeid\.so'
	@echo "== C tests, shared library (libflakeid.so), ASan + UBSan"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 $(C_OUT)/flakeid_test_shared tests/vectors
	@echo "== C tests, static library (libflakeid.a), ASan + UBSan"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 $(C_OUT)/flakeid_test_static tests/vectors
	rm -rf $(C_STAGE)
	$(MAKE) --no-print-directory install PREFIX=$(C_STAGE)
	PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig $(C_CC) $(C_STD) $(C_WARN) examples/c/example.c \
	  $$(PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig pkg-config --cflags --libs flakeid) -Wl,-rpath,$(C_STAGE)/lib -o $(C_OUT)/example
	@# The quick start of bindings/c/README.md, as written: the rpath, no LD_LIBRARY_PATH.
	$(C_OUT)/example
	$(C_CC) $(C_STD) $(C_WARN) examples/c/example.c \
	  $$(PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig pkg-config --cflags flakeid) $(C_STAGE)/lib/libflakeid.a \
	  $$(PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig pkg-config --libs-only-l --static flakeid | sed 's/-lflakeid//') \
	  -o $(C_OUT)/example_static
	$(C_OUT)/example_static > /dev/null
	@# docs/sealing.md's C example, as written, from a folder with a seal.key.
	rm -rf $(C_OUT)/sealing && mkdir -p $(C_OUT)/sealing
	awk '/^```c$$/ { on = 1; next } /^```$$/ { on = 0 } on' docs/sealing.md > $(C_OUT)/sealing/sealing.c
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > $(C_OUT)/sealing/seal.key
	PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig $(C_CC) $(C_STD) $(C_WARN) $(C_OUT)/sealing/sealing.c \
	  $$(PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig pkg-config --cflags --libs flakeid) -o $(C_OUT)/sealing/sealing
	cd $(C_OUT)/sealing && LD_LIBRARY_PATH=$(C_STAGE)/lib ./sealing | grep -q '^910499571847892992 is published as '
	rm -rf $(C_OUT)/cmake-example
	cmake -S examples/c -B $(C_OUT)/cmake-example -DCMAKE_PREFIX_PATH=$(C_STAGE) > /dev/null
	cmake --build $(C_OUT)/cmake-example > /dev/null
	ldd $(C_OUT)/cmake-example/example | grep 'libflakeid\.so\.0 => $(C_STAGE)/lib/' >/dev/null
	$(C_OUT)/cmake-example/example > /dev/null
	@echo "test-c: ok"

bench-c: setup-c lib-c ## flakeid_next_id (strict, borrow) and flakeid_next_ids
	mkdir -p $(C_OUT)
	$(C_CC) $(C_STD) $(C_WARN) -O2 -Iinclude tests/c/bench.c $(C_A) $(C_LIBS_PRIVATE) -o $(C_OUT)/bench
	FLAKEID_HOST_GUARD=off $(C_OUT)/bench

install: lib-c ## PREFIX=/usr/local [DESTDIR=]: library, header, flakeid.pc, CMake package
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(C_SO) $(DESTDIR)$(PREFIX)/lib/libflakeid.so
	ln -sf libflakeid.so $(DESTDIR)$(PREFIX)/lib/libflakeid.so.0
	install -m 0644 $(C_A) $(DESTDIR)$(PREFIX)/lib/libflakeid.a
	install -m 0644 include/flakeid.h $(DESTDIR)$(PREFIX)/include/flakeid.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(C_VERSION)|' -e 's|@LIBS_PRIVATE@|$(C_LIBS_PRIVATE)|' \
	  bindings/c/flakeid.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/flakeid.pc
	install -d $(DESTDIR)$(PREFIX)/lib/cmake/flakeid
	install -m 0644 bindings/c/cmake/flakeidConfig.cmake $(DESTDIR)$(PREFIX)/lib/cmake/flakeid/
	sed 's|@VERSION@|$(C_VERSION)|' bindings/c/cmake/flakeidConfigVersion.cmake.in \
	  > $(DESTDIR)$(PREFIX)/lib/cmake/flakeid/flakeidConfigVersion.cmake
