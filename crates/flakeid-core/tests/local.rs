//! The per-thread handle (`Generator::local`): its runs against the shared
//! counter, and every rule of the generator it came from, on a manual clock.
//! The forced interleavings and real contention are in `tests/race.rs`, the
//! model check in `tests/loom.rs`.
#![allow(clippy::unwrap_used)]

mod common;
use common::*;
use flakeid_core::{Clock, ClockBackwards, Error, Generator, Layout, ManualClock, Overflow, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const T: u64 = 1_800_000_000_000;
const SEQ: u64 = 1 << 12;

fn seq_and_ms(id: u64) -> (u64, u64) {
    let p = Layout::SNOWFLAKE.decompose(id);
    (p.sequence, p.timestamp_ms)
}

fn generator(clock: &ManualClock, overflow: Overflow, policy: ClockBackwards) -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .datacenter(2)
        .worker(9)
        .overflow(overflow)
        .max_borrow_ms(1)
        .clock_backwards(policy)
        .max_wait_ms(0)
        .clock(clock.clone())
        .build()
        .unwrap()
}

/// Two handles and the generator, interleaved: one layout and node id, no ID
/// twice, each handle's IDs strictly increasing, every ID in the clock's tick.
#[test]
fn handles_and_the_generator_never_repeat_and_each_handle_increases() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Wait, ClockBackwards::Error);
    let (mut a, mut b) = (g.local(), g.local());
    let (mut from_a, mut from_b, mut shared) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3000u64 {
        if i % 1000 == 999 {
            clock.advance(1);
        }
        from_a.push(a.next_id().unwrap());
        if i % 3 == 0 {
            from_b.push(b.try_next_id().unwrap().unwrap());
        }
        if i % 7 == 0 {
            shared.push(g.next_id().unwrap());
        }
    }
    for ids in [&from_a, &from_b] {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "a handle's IDs went backwards");
    }
    let mut all: Vec<u64> = from_a.iter().chain(&from_b).chain(&shared).copied().collect();
    for &id in &all {
        let p = Layout::SNOWFLAKE.decompose(id);
        assert_eq!((p.datacenter, p.worker), (2, 9));
        assert!((T..=T + 3).contains(&p.timestamp_ms));
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID issued twice");
}

/// A handle alone takes its slots in order: runs doubling from 2 to the
/// generator's run size, each from the counter, none passed over.
#[test]
fn a_handle_alone_spends_every_slot_of_its_runs() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Wait, ClockBackwards::Error);
    let mut h = g.local();
    let seqs: Vec<u64> = (0..1000).map(|_| seq_and_ms(h.next_id().unwrap()).0).collect();
    assert_eq!(seqs, (0..1000).collect::<Vec<_>>());
    // Runs of 2, 4, …, 128, then 128s: the counter is at most a run ahead.
    let ahead = g.stats().ids_issued - 1000;
    assert!(ahead < 128, "{ahead} slots reserved past those issued");
    drop(h);
    assert_eq!(g.stats().ids_issued, 1000, "a dropped handle's rest is not counted");
    assert_eq!(seq_and_ms(g.next_id().unwrap()).0, 1000 + ahead);
}

/// Strict mode: a full tick waits for the next one; a run never holds slots of
/// two ticks; `try_next_id` says `None` where `next_id` would wait.
#[test]
fn strict_a_used_up_tick_waits_and_try_next_id_does_not() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Wait, ClockBackwards::Error);
    let mut h = g.local();
    for s in 0..SEQ {
        assert_eq!(seq_and_ms(h.next_id().unwrap()), (s, T));
    }
    assert_eq!(h.try_next_id().unwrap(), None);
    let auto = clock.clone().with_auto_advance(1);
    let g2 = generator(&auto, Overflow::Wait, ClockBackwards::Error);
    let mut h2 = g2.local();
    let ids = (0..SEQ + 1).map(|_| h2.next_id().unwrap()).collect::<Vec<_>>();
    assert_eq!(seq_and_ms(ids[SEQ as usize]), (0, T + 1), "waited for the next tick");
    assert!(g2.stats().tick_waits >= 1);
}

/// The run of a handle that issues again in a later tick is passed over (no ID
/// older than its call's clock), and counted as not issued.
#[test]
fn a_run_older_than_the_clock_is_passed_over() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Borrow, ClockBackwards::Error);
    let mut h = g.local();
    for _ in 0..10 {
        h.next_id().unwrap();
    }
    clock.advance(1);
    let id = h.next_id().unwrap();
    assert_eq!(seq_and_ms(id).1, T + 1);
    drop(h);
    assert_eq!(g.stats().ids_issued, 11);
}

