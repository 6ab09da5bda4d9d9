//! An ID's bits as an FF1 numeral string (radix 2), held in a `u64`.
//!
//! fpe's own radix-2 strings do not fit: `BinaryNumeralString` only holds whole
//! bytes (a 63-bit layout is not), and `FlexibleNumeralString` keeps one `u16` per
//! bit and does every round's arithmetic in `BigUint`, which costs microseconds per
//! ID. fpe lets a caller bring its own representation (the `NumeralString` and
//! `Operations` traits); this is one for strings of at most 64 numerals, where
//! `NUM₂` of a string is simply the integer its bits spell. The FF1 rounds, the PRF
//! and AES stay fpe's. The tests check that it gives exactly what
//! `FlexibleNumeralString` gives (tests/reference.rs).

use fpe::ff1::{NumeralString, Operations};

/// The numeral string X of `len` bits, X\[0\] being bit `len − 1` of `value`: so
/// `NUM₂(X) == value`. Invariant: `value < 2^len`, `len ≤ 64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bits {
    pub(crate) value: u64,
    pub(crate) len: u32,
}

const fn mask(len: u32) -> u64 {
    if len >= 64 { u64::MAX } else { (1 << len) - 1 }
}

impl Bits {
    pub(crate) fn new(value: u64, len: u32) -> Bits {
        debug_assert!(len <= 64 && value & !mask(len) == 0);
        Bits { value, len }
    }
}

impl NumeralString for Bits {
    type Ops = Bits;

    fn is_valid(&self, radix: u32) -> bool {
        radix == 2 && self.len <= 64 && self.value & !mask(self.len) == 0
    }

    fn numeral_count(&self) -> usize {
        self.len as usize
    }

    /// FF1 steps 1–2: u = ⌊n/2⌋, v = n − u; A = X[0..u] (the u high bits), B = the
    /// v low bits.
    fn split(&self) -> (Bits, Bits) {
        let u = self.len / 2;
        let v = self.len - u;
        (Bits::new(self.value >> v, u), Bits::new(self.value & mask(v), v))
    }

    /// FF1 step 7: A ‖ B.
    fn concat(a: Bits, b: Bits) -> Bits {
        // b.len ≤ 32 here (b.len = ⌈n/2⌉ ≤ 32), so the shift is in range.
        Bits::new(a.value << b.len | b.value, a.len + b.len)
    }
}

/// `STR^b₂₅₆(NUM₂(X))`: the value's low `b` bytes, big-endian (`b ≤ 8`).
#[derive(Debug)]
pub(crate) struct BeBytes {
    bytes: [u8; 8],
    start: usize,
}

impl AsRef<[u8]> for BeBytes {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[self.start..]
    }
}

/// `NUM₂₅₆(S) mod 2^64`: S's bytes, big-endian, keeping the low 64 bits, which is
/// all that a result reduced mod 2^m (m ≤ 32) depends on.
fn num_mod_2_64(s: impl Iterator<Item = u8>) -> u64 {
    s.fold(0, |acc, byte| acc << 8 | u64::from(byte))
}

impl Operations for Bits {
    type Bytes = BeBytes;

    fn numeral_count(&self) -> usize {
        self.len as usize
    }

    fn to_be_bytes(&self, radix: u32, b: usize) -> BeBytes {
        // fpe asks for b = ⌈v/8⌉ ≤ 4 bytes of a half of at most 32 bits.
        debug_assert!(radix == 2 && b <= 8 && b * 8 >= self.len as usize);
        BeBytes {
            bytes: self.value.to_be_bytes(),
            start: 8usize.saturating_sub(b),
        }
    }

    /// FF1 step 6vi, `c = (NUM₂(A) + y) mod 2^m`, with m = this half's length.
    fn add_mod_exp(self, s: impl Iterator<Item = u8>, radix: u32, m: usize) -> Bits {
        debug_assert!(radix == 2 && m == self.len as usize);
        Bits::new(self.value.wrapping_add(num_mod_2_64(s)) & mask(self.len), self.len)
    }

    /// The inverse, for decryption: `(NUM₂(B) − y) mod 2^m`.
    fn sub_mod_exp(self, s: impl Iterator<Item = u8>, radix: u32, m: usize) -> Bits {
        debug_assert!(radix == 2 && m == self.len as usize);
        Bits::new(self.value.wrapping_sub(num_mod_2_64(s)) & mask(self.len), self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_and_concat_are_inverse() {
        let x = Bits::new(0x5555_5555_5555_5555 >> 1, 63);
        let (a, b) = x.split();
        assert_eq!((a.len, b.len), (31, 32));
        assert_eq!(a.value, x.value >> 32);
        assert_eq!(b.value, x.value & 0xffff_ffff);
        assert_eq!(Bits::concat(a, b), x);
        let full = Bits::new(u64::MAX, 64);
        let (a, b) = full.split();
        assert_eq!(Bits::concat(a, b), full);
    }

    #[test]
    fn be_bytes_are_the_low_bytes() {
        let x = Bits::new(0x1_0203, 17);
        assert_eq!(x.to_be_bytes(2, 3).as_ref(), &[1, 2, 3]);
        assert_eq!(Bits::new(0, 10).to_be_bytes(2, 2).as_ref(), &[0, 0]);
    }

    #[test]
    fn modular_arithmetic_wraps_at_the_half_width() {
        let x = Bits::new(0xff, 8);
        let s = [0u8, 0, 0, 0, 0, 0, 0, 0, 1, 2];
        // NUM(S) = 0x0102 (plus bytes above 2^64 that a mod 2^8 result ignores).
        let y = x.add_mod_exp(s.iter().copied(), 2, 8);
        assert_eq!(y, Bits::new((0xff + 0x02) & 0xff, 8));
        assert_eq!(y.sub_mod_exp(s.iter().copied(), 2, 8), x);
    }
}
