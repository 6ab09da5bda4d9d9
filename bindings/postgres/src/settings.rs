//! The `flakeid.*` settings: their definitions, the check hooks that refuse a bad
//! value when it is set (ALTER SYSTEM, a reload, server start), and the generator
//! builder made from them. The engine states every rule (layout names, node ranges,
//! "node or datacenter + worker"); this file only applies them to the configuration
//! the next server start will use and names the setting and file at fault.
//!
//! The node settings are fixed at server start, so a hook that compared a new value
//! with the running ones would refuse every valid change of layout and node made in
//! two steps. Outside server start a hook therefore checks the value against the
//! other settings as the configuration files now hold them (postgresql.conf, its
//! includes, then postgresql.auto.conf): what the next start will apply.

use crate::error::{Report, SqlFn};
use crate::server::BackendClock;
use flakeid_core::{ClockBackwards, Error, Generator, GeneratorBuilder, Layout, Overflow};
use pgrx::guc::GucCheckError;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PgSqlErrorCode, pg_guard, pg_sys};
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::{Arc, Mutex, OnceLock};

static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"snowflake"));
static NODE: GucSetting<i32> = GucSetting::<i32>::new(-1);
static DATACENTER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static WORKER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static OVERFLOW: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"wait"));
static CLOCK_BACKWARDS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"error"));
static MAX_BORROW_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_MAX_BORROW_MS as i32);
static MAX_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_MAX_WAIT_MS as i32);

/// Values refused while the server started: PostgreSQL then warns and keeps the
/// default, so the server would silently run without them. Set in the postmaster,
/// inherited by every backend; any entry makes the generator refuse.
static REFUSED_AT_START: Mutex<Vec<Refusal>> = Mutex::new(Vec::new());
/// The layout of `flakeid.layout` when it is fixed for the server's life.
static SERVER_LAYOUT: OnceLock<Layout> = OnceLock::new();

#[derive(Debug, Clone)]
struct Refusal {
    setting: Setting,
    value: String,
    reason: String,
}

/// The node settings and the layout, whose values are checked together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Layout,
    Node,
    Datacenter,
    Worker,
    Overflow,
    ClockBackwards,
}

impl Setting {
    fn name(self) -> &'static str {
        match self {
            Setting::Layout => "flakeid.layout",
            Setting::Node => "flakeid.node",
            Setting::Datacenter => "flakeid.datacenter",
            Setting::Worker => "flakeid.worker",
            Setting::Overflow => "flakeid.overflow",
            Setting::ClockBackwards => "flakeid.clock_backwards",
        }
    }
    /// The setting the engine's field name stands for.
    fn of_field(field: &str) -> Option<Setting> {
        Some(match field {
            "layout" => Setting::Layout,
            "node" => Setting::Node,
            "datacenter" => Setting::Datacenter,
            "worker" => Setting::Worker,
            "overflow" => Setting::Overflow,
            "clock_backwards" => Setting::ClockBackwards,
            _ => return None,
        })
    }
}

fn preloading() -> bool {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    unsafe { pg_sys::process_shared_preload_libraries_in_progress }
}

