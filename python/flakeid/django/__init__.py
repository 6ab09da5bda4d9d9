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
``"LEASE": "database"`` leases the node id from the app's own PostgreSQL
(``DATABASES["default"]``: its host, port, user, password, name and TLS ``OPTIONS``),
the setting for replicas outside Kubernetes; another database is a ``ConfigError``.
Each process builds its own generator on first use (gunicorn ``--preload`` and
forked workers included). Several workers need a lease: a fixed ``NODE`` serves one
process per host, and the host guard refuses the others.

IDs on the JSON wire: ``JSON.parse`` rounds a number above 2^53, so IDs travel as
strings. Python's ``json`` writes every ``int`` (subclasses too) as a number without
asking ``default()``, so the field marks its values instead: what it reads from the
database, its default and ``to_python`` are ``FlakeId``, an ``int`` subclass (equal
to, hashed and stored like the ``int``), and ``FlakeIdJSONEncoder`` (a
``DjangoJSONEncoder``) writes each ``FlakeId`` it finds, however deeply nested, as a
string before encoding. A plain ``int`` stays a number: only values that came
through the field are known to be IDs. ::

    JsonResponse({"order": model_to_dict(order)}, encoder=FlakeIdJSONEncoder)

Django REST framework, when installed, is wired by the app: ``ModelSerializer``
maps ``FlakeIdField`` to ``flakeid.django.rest.FlakeIdSerializerField`` and writes
primary keys of related ``FlakeIdField`` rows as strings too; both read strings and
numbers. The ``json`` serializer below writes strings likewise.

Like ``AutoField``, the field is editable (``model_to_dict`` and the serializers
keep it) but has no form field: a ``ModelForm`` never offers it unless it declares
one, and DRF makes a ``FlakeIdField`` primary key read-only.
"""

from __future__ import annotations

from typing import Any

from django.core import checks, exceptions
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from flakeid import _shared
from flakeid._flakeid import ConfigError, Generator, ParseError, from_bigint, parse_id, to_bigint

__all__ = ["FlakeId", "FlakeIdField", "FlakeIdJSONEncoder", "after_fork", "generator", "next_id"]

after_fork = _shared.after_fork


def generator() -> Generator:
    """The process's generator: built from settings.FLAKEID on first use."""
    from django.conf import settings

    return _shared.generator(getattr(settings, "FLAKEID", None) or {}, _database)


# The default database's connection settings as the app started with them.
_started_with: dict[str, Any] = {}


def _database() -> dict[str, Any]:
    """The default database's connection settings, for ``"LEASE": "database"``: Django's
    names as libpq's, and the driver's ``OPTIONS`` (the engine keeps the ones it uses).
    Read once, when the app starts (the app's check): Django's test runner then swaps
    in a test database, which it drops at the end, and the lease's connection would
    keep it from being dropped; the lease stays in the database the app was started
    with."""
    from django.db import DEFAULT_DB_ALIAS, connections

    if _started_with:
        return _started_with
    connection = connections[DEFAULT_DB_ALIAS]
    db = connection.settings_dict
    _started_with.update(
        {
            **(db.get("OPTIONS") or {}),
            "vendor": connection.vendor,
            "host": db.get("HOST"),
            "port": db.get("PORT"),
            "user": db.get("USER"),
            "password": db.get("PASSWORD"),
            "dbname": db.get("NAME"),
        }
    )
    return _started_with


def _layout() -> Any:
    """settings.FLAKEID's layout (its IDs' range, and how a BIGINT holds them)."""
    from django.conf import settings

    return _shared.layout(getattr(settings, "FLAKEID", None) or {})


class FlakeId(int):
    """An ID read through a ``FlakeIdField``: an ``int`` that ``FlakeIdJSONEncoder``
    writes as a decimal string."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"FlakeId({int(self)})"

    __str__ = int.__repr__  # the digits, as for an int (templates, URLs, str())


def next_id() -> FlakeId:
    """The next ID: FlakeIdField's default (a module-level function, so migrations can name it)."""
    return FlakeId(generator().next_id())


def _as_text(value: Any) -> Any:
    """`value` with every FlakeId inside it (dicts, lists, tuples) turned into its string."""
    if isinstance(value, FlakeId):
        return str(int(value))
    if isinstance(value, dict):
        return {k: _as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_text(v) for v in value]
    return value


class FlakeIdJSONEncoder(DjangoJSONEncoder):
    """Django's JSON encoder, writing ``FlakeId`` values as strings (``JsonResponse(data,
    encoder=FlakeIdJSONEncoder)``, ``json.dumps(data, cls=FlakeIdJSONEncoder)``)."""

    def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
        return super().iterencode(_as_text(o), _one_shot)

    def default(self, o: Any) -> Any:
        return _as_text(super().default(o))


class FlakeIdField(models.BigIntegerField):
    """A BIGINT holding a flakeid ID; new rows get the next ID unless one is given."""

    description = "A flakeid ID (64-bit, k-ordered)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("default", next_id)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        if kwargs.get("default") is next_id:
            del kwargs["default"]
        return name, "flakeid.django.FlakeIdField", args, kwargs

    def formfield(self, **kwargs: Any) -> Any:
        """None, as for an AutoField: a ModelForm declares an ID input if it wants one."""
        return None

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        # A BIGINT holds an ID's 64 bits as they are: negative for a 64-bit layout's bit 63.
        return value if value is None else FlakeId(from_bigint(value, _layout()))

    def to_python(self, value: Any) -> Any:
        if value is None or type(value) is FlakeId:
            return value
        try:
            return FlakeId(
                parse_id(value, _layout())
            )  # the engine's rule: an int or decimal text, in the layout's range
        except ParseError as err:
            raise exceptions.ValidationError(
                "%(field)s: %(error)s", code="invalid", params={"field": self.name, "error": err}
            ) from err

    def get_prep_value(self, value: Any) -> Any:
        out = self.to_python(super().get_prep_value(value))
        return (
            None if out is None else to_bigint(out, _layout())
        )  # the signed BIGINT the database holds

    def value_to_string(self, obj: Any) -> str:
        value = self.value_from_object(obj)
        return "" if value is None else str(value)

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        return [*super().check(**kwargs), *_check_settings()]


def _check_settings() -> list[checks.CheckMessage]:
    from django.conf import settings

    try:
        _shared.check(getattr(settings, "FLAKEID", None) or {}, _database)
    except ConfigError as err:
        return [checks.Error(str(err), hint="see docs/frameworks.md (Django)", id="flakeid.E001")]
    return []
