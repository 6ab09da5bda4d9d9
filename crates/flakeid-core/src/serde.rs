//! serde for IDs (feature `serde`), the way JSON users need them.
//!
//! - A 64-bit ID is a `u64`, and serde writes a `u64` as a JSON number, which
//!   JavaScript's `JSON.parse` rounds past 2^53 (every Snowflake ID of this decade).
//!   Mark ID fields `#[serde(with = "flakeid_core::serde::id")]` to write them as
//!   decimal strings, the rule the framework adapters' JSON follows; reading takes
//!   a string or a number. `id::option` does the same for `Option<u64>`. A field
//!   left unmarked stays a number: that is the opt-in for numbers.
//! - [`Wide`] (a UUIDv7, ULID or TypeID's 128 bits) is its UUID text in
//!   human-readable formats and its 16 bytes in binary ones, as the `uuid` crate's
//!   `Uuid` is; reading text takes any of the three forms. `ulid` writes it as
//!   ULID text instead.
//!
//! ```
//! use flakeid_core::Wide;
//!
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Order {
//!     #[serde(with = "flakeid_core::serde::id")]
//!     id: u64,
//!     #[serde(with = "flakeid_core::serde::id::option")]
//!     parent: Option<u64>,
//!     document: Wide,
//! }
//!
//! let order = Order {
//!     id: 7_298_543_162_734_645_248,
//!     parent: None,
//!     document: Wide::parse("01890a5d-ac96-774b-bcce-b302099a8057")?.0,
//! };
//! let json = serde_json::to_string(&order).unwrap();
//! assert_eq!(
//!     json,
//!     r#"{"id":"7298543162734645248","parent":null,"document":"01890a5d-ac96-774b-bcce-b302099a8057"}"#
//! );
//! assert_eq!(serde_json::from_str::<Order>(&json).unwrap(), order);
//! # Ok::<(), flakeid_core::Error>(())
//! ```

use crate::Wide;
use ::serde::de::{self, Deserializer, Visitor};
use ::serde::{Deserialize, Serialize, Serializer};
use core::fmt;

impl Serialize for Wide {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.to_uuid())
        } else {
            s.serialize_bytes(&self.to_bytes())
        }
    }
}

impl<'de> Deserialize<'de> for Wide {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Wide, D::Error> {
        struct WideVisitor;
        impl Visitor<'_> for WideVisitor {
            type Value = Wide;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a UUID, ULID or TypeID as text, or 16 bytes")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Wide, E> {
                Wide::parse(text).map(|(w, _)| w).map_err(E::custom)
            }
            fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Wide, E> {
                Wide::from_slice(bytes).map_err(E::custom)
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(WideVisitor)
        } else {
            d.deserialize_bytes(WideVisitor)
        }
    }
}

/// A 64-bit ID as a decimal string: `#[serde(with = "flakeid_core::serde::id")]`.
/// Reading takes a string of decimal digits or a number (0 to 2^64 − 1).
pub mod id {
    use super::*;

    /// Writes `id` as a decimal string.
    pub fn serialize<S: Serializer>(id: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    /// Reads a decimal string or a number.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(IdVisitor)
    }

    struct IdVisitor;
    impl Visitor<'_> for IdVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an ID: a string of decimal digits or a number, 0 to 18446744073709551615")
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<u64, E> {
            // Digits only: `str::parse` would also take a leading '+'.
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(E::invalid_value(de::Unexpected::Str(text), &self));
            }
            text.parse()
                .map_err(|_| E::invalid_value(de::Unexpected::Str(text), &self))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
        }
    }

    /// `Option<u64>` as a decimal string or null:
    /// `#[serde(with = "flakeid_core::serde::id::option")]`.
    pub mod option {
        use super::*;

        /// Writes `Some(id)` as a decimal string, `None` as null.
        pub fn serialize<S: Serializer>(id: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
            match id {
                Some(id) => s.collect_str(id),
                None => s.serialize_none(),
            }
        }

        /// Reads null, a decimal string or a number.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            struct OptionVisitor;
            impl<'de> Visitor<'de> for OptionVisitor {
                type Value = Option<u64>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("null or an ID: a string of decimal digits or a number")
                }
                fn visit_none<E: de::Error>(self) -> Result<Option<u64>, E> {
                    Ok(None)
                }
                fn visit_unit<E: de::Error>(self) -> Result<Option<u64>, E> {
                    Ok(None)
                }
                fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
                    super::deserialize(d).map(Some)
                }
            }
            d.deserialize_option(OptionVisitor)
        }
    }
}

/// A [`Wide`] as ULID text: `#[serde(with = "flakeid_core::serde::ulid")]`. Reading
/// takes any of the three text forms.
pub mod ulid {
    use super::*;

    /// Writes `w` as its 26-character ULID.
    pub fn serialize<S: Serializer>(w: &Wide, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&w.to_ulid())
    }

    /// Reads a UUID, ULID or TypeID as text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Wide, D::Error> {
        Wide::deserialize(d)
    }
}
