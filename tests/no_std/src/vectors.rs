//! The shared vectors (tests/vectors/*.json), every row, read and checked on the
//! target: the files are compiled in and parsed here, so they are the one source of
//! the expected values. The same checks as crates/flakeid-core/tests/vectors.rs.
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use flakeid_core::{Encoding, Error, Layout, Order, Wide, decode, encode, from_bytes, to_bytes};
use serde_json::Value;

fn load(text: &str) -> Value {
    serde_json::from_str(text).expect("a vector file is JSON")
}

fn rows<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    let rows = v[key].as_array().expect("a list of rows");
    assert!(!rows.is_empty(), "{key}: no rows");
    rows
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("{key}: not a string in {v}"))
}

fn num(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key}: not a number in {v}"))
}

/// IDs are decimal strings in the vectors.
fn id(v: &Value, key: &str) -> u64 {
    text(v, key).parse().expect("a decimal ID")
}

/// The present the layouts are checked against (`build_at`): without std no clock is
/// read, as firmware takes its time from an RTC.
const NOW_MS: u64 = 1_800_000_000_000;

/// A layout spec: a preset's name, or every field.
fn layout_of(v: &Value) -> Layout {
    if let Some(name) = v.as_str() {
        return Layout::preset(name).unwrap();
    }
    Layout::builder()
        .time_bits(num(v, "time_bits") as u32)
        .datacenter_bits(num(v, "datacenter_bits") as u32)
        .worker_bits(num(v, "worker_bits") as u32)
        .sequence_bits(num(v, "sequence_bits") as u32)
        .tick_ms(num(v, "tick_ms"))
        .epoch_ms(num(v, "epoch_ms"))
        .order(text(v, "order").parse::<Order>().unwrap())
        .build_at(NOW_MS)
        .unwrap()
}

/// The error a row expects: its kind's name, and its `field` and `position` where
/// the row gives them.
fn assert_error<T: core::fmt::Debug>(got: Result<T, Error>, want: &Value) {
    let e = match got {
        Ok(v) => panic!("expected {want}, got Ok({v:?})"),
        Err(e) => e,
    };
    assert_eq!(e.kind().name(), text(want, "error"), "{want}: {e}");
    let details = e.details();
    if let Some(field) = want.get("field") {
        assert_eq!(details.field, field.as_str(), "{want}: {e}");
    }
    if let Some(position) = want.get("position") {
        assert_eq!(details.position.map(|p| p as u64), position.as_u64(), "{want}: {e}");
    }
}

pub fn compose() {
    let v = load(include_str!("../../vectors/compose.json"));
    for c in rows(&v, "cases") {
        let l = layout_of(&c["layout"]);
        let want = id(c, "id");
        let (ms, node, seq) = (num(c, "timestamp_ms"), num(c, "node"), num(c, "sequence"));
        assert_eq!(l.compose(ms, node, seq).unwrap(), want, "{c}");
        assert_eq!(
            l.compose_parts(ms, num(c, "datacenter"), num(c, "worker"), seq)
                .unwrap(),
            want,
            "{c}"
        );
        let p = l.try_decompose(want).unwrap();
        assert_eq!(
            (p.timestamp_ms, p.ticks, p.node, p.datacenter, p.worker, p.sequence),
            (ms, num(c, "ticks"), node, num(c, "datacenter"), num(c, "worker"), seq),
            "{c}"
        );
    }
    for c in rows(&v, "compose_errors") {
        let l = layout_of(&c["layout"]);
        assert_error(l.compose(num(c, "timestamp_ms"), num(c, "node"), num(c, "sequence")), c);
    }
    for c in rows(&v, "decompose_errors") {
        assert_error(layout_of(&c["layout"]).try_decompose(id(c, "id")), c);
    }
    for c in rows(&v, "ranges") {
        let got = layout_of(&c["layout"])
            .id_range(num(c, "start_ms"), num(c, "end_ms"))
            .unwrap();
        assert_eq!(got, (id(c, "first"), id(c, "last")), "{c}");
    }
}

