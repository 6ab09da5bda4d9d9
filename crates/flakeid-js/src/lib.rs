//! # flakeid-js
//!
//! The rules for values that arrive from JavaScript, written once for
//! `@flakeid/node` (napi-rs) and `@flakeid/wasm` (wasm-bindgen). Each binding reads
//! its native JS value into a [`JsArg`] and calls these functions; the rules
//! (numbers are exact only up to 2^53 - 1, an ID never arrives as a `number`, a
//! `bigint` outside `0..2^64` is refused rather than wrapped, `null` is not the same
//! as an absent option) and their messages live here alone.
//!
//! Pure Rust, no JS engine, and not in `flakeid-core`: the engine names no language.
//! It uses the core's public API only (its options table, its errors, its decoder),
//! as lightningcss keeps its napi glue apart from the engine.
#![warn(missing_docs)]

mod wide;
#[cfg(feature = "uuid7")]
pub use wide::js_uuid_generator_options;
pub use wide::{
    JsWide, js_buffer_offset, js_not_a_buffer, js_rand_a, js_shift_ms, js_unix_ms, js_uuid7_batch, js_uuid7_options,
    js_wide, js_wide_timestamp_ms,
};

use flakeid_core::{
    Encoding, Error, GENERATOR_OPTIONS, GeneratorOption, LAYOUT_FIELDS, Layout, LayoutBuilder, OptionKind, OptionValue,
    Result, check_batch, decode, shown, unknown_option,
};

/// The largest integer a JS `number` holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const JS_MAX_SAFE: u64 = (1 << 53) - 1;

/// The keys of `new Generator({...})`: the camelCase names of the core's
/// [`GENERATOR_OPTIONS`], in its order.
pub const JS_GENERATOR_OPTIONS: [&str; GENERATOR_OPTIONS.len()] = {
    let mut names = [""; GENERATOR_OPTIONS.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = GENERATOR_OPTIONS[i].camel_name;
        i += 1;
    }
    names
};

/// The keys of `new Sealer(key, {...})` (sealed IDs, flakeid-seal).
pub const JS_SEALER_OPTIONS: [&str; 2] = ["layout", "tweak"];

/// A JS value as a binding reads it, before any rule applies.
#[derive(Debug, Clone, PartialEq)]
pub enum JsArg {
    /// `undefined` (also: an argument not passed).
    Undefined,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A `number`.
    Number(f64),
    /// A `bigint`: its sign and, when it is below 2^64 in magnitude, that magnitude.
    BigInt {
        /// Below zero.
        negative: bool,
        /// `|value|`, or `None` when it is 2^64 or more.
        magnitude: Option<u64>,
    },
    /// A `string`.
    String(String),
    /// An array.
    Array,
    /// A function.
    Function,
    /// Any other object (a class instance, a `Uint8Array`, a plain object).
    Object,
    /// A symbol, or anything else.
    Other,
}

impl JsArg {
    /// The value's type in words, for messages: `a number`, `null`, `an object`...
    pub fn type_name(&self) -> &'static str {
        match self {
            JsArg::Undefined => "undefined",
            JsArg::Null => "null",
            JsArg::Bool(_) => "a boolean",
            JsArg::Number(_) => "a number",
            JsArg::BigInt { .. } => "a bigint",
            JsArg::String(_) => "a string",
            JsArg::Array => "an array",
            JsArg::Function => "a function",
            JsArg::Object => "an object",
            JsArg::Other => "another kind of value",
        }
    }

    /// `undefined` or `null`: how an optional *argument* is left out (`encode(id,
    /// null)`). Inside an options object only `undefined` is absent: see
    /// [`js_generator_option`].
    pub fn is_nullish(&self) -> bool {
        matches!(self, JsArg::Undefined | JsArg::Null)
    }

    /// The value itself where it is short (numbers, bigints, strings cut to 40
    /// characters), else its type: what a message shows after "got".
    pub fn shown(&self) -> String {
        match self {
            JsArg::Number(v) => js_number_text(*v),
            JsArg::BigInt { negative, magnitude } => bigint_text(*negative, *magnitude),
            JsArg::String(s) => shown(s),
            JsArg::Bool(b) => b.to_string(),
            other => other.type_name().into(),
        }
    }
}

/// A bigint as JS writes it (`-5n`), or its range when it is too large to show.
fn bigint_text(negative: bool, magnitude: Option<u64>) -> String {
    match (negative, magnitude) {
        (negative, Some(m)) => format!("{}{m}n", if negative && m != 0 { "-" } else { "" }),
        (true, None) => "a negative bigint".into(),
        (false, None) => "a bigint of 2^64 or more".into(),
    }
}

