//! What must outlive the server's memory: the high-water mark (IDs up to this Unix
//! ms may have been issued), the owner record (the node id and the timeline it was
//! last cleared to issue on) and who wrote it (the server's fingerprint,
//! [`crate::identity`]).
//!
//! All three live in replication origins, as 64-bit progress values. Of PostgreSQL's
//! stores an extension can write, an origin's progress is the one that is
//! - non-transactional (it stays set when the caller's transaction rolls back);
//! - WAL-logged, so physical standbys replay it and a promoted standby has it;
//! - checkpointed (pg_logical/replorigin_checkpoint), so crash recovery, base
//!   backups and point-in-time restores have it;
//! - one per server, like the generator: a sequence or a table row would be one per
//!   database, and after a crash only the database that called first would be read.
//!
//! The origins count against `max_replication_slots` up to 17 and against
//! `max_active_replication_origins` from 18 ([`ORIGINS`] of them;
//! [`crate::majors::origin_limit`]). They are
//! created by the start-up worker in a transaction of its own: an origin's progress
//! must never be set in a transaction that may still roll back its creation.

use crate::error::Report;
use pgrx::{PgSqlErrorCode, pg_sys};
use std::ffi::CStr;

pub const MARK_ORIGIN: &CStr = c"flakeid_high_water_mark";
pub const OWNER_ORIGIN: &CStr = c"flakeid_node_owner";
pub const IDENTITY_ORIGIN: &CStr = c"flakeid_owner_identity";
/// The 128-bit family's own mark (crate::uuid): UUIDs up to this Unix ms may have
/// been issued. Apart from the 64-bit mark, which that family's settings move ahead
/// of the clock (its borrow window, a new owner's window): a UUID floor there would
/// put UUIDs that far ahead, or refuse them. 0: not set yet (the start-up check
/// sets it from the 64-bit mark, which covered UUIDs before this origin existed).
pub const UUID_MARK_ORIGIN: &CStr = c"flakeid_uuid_mark";
/// How many origins flakeid keeps (each takes one of [`crate::majors::origin_limit`]).
pub const ORIGINS: i32 = 4;

/// The node id cleared to issue IDs, and the timeline it was cleared on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub timeline: u32,
    pub node: u64,
}

impl Owner {
    /// As a progress value: timeline in the high 32 bits (never 0), node below.
    fn encode(self) -> u64 {
        (u64::from(self.timeline) << 32) | (self.node & 0xffff_ffff)
    }
    fn decode(value: u64) -> Option<Owner> {
        (value >> 32 != 0).then_some(Owner {
            timeline: (value >> 32) as u32,
            node: value & 0xffff_ffff,
        })
    }
}

/// The durable state as this server has it.
#[derive(Debug, Clone, Copy)]
pub struct Durable {
    pub mark_ms: u64,
    pub owner: Option<Owner>,
    /// The fingerprint of the server that recorded the owner (0: none recorded, as
    /// by a library older than the record).
    pub identity: u64,
}

/// Creates the origins if they are missing (in the caller's transaction, which
/// must commit before either progress is set).
pub fn ensure_origins() {
    for name in [MARK_ORIGIN, OWNER_ORIGIN, IDENTITY_ORIGIN, UUID_MARK_ORIGIN] {
        // SAFETY: catalog functions called inside a transaction.
        unsafe {
            if pg_sys::replorigin_by_name(name.as_ptr(), true) == pg_sys::InvalidRepOriginId as pg_sys::RepOriginId {
                pg_sys::replorigin_create(name.as_ptr());
            }
        }
    }
}

fn missing(name: &CStr) -> Report {
    Report::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "flakeid's replication origin \"{}\" does not exist",
            name.to_string_lossy()
        ),
    )
    .detail("flakeid keeps its WAL-logged high-water mark and node owner in replication origins; its start-up worker creates them.")
    .hint("restart the server to recreate it (do not drop flakeid's replication origins)")
}

fn progress(name: &CStr) -> Result<u64, Report> {
    // SAFETY: catalog lookup and a read of the origin's shared progress.
    unsafe {
        let id = pg_sys::replorigin_by_name(name.as_ptr(), true);
        if id == pg_sys::InvalidRepOriginId as pg_sys::RepOriginId {
            return Err(missing(name));
        }
        Ok(pg_sys::replorigin_get_progress(id, false))
    }
}

