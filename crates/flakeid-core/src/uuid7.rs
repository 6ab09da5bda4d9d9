//! The 128-bit family's bits and text: UUIDv7 (RFC 9562 §5.7), ULID (ulid/spec)
//! and TypeID (jetify-com/typeid, spec v0.3). These functions make no IDs; they
//! compose, take apart, convert and read them, the same in every runtime (the
//! shared vectors, `tests/vectors/uuid.json`, pin each one);
//! [`Wide`](crate::Wide)'s methods are their one public surface.
//!
//! A ULID and a UUID are the same 128 bits: reading one form and writing the other
//! changes the text only (no bit is fixed up). A TypeID is a prefix, `_`, and the
//! 128 bits as lowercase ULID text.
//!
//! Text in: a UUID is 36 characters `8-4-4-4-12` (or its 32 hex digits alone), any
//! case; a ULID is 26 Crockford base32 characters, any case, `I`/`L` read as `1`
//! and `O` as `0` as Crockford's alphabet says (the 64-bit `base32` does the same),
//! `U` refused, and nothing above `7ZZZZZZZZZZZZZZZZZZZZZZZZZ`; a TypeID suffix is
//! lowercase only and has no aliases (the spec refuses them). Every refusal is an
//! [`Error::Parse`] naming the 0-based position.

use crate::encoding::{CROCKFORD, shown};
use crate::error::{Error, Result};
use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// The largest Unix millisecond a UUIDv7 holds (48 bits: the year 10889).
pub(crate) const UUID7_MAX_MS: u64 = (1 << 48) - 1;
/// The width of `rand_a`, the 12 bits after the version.
pub(crate) const UUID7_RAND_A_BITS: u32 = 12;
/// The width of `rand_b`, the 62 bits after the variant.
pub(crate) const UUID7_RAND_B_BITS: u32 = 62;

const VERSION_7: u128 = 0x7 << 76;
const VARIANT_10: u128 = 0b10 << 62;
const HEX: &[u8; 16] = b"0123456789abcdef";
/// Crockford's alphabet in lower case (TypeID suffixes, and reading any case).
const CROCKFORD_LOWER: &[u8; 32] = &lower(CROCKFORD);

const fn lower(upper: &[u8; 32]) -> [u8; 32] {
    let mut out = *upper;
    let mut i = 0;
    while i < out.len() {
        out[i] = out[i].to_ascii_lowercase();
        i += 1;
    }
    out
}
/// The longest TypeID prefix (spec v0.3).
pub(crate) const TYPEID_PREFIX_MAX: usize = 63;
/// Characters in a UUID's hyphenated text.
pub(crate) const UUID_TEXT_LEN: usize = 36;
/// Characters in a ULID (and a TypeID suffix).
pub(crate) const ULID_TEXT_LEN: usize = 26;

/// The UUIDv7 of Unix millisecond `ms` with `rand_a` (12 bits) and `rand_b` (62
/// bits): RFC 9562 §5.7's layout, version 7, variant `10`. Each part is checked
/// against its width: a `Config` error names the field and its range.
pub(crate) fn compose_uuid7(ms: u64, rand_a: u16, rand_b: u64) -> Result<u128> {
    if ms > UUID7_MAX_MS {
        return Err(Error::out_of_range("ms", 0, UUID7_MAX_MS, ms));
    }
    if u32::from(rand_a) >= 1 << UUID7_RAND_A_BITS {
        return Err(Error::out_of_range("rand_a", 0, (1 << UUID7_RAND_A_BITS) - 1, rand_a));
    }
    if rand_b >= 1 << UUID7_RAND_B_BITS {
        return Err(Error::out_of_range("rand_b", 0, (1 << UUID7_RAND_B_BITS) - 1, rand_b));
    }
    Ok(u128::from(ms) << 80 | VERSION_7 | u128::from(rand_a) << 64 | VARIANT_10 | u128::from(rand_b))
}

