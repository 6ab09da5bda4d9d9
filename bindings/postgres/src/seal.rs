//! Sealed IDs in SQL (docs/sealing.md): `flakeid_seal`, `flakeid_unseal` and
//! `flakeid_next_sealed()`, through flakeid-seal's `Sealer`.
//!
//! Like the decompose functions, each has a form without a layout name (STABLE:
//! it reads `flakeid.layout`) and one with (IMMUTABLE). A sealed ID of a 63-bit
//! layout is in [0, 2^63); one of a 64-bit layout uses every bigint, the negative
//! ones standing for 2^63 and up (the same 64 bits), so that every sealed value
//! fits the column and unseals again.
//!
//! Sealers are cached per backend (one for the last key, tweak and width given,
//! one for `flakeid.seal_key`), so a statement that seals every row, and every
//! `flakeid_next_sealed()`, builds and checks its key once. The key never appears in
//! an error: the messages are the engine's, which name `key` and its lengths only.

use crate::error::{Report, SqlFn, raise_argument};
use crate::settings::{seal_key_text, server_layout};
use crate::{convert, server};
use flakeid_core::{Error, Layout};
use flakeid_seal::Sealer;
use pgrx::PgSqlErrorCode;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::ffi::CStr;
use zeroize::Zeroizing;

const NEXT_SEALED: SqlFn = SqlFn("flakeid_next_sealed");

/// A sealer and what it was made from (the key is kept to recognise it).
struct Cached {
    key: Zeroizing<Vec<u8>>,
    tweak: Vec<u8>,
    bits: u32,
    sealer: Sealer,
}

thread_local! {
    // A backend runs one query at a time on one thread: no lock needed.
    static BY_ARGUMENT: RefCell<Option<Cached>> = const { RefCell::new(None) };
    static BY_SETTING: RefCell<Option<Cached>> = const { RefCell::new(None) };
}

/// Equal bytes, compared without an early exit (the key of another session's call
/// is never compared against, but a key is compared as one anyway).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Runs `f` with the sealer of `key`, `tweak` and `layout`, from `cache` when it
/// holds that one, else made by `make` (whose error is returned, the cache kept).
fn with_sealer<T, E>(
    cache: &'static std::thread::LocalKey<RefCell<Option<Cached>>>,
    key: &[u8],
    tweak: &[u8],
    layout: &Layout,
    make: impl FnOnce() -> Result<Sealer, E>,
    f: impl FnOnce(&Sealer) -> T,
) -> Result<T, E> {
    cache.with(|cell| {
        let mut slot = cell.borrow_mut();
        let bits = layout.total_bits();
        let hit = slot
            .as_ref()
            .is_some_and(|c| c.bits == bits && same(&c.key, key) && c.tweak == tweak);
        if !hit {
            let sealer = make()?;
            *slot = Some(Cached {
                key: Zeroizing::new(key.to_vec()),
                tweak: tweak.to_vec(),
                bits,
                sealer,
            });
        }
        let cached = slot.as_ref().map(|c| &c.sealer);
        Ok(cached
            .map(f)
            .unwrap_or_else(|| unreachable!("the slot was just filled")))
    })
}

/// An SQL bigint as an ID of a `bits`-wide layout: its bits for 64, else a
/// non-negative value (the range check against 2^bits is the Sealer's).
#[track_caller]
fn id_in(id: i64, bits: u32) -> u64 {
    if bits == 64 {
        return id as u64;
    }
    match u64::try_from(id) {
        Ok(v) => v,
        Err(_) => raise_argument(Error::out_of_range("id", 0, u64::MAX >> (64 - bits), id), "id"),
    }
}

/// A sealed or unsealed ID as a bigint: the same bits (only a 64-bit layout's can
/// be negative).
fn id_out(id: u64) -> i64 {
    id as i64
}

#[track_caller]
fn run(id: i64, key: &[u8], tweak: &[u8], layout: Layout, unseal: bool) -> i64 {
    let make = || Sealer::new(key, &layout).map(|s| s.tweak(tweak));
    let value = id_in(id, layout.total_bits());
    let result = with_sealer(&BY_ARGUMENT, key, tweak, &layout, make, |s| {
        if unseal { s.unseal(value) } else { s.seal(value) }
    });
    // Errors name their argument: `key` (its length), `layout`, `tweak`, `id`.
    match result.and_then(|r| r) {
        Ok(v) => id_out(v),
        Err(e) => raise_argument(e, "id"),
    }
}

/// The sealed form of `id` (FF1-AES with `key`: 16, 24 or 32 bytes), for the
/// server's layout; `tweak` optional.
#[pg_extern(stable, parallel_safe, name = "flakeid_seal")]
fn flakeid_seal_server(id: i64, key: &[u8], tweak: default!(&[u8], "''::bytea")) -> i64 {
    run(id, key, tweak, server_layout(), false)
}

/// The sealed form of `id` under the named layout.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_seal(id: i64, key: &[u8], tweak: &[u8], layout: &str) -> i64 {
    run(id, key, tweak, convert::layout(layout), false)
}

/// The ID a sealed one stands for (the inverse of `flakeid_seal`).
#[pg_extern(stable, parallel_safe, name = "flakeid_unseal")]
fn flakeid_unseal_server(id: i64, key: &[u8], tweak: default!(&[u8], "''::bytea")) -> i64 {
    run(id, key, tweak, server_layout(), true)
}

/// The ID a sealed one stands for, under the named layout.
#[pg_extern(immutable, parallel_safe)]
fn flakeid_unseal(id: i64, key: &[u8], tweak: &[u8], layout: &str) -> i64 {
    run(id, key, tweak, convert::layout(layout), true)
}

/// The next ID from the server's generator, sealed with `flakeid.seal_key`.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_next_sealed() -> i64 {
    let layout = server_layout();
    let Some(hex): Option<&CStr> = seal_key_text() else {
        Report::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("{NEXT_SEALED} needs a key: flakeid.seal_key is not set"),
        )
        .hint(
            "ALTER SYSTEM SET flakeid.seal_key = '<64 hex digits, e.g. from openssl rand -hex 32>'; \
             SELECT pg_reload_conf(); or seal with flakeid_seal(flakeid_next(), key)",
        )
        .raise(NEXT_SEALED)
    };
    let make = || {
        Sealer::from_hex_key(hex.to_str().unwrap_or("\u{0}"), &layout).map_err(|e| {
            let message = match &e {
                Error::Config { message, .. } => message.clone(),
                _ => e.to_string(),
            };
            Report::new(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("invalid value for parameter \"flakeid.seal_key\": {message}"),
            )
        })
    };
    // Issued only once the key is known good: a bad key wastes no ID.
    let sealed = with_sealer(&BY_SETTING, hex.to_bytes(), b"", &layout, make, |s| {
        let id = server::backend(NEXT_SEALED).next_id(NEXT_SEALED);
        s.seal(id)
    });
    match sealed {
        Ok(Ok(v)) => id_out(v),
        Ok(Err(e)) => raise_argument(e, "id"),
        Err(report) => report.raise(NEXT_SEALED),
    }
}
