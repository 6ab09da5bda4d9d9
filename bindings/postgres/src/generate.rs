//! The server's generator in SQL: `flakeid_next()`, `flakeid_next_many(n)`, for
//! failovers `flakeid_confirm_node(node)` and `flakeid_status()` (with the lease's
//! state when `flakeid.lease` is set), and `flakeid_stats()`.

use crate::convert::timestamptz;
use crate::error::{Report, SqlFn, raise_argument, to_bigint};
use crate::shmem::{GuardState, LAST_REFUSAL, LEASE_STATUS, LeaseState, Resumed, STARTUP, TOTALS, Verdict, preloaded};
use crate::{host_guard, mark, server, settings, startup};
use flakeid_core::{check_batch, precise_now_ms};
use pgrx::PgSqlErrorCode;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use std::sync::atomic::Ordering;

/// The next ID from the server's generator (one per server, in shared memory).
#[pg_extern(volatile, parallel_safe)]
fn flakeid_next() -> i64 {
    to_bigint(server::backend(SqlFn::NEXT).next_id(SqlFn::NEXT))
}

/// IDs a `flakeid_next_many` call reserves at once (a tick's worth for snowflake).
const MANY_CHUNK: usize = 4096;

/// `n` IDs, increasing, one row per call (pgrx's value-per-call protocol). Made in
/// runs of [`MANY_CHUNK`] as rows are consumed, so a large `n` never holds gigabytes
/// outside PostgreSQL's memory accounting. SQL's `flakeid_next_many(n)` is the
/// wrapper below; this is `flakeid_next_many_rows(n)`.
#[pg_extern(volatile, parallel_safe, name = "flakeid_next_many_rows")]
fn flakeid_next_many(n: i32) -> SetOfIterator<'static, i64> {
    let f = SqlFn::NEXT_MANY;
    let n = match check_batch(i128::from(n)) {
        Ok(n) => n,
        Err(err) => raise_argument(err, "n"),
    };
    let backend = server::backend(f);
    let runs = (0..n).step_by(MANY_CHUNK).map(move |start| {
        let mut run = vec![0u64; MANY_CHUNK.min(n - start)];
        backend.fill(&mut run, f);
        run.into_iter().map(to_bigint)
    });
    SetOfIterator::new(runs.flatten())
}

// `flakeid_next_many(n)` as an SQL function of one SELECT, so that in `FROM` the
// planner inlines it (as a subquery whose select list calls the rows function) and a
// `LIMIT` stops it after the rows it reads: a C function in `FROM` is run to its end
// into a tuplestore first (ExecMakeTableFunctionResult), whatever its protocol, and
// `LIMIT 5` of 10,000,000 wrote hundreds of MB of temporary files. PostgreSQL inlines
// only a function that is not VOLATILE (nor STRICT): the wrapper is STABLE, and the
// call it inlines to is the VOLATILE rows function, so the query it lands in is
// planned as volatile all the same. In a select list the wrapper runs lazily (one
// row per call) too.
pgrx::extension_sql!(
    r#"
CREATE FUNCTION flakeid_next_many(n integer) RETURNS SETOF bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT @extschema@.flakeid_next_many_rows(n)
$$;
COMMENT ON FUNCTION flakeid_next_many(integer) IS
    'n IDs from the server''s generator, increasing; made as they are read (a LIMIT stops it), in FROM too';
"#,
    name = "flakeid_next_many_inlined",
    requires = [flakeid_next_many],
);

/// A superuser's confirmation, after a promotion or a restore, that this server may
/// issue IDs under its node id: no other server can issue under it any more (the
/// former primary is gone for good). `node` must be this server's node id.
#[pg_extern(volatile, parallel_unsafe)]
fn flakeid_confirm_node(node: i64) -> String {
    let f = SqlFn::CONFIRM;
    // SAFETY: a check of the current user.
    if !unsafe { pg_sys::superuser() } {
        Report::new(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            format!("permission denied for function {}", f.0),
        )
        .detail("Only a superuser may confirm which server issues IDs under a node id.")
        .raise(f);
    }
    if !preloaded() {
        Report::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("{f} needs the flakeid library preloaded"),
        )
        .raise(f);
    }
    server::refuse_unless_writable(f);
    if let Some(lease) = settings::lease() {
        Report::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "{f}: this server leases its node id ({}): there is nothing to confirm",
                lease.shown()
            ),
        )
        .detail("A leased node id is never held by two live servers: a promoted server takes a node id of its own.")
        .raise(f);
    }
    let configured = match settings::node_id() {
        Ok(n) => n,
        Err(report) => report.raise(f),
    };
    if u64::try_from(node).ok() != Some(configured) {
        Report::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("{f}: this server's node id is {configured}, not {node}"),
        )
        .hint(format!(
            "confirm the node id this server issues under: SELECT {}({configured})",
            f.0
        ))
        .raise(f);
    }
    let (before, after) = startup::confirm(configured, f);
    // A guard another process held may be free now (a same-host failover).
    let guard = host_guard::ask_again();
    let was = match before.verdict {
        Verdict::Ready => "it was already cleared",
        Verdict::Promoted => "it was refusing since its promotion",
        Verdict::Unrecorded => "it was refusing for want of an owner record",
        Verdict::Copied => "it was refusing as a copy of another server's data directory",
        _ => "the start-up check had not cleared it",
    };
    let borrowed = if after.resume_after_ms > after.start_mark_ms {
        format!(
            ", and after every ID borrowed ahead of the clock meanwhile: from {}",
            crate::convert::show_ms(after.resume_after_ms)
        )
    } else {
        String::new()
    };
    let confirmed = format!(
        "node id {} may issue IDs on timeline {} ({was}); they resume after the high-water mark {}{borrowed}",
        after.node,
        after.timeline,
        crate::convert::show_ms(after.start_mark_ms)
    );
    if guard.state == GuardState::Refused {
        return format!(
            "{confirmed}; but no ID is issued while the host guard is refused: {}",
            guard.message()
        );
    }
    confirmed
}

