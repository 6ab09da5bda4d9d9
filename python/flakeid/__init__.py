"""flakeid: k-ordered, collision-free, decodable 64-bit IDs of the Snowflake family.

    >>> import flakeid
    >>> gen = flakeid.Generator(datacenter=1, worker=2)
    >>> parts = flakeid.decompose(gen.next_id())
    >>> (parts.datacenter, parts.worker)
    (1, 2)

The engine is Rust (``flakeid-core``); this package is a thin, typed binding.
"""

from flakeid._flakeid import (
    ClockMovedBackwardsError,
    ConfigError,
    FlakeIdError,
    ForkError,
    Generator,
    Layout,
    LeaseError,
    ManualClock,
    ParseError,
    Parts,
    TimeExhaustedError,
    WaitInterruptedError,
    __version__,
    decode,
    decompose,
    encode,
    first_mac,
    first_private_ipv4,
    from_bigint,
    from_bytes,
    host_ordinal,
    hostname,
    options_from_env,
    parse_id,
    resolve_node,
    settings_options,
    to_bigint,
    to_bytes,
)

try:
    # The 128-bit family: in every wheel and source build; absent only from a lean
    # build (the binding's cargo feature `uuid7` off).
    from flakeid._flakeid import (
        UuidGenerator,
        compose_uuid7,
        format_typeid,
        parse_typeid,
        typeid,
        ulid,
        ulid_to_uuid,
        uuid7,
        uuid7_bytes,
        uuid7_int,
        uuid7_timestamp_ms,
        uuid_to_ulid,
    )
except ImportError:  # pragma: no cover
    pass

try:
    # Sealed IDs: in every wheel and source build; absent only from a lean build
    # (the binding's cargo feature `seal` off).
    from flakeid._flakeid import Sealer
except ImportError:  # pragma: no cover
    pass


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
    "compose_uuid7",
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