/// Defines the settings: fixed at server start when preloaded; reloadable otherwise
/// (PostgreSQL refuses PGC_POSTMASTER settings defined after start, and a backend
/// that loads the library itself has no generator: only the layout matters there).
pub fn define(preloading: bool) {
    let ctx = || {
        if preloading {
            GucContext::Postmaster
        } else {
            GucContext::Sighup
        }
    };
    let flags = GucFlags::default();
    // SAFETY (all of these): the hooks are #[pg_guard]ed extern "C-unwind" functions.
    // The layout comes first: at server start the node hooks check against it.
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"flakeid.layout",
            c"flakeid layout preset of the server's IDs.",
            c"snowflake, flake, discord, sonyflake, baidu or instagram.",
            &LAYOUT,
            ctx(),
            flags,
            Some(check_layout),
            None,
            None,
        );
    }
    let ids = [
        (
            c"flakeid.node",
            c"This server's whole node id (-1: not set).",
            &NODE,
            check_node as unsafe extern "C-unwind" fn(_, _, _) -> _,
        ),
        (
            c"flakeid.datacenter",
            c"This server's datacenter id (-1: not set).",
            &DATACENTER,
            check_datacenter,
        ),
        (
            c"flakeid.worker",
            c"This server's worker id (-1: not set).",
            &WORKER,
            check_worker,
        ),
    ];
    for (name, short, setting, hook) in ids {
        unsafe {
            GucRegistry::define_int_guc_with_hooks(
                name,
                short,
                c"Every server issuing IDs (primary, promoted standby, shard) needs its own node id.",
                setting,
                -1,
                i32::MAX,
                ctx(),
                flags,
                Some(hook),
                None,
                None,
            );
        }
    }
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"flakeid.overflow",
            c"When a tick's sequence is used up: wait or borrow.",
            c"",
            &OVERFLOW,
            ctx(),
            flags,
            Some(check_overflow),
            None,
            None,
        );
        GucRegistry::define_string_guc_with_hooks(
            c"flakeid.clock_backwards",
            c"When the clock is behind IDs already issued: error, wait or monotonic.",
            c"",
            &CLOCK_BACKWARDS,
            ctx(),
            flags,
            Some(check_clock_backwards),
            None,
            None,
        );
    }
    // The engine's bound for both: PostgreSQL's range check names setting and range.
    let max_ms = flakeid_core::MAX_POLICY_MS as i32;
    let ms = [
        (
            c"flakeid.max_borrow_ms",
            c"How far overflow = borrow may run ahead of the clock.",
            &MAX_BORROW_MS,
        ),
        (
            c"flakeid.max_wait_ms",
            c"Longest wait for a clock behind IDs already issued.",
            &MAX_WAIT_MS,
        ),
    ];
    for (name, short, setting) in ms {
        GucRegistry::define_int_guc(name, short, c"", setting, 0, max_ms, ctx(), flags | GucFlags::UNIT_MS);
    }
    // A misspelt flakeid.* name is refused (ALTER SYSTEM) or dropped with a warning
    // (configuration files), instead of being kept as an unused placeholder.
    // SAFETY: called with a NUL-terminated prefix after the definitions.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"flakeid".as_ptr()) };
}

fn text(setting: &GucSetting<Option<CString>>) -> String {
    setting
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------
// Check hooks

#[pg_guard]
unsafe extern "C-unwind" fn check_layout(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate (NULL or a C string).
    let value = unsafe { c_text(*newval) };
    hook_result(Setting::Layout, &value, check_text(Setting::Layout, &value))
}

#[pg_guard]
unsafe extern "C-unwind" fn check_overflow(
    newval: *mut *mut c_char,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { c_text(*newval) };
    hook_result(Setting::Overflow, &value, check_text(Setting::Overflow, &value))
}

#[pg_guard]
unsafe extern "C-unwind" fn check_clock_backwards(
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
unsafe extern "C-unwind" fn check_node(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: PostgreSQL passes a valid pointer to the candidate.
    let value = unsafe { *newval };
    hook_result(Setting::Node, &value.to_string(), check_id(Setting::Node, value))
}

#[pg_guard]
unsafe extern "C-unwind" fn check_datacenter(
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
unsafe extern "C-unwind" fn check_worker(
    newval: *mut i32,
    _extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    let value = unsafe { *newval };
    hook_result(Setting::Worker, &value.to_string(), check_id(Setting::Worker, value))
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
            "-1 leaves it unset; flakeid_next() needs flakeid.node, or flakeid.datacenter and flakeid.worker"
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
            let layout = Layout::preset(value).map_err(reason)?;
            let mut pending = Pending::now();
            pending.layout = Some(value.to_string());
            check_node_settings(layout, &pending, Setting::Layout)
        }
        Setting::Overflow => Overflow::parse(value).map(drop).map_err(reason),
        Setting::ClockBackwards => ClockBackwards::parse(value).map(drop).map_err(reason),
        Setting::Node | Setting::Datacenter | Setting::Worker => Ok(()),
    }
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
                    layout.name().unwrap_or("custom"),
                    entry.map_or_else(|| at_fault.name().to_string(), Entry::describe)
                ))
            } else if at_fault == changed {
                Err(format!(
                    "{message} (flakeid.layout is {})",
                    layout.name().unwrap_or("custom")
                ))
            } else {
                Ok(())
            }
        }
        Err(other) => Err(other.to_string()),
    }
}

// ---------------------------------------------------------------------------------
// The configuration the next server start applies

/// A node setting's value and where it is set.
#[derive(Debug, Clone)]
struct Entry {
    setting: Setting,
    value: i32,
    /// `file:line`, when set in a configuration file.
    source: Option<String>,
}

