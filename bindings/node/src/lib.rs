//! `@flakeid/node`: the napi-rs binding. Conversion only — every rule (ranges,
//! policies, encodings) lives in `flakeid-core`. IDs cross as `bigint` (`u64`),
//! never as a JS `number`; incoming IDs are range-checked here.

mod fast;
mod generator;
mod layout;
mod sealer;

use flakeid_core as fc;
use napi::ValueType;
use napi::bindgen_prelude::{
    BigInt, Buffer, ClassInstance, Either, FromNapiValue, JsObjectValue, Object, TypeName, Uint8Array, Unknown,
    ValidateNapiValue,
};
use napi::{Env, Status};
use napi_derive::napi;

pub use generator::{Generator, ManualClock};
pub use layout::{Layout, Parts};
pub use sealer::Sealer;

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
        match &e {
            fc::Error::Config { field, .. } => obj.set_named_property("field", *field)?,
            fc::Error::ClockMovedBackwards { by_ms } => obj.set_named_property("byMs", *by_ms as f64)?,
            fc::Error::ClockStalled { waited_ms } => obj.set_named_property("byMs", *waited_ms as f64)?,
            fc::Error::Parse { position, .. } => obj.set_named_property("position", *position as u32)?,
            _ => {}
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

pub(crate) fn config(field: &'static str, message: String) -> fc::Error {
    fc::Error::Config { field, message }
}

/// Largest integer a JS `number` holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// A numeric argument as JS passed it: a number, or the type it was instead. Its
/// conversion never fails, so that a wrong type becomes FLAKEID_CONFIG naming the
/// field in [`uint`] (napi's own `f64` conversion throws an error with no code).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Number(f64),
    Not(ValueType),
}

impl From<f64> for Num {
    fn from(v: f64) -> Num {
        Num::Number(v)
    }
}

impl TypeName for Num {
    fn type_name() -> &'static str {
        "number"
    }
    fn value_type() -> ValueType {
        ValueType::Number
    }
}

impl ValidateNapiValue for Num {}

impl FromNapiValue for Num {
    unsafe fn from_napi_value(env: napi::sys::napi_env, value: napi::sys::napi_value) -> napi::Result<Self> {
        let mut kind = 0;
        // SAFETY: napi hands a live env and value.
        napi::check_status!(unsafe { napi::sys::napi_typeof(env, value, &mut kind) })?;
        let kind = ValueType::from(kind);
        if kind != ValueType::Number {
            return Ok(Num::Not(kind));
        }
        let mut v = 0.0;
        // SAFETY: as above; checked to be a number.
        napi::check_status!(unsafe { napi::sys::napi_get_value_double(env, value, &mut v) })?;
        Ok(Num::Number(v))
    }
}

/// A JS number that must be a whole number in `0..=2^53-1`.
pub(crate) fn uint(field: &'static str, v: impl Into<Num>) -> fc::Result<u64> {
    match v.into() {
        Num::Number(v) if v.fract() == 0.0 && (0.0..=MAX_SAFE).contains(&v) => Ok(v as u64),
        Num::Number(v) => Err(config(
            field,
            format!("{field} must be a whole number in 0..={MAX_SAFE}, got {v}"),
        )),
        Num::Not(t) => Err(config(field, format!("{field} must be a number, got {}", type_name(t)))),
    }
}

/// A `u64` that is not an ID (timestamp, node, sequence) as a JS number, exactly.
pub(crate) fn num(field: &'static str, v: u64) -> fc::Result<f64> {
    if v as f64 <= MAX_SAFE {
        Ok(v as f64)
    } else {
        Err(config(
            field,
            format!("{field} {v} is larger than a JS number holds exactly (2^53 - 1)"),
        ))
    }
}

/// A JS value's type, for messages.
pub(crate) fn type_name(t: ValueType) -> &'static str {
    use ValueType as T;
    match t {
        T::Undefined => "undefined",
        T::Null => "null",
        T::Boolean => "a boolean",
        T::Number => "a number",
        T::String => "a string",
        T::Symbol => "a symbol",
        T::Object => "an object",
        T::Function => "a function",
        T::BigInt => "a bigint",
        _ => "another kind of value",
    }
}

/// An incoming ID, as any JS value: checked here, so that every wrong type is a
/// FLAKEID_CONFIG error naming `id` (napi's own conversion error has no code).
pub(crate) type IdArg<'a> = Unknown<'a>;

/// An incoming ID: a `bigint` in `0..2^64`, or its decimal string. A `number` is
/// refused (it cannot hold every 64-bit ID), as is anything else.
pub(crate) fn id_in(id: IdArg<'_>) -> fc::Result<u64> {
    let napi_err = |e: napi::Error| config("id", format!("id could not be read: {e}"));
    match id.get_type().map_err(napi_err)? {
        ValueType::BigInt => {
            // SAFETY: checked to be a bigint.
            let b: BigInt = unsafe { id.cast() }.map_err(napi_err)?;
            match b.get_u64() {
                (false, v, true) => Ok(v),
                (sign, ..) => Err(config(
                    "id",
                    format!(
                        "id must be a bigint in 0n..=18446744073709551615n, got a {} one",
                        if sign { "negative" } else { "2^64 or larger" }
                    ),
                )),
            }
        }
        ValueType::String => {
            // SAFETY: checked to be a string.
            let s: String = unsafe { id.cast() }.map_err(napi_err)?;
            fc::decode(&s, fc::Encoding::Decimal)
        }
        ValueType::Number => Err(fc::js_number_id_error("id")),
        other => Err(config(
            "id",
            format!("id must be a bigint or a decimal string, got {}", type_name(other)),
        )),
    }
}

