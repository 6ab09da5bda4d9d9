//! `Generator` and `ManualClock` as JS classes. The clock is the host's
//! `Date.now()`; a wasm module has no threads, no fork and no leases.

use crate::convert::{self, Shared, js_error};
use crate::layout::{Layout, getters, layout_from_js};
use flakeid_core::Clock;
use flakeid_js::JsOption;
use js_sys::{Object, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_GENERATOR: &str = r#"
export interface GeneratorOptions {
  /**
   * A preset name or a custom layout. Default snowflake.
   *
   * A preset name, a Layout, or a custom split.
   */
  layout?: LayoutLike;
  /**
   * The datacenter part of the node id (layouts with datacenter bits). Within the layout's
   * range. Unset: 0 when the other part is given; with no node source at all, as the node
   * option says.
   */
  datacenter?: number | bigint;
  /**
   * The worker part of the node id. Within the layout's range. Unset: 0 when the other part
   * is given; with no node source at all, as the node option says.
   */
  worker?: number | bigint;
  /**
   * The whole node id, or env:VAR, hostname, mac, ipv4. Within the layout's range. Unset:
   * with no node source given (nor a lease): in a Kubernetes pod, a lease from the API
   * server; on a host, a free node id the host guard keeps; in a container or with the
   * guard off, refused, naming the fixes.
   *
   * "env:VAR" where the runtime has an environment. This build has no host guard: with
   * no node id, it is refused.
   */
  node?: number | bigint | string;
  /**
   * When a tick's sequence is used up: wait for the next tick, or borrow from the future.
   * One of "wait", "borrow"; default "wait".
   */
  overflow?: "wait" | "borrow";
  /**
   * When the clock reads earlier than IDs issued. One of "error", "wait", "monotonic";
   * default "error".
   */
  clockBackwards?: "error" | "wait" | "monotonic";
  /**
   * How far a borrowing generator may run ahead of the clock. 0 to 86400000 ms; default
   * 2000 ms.
   */
  maxBorrowMs?: number;
  /**
   * How long the wait and monotonic clock policies wait for the clock. 0 to 86400000 ms;
   * default 1000 ms.
   */
  maxWaitMs?: number;
  /**
   * At most maxSequence + 1 IDs per tick, 2^k - 1 (flake-idgen's seqMask). Unset: the
   * layout's whole sequence field.
   */
  maxSequence?: number;
  /** A lease's TTL: this build has no leases, so it is always refused (as without `lease` everywhere). */
  leaseTtlMs?: number;
  /**
   * A manual clock for tests. Unset: the system clock.
   *
   * A ManualClock; the system clock is Date.now().
   */
  clock?: ManualClock;
  /**
   * Refuse to start without a node source (node, worker or lease) instead of taking one
   * from Kubernetes or this host. Default `false`.
   */
  requireNode?: boolean;
}

/** What a generator has done since it was built (`gen.stats()`, docs/stats.md). */
export interface Stats {
  idsIssued: number;
  tickWaits: number;
  tickWaitUs: number;
  leadMs: number;
  clockRollbacks: number;
  maxRollbackMs: number;
  /** "held", "unreachable", "lost" or "released"; null without a lease. */
  leaseState: string | null;
  leaseRemainingMs: number | null;
  /** Where the node id came from: always "explicit" here (no guard, no leases). */
  nodeOrigin: 'explicit' | 'leased' | 'coordinator' | 'host';
}
"#;

/// `Date.now()` as a [`Clock`], with the per-task cache of `js/clock.js` as the hint.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostClock;

impl Clock for HostClock {
    fn now_ms(&self) -> u64 {
        convert::now_ms()
    }
    fn now_ms_precise(&self) -> u64 {
        convert::now_ms_precise()
    }
}

// A generator must not need an over-aligned allocation here: with the counter's
// 128-byte cache-line padding (right for threads, pointless on single-threaded
// wasm) creating many generators without `free()` grew superlinearly — 100k took
// 1.3 s and 1M did not finish in 300 s; now 0.13 s and 35 s.
const _: () = assert!(std::mem::align_of::<flakeid_core::Generator>() <= 16);

/// Issues IDs: `new Generator({ datacenter: 1, worker: 2 }).nextId()`.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Generator {
    inner: flakeid_core::Generator,
}

