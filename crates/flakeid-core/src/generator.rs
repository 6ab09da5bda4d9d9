//! The generator: a lock-free (time, sequence) counter plus a node id.
//!
//! State is one `AtomicU64` holding the *next free slot* `ticks << sequence_bits |
//! sequence`. Issuing reserves slots with a single compare-and-swap, so one
//! generator shared by many threads never repeats a slot and each thread sees its
//! own slots increase (CAS results are totally ordered). A slot past the current
//! tick's last sequence number *is* the next tick's first, which makes "borrowing
//! future time" the same counter allowed to run up to `max_borrow_ms` ahead of the
//! clock, and strict mode the same counter allowed 0 ticks ahead.
//!
//! The clock is read through [`Clock::now_ms`] (cheap, possibly a little stale) on
//! the fast path. Anything that would wait, or report the clock going backwards, is
//! decided only on a fresh [`Clock::now_ms_precise`] reading.

use crate::clock::Clock;
#[cfg(feature = "std")]
use crate::clock::SystemClock;
use crate::counter::{CounterStorage, OwnCounter};
use crate::error::{Error, Result};
use crate::fork;
use crate::layout::{Layout, Slots};
#[cfg(feature = "lease")]
use crate::lease::{self, Gate, LeaseGuard, LeaseState};
use crate::policy::{ClockBackwards, Overflow};
use crate::stats::{Counters, Episode, Stats};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::Cell;
use core::fmt;
use core::sync::atomic::Ordering;

#[cfg(test)]
mod budget_tests;
mod local;
mod not_blocking;
pub use local::LocalGenerator;
pub use not_blocking::AsyncSleep;

/// Most slots a run reserves at once: a thread's lone run, or a per-thread
/// handle's ([`Generator::local`]). Fewer (a 16th of a tick, at least 2) when a
/// tick has fewer than 2048 slots, so that runs held at low rates do not take
/// whole ticks.
pub(crate) const MAX_RUN: u64 = 128;

/// Most slots a per-thread handle's run ([`Generator::local`]) reserves at once:
/// fewer (a quarter of a tick, at least 2) when a tick has fewer than 4096 slots.
/// A handle asked for per-thread speed, and each run costs a compare-and-swap
/// and the checks of a new clock reading, which take as long as a hundred calls
/// of the fast path when the counter's or the clock's cache line comes from
/// another core (docs/performance.md, the peers bench). A handle that stops
/// within a tick leaves the rest of its run unissued (passed over): at most a
/// quarter of that tick's slots, and its next run is halved when more than half
/// of it was left.
pub(crate) const MAX_HANDLE_RUN: u64 = 1024;

/// The public calls that serve from a thread's lone run, told apart for
/// [`Generator::take_from_run`].
const NEXT_ID: u8 = 0;
pub(crate) const NEXT_ID_ASYNC: u8 = 1;
const TRY_NEXT_ID: u8 = 2;

/// `fork_generation` of a closed generator (no process forks 2^64 − 1 times).
const CLOSED: u64 = u64::MAX;
/// How often (ms of real time) a waiting call runs the builder's wait hook.
const WAIT_HOOK_EVERY_MS: u64 = 10;

/// A thread's lone run of one generator's slots, served only while the counter
/// still reads `end`, i.e. while no reservation came after it.
#[derive(Debug, Clone, Copy)]
struct Run {
    /// The generator's uid (`Runs::uid`); 0: a free cell.
    uid: u64,
    /// The next slot to issue; `next == end`: no slot left.
    next: u64,
    /// One past the run's last slot: what the counter reads while the run is its last.
    end: u64,
    /// The size the thread's next run asks for.
    want: u64,
}

impl Run {
    /// A free cell of the table.
    const FREE: Run = Run {
        uid: 0,
        next: 0,
        end: 0,
        want: 0,
    };
}

#[cfg(all(feature = "std", not(loom)))]
thread_local! {
    /// Per-thread runs of reserved slots, one entry per generator, four generators
    /// at most (see `next_id`).
    static RUNS: [Cell<Run>; 4] = const { [const { Cell::new(Run::FREE) }; 4] };
}
#[cfg(loom)]
loom::thread_local! {
    static RUNS: [Cell<Run>; 4] = [const { Cell::new(Run::FREE) }; 4];
}

/// Without std there are no thread-locals, so no lone runs: the builder turns them
/// off (`Runs::lone`), every call takes its slot from the counter, and this table is
/// empty.
#[cfg(not(feature = "std"))]
struct NoRuns;
#[cfg(not(feature = "std"))]
impl NoRuns {
    fn with<R>(&self, f: impl FnOnce(&[Cell<Run>]) -> R) -> R {
        f(&[])
    }
}
#[cfg(not(feature = "std"))]
static RUNS: NoRuns = NoRuns;

/// Slots the first lone run of a thread asks for (after its first ID, taken alone);
/// each lone run spent whole doubles it, up to the generator's run size, and each
/// one passed over with slots left (a new tick, or another reservation came first)
/// halves it.
const FIRST_LONE_RUN: u64 = 2;

/// Most IDs one `next_ids(n)` call makes (2^27: a 1 GiB `Vec<u64>`). Beyond it a
/// call is a configuration error, not an allocation that aborts the process.
/// `fill` has no limit: the caller already holds the memory.
pub const MAX_BATCH: usize = 1 << 27;

/// Why a call cannot have a slot yet (what [`Generator::reserve_now`] decided).
#[derive(Debug, Clone, Copy)]
enum Pending {
    /// The clock (reading tick `t`) must reach the next tick (a used-up tick or
    /// borrow window).
    NextTick { t: u64 },
    /// The clock (reading tick `t`) is `by_ms` behind IDs already issued; the
    /// policy waits for it.
    Behind { t: u64, by_ms: u64 },
}

impl Pending {
    fn tick(self) -> u64 {
        match self {
            Pending::NextTick { t } | Pending::Behind { t, .. } => t,
        }
    }
}

/// What one decision on a precise reading ([`Generator::reserve_now`]) gave.
enum Reserve {
    /// `count` slots from `first` are the caller's.
    Won { first: u64, count: u64 },
    /// No slot yet: the caller waits (or, never waiting, gives up), and why.
    Wait(Pending),
}

/// What a call that may wait brings to a verdict ([`Generator::reserve_now`]), and
/// what it takes back.
struct Wait {
    /// What is left of the call's `max_wait_ms` (real time since its entry).
    left_ms: u64,
    /// Set when the slots won are a borrowing sibling's, ahead of this
    /// generator's window: the caller returns them when the clock gets there.
    early: bool,
}

/// What a thread's run table gave for a generator.
enum Take {
    /// A slot of the thread's run.
    Slot(u64),
    /// The thread's lone run is used up, out of the clock's range, or no longer
    /// the counter's last reservation: the next asks for this many slots.
    Lone(u64),
    /// The thread keeps no run of this generator.
    Absent,
}

/// What one compare-and-swap attempt on the counter got.
enum Claim {
    /// `(first slot, count)` are ours.
    Won(u64, u64),
    /// Another thread moved the counter first: try again.
    Raced,
    /// Every slot the clock allows is taken; the counter reads this.
    Blocked(u64),
}

pub(crate) enum ClockRef {
    /// The system clock (std only: without it a generator reads the clock it is given).
    #[cfg(feature = "std")]
    System,
    Custom(Arc<dyn Clock>),
}

impl ClockRef {
    #[inline(always)]
    fn now_ms(&self) -> u64 {
        match self {
            #[cfg(feature = "std")]
            ClockRef::System => SystemClock.now_ms(),
            ClockRef::Custom(c) => c.now_ms(),
        }
    }
    /// [`now_ms`](Self::now_ms) for a caller that calls [`touch`](Self::touch)
    /// whenever its reading changes (`clock::cached_now_ms_untouched`).
    #[inline(always)]
    fn now_ms_untouched(&self) -> u64 {
        match self {
            #[cfg(feature = "std")]
            ClockRef::System => crate::clock::cached_now_ms_untouched(),
            ClockRef::Custom(c) => c.now_ms(),
        }
    }
    /// Whether this is the system clock (whose cache a handle's fast path reads).
    #[inline(always)]
    fn is_system(&self) -> bool {
        #[cfg(feature = "std")]
        return matches!(self, ClockRef::System);
        #[cfg(not(feature = "std"))]
        false
    }
    #[inline(always)]
    fn touch(&self) {
        #[cfg(feature = "std")]
        if let ClockRef::System = self {
            crate::clock::touch();
        }
    }
    fn now_ms_precise(&self) -> u64 {
        match self {
            #[cfg(feature = "std")]
            ClockRef::System => SystemClock.now_ms_precise(),
            ClockRef::Custom(c) => c.now_ms_precise(),
        }
    }
    fn pause(&self) {
        match self {
            #[cfg(feature = "std")]
            ClockRef::System => SystemClock.pause(),
            ClockRef::Custom(c) => c.pause(),
        }
    }
    /// Whether the given clock reads real time of its own (`Clock::monotonic_ms`).
    #[cfg(not(feature = "std"))]
    fn has_monotonic(&self) -> bool {
        let ClockRef::Custom(c) = self;
        c.monotonic_ms().is_some()
    }
    /// Real elapsed ms for bounding waits: the monotonic clock, or (where the
    /// platform has none) the generator's own clock.
    fn monotonic_ms(&self) -> u64 {
        let mono = match self {
            #[cfg(feature = "std")]
            ClockRef::System => SystemClock.monotonic_ms(),
            ClockRef::Custom(c) => c.monotonic_ms(),
        };
        mono.unwrap_or_else(|| self.now_ms_precise())
    }
}

