"""flakeid.Sealer beyond the shared vectors (test_vectors.py runs seal.json): typed
errors naming the field, key hygiene in repr and messages, properties (Hypothesis),
and docs/sealing.md's Python example, run as written."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flakeid

KEY = bytes(range(16))
# FLAKEID_DOCS: the repository's docs/ when the tests run from a copy (tests/dist/run.py).
DOCS = (
    Path(os.environ.get("FLAKEID_DOCS", Path(__file__).resolve().parents[2] / "docs"))
    / "sealing.md"
)


def test_round_trip_and_range() -> None:
    sealer = flakeid.Sealer(KEY)
    gen = flakeid.Generator(worker=1)
    id_ = gen.next_id()
    public = sealer.seal(id_)
    assert public != id_ and 0 <= public <= flakeid.Layout.preset("snowflake").max_id
    assert sealer.unseal(public) == id_
    assert (sealer.bits, sealer.max_id) == (63, 2**63 - 1)
    assert flakeid.Sealer(bytearray(KEY)).seal(id_) == public
    assert flakeid.Sealer(KEY, layout=flakeid.Layout.preset("discord")).bits == 64
    # A tweak gives another permutation; None is the empty tweak.
    assert flakeid.Sealer(KEY, tweak=b"orders").seal(id_) != public
    assert (
        flakeid.Sealer(KEY, tweak=None).seal(id_)
        == flakeid.Sealer(KEY, tweak=b"").seal(id_)
        == public
    )


@pytest.mark.parametrize("key", [b"", KEY[:15], KEY + b"\0", bytes(33)])
def test_key_length_is_a_config_error_naming_key(key: bytes) -> None:
    with pytest.raises(flakeid.ConfigError) as e:
        flakeid.Sealer(key)
    assert e.value.field == "key"  # type: ignore[attr-defined]
    assert "16, 24 or 32 bytes" in str(e.value)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("id_", [-1, 2**63, 2**64, 10**30])
@pytest.mark.parametrize("op", ["seal", "unseal"])
def test_out_of_range_ids_are_config_errors_naming_id(op: str, id_: int) -> None:
    with pytest.raises(flakeid.ConfigError) as e:
        getattr(flakeid.Sealer(KEY), op)(id_)
    assert e.value.field == "id"  # type: ignore[attr-defined]
    assert "0..=9223372036854775807" in str(e.value)


def test_small_layout_is_refused_naming_layout() -> None:
    small = flakeid.Layout(time_bits=7, node_bits=4, sequence_bits=8)
    with pytest.raises(flakeid.ConfigError) as e:
        flakeid.Sealer(KEY, layout=small)
    assert e.value.field == "layout"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"key": KEY.hex()}, "key"), ({"key": KEY, "tweak": "orders"}, "tweak")]
)
def test_wrong_types_are_type_errors_naming_the_argument(
    kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(TypeError, match=f"^{field} must be bytes"):
        flakeid.Sealer(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^id must be an int"):
        flakeid.Sealer(KEY).seal("1")  # type: ignore[arg-type]


def test_no_key_material_in_repr_or_errors() -> None:
    key = bytes([0xAB]) * 32
    sealer = flakeid.Sealer(key, tweak=b"secret-tweak")
    text = repr(sealer)
    assert text == "flakeid.Sealer(bits=63, key=<256-bit AES key>, tweak_len=12)"
    for needle in ("ab", "AB", "171", "secret"):
        assert needle not in text
    for bad in (key[:31], key + b"\xab"):
        with pytest.raises(flakeid.ConfigError) as e:
            flakeid.Sealer(bad)
        assert not re.search("ab|AB|171", str(e.value)), str(e.value)


def test_threads_share_one_sealer() -> None:
    sealer = flakeid.Sealer(KEY)
    want = [sealer.seal(i) for i in range(200)]
    got: list[list[int]] = []

    def work() -> None:
        got.append([sealer.seal(i) for i in range(200)])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 4


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**63 - 1), st.binary(max_size=20))
def test_unseal_inverts_seal(id_: int, tweak: bytes) -> None:
    sealer = flakeid.Sealer(KEY, tweak=tweak)
    sealed = sealer.seal(id_)
    assert 0 <= sealed < 2**63
    assert sealer.unseal(sealed) == id_


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**64 - 1))
def test_64_bit_layouts_use_every_bit(id_: int) -> None:
    sealer = flakeid.Sealer(KEY, layout="discord")
    assert sealer.unseal(sealer.seal(id_)) == id_


def test_the_docs_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "docs/sealing.md has one Python example"
    (tmp_path / "seal.key").write_text(os.urandom(32).hex() + "\n")
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], str(DOCS), "exec"), {"__name__": "__docs__"})
