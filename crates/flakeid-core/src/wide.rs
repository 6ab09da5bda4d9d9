//! The 128-bit family's value, [`Wide`]: the 128 bits that a UUIDv7, a ULID and a
//! TypeID share, read from any of their text forms (or bytes), with its time,
//! version and forms out. Each runtime's spelling of the family's functions is the
//! vectors program's table (`tests/vectors/wide.json`, `tests/vectors/wide.md`).

use crate::error::Result;
use crate::uuid7::{self, WideForm};
use alloc::string::{String, ToString};
use core::fmt;
use core::str::FromStr;

/// Most UUIDv7s one batch call returns where each ID becomes an object of the
/// runtime (Python's `uuid7s`, a list of `uuid.UUID`; Node's and wasm's, an array of
/// strings): 2^20, about 140 MiB of Python objects and 60 MiB of JS strings, so
/// that a batch fits a constrained process (a container, `--max-old-space-size`)
/// and one beyond it is refused before anything is allocated, where
/// [`MAX_BATCH`](crate::MAX_BATCH) (2^27, 16-byte values the caller holds) would
/// take 17 GiB of Python objects. Larger runs: call again, or fill a buffer
/// (`fill_uuid7`, C's `flakeid_uuid_next_many`).
pub const MAX_UUID7_BATCH: usize = 1 << 20;

/// The one rule for a batch of UUIDv7 objects or text (`uuid7s(n)` in Python, Node
/// and wasm): `n` in `0..=`[`MAX_UUID7_BATCH`], a `Config` error on `n` naming the
/// limit and the form otherwise, whatever integer the binding received.
pub fn check_uuid7_batch(n: i128) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n <= MAX_UUID7_BATCH => Ok(n),
        _ => Err(uuid7_batch_error(n)),
    }
}

#[cold]
fn uuid7_batch_error(n: i128) -> crate::Error {
    // 64-bit formatting only: i128's would add kilobytes to the wasm build.
    let got = match (i64::try_from(n), u64::try_from(n)) {
        (Ok(v), _) => v.to_string(),
        (_, Ok(v)) => v.to_string(),
        _ if n < 0 => "a number below -2^63".to_string(),
        _ => "a number of 2^64 or more".to_string(),
    };
    crate::Error::config(
        "n",
        format!(
            "n must be in 0..={MAX_UUID7_BATCH} for a batch of UUIDv7 objects or text (one object per ID); \
             call again for more, got {got}"
        ),
    )
}

/// A 128-bit ID of the family: the same bits as a UUID (of any version; a UUIDv7
/// when it came from a generator), a ULID, or a TypeID's suffix. Ordered as the
/// unsigned integer (so by time first, for the family's IDs).
///
/// ```
/// use flakeid_core::{Wide, WideForm};
/// let (w, form) = Wide::parse("user_01h455vb4pex5vsknk084sn02q")?;
/// assert_eq!(form, WideForm::TypeId("user".into()));
/// assert_eq!(w.to_ulid(), "01H455VB4PEX5VSKNK084SN02Q");
/// assert_eq!(w.timestamp_ms(), 1_688_096_058_518);
/// assert_eq!(w.to_string(), "01890a5d-ac96-774b-bcce-b302099a8057");
/// assert_eq!("01890a5d-ac96-774b-bcce-b302099a8057".parse::<Wide>()?, w);
/// # Ok::<(), flakeid_core::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Wide(pub u128);

impl Wide {
    /// The largest Unix millisecond a UUIDv7 (and a ULID) holds: 48 bits, the year 10889.
    pub const MAX_MS: u64 = uuid7::UUID7_MAX_MS;
    /// The width of a UUIDv7's `rand_a`, the 12 bits after the version.
    pub const RAND_A_BITS: u32 = uuid7::UUID7_RAND_A_BITS;
    /// The width of a UUIDv7's `rand_b`, the 62 bits after the variant.
    pub const RAND_B_BITS: u32 = uuid7::UUID7_RAND_B_BITS;
    /// Characters in a UUID's hyphenated text (`8-4-4-4-12`).
    pub const UUID_TEXT_LEN: usize = uuid7::UUID_TEXT_LEN;
    /// Characters in a ULID (and a TypeID's suffix).
    pub const ULID_TEXT_LEN: usize = uuid7::ULID_TEXT_LEN;
    /// The longest TypeID prefix (spec v0.3).
    pub const TYPEID_PREFIX_MAX: usize = uuid7::TYPEID_PREFIX_MAX;

