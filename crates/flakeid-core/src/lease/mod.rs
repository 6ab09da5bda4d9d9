//! Node-id leases: no two live generators share a node id.
//!
//! A [`LeaseStore`] hands out node ids (file locks, Redis keys, PostgreSQL rows). A
//! generator built with [`GeneratorBuilder::lease_url`](crate::GeneratorBuilder::lease_url)
//! acquires the lowest free id of its layout's node range, renews it from a
//! heartbeat thread, releases it when dropped, and refuses IDs
//! ([`Error::Lease`]) as soon as its lease *may* have expired.
//!
//! Two independent guards (see `docs/leases.md` for the timing argument):
//!
//! * **Deadline.** Every renewal starts a validity window `ttl − margin` measured
//!   from the moment the request was *sent*, on a local monotonic clock. The store
//!   starts its own `ttl` when it *receives* the request, so the holder's window
//!   ends `margin` before the store can give the id to anyone else. The hot path
//!   compares the clock reading it already made with the published wall-clock end
//!   of the window, and one reading of the kernel's realtime clock (the vDSO's
//!   `time`, a memory read) with the window on that clock, which is derived from
//!   the window's end on `CLOCK_BOOTTIME` and derived again whenever the kernel
//!   reports that the time was set: no system call, no lock (the gate, `gate.rs`;
//!   the argument, `docs/design.md`, "The lease gate").
//! * **Fence.** Each renewal also stores, with the lease, the latest timestamp the
//!   holder may issue until its window ends (wall end of the window + borrow
//!   allowance). A new holder starts its IDs after the stored value, so even a
//!   holder that was paused between its check and its ID cannot collide with its
//!   successor. A clean release stores the exact last timestamp instead.
//! * **Lock delay** (for stores that lose data). A holder that finds no record of an
//!   id's previous holder cannot tell "never used" from "forgotten" (a Redis
//!   restarted empty, a truncated table, a wiped directory). Each namespace keeps an
//!   *incarnation marker* next to its fences, lost together with them; an acquirer
//!   that finds it younger than the lock delay (`ttl + margin + borrow window`) —
//!   the namespace's first use, or the first use after its data was lost — waits
//!   until it is that old before its first ID, renewing meanwhile. By then every
//!   holder from before the loss has stopped: its renewals fail on the forgotten
//!   store, and its window ends `ttl − margin` after its last successful renewal.

#[cfg(any(unix, windows))]
mod file;
mod gate;
mod mono;
mod scheme;
mod shared;
#[cfg(any(unix, windows))]
mod state;
mod steps;
mod url;

use crate::clock::{Clock, precise_now_ms};
use crate::error::{Error, Result};
use crate::layout::Layout;
use gate::Ends;
pub(crate) use gate::Gate;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[cfg(any(unix, windows))]
pub use file::FileStore;

/// How file leases and state files open their files: readable by others (0644) on
/// unix; on Windows shared for reading and writing but not for deletion, so that no
/// one deletes, renames or replaces a file while a holder has it open.
#[cfg(any(unix, windows))]
fn file_options() -> std::fs::OpenOptions {
    let mut o = std::fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o644);
    #[cfg(windows)]
    {
        const FILE_SHARE_READ: u32 = 1;
        const FILE_SHARE_WRITE: u32 = 2;
        std::os::windows::fs::OpenOptionsExt::share_mode(&mut o, FILE_SHARE_READ | FILE_SHARE_WRITE);
    }
    o
}
pub use scheme::{LeaseSchemes, LeaseUrlParser, register_lease_schemes};
pub use shared::{AfterRefusal, SharedGate, SharedGateCheck};
pub use url::{DATABASE_LEASE, check_namespace, is_secret_param, redact_error, redact_passwords};

// The TTL's default and range are options (crate::options), known without leases
// too: `lease_ttl_ms` without `lease` is refused by every build.
pub use crate::options::{DEFAULT_LEASE_TTL_MS, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS};
/// Namespace used when the URL gives none.
pub const DEFAULT_NAMESPACE: &str = "flakeid";
/// Longest time spent connecting to a store and acquiring an id.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest time spent releasing a lease on drop.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(2);

/// The timing of one lease, derived from its TTL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTiming {
    /// How long the store keeps the lease after a renewal reaches it.
    pub ttl_ms: u64,
    /// How often the holder renews (`ttl / 3`): two renewals may fail in a row
    /// before the holder stops.
    pub renew_ms: u64,
    /// How much earlier than the store the holder gives up (`max(ttl / 5, 20)`):
    /// covers clock-rate drift between holder and store, the coarse clock's tick
    /// and the heartbeat's wake-up latency.
    pub margin_ms: u64,
}

impl LeaseTiming {
    /// The timing for a TTL a user asked for (`lease_ttl_ms`), checked against
    /// `MIN_LEASE_TTL_MS..=MAX_LEASE_TTL_MS`.
    pub fn for_ttl(ttl_ms: u64) -> Result<LeaseTiming> {
        if !(MIN_LEASE_TTL_MS..=MAX_LEASE_TTL_MS).contains(&ttl_ms) {
            return Err(Error::out_of_range(
                "lease_ttl_ms",
                MIN_LEASE_TTL_MS,
                MAX_LEASE_TTL_MS,
                ttl_ms,
            ));
        }
        Ok(Self::derive(ttl_ms))
    }

