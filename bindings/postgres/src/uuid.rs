//! The 128-bit family in SQL: `flakeid_uuidv7()` (and its batch, an explicit time
//! and a shifted now), `flakeid_ulid()`, `flakeid_typeid(prefix)`, the extract
//! functions, the conversions, and the first and last UUID of a time for
//! `WHERE id BETWEEN`.
//!
//! One sequence per server: every backend's [`UuidGenerator`] runs over one word
//! in shared memory ([`UUID_COUNTER`]), so the UUIDs of all sessions strictly
//! increase together (PostgreSQL 18's own `uuidv7()` promises that per backend
//! only). A UUID needs no node id: a standby, a copied data directory or a restored
//! backup issues them too, kept apart from every other server's by their 58
//! random bits, as any two UUIDv7 generators' are.
//!
//! **Across restarts and failovers** the sequence goes on above the server's
//! WAL-logged UUID high-water mark (crate::mark's [`mark::UUID_MARK_ORIGIN`]), the
//! 128-bit family's own: on a primary, a UUID of a millisecond the mark does not
//! cover moves the mark past it first (once per [`RESERVE_AHEAD_MS`]: one relaxed
//! compare per call otherwise), and the shared word starts above the mark after a
//! restart, and above the mark it replayed on a promoted standby. The 64-bit
//! family's mark, which its settings move ahead of the clock (`max_borrow_ms`, a new
//! owner's window), is not the UUIDs' floor: no 64-bit setting delays or refuses a
//! UUID. A standby writes no WAL: it issues as a primary does, from the mark it had
//! replayed when its first session called.
//!
//! **A clock behind the floor** (a restart onto a slower clock, a clock set back)
//! never refuses a UUID: as PostgreSQL 18's `uuidv7()`, the sequence goes on above
//! the floor, its timestamp field advancing from there (one millisecond per 65,536
//! UUIDs) until the clock catches up: the generator borrows up to a day ahead
//! ([`UUID_BORROW_MS`]). How far the newest UUID is ahead of the clock is
//! `flakeid_status().uuid_lead_ms`.

use crate::convert::{ok, timestamptz, unix_ms, unix_us};
use crate::error::{Report, SqlFn, raise_argument};
use crate::mark;
use crate::server::{RESERVE_AHEAD_MS, refuse_unless_preloaded};
use crate::shmem::{self, STARTUP, UUID_COUNTER, UUID_COVERED, UUID_FLOOR, UUID_MARK_READY, Verdict};
use flakeid_core::{SharedCounter, UuidGenerator, Wide, check_batch, precise_now_ms};
use pgrx::datum::{Interval, TimestampWithTimeZone, Uuid};
use pgrx::prelude::*;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

/// This backend's generator over the server's word (built at its first call).
static GENERATOR: OnceLock<UuidGenerator<SharedCounter>> = OnceLock::new();

/// The UUIDs' borrow window: the longest the engine takes (a day), so a clock behind
/// the floor is no refusal (the floor is the clock's stand-in until it catches up)
/// unless it is more than a day behind, a clock no server should run on. Only a
/// clock behind the floor puts UUIDs ahead of it: 65,536 UUIDs per millisecond are
/// more than SQL calls make.
pub const UUID_BORROW_MS: u64 = flakeid_core::MAX_POLICY_MS;

/// A generator over the server's word that starts after `floor_ms` (building one
/// moves the word there: it only ever moves forward).
fn over_word(floor_ms: u64) -> Result<UuidGenerator<SharedCounter>, flakeid_core::Error> {
    UuidGenerator::builder()
        .max_borrow_ms(UUID_BORROW_MS)
        .resume_after_ms(floor_ms)
        .build_shared(UUID_COUNTER.get())
}

#[track_caller]
fn generator(f: SqlFn) -> &'static UuidGenerator<SharedCounter> {
    if let Some(g) = GENERATOR.get() {
        return g;
    }
    refuse_unless_preloaded(f, "its UUIDs are one increasing sequence per server, in shared memory");
    // SAFETY: a PostgreSQL function without arguments.
    if !unsafe { pg_sys::RecoveryInProgress() } {
        wait_for_check();
    }
    let built = ok(over_word(durable_mark_ms(f)), "uuid");
    GENERATOR.get_or_init(|| built)
}

