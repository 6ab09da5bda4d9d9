# PostgreSQL extension: bindings/postgres, built with pgrx 0.19.3 against
# Debian's PostgreSQL 15 (its own cargo workspace and Rust 1.96.0 toolchain; tools
# from setup-postgres). Its lint: make lint-postgres.
#   make deb-postgres        dist/postgresql-15-flakeid_<version>_<arch>.deb, from
#                            `cargo pgrx package` (bindings/postgres/package-deb.sh)
#   make test-postgres-deb   that package installed with apt, then CREATE EXTENSION on a
#                            fresh private cluster with no Rust on PATH (tests/postgres/deb.sh)
#   make test-postgres       `cargo pgrx test` (SQL tests in a cluster pgrx starts), then
#                            test-postgres-deb, then tests/postgres/run.py on the installed
#                            package (pgbench, vectors, cross-language decode; settings,
#                            schema, upgrade; standby, promotion, crash restart and a
#                            failover to a slow clock; copies, PITR, pg_upgrade and kill -9
#                            of the postmaster: tests/postgres/copies.py)
#   make install-postgres    a release build from source, installed into the PostgreSQL of
#                            $(PG_CONFIG) (the second way, docs/postgres.md)
#   make bench-postgres      tests/postgres/bench.sh: flakeid_next() beside nextval(),
#                            gen_random_uuid() and an Instagram-style PL/pgSQL function
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
PG_CRATE := bindings/postgres
# cargo pgrx test runs PostgreSQL as the postgres user, in a data directory it owns
# (one per checkout, reused between runs).
PG_PROFILE ?= --release
PGRX_TEST_DATA ?= /tmp/flakeid-pgrx-$(shell printf %s '$(CURDIR)' | md5sum | cut -c1-8)

.PHONY: setup-postgres lint-postgres install-postgres deb-postgres test-postgres-deb test-postgres bench-postgres

##@ PostgreSQL extension (bindings/postgres, pgrx)
# Debian's PostgreSQL 15 server, client and headers, libclang's -dev package
# (pgrx's bindgen needs clang's own headers too), sudo (`cargo pgrx test --runas
# postgres`), faketime (the failover test's slow clock), the Rust toolchain pgrx
# needs, cargo-pgrx (pinned) and `cargo pgrx init` for $(PG_CONFIG); each step
# skipped when done. Installs only, starts nothing. cargo-pgrx is built --debug (as
# setup-wasm builds wasm-bindgen-cli): it only drives cargo and reads the built
# library's schema section, its own run time is small next to the builds it starts,
# and an unoptimised build of its 257 crates takes far less CPU time (193 CPU-s;
# CONTRIBUTING.md, Where the time goes).
PG_TOOLCHAIN := 1.96.0
PGRX_VERSION := 0.19.3
PG_CLANG_DEV = $(shell dpkg-query -W -f='$${Status}' libclang-dev 2>/dev/null | grep 'install ok installed')
setup-postgres: setup-rust ## PostgreSQL 15 and its headers, libclang, sudo, faketime, Rust 1.96, cargo-pgrx
	@$(APT_INSTALL) setup-postgres $(call need-file,/usr/lib/postgresql/15/bin/initdb,postgresql-15) \
	  $(call need,pgbench,postgresql-client-15) \
	  $(call need-file,$(shell $(PG_CONFIG) --includedir-server 2>/dev/null)/postgres.h,postgresql-server-dev-15) \
	  $(if $(PG_CLANG_DEV),,libclang-dev) $(call need,sudo,sudo) \
	  $(call need-file,/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1,faketime)
	@rustup run $(PG_TOOLCHAIN) rustc --version >/dev/null 2>&1 \
	  || { echo "setup-postgres: installing Rust $(PG_TOOLCHAIN)"; rustup toolchain install $(PG_TOOLCHAIN) --profile minimal; }
	@rustup component add rustfmt clippy --toolchain $(PG_TOOLCHAIN) >/dev/null 2>&1
	@[ "$$(cargo pgrx --version 2>/dev/null | awk '{print $$2}')" = $(PGRX_VERSION) ] \
	  || { echo "setup-postgres: installing cargo-pgrx $(PGRX_VERSION) (2-3 minutes)"; \
	    cargo +$(PG_TOOLCHAIN) install cargo-pgrx --version $(PGRX_VERSION) --locked --debug; }
	@grep -q '^pg15 *= *"$(PG_CONFIG)"' "$${PGRX_HOME:-$$HOME/.pgrx}/config.toml" 2>/dev/null \
	  || { echo "setup-postgres: cargo pgrx init --pg15 $(PG_CONFIG)"; cargo +$(PG_TOOLCHAIN) pgrx init --pg15 $(PG_CONFIG); }

lint-postgres: setup-postgres ## the extension's rustfmt and clippy -D warnings (its own workspace and toolchain)
	cd $(PG_CRATE) && cargo fmt -- --check
	cd $(PG_CRATE) && cargo clippy --features pg_test --tests -- -D warnings

# cargo pgrx installs the current version's script and the update scripts
# (sql/flakeid--A--B.sql); then 0.1.0's install script, the upgrade test's base.
install-postgres: setup-postgres ## a release build from source into the PostgreSQL of PG_CONFIG
	cd $(PG_CRATE) && cargo pgrx install $(PG_PROFILE) --pg-config $(PG_CONFIG)
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"

deb-postgres: setup-postgres ## dist/postgresql-15-flakeid_<version>_<arch>.deb (cargo pgrx package)
	PG_CONFIG=$(PG_CONFIG) bash $(PG_CRATE)/package-deb.sh

test-postgres-deb: deb-postgres ## that .deb installed with apt, CREATE EXTENSION with no Rust on PATH
	PG_CONFIG=$(PG_CONFIG) bash tests/postgres/deb.sh

# run.py tests the library the .deb installed (the release build that ships), plus
# 0.1.0's install script, the upgrade test's base. It runs after test-python and
# test-node in make ci: it also decodes SQL-made IDs with the packages they built.
test-postgres: setup-postgres setup-lease ## cargo pgrx test, the .deb, then tests/postgres on private clusters
	mkdir -p $(PGRX_TEST_DATA) && chown postgres $(PGRX_TEST_DATA)
	cd $(PG_CRATE) && cargo pgrx test pg15 --runas postgres --pgdata $(PGRX_TEST_DATA)/data
	$(MAKE) --no-print-directory test-postgres-deb
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"
	CARGO=$(CARGO) python3 tests/postgres/run.py

bench-postgres: install-postgres ## flakeid_next() beside nextval(), gen_random_uuid(), PL/pgSQL
	bash tests/postgres/bench.sh