    /// The timing for a TTL a store chose ([`LeaseStore::effective_ttl_ms`]: the
    /// file store, whose locks never expire, writes its fence more often).
    fn derive(ttl_ms: u64) -> LeaseTiming {
        LeaseTiming {
            ttl_ms,
            renew_ms: ttl_ms / 3,
            margin_ms: (ttl_ms / 5).max(20),
        }
    }

    /// How long the holder may issue IDs after sending a renewal that succeeded.
    pub fn valid_ms(&self) -> u64 {
        self.ttl_ms - self.margin_ms
    }
}

/// What [`LeaseStore::acquire`] obtained. Built with [`Acquired::new`] (and
/// [`Acquired::with_store_now_ms`] where the store has a clock): the struct is
/// `#[non_exhaustive]`, so a store of your own keeps compiling when a field is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Acquired {
    /// The node id now held.
    pub node: u64,
    /// The last timestamp (Unix ms) recorded under this node id by earlier holders
    /// (0 if none): IDs up to it may exist.
    pub last_ms: u64,
    /// How old (ms, by the store's clock where it has one) the namespace's
    /// incarnation marker was when this acquire read it, in the same atomic step.
    /// The store writes the marker when it finds none — the namespace's first use,
    /// or the store lost its data — and keeps it where it keeps the fences, so that
    /// losing the fences loses the marker too. A young marker means `last_ms` may
    /// be forgotten: the generator waits out the lock delay (see the module docs).
    pub incarnation_age_ms: u64,
    /// The store's own clock (Unix ms) when it took the id, where the store has
    /// one to read in the same step (Redis `TIME`, PostgreSQL `clock_timestamp()`;
    /// `None` for etcd, whose API shows no clock, and for files, which share this
    /// host's). An acquirer whose clock is behind it by more than the margin
    /// refuses to start with [`Error::Lease`] (`docs/leases.md`, point 6).
    pub store_now_ms: Option<u64>,
}

impl Acquired {
    /// What a store took: `node`, the last timestamp recorded under it (`last_ms`,
    /// 0 if none) and the age of the namespace's incarnation marker. No store clock.
    pub fn new(node: u64, last_ms: u64, incarnation_age_ms: u64) -> Acquired {
        Acquired {
            node,
            last_ms,
            incarnation_age_ms,
            store_now_ms: None,
        }
    }

    /// The store's clock (Unix ms) read in the same step as the id was taken.
    pub fn with_store_now_ms(mut self, store_now_ms: u64) -> Acquired {
        self.store_now_ms = Some(store_now_ms);
        self
    }
}

/// Checks the lease design's assumption that this host's clock is not behind the
/// store's by more than the margin (`docs/leases.md`, point 6). Fences and the lock
/// delay put a new holder's IDs after an old holder's only if their clocks agree
/// within the margin: a store that lost its data keeps no fence for an id nobody
/// took since, and a holder whose clock is behind would stamp times that id's old
/// holder used (the fault suite made duplicates so: `docs/faults.md`, bug 3).
/// `store_now_ms` was read before `local_ms`, so a clock in step is never behind
/// it; a clock ahead is harmless (its IDs come later). `Err` is the message.
fn check_clock_against_store(local_ms: u64, store_now_ms: u64, margin_ms: u64) -> std::result::Result<(), String> {
    if local_ms.saturating_add(margin_ms) >= store_now_ms {
        return Ok(());
    }
    Err(format!(
        "this host's clock reads {local_ms} ms (Unix) and the store's {store_now_ms} ms: {} ms behind, more than the \
         {margin_ms} ms margin that leases allow between clocks (with a clock that far behind, IDs could repeat ones \
         issued before the store lost its data). Fix this host's clock (NTP)",
        store_now_ms - local_ms
    ))
}

/// A place that hands out node ids. Implementations must make `acquire`, `renew`
/// and `release` atomic on the store, and give up on I/O at `until`.
pub trait LeaseStore: Send + fmt::Debug {
    /// The store and namespace, for messages (never a password).
    fn describe(&self) -> String;

    /// The namespace this store hands ids out in.
    fn namespace(&self) -> &str;

    /// The TTL to use when the caller asked for `requested`. File locks never expire
    /// (the OS releases them), so the file store shortens the TTL: there it only
    /// sets how often the fence timestamp is written.
    fn effective_ttl_ms(&self, requested: u64) -> u64 {
        requested
    }

    /// Whether nobody else can be given the id while this process lives, however
    /// long its renewals take (file locks: the OS releases them at exit only). Then
    /// the hot path checks only the wall-clock end of the window, which is what the
    /// fence needs; a store whose leases expire (the default) also has every ID
    /// check the kernel's realtime clock, so that a process resumed after a stop or
    /// a host suspend longer than its window issues nothing before its heartbeat
    /// has renewed.
    fn held_while_alive(&self) -> bool {
        false
    }

    /// Takes a free id in `0..=max_node` for `holder`, for `ttl_ms`, and in the
    /// same atomic step reads (or, when missing, writes) the namespace's
    /// incarnation marker ([`Acquired::incarnation_age_ms`]); a store with a clock
    /// of its own also returns its reading ([`Acquired::with_store_now_ms`]), which
    /// the acquirer checks its clock against. `Ok(None)`: every id is held by
    /// someone else.
    fn acquire(&mut self, max_node: u64, holder: &str, ttl_ms: u64, until: Instant) -> Result<Option<Acquired>>;

