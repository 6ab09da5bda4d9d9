//! Node binding for flakeid (napi-rs) — placeholder, filled in by its issue.
