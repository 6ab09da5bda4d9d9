//! IDs as programs and databases hold them: the one parser every framework adapter
//! uses (Django, SQLAlchemy, Pydantic, `@flakeid/node/json`, Go's `database/sql`
//! methods, Hibernate), so that which values are IDs, and what a refusal says, is
//! decided here once.
//!
//! An ID is a whole number in `0..=layout.max_id()`. A program gives one as an
//! integer, as decimal text, or as 8 big-endian bytes ([`parse_id`]). A database
//! column holds it as a signed 64-bit `BIGINT` or as an unsigned or text value.
//! A signed `BIGINT` holds the ID's 64 bits as they are (two's complement): IDs
//! below 2^63 are the same number, and an ID with bit 63 set (64-bit layouts such
//! as `flake`, from 2^63 on) is stored as the negative number with the same bits
//! ([`to_bigint`], [`from_bigint`]). Nothing is lost, every ID has one stored value,
//! but in such a column those IDs sort before the others (docs/design.md, "IDs in
//! a signed BIGINT").

use crate::encoding::shown;
use crate::error::{Error, Result};
use crate::layout::Layout;
use alloc::string::{String, ToString};

/// A program's ID value, before it is checked: what a binding received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdValue<'a> {
    /// An integer (Python's `int`, a JS safe integer or bigint, Go's `uint64`).
    Int(i128),
    /// Decimal text (`"123"`: digits only, no sign or spaces).
    Text(&'a str),
    /// 8 bytes, big-endian (`flakeid.to_bytes`).
    Bytes(&'a [u8]),
    /// A value of another type, by its name in the binding's language (`float`,
    /// `boolean`): refused, saying what an ID is.
    Other(&'a str),
}

/// `value` as an ID of `layout`: an integer, decimal text or 8 big-endian bytes in
/// `0..=layout.max_id()`; anything else is a parse error saying what an ID is.
pub fn parse_id(layout: &Layout, value: IdValue<'_>) -> Result<u64> {
    let max = layout.max_id();
    let n: i128 = match value {
        IdValue::Int(n) => n,
        IdValue::Text(s) => {
            if let Some(at) = s
                .bytes()
                .position(|b| !b.is_ascii_digit())
                .or(s.is_empty().then_some(0))
            {
                return Err(Error::parse(at, format!("an ID is decimal digits, got {}", shown(s))));
            }
            // Digits only: too many for an i128 is out of range all the same.
            s.parse().unwrap_or(i128::MAX)
        }
        IdValue::Bytes(b) => match <[u8; 8]>::try_from(b) {
            Ok(b) => i128::from(u64::from_be_bytes(b)),
            Err(_) => return Err(Error::parse(b.len(), format!("an ID is 8 bytes, got {}", b.len()))),
        },
        IdValue::Other(type_name) => {
            return Err(Error::parse(
                0,
                format!("an ID is an integer, decimal text or 8 bytes, got {type_name}"),
            ));
        }
    };
    match u64::try_from(n) {
        Ok(id) if id <= max => Ok(id),
        _ => Err(out_of_range(layout, value)),
    }
}

#[cold]
fn out_of_range(layout: &Layout, value: IdValue<'_>) -> Error {
    let got = match value {
        IdValue::Int(n) => n.to_string(),
        IdValue::Text(s) => shown(s).to_string(),
        IdValue::Bytes(b) => format!("0x{}", b.iter().map(|b| format!("{b:02x}")).collect::<String>()),
        IdValue::Other(t) => t.to_string(),
    };
    Error::parse(
        0,
        format!("an ID of this layout is in 0..={}, got {got}", layout.max_id()),
    )
}

/// The signed `BIGINT` that stores `id` (its 64 bits as they are: an ID from 2^63
/// on is negative); an ID out of the layout's range is refused as [`parse_id`] does.
pub fn to_bigint(layout: &Layout, id: u64) -> Result<i64> {
    let id = parse_id(layout, IdValue::Int(i128::from(id)))?;
    Ok(id as i64)
}

/// The ID a signed `BIGINT` column holds ([`to_bigint`] reversed): a negative value
/// is an ID with bit 63 set, which only 64-bit layouts have.
pub fn from_bigint(layout: &Layout, stored: i64) -> Result<u64> {
    let id = stored as u64;
    if id <= layout.max_id() {
        return Ok(id);
    }
    Err(Error::parse(
        0,
        format!(
            "the BIGINT {stored} is not an ID of this layout (IDs are 0..={}; a negative BIGINT is an ID with bit 63 \
             set, which only 64-bit layouts have)",
            layout.max_id()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(r: Result<u64>) -> String {
        match r {
            Err(Error::Parse { message, .. }) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn values() {
        let l = Layout::SNOWFLAKE;
        assert_eq!(parse_id(&l, IdValue::Int(5)), Ok(5));
        assert_eq!(parse_id(&l, IdValue::Text("0123")), Ok(123));
        assert_eq!(parse_id(&l, IdValue::Bytes(&7u64.to_be_bytes())), Ok(7));
        assert_eq!(parse_id(&l, IdValue::Int(i128::from(l.max_id()))), Ok(l.max_id()));
        assert!(msg(parse_id(&l, IdValue::Int(-1))).contains("0..=9223372036854775807, got -1"));
        assert!(msg(parse_id(&l, IdValue::Int(1 << 63))).contains("got 9223372036854775808"));
        assert!(msg(parse_id(&l, IdValue::Text("12a"))).contains("decimal digits, got \"12a\""));
        assert!(msg(parse_id(&l, IdValue::Text(""))).contains("decimal digits"));
        assert!(msg(parse_id(&l, IdValue::Text(&"9".repeat(60)))).contains("0..="));
        assert!(msg(parse_id(&l, IdValue::Bytes(&[1, 2]))).contains("8 bytes, got 2"));
        assert!(msg(parse_id(&l, IdValue::Other("float"))).ends_with("decimal text or 8 bytes, got float"));
        assert!(msg(parse_id(&l, IdValue::Bytes(&u64::MAX.to_be_bytes()))).contains("got 0xffffffffffffffff"));
        match parse_id(&l, IdValue::Text("1x")) {
            Err(Error::Parse { position, .. }) => assert_eq!(position, 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bigint_round_trip() {
        let flake = Layout::preset("flake").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(flake.max_id(), u64::MAX);
        for id in [0, 1, (1 << 63) - 1, 1 << 63, u64::MAX] {
            let stored = to_bigint(&flake, id).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(stored as u64, id);
            assert_eq!(from_bigint(&flake, stored), Ok(id));
        }
        assert_eq!(to_bigint(&flake, 1 << 63), Ok(i64::MIN));
        let s = Layout::SNOWFLAKE;
        assert_eq!(to_bigint(&s, 42), Ok(42));
        assert!(msg(from_bigint(&s, -1)).contains("BIGINT -1 is not an ID of this layout"));
        assert!(to_bigint(&s, 1 << 63).is_err());
    }
}
