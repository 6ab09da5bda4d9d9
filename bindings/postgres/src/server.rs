//! The server's generator: each backend's generator over the counter in shared
//! memory, the gates before an ID leaves the server, and its counts for
//! `flakeid_stats()`.
//!
//! - Not during recovery and not in a read-only transaction (SQLSTATE 25006, as
//!   `nextval()`): a standby has its primary's node id but not its latest IDs.
//! - Not before the start-up check ([`crate::startup`]) cleared this server: after a
//!   promotion the node id is refused until it is changed or confirmed.
//! - Not while another process on the host holds the node id's host guard
//!   ([`crate::host_guard`]).
//! - With `flakeid.lease`: only while the server holds its node-id lease
//!   ([`crate::lease`]), checked after each reservation against the window the
//!   lease's holder publishes.
//! - Never past the WAL-logged high-water mark ([`crate::mark`]): an ID whose tick
//!   is beyond the mark first moves the mark ahead (once per [`RESERVE_AHEAD_MS`]),
//!   flushed before the ID is returned. So the per-call cost is one relaxed load and
//!   a compare; after a crash, a promotion or a restore the generator resumes above
//!   the mark, and a clock behind it falls under `flakeid.clock_backwards`.

use crate::convert::show_ms;
use crate::error::{Report, SqlFn};
use crate::shmem::{COUNTER, COVERED, REPAIR_READY_AT, STARTUP, TOTALS, lease_gate, preloaded};
use crate::startup::wait_for_verdict;
use crate::{conflict, host_guard, lease, mark, settings};
use flakeid_core::lease::{AfterRefusal, SharedGate, SharedGateCheck as Check};
use flakeid_core::{Error, ErrorKind, Generator, Layout, SharedCounter, Stats, precise_now_ms};
use pgrx::{PgSqlErrorCode, pg_guard, pg_sys};
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How far the high-water mark is reserved ahead of the newest ID (and of the clock).
/// Small, because a server restarted within this time of its last reservation finds
/// its clock behind the mark (see docs/postgres.md); a reservation is one WAL record
/// and one flush.
pub const RESERVE_AHEAD_MS: u64 = 100;

/// How far ahead of the clock (past what this server may borrow) an ID may be
/// (`flakeid_resume_after`, of either family):
/// further, and it is not an ID of this server's layout, or its clock is wrong.
pub const MAX_AHEAD_MS: u64 = 60_000;

/// This backend's generator, built on first use (and again when a new lease has
/// another node id: the old one is leaked, since a running `flakeid_next_many`
/// may still hold it; that happens once per lease, not per call).
static BACKEND: AtomicPtr<Backend> = AtomicPtr::new(std::ptr::null_mut());

pub(crate) const NOT_PRELOADED_HINT: &str = "add flakeid to shared_preload_libraries in postgresql.conf \
     (shared_preload_libraries = 'flakeid') and restart the server";

/// This backend's generator, after the per-call gate (a read-only transaction).
#[inline(always)]
pub fn backend(f: SqlFn) -> &'static Backend {
    // SAFETY: a backend-local flag, true in every transaction of a standby too.
    if unsafe { pg_sys::XactReadOnly } {
        refuse_read_only(f);
    }
    // SAFETY: set once per build by this (single-threaded) backend, never freed.
    match unsafe { BACKEND.load(Ordering::Relaxed).as_ref() } {
        Some(b) => b,
        None => build(f),
    }
}

