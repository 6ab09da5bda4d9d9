//! Generators and the manual clock: opaque handles with `_new` / `_free`.

use crate::error::{Fail, flakeid_status, guard};
use crate::layout::{flakeid_layout, layout_in, layout_out};
use crate::{
    Close, arg, c_enum, c_string_at, c_strings, close_handle, fill_ids, free_handle, new_handle, out, put, put_with,
    text, with_handle, write,
};
use flakeid_core::OptionValue::{Text, Uint};
use flakeid_core::{
    DEFAULT_MAX_BORROW_MS, DEFAULT_MAX_WAIT_MS, Error, Generator, GeneratorBuilder, Layout, ManualClock, NodeSource,
};
use std::ffi::c_char;

/// "Not given" for `flakeid_options.node`, `.datacenter` and `.worker`.
pub const FLAKEID_UNSET: u64 = u64::MAX;

/// Values of `flakeid_options.overflow`: what to do when a tick's sequence is used up.
#[repr(u32)]
#[derive(Debug, Clone, Copy)]
pub enum flakeid_overflow {
    /// Spin on the clock until the next tick (the default).
    FLAKEID_OVERFLOW_WAIT = 0,
    /// Move to the next tick at once, at most `max_borrow_ms` ahead of the clock.
    FLAKEID_OVERFLOW_BORROW = 1,
}

/// Values of `flakeid_options.clock_backwards`: what to do when the clock reads
/// earlier than IDs already issued.
#[repr(u32)]
#[derive(Debug, Clone, Copy)]
pub enum flakeid_clock_backwards {
    /// Fail with `FLAKEID_ERR_CLOCK_BACKWARDS` (the default).
    FLAKEID_CLOCK_BACKWARDS_ERROR = 0,
    /// Wait up to `max_wait_ms` for the clock to catch up, then fail.
    FLAKEID_CLOCK_BACKWARDS_WAIT = 1,
    /// Keep issuing from the last tick; once it is used up, wait as for WAIT.
    FLAKEID_CLOCK_BACKWARDS_MONOTONIC = 2,
}

/// How to build a generator. Start from `flakeid_options_init(&o, sizeof o)` (or
/// `flakeid_options_default()`) and change fields; the struct is only read during
/// `flakeid_generator_new()`. Its options are the core's table (every binding has
/// them all: bindings/c/README.md, "Options"; tests/vectors/options.json).
///
/// Growing without breaking the ABI (the Vulkan / rustls-ffi pattern): the caller
/// sets `struct_size` to `sizeof(flakeid_options)` as its header declares it. New
/// fields are only ever appended; a library reads only the fields that fit in
/// `struct_size` and gives the others their defaults, and refuses
/// (`FLAKEID_ERR_CONFIG`, field `struct_size`) a size it cannot read: 0 (not set),
/// smaller than the first struct with this field, or larger than its own (a
/// header newer than the library: options it would silently ignore).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakeid_options {
    /// `sizeof(flakeid_options)`, set by the caller (`flakeid_options_init` and
    /// `flakeid_options_default` set it). Always the first field.
    pub struct_size: usize,
    /// A preset name or a custom layout. Default snowflake.
    pub layout: flakeid_layout,
    /// The whole node id, or env:VAR, hostname, mac, ipv4. Within the layout's range.
    /// Unset: with no node source given (nor a lease): in a Kubernetes pod, a lease from
    /// the API server; on a host, a free node id the host guard keeps; in a container or
    /// with the guard off, refused, naming the fixes.
    ///
    /// `FLAKEID_UNSET` when not given. Give either `node` or `datacenter`/`worker`, or
    /// `node_source`, or `lease_url`; the refusal is `FLAKEID_ERR_CONFIG`
    /// (docs/design.md, "A node id across a fleet").
    pub node: u64,
    /// The datacenter part of the node id (layouts with datacenter bits). Within the
    /// layout's range. Unset: 0 when the other part is given; with no node source at all,
    /// as the node option says.
    pub datacenter: u64,
    /// The worker part of the node id. Within the layout's range. Unset: 0 when the other
    /// part is given; with no node source at all, as the node option says.
    pub worker: u64,
    /// Where to read the node id, or NULL: `"env:VAR"`, `"hostname"` (trailing
    /// ordinal, `web-3` is 3), `"mac"`, `"ipv4"`, or a decimal number.
    pub node_source: *const c_char,
    /// Lease the node id from a store: file:///dir, redis://, postgres://, etcd://. Unset:
    /// no lease.
    ///
    /// NULL when not given: `"file:///dir"`,
    /// `"redis[s]://host:port/db"`, `"postgres://user:password@host:port/dbname"`,
    /// `"etcd[s]://host:2379/"` (each with an optional `?namespace=NAME`; TLS
    /// settings in docs/leases.md). The generator takes the lowest
    /// free node id, renews the lease in the background, releases it when freed,
    /// and fails with `FLAKEID_ERR_LEASE` once the lease may have expired.
    pub lease_url: *const c_char,
    /// When a tick's sequence is used up: wait for the next tick, or borrow from the
    /// future. One of `FLAKEID_OVERFLOW_WAIT`, `FLAKEID_OVERFLOW_BORROW`; default
    /// `FLAKEID_OVERFLOW_WAIT`.
    ///
    /// A `flakeid_overflow` value.
    pub overflow: u32,
    /// When the clock reads earlier than IDs issued. One of
    /// `FLAKEID_CLOCK_BACKWARDS_ERROR`, `FLAKEID_CLOCK_BACKWARDS_WAIT`,
    /// `FLAKEID_CLOCK_BACKWARDS_MONOTONIC`; default `FLAKEID_CLOCK_BACKWARDS_ERROR`.
    ///
    /// A `flakeid_clock_backwards` value.
    pub clock_backwards: u32,
    /// How far a borrowing generator may run ahead of the clock. 0 to 86400000 ms; default
    /// 2000 ms.
    pub max_borrow_ms: u64,
    /// How long the wait and monotonic clock policies wait for the clock. 0 to 86400000 ms;
    /// default 1000 ms.
    pub max_wait_ms: u64,
    /// A manual clock for tests. Unset: the system clock.
    ///
    /// NULL when not given. The generator shares the clock's time; the handle may be
    /// freed before the generator.
    pub clock: *const flakeid_manual_clock,
    /// The lease's time-to-live. 1000 to 3600000 ms; default 10000 ms. Needs lease_url.
    ///
    /// `FLAKEID_UNSET` when not given. Set without `lease_url`, it is refused
    /// (`FLAKEID_ERR_CONFIG`).
    pub lease_ttl_ms: u64,
    /// At most max_sequence + 1 IDs per tick, 2^k - 1 (flake-idgen's seqMask). Unset: the
    /// layout's whole sequence field.
    ///
    /// `FLAKEID_UNSET` when not given.
    pub max_sequence: u64,
    /// A file keeping a high-water timestamp across restarts, for fixed node ids
    /// (docs/state.md). Unset: no state file.
    ///
    /// NULL when not given. A restart with the clock behind the saved mark
    /// meets `clock_backwards`; a missing file is a fresh start; a corrupt one, or
    /// one another process holds, is `FLAKEID_ERR_CONFIG` naming `state`. Not with
    /// `lease_url`. (Appended in 0.1: a struct without it reads as NULL.)
    pub state: *const c_char,
    /// Refuse to start without a node source (node, worker or lease) instead of taking one
    /// from Kubernetes or this host. Default 0.
    ///
    /// `FLAKEID_REQUIRE_NODE=true` refuses too.
    /// (Appended in 0.1: a struct without it reads as 0.)
    pub require_node: u32,
    /// Options with no field above, set by name (`flakeid_options_set`): slot `i`
    /// holds the text of the `i`th name of `flakeid_option_name`, or NULL. Every
    /// option added after `require_node` is set this way, so the struct, and Go's
    /// and Java's copies of it, stay as they are. The pointers are the caller's
    /// (not copies): they must live until `flakeid_generator_new` has read
    /// `*options`. (Appended in 0.1: a struct without it reads as all NULL.)
    pub by_name: [*const c_char; FLAKEID_OPTION_SLOTS],
}

