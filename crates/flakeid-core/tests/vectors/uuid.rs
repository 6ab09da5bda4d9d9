//! `tests/vectors/uuid.json`: the 128-bit family (UUIDv7, ULID, TypeID). Expected
//! texts are computed here by plain arithmetic (hex digits with hyphens spliced in;
//! base32 by repeated division), the TypeID cases are the spec's own files, and
//! the error positions are written out by hand.

use flakeid_core::{Error, Wide};
use serde_json::{Value, json};

/// jetify-com/typeid spec v0.3, spec/valid.json (name, typeid, prefix, uuid).
pub const TYPEID_VALID: [(&str, &str, &str, &str); 9] = [
    (
        "nil",
        "00000000000000000000000000",
        "",
        "00000000-0000-0000-0000-000000000000",
    ),
    (
        "one",
        "00000000000000000000000001",
        "",
        "00000000-0000-0000-0000-000000000001",
    ),
    (
        "ten",
        "0000000000000000000000000a",
        "",
        "00000000-0000-0000-0000-00000000000a",
    ),
    (
        "sixteen",
        "0000000000000000000000000g",
        "",
        "00000000-0000-0000-0000-000000000010",
    ),
    (
        "thirty-two",
        "00000000000000000000000010",
        "",
        "00000000-0000-0000-0000-000000000020",
    ),
    (
        "max-valid",
        "7zzzzzzzzzzzzzzzzzzzzzzzzz",
        "",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ),
    (
        "valid-alphabet",
        "prefix_0123456789abcdefghjkmnpqrs",
        "prefix",
        "0110c853-1d09-52d8-d73e-1194e95b5f19",
    ),
    (
        "valid-uuidv7",
        "prefix_01h455vb4pex5vsknk084sn02q",
        "prefix",
        "01890a5d-ac96-774b-bcce-b302099a8057",
    ),
    (
        "prefix-underscore",
        "pre_fix_00000000000000000000000000",
        "pre_fix",
        "00000000-0000-0000-0000-000000000000",
    ),
];
/// jetify-com/typeid spec v0.3, spec/invalid.json (name, typeid).
pub const TYPEID_INVALID: [(&str, &str); 21] = [
    ("prefix-uppercase", "PREFIX_00000000000000000000000000"),
    ("prefix-numeric", "12345_00000000000000000000000000"),
    ("prefix-period", "pre.fix_00000000000000000000000000"),
    ("prefix-non-ascii", "préfix_00000000000000000000000000"),
    ("prefix-spaces", "  prefix_00000000000000000000000000"),
    (
        "prefix-64-chars",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl_00000000000000000000000000",
    ),
    ("separator-empty-prefix", "_00000000000000000000000000"),
    ("separator-empty", "_"),
    ("suffix-short", "prefix_1234567890123456789012345"),
    ("suffix-long", "prefix_123456789012345678901234567"),
    ("suffix-spaces", "prefix_1234567890123456789012345 "),
    ("suffix-uppercase", "prefix_0123456789ABCDEFGHJKMNPQRS"),
    ("suffix-hyphens", "prefix_123456789-123456789-123456"),
    ("suffix-wrong-alphabet", "prefix_ooooooiiiiiiuuuuuuulllllll"),
    ("suffix-ambiguous-crockford", "prefix_i23456789ol23456789oi23456"),
    ("suffix-hyphens-crockford", "prefix_123456789-0123456789-0123456"),
    ("suffix-overflow", "prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz"),
    ("prefix-underscore-start", "_prefix_00000000000000000000000000"),
    ("prefix-underscore-end", "prefix__00000000000000000000000000"),
    ("empty", ""),
    ("prefix-empty", "prefix_"),
];

/// Where each of the spec's invalid TypeIDs is refused (0-based character index).
const TYPEID_INVALID_POSITION: [usize; 21] = [0, 0, 3, 2, 0, 63, 0, 0, 32, 33, 32, 17, 16, 7, 7, 33, 7, 0, 6, 0, 7];

