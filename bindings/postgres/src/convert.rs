//! SQL values to the engine's and back: times, layout names, errors.

use crate::error::raise_argument;
use flakeid_core::{Error, Layout};
use pgrx::datum::TimestampWithTimeZone;
use pgrx::pg_sys;

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_US: i128 = 946_684_800_000_000;

/// A layout named by an SQL argument.
#[track_caller]
pub fn layout(name: &str) -> Layout {
    ok(Layout::preset(name), "layout")
}

/// The value, or the engine's error raised about SQL argument `what`.
#[track_caller]
pub fn ok<T>(result: Result<T, Error>, what: &str) -> T {
    match result {
        Ok(v) => v,
        Err(err) => raise_argument(err, what),
    }
}

/// `timestamptz` as Unix µs (`None` for ±infinity).
pub fn unix_us(ts: TimestampWithTimeZone) -> Option<i128> {
    ts.is_finite()
        .then(|| i128::from(pg_sys::TimestampTz::from(ts)) + PG_EPOCH_US)
}

#[track_caller]
pub fn timestamptz(unix_ms: u64) -> TimestampWithTimeZone {
    let pg_us = i128::from(unix_ms) * 1000 - PG_EPOCH_US;
    let ts = i64::try_from(pg_us)
        .ok()
        .and_then(|us| TimestampWithTimeZone::try_from(us).ok());
    ok(
        ts.ok_or_else(|| Error::TimeExhausted {
            message: format!("{unix_ms} ms since 1970 is past timestamptz's range"),
        }),
        "id",
    )
}

/// A Unix-ms time as PostgreSQL prints a timestamptz (for messages and the log).
pub fn show_ms(unix_ms: u64) -> String {
    if unix_ms == 0 {
        return "none".to_string();
    }
    let pg_us = i128::from(unix_ms) * 1000 - PG_EPOCH_US;
    let Ok(pg_us) = i64::try_from(pg_us) else {
        return format!("{unix_ms} ms since 1970");
    };
    // SAFETY: formats into a static buffer, copied out at once.
    unsafe { std::ffi::CStr::from_ptr(pg_sys::timestamptz_to_str(pg_us)) }
        .to_string_lossy()
        .into_owned()
}

/// A time as Unix ms (floored), or TimeExhausted when no layout can hold it.
#[track_caller]
pub fn unix_ms(ts: TimestampWithTimeZone) -> u64 {
    let ms = unix_us(ts).and_then(|us| u64::try_from(us.div_euclid(1000)).ok());
    ok(
        ms.ok_or_else(|| Error::TimeExhausted {
            message: match (ts.is_infinity(), ts.is_neg_infinity()) {
                (true, _) => "infinity is not a time an ID can hold".into(),
                (_, true) => "-infinity is not a time an ID can hold".into(),
                _ => "a time before 1970 is before every layout's epoch".into(),
            },
        }),
        "ts",
    )
}
