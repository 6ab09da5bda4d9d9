//! `cargo bench -p flakeid-bench --bench peers` — one thread's cost per ID below
//! the cap, flakeid beside its Rust peers, in interleaved rounds.
//!
//! Every generator issues Snowflake IDs (41/10/12: 4,096 per ms). Each case runs in
//! bursts of 128, 1,024 and 4,000 IDs (`FLAKEID_PEERS_BURST=n`: that one shape),
//! each burst started right after a millisecond tick of the system clock: below the
//! cap, so a burst measures what one call costs, not the cap, and what each
//! millisecond's first call costs shows in the short bursts as it does for an
//! application that issues in bursts. Each round runs 64 bursts of every case and
//! shape, the cases in a different order each round; `FLAKEID_BENCH_ROUNDS` (5)
//! rounds. The table gives, per shape, each case's median over the rounds of its
//! per-round median ns/ID, and that median ÷ ferroid Basic's and ÷ ferroid Atomic's,
//! taken within each round (a neighbour's build slowing one round down cancels out).
//!
//! Cases: flakeid's `Generator` (default strict, and `Overflow::Borrow`) shared
//! as it would be (`&Generator`, `Sync`), its per-thread handle
//! `Generator::local()` (strict, borrow), and its `next_id_async` (strict); ferroid
//! 2.0's `BasicSnowflakeGenerator` (not `Sync`) and `AtomicSnowflakeGenerator`
//! (`Sync`, one CAS per ID), both on its `MonotonicClock` (a ticker thread), and the
//! latter's `next_id_async` (tokio's sleep); snowflaked's `sync::Generator`;
//! rs-snowflake's `real_time_generate` (`&mut`, not `Sync`). The async calls run
//! each burst in one `block_on` of a tokio current-thread runtime, timed inside it:
//! below the cap neither waits, so a row is what the future costs beside the
//! blocking call.
//!
//! Instructions per ID: `FLAKEID_PEERS_CASE=k FLAKEID_PEERS_CALLS=n` runs case `k`
//! (the table's row, from 0) alone, `n` calls in bursts of 256 (or
//! `FLAKEID_PEERS_BURST`) each started right after a tick, each burst in `measured_burst`; under `valgrind --tool=callgrind
//! --toggle-collect='*measured_burst*'` the instructions counted ÷ `n` are what one
//! call executes below the cap (docs/performance.md has the command).
mod common;

use common::{one_thread, tokio_sleep};
use ferroid::futures::SnowflakeGeneratorAsyncTokioExt;
use ferroid::generator::{AtomicSnowflakeGenerator, BasicSnowflakeGenerator};
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
use flakeid_bench::{HOUR_MS, env, median};
use flakeid_core::{Generator, Layout, Overflow, precise_now_ms};
use std::future::Future;
use std::hint::black_box;
use std::time::Instant;

/// The burst shapes: a short burst (each tick's first call weighs), the default
/// one, and one just below the cap.
const SHAPES: [usize; 3] = [128, 1024, 4000];
const BURSTS: usize = 64;
/// What a case is run for.
#[derive(Clone, Copy)]
enum Mode {
    /// `BURSTS` bursts, each of this many calls.
    Bursts(usize),
    /// This many calls, for an instruction count.
    Calls(u64),
}

/// Runs `next` as `mode` says; for bursts, the median ns/ID.
fn drive(mode: Mode, next: impl FnMut() -> u64) -> f64 {
    match mode {
        Mode::Bursts(burst) => bursts(burst, next),
        Mode::Calls(n) => {
            let mut next = next;
            let burst = calls_burst();
            for _ in 0..n / burst as u64 {
                after_a_tick();
                measured_burst(burst, &mut next);
            }
            0.0
        }
    }
}

/// The burst of an instruction count: `FLAKEID_PEERS_BURST`, else 256.
fn calls_burst() -> usize {
    env("FLAKEID_PEERS_BURST", 256) as usize
}

/// Returns right after the system clock's millisecond changes.
fn after_a_tick() {
    let ms = precise_now_ms();
    while precise_now_ms() == ms {
        std::hint::spin_loop();
    }
}

/// `n` calls of `next`: the only code an instruction count collects.
#[inline(never)]
fn measured_burst(n: usize, next: &mut impl FnMut() -> u64) {
    for _ in 0..n {
        black_box(next());
    }
}

/// The median ns/ID of `BURSTS` bursts of `burst` calls of `next`, each burst
/// started right after the system clock's millisecond changes.
fn bursts(burst: usize, mut next: impl FnMut() -> u64) -> f64 {
    let mut per_id = Vec::with_capacity(BURSTS);
    for _ in 0..BURSTS {
        after_a_tick();
        let start = Instant::now();
        for _ in 0..burst {
            black_box(next());
        }
        per_id.push(start.elapsed().as_nanos() as f64 / burst as f64);
    }
    median(&mut per_id)
}

