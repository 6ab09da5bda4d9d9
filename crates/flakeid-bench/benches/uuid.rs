//! `cargo bench -p flakeid-bench --features uuid7 --bench uuid` — the 128-bit
//! generator beside the `uuid` crate's `Uuid::now_v7` (its thread-local context:
//! a 42-bit counter, random bits from `rand`'s thread-local generator), one thread
//! and four sharing one generator.
//!
//! * `uuid7/flakeid_next_uuid7`: `UuidGenerator::next_uuid7` (u128).
//! * `uuid7/flakeid_next_uuid7_string`: the same, as text.
//! * `uuid7/peer_uuid_now_v7`: `uuid::Uuid::now_v7()`.
//! * `uuid7/peer_uuid_now_v7_string`: the same, as text.
//! * `uuid7_threads/*/4`: four threads, time per ID of all together.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use flakeid_bench::threaded;
use flakeid_core::UuidGenerator;
use std::hint::black_box;
use std::time::Duration;

fn one_thread(c: &mut Criterion) {
    let mut g = c.benchmark_group("uuid7");
    g.throughput(Throughput::Elements(1));
    let ids = UuidGenerator::builder().build().expect("generator");
    g.bench_function("flakeid_next_uuid7", |b| {
        b.iter(|| black_box(ids.next_uuid7().expect("id")))
    });
    g.bench_function("flakeid_next_uuid7_string", |b| {
        b.iter(|| black_box(ids.next_uuid7_string().expect("id")))
    });
    g.bench_function("peer_uuid_now_v7", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7().as_u128()))
    });
    g.bench_function("peer_uuid_now_v7_string", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7().to_string()))
    });
    g.finish();
}

fn threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("uuid7_threads");
    g.throughput(Throughput::Elements(1));
    let ids = UuidGenerator::builder().build().expect("generator");
    g.bench_with_input(BenchmarkId::new("flakeid", 4), &4u64, |b, &n| {
        b.iter_custom(|iters| threaded(iters, n, || ids.next_uuid7().expect("id")))
    });
    g.bench_with_input(BenchmarkId::new("peer_uuid_now_v7", 4), &4u64, |b, &n| {
        b.iter_custom(|iters| threaded(iters, n, || uuid::Uuid::now_v7().as_u128()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    targets = one_thread, threads
}
criterion_main!(benches);
