//! The 128-bit family's three parsers (UUID, ULID, TypeID) and `decode_wide`: a
//! value or a typed `Parse` error (position within the text, a short message), and
//! each form read back is the value written.
#![no_main]
use flakeid_core::{Error, decode_wide, format_typeid, format_ulid, format_uuid, parse_typeid, parse_ulid, parse_uuid};
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
        let u = u128::from_le_bytes(head.try_into().expect("16 bytes"));
        assert_eq!(parse_uuid(&format_uuid(u)), Ok(u));
        assert_eq!(parse_ulid(&format_ulid(u)), Ok(u));
        assert_eq!(
            parse_typeid(&format_typeid("fuzz_me", u).expect("a valid prefix")),
            Ok(("fuzz_me".into(), u))
        );
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(u) = parse_error_ok(parse_uuid(text), text) {
        assert_eq!(parse_uuid(&format_uuid(u)), Ok(u));
    }
    if let Some(u) = parse_error_ok(parse_ulid(text), text) {
        assert_eq!(parse_ulid(&format_ulid(u)), Ok(u));
    }
    if let Some((prefix, u)) = parse_error_ok(parse_typeid(text), text) {
        assert_eq!(
            format_typeid(&prefix, u).as_deref(),
            Ok(text),
            "a TypeID reads one way only"
        );
    }
    if let Some(r) = decode_wide(text) {
        parse_error_ok(r, text.trim());
    }
});
