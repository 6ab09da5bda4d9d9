//! JS values in, JS values out: range-checked integers, option objects, and the
//! one error mapping (`Error` with `.code`). No ID rules live here.

use flakeid_core::{Error, ErrorKind};
use flakeid_js::{JsArg, JsNumberIds};
use js_sys::{Function, Object, Reflect, Uint8Array};
use std::cell::Cell;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/clock.js")]
extern "C" {
    /// `Date.now()`, possibly cached within the current synchronous task (see clock.js).
    fn flakeid_now() -> f64;
    /// A fresh `Date.now()` (also refreshes the cache).
    fn flakeid_now_precise() -> f64;
}

/// Unix ms from a JS time (0 before 1970, which every layout rejects as before its epoch).
fn unix_ms(ms: f64) -> u64 {
    if ms > 0.0 { ms as u64 } else { 0 }
}

/// The host's clock as a cheap hint (may lag by the current task's duration, at most 64 reads).
pub(crate) fn now_ms() -> u64 {
    unix_ms(flakeid_now())
}

/// The host's clock, read now.
pub(crate) fn now_ms_precise() -> u64 {
    unix_ms(flakeid_now_precise())
}

/// A core error as a JS `Error` with `code` (`FLAKEID_CONFIG`, ...) and, where the
/// error has them, `field`, `byMs` or `position`. The message is the core's, unchanged.
pub(crate) fn js_error(err: Error) -> JsValue {
    let e = js_sys::Error::new(&err.to_string());
    let kind = err.kind();
    set(&e, "code", &kind.code().into());
    // Which error carries which detail is the core's (Error::details).
    let d = err.details();
    if let Some(field) = d.field {
        set(&e, "field", &field.into());
    }
    if let Some(by_ms) = d.by_ms {
        set(&e, "byMs", &number(by_ms));
    }
    if let Some(position) = d.position {
        set(&e, "position", &number(position as u64));
    }
    e.into()
}

/// Every error code, for `errorCodes` (the same table as the core's).
pub(crate) fn error_codes() -> Object {
    let o = Object::new();
    for kind in ErrorKind::ALL {
        set(&o, &kind.name().to_ascii_uppercase(), &kind.code().into());
    }
    o
}

pub(crate) fn config(field: &'static str, message: String) -> JsValue {
    js_error(Error::Config { field, message })
}

pub(crate) fn set(target: &JsValue, key: &str, value: &JsValue) {
    // Setting a data property on an object we created cannot fail.
    let _ = Reflect::set(target, &key.into(), value);
}

/// A u64 as a JS number; callers pass values below 2^53 (times, node ids, bits).
pub(crate) fn number(v: u64) -> JsValue {
    JsValue::from_f64(v as f64)
}

/// `options[key]` (`undefined` when `options` is not an object).
pub(crate) fn member(options: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    if !options.is_object() {
        return Ok(JsValue::UNDEFINED);
    }
    Reflect::get(options, &key.into())
}

/// A JS value as flakeid-js's [`JsArg`]: the rules for JS values (2^53, IDs never as
/// numbers, bigint ranges, null is not absent) and their messages are the core's
/// (`flakeid_js::js_*`), shared with `@flakeid/node`. This only reads.
pub(crate) fn arg(value: &JsValue) -> JsArg {
    if value.is_undefined() {
        JsArg::Undefined
    } else if value.is_null() {
        JsArg::Null
    } else if let Some(b) = value.as_bool() {
        JsArg::Bool(b)
    } else if let Some(f) = value.as_f64() {
        JsArg::Number(f)
    } else if value.is_bigint() {
        // wasm-bindgen's own conversions would wrap: these refuse what does not fit.
        match (u64::try_from(value.clone()), i64::try_from(value.clone())) {
            (Ok(v), _) => JsArg::BigInt {
                negative: false,
                magnitude: Some(v),
            },
            (_, Ok(v)) => JsArg::BigInt {
                negative: v < 0,
                magnitude: Some(v.unsigned_abs()),
            },
            _ => JsArg::BigInt {
                negative: value.lt(&JsValue::from(0u64)),
                magnitude: None,
            },
        }
    } else if let Some(s) = value.as_string() {
        JsArg::String(s)
    } else if js_sys::Array::is_array(value) {
        JsArg::Array
    } else if value.is_function() {
        JsArg::Function
    } else if value.is_object() {
        JsArg::Object
    } else {
        JsArg::Other
    }
}

/// An ID: a `bigint` in `0..2^64` or its decimal string; a `number` is refused.
/// IDs arrive as `JsValue`: wasm-bindgen would wrap an out-of-range `bigint`.
pub(crate) fn id(value: &JsValue, field: &'static str) -> Result<u64, JsValue> {
    id_as(value, field, JsNumberIds::Refused)
}

