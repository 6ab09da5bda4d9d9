//! `UuidGenerator` and the 128-bit family's functions (feature `uuid7`), as in
//! `@flakeid/node`: the core's generator, parsers and converters, converted. A UUID
//! goes out as lowercase text, as 16 bytes or as a `bigint` where asked; it comes in
//! as text, a `Uint8Array` or a `bigint` (flakeid-js's `js_wide`). The random bits
//! come from the host's `crypto.getRandomValues` (getrandom's `wasm_js`).

use crate::convert::{self, Shared, js_error};
use crate::generator::HostClock;
use flakeid_core::Wide;
use flakeid_js::{JsArg, JsWide};
use js_sys::{Object, Uint8Array};
use std::cell::OnceCell;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_UUID: &str = r#"
export interface UuidGeneratorOptions {
  /** "borrow" (default: run ahead of the clock when a millisecond's 65,536 are used) or "wait". */
  overflow?: "wait" | "borrow";
  /** "error" (default), "wait" or "monotonic". */
  clockBackwards?: "error" | "wait" | "monotonic";
  maxBorrowMs?: number;
  maxWaitMs?: number;
  /** A ManualClock for deterministic tests; Date.now() when absent. */
  clock?: ManualClock;
}

/** What a UuidGenerator has done since it was built (`reseeds`: forked children, never here). */
export interface UuidStats {
  idsIssued: number;
  tickWaits: number;
  leadMs: number;
  clockRollbacks: number;
  maxRollbackMs: number;
  reseeds: number;
}

/** A TypeID's prefix and its UUID (text). */
export interface TypeId {
  prefix: string;
  uuid: string;
}
"#;

/// Makes UUIDv7s, ULIDs and TypeIDs (the same 128 bits), each greater than every
/// one it made before.
#[wasm_bindgen]
#[derive(Debug)]
pub struct UuidGenerator {
    inner: flakeid_core::UuidGenerator,
}

