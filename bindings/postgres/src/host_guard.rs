//! The server's host guard (docs/design.md, "Who owns a node id"): one server per fixed
//! node id and layout on a host.
//!
//! The engine's guard is a lock the kernel drops when its process ends, so the
//! process that holds it must live as long as the server issues IDs, and start only
//! once the server can issue. That is the start-up check's launcher
//! ([`crate::startup`]): it starts when recovery ends (at server start, or at a
//! promotion), so a standby never takes the guard and never keeps its primary on the
//! same host from taking it, whichever of the two started first.
//!
//! While another process holds the guard the launcher retries every [`RETRY`], and
//! at once when a call asks ([`require`]): a server refused by the guard issues IDs
//! as soon as the other holder is gone, without a restart. Backends check the
//! published state when they build their generator, not per ID.

use crate::error::{Report, SqlFn};
use crate::settings;
use crate::shmem::{self, GUARD, GuardState, GuardStatus, WORKER_WAIT};
use flakeid_core::{HostGuard, ManualClock, precise_now_ms};
use pgrx::{PgSqlErrorCode, log, pg_sys, warning};
use std::time::{Duration, Instant};

/// How often the launcher retries a refused guard by itself.
pub const RETRY: Duration = Duration::from_secs(1);

/// How long a call waits for the launcher's retry it asked for.
const ASKED_WAIT: Duration = Duration::from_secs(1);

/// The launcher's hold on the guard, for the launcher's life.
pub struct Holder {
    guard: Option<HostGuard>,
    warned: bool,
}

impl Holder {
    /// In the launcher: publishes its pid (calls ask it to retry) and makes a first attempt.
    pub fn start() -> Holder {
        // SAFETY: this process's pid.
        GUARD.exclusive().holder_pid = unsafe { pg_sys::MyProcPid };
        let mut holder = Holder {
            guard: None,
            warned: false,
        };
        holder.attempt();
        holder
    }

    /// Whether another process holds the guard (retry after [`RETRY`]).
    pub fn refused(&self) -> bool {
        GUARD.share().state == GuardState::Refused
    }

    /// Takes the guard unless it is held or there is none to take.
    pub fn attempt(&mut self) {
        let was = GUARD.share().state;
        if self.guard.is_some() || was == GuardState::NotNeeded {
            return;
        }
        let outcome = take();
        let (state, message) = match &outcome {
            Ok(Some(_)) => (GuardState::Held, String::new()),
            Ok(None) => (GuardState::NotNeeded, String::new()),
            Err(message) => (GuardState::Refused, message.clone()),
        };
        {
            let mut g = GUARD.exclusive();
            g.state = state;
            g.set_message(&message);
            g.attempts += 1;
        }
        match outcome {
            Ok(Some(guard)) => {
                if was == GuardState::Refused {
                    log!("flakeid: the host guard is this server's now: it issues IDs");
                }
                self.guard = Some(guard);
            }
            Ok(None) => {}
            Err(message) if !self.warned => {
                self.warned = true;
                warning!(
                    "flakeid: {message} (this server issues no ID until that process stops; retried every {} s)",
                    RETRY.as_secs()
                );
            }
            Err(_) => {}
        }
    }
}

/// The guard of the settings' node id and layout; `Ok(None)` when there is none to
/// take (turned off, a lease, or settings that give no node id: calls report those).
fn take() -> Result<Option<HostGuard>, String> {
    if settings::lease().is_some() || settings::refused_at_server_start() {
        return Ok(None);
    }
    let Ok(builder) = settings::builder() else {
        return Ok(None);
    };
    let Ok(g) = builder.clock(ManualClock::new(precise_now_ms())).build() else {
        return Ok(None);
    };
    HostGuard::hold(g.layout(), g.node()).map_err(|e| match e {
        flakeid_core::Error::Config { message, .. } => message,
        other => other.to_string(),
    })
}

/// Asks the launcher to try again now, and waits (at most [`ASKED_WAIT`]) for that
/// attempt; the state after it.
pub fn ask_again() -> GuardStatus {
    let before = *GUARD.share();
    if before.state != GuardState::Refused || before.holder_pid == 0 {
        return before;
    }
    // SAFETY: the launcher's SIGUSR1 handler is PostgreSQL's, which sets its latch.
    unsafe { libc::kill(before.holder_pid, libc::SIGUSR1) };
    let started = Instant::now();
    loop {
        let now = *GUARD.share();
        if now.attempts > before.attempts || started.elapsed() >= ASKED_WAIT {
            return now;
        }
        shmem::pause();
    }
}

/// Before a backend builds its generator: the guard held (or none needed), else an
/// ERROR naming the process that holds it.
#[track_caller]
pub fn require(f: SqlFn) {
    let started = Instant::now();
    loop {
        let g = *GUARD.share();
        match g.state {
            GuardState::Held | GuardState::NotNeeded => return,
            GuardState::Pending if started.elapsed() < WORKER_WAIT => shmem::pause(),
            GuardState::Pending => Report::new(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "{f}: flakeid's launcher has not taken the host guard in {} s",
                    WORKER_WAIT.as_secs()
                ),
            )
            .hint("see the server log; the launcher needs a free slot of max_worker_processes")
            .refuse(f),
            GuardState::Refused => {
                let after = ask_again();
                if matches!(after.state, GuardState::Held | GuardState::NotNeeded) {
                    return;
                }
                refusal(&after, f).refuse(f);
            }
        }
    }
}

/// The ERROR of a call refused by the guard.
pub fn refusal(g: &GuardStatus, f: SqlFn) -> Report {
    Report::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("{f}: {}", g.message()),
    )
    .detail(format!(
        "The guard is retried every {} s and at each call: IDs resume by themselves once that process stops.",
        RETRY.as_secs()
    ))
    .hint("stop the other process, or give this server its own flakeid.node (or flakeid.lease) and restart it")
}

/// For `flakeid_status()`: the state when the guard keeps a cleared server from issuing.
pub fn refused_state() -> Option<String> {
    let g = *GUARD.share();
    (g.state == GuardState::Refused).then(|| format!("host guard: refusing: {}", g.message()))
}