/// The slots of `flakeid_options.by_name`: room for the core's option table.
pub const FLAKEID_OPTION_SLOTS: usize = 32;
const _: () = assert!(flakeid_core::GENERATOR_OPTIONS.len() <= FLAKEID_OPTION_SLOTS);

/// The smallest `struct_size` this library reads: the first `flakeid_options` with
/// a `struct_size`, which ended at `max_sequence` (every later one only appends
/// fields; a caller's shorter struct gives the fields past its end their defaults).
const MIN_OPTIONS_SIZE: usize = std::mem::offset_of!(flakeid_options, state);

/// A clock that moves only when told to, for deterministic tests. Thread-safe.
#[derive(Debug)]
pub struct flakeid_manual_clock {
    pub(crate) clock: ManualClock,
}

handle!(flakeid_manual_clock, "clock");

/// Issues IDs. Thread-safe: share one per node id between any number of threads;
/// no ID repeats and each thread sees its own IDs strictly increase.
#[derive(Debug)]
pub struct flakeid_generator {
    pub(crate) inner: Generator,
}

handle!(flakeid_generator, "generator");

/// The defaults: snowflake layout, no node id (see `node`), overflow WAIT, clock_backwards ERROR,
/// `max_borrow_ms` 2000, `max_wait_ms` 1000, system clock, no lease (`lease_ttl_ms`
/// unset), the whole sequence field (`max_sequence` unset); `struct_size` is this
/// header's `sizeof(flakeid_options)`. Returned by value: for programs that run
/// with the library of the header they were built with (else use
/// `flakeid_options_init`).
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_options_default() -> flakeid_options {
    flakeid_options {
        layout: layout_out(&Layout::SNOWFLAKE),
        node: FLAKEID_UNSET,
        datacenter: FLAKEID_UNSET,
        worker: FLAKEID_UNSET,
        node_source: std::ptr::null(),
        lease_url: std::ptr::null(),
        overflow: flakeid_overflow::FLAKEID_OVERFLOW_WAIT as u32,
        clock_backwards: flakeid_clock_backwards::FLAKEID_CLOCK_BACKWARDS_ERROR as u32,
        max_borrow_ms: DEFAULT_MAX_BORROW_MS,
        max_wait_ms: DEFAULT_MAX_WAIT_MS,
        clock: std::ptr::null(),
        lease_ttl_ms: FLAKEID_UNSET,
        max_sequence: FLAKEID_UNSET,
        state: std::ptr::null(),
        require_node: 0,
        by_name: [std::ptr::null(); FLAKEID_OPTION_SLOTS],
        struct_size: std::mem::size_of::<flakeid_options>(),
    }
}

