//! `Layout` and the parts of an ID.

use crate::{OrThrow, fc, id_of, js, uint};
use napi::bindgen_prelude::{ClassInstance, FromNapiValue, JsObjectValue, Object, Unknown};
use napi::{Env, JsDate};
use napi_derive::napi;

/// How the 64 bits are split: `Layout.preset('flake')` or
/// `new Layout({ timeBits, nodeBits | datacenterBits + workerBits, sequenceBits, tickMs, epochMs, order })`.
#[napi]
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub(crate) inner: fc::Layout,
}

/// A `LayoutOptions` object's members, through the core's table (`LAYOUT_FIELDS`).
fn fields(obj: &Object<'_>) -> napi::Result<Vec<(&'static str, js::JsArg)>> {
    fc::LAYOUT_FIELDS
        .iter()
        .map(|f| {
            Ok((
                f.camel_name,
                crate::arg(&obj.get_named_property::<Unknown>(f.camel_name)?)?,
            ))
        })
        .collect()
}

/// A layout given as an object (where flakeid-js's `js_layout_name` says so): a
/// `Layout`, else a plain object of a layout's fields, read as `new Layout(...)`
/// reads them (flakeid-js's `js_layout`, as in `@flakeid/wasm`).
///
/// # Safety
/// `env` and `value` must be live handles of the current call, `value` an object.
pub(crate) unsafe fn layout_object(
    env: napi::sys::napi_env,
    value: napi::sys::napi_value,
) -> napi::Result<fc::Result<fc::Layout>> {
    // SAFETY (this block): the caller's contract; another class fails to unwrap.
    unsafe {
        if let Ok(l) = ClassInstance::<Layout>::from_napi_value(env, value) {
            return Ok(Ok(l.inner));
        }
        let members = fields(&Object::from_napi_value(env, value)?)?;
        Ok(js::js_layout(&members, fc::precise_now_ms()))
    }
}

/// Options of `new Layout(...)`; absent fields take `snowflake`'s values.
#[napi(object, object_to_js = false)]
// The shape for index.d.ts: the constructor reads the object member by member
// through the core's table (flakeid_core::LAYOUT_FIELDS).
#[derive(Debug)]
#[allow(dead_code)]
pub struct LayoutOptions {
    #[napi(ts_type = "number")]
    pub time_bits: Option<crate::Arg>,
    /// A single node field of this width (instead of `datacenterBits` + `workerBits`).
    #[napi(ts_type = "number")]
    pub node_bits: Option<crate::Arg>,
    #[napi(ts_type = "number")]
    pub datacenter_bits: Option<crate::Arg>,
    #[napi(ts_type = "number")]
    pub worker_bits: Option<crate::Arg>,
    #[napi(ts_type = "number")]
    pub sequence_bits: Option<crate::Arg>,
    #[napi(ts_type = "number")]
    pub tick_ms: Option<crate::Arg>,
    #[napi(ts_type = "number")]
    pub epoch_ms: Option<crate::Arg>,
    /// `'time|node|seq'` (default) or `'time|seq|node'` (Sonyflake).
    pub order: Option<String>,
}

/// An ID taken apart. `timestampMs` is Unix ms (the start of the ID's tick).
#[napi(object, object_from_js = false)]
#[allow(missing_debug_implementations)] // holds a JS Date
pub struct Parts<'e> {
    pub timestamp_ms: f64,
    pub date: JsDate<'e>,
    /// The raw time field: ticks since the layout's epoch.
    pub ticks: f64,
    pub datacenter: f64,
    pub worker: f64,
    pub node: f64,
    pub sequence: f64,
}

