//! `Sealer`: the core's `flakeid_seal::Sealer` (docs/sealing.md), as a JS class with
//! `@flakeid/node`'s API.

use crate::convert::{self, js_error};
use crate::layout::layout_from_js;
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

#[wasm_bindgen(typescript_custom_section)]
const TS_SEALER: &str = r#"
export interface SealerOptions {
  /** The layout whose IDs are sealed (default "snowflake"). */
  layout?: LayoutLike;
  /** FF1's tweak (default empty): one key seals different tables differently. Not secret. */
  tweak?: Uint8Array;
}
"#;

/// Seals IDs: a keyed, reversible permutation of a layout's IDs (FF1 with AES), so
/// that public IDs stop telling when, where and how busily they were made. `free()`
/// wipes the key from wasm memory.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Sealer {
    inner: flakeid_seal::Sealer,
}

/// A `Uint8Array` argument, copied into memory that is wiped when dropped.
fn bytes_in(value: &JsValue, field: &'static str) -> Result<Zeroizing<Vec<u8>>, JsValue> {
    convert::bytes_in(value, field).map(Zeroizing::new)
}

#[wasm_bindgen]
impl Sealer {
    /// A sealer with `key` (16, 24 or 32 bytes: AES-128, -192, -256). A key of
    /// another length, or a layout of fewer than 20 bits, is `FLAKEID_CONFIG` naming
    /// `key` or `layout`; no message contains the key.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array")] key: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "SealerOptions")] options: Option<JsValue>,
    ) -> Result<Sealer, JsValue> {
        let key = bytes_in(&key, "key")?;
        let options = options.unwrap_or_default();
        convert::option_keys(&options, &flakeid_js::JS_SEALER_OPTIONS)?;
        // Each member by flakeid-js's rule (`js_sealer_option`, as in @flakeid/node);
        // the layout is unwrapped and the tweak's bytes read here.
        let given = |key| -> Result<Option<JsValue>, JsValue> {
            let v = convert::member(&options, key)?;
            let given = flakeid_js::js_sealer_option(key, &convert::arg(&v)).map_err(js_error)?;
            Ok(given.then_some(v))
        };
        let layout = layout_from_js(&given("layout")?.unwrap_or_default())?;
        let tweak = given("tweak")?.map(|t| bytes_in(&t, "tweak")).transpose()?;
        let inner = flakeid_seal::Sealer::new(&key, &layout).map_err(js_error)?;
        Ok(Sealer {
            inner: match tweak {
                Some(t) => inner.tweak(&*t),
                None => inner,
            },
        })
    }

    /// The sealed form of `id`, a `bigint` in `0n..2n ** BigInt(bits)` like `id`.
    pub fn seal(
        &self,
        #[wasm_bindgen(unchecked_param_type = "bigint | string | number")] id: JsValue,
    ) -> Result<u64, JsValue> {
        let numbers = flakeid_js::JsNumberIds::for_bits(self.inner.bits());
        self.inner.seal(convert::id_as(&id, "id", numbers)?).map_err(js_error)
    }

    /// The ID that `seal` turned into `id`. Every number in range unseals to some ID:
    /// sealing does not authenticate.
    pub fn unseal(
        &self,
        #[wasm_bindgen(unchecked_param_type = "bigint | string | number")] id: JsValue,
    ) -> Result<u64, JsValue> {
        let numbers = flakeid_js::JsNumberIds::for_bits(self.inner.bits());
        self.inner.unseal(convert::id_as(&id, "id", numbers)?).map_err(js_error)
    }

    /// The width of the IDs it takes and gives (the layout's total bits).
    #[wasm_bindgen(getter)]
    pub fn bits(&self) -> u32 {
        self.inner.bits()
    }

    /// The largest ID it takes and gives, `2^bits - 1`.
    #[wasm_bindgen(getter, js_name = maxId)]
    pub fn max_id(&self) -> u64 {
        self.inner.max_id()
    }
}
