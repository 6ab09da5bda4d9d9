//! `UuidGenerator` and the 128-bit family's functions: the core's `UuidGenerator`,
//! parsers and converters, converted. A UUID goes out as its lowercase text (the
//! JSON- and database-ready form), as 16 bytes or as a `bigint` where asked; it
//! comes in as UUID text (or ULID/TypeID text where any form is taken), 16 bytes or
//! a `bigint` (flakeid-js's `js_wide`).

use crate::generator::ManualClock;
use crate::{Arg, OrThrow, fc, js};
use napi::Env;
use napi::bindgen_prelude::{
    BigInt, ClassInstance, FromNapiValue, JsObjectValue, JsValue, Object, This, Uint8Array, Unknown,
};
use napi_derive::napi;
use std::sync::Arc;

/// Options of `new UuidGenerator(...)`: the 64-bit generator's clock options.
#[napi(object, object_to_js = false)]
// The shape for index.d.ts (it holds JS handles: no Debug). The constructor reads
// the object member by member through the core's set_text.
#[allow(missing_debug_implementations, dead_code)]
pub struct UuidGeneratorOptions<'a> {
    /// `'borrow'` (default: run ahead of the clock when a millisecond's 65,536 are
    /// used) or `'wait'`.
    #[napi(ts_type = "'wait' | 'borrow'")]
    pub overflow: Option<String>,
    /// `'error'` (default), `'wait'` or `'monotonic'`.
    #[napi(ts_type = "'error' | 'wait' | 'monotonic'")]
    pub clock_backwards: Option<String>,
    pub max_borrow_ms: Option<f64>,
    pub max_wait_ms: Option<f64>,
    /// A `ManualClock` for deterministic tests; the system clock when absent.
    pub clock: Option<ClassInstance<'a, ManualClock>>,
}

/// What a `UuidGenerator` has done since it was built (`reseeds`: forked children
/// that went on with new random bits).
#[napi(object)]
#[derive(Debug)]
pub struct UuidStats {
    pub ids_issued: f64,
    pub tick_waits: f64,
    pub lead_ms: f64,
    pub clock_rollbacks: f64,
    pub max_rollback_ms: f64,
    pub reseeds: f64,
}

/// Makes UUIDv7s, ULIDs and TypeIDs (the same 128 bits): each greater than every
/// one it made before. A UUID needs no node id: every process (a `cluster` worker)
/// may have its own.
#[napi]
#[derive(Debug)]
pub struct UuidGenerator {
    inner: Arc<fc::UuidGenerator>,
}

#[napi]
impl UuidGenerator {
    #[napi(constructor, ts_args_type = "options?: UuidGeneratorOptions")]
    pub fn new(env: &Env, this: This<Object>, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        let mut members = Vec::new();
        if let Some(obj) = crate::options_object(env, options)? {
            for key in crate::keys(&obj)? {
                let v = obj.get_named_property::<Unknown>(&key)?;
                members.push((key, crate::arg(&v)?, v));
            }
        }
        let given = members.iter().map(|m| (m.0.as_str(), &m.1));
        let (mut b, clock) = js::js_uuid_generator_options(given).or_throw(env)?;
        if let Some(i) = clock {
            // SAFETY: a live value of this call's env.
            let c = unsafe { ClassInstance::<ManualClock>::from_napi_value(env.raw(), members[i].2.raw()) };
            let c = c.map_err(|_| fc::Error::config("clock", "clock must be a ManualClock, got an object"));
            b = b.clock(c.or_throw(env)?.core().clone());
        }
        let inner = Arc::new(b.build().or_throw(env)?);
        crate::fast::bind_uuid(env, this.raw(), &inner)?;
        Ok(UuidGenerator { inner })
    }

