# Stubs for the native module (bindings/python, pyo3). Checked against the built
# module by `python -m mypy.stubtest flakeid` in `make test-python`.
import array
import datetime as _dt
import os
import uuid
from typing import Any, Final, Mapping, final

__version__: Final[str]
__all__ = [
    "ClockMovedBackwardsError",
    "ConfigError",
    "FlakeIdError",
    "ForkError",
    "Generator",
    "Layout",
    "LeaseError",
    "ManualClock",
    "ParseError",
    "Parts",
    "Sealer",
    "TimeExhaustedError",
    "UuidGenerator",
    "WaitInterruptedError",
    "__version__",
    "check_options",
    "compose_uuid7",
    "configured_twice",
    "database_lease",
    "decode",
    "decompose",
    "encode",
    "first_mac",
    "first_private_ipv4",
    "format_typeid",
    "from_bigint",
    "from_bytes",
    "host_ordinal",
    "hostname",
    "options_from_env",
    "parse_id",
    "parse_typeid",
    "resolve_node",
    "settings_options",
    "to_bigint",
    "to_bytes",
    "typeid",
    "ulid",
    "ulid_to_uuid",
    "uuid7",
    "uuid7_bytes",
    "uuid7_int",
    "uuid7_timestamp_ms",
    "uuid_to_ulid",
]

@final
class Layout:
    """How an ID's 64 bits are split; unspecified fields take Snowflake's values."""

    def __new__(
        cls,
        *,
        time_bits: int | None = None,
        node_bits: int | None = None,
        datacenter_bits: int | None = None,
        worker_bits: int | None = None,
        sequence_bits: int | None = None,
        tick_ms: int | None = None,
        epoch_ms: int | None = None,
        order: str | None = None,
    ) -> Layout: ...
    @staticmethod
    def preset(name: str) -> Layout: ...
    @staticmethod
    def presets() -> list[Layout]: ...
    @property
    def name(self) -> str | None: ...
    @property
    def time_bits(self) -> int: ...
    @property
    def datacenter_bits(self) -> int: ...
    @property
    def worker_bits(self) -> int: ...
    @property
    def node_bits(self) -> int: ...
    @property
    def sequence_bits(self) -> int: ...
    @property
    def tick_ms(self) -> int: ...
    @property
    def epoch_ms(self) -> int: ...
    @property
    def order(self) -> str: ...
    @property
    def total_bits(self) -> int: ...
    @property
    def max_node(self) -> int: ...
    @property
    def max_datacenter(self) -> int: ...
    @property
    def max_worker(self) -> int: ...
    @property
    def max_sequence(self) -> int: ...
    @property
    def ids_per_tick(self) -> int: ...
    @property
    def max_id(self) -> int: ...
    @property
    def last_timestamp_ms(self) -> int: ...
    @property
    def signed_until_ms(self) -> int: ...
    def compose(self, timestamp_ms: int, node: int, sequence: int = 0) -> int: ...
    def compose_parts(
        self, timestamp_ms: int, datacenter: int, worker: int, sequence: int = 0
    ) -> int: ...
    def node_of(self, datacenter: int, worker: int) -> int: ...
    def decompose(self, id: int) -> Parts: ...
    def first_id_at(self, timestamp_ms: int) -> int: ...
    def last_id_at(self, timestamp_ms: int) -> int: ...
    def id_range(self, start_ms: int, end_ms: int) -> tuple[int, int]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Parts:
    """An ID taken apart."""

    @property
    def timestamp_ms(self) -> int: ...
    @property
    def ticks(self) -> int: ...
    @property
    def datacenter(self) -> int: ...
    @property
    def worker(self) -> int: ...
    @property
    def node(self) -> int: ...
    @property
    def sequence(self) -> int: ...
    @property
    def datetime(self) -> _dt.datetime: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class ManualClock:
    """A clock that moves only when told to (for deterministic tests)."""

    def __new__(cls, start_ms: int, auto_advance_ms: int | None = None) -> ManualClock: ...
    def set(self, ms: int) -> None: ...
    def advance(self, ms: int) -> None: ...
    def now_ms(self) -> int: ...
    @property
    def auto_advance_ms(self) -> int: ...

