//! The check hooks: each value is refused when it is set (ALTER SYSTEM: an ERROR; a
//! reload: a log line; server start: a warning, and the value is remembered so
//! that the generator refuses rather than run without it).

use super::files::{Entry, Pending};
use super::{BackendClock, REFUSED_AT_START, Refusal, Setting, preloading};
use flakeid_core::{Error, Generator, Layout, LeaseSpec};
use pgrx::guc::GucCheckError;
use pgrx::{pg_guard, pg_sys};
use std::ffi::{CStr, c_char, c_void};

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_layout(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate (NULL or a C string).
    let value = unsafe { c_text(*newval) };
    hook_result(Setting::Layout, &value, check_text(Setting::Layout, &value))
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_overflow(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { c_text(*newval) };
    hook_result(Setting::Overflow, &value, check_text(Setting::Overflow, &value))
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_clock_backwards(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { c_text(*newval) };
    hook_result(
        Setting::ClockBackwards,
        &value,
        check_text(Setting::ClockBackwards, &value),
    )
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_lease(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { c_text(*newval) };
    // Remembered and shown without its password.
    let shown = flakeid_core::lease::redact_passwords(&value);
    hook_result(Setting::Lease, &shown, check_lease_value(&value))
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_node(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate.
    let value = unsafe { *newval };
    hook_result(Setting::Node, &value.to_string(), check_id(Setting::Node, value))
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_datacenter(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { *newval };
    hook_result(
        Setting::Datacenter,
        &value.to_string(),
        check_id(Setting::Datacenter, value),
    )
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_worker(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { *newval };
    hook_result(Setting::Worker, &value.to_string(), check_id(Setting::Worker, value))
}

#[pg_guard]
pub(super) unsafe extern "C-unwind" fn check_max_sequence(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate.
    let value = unsafe { *newval };
    hook_result(
        Setting::MaxSequence,
        &value.to_string(),
        check_max_sequence_value(value),
    )
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

/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn c_text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Reports a refusal the way PostgreSQL shows a hook's: as the primary message (an
/// ERROR for ALTER SYSTEM, a log line at reload, a WARNING at server start).
fn hook_result(setting: Setting, value: &str, result: Result<(), String>) -> bool {
    let Err(reason) = result else { return true };
    if preloading()
        && let Ok(mut refused) = REFUSED_AT_START.lock()
    {
        refused.push(Refusal {
            setting,
            value: value.to_string(),
            reason: reason.clone(),
        });
    }
    let message = format!("invalid value for parameter \"{}\": {reason}", setting.name());
    let hint = match setting {
        Setting::Node | Setting::Datacenter | Setting::Worker => {
            "-1 leaves it unset; flakeid_next() needs flakeid.node, flakeid.datacenter and flakeid.worker, or flakeid.lease"
        }
        Setting::Lease => {
            "a lease URL: redis[s]://, postgres[ql]://, etcd[s]:// or file:// (docs/leases.md); '' leaves it unset"
        }
        _ => "",
    };
    let error = GucCheckError::new(message);
    let error = if hint.is_empty() { error } else { error.with_hint(hint) };
    // SAFETY: we are inside a GUC check hook.
    unsafe { error.apply() };
    false
}

fn reason(err: Error) -> String {
    match err {
        Error::Config { message, .. } => message,
        other => other.to_string(),
    }
}

fn check_text(setting: Setting, value: &str) -> Result<(), String> {
    match setting {
        Setting::Layout => {
            // Through the core's table (field `layout`), then the preset it names.
            super::set_options([("layout", value.to_string())]).map_err(reason)?;
            let layout = Layout::preset(value).map_err(reason)?;
            let mut pending = Pending::now();
            pending.layout = Some(value.to_string());
            check_node_settings(layout, &pending, Setting::Layout)
        }
        // Through the core's table, as every binding's options.
        Setting::Overflow => super::set_options([("overflow", value.to_string())])
            .map(drop)
            .map_err(reason),
        Setting::ClockBackwards => super::set_options([("clock_backwards", value.to_string())])
            .map(drop)
            .map_err(reason),
        Setting::Node
        | Setting::Datacenter
        | Setting::Worker
        | Setting::Lease
        | Setting::LeaseTtlMs
        | Setting::MaxSequence => Ok(()),
    }
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

fn check_id(setting: Setting, value: i32) -> Result<(), String> {
    let mut pending = Pending::now();
    match setting {
        Setting::Node => pending.node.value = value,
        Setting::Datacenter => pending.datacenter.value = value,
        _ => pending.worker.value = value,
    }
    // A bad layout is the layout hook's to report.
    let Ok(layout) = Layout::preset(pending.layout.as_deref().unwrap_or("snowflake")) else {
        return Ok(());
    };
    check_node_settings(layout, &pending, setting)
}

/// Whether the node settings of `pending` fit `layout`, for a change of `changed`:
/// only what that change makes wrong is its fault.
fn check_node_settings(layout: Layout, pending: &Pending, changed: Setting) -> Result<(), String> {
    let (node, dc, worker) = (&pending.node, &pending.datacenter, &pending.worker);
    if let (Some(lease), Some(this)) = (pending.lease_described(), pending.entry(changed))
        && this.value >= 0
    {
        return Err(format!(
            "{} = {} cannot be set while {lease} is set: the node id comes either from a lease or from \
             flakeid.node / flakeid.datacenter and flakeid.worker (ALTER SYSTEM RESET flakeid.lease first)",
            changed.name(),
            this.value
        ));
    }
    let parts_set = dc.value >= 0 || worker.value >= 0;
    if node.value >= 0 && parts_set {
        match changed {
            Setting::Node => {
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
            Setting::Datacenter | Setting::Worker => {
                let this = if changed == Setting::Datacenter { dc } else { worker };
                if this.value >= 0 {
                    return Err(format!(
                        "{} = {} cannot be set while {} is set: give the node id either in flakeid.node \
                         or in flakeid.datacenter and flakeid.worker (set flakeid.node to -1 first)",
                        changed.name(),
                        this.value,
                        node.describe()
                    ));
                }
            }
            _ => {}
        }
    }
    // The ranges, by the engine's rule; a conflict is reported above, so here the
    // node id is taken from one source only.
    let mut b = Generator::builder(layout).clock(BackendClock);
    if node.value >= 0 && (changed == Setting::Node || !parts_set) {
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
            let Some(at_fault) = Setting::of_field(field) else {
                return Err(message);
            };
            if changed == Setting::Layout {
                let entry = pending.entry(at_fault);
                Err(format!(
                    "the {} layout cannot hold {}: {message}",
                    layout.display_name(),
                    entry.map_or_else(|| at_fault.name().to_string(), Entry::describe)
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