/// The parts [`compose_uuid7`] took: `(ms, rand_a, rand_b)`. A value that is not
/// a version-7, variant-`10` UUID is a parse error naming the bit.
pub(crate) fn decompose_uuid7(uuid: u128) -> Result<(u64, u16, u64)> {
    let version = uuid_version(uuid);
    if version != 7 {
        return Err(Error::parse(
            48,
            format!("not a UUIDv7: its version field (bits 48-51) is {version}, not 7"),
        ));
    }
    if uuid >> 62 & 0b11 != 0b10 {
        return Err(Error::parse(
            64,
            "not an RFC 9562 UUID: its variant field (bits 64-65) is not 10",
        ));
    }
    Ok((
        (uuid >> 80) as u64,
        (uuid >> 64) as u16 & 0xfff,
        uuid as u64 & ((1 << UUID7_RAND_B_BITS) - 1),
    ))
}

/// The version field of any UUID (bits 48-51): 7 for ours.
pub(crate) fn uuid_version(uuid: u128) -> u8 {
    (uuid >> 76) as u8 & 0xf
}

/// The version of an RFC 9562 UUID (variant `10`), or `None` for a UUID of
/// another variant (the nil and max UUIDs, Microsoft's GUIDs): what PostgreSQL
/// 18's `uuid_extract_version` answers.
pub(crate) fn rfc_uuid_version(uuid: u128) -> Option<u8> {
    (uuid >> 62 & 0b11 == 0b10).then(|| uuid_version(uuid))
}

/// The Unix millisecond a UUIDv7 (or a ULID, or a TypeID's bits) carries in its
/// first 48 bits. A UUID of another version is a parse error: its first bits are
/// no time (a ULID's are, whatever its other bits: use [`ulid_timestamp_ms`]).
pub(crate) fn uuid7_timestamp_ms(uuid: u128) -> Result<u64> {
    decompose_uuid7(uuid).map(|(ms, _, _)| ms)
}

/// The Unix millisecond in a ULID's first 48 bits (any ULID: the spec fixes no
/// other bit).
pub(crate) fn ulid_timestamp_ms(ulid: u128) -> u64 {
    (ulid >> 80) as u64
}

/// The first and last 128-bit value whose time is within `start_ms..=end_ms`, for
/// `WHERE id BETWEEN first AND last` (UUIDv7 and ULID alike: the bits after the
/// time run from all zeros to all ones).
pub(crate) fn uuid7_range(start_ms: u64, end_ms: u64) -> Result<(u128, u128)> {
    if start_ms > UUID7_MAX_MS {
        return Err(Error::out_of_range("start_ms", 0, UUID7_MAX_MS, start_ms));
    }
    if end_ms > UUID7_MAX_MS {
        return Err(Error::out_of_range("end_ms", 0, UUID7_MAX_MS, end_ms));
    }
    if end_ms < start_ms {
        return Err(Error::out_of_range("end_ms", start_ms, UUID7_MAX_MS, end_ms));
    }
    Ok((u128::from(start_ms) << 80, u128::from(end_ms) << 80 | ((1 << 80) - 1)))
}

/// `[u8; 16]` big-endian, as a UUID's bytes are written.
pub(crate) fn uuid_to_bytes(uuid: u128) -> [u8; 16] {
    uuid.to_be_bytes()
}

/// The value of 16 big-endian bytes; any other length is a parse error.
pub(crate) fn uuid_from_bytes(bytes: &[u8]) -> Result<u128> {
    let arr: [u8; 16] = bytes.try_into().map_err(|_| {
        Error::parse(
            bytes.len().min(16),
            format!("a UUID is exactly 16 bytes, got {}", bytes.len()),
        )
    })?;
    Ok(u128::from_be_bytes(arr))
}

