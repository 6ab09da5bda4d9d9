//! Model check of the generator's counter protocol with loom: every interleaving
//! (up to loom's preemption bound) of 2–3 threads issuing from one generator while
//! the clock moves, in strict, borrow (with runs of slots renewed as threads spend
//! them) and monotonic modes. The generator is the
//! real one: built with `--cfg loom`, its counter and thread-local runs are loom's.
//!
//! Run: `make test-loom` (RUSTFLAGS="--cfg loom" cargo test --release --test loom).
//!
//! Asserted in every interleaving: no ID issued twice, each thread's IDs strictly
//! increasing, none stamped past the latest clock reading plus the borrow window,
//! and — while the clock never goes back — no `ClockMovedBackwards`.
//! `ClockStalled` is allowed: the model's real-time clock advances on every look,
//! so a schedule that starves the thread moving the clock is a stalled clock.
//!
//! With the `lease` feature, also the lease gate across processes (`SharedGate`):
//! its holder closing a window and beginning a new lease against an issuer's
//! reserve-and-check (module `shared_gate`).
#![cfg(loom)]
#![allow(clippy::unwrap_used)]

use flakeid_core::{Clock, ClockBackwards, Error, Generator, Layout, Overflow};
use loom::sync::Arc;
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::thread;

/// The wall clock as loom sees it: `now` is what a precise reading returns; `cached`
/// lags it (the ticker's cache) and catches up on precise readings. `mono` is real
/// time for wait bounds: one ms per look, so every wait ends in the model.
#[derive(Debug)]
struct ModelClock {
    now: AtomicU64,
    cached: AtomicU64,
    mono: std::sync::atomic::AtomicU64,
}

impl ModelClock {
    fn new(ms: u64) -> ModelClock {
        ModelClock {
            now: AtomicU64::new(ms),
            cached: AtomicU64::new(ms),
            mono: std::sync::atomic::AtomicU64::new(0),
        }
    }
    fn set(&self, ms: u64) {
        self.now.store(ms, Ordering::Release);
    }
}

#[derive(Debug, Clone)]
struct Handle(Arc<ModelClock>);

