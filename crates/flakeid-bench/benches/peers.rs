//! `cargo bench -p flakeid-bench --bench peers` — one thread's cost per ID below
//! the cap, flakeid beside its Rust peers, in interleaved rounds.
//!
//! Every generator issues Snowflake IDs (41/10/12: 4,096 per ms). A burst of
//! 1,024 IDs (`FLAKEID_PEERS_BURST`) started right after a millisecond tick of the
//! system clock stays below that cap, so it measures what one call costs, not the
//! cap, and what each millisecond's first call costs shows, as it does for an
//! application that issues in bursts. Each round
//! runs 64 bursts of every case, the cases in a different order each round;
//! `FLAKEID_BENCH_ROUNDS` (5) rounds. The table gives each case's median over the
//! rounds of its per-round median ns/ID, and that median ÷ ferroid Basic's and ÷
//! ferroid Atomic's, taken within each round (a neighbour's build slowing one
//! round down cancels out).
//!
//! Cases: flakeid's `Generator` (default strict, and `Overflow::Borrow`) shared
//! as it would be (`&Generator`, `Sync`), its per-thread handle
//! `Generator::local()` (strict, borrow); ferroid 2.0's `BasicSnowflakeGenerator`
//! (not `Sync`) and `AtomicSnowflakeGenerator` (`Sync`, one CAS per ID), both on
//! its `MonotonicClock` (a ticker thread); snowflaked's `sync::Generator`;
//! rs-snowflake's `real_time_generate` (`&mut`, not `Sync`).
//!
//! Instructions per ID: `FLAKEID_PEERS_CASE=k FLAKEID_PEERS_CALLS=n` runs case `k`
//! (the table's row, from 0) alone, `n` calls in bursts of 256 each started right
//! after a tick, each burst in `measured_burst`; under `valgrind --tool=callgrind
//! --toggle-collect='*measured_burst*'` the instructions counted ÷ `n` are what one
//! call executes below the cap (docs/performance.md has the command).
use ferroid::generator::{AtomicSnowflakeGenerator, BasicSnowflakeGenerator};
use ferroid::id::SnowflakeTwitterId;
use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
use flakeid_bench::{HOUR_MS, env, median};
use flakeid_core::{Generator, Layout, Overflow, precise_now_ms};
use std::hint::black_box;
use std::time::Instant;

const BURST: usize = 1024;
const BURSTS: usize = 64;
/// What a case is run for.
#[derive(Clone, Copy)]
enum Mode {
    /// `BURSTS` bursts, each of `BURST` calls.
    Bursts,
    /// This many calls, for an instruction count.
    Calls(u64),
}

/// Runs `next` as `mode` says; for bursts, the median ns/ID.
fn drive(mode: Mode, next: impl FnMut() -> u64) -> f64 {
    match mode {
        Mode::Bursts => bursts(next),
        Mode::Calls(n) => {
            let mut next = next;
            for _ in 0..n / 256 {
                after_a_tick();
                measured_burst(256, &mut next);
            }
            0.0
        }
    }
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

/// The median ns/ID of `BURSTS` bursts of `BURST` calls of `next`, each burst
/// started right after the system clock's millisecond changes.
fn bursts(mut next: impl FnMut() -> u64) -> f64 {
    let burst = env("FLAKEID_PEERS_BURST", BURST as u64) as usize;
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

    let names = [
        "flakeid Generator::local() (strict)",
        "flakeid Generator::local() (borrow)",
        "ferroid BasicSnowflakeGenerator",
        "flakeid Generator (borrow)",
        "flakeid Generator (strict, default)",
        "ferroid AtomicSnowflakeGenerator",
        "snowflaked sync::Generator",
        "rs-snowflake real_time_generate",
    ];
    let mut run = |case: usize, mode: Mode| match case {
        0 => drive(mode, || strict_local.next_id().expect("id")),
        1 => drive(mode, || borrow_local.next_id().expect("id")),
        2 => drive(mode, || basic.next_id(|_| std::thread::yield_now()).to_raw()),
        3 => drive(mode, || borrow.next_id().expect("id")),
        4 => drive(mode, || strict.next_id().expect("id")),
        5 => drive(mode, || atomic.next_id(|_| std::thread::yield_now()).to_raw()),
        6 => drive(mode, || snowflaked.generate::<u64>()),
        _ => drive(mode, || rs.real_time_generate() as u64),
    };
    if let Ok(case) = std::env::var("FLAKEID_PEERS_CASE") {
        let case: usize = case.parse().expect("FLAKEID_PEERS_CASE: a row number");
        run(case, Mode::Calls(env("FLAKEID_PEERS_CALLS", 1_000_000)));
        return;
    }
    const BASIC: usize = 2;
    const ATOMIC: usize = 5;
    let mut medians = vec![Vec::new(); names.len()];
    let mut vs_basic = vec![Vec::new(); names.len()];
    let mut vs_atomic = vec![Vec::new(); names.len()];
    for round in 0..rounds {
        let mut got = vec![0.0; names.len()];
        for k in 0..names.len() {
            let case = (k + round) % names.len();
            got[case] = run(case, Mode::Bursts);
        }
        for case in 0..names.len() {
            medians[case].push(got[case]);
            vs_basic[case].push(got[case] / got[BASIC]);
            vs_atomic[case].push(got[case] / got[ATOMIC]);
        }
    }
    println!("| generator | ns/ID | ÷ ferroid Basic | ÷ ferroid Atomic |");
    println!("|---|---:|---:|---:|");
    for (case, name) in names.iter().enumerate() {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} |",
            median(&mut medians[case]),
            median(&mut vs_basic[case]),
            median(&mut vs_atomic[case])
        );
    }
    println!("({rounds} rounds of {BURSTS} bursts of {BURST} IDs, medians)");
}
