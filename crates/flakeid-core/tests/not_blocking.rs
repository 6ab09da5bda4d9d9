//! The async calls never hold a runtime's thread: at a used-up tick, or with the
//! clock behind under `clock_backwards = "wait"`, they await the runtime's timer, so
//! the other tasks on the same thread (here: the one that moves the clock) run.
//! A call that blocked its thread would starve that task, the clock would never
//! move, and the call would end in `ClockStalled` after its bound. Each runtime the
//! docs name is here: tokio (one thread and several) and smol.

#![allow(clippy::unwrap_used)]

mod common;
use flakeid_core::{AsyncSleep, ClockBackwards, Error, Generator, Layout, ManualClock, UuidGenerator};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const T: u64 = 1_800_000_000_000;

fn tokio_sleep(d: Duration) -> tokio::time::Sleep {
    tokio::time::sleep(d)
}

/// A runtime of one thread, its timer on: where a call that held its thread would
/// starve every other task.
fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// A generator on node `node` reading `clock` (the host guard aside: each test
/// has its own node id and clock).
fn on_clock(clock: &ManualClock, node: u64) -> flakeid_core::GeneratorBuilder {
    common::on_clock(Layout::SNOWFLAKE, node, clock).host_guard(false)
}

/// One task's part of a test at the cap: 256 IDs, one call after another, each
/// waiting with `sleep`.
async fn ids_256<S: AsyncSleep>(g: Arc<Generator>, sleep: S) -> Vec<u64> {
    let mut ids = Vec::with_capacity(256);
    for _ in 0..256 {
        ids.push(g.next_id_async(&sleep).await.unwrap());
    }
    ids
}

/// How many IDs the tasks got together, once each task's are seen to go up and
/// none to be given twice.
fn unique_rising(runs: Vec<Vec<u64>>) -> usize {
    let mut all = Vec::new();
    for ids in runs {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "a task's IDs go up");
        all.extend(ids);
    }
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "unique");
    n
}

/// A task that moves a manual clock 1 ms for every 1 ms of the runtime's timer,
/// from `start` until `stop`, which returns how many times it moved it.
struct Ticker {
    done: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<u64>,
}

impl Ticker {
    fn start(clock: &ManualClock) -> Ticker {
        let (clock, done) = (clock.clone(), Arc::new(AtomicBool::new(false)));
        let stop = done.clone();
        let task = tokio::spawn(async move {
            let mut ticks = 0;
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(1)).await;
                clock.advance(1);
                ticks += 1;
            }
            ticks
        });
        Ticker { done, task }
    }

    async fn stop(self) -> u64 {
        self.done.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// 64 tasks on one runtime thread ask a strict generator for three ticks' worth of
/// IDs beyond its cap (4,096 a ms): every call gets its ID, unique, and each task's
/// increase; the clock moved because the ticker ran between the waits.
#[test]
fn a_strict_generator_at_its_cap_waits_on_the_timer() {
    let rt = one_thread();
    rt.block_on(async {
        let clock = ManualClock::new(T);
        let g = Arc::new(on_clock(&clock, 1).build().unwrap());
        let tick = Ticker::start(&clock);
        let tasks: Vec<_> = (0..64).map(|_| tokio::spawn(ids_256(g.clone(), tokio_sleep))).collect();
        let mut runs = Vec::new();
        for t in tasks {
            runs.push(t.await.unwrap());
        }
        let ticks = tick.stop().await;
        assert_eq!(unique_rising(runs), 64 * 256);
        assert!(
            clock.get() >= T + 3,
            "the clock moved {} ms ({ticks} ticks)",
            clock.get() - T
        );
        assert!(g.stats().tick_waits > 0);
    });
}

/// A batch beyond the cap, and the 128-bit generator strict at its cap, the same way.
#[test]
fn batches_and_uuids_wait_on_the_timer() {
    let rt = one_thread();
    rt.block_on(async {
        let clock = ManualClock::new(T);
        let tick = Ticker::start(&clock);
        let g = on_clock(&clock, 2).build().unwrap();
        let ids = g.next_ids_async(3 * 4096 + 5, &tokio_sleep).await.unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let u = UuidGenerator::builder()
            .overflow(flakeid_core::Overflow::Wait)
            .clock(clock.clone())
            .build()
            .unwrap();
        let mut last = 0u128;
        for _ in 0..70_000 {
            let v = u.next_uuid7_async(&tokio_sleep).await.unwrap();
            assert!(v > last);
            last = v;
        }
        tick.stop().await;
        assert!(clock.get() > T, "the 128-bit generator waited for the clock");
    });
}

/// A clock behind the IDs under `clock_backwards = "wait"`: the call awaits until the
/// ticker brings the clock back past them; with no ticker it ends in the blocking
/// call's error after `max_wait_ms`.
#[test]
fn a_clock_behind_is_waited_out_on_the_timer() {
    let rt = one_thread();
    rt.block_on(async {
        let clock = ManualClock::new(T);
        let g = on_clock(&clock, 3)
            .clock_backwards(ClockBackwards::Wait)
            .max_wait_ms(100)
            .build()
            .unwrap();
        let before = g.next_id_async(&tokio_sleep).await.unwrap();
        clock.set(T - 20);
        let tick = Ticker::start(&clock);
        let after = g.next_id_async(&tokio_sleep).await.unwrap();
        tick.stop().await;
        assert!(after > before);
        assert!(clock.get() >= T);

        clock.set(clock.get() - 50);
        let e = g.next_id_async(&tokio_sleep).await.unwrap_err();
        assert!(matches!(e, Error::ClockMovedBackwards { .. }), "{e:?}");
    });
}

/// On a multi-thread runtime, tasks hop workers between calls: a call that starts
/// after another returned gets a larger ID (checked over every pair through a
/// global sequence of starts and ends).
#[test]
fn call_order_holds_across_tasks_on_a_multi_thread_runtime() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let g = Arc::new(
            Generator::builder(Layout::SNOWFLAKE)
                .node(4)
                .host_guard(false)
                .max_sequence(63) // 64 a ms: most calls wait for the next tick
                .build()
                .unwrap(),
        );
        let seq = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..16)
            .map(|_| {
                let (g, seq) = (g.clone(), seq.clone());
                tokio::spawn(async move {
                    let mut calls = Vec::new();
                    for _ in 0..64 {
                        let start = seq.fetch_add(1, Ordering::SeqCst);
                        let id = g.next_id_async(&tokio_sleep).await.unwrap();
                        let end = seq.fetch_add(1, Ordering::SeqCst);
                        calls.push((start, end, id));
                        tokio::task::yield_now().await;
                    }
                    calls
                })
            })
            .collect();
        let mut calls = Vec::new();
        for t in tasks {
            calls.extend(t.await.unwrap());
        }
        calls.sort_unstable_by_key(|c| c.1);
        // The largest ID returned by calls that ended before each point.
        let ends: Vec<u64> = calls.iter().map(|c| c.1).collect();
        let mut best = Vec::with_capacity(calls.len());
        let mut m = 0;
        for c in &calls {
            m = m.max(c.2);
            best.push(m);
        }
        for &(start, _, id) in &calls {
            let before = ends.partition_point(|&e| e < start);
            if before > 0 {
                assert!(
                    id > best[before - 1],
                    "a call started at {start} got {id}, below an earlier call's"
                );
            }
        }
    });
}

