//! What the integration tests (and the bench) share: the construction read
//! literally, through fpe's own `FlexibleNumeralString`, and small custom layouts.
//!
//! `seal_reference` is deliberately not `Sealer`: it builds the numeral string one
//! bit per numeral (X\[0\] = bit n − 1) and lets fpe do all the arithmetic, so the
//! vectors (generated from it) and the property tests check `Sealer`'s `u64`
//! representation against fpe's general one.

#![allow(dead_code, clippy::unwrap_used)]

use aes::{Aes128, Aes192, Aes256};
use flakeid_core::Layout;
use fpe::ff1::{FF1, FlexibleNumeralString};

/// FF1 through fpe's general numeral string: any radix, any key size.
pub fn ff1_flexible(key: &[u8], radix: u32, tweak: &[u8], numerals: &[u16], decrypt: bool) -> Vec<u16> {
    let x = FlexibleNumeralString::from(numerals.to_vec());
    macro_rules! run {
        ($aes:ty) => {{
            let ff = FF1::<$aes>::new(key, radix).unwrap();
            if decrypt {
                ff.decrypt(tweak, &x)
            } else {
                ff.encrypt(tweak, &x)
            }
        }};
    }
    let y = match key.len() {
        16 => run!(Aes128),
        24 => run!(Aes192),
        32 => run!(Aes256),
        n => panic!("no AES key of {n} bytes"),
    };
    Vec::from(y.unwrap())
}

/// `STR₂ⁿ(id)`: the id's n bits, most significant first.
pub fn bits_of(id: u64, n: u32) -> Vec<u16> {
    (0..n).rev().map(|i| (id >> i & 1) as u16).collect()
}

/// `NUM₂(X)`.
pub fn value_of(bits: &[u16]) -> u64 {
    bits.iter().fold(0, |acc, &b| acc << 1 | u64::from(b))
}

pub fn seal_reference(key: &[u8], tweak: &[u8], n: u32, id: u64) -> u64 {
    value_of(&ff1_flexible(key, 2, tweak, &bits_of(id, n), false))
}

pub fn unseal_reference(key: &[u8], tweak: &[u8], n: u32, id: u64) -> u64 {
    value_of(&ff1_flexible(key, 2, tweak, &bits_of(id, n), true))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex {text}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// A small custom layout of `time_bits` + 4 node + 8 sequence bits (the vectors'
/// 20- and 21-bit layouts, and the permutation test's).
pub fn small_layout(time_bits: u32) -> Layout {
    Layout::builder()
        .time_bits(time_bits)
        .node_bits(4)
        .sequence_bits(8)
        .build()
        .unwrap()
}
