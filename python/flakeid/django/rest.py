"""Django REST framework: IDs as strings on the wire (``JSON.parse`` rounds a number
above 2^53), read back from strings or numbers.

The ``flakeid.django`` app wires this when ``rest_framework`` is installed, through
DRF's documented mapping, ``ModelSerializer.serializer_field_mapping``: every
``ModelSerializer`` maps a ``FlakeIdField`` to ``FlakeIdSerializerField``, and
``ModelSerializer.serializer_related_field`` (DRF's ``PrimaryKeyRelatedField``,
unless a project set its own) becomes ``FlakeIdPrimaryKeyRelatedField``, which
writes the primary key of a related row as a string when it is an ID of a
``FlakeIdField`` (other keys stay as they were). A serializer can also name the
fields itself::

    class OrderSerializer(serializers.ModelSerializer):
        id = FlakeIdSerializerField(read_only=True)
"""

from __future__ import annotations

from typing import Any

from django.core import exceptions
from rest_framework import fields, relations, serializers

from flakeid.django import FlakeId, FlakeIdField

__all__ = ["FlakeIdSerializerField", "FlakeIdPrimaryKeyRelatedField", "install"]


class FlakeIdSerializerField(fields.ModelField):
    """An ID: written as a decimal string, read from a decimal string or an int
    (checked by ``FlakeIdField.to_python``). A primary key is read-only, as DRF
    makes an ``AutoField``. A ``ModelField`` so that ``ModelSerializer`` hands it the
    model field; declared by hand it needs none."""

    def __init__(self, model_field: Any = None, **kwargs: Any) -> None:
        # ModelSerializer passes the model field's range as max_value/min_value
        # (a BigIntegerField's); FlakeIdField.to_python checks the range itself.
        kwargs.pop("max_value", None)
        kwargs.pop("min_value", None)
        if model_field is not None and model_field.primary_key and "read_only" not in kwargs:
            kwargs = {
                k: v
                for k, v in kwargs.items()
                if k not in ("required", "default", "validators", "allow_null")
            }
            kwargs["read_only"] = True
        super().__init__(
            model_field if isinstance(model_field, FlakeIdField) else FlakeIdField(), **kwargs
        )

    def get_attribute(self, instance: Any) -> Any:
        return fields.Field.get_attribute(self, instance)  # the value, not the row (ModelField's)

    def to_representation(self, value: Any) -> str:
        return str(int(value))

    def to_internal_value(self, data: Any) -> FlakeId:
        if isinstance(data, float):  # a float has already lost an ID's last digits
            self.fail("invalid")
        try:
            value: FlakeId = self.model_field.to_python(data)
            return value
        except exceptions.ValidationError as err:
            raise serializers.ValidationError(err.messages) from None

    default_error_messages = {"invalid": "An ID is a decimal string or an integer."}


class FlakeIdPrimaryKeyRelatedField(relations.PrimaryKeyRelatedField):
    """DRF's ``PrimaryKeyRelatedField``, writing an ID key (a ``FlakeId``) as a string."""

    def to_representation(self, value: Any) -> Any:
        pk = super().to_representation(value)
        return str(int(pk)) if isinstance(pk, FlakeId) else pk

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, float):
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(data)


def install() -> None:
    """Map FlakeIdField in every ModelSerializer (the app's ready() calls this)."""
    serializers.ModelSerializer.serializer_field_mapping[FlakeIdField] = FlakeIdSerializerField
    if serializers.ModelSerializer.serializer_related_field is relations.PrimaryKeyRelatedField:
        serializers.ModelSerializer.serializer_related_field = FlakeIdPrimaryKeyRelatedField
