# PostgreSQL extension (issue 16): bindings/postgres, built with pgrx 0.19.3 against
# Debian's PostgreSQL 15 (its own cargo workspace and Rust 1.96.0 toolchain; tools
# from scripts/setup-postgres.sh).
#   make install-postgres  release build installed into the PostgreSQL of $(PG_CONFIG)
#   make test-postgres     fmt + clippy, `cargo pgrx test` (SQL tests in a cluster pgrx
#                          starts), then the debug build installed and
#                          tests/postgres/run.sh (pgbench, vectors, cross-language decode;
#                          settings, schema, upgrade; standby, promotion, crash restart
#                          and a failover to a slow clock)
#   make bench-postgres    tests/postgres/bench.sh: flakeid_next() beside nextval(),
#                          gen_random_uuid() and an Instagram-style PL/pgSQL function
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
PG_CRATE := bindings/postgres
# cargo pgrx test runs PostgreSQL as the postgres user, in a data directory it owns
# (one per checkout, reused between runs).
# install-postgres builds with --release; test-postgres installs the debug build
# (its dependencies are the ones `cargo pgrx test` already compiled: one pgrx build
# instead of two on a cold CI machine).
PG_PROFILE ?= --release
PGRX_TEST_DATA ?= /tmp/flakeid-pgrx-$(shell printf %s '$(CURDIR)' | md5sum | cut -c1-8)

.PHONY: setup-postgres install-postgres test-postgres bench-postgres
setup-postgres:
	bash scripts/setup-postgres.sh

# cargo pgrx installs the current version's script and the update scripts
# (sql/flakeid--A--B.sql); then 0.1.0's install script, the upgrade test's base.
install-postgres: setup-postgres
	cd $(PG_CRATE) && cargo pgrx install $(PG_PROFILE) --pg-config $(PG_CONFIG)
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"

test-postgres: setup-postgres
	cd $(PG_CRATE) && cargo fmt -- --check
	cd $(PG_CRATE) && cargo clippy --features pg_test --tests -- -D warnings
	mkdir -p $(PGRX_TEST_DATA) && chown postgres $(PGRX_TEST_DATA)
	cd $(PG_CRATE) && cargo pgrx test pg15 --runas postgres --pgdata $(PGRX_TEST_DATA)/data
	# run.sh tests the library installed into Debian's PostgreSQL 15.
	$(MAKE) --no-print-directory install-postgres PG_PROFILE=
	CARGO=$(CARGO) bash tests/postgres/run.sh

bench-postgres: install-postgres
	bash tests/postgres/bench.sh

# In `make test`, run after the Python and Node suites (TEST_TARGETS_LAST): run.sh
# then also decodes SQL-made IDs with the packages they built.
TEST_TARGETS_LAST += test-postgres
BENCH_TARGETS += bench-postgres