/// Sets the option `name` of `*options` from `value`, as text: the core's names
/// and rules for every option that can come from outside a program (the table's
/// `setting` options: `"node"` takes a number or a node source, `"layout"` a
/// preset name, `"overflow"` and `"clock_backwards"` their words, `"require_node"`
/// `true` or `false`, numbers in decimal). What the environment and a framework's
/// settings give, without each caller parsing text again. `"node_source"`,
/// `"lease"`, `"state"` and the options with no field of their own (`by_name`)
/// keep the pointer `value` (not a copy): it must live until
/// `flakeid_generator_new` has read `*options`. An unknown name (the message
/// lists the known ones) or a value the option cannot take is
/// `FLAKEID_ERR_CONFIG` naming the field, and `*options` is unchanged; a field
/// beyond the caller's `struct_size` is refused naming `struct_size`. Ranges that
/// depend on the other options are checked by `flakeid_generator_new`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_options_set(
    options: *mut flakeid_options,
    name: *const c_char,
    value: *const c_char,
) -> flakeid_status {
    guard(|| {
        let dst = out(options, "options")?;
        // SAFETY: `options` is non-NULL, a struct of `struct_size` bytes (documented).
        let size = unsafe { dst.as_ptr().cast::<usize>().read() };
        options_size(size)?;
        let name = unsafe { text(name) }.ok_or(Fail::Null("name"))?;
        let text_value = unsafe { text(value) }.ok_or(Fail::Null("value"))?;
        let option = flakeid_core::setting_option(&name)?;
        let mut o = flakeid_options_default();
        // SAFETY: as in flakeid_generator_new: `size` bytes, at most ours.
        unsafe { std::ptr::copy_nonoverlapping(dst.as_ptr().cast::<u8>(), (&raw mut o).cast::<u8>(), size) };
        let end = match option.name {
            "state" => std::mem::offset_of!(flakeid_options, state) + std::mem::size_of::<*const c_char>(),
            "require_node" => std::mem::offset_of!(flakeid_options, require_node) + std::mem::size_of::<u32>(),
            name if !HAS_FIELD.contains(&name) => std::mem::size_of::<flakeid_options>(),
            _ => 0,
        };
        if end > size {
            return Err(Error::config(
                "struct_size",
                format!(
                    "{} is not in a flakeid_options of {size} bytes (an older header)",
                    option.name
                ),
            )
            .into());
        }
        match (option.name, flakeid_core::option_value(option, &text_value)?) {
            ("node", Uint(n)) => (o.node, o.node_source) = (n, std::ptr::null()),
            ("node", Text(t)) => match t.parse::<NodeSource>()? {
                NodeSource::Explicit(n) => (o.node, o.node_source) = (n, std::ptr::null()),
                _ => (o.node, o.node_source) = (FLAKEID_UNSET, value),
            },
            ("datacenter", Uint(n)) => o.datacenter = n,
            ("worker", Uint(n)) => o.worker = n,
            ("layout", Text(t)) => o.layout = layout_out(&Layout::preset(t)?),
            ("overflow", Text(t)) => o.overflow = word_index(option, &OVERFLOWS, t)?,
            ("clock_backwards", Text(t)) => o.clock_backwards = word_index(option, &CLOCK_BACKWARDS, t)?,
            ("max_borrow_ms", Uint(n)) => o.max_borrow_ms = n,
            ("max_wait_ms", Uint(n)) => o.max_wait_ms = n,
            ("lease", _) => o.lease_url = value,
            ("lease_ttl_ms", Uint(n)) => o.lease_ttl_ms = n,
            ("max_sequence", Uint(n)) => o.max_sequence = n,
            ("state", _) => o.state = value,
            ("require_node", Uint(n)) => o.require_node = n as u32,
            (name, _) if !HAS_FIELD.contains(&name) => put_by_name(&mut o, name, value),
            (other, _) => return Err(Error::config("options", format!("{other} cannot be set by name in C")).into()),
        }
        // SAFETY: as above; only the caller's `size` bytes are written.
        unsafe { std::ptr::copy_nonoverlapping((&raw const o).cast::<u8>(), dst.as_ptr().cast::<u8>(), size) };
        Ok(())
    })
}

/// The options with a field of their own in `flakeid_options`; the others are kept
/// in `by_name` (`put_by_name`) and set by name when the generator is built.
const HAS_FIELD: [&str; 14] = [
    "datacenter",
    "worker",
    "node",
    "layout",
    "overflow",
    "clock_backwards",
    "max_borrow_ms",
    "max_wait_ms",
    "lease",
    "lease_ttl_ms",
    "max_sequence",
    "clock",
    "state",
    "require_node",
];

/// Keeps `value` (already checked) in the `by_name` slot of the table's row `name`.
fn put_by_name(o: &mut flakeid_options, name: &str, value: *const c_char) {
    if let Some(i) = flakeid_core::GENERATOR_OPTIONS.iter().position(|row| row.name == name) {
        o.by_name[i] = value;
    }
}

