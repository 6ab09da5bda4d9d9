# flakeid's one entry point for humans and CI: `make help` lists the three tiers
# (CONTRIBUTING.md) and every public target, one line each, read from the `## `
# comment on the target's own line, so the list cannot drift from the recipes
# (`make lint` fails when a suite or a documented target has none).
#   make test            the contributor's loop: every language's own suite and lint
#   make ci              what .ci/run runs: make test, then real stores, serve, the
#                        PostgreSQL extension and its .deb, faults, fuzz, loom, Go, Java,
#                        and the host's release artifacts installed with no Rust
#   make release-check   the full cross matrix (aarch64, musl, qemu), Windows under
#                        Wine; not in CI
# A suite is a make target; what it needs installed is its prerequisite (setup-*:
# idempotent, a no-op when all is there), so `make test-node` works alone on a fresh
# machine. mk/<name>.mk holds one language's recipe whole: its setup, build, suites,
# benches; the tables below say which suites run, in order.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never
# The host guard (docs/design.md) in a directory of this checkout's: the suites see
# each other's generators (they run in turn) but not another checkout's run or an
# app on the machine; a suite's own servers and workers inherit it.
export FLAKEID_HOST_GUARD ?= $(CURDIR)/target/host-guard

# ---------------------------------------------------------------------------------
# The suites, in the order each tier runs them (scripts/run-suites.sh runs them in
# turn, stops at the first failure and prints each one's wall and CPU seconds).
TEST_SUITES := \
  lint \
  test-rust \
  test-c \
  test-python \
  test-node \
  test-wasm-node \
  test-go \
  test-java \
  test-docs

CI_SUITES := \
  $(TEST_SUITES) \
  lint-ci \
  lint-postgres \
  test-loom \
  test-fuzz \
  ci-prebuild-start \
  test-lease \
  test-lease-bindings \
  test-serve \
  test-wasm-browser \
  test-go-stores \
  test-java-stores \
  test-faults \
  ci-prebuild-wait-deb \
  test-postgres \
  ci-prebuild-wait \
  test-serve-abuse \
  test-postgres-ci-majors \
  test-artifacts \
  test-windows-ci \
  check-core-ports

RELEASE_SUITES := \
  test-dist \
  test-postgres-majors \
  release-check-go \
  release-check-java \
  test-windows
# ci-prebuild-start .. -wait: the suites between them mostly wait (leases, serve, Go's
# and Java's stores, faults; then test-postgres), so the longest builds of the rest
# (the extension's release build for its .deb, the release CLI that test-serve-abuse
# attacks, the static CLI, the other majors' packages) run beside them in the
# background, as SCHED_IDLE (scripts/ci-prebuild.sh says how and why, and why not from
# the start); ci-prebuild-wait-deb waits for the .deb alone.
# test-postgres comes after test-python and test-node: tests/postgres/run.py decodes
# SQL-made IDs with the packages they installed; it also builds the extension's .deb
# and installs it with apt (test-postgres-deb). test-artifacts builds this machine's
# release artifacts (dist/, emptied first) and installs them with no Rust on PATH.
# test-windows-ci: the core's tests on Windows under Wine, make ci's share of
# release-check's test-windows (C, Go and Node too: CONTRIBUTING.md, "The three test tiers");
# check-core-ports: the core's library compiled for macOS and Windows.
# test-postgres-ci-majors: the other PostgreSQL majors' share of make ci (the oldest,
# the newest and one rotating, a part of the suite; release-check's
# test-postgres-majors runs all of them whole: CONTRIBUTING.md, "The three test tiers").
# ---------------------------------------------------------------------------------

# What each tier installs (scripts/bootstrap.sh TIER = make setup-TIER, several at
# once). The setups that compile come first, so that the downloads (apt, npm, PyPI,
# Maven, toolchains) run beside them instead of after them: setup-postgres (cargo
# install cargo-pgrx), setup-wasm (cargo install wasm-bindgen-cli), setup-node (the
# addon's build).
SETUP_TEST := setup-rust setup-wasm setup-node setup-c setup-python setup-go setup-java setup-actionlint
SETUP_CI := setup-postgres $(SETUP_TEST) setup-msrv setup-lease setup-serve setup-browser setup-fuzz \
  setup-faults setup-dist-host setup-windows-core setup-core-ports
