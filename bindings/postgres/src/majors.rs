//! What differs between the PostgreSQL majors the extension builds for (the
//! features `pg14` to `pg18`, one source): the only module that names a major.

use pgrx::pg_sys;

/// PostgreSQL's table of settings, read-only. 16 gave `get_guc_variables` an
/// out-parameter for the count and dropped `GetNumConfigOptions()`.
///
/// # Safety
/// In a backend; use the slice before anything adds a setting (which may move
/// the table).
pub(crate) unsafe fn guc_variables<'a>() -> &'a [*mut pg_sys::config_generic] {
    #[cfg(any(feature = "pg14", feature = "pg15"))]
    // SAFETY: the caller's.
    let (vars, n) = unsafe { (pg_sys::get_guc_variables(), pg_sys::GetNumConfigOptions()) };
    #[cfg(not(any(feature = "pg14", feature = "pg15")))]
    let (vars, n) = {
        let mut n = 0;
        // SAFETY: the caller's.
        (unsafe { pg_sys::get_guc_variables(&mut n) }, n)
    };
    if vars.is_null() {
        return &[];
    }
    // SAFETY: PostgreSQL's array of `n` entries.
    unsafe { std::slice::from_raw_parts(vars, n as usize) }
}

/// Installs a signal handler the way PostgreSQL's own processes do. 18 renamed the
/// backend's `pqsignal` to `pqsignal_be` (the header's macro maps the old name,
/// which bindgen cannot see).
///
/// # Safety
/// As `pqsignal`: a handler that is async-signal-safe.
pub(crate) unsafe fn pqsignal(signo: i32, handler: pg_sys::pqsigfunc) {
    #[cfg(not(feature = "pg18"))]
    // SAFETY: the caller's.
    unsafe {
        pg_sys::pqsignal(signo, handler);
    }
    #[cfg(feature = "pg18")]
    // SAFETY: the caller's.
    unsafe {
        pg_sys::pqsignal_be(signo, handler);
    }
}

/// The timeline this server writes WAL on; only outside recovery. 15 added
/// `GetWALInsertionTimeLine()`. In 14 it is the backend's `ThisTimeLineID`, which
/// `RecoveryInProgress()` sets the first time it sees recovery over.
///
/// # Safety
/// In a backend that is not in recovery.
pub(crate) unsafe fn insertion_timeline() -> pg_sys::TimeLineID {
    #[cfg(feature = "pg14")]
    // SAFETY: the caller's; the global is this backend's own.
    unsafe {
        pg_sys::RecoveryInProgress();
        pg_sys::ThisTimeLineID
    }
    #[cfg(not(feature = "pg14"))]
    // SAFETY: the caller's.
    unsafe {
        pg_sys::GetWALInsertionTimeLine()
    }
}

/// Connects this background worker to template1, which always exists. From 15 its
/// OID is fixed (1), pg_upgrade included; 14's pg_upgrade recreates it under another
/// OID, so there it goes by name.
///
/// # Safety
/// In a background worker, once.
pub(crate) unsafe fn connect_to_template1(flags: u32) {
    #[cfg(feature = "pg14")]
    // SAFETY: the caller's; NUL-terminated name, no user (the bootstrap superuser).
    unsafe {
        pg_sys::BackgroundWorkerInitializeConnection(c"template1".as_ptr(), std::ptr::null(), flags)
    }
    #[cfg(not(feature = "pg14"))]
    // SAFETY: the caller's.
    unsafe {
        pg_sys::BackgroundWorkerInitializeConnectionByOid(
            pg_sys::Oid::from(pg_sys::Template1DbOid),
            pg_sys::InvalidOid,
            flags,
        )
    }
}

/// Claims the `flakeid.` prefix for the settings defined. From 15
/// (`MarkGUCPrefixReserved`) a misspelt `flakeid.*` name is refused by ALTER SYSTEM
/// and dropped with a warning from the configuration files; 14 has only
/// `EmitWarningsOnPlaceholders`, which warns and keeps it as a placeholder.
///
/// # Safety
/// After the prefix's settings are defined.
pub(crate) unsafe fn reserve_guc_prefix(prefix: &std::ffi::CStr) {
    #[cfg(feature = "pg14")]
    // SAFETY: the caller's; a NUL-terminated prefix.
    unsafe {
        pg_sys::EmitWarningsOnPlaceholders(prefix.as_ptr())
    }
    #[cfg(not(feature = "pg14"))]
    // SAFETY: the caller's; a NUL-terminated prefix.
    unsafe {
        pg_sys::MarkGUCPrefixReserved(prefix.as_ptr())
    }
}

/// The setting that bounds how many replication origins may have progress at once,
/// and its value (fixed at server start). 18 gave origins a setting of their own,
/// `max_active_replication_origins`; before, they took slots of
/// `max_replication_slots` (which 18 no longer reads for them).
pub(crate) fn origin_limit() -> (&'static str, i32) {
    #[cfg(not(feature = "pg18"))]
    // SAFETY: a setting PostgreSQL fixed at server start.
    let limit = ("max_replication_slots", unsafe { pg_sys::max_replication_slots });
    #[cfg(feature = "pg18")]
    // SAFETY: a setting PostgreSQL fixed at server start.
    let limit = ("max_active_replication_origins", unsafe {
        pg_sys::max_active_replication_origins
    });
    limit
}

/// What an `ExecutorRun` hook runs around the executor: given the query and the run
/// (the previous hook or the standard one), it calls the run once.
pub(crate) type AroundRun = unsafe fn(*mut pg_sys::QueryDesc, &mut dyn FnMut());

/// Puts an `ExecutorRun` hook first that runs each executor inside `around`. 18
/// dropped the hook's `execute_once` argument.
///
/// # Safety
/// While the library loads, single-threaded; once.
pub(crate) unsafe fn hook_executor_run(around: AroundRun) {
    // SAFETY: the caller's.
    unsafe {
        AROUND = Some(around);
        PREVIOUS_RUN = pg_sys::ExecutorRun_hook;
        pg_sys::ExecutorRun_hook = Some(executor_run);
    }
}

static mut AROUND: Option<AroundRun> = None;
static mut PREVIOUS_RUN: pg_sys::ExecutorRun_hook_type = None;

#[cfg(not(feature = "pg18"))]
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn executor_run(
    query: *mut pg_sys::QueryDesc,
    direction: pg_sys::ScanDirection::Type,
    count: u64,
    execute_once: bool,
) {
    // SAFETY: PostgreSQL's arguments, passed on as they came; AROUND is set before
    // the hook is.
    unsafe {
        let mut run = || match PREVIOUS_RUN {
            Some(previous) => pg_sys::ffi::pg_guard_ffi_boundary(|| previous(query, direction, count, execute_once)),
            None => pg_sys::standard_ExecutorRun(query, direction, count, execute_once),
        };
        match AROUND {
            Some(around) => around(query, &mut run),
            None => run(),
        }
    }
}

#[cfg(feature = "pg18")]
#[pgrx::pg_guard]
unsafe extern "C-unwind" fn executor_run(
    query: *mut pg_sys::QueryDesc,
    direction: pg_sys::ScanDirection::Type,
    count: u64,
) {
    // SAFETY: PostgreSQL's arguments, passed on as they came; AROUND is set before
    // the hook is.
    unsafe {
        let mut run = || match PREVIOUS_RUN {
            Some(previous) => pg_sys::ffi::pg_guard_ffi_boundary(|| previous(query, direction, count)),
            None => pg_sys::standard_ExecutorRun(query, direction, count),
        };
        match AROUND {
            Some(around) => around(query, &mut run),
            None => run(),
        }
    }
}