/// Sets each option kept in `by_name` on `b`, in the table's order.
unsafe fn apply_by_name(mut b: GeneratorBuilder, o: &flakeid_options) -> Result<GeneratorBuilder, Fail> {
    for (row, &p) in flakeid_core::GENERATOR_OPTIONS.iter().zip(&o.by_name) {
        if let Some(t) = unsafe { text(p) } {
            b = b.set_text(row.name, &t)?;
        }
    }
    Ok(b)
}

/// The `index`th name `flakeid_options_set` takes (the core's table, in its order),
/// a static string; NULL past the last. List them with
/// `for (size_t i = 0; (n = flakeid_option_name(i)); i++)`.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_option_name(index: usize) -> *const c_char {
    static NAMES: std::sync::OnceLock<Vec<std::ffi::CString>> = std::sync::OnceLock::new();
    c_string_at(c_strings(&NAMES, flakeid_core::SETTING_NAMES.iter().copied()), index)
}

/// The lease a generator takes for the `lease` setting `lease`: `lease` itself, or for
/// `"database"` the `postgres://` URL of the app's own PostgreSQL, made from the `n`
/// connection settings a framework adapter holds, `keys[i]` = `values[i]` (a NULL
/// value is left out; docs/leases.md, "The app's own database"). Writes it and a NUL
/// into `buf` (`buf_len` bytes); `out_len` (may be NULL) receives its length without
/// the NUL, also when the buffer is too small (`FLAKEID_ERR_BUFFER_TOO_SMALL`, `buf`
/// untouched). A database other than PostgreSQL is `FLAKEID_ERR_CONFIG`, field `lease`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_database_lease(
    lease: *const c_char,
    keys: *const *const c_char,
    values: *const *const c_char,
    n: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    guard(|| {
        let lease = unsafe { text(lease) }.ok_or(Fail::Null("lease"))?;
        let mut parts = Vec::with_capacity(n);
        if n > 0 {
            let (keys, values) = (out(keys.cast_mut(), "keys")?, out(values.cast_mut(), "values")?);
            // SAFETY: the caller promises `n` pointers in each array.
            let (keys, values) = unsafe {
                (
                    std::slice::from_raw_parts(keys.as_ptr(), n),
                    std::slice::from_raw_parts(values.as_ptr(), n),
                )
            };
            for (&k, &v) in keys.iter().zip(values) {
                let key = unsafe { text(k) }.ok_or(Fail::Null("keys"))?;
                if let Some(value) = unsafe { text(v) } {
                    parts.push((key.into_owned(), value.into_owned()));
                }
            }
        }
        #[cfg(feature = "net-leases")]
        let url = flakeid_lease_net::database_lease(&lease, &parts)?;
        // The lean build: the word is refused as any postgres:// URL would be.
        #[cfg(not(feature = "net-leases"))]
        let url = flakeid_core::lease::LeaseSpec::parse(&lease).map(|_| lease.into_owned())?;
        if let Some(len_dst) = std::ptr::NonNull::new(out_len) {
            write(len_dst, url.len());
        }
        let dst = out(buf, "buf")?;
        if buf_len < url.len() + 1 {
            return Err(Fail::BufferTooSmall {
                needed: url.len() + 1,
                given: buf_len,
            });
        }
        // SAFETY: the caller promises `buf` holds `buf_len >= len + 1` bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst.as_ptr().cast::<u8>(), url.len() + 1) };
        dst[..url.len()].copy_from_slice(url.as_bytes());
        dst[url.len()] = 0;
        Ok(())
    })
}

/// Always `FLAKEID_ERR_CONFIG` (field `settings`), with the core's refusal of a
/// second, different configuration of a process's one generator: for framework
/// adapters that keep one (Hibernate's, Spring's), so that the words are the
/// engine's. `first` and `second` are the two settings as the caller shows them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_configured_twice(first: *const c_char, second: *const c_char) -> flakeid_status {
    guard(|| {
        let first = unsafe { text(first) }.ok_or(Fail::Null("first"))?;
        let second = unsafe { text(second) }.ok_or(Fail::Null("second"))?;
        Err(flakeid_core::configured_twice(&first, &second).into())
    })
}

/// What `flakeid_parse_id`'s `value` holds (its `kind`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum flakeid_id_value {
    /// Decimal text, `len` bytes (no sign, no spaces).
    FLAKEID_ID_TEXT = 0,
    /// 8 big-endian bytes (`len` must be 8).
    FLAKEID_ID_BYTES = 1,
    /// A value of another type, named by the `len` bytes of text (`"NULL"`,
    /// `"float64"`): always refused, saying what an ID is.
    FLAKEID_ID_OTHER = 2,
}

