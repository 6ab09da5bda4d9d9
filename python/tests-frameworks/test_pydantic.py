"""flakeid.pydantic.FlakeId: int or decimal string in, range by layout, string out in JSON;
flakeid.pydantic.Uuid7: a UUIDv7 or a ValidationError with the engine's message."""

from __future__ import annotations

import uuid

import pytest
from pydantic import BaseModel, Field, ValidationError

import flakeid
from flakeid.pydantic import FlakeId, Uuid7, flakeid_type

BIG = 910499571847892992


class Order(BaseModel):
    id: FlakeId
    parent: FlakeId | None = None


class Sony(BaseModel):
    id: flakeid_type("sonyflake")  # type: ignore[valid-type]


def test_int_or_string_in_string_out() -> None:
    for given in (BIG, str(BIG)):
        order = Order(id=given)
        assert order.id == BIG
        assert order.model_dump() == {"id": BIG, "parent": None}
        assert order.model_dump_json() == f'{{"id":"{BIG}","parent":null}}'
    assert Order.model_validate_json(f'{{"id":"{BIG}"}}').id == BIG
    assert Order.model_validate_json(f'{{"id":{BIG}}}').id == BIG  # Python's JSON keeps every digit


def test_range_by_layout() -> None:
    Order(id=(1 << 63) - 1)
    for bad in (-1, 1 << 63, "12x", "", 1.5, True, " 1"):
        with pytest.raises(ValidationError) as caught:
            Order(id=bad)
        assert caught.value.errors()[0]["loc"] == ("id",)
    sony = flakeid.Layout.preset("sonyflake").max_id
    Sony(id=sony)
    with pytest.raises(ValidationError, match=rf"an ID of this layout is in 0\.\.={sony}"):
        Sony(id=sony + 1)


def test_json_schema_is_a_string() -> None:
    schema = Order.model_json_schema()
    assert schema["properties"]["id"]["type"] == "string"


class Document(BaseModel):
    id: Uuid7 = Field(default_factory=flakeid.uuid7)


def test_uuid7_defaults_validates_and_writes_text() -> None:
    a, b = Document(), Document()
    assert a.id.version == 7 and a.id < b.id
    assert Document.model_validate_json(a.model_dump_json()).id == a.id
    assert a.model_dump_json() == f'{{"id":"{a.id}"}}'
    # The A.6 vector of RFC 9562 (tests/vectors/uuid.json) passes; a v4 does not.
    assert Document(id="017f22e2-79b0-7cc3-98c4-dc0c0c07398f").id.version == 7
    with pytest.raises(
        ValidationError, match=r"not a UUIDv7: its version field \(bits 48-51\) is 4"
    ):
        Document(id=uuid.uuid4())
