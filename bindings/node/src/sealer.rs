//! `Sealer`: the core's `flakeid_seal::Sealer` (docs/sealing.md), converted.

use crate::layout::Layout;
use crate::{IdArg, LayoutValue, OrThrow, arg, bytes_in, fc, id_of, js, keys, layout_in, options_object};
use napi::Env;
use napi::bindgen_prelude::{ClassInstance, Either, FromNapiValue, JsObjectValue, JsValue, Uint8Array, Unknown};
use napi_derive::napi;

/// Options of `new Sealer(key, ...)`.
#[napi(object, object_to_js = false)]
// The shape for index.d.ts (it holds JS handles: no Debug); the constructor reads
// the object member by member (options_in).
#[allow(missing_debug_implementations, dead_code)]
pub struct SealerOptions<'a> {
    /// A `Layout`, a preset name (default `'snowflake'`) or a `LayoutOptions` object:
    /// IDs of its width are sealed.
    #[napi(ts_type = "Layout | string | LayoutOptions")]
    pub layout: Option<Either<String, ClassInstance<'a, Layout>>>,
    /// FF1's tweak (default empty): one key seals different tables differently. Not secret.
    pub tweak: Option<Uint8Array>,
}

/// Seals IDs: a keyed, reversible permutation of a layout's IDs (FF1 with AES), so
/// that public IDs stop telling when, where and how busily they were made. The key
/// is wiped from memory when the sealer is garbage-collected; nothing shows it.
#[napi]
pub struct Sealer {
    inner: flakeid_seal::Sealer,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

/// The options argument: absent/`undefined`, or an object whose members are
/// checked by flakeid-js's rule (`js_sealer_option`, as in `@flakeid/wasm`); then
/// the tweak's bytes are read and the layout unwrapped here.
fn options_in(env: &Env, value: Option<Unknown<'_>>) -> napi::Result<(fc::Layout, Option<Uint8Array>)> {
    let (mut layout, mut tweak) = (fc::Layout::SNOWFLAKE, None);
    let Some(obj) = options_object(env, value)? else {
        return Ok((layout, tweak));
    };
    for key in keys(&obj)? {
        let v = obj.get_named_property::<Unknown>(&key)?;
        if !js::js_sealer_option(&key, &arg(&v)?).or_throw(env)? {
            continue;
        }
        if key == "tweak" {
            tweak = Some(bytes_in(env, v, "tweak")?);
        } else {
            // SAFETY: a live value of this call's env.
            layout = layout_in(Some(unsafe { LayoutValue::from_napi_value(env.raw(), v.raw()) }?)).or_throw(env)?;
        }
    }
    Ok((layout, tweak))
}

#[napi]
impl Sealer {
    /// A sealer with `key` (16, 24 or 32 bytes: AES-128, -192, -256). A key of
    /// another length, or a layout of fewer than 20 bits, is `FLAKEID_CONFIG` naming
    /// `key` or `layout`; no message contains the key.
    #[napi(constructor, ts_args_type = "key: Uint8Array, options?: SealerOptions")]
    pub fn new(env: &Env, key: Unknown<'_>, options: Option<Unknown<'_>>) -> napi::Result<Self> {
        let key = bytes_in(env, key, "key")?;
        let (layout, tweak) = options_in(env, options)?;
        let inner = flakeid_seal::Sealer::new(&key, &layout).or_throw(env)?;
        Ok(Sealer {
            inner: match tweak {
                Some(t) => inner.tweak(&*t),
                None => inner,
            },
        })
    }

    /// The sealed form of `id`, a `bigint` in `0n..2n ** BigInt(bits)` like `id`.
    #[napi(ts_args_type = "id: bigint | string | number")]
    pub fn seal(&self, env: &Env, id: IdArg) -> napi::Result<u64> {
        self.inner
            .seal(id_of(id, js::JsNumberIds::for_bits(self.inner.bits())).or_throw(env)?)
            .or_throw(env)
    }

    /// The ID that `seal` turned into `id`. Every number in range unseals to some ID:
    /// sealing does not authenticate.
    #[napi(ts_args_type = "id: bigint | string | number")]
    pub fn unseal(&self, env: &Env, id: IdArg) -> napi::Result<u64> {
        self.inner
            .unseal(id_of(id, js::JsNumberIds::for_bits(self.inner.bits())).or_throw(env)?)
            .or_throw(env)
    }

    /// The width of the IDs it takes and gives (the layout's total bits).
    #[napi(getter)]
    pub fn bits(&self) -> u32 {
        self.inner.bits()
    }

    /// The largest ID it takes and gives, `2^bits - 1`.
    #[napi(getter)]
    pub fn max_id(&self) -> u64 {
        self.inner.max_id()
    }
}
