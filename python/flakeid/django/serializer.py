"""Django's JSON serializer, writing FlakeIdField values (primary keys and foreign
keys to them included) as strings, so that JavaScript reads them whole. Enable it
with ``SERIALIZATION_MODULES = {"json": "flakeid.django.serializer"}``; it reads
both strings and numbers back."""

from __future__ import annotations

from typing import Any

from django.core.serializers import json as django_json

from flakeid.django import FlakeIdField

Deserializer = django_json.Deserializer


def _is_flakeid(field: Any) -> bool:
    return isinstance(field, FlakeIdField) or isinstance(
        getattr(field, "target_field", None), FlakeIdField
    )


class Serializer(django_json.Serializer):
    def _value_from_field(self, obj: Any, field: Any) -> Any:
        value = super()._value_from_field(obj, field)
        return str(value) if isinstance(field, FlakeIdField) and value is not None else value

    def handle_fk_field(self, obj: Any, field: Any) -> None:
        super().handle_fk_field(obj, field)
        value = self._current[field.name]
        if _is_flakeid(field) and isinstance(value, int):
            self._current[field.name] = str(value)

    def handle_m2m_field(self, obj: Any, field: Any) -> None:
        super().handle_m2m_field(obj, field)
        values = self._current.get(field.name)
        if _is_flakeid(field) and isinstance(values, list):
            self._current[field.name] = [str(v) if isinstance(v, int) else v for v in values]
