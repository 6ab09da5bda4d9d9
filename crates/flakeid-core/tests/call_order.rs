//! Call order across threads: a call that starts after another call returned gets
//! the larger ID, for every shared generator (docs/design.md, "Who owns a node id,
//! and in what order IDs come"). Each thread, before each call, reads the largest
//! ID any thread has published, and publishes its own after the call returned: the
//! ID must be above what it read. Real threads on the real clock; the defaults
//! (lone runs, borrowing) and the policies that change the contended path.

#![allow(clippy::unwrap_used)]

use flakeid_core::{Generator, Layout, Overflow};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const THREADS: usize = 4;
const CALLS: usize = 40_000;

/// Runs `call` from `THREADS` threads, `CALLS` times each, and returns how many
/// calls got a result not above every result published before they began.
fn violations(call: impl Fn() -> u64 + Sync) -> usize {
    let latest = AtomicU64::new(0);
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    let mut bad = 0;
                    for _ in 0..CALLS {
                        let before = latest.load(Ordering::Acquire);
                        let got = call();
                        bad += usize::from(got <= before);
                        latest.fetch_max(got, Ordering::AcqRel);
                    }
                    bad
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).sum()
    })
}

fn generator(overflow: Overflow) -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .node(11)
        .overflow(overflow)
        .host_guard(false)
        .build()
        .unwrap()
}

#[test]
fn a_shared_strict_generator_keeps_call_order() {
    let g = generator(Overflow::Wait);
    assert_eq!(violations(|| g.next_id().unwrap()), 0);
}

#[test]
fn a_shared_borrowing_generator_keeps_call_order() {
    let g = generator(Overflow::Borrow);
    assert_eq!(violations(|| g.next_id().unwrap()), 0);
}

#[test]
fn a_shared_generator_keeps_call_order_across_single_calls_and_batches() {
    let g = generator(Overflow::Borrow);
    let n = AtomicUsize::new(0);
    let call = || {
        let i = n.fetch_add(1, Ordering::Relaxed);
        match i % 3 {
            0 => g.next_ids(3).unwrap()[0],
            1 => g.try_next_id().unwrap().unwrap_or_else(|| g.next_id().unwrap()),
            _ => g.next_id().unwrap(),
        }
    };
    assert_eq!(violations(call), 0);
}

#[cfg(feature = "uuid7")]
#[test]
fn a_shared_uuid_generator_keeps_call_order() {
    let g = flakeid_core::UuidGenerator::builder().build().unwrap();
    // The UUID's (ms, counter): its top 48 bits, then rand_a and the counter's 4
    // bits after the variant.
    let key = |u: u128| ((u >> 80) as u64) << 16 | ((u >> 64) as u64 & 0xfff) << 4 | ((u >> 58) as u64 & 0xf);
    assert_eq!(violations(|| key(g.next_uuid7().unwrap())), 0);
}

/// Tasks of a work-stealing runtime move between threads: here each call runs on
/// whichever of the threads picks it up, and a caller's next call waits for its
/// last, as an `await` does.
#[test]
fn a_caller_that_moves_between_threads_sees_its_ids_increase() {
    let g = generator(Overflow::Borrow);
    let (tx, rx) = std::sync::mpsc::channel::<std::sync::mpsc::Sender<u64>>();
    let rx = Mutex::new(rx);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                loop {
                    let job = rx.lock().unwrap().recv();
                    match job {
                        Ok(reply) => reply.send(g.next_id().unwrap()).unwrap(),
                        Err(_) => break,
                    }
                }
            });
        }
        let mut backwards = 0;
        for _ in 0..THREADS {
            let tx = tx.clone();
            let callers: Vec<_> = (0..4)
                .map(|_| {
                    let tx = tx.clone();
                    s.spawn(move || {
                        let mut last = 0;
                        let mut bad = 0;
                        for _ in 0..5_000 {
                            let (reply, got) = std::sync::mpsc::channel();
                            tx.send(reply).unwrap();
                            let id = got.recv().unwrap();
                            bad += usize::from(id <= last);
                            last = id;
                        }
                        bad
                    })
                })
                .collect();
            backwards += callers.into_iter().map(|c| c.join().unwrap()).sum::<usize>();
        }
        drop(tx);
        assert_eq!(backwards, 0);
    });
}