/// A `#[napi]` block of getters, each the core's accessor of that name, converted
/// (docs as `#[doc = "..."]`: napi would show a `///` line's raw-string quotes)
/// by `$to`: [`same`], [`float`] (below 2^53 by the layout rules) or [`number`]
/// (refused past 2^53, naming the field).
macro_rules! getters {
    ($ty:ident { $($(#[doc = $doc:literal])* $name:ident: $ret:ty = $to:ident),* $(,)? }) => {
        #[napi]
        impl $ty {
            $(
                $(#[doc = $doc])*
                #[napi(getter)]
                pub fn $name(&self, env: &Env) -> napi::Result<$ret> {
                    $to(env, stringify!($name), self.inner.$name())
                }
            )*
        }
    };
}

pub(crate) use getters;

pub(crate) fn same<T>(_: &Env, _: &str, v: T) -> napi::Result<T> {
    Ok(v)
}
pub(crate) fn float(_: &Env, _: &str, v: u64) -> napi::Result<f64> {
    Ok(v as f64)
}
pub(crate) fn number(env: &Env, field: &'static str, v: u64) -> napi::Result<f64> {
    js::js_number(field, v).or_throw(env)
}

getters! { Layout {
    time_bits: u32 = same,
    datacenter_bits: u32 = same,
    worker_bits: u32 = same,
    node_bits: u32 = same,
    sequence_bits: u32 = same,
    tick_ms: f64 = float,
    epoch_ms: f64 = float,
    #[doc = "Node ids, datacenters, workers and sequences run from 0 to these."]
    max_node: f64 = number,
    max_datacenter: f64 = number,
    max_worker: f64 = number,
    max_sequence: f64 = number,
    #[doc = "The largest ID this layout can produce."]
    max_id: u64 = same,
    #[doc = "The last Unix ms the time field can hold."]
    last_timestamp_ms: f64 = number,
    #[doc = "IDs stay below 2^63 (a signed BIGINT) until this Unix ms."]
    signed_until_ms: f64 = number,
} }

#[napi]
impl Layout {
    // The options object, member by member through the core's table and flakeid-js's
    // value rules (`js::js_layout`, shared with `@flakeid/wasm`).
    #[napi(constructor, ts_args_type = "options?: LayoutOptions | undefined | null")]
    pub fn new(env: &Env, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        let members = match crate::options_object(env, options)? {
            Some(obj) => fields(&obj)?,
            None => Vec::new(),
        };
        let inner = js::js_layout(&members, fc::precise_now_ms()).or_throw(env)?;
        Ok(Layout { inner })
    }

    /// `snowflake`, `flake`, `discord`, `sonyflake`, `baidu`, `instagram` or `js53`.
    #[napi(factory)]
    pub fn preset(env: &Env, #[napi(ts_arg_type = "string")] name: crate::Arg) -> napi::Result<Layout> {
        let name = js::js_string("layout", name.0).or_throw(env)?;
        fc::Layout::preset(&name).map(|inner| Layout { inner }).or_throw(env)
    }

    /// Every preset, `snowflake` first.
    #[napi]
    pub fn presets() -> Vec<Layout> {
        fc::Layout::PRESETS.iter().map(|&inner| Layout { inner }).collect()
    }
    /// The preset names, `snowflake` first.
    #[napi]
    pub fn preset_names() -> Vec<&'static str> {
        fc::Layout::PRESETS.iter().filter_map(|l| l.name()).collect()
    }

    /// The preset's name, or `null` for a custom layout.
    #[napi(getter)]
    pub fn name(&self) -> Option<&'static str> {
        self.inner.name()
    }
    #[napi(getter, ts_return_type = "'time|node|seq' | 'time|seq|node'")]
    pub fn order(&self) -> &'static str {
        self.inner.order().as_str()
    }

    #[napi(ts_args_type = "id: bigint | string | number")]
    pub fn decompose<'e>(&self, env: &'e Env, id: crate::IdArg) -> napi::Result<Parts<'e>> {
        let id = id_of(id, js::JsNumberIds::for_layout(&self.inner)).or_throw(env)?;
        let p = self.inner.try_decompose(id).or_throw(env)?;
        let n = |field, v| js::js_number(field, v).or_throw(env);
        let timestamp_ms = n("timestamp_ms", p.timestamp_ms)?;
        Ok(Parts {
            timestamp_ms,
            date: env.create_date(timestamp_ms)?,
            ticks: n("ticks", p.ticks)?,
            datacenter: n("datacenter", p.datacenter)?,
            worker: n("worker", p.worker)?,
            node: n("node", p.node)?,
            sequence: n("sequence", p.sequence)?,
        })
    }
    /// Builds an ID from a Unix-ms time (floored to its tick), a node id and a sequence.
    #[napi]
    pub fn compose(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "number")] timestamp_ms: crate::Arg,
        #[napi(ts_arg_type = "number")] node: crate::Arg,
        #[napi(ts_arg_type = "number")] sequence: crate::Arg,
    ) -> napi::Result<u64> {
        let n = |field, v| uint(field, v).or_throw(env);
        let (ts, node, seq) = (
            n("timestamp_ms", timestamp_ms)?,
            n("node", node)?,
            n("sequence", sequence)?,
        );
        self.inner.compose(ts, node, seq).or_throw(env)
    }
    /// `compose` with the node id given as datacenter and worker.
    #[napi]
    pub fn compose_parts(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "number")] timestamp_ms: crate::Arg,
        #[napi(ts_arg_type = "number")] datacenter: crate::Arg,
        #[napi(ts_arg_type = "number")] worker: crate::Arg,
        #[napi(ts_arg_type = "number")] sequence: crate::Arg,
    ) -> napi::Result<u64> {
        let n = |field, v| uint(field, v).or_throw(env);
        let (ts, dc, w, seq) = (
            n("timestamp_ms", timestamp_ms)?,
            n("datacenter", datacenter)?,
            n("worker", worker)?,
            n("sequence", sequence)?,
        );
        self.inner.compose_parts(ts, dc, w, seq).or_throw(env)
    }
    /// The smallest ID of `timestampMs`'s tick.
    #[napi]
    pub fn first_id_at(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "number")] timestamp_ms: crate::Arg,
    ) -> napi::Result<u64> {
        let ts = uint("timestamp_ms", timestamp_ms).or_throw(env)?;
        self.inner.first_id_at(ts).or_throw(env)
    }
    /// The largest ID of `timestampMs`'s tick.
    #[napi]
    pub fn last_id_at(&self, env: &Env, #[napi(ts_arg_type = "number")] timestamp_ms: crate::Arg) -> napi::Result<u64> {
        let ts = uint("timestamp_ms", timestamp_ms).or_throw(env)?;
        self.inner.last_id_at(ts).or_throw(env)
    }
    /// `[first, last]` IDs made from `startMs` to `endMs` (inclusive).
    #[napi(ts_return_type = "[bigint, bigint]")]
    pub fn id_range(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "number")] start_ms: crate::Arg,
        #[napi(ts_arg_type = "number")] end_ms: crate::Arg,
    ) -> napi::Result<Vec<u64>> {
        let (first, last) = js::js_id_range(&self.inner, &start_ms.0, &end_ms.0).or_throw(env)?;
        Ok(vec![first, last])
    }
    #[napi]
    pub fn equals(&self, other: &Layout) -> bool {
        self.inner == other.inner
    }
    /// `snowflake (41 time | 5 datacenter + 5 worker | 12 seq, ...)`.
    #[napi(js_name = "toString")]
    pub fn describe(&self) -> String {
        self.inner.to_string()
    }
}