/// A number as JS writes it (`NaN`, `Infinity`, `1.5`, `4294967296`), for
/// messages. Without Rust's float formatting: it would add about 30 KB to the
/// WebAssembly package, whose numbers reach here.
pub(crate) fn js_number_text(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    if a.is_infinite() {
        return format!("{sign}Infinity");
    }
    if a >= 18_446_744_073_709_551_616.0 {
        return format!("{sign}a number of 2^64 or more");
    }
    if a.fract() != 0.0 {
        // (No decimals: shown for what it is, at no cost to the wasm package.)
        return format!("{sign}{} plus a fraction", a.trunc() as u64);
    }
    format!("{sign}{}", a as u64)
}

fn config(field: &'static str, message: String) -> Error {
    Error::Config { field, message }
}

/// A whole JS `number` in `0..=max` (and never above 2^53 - 1, where numbers stop
/// being exact): counts, times, node ids, bit widths. Anything but a `number` is
/// refused naming `field`, a `bigint` included (one rule in both packages).
pub fn js_uint(field: &'static str, value: &JsArg, max: u64) -> Result<u64> {
    let max = max.min(JS_MAX_SAFE);
    match *value {
        JsArg::Number(v) if v.fract() == 0.0 && v >= 0.0 && v <= max as f64 => Ok(v as u64),
        JsArg::Number(v) => Err(config(
            field,
            format!("{field} must be a whole number in 0..={max}, got {}", js_number_text(v)),
        )),
        ref other => Err(config(
            field,
            format!("{field} must be a number, got {}", other.type_name()),
        )),
    }
}

/// A batch size `n` (`nextIds(n)`, `nextNumbers(n)`): a whole `number`, then the
/// core's one rule for batch sizes ([`check_batch`]), as in every binding.
pub fn js_batch(value: &JsArg) -> Result<usize> {
    check_batch(i128::from(js_uint("n", value, JS_MAX_SAFE)?))
}

/// Whether a JS `number` may stand for an ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsNumberIds {
    /// Refused: a `number` cannot hold every 64-bit ID exactly (every layout today).
    Refused,
    /// Accepted when whole and at most 2^53 - 1: for layouts whose IDs all fit in
    /// 53 bits (the `js53` preset).
    Exact,
}

impl JsNumberIds {
    /// Numbers stand for IDs of `layout` only when its every ID is an exact JS
    /// number (at most 53 bits, like `js53`).
    pub fn for_layout(layout: &Layout) -> JsNumberIds {
        JsNumberIds::for_bits(layout.total_bits())
    }

    /// The same for IDs of `bits` bits (a sealer's width).
    pub fn for_bits(bits: u32) -> JsNumberIds {
        if bits <= 53 {
            JsNumberIds::Exact
        } else {
            JsNumberIds::Refused
        }
    }
}

/// `nextNumber()` / `nextNumbers(n)`: IDs as JS numbers, for layouts of at most 53
/// bits; others are a configuration error naming `layout`.
pub fn js_number_layout(layout: &Layout) -> Result<()> {
    match JsNumberIds::for_layout(layout) {
        JsNumberIds::Exact => Ok(()),
        JsNumberIds::Refused => Err(config(
            "layout",
            format!(
                "IDs as numbers need a layout of at most 53 bits (js53), got {} of {} bits: \
                 use nextId() for a bigint",
                layout.display_name(),
                layout.total_bits()
            ),
        )),
    }
}

/// An incoming ID: a `bigint` in `0..2^64` or its decimal string; a `number` only
/// as `numbers` allows. Never wrapped: out of range is a configuration error
/// naming `field` (bad text is a parse error with its position).
pub fn js_id(field: &'static str, value: &JsArg, numbers: JsNumberIds) -> Result<u64> {
    match value {
        JsArg::BigInt {
            negative: false,
            magnitude: Some(v),
        } => Ok(*v),
        JsArg::BigInt {
            negative: true,
            magnitude: Some(0),
        } => Ok(0),
        JsArg::BigInt { negative, magnitude } => Err(config(
            field,
            format!(
                "{field} must be a bigint in 0n..=18446744073709551615n, got {}",
                bigint_text(*negative, *magnitude)
            ),
        )),
        JsArg::String(s) => decode(s, Encoding::Decimal),
        JsArg::Number(_) if numbers == JsNumberIds::Exact => js_uint(field, value, JS_MAX_SAFE),
        JsArg::Number(_) => Err(js_number_id_error(field)),
        other => Err(config(
            field,
            format!(
                "{field} must be a bigint or a decimal string, got {}",
                other.type_name()
            ),
        )),
    }
}