/// Runs async calls (`next`'s futures) as `mode` says, each burst one `block_on`
/// of a tokio current-thread runtime (whose timer a call that must wait awaits),
/// timed inside it: the median ns/ID of the bursts.
fn drive_async<F: Future<Output = u64>>(mode: Mode, rt: &tokio::runtime::Runtime, mut next: impl FnMut() -> F) -> f64 {
    match mode {
        Mode::Bursts(burst) => {
            let mut per_id = Vec::with_capacity(BURSTS);
            for _ in 0..BURSTS {
                after_a_tick();
                // Timed inside the `block_on`: an async caller already runs in its
                // runtime, so entering one is not the call's cost.
                let took = rt.block_on(async {
                    let start = Instant::now();
                    measured_burst_async(burst, &mut next).await;
                    start.elapsed()
                });
                per_id.push(took.as_nanos() as f64 / burst as f64);
            }
            median(&mut per_id)
        }
        Mode::Calls(n) => {
            let burst = calls_burst();
            for _ in 0..n / burst as u64 {
                after_a_tick();
                rt.block_on(measured_burst_async(burst, &mut next));
            }
            0.0
        }
    }
}

/// `n` awaited calls: the only code of an async case an instruction count collects.
#[inline(never)]
async fn measured_burst_async<F: Future<Output = u64>>(n: usize, next: &mut impl FnMut() -> F) {
    for _ in 0..n {
        black_box(next().await);
    }
}

fn flakeid(overflow: Overflow) -> Generator {
    // A node id per policy: generators of one process on one node id share its
    // counter, and a strict call waits for the clock to pass a borrowing one's lead.
    Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(if overflow == Overflow::Borrow { 1 } else { 2 })
        .overflow(overflow)
        .max_borrow_ms(HOUR_MS)
        .build()
        .expect("generator")
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then one
    // short round, to check that every case runs.
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench {
        env("FLAKEID_BENCH_ROUNDS", 5) as usize
    } else {
        1
    };

    let strict = flakeid(Overflow::Wait);
    let borrow = flakeid(Overflow::Borrow);
    let mut strict_local = strict.local();
    let mut borrow_local = borrow.local();
    let clock = || MonotonicClock::<1>::with_epoch(TWITTER_EPOCH);
    let basic = BasicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(1, clock());
    let atomic = AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(1, clock());
    let snowflaked = snowflaked::sync::Generator::new(1);
    let mut rs = snowflake::SnowflakeIdGenerator::new(0, 1);
    let rt = one_thread();

    let names = [
        "flakeid Generator::local() (strict)",
        "flakeid Generator::local() (borrow)",
        "ferroid BasicSnowflakeGenerator",
        "flakeid Generator (borrow)",
        "flakeid Generator (strict, default)",
        "ferroid AtomicSnowflakeGenerator",
        "snowflaked sync::Generator",
        "rs-snowflake real_time_generate",
        "flakeid Generator::next_id_async (strict)",
        "ferroid AtomicSnowflakeGenerator::next_id_async",
    ];
    let mut run = |case: usize, mode: Mode| match case {
        0 => drive(mode, || strict_local.next_id().expect("id")),
        1 => drive(mode, || borrow_local.next_id().expect("id")),
        2 => drive(mode, || basic.next_id(|_| std::thread::yield_now()).to_raw()),
        3 => drive(mode, || borrow.next_id().expect("id")),
        4 => drive(mode, || strict.next_id().expect("id")),
        5 => drive(mode, || atomic.next_id(|_| std::thread::yield_now()).to_raw()),
        6 => drive(mode, || snowflaked.generate::<u64>()),
        7 => drive(mode, || rs.real_time_generate() as u64),
        8 => drive_async(mode, &rt, || async {
            strict.next_id_async(&tokio_sleep).await.expect("id")
        }),
        _ => drive_async(mode, &rt, || async { atomic.next_id_async().await.to_raw() }),
    };
    if let Ok(case) = std::env::var("FLAKEID_PEERS_CASE") {
        let case: usize = case.parse().expect("FLAKEID_PEERS_CASE: a row number");
        run(case, Mode::Calls(env("FLAKEID_PEERS_CALLS", 1_000_000)));
        return;
    }
    const BASIC: usize = 2;
    const ATOMIC: usize = 5;
    let shapes: Vec<usize> = match std::env::var("FLAKEID_PEERS_BURST") {
        Ok(n) => vec![n.parse().expect("FLAKEID_PEERS_BURST: a burst size")],
        Err(_) => SHAPES.to_vec(),
    };
    // [shape][case]: the per-round figures.
    let mut medians = vec![vec![Vec::new(); names.len()]; shapes.len()];
    let mut vs_basic = medians.clone();
    let mut vs_atomic = medians.clone();
    for round in 0..rounds {
        for (s, &burst) in shapes.iter().enumerate() {
            let mut got = vec![0.0; names.len()];
            for k in 0..names.len() {
                let case = (k + round) % names.len();
                got[case] = run(case, Mode::Bursts(burst));
            }
            for case in 0..names.len() {
                medians[s][case].push(got[case]);
                vs_basic[s][case].push(got[case] / got[BASIC]);
                vs_atomic[s][case].push(got[case] / got[ATOMIC]);
            }
        }
    }
    let head: Vec<String> = shapes.iter().map(|b| format!("bursts of {b}")).collect();
    println!("ns/ID (÷ ferroid Basic, ÷ ferroid Atomic), medians:");
    println!("| generator | {} |", head.join(" | "));
    println!("|---|{}", "---:|".repeat(shapes.len()));
    for (case, name) in names.iter().enumerate() {
        let cells: Vec<String> = (0..shapes.len())
            .map(|s| {
                format!(
                    "{:.2} ({:.2}, {:.2})",
                    median(&mut medians[s][case]),
                    median(&mut vs_basic[s][case]),
                    median(&mut vs_atomic[s][case])
                )
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!("({rounds} rounds of {BURSTS} bursts of each shape)");
}
