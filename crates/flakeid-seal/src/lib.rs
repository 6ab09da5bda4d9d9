//! # flakeid-seal
//!
//! Sealed IDs: a keyed, reversible permutation of a layout's IDs, so that public
//! IDs stop telling when, on which node and how busily they were made.
//!
//! The construction, exactly (docs/sealing.md has the why):
//! **FF1 (NIST SP 800-38G) with AES** (16-, 24- or 32-byte keys), **radix 2**,
//! **n = the layout's total bits**; the numeral string is the ID's n bits, most
//! significant first (X\[0\] = bit n − 1), and the sealed ID is the output read back
//! the same way. In the standard's notation,
//! `sealed = NUM₂(FF1.Encrypt(K, T, STR₂ⁿ(id)))`, T being the tweak (default empty).
//! Layouts of fewer than [`MIN_BITS`] bits are refused.
//!
//! FF1 and AES are the maintained `fpe` and RustCrypto `aes` crates; this crate
//! only chooses their parameters and carries the ID's bits (`numeral.rs`).
//!
//! ```
//! use flakeid_core::{Generator, Layout};
//! use flakeid_seal::Sealer;
//!
//! let key = [0x42u8; 16];
//! let sealer = Sealer::new(&key, &Layout::SNOWFLAKE)?;
//! let generator = Generator::builder(Layout::SNOWFLAKE).node(1).build()?;
//! let id = generator.next_id()?;
//! let public = sealer.seal(id)?; // what the outside world sees
//! assert_eq!(sealer.unseal(public)?, id);
//! # Ok::<(), flakeid_core::Error>(())
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod handle;
mod hex_key;
mod numeral;
mod sealer;

pub use sealer::{KEY_LENGTHS, MIN_BITS, Sealer};

/// docs/sealing.md's Rust example, compiled by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/sealing.md")]
pub struct SealingDocDoctests;
