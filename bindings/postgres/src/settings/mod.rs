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

mod check;
mod files;

use crate::error::{Report, SqlFn};
use check::{
    check_clock_backwards, check_datacenter, check_layout, check_lease, check_max_sequence, check_node, check_overflow,
    check_worker,
};
use files::{described, how_to_change, where_in_files};
use flakeid_core::{Clock, Error, Generator, GeneratorBuilder, Layout, Overflow, precise_now_ms};
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PgSqlErrorCode, pg_sys};
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"snowflake"));
static NODE: GucSetting<i32> = GucSetting::<i32>::new(-1);
static DATACENTER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static WORKER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static OVERFLOW: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"wait"));
static CLOCK_BACKWARDS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"error"));
static MAX_BORROW_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_MAX_BORROW_MS as i32);
static MAX_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_MAX_WAIT_MS as i32);
static LEASE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_TTL_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_LEASE_TTL_MS as i32);
static MAX_SEQUENCE: GucSetting<i32> = GucSetting::<i32>::new(-1);
static SEAL_KEY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

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
    Lease,
    LeaseTtlMs,
    MaxSequence,
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
            Setting::Lease => "flakeid.lease",
            Setting::LeaseTtlMs => "flakeid.lease_ttl_ms",
            Setting::MaxSequence => "flakeid.max_sequence",
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
            "lease" => Setting::Lease,
            "lease_ttl_ms" => Setting::LeaseTtlMs,
            "max_sequence" => Setting::MaxSequence,
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
            c"snowflake, flake, discord, sonyflake, baidu, instagram or js53.",
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
    // The URL may hold a password: only superusers (and pg_read_all_settings) may
    // read it, as primary_conninfo. Messages show it without the password.
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"flakeid.lease",
            c"Lease this server's node id from a store (redis://, postgres://, etcd://, file://).",
            c"One node id per server, held by flakeid's background worker; instead of flakeid.node.",
            &LEASE,
            ctx(),
            flags | GucFlags::SUPERUSER_ONLY,
            Some(check_lease),
            None,
            None,
        );
    }
    // The ranges are the core's table's (GENERATOR_OPTIONS): PostgreSQL's range
    // check names setting and range.
    let (lo, hi) = bounds("lease_ttl_ms");
    GucRegistry::define_int_guc(
        c"flakeid.lease_ttl_ms",
        c"How long the store keeps the lease after a renewal (renewed every third of it).",
        c"",
        &LEASE_TTL_MS,
        lo,
        hi,
        ctx(),
        flags | GucFlags::UNIT_MS,
    );
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
        let option = name.to_str().unwrap_or("").trim_start_matches("flakeid.");
        let (lo, hi) = bounds(option);
        GucRegistry::define_int_guc(name, short, c"", setting, lo, hi, ctx(), flags | GucFlags::UNIT_MS);
    }
    // At most max_sequence + 1 IDs per tick (2^k - 1; -1: the layout's whole
    // sequence field), checked against the layout by the core's rule.
    unsafe {
        GucRegistry::define_int_guc_with_hooks(
            c"flakeid.max_sequence",
            c"At most max_sequence + 1 IDs per tick: 2^k - 1 within the layout's sequence field (-1: not set).",
            c"flake-idgen's seqMask; every server sharing a node-id namespace must use the same.",
            &MAX_SEQUENCE,
            -1,
            i32::MAX,
            ctx(),
            flags,
            Some(check_max_sequence),
            None,
            None,
        );
    }
    // The key of flakeid_next_sealed() (hex). Superusers set it (ALTER SYSTEM, or SET
    // per session) and only they (and pg_read_all_settings) may read it; SHOW ALL and
    // pg_settings leave it out. No check hook: PostgreSQL's message for a refused
    // value quotes the value, so the key is checked where it is used (seal.rs),
    // by messages that never quote it.
    GucRegistry::define_string_guc(
        c"flakeid.seal_key",
        c"The hex key (32, 48 or 64 digits) that flakeid_next_sealed() seals with.",
        c"From openssl rand -hex 32; whitespace is ignored.",
        &SEAL_KEY,
        GucContext::Suset,
        flags | GucFlags::SUPERUSER_ONLY | GucFlags::NO_SHOW_ALL,
    );
    // A misspelt flakeid.* name is refused (ALTER SYSTEM) or dropped with a warning
    // (configuration files), instead of being kept as an unused placeholder.
    // SAFETY: called with a NUL-terminated prefix after the definitions.
    unsafe { pg_sys::MarkGUCPrefixReserved(c"flakeid".as_ptr()) };
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

