//! `cargo bench -p flakeid-seal` — what sealing costs per ID (target: ≤ 300 ns with
//! AES-NI; the `aes` crate detects it at run time).
//!
//! * `seal/{seal,unseal}/aes128|aes256`: `Sealer` on the snowflake layout (63 bits).
//! * `reference/flexible_seal/aes128`: the same FF1 through fpe's general
//!   `FlexibleNumeralString` (one `u16` per bit, `BigUint` arithmetic): why
//!   `Sealer` carries the bits in a `u64` instead. Both give the same IDs
//!   (tests/properties.rs, tests/vectors.rs).
//!
//! * `floor/aes_chain11/aes128|aes256`: 11 dependent AES block encryptions alone
//!   (the `aes` crate's, as FF1 calls them), the floor under any FF1 on this AES.
//!
//! Where a seal's time goes (`valgrind --tool=callgrind` on this bench,
//! `--bench seal/seal/aes128 --profile-time 2`, instructions per `Sealer::run`
//! call): 4,890 with a 16-byte key (4,990 with a 32-byte one); expanding the key
//! schedule in each call would add about 570 (700):
//! * fpe's PRF feeding, `Prf::update`: 2,550 for its 33 calls, of which the 11
//!   AES-NI block encryptions are 430 and a `memcpy` per call 465;
//! * fpe's `generate_s` iterator, folded by numeral.rs: 1,130 (10 rounds);
//! * fpe's FF1 rounds, inlined into `Sealer::run` (a PRF fork and an iterator
//!   built per round): ~1,030;
//! * flakeid's own part, ~180: lending the Sealer's key schedule to the call
//!   (one `Arc` clone, one `Rc` allocation and free, the thread-local slot) and
//!   the range checks.
//!
//! So ~96% is fpe 0.7.0's code, and the 11 blocks are one dependency chain: each
//! round's block is computed from the one before, through fpe's byte-by-byte PRF
//! buffer. Time (one run, `nice -20`, load 3, medians): `seal/seal` 403 ns
//! (AES-128) and 479 ns (AES-256), 495 and 512 ns before; `floor/aes_chain11` 105
//! and 155 ns. So ~300 ns of a seal is fpe's per-round work between two blocks,
//! serial with them. Built with `RUSTFLAGS=-Ctarget-feature=+aes,+ssse3` (AES-NI
//! fixed at compile time), the same seal is 4,140 instructions but no faster
//! within this machine's noise (392-400 ns; the chain alone 85 ns): the target
//! needs a leaner FF1 PRF than fpe's.
use aes::cipher::consts::U16;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
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

    // The floor under any FF1 on this AES: its 11 block encryptions per ID (header
    // block P, then one per Feistel round) form one dependency chain, each block's
    // input being computed from the one before. This times that chain alone.
    let mut g = c.benchmark_group("floor");
    g.throughput(Throughput::Elements(1));
    aes_chain(
        &mut g,
        "aes128",
        &aes::Aes128Enc::new_from_slice(&[0x2b; 16]).expect("key"),
    );
    aes_chain(
        &mut g,
        "aes256",
        &aes::Aes256Enc::new_from_slice(&[0x2b; 32]).expect("key"),
    );
    g.finish();
}

fn aes_chain<C: BlockCipherEncrypt<BlockSize = U16>>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, aes: &C) {
    g.bench_function(format!("aes_chain11/{name}"), |b| {
        b.iter(|| {
            let mut block = aes::Block::from(black_box([7u8; 16]));
            for _ in 0..11 {
                aes.encrypt_block(&mut block);
            }
            block
        })
    });
}

criterion_group!(benches, seal);
criterion_main!(benches);