/// An ID of `layout` as a program hands it over (`parseId`, `@flakeid/node/json`):
/// the core's one parser ([`flakeid_core::parse_id`]) and its parse errors. A
/// `bigint` or a whole `number` up to 2^53 - 1 is an integer, a string decimal
/// text, `bytes` (a `Uint8Array` the binding found) 8 big-endian bytes; a number
/// that is not such an integer cannot be one exactly and is refused as another type.
pub fn js_parse_id(layout: &Layout, value: &JsArg, bytes: Option<&[u8]>) -> Result<u64> {
    use flakeid_core::{IdValue, parse_id};
    let v = match (value, bytes) {
        (_, Some(b)) => IdValue::Bytes(b),
        (JsArg::Number(n), _) if n.fract() == 0.0 && n.abs() <= JS_MAX_SAFE as f64 => IdValue::Int(*n as i128),
        (JsArg::Number(_), _) => {
            IdValue::Other("a number that is not a whole number up to 2^53 - 1 (send IDs as text)")
        }
        (JsArg::BigInt { negative, magnitude }, _) => {
            let m = magnitude.map_or(i128::MAX, i128::from);
            IdValue::Int(if *negative { -m } else { m })
        }
        (JsArg::String(s), _) => IdValue::Text(s),
        (other, _) => IdValue::Other(other.type_name()),
    };
    parse_id(layout, v)
}

/// The error for an ID passed as a JS `number` where numbers are refused.
pub fn js_number_id_error(field: &'static str) -> Error {
    config(
        field,
        format!(
            "{field} must be a bigint or a decimal string, got a number (a number cannot hold every 64-bit ID \
             exactly: pass 123n or '123')"
        ),
    )
}

/// A `string`, or a configuration error naming `field`.
pub fn js_string(field: &'static str, value: JsArg) -> Result<String> {
    match value {
        JsArg::String(s) => Ok(s),
        other => Err(config(
            field,
            format!("{field} must be a string, got {}", other.type_name()),
        )),
    }
}

/// An optional encoding argument: the core's default (`base62`, as in every
/// binding) when left out (`undefined` or `null`), else a name.
pub fn js_encoding(value: JsArg) -> Result<Encoding> {
    match value {
        v if v.is_nullish() => Ok(Encoding::default()),
        v => js_string("encoding", v)?.parse(),
    }
}

/// What a `layout` takes, in messages (a `new Generator` option, a sealer's
/// option, an argument).
pub const JS_LAYOUT_WANTS: &str = "a Layout, a preset name or LayoutOptions";
/// What a `clock` takes, in messages.
pub const JS_CLOCK_WANTS: &str = "a ManualClock";

/// The refusal of `value` where `field` takes `wants` (`a ManualClock`, [`JS_LAYOUT_WANTS`]);
/// a [`JsArg::Object`] here is an object of another class.
pub fn js_wrong_type(field: &'static str, wants: &str, value: &JsArg) -> Error {
    let got = match value {
        JsArg::Object => "another object",
        other => other.type_name(),
    };
    config(field, format!("{field} must be {wants}, got {got}"))
}

/// The refusal of a value that is not a `Uint8Array` (a key, a tweak, bytes);
/// a [`JsArg::Object`] here is some other object.
pub fn js_not_bytes(field: &'static str, value: &JsArg) -> Error {
    js_wrong_type(field, "a Uint8Array (or Buffer)", value)
}

/// A layout where one is given (an argument, a sealer's or a generator's `layout`):
/// `Some(name)` for a preset's name, `None` for an object: a `Layout`, which the
/// binding unwraps, else a plain object of a layout's fields (`LayoutOptions`), which
/// both packages read with [`js_layout`], as `new Layout(...)` does; anything else is
/// refused naming `layout`. Absent arguments are the caller's.
pub fn js_layout_name(value: &JsArg) -> Result<Option<&str>> {
    match value {
        JsArg::String(s) => Ok(Some(s)),
        JsArg::Object => Ok(None),
        other => Err(js_wrong_type("layout", JS_LAYOUT_WANTS, other)),
    }
}

/// The member `key` of `new Sealer(key, {...})` ([`JS_SEALER_OPTIONS`]): `false`
/// when `undefined` (absent; `null` is a wrong type, as in generator options),
/// `true` when given, checked: a `tweak` must be an object (the binding reads
/// its bytes, refusing any other with [`js_not_bytes`]), a `layout` as
/// [`js_layout_name`].
pub fn js_sealer_option(key: &str, value: &JsArg) -> Result<bool> {
    match (key, value) {
        ("layout" | "tweak", JsArg::Undefined) => Ok(false),
        ("tweak", JsArg::Object) => Ok(true),
        ("tweak", other) => Err(js_not_bytes("tweak", other)),
        ("layout", other) => js_layout_name(other).map(|_| true),
        _ => Err(unknown_option(key, &JS_SEALER_OPTIONS)),
    }
}