    /// Extends `holder`'s lease on `node` by `ttl_ms` and records `fence_ms` (kept
    /// if larger than the stored value). `Ok(false)`: the lease belongs to someone
    /// else now, or the store has no record of it (it lost its data): the holder
    /// stops at once. A lease that expired but was not taken by anyone is renewed.
    fn renew(&mut self, node: u64, holder: &str, ttl_ms: u64, fence_ms: u64, until: Instant) -> Result<bool>;

    /// Gives `node` up, recording `last_ms` as the last timestamp issued under it.
    /// Does nothing if `holder` no longer holds it.
    fn release(&mut self, node: u64, holder: &str, last_ms: u64, until: Instant) -> Result<()>;
}

type StoreFactory = Arc<dyn Fn() -> Result<Box<dyn LeaseStore>> + Send + Sync>;

/// Where leases come from: a parsed URL or a custom store.
///
/// URLs (each with an optional `?namespace=NAME`, default `flakeid`, that
/// separates independent ID spaces on one store; `docs/leases.md` has them all):
///
/// * `file:///dir` — parsed by this crate;
/// * `redis://[user:password@]host:port/db`, TLS as
///   `rediss://…?ca=PATH[&cert=PATH&key=PATH]`
/// * `postgres://user:password@host:port/dbname[?table=NAME]` with libpq's
///   `sslmode=disable|prefer|require|verify-ca|verify-full`, `sslrootcert`,
///   `sslcert`, `sslkey`
/// * `etcd://[user:password@]host:2379[,host2:2379]/`, TLS as
///   `etcds://…?ca=PATH[&cert=PATH&key=PATH]`
///
/// The network schemes come from the crate `flakeid-lease-net`, which registers
/// them in this process ([`register_lease_schemes`]) when its `install()` runs;
/// without it they are a `Config` error that says so.
#[derive(Clone)]
pub struct LeaseSpec {
    kind: SpecKind,
}

#[derive(Clone)]
enum SpecKind {
    #[cfg(any(unix, windows))]
    File(url::FileUrl),
    /// `state`: a fixed node id's high-water mark in a file (`state.rs`).
    #[cfg(any(unix, windows))]
    State { path: String, node: u64 },
    Custom {
        factory: StoreFactory,
        /// What `Debug` shows (a URL without its password), if given.
        name: Option<String>,
    },
}

impl fmt::Debug for LeaseSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            #[cfg(any(unix, windows))]
            SpecKind::File(u) => write!(f, "LeaseSpec({})", u.redacted()),
            #[cfg(any(unix, windows))]
            SpecKind::State { path, .. } => write!(f, "LeaseSpec(state {path})"),
            SpecKind::Custom { name: Some(n), .. } => write!(f, "LeaseSpec({n})"),
            SpecKind::Custom { name: None, .. } => f.write_str("LeaseSpec(custom)"),
        }
    }
}

impl LeaseSpec {
    /// Parses and checks a lease URL (without connecting): `file://` here, any
    /// other scheme by the parser registered for it.
    pub fn parse(url: &str) -> Result<LeaseSpec> {
        Self::parse_unchecked(url).map_err(redact_error)
    }

    fn parse_unchecked(url: &str) -> Result<LeaseSpec> {
        let scheme = url::scheme_of(url)?;
        if scheme == "file" {
            #[cfg(any(unix, windows))]
            return Ok(LeaseSpec {
                kind: SpecKind::File(url::FileUrl::parse(url)?),
            });
            #[cfg(not(any(unix, windows)))]
            return Err(Error::config(
                "lease",
                "file:// leases need files and file locks (unix or Windows)",
            ));
        }
        match scheme::parser(&scheme) {
            Some(parse) => parse(url),
            None => Err(scheme::unavailable(&scheme)),
        }
    }

    /// A store of your own, created once per generator.
    pub fn custom(factory: impl Fn() -> Result<Box<dyn LeaseStore>> + Send + Sync + 'static) -> LeaseSpec {
        LeaseSpec {
            kind: SpecKind::Custom {
                factory: Arc::new(factory),
                name: None,
            },
        }
    }

    /// What `{:?}` shows for this spec, e.g. the store's URL without its password
    /// (a custom spec shows `custom` otherwise).
    pub fn named(mut self, name: impl Into<String>) -> LeaseSpec {
        if let SpecKind::Custom { name: n, .. } = &mut self.kind {
            *n = Some(name.into());
        }
        self
    }

    /// The state file `path` of the fixed node id `node` (the option `state`).
    #[cfg(any(unix, windows))]
    pub(crate) fn state(path: &str, node: u64) -> LeaseSpec {
        LeaseSpec {
            kind: SpecKind::State {
                path: path.to_string(),
                node,
            },
        }
    }

    /// Whether this is a state file rather than a lease: a clock behind its mark
    /// is then the generator's `clock_backwards` policy's to handle.
    fn is_state(&self) -> bool {
        #[cfg(any(unix, windows))]
        if let SpecKind::State { .. } = self.kind {
            return true;
        }
        false
    }

