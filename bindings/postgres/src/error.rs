//! flakeid_core errors as PostgreSQL ERRORs: one SQLSTATE per [`ErrorKind`], and a
//! message that names the setting or argument at fault. `ereport(ERROR)` unwinds
//! through pgrx's guard to PostgreSQL's error handling: the statement fails, the
//! backend lives on.
//!
//! Every raising function is `#[track_caller]`, so an error's LOCATION is the line in
//! the SQL function's own file that raised it, and its function name is the SQL
//! function's where the caller knows it (`flakeid_next_many`), not this file's.

use flakeid_core::{Error, ErrorKind};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// The SQL function being called, as its messages and LOCATION name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlFn(pub &'static str);

impl SqlFn {
    pub const NEXT: SqlFn = SqlFn("flakeid_next");
    pub const NEXT_MANY: SqlFn = SqlFn("flakeid_next_many");
    pub const CONFIRM: SqlFn = SqlFn("flakeid_confirm_node");
    pub const UUIDV7: SqlFn = SqlFn("flakeid_uuidv7");
    pub const ULID: SqlFn = SqlFn("flakeid_ulid");
    pub const TYPEID: SqlFn = SqlFn("flakeid_typeid");
    pub const UUIDV7_MANY: SqlFn = SqlFn("flakeid_uuidv7_many");
    /// The functions that read or take an ID apart (no generator involved).
    pub const PURE: SqlFn = SqlFn("flakeid");

    /// Whether this is a function of the 128-bit family's sequence.
    pub fn is_uuid(self) -> bool {
        [SqlFn::UUIDV7, SqlFn::UUIDV7_MANY, SqlFn::ULID, SqlFn::TYPEID].contains(&self)
    }
}

impl std::fmt::Display for SqlFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}()", self.0)
    }
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

/// An ERROR to raise: SQLSTATE, message, and the optional detail and hint.
#[derive(Debug)]
pub struct Report {
    pub code: PgSqlErrorCode,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl Report {
    pub fn new(code: PgSqlErrorCode, message: impl Into<String>) -> Report {
        Report {
            code,
            message: message.into(),
            detail: None,
            hint: None,
        }
    }
    pub fn detail(mut self, detail: impl Into<String>) -> Report {
        self.detail = Some(detail.into());
        self
    }
    pub fn hint(mut self, hint: impl Into<String>) -> Report {
        self.hint = Some(hint.into());
        self
    }

    /// Raises this report as an ERROR of `func` that refuses an ID for the server's
    /// state, counted in `flakeid_stats().refusals` (a UUID function's in
    /// `uuid_refusals`) and named in `flakeid_status().last_refusal`.
    #[track_caller]
    pub fn refuse(self, func: SqlFn) -> ! {
        let family = if func.is_uuid() {
            crate::shmem::Family::Bits128
        } else {
            crate::shmem::Family::Bits64
        };
        let named = self.message.starts_with(func.0);
        crate::shmem::count_refusal(
            family,
            &if named {
                self.message.clone()
            } else {
                format!("{func}: {}", self.message)
            },
        );
        self.raise(func)
    }

    /// Raises this report as an ERROR of `func`.
    #[track_caller]
    pub fn raise(self, func: SqlFn) -> ! {
        let mut report = ErrorReport::new(self.code, self.message, func.0);
        if let Some(detail) = self.detail {
            report = report.set_detail(detail);
        }
        if let Some(hint) = self.hint {
            report = report.set_hint(hint);
        }
        report.report(PgLogLevel::ERROR);
        unreachable!("ereport(ERROR) returned")
    }
}

/// Raises an engine error about an SQL argument. `what` names the argument for parse
/// errors (`text`); a `Config` error names its own field, which is the argument's name.
#[track_caller]
pub fn raise_argument(err: Error, what: &str) -> ! {
    if err.kind() == ErrorKind::Interrupted {
        // A cancel or terminate request ended a wait for the clock: let PostgreSQL
        // act on it (it raises its own ERROR or FATAL); report it if it did not.
        pgrx::check_for_interrupts!();
    }
    let report = match &err {
        Error::Config { field, message } => Report::new(
            sqlstate(err.kind()),
            format!("invalid value for argument \"{field}\": {message}"),
        ),
        Error::Parse { position, .. } => Report::new(
            sqlstate(err.kind()),
            format!("invalid input for argument \"{what}\": {err}"),
        )
        .detail(format!("At position {position} of \"{what}\" (counting from 0).")),
        _ => Report::new(sqlstate(err.kind()), err.to_string()),
    };
    report.raise(SqlFn::PURE)
}

/// An ID as a BIGINT, or 22003 when it needs the sign bit (the 64-bit `flake` layout).
#[track_caller]
pub fn to_bigint(id: u64) -> i64 {
    match i64::try_from(id) {
        Ok(v) => v,
        Err(_) => Report::new(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("flakeid {id} does not fit a bigint (it sets bit 63)"),
        )
        .raise(SqlFn::PURE),
    }
}

/// A BIGINT argument as an ID, or 22003 naming the argument when it is negative.
#[track_caller]
pub fn from_bigint(value: i64, what: &str) -> u64 {
    match u64::try_from(value) {
        Ok(v) => v,
        Err(_) => Report::new(
            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            format!("invalid value for argument \"{what}\": a flakeid is never negative, got {value}"),
        )
        .raise(SqlFn::PURE),
    }
}