fn uuid_text(u: u128) -> String {
    let h = format!("{u:032x}");
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

fn ulid_text(mut u: u128) -> String {
    let alphabet = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut out = vec![b'0'; 26];
    for slot in out.iter_mut().rev() {
        *slot = alphabet[(u % 32) as usize];
        u /= 32;
    }
    String::from_utf8(out).unwrap()
}

fn uuid7_bits(ms: u64, rand_a: u64, rand_b: u64) -> u128 {
    // 48 bits of ms, 4 of version (7), 12 of rand_a, 2 of variant (10), 62 of rand_b.
    (u128::from(ms) * (1 << 80)) + (7 << 76) + (u128::from(rand_a) << 64) + (2 << 62) + u128::from(rand_b)
}

const CASES: [(u64, u64, u64); 6] = [
    (1_645_557_742_000, 0xCC3, 0x18C4_DC0C_0C07_398F), // RFC 9562 Appendix A.6
    (0, 0, 0),
    ((1 << 48) - 1, 0xfff, (1 << 62) - 1),
    (1_764_000_000_000, 1, 1),
    (1_764_000_000_001, 0x800, 1 << 61),
    (1_288_834_974_657, 0x123, 0x0123_4567_89ab_cdef),
];

pub fn uuid_json() -> Value {
    let uuid7: Vec<Value> = CASES
        .iter()
        .map(|&(ms, a, b)| {
            let u = uuid7_bits(ms, a, b);
            json!({"ms": ms, "rand_a": a, "rand_b": b.to_string(), "uuid": uuid_text(u), "ulid": ulid_text(u),
                   "typeid": format!("user_{}", ulid_text(u).to_lowercase()), "bytes": format!("{u:032x}")})
        })
        .collect();
    let compose_errors = json!([
        {"ms": 1u64 << 48, "rand_a": 0, "rand_b": "0", "error": "config", "field": "ms"},
        {"ms": 0, "rand_a": 0x1000, "rand_b": "0", "error": "config", "field": "rand_a"},
        {"ms": 0, "rand_a": 0, "rand_b": (1u64 << 62).to_string(), "error": "config", "field": "rand_b"},
    ]);
    let conversions = json!([
        {"ulid": "01ARYZ6S41TSV4RRFFQ69G5FAV", "uuid": "01563df3-6481-d676-4c61-efb99302bd5b",
         "_source": "ulid/javascript README"},
        {"ulid": ulid_text(0), "uuid": uuid_text(0)},
        {"ulid": ulid_text(u128::MAX), "uuid": uuid_text(u128::MAX)},
    ]);
    let text_aliases = json!([
        {"kind": "uuid", "text": "017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "uuid": "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
        {"kind": "uuid", "text": "017f22e279b07cc398c4dc0c0c07398f", "uuid": "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
        {"kind": "ulid", "text": "01aryz6s41tsv4rrffq69g5fav", "uuid": "01563df3-6481-d676-4c61-efb99302bd5b"},
        {"kind": "ulid", "text": "0000000000000000000000000I", "uuid": uuid_text(1)},
        {"kind": "ulid", "text": "0000000000000000000000000l", "uuid": uuid_text(1)},
        {"kind": "ulid", "text": "0000000000000000000000000O", "uuid": uuid_text(0)},
    ]);
    let bad = json!([
        {"kind": "uuid", "text": "", "error": "parse", "position": 0},
        {"kind": "uuid", "text": "017f22e2-79b0-7cc3-98c4-dc0c0c07398", "error": "parse", "position": 35},
        {"kind": "uuid", "text": "017f22e2_79b0-7cc3-98c4-dc0c0c07398f", "error": "parse", "position": 8},
        {"kind": "uuid", "text": "017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "error": "parse", "position": 35},
        {"kind": "uuid", "text": "017f22e279b07cc398c4dc0c0c07398-", "error": "parse", "position": 31},
        {"kind": "ulid", "text": "01ARYZ6S41TSV4RRFFQ69G5FA", "error": "parse", "position": 25},
        {"kind": "ulid", "text": "01ARYZ6S41TSV4RRFFQ69G5FAVX", "error": "parse", "position": 26},
        {"kind": "ulid", "text": "80000000000000000000000000", "error": "parse", "position": 0},
        {"kind": "ulid", "text": "01ARYZ6S41TSV4RRFFQ69G5FAU", "error": "parse", "position": 25},
        {"kind": "ulid", "text": "01ARYZ6S41TSV4RRFFQ69G5FA-", "error": "parse", "position": 25},
        {"kind": "ulid", "text": "01ARYZ6S41TSV4RRFFQ69G5FAé", "error": "parse", "position": 25},
    ]);
    let typeid_valid: Vec<Value> = TYPEID_VALID
        .iter()
        .map(|&(name, typeid, prefix, uuid)| json!({"name": name, "typeid": typeid, "prefix": prefix, "uuid": uuid}))
        .collect();
    let typeid_invalid: Vec<Value> = TYPEID_INVALID
        .iter()
        .zip(TYPEID_INVALID_POSITION)
        .map(|(&(name, typeid), position)| json!({"name": name, "typeid": typeid, "error": "parse", "position": position}))
        .collect();
    let prefix_errors = json!([
        {"prefix": "User", "error": "config", "field": "prefix"},
        {"prefix": "_user", "error": "config", "field": "prefix"},
        {"prefix": "user_", "error": "config", "field": "prefix"},
        {"prefix": "a".repeat(64), "error": "config", "field": "prefix"},
    ]);
    let ranges: Vec<Value> = [
        (0u64, 0u64),
        (1_764_000_000_000, 1_764_000_000_999),
        ((1 << 48) - 1, (1 << 48) - 1),
    ]
    .iter()
    .map(|&(a, b)| {
        json!({"start_ms": a, "end_ms": b, "first": uuid_text(u128::from(a) << 80),
                   "last": uuid_text((u128::from(b) << 80) + ((1 << 80) - 1))})
    })
    .collect();
    json!({
        "_comment": "The 128-bit family: UUIDv7 (RFC 9562 §5.7), ULID (ulid/spec), TypeID (jetify-com/typeid spec v0.3). Generated by crates/flakeid-core/tests/vectors/uuid.rs; regenerate with `make vectors`.",
        "uuid7": uuid7,
        "compose_errors": compose_errors,
        "conversions": conversions,
        "text_aliases": text_aliases,
        "bad": bad,
        "typeid_valid": typeid_valid,
        "typeid_invalid": typeid_invalid,
        "prefix_errors": prefix_errors,
        "ranges": ranges,
    })
}

fn kind_of(e: &Error) -> &'static str {
    e.kind().name()
}

fn wide_of(text: &Value) -> Wide {
    Wide::parse_uuid(text.as_str().unwrap()).unwrap()
}

/// A case's `text` parsed as its `kind`: a UUID, or else a ULID.
fn parse_as_kind(c: &Value) -> flakeid_core::Result<Wide> {
    let text = c["text"].as_str().unwrap();
    if c["kind"] == "uuid" {
        Wide::parse_uuid(text)
    } else {
        Wide::parse_ulid(text)
    }
}

pub fn check_uuid(v: &Value) {
    for c in v["uuid7"].as_array().unwrap() {
        let ms = c["ms"].as_u64().unwrap();
        let a = u16::try_from(c["rand_a"].as_u64().unwrap()).unwrap();
        let b: u64 = c["rand_b"].as_str().unwrap().parse().unwrap();
        let u = Wide::compose_uuid7(ms, a, b).unwrap();
        assert_eq!(u.to_uuid(), c["uuid"].as_str().unwrap());
        assert_eq!(u.to_ulid(), c["ulid"].as_str().unwrap());
        assert_eq!(u.to_typeid("user").unwrap(), c["typeid"].as_str().unwrap());
        assert_eq!(
            Wide::parse_typeid(c["typeid"].as_str().unwrap()).unwrap(),
            ("user".to_string(), u)
        );
        assert_eq!(
            format!("{:032x}", u128::from_be_bytes(u.to_bytes())),
            c["bytes"].as_str().unwrap()
        );
        assert_eq!(Wide::from_slice(&u.to_bytes()).unwrap(), u);
        assert_eq!(u.uuid7_timestamp_ms().unwrap(), ms);
        assert_eq!(
            Wide::parse_ulid(c["ulid"].as_str().unwrap()).unwrap().timestamp_ms(),
            ms
        );
    }
    for c in v["compose_errors"].as_array().unwrap() {
        let a = u16::try_from(c["rand_a"].as_u64().unwrap()).unwrap();
        let b: u64 = c["rand_b"].as_str().unwrap().parse().unwrap();
        let e = Wide::compose_uuid7(c["ms"].as_u64().unwrap(), a, b).unwrap_err();
        assert_eq!(kind_of(&e), c["error"].as_str().unwrap());
        assert_eq!(e.details().field, c["field"].as_str(), "{e}");
    }
    for c in v["conversions"].as_array().unwrap() {
        let (ulid, uuid) = (c["ulid"].as_str().unwrap(), c["uuid"].as_str().unwrap());
        assert_eq!(Wide::parse_ulid(ulid).unwrap().to_uuid(), uuid);
        assert_eq!(Wide::parse_uuid(uuid).unwrap().to_ulid(), ulid);
    }
    for c in v["text_aliases"].as_array().unwrap() {
        let text = c["text"].as_str().unwrap();
        assert_eq!(parse_as_kind(c).unwrap(), wide_of(&c["uuid"]), "{text}");
    }
    for c in v["bad"].as_array().unwrap() {
        let text = c["text"].as_str().unwrap();
        let e = parse_as_kind(c).unwrap_err();
        assert_eq!(kind_of(&e), "parse", "{text}: {e}");
        assert_eq!(
            e.details().position,
            c["position"].as_u64().map(|p| p as usize),
            "{text}: {e}"
        );
    }
    for c in v["typeid_valid"].as_array().unwrap() {
        let (prefix, u) = Wide::parse_typeid(c["typeid"].as_str().unwrap()).unwrap();
        assert_eq!(prefix, c["prefix"].as_str().unwrap(), "{}", c["name"]);
        assert_eq!(u, wide_of(&c["uuid"]), "{}", c["name"]);
        assert_eq!(u.to_typeid(&prefix).unwrap(), c["typeid"].as_str().unwrap());
    }
    for c in v["typeid_invalid"].as_array().unwrap() {
        let e = Wide::parse_typeid(c["typeid"].as_str().unwrap()).unwrap_err();
        assert_eq!(kind_of(&e), "parse", "{}: {e}", c["name"]);
        assert_eq!(
            e.details().position,
            c["position"].as_u64().map(|p| p as usize),
            "{}: {e}",
            c["name"]
        );
    }
    for c in v["prefix_errors"].as_array().unwrap() {
        let e = Wide(0).to_typeid(c["prefix"].as_str().unwrap()).unwrap_err();
        assert_eq!(kind_of(&e), "config", "{e}");
        assert_eq!(e.details().field, Some("prefix"));
    }
    for c in v["ranges"].as_array().unwrap() {
        let (first, last) = Wide::uuid7_range(c["start_ms"].as_u64().unwrap(), c["end_ms"].as_u64().unwrap()).unwrap();
        assert_eq!(
            (first.to_uuid(), last.to_uuid()),
            (c["first"].as_str().unwrap().into(), c["last"].as_str().unwrap().into())
        );
    }
}
