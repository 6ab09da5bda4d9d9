//! Bad input gets a typed error naming the field and its range: the
//! rules every binding shares live here, in the core.

#![allow(clippy::unwrap_used)]

use flakeid_core::{
    Encoding, Error, Generator, Layout, MAX_BATCH, MAX_UUID7_BATCH, ManualClock, NodeSource, check_batch,
    check_uuid7_batch, decode, decode_auto, encode,
};

fn config_field(e: Error) -> &'static str {
    match e {
        Error::Config { field, .. } => field,
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn batch_sizes_are_one_rule() {
    let g = Generator::builder(Layout::SNOWFLAKE).build().unwrap();
    let e = g.next_ids(MAX_BATCH + 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: n must be in 0..=134217728, got 134217729"
    );
    // What Python passed through pyo3 (10**12, 2**63) or as a negative int.
    for n in [1_000_000_000_000i128, 1 << 63, -1, i128::from(u64::MAX) + 1] {
        assert_eq!(config_field(check_batch(n).unwrap_err()), "n", "{n}");
    }
    assert_eq!(check_batch(0).unwrap(), 0);
    assert_eq!(g.next_ids(0).unwrap(), Vec::<u64>::new());
}

/// A batch of UUIDv7 objects or text has its own, lower limit (what a runtime makes
/// one object per ID for), named with its form in the error.
#[test]
fn uuid7_object_batches_have_their_own_limit() {
    assert_eq!(check_uuid7_batch(MAX_UUID7_BATCH as i128).unwrap(), 1 << 20);
    assert_eq!(check_uuid7_batch(0).unwrap(), 0);
    let e = check_uuid7_batch(1 << 27).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: n must be in 0..=1048576 for a batch of UUIDv7 objects or text \
         (one object per ID); call again for more, got 134217728"
    );
    for n in [MAX_UUID7_BATCH as i128 + 1, -1, 1 << 63, i128::from(u64::MAX) + 1] {
        assert_eq!(config_field(check_uuid7_batch(n).unwrap_err()), "n", "{n}");
    }
}

#[test]
fn auto_detection_never_misreads_an_id() {
    // instagram's time field sits low enough that many hex encodings are digits
    // only, and IDs near an epoch are short decimals: every text form of every ID
    // reads back as that ID or as an error that asks which form was meant.
    let clock = ManualClock::new(Layout::INSTAGRAM.epoch_ms() + 1);
    let g = Generator::builder(Layout::INSTAGRAM)
        .node(0)
        .clock(clock.clone())
        .build()
        .unwrap();
    let (mut asked, mut digit_forms) = (0, 0);
    for i in 0..4000u64 {
        // From the epoch's first seconds (short decimals) to decades on.
        clock.set(Layout::INSTAGRAM.epoch_ms() + 1 + i * i * 97_919);
        let id = g.next_id().unwrap();
        let mut texts: Vec<(String, Encoding)> = [Encoding::Hex, Encoding::Base32, Encoding::Base62]
            .iter()
            .map(|&e| (encode(id, e), e))
            .collect();
        texts.push((id.to_string(), Encoding::Decimal));
        for (text, enc) in texts {
            digit_forms += usize::from(enc != Encoding::Decimal && text.bytes().all(|b| b.is_ascii_digit()));
            match decode_auto(&text) {
                Ok(got) => assert_eq!(got, (id, enc), "{text} was misread"),
                Err(Error::Parse { message, .. }) => {
                    assert!(message.contains("ambiguous"), "{text}: {message}");
                    asked += 1;
                    assert_eq!(decode(&text, enc).unwrap(), id, "the named form reads it");
                }
                Err(e) => panic!("{text}: {e}"),
            }
        }
    }
    assert!(
        digit_forms > 0 && asked > 0,
        "the sample must contain the ambiguous case"
    );
    // Zero-padded digits always ask: hex, or a zero-padded decimal?
    for text in ["0000006000000000", "0000000000000042", "042", "00000000000000000042"] {
        let e = decode_auto(text).unwrap_err().to_string();
        assert!(e.contains("ambiguous") && e.contains("from"), "{text}: {e}");
    }
    assert_eq!(decode("0000006000000000", Encoding::Hex).unwrap(), 0x6000000000);
    assert_eq!(decode_auto("0").unwrap(), (0, Encoding::Decimal));
    assert_eq!(decode_auto("0x1f").unwrap(), (31, Encoding::Hex));
    assert_eq!(
        decode_auto("910499571847892992").unwrap(),
        (910499571847892992, Encoding::Decimal)
    );
    assert!(matches!(decode_auto("0x"), Err(Error::Parse { .. })));
    assert!(matches!(decode_auto("0x12g"), Err(Error::Parse { .. })));
    // A base62 ID that begins 0X, hex that is all digits: asked, not guessed.
    assert!(decode_auto("0X2yHLOz5Rg").is_ok_and(|(_, e)| e == Encoding::Base62));
    assert!(
        decode_auto("1234567890123456")
            .unwrap_err()
            .to_string()
            .contains("ambiguous")
    );
    assert!(matches!(decode_auto("zz"), Err(Error::Parse { position: 0, .. })));
}

