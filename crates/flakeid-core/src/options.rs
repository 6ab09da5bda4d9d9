//! The generator's options, listed once: each with its snake_case name
//! (Python, C, the CLI, GUCs, the vectors), its JS camelCase name, its kind, its
//! default, its range and what it requires. Every binding converts its native form
//! (kwargs, a JS object, a C struct, clap arguments, GUCs) into
//! [`GeneratorBuilder::set`](crate::GeneratorBuilder::set) calls or the builder's typed setters; the ranges and
//! requirements are checked once, in [`GeneratorBuilder::build`](crate::GeneratorBuilder::build).
//!
//! Also: the refusal of a misspelled option, so that every binding refuses it the
//! same way instead of ignoring it (`{ workerId: 3 }` silently gave every process
//! node 0 — duplicate IDs across processes).

use crate::encoding::shown;
use crate::error::Error;
use crate::policy::{DEFAULT_MAX_BORROW_MS, DEFAULT_MAX_WAIT_MS, MAX_POLICY_MS};
use alloc::string::String;
use alloc::vec::Vec;

/// A lease's default time-to-live.
pub const DEFAULT_LEASE_TTL_MS: u64 = 10_000;
/// Shortest TTL accepted. The timing budget at this value: a renewal every 333 ms,
/// each attempt given up to 333 ms (a retry every 83 ms after a failure), and IDs
/// stop 800 ms after the last confirmed renewal — so a store round trip, the
/// heartbeat's wake-up and a busy CPU get hundreds of ms, not tens. At 100 ms (the
/// old minimum) a PostgreSQL renewal on an idle local server missed its 33 ms
/// budget 4 times in 300, and most of the time under CPU load.
pub const MIN_LEASE_TTL_MS: u64 = 1_000;
/// Longest lease TTL accepted (one hour).
pub const MAX_LEASE_TTL_MS: u64 = 3_600_000;

/// What values an option takes.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// A whole number in `min..=max` (the range may also depend on the layout).
    Uint,
    /// A node id: a whole number, or a source (`env:VAR`, `hostname`, `mac`, `ipv4`).
    Node,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A preset name or a layout value.
    Layout,
    /// A lease URL (`file:///dir`, `redis://…`, …).
    LeaseUrl,
    /// A manual clock for tests (a handle: not settable from text).
    Clock,
    /// A file path (`state`).
    Path,
    /// A switch: `true` or `false` (a binding's boolean; `1` or `0`).
    Bool,
}

/// One option of a generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeneratorOption {
    /// snake_case: Python keywords, C struct fields, GUCs, vectors, error fields.
    pub name: &'static str,
    /// camelCase: the keys of `new Generator({...})` in `@flakeid/node` and `@flakeid/wasm`.
    pub camel_name: &'static str,
    /// The CLI's and service's flag (`--max-wait-ms`), without the dashes.
    pub flag: &'static str,
    /// What values it takes.
    pub kind: OptionKind,
    /// The default, as text (`""`: none — the option is simply not set).
    pub default: &'static str,
    /// For [`OptionKind::Uint`]: the static range; a layout may narrow it further
    /// (node ids, `max_sequence`).
    pub min: u64,
    /// The static range's upper end (see `min`).
    pub max: u64,
    /// Another option this one needs (`lease_ttl_ms` means nothing without `lease`).
    pub requires: Option<&'static str>,
    /// One line for help texts.
    pub doc: &'static str,
    /// What leaving it unset means, for an option with no default (`""`: nothing
    /// beyond "not set"). Every binding's documentation of the option says it
    /// (tests/docs/options.py writes them from this table).
    pub unset: &'static str,
    /// Whether the 128-bit generator reads it too: the clock policies, which both
    /// builders hold as one struct (`ClockPolicy`).
    pub applies_128: bool,
    /// The 128-bit generator's default where it differs from `default` (`""`: the
    /// same): it borrows by default, having no node id to keep apart.
    pub default_128: &'static str,
}

#[allow(clippy::too_many_arguments)] // one row of the table
const fn opt(
    name: &'static str,
    camel_name: &'static str,
    flag: &'static str,
    kind: OptionKind,
    default: &'static str,
    range: (u64, u64),
    requires: Option<&'static str>,
    doc: &'static str,
) -> GeneratorOption {
    GeneratorOption {
        name,
        camel_name,
        flag,
        kind,
        default,
        min: range.0,
        max: range.1,
        requires,
        doc,
        unset: "",
        applies_128: false,
        default_128: "",
    }
}

