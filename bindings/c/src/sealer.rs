//! Sealed IDs (docs/sealing.md): an opaque `flakeid_sealer` over `flakeid_seal::Sealer`.

use crate::error::flakeid_status;
use crate::layout::{flakeid_layout, layout_in};
use crate::{arg, bytes_in, free_handle, new_handle, put_with, with_handle};
use flakeid_seal::Sealer;

/// Seals and unseals one layout's IDs with one key and tweak: FF1 (NIST SP
/// 800-38G) with AES. Thread-safe and immutable: share one between threads. The key
/// is wiped from memory by `flakeid_sealer_free()`.
#[derive(Debug)]
pub struct flakeid_sealer {
    inner: Sealer,
}

handle!(flakeid_sealer, "sealer");

/// Creates a sealer for `layout`'s IDs from `key_len` bytes of `key` (16, 24 or 32:
/// AES-128, -192 or -256) and an optional tweak (`tweak` may be NULL when
/// `tweak_len` is 0). flakeid keeps its own copy of the key: the caller may wipe
/// `key` once this returns. A key of another length, or a layout of fewer than 20
/// bits, is `FLAKEID_ERR_CONFIG` naming `key` or `layout` (the message never holds
/// the key). On success `*out_sealer` owns the sealer (free it with
/// `flakeid_sealer_free()`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_sealer_new(
    key: *const u8,
    key_len: usize,
    layout: *const flakeid_layout,
    tweak: *const u8,
    tweak_len: usize,
    out_sealer: *mut *mut flakeid_sealer,
) -> flakeid_status {
    new_handle(out_sealer, || {
        let key = unsafe { bytes_in(key, key_len, "key") }?;
        let layout = layout_in(unsafe { arg(layout, "layout") }?)?;
        let tweak = unsafe { bytes_in(tweak, tweak_len, "tweak") }?;
        Ok(flakeid_sealer {
            inner: Sealer::new(key, &layout)?.tweak(tweak),
        })
    })
}

/// Seals `id` into `*out_id`, which is in `[0, 2^total_bits)` like `id`. An `id`
/// outside that range is `FLAKEID_ERR_CONFIG` naming `id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_sealer_seal(
    sealer: *const flakeid_sealer,
    id: u64,
    out_id: *mut u64,
) -> flakeid_status {
    permute(sealer, id, out_id, Sealer::seal)
}

/// Unseals `id` (the inverse of `flakeid_sealer_seal()`) into `*out_id`. Every
/// number in range unseals to some ID: sealing does not authenticate. An `id`
/// outside `[0, 2^total_bits)` is `FLAKEID_ERR_CONFIG` naming `id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_sealer_unseal(
    sealer: *const flakeid_sealer,
    id: u64,
    out_id: *mut u64,
) -> flakeid_status {
    permute(sealer, id, out_id, Sealer::unseal)
}

/// Seals or unseals (`f`) `id` into `*out_id`, the out-parameter checked first.
fn permute(
    sealer: *const flakeid_sealer,
    id: u64,
    out_id: *mut u64,
    f: fn(&Sealer, u64) -> flakeid_core::Result<u64>,
) -> flakeid_status {
    with_handle(sealer, |s| put_with(out_id, "out_id", || f(&s.inner, id)))
}

/// Frees a sealer and wipes its key. NULL is a no-op. No other thread may still be
/// using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_sealer_free(sealer: *mut flakeid_sealer) {
    unsafe { free_handle(sealer) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{flakeid_last_error_field, flakeid_last_error_message, flakeid_status::*};
    use crate::layout::layout_out;
    use flakeid_core::Layout;
    use std::ffi::CStr;

    fn text(p: *const std::ffi::c_char) -> String {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    #[test]
    fn seals_round_trips_and_refuses_without_the_key() {
        let layout = layout_out(&Layout::SNOWFLAKE);
        let key = [0xA7u8; 16];
        let mut s = std::ptr::null_mut();
        let st = unsafe { flakeid_sealer_new(key.as_ptr(), 16, &layout, std::ptr::null(), 0, &mut s) };
        assert_eq!(st, FLAKEID_OK);
        let (mut sealed, mut back) = (0, 0);
        assert_eq!(unsafe { flakeid_sealer_seal(s, 42, &mut sealed) }, FLAKEID_OK);
        assert_eq!(unsafe { flakeid_sealer_unseal(s, sealed, &mut back) }, FLAKEID_OK);
        assert_eq!(back, 42);
        let mut untouched = 7;
        assert_eq!(
            unsafe { flakeid_sealer_seal(s, 1 << 63, &mut untouched) },
            FLAKEID_ERR_CONFIG
        );
        assert_eq!(untouched, 7);
        assert_eq!(text(flakeid_last_error_field()), "id");
        unsafe { flakeid_sealer_free(s) };

        let mut s2 = std::ptr::null_mut();
        let st = unsafe { flakeid_sealer_new(key.as_ptr(), 15, &layout, std::ptr::null(), 0, &mut s2) };
        assert_eq!(st, FLAKEID_ERR_CONFIG);
        assert!(s2.is_null());
        assert_eq!(text(flakeid_last_error_field()), "key");
        let message = text(flakeid_last_error_message());
        assert!(!message.contains("a7") && !message.contains("A7"), "{message}");
        let st = unsafe { flakeid_sealer_new(std::ptr::null(), 16, &layout, std::ptr::null(), 0, &mut s2) };
        assert_eq!(st, FLAKEID_ERR_NULL);
        let st = unsafe { flakeid_sealer_new(key.as_ptr(), 16, &layout, std::ptr::null(), 3, &mut s2) };
        assert_eq!(st, FLAKEID_ERR_NULL);
        assert!(s2.is_null());
        unsafe { flakeid_sealer_free(std::ptr::null_mut()) };
    }
}