    fn open(&self) -> Result<Box<dyn LeaseStore>> {
        match &self.kind {
            #[cfg(any(unix, windows))]
            SpecKind::File(u) => Ok(Box::new(FileStore::new(&u.dir, &u.namespace)?)),
            #[cfg(any(unix, windows))]
            SpecKind::State { path, node } => Ok(Box::new(state::StateStore::new(path, *node)?)),
            SpecKind::Custom { factory, .. } => factory(),
        }
    }
}

pub(crate) fn lease_error(message: impl Into<String>) -> Error {
    Error::Lease {
        message: message.into(),
    }
}

/// A leased generator's validity window, for copies in other processes: an ID may
/// be issued while the issuer's clock reads below `wall_end_ms` **and** a
/// [`LeaseClock`] reading is below `mono_end`. Both 0: closed.
///
/// For a process that enforces one lease on generators of its own, across
/// processes: the PostgreSQL extension holds the lease in a background worker
/// ([`Generator::lease_window`](crate::Generator::lease_window) there) and copies
/// the window into shared memory, where every backend checks it with its own
/// [`LeaseClock`]. A copy may lag the generator's window (it then ends earlier,
/// which is safe); it must never be extended by anything but a newer reading.
///
/// The generator's own gate compares the kernel's realtime clock with a window
/// derived from boot time instead of the monotonic clock, because its wall clock is
/// a ticker thread's cache that is stale right after a host suspend, and the
/// monotonic clock stops in one. A process that reads the system clock for every
/// ID, as the PostgreSQL backends do, is current after a suspend and needs no such
/// check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseWindow {
    /// IDs stamped at or after this Unix-ms time are refused (the fence recorded
    /// in the store is this plus the borrow allowance).
    pub wall_end_ms: u64,
    /// [`LeaseClock::now`] readings at or past this are refused. `u64::MAX` for a
    /// store that keeps the id for as long as the holding process lives (file
    /// leases, [`LeaseStore::held_while_alive`]).
    pub mono_end: u64,
}

impl LeaseWindow {
    /// Whether an ID stamped `now_ms` may be issued at the lease-clock reading `mono`.
    #[inline(always)]
    pub fn allows(&self, now_ms: u64, mono: u64) -> bool {
        now_ms < self.wall_end_ms && mono < self.mono_end
    }

    /// Whether the window is closed (lost, released, not yet acquired).
    pub fn is_closed(&self) -> bool {
        self.wall_end_ms == 0 || self.mono_end == 0
    }
}

/// The clock of [`LeaseWindow::mono_end`], whatever it is on this platform (the
/// kernel's coarse monotonic clock on Linux, read through the vDSO):
/// readings are opaque, ordered numbers to compare with [`LeaseWindow::mono_end`]
/// in any process of this host. Cheap to copy; look it up once per process.
#[derive(Clone, Copy)]
pub struct LeaseClock(mono::Reader);

impl fmt::Debug for LeaseClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LeaseClock")
    }
}

impl Default for LeaseClock {
    fn default() -> Self {
        Self::new()
    }
}

impl LeaseClock {
    /// A reader of the clock a [`LeaseWindow`]'s `mono_end` is measured on.
    pub fn new() -> LeaseClock {
        LeaseClock(mono::reader())
    }

    /// A reading, comparable with [`LeaseWindow::mono_end`].
    #[inline(always)]
    pub fn now(self) -> u64 {
        mono::read(self.0)
    }
}

/// Where a lease stands (see [`Generator::lease_state`](crate::Generator::lease_state)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseState {
    /// Renewed in time.
    Held,
    /// The last renewal failed; the holder keeps trying and stops issuing IDs when
    /// its validity window ends.
    Unreachable {
        /// The last renewal's error.
        error: String,
    },
    /// The store gave the node id to another holder: this generator never issues
    /// again.
    Lost,
    /// Released (dropped or [`release_lease`](crate::Generator::release_lease)).
    Released,
}

impl LeaseState {
    /// The state's one-word name, the same in every binding and in the service:
    /// `held`, `unreachable`, `lost` or `released` (one list, not one per binding).
    pub fn as_str(&self) -> &'static str {
        match self {
            LeaseState::Held => "held",
            LeaseState::Unreachable { .. } => "unreachable",
            LeaseState::Lost => "lost",
            LeaseState::Released => "released",
        }
    }
}

impl fmt::Display for LeaseState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeaseState::Held => f.write_str("held"),
            LeaseState::Unreachable { error } => write!(f, "store unreachable ({error})"),
            LeaseState::Lost => f.write_str("taken over by another holder"),
            LeaseState::Released => f.write_str("released"),
        }
    }
}

#[derive(Debug)]
struct Control {
    /// `Some(last_ms)`: release, recording `last_ms`.
    stop: Option<u64>,
    state: LeaseState,
}

#[derive(Debug)]
struct Shared {
    gate: Arc<Gate>,
    /// The round trip of the last confirmed renewal, in µs (0 before the first).
    renew_us: AtomicU64,
    control: Mutex<Control>,
    wake: Condvar,
    node: u64,
    describe: String,
    timing: LeaseTiming,
    /// A state file, not a lease (for messages).
    state: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The heartbeat of one acquired lease. Owned by its generator.
#[derive(Debug)]
pub(crate) struct LeaseGuard {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Re-derives the gate's realtime window when the realtime clock is set
    /// (`None` for stores that keep the id while the process lives, or where no
    /// watch can run: the gate then checks the monotonic clock too).
    steps: Mutex<Option<steps::StepWatch>>,
    fork_generation: u64,
    /// What the store recorded before we took the id: released as-is if no
    /// generator was ever built on this lease.
    acquired_last_ms: u64,
    /// How long acquiring waited out the lock delay (0: the store's marker was old
    /// enough, i.e. it kept its data).
    pub(crate) lock_delay_ms: u64,
}

impl LeaseGuard {
    pub(crate) fn gate(&self) -> Arc<Gate> {
        self.shared.gate.clone()
    }