// Only superusers: who may issue under a node id is the operator's call (the
// function checks too, for a grant made by mistake).
pgrx::extension_sql!(
    "REVOKE ALL ON FUNCTION flakeid_confirm_node(bigint) FROM PUBLIC;",
    name = "flakeid_confirm_node_revoke",
    requires = [flakeid_confirm_node],
);

/// Whether this server issues IDs, and the durable state it decides by.
#[allow(clippy::type_complexity)]
#[pg_extern(volatile, parallel_safe)]
fn flakeid_status() -> TableIterator<
    'static,
    (
        name!(state, String),
        name!(node, Option<i64>),
        name!(timeline, Option<i64>),
        name!(owner_node, Option<i64>),
        name!(owner_timeline, Option<i64>),
        name!(high_water_mark, Option<TimestampWithTimeZone>),
        name!(lease, Option<String>),
        name!(lease_state, Option<String>),
        name!(lease_valid_until, Option<TimestampWithTimeZone>),
        name!(resumed_after, Option<TimestampWithTimeZone>),
        name!(resumed_because, Option<String>),
        name!(uuid_high_water_mark, Option<TimestampWithTimeZone>),
        name!(uuid_lead_ms, Option<i64>),
        name!(last_refusal, Option<String>),
        name!(uuid_last_refusal, Option<String>),
        name!(peer_node, Option<String>),
    ),
> {
    // SAFETY: PostgreSQL functions without arguments.
    let in_recovery = unsafe { pg_sys::RecoveryInProgress() };
    let s = if preloaded() {
        *STARTUP.share()
    } else {
        Default::default()
    };
    let state = if !preloaded() {
        "not preloaded".to_string()
    } else if in_recovery {
        "standby: refusing".to_string()
    } else {
        match s.verdict {
            Verdict::Checking if s.resumed == Resumed::Upgrade => format!(
                "checking: the first start after pg_upgrade: no ID for another {} ms (before {})",
                startup::upgrade_wait_left_ms(&s),
                crate::convert::show_ms(startup::upgrade_ready_at(&s))
            ),
            Verdict::Checking => "checking".to_string(),
            Verdict::Ready => host_guard::refused_state().unwrap_or_else(|| "ready".to_string()),
            Verdict::Promoted => "promoted: refusing until the node id is changed or confirmed".to_string(),
            Verdict::Unrecorded => "no owner record: refusing until the node id is confirmed".to_string(),
            Verdict::Copied => "copied: refusing until the node id is changed or confirmed".to_string(),
            Verdict::Settings => "settings: refusing (flakeid_next() says why)".to_string(),
            Verdict::Failed => format!("failed: {}", s.failure()),
        }
    };
    let timeline = if in_recovery {
        let mut tli: pg_sys::TimeLineID = 0;
        // SAFETY: reads the replay position and its timeline.
        unsafe { pg_sys::GetXLogReplayRecPtr(&mut tli) };
        tli
    } else {
        // SAFETY: not in recovery.
        unsafe { crate::majors::insertion_timeline() }
    };
    let durable = mark::read().ok();
    let owner = durable.and_then(|d| d.owner);
    let mark_ts = durable.filter(|d| d.mark_ms > 0).map(|d| timestamptz(d.mark_ms));
    let lease = settings::lease();
    let held = if preloaded() && lease.is_some() {
        Some(*LEASE_STATUS.share())
    } else {
        None
    };
    let node = match (&lease, held) {
        (Some(_), Some(h)) => (h.acquired > 0).then_some(h.node as i64),
        (Some(_), None) => None,
        (None, _) => settings::node_id().ok().map(|n| n as i64),
    };
    let state = match held {
        Some(h) if state == "ready" && h.state != LeaseState::Held => format!("ready; lease {}", h.describe()),
        _ => state,
    };
    TableIterator::once((
        state,
        node,
        Some(i64::from(timeline)),
        owner.map(|o| o.node as i64),
        owner.map(|o| i64::from(o.timeline)),
        mark_ts,
        lease.as_ref().map(|l| l.shown()),
        held.map(|h| h.describe()),
        held.filter(|h| h.wall_end_ms > 0).map(|h| timestamptz(h.wall_end_ms)),
        (s.resumed != Resumed::Unknown && !in_recovery).then(|| timestamptz(s.resume_after_ms)),
        (!in_recovery).then(|| startup::resumed_because(&s)).flatten(),
        mark::read_uuid().ok().filter(|&ms| ms > 1).map(timestamptz),
        preloaded().then(|| i64::try_from(crate::uuid::lead_ms()).unwrap_or(i64::MAX)),
        last_refusal(0),
        last_refusal(1),
        last_refusal(2),
    ))
}

