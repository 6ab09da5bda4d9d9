//! Model check of the generator's counter protocol with loom: every interleaving
//! (up to loom's preemption bound) of 2–3 threads issuing from one generator while
//! the clock moves, in strict, borrow (contended: one slot per call) and monotonic
//! modes, and through per-thread handles. The generator is the
//! real one: built with `--cfg loom`, its counter and thread-local runs are loom's.
//!
//! Run: `make test-loom` (RUSTFLAGS="--cfg loom" cargo test --release --test loom).
//!
//! Asserted in every interleaving: no ID issued twice, every ID of the generator's
//! node id, each thread's IDs strictly increasing, every ID of a call on the shared
//! generator above every ID returned (by any thread, handles included) before the
//! call began, none stamped past the latest clock reading plus the borrow window,
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
    /// The clock reads `ms` from now on; a step back reaches the cache too (the
    /// ticker stores what it reads, rollbacks included).
    fn set(&self, ms: u64) {
        let was = self.now.swap(ms, Ordering::AcqRel);
        if ms < was {
            self.cached.store(ms, Ordering::Release);
        }
    }
}

#[derive(Debug, Clone)]
struct Handle(Arc<ModelClock>);

loom::thread_local! {
    /// The lowest and highest clock readings of the calling thread's current call
    /// (cached or precise): what the borrow bound is checked against.
    static READ: std::cell::Cell<(u64, u64)> = std::cell::Cell::new((u64::MAX, 0));
}

/// Starts recording a call's clock readings.
fn call_begins() {
    READ.with(|r| r.set((u64::MAX, 0)));
}

/// The lowest and highest readings of the call since `call_begins`.
fn call_readings() -> (u64, u64) {
    READ.with(|r| r.get())
}

fn read(ms: u64) -> u64 {
    READ.with(|r| {
        let (lo, hi) = r.get();
        r.set((lo.min(ms), hi.max(ms)));
    });
    ms
}

impl Clock for Handle {
    fn now_ms(&self) -> u64 {
        read(self.0.cached.load(Ordering::Acquire))
    }
    fn now_ms_precise(&self) -> u64 {
        let now = self.0.now.load(Ordering::Acquire);
        self.0.cached.fetch_max(now, Ordering::AcqRel);
        read(now)
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
    /// `next_id` calls of each thread without a batch (one after a batch).
    singles: [usize; 2],
    /// Whether the clock goes back (then ClockMovedBackwards is allowed).
    rollback: bool,
    /// What every second call of a thread without a batch is.
    calls: Calls,
    /// The executions the model may explore at the default preemption bound
    /// ([`model`]).
    budget: usize,
}

/// The calls a thread without a batch mixes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Calls {
    /// `next_id` only.
    NextId,
    /// Every second one `try_next_id` (a `None` issues nothing).
    TryNextId,
    /// Every second one `next_ids(1)`.
    Batches,
    /// The first thread issues through a handle (`Generator::local`), every second
    /// call `try_next_id`; the second through the generator.
    Local,
    /// Both threads through handles of their own, every second call a batch of 2.
    Locals,
}

/// Explores `f` over every interleaving up to LOOM_MAX_PREEMPTIONS (default 2), and
/// prints how many executions that took. At the default bound a model explores at
/// most `budget` executions (loom's exploration is deterministic, so this cannot
/// flake): the models' share of make ci is stated in CPU seconds
/// (docs/development.md, "The loom models' budget"), and a change that makes a
/// model explore more fails here instead of growing the suite unseen.
fn model(budget: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    let bounded = builder.preemption_bound.is_none();
    if bounded {
        builder.preemption_bound = Some(2);
    }
    let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = executions.clone();
    builder.check(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        f()
    });
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    println!("loom: {executions} executions (budget {budget})");
    assert!(
        !bounded || executions <= budget,
        "{executions} executions, over the model's budget of {budget}: shrink the model, \
         or raise its budget and the suite's in docs/development.md"
    );
}