/// The borrow bound holds for the handle's run: with the clock moved back past the
/// window, no slot of the run is issued; the verdict is the counter's.
#[test]
fn a_run_past_the_window_the_clock_allows_is_not_issued() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Borrow, ClockBackwards::Error);
    let mut h = g.local();
    for _ in 0..20 {
        h.next_id().unwrap();
    }
    clock.set(T - 2);
    assert!(matches!(h.next_id(), Err(Error::ClockMovedBackwards { by_ms: 2 })));
    assert!(matches!(h.try_next_id(), Err(Error::ClockMovedBackwards { .. })));
    clock.set(T - 1);
    let id = h.next_id().unwrap();
    assert_eq!(seq_and_ms(id).1, T, "inside the window again");
    // The borrowed window ends at T: a handle never stamps past it, and waits
    // (here: a stopped clock, so it gives up) when it is used up.
    let mut ids = vec![id];
    loop {
        match h.next_id() {
            Ok(id) => ids.push(id),
            Err(Error::ClockStalled { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    // Runs of 2, 4, 8 and 16 held 30 slots at the rollback, 20 issued: the
    // other 10 were dropped with the run, as a thread's run is.
    assert_eq!(ids.len() as u64 + 30, SEQ, "every other slot of tick T issued once");
    assert!(ids.iter().all(|&id| seq_and_ms(id).1 <= T));
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

/// `clock_backwards = monotonic`: behind the clock the handle takes one slot per
/// call from the counter's last tick, every one of them, and then errs as the
/// generator does.
#[test]
fn a_monotonic_rollback_keeps_the_last_ticks_slots() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Wait, ClockBackwards::Monotonic);
    let mut h = g.local();
    let first = h.next_id().unwrap();
    clock.set(T - 5);
    let mut behind = Vec::new();
    let err = loop {
        match h.next_id() {
            Ok(id) => behind.push(id),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::ClockMovedBackwards { by_ms: 5 }), "{err}");
    assert!(behind.iter().all(|&id| seq_and_ms(id).1 == T && id > first));
    assert!(behind.windows(2).all(|w| w[1] == w[0] + 1), "one slot at a time");
    assert_eq!(seq_and_ms(*behind.last().unwrap()).0, SEQ - 1, "to the tick's end");
}

/// A batch from a handle: from its run when it fits, else from the counter with
/// the run dropped; the handle's IDs keep increasing either way.
#[test]
fn batches_keep_the_handles_order() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Borrow, ClockBackwards::Error);
    let mut h = g.local();
    let mut ids = Vec::new();
    for n in [1usize, 3, 1, 200, 1, 2, 5000, 1] {
        if n == 1 {
            ids.push(h.next_id().unwrap());
        } else {
            ids.extend(h.next_ids(n).unwrap());
        }
        g.next_id().unwrap();
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(matches!(
        h.next_ids(flakeid_core::MAX_BATCH + 1),
        Err(Error::Config { field: "n", .. })
    ));
}

/// A closed generator's handle refuses on its next call, run or not.
#[test]
fn a_closed_generators_handle_refuses() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Borrow, ClockBackwards::Error);
    let mut h = g.local();
    h.next_id().unwrap();
    g.close();
    let refused = |r: Result<()>| matches!(r, Err(Error::Config { field: "generator", .. }));
    assert!(refused(h.next_id().map(drop)), "next_id issued from the run");
    assert!(refused(h.try_next_id().map(drop)), "try_next_id issued from the run");
    assert!(refused(h.next_ids(1).map(drop)), "next_ids issued from the run");
}

/// On the system clock, whose cached reading the handle's fast path compares
/// without any other check: a generator closed between two calls in one
/// millisecond refuses the second (many rounds, nearly all within one ms).
#[test]
fn a_closed_generators_handle_refuses_on_its_fast_path() {
    for round in 0..200 {
        let g = Generator::builder(Layout::SNOWFLAKE)
            .host_guard(false)
            .node(900)
            .overflow(Overflow::Borrow)
            .build()
            .unwrap();
        let mut h = g.local();
        // Runs of 2, 4 and 8 slots: the call after the 10th is in the run of 8.
        for _ in 0..10 {
            h.next_id().unwrap();
        }
        g.close();
        assert!(
            matches!(h.next_id(), Err(Error::Config { field: "generator", .. })),
            "round {round}: the handle issued after close()"
        );
    }
}

/// On the system clock: a forked child's handle refuses from its fast path too
/// (many forks, most within the millisecond of the parent's last call).
#[cfg(unix)]
#[test]
fn a_forked_childs_handle_refuses_on_its_fast_path() {
    let g = Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(901)
        .overflow(Overflow::Borrow)
        .max_borrow_ms(60_000)
        .build()
        .unwrap();
    let mut h = g.local();
    for round in 0..20 {
        // Runs of 2, 4 and 8 slots, then larger: the next call has its run.
        for _ in 0..10 {
            h.next_id().unwrap();
        }
        let code = in_child(|| i32::from(!matches!(h.next_id(), Err(Error::Fork))));
        assert_eq!(code, 0, "round {round}: the child's handle issued");
    }
}

