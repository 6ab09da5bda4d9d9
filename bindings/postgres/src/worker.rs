//! The start-up check: a background worker that runs once the server accepts writes
//! (after start, crash recovery or a promotion) and decides whether it may issue IDs.
//!
//! It creates flakeid's replication origins if they are missing (in a transaction of
//! its own), reads the durable high-water mark and the owner record, and compares
//! the owner with this server's node id, timeline and identity ([`crate::identity`]):
//! - no owner yet on timeline 1 (a new cluster): this server owns its node id;
//! - another node id than the recorded one (renumbered): it owns the new one;
//! - the same node id and timeline, written by this server (a restart): cleared;
//! - the same node id on a later timeline (a promoted standby, a restored backup):
//!   refused until the node id is changed or `flakeid_confirm_node()` is run;
//!   likewise with no owner record on a later timeline;
//! - the same node id and timeline, written by another server (its data directory
//!   copied: a base backup or a standby started as a primary, a file-level copy):
//!   refused the same way. A record with no writer yet (written by an older
//!   library) is this server's: it records itself.
//!
//! Only after a restart does the server resume right after the mark; in every
//! other case the mark may not cover every ID issued under the node id, and it
//! resumes after [`crate::verdict::resume_after_uncertain`].
//!
//! With `flakeid.lease` the node id is the store's to give: the check only reads
//! the mark, and the launcher then holds the server's lease ([`crate::lease`]).
//!
//! Two processes: a launcher (a static worker with no database, so it can stay
//! idle without holding one open, and is started again after a crash restart) runs
//! the check itself in a short-lived dynamic worker connected to template1 (the
//! origins' catalog needs a database to be opened from), retrying every few seconds
//! until one reports. Every wait of these loops ends the process when the postmaster
//! dies: an orphan would keep the old shared memory attached, and PostgreSQL refuses
//! to start again while any process is attached to it.

use crate::identity;
use crate::mark::{self, Owner};
use crate::settings;
use crate::verdict::{STARTUP, Startup, Verdict, resume_after_uncertain};
use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BackgroundWorkerStatus, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::{log, pg_guard, pg_sys, warning};
use std::time::Duration;

const RETRY: Duration = Duration::from_secs(5);

pub fn register() {
    // pg_upgrade starts both clusters in binary-upgrade mode: no IDs are issued
    // there, and the check would write origins into a cluster being rebuilt.
    // SAFETY: a flag the postmaster sets from its command line before preloading.
    if unsafe { pg_sys::IsBinaryUpgrade } {
        return;
    }
    BackgroundWorkerBuilder::new("flakeid start-up check launcher")
        .set_type("flakeid")
        .set_library("flakeid")
        .set_function("flakeid_launcher_main")
        .enable_shmem_access(None)
        .set_start_time(BgWorkerStartTime::RecoveryFinished)
        .set_restart_time(Some(RETRY))
        .load();
}

/// Whether the postmaster asked this worker to exit (set by pgrx's SIGTERM handler,
/// never reset: a wait that consumed the latch must not hide it).
fn shutting_down() -> bool {
    // SAFETY: a sig_atomic_t flag set by the signal handler.
    unsafe { std::ptr::read_volatile(&raw const pg_sys::ShutdownRequestPending) != 0 }
}

/// Waits on this process's latch for `timeout` (or until it is set); exits the
/// process if the postmaster has died (pgrx's `wait_latch` only reports that, and a
/// loop that ignores the answer spins for ever).
pub fn wait(timeout: Option<Duration>) {
    let (events, ms) = match timeout {
        Some(t) => (
            pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH,
            i64::try_from(t.as_millis()).unwrap_or(i64::MAX),
        ),
        None => (pg_sys::WL_LATCH_SET | pg_sys::WL_EXIT_ON_PM_DEATH, -1),
    };
    // SAFETY: waiting on this process's own latch, as PostgreSQL's own loops do
    // (WL_EXIT_ON_PM_DEATH: proc_exit(1) when the postmaster is gone).
    unsafe {
        pg_sys::WaitLatch(pg_sys::MyLatch, events as i32, ms as _, pg_sys::PG_WAIT_EXTENSION);
        pg_sys::ResetLatch(pg_sys::MyLatch);
    }
}