/// No ID in `all` twice.
fn assert_unique(mut all: Vec<u64>, what: impl std::fmt::Debug) {
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "duplicate IDs ({what:?})");
}

fn check(case: Case) {
    model(case.budget, move || {
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
        // The largest ID returned so far, published after each call returned.
        let latest = Arc::new(AtomicU64::new(0));
        let issuers: Vec<_> = case
            .per_thread
            .iter()
            .enumerate()
            .map(|(thread_no, &n)| {
                let (g, latest) = (g.clone(), latest.clone());
                thread::spawn(move || {
                    let mut handle = match case.calls {
                        Calls::Local if thread_no == 0 => Some(g.local()),
                        Calls::Locals => Some(g.local()),
                        _ => None,
                    };
                    let mut out = Vec::new();
                    // Each ID with the lowest and highest clock readings of its call.
                    let mut push = |ids: &[u64]| {
                        let (lo, hi) = call_readings();
                        out.extend(ids.iter().map(|&id| (id, lo, hi)));
                    };
                    let calls: Vec<usize> = if n > 1 {
                        vec![n, 1]
                    } else {
                        vec![1; case.singles[thread_no]]
                    };
                    for (i, k) in calls.into_iter().enumerate() {
                        let seen = latest.load(Ordering::Acquire);
                        let shared = handle.is_none();
                        call_begins();
                        let got = match (k, handle.as_mut(), case.calls) {
                            (1, Some(h), Calls::Locals) if i % 2 == 1 => h.next_ids(2),
                            (1, Some(h), _) if i % 2 == 1 => h.try_next_id().map(|id| id.into_iter().collect()),
                            (1, Some(h), _) => h.next_id().map(|id| vec![id]),
                            (_, Some(h), _) => h.next_ids(k),
                            (1, None, Calls::TryNextId) if i % 2 == 1 => {
                                g.try_next_id().map(|id| id.into_iter().collect())
                            }
                            (1, None, Calls::Batches) if i % 2 == 1 => g.next_ids(1),
                            (1, None, _) => g.next_id().map(|id| vec![id]),
                            (_, None, _) => g.next_ids(k),
                        };
                        match got {
                            Ok(ids) => {
                                if shared {
                                    for &id in &ids {
                                        assert!(id > seen, "{id} issued after {seen} returned ({case:?})");
                                    }
                                }
                                if let Some(&last) = ids.last() {
                                    latest.fetch_max(last, Ordering::AcqRel);
                                }
                                push(&ids)
                            }
                            Err(e) => return (out, Some(e)),
                        }
                    }
                    (out, None)
                })
            })
            .collect();
        // The model's own thread moves the clock while they issue: a thread of its
        // own costs a coroutine stack per execution. It yields first, as it did
        // blocked in that thread's join, so that the issuers' running before any
        // move costs no preemption.
        thread::yield_now();
        for &ms in case.moves {
            clock.set(ms);
        }
        let mut all = Vec::new();
        let tick = |ms: u64| layout().ticks_at(ms).unwrap();
        for h in issuers {
            let (issued, err) = h.join().unwrap();
            let ids: Vec<u64> = issued.iter().map(|&(id, _, _)| id).collect();
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a thread's IDs went backwards: {ids:?}"
            );
            // The bound against each call's own clock readings: no ID older than the
            // tick its call read (a run's slot older than the clock is passed over)
            // and, unless a monotonic rollback keeps issuing in the last tick, none
            // past the window the call's reading allows.
            for &(id, lo, hi) in &issued {
                assert_eq!(
                    layout().decompose(id).node,
                    1,
                    "{id} not of the generator's node id ({case:?})"
                );
                let t = id >> (layout().node_bits() + layout().sequence_bits());
                assert!(t >= tick(lo), "{id} older than its call's clock ({case:?})");
                if !(case.rollback && case.policy == ClockBackwards::Monotonic) {
                    assert!(
                        t <= tick(hi) + case.max_borrow_ms,
                        "{id} past the window of its call's clock ({case:?})"
                    );
                }
            }
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
        assert_unique(all, case);
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
        singles: [2, 2],
        rollback: false,
        calls: Calls::NextId,
        budget: 25_000,
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
        singles: [2, 2],
        rollback: false,
        calls: Calls::NextId,
        budget: 250_000,
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
        singles: [2, 2],
        rollback: false,
        calls: Calls::NextId,
        budget: 15_000,
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
        singles: [2, 2],
        rollback: false,
        calls: Calls::NextId,
        budget: 25_000,
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
        singles: [2, 2],
        rollback: true,
        calls: Calls::NextId,
        budget: 400_000,
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
        singles: [2, 2],
        rollback: true,
        calls: Calls::NextId,
        budget: 320_000,
    });
}