#[wasm_bindgen]
impl Generator {
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "GeneratorOptions")] options: Option<JsValue>,
    ) -> Result<Generator, JsValue> {
        let options = options.unwrap_or_default();
        // Member by member through the core's table and flakeid-js's value rules
        // (`js_generator_options`, shared with @flakeid/node); only a `Layout` (or a
        // layout's options) and a `ManualClock` are unwrapped here.
        let mut members = Vec::new();
        for key in convert::option_keys(&options, &flakeid_js::JS_GENERATOR_OPTIONS)? {
            let v = convert::member(&options, &key)?;
            members.push((key, convert::arg(&v), v));
        }
        let given = flakeid_js::js_generator_options(members.iter().map(|m| (m.0.as_str(), &m.1)));
        let given = given.map_err(js_error)?;
        // The objects: a layout (first: the builder starts from it) and a ManualClock.
        let object = |name| flakeid_js::js_object_option(&given, name).map(|i| &members[i].2);
        let layout = object("layout").map_or(Ok(flakeid_core::Layout::SNOWFLAKE), layout_from_js)?;
        let mut b = flakeid_core::Generator::builder(layout).clock(HostClock);
        for (_, option, value) in &given {
            b = match value {
                // Leases need a store and threads: not in this build. (`leaseTtlMs`
                // goes on to the core, which refuses it without a lease.)
                _ if option.name == "lease" => {
                    return Err(convert::config(
                        "lease",
                        format!(
                            "{}: leases are not available in the WebAssembly build (use @flakeid/node)",
                            option.camel_name
                        ),
                    ));
                }
                JsOption::Value(value) => b.set(option.name, *value).map_err(js_error)?,
                _ => b,
            };
        }
        if let Some(v) = object("clock") {
            let Some(Shared::Clock(clock)) = convert::shared(v) else {
                return Err(js_error(flakeid_js::js_wrong_type(
                    "clock",
                    flakeid_js::JS_CLOCK_WANTS,
                    &flakeid_js::JsArg::Object,
                )));
            };
            b = b.clock(clock);
        }
        b.build().map(|inner| Generator { inner }).map_err(js_error)
    }

    /// The next ID.
    /// Stops issuing IDs now rather than when the generator is garbage-collected
    /// (later calls: `FLAKEID_CONFIG`, field `generator`). Idempotent.
    pub fn close(&self) {
        self.inner.close();
    }

    #[wasm_bindgen(js_name = nextId)]
    pub fn next_id(&self) -> Result<u64, JsValue> {
        self.inner.next_id().map_err(js_error)
    }

    /// `nextId` that never waits: `null` where `nextId` would wait for the clock
    /// (the tick's sequence is used up, or a rollback policy would wait).
    #[wasm_bindgen(js_name = tryNextId, unchecked_return_type = "bigint | null")]
    pub fn try_next_id(&self) -> Result<JsValue, JsValue> {
        Ok(match self.inner.try_next_id().map_err(js_error)? {
            Some(id) => id.into(),
            None => JsValue::NULL,
        })
    }

    /// `n` fresh IDs, increasing.
    #[wasm_bindgen(js_name = nextIds)]
    pub fn next_ids(&self, #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue) -> Result<Vec<u64>, JsValue> {
        let n = flakeid_js::js_batch(&convert::arg(&n)).map_err(js_error)?;
        let mut ids = Vec::new();
        ids.try_reserve_exact(n)
            .map_err(|_| convert::config("n", format!("cannot allocate {n} IDs in wasm memory")))?;
        ids.resize(n, 0);
        self.inner.fill(&mut ids).map_err(js_error)?;
        Ok(ids)
    }

    /// The next ID as a `number`: for layouts of at most 53 bits (`js53`), whose
    /// every ID is exact as a number; others are refused (`FLAKEID_CONFIG`, field
    /// `layout`).
    #[wasm_bindgen(js_name = nextNumber)]
    pub fn next_number(&self) -> Result<f64, JsValue> {
        flakeid_js::js_number_layout(self.inner.layout()).map_err(js_error)?;
        Ok(self.inner.next_id().map_err(js_error)? as f64)
    }

    /// `n` fresh IDs as numbers, increasing (layouts of at most 53 bits).
    #[wasm_bindgen(js_name = nextNumbers)]
    pub fn next_numbers(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue,
    ) -> Result<Vec<f64>, JsValue> {
        flakeid_js::js_number_layout(self.inner.layout()).map_err(js_error)?;
        let ids = self.next_ids(n)?;
        Ok(ids.into_iter().map(|id| id as f64).collect())
    }

    /// What this generator has done since it was built (docs/stats.md): an object
    /// with `idsIssued`, `tickWaits`, `tickWaitUs`, `leadMs`, `clockRollbacks`,
    /// `maxRollbackMs`, `leaseState` and `leaseRemainingMs` (`null`: no lease),
    /// `nodeOrigin`.
    #[wasm_bindgen(unchecked_return_type = "Stats")]
    pub fn stats(&self) -> Object {
        let s = self.inner.stats();
        let o = Object::new();
        let n = |v: u64| JsValue::from_f64(v as f64);
        convert::set(&o, "idsIssued", &n(s.ids_issued));
        convert::set(&o, "tickWaits", &n(s.tick_waits));
        convert::set(&o, "tickWaitUs", &n(s.tick_wait_us));
        convert::set(&o, "leadMs", &n(s.lead_ms));
        convert::set(&o, "clockRollbacks", &n(s.clock_rollbacks));
        convert::set(&o, "maxRollbackMs", &n(s.max_rollback_ms));
        convert::set(
            &o,
            "leaseState",
            &s.lease_state.map_or(JsValue::NULL, JsValue::from_str),
        );
        convert::set(&o, "leaseRemainingMs", &s.lease_remaining_ms.map_or(JsValue::NULL, n));
        convert::set(&o, "nodeOrigin", &JsValue::from_str(s.node_origin.as_str()));
        o
    }

    /// The next ID as 8 big-endian bytes: a `Buffer` where there is one (Node), else a `Uint8Array`.
    #[wasm_bindgen(js_name = nextBuffer, unchecked_return_type = "Uint8Array")]
    pub fn next_buffer(&self) -> Result<Uint8Array, JsValue> {
        let id = self.inner.next_id().map_err(js_error)?;
        Ok(convert::bytes_out(&flakeid_core::to_bytes(id)))
    }

    #[wasm_bindgen(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.layout(),
        }
    }
    #[wasm_bindgen(getter)]
    pub fn overflow(&self) -> String {
        self.inner.overflow().as_str().to_owned()
    }
    #[wasm_bindgen(getter, js_name = clockBackwards)]
    pub fn clock_backwards(&self) -> String {
        self.inner.clock_backwards().as_str().to_owned()
    }
    /// Where the node id came from (`explicit`, `leased`, …), as the native addon's.
    #[wasm_bindgen(getter, js_name = nodeOrigin)]
    pub fn node_origin(&self) -> String {
        self.inner.node_origin().as_str().to_owned()
    }
}