/// Issues IDs. `Send + Sync`, and linearizable: shared by threads (e.g. in an
/// `Arc`), a call that starts after another call returned gets the larger ID.
/// Generators built in one process on the same node id and layout issue from one
/// counter, and the node id is this process's on the host until the last of them
/// is closed or dropped (docs/design.md, "Who owns a node id").
///
/// ```
/// use flakeid_core::{Generator, Layout};
/// let g = Generator::builder(Layout::SNOWFLAKE).datacenter(3).worker(2).build()?;
/// let a = g.next_id()?;
/// let b = g.next_id()?;
/// assert!(b > a);
/// let p = Layout::SNOWFLAKE.decompose(b);
/// assert_eq!((p.datacenter, p.worker), (3, 2));
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub struct Generator<C: CounterStorage = OwnCounter> {
    /// Next free slot: `ticks << sb | sequence`.
    pub(crate) state: C,
    /// What the layout decided about slots for this node id ([`Layout::slots`]).
    pub(crate) slots: Slots,
    /// This generator's per-thread runs of slots.
    pub(crate) runs: Runs,
    /// Slow-path statistics ([`Generator::stats`]).
    pub(crate) counters: Counters,
    /// The counter's value when this generator was built.
    pub(crate) initial: u64,
    pub(crate) clock: ClockRef,
    /// The fork generation it was built under, or [`CLOSED`] once closed: a
    /// generator in a forked child or after `close()` refuses on the same check.
    pub(crate) fork_generation: crate::sync::PlainAtomicU64,
    pub(crate) layout: Layout,
    /// Where the node id came from ([`Generator::node_origin`]).
    pub(crate) origin: crate::NodeOrigin,
    /// What a call does when a tick is full or the clock goes back (the builder's).
    pub(crate) policy: crate::clock_policy::ClockPolicy,
    /// What keeps the node id this generator's ([`Guards`]); empty in builds with
    /// neither leases nor the host guard (WebAssembly).
    #[cfg_attr(not(any(feature = "lease", host_guard)), allow(dead_code))]
    pub(crate) guards: Guards,
}

/// A generator's per-thread runs of reserved slots (see `next_id`).
pub(crate) struct Runs {
    /// Identifies the generator in the per-thread table of runs; never reused.
    pub(crate) uid: u64,
    /// Whether threads keep lone runs (see `next_id`): all but generators that go
    /// on in a forked child (the 128-bit engine: no node id to keep apart), whose
    /// thread-local runs the child would inherit. So `!lone` is also "goes on in a
    /// forked child" (`forked`).
    pub(crate) lone: bool,
    /// Slots in a thread's run ([`MAX_RUN`] or fewer).
    pub(crate) run: u64,
    /// Most slots in a per-thread handle's run ([`MAX_HANDLE_RUN`] or fewer).
    pub(crate) handle_run: u64,
    /// One more than the last tick in which threads were seen contending
    /// (`contended`); 0: never.
    pub(crate) contended: crate::sync::PlainAtomicU64,
}

/// What keeps a generator's node id its own: its lease, or its process's owner of
/// the node id (the shared counter and the host guard).
pub(crate) struct Guards {
    /// Set for leased generators: the validity window the heartbeat publishes.
    #[cfg(feature = "lease")]
    pub(crate) lease_gate: Option<Arc<Gate>>,
    #[cfg(feature = "lease")]
    pub(crate) lease: Option<LeaseGuard>,
    /// The process's owner of the node id, whose counter this generator issues
    /// from: while any generator is on it, the process holds the node id's host
    /// guard.
    #[cfg(host_guard)]
    pub(crate) owner: Option<&'static crate::owner::Owner>,
    /// Whether this generator gave its share of the owner up (`close()`, drop).
    #[cfg(host_guard)]
    pub(crate) left: core::sync::atomic::AtomicBool,
}

impl<C: CounterStorage> Generator<C> {
    /// The next ID, above every ID of this generator (and of every generator on its
    /// counter) returned before the call began.
    ///
    /// A thread serves its calls from a *lone run*: slots it reserved with one CAS,
    /// used while the counter still reads the run's end (one load), that is while
    /// no reservation came after it. Every ID issued elsewhere since is then above
    /// the run, so the generator's IDs keep the order of the calls that issued them,
    /// as with one CAS per ID (docs/design.md, "A thread alone: lone runs"). Under
    /// contention each call takes one slot with one CAS; per-thread runs without
    /// that check are [`Generator::local`]'s.
    #[inline]
    pub fn next_id(&self) -> Result<u64> {
        match self.next_id_unless_waiting::<NEXT_ID>()? {
            Some(id) => Ok(id),
            None => {
                let (first, _) = self.reserve_slow(1, 1)?;
                Ok(self.id_of(first))
            }
        }
    }

    /// [`next_id`](Self::next_id) up to where it would decide on a precise reading
    /// (and maybe wait): `None` there. The blocking and the async call share it
    /// (`CALLER`: see [`take_from_run`](Self::take_from_run)).
    #[inline(always)]
    fn next_id_unless_waiting<const CALLER: u8>(&self) -> Result<Option<u64>> {
        let t = self.checked_tick()?;
        if self.runs.lone {
            match self.take_from_run::<CALLER>(t << self.slots.sb, self.limit(t)) {
                Take::Slot(slot) => return Ok(Some(self.id_of(slot))),
                Take::Lone(want) => return Ok(self.next_lone_run(t, want)),
                Take::Absent => {}
            }
        }
        Ok(self.claim_one(t).map(|start| {
            if self.runs.lone {
                // Remembered with no slot: the next call asks for a run.
                self.keep_run(start + 1, start + 1, FIRST_LONE_RUN / 2);
            }
            self.id_of(start)
        }))
    }

    /// One slot on the cached reading of tick `t`, retrying lost races (each retry
    /// loads the counter afresh); `None` when the clock allows none (a verdict for
    /// a precise reading).
    #[inline(always)]
    fn claim_one(&self, t: u64) -> Option<u64> {
        loop {
            match self.claim(t, 1) {
                Claim::Won(start, _) => return Some(start),
                Claim::Raced => {
                    self.contended(t);
                    core::hint::spin_loop()
                }
                Claim::Blocked(_) => return None,
            }
        }
    }

    /// Notes that threads of a strict generator contend in tick `t` (a lost race, a
    /// lone run passed by another thread's reservation): lone runs then take at
    /// most a 4096th of what the tick has left until the tick after next
    /// ([`next_lone_run`](Self::next_lone_run)), so that the cap's slots are not
    /// passed over. One store per tick at most. Not
    /// under loom, whose models explore lone runs under contention.
    #[inline(always)]
    fn contended(&self, t: u64) {
        // A borrowing generator's passed-over slots cost lead, not IDs of the tick:
        // its threads keep their lone runs (twice the contended rate, measured).
        #[cfg(not(loom))]
        if self.slots.ahead == 0 && self.runs.contended.load(Ordering::Relaxed) <= t {
            self.runs.contended.store(t.saturating_add(1), Ordering::Relaxed);
        }
        #[cfg(loom)]
        let _ = t;
    }

    /// The next slot of this thread's lone run, if it has one the clock allows
    /// (`floor`..`limit`: the current tick's first slot, the window's end) and the
    /// counter still reads its end.
    ///
    /// `CALLER` tells the public calls apart (`NEXT_ID`, `NEXT_ID_ASYNC`,
    /// `TRY_NEXT_ID`) so that each has a thread-local access of its own: shared, the
    /// access had several callers in a program that used two of them, and the
    /// compiler kept it out of line, 24 instructions more per ID (the peers bench,
    /// `next_id` 101.6 → 125.6 in a binary that also awaited `next_id_async`).
    #[inline]
    fn take_from_run<const CALLER: u8>(&self, floor: u64, limit: u64) -> Take {
        RUNS.with(|runs| {
            for c in runs {
                // Taken apart at once (not kept whole): the uid's compare then reads
                // the thread-local cell in place, as the fast path wants.
                let Run { uid, next, end, want } = c.get();
                if uid == self.runs.uid {
                    let slot = next.max(floor);
                    if slot < end && slot < limit && self.state.get().load(Ordering::Relaxed) == end {
                        if slot > next {
                            self.counters.skip(slot - next);
                        }
                        c.set(Run {
                            uid,
                            next: slot + 1,
                            end,
                            want,
                        });
                        return Take::Slot(slot);
                    }
                    let next_run = self.end_lone_run(c, Run { uid, next, end, want });
                    if next_run.is_none() {
                        self.contended(floor >> self.slots.sb);
                    }
                    return Take::Lone(next_run.unwrap_or(1));
                }
            }
            Take::Absent
        })
    }

