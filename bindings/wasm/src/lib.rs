//! WebAssembly binding for flakeid (`@flakeid/wasm`), built with wasm-bindgen.
//!
//! The same JS API as `@flakeid/node`: `Generator`, `Layout`, `ManualClock`,
//! `decompose`, `encode`, `decode`. IDs cross as `bigint`, range-checked on the way
//! in (wasm-bindgen would wrap silently); errors are `Error`s with a `code`. Every
//! rule lives in `flakeid-core` (the JS value rules in `flakeid-js`): this crate
//! only converts.

mod convert;
mod generator;
mod layout;
#[cfg(feature = "seal")]
mod sealer;
#[cfg(feature = "uuid7")]
mod uuid;

pub use generator::{Generator, ManualClock};
pub use layout::Layout;
#[cfg(feature = "seal")]
pub use sealer::Sealer;
#[cfg(feature = "uuid7")]
pub use uuid::UuidGenerator;

use convert::js_error;
use flakeid_core::Encoding;
use js_sys::{Array, Object, Uint8Array};
use layout::layout_from_js;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_ENCODING: &str = r#"
export type Encoding = "decimal" | "hex" | "base32" | "base62";
"#;

/// An ID of `layout` (default snowflake) from a `bigint`, a whole `number`, decimal
/// text or 8 big-endian bytes: the engine's one parser (`FLAKEID_PARSE` otherwise).
#[wasm_bindgen(js_name = parseId)]
pub fn parse_id(
    #[wasm_bindgen(unchecked_param_type = "bigint | string | number | Uint8Array")] value: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "LayoutLike")] layout: Option<JsValue>,
) -> Result<u64, JsValue> {
    let inner = layout_from_js(&layout.unwrap_or_default())?;
    let bytes = value.dyn_ref::<Uint8Array>().map(Uint8Array::to_vec);
    flakeid_js::js_parse_id(&inner, &convert::arg(&value), bytes.as_deref()).map_err(js_error)
}

/// Takes an ID apart under `layout` (default snowflake).
#[wasm_bindgen(unchecked_return_type = "Parts")]
pub fn decompose(
    #[wasm_bindgen(unchecked_param_type = "bigint | string | number")] id: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "LayoutLike")] layout: Option<JsValue>,
) -> Result<Object, JsValue> {
    let inner = layout_from_js(&layout.unwrap_or_default())?;
    Layout { inner }.decompose(id)
}

/// An ID as text: `base62` (the default of every binding), `hex`, `base32` or `decimal`.
#[wasm_bindgen]
pub fn encode(
    #[wasm_bindgen(unchecked_param_type = "bigint | string | number")] id: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Encoding")] encoding: Option<JsValue>,
) -> Result<String, JsValue> {
    // A whole number up to 2^53 - 1 is exact whatever its layout (a `js53` ID);
    // a wider ID made a number is past 2^53, and refused.
    let id = convert::id_as(&id, "id", flakeid_js::JsNumberIds::Exact)?;
    Ok(flakeid_core::encode(id, encoding_of(encoding)?))
}

/// Parses text made by `encode`; `FLAKEID_PARSE` (with `position`) when it is not an ID.
#[wasm_bindgen]
pub fn decode(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Encoding")] encoding: Option<JsValue>,
) -> Result<u64, JsValue> {
    let text = convert::string(&text, "text")?;
    flakeid_core::decode(&text, encoding_of(encoding)?).map_err(js_error)
}

/// The 8 big-endian bytes of an ID (a `Buffer` in Node, else a `Uint8Array`).
#[wasm_bindgen(js_name = toBytes)]
pub fn to_bytes(#[wasm_bindgen(unchecked_param_type = "bigint | string")] id: JsValue) -> Result<Uint8Array, JsValue> {
    let id = convert::id(&id, "id")?;
    Ok(convert::bytes_out(&flakeid_core::to_bytes(id)))
}

/// The `new Generator` options the `FLAKEID_<NAME>` variables of `vars` give (the
/// engine's list): camelCase keys, numbers as numbers, `requireNode` a boolean.
#[wasm_bindgen(js_name = optionsFromEnv, unchecked_return_type = "GeneratorOptions")]
pub fn options_from_env(
    #[wasm_bindgen(unchecked_param_type = "Record<string, string | undefined>")] vars: JsValue,
) -> Result<JsValue, JsValue> {
    let read = flakeid_js::js_options_from_env(|k| {
        js_sys::Reflect::get(&vars, &JsValue::from_str(k))
            .ok()
            .and_then(|v| v.as_string())
    })
    .map_err(js_error)?;
    let out = js_sys::Object::new();
    for (name, value) in read {
        convert::set(&out, name, &option_out(value));
    }
    Ok(out.into())
}

