#!/usr/bin/env bash
# `make dist-go`: the Go module as users get it, built from the C SDKs that
# `scripts/dist.sh c` makes (glibc 2.17 builds, LLVM bitcode trimmed):
#   dist/flakeid-go-<v>.zip    the module zip (what the Go module proxy serves):
#                              github.com/flakeid/flakeid-go@v<v>/{*.go, go.mod, README.md,
#                              LICENSE-*, include/flakeid.h, lib/linux_{amd64,arm64}/libflakeid.a}
#   dist/goproxy/              the same as a GOPROXY=file://... tree (make release-check-go)
# Publishing is a tag v<v> on a commit of github.com/flakeid/flakeid-go holding exactly
# these files (see go/README.md, "Releasing"); the zip is what the proxy will serve for it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
module=$(sed -n 's/^module //p' go/go.mod)
sdk() { echo "dist/flakeid-$version-$1-unknown-linux-gnu.tar.gz"; }
if [ ! -f "$(sdk x86_64)" ] || [ ! -f "$(sdk aarch64)" ]; then
  bash scripts/dist.sh c
fi
stage=target/dist-stage/go/module
rm -rf "$stage"
mkdir -p "$stage/include" "$stage/lib/linux_amd64" "$stage/lib/linux_arm64"
for f in go/*.go; do
  [[ $f == *_test.go ]] || cp "$f" "$stage/"
done
cp go/go.mod go/README.md LICENSE-MIT LICENSE-APACHE "$stage/"
cp -L include/flakeid.h "$stage/include/flakeid.h" # the repository has a symlink
for pair in x86_64:linux_amd64 aarch64:linux_arm64; do
  t=${pair%%:*} dir=${pair#*:}
  tar -xzOf "$(sdk "$t")" "flakeid-$version-$t-unknown-linux-gnu/lib/libflakeid.a" > "$stage/lib/$dir/libflakeid.a"
done
FLAKEID_GO_TIME=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ) \
  python3 go/release/modzip.py "$stage" "$module" "v$version" dist/goproxy "dist/flakeid-go-$version.zip"
(cd dist && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum > SHA256SUMS)
echo "dist-go: dist/flakeid-go-$version.zip ($(du -h "dist/flakeid-go-$version.zip" | cut -f1)), dist/goproxy/$module/@v/v$version.*"
