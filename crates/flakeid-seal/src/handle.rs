//! The block cipher fpe's FF1 runs on: RustCrypto's AES, its key schedule expanded
//! once per [`Sealer`](crate::Sealer) and lent to each call.
//!
//! * **One key schedule per `Sealer`.** [`Schedule`] holds the AES cipher of the
//!   key's size behind an `Arc`, shared by the `Sealer`'s clones; `aes`'s `zeroize`
//!   feature wipes it when the last clone drops. No copy outlives that: a call
//!   holds one `Arc` clone only while it runs ([`ff1`]). (One limit, as before:
//!   `aes` builds the schedule by value and `Arc::new` moves it to the heap, and
//!   safe Rust cannot wipe the stack bytes it was moved from; now that happens
//!   once per `Sealer` instead of once per call.)
//! * **A cheap clone.** fpe's FF1 clones its cipher for every PRF it starts: once
//!   per call and once per Feistel round, 11 times per ID. RustCrypto's `aes`
//!   types, which pick AES-NI or a software fallback at run time, are 704-960
//!   bytes, and copying them cost more than the AES itself (profiled: 40% of a
//!   `seal` in `memmove`); 11 clones of an `Arc` would be 11 atomic updates of a
//!   counter that every thread sealing with this key shares. So each call wraps
//!   its one `Arc` clone in an [`Rc`] ([`Handle`]), whose clone is a non-atomic
//!   count: an `Rc` is neither `Send` nor `Sync`, so each call builds its own FF1
//!   and drops it before returning.
//! * **Lending without `unsafe`.** fpe builds its cipher itself, from key bytes
//!   (`KeyInit`), and offers no constructor taking a cipher. [`ff1`] puts the
//!   call's `Arc` clone in a thread-local slot, FF1's `KeyInit::new` for
//!   [`Handle`] takes it straight out again, and a guard empties the slot whatever
//!   happens, so the slot never keeps a schedule alive past the call.
//! * **One FF1 per key size, natively.** Each AES key size is its own FF1 type
//!   (no per-block choice of cipher). On `wasm32` one FF1 serves the three sizes,
//!   choosing the cipher per block: three FF1s cost 7.9 KB of the WebAssembly
//!   package, whose size has a budget (bindings/wasm).
//!
//! Every block operation is the wrapped RustCrypto cipher's; this only forwards.

use crate::numeral::Bits;
use aes::cipher::consts::{U0, U16};
use aes::cipher::{BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, Key, KeyInit, KeySizeUser};
use aes::{Aes128Enc, Aes192Enc, Aes256Enc};
use fpe::ff1::{FF1, NumeralStringError};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// The AES key schedule of a `Sealer`'s key, one variant per key size.
#[derive(Clone)]
pub(crate) enum Schedule {
    A128(Arc<Aes128Enc>),
    A192(Arc<Aes192Enc>),
    A256(Arc<Aes256Enc>),
}

impl Schedule {
    /// The schedule of a 16-, 24- or 32-byte key; `None` for another length.
    pub(crate) fn new(key: &[u8]) -> Option<Schedule> {
        match key.len() {
            16 => Aes128Enc::new_from_slice(key).ok().map(|c| Schedule::A128(Arc::new(c))),
            24 => Aes192Enc::new_from_slice(key).ok().map(|c| Schedule::A192(Arc::new(c))),
            32 => Aes256Enc::new_from_slice(key).ok().map(|c| Schedule::A256(Arc::new(c))),
            _ => None,
        }
    }

    /// 128, 192 or 256.
    pub(crate) fn aes_bits(&self) -> usize {
        match self {
            Schedule::A128(_) => 128,
            Schedule::A192(_) => 192,
            Schedule::A256(_) => 256,
        }
    }

    /// A watch on this schedule: how many `Arc`s (the `Sealer`'s clones and
    /// running calls) still hold it, without holding it.
    #[cfg(test)]
    pub(crate) fn watch(&self) -> Box<dyn Fn() -> usize> {
        use std::sync::Weak;
        fn watch<T: 'static>(c: &Arc<T>) -> Box<dyn Fn() -> usize> {
            let weak = Arc::downgrade(c);
            Box::new(move || Weak::strong_count(&weak))
        }
        match self {
            Schedule::A128(c) => watch(c),
            Schedule::A192(c) => watch(c),
            Schedule::A256(c) => watch(c),
        }
    }
}

/// The direction of one FF1 call.
#[derive(Clone, Copy)]
pub(crate) enum Direction {
    Encrypt,
    Decrypt,
}

