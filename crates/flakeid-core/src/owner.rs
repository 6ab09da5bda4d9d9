//! One owner per node id in a process: every generator built here on the same ID
//! space and node id (on the system clock, without a lease) issues from one
//! counter, which outlives its last generator for the life of the process. So a
//! second generator is never an error, close-and-rebuild starts where the last one
//! stopped without a wait, and none of them repeats another's IDs. While any of
//! them lives, the process holds the node id's host guard (`crate::host_guard`),
//! so no other process on the host takes it; the last one to go writes the floor
//! the next owner starts above.
//!
//! Where the guard files are, and what a refusal says, is decided here:
//! `FLAKEID_HOST_GUARD` names the directory (an absolute path), or `off` turns the
//! cross-process check off (never the in-process one); unset,
//! `/tmp/flakeid-host-guard` (unix) or the temporary directory (Windows).
//! `crate::host_guard` only takes, watches and releases the file at a path.
//!
//! With no node id configured, a generator takes the node id this process already
//! picked for the ID space, or picks a free one on the host: the highest whose
//! guard no live process holds (fixed node ids are mostly small ones).

use crate::counter::Padded;
use crate::error::{Error, Result};
use crate::host_guard::{self, HostGuard, Refused, Watched};
use crate::layout::{Layout, Order};
use crate::node_origin::HOST_GUARD_ENV;
use crate::spin_flag::SpinFlag;
use std::cell::UnsafeCell;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64 as StdAtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Every owner this process made (owners of a parent process, in a forked child's
/// copy of the table, are told apart by their pid). Never shrinks: an owner's
/// counter is kept for the life of the process.
static OWNERS: Table = Table {
    busy: SpinFlag::new(),
    owners: UnsafeCell::new(Vec::new()),
};

/// The owner table behind a flag rather than a `Mutex`: a fork copies a lock that
/// another thread holds into a child where that thread does not exist, so the
/// at-fork handlers take the flag before every fork and let it go on both sides
/// (the child's copy is then whole and free).
struct Table {
    busy: SpinFlag,
    owners: UnsafeCell<Vec<&'static Owner>>,
}

// SAFETY: `owners` is reached only through a `Held`, of which there is one at a
// time (the `busy` flag, taken with Acquire and let go with Release).
unsafe impl Sync for Table {}

/// The table, held.
struct Held;

impl std::ops::Deref for Held {
    type Target = Vec<&'static Owner>;
    fn deref(&self) -> &Self::Target {
        // SAFETY: this `Held` is the one holder (see `Table`).
        unsafe { &*OWNERS.owners.get() }
    }
}

impl std::ops::DerefMut for Held {
    fn deref_mut(&mut self) -> &mut Self::Target {
        // SAFETY: as above.
        unsafe { &mut *OWNERS.owners.get() }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        OWNERS.busy.give();
    }
}

/// Holds the owner table (the at-fork handlers installed on first use).
fn table() -> Held {
    static HANDLERS: std::sync::Once = std::sync::Once::new();
    HANDLERS.call_once(|| {
        #[cfg(unix)]
        {
            extern "C" fn before() {
                OWNERS.busy.take();
            }
            extern "C" fn after() {
                OWNERS.busy.give();
            }
            // SAFETY: handlers that only touch an atomic flag.
            unsafe { libc::pthread_atfork(Some(before), Some(after), Some(after)) };
        }
    });
    OWNERS.busy.take();
    Held
}

/// A node id's counter in this process, and what keeps the node id ours.
pub(crate) struct Owner {
    pid: u32,
    space: String,
    node: u64,
    /// Picked on the host (no node id configured) rather than given.
    picked: AtomicBool,
    pub(crate) counter: Arc<Padded>,
    /// The largest borrow window (ticks) of its generators: a call of a stricter
    /// one waits past what a borrowing one reserved, as for a new tick.
    max_ahead: StdAtomicU64,
    tick_ms: u64,
    epoch_ms: u64,
    /// The last ms an ID of the space can carry.
    last_ms: u64,
    /// The counter's sequence width: the layout's.
    sb: u32,
    /// The host guard was lost to another process: every call refuses until the
    /// watcher takes it back ([`recover`]).
    lost: AtomicBool,
    /// The counter's value while it is closed to calls (`u64::MAX`): since the
    /// node id was lost, or since its last generator let the host guard go.
    parked: StdAtomicU64,
    live: Mutex<Live>,
}

struct Live {
    handles: usize,
    guard: Option<HostGuard>,
    /// The guard file's path, once taken: where a lost node id is taken back.
    path: Option<PathBuf>,
    /// The state file the live generators keep (`state`), if any: one for all or
    /// none.
    state: Option<String>,
}

/// What a generator's build asks of the owner table.
pub(crate) struct Ask<'a> {
    pub(crate) layout: &'a Layout,
    /// `None`: pick a free node id on the host.
    pub(crate) node: Option<u64>,
    pub(crate) ahead_ticks: u64,
    pub(crate) state: Option<&'a str>,
    /// Whether to take the cross-process guard (off: `host_guard(false)`).
    pub(crate) guard: bool,
}

