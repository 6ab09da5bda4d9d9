//! The C ABI of flakeid: `libflakeid.so` / `libflakeid.a` with `include/flakeid.h`
//! (generated from this crate by cbindgen; `tests/header.rs` keeps it fresh).
//!
//! Conversion only: every rule lives in `flakeid-core`. Conventions (see
//! `bindings/c/README.md`): every call returns a `flakeid_status`, runs behind a
//! panic boundary, checks pointers for NULL, and writes out-parameters only on
//! success; handles are opaque, made by `_new` and released by `_free`.

// The exported names are C's (`flakeid_generator`, `FLAKEID_OK`).
#![allow(non_camel_case_types)]
// Every export has the same safety contract, stated once in the header's preamble
// and the README: each pointer is NULL (refused with FLAKEID_ERR_NULL where one is
// required) or valid for the access and length its documentation describes.
#![allow(clippy::missing_safety_doc)]

/// `handle!(flakeid_generator, "generator")`: a [`Handle`] whose NULL is refused
/// naming `generator`, and whose `_new` writes `out_generator`.
macro_rules! handle {
    ($ty:ty, $arg:literal) => {
        impl $crate::Handle for $ty {
            const ARG: &'static str = $arg;
            const OUT: &'static str = concat!("out_", $arg);
        }
    };
}

mod error;
mod generator;
mod layout;
mod local;
#[cfg(feature = "seal")]
mod sealer;
mod stats;
#[cfg(feature = "uuid7")]
mod uuid;

pub use error::*;
pub use generator::*;
pub use layout::*;
pub use local::*;
#[cfg(feature = "seal")]
pub use sealer::*;
pub use stats::*;
#[cfg(feature = "uuid7")]
pub use uuid::*;

use error::Fail;
use flakeid_core::Error;
use std::borrow::Cow;
use std::ffi::{CStr, c_char};
use std::ptr::NonNull;

/// An input pointer as a reference, or `FLAKEID_ERR_NULL` naming the argument.
///
/// # Safety
/// `p` is NULL or valid for reads of `T` for the duration of the call.
unsafe fn arg<'a, T>(p: *const T, name: &'static str) -> Result<&'a T, Fail> {
    unsafe { p.as_ref() }.ok_or(Fail::Null(name))
}

/// An out-parameter, checked for NULL before any work is done.
fn out<T>(p: *mut T, name: &'static str) -> Result<NonNull<T>, Fail> {
    NonNull::new(p).ok_or(Fail::Null(name))
}

/// Writes an out-parameter (the caller promises it is valid for writes).
#[inline(always)]
fn write<T>(dst: NonNull<T>, value: T) {
    // SAFETY: C callers pass out-parameters valid for writes of `T` (documented ABI).
    unsafe { dst.as_ptr().write(value) }
}

/// Writes `value`, which cannot fail, to the out-parameter `p` (NULL: refused
/// naming `name`).
fn put<T>(p: *mut T, name: &'static str, value: T) -> Result<(), Fail> {
    write(out(p, name)?, value);
    Ok(())
}

/// The C strings of `names`, made once into `cell`: what the name lists and
/// lookups hand out as static strings.
fn c_strings<'a>(
    cell: &'static std::sync::OnceLock<Vec<std::ffi::CString>>,
    names: impl Iterator<Item = &'a str>,
) -> &'static [std::ffi::CString] {
    cell.get_or_init(|| names.filter_map(|n| std::ffi::CString::new(n).ok()).collect())
}

/// The `index`th of `names` as a C string; NULL past the last.
fn c_string_at(names: &'static [std::ffi::CString], index: usize) -> *const c_char {
    names.get(index).map_or(std::ptr::null(), |n| n.as_ptr())
}

