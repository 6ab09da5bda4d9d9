//! The start-up check: a background worker that runs once the server accepts writes
//! (after start, crash recovery or a promotion) and decides whether it may issue IDs.
//!
//! It creates flakeid's replication origins if they are missing (in a transaction of
//! its own), reads the durable high-water mark and the owner record, and compares
//! the owner with this server's node id and timeline:
//! - no owner yet on timeline 1 (a new cluster): this server owns its node id;
//! - another node id than the recorded one (renumbered): it owns the new one;
//! - the same node id and timeline (a restart): cleared;
//! - the same node id on a later timeline (a promoted standby, a restored backup):
//!   refused until the node id is changed or `flakeid_confirm_node()` is run;
//!   likewise with no owner record on a later timeline.
//!
//! With `flakeid.lease` the node id is the store's to give: the check only reads
//! the mark, and the launcher then holds the server's lease ([`crate::lease`]).
//!
//! Two processes: a launcher (a static worker with no database, so it can stay
//! idle without holding one open, and is started again after a crash restart) runs
//! the check itself in a short-lived dynamic worker connected to template1 (the
//! origins' catalog needs a database to be opened from), retrying every few seconds
//! until one reports.

use crate::mark::{self, Owner};
use crate::settings;
use crate::verdict::{STARTUP, Startup, Verdict};
use pgrx::bgworkers::{BackgroundWorker, BackgroundWorkerBuilder, BgWorkerStartTime, SignalWakeFlags};
use pgrx::{log, pg_guard, pg_sys, warning};
use std::time::Duration;

const RETRY: Duration = Duration::from_secs(5);

pub fn register() {
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
    if slots < 2 {
        let failed = Startup::failed(&format!(
            "flakeid keeps its high-water mark in two replication origins, which need \
             max_replication_slots >= 2 (it is {slots})"
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
                let _ = worker.wait_for_shutdown();
            }
            Err(_) => warning!("flakeid: no free background worker slot for the start-up check (max_worker_processes)"),
        }
        if STARTUP.share().verdict == Verdict::Checking && !shutting_down() {
            let _ = BackgroundWorker::wait_latch(Some(RETRY));
        }
    }
    // With flakeid.lease, this process holds the server's lease from now on.
    if STARTUP.share().verdict == Verdict::Ready
        && let Some(lease) = settings::lease()
    {
        crate::lease::hold(lease);
    }
    while !shutting_down() {
        let _ = BackgroundWorker::wait_latch(None);
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
        // live lease is never handed out): no owner record to compare.
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
    let owned = Owner { timeline, node };
    let mut s = Startup {
        verdict: Verdict::Ready,
        start_mark_ms: durable.mark_ms,
        node,
        timeline,
        owner_node: durable.owner.map_or(0, |o| o.node),
        owner_timeline: durable.owner.map_or(0, |o| o.timeline),
        ..Startup::default()
    };
    let record = match durable.owner {
        None if timeline == 1 => true,
        None => {
            s.verdict = Verdict::Unrecorded;
            false
        }
        Some(o) if o.node != node => true,
        Some(o) if o.timeline == timeline => false,
        Some(_) => {
            s.verdict = Verdict::Promoted;
            false
        }
    };
    if record {
        if let Err(report) = mark::record_owner(owned) {
            return Startup::failed(&report.message);
        }
        s.owner_node = node;
        s.owner_timeline = timeline;
    }
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
            "flakeid: node id {} may issue IDs on timeline {}; high-water mark: {}",
            s.node,
            s.timeline,
            crate::convert::show_ms(s.start_mark_ms)
        ),
        Verdict::Promoted | Verdict::Unrecorded => {
            warning!("{}", crate::verdict::refusal(s, crate::error::SqlFn::NEXT).message)
        }
        Verdict::Settings => {
            warning!("flakeid: the flakeid.* settings give no usable node id; flakeid_next() says why")
        }
        Verdict::Failed => warning!("flakeid: start-up check failed: {}", s.failure()),
        Verdict::Checking => {}
    }
}
