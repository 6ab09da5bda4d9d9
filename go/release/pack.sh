#!/usr/bin/env bash
# `make dist-go`: the Go module as users get it, built from the C SDKs that
# `scripts/dist.sh c` makes (glibc 2.17 builds, LLVM bitcode trimmed):
#   dist/flakeid-go-<v>.zip    the module zip (what the Go module proxy serves):
#                              github.com/flakeid/flakeid-go@v<v>/{*.go, go.mod, README.md,
#                              LICENSE-*, include/flakeid.h, lib/<GOOS>_<GOARCH>/libflakeid.a for
#                              linux_{amd64,arm64}, darwin_{amd64,arm64}, windows_amd64}
#   dist/goproxy/              the same as a GOPROXY=file://... tree (make release-check-go)
# Publishing is a tag v<v> on a commit of github.com/flakeid/flakeid-go holding exactly
# these files (see go/README.md, "Releasing"); the zip is what the proxy will serve for it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
module=$(sed -n 's/^module //p' go/go.mod)
# GOOS_GOARCH folder : the C SDK it comes from (scripts/dist.sh's part that makes it).
sdks=(
  "linux_amd64:flakeid-$version-x86_64-unknown-linux-gnu.tar.gz:c"
  "linux_arm64:flakeid-$version-aarch64-unknown-linux-gnu.tar.gz:c"
  "darwin_amd64:flakeid-$version-x86_64-apple-darwin.tar.gz:macos"
  "darwin_arm64:flakeid-$version-aarch64-apple-darwin.tar.gz:macos"
  "windows_amd64:flakeid-$version-x86_64-pc-windows-gnu.zip:windows"
)
missing=()
for s in "${sdks[@]}"; do
  IFS=: read -r _ file part <<<"$s"
  [ -f "dist/$file" ] || [[ " ${missing[*]} " == *" $part "* ]] || missing+=("$part")
done
[ ${#missing[@]} -eq 0 ] || bash scripts/dist.sh "${missing[@]}"
stage=target/dist-stage/go/module
rm -rf "$stage"
mkdir -p "$stage/include"
for f in go/*.go; do
  [[ $f == *_test.go ]] || cp "$f" "$stage/"
done
cp go/go.mod go/README.md LICENSE-MIT LICENSE-APACHE "$stage/"
cp -L include/flakeid.h "$stage/include/flakeid.h" # the repository has a symlink
for s in "${sdks[@]}"; do
  IFS=: read -r dir file _ <<<"$s"
  mkdir -p "$stage/lib/$dir"
  case $file in
    *.tar.gz) tar -xzOf "dist/$file" "${file%.tar.gz}/lib/libflakeid.a" > "$stage/lib/$dir/libflakeid.a" ;;
    *.zip) unzip -p "dist/$file" "${file%.zip}/lib/libflakeid.a" > "$stage/lib/$dir/libflakeid.a" ;;
  esac
  [ -s "$stage/lib/$dir/libflakeid.a" ] || { echo "dist-go: no lib/libflakeid.a in dist/$file" >&2; exit 1; }
done
FLAKEID_GO_TIME=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ) \
  python3 go/release/modzip.py "$stage" "$module" "v$version" dist/goproxy "dist/flakeid-go-$version.zip"
(cd dist && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum > SHA256SUMS)
echo "dist-go: dist/flakeid-go-$version.zip ($(du -h "dist/flakeid-go-$version.zip" | cut -f1)), dist/goproxy/$module/@v/v$version.*"
