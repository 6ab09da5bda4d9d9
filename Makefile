# flakeid's one entry point for humans and CI: `make help` lists the three tiers
# (CONTRIBUTING.md) and every public target, one line each, read from the `## `
# comment on the target's own line, so the list cannot drift from the recipes
# (`make lint` fails when a suite or a documented target has none).
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
# app on the machine; a suite's own servers and workers inherit it. Set explicitly,
# it is also what lets a generator with no node id pick one inside a container (CI,
# a docker shell), where the default directory would be refused.
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
  test-go \
  test-java \
  test-wasm-node \
  test-docs

CI_SUITES := \
  $(TEST_SUITES) \
  test-loom \
  test-fuzz \
  test-lease \
  test-lease-bindings \
  test-fleet \
  test-serve \
  test-wasm-browser \
  test-go-stores \
  test-java-stores \
  test-faults \
  test-postgres \
  test-dist \
  test-windows \
  check-ports \
  lint-postgres \
  test-postgres-majors \
  test-serve-abuse

RELEASE_SUITES := \
  test-dist \
  test-postgres-majors \
  release-check-go \
  release-check-java \
  test-windows
# One order is a dependency: test-postgres runs after test-python and test-node
# (tests/postgres/run.py decodes SQL-made IDs with the packages they installed).

# The tier is a parameter: a suite whose tiers run different shares of it reads TIER
# (test, ci or release; run-suites.sh passes the one it runs), and a suite run alone
# runs whole (release). So make ci's lint adds the gRPC stubs' freshness to make
# test's, and make ci's test-windows, test-postgres-majors and test-dist are the
# shares of release-check's that fit its budget (CONTRIBUTING.md, "The three test
# tiers", says which and why).
TIER ?= release
ifeq ($(filter test ci release,$(TIER)),)
$(error TIER=$(TIER): one of test, ci, release)
endif
# Non-empty when the tier is at least ci, or is release: $(if $(TIER_CI),...,...).
TIER_CI := $(filter ci release,$(TIER))
TIER_RELEASE := $(filter release,$(TIER))
# make test builds the bindings' native code (the C library, the wheel, the Node addon:
# profile dist) without LTO across crates, in cargo's default 16 codegen units: each
# of its three fat-LTO links runs on one core. make ci and a suite run alone build and
# test the shipped settings (docs/development.md, "The three test tiers"; the figures:
# docs/development.md, "make test on a fresh machine").
ifeq ($(TIER),test)
export CARGO_PROFILE_DIST_LTO := false
export CARGO_PROFILE_DIST_CODEGEN_UNITS := 16
endif

# make ci's background chains (scripts/run-suites.sh), each started as SCHED_IDLE once
# the suite of its `@SUITE` has passed. `BUILD>SUITE`: SUITE waits for BUILD (and fails
# if it did; its make gets BUILT=BUILD); `SUITE>SUITE`: the suite runs beside the
# others, and the run waits for it at its place in CI_SUITES. test-loom, then the fuzz
# targets' build, run beside make test's suites after test-rust, which leave a core idle
# most of the time: the loom models only compute (a model checker's verdict cannot
# depend on timing), and the fuzz build has a workspace of its own. The other builds
# wait for test-fuzz (beside make test's compiling suites they slowed them:
# docs/development.md, "Where the time goes") and run beside the suites that mostly
# wait, two chains side by side (one chain's single-core fat-LTO tail leaves the other
# core to the other), in target directories or profiles no foreground cargo locks before
# their suite. deb-postgres's chain starts first, alone beside test-lease: test-postgres
# waits for it, and test-dist, which waits for dist-cli, comes after test-postgres.
# check-ports (which no timing can fail: the core compiled for macOS and Windows, the
# MSRV check, and the core without std run under qemu on a clock the program moves
# itself) follows dist-cli, and lint-postgres (the extension's rustfmt and clippy,
# compile-only) follows deb-postgres-majors: both run beside
# test-postgres, which leaves a core idle most of its time, and end before their
# places in CI_SUITES (docs/development.md, "Where the time goes"). After test-dist,
# test-postgres-majors, which mostly waits (servers starting, borrow windows,
# pg_upgrade), runs at normal priority beside test-windows
# (not beside test-dist: `make dist` empties dist/, where the extension's packages are
# written); test-serve-abuse, whose probes must answer within 100 ms, runs after it,
# alone, on dist-cli's static CLI. The kube-apiserver of test-lease and test-fleet,
# built from source on a fresh machine (its cost: docs/leases.md, "Kubernetes lease
# costs"), builds beside make test's suites from test-c on, in the CPU time they
# leave idle (they wait on pip, npm, Go, Maven and their tests' servers); test-lease
# waits for what is left of it.
CI_BACKGROUND := @test-rust test-loom>test-loom fuzz-build>test-fuzz | @test-c kube-apiserver>test-lease | \
  @test-fuzz deb-postgres>test-postgres deb-postgres-majors>test-postgres-majors lint-postgres>lint-postgres | \
  @test-lease dist-cli>test-dist check-ports>check-ports | \
  @test-dist normal test-postgres-majors>test-postgres-majors