@final
class Sealer:
    """Seals IDs: a keyed, reversible permutation of a layout's IDs (FF1 with AES)."""

    def __new__(
        cls,
        key: bytes | bytearray,
        layout: Layout | str | None = "snowflake",
        tweak: bytes | bytearray | None = b"",
    ) -> Sealer: ...
    def seal(self, id: int) -> int: ...
    def unseal(self, id: int) -> int: ...
    @property
    def bits(self) -> int: ...
    @property
    def max_id(self) -> int: ...

@final
class Generator:
    """Issues unique, k-ordered 64-bit IDs. Thread-safe: share one per node id."""

    def __new__(
        cls,
        datacenter: int | None = None,
        worker: int | None = None,
        *,
        node: int | str | None = None,
        layout: Layout | str | None = "snowflake",
        overflow: str | None = "wait",
        clock_backwards: str | None = "error",
        max_borrow_ms: int | None = 2000,
        max_wait_ms: int | None = 1000,
        clock: ManualClock | None = None,
        lease: str | None = None,
        lease_ttl_ms: int | None = 10000,
        max_sequence: int | None = None,
        state: str | os.PathLike[str] | None = None,
        require_node: bool | str | None = False,
        single_instance: bool | str | None = False,
    ) -> Generator:
        """Keyword options:

        datacenter: The datacenter part of the node id (layouts with datacenter bits).
        Within the layout's range. Unset: 0 when the other part is given; with no node
        source at all, as the node option says.

        worker: The worker part of the node id. Within the layout's range. Unset: 0 when the
        other part is given; with no node source at all, as the node option says.

        node: The whole node id, or env:VAR, hostname, mac, ipv4. Within the layout's range.
        Unset: with no node source given (nor a lease): in a Kubernetes pod, a lease from
        the API server; on a host, a free node id the host guard keeps; in a container or
        with the guard off, refused, naming the fixes.

        layout: A preset name or a custom layout. Default snowflake.

        overflow: When a tick's sequence is used up: wait for the next tick, or borrow from
        the future. One of "wait", "borrow"; default "wait".

        clock_backwards: When the clock reads earlier than IDs issued. One of "error",
        "wait", "monotonic"; default "error".

        max_borrow_ms: How far a borrowing generator may run ahead of the clock. 0 to
        86400000 ms; default 2000 ms.

        max_wait_ms: How long the wait and monotonic clock policies wait for the clock. 0 to
        86400000 ms; default 1000 ms.

        lease: Lease the node id from a store: file:///dir, redis://, postgres://, etcd://.
        Unset: no lease.

        lease_ttl_ms: The lease's time-to-live. 1000 to 3600000 ms; default 10000 ms. Needs
        lease.

        max_sequence: At most max_sequence + 1 IDs per tick, 2^k - 1 (flake-idgen's
        seqMask). Unset: the layout's whole sequence field.

        clock: A manual clock for tests. Unset: the system clock.

        state: A file keeping a high-water timestamp across restarts, for fixed node ids
        (docs/state.md). Unset: no state file.

        require_node: Refuse to start without a node source (node, worker or lease) instead
        of taking one from Kubernetes or this host. Default False.

        single_instance: The only instance of the app: with no node id, take a free one on
        this host even in a container. Default False.
        """
    def next_id(self) -> int: ...
    def next_ids(self, n: int) -> list[int]: ...
    def next_ids_array(self, n: int) -> array.array[int]: ...
    def next_bytes(self) -> bytes: ...
    @property
    def layout(self) -> Layout: ...
    @property
    def node(self) -> int: ...
    @property
    def datacenter(self) -> int: ...
    @property
    def worker(self) -> int: ...
    @property
    def overflow(self) -> str: ...
    @property
    def clock_backwards(self) -> str: ...
    @property
    def max_borrow_ms(self) -> int: ...
    @property
    def max_wait_ms(self) -> int: ...
    @property
    def last_issued_ms(self) -> int | None: ...
    @property
    def leased(self) -> bool: ...
    @property
    def lease_state(self) -> str | None: ...
    @property
    def node_origin(self) -> str: ...
    def stats(self) -> dict[str, int | str | None]: ...
    def release_lease(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Generator: ...
    def __exit__(self, kind: object, value: object, tb: object) -> None: ...

def decompose(id: int, layout: Layout | str | None = "snowflake") -> Parts: ...
def encode(id: int, encoding: str | None = None) -> str: ...
def decode(text: str, encoding: str | None = None) -> int: ...
def to_bytes(id: int) -> bytes: ...
def from_bytes(data: bytes) -> int: ...
def resolve_node(source: str, layout: Layout | str | None = "snowflake") -> int: ...
def host_ordinal(host: str | None = None) -> int: ...
def hostname() -> str: ...
def first_mac() -> int: ...
def first_private_ipv4() -> str: ...
def options_from_env(env: Mapping[str, str] | None = None) -> dict[str, Any]: ...
def settings_options(settings: Mapping[str, Any]) -> dict[str, Any]: ...
def parse_id(value: int | str | bytes, layout: Layout | str | None = "snowflake") -> int: ...
def to_bigint(id: int | str | bytes, layout: Layout | str | None = "snowflake") -> int: ...
def from_bigint(stored: int, layout: Layout | str | None = "snowflake") -> int: ...
def configured_twice(first: str, second: str) -> ConfigError: ...
def database_lease(lease: str, parts: Mapping[str, Any]) -> str: ...
def check_options(**options: Any) -> None: ...

_Wide = uuid.UUID | int | bytes | str

@final
class UuidGenerator:
    """UUIDv7s, ULIDs and TypeIDs (the same 128 bits), monotonic across threads."""

    def __new__(
        cls,
        *,
        overflow: str | None = ...,
        clock_backwards: str | None = ...,
        max_borrow_ms: int | None = ...,
        max_wait_ms: int | None = ...,
        clock: ManualClock | None = ...,
    ) -> UuidGenerator:
        """Keyword options:

        overflow: When a tick's sequence is used up: wait for the next tick, or borrow from
        the future. One of "wait", "borrow"; default "borrow".

        clock_backwards: When the clock reads earlier than IDs issued. One of "error",
        "wait", "monotonic"; default "error".

        max_borrow_ms: How far a borrowing generator may run ahead of the clock. 0 to
        86400000 ms; default 2000 ms.

        max_wait_ms: How long the wait and monotonic clock policies wait for the clock. 0 to
        86400000 ms; default 1000 ms.

        clock: A manual clock for tests. Unset: the system clock.
        """
    def uuid7(
        self,
        timestamp: int | _dt.datetime | None = None,
        nanos: int | None = None,
        *,
        nanoseconds: int | None = None,
    ) -> uuid.UUID: ...
    def uuid7_at(self, when: int | _dt.datetime) -> uuid.UUID: ...
    def uuid7_shifted(self, shift: int | _dt.timedelta) -> uuid.UUID: ...
    def uuid7s(self, n: int) -> list[uuid.UUID]: ...
    def uuid7_int(self) -> int: ...
    def uuid7_bytes(self) -> bytes: ...
    def ulid(self) -> str: ...
    def typeid(self, prefix: str) -> str: ...
    def stats(self) -> dict[str, int]: ...
    def close(self) -> None: ...

def compose_uuid7(ms: int, rand_a: int, rand_b: int) -> uuid.UUID: ...
def parse_typeid(text: str) -> tuple[str, uuid.UUID]: ...
def format_typeid(prefix: str, value: _Wide) -> str: ...
def ulid_to_uuid(ulid: str) -> uuid.UUID: ...
def uuid_to_ulid(value: _Wide) -> str: ...
def uuid7_timestamp_ms(value: _Wide) -> int: ...
def uuid7(
    timestamp: int | _dt.datetime | None = None,
    nanos: int | None = None,
    *,
    nanoseconds: int | None = None,
) -> uuid.UUID: ...
def uuid7_int() -> int: ...
def uuid7_bytes() -> bytes: ...
def ulid() -> str: ...
def typeid(prefix: str) -> str: ...

class FlakeIdError(Exception):
    """Base class of every flakeid error."""

    code: str

class ConfigError(FlakeIdError, ValueError):
    field: str

class ClockMovedBackwardsError(FlakeIdError):
    by_ms: int

class TimeExhaustedError(FlakeIdError): ...

class ParseError(FlakeIdError, ValueError):
    position: int

class ForkError(FlakeIdError): ...
class LeaseError(FlakeIdError): ...
class WaitInterruptedError(FlakeIdError): ...
