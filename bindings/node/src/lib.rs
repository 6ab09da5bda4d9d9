//! `@flakeid/node`: the napi-rs binding. Conversion only — every rule (ranges,
//! policies, encodings) lives in `flakeid-core`. IDs cross as `bigint` (`u64`),
//! never as a JS `number`; incoming IDs are range-checked here.

/// The core's `Stats` as one of the package's stats objects (`Stats`,
/// `UuidStats`): each named counter a JS number, then the other members given.
/// The package's one stats conversion.
macro_rules! stats_object {
    ($s:ident => $ty:ident { $($count:ident),* $(,)? } $(+ { $($member:ident: $value:expr),* $(,)? })?) => {
        $ty { $($count: $s.$count as f64,)* $($($member: $value,)*)? }
    };
}
pub(crate) use stats_object;

/// napi's type name and check for a type read from any JS value (`unknown`): its
/// `FromNapiValue` never fails, so a wrong type is flakeid-js's refusal, not napi's.
macro_rules! any_js_value {
    ($ty:ty) => {
        impl TypeName for $ty {
            fn type_name() -> &'static str {
                "unknown"
            }
            fn value_type() -> ValueType {
                ValueType::Unknown
            }
        }

        impl ValidateNapiValue for $ty {}
    };
}

mod fast;
mod generator;
mod layout;
mod sealer;
pub mod uuid;

use flakeid_core as fc;
use flakeid_js as js;
use napi::ValueType;
use napi::bindgen_prelude::{
    BigInt, Buffer, FromNapiValue, JsObjectValue, JsValue, Object, TypeName, Uint8Array, Unknown, ValidateNapiValue,
};
use napi::{Env, Status};
use napi_derive::napi;

pub use generator::{Generator, ManualClock};
pub use layout::{Layout, Parts};
pub use sealer::Sealer;
pub use uuid::UuidGenerator;

/// On load: redis://, postgres://, etcd:// lease URLs (the `net-leases` feature, on
/// in every package).
#[cfg(feature = "net-leases")]
#[napi_derive::module_init]
fn init() {
    flakeid_lease_net::install();
}

/// A core error thrown as a JS `Error` whose `code` is the core's
/// (`FLAKEID_CONFIG`, ...) and which carries `field`, `byMs` or `position` where the
/// core names them. The exception is left pending; napi sees `PendingException`.
pub(crate) fn throw(env: &Env, e: fc::Error) -> napi::Error {
    let build = || -> napi::Result<()> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, e.to_string()))?;
        obj.set_named_property("code", e.kind().code())?;
        // Which error carries which detail is the core's (Error::details).
        let d = e.details();
        if let Some(field) = d.field {
            obj.set_named_property("field", field)?;
        }
        if let Some(by_ms) = d.by_ms {
            obj.set_named_property("byMs", by_ms as f64)?;
        }
        if let Some(position) = d.position {
            obj.set_named_property("position", position as u32)?;
        }
        env.throw(obj)
    };
    match build() {
        Ok(()) => napi::Error::from_status(Status::PendingException),
        Err(err) => err,
    }
}

/// `Result` of a core call, thrown as a flakeid error.
pub(crate) trait OrThrow<T> {
    fn or_throw(self, env: &Env) -> napi::Result<T>;
}

impl<T> OrThrow<T> for fc::Result<T> {
    #[inline]
    fn or_throw(self, env: &Env) -> napi::Result<T> {
        self.map_err(|e| throw(env, e))
    }
}

/// Any JS argument, read into flakeid-js's [`js::JsArg`]: the rules for JS values
/// (2^53, IDs never as numbers, bigint ranges, null is not absent) are flakeid-js's
/// (`flakeid_js::js_*`), shared with `@flakeid/wasm`. Reading never fails, so that
/// a wrong type becomes FLAKEID_CONFIG naming the field (napi's own conversion
/// error has no code).
#[derive(Debug, Clone, PartialEq)]
pub struct Arg(pub js::JsArg);

