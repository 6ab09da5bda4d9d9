//! `flakeid_resume_after(id)`: the server's IDs continue above an ID it did not
//! issue itself — rows restored with pg_restore, copied logically, or written by
//! another server given the same node id by mistake. The start-up check covers
//! physical copies (the WAL-logged mark travels with them); a logical copy carries
//! rows, not the mark, so the operator points the server at the largest one:
//! `SELECT flakeid_resume_after(max(id)) FROM t` (docs/postgres.md, "Copies,
//! restores and upgrades").
//!
//! The engine moves the floor: a generator built over the server's counter with
//! `resume_after_ms` at the ID's time only ever moves the shared word forward
//! (`build_shared`), so every backend's next ID is in a later tick. The durable mark
//! is moved there too, so a restart before the next ID resumes above it as well.
//!
//! **Writers go on.** Until the clock reaches the ID (less what the server may
//! borrow), every backend's next ID is ahead of what its clock allows: the caller
//! waits for that, as documented, and so does any other session's call that finds
//! the clock behind meanwhile ([`crate::server::wait_for_repair`]; bounded by the same wait, at
//! most [`MAX_AHEAD_MS`]), whatever `flakeid.clock_backwards` says: a repair is
//! not a clock that went back, and no writer fails for it.

use crate::convert::{show_ms, timestamptz};
use crate::error::{Report, SqlFn, from_bigint};
use crate::server::{MAX_AHEAD_MS, refuse_unless_preloaded, refuse_unless_writable, wait_until};
use crate::shmem::{COUNTER, REPAIR_READY_AT, lease_gate};
use crate::{mark, settings, upgrade};
use flakeid_core::lease::SharedGate;
use flakeid_core::precise_now_ms;
use pgrx::PgSqlErrorCode;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use std::sync::atomic::Ordering;

/// Moves the server's generator past `id` (an ID of the server's layout): every ID
/// issued from now on, by any session and after a restart, is larger. Returns the
/// time IDs resume after. Waits (interruptibly) while `id` is ahead of the clock by
/// more than the server may borrow.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn flakeid_resume_after(id: i64) -> TimestampWithTimeZone {
    let f = SqlFn("flakeid_resume_after");
    refuse_unless_preloaded(f, "its generator lives in shared memory, one per server");
    refuse_unless_writable(f);
    let id = from_bigint(id, "id");
    let layout = settings::server_layout();
    let at_ms = layout.decompose(id).timestamp_ms;
    let window = upgrade::configured_window();
    let ready_at = at_ms.saturating_add(layout.tick_ms()).saturating_sub(window);
    let now = precise_now_ms();
    if ready_at > now.saturating_add(MAX_AHEAD_MS) {
        too_far_ahead(&id, at_ms, now).hint(format!(
            "pass an ID of this server's layout (flakeid.layout = {}); no server issues that far ahead of its clock",
            layout.display_name()
        ))
        .raise(f);
    }
    // The counter word holds (tick, sequence), whatever the node id: with a lease,
    // the one held (or none yet) does.
    let builder = match settings::lease() {
        Some(_) => settings::builder().map(|b| b.node(SharedGate::node_of(lease_gate().lease()))),
        None => settings::builder(),
    };
    // Published before the word moves: a backend that finds it moved finds this too.
    REPAIR_READY_AT.get().fetch_max(ready_at, Ordering::AcqRel);
    let built = builder.and_then(|b| {
        b.resume_after_ms(at_ms)
            .build_shared(COUNTER.get())
            .map_err(settings::setting_report)
    });
    if let Err(report) = built {
        report.raise(f);
    }
    if let Err(report) = mark::advance(|| Some(at_ms)) {
        report.raise(f);
    }
    // The next ID is above `id`: wait until the clock (and what the server may
    // borrow) reaches it, so that the caller's next ID does not meet a clock "behind".
    wait_until(ready_at);
    timestamptz(at_ms)
}

pgrx::extension_sql!(
    "REVOKE ALL ON FUNCTION flakeid_resume_after(bigint) FROM PUBLIC;",
    name = "flakeid_resume_after_revoke",
    requires = [flakeid_resume_after],
);

/// Moves the server's UUIDs past `id` (a UUIDv7 it did not issue itself: rows
/// restored, copied or made elsewhere): every `flakeid_uuidv7()` from now on, by any
/// session and after a restart, is larger. Returns the time UUIDs resume after.
#[pg_extern(volatile, strict, parallel_unsafe, name = "flakeid_resume_after")]
fn flakeid_resume_after_uuid(id: pgrx::datum::Uuid) -> TimestampWithTimeZone {
    let f = SqlFn("flakeid_resume_after");
    refuse_unless_preloaded(f, "its UUIDs are one increasing sequence per server, in shared memory");
    refuse_unless_writable(f);
    let value = u128::from_be_bytes(*id.as_bytes());
    let at_ms = match flakeid_core::Wide(value).uuid7_timestamp_ms() {
        Ok(ms) => ms,
        Err(err) => crate::error::raise_argument(err, "id"),
    };
    let now = precise_now_ms();
    if at_ms > now.saturating_add(MAX_AHEAD_MS) {
        too_far_ahead(&id, at_ms, now)
            .hint("no server issues UUIDs that far ahead of its clock")
            .raise(f);
    }
    crate::uuid::resume_after(at_ms, f);
    timestamptz(at_ms)
}

/// The refusal of an `id` (of either family) from more than [`MAX_AHEAD_MS`] ahead
/// of the clock; the caller adds the hint of its family.
fn too_far_ahead(id: &dyn std::fmt::Display, at_ms: u64, now: u64) -> Report {
    Report::new(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!(
            "invalid value for argument \"id\": {id} is from {}, more than {} s ahead of the clock ({})",
            show_ms(at_ms),
            MAX_AHEAD_MS / 1000,
            show_ms(now)
        ),
    )
}

pgrx::extension_sql!(
    "REVOKE ALL ON FUNCTION flakeid_resume_after(uuid) FROM PUBLIC;",
    name = "flakeid_resume_after_uuid_revoke",
    requires = [flakeid_resume_after_uuid],
);