impl Clock for Handle {
    fn now_ms(&self) -> u64 {
        self.0.cached.load(Ordering::Acquire)
    }
    fn now_ms_precise(&self) -> u64 {
        let now = self.0.now.load(Ordering::Acquire);
        self.0.cached.fetch_max(now, Ordering::AcqRel);
        now
    }
    fn pause(&self) {
        thread::yield_now();
    }
    fn monotonic_ms(&self) -> Option<u64> {
        Some(self.0.mono.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

const T0: u64 = 1_700_000_000_000;

/// A layout with a 1-bit sequence: two IDs per tick, so ticks fill within a model.
fn layout() -> Layout {
    Layout::builder()
        .time_bits(41)
        .node_bits(10)
        .sequence_bits(1)
        .epoch_ms(1_288_834_974_657)
        .build()
        .unwrap()
}

#[derive(Debug, Clone, Copy)]
struct Case {
    overflow: Overflow,
    max_borrow_ms: u64,
    policy: ClockBackwards,
    /// Clock values the mover thread sets, in order.
    moves: &'static [u64],
    /// IDs each issuing thread asks for (a batch when > 1).
    per_thread: [usize; 2],
    /// `next_id` calls of a thread without a batch (one after a batch).
    singles: usize,
    /// Whether the clock goes back (then ClockMovedBackwards is allowed).
    rollback: bool,
}

fn check(case: Case) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    builder.check(move || {
        let clock = Arc::new(ModelClock::new(T0));
        let g = Arc::new(
            Generator::builder(layout())
                .node(1)
                .overflow(case.overflow)
                .max_borrow_ms(case.max_borrow_ms)
                .clock_backwards(case.policy)
                .max_wait_ms(4)
                .clock(Handle(clock.clone()))
                .build()
                .unwrap(),
        );
        let issuers: Vec<_> = case
            .per_thread
            .iter()
            .map(|&n| {
                let g = g.clone();
                thread::spawn(move || {
                    let mut out = Vec::new();
                    if n > 1 {
                        match g.next_ids(n) {
                            Ok(ids) => out.extend(ids),
                            Err(e) => return (out, Some(e)),
                        }
                        match g.next_id() {
                            Ok(id) => out.push(id),
                            Err(e) => return (out, Some(e)),
                        }
                    } else {
                        for _ in 0..case.singles {
                            match g.next_id() {
                                Ok(id) => out.push(id),
                                Err(e) => return (out, Some(e)),
                            }
                        }
                    }
                    (out, None)
                })
            })
            .collect();
        let mover = {
            let clock = clock.clone();
            thread::spawn(move || {
                for &ms in case.moves {
                    clock.set(ms);
                }
            })
        };
        mover.join().unwrap();
        let mut all = Vec::new();
        for h in issuers {
            let (ids, err) = h.join().unwrap();
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a thread's IDs went backwards: {ids:?}"
            );
            match err {
                None | Some(Error::ClockStalled { .. }) => {}
                Some(Error::ClockMovedBackwards { .. }) if case.rollback => {}
                Some(e) => panic!("false verdict under contention: {e:?} ({case:?})"),
            }
            all.extend(ids);
        }
        // The borrow bound: no ID past the latest clock reading plus the window.
        let latest = case.moves.iter().copied().fold(T0, u64::max);
        for &id in &all {
            let stamped = layout().decompose(id).timestamp_ms;
            assert!(
                stamped <= latest + case.max_borrow_ms,
                "{stamped} past the window ({case:?})"
            );
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "duplicate IDs ({case:?})");
    });
}

#[test]
fn strict_two_threads_clock_moving() {
    check(Case {
        overflow: Overflow::Wait,
        max_borrow_ms: 0,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 2],
        per_thread: [1, 1],
        singles: 2,
        rollback: false,
    });
}

#[test]
fn strict_with_a_batch() {
    check(Case {
        overflow: Overflow::Wait,
        max_borrow_ms: 0,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 3],
        per_thread: [3, 1],
        singles: 2,
        rollback: false,
    });
}

#[test]
fn borrow_two_threads_clock_jumping_past_the_window() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 3],
        per_thread: [3, 2],
        singles: 2,
        rollback: false,
    });
}

#[test]
fn borrow_with_a_batch() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 4],
        per_thread: [3, 1],
        singles: 2,
        rollback: false,
    });
}

#[test]
fn monotonic_through_a_rollback() {
    check(Case {
        overflow: Overflow::Wait,
        max_borrow_ms: 0,
        policy: ClockBackwards::Monotonic,
        moves: &[T0 + 2, T0 - 3, T0 + 3],
        per_thread: [1, 1],
        singles: 2,
        rollback: true,
    });
}

#[test]
fn wait_policy_through_a_rollback() {
    check(Case {
        overflow: Overflow::Wait,
        max_borrow_ms: 0,
        policy: ClockBackwards::Wait,
        moves: &[T0 + 2, T0 + 1, T0 + 3],
        per_thread: [1, 1],
        singles: 2,
        rollback: true,
    });
}

/// Threads that lost a race take runs of slots (2 on this layout: a tick) and renew
/// them as they spend them, while the clock moves and the window (2 ticks) fills.
#[test]
fn borrow_runs_renewed_clock_moving() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 2],
        per_thread: [1, 1],
        singles: 3,
        rollback: false,
    });
}

/// Runs of slots held while the clock goes back: a run's slots past the window
/// the clock now allows are not issued, and the verdict is the counter's.
#[test]
fn borrow_runs_through_a_rollback() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Monotonic,
        moves: &[T0 + 2, T0],
        per_thread: [1, 1],
        singles: 3,
        rollback: true,
    });
}