/// An ID from a program's or a database driver's value, by the core's one parser
/// (every binding's: docs/design.md, "IDs in a signed BIGINT"): in
/// `0..=layout.max_id()` (`layout` NULL: any 64-bit value), else
/// `FLAKEID_ERR_PARSE` with the core's message and position; `*out_id` is written
/// only on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_parse_id(
    layout: *const flakeid_layout,
    kind: u32,
    value: *const u8,
    len: usize,
    out_id: *mut u64,
) -> flakeid_status {
    guard(|| {
        let layout = match unsafe { layout.as_ref() } {
            Some(l) => layout_in(l)?,
            None => Layout::FLAKE,
        };
        let dst = out(out_id, "out_id")?;
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(arg(value, "value")?, len) }
        };
        let text = String::from_utf8_lossy(bytes);
        use flakeid_id_value::{FLAKEID_ID_BYTES, FLAKEID_ID_OTHER, FLAKEID_ID_TEXT};
        let v = match kind {
            k if k == FLAKEID_ID_TEXT as u32 => flakeid_core::IdValue::Text(&text),
            k if k == FLAKEID_ID_BYTES as u32 => flakeid_core::IdValue::Bytes(bytes),
            k if k == FLAKEID_ID_OTHER as u32 => flakeid_core::IdValue::Other(&text),
            _ => {
                return Err(Error::config(
                    "kind",
                    format!("kind must be FLAKEID_ID_TEXT, FLAKEID_ID_BYTES or FLAKEID_ID_OTHER (0..=2), got {kind}"),
                )
                .into());
            }
        };
        write(dst, flakeid_core::parse_id(&layout, v)?);
        Ok(())
    })
}

/// The C enum value of the core's word `text` for a choice option (the core's
/// parse refuses other words with its message).
fn word_index(option: &flakeid_core::GeneratorOption, words: &[&str], text: &str) -> Result<u32, Fail> {
    let word = match option.name {
        "overflow" => text.parse::<flakeid_core::Overflow>()?.as_str(),
        _ => text.parse::<flakeid_core::ClockBackwards>()?.as_str(),
    };
    Ok(words.iter().position(|w| *w == word).unwrap_or(0) as u32)
}

fn options_size(size: usize) -> Result<(), Fail> {
    let max = std::mem::size_of::<flakeid_options>();
    if (MIN_OPTIONS_SIZE..=max).contains(&size) {
        return Ok(());
    }
    Err(Error::config(
        "struct_size",
        format!(
            "struct_size must be sizeof(flakeid_options), {MIN_OPTIONS_SIZE}..={max} for this library, got {size}{}",
            if size == 0 {
                " (start from flakeid_options_init(&o, sizeof o) or flakeid_options_default())"
            } else if size > max {
                " (a header newer than this library: its new options would be ignored)"
            } else {
                ""
            }
        ),
    )
    .into())
}

/// Fills `*options` with the defaults (as `flakeid_options_default()`) and sets
/// its `struct_size`: pass `sizeof *options`. Unlike the by-value
/// `flakeid_options_default()`, safe when the program runs with a newer library
/// than the header it was built with: only `struct_size` bytes are written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_options_init(options: *mut flakeid_options, struct_size: usize) -> flakeid_status {
    guard(|| {
        let dst = out(options, "options")?;
        options_size(struct_size)?;
        let mut o = flakeid_options_default();
        o.struct_size = struct_size;
        // SAFETY: the caller's struct holds `struct_size` bytes (documented), and
        // `struct_size` is at most ours.
        unsafe { std::ptr::copy_nonoverlapping((&raw const o).cast::<u8>(), dst.as_ptr().cast::<u8>(), struct_size) };
        Ok(())
    })
}

/// `flakeid_overflow`'s and `flakeid_clock_backwards`' values, in the core's words.
const OVERFLOWS: [&str; 2] = ["wait", "borrow"];
const CLOCK_BACKWARDS: [&str; 3] = ["error", "wait", "monotonic"];

/// # Safety
/// `o.node_source`, `o.lease_url` and `o.state` are NULL or NUL-terminated strings; `o.clock` is NULL or a live
/// clock handle.
unsafe fn build(o: &flakeid_options) -> Result<Generator, Fail> {
    // redis://, postgres://, etcd:// lease URLs (the `net-leases` feature, on in the C
    // SDK). The C API has no init call: registering is idempotent and cheap.
    #[cfg(feature = "net-leases")]
    flakeid_lease_net::install();
    let mut b = Generator::builder(layout_in(&o.layout)?);
    // By the core's option names, in its table's order (which of two conflicting
    // options an error names is then every binding's); FLAKEID_UNSET and NULL are "not given".
    for (name, v) in [("datacenter", o.datacenter), ("worker", o.worker), ("node", o.node)] {
        if v != FLAKEID_UNSET {
            b = b.set(name, Uint(v))?;
        }
    }
    if let Some(spec) = unsafe { text(o.node_source) } {
        b = b.node_source(spec.parse::<NodeSource>()?);
    }
    if let Some(url) = unsafe { text(o.lease_url) } {
        b = b.set("lease", Text(&url))?;
    }
    b = b.set(
        "overflow",
        Text(c_enum("overflow", "FLAKEID_OVERFLOW", &OVERFLOWS, o.overflow)?),
    )?;
    let policy = c_enum(
        "clock_backwards",
        "FLAKEID_CLOCK_BACKWARDS",
        &CLOCK_BACKWARDS,
        o.clock_backwards,
    )?;
    b = b.set("clock_backwards", Text(policy))?;
    b = b.max_borrow_ms(o.max_borrow_ms).max_wait_ms(o.max_wait_ms);
    if let Some(c) = unsafe { o.clock.as_ref() } {
        b = b.clock(c.clock.clone());
    }
    for (name, v) in [("lease_ttl_ms", o.lease_ttl_ms), ("max_sequence", o.max_sequence)] {
        if v != FLAKEID_UNSET {
            b = b.set(name, Uint(v))?;
        }
    }
    if let Some(path) = unsafe { text(o.state) } {
        b = b.set("state", Text(&path))?;
    }
    b = b.set("require_node", Uint(u64::from(o.require_node)))?;
    b = unsafe { apply_by_name(b, o) }?;
    Ok(b.build()?)
}