/// A row whose unset value means something a reader must know.
const fn unset(row: GeneratorOption, unset: &'static str) -> GeneratorOption {
    GeneratorOption { unset, ..row }
}

/// A row of the clock policies: the 128-bit generator reads it too.
const fn clock(row: GeneratorOption) -> GeneratorOption {
    GeneratorOption {
        applies_128: true,
        ..row
    }
}

const NONE: (u64, u64) = (0, 0);
/// The node fields' static range; the layout narrows it (5 bits: 0..=31).
const NODE: (u64, u64) = (0, u64::MAX);

/// Every option of a generator, in the order the API lists them.
#[rustfmt::skip]
pub const GENERATOR_OPTIONS: [GeneratorOption; 15] = [
    unset(opt("datacenter", "datacenter", "datacenter", OptionKind::Uint, "0", NODE, None,
        "the datacenter part of the node id (layouts with datacenter bits)"),
        "0 when the other part is given; with no node source at all, as the node option says"),
    unset(opt("worker", "worker", "worker", OptionKind::Uint, "0", NODE, None, "the worker part of the node id"),
        "0 when the other part is given; with no node source at all, as the node option says"),
    unset(opt("node", "node", "node", OptionKind::Node, "", NODE, None,
        "the whole node id, or env:VAR, hostname, mac, ipv4"),
        "with no node source given (nor a lease): in a Kubernetes pod, a lease from the API server; \
         on a host, a free node id the host guard keeps; in a container or with the guard off, \
         refused, naming the fixes"),
    opt("layout", "layout", "layout", OptionKind::Layout, "snowflake", NONE, None, "a preset name or a custom layout"),
    GeneratorOption { default_128: "borrow", ..clock(opt("overflow", "overflow", "overflow",
        OptionKind::Choice(&["wait", "borrow"]), "wait", NONE, None,
        "when a tick's sequence is used up: wait for the next tick, or borrow from the future")) },
    clock(opt("clock_backwards", "clockBackwards", "clock-backwards", OptionKind::Choice(&["error", "wait", "monotonic"]),
        "error", NONE, None, "when the clock reads earlier than IDs issued")),
    clock(opt("max_borrow_ms", "maxBorrowMs", "max-borrow-ms", OptionKind::Uint, "2000", (0, MAX_POLICY_MS), None,
        "how far a borrowing generator may run ahead of the clock")),
    clock(opt("max_wait_ms", "maxWaitMs", "max-wait-ms", OptionKind::Uint, "1000", (0, MAX_POLICY_MS), None,
        "how long the wait and monotonic clock policies wait for the clock")),
    unset(opt("lease", "lease", "lease", OptionKind::LeaseUrl, "", NONE, None,
        "lease the node id from a store: file:///dir, redis://, postgres://, etcd://"), "no lease"),
    opt("lease_ttl_ms", "leaseTtlMs", "lease-ttl-ms", OptionKind::Uint, "10000", (MIN_LEASE_TTL_MS, MAX_LEASE_TTL_MS),
        Some("lease"), "the lease's time-to-live"),
    unset(opt("max_sequence", "maxSequence", "max-sequence", OptionKind::Uint, "", (0, u64::MAX), None,
        "at most max_sequence + 1 IDs per tick, 2^k - 1 (flake-idgen's seqMask)"), "the layout's whole sequence field"),
    clock(unset(opt("clock", "clock", "clock", OptionKind::Clock, "", NONE, None, "a manual clock for tests"),
        "the system clock")),
    unset(opt("state", "state", "state", OptionKind::Path, "", NONE, None,
        "a file keeping a high-water timestamp across restarts, for fixed node ids (docs/state.md)"), "no state file"),
    opt("require_node", "requireNode", "require-node", OptionKind::Bool, "false", NONE, None,
        "refuse to start without a node source (node, worker or lease) instead of taking one from Kubernetes or this host"),
    opt("single_instance", "singleInstance", "single-instance", OptionKind::Bool, "false", NONE, None,
        "the only instance of the app: with no node id, take a free one on this host even in a container"),
];

