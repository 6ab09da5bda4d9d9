//! `Generator` and `ManualClock`.

use crate::layout::Layout;
use crate::{OrThrow, fc, layout_in, uint};
use napi::Env;
use napi::bindgen_prelude::{
    Buffer, ClassInstance, Either, FromNapiValue, JsObjectValue, JsValue, Object, This, Unknown, ValueType,
};
use napi_derive::napi;
use std::sync::Arc;

/// A clock that moves only when told to, for deterministic tests: pass it as the
/// generator's `clock` option. With `autoAdvanceMs`, every turn of the generator's
/// wait loop advances it by that much, so waits finish at once.
#[napi]
#[derive(Debug, Clone)]
pub struct ManualClock {
    inner: fc::ManualClock,
}

#[napi]
impl ManualClock {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        #[napi(ts_arg_type = "number")] start_ms: crate::Num,
        #[napi(ts_arg_type = "number | undefined | null")] auto_advance_ms: Option<crate::Num>,
    ) -> napi::Result<Self> {
        let start = uint("start_ms", start_ms).or_throw(env)?;
        let step = uint("auto_advance_ms", auto_advance_ms.unwrap_or(crate::Num::Number(0.0))).or_throw(env)?;
        Ok(ManualClock {
            inner: fc::ManualClock::new(start).with_auto_advance(step),
        })
    }
    #[napi]
    pub fn set(&self, env: &Env, #[napi(ts_arg_type = "number")] ms: crate::Num) -> napi::Result<()> {
        self.inner.set(uint("ms", ms).or_throw(env)?);
        Ok(())
    }
    #[napi]
    pub fn advance(&self, env: &Env, #[napi(ts_arg_type = "number")] ms: crate::Num) -> napi::Result<()> {
        self.inner.advance(uint("ms", ms).or_throw(env)?);
        Ok(())
    }
    #[napi]
    pub fn now_ms(&self) -> f64 {
        self.inner.get() as f64
    }
    #[napi(getter)]
    pub fn auto_advance_ms(&self) -> f64 {
        self.inner.auto_advance_ms() as f64
    }
}

/// Options of `new Generator(...)`. Give `node`, or `datacenter` + `worker`
/// (each 0 when absent); `node` may also be a source: `'env:VAR'`, `'hostname'`,
/// `'mac'` or `'ipv4'`.
#[napi(object, object_to_js = false)]
#[allow(missing_debug_implementations)] // holds JS handles
pub struct GeneratorOptions<'a> {
    pub datacenter: Option<f64>,
    pub worker: Option<f64>,
    pub node: Option<Either<f64, String>>,
    /// A `Layout` or a preset name (default `'snowflake'`).
    #[napi(ts_type = "Layout | string")]
    pub layout: Option<Either<String, ClassInstance<'a, Layout>>>,
    /// `'wait'` (default: spin to the next tick) or `'borrow'` (run ahead of the clock).
    #[napi(ts_type = "'wait' | 'borrow'")]
    pub overflow: Option<String>,
    /// `'error'` (default), `'wait'` or `'monotonic'`.
    #[napi(ts_type = "'error' | 'wait' | 'monotonic'")]
    pub clock_backwards: Option<String>,
    pub max_borrow_ms: Option<f64>,
    pub max_wait_ms: Option<f64>,
    /// Lease the node id from a store instead: `file:///dir`, `redis[s]://host:port/db`,
    /// `postgres://user:password@host:port/db` or `etcd[s]://host:2379/` (each with
    /// `?namespace=NAME`; TLS settings in docs/leases.md). The
    /// constructor blocks until the lease is acquired (at most 10 s).
    pub lease: Option<String>,
    /// The lease's time-to-live (default 10 000 ms).
    pub lease_ttl_ms: Option<f64>,
    /// Issue at most `maxSequence + 1` IDs per tick; `2^k - 1` (flake-idgen's `seqMask`).
    pub max_sequence: Option<f64>,
    /// A `ManualClock` for deterministic tests; the system clock when absent.
    pub clock: Option<ClassInstance<'a, ManualClock>>,
}