any_js_value!(Arg);

impl FromNapiValue for Arg {
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> napi::Result<Self> {
        // SAFETY: forwarded contract (a live env and value).
        unsafe { read(env, value) }.map(Arg)
    }
}

/// A JS value as flakeid-js's [`js::JsArg`].
///
/// # Safety
/// `env` and `value` must be live handles of the current call.
pub(crate) unsafe fn read(env: napi::sys::napi_env, value: napi::sys::napi_value) -> napi::Result<js::JsArg> {
    use js::JsArg as A;
    let mut kind = 0;
    // SAFETY (this block): napi hands a live env and value; each read matches the type checked.
    unsafe {
        napi::check_status!(napi::sys::napi_typeof(env, value, &mut kind))?;
        Ok(match ValueType::from(kind) {
            ValueType::Undefined => A::Undefined,
            ValueType::Null => A::Null,
            ValueType::Boolean => A::Bool(bool::from_napi_value(env, value)?),
            ValueType::Number => A::Number(f64::from_napi_value(env, value)?),
            ValueType::BigInt => {
                let b = BigInt::from_napi_value(env, value)?;
                let magnitude = match b.words.iter().skip(1).all(|&w| w == 0) {
                    true => Some(b.words.first().copied().unwrap_or(0)),
                    false => None,
                };
                A::BigInt {
                    negative: b.sign_bit,
                    magnitude,
                }
            }
            ValueType::String => A::String(String::from_napi_value(env, value)?),
            ValueType::Object => {
                let mut array = false;
                napi::check_status!(napi::sys::napi_is_array(env, value, &mut array))?;
                if array { A::Array } else { A::Object }
            }
            ValueType::Function => A::Function,
            _ => A::Other,
        })
    }
}

/// An [`Unknown`] as flakeid-js's [`js::JsArg`].
pub(crate) fn arg(value: &Unknown<'_>) -> napi::Result<js::JsArg> {
    // SAFETY: a live value of this call's env.
    unsafe { read(value.value().env, value.raw()) }
}

/// An options argument as an object, or `None` when it is left out (absent,
/// `undefined` or `null`); anything else is refused (flakeid-js's rule).
pub(crate) fn options_object<'a>(env: &Env, value: Option<Unknown<'a>>) -> napi::Result<Option<Object<'a>>> {
    match value {
        // SAFETY: flakeid-js's rule accepts only a (non-array) object.
        Some(v) if js::js_options(&arg(&v)?).or_throw(env)? => Ok(Some(unsafe { v.cast()? })),
        _ => Ok(None),
    }
}

/// An object's own enumerable keys, in its order.
pub(crate) fn keys(obj: &Object<'_>) -> napi::Result<Vec<String>> {
    let names = obj.get_property_names()?;
    (0..names.get_array_length()?).map(|i| names.get_element(i)).collect()
}

/// A JS number that must be a whole number in `0..=2^53-1`.
pub(crate) fn uint(field: &'static str, v: Arg) -> fc::Result<u64> {
    js::js_uint(field, &v.0, js::JS_MAX_SAFE)
}

/// An incoming ID: a `bigint` in `0..2^64`, or its decimal string (the core's rule).
pub(crate) type IdArg = Arg;

/// An incoming ID, also a `number` as `numbers` says (`JsNumberIds::for_layout`:
/// every ID of a `js53` layout is an exact number).
pub(crate) fn id_of(id: IdArg, numbers: js::JsNumberIds) -> fc::Result<u64> {
    js::js_id("id", &id.0, numbers)
}

/// A `layout` argument (`undefined` or `null`: absent, `snowflake`): a [`Layout`], a
/// preset name or a `LayoutOptions` object, read without failing so that a wrong value is flakeid-js's
/// refusal (`js_layout_name`, shared with `@flakeid/wasm`), not napi's.
#[derive(Debug)]
pub struct LayoutValue(fc::Result<fc::Layout>);

pub type LayoutArg = Option<LayoutValue>;

any_js_value!(LayoutValue);