const _: () = {
    // The defaults above are the engine's constants, spelled as text.
    assert!(DEFAULT_MAX_BORROW_MS == 2000 && DEFAULT_MAX_WAIT_MS == 1000 && DEFAULT_LEASE_TTL_MS == 10_000);
};

/// The names of the table's rows that may come from outside the program, and, with
/// `only_128`, that the 128-bit generator reads too: the one filter behind
/// [`SETTING_NAMES`] and [`UUID_GENERATOR_OPTIONS`] (`N` is [`names_count`]'s).
const fn names_where<const N: usize>(only_128: bool) -> [&'static str; N] {
    let mut names = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < GENERATOR_OPTIONS.len() {
        if picked(&GENERATOR_OPTIONS[i], only_128) {
            names[n] = GENERATOR_OPTIONS[i].name;
            n += 1;
        }
        i += 1;
    }
    names
}

/// Whether [`names_where`] names the row `o`.
const fn picked(o: &GeneratorOption, only_128: bool) -> bool {
    o.from_outside() && (o.applies_128 || !only_128)
}

/// How many names [`names_where`] gives.
const fn names_count(only_128: bool) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < GENERATOR_OPTIONS.len() {
        if picked(&GENERATOR_OPTIONS[i], only_128) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The options a `UuidGenerator` takes by name, in the table's order: the rows
/// marked `applies_128` (the clock policies), but the test clock, which is given
/// as a value.
pub const UUID_GENERATOR_OPTIONS: [&str; names_count(true)] = names_where(true);

/// The options' snake_case names, in the table's order: the list an unknown
/// keyword is refused against (`unknown_option(key, &OPTION_NAMES)`).
pub const OPTION_NAMES: [&str; GENERATOR_OPTIONS.len()] = column!(GENERATOR_OPTIONS, name);
pub(crate) use OPTION_NAMES as NAMES;

/// The option named `name`, by its snake_case, camelCase or flag spelling.
pub fn generator_option(name: &str) -> Option<&'static GeneratorOption> {
    GENERATOR_OPTIONS
        .iter()
        .find(|o| o.name == name || o.camel_name == name || o.flag == name)
}

impl GeneratorOption {
    /// Whether the option can come from outside the program (an environment
    /// variable, a framework's settings): every one but the test clock, a handle.
    pub const fn from_outside(&self) -> bool {
        !matches!(self.kind, OptionKind::Clock)
    }
    /// The environment variable that sets it: `FLAKEID_` and its name in capitals
    /// (`FLAKEID_LEASE_TTL_MS`). Only for [`from_outside`](Self::from_outside) options.
    pub fn env_var(&self) -> String {
        format!("{ENV_PREFIX}{}", self.name.to_ascii_uppercase())
    }
}

/// What every environment variable of a generator option starts with.
pub const ENV_PREFIX: &str = "FLAKEID_";

/// The options a settings mapping or the environment may give, in the table's
/// order (every one but the test clock): the list every adapter accepts.
pub const SETTING_NAMES: [&str; names_count(false)] = names_where(false);

/// The option a settings key names: its snake_case name or flag spelling, in any
/// case (`NODE`, `clock-backwards`, `lease_ttl_ms`); an unknown key (or the test
/// clock) is a config error naming it, with the known names
/// ([`SETTING_NAMES`]). Adapters call it for every key of a framework's settings
/// (Django's `FLAKEID`, Hibernate's `flakeid.*` properties).
pub fn setting_option(key: &str) -> Result<&'static GeneratorOption, Error> {
    GENERATOR_OPTIONS
        .iter()
        .find(|o| o.from_outside() && (o.name.eq_ignore_ascii_case(key) || o.flag.eq_ignore_ascii_case(key)))
        .ok_or_else(|| unknown_name("setting", "settings", key, &SETTING_NAMES))
}

/// The refusal of a second, different configuration of a process's one generator
/// (the framework adapters' shared generator): two generators on one node id would
/// issue the same IDs. `first` and `second` are the settings as the adapter shows them.
pub fn configured_twice(first: &str, second: &str) -> Error {
    // The settings may hold a lease URL with its password (the adapters' `lease =
    // "database"` makes one from the app's database settings).
    #[cfg(feature = "lease")]
    let (first, second) = (
        &crate::lease::redact_passwords(first),
        &crate::lease::redact_passwords(second),
    );
    Error::config(
        "settings",
        format!(
            "this process's generator is configured already, with {first}; another configuration asks for \
             {second}: one generator per process"
        ),
    )
}