/// Borrowing threads contending for the counter, one slot per call, while the
/// clock moves and the window (2 ticks) fills: each call above every ID returned
/// before it began.
#[test]
fn borrow_contended_clock_moving() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 2],
        per_thread: [1, 1],
        singles: [3, 3],
        rollback: false,
        calls: Calls::NextId,
        budget: 60_000,
    });
}

/// Borrowing threads while the clock goes back (monotonic): the verdict is the
/// counter's, and call order holds through it. The first thread's third call is
/// served from the lone run its second took, which the second thread's calls end
/// or not: two calls of the second thread reach that, a third multiplies the
/// executions.
#[test]
fn borrow_contended_through_a_rollback() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Monotonic,
        moves: &[T0 + 2, T0],
        per_thread: [1, 1],
        singles: [3, 2],
        rollback: true,
        calls: Calls::NextId,
        budget: 100_000,
    });
}

/// The same with the error policy: no slot past the window the call's own reading
/// allows is issued.
#[test]
fn borrow_contended_through_a_rollback_refused() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 2, T0],
        per_thread: [1, 1],
        singles: [3, 2],
        rollback: true,
        calls: Calls::NextId,
        budget: 100_000,
    });
}

/// Borrowing threads mixing in `try_next_id`.
#[test]
fn borrow_contended_with_try_next_id() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1],
        per_thread: [1, 1],
        singles: [3, 3],
        rollback: false,
        calls: Calls::TryNextId,
        budget: 30_000,
    });
}

/// Borrowing threads mixing in batches of one.
#[test]
fn borrow_contended_with_batches() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1],
        per_thread: [1, 1],
        singles: [3, 3],
        rollback: false,
        calls: Calls::Batches,
        budget: 25_000,
    });
}

/// A handle beside the generator while the clock moves: the handle's runs (2
/// slots, a tick, on this layout) and the counter's slots never meet.
#[test]
fn handle_beside_the_generator_clock_moving() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 2],
        per_thread: [1, 1],
        singles: [3, 3],
        rollback: false,
        calls: Calls::Local,
        budget: 60_000,
    });
}

/// Two handles in strict mode, with batches: runs cut at the tick's end, waits
/// for the next tick on the counter.
#[test]
fn two_handles_strict_with_batches() {
    check(Case {
        overflow: Overflow::Wait,
        max_borrow_ms: 0,
        policy: ClockBackwards::Error,
        moves: &[T0 + 1, T0 + 3],
        per_thread: [1, 1],
        singles: [2, 2],
        rollback: false,
        calls: Calls::Locals,
        budget: 350_000,
    });
}

/// Handles through a rollback: a run's slots past the window the clock now
/// allows are never issued; monotonic keeps the last tick's slots, one per call.
#[test]
fn two_handles_through_a_rollback() {
    check(Case {
        overflow: Overflow::Borrow,
        max_borrow_ms: 1,
        policy: ClockBackwards::Monotonic,
        moves: &[T0 + 2, T0],
        per_thread: [1, 1],
        singles: [2, 2],
        rollback: true,
        calls: Calls::Locals,
        budget: 650_000,
    });
}

