//! tests/vectors/js/refusals.json: the refusals of the JS packages, with the words
//! flakeid-js gives them, generated here and run by `@flakeid/node` on its native
//! addon and on the wasm build (node/test/vectors.test.mjs), so that the two word
//! every refusal the same. `make vectors` (`FLAKEID_REGENERATE_VECTORS=1 cargo test
//! -p flakeid-js --test vectors`) rewrites it.

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "../../flakeid-core/tests/vectors/files.rs"]
mod files;

use flakeid_core::{Error, Layout, Result};
use flakeid_js::{
    JS_CLOCK_WANTS, JsArg, JsOption, js_batch, js_generator_options, js_id_range, js_layout, js_layout_name,
    js_not_bytes, js_options, js_sealer_option, js_string, js_wrong_type,
};
use serde_json::{Value, json};

/// A vector's JS value as the bindings read it: `{"$": "object"}` is a plain `{}`,
/// `{"$": "key"}` a 16-byte `Uint8Array`; other objects are plain objects.
fn arg(v: &Value) -> JsArg {
    match v {
        Value::Null => JsArg::Null,
        Value::Bool(b) => JsArg::Bool(*b),
        Value::Number(n) => JsArg::Number(n.as_f64().unwrap()),
        Value::String(s) => JsArg::String(s.clone()),
        Value::Array(_) => JsArg::Array,
        Value::Object(_) => JsArg::Object,
    }
}

fn members(v: &Value) -> Vec<(String, JsArg)> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, x)| (k.clone(), arg(x)))
        .collect()
}

/// A `layout` as both bindings take it: a preset's name, or a plain object's
/// fields (no `Layout` here).
fn layout(v: &Value) -> Result<Layout> {
    match js_layout_name(&arg(v))? {
        Some(name) => Layout::preset(name),
        None => {
            let m = members(v);
            js_layout(
                &m.iter().map(|(k, x)| (k.as_str(), x.clone())).collect::<Vec<_>>(),
                u64::MAX,
            )
        }
    }
}

/// What flakeid-js makes of `call(args)`: the same steps the two bindings take.
fn outcome(call: &str, args: &[Value]) -> Result<()> {
    let a = |i: usize| args.get(i).map_or(JsArg::Undefined, arg);
    match call {
        "idRange" | "Layout.idRange" => js_id_range(&Layout::SNOWFLAKE, &a(0), &a(1)).map(drop),
        "nextIds" => js_batch(&a(0)).map(drop),
        "Generator" => {
            js_options(&a(0))?;
            let m = members(&args[0]);
            let given = js_generator_options(m.iter().map(|(k, v)| (k.as_str(), v)))?;
            // A plain object where a class is taken (no Layout or ManualClock here): a
            // layout's fields as a layout, anything as a clock refused.
            for (_, o, _) in given.iter().filter(|g| g.2 == JsOption::Object) {
                match o.name {
                    "clock" => return Err(js_wrong_type("clock", JS_CLOCK_WANTS, &JsArg::Object)),
                    _ => layout(&args[0][o.camel_name])?,
                };
            }
            Ok(())
        }
        "Sealer" => {
            if !matches!(args[0], Value::Object(ref o) if o.get("$") == Some(&json!("key"))) {
                return Err(js_not_bytes("key", &a(0)));
            }
            if js_options(&a(1))? {
                for (k, v) in members(&args[1]) {
                    if js_sealer_option(&k, &v)? && k == "tweak" {
                        return Err(js_not_bytes("tweak", &v)); // (no Uint8Array in these vectors)
                    }
                    if k == "layout" {
                        layout(&args[1][k.as_str()])?;
                    }
                }
            }
            Ok(())
        }
        "decompose" => layout(&args[1]).map(drop),
        "fromBytes" => Err(js_not_bytes("bytes", &a(0))),
        "Layout.preset" => js_string("layout", a(0)).map(drop),
        "Layout" => js_options(&a(0)).map(drop),
        other => panic!("no call {other}"),
    }
}

fn refusal(call: &str, args: Value) -> Value {
    let list = args.as_array().unwrap().clone();
    let e: Error = outcome(call, &list)
        .err()
        .unwrap_or_else(|| panic!("{call}{args} is not refused"));
    let d = e.details();
    json!({
        "call": call, "args": args, "error": e.kind().name(), "field": d.field, "message": e.to_string(),
    })
}

fn refusals_json() -> Value {
    let object = json!({"$": "object"});
    let key = json!({"$": "key"});
    let cases = vec![
        refusal("idRange", json!(["a", 1])),
        refusal("idRange", json!([1, "b"])),
        refusal("idRange", json!([-1, 5])),
        refusal("idRange", json!([1_288_834_974_662u64, 1_288_834_974_658u64])),
        refusal("Layout.idRange", json!([1.5, 2])),
        refusal("Layout.idRange", json!([1, null])),
        refusal("nextIds", json!([flakeid_core::MAX_BATCH + 1])),
        refusal("nextIds", json!([-1])),
        refusal("nextIds", json!(["10"])),
        refusal("nextIds", json!([1.5])),
        refusal("Generator", json!([{"clock": object}])),
        refusal("Generator", json!([{"clock": 5}])),
        refusal("Generator", json!([{"clock": null}])),
        refusal("Generator", json!([{"layout": 5}])),
        refusal("Generator", json!([5])),
        refusal("Sealer", json!(["k"])),
        refusal("Sealer", json!([key, "x"])),
        refusal("Sealer", json!([key, {"layout": 5}])),
        refusal("Sealer", json!([key, {"layout": null}])),
        refusal("Sealer", json!([key, {"layout": "nope"}])),
        refusal("Sealer", json!([key, {"tweak": "x"}])),
        refusal("Sealer", json!([key, {"tweak": null}])),
        refusal("Sealer", json!([key, {"tweak": object}])),
        refusal("Sealer", json!([key, {"tweek": 1}])),
        refusal("decompose", json!(["1", 5])),
        // A plain object as a layout is its fields, in both packages.
        refusal("decompose", json!(["1", {"timeBits": 99}])),
        refusal("Generator", json!([{"layout": {"sequenceBits": 30}}])),
        refusal("Sealer", json!([key, {"layout": {"order": "seq|time"}}])),
        refusal("fromBytes", json!(["x"])),
        refusal("Layout.preset", json!([5])),
        refusal("Layout", json!([5])),
        // A preset is Layout.preset's: the constructor takes LayoutOptions only.
        refusal("Layout", json!(["discord"])),
    ];
    json!({
        "_comment": "The refusals of the JS packages (@flakeid/node's native addon and @flakeid/wasm), worded by \
                     flakeid-js. refusals[]: call (a function, a constructor, or Layout.x / nextIds on a default \
                     Layout or Generator), args (JSON values; {\"$\": \"object\"} is a plain {}, {\"$\": \"key\"} a \
                     16-byte Uint8Array) -> error (ErrorKind name), field (null: none) and the whole message. Run \
                     by node/test/vectors.test.mjs on both engines. Generated by crates/flakeid-js/tests/vectors.rs; \
                     regenerate with `make vectors`.",
        "refusals": cases,
    })
}

#[test]
fn vectors_are_fresh() {
    let text = serde_json::to_string_pretty(&refusals_json()).unwrap() + "\n";
    files::check_fresh("flakeid-js", "js/refusals.json", &text);
}
