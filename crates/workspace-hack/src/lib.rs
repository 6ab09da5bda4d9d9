//! Empty on purpose: see this crate's `Cargo.toml`.
#![no_std]