/// Lowercase `8-4-4-4-12` text.
// The formatters stay out of line: each binding call site is `Wide(u).to_uuid()`
// (and ulid, typeid), and inlined into every one they grew the wasm module by 10 KB.
#[inline(never)]
pub(crate) fn format_uuid(uuid: u128) -> String {
    uuid_text(uuid).iter().map(|&b| b as char).collect()
}

/// [`format_uuid`]'s 36 ASCII bytes, with no allocation: for a binding that
/// writes a batch's text into one buffer.
pub(crate) fn uuid_text(uuid: u128) -> [u8; UUID_TEXT_LEN] {
    let mut out = [b'-'; UUID_TEXT_LEN];
    let mut at = 0;
    for (i, b) in uuid.to_be_bytes().iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1;
        }
        out[at] = HEX[usize::from(b >> 4)];
        out[at + 1] = HEX[usize::from(b & 0xf)];
        at += 2;
    }
    out
}

/// Reads `8-4-4-4-12` text, or its 32 hex digits without hyphens, in any case.
// Kept out of line: a binding that calls only `Wide::parse_uuid` leaves one caller,
// and inlined there (the C library's guard closure) the loop ran a third more
// instructions under callgrind than as its own function.
#[inline(never)]
pub(crate) fn parse_uuid(text: &str) -> Result<u128> {
    let hyphenated = match text.len() {
        UUID_TEXT_LEN => true,
        32 => false,
        n => {
            return Err(Error::parse(
                text.chars().count().min(UUID_TEXT_LEN),
                format!(
                    "a UUID is 36 characters (8-4-4-4-12) or 32 hex digits, got {n} bytes ({})",
                    shown(text)
                ),
            ));
        }
    };
    let mut acc: u128 = 0;
    for (pos, ch) in text.chars().enumerate() {
        if hyphenated && matches!(pos, 8 | 13 | 18 | 23) {
            if ch != '-' {
                return Err(Error::parse(
                    pos,
                    format!("expected '-' at position {pos} in {}, got {ch:?}", shown(text)),
                ));
            }
            continue;
        }
        let digit = ch.to_digit(16).ok_or_else(|| {
            Error::parse(
                pos,
                format!(
                    "invalid character {ch:?} at position {pos} in {} (expected 0-9a-f, any case{})",
                    shown(text),
                    if hyphenated { ", hyphens at 8, 13, 18, 23" } else { "" }
                ),
            )
        })?;
        acc = acc << 4 | u128::from(digit);
    }
    Ok(acc)
}

fn crockford_upper(bits: u128, out: &mut [u8; ULID_TEXT_LEN], alphabet: &[u8; 32]) {
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 5 * (ULID_TEXT_LEN - 1 - i);
        *slot = alphabet[(bits >> shift) as usize & 31];
    }
}

/// Upper-case Crockford base32, 26 characters (ulid/spec).
#[inline(never)]
pub(crate) fn format_ulid(ulid: u128) -> String {
    let mut out = [0u8; ULID_TEXT_LEN];
    crockford_upper(ulid, &mut out, CROCKFORD);
    out.iter().map(|&b| b as char).collect()
}

/// Reads 26 Crockford base32 characters, any case; `I`/`L` are `1`, `O` is `0`;
/// `U` and anything else is refused; the first character is at most `7`.
pub(crate) fn parse_ulid(text: &str) -> Result<u128> {
    decode_128(text, 0, "ULID", |c| {
        let c = match c.to_ascii_lowercase() {
            b'i' | b'l' => b'1',
            b'o' => b'0',
            other => other,
        };
        CROCKFORD_LOWER.iter().position(|&b| b == c)
    })
}

