//! The vector files' side of every Rust test that generates or reads
//! `tests/vectors/`: where they are, reading one, the freshness check that `make
//! vectors` turns into a rewrite, and a layout spec as tests/vectors/README.md
//! defines it. flakeid-core's tests/vectors.rs includes this file, and so do
//! flakeid-seal's and flakeid-js's (`#[path]`), so every generator checks its file
//! the same way.
#![allow(dead_code)]

use flakeid_core::{Error, Layout, Order};
use serde_json::Value;
use std::path::PathBuf;

/// `tests/vectors/` (each crate that includes this file is at `crates/<name>/`).
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors")
}

/// `tests/vectors/<name>`, parsed.
pub fn load(name: &str) -> Value {
    let path = dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; regenerate with `make vectors`", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Fails unless `tests/vectors/<name>` holds `text`; with `FLAKEID_REGENERATE_VECTORS`
/// set (`make vectors`), writes it there instead. `krate` is the package whose
/// `vectors` test generates the file.
pub fn check_fresh(krate: &str, name: &str, text: &str) {
    let path = dir().join(name);
    if std::env::var_os("FLAKEID_REGENERATE_VECTORS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "tests/vectors/{name} is stale: regenerate with `make vectors` (FLAKEID_REGENERATE_VECTORS=1 cargo test -p {krate} --test vectors)"
    );
}

/// A layout spec: a preset name or an object of the layout's fields.
pub fn layout_of(v: &Value) -> Result<Layout, Error> {
    if let Some(name) = v.as_str() {
        return Layout::preset(name);
    }
    let n = |k: &str| v[k].as_u64().unwrap();
    Layout::builder()
        .time_bits(n("time_bits") as u32)
        .datacenter_bits(n("datacenter_bits") as u32)
        .worker_bits(n("worker_bits") as u32)
        .sequence_bits(n("sequence_bits") as u32)
        .tick_ms(n("tick_ms"))
        .epoch_ms(n("epoch_ms"))
        .order(v["order"].as_str().unwrap().parse::<Order>()?)
        .build()
}
