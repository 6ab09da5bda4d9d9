//! SQL values to the engine's and back: times, layout names, errors.

use crate::error::{self, Source};
use flakeid_core::{Error, Layout};
use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_US: i128 = 946_684_800_000_000;

pub fn layout(name: &str) -> Layout {
    Layout::preset(name).unwrap_or_else(|err| error::raise(err, Source::Argument, "layout"))
}

pub fn ok<T>(result: Result<T, Error>, what: &str) -> T {
    result.unwrap_or_else(|err| error::raise(err, Source::Argument, what))
}

/// `timestamptz` as Unix µs (`None` for ±infinity).
pub fn unix_us(ts: TimestampWithTimeZone) -> Option<i128> {
    ts.is_finite()
        .then(|| i128::from(pg_sys::TimestampTz::from(ts)) + PG_EPOCH_US)
}

pub fn timestamptz(unix_ms: u64) -> TimestampWithTimeZone {
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
pub fn unix_ms(ts: TimestampWithTimeZone) -> u64 {
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