#[wasm_bindgen]
impl UuidGenerator {
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "UuidGeneratorOptions")] options: Option<JsValue>,
    ) -> Result<UuidGenerator, JsValue> {
        let options = options.unwrap_or_default();
        let mut members = Vec::new();
        if flakeid_js::js_options(&convert::arg(&options)).map_err(js_error)? {
            for key in Object::keys(options.unchecked_ref::<Object>()).iter() {
                let key = key.as_string().unwrap_or_default();
                let v = convert::member(&options, &key)?;
                members.push((key, convert::arg(&v), v));
            }
        }
        let given = members.iter().map(|m| (m.0.as_str(), &m.1));
        let (mut b, clock) = flakeid_js::js_uuid_generator_options(given).map_err(js_error)?;
        b = b.clock(HostClock);
        if let Some(i) = clock {
            let Some(Shared::Clock(clock)) = convert::shared(&members[i].2) else {
                return Err(convert::config(
                    "clock",
                    "clock must be a ManualClock, got another object".into(),
                ));
            };
            b = b.clock(clock);
        }
        b.build().map(|inner| UuidGenerator { inner }).map_err(js_error)
    }

    /// The next UUIDv7, lowercase `8-4-4-4-12` text; with `{ msecs }` (the npm `uuid`
    /// package's `v7` option) one at that Unix ms, as `uuid7At` (any other option is
    /// refused, naming it); given `buf`, its 16 bytes written at `offset` and `buf`
    /// returned, as npm `uuid`'s `v7(options, buf, offset)` (typed in `TS_UUID7`).
    #[wasm_bindgen(skip_typescript)]
    pub fn uuid7(
        &self,
        options: Option<JsValue>,
        buf: Option<JsValue>,
        offset: Option<JsValue>,
    ) -> Result<JsValue, JsValue> {
        uuid7_call(&self.inner, options, buf, offset)
    }
    /// `n` fresh UUIDv7s (text), increasing and in call order with this generator's
    /// other IDs: `n` a whole number in `0..=2**20` (the core's limit for a batch of
    /// UUID text, `FLAKEID_CONFIG` naming `n` beyond it).
    pub fn uuid7s(&self, #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue) -> Result<Vec<String>, JsValue> {
        let n = flakeid_js::js_uuid7_batch(&convert::arg(&n)).map_err(js_error)?;
        let values = self.inner.next_uuid7s(n).map_err(js_error)?;
        Ok(values.into_iter().map(|u| Wide(u).to_uuid()).collect())
    }
    /// A UUIDv7 at Unix ms `ms` (a whole number) with 74 random bits: outside the
    /// generator's sequence (not ordered after its earlier UUIDs, nor among others
    /// of that millisecond).
    #[wasm_bindgen(js_name = uuid7At)]
    pub fn uuid7_at(&self, #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue) -> Result<String, JsValue> {
        let ms = flakeid_js::js_unix_ms("unix_ms", &convert::arg(&ms)).map_err(js_error)?;
        self.inner.uuid7_at(ms).map(|u| Wide(u).to_uuid()).map_err(js_error)
    }
    /// A UUIDv7 of the generator's clock now shifted by `ms` (negative: the past), as
    /// PostgreSQL 18's `uuidv7(shift)`; outside the sequence, as `uuid7At`.
    #[wasm_bindgen(js_name = uuid7Shifted)]
    pub fn uuid7_shifted(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue,
    ) -> Result<String, JsValue> {
        let ms = flakeid_js::js_shift_ms(&convert::arg(&ms)).map_err(js_error)?;
        self.inner
            .uuid7_shifted(ms)
            .map(|u| Wide(u).to_uuid())
            .map_err(js_error)
    }
    /// The next UUIDv7 as 16 big-endian bytes.
    #[wasm_bindgen(js_name = uuid7Bytes)]
    pub fn uuid7_bytes(&self) -> Result<Uint8Array, JsValue> {
        Ok(Uint8Array::from(&self.inner.next_uuid7_bytes().map_err(js_error)?[..]))
    }
    /// The next UUIDv7 as a `bigint` (its 128 bits).
    #[wasm_bindgen(js_name = uuid7BigInt)]
    pub fn uuid7_bigint(&self) -> Result<u128, JsValue> {
        self.inner.next_uuid7().map_err(js_error)
    }
    /// The next ID as a ULID (upper-case Crockford base32, 26 characters).
    pub fn ulid(&self) -> Result<String, JsValue> {
        self.inner.next_ulid().map_err(js_error)
    }
    /// The next ID as a TypeID with `prefix` (checked first: a bad one costs no ID).
    pub fn typeid(&self, #[wasm_bindgen(unchecked_param_type = "string")] prefix: JsValue) -> Result<String, JsValue> {
        let prefix = convert::string(&prefix, "prefix")?;
        self.inner.next_typeid(&prefix).map_err(js_error)
    }
    /// The engine's counters.
    #[wasm_bindgen(unchecked_return_type = "UuidStats")]
    pub fn stats(&self) -> Object {
        let s = self.inner.stats();
        let o = Object::new();
        let n = |v: u64| JsValue::from_f64(v as f64);
        convert::set(&o, "idsIssued", &n(s.ids_issued));
        convert::set(&o, "tickWaits", &n(s.tick_waits));
        convert::set(&o, "leadMs", &n(s.lead_ms));
        convert::set(&o, "clockRollbacks", &n(s.clock_rollbacks));
        convert::set(&o, "maxRollbackMs", &n(s.max_rollback_ms));
        convert::set(&o, "reseeds", &n(s.reseeds));
        o
    }
    /// Stops issuing (idempotent); later calls throw `FLAKEID_CONFIG` (field `generator`).
    pub fn close(&self) {
        self.inner.close();
    }
}

thread_local! {
    /// The module's shared generator, made on first use (default options).
    static SHARED: OnceCell<flakeid_core::UuidGenerator> = const { OnceCell::new() };
}

