//! A `Generator` without std, through portable-atomic's 64-bit atomics (the target
//! has 32-bit ones only), on a clock the program gives it: the checks of
//! crates/flakeid-core/tests/no_std.rs, on the target.
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use flakeid_core::{Clock, ClockBackwards, Error, ErrorKind, Generator, Layout, ManualClock};

const T0: u64 = 1_800_000_000_000;

/// Firmware's time source: a millisecond timer that cannot stop, here moved by one on
/// every turn of a wait (`pause`). Its `monotonic_ms` is what lets a call wait.
#[derive(Debug, Default)]
struct TickCounter(AtomicU32);

impl Clock for TickCounter {
    fn now_ms(&self) -> u64 {
        T0 + u64::from(self.0.load(Ordering::Relaxed))
    }
    fn pause(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn monotonic_ms(&self) -> Option<u64> {
        Some(u64::from(self.0.load(Ordering::Relaxed)))
    }
}

pub fn on_timer(node: u64) -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .node(node)
        .clock(TickCounter::default())
        .build()
        .expect("a node id and a clock are all it needs")
}

fn assert_increasing(ids: &[u64]) {
    for w in ids.windows(2) {
        assert!(w[0] < w[1], "{} then {}", w[0], w[1]);
    }
}

pub fn in_order_across_ticks() {
    let g = on_timer(7);
    let per_tick = Layout::SNOWFLAKE.ids_per_tick() as usize;
    let ids: Vec<u64> = (0..2 * per_tick + 500).map(|_| g.next_id().unwrap()).collect();
    assert_increasing(&ids);
    let first = Layout::SNOWFLAKE.decompose(ids[0]);
    let last = Layout::SNOWFLAKE.decompose(ids[ids.len() - 1]);
    assert_eq!((first.node, last.node), (7, 7));
    // More IDs than two ticks hold: the clock moved by the waits' pauses.
    assert!(last.timestamp_ms >= first.timestamp_ms + 2, "{first:?} .. {last:?}");
}

pub fn batches() {
    let g = on_timer(8);
    let a = g.next_ids(5_000).unwrap();
    assert_eq!(a.len(), 5_000);
    assert_increasing(&a);
    let mut b = [0u64; 300];
    g.fill(&mut b).unwrap();
    assert!(b[0] > a[a.len() - 1]);
    assert_increasing(&b);
    assert!(g.next_id().unwrap() > b[b.len() - 1]);
}

pub fn local_handle() {
    let g = on_timer(4);
    let mut h = g.local();
    let mut prev = 0;
    for _ in 0..6_000 {
        let id = h.next_id().unwrap();
        assert!(id > prev, "{id} after {prev}");
        prev = id;
    }
    assert!(g.next_id().unwrap() > prev);
}

pub fn waits_without_real_time() {
    // ManualClock tells no real time (`monotonic_ms` is None): a call that would wait
    // returns that wait's error at once.
    let clock = ManualClock::new(T0);
    let g = Generator::builder(Layout::SNOWFLAKE)
        .node(1)
        .clock(clock.clone())
        .clock_backwards(ClockBackwards::Wait)
        .build()
        .unwrap();
    let tick = g.next_ids(Layout::SNOWFLAKE.ids_per_tick() as usize).unwrap();
    assert!(matches!(g.next_id(), Err(Error::ClockStalled { waited_ms: 0 })));
    assert_eq!(g.try_next_id().unwrap(), None);
    clock.advance(1);
    let a = g.try_next_id().unwrap().expect("a new tick has room");
    assert!(a > tick[tick.len() - 1]);
    clock.set(T0 - 5);
    assert!(matches!(g.next_id(), Err(Error::ClockMovedBackwards { by_ms: 6 })));
    clock.set(T0 + 2);
    assert!(g.next_id().unwrap() > a);
}

pub fn refusals() {
    let e = Generator::builder(Layout::SNOWFLAKE).node(1).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    let e = Generator::builder(Layout::SNOWFLAKE)
        .clock(ManualClock::new(T0))
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
}