unsafe extern "C-unwind" fn on_sigusr1(signo: std::ffi::c_int) {
    // SAFETY: PostgreSQL's handler (saves errno, sets this process's latch).
    unsafe { pg_sys::procsignal_sigusr1_handler(signo) }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn flakeid_launcher_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    // The postmaster tells a launcher that its worker stopped with SIGUSR1, which a
    // worker without a database ignores unless it asks: PostgreSQL's own handler
    // sets the latch WaitForBackgroundWorkerShutdown() waits on.
    // SAFETY: installing PostgreSQL's handler, as its own processes do.
    unsafe { pg_sys::pqsignal(pg_sys::SIGUSR1 as i32, Some(on_sigusr1)) };
    // SAFETY: reading a setting PostgreSQL fixed at start.
    let slots = unsafe { pg_sys::max_replication_slots };
    if slots < mark::ORIGINS {
        let failed = Startup::failed(&format!(
            "flakeid keeps its high-water mark, node owner and owner identity in {} replication origins, \
             which need max_replication_slots >= {} (it is {slots})",
            mark::ORIGINS,
            mark::ORIGINS
        ));
        report(&failed);
        *STARTUP.exclusive() = failed;
    }
    while STARTUP.share().verdict == Verdict::Checking && !shutting_down() {
        let checker = BackgroundWorkerBuilder::new("flakeid start-up check")
            .set_type("flakeid")
            .set_library("flakeid")
            .set_function("flakeid_check_main")
            .enable_spi_access()
            .set_restart_time(None)
            // SAFETY: this process's pid.
            .set_notify_pid(unsafe { pg_sys::MyProcPid })
            .load_dynamic();
        match checker {
            Ok(worker) => {
                if let Err(BackgroundWorkerStatus::PostmasterDied) = worker.wait_for_shutdown() {
                    // SAFETY: ends this process, as WL_EXIT_ON_PM_DEATH does.
                    unsafe { pg_sys::proc_exit(1) };
                }
            }
            Err(_) => warning!("flakeid: no free background worker slot for the start-up check (max_worker_processes)"),
        }
        if STARTUP.share().verdict == Verdict::Checking && !shutting_down() {
            wait(Some(RETRY));
        }
    }
    // With flakeid.lease, this process holds the server's lease from now on.
    if STARTUP.share().verdict == Verdict::Ready
        && let Some(lease) = settings::lease()
    {
        crate::lease::hold(lease);
    }
    while !shutting_down() {
        wait(None);
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn flakeid_check_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::empty());
    // template1 always exists; the connection lasts as long as the check (ms), and
    // a CREATE DATABASE copying it waits seconds for such sessions to leave.
    // SAFETY: a worker connecting once, as BackgroundWorker::connect_* do.
    unsafe {
        pg_sys::BackgroundWorkerInitializeConnectionByOid(
            pg_sys::Oid::from(pg_sys::Template1DbOid),
            pg_sys::InvalidOid,
            pg_sys::BGWORKER_BYPASS_ALLOWCONN,
        );
    }
    BackgroundWorker::transaction(mark::ensure_origins);
    let verdict = BackgroundWorker::transaction(check);
    report(&verdict);
    *STARTUP.exclusive() = verdict;
}