/// An ID that may also be a `number` as `numbers` says (the layout's width decides,
/// `JsNumberIds::for_layout`: a `js53` ID is an exact number).
pub(crate) fn id_as(value: &JsValue, field: &'static str, numbers: JsNumberIds) -> Result<u64, JsValue> {
    flakeid_js::js_id(field, &arg(value), numbers).map_err(js_error)
}

/// A whole `number` in `0..=2^53 - 1` (times, node ids, sequences: the core checks
/// their ranges).
pub(crate) fn uint(value: &JsValue, field: &'static str) -> Result<u64, JsValue> {
    flakeid_js::js_uint(field, &arg(value), flakeid_js::JS_MAX_SAFE).map_err(js_error)
}

/// A string argument. Arguments typed `&str` in Rust would let wasm-bindgen's glue
/// read a non-string as one (out-of-bounds memory access), so strings arrive as
/// `JsValue` and are checked here.
pub(crate) fn string(value: &JsValue, field: &'static str) -> Result<String, JsValue> {
    flakeid_js::js_string(field, arg(value)).map_err(js_error)
}

/// The bytes of a `Uint8Array` (a Node `Buffer` is one), or `FLAKEID_CONFIG`
/// naming `field`.
pub(crate) fn bytes_in(value: &JsValue, field: &'static str) -> Result<Vec<u8>, JsValue> {
    match value.dyn_ref::<Uint8Array>() {
        Some(a) => Ok(a.to_vec()),
        None => Err(js_error(flakeid_js::js_not_bytes(field, &arg(value)))),
    }
}

// Handing a Rust value from one exported object to another. A wasm-bindgen class
// instance found inside an options object cannot be borrowed from Rust (only
// consumed, which would break the caller's object), so the object is asked to put
// a copy of its value here (`__flakeid_share`), synchronously, and it is taken back
// at once. JS is single-threaded: nothing can run in between.
pub(crate) enum Shared {
    Layout(flakeid_core::Layout),
    Clock(flakeid_core::ManualClock),
}

thread_local! {
    static SHARED: Cell<Option<Shared>> = const { Cell::new(None) };
}

pub(crate) fn share(value: Shared) {
    SHARED.with(|s| s.set(Some(value)));
}

/// The value a flakeid object shares, or `None` when `obj` is not one.
pub(crate) fn shared(obj: &JsValue) -> Option<Shared> {
    let f = Reflect::get(obj, &"__flakeid_share".into()).ok()?;
    let f: Function = f.dyn_into().ok()?;
    SHARED.with(|s| s.set(None));
    f.call0(obj).ok()?;
    SHARED.with(|s| s.take())
}

/// Bytes out: a `Buffer` where the host has one (Node), else a `Uint8Array`.
pub(crate) fn bytes_out(bytes: &[u8]) -> Uint8Array {
    let array = Uint8Array::from(bytes);
    BUFFER_FROM.with(|from| match from {
        Some((ctor, f)) => f
            .call1(ctor, &array.buffer())
            .ok()
            .and_then(|b| b.dyn_into().ok())
            .unwrap_or(array),
        None => array,
    })
}

thread_local! {
    /// `(Buffer, Buffer.from)` when the host has Node's `Buffer`.
    static BUFFER_FROM: Option<(JsValue, Function)> = {
        let ctor = Reflect::get(&js_sys::global(), &"Buffer".into()).ok().filter(|c| c.is_function());
        ctor.and_then(|c| {
            let from = Reflect::get(&c, &"from".into()).ok()?.dyn_into::<Function>().ok()?;
            Some((c, from))
        })
    };
}

/// An options argument as the JS packages take it: absent, or an object whose keys
/// are all in `known` (flakeid-js's lists: `JS_GENERATOR_OPTIONS`, `JS_SEALER_OPTIONS`).
/// Returns the object's keys, for checks of the caller's own.
pub(crate) fn option_keys(options: &JsValue, known: &'static [&'static str]) -> Result<Vec<String>, JsValue> {
    if !flakeid_js::js_options(&arg(options)).map_err(js_error)? {
        return Ok(Vec::new());
    }
    let object: &Object = options.unchecked_ref();
    let mut keys = Vec::new();
    for key in Object::keys(object).iter() {
        let key = key.as_string().unwrap_or_default();
        if !known.contains(&key.as_str()) {
            return Err(js_error(flakeid_core::unknown_option(&key, known)));
        }
        keys.push(key);
    }
    Ok(keys)
}