/// The `tables` of an ORM plugin (Kysely's `FlakeIdPlugin({ tables })`): an object
/// (`count`: its keys) mapping at least one table to its ID column; else refused
/// naming `tables`.
pub fn js_tables(tables: &JsArg, count: usize) -> Result<()> {
    match tables {
        JsArg::Object if count > 0 => Ok(()),
        JsArg::Object => Err(config(
            "tables",
            "tables must map at least one table to its ID column, got an empty object".into(),
        )),
        other => Err(js_wrong_type(
            "tables",
            "an object mapping each table to its ID column",
            other,
        )),
    }
}

/// `idRange(startMs, endMs)`: the two times (whole numbers, naming `start_ms` and
/// `end_ms`), then the core's `Layout::id_range`.
pub fn js_id_range(layout: &Layout, start_ms: &JsArg, end_ms: &JsArg) -> Result<(u64, u64)> {
    let start = js_uint("start_ms", start_ms, JS_MAX_SAFE)?;
    layout.id_range(start, js_uint("end_ms", end_ms, JS_MAX_SAFE)?)
}

/// A value that is not an ID (a time, a node id, a sequence) going out as a JS
/// `number`: exact, or a configuration error naming `field` (never rounded).
pub fn js_number(field: &'static str, value: u64) -> Result<f64> {
    if value <= JS_MAX_SAFE {
        Ok(value as f64)
    } else {
        Err(config(
            field,
            format!("{field} {value} is larger than a JS number holds exactly (2^53 - 1)"),
        ))
    }
}

/// An options argument (`new Generator(options)`): `Ok(false)` when left out
/// (`undefined` or `null`: the defaults), `Ok(true)` for an object, else refused
/// naming `options`.
pub fn js_options(value: &JsArg) -> Result<bool> {
    match value {
        JsArg::Undefined | JsArg::Null => Ok(false),
        JsArg::Object => Ok(true),
        other => Err(config(
            "options",
            format!("options must be an object, got {}", other.type_name()),
        )),
    }
}

/// One member of `new Generator({...})`, checked against the core's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsOption<'a> {
    /// `undefined`: as if not given.
    Absent,
    /// A value for [`GeneratorBuilder::set`](flakeid_core::GeneratorBuilder::set).
    Value(OptionValue<'a>),
    /// An object the binding itself unwraps: a `Layout` (or, in the wasm package, a
    /// layout's options) for `layout`, a `ManualClock` for `clock`.
    Object,
}

/// The member `key` of a JS generator-options object: its option in the core's
/// table ([`GENERATOR_OPTIONS`], by camelCase name; an
/// unknown key is refused with a suggestion) and its value, converted by the
/// option's kind. `undefined` is absent; `null` is a value of the wrong type, as
/// is every other mismatch, refused naming the option's field.
pub fn js_generator_option<'a>(key: &str, value: &'a JsArg) -> Result<(&'static GeneratorOption, JsOption<'a>)> {
    let Some(option) = GENERATOR_OPTIONS.iter().find(|o| o.camel_name == key) else {
        return Err(unknown_option(key, &JS_GENERATOR_OPTIONS));
    };
    if *value == JsArg::Undefined {
        return Ok((option, JsOption::Absent));
    }
    let wrong = |wants: &str| {
        Err(config(
            option.name,
            format!("{} must be {wants}, got {}", option.camel_name, value.type_name()),
        ))
    };
    let converted = match (option.kind, value) {
        (OptionKind::Uint, _) => JsOption::Value(OptionValue::Uint(js_uint(option.name, value, JS_MAX_SAFE)?)),
        (OptionKind::Node, JsArg::String(s)) => JsOption::Value(OptionValue::Text(s)),
        (OptionKind::Node, JsArg::Number(_)) => {
            JsOption::Value(OptionValue::Uint(js_uint(option.name, value, JS_MAX_SAFE)?))
        }
        (OptionKind::Node, _) => return wrong("a number or a string"),
        (OptionKind::Layout, JsArg::String(s)) => JsOption::Value(OptionValue::Text(s)),
        (OptionKind::Layout, JsArg::Object) => JsOption::Object,
        (OptionKind::Layout, _) => return wrong(JS_LAYOUT_WANTS),
        (OptionKind::Clock, JsArg::Object) => JsOption::Object,
        (OptionKind::Clock, _) => return wrong(JS_CLOCK_WANTS),
        (OptionKind::LeaseUrl, JsArg::String(s)) => JsOption::Value(OptionValue::Text(s)),
        (OptionKind::LeaseUrl, _) => return wrong("a lease URL string"),
        (OptionKind::Bool, JsArg::Bool(on)) => JsOption::Value(OptionValue::Uint(u64::from(*on))),
        (OptionKind::Bool, _) => return wrong("a boolean"),
        (_, JsArg::String(s)) => JsOption::Value(OptionValue::Text(s)),
        _ => return wrong("a string"),
    };
    Ok((option, converted))
}