fn with_shared<T>(f: impl FnOnce(&flakeid_core::UuidGenerator) -> flakeid_core::Result<T>) -> Result<T, JsValue> {
    with_shared_js(|g| f(g).map_err(js_error))
}

fn with_shared_js<T>(f: impl FnOnce(&flakeid_core::UuidGenerator) -> Result<T, JsValue>) -> Result<T, JsValue> {
    SHARED.with(|cell| {
        if cell.get().is_none() {
            let g = flakeid_core::UuidGenerator::builder()
                .clock(HostClock)
                .build()
                .map_err(js_error)?;
            let _ = cell.set(g);
        }
        f(cell.get().expect("set above"))
    })
}

/// The next UUIDv7 of the module's shared generator (lowercase text); with
/// `{ msecs }`, one at that time; with `buf`, its bytes there (`UuidGenerator.uuid7`).
#[wasm_bindgen(js_name = uuid7, skip_typescript)]
pub fn shared_uuid7(
    options: Option<JsValue>,
    buf: Option<JsValue>,
    offset: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    with_shared_js(|g| uuid7_call(g, options, buf, offset))
}

#[wasm_bindgen(typescript_custom_section)]
const TS_UUID7: &str = r#"
/** The next UUIDv7 (text); `{ msecs }`: one at that Unix ms. Given `buf`, as npm uuid's
 * `v7(options, buf, offset)`: its 16 bytes written at `offset` (default 0), `buf` returned. */
export function uuid7(options?: { msecs?: number } | null): string;
export function uuid7<T extends Uint8Array>(options: { msecs?: number } | null | undefined, buf: T, offset?: number): T;
export interface UuidGenerator {
  /** The next UUIDv7 (text); `{ msecs }`: one at that Unix ms. Given `buf`, as npm uuid's
   * `v7(options, buf, offset)`: its 16 bytes written at `offset` (default 0), `buf` returned. */
  uuid7(options?: { msecs?: number } | null): string;
  uuid7<T extends Uint8Array>(options: { msecs?: number } | null | undefined, buf: T, offset?: number): T;
}
"#;

/// `uuid7(options?, buf?, offset?)` of `g`: the options, `buf` and `offset` checked
/// (flakeid-js's rules) before an ID is taken.
fn uuid7_call(
    g: &flakeid_core::UuidGenerator,
    options: Option<JsValue>,
    buf: Option<JsValue>,
    offset: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let msecs = uuid7_options(options)?;
    let target = match buf.filter(|b| !b.is_undefined() && !b.is_null()) {
        Some(b) => {
            let Some(array) = b.dyn_ref::<Uint8Array>() else {
                return Err(js_error(flakeid_js::js_not_a_buffer(convert::arg(&b).type_name())));
            };
            let offset = convert::arg(&offset.unwrap_or_default());
            let at = flakeid_js::js_buffer_offset(array.length() as usize, &offset).map_err(js_error)?;
            Some((array.clone(), at as u32))
        }
        None => None,
    };
    let uuid = match msecs {
        Some(ms) => g.uuid7_at(ms),
        None => g.next_uuid7(),
    }
    .map_err(js_error)?;
    Ok(match target {
        Some((array, at)) => {
            array.subarray(at, at + 16).copy_from(&uuid.to_be_bytes());
            array.into()
        }
        None => Wide(uuid).to_uuid().into(),
    })
}

/// `uuid7(options?)`'s explicit time, if any (flakeid-js's rule).
fn uuid7_options(options: Option<JsValue>) -> Result<Option<u64>, JsValue> {
    let options = options.unwrap_or_default();
    if !flakeid_js::js_options(&convert::arg(&options)).map_err(js_error)? {
        return Ok(None);
    }
    let mut members = Vec::new();
    for key in Object::keys(options.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        let v = convert::member(&options, &key)?;
        members.push((key, convert::arg(&v)));
    }
    flakeid_js::js_uuid7_options(members.iter().map(|(k, v)| (k.as_str(), v))).map_err(js_error)
}

