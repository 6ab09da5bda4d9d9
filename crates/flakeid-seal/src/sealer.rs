//! [`Sealer`]: FF1-AES over an ID's n bits.

use crate::handle::{self, Direction, Schedule};
use crate::numeral::Bits;
use flakeid_core::{Error, Layout, Result};
use fpe::ff1::NumeralStringError;
use std::fmt;
use std::sync::Arc;

/// The key lengths AES accepts, in bytes (AES-128, AES-192, AES-256).
pub const KEY_LENGTHS: [usize; 3] = [16, 24, 32];

/// The fewest bits a layout may have to be sealed: FF1 needs a domain of at least
/// 1,000,000 values (SP 800-38G Rev. 1), and 2^20 is the first power of two above.
pub const MIN_BITS: u32 = 20;

/// A keyed, reversible permutation of a layout's IDs: FF1 (NIST SP 800-38G) with
/// AES, radix 2, over the layout's n bits, most significant first. A sealed ID is
/// again in [0, 2^n), so it fits the same column (and stays non-negative for a
/// 63-bit layout), but it no longer shows when, where or how busily it was made.
///
/// Deterministic (one ID, key and tweak always give one sealed ID), unordered, and
/// not authenticated: any number in range unseals to some ID. See docs/sealing.md.
///
/// ```
/// use flakeid_core::Layout;
/// use flakeid_seal::Sealer;
///
/// let key = [7u8; 32]; // in real use: 32 random bytes, e.g. `openssl rand -hex 32`
/// let sealer = Sealer::new(&key, &Layout::SNOWFLAKE)?.tweak(b"orders");
/// let id = 910499571847892992;
/// let public = sealer.seal(id)?;
/// assert!(public <= Layout::SNOWFLAKE.max_id());
/// assert_eq!(sealer.unseal(public)?, id);
/// // Out of the layout's range: refused, naming `id`.
/// assert!(sealer.seal(1 << 63).is_err());
/// # Ok::<(), flakeid_core::Error>(())
/// ```
///
/// `Sealer` is `Send + Sync` (share one across threads; calls take `&self` and share
/// no mutable state) and cheap to `Clone` (the key is shared). Its `Debug` shows the
/// width, the AES key size and the tweak's length: never the key or the tweak's
/// bytes. The key is kept only as its AES key schedule, expanded once here and
/// shared by the clones; it is wiped from memory when the last clone is dropped
/// (`zeroize`), and no call keeps a copy past its return.
#[derive(Clone)]
pub struct Sealer {
    schedule: Schedule,
    tweak: Arc<[u8]>,
    bits: u32,
}

impl Sealer {
    /// A sealer for `layout`'s IDs with `key` (16, 24 or 32 bytes: AES-128, -192 or
    /// -256) and an empty tweak.
    ///
    /// Errors ([`Error::Config`]): `key` of another length; `layout` of fewer than
    /// [`MIN_BITS`] bits. Neither message contains the key.
    pub fn new(key: &[u8], layout: &Layout) -> Result<Sealer> {
        let bits = layout.total_bits();
        if bits < MIN_BITS {
            return Err(Error::Config {
                field: "layout",
                message: format!(
                    "layout must have at least {MIN_BITS} bits to be sealed (FF1 needs 2^bits >= 1,000,000 \
                     values), got {bits}"
                ),
            });
        }
        // Schedule::new takes exactly KEY_LENGTHS.
        let Some(schedule) = Schedule::new(key) else {
            return Err(Error::Config {
                field: "key",
                message: format!(
                    "key must be 16, 24 or 32 bytes (AES-128, -192 or -256), got {} bytes",
                    key.len()
                ),
            });
        };
        Ok(Sealer {
            schedule,
            tweak: Arc::from(&[][..]),
            bits,
        })
    }

    /// The same sealer with `tweak` as FF1's tweak (default: empty), so that one
    /// key seals, say, two tables' IDs differently. A tweak is not secret.
    ///
    /// Returns `Self`, not a `Result`: FF1 accepts every byte string as a tweak, so
    /// there is nothing for a caller to get wrong here. The one bound, a length that
    /// FF1's 4-byte length field can hold (under 4 GiB), is checked by
    /// [`seal`](Sealer::seal) and [`unseal`](Sealer::unseal), which return a
    /// `Result` anyway.
    #[must_use]
    pub fn tweak(mut self, tweak: impl AsRef<[u8]>) -> Sealer {
        self.tweak = Arc::from(tweak.as_ref());
        self
    }