SETUP_RELEASE := $(SETUP_CI) setup-dist setup-go-release setup-windows

.PHONY: all help lint-help test ci release-check soak ci-prebuild-start ci-prebuild-wait ci-prebuild-wait-deb \
  setup-test setup-ci setup-release
all: test

##@ The tiers (each runs its table of suites in order; `make help` shows the tables)
# The real-clock contention tests (Rust, C, Python) run FLAKEID_STRESS_SECS each:
# 0.5 s in make test, 3 s in make ci (a suite run alone: 3 s; make stress: 30 s).
TEST_STRESS_SECS ?= 0.5
CI_STRESS_SECS ?= 3
test: ## the contributor's loop: lint and every language's own suite (TEST_SUITES; also `make`)
	@FLAKEID_STRESS_SECS=$(TEST_STRESS_SECS) MAKE="$(MAKE)" bash scripts/run-suites.sh $(TEST_SUITES)

ci: ## what CI runs (.ci/run): make test, then real stores, serve, PostgreSQL, faults, artifacts (CI_SUITES)
	@FLAKEID_STRESS_SECS=$(CI_STRESS_SECS) MAKE="$(MAKE)" bash scripts/run-suites.sh $(CI_SUITES)

release-check: ## the full cross matrix: every artifact as users install it, aarch64 under qemu (RELEASE_SUITES)
	@MAKE="$(MAKE)" bash scripts/run-suites.sh $(RELEASE_SUITES)

ci-prebuild-start: setup-postgres setup-dist-host ## make ci: start the .deb's, the release and the static CLIs' builds in the background
	@MAKE="$(MAKE)" bash scripts/ci-prebuild.sh start

ci-prebuild-wait-deb: ## make ci: wait for ci-prebuild-start's .deb (test-postgres's)
	@bash scripts/ci-prebuild.sh wait deb-postgres

ci-prebuild-wait: ## make ci: wait for ci-prebuild-start's builds, print their log
	@bash scripts/ci-prebuild.sh wait

# `make soak SUITE=test-lease N=20`: stops at the first failing run and says which.
N ?= 10
soak: ## SUITE=<suite> N=<n>: one suite N times in a row, stopping at the first failure (a flake's hunt)
	@test -n "$(SUITE)" || { echo "usage: make soak SUITE=<suite> N=<n>; suites: $(CI_SUITES) $(RELEASE_SUITES)" >&2; exit 2; }
	@for i in $$(seq $(N)); do echo "== soak $(SUITE): run $$i of $(N)"; \
	  $(MAKE) --no-print-directory $(SUITE) || { echo "soak: $(SUITE) failed on run $$i of $(N)" >&2; exit 1; }; done; \
	  echo "soak: $(SUITE) passed $(N) runs in a row"

setup-test: $(SETUP_TEST) ## install what make test needs (scripts/bootstrap.sh test)
setup-ci: $(SETUP_CI) ## install what make ci needs (scripts/bootstrap.sh, .ci/run)
setup-release: $(SETUP_RELEASE) ## install what make release-check needs (scripts/bootstrap.sh release)

help: ## this list
	@echo "usage: make <target> [VAR=value ...]   (CONTRIBUTING.md is the map; make with no target = make test)"
	@awk 'BEGIN { FS = ":[^#]*## " } /^##@ / { printf "\n%s\n", substr($$0, 5); next } \
	  /^[a-zA-Z0-9_.%-]+:[^=].*## / { printf "  %-20s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
	@printf '\nThe tiers run these suites, in this order:\n'
	@for t in "test:$(strip $(TEST_SUITES))" "ci:(test's, then) $(strip $(filter-out $(TEST_SUITES),$(CI_SUITES)))" \
	  "release-check:$(strip $(RELEASE_SUITES))"; do \
	  printf '%s\n' "$${t#*:}" | fold -s -w 76 | sed "1s/^/  $$(printf '%-14s' "$${t%%:*}")/; 2,\$$s/^/                /"; done

