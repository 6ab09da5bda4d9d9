//! The SQL functions. Each pure function has two forms: without a layout name (the
//! server's `flakeid.layout`) and with one. They are IMMUTABLE: the server's layout
//! is fixed while it runs (and must not change under stored IDs), so the planner
//! may fold `flakeid_range(...)` into constants and prune partitions by ID.

use crate::error::{self, Source, from_bigint, to_bigint};
use crate::server::{generator, server_layout};
use flakeid_core::{Encoding, Error, Layout, check_batch, decode, decode_auto, encode};
use pgrx::datum::{Range, RangeBound, TimestampWithTimeZone};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ops::Bound;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_US: i128 = 946_684_800_000_000;

fn layout(name: &str) -> Layout {
    Layout::preset(name).unwrap_or_else(|err| error::raise(err, Source::Argument, "layout"))
}

fn ok<T>(result: Result<T, Error>, what: &str) -> T {
    result.unwrap_or_else(|err| error::raise(err, Source::Argument, what))
}

/// `timestamptz` as Unix µs (`None` for ±infinity).
fn unix_us(ts: TimestampWithTimeZone) -> Option<i128> {
    ts.is_finite()
        .then(|| i128::from(pg_sys::TimestampTz::from(ts)) + PG_EPOCH_US)
}

fn timestamptz(unix_ms: u64) -> TimestampWithTimeZone {
    let pg_us = i128::from(unix_ms) * 1000 - PG_EPOCH_US;
    i64::try_from(pg_us)
        .ok()
        .and_then(|us| TimestampWithTimeZone::try_from(us).ok())
        .unwrap_or_else(|| {
            error::raise(
                Error::TimeExhausted {
                    message: format!("{unix_ms} ms since 1970 is past timestamptz's range"),
                },
                Source::Argument,
                "id",
            )
        })
}

/// A time as Unix ms (floored), or TimeExhausted when no layout can hold it.
fn unix_ms(ts: TimestampWithTimeZone) -> u64 {
    unix_us(ts)
        .and_then(|us| u64::try_from(us.div_euclid(1000)).ok())
        .unwrap_or_else(|| {
            error::raise(
                Error::TimeExhausted {
                    message: match (ts.is_infinity(), ts.is_neg_infinity()) {
                        (true, _) => "infinity is not a time an ID can hold".into(),
                        (_, true) => "-infinity is not a time an ID can hold".into(),
                        _ => "a time before 1970 is before every layout's epoch".into(),
                    },
                },
                Source::Argument,
                "ts",
            )
        })
}

// ---- the server's generator ----

/// The next ID from the server's generator (one per server, in shared memory).
#[pg_extern(volatile, parallel_safe)]
fn flakeid_next() -> i64 {
    match generator().next_id() {
        Ok(id) => to_bigint(id),
        Err(err) => error::raise(err, Source::Setting, ""),
    }
}

/// IDs a `flakeid_next_many` call reserves at once (a tick's worth for snowflake).
const MANY_CHUNK: usize = 4096;

/// `n` IDs, increasing. Made in runs of [`MANY_CHUNK`] as rows are consumed, so a
/// large `n` never holds gigabytes outside PostgreSQL's memory accounting.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_next_many(n: i32) -> SetOfIterator<'static, i64> {
    let n = ok(check_batch(i128::from(n)), "n");
    let generator = generator();
    let runs = (0..n).step_by(MANY_CHUNK).map(move |start| {
        let mut run = vec![0u64; MANY_CHUNK.min(n - start)];
        ok(generator.fill(&mut run), "n");
        run.into_iter().map(to_bigint)
    });
    SetOfIterator::new(runs.flatten())
}

// ---- decoding ----

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
    decompose(id, self::layout(layout))
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
    timestamp(id, self::layout(layout))
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
    compose(ts, node, sequence, self::layout(layout))
}

// ---- time ranges ----

