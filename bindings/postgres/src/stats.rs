//! `flakeid_stats()`: what the server's generator has done since the server started,
//! the fields of the engine's [`flakeid_core::Stats`], for the whole server.
//!
//! Every backend has its own [`flakeid_core::Generator`] over the one counter in
//! shared memory, and the engine keeps its statistics per generator (in the
//! backend's own memory; one over a shared counter cannot tell its IDs from other
//! backends', so its `ids_issued` is 0). The server's totals live here, in shared
//! memory, as PostgreSQL's own statistics do: each backend counts in its own memory
//! — the IDs it returned (one add to a word no other process writes), and the
//! engine's waits and rollbacks (counted on the engine's slow paths) — and adds what
//! is new to the totals when each of its transactions ends, and when it calls
//! `flakeid_stats()` itself. So the totals hold every ID of every finished
//! transaction, and the caller's own so far. The lead over the clock is read from
//! the shared counter; the lease from its holder's status.

use crate::error::{Report, SqlFn};
use crate::lease::{self, State};
use crate::{server, settings};
use flakeid_core::{Stats, precise_now_ms};
use pgrx::prelude::*;
use pgrx::{PGRXSharedMemory, PgAtomic, PgSqlErrorCode};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The server's totals, since it started (a crash restart starts them over, with
/// the rest of shared memory).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Totals {
    ids_issued: AtomicU64,
    tick_waits: AtomicU64,
    tick_wait_us: AtomicU64,
    clock_rollbacks: AtomicU64,
    max_rollback_ms: AtomicU64,
}

// SAFETY: atomics only, no pointers.
unsafe impl PGRXSharedMemory for Totals {}

pub static TOTALS: PgAtomic<Totals> = unsafe { PgAtomic::new(c"flakeid_stats") };

/// One backend generator's counts: what it has counted, and what of that is in the
/// totals already. Single-threaded (a backend), so plain cells.
#[derive(Debug, Default)]
pub struct Local {
    /// IDs this generator returned to callers (the only count on the call path).
    ids: Cell<u64>,
    added_ids: Cell<u64>,
    /// The engine's counts, as of the last time they were added.
    added: Cell<Stats>,
}

impl Local {
    /// `n` IDs returned: an add to this backend's own memory.
    #[inline(always)]
    pub fn issued(&self, n: u64) {
        self.ids.set(self.ids.get().wrapping_add(n));
    }

    /// Adds what is new since the last time to the server's totals.
    pub fn add_to_totals(&self, engine: Stats) {
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
pub fn register_end_of_transaction() {
    // SAFETY: a #[pg_guard]ed callback that touches only atomics and this
    // backend's generator; registered once (the caller builds once per lease).
    unsafe { pg_sys::RegisterXactCallback(Some(at_end_of_transaction), std::ptr::null_mut()) };
}

#[pg_guard]
unsafe extern "C-unwind" fn at_end_of_transaction(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    use pg_sys::XactEvent::*;
    if matches!(
        event,
        XACT_EVENT_COMMIT
            | XACT_EVENT_PARALLEL_COMMIT
            | XACT_EVENT_ABORT
            | XACT_EVENT_PARALLEL_ABORT
            | XACT_EVENT_PREPARE
    ) {
        server::add_to_totals();
    }
}

/// What the server's generator has done since the server started.
#[allow(clippy::type_complexity)]
#[pg_extern(volatile, parallel_safe)]
fn flakeid_stats() -> TableIterator<
    'static,
    (
        name!(ids_issued, i64),
        name!(tick_waits, i64),
        name!(tick_wait_us, i64),
        name!(lead_ms, i64),
        name!(clock_rollbacks, i64),
        name!(max_rollback_ms, i64),
        name!(lease_state, Option<String>),
        name!(lease_remaining_ms, Option<i64>),
    ),
> {
    let f = SqlFn("flakeid_stats");
    if !server::preloaded() {
        Report::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("{f} needs the flakeid library preloaded: the server's generator and its statistics live in shared memory"),
        )
        .hint(server::NOT_PRELOADED_HINT)
        .raise(f);
    }
    // This backend's counts so far, then everyone's.
    server::add_to_totals();
    let t = TOTALS.get();
    let big = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let now = precise_now_ms();
    let lead_ms = server::last_issued_ms().map_or(0, |last| last.saturating_sub(now));
    let (lease_state, lease_remaining_ms) = if settings::lease().is_some() {
        let s = *lease::STATUS.share();
        (
            Some(lease_state_name(s.state).to_string()),
            Some(big(s.wall_end_ms.saturating_sub(now))),
        )
    } else {
        (None, None)
    };
    TableIterator::once((
        big(t.ids_issued.load(Ordering::Relaxed)),
        big(t.tick_waits.load(Ordering::Relaxed)),
        big(t.tick_wait_us.load(Ordering::Relaxed)),
        big(lead_ms),
        big(t.clock_rollbacks.load(Ordering::Relaxed)),
        big(t.max_rollback_ms.load(Ordering::Relaxed)),
        lease_state,
        lease_remaining_ms,
    ))
}

/// The lease holder's state by the engine's names (`LeaseState::as_str`: held,
/// unreachable, lost, released); while no lease is held yet (acquiring, or retrying
/// after a failure) the holder has none: `released`, as the engine says of a
/// generator whose lease is gone.
fn lease_state_name(state: State) -> &'static str {
    use flakeid_core::lease::LeaseState;
    match state {
        State::Held => LeaseState::Held.as_str(),
        State::Unreachable => LeaseState::Unreachable { error: String::new() }.as_str(),
        State::Lost => LeaseState::Lost.as_str(),
        State::None | State::Acquiring | State::Failed => LeaseState::Released.as_str(),
    }
}
