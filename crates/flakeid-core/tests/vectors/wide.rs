//! `tests/vectors/wide.json` and `tests/vectors/wide.md`: the 128-bit family's
//! functions with each runtime's spelling of them (Rust's, Python's, Node's, C's,
//! Go's, Java's, SQL's). The table lives here, beside the tests that read it, not in
//! the published engine: every runtime's 128-bit test checks its exports against
//! the JSON, and the Markdown is the cross-runtime table the docs link to.

use serde_json::{Value, json};

/// One function of the 128-bit family, as each runtime spells it; `None` where a
/// runtime has no such function (the reason is in `note`).
#[derive(Debug, Clone, Copy)]
pub struct WideFunction {
    /// What it does (snake_case, the Rust name's meaning).
    pub what: &'static str,
    /// The `flakeid-core` function or method (`Type::method`).
    pub rust: Option<&'static str>,
    /// The `flakeid` module's function.
    pub python: Option<&'static str>,
    /// The Node package's and the wasm package's export.
    pub node: Option<&'static str>,
    /// The C library's function (`include/flakeid.h`).
    pub c: Option<&'static str>,
    /// The Go package's function, or `UUID.Method`.
    pub go: Option<&'static str>,
    /// The Java method, `Class.method`.
    pub java: Option<&'static str>,
    /// The PostgreSQL extension's function.
    pub sql: Option<&'static str>,
    /// Where a runtime has none, why (its own type does it, or it is not there yet).
    pub note: &'static str,
}