/// smol's timer (async-io's) as the sleep.
async fn smol_sleep(d: Duration) {
    smol::Timer::after(d).await;
}

/// The same on smol: 64 tasks on one thread's executor (`smol::LocalExecutor`)
/// ask a strict generator for three ticks' worth of IDs beyond its cap, beside a
/// task that moves the clock 1 ms per 1 ms of smol's timer. A call that held the
/// thread would starve that task and end in `ClockStalled`.
#[test]
fn on_smol_a_strict_generator_at_its_cap_waits_on_the_timer() {
    let ex = smol::LocalExecutor::new();
    smol::block_on(ex.run(async {
        let clock = ManualClock::new(T);
        let g = Arc::new(on_clock(&clock, 5).build().unwrap());
        let done = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (clock, done) = (clock.clone(), done.clone());
            ex.spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    smol::Timer::after(Duration::from_millis(1)).await;
                    clock.advance(1);
                }
            })
        };
        let tasks: Vec<_> = (0..64).map(|_| ex.spawn(ids_256(g.clone(), smol_sleep))).collect();
        let mut runs = Vec::new();
        for t in tasks {
            runs.push(t.await);
        }
        done.store(true, Ordering::Relaxed);
        ticker.await;
        assert_eq!(unique_rising(runs), 64 * 256);
        assert!(clock.get() >= T + 3, "the clock moved {} ms", clock.get() - T);
        assert!(g.stats().tick_waits > 0);
    }));
}

/// On the system clock, the last millisecond before the next tick is not slept (a
/// runtime's timer would often wake a whole tick late): the call yields to the
/// runtime until the tick comes. Yielding, it still never holds the thread: a
/// task beside it, which only runs when the caller returns to the runtime, runs
/// all through the caller's waits. A call that spun in place would leave it
/// at 0 until the caller's last ID.
#[test]
fn on_the_system_clock_the_last_millisecond_is_yielded_not_held() {
    one_thread().block_on(async {
        // 16 IDs a millisecond: every tick is used up within it, even on a busy host.
        let g = Generator::builder(Layout::SNOWFLAKE)
            .node(6)
            .host_guard(false)
            .max_sequence(15)
            .build()
            .unwrap();
        let turns = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let beside = {
            let (turns, done) = (turns.clone(), done.clone());
            tokio::spawn(async move {
                while !done.load(Ordering::Relaxed) {
                    turns.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
            })
        };
        // Eight ticks' worth at the cap: waits for the next tick.
        let (mut last, mut seen_at_waits) = (0, Vec::new());
        for _ in 0..8 * 16 {
            let id = g.next_id_async(&tokio_sleep).await.unwrap();
            assert!(id > last);
            if Layout::SNOWFLAKE.decompose(id).sequence == 0 {
                seen_at_waits.push(turns.load(Ordering::Relaxed));
            }
            last = id;
        }
        done.store(true, Ordering::Relaxed);
        beside.await.unwrap();
        assert!(g.stats().tick_waits >= 3, "{:?}", g.stats());
        // The task beside ran between the ticks the caller waited for.
        assert!(
            seen_at_waits.windows(2).filter(|w| w[1] > w[0]).count() >= 2,
            "turns of the task beside at each new tick: {seen_at_waits:?}"
        );
    });
}
