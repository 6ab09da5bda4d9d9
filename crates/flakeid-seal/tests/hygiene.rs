//! Key hygiene and the error table: a key never shows in an error or in `Debug`,
//! and each refusal is a config error naming its field and what it accepts.

#![allow(clippy::unwrap_used)]

mod support;

use flakeid_core::{Error, ErrorKind, Layout};
use flakeid_seal::{KEY_LENGTHS, MIN_BITS, Sealer};
use support::{hex, small_layout};

/// A key whose bytes are easy to spot in any rendering: hex, decimal, or as bytes.
fn marked_key(len: usize) -> Vec<u8> {
    (0..len).map(|i| 0xa0 + i as u8 % 16).collect()
}

fn renderings(key: &[u8]) -> Vec<String> {
    vec![
        hex(key),
        hex(key).to_uppercase(),
        format!("{key:?}"),
        format!("{:?}", &key[..4]),
        String::from_utf8_lossy(key).into_owned(),
    ]
}

fn assert_hidden(text: &str, key: &[u8]) {
    for r in renderings(key) {
        assert!(!text.contains(&r), "{text:?} shows the key as {r:?}");
    }
}

fn config_error(e: Error) -> (&'static str, String) {
    assert_eq!(e.kind(), ErrorKind::Config);
    let shown = format!("{e} {e:?}");
    match e {
        Error::Config { field, .. } => (field, shown),
        other => panic!("{other:?}"),
    }
}

#[test]
fn debug_never_shows_the_key() {
    for len in KEY_LENGTHS {
        let key = marked_key(len);
        let sealer = Sealer::new(&key, &Layout::SNOWFLAKE).unwrap().tweak(b"secret-ish");
        for text in [format!("{sealer:?}"), format!("{sealer:#?}")] {
            assert_hidden(&text, &key);
            assert!(!text.contains("secret-ish"), "{text}");
            assert!(
                text.contains("bits: 63") && text.contains(&format!("aes_bits: {}", len * 8)),
                "{text}"
            );
        }
    }
}

#[test]
fn a_wrong_key_length_names_key_and_the_accepted_lengths() {
    for len in [0, 1, 15, 17, 23, 25, 31, 33, 64] {
        let key = marked_key(len);
        let (field, shown) = config_error(Sealer::new(&key, &Layout::SNOWFLAKE).unwrap_err());
        assert_eq!(field, "key");
        assert!(
            shown.contains("16, 24 or 32 bytes") && shown.contains(&format!("got {len} bytes")),
            "{shown}"
        );
        if len >= 4 {
            assert_hidden(&shown, &key);
        }
    }
}

#[test]
fn a_bad_hex_key_names_key_without_its_digits() {
    let good = hex(&marked_key(32));
    let cases = [
        format!("{}zz", &good[..62]),    // not hex
        good[..63].to_string(),          // odd
        good[..40].to_string(),          // 20 bytes
        format!("{good}{}", &good[..2]), // 33 bytes
    ];
    for text in cases {
        let (field, shown) = config_error(Sealer::from_hex_key(&text, &Layout::SNOWFLAKE).unwrap_err());
        assert_eq!(field, "key");
        assert!(!shown.contains(&text[..8]), "{shown}");
    }
    let spaced = format!("  {}\n{}\n", &good[..32], &good[32..]);
    let a = Sealer::from_hex_key(&spaced, &Layout::SNOWFLAKE).unwrap();
    let b = Sealer::new(&marked_key(32), &Layout::SNOWFLAKE).unwrap();
    assert_eq!(a.seal(12345).unwrap(), b.seal(12345).unwrap());
    assert_eq!(
        Sealer::from_hex_key(&good.to_uppercase(), &Layout::SNOWFLAKE)
            .unwrap()
            .seal(1)
            .unwrap(),
        b.seal(1).unwrap()
    );
}

#[test]
fn an_id_out_of_range_names_id_and_the_range() {
    let key = marked_key(16);
    let sealer = Sealer::new(&key, &Layout::SNOWFLAKE).unwrap();
    for e in [sealer.seal(1 << 63).unwrap_err(), sealer.unseal(u64::MAX).unwrap_err()] {
        let (field, shown) = config_error(e);
        assert_eq!(field, "id");
        assert!(shown.contains("0..=9223372036854775807"), "{shown}");
        assert_hidden(&shown, &key);
    }
}

#[test]
fn a_layout_under_20_bits_names_layout() {
    let small = small_layout(7); // 19 bits
    let (field, shown) = config_error(Sealer::new(&marked_key(16), &small).unwrap_err());
    assert_eq!(field, "layout");
    assert!(
        shown.contains(&format!("at least {MIN_BITS} bits")) && shown.contains("got 19"),
        "{shown}"
    );
    assert!(Sealer::new(&marked_key(16), &small_layout(8)).is_ok());
}

#[test]
fn a_sealer_is_send_sync_clone_and_its_clones_agree() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Sealer>();
    let a = Sealer::new(&marked_key(24), &Layout::DISCORD).unwrap().tweak(b"t");
    let b = a.clone();
    let c = a.clone().tweak(b"other");
    assert_eq!(a.seal(77).unwrap(), b.seal(77).unwrap());
    assert_ne!(
        a.seal(77).unwrap(),
        c.seal(77).unwrap(),
        "the tweak changes the permutation"
    );
}