/// A value refused at server start (of `only`, or of any setting), as an error.
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
    let mut b = set_options([
        ("layout", text(&LAYOUT)),
        ("overflow", text(&OVERFLOW)),
        ("clock_backwards", text(&CLOCK_BACKWARDS)),
        ("max_borrow_ms", MAX_BORROW_MS.get().to_string()),
        ("max_wait_ms", MAX_WAIT_MS.get().to_string()),
    ])
    .map_err(setting_report)?
    .require_node();
    if MAX_SEQUENCE.get() >= 0 {
        b = b
            .set_text("max_sequence", &MAX_SEQUENCE.get().to_string())
            .map_err(setting_report)?;
    }
    if lease().is_some() {
        // The node id comes from the lease (the caller adds it): none may be given too.
        if node >= 0 || dc >= 0 || worker >= 0 {
            let set: Vec<String> = [
                (Setting::Node, node),
                (Setting::Datacenter, dc),
                (Setting::Worker, worker),
            ]
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
    if is_set(Setting::LeaseTtlMs) {
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
    Ok(b.wait_hook(interrupt_hook()))
}

/// Whether a setting was given a value (in a file, on the command line, by SET),
/// rather than left at its default.
fn is_set(setting: Setting) -> bool {
    files::guc_origin(setting.name()).is_some_and(|(source, _)| source != pg_sys::GucSource::PGC_S_DEFAULT)
}

/// The options of the core's table that no GUC holds, and why (docs/postgres.md,
/// Settings): every other option is `flakeid.<name>`.
pub(crate) const NOT_GUC_OPTIONS: [(&str, &str); 2] = [
    (
        "clock",
        "a manual clock for tests: a handle, not a value; the server reads the OS clock",
    ),
    (
        "state",
        "a file for one process's high-water mark: the server keeps its own, WAL-logged with the database",
    ),
];

/// The generator options a GUC holds (`flakeid.<name>`), by the core's names.
pub(crate) const GUC_OPTIONS: [&str; 11] = [
    "layout",
    "node",
    "datacenter",
    "worker",
    "overflow",
    "clock_backwards",
    "max_borrow_ms",
    "max_wait_ms",
    "lease",
    "lease_ttl_ms",
    "max_sequence",
];

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
        debug_assert!(GUC_OPTIONS.contains(&name), "{name} is not a GUC");
        b = b.set_text(name, &text)?;
    }
    Ok(b)
}

/// The option of the core's table behind a GUC's bounds.
fn bounds(name: &str) -> (i32, i32) {
    let o = flakeid_core::generator_option(name);
    let clamp = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
    o.map_or((0, i32::MAX), |o| (clamp(o.min), clamp(o.max)))
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
}

impl Lease {
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
        Overflow::parse(&text(&OVERFLOW)).unwrap_or(Overflow::Wait),
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
                format!(
                    "{} is set but flakeid.worker is not",
                    described(Setting::Datacenter, dc)
                ),
                how_to_change(Setting::Worker),
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
    if crate::shmem::preloaded() {
        let _ = SERVER_LAYOUT.set(layout);
    }
    layout
}

/// The sequence width of the server's counter word (the engine's counter is
/// `tick << bits | sequence`): the layout's sequence bits, or with
/// `flakeid.max_sequence` (2^k - 1, checked when set) k.
pub fn counter_sequence_bits(layout: &Layout) -> u32 {
    match u64::try_from(MAX_SEQUENCE.get()) {
        Ok(m) if (m + 1).is_power_of_two() && m <= layout.max_sequence() => (m + 1).trailing_zeros(),
        _ => layout.sequence_bits(),
    }
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