/// The WAL-logged UUID mark.
fn durable_mark_ms(f: SqlFn) -> u64 {
    with_origins(f, mark::read_uuid)
}

/// How long a primary's first UUID call waits for the start-up check: it creates
/// flakeid's origins on a new cluster, and a loaded host may start its worker late
/// (about 11 s was seen); a call then waits, rather than fail on a missing origin.
const CHECK_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits (bounded: [`CHECK_WAIT`]) for the start-up check to create the origins and
/// set the UUID mark from the 64-bit one if it was not (crate::mark::init_uuid):
/// before it, the floor would be the 64-bit mark, which that family's window may
/// have moved ahead. Not for a check that gave up before it (its verdict says so).
fn wait_for_check() {
    let started = std::time::Instant::now();
    while UUID_MARK_READY.get().load(Ordering::Acquire) == 0
        && STARTUP.share().verdict == Verdict::Checking
        && started.elapsed() < CHECK_WAIT
    {
        shmem::pause();
    }
}

/// How far the server's newest UUID is ahead of the clock (ms; 0: not ahead, or none yet).
pub fn lead_ms() -> u64 {
    let next = UUID_COUNTER.get().load(Ordering::Acquire);
    if next == 0 {
        return 0;
    }
    ((next - 1) >> 16).saturating_sub(precise_now_ms())
}

/// `op` on flakeid's replication origins, which the start-up worker creates at the
/// server's first start: retried while they are missing, for as long as a call
/// waits for a worker's first report ([`shmem::WORKER_WAIT`]).
fn with_origins<T>(f: SqlFn, mut op: impl FnMut() -> Result<T, Report>) -> T {
    let started = std::time::Instant::now();
    loop {
        match op() {
            Ok(v) => return v,
            Err(_) if started.elapsed() < shmem::WORKER_WAIT => shmem::pause(),
            Err(report) => report.refuse(f),
        }
    }
}

