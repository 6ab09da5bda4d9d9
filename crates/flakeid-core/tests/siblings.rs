//! A strict generator beside a borrowing one on the same node id in one process
//! (one counter, crate::owner): each strict call returns its ID or its documented
//! error within its `max_wait_ms`, however busy the borrowing one keeps its window,
//! never starved. The bound is the wait hook's count (it runs every 10 ms of a
//! call's wait, counted from the call's entry), not a timing: however late the
//! scheduler lets a call look, a look past its `max_wait_ms` returns without running
//! the hook. The deterministic twin, on a scripted clock:
//! `src/generator/budget_tests.rs`.
#![cfg(any(unix, windows))]
#![allow(clippy::unwrap_used)]

use flakeid_core::{Error, Generator, Layout, Overflow, precise_now_ms};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[test]
fn a_strict_generator_beside_a_borrowing_one_returns_within_max_wait_ms() {
    let borrowing = Generator::builder(Layout::SNOWFLAKE)
        .node(41)
        .host_guard(false)
        .overflow(Overflow::Borrow)
        .max_borrow_ms(40)
        .build()
        .unwrap();
    let hooks = Arc::new(AtomicU64::new(0));
    let seen = Arc::clone(&hooks);
    let max_wait_ms = 100;
    let strict = Generator::builder(Layout::SNOWFLAKE)
        .node(41)
        .host_guard(false)
        .max_wait_ms(max_wait_ms)
        .wait_hook(Arc::new(move || {
            // Far past what the contract allows: end the call (with this error).
            if seen.fetch_add(1, Ordering::Relaxed) >= 100 {
                return Err(Error::config("wait_hook", "starved"));
            }
            Ok(())
        }))
        .build()
        .unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Keeps the shared counter at the end of its borrow window.
        let busy = s.spawn(|| {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                borrowing.next_ids(4096).unwrap();
                n += 1;
            }
            n
        });
        // Stops the borrowing thread however this one ends (a failed assertion too).
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = Stop(&stop);
        let (mut ok, mut most) = (0, 0);
        for _ in 0..100 {
            // Each call meets the borrowing one ahead of the clock.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while strict.last_issued_ms().unwrap_or(0) <= precise_now_ms() + 5 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the borrowing thread never ran ahead"
                );
                std::thread::yield_now();
            }
            hooks.store(0, Ordering::Relaxed);
            match strict.next_id() {
                Ok(id) => {
                    ok += 1;
                    // Strict: returned once the clock has reached it.
                    let at = Layout::SNOWFLAKE.decompose(id).timestamp_ms;
                    assert!(at <= precise_now_ms(), "{at} ahead of the clock");
                }
                // Its documented error past max_wait_ms (the clock behind IDs issued).
                Err(Error::ClockMovedBackwards { .. }) => {}
                Err(e) => panic!("{e}"),
            }
            most = most.max(hooks.load(Ordering::Relaxed));
        }
        stop.store(true, Ordering::Relaxed);
        assert!(busy.join().unwrap() > 0);
        // Every call returned within its max_wait_ms: the hook runs only while a
        // call is within its bound, counted from its entry (max_wait_ms, and
        // tick_ms + 2 ms of rounding for a slot taken and returned when due), at
        // least 10 ms of waiting apart, so a look the scheduler delayed adds none.
        assert!(
            most <= max_wait_ms / 10 + 1,
            "{most} hook runs in one call ({ok} of 100 calls issued)"
        );
    });
}
