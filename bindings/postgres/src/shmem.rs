//! Everything flakeid keeps in shared memory, and how its processes wait for one
//! another. The structures are plain data: what they mean and who writes them is
//! in the modules that use them ([`crate::server`], [`crate::startup`],
//! [`crate::lease`]). Allocated once by the postmaster (`shared_preload_libraries`);
//! a crash restart starts them over.

use flakeid_core::lease::SharedGate;
use pgrx::{PGRXSharedMemory, PgAtomic, PgLwLock, pg_shmem_init, pg_sys};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The generator's whole state: the next free `(tick, sequence)` slot.
pub static COUNTER: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_counter") };
/// The 128-bit generator's whole state: the next free `(ms, counter)` pair
/// (crate::uuid).
pub static UUID_COUNTER: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_uuid_counter") };
/// Ticks below this are covered by the durable high-water mark (0: none yet).
pub static COVERED: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_covered") };
/// UUIDs of a Unix ms below this are covered by the durable mark (0: none yet).
pub static UUID_COVERED: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_uuid_covered") };
/// A UUID returned on a primary is of this Unix ms or later: 1 + the durable mark
/// as it was when this server first issued as a primary (0: not yet; a standby
/// never sets it, so a promoted one reads the mark it replayed) (crate::uuid).
pub static UUID_FLOOR: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_uuid_floor") };
/// The Unix ms until which a `flakeid_resume_after(id)` keeps the server's 64-bit
/// IDs ahead of what its clock allows (crate::restore): a call that finds the clock
/// behind before then waits for it instead of failing (0: none).
pub static REPAIR_READY_AT: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_repair_ready_at") };
/// The last refusal of each family, named (`flakeid_status().last_refusal`), and the
/// last duplicate key applied from a peer on this server's node id (`peer_node`); held briefly.
pub static LAST_REFUSAL: PgLwLock<LastRefusals> = unsafe { PgLwLock::new(c"flakeid_last_refusal") };
/// 1 once this start's check has set the UUID mark if it was not (crate::mark::init_uuid).
pub static UUID_MARK_READY: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_uuid_mark_ready") };
/// The start-up check's findings (its lock is only ever held briefly).
pub static STARTUP: PgLwLock<Startup> = unsafe { PgLwLock::new(c"flakeid_startup") };
/// The lease's window as every backend checks it ([`lease_gate`]).
static LEASE_GATE: PgAtomic<LeaseGate> = unsafe { PgAtomic::new(c"flakeid_lease_window") };
/// Where the lease stands, as its holder last saw it (held briefly).
pub static LEASE_STATUS: PgLwLock<LeaseStatus> = unsafe { PgLwLock::new(c"flakeid_lease_status") };
/// Where the server's host guard stands ([`crate::host_guard`]; held briefly).
pub static GUARD: PgLwLock<GuardStatus> = unsafe { PgLwLock::new(c"flakeid_host_guard") };
/// The server's `flakeid_stats()` totals.
pub static TOTALS: PgAtomic<Totals> = unsafe { PgAtomic::new(c"flakeid_stats") };

/// Set in the postmaster when loaded by `shared_preload_libraries`; backends
/// inherit it through fork(). False in a backend that loaded the library itself.
static PRELOADED: AtomicBool = AtomicBool::new(false);

#[allow(unexpected_cfgs)] // pg_shmem_init! tests features for other PostgreSQL versions
pub fn init() {
    pg_shmem_init!(COUNTER);
    pg_shmem_init!(COVERED);
    pg_shmem_init!(UUID_COUNTER);
    pg_shmem_init!(UUID_COVERED);
    pg_shmem_init!(UUID_FLOOR);
    pg_shmem_init!(UUID_MARK_READY);
    pg_shmem_init!(STARTUP);
    pg_shmem_init!(LEASE_GATE);
    pg_shmem_init!(LEASE_STATUS);
    pg_shmem_init!(GUARD);
    pg_shmem_init!(TOTALS);
    pg_shmem_init!(REPAIR_READY_AT);
    pg_shmem_init!(LAST_REFUSAL);
    PRELOADED.store(true, Ordering::Relaxed);
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

/// Which family a refused call belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `flakeid_next()` and the other 64-bit functions.
    Bits64,
    /// `flakeid_uuidv7()`, `flakeid_ulid()`, `flakeid_typeid()`.
    Bits128,
}

