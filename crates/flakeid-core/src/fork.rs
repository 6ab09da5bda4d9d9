//! Fork detection without a `getpid()` per ID: a `pthread_atfork` child handler
//! bumps a counter, and a generator compares it with the value it was built under
//! (one relaxed load on the hot path).

use crate::sync::PlainAtomicU64 as AtomicU64;
use core::sync::atomic::Ordering;
#[cfg(feature = "std")]
use std::sync::{Once, OnceLock};

static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Moves on every event after which a per-thread handle must not serve from its
/// run without the full checks: a fork (in the child), a `close()`, a node id lost.
/// A handle's fast path compares it with its copy (one relaxed load for all three).
static HANDLE_EPOCH: AtomicU64 = AtomicU64::new(0);
#[cfg(feature = "std")]
static REGISTER: Once = Once::new();
/// What else a forked child must undo, named by the module that needs it (the
/// clock: its ticker thread did not survive the fork), so that this floor knows
/// nothing above it. Read lock-free in the handler.
#[cfg(feature = "std")]
static ON_CHILD: OnceLock<fn()> = OnceLock::new();

/// How many times this process's ancestry has forked since the handler was registered.
#[inline]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}

/// The handles' epoch (see `HANDLE_EPOCH`), read before the checks it stands for:
/// what an event stored before moving it is seen by the checks after this load.
#[inline(always)]
pub(crate) fn handle_epoch() -> u64 {
    HANDLE_EPOCH.load(Ordering::Acquire)
}

/// The handles' epoch for the fast path's compare alone (no check follows it).
#[inline(always)]
pub(crate) fn handle_epoch_unchanged(seen: u64) -> bool {
    HANDLE_EPOCH.load(Ordering::Relaxed) == seen
}

/// Sends every per-thread handle's next call through its full checks: after a
/// `close()` or a lost node id (a fork moves the epoch in the child by itself).
pub(crate) fn end_handle_epoch() {
    HANDLE_EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// Install the at-fork handler (idempotent, cheap after the first call). Without
/// std there is no process to fork: nothing to install.
pub(crate) fn register() {
    #[cfg(feature = "std")]
    REGISTER.call_once(install);
}

/// [`register`], and run `hook` in every forked child after the generation moves
/// (one hook: the clock's).
#[cfg(feature = "std")]
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
pub(crate) fn register_with(hook: fn()) {
    let first = ON_CHILD.set(hook).is_ok() || ON_CHILD.get() == Some(&hook);
    debug_assert!(first, "a second fork hook");
    register();
}

#[cfg(all(feature = "std", unix))]
fn install() {
    extern "C" fn in_child() {
        GENERATION.fetch_add(1, Ordering::Relaxed);
        HANDLE_EPOCH.fetch_add(1, Ordering::Relaxed);
        if let Some(hook) = ON_CHILD.get() {
            hook();
        }
    }
    // SAFETY: registering a handler that only touches atomics (the hook too), which is
    // async-signal-safe as a fork child handler must be.
    let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
    debug_assert_eq!(rc, 0, "pthread_atfork failed");
}

#[cfg(all(feature = "std", not(unix)))]
fn install() {}
