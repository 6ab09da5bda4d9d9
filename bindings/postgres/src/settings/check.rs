//! The check hook: each value is refused when it is set (ALTER SYSTEM: an ERROR; a
//! reload: a log line; server start: a warning, and the value is remembered so
//! that the generator refuses rather than run without it).
//!
//! One hook for every row of [`super::GUCS`]. PostgreSQL does not tell a hook which
//! setting it checks, so the hook is instantiated per row ([`HOOKS`]).

use super::files::{Entry, Pending};
use super::{BackendClock, GUC_COUNT, GUCS, REFUSED_AT_START, Refusal, guc_name, preloading, reason};
use flakeid_core::{Error, Generator, Layout, LeaseSpec};
use pgrx::guc::GucCheckError;
use pgrx::{pg_guard, pg_sys};
use std::ffi::{CStr, c_char, c_void};

type IntHook = unsafe extern "C-unwind" fn(*mut i32, *mut *mut c_void, pg_sys::GucSource::Type) -> bool;
type TextHook = unsafe extern "C-unwind" fn(*mut *mut c_char, *mut *mut c_void, pg_sys::GucSource::Type) -> bool;

macro_rules! rows {
    ($($row:literal)*) => { [$((int_hook::<$row> as IntHook, text_hook::<$row> as TextHook)),*] };
}

/// The hook of each row of [`super::GUCS`], for an integer and for a string setting:
/// room for 24 rows, so that a setting added to `GUCS` needs nothing here (a row
/// past the last setting is never installed: `define` zips the two).
pub(super) static HOOKS: [(IntHook, TextHook); 24] =
    rows!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23);
const _: () = assert!(GUC_COUNT <= HOOKS.len(), "more settings than check hooks");

#[pg_guard]
unsafe extern "C-unwind" fn int_hook<const ROW: usize>(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate.
    let value = unsafe { *newval };
    let Some(guc) = GUCS.get(ROW) else { return true };
    // A reload reads the files again: their text, not only the number read from it
    // (at server start, super::note_refused_values does, after every definition).
    if source == pg_sys::GucSource::PGC_S_FILE
        && !preloading()
        && let Some((reason, text, at)) = super::exact::file_text_refusal(guc.option, value)
    {
        return refuse(
            guc.option,
            &text,
            reason,
            &format!(
                "{} = {text} is set in {at}; integer settings take decimal integers only",
                guc_name(guc.option)
            ),
        );
    }
    check(guc.option, &value.to_string())
}

#[pg_guard]
unsafe extern "C-unwind" fn text_hook<const ROW: usize>(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate (NULL or a C string).
    let p = unsafe { *newval };
    let value = if p.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    };
    GUCS.get(ROW).is_none_or(|guc| check(guc.option, &value))
}

/// Checks `value` for option `option`'s GUC, and reports a refusal the way
/// PostgreSQL shows a hook's: as the primary message (an ERROR for ALTER SYSTEM, a
/// log line at reload, a WARNING at server start).
fn check(option: &'static str, value: &str) -> bool {
    let id = || value.parse::<i32>().unwrap_or(-1);
    let result = match option {
        "layout" => check_layout(value),
        // Through the core's table, as every binding's options.
        "overflow" | "clock_backwards" => super::set_options([(option, value.to_string())])
            .map(drop)
            .map_err(reason),
        "node" | "datacenter" | "worker" => check_id(option, id()),
        "lease" => check_lease_value(value),
        "max_sequence" => check_max_sequence_value(id()),
        // The rest: PostgreSQL's range check is the core's range.
        _ => Ok(()),
    };
    let Err(reason) = result else { return true };
    let hint = match option {
        "node" | "datacenter" | "worker" => {
            "-1 leaves it unset; flakeid_next() needs flakeid.node, flakeid.datacenter and flakeid.worker, or flakeid.lease"
        }
        "lease" => {
            "a lease URL: redis[s]://, postgres[ql]://, etcd[s]:// or file:// (docs/leases.md); '' leaves it unset"
        }
        _ => "",
    };
    refuse(option, value, reason, hint)
}

/// Reports `option`'s `value` refused for `reason` the way PostgreSQL shows a
/// hook's refusal, remembered when the server starts; false.
fn refuse(option: &'static str, value: &str, reason: String, hint: &str) -> bool {
    // A lease URL is remembered and shown without its password.
    let value = match option {
        "lease" => flakeid_core::lease::redact_passwords(value),
        _ => value.to_string(),
    };
    if preloading()
        && let Ok(mut refused) = REFUSED_AT_START.lock()
    {
        refused.push(Refusal {
            option,
            value,
            reason: reason.clone(),
        });
    }
    let message = format!("invalid value for parameter \"{}\": {reason}", guc_name(option));
    let error = GucCheckError::new(message);
    let error = if hint.is_empty() { error } else { error.with_hint(hint) };
    // SAFETY: we are inside a GUC check hook.
    unsafe { error.apply() };
    false
}

