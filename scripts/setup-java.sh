#!/usr/bin/env bash
# What `make test-java` needs: a JDK 22 or newer (java.lang.foreign, the
# Foreign Function & Memory API), Maven, and a C compiler (NativeLayoutTest compiles
# a program against include/flakeid.h). Idempotent, non-interactive. Prints the
# JDK's home on stdout (messages go to stderr), so callers can run
#   JAVA_HOME=$(bash scripts/setup-java.sh) mvn ...
# The JDK: $FLAKEID_JAVA_HOME, else $JAVA_HOME, else the newest in /usr/lib/jvm,
# whichever is 22+ first. Debian 12 packages OpenJDK 17 only, so a machine without a
# newer JDK (the project's have Temurin 25) gets a clear failure, not an install.
# Also resolves java/pom.xml's pinned plugins once, so the offline release check
# (make release-check-java) finds them in the local repository.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
need=()
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
bash "$root/scripts/apt-install.sh" setup-java "${need[@]}" >&2

feature() { # JAVA_HOME -> the major version, or 0
  local v
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true)
  echo "${v:-0}"
}
home=""
for h in "${FLAKEID_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
  if [ -n "$h" ] && [ "$(feature "$h")" -ge 22 ]; then home=$h; break; fi
done
if [ -z "$home" ]; then
  best=0
  for h in /usr/lib/jvm/*; do
    [ -x "$h/bin/java" ] || continue
    f=$(feature "$h")
    if [ "$f" -ge 22 ] && [ "$f" -gt "$best" ]; then best=$f; home=$h; fi
  done
fi
if [ -z "$home" ]; then
  echo "setup-java: no JDK 22+ found (FLAKEID_JAVA_HOME, JAVA_HOME, /usr/lib/jvm); flakeid's Java binding uses java.lang.foreign" >&2
  exit 1
fi

stamp="$root/target/java-plugins.stamp"
if [ ! -f "$stamp" ] || [ "$root/java/pom.xml" -nt "$stamp" ]; then
  echo "setup-java: resolving java/pom.xml's plugins (JDK $home)" >&2
  JAVA_HOME=$home MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}" \
    mvn -B -q -f "$root/java/pom.xml" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:resolve-plugins >&2
  mkdir -p "$root/target"
  touch "$stamp"
fi
echo "$home"
