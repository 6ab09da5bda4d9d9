"""The PostgreSQL extension against the shared vectors and the other languages
(run.py's basic section):
  vectors(server)    tests/vectors/{compose,encodings,seal}.json through SQL on `server`
  decode(made, cli)  IDs made in SQL (one row per ID, '|' between its fields) decode the
                     same in the Rust CLI, and in Python and Node when their packages
                     are built
"""

import json
import os
import subprocess

from cluster import ROOT, Fail, load_vectors

I64_MAX = (1 << 63) - 1
# The SQLSTATE each expected error kind maps to (bindings/postgres/src/error.rs).
SQLSTATE = {"config": "22023", "time_exhausted": "22008", "parse": "22P02", "bigint": "22003"}


def qualified(expr):
    """`expr` with the test's helper functions called in pg_temp."""
    return expr.replace("failure(", "pg_temp.failure(").replace(
        "failure_text(", "pg_temp.failure_text("
    )


def q(text):
    return "'" + str(text).replace("'", "''") + "'"


def ts(ms):
    return f"('epoch'::timestamptz + {int(ms)} * interval '1 ms')"


def compose_call(c):
    return (
        f"flakeid_compose({ts(c['timestamp_ms'])}, {c['node']}, {c['sequence']}, {q(c['layout'])})"
    )


def vectors(server):
    """Each check is one SQL expression giving text; the expected text is beside it."""
    checks = []  # (label, sql expression, expected)
    skipped = 0
    compose = load_vectors("compose.json")
    for c in compose["cases"]:
        if not isinstance(c["layout"], str):
            skipped += 1  # custom layouts: SQL takes preset names
            continue
        lay, idv = q(c["layout"]), int(c["id"])
        label = f"compose {c['layout']} {c['id']}"
        if idv > I64_MAX:
            checks.append((label, f"failure($x$SELECT {compose_call(c)}$x$)", SQLSTATE["bigint"]))
            continue
        checks.append((label, f"{compose_call(c)}::text", c["id"]))
        want = f"{c['timestamp_ms']}/{c['datacenter']}/{c['worker']}/{c['node']}/{c['sequence']}"
        checks.append(
            (
                "decompose " + label,
                "(SELECT format('%s/%s/%s/%s/%s', (extract(epoch FROM ts) * 1000)::bigint, "
                f"datacenter, worker, node, sequence) FROM flakeid_decompose({idv}, {lay}))",
                want,
            )
        )
    for c in compose["compose_errors"]:
        if not isinstance(c["layout"], str):
            skipped += 1
            continue
        checks.append(
            (f"compose error {c}", f"failure($x$SELECT {compose_call(c)}$x$)", SQLSTATE[c["error"]])
        )
    for r in compose["ranges"]:
        if not isinstance(r["layout"], str):
            skipped += 1
            continue
        lay = q(r["layout"])
        first, last = int(r["first"]), int(r["last"])
        label = f"range {r['layout']} {r['start_ms']}..{r['end_ms']}"
        if last > I64_MAX:
            skipped += 1
            continue
        checks.append(
            (
                label,
                f"format('%s..%s', flakeid_first_at({ts(r['start_ms'])}, {lay}), "
                f"flakeid_last_at({ts(r['end_ms'])}, {lay}))",
                f"{first}..{last}",
            )
        )
    enc = load_vectors("encodings.json")
    for c in enc["cases"]:
        idv = int(c["id"])
        if idv > I64_MAX:
            checks.append(
                (
                    f"encode {c['id']}",
                    f"failure($x$SELECT flakeid_decode({q(c['hex'])}, 'hex')$x$)",
                    SQLSTATE["bigint"],
                )
            )
            continue
        for e in ("hex", "base32", "base62", "decimal"):
            checks.append((f"encode {e} {c['id']}", f"flakeid_encode({idv}, {q(e)})", c[e]))
            checks.append(
                (f"decode {e} {c['id']}", f"flakeid_decode({q(c[e])}, {q(e)})::text", c["id"])
            )
    for a in enc["decode_aliases"]:
        if int(a["id"]) <= I64_MAX:
            checks.append(
                (f"alias {a}", f"flakeid_decode({q(a['text'])}, {q(a['encoding'])})::text", a["id"])
            )
    for b in enc["bad"]:
        checks.append(
            (
                f"bad {b}",
                f"failure($x$SELECT flakeid_decode({q(b['text'])}, {q(b['encoding'])})$x$)",
                SQLSTATE["parse"],
            )
        )
    seal_checks, seal_skipped = seal_vectors()
    checks += seal_checks
    skipped += seal_skipped
    # The core's table of the 128-bit family's functions: the sql column names a
    # function of the extension (None: the note says what does it in SQL).
    for f in load_vectors("wide.json")["functions"]:
        if f["sql"] is not None:
            checks.append(
                (
                    f"128-bit function {f['sql']} ({f['what']})",
                    f"(SELECT (count(*) > 0)::text FROM pg_proc WHERE proname = {q(f['sql'])})",
                    "true",
                )
            )

    sql = [
        "\\pset tuples_only on",
        "\\pset format unaligned",
        "CREATE OR REPLACE FUNCTION pg_temp.failure(q text) RETURNS text LANGUAGE plpgsql AS $f$ "
        "BEGIN EXECUTE q; RETURN 'no error'; EXCEPTION WHEN others THEN RETURN SQLSTATE; END $f$;",
        "CREATE OR REPLACE FUNCTION pg_temp.failure_text(q text) RETURNS text LANGUAGE plpgsql AS "
        "$f$ "
        "BEGIN EXECUTE q; RETURN 'no error'; EXCEPTION WHEN others THEN RETURN SQLSTATE || ' ' || "
        "SQLERRM; END $f$;",
    ]
    sql += [f"SELECT {qualified(expr)};" for _, expr, _ in checks]
    got = [line for line in server.sql(stdin="\n".join(sql)).splitlines() if line.strip() != ""]
    if len(got) != len(checks):
        raise Fail(f"vectors: {len(got)} results for {len(checks)} checks")
    bad = [(label, want, g) for (label, _, want), g in zip(checks, got) if g != want]
    for label, want, g in bad[:20]:
        print(f"FAIL {label}: SQL gave {g!r}, the vector says {want!r}")
    if bad:
        raise Fail(f"vectors: {len(bad)} of {len(checks)} checks failed")
    print(
        f"vectors: {len(checks)} SQL checks agree with tests/vectors (compose, decompose, "
        f"ranges, encodings, seal, the 128-bit functions' names; {skipped} custom-layout or >int8 "
        "cases not expressible in SQL)"
    )