    /// Reads a UUID (8-4-4-4-12 or 32 hex digits, any case), a ULID (26 Crockford
    /// characters, any case) or a TypeID, saying which form it was; text of none of
    /// their shapes is read as a UUID, whose parse error names the position.
    pub fn parse(text: &str) -> Result<(Wide, WideForm)> {
        match Self::recognize(text) {
            Some(read) => read,
            None => Self::parse_uuid(text).map(|w| (w, WideForm::Uuid)),
        }
    }

    /// Reads a UUID, ULID or TypeID ([`parse`](Self::parse) without the form; also
    /// [`FromStr`]).
    pub fn parse_any(text: &str) -> Result<Wide> {
        Self::parse(text).map(|(w, _)| w)
    }

    /// Reads UUID text only: `8-4-4-4-12`, or its 32 hex digits without hyphens,
    /// in any case.
    pub fn parse_uuid(text: &str) -> Result<Wide> {
        uuid7::parse_uuid(text).map(Wide)
    }

    /// Reads ULID text only: 26 Crockford base32 characters, any case; `I`/`L` are
    /// `1`, `O` is `0`; `U` and anything else is refused; the first character is
    /// at most `7`.
    pub fn parse_ulid(text: &str) -> Result<Wide> {
        uuid7::parse_ulid(text).map(Wide)
    }

    /// Splits a TypeID at its last `_` into its prefix and its 128 bits. Positions
    /// in errors count characters of the whole text.
    pub fn parse_typeid(text: &str) -> Result<(String, Wide)> {
        uuid7::parse_typeid(text).map(|(prefix, bits)| (prefix, Wide(bits)))
    }

    /// Reads a UUID, ULID or TypeID, saying which; `None` when the text has none of
    /// their shapes (36 characters, 32 hex digits, 26 characters, or more than 26
    /// with a `_`), which no 64-bit text form has (they are at most 20 characters:
    /// a shorter text with a `_` is a bad 64-bit ID, and `decode_auto` says where).
    pub fn recognize(text: &str) -> Option<Result<(Wide, WideForm)>> {
        uuid7::decode_wide(text).map(|read| read.map(|(bits, form)| (Wide(bits), form)))
    }

    /// The Unix millisecond that text of any form carries: a ULID's and a TypeID's
    /// first 48 bits always (their specs make them the time); a UUID's only when it
    /// is a UUIDv7 (another version is a parse error saying which).
    pub fn timestamp_ms_of_text(text: &str) -> Result<u64> {
        let (w, form) = Self::parse(text)?;
        form.timestamp_ms(w)
    }

    /// Reads 16 big-endian bytes (a `Parse` error for another length).
    pub fn from_slice(bytes: &[u8]) -> Result<Wide> {
        uuid7::uuid_from_bytes(bytes).map(Wide)
    }

    /// The UUIDv7 of Unix millisecond `ms` with `rand_a` (12 bits) and `rand_b` (62
    /// bits): RFC 9562 §5.7's layout, version 7, variant `10`. Each part is checked
    /// against its width: a `Config` error names the field and its range.
    pub fn compose_uuid7(ms: u64, rand_a: u16, rand_b: u64) -> Result<Wide> {
        uuid7::compose_uuid7(ms, rand_a, rand_b).map(Wide)
    }

    /// The first and last value whose time is within `start_ms..=end_ms`, for
    /// `WHERE id BETWEEN first AND last` (UUIDv7 and ULID alike: the bits after the
    /// time run from all zeros to all ones).
    pub fn uuid7_range(start_ms: u64, end_ms: u64) -> Result<(Wide, Wide)> {
        uuid7::uuid7_range(start_ms, end_ms).map(|(first, last)| (Wide(first), Wide(last)))
    }

    /// Checks a TypeID prefix: at most [`TYPEID_PREFIX_MAX`](Self::TYPEID_PREFIX_MAX)
    /// of `a-z` and `_`, starting and ending with a letter, or empty. The error is a
    /// `Config` error on `prefix` (it is a program's argument, not text read in).
    pub fn check_typeid_prefix(prefix: &str) -> Result<()> {
        uuid7::check_typeid_prefix(prefix)
    }

    /// The 16 big-endian bytes.
    pub fn to_bytes(self) -> [u8; 16] {
        uuid7::uuid_to_bytes(self.0)
    }

    /// The first 48 bits as a Unix millisecond: a ULID's time, and a UUIDv7's.
    pub fn timestamp_ms(self) -> u64 {
        uuid7::ulid_timestamp_ms(self.0)
    }

    /// The Unix millisecond of a UUIDv7 (another version is a `Parse` error).
    pub fn uuid7_timestamp_ms(self) -> Result<u64> {
        uuid7::uuid7_timestamp_ms(self.0)
    }

