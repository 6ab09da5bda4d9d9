#!/usr/bin/env python3
"""`make test-dist`: the artifacts in dist/ (from `make dist`), installed and used as a
user would, on a PATH with no cargo, rustc or maturin. Each check is a named case
(tests/env/cases.py); a run ends with `N passed, N failed` and exits 1 when any failed.

The macOS and Windows artifacts are tests/dist/cross.py's (make test-dist, TIER=release).
  * names, the one version in each artifact, SHA256SUMS, a size budget for each file;
  * the x86_64 wheel in fresh venvs of Python 3.9 and 3.13 (pyenv), running
    python/tests against the installed package; auditwheel on every wheel; the sdist
    builds from source (that step alone gets cargo back);
  * the npm tarballs installed offline into a fresh project, running node/test
    against the installed @flakeid/node; then without the native package, the wasm
    fallback (warned once) runs the same suite; @flakeid/wasm from ESM and CJS;
  * examples/c against the unpacked (and moved) C SDK: CMake find_package and
    pkg-config, shared and static;
  * the aarch64 CLI under qemu-aarch64-static decodes the seed's worked example;
    every aarch64 artifact is an aarch64 ELF with the claimed tags.
FLAKEID_DIST_HOST=1 (make test-dist TIER=ci, after `FLAKEID_DIST_HOST=1 scripts/dist.sh`):
the same checks of this machine's artifacts only; no aarch64, musl wheel or addon,
sdist build. Those are built for the host, not glibc 2.17: the wheel's tag is the
manylinux policy of this machine's build (auditwheel agrees), not manylinux2014.
A case that needs what a failed one made (a venv, an unpacked SDK) fails too, naming it.
"""

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
from cases import Cases  # noqa: E402

DIST = os.path.join(ROOT, "dist")
# A user's PATH: the system's, without cargo, rustc or maturin.
USER_PATH = "/usr/local/bin:/usr/bin:/bin"
# The seed's worked example, as `flakeid decode` prints it.
DECODE_ID = "910499571847892992"
DECODE_LINES = ("time        2017-09-20T13:43:08.849Z", "datacenter  17", "worker      25", "sequence    0",
                "base62      15G63YLn9Ae")


def workspace_version():
    text = open(os.path.join(ROOT, "Cargo.toml")).read()
    section = text.split("[workspace.package]", 1)[1].split("\n[", 1)[0]
    return re.search(r'^version = "(.*)"', section, re.M).group(1)


def user_env(**extra):
    return {**os.environ, "PATH": USER_PATH, "CARGO_HOME": "/nonexistent", "RUSTUP_HOME": "/nonexistent", **extra}


def run(cmd, cwd=ROOT, env=None, capture=True, what=None):
    """Runs cmd; its stdout (when captured), or an AssertionError naming it and what
    it printed when it failed."""
    r = subprocess.run(cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.STDOUT if capture else None)
    if r.returncode != 0:
        raise AssertionError(f"{what or ' '.join(cmd)}: exit {r.returncode}" + (f": {r.stdout.strip()}" if capture else ""))
    return r.stdout if capture else ""


def as_user(cmd, cwd=ROOT, capture=True, what=None, **extra):
    return run(cmd, cwd=cwd, env=user_env(**extra), capture=capture, what=what)


def has(text, needle, what):
    assert needle in text, f"{what}: expected '{needle}' in: {text}"


def file_b(path):
    return run(["file", "-b", path]).strip()


def needed(path):
    """The NEEDED entries of an ELF file's dynamic section."""
    return re.findall(r"\(NEEDED\).*\[(.*)\]", run(["readelf", "-d", path]))


def soname(path):
    return re.findall(r"\(SONAME\).*\[(.*)\]", run(["readelf", "-d", path]))


def ldd(path):
    return run(["ldd", path])


def only(pattern):
    found = glob.glob(os.path.join(DIST, pattern))
    assert len(found) == 1, f"dist/{pattern}: expected one file, found {[os.path.basename(f) for f in found]}"
    return found[0]


