//! Where time comes from.
//!
//! Reading the system clock costs 20–70 ns on the machines we run on — more than
//! everything else in `next_id()` together. [`SystemClock`] therefore serves the hot
//! path from a cache that a small background thread refreshes at every millisecond
//! boundary, and the generator treats that cache as a *hint*: whenever the cached
//! time would make it wait, borrow past the window, or report a rollback, it asks
//! for a precise reading first ([`Clock::now_ms_precise`]). So the cache can only
//! make an ID's timestamp lag the true time by the cache's staleness (normally well
//! under a millisecond); it can never cause a duplicate, a wait, or an error.
//!
//! The ticker thread starts on first use, stops after a second without readers,
//! and is forgotten in a forked child (which starts its own on demand).

use crate::sync::PlainAtomicU64 as AtomicU64;
use alloc::sync::Arc;
use core::fmt;
use core::sync::atomic::Ordering;

#[cfg(feature = "std")]
mod system;
#[cfg(feature = "std")]
pub use system::*;

/// Without std there is no system clock, so no cache: 0, which no per-thread
/// handle's fast state matches (a handle on a given clock keeps `u64::MAX`).
#[cfg(not(feature = "std"))]
#[inline(always)]
pub(crate) fn cached_raw() -> u64 {
    0
}

/// A source of Unix time in milliseconds. Implement it to drive a generator from
/// your own time source; [`ManualClock`] is the one for tests.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Unix time in ms. May be a cached value that lags by up to about a tick.
    fn now_ms(&self) -> u64;

    /// A fresh reading, asked for before the generator waits or reports that the
    /// clock went backwards. Defaults to [`Clock::now_ms`].
    fn now_ms_precise(&self) -> u64 {
        self.now_ms()
    }

    /// Called on every turn of a wait loop (the generator waits by spinning on the
    /// clock, never by sleeping a whole tick). Defaults to a spin hint and, with
    /// std, a yield.
    fn pause(&self) {
        core::hint::spin_loop();
        #[cfg(feature = "std")]
        std::thread::yield_now();
    }

    /// Real elapsed time in ms from any fixed point, on a clock that neither jumps
    /// nor stops: it bounds every wait (`max_wait_ms`) however this clock behaves,
    /// so a frozen or rolled-back clock gives an error instead of a hang. `None`
    /// where the platform has none (wasm32-unknown-unknown: bindings there supply
    /// `performance.now()`); waits are then bounded by this clock's own readings.
    /// Without std, `None` means a call never waits: where it would, it returns
    /// the error its wait would end with ([`Error::ClockStalled`](crate::Error::ClockStalled),
    /// [`Error::ClockMovedBackwards`](crate::Error::ClockMovedBackwards)) at once;
    /// a clock that implements this (a hardware timer that cannot stop) gets
    /// bounded waits.
    fn monotonic_ms(&self) -> Option<u64> {
        #[cfg(all(feature = "std", not(all(target_family = "wasm", target_os = "unknown"))))]
        return Some(crate::sync::monotonic_ms());
        #[cfg(not(all(feature = "std", not(all(target_family = "wasm", target_os = "unknown")))))]
        None
    }
}

/// A clock that moves only when told to — for deterministic tests.
///
/// Clones share one time, so a test keeps a handle while the generator holds
/// another. With [`ManualClock::with_auto_advance`], every turn of a generator's wait
/// loop advances the clock by that step, so scripted timelines that wait for the
/// next tick (or for a rolled-back clock to catch up) finish deterministically.
#[derive(Debug, Clone)]
///
/// ```
/// use flakeid_core::{Generator, Layout, ManualClock};
///
/// let clock = ManualClock::new(1_800_000_000_000); // Unix ms
/// let ids = Generator::builder(Layout::SNOWFLAKE).node(1).clock(clock.clone()).build()?;
/// let id = ids.next_id()?;
/// assert_eq!(Layout::SNOWFLAKE.decompose(id).timestamp_ms, 1_800_000_000_000);
/// clock.advance(5);
/// assert_eq!(Layout::SNOWFLAKE.decompose(ids.next_id()?).timestamp_ms, 1_800_000_000_005);
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub struct ManualClock {
    inner: Arc<ManualInner>,
}

#[derive(Debug)]
struct ManualInner {
    now: AtomicU64,
    step: AtomicU64,
}

impl ManualClock {
    /// A manual clock reading `unix_ms` (Unix milliseconds); it moves only when told.
    pub fn new(unix_ms: u64) -> ManualClock {
        ManualClock {
            inner: Arc::new(ManualInner {
                now: AtomicU64::new(unix_ms),
                step: AtomicU64::new(0),
            }),
        }
    }

    /// Advance by `step_ms` on every turn of a wait loop (0 = just yield).
    pub fn with_auto_advance(self, step_ms: u64) -> ManualClock {
        self.inner.step.store(step_ms, Ordering::Relaxed);
        self
    }

    /// Sets the time to `unix_ms` (it may go back: that is what tests of rollbacks want).
    pub fn set(&self, unix_ms: u64) {
        self.inner.now.store(unix_ms, Ordering::SeqCst);
    }

    /// Moves the clock forward by `ms`, saturating at `u64::MAX` (never wrapping to 0).
    pub fn advance(&self, ms: u64) {
        let _ = self
            .inner
            .now
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| Some(t.saturating_add(ms)));
    }

    /// The current time, Unix milliseconds.
    pub fn get(&self) -> u64 {
        self.inner.now.load(Ordering::SeqCst)
    }

    /// How far each turn of a wait loop advances the clock (0: it does not).
    pub fn auto_advance_ms(&self) -> u64 {
        self.inner.step.load(Ordering::Relaxed)
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.get()
    }

    fn pause(&self) {
        let step = self.inner.step.load(Ordering::Relaxed);
        if step > 0 {
            self.advance(step);
        } else {
            core::hint::spin_loop();
            #[cfg(feature = "std")]
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn cached_clock_tracks_the_os_clock() {
        let a = SystemClock.now_ms();
        let p = precise_now_ms();
        assert!(p + 5 >= a && a + 50 >= p, "cached {a} vs precise {p}");
        std::thread::sleep(Duration::from_millis(60));
        let b = SystemClock.now_ms();
        assert!(b > a, "the cache must move: {a} then {b}");
    }

    #[test]
    fn manual_clock_clones_share_time() {
        let c = ManualClock::new(10);
        let d = c.clone();
        c.advance(5);
        assert_eq!(d.now_ms(), 15);
        d.set(3);
        assert_eq!(c.get(), 3);
        let e = c.clone().with_auto_advance(2);
        e.pause();
        assert_eq!(c.get(), 5);
    }
}
