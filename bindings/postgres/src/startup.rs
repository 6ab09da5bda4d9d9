//! The start-up check: the state machine that decides, once the server accepts
//! writes (after start, crash recovery or a promotion), whether it may issue IDs;
//! its verdict ([`crate::shmem::STARTUP`]) and what calls do with it: wait for it,
//! refuse with it, or clear it on an operator's confirmation; and the background
//! workers that run it.
//!
//! The check creates flakeid's replication origins if they are missing (in a
//! transaction of its own), reads the durable high-water mark and the owner record,
//! and compares the owner with this server's node id, timeline and identity
//! ([`crate::identity`]):
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
//! resumes after [`resume_after_uncertain`].
//!
//! With `flakeid.lease` the node id is the store's to give: the check only reads
//! the mark, and the launcher then holds the server's lease ([`crate::lease`]).
//!
//! Two processes: a launcher (a static worker with no database, so it can stay
//! idle without holding one open, and is started again after a crash restart) runs
//! the check itself in a short-lived dynamic worker connected to template1 (the
//! origins' catalog needs a database to be opened from), retrying every few seconds
//! until one reports. The launcher holds the host guard ([`crate::host_guard`]) and,
//! with `flakeid.lease`, the lease. Every wait of these loops ends the process when
//! the postmaster dies: an orphan would keep the old shared memory attached, and
//! PostgreSQL refuses to start again while any process is attached to it.

use crate::convert::show_ms;
use crate::error::{Report, SqlFn};
use crate::identity::{self, Difference};
use crate::mark::{self, Owner};
use crate::shmem::{self, Resumed, STARTUP, Startup, Verdict, WORKER_WAIT, shutting_down, wait};
use crate::{host_guard, lease, settings, upgrade};
use flakeid_core::precise_now_ms;
use pgrx::bgworkers::{
    BackgroundWorker, BackgroundWorkerBuilder, BackgroundWorkerStatus, BgWorkerStartTime, SignalWakeFlags,
};
use pgrx::{PgSqlErrorCode, log, pg_guard, pg_sys, warning};
use std::time::{Duration, Instant};

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
///
/// After `pg_upgrade` the window is the largest either cluster recorded
/// ([`crate::upgrade`]), not this configuration's.
pub fn resume_after_uncertain(mark_ms: u64) -> u64 {
    let allowance = upgrade::configured_window().max(upgrade::pending().ok().flatten().unwrap_or(0));
    if allowance == 0 {
        return mark_ms;
    }
    mark_ms.max(precise_now_ms().saturating_add(allowance))
}

