//! IDs by time: `flakeid_first_at`, `flakeid_last_at`, `flakeid_range`,
//! `flakeid_in_range`. With a layout name they are IMMUTABLE (the planner folds them
//! into constants and prunes partitions at plan time); without one they read
//! `flakeid.layout` and are STABLE (folded once per execution: partitions are then
//! pruned at executor start, and index conditions work alike).

use crate::convert::{layout as layout_named, ok, unix_ms, unix_us};
use crate::error::to_bigint;
use crate::settings::server_layout;
use flakeid_core::Layout;
use pgrx::datum::{Range, RangeBound, TimestampWithTimeZone};
use pgrx::prelude::*;
use std::ops::Bound;

/// The smallest ID of `ts`'s tick: `id >= flakeid_first_at(ts)`.
#[pg_extern(stable, parallel_safe, name = "flakeid_first_at")]
fn flakeid_first_at_server(ts: TimestampWithTimeZone) -> i64 {
    to_bigint(ok(server_layout().first_id_at(unix_ms(ts)), "ts"))
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_first_at(ts: TimestampWithTimeZone, layout: &str) -> i64 {
    to_bigint(ok(layout_named(layout).first_id_at(unix_ms(ts)), "ts"))
}

/// The largest ID of `ts`'s tick: `id <= flakeid_last_at(ts)`.
#[pg_extern(stable, parallel_safe, name = "flakeid_last_at")]
fn flakeid_last_at_server(ts: TimestampWithTimeZone) -> i64 {
    to_bigint(ok(server_layout().last_id_at(unix_ms(ts)), "ts"))
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_last_at(ts: TimestampWithTimeZone, layout: &str) -> i64 {
    to_bigint(ok(layout_named(layout).last_id_at(unix_ms(ts)), "ts"))
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
#[pg_extern(stable, parallel_safe, name = "flakeid_range")]
fn flakeid_range_server(range: Range<TimestampWithTimeZone>) -> Range<i64> {
    id_range(range, server_layout())
}

#[pg_extern(immutable, parallel_safe)]
fn flakeid_range(range: Range<TimestampWithTimeZone>, layout: &str) -> Range<i64> {
    id_range(range, layout_named(layout))
}

// PostgreSQL 15's planner neither uses a B-tree index nor prunes partitions for
// `id <@ int8range` (no planner support for that operator). These SQL functions are
// inlined into the query as `id >= first AND id <= last`, which does both. Their
// bodies are parsed with the caller's search_path, so every name in them is
// qualified: @extschema@ for ours, pg_catalog for the built-ins (operators
// included), and none can be found elsewhere or shadowed. (No SET search_path: it
// would stop the inlining.) sql/flakeid--0.1.0--0.2.0.sql repeats these bodies.
pgrx::extension_sql!(
    r#"
CREATE FUNCTION flakeid_in_range(id bigint, r tstzrange) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT NOT pg_catalog.isempty(@extschema@.flakeid_range(r))
       AND id OPERATOR(pg_catalog.>=) coalesce(pg_catalog.lower(@extschema@.flakeid_range(r)), 0::pg_catalog.int8)
       AND id OPERATOR(pg_catalog.<=) coalesce(pg_catalog.upper(@extschema@.flakeid_range(r)) OPERATOR(pg_catalog.-) 1::pg_catalog.int8, 9223372036854775807::pg_catalog.int8)
$$;
COMMENT ON FUNCTION flakeid_in_range(bigint, tstzrange) IS
    'id <@ flakeid_range(r), in a form the planner can use for indexes and partition pruning';
CREATE FUNCTION flakeid_in_range(id bigint, r tstzrange, layout text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT NOT pg_catalog.isempty(@extschema@.flakeid_range(r, layout))
       AND id OPERATOR(pg_catalog.>=) coalesce(pg_catalog.lower(@extschema@.flakeid_range(r, layout)), 0::pg_catalog.int8)
       AND id OPERATOR(pg_catalog.<=) coalesce(pg_catalog.upper(@extschema@.flakeid_range(r, layout)) OPERATOR(pg_catalog.-) 1::pg_catalog.int8, 9223372036854775807::pg_catalog.int8)
$$;
"#,
    name = "flakeid_in_range",
    requires = [flakeid_range_server, flakeid_range],
);