/// A value of a `new Generator({...})` member read from text (the environment).
#[derive(Debug, Clone, PartialEq)]
pub enum JsOptionOut {
    /// A `number` (a whole number; a node id given as digits).
    Number(f64),
    /// A `boolean` (`requireNode`).
    Bool(bool),
    /// A `string`.
    Text(String),
}

/// The `new Generator({...})` members the `FLAKEID_<NAME>` variables give (the
/// core's list, `flakeid_core::options_from_env`; `lookup` reads one variable), by
/// camelCase name, in the table's order: numbers as numbers (and a node id in
/// digits), `requireNode` as a boolean, the rest as text. A malformed number is a
/// config error naming the option; the rest is checked by the constructor.
pub fn js_options_from_env(lookup: impl FnMut(&str) -> Option<String>) -> Result<Vec<(&'static str, JsOptionOut)>> {
    let mut out = Vec::new();
    for (name, text) in flakeid_core::options_from_env(lookup) {
        let Some(option) = GENERATOR_OPTIONS.iter().find(|o| o.name == name) else {
            continue;
        };
        out.push((option.camel_name, js_option_text(option, &text)?));
    }
    Ok(out)
}

/// An option's value read from text (a variable, a setting given as a string):
/// numbers as numbers (one past 2^53 - 1 comes out inexact, and the constructor's
/// [`js_uint`] refuses it), a node id in digits as a number (a source stays text),
/// booleans as booleans, the rest as text. A malformed number or boolean is the
/// core's config error naming the option.
fn js_option_text(option: &GeneratorOption, text: &str) -> Result<JsOptionOut> {
    Ok(match (option.kind, flakeid_core::option_value(option, text)?) {
        // A node id in digits is a number, as the other numbers are (a source stays text).
        (OptionKind::Node, _) if let Ok(n) = text.trim().parse::<u64>() => JsOptionOut::Number(n as f64),
        (OptionKind::Bool, OptionValue::Uint(n)) => JsOptionOut::Bool(n == 1),
        (_, OptionValue::Uint(n)) => JsOptionOut::Number(n as f64),
        (_, OptionValue::Text(t)) => JsOptionOut::Text(t.to_string()),
    })
}

/// A framework's settings mapping (`settingsOptions(mapping)`): an object, else the
/// core's refusal ([`flakeid_core::not_settings`], naming `settings`).
pub fn js_settings(value: &JsArg) -> Result<()> {
    match value {
        JsArg::Object => Ok(()),
        other => Err(flakeid_core::not_settings(other.type_name())),
    }
}

/// One member of a framework's settings mapping as a `new Generator({...})` member:
/// the key names an option by its snake_case name or flag spelling, in any case
/// (`NODE`, `clock-backwards`: the core's [`flakeid_core::setting_option`], which
/// refuses an unknown key naming `settings`, with the known names). `None` when the
/// value is `undefined` or `null` (left out); else the option's camelCase name and,
/// for a string, its value read as the environment's are ([`js_options_from_env`]),
/// or `None` to take the value as given (the constructor checks it).
pub fn js_setting(key: &str, value: &JsArg) -> Result<Option<(&'static str, Option<JsOptionOut>)>> {
    let option = flakeid_core::setting_option(key)?;
    Ok(match value {
        v if v.is_nullish() => None,
        JsArg::String(s) => Some((option.camel_name, Some(js_option_text(option, s)?))),
        _ => Some((option.camel_name, None)),
    })
}

/// The members of `new Generator({...})` (key and value, in the object's order),
/// each checked by [`js_generator_option`] (the first bad one in the object's order
/// is refused), then put in the table's order whatever the object's, so that which
/// of two conflicting options an error names is the same in every binding. Each
/// comes with its member's index; `undefined` members are left out.
pub fn js_generator_options<'a>(
    members: impl IntoIterator<Item = (&'a str, &'a JsArg)>,
) -> Result<Vec<(usize, &'static GeneratorOption, JsOption<'a>)>> {
    let mut given: Vec<(usize, &'static GeneratorOption, JsOption<'a>)> = Vec::new();
    for (i, (key, value)) in members.into_iter().enumerate() {
        match js_generator_option(key, value)? {
            (_, JsOption::Absent) => {}
            (option, v) => given.push((i, option, v)),
        }
    }
    // (Not a sort: it would add kilobytes to the WebAssembly package.)
    let ordered = GENERATOR_OPTIONS
        .iter()
        .flat_map(|o| given.iter().filter(move |g| g.1.name == o.name));
    Ok(ordered.cloned().collect())
}