impl FromNapiValue for LayoutValue {
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> napi::Result<Self> {
        // SAFETY: forwarded contract (a live env and value).
        let arg = unsafe { read(env, value) }?;
        Ok(LayoutValue(match js::js_layout_name(&arg) {
            Ok(Some(name)) => fc::Layout::preset(name),
            // SAFETY: as above, an object.
            Ok(None) => unsafe { layout::layout_object(env, value) }?,
            Err(e) => Err(e),
        }))
    }
}

pub(crate) fn layout_in(layout: LayoutArg) -> fc::Result<fc::Layout> {
    layout.map_or(Ok(fc::Layout::SNOWFLAKE), |l| l.0)
}

/// A `Uint8Array` (or `Buffer`) argument, or FLAKEID_CONFIG naming `field`
/// (flakeid-js's `js_not_bytes`, as in `@flakeid/wasm`).
pub(crate) fn bytes_in(env: &Env, value: Unknown<'_>, field: &'static str) -> napi::Result<Uint8Array> {
    let a = arg(&value)?;
    if a == js::JsArg::Object {
        // SAFETY: a live value of this call's env.
        if let Ok(bytes) = unsafe { Uint8Array::from_napi_value(env.raw(), value.raw()) } {
            return Ok(bytes);
        }
    }
    Err(js::js_not_bytes(field, &a)).or_throw(env)
}

/// Takes an ID apart (`layout` defaults to `snowflake`); refuses IDs with bits
/// above the layout's width.
#[napi(ts_args_type = "id: bigint | string | number, layout?: Layout | string | LayoutOptions")]
pub fn decompose<'e>(env: &'e Env, id: IdArg, layout: LayoutArg) -> napi::Result<Parts<'e>> {
    let inner = layout_in(layout).or_throw(env)?;
    Layout { inner }.decompose(env, id)
}

/// An ID of `layout` (default `snowflake`) from a `bigint`, a whole `number`, decimal
/// text or 8 big-endian bytes: the engine's one parser (`FLAKEID_PARSE` otherwise).
#[napi(ts_args_type = "value: bigint | string | number | Uint8Array, layout?: Layout | string | LayoutOptions")]
pub fn parse_id(env: &Env, value: Unknown<'_>, layout: LayoutArg) -> napi::Result<u64> {
    let inner = layout_in(layout).or_throw(env)?;
    let (e, v) = (env.raw(), value.raw());
    let mut typed = false;
    // SAFETY: a live env and value of this call.
    napi::check_status!(unsafe { napi::sys::napi_is_typedarray(e, v, &mut typed) })?;
    // SAFETY: a live typed array of this call (another element type fails to read).
    let bytes = typed
        .then(|| unsafe { Uint8Array::from_napi_value(e, v) })
        .and_then(Result::ok);
    js::js_parse_id(&inner, &arg(&value)?, bytes.as_deref()).or_throw(env)
}

/// Builds an ID from a Unix-ms time (floored to its tick), a node id and a sequence.
#[napi(ts_args_type = "timestampMs: number, node: number, sequence: number, layout?: Layout | string | LayoutOptions")]
pub fn compose(
    env: &Env,
    timestamp_ms: crate::Arg,
    node: crate::Arg,
    sequence: crate::Arg,
    layout: LayoutArg,
) -> napi::Result<u64> {
    let inner = layout_in(layout).or_throw(env)?;
    Layout { inner }.compose(env, timestamp_ms, node, sequence)
}

/// `[first, last]`: every ID made from `startMs` to `endMs` (inclusive) lies in
/// `first..=last` — for `WHERE id BETWEEN first AND last`.
#[napi(
    ts_args_type = "startMs: number, endMs: number, layout?: Layout | string | LayoutOptions",
    ts_return_type = "[bigint, bigint]"
)]
pub fn id_range(env: &Env, start_ms: crate::Arg, end_ms: crate::Arg, layout: LayoutArg) -> napi::Result<Vec<u64>> {
    let inner = layout_in(layout).or_throw(env)?;
    Layout { inner }.id_range(env, start_ms, end_ms)
}

