//! The block cipher fpe's FF1 runs on: AES of the key's size, behind an `Rc`.
//!
//! * **One type for the three key sizes.** fpe's FF1 is generic over its cipher;
//!   with `Aes128Enc`, `Aes192Enc` and `Aes256Enc` as three type parameters every
//!   FF1 round, PRF and iterator was compiled three times (7.9 KB of the
//!   WebAssembly package). [`PerCall`] picks the key size at run time, per block
//!   (one predictable branch: +210 instructions, 4%, per native seal), so FF1 is
//!   compiled once.
//! * **A cheap clone.** FF1 clones its cipher for every PRF it starts: once per
//!   call and once per Feistel round, 11 times per ID. RustCrypto's `aes` types,
//!   which pick AES-NI or a software fallback at run time, are 704-960 bytes (they
//!   hold both key schedules), and those copies cost more than the AES itself
//!   (profiled: 40% of a `seal` in `memmove`). Behind an `Rc` a clone is a
//!   non-atomic count. An `Rc` is neither `Send` nor `Sync`: each `seal`/`unseal`
//!   builds its own FF1 (an AES key expansion) and drops it before returning, so
//!   nothing is shared between threads and no atomic counter is contended.
//!
//! Every block operation is the wrapped RustCrypto cipher's; this only forwards.

use aes::cipher::consts::{U16, U33};
use aes::cipher::{BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, Key, KeyInit, KeySizeUser};
use aes::{Aes128Enc, Aes192Enc, Aes256Enc};
use std::rc::Rc;

/// AES with a 16-, 24- or 32-byte key (the key schedule is wiped on drop: `aes`'s
/// `zeroize` feature). One `Rc` per size, so that each holds its own cipher's
/// bytes: an `Rc` of an enum would copy and wipe AES-256's larger schedule for
/// every key.
#[derive(Clone)]
pub(crate) enum PerCall {
    A128(Rc<Aes128Enc>),
    A192(Rc<Aes192Enc>),
    A256(Rc<Aes256Enc>),
}

/// The "key" fpe hands [`PerCall::new`]: the AES key's length (16, 24 or 32) in
/// byte 0, the key in the bytes after it, zeros after that. One fixed size for
/// the three AES keys, as `KeyInit` wants.
pub(crate) const TAGGED_KEY_LEN: usize = 33;

impl KeySizeUser for PerCall {
    type KeySize = U33;
}

impl KeyInit for PerCall {
    fn new(key: &Key<Self>) -> Self {
        let k = &key.0;
        // Each range has its cipher's exact key length: `new_from_slice` cannot fail.
        let aes = match k[0] {
            16 => Aes128Enc::new_from_slice(&k[1..17]).map(|c| PerCall::A128(Rc::new(c))),
            24 => Aes192Enc::new_from_slice(&k[1..25]).map(|c| PerCall::A192(Rc::new(c))),
            _ => Aes256Enc::new_from_slice(&k[1..33]).map(|c| PerCall::A256(Rc::new(c))),
        };
        aes.expect("key ranges of AES's own lengths")
    }
}

impl BlockSizeUser for PerCall {
    type BlockSize = U16;
}

impl BlockCipherEncrypt for PerCall {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        match self {
            PerCall::A128(c) => c.encrypt_with_backend(f),
            PerCall::A192(c) => c.encrypt_with_backend(f),
            PerCall::A256(c) => c.encrypt_with_backend(f),
        }
    }
}
