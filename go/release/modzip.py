#!/usr/bin/env python3
"""Writes a Go module zip (the format `go mod download` fetches from a proxy) from a
staged folder, and a GOPROXY file tree serving it.

usage: modzip.py STAGE MODULE VERSION PROXY_DIR ZIP_OUT
"""

import json
import os
import shutil
import sys
import zipfile

stage, module, version, proxy, out = sys.argv[1:]
if any(c.isupper() for c in module):
    sys.exit("modzip: module paths with capitals need the proxy's !-escaping")
files = []
for dirpath, _, names in os.walk(stage):
    for n in names:
        full = os.path.join(dirpath, n)
        if os.path.islink(full):
            sys.exit(f"modzip: {full} is a symlink (module zips cannot hold one)")
        files.append(os.path.relpath(full, stage))
files.sort()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for rel in files:
        info = zipfile.ZipInfo(f"{module}@{version}/{rel}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        with open(os.path.join(stage, rel), "rb") as f:
            z.writestr(info, f.read())

at = os.path.join(proxy, module, "@v")
shutil.rmtree(at, ignore_errors=True)
os.makedirs(at)
shutil.copy(out, os.path.join(at, f"{version}.zip"))
shutil.copy(os.path.join(stage, "go.mod"), os.path.join(at, f"{version}.mod"))
with open(os.path.join(at, f"{version}.info"), "w") as f:
    json.dump(
        {"Version": version, "Time": os.environ.get("FLAKEID_GO_TIME", "1980-01-01T00:00:00Z")}, f
    )
with open(os.path.join(at, "list"), "w") as f:
    f.write(version + "\n")
