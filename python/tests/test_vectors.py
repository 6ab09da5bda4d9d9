"""Every case of every file in tests/vectors: the proof that Python issues and
reads exactly the IDs every other language does."""

from __future__ import annotations

import ast
import time
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest

import flakeid
from conftest import ERRORS, cases, layout_obj, layout_of, load


def test_every_vector_file_is_consumed() -> None:
    files = {p.stem for p in __import__("conftest").VECTORS.glob("*.json")}
    # decode_auto.json: run by the core, the CLI and the service only (no auto-detecting
    # decode here).
    assert files == {
        "layouts",
        "compose",
        "encodings",
        "timelines",
        "seal",
        "options",
        "decode_auto",
        "uuid",
        "wide",
    }
    consumed = {
        "layouts": {"presets", "invalid_layouts", "invalid_generators"},
        "compose": {"cases", "compose_errors", "decompose_errors", "ranges"},
        "encodings": {"cases", "decode_aliases", "bad"},
        "timelines": {"timelines"},
        "seal": {"groups", "invalid"},
        # env_cases, settings_cases: through the adapters' shared generator
        # (python/tests-frameworks/test_shared.py).
        "options": {"options", "cases", "env_cases", "settings_cases"},
        "uuid": {
            "uuid7",
            "compose_errors",
            "conversions",
            "text_aliases",
            "bad",
            "typeid_valid",
            "typeid_invalid",
            "prefix_errors",
            "ranges",
        },
        "wide": {"functions", "explicit_times", "shifts"},
    }
    for name, keys in consumed.items():
        assert set(load(name)) - {"_comment"} == keys, (
            f"{name}.json has sections this suite does not run"
        )


def check_error(excinfo: pytest.ExceptionInfo[flakeid.FlakeIdError], case: dict[str, Any]) -> None:
    exc = excinfo.value
    assert type(exc) is ERRORS[case["error"]], (type(exc), case)
    if "field" in case:
        assert getattr(exc, "field") == case["field"], str(exc)
    if "position" in case:
        assert getattr(exc, "position") == case["position"], str(exc)
    if "by_ms" in case:
        assert getattr(exc, "by_ms") == case["by_ms"], str(exc)


def refused_as_the_case_says(case: dict[str, Any], call: Callable[[], object]) -> bool:
    """For a case with an error: checks that `call` raises it, and is True."""
    if "error" not in case:
        return False
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        call()
    check_error(excinfo, case)
    return True


# --- layouts.json -------------------------------------------------------------


@pytest.mark.parametrize("case", cases("layouts", "presets"), ids=lambda c: c["name"])
def test_preset(case: dict[str, Any]) -> None:
    layout = flakeid.Layout.preset(case["name"])
    assert layout == flakeid.Layout.preset(case["name"].upper())
    assert layout.name == case["name"]
    for field in (
        "time_bits",
        "datacenter_bits",
        "worker_bits",
        "node_bits",
        "sequence_bits",
        "tick_ms",
        "epoch_ms",
    ):
        assert getattr(layout, field) == case[field], field
    assert layout.order == case["order"]
    assert layout.last_timestamp_ms == case["last_timestamp_ms"]
    assert layout.max_id == int(case["max_id"])
    assert layout in flakeid.Layout.presets()


