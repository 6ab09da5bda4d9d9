//! A duplicate key on an ID this server has just issued. The server never issues an
//! ID twice, so the row that already holds it was written elsewhere — restored with
//! `pg_restore`, copied logically, or issued by another server given this node id —
//! and the server's floor is below such rows. PostgreSQL's error then carries a
//! HINT that says so and names the one line that moves the floor past them,
//! `SELECT flakeid_resume_after(max(<column>)) FROM <table>` (docs/postgres.md,
//! "Copies, restores and upgrades"). Its SQLSTATE (23505) and message stay
//! PostgreSQL's, so an application's handling of duplicate keys is unchanged.
//!
//! Each backend keeps the range of IDs it issued since its running statement last
//! wrote a row: a count of the commands it starts (each executor start, and each
//! utility statement such as `COPY` or `DO`: the settings' `ProcessUtility` hook
//! counts those), the executor running its plan and that executor's count of rows
//! written (`es_processed`) tag the range, so the per-ID cost is a few loads and
//! stores. A column default issues its ID just before its row is written, as do
//! `COPY`'s buffered rows and `flakeid_next_many`. The error hook reads the key from
//! PostgreSQL's DETAIL (`Key (id)=(…) already exists.`: its values are not
//! translated) and adds the HINT only when a value is in that range and the
//! statement has written no row since: then the row that holds it is older than the
//! statement. A statement that inserts one issued ID twice (a CTE, a batch used
//! twice) wrote the first row after the ID was issued, and an ID the application
//! inserts again in a later command was issued in another; both are the
//! application's own duplicates and get no advice. After a subtransaction's abort
//! (a PL/pgSQL `EXCEPTION` block that caught an error), until the executor around it
//! returns or the transaction ends, the executor's count is not known: a duplicate
//! then gets a HINT naming both causes and the query that tells them apart. No DETAIL (no SELECT right on the key's
//! columns), an error a PL/pgSQL block catches, a row written by a writable CTE's
//! inner `INSERT` (it counts no rows) or a BEFORE trigger that runs a query
//! between the default and the insert gets none either.

use pgrx::{PgSqlErrorCode, pg_guard, pg_sys};
use std::cell::UnsafeCell;
use std::ffi::{CStr, CString, c_char, c_int};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering::Relaxed};

/// Commands this backend has started (atomics only for `static`: a backend is one
/// thread).
static COMMANDS: AtomicU64 = AtomicU64::new(1);

/// The IDs this backend issued in command `command`: `lo..=hi`, all while
/// `executor` (a stand-in for none) had written `rows` rows.
struct Issued {
    lo: AtomicU64,
    hi: AtomicU64,
    command: AtomicU64,
    executor: AtomicPtr<pg_sys::EState>,
    rows: AtomicU64,
}

static ISSUED: Issued = Issued {
    lo: AtomicU64::new(0),
    hi: AtomicU64::new(0),
    command: AtomicU64::new(0),
    executor: AtomicPtr::new(NONE.0.get()),
    rows: AtomicU64::new(0),
};

/// The executor running its plan in this backend, innermost first: [`NONE`]'s when
/// none; [`UNKNOWN`]'s after a subtransaction's abort until the executor it
/// interrupted returns or the transaction ends (its state may be gone). Set around each `ExecutorRun`; left
/// as it was when the run fails (the error hook reads it before the abort), and reset
/// by the abort and at a transaction's end. Never null, so a call reads its count of
/// rows without a branch.
static RUNNING: AtomicPtr<pg_sys::EState> = AtomicPtr::new(NONE.0.get());

/// An executor's state that stands for none, or for one not known: never written,
/// its count of rows 0.
struct Standin(UnsafeCell<pg_sys::EState>);

// SAFETY: never written; a backend is one thread.
unsafe impl Sync for Standin {}

// SAFETY: an EState of zeros is plain data (integers, null pointers, `None`s).
static NONE: Standin = Standin(UnsafeCell::new(unsafe { std::mem::zeroed() }));
// SAFETY: as NONE.
static UNKNOWN: Standin = Standin(UnsafeCell::new(unsafe { std::mem::zeroed() }));