/// A build's share of an owner: given up when dropped, unless the generator built
/// keeps it ([`Share::keep`]; then its drop or `close` gives it up).
pub(crate) struct Share {
    pub(crate) owner: &'static Owner,
    /// The floor the node id's previous owner on the host left, if above anything.
    pub(crate) floor_ms: Option<u64>,
    kept: bool,
}

impl Share {
    /// The owner, for a generator built on it.
    pub(crate) fn keep(mut self) -> &'static Owner {
        self.kept = true;
        self.owner
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        if !self.kept {
            self.owner.leave();
        }
    }
}

impl Owner {
    pub(crate) fn node(&self) -> u64 {
        self.node
    }

    /// Whether this process made the owner (not a parent, in a forked child).
    pub(crate) fn is_mine(&self) -> bool {
        self.pid == std::process::id()
    }

    /// The largest borrow window, in ticks, of the generators on this counter.
    pub(crate) fn max_ahead(&self) -> u64 {
        self.max_ahead.load(Ordering::Relaxed)
    }

    fn is_picked(&self) -> bool {
        self.picked.load(Ordering::Relaxed)
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Marks the node id lost to another process: every call of its generators
    /// leaves the fast path (a poisoned counter; the handles' epoch moved) for the
    /// full checks, which refuse ([`lost_error`](Self::lost_error)).
    ///
    /// The counter is closed and the handles' epoch moved *before* the flag goes
    /// up: a thread that sees the flag (and refuses) then finds its handles' runs
    /// closed too, never served on from their fast path.
    pub(crate) fn lose(&self) {
        let at = self.counter.0.swap(u64::MAX, Ordering::AcqRel);
        if at != u64::MAX {
            self.parked.store(at, Ordering::Release);
        }
        crate::fork::end_handle_epoch();
        self.lost.store(true, Ordering::Release);
    }

    /// The counter's first slot in the tick after `floor_ms`.
    fn slot_after(&self, floor_ms: u64) -> u64 {
        let ticks = floor_ms.saturating_sub(self.epoch_ms) / self.tick_ms.max(1);
        ticks.saturating_add(1).checked_shl(self.sb).unwrap_or(u64::MAX)
    }

    /// Moves the host guard's bound (`counter.1`) to cover the ticks up to
    /// `at_ms`, the time before the guard file was last found this process's,
    /// plus [`host_guard::CONFIRMED_MS`] and the generators' lead: claims past it
    /// wait for the next look at the file. A newcomer that creates the file anew
    /// waits longer than that before its first ID (`host_guard::take`), so a
    /// holder paused while its file was removed issues nothing the newcomer does.
    fn confirm(&self, at_ms: u64) {
        let end = at_ms
            .saturating_add(host_guard::CONFIRMED_MS)
            .saturating_add(self.lead_ms());
        self.counter.1.fetch_max(self.slot_after(end), Ordering::AcqRel);
    }

    /// Looks at the guard file now (a claim met the bound, [`confirm`](Self::confirm)):
    /// at most one thread at a time, and none once the bound passed `slot`.
    pub(crate) fn confirm_now(&self, slot: u64) {
        let mut live = lock(&self.live);
        if self.counter.1.load(Ordering::Acquire) > slot {
            return;
        }
        check(self, &mut live);
    }

    /// Raises the counter past `floor_ms` (a floor another process left in a guard
    /// file this one took back): no slot at or below it is taken after this.
    fn raise_past(&self, floor_ms: u64) {
        self.counter.0.fetch_max(self.slot_after(floor_ms), Ordering::AcqRel);
    }

    /// Why every call on a lost node id refuses.
    #[cold]
    pub(crate) fn lost_error(&self) -> Error {
        Error::config(
            "node",
            format!(
                "node id {} was taken by another process on this host after its host guard file was removed: \
                 this process's generators on it stop issuing until that process lets it go and the clock \
                 passes its IDs (or build one on a free node id; keep the guard directory from being cleaned)",
                self.node
            ),
        )
    }

    /// One generator on this counter goes. The last one lets the host guard go,
    /// leaving for the next owner the last ms of any slot taken: the counter is
    /// closed (`u64::MAX`) when it is read and stays closed until this process's
    /// next generator on it ([`enter`]), so that a call still under way on a
    /// closed generator takes no slot after it, however late it comes to the
    /// counter: its compare-and-swap fails, and its retry meets the closed check
    /// (docs/design.md, "Who owns a node id").
    pub(crate) fn leave(&self) {
        let mut live = lock(&self.live);
        live.handles = live.handles.saturating_sub(1);
        if live.handles == 0
            && let Some(guard) = live.guard.take()
        {
            if self.is_lost() {
                drop(guard);
            } else {
                let counter = &self.counter.0;
                let taken = counter.swap(u64::MAX, Ordering::AcqRel);
                self.parked.store(taken, Ordering::Release);
                let last_tick = taken.saturating_sub(1) >> self.sb;
                guard.release(self.epoch_ms.saturating_add(last_tick.saturating_mul(self.tick_ms)));
            }
        }
    }

    fn lead_ms(&self) -> u64 {
        self.max_ahead().saturating_mul(self.tick_ms)
    }

    /// The guard's numbers for a holder running up to `ahead_ms` ahead.
    fn lead(&self, ahead_ms: u64) -> host_guard::Lead {
        host_guard::Lead {
            tick_ms: self.tick_ms,
            ahead_ms,
            max_ms: crate::policy::MAX_POLICY_MS,
            last_ms: self.last_ms,
        }
    }
}

impl HostGuard {
    /// Holds the guard of `node` in `layout`'s ID space for as long as the value
    /// lives: the PostgreSQL extension's postmaster holds it for its backends, whose
    /// generators over one shared counter take none. `None` when the guard is
    /// turned off or its directory cannot be used (warned once); a refusal naming
    /// the holder when another process holds it.
    pub fn hold(layout: &Layout, node: u64) -> Result<Option<HostGuard>> {
        let Some(dir) = guard_dir()? else {
            return Ok(None);
        };
        let lead = host_guard::Lead {
            tick_ms: layout.tick_ms(),
            ahead_ms: 0,
            max_ms: crate::policy::MAX_POLICY_MS,
            last_ms: layout.last_timestamp_ms(),
        };
        let path = dir.join(key(layout, node));
        match host_guard::take(&path, node, lead) {
            Ok(taken) => Ok(Some(taken.guard)),
            Err(Refused::Held(pid)) => Err(refusal(node, pid, &path)),
            Err(Refused::Left(uid)) => Err(left_refusal(node, uid, &path)),
            Err(Refused::Unusable(e)) => {
                warn_unusable(&dir, &e);
                Ok(None)
            }
        }
    }
}

/// The file name of (ID space, node id): every field that makes two layouts' IDs
/// one space, so equal layouts meet whatever they are called.
fn key(layout: &Layout, node: u64) -> String {
    format!("node-{node}.{}.lock", space(layout))
}

/// The ID space of a layout: bits, tick, epoch and order.
fn space(layout: &Layout) -> String {
    let order = match layout.order() {
        Order::TimeNodeSeq => "tns",
        Order::TimeSeqNode => "tsn",
    };
    format!(
        "t{}d{}w{}s{}.tick{}.epoch{}.{order}",
        layout.time_bits(),
        layout.datacenter_bits(),
        layout.worker_bits(),
        layout.sequence_bits(),
        layout.tick_ms(),
        layout.epoch_ms(),
    )
}

/// The guard directory (`None`: turned off).
fn guard_dir() -> Result<Option<PathBuf>> {
    match std::env::var_os(HOST_GUARD_ENV) {
        Some(v) if v == "off" => Ok(None),
        Some(v) if !v.is_empty() => {
            let dir = PathBuf::from(&v);
            if !dir.is_absolute() {
                return Err(Error::config(
                    "host_guard",
                    format!(
                        "{HOST_GUARD_ENV} must be an absolute directory or off, got {:?}",
                        v.to_string_lossy()
                    ),
                ));
            }
            Ok(Some(dir))
        }
        _ => Ok(Some(default_dir())),
    }
}

#[cfg(unix)]
fn default_dir() -> PathBuf {
    PathBuf::from(crate::node_origin::DEFAULT_GUARD_DIR)
}

#[cfg(not(unix))]
fn default_dir() -> PathBuf {
    std::env::temp_dir().join("flakeid-host-guard")
}

/// The refusal of a fixed node id that another live process on this host holds.
fn refusal(node: u64, holder: Option<u32>, path: &Path) -> Error {
    let who = match holder {
        Some(pid) => format!("process {pid}"),
        None => "another process".to_string(),
    };
    Error::config(
        "node",
        format!(
            "node id {node} of this layout is already in use on this host by {who} (host guard {}): two processes on one \
             node id would issue the same IDs. Fixes, in order: in one process, build generators freely (they share \
             one counter) or close the other process's; give each worker process its own node id; leave the node id \
             unset, so that each process takes a free one on this host (test runners' workers too); across hosts, a \
             lease (a Redis, PostgreSQL or etcd URL)",
            path.display()
        ),
    )
}

/// The refusal of a fixed node id whose guard file another user's process left
/// when it ended: this user could neither hold the file nor write its floor.
fn left_refusal(node: u64, uid: u32, path: &Path) -> Error {
    Error::config(
        "node",
        format!(
            "node id {node} of this layout was last used on this host by a process of uid {uid}, which has ended; \
             its host guard file {} is that user's, so this user can neither hold it nor leave a floor in it. \
             Fixes: run this process as uid {uid}; or give it another node id (or none, to take a free one); or, \
             once nothing of uid {uid} uses node id {node}, remove the file (as uid {uid} or root)",
            path.display()
        ),
    )
}

/// Says once per process that the guard directory cannot be used, and what that
/// means; the generator is built all the same.
fn warn_unusable(dir: &Path, err: &io::Error) {
    static WARNED: OnceLock<()> = OnceLock::new();
    WARNED.get_or_init(|| {
        eprintln!(
            "flakeid: warning: the host guard directory {} cannot be used ({err}): generators on a fixed node id \
             are not checked against other processes on this host (one with no node id is refused); set \
             {HOST_GUARD_ENV} to a writable directory of your own",
            dir.display()
        );
    });
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Joins (or makes) the owner of the asked node id, or of a free one picked on
/// the host, taking its host guard when this process holds none.
pub(crate) fn join(ask: &Ask<'_>) -> Result<Share> {
    let dir = if ask.guard { guard_dir()? } else { None };
    let space = space(ask.layout);
    let pid = std::process::id();
    let mut owners = table();
    let mine = |o: &&&Owner| o.pid == pid && o.space == space;
    let node = match ask.node {
        Some(node) => node,
        // The node id this process picked, while a generator still uses it.
        None => match owners
            .iter()
            .filter(mine)
            .find(|o| o.is_picked() && lock(&o.live).handles > 0)
        {
            Some(o) => o.node,
            None => return pick(&mut owners, ask, dir, &space),
        },
    };
    let owner = match owners.iter().filter(mine).find(|o| o.node == node) {
        Some(o) => *o,
        None => {
            let o = new_owner(ask, &space, node, ask.node.is_none());
            owners.push(o);
            o
        }
    };
    let taken = match &dir {
        Some(dir) => take_for(owner, dir, ask).map_err(|e| match e {
            PickRefused::Other(e) => e,
            PickRefused::Unusable(e) => unusable(dir, &e),
            PickRefused::Held(pid) => refusal(node, pid, &dir.join(key(ask.layout, node))),
        })?,
        None => None,
    };
    enter(owner, ask, taken)
}

/// Picks a free node id for this process on the host: the one it picked last if
/// it is free, else the highest free one. With no guard to ask, none (the builder
/// refuses that first: crate::node_origin).
fn pick(owners: &mut Held, ask: &Ask<'_>, dir: Option<PathBuf>, space: &str) -> Result<Share> {
    let pid = std::process::id();
    let mine = |node: u64| {
        owners
            .iter()
            .copied()
            .find(|o| o.pid == pid && o.space == space && o.node == node)
    };
    let Some(dir) = dir else {
        return Err(crate::node_origin::unseen("the host guard is off"));
    };
    let last = owners
        .iter()
        .rev()
        .find(|o| o.pid == pid && o.space == space && o.is_picked())
        .map(|o| o.node);
    let max_node = ask.layout.max_node();
    let mut held_by = None;
    let mut unusable_by = None;
    // From the top of the range down: fixed node ids are mostly small ones, and a
    // picked one should not take the node id a fixed generator is about to ask for.
    for node in last.into_iter().chain((0..=max_node).rev()) {
        let existing = mine(node);
        if existing.is_some_and(|o| lock(&o.live).handles > 0 || o.is_lost()) {
            continue;
        }
        let owner = existing.unwrap_or_else(|| new_owner(ask, space, node, true));
        match take_for(owner, &dir, ask) {
            Ok(taken) => {
                if existing.is_none() {
                    owners.push(owner);
                }
                owner.picked.store(true, Ordering::Relaxed);
                return enter(owner, ask, taken);
            }
            Err(PickRefused::Held(pid)) => held_by = held_by.or(pid),
            Err(PickRefused::Unusable(e)) => unusable_by = unusable_by.or(Some(e)),
            Err(PickRefused::Other(e)) => return Err(e),
        }
    }
    if let Some(e) = unusable_by {
        return Err(unusable(&dir, &e));
    }
    Err(Error::config(
        "node",
        format!(
            "no node id given, and all {} node ids of this layout are in use on this host (e.g. by process {}): \
             give each process its own node id, or a lease",
            max_node + 1,
            held_by.map_or("?".to_string(), |p| p.to_string())
        ),
    ))
}

/// The refusal of a pick where no node id's guard file could be used (read-only,
/// owned by another user, full): none of them could be kept from another process.
fn unusable(dir: &std::path::Path, e: &std::io::Error) -> Error {
    crate::node_origin::unseen(&format!(
        "the host guard directory {} cannot be used ({e}; set {} to a writable directory of your own)",
        dir.display(),
        HOST_GUARD_ENV
    ))
}

/// Why a pick passes over a node id (another process holds it, or its guard file
/// cannot be used), or gives up.
enum PickRefused {
    Held(Option<u32>),
    Unusable(std::io::Error),
    Other(Error),
}

fn new_owner(ask: &Ask<'_>, space: &str, node: u64, picked: bool) -> &'static Owner {
    Box::leak(Box::new(Owner {
        pid: std::process::id(),
        space: space.to_string(),
        node,
        picked: AtomicBool::new(picked),
        counter: Arc::new(Padded::new(0)),
        max_ahead: StdAtomicU64::new(0),
        tick_ms: ask.layout.tick_ms(),
        epoch_ms: ask.layout.epoch_ms(),
        last_ms: ask.layout.last_timestamp_ms(),
        sb: ask.layout.sequence_bits(),
        lost: AtomicBool::new(false),
        parked: StdAtomicU64::new(0),
        live: Mutex::new(Live {
            handles: 0,
            guard: None,
            path: None,
            state: ask.state.map(str::to_string),
        }),
    }))
}

/// Takes the owner's host guard if this process holds none for it now (or takes
/// back one it lost, [`recover`]).
fn take_for(
    owner: &'static Owner,
    dir: &std::path::Path,
    ask: &Ask<'_>,
) -> std::result::Result<Option<u64>, PickRefused> {
    let mut live = lock(&owner.live);
    if live.guard.is_some() || (live.handles > 0 && !owner.is_lost()) {
        return Ok(None);
    }
    let path = dir.join(key(ask.layout, owner.node));
    let ahead_ms = owner.lead_ms().max(ask.ahead_ticks * owner.tick_ms);
    match host_guard::take(&path, owner.node, owner.lead(ahead_ms)) {
        Ok(taken) => {
            live.guard = Some(taken.guard);
            live.path = Some(path);
            recover(owner, taken.floor_ms, true);
            watch_from_now();
            Ok(taken.floor_ms)
        }
        Err(Refused::Held(pid)) if ask.node.is_none() => Err(PickRefused::Held(pid)),
        Err(Refused::Held(pid)) => Err(PickRefused::Other(refusal(owner.node, pid, &path))),
        Err(Refused::Left(_)) if ask.node.is_none() => Err(PickRefused::Held(None)),
        Err(Refused::Left(uid)) => Err(PickRefused::Other(left_refusal(owner.node, uid, &path))),
        // A pick the guard cannot check could be any process's: passed over.
        Err(Refused::Unusable(e)) if ask.node.is_none() => Err(PickRefused::Unusable(e)),
        Err(Refused::Unusable(e)) => {
            warn_unusable(dir, &e);
            Ok(None)
        }
    }
}

/// A lost node id's guard taken back: the counter goes on from where it stopped,
/// or past the floor the process that held the node id meanwhile left, whichever
/// is higher. Its generators issue again at once when `now` (a build, which waits
/// out the floor itself), else once the clock is within their lead of that point
/// (until then they refuse as lost, never as a clock gone back); the watcher asks
/// again every period. Nothing for an owner not lost.
fn recover(owner: &Owner, floor_ms: Option<u64>, now: bool) {
    if !owner.is_lost() {
        return;
    }
    if let Some(floor) = floor_ms {
        owner.parked.fetch_max(owner.slot_after(floor), Ordering::AcqRel);
    }
    let from = owner.parked.load(Ordering::Acquire);
    let last_ms = owner.epoch_ms + (from.saturating_sub(1) >> owner.sb).saturating_mul(owner.tick_ms);
    if !now && last_ms > crate::clock::precise_now_ms().saturating_add(owner.lead_ms()) {
        return;
    }
    // The guard was just found this process's (taken, or taken back).
    owner.confirm(crate::clock::precise_now_ms());
    // The counter first, then the flag: a call that sees the flag down (Acquire)
    // sees the counter's new value.
    owner.counter.0.store(from, Ordering::Release);
    owner.lost.store(false, Ordering::Release);
    crate::fork::end_handle_epoch();
}

/// Adds a generator to `owner` once its settings agree with the live ones' (the
/// first generator after none sets them).
fn enter(owner: &'static Owner, ask: &Ask<'_>, floor_ms: Option<u64>) -> Result<Share> {
    if owner.is_lost() {
        return Err(owner.lost_error());
    }
    let mut live = lock(&owner.live);
    if live.handles == 0 {
        live.state = ask.state.map(str::to_string);
        // The guard's bound is set below, from this guard (or none).
        owner.counter.1.store(0, Ordering::Release);
        // Closed since the last generator let the guard go (`Owner::leave`): open.
        let parked = owner.parked.load(Ordering::Acquire);
        let _ = owner
            .counter
            .0
            .compare_exchange(u64::MAX, parked, Ordering::AcqRel, Ordering::Relaxed);
    }
    if live.state.as_deref() != ask.state {
        let name = |s: Option<&str>| s.map_or("no state file".to_string(), |p| format!("state file {p:?}"));
        return Err(Error::config(
            "state",
            format!(
                "a generator on node id {} of this layout in this process keeps {} and this one {}: generators \
                 on one node id share one counter and one state, so give them the same state (or another node id)",
                owner.node,
                name(live.state.as_deref()),
                name(ask.state)
            ),
        ));
    }
    let before = owner.max_ahead.fetch_max(ask.ahead_ticks, Ordering::Relaxed);
    if ask.ahead_ticks > before
        && let Some(guard) = &mut live.guard
    {
        guard.set_ahead(ask.ahead_ticks * owner.tick_ms);
    }
    // The guard's bound: from the guard just read (and the lead, which may have
    // grown); none where no guard is held (off, or a directory it cannot use).
    if live.guard.is_some() {
        owner.confirm(crate::clock::precise_now_ms());
    } else {
        owner.counter.1.store(u64::MAX, Ordering::Release);
    }
    live.handles += 1;
    Ok(Share {
        owner,
        floor_ms,
        kept: false,
    })
}

/// Starts this process's watcher of held guard files, once per process (a forked
/// child starts its own).
fn watch_from_now() {
    static STARTED_BY: StdAtomicU64 = StdAtomicU64::new(0);
    let pid = u64::from(std::process::id());
    if STARTED_BY.swap(pid, Ordering::AcqRel) == pid {
        return;
    }
    let spawned = std::thread::Builder::new().name("flakeid-host-guard".into()).spawn(|| {
        loop {
            std::thread::sleep(std::time::Duration::from_millis(host_guard::WATCH_MS));
            watch_once();
        }
    });
    if spawned.is_err() {
        STARTED_BY.store(0, Ordering::Release);
    }
}

/// Checks every guard this process holds (see `HostGuard::watch`), and takes back
/// any it lost once the process that took it lets go.
pub(crate) fn watch_once() {
    let pid = std::process::id();
    let owners: Vec<&'static Owner> = table().iter().copied().filter(|o| o.pid == pid).collect();
    for owner in owners {
        check(owner, &mut lock(&owner.live));
    }
}

/// Checks one owner's guard file (the watcher's look, or a claim's that met the
/// guard's bound): still this process's, the bound moves on; removed or replaced,
/// taken again, or the node id stops.
fn check(owner: &Owner, live: &mut Live) {
    let lead = owner.lead_ms();
    let Some(guard) = &mut live.guard else {
        if owner.is_lost() && live.handles > 0 {
            take_back(owner, live);
        }
        return;
    };
    // Taken back, waiting for the clock to reach the other process's floor.
    recover(owner, None, false);
    // Read before the look: the file was this process's at least until then.
    let at = crate::clock::precise_now_ms();
    let floor = || crate::clock::precise_now_ms() + lead + owner.tick_ms;
    match guard.watch(lead, floor) {
        Watched::Same => owner.confirm(at),
        Watched::Retaken(floor) => {
            if let Some(floor) = floor {
                owner.raise_past(floor);
            }
            owner.confirm(at);
            eprintln!(
                "flakeid: warning: the host guard file of node id {} was removed or replaced while this process \
                 held it; it is held again",
                owner.node
            );
        }
        Watched::Lost(by) => {
            // Reported once: the file is the other process's now.
            live.guard = None;
            owner.lose();
            eprintln!(
                "flakeid: error: the host guard file of node id {} was removed or replaced while this process \
                 held it, and {} took the node id: this process's generators on it stop issuing until that \
                 process lets it go",
                owner.node,
                by.map_or("another process".to_string(), |p| format!("process {p}"))
            );
        }
    }
}

/// One attempt to take back a lost node id's guard file (the watcher's, every
/// period while generators on it live).
fn take_back(owner: &Owner, live: &mut Live) {
    let Some(path) = live.path.clone() else {
        return;
    };
    if let Ok(taken) = host_guard::take(&path, owner.node, owner.lead(owner.lead_ms())) {
        live.guard = Some(taken.guard);
        recover(owner, taken.floor_ms, false);
        eprintln!(
            "flakeid: warning: node id {} is this process's again (its host guard file was let go): its \
             generators issue again above the other process's IDs (once the clock reaches them)",
            owner.node
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_space_not_the_preset_name() {
        let custom = Layout::builder().build().unwrap();
        assert_eq!(key(&Layout::SNOWFLAKE, 5), key(&custom, 5));
        assert_ne!(key(&Layout::SNOWFLAKE, 5), key(&Layout::SNOWFLAKE, 6));
        assert_ne!(key(&Layout::SNOWFLAKE, 5), key(&Layout::SONYFLAKE, 5));
    }
}
