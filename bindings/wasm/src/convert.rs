//! JS values in, JS values out: range-checked integers, option objects, and the
//! one error mapping (`Error` with `.code`). No ID rules live here.

use flakeid_core::{Error, ErrorKind, JsNumberIds};
use js_sys::{Function, Object, Reflect, Uint8Array};
use std::cell::Cell;
use wasm_bindgen::prelude::*;

/// The largest integer a JS `number` holds exactly.
pub(crate) const MAX_SAFE: u64 = (1 << 53) - 1;

#[wasm_bindgen(module = "/js/clock.js")]
extern "C" {
    /// `Date.now()`, possibly cached within the current synchronous task (see clock.js).
    fn flakeid_now() -> f64;
    /// A fresh `Date.now()` (also refreshes the cache).
    fn flakeid_now_precise() -> f64;
}

#[wasm_bindgen]
extern "C" {
    /// `String(value)`, for messages.
    #[wasm_bindgen(js_name = String, catch)]
    fn js_string(value: &JsValue) -> Result<String, JsValue>;
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

/// An option's value, `None` when absent (`undefined` or `null`).
pub(crate) fn get(options: &JsValue, key: &str) -> Result<Option<JsValue>, JsValue> {
    if !options.is_object() {
        return Ok(None);
    }
    let v = Reflect::get(options, &key.into())?;
    Ok((!v.is_undefined() && !v.is_null()).then_some(v))
}

/// An ID: a `bigint` in `0..2^64`, or its decimal string (a `number` is refused, as
/// in `@flakeid/node`).
/// wasm-bindgen would wrap an out-of-range `bigint` silently, so IDs arrive as
/// `JsValue` and are checked here.
pub(crate) fn id(value: &JsValue, field: &'static str) -> Result<u64, JsValue> {
    id_as(value, field, JsNumberIds::Refused)
}

/// An ID that may also be a `number` as `numbers` says (the layout's width decides,
/// `JsNumberIds::for_layout`: a `js53` ID is an exact number).
pub(crate) fn id_as(value: &JsValue, field: &'static str, numbers: JsNumberIds) -> Result<u64, JsValue> {
    if let Some(s) = value.as_string() {
        return flakeid_core::decode(&s, flakeid_core::Encoding::Decimal).map_err(js_error);
    }
    if value.is_bigint() {
        return u64::try_from(value.clone()).map_err(|_| {
            config(
                field,
                format!(
                    "{field} must be a bigint in 0n..=18446744073709551615n, got {}",
                    describe(value)
                ),
            )
        });
    }
    if value.as_f64().is_some() {
        if numbers == JsNumberIds::Exact {
            return uint(value, field, MAX_SAFE);
        }
        // As in @flakeid/node: a number cannot hold every ID.
        return Err(js_error(flakeid_core::js_number_id_error(field)));
    }
    Err(config(
        field,
        format!("{field} must be a bigint or a decimal string, got {}", describe(value)),
    ))
}

/// A non-negative integer `number` or `bigint` up to `max` (and 2^53 - 1 for numbers).
pub(crate) fn uint(value: &JsValue, field: &'static str, max: u64) -> Result<u64, JsValue> {
    // Numbers only, as in @flakeid/node (a bigint here used to pass in wasm alone).
    let got = if let Some(f) = value.as_f64() {
        (f >= 0.0 && f <= MAX_SAFE as f64 && f.fract() == 0.0).then_some(f as u64)
    } else {
        return Err(config(
            field,
            format!("{field} must be a number, got {}", describe(value)),
        ));
    };
    match got {
        Some(v) if v <= max => Ok(v),
        _ => Err(config(
            field,
            format!("{field} must be in 0..={max}, got {}", describe(value)),
        )),
    }
}

/// An optional integer option.
pub(crate) fn opt_uint(options: &JsValue, key: &str, field: &'static str, max: u64) -> Result<Option<u64>, JsValue> {
    // `null` is not a number (as in @flakeid/node); only an absent key is "not given".
    if options.is_object() && Reflect::get(options, &key.into())?.is_null() {
        return Err(config(field, format!("{field} must be a number, got null")));
    }
    get(options, key)?.map(|v| uint(&v, field, max)).transpose()
}

/// A string argument. Arguments typed `&str` in Rust would let wasm-bindgen's glue
/// read a non-string as one (out-of-bounds memory access), so strings arrive as
/// `JsValue` and are checked here.
pub(crate) fn string(value: &JsValue, field: &'static str) -> Result<String, JsValue> {
    value
        .as_string()
        .ok_or_else(|| config(field, format!("{field} must be a string, got {}", describe(value))))
}

/// An optional string argument (`undefined` or `null` is `None`).
pub(crate) fn opt_string_arg(value: &JsValue, field: &'static str) -> Result<Option<String>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    string(value, field).map(Some)
}

/// The bytes of a `Uint8Array` (a Node `Buffer` is one).
pub(crate) fn bytes_in(value: &JsValue, field: &'static str) -> Result<Vec<u8>, JsValue> {
    value
        .dyn_ref::<Uint8Array>()
        .map(Uint8Array::to_vec)
        .ok_or_else(|| config(field, format!("{field} must be a Uint8Array, got {}", describe(value))))
}

/// An optional string option.
pub(crate) fn opt_string(options: &JsValue, key: &str, field: &'static str) -> Result<Option<String>, JsValue> {
    match get(options, key)? {
        None => Ok(None),
        Some(v) => string(&v, field).map(Some),
    }
}

pub(crate) fn describe(value: &JsValue) -> String {
    if let Some(s) = value.as_string() {
        // Briefly: a message never carries a whole (possibly huge) input.
        let short: String = s.chars().take(40).collect();
        return if short.len() < s.len() {
            format!("{short:?}…")
        } else {
            format!("{s:?}")
        };
    }
    let text = js_string(value).unwrap_or_else(|_| "a value".to_owned());
    if value.is_bigint() { format!("{text}n") } else { text }
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
/// are all in `known` (the core's list: `JS_GENERATOR_OPTIONS`, `JS_SEALER_OPTIONS`).
/// Returns the object's keys, for checks of the caller's own.
pub(crate) fn option_keys(options: &JsValue, known: &'static [&'static str]) -> Result<Vec<String>, JsValue> {
    if options.is_undefined() || options.is_null() {
        return Ok(Vec::new());
    }
    if !options.is_object() || js_sys::Array::is_array(options) || options.is_function() {
        return Err(config(
            "options",
            format!("options must be an object, got {}", describe(options)),
        ));
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