/// Writes what `value` computes to the out-parameter `p`, which is checked for
/// NULL (refused naming `name`) before `value` runs.
fn put_with<T, E>(p: *mut T, name: &'static str, value: impl FnOnce() -> Result<T, E>) -> Result<(), Fail>
where
    Fail: From<E>,
{
    let dst = out(p, name)?;
    write(dst, value()?);
    Ok(())
}

/// Fills the caller's `ids[0..n]` with `fill`; on failure zeroes it, so that it
/// holds no ID. `ids` may be NULL when `n` is 0.
fn fill_ids(ids: *mut u64, n: usize, fill: impl FnOnce(&mut [u64]) -> flakeid_core::Result<()>) -> Result<(), Fail> {
    if n == 0 {
        return Ok(());
    }
    let dst = out(ids, "ids")?;
    // SAFETY: the caller promises `ids` holds `n` writable `uint64_t`s.
    let slice = unsafe { std::slice::from_raw_parts_mut(dst.as_ptr(), n) };
    fill(slice).inspect_err(|_| slice.fill(0))?;
    Ok(())
}

/// A handle type of the C API: a Rust value C holds by pointer, boxed by its `_new`
/// and dropped by its `_free` (rustls-ffi's `Castable` with box ownership; here
/// the pointer's type is the value's, so the cast is the identity). Each handle
/// states once the names its exports refuse a NULL with, and every export reads it
/// through [`handle`] or [`with_handle`].
trait Handle: Sized {
    /// The parameter a NULL handle is refused with (`FLAKEID_ERR_NULL`).
    const ARG: &'static str;
    /// Its `_new` call's out-parameter.
    const OUT: &'static str;
}

/// The handle behind `p`, or `FLAKEID_ERR_NULL` naming [`Handle::ARG`].
///
/// # Safety
/// `p` is NULL or a live handle of this type for the duration of `'a`.
unsafe fn handle<'a, H: Handle>(p: *const H) -> Result<&'a H, Fail> {
    unsafe { arg(p, H::ARG) }
}

/// The one body of an export on a handle: the handle read (NULL refused, before
/// any out-parameter is checked), then `body`, behind the panic boundary.
#[inline(always)]
fn with_handle<H: Handle>(p: *const H, body: impl FnOnce(&H) -> Result<(), Fail>) -> error::flakeid_status {
    // SAFETY: C callers pass a handle that is NULL or live (documented ABI), as for `write`.
    error::guard(|| body(unsafe { handle(p) }?))
}

/// The one body of every `_new`: the out-parameter checked for NULL before any
/// work, then the handle `make` builds, boxed and written to it (each handle's
/// `_free` is [`free_handle`]).
fn new_handle<H: Handle>(out_handle: *mut *mut H, make: impl FnOnce() -> Result<H, Fail>) -> error::flakeid_status {
    error::guard(|| {
        let dst = out(out_handle, H::OUT)?;
        write(dst, Box::into_raw(Box::new(make()?)));
        Ok(())
    })
}

/// A handle that stops issuing on `close()` and frees nothing (the generators).
trait Close: Handle {
    fn close(&self);
}

/// The one body of every `_close`: stops the handle (idempotent), frees nothing.
fn close_handle<H: Close>(p: *const H) -> error::flakeid_status {
    with_handle(p, |h| {
        h.close();
        Ok(())
    })
}

/// Frees a handle that a `_new` call made with `Box::into_raw`; NULL is a no-op.
///
/// # Safety
/// `p` is NULL or a handle of this type that no other thread is still using.
unsafe fn free_handle<H: Handle>(p: *mut H) {
    let _ = error::guard(|| {
        if !p.is_null() {
            drop(unsafe { Box::from_raw(p) });
        }
        Ok(())
    });
}

/// The bytes behind a (pointer, length) pair; NULL is allowed for length 0.
///
/// # Safety
/// `p` is NULL or valid for reads of `len` bytes for the duration of the call.
#[cfg(any(feature = "seal", feature = "uuid7"))]
unsafe fn bytes_in<'a>(p: *const u8, len: usize, name: &'static str) -> Result<&'a [u8], Fail> {
    if len == 0 {
        return Ok(&[]);
    }
    let first = unsafe { arg(p, name) }?;
    // SAFETY: the caller promises `len` readable bytes at `p`.
    Ok(unsafe { std::slice::from_raw_parts(first, len) })
}

/// A NUL-terminated string argument, or `None` for NULL.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for the duration of the call.
unsafe fn text<'a>(p: *const c_char) -> Option<Cow<'a, str>> {
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy())
}

/// The core's word for the value `n` of a C enum whose constants are `PREFIX_WORD`
/// numbered in `words`' order (`FLAKEID_OVERFLOW_WAIT` is 0, "wait"), or a
/// config error naming `field` and listing the constants.
fn c_enum(field: &'static str, prefix: &str, words: &[&'static str], n: u32) -> Result<&'static str, Error> {
    words.get(n as usize).copied().ok_or_else(|| {
        let name = |(i, w): (usize, &&str)| format!("{prefix}_{} ({i})", w.to_ascii_uppercase().replace('|', "_"));
        let names: Vec<String> = words.iter().enumerate().map(name).collect();
        let message = format!("{field} must be {}, got {n}", names.join(" or "));
        Error::Config { field, message }
    })
}

/// The library's version (`"0.1.0"`), a static string.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}