/// Counts a call refused for the server's state (see [`Totals::refusals`] and
/// [`Totals::uuid_refusals`]) and keeps its message as its family's last.
pub fn count_refusal(family: Family, message: &str) {
    if preloaded() {
        let t = TOTALS.get();
        let (count, last) = match family {
            Family::Bits64 => (&t.refusals, 0),
            Family::Bits128 => (&t.uuid_refusals, 1),
        };
        count.fetch_add(1, Ordering::Relaxed);
        let mut l = LAST_REFUSAL.exclusive();
        let r = &mut l.0[last];
        r.at_ms = flakeid_core::precise_now_ms();
        r.len = store_text(&mut r.text, message);
    }
}

/// Keeps `message` as the last duplicate key met while applying rows from a
/// replication peer on an ID with this server's node id
/// (`flakeid_status().peer_node`).
pub fn note_peer_node(message: &str) {
    if preloaded() {
        let mut l = LAST_REFUSAL.exclusive();
        let r = &mut l.0[2];
        r.at_ms = flakeid_core::precise_now_ms();
        r.len = store_text(&mut r.text, message);
    }
}

/// How long a call waits for a background worker's first report (the start-up
/// check's verdict, the server's first lease) before it gives up.
pub const WORKER_WAIT: Duration = Duration::from_secs(10);

/// Waits on this process's latch for `timeout` (or until it is set); exits the
/// process if the postmaster has died (pgrx's `wait_latch` only reports that, and a
/// loop that ignores the answer spins for ever). A backend checks for interrupts
/// afterwards.
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

/// A backend's 10 ms wait for a background worker, interruptible.
pub fn pause() {
    wait(Some(Duration::from_millis(10)));
    pgrx::check_for_interrupts!();
}

/// Whether the postmaster asked this background worker to exit (set by pgrx's
/// SIGTERM handler, never reset: a wait that consumed the latch must not hide it).
pub fn shutting_down() -> bool {
    // SAFETY: a sig_atomic_t flag set by the signal handler.
    unsafe { std::ptr::read_volatile(&raw const pg_sys::ShutdownRequestPending) != 0 }
}

/// Copies `text` into `buf` (cut at a character boundary); its length.
fn store_text(buf: &mut [u8], text: &str) -> u16 {
    let mut n = text.len().min(buf.len());
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    n as u16
}

fn stored_text(buf: &[u8], len: u16) -> &str {
    std::str::from_utf8(&buf[..usize::from(len)]).unwrap_or("")
}

// ---------------------------------------------------------------------------------
// The start-up check ([`crate::startup`])

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

/// Why backends resume where they do (`flakeid_status().resumed_because`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Resumed {
    /// Not decided yet, or refused.
    #[default]
    Unknown,
    /// A restart of the server that wrote the mark: right after it.
    Restart,
    /// The mark may not cover every ID issued under the node id (a new cluster, a
    /// renumbering, a promotion or copy confirmed): after now + the window too.
    Uncertain,
    /// The first start after `pg_upgrade` (as its source or target): after now + the
    /// largest window either cluster recorded (`window_ms`).
    Upgrade,
    /// With `flakeid.lease`: the mark; the lease's fence covers the rest.
    Lease,
}

/// The start-up check's findings.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Startup {
    pub verdict: Verdict,
    /// The durable high-water mark (Unix ms) when the check was made.
    pub start_mark_ms: u64,
    /// Backends resume after this (Unix ms): the mark, or when the mark is not known
    /// to cover every ID issued under the node id, later
    /// ([`crate::startup::resume_after_uncertain`]).
    pub resume_after_ms: u64,
    pub node: u64,
    pub timeline: u32,
    /// The recorded owner of the node id (`owner_timeline` 0: none).
    pub owner_node: u64,
    pub owner_timeline: u32,
    /// This server's fingerprint and the owner record's writer's ([`crate::identity`]).
    pub identity: u64,
    pub owner_identity: u64,
    pub resumed: Resumed,
    /// The borrow window (ms) `resume_after_ms` allowed for past the clock.
    pub window_ms: u64,
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
            resumed: Resumed::Unknown,
            window_ms: 0,
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
        s.failure_len = store_text(&mut s.failure, message);
        s
    }
    pub fn failure(&self) -> &str {
        stored_text(&self.failure, self.failure_len)
    }
}

// SAFETY: plain old data, no pointers.
unsafe impl PGRXSharedMemory for Startup {}

// ---------------------------------------------------------------------------------
// The lease ([`crate::lease`])

/// The engine's lease gate across processes, published by the lease's holder and
/// checked by every backend.
#[derive(Debug, Default)]
#[repr(transparent)]
struct LeaseGate(SharedGate);

// SAFETY: SharedGate is atomics only, no pointers, and closed when zeroed.
unsafe impl PGRXSharedMemory for LeaseGate {}

