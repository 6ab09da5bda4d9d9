//! `Generator` and `ManualClock`.

use crate::layout::{Layout, float, getters};
use crate::{OrThrow, fc, js, uint};
use napi::Env;
use napi::bindgen_prelude::{
    Buffer, ClassInstance, Either, Float64Array, FromNapiValue, JsObjectValue, JsValue, Object, This, Unknown,
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
        #[napi(ts_arg_type = "number")] start_ms: crate::Arg,
        #[napi(ts_arg_type = "number | undefined | null")] auto_advance_ms: Option<crate::Arg>,
    ) -> napi::Result<Self> {
        let start = uint("start_ms", start_ms).or_throw(env)?;
        let step = auto_advance_ms
            .map_or(Ok(0), |v| uint("auto_advance_ms", v))
            .or_throw(env)?;
        Ok(ManualClock {
            inner: fc::ManualClock::new(start).with_auto_advance(step),
        })
    }
    #[napi]
    pub fn set(&self, env: &Env, #[napi(ts_arg_type = "number")] ms: crate::Arg) -> napi::Result<()> {
        self.inner.set(uint("ms", ms).or_throw(env)?);
        Ok(())
    }
    #[napi]
    pub fn advance(&self, env: &Env, #[napi(ts_arg_type = "number")] ms: crate::Arg) -> napi::Result<()> {
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

impl ManualClock {
    /// The core's clock (shared with the generators it is given to).
    pub(crate) fn core(&self) -> &fc::ManualClock {
        &self.inner
    }
}

/// Options of `new Generator(...)`. Give `node`, or `datacenter` + `worker`
/// (each 0 when absent); `node` may also be a source: `'env:VAR'`, `'hostname'`,
/// `'mac'` or `'ipv4'`. With none (and no `lease`): Kubernetes' Lease in a pod, a
/// free node id on this host elsewhere, refused in a container (docs/design.md).
#[napi(object, object_to_js = false)]
// The shape for index.d.ts (it holds JS handles: no Debug). The constructor reads
// the object member by member through the core's rules (Generator::build).
#[allow(missing_debug_implementations, dead_code)]
pub struct GeneratorOptions<'a> {
    /// The datacenter part of the node id (layouts with datacenter bits). Within the
    /// layout's range. Unset: 0 when the other part is given; with no node source at all,
    /// as the node option says.
    pub datacenter: Option<f64>,
    /// The worker part of the node id. Within the layout's range. Unset: 0 when the other
    /// part is given; with no node source at all, as the node option says.
    pub worker: Option<f64>,
    /// The whole node id, or env:VAR, hostname, mac, ipv4. Within the layout's range.
    /// Unset: with no node source given (nor a lease): in a Kubernetes pod, a lease from
    /// the API server; on a host, a free node id the host guard keeps; in a container or
    /// with the guard off, refused, naming the fixes.
    pub node: Option<Either<f64, String>>,
    /// A preset name or a custom layout. Default snowflake.
    ///
    /// A `Layout`, a preset name or a `LayoutOptions` object.
    #[napi(ts_type = "Layout | string | LayoutOptions")]
    pub layout: Option<Either<String, ClassInstance<'a, Layout>>>,
    /// When a tick's sequence is used up: wait for the next tick, or borrow from the
    /// future. One of `'wait'`, `'borrow'`; default `'wait'`.
    #[napi(ts_type = "'wait' | 'borrow'")]
    pub overflow: Option<String>,
    /// When the clock reads earlier than IDs issued. One of `'error'`, `'wait'`,
    /// `'monotonic'`; default `'error'`.
    #[napi(ts_type = "'error' | 'wait' | 'monotonic'")]
    pub clock_backwards: Option<String>,
    /// How far a borrowing generator may run ahead of the clock. 0 to 86400000 ms; default
    /// 2000 ms.
    pub max_borrow_ms: Option<f64>,
    /// How long the wait and monotonic clock policies wait for the clock. 0 to 86400000 ms;
    /// default 1000 ms.
    pub max_wait_ms: Option<f64>,
    /// Lease the node id from a store: file:///dir, redis://, postgres://, etcd://. Unset:
    /// no lease.
    ///
    /// `redis[s]://host:port/db`, `postgres://user:password@host:port/db` or
    /// `etcd[s]://host:2379/`, each with `?namespace=NAME`; TLS settings in
    /// docs/leases.md. The constructor blocks until the lease is acquired (at most 10 s).
    pub lease: Option<String>,
    /// The lease's time-to-live. 1000 to 3600000 ms; default 10000 ms. Needs lease.
    pub lease_ttl_ms: Option<f64>,
    /// At most maxSequence + 1 IDs per tick, 2^k - 1 (flake-idgen's seqMask). Unset: the
    /// layout's whole sequence field.
    pub max_sequence: Option<f64>,
    /// A manual clock for tests. Unset: the system clock.
    ///
    /// A `ManualClock`.
    pub clock: Option<ClassInstance<'a, ManualClock>>,
    /// A file keeping a high-water timestamp across restarts, for fixed node ids
    /// (docs/state.md). Unset: no state file.
    ///
    /// A restart with the clock behind it meets `clockBackwards`; a missing file is a
    /// fresh start; not with `lease`.
    pub state: Option<String>,
    /// Refuse to start without a node source (node, worker or lease) instead of taking one
    /// from Kubernetes or this host. Default `false`.
    ///
    /// `FLAKEID_REQUIRE_NODE=true` sets it for every generator of the process.
    pub require_node: Option<bool>,
    /// The only instance of the app: with no node id, take a free one on this host even in
    /// a container. Default `false`.
    ///
    /// `FLAKEID_SINGLE_INSTANCE=true` sets it for every generator of the process.
    pub single_instance: Option<bool>,
}

