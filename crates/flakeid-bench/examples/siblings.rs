//! A strict generator beside a borrowing one on the same node id in one process
//! (one counter): how many IDs each strict thread gets, its slowest call, and its
//! errors, while borrowing threads issue as fast as they can.
//!
//! `cargo run --release -p flakeid-bench --example siblings [SECONDS [MAX_BORROW_MS]]`
//! (the strict generator's `max_wait_ms` is the default, 1000: a borrow window
//! past it gives the strict calls their documented error instead of a wait).
use flakeid_core::{Generator, Layout, Overflow};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let arg = |i: usize, default: u64| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let (secs, max_borrow_ms) = (arg(1, 2), arg(2, 500));
    let build = |overflow| {
        Generator::builder(Layout::SNOWFLAKE)
            .node(77)
            .host_guard(false)
            .overflow(overflow)
            .max_borrow_ms(max_borrow_ms)
            .build()
            .expect("generator")
    };
    let borrowing = build(Overflow::Borrow);
    let strict = build(Overflow::Wait);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let fast: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        if borrowing.next_id().is_ok() {
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect();
        let slow: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let (mut n, mut errors, mut worst) = (0u64, 0u64, Duration::ZERO);
                    while !stop.load(Ordering::Relaxed) {
                        let at = Instant::now();
                        match strict.next_id() {
                            Ok(_) => n += 1,
                            Err(_) => errors += 1,
                        }
                        worst = worst.max(at.elapsed());
                    }
                    (n, errors, worst)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
        for (i, h) in fast.into_iter().enumerate() {
            println!("borrowing thread {i}: {} IDs", h.join().expect("thread"));
        }
        for (i, h) in slow.into_iter().enumerate() {
            let (n, errors, worst) = h.join().expect("thread");
            println!("strict thread {i}: {n} IDs, {errors} errors, slowest call {worst:?}");
        }
    });
}