/// Creates a generator; on success `*out_generator` owns it (free it with
/// `flakeid_generator_free()`). Out-of-range options are `FLAKEID_ERR_CONFIG`
/// naming the field. Each caller's IDs increase whatever OS thread it calls from
/// (a Go goroutine, a Java virtual thread): the generator keeps no per-thread runs
/// of IDs (for a thread's own fast path, see `flakeid_local_*`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_new(
    options: *const flakeid_options,
    out_generator: *mut *mut flakeid_generator,
) -> flakeid_status {
    new_handle(out_generator, || {
        // `struct_size` first: it says how much of the struct may be read.
        let size = unsafe { arg(options.cast::<usize>(), "options") }?;
        options_size(*size)?;
        // Only the caller's `struct_size` bytes: a struct from an older header is
        // shorter, and the fields past its end keep their defaults.
        let mut o = flakeid_options_default();
        // SAFETY: `options` is non-NULL (read above) and holds `*size` bytes, at
        // most `size_of::<flakeid_options>()` (options_size).
        unsafe { std::ptr::copy_nonoverlapping(options.cast::<u8>(), (&raw mut o).cast::<u8>(), *size) };
        o.struct_size = *size;
        Ok(flakeid_generator {
            inner: unsafe { build(&o) }?,
        })
    })
}

/// Frees a generator. NULL is a no-op. No other thread may still be using it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_free(generator: *mut flakeid_generator) {
    unsafe { free_handle(generator) }
}

/// Stops the generator issuing and lets go of its node id now (its lease, its
/// host guard; idempotent): later calls, on it and on its per-thread handles
/// (`flakeid_local_*`), are `FLAKEID_ERR_CONFIG` naming `generator`. Frees
/// nothing: a binding whose handles may outlive its generator's close (Go, Java)
/// closes here and frees once the last handle is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_close(generator: *const flakeid_generator) -> flakeid_status {
    close_handle(generator)
}

impl Close for flakeid_generator {
    fn close(&self) {
        self.inner.close();
    }
}

/// The next ID. Fails with `FLAKEID_ERR_CLOCK_BACKWARDS`,
/// `FLAKEID_ERR_TIME_EXHAUSTED` or, in a child process after `fork()`,
/// `FLAKEID_ERR_FORK`; `*out_id` is written only on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_next_id(generator: *const flakeid_generator, out_id: *mut u64) -> flakeid_status {
    with_handle(generator, |g| put_with(out_id, "out_id", || g.inner.next_id()))
}

/// Fills `ids[0..n]` with fresh IDs, increasing (runs of IDs are reserved at once).
/// `ids` may be NULL when `n` is 0. On failure the array is zeroed: it holds no ID.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_next_ids(
    generator: *const flakeid_generator,
    ids: *mut u64,
    n: usize,
) -> flakeid_status {
    with_handle(generator, |g| fill_ids(ids, n, |slice| g.inner.fill(slice)))
}

/// The core's rule for a batch size, `n` in `0..=2^27` (`flakeid_next_ids`'
/// limit): `FLAKEID_OK`, or `FLAKEID_ERR_CONFIG` naming `n` with its range (a
/// negative `n` included). For callers that allocate the batch before asking for
/// it (Go's `NextN`, Java's `nextIds`): they check here first.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_check_batch(n: i64) -> flakeid_status {
    guard(|| {
        flakeid_core::check_batch(i128::from(n))?;
        Ok(())
    })
}

/// The generator's node id (`datacenter << worker_bits | worker`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_node(
    generator: *const flakeid_generator,
    out_node: *mut u64,
) -> flakeid_status {
    with_handle(generator, |g| put(out_node, "out_node", g.inner.node()))
}

/// Where the generator's node id came from, as a static string: `"explicit"`,
/// `"leased"`, `"coordinator"`, `"host"` or `"none"` (docs/design.md, "Who owns a
/// node id").
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_node_origin(
    generator: *const flakeid_generator,
    out_origin: *mut *const c_char,
) -> flakeid_status {
    with_handle(generator, |g| {
        write(
            out(out_origin, "out_origin")?,
            origin_name(g.inner.node_origin()).as_ptr(),
        );
        Ok(())
    })
}

/// The C string of a node origin's name (the core's `NodeOrigin::as_str`).
fn origin_name(origin: flakeid_core::NodeOrigin) -> &'static std::ffi::CStr {
    static NAMES: std::sync::OnceLock<Vec<std::ffi::CString>> = std::sync::OnceLock::new();
    let names = c_strings(&NAMES, flakeid_core::NodeOrigin::ALL.iter().map(|o| o.as_str()));
    flakeid_core::NodeOrigin::ALL
        .iter()
        .position(|o| *o == origin)
        .and_then(|i| names.get(i))
        .map_or(c"unknown", |n| n.as_c_str())
}

/// The generator's layout.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_generator_layout(
    generator: *const flakeid_generator,
    out_layout: *mut flakeid_layout,
) -> flakeid_status {
    with_handle(generator, |g| {
        put(out_layout, "out_layout", layout_out(g.inner.layout()))
    })
}

