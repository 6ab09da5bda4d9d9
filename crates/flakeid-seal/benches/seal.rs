//! `cargo bench -p flakeid-seal` — what sealing costs per ID (target: ≤ 300 ns with
//! AES-NI; the `aes` crate detects it at run time).
//!
//! * `seal/{seal,unseal}/aes128|aes256`: `Sealer` on the snowflake layout (63 bits).
//! * `reference/flexible_seal/aes128`: the same FF1 through fpe's general
//!   `FlexibleNumeralString` (one `u16` per bit, `BigUint` arithmetic): why
//!   `Sealer` carries the bits in a `u64` instead. Both give the same IDs
//!   (tests/properties.rs, tests/vectors.rs).
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flakeid_core::Layout;
use flakeid_seal::Sealer;
use std::hint::black_box;

#[path = "../tests/support/mod.rs"]
mod support;

const ID: u64 = 910499571847892992;

fn seal(c: &mut Criterion) {
    let mut g = c.benchmark_group("seal");
    g.throughput(Throughput::Elements(1));
    for (name, key) in [("aes128", &[0x2b; 16][..]), ("aes256", &[0x2b; 32][..])] {
        let sealer = Sealer::new(key, &Layout::SNOWFLAKE).expect("sealer");
        let sealed = sealer.seal(ID).expect("seal");
        g.bench_function(format!("seal/{name}"), |b| {
            b.iter(|| sealer.seal(black_box(ID)).expect("seal"))
        });
        g.bench_function(format!("unseal/{name}"), |b| {
            b.iter(|| sealer.unseal(black_box(sealed)).expect("unseal"))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("reference");
    g.throughput(Throughput::Elements(1));
    let ff = fpe::ff1::FF1::<aes::Aes128>::new(&[0x2b; 16], 2).expect("ff1");
    g.bench_function("flexible_seal/aes128", |b| {
        b.iter(|| {
            let x = fpe::ff1::FlexibleNumeralString::from(support::bits_of(black_box(ID), 63));
            support::value_of(&Vec::from(ff.encrypt(&[], &x).expect("encrypt")))
        })
    });
    g.finish();
}

criterion_group!(benches, seal);
criterion_main!(benches);
