"""The 128-bit family from Python: tests/vectors/uuid.json (RFC 9562, ulid, the
TypeID spec's files), uuid.UUID out, monotonic across threads, and a forked child
that goes on (gunicorn --preload, multiprocessing "fork")."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import threading
import uuid
from typing import Any

import pytest

import flakeid
from conftest import ERRORS, cases
from forked import in_child

T = 1_764_000_000_000
UTC = dt.timezone.utc


def check_error(exc: BaseException, case: dict[str, Any]) -> None:
    assert type(exc) is ERRORS[case["error"]], (type(exc), case)
    for key in ("field", "position"):
        if key in case:
            assert getattr(exc, key) == case[key], str(exc)


@pytest.mark.parametrize("case", cases("uuid", "uuid7"), ids=lambda c: c["uuid"])
def test_compose_and_text_forms(case: dict[str, Any]) -> None:
    u = flakeid.compose_uuid7(case["ms"], case["rand_a"], int(case["rand_b"]))
    assert type(u) is uuid.UUID and str(u) == case["uuid"] and u == uuid.UUID(case["uuid"])
    assert u.bytes.hex() == case["bytes"] and u.version == 7 and u.variant == uuid.RFC_4122
    assert flakeid.uuid_to_ulid(u) == case["ulid"] == flakeid.uuid_to_ulid(case["uuid"])
    assert flakeid.ulid_to_uuid(case["ulid"]) == u
    assert flakeid.format_typeid("user", u) == case["typeid"]
    assert flakeid.parse_typeid(case["typeid"]) == ("user", u)
    for form in (u, u.int, u.bytes, case["uuid"], case["ulid"], case["typeid"]):
        assert flakeid.uuid7_timestamp_ms(form) == case["ms"], form


@pytest.mark.parametrize("case", cases("uuid", "compose_errors"), ids=lambda c: c["field"])
def test_compose_errors(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as e:
        flakeid.compose_uuid7(case["ms"], case["rand_a"], int(case["rand_b"]))
    check_error(e.value, case)


def test_compose_names_the_value_given() -> None:
    with pytest.raises(flakeid.ConfigError, match="got 70000") as e:
        flakeid.compose_uuid7(0, 70_000, 0)
    assert e.value.field == "rand_a"


def test_conversions_and_aliases() -> None:
    for c in cases("uuid", "conversions"):
        assert str(flakeid.ulid_to_uuid(c["ulid"])) == c["uuid"]
        assert flakeid.uuid_to_ulid(c["uuid"]) == c["ulid"]
    for c in cases("uuid", "text_aliases"):
        got = uuid.UUID(c["text"]) if c["kind"] == "uuid" else flakeid.ulid_to_uuid(c["text"])
        assert str(got) == c["uuid"], c


@pytest.mark.parametrize("case", cases("uuid", "bad"), ids=lambda c: f"{c['kind']}:{c['text']}")
def test_bad_text(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.FlakeIdError) as e:
        if case["kind"] == "ulid":
            flakeid.ulid_to_uuid(case["text"])
        else:
            flakeid.uuid_to_ulid(case["text"])
    check_error(e.value, case)


@pytest.mark.parametrize("case", cases("uuid", "typeid_valid"), ids=lambda c: c["name"])
def test_typeid_spec_valid(case: dict[str, Any]) -> None:
    prefix, u = flakeid.parse_typeid(case["typeid"])
    assert (prefix, str(u)) == (case["prefix"], case["uuid"])
    assert flakeid.format_typeid(prefix, u) == case["typeid"]


@pytest.mark.parametrize("case", cases("uuid", "typeid_invalid"), ids=lambda c: c["name"])
def test_typeid_spec_invalid(case: dict[str, Any]) -> None:
    with pytest.raises(flakeid.ParseError) as e:
        flakeid.parse_typeid(case["typeid"])
    check_error(e.value, case)


@pytest.mark.parametrize("case", cases("uuid", "prefix_errors"), ids=lambda c: c["prefix"][:8])
def test_prefix_errors_cost_no_id(case: dict[str, Any]) -> None:
    g = flakeid.UuidGenerator()
    with pytest.raises(flakeid.FlakeIdError) as e:
        g.typeid(case["prefix"])
    check_error(e.value, case)
    assert g.stats()["ids_issued"] == 0


def test_ranges_are_between_bounds() -> None:
    for c in cases("uuid", "ranges"):
        first, last = uuid.UUID(c["first"]), uuid.UUID(c["last"])
        assert (
            flakeid.uuid7_timestamp_ms(flakeid.compose_uuid7(c["start_ms"], 0, 0)) == c["start_ms"]
        )
        assert first.int >> 80 == c["start_ms"] and last.int >> 80 == c["end_ms"]


def test_generator_forms_and_monotonic_within_a_millisecond() -> None:
    clock = flakeid.ManualClock(T)
    g = flakeid.UuidGenerator(clock=clock, max_borrow_ms=10)
    ids = [g.uuid7_int() for _ in range(70_000)]
    assert all(a < b for a, b in zip(ids, ids[1:]))
    assert {i >> 80 for i in ids} == {T, T + 1}, "65,536 in a millisecond, then the next"
    u = g.uuid7()
    assert type(u) is uuid.UUID and u.version == 7 and u.int > ids[-1]
    assert len(g.uuid7_bytes()) == 16
    assert len(g.ulid()) == 26 and g.typeid("order").startswith("order_")
    assert g.stats()["lead_ms"] == 1


def test_options_are_the_cores() -> None:
    with pytest.raises(flakeid.ConfigError) as e:
        flakeid.UuidGenerator(max_borrow_ms=10**12)
    assert e.value.field == "max_borrow_ms"
    with pytest.raises(flakeid.ConfigError) as e:
        flakeid.UuidGenerator(overflow="sometimes")
    assert e.value.field == "overflow"
    with pytest.raises(TypeError, match="node"):
        flakeid.UuidGenerator(node=3)
    g = flakeid.UuidGenerator()
    g.close()
    with pytest.raises(flakeid.ConfigError) as e:
        g.uuid7()
    assert e.value.field == "generator"


def test_threads_never_repeat() -> None:
    g = flakeid.UuidGenerator()
    out: list[list[int]] = [[] for _ in range(4)]

    def work(k: int) -> None:
        out[k] = [g.uuid7_int() for _ in range(20_000)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for ids in out:
        assert all(a < b for a, b in zip(ids, ids[1:]))
    assert len({i for ids in out for i in ids}) == 80_000


def test_process_wide_shortcuts() -> None:
    a, b = flakeid.uuid7(), flakeid.uuid7()
    assert type(a) is uuid.UUID and a < b
    assert flakeid.parse_typeid(flakeid.typeid("user"))[0] == "user"
    assert len(flakeid.ulid()) == 26


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_goes_on_with_its_own_random_bits() -> None:
    g = flakeid.UuidGenerator(clock=flakeid.ManualClock(T))
    before = [g.uuid7_int() for _ in range(10)]

    def child() -> str:
        ids = [g.uuid7_int() for _ in range(1000)]
        return f"{g.stats()['reseeds']} " + " ".join(map(str, ids))

    reseeds, *child_out = in_child(child).split()
    parent = [g.uuid7_int() for _ in range(1000)]
    child_ids = [int(x) for x in child_out]
    assert reseeds == "1" and len(child_ids) == 1000
    assert min(child_ids) > before[-1]
    assert child_ids[0] >> 58 == parent[0] >> 58, "same clock, same counter from the fork on"
    assert not set(child_ids) & set(parent), "the child repeated the parent's random bits"


def test_a_batch_follows_the_calls_around_it() -> None:
    clock = flakeid.ManualClock(1_764_000_000_000)
    g = flakeid.UuidGenerator(clock=clock, max_borrow_ms=10)
    before = g.uuid7()
    batch = g.uuid7s(70_000)
    after = g.uuid7()
    ints = [u.int for u in [before, *batch, after]]
    assert ints == sorted(set(ints)), "strictly increasing, between the calls around it"
    assert all(u.version == 7 for u in batch)
    assert g.uuid7s(0) == []
    with pytest.raises(flakeid.ConfigError) as excinfo:
        g.uuid7s(2**20 + 1)
    assert excinfo.value.field == "n"
    assert "0..=1048576" in str(excinfo.value), "the limit of a batch of UUID objects"
    assert g.stats()["ids_issued"] == 70_002


# A child that caps its own address space (RLIMIT_AS) a little above what it uses,
# then asks for a batch: `print`s what it raised. Rust's infallible allocation would
# abort the interpreter there (rc 134), which is what these tests catch.
CAPPED_BATCH = """
import resource, sys
import flakeid
g = flakeid.UuidGenerator()
g.uuid7s(10)
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    g.uuid7s(int(sys.argv[1]))
    print("made")