/// -1 (not set), or the core's rule against the layout the next start applies (a
/// bad layout is the layout hook's to report).
fn check_max_sequence_value(value: i32) -> Result<(), String> {
    if value < 0 {
        return Ok(());
    }
    let pending = Pending::now();
    let layout = pending.layout.unwrap_or_else(|| "snowflake".to_string());
    if Layout::preset(&layout).is_err() {
        return Ok(());
    }
    super::set_options([("layout", layout.clone()), ("max_sequence", value.to_string())])
        .and_then(|b| b.node(0).build())
        .map(drop)
        .map_err(|err| format!("{} (flakeid.layout is {layout})", reason(err)))
}

/// Through the core's table (field `layout`), then the preset it names, which the
/// node settings the next start applies must fit.
fn check_layout(value: &str) -> Result<(), String> {
    super::set_options([("layout", value.to_string())]).map_err(reason)?;
    let layout = Layout::preset(value).map_err(reason)?;
    let mut pending = Pending::now();
    pending.layout = Some(value.to_string());
    check_node_settings(layout, &pending, "layout")
}

/// A lease URL is parsed (never connected to: the store may not be up yet) and may
/// not be set beside a node id.
fn check_lease_value(value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Ok(());
    }
    // The engine's messages never hold a password.
    LeaseSpec::parse(value).map_err(reason)?;
    let pending = Pending::now();
    let set: Vec<String> = [&pending.node, &pending.datacenter, &pending.worker]
        .into_iter()
        .filter(|e| e.value >= 0)
        .map(Entry::describe)
        .collect();
    if set.is_empty() {
        return Ok(());
    }
    Err(format!(
        "flakeid.lease cannot be set while {} is set: the node id comes either from a lease or from \
         flakeid.node / flakeid.datacenter and flakeid.worker (set those to -1 first)",
        set.join(" and ")
    ))
}

fn check_id(option: &str, value: i32) -> Result<(), String> {
    let mut pending = Pending::now();
    match option {
        "node" => pending.node.value = value,
        "datacenter" => pending.datacenter.value = value,
        _ => pending.worker.value = value,
    }
    // A bad layout is the layout hook's to report.
    let Ok(layout) = Layout::preset(pending.layout.as_deref().unwrap_or("snowflake")) else {
        return Ok(());
    };
    check_node_settings(layout, &pending, option)
}

/// Whether the node settings of `pending` fit `layout`, for a change of `changed`:
/// only what that change makes wrong is its fault.
fn check_node_settings(layout: Layout, pending: &Pending, changed: &str) -> Result<(), String> {
    let (node, dc, worker) = (&pending.node, &pending.datacenter, &pending.worker);
    if let (Some(lease), Some(this)) = (pending.lease_described(), pending.entry(changed))
        && this.value >= 0
    {
        return Err(format!(
            "{} = {} cannot be set while {lease} is set: the node id comes either from a lease or from \
             flakeid.node / flakeid.datacenter and flakeid.worker (ALTER SYSTEM RESET flakeid.lease first)",
            guc_name(changed),
            this.value
        ));
    }
    let parts_set = dc.value >= 0 || worker.value >= 0;
    if node.value >= 0 && parts_set {
        match changed {
            "node" => {
                let set: Vec<String> = [dc, worker]
                    .into_iter()
                    .filter(|e| e.value >= 0)
                    .map(Entry::describe)
                    .collect();
                return Err(format!(
                    "flakeid.node = {} cannot be set while {} is set: give the node id either in flakeid.node \
                     or in flakeid.datacenter and flakeid.worker (set the others to -1 first)",
                    node.value,
                    set.join(" and ")
                ));
            }
            "datacenter" | "worker" => {
                let this = if changed == "datacenter" { dc } else { worker };
                if this.value >= 0 {
                    return Err(format!(
                        "{} = {} cannot be set while {} is set: give the node id either in flakeid.node \
                         or in flakeid.datacenter and flakeid.worker (set flakeid.node to -1 first)",
                        guc_name(changed),
                        this.value,
                        node.describe()
                    ));
                }
            }
            _ => {}
        }
    }
    // No node id at all: no range to check (the server's start refuses it, by
    // require_node; the engine refuses a build with none on this clock).
    if node.value < 0 && dc.value < 0 && worker.value < 0 {
        return Ok(());
    }
    // The ranges, by the engine's rule; a conflict is reported above, so here the
    // node id is taken from one source only.
    let mut b = Generator::builder(layout).clock(BackendClock);
    if node.value >= 0 && (changed == "node" || !parts_set) {
        b = b.node(node.value as u64);
    } else {
        if dc.value >= 0 {
            b = b.datacenter(dc.value as u64);
        }
        if worker.value >= 0 {
            b = b.worker(worker.value as u64);
        }
    }
    match b.build() {
        Ok(_) => Ok(()),
        Err(Error::Config { field, message }) => {
            let Some(at_fault) = GUCS.iter().map(|g| g.option).find(|o| *o == field) else {
                return Err(message);
            };
            if changed == "layout" {
                let entry = pending.entry(at_fault);
                Err(format!(
                    "the {} layout cannot hold {}: {message}",
                    layout.display_name(),
                    entry.map_or_else(|| guc_name(at_fault), Entry::describe)
                ))
            } else if at_fault == changed {
                Err(format!("{message} (flakeid.layout is {})", layout.display_name()))
            } else {
                Ok(())
            }
        }
        Err(other) => Err(other.to_string()),
    }
}