# make test's one: in a fresh clone on a fresh machine, make test installs what its
# suites need as they come, and setup-wasm's build of wasm-bindgen-cli (a target
# directory of its own) ran in the foreground. It runs beside test-python, test-node,
# test-go and test-java, which wait on pip, npm, Go and Maven (beside test-rust's or
# test-c's compiles it slowed them: docs/performance.md, "make test on a fresh
# machine"); warm, a no-op. Then the wasm package's build (a fat-LTO link on one
# core, and wasm-opt). test-wasm-node runs after test-java so that the chain has the
# four suites' idle core to finish in (docs/performance.md, "make test on a fresh
# machine"), and test-docs, which loads the package, after it.
TEST_BACKGROUND := @test-c setup-wasm>test-wasm-node wasm>test-wasm-node
# ---------------------------------------------------------------------------------

# What each tier installs (scripts/bootstrap.sh TIER = make setup TIER=..., several
# at once). The setups that compile come first, so that the downloads (apt, npm,
# PyPI, Maven, toolchains) run beside them instead of after them: setup-postgres
# (cargo install cargo-pgrx), setup-wasm (cargo install wasm-bindgen-cli), setup-node
# (the addon's build). setup-dist and setup-windows read TIER too.
SETUP_test := setup-rust setup-wasm setup-node setup-c setup-python setup-go setup-java setup-actionlint \
  setup-ruff setup-eslint \
  setup-postgres-fixture
SETUP_ci := setup-postgres $(SETUP_test) setup-lease setup-serve setup-browser setup-fuzz \
  setup-faults setup-dist setup-windows setup-ports
SETUP_release := $(SETUP_ci) setup-dist-cross setup-go-release

.PHONY: all help lint-help test ci release-check soak setup
all: test

##@ The tiers (each runs its table of suites in order, with TIER set; `make help` shows them)
# The real-clock contention tests (Rust, C, Python) run FLAKEID_STRESS_SECS each:
# TEST_STRESS_SECS in make test, CI_STRESS_SECS in make ci, STRESS_SECS in make stress.
TEST_STRESS_SECS ?= 0.5
CI_STRESS_SECS ?= 3
RUN_SUITES = MAKE="$(MAKE)" bash scripts/run-suites.sh
test: ## the contributor's loop: lint and every language's own suite (TEST_SUITES; also `make`)
	@FLAKEID_STRESS_SECS=$(TEST_STRESS_SECS) TIER=test BACKGROUND='$(TEST_BACKGROUND)' \
	  $(RUN_SUITES) $(TEST_SUITES)

ci: ## what CI runs (.ci/run): make test, then real stores, serve, PostgreSQL, faults, artifacts (CI_SUITES)
	@FLAKEID_STRESS_SECS=$(CI_STRESS_SECS) TIER=ci BACKGROUND='$(CI_BACKGROUND)' \
	  $(RUN_SUITES) $(CI_SUITES)

release-check: ## the full cross matrix: every artifact as users install it, aarch64 under qemu (RELEASE_SUITES)
	@TIER=release $(RUN_SUITES) $(RELEASE_SUITES)

# `make soak SUITE=test-lease N=20`: stops at the first failing run and says which.
N ?= 10
soak: ## SUITE=<suite> N=<n> [TIER=]: one suite N times in a row, stopping at the first failure (a flake's hunt)
	@test -n "$(SUITE)" || { echo "usage: make soak SUITE=<suite> N=<n>; suites: $(CI_SUITES) $(RELEASE_SUITES)" >&2; exit 2; }
	@for i in $$(seq $(N)); do echo "== soak $(SUITE): run $$i of $(N)"; \
	  $(MAKE) --no-print-directory $(SUITE) || { echo "soak: $(SUITE) failed on run $$i of $(N)" >&2; exit 1; }; done; \
	  echo "soak: $(SUITE) passed $(N) runs in a row"

setup: $(SETUP_$(TIER)) ## TIER=test|ci|release: install what the tier needs (scripts/bootstrap.sh TIER)

help: ## this list
	@echo "usage: make <target> [VAR=value ...]   (CONTRIBUTING.md is the map; make with no target = make test)"
	@printf '\nThe three tiers (TIER=test, ci, release) run these suites, in this order:\n'
	@for t in "test:$(strip $(TEST_SUITES))" "ci:(test's, then) $(strip $(filter-out $(TEST_SUITES),$(CI_SUITES)))" \
	  "release-check:$(strip $(RELEASE_SUITES))"; do \
	  printf '%s\n' "$${t#*:}" | fold -s -w 76 | sed "1s/^/  $$(printf '%-14s' "$${t%%:*}")/; 2,\$$s/^/                /"; done
	@awk 'BEGIN { FS = ":[^#]*## " } /^##@ / { printf "\n%s\n", substr($$0, 5); next } \
	  /^[a-zA-Z0-9_.%-]+:[^=].*## / { printf "  %-20s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

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
# network stack once per binding (docs/development.md, "Where the time goes").
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