    /// Whether this keeps a state file (the option `state`) rather than a lease.
    pub(crate) fn is_state(&self) -> bool {
        self.shared.state
    }

    pub(crate) fn state(&self) -> LeaseState {
        self.shared.lock().state.clone()
    }

    /// The round trip of the last confirmed renewal, in µs.
    pub(crate) fn renew_latency_us(&self) -> u64 {
        self.shared.renew_us.load(Ordering::Relaxed)
    }

    /// The error a generator returns once its gate is closed or its window ended.
    #[cold]
    pub(crate) fn refusal(&self) -> Error {
        let s = &self.shared;
        let state = self.state();
        if s.state {
            let why = match &state {
                LeaseState::Unreachable { error } => error.clone(),
                LeaseState::Released => "the generator was released".into(),
                _ => "the heartbeat did not write it in time".into(),
            };
            return lease_error(format!(
                "refusing to issue an ID: the {} (option state) is not ahead of the clock: {why}; IDs resume once \
                 it is written",
                s.describe
            ));
        }
        let why = match &state {
            LeaseState::Held => "its validity window ended before the renewal was confirmed".to_string(),
            LeaseState::Unreachable { error } => format!(
                "it could not be renewed within {} ms ({error}); IDs resume once the store answers",
                s.timing.valid_ms()
            ),
            LeaseState::Lost => "it was taken over by another holder; this generator will not issue IDs again".into(),
            LeaseState::Released => "it was released".into(),
        };
        lease_error(format!(
            "refusing to issue an ID: the lease on node id {} ({}) may have expired: {why}",
            s.node, s.describe
        ))
    }

    /// Stops IDs at once (the release itself follows).
    pub(crate) fn close_gate(&self) {
        let _c = self.shared.lock();
        self.shared.gate.close();
    }

    /// Closes the gate, releases the lease recording `last_ms`, and waits for the
    /// heartbeat to finish. Idempotent.
    pub(crate) fn release(&self, last_ms: u64) {
        if crate::fork::generation() != self.fork_generation {
            // A forked child: the heartbeat thread lives in the parent only.
            return;
        }
        {
            let mut c = self.shared.lock();
            self.shared.gate.close();
            if c.stop.is_none() {
                c.stop = Some(last_ms);
            }
            self.shared.wake.notify_all();
        }
        let handle = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(h) = handle {
            let _ = h.join();
        }
        let watch = self.steps.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut w) = watch {
            w.stop();
        }
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        // The generator normally releases with its exact last timestamp first; this
        // is the fallback when building failed after the lease was taken (no ID
        // was issued): put back what earlier holders recorded.
        self.release(self.acquired_last_ms);
    }
}

/// Everything a generator needs from a freshly acquired lease.
pub(crate) struct Acquisition {
    pub node: u64,
    /// Start IDs after this Unix-ms time (recorded by earlier holders).
    pub resume_after_ms: Option<u64>,
    pub guard: LeaseGuard,
}

/// How long after a namespace's incarnation began a new holder must wait before its
/// first ID: an unseen holder from before a data loss stops issuing at most
/// `ttl − margin` after its last successful renewal (which preceded the loss, so
/// the marker), may have stamped IDs up to `ahead_ms` past its clock, and the
/// margin covers clock-rate differences and the store's clock versus ours.
pub fn lock_delay_ms(timing: &LeaseTiming, ahead_ms: u64) -> u64 {
    timing.ttl_ms + timing.margin_ms + ahead_ms
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Unique per process and per lease: host, pid, time and a counter.
fn holder_token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let host = crate::node_id::hostname().unwrap_or_else(|_| "unknown-host".into());
    let host: String = host
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .take(64)
        .collect();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{host}/{}/{nanos:x}/{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

fn wall_now(clock: &Option<Arc<dyn Clock>>) -> u64 {
    match clock {
        Some(c) => c.now_ms_precise(),
        None => precise_now_ms(),
    }
}

/// How a generator asks for a lease.
pub(crate) struct AcquireOptions<'a> {
    pub spec: &'a LeaseSpec,
    pub ttl_ms: u64,
    pub layout: &'a Layout,
    pub clock: Option<Arc<dyn Clock>>,
    /// How far ahead of its clock the generator may issue (borrowing), in ms.
    pub ahead_ms: u64,
    /// How long to wait for the clock to pass the last recorded timestamp.
    pub max_wait_ms: u64,
}

/// Acquires a node id, waits (bounded) until the clock is past the last timestamp
/// issued under it, records the first fence, and starts the heartbeat. A step that
/// fails after the store granted the id gives it back.
pub(crate) fn acquire(opts: AcquireOptions<'_>) -> Result<Acquisition> {
    let mut taking = Taking::start(opts)?;
    match taking.prepare() {
        Ok(ready) => taking.hand_to_heartbeat(ready),
        Err(e) => Err(taking.give_up(e)),
    }
}

/// One acquisition under way: the store, the node id it granted, and what each step
/// needs.
struct Taking<'a> {
    store: Box<dyn LeaseStore>,
    opts: AcquireOptions<'a>,
    timing: LeaseTiming,
    holder: String,
    describe: String,
    got: Acquired,
    /// When the store last confirmed the lease (it starts the TTL on receipt).
    confirmed: Instant,
}