/// A clock that moves only when told to, for deterministic tests:
/// `new Generator({ clock: new ManualClock(startMs, autoAdvanceMs) })`. With
/// `autoAdvanceMs`, each turn of a generator's wait loop advances it by that much.
#[wasm_bindgen]
#[derive(Debug)]
pub struct ManualClock {
    inner: flakeid_core::ManualClock,
}

#[wasm_bindgen]
impl ManualClock {
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = startMs, unchecked_param_type = "number")] start_ms: JsValue,
        #[wasm_bindgen(js_name = autoAdvanceMs, unchecked_optional_param_type = "number")] auto_advance_ms: Option<
            JsValue,
        >,
    ) -> Result<ManualClock, JsValue> {
        let start = convert::uint(&start_ms, "start_ms")?;
        let step = auto_advance_ms.map_or(Ok(0), |v| convert::uint(&v, "auto_advance_ms"))?;
        Ok(ManualClock {
            inner: flakeid_core::ManualClock::new(start).with_auto_advance(step),
        })
    }

    /// The clock's reading, Unix ms.
    #[wasm_bindgen(js_name = nowMs)]
    pub fn now_ms(&self) -> f64 {
        self.inner.get() as f64
    }
    pub fn set(&self, #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue) -> Result<(), JsValue> {
        self.inner.set(convert::uint(&ms, "ms")?);
        Ok(())
    }
    pub fn advance(&self, #[wasm_bindgen(unchecked_param_type = "number")] ms: JsValue) -> Result<(), JsValue> {
        self.inner.advance(convert::uint(&ms, "ms")?);
        Ok(())
    }
    #[wasm_bindgen(getter, js_name = autoAdvanceMs)]
    pub fn auto_advance_ms(&self) -> f64 {
        self.inner.auto_advance_ms() as f64
    }

    /// Lets a `Generator` share this clock (clones share one time).
    #[wasm_bindgen(js_name = __flakeid_share, skip_typescript)]
    pub fn share(&self) {
        convert::share(Shared::Clock(self.inner.clone()));
    }
}

getters! { Generator {
    node / node: f64, datacenter / datacenter: f64, worker / worker: f64,
    max_borrow_ms / maxBorrowMs: f64, max_wait_ms / maxWaitMs: f64,
} }