    /// The next UUIDv7, lowercase `8-4-4-4-12` text; with `{ msecs }` (the npm `uuid`
    /// package's `v7` option) one at that Unix ms, as `uuid7At` (any other option is
    /// refused, naming it: `seq` points to `composeUuid7`). Given `buf` (a
    /// `Uint8Array` or `Buffer`), as npm `uuid`'s `v7(options, buf, offset)`: the 16
    /// bytes written at `offset` (default 0; `0..=buf.length - 16`, else
    /// `FLAKEID_CONFIG` naming `offset` and that range, before an ID is taken) and
    /// `buf` returned. The instance's own `uuid7` (fast.rs) is this, bound.
    #[napi(
        ts_generic_types = "T extends Uint8Array | undefined = undefined",
        ts_args_type = "options?: { msecs?: number } | null, buf?: T, offset?: number",
        ts_return_type = "T extends Uint8Array ? T : string"
    )]
    pub fn uuid7(
        &self,
        env: &Env,
        options: Option<Unknown<'_>>,
        buf: Option<Unknown<'_>>,
        offset: Option<Unknown<'_>>,
    ) -> napi::Result<napi::sys::napi_value> {
        crate::fast::uuid7_call(env, &self.inner, options, buf, offset)
    }
    /// `n` fresh UUIDv7s (text), increasing and in call order with this generator's
    /// other IDs: one reservation per 1024; `n` a whole number in `0..=2**20` (the
    /// core's limit for a batch of UUID text: `FLAKEID_CONFIG` naming `n` beyond it,
    /// before anything is allocated; memory that runs out is a `RangeError`). The
    /// instance's own `uuid7s` (fast.rs) is this, bound.
    #[napi(js_name = "uuid7s")]
    pub fn uuid7s(&self, env: &Env, #[napi(ts_arg_type = "number")] n: Arg) -> napi::Result<Vec<String>> {
        let text = crate::fast::uuid7s_text(env, &self.inner, &n.0)?;
        Ok(text
            .chunks(fc::Wide::UUID_TEXT_LEN)
            .map(|t| t.iter().map(|&b| b as char).collect())
            .collect())
    }
    /// A UUIDv7 at Unix ms `ms` (a whole number) with 74 random bits: outside the
    /// generator's sequence (not ordered after its earlier UUIDs, nor among others
    /// of that millisecond).
    #[napi(js_name = "uuid7At")]
    pub fn uuid7_at(&self, env: &Env, #[napi(ts_arg_type = "number")] ms: Arg) -> napi::Result<String> {
        let ms = js::js_unix_ms("unix_ms", &ms.0).or_throw(env)?;
        Ok(fc::Wide(self.inner.uuid7_at(ms).or_throw(env)?).to_uuid())
    }
    /// A UUIDv7 of the generator's clock now shifted by `ms` (negative: the past), as
    /// PostgreSQL 18's `uuidv7(shift)`; outside the sequence, as `uuid7At`.
    #[napi(js_name = "uuid7Shifted")]
    pub fn uuid7_shifted(&self, env: &Env, #[napi(ts_arg_type = "number")] ms: Arg) -> napi::Result<String> {
        let ms = js::js_shift_ms(&ms.0).or_throw(env)?;
        Ok(fc::Wide(self.inner.uuid7_shifted(ms).or_throw(env)?).to_uuid())
    }
    /// The next UUIDv7 as 16 big-endian bytes.
    #[napi(ts_return_type = "Uint8Array")]
    pub fn uuid7_bytes(&self, env: &Env) -> napi::Result<napi::sys::napi_value> {
        crate::fast::bytes16(env.raw(), self.inner.next_uuid7_bytes().or_throw(env)?)
    }
    /// The next UUIDv7 as a `bigint` (its 128 bits).
    #[napi(js_name = "uuid7BigInt")]
    pub fn uuid7_bigint(&self, env: &Env) -> napi::Result<BigInt> {
        Ok(big(self.inner.next_uuid7().or_throw(env)?))
    }
    /// The next ID as a ULID (upper-case Crockford base32, 26 characters).
    #[napi]
    pub fn ulid(&self, env: &Env) -> napi::Result<String> {
        self.inner.next_ulid().or_throw(env)
    }
    /// The next ID as a TypeID with `prefix` (checked first: a bad one costs no ID).
    #[napi]
    pub fn typeid(&self, env: &Env, #[napi(ts_arg_type = "string")] prefix: Arg) -> napi::Result<String> {
        let prefix = text(env, "prefix", prefix)?;
        self.inner.next_typeid(&prefix).or_throw(env)
    }
    /// The engine's counters.
    #[napi]
    pub fn stats(&self) -> UuidStats {
        let s = self.inner.stats();
        crate::stats_object!(s => UuidStats { ids_issued, tick_waits, lead_ms, clock_rollbacks, max_rollback_ms, reseeds })
    }
    /// Stops issuing (idempotent); later calls throw `FLAKEID_CONFIG` (field `generator`).
    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }
}

/// The next UUIDv7 of the process's shared generator (lowercase text); with
/// `{ msecs }`, one at that time; with `buf`, its 16 bytes written there
/// (`UuidGenerator.uuid7`).
#[napi(
    js_name = "uuid7",
    ts_generic_types = "T extends Uint8Array | undefined = undefined",
    ts_args_type = "options?: { msecs?: number } | null, buf?: T, offset?: number",
    ts_return_type = "T extends Uint8Array ? T : string"
)]
pub fn shared_uuid7(
    env: &Env,
    options: Option<Unknown<'_>>,
    buf: Option<Unknown<'_>>,
    offset: Option<Unknown<'_>>,
) -> napi::Result<napi::sys::napi_value> {
    crate::fast::uuid7_call(env, crate::fast::shared(env)?, options, buf, offset)
}