# The check behind `make help`: every suite of the tables, and every target a doc
# names as `make <target>` (tracked Markdown: CONTRIBUTING.md, README.md, docs/, the
# packages' READMEs), has a `## ` line. Part of make lint.
HELP_DOCS = $(shell git ls-files '*.md' ':!CHANGELOG.md' 2>/dev/null)
lint-help:
	@helped=$$(sed -nE 's/^([a-zA-Z0-9_.%-]+):[^=#]*## .*/\1/p' $(MAKEFILE_LIST)); \
	  documented=$$(grep -ohE '(`|^\s*)make( [A-Z_]+=[^ `]*)* [a-z][a-z0-9-]*' $(HELP_DOCS) /dev/null | awk '{ print $$NF }'); \
	  missing=$$(for t in help $(TEST_SUITES) $(CI_SUITES) $(RELEASE_SUITES) $$documented; do \
	    grep -qxF -- "$$t" <<<"$$helped" || echo "$$t"; done | sort -u | tr '\n' ' '); \
	  [ -z "$$missing" ] || { echo "lint: no help line (\`target: deps ## one line\`) for: $$missing" >&2; \
	    echo "  (a suite of the tiers or a target a doc names as \`make <target>\`; make help lists them)" >&2; exit 1; }

# ---------------------------------------------------------------------------------
# Shared by the mk/*.mk files.
# The shipped-settings builds of the bindings in make test (the Node addon, the C
# library, the Python module: profile dist, LTO across crates) all name this machine's
# target explicitly, as napi-rs always does (target/<host>/dist): each LTO build of a
# cdylib then reuses the others' dependencies (bitcode only), instead of compiling the
# network stack once per binding (docs/performance.md, "Where the time goes").
HOST_TRIPLE := $(or $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p'),no-rustc-on-PATH)
# Cargo's output directory, as cargo picks it: $$CARGO_TARGET_DIR when set, else
# target/. Made absolute and exported, so that a relative value means the same in
# every recipe that changes directory and in every script; each path to a cargo
# output (the CLI, the C library, the faults' drivers) starts with $(TARGET).
ifneq ($(strip $(CARGO_TARGET_DIR)),)
override CARGO_TARGET_DIR := $(abspath $(CARGO_TARGET_DIR))
export CARGO_TARGET_DIR
endif
TARGET := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
# maturin (pip install ./python) passes --target only when asked; this asks.
PIP_BUILD_ENV := CARGO_BUILD_TARGET=$(HOST_TRIPLE)

# The setups' Debian packages, installed by the one script that installs any
# (scripts/apt-install.sh: a no-op without packages). A setup names each package
# with its check: $(call need,COMMAND,PACKAGES) is PACKAGES when COMMAND is not on
# PATH, $(call need-file,PATH,PACKAGES) when no file matches PATH (a glob).
APT_INSTALL := bash scripts/apt-install.sh
need = $(if $(shell command -v $(1) 2>/dev/null),,$(2))
need-file = $(if $(wildcard $(1)),,$(2))
need-venv = $(if $(shell python3 -m venv --help >/dev/null 2>&1 && echo y),,python3-venv)

# rustc run by a setup runs without make's jobserver: scripts/bootstrap.sh runs four
# setups at once (make -j4), make 4.3 hands its jobserver's pipe only to recipes that
# run make, and rustc warns that it cannot open the one MAKEFLAGS names (cargo falls
# back to its own in silence).
NO_JOBSERVER := env -u MAKEFLAGS -u MFLAGS
# rustup changes one toolchain directory: two setups adding components or targets at
# once (bootstrap runs four setups in parallel) collide on its files ("detected
# conflict" while installing rust-std), so every change goes through one lock.
RUSTUP := flock /tmp/flakeid-rustup.lock rustup

-include mk/rust.mk $(filter-out mk/rust.mk,$(wildcard mk/*.mk))
