//! `flakeid seal`, `flakeid unseal` and `generate --seal-key-file` (docs/sealing.md).
//! The key comes from a file or `FLAKEID_SEAL_KEY`, never from an argument: argv is
//! visible to every user of the machine (`ps`) and lands in shell histories.

use crate::args::SealArgs;
use crate::{Failure, layout_arg, parse_any};
use flakeid_core::{Encoding, Error, Layout};
use flakeid_seal::Sealer;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use zeroize::Zeroizing;

/// The variable that holds a hex key when no `--key-file` is given.
pub(crate) const KEY_ENV: &str = "FLAKEID_SEAL_KEY";

/// A sealer from a key file (hex; whitespace ignored): flakeid-seal's one reader,
/// shared with `flakeid serve` and the PostgreSQL extension.
pub(crate) fn from_key_file(path: &Path, layout: &Layout, tweak: Option<&str>) -> Result<Sealer, Failure> {
    with_tweak(Sealer::from_key_file(path, layout), tweak)
}

fn with_tweak(sealer: Result<Sealer, Error>, tweak: Option<&str>) -> Result<Sealer, Failure> {
    let sealer = sealer?;
    Ok(match tweak {
        Some(t) => sealer.tweak(t.as_bytes()),
        None => sealer,
    })
}

/// The sealer of `seal`/`unseal`: `--key-file`, else `FLAKEID_SEAL_KEY`.
fn sealer_of(args: &SealArgs, layout: &Layout) -> Result<Sealer, Failure> {
    if let Some(path) = &args.key_file {
        return from_key_file(path, layout, args.tweak.as_deref());
    }
    match std::env::var(KEY_ENV) {
        Ok(hex) => {
            let hex = Zeroizing::new(hex);
            with_tweak(Sealer::from_hex_key(&hex, layout), args.tweak.as_deref())
        }
        Err(std::env::VarError::NotUnicode(_)) => Err(Failure::Flake(Error::Config {
            field: "key",
            message: format!("{KEY_ENV} must be hex digits, and is not even UTF-8"),
        })),
        Err(std::env::VarError::NotPresent) => Err(Failure::Usage(format!(
            "a key is needed: --key-file FILE (hex, e.g. from `openssl rand -hex 32`) or {KEY_ENV}"
        ))),
    }
}

/// `flakeid seal` (`unseal` false) and `flakeid unseal` (`unseal` true).
pub(crate) fn run(args: SealArgs, unseal: bool) -> Result<(), Failure> {
    let layout = layout_arg(args.layout.as_deref())?;
    let from = match args.from.as_deref() {
        Some("int") => Some(Encoding::Decimal),
        Some(f) => Some(f.parse::<Encoding>()?),
        None => None,
    };
    let to = match args.format.as_str() {
        "int" => Encoding::Decimal,
        f => f
            .parse::<Encoding>()
            .map_err(|_| Failure::Usage(format!("--format must be int, hex, base32 or base62, got {f:?}")))?,
    };
    let sealer = sealer_of(&args, &layout)?;
    let mut texts = args.ids;
    if texts.is_empty() || texts == ["-"] {
        texts = io::stdin().lines().collect::<Result<Vec<_>, _>>()?;
        texts.retain(|l| !l.trim().is_empty());
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for text in &texts {
        let id = parse_any(text, from)?;
        let result = if unseal { sealer.unseal(id) } else { sealer.seal(id) }?;
        writeln!(out, "{}", flakeid_core::encode(result, to))?;
    }
    out.flush()?;
    Ok(())
}
