//! What a generator has done: [`Generator::stats`](crate::Generator::stats).
//!
//! Nothing here is written on the fast path. IDs issued are derived from the
//! counter the generator keeps anyway (slots advanced, less the slots passed over
//! when a new tick starts, which happens at most once per tick); waits and clock
//! rollbacks are counted on the slow path that handles them.

use crate::node_origin::NodeOrigin;
use crate::sync::PlainAtomicU64 as AtomicU64;
use core::sync::atomic::Ordering;

/// A snapshot of a generator's counters since it was built.
///
/// ```
/// use flakeid_core::{Generator, Layout, ManualClock};
/// let clock = ManualClock::new(1_700_000_000_000);
/// let g = Generator::builder(Layout::SNOWFLAKE).node(1).clock(clock.clone()).build()?;
/// g.next_ids(10)?;
/// clock.advance(5);
/// g.next_id()?;
/// let s = g.stats();
/// assert_eq!(s.ids_issued, 11);
/// assert_eq!((s.tick_waits, s.clock_rollbacks, s.lead_ms), (0, 0, 0));
/// # Ok::<(), flakeid_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// IDs handed out, counted as slots reserved: the slots the counter advanced
    /// since the generator was built, less those passed over. A borrowing generator
    /// shared by threads that contend keeps runs of up to 128 slots per thread
    /// (docs/design.md): slots of a run that its thread has not used count as
    /// issued, up to 127 for each thread holding a run now and, for good, for each
    /// thread that exited (or evicted the run) while holding one. So this is never
    /// behind what callers received, and ahead of it by up to 127 × the threads that
    /// ever left a run of this generator unspent: with short-lived threads, that
    /// grows.
    pub ids_issued: u64,
    /// Ticks waited out because the tick's sequence (or, when borrowing, the
    /// borrow window) was used up: one per wait for a next tick (a batch that
    /// spans several ticks waits out each).
    pub tick_waits: u64,
    /// Total time spent in those waits, in µs (ms resolution where the platform has
    /// no monotonic clock: wasm32-unknown-unknown).
    pub tick_wait_us: u64,
    /// How far the last ID issued is ahead of the clock now, in ms: a borrowing
    /// generator's lead, or how far behind them a clock that went back still is.
    pub lead_ms: u64,
    /// Times a call found the clock behind IDs already issued (one per call that
    /// saw it, however long it waited).
    pub clock_rollbacks: u64,
    /// The largest of those rollbacks, in ms.
    pub max_rollback_ms: u64,
    /// The 128-bit generator only (0 for 64-bit ones, which refuse in a forked
    /// child): forked children in which it went on, each drawing its random bits
    /// from a new seed.
    pub reseeds: u64,
    /// Where the node-id lease stands (`LeaseState::as_str`: "held", "unreachable",
    /// "lost" or "released");
    /// `None` without a lease.
    pub lease_state: Option<&'static str>,
    /// Milliseconds until the lease's current window closes unless renewed (0 once
    /// it has); `None` without a lease.
    pub lease_remaining_ms: Option<u64>,
    /// Where the node id came from ([`NodeOrigin::as_str`]: `explicit`, `leased`,
    /// `coordinator`, `host`, or `none` for the 128-bit generator).
    pub node_origin: NodeOrigin,
}

/// How long `Counters::issued` waits for a thread to finish a tick change (about
/// 64 spins per yield: tens of ms at most).
const MAX_SPINS: u32 = 64 * 1024;

/// The slow-path counters a generator keeps, on a cache line of their own (as the
/// counter is), so that their once-per-tick writes never evict the read-only
/// fields every call reads.
#[cfg_attr(not(all(target_family = "wasm", target_os = "unknown")), repr(align(128)))]
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Counter slots passed over without issuing: a new tick's first slot past the
    /// last one used, and the unused rest of a thread's run of slots.
    pub skipped: AtomicU64,
    /// The latest tick the counter entered whose passed-over slots are in
    /// `skipped` (see `issued`).
    pub accounted_tick: AtomicU64,
    pub tick_waits: AtomicU64,
    pub tick_wait_us: AtomicU64,
    pub rollbacks: AtomicU64,
    pub max_rollback_ms: AtomicU64,
    /// Forked children that went on (a generator that needs no node id).
    pub reseeds: AtomicU64,
}