/// What the steps before the heartbeat decided.
struct Ready {
    /// The lock delay waited out.
    waited_ms: u64,
    resume_after_ms: Option<u64>,
    fence_floor_ms: u64,
    gate: Arc<Gate>,
    steps: Option<steps::StepWatch>,
    /// The wall end of the first fence's window and its kernel clock readings.
    first_fence: (u64, Ends),
}

impl<'a> Taking<'a> {
    /// Opens the store and takes a free node id.
    fn start(opts: AcquireOptions<'a>) -> Result<Taking<'a>> {
        let mut store = opts.spec.open()?;
        LeaseTiming::for_ttl(opts.ttl_ms)?;
        let timing = LeaseTiming::derive(store.effective_ttl_ms(opts.ttl_ms).min(opts.ttl_ms).max(1));
        let holder = holder_token();
        let describe = store.describe();
        let max_node = opts.layout.max_node();
        let until = Instant::now() + ACQUIRE_TIMEOUT;
        // The store starts the lease's TTL when it receives this request.
        let confirmed = Instant::now();
        let got = store.acquire(max_node, &holder, timing.ttl_ms, until)?.ok_or_else(|| {
            lease_error(format!(
                "no free node id: all {} node ids (0..={max_node}) of namespace {:?} are leased ({describe})",
                u128::from(max_node) + 1,
                store.namespace(),
            ))
        })?;
        Ok(Taking {
            store,
            opts,
            timing,
            holder,
            describe,
            got,
            confirmed,
        })
    }

    /// Gives the node id back after a failed step, and returns the step's error.
    fn give_up(mut self, e: Error) -> Error {
        let until = Instant::now() + RELEASE_TIMEOUT;
        let _ = self.store.release(self.got.node, &self.holder, self.got.last_ms, until);
        e
    }

    /// The steps between the grant and the heartbeat: the clocks compared, the lock
    /// delay, the wait past the last timestamp, the first fence.
    fn prepare(&mut self) -> Result<Ready> {
        self.check_clock()?;
        let waited_ms = self.wait_lock_delay()?;
        let last_ms = self.got.last_ms;
        // The restart-after-rollback hole: never issue at or before what earlier holders did.
        let resume_after_ms = (last_ms >= self.opts.layout.epoch_ms() && last_ms > 0).then_some(last_ms);
        // A state file leaves a clock behind its mark to the generator's policy, which
        // (monotonic) may issue in the tick after the mark: every fence covers that tick.
        let state = self.opts.spec.is_state();
        let layout = self.opts.layout;
        let fence_floor_ms = match resume_after_ms {
            Some(last) if state => {
                layout.timestamp_of_ticks(layout.ticks_at(last)?.saturating_add(1).min(layout.max_ticks()))
            }
            _ => 0,
        };
        if let Some(last) = resume_after_ms.filter(|_| !state) {
            self.wait_past(last)?;
        }
        // A store that keeps the id while this process lives needs the wall end alone;
        // one whose leases expire, the kernel's clocks too (docs/design.md, "The lease gate").
        let clocks = if self.store.held_while_alive() {
            gate::WALL
        } else {
            gate::REAL
        };
        let gate = Arc::new(Gate::closed(clocks));
        let steps = if clocks == gate::REAL {
            steps::watch(&gate, self.got.node)
        } else {
            None
        };
        let first_fence = self.renew(fence_floor_ms)?;
        Ok(Ready {
            waited_ms,
            resume_after_ms,
            fence_floor_ms,
            gate,
            steps,
            first_fence,
        })
    }

    /// [`renew_within_window`] of this acquisition.
    fn renew(&mut self, fence_floor_ms: u64) -> Result<(u64, Ends)> {
        let (node, holder) = (self.got.node, &self.holder);
        renew_within_window(
            &mut *self.store,
            node,
            holder,
            &self.timing,
            &self.opts,
            fence_floor_ms,
            &mut self.confirmed,
        )
    }

    /// Clocks in step (point 6), where the store has a clock to check ours against.
    fn check_clock(&self) -> Result<()> {
        if let Some(store_now) = self.got.store_now_ms
            && let Err(msg) = check_clock_against_store(wall_now(&self.opts.clock), store_now, self.timing.margin_ms)
        {
            let (node, describe) = (self.got.node, &self.describe);
            return Err(lease_error(format!("acquired node id {node} ({describe}), but {msg}")));
        }
        Ok(())
    }

    /// The lock delay: a young incarnation marker means the store may have
    /// forgotten holders that are still issuing. Waits until it is old enough,
    /// renewing our own lease meanwhile (the wait can be longer than the TTL).
    /// Returns the ms waited.
    fn wait_lock_delay(&mut self) -> Result<u64> {
        let delay = lock_delay_ms(&self.timing, self.opts.ahead_ms);
        let waited_ms = delay.saturating_sub(self.got.incarnation_age_ms);
        if waited_ms == 0 {
            return Ok(0);
        }
        let lock_until = Instant::now() + Duration::from_millis(waited_ms);
        let renew = Duration::from_millis(self.timing.renew_ms);
        loop {
            let left = lock_until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(renew));
            if Instant::now() >= lock_until {
                break;
            }
            self.renew(0)?;
        }
        Ok(waited_ms)
    }