/// Reads 26 base32 characters: `text` is the whole input and the digits start at
/// character `offset` (a TypeID's suffix), so positions and quotes are the input's.
fn decode_128(text: &str, offset: usize, what: &str, value: impl Fn(u8) -> Option<usize>) -> Result<u128> {
    let digits: Vec<char> = text.chars().skip(offset).collect();
    if digits.len() != ULID_TEXT_LEN {
        return Err(Error::parse(
            offset + digits.len().min(ULID_TEXT_LEN),
            format!(
                "{} has {} characters from position {offset}, where a {what} is exactly {ULID_TEXT_LEN}",
                shown(text),
                digits.len()
            ),
        ));
    }
    let mut acc: u128 = 0;
    for (i, &ch) in digits.iter().enumerate() {
        let pos = offset + i;
        let digit = u8::try_from(ch).ok().and_then(&value).ok_or_else(|| {
            Error::parse(
                pos,
                format!(
                    "invalid character {ch:?} at position {pos} in {} (a {what} is Crockford base32: {})",
                    shown(text),
                    if what == "ULID" {
                        "0-9 A-Z less U, any case"
                    } else {
                        "0-9 a-z less i l o u, lowercase"
                    }
                ),
            )
        })?;
        if i == 0 && digit > 7 {
            return Err(Error::parse(
                pos,
                format!(
                    "{} is above the largest {what} (7zzzzzzzzzzzzzzzzzzzzzzzzz: 128 bits); its first character must be 0-7",
                    shown(text)
                ),
            ));
        }
        acc = acc << 5 | digit as u128;
    }
    Ok(acc)
}

/// Checks a TypeID prefix: at most 63 of `a-z` and `_`, starting and ending with
/// a letter, or empty. The error is a `Config` error on `prefix` (it is a
/// program's argument, not text read in).
pub(crate) fn check_typeid_prefix(prefix: &str) -> Result<()> {
    if let Some(position) = typeid_prefix_fault(prefix) {
        return Err(Error::config(
            "prefix",
            format!("{}: {}", shown(prefix), prefix_rule(prefix, position)),
        ));
    }
    Ok(())
}

fn prefix_rule(prefix: &str, position: usize) -> String {
    let n = prefix.chars().count();
    if n > TYPEID_PREFIX_MAX {
        format!("a TypeID prefix is at most {TYPEID_PREFIX_MAX} characters, got {n}")
    } else {
        let ch = prefix.chars().nth(position).unwrap_or('_');
        format!(
            "a TypeID prefix is lowercase a-z and '_', starting and ending with a letter; {ch:?} at position {position} is not allowed there"
        )
    }
}

/// The position of the first character breaking the prefix rules, if any.
fn typeid_prefix_fault(prefix: &str) -> Option<usize> {
    let n = prefix.chars().count();
    if n > TYPEID_PREFIX_MAX {
        return Some(TYPEID_PREFIX_MAX);
    }
    for (pos, ch) in prefix.chars().enumerate() {
        let ok = ch.is_ascii_lowercase() || (ch == '_' && pos != 0 && pos + 1 != n);
        if !ok {
            return Some(pos);
        }
    }
    None
}

/// `prefix_` and the lowercase ULID text of `uuid` (just the text when `prefix`
/// is empty). The prefix is checked ([`check_typeid_prefix`]).
#[inline(never)]
pub(crate) fn format_typeid(prefix: &str, uuid: u128) -> Result<String> {
    check_typeid_prefix(prefix)?;
    let mut suffix = [0u8; ULID_TEXT_LEN];
    crockford_upper(uuid, &mut suffix, CROCKFORD_LOWER);
    let mut out = String::with_capacity(prefix.len() + 1 + ULID_TEXT_LEN);
    if !prefix.is_empty() {
        out.push_str(prefix);
        out.push('_');
    }
    out.extend(suffix.iter().map(|&b| b as char));
    Ok(out)
}