/// The module's `uuid7` as a raw Node-API function (`crate::fast`), in place of
/// the export above once every `#[napi]` export is defined.
#[napi(module_exports)]
pub fn fast_module_exports(exports: Object, env: Env) -> napi::Result<()> {
    crate::fast::export_shared_uuid7(&env, exports.raw())
}

/// The next ULID of the process's shared generator.
#[napi(js_name = "ulid")]
pub fn shared_ulid(env: &Env) -> napi::Result<String> {
    crate::fast::shared(env)?.next_ulid().or_throw(env)
}

/// The next TypeID with `prefix` from the process's shared generator.
#[napi(js_name = "typeid")]
pub fn shared_typeid(env: &Env, #[napi(ts_arg_type = "string")] prefix: Arg) -> napi::Result<String> {
    let prefix = text(env, "prefix", prefix)?;
    crate::fast::shared(env)?.next_typeid(&prefix).or_throw(env)
}

/// A `bigint` of 128 bits.
fn big(v: u128) -> BigInt {
    BigInt {
        sign_bit: false,
        words: vec![v as u64, (v >> 64) as u64],
    }
}

/// A 128-bit argument: text, a `Uint8Array` (or `Buffer`) or a `bigint`; read, then
/// flakeid-js's rule (`js_wide`).
fn wide(env: &Env, field: &'static str, value: &Unknown<'_>, any_form: bool) -> napi::Result<fc::Wide> {
    let (e, v) = (env.raw(), value.raw());
    let r = match crate::arg(value)? {
        js::JsArg::String(s) => js::js_wide(field, &js::JsWide::Text(&s), any_form),
        js::JsArg::BigInt { .. } => {
            // SAFETY: a live bigint of this call.
            let b = unsafe { BigInt::from_napi_value(e, v)? };
            let magnitude = b.words.iter().skip(2).all(|&w| w == 0).then(|| {
                let lo = u128::from(b.words.first().copied().unwrap_or(0));
                lo | u128::from(b.words.get(1).copied().unwrap_or(0)) << 64
            });
            let negative = b.sign_bit;
            js::js_wide(field, &js::JsWide::BigInt { negative, magnitude }, any_form)
        }
        other => {
            let mut typed = false;
            // SAFETY: a live env and value of this call.
            napi::check_status!(unsafe { napi::sys::napi_is_typedarray(e, v, &mut typed) })?;
            // SAFETY: a live typed array of this call (another element type fails to read).
            match typed.then(|| unsafe { Uint8Array::from_napi_value(e, v) }) {
                Some(Ok(bytes)) => js::js_wide(field, &js::JsWide::Bytes(&bytes), any_form),
                _ => js::js_wide(field, &js::JsWide::Other(other.type_name()), any_form),
            }
        }
    };
    r.or_throw(env)
}

/// A text argument (`field` names it when it is not a string).
fn text(env: &Env, field: &'static str, value: Arg) -> napi::Result<String> {
    js::js_string(field, value.0).or_throw(env)
}

/// The UUIDv7 of Unix millisecond `ms` with `randA` (12 bits) and `randB` (62 bits:
/// a `bigint` or its decimal text), as text.
#[napi(ts_args_type = "ms: number, randA: number, randB: bigint | string")]
pub fn compose_uuid7(env: &Env, ms: Arg, rand_a: Arg, rand_b: Arg) -> napi::Result<String> {
    let ms = js::js_uint("ms", &ms.0, js::JS_MAX_SAFE).or_throw(env)?;
    let a = js::js_rand_a(&rand_a.0).or_throw(env)?;
    let b = js::js_id("rand_b", &rand_b.0, js::JsNumberIds::Refused).or_throw(env)?;
    Ok(fc::Wide::compose_uuid7(ms, a, b).or_throw(env)?.to_uuid())
}

/// The 16 bytes of UUID text (`8-4-4-4-12` or 32 hex digits, any case); a bad
/// character is `FLAKEID_PARSE` with its `position`.
#[napi(ts_args_type = "text: string", ts_return_type = "Uint8Array")]
pub fn parse_uuid(env: &Env, text: Arg) -> napi::Result<napi::sys::napi_value> {
    let t = self::text(env, "text", text)?;
    crate::fast::bytes16(env.raw(), fc::Wide::parse_uuid(&t).or_throw(env)?.to_bytes())
}

