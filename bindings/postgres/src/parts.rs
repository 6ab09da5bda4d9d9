//! Taking IDs apart and putting them together: `flakeid_decompose`,
//! `flakeid_timestamp`, `flakeid_compose`, and their text forms (`flakeid_encode`,
//! `flakeid_decode`). The first three have two forms: with a layout name,
//! IMMUTABLE (the result depends on the arguments alone), and without one, STABLE: it
//! reads `flakeid.layout`, which is fixed while the server runs but may differ after
//! a restart or in another cluster (a restore must not keep results computed under
//! another layout in indexes or generated columns).

use crate::convert::{layout as layout_named, ok, timestamptz, unix_ms};
use crate::error::{Report, SqlFn, from_bigint, to_bigint};
use crate::settings::server_layout;
use flakeid_core::{Encoding, Error, Layout, decode, decode_auto, encode};
use pgrx::PgSqlErrorCode;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;

// The fields of an ID as one composite value: `(flakeid_decompose(id)).node`,
// `SELECT * FROM flakeid_decompose(id)`, `FROM t, flakeid_decompose(t.id) d`.
pgrx::extension_sql!(
    "CREATE TYPE flakeid_parts AS (ts timestamptz, datacenter int, worker int, node int, sequence int);",
    name = "flakeid_parts",
    bootstrap
);
const PARTS: &str = "flakeid_parts";

/// The row of the function's own result type: found through the function (by OID,
/// as the extension script resolved it in `@extschema@`), never by name through the
/// caller's `search_path`, where it may be missing or another type may sit first.
#[track_caller]
fn decompose(fcinfo: pg_sys::FunctionCallInfo, id: i64, layout: Layout) -> pgrx::composite_type!('static, PARTS) {
    let parts = ok(layout.try_decompose(from_bigint(id, "id")), "id");
    let mut typoid = pg_sys::InvalidOid;
    // SAFETY: fcinfo is this call's; PostgreSQL resolves its declared result type.
    let class = unsafe { pg_sys::get_call_result_type(fcinfo, &mut typoid, std::ptr::null_mut()) };
    let row = (class == pg_sys::TypeFuncClass::TYPEFUNC_COMPOSITE)
        .then(|| PgHeapTuple::new_composite_type_by_oid(typoid).ok())
        .flatten();
    let Some(mut row) = row else {
        internal(format!(
            "the result type of flakeid_decompose (OID {typoid:?}) is not {PARTS}"
        ))
    };
    let ts = row.set_by_name("ts", timestamptz(parts.timestamp_ms));
    // Preset fields are at most 22 bits: they fit an int.
    let fields = [
        ("datacenter", parts.datacenter),
        ("worker", parts.worker),
        ("node", parts.node),
        ("sequence", parts.sequence),
    ];
    let ints = fields
        .into_iter()
        .try_for_each(|(name, v)| row.set_by_name(name, v as i32));
    if let Err(e) = ts.and(ints) {
        internal(format!("{PARTS}: {e}"));
    }
    row
}

#[cold]
#[track_caller]
fn internal(message: String) -> ! {
    Report::new(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, message).raise(SqlFn::PURE)
}

/// The fields of an ID: its time (the start of its tick), node id and sequence.
#[pg_extern(stable, parallel_safe, name = "flakeid_decompose", requires = ["flakeid_parts"])]
fn flakeid_decompose_server(id: i64, fcinfo: pg_sys::FunctionCallInfo) -> pgrx::composite_type!('static, PARTS) {
    decompose(fcinfo, id, server_layout())
}

#[pg_extern(immutable, parallel_safe, requires = ["flakeid_parts"])]
fn flakeid_decompose(id: i64, layout: &str, fcinfo: pg_sys::FunctionCallInfo) -> pgrx::composite_type!('static, PARTS) {
    decompose(fcinfo, id, layout_named(layout))
}

#[track_caller]
fn timestamp(id: i64, layout: Layout) -> TimestampWithTimeZone {
    timestamptz(ok(layout.try_decompose(from_bigint(id, "id")), "id").timestamp_ms)
}

/// When an ID was made (the start of its tick).
#[pg_extern(stable, parallel_safe, name = "flakeid_timestamp")]
fn flakeid_timestamp_server(id: i64) -> TimestampWithTimeZone {
    timestamp(id, server_layout())
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_timestamp(id: i64, layout: &str) -> TimestampWithTimeZone {
    timestamp(id, layout_named(layout))
}

#[track_caller]
fn compose(ts: TimestampWithTimeZone, node: i64, sequence: i64, layout: Layout) -> i64 {
    // Negative values: the core's range message, with the value as given.
    let node = ok(
        u64::try_from(node).map_err(|_| Error::out_of_range("node", 0, layout.max_node(), node)),
        "node",
    );
    let sequence = ok(
        u64::try_from(sequence).map_err(|_| Error::out_of_range("sequence", 0, layout.max_sequence(), sequence)),
        "sequence",
    );
    to_bigint(ok(layout.compose(unix_ms(ts), node, sequence), "ts"))
}

/// The ID of a time, node id and sequence (the inverse of flakeid_decompose).
#[pg_extern(stable, parallel_safe, name = "flakeid_compose")]
fn flakeid_compose_server(ts: TimestampWithTimeZone, node: i64, sequence: i64) -> i64 {
    compose(ts, node, sequence, server_layout())
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_compose(ts: TimestampWithTimeZone, node: i64, sequence: i64, layout: &str) -> i64 {
    compose(ts, node, sequence, layout_named(layout))
}

/// An ID as fixed-width, sort-preserving text: base62 (11), base32 (13), hex (16), or decimal.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_encode(id: i64, encoding: &str) -> String {
    let encoding = ok(encoding.parse::<Encoding>(), "encoding");
    encode(from_bigint(id, "id"), encoding)
}

/// Reads text in the given encoding.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_decode(text: &str, encoding: &str) -> i64 {
    let encoding = ok(encoding.parse::<Encoding>(), "encoding");
    to_bigint(ok(decode(text, encoding), "text"))
}

/// Reads text in whichever encoding it is in; an ambiguous text is an error.
#[pg_extern(immutable, parallel_safe, name = "flakeid_decode")]
fn flakeid_decode_auto(text: &str) -> i64 {
    to_bigint(ok(decode_auto(text), "text").0)
}