/// The smallest ID of `ts`'s tick: `id >= flakeid_first_at(ts)`.
#[pg_extern(immutable, parallel_safe, name = "flakeid_first_at")]
fn flakeid_first_at_server(ts: TimestampWithTimeZone) -> i64 {
    to_bigint(ok(server_layout().first_id_at(unix_ms(ts)), "ts"))
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_first_at(ts: TimestampWithTimeZone, layout: &str) -> i64 {
    to_bigint(ok(self::layout(layout).first_id_at(unix_ms(ts)), "ts"))
}

/// The largest ID of `ts`'s tick: `id <= flakeid_last_at(ts)`.
#[pg_extern(immutable, parallel_safe, name = "flakeid_last_at")]
fn flakeid_last_at_server(ts: TimestampWithTimeZone) -> i64 {
    to_bigint(ok(server_layout().last_id_at(unix_ms(ts)), "ts"))
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_last_at(ts: TimestampWithTimeZone, layout: &str) -> i64 {
    to_bigint(ok(self::layout(layout).last_id_at(unix_ms(ts)), "ts"))
}

/// The IDs whose time (`flakeid_timestamp(id)`) lies in `range`, as an int8range:
/// `flakeid_timestamp(id) <@ r` exactly when `id <@ flakeid_range(r)`.
fn id_range(range: Range<TimestampWithTimeZone>, layout: Layout) -> Range<i64> {
    let Some((lo, hi)) = range.into_inner() else {
        return Range::empty();
    };
    // ±infinity as a bound value: unbounded, or nothing at all.
    let bound = |b: RangeBound<TimestampWithTimeZone>, empty_at: fn(&TimestampWithTimeZone) -> bool| match b {
        RangeBound::Inclusive(t) | RangeBound::Exclusive(t) if !t.is_finite() => {
            if empty_at(&t) {
                None
            } else {
                Some(Bound::Unbounded)
            }
        }
        RangeBound::Inclusive(t) => unix_us(t).map(Bound::Included),
        RangeBound::Exclusive(t) => unix_us(t).map(Bound::Excluded),
        RangeBound::Infinite => Some(Bound::Unbounded),
    };
    let (Some(lo), Some(hi)) = (
        bound(lo, TimestampWithTimeZone::is_infinity),
        bound(hi, TimestampWithTimeZone::is_neg_infinity),
    ) else {
        return Range::empty();
    };
    match layout
        .ids_with_time_in(lo, hi)
        .map(|(a, b)| (i64::try_from(a), i64::try_from(b)))
    {
        Some((Ok(a), Ok(b))) if b < i64::MAX => Range::new(a, RangeBound::Exclusive(b + 1)),
        // int8range cannot end after i64::MAX: leave it open.
        Some((Ok(a), _)) => Range::new(a, None),
        _ => Range::empty(),
    }
}

/// For `WHERE id <@ flakeid_range(tstzrange(...))` and ID-partitioned tables.
#[pg_extern(immutable, parallel_safe, name = "flakeid_range")]
fn flakeid_range_server(range: Range<TimestampWithTimeZone>) -> Range<i64> {
    id_range(range, server_layout())
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_range(range: Range<TimestampWithTimeZone>, layout: &str) -> Range<i64> {
    id_range(range, self::layout(layout))
}

// ---- text encodings ----

/// An ID as fixed-width, sort-preserving text: base62 (11), base32 (13), hex (16), or decimal.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_encode(id: i64, encoding: &str) -> String {
    let encoding = ok(Encoding::parse(encoding), "encoding");
    encode(from_bigint(id, "id"), encoding)
}

/// Reads text in the given encoding.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_decode(text: &str, encoding: &str) -> i64 {
    let encoding = ok(Encoding::parse(encoding), "encoding");
    to_bigint(ok(decode(text, encoding), "text"))
}

/// Reads text in whichever encoding it is in; an ambiguous text is an error.
#[pg_extern(immutable, parallel_safe, name = "flakeid_decode")]
fn flakeid_decode_auto(text: &str) -> i64 {
    to_bigint(ok(decode_auto(text), "text").0)
}

// PostgreSQL 15's planner neither uses a B-tree index nor prunes partitions for
// `id <@ int8range` (no planner support for that operator). These SQL functions are
// inlined into the query as `id >= first AND id <= last`, which does both; with
// constant arguments the bounds are folded at plan time.
pgrx::extension_sql!(
    r#"
CREATE FUNCTION flakeid_in_range(id bigint, r tstzrange) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NOT isempty(flakeid_range(r))
       AND id >= coalesce(lower(flakeid_range(r)), 0)
       AND id <= coalesce(upper(flakeid_range(r)) - 1, 9223372036854775807)
$$;
COMMENT ON FUNCTION flakeid_in_range(bigint, tstzrange) IS
    'id <@ flakeid_range(r), in a form the planner can use for indexes and partition pruning';
CREATE FUNCTION flakeid_in_range(id bigint, r tstzrange, layout text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NOT isempty(flakeid_range(r, layout))
       AND id >= coalesce(lower(flakeid_range(r, layout)), 0)
       AND id <= coalesce(upper(flakeid_range(r, layout)) - 1, 9223372036854775807)
$$;
"#,
    name = "flakeid_in_range",
    requires = [flakeid_range_server, flakeid_range],
);
