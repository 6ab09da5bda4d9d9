//! `cargo bench -p flakeid-bench --bench at_cap` — one thread asking a strict
//! generator for more than its cap (4,096 IDs a millisecond), blocking and async (in
//! a tokio current-thread runtime, whose timer a waiting call awaits), beside
//! ferroid's `AtomicSnowflakeGenerator` both ways.
//!
//! Each round runs every case once for `FLAKEID_BENCH_MS` (300) ms of wall time,
//! starting at a different case each round; `FLAKEID_BENCH_ROUNDS` (7) rounds. The
//! table gives each case's median IDs per second, its CPU ns per ID, and the ratio
//! to the blocking call of its kind taken within each round (so that a neighbour's
//! work slowing one round cancels out). At the cap every case is bounded by the
//! clock: the blocking rate is the cap, and a wait that ends late loses IDs.
mod common;

use common::{one_thread, process_cpu, tokio_sleep};
use ferroid::futures::SnowflakeGeneratorAsyncTokioExt;
use ferroid::generator::AtomicSnowflakeGenerator;
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
use flakeid_bench::{env, median};
use flakeid_core::{Generator, Layout};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Calls of `next` in batches of 256 for `run`: (IDs a second, CPU ns an ID).
fn blocking(run: Duration, mut next: impl FnMut() -> u64) -> (f64, f64) {
    let (cpu, start) = (process_cpu(), Instant::now());
    let mut n = 0u64;
    while start.elapsed() < run {
        for _ in 0..256 {
            black_box(next());
        }
        n += 256;
    }
    let (wall, cpu) = (start.elapsed(), process_cpu() - cpu);
    (n as f64 / wall.as_secs_f64(), cpu.as_nanos() as f64 / n as f64)
}

/// [`blocking`] for an async call, the whole run in one `block_on`.
fn in_runtime<F: Future<Output = u64>>(
    rt: &tokio::runtime::Runtime,
    run: Duration,
    mut next: impl FnMut() -> F,
) -> (f64, f64) {
    let (cpu, start) = (process_cpu(), Instant::now());
    let n = rt.block_on(async {
        let mut n = 0u64;
        while start.elapsed() < run {
            for _ in 0..256 {
                black_box(next().await);
            }
            n += 256;
        }
        n
    });
    let (wall, cpu) = (start.elapsed(), process_cpu() - cpu);
    (n as f64 / wall.as_secs_f64(), cpu.as_nanos() as f64 / n as f64)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then one
    // round of 10 ms, to check that every case runs.
    let bench = std::env::args().any(|a| a == "--bench");
    let (run, rounds) = if bench {
        (env("FLAKEID_BENCH_MS", 300), env("FLAKEID_BENCH_ROUNDS", 7) as usize)
    } else {
        (10, 1)
    };
    let run = Duration::from_millis(run);
    let ours = Generator::builder(Layout::SNOWFLAKE)
        .node(3)
        .host_guard(false)
        .build()
        .expect("generator");
    let theirs =
        AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(3, MonotonicClock::<1>::with_epoch(TWITTER_EPOCH));
    let rt = one_thread();
    let names = [
        "flakeid Generator::next_id",
        "flakeid Generator::next_id_async",
        "ferroid AtomicSnowflakeGenerator::next_id",
        "ferroid AtomicSnowflakeGenerator::next_id_async",
    ];
    let case = |i: usize| match i {
        0 => blocking(run, || ours.next_id().expect("id")),
        1 => in_runtime(&rt, run, || async {
            ours.next_id_async(&tokio_sleep).await.expect("id")
        }),
        2 => blocking(run, || theirs.next_id(|_| std::thread::yield_now()).to_raw()),
        _ => in_runtime(&rt, run, || async { theirs.next_id_async().await.to_raw() }),
    };
    let mut rates = vec![Vec::new(); names.len()];
    let mut cpu = vec![Vec::new(); names.len()];
    let mut ratio = vec![Vec::new(); names.len()];
    for r in 0..rounds {
        let mut got = [(0.0, 0.0); 4];
        for k in 0..names.len() {
            let i = (r + k) % names.len();
            got[i] = case(i);
        }
        for (i, &(per_s, ns)) in got.iter().enumerate() {
            rates[i].push(per_s);
            cpu[i].push(ns);
            ratio[i].push(per_s / got[i & !1].0);
        }
    }
    println!("One thread at the cap (4,096 IDs/ms), {rounds} rounds of {run:?}; medians:");
    println!("{:<48} {:>12} {:>12} {:>14}", "", "M IDs/s", "CPU ns/ID", "÷ blocking");
    for (i, name) in names.iter().enumerate() {
        println!(
            "{name:<48} {:>12.3} {:>12.1} {:>14.3}",
            median(&mut rates[i]) / 1e6,
            median(&mut cpu[i]),
            median(&mut ratio[i])
        );
    }
}