/// The 128-bit family's functions with each runtime's name: first the calls that
/// issue IDs (a generator's, then the process's shortcuts), then those that make
/// none; one row per function, the same order everywhere. A name `Type.method` (or
/// Rust's `Type::method`) is a method of that runtime's type.
pub const WIDE_FUNCTIONS: &[WideFunction] = &[
    WideFunction {
        what: "a generator's next UUIDv7",
        rust: Some("UuidGenerator::next_uuid7"),
        python: Some("UuidGenerator.uuid7"),
        node: Some("UuidGenerator.uuid7"),
        c: Some("flakeid_uuid_next"),
        go: Some("UUIDGenerator.Next"),
        java: Some("UuidGenerator.nextUuid"),
        sql: Some("flakeid_uuidv7"),
        note: "",
    },
    WideFunction {
        what: "a generator's next ULID",
        rust: Some("UuidGenerator::next_ulid"),
        python: Some("UuidGenerator.ulid"),
        node: Some("UuidGenerator.ulid"),
        c: Some("flakeid_ulid_next"),
        go: Some("UUIDGenerator.NextULID"),
        java: Some("UuidGenerator.nextUlid"),
        sql: Some("flakeid_ulid"),
        note: "",
    },
    WideFunction {
        what: "a generator's next TypeID with a prefix",
        rust: Some("UuidGenerator::next_typeid"),
        python: Some("UuidGenerator.typeid"),
        node: Some("UuidGenerator.typeid"),
        c: Some("flakeid_typeid_next"),
        go: Some("UUIDGenerator.NextTypeID"),
        java: Some("UuidGenerator.nextTypeId"),
        sql: Some("flakeid_typeid"),
        note: "",
    },
    WideFunction {
        what: "a batch of a generator's UUIDv7s",
        rust: Some("UuidGenerator::next_uuid7s"),
        python: Some("UuidGenerator.uuid7s"),
        node: Some("UuidGenerator.uuid7s"),
        c: Some("flakeid_uuid_next_many"),
        go: Some("UUIDGenerator.NextN"),
        java: Some("UuidGenerator.nextUuids"),
        sql: Some("flakeid_uuidv7_many"),
        note: "",
    },
    WideFunction {
        what: "a UUIDv7 at a given time (outside the generator's sequence)",
        rust: Some("UuidGenerator::uuid7_at"),
        python: Some("UuidGenerator.uuid7_at"),
        node: Some("UuidGenerator.uuid7At"),
        c: Some("flakeid_uuid_at"),
        go: Some("UUIDGenerator.At"),
        java: Some("UuidGenerator.uuidAt"),
        sql: Some("flakeid_uuidv7_at"),
        note: "",
    },
    WideFunction {
        what: "a UUIDv7 of the clock now shifted (outside the generator's sequence)",
        rust: Some("UuidGenerator::uuid7_shifted"),
        python: Some("UuidGenerator.uuid7_shifted"),
        node: Some("UuidGenerator.uuid7Shifted"),
        c: Some("flakeid_uuid_shifted"),
        go: Some("UUIDGenerator.Shifted"),
        java: Some("UuidGenerator.uuidShifted"),
        sql: Some("flakeid_uuidv7"),
        note: "",
    },
    WideFunction {
        what: "the process's next UUIDv7 (one generator per process)",
        rust: None,
        python: Some("uuid7"),
        node: Some("uuid7"),
        c: None,
        go: None,
        java: None,
        sql: Some("flakeid_uuidv7"),
        note: "Rust, C, Go, Java: a generator of one's own, shared",
    },
    WideFunction {
        what: "the process's next UUIDv7 as an integer",
        rust: None,
        python: Some("uuid7_int"),
        node: None,
        c: None,
        go: None,
        java: None,
        sql: None,
        note: "Node: UuidGenerator.uuid7BigInt; the others: a generator's value is the integer or 16 bytes",
    },
    WideFunction {
        what: "the process's next UUIDv7 as 16 bytes",
        rust: None,
        python: Some("uuid7_bytes"),
        node: None,
        c: None,
        go: None,
        java: None,
        sql: None,
        note: "Node: UuidGenerator.uuid7Bytes; the others: a generator's value is the integer or 16 bytes",
    },
    WideFunction {
        what: "parse UUID text",
        rust: Some("Wide::parse_uuid"),
        python: None,
        node: Some("parseUuid"),
        c: Some("flakeid_uuid_parse"),
        go: Some("ParseUUID"),
        java: Some("Uuids.parseUuid"),
        sql: None,
        note: "Python: uuid.UUID(text); SQL: a text::uuid cast",
    },
    WideFunction {
        what: "parse ULID text",
        rust: Some("Wide::parse_ulid"),
        python: None,
        node: Some("parseUlid"),
        c: Some("flakeid_ulid_parse"),
        go: Some("ParseULID"),
        java: Some("Uuids.parseUlid"),
        sql: Some("flakeid_ulid_to_uuid"),
        note: "Python: ulid_to_uuid(text)",
    },
    WideFunction {
        what: "parse TypeID text into prefix and bits",
        rust: Some("Wide::parse_typeid"),
        python: Some("parse_typeid"),
        node: Some("parseTypeId"),
        c: Some("flakeid_typeid_parse"),
        go: Some("ParseTypeID"),
        java: Some("Uuids.parseTypeId"),
        sql: Some("flakeid_typeid_parse"),
        note: "",
    },
    WideFunction {
        what: "format as UUID text",
        rust: Some("Wide::to_uuid"),
        python: None,
        node: Some("formatUuid"),
        c: Some("flakeid_uuid_format"),
        go: Some("UUID.String"),
        java: Some("Uuids.formatUuid"),
        sql: None,
        note: "Python: str(uuid.UUID); SQL: a uuid::text cast",
    },
    WideFunction {
        what: "format as ULID text",
        rust: Some("Wide::to_ulid"),
        python: Some("uuid_to_ulid"),
        node: Some("formatUlid"),
        c: Some("flakeid_ulid_format"),
        go: Some("UUID.ULID"),
        java: Some("Uuids.formatUlid"),
        sql: Some("flakeid_uuid_to_ulid"),
        note: "",
    },
    WideFunction {
        what: "format as TypeID text with a prefix",
        rust: Some("Wide::to_typeid"),
        python: Some("format_typeid"),
        node: Some("formatTypeId"),
        c: Some("flakeid_typeid_format"),
        go: Some("UUID.TypeID"),
        java: Some("Uuids.formatTypeId"),
        sql: Some("flakeid_typeid_format"),
        note: "",
    },
    WideFunction {
        what: "UUID text to ULID text",
        rust: None,
        python: Some("uuid_to_ulid"),
        node: Some("uuidToUlid"),
        c: None,
        go: None,
        java: None,
        sql: Some("flakeid_uuid_to_ulid"),
        note: "Rust, C, Go, Java: parse, then format",
    },
    WideFunction {
        what: "ULID text to UUID text",
        rust: None,
        python: Some("ulid_to_uuid"),
        node: Some("ulidToUuid"),
        c: None,
        go: None,
        java: None,
        sql: Some("flakeid_ulid_to_uuid"),
        note: "Rust, C, Go, Java: parse, then format",
    },
    WideFunction {
        what: "compose a UUIDv7 from ms, rand_a and rand_b",
        rust: Some("Wide::compose_uuid7"),
        python: Some("compose_uuid7"),
        node: Some("composeUuid7"),
        c: Some("flakeid_uuid7_compose"),
        go: Some("ComposeUUID7"),
        java: Some("Uuids.composeUuid7"),
        sql: None,
        note: "SQL: none (tests and vectors compose in the client)",
    },
    WideFunction {
        what: "a UUIDv7's ms, rand_a and rand_b",
        rust: Some("Wide::decompose_uuid7"),
        python: None,
        node: None,
        c: Some("flakeid_uuid7_decompose"),
        go: Some("UUID.Decompose"),
        java: Some("Uuids.decomposeUuid7"),
        sql: None,
        note: "Python, Node, SQL: the time alone (uuid7_timestamp_ms)",
    },
    WideFunction {
        what: "a UUIDv7's Unix ms (ULID or TypeID text: its first 48 bits)",
        rust: Some("Wide::uuid7_timestamp_ms"),
        python: Some("uuid7_timestamp_ms"),
        node: Some("uuid7TimestampMs"),
        c: Some("flakeid_uuid7_timestamp_ms"),
        go: Some("UUID.TimestampMs"),
        java: Some("Uuids.timestampMs"),
        sql: Some("flakeid_uuid_timestamp"),
        note: "",
    },
    WideFunction {
        what: "a ULID's Unix ms (the first 48 bits, whatever the version)",
        rust: Some("Wide::timestamp_ms"),
        python: None,
        node: None,
        c: Some("flakeid_ulid_timestamp_ms"),
        go: Some("UUID.ULIDTimestampMs"),
        java: Some("Uuids.ulidTimestampMs"),
        sql: Some("flakeid_ulid_timestamp"),
        note: "Python, Node: uuid7_timestamp_ms / uuid7TimestampMs of the ULID text",
    },
    WideFunction {
        what: "the version nibble",
        rust: Some("Wide::version"),
        python: None,
        node: Some("uuidVersion"),
        c: Some("flakeid_uuid_version"),
        go: Some("UUID.Version"),
        java: None,
        sql: Some("flakeid_uuid_version"),
        note: "Python: uuid.UUID.version; Java: java.util.UUID.version()",
    },
    WideFunction {
        what: "the first and last value of a time range",
        rust: Some("Wide::uuid7_range"),
        python: None,
        node: Some("uuid7Range"),
        c: Some("flakeid_uuid7_range"),
        go: Some("UUID7Range"),
        java: Some("Uuids.range"),
        sql: Some("flakeid_uuidv7_first_at"),
        note: "Python: not yet (compose_uuid7 with the range's ends)",
    },
    WideFunction {
        what: "read any form: UUID, ULID or TypeID text",
        rust: Some("Wide::parse"),
        python: None,
        node: Some("decode"),
        c: None,
        go: None,
        java: None,
        sql: None,
        note: "Python, C, Go, Java, SQL: the form's own parse",
    },
];

