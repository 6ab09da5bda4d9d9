//! The `flakeid.*` settings: their definitions (a loop over the core's option
//! table), the check hook that refuses a bad value when it is set (ALTER SYSTEM, a
//! reload, server start), and the generator builder made from them. The engine
//! states every rule (layout names, node ranges, "node or datacenter + worker");
//! this module only applies them to the configuration the next server start will
//! use and names the setting and file at fault.
//!
//! The node settings are fixed at server start, so a hook that compared a new value
//! with the running ones would refuse every valid change of layout and node made in
//! two steps. Outside server start a hook therefore checks the value against the
//! other settings as the configuration files now hold them (postgresql.conf, its
//! includes, then postgresql.auto.conf): what the next start will apply.

mod check;
mod exact;
mod files;

use crate::error::{Report, SqlFn};
use files::{described, how_to_change, where_in_files};
use flakeid_core::{Clock, Error, Generator, GeneratorBuilder, Layout, Overflow, precise_now_ms};
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PgSqlErrorCode, pg_sys};
use std::ffi::{CString, c_char};
use std::sync::{Arc, Mutex, OnceLock};

static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static NODE: GucSetting<i32> = GucSetting::<i32>::new(-1);
static DATACENTER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static WORKER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static OVERFLOW: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static CLOCK_BACKWARDS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static MAX_BORROW_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
static MAX_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
static LEASE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_TTL_MS: GucSetting<i32> = GucSetting::<i32>::new(0);
static MAX_SEQUENCE: GucSetting<i32> = GucSetting::<i32>::new(-1);
static SEAL_KEY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Where a GUC keeps its value.
enum Value {
    Int(&'static GucSetting<i32>),
    Text(&'static GucSetting<Option<CString>>),
}

/// `flakeid.<option>`: a GUC for an option of the core's table
/// ([`flakeid_core::GENERATOR_OPTIONS`]), whose description, default and range
/// come from there. What is PostgreSQL's own is said here.
struct Guc {
    option: &'static str,
    value: Value,
    /// -1 leaves it unset: the node fields (the core's default would be node 0, the
    /// same IDs as every other server left unset) and `max_sequence`.
    unset: bool,
    /// The one-line description where the core's names forms PostgreSQL does not
    /// take (a custom layout, a node source); "": the core's.
    short: &'static str,
    /// PostgreSQL's longer description.
    long: &'static str,
}

const GUC_COUNT: usize = 11;

/// The GUCs, in the order they are defined: the layout first, since at server start
/// the node hooks check against it.
#[rustfmt::skip]
static GUCS: [Guc; GUC_COUNT] = {
    const fn guc(option: &'static str, value: Value, unset: bool, long: &'static str) -> Guc {
        Guc { option, value, unset, short: "", long }
    }
    const fn own(short: &'static str, g: Guc) -> Guc {
        Guc { short, ..g }
    }
    const ID: &str = "Every server issuing IDs (primary, promoted standby, shard) needs its own node id.";
    [
        own("flakeid layout preset of the server's IDs",
            guc("layout", Value::Text(&LAYOUT), false, "snowflake, flake, discord, sonyflake, baidu, instagram or js53.")),
        own("this server's whole node id", guc("node", Value::Int(&NODE), true, ID)),
        guc("datacenter", Value::Int(&DATACENTER), true, ID),
        guc("worker", Value::Int(&WORKER), true, ID),
        guc("overflow", Value::Text(&OVERFLOW), false, "wait or borrow."),
        guc("clock_backwards", Value::Text(&CLOCK_BACKWARDS), false, "error, wait or monotonic."),
        // The URL may hold a password: only superusers (and pg_read_all_settings)
        // may read it, as primary_conninfo. Messages show it without the password.
        guc("lease", Value::Text(&LEASE), false,
            "One node id per server, held by flakeid's background worker; instead of flakeid.node."),
        guc("lease_ttl_ms", Value::Int(&LEASE_TTL_MS), false, "Renewed every third of it."),
        guc("max_borrow_ms", Value::Int(&MAX_BORROW_MS), false, ""),
        guc("max_wait_ms", Value::Int(&MAX_WAIT_MS), false, ""),
        // At most max_sequence + 1 IDs per tick (2^k - 1), checked against the
        // layout by the core's rule.
        guc("max_sequence", Value::Int(&MAX_SEQUENCE), true,
            "flake-idgen's seqMask; every server sharing a node-id namespace must use the same."),
    ]
};

impl Guc {
    /// The value as the core's text (`None`: -1, unset).
    fn text(&self) -> Option<String> {
        match self.value {
            Value::Int(setting) => Some(setting.get())
                .filter(|v| *v >= 0 || !self.unset)
                .map(|v| v.to_string()),
            Value::Text(setting) => Some(text(setting)),
        }
    }
}

/// The engine's refusal of a setting's value, as a hook's message says it.
fn reason(err: Error) -> String {
    match err {
        Error::Config { message, .. } => message,
        other => other.to_string(),
    }
}

/// `flakeid.<option>`.
fn guc_name(option: &str) -> String {
    format!("flakeid.{option}")
}

/// Whether option `name` of the core's table is a GUC.
pub(crate) fn is_guc(name: &str) -> bool {
    GUCS.iter().any(|g| g.option == name)
}

/// Values refused while the server started: PostgreSQL then warns and keeps the
/// default, so the server would silently run without them. Set in the postmaster,
/// inherited by every backend; any entry makes the generator refuse.
static REFUSED_AT_START: Mutex<Vec<Refusal>> = Mutex::new(Vec::new());
/// The layout of `flakeid.layout` when it is fixed for the server's life.
static SERVER_LAYOUT: OnceLock<Layout> = OnceLock::new();

#[derive(Debug, Clone)]
struct Refusal {
    option: &'static str,
    value: String,
    reason: String,
}

fn preloading() -> bool {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries.
    unsafe { pg_sys::process_shared_preload_libraries_in_progress }
}

/// A C string PostgreSQL keeps for the process's life (it does not copy the names,
/// descriptions and defaults of custom settings).
fn leaked(text: &str) -> *const c_char {
    CString::new(text).unwrap_or_default().into_raw()
}

/// Defines the settings: fixed at server start when preloaded; reloadable otherwise
/// (PostgreSQL refuses PGC_POSTMASTER settings defined after start, and a backend
/// that loads the library itself has no generator: only the layout matters there).
pub fn define(preloading: bool) {
    let ctx = (if preloading {
        GucContext::Postmaster
    } else {
        GucContext::Sighup
    }) as isize;
    for (guc, (int_hook, text_hook)) in GUCS.iter().zip(check::HOOKS) {
        let Some(o) = flakeid_core::generator_option(guc.option) else {
            continue;
        };
        let name = leaked(&guc_name(o.name));
        let doc = if guc.short.is_empty() { o.doc } else { guc.short };
        let short = leaked(&format!("{doc}{}", if guc.unset { " (-1: not set)" } else { "" }));
        let long = leaked(guc.long);
        let mut flags = GucFlags::default();
        if o.name.ends_with("_ms") {
            flags |= GucFlags::UNIT_MS;
        }
        if o.name == "lease" {
            flags |= GucFlags::SUPERUSER_ONLY;
        }
        let clamp = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
        // SAFETY: 'static strings and storage; the hooks are #[pg_guard]ed.
        unsafe {
            match guc.value {
                Value::Int(setting) => {
                    let (min, default) = if guc.unset {
                        (-1, -1)
                    } else {
                        (clamp(o.min), o.default.parse().unwrap_or(clamp(o.min)))
                    };
                    pg_sys::DefineCustomIntVariable(
                        name,
                        short,
                        long,
                        setting.as_ptr(),
                        default,
                        min,
                        clamp(o.max),
                        ctx as _,
                        flags.bits(),
                        Some(int_hook),
                        None,
                        None,
                    );
                }
                Value::Text(setting) => {
                    let default = if o.default.is_empty() {
                        std::ptr::null()
                    } else {
                        leaked(o.default)
                    };
                    pg_sys::DefineCustomStringVariable(
                        name,
                        short,
                        long,
                        setting.as_ptr(),
                        default,
                        ctx as _,
                        flags.bits(),
                        Some(text_hook),
                        None,
                        None,
                    );
                }
            }
        }
    }
    // The key of flakeid_next_sealed() (hex), a setting of this extension only.
    // Superusers set it (ALTER SYSTEM, or SET per session) and only they (and
    // pg_read_all_settings) may read it; SHOW ALL and pg_settings leave it out. No
    // check hook: PostgreSQL's message for a refused value quotes the value, so the
    // key is checked where it is used (seal.rs), by messages that never quote it.
    GucRegistry::define_string_guc(
        c"flakeid.seal_key",
        c"The hex key (32, 48 or 64 digits) that flakeid_next_sealed() seals with.",
        c"From openssl rand -hex 32; whitespace is ignored.",
        &SEAL_KEY,
        GucContext::Suset,
        GucFlags::default() | GucFlags::SUPERUSER_ONLY | GucFlags::NO_SHOW_ALL,
    );
    // A misspelt flakeid.* name is refused (ALTER SYSTEM) or dropped with a warning
    // (configuration files), instead of being kept as an unused placeholder (from
    // 15; 14 only warns: crate::majors).
    // SAFETY: after the definitions.
    unsafe { crate::majors::reserve_guc_prefix(c"flakeid") };
    exact::install();
    if preloading {
        note_refused_values();
    }
}

/// Integer values of the configuration files that PostgreSQL refused at server start
/// before any check hook saw them (outside the setting's range, or not a number:
/// it warns and keeps the default), or read as another number than written (`1.5`,
/// `0x10`, `010`: it says nothing). Each is remembered as the hooks' refusals are,
/// in the engine's words ([`exact::refusal`]), so every call's error names the value,
/// the file and the line, not "no node id" or another node's IDs.
fn note_refused_values() {
    let layout = text(&LAYOUT);
    let layout = if layout.is_empty() {
        "snowflake".to_string()
    } else {
        layout
    };
    for g in GUCS.iter().filter(|g| matches!(g.value, Value::Int(_))) {
        let applied = files::guc_origin(g.option).map(|(source, _)| source);
        // The command line's value is not in the files.
        if applied == Some(pg_sys::GucSource::PGC_S_ARGV) {
            continue;
        }
        let Some(value) = files::file_value(g.option) else {
            continue;
        };
        let taken = applied.is_some_and(|source| source != pg_sys::GucSource::PGC_S_DEFAULT);
        if taken && exact::decimal(&value) {
            continue;
        }
        let reason = exact::refusal(g.option, &value, &layout);
        if taken {
            // PostgreSQL took it without a word: say so as a refused value is said.
            pgrx::warning!("invalid value for parameter \"{}\": {reason}", guc_name(g.option));
        }
        if let Ok(mut refused) = REFUSED_AT_START.lock() {
            refused.push(Refusal {
                option: g.option,
                value,
                reason,
            });
        }
    }
}

/// `flakeid.seal_key` as set (`None`: unset or blank), read in place (no copy of
/// the key is made). Valid until the setting changes, which PostgreSQL does only
/// between statements.
pub fn seal_key_text() -> Option<&'static std::ffi::CStr> {
    // SAFETY: the setting's current value, a NUL-terminated string PostgreSQL owns
    // (or NULL), replaced only by SET, RESET or a reload, never during a call.
    let ptr = unsafe { *SEAL_KEY.as_ptr() };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-NULL and NUL-terminated, as above.
    let text = unsafe { std::ffi::CStr::from_ptr(ptr) };
    (!text.to_bytes().iter().all(u8::is_ascii_whitespace)).then_some(text)
}

fn text(setting: &GucSetting<Option<CString>>) -> String {
    setting
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------
// The generator's configuration

/// A value refused at server start (of option `only`, or of any), as an error.
fn refused_at_start(only: Option<&str>) -> Option<Report> {
    let refused = REFUSED_AT_START.lock().ok()?;
    let r = refused.iter().find(|r| only.is_none_or(|o| o == r.option))?;
    let at = where_in_files(r.option).map(|w| format!(" ({w})")).unwrap_or_default();
    let name = guc_name(r.option);
    Some(
        Report::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("invalid value for parameter \"{name}\": {}", r.reason),
        )
        .detail(format!(
            "{name} = {}{at} was refused when the server started, so the server runs without it \
             and issues no IDs.",
            r.value
        ))
        .hint(format!("fix {name} and restart the server")),
    )
}

/// Whether a value was refused at server start (then the backends report it: their
/// report reads the files and the caller's privileges, which only a backend in a
/// transaction may).
pub fn refused_at_server_start() -> bool {
    REFUSED_AT_START.lock().map_or(true, |r| !r.is_empty())
}

/// A generator builder from the settings. Refuses while any setting was refused at
/// start; a node source is required (an unset node is an error, not node 0). It
/// takes no host guard: the backends' generators share one counter, and the
/// launcher holds the server's guard for them all ([`crate::host_guard`]).
pub fn builder() -> Result<GeneratorBuilder, Report> {
    if let Some(report) = refused_at_start(None) {
        return Err(report);
    }
    let (node, dc, worker) = (NODE.get(), DATACENTER.get(), WORKER.get());
    // The generator's own options; the node id and the lease are decided below.
    let own = GUCS
        .iter()
        .filter(|g| !matches!(g.option, "node" | "datacenter" | "worker" | "lease" | "lease_ttl_ms"));
    let mut b = set_options(own.filter_map(|g| Some((g.option, g.text()?))))
        .map_err(setting_report)?
        .require_node();
    if lease().is_some() {
        // The node id comes from the lease (the caller adds it): none may be given too.
        if node >= 0 || dc >= 0 || worker >= 0 {
            let set: Vec<String> = [("node", node), ("datacenter", dc), ("worker", worker)]
                .into_iter()
                .filter(|(_, v)| *v >= 0)
                .map(|(s, v)| described(s, v))
                .collect();
            return Err(Report::new(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                "flakeid.lease and a node id are both set: give the node id one way",
            )
            .detail(format!("Set besides flakeid.lease: {}.", set.join(", ")))
            .hint("set the node settings to -1 (ALTER SYSTEM RESET flakeid.node, or flakeid.datacenter and flakeid.worker) and restart the server"));
        }
        return Ok(b.wait_hook(interrupt_hook()));
    }
    // flakeid.lease_ttl_ms set without a lease: given to the core, which refuses it
    // (it means nothing without one) instead of it being silently ignored.
    if is_set("lease_ttl_ms") {
        b = b
            .set_text("lease_ttl_ms", &LEASE_TTL_MS.get().to_string())
            .map_err(setting_report)?;
    }
    // The parts first: a conflict is then reported on flakeid.node, naming both.
    for (name, v) in [("datacenter", dc), ("worker", worker), ("node", node)] {
        if v >= 0 {
            b = b.set_text(name, &v.to_string()).map_err(setting_report)?;
        }
    }
    Ok(b.wait_hook(interrupt_hook()).host_guard(false))
}

/// Whether option `option`'s GUC was given a value (in a file, on the command line,
/// by SET), rather than left at its default.
fn is_set(option: &str) -> bool {
    files::guc_origin(option).is_some_and(|(source, _)| source != pg_sys::GucSource::PGC_S_DEFAULT)
}

/// A builder with the generator options that GUCs hold, each by the name the
/// core's table gives it (`flakeid.<name>` is the GUC of option `<name>`), through
/// [`GeneratorBuilder::set_text`]: a bad value is refused by the core, with the
/// same kind, field and message as in every other binding. (flakeid.lease and
/// flakeid.lease_ttl_ms are the lease worker's: the generator gets the node id the
/// lease holds.)
pub(crate) fn set_options<I>(values: I) -> Result<GeneratorBuilder, Error>
where
    I: IntoIterator<Item = (&'static str, String)>,
{
    let mut b = Generator::builder(Layout::SNOWFLAKE).clock(BackendClock);
    for (name, text) in values {
        debug_assert!(is_guc(name), "{name} is not a GUC");
        b = b.set_text(name, &text)?;
    }
    Ok(b)
}

/// A cancel request ends a wait for the clock (the core polls this every ~10 ms).
fn interrupt_hook() -> flakeid_core::WaitHook {
    Arc::new(|| {
        // SAFETY: a sig_atomic_t flag that PostgreSQL's signal handlers set.
        if unsafe { std::ptr::read_volatile(&raw const pg_sys::InterruptPending) } != 0 {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    })
}

/// `flakeid.lease` and `flakeid.lease_ttl_ms`, when a lease is configured.
#[derive(Debug, Clone)]
pub struct Lease {
    pub url: String,
    pub ttl_ms: u64,
}

impl Lease {
    /// The URL without its password, for messages and `flakeid_status()`: to
    /// those who may read the setting (it is GUC_SUPERUSER_ONLY), the store's
    /// address too; to others, its scheme only.
    pub fn shown(&self) -> String {
        if files::may_read_all_settings() {
            self.redacted()
        } else {
            let scheme = self.url.split("://").next().unwrap_or("");
            format!("{scheme}://…")
        }
    }

    /// The URL without its password (for the server log).
    pub fn redacted(&self) -> String {
        flakeid_core::lease::redact_passwords(&self.url)
    }
}

/// The lease settings, if `flakeid.lease` is set (and was not refused at start).
pub fn lease() -> Option<Lease> {
    let url = text(&LEASE);
    (!url.trim().is_empty()).then(|| Lease {
        url,
        ttl_ms: LEASE_TTL_MS.get() as u64,
    })
}

/// `flakeid.overflow` and `flakeid.max_borrow_ms`: how far the server may issue
/// ahead of its clock (a lease's fence covers that much past its window).
pub fn borrowing() -> (Overflow, u64) {
    (
        text(&OVERFLOW).parse::<Overflow>().unwrap_or(Overflow::Wait),
        MAX_BORROW_MS.get() as u64,
    )
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
    if *field == "node" && node < 0 {
        let (message, hint) = if dc >= 0 && worker < 0 {
            (
                format!("{} is set but flakeid.worker is not", described("datacenter", dc)),
                how_to_change("worker"),
            )
        } else {
            (
                "this server has no node id: flakeid.node, flakeid.datacenter and flakeid.worker, or \
                 flakeid.lease must be set"
                    .to_string(),
                "ALTER SYSTEM SET flakeid.node = <a number no other server issuing IDs uses>, or \
                 ALTER SYSTEM SET flakeid.lease = '<a lease URL>', then restart the server"
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
        let mut set = vec![described("node", node)];
        if dc >= 0 {
            set.push(described("datacenter", dc));
        }
        if worker >= 0 {
            set.push(described("worker", worker));
        }
        return Report::new(
            code,
            "flakeid.node and flakeid.datacenter/flakeid.worker are both set: give the node id one way",
        )
        .detail(format!("Set: {}.", set.join(", ")))
        .hint("set the ones you do not use to -1 (ALTER SYSTEM RESET flakeid.node, or flakeid.datacenter and flakeid.worker) and restart the server");
    }
    let report = Report::new(
        code,
        format!("invalid value for parameter \"flakeid.{field}\": {message}"),
    );
    if is_guc(field) {
        report.hint(how_to_change(field))
    } else {
        report
    }
}

/// The layout of `flakeid.layout` (for the functions called without a layout name).
#[track_caller]
/// The server's layout, or `None` where [`server_layout`] would refuse: for callers
/// that must not raise (an error hook).
pub fn server_layout_quiet() -> Option<Layout> {
    if let Some(layout) = SERVER_LAYOUT.get() {
        return Some(*layout);
    }
    if refused_at_start(Some("layout")).is_some() {
        return None;
    }
    Layout::preset(&text(&LAYOUT)).ok()
}

pub fn server_layout() -> Layout {
    if let Some(layout) = SERVER_LAYOUT.get() {
        return *layout;
    }
    if let Some(report) = refused_at_start(Some("layout")) {
        report.raise(SqlFn::PURE);
    }
    let layout = match Layout::preset(&text(&LAYOUT)) {
        Ok(l) => l,
        Err(err) => setting_report(err).raise(SqlFn::PURE),
    };
    // Fixed for the server's life only when preloaded (otherwise it is reloadable).
    if crate::shmem::preloaded() {
        let _ = SERVER_LAYOUT.set(layout);
    }
    layout
}

/// The sequence width of the server's counter word, by the engine's rule, under
/// `flakeid.max_sequence` (-1: not set; a bad value was refused when set).
pub fn counter_sequence_bits(layout: &Layout) -> u32 {
    let max_sequence = u64::try_from(MAX_SEQUENCE.get()).ok();
    layout
        .counter_sequence_bits(max_sequence)
        .unwrap_or(layout.sequence_bits())
}

/// The OS clock, read on every call. The core's default clock serves a cache from a
/// background thread; PostgreSQL backends are single-threaded processes (and there
/// may be hundreds), so each reads the vDSO clock instead.
#[derive(Debug)]
pub struct BackendClock;

impl Clock for BackendClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        precise_now_ms()
    }
}
