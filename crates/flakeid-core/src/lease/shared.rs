//! The lease gate across processes: one lease held by one process, checked by
//! generators in others (the PostgreSQL extension's backends, forked processes that
//! run no thread and no store client). It lives in memory those processes share, so
//! it is atomics only: no heap, no lock, no pointer, closed when zeroed.
//!
//! The holder publishes its generator's [`LeaseWindow`] (copied every few tens of
//! ms: a copy that lags ends earlier, which is safe); every issuer checks, after
//! reserving an ID and before returning it, that
//!
//! * the ID's tick is below the window's end in ticks (the fence the store holds),
//! * a [`LeaseClock`] reading is below the window's monotonic end,
//! * the ID's tick is at or past the lease's start, the first tick of which the
//!   counter had reserved no slot when the lease began, so that no ID reserved
//!   before, whenever it is returned (a thread's run of slots), passes under it, and
//! * the lease is still the one the reservation was made under.
//!
//! Why these clocks suffice where the in-process gate (`gate.rs`) derives a
//! realtime window from boot time: an issuer here stamps every ID with its own
//! reading of the system clock, so after a stop or a host suspend the ID's tick is
//! current and the tick end refuses it, although the monotonic clock stopped in the
//! suspend; a step of the realtime clock back is refused by the monotonic end, a
//! step forward only closes the window early.

use super::{LeaseClock, LeaseWindow};
use crate::counter::CounterStorage;
use crate::generator::Generator;
use crate::layout::Layout;
use crate::sync::AtomicU64;
use std::sync::atomic::Ordering;

/// A lease's window in memory shared by processes: published by the one process
/// that holds the lease, checked by generators in every process (through a
/// [`SharedGateCheck`] each).
///
/// `#[repr(C)]`, one cache line of atomics; all zeros is a closed gate with no
/// lease yet ([`SharedGate::new`]), so it may be placed in shared memory as is.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct SharedGate {
    /// The lease the window is of: `epoch << 32 | node`, the epoch counting the
    /// holder's acquisitions from 1 (0: none yet). Stored before the window opens
    /// (after the counter was moved past the lease's fence); one word, so that a
    /// node id is never paired with another lease's epoch.
    lease: AtomicU64,
    /// IDs whose tick is at or past this are refused (0: closed).
    tick_end: AtomicU64,
    /// [`LeaseClock`] readings at or past this are refused (0: closed).
    mono_end: AtomicU64,
    /// IDs whose tick is below this are refused: the first tick the holder's counter
    /// had not reserved a slot of when the current lease began (never lowered).
    /// Every slot reserved before that lies below it, so no ID reserved before a
    /// lease began — a thread's run of slots, say — is returned under it.
    tick_start: AtomicU64,
}

/// What [`SharedGateCheck::after_refusal`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterRefusal {
    /// A new lease on the same node id: retry under it (the check now follows it).
    Renewed,
    /// A new lease on another node id: build a generator for it.
    Renumbered,
    /// The window is closed, or ended for the current lease: refuse.
    Refused,
}

impl Default for SharedGate {
    fn default() -> Self {
        Self::new()
    }
}

impl SharedGate {
    /// A closed gate with no lease: the same as zeroed memory.
    #[cfg(not(loom))]
    pub const fn new() -> SharedGate {
        SharedGate {
            lease: AtomicU64::new(0),
            tick_end: AtomicU64::new(0),
            mono_end: AtomicU64::new(0),
            tick_start: AtomicU64::new(0),
        }
    }

    /// A closed gate with no lease (loom's atomics have no `const fn new`).
    #[cfg(loom)]
    pub fn new() -> SharedGate {
        SharedGate {
            lease: AtomicU64::new(0),
            tick_end: AtomicU64::new(0),
            mono_end: AtomicU64::new(0),
            tick_start: AtomicU64::new(0),
        }
    }

    /// The node id of a lease word ([`lease`](Self::lease)).
    pub fn node_of(lease: u64) -> u64 {
        lease & 0xffff_ffff
    }

    /// The lease the gate is of now (0: none yet); a generator is built on its
    /// node id and checks with [`check`](Self::check) under it.
    pub fn lease(&self) -> u64 {
        self.lease.load(Ordering::Acquire)
    }

    /// The current lease's start: IDs of an earlier tick are refused under it (the
    /// first tick of which the holder's counter had reserved no slot when the lease
    /// began; 0 before the first lease).
    pub fn lease_start(&self) -> u64 {
        self.tick_start.load(Ordering::Acquire)
    }

