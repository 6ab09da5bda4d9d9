//! flakeid_core errors as PostgreSQL ERRORs: one SQLSTATE per [`ErrorKind`], and a
//! message that names the setting or argument at fault. `ereport(ERROR)` unwinds
//! through pgrx's guard to PostgreSQL's error handling: the statement fails, the
//! backend lives on.

use flakeid_core::{Error, ErrorKind};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Where a configuration error came from: a `flakeid.*` setting or an SQL argument.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// postgresql.conf: a `Config` error for field `node` names `flakeid.node`.
    Setting,
    /// A function argument: the core's field names are the SQL argument names.
    Argument,
}

/// The SQLSTATE for each kind of engine error (exhaustive over `ErrorKind::ALL`).
pub fn sqlstate(kind: ErrorKind) -> PgSqlErrorCode {
    match kind {
        ErrorKind::Config => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        ErrorKind::Parse => PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        ErrorKind::TimeExhausted => PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        ErrorKind::Interrupted => PgSqlErrorCode::ERRCODE_QUERY_CANCELED,
        // Clock rollback or stall, a fork, a lost lease: the server's state, not the input.
        _ => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
    }
}

/// Raises `err` as an ERROR. `what` names the argument for parse errors (`text`).
pub fn raise(err: Error, source: Source, what: &str) -> ! {
    if err.kind() == ErrorKind::Interrupted {
        // A cancel or terminate request ended a wait for the clock: let PostgreSQL
        // act on it (it raises its own ERROR or FATAL); report it if it did not.
        pgrx::check_for_interrupts!();
    }
    let message = match (&err, source) {
        (Error::Config { field, message }, Source::Setting) => {
            format!("invalid value for parameter \"flakeid.{field}\": {message}")
        }
        (Error::Config { field, message }, Source::Argument) => {
            format!("invalid value for argument \"{field}\": {message}")
        }
        (Error::Parse { .. }, _) => format!("invalid input for argument \"{what}\": {err}"),
        _ => err.to_string(),
    };
    let mut report = ErrorReport::new(sqlstate(err.kind()), message, "flakeid");
    if matches!(source, Source::Setting) && err.kind() == ErrorKind::Config {
        report = report.set_hint("fix the flakeid.* settings in postgresql.conf and restart the server");
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// An ERROR with an explicit SQLSTATE (values SQL can hold but flakeid cannot).
pub fn raise_code(code: PgSqlErrorCode, message: String, hint: Option<&str>) -> ! {
    let mut report = ErrorReport::new(code, message, "flakeid");
    if let Some(hint) = hint {
        report = report.set_hint(hint);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// An ID as a BIGINT, or 22003 when it needs the sign bit (the 64-bit `flake` layout).
pub fn to_bigint(id: u64) -> i64 {
    i64::try_from(id).unwrap_or_else(|_| {
        raise_code(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("flakeid {id} does not fit a bigint (it sets bit 63)"),
            None,
        )
    })
}

/// A BIGINT argument as an ID, or 22003 naming the argument when it is negative.
pub fn from_bigint(value: i64, what: &str) -> u64 {
    u64::try_from(value).unwrap_or_else(|_| {
        raise_code(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("invalid value for argument \"{what}\": a flakeid is never negative, got {value}"),
            None,
        )
    })
}
