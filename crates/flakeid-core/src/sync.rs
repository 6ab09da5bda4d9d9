//! The atomics and thread-locals of the counter protocol: loom's under `cfg(loom)`,
//! so that the model checker (`tests/loom.rs`, `make test-loom`) sees every access
//! the protocol makes, and std's otherwise (no cost, no dependency). With the
//! `portable-atomic` feature the 64-bit atomics are portable-atomic's, which are
//! core's where the target has them and a lock-based fallback where it does not.

#[cfg(all(not(loom), not(feature = "portable-atomic")))]
pub(crate) use core::sync::atomic::AtomicU64;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::AtomicU64;
#[cfg(all(not(loom), feature = "portable-atomic"))]
pub(crate) use portable_atomic::AtomicU64;

/// The 64-bit atomic of what the model checker need not see (the statistics).
#[cfg(not(feature = "portable-atomic"))]
pub(crate) use core::sync::atomic::AtomicU64 as PlainAtomicU64;
#[cfg(feature = "portable-atomic")]
pub(crate) use portable_atomic::AtomicU64 as PlainAtomicU64;

/// Real elapsed time in ms on a monotonic clock, for bounding waits whatever the
/// generator's own [`Clock`](crate::Clock) says (a frozen or stepped test clock
/// must not turn a bounded wait into a hang).
#[cfg(all(feature = "std", not(all(target_family = "wasm", target_os = "unknown"))))]
pub(crate) fn monotonic_ms() -> u64 {
    monotonic_us() / 1000
}

/// The same clock in µs (for the wait statistics).
#[cfg(all(feature = "std", not(all(target_family = "wasm", target_os = "unknown"))))]
pub(crate) fn monotonic_us() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}