    // -----------------------------------------------------------------------------
    // The holder

    /// A new lease, held by `holder` (its node id below 2^32; built over the counter
    /// the issuers share, and past the lease's fence, as acquiring leaves it):
    /// closes the window, moves the counter to the first slot of a fresh tick,
    /// stores that tick as the lease's start, then the lease word with the next
    /// epoch, which it returns. An issuer that sees the word reserves after the
    /// move; an ID reserved before it (a run a thread kept from an earlier lease or
    /// from the gap between two) is of an earlier tick and refused.
    pub fn begin_lease<C: CounterStorage>(&self, holder: &Generator<C>) -> u64 {
        self.close();
        let start = holder.start_fresh_tick();
        self.tick_start.fetch_max(start, Ordering::AcqRel);
        let epoch = match ((self.lease.load(Ordering::Acquire) >> 32) + 1) & 0xffff_ffff {
            0 => 1,
            e => e,
        };
        let word = (epoch << 32) | Self::node_of(holder.node());
        self.lease.store(word, Ordering::Release);
        word
    }

    /// Publishes the holder's generator's window (closed if it is): allowed are IDs
    /// of a tick no later than that of the wall end (minus 1 ms: the end is
    /// exclusive) plus `ahead_ms` of borrowing, i.e. at or before the fence the store
    /// holds. Only a newer reading of the window may be published: a copy may lag,
    /// never lead.
    pub fn publish(&self, window: LeaseWindow, layout: &Layout, ahead_ms: u64) {
        if window.is_closed() {
            self.close();
            return;
        }
        let ahead_ticks = ahead_ms / layout.tick_ms();
        let tick_end = layout
            .ticks_at(window.wall_end_ms.saturating_sub(1))
            .map_or(0, |t| t.saturating_add(ahead_ticks).saturating_add(1));
        self.tick_end.store(tick_end, Ordering::Release);
        self.mono_end.store(window.mono_end, Ordering::Release);
    }

    /// Stops IDs: no check that starts after this returns passes, until the next
    /// [`publish`](Self::publish). The lease word stays (issuers keep building on it,
    /// and refuse, until a new lease is begun).
    pub fn close(&self) {
        self.mono_end.store(0, Ordering::Release);
        self.tick_end.store(0, Ordering::Release);
    }

    // -----------------------------------------------------------------------------
    // The issuers

    /// A check for a generator built on the node id of lease word `lease`, with
    /// this process's clock reader.
    pub fn check(&self, lease: u64) -> SharedGateCheck<'_> {
        SharedGateCheck {
            gate: self,
            clock: LeaseClock::new(),
            mine: crate::sync::AtomicU64::new(lease),
        }
    }
}

/// One generator's view of a [`SharedGate`]: the lease it issues under, and its
/// process's [`LeaseClock`]. Per issue: [`begin`](Self::begin) before reserving an
/// ID, [`allows`](Self::allows) after; on a refusal,
/// [`after_refusal`](Self::after_refusal) says whether to retry.
#[derive(Debug)]
pub struct SharedGateCheck<'a> {
    gate: &'a SharedGate,
    clock: LeaseClock,
    /// The lease word this generator issues under (its node id below).
    mine: AtomicU64,
}

