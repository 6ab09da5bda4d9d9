"""Django: ``FlakeIdField``, a ``BigIntegerField`` whose default is the next ID of
the process's one generator, configured by ``settings.FLAKEID``::

    INSTALLED_APPS = [..., "flakeid.django"]       # checks FLAKEID at start-up
    FLAKEID = {"LEASE": "file:///var/lib/flakeid", "LAYOUT": "snowflake"}  # or postgres://…, redis://…
    SERIALIZATION_MODULES = {"json": "flakeid.django.serializer"}  # IDs as strings in JSON

    class Order(models.Model):
        id = FlakeIdField(primary_key=True)

``FLAKEID`` takes the ``flakeid.Generator`` keywords (``NODE`` or ``DATACENTER`` +
``WORKER`` or ``LEASE``, ``LAYOUT``, ``OVERFLOW``, ...); without a node source the
app refuses to start (a ``ConfigError`` naming ``node``), never running as node 0.
Each process builds its own generator on first use (gunicorn ``--preload`` and
forked workers included). Several workers need a lease: a fixed ``NODE`` serves one
process per host, and the host guard refuses the others.
"""

from __future__ import annotations

from typing import Any

from django.core import checks, exceptions
from django.db import models

from flakeid import _shared
from flakeid._flakeid import Generator

__all__ = ["FlakeIdField", "after_fork", "generator", "next_id"]

after_fork = _shared.after_fork

MAX_ID = (1 << 63) - 1  # a signed BIGINT


def generator() -> Generator:
    """The process's generator: built from settings.FLAKEID on first use."""
    from django.conf import settings

    return _shared.ensure(getattr(settings, "FLAKEID", None) or {}, "settings.FLAKEID")


def next_id() -> int:
    """The next ID: FlakeIdField's default (a module-level function, so migrations can name it)."""
    return generator().next_id()


class FlakeIdField(models.BigIntegerField):
    """A BIGINT holding a flakeid ID; new rows get the next ID unless one is given."""

    description = "A flakeid ID (64-bit, k-ordered)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", next_id)
        kwargs.setdefault("editable", False)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        if kwargs.get("default") is next_id:
            del kwargs["default"]
        if kwargs.get("editable") is False:
            del kwargs["editable"]
        return name, "flakeid.django.FlakeIdField", args, kwargs

    def to_python(self, value: Any) -> Any:
        if value is None or isinstance(value, int) and not isinstance(value, bool):
            out = value
        elif isinstance(value, str) and value.isascii() and value.isdigit():
            out = int(value)
        else:
            raise exceptions.ValidationError(
                "%(field)s: %(value)r is not an ID (a whole number in 0..=%(max)s)",
                code="invalid",
                params={"field": self.name, "value": value, "max": MAX_ID},
            )
        if out is not None and not 0 <= out <= MAX_ID:
            raise exceptions.ValidationError(
                "%(field)s must be in 0..=%(max)s, got %(value)s",
                code="out_of_range",
                params={"field": self.name, "value": out, "max": MAX_ID},
            )
        return out

    def get_prep_value(self, value: Any) -> Any:
        return self.to_python(super().get_prep_value(value))

    def value_to_string(self, obj: Any) -> str:
        value = self.value_from_object(obj)
        return "" if value is None else str(value)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *_check_settings()]


def _check_settings() -> list[checks.CheckMessage]:
    from django.conf import settings

    try:
        _shared.check(getattr(settings, "FLAKEID", None) or {}, "settings.FLAKEID")
    except _shared.ConfigError as err:
        return [checks.Error(str(err), hint="see docs/frameworks.md (Django)", id="flakeid.E001")]
    return []
