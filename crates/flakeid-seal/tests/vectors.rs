//! tests/vectors/seal.json: generated here, checked here, and run by every binding.
//!
//! `make vectors` (`FLAKEID_REGENERATE_VECTORS=1 cargo test -p flakeid-seal --test
//! vectors`) rewrites it. The expected values come from `support::seal_reference`
//! (the construction read literally, one numeral per bit, through fpe's
//! `FlexibleNumeralString`), not from `Sealer`; `sealer_matches_the_vectors` then
//! runs `Sealer` on them.

#![allow(clippy::unwrap_used)]

#[path = "../../flakeid-core/tests/vectors/files.rs"]
mod files;
mod support;

use flakeid_core::{Error, Layout};
use flakeid_seal::Sealer;
use serde_json::{Value, json};
use support::{hex, seal_reference, unhex, unseal_reference};

/// A layout spec of the vectors (all of them valid here).
fn layout_of(v: &Value) -> Layout {
    files::layout_of(v).unwrap()
}

// ---------------------------------------------------------------- the inputs

/// NIST's FF1 sample keys (SP 800-38G samples 1-9), one per AES key size.
const KEYS: [&str; 3] = [
    "2b7e151628aed2a6abf7158809cf4f3c",
    "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f",
    "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94",
];

/// Empty (the default); short; and 17 bytes, which moves FF1's Q over a block edge.
const TWEAKS: [&[u8]; 3] = [b"", b"orders", b"tenant-42/invoice"];

/// Seed 001's ID (snowflake: 1505914988849, dc 17, worker 25, seq 0).
const SEED_001: u64 = 910499571847892992;

fn custom(time_bits: u32) -> Value {
    json!({
        "time_bits": time_bits, "datacenter_bits": 0, "worker_bits": 4, "sequence_bits": 8,
        "tick_ms": 1, "epoch_ms": 1288834974657u64, "order": "time|node|seq",
    })
}

fn layouts() -> Vec<Value> {
    vec![
        json!("snowflake"),
        json!("discord"),
        json!("sonyflake"),
        custom(8), // 20 bits: the smallest FF1 allows
        custom(9), // 21 bits: odd, so FF1's halves differ (10 and 11)
    ]
}

/// Edge IDs, seed 001 where it fits, and a few ordinary values spread over the range.
fn ids(n: u32) -> Vec<u64> {
    let max = u64::MAX >> (64 - n);
    let mut ids = vec![0, 1, max, (max >> 1) + 1];
    if SEED_001 <= max {
        ids.push(SEED_001);
    }
    // Fixed "random" IDs: splitmix64 from a constant seed, cut to n bits.
    let mut state = 0x5eed_0026u64;
    for _ in 0..2 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ids.push((z ^ (z >> 31)) & max);
    }
    ids
}

fn s(id: u64) -> Value {
    json!(id.to_string())
}

// ---------------------------------------------------------------- generation