/// The next ULID of the module's shared generator.
#[wasm_bindgen(js_name = ulid)]
pub fn shared_ulid() -> Result<String, JsValue> {
    with_shared(|g| g.next_ulid())
}

/// The next TypeID with `prefix` from the module's shared generator.
#[wasm_bindgen(js_name = typeid)]
pub fn shared_typeid(#[wasm_bindgen(unchecked_param_type = "string")] prefix: JsValue) -> Result<String, JsValue> {
    let prefix = convert::string(&prefix, "prefix")?;
    with_shared(|g| g.next_typeid(&prefix))
}

/// A 128-bit argument: text, a `Uint8Array` or a `bigint`; flakeid-js's rule.
fn wide(value: &JsValue, field: &'static str, any_form: bool) -> Result<Wide, JsValue> {
    let r = match convert::arg(value) {
        JsArg::String(s) => flakeid_js::js_wide(field, &JsWide::Text(&s), any_form),
        JsArg::BigInt { negative, .. } => {
            let magnitude = u128::try_from(value.clone()).ok();
            flakeid_js::js_wide(field, &JsWide::BigInt { negative, magnitude }, any_form)
        }
        other => match value.dyn_ref::<Uint8Array>() {
            Some(a) => flakeid_js::js_wide(field, &JsWide::Bytes(&a.to_vec()), any_form),
            None => flakeid_js::js_wide(field, &JsWide::Other(other.type_name()), any_form),
        },
    };
    r.map_err(js_error)
}

fn bytes(v: Wide) -> Uint8Array {
    Uint8Array::from(&v.to_bytes()[..])
}

/// The UUIDv7 of Unix millisecond `ms` with `randA` (12 bits) and `randB` (62 bits:
/// a `bigint` or its decimal text), as text.
#[wasm_bindgen(js_name = composeUuid7)]
pub fn compose_uuid7(
    #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue,
    #[wasm_bindgen(js_name = randA, unchecked_param_type = "number")] rand_a: JsValue,
    #[wasm_bindgen(js_name = randB, unchecked_param_type = "bigint | string")] rand_b: JsValue,
) -> Result<String, JsValue> {
    let ms = convert::uint(&ms, "ms")?;
    let a = flakeid_js::js_rand_a(&convert::arg(&rand_a)).map_err(js_error)?;
    let b = convert::id(&rand_b, "rand_b")?;
    Ok(Wide::compose_uuid7(ms, a, b).map_err(js_error)?.to_uuid())
}