/// Why backends resume at `s.resume_after_ms` (`flakeid_status().resumed_because`).
pub fn resumed_because(s: &Startup) -> Option<String> {
    let window = s.window_ms;
    Some(match s.resumed {
        Resumed::Unknown => return None,
        Resumed::Restart => "a restart of the server that wrote the high-water mark: right after it".to_string(),
        Resumed::Uncertain if window == 0 => "the high-water mark may not cover every ID issued under the node id \
             (a new owner, a promotion or copy confirmed); nothing was borrowed ahead of the clock: after the mark"
            .to_string(),
        Resumed::Uncertain => format!(
            "the high-water mark may not cover every ID issued under the node id (a new owner, a promotion or copy \
             confirmed): after the mark and now + {window} ms (flakeid.max_borrow_ms)"
        ),
        Resumed::Upgrade => format!(
            "the first start after pg_upgrade (as its source or target): after the mark and now + {window} ms, \
             the largest borrow window either cluster recorded"
        ),
        Resumed::Lease => "a leased node id: after the mark (the lease's fence covers its earlier holders)".to_string(),
    })
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
            // After pg_upgrade: wait it out when it ends within the call's wait, so a
            // retrying script gets its first ID as soon as it can; else say how long.
            // Once the window has passed, the worker still writes the mark past it and
            // clears the upgrade's marker (a WAL-logged transaction) before it says
            // ready: a call that waited out the window waits for that too, for as long
            // as a call waits for a worker.
            Verdict::Checking if s.resumed == Resumed::Upgrade => {
                let left = upgrade_wait_left_ms(&s);
                let waited = started.elapsed().as_millis();
                if u128::from(left) + waited <= WORKER_WAIT.as_millis()
                    || (left == 0 && waited <= 2 * WORKER_WAIT.as_millis())
                {
                    shmem::pause();
                    continue;
                }
                Report::new(
                    PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!(
                        "{f}: this server took part in pg_upgrade and issues no ID for another {left} ms (before {}): \
                         the clusters recorded a borrow window of {} ms, more than this server may borrow ahead of its \
                         clock ({} ms: flakeid.overflow and flakeid.max_borrow_ms)",
                        show_ms(upgrade_ready_at(&s)),
                        s.window_ms,
                        upgrade::configured_window()
                    ),
                )
                .detail(
                    "The other cluster of the upgrade may have issued IDs that far ahead of the clock: no ID before \
                     the start + the larger window, less what this server may borrow.",
                )
                .hint(format!(
                    "retry in {left} ms; see flakeid_status() and docs/postgres.md, Copies, restores and upgrades"
                ))
                .refuse(f)
            }
            Verdict::Checking if started.elapsed() < WORKER_WAIT => shmem::pause(),
            Verdict::Checking => Report::new(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!(
                    "{f}: flakeid's start-up check has not reported in {} s",
                    WORKER_WAIT.as_secs()
                ),
            )
            .detail("Its background workers (\"flakeid start-up check launcher\" and \"flakeid start-up check\") read the high-water mark and check this server's node id after every start and promotion.")
            .hint("see the server log; the worker needs a free slot of max_worker_processes")
            .refuse(f),
            Verdict::Promoted | Verdict::Unrecorded | Verdict::Copied => refusal(&s, f).refuse(f),
            Verdict::Settings => match settings::builder().and_then(|b| b.build().map_err(settings::setting_report)) {
                Err(report) => report.refuse(f),
                // The worker saw settings this backend can use: not expected (both
                // have the postmaster's); say so rather than guess.
                Ok(_) => Report::new(
                    PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!("{f}: flakeid's start-up check found no usable node id in the flakeid.* settings"),
                )
                .hint("see the server log")
                .refuse(f),
            },
            Verdict::Failed => Report::new(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("{f}: flakeid's start-up check failed: {}", s.failure()),
            )
            .hint("fix the cause and restart the server")
            .refuse(f),
        }
    }
}

/// After `pg_upgrade`: when the server may issue (Unix ms): the resume point, less
/// what its configuration may borrow ahead of the clock.
pub fn upgrade_ready_at(s: &Startup) -> u64 {
    s.resume_after_ms.saturating_sub(upgrade::configured_window())
}

/// After `pg_upgrade`: how many ms are left before the server may issue.
pub fn upgrade_wait_left_ms(s: &Startup) -> u64 {
    upgrade_ready_at(s).saturating_sub(precise_now_ms())
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

/// Marks this server cleared to issue under `node` on the current timeline (a
/// superuser's confirmation after a promotion, a restore or a copy). Returns the
/// verdict before.
pub fn confirm(node: u64, f: SqlFn) -> (Startup, Startup) {
    // Let the worker report first, so its later report cannot undo this one.
    let started = Instant::now();
    while STARTUP.share().verdict == Verdict::Checking && started.elapsed() < WORKER_WAIT {
        shmem::pause();
    }
    // SAFETY: not in recovery (checked by the caller).
    let timeline = unsafe { crate::majors::insertion_timeline() };
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
        s.resumed = Resumed::Uncertain;
        s.window_ms = s.resume_after_ms.saturating_sub(precise_now_ms().max(s.start_mark_ms));
    }
    (before, *s)
}