#[test]
fn parse_positions_are_characters_and_messages_stay_short() {
    // 'é' is two bytes: the bad '!' is character 3, byte 5.
    match decode("éé1!", Encoding::Decimal) {
        Err(Error::Parse { position, .. }) => assert_eq!(position, 0),
        other => panic!("{other:?}"),
    }
    match decode("12é4", Encoding::Decimal) {
        Err(Error::Parse { position, message }) => {
            assert_eq!(position, 2);
            assert!(message.contains("position 2"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    match decode("0123456789ä", Encoding::Base62) {
        Err(Error::Parse { position, .. }) => assert_eq!(position, 10),
        other => panic!("{other:?}"),
    }
    let huge = "x".repeat(3_000_000);
    for e in [
        decode(&huge, Encoding::Decimal),
        decode(&huge, Encoding::Hex),
        decode_auto(&huge).map(|v| v.0),
    ] {
        let msg = e.unwrap_err().to_string();
        assert!(msg.len() < 300, "a 3 MB input gave a {}-byte message", msg.len());
        assert!(
            msg.contains("3000000 characters") || msg.contains("got 3000000"),
            "{msg}"
        );
    }
}

#[test]
fn an_environment_variables_value_is_never_shown() {
    // SAFETY (edition 2024 env API): only this test reads this variable.
    unsafe { std::env::set_var("FLAKEID_TEST_SECRETISH", "hunter2-not-a-node") };
    let e = "env:FLAKEID_TEST_SECRETISH"
        .parse::<NodeSource>()
        .unwrap()
        .resolve(&Layout::SNOWFLAKE)
        .unwrap_err();
    let msg = e.to_string();
    assert!(!msg.contains("hunter2"), "{msg}");
    assert!(msg.contains("FLAKEID_TEST_SECRETISH"), "{msg}");
}

#[test]
fn layouts_must_end_by_year_9999_and_name_the_right_field() {
    let e = Layout::builder().tick_ms(86_400_000).time_bits(41).build().unwrap_err();
    assert_eq!(config_field(e.clone()), "time_bits");
    assert!(e.to_string().contains("9999"), "{e}");
    // The largest split that still fits is accepted and its end is representable.
    let ok = Layout::builder().time_bits(42).epoch_ms(0).build().unwrap();
    assert!(ok.last_timestamp_ms() <= flakeid_core::Layout::FLAKE.last_timestamp_ms() * 2);
    assert_eq!(
        config_field(Layout::builder().node_bits(64).build().unwrap_err()),
        "node_bits"
    );
    let both = Layout::builder().node_bits(10).worker_bits(5).build().unwrap_err();
    assert_eq!(config_field(both), "node_bits");
    // An ended layout stays valid (it decodes old IDs); its generator says so.
    let g = Generator::builder(Layout::BAIDU).build().unwrap();
    assert!(matches!(g.next_id(), Err(Error::TimeExhausted { .. })));
}

#[test]
fn manual_clock_advance_saturates() {
    let c = ManualClock::new(1);
    c.advance(u64::MAX);
    assert_eq!(c.get(), u64::MAX);
}