fn seal_json() -> Value {
    let mut groups = Vec::new();
    for layout in layouts() {
        let n = layout_of(&layout).total_bits();
        for key in KEYS {
            for tweak in TWEAKS {
                let key_bytes = unhex(key);
                let cases: Vec<Value> = ids(n)
                    .into_iter()
                    .map(|id| {
                        let sealed = seal_reference(&key_bytes, tweak, n, id);
                        assert_eq!(unseal_reference(&key_bytes, tweak, n, sealed), id);
                        json!({"id": s(id), "sealed": s(sealed)})
                    })
                    .collect();
                groups.push(json!({
                    "layout": layout, "bits": n, "key": key, "tweak": hex(tweak), "cases": cases,
                }));
            }
        }
    }
    let key16 = KEYS[0];
    let invalid = vec![
        json!({"op": "new", "layout": "snowflake", "key": "", "error": "config", "field": "key"}),
        json!({"op": "new", "layout": "snowflake", "key": &key16[..30], "error": "config", "field": "key"}),
        json!({"op": "new", "layout": "snowflake", "key": format!("{key16}00"), "error": "config", "field": "key"}),
        json!({"op": "new", "layout": "snowflake", "key": format!("{}00", KEYS[2]), "error": "config", "field": "key"}),
        json!({"op": "new", "layout": custom(7), "key": key16, "error": "config", "field": "layout"}),
        json!({"op": "seal", "layout": "snowflake", "key": key16, "id": s(1 << 63), "error": "config", "field": "id"}),
        json!({"op": "unseal", "layout": "snowflake", "key": key16, "id": s(u64::MAX), "error": "config", "field": "id"}),
        json!({"op": "seal", "layout": custom(9), "key": key16, "id": s(1 << 21), "error": "config", "field": "id"}),
        json!({"op": "unseal", "layout": custom(9), "key": key16, "id": s(1 << 21), "error": "config", "field": "id"}),
    ];
    json!({
        "_comment": "Sealed IDs (docs/sealing.md): sealed = NUM_2(FF1-AES.Encrypt(key, tweak, the id's n bits most significant first)), NIST SP 800-38G, radix 2, n = bits = the layout's total bits; unseal is the inverse. groups[]: one layout, key and tweak (hex; \"\" = none) with cases[] {id, sealed}: seal(id) == sealed and unseal(sealed) == id. Keys: NIST's FF1 sample keys for AES-128, -192 and -256. Tweaks: none, 6 bytes, 17 bytes. Layouts: snowflake (63 bits), discord (64), sonyflake, and custom 20- and 21-bit ones. IDs: 0, 1, 2^n-1, 2^(n-1), seed 001's ID where it fits, two fixed pseudo-random ones. invalid[]: op new (the constructor), seal or unseal must fail with a config error naming field (key: not 16/24/32 bytes; layout: under 20 bits; id: not in [0, 2^n)). Generated by crates/flakeid-seal/tests/vectors.rs from fpe's FlexibleNumeralString; regenerate with `make vectors`.",
        "groups": groups,
        "invalid": invalid,
    })
}

#[test]
fn vectors_are_fresh() {
    let text = serde_json::to_string_pretty(&seal_json()).unwrap() + "\n";
    files::check_fresh("flakeid-seal", "seal.json", &text);
}

// ---------------------------------------------------------------- running them

fn id_of(v: &Value) -> u64 {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn sealer_matches_the_vectors() {
    let v = files::load("seal.json");
    let mut checked = 0;
    for group in v["groups"].as_array().unwrap() {
        let layout: Layout = layout_of(&group["layout"]);
        assert_eq!(u64::from(layout.total_bits()), group["bits"].as_u64().unwrap());
        let sealer = Sealer::new(&unhex(group["key"].as_str().unwrap()), &layout)
            .unwrap()
            .tweak(unhex(group["tweak"].as_str().unwrap()));
        for case in group["cases"].as_array().unwrap() {
            let (id, sealed) = (id_of(&case["id"]), id_of(&case["sealed"]));
            assert_eq!(sealer.seal(id).unwrap(), sealed, "seal {case} in {group}");
            assert_eq!(sealer.unseal(sealed).unwrap(), id, "unseal {case}");
            checked += 1;
        }
    }
    assert!(checked > 250, "only {checked} cases");
}

#[test]
fn invalid_vectors_are_refused() {
    let v = files::load("seal.json");
    for c in v["invalid"].as_array().unwrap() {
        let built = Sealer::new(&unhex(c["key"].as_str().unwrap()), &layout_of(&c["layout"]));
        let result = match c["op"].as_str().unwrap() {
            "new" => built.map(|_| 0),
            "seal" => built.unwrap().seal(id_of(&c["id"])),
            "unseal" => built.unwrap().unseal(id_of(&c["id"])),
            op => panic!("unknown op {op}"),
        };
        match result {
            Err(Error::Config { field, .. }) => assert_eq!(field, c["field"].as_str().unwrap(), "{c}"),
            other => panic!("{c}: expected a config error, got {other:?}"),
        }
    }
}