fn check() -> Startup {
    // SAFETY: the worker starts after recovery has ended.
    let timeline = unsafe { crate::majors::insertion_timeline() };
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
                resumed: Resumed::Lease,
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
    let upgraded = match upgrade::pending() {
        Ok(window) => window,
        Err(message) => return Startup::failed(&message),
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
    // The window this server may borrow, recorded before its first ID (a later
    // pg_upgrade hands it to the other cluster).
    if !matches!(act, Act::Refuse(_))
        && let Err(message) = upgrade::record_window()
    {
        return Startup::failed(&message);
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
    let now = precise_now_ms();
    (s.resume_after_ms, s.resumed) = match upgraded {
        // After pg_upgrade (source or target) no record of this cluster covers what
        // the other issued: after now + the larger window of the two, whatever the
        // owner record says. flakeid_check_main waits out what this configuration
        // cannot borrow, moves the mark there and removes the marker.
        Some(window) => (
            durable
                .mark_ms
                .max(now.saturating_add(window.max(upgrade::configured_window()))),
            Resumed::Upgrade,
        ),
        None if restart => (durable.mark_ms, Resumed::Restart),
        None => (resume_after_uncertain(durable.mark_ms), Resumed::Uncertain),
    };
    if matches!(act, Act::Refuse(_)) {
        s.resumed = Resumed::Unknown;
    }
    s.window_ms = s.resume_after_ms.saturating_sub(now.max(durable.mark_ms));
    if s.resumed == Resumed::Upgrade {
        s.window_ms = upgraded.unwrap_or(0).max(upgrade::configured_window());
    }
    s
}

/// After `pg_upgrade`: waits until the clock is within this configuration's borrow
/// window of the resume point (a server that does not borrow as far as the other
/// cluster did waits the difference out), then moves the durable mark to the
/// resume point, so a restart before any ID still resumes after it, and removes
/// the marker. Outside any transaction while it waits.
fn resume_after_upgrade(s: &mut Startup) {
    let ready_at = upgrade_ready_at(s);
    if precise_now_ms() < ready_at {
        *STARTUP.exclusive() = Startup {
            verdict: Verdict::Checking,
            ..*s
        };
        log!(
            "flakeid: the first start after pg_upgrade: no ID before {} (now + {} ms, the largest borrow window \
             either cluster recorded)",
            show_ms(ready_at),
            s.window_ms
        );
    }
    while precise_now_ms() < ready_at {
        if shutting_down() {
            // SAFETY: ends this worker; the marker stays for the next start.
            unsafe { pg_sys::proc_exit(0) };
        }
        wait(Some(Duration::from_millis(
            ready_at.saturating_sub(precise_now_ms()).clamp(1, 1000),
        )));
    }
    let resume = s.resume_after_ms;
    let done = BackgroundWorker::transaction(|| mark::advance(|| Some(resume)).map(drop).map_err(|r| r.message));
    if let Err(message) = done.and_then(|()| upgrade::resolved()) {
        *s = Startup::failed(&message);
    }
}

fn report(s: &Startup) {
    match s.verdict {
        Verdict::Ready if settings::lease().is_some() => log!(
            "flakeid: the server may issue IDs on timeline {} once it holds a lease; high-water mark: {}",
            s.timeline,
            show_ms(s.start_mark_ms)
        ),
        Verdict::Ready => log!(
            "flakeid: node id {} may issue IDs on timeline {}; high-water mark: {}{}",
            s.node,
            s.timeline,
            show_ms(s.start_mark_ms),
            if s.resume_after_ms > s.start_mark_ms {
                format!(
                    "; IDs resume after {} ({})",
                    show_ms(s.resume_after_ms),
                    resumed_because(s).unwrap_or_default()
                )
            } else {
                String::new()
            }
        ),
        Verdict::Promoted | Verdict::Unrecorded | Verdict::Copied => {
            warning!("{}", refusal(s, SqlFn::NEXT).message)
        }
        Verdict::Settings => {
            warning!("flakeid: the flakeid.* settings give no usable node id; flakeid_next() says why")
        }
        Verdict::Failed => warning!("flakeid: start-up check failed: {}", s.failure()),
        Verdict::Checking => {}
    }
}

// ---------------------------------------------------------------------------------
// The processes

const RETRY: Duration = Duration::from_secs(5);

pub fn register() {
    // pg_upgrade starts both clusters in binary-upgrade mode: no IDs are issued
    // there, and the check would write origins into a cluster being rebuilt.
    // SAFETY: a flag the postmaster sets from its command line before preloading.
    if unsafe { pg_sys::IsBinaryUpgrade } {
        // Both clusters' next normal start is uncertain ([`crate::upgrade`]).
        if let Err(message) = upgrade::in_binary_upgrade() {
            pgrx::error!("flakeid: pg_upgrade: {message}");
        }
        return;
    }
    // SAFETY: hooks are installed while the postmaster loads the library.
    unsafe {
        PREVIOUS_SHMEM_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(shmem_startup);
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
    // sets the latch WaitForBackgroundWorkerShutdown() waits on (and a call refused
    // by the host guard asks for a retry with it).
    // SAFETY: installing PostgreSQL's handler, as its own processes do.
    unsafe { crate::majors::pqsignal(pg_sys::SIGUSR1 as i32, Some(on_sigusr1)) };
    // This process starts when the server can issue IDs, and holds the host guard
    // from then on.
    let mut guard = host_guard::Holder::start();
    // Refused here, before any call: PostgreSQL would otherwise refuse the mark's
    // first move of every call ("could not find free replication state slot").
    let (setting, limit) = crate::majors::origin_limit();
    if limit < mark::ORIGINS {
        let failed = Startup::failed(&format!(
            "flakeid keeps its two high-water marks, node owner and owner identity in {} replication origins, \
             which need {setting} >= {} (it is {limit}; set it in postgresql.conf and restart)",
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
        guard.attempt();
    }
    // With flakeid.lease, this process holds the server's lease from now on.
    if STARTUP.share().verdict == Verdict::Ready
        && let Some(lease) = settings::lease()
    {
        lease::hold(lease, STARTUP.share().resume_after_ms);
    }
    while !shutting_down() {
        guard.attempt();
        wait(guard.refused().then_some(host_guard::RETRY));
    }
}

/// The UUID mark and its file (crate::upgrade::UUID_FILE) brought level: the mark
/// moved up to the file (a `pg_upgrade`'s target, whose origins are new), the file
/// up to the mark.
fn carry_uuid_mark() {
    let file = match upgrade::recorded_uuid_mark() {
        Ok(ms) => ms,
        Err(message) => {
            warning!("flakeid: {message}");
            0
        }
    };
    let durable = BackgroundWorker::transaction(|| {
        if file > 0 {
            mark::advance_uuid(|| Some(file))?;
        }
        mark::read_uuid()
    });
    match durable {
        Ok(ms) => {
            if let Err(message) = upgrade::raise_uuid_mark(ms) {
                warning!("flakeid: {message}");
            }
        }
        Err(report) => warning!("flakeid: the UUID high-water mark was not carried: {}", report.message),
    }
}

static mut PREVIOUS_SHMEM_STARTUP: pg_sys::shmem_startup_hook_type = None;

/// Runs in the postmaster each time it makes shared memory (its start, and again
/// after a crash of a child, when its exit callbacks were run and cleared): the exit
/// callback below, registered to run before shared memory is detached (an
/// `on_proc_exit` callback runs after). Children drop it when they start
/// (on_exit_reset).
#[pg_guard]
unsafe extern "C-unwind" fn shmem_startup() {
    // SAFETY: PostgreSQL's hook chain, and its callback list, in the postmaster.
    unsafe {
        if let Some(previous) = PREVIOUS_SHMEM_STARTUP {
            pg_sys::ffi::pg_guard_ffi_boundary(|| previous());
        }
        if !pg_sys::IsUnderPostmaster {
            pg_sys::before_shmem_exit(Some(at_postmaster_exit), pg_sys::Datum::from(0));
        }
    }
}

/// At the postmaster's exit (every other process of the server gone), or its reset
/// after a child's crash: the UUID mark this start covered, into its file.
unsafe extern "C-unwind" fn at_postmaster_exit(_code: std::ffi::c_int, _arg: pg_sys::Datum) {
    let covered = shmem::UUID_COVERED.get().load(std::sync::atomic::Ordering::Acquire);
    if covered > 0
        && let Err(message) = upgrade::raise_uuid_mark(covered - 1)
    {
        eprintln!("flakeid: {message}");
    }
}

#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn flakeid_check_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::empty());
    // template1 always exists; the connection lasts as long as the check (ms), and
    // a CREATE DATABASE copying it waits seconds for such sessions to leave.
    // SAFETY: a worker connecting once, as BackgroundWorker::connect_* do.
    unsafe { crate::majors::connect_to_template1(pg_sys::BGWORKER_BYPASS_ALLOWCONN) };
    BackgroundWorker::transaction(mark::ensure_origins);
    // Before any ID of this start: the 64-bit mark still covers only what was issued
    // before it (UUIDs wait for the verdict on a primary, crate::uuid).
    if let Err(report) = BackgroundWorker::transaction(|| mark::read().and_then(|d| mark::init_uuid(d.mark_ms))) {
        warning!("flakeid: the UUID high-water mark was not set: {}", report.message);
    }
    carry_uuid_mark();
    shmem::UUID_MARK_READY
        .get()
        .store(1, std::sync::atomic::Ordering::Release);
    let mut verdict = BackgroundWorker::transaction(check);
    if verdict.verdict == Verdict::Ready && verdict.resumed == Resumed::Upgrade {
        resume_after_upgrade(&mut verdict);
    }
    report(&verdict);
    *STARTUP.exclusive() = verdict;
}
