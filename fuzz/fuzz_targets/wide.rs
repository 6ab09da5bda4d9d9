//! The 128-bit family's three parsers (UUID, ULID, TypeID) and `Wide::recognize`: a
//! value or a typed `Parse` error (position within the text, a short message), and
//! each form read back is the value written.
#![no_main]
use flakeid_core::{Error, Wide};
use libfuzzer_sys::fuzz_target;

fn parse_error_ok<T>(r: Result<T, Error>, text: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(Error::Parse { position, message }) => {
            assert!(position <= text.chars().count(), "{position} past the text: {message}");
            assert!(message.len() < 400, "a {}-byte message", message.len());
            None
        }
        Err(other) => panic!("a non-parse error: {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(head) = data.get(..16) {
        let u = Wide(u128::from_le_bytes(head.try_into().expect("16 bytes")));
        assert_eq!(Wide::parse_uuid(&u.to_uuid()), Ok(u));
        assert_eq!(Wide::parse_ulid(&u.to_ulid()), Ok(u));
        assert_eq!(
            Wide::parse_typeid(&u.to_typeid("fuzz_me").expect("a valid prefix")),
            Ok(("fuzz_me".into(), u))
        );
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(u) = parse_error_ok(Wide::parse_uuid(text), text) {
        assert_eq!(Wide::parse_uuid(&u.to_uuid()), Ok(u));
    }
    if let Some(u) = parse_error_ok(Wide::parse_ulid(text), text) {
        assert_eq!(Wide::parse_ulid(&u.to_ulid()), Ok(u));
    }
    if let Some((prefix, u)) = parse_error_ok(Wide::parse_typeid(text), text) {
        assert_eq!(u.to_typeid(&prefix).as_deref(), Ok(text), "a TypeID reads one way only");
    }
    // recognize reads the text as given (no trimming), so its positions count it whole.
    if let Some(r) = Wide::recognize(text) {
        parse_error_ok(r, text);
    }
});
