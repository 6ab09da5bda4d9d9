//! The generator of a `no_std` build (`default-features = false`): the library is
//! compiled without std, as for a target with no OS, and driven here by a clock
//! the caller gives it. Only this build runs these (make test-rust runs
//! `cargo test -p flakeid-core --no-default-features --features portable-atomic
//! --test no_std`: the counter's atomics through portable-atomic's types, as on a
//! target without 64-bit atomics, which are core's on this host); check-ports builds
//! the same code for wasm32-unknown-unknown and thumbv7em-none-eabihf without std.
#![cfg(not(feature = "std"))]

use flakeid_core::{Clock, ClockBackwards, Error, ErrorKind, Generator, Layout, ManualClock, NodeOrigin, Overflow};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const T0: u64 = 1_800_000_000_000;

/// A time source of the caller's own, as firmware has one: a millisecond timer that
/// cannot stop (here it moves by one on every turn of a wait). Its `monotonic_ms`
/// is what lets a call wait: without std nothing else tells real time.
#[derive(Debug, Default)]
struct TickCounter(AtomicU64);

impl Clock for TickCounter {
    fn now_ms(&self) -> u64 {
        T0 + self.0.load(Ordering::Relaxed)
    }
    fn pause(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn monotonic_ms(&self) -> Option<u64> {
        Some(self.0.load(Ordering::Relaxed))
    }
}

/// A generator of node `node` on a [`TickCounter`] of its own.
fn on_timer(node: u64) -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .node(node)
        .clock(TickCounter::default())
        .build()
        .expect("a node id and a clock are all it needs")
}

#[test]
fn a_generator_on_the_callers_clock_issues_in_order() {
    let g = on_timer(7);
    assert_eq!(g.node_origin(), NodeOrigin::Explicit);
    let ids: Vec<u64> = (0..10_000).map(|_| g.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let last = Layout::SNOWFLAKE.decompose(ids[ids.len() - 1]);
    assert_eq!(last.node, 7);
    // 10,000 IDs need three ticks of 4,096: the clock moved by the wait's pauses.
    assert!(last.timestamp_ms >= T0 + 2, "{last:?}");
}

#[test]
fn no_clock_and_no_node_are_refused_by_name() {
    let e = Generator::builder(Layout::SNOWFLAKE).node(1).build().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.to_string().contains("clock"), "{e}");
    // No node id and no surroundings to read: refused, never a default.
    let e = Generator::builder(Layout::SNOWFLAKE)
        .clock(ManualClock::new(T0))
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    assert!(e.to_string().contains("node"), "{e}");
}

#[test]
fn the_policies_hold_without_std() {
    // ManualClock tells no real time (`monotonic_ms` is None): without std a call
    // on it never waits, it returns the error its wait would end with, at once.
    let clock = ManualClock::new(T0);
    let strict = Generator::builder(Layout::SNOWFLAKE)
        .node(1)
        .clock(clock.clone())
        .clock_backwards(ClockBackwards::Wait)
        .build()
        .unwrap();
    assert_eq!(strict.next_ids(4096).unwrap().len(), 4096);
    assert!(matches!(strict.next_id(), Err(Error::ClockStalled { waited_ms: 0 })));
    assert_eq!(strict.try_next_id().unwrap(), None);
    clock.advance(1);
    let a = strict.next_id().unwrap();
    clock.set(T0 - 5);
    assert!(matches!(strict.next_id(), Err(Error::ClockMovedBackwards { by_ms: 6 })));
    clock.set(T0 + 2);
    assert!(strict.next_id().unwrap() > a);

    let borrowing = Generator::builder(Layout::SNOWFLAKE)
        .node(2)
        .clock(ManualClock::new(T0))
        .overflow(Overflow::Borrow)
        .max_borrow_ms(3)
        .build()
        .unwrap();
    let ids = borrowing.next_ids(4 * 4096).unwrap();
    assert_eq!(Layout::SNOWFLAKE.decompose(ids[ids.len() - 1]).timestamp_ms, T0 + 3);
    assert_eq!(borrowing.next_id().unwrap_err().kind(), ErrorKind::ClockMovedBackwards);
}

#[test]
fn threads_sharing_one_generator_keep_call_order() {
    // Without std the library keeps no thread-locals: every call takes its slot from
    // the counter. The harness's threads share the generator as a host's would.
    let g = Arc::new(on_timer(3));
    let last = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (g, last) = (g.clone(), last.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::with_capacity(50_000);
                for _ in 0..50_000 {
                    // A call that starts after another returned gets the larger ID.
                    let before = last.load(Ordering::Acquire);
                    let id = g.next_id().unwrap();
                    assert!(id > before, "{id} after {before}");
                    last.fetch_max(id, Ordering::AcqRel);
                    mine.push(id);
                }
                mine
            })
        })
        .collect();
    let mut all: Vec<u64> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
}

#[test]
fn a_per_thread_handle_serves_runs_without_std() {
    let g = on_timer(4);
    let mut h = g.local();
    let mut prev = 0;
    for _ in 0..20_000 {
        let id = h.next_id().unwrap();
        assert!(id > prev);
        prev = id;
    }
    assert!(g.next_id().unwrap() > prev);
}

#[test]
fn the_async_call_awaits_the_callers_timer() {
    // An executor's timer without std (embassy's, say) is any `Fn(Duration) -> Future`;
    // here it moves the test's clock by what it was asked to sleep.
    let clock = Arc::new(TickCounter::default());
    let g = Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .clock_arc(clock.clone())
        .build()
        .unwrap();
    let slept = Arc::new(AtomicU64::new(0));
    let sleep = |d: core::time::Duration| {
        let ms = u64::try_from(d.as_millis()).unwrap().max(1);
        slept.fetch_add(ms, Ordering::Relaxed);
        clock.0.fetch_add(ms, Ordering::Relaxed);
        core::future::ready(())
    };
    let ids = block_on(g.next_ids_async(10_000, &sleep)).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let a = block_on(g.next_id_async(&sleep)).unwrap();
    assert!(a > ids[ids.len() - 1]);
    // Batches take whole ticks without waiting; single calls past the cap await.
    for _ in 0..5_000 {
        block_on(g.next_id_async(&sleep)).unwrap();
    }
    assert!(slept.load(Ordering::Relaxed) > 0);
}

/// Polls a future to its end on this thread (the futures here never stay pending).
fn block_on<F: core::future::Future>(f: F) -> F::Output {
    let mut f = core::pin::pin!(f);
    let mut cx = core::task::Context::from_waker(core::task::Waker::noop());
    loop {
        if let core::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}
