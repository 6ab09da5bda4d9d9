//! `Layout`: a preset or a validated custom bit split, as a JS class.

use crate::convert::{self, Shared, js_error, number, uint};
use flakeid_core::{LAYOUT_FIELDS, Parts};
use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_LAYOUT: &str = r#"
/** A custom bit split; missing fields take Snowflake's values. */
export interface LayoutOptions {
  timeBits?: number;
  datacenterBits?: number;
  workerBits?: number;
  /** A single node field (instead of datacenterBits + workerBits). */
  nodeBits?: number;
  sequenceBits?: number;
  tickMs?: number;
  epochMs?: number;
  order?: "time|node|seq" | "time|seq|node";
}
/** A preset name, a Layout, or a custom split. */
export type LayoutLike = string | Layout | LayoutOptions;
/** An ID taken apart. `timestampMs` is Unix ms (the start of the ID's tick). */
export interface Parts {
  timestampMs: number;
  date: Date;
  /** The raw time field: ticks since the layout's epoch. */
  ticks: number;
  datacenter: number;
  worker: number;
  node: number;
  sequence: number;
}
"#;

/// A `#[wasm_bindgen]` block of getters, each the core's accessor of that name
/// (as a JS number where it is one: every such value is below 2^53).
macro_rules! getters {
    ($ty:ident { $($(#[doc = $doc:literal])* $name:ident / $js:ident: $ret:ty),* $(,)? }) => {
        #[wasm_bindgen]
        #[allow(clippy::unnecessary_cast)]
        impl $ty {
            $(
                $(#[doc = $doc])*
                #[wasm_bindgen(getter, js_name = $js)]
                pub fn $name(&self) -> $ret {
                    self.inner.$name() as $ret
                }
            )*
        }
    };
}

pub(crate) use getters;

getters! { Layout {
    time_bits / timeBits: u32,
    datacenter_bits / datacenterBits: u32,
    worker_bits / workerBits: u32,
    node_bits / nodeBits: u32,
    sequence_bits / sequenceBits: u32,
    tick_ms / tickMs: f64,
    epoch_ms / epochMs: f64,
    max_node / maxNode: f64,
    max_datacenter / maxDatacenter: f64,
    max_worker / maxWorker: f64,
    max_sequence / maxSequence: f64,
    /// The largest ID this layout can produce.
    max_id / maxId: u64,
    /// The last Unix ms this layout can represent.
    last_timestamp_ms / lastTimestampMs: f64,
    /// The last Unix ms whose IDs fit a signed 64-bit integer.
    signed_until_ms / signedUntilMs: f64,
} }

/// How the 64 bits are split (`Layout.preset("flake")`, `new Layout({...})`).
#[wasm_bindgen]
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub(crate) inner: flakeid_core::Layout,
}

#[wasm_bindgen]
impl Layout {
    /// A custom layout, validated (`FLAKEID_CONFIG` names the bad field).
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "LayoutOptions")] options: Option<JsValue>,
    ) -> Result<Layout, JsValue> {
        let options = options.unwrap_or_default();
        // An options argument by flakeid-js's rule, as in @flakeid/node (a preset is `Layout.preset`'s).
        flakeid_js::js_options(&convert::arg(&options)).map_err(js_error)?;
        Ok(Layout {
            inner: layout_from_js(&options)?,
        })
    }

    /// A preset: `snowflake`, `flake`, `discord`, `sonyflake`, `baidu`, `instagram`, `js53`.
    pub fn preset(#[wasm_bindgen(unchecked_param_type = "string")] name: JsValue) -> Result<Layout, JsValue> {
        flakeid_core::Layout::preset(&convert::string(&name, "layout")?)
            .map(|inner| Layout { inner })
            .map_err(js_error)
    }

    /// Every preset, default first.
    pub fn presets() -> Vec<Layout> {
        flakeid_core::Layout::PRESETS
            .iter()
            .map(|&inner| Layout { inner })
            .collect()
    }

    /// The preset names, default first.
    #[wasm_bindgen(js_name = presetNames, unchecked_return_type = "string[]")]
    pub fn preset_names() -> Array {
        flakeid_core::Layout::PRESETS
            .iter()
            .filter_map(|l| l.name())
            .map(JsValue::from)
            .collect()
    }

    /// The preset's name, or `null` for a custom layout.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> Option<String> {
        self.inner.name().map(str::to_owned)
    }
    /// `"time|node|seq"` or `"time|seq|node"`.
    #[wasm_bindgen(getter)]
    pub fn order(&self) -> String {
        self.inner.order().as_str().to_owned()
    }

    /// Takes an ID apart; `FLAKEID_PARSE` when it has bits above the layout's width.
    #[wasm_bindgen(unchecked_return_type = "Parts")]
    pub fn decompose(
        &self,
        #[wasm_bindgen(unchecked_param_type = "bigint | string | number")] id: JsValue,
    ) -> Result<Object, JsValue> {
        let id = convert::id_as(&id, "id", flakeid_js::JsNumberIds::for_layout(&self.inner))?;
        self.inner.try_decompose(id).map(parts_to_js).map_err(js_error)
    }

    /// Builds an ID from a Unix-ms time, a node id and a sequence.
    pub fn compose(
        &self,
        #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number | bigint")] node: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] sequence: JsValue,
    ) -> Result<u64, JsValue> {
        let (ts, node, seq) = (
            uint(&timestamp_ms, "timestamp_ms")?,
            uint(&node, "node")?,
            uint(&sequence, "sequence")?,
        );
        self.inner.compose(ts, node, seq).map_err(js_error)
    }

    /// `compose` with the node given as datacenter and worker.
    #[wasm_bindgen(js_name = composeParts)]
    pub fn compose_parts(
        &self,
        #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] datacenter: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] worker: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] sequence: JsValue,
    ) -> Result<u64, JsValue> {
        let ts = uint(&timestamp_ms, "timestamp_ms")?;
        let (dc, w) = (uint(&datacenter, "datacenter")?, uint(&worker, "worker")?);
        let seq = uint(&sequence, "sequence")?;
        self.inner.compose_parts(ts, dc, w, seq).map_err(js_error)
    }

    /// The smallest ID of `timestampMs`'s tick (for `id >= first` queries).
    #[wasm_bindgen(js_name = firstIdAt)]
    pub fn first_id_at(
        &self,
        #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
    ) -> Result<u64, JsValue> {
        self.inner
            .first_id_at(uint(&timestamp_ms, "timestamp_ms")?)
            .map_err(js_error)
    }

    /// The largest ID of `timestampMs`'s tick.
    #[wasm_bindgen(js_name = lastIdAt)]
    pub fn last_id_at(
        &self,
        #[wasm_bindgen(js_name = timestampMs, unchecked_param_type = "number")] timestamp_ms: JsValue,
    ) -> Result<u64, JsValue> {
        self.inner
            .last_id_at(uint(&timestamp_ms, "timestamp_ms")?)
            .map_err(js_error)
    }

    /// `[first, last]`: every ID made from `startMs` to `endMs` (inclusive) lies between.
    #[wasm_bindgen(js_name = idRange, unchecked_return_type = "[bigint, bigint]")]
    pub fn id_range(
        &self,
        #[wasm_bindgen(js_name = startMs, unchecked_param_type = "number")] start_ms: JsValue,
        #[wasm_bindgen(js_name = endMs, unchecked_param_type = "number")] end_ms: JsValue,
    ) -> Result<Array, JsValue> {
        let (start, end) = (convert::arg(&start_ms), convert::arg(&end_ms));
        let (first, last) = flakeid_js::js_id_range(&self.inner, &start, &end).map_err(js_error)?;
        Ok(Array::of2(&first.into(), &last.into()))
    }

    /// Whether both split the bits alike (and have the same name).
    pub fn equals(&self, other: &Layout) -> bool {
        self.inner == other.inner
    }

    /// `snowflake (41 time | 5 datacenter + 5 worker | 12 seq, 1 ms ticks, epoch 1288834974657)`.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        self.inner.to_string()
    }

    /// Lets a `Generator` or function read this layout from an options object.
    #[wasm_bindgen(js_name = __flakeid_share, skip_typescript)]
    pub fn share(&self) {
        convert::share(Shared::Layout(self.inner));
    }
}