/// Splits a TypeID at its last `_` into its prefix and its 128 bits. Positions in
/// errors count characters of the whole text.
pub(crate) fn parse_typeid(text: &str) -> Result<(String, u128)> {
    let (prefix, offset) = match text.rfind('_') {
        Some(i) => {
            let prefix = &text[..i];
            if prefix.is_empty() {
                return Err(Error::parse(
                    0,
                    format!("{}: a TypeID with an empty prefix has no '_' separator", shown(text)),
                ));
            }
            (prefix, prefix.chars().count() + 1)
        }
        None => ("", 0),
    };
    if let Some(position) = typeid_prefix_fault(prefix) {
        return Err(Error::parse(
            position,
            format!("{}: {}", shown(text), prefix_rule(prefix, position)),
        ));
    }
    let bits = decode_128(text, offset, "TypeID suffix", |c| {
        CROCKFORD_LOWER.iter().position(|&b| b == c)
    })?;
    Ok((prefix.to_string(), bits))
}

/// Which text form a 128-bit ID was read from ([`Wide::parse`](crate::Wide::parse),
/// [`Wide::recognize`](crate::Wide::recognize)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WideForm {
    /// `8-4-4-4-12` or 32 hex digits.
    Uuid,
    /// 26 Crockford base32 characters.
    Ulid,
    /// A TypeID, with its prefix (empty for a bare lowercase suffix read as a TypeID).
    TypeId(String),
}