/// One FF1 call (radix 2) with `schedule`'s AES.
pub(crate) fn ff1(
    schedule: &Schedule,
    tweak: &[u8],
    x: &Bits,
    direction: Direction,
) -> Result<Bits, NumeralStringError> {
    #[cfg(not(target_arch = "wasm32"))]
    match schedule {
        Schedule::A128(_) => ff1_with::<Arc<Aes128Enc>>(schedule, tweak, x, direction),
        Schedule::A192(_) => ff1_with::<Arc<Aes192Enc>>(schedule, tweak, x, direction),
        Schedule::A256(_) => ff1_with::<Arc<Aes256Enc>>(schedule, tweak, x, direction),
    }
    #[cfg(target_arch = "wasm32")]
    ff1_with::<Schedule>(schedule, tweak, x, direction)
}

fn ff1_with<C: Lent>(
    schedule: &Schedule,
    tweak: &[u8],
    x: &Bits,
    direction: Direction,
) -> Result<Bits, NumeralStringError> {
    let ff = {
        LENT.set(Some(schedule.clone()));
        let _empty = EmptyOnDrop;
        // `KeyInit::new` takes the schedule from `LENT`: fpe's "key" is 0 bytes, so
        // its key-length check cannot fail, and radix 2 is always valid.
        FF1::<Handle<C>>::new(&[], 2).map_err(|_| NumeralStringError::InvalidForRadix(2))?
    };
    match direction {
        Direction::Encrypt => ff.encrypt(tweak, x),
        Direction::Decrypt => ff.decrypt(tweak, x),
    }
}

thread_local! {
    /// The schedule lent to the FF1 being built on this thread, between `ff1_with`
    /// filling it and `Handle`'s `KeyInit::new` taking it (or the guard emptying it).
    static LENT: Cell<Option<Schedule>> = const { Cell::new(None) };
}

/// Empties `LENT` when dropped, so that no schedule stays there past a call.
struct EmptyOnDrop;

impl Drop for EmptyOnDrop {
    fn drop(&mut self) {
        LENT.take();
    }
}

/// Whether this thread's slot holds a schedule (it never should between calls).
#[cfg(test)]
pub(crate) fn slot_is_empty() -> bool {
    let lent = LENT.take();
    let empty = lent.is_none();
    LENT.set(lent);
    empty
}

/// A cipher one call's FF1 runs on: the AES of one key size (`Arc<Aes128Enc>`, ...)
/// or, on wasm32, the [`Schedule`] choosing it per block.
pub(crate) trait Lent: Sized {
    /// The cipher, if `schedule` is of this type's key size.
    fn from_schedule(schedule: Schedule) -> Option<Self>;
    /// Runs `f` on the cipher's block backend.
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>);
}

macro_rules! lent_aes {
    ($aes:ty, $variant:ident) => {
        impl Lent for Arc<$aes> {
            #[inline]
            fn from_schedule(schedule: Schedule) -> Option<Self> {
                match schedule {
                    Schedule::$variant(c) => Some(c),
                    _ => None,
                }
            }

            #[inline]
            fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
                (**self).encrypt_with_backend(f)
            }
        }
    };
}

lent_aes!(Aes128Enc, A128);
lent_aes!(Aes192Enc, A192);
lent_aes!(Aes256Enc, A256);

#[cfg(target_arch = "wasm32")]
impl Lent for Schedule {
    #[inline]
    fn from_schedule(schedule: Schedule) -> Option<Self> {
        Some(schedule)
    }

    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        match self {
            Schedule::A128(c) => c.encrypt_with_backend(f),
            Schedule::A192(c) => c.encrypt_with_backend(f),
            Schedule::A256(c) => c.encrypt_with_backend(f),
        }
    }
}

/// What fpe's FF1 holds as its cipher: the lent `Arc` behind an `Rc`, so that its
/// 11 clones per call are non-atomic.
pub(crate) struct Handle<C>(Rc<C>);

impl<C> Clone for Handle<C> {
    #[inline]
    fn clone(&self) -> Self {
        Handle(Rc::clone(&self.0))
    }
}

impl<C> KeySizeUser for Handle<C> {
    type KeySize = U0;
}

impl<C: Lent> KeyInit for Handle<C> {
    /// Takes the schedule `ff1_with` lent: FF1 is only ever built there, with the
    /// slot just filled with a schedule of `C`'s key size.
    fn new(_: &Key<Self>) -> Self {
        let lent = LENT.take().and_then(C::from_schedule);
        Handle(Rc::new(lent.expect("ff1_with lends a schedule of this key size")))
    }
}

impl<C> BlockSizeUser for Handle<C> {
    type BlockSize = U16;
}

impl<C: Lent> BlockCipherEncrypt for Handle<C> {
    #[inline]
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        self.0.encrypt_with_backend(f)
    }
}