/// Which member (its index) gave option `name` as an object for the binding to
/// unwrap ([`JsOption::Object`]: a `Layout`, a `ManualClock`), in
/// [`js_generator_options`]' result.
pub fn js_object_option(given: &[(usize, &'static GeneratorOption, JsOption<'_>)], name: &str) -> Option<usize> {
    given
        .iter()
        .find(|g| g.1.name == name && g.2 == JsOption::Object)
        .map(|g| g.0)
}

/// A custom layout from the members of a `LayoutOptions` object (camelCase key
/// and value; a key not given is `undefined`), read through the core's
/// [`LAYOUT_FIELDS`]. `undefined` is absent (and `null` for `order`); numbers
/// follow [`js_uint`]; the core's builder checks the rest. `now_ms` is the present
/// (an epoch may not be later).
pub fn js_layout(members: &[(&str, JsArg)], now_ms: u64) -> Result<Layout> {
    let mut b = LayoutBuilder::default();
    for f in &LAYOUT_FIELDS {
        let value = members.iter().find(|m| m.0 == f.camel_name).map(|m| &m.1);
        b = match value.cloned().unwrap_or(JsArg::Undefined) {
            JsArg::Undefined => b,
            JsArg::Null if f.name == "order" => b,
            JsArg::String(s) if f.name == "order" => b.set(f.name, OptionValue::Text(&s))?,
            other if f.name == "order" => {
                return Err(config(
                    f.name,
                    format!("order must be a string, got {}", other.type_name()),
                ));
            }
            v => b.set(f.name, OptionValue::Uint(js_uint(f.name, &v, JS_MAX_SAFE)?))?,
        };
    }
    b.build_at(now_ms)
}

#[cfg(test)]
mod tests {

