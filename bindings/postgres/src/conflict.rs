//! A duplicate key on an ID this server has just issued. The server never issues an
//! ID twice, so the row that already holds it was written elsewhere — restored with
//! `pg_restore`, copied logically, or issued by another server given this node id —
//! and the server's floor is below such rows. PostgreSQL's error then carries a
//! HINT that says so and names the one line that moves the floor past them,
//! `SELECT flakeid_resume_after(max(<column>)) FROM <table>` (docs/postgres.md,
//! "Copies, restores and upgrades"). Its SQLSTATE (23505) and message stay
//! PostgreSQL's, so an application's handling of duplicate keys is unchanged.
//!
//! Each backend keeps the range of IDs it issued in its current SQL command, stamped
//! with the transaction and command (a column default, a trigger, `COPY`'s buffered
//! rows and `flakeid_next_many` all issue within the command that inserts). The
//! error hook reads the key from PostgreSQL's DETAIL (`Key (id)=(…) already
//! exists.`: its values are not translated) and adds the HINT only when a value is
//! in that range: an ID the application inserts again in a later statement is its
//! own duplicate, and gets no advice. No DETAIL (no SELECT right on the key's
//! columns), or an error a PL/pgSQL block catches, gets none either.

use pgrx::{PgSqlErrorCode, pg_guard, pg_sys};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed};

/// The IDs this backend issued in its latest command: `[lo, hi]` and the command's
/// stamp. Atomics only for `static`: a backend is one thread.
struct Issued {
    lo: AtomicU64,
    hi: AtomicU64,
    xact: AtomicI64,
    cid: AtomicU32,
}

static ISSUED: Issued = Issued {
    lo: AtomicU64::new(0),
    hi: AtomicU64::new(0),
    xact: AtomicI64::new(i64::MIN),
    cid: AtomicU32::new(0),
};

/// The current transaction's start and command: a stamp no other command of this
/// backend has (a transaction starts at least a microsecond after the last began).
#[inline]
fn stamp() -> (i64, u32) {
    // SAFETY: two reads of the backend's transaction state; neither marks the
    // command id used.
    unsafe {
        (
            pg_sys::GetCurrentTransactionStartTimestamp(),
            pg_sys::GetCurrentCommandId(false),
        )
    }
}

/// Records IDs `lo..=hi`, just issued by this backend (increasing over a command).
#[inline]
pub fn issued(lo: u64, hi: u64) {
    let (xact, cid) = stamp();
    if ISSUED.xact.load(Relaxed) != xact || ISSUED.cid.load(Relaxed) != cid {
        ISSUED.lo.store(lo, Relaxed);
        ISSUED.xact.store(xact, Relaxed);
        ISSUED.cid.store(cid, Relaxed);
    }
    ISSUED.hi.store(hi, Relaxed);
}

/// Whether this backend issued `id` in the command now running.
fn issued_now(id: u64) -> bool {
    let (xact, cid) = stamp();
    ISSUED.xact.load(Relaxed) == xact
        && ISSUED.cid.load(Relaxed) == cid
        && (ISSUED.lo.load(Relaxed)..=ISSUED.hi.load(Relaxed)).contains(&id)
}

static mut PREVIOUS: pg_sys::emit_log_hook_type = None;

/// Installs the hook (once, while the library loads).
pub fn install() {
    // SAFETY: hooks are installed while the library loads, single-threaded.
    unsafe {
        PREVIOUS = pg_sys::emit_log_hook;
        pg_sys::emit_log_hook = Some(advise);
    }
}

/// Adds the HINT to a duplicate key on an ID issued in the current command.
/// PostgreSQL calls the hook with the error about to be sent, in its error
/// context's memory, before the transaction is aborted.
#[pg_guard]
unsafe extern "C-unwind" fn advise(edata: *mut pg_sys::ErrorData) {
    // SAFETY: PostgreSQL passes the error being reported; its strings are NULL or
    // NUL-terminated, and a string palloc'd now lives as long as the error.
    unsafe {
        if let Some(e) = edata.as_mut()
            && e.sqlerrcode == PgSqlErrorCode::ERRCODE_UNIQUE_VIOLATION as i32
            && e.hint.is_null()
            && !e.detail.is_null()
            && let Some(hint) = hint(
                &CStr::from_ptr(e.detail).to_string_lossy(),
                name(e.schema_name).as_deref(),
                name(e.table_name).as_deref(),
            )
            && let Ok(hint) = CString::new(hint)
        {
            e.hint = pg_sys::pstrdup(hint.as_ptr());
        }
        if let Some(previous) = PREVIOUS {
            previous(edata);
        }
    }
}

/// An identifier of the error, quoted as SQL needs it.
unsafe fn name(ptr: *const std::ffi::c_char) -> Option<String> {
    // SAFETY: NULL or a NUL-terminated string; quote_identifier only reads the
    // keyword list, and returns its argument or a palloc'd copy.
    unsafe {
        (!ptr.is_null()).then(|| {
            CStr::from_ptr(pg_sys::quote_identifier(ptr))
                .to_string_lossy()
                .into_owned()
        })
    }
}

/// The HINT for a duplicate key whose DETAIL is `detail`, or `None` when no value
/// of the key is an ID issued in the current command.
fn hint(detail: &str, schema: Option<&str>, table: Option<&str>) -> Option<String> {
    let (columns, values) = key(detail)?;
    let columns: Vec<&str> = columns.split(", ").collect();
    let values: Vec<&str> = values.split(", ").collect();
    let at = values.iter().position(|v| v.parse::<u64>().is_ok_and(issued_now))?;
    let column = if columns.len() == values.len() {
        columns[at]
    } else {
        "<id column>"
    };
    let table = match (schema, table) {
        (Some(schema), Some(table)) => format!("{schema}.{table}"),
        (None, Some(table)) => table.to_string(),
        _ => "<table>".to_string(),
    };
    Some(format!(
        "This server issued {id} in this statement, and a row of {table} already holds it: rows written \
         elsewhere (pg_restore, a logical copy, another server with this node id) lie above this server's \
         floor. A superuser moves every later ID past them with SELECT flakeid_resume_after(max({column})) \
         FROM {table}; (docs/postgres.md, \"Copies, restores and upgrades\").",
        id = values[at],
    ))
}

/// The columns and values of `Key (<columns>)=(<values>) already exists.`
fn key(detail: &str) -> Option<(&str, &str)> {
    let eq = detail.find(")=(")?;
    let open = detail[..eq].find('(')?;
    let close = detail.rfind(')')?;
    (close > eq + 2).then(|| (&detail[open + 1..eq], &detail[eq + 3..close]))
}