/// The lease gate across processes (`flakeid_core::lease::SharedGate`): its holder
/// closing the window and beginning a new lease while an issuer reserves and
/// checks. Needs the `lease` feature: `RUSTFLAGS="--cfg loom" cargo test -p
/// flakeid-core --features lease --release --test loom`.
#[cfg(feature = "lease")]
mod shared_gate {
    use flakeid_core::lease::{AfterRefusal, SharedGate};
    use flakeid_core::{Layout, LeaseClock, LeaseWindow};
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use loom::thread;

    /// A 1 ms tick from the epoch: a window's wall end `ms` past the epoch ends
    /// at tick `ms` (exclusive).
    const L: Layout = Layout::SNOWFLAKE;

    fn open_until_tick(tick: u64) -> LeaseWindow {
        LeaseWindow {
            wall_end_ms: L.epoch_ms() + tick,
            // The monotonic end far away: the model moves ticks, not clocks.
            mono_end: LeaseClock::new().now() + (3600 << 30),
        }
    }

    /// The first lease's fence and end in ticks, then the second's.
    const FIRST: (u64, u64) = (0, 10);
    const SECOND: (u64, u64) = (20, 30);
    /// The issuer's clock, in ticks, at its two IDs: the second past the first
    /// lease's end and below the second's fence.
    const NOW: [u64; 2] = [5, 15];

    /// The holder closes the first lease's window and begins a second (on node
    /// `second_node`) while an issuer takes two IDs, each reserved from the shared
    /// counter (at its clock's tick or after the counter) between `begin` and
    /// `allows` as a backend does; the counter's own operations are relaxed, so
    /// that only the gate orders anything. Asserted in every
    /// interleaving: an ID passes only inside the window of the lease it was
    /// reserved under, at or after that lease's fence (so never an ID reserved
    /// before the counter moved past a new lease's fence); and no check that starts
    /// after `close` returned passes under the closed lease.
    fn model(second_node: u64) {
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(2);
        }
        builder.check(move || {
            let gate = Arc::new(SharedGate::new());
            let counter = Arc::new(AtomicU64::new(FIRST.0));
            // 0: the first lease open; 1: closed; 2: the second open.
            let phase = Arc::new(AtomicU64::new(0));
            let first = gate.begin_lease(1);
            gate.publish(open_until_tick(FIRST.1), &L, 0);

            let holder = {
                let (gate, counter, phase) = (gate.clone(), counter.clone(), phase.clone());
                thread::spawn(move || {
                    gate.close();
                    phase.store(1, Ordering::Release);
                    // The new lease's acquisition moves the counter past its fence.
                    counter.fetch_max(SECOND.0, Ordering::Relaxed);
                    let second = gate.begin_lease(second_node);
                    gate.publish(open_until_tick(SECOND.1), &L, 0);
                    phase.store(2, Ordering::Release);
                    second
                })
            };

            let check = gate.check(first);
            let mut passed = Vec::new();
            let mut retried = false;
            for now in NOW {
                let seen = phase.load(Ordering::Acquire);
                let under = check.begin();
                counter.fetch_max(now, Ordering::Relaxed);
                let tick = counter.fetch_add(1, Ordering::Relaxed);
                if check.allows(under, tick) {
                    assert!(
                        !(under == first && seen >= 1),
                        "passed under a lease closed before the check"
                    );
                    passed.push((under, tick));
                } else if !retried && check.after_refusal() == AfterRefusal::Renewed {
                    retried = true;
                }
            }
            let second = holder.join().unwrap();
            for (under, tick) in passed {
                let (fence, end) = if under == first {
                    FIRST
                } else {
                    assert_eq!(under, second, "passed under a lease never begun");
                    assert_eq!(SharedGate::node_of(second), 1, "passed under another node id");
                    SECOND
                };
                assert!(fence <= tick && tick < end, "tick {tick} passed under {under:#x}");
            }
        });
    }

    #[test]
    fn a_renewal_on_the_same_node_id() {
        model(1);
    }

    #[test]
    fn a_new_lease_on_another_node_id() {
        model(2);
    }
}
