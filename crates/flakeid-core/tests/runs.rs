//! The bounds of the runs a per-thread handle and a thread's lone runs hold, on a
//! manual clock driving the real path (no timing): a handle serves nothing past
//! its run's end nor past its slot's tick, and holds at most a quarter of a small
//! tick beyond what it issued.
#![allow(clippy::unwrap_used)]

mod common;
use common::borrowing;
use flakeid_core::{Clock, Generator, Layout, ManualClock, Overflow};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const T: u64 = 1_800_000_000_000;

fn on(clock: &ManualClock, overflow: Overflow, max_sequence: Option<u64>) -> Generator {
    let b = Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(33)
        .overflow(overflow)
        .max_borrow_ms(10)
        .clock(clock.clone());
    match max_sequence {
        Some(m) => b.max_sequence(m),
        None => b,
    }
    .build()
    .unwrap()
}

/// A handle's calls and batches between the generator's, in one tick: every slot
/// after the handle's run is the generator's, and the handle serves none of them.
#[test]
fn a_handle_serves_nothing_past_its_runs_end() {
    for overflow in [Overflow::Wait, Overflow::Borrow] {
        let clock = ManualClock::new(T);
        let g = on(&clock, overflow, None);
        let mut h = g.local();
        let mut seen = HashSet::new();
        for round in 0..300u64 {
            for _ in 0..round % 11 {
                let id = h.next_id().unwrap();
                assert!(seen.insert(id), "{overflow:?}: the handle served {id} twice");
            }
            let id = g.next_id().unwrap();
            assert!(seen.insert(id), "{overflow:?}: the handle served the generator's {id}");
            // A batch from the handle: from its run only when the run holds all of it.
            for id in h.next_ids((round % 5) as usize).unwrap() {
                assert!(seen.insert(id), "{overflow:?}: the handle's batch repeated {id}");
            }
            let id = g.next_id().unwrap();
            assert!(seen.insert(id), "{overflow:?}: the handle served the generator's {id}");
        }
    }
}

/// A borrowing handle whose runs cross from one tick into the next (the clock
/// stands still): every ID carries the generator's node id and a sequence of its
/// own tick, increasing, within the borrow window.
#[test]
fn a_handles_ids_stay_in_their_slots_tick() {
    let clock = ManualClock::new(T);
    let g = on(&clock, Overflow::Borrow, None);
    let mut h = g.local();
    let mut last = 0;
    for _ in 0..3 * 4096 {
        let id = h.next_id().unwrap();
        let p = Layout::SNOWFLAKE.decompose(id);
        assert_eq!(p.node, 33, "{id}: {p:?}");
        assert!(p.timestamp_ms <= T + 10, "{p:?}");
        assert!(id > last);
        last = id;
    }
}

/// On a small tick (64 slots: `max_sequence` 63) a handle's run is at most a
/// quarter of it: whenever the handle stops, the generator's next ID in the same
/// tick comes at most 16 slots after the handle's last.
#[test]
fn a_handle_holds_at_most_a_quarter_of_a_small_tick() {
    for k in 1..=40 {
        let clock = ManualClock::new(T);
        let g = on(&clock, Overflow::Wait, Some(63));
        let mut h = g.local();
        let mut mine = 0;
        for _ in 0..k {
            mine = h.next_id().unwrap();
        }
        let theirs = g.next_id().unwrap();
        let (a, b) = (Layout::SNOWFLAKE.decompose(mine), Layout::SNOWFLAKE.decompose(theirs));
        assert_eq!(a.timestamp_ms, b.timestamp_ms, "after {k} IDs");
        let held = b.sequence - a.sequence - 1;
        assert!(held <= 16, "after {k} IDs the handle held {held} slots more");
    }
}

/// A clock whose cached reading may lag its precise one, as the system clock's
/// cache lags just after a tick (clones share the readings).
#[derive(Debug, Clone, Default)]
struct Lagging(Arc<(AtomicU64, AtomicU64)>);

impl Lagging {
    fn set(&self, cached: u64, precise: u64) {
        self.0.0.store(cached, Ordering::Relaxed);
        self.0.1.store(precise, Ordering::Relaxed);
    }
}

impl Clock for Lagging {
    fn now_ms(&self) -> u64 {
        self.0.0.load(Ordering::Relaxed)
    }
    fn now_ms_precise(&self) -> u64 {
        self.0.1.load(Ordering::Relaxed)
    }
}

/// A handle's run reserved in a tick its later calls' cached reading has not
/// reached (the precise reading decides, as on the generator's path): it serves
/// the run and nothing past its end, where the generator's slots are.
#[test]
fn a_run_ahead_of_the_cached_clock_ends_at_its_end() {
    let clock = Lagging::default();
    clock.set(T + 1, T + 1);
    let g = Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(33)
        .clock(clock.clone())
        .build()
        .unwrap();
    let mut h = g.local();
    let mut seen = HashSet::new();
    for k in 1..40 {
        // The handle takes runs in tick T + 1, the generator the slot after them.
        clock.set(T + k, T + k);
        for _ in 0..3 {
            assert!(seen.insert(h.next_id().unwrap()));
        }
        assert!(seen.insert(g.next_id().unwrap()));
        // Now the cache lags a tick (the precise reading decides), then catches up:
        // the handle serves the rest of its run only.
        clock.set(T + k - 1, T + k);
        assert!(seen.insert(h.next_id().unwrap()));
        clock.set(T + k, T + k);
        for _ in 0..8 {
            let id = h.next_id().unwrap();
            assert!(seen.insert(id), "round {k}: {id} twice");
        }
        assert!(seen.insert(g.next_id().unwrap()));
    }
}

/// A thread's lone runs of a borrowing generator on a small tick (64 slots), the
/// clock standing still: a run never holds the next tick's slots before one is
/// issued, so the lead `stats()` reports is always the last ID's.
#[test]
fn a_lone_run_stays_in_its_first_slots_tick() {
    let layout = Layout::builder()
        .time_bits(41)
        .node_bits(16)
        .sequence_bits(6)
        .build()
        .unwrap();
    let clock = ManualClock::new(T);
    let g = borrowing(layout, 33, 10, &clock).host_guard(false).build().unwrap();
    for k in 1..=600 {
        let id = g.next_id().unwrap();
        let at = layout.decompose(id).timestamp_ms;
        assert_eq!(g.stats().lead_ms, at - T, "after {k} IDs");
    }
}
