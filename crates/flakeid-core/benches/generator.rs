//! `cargo bench -p flakeid-core` — the generator's costs.
//!
//! * `strict/next_id`: the default policy on the Snowflake layout; its time per ID
//!   is bounded below by the 4,096,000 IDs/s cap (244 ns), so it shows sustained
//!   throughput.
//! * `strict/next_id_below_cap`: the same code path on a layout whose sequence never
//!   runs out (22 sequence bits), i.e. what one call costs when the cap is not hit.
//! * `strict/peer_snowflaked_sync_generate`: the best Rust peer, for comparison.
//! * `borrow/*`: the throughput mode, one and two threads on one generator, and
//!   `fill` of 1M IDs.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flakeid_core::{Generator, Layout, Overflow};
use std::hint::black_box;
use std::time::{Duration, Instant};

const HOUR_MS: u64 = 3_600_000;

fn borrowing() -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .node(1)
        .overflow(Overflow::Borrow)
        .max_borrow_ms(24 * HOUR_MS) // a bench runs far ahead of the clock
        .build()
        .expect("generator")
}

fn strict(c: &mut Criterion) {
    let mut g = c.benchmark_group("strict");
    g.throughput(Throughput::Elements(1));
    let gen_strict = Generator::builder(Layout::SNOWFLAKE)
        .node(1)
        .build()
        .expect("generator");
    g.bench_function("next_id", |b| b.iter(|| black_box(gen_strict.next_id().expect("id"))));
    let wide = Layout::builder()
        .time_bits(41)
        .node_bits(0)
        .sequence_bits(22)
        .build()
        .expect("layout");
    let gen_wide = Generator::builder(wide).build().expect("generator");
    g.bench_function("next_id_below_cap", |b| {
        b.iter(|| black_box(gen_wide.next_id().expect("id")))
    });
    // The peer: snowflaked's thread-safe generator (same 41/10/12 split, system clock).
    let peer = snowflaked::sync::Generator::new(1);
    g.bench_function("peer_snowflaked_sync_generate", |b| {
        b.iter(|| black_box(peer.generate::<u64>()))
    });
    g.finish();
}

fn borrow(c: &mut Criterion) {
    let mut g = c.benchmark_group("borrow");
    g.throughput(Throughput::Elements(1));
    let one = borrowing();
    g.bench_function("next_id", |b| b.iter(|| black_box(one.next_id().expect("id"))));
    let shared = borrowing();
    g.bench_function("next_id_2_threads_total", |b| {
        b.iter_custom(|iters| {
            let per = iters / 2 + 1;
            let start = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        for _ in 0..per {
                            black_box(shared.next_id().expect("id"));
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    g.throughput(Throughput::Elements(1_000_000));
    let filler = borrowing();
    let mut buf = vec![0u64; 1_000_000];
    g.bench_function("fill_1m", |b| {
        b.iter(|| filler.fill(black_box(&mut buf)).expect("fill"))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = strict, borrow
}
criterion_main!(benches);
