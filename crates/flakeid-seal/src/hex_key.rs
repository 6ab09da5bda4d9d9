//! Keys written as hex: what `--key-file`, `FLAKEID_SEAL_KEY`, `--seal-key-file` and
//! the `flakeid.seal_key` GUC hold (`openssl rand -hex 32`). One reader, so that
//! every front end (the CLI, `flakeid serve`, the PostgreSQL extension) accepts the
//! same text and reports it the same way.

use crate::sealer::Sealer;
use flakeid_core::{Error, Layout, Result};
use std::path::Path;
use zeroize::{Zeroize, Zeroizing};

impl Sealer {
    /// A sealer whose key is given as hex digits (either case); whitespace anywhere
    /// is ignored, so a key file may end in a newline or group its digits.
    ///
    /// Errors ([`Error::Config`] naming `key`): a character that is neither a hex
    /// digit nor whitespace (by its position, never its value); other than 32, 48
    /// or 64 digits; and those of [`Sealer::new`]. The decoded key is wiped from
    /// memory before this returns.
    ///
    /// ```
    /// use flakeid_core::Layout;
    /// use flakeid_seal::Sealer;
    /// let sealer = Sealer::from_hex_key("000102030405060708090a0b0c0d0e0f\n", &Layout::SNOWFLAKE)?;
    /// assert_eq!(sealer.unseal(sealer.seal(42)?)?, 42);
    /// # Ok::<(), flakeid_core::Error>(())
    /// ```
    pub fn from_hex_key(hex: &str, layout: &Layout) -> Result<Sealer> {
        let mut key = [0u8; 32];
        let result = decode(hex, &mut key).and_then(|len| Sealer::new(&key[..len], layout));
        key.zeroize();
        result
    }

    /// A sealer whose key is the hex text of the file at `path` (as
    /// [`from_hex_key`](Sealer::from_hex_key) reads it): `flakeid seal --key-file`,
    /// `generate --seal-key-file` and `serve --seal-key-file`. The file's text is
    /// wiped from memory once decoded.
    ///
    /// Errors ([`Error::Config`]): a file that cannot be read, naming `key_file`
    /// and the path (never its contents); those of `from_hex_key`, naming `key`.
    pub fn from_key_file(path: &Path, layout: &Layout) -> Result<Sealer> {
        let text = Zeroizing::new(std::fs::read_to_string(path).map_err(|e| Error::Config {
            field: "key_file",
            message: format!("cannot read the key file {}: {e}", path.display()),
        })?);
        Sealer::from_hex_key(&text, layout)
    }
}

/// Decodes into `out`, returning the byte count; never puts a digit in an error.
fn decode(hex: &str, out: &mut [u8; 32]) -> Result<usize> {
    let mut digits = 0usize;
    for (position, c) in hex.chars().enumerate() {
        if c.is_whitespace() {
            continue;
        }
        let Some(nibble) = c.to_digit(16) else {
            return Err(key_error(format!(
                "key must be hex digits (whitespace is ignored): character {position} is not one"
            )));
        };
        if let Some(byte) = out.get_mut(digits / 2) {
            // to_digit(16) is < 16, so the cast keeps every bit.
            *byte = *byte << 4 | nibble as u8;
        }
        digits += 1;
    }
    if digits % 2 == 1 || !crate::KEY_LENGTHS.contains(&(digits / 2)) {
        return Err(key_error(format!(
            "key must be 32, 48 or 64 hex digits (16, 24 or 32 bytes), got {digits} digits"
        )));
    }
    Ok(digits / 2)
}

fn key_error(message: String) -> Error {
    Error::Config { field: "key", message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_with_whitespace_and_either_case() {
        let mut out = [0u8; 32];
        let text = "00112233 44556677\n8899AABB ccddeeff\n";
        assert_eq!(decode(text, &mut out).unwrap(), 16);
        assert_eq!(
            out[..16],
            [
                0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff
            ]
        );
    }

    #[test]
    fn refuses_without_echoing_the_key() {
        for bad in ["0Q", "abc", &"ab".repeat(17), &"ab".repeat(33), ""] {
            let err = decode(bad, &mut [0; 32]).unwrap_err();
            let Error::Config { field, message } = &err else {
                panic!("{err:?}")
            };
            assert_eq!(*field, "key");
            assert!(!message.contains("abab") && !message.contains('Q'), "{message}");
        }
    }

    #[test]
    fn key_files_are_read_or_named() {
        let dir = std::env::temp_dir().join(format!("flakeid-seal-keyfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.key");
        std::fs::write(&good, "000102030405060708090a0b0c0d0e0f\n").unwrap();
        let from_file = Sealer::from_key_file(&good, &Layout::SNOWFLAKE).unwrap();
        let from_hex = Sealer::from_hex_key("000102030405060708090a0b0c0d0e0f", &Layout::SNOWFLAKE).unwrap();
        assert_eq!(from_file.seal(42).unwrap(), from_hex.seal(42).unwrap());
        let bad = dir.join("bad.key");
        std::fs::write(&bad, "cafe").unwrap();
        let err = Sealer::from_key_file(&bad, &Layout::SNOWFLAKE).unwrap_err();
        assert!(matches!(err, Error::Config { field: "key", .. }), "{err:?}");
        assert!(!err.to_string().contains("cafe"), "{err}");
        let missing = dir.join("missing.key");
        let err = Sealer::from_key_file(&missing, &Layout::SNOWFLAKE).unwrap_err();
        assert!(matches!(err, Error::Config { field: "key_file", .. }), "{err:?}");
        assert!(err.to_string().contains("missing.key"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
