//! Text decoding in every encoding: a value or a typed `Parse` error (position a
//! character index within the text, a short message), and decode(encode(x)) == x.
#![no_main]
use flakeid_core::{Encoding, Error, decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(head) = data.get(..8) {
        let id = u64::from_le_bytes(head.try_into().expect("8 bytes"));
        for e in Encoding::ALL {
            assert_eq!(decode(&encode(id, e), e), Ok(id), "{e}");
        }
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    for e in Encoding::ALL {
        match decode(text, e) {
            Ok(id) => assert_eq!(decode(&encode(id, e), e), Ok(id)),
            Err(Error::Parse { position, message }) => {
                assert!(position <= text.chars().count(), "{position} past the text: {message}");
                assert!(message.len() < 400, "a {}-byte message", message.len());
            }
            Err(other) => panic!("decode({e}) gave a non-parse error: {other:?}"),
        }
    }
});