@pytest.mark.parametrize("case", cases("layouts", "invalid_layouts"), ids=lambda c: c["field"])
def test_invalid_layout(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        layout_of(case["layout"])
    check_error(excinfo, case)


@pytest.mark.parametrize(
    "case", cases("layouts", "invalid_generators"), ids=lambda c: f"{c['layout']}-{c['field']}"
)
def test_invalid_generator(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        flakeid.Generator(layout=layout_of(case["layout"]), **case["options"])
    check_error(excinfo, case)


# --- compose.json -------------------------------------------------------------


@pytest.mark.parametrize(
    "case", cases("compose", "cases"), ids=lambda c: f"{c['layout']}-{c['id']}"
)
def test_compose_and_decompose(case: dict[str, Any]) -> None:
    layout = layout_of(case["layout"])
    obj = layout_obj(case["layout"])
    want = int(case["id"])
    assert obj.compose(case["timestamp_ms"], case["node"], case["sequence"]) == want
    assert (
        obj.compose_parts(
            case["timestamp_ms"], case["datacenter"], case["worker"], case["sequence"]
        )
        == want
    )
    for parts in (flakeid.decompose(want, layout), obj.decompose(want)):
        assert (parts.timestamp_ms, parts.ticks) == (case["timestamp_ms"], case["ticks"])
        assert (parts.datacenter, parts.worker, parts.node) == (
            case["datacenter"],
            case["worker"],
            case["node"],
        )
        assert parts.sequence == case["sequence"]


@pytest.mark.parametrize(
    "case", cases("compose", "compose_errors"), ids=lambda c: f"{c['layout']}-{c['error']}"
)
def test_compose_error(case: dict[str, Any]) -> None:
    obj = layout_obj(case["layout"])
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        obj.compose(case["timestamp_ms"], case["node"], case["sequence"])
    check_error(excinfo, case)


@pytest.mark.parametrize(
    "case", cases("compose", "decompose_errors"), ids=lambda c: f"{c['layout']}-{c['id']}"
)
def test_decompose_error(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        flakeid.decompose(int(case["id"]), layout_of(case["layout"]))
    check_error(excinfo, case)


@pytest.mark.parametrize(
    "case", cases("compose", "ranges"), ids=lambda c: f"{c['layout']}-{c['start_ms']}"
)
def test_id_range(case: dict[str, Any]) -> None:
    obj = layout_obj(case["layout"])
    first, last = int(case["first"]), int(case["last"])
    assert obj.id_range(case["start_ms"], case["end_ms"]) == (first, last)
    assert obj.first_id_at(case["start_ms"]) == first
    assert obj.last_id_at(case["end_ms"]) == last


# --- encodings.json -----------------------------------------------------------

ENCODINGS = ("decimal", "hex", "base32", "base62")


@pytest.mark.parametrize("case", cases("encodings", "cases"), ids=lambda c: c["id"])
def test_encoding(case: dict[str, Any]) -> None:
    id_ = int(case["id"])
    for enc in ENCODINGS:
        assert flakeid.encode(id_, enc) == case[enc], enc
        assert flakeid.decode(case[enc], enc) == id_, enc
    # One default in every binding (the core's): base62.
    assert flakeid.encode(id_) == case["base62"]
    assert flakeid.decode(case["base62"]) == id_
    assert flakeid.to_bytes(id_) == bytes.fromhex(case["bytes"])
    assert flakeid.from_bytes(bytes.fromhex(case["bytes"])) == id_


@pytest.mark.parametrize("case", cases("encodings", "decode_aliases"), ids=lambda c: c["text"])
def test_decode_alias(case: dict[str, Any]) -> None:
    assert flakeid.decode(case["text"], case["encoding"]) == int(case["id"])


@pytest.mark.parametrize(
    "case", cases("encodings", "bad"), ids=lambda c: f"{c['encoding']}-{c['text']!r}"
)
def test_bad_text(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        flakeid.decode(case["text"], case["encoding"])
    check_error(excinfo, case)
    assert isinstance(excinfo.value, ValueError)


# --- timelines.json -----------------------------------------------------------


@pytest.mark.parametrize("timeline", cases("timelines", "timelines"), ids=lambda t: t["name"])
def test_timeline(timeline: dict[str, Any]) -> None:
    clock = flakeid.ManualClock(timeline["start_ms"], timeline["auto_advance_ms"])
    gen = flakeid.Generator(
        node=timeline["node"],
        layout=layout_of(timeline["layout"]),
        overflow=timeline["overflow"],
        clock_backwards=timeline["clock_backwards"],
        max_borrow_ms=timeline["max_borrow_ms"],
        max_wait_ms=timeline["max_wait_ms"],
        clock=clock,
    )
    for i, step in enumerate(timeline["steps"]):
        where = f"step {i}: {step}"
        op = step["op"]
        if op == "set":
            clock.set(step["ms"])
        elif op == "next" and "error" in step:
            with pytest.raises(flakeid.FlakeIdError) as excinfo:
                gen.next_id()
            check_error(excinfo, step)
        elif op == "next":
            assert gen.next_id() == int(step["id"]), where
            assert clock.now_ms() == step["clock_ms"], where
        elif op == "next_ids":
            assert gen.next_ids(step["n"]) == [int(x) for x in step["ids"]], where
            assert clock.now_ms() == step["clock_ms"], where
        else:
            pytest.fail(f"unknown op in {where}")


# --- seal.json ----------------------------------------------------------------


def sealer_of(case: dict[str, Any]) -> flakeid.Sealer:
    return flakeid.Sealer(
        bytes.fromhex(case["key"]),
        layout=layout_of(case["layout"]),
        tweak=bytes.fromhex(case.get("tweak", "")),
    )


@pytest.mark.parametrize(
    "group",
    cases("seal", "groups"),
    ids=lambda g: f"{g['bits']}-{len(g['key']) * 4}-{len(g['tweak']) // 2}",
)
def test_seal_group(group: dict[str, Any]) -> None:
    sealer = sealer_of(group)
    assert sealer.bits == group["bits"]
    assert group["cases"]
    for case in group["cases"]:
        id_, sealed = int(case["id"]), int(case["sealed"])
        assert sealer.seal(id_) == sealed, case
        assert sealer.unseal(sealed) == id_, case


@pytest.mark.parametrize("case", cases("seal", "invalid"), ids=lambda c: f"{c['op']}-{c['field']}")
def test_seal_invalid(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        if case["op"] == "new":
            sealer_of(case)
        else:
            getattr(sealer_of(case), case["op"])(int(case["id"]))
    check_error(excinfo, case)


# --- wide.json ----------------------------------------------------------------


@pytest.mark.parametrize("function", cases("wide", "functions"), ids=lambda f: f["what"])
def test_the_128_bit_table_names_this_modules_functions(function: dict[str, Any]) -> None:
    # The core's table of the 128-bit family's functions: the Python column names a
    # function of the flakeid module, or Class.method (None: the note says what does
    # it here).
    name = function["python"]
    if name is None:
        assert function["note"], function
        return
    found: Any = flakeid
    for part in name.split("."):
        found = getattr(found, part, None)
    assert callable(found), f"flakeid.{name} ({function['what']}) is missing"


@pytest.mark.parametrize("case", cases("wide", "explicit_times"), ids=lambda c: str(c["unix_ms"]))
def test_an_explicit_time(case: dict[str, Any]) -> None:
    g = flakeid.UuidGenerator()
    if refused_as_the_case_says(case, lambda: g.uuid7_at(case["unix_ms"])):
        return
    seconds, ms = divmod(case["unix_ms"], 1000)
    for u in (g.uuid7_at(case["unix_ms"]), g.uuid7(seconds, ms * 10**6)):
        assert u.hex[:12] == case["time_hex"]
        assert u.version == 7 and u.variant == uuid.RFC_4122


@pytest.mark.parametrize("case", cases("wide", "shifts"), ids=lambda c: str(c["shift_ms"]))
def test_a_shifted_now(case: dict[str, Any]) -> None:
    g = flakeid.UuidGenerator()
    if refused_as_the_case_says(case, lambda: g.uuid7_shifted(case["shift_ms"])):
        return
    before = time.time_ns() // 10**6
    u = g.uuid7_shifted(case["shift_ms"])
    after = time.time_ns() // 10**6
    assert before + case["shift_ms"] <= flakeid.uuid7_timestamp_ms(u) <= after + case["shift_ms"]
    assert u.version == 7 and u.variant == uuid.RFC_4122


# --- options.json -------------------------------------------------------------


@pytest.mark.parametrize("option", cases("options", "options"), ids=lambda o: o["name"])
def test_every_option_is_a_keyword(option: dict[str, Any]) -> None:
    # Not inspect.signature: Python 3.9's abi3 classes carry no text signature. A
    # keyword the constructor does not take is "an unexpected keyword argument";
    # one it takes refuses this value for its type instead.
    with pytest.raises((TypeError, flakeid.FlakeIdError)) as excinfo:
        flakeid.Generator(**{option["name"]: object()})
    assert "unexpected keyword" not in str(excinfo.value), excinfo.value


@pytest.mark.parametrize("option", cases("options", "options"), ids=lambda o: o["name"])
def test_the_128_bit_generator_takes_the_clock_policies(option: dict[str, Any]) -> None:
    # The table's applies_128 column: UuidGenerator takes those options (at their
    # defaults) and refuses every other keyword, naming it.
    d = option["default"]
    if not option["setting"] or d == "":
        return
    value = int(d) if option["kind"] == "uint" else d
    if option["applies_128"]:
        flakeid.UuidGenerator(**{option["name"]: value}).close()
    else:
        with pytest.raises(TypeError) as excinfo:
            flakeid.UuidGenerator(**{option["name"]: value})
        assert f'"{option["name"]}"' in str(excinfo.value), excinfo.value


def test_stub_lists_the_options_with_their_defaults() -> None:
    # The constructor takes the table's options as keywords; its stub spells them
    # out for type checkers, with the table's defaults (None where there is none).
    # The stub the installed package ships (the wheel's, in make test-dist).
    stub = ast.parse((Path(flakeid.__file__).parent / "_flakeid.pyi").read_text(encoding="utf-8"))
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Generator")
    new = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__new__")
    a = new.args
    params = [
        *zip([p.arg for p in a.args[-len(a.defaults) :]], a.defaults),
        *zip([p.arg for p in a.kwonlyargs], a.kw_defaults),
    ]
    got = {name: ast.literal_eval(d) if d is not None else None for name, d in params}
    want = {}
    for o in load("options")["options"]:
        d = o["default"] or None
        want[o["name"]] = (
            int(d)
            if d is not None and o["kind"] == "uint"
            else d == "true"
            if o["kind"] == "bool"
            else d
        )
    if got.get("datacenter") is None and got.get("worker") is None:
        # Positional, None: "not given" (node 0 unless another option says otherwise).
        want["datacenter"] = want["worker"] = None
    assert got == want


@pytest.mark.parametrize(
    "case", cases("options", "cases"), ids=lambda c: f"{c['layout']}-{sorted(c['options'])}"
)
def test_option_case(case: dict[str, Any]) -> None:
    build = lambda **more: flakeid.Generator(  # noqa: E731
        layout=layout_of(case["layout"]), **case["options"], **more
    )
    if "error" not in case:
        # The cases name fixed node ids (1, 1023) and pytest -n runs them in several
        # processes at once, where the host guard rightly refuses a node id another
        # process holds: an injected clock keeps these builds clear of the guard, except
        # for a case whose option is about it.
        if "single_instance" in case["options"]:
            build()
        else:
            build(clock=flakeid.ManualClock(1_700_000_000_000))
        return
    with pytest.raises(flakeid.FlakeIdError) as excinfo:
        build()
    check_error(excinfo, case)
