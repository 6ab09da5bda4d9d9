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
//! * a [`LeaseClock`] reading is below the window's monotonic end, and
//! * the lease is still the one the reservation was made under, so that an ID
//!   reserved before a new lease moved the counter past its fence is never returned
//!   under that lease.
//!
//! Why these clocks suffice where the in-process gate (`gate.rs`) derives a
//! realtime window from boot time: an issuer here stamps every ID with its own
//! reading of the system clock, so after a stop or a host suspend the ID's tick is
//! current and the tick end refuses it, although the monotonic clock stopped in the
//! suspend; a step of the realtime clock back is refused by the monotonic end, a
//! step forward only closes the window early.

use super::{LeaseClock, LeaseWindow};
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
        }
    }

    /// A closed gate with no lease (loom's atomics have no `const fn new`).
    #[cfg(loom)]
    pub fn new() -> SharedGate {
        SharedGate {
            lease: AtomicU64::new(0),
            tick_end: AtomicU64::new(0),
            mono_end: AtomicU64::new(0),
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

    // -----------------------------------------------------------------------------
    // The holder

    /// A new lease on `node` (below 2^32): closes the window, then stores the lease
    /// word with the next epoch, which it returns. Call it once the counter is past
    /// the new lease's fence: an issuer that sees the word reserves after it.
    pub fn begin_lease(&self, node: u64) -> u64 {
        self.close();
        let epoch = match ((self.lease.load(Ordering::Acquire) >> 32) + 1) & 0xffff_ffff {
            0 => 1,
            e => e,
        };
        let word = (epoch << 32) | Self::node_of(node);
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
    /// `under`, may be issued: the window is open for it, and it is the window of
    /// the lease the reservation was made under, which is this generator's.
    #[inline(always)]
    pub fn allows(&self, under: u64, tick: u64) -> bool {
        let g = self.gate;
        let open = tick < g.tick_end.load(Ordering::Acquire) && self.clock.now() < g.mono_end.load(Ordering::Acquire);
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
        let word = g.begin_lease(7);
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
        let word = g.begin_lease(1);
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
        let word = g.begin_lease(1);
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
        let first = g.begin_lease(3);
        let c = g.check(first);
        g.publish(open(), &L, 0);
        let under = c.begin();
        // The holder renews on the same node id meanwhile: a new epoch.
        let second = g.begin_lease(3);
        assert_ne!(second, first);
        assert!(!c.allows(under, 5), "closed by the new lease");
        g.publish(open(), &L, 0);
        assert!(!c.allows(under, 5), "reserved under the old lease");
        assert!(!c.is_current());
        assert_eq!(c.after_refusal(), AfterRefusal::Renewed);
        assert!(c.is_current());
        assert!(c.allows(c.begin(), 5));
        // Another node id: the generator must be rebuilt.
        let third = g.begin_lease(4);
        g.publish(open(), &L, 0);
        assert!(!c.allows(c.begin(), 5), "not this generator's node id");
        assert_eq!(c.after_refusal(), AfterRefusal::Renumbered);
        assert!(g.check(third).allows(third, 5));
        // Refused while the new lease's window is not open yet.
        g.begin_lease(4);
        assert_eq!(g.check(third).after_refusal(), AfterRefusal::Refused);
    }

    #[test]
    fn epochs_count_from_one_and_skip_zero() {
        let g = SharedGate::new();
        assert_eq!(g.begin_lease(9) >> 32, 1);
        assert_eq!(g.begin_lease(9) >> 32, 2);
        g.lease.store(0xffff_ffff << 32 | 9, Ordering::Release);
        assert_eq!(g.begin_lease(9), 1 << 32 | 9, "wraps past 0");
        assert_eq!(
            g.begin_lease(0x1_0000_0005),
            2 << 32 | 5,
            "the node id keeps its 32 bits"
        );
    }
}