impl Entry {
    fn describe(&self) -> String {
        match &self.source {
            Some(at) => format!("{} = {} ({at})", self.setting.name(), self.value),
            None => format!("{} = {}", self.setting.name(), self.value),
        }
    }
}

/// The layout and node settings that the next server start would apply.
#[derive(Debug, Clone)]
struct Pending {
    layout: Option<String>,
    node: Entry,
    datacenter: Entry,
    worker: Entry,
}

impl Pending {
    /// At server start: the values being applied (in definition order). Otherwise:
    /// the configuration files' (the last line for each name wins, as PostgreSQL
    /// reads them), unless the running value came from the command line.
    fn now() -> Pending {
        let entry = |setting: Setting, value: i32| Entry {
            setting,
            value,
            source: None,
        };
        let mut p = Pending {
            layout: Some(text(&LAYOUT)),
            node: entry(Setting::Node, NODE.get()),
            datacenter: entry(Setting::Datacenter, DATACENTER.get()),
            worker: entry(Setting::Worker, WORKER.get()),
        };
        if preloading() {
            return p;
        }
        let files = config_file_values();
        for (setting, slot) in [
            (Setting::Node, &mut p.node),
            (Setting::Datacenter, &mut p.datacenter),
            (Setting::Worker, &mut p.worker),
        ] {
            if from_command_line(setting.name()) {
                continue;
            }
            *slot = match files.iter().find(|f| f.name == setting.name()) {
                Some(f) => Entry {
                    setting,
                    value: parse_int(&f.value).unwrap_or(-1),
                    source: Some(f.at()),
                },
                None => entry(setting, -1),
            };
        }
        if !from_command_line(Setting::Layout.name()) {
            p.layout = Some(
                files
                    .iter()
                    .find(|f| f.name == Setting::Layout.name())
                    .map_or_else(|| "snowflake".to_string(), |f| f.value.clone()),
            );
        }
        p
    }

    fn entry(&self, setting: Setting) -> Option<&Entry> {
        match setting {
            Setting::Node => Some(&self.node),
            Setting::Datacenter => Some(&self.datacenter),
            Setting::Worker => Some(&self.worker),
            _ => None,
        }
    }
}

/// One `flakeid.*` line of the configuration files.
#[derive(Debug, Clone)]
struct FileValue {
    name: String,
    value: String,
    file: String,
    line: i32,
}

impl FileValue {
    /// `file line N`: the whole path (for hooks, whose messages go to ALTER SYSTEM's
    /// superuser or to the server log).
    fn at(&self) -> String {
        format!("{} line {}", self.file, self.line)
    }
}

/// The last `flakeid.*` line for each name in postgresql.conf (with its includes)
/// and then postgresql.auto.conf, as PostgreSQL's own reload reads them.
fn config_file_values() -> Vec<FileValue> {
    let mut out: Vec<FileValue> = Vec::new();
    // SAFETY: PostgreSQL's configuration parser, as ProcessConfigFile calls it; the
    // list is read, then freed.
    unsafe {
        let mut head: *mut pg_sys::ConfigVariable = std::ptr::null_mut();
        let mut tail: *mut pg_sys::ConfigVariable = std::ptr::null_mut();
        let main = pg_sys::ConfigFileName;
        if !main.is_null() {
            pg_sys::ParseConfigFile(
                main,
                true,
                std::ptr::null(),
                0,
                0,
                pg_sys::DEBUG1 as i32,
                &mut head,
                &mut tail,
            );
        }
        pg_sys::ParseConfigFile(
            c"postgresql.auto.conf".as_ptr(),
            false,
            std::ptr::null(),
            0,
            0,
            pg_sys::DEBUG1 as i32,
            &mut head,
            &mut tail,
        );
        let mut item = head;
        while !item.is_null() {
            let v = &*item;
            if !v.name.is_null() && !v.value.is_null() {
                let name = CStr::from_ptr(v.name).to_string_lossy().to_ascii_lowercase();
                if name.starts_with("flakeid.") {
                    let value = FileValue {
                        name,
                        value: CStr::from_ptr(v.value).to_string_lossy().into_owned(),
                        file: if v.filename.is_null() {
                            String::new()
                        } else {
                            CStr::from_ptr(v.filename).to_string_lossy().into_owned()
                        },
                        line: v.sourceline,
                    };
                    out.retain(|o| o.name != value.name);
                    out.push(value);
                }
            }
            item = v.next;
        }
        pg_sys::FreeConfigVariables(head);
    }
    out
}