pub fn lease_gate() -> &'static SharedGate {
    &LEASE_GATE.get().0
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum LeaseState {
    /// No lease configured, or its holder has not started (a standby).
    #[default]
    None,
    Acquiring,
    Held,
    /// Renewals fail; IDs stop when the window ends.
    Unreachable,
    /// Taken over, or the store forgot it: a new lease is being acquired.
    Lost,
    /// Acquiring failed (`message` says why); retried.
    Failed,
}

#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct LeaseStatus {
    pub state: LeaseState,
    pub node: u64,
    /// Leases acquired since the server started.
    pub acquired: u64,
    /// The wall-clock end of the window (Unix ms; 0: closed).
    pub wall_end_ms: u64,
    /// How long the last acquisition waited out the lock delay.
    pub lock_delay_ms: u64,
    message_len: u16,
    message: [u8; 480],
}

impl Default for LeaseStatus {
    fn default() -> Self {
        LeaseStatus {
            state: LeaseState::None,
            node: 0,
            acquired: 0,
            wall_end_ms: 0,
            lock_delay_ms: 0,
            message_len: 0,
            message: [0; 480],
        }
    }
}

// SAFETY: plain old data, no pointers.
unsafe impl PGRXSharedMemory for LeaseStatus {}

impl LeaseStatus {
    pub fn set_message(&mut self, message: &str) {
        self.message_len = store_text(&mut self.message, message);
    }
    /// The last error (never a password: the engine's lease errors are redacted).
    pub fn message(&self) -> &str {
        stored_text(&self.message, self.message_len)
    }
}

// ---------------------------------------------------------------------------------
// The host guard ([`crate::host_guard`])

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum GuardState {
    /// Not tried yet: the server is a standby, or its launcher has not started.
    #[default]
    Pending,
    Held,
    /// `FLAKEID_HOST_GUARD=off`, a lease, or settings that give no node id (the
    /// calls report those themselves): nothing to hold.
    NotNeeded,
    /// Another process on this host holds it (`message` says which); retried.
    Refused,
}

#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct GuardStatus {
    pub state: GuardState,
    /// The process that takes and holds it (the start-up check's launcher; 0: none yet).
    pub holder_pid: i32,
    /// Attempts made so far: a call that asked for one waits for this to move.
    pub attempts: u64,
    message_len: u16,
    message: [u8; 480],
}

impl Default for GuardStatus {
    fn default() -> Self {
        GuardStatus {
            state: GuardState::Pending,
            holder_pid: 0,
            attempts: 0,
            message_len: 0,
            message: [0; 480],
        }
    }
}

// SAFETY: plain old data, no pointers.
unsafe impl PGRXSharedMemory for GuardStatus {}

impl GuardStatus {
    pub fn set_message(&mut self, message: &str) {
        self.message_len = store_text(&mut self.message, message);
    }
    /// Why it was refused (the core's message, naming the holder).
    pub fn message(&self) -> &str {
        stored_text(&self.message, self.message_len)
    }
}

// ---------------------------------------------------------------------------------
// The statistics ([`crate::server`])

/// The server's totals, since it started.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Totals {
    pub ids_issued: AtomicU64,
    pub tick_waits: AtomicU64,
    pub tick_wait_us: AtomicU64,
    pub clock_rollbacks: AtomicU64,
    pub max_rollback_ms: AtomicU64,
    /// Calls refused for the server's state (start-up check, host guard, lease,
    /// clock, settings): `flakeid_stats().refusals`.
    pub refusals: AtomicU64,
    /// UUID calls refused (flakeid's origins missing, the engine's own errors):
    /// `flakeid_stats().uuid_refusals`.
    pub uuid_refusals: AtomicU64,
    /// Calls that found the clock behind a `flakeid_resume_after(id)` and waited for
    /// it (crate::restore), and their total time in µs.
    pub repair_waits: AtomicU64,
    pub repair_wait_us: AtomicU64,
}

/// A family's last refusal: when, and its message.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct LastRefusal {
    pub at_ms: u64,
    len: u16,
    text: [u8; 480],
}

impl Default for LastRefusal {
    fn default() -> Self {
        LastRefusal {
            at_ms: 0,
            len: 0,
            text: [0; 480],
        }
    }
}

impl LastRefusal {
    pub fn message(&self) -> &str {
        stored_text(&self.text, self.len)
    }
}

/// The 64-bit family's last refusal, then the 128-bit family's, then the last
/// duplicate key a replication apply worker met on an ID of this server's node id
/// ([`note_peer_node`]).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct LastRefusals(pub [LastRefusal; 3]);

// SAFETY: plain old data, no pointers.
unsafe impl PGRXSharedMemory for LastRefusals {}

// SAFETY: atomics only, no pointers.
unsafe impl PGRXSharedMemory for Totals {}