    /// The version nibble (bits 48–51), whatever the variant.
    pub fn version(self) -> u8 {
        uuid7::uuid_version(self.0)
    }

    /// The version, for an RFC 9562 variant (`10`) only: what PostgreSQL 18's
    /// `uuid_extract_version` answers (`None` for the nil and max UUIDs, GUIDs).
    pub fn rfc_version(self) -> Option<u8> {
        uuid7::rfc_uuid_version(self.0)
    }

    /// A UUIDv7's parts: `(unix_ms, rand_a, rand_b)`, what
    /// [`compose_uuid7`](Self::compose_uuid7) took (another version is a `Parse`
    /// error naming the bit).
    pub fn decompose_uuid7(self) -> Result<(u64, u16, u64)> {
        uuid7::decompose_uuid7(self.0)
    }

    /// The lowercase 8-4-4-4-12 text (also [`Display`](fmt::Display)).
    pub fn to_uuid(self) -> String {
        uuid7::format_uuid(self.0)
    }

    /// [`to_uuid`](Self::to_uuid)'s 36 ASCII bytes, with no allocation: for a
    /// binding that writes a batch's text into one buffer.
    pub fn to_uuid_ascii(self) -> [u8; uuid7::UUID_TEXT_LEN] {
        uuid7::uuid_text(self.0)
    }

    /// The upper-case ULID text (26 characters).
    pub fn to_ulid(self) -> String {
        uuid7::format_ulid(self.0)
    }

    /// The TypeID with `prefix` (checked: a `Config` error names `prefix`); just the
    /// lowercase ULID text when `prefix` is empty.
    pub fn to_typeid(self, prefix: &str) -> Result<String> {
        uuid7::format_typeid(prefix, self.0)
    }
}

impl WideForm {
    /// The Unix millisecond a value read in this form carries: a ULID's and a
    /// TypeID's first 48 bits always (their specs make them the time); a UUID's
    /// only when it is a UUIDv7 (another version is a parse error saying which).
    pub fn timestamp_ms(&self, value: Wide) -> Result<u64> {
        match self {
            WideForm::Uuid => value.uuid7_timestamp_ms(),
            WideForm::Ulid | WideForm::TypeId(_) => Ok(value.timestamp_ms()),
        }
    }
}

impl From<u128> for Wide {
    fn from(bits: u128) -> Self {
        Wide(bits)
    }
}

impl From<Wide> for u128 {
    fn from(w: Wide) -> Self {
        w.0
    }
}

impl From<[u8; 16]> for Wide {
    fn from(bytes: [u8; 16]) -> Self {
        Wide(u128::from_be_bytes(bytes))
    }
}

/// The UUID text.
impl fmt::Display for Wide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_uuid())
    }
}

/// The UUID text, as `Wide(…)`.
impl fmt::Debug for Wide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Wide({})", self.to_uuid())
    }
}

/// Any of the three text forms ([`Wide::parse`]).
impl FromStr for Wide {
    type Err = crate::Error;
    fn from_str(text: &str) -> Result<Wide> {
        Wide::parse_any(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads_to_the_same_bits() {
        let w = Wide(0x0189_0a5d_ac96_774b_bcce_b302_099a_8057);
        for text in [
            w.to_uuid(),
            w.to_ulid(),
            w.to_typeid("user").unwrap(),
            w.to_ulid().to_lowercase(),
        ] {
            assert_eq!(Wide::parse(&text).unwrap().0, w, "{text}");
            assert_eq!(text.parse::<Wide>().unwrap(), w, "{text}");
        }
        assert_eq!(Wide::from_slice(&w.to_bytes()).unwrap(), w);
        assert_eq!(Wide::from(w.to_bytes()), w);
        assert_eq!(w.version(), 7);
        assert_eq!(w.uuid7_timestamp_ms().unwrap(), w.timestamp_ms());
        assert!(Wide::parse_uuid(&w.to_ulid()).is_err(), "UUID text only");
        assert_eq!(Wide::parse_any(&w.to_ulid()).unwrap(), w);
        assert_eq!(Wide::timestamp_ms_of_text(&w.to_ulid()).unwrap(), w.timestamp_ms());
    }

    #[test]
    fn a_version_4_uuid_has_no_uuid7_time_but_a_ulid_time() {
        let v4 = Wide(0x0189_0a5d_ac96_474b_bcce_b302_099a_8057);
        assert!(v4.uuid7_timestamp_ms().is_err());
        assert!(Wide::timestamp_ms_of_text(&v4.to_uuid()).is_err());
        assert_eq!(Wide::timestamp_ms_of_text(&v4.to_ulid()).unwrap(), v4.timestamp_ms());
    }
}
