"""Pydantic v2: ``FlakeId``, an annotated ``int`` that takes an ID as an int or a
decimal string, checks its range, and is written as a string in JSON (JavaScript's
numbers lose IDs above 2^53)::

    from pydantic import BaseModel
    from flakeid.pydantic import FlakeId

    class Order(BaseModel):
        id: FlakeId

    Order(id="910499571847892992").model_dump_json()   # '{"id":"910499571847892992"}'

``flakeid_type(layout)`` narrows the range to a layout's IDs (``layout.max_id``).

``Uuid7`` is a ``uuid.UUID`` that must be a UUIDv7 (RFC 9562: version 7, variant
``10``), with ``flakeid.uuid7`` as a default factory::

    class Document(BaseModel):
        id: Uuid7 = Field(default_factory=flakeid.uuid7)
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, PlainSerializer, WithJsonSchema

from flakeid._flakeid import Layout, ParseError, parse_id, uuid7_timestamp_ms

__all__ = ["FlakeId", "Uuid7", "flakeid_type"]


def _validator(layout: Layout) -> Any:
    def check(value: Any) -> int:
        try:
            return parse_id(
                value, layout
            )  # the engine's rule: int, decimal text or 8 bytes in range
        except ParseError as err:
            raise ValueError(str(err)) from err

    return check


def flakeid_type(layout: Layout | str = "snowflake") -> Any:
    """The annotated type for IDs of `layout` (a Layout or a preset name)."""
    lay = Layout.preset(layout) if isinstance(layout, str) else layout
    name = lay.name or "custom"
    return Annotated[
        int,
        BeforeValidator(_validator(lay)),
        PlainSerializer(lambda v: str(v), return_type=str, when_used="json"),
        WithJsonSchema(
            {"type": "string", "pattern": "^[0-9]{1,20}$", "description": f"a flakeid ID ({name})"}
        ),
    ]


FlakeId = flakeid_type("snowflake")


def _check_uuid7(value: uuid.UUID) -> uuid.UUID:
    try:
        uuid7_timestamp_ms(value)  # the engine's rule: version 7, variant 10
    except ParseError as err:
        raise ValueError(str(err)) from err
    return value


def _uuid7_type() -> Any:
    """The annotated type: a uuid.UUID (pydantic reads its text and bytes), then the check."""
    return Annotated[uuid.UUID, AfterValidator(_check_uuid7)]


Uuid7 = _uuid7_type()
