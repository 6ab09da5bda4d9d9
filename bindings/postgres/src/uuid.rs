//! The 128-bit family in SQL: `flakeid_uuidv7()`, `flakeid_ulid()`,
//! `flakeid_typeid(prefix)`, the extract functions, the conversions, and the first
//! and last UUID of a time for `WHERE id BETWEEN`.
//!
//! One sequence per server: every backend's [`UuidGenerator`] runs over one word
//! in shared memory ([`UUID_COUNTER`]), so the UUIDs of all sessions strictly
//! increase together (PostgreSQL 18's own `uuidv7()` promises that per backend
//! only). A UUID needs no node id: a standby, a copied data directory or a restored
//! backup issues them too, kept apart from every other server's by their 58
//! random bits, as any two UUIDv7 generators' are. A restart starts the word over
//! from the clock.

use crate::convert::{ok, timestamptz, unix_ms};
use crate::error::SqlFn;
use crate::server::refuse_unless_preloaded;
use crate::shmem::UUID_COUNTER;
use flakeid_core::{
    SharedCounter, UuidGenerator, format_typeid, format_ulid, parse_typeid, parse_ulid, rfc_uuid_version,
    ulid_timestamp_ms, uuid7_range, uuid7_timestamp_ms,
};
use pgrx::datum::{TimestampWithTimeZone, Uuid};
use pgrx::prelude::*;
use std::sync::OnceLock;

/// This backend's generator over the server's word (built at its first call).
static GENERATOR: OnceLock<UuidGenerator<SharedCounter>> = OnceLock::new();

#[track_caller]
fn generator(f: SqlFn) -> &'static UuidGenerator<SharedCounter> {
    if let Some(g) = GENERATOR.get() {
        return g;
    }
    refuse_unless_preloaded(f, "its UUIDs are one increasing sequence per server, in shared memory");
    let built = ok(UuidGenerator::builder().build_shared(UUID_COUNTER.get()), "uuid");
    GENERATOR.get_or_init(|| built)
}

fn value(id: Uuid) -> u128 {
    u128::from_be_bytes(*id.as_bytes())
}

fn uuid(value: u128) -> Uuid {
    Uuid::from_bytes(value.to_be_bytes())
}

/// The next UUIDv7 (RFC 9562), above every UUID this server issued since it started.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_uuidv7() -> Uuid {
    uuid(ok(generator(SqlFn::UUIDV7).next_uuid7(), "uuid"))
}

/// The next ID as a ULID (the bits of `flakeid_uuidv7()`, in Crockford base32).
#[pg_extern(volatile, parallel_safe)]
fn flakeid_ulid() -> String {
    format_ulid(ok(generator(SqlFn::ULID).next_uuid7(), "uuid"))
}

/// The next ID as a TypeID: `prefix` (checked first), `_`, its ULID in lower case.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_typeid(prefix: &str) -> String {
    ok(generator(SqlFn::TYPEID).next_typeid(prefix), "prefix")
}

/// The time of a UUIDv7; NULL for a UUID of another version or variant (as
/// PostgreSQL 18's `uuid_extract_timestamp` for everything but versions 1 and 7).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuid_timestamp(id: Uuid) -> Option<TimestampWithTimeZone> {
    uuid7_timestamp_ms(value(id)).ok().map(timestamptz)
}

/// The version of an RFC 9562 UUID; NULL for another variant (as PostgreSQL 18's
/// `uuid_extract_version`).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuid_version(id: Uuid) -> Option<i16> {
    rfc_uuid_version(value(id)).map(i16::from)
}

/// The time in a ULID's first 48 bits (any ULID; case-insensitive).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_ulid_timestamp(ulid: &str) -> TimestampWithTimeZone {
    timestamptz(ulid_timestamp_ms(ok(parse_ulid(ulid), "ulid")))
}

/// A UUID's 128 bits as a ULID (a byte copy: no bit changes).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuid_to_ulid(id: Uuid) -> String {
    format_ulid(value(id))
}

/// A ULID's 128 bits as a UUID (a byte copy: no bit changes).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_ulid_to_uuid(ulid: &str) -> Uuid {
    uuid(ok(parse_ulid(ulid), "ulid"))
}

/// A TypeID of `prefix` and `id`'s bits.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_typeid_format(prefix: &str, id: Uuid) -> String {
    ok(format_typeid(prefix, value(id)), "prefix")
}

/// A TypeID's prefix and UUID: `(flakeid_typeid_parse(t)).id`.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_typeid_parse(typeid: &str) -> TableIterator<'static, (name!(prefix, String), name!(id, Uuid))> {
    let (prefix, bits) = ok(parse_typeid(typeid), "typeid");
    TableIterator::once((prefix, uuid(bits)))
}

/// The smallest UUID of `ts`'s millisecond: `id >= flakeid_uuidv7_first_at(ts)`.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuidv7_first_at(ts: TimestampWithTimeZone) -> Uuid {
    let ms = unix_ms(ts);
    uuid(ok(uuid7_range(ms, ms), "ts").0)
}

/// The largest UUID of `ts`'s millisecond: `id <= flakeid_uuidv7_last_at(ts)`.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuidv7_last_at(ts: TimestampWithTimeZone) -> Uuid {
    let ms = unix_ms(ts);
    uuid(ok(uuid7_range(ms, ms), "ts").1)
}
