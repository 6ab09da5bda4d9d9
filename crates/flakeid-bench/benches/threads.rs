//! `cargo bench -p flakeid-bench --bench threads` — threads sharing one generator,
//! in interleaved rounds.
//!
//! Each round runs every case once, for `FLAKEID_BENCH_MS` (300) ms of wall time,
//! starting at a different case each round; `FLAKEID_BENCH_ROUNDS` (7) rounds. The
//! table gives each case's median IDs/s over the rounds (and its CPU time per ID:
//! on a machine that other work keeps busy, more threads also take a larger share
//! of the cores, so wall-time rates flatter them), and two ratios taken
//! within each round before their median is taken (so that a neighbour's build
//! slowing one round down cancels out): against the same kind with 1 thread, and
//! against the peer with as many threads. On a machine shared with other work,
//! quote the ratios.
//!
//! Cases: `borrow` (Snowflake layout, `overflow = borrow`), `fetch-add` and `cas`
//! (not generators: one shared counter moved by a bare `fetch_add`, or by a load and
//! a retried CAS, the least a call on one counter can do), `handles` (the same
//! generator, each thread through its own `Generator::local()`), `strict` (the default
//! policy: capped at 4,096,000 IDs/s), `strict<cap` (a 22-bit sequence: the same
//! code path without the cap), and the peers `ferroid-atomic` (ferroid's
//! `AtomicSnowflakeGenerator`: one CAS per ID, strict) and `snowflaked`
//! (`sync::Generator`, the Snowflake split, strict), each with 1, 2, 4 and 8
//! threads on one generator.
//! `FLAKEID_BENCH_KINDS=borrow` runs one kind (and the peer).
mod common;

use common::process_cpu;
use flakeid_bench::{HOUR_MS, env, median};
use flakeid_core::{Generator, Layout, Overflow};
use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
// Every generator here takes `host_guard(false)` (the hot path, which the guard is
// not on); borrowing ones run far ahead of the clock on node 1, strict ones on node
// 2: generators of one process on one node id share its counter, and a strict call
// waits for the clock to pass what a borrowing one reserved.
use std::time::{Duration, Instant};

const THREADS: [usize; 4] = [1, 2, 4, 8];
const KINDS: [&str; 8] = [
    "borrow",
    "fetch-add",
    "cas",
    "handles",
    "strict",
    "strict<cap",
    "ferroid-atomic",
    "snowflaked",
];

/// What one case measured: IDs per second of wall time, and CPU ns per ID.
#[derive(Clone, Copy, Default)]
struct Run {
    per_s: f64,
    cpu_ns: f64,
}

/// `threads` threads calling `next` for `run`.
fn rate(threads: usize, run: Duration, next: &(dyn Fn() -> u64 + Sync)) -> Run {
    rate_each(threads, run, &|| Box::new(next))
}

/// `threads` threads, each calling a caller of its own (from `each`) for `run`.
fn rate_each<'a>(threads: usize, run: Duration, each: &(dyn Fn() -> Box<dyn FnMut() -> u64 + 'a> + Sync)) -> Run {
    let stop = AtomicBool::new(false);
    let total = AtomicU64::new(0);
    let go = Barrier::new(threads + 1);
    let elapsed = std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut next = each();
                go.wait();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        black_box(next());
                    }
                    n += 256;
                }
                total.fetch_add(n, Ordering::Relaxed);
            });
        }
        go.wait();
        let (start, cpu) = (Instant::now(), process_cpu());
        std::thread::sleep(run);
        stop.store(true, Ordering::Relaxed);
        (start.elapsed(), cpu)
    });
    // The threads stop within 256 calls of the flag: their CPU time until then.
    let (wall, cpu) = (elapsed.0, process_cpu() - elapsed.1);
    let ids = total.load(Ordering::Relaxed) as f64;
    Run {
        per_s: ids / wall.as_secs_f64(),
        cpu_ns: cpu.as_nanos() as f64 / ids,
    }
}