/// The executor running its plan and the rows it has written.
#[inline]
fn running() -> (*mut pg_sys::EState, u64) {
    let executor = RUNNING.load(Relaxed);
    // SAFETY: a stand-in, or an executor whose run has not returned and whose
    // (sub)transaction has not aborted: its state is allocated (see RUNNING).
    (executor, unsafe { (*executor).es_processed })
}

/// Records IDs `lo..=hi`, just issued by this backend (increasing over a command).
#[inline]
pub fn issued(lo: u64, hi: u64) {
    let command = COMMANDS.load(Relaxed);
    let (executor, rows) = running();
    if ISSUED.command.load(Relaxed) != command
        || ISSUED.executor.load(Relaxed) != executor
        || ISSUED.rows.load(Relaxed) != rows
    {
        ISSUED.lo.store(lo, Relaxed);
        ISSUED.command.store(command, Relaxed);
        ISSUED.executor.store(executor, Relaxed);
        ISSUED.rows.store(rows, Relaxed);
    }
    ISSUED.hi.store(hi, Relaxed);
}

/// What this backend knows of `id`: issued in the command now running, with no row
/// written by its executor since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Issued, and no row written since: a row that holds it is older.
    Unwritten,
    /// Issued while the executor's count was unknown: either.
    Unknown,
}

fn issued_now(id: u64) -> Option<Known> {
    let (executor, rows) = running();
    (ISSUED.command.load(Relaxed) == COMMANDS.load(Relaxed)
        && ISSUED.executor.load(Relaxed) == executor
        && ISSUED.rows.load(Relaxed) == rows
        && (ISSUED.lo.load(Relaxed)..=ISSUED.hi.load(Relaxed)).contains(&id))
    .then_some(if executor == UNKNOWN.0.get() {
        Known::Unknown
    } else {
        Known::Unwritten
    })
}

/// Counts a command: each executor start (below) and each utility statement (the
/// extension's one `ProcessUtility` hook, `crate::settings`'s).
pub(crate) fn next_command() {
    COMMANDS.store(COMMANDS.load(Relaxed).wrapping_add(1), Relaxed);
}

static mut PREVIOUS_START: pg_sys::ExecutorStart_hook_type = None;

#[pg_guard]
unsafe extern "C-unwind" fn executor_start(query: *mut pg_sys::QueryDesc, eflags: c_int) {
    next_command();
    // SAFETY: PostgreSQL's arguments, passed on as they came.
    unsafe {
        match PREVIOUS_START {
            Some(previous) => pg_sys::ffi::pg_guard_ffi_boundary(|| previous(query, eflags)),
            None => pg_sys::standard_ExecutorStart(query, eflags),
        }
    }
}

/// Runs `run` (the previous `ExecutorRun` hook or the standard one) with
/// [`RUNNING`] set to `query`'s executor, and puts back what it was once the run
/// returns. A run that fails leaves it set: the error is reported (the hook below
/// reads it) before the abort resets it.
///
/// # Safety
/// `query` is the executor's, started.
unsafe fn running_as(query: *mut pg_sys::QueryDesc, run: &mut dyn FnMut()) {
    let outer = RUNNING.load(Relaxed);
    // SAFETY: the caller's; a started executor has its state (standard_ExecutorRun
    // reads it first thing).
    RUNNING.store(unsafe { (*query).estate }, Relaxed);
    run();
    RUNNING.store(outer, Relaxed);
}

/// Whether a transaction callback's `event` is a transaction's (or a parallel
/// worker's part of one) end: committed, prepared or aborted.
pub(crate) fn ends_transaction(event: pg_sys::XactEvent::Type) -> bool {
    use pg_sys::XactEvent::*;
    matches!(
        event,
        XACT_EVENT_COMMIT
            | XACT_EVENT_PARALLEL_COMMIT
            | XACT_EVENT_PREPARE
            | XACT_EVENT_ABORT
            | XACT_EVENT_PARALLEL_ABORT
    )
}