/// Each option: its name, the field errors name, the JS types it takes, in words.
#[allow(clippy::type_complexity)]
const OPTION_TYPES: [(&str, &str, &[ValueType], &str); 12] = [
    ("datacenter", "datacenter", &[ValueType::Number], "a number"),
    ("worker", "worker", &[ValueType::Number], "a number"),
    (
        "node",
        "node",
        &[ValueType::Number, ValueType::String],
        "a number or a string",
    ),
    (
        "layout",
        "layout",
        &[ValueType::String, ValueType::Object],
        "a Layout or a preset name",
    ),
    ("overflow", "overflow", &[ValueType::String], "a string"),
    ("clockBackwards", "clock_backwards", &[ValueType::String], "a string"),
    ("maxBorrowMs", "max_borrow_ms", &[ValueType::Number], "a number"),
    ("maxWaitMs", "max_wait_ms", &[ValueType::Number], "a number"),
    ("lease", "lease", &[ValueType::String], "a lease URL string"),
    ("leaseTtlMs", "lease_ttl_ms", &[ValueType::Number], "a number"),
    ("maxSequence", "max_sequence", &[ValueType::Number], "a number"),
    ("clock", "clock", &[ValueType::Object], "a ManualClock"),
];

/// The options argument: absent/`undefined`/`null` (the defaults), or an object whose keys are all
/// options (`fc::JS_GENERATOR_OPTIONS`): a `FLAKEID_CONFIG` error otherwise.
fn options_in<'a>(env: &Env, value: Option<Unknown<'a>>) -> napi::Result<Option<GeneratorOptions<'a>>> {
    let Some(value) = value else { return Ok(None) };
    let bad = |e: fc::Error| Err(crate::throw(env, e));
    match value.get_type()? {
        ValueType::Undefined => return Ok(None),
        ValueType::Object if !value.is_array()? => {}
        other => {
            let got = match other {
                ValueType::Null => "null",
                ValueType::Boolean => "a boolean",
                ValueType::Number => "a number",
                ValueType::String => "a string",
                ValueType::BigInt => "a bigint",
                ValueType::Function => "a function",
                ValueType::Object => "an array",
                _ => "another kind of value",
            };
            return bad(crate::config(
                "options",
                format!("options must be an object, got {got}"),
            ));
        }
    }
    // SAFETY: checked above to be a non-array object.
    let obj: Object<'_> = unsafe { value.cast()? };
    let names = obj.get_property_names()?;
    for i in 0..names.get_array_length()? {
        let key: String = names.get_element(i)?;
        if !fc::JS_GENERATOR_OPTIONS.contains(&key.as_str()) {
            return bad(fc::unknown_option(&key, &fc::JS_GENERATOR_OPTIONS));
        }
        // Each value's JS type, checked here so a wrong one is FLAKEID_CONFIG naming
        // the option (napi's own conversion error has no code).
        let Some(&(_, field, takes, wants)) = OPTION_TYPES.iter().find(|t| t.0 == key) else {
            continue;
        };
        let got = obj.get_named_property::<Unknown>(&key)?.get_type()?;
        if got != ValueType::Undefined && !takes.contains(&got) {
            let got = crate::type_name(got);
            return bad(crate::config(field, format!("{key} must be {wants}, got {got}")));
        }
    }
    // SAFETY: a live value of this call's env.
    unsafe { GeneratorOptions::from_napi_value(env.raw(), value.raw()) }.map(Some)
}

/// Issues IDs as `bigint`. One generator per node id; safe to share between calls.
#[napi]
#[derive(Debug)]
pub struct Generator {
    inner: Arc<fc::Generator>,
}

#[napi]
impl Generator {
    #[napi(constructor, ts_args_type = "options?: GeneratorOptions")]
    pub fn new(env: &Env, this: This<Object>, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        let options = options_in(env, options)?;
        let inner = match options {
            None => fc::Generator::builder(fc::Layout::SNOWFLAKE).build(),
            Some(o) => Self::build(o),
        };
        let inner = Arc::new(inner.or_throw(env)?);
        crate::fast::bind(env, this.raw(), &inner)?;
        Ok(Generator { inner })
    }

