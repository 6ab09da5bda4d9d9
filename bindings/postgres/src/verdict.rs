//! The start-up check's verdict in shared memory ([`crate::worker`] writes it), and
//! what calls do with it: wait for it, refuse with it, or clear it on an operator's
//! confirmation.

use crate::error::{Report, SqlFn};
use crate::identity::{self, Difference};
use crate::mark;
use crate::settings;
use flakeid_core::{Overflow, precise_now_ms};
use pgrx::{PGRXSharedMemory, PgLwLock, PgSqlErrorCode, pg_sys};
use std::time::{Duration, Instant};

/// How long a call waits for the start-up check before it gives up.
pub const VERDICT_WAIT: Duration = Duration::from_secs(10);

/// The start-up check's verdict (its lock is only ever held briefly).
pub static STARTUP: PgLwLock<Startup> = unsafe { PgLwLock::new(c"flakeid_startup") };

/// What the start-up check decided about this server issuing IDs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Verdict {
    /// The check has not reported yet (or the server is a standby).
    #[default]
    Checking,
    Ready,
    /// Promoted (or restored) with its former primary's node id: refused.
    Promoted,
    /// On a timeline after the first with no record of its node id's owner: refused.
    Unrecorded,
    /// The owner record was written by another server (another host name or data
    /// directory): a copy of its data directory, refused.
    Copied,
    /// The settings give no usable node id: backends report why themselves.
    Settings,
    /// The check could not be made (`failure` says why).
    Failed,
}

/// The start-up check's findings, in shared memory.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Startup {
    pub verdict: Verdict,
    /// The durable high-water mark (Unix ms) when the check was made.
    pub start_mark_ms: u64,
    /// Backends resume after this (Unix ms): the mark, or when the mark is not known
    /// to cover every ID issued under the node id, later ([`resume_after_uncertain`]).
    pub resume_after_ms: u64,
    pub node: u64,
    pub timeline: u32,
    /// The recorded owner of the node id (`owner_timeline` 0: none).
    pub owner_node: u64,
    pub owner_timeline: u32,
    /// This server's fingerprint and the owner record's writer's ([`identity`]).
    pub identity: u64,
    pub owner_identity: u64,
    pub failure_len: u16,
    pub failure: [u8; 256],
}

impl Default for Startup {
    fn default() -> Self {
        Startup {
            verdict: Verdict::Checking,
            start_mark_ms: 0,
            resume_after_ms: 0,
            node: 0,
            timeline: 0,
            owner_node: 0,
            owner_timeline: 0,
            identity: 0,
            owner_identity: 0,
            failure_len: 0,
            failure: [0; 256],
        }
    }
}

impl Startup {
    pub fn failed(message: &str) -> Startup {
        let mut s = Startup {
            verdict: Verdict::Failed,
            ..Startup::default()
        };
        let mut n = message.len().min(s.failure.len());
        while !message.is_char_boundary(n) {
            n -= 1;
        }
        s.failure[..n].copy_from_slice(&message.as_bytes()[..n]);
        s.failure_len = n as u16;
        s
    }
    pub fn failure(&self) -> &str {
        std::str::from_utf8(&self.failure[..usize::from(self.failure_len)]).unwrap_or("")
    }
}

// SAFETY: plain old data, no pointers.
unsafe impl PGRXSharedMemory for Startup {}

/// The resume point when the durable mark is not known to cover every ID issued
/// under the node id: a new timeline (a promotion, a restore), a confirmation, an
/// empty mark (a new cluster, which cannot be told from one made by `pg_upgrade` or
/// a logical copy of a database that issued IDs), a renumbering or a detected copy.
///
/// The mark covers every ID issued before it was written (it is moved past each
/// ID's tick, borrowed ones included, before the ID leaves the server). IDs issued
/// afterwards by the server the mark came from — after the restore point, after a
/// backup, on a lost cluster — were issued at most `flakeid.max_borrow_ms` ahead of
/// its clock, and no later than now. So resuming after both the mark and now plus
/// the borrow window is after every one of them. Without borrowing nothing runs
/// ahead of the clock and this is the mark, as after a restart.
///
/// A borrowing server starts at the far end of its window: no ID is delayed, but
/// for `max_borrow_ms` it has no lead left to borrow (docs/postgres.md).
pub fn resume_after_uncertain(mark_ms: u64) -> u64 {
    let (overflow, max_borrow_ms) = settings::borrowing();
    let allowance = match overflow {
        Overflow::Borrow => max_borrow_ms,
        Overflow::Wait => 0,
    };
    if allowance == 0 {
        return mark_ms;
    }
    mark_ms.max(precise_now_ms().saturating_add(allowance))
}