/// The 16 bytes of UUID text (`8-4-4-4-12` or 32 hex digits, any case).
#[wasm_bindgen(js_name = parseUuid)]
pub fn parse_uuid(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> Result<Uint8Array, JsValue> {
    let t = convert::string(&text, "text")?;
    Ok(bytes(Wide::parse_uuid(&t).map_err(js_error)?))
}

/// The 16 bytes of ULID text (case-insensitive; the core's aliases).
#[wasm_bindgen(js_name = parseUlid)]
pub fn parse_ulid(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> Result<Uint8Array, JsValue> {
    let t = convert::string(&text, "text")?;
    Ok(bytes(Wide::parse_ulid(&t).map_err(js_error)?))
}

/// `{ prefix, uuid }` of a TypeID (v0.3; the suffix is lowercase only).
#[wasm_bindgen(js_name = parseTypeId, unchecked_return_type = "TypeId")]
pub fn parse_typeid(#[wasm_bindgen(unchecked_param_type = "string")] text: JsValue) -> Result<Object, JsValue> {
    let t = convert::string(&text, "text")?;
    let (prefix, u) = Wide::parse_typeid(&t).map_err(js_error)?;
    let o = Object::new();
    convert::set(&o, "prefix", &prefix.into());
    convert::set(&o, "uuid", &u.to_uuid().into());
    Ok(o)
}

/// A UUID (text, 16 bytes or a `bigint`) as lowercase `8-4-4-4-12` text.
#[wasm_bindgen(js_name = formatUuid)]
pub fn format_uuid(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | bigint")] value: JsValue,
) -> Result<String, JsValue> {
    Ok(wide(&value, "value", false)?.to_uuid())
}

/// A UUID's 128 bits (text, 16 bytes or a `bigint`) as a ULID: a byte copy.
#[wasm_bindgen(js_name = formatUlid)]
pub fn format_ulid(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | bigint")] value: JsValue,
) -> Result<String, JsValue> {
    Ok(wide(&value, "value", false)?.to_ulid())
}

/// The TypeID of `prefix` and a UUID (text, 16 bytes or a `bigint`).
#[wasm_bindgen(js_name = formatTypeId)]
pub fn format_typeid(
    #[wasm_bindgen(unchecked_param_type = "string")] prefix: JsValue,
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | bigint")] value: JsValue,
) -> Result<String, JsValue> {
    let prefix = convert::string(&prefix, "prefix")?;
    wide(&value, "value", false)?.to_typeid(&prefix).map_err(js_error)
}

/// The ULID of UUID text: a byte copy, no bit changed.
#[wasm_bindgen(js_name = uuidToUlid)]
pub fn uuid_to_ulid(#[wasm_bindgen(unchecked_param_type = "string")] uuid: JsValue) -> Result<String, JsValue> {
    Wide::parse_uuid(&convert::string(&uuid, "uuid")?)
        .map(Wide::to_ulid)
        .map_err(js_error)
}

/// The UUID (text) of a ULID: a byte copy, no bit changed.
#[wasm_bindgen(js_name = ulidToUuid)]
pub fn ulid_to_uuid(#[wasm_bindgen(unchecked_param_type = "string")] ulid: JsValue) -> Result<String, JsValue> {
    Wide::parse_ulid(&convert::string(&ulid, "ulid")?)
        .map(Wide::to_uuid)
        .map_err(js_error)
}

/// The Unix millisecond of a UUIDv7 (text, 16 bytes or a `bigint`), a ULID or a
/// TypeID (text); a UUID of another version is `FLAKEID_PARSE`.
#[wasm_bindgen(js_name = uuid7TimestampMs)]
pub fn uuid7_timestamp_ms(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | bigint")] value: JsValue,
) -> Result<f64, JsValue> {
    let t = match value.as_string() {
        Some(s) => flakeid_js::js_wide_timestamp_ms(&JsWide::Text(&s)),
        None => wide(&value, "value", true)?.uuid7_timestamp_ms(),
    };
    Ok(t.map_err(js_error)? as f64)
}

/// The version field of any UUID (7 for ours).
#[wasm_bindgen(js_name = uuidVersion)]
pub fn uuid_version(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array | bigint")] value: JsValue,
) -> Result<u32, JsValue> {
    Ok(u32::from(wide(&value, "value", false)?.version()))
}

/// `[first, last]` (text): every UUIDv7 or ULID of a millisecond from `startMs` to
/// `endMs` (inclusive) lies between them — for `WHERE id BETWEEN first AND last`.
#[wasm_bindgen(js_name = uuid7Range, unchecked_return_type = "[string, string]")]
pub fn uuid7_range(
    #[wasm_bindgen(js_name = startMs, unchecked_param_type = "number")] start_ms: JsValue,
    #[wasm_bindgen(js_name = endMs, unchecked_param_type = "number")] end_ms: JsValue,
) -> Result<js_sys::Array, JsValue> {
    let s = convert::uint(&start_ms, "start_ms")?;
    let e = convert::uint(&end_ms, "end_ms")?;
    let (first, last) = Wide::uuid7_range(s, e).map_err(js_error)?;
    Ok(js_sys::Array::of2(&first.to_uuid().into(), &last.to_uuid().into()))
}