    #[test]
    fn options_from_the_environment() {
        let env = [
            ("FLAKEID_NODE", "7"),
            ("FLAKEID_LAYOUT", "discord"),
            ("FLAKEID_REQUIRE_NODE", "true"),
            ("FLAKEID_MAX_WAIT_MS", "5"),
        ];
        let got = js_options_from_env(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()));
        assert_eq!(
            got.ok(),
            Some(vec![
                ("node", JsOptionOut::Number(7.0)),
                ("layout", JsOptionOut::Text("discord".into())),
                ("maxWaitMs", JsOptionOut::Number(5.0)),
                ("requireNode", JsOptionOut::Bool(true)),
            ])
        );
        let source = js_options_from_env(|k| (k == "FLAKEID_NODE").then(|| "env:POD".to_string()));
        assert_eq!(source.ok(), Some(vec![("node", JsOptionOut::Text("env:POD".into()))]));
        match js_options_from_env(|k| (k == "FLAKEID_WORKER").then(|| "three".to_string())) {
            Err(Error::Config { field, .. }) => assert_eq!(field, "worker"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn settings_by_name() {
        let text = |s: &str| JsArg::String(s.into());
        assert_eq!(js_setting("NODE", &JsArg::Number(3.0)).ok(), Some(Some(("node", None))));
        assert_eq!(
            js_setting("clock-backwards", &text("wait")).ok(),
            Some(Some(("clockBackwards", Some(JsOptionOut::Text("wait".into())))))
        );
        assert_eq!(
            js_setting("Lease_Ttl_Ms", &text("500")).ok(),
            Some(Some(("leaseTtlMs", Some(JsOptionOut::Number(500.0)))))
        );
        assert_eq!(
            js_setting("REQUIRE_NODE", &text("true")).ok(),
            Some(Some(("requireNode", Some(JsOptionOut::Bool(true)))))
        );
        assert_eq!(js_setting("lease", &JsArg::Null).ok(), Some(None));
        // Unknown keys (and the test clock, and JS's camelCase names) are the core's refusal.
        for key in ["workerId", "clock", "maxWaitMs"] {
            let (f, m) = field(js_setting(key, &JsArg::Number(1.0)));
            assert_eq!(f, "settings");
            assert!(m.starts_with(&format!("unknown setting \"{key}\"")), "{m}");
        }
        assert_eq!(field(js_setting("worker", &text("three"))).0, "worker");
        assert!(js_settings(&JsArg::Object).is_ok());
        let (f, m) = field(js_settings(&JsArg::Array));
        assert_eq!((f, m.ends_with("got an array")), ("settings", true), "{m}");
    }

    use super::*;
    use flakeid_core::ErrorKind;

    fn field(r: Result<impl std::fmt::Debug>) -> (&'static str, String) {
        match r {
            Err(Error::Config { field, message }) => (field, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(js_uint("n", &JsArg::Number(5.0), 10).ok(), Some(5));
        assert_eq!(
            js_uint("n", &JsArg::Number(JS_MAX_SAFE as f64), u64::MAX).ok(),
            Some(JS_MAX_SAFE)
        );
        for bad in [-1.0, 1.5, f64::NAN, f64::INFINITY, 2f64.powi(53), 11.0] {
            let (f, m) = field(js_uint("n", &JsArg::Number(bad), 10));
            assert_eq!(f, "n");
            assert!(m.starts_with("n must be a whole number in 0..=10, got "), "{m}");
        }
        let (_, m) = field(js_uint("time_bits", &JsArg::Number(2f64.powi(32)), u32::MAX.into()));
        assert!(m.ends_with("got 4294967296"), "{m}");
        let (_, m) = field(js_uint("n", &JsArg::Number(f64::NEG_INFINITY), 10));
        assert!(m.ends_with("got -Infinity"), "{m}");
        for bad in [
            JsArg::Null,
            JsArg::Undefined,
            JsArg::Bool(true),
            JsArg::String("5".into()),
            JsArg::BigInt {
                negative: false,
                magnitude: Some(5),
            },
        ] {
            let (f, m) = field(js_uint("worker", &bad, 10));
            assert_eq!(
                (f, m),
                ("worker", format!("worker must be a number, got {}", bad.type_name()))
            );
        }
        assert_eq!(js_number("ts", JS_MAX_SAFE).ok(), Some(JS_MAX_SAFE as f64));
        assert_eq!(field(js_number("ts", JS_MAX_SAFE + 1)).0, "ts");
    }

    #[test]
    fn batch_sizes_are_the_core_rule() {
        let max = flakeid_core::MAX_BATCH;
        assert_eq!(js_batch(&JsArg::Number(max as f64)).ok(), Some(max));
        let over = max as i128 + 1;
        assert_eq!(field(js_batch(&JsArg::Number(over as f64))), field(check_batch(over)));
        assert_eq!(field(js_batch(&JsArg::Number(-1.0))).0, "n");
    }

    #[test]
    fn ids() {
        let big = |negative, magnitude| JsArg::BigInt { negative, magnitude };
        let r = JsNumberIds::Refused;
        assert_eq!(js_id("id", &big(false, Some(u64::MAX)), r).ok(), Some(u64::MAX));
        assert_eq!(js_id("id", &big(true, Some(0)), r).ok(), Some(0));
        assert_eq!(js_id("id", &JsArg::String("42".into()), r).ok(), Some(42));
        for (bad, shown) in [
            (big(true, Some(1)), "-1n"),
            (big(false, None), "a bigint of 2^64 or more"),
            (big(true, None), "a negative bigint"),
        ] {
            let (f, m) = field(js_id("id", &bad, r));
            assert_eq!(f, "id");
            assert!(m.ends_with(shown), "{m}");
        }
        // A number is refused however small, unless the layout's IDs fit 53 bits.
        let (f, m) = field(js_id("id", &JsArg::Number(5.0), r));
        assert_eq!(f, "id");
        assert!(m.contains("got a number"), "{m}");
        assert_eq!(js_id("id", &JsArg::Number(5.0), JsNumberIds::Exact).ok(), Some(5));
        assert_eq!(JsNumberIds::for_layout(&Layout::JS53), JsNumberIds::Exact);
        assert_eq!(JsNumberIds::for_layout(&Layout::SNOWFLAKE), JsNumberIds::Refused);
        assert!(js_number_layout(&Layout::JS53).is_ok());
        let e = js_number_layout(&Layout::SNOWFLAKE).err();
        assert_eq!(e.as_ref().map(|e| e.details().field), Some(Some("layout")));
        assert!(e.is_some_and(|e| e.to_string().contains("snowflake of 63 bits")));
        assert_eq!(field(js_id("id", &JsArg::Number(0.5), JsNumberIds::Exact)).0, "id");
        assert_eq!(field(js_id("id", &JsArg::Null, r)).0, "id");
        let e = js_id("id", &JsArg::String("12x".into()), r).err();
        assert_eq!(e.as_ref().map(Error::kind), Some(ErrorKind::Parse));
        assert_eq!(e.map(|e| e.details().position), Some(Some(2)));
    }

    #[test]
    fn options() {
        assert_eq!(js_options(&JsArg::Null).ok(), Some(false));
        assert_eq!(js_options(&JsArg::Object).ok(), Some(true));
        for bad in [
            JsArg::Array,
            JsArg::Number(5.0),
            JsArg::Function,
            JsArg::String("x".into()),
        ] {
            let (f, m) = field(js_options(&bad));
            assert_eq!(f, "options");
            assert!(m.starts_with("options must be an object, got "), "{m}");
        }
        let opt = |k: &str, v: JsArg| js_generator_option(k, &v).map(|(o, v)| (o.name, format!("{v:?}")));
        assert_eq!(
            opt("worker", JsArg::Number(3.0)).ok(),
            Some(("worker", "Value(Uint(3))".into()))
        );
        assert_eq!(opt("worker", JsArg::Undefined).ok(), Some(("worker", "Absent".into())));
        assert_eq!(
            opt("clockBackwards", JsArg::String("wait".into())).ok().map(|o| o.0),
            Some("clock_backwards")
        );
        assert_eq!(
            opt("node", JsArg::String("env:X".into())).ok().map(|o| o.0),
            Some("node")
        );
        assert_eq!(opt("layout", JsArg::Object).ok(), Some(("layout", "Object".into())));
        // null is not absent: a wrong type, naming the option's field.
        for (key, name) in [
            ("worker", "worker"),
            ("overflow", "overflow"),
            ("layout", "layout"),
            ("clock", "clock"),
        ] {
            assert_eq!(field(opt(key, JsArg::Null)).0, name);
        }
        assert_eq!(field(opt("maxWaitMs", JsArg::String("5".into()))).0, "max_wait_ms");
        assert_eq!(field(opt("node", JsArg::Bool(true))).0, "node");
        assert_eq!(field(opt("lease", JsArg::Number(1.0))).0, "lease");
        let (f, m) = field(opt("workerId", JsArg::Number(1.0)));
        assert_eq!(f, "options");
        assert!(m.contains("did you mean \"worker\""), "{m}");
        // snake_case keys are not the JS names.
        assert_eq!(field(opt("max_wait_ms", JsArg::Number(1.0))).0, "options");
    }

    #[test]
    fn options_in_the_tables_order() {
        let (w, n, u) = (JsArg::Number(1.0), JsArg::Number(2.0), JsArg::Undefined);
        let given = js_generator_options([("node", &n), ("maxWaitMs", &u), ("worker", &w)]);
        let names: Vec<_> = given.iter().flatten().map(|(i, o, _)| (*i, o.name)).collect();
        assert_eq!(names, [(2, "worker"), (0, "node")]);
        let bad = js_generator_options([("workerId", &w), ("node", &JsArg::Null)]);
        assert_eq!(field(bad).0, "options");
    }

    #[test]
    fn layouts() {
        let of = |members: &[(&str, JsArg)]| js_layout(members, u64::MAX);
        let l = of(&[
            ("nodeBits", JsArg::Number(16.0)),
            ("timeBits", JsArg::Number(39.0)),
            ("sequenceBits", JsArg::Number(8.0)),
            ("order", JsArg::Null),
        ]);
        assert_eq!(l.map(|l| (l.node_bits(), l.time_bits())).ok(), Some((16, 39)));
        assert_eq!(of(&[]).ok(), Some(Layout::SNOWFLAKE));
        let (f, m) = field(of(&[("timeBits", JsArg::Number(2f64.powi(32)))]));
        assert_eq!(
            (f, m.as_str()),
            ("time_bits", "time_bits must be in 1..=63, got 4294967296")
        );
        assert_eq!(field(of(&[("tickMs", JsArg::Null)])).0, "tick_ms");
        assert_eq!(field(of(&[("order", JsArg::Number(1.0))])).0, "order");
        assert_eq!(field(of(&[("order", JsArg::String("x".into()))])).0, "order");
    }

    #[test]
    fn shown_values() {
        assert_eq!(JsArg::Number(f64::NAN).shown(), "NaN");
        assert_eq!(JsArg::Number(-0.25).shown(), "-0 plus a fraction");
        assert_eq!(JsArg::Number(1.5).shown(), "1 plus a fraction");
        assert_eq!(JsArg::Number(-7.0).shown(), "-7");
        assert_eq!(JsArg::Number(2f64.powi(53)).shown(), "9007199254740992");
        assert_eq!(JsArg::Number(1e21).shown(), "a number of 2^64 or more");
        assert_eq!(JsArg::String("abc".into()).shown(), "\"abc\"");
        assert_eq!(JsArg::Object.shown(), "an object");
        assert_eq!(js_string("text", JsArg::String("x".into())).ok().as_deref(), Some("x"));
        assert_eq!(field(js_string("text", JsArg::Number(1.0))).0, "text");
    }
}
