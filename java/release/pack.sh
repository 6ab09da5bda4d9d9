#!/usr/bin/env bash
# `make dist-java`: dist/flakeid-java-<v>.jar (and its pom) with libflakeid.so for
# linux-x86_64 and linux-aarch64 inside, taken from the C SDKs `scripts/dist.sh c`
# makes (glibc 2.17 builds). Tests run against the host's copy before packing.
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
export JAVA_HOME=$(bash scripts/setup-java.sh)
export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}"
# The tests run with the host's library from the packed set (the glibc 2.17 build).
(cd java && mvn -B -q -ntp -Dstyle.color=never -Dnatives.dir="$natives" -Dtest='VectorsTest,ApiTest,NativeLayoutTest' \
  -Dsurefire.failIfNoSpecifiedTests=false package)
jar="java/target/flakeid-$version.jar"
for t in x86_64:X86-64 aarch64:AArch64; do
  so="io/github/flakeid/native/linux-${t%%:*}/libflakeid.so"
  unzip -p "$jar" "$so" | cmp - "$natives/linux-${t%%:*}/libflakeid.so" \
    || { echo "dist-java: $so missing or not the C SDK's" >&2; exit 1; }
done
cp "$jar" "dist/flakeid-java-$version.jar"
cp java/pom.xml "dist/flakeid-java-$version.pom"
(cd dist && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | sort | xargs sha256sum > SHA256SUMS)
echo "dist-java: dist/flakeid-java-$version.jar ($(du -h "dist/flakeid-java-$version.jar" | cut -f1)): $(unzip -l "$jar" | grep -c 'libflakeid.so') natives"
