//! `Generator::stats`: every counter against a scripted clock, and the
//! IDs-issued count exact under real contention, strict and borrowing.

#![allow(clippy::unwrap_used)]

mod common;
#[cfg(feature = "lease")]
use common::file_lease;
use common::{borrowing, on_clock};
use flakeid_core::{ClockBackwards, Generator, Layout, ManualClock, Overflow};
use std::sync::Arc;

const T0: u64 = 1_700_000_000_000;

#[test]
fn ids_issued_counts_every_call_and_only_those() {
    let clock = ManualClock::new(T0);
    let g = on_clock(Layout::SNOWFLAKE, 1, &clock).build().unwrap();
    assert_eq!(g.stats().ids_issued, 0);
    g.next_id().unwrap();
    assert_eq!(g.stats().ids_issued, 1);
    g.next_ids(100).unwrap();
    let mut buf = [0u64; 7];
    g.fill(&mut buf).unwrap();
    assert_eq!(g.stats().ids_issued, 108);
    // Ticks far apart: the slots between are not IDs.
    clock.advance(1_000);
    g.next_id().unwrap();
    clock.advance(3);
    g.try_next_id().unwrap().unwrap();
    let s = g.stats();
    assert_eq!(
        (s.ids_issued, s.tick_waits, s.clock_rollbacks, s.lead_ms),
        (110, 0, 0, 0)
    );
    assert_eq!((s.lease_state, s.lease_remaining_ms), (None, None));
}

#[test]
fn each_full_tick_is_one_wait() {
    // 4 IDs per tick; the clock moves 1 ms per turn of the wait loop.
    let clock = ManualClock::new(T0).with_auto_advance(1);
    let g = on_clock(Layout::FLAKE, 0, &clock).max_sequence(3).build().unwrap();
    g.next_ids(4).unwrap();
    assert_eq!(g.stats().tick_waits, 0);
    g.next_id().unwrap(); // the tick is used up: waits for the next
    let s = g.stats();
    assert_eq!((s.ids_issued, s.tick_waits), (5, 1));
    // A batch across 3 more ticks waits out each of them.
    g.next_ids(12).unwrap();
    assert_eq!(g.stats().ids_issued, 17);
    assert_eq!(g.stats().tick_waits, 4);
    // Each wait took at least one turn of the loop; µs are real time, so only
    // their presence is certain.
    assert!(g.stats().tick_wait_us < 10_000_000);
}

#[test]
fn rollbacks_are_counted_once_per_call_with_the_largest() {
    let clock = ManualClock::new(T0);
    let g = on_clock(Layout::FLAKE, 0, &clock).build().unwrap();
    g.next_id().unwrap();
    clock.set(T0 - 250);
    assert!(g.next_id().is_err()); // the default policy refuses
    assert!(g.try_next_id().is_err());
    clock.set(T0 - 40);
    assert!(g.next_id().is_err());
    let s = g.stats();
    assert_eq!((s.clock_rollbacks, s.max_rollback_ms, s.ids_issued), (3, 250, 1));

    // Monotonic keeps issuing from the last tick: a rollback seen, IDs counted.
    let clock = ManualClock::new(T0);
    let g = on_clock(Layout::FLAKE, 0, &clock)
        .clock_backwards(ClockBackwards::Monotonic)
        .build()
        .unwrap();
    g.next_id().unwrap();
    clock.set(T0 - 7);
    g.next_id().unwrap();
    let s = g.stats();
    assert_eq!((s.clock_rollbacks, s.max_rollback_ms, s.ids_issued), (1, 7, 2));
}

#[test]
fn a_borrowing_generator_reports_its_lead() {
    let clock = ManualClock::new(T0);
    let g = borrowing(Layout::FLAKE, 0, 50, &clock).max_sequence(3).build().unwrap();
    g.next_ids(4 * 11).unwrap(); // ticks T0 ..= T0 + 10
    let s = g.stats();
    assert_eq!((s.ids_issued, s.lead_ms, s.tick_waits), (44, 10, 0));
    clock.advance(30);
    assert_eq!(g.stats().lead_ms, 0);
}

/// Real threads on the real clock: whatever the interleaving of tick changes,
/// chunks and waits, the count is exactly the IDs the callers received once they
/// have stopped, and no snapshot taken meanwhile ever goes down.
fn contended(node: u64, overflow: Overflow) {
    let g = Arc::new(
        Generator::builder(Layout::SNOWFLAKE)
            .node(node)
            .overflow(overflow)
            .build()
            .unwrap(),
    );
    let per_thread = 200_000u64;
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let g = g.clone();
            std::thread::spawn(move || {
                for _ in 0..per_thread {
                    g.next_id().unwrap();
                }
            })
        })
        .collect();
    // Threads may hold runs they have not used yet (lone runs, and borrowing
    // threads' runs after a lost race), counted as issued when another thread asks
    // (Stats::ids_issued): up to 127 slots each, at any moment.
    let slack = 3 * 127;
    let mut last = 0;
    while !workers.iter().all(|w| w.is_finished()) {
        let now = g.stats().ids_issued;
        assert!(
            now <= 3 * per_thread + slack,
            "{now} counted, at most {} issued and {slack} held in runs",
            3 * per_thread
        );
        // A run passed over stops counting: the count goes back by what runs
        // held, never more.
        assert!(now + slack >= last, "went down from {last} to {now}");
        last = now;
    }
    for w in workers {
        w.join().unwrap();
    }
    // Exited threads may have held runs they had not used: their slots count as
    // issued.
    let count = g.stats().ids_issued;
    assert!(
        (3 * per_thread..=3 * per_thread + slack).contains(&count),
        "{count} counted, {} issued, at most {slack} held in runs",
        3 * per_thread
    );
}

#[test]
fn ids_issued_is_exact_under_contention_strict() {
    contended(3, Overflow::Wait); // a node id each: the two run at once
}

#[test]
fn ids_issued_is_exact_under_contention_borrowing() {
    contended(4, Overflow::Borrow);
}

#[cfg(feature = "lease")]
#[test]
fn a_leased_generator_reports_its_lease() {
    let (dir, url) = file_lease("stats");
    let g = Generator::builder(Layout::SNOWFLAKE).lease_url(&url).build().unwrap();
    g.next_id().unwrap();
    let s = g.stats();
    assert_eq!(s.lease_state, Some("held"));
    // A file lease is held while the process lives: its window is far ahead.
    assert!(s.lease_remaining_ms.unwrap() > 0);
    g.release_lease();
    let s = g.stats();
    assert_eq!((s.lease_state, s.lease_remaining_ms), (Some("released"), Some(0)));
    drop(g);
    std::fs::remove_dir_all(&dir).unwrap();
}