def pyenv_python(minor):
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for p in sorted(glob.glob(f"{root}/versions/{minor}.*/bin/python3")):
        if os.access(p, os.X_OK):
            return p
    raise AssertionError(f"Python {minor} not found under {root}/versions (pyenv install {minor})")


def budget_of(name, version):
    """What each kind of artifact may weigh, in bytes. A dependency or feature that grows
    one past its budget fails here: find the weight (cargo bloat, nm --size-sort) before
    raising a budget. Every crate is optimised for speed in [profile.dist] (no opt-level
    "s" for the TLS stack and store clients: docs/performance.md, "Build profiles"):
    the wheel and the .node weigh more for the faster TLS handshakes measured there."""
    import fnmatch

    budgets = [
        ("*.whl", 2600000),  # the pyo3 module: engine, leases (5 stores, rustls), sealing
        (f"flakeid_engine-{version}.tar.gz", 2000000),  # the sdist: the crates' sources
        (f"flakeid-node-{version}.tgz", 300000),  # JS glue and types only
        ("flakeid-node-linux-*", 2600000),  # one .node addon (the same engine and stores)
        ("flakeid-wasm-*", 150000),  # one .wasm (its own budget: bindings/wasm/test) for Node and web, glue, types
        (f"flakeid-{version}-*-linux-gnu.tar.gz", 8300000),  # C SDK: .so, trimmed .a, header, pkg-config, CMake
        (f"flakeid-{version}-*-linux-musl", 9300000),  # the static CLI with the service
        ("SHA256SUMS", 10000),
        ("postgresql-*-flakeid_*.deb", 4000000),  # the PostgreSQL extension (make deb-postgres PG=<major>)
        ("postgresql-*-flakeid-*-linux-gnu.tar.gz", 4500000),  # the same .so and SQL, pg_config-relative
    ]
    for pattern, budget in budgets:
        if fnmatch.fnmatchcase(name, pattern):
            return budget
    return None


# macOS and Windows artifacts: their checks and budgets are tests/dist/cross.py's.
CROSS_RE = re.compile(r"-macosx_.*\.whl$|-win_amd64\.whl$|^flakeid-node-darwin-|^flakeid-node-win32-|-apple-darwin|-windows-gnu")