/// A family's last refusal since the server started (0: the 64-bit family, 1: the
/// 128-bit one; 2: the last duplicate key applied from a replication peer on this
/// server's node id), with its time; NULL when none.
fn last_refusal(family: usize) -> Option<String> {
    if !preloaded() {
        return None;
    }
    let r = LAST_REFUSAL.share().0[family];
    (r.at_ms > 0).then(|| format!("{}: {}", crate::convert::show_ms(r.at_ms), r.message()))
}

/// What the server's generator has done since the server started.
#[allow(clippy::type_complexity)]
#[pg_extern(volatile, parallel_safe)]
fn flakeid_stats() -> TableIterator<
    'static,
    (
        name!(ids_issued, i64),
        name!(tick_waits, i64),
        name!(tick_wait_us, i64),
        name!(lead_ms, i64),
        name!(clock_rollbacks, i64),
        name!(max_rollback_ms, i64),
        name!(lease_state, Option<String>),
        name!(lease_remaining_ms, Option<i64>),
        name!(refusals, i64),
        name!(uuid_refusals, i64),
        name!(uuid_lead_ms, i64),
        name!(repair_waits, i64),
        name!(repair_wait_us, i64),
    ),
> {
    let f = SqlFn("flakeid_stats");
    if !preloaded() {
        Report::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("{f} needs the flakeid library preloaded: the server's generator and its statistics live in shared memory"),
        )
        .hint(server::NOT_PRELOADED_HINT)
        .raise(f);
    }
    // This backend's counts so far, then everyone's.
    server::add_to_totals();
    let t = TOTALS.get();
    let big = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let now = precise_now_ms();
    let lead_ms = server::last_issued_ms().map_or(0, |last| last.saturating_sub(now));
    let (lease_state, lease_remaining_ms) = if settings::lease().is_some() {
        let s = *LEASE_STATUS.share();
        (
            Some(lease_state_name(s.state).to_string()),
            Some(big(s.wall_end_ms.saturating_sub(now))),
        )
    } else {
        (None, None)
    };
    TableIterator::once((
        big(t.ids_issued.load(Ordering::Relaxed)),
        big(t.tick_waits.load(Ordering::Relaxed)),
        big(t.tick_wait_us.load(Ordering::Relaxed)),
        big(lead_ms),
        big(t.clock_rollbacks.load(Ordering::Relaxed)),
        big(t.max_rollback_ms.load(Ordering::Relaxed)),
        lease_state,
        lease_remaining_ms,
        big(t.refusals.load(Ordering::Relaxed)),
        big(t.uuid_refusals.load(Ordering::Relaxed)),
        big(crate::uuid::lead_ms()),
        big(t.repair_waits.load(Ordering::Relaxed)),
        big(t.repair_wait_us.load(Ordering::Relaxed)),
    ))
}

/// The lease holder's state by the engine's names (`LeaseState::as_str`: held,
/// unreachable, lost, released); while no lease is held yet (acquiring, or retrying
/// after a failure) the holder has none: `released`, as the engine says of a
/// generator whose lease is gone.
fn lease_state_name(state: LeaseState) -> &'static str {
    match state {
        LeaseState::Held => flakeid_core::LeaseState::Held.as_str(),
        LeaseState::Unreachable => flakeid_core::LeaseState::Unreachable { error: String::new() }.as_str(),
        LeaseState::Lost => flakeid_core::LeaseState::Lost.as_str(),
        LeaseState::None | LeaseState::Acquiring | LeaseState::Failed => flakeid_core::LeaseState::Released.as_str(),
    }
}