/// What one slow-path call saw, recorded once when it returns.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Episode {
    /// When it began to wait for a next tick (`Generator::wait_clock_us`); `None`:
    /// it did not wait.
    pub wait_started_us: Option<u64>,
    /// The largest rollback it saw, in ms (0: none).
    pub behind_ms: u64,
}

impl Counters {
    pub fn new(tick: u64) -> Counters {
        Counters {
            accounted_tick: AtomicU64::new(tick),
            ..Counters::default()
        }
    }

    /// The unused rest of a thread's run of slots (borrowing under contention).
    #[inline(always)]
    pub fn skip(&self, slots: u64) {
        if slots > 0 {
            self.skipped.fetch_add(slots, Ordering::Relaxed);
        }
    }

    /// The thread that moved the counter into `tick` passed over `slots` (written
    /// after its compare-and-swap: see `issued` for how readers wait it out).
    #[cold]
    #[inline(never)]
    pub fn enter_tick(&self, slots: u64, tick: u64) {
        if slots > 0 {
            self.skipped.fetch_add(slots, Ordering::Release);
        }
        self.accounted_tick.fetch_max(tick, Ordering::Release);
    }

    /// Slots the counter advanced from `initial`, less those passed over. A tick
    /// change is written in two steps (the counter, then `enter_tick`), so a reader
    /// between them would count a whole tick's gap as issued: it takes a counter
    /// value whose tick is already accounted for, read again after `skipped` so
    /// that no later tick's gap is in it either. And `skipped` is read again after
    /// that value: a run passed over between the two reads (threads that end
    /// each other's runs do so all the time) would be counted as issued.
    pub fn issued(&self, counter: &crate::sync::AtomicU64, initial: u64, sb: u32) -> u64 {
        let mut spins = 0u32;
        loop {
            let done = spins > MAX_SPINS;
            let first = counter.load(Ordering::Acquire);
            if first <= initial {
                return 0;
            }
            let tick = (first - 1) >> sb;
            let accounted = self.accounted_tick.load(Ordering::Acquire);
            let skipped = self.skipped.load(Ordering::Acquire);
            let again = counter.load(Ordering::Acquire);
            if done
                || (accounted >= tick && (again - 1) >> sb == tick && self.skipped.load(Ordering::Acquire) == skipped)
            {
                // (`done`: the thread never finished its step — a child process
                // after `fork` copied the counter but not that thread. Its gap is
                // then counted as issued: ahead, never behind.)
                return (again - initial).saturating_sub(skipped);
            }
            // A thread is between its compare-and-swap and `enter_tick` (a few
            // instructions, unless it was descheduled there), or the tick changed
            // while we read: look again.
            spins += 1;
            #[cfg(feature = "std")]
            if spins.is_multiple_of(64) {
                std::thread::yield_now();
                continue;
            }
            core::hint::spin_loop();
        }
    }

    pub fn snapshot(
        &self,
        ids_issued: u64,
        lead_ms: u64,
        lease_state: Option<&'static str>,
        lease_remaining_ms: Option<u64>,
    ) -> Stats {
        Stats {
            ids_issued,
            tick_waits: self.tick_waits.load(Ordering::Relaxed),
            tick_wait_us: self.tick_wait_us.load(Ordering::Relaxed),
            lead_ms,
            clock_rollbacks: self.rollbacks.load(Ordering::Relaxed),
            max_rollback_ms: self.max_rollback_ms.load(Ordering::Relaxed),
            reseeds: self.reseeds.load(Ordering::Relaxed),
            lease_state,
            lease_remaining_ms,
            node_origin: NodeOrigin::NotNeeded,
        }
    }

    /// What one call saw, counted once; `now_us` is read only when it waited.
    pub fn record(&self, ep: Episode, now_us: u64) {
        if let Some(started_us) = ep.wait_started_us {
            self.tick_waits.fetch_add(1, Ordering::Relaxed);
            self.tick_wait_us
                .fetch_add(now_us.saturating_sub(started_us), Ordering::Relaxed);
        }
        if ep.behind_ms > 0 {
            self.rollbacks.fetch_add(1, Ordering::Relaxed);
            self.max_rollback_ms.fetch_max(ep.behind_ms, Ordering::Relaxed);
        }
    }
}