impl SharedGateCheck<'_> {
    /// The lease word, read before reserving an ID.
    #[inline(always)]
    pub fn begin(&self) -> u64 {
        self.gate.lease.load(Ordering::Acquire)
    }

    /// Whether an ID of tick `tick`, reserved after [`begin`](Self::begin) returned
    /// `under`, may be issued: the window is open for it, the tick is at or past the
    /// lease's start, and it is the window of the lease the reservation was made
    /// under, which is this generator's. On a refusal a generator that keeps runs of
    /// slots should drop the thread's run ([`Generator::drop_run`]) before retrying:
    /// the rest of a run reserved before the lease began is refused as well.
    #[inline(always)]
    pub fn allows(&self, under: u64, tick: u64) -> bool {
        let g = self.gate;
        // The start is loaded after `under` (Acquire, in `begin`), which was stored
        // after it: it is this lease's start or a later one (never lower).
        let open = tick < g.tick_end.load(Ordering::Acquire)
            && tick >= g.tick_start.load(Ordering::Relaxed)
            && self.clock.now() < g.mono_end.load(Ordering::Acquire);
        // Last, after the window's loads (Acquire): a window of a later lease was
        // published after that lease's word, which then shows here.
        open && under == self.mine.load(Ordering::Relaxed) && g.lease.load(Ordering::Relaxed) == under
    }

    /// Whether this generator's lease is the one the gate is of now.
    pub fn is_current(&self) -> bool {
        self.mine.load(Ordering::Relaxed) == self.gate.lease.load(Ordering::Acquire)
    }

    /// Why [`allows`](Self::allows) said no, and whether to retry. After
    /// [`AfterRefusal::Renewed`] this check issues under the new lease.
    #[cold]
    pub fn after_refusal(&self) -> AfterRefusal {
        let g = self.gate;
        let now = g.lease.load(Ordering::Acquire);
        let mine = self.mine.load(Ordering::Relaxed);
        if now == mine || now == 0 || g.tick_end.load(Ordering::Acquire) == 0 {
            return AfterRefusal::Refused;
        }
        if SharedGate::node_of(now) == SharedGate::node_of(mine) {
            self.mine.store(now, Ordering::Relaxed);
            AfterRefusal::Renewed
        } else {
            AfterRefusal::Renumbered
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A window open for a minute on both clocks, ending at `wall_end_ms`.
    fn window(wall_end_ms: u64) -> LeaseWindow {
        LeaseWindow {
            wall_end_ms,
            mono_end: LeaseClock::new().now() + (60 << 30),
        }
    }

    const L: Layout = Layout::SNOWFLAKE;

    /// A window far from its end.
    fn open() -> LeaseWindow {
        window(L.epoch_ms() + 1_000_000_000)
    }

    fn tick(ms: u64) -> u64 {
        L.ticks_at(ms).expect("a time inside the layout")
    }

    /// A holder's generator on node id `node`, over a counter of its own (at 0).
    fn holder(node: u64) -> Generator<crate::SharedCounter> {
        let counter: &'static crate::sync::AtomicU64 = Box::leak(Box::new(crate::sync::AtomicU64::new(0)));
        Generator::builder(L)
            .node(node)
            .build_shared(counter)
            .expect("a generator")
    }

    /// A holder's generator on node id 1 over `counter`.
    fn holder_over(counter: &'static crate::sync::AtomicU64) -> Generator<crate::SharedCounter> {
        Generator::builder(L)
            .node(1)
            .build_shared(counter)
            .expect("a generator")
    }

    /// The same after acquiring a lease whose fence is `fence_ms` (acquiring moves
    /// the counter past it).
    fn holder_over_after(counter: &'static crate::sync::AtomicU64, fence_ms: u64) -> Generator<crate::SharedCounter> {
        Generator::builder(L)
            .node(1)
            .resume_after_ms(fence_ms)
            .build_shared(counter)
            .expect("a generator")
    }

    #[test]
    fn zeroed_is_closed_with_no_lease() {
        static GATE: SharedGate = SharedGate::new();
        assert_eq!(GATE.lease(), 0);
        assert!(!GATE.check(0).allows(0, 0));
        assert_eq!(GATE.check(0).after_refusal(), AfterRefusal::Refused);
        assert_eq!(std::mem::size_of::<SharedGate>(), 64);
    }

    #[test]
    fn the_window_allows_ticks_up_to_the_fence() {
        let g = SharedGate::new();
        let word = g.begin_lease(&holder(7));
        assert_eq!(SharedGate::node_of(word), 7);
        let c = g.check(word);
        let end = L.epoch_ms() + 10_000;
        assert!(!c.allows(word, tick(end - 1)), "closed until published");
        g.publish(window(end), &L, 0);
        assert!(c.allows(c.begin(), tick(end - 1)) && !c.allows(word, tick(end)));
        // Borrowing: the fence is the wall end plus the allowance.
        g.publish(window(end), &L, 5);
        assert!(c.allows(word, tick(end + 4)) && !c.allows(word, tick(end + 5)));
        // A tick of 10 ms (sonyflake): whole ticks of the allowance only.
        let s = Layout::SONYFLAKE;
        let end = s.epoch_ms() + 10_000;
        g.publish(window(end), &s, 25);
        let t = s.ticks_at(end - 1).expect("a time inside the layout");
        assert!(c.allows(word, t + 2) && !c.allows(word, t + 3));
    }

    #[test]
    fn the_monotonic_end_binds() {
        let g = SharedGate::new();
        let word = g.begin_lease(&holder(1));
        let c = g.check(word);
        let ended = LeaseWindow {
            wall_end_ms: u64::MAX,
            mono_end: LeaseClock::new().now(),
        };
        g.publish(ended, &L, 0);
        assert!(!c.allows(word, 0));
        assert_eq!(c.after_refusal(), AfterRefusal::Refused, "the same lease: no retry");
    }

    #[test]
    fn closing_and_closed_windows_refuse() {
        let g = SharedGate::new();
        let word = g.begin_lease(&holder(1));
        let c = g.check(word);
        g.publish(open(), &L, 0);
        assert!(c.allows(word, 5));
        g.close();
        assert!(!c.allows(word, 5));
        assert_eq!(g.lease(), word, "the word stays");
        g.publish(open(), &L, 0);
        assert!(c.allows(word, 5));
        g.publish(
            LeaseWindow {
                wall_end_ms: 0,
                mono_end: 0,
            },
            &L,
            0,
        );
        assert!(!c.allows(word, 5), "a closed window closes the gate");
        // A wall end the layout cannot express: nothing passes.
        g.publish(window(1), &L, 0);
        assert!(!c.allows(word, 0));
    }

    #[test]
    fn a_new_lease_refuses_ids_reserved_under_the_old_one() {
        let g = SharedGate::new();
        let first = g.begin_lease(&holder(3));
        let c = g.check(first);
        g.publish(open(), &L, 0);
        let under = c.begin();
        // The holder renews on the same node id meanwhile: a new epoch.
        let second = g.begin_lease(&holder(3));
        assert_ne!(second, first);
        assert!(!c.allows(under, 5), "closed by the new lease");
        g.publish(open(), &L, 0);
        assert!(!c.allows(under, 5), "reserved under the old lease");
        assert!(!c.is_current());
        assert_eq!(c.after_refusal(), AfterRefusal::Renewed);
        assert!(c.is_current());
        assert!(c.allows(c.begin(), 5));
        // Another node id: the generator must be rebuilt.
        let third = g.begin_lease(&holder(4));
        g.publish(open(), &L, 0);
        assert!(!c.allows(c.begin(), 5), "not this generator's node id");
        assert_eq!(c.after_refusal(), AfterRefusal::Renumbered);
        assert!(g.check(third).allows(third, 5));
        // Refused while the new lease's window is not open yet.
        g.begin_lease(&holder(4));
        assert_eq!(g.check(third).after_refusal(), AfterRefusal::Refused);
    }

    #[test]
    fn epochs_count_from_one_and_skip_zero() {
        let g = SharedGate::new();
        assert_eq!(g.begin_lease(&holder(9)) >> 32, 1);
        assert_eq!(g.begin_lease(&holder(9)) >> 32, 2);
        g.lease.store(0xffff_ffff << 32 | 9, Ordering::Release);
        assert_eq!(g.begin_lease(&holder(9)), 1 << 32 | 9, "wraps past 0");
        assert_eq!(SharedGate::node_of(0x1_0000_0005), 5, "the node id keeps its 32 bits");
    }

    /// The issue protocol of a backend (the PostgreSQL extension's): the lease word
    /// before reserving, the gate after, one retry after a renewal on the same node
    /// id; `drop_run`: whether a refusal drops the thread's run first.
    fn issue(check: &SharedGateCheck<'_>, g: &Generator<crate::SharedCounter>, drop_run: bool) -> Option<u64> {
        for _ in 0..2 {
            let under = check.begin();
            let id = g.next_id().ok()?;
            if check.allows(under, id >> (L.node_bits() + L.sequence_bits())) {
                return Some(id);
            }
            if drop_run {
                g.drop_run();
            }
            if check.after_refusal() != AfterRefusal::Renewed {
                return None;
            }
        }
        None
    }

    /// A batch as a backend makes it: the gate checks its last ID only.
    fn issue_batch(
        check: &SharedGateCheck<'_>,
        g: &Generator<crate::SharedCounter>,
        n: usize,
        drop_run: bool,
    ) -> Vec<u64> {
        for _ in 0..2 {
            let under = check.begin();
            let Ok(ids) = g.next_ids(n) else { return Vec::new() };
            if check.allows(under, ids[n - 1] >> (L.node_bits() + L.sequence_bits())) {
                return ids;
            }
            if drop_run {
                g.drop_run();
            }
            if check.after_refusal() != AfterRefusal::Renewed {
                break;
            }
        }
        Vec::new()
    }

    /// Server A's backend keeps a run of slots reserved in the gap after A lost node
    /// id 1 (its counter borrowed ahead); server B holds node 1 meanwhile and issues
    /// the IDs of that run's tick; A acquires node 1 again (its counter moved past
    /// B's fence) while the run is still ahead of A's clock. None of B's IDs comes
    /// back from A under the new lease — single IDs, or batches whose last ID alone
    /// is checked — and below its start nothing passes; with the run dropped on a
    /// refusal, every call succeeds.
    #[test]
    fn a_run_from_before_a_lease_is_refused_under_it() {
        use crate::{Clock, ManualClock, Overflow, SharedCounter, sync::AtomicU64};
        use std::collections::HashSet;
        const T0: u64 = 1_800_000_000_000;
        const PER_TICK: usize = 4096;
        let leak = || -> &'static AtomicU64 { Box::leak(Box::new(AtomicU64::new(0))) };
        let borrowing = |clock: &ManualClock, counter: &'static AtomicU64, after: u64| -> Generator<SharedCounter> {
            Generator::builder(L)
                .node(1)
                .overflow(Overflow::Borrow)
                .max_borrow_ms(100)
                .clock(clock.clone())
                .resume_after_ms(after)
                .build_shared(counter)
                .expect("a generator")
        };
        for drop_run in [false, true] {
            let gate = SharedGate::new();
            let counter_a = leak();
            let clock_a = ManualClock::new(T0);
            let first = gate.begin_lease(&holder_over(counter_a));
            gate.publish(window(T0 + 1_000), &L, 100);
            let backend = borrowing(&clock_a, counter_a, 0);
            let check = gate.check(first);
            assert!(issue(&check, &backend, drop_run).is_some(), "lease 1 issues");
            // The lease is lost at T0 + 1000 (its fence: T0 + 1100). In the gap the
            // backend's calls are refused, but its counter moved 90 ms ahead, and it
            // now keeps a run of the slots of tick T0 + 1590.
            gate.close();
            clock_a.set(T0 + 1_500);
            let gap = backend.next_ids(90 * PER_TICK).expect("the counter moves");
            assert!(!check.allows(check.begin(), gap[0] >> 22));
            let run = backend.take_run_for_test().expect("a run");
            assert_eq!(L.decompose(run).timestamp_ms, T0 + 1_590);
            assert!(issue(&check, &backend, drop_run).is_none(), "refused in the gap");
            // Server B holds node 1 after A's fence and issues, borrowing ahead.
            let clock_b = ManualClock::new(T0 + 1_500);
            let b = borrowing(&clock_b, leak(), T0 + 1_100);
            let mut ids_b: HashSet<u64> = b.next_ids(90 * PER_TICK + 200).expect("B issues").into_iter().collect();
            assert!(ids_b.contains(&run), "B issued the run's first ID");
            // B releases: its fence bounds what it issued by its clock plus the borrow.
            let fence_b = clock_b.now_ms() + 100 + 1;
            assert!(b.last_issued_ms().expect("issued") < fence_b);
            // A acquires node 1 again: acquiring moves its counter past B's fence.
            clock_a.set(T0 + 1_510);
            let second = gate.begin_lease(&holder_over_after(counter_a, fence_b));
            assert_eq!(SharedGate::node_of(second), 1);
            gate.publish(window(T0 + 2_510), &L, 100);
            let (mut returned, mut theirs, mut below_fence) = (0, 0, 0);
            // Single IDs first, then batches: a small one the rest of the run could
            // give whole, and a larger one.
            let singles: Vec<u64> = (0..100).filter_map(|_| issue(&check, &backend, drop_run)).collect();
            let batches = [3, 200]
                .into_iter()
                .flat_map(|n| issue_batch(&check, &backend, n, drop_run));
            for id in singles.into_iter().chain(batches.collect::<Vec<_>>()) {
                returned += 1;
                below_fence += usize::from(L.decompose(id).timestamp_ms <= fence_b);
                theirs += usize::from(!ids_b.insert(id));
            }
            assert_eq!(
                (theirs, below_fence),
                (0, 0),
                "IDs of the other holder, and IDs at or below its fence, returned under the new lease \
                 ({returned} returned, drop_run {drop_run})"
            );
            if drop_run {
                assert_eq!(returned, 303, "a refusal dropped the run: every retry is fresh");
            }
        }
    }
}