except (flakeid.ConfigError, MemoryError) as e:
    print(type(e).__name__, getattr(e, "field", ""), e)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc")
@pytest.mark.parametrize(
    ("n", "headroom", "raised"),
    [
        # Refused by the rule before anything is allocated (2**27 would need ~17 GiB).
        (2**27, 1 << 20, "ConfigError n"),
        # Within the rule, but the 16 MiB of the batch's values do not fit: MemoryError.
        (2**20, 4 << 20, "MemoryError"),
    ],
)
def test_a_batch_that_cannot_fit_raises_and_never_aborts(
    n: int, headroom: int, raised: str
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", CAPPED_BATCH, str(n), str(headroom)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.startswith(raised), run.stdout


def test_the_process_generator_in_every_form() -> None:
    a = flakeid.uuid7()
    b = flakeid.uuid7_int()
    c = flakeid.uuid7_bytes()
    d = flakeid.uuid7()
    assert a.int < b < int.from_bytes(c, "big") < d.int, "one generator, in call order"
    assert len(c) == 16 and uuid.UUID(bytes=c).version == 7


def test_an_explicit_time_in_every_spelling() -> None:
    g = flakeid.UuidGenerator(clock=flakeid.ManualClock(T))
    first = g.uuid7()
    when = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    ms = (when - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)
    for u in (
        g.uuid7_at(when),
        g.uuid7_at(ms),
        g.uuid7(when),
        g.uuid7(ms // 1000, nanos=123_456_789),
        flakeid.uuid7(timestamp=ms // 1000, nanos=123_999_999),
        flakeid.uuid7(when),
    ):
        assert type(u) is uuid.UUID and u.version == 7
        assert flakeid.uuid7_timestamp_ms(u) == ms
    # Outside the sequence: the next call follows the one before them.
    assert first < g.uuid7() and g.stats()["ids_issued"] == 2
    assert flakeid.uuid7_timestamp_ms(g.uuid7_shifted(dt.timedelta(days=-1))) == T - 86_400_000
    assert flakeid.uuid7_timestamp_ms(g.uuid7_shifted(-1)) == T - 1


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (
            lambda g: g.uuid7(timestamp=1.5),
            "timestamp must be an int (Unix seconds) or a datetime, got float",
        ),
        (
            lambda g: flakeid.uuid7(timestamp="1"),
            "timestamp must be an int (Unix seconds) or a datetime, got str",
        ),
        (lambda g: g.uuid7(nanoseconds=1.5), "nanoseconds must be an int (Unix ns), got float"),
        (lambda g: g.uuid7_at(1.5), "unix_ms must be an int (Unix ms) or a datetime, got float"),
    ],
)
def test_a_wrong_type_is_named_in_the_callers_unit(call: Any, words: str) -> None:
    with pytest.raises(TypeError) as excinfo:
        call(flakeid.UuidGenerator())
    assert str(excinfo.value) == words


def test_uuid_utils_1x_nanoseconds_is_the_whole_unix_time() -> None:
    # uuid-utils 1.x: uuid7(*, nanoseconds=None), the Unix time in ns.
    g = flakeid.UuidGenerator(clock=flakeid.ManualClock(T))
    for u in (g.uuid7(nanoseconds=T * 10**6 + 999_999), flakeid.uuid7(nanoseconds=T * 10**6)):
        assert u.version == 7 and flakeid.uuid7_timestamp_ms(u) == T
    assert g.stats()["ids_issued"] == 0, "outside the sequence, as uuid7_at"


@pytest.mark.parametrize(
    ("call", "error", "field"),
    [
        (lambda g: g.uuid7(nanos=5), flakeid.ConfigError, "nanos"),
        (lambda g: g.uuid7(1, nanos=10**9), flakeid.ConfigError, "nanos"),
        (lambda g: g.uuid7(-1), flakeid.ConfigError, "timestamp"),
        (lambda g: g.uuid7(2**48), flakeid.ConfigError, "timestamp"),
        (lambda g: g.uuid7(nanoseconds=-1), flakeid.ConfigError, "nanoseconds"),
        (lambda g: g.uuid7(nanoseconds=2**48 * 10**6), flakeid.ConfigError, "nanoseconds"),
        (lambda g: g.uuid7(1, nanoseconds=5), flakeid.ConfigError, "nanoseconds"),
        (lambda g: g.uuid7(nanos=5, nanoseconds=5), flakeid.ConfigError, "nanoseconds"),
        (lambda g: g.uuid7_at(-5), flakeid.ConfigError, "unix_ms"),
        (lambda g: g.uuid7_at(dt.datetime(2024, 1, 1)), flakeid.ConfigError, "unix_ms"),
        (lambda g: g.uuid7_at(dt.datetime(1960, 1, 1, tzinfo=UTC)), flakeid.ConfigError, "unix_ms"),
        (lambda g: g.uuid7_shifted(2**70), flakeid.ConfigError, "shift_ms"),
        (lambda g: g.uuid7_shifted(-(2**62)), flakeid.ConfigError, "shift_ms"),
        (lambda g: g.uuid7_at("2024-01-01"), TypeError, None),
        (lambda g: g.uuid7_shifted(1.5), TypeError, None),
    ],
)
def test_explicit_times_out_of_range_name_their_field(call: Any, error: type, field: Any) -> None:
    g = flakeid.UuidGenerator()
    with pytest.raises(error) as excinfo:
        call(g)
    if field is not None:
        assert excinfo.value.field == field, str(excinfo.value)
    assert g.stats()["ids_issued"] == 0