/// Lone runs keep the order of the calls: each thread, before each call, reads
/// the other's last ID (Acquire; the other published it with Release after its
/// call returned), and its ID must be above it. A thread alone holds a lone run
/// (2 slots here) that another thread's reservation ends; a run served without
/// that check would fail it. Strict and borrowing; the clock moves meanwhile, and
/// one thread mixes in batches.
fn lone_runs_in_call_order(overflow: Overflow, max_borrow_ms: u64, budget: usize) {
    model(budget, move || {
        let clock = Arc::new(ModelClock::new(T0));
        let g = Arc::new(
            // Four IDs per tick: the six of the model fit in the two ticks the
            // clock reads, so no call waits (a wait is other models' subject).
            Generator::builder(Layout::builder().sequence_bits(2).build().unwrap())
                .node(1)
                .overflow(overflow)
                .max_borrow_ms(max_borrow_ms)
                .max_wait_ms(4)
                .clock(Handle(clock.clone()))
                .build()
                .unwrap(),
        );
        let last = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
        let issuers: Vec<_> = [3usize, 2]
            .into_iter()
            .enumerate()
            .map(|(me, calls)| {
                let (g, last) = (g.clone(), last.clone());
                thread::spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..calls {
                        let seen = last[1 - me].load(Ordering::Acquire);
                        let got = if me == 1 && i == 1 {
                            g.next_ids(2)
                        } else {
                            g.next_id().map(|id| vec![id])
                        };
                        let ids = match got {
                            Ok(ids) => ids,
                            Err(Error::ClockStalled { .. }) => return mine,
                            Err(e) => panic!("false verdict: {e:?}"),
                        };
                        for &id in &ids {
                            assert!(id > seen, "{id} issued after the other thread's {seen} returned");
                        }
                        last[me].store(*ids.last().unwrap(), Ordering::Release);
                        mine.extend(ids);
                    }
                    mine
                })
            })
            .collect();
        thread::yield_now();
        clock.set(T0 + 1);
        let mut all = Vec::new();
        for h in issuers {
            let ids = h.join().unwrap();
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a thread's IDs went backwards: {ids:?}"
            );
            all.extend(ids);
        }
        assert_unique(all, "lone runs");
    });
}

#[test]
fn lone_runs_in_call_order_strict() {
    lone_runs_in_call_order(Overflow::Wait, 0, 75_000);
}

#[test]
fn lone_runs_in_call_order_borrowing() {
    lone_runs_in_call_order(Overflow::Borrow, 1, 40_000);
}