    /// Waits (at most max_wait_ms and the borrow allowance) until the clock is past
    /// the tick of `last`, the last timestamp recorded under the node id.
    fn wait_past(&self, last: u64) -> Result<()> {
        let layout = self.opts.layout;
        let first_allowed = layout.timestamp_of_ticks(layout.ticks_at(last)? + 1);
        let bound = self.opts.max_wait_ms.saturating_add(self.opts.ahead_ms);
        let started = Instant::now();
        loop {
            let now = wall_now(&self.opts.clock);
            if now >= first_allowed {
                return Ok(());
            }
            if started.elapsed() >= Duration::from_millis(bound) {
                let (node, describe) = (self.got.node, &self.describe);
                return Err(lease_error(format!(
                    "acquired node id {node} ({describe}), but IDs up to {last} ms were already issued under it \
                     and the clock reads {now} ms, {} ms behind; waited {bound} ms (max_wait_ms + borrow allowance). \
                     Fix the clock, or raise max_wait_ms",
                    first_allowed - now
                )));
            }
            match &self.opts.clock {
                Some(c) => c.pause(),
                None => std::thread::sleep(Duration::from_millis((first_allowed - now).clamp(1, 10))),
            }
        }
    }

    /// Opens the gate on the first fence and starts the heartbeat thread, which
    /// holds the lease from now on.
    fn hand_to_heartbeat(self, ready: Ready) -> Result<Acquisition> {
        let node = self.got.node;
        let (wall_end, sent_at) = ready.first_fence;
        let sent = self.confirmed;
        ready.gate.open_until(wall_end, sent_at.plus(self.timing.valid_ms()));
        let shared = Arc::new(Shared {
            gate: ready.gate,
            renew_us: AtomicU64::new(micros(sent.elapsed())),
            control: Mutex::new(Control {
                stop: None,
                state: LeaseState::Held,
            }),
            wake: Condvar::new(),
            node,
            describe: self.describe,
            timing: self.timing,
            state: self.opts.spec.is_state(),
        });
        let beat = Heartbeat {
            shared: shared.clone(),
            store: self.store,
            holder: self.holder,
            clock: self.opts.clock,
            ahead_ms: self.opts.ahead_ms,
            fence_floor_ms: ready.fence_floor_ms,
        };
        let spawned = std::thread::Builder::new()
            .name(format!("flakeid-lease-{node}"))
            // The async store clients (tonic, tokio-postgres) poll deep futures: an
            // unoptimised build overflowed 256 KiB. Stack pages are committed on use.
            .stack_size(4 << 20)
            .spawn(move || beat.run(sent));
        let handle = spawned.map_err(|e| {
            // `beat` (and the store) moved into the failed spawn and were dropped;
            // the lease expires by itself after its TTL.
            lease_error(format!(
                "cannot start the lease heartbeat thread: {e}; node id {node} will expire after {} ms",
                shared.timing.ttl_ms
            ))
        })?;
        Ok(Acquisition {
            node,
            resume_after_ms: ready.resume_after_ms,
            guard: LeaseGuard {
                lock_delay_ms: ready.waited_ms,
                shared,
                thread: Mutex::new(Some(handle)),
                steps: Mutex::new(ready.steps),
                fork_generation: crate::fork::generation(),
                acquired_last_ms: self.got.last_ms,
            },
        })
    }
}

/// Renews during acquisition (the lock delay, the first fence) as the heartbeat
/// does: a refusal is final, but a failed attempt is retried until the lease could
/// have expired (`valid_ms` after the last confirmed renewal, `confirmed`), so a
/// store that is slow for a moment does not fail the build.
/// Each attempt records its own fence (its wall reading + the window + the borrow
/// allowance); on success, returns that attempt's window end (wall) and its kernel
/// clock readings, from which the gate may open.
fn renew_within_window(
    store: &mut dyn LeaseStore,
    node: u64,
    holder: &str,
    timing: &LeaseTiming,
    opts: &AcquireOptions<'_>,
    fence_floor_ms: u64,
    confirmed: &mut Instant,
) -> Result<(u64, Ends)> {
    let renew = Duration::from_millis(timing.renew_ms);
    let retry = Duration::from_millis((timing.renew_ms / 4).max(5));
    let valid = Duration::from_millis(timing.valid_ms());
    loop {
        let sent = Instant::now();
        let sent_at = Ends::now();
        let wall_end = wall_now(&opts.clock) + timing.valid_ms();
        let fence = (wall_end + opts.ahead_ms).max(fence_floor_ms);
        match store.renew(node, holder, timing.ttl_ms, fence, sent + renew) {
            Ok(true) => {
                *confirmed = sent;
                return Ok((wall_end, sent_at));
            }
            Ok(false) => {
                return Err(lease_error(format!(
                    "node id {node} ({}) was lost while it was being acquired (taken by another holder, or the \
                     store lost its data again)",
                    store.describe()
                )));
            }
            Err(e) if sent + retry >= *confirmed + valid => return Err(e),
            Err(_) => std::thread::sleep(retry),
        }
    }
}

