//! Taking IDs apart and putting them together: `flakeid_decompose`,
//! `flakeid_timestamp`, `flakeid_compose`. Each pure function has two forms: without
//! a layout name (the server's `flakeid.layout`) and with one. They are IMMUTABLE:
//! the server's layout is fixed while it runs (and must not change under stored IDs).

use crate::convert::{layout as layout_named, ok, timestamptz, unix_ms};
use crate::error::{from_bigint, to_bigint};
use crate::server::server_layout;
use flakeid_core::{Error, Layout};
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

fn decompose(id: i64, layout: Layout) -> pgrx::composite_type!('static, PARTS) {
    let parts = ok(layout.try_decompose(from_bigint(id, "id")), "id");
    let mut row = PgHeapTuple::new_composite_type(PARTS).unwrap_or_else(|e| panic!("type {PARTS}: {e}"));
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
        panic!("type {PARTS}: {e}");
    }
    row
}

/// The fields of an ID: its time (the start of its tick), node id and sequence.
#[pg_extern(immutable, parallel_safe, name = "flakeid_decompose", requires = ["flakeid_parts"])]
fn flakeid_decompose_server(id: i64) -> pgrx::composite_type!('static, PARTS) {
    decompose(id, server_layout())
}

#[pg_extern(immutable, parallel_safe, requires = ["flakeid_parts"])]
fn flakeid_decompose(id: i64, layout: &str) -> pgrx::composite_type!('static, PARTS) {
    decompose(id, layout_named(layout))
}

fn timestamp(id: i64, layout: Layout) -> TimestampWithTimeZone {
    timestamptz(ok(layout.try_decompose(from_bigint(id, "id")), "id").timestamp_ms)
}

/// When an ID was made (the start of its tick).
#[pg_extern(immutable, parallel_safe, name = "flakeid_timestamp")]
fn flakeid_timestamp_server(id: i64) -> TimestampWithTimeZone {
    timestamp(id, server_layout())
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_timestamp(id: i64, layout: &str) -> TimestampWithTimeZone {
    timestamp(id, layout_named(layout))
}

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
#[pg_extern(immutable, parallel_safe, name = "flakeid_compose")]
fn flakeid_compose_server(ts: TimestampWithTimeZone, node: i64, sequence: i64) -> i64 {
    compose(ts, node, sequence, server_layout())
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_compose(ts: TimestampWithTimeZone, node: i64, sequence: i64, layout: &str) -> i64 {
    compose(ts, node, sequence, layout_named(layout))
}
