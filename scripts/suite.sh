#!/usr/bin/env bash
# One language's suite, the same command on Linux, macOS and Windows (Git Bash):
# what `make test-<lang>` runs and what the workflow's native jobs run (docs/development.md,
# "The three test tiers", says which to type). It installs no system package: the
# toolchains are the caller's (make's setup targets, actions/setup-* in the workflow,
# your own elsewhere), and the C library and Node addon are built before it.
#   scripts/suite.sh python|node|go|java [--frameworks]
# --frameworks: the framework adapters' tests too, on the fixture's PostgreSQL
#   (tests/env/testenv.py: a PostgreSQL installed on the machine).
# Environment: PYTHON, the interpreter whose environment gets the package (default
# python3; make's is python/.venv's); NODE, the command that runs node (default node;
# scripts/test-windows.sh: node.exe under Wine); GO_TEST_FLAGS (make: -race -parallel 8;
# scripts/test-windows.sh: -exec wine64 with GOOS=windows); MVN_GOAL (default test;
# make: install) and MVN_ARGS (make: -Dnatives.dir=...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lang=${1:?usage: scripts/suite.sh python|node|go|java [--frameworks]}
frameworks=
[ "${2:-}" = --frameworks ] && frameworks=1
fixture=(python3 "$root/tests/env/testenv.py" run --postgres --)
mvn=(mvn -B -ntp -Dstyle.color=never)
cd "$root"

case $lang in
  python)
    py=${PYTHON:-python3}
    # pip rebuilds and reinstalls a local folder: the tests see the current source.
    "$py" -m pip install --quiet --disable-pip-version-check "./python[test${frameworks:+,test-frameworks}]"
    # The installed package, never the source folder: no current directory on
    # sys.path (PYTHONSAFEPATH, for pytest alone: Django's manage commands need it),
    # and the checks that import by name run elsewhere. Two workers (pytest-xdist), as
    # users run their suites: every worker imports every test module, so a generator
    # made at import with a fixed node id is refused by the host guard in the second.
    (cd python && PYTHONSAFEPATH=1 "$py" -m pytest -n 2 tests)
    away=$(mktemp -d)
    trap 'rm -rf "$away"' EXIT
    # Without --frameworks the adapters (flakeid's public submodules) cannot be
    # imported, so stubtest leaves them to the tier that installs their frameworks.
    stubtest=(--mypy-config-file "$root/python/pyproject.toml")
    if [ -z "$frameworks" ]; then
      adapters=()
      for f in python/flakeid/[a-z]*; do
        f=${f##*/}
        case $f in *.py) adapters+=("${f%.py}") ;; *.*) ;; *) adapters+=("$f") ;; esac
      done
      (IFS='|' && printf 'flakeid\\.(%s)(\\..*)?\n' "${adapters[*]}") >"$away/adapters"
      stubtest+=(--allowlist "$away/adapters" --ignore-unused-allowlist)
    fi
    (cd "$away" && "$py" -m mypy.stubtest "${stubtest[@]}" flakeid)
    if [ -n "$frameworks" ]; then
      (cd "$away" && "${fixture[@]}" "$py" -m pytest -p no:cacheprovider \
        --rootdir "$root/python/tests-frameworks" "$root/python/tests-frameworks")
    fi
    ;;
  node)
    cd node
    read -ra node_cmd <<<"${NODE:-node}"
    "${node_cmd[@]}" --test test/*.test.mjs
    [ -z "$frameworks" ] || "${fixture[@]}" node --test test/frameworks/*.test.mjs
    ;;
  go)
    cd go
    test -z "$(gofmt -l .)" || { echo "gofmt: $(gofmt -l .)" >&2; exit 1; }
    go vet ./...
    (cd bench && go vet ./...)
    # docs/migrating.md's Go tables, bit for bit against bwmarrin/snowflake and sonyflake
    (cd bench && go test -count=1 -run '^TestPeers' .)
    # shellcheck disable=SC2086 # flags
    go test ${GO_TEST_FLAGS:-} -count=1 ./...
    if [ -n "$frameworks" ]; then
      cd frameworks
      go vet ./...
      "${fixture[@]}" go test -count=1 ./...
    fi
    ;;
  java)
    # shellcheck disable=SC2086 # arguments
    (cd java && "${mvn[@]}" ${MVN_ARGS:-} "${MVN_GOAL:-test}")
    if [ -n "$frameworks" ]; then
      (cd java/hibernate && "${fixture[@]}" "${mvn[@]}" install)
      (cd java/spring && "${fixture[@]}" "${mvn[@]}" verify)
    fi
    ;;
  *)
    echo "scripts/suite.sh: no suite $lang (python, node, go, java)" >&2
    exit 2
    ;;
esac
