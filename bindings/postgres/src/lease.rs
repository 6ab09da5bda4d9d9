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
//! The launcher copies the lease's validity window ([`flakeid_core::LeaseWindow`])
//! into shared memory every few tens of ms ([`Window`]: a copy that lags ends
//! earlier, which is safe). Every backend checks it after reserving an ID and
//! before returning it: the ID's tick below the window's end (the fence the store
//! holds, in ticks), a [`LeaseClock`] reading below its monotonic end, and the
//! lease's epoch unchanged since before the reservation (so an ID reserved before
//! a new lease moved the counter past its fence is never returned under it).
//!
//! A standby takes no lease (the launcher starts when recovery ends); a promoted
//! standby takes its own, a node id no live server holds: no operator step.

use crate::error::{Report, SqlFn};
use crate::settings::{self, Lease};
use crate::shmem::{
    self, COUNTER, LEASE_STATUS as STATUS, LEASE_WINDOW as WINDOW, LeaseState as State, LeaseStatus as Status,
    LeaseWindow as Window, WORKER_WAIT, shutting_down,
};
use flakeid_core::{Generator, Layout, LeaseClock, LeaseState, Overflow, SharedCounter};
use pgrx::{log, warning};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The node id of a [`Window::lease`] word.
pub fn node_of(lease: u64) -> u64 {
    lease & 0xffff_ffff
}

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

/// A backend's view of the lease: the window and its own clock reader.
#[derive(Debug)]
pub struct Check {
    window: &'static Window,
    clock: LeaseClock,
    /// The lease word this backend's generator issues under (its node id below).
    lease: AtomicU64,
}

/// What a failed check found.
pub enum AfterRefusal {
    /// A new lease on the same node id: retry under it.
    Renewed,
    /// A new lease on another node id: rebuild the generator.
    Renumbered,
    Refused,
}

impl Check {
    pub fn new(lease: u64) -> Check {
        Check {
            window: WINDOW.get(),
            clock: LeaseClock::new(),
            lease: AtomicU64::new(lease),
        }
    }

    /// Read before reserving an ID.
    #[inline(always)]
    pub fn begin(&self) -> u64 {
        self.window.lease.load(Ordering::Acquire)
    }

    /// Whether an ID of tick `tick`, reserved after [`begin`](Self::begin) returned
    /// `lease`, may leave the server: the window is open for it, and it is the
    /// window of the lease the reservation was made under, which is this
    /// generator's.
    #[inline(always)]
    pub fn allows(&self, lease: u64, tick: u64) -> bool {
        let w = self.window;
        let open = tick < w.tick_end.load(Ordering::Acquire) && self.clock.now() < w.mono_end.load(Ordering::Acquire);
        // Last, after the window's loads (Acquire): a window of a later lease
        // shows that lease's word here.
        open && lease == self.lease.load(Ordering::Relaxed) && w.lease.load(Ordering::Relaxed) == lease
    }

    /// Whether this is the lease the window is of now.
    pub fn is_current(&self) -> bool {
        self.lease.load(Ordering::Relaxed) == self.window.lease.load(Ordering::Acquire)
    }

    /// Why [`allows`](Self::allows) said no, and whether to retry.
    #[cold]
    pub fn after_refusal(&self) -> AfterRefusal {
        let w = self.window;
        let now = w.lease.load(Ordering::Acquire);
        let mine = self.lease.load(Ordering::Relaxed);
        if now == mine || now == 0 || w.tick_end.load(Ordering::Acquire) == 0 {
            return AfterRefusal::Refused;
        }
        if node_of(now) == node_of(mine) {
            self.lease.store(now, Ordering::Relaxed);
            AfterRefusal::Renewed
        } else {
            AfterRefusal::Renumbered
        }
    }
}

/// The published lease word, for a backend building its generator. Waits
/// (bounded, like the start-up check) for the server's first lease only, while it
/// is being acquired; once one was held, a backend builds on the last and its
/// calls refuse until a window is open again.
#[track_caller]
pub fn published(f: SqlFn) -> u64 {
    let w = WINDOW.get();
    let started = Instant::now();
    loop {
        let lease = w.lease.load(Ordering::Acquire);
        if lease != 0 {
            return lease;
        }
        // A failed attempt (the store unreachable) is retried in the background:
        // refuse now rather than hold every new session for the whole wait.
        if started.elapsed() >= WORKER_WAIT || STATUS.share().state == State::Failed {
            refusal(f).raise(f);
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

fn close_window() {
    let w = WINDOW.get();
    w.mono_end.store(0, Ordering::Release);
    w.tick_end.store(0, Ordering::Release);
}

/// Holds the server's lease until shutdown: acquire, publish, re-acquire when
/// lost. Runs in the launcher after the start-up check cleared the server.
pub fn hold(lease: Lease, resume_after_ms: u64) {
    // A holder that died (its window may still be open): its lease is not ours.
    close_window();
    let mut epoch = WINDOW.get().lease.load(Ordering::Acquire) >> 32;
    let mut backoff = Duration::from_millis(500);
    while !shutting_down() {
        set_status(|s| s.state = State::Acquiring);
        let built = match acquire(&lease, resume_after_ms) {
            Some(r) => r,
            None => return, // shutting down
        };
        let (generator, ahead_ticks) = match built {
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
        let w = WINDOW.get();
        // The counter is past the fence (build_shared); then the lease word, then
        // the window: a backend that sees the window sees the word.
        epoch = match (epoch + 1) & 0xffff_ffff {
            0 => 1,
            e => e,
        };
        w.lease.store((epoch << 32) | node, Ordering::Release);
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
        let lost = keep(&generator, &lease, ahead_ticks);
        // Stop the backends first, then give the id back with a bound on what they
        // issued (the generator's own release reads the clock after the close).
        close_window();
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
    let layout: Layout = settings::server_layout();
    let (overflow, max_borrow_ms) = settings::borrowing();
    let ahead_ticks = match overflow {
        Overflow::Borrow => max_borrow_ms / layout.tick_ms(),
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
    Some(built.map(|g| (g, ahead_ticks)))
}

/// Copies the window to shared memory until the lease is lost (`true`) or the
/// server shuts down (`false`).
fn keep(generator: &Generator<SharedCounter>, lease: &Lease, ahead_ticks: u64) -> bool {
    let layout = *generator.layout();
    let w = WINDOW.get();
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
            if window.is_closed() {
                close_window();
            } else {
                // Allowed: a tick no later than the wall end's (minus 1 ms: the end
                // is exclusive) plus the borrow allowance, i.e. at or before the
                // fence the store holds.
                let tick_end = layout
                    .ticks_at(window.wall_end_ms.saturating_sub(1))
                    .map_or(0, |t| t.saturating_add(ahead_ticks).saturating_add(1));
                w.tick_end.store(tick_end, Ordering::Release);
                w.mono_end.store(window.mono_end, Ordering::Release);
            }
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
