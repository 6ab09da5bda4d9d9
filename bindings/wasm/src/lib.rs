//! WebAssembly binding for flakeid (wasm-bindgen) — placeholder, filled in by its issue.