/// The refusal of settings that are not a mapping of names to values; `type_name`
/// is what was given, in the binding's language.
pub fn not_settings(type_name: &str) -> Error {
    Error::config(
        "settings",
        format!("settings must be a mapping of option names to values, got {type_name}"),
    )
}

/// The generator options the environment gives: for every option that can come
/// from outside the program, the variable [`GeneratorOption::env_var`] when it is
/// set and not blank (a blank one counts as unset), as (snake_case name, text), in the table's order. `lookup`
/// reads one variable (`|k| std::env::var(k).ok()`, or a test's map). The texts go
/// to [`GeneratorBuilder::set_text`](crate::GeneratorBuilder::set_text) (or a
/// binding's typed values by [`option_value`]), which checks them.
pub fn options_from_env(mut lookup: impl FnMut(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    GENERATOR_OPTIONS
        .iter()
        .filter(|o| o.from_outside())
        .filter_map(|o| Some((o.name, lookup(&o.env_var()).filter(|v| !v.trim().is_empty())?)))
        .collect()
}

/// A value for [`GeneratorBuilder::set`](crate::GeneratorBuilder::set): what every binding's native value is
/// converted into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionValue<'a> {
    /// A whole number (a binding's int, a JS safe integer, a C `uint64_t`).
    Uint(u64),
    /// Text: a word, a layout name, a URL, a node source.
    Text(&'a str),
}

impl OptionValue<'_> {
    fn described(&self) -> String {
        match self {
            OptionValue::Uint(v) => format!("the number {v}"),
            OptionValue::Text(s) => format!("the text {}", shown(s)),
        }
    }
}

impl OptionKind {
    /// What the option wants, for messages.
    pub fn wants(self) -> &'static str {
        match self {
            OptionKind::Uint => "a whole number",
            OptionKind::Node => "a whole number or a node source (env:VAR, hostname, mac, ipv4)",
            OptionKind::Choice(_) => "one of its words",
            OptionKind::Layout => "a preset name",
            OptionKind::LeaseUrl => "a lease URL",
            OptionKind::Clock => "a manual clock",
            OptionKind::Path => "a file path",
            OptionKind::Bool => "true or false",
        }
    }
}

/// The refusal of a value of the wrong type for `option`.
pub(crate) fn wrong_value(option: &GeneratorOption, value: OptionValue<'_>) -> Error {
    Error::config(
        option.name,
        format!(
            "{} must be {}, got {}",
            option.name,
            option.kind.wants(),
            value.described()
        ),
    )
}

/// `text` as `option` takes it: a whole number for [`OptionKind::Uint`] (a config
/// error naming the option otherwise), the text itself for the others. For
/// bindings whose values arrive as text: the CLI's flags, GUCs.
pub fn option_value<'a>(option: &GeneratorOption, text: &'a str) -> Result<OptionValue<'a>, Error> {
    if option.kind == OptionKind::Bool {
        return match text.trim() {
            "true" | "1" => Ok(OptionValue::Uint(1)),
            "false" | "0" => Ok(OptionValue::Uint(0)),
            _ => Err(wrong_value(option, OptionValue::Text(text))),
        };
    }
    if option.kind != OptionKind::Uint {
        return Ok(OptionValue::Text(text));
    }
    text.trim().parse().map(OptionValue::Uint).map_err(|_| {
        Error::config(
            option.name,
            format!(
                "{} must be a whole number in {}..={}, got {}",
                option.name,
                option.min,
                option.max,
                shown(text)
            ),
        )
    })
}

