//! `flakeid.lease`: the server's node id leased from a store, like every other
//! generator's (docs/leases.md), and fenced on every backend's hot path.
//!
//! Backends are forked processes, often hundreds: none of them runs a thread or a
//! store client. One process holds the lease for the whole server — the start-up
//! check's launcher ([`crate::startup`]), after the check cleared the server — with
//! the engine's own machinery: a [`Generator`] built with `lease_url` over the
//! server's shared counter (`build_shared`), so the lease's acquire, lock delay,
//! fence, heartbeat and release are the core's, and the fence it reads moves the
//! server's counter past every ID an earlier holder issued (beside the WAL-logged
//! high-water mark, `resume_after_ms`). The holder never issues an ID itself.
//!
//! The launcher publishes the lease's validity window ([`flakeid_core::LeaseWindow`])
//! every few tens of ms in the engine's lease gate across processes
//! ([`flakeid_core::lease::SharedGate`], in shared memory: [`shmem::lease_gate`]).
//! Every backend checks it after reserving an ID and before returning it (a
//! [`flakeid_core::lease::SharedGateCheck`]): the ID's tick below the window's end
//! (the fence the store holds, in ticks), a lease-clock reading below its monotonic
//! end, the ID's tick at or past the lease's start, and the lease unchanged since
//! before the reservation (so an ID reserved before a new lease moved the counter
//! past its fence is never returned under it, a run a backend kept included).
//!
//! A standby takes no lease (the launcher starts when recovery ends); a promoted
//! standby takes its own, a node id no live server holds: no operator step.

use crate::error::{Report, SqlFn};
use crate::settings::{self, Lease};
use crate::shmem::{
    self, COUNTER, LEASE_STATUS as STATUS, LeaseState as State, LeaseStatus as Status, WORKER_WAIT, lease_gate,
    shutting_down,
};
use flakeid_core::{Generator, LeaseState, Overflow, SharedCounter};
use pgrx::{log, warning};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

impl Status {
    /// For `flakeid_status()`.
    pub fn describe(&self) -> String {
        match self.state {
            State::None => "not started".into(),
            State::Acquiring if self.acquired == 0 => "acquiring".into(),
            State::Acquiring => "acquiring again".into(),
            State::Held => "held".into(),
            State::Unreachable => format!("store unreachable: {}", self.message()),
            State::Lost => format!("lost: {}", self.message()),
            State::Failed => format!("failed, retrying: {}", self.message()),
        }
    }
}

// ---------------------------------------------------------------------------------
// Backends

/// The published lease word, for a backend building its generator. Waits
/// (bounded, like the start-up check) for the server's first lease only, while it
/// is being acquired; once one was held, a backend builds on the last and its
/// calls refuse until a window is open again.
#[track_caller]
pub fn published(f: SqlFn) -> u64 {
    let started = Instant::now();
    loop {
        let lease = lease_gate().lease();
        if lease != 0 {
            return lease;
        }
        // A failed attempt (the store unreachable) is retried in the background:
        // refuse now rather than hold every new session for the whole wait.
        if started.elapsed() >= WORKER_WAIT || STATUS.share().state == State::Failed {
            refusal(f).refuse(f);
        }
        shmem::pause();
    }
}

/// The error of a call refused for want of a lease.
#[cold]
pub fn refusal(f: SqlFn) -> Report {
    let s = *STATUS.share();
    let lease = settings::lease().map(|l| l.shown()).unwrap_or_default();
    let why = match s.state {
        State::None => "its background worker has not started (see the server log)".to_string(),
        State::Acquiring if s.acquired == 0 => {
            format!("it is still being acquired ({}s waited)", WORKER_WAIT.as_secs())
        }
        State::Acquiring => "a new lease is being acquired".into(),
        State::Held => "its validity window ended before the renewal was confirmed".into(),
        State::Unreachable => format!("the store did not confirm a renewal in time ({})", s.message()),
        State::Lost => format!("it was lost ({}); a new lease is being acquired", s.message()),
        State::Failed => format!("acquiring it failed ({}); retrying", s.message()),
    };
    let node = if s.acquired > 0 {
        format!("node id {}", s.node)
    } else {
        "no node id yet".to_string()
    };
    Report::new(
        crate::error::sqlstate(flakeid_core::ErrorKind::Lease),
        format!("{f}: this server does not hold its node-id lease ({node}, {lease}): {why}"),
    )
    .detail(
        "IDs stop before the store may give the node id to another server, so that no two servers issue \
         under one node id. They resume by themselves once the lease is renewed or a new one acquired.",
    )
    .hint("see flakeid_status() and the server log; check that the store is reachable")
}

// ---------------------------------------------------------------------------------
// The holder (the launcher)

fn set_status(update: impl FnOnce(&mut Status)) {
    let mut s = STATUS.exclusive();
    update(&mut s);
}

