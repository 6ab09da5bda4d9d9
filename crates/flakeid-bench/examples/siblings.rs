//! A strict generator beside a borrowing one on the same node id in one process
//! (one counter): how many IDs each strict thread gets, its slowest call, its
//! errors and its calls longer than its `max_wait_ms` (+ 2 ms: the clocks are read
//! in whole ms), while borrowing threads issue as fast as they can.
//!
//! `cargo run --release -p flakeid-bench --example siblings [SECONDS [MAX_BORROW_MS [MAX_WAIT_MS]]]`
//! (defaults 2, 500 and 1000, the strict generator's default `max_wait_ms`: a
//! borrow window past it gives the strict calls their documented error instead of
//! a wait).
use flakeid_core::{Generator, Layout, Overflow};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn main() {
    let arg = |i: usize, default: u64| std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let (secs, max_borrow_ms, max_wait_ms) = (arg(1, 2), arg(2, 500), arg(3, 1000));
    let build = |overflow| {
        Generator::builder(Layout::SNOWFLAKE)
            .node(77)
            .host_guard(false)
            .overflow(overflow)
            .max_borrow_ms(max_borrow_ms)
            .max_wait_ms(max_wait_ms)
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
                    let (mut n, mut errors, mut worst, mut over) = (0u64, 0u64, Duration::ZERO, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        let at = Instant::now();
                        match strict.next_id() {
                            Ok(_) => n += 1,
                            Err(_) => errors += 1,
                        }
                        let took = at.elapsed();
                        worst = worst.max(took);
                        over += u64::from(took > Duration::from_millis(max_wait_ms + 2));
                    }
                    (n, errors, worst, over)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs(secs));
        stop.store(true, Ordering::Relaxed);
        for (i, h) in fast.into_iter().enumerate() {
            println!("borrowing thread {i}: {} IDs", h.join().expect("thread"));
        }
        for (i, h) in slow.into_iter().enumerate() {
            let (n, errors, worst, over) = h.join().expect("thread");
            println!(
                "strict thread {i}: {n} IDs, {errors} errors, slowest call {worst:?}, {over} calls over max_wait_ms + 2 ms"
            );
        }
    });
}