fn parse_int(text: &str) -> Option<i32> {
    let c = CString::new(text).ok()?;
    let mut value = 0i32;
    // SAFETY: PostgreSQL's own integer parser for settings (accepts what it accepts).
    let ok = unsafe { pg_sys::parse_int(c.as_ptr(), &mut value, 0, std::ptr::null_mut()) };
    ok.then_some(value)
}

/// The running value's origin: `(source file, line)` when it came from a file.
fn guc_origin(name: &str) -> Option<(pg_sys::GucSource::Type, Option<(String, i32)>)> {
    // SAFETY: the GUC table, read-only, in the process that owns it.
    unsafe {
        let vars = pg_sys::get_guc_variables();
        let n = pg_sys::GetNumConfigOptions();
        for i in 0..n as usize {
            let var = &**vars.add(i);
            if var.name.is_null() || !CStr::from_ptr(var.name).to_string_lossy().eq_ignore_ascii_case(name) {
                continue;
            }
            let file = (!var.sourcefile.is_null()).then(|| {
                (
                    CStr::from_ptr(var.sourcefile).to_string_lossy().into_owned(),
                    var.sourceline,
                )
            });
            return Some((var.source, file));
        }
    }
    None
}

fn from_command_line(name: &str) -> bool {
    matches!(guc_origin(name), Some((source, _)) if source == pg_sys::GucSource::PGC_S_ARGV)
}

/// A configuration file's path as the current user may see it: whole for those who
/// may read every setting's source (superusers, pg_read_all_settings), its name
/// otherwise. Only called inside a transaction (an SQL function's error).
fn shown_path(path: &str) -> String {
    // SAFETY: privilege checks of the current user, inside a transaction.
    let privileged = unsafe {
        pg_sys::superuser()
            || pg_sys::has_privs_of_role(
                pg_sys::GetUserId(),
                pg_sys::Oid::from(pg_sys::ROLE_PG_READ_ALL_SETTINGS),
            )
    };
    if privileged {
        path.to_string()
    } else {
        std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
    }
}

/// Where a setting's running value comes from, and how to change it there.
fn how_to_change(setting: Setting) -> String {
    match guc_origin(setting.name()).and_then(|(_, file)| file) {
        Some((file, line)) if file.ends_with("postgresql.auto.conf") => format!(
            "{name} was set with ALTER SYSTEM ({} line {line}): change it with ALTER SYSTEM SET {name} = ... \
             (or ALTER SYSTEM RESET {name}) and restart the server",
            shown_path(&file),
            name = setting.name()
        ),
        Some((file, line)) => format!(
            "{} is set in {} line {line}: change it there and restart the server",
            setting.name(),
            shown_path(&file)
        ),
        None => format!(
            "set {} with ALTER SYSTEM or in postgresql.conf and restart the server",
            setting.name()
        ),
    }
}

/// Where the configuration files set `setting` now (for values refused at start,
/// whose running value is the default).
fn where_in_files(setting: Setting) -> Option<String> {
    config_file_values()
        .into_iter()
        .find(|f| f.name == setting.name())
        .map(|f| format!("{} line {}", shown_path(&f.file), f.line))
}

// ---------------------------------------------------------------------------------
// The generator's configuration

/// A refusal at server start, as an error of `func`.
fn refused_at_start(only: Option<Setting>) -> Option<Report> {
    let refused = REFUSED_AT_START.lock().ok()?;
    let r = refused.iter().find(|r| only.is_none_or(|s| s == r.setting))?;
    let at = where_in_files(r.setting).map(|w| format!(" ({w})")).unwrap_or_default();
    Some(
        Report::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{}\": {}", r.setting.name(), r.reason),
        )
        .detail(format!(
            "{} = {}{at} was refused when the server started, so the server runs without it \
             and issues no IDs.",
            r.setting.name(),
            r.value
        ))
        .hint(format!("fix {} and restart the server", r.setting.name())),
    )
}