/// Refuses what would issue IDs or move the mark: during recovery, in a read-only
/// transaction (both 25006, as `nextval()`).
#[track_caller]
pub fn refuse_unless_writable(f: SqlFn) {
    // SAFETY: PostgreSQL functions without arguments, and a backend-local flag.
    if unsafe { pg_sys::RecoveryInProgress() } {
        refuse_recovery(f);
    }
    if unsafe { pg_sys::XactReadOnly } {
        refuse_read_only(f);
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn refuse_read_only(f: SqlFn) -> ! {
    // SAFETY: as above.
    if unsafe { pg_sys::RecoveryInProgress() } {
        refuse_recovery(f);
    }
    Report::new(
        PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
        format!("cannot execute {f} in a read-only transaction"),
    )
    .detail("Issuing an ID advances the server's generator and its WAL-logged high-water mark, as nextval() advances a sequence.")
    .raise(f)
}

#[cold]
#[track_caller]
fn refuse_recovery(f: SqlFn) -> ! {
    Report::new(
        PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
        format!("cannot execute {f} during recovery"),
    )
    .detail(
        "This server is a standby: it has its primary's node id but not the primary's latest IDs, \
         so IDs issued here would repeat the primary's.",
    )
    .hint("Take IDs from the primary. A promoted standby issues IDs once its node id is its own (see the failover runbook in docs/postgres.md).")
    .raise(f)
}

/// Refuses `f` unless the library was preloaded (`why`: what it keeps in shared memory).
#[track_caller]
pub fn refuse_unless_preloaded(f: SqlFn, why: &str) {
    if !preloaded() {
        Report::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("{f} needs the flakeid library preloaded: {why}"),
        )
        .hint(NOT_PRELOADED_HINT)
        .raise(f);
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn build(f: SqlFn) -> &'static Backend {
    refuse_unless_preloaded(f, "its generator lives in shared memory, one per server");
    refuse_unless_writable(f);
    let builder = match settings::builder() {
        Ok(b) => b,
        Err(report) => report.refuse(f),
    };
    let resume_after_ms = wait_for_verdict(f);
    host_guard::require(f);
    let (builder, lease) = if settings::lease().is_some() {
        let word = lease::published(f);
        (builder.node(SharedGate::node_of(word)), Some(lease_gate().check(word)))
    } else {
        (builder, None)
    };
    let built = builder.resume_after_ms(resume_after_ms).build_shared(COUNTER.get());
    let generator = match built {
        Ok(g) => g,
        Err(err) => settings::setting_report(err).raise(f),
    };
    let layout = *generator.layout();
    let backend = Box::leak(Box::new(Backend {
        generator,
        covered: COVERED.get(),
        time_shift: layout.node_bits() + layout.sequence_bits(),
        layout,
        lease,
        local: Local::default(),
    }));
    // The generator this one replaces (a new lease's node id) adds its last counts.
    if !add_to_totals() {
        register_end_of_transaction();
    }
    BACKEND.store(backend, Ordering::Relaxed);
    backend
}

/// A backend's generator over the server's counter, and the mark's bound.
pub struct Backend {
    generator: Generator<SharedCounter>,
    covered: &'static AtomicU64,
    time_shift: u32,
    layout: Layout,
    /// With `flakeid.lease`: the lease's window (one predictable branch without).
    lease: Option<Check<'static>>,
    /// Its counts for `flakeid_stats()`.
    local: Local,
}

/// Adds this backend's new counts to the server's totals (`flakeid_stats()`);
/// false if it has no generator yet.
pub fn add_to_totals() -> bool {
    // SAFETY: as in `backend()`.
    match unsafe { BACKEND.load(Ordering::Relaxed).as_ref() } {
        Some(b) => {
            b.local.add_to_totals(b.generator.stats());
            true
        }
        None => false,
    }
}

/// The Unix-ms start of the tick of the server's newest ID (`None`: none yet), read
/// from the counter in shared memory.
pub fn last_issued_ms() -> Option<u64> {
    // SAFETY: as in `backend()`.
    if let Some(b) = unsafe { BACKEND.load(Ordering::Relaxed).as_ref() } {
        return b.generator.last_issued_ms();
    }
    let next = COUNTER.get().load(Ordering::Acquire);
    let layout = settings::server_layout();
    (next > 0).then(|| layout.timestamp_of_ticks((next - 1) >> settings::counter_sequence_bits(&layout)))
}

/// Retries after a new lease replaced the one a call was made under.
const LEASE_RETRIES: u32 = 3;

impl Backend {
    #[inline]
    pub fn next_id(&self, f: SqlFn) -> u64 {
        self.issue(f, 0)
    }

    #[inline]
    fn issue(&self, f: SqlFn, tries: u32) -> u64 {
        let under = self.lease.as_ref().map_or(0, Check::begin);
        let id = match self.generator.next_id() {
            Ok(id) => id,
            Err(err) => {
                self.unless_repair(err, f);
                return self.issue(f, tries);
            }
        };
        if let Some(l) = &self.lease
            && !l.allows(under, id >> self.time_shift)
        {
            return self.after_lease_refusal(f, tries).issue(f, tries + 1);
        }
        self.cover(id, f);
        self.local.issued(1);
        conflict::issued(id, id);
        id
    }

    /// Fills `out` with increasing IDs, all under the mark (and the lease's window)
    /// before they are returned.
    pub fn fill(&self, out: &mut [u64], f: SqlFn) {
        self.fill_with(out, f, 0);
    }

    fn fill_with(&self, out: &mut [u64], f: SqlFn, tries: u32) {
        let under = self.lease.as_ref().map_or(0, Check::begin);
        if let Err(err) = self.generator.fill(out) {
            self.unless_repair(err, f);
            return self.fill_with(out, f, tries);
        }
        let Some(&last) = out.last() else { return };
        if let Some(l) = &self.lease
            && !l.allows(under, last >> self.time_shift)
        {
            return self.after_lease_refusal(f, tries).fill_with(out, f, tries + 1);
        }
        self.cover(last, f);
        self.local.issued(out.len() as u64);
        conflict::issued(out[0], last);
    }

    /// An ID the lease's window refused: the backend to retry with (a new lease
    /// on the same node id, or a generator rebuilt for a new node id), or an ERROR.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn after_lease_refusal(&self, f: SqlFn, tries: u32) -> &'static Backend {
        let Some(l) = &self.lease else {
            unreachable!("a lease refusal without a lease")
        };
        pgrx::check_for_interrupts!();
        // A run of slots this backend reserved before the refusal is below a new
        // lease's start, and refused under it: retry on fresh slots.
        self.generator.drop_run();
        if tries < LEASE_RETRIES {
            match l.after_refusal() {
                AfterRefusal::Renewed => {
                    // SAFETY: as in `backend()`.
                    if let Some(b) = unsafe { BACKEND.load(Ordering::Relaxed).as_ref() } {
                        return b;
                    }
                }
                AfterRefusal::Renumbered => {
                    // Another call may have built one for the new lease already (a
                    // flakeid_next_many still running on this one).
                    // SAFETY: as in `backend()`.
                    if let Some(b) = unsafe { BACKEND.load(Ordering::Relaxed).as_ref() }
                        && b.lease.as_ref().is_some_and(Check::is_current)
                    {
                        return b;
                    }
                    return build(f);
                }
                AfterRefusal::Refused => {}
            }
        }
        lease::refusal(f).refuse(f)
    }

    #[inline(always)]
    fn cover(&self, id: u64, f: SqlFn) {
        if id >> self.time_shift >= self.covered.load(Ordering::Relaxed) {
            self.reserve(id, f);
        }
    }

    /// Moves the durable mark past `id`'s tick (and the clock) by [`RESERVE_AHEAD_MS`].
    #[cold]
    #[inline(never)]
    fn reserve(&self, id: u64, f: SqlFn) {
        let tick = id >> self.time_shift;
        let moved = mark::advance(|| {
            // Another backend may have moved it past this tick while we waited.
            (tick >= self.covered.load(Ordering::Acquire)).then(|| {
                self.layout
                    .timestamp_of_ticks(tick)
                    .max(precise_now_ms())
                    .saturating_add(RESERVE_AHEAD_MS)
                    .min(self.layout.last_timestamp_ms())
            })
        });
        match moved {
            Ok(Some(mark_ms)) => {
                let end = self.layout.ticks_at(mark_ms).map_or(u64::MAX, |t| t + 1);
                self.covered.fetch_max(end, Ordering::Release);
            }
            Ok(None) => {}
            Err(report) => report.raise(f),
        }
    }

    /// Returns (for the caller to draw again) once a clock behind the server's IDs
    /// because of a `flakeid_resume_after(id)` has caught up
    /// ([`wait_for_repair`]); any other error is raised.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn unless_repair(&self, err: Error, f: SqlFn) {
        if !(matches!(err, Error::ClockMovedBackwards { .. }) && wait_for_repair()) {
            self.error(err, f)
        }
    }

    /// An engine error while issuing, as an ERROR of `f`.
    #[cold]
    #[inline(never)]
    #[track_caller]
    fn error(&self, err: Error, f: SqlFn) -> ! {
        match err {
            Error::Interrupted => {
                pgrx::check_for_interrupts!();
                Report::new(PgSqlErrorCode::ERRCODE_QUERY_CANCELED, format!("{f}: {err}")).raise(f)
            }
            Error::ClockMovedBackwards { by_ms } => Report::new(
                crate::error::sqlstate(ErrorKind::ClockMovedBackwards),
                format!("{f}: the clock is {by_ms} ms behind IDs this server already issued"),
            )
            .detail(format!(
                "IDs already issued are never issued again: this server's newest ID is from {}, and after a restart, \
                 a promotion or a restore it resumes after its WAL-logged high-water mark (here {}). The clock reads {}: \
                 a restart within {RESERVE_AHEAD_MS} ms of the last ID, a failover to a host whose clock is behind, \
                 or a clock set back.",
                show_ms(self.generator.last_issued_ms().unwrap_or(0)),
                show_ms(STARTUP.share().resume_after_ms),
                show_ms(precise_now_ms()),
            ))
            .hint("flakeid.clock_backwards = 'wait' waits up to flakeid.max_wait_ms for the clock")
            .refuse(f),
            Error::Config { .. } => settings::setting_report(err).refuse(f),
            other => Report::new(crate::error::sqlstate(other.kind()), format!("{f}: {other}")).refuse(f),
        }
    }
}

