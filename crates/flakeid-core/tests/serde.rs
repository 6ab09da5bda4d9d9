//! The `serde` feature: 64-bit IDs as decimal strings through `serde::id`, `Wide`
//! as its UUID text, read back from every text form; bad input refused by name.

#![allow(clippy::unwrap_used)]

use flakeid_core::{Generator, Layout, Wide};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Row {
    #[serde(with = "flakeid_core::serde::id")]
    id: u64,
    #[serde(with = "flakeid_core::serde::id::option")]
    parent: Option<u64>,
    plain: u64,
    wide: Wide,
    #[serde(with = "flakeid_core::serde::ulid")]
    as_ulid: Wide,
}

const UUID: &str = "01890a5d-ac96-774b-bcce-b302099a8057";
const ULID: &str = "01H455VB4PEX5VSKNK084SN02Q";
const TYPEID: &str = "user_01h455vb4pex5vsknk084sn02q";

fn row(id: u64, parent: Option<u64>) -> Row {
    let wide = Wide::parse(UUID).unwrap().0;
    Row {
        id,
        parent,
        plain: id,
        wide,
        as_ulid: wide,
    }
}

/// IDs past 2^53 (every Snowflake ID of this decade) survive a reader that parses
/// numbers as doubles: the marked fields are strings; the unmarked one stays a number.
#[test]
fn ids_are_strings_and_round_trip() {
    let generator = Generator::builder(Layout::SNOWFLAKE)
        .node(3)
        .host_guard(false)
        .build()
        .unwrap();
    let id = generator.next_id().unwrap();
    assert!(id > 1 << 53);
    let json = serde_json::to_value(row(id, Some(id - 1))).unwrap();
    assert_eq!(json["id"], serde_json::Value::String(id.to_string()));
    assert_eq!(json["parent"], serde_json::Value::String((id - 1).to_string()));
    assert_eq!(json["plain"], serde_json::json!(id));
    assert_eq!(json["wide"], UUID);
    assert_eq!(json["as_ulid"], ULID);
    let back: Row = serde_json::from_value(json).unwrap();
    assert_eq!(back, row(id, Some(id - 1)));
    let none = serde_json::to_value(row(1, None)).unwrap();
    assert!(none["parent"].is_null());
    assert_eq!(serde_json::from_value::<Row>(none).unwrap(), row(1, None));
}

#[test]
fn ids_are_read_from_strings_and_numbers() {
    let read = |v: &str| -> Result<u64, String> {
        let text = format!(r#"{{"id":{v},"parent":{v},"plain":0,"wide":"{UUID}","as_ulid":"{UUID}"}}"#);
        serde_json::from_str::<Row>(&text)
            .map(|r| r.id)
            .map_err(|e| e.to_string())
    };
    assert_eq!(read(r#""18446744073709551615""#), Ok(u64::MAX));
    assert_eq!(read("18446744073709551615"), Ok(u64::MAX));
    assert_eq!(read(r#""0""#), Ok(0));
    for bad in [
        r#""18446744073709551616""#,
        r#""+1""#,
        r#""-1""#,
        r#""""#,
        r#"" 1""#,
        "-1",
        "1.5",
        "true",
    ] {
        let e = read(bad).expect_err(bad);
        assert!(
            e.contains("an ID: a string of decimal digits or a number, 0 to 18446744073709551615"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn wide_is_read_from_every_text_form() {
    for text in [UUID, ULID, TYPEID, &UUID.to_uppercase(), &UUID.replace('-', "")] {
        let w: Wide = serde_json::from_value(serde_json::json!(text)).unwrap();
        assert_eq!(w.to_uuid(), UUID, "{text}");
    }
    for bad in [
        "",
        "not a uuid",
        "01890a5d-ac96-774b-bcce-b302099a80",
        " 01890a5d-ac96-774b-bcce-b302099a8057",
    ] {
        let e = serde_json::from_value::<Wide>(serde_json::json!(bad))
            .unwrap_err()
            .to_string();
        assert!(!e.is_empty(), "{bad}");
    }
    let e = serde_json::from_value::<Wide>(serde_json::json!(7))
        .unwrap_err()
        .to_string();
    assert!(e.contains("a UUID, ULID or TypeID as text, or 16 bytes"), "{e}");
}