    /// Ends this thread's lone run `run`, kept in `c`, and
    /// returns the size of its next one (`None`: one slot, because another thread
    /// reserved after it). If no reservation came after it, its
    /// unused rest goes back to the counter (no slot lost: single-threaded output
    /// is the counter's, slot after slot) and the next run is twice as large when
    /// it was spent whole, half as large when a new tick or the window ended it.
    /// Otherwise another thread reserved since: the rest is passed over, and the
    /// next run is one slot, grown again only while the thread finds itself alone.
    #[inline(never)]
    fn end_lone_run(&self, c: &Cell<Run>, Run { uid, next, end, want }: Run) -> Option<u64> {
        let counter = self.state.get();
        let rest = end.saturating_sub(next);
        let alone = counter.load(Ordering::Relaxed) == end
            && (rest == 0
                || counter
                    .compare_exchange(end, next, Ordering::Release, Ordering::Relaxed)
                    .is_ok());
        let want = match (alone, rest) {
            (true, 0) => Some((want * 2).min(self.runs.run)),
            (true, _) => Some((want / 2).max(1)),
            (false, _) => {
                self.counters.skip(rest);
                None
            }
        };
        c.set(Run {
            uid,
            next: 0,
            end: 0,
            want: want.unwrap_or(1),
        });
        want
    }

    /// Ends this thread's lone run of this generator, if it keeps one, before a
    /// reservation of its own from the counter (a batch): its rest goes back to
    /// the counter when it can, so the batch follows the thread's last ID.
    fn end_own_lone_run(&self) {
        if !self.runs.lone {
            return;
        }
        RUNS.with(|runs| {
            for c in runs {
                let run = c.get();
                if run.uid == self.runs.uid && run.want > 0 {
                    self.end_lone_run(c, run);
                }
            }
        });
    }

    /// A new lone run of up to `want` slots in one tick, reserved while the clock
    /// reads tick `t`; its first slot is the ID returned. A lost race or a full
    /// window goes the way of a single slot: `None` where that needs a decision on a
    /// precise reading (the caller's `reserve_slow`, or its async call's).
    #[cold]
    #[inline(never)]
    fn next_lone_run(&self, t: u64, want: u64) -> Option<u64> {
        let cur = self.state.get().load(Ordering::Relaxed);
        let start = cur.max(t << self.slots.sb);
        // Within the first slot's tick: a run never holds the next tick's slots,
        // which `last_issued_ms` and the lead would count before any is issued.
        let in_tick = (self.slots.seq_cap + 1)
            .saturating_sub(start & self.slots.seq_mask)
            .max(1);
        // Threads of a strict generator contended in this tick or the last: a run's
        // rest would likely be passed over by another thread's next slot, slots
        // the tick's cap needs. At most a 4096th of what the tick has left: one slot
        // on small ticks (as the contended path takes), no limit on wide ones.
        let contended = self.runs.contended.load(Ordering::Relaxed);
        let want = if contended != 0 && contended >= t {
            want.min((in_tick >> 12).max(1))
        } else {
            want
        };
        match self.claim_from(cur, t, want.min(in_tick)) {
            Claim::Won(first, count) => {
                self.keep_run(first + 1, first + count, want);
                Some(self.id_of(first))
            }
            Claim::Raced => {
                self.contended(t);
                self.claim_one(t).map(|first| self.id_of(first))
            }
            Claim::Blocked(_) => None,
        }
    }

    /// Takes a lone run of the generator's full run size for the calling thread and
    /// returns the ID of its first slot: for tests and the loom model, which need a
    /// thread holding a run with slots left.
    #[cfg(any(test, loom))]
    #[doc(hidden)]
    pub fn take_run_for_test(&self) -> Result<u64> {
        let t = self.ticks(self.clock.now_ms())?;
        self.end_own_lone_run();
        match self.next_lone_run(t, self.runs.run) {
            Some(id) => Ok(id),
            None => Ok(self.id_of(self.reserve_slow(1, 1)?.0)),
        }
    }

    /// Keeps `next..end` as this thread's lone run of this generator, asking `want`
    /// slots next.
    fn keep_run(&self, next: u64, end: u64, want: u64) {
        RUNS.with(|runs| {
            // This generator's cell (one per generator), else a free one, else one
            // by the uid: a run evicted from it is passed over (counted as issued).
            let own = runs.iter().position(|c| c.get().uid == self.runs.uid);
            let free = || runs.iter().position(|c| c.get().uid == 0);
            let i = own
                .or_else(free)
                .unwrap_or((self.runs.uid % runs.len() as u64) as usize);
            runs[i].set(Run {
                uid: self.runs.uid,
                next,
                end,
                want,
            });
        });
    }