/// `layout` arguments: a [`Layout`] or a preset name; `snowflake` when absent.
pub(crate) type LayoutArg<'a> = Option<Either<String, ClassInstance<'a, Layout>>>;

pub(crate) fn layout_in(layout: LayoutArg<'_>) -> fc::Result<fc::Layout> {
    match layout {
        None => Ok(fc::Layout::SNOWFLAKE),
        Some(Either::A(name)) => fc::Layout::preset(&name),
        Some(Either::B(l)) => Ok(l.inner),
    }
}

/// Takes an ID apart (`layout` defaults to `snowflake`); refuses IDs with bits
/// above the layout's width.
#[napi(ts_args_type = "id: bigint | string, layout?: Layout | string")]
pub fn decompose<'e>(env: &'e Env, id: IdArg, layout: LayoutArg<'_>) -> napi::Result<Parts<'e>> {
    let layout = layout_in(layout).or_throw(env)?;
    layout::parts(env, &layout, id_in(id).or_throw(env)?)
}

/// Builds an ID from a Unix-ms time (floored to its tick), a node id and a sequence.
#[napi(ts_args_type = "timestampMs: number, node: number, sequence: number, layout?: Layout | string")]
pub fn compose(
    env: &Env,
    timestamp_ms: crate::Num,
    node: crate::Num,
    sequence: crate::Num,
    layout: LayoutArg<'_>,
) -> napi::Result<u64> {
    layout::compose_with(&layout_in(layout).or_throw(env)?, timestamp_ms, node, sequence).or_throw(env)
}

/// `[first, last]`: every ID made from `startMs` to `endMs` (inclusive) lies in
/// `first..=last` — for `WHERE id BETWEEN first AND last`.
#[napi(
    ts_args_type = "startMs: number, endMs: number, layout?: Layout | string",
    ts_return_type = "[bigint, bigint]"
)]
pub fn id_range(env: &Env, start_ms: crate::Num, end_ms: crate::Num, layout: LayoutArg<'_>) -> napi::Result<Vec<u64>> {
    let l = layout_in(layout).or_throw(env)?;
    layout::range(&l, start_ms, end_ms).or_throw(env)
}

/// Fixed-width, sort-preserving text: `hex`, `base32` (Crockford), `base62`, or `decimal`.
#[napi(ts_args_type = "id: bigint | string, encoding?: 'decimal' | 'hex' | 'base32' | 'base62'")]
pub fn encode(env: &Env, id: IdArg, encoding: Option<Unknown<'_>>) -> napi::Result<String> {
    let enc = encoding_in(encoding).or_throw(env)?;
    Ok(fc::encode(id_in(id).or_throw(env)?, enc))
}

/// Parses `encode`'s text back; a bad character is a `FLAKEID_PARSE` error with its `position`.
#[napi(ts_args_type = "text: string, encoding?: 'decimal' | 'hex' | 'base32' | 'base62'")]
pub fn decode(env: &Env, text: Unknown<'_>, encoding: Option<Unknown<'_>>) -> napi::Result<u64> {
    let enc = encoding_in(encoding).or_throw(env)?;
    let text = string_in(text, "text").or_throw(env)?;
    fc::decode(&text, enc).or_throw(env)
}

/// The core's default (`base62`) when absent (or `undefined`/`null`), as in every
/// binding; a name otherwise.
fn encoding_in(name: Option<Unknown<'_>>) -> fc::Result<fc::Encoding> {
    match name {
        None => Ok(fc::Encoding::default()),
        Some(v) if matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null)) => Ok(fc::Encoding::default()),
        Some(v) => fc::Encoding::parse(&string_in(v, "encoding")?),
    }
}

/// A string argument, or a FLAKEID_CONFIG error naming `field`.
pub(crate) fn string_in(value: Unknown<'_>, field: &'static str) -> fc::Result<String> {
    match value.get_type() {
        // SAFETY: checked to be a string.
        Ok(ValueType::String) => {
            unsafe { value.cast::<String>() }.map_err(|e| config(field, format!("{field} could not be read: {e}")))
        }
        Ok(other) => Err(config(
            field,
            format!("{field} must be a string, got {}", type_name(other)),
        )),
        Err(e) => Err(config(field, format!("{field} could not be read: {e}"))),
    }
}

/// The 8-byte big-endian form (flake-idgen's `Buffer`).
#[napi(ts_args_type = "id: bigint | string")]
pub fn to_bytes(env: &Env, id: IdArg) -> napi::Result<Buffer> {
    Ok(fc::to_bytes(id_in(id).or_throw(env)?).to_vec().into())
}

/// An ID from its 8 big-endian bytes (a `Buffer` or `Uint8Array`).
#[napi]
pub fn from_bytes(env: &Env, bytes: Uint8Array) -> napi::Result<u64> {
    fc::from_bytes(&bytes).or_throw(env)
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
