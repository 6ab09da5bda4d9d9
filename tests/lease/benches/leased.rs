//! `cargo bench -p flakeid-lease-tests` — what a lease adds to `next_id()`.
//!
//! Both generators use a layout whose sequence never runs out (22 bits), so the
//! numbers are the cost of one call, not the per-tick cap. The leased one holds a
//! file lease (no server needed): its hot path adds the validity-window check.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flakeid_core::{Generator, Layout};
use std::hint::black_box;

fn lease(c: &mut Criterion) {
    let wide = Layout::builder()
        .time_bits(41)
        .node_bits(0)
        .sequence_bits(22)
        .build()
        .expect("layout");
    let mut g = c.benchmark_group("lease");
    g.throughput(Throughput::Elements(1));
    let plain = Generator::builder(wide).build().expect("generator");
    g.bench_function("unleased/next_id", |b| {
        b.iter(|| black_box(plain.next_id().expect("id")))
    });
    let dir = std::env::temp_dir().join(format!("flakeid-lease-bench-{}", std::process::id()));
    let leased = Generator::builder(wide)
        .lease_url(&format!("file://{}", dir.display()))
        .build()
        .expect("leased generator");
    g.bench_function("leased/next_id", |b| {
        b.iter(|| black_box(leased.next_id().expect("id")))
    });
    g.finish();
    drop(leased);
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, lease);
criterion_main!(benches);