/// What the generator drew, or the call refused (counted in
/// `flakeid_stats().uuid_refusals`): the engine's errors here are the server's state
/// (its time range, a cancel), never an argument's.
#[inline(always)]
#[track_caller]
fn drawn<T>(result: Result<T, flakeid_core::Error>, f: SqlFn) -> T {
    match result {
        Ok(v) => v,
        Err(err) => refuse_drawing(err, f),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn refuse_drawing(err: flakeid_core::Error, f: SqlFn) -> ! {
    if err.kind() == flakeid_core::ErrorKind::Interrupted {
        pgrx::check_for_interrupts!();
    }
    Report::new(crate::error::sqlstate(err.kind()), format!("{f}: {err}")).refuse(f)
}

fn value(id: Uuid) -> u128 {
    u128::from_be_bytes(*id.as_bytes())
}

fn uuid(value: u128) -> Uuid {
    Uuid::from_bytes(value.to_be_bytes())
}

fn ms_of(u: u128) -> u64 {
    (u >> 80) as u64
}

/// Whether UUIDs `first..=last` are above the floor and covered by the mark (two
/// loads: the floor is set before the bound, which is read first).
#[inline(always)]
fn covered(first: u128, last: u128) -> bool {
    ms_of(last) < UUID_COVERED.get().load(Ordering::Acquire) && ms_of(first) >= UUID_FLOOR.get().load(Ordering::Relaxed)
}

/// What `draw` makes (one UUID, or a batch whose `bounds` are its first and last),
/// returned only once it may leave the server: on a primary, above the floor (the
/// first call since the start or a promotion sets the floor from the mark and moves
/// the word above it: what was drawn before is drawn again) and covered by the mark
/// (moved past it first when it is not); on a standby, as it is.
#[inline]
fn settled<T>(f: SqlFn, mut draw: impl FnMut() -> T, bounds: impl Fn(&T) -> Option<(u128, u128)>) -> T {
    let mut value = draw();
    loop {
        let Some((first, last)) = bounds(&value) else {
            return value;
        };
        if covered(first, last) || !settle(f, first, last) {
            return value;
        }
        value = draw();
    }
}

/// The slow half of [`settled`]: true when the values must be drawn again.
#[cold]
#[inline(never)]
fn settle(f: SqlFn, first: u128, last: u128) -> bool {
    // SAFETY: a PostgreSQL function without arguments.
    if unsafe { pg_sys::RecoveryInProgress() } {
        return false;
    }
    if UUID_FLOOR.get().load(Ordering::Acquire) == 0 {
        wait_for_check();
        let mark_ms = durable_mark_ms(f);
        ok(over_word(mark_ms), "uuid");
        UUID_FLOOR.get().fetch_max(mark_ms + 1, Ordering::Release);
    }
    if ms_of(first) < UUID_FLOOR.get().load(Ordering::Acquire) {
        return true;
    }
    cover(ms_of(last), f);
    false
}

/// Moves the durable UUID mark past `ms` (and the clock) by [`RESERVE_AHEAD_MS`], as
/// the 64-bit generator's reservation; UUIDs up to the new mark are then covered.
fn cover(ms: u64, f: SqlFn) {
    let bound = UUID_COVERED.get();
    let moved = with_origins(f, || {
        mark::advance_uuid(|| {
            (ms >= bound.load(Ordering::Acquire)).then(|| ms.max(precise_now_ms()).saturating_add(RESERVE_AHEAD_MS))
        })
    });
    if let Some(mark_ms) = moved {
        bound.fetch_max(mark_ms + 1, Ordering::Release);
    }
}

/// `flakeid_resume_after(uuid)`: the word and the UUID mark past `at_ms`, and the
/// floor with them (UUIDs drawn below it meanwhile are drawn again).
pub fn resume_after(at_ms: u64, f: SqlFn) {
    ok(over_word(at_ms), "id");
    with_origins(f, || mark::advance_uuid(|| Some(at_ms)));
    UUID_FLOOR.get().fetch_max(at_ms + 1, Ordering::Release);
}

/// The next UUID of the server's sequence, as it may leave the server.
#[inline]
fn next(f: SqlFn) -> u128 {
    let g = generator(f);
    settled(f, || drawn(g.next_uuid7(), f), |u| Some((*u, *u)))
}

/// The next UUIDv7 (RFC 9562), above every UUID this server issued since it started.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_uuidv7() -> Uuid {
    uuid(next(SqlFn::UUIDV7))
}

/// UUIDs a `flakeid_uuidv7_many` call makes at once.
const MANY_CHUNK: usize = 4096;

/// `n` UUIDv7s, increasing and in call order with the server's other UUIDs, made in
/// runs of [`MANY_CHUNK`] as rows are consumed, one row per call; `n` as
/// `flakeid_next_many(n)`. SQL's `flakeid_uuidv7_many(n)` is the wrapper below (why:
/// `flakeid_next_many`'s, crate::generate); this is `flakeid_uuidv7_many_rows(n)`.
#[pg_extern(volatile, parallel_safe, name = "flakeid_uuidv7_many_rows")]
fn flakeid_uuidv7_many(n: i32) -> SetOfIterator<'static, Uuid> {
    let f = SqlFn::UUIDV7_MANY;
    let n = match check_batch(i128::from(n)) {
        Ok(n) => n,
        Err(err) => raise_argument(err, "n"),
    };
    let g = generator(f);
    let runs = (0..n).step_by(MANY_CHUNK).map(move |start| {
        let len = MANY_CHUNK.min(n - start);
        let run = settled(
            f,
            || drawn(g.next_uuid7s(len), f),
            |v| v.first().zip(v.last()).map(|(a, b)| (*a, *b)),
        );
        run.into_iter().map(uuid)
    });
    SetOfIterator::new(runs.flatten())
}

