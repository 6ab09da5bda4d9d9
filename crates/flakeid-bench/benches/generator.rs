//! `cargo bench -p flakeid-bench` — the generator's costs.
//!
//! * `strict/next_id`: the default policy on the Snowflake layout; its time per ID
//!   is bounded below by the 4,096,000 IDs/s cap (244 ns), so it shows sustained
//!   throughput.
//! * `strict/next_id_below_cap`: the same code path on a layout whose sequence never
//!   runs out (22 sequence bits), i.e. what one call costs when the cap is not hit.
//! * `strict/peer_snowflaked_sync_generate`: the best Rust peer, for comparison.
//! * `borrow/*`: the throughput mode, one thread, and `fill` of 1M IDs.
//! * `local/*`: the per-thread handle (`Generator::local`): strict at the cap,
//!   below it, and borrowing. `benches/peers.rs` has it beside ferroid.
//! * `threads/{borrow,strict,peer_snowflaked_sync}/N`: N = 1, 2, 4, 8 threads
//!   sharing one generator, time per ID of all threads together.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use flakeid_bench::{HOUR_MS, threaded};
use flakeid_core::{Generator, Layout, Overflow};
use std::future::Future;
use std::hint::black_box;
// Every generator here takes `host_guard(false)` (the hot path, which the guard is
// not on); borrowing ones run far ahead of the clock on node 1, strict ones on node
// 2: generators of one process on one node id share its counter, and a strict call
// waits for the clock to pass what a borrowing one reserved.
use std::time::Duration;

fn borrowing() -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(1)
        .overflow(Overflow::Borrow)
        .max_borrow_ms(24 * HOUR_MS) // a bench runs far ahead of the clock
        .build()
        .expect("generator")
}

/// The default policy on the Snowflake layout.
fn strict_snowflake() -> Generator {
    Generator::builder(Layout::SNOWFLAKE)
        .host_guard(false)
        .node(2)
        .build()
        .expect("generator")
}

/// The default policy on a layout whose sequence never runs out (22 bits).
fn below_the_cap() -> Generator {
    Generator::builder(flakeid_bench::below_the_cap())
        .node(0)
        .host_guard(false)
        .build()
        .expect("generator")
}

fn strict(c: &mut Criterion) {
    let mut g = c.benchmark_group("strict");
    g.throughput(Throughput::Elements(1));
    let gen_strict = strict_snowflake();
    g.bench_function("next_id", |b| b.iter(|| black_box(gen_strict.next_id().expect("id"))));
    let gen_wide = below_the_cap();
    g.bench_function("next_id_below_cap", |b| {
        b.iter(|| black_box(gen_wide.next_id().expect("id")))
    });
    // The async call where no wait is needed, polled once with a no-op waker: what
    // it costs beside the blocking call above (the same generator, below the cap).
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let no_sleep = |_: std::time::Duration| std::future::ready(());
    g.bench_function("next_id_async_below_cap", |b| {
        b.iter(
            || match std::pin::pin!(gen_wide.next_id_async(&no_sleep)).poll(&mut cx) {
                std::task::Poll::Ready(id) => black_box(id.expect("id")),
                std::task::Poll::Pending => unreachable!("below the cap no call waits"),
            },
        )
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
    g.throughput(Throughput::Elements(1_000_000));
    let filler = borrowing();
    let mut buf = vec![0u64; 1_000_000];
    g.bench_function("fill_1m", |b| {
        b.iter(|| filler.fill(black_box(&mut buf)).expect("fill"))
    });
    g.finish();
}

/// 1, 2, 4 and 8 threads sharing one generator (time per ID, all threads together),
/// beside the peer shared the same way. `benches/threads.rs` runs the same in
/// interleaved rounds, for figures to quote on a busy machine.
fn threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("threads");
    g.throughput(Throughput::Elements(1));
    for n in [1u64, 2, 4, 8] {
        let shared = borrowing();
        g.bench_with_input(BenchmarkId::new("borrow", n), &n, |b, &n| {
            b.iter_custom(|iters| threaded(iters, n, || shared.next_id().expect("id")))
        });
        let strict = Generator::builder(Layout::SNOWFLAKE)
            .host_guard(false)
            .node(2)
            .build()
            .expect("generator");
        g.bench_with_input(BenchmarkId::new("strict", n), &n, |b, &n| {
            b.iter_custom(|iters| threaded(iters, n, || strict.next_id().expect("id")))
        });
        let peer = snowflaked::sync::Generator::new(1);
        g.bench_with_input(BenchmarkId::new("peer_snowflaked_sync", n), &n, |b, &n| {
            b.iter_custom(|iters| threaded(iters, n, || peer.generate::<u64>()))
        });
    }
    g.finish();
}

fn local(c: &mut Criterion) {
    let mut g = c.benchmark_group("local");
    g.throughput(Throughput::Elements(1));
    let gen_strict = strict_snowflake();
    let mut h = gen_strict.local();
    g.bench_function("next_id", |b| b.iter(|| black_box(h.next_id().expect("id"))));
    let gen_wide = below_the_cap();
    let mut h = gen_wide.local();
    g.bench_function("next_id_below_cap", |b| b.iter(|| black_box(h.next_id().expect("id"))));
    let one = borrowing();
    let mut h = one.local();
    g.bench_function("borrow_next_id", |b| b.iter(|| black_box(h.next_id().expect("id"))));
    g.finish();
}

/// Building a generator and closing it again in one process, with the host guard
/// (node 3, in `FLAKEID_HOST_GUARD` or /tmp): the process's counter of the node id
/// is kept, so a rebuild takes the guard file again and waits for nothing. Beside
/// it, a build while another generator on the node id lives (no guard to take).
fn lifecycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("lifecycle");
    let build = || {
        Generator::builder(Layout::SNOWFLAKE)
            .node(3)
            .build()
            .expect("generator")
    };
    g.bench_function("build_next_close", |b| {
        b.iter(|| {
            let one = build();
            black_box(one.next_id().expect("id"));
            one.close();
        })
    });
    let held = build();
    g.bench_function("build_next_drop_beside_another", |b| {
        b.iter(|| black_box(build().next_id().expect("id")))
    });
    drop(held);
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = strict, borrow, local, threads, lifecycle
}
criterion_main!(benches);