/// Creates a manual clock reading `start_ms` (Unix ms). With `auto_advance_ms > 0`
/// it advances by that much on every turn of a generator's wait loop, so waits end
/// deterministically. Free it with `flakeid_manual_clock_free()`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_manual_clock_new(
    start_ms: u64,
    auto_advance_ms: u64,
    out_clock: *mut *mut flakeid_manual_clock,
) -> flakeid_status {
    new_handle(out_clock, || {
        Ok(flakeid_manual_clock {
            clock: ManualClock::new(start_ms).with_auto_advance(auto_advance_ms),
        })
    })
}

/// Sets the clock (it may move backwards, to test rollback policies).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_manual_clock_set(clock: *const flakeid_manual_clock, unix_ms: u64) -> flakeid_status {
    with_handle(clock, |c| {
        c.clock.set(unix_ms);
        Ok(())
    })
}

/// Moves the clock forward by `ms`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_manual_clock_advance(clock: *const flakeid_manual_clock, ms: u64) -> flakeid_status {
    with_handle(clock, |c| {
        c.clock.advance(ms);
        Ok(())
    })
}

/// Reads the clock.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_manual_clock_get(
    clock: *const flakeid_manual_clock,
    out_ms: *mut u64,
) -> flakeid_status {
    with_handle(clock, |c| put(out_ms, "out_ms", c.clock.get()))
}