pgrx::extension_sql!(
    r#"
CREATE FUNCTION flakeid_uuidv7_many(n integer) RETURNS SETOF uuid
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT @extschema@.flakeid_uuidv7_many_rows(n)
$$;
COMMENT ON FUNCTION flakeid_uuidv7_many(integer) IS
    'n UUIDv7s of the server''s sequence, increasing; made as they are read (a LIMIT stops it), in FROM too';
"#,
    name = "flakeid_uuidv7_many_inlined",
    requires = [flakeid_uuidv7_many],
);

/// A UUIDv7 of `ts`'s millisecond and 74 random bits: outside the server's
/// sequence (not ordered after its other UUIDs, nor among others of that
/// millisecond), for rows that keep their original creation time.
#[pg_extern(volatile, parallel_safe, strict)]
fn flakeid_uuidv7_at(ts: TimestampWithTimeZone) -> Uuid {
    uuid_at(SqlFn("flakeid_uuidv7_at"), uuid_ms(ts, "ts", "ts"))
}

/// A UUIDv7 of the clock shifted by `shift`, as PostgreSQL 18's `uuidv7(shift)`:
/// `clock_timestamp() + shift` with PostgreSQL's own calendar arithmetic
/// (`timestamptz + interval`), outside the server's sequence as
/// `flakeid_uuidv7_at`. A function of its own, not SQL over `flakeid_uuidv7_at`,
/// so that a shifted time outside a UUIDv7's range is refused naming `shift`, the
/// argument the caller passed.
#[pg_extern(volatile, parallel_safe, strict, name = "flakeid_uuidv7")]
fn flakeid_uuidv7_shifted(shift: Interval) -> Uuid {
    // SAFETY: clock_timestamp()'s reading, and PostgreSQL's `timestamptz + interval`
    // on two non-NULL values (it raises its own error past timestamptz's range).
    let at = unsafe {
        pgrx::direct_function_call::<TimestampWithTimeZone>(
            pg_sys::timestamptz_pl_interval,
            &[pg_sys::GetCurrentTimestamp().into_datum(), shift.into_datum()],
        )
    };
    let Some(at) = at else {
        raise_argument(
            flakeid_core::Error::config("shift", "clock_timestamp() + shift is NULL"),
            "shift",
        )
    };
    uuid_at(
        SqlFn("flakeid_uuidv7"),
        uuid_ms(at, "shift", "clock_timestamp() + shift"),
    )
}

pgrx::extension_sql!(
    r#"
COMMENT ON FUNCTION flakeid_uuidv7(interval) IS
    'a UUIDv7 of the clock shifted by shift, as PostgreSQL 18''s uuidv7(shift): clock_timestamp() + shift, outside the server''s sequence';
"#,
    name = "flakeid_uuidv7_shift_comment",
    requires = [flakeid_uuidv7_shifted],
);

/// A UUIDv7 of `ms` outside the sequence (`ms` already checked: [`uuid_ms`]).
fn uuid_at(f: SqlFn, ms: u64) -> Uuid {
    match generator(f).uuid7_at(ms) {
        Ok(u) => uuid(u),
        Err(err) => raise_argument(err, "ts"),
    }
}

/// `ts` as the Unix millisecond of a UUIDv7 (floored), or 22023 naming `arg`, the
/// argument the caller passed, and a UUIDv7's range: `shown` is what the time is
/// to the caller (`ts`, `clock_timestamp() + shift`). ±infinity as every time
/// argument's refusal (crate::convert::unix_ms).
#[track_caller]
fn uuid_ms(ts: TimestampWithTimeZone, arg: &'static str, shown: &str) -> u64 {
    let Some(us) = unix_us(ts) else {
        return unix_ms(ts);
    };
    match u64::try_from(us.div_euclid(1000)) {
        Ok(ms) if ms <= Wide::MAX_MS => ms,
        _ => raise_argument(
            flakeid_core::Error::config(
                arg,
                format!(
                    "{shown} is {}, outside a UUIDv7's times: {} to {} (48 bits of Unix milliseconds)",
                    show_us(ts),
                    show_ms_or_epoch(0),
                    show_ms_or_epoch(Wide::MAX_MS)
                ),
            ),
            arg,
        ),
    }
}