/// Issues IDs as `bigint`. One generator per node id; safe to share between calls.
/// What a generator has done since it was built (`gen.stats()`): docs/stats.md.
#[napi(object, use_nullable = true)]
#[derive(Debug)]
pub struct Stats {
    /// IDs handed out.
    pub ids_issued: f64,
    /// Ticks waited out because the tick's sequence (or borrow window) was used up.
    pub tick_waits: f64,
    /// Time spent in those waits, µs.
    pub tick_wait_us: f64,
    /// How far the last ID issued is ahead of the clock, ms.
    pub lead_ms: f64,
    /// Calls that found the clock behind IDs already issued.
    pub clock_rollbacks: f64,
    /// The largest such rollback, ms.
    pub max_rollback_ms: f64,
    /// `held`, `unreachable`, `lost` or `released`; `null` without a lease.
    pub lease_state: Option<String>,
    /// ms until the lease's window closes unless renewed; `null` without a lease.
    pub lease_remaining_ms: Option<f64>,
    /// Where the node id came from: `explicit`, `leased`, `coordinator` or `host`.
    #[napi(ts_type = "'explicit' | 'leased' | 'coordinator' | 'host'")]
    pub node_origin: String,
}

#[napi]
#[derive(Debug)]
pub struct Generator {
    inner: Arc<fc::Generator>,
}

#[napi]
impl Generator {
    #[napi(constructor, ts_args_type = "options?: GeneratorOptions")]
    pub fn new(env: &Env, this: This<Object>, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        let inner = Arc::new(Self::build(env, options)?);
        crate::fast::bind(env, this.raw(), &inner)?;
        Ok(Generator { inner })
    }

