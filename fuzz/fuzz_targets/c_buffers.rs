//! The C ABI's buffer functions with arbitrary lengths, encodings and bytes: a
//! status (never a crash), out-parameters written only on success, and the text a
//! call writes decodes back to the ID.
#![no_main]
use flakeid::{flakeid_decode, flakeid_encode, flakeid_status};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(d) = data.get(..10) else { return };
    let id = u64::from_le_bytes(d[..8].try_into().expect("8 bytes"));
    let encoding = u32::from(d[8] % 6); // 4 and 5 are not encodings
    let len = usize::from(d[9] % 40);
    let mut buf = [0x55u8; 64];
    let mut out_len = usize::MAX;
    // SAFETY: `buf` holds 64 >= len bytes.
    let st = unsafe { flakeid_encode(id, encoding, buf.as_mut_ptr().cast(), len, &mut out_len) };
    match st {
        flakeid_status::FLAKEID_OK => {
            assert!(out_len < len && buf[out_len] == 0);
            let mut back = 0u64;
            // SAFETY: the text is in `buf`.
            let st = unsafe { flakeid_decode(buf.as_ptr().cast(), out_len, encoding, &mut back) };
            assert_eq!((st, back), (flakeid_status::FLAKEID_OK, id));
        }
        flakeid_status::FLAKEID_ERR_BUFFER_TOO_SMALL | flakeid_status::FLAKEID_ERR_CONFIG => {
            assert!(
                buf.iter().all(|&b| b == 0x55) && out_len == usize::MAX,
                "written on failure"
            );
        }
        other => panic!("flakeid_encode: {other:?}"),
    }
    let text = &data[10..];
    let mut out = 7u64;
    // SAFETY: `text` holds `text.len()` bytes.
    let st = unsafe { flakeid_decode(text.as_ptr().cast(), text.len(), encoding, &mut out) };
    match st {
        flakeid_status::FLAKEID_OK => {}
        flakeid_status::FLAKEID_ERR_PARSE | flakeid_status::FLAKEID_ERR_CONFIG => assert_eq!(out, 7),
        other => panic!("flakeid_decode: {other:?}"),
    }
});
