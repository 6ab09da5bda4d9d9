//! Text and byte forms of an ID. The text forms are fixed-width and their alphabets
//! are in ASCII order, so sorting the text sorts the IDs.

use crate::error::{Error, Result};
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

/// An ID's outward form. The default — what every binding's `encode`/`decode` use
/// when not told — is `Base62`: compact, fixed-width and sorting like the ID (the
/// reasons to encode at all); decimal, the JSON form, is asked for by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
///
/// ```
/// use flakeid_core::{Encoding, decode, encode};
///
/// let id = 910_499_571_847_892_992_u64;
/// let text = encode(id, Encoding::Base62); // 11 characters that sort like the IDs
/// assert_eq!(text.len(), 11);
/// assert_eq!(decode(&text, Encoding::Base62)?, id);
/// assert_eq!("hex".parse::<Encoding>()?, Encoding::Hex);
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub enum Encoding {
    /// Base 10, no padding (for JSON, where a JS `number` would lose precision).
    Decimal,
    /// 16 lowercase hex digits.
    Hex,
    /// 13 Crockford base32 characters (`0-9A-Z` less `I L O U`); decoding ignores case
    /// and reads `I`/`L` as 1 and `O` as 0.
    Base32,
    /// 11 characters of `0-9A-Za-z`.
    #[default]
    Base62,
}

impl Encoding {
    /// Every encoding, in a fixed order.
    pub const ALL: [Encoding; 4] = [Encoding::Decimal, Encoding::Hex, Encoding::Base32, Encoding::Base62];

    /// The encoding's name, as [`FromStr`](core::str::FromStr) reads it (also its [`Display`](fmt::Display)).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Decimal => "decimal",
            Encoding::Hex => "hex",
            Encoding::Base32 => "base32",
            Encoding::Base62 => "base62",
        }
    }

    /// Characters in the encoded form (`None` for decimal, which is not padded).
    pub fn width(self) -> Option<usize> {
        match self {
            Encoding::Decimal => None,
            Encoding::Hex => Some(16),
            Encoding::Base32 => Some(13),
            Encoding::Base62 => Some(11),
        }
    }
}

