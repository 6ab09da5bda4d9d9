# Go: go/, a cgo module over libflakeid.a (go/README.md); go/frameworks, a module of
# its own (pgx, GORM: database/sql and docs/frameworks.md's GORM example); go/bench.
# The released module (dist-go) is a module zip with lib/linux_{amd64,arm64}/libflakeid.a
# from the C SDKs of `scripts/dist.sh c`, and a GOPROXY tree in dist/goproxy.
GO ?= go
GO_ENV = CGO_ENABLED=1


.PHONY: setup-go setup-go-release lib-go test-go test-go-stores bench-go dist-go release-check-go \
  setup-actionlint lint-workflows

##@ Go: go/, a cgo module over libflakeid.a
# Go 1.24+ (go/go.mod; runtime.AddCleanup) and a C compiler for cgo. Debian 12
# packages Go 1.19 only, so a machine without a newer go (the project's have
# /usr/local/go) gets a clear failure rather than an install. go/frameworks'
# modules (pgx, GORM) come from the module proxy here, go/bench's (the peers) when
# the bench first runs.
setup-go: ## checks for Go 1.24+ with cgo; a C compiler (Debian); go/frameworks' modules
	@$(APT_INSTALL) setup-go $(call need,cc,gcc libc6-dev)
	@go=$$(command -v $(GO) || echo /usr/local/go/bin/go); \
	  [ -x "$$go" ] || { echo "setup-go: no go on PATH or in /usr/local/go (Go 1.24+ needed)" >&2; exit 1; }; \
	  v=$$("$$go" env GOVERSION); minor=$$(sed -n 's/^go1\.\([0-9]*\).*/\1/p' <<<"$$v"); \
	  [ "$${minor:-0}" -ge 24 ] || { echo "setup-go: $$v is too old (Go 1.24+ needed)" >&2; exit 1; }; \
	  [ "$$("$$go" env CGO_ENABLED)" = 1 ] || { echo "setup-go: cgo is disabled (CGO_ENABLED=0)" >&2; exit 1; }
	cd go/frameworks && $(GO) mod download

# The arm64 flavour's cross compiler (cgo's CC) and qemu-user-static (make release-check).
setup-go-release: setup-go ## + Debian's aarch64 cross compiler and qemu (make release-check-go)
	@$(APT_INSTALL) setup-go $(call need,aarch64-linux-gnu-gcc,gcc-aarch64-linux-gnu libc6-dev-arm64-cross) \
	  $(call need,qemu-aarch64-static,qemu-user-static)

# The repository's build of the static library, where cgo looks for it.
lib-go: lib-c ## libflakeid.a where cgo looks for it (go/lib/<os>_<arch>)
	plat=$$($(GO) env GOOS)_$$($(GO) env GOARCH); mkdir -p go/lib/$$plat; \
	  ln -sf $(C_LIB_DIR)/libflakeid.a go/lib/$$plat/libflakeid.a

# go/frameworks (pgx, GORM; go.sum pins them, setup-go downloads them) runs on the
# fixture's PostgreSQL (setup-postgres-fixture). No -race there: nothing in it is
# concurrent, and pgx and GORM under the race detector are a long build.
test-go: setup-go setup-postgres-fixture lib-go ## [TIER=test: no frameworks] gofmt, vet, go test -race: vectors, goroutines, sealing, file leases; database/sql, GORM
	$(GO_ENV) GO_TEST_FLAGS='-race -parallel 8' bash scripts/suite.sh go $(if $(TIER_CI),--frameworks)

# The same lease tests against the fixture's real Redis, PostgreSQL and etcd, plain
# and TLS (tests/env/testenv.py); make ci. Without the fixture they skip (make test).
test-go-stores: setup-go setup-lease lib-go ## the lease tests on the fixture's Redis, PostgreSQL, etcd, plain and TLS
	cd go && python3 ../tests/env/testenv.py run --all -- \
	  env $(GO_ENV) FLAKEID_LEASE_REQUIRE=1 $(GO) test -race -count=1 -run '^TestLease' ./...

bench-go: setup-go lib-go ## flakeid beside bwmarrin/snowflake and sony/sonyflake v2
	cd go/bench && $(GO_ENV) $(GO) test -run '^$$' -bench . -count 5 -benchtime 1s . | tee ../../target/bench-go.txt
	python3 go/release/benchtable.py target/bench-go.txt

dist-go: setup-go ## dist/flakeid-go-<v>.zip and a GOPROXY tree (from the C SDKs)
	bash go/release/pack.sh

release-check-go: setup-go-release dist-go ## a fresh module gets it through GOPROXY=file://, no cargo; arm64 under qemu
	bash go/release/check.sh

# The GitHub workflows (.github/workflows: CI on Linux, macOS and Windows runners;
# the release) cannot run here, so they are at least linted: actionlint checks
# their syntax, expressions, runner labels and action inputs, and runs shellcheck
# (Debian's) over every `run:` script. actionlint comes from the Go module proxy,
# pinned, built once into $(TARGET)/tools.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(TARGET)/tools/actionlint-$(ACTIONLINT_VERSION)
setup-actionlint: setup-go ## actionlint (pinned, from the Go module proxy) and shellcheck (Debian)
	@$(APT_INSTALL) setup-actionlint $(call need,shellcheck,shellcheck)
	@[ -x $(ACTIONLINT) ] || { mkdir -p $(TARGET)/tools/gobin && \
	  GOBIN=$(TARGET)/tools/gobin $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) && \
	  mv $(TARGET)/tools/gobin/actionlint $(ACTIONLINT); }

lint-workflows: setup-actionlint ## actionlint (with shellcheck) over .github/workflows
	$(ACTIONLINT) -no-color