/// A forked child's handle refuses, though it holds a run of the parent's.
#[cfg(unix)]
#[test]
fn a_forked_childs_handle_refuses() {
    let clock = ManualClock::new(T);
    let g = generator(&clock, Overflow::Borrow, ClockBackwards::Error);
    let mut h = g.local();
    let first = h.next_id().unwrap();
    let code = in_child(|| {
        let calls = [
            h.next_id().map(drop),
            h.try_next_id().map(drop),
            h.next_ids(1).map(drop),
        ];
        first_not_refused(&calls, |e| matches!(e, Error::Fork))
    });
    assert_eq!(
        code, 0,
        "the child's handle issued: 1 = next_id, 2 = try_next_id, 3 = next_ids"
    );
    assert_eq!(h.next_id().unwrap(), first + 1, "the parent's handle keeps its run");
}

/// A lease released while a handle holds a run: no slot of it is issued after.
#[cfg(all(feature = "lease", any(unix, windows)))]
#[test]
fn a_lease_that_ends_while_a_handle_holds_a_run_refuses_its_slots() {
    let (dir, url) = file_lease("local-lease");
    let g = Generator::builder(Layout::SNOWFLAKE)
        .overflow(Overflow::Borrow)
        .max_borrow_ms(1_000)
        .lease_url(&url)
        .build()
        .unwrap();
    let mut h = g.local();
    h.next_id().unwrap();
    h.next_id().unwrap();
    g.release_lease();
    let calls = [
        h.next_id().map(drop),
        h.try_next_id().map(drop),
        h.next_ids(1).map(drop),
    ];
    let issued = first_not_refused(&calls, |e| matches!(e, Error::Lease { .. }));
    assert_eq!(
        issued, 0,
        "issued from the run: 1 = next_id, 2 = try_next_id, 3 = next_ids"
    );
    drop(h);
    drop(g);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// On every preset (the sequence below the node in Sonyflake's, ticks of 10 ms
/// and 1 s), a handle's IDs are the generator's slots in order: tick by tick,
/// sequence 0, 1, …, the node id in place, across the tick's end, with a
/// `max_sequence` cap too.
#[test]
fn a_handles_ids_are_the_slots_on_every_layout() {
    for layout in Layout::PRESETS {
        for cap in [None, Some(7)] {
            let clock = ManualClock::new(layout.epoch_ms() + 1_000 * layout.tick_ms());
            let mut b = Generator::builder(layout)
                .host_guard(false)
                .node(3)
                .clock(clock.clone());
            if let Some(cap) = cap {
                b = b.max_sequence(cap);
            }
            let g = b.build().unwrap();
            let per_tick = cap.map_or(layout.max_sequence() + 1, |c| c + 1).min(300);
            let mut h = g.local();
            let tick0 = layout.decompose(h.next_id().unwrap()).timestamp_ms;
            let mut want = vec![(tick0, 0)];
            let mut got = Vec::new();
            for tick in 0..3u64 {
                let ms = tick0 + tick * layout.tick_ms();
                clock.set(ms);
                let first = if tick == 0 { 1 } else { 0 };
                for seq in first..per_tick {
                    let id = h.next_id().unwrap();
                    let p = layout.decompose(id);
                    assert_eq!(p.node, 3, "{layout:?}");
                    got.push((p.timestamp_ms, p.sequence));
                    want.push((ms, seq));
                }
            }
            want.remove(0);
            assert_eq!(got, want, "{layout:?}, max_sequence {cap:?}");
        }
    }
}

/// A clock whose cached reading lags its precise one (the ticker just after a
/// tick).
#[derive(Debug)]
struct Lagging {
    cached: AtomicU64,
    precise: AtomicU64,
}

impl Clock for Lagging {
    fn now_ms(&self) -> u64 {
        self.cached.load(Ordering::SeqCst)
    }
    fn now_ms_precise(&self) -> u64 {
        self.precise.load(Ordering::SeqCst)
    }
}

/// A run reserved on a precise reading (a new tick) while the cached clock still
/// reads the tick before: the next calls are served from it, on a precise reading
/// of their own, and none of its slots is passed over.
#[test]
fn a_run_ahead_of_a_lagging_cached_clock_is_kept() {
    let clock = Arc::new(Lagging {
        cached: AtomicU64::new(T),
        precise: AtomicU64::new(T),
    });
    let g = Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(4)
        .clock(Shared(clock.clone()))
        .build()
        .unwrap();
    let mut h = g.local();
    h.next_id().unwrap();
    h.next_id().unwrap(); // the first run (2 slots) spent
    g.next_ids(SEQ as usize - 2).unwrap(); // tick T used up
    clock.precise.store(T + 1, Ordering::SeqCst);
    let ids: Vec<(u64, u64)> = (0..4).map(|_| seq_and_ms(h.next_id().unwrap())).collect();
    assert_eq!(ids, [(0, T + 1), (1, T + 1), (2, T + 1), (3, T + 1)]);
    drop(h);
    assert_eq!(g.stats().ids_issued, SEQ + 4, "no slot passed over");
}