/// Waits (bounded, interruptible) for the start-up check; the Unix ms backends
/// resume after.
#[track_caller]
pub fn wait_for_verdict(f: SqlFn) -> u64 {
    let started = Instant::now();
    loop {
        let s = *STARTUP.share();
        match s.verdict {
            Verdict::Ready => return s.resume_after_ms,
            Verdict::Checking if started.elapsed() < VERDICT_WAIT => sleep_ms(10),
            Verdict::Checking => Report::new(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "{f}: flakeid's start-up check has not reported in {} s",
                    VERDICT_WAIT.as_secs()
                ),
            )
            .detail("Its background workers (\"flakeid start-up check launcher\" and \"flakeid start-up check\") read the high-water mark and check this server's node id after every start and promotion.")
            .hint("see the server log; the worker needs a free slot of max_worker_processes")
            .raise(f),
            Verdict::Promoted | Verdict::Unrecorded | Verdict::Copied => refusal(&s, f).raise(f),
            Verdict::Settings => match settings::builder().and_then(|b| b.build().map_err(settings::setting_report)) {
                Err(report) => report.raise(f),
                // The worker saw settings this backend can use: not expected (both
                // have the postmaster's); say so rather than guess.
                Ok(_) => Report::new(
                    PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("{f}: flakeid's start-up check found no usable node id in the flakeid.* settings"),
                )
                .hint("see the server log")
                .raise(f),
            },
            Verdict::Failed => Report::new(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("{f}: flakeid's start-up check failed: {}", s.failure()),
            )
            .hint("fix the cause and restart the server")
            .raise(f),
        }
    }
}

/// Why a promoted, restored or copied server refuses, and the ways out.
pub fn refusal(s: &Startup, f: SqlFn) -> Report {
    let node = s.node;
    let (message, detail) = match s.verdict {
        Verdict::Promoted => (
            format!(
                "{f}: this server was promoted (timeline {} to {}) and still has the node id {node} its former primary issued under",
                s.owner_timeline, s.timeline
            ),
            format!(
                "Another server may still be issuing IDs under node id {node} (split brain): IDs issued here could repeat its IDs."
            ),
        ),
        Verdict::Copied => {
            let me = identity::this_server();
            let what = identity::difference(s.owner_identity, s.identity).unwrap_or(Difference::Both);
            (
                format!(
                    "{f}: this server's data directory is a copy of another server's that issued IDs under node id {node}: {}",
                    what.describe()
                ),
                format!(
                    "The record of who issues under node id {node} (timeline {}) was written by a server with another host name \
                     or data directory than this one ({}:{}): a base backup or a standby started as a primary, or a file-level \
                     copy. If that server still runs, IDs issued here would repeat its IDs.",
                    s.owner_timeline, me.host, me.dir
                ),
            )
        }
        _ => (
            format!(
                "{f}: this server is on timeline {} (a promoted standby or a restored backup) and has no record of the node id {node} being its own",
                s.timeline
            ),
            format!(
                "Another server may still be issuing IDs under node id {node} (split brain): IDs issued here could repeat its IDs."
            ),
        ),
    };
    Report::new(PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, message)
        .detail(detail)
        .hint(format!(
            "Give this server its own node id (ALTER SYSTEM SET flakeid.node = <an unused id>, then restart); \
             or, once no other server can ever issue under node id {node}, have a superuser run \
             SELECT flakeid_confirm_node({node}); or lease node ids (flakeid.lease). \
             See the failover runbook in docs/postgres.md."
        ))
}

pub fn sleep_ms(ms: i64) {
    // SAFETY: waiting on this process's own latch, as PostgreSQL's own waits do.
    unsafe {
        pg_sys::WaitLatch(
            pg_sys::MyLatch,
            (pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
            ms as _,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
    pgrx::check_for_interrupts!();
}

/// Marks this server cleared to issue under `node` on the current timeline (a
/// superuser's confirmation after a promotion, a restore or a copy). Returns the
/// verdict before.
pub fn confirm(node: u64, f: SqlFn) -> (Startup, Startup) {
    // Let the worker report first, so its later report cannot undo this one.
    let started = Instant::now();
    while STARTUP.share().verdict == Verdict::Checking && started.elapsed() < VERDICT_WAIT {
        sleep_ms(10);
    }
    // SAFETY: not in recovery (checked by the caller).
    let timeline = unsafe { pg_sys::GetWALInsertionTimeLine() };
    let me = identity::this_server().fingerprint;
    // The durable record first (heavyweight locks, WAL): no LWLock held meanwhile.
    if let Err(report) = mark::record_owner(mark::Owner { timeline, node }, me) {
        report.raise(f);
    }
    let durable = match mark::read() {
        Ok(d) => d,
        Err(report) => report.raise(f),
    };
    let mut s = STARTUP.exclusive();
    let before = *s;
    s.verdict = Verdict::Ready;
    s.node = node;
    s.timeline = timeline;
    s.owner_node = node;
    s.owner_timeline = timeline;
    s.identity = me;
    s.owner_identity = me;
    // Backends resume after the mark as it was before this server's first ID, and
    // after every ID the server it replaces may have issued past it. On a server
    // already issuing, the durable mark is ahead of the clock (reserved ahead):
    // resuming after it would make every new backend's clock "behind".
    if before.verdict != Verdict::Ready {
        s.start_mark_ms = s.start_mark_ms.max(durable.mark_ms);
        s.resume_after_ms = s.resume_after_ms.max(resume_after_uncertain(s.start_mark_ms));
    }
    (before, *s)
}