/// The known name most like `key`: the same letters ignoring case, `_` and `-`
/// (`lease_ttl_ms` → `leaseTtlMs`), else the longest known name `key` starts with
/// (`workerId` → `worker`). Allocation-free: it ships in the wasm build.
pub fn closest_option(key: &str, known: &[&'static str]) -> Option<&'static str> {
    fn letters(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| b.to_ascii_lowercase())
    }
    let mut prefix: Option<&'static str> = None;
    for &name in known {
        if letters(key).eq(letters(name)) {
            return Some(name);
        }
        let mut k = letters(key);
        if letters(name).all(|b| k.next() == Some(b)) && prefix.is_none_or(|p| p.len() < name.len()) {
            prefix = Some(name);
        }
    }
    prefix
}

/// The error for an option nobody reads: names it (briefly), suggests the likeliest
/// meant one, and lists the options.
pub fn unknown_option(key: &str, known: &[&'static str]) -> Error {
    unknown_name("option", "options", key, known)
}

/// [`unknown_option`] for what a `noun` names (an option, a setting), naming `field`.
fn unknown_name(noun: &str, field: &'static str, key: &str, known: &[&'static str]) -> Error {
    let mut message = format!("unknown {noun} {}", shown(key));
    if let Some(k) = closest_option(key, known) {
        message.push_str(" (did you mean \"");
        message.push_str(k);
        message.push_str("\"?)");
    }
    message.push_str("; the options are ");
    for (i, name) in known.iter().enumerate() {
        if i > 0 {
            message.push_str(", ");
        }
        message.push_str(name);
    }
    Error::config(field, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's defaults (the bindings' docs are written from them) are the
    /// builders' own, the 128-bit one's too.
    #[test]
    fn the_clock_defaults_are_the_builders() {
        use crate::clock_policy::ClockPolicy;
        let of = |p: &ClockPolicy, name: &str| match name {
            "overflow" => p.overflow.as_str().to_string(),
            "clock_backwards" => p.clock_backwards.as_str().to_string(),
            "max_borrow_ms" => p.max_borrow_ms.to_string(),
            "max_wait_ms" => p.max_wait_ms.to_string(),
            other => panic!("a clock option the test does not know: {other}"),
        };
        let (narrow, wide) = (ClockPolicy::new(), ClockPolicy::borrowing());
        for o in GENERATOR_OPTIONS.iter().filter(|o| o.applies_128 && o.from_outside()) {
            assert_eq!(of(&narrow, o.name), o.default, "{}", o.name);
            let d128 = if o.default_128.is_empty() {
                o.default
            } else {
                o.default_128
            };
            assert_eq!(of(&wide, o.name), d128, "{} (128-bit)", o.name);
        }
    }

    #[test]
    fn names_are_unique_and_spelled_alike() {
        for (i, o) in GENERATOR_OPTIONS.iter().enumerate() {
            assert_eq!(o.name.replace('_', ""), o.camel_name.to_ascii_lowercase(), "{o:?}");
            assert_eq!(o.name.replace('_', "-"), o.flag, "{o:?}");
            for p in &GENERATOR_OPTIONS[..i] {
                assert!(p.name != o.name && p.camel_name != o.camel_name, "{o:?}");
            }
            assert_eq!(generator_option(o.camel_name), Some(o));
            assert_eq!(generator_option(o.flag), Some(o));
            if o.kind == OptionKind::Uint && !o.default.is_empty() {
                let d: u64 = o.default.parse().unwrap_or(u64::MAX);
                assert!((o.min..=o.max).contains(&d), "{o:?}");
            }
        }
    }

    /// Without the machinery (the WebAssembly build), `state` is refused by name.
    #[cfg(not(all(feature = "lease", any(unix, windows))))]
    #[test]
    fn state_needs_files() {
        use crate::{Generator, Layout};
        match Generator::builder(Layout::SNOWFLAKE).node(5).state("x.state").build() {
            Err(Error::Config { field, message }) => {
                assert_eq!(field, "state");
                assert!(message.contains("not in this build"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[cfg(feature = "lease")]
    #[test]
    fn configured_twice_shows_no_password() {
        let e = configured_twice(
            "{'lease': 'postgres://app:hunter2@db/shop'}",
            "{'node': 3, 'lease': 'redis://:hunter3@r/0'}",
        )
        .to_string();
        assert!(!e.contains("hunter2") && !e.contains("hunter3"), "{e}");
        assert!(e.contains("postgres://app:***@db/shop"), "{e}");
    }

    #[test]
    fn from_the_environment() {
        let env = [
            ("FLAKEID_NODE", "7"),
            ("FLAKEID_LAYOUT", "sonyflake"),
            ("FLAKEID_LEASE_TTL_MS", "5000"),
            ("FLAKEID_WORKER", ""),
            ("FLAKEID_CLOCK", "x"),
            ("FLAKEID_REQUIRE_NODE", "true"),
        ];
        let got = options_from_env(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()));
        let names: Vec<&str> = got.iter().map(|(n, _)| *n).collect();
        // The table's order; an empty variable and the test clock are not read.
        assert_eq!(names, ["node", "layout", "lease_ttl_ms", "require_node"]);
        assert_eq!(GENERATOR_OPTIONS[0].env_var(), "FLAKEID_DATACENTER");
        assert_eq!(SETTING_NAMES.len(), GENERATOR_OPTIONS.len() - 1);
        assert!(!SETTING_NAMES.contains(&"clock"));
    }

    #[test]
    fn settings_by_name() {
        for key in [
            "NODE",
            "node",
            "clock-backwards",
            "CLOCK_BACKWARDS",
            "Lease_Ttl_Ms",
            "require_node",
        ] {
            assert!(setting_option(key).is_ok(), "{key}");
        }
        for key in ["clock", "workerId", "nodes"] {
            match setting_option(key) {
                Err(Error::Config { field, message }) => {
                    assert_eq!(field, "settings");
                    assert!(message.starts_with(&format!("unknown setting \"{key}\"")), "{message}");
                    assert!(message.ends_with(&SETTING_NAMES.join(", ")), "{message}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn require_node_by_name() {
        use crate::{Generator, Layout};
        // The guard off: a build with no node id is refused either way, by require_node or for the guard.
        let b = || Generator::builder(Layout::SNOWFLAKE).host_guard(false);
        for (v, required) in [("true", true), ("1", true), ("false", false), ("0", false)] {
            let r = b().set_text("require_node", v).and_then(|b| b.check());
            let message = r.err().map(|e| e.to_string()).unwrap_or_default();
            assert_eq!(message.contains("require_node"), required, "{v}: {message}");
        }
        let r = b().set("requireNode", OptionValue::Uint(1)).and_then(|b| b.build());
        assert!(r.err().is_some_and(|e| e.to_string().contains("no node id given")));
        for bad in [
            b().set_text("require_node", "yes"),
            b().set("require_node", OptionValue::Uint(2)),
        ] {
            match bad.and_then(|b| b.build()) {
                Err(Error::Config { field, message }) => {
                    assert_eq!(field, "require_node");
                    assert!(message.contains("require_node must be true or false"), "{message}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(
            b().set_text("require_node", "true")
                .and_then(|b| b.node(3).build())
                .is_ok()
        );
    }

    #[test]
    fn suggestions() {
        let camel: Vec<&'static str> = GENERATOR_OPTIONS.iter().map(|o| o.camel_name).collect();
        let k = &camel;
        assert_eq!(closest_option("workerId", k), Some("worker"));
        assert_eq!(closest_option("lease_ttl_ms", k), Some("leaseTtlMs"));
        assert_eq!(closest_option("ClockBackwards", k), Some("clockBackwards"));
        assert_eq!(closest_option("zzz", k), None);
        let e = unknown_option("workerId", k).to_string();
        assert!(
            e.contains("\"workerId\"") && e.contains("did you mean \"worker\""),
            "{e}"
        );
    }

    #[test]
    fn set_by_name_and_refusals() {
        use crate::{Generator, Layout};
        let b = || Generator::builder(Layout::SNOWFLAKE);
        let field = |r: Result<crate::Generator, Error>| match r {
            Err(Error::Config { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            field(b().set_text("lease_ttl_ms", "10000").and_then(|b| b.build())),
            "lease_ttl_ms"
        );
        assert_eq!(
            field(b().set_text("leaseTtlMs", "x").and_then(|b| b.build())),
            "lease_ttl_ms"
        );
        assert_eq!(
            field(b().set("max-wait-ms", OptionValue::Text("1")).and_then(|b| b.build())),
            "max_wait_ms"
        );
        assert_eq!(
            field(b().set("workerId", OptionValue::Uint(1)).and_then(|b| b.build())),
            "options"
        );
        let g = b()
            .set_text("node", "7")
            .and_then(|b| b.set_text("overflow", "borrow"))
            .and_then(|b| b.build());
        let g = g.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((g.node(), g.overflow().as_str()), (7, "borrow"));
        let e = b()
            .lease_ttl_ms(10_000)
            .build()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("lease_ttl_ms is set but lease is not"), "{e}");
    }
}