    /// Moves the counter to the first slot of a tick none of whose slots was reserved
    /// yet (where it already is, at a tick's first slot, it stays), and returns that
    /// tick: every slot reserved before lies in an earlier tick. The passed-over rest
    /// of the tick counts as skipped.
    #[cfg(feature = "lease")]
    pub(crate) fn start_fresh_tick(&self) -> u64 {
        let counter = self.state.get();
        let per_tick = 1u64 << self.slots.sb;
        let mut cur = counter.load(Ordering::Acquire);
        loop {
            let tick = cur.div_ceil(per_tick);
            let fresh = tick << self.slots.sb;
            if fresh == cur {
                return tick;
            }
            match counter.compare_exchange(cur, fresh, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    self.counters.enter_tick(fresh - cur, tick);
                    return tick;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// Forgets the calling thread's run of slots, if it keeps one of this generator
    /// (its unused slots are passed over); done before reserving from the counter
    /// directly. A caller that checks IDs against a gate of its own
    /// (`lease::SharedGateCheck`) calls it after a refusal, so that its retry takes
    /// fresh slots instead of the rest of a run that the gate would refuse as well.
    pub fn drop_run(&self) {
        if !self.runs.lone {
            return;
        }
        RUNS.with(|runs| {
            for c in runs {
                let run = c.get();
                if run.uid == self.runs.uid {
                    self.counters.skip(run.end.saturating_sub(run.next));
                    c.set(Run::FREE);
                }
            }
        });
    }

    /// Fills `out` with fresh IDs, increasing and above every ID returned before the
    /// call began. Runs of slots are reserved with one atomic step each (a whole
    /// tick's worth at a time, or more when borrowing), all during the call, so a
    /// gate that checks a batch's last ID (`lease::SharedGateCheck`, as the
    /// PostgreSQL extension does) has checked the reservation of every one. On
    /// error the slots written so far hold valid, unique IDs.
    pub fn fill(&self, out: &mut [u64]) -> Result<()> {
        self.end_own_lone_run();
        let mut done = 0usize;
        while done < out.len() {
            let want = (out.len() - done) as u64;
            let (start, count) = self.reserve(want)?;
            for (i, slot) in out[done..done + count as usize].iter_mut().enumerate() {
                *slot = self.id_of(start + i as u64);
            }
            done += count as usize;
        }
        Ok(())
    }

    /// [`Generator::next_id`] that never waits: `Ok(None)` where `next_id` would wait
    /// (the tick's sequence is used up, or a rollback policy would wait for the
    /// clock). flake-idgen's synchronous `next()` throws there; callers retry later.
    /// A thread's lone run serves it as it serves `next_id`.
    pub fn try_next_id(&self) -> Result<Option<u64>> {
        let t = self.checked_tick()?;
        if self.runs.lone {
            match self.take_from_run::<TRY_NEXT_ID>(t << self.slots.sb, self.limit(t)) {
                Take::Slot(slot) => return Ok(Some(self.id_of(slot))),
                Take::Lone(_) | Take::Absent => {}
            }
        }
        match self.claim_one(t) {
            Some(start) => Ok(Some(self.id_of(start))),
            None => Ok(self.try_reserve_now(1, 1)?.map(|(start, _)| self.id_of(start))),
        }
    }

    /// The slots left in the calling thread's run of this generator.
    fn own_run_left(&self) -> u64 {
        if !self.runs.lone {
            return 0;
        }
        RUNS.with(|runs| {
            runs.iter()
                .map(Cell::get)
                .find(|run| run.uid == self.runs.uid)
                .map_or(0, |run| run.end.saturating_sub(run.next))
        })
    }

    /// One decision on a precise reading, never a wait: `None` where `reserve_slow`
    /// would wait.
    #[cold]
    fn try_reserve_now(&self, n: u64, behind: u64) -> Result<Option<(u64, u64)>> {
        let mut ep = Episode::default();
        let r = self.reserve_now(n, behind, &mut ep, None);
        self.counters.record(ep, 0);
        Ok(match r? {
            Reserve::Won { first, count } => Some((first, count)),
            Reserve::Wait(_) => None,
        })
    }

    /// `n` fresh IDs, increasing; `n` at most [`MAX_BATCH`].
    pub fn next_ids(&self, n: usize) -> Result<Vec<u64>> {
        if n > MAX_BATCH {
            return Err(batch_error(n));
        }
        let mut v = vec![0u64; n];
        self.fill(&mut v)?;
        Ok(v)
    }

    /// The layout of the IDs this generator issues.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// The node id (with a lease: the leased one).
    pub fn node(&self) -> u64 {
        self.slots.node
    }
    /// The datacenter part of the node id (0 in layouts without one).
    pub fn datacenter(&self) -> u64 {
        self.slots.node >> self.layout.worker_bits()
    }
    /// The worker part of the node id.
    pub fn worker(&self) -> u64 {
        self.slots.node & self.layout.max_worker()
    }
    /// The overflow policy.
    pub fn overflow(&self) -> Overflow {
        self.policy.overflow
    }
    /// How far borrowing may run ahead of the clock, in ms.
    pub fn max_borrow_ms(&self) -> u64 {
        self.policy.max_borrow_ms
    }
    /// The clock-backwards policy.
    pub fn clock_backwards(&self) -> ClockBackwards {
        self.policy.clock_backwards
    }
    /// How long the wait policies wait for the clock, in ms.
    pub fn max_wait_ms(&self) -> u64 {
        self.policy.max_wait_ms
    }

    /// The Unix-ms start of the tick of the last ID issued (`None` before the first).
    /// A lease stores this so the next holder of the node id starts after it.
    pub fn last_issued_ms(&self) -> Option<u64> {
        let next = self.state.get().load(Ordering::Acquire);
        (next > 0).then(|| self.layout.timestamp_of_ticks((next - 1) >> self.slots.sb))
    }

    /// What this generator has done since it was built: IDs issued, waits for the
    /// next tick, the lead over the clock, clock rollbacks, and the lease (see
    /// [`Stats`]). A few loads and a clock reading: cheap, but not free, so it is
    /// for monitoring, not for every ID.
    pub fn stats(&self) -> Stats {
        let ids_issued = if C::SHARED {
            0
        } else {
            // The calling thread's run is not issued yet (other threads' runs are
            // counted as issued: docs/design.md).
            self.counters
                .issued(self.state.get(), self.initial, self.slots.sb)
                .saturating_sub(self.own_run_left())
        };
        let now = self.clock.now_ms_precise();
        let lead_ms = self.last_issued_ms().map_or(0, |last| last.saturating_sub(now));
        #[cfg(feature = "lease")]
        let (lease_state, lease_remaining_ms) = match (self.leased(), &self.guards.lease_gate) {
            (Some(lease), Some(gate)) => (
                Some(lease.state().as_str()),
                Some(gate.window().wall_end_ms.saturating_sub(now)),
            ),
            _ => (None, None),
        };
        #[cfg(not(feature = "lease"))]
        let (lease_state, lease_remaining_ms) = (None, None);
        let stats = self
            .counters
            .snapshot(ids_issued, lead_ms, lease_state, lease_remaining_ms);
        Stats {
            node_origin: self.origin,
            ..stats
        }
    }

    /// Whether the node id is still ours (always, without a lease). One predictable
    /// branch for unleased generators; for leased ones three loads and one vDSO
    /// clock read (two loads for a file lease; `lease/gate.rs`).
    #[cfg(feature = "lease")]
    #[inline(always)]
    fn check_lease(&self, now_ms: u64) -> Result<()> {
        match &self.guards.lease_gate {
            Some(gate) if !gate.allows(now_ms) => Err(self.lease_refusal()),
            _ => Ok(()),
        }
    }

    #[cfg(not(feature = "lease"))]
    #[inline(always)]
    fn check_lease(&self, _now_ms: u64) -> Result<()> {
        Ok(())
    }

    #[cfg(feature = "lease")]
    #[cold]
    #[inline(never)]
    fn lease_refusal(&self) -> Error {
        match &self.guards.lease {
            Some(l) => l.refusal(),
            None => Error::Lease {
                message: "no lease".into(),
            },
        }
    }

    /// The lease, if the node id is leased (not a state file's guard).
    #[cfg(feature = "lease")]
    fn leased(&self) -> Option<&LeaseGuard> {
        self.guards.lease.as_ref().filter(|l| !l.is_state())
    }

    /// Whether this generator keeps a state file (the option `state`).
    pub fn has_state(&self) -> bool {
        #[cfg(feature = "lease")]
        return self.guards.lease.as_ref().is_some_and(LeaseGuard::is_state);
        #[cfg(not(feature = "lease"))]
        false
    }

    /// Where this generator's node-id lease stands (`None` without a lease).
    #[cfg(feature = "lease")]
    pub fn lease_state(&self) -> Option<LeaseState> {
        self.leased().map(LeaseGuard::state)
    }

    /// The lease's validity window as the hot path checks it now (`None` without a
    /// lease): for a process that copies it to generators of its own (see
    /// [`LeaseWindow`](crate::lease::LeaseWindow)).
    #[cfg(feature = "lease")]
    pub fn lease_window(&self) -> Option<lease::LeaseWindow> {
        self.leased()?;
        self.guards.lease_gate.as_ref().map(|g| g.window())
    }

    /// How long building waited, before the first ID, out the lease's lock delay:
    /// the store had no trustworthy record of the node id's earlier holders (the
    /// namespace's first use, or the store lost its data), so a holder it forgot
    /// might still have been issuing. `Some(0)`: no wait; `None`: no lease.
    #[cfg(feature = "lease")]
    pub fn lease_lock_delay_ms(&self) -> Option<u64> {
        self.leased().map(|l| l.lock_delay_ms)
    }

    /// How long the lease's last confirmed renewal took, store round trip included,
    /// in µs (for monitoring: a store slowing towards the TTL shows here first).
    /// `None` without a lease.
    #[cfg(feature = "lease")]
    pub fn lease_renew_latency_us(&self) -> Option<u64> {
        self.leased().map(|l| l.renew_latency_us())
    }

    /// Whether this generator's node id comes from a lease.
    pub fn is_leased(&self) -> bool {
        #[cfg(feature = "lease")]
        return self.leased().is_some();
        #[cfg(not(feature = "lease"))]
        false
    }

    /// Stops issuing IDs and lets go of the node id now rather than when the
    /// generator is dropped (in a garbage-collected binding, collected): its lease
    /// ([`release_lease`](Self::release_lease)), or its share of the process's
    /// counter of the node id; the last generator of the process on it lets the
    /// host guard go, so that another process can take the node id at once, above
    /// every ID issued here. Idempotent; every later call is a `Config` error on
    /// `generator`.
    pub fn close(&self) {
        self.fork_generation.store(CLOSED, Ordering::SeqCst);
        fork::end_handle_epoch();
        self.release_lease();
        self.leave_owner();
    }

    /// Gives up this generator's share of its node id's owner (crate::owner).
    fn leave_owner(&self) {
        // A forked child's copy of a parent's generator leaves the parent's owner
        // alone (it is not the child's, and its locks may have been held at the fork).
        #[cfg(host_guard)]
        if let Some(owner) = self.guards.owner
            && owner.is_mine()
            && !self.guards.left.swap(true, Ordering::AcqRel)
        {
            owner.leave();
        }
    }

    /// The tick a call issues in, on the cached clock, after the checks every slot
    /// passes: not forked nor closed, and the lease valid at that reading.
    #[inline(always)]
    fn checked_tick(&self) -> Result<u64> {
        self.check_alive()?;
        let now = self.clock.now_ms();
        self.check_lease(now)?;
        self.ticks(now)
    }

    /// The generator's clock now (its precise reading), for a caller outside the
    /// sequence (the 128-bit family's shifted "now"), after the same checks as a
    /// call that issues: refused when closed or, for a generator that must not,
    /// in a forked child.
    #[cfg(feature = "uuid7")]
    pub(crate) fn checked_now_ms(&self) -> Result<u64> {
        self.check_alive()?;
        Ok(self.clock.now_ms_precise())
    }

    /// Refused when closed, or in a forked child for a generator that must not go on.
    #[cfg(feature = "uuid7")]
    pub(crate) fn check_open(&self) -> Result<()> {
        self.check_alive()
    }

    /// Refuses in a forked child and after `close()` (one relaxed load).
    #[inline(always)]
    fn check_alive(&self) -> Result<()> {
        if fork::generation() != self.fork_generation.load(Ordering::Relaxed) {
            return self.forked();
        }
        Ok(())
    }

    /// In a forked child (or closed): refuse, or, for a generator that needs no
    /// node id, adopt the child's fork generation once and go on.
    #[cold]
    #[inline(never)]
    fn forked(&self) -> Result<()> {
        let was = self.fork_generation.load(Ordering::Relaxed);
        // `lone`: a generator that stops in a forked child (see `Runs::lone`).
        if self.runs.lone || was == CLOSED {
            return Err(self.gone());
        }
        let now = fork::generation();
        if self
            .fork_generation
            .compare_exchange(was, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.counters.reseeds.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Why a generator whose fork generation is not the process's refuses.
    #[cold]
    #[inline(never)]
    fn gone(&self) -> Error {
        if self.fork_generation.load(Ordering::Relaxed) == CLOSED {
            Error::config("generator", "this generator was closed: build a new one")
        } else {
            Error::Fork
        }
    }

    /// Stops issuing IDs and gives the node id back now (dropping the generator does
    /// the same). Records a timestamp no ID of this generator can exceed, so the next
    /// holder starts after it. Idempotent; a no-op without a lease. With a state
    /// file: writes that timestamp to it and unlocks it.
    pub fn release_lease(&self) {
        #[cfg(feature = "lease")]
        if let Some(lease) = &self.guards.lease {
            lease.close_gate();
            // Another thread may be between its lease check and its slot: bound what
            // it can still issue by the clock now (plus the borrow window), not only
            // by the counter. Its clock reading preceded its look at the (open) gate,
            // which preceded our closing it and so our reading; one tick more covers
            // a reading that straddles a tick boundary as the two were made.
            let by_clock = self.clock.now_ms_precise() + (self.slots.ahead + 1) * self.slots.tick_ms;
            lease.release(self.last_issued_ms().unwrap_or(0).max(by_clock));
        }
    }

    #[inline(always)]
    fn id_of(&self, slot: u64) -> u64 {
        ((slot >> self.slots.sb) << self.slots.time_shift)
            | self.slots.node_part
            | ((slot & self.slots.seq_mask) << self.slots.seq_shift)
    }

    #[inline(always)]
    fn ticks(&self, now_ms: u64) -> Result<u64> {
        if now_ms < self.slots.epoch_ms {
            return Err(self.time_error(now_ms));
        }
        let t = if self.slots.tick_ms == 1 {
            now_ms - self.slots.epoch_ms
        } else {
            (now_ms - self.slots.epoch_ms) / self.slots.tick_ms
        };
        if t > self.slots.max_ticks {
            return Err(self.time_error(now_ms));
        }
        Ok(t)
    }

    #[cold]
    fn time_error(&self, now_ms: u64) -> Error {
        match self.layout.ticks_at(now_ms) {
            Err(e) => e,
            Ok(_) => Error::TimeExhausted {
                message: format!("clock reads {now_ms} ms"),
            },
        }
    }

    /// Exclusive end of the slots that may be issued while the clock reads tick `t`.
    #[inline(always)]
    fn limit(&self, t: u64) -> u64 {
        self.limit_at(t.saturating_add(self.slots.ahead))
    }

    /// The first slot past tick `end` (the layout's last tick at most).
    #[inline(always)]
    fn limit_at(&self, end: u64) -> u64 {
        (end.min(self.slots.max_ticks) + 1) << self.slots.sb
    }

    /// Reserves up to `n` consecutive slots: `(first, count)` with `count >= 1`.
    #[inline(always)]
    fn reserve(&self, n: u64) -> Result<(u64, u64)> {
        match self.reserve_cached(n)? {
            Some(run) => Ok(run),
            None => self.reserve_slow(n, n),
        }
    }

    /// The fast path of [`Generator::reserve`] on the cached clock: `None` means
    /// "decide on a precise reading".
    #[inline(always)]
    fn reserve_cached(&self, n: u64) -> Result<Option<(u64, u64)>> {
        let t = self.checked_tick()?;
        match self.claim(t, n) {
            Claim::Won(start, count) => Ok(Some((start, count))),
            Claim::Raced | Claim::Blocked(_) => Ok(None),
        }
    }

    /// One attempt to take up to `n` slots while the clock reads tick `t`. The
    /// fast path's load is Relaxed: it never reaches a verdict (see `reserve_now`).
    #[inline(always)]
    fn claim(&self, t: u64, n: u64) -> Claim {
        self.claim_from(self.state.get().load(Ordering::Relaxed), t, n)
    }

    /// [`claim`](Self::claim) from a counter value `cur` the caller already loaded.
    #[inline(always)]
    fn claim_from(&self, cur: u64, t: u64, n: u64) -> Claim {
        let start = self.first_free(cur, t);
        self.claim_span(cur, start, self.limit(t), n)
    }

    /// [`claim_from`](Self::claim_from) below `limit` (an exclusive slot), rather
    /// than this generator's own window's end.
    #[inline(always)]
    fn claim_below(&self, cur: u64, t: u64, n: u64, limit: u64) -> Claim {
        self.claim_span(cur, self.first_free(cur, t), limit, n)
    }

    /// The first slot a claim at counter `cur` may take while the clock reads tick `t`.
    #[inline(always)]
    fn first_free(&self, cur: u64, t: u64) -> u64 {
        let start = cur.max(t << self.slots.sb);
        if self.slots.seq_cap < self.slots.seq_mask && start & self.slots.seq_mask > self.slots.seq_cap {
            // This generator's share of the tick is used up: the next tick's first.
            return ((start >> self.slots.sb) + 1) << self.slots.sb;
        }
        start
    }

    /// Takes up to `n` slots from `start`, below `limit` and the host guard's bound
    /// (one load, on the counter's line: a run claimed here bounds every slot
    /// later served from it), if the counter still reads `cur`.
    #[inline(always)]
    fn claim_span(&self, cur: u64, start: u64, limit: u64, n: u64) -> Claim {
        let limit = limit.min(self.state.guard_end());
        if start >= limit {
            return Claim::Blocked(cur);
        }
        let mut count = n.min(limit - start);
        if self.slots.seq_cap < self.slots.seq_mask {
            count = count.min(self.slots.seq_cap + 1 - (start & self.slots.seq_mask));
        }
        if self.swap(cur, start + count) {
            // The run starts a tick (a new tick's first slot, after a jump over
            // unused slots or not) or runs into the next one: once per tick, tell
            // `stats` (one test and branch on the fast path).
            let last = start + count - 1;
            if start & self.slots.seq_mask == 0 || (last ^ start) >> self.slots.sb != 0 {
                self.counters.enter_tick(start - cur, last >> self.slots.sb);
            }
            Claim::Won(start, count)
        } else {
            Claim::Raced
        }
    }

    /// Moves the counter from `cur` to `new` if no other thread moved it first.
    /// Release: a thread that later loads `new` with Acquire (`reserve_now`) and
    /// then reads the clock gets a reading no earlier than the one `new` was
    /// computed from — the fact the verdicts rest on. Nothing more is needed, so
    /// the compiler may still hoist the loads `id_of` makes above the CAS.
    #[inline(always)]
    fn swap(&self, cur: u64, new: u64) -> bool {
        self.state
            .get()
            .compare_exchange_weak(cur, new, Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// Contention, a used-up tick, a stale cached clock, or a rollback: decide on
    /// precise readings, pausing on the clock while the policy says wait. Every
    /// wait is bounded in real (monotonic) time by `tick_ms + max_wait_ms`, so a
    /// clock that stops or falls back gives an error, never a hang; the wait hook
    /// runs every [`WAIT_HOOK_EVERY_MS`] ms.
    #[cold]
    #[inline(never)]
    fn reserve_slow(&self, n: u64, behind: u64) -> Result<(u64, u64)> {
        let mut ep = Episode::default();
        let r = self.reserve_slow_in(n, behind, &mut ep);
        // The clock for the wait's µs is read only by calls that waited: a call that
        // merely lost a race (the contended path) reads nothing more.
        let now_us = if ep.wait_started_us.is_some() {
            self.wait_clock_us()
        } else {
            0
        };
        self.counters.record(ep, now_us);
        r
    }

    /// Real time in µs for [`Stats::tick_wait_us`]: the monotonic clock (in ms
    /// where the platform has no finer one).
    fn wait_clock_us(&self) -> u64 {
        #[cfg(all(feature = "std", not(all(target_family = "wasm", target_os = "unknown"))))]
        if let ClockRef::System = self.clock {
            return crate::sync::monotonic_us();
        }
        self.clock.monotonic_ms().saturating_mul(1000)
    }

    fn reserve_slow_in(&self, n: u64, behind: u64, ep: &mut Episode) -> Result<(u64, u64)> {
        let started = self.clock.monotonic_ms();
        // The tick the clock last read and when (real time) it was first read: the
        // bound is on the clock not *moving*, so a thread that keeps losing the
        // races for new ticks to other threads is not a stalled clock.
        let mut seen: Option<(u64, u64)> = None;
        let mut hook_at = WAIT_HOOK_EVERY_MS;
        loop {
            // Real time is read *before* the verdict's clock reading: a thread
            // preempted between the two must not count the preemption as a wait.
            let mono = self.clock.monotonic_ms();
            // A wait for a borrowing sibling's slots counts from the call's entry,
            // not from the last move of the tick it waits for: the sibling moves
            // that tick at every new ms.
            let mut wait = Wait {
                left_ms: self.policy.max_wait_ms.saturating_sub(mono.saturating_sub(started)),
                early: false,
            };
            let pending = match self.reserve_now(n, behind, ep, Some(&mut wait))? {
                Reserve::Won { first, count } if wait.early => {
                    return self.when_due((first, count), started, &mut hook_at, ep);
                }
                Reserve::Won { first, count } => return Ok((first, count)),
                Reserve::Wait(pending) => pending,
            };
            if let Pending::NextTick { .. } = pending
                && ep.wait_started_us.is_none()
            {
                ep.wait_started_us = Some(self.wait_clock_us());
            }
            if let Some(e) = self.waited_out(pending, &mut seen, mono) {
                return Err(e);
            }
            if let Some(crate::policy::Hook(hook)) = &self.policy.wait_hook {
                let waited = mono.saturating_sub(started);
                if waited >= hook_at {
                    hook()?;
                    hook_at = waited + WAIT_HOOK_EVERY_MS;
                }
            }
            self.clock.pause();
        }
    }

    /// The bound on a wait for the clock (`pending`, at real time `mono`): the error
    /// the call returns once the clock has not moved past the tick it waits on for
    /// `tick_ms + max_wait_ms` of real time. `seen` is the call's memory of that tick
    /// and when it was first read: the bound is on the clock not *moving*, so a call
    /// that keeps losing the races for new ticks to other threads is not stalled.
    fn waited_out(&self, pending: Pending, seen: &mut Option<(u64, u64)>, mono: u64) -> Option<Error> {
        let since = match *seen {
            Some((tick, since)) if tick >= pending.tick() => since,
            _ => {
                *seen = Some((pending.tick(), mono));
                mono
            }
        };
        let stalled = mono.saturating_sub(since);
        // Without std, only the given clock's `monotonic_ms` tells real time; a
        // clock with none cannot bound a wait (a stopped clock would hold the call
        // for good), so the call does not wait: the verdict comes at once.
        #[cfg(not(feature = "std"))]
        if !self.clock.has_monotonic() {
            return Some(match pending {
                Pending::Behind { by_ms, .. } => Error::ClockMovedBackwards { by_ms },
                Pending::NextTick { .. } => Error::ClockStalled { waited_ms: 0 },
            });
        }
        // A healthy clock reaches the next tick within `tick_ms` of real time and
        // a waited-out rollback within `max_wait_ms`; 2 ms covers reading both
        // clocks in whole milliseconds.
        let bound = self
            .slots
            .tick_ms
            .saturating_add(self.policy.max_wait_ms)
            .saturating_add(2);
        (stalled > bound).then_some(match pending {
            Pending::Behind { by_ms, .. } => Error::ClockMovedBackwards { by_ms },
            Pending::NextTick { .. } => Error::ClockStalled { waited_ms: stalled },
        })
    }

    /// One decision on a precise reading: `Reserve::Wait(why)` when the caller must wait.
    /// While the clock is behind IDs already issued and the policy is monotonic, it
    /// takes `behind` slots at most (of up to `n`) from the last tick.
    ///
    /// Ordering is what makes the verdicts sound: the counter is loaded *before*
    /// the clock is read. Every counter value was stored (Release) by a thread that
    /// had read the clock before computing it, so our later reading is no earlier
    /// than that one, and "the counter is past what the clock allows" can only
    /// mean the clock really went back — never that another thread read a newer
    /// clock between our reading and our look at the counter (the race this order
    /// closes; see docs/design.md).
    ///
    /// `wait` (a caller that may wait): a stricter call that finds the slots its
    /// own window allows taken by a borrowing generator on the same counter takes
    /// the next slot in the siblings' window at once (and says so in `wait.early`),
    /// and its caller returns it once the clock gets there
    /// ([`when_due`](Self::when_due)): waiting for free slots instead would leave
    /// it none for as long as the borrowing one keeps its window full. It takes
    /// only a slot the clock reaches within `wait.left_ms`; once the siblings'
    /// slots are taken up to there, no later slot can be in time either (the
    /// counter only moves up), and its `clock_backwards` policy decides at once,
    /// as for a clock behind IDs already issued. So the call's whole wait is at
    /// most its `max_wait_ms`, however often the borrowing one moves the tick.
    #[cold]
    #[inline(never)]
    fn reserve_now(&self, n: u64, behind: u64, ep: &mut Episode, mut wait: Option<&mut Wait>) -> Result<Reserve> {
        // A call that never waits (`try_next_id`) decides on the whole max_wait_ms.
        let left_ms = wait.as_ref().map_or(self.policy.max_wait_ms, |w| w.left_ms);
        loop {
            self.check_alive()?;
            self.check_owner()?;
            let cur = self.state.get().load(Ordering::Acquire);
            let now = self.clock.now_ms_precise();
            self.check_lease(now)?;
            let t = self.ticks(now)?;
            let cur = match self.claim_from(cur, t, n) {
                Claim::Won(start, count) => return Ok(Reserve::Won { first: start, count }),
                Claim::Raced => continue,
                Claim::Blocked(cur) if self.confirm_guard(cur, t) => continue,
                Claim::Blocked(cur) => cur,
            };
            // Blocked: every slot the clock allows is taken. `cur >= limit > 0`.
            // A counter closed under this call (a node id being lost, the
            // generator closed): the refusal, not a verdict on the clock.
            if cur == u64::MAX {
                self.check_alive()?;
                self.check_owner()?;
            }
            let last_tick = (cur - 1) >> self.slots.sb;
            let cur_tick = cur >> self.slots.sb;
            // A borrowing generator on the same counter may have reserved ahead of
            // the clock: a stricter call waits for the clock to reach that, as it
            // waits for a new tick, up to the last tick it could still return
            // within `left_ms` (`due_end`; past that its policy decides, as for a
            // clock behind IDs already issued).
            let own_end = t.saturating_add(self.slots.ahead);
            let siblings_end = t.saturating_add(self.siblings_ahead());
            let due_end = ((now - self.slots.epoch_ms).saturating_add(left_ms) / self.slots.tick_ms)
                .saturating_add(self.slots.ahead);
            let reach = siblings_end.min(due_end);
            let window_end = if last_tick <= reach {
                reach.max(own_end)
            } else {
                own_end
            }
            .min(self.slots.max_ticks);
            let siblings = last_tick > own_end;
            if last_tick <= window_end {
                if siblings && let Some(wait) = wait.as_deref_mut() {
                    // A borrowing sibling's slots: the next one in its window that
                    // is due in time, if any.
                    match self.claim_below(cur, t, n, self.limit_at(window_end)) {
                        Claim::Won(start, count) => {
                            wait.early = true;
                            return Ok(Reserve::Won { first: start, count });
                        }
                        Claim::Raced => continue,
                        Claim::Blocked(_) => {}
                    }
                }
                // The window's last tick is used up.
                if cur_tick > self.slots.max_ticks {
                    return Err(Error::TimeExhausted {
                        message: format!(
                            "every ID of the layout's last tick (ending {} ms) has been issued",
                            self.layout.last_timestamp_ms()
                        ),
                    });
                }
                // Wait for the next tick, unless the siblings' slots are taken up
                // to the last tick due in time: then none the call may still take
                // can be (its policy decides, below).
                if !(siblings && wait.is_some() && due_end <= siblings_end) {
                    return Ok(Reserve::Wait(Pending::NextTick { t }));
                }
            }
            // The clock is behind IDs already issued: a sibling's lead, which the
            // call waits out only within what is left of its max_wait_ms (the
            // sibling moves it on at every ms), or a rolled-back clock, waited out
            // up to max_wait_ms as the clock moves.
            let wait_ms = if last_tick <= siblings_end {
                left_ms
            } else {
                self.policy.max_wait_ms
            };
            let by_ms = self.layout.timestamp_of_ticks(last_tick).saturating_sub(now).max(1);
            ep.behind_ms = ep.behind_ms.max(by_ms);
            match self.policy.clock_backwards {
                ClockBackwards::Error => return Err(Error::ClockMovedBackwards { by_ms }),
                ClockBackwards::Wait => {
                    let need = self.ms_until_allowed(last_tick, now);
                    if need > wait_ms {
                        return Err(Error::ClockMovedBackwards { by_ms });
                    }
                }
                ClockBackwards::Monotonic => {
                    let room = (self.slots.seq_cap + 1).saturating_sub(cur & self.slots.seq_mask);
                    if cur_tick == last_tick && room > 0 {
                        // Room left in the last tick: keep using it, `behind` slots
                        // at most (a run takes one: its rest would be past the
                        // window of its next call's reading, and passed over).
                        let count = n.min(behind).min(room);
                        if self.swap(cur, cur + count) {
                            return Ok(Reserve::Won { first: cur, count });
                        }
                        continue;
                    }
                    if self.ms_until_allowed(cur_tick, now) > wait_ms {
                        return Err(Error::ClockMovedBackwards { by_ms });
                    }
                }
            }
            return Ok(Reserve::Wait(Pending::Behind { t, by_ms }));
        }
    }

    /// A claim held back by the host guard's bound alone (the guard not confirmed
    /// lately: its watcher late, or this process resumed from a pause): the guard
    /// file is looked at now, on this thread (`crate::owner`); whether the bound
    /// moved past the claim's slot. A file lost meanwhile stops the node id, which
    /// the next check refuses.
    #[cold]
    #[inline(never)]
    fn confirm_guard(&self, cur: u64, t: u64) -> bool {
        #[cfg(host_guard)]
        if let Some(owner) = self.guards.owner {
            let start = self.first_free(cur, t);
            if start < self.limit(t) && start >= self.state.guard_end() {
                owner.confirm_now(start);
                return start < self.state.guard_end();
            }
        }
        let _ = (cur, t);
        false
    }

    /// The largest borrow window (ticks) of the generators on this counter.
    fn siblings_ahead(&self) -> u64 {
        #[cfg(host_guard)]
        if let Some(owner) = self.guards.owner {
            return owner.max_ahead();
        }
        0
    }

    /// Returns `run` once the clock allows its first slot's tick in this
    /// generator's own window: at once, but for a run a stricter call took ahead of
    /// it in a borrowing sibling's window (`reserve_now`), which was due within
    /// what was left of its `max_wait_ms` when taken. A wait like any other:
    /// bounded in real time from the call's entry (`started`), with the wait hook
    /// (whose error drops the run, passed over).
    #[cold]
    #[inline(never)]
    fn when_due(&self, run: (u64, u64), started: u64, hook_at: &mut u64, ep: &mut Episode) -> Result<(u64, u64)> {
        let tick = run.0 >> self.slots.sb;
        loop {
            let t = self.ticks(self.clock.now_ms_precise())?;
            if tick <= t.saturating_add(self.slots.ahead) {
                return Ok(run);
            }
            let mono = self.clock.monotonic_ms();
            if ep.wait_started_us.is_none() {
                ep.wait_started_us = Some(self.wait_clock_us());
            }
            if mono.saturating_sub(started)
                > self
                    .slots
                    .tick_ms
                    .saturating_add(self.policy.max_wait_ms)
                    .saturating_add(2)
            {
                // The clock stopped or went back meanwhile: the run is the sibling
                // window's, which a borrowing generator issues as it is.
                return Ok(run);
            }
            if let Some(crate::policy::Hook(hook)) = &self.policy.wait_hook {
                let waited = mono.saturating_sub(started);
                if waited >= *hook_at {
                    if let Err(e) = hook() {
                        self.counters.skip(run.1);
                        return Err(e);
                    }
                    *hook_at = waited + WAIT_HOOK_EVERY_MS;
                }
            }
            self.clock.pause();
        }
    }

    /// Refuses once the node id's host guard was lost to another process.
    pub(super) fn check_owner(&self) -> Result<()> {
        #[cfg(host_guard)]
        if let Some(owner) = self.guards.owner
            && owner.is_lost()
        {
            return Err(owner.lost_error());
        }
        Ok(())
    }

    /// Milliseconds until the clock allows issuing at `tick`.
    fn ms_until_allowed(&self, tick: u64, now: u64) -> u64 {
        self.layout
            .timestamp_of_ticks(tick.saturating_sub(self.slots.ahead))
            .saturating_sub(now)
    }
}

/// The one rule for batch sizes, for every binding: `n` in `0..=MAX_BATCH`, given as
/// whatever integer the binding received (a negative or huge one included).
pub fn check_batch(n: i128) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n <= MAX_BATCH => Ok(n),
        // 64-bit formatting only: i128's would add kilobytes to the wasm build.
        _ => Err(match (i64::try_from(n), u64::try_from(n)) {
            (Ok(v), _) => batch_error(v),
            (_, Ok(v)) => batch_error(v),
            _ if n < 0 => batch_error("a number below -2^63"),
            _ => batch_error("a number of 2^64 or more"),
        }),
    }
}

#[cold]
fn batch_error(got: impl fmt::Display) -> Error {
    Error::out_of_range("n", 0, MAX_BATCH as u64, got)
}

impl<C: CounterStorage> Drop for Generator<C> {
    fn drop(&mut self) {
        // No other thread can hold `self` now: the counter is exact.
        #[cfg(feature = "lease")]
        if let Some(lease) = &self.guards.lease {
            lease.release(self.last_issued_ms().unwrap_or(0));
        }
        self.leave_owner();
    }
}

impl<C: CounterStorage> fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Generator")
            .field("layout", &self.layout)
            .field("node", &self.slots.node)
            .field("overflow", &self.policy.overflow)
            .field("max_borrow_ms", &self.policy.max_borrow_ms)
            .field("clock_backwards", &self.policy.clock_backwards)
            .field("max_wait_ms", &self.policy.max_wait_ms)
            .field("leased", &self.is_leased())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    /// A node id lost to another process (the host guard's watcher, `Owner::lose`)
    /// stops a per-thread handle at once, though it holds slots of the tick: the
    /// handles' epoch sends its next call to the full checks, which ask the owner.
    #[cfg(host_guard)]
    #[test]
    fn a_lost_node_id_stops_a_handle_holding_a_run() {
        let g = Generator::builder(Layout::SNOWFLAKE)
            .host_guard(false)
            .node(1001)
            .build()
            .unwrap();
        // The clock's ticker running (the fast path compares its cache).
        g.next_id().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let mut h = g.local();
        // Runs of 2, 4 and 8 slots (the system clock: a custom clock's generator
        // keeps no owner), in one tick but for a tick's turn within these calls: 4
        // left after the 10th.
        for _ in 0..10 {
            h.next_id().unwrap();
        }
        g.guards
            .owner
            .expect("every generator on a node id has its owner")
            .lose();
        let lost = |r: Result<u64>| matches!(r, Err(Error::Config { field: "node", .. }));
        assert!(
            lost(h.next_id()),
            "the handle issued from its run after the node id was lost"
        );
        assert!(lost(g.next_id()));
    }

    /// Each policy's name reads back as the policy (`FromStr`, what clap and the
    /// bindings use); an unknown name is the configuration error it always was.
    #[test]
    fn policies_round_trip_through_their_names() {
        for o in [Overflow::Wait, Overflow::Borrow] {
            assert_eq!(o.to_string(), o.as_str());
            assert_eq!(o.to_string().parse::<Overflow>().ok(), Some(o));
            assert_eq!(o.to_string().to_uppercase().parse::<Overflow>().ok(), Some(o));
        }
        for c in [ClockBackwards::Error, ClockBackwards::Wait, ClockBackwards::Monotonic] {
            assert_eq!(c.to_string(), c.as_str());
            assert_eq!(c.to_string().parse::<ClockBackwards>().ok(), Some(c));
            assert_eq!(format!(" {c} ").parse::<ClockBackwards>().ok(), Some(c));
        }
        let refused = |e: Result<()>| match e {
            Err(Error::Config { field, message }) => (field, message),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refused("nope".parse::<Overflow>().map(drop)),
            ("overflow", r#"overflow must be "wait" or "borrow", got "nope""#.into())
        );
        assert_eq!(
            refused("nope".parse::<ClockBackwards>().map(drop)),
            (
                "clock_backwards",
                r#"clock_backwards must be "error", "wait" or "monotonic", got "nope""#.into()
            )
        );
    }

    #[test]
    fn max_sequence_caps_ids_per_tick_but_keeps_the_layout() {
        let clock = ManualClock::new(1_000).with_auto_advance(1);
        let g = Generator::builder(Layout::FLAKE)
            .node(3)
            .max_sequence(3)
            .clock(clock.clone())
            .build()
            .unwrap();
        let ids = g.next_ids(9).unwrap();
        let parts: Vec<(u64, u64, u64)> = ids
            .iter()
            .map(|&id| {
                let p = Layout::FLAKE.decompose(id);
                (p.timestamp_ms, p.node, p.sequence)
            })
            .collect();
        let want: Vec<(u64, u64, u64)> = (0..9).map(|i| (1_000 + i / 4, 3, i % 4)).collect();
        assert_eq!(parts, want);
        for bad in [4, 6, 4096] {
            let err = Generator::builder(Layout::FLAKE).max_sequence(bad).build().unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::Config {
                        field: "max_sequence",
                        ..
                    }
                ),
                "{err}"
            );
        }
        assert!(
            Generator::builder(Layout::FLAKE)
                .node(1001)
                .max_sequence(4095)
                .build()
                .is_ok()
        );
    }

    const T: u64 = 1_800_000_000_000;

    /// A borrowing generator whose calling thread holds a lone run with slots left:
    /// four IDs issued (sequences 0 to 3), slots 4 to 6 of tick `T` in the run.
    fn holding_a_run(clock: &ManualClock, policy: ClockBackwards) -> Generator {
        let g = Generator::builder(Layout::SNOWFLAKE)
            .node(1)
            .host_guard(false)
            .overflow(Overflow::Borrow)
            .max_borrow_ms(1)
            .clock_backwards(policy)
            .clock(clock.clone())
            .build()
            .unwrap();
        let seqs: Vec<u64> = (0..4).map(|_| seq_and_ms(g.next_id().unwrap()).0).collect();
        assert_eq!(seqs, [0, 1, 2, 3]);
        let (next, end, _) = lone_run(&g);
        assert_eq!((next & g.slots.seq_mask, end & g.slots.seq_mask), (4, 7));
        g
    }

    fn seq_and_ms(id: u64) -> (u64, u64) {
        let p = Layout::SNOWFLAKE.decompose(id);
        (p.sequence, p.timestamp_ms)
    }

    #[test]
    fn a_run_older_than_the_clock_goes_back_to_the_counter() {
        let clock = ManualClock::new(T);
        let g = holding_a_run(&clock, ClockBackwards::Error);
        clock.advance(1);
        assert_eq!(seq_and_ms(g.next_id().unwrap()), (0, T + 1));
        // The old run's rest went back to the counter, then the new tick began.
        assert_eq!(g.stats().ids_issued, 5);
    }

    #[test]
    fn a_run_past_the_window_the_clock_allows_is_not_issued() {
        let clock = ManualClock::new(T);
        let g = holding_a_run(&clock, ClockBackwards::Error);
        // Back 2 ms: the window (T - 2 ..= T - 1) ends below the run.
        clock.set(T - 2);
        assert!(matches!(g.next_id(), Err(Error::ClockMovedBackwards { .. })));
        // Back 1 ms: inside the window again; the run's rest went back to the
        // counter, so the next slot is the one after the last ID.
        clock.set(T - 1);
        assert_eq!(seq_and_ms(g.next_id().unwrap()), (4, T));
    }

    /// A batch on a thread holding a lone run follows the thread's last ID (the run's
    /// rest goes back to the counter first), and so does the next ID.
    #[test]
    fn a_batch_follows_the_threads_last_id() {
        let clock = ManualClock::new(T);
        let g = holding_a_run(&clock, ClockBackwards::Error);
        let mut ids = g.next_ids(2).unwrap();
        ids.push(g.next_id().unwrap());
        let mut out = [0u64; 3];
        g.fill(&mut out).unwrap();
        ids.extend(out);
        let seqs: Vec<u64> = ids.iter().map(|&id| seq_and_ms(id).0).collect();
        assert_eq!(seqs, [4, 5, 6, 7, 8, 9], "in order, none passed over");
    }

    /// `try_next_id` on a thread holding a lone run is served from it, like `next_id`.
    #[test]
    fn try_next_id_on_a_thread_holding_a_run_takes_its_slots() {
        let clock = ManualClock::new(T);
        let g = holding_a_run(&clock, ClockBackwards::Error);
        let ids: Vec<u64> = (0..8)
            .map(|i| {
                if i % 2 == 0 {
                    g.try_next_id().unwrap().unwrap()
                } else {
                    g.next_id().unwrap()
                }
            })
            .collect();
        let seqs: Vec<u64> = ids.iter().map(|&id| seq_and_ms(id).0).collect();
        assert_eq!(seqs, (4..12).collect::<Vec<_>>(), "in order, none passed over");
        assert_eq!(g.stats().ids_issued, 12);
    }

    /// `clock_backwards = monotonic` on a thread holding a run: while the clock is
    /// behind, every slot left in the last tick is issued, one per call, none of them
    /// held in a run that its next call would pass over.
    #[test]
    fn a_monotonic_rollback_with_a_run_keeps_the_last_ticks_slots() {
        let clock = ManualClock::new(T);
        let g = Generator::builder(Layout::SNOWFLAKE)
            .node(1)
            .host_guard(false)
            .overflow(Overflow::Borrow)
            .max_borrow_ms(1)
            .clock_backwards(ClockBackwards::Monotonic)
            .max_wait_ms(0)
            .clock(clock.clone())
            .build()
            .unwrap();
        let first = g.take_run_for_test().unwrap();
        assert_eq!(seq_and_ms(first), (0, T));
        clock.set(T - 5);
        let mut behind = Vec::new();
        let err = loop {
            match g.next_id() {
                Ok(id) => behind.push(id),
                Err(e) => break e,
            }
        };
        assert!(matches!(err, Error::ClockMovedBackwards { by_ms: 5 }), "{err}");
        // The run's rest went back to the counter: every other slot of the tick.
        let left = (1 << Layout::SNOWFLAKE.sequence_bits()) - 1;
        assert_eq!(behind.len() as u64, left, "slots of the last tick issued while behind");
        assert!(behind.iter().all(|&id| seq_and_ms(id).1 == T));
        assert!(behind.windows(2).all(|w| w[1] == w[0] + 1));
        // Back on time: runs again.
        clock.set(T);
        assert_eq!(seq_and_ms(g.next_id().unwrap()), (0, T + 1));
    }

    /// A forked child whose thread holds a run of a parent's generator issues
    /// nothing from it: the fork check comes before the run, on every path.
    #[cfg(unix)]
    #[test]
    fn a_forked_child_holding_a_run_refuses_to_issue() {
        let clock = ManualClock::new(T);
        let g = holding_a_run(&clock, ClockBackwards::Error);
        // SAFETY: the child only calls into the generator (atomics, a thread-local)
        // and _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let refused = |r: Result<()>| matches!(r, Err(Error::Fork));
            let code = if !refused(g.next_id().map(drop)) {
                1
            } else if !refused(g.try_next_id().map(drop)) {
                2
            } else if !refused(g.next_ids(1).map(drop)) {
                3
            } else {
                0
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "the child issued from the run: 1 = next_id, 2 = try_next_id, 3 = next_ids"
        );
        assert_eq!(seq_and_ms(g.next_id().unwrap()), (4, T), "the parent keeps its run");
    }

    /// A lease that ends (here: released) while a thread holds a run: no slot of the
    /// run is issued after, by any call.
    #[cfg(all(feature = "lease", any(unix, windows)))]
    #[test]
    fn a_lease_that_ends_while_a_thread_holds_a_run_refuses_its_slots() {
        let dir = std::env::temp_dir().join(format!("flakeid-run-lease-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.to_str().unwrap().replace('\\', "/");
        let slash = if path.starts_with('/') { "" } else { "/" };
        let g = Generator::builder(Layout::SNOWFLAKE)
            .overflow(Overflow::Borrow)
            .max_borrow_ms(1_000)
            .lease_url(&format!("file://{slash}{path}"))
            .build()
            .unwrap();
        g.take_run_for_test().unwrap();
        g.next_id().unwrap();
        g.release_lease();
        let refused = |r: Result<()>| matches!(r, Err(Error::Lease { .. }));
        assert!(refused(g.next_id().map(drop)), "next_id issued from the run");
        assert!(refused(g.try_next_id().map(drop)), "try_next_id issued from the run");
        assert!(refused(g.next_ids(1).map(drop)), "next_ids issued from the run");
        drop(g);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn try_next_id_returns_none_instead_of_waiting() {
        let clock = ManualClock::new(5_000);
        let g = Generator::builder(Layout::FLAKE)
            .node(0)
            .max_sequence(1)
            .clock(clock.clone())
            .build()
            .unwrap();
        let a = g.try_next_id().unwrap().unwrap();
        let b = g.try_next_id().unwrap().unwrap();
        assert!(b > a);
        assert_eq!(g.try_next_id().unwrap(), None);
        clock.advance(1);
        assert_eq!(
            Layout::FLAKE.decompose(g.try_next_id().unwrap().unwrap()).timestamp_ms,
            5_001
        );
        clock.set(4_990);
        assert!(matches!(g.try_next_id(), Err(Error::ClockMovedBackwards { by_ms: 11 })));
    }

    /// A thread alone on a generator.
    fn alone(clock: &ManualClock, overflow: Overflow) -> Generator {
        Generator::builder(Layout::SNOWFLAKE)
            .node(1)
            .host_guard(false)
            .overflow(overflow)
            .clock(clock.clone())
            .build()
            .unwrap()
    }

    /// 300 IDs on this thread (a lone run with slots left: its `(next, end, want)`),
    /// then one on another thread, then one here again, above it: `(run, there, back)`.
    fn another_thread_between(g: &Generator) -> ((u64, u64, u64), u64, u64) {
        for _ in 0..300 {
            g.next_id().unwrap();
        }
        let run = lone_run(g);
        assert!(run.2 > 0 && run.1 > run.0, "a lone run with slots left: {run:?}");
        let there = std::thread::scope(|s| s.spawn(|| g.next_id().unwrap()).join().unwrap());
        let back = g.next_id().unwrap();
        assert!(back > there, "{back} after {there}");
        (run, there, back)
    }

    /// The lone run's state on this thread: `(next, end, want)`.
    fn lone_run(g: &Generator) -> (u64, u64, u64) {
        RUNS.with(|runs| {
            let run = runs.iter().map(Cell::get).find(|run| run.uid == g.runs.uid).unwrap();
            (run.next, run.end, run.want)
        })
    }

    /// Alone, a thread's runs double up to the run size, and every slot is issued
    /// in order: the output is the counter's, as with one CAS per ID.
    #[test]
    fn a_thread_alone_takes_lone_runs_and_loses_no_slot() {
        let clock = ManualClock::new(T);
        let g = alone(&clock, Overflow::Wait);
        let ids: Vec<u64> = (0..600).map(|_| g.next_id().unwrap()).collect();
        let seqs: Vec<u64> = ids.iter().map(|&id| seq_and_ms(id).0).collect();
        assert_eq!(seqs, (0..600).collect::<Vec<_>>());
        let (next, end, want) = lone_run(&g);
        assert_eq!(want, MAX_RUN, "grew to the run size");
        assert_eq!(
            g.state.get().load(Ordering::Relaxed),
            end,
            "the run is the counter's last reservation"
        );
        assert_eq!(next & g.slots.seq_mask, 600);
        assert_eq!(g.stats().ids_issued, 600);
        // A batch follows the thread's last ID: the run's rest went back to the counter.
        let batch = g.next_ids(3).unwrap();
        assert_eq!(
            batch.iter().map(|&id| seq_and_ms(id).0).collect::<Vec<_>>(),
            [600, 601, 602]
        );
        assert_eq!(seq_and_ms(g.next_id().unwrap()).0, 603);
        // A new tick: the rest goes back, the counter moves to the tick's start.
        clock.advance(1);
        assert_eq!(seq_and_ms(g.next_id().unwrap()), (0, T + 1));
        assert_eq!(g.stats().ids_issued, 605);
    }

    /// Another thread's reservation ends a lone run: the thread's next ID is above
    /// the other thread's (the generator's IDs keep the order of their calls), its
    /// run's rest is passed over, and its next run is one slot, strict or borrowing.
    #[test]
    fn a_reservation_by_another_thread_ends_a_lone_run() {
        for overflow in [Overflow::Wait, Overflow::Borrow] {
            let clock = ManualClock::new(T);
            let g = alone(&clock, overflow);
            another_thread_ends_the_run(&g);
        }
    }

    fn another_thread_ends_the_run(g: &Generator) {
        let ((_, end, _), there, _) = another_thread_between(g);
        assert_eq!(
            seq_and_ms(there).0,
            end & g.slots.seq_mask,
            "the other thread takes the slot after the run"
        );
        assert_eq!(lone_run(g).2, 1, "the next run is one slot");
        // 301 IDs here and one there; the passed-over rest does not count (the
        // other thread's empty run holds nothing).
        assert_eq!(g.stats().ids_issued, 302);
    }
}
