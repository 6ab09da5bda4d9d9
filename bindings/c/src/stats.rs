//! `flakeid_generator_stats`: the core's `Stats`, converted.

use crate::error::{Fail, flakeid_status};
use crate::generator::{FLAKEID_UNSET, flakeid_generator};
use crate::{out, with_handle};
use flakeid_core::Error;
use std::ffi::{CStr, c_char};
use std::ptr::NonNull;

/// What a generator has done since it was built (`flakeid_generator_stats()`).
/// Like `flakeid_options` it grows only by appending fields, and `struct_size`
/// says how much of it a call wrote: the library writes
/// min(the size you pass, its own) bytes and sets `struct_size` to that.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakeid_stats {
    /// Bytes of this struct the library wrote. Always the first field.
    pub struct_size: usize,
    /// IDs handed out. A borrowing generator shared by contending threads counts
    /// the unused rest of each thread's run of slots (up to 127) as issued until
    /// the thread uses or drops it.
    pub ids_issued: u64,
    /// Ticks waited out because the tick's sequence (or the borrow window) was
    /// used up.
    pub tick_waits: u64,
    /// Total time spent in those waits, µs.
    pub tick_wait_us: u64,
    /// How far the last ID issued is ahead of the clock, ms (a borrowing generator's
    /// lead, or a clock that went back).
    pub lead_ms: u64,
    /// Calls that found the clock behind IDs already issued.
    pub clock_rollbacks: u64,
    /// The largest of those rollbacks, ms.
    pub max_rollback_ms: u64,
    /// `"held"`, `"unreachable"`, `"lost"` or `"released"` (a static string), or
    /// NULL without a lease.
    pub lease_state: *const c_char,
    /// Milliseconds until the lease's window closes unless renewed (0 once it has),
    /// or `FLAKEID_UNSET` without a lease.
    pub lease_remaining_ms: u64,
}

/// The caller's stats struct `p` (NULL: refused naming `out_stats`) of
/// `struct_size` bytes, and the size of ours, `T` (its C name `c_type`). Every
/// field so far is in the first version: a smaller struct is not one.
pub(crate) fn stats_out<T>(p: *mut T, struct_size: usize, c_type: &str) -> Result<(NonNull<T>, usize), Fail> {
    let dst = out(p, "out_stats")?;
    let ours = std::mem::size_of::<T>();
    if struct_size < ours {
        return Err(Fail::from(Error::out_of_range(
            "struct_size",
            ours as u64,
            usize::MAX as u64,
            format!("{struct_size} (pass sizeof({c_type}))"),
        )));
    }
    Ok((dst, ours))
}

/// Writes a snapshot of `generator`'s statistics into `out_stats`, of which the
/// caller's struct holds `struct_size` bytes: pass `sizeof *out_stats`. Sizes
/// below the first `flakeid_stats` are `FLAKEID_ERR_CONFIG` naming `struct_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_stats(
    generator: *const flakeid_generator,
    out_stats: *mut flakeid_stats,
    struct_size: usize,
) -> flakeid_status {
    with_handle(generator, |g| {
        let (dst, ours) = stats_out(out_stats, struct_size, "flakeid_stats")?;
        let s = g.inner.stats();
        let stats = flakeid_stats {
            struct_size: ours,
            ids_issued: s.ids_issued,
            tick_waits: s.tick_waits,
            tick_wait_us: s.tick_wait_us,
            lead_ms: s.lead_ms,
            clock_rollbacks: s.clock_rollbacks,
            max_rollback_ms: s.max_rollback_ms,
            lease_state: s.lease_state.map_or(std::ptr::null(), |name| c_name(name).as_ptr()),
            lease_remaining_ms: s.lease_remaining_ms.unwrap_or(FLAKEID_UNSET),
        };
        // SAFETY: the caller's struct holds `struct_size >= ours` writable bytes.
        unsafe { dst.as_ptr().write(stats) };
        Ok(())
    })
}

/// The core's lease-state name as a static C string (`LeaseState::as_str`).
fn c_name(name: &str) -> &'static CStr {
    const NAMES: [&CStr; 4] = [c"held", c"unreachable", c"lost", c"released"];
    NAMES
        .iter()
        .find(|c| c.to_bytes() == name.as_bytes())
        .copied()
        .unwrap_or(c"unknown")
}

#[cfg(test)]
mod tests {
    use super::c_name;
    use flakeid_core::LeaseState;

    #[test]
    fn every_lease_state_has_its_c_name() {
        let states = [
            LeaseState::Held,
            LeaseState::Unreachable { error: String::new() },
            LeaseState::Lost,
            LeaseState::Released,
        ];
        for s in states {
            assert_eq!(c_name(s.as_str()).to_str(), Ok(s.as_str()));
        }
    }
}