/// The 128-bit family's durable mark: its own once set, else (a server whose
/// start-up check has not set it yet: UUIDs were covered by the 64-bit mark until
/// this origin existed) the 64-bit mark, which is never below it.
pub fn read_uuid() -> Result<u64, Report> {
    match progress(UUID_MARK_ORIGIN) {
        Ok(ms) if ms > 0 => Ok(ms),
        _ => progress(MARK_ORIGIN),
    }
}

/// Raises the 128-bit family's mark as [`advance`] raises the 64-bit one.
pub fn advance_uuid(next: impl FnOnce() -> Option<u64>) -> Result<Option<u64>, Report> {
    set(UUID_MARK_ORIGIN, false, next)
}

/// Sets the 128-bit family's mark from the 64-bit one (`mark_ms`, read before this
/// server issued anything) when it is not set yet; at least 1, so that it reads as
/// set from now on (a new cluster's UUIDs then owe nothing to the 64-bit mark).
pub fn init_uuid(mark_ms: u64) -> Result<(), Report> {
    set(UUID_MARK_ORIGIN, false, || {
        (progress(UUID_MARK_ORIGIN).ok() == Some(0)).then_some(mark_ms.max(1))
    })
    .map(drop)
}

/// The durable mark, owner and its writer (any server state, a standby's included).
pub fn read() -> Result<Durable, Report> {
    Ok(Durable {
        mark_ms: progress(MARK_ORIGIN)?,
        owner: Owner::decode(progress(OWNER_ORIGIN)?),
        identity: progress(IDENTITY_ORIGIN)?,
    })
}

/// Raises the durable mark to the value `next()` returns, if any: `next` runs while
/// this backend alone may set the mark (so it can see whether another backend moved
/// it meanwhile). The new mark is flushed to WAL on return. Never lowers the mark.
pub fn advance(next: impl FnOnce() -> Option<u64>) -> Result<Option<u64>, Report> {
    set(MARK_ORIGIN, false, next)
}

/// Records `owner` and this server's fingerprint as its writer, flushed to WAL on
/// return (the fingerprint first: an owner record is never newer than its writer's).
pub fn record_owner(owner: Owner, identity: u64) -> Result<(), Report> {
    record_identity(identity)?;
    set(OWNER_ORIGIN, true, || Some(owner.encode())).map(drop)
}

/// Records `identity` as the owner record's writer, flushed to WAL on return.
pub fn record_identity(identity: u64) -> Result<(), Report> {
    set(IDENTITY_ORIGIN, true, || Some(identity)).map(drop)
}

/// Sets an origin's progress to what `value()` returns (`force`: also backwards),
/// WAL-logged and flushed; `None` leaves it.
///
/// Only heavyweight locks, taken and released here: waits for them are interruptible
/// and seen by the deadlock detector, and none is held across the caller's
/// transaction, which may run long.
fn set(name: &CStr, force: bool, value: impl FnOnce() -> Option<u64>) -> Result<Option<u64>, Report> {
    let rel = pg_sys::ReplicationOriginRelationId;
    let row_exclusive = pg_sys::RowExclusiveLock as pg_sys::LOCKMODE;
    // Self-conflicting, so setters take turns; conflicts with a drop's lock too.
    let serial = pg_sys::ShareUpdateExclusiveLock as pg_sys::LOCKMODE;
    // SAFETY: the locking protocol of pg_replication_origin_advance(): the catalog
    // lock keeps the origin from being dropped (and its id reused) while it is set;
    // the per-origin lock does so on releases that lock origins one by one, and
    // serialises setters.
    unsafe {
        pg_sys::LockRelationOid(rel, row_exclusive);
        let id = pg_sys::replorigin_by_name(name.as_ptr(), true);
        if id == pg_sys::InvalidRepOriginId as pg_sys::RepOriginId {
            pg_sys::UnlockRelationOid(rel, row_exclusive);
            return Err(missing(name));
        }
        let object = pg_sys::Oid::from(u32::from(id));
        pg_sys::LockSharedObject(rel, object, 0, serial);
        let unlock = || {
            pg_sys::UnlockSharedObject(rel, object, 0, serial);
            pg_sys::UnlockRelationOid(rel, row_exclusive);
        };
        if pg_sys::replorigin_by_name(name.as_ptr(), true) != id {
            unlock();
            return Err(missing(name));
        }
        let set_to = value();
        if let Some(v) = set_to {
            pg_sys::replorigin_advance(id, v, 0, force, true);
            // Durable before any ID under the new mark leaves the server (sequences
            // leave this to the caller's commit; an ID may be used without one).
            pg_sys::XLogFlush(pg_sys::XactLastRecEnd);
        }
        unlock();
        Ok(set_to)
    }
}