/// Reads a UUID, ULID or TypeID, saying which; `None` when the text has none of
/// their shapes (36 characters, 32 hex digits, 26 characters, or more than 26 with
/// a `_`), which no 64-bit text form has (they are at most 20 characters: a shorter
/// text with a `_` is a bad 64-bit ID, and `decode_auto` says where).
pub(crate) fn decode_wide(text: &str) -> Option<Result<(u128, WideForm)>> {
    // No trimming: the TypeID spec refuses spaces around an ID, as the libraries'
    // parsers do; the CLI and the service read it the same.
    let n = text.chars().count();
    if text.contains('_') && n > ULID_TEXT_LEN {
        Some(parse_typeid(text).map(|(prefix, u)| (u, WideForm::TypeId(prefix))))
    } else if n == UUID_TEXT_LEN || (n == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())) {
        Some(parse_uuid(text).map(|u| (u, WideForm::Uuid)))
    } else if n == ULID_TEXT_LEN {
        Some(parse_ulid(text).map(|u| (u, WideForm::Ulid)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_9562_appendix_a6() {
        let u = compose_uuid7(1_645_557_742_000, 0xCC3, 0x18C4_DC0C_0C07_398F).unwrap();
        assert_eq!(format_uuid(u), "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
        assert_eq!(
            decompose_uuid7(u).unwrap(),
            (1_645_557_742_000, 0xCC3, 0x18C4_DC0C_0C07_398F)
        );
        assert_eq!(parse_uuid("017F22E2-79B0-7CC3-98C4-DC0C0C07398F").unwrap(), u);
        assert_eq!(parse_uuid("017f22e279b07cc398c4dc0c0c07398f").unwrap(), u);
    }

    #[test]
    fn the_time_a_form_carries_and_the_version_of_a_variant() {
        // ulid/javascript's vector: its bits are a version-13 UUID's, yet a ULID's
        // first 48 bits are its time; read as a UUID they are no time.
        let (u, form) = decode_wide("01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap().unwrap();
        assert_eq!(form.timestamp_ms(crate::Wide(u)).unwrap(), 1_469_918_176_385);
        let (u, form) = decode_wide("01563df3-6481-d676-4c61-efb99302bd5b").unwrap().unwrap();
        assert_eq!(form, WideForm::Uuid);
        assert!(form.timestamp_ms(crate::Wide(u)).is_err());
        let (u, form) = decode_wide("user_01fwhe4ydgfk1shh6w1g60eecf").unwrap().unwrap();
        assert_eq!(form.timestamp_ms(crate::Wide(u)).unwrap(), 1_645_557_742_000);
        // PostgreSQL 18's uuid_extract_version: NULL unless the variant is RFC 9562's.
        assert_eq!(rfc_uuid_version(u), Some(7));
        assert_eq!(rfc_uuid_version(0), None);
        assert_eq!(rfc_uuid_version(u128::MAX), None);
    }

    #[test]
    fn ulid_javascript_vector_is_a_byte_copy() {
        assert_eq!(
            format_uuid(parse_ulid("01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap()),
            "01563df3-6481-d676-4c61-efb99302bd5b"
        );
        assert_eq!(
            format_ulid(parse_uuid("01563df3-6481-d676-4c61-efb99302bd5b").unwrap()),
            "01ARYZ6S41TSV4RRFFQ69G5FAV"
        );
        assert_eq!(
            parse_ulid("01aryz6s41tsv4rrffq69g5fav").unwrap(),
            parse_ulid("01ARYZ6S41TSV4RRFFQ69G5FAV").unwrap()
        );
    }

    #[test]
    fn parts_out_of_range_name_their_field() {
        for (r, field) in [
            (compose_uuid7(1 << 48, 0, 0), "ms"),
            (compose_uuid7(0, 0x1000, 0), "rand_a"),
            (compose_uuid7(0, 0, 1 << 62), "rand_b"),
        ] {
            let e = r.unwrap_err();
            assert_eq!(e.details().field, Some(field), "{e}");
        }
    }

    #[test]
    fn ulid_overflow_and_aliases() {
        assert_eq!(parse_ulid("7ZZZZZZZZZZZZZZZZZZZZZZZZZ").unwrap(), u128::MAX);
        let e = parse_ulid("80000000000000000000000000").unwrap_err();
        assert_eq!(e.details().position, Some(0));
        assert_eq!(parse_ulid("0000000000000000000000000I").unwrap(), 1);
        assert_eq!(parse_ulid("0000000000000000000000000o").unwrap(), 0);
        assert_eq!(
            parse_ulid("0000000000000000000000000U").unwrap_err().details().position,
            Some(25)
        );
    }

    #[test]
    fn decode_wide_says_the_form_and_leaves_64_bit_text_alone() {
        let (u, form) = decode_wide("017f22e2-79b0-7cc3-98c4-dc0c0c07398f").unwrap().unwrap();
        assert_eq!(
            (format_ulid(u), form),
            ("01FWHE4YDGFK1SHH6W1G60EECF".into(), WideForm::Uuid)
        );
        assert_eq!(
            decode_wide("01FWHE4YDGFK1SHH6W1G60EECF").unwrap().unwrap(),
            (u, WideForm::Ulid)
        );
        assert_eq!(
            decode_wide("user_01fwhe4ydgfk1shh6w1g60eecf").unwrap().unwrap(),
            (u, WideForm::TypeId("user".into()))
        );
        for text in ["1234567890123456789", "0x1f", "0000000000abc", "ffffffffffffffff"] {
            assert!(decode_wide(text).is_none(), "{text}");
        }
        assert!(decode_wide("user_01FWHE4YDGFK1SHH6W1G60EECF").unwrap().is_err());
        assert!(decode_wide("0000000000_").is_none(), "a bad base62 ID, for decode_auto");
        // The TypeID spec's prefix-spaces and suffix-spaces: refused, as parse_typeid does.
        for text in [
            "  prefix_00000000000000000000000000",
            "prefix_1234567890123456789012345 ",
            " 017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        ] {
            assert!(!matches!(decode_wide(text), Some(Ok(_))), "{text:?}");
            assert!(crate::Wide::parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn typeid_positions_count_the_whole_text() {
        let e = parse_typeid("user_0000000000000000000000000U").unwrap_err();
        assert_eq!(e.details().position, Some(30), "{e}");
        let e = parse_typeid("user_0000000000000000000000000").unwrap_err();
        assert_eq!(e.details().position, Some(30), "{e}");
        assert_eq!(
            parse_typeid("a_b_00000000000000000000000001").unwrap(),
            ("a_b".into(), 1)
        );
    }
}
