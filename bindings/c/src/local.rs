//! The per-thread handle (`Generator::local`, docs/design.md "The per-thread
//! handle"): `flakeid_local_*`. Conversion only.

use crate::error::{Fail, guard};
use crate::{Handle, fill_ids, flakeid_generator, flakeid_status, new_handle, put_with};
use flakeid_core::LocalGenerator;
use std::ptr::NonNull;

/// A per-thread handle on a generator (`flakeid_local_new`): it issues the
/// generator's IDs from runs of slots it reserves, with no atomic operation per
/// ID, under every rule of the generator (the fork, close and lease checks on
/// every call, the borrow bound, `clock_backwards`, `flakeid_stats`). No ID
/// repeats one of the generator's or of another handle's; each handle's IDs
/// strictly increase.
///
/// **Not** thread-safe, unlike the other handles: one thread at a time uses it
/// (it may move between threads). Free it (`flakeid_local_free`) before its
/// generator.
#[derive(Debug)]
pub struct flakeid_local {
    /// Borrows the generator behind the caller's `flakeid_generator` pointer: the
    /// caller frees this handle first (the documented contract).
    inner: LocalGenerator<'static>,
}

handle!(flakeid_local, "local");

/// A per-thread handle on `generator`, written to `*out_local`. The generator must
/// outlive it: free every handle (`flakeid_local_free`) before the generator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_local_new(
    generator: *const flakeid_generator,
    out_local: *mut *mut flakeid_local,
) -> flakeid_status {
    new_handle(out_local, || {
        let g: &'static flakeid_generator = unsafe { crate::handle(generator) }?;
        Ok(flakeid_local { inner: g.inner.local() })
    })
}

/// Frees a handle (its unused slots stop counting in `flakeid_stats`). NULL is a
/// no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_local_free(local: *mut flakeid_local) {
    unsafe { crate::free_handle(local) }
}

/// The handle as `&mut`, or `FLAKEID_ERR_NULL`.
///
/// # Safety
/// `p` is NULL or a live handle that no other thread is using.
unsafe fn handle<'a>(p: *mut flakeid_local) -> Result<&'a mut flakeid_local, Fail> {
    NonNull::new(p)
        .map(|mut p| unsafe { p.as_mut() })
        .ok_or(Fail::Null(flakeid_local::ARG))
}

/// The next ID, as `flakeid_next_id` gives it (the same failures, and
/// `FLAKEID_ERR_FORK` in a child process after `fork()`); `*out_id` is written only
/// on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_local_next_id(local: *mut flakeid_local, out_id: *mut u64) -> flakeid_status {
    guard(|| {
        let h = unsafe { handle(local) }?;
        put_with(out_id, "out_id", || h.inner.next_id())
    })
}

/// Fills `ids[0..n]` with fresh IDs, increasing and above every ID the handle
/// issued before. `ids` may be NULL when `n` is 0. On failure the array is
/// zeroed: it holds no ID.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_local_next_ids(local: *mut flakeid_local, ids: *mut u64, n: usize) -> flakeid_status {
    guard(|| {
        let h = unsafe { handle(local) }?;
        fill_ids(ids, n, |slice| h.inner.fill(slice))
    })
}