fn check() -> Startup {
    // SAFETY: the worker starts after recovery has ended.
    let timeline = unsafe { pg_sys::GetWALInsertionTimeLine() };
    if settings::lease().is_some() {
        // A leased node id is this server's by the store's word (another server's
        // live lease is never handed out), and the lease's fence covers every ID its
        // earlier holders issued: no owner record to compare, nothing to add.
        if settings::builder().is_err() {
            return Startup {
                verdict: Verdict::Settings,
                ..Startup::default()
            };
        }
        return match mark::read() {
            Ok(durable) => Startup {
                verdict: Verdict::Ready,
                start_mark_ms: durable.mark_ms,
                resume_after_ms: durable.mark_ms,
                timeline,
                ..Startup::default()
            },
            Err(report) => Startup::failed(&report.message),
        };
    }
    let node = match settings::node_id() {
        Ok(node) => node,
        Err(_) => {
            return Startup {
                verdict: Verdict::Settings,
                ..Startup::default()
            };
        }
    };
    let durable = match mark::read() {
        Ok(d) => d,
        Err(report) => return Startup::failed(&report.message),
    };
    let me = identity::this_server().fingerprint;
    let mut s = Startup {
        verdict: Verdict::Ready,
        start_mark_ms: durable.mark_ms,
        node,
        timeline,
        owner_node: durable.owner.map_or(0, |o| o.node),
        owner_timeline: durable.owner.map_or(0, |o| o.timeline),
        identity: me,
        owner_identity: durable.identity,
        ..Startup::default()
    };
    enum Act {
        /// This server owns the node id from now on: record it.
        Own,
        /// A restart of the owner whose record has no writer yet: add it.
        AddWriter,
        /// A restart of the owner.
        Restart,
        Refuse(Verdict),
    }
    let act = match durable.owner {
        None if timeline == 1 => Act::Own,
        None => Act::Refuse(Verdict::Unrecorded),
        Some(o) if o.node != node => Act::Own,
        Some(o) if o.timeline != timeline => Act::Refuse(Verdict::Promoted),
        Some(_) if durable.identity == 0 => Act::AddWriter,
        Some(_) if durable.identity != me => Act::Refuse(Verdict::Copied),
        Some(_) => Act::Restart,
    };
    let recorded = match act {
        Act::Own => mark::record_owner(Owner { timeline, node }, me),
        Act::AddWriter => mark::record_identity(me),
        Act::Restart => Ok(()),
        Act::Refuse(verdict) => {
            s.verdict = verdict;
            Ok(())
        }
    };
    if let Err(report) = recorded {
        return Startup::failed(&report.message);
    }
    if matches!(act, Act::Own) {
        s.owner_node = node;
        s.owner_timeline = timeline;
    }
    if !matches!(act, Act::Refuse(_)) {
        s.owner_identity = me;
    }
    // Only a restart of the server that wrote a mark resumes right after it: an
    // empty mark (a new cluster, or one made by pg_upgrade) is not known to cover
    // anything.
    let restart = matches!(act, Act::Restart | Act::AddWriter) && durable.mark_ms > 0;
    s.resume_after_ms = if restart {
        durable.mark_ms
    } else {
        resume_after_uncertain(durable.mark_ms)
    };
    s
}

fn report(s: &Startup) {
    match s.verdict {
        Verdict::Ready if settings::lease().is_some() => log!(
            "flakeid: the server may issue IDs on timeline {} once it holds a lease; high-water mark: {}",
            s.timeline,
            crate::convert::show_ms(s.start_mark_ms)
        ),
        Verdict::Ready => log!(
            "flakeid: node id {} may issue IDs on timeline {}; high-water mark: {}{}",
            s.node,
            s.timeline,
            crate::convert::show_ms(s.start_mark_ms),
            if s.resume_after_ms > s.start_mark_ms {
                format!(
                    "; IDs resume after {} (the mark may not cover every ID issued under the node id)",
                    crate::convert::show_ms(s.resume_after_ms)
                )
            } else {
                String::new()
            }
        ),
        Verdict::Promoted | Verdict::Unrecorded | Verdict::Copied => {
            warning!("{}", crate::verdict::refusal(s, crate::error::SqlFn::NEXT).message)
        }
        Verdict::Settings => {
            warning!("flakeid: the flakeid.* settings give no usable node id; flakeid_next() says why")
        }
        Verdict::Failed => warning!("flakeid: start-up check failed: {}", s.failure()),
        Verdict::Checking => {}
    }
}
