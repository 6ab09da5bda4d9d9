//! Properties of sealing, for random keys, tweaks, widths and IDs, plus the one
//! that can be checked exhaustively: on a 21-bit layout, sealing permutes all 2^21
//! values.
//!
//! The random cases use a fixed seed, so that every run checks the same cases; set
//! `PROPTEST_RNG_SEED` (and `PROPTEST_CASES`) to explore others.

#![allow(clippy::unwrap_used)]

mod support;

use flakeid_core::Layout;
use flakeid_seal::Sealer;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use support::{seal_reference, small_layout};

fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(26);
    }
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 1024;
    }
    config
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 16),
        prop::collection::vec(any::<u8>(), 24),
        prop::collection::vec(any::<u8>(), 32),
    ]
}

/// Tweaks from none to past two AES blocks.
fn tweak() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..40)
}

/// A layout of `bits` total bits, 20..=64: 8 time bits (wide time fields would run
/// past the year 9999, which layouts refuse), `bits` − 16 node bits, 8 sequence bits.
fn layout_of_width(bits: u32) -> Layout {
    Layout::builder()
        .time_bits(8)
        .node_bits(bits - 16)
        .sequence_bits(8)
        .build()
        .unwrap()
}

/// (layout width, an ID in range), IDs biased to the edges.
fn width_and_id() -> impl Strategy<Value = (u32, u64)> {
    (20u32..=64).prop_flat_map(|n| {
        let max = u64::MAX >> (64 - n);
        (Just(n), prop_oneof![Just(0), Just(max), 0..=max])
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn unseal_inverts_seal_and_outputs_stay_in_range(key in key(), tweak in tweak(), (n, id) in width_and_id()) {
        let sealer = Sealer::new(&key, &layout_of_width(n)).unwrap().tweak(&tweak);
        let sealed = sealer.seal(id).unwrap();
        prop_assert!(sealed <= sealer.max_id());
        prop_assert_eq!(sealer.unseal(sealed).unwrap(), id);
        let opened = sealer.unseal(id).unwrap();
        prop_assert!(opened <= sealer.max_id());
        prop_assert_eq!(sealer.seal(opened).unwrap(), id);
    }

    /// The `u64` numeral string gives what fpe's general one gives, bit for bit.
    #[test]
    fn sealer_agrees_with_fpe_s_flexible_numeral_string(key in key(), tweak in tweak(), (n, id) in width_and_id()) {
        let sealer = Sealer::new(&key, &layout_of_width(n)).unwrap().tweak(&tweak);
        prop_assert_eq!(sealer.seal(id).unwrap(), seal_reference(&key, &tweak, n, id));
    }

    #[test]
    fn ids_out_of_range_are_refused(key in key(), n in 20u32..64, excess in 0u64..1000) {
        let sealer = Sealer::new(&key, &layout_of_width(n)).unwrap();
        let id = (1u64 << n).saturating_add(excess);
        prop_assert!(sealer.seal(id).is_err());
        prop_assert!(sealer.unseal(id).is_err());
    }
}

#[test]
fn the_presets_seal_within_their_width() {
    let sealer = Sealer::new(&[9; 16], &Layout::SNOWFLAKE).unwrap();
    assert_eq!(sealer.bits(), 63);
    for id in [0, 1, Layout::SNOWFLAKE.max_id()] {
        assert!(
            sealer.seal(id).unwrap() < 1 << 63,
            "a 63-bit sealed ID stays non-negative"
        );
    }
    let discord = Sealer::new(&[9; 16], &Layout::DISCORD).unwrap();
    assert_eq!(discord.bits(), 64);
    assert_eq!(discord.unseal(discord.seal(u64::MAX).unwrap()).unwrap(), u64::MAX);
}

/// Every one of the 2^21 IDs of a 21-bit layout seals to a different ID: a bitset
/// of outputs ends up full.
#[test]
fn sealing_a_21_bit_layout_is_a_permutation() {
    let layout = small_layout(9);
    assert_eq!(layout.total_bits(), 21);
    let sealer = Sealer::new(b"0123456789abcdef", &layout).unwrap().tweak(b"perm");
    let size = 1usize << 21;
    let mut seen = vec![0u64; size / 64];
    // Two threads, each sealing half the domain (a debug build seals ~1 µs per ID).
    let halves: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2u64)
            .map(|half| {
                let sealer = sealer.clone();
                scope.spawn(move || {
                    let start = half << 20;
                    (start..start + (1 << 20)).map(|id| sealer.seal(id).unwrap()).collect()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for sealed in halves.into_iter().flatten() {
        let sealed = usize::try_from(sealed).unwrap();
        assert!(sealed < size, "{sealed} out of range");
        let (word, bit) = (sealed / 64, sealed % 64);
        assert!(seen[word] & 1 << bit == 0, "{sealed} sealed twice");
        seen[word] |= 1 << bit;
    }
    assert!(seen.iter().all(|&w| w == u64::MAX), "some ID was never an output");
}