/// A generator builder from the settings. Refuses while any setting was refused at
/// start; a node source is required (an unset node is an error, not node 0).
pub fn builder() -> Result<GeneratorBuilder, Report> {
    if let Some(report) = refused_at_start(None) {
        return Err(report);
    }
    let (node, dc, worker) = (NODE.get(), DATACENTER.get(), WORKER.get());
    let parse = |r: Result<GeneratorBuilder, Error>| r.map_err(setting_report);
    let layout = Layout::preset(&text(&LAYOUT)).map_err(setting_report)?;
    let mut b = Generator::builder(layout).clock(BackendClock).require_node();
    b = parse(Overflow::parse(&text(&OVERFLOW)).map(|o| b.overflow(o)))?;
    b = parse(ClockBackwards::parse(&text(&CLOCK_BACKWARDS)).map(|c| b.clock_backwards(c)))?;
    b = b
        .max_borrow_ms(MAX_BORROW_MS.get() as u64)
        .max_wait_ms(MAX_WAIT_MS.get() as u64);
    // The parts first: a conflict is then reported on flakeid.node, naming both.
    if dc >= 0 {
        b = b.datacenter(dc as u64);
    }
    if worker >= 0 {
        b = b.worker(worker as u64);
    }
    if node >= 0 {
        b = b.node(node as u64);
    }
    // A cancel request ends a wait for the clock (the core polls this every ~10 ms).
    Ok(b.wait_hook(Arc::new(|| {
        // SAFETY: a sig_atomic_t flag that PostgreSQL's signal handlers set.
        if unsafe { std::ptr::read_volatile(&raw const pg_sys::InterruptPending) } != 0 {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    })))
}

/// This server's node id by the settings (building a throwaway generator).
pub fn node_id() -> Result<u64, Report> {
    builder()?.build().map(|g| g.node()).map_err(setting_report)
}

/// An engine error about the settings, naming the setting and where it is set.
pub fn setting_report(err: Error) -> Report {
    let Error::Config { field, message } = &err else {
        return Report::new(crate::error::sqlstate(err.kind()), err.to_string());
    };
    let code = PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE;
    let (node, dc, worker) = (NODE.get(), DATACENTER.get(), WORKER.get());
    let described = |s: Setting, v: i32| match guc_origin(s.name()).and_then(|(_, f)| f) {
        Some((file, line)) => format!("{} = {v} ({} line {line})", s.name(), shown_path(&file)),
        None => format!("{} = {v}", s.name()),
    };
    if *field == "node" && node < 0 {
        let (message, hint) = if dc >= 0 && worker < 0 {
            (
                format!(
                    "{} is set but flakeid.worker is not",
                    described(Setting::Datacenter, dc)
                ),
                how_to_change(Setting::Worker),
            )
        } else {
            (
                "this server has no node id: flakeid.node, or flakeid.datacenter and flakeid.worker, \
                 must be set"
                    .to_string(),
                "ALTER SYSTEM SET flakeid.node = <a number no other server issuing IDs uses>, then restart \
                 the server"
                    .to_string(),
            )
        };
        return Report::new(code, message)
            .detail(
                "Without one it would issue node 0's IDs, as would every other server left unset: \
                 the same IDs.",
            )
            .hint(hint);
    }
    if *field == "node" && node >= 0 && (dc >= 0 || worker >= 0) {
        let mut set = vec![described(Setting::Node, node)];
        if dc >= 0 {
            set.push(described(Setting::Datacenter, dc));
        }
        if worker >= 0 {
            set.push(described(Setting::Worker, worker));
        }
        return Report::new(
            code,
            "flakeid.node and flakeid.datacenter/flakeid.worker are both set: give the node id one way",
        )
        .detail(format!("Set: {}.", set.join(", ")))
        .hint("set the ones you do not use to -1 (ALTER SYSTEM RESET flakeid.node, or flakeid.datacenter and flakeid.worker) and restart the server");
    }
    let setting = Setting::of_field(field);
    let name = setting.map_or_else(|| format!("flakeid.{field}"), |s| s.name().to_string());
    let report = Report::new(code, format!("invalid value for parameter \"{name}\": {message}"));
    match setting {
        Some(s) => report.hint(how_to_change(s)),
        None => report,
    }
}

/// The layout of `flakeid.layout` (for the functions called without a layout name).
#[track_caller]
pub fn server_layout() -> Layout {
    if let Some(layout) = SERVER_LAYOUT.get() {
        return *layout;
    }
    if let Some(report) = refused_at_start(Some(Setting::Layout)) {
        report.raise(SqlFn::PURE);
    }
    let layout = match Layout::preset(&text(&LAYOUT)) {
        Ok(l) => l,
        Err(err) => setting_report(err).raise(SqlFn::PURE),
    };
    // Fixed for the server's life only when preloaded (otherwise it is reloadable).
    if crate::server::preloaded() {
        let _ = SERVER_LAYOUT.set(layout);
    }
    layout
}
