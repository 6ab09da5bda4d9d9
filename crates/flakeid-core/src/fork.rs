//! Fork detection without a `getpid()` per ID: a `pthread_atfork` child handler
//! bumps a counter, and a generator compares it with the value it was built under
//! (one relaxed load on the hot path).

use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

/// How many times this process's ancestry has forked since the handler was registered.
#[inline]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// Install the at-fork handler (idempotent, cheap after the first call).
pub(crate) fn register() {
    REGISTER.call_once(install);
}

#[cfg(unix)]
fn install() {
    extern "C" fn in_child() {
        GENERATION.fetch_add(1, Ordering::Relaxed);
        crate::clock::forget_ticker_after_fork();
    }
    // SAFETY: registering a handler that only touches atomics, which is
    // async-signal-safe as a fork child handler must be.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    debug_assert_eq!(rc, 0, "pthread_atfork failed");
}

#[cfg(not(unix))]
fn install() {}