    fn build(o: GeneratorOptions<'_>) -> fc::Result<fc::Generator> {
        let mut b = fc::Generator::builder(layout_in(o.layout)?);
        match o.node {
            Some(Either::A(n)) => b = b.node(uint("node", n)?),
            Some(Either::B(spec)) => b = b.node_source(fc::NodeSource::parse(&spec)?),
            None => {}
        }
        if let Some(v) = o.datacenter {
            b = b.datacenter(uint("datacenter", v)?);
        }
        if let Some(v) = o.worker {
            b = b.worker(uint("worker", v)?);
        }
        if let Some(v) = o.overflow {
            b = b.overflow(fc::Overflow::parse(&v)?);
        }
        if let Some(v) = o.clock_backwards {
            b = b.clock_backwards(fc::ClockBackwards::parse(&v)?);
        }
        if let Some(v) = o.max_borrow_ms {
            b = b.max_borrow_ms(uint("max_borrow_ms", v)?);
        }
        if let Some(v) = o.max_wait_ms {
            b = b.max_wait_ms(uint("max_wait_ms", v)?);
        }
        if let Some(url) = o.lease {
            b = b.lease_url(&url);
        }
        if let Some(v) = o.lease_ttl_ms {
            b = b.lease_ttl_ms(uint("lease_ttl_ms", v)?);
        }
        if let Some(v) = o.max_sequence {
            b = b.max_sequence(uint("max_sequence", v)?);
        }
        if let Some(c) = o.clock {
            b = b.clock(c.inner.clone());
        }
        b.build()
    }

    /// The next ID.
    #[napi]
    pub fn next_id(&self, env: &Env) -> napi::Result<u64> {
        self.inner.next_id().or_throw(env)
    }

    /// `nextId` that never waits: `null` where `nextId` would wait for the clock
    /// (the tick's sequence is used up, or a rollback policy would wait).
    #[napi]
    pub fn try_next_id(&self, env: &Env) -> napi::Result<Option<u64>> {
        self.inner.try_next_id().or_throw(env)
    }

    /// `n` fresh IDs, increasing, reserved in runs (one atomic step per tick).
    #[napi(ts_return_type = "BigUint64Array")]
    pub fn next_ids(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "number")] n: crate::Num,
    ) -> napi::Result<napi::sys::napi_value> {
        crate::fast::ids_array(env.raw(), &self.inner, n)
    }

    /// The next ID as 8 bytes, big-endian (flake-idgen's format).
    #[napi]
    pub fn next_buffer(&self, env: &Env) -> napi::Result<Buffer> {
        let id = self.inner.next_id().or_throw(env)?;
        Ok(fc::to_bytes(id).to_vec().into())
    }

    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.layout(),
        }
    }
    #[napi(getter)]
    pub fn node(&self) -> f64 {
        self.inner.node() as f64
    }
    #[napi(getter)]
    pub fn datacenter(&self) -> f64 {
        self.inner.datacenter() as f64
    }
    #[napi(getter)]
    pub fn worker(&self) -> f64 {
        self.inner.worker() as f64
    }
    #[napi(getter, ts_return_type = "'wait' | 'borrow'")]
    pub fn overflow(&self) -> &'static str {
        self.inner.overflow().as_str()
    }
    #[napi(getter, ts_return_type = "'error' | 'wait' | 'monotonic'")]
    pub fn clock_backwards(&self) -> &'static str {
        self.inner.clock_backwards().as_str()
    }
    #[napi(getter)]
    pub fn max_borrow_ms(&self) -> f64 {
        self.inner.max_borrow_ms() as f64
    }
    #[napi(getter)]
    pub fn max_wait_ms(&self) -> f64 {
        self.inner.max_wait_ms() as f64
    }
    /// Whether the node id comes from a lease.
    #[napi(getter)]
    pub fn leased(&self) -> bool {
        self.inner.is_leased()
    }
    /// Releases the lease now instead of when the generator is garbage-collected;
    /// afterwards the generator refuses IDs (`FLAKEID_LEASE`).
    #[napi]
    pub fn release_lease(&self) {
        self.inner.release_lease();
    }
}
