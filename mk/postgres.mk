# PostgreSQL extension: bindings/postgres, built with pgrx 0.19.3 against
# Debian's PostgreSQL 15 (its own cargo workspace and Rust 1.96.0 toolchain; tools
# from scripts/setup-postgres.sh). Its lint is make lint-postgres (Makefile).
#   make deb-postgres        dist/postgresql-15-flakeid_<version>_<arch>.deb, from
#                            `cargo pgrx package` (bindings/postgres/package-deb.sh)
#   make test-postgres-deb   that package installed with apt, then CREATE EXTENSION on a
#                            fresh private cluster with no Rust on PATH (tests/postgres/deb.sh)
#   make test-postgres       `cargo pgrx test` (SQL tests in a cluster pgrx starts), then
#                            test-postgres-deb, then tests/postgres/run.sh on the installed
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

.PHONY: setup-postgres install-postgres deb-postgres test-postgres-deb test-postgres bench-postgres
setup-postgres: setup-rust
	bash scripts/setup-postgres.sh

# cargo pgrx installs the current version's script and the update scripts
# (sql/flakeid--A--B.sql); then 0.1.0's install script, the upgrade test's base.
install-postgres: setup-postgres
	cd $(PG_CRATE) && cargo pgrx install $(PG_PROFILE) --pg-config $(PG_CONFIG)
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"

deb-postgres: setup-postgres
	PG_CONFIG=$(PG_CONFIG) bash $(PG_CRATE)/package-deb.sh

test-postgres-deb: deb-postgres
	PG_CONFIG=$(PG_CONFIG) bash tests/postgres/deb.sh

# run.sh tests the library the .deb installed (the release build that ships), plus
# 0.1.0's install script, the upgrade test's base. It runs after test-python and
# test-node in make ci: it also decodes SQL-made IDs with the packages they built.
test-postgres: setup-postgres
	mkdir -p $(PGRX_TEST_DATA) && chown postgres $(PGRX_TEST_DATA)
	cd $(PG_CRATE) && cargo pgrx test pg15 --runas postgres --pgdata $(PGRX_TEST_DATA)/data
	$(MAKE) --no-print-directory test-postgres-deb
	install -m 644 $(PG_CRATE)/sql/flakeid--0.1.0.sql "$$($(PG_CONFIG) --sharedir)/extension/"
	CARGO=$(CARGO) bash tests/postgres/run.sh

bench-postgres: install-postgres
	bash tests/postgres/bench.sh