/// Fixed-width, sort-preserving text: `hex`, `base32` (Crockford), `base62`, or `decimal`.
/// A `number` ID (a `js53` one) is taken when it is a whole number up to 2^53 - 1:
/// such a number is exact, whatever its layout (a wider ID made a number is past
/// 2^53 and refused).
#[napi(ts_args_type = "id: bigint | string | number, encoding?: 'decimal' | 'hex' | 'base32' | 'base62'")]
pub fn encode(env: &Env, id: IdArg, encoding: Option<Arg>) -> napi::Result<String> {
    let enc = encoding_in(encoding).or_throw(env)?;
    Ok(fc::encode(id_of(id, js::JsNumberIds::Exact).or_throw(env)?, enc))
}

/// Parses `encode`'s text back; a bad character is a `FLAKEID_PARSE` error with its `position`.
#[napi(ts_args_type = "text: string, encoding?: 'decimal' | 'hex' | 'base32' | 'base62'")]
pub fn decode(env: &Env, text: Arg, encoding: Option<Arg>) -> napi::Result<u64> {
    let enc = encoding_in(encoding).or_throw(env)?;
    let text = js::js_string("text", text.0).or_throw(env)?;
    fc::decode(&text, enc).or_throw(env)
}

/// An optional encoding argument, by flakeid-js's rule (shared with `@flakeid/wasm`).
fn encoding_in(name: Option<Arg>) -> fc::Result<fc::Encoding> {
    js::js_encoding(name.map_or(js::JsArg::Undefined, |a| a.0))
}

/// The 8-byte big-endian form (flake-idgen's `Buffer`).
#[napi(ts_args_type = "id: bigint | string")]
pub fn to_bytes(env: &Env, id: IdArg) -> napi::Result<Buffer> {
    let id = id_of(id, js::JsNumberIds::Refused).or_throw(env)?;
    Ok(fc::to_bytes(id).to_vec().into())
}

/// An ID from its 8 big-endian bytes (a `Buffer` or `Uint8Array`).
#[napi(ts_args_type = "bytes: Uint8Array")]
pub fn from_bytes(env: &Env, bytes: Unknown<'_>) -> napi::Result<u64> {
    fc::from_bytes(&bytes_in(env, bytes, "bytes")?).or_throw(env)
}

/// The `new Generator` options the `FLAKEID_<NAME>` variables of `vars` give
/// (`process.env`; the engine's list, every option but the test clock): camelCase
/// keys, numbers as numbers, `requireNode` a boolean. A malformed number is
/// `FLAKEID_CONFIG` naming the option.
#[napi(
    ts_args_type = "vars: Record<string, string | undefined>",
    ts_return_type = "GeneratorOptions"
)]
pub fn options_from_env<'e>(env: &'e Env, vars: Object<'_>) -> napi::Result<Object<'e>> {
    let read =
        js::js_options_from_env(|k| vars.get_named_property::<Option<String>>(k).ok().flatten()).or_throw(env)?;
    let mut out = Object::new(env)?;
    for (name, value) in read {
        set_option(&mut out, name, value)?;
    }
    Ok(out)
}

fn set_option(out: &mut Object<'_>, name: &str, value: js::JsOptionOut) -> napi::Result<()> {
    match value {
        js::JsOptionOut::Number(n) => out.set_named_property(name, n),
        js::JsOptionOut::Bool(b) => out.set_named_property(name, b),
        js::JsOptionOut::Text(t) => out.set_named_property(name, t),
    }
}