/// At a transaction's end no executor runs (PostgreSQL refuses a COMMIT inside
/// one), and after an abort the one that failed is gone: [`RUNNING`] is none, also
/// after an unknown one.
#[pg_guard]
unsafe extern "C-unwind" fn at_end(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    if ends_transaction(event) {
        RUNNING.store(NONE.0.get(), Relaxed);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn at_abort_sub(
    event: pg_sys::SubXactEvent::Type,
    _mine: pg_sys::SubTransactionId,
    _parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    if event == pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB && RUNNING.load(Relaxed) != NONE.0.get() {
        RUNNING.store(UNKNOWN.0.get(), Relaxed);
    }
}

static mut PREVIOUS: pg_sys::emit_log_hook_type = None;

/// Installs the hooks (once, while the library loads).
pub fn install() {
    // SAFETY: hooks are installed while the library loads, single-threaded; the
    // callbacks touch only this module's atomics.
    unsafe {
        PREVIOUS = pg_sys::emit_log_hook;
        pg_sys::emit_log_hook = Some(advise);
        PREVIOUS_START = pg_sys::ExecutorStart_hook;
        pg_sys::ExecutorStart_hook = Some(executor_start);
        crate::majors::hook_executor_run(running_as);
        pg_sys::RegisterXactCallback(Some(at_end), null_mut());
        pg_sys::RegisterSubXactCallback(Some(at_abort_sub), null_mut());
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
            && let Some(hint) = {
                let detail = CStr::from_ptr(e.detail).to_string_lossy();
                let (schema, table) = (name(e.schema_name), name(e.table_name));
                hint(&detail, schema.as_deref(), table.as_deref()).or_else(|| {
                    // 18's apply conflicts name no table in the error's fields;
                    // their message does ("… on relation \"schema.table\" …").
                    let quoted = (!e.message.is_null() && table.is_none())
                        .then(|| {
                            CStr::from_ptr(e.message)
                                .to_string_lossy()
                                .split('"')
                                .nth(1)
                                .map(String::from)
                        })
                        .flatten();
                    applied(&detail, schema.as_deref(), table.as_deref().or(quoted.as_deref()))
                })
            }
            && let Ok(hint) = CString::new(hint)
        {
            e.hint = pg_sys::pstrdup(hint.as_ptr());
        }
        if let Some(previous) = PREVIOUS {
            pg_sys::ffi::pg_guard_ffi_boundary(|| previous(edata));
        }
    }
}

/// An identifier of the error, quoted as SQL needs it.
unsafe fn name(ptr: *const c_char) -> Option<String> {
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

/// `schema.table`, or what stands for it when the error names none.
fn qualified(schema: Option<&str>, table: Option<&str>) -> String {
    match (schema, table) {
        (Some(schema), Some(table)) => format!("{schema}.{table}"),
        (None, Some(table)) => table.to_string(),
        _ => "<table>".to_string(),
    }
}

/// The HINT for a duplicate key met while applying a replication peer's rows (a
/// logical replication apply worker, or any session with a replication origin set
/// up), when a value of the key is an ID with this server's node id in its layout:
/// that peer issued it (this server issues none twice), so two primaries issue under
/// one node id. Also kept for `flakeid_status().peer_node`. `None` otherwise.
fn applied(detail: &str, schema: Option<&str>, table: Option<&str>) -> Option<String> {
    let who = replaying()?;
    let layout = crate::settings::server_layout_quiet()?;
    let node = own_node()?;
    let (_, values) = key(detail)?;
    let id = values
        .split(", ")
        .filter_map(|v| v.parse::<u64>().ok())
        .find(|&v| v <= i64::MAX as u64 && layout.decompose(v).node == node)?;
    let table = qualified(schema, table);
    crate::shmem::note_peer_node(&format!(
        "{who} applied {id} into {table}, an ID with this server's node id {node}"
    ));
    Some(format!(
        "{who} received {id} from a replication peer, an ID with this server's node id {node}, and a row of \
         {table} already holds it: another primary of the setup issues IDs under node id {node}, so the two \
         issue the same IDs for different rows. Check: SELECT node FROM flakeid_status(); on every primary \
         (each must differ; flakeid_status().peer_node names this conflict). Renumber one and restart it, then \
         reconcile the rows that share an ID (docs/postgres.md, \"Logical replication between primaries\")."
    ))
}

/// Who applies a replication peer's rows in this process: a logical replication
/// worker (its registration's name, naming its subscription's OID), or a session
/// with a replication origin set up; `None` for any other. The worker is told by its
/// type, not by its origin: PostgreSQL resets the session's origin when an apply
/// fails (16 and later, before the error is reported).
fn replaying() -> Option<String> {
    // SAFETY: NULL outside a background worker; else its registration, whose name
    // and type are NUL-terminated.
    let worker = unsafe {
        pg_sys::MyBgworkerEntry.as_ref().and_then(|w| {
            CStr::from_ptr(w.bgw_type.as_ptr())
                .to_bytes()
                .starts_with(b"logical replication")
                .then(|| CStr::from_ptr(w.bgw_name.as_ptr()).to_string_lossy().into_owned())
        })
    };
    // SAFETY: a backend-local variable, set while a session replays an origin.
    let origin = unsafe { pg_sys::replorigin_session_origin } as u32;
    worker.or_else(|| {
        (origin != pg_sys::InvalidRepOriginId && origin != pg_sys::DoNotReplicateId)
            .then(|| format!("a session replaying replication origin {origin}"))
    })
}

/// This server's node id (the lease's, when it leases one); `None` when it has none.
fn own_node() -> Option<u64> {
    if crate::settings::lease().is_some() {
        if !crate::shmem::preloaded() {
            return None;
        }
        let held = *crate::shmem::LEASE_STATUS.share();
        return (held.acquired > 0).then_some(held.node);
    }
    crate::settings::node_id().ok()
}

/// The HINT for a duplicate key whose DETAIL is `detail`, or `None` when no value
/// of the key is an ID issued in the current command with no row written since.
fn hint(detail: &str, schema: Option<&str>, table: Option<&str>) -> Option<String> {
    let (columns, values) = key(detail)?;
    let columns: Vec<&str> = columns.split(", ").collect();
    let values: Vec<&str> = values.split(", ").collect();
    let (at, known) = values
        .iter()
        .enumerate()
        .find_map(|(at, v)| Some((at, v.parse::<u64>().ok().and_then(issued_now)?)))?;
    let column = if columns.len() == values.len() {
        columns[at]
    } else {
        "<id column>"
    };
    let table = qualified(schema, table);
    let id = values[at];
    let repair = format!(
        "a superuser moves every later ID past them with SELECT flakeid_resume_after(max({column})) FROM {table}; \
         (docs/postgres.md, \"Copies, restores and upgrades\")."
    );
    Some(match known {
        Known::Unwritten => format!(
            "This server issued {id} in this statement, which has written no row since, and a row of {table} \
             already holds it: rows written elsewhere (pg_restore, a logical copy, another server with this node \
             id) lie above this server's floor, and {repair}"
        ),
        Known::Unknown => format!(
            "This server issued {id} in this statement, and a row of {table} already holds it. Either the \
             statement inserted {id} twice itself (one flakeid_next() value or flakeid_next_many() result used \
             twice), or rows written elsewhere (pg_restore, a logical copy, another server with this node id) lie \
             above this server's floor. Which: once this transaction has rolled back, SELECT {column} FROM {table} \
             WHERE {column} = {id}; finds the row only in the second case, and then {repair}"
        ),
    })
}

/// The columns and values of `Key (<columns>)=(<values>) already exists.`, or of
/// PostgreSQL 18's apply conflicts, `… Key (<columns>)=(<values>); existing local
/// row (…); remote row (…).`
fn key(detail: &str) -> Option<(&str, &str)> {
    let eq = detail.find(")=(")?;
    let open = detail[..eq].rfind("Key (")? + "Key ".len();
    let values = &detail[eq + 3..];
    let close = values
        .rfind(") already exists")
        .or_else(|| values.find("); existing local row"))?;
    Some((&detail[open + 1..eq], &values[..close]))
}
