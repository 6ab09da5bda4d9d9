#!/usr/bin/env bash
# `make release-check-go`: the packed module (make dist-go) as a user gets it. A fresh
# `go mod` project, with no cargo or rustc on PATH, an empty module cache and only
# dist/goproxy as GOPROXY, runs `go get github.com/flakeid/flakeid-go@v<v>`, builds the
# README's first example and runs it; then builds it for linux/arm64 (Debian's
# aarch64 cross compiler as cgo's CC) and runs that under qemu-aarch64-static.
# (Its tools: make setup-go-release, a prerequisite.)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
module=$(sed -n 's/^module //p' go/go.mod)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
go=$(command -v go || echo /usr/local/go/bin/go)
export PATH="$(dirname "$go"):/usr/bin:/bin"
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "release-check-go: cargo/rustc still on PATH ($PATH)" >&2
  exit 1
fi
export GOPROXY="file://$root/dist/goproxy" GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local \
  GOMODCACHE="$work/modcache" GOPATH="$work/gopath" CGO_ENABLED=1
mkdir "$work/app"
cd "$work/app"
go mod init example/app >/dev/null 2>&1 # Go reserves example/ for paths like this one
cat > main.go <<GO
package main

import (
	"fmt"

	"$module"
)

func main() {
	gen, err := flakeid.New(flakeid.Options{Datacenter: 1, Worker: 2})
	if err != nil {
		panic(err)
	}
	defer gen.Close()
	id, _ := gen.Next()
	p, _ := id.Parts()
	fmt.Println(id, p.Datacenter, p.Worker, flakeid.Version())
}
GO
go get "$module@v$version"
grep -q "$module v$version" go.mod
go build -o app .
out=$(./app)
echo "release-check-go: linux/amd64: $out"
[[ $out =~ ^[0-9]+\ 1\ 2\ $version$ ]] || { echo "release-check-go: unexpected output" >&2; exit 1; }
GOARCH=arm64 CC=aarch64-linux-gnu-gcc go build -o app-arm64 .
readelf -h app-arm64 | grep -q AArch64
out=$(qemu-aarch64-static -L /usr/aarch64-linux-gnu ./app-arm64)
echo "release-check-go: linux/arm64 (qemu): $out"
[[ $out =~ ^[0-9]+\ 1\ 2\ $version$ ]] || { echo "release-check-go: unexpected arm64 output" >&2; exit 1; }
# windows/amd64: cgo with mingw-w64 against lib/windows_amd64, run under Wine 8 with
# the WINEPREFIX (and its bcryptprimitives stub) that `make setup-windows` makes.
wineprefix=${WINEPREFIX:-${CARGO_TARGET_DIR:-$root/target}/wine}
wine=${WINE:-/usr/lib/wine/wine64}
if command -v x86_64-w64-mingw32-gcc >/dev/null && [ -x "$wine" ] && [ -d "$wineprefix/drive_c" ]; then
  GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc go build -o app.exe .
  out=$(WINEPREFIX="$wineprefix" WINEDEBUG=-all "$wine" ./app.exe | tr -d '\r')
  echo "release-check-go: windows/amd64 (Wine): $out"
  [[ $out =~ ^[0-9]+\ 1\ 2\ $version$ ]] || { echo "release-check-go: unexpected windows output" >&2; exit 1; }
else
  echo "release-check-go: windows/amd64 NOT CHECKED: no mingw-w64, Wine or $wineprefix (make setup-windows)"
fi
# darwin: not linkable here (go/native.go names Apple's frameworks; no macOS SDK).
echo "release-check-go: ok ($(du -h "$root/dist/flakeid-go-$version.zip" | cut -f1) module zip)"