/// The 16 bytes of ULID text (case-insensitive; the core's aliases).
#[napi(ts_args_type = "text: string", ts_return_type = "Uint8Array")]
pub fn parse_ulid(env: &Env, text: Arg) -> napi::Result<napi::sys::napi_value> {
    let t = self::text(env, "text", text)?;
    crate::fast::bytes16(env.raw(), fc::Wide::parse_ulid(&t).or_throw(env)?.to_bytes())
}

/// A TypeID's prefix and its UUID (text).
#[napi(object)]
#[derive(Debug)]
pub struct TypeId {
    pub prefix: String,
    pub uuid: String,
}

/// `{ prefix, uuid }` of a TypeID (v0.3; the suffix is lowercase only).
#[napi(js_name = "parseTypeId", ts_args_type = "text: string")]
pub fn parse_typeid(env: &Env, text: Arg) -> napi::Result<TypeId> {
    let t = self::text(env, "text", text)?;
    let (prefix, u) = fc::Wide::parse_typeid(&t).or_throw(env)?;
    Ok(TypeId {
        prefix,
        uuid: u.to_uuid(),
    })
}

/// A UUID (text, 16 bytes or a `bigint`) as lowercase `8-4-4-4-12` text.
#[napi(ts_args_type = "value: string | Uint8Array | bigint")]
pub fn format_uuid(env: &Env, value: Unknown<'_>) -> napi::Result<String> {
    Ok(wide(env, "value", &value, false)?.to_uuid())
}

/// A UUID's 128 bits (text, 16 bytes or a `bigint`) as a ULID: a byte copy.
#[napi(ts_args_type = "value: string | Uint8Array | bigint")]
pub fn format_ulid(env: &Env, value: Unknown<'_>) -> napi::Result<String> {
    Ok(wide(env, "value", &value, false)?.to_ulid())
}

/// The TypeID of `prefix` and a UUID (text, 16 bytes or a `bigint`).
#[napi(
    js_name = "formatTypeId",
    ts_args_type = "prefix: string, value: string | Uint8Array | bigint"
)]
pub fn format_typeid(env: &Env, prefix: Arg, value: Unknown<'_>) -> napi::Result<String> {
    let prefix = text(env, "prefix", prefix)?;
    wide(env, "value", &value, false)?.to_typeid(&prefix).or_throw(env)
}

/// The ULID of UUID text: a byte copy, no bit changed.
#[napi(ts_args_type = "uuid: string")]
pub fn uuid_to_ulid(env: &Env, uuid: Arg) -> napi::Result<String> {
    let t = text(env, "uuid", uuid)?;
    fc::Wide::parse_uuid(&t).map(fc::Wide::to_ulid).or_throw(env)
}

/// The UUID (text) of a ULID: a byte copy, no bit changed.
#[napi(ts_args_type = "ulid: string")]
pub fn ulid_to_uuid(env: &Env, ulid: Arg) -> napi::Result<String> {
    let t = text(env, "ulid", ulid)?;
    fc::Wide::parse_ulid(&t).map(fc::Wide::to_uuid).or_throw(env)
}

/// The Unix millisecond of a UUIDv7 (text, 16 bytes or a `bigint`), a ULID or a
/// TypeID (text); a UUID of another version is `FLAKEID_PARSE`.
#[napi(ts_args_type = "value: string | Uint8Array | bigint")]
pub fn uuid7_timestamp_ms(env: &Env, value: Unknown<'_>) -> napi::Result<f64> {
    let t = match crate::arg(&value)? {
        js::JsArg::String(s) => js::js_wide_timestamp_ms(&js::JsWide::Text(&s)),
        _ => wide(env, "value", &value, true)?.uuid7_timestamp_ms(),
    };
    Ok(t.or_throw(env)? as f64)
}

/// The version field of any UUID (7 for ours).
#[napi(ts_args_type = "value: string | Uint8Array | bigint")]
pub fn uuid_version(env: &Env, value: Unknown<'_>) -> napi::Result<u32> {
    Ok(u32::from(wide(env, "value", &value, false)?.version()))
}

/// `[first, last]` (text): every UUIDv7 or ULID of a millisecond from `startMs` to
/// `endMs` (inclusive) lies between them — for `WHERE id BETWEEN first AND last`.
#[napi(ts_args_type = "startMs: number, endMs: number", ts_return_type = "[string, string]")]
pub fn uuid7_range(env: &Env, start_ms: Arg, end_ms: Arg) -> napi::Result<Vec<String>> {
    let s = js::js_uint("start_ms", &start_ms.0, js::JS_MAX_SAFE).or_throw(env)?;
    let e = js::js_uint("end_ms", &end_ms.0, js::JS_MAX_SAFE).or_throw(env)?;
    let (first, last) = fc::Wide::uuid7_range(s, e).or_throw(env)?;
    Ok(vec![first.to_uuid(), last.to_uuid()])
}