// ---------------------------------------------------------------------------------
// flakeid_stats(): the server's totals, in shared memory ([`TOTALS`]), kept as
// PostgreSQL's own statistics are.
//
// Every backend has its own generator over the one counter, and the engine keeps
// its statistics per generator (one over a shared counter cannot tell its IDs from
// other backends', so its `ids_issued` is 0). So each backend counts in its own
// memory — the IDs it returned (one add to a word no other process writes), and the
// engine's waits and rollbacks (counted on the engine's slow paths) — and adds what
// is new to the totals when each of its transactions ends, and when it calls
// `flakeid_stats()` itself: the totals hold every ID of every finished
// transaction, and the caller's own so far.

/// One backend generator's counts: what it has counted, and what of that is in the
/// totals already. Single-threaded (a backend), so plain cells.
#[derive(Debug, Default)]
struct Local {
    /// IDs this generator returned to callers (the only count on the call path).
    ids: Cell<u64>,
    added_ids: Cell<u64>,
    /// The engine's counts, as of the last time they were added.
    added: Cell<Stats>,
}

impl Local {
    /// `n` IDs returned: an add to this backend's own memory.
    #[inline(always)]
    fn issued(&self, n: u64) {
        self.ids.set(self.ids.get().wrapping_add(n));
    }

