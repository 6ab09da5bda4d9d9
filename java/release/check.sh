#!/usr/bin/env bash
# `make release-check-java`: the packed jar (make dist-java) as a user gets it. It is
# installed into the local Maven repository, then a fresh Maven project that depends
# on io.github.flakeid:flakeid:<v> is built offline (-o) and its sample run, with
# no cargo or rustc on PATH and no flakeid.library.path: the native comes out of the
# jar. The jar's aarch64 library is checked for its machine and its exports (no
# aarch64 JVM here to load it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
java_home=$(bash scripts/setup-java.sh)
jar="$root/dist/flakeid-java-$version.jar"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$java_home/bin:/usr/bin:/bin" JAVA_HOME="$java_home"
export MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}"
unset FLAKEID_LIBRARY_PATH
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "release-check-java: cargo/rustc still on PATH" >&2
  exit 1
fi
mvn() { command mvn -B -q -ntp -o -Dstyle.color=never "$@"; }
mvn org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file -Dfile="$jar" \
  -DpomFile="$root/dist/flakeid-java-$version.pom"
cp -r java/release/sample "$work/app"
sed -i "s/@VERSION@/$version/" "$work/app/pom.xml"
(cd "$work/app" && mvn package)
repo=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
dep="$repo/io/github/flakeid/flakeid/$version/flakeid-$version.jar"
cmp "$dep" "$jar"
out=$(cd "$work/app" && java --enable-native-access=ALL-UNNAMED -cp "target/classes:$dep" sample.Sample)
echo "release-check-java: linux-x86_64: $out"
[[ $out =~ ^[0-9]+\ 1\ 2\ $version$ ]] || { echo "release-check-java: unexpected output" >&2; exit 1; }
unzip -p "$jar" io/github/flakeid/native/linux-aarch64/libflakeid.so > "$work/arm.so"
readelf -h "$work/arm.so" | grep -q 'Machine:.*AArch64'
for sym in flakeid_options_default flakeid_generator_new flakeid_next_id flakeid_next_ids flakeid_decompose; do
  readelf --dyn-syms --wide "$work/arm.so" | grep -q " $sym$" || { echo "release-check-java: aarch64 lacks $sym" >&2; exit 1; }
done
echo "release-check-java: ok (linux-aarch64 native: AArch64, exports present; jar $(du -h "$jar" | cut -f1))"