struct Heartbeat {
    shared: Arc<Shared>,
    store: Box<dyn LeaseStore>,
    holder: String,
    clock: Option<Arc<dyn Clock>>,
    ahead_ms: u64,
    /// No fence below this (a state file's first tick after its mark).
    fence_floor_ms: u64,
}

impl Heartbeat {
    fn run(mut self, first_sent: Instant) {
        let timing = self.shared.timing;
        let renew = Duration::from_millis(timing.renew_ms);
        // After a failure, retry four times per renew interval.
        let retry = Duration::from_millis((timing.renew_ms / 4).max(5));
        let mut next = first_sent + renew;
        loop {
            {
                let mut c = self.shared.lock();
                loop {
                    if c.stop.is_some() {
                        break;
                    }
                    let now = Instant::now();
                    if now >= next {
                        break;
                    }
                    c = self
                        .shared
                        .wake
                        .wait_timeout(c, next - now)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
                if let Some(last_ms) = c.stop {
                    drop(c);
                    let _ = self.store.release(
                        self.shared.node,
                        &self.holder,
                        last_ms,
                        Instant::now() + RELEASE_TIMEOUT,
                    );
                    self.shared.lock().state = LeaseState::Released;
                    return;
                }
            }
            let sent = Instant::now();
            let sent_at = Ends::now();
            let wall_end = wall_now(&self.clock) + timing.valid_ms();
            // Give up on this attempt in time to retry before the window ends.
            let until = sent + renew;
            let outcome = self.store.renew(
                self.shared.node,
                &self.holder,
                timing.ttl_ms,
                (wall_end + self.ahead_ms).max(self.fence_floor_ms),
                until,
            );
            let mut c = self.shared.lock();
            match outcome {
                Ok(true) => {
                    self.shared.renew_us.store(micros(sent.elapsed()), Ordering::Relaxed);
                    if c.stop.is_none() {
                        self.shared.gate.open_until(wall_end, sent_at.plus(timing.valid_ms()));
                        c.state = LeaseState::Held;
                    }
                    next = sent + renew;
                }
                Ok(false) => {
                    self.shared.gate.close();
                    c.state = LeaseState::Lost;
                    return;
                }
                Err(e) => {
                    c.state = LeaseState::Unreachable { error: e.to_string() };
                    next = Instant::now() + retry;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_keeps_the_holder_inside_the_store_ttl() {
        for ttl in [MIN_LEASE_TTL_MS, 1000, DEFAULT_LEASE_TTL_MS, MAX_LEASE_TTL_MS] {
            let t = LeaseTiming::for_ttl(ttl).unwrap();
            assert!(t.valid_ms() < t.ttl_ms);
            // Two renewals fit in the validity window: one lost packet does not stop IDs.
            assert!(2 * t.renew_ms < t.valid_ms(), "{t:?}");
        }
        assert!(LeaseTiming::for_ttl(999).is_err());
        assert!(LeaseTiming::for_ttl(MAX_LEASE_TTL_MS + 1).is_err());
    }

    #[test]
    fn clock_check_refuses_a_host_behind_the_store_by_more_than_the_margin() {
        assert!(check_clock_against_store(10_000, 10_000, 200).is_ok());
        assert!(
            check_clock_against_store(9_800, 10_000, 200).is_ok(),
            "exactly the margin"
        );
        assert!(
            check_clock_against_store(60_000, 10_000, 200).is_ok(),
            "ahead is harmless"
        );
        let msg = check_clock_against_store(2_000, 10_000, 200).unwrap_err();
        for want in [
            "reads 2000 ms",
            "the store's 10000 ms",
            "8000 ms behind",
            "200 ms margin",
        ] {
            assert!(msg.contains(want), "{want:?} missing from: {msg}");
        }
        assert!(check_clock_against_store(9_799, 10_000, 200).is_err());
    }

    #[test]
    fn a_window_copy_checks_what_the_gate_checks() {
        let clock = LeaseClock::new();
        let g = Gate::closed(gate::REAL);
        assert!(g.window().is_closed() && !g.window().allows(0, clock.now()));
        g.open_until(1_000, Ends::now().plus(60_000));
        let w = g.window();
        assert!(!w.is_closed());
        assert!(w.allows(999, clock.now()) && !w.allows(1_000, clock.now()));
        assert_eq!(w.allows(5, clock.now()), g.allows(5));
        let ended = Ends::now();
        g.open_until(1_000, ended);
        assert!(!g.window().allows(5, clock.now()), "the monotonic end binds");
        assert!(!g.allows(5));
        // A store that holds the id while the process lives: the wall end alone.
        let g = Gate::closed(gate::WALL);
        assert!(g.window().is_closed());
        g.open_until(1_000, ended);
        assert_eq!(g.window().mono_end, u64::MAX);
        assert!(g.window().allows(999, clock.now()));
        g.close();
        assert!(g.window().is_closed());
    }

    #[test]
    fn spec_errors_are_config_errors() {
        let e = LeaseSpec::parse("zk://h/x").unwrap_err();
        assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
        assert!(LeaseSpec::parse("not a url").is_err());
    }

    #[test]
    fn holder_tokens_are_unique() {
        assert_ne!(holder_token(), holder_token());
    }
}