    /// The options object, member by member through the core's table and flakeid-js's value
    /// rules (`js::js_generator_options`, shared with `@flakeid/wasm`); only the
    /// `Layout` and `ManualClock` instances are unwrapped here.
    fn build(env: &Env, options: Option<Unknown<'_>>) -> napi::Result<fc::Generator> {
        let mut members = Vec::new();
        if let Some(obj) = crate::options_object(env, options)? {
            for key in crate::keys(&obj)? {
                let v = obj.get_named_property::<Unknown>(&key)?;
                members.push((key, crate::arg(&v)?, v));
            }
        }
        let given = js::js_generator_options(members.iter().map(|m| (m.0.as_str(), &m.1))).or_throw(env)?;
        // The objects: a Layout (first: the builder starts from it) and a ManualClock.
        let object = |name| js::js_object_option(&given, name).map(|i| members[i].2.raw());
        let mut b = fc::Generator::builder(match object("layout") {
            // SAFETY: a live object of this call's env.
            Some(v) => unsafe { crate::layout::layout_object(env.raw(), v) }?.or_throw(env)?,
            None => fc::Layout::SNOWFLAKE,
        });
        for (_, option, value) in &given {
            if let js::JsOption::Value(value) = value {
                b = b.set(option.name, *value).or_throw(env)?;
            }
        }
        if let Some(v) = object("clock") {
            // SAFETY: a live value of this call's env.
            let c = unsafe { ClassInstance::<ManualClock>::from_napi_value(env.raw(), v) };
            let c = c.map_err(|_| js::js_wrong_type("clock", js::JS_CLOCK_WANTS, &js::JsArg::Object));
            b = b.clock(c.or_throw(env)?.inner.clone());
        }
        b.build().or_throw(env)
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
        #[napi(ts_arg_type = "number")] n: crate::Arg,
    ) -> napi::Result<napi::sys::napi_value> {
        crate::fast::ids_array(env.raw(), &self.inner, n)
    }

    /// The next ID as a JS `number`: for layouts of at most 53 bits (`js53`), whose
    /// every ID is exact as a number; others are refused (`FLAKEID_CONFIG`, field
    /// `layout`).
    #[napi]
    pub fn next_number(&self, env: &Env) -> napi::Result<f64> {
        js::js_number_layout(self.inner.layout()).or_throw(env)?;
        Ok(self.inner.next_id().or_throw(env)? as f64)
    }

    /// `n` fresh IDs as numbers, increasing (layouts of at most 53 bits).
    #[napi(ts_return_type = "Float64Array")]
    pub fn next_numbers(&self, env: &Env, #[napi(ts_arg_type = "number")] n: crate::Arg) -> napi::Result<Float64Array> {
        js::js_number_layout(self.inner.layout()).or_throw(env)?;
        let n = js::js_batch(&n.0).or_throw(env)?;
        let ids = self.inner.next_ids(n).or_throw(env)?;
        Ok(Float64Array::new(ids.into_iter().map(|id| id as f64).collect()))
    }

    /// What this generator has done since it was built (the core's statistics).
    #[napi]
    pub fn stats(&self) -> Stats {
        let s = self.inner.stats();
        crate::stats_object!(s => Stats { ids_issued, tick_waits, tick_wait_us, lead_ms, clock_rollbacks, max_rollback_ms } + {
            lease_state: s.lease_state.map(str::to_string),
            lease_remaining_ms: s.lease_remaining_ms.map(|ms| ms as f64),
            node_origin: s.node_origin.as_str().to_string(),
        })
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
    #[napi(getter, ts_return_type = "'wait' | 'borrow'")]
    pub fn overflow(&self) -> &'static str {
        self.inner.overflow().as_str()
    }
    #[napi(getter, ts_return_type = "'error' | 'wait' | 'monotonic'")]
    pub fn clock_backwards(&self) -> &'static str {
        self.inner.clock_backwards().as_str()
    }
    /// Whether the node id comes from a lease.
    #[napi(getter)]
    pub fn leased(&self) -> bool {
        self.inner.is_leased()
    }
    /// Where the node id came from: `'explicit'`, `'leased'`, `'coordinator'` or `'host'`.
    #[napi(getter, ts_return_type = "'explicit' | 'leased' | 'coordinator' | 'host'")]
    pub fn node_origin(&self) -> &'static str {
        self.inner.node_origin().as_str()
    }
    /// Lets go of the node id now rather than when the generator is garbage-collected
    /// (its lease, or the host guard of a fixed node id, so another generator can be
    /// built on it at once); later calls throw `FLAKEID_CONFIG` (field `generator`).
    /// Idempotent.
    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }
    /// Releases the lease now instead of when the generator is garbage-collected;
    /// afterwards the generator refuses IDs (`FLAKEID_LEASE`).
    #[napi]
    pub fn release_lease(&self) {
        self.inner.release_lease();
    }
}

getters! { Generator {
    node: f64 = float, datacenter: f64 = float, worker: f64 = float, max_borrow_ms: f64 = float,
    max_wait_ms: f64 = float,
} }
