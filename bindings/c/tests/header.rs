//! `include/flakeid.h` is generated from this crate and committed; this test fails
//! when it is stale (BLAKE3-style: regenerate, never edit by hand).

use std::path::PathBuf;

#[test]
fn committed_header_is_fresh() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let committed = crate_dir.join("../../include/flakeid.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut fresh = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("UTF-8 header");
    if std::env::var_os("FLAKEID_REGENERATE_HEADER").is_some() {
        std::fs::create_dir_all(committed.parent().expect("include/")).expect("mkdir include");
        std::fs::write(&committed, &fresh).expect("write include/flakeid.h");
        return;
    }
    let old = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        old == fresh,
        "include/flakeid.h is stale: regenerate with `make header-c` \
         (FLAKEID_REGENERATE_HEADER=1 cargo test -p flakeid-c --test header)"
    );
}