    /// Adds what is new since the last time to the server's totals.
    fn add_to_totals(&self, engine: Stats) {
        let t = TOTALS.get();
        let ids = self.ids.get();
        let new_ids = ids - self.added_ids.get();
        if new_ids > 0 {
            t.ids_issued.fetch_add(new_ids, Ordering::Relaxed);
            self.added_ids.set(ids);
        }
        let was = self.added.get();
        let add = |total: &AtomicU64, now: u64, before: u64| {
            if now > before {
                total.fetch_add(now - before, Ordering::Relaxed);
            }
        };
        add(&t.tick_waits, engine.tick_waits, was.tick_waits);
        add(&t.tick_wait_us, engine.tick_wait_us, was.tick_wait_us);
        add(&t.clock_rollbacks, engine.clock_rollbacks, was.clock_rollbacks);
        t.max_rollback_ms.fetch_max(engine.max_rollback_ms, Ordering::Relaxed);
        self.added.set(engine);
    }
}

/// Registered once per backend, when it builds its first generator: adds the
/// backend's counts to the totals when a transaction (or a parallel worker's part
/// of one) ends, committed or not — an ID returned is issued either way.
fn register_end_of_transaction() {
    // SAFETY: a #[pg_guard]ed callback that touches only atomics and this
    // backend's generator; registered once (the caller builds once per lease).
    unsafe { pg_sys::RegisterXactCallback(Some(at_end_of_transaction), std::ptr::null_mut()) };
}

#[pg_guard]
unsafe extern "C-unwind" fn at_end_of_transaction(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    if conflict::ends_transaction(event) {
        add_to_totals();
    }
}

/// Waits (interruptibly) until the clock reads `ready_at`.
pub fn wait_until(ready_at: u64) {
    while precise_now_ms() < ready_at {
        crate::shmem::wait(Some(Duration::from_millis(
            ready_at.saturating_sub(precise_now_ms()).clamp(1, 100),
        )));
        pgrx::check_for_interrupts!();
    }
}

/// A call that found the clock behind the server's IDs: true when a
/// `flakeid_resume_after(id)` (crate::restore) put them there and the call waited
/// for the clock to reach what it allows (counted in `flakeid_stats().repair_waits`):
/// the caller draws again. False when no repair is pending: the clock went back.
#[cold]
#[inline(never)]
pub fn wait_for_repair() -> bool {
    let ready_at = REPAIR_READY_AT.get().load(Ordering::Acquire);
    if precise_now_ms() >= ready_at {
        return false;
    }
    let started = Instant::now();
    wait_until(ready_at);
    let t = TOTALS.get();
    t.repair_waits.fetch_add(1, Ordering::Relaxed);
    t.repair_wait_us.fetch_add(
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    true
}
