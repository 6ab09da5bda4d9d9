//! The flag the host guard's held files and the owner table sit behind. Their
//! at-fork handlers take it before every fork and give it back on both sides, so a
//! child never inherits it taken mid-change; a mutex could not be given back in the
//! child. Taken by spinning (yielding): it is held for a few instructions.

use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) struct SpinFlag(AtomicBool);

impl SpinFlag {
    pub(crate) const fn new() -> Self {
        SpinFlag(AtomicBool::new(false))
    }

    /// Waits until this thread has taken it (Acquire).
    pub(crate) fn take(&self) {
        while self
            .0
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
    }

    /// Gives it back (Release).
    pub(crate) fn give(&self) {
        self.0.store(false, Ordering::Release);
    }
}
