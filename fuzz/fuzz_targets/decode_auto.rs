//! The CLI's auto-detection: whatever it accepts, the named form reads the same ID;
//! every canonical form of an ID reads back as that ID or is refused as ambiguous.
#![no_main]
use flakeid_core::{Encoding, Error, decode, decode_auto, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(head) = data.get(..8) {
        let id = u64::from_le_bytes(head.try_into().expect("8 bytes"));
        for e in Encoding::ALL {
            let text = encode(id, e);
            match decode_auto(&text) {
                Ok((got, _)) => assert_eq!(got, id, "{text} ({e}) misread"),
                Err(Error::Parse { message, .. }) => assert!(message.contains("ambiguous"), "{text}: {message}"),
                Err(other) => panic!("{other:?}"),
            }
        }
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    match decode_auto(text) {
        // A fixed-width form, or (hex only) 0x and 1 to 16 digits: one of them reads it.
        Ok((id, enc)) => {
            let t = text.trim();
            let prefixed = enc == Encoding::Hex
                && (t.starts_with("0x") || t.starts_with("0X"))
                && u64::from_str_radix(&t[2..], 16) == Ok(id);
            assert!(prefixed || decode(t, enc) == Ok(id), "{text:?} read as {id} ({enc})");
        }
        Err(Error::Parse { message, .. }) => assert!(message.len() < 400),
        Err(other) => panic!("decode_auto gave a non-parse error: {other:?}"),
    }
});