fn option_out(value: flakeid_js::JsOptionOut) -> JsValue {
    match value {
        flakeid_js::JsOptionOut::Number(n) => JsValue::from_f64(n),
        flakeid_js::JsOptionOut::Bool(b) => JsValue::from_bool(b),
        flakeid_js::JsOptionOut::Text(t) => JsValue::from_str(&t),
    }
}

/// The `new Generator` options a framework's settings mapping gives, by the engine's
/// names (each key an option's snake_case name or flag spelling, in any case):
/// camelCase keys; `undefined` and `null` values left out; strings read as
/// `optionsFromEnv` reads them, other values as given. An unknown key is
/// `FLAKEID_CONFIG` with `field: "settings"`.
#[wasm_bindgen(js_name = settingsOptions, unchecked_return_type = "GeneratorOptions")]
pub fn settings_options(
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown>")] settings: JsValue,
) -> Result<JsValue, JsValue> {
    flakeid_js::js_settings(&convert::arg(&settings)).map_err(js_error)?;
    let out = js_sys::Object::new();
    for key in Object::keys(settings.unchecked_ref::<Object>()) {
        let key = key.as_string().unwrap_or_default();
        let value = convert::member(&settings, &key)?;
        match flakeid_js::js_setting(&key, &convert::arg(&value)).map_err(js_error)? {
            None => {}
            Some((name, None)) => convert::set(&out, name, &value),
            Some((name, Some(read))) => convert::set(&out, name, &option_out(read)),
        }
    }
    Ok(out.into())
}

/// Throws the engine's refusal (`FLAKEID_CONFIG`, field `settings`) of a second,
/// different configuration of the process's one generator.
#[wasm_bindgen(js_name = configuredTwice)]
pub fn configured_twice(first: &str, second: &str) -> Result<(), JsValue> {
    Err(js_error(flakeid_core::configured_twice(first, second)))
}

/// An ID from its 8 big-endian bytes.
#[wasm_bindgen(js_name = fromBytes)]
pub fn from_bytes(#[wasm_bindgen(unchecked_param_type = "Uint8Array")] bytes: JsValue) -> Result<u64, JsValue> {
    flakeid_core::from_bytes(&convert::bytes_in(&bytes, "bytes")?).map_err(js_error)
}

/// Builds an ID from a Unix-ms time, a node id and a sequence under `layout`.
#[wasm_bindgen]
pub fn compose(
    #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number | bigint")] node: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] sequence: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "LayoutLike")] layout: Option<JsValue>,
) -> Result<u64, JsValue> {
    let inner = layout_from_js(&layout.unwrap_or_default())?;
    Layout { inner }.compose(timestamp_ms, node, sequence)
}

/// `[first, last]` IDs made from `startMs` to `endMs` (inclusive) under `layout`.
#[wasm_bindgen(js_name = idRange, unchecked_return_type = "[bigint, bigint]")]
pub fn id_range(
    #[wasm_bindgen(js_name = startMs, unchecked_param_type = "number")] start_ms: JsValue,
    #[wasm_bindgen(js_name = endMs, unchecked_param_type = "number")] end_ms: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "LayoutLike")] layout: Option<JsValue>,
) -> Result<Array, JsValue> {
    let inner = layout_from_js(&layout.unwrap_or_default())?;
    Layout { inner }.id_range(start_ms, end_ms)
}

/// Checks an ORM plugin's `tables` (`@flakeid/node/kysely`): an object mapping at
/// least one table to its ID column, else `FLAKEID_CONFIG` naming `tables`.
#[wasm_bindgen(js_name = checkTables)]
pub fn check_tables(#[wasm_bindgen(unchecked_param_type = "unknown")] tables: JsValue) -> Result<(), JsValue> {
    let a = convert::arg(&tables);
    let count = match a {
        flakeid_js::JsArg::Object => Object::keys(tables.unchecked_ref::<Object>()).length() as usize,
        _ => 0,
    };
    flakeid_js::js_tables(&a, count).map_err(js_error)
}

/// Every error `code`, by kind: `{ CONFIG: "FLAKEID_CONFIG", ... }`.
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "Record<string, string>")]
pub fn error_codes() -> Object {
    convert::error_codes()
}

/// The engine's version.
#[wasm_bindgen]
pub fn version() -> String {
    flakeid_core::VERSION.to_owned()
}

/// An optional encoding argument, by flakeid-js's rule (shared with `@flakeid/node`).
fn encoding_of(name: Option<JsValue>) -> Result<Encoding, JsValue> {
    flakeid_js::js_encoding(convert::arg(&name.unwrap_or_default())).map_err(js_error)
}
