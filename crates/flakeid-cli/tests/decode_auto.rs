//! tests/vectors/decode_auto.json through `flakeid decode TEXT`: the ID it reads
//! (with `--json`), or exit 1 and the core's parse error, which names the ambiguity
//! and asks for `--from` when the text reads as more than one form.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::process::Command;

#[test]
fn decode_runs_every_decode_auto_vector() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/decode_auto.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for c in cases {
        let text = c["text"].as_str().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_flakeid"))
            .args(["decode", "--json", "--", text])
            .output()
            .unwrap();
        let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        match c.get("id") {
            Some(id) => {
                assert!(o.status.success(), "{c}: {err}");
                let parts: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(parts["id"], *id, "{c}: {out}");
            }
            None => {
                assert_eq!(o.status.code(), Some(1), "{c}: {out}{err}");
                assert!(out.is_empty(), "{c}: {out}");
                let pos = c["position"].as_u64().unwrap();
                assert!(err.contains(&format!("position {pos}")) || pos == 0, "{c}: {err}");
                if c["ambiguous"] == true {
                    assert!(err.contains("ambiguous") && err.contains("--from"), "{c}: {err}");
                } else {
                    assert!(!err.contains("ambiguous"), "{c}: {err}");
                }
            }
        }
    }
}