/// A time as PostgreSQL prints a timestamptz.
fn show_us(ts: TimestampWithTimeZone) -> String {
    // SAFETY: formats into a static buffer, copied out at once.
    unsafe { std::ffi::CStr::from_ptr(pg_sys::timestamptz_to_str(pg_sys::TimestampTz::from(ts))) }
        .to_string_lossy()
        .into_owned()
}

/// A Unix ms as PostgreSQL prints a timestamptz (0 included: the epoch).
fn show_ms_or_epoch(unix_ms: u64) -> String {
    show_us(timestamptz(unix_ms))
}

/// The next ID as a ULID (the bits of `flakeid_uuidv7()`, in Crockford base32).
#[pg_extern(volatile, parallel_safe)]
fn flakeid_ulid() -> String {
    Wide(next(SqlFn::ULID)).to_ulid()
}

/// The next ID as a TypeID: `prefix` (checked first), `_`, its ULID in lower case.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_typeid(prefix: &str) -> String {
    ok(Wide::check_typeid_prefix(prefix), "prefix");
    ok(Wide(next(SqlFn::TYPEID)).to_typeid(prefix), "prefix")
}

/// The time of a UUIDv7; NULL for a UUID of another version or variant (as
/// PostgreSQL 18's `uuid_extract_timestamp` for everything but versions 1 and 7).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuid_timestamp(id: Uuid) -> Option<TimestampWithTimeZone> {
    Wide(value(id)).uuid7_timestamp_ms().ok().map(timestamptz)
}

/// The version of an RFC 9562 UUID; NULL for another variant (as PostgreSQL 18's
/// `uuid_extract_version`).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuid_version(id: Uuid) -> Option<i16> {
    Wide(value(id)).rfc_version().map(i16::from)
}

/// The time in a ULID's first 48 bits (any ULID; case-insensitive).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_ulid_timestamp(ulid: &str) -> TimestampWithTimeZone {
    timestamptz(ok(Wide::parse_ulid(ulid), "ulid").timestamp_ms())
}

/// A UUID's 128 bits as a ULID (a byte copy: no bit changes).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuid_to_ulid(id: Uuid) -> String {
    Wide(value(id)).to_ulid()
}

/// A ULID's 128 bits as a UUID (a byte copy: no bit changes).
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_ulid_to_uuid(ulid: &str) -> Uuid {
    uuid(ok(Wide::parse_ulid(ulid), "ulid").0)
}

/// A TypeID of `prefix` and `id`'s bits.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_typeid_format(prefix: &str, id: Uuid) -> String {
    ok(Wide(value(id)).to_typeid(prefix), "prefix")
}

/// A TypeID's prefix and UUID: `(flakeid_typeid_parse(t)).id`.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_typeid_parse(typeid: &str) -> TableIterator<'static, (name!(prefix, String), name!(id, Uuid))> {
    let (prefix, bits) = ok(Wide::parse_typeid(typeid), "typeid");
    TableIterator::once((prefix, uuid(bits.0)))
}

/// The smallest UUID of `ts`'s millisecond: `id >= flakeid_uuidv7_first_at(ts)`.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuidv7_first_at(ts: TimestampWithTimeZone) -> Uuid {
    let ms = uuid_ms(ts, "ts", "ts");
    uuid(ok(Wide::uuid7_range(ms, ms), "ts").0.0)
}

/// The largest UUID of `ts`'s millisecond: `id <= flakeid_uuidv7_last_at(ts)`.
#[pg_extern(immutable, parallel_safe, strict)]
fn flakeid_uuidv7_last_at(ts: TimestampWithTimeZone) -> Uuid {
    let ms = uuid_ms(ts, "ts", "ts");
    uuid(ok(Wide::uuid7_range(ms, ms), "ts").1.0)
}
