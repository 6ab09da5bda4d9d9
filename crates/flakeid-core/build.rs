//! One cfg for "this build owns a host guard": the `std` feature on a Unix or Windows
//! target, not under the loom model checker (whose model has no files). Written once here, instead of
//! `all(any(unix, windows), not(loom))` at every place that keeps the guard.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(host_guard)");
    println!("cargo::rustc-check-cfg=cfg(generator)");
    println!("cargo::rerun-if-changed=build.rs");
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let os_with_files = family.split(',').any(|f| f == "unix" || f == "windows");
    let std = std::env::var_os("CARGO_FEATURE_STD").is_some();
    // The generators: with std, or without it where the target has 64-bit atomics
    // or the `portable-atomic` feature brings them (a no_std generator reads a clock
    // the caller gives it).
    let atomics = std::env::var("CARGO_CFG_TARGET_HAS_ATOMIC").unwrap_or_default();
    let portable = std::env::var_os("CARGO_FEATURE_PORTABLE_ATOMIC").is_some();
    if std || portable || atomics.split(',').any(|w| w == "64") {
        println!("cargo::rustc-cfg=generator");
    }
    if std && os_with_files && std::env::var_os("CARGO_CFG_LOOM").is_none() {
        println!("cargo::rustc-cfg=host_guard");
    }
}