def signed(u):
    """A 64-bit ID as the bigint with the same bits (how SQL holds a 64-bit layout's
    sealed IDs)."""
    u = int(u)
    return u - (1 << 64) if u > I64_MAX else u


def seal_vectors():
    """tests/vectors/seal.json through flakeid_seal/flakeid_unseal (the preset
    layouts; SQL takes layout names), and its refusals: 22023 naming the argument,
    never showing the key."""
    checks, skipped = [], 0
    data = load_vectors("seal.json")
    for g in data["groups"]:
        if not isinstance(g["layout"], str):
            skipped += len(g["cases"])
            continue
        key, tweak, lay = f"'\\x{g['key']}'::bytea", f"'\\x{g['tweak']}'::bytea", q(g["layout"])
        for c in g["cases"]:
            label = (
                f"seal {g['layout']} key{len(g['key']) * 4} tweak{len(g['tweak']) // 2} {c['id']}"
            )
            idv, sealed = signed(c["id"]), signed(c["sealed"])
            checks.append(
                (label, f"flakeid_seal(({idv})::bigint, {key}, {tweak}, {lay})::text", str(sealed))
            )
            checks.append(
                (
                    "un" + label,
                    f"flakeid_unseal(({sealed})::bigint, {key}, {tweak}, {lay})::text",
                    str(idv),
                )
            )
    for c in data["invalid"]:
        if not isinstance(c["layout"], str):
            skipped += 1
            continue
        key, lay = f"'\\x{c['key']}'::bytea", q(c["layout"])
        fn = "flakeid_unseal" if c["op"] == "unseal" else "flakeid_seal"
        idv = signed(c.get("id", 1))
        call = f"SELECT {fn}(({idv})::bigint, {key}, ''::bytea, {lay})"
        # The key's first 16 digits must not be in the message (nor any of it).
        probe = c["key"][:16] or "no key"
        checks.append(
            (
                f"seal refusal {c}",
                f"(SELECT CASE WHEN t LIKE '22023 %argument \"{c['field']}\"%' AND t NOT LIKE "
                f"{q('%' + probe + '%')} "
                f"THEN 'ok' ELSE t END FROM failure_text($x${call}$x$) t)",
                "ok",
            )
        )
    return checks, skipped