def linux(cases):
    version = workspace_version()
    full = os.environ.get("FLAKEID_DIST_HOST", "0") != "1"
    tools = os.path.join(ROOT, os.environ.get("FLAKEID_DIST_TOOLS") or "target/dist-tools")
    work = tempfile.mkdtemp(prefix="flakeid-test-dist.")
    made = {}  # what a case made for later ones: name -> path

    def need(key, what):
        assert key in made, f"needs {what}, which an earlier case did not make"
        return made[key]

    try:
        # ------------------------------------------------------------ the inventory
        with cases.case("no cargo, rustc or maturin on the user PATH"):
            found = [t for t in ("cargo", "rustc", "maturin") if shutil.which(t, path=USER_PATH)]
            assert not found, f"{found} on the user PATH ({USER_PATH})"
        if not os.path.isdir(DIST):
            cases.failed("dist/", "no dist/ (run make dist)")
            return
        with cases.case("one version: Cargo.toml and node/package.json"):
            # The copies of the version that make dist does not stamp (RELEASING.md, step 1).
            # (The PostgreSQL extension has a version of its own: its SQL's, which ALTER
            # EXTENSION UPDATE steps through; bindings/postgres/Cargo.toml says it.)
            node_v = json.load(open(os.path.join(ROOT, "node", "package.json")))["version"]
            assert node_v == version, f"versions disagree: Cargo.toml {version}, node/package.json {node_v}"
        wheels = {}
        with cases.case("the wheels"):
            wheels["gnu_x64"] = only(f"flakeid_engine-{version}-cp39-abi3-manylinux*_x86_64.whl")
            if full:
                wheels["gnu_arm"] = only(f"flakeid_engine-{version}-cp39-abi3-manylinux*_aarch64.whl")
                wheels["musl"] = only(f"flakeid_engine-{version}-cp39-abi3-musllinux_1_2_x86_64.whl")
        expected = [f"flakeid_engine-{version}.tar.gz", f"flakeid-node-{version}.tgz",
                    f"flakeid-node-linux-x64-gnu-{version}.tgz", f"flakeid-wasm-{version}.tgz",
                    f"flakeid-{version}-x86_64-unknown-linux-gnu.tar.gz", f"flakeid-{version}-x86_64-unknown-linux-musl",
                    "SHA256SUMS"]
        if full:
            expected += [f"flakeid-node-linux-arm64-gnu-{version}.tgz", f"flakeid-node-linux-x64-musl-{version}.tgz",
                         f"flakeid-{version}-aarch64-unknown-linux-gnu.tar.gz",
                         f"flakeid-{version}-aarch64-unknown-linux-musl"]
            # macOS and Windows (scripts/dist.sh macos, windows): tests/dist/cross.py checks them.
            expected += [f"flakeid-node-darwin-x64-{version}.tgz", f"flakeid-node-darwin-arm64-{version}.tgz",
                         f"flakeid-node-win32-x64-gnu-{version}.tgz", f"flakeid-{version}-x86_64-apple-darwin.tar.gz",
                         f"flakeid-{version}-aarch64-apple-darwin.tar.gz", f"flakeid-{version}-x86_64-pc-windows-gnu.zip",
                         f"flakeid-{version}-x86_64-apple-darwin", f"flakeid-{version}-aarch64-apple-darwin",
                         f"flakeid-{version}-x86_64-pc-windows-gnu.exe"]
        with cases.case(f"dist/ holds the {len(expected)} named files"):
            missing = [f for f in expected if not os.path.isfile(os.path.join(DIST, f))]
            assert not missing, f"missing from dist/: {missing}"
        with cases.case("dist/ and tests/docs/artifacts.py agree"):
            # The names the docs may mention (make test-docs checks them) are exactly these files.
            run([sys.executable, os.path.join(ROOT, "tests", "docs", "artifacts.py"), "--dist", DIST],
                what="tests/docs/artifacts.py --dist")
        files = sorted(f for f in os.listdir(DIST) if os.path.isfile(os.path.join(DIST, f)))
        with cases.case("dist/ holds nothing more"):
            # manylinux x86_64 and aarch64, musllinux; macOS x86_64 and arm64, win_amd64
            n_wheels = 6 if full else 1
            assert len(files) == len(expected) + n_wheels, \
                f"dist/ holds {len(files)} files, expected {len(expected) + n_wheels}: {files}"
        with cases.case("SHA256SUMS matches dist/ and lists every artifact"):
            sums = {}
            for line in open(os.path.join(DIST, "SHA256SUMS")).read().splitlines():
                digest, name = line.split(None, 1)
                sums[name.lstrip("*")] = digest
            for name, digest in sums.items():
                with open(os.path.join(DIST, name), "rb") as fh:
                    got = hashlib.sha256(fh.read()).hexdigest()
                assert got == digest, f"SHA256SUMS does not match dist/{name}"
            assert len(sums) == len(files) - 1, \
                f"SHA256SUMS does not list every artifact: {sorted(set(files) - set(sums) - {'SHA256SUMS'})}"
        for f in files:
            print(f"   {os.path.getsize(os.path.join(DIST, f)):10d}  {f}")

        # ------------------------------------------------------------ size budgets
        for f in files:
            if CROSS_RE.search(f):
                continue
            size, budget = os.path.getsize(os.path.join(DIST, f)), budget_of(f, version)
            if budget is None:
                cases.failed(f"size budget: {f}", f"no size budget for dist/{f}: add one in tests/dist/run.py")
            else:
                cases.record(f"size budget: {f}", size <= budget, f"{size} <= {budget}" if size <= budget
                             else f"{size} bytes, over its budget of {budget}")

        # ------------------------------------------------------------ Python
        specs = []
        if "gnu_x64" in wheels:
            tag = "manylinux_2_17_x86_64"
            if not full:
                # Built for this machine (no zig): tagged with the manylinux policy its glibc
                # symbols allow, the last of the name's platform tags; auditwheel must find the same.
                host_tag = re.split(r"[.-]", os.path.basename(wheels["gnu_x64"])[:-len(".whl")])[-1]
                with cases.case("the host wheel's platform tag"):
                    assert re.fullmatch(r"manylinux_2_[0-9]+_x86_64", host_tag), \
                        f"{os.path.basename(wheels['gnu_x64'])}: platform tag {host_tag}, " \
                        "expected manylinux_2_<glibc minor>_x86_64"
                tag = host_tag
            specs.append((wheels["gnu_x64"], "x86-64", tag))
        if full and "musl" in wheels:
            specs += [(wheels["gnu_arm"], "ARM aarch64", "manylinux_2_17_aarch64"),
                      (wheels["musl"], "x86-64", "musllinux_1_2_x86_64")]
        for whl, arch, tag in specs:
            name = os.path.basename(whl)
            with cases.case(f"wheel {name}: tag, version, architecture, auditwheel"):
                with zipfile.ZipFile(whl) as z:
                    has(z.read(f"flakeid_engine-{version}.dist-info/WHEEL").decode(), f"Tag: cp39-abi3-{tag}",
                        f"{name} WHEEL")
                    has(z.read(f"flakeid_engine-{version}.dist-info/METADATA").decode(), f"Version: {version}",
                        f"{name} METADATA")
                    so = os.path.join(work, name + ".so")
                    with open(so, "wb") as fh:
                        fh.write(z.read("flakeid/_flakeid.abi3.so"))
                made[name] = so
                has(file_b(so), f"ELF 64-bit LSB shared object, {arch}", f"{name} extension")
                # auditwheel: the tag it finds is the one claimed, and the wheel needs no
                # library outside that policy (nothing to graft).
                r = subprocess.run([os.path.join(tools, "bin", "auditwheel"), "show", "--json", whl],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                assert r.returncode == 0, f"auditwheel show {name}: {r.stderr.strip()}"
                shown = json.loads(r.stdout)
                verdict = (shown["overall_tag"], sorted(shown["external_libs"]))
                assert verdict == (tag, []), \
                    f"auditwheel show {name}: tag and external libraries are {verdict}, expected {tag} []"
                print(f"   {name}: {tag}, {os.path.getsize(whl)} bytes")
        if full:
            with cases.case("the musllinux wheel's extension needs musl's libc only"):
                so = need(os.path.basename(wheels.get("musl", "?")), "the musllinux wheel's extension")
                assert needed(so) == ["libc.musl-x86_64.so.1"], f"it needs {needed(so)}"

        for py in ("3.9", "3.13"):
            with cases.case(f"Python {py}: the manylinux wheel in a fresh venv, python/tests against it"):
                assert "gnu_x64" in wheels, "needs the x86_64 manylinux wheel"
                python = pyenv_python(py)
                venv = os.path.join(work, f"venv-{py}")
                as_user([python, "-m", "venv", venv])
                pip = [os.path.join(venv, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check"]
                # Only the wheel: --no-index, so pip cannot fall back to building from source.
                as_user([*pip, "--no-index", wheels["gnu_x64"]])
                if py == "3.9":
                    test_deps = ["pytest==8.4.2", "pytest-xdist==3.8.0", "hypothesis==6.141.1"]
                else:
                    line = re.search(r"^test = \[(.*)\]", open(os.path.join(ROOT, "python", "pyproject.toml")).read(),
                                     re.M).group(1)
                    test_deps = [d for d in re.findall(r'"([^"]+)"', line) if not d.startswith("mypy")]
                as_user([*pip, *test_deps])
                tests = os.path.join(work, "pytests")
                shutil.rmtree(tests, ignore_errors=True)
                shutil.copytree(os.path.join(ROOT, "python", "tests"), tests)
                where = as_user([os.path.join(venv, "bin", "python"), "-c",
                                 "import flakeid; print(flakeid.__file__, flakeid.__version__)"], cwd=work)
                has(where, f"{venv}/lib/python{py}/site-packages/flakeid/__init__.py {version}", "the installed package")
                as_user([os.path.join(venv, "bin", "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
                        cwd=tests, capture=False, what=f"pytest on Python {py}",
                        FLAKEID_VECTORS=os.path.join(ROOT, "tests", "vectors"), FLAKEID_DOCS=os.path.join(ROOT, "docs"))

        if full:
            with cases.case("sdist: builds from source (cargo back on PATH for this step only)"):
                sdist = os.path.join(DIST, f"flakeid_engine-{version}.tar.gz")
                listed = set(run(["tar", "-tzf", sdist]).splitlines())
                for f in ("PKG-INFO", "pyproject.toml", "Cargo.lock", "bindings/python/Cargo.toml",
                          "crates/flakeid-core/src/lib.rs"):
                    assert f"flakeid_engine-{version}/{f}" in listed, f"the sdist lacks {f}"
                venv = os.path.join(work, "venv-sdist")
                run([pyenv_python("3.13"), "-m", "venv", venv])
                # The sdist's crates compile into the workspace's target directory (sharing its dependencies).
                run([os.path.join(venv, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check", sdist],
                    env={**os.environ, "CARGO_TARGET_DIR": os.environ.get("CARGO_TARGET_DIR")
                         or os.path.join(ROOT, "target")}, capture=False, what="pip install the sdist")
                print("  ", as_user([os.path.join(venv, "bin", "python"), "-c", """
import flakeid
g = flakeid.Generator(datacenter=1, worker=2)
a, b = g.next_id(), g.next_id()
assert 0 < a < b, (a, b)
assert flakeid.decompose(b).worker == 2
print("the sdist-built package issues", a, b)"""], cwd=work).strip())

        # ------------------------------------------------------------ Node
        app = os.path.join(work, "app")
        vectors = {"FLAKEID_VECTORS": os.path.join(ROOT, "tests", "vectors"), "FLAKEID_DOCS": os.path.join(ROOT, "docs")}

        def node(code, *flags):
            return as_user(["node", *flags, "-e", code], cwd=app, what=f"node {' '.join(flags)} -e").strip()

        with cases.case("npm: @flakeid/node and its linux-x64-gnu package, offline, into a fresh project"):
            os.makedirs(app)
            with open(os.path.join(app, "package.json"), "w") as fh:
                fh.write('{ "name": "flakeid-dist-app", "private": true }\n')
            as_user(["npm", "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error",
                     os.path.join(DIST, f"flakeid-node-{version}.tgz"),
                     os.path.join(DIST, f"flakeid-node-linux-x64-gnu-{version}.tgz"),
                     os.path.join(DIST, f"flakeid-wasm-{version}.tgz")], cwd=app)
            for p in ("node", "node-linux-x64-gnu", "wasm"):
                v = json.load(open(os.path.join(app, "node_modules", "@flakeid", p, "package.json")))["version"]
                assert v == version, f"@flakeid/{p} is version {v}, expected {version}"
            assert not os.path.exists(os.path.join(app, "node_modules/@flakeid/node-linux-x64-musl")), \
                "npm installed the musl package on glibc"
            assert not os.path.exists(os.path.join(app, "node_modules/@flakeid/node-linux-arm64-gnu")), \
                "npm installed the arm64 package on x64"
            # The suite's own devDependencies, pinned as in node/package.json, one folder up
            # (Node resolves them from there; the app's node_modules holds only what the
            # tarballs brought).
            dev = json.load(open(os.path.join(ROOT, "node", "package.json")))["devDependencies"]
            with open(os.path.join(work, "package.json"), "w") as fh:
                fh.write('{ "private": true }\n')
            as_user(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                     *(f"{n}@{dev[n]}" for n in ("fast-check", "flake-idgen"))], cwd=work)
            shutil.copytree(os.path.join(ROOT, "node", "test"), os.path.join(app, "test"))
            made["app"] = app

        def node_suite(*flags, **env):
            tests = sorted(glob.glob(os.path.join(app, "test", "*.test.mjs")))
            as_user(["node", *flags, "--test", "--test-reporter=dot", *(os.path.relpath(t, app) for t in tests)],
                    cwd=app, capture=False, what="node --test", FLAKEID_FROM="package", **vectors, **env)

        with cases.case("node: the suite against the installed @flakeid/node (native)"):
            need("app", "the npm project")
            node_suite()
        with cases.case("node: ESM import of @flakeid/node and @flakeid/node/flake-idgen"):
            need("app", "the npm project")
            esm = node("""
import { Generator, decompose } from '@flakeid/node'
import FlakeId from '@flakeid/node/flake-idgen'
const id = new Generator({ worker: 5 }).nextId()
console.log(decompose(id).worker, new FlakeId({ id: 3 }).next().length)""", "--input-type=module")
            assert esm == "5 8", f"ESM import of @flakeid/node printed: {esm}"

        with cases.case("node: no native package -> the @flakeid/wasm fallback, announced once"):
            need("app", "the npm project")
            shutil.rmtree(os.path.join(app, "node_modules", "@flakeid", "node-linux-x64-gnu"))
            made["fallback"] = True
            warned = node("""
require('@flakeid/node'); require('@flakeid/node/flake-idgen'); require('@flakeid/node')
const { Generator } = require('@flakeid/node')
console.log(typeof new Generator({ node: 1 }).nextId())""")
            has(warned, "bigint", "the fallback issues IDs")
            assert warned.count("FLAKEID_WASM_FALLBACK") == 1, f"the fallback warning is not printed exactly once: {warned}"
        with cases.case("node: the suite on the @flakeid/wasm fallback"):
            need("fallback", "the native package removed")
            node_suite("--no-warnings", FLAKEID_BACKEND="wasm")

        wasm_programs = [
            ("CJS", [], 7, """
const { Generator, decompose } = require('@flakeid/wasm')
console.log(decompose(new Generator({ worker: 7 }).nextId()).worker)"""),
            ("Node ESM", ["--input-type=module"], 8, """
import { Generator, decompose } from '@flakeid/wasm'
console.log(decompose(new Generator({ worker: 8 }).nextId()).worker)"""),
            ("the web build", ["--input-type=module"], 9, """
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import init, { Generator, decompose } from '@flakeid/wasm/web'
const wasm = createRequire(process.cwd() + '/').resolve('@flakeid/wasm/web/flakeid_bg.wasm')
await init({ module_or_path: readFileSync(wasm) })
console.log(decompose(new Generator({ worker: 9 }).nextId()).worker)"""),
        ]
        for how, flags, worker, code in wasm_programs:
            with cases.case(f"@flakeid/wasm: {how}"):
                need("app", "the npm project")
                out = node(code, *flags)
                assert out == str(worker), f"@flakeid/wasm ({how}) printed: {out}"

        if full:
            for plat, cpu, libc, arch in (("linux-arm64-gnu", "arm64", "glibc", "ARM aarch64"),
                                          ("linux-x64-musl", "x64", "musl", "x86-64")):
                with cases.case(f"npm: @flakeid/node-{plat}"):
                    x = os.path.join(work, f"pkg-{plat}")
                    os.makedirs(x)
                    run(["tar", "-xzf", os.path.join(DIST, f"flakeid-node-{plat}-{version}.tgz"), "-C", x])
                    p = json.load(open(os.path.join(x, "package", "package.json")))
                    meta = " ".join(js_str(p.get(k)) for k in ("name", "version", "os", "cpu", "libc", "main"))
                    meta += " " + json.dumps(p.get("scripts") or {})
                    assert meta == f"@flakeid/node-{plat} {version} linux {cpu} {libc} flakeid.{plat}.node {{}}", \
                        f"{plat} package.json: {meta}"
                    addon = os.path.join(x, "package", f"flakeid.{plat}.node")
                    has(file_b(addon), f"ELF 64-bit LSB shared object, {arch}", f"flakeid.{plat}.node")
                    if libc == "musl":
                        assert needed(addon) == ["libc.musl-x86_64.so.1"], \
                            f"the musl addon needs {needed(addon)}, expected musl's libc only"

        # ------------------------------------------------------------ C
        c_sdk(cases, version, full, work, made)

        # ------------------------------------------------------------ CLI
        for t in ("x86_64", "aarch64") if full else ("x86_64",):
            with cases.case(f"CLI: the static {t} musl binary decodes the seed's worked example"):
                bin_ = os.path.join(DIST, f"flakeid-{version}-{t}-unknown-linux-musl")
                desc = file_b(bin_)
                has(desc, "statically linked", os.path.basename(bin_))
                qemu = []
                if t == "aarch64":
                    has(desc, "ARM aarch64", os.path.basename(bin_))
                    qemu = ["qemu-aarch64-static"]
                out = as_user([*qemu, bin_, "decode", DECODE_ID])
                for line in DECODE_LINES:
                    has(out, line, f"the {t} CLI's decode of the seed's worked example")
                made[f"decode-{t}"] = out
                got = as_user([*qemu, bin_, "--version"]).strip()
                assert got == f"flakeid {version}", f"the {t} CLI's version: {got}"
                print("\n".join("   " + line for line in out.splitlines()))
        if full:
            with cases.case("CLI: the aarch64 and x86_64 CLIs decode alike"):
                arm, host = need("decode-aarch64", "the aarch64 decode"), need("decode-x86_64", "the x86_64 decode")
                assert arm == host, f"aarch64 and x86_64 CLIs disagree: {arm} / {host}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def c_sdk(cases, version, full, work, made):
    examples = os.path.join(ROOT, "examples", "c")
    sdk = os.path.join(work, "elsewhere", "sdk")
    with cases.case("C SDK: unpacked, moved, its files, soname"):
        run(["tar", "-xzf", os.path.join(DIST, f"flakeid-{version}-x86_64-unknown-linux-gnu.tar.gz"), "-C", work])
        # Relocatable: move it after unpacking.
        os.makedirs(os.path.dirname(sdk))
        shutil.move(os.path.join(work, f"flakeid-{version}-x86_64-unknown-linux-gnu"), sdk)
        for f in ("include/flakeid.h", "lib/libflakeid.so", "lib/libflakeid.a", "lib/pkgconfig/flakeid.pc",
                  "lib/cmake/flakeid/flakeidConfig.cmake", "lib/cmake/flakeid/flakeidConfigVersion.cmake",
                  "LICENSE-MIT", "LICENSE-APACHE"):
            assert os.path.isfile(os.path.join(sdk, f)), f"C SDK: {f} missing"
        assert os.readlink(os.path.join(sdk, "lib", "libflakeid.so.0")) == "libflakeid.so", \
            "C SDK: lib/libflakeid.so.0 is not a link to libflakeid.so"
        assert "libflakeid.so.0" in soname(os.path.join(sdk, "lib", "libflakeid.so")), \
            "libflakeid.so has no soname libflakeid.so.0"
        made["sdk"] = sdk

    def example(what, binary):
        got = run([binary], what=f"{what}: the example")
        has(got, "datacenter 1, worker 2", what)

    for mode in ("OFF", "ON"):
        kind = "shared" if mode == "OFF" else "static"
        with cases.case(f"C SDK: cmake find_package, {kind}"):
            need_sdk(made)
            build = os.path.join(work, f"cmake-{mode}")
            as_user(["cmake", "-S", examples, "-B", build, f"-DCMAKE_PREFIX_PATH={sdk}", f"-DFLAKEID_STATIC={mode}"])
            as_user(["cmake", "--build", build])
            exe = os.path.join(build, "example")
            if mode == "OFF":
                assert f"libflakeid.so.0 => {sdk}/lib/libflakeid.so.0" in ldd(exe), \
                    "the CMake shared build does not load the SDK's libflakeid.so.0"
            else:
                assert "libflakeid" not in ldd(exe), "the CMake static build loads libflakeid.so"
            example(f"cmake find_package, {kind}", exe)

    pc_env = {"PKG_CONFIG_PATH": os.path.join(sdk, "lib", "pkgconfig")}

    def pkg_config(*args):
        return run(["pkg-config", *args, "flakeid"], env={**os.environ, **pc_env}).split()

    with cases.case("C SDK: pkg-config's version"):
        need_sdk(made)
        got = " ".join(pkg_config("--modversion"))
        assert got == version, f"flakeid.pc version {got}"
    cc = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", os.path.join(examples, "example.c")]
    with cases.case("C SDK: pkg-config, shared"):
        need_sdk(made)
        exe = os.path.join(work, "pc-shared")
        as_user([*cc, *pkg_config("--cflags", "--libs"), f"-Wl,-rpath,{pkg_config('--variable=libdir')[0]}", "-o", exe])
        assert "libflakeid.so" in ldd(exe), "the pkg-config shared build does not load libflakeid.so"
        example("pkg-config, shared", exe)
    with cases.case("C SDK: pkg-config, static"):
        need_sdk(made)
        exe = os.path.join(work, "pc-static")
        flags = ["-l:libflakeid.a" if f == "-lflakeid" else f for f in pkg_config("--cflags", "--libs", "--static")]
        as_user([*cc, *flags, "-o", exe])
        assert "libflakeid" not in ldd(exe), "the pkg-config static build loads libflakeid.so"
        example("pkg-config, static", exe)
    arm = None
    if full:
        with cases.case("C SDK: aarch64 libraries"):
            run(["tar", "-xzf", os.path.join(DIST, f"flakeid-{version}-aarch64-unknown-linux-gnu.tar.gz"), "-C", work])
            arm = os.path.join(work, f"flakeid-{version}-aarch64-unknown-linux-gnu", "lib")
            has(file_b(os.path.join(arm, "libflakeid.so")), "ELF 64-bit LSB shared object, ARM aarch64",
                "aarch64 libflakeid.so")
            assert "libflakeid.so.0" in soname(os.path.join(arm, "libflakeid.so")), "aarch64 libflakeid.so has no soname"
            header = subprocess.run(["readelf", "-h", os.path.join(arm, "libflakeid.a")], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True).stdout
            machine = next((line for line in header.splitlines() if "Machine" in line), "")
            has(machine, "AArch64", "aarch64 libflakeid.a")
    # The static libraries ship without LLVM bitcode (dist.sh trims it).
    for lib in [os.path.join(sdk, "lib", "libflakeid.a")] + ([os.path.join(arm, "libflakeid.a")] if arm else []):
        with cases.case(f"C SDK: {os.path.relpath(lib, work)} carries no LLVM bitcode"):
            sections = run(["readelf", "-S", "-W", lib], what=f"readelf cannot read {lib}")
            assert ".llvmbc" not in sections, f"{lib} still carries LLVM bitcode (.llvmbc)"


def js_str(v):
    """A package.json field as JavaScript's String() spells it (an array's items joined by commas)."""
    if v is None:
        return ""
    return ",".join(map(str, v)) if isinstance(v, list) else str(v)


def need_sdk(made):
    assert "sdk" in made, "needs the unpacked C SDK, which an earlier case did not make"


def main(argv):
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    cases = Cases("test-dist")
    linux(cases)
    return cases.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
