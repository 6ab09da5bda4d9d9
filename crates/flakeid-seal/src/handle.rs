//! A block-cipher handle that fpe can clone cheaply.
//!
//! fpe's FF1 clones its block cipher for every PRF it starts: once per call and once
//! per Feistel round, 11 times per ID. RustCrypto's `aes` types, which pick AES-NI
//! or a software fallback at run time, are 704-960 bytes (they hold both key
//! schedules), and those copies cost more than the AES itself (profiled: 40% of a
//! `seal` in `memmove`). `PerCall<C>` is the same cipher behind an `Rc`, so a clone
//! is a non-atomic count. An `Rc` is neither `Send` nor `Sync`: each `seal`/`unseal`
//! builds its own FF1 (an AES key expansion) and drops it before returning, so
//! nothing is shared between threads and no atomic counter is contended.
//!
//! Every block operation is the wrapped RustCrypto cipher's; this only forwards.

use aes::cipher::{BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, Key, KeyInit, KeySizeUser};
use std::rc::Rc;

pub(crate) struct PerCall<C>(Rc<C>);

impl<C> Clone for PerCall<C> {
    fn clone(&self) -> Self {
        PerCall(Rc::clone(&self.0))
    }
}

impl<C: KeySizeUser> KeySizeUser for PerCall<C> {
    type KeySize = C::KeySize;
}

impl<C: KeyInit> KeyInit for PerCall<C> {
    fn new(key: &Key<Self>) -> Self {
        PerCall(Rc::new(C::new(key)))
    }
}

impl<C: BlockSizeUser> BlockSizeUser for PerCall<C> {
    type BlockSize = C::BlockSize;
}

impl<C: BlockCipherEncrypt> BlockCipherEncrypt for PerCall<C> {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = Self::BlockSize>) {
        self.0.encrypt_with_backend(f);
    }
}
