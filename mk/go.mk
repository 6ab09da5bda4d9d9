# Go: go/, a cgo module over libflakeid.a (go/README.md).
#   make test-go            gofmt + vet, then `go test -race ./...` (shared vectors, 8
#                           goroutines, sealing, file leases); make test
#   make test-go-stores     the lease tests on the fixture's Redis, PostgreSQL and
#                           etcd, plain and TLS (tests/env/testenv.py); make ci
#   make bench-go           flakeid beside bwmarrin/snowflake and sony/sonyflake v2 (go/bench)
#   make dist-go            the module as released: dist/flakeid-go-<v>.zip (a module
#                           zip with lib/linux_{amd64,arm64}/libflakeid.a, from the C
#                           SDKs of `scripts/dist.sh c`) and a GOPROXY tree in dist/goproxy
#   make release-check-go   a fresh `go mod` project gets the packed module through
#                           GOPROXY=file://... with no cargo on PATH, builds and runs;
#                           the arm64 build runs under qemu
GO ?= go
GO_ENV = CGO_ENABLED=1


.PHONY: setup-go setup-go-release lib-go test-go test-go-stores bench-go dist-go release-check-go

setup-go:
	bash scripts/setup-go.sh

# The arm64 flavour's cross compiler and qemu (make release-check).
setup-go-release: setup-go
	bash scripts/setup-go.sh --release

# The repository's build of the static library, where cgo looks for it.
lib-go: lib-c
	plat=$$($(GO) env GOOS)_$$($(GO) env GOARCH); mkdir -p go/lib/$$plat; \
	  ln -sf $(C_LIB_DIR)/libflakeid.a go/lib/$$plat/libflakeid.a

test-go: setup-go lib-go
	test -z "$$(cd go && gofmt -l .)" || { echo "gofmt: $$(cd go && gofmt -l .)"; exit 1; }
	cd go && $(GO_ENV) $(GO) vet ./...
	cd go/bench && $(GO_ENV) $(GO) vet ./...
	cd go && $(GO_ENV) $(GO) test -race -count=1 -parallel 8 ./...

# The same lease tests against the fixture's real Redis, PostgreSQL and etcd, plain
# and TLS (tests/env/testenv.py); make ci. Without the fixture they skip (make test).
test-go-stores: setup-go setup-lease lib-go
	cd go && python3 ../tests/env/testenv.py run --all -- \
	  env $(GO_ENV) FLAKEID_LEASE_REQUIRE=1 $(GO) test -race -count=1 -run '^TestLease' ./...

bench-go: setup-go lib-go
	cd go/bench && $(GO_ENV) $(GO) test -run '^$$' -bench . -count 5 -benchtime 1s . | tee ../../target/bench-go.txt
	python3 go/release/benchtable.py target/bench-go.txt

dist-go: setup-go
	bash go/release/pack.sh

release-check-go: setup-go-release dist-go
	bash go/release/check.sh