/// Frees the handle. NULL is a no-op. Generators built with it keep its time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_manual_clock_free(clock: *mut flakeid_manual_clock) {
    unsafe { free_handle(clock) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakeid_core::GENERATOR_OPTIONS;

    #[test]
    fn every_node_origin_has_its_c_name() {
        for o in flakeid_core::NodeOrigin::ALL {
            assert_eq!(origin_name(o).to_str().unwrap(), o.as_str());
        }
    }

    /// `flakeid_options_default()` agrees with the core's option table: every option
    /// has its field, and a field the defaults set holds the table's default (an unset
    /// one, `FLAKEID_UNSET` or NULL, is "not given": the core applies the table's).
    #[test]
    fn defaults_are_the_core_tables() {
        let o = flakeid_options_default();
        let num = |v: u64| (v != FLAKEID_UNSET).then(|| v.to_string());
        let ptr = |p: *const c_char| (!p.is_null()).then(String::new);
        for opt in &GENERATOR_OPTIONS {
            let set: Option<String> = match opt.name {
                "datacenter" => num(o.datacenter),
                "worker" => num(o.worker),
                "node" => num(o.node).or(ptr(o.node_source)),
                "layout" => layout_in(&o.layout).ok().and_then(|l| l.name()).map(str::to_string),
                "overflow" => OVERFLOWS.get(o.overflow as usize).map(|p| p.to_string()),
                "clock_backwards" => CLOCK_BACKWARDS.get(o.clock_backwards as usize).map(|p| p.to_string()),
                "max_borrow_ms" => num(o.max_borrow_ms),
                "max_wait_ms" => num(o.max_wait_ms),
                "lease" => ptr(o.lease_url),
                "lease_ttl_ms" => num(o.lease_ttl_ms),
                "max_sequence" => num(o.max_sequence),
                "clock" => (!o.clock.is_null()).then(String::new),
                "state" => ptr(o.state),
                "require_node" => Some((if o.require_node == 1 { "true" } else { "false" }).to_string()),
                // Set by name (`by_name`): NULL, not given, in the defaults.
                other if !HAS_FIELD.contains(&other) => None,
                other => panic!("option {other} of the core's table has no field in flakeid_options"),
            };
            if let Some(value) = set {
                assert_eq!(value, opt.default, "flakeid_options_default().{}", opt.name);
            }
        }
        // The by-name setter takes every name it lists.
        let names: Vec<String> = (0..)
            .map(|i| flakeid_option_name(i))
            .take_while(|p| !p.is_null())
            .map(|p| unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, flakeid_core::SETTING_NAMES);
        // The C enums' values are the core's words, in order.
        for (name, words) in [("overflow", &OVERFLOWS[..]), ("clock_backwards", &CLOCK_BACKWARDS[..])] {
            match flakeid_core::generator_option(name).map(|o| o.kind) {
                Some(flakeid_core::OptionKind::Choice(core)) => assert_eq!(core, words),
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn ids_by_the_cores_parser() {
        let mut id = 7;
        let p = |kind: u32, v: &[u8], id: &mut u64| unsafe {
            flakeid_parse_id(std::ptr::null(), kind, v.as_ptr(), v.len(), id)
        };
        assert_eq!(p(0, b"18446744073709551615", &mut id), flakeid_status::FLAKEID_OK);
        assert_eq!(id, u64::MAX);
        assert_eq!(p(1, &5u64.to_be_bytes(), &mut id), flakeid_status::FLAKEID_OK);
        assert_eq!(id, 5);
        for (kind, v) in [(0, &b"-1"[..]), (0, b""), (1, b"123"), (2, b"NULL"), (9, b"x")] {
            assert_ne!(p(kind, v, &mut id), flakeid_status::FLAKEID_OK, "{kind} {v:?}");
            assert_eq!(id, 5, "written on failure");
        }
        let snowflake = layout_out(&Layout::SNOWFLAKE);
        let v = b"9223372036854775808";
        let st = unsafe { flakeid_parse_id(&snowflake, 0, v.as_ptr(), v.len(), &mut id) };
        assert_eq!(st, flakeid_status::FLAKEID_ERR_PARSE);
    }

    #[test]
    fn batch_sizes_are_the_cores() {
        assert_eq!(flakeid_check_batch(0), flakeid_status::FLAKEID_OK);
        assert_eq!(flakeid_check_batch(1 << 27), flakeid_status::FLAKEID_OK);
        for n in [-1, (1 << 27) + 1, 1 << 40, i64::MAX] {
            assert_eq!(flakeid_check_batch(n), flakeid_status::FLAKEID_ERR_CONFIG, "{n}");
        }
    }

    #[test]
    fn set_by_name() {
        use crate::error::{flakeid_last_error_field, flakeid_last_error_message};
        let mut o = flakeid_options_default();
        let set = |o: &mut flakeid_options, n: &std::ffi::CStr, v: &std::ffi::CStr| unsafe {
            flakeid_options_set(o, n.as_ptr(), v.as_ptr())
        };
        let last = || unsafe {
            let f = flakeid_last_error_field();
            let m = std::ffi::CStr::from_ptr(flakeid_last_error_message())
                .to_string_lossy()
                .into_owned();
            (
                (!f.is_null()).then(|| std::ffi::CStr::from_ptr(f).to_string_lossy().into_owned()),
                m,
            )
        };
        for (n, v) in [
            (c"layout", c"sonyflake"),
            (c"NODE", c"7"),
            (c"overflow", c"borrow"),
            (c"max-wait-ms", c"5"),
        ] {
            assert_eq!(set(&mut o, n, v), flakeid_status::FLAKEID_OK, "{n:?}");
        }
        assert_eq!(layout_in(&o.layout).ok().and_then(|l| l.name()), Some("sonyflake"));
        assert_eq!((o.node, o.overflow, o.max_wait_ms), (7, 1, 5));
        let hostname = c"hostname";
        assert_eq!(set(&mut o, c"node", hostname), flakeid_status::FLAKEID_OK);
        assert_eq!((o.node, o.node_source), (FLAKEID_UNSET, hostname.as_ptr()));
        for (n, v, field, says) in [
            (c"workerId", c"3", "settings", "unknown setting \"workerId\""),
            (c"clock", c"1", "settings", "unknown setting \"clock\""),
            (c"worker", c"three", "worker", "worker must be a whole number"),
            (c"overflow", c"sometimes", "overflow", "sometimes"),
            (
                c"require_node",
                c"maybe",
                "require_node",
                "require_node must be true or false",
            ),
            (c"layout", c"twitter", "layout", "twitter"),
        ] {
            let before = o;
            assert_eq!(set(&mut o, n, v), flakeid_status::FLAKEID_ERR_CONFIG, "{n:?}");
            let (f, m) = last();
            assert_eq!(f.as_deref(), Some(field), "{m}");
            assert!(m.contains(says), "{m}");
            assert_eq!((o.worker, o.overflow), (before.worker, before.overflow));
        }
        // require_node: refused without a node source, by the core's rule.
        let mut o = flakeid_options_default();
        assert_eq!(set(&mut o, c"require_node", c"true"), flakeid_status::FLAKEID_OK);
        let mut g = std::ptr::null_mut();
        assert_eq!(
            unsafe { flakeid_generator_new(&o, &mut g) },
            flakeid_status::FLAKEID_ERR_CONFIG
        );
        assert!(last().1.contains("no node id given"), "{:?}", last());
        // A struct from an older header (no require_node field) cannot take it.
        let mut o = flakeid_options_default();
        o.struct_size = std::mem::offset_of!(flakeid_options, require_node);
        assert_eq!(
            set(&mut o, c"require_node", c"true"),
            flakeid_status::FLAKEID_ERR_CONFIG
        );
        assert_eq!(last().0.as_deref(), Some("struct_size"));
    }

    /// An option with no field of its own (every option added after require_node)
    /// travels in `by_name` and is set by name when the generator is built, after
    /// the fields; a struct from a header without `by_name` reads it as all NULL.
    #[test]
    fn options_without_a_field_go_by_name() {
        for name in HAS_FIELD {
            assert!(
                flakeid_core::GENERATOR_OPTIONS.iter().any(|row| row.name == name),
                "{name}"
            );
        }
        let node_of = |o: &flakeid_options| {
            let (mut g, mut n) = (std::ptr::null_mut(), 0);
            let st = unsafe { flakeid_generator_new(o, &mut g) };
            if st == flakeid_status::FLAKEID_OK {
                assert_eq!(
                    unsafe { crate::flakeid_generator_node(g, &mut n) },
                    flakeid_status::FLAKEID_OK
                );
                unsafe { flakeid_generator_free(g) };
            }
            (st, n)
        };
        let mut o = flakeid_options_default();
        o.node = 931;
        put_by_name(&mut o, "node", c"917".as_ptr());
        assert_eq!(node_of(&o), (flakeid_status::FLAKEID_OK, 917));
        put_by_name(&mut o, "node", c"70000".as_ptr());
        assert_eq!(node_of(&o).0, flakeid_status::FLAKEID_ERR_CONFIG);
        o.struct_size = std::mem::offset_of!(flakeid_options, by_name);
        assert_eq!(node_of(&o), (flakeid_status::FLAKEID_OK, 931));
    }
}