/// Holds the server's lease until shutdown: acquire, publish, re-acquire when
/// lost. Runs in the launcher after the start-up check cleared the server.
pub fn hold(lease: Lease, resume_after_ms: u64) {
    // A holder that died (its window may still be open): its lease is not ours.
    lease_gate().close();
    let mut backoff = Duration::from_millis(500);
    while !shutting_down() {
        set_status(|s| s.state = State::Acquiring);
        let built = match acquire(&lease, resume_after_ms) {
            Some(r) => r,
            None => return, // shutting down
        };
        let (generator, ahead_ms) = match built {
            Ok(g) => g,
            Err(message) => {
                warning!("flakeid: cannot lease a node id ({}): {message}", lease.redacted());
                set_status(|s| {
                    s.state = State::Failed;
                    s.set_message(&message);
                });
                shmem::wait(Some(backoff));
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        };
        backoff = Duration::from_millis(500);
        let node = generator.node();
        // The counter is past the fence (build_shared); begin_lease moves it to a
        // fresh tick, the lease's start, which the gate refuses IDs below (a run a
        // backend reserved before is one); then the lease word, then the window: a
        // backend that sees the window sees the word.
        lease_gate().begin_lease(&generator);
        let delay = generator.lease_lock_delay_ms().unwrap_or(0);
        log!(
            "flakeid: leased node id {node} ({}){}",
            lease.redacted(),
            if delay > 0 {
                format!(" after a lock delay of {delay} ms (the store had no record of the namespace)")
            } else {
                String::new()
            }
        );
        set_status(|s| {
            s.state = State::Held;
            s.node = node;
            s.acquired += 1;
            s.lock_delay_ms = delay;
            s.set_message("");
        });
        let lost = keep(&generator, &lease, ahead_ms);
        // Stop the backends first, then give the id back with a bound on what they
        // issued (the generator's own release reads the clock after the close).
        lease_gate().close();
        generator.release_lease();
        drop(generator);
        set_status(|s| s.wall_end_ms = 0);
        if !lost {
            set_status(|s| s.state = State::None);
            return;
        }
    }
}

/// Acquires in a thread of its own (the launcher keeps answering signals): `None`
/// if the server shuts down meanwhile.
#[allow(clippy::type_complexity)]
fn acquire(lease: &Lease, resume_after_ms: u64) -> Option<Result<(Generator<SharedCounter>, u64), String>> {
    let builder = match settings::builder() {
        Ok(b) => b,
        Err(report) => return Some(Err(report.message)),
    };
    let (overflow, max_borrow_ms) = settings::borrowing();
    let ahead_ms = match overflow {
        Overflow::Borrow => max_borrow_ms,
        _ => 0,
    };
    let builder = builder
        .resume_after_ms(resume_after_ms)
        .lease_url(&lease.url)
        .lease_ttl_ms(lease.ttl_ms);
    let counter: &'static AtomicU64 = COUNTER.get();
    let spawned = spawn_without_signals(move || builder.build_shared(counter).map_err(|e| e.to_string()));
    let handle = match spawned {
        Ok(h) => h,
        Err(e) => return Some(Err(format!("cannot start a thread: {e}"))),
    };
    while !handle.is_finished() {
        if shutting_down() {
            // Not waited for (a lock delay may take a TTL): the thread ends with
            // the process, and a lease it took expires in the store.
            return None;
        }
        shmem::wait(Some(Duration::from_millis(50)));
    }
    let built = match handle.join() {
        Ok(r) => r,
        Err(_) => Err("the lease client panicked".to_string()),
    };
    if shutting_down() {
        if let Ok(g) = built {
            g.release_lease();
        }
        return None;
    }
    Some(built.map(|g| (g, ahead_ms)))
}

/// Publishes the window (IDs up to `ahead_ms` past its end are borrowed, and
/// fenced) until the lease is lost (`true`) or the server shuts down (`false`).
fn keep(generator: &Generator<SharedCounter>, lease: &Lease, ahead_ms: u64) -> bool {
    let renew_ms = (lease.ttl_ms / 3).max(1);
    // A copy lagging by this much still leaves most of the window (a renewal every
    // ttl/3, the window ttl − max(ttl/5, 20 ms)).
    let poll = Duration::from_millis((renew_ms / 8).clamp(20, 250));
    let mut last = State::Held;
    loop {
        if shutting_down() {
            return false;
        }
        let state = generator.lease_state();
        if let Some(window) = generator.lease_window() {
            lease_gate().publish(window, generator.layout(), ahead_ms);
            set_status(|s| s.wall_end_ms = window.wall_end_ms);
        }
        let (now, message) = match &state {
            Some(LeaseState::Held) => (State::Held, String::new()),
            Some(LeaseState::Unreachable { error }) => (State::Unreachable, error.clone()),
            _ => (
                State::Lost,
                "taken over by another holder, or the store lost its data".to_string(),
            ),
        };
        if now != last {
            match now {
                State::Held => log!("flakeid: the lease on node id {} is renewed again", generator.node()),
                _ => warning!(
                    "flakeid: the lease on node id {} ({}): {message}",
                    generator.node(),
                    lease.redacted()
                ),
            }
            set_status(|s| {
                s.state = now;
                s.set_message(&message);
            });
            last = now;
        }
        if now == State::Lost {
            return true;
        }
        shmem::wait(Some(poll));
    }
}

/// Spawns a thread that receives no signals: PostgreSQL's handlers belong to the
/// process's own thread (they set its latch and flags). The lease's heartbeat and
/// its store clients' threads are started from it and inherit the mask.
fn spawn_without_signals<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    // SAFETY: plain signal-mask calls on this thread, restored before returning.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let spawned = std::thread::Builder::new()
            .name("flakeid-lease".into())
            .stack_size(4 << 20)
            .spawn(f);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        spawned
    }
}