def decode(made, cli):
    rows = []
    for line in made.splitlines():
        if line.strip():
            i, ms, dc, w, node, seq, b62, b32, hx = line.strip().split("|")
            rows.append(
                {
                    "id": i,
                    "timestamp_ms": int(ms),
                    "datacenter": int(dc),
                    "worker": int(w),
                    "node": int(node),
                    "sequence": int(seq),
                    "base62": b62,
                    "base32": b32,
                    "hex": hx,
                }
            )
    fields = ("timestamp_ms", "datacenter", "worker", "node", "sequence")

    def compare(lang, results):
        if len(results) != len(rows):
            raise Fail(f"{lang}: {len(results)} results for {len(rows)} IDs")
        for want, got in zip(rows, results):
            for k in got:
                if str(got[k]) != str(want[k]):
                    raise Fail(
                        f"{lang}: ID {want['id']} field {k}: {got[k]!r}, SQL says {want[k]!r}"
                    )
        print(
            f"decode: {len(rows)} IDs made by flakeid_next() decode identically in SQL and {lang}"
        )

    out = subprocess.run(
        [cli, "decode", "--json", "--layout", "snowflake", "-"],
        input="\n".join(r["id"] for r in rows),
        capture_output=True,
        text=True,
        check=True,
    )
    cli_rows = [json.loads(line) for line in out.stdout.splitlines()]
    compare(
        "Rust (flakeid decode)",
        [{k: d[k] for k in fields + ("id", "base62", "base32", "hex")} for d in cli_rows],
    )

    py = os.path.join(ROOT, "python", ".venv", "bin", "python")
    probe = (
        subprocess.run([py, "-c", "import flakeid"], capture_output=True)
        if os.path.exists(py)
        else None
    )
    if probe is not None and probe.returncode == 0:
        prog = (
            "import flakeid, json, sys\n"
            "for line in sys.stdin.read().split():\n"
            "    i = int(line); p = flakeid.decompose(i, layout='snowflake')\n"
            "    print(json.dumps({'id': str(i), 'timestamp_ms': p.timestamp_ms, 'datacenter': "
            "p.datacenter,"
            " 'worker': p.worker, 'node': p.node, 'sequence': p.sequence,"
            " 'base62': flakeid.encode(i, 'base62'), 'base32': flakeid.encode(i, 'base32'),"
            " 'hex': flakeid.encode(i, 'hex')}))\n"
        )
        out = subprocess.run(
            [py, "-c", prog],
            input="\n".join(r["id"] for r in rows),
            capture_output=True,
            text=True,
            check=True,
            cwd="/",
        )
        compare("Python", [json.loads(line) for line in out.stdout.splitlines()])
    else:
        print("SKIP: Python: python/.venv has no flakeid package (make test-python builds it)")

    node_dir = os.path.join(ROOT, "node")
    probe = subprocess.run(
        ["node", "-e", "require(process.argv[1])", node_dir], capture_output=True
    )
    if probe.returncode == 0:
        prog = (
            "const f = require(process.argv[1]);\n"
            "const ids = require('fs').readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean);\n"
            "for (const s of ids) { const i = BigInt(s); const p = f.decompose(i, 'snowflake');\n"
            "  console.log(JSON.stringify({id: s, timestamp_ms: Number(p.timestampMs ?? "
            "p.timestamp_ms),"
            " datacenter: p.datacenter, worker: p.worker, node: p.node, sequence: p.sequence,"
            " base62: f.encode(i, 'base62'), base32: f.encode(i, 'base32'), hex: f.encode(i, "
            "'hex')})); }\n"
        )
        out = subprocess.run(
            ["node", "-e", prog, node_dir],
            input="\n".join(r["id"] for r in rows),
            capture_output=True,
            text=True,
            check=True,
        )
        compare("Node", [json.loads(line) for line in out.stdout.splitlines()])
    else:
        print("SKIP: Node: the @flakeid/node addon is not built (make test-node builds it)")
