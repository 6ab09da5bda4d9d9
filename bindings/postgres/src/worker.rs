//! The start-up check's processes ([`crate::startup`] is what they decide).
//!
//! Two processes: a launcher (a static worker with no database, so it can stay
//! idle without holding one open, and is started again after a crash restart) runs
//! the check itself in a short-lived dynamic worker connected to template1 (the
//! origins' catalog needs a database to be opened from), retrying every few seconds
//! until one reports. Every wait of these loops ends the process when the postmaster
//! dies: an orphan would keep the old shared memory attached, and PostgreSQL refuses
//! to start again while any process is attached to it.

use crate::shmem::{STARTUP, Startup, Verdict, shutting_down, wait};
use crate::{lease, mark, settings, startup};
use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BackgroundWorkerStatus, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::{pg_guard, pg_sys, warning};
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
        startup::report(&failed);
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
        lease::hold(lease, STARTUP.share().resume_after_ms);
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
    let verdict = BackgroundWorker::transaction(startup::check);
    startup::report(&verdict);
    *STARTUP.exclusive() = verdict;
}