pub fn encodings() {
    let v = load(include_str!("../../vectors/encodings.json"));
    for c in rows(&v, "cases") {
        let n = id(c, "id");
        for enc in Encoding::ALL {
            let t = text(c, enc.name());
            assert_eq!(encode(n, enc), t, "{enc} of {n}");
            assert_eq!(decode(t, enc).unwrap(), n, "{enc} {t}");
        }
        let bytes = to_bytes(n);
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, text(c, "bytes"), "{c}");
        assert_eq!(from_bytes(&bytes).unwrap(), n);
    }
    for c in rows(&v, "decode_aliases") {
        let enc = text(c, "encoding").parse::<Encoding>().unwrap();
        assert_eq!(decode(text(c, "text"), enc).unwrap(), id(c, "id"), "{c}");
    }
    for c in rows(&v, "bad") {
        let enc = text(c, "encoding").parse::<Encoding>().unwrap();
        assert_error(decode(text(c, "text"), enc), c);
    }
}

/// A row's `text` read as its `kind`: a UUID, or else a ULID.
fn parse_as_kind(c: &Value) -> Result<Wide, Error> {
    if text(c, "kind") == "uuid" {
        Wide::parse_uuid(text(c, "text"))
    } else {
        Wide::parse_ulid(text(c, "text"))
    }
}

pub fn uuid() {
    let v = load(include_str!("../../vectors/uuid.json"));
    for c in rows(&v, "uuid7") {
        let ms = num(c, "ms");
        let rand_a = u16::try_from(num(c, "rand_a")).unwrap();
        let rand_b = id(c, "rand_b");
        let u = Wide::compose_uuid7(ms, rand_a, rand_b).unwrap();
        assert_eq!(u.to_uuid(), text(c, "uuid"));
        assert_eq!(format!("{u}"), text(c, "uuid"));
        assert_eq!(u.to_ulid(), text(c, "ulid"));
        assert_eq!(u.to_typeid("user").unwrap(), text(c, "typeid"));
        assert_eq!(
            Wide::parse_typeid(text(c, "typeid")).unwrap(),
            (String::from("user"), u)
        );
        assert_eq!(Wide::parse_uuid(text(c, "uuid")).unwrap(), u);
        assert_eq!(Wide::parse_ulid(text(c, "ulid")).unwrap(), u);
        let hex: String = u.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, text(c, "bytes"));
        assert_eq!(Wide::from_slice(&u.to_bytes()).unwrap(), u);
        assert_eq!(u.uuid7_timestamp_ms().unwrap(), ms);
        assert_eq!(u.decompose_uuid7().unwrap(), (ms, rand_a, rand_b));
    }
    for c in rows(&v, "compose_errors") {
        let rand_a = u16::try_from(num(c, "rand_a")).unwrap();
        assert_error(Wide::compose_uuid7(num(c, "ms"), rand_a, id(c, "rand_b")), c);
    }
    for c in rows(&v, "conversions") {
        assert_eq!(Wide::parse_ulid(text(c, "ulid")).unwrap().to_uuid(), text(c, "uuid"));
        assert_eq!(Wide::parse_uuid(text(c, "uuid")).unwrap().to_ulid(), text(c, "ulid"));
    }
    for c in rows(&v, "text_aliases") {
        assert_eq!(
            parse_as_kind(c).unwrap(),
            Wide::parse_uuid(text(c, "uuid")).unwrap(),
            "{c}"
        );
    }
    for c in rows(&v, "bad") {
        assert_error(parse_as_kind(c), c);
    }
    for c in rows(&v, "typeid_valid") {
        let (prefix, u) = Wide::parse_typeid(text(c, "typeid")).unwrap();
        assert_eq!(prefix, text(c, "prefix"), "{c}");
        assert_eq!(u, Wide::parse_uuid(text(c, "uuid")).unwrap(), "{c}");
        assert_eq!(u.to_typeid(&prefix).unwrap(), text(c, "typeid"));
    }
    for c in rows(&v, "typeid_invalid") {
        assert_error(Wide::parse_typeid(text(c, "typeid")), c);
    }
    for c in rows(&v, "prefix_errors") {
        assert_error(Wide(0).to_typeid(text(c, "prefix")), c);
    }
    for c in rows(&v, "ranges") {
        let (first, last) = Wide::uuid7_range(num(c, "start_ms"), num(c, "end_ms")).unwrap();
        assert_eq!(
            (first.to_uuid(), last.to_uuid()),
            (String::from(text(c, "first")), String::from(text(c, "last")))
        );
    }
}