impl core::str::FromStr for Encoding {
    type Err = Error;
    /// The encoding named `name` (`decimal`, `hex`, `base32`, `base62`; case and
    /// surrounding spaces ignored); a configuration error naming `encoding` otherwise.
    fn from_str(name: &str) -> Result<Encoding> {
        match name.trim().to_ascii_lowercase().as_str() {
            "decimal" | "int" | "dec" => Ok(Encoding::Decimal),
            "hex" => Ok(Encoding::Hex),
            "base32" => Ok(Encoding::Base32),
            "base62" => Ok(Encoding::Base62),
            _ => Err(Error::config(
                "encoding",
                format!("encoding must be one of decimal, hex, base32, base62, got {name:?}"),
            )),
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";
/// Crockford's base32 alphabet (upper case): the 64-bit `base32` form and ULIDs.
pub(crate) const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The longest encoded form (decimal `u64::MAX` has 20 digits).
pub const MAX_ENCODED_LEN: usize = 20;

/// Encodes into a stack buffer; returns the used prefix length. No allocation.
pub fn encode_into(id: u64, encoding: Encoding, out: &mut [u8; MAX_ENCODED_LEN]) -> usize {
    match encoding {
        Encoding::Decimal => {
            let mut tmp = [0u8; MAX_ENCODED_LEN];
            let mut n = id;
            let mut i = MAX_ENCODED_LEN;
            loop {
                i -= 1;
                tmp[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            let len = MAX_ENCODED_LEN - i;
            out[..len].copy_from_slice(&tmp[i..]);
            len
        }
        Encoding::Hex => fixed(id, 16, 4, |d| HEX[d as usize], out),
        Encoding::Base32 => fixed(id, 13, 5, |d| CROCKFORD[d as usize], out),
        Encoding::Base62 => {
            let mut n = id;
            for slot in out[..11].iter_mut().rev() {
                *slot = BASE62[(n % 62) as usize];
                n /= 62;
            }
            11
        }
    }
}

fn fixed(id: u64, width: usize, bits: u32, digit: impl Fn(u64) -> u8, out: &mut [u8; MAX_ENCODED_LEN]) -> usize {
    let m = (1u64 << bits) - 1;
    for (i, slot) in out[..width].iter_mut().enumerate() {
        let shift = bits * (width - 1 - i) as u32;
        *slot = digit(if shift >= 64 { 0 } else { (id >> shift) & m });
    }
    width
}

/// Encodes an ID as text.
///
/// ```
/// use flakeid_core::{encode, decode, Encoding};
/// assert_eq!(encode(910499571847892992, Encoding::Base62), "15G63YLn9Ae");
/// assert_eq!(decode("15G63YLn9Ae", Encoding::Base62).unwrap(), 910499571847892992);
/// ```
pub fn encode(id: u64, encoding: Encoding) -> String {
    let mut buf = [0u8; MAX_ENCODED_LEN];
    let len = encode_into(id, encoding, &mut buf);
    buf[..len].iter().map(|&b| b as char).collect()
}

/// At most this many characters of offending input appear in an error message
/// (a 3 MB line must not become a 3 MB error).
const SHOWN_CHARS: usize = 40;

/// `text` for an error message: quoted, and cut to 40 characters (a 3 MB line
/// must not become a 3 MB error). Public for the bindings' glue, whose messages
/// show offending text the same way.
pub fn shown(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(SHOWN_CHARS).collect();
        format!("{head:?}… ({n} characters)")
    }
}

/// Parses text back into an ID; errors name the position (a character index) and
/// the character.
pub fn decode(text: &str, encoding: Encoding) -> Result<u64> {
    let chars = text.chars().count();
    if let Some(width) = encoding.width()
        && chars != width
    {
        return Err(Error::parse(
            chars.min(width),
            format!(
                "{encoding} IDs are exactly {width} characters, got {chars} ({})",
                shown(text)
            ),
        ));
    }
    match encoding {
        Encoding::Decimal => decode_radix(text, 10, |c| c.is_ascii_digit().then(|| u64::from(c - b'0')), "0-9"),
        Encoding::Hex => decode_radix(text, 16, |c| (c as char).to_digit(16).map(u64::from), "0-9a-f"),
        Encoding::Base32 => decode_radix(text, 32, crockford_value, "Crockford base32 (0-9, A-Z less U)"),
        Encoding::Base62 => decode_radix(
            text,
            62,
            |c| BASE62.iter().position(|&b| b == c).map(|p| p as u64),
            "0-9A-Za-z",
        ),
    }
}

fn crockford_value(c: u8) -> Option<u64> {
    let c = c.to_ascii_uppercase();
    let c = match c {
        b'I' | b'L' => b'1',
        b'O' => b'0',
        other => other,
    };
    CROCKFORD.iter().position(|&b| b == c).map(|p| p as u64)
}

fn decode_radix(text: &str, radix: u64, value: impl Fn(u8) -> Option<u64>, alphabet: &str) -> Result<u64> {
    if text.is_empty() {
        return Err(Error::parse(0, "empty text is not an ID"));
    }
    let mut acc: u64 = 0;
    for (pos, ch) in text.chars().enumerate() {
        let digit = u8::try_from(ch).ok().and_then(&value).ok_or_else(|| {
            Error::parse(
                pos,
                format!(
                    "invalid character {ch:?} at position {pos} in {} (expected {alphabet})",
                    shown(text)
                ),
            )
        })?;
        acc = acc
            .checked_mul(radix)
            .and_then(|a| a.checked_add(digit))
            .ok_or_else(|| {
                Error::parse(
                    pos,
                    format!(
                        "{} is larger than the largest 64-bit ID (18446744073709551615), overflowing at position {pos}",
                        shown(text)
                    ),
                )
            })?;
    }
    Ok(acc)
}

/// Reads an ID in whichever text form it is in, and says which — or refuses when
/// the text does not say. The forms: `0x` + 1 to 16 hex digits; the fixed-width
/// `hex` (16), `base32` (13) and `base62` (11 characters); decimal. They overlap —
/// 40% of `instagram` hex IDs are all digits, IDs near an epoch are 11-, 13- or
/// 16-digit decimals, a base62 ID may begin `0x` — so the text is accepted only when
/// exactly one form reads it; otherwise it is an [`Error::Parse`] asking which was
/// meant ([`decode`] with the encoding; the CLI's `--from`, the service's `from=`).
/// Digits with a leading zero (`042`, `0000000000000042`) always ask: a zero-padded
/// decimal is as likely as hex or a fixed-width form. Never a guess, so
/// never a different ID.
pub fn decode_auto(text: &str) -> Result<(u64, Encoding)> {
    let t = text.trim();
    let n = t.chars().count();
    let mut found: Vec<(u64, Encoding, &str)> = Vec::with_capacity(3);
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))
        && (1..=16).contains(&hex.len())
        && let Ok(id) = decode(&format!("{hex:0>16}"), Encoding::Hex)
    {
        found.push((id, Encoding::Hex, "0x hex"));
    }
    let fixed = match n {
        16 => Some(Encoding::Hex),
        13 => Some(Encoding::Base32),
        11 => Some(Encoding::Base62),
        _ => None,
    };
    if let Some(enc) = fixed
        && let Ok(id) = decode(t, enc)
    {
        found.push((id, enc, enc.name()));
    }
    let digits = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let zero_padded = digits && t.len() > 1 && t.starts_with('0');
    if digits && let Ok(id) = decode(t, Encoding::Decimal) {
        found.push((
            id,
            Encoding::Decimal,
            if zero_padded { "zero-padded int" } else { "int" },
        ));
    }
    match found.as_slice() {
        [(id, enc, _)] if !zero_padded => Ok((*id, *enc)),
        [] | [_] if zero_padded => Err(Error::parse(
            0,
            format!(
                "{} is ambiguous: a zero-padded decimal, or another form; say which (decode with that Encoding; \
                 flakeid decode --from int|hex|base32|base62; GET /v1/decode/ID?from=int)",
                shown(t)
            ),
        )),
        [] => Err(match fixed {
            // The likeliest meaning's own error names the bad character.
            Some(enc) => decode(t, enc).err().unwrap_or_else(|| Error::parse(0, "not an ID")),
            None if t.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty() => decode(t, Encoding::Decimal)
                .err()
                .unwrap_or_else(|| Error::parse(0, "not an ID")),
            None => Error::parse(
                0,
                format!(
                    "{} is not an ID: expected decimal digits, 0x and hex, 16 hex digits, 13 base32 or 11 base62 \
                     characters",
                    shown(t)
                ),
            ),
        }),
        several => {
            let names: Vec<&str> = several.iter().map(|f| f.2).collect();
            let forms = names
                .iter()
                .map(|n| n.trim_start_matches("0x ").trim_start_matches("zero-padded "))
                .collect::<Vec<_>>()
                .join("|");
            let first = forms.split('|').next().unwrap_or("int").to_string();
            Err(Error::parse(
                0,
                format!(
                    "{} is ambiguous: it reads as {}; say which (decode with that Encoding; flakeid decode --from \
                     {forms}; GET /v1/decode/ID?from={first})",
                    shown(t),
                    names.join(" or "),
                ),
            ))
        }
    }
}

/// The 8-byte big-endian form (flake-idgen's `Buffer`).
pub fn to_bytes(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

/// Parses the 8-byte big-endian form.
pub fn from_bytes(bytes: &[u8]) -> Result<u64> {
    let arr: [u8; 8] = bytes.try_into().map_err(|_| {
        Error::parse(
            bytes.len().min(8),
            format!("an ID is exactly 8 bytes, got {}", bytes.len()),
        )
    })?;
    Ok(u64::from_be_bytes(arr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_round_trip_through_their_names() {
        for e in Encoding::ALL {
            assert_eq!(e.to_string(), e.name());
            assert_eq!(e.to_string().parse::<Encoding>().ok(), Some(e));
            assert_eq!(e.to_string().to_uppercase().parse::<Encoding>().ok(), Some(e));
        }
        match "nope".parse::<Encoding>() {
            Err(Error::Config { field, message }) => assert_eq!(
                (field, message.as_str()),
                (
                    "encoding",
                    r#"encoding must be one of decimal, hex, base32, base62, got "nope""#
                )
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn roundtrip_and_order_on_edges_and_a_sweep() {
        let mut ids: Vec<u64> = vec![0, 1, 9, 10, 61, 62, 63, u64::MAX - 1, u64::MAX, 1 << 63, (1 << 63) - 1];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ids.push(x >> (x % 64));
        }
        ids.sort_unstable();
        ids.dedup();
        for enc in Encoding::ALL {
            let texts: Vec<String> = ids.iter().map(|&id| encode(id, enc)).collect();
            for (id, t) in ids.iter().zip(&texts) {
                assert_eq!(decode(t, enc).unwrap(), *id, "{enc} {t}");
                if let Some(w) = enc.width() {
                    assert_eq!(t.len(), w);
                }
            }
            if enc != Encoding::Decimal {
                assert!(
                    texts.windows(2).all(|w| w[0] < w[1]),
                    "{enc} text must sort like the integer"
                );
            }
        }
    }

    #[test]
    fn edges_have_known_forms() {
        assert_eq!(encode(u64::MAX, Encoding::Hex), "ffffffffffffffff");
        assert_eq!(encode(u64::MAX, Encoding::Base32), "FZZZZZZZZZZZZ");
        assert_eq!(encode(u64::MAX, Encoding::Base62), "LygHa16AHYF");
        assert_eq!(encode(0, Encoding::Base62), "00000000000");
        assert_eq!(encode(u64::MAX, Encoding::Decimal), "18446744073709551615");
        assert_eq!(decode("fzzzzzzzzzzzz", Encoding::Base32).unwrap(), u64::MAX);
        assert_eq!(
            decode("0000000000OIL", Encoding::Base32).unwrap(),
            decode("0000000000011", Encoding::Base32).unwrap()
        );
    }

    #[test]
    fn bad_text_names_position_and_character() {
        let cases = [
            ("00000000000000g0", Encoding::Hex, 14),
            ("0000000000000U", Encoding::Base32, 13),
            ("000000000000U", Encoding::Base32, 12),
            ("0000000000_", Encoding::Base62, 10),
            ("LygHa16AHYG", Encoding::Base62, 10),
            ("G000000000000", Encoding::Base32, 12),
            ("18446744073709551616", Encoding::Decimal, 19),
            ("12a", Encoding::Decimal, 2),
            ("", Encoding::Decimal, 0),
            ("abc", Encoding::Hex, 3),
        ];
        for (text, enc, pos) in cases {
            match decode(text, enc) {
                Err(Error::Parse { position, message }) => assert_eq!(position, pos, "{text}: {message}"),
                other => panic!("{text:?} as {enc}: expected a parse error, got {other:?}"),
            }
        }
        let Err(Error::Parse { message, .. }) = decode("0000000000_", Encoding::Base62) else {
            unreachable!()
        };
        assert!(message.contains("'_'") && message.contains("position 10"), "{message}");
        assert_eq!(from_bytes(&to_bytes(42)).unwrap(), 42);
        assert!(from_bytes(&[1, 2, 3]).is_err());
    }
}