/// One case: a fresh generator (or peer) of `kind` shared by `threads` threads.
fn case(kind: &str, threads: usize, run: Duration) -> Run {
    match kind {
        "borrow" => {
            let g = Generator::builder(Layout::SNOWFLAKE)
                .host_guard(false)
                .node(1)
                .overflow(Overflow::Borrow)
                .max_borrow_ms(24 * HOUR_MS) // a bench runs far ahead of the clock
                .build()
                .expect("generator");
            rate(threads, run, &|| g.next_id().expect("id"))
        }
        "fetch-add" => {
            // Not a generator: one shared counter's fetch-and-add, an atomic step that
            // cannot fail. Any shared generator that keeps call order takes at least
            // this step on one cache line per call, so its row with 2 threads bounds
            // what any such generator can reach.
            let counter = AtomicU64::new(0);
            rate(threads, run, &|| counter.fetch_add(1, Ordering::AcqRel))
        }
        "cas" => {
            // Not a generator: one shared counter moved by a load and a CAS, retried
            // when another thread moved it first (the step a shared generator takes
            // per call under contention, without its clock and window checks).
            let counter = AtomicU64::new(0);
            rate(threads, run, &|| {
                let mut cur = counter.load(Ordering::Relaxed);
                loop {
                    match counter.compare_exchange_weak(cur, cur + 1, Ordering::Release, Ordering::Relaxed) {
                        Ok(v) => return v,
                        Err(now) => cur = now,
                    }
                }
            })
        }
        "handles" => {
            // One `Generator::local()` per thread on one borrowing generator.
            let g = Generator::builder(Layout::SNOWFLAKE)
                .host_guard(false)
                .node(3)
                .overflow(Overflow::Borrow)
                .max_borrow_ms(24 * HOUR_MS)
                .build()
                .expect("generator");
            rate_each(threads, run, &|| {
                let mut local = g.local();
                Box::new(move || local.next_id().expect("id"))
            })
        }
        "strict" => {
            let g = Generator::builder(Layout::SNOWFLAKE)
                .host_guard(false)
                .node(2)
                .build()
                .expect("generator");
            rate(threads, run, &|| g.next_id().expect("id"))
        }
        "strict<cap" => {
            let g = Generator::builder(flakeid_bench::below_the_cap())
                .node(0)
                .host_guard(false)
                .build()
                .expect("generator");
            rate(threads, run, &|| g.next_id().expect("id"))
        }
        "ferroid-atomic" => {
            // ferroid's `AtomicSnowflakeGenerator` (one CAS per ID, `Sync`), the
            // Snowflake split and epoch: the linearizable peer.
            use ferroid::generator::AtomicSnowflakeGenerator;
            use ferroid::id::SnowflakeTwitterId;
            use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
            let peer = AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(
                1,
                MonotonicClock::<1>::with_epoch(TWITTER_EPOCH),
            );
            rate(threads, run, &|| peer.next_id(|_| std::thread::yield_now()).to_raw())
        }
        _ => {
            let peer = snowflaked::sync::Generator::new(1);
            rate(threads, run, &|| peer.generate::<u64>())
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not, and then
    // each case runs once, briefly, as criterion's benches do there.
    let measuring = std::env::args().any(|a| a == "--bench");
    let (rounds, ms) = if measuring {
        (
            env("FLAKEID_BENCH_ROUNDS", 7).max(1) as usize,
            env("FLAKEID_BENCH_MS", 300),
        )
    } else {
        (1, 5)
    };
    let run = Duration::from_millis(ms);
    // FLAKEID_BENCH_KINDS=borrow,snowflaked: only those (the ratios need the
    // 1-thread case of each kind and the peer).
    let only = std::env::var("FLAKEID_BENCH_KINDS").unwrap_or_default();
    let kinds: Vec<&str> = KINDS
        .iter()
        .copied()
        .filter(|k| only.is_empty() || *k == "snowflaked" || only.split(',').any(|o| o == *k))
        .collect();
    let cases: Vec<(&str, usize)> = kinds
        .iter()
        .flat_map(|&k| THREADS.iter().map(move |&t| (k, t)))
        .collect();
    // rates[round][case]
    let mut rates = vec![vec![Run::default(); cases.len()]; rounds];
    for (r, row) in rates.iter_mut().enumerate() {
        for i in 0..cases.len() {
            let c = (i + r * 5) % cases.len();
            row[c] = case(cases[c].0, cases[c].1, run);
        }
        eprintln!("round {}/{rounds} done", r + 1);
    }
    let at = |k: &str, t: usize| cases.iter().position(|&c| c == (k, t)).expect("case");
    println!(
        "{rounds} interleaved rounds of {} ms per case; medians over rounds, ratios taken within each round",
        run.as_millis()
    );
    println!(
        "{:<11} {:>7} {:>10} {:>9} {:>11} {:>12} {:>12}",
        "kind", "threads", "M IDs/s", "ns/ID", "CPU ns/ID", "÷ 1 thread", "÷ snowflaked"
    );
    for &kind in &kinds {
        for &t in &THREADS {
            let c = at(kind, t);
            let m = median(&mut rates.iter().map(|row| row[c].per_s).collect::<Vec<_>>());
            let cpu = median(&mut rates.iter().map(|row| row[c].cpu_ns).collect::<Vec<_>>());
            let one = at(kind, 1);
            let vs_one = median(
                &mut rates
                    .iter()
                    .map(|row| row[c].per_s / row[one].per_s)
                    .collect::<Vec<_>>(),
            );
            let peer = at("snowflaked", t);
            let vs_peer = median(
                &mut rates
                    .iter()
                    .map(|row| row[c].per_s / row[peer].per_s)
                    .collect::<Vec<_>>(),
            );
            println!(
                "{kind:<11} {t:>7} {:>10.2} {:>9.2} {cpu:>11.2} {vs_one:>12.2} {vs_peer:>12.2}",
                m / 1e6,
                1e9 / m
            );
        }
    }
}