    /// The width n of the IDs it seals (the layout's total bits).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The largest ID it takes and gives, 2^n − 1.
    pub fn max_id(&self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// Seals `id`: FF1-AES encryption of its n bits. The result is in [0, 2^n).
    ///
    /// Errors ([`Error::Config`] naming `id`): `id` ≥ 2^n.
    pub fn seal(&self, id: u64) -> Result<u64> {
        self.run(id, Direction::Encrypt)
    }

    /// Unseals `id`, the inverse of [`seal`](Sealer::seal). Every number in
    /// [0, 2^n) unseals to some ID: sealing does not authenticate.
    ///
    /// Errors ([`Error::Config`] naming `id`): `id` ≥ 2^n.
    pub fn unseal(&self, id: u64) -> Result<u64> {
        self.run(id, Direction::Decrypt)
    }

    fn run(&self, id: u64, direction: Direction) -> Result<u64> {
        if id > self.max_id() {
            return Err(Error::out_of_range("id", 0, self.max_id(), id));
        }
        if u32::try_from(self.tweak.len()).is_err() {
            return Err(tweak_too_long(self.tweak.len()));
        }
        let x = Bits::new(id, self.bits);
        handle::ff1(&self.schedule, &self.tweak, &x, direction)
            .map(|y| y.value)
            .map_err(ff1_refused)
    }
}

#[cold]
fn tweak_too_long(len: usize) -> Error {
    Error::Config {
        field: "tweak",
        message: format!("tweak must be at most {} bytes, got {len}", u32::MAX),
    }
}

/// fpe refuses only numeral strings of the wrong radix or length, which
/// `Sealer::new` and `run` rule out; reported, never a panic.
#[cold]
fn ff1_refused(e: NumeralStringError) -> Error {
    Error::Config {
        field: "layout",
        message: format!("FF1 refused the numeral string: {e}"),
    }
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("bits", &self.bits)
            .field("aes_bits", &self.schedule.aes_bits())
            .field("tweak_len", &self.tweak.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::handle::slot_is_empty;

    /// `KEY_LENGTHS` (what the hex parser and the bindings accept) and the lengths
    /// `Schedule::new` expands are one list, and the error message says it.
    #[test]
    fn key_lengths_are_the_schedules_lengths() {
        for len in 0..=64 {
            let key = vec![0x5a; len];
            let accepted = crate::handle::Schedule::new(&key).is_some();
            assert_eq!(accepted, KEY_LENGTHS.contains(&len), "{len}-byte key");
            if !accepted {
                let e = Sealer::new(&key, &Layout::SNOWFLAKE).unwrap_err().to_string();
                let listed = format!("{}, {} or {} bytes", KEY_LENGTHS[0], KEY_LENGTHS[1], KEY_LENGTHS[2]);
                assert!(e.contains(&listed), "{e}");
            }
        }
    }

    /// The key schedule lives exactly as long as the `Sealer`'s clones: calls, on
    /// any thread, keep no copy of it (not in the thread-local slot that lends it
    /// to fpe, not in the FF1 they build), and the last clone's drop frees it,
    /// which wipes it (`aes`'s `ZeroizeOnDrop`, checked below).
    #[test]
    fn the_key_schedule_dies_with_the_last_clone() {
        for len in KEY_LENGTHS {
            let sealer = Sealer::new(&vec![0x5a; len], &Layout::SNOWFLAKE).unwrap();
            let holders = sealer.schedule.watch();
            let clone = sealer.clone().tweak(b"t");
            assert_eq!(holders(), 2);
            let sealed = sealer.seal(42).unwrap();
            assert_eq!(clone.unseal(clone.seal(42).unwrap()).unwrap(), 42);
            std::thread::scope(|s| {
                s.spawn(|| {
                    assert_eq!(sealer.unseal(sealed).unwrap(), 42);
                    assert!(slot_is_empty());
                });
            });
            assert!(slot_is_empty());
            assert_eq!(holders(), 2, "a call kept the schedule");
            drop(sealer);
            assert_eq!(holders(), 1);
            drop(clone);
            assert_eq!(holders(), 0, "the schedule outlived the last Sealer");
        }
    }

    #[test]
    fn the_key_schedule_is_wiped_on_drop() {
        fn wiped_on_drop<T: zeroize::ZeroizeOnDrop>() {}
        wiped_on_drop::<aes::Aes128Enc>();
        wiped_on_drop::<aes::Aes192Enc>();
        wiped_on_drop::<aes::Aes256Enc>();
    }
}
