//! Lease URL parsing (no connection is made): a spec or a `Config` error, never a
//! panic; the message is short and never contains the URL's password. Every
//! scheme: `file://` (the core's own parser) and the network schemes
//! (flakeid-lease-net's, installed once).
#![no_main]
use flakeid_core::{Error, LeaseSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    flakeid_lease_net::install();
    match LeaseSpec::parse(text) {
        Ok(spec) => {
            let shown = format!("{spec:?}");
            if let Some(pw) = password(text) {
                assert!(!shown.contains(pw), "{shown} shows the password");
            }
        }
        Err(Error::Config { message, .. }) => {
            assert!(message.len() < 1000, "a {}-byte message", message.len());
            if let Some(pw) = password(text) {
                assert!(!message.contains(pw), "{message} shows the password {pw:?}");
            }
        }
        Err(other) => panic!("parse gave a non-config error: {other:?}"),
    }
});

/// The `password` of `scheme://user:password@host`, if it is long enough that its
/// appearing elsewhere in a message would be no coincidence.
fn password(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let userinfo = rest.split(['/', '?', '#']).next()?.rsplit_once('@')?.0;
    let pw = userinfo.split_once(':')?.1;
    // Only when it occurs once: elsewhere in the text it is not a secret.
    // (ignoring case: messages lower-case the scheme).
    let once = url.to_ascii_lowercase().matches(&pw.to_ascii_lowercase()).count() == 1;
    // A digit and a letter: a real secret, not a word the message itself uses.
    let secretish = pw.bytes().any(|b| b.is_ascii_digit()) && pw.bytes().any(|b| b.is_ascii_alphabetic());
    (pw.len() >= 6 && !pw.contains(['@', ':', '/']) && once && secretish).then_some(pw)
}
