//! One cfg for "this build owns a host guard": the `std` feature on a Unix or Windows
//! target, not under the loom model checker (whose model has no files). Written once here, instead of
//! `all(any(unix, windows), not(loom))` at every place that keeps the guard.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(host_guard)");
    println!("cargo::rerun-if-changed=build.rs");
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let os_with_files = family.split(',').any(|f| f == "unix" || f == "windows");
    let std = std::env::var_os("CARGO_FEATURE_STD").is_some();
    if std && os_with_files && std::env::var_os("CARGO_CFG_LOOM").is_none() {
        println!("cargo::rustc-cfg=host_guard");
    }
}