/// `Parts` as a plain object (numbers: every field is below 2^53 for real layouts).
fn parts_to_js(p: Parts) -> Object {
    let o = Object::new();
    convert::set(&o, "timestampMs", &number(p.timestamp_ms));
    convert::set(&o, "date", &js_sys::Date::new(&number(p.timestamp_ms)));
    convert::set(&o, "ticks", &number(p.ticks));
    convert::set(&o, "datacenter", &number(p.datacenter));
    convert::set(&o, "worker", &number(p.worker));
    convert::set(&o, "node", &number(p.node));
    convert::set(&o, "sequence", &number(p.sequence));
    o
}

/// A `LayoutLike`: absent → snowflake; a preset name; a `Layout`; or an options object.
pub(crate) fn layout_from_js(value: &JsValue) -> Result<flakeid_core::Layout, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(flakeid_core::Layout::SNOWFLAKE);
    }
    // A preset's name, or an object (a Layout or a layout's fields): flakeid-js's rule.
    if let Some(name) = flakeid_js::js_layout_name(&convert::arg(value)).map_err(js_error)? {
        return flakeid_core::Layout::preset(name).map_err(js_error);
    }
    if let Some(Shared::Layout(layout)) = convert::shared(value) {
        return Ok(layout);
    }
    // Member by member through the core's table (flakeid-js, shared with @flakeid/node).
    let members: Result<Vec<_>, JsValue> = LAYOUT_FIELDS
        .iter()
        .map(|f| Ok((f.camel_name, convert::arg(&convert::member(value, f.camel_name)?))))
        .collect();
    flakeid_js::js_layout(&members?, convert::now_ms_precise()).map_err(js_error)
}
