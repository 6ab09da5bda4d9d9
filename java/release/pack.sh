#!/usr/bin/env bash
# `make dist-java`: dist/flakeid-java-<v>.jar (and its pom) with libflakeid.so for
# linux-x86_64 and linux-aarch64, libflakeid.dylib for macos-x86_64 and macos-aarch64
# and flakeid.dll for windows-x86_64 inside, taken from the C SDKs `scripts/dist.sh
# c`, `macos` and `windows` make (glibc 2.17 builds for Linux). Tests run against the host's copy before packing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
sdk() { echo "dist/flakeid-$version-$1-unknown-linux-gnu.tar.gz"; }
if [ ! -f "$(sdk x86_64)" ] || [ ! -f "$(sdk aarch64)" ]; then
  bash scripts/dist.sh c
fi
natives="$root/target/dist-stage/java-natives"
rm -rf "$natives"
for t in x86_64 aarch64; do
  mkdir -p "$natives/linux-$t"
  tar -xzOf "$(sdk "$t")" "flakeid-$version-$t-unknown-linux-gnu/lib/libflakeid.so" > "$natives/linux-$t/libflakeid.so"
done
# macOS and Windows, from their C SDKs (scripts/dist.sh macos / windows).
for spec in macos-x86_64:x86_64-apple-darwin macos-aarch64:aarch64-apple-darwin; do
  [ -f "dist/flakeid-$version-${spec#*:}.tar.gz" ] || bash scripts/dist.sh macos
  mkdir -p "$natives/${spec%%:*}"
  tar -xzOf "dist/flakeid-$version-${spec#*:}.tar.gz" "flakeid-$version-${spec#*:}/lib/libflakeid.dylib" > "$natives/${spec%%:*}/libflakeid.dylib"
done
win=flakeid-$version-x86_64-pc-windows-gnu
[ -f "dist/$win.zip" ] || bash scripts/dist.sh windows
mkdir -p "$natives/windows-x86_64"
unzip -p "dist/$win.zip" "$win/bin/flakeid.dll" > "$natives/windows-x86_64/flakeid.dll"
export JAVA_HOME=$(bash scripts/setup-java.sh)
export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}"
# The tests run with the host's library from the packed set (the glibc 2.17 build).
(cd java && mvn -B -q -ntp -Dstyle.color=never -Dnatives.dir="$natives" -Dtest='VectorsTest,ApiTest,NativeLayoutTest,NativeLibraryTest' \
  -Dsurefire.failIfNoSpecifiedTests=false package)
jar="java/target/flakeid-$version.jar"
for lib in linux-x86_64/libflakeid.so linux-aarch64/libflakeid.so macos-x86_64/libflakeid.dylib \
           macos-aarch64/libflakeid.dylib windows-x86_64/flakeid.dll; do
  unzip -p "$jar" "io/github/flakeid/native/$lib" | cmp - "$natives/$lib" \
    || { echo "dist-java: io/github/flakeid/native/$lib missing or not the C SDK's" >&2; exit 1; }
done
cp "$jar" "dist/flakeid-java-$version.jar"
cp java/pom.xml "dist/flakeid-java-$version.pom"
(cd dist && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum > SHA256SUMS)
echo "dist-java: dist/flakeid-java-$version.jar ($(du -h "dist/flakeid-java-$version.jar" | cut -f1)): $(unzip -l "$jar" | grep -cE 'native/.*(libflakeid\.(so|dylib)|flakeid\.dll)$') natives"