/// The lease gate across processes (`flakeid_core::lease::SharedGate`): its holder
/// closing the window and beginning a new lease while an issuer, a real borrowing
/// generator over the shared counter that keeps a run of slots, issues as the
/// PostgreSQL extension's backends do. Needs the `lease` feature: `RUSTFLAGS="--cfg
/// loom" cargo test -p flakeid-core --features lease --release --test loom`.
#[cfg(feature = "lease")]
mod shared_gate {
    use super::{Handle, ModelClock, T0, layout};
    use flakeid_core::lease::{AfterRefusal, SharedGate, SharedGateCheck};
    use flakeid_core::{ClockBackwards, Generator, LeaseClock, LeaseWindow, Overflow, SharedCounter};
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicU64, Ordering};
    use loom::thread;

    /// The issuers' borrow window: ticks (1 ms) past the clock's.
    const BORROW_MS: u64 = 2;

    /// A window whose wall end is `wall_end_ms`; the monotonic end far away (the
    /// model moves the counter, not clocks).
    fn window(wall_end_ms: u64) -> LeaseWindow {
        LeaseWindow {
            wall_end_ms,
            mono_end: LeaseClock::new().now() + (3600 << 30),
        }
    }

    fn tick_of(id: u64) -> u64 {
        let l = layout();
        id >> (l.node_bits() + l.sequence_bits())
    }

    fn tick_at(ms: u64) -> u64 {
        layout().ticks_at(ms).unwrap()
    }

    fn generator(clock: &Handle, counter: &'static AtomicU64, node: u64, after: u64) -> Generator<SharedCounter> {
        Generator::builder(layout())
            .node(node)
            .overflow(Overflow::Borrow)
            .max_borrow_ms(BORROW_MS)
            .clock_backwards(ClockBackwards::Error)
            .max_wait_ms(0)
            .resume_after_ms(after)
            .clock(clock.clone())
            .build_shared(counter)
            .unwrap()
    }

    /// One call as a backend makes it: the lease word before reserving, the gate
    /// after, one retry after a renewal on the same node id. `Ok((under, id))` when it
    /// passed.
    fn issue(check: &SharedGateCheck<'_>, g: &Generator<SharedCounter>, first: bool) -> Option<(u64, u64)> {
        for _ in 0..2 {
            let under = check.begin();
            let id = if first { g.take_run_for_test() } else { g.next_id() }.ok()?;
            if check.allows(under, tick_of(id)) {
                return Some((under, id));
            }
            if check.after_refusal() != AfterRefusal::Renewed {
                return None;
            }
        }
        None
    }

    /// The issuer's clock reads T0 throughout and it may borrow 2 ticks: its first
    /// call takes a run of slots (2 on this layout: tick T0's) under the first lease,
    /// whose window allows ticks up to T0 + 2. Meanwhile the holder closes that window,
    /// acquires the node id again (on `second_node`) after a holder whose fence was
    /// T0 + 1 (acquiring moves the counter past it), begins the second lease and opens
    /// its window. Asserted in every interleaving: an ID passes only inside the window
    /// of the lease it was reserved under, never after a check that began once that
    /// lease's window was closed; under the second lease only IDs of the lease's start
    /// or later pass (never the rest of the run, nor any slot reserved before the
    /// lease began), and the start is past the earlier holder's fence.
    fn model(second_node: u64, budget: usize) {
        super::model(budget, move || {
            let clock = Handle(Arc::new(ModelClock::new(T0)));
            let counter: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
            let gate: &'static SharedGate = Box::leak(Box::new(SharedGate::new()));
            // 0: the first lease open; 1: closed; 2: the second open.
            let phase = Arc::new(AtomicU64::new(0));
            let first = gate.begin_lease(&generator(&clock, counter, 1, 0));
            gate.publish(window(T0 + 1), &layout(), BORROW_MS);
            let first_end = tick_at(T0) + BORROW_MS + 1;

            let holder = {
                let (clock, phase) = (clock.clone(), phase.clone());
                thread::spawn(move || {
                    gate.close();
                    phase.store(1, Ordering::Release);
                    let acquired = generator(&clock, counter, second_node, T0 + 1);
                    let second = gate.begin_lease(&acquired);
                    gate.publish(window(T0 + 2), &layout(), BORROW_MS);
                    phase.store(2, Ordering::Release);
                    second
                })
            };

            let g = generator(&clock, counter, 1, 0);
            let check = gate.check(first);
            let mut passed = Vec::new();
            for call in 0..3 {
                let seen = phase.load(Ordering::Acquire);
                if let Some((under, id)) = issue(&check, &g, call == 0) {
                    assert!(
                        !(under == first && seen >= 1),
                        "passed under a lease closed before the check"
                    );
                    passed.push((under, id));
                }
            }
            let second = holder.join().unwrap();
            let start = gate.lease_start();
            assert!(start > tick_at(T0 + 1), "the second lease starts at or below the fence");
            for (under, id) in passed {
                let tick = tick_of(id);
                let end = if under == first {
                    first_end
                } else {
                    assert_eq!(under, second, "passed under a lease never begun");
                    assert_eq!(SharedGate::node_of(second), 1, "passed under another node id");
                    assert!(
                        tick >= start,
                        "tick {tick} reserved before the second lease passed under it"
                    );
                    tick_at(T0 + 1) + BORROW_MS + 1
                };
                assert!(tick < end, "tick {tick} passed under {under:#x} past its window");
            }
        });
    }

    #[test]
    fn a_renewal_on_the_same_node_id() {
        model(1, 80_000);
    }

    #[test]
    fn a_new_lease_on_another_node_id() {
        model(2, 70_000);
    }
}
