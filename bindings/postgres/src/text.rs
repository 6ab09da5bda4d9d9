//! Text forms: `flakeid_encode`, `flakeid_decode`.

use crate::convert::ok;
use crate::error::{from_bigint, to_bigint};
use flakeid_core::{Encoding, decode, decode_auto, encode};
use pgrx::prelude::*;

/// An ID as fixed-width, sort-preserving text: base62 (11), base32 (13), hex (16), or decimal.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_encode(id: i64, encoding: &str) -> String {
    let encoding = ok(Encoding::parse(encoding), "encoding");
    encode(from_bigint(id, "id"), encoding)
}

/// Reads text in the given encoding.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_decode(text: &str, encoding: &str) -> i64 {
    let encoding = ok(Encoding::parse(encoding), "encoding");
    to_bigint(ok(decode(text, encoding), "text"))
}

/// Reads text in whichever encoding it is in; an ambiguous text is an error.
#[pg_extern(immutable, parallel_safe, name = "flakeid_decode")]
fn flakeid_decode_auto(text: &str) -> i64 {
    to_bigint(ok(decode_auto(text), "text").0)
}