/// The JSON rows of [`WIDE_FUNCTIONS`].
pub fn functions_json() -> Vec<Value> {
    WIDE_FUNCTIONS
        .iter()
        .map(|f| {
            json!({
                "what": f.what, "rust": f.rust, "python": f.python, "node": f.node, "c": f.c,
                "go": f.go, "java": f.java, "sql": f.sql, "note": f.note,
            })
        })
        .collect()
}

/// [`WIDE_FUNCTIONS`] as a Markdown table: one row per function, one column per
/// runtime, `—` where a runtime has none (the note says why).
pub fn functions_markdown() -> String {
    let mut out = String::from(
        "<!-- Generated by crates/flakeid-core/tests/vectors.rs from its table \
         (crates/flakeid-core/tests/vectors/wide.rs, WIDE_FUNCTIONS); regenerate with `make vectors`. -->\n\
         # The 128-bit family in each runtime\n\n\
         Each runtime's name for each of the family's functions: first the calls that issue IDs \
         (a generator's, then the process's shortcuts), then those that make none. `Type.method` \
         (Rust: `Type::method`) is a method of that runtime's type; `—`: the runtime has none, and \
         the note says why or what does it there. Every runtime's vector test checks its column \
         against its exports ([wide.json](wide.json)).\n\n\
         | what | Rust | Python | Node, wasm | C | Go | Java | SQL | note |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for f in WIDE_FUNCTIONS {
        let cells: Vec<String> = [f.rust, f.python, f.node, f.c, f.go, f.java, f.sql]
            .iter()
            .map(|name| name.map_or_else(|| "—".to_string(), |n| format!("`{n}`")))
            .collect();
        out.push_str(&format!("| {} | {} | {} |\n", f.what, cells.join(" | "), f.note));
    }
    out
}

#[test]
fn the_table_names_each_function_once() {
    let mut seen = std::collections::HashSet::new();
    for f in WIDE_FUNCTIONS {
        assert!(seen.insert(f.what), "{} twice", f.what);
        let none = [f.rust, f.python, f.node, f.c, f.go, f.java, f.sql]
            .iter()
            .any(Option::is_none);
        assert_eq!(
            none,
            !f.note.is_empty(),
            "{}: a runtime without it needs a note, and only then",
            f.what
        );
    }
}

/// The Rust column names public methods of the engine's types (`Wide`,
/// `UuidGenerator`): the same check every other runtime's vector test makes of its
/// column, here by reading the defining source.
#[test]
fn the_rust_names_are_the_engine_s_methods() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for f in WIDE_FUNCTIONS {
        let Some(name) = f.rust else { continue };
        let (ty, method) = name
            .split_once("::")
            .unwrap_or_else(|| panic!("{name}: not Type::method"));
        let file = match ty {
            "Wide" => "wide.rs",
            "UuidGenerator" => "uuid_generator.rs",
            other => panic!("{name}: {other} is not a type of the 128-bit family"),
        };
        let text = std::fs::read_to_string(src.join(file)).unwrap();
        assert!(
            text.contains(&format!("    pub fn {method}(")) || text.contains(&format!("    pub fn {method}<")),
            "{name}: no `pub fn {method}` in src/{file}"
        );
    }
}
