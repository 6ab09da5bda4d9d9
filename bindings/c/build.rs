//! The shared library's soname is `libflakeid.so.0` (the ABI's major version), so
//! programs record the ABI they were linked against; `make install` and the C SDK
//! tarball put a `libflakeid.so.0` link beside `libflakeid.so`.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libflakeid.so.0");
    }
}