/// The `new Generator` options a framework's settings mapping gives, by the engine's
/// names (`{ NODE: 3, 'clock-backwards': 'wait', lease_ttl_ms: '500' }`: each key an
/// option's snake_case name or flag spelling, in any case): camelCase keys, in the
/// mapping's order; `undefined` and `null` values left out; strings read as
/// `optionsFromEnv` reads them, other values as given (the constructor checks them).
/// An unknown key is `FLAKEID_CONFIG` with `field: 'settings'`, listing the known names.
#[napi(
    ts_args_type = "settings: Record<string, unknown>",
    ts_return_type = "GeneratorOptions"
)]
pub fn settings_options<'e>(env: &'e Env, settings: Unknown<'_>) -> napi::Result<Object<'e>> {
    js::js_settings(&arg(&settings)?).or_throw(env)?;
    // SAFETY: flakeid-js read it as a (non-array) object.
    let settings = unsafe { settings.cast::<Object>() }?;
    let mut out = Object::new(env)?;
    for key in keys(&settings)? {
        let value = settings.get_named_property::<Unknown>(&key)?;
        match js::js_setting(&key, &arg(&value)?).or_throw(env)? {
            None => {}
            Some((name, None)) => out.set_named_property(name, value)?,
            Some((name, Some(read))) => set_option(&mut out, name, read)?,
        }
    }
    Ok(out)
}

/// Throws the engine's refusal (`FLAKEID_CONFIG`, field `settings`) of a second,
/// different configuration of the process's one generator (`first`, `second`: the
/// two as shown), for `@flakeid/node/settings`.
#[napi(ts_return_type = "never")]
pub fn configured_twice(env: &Env, first: String, second: String) -> napi::Result<()> {
    Err(fc::configured_twice(&first, &second)).or_throw(env)
}

/// The lease a generator takes for the `lease` option `lease`: `lease` itself, or for
/// `'database'` the `postgres://` URL of the app's own PostgreSQL, from the connection
/// settings a framework holds (`parts`, for `@flakeid/node/settings`: strings, numbers
/// and booleans as their text; other values left out). `FLAKEID_CONFIG` on `lease` for a
/// database other than PostgreSQL (flakeid_lease_net::database_lease).
#[napi(ts_args_type = "lease: string, parts: Record<string, unknown>")]
pub fn database_lease(env: &Env, lease: String, parts: Object<'_>) -> napi::Result<String> {
    let mut texts = Vec::new();
    for key in keys(&parts)? {
        let text = match arg(&parts.get_named_property::<Unknown>(&key)?)? {
            js::JsArg::String(s) => s,
            js::JsArg::Number(n) => n.to_string(),
            js::JsArg::Bool(b) => b.to_string(),
            _ => continue,
        };
        texts.push((key, text));
    }
    #[cfg(feature = "net-leases")]
    return flakeid_lease_net::database_lease(&lease, &texts).or_throw(env);
    // The lean build: the word is refused as any postgres:// URL would be.
    #[cfg(not(feature = "net-leases"))]
    return fc::lease::LeaseSpec::parse(&lease).map(|_| lease).or_throw(env);
}

/// Checks an ORM plugin's `tables` (`@flakeid/node/kysely`): an object mapping at
/// least one table to its ID column, else `FLAKEID_CONFIG` naming `tables`.
#[napi(ts_args_type = "tables: unknown")]
pub fn check_tables(env: &Env, tables: Unknown<'_>) -> napi::Result<()> {
    let a = arg(&tables)?;
    let count = match a {
        // SAFETY: flakeid-js read it as a (non-array) object.
        js::JsArg::Object => keys(&unsafe { tables.cast::<Object>() }?)?.len(),
        _ => 0,
    };
    js::js_tables(&a, count).or_throw(env)
}

/// Every `err.code` by kind: `{ CONFIG: 'FLAKEID_CONFIG', CLOCK_BACKWARDS: ..., ... }`.
#[napi(ts_return_type = "Record<string, string>")]
pub fn error_codes(env: &Env) -> napi::Result<Object<'_>> {
    let mut codes = Object::new(env)?;
    for kind in fc::ErrorKind::ALL {
        codes.set_named_property(&kind.name().to_ascii_uppercase(), kind.code())?;
    }
    Ok(codes)
}

/// The engine's version.
#[napi]
pub fn version() -> &'static str {
    fc::VERSION
}
