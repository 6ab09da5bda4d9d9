//! flakeid-core's benches (`benches/`, run with `cargo bench -p flakeid-bench`;
//! `--features lease` or `uuid7` for the benches that need them). Not published:
//! a crate of its own so that criterion and the peer crates stay out of the core's
//! dev-dependencies. This library holds what several benches use.

use flakeid_core::Layout;

/// docs/migrating.md's Rust blocks, run by `cargo test --doc` beside the peers they
/// name (ferroid and the `uuid` crate are this crate's dev-dependencies).
#[cfg(all(doctest, feature = "uuid7"))]
#[doc = include_str!("../../../docs/migrating.md")]
pub struct MigratingDoctests;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// An hour in milliseconds: how far ahead of the clock a borrowing bench may run.
pub const HOUR_MS: u64 = 3_600_000;

/// The number in environment variable `name`, or `default`.
pub fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A layout whose sequence never runs out (22 sequence bits, no node bits): a call's
/// cost without the per-millisecond cap.
pub fn below_the_cap() -> Layout {
    Layout::builder()
        .time_bits(41)
        .node_bits(0)
        .sequence_bits(22)
        .build()
        .expect("layout")
}

/// `iters` calls of `next` in all, split over `threads` threads; the wall time.
pub fn threaded<T>(iters: u64, threads: u64, next: impl Fn() -> T + Sync) -> Duration {
    let per = iters.div_ceil(threads);
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..per {
                    black_box(next());
                }
            });
        }
    });
    start.elapsed()
}
