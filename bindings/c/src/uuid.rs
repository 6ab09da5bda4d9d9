//! The 128-bit family (UUIDv7, ULID, TypeID): `flakeid_uuid_generator` over the
//! core's `UuidGenerator`, and the core's functions of `uuid7.rs`, converted.
//!
//! A 128-bit value crosses as 16 big-endian bytes (a UUID's wire order, libuuid's
//! `uuid_t`) with their length; text crosses as (pointer, length) in and a caller's
//! buffer with its length out (NUL-terminated). A buffer too small is
//! `FLAKEID_ERR_BUFFER_TOO_SMALL`, checked before any ID is taken.

use crate::error::{Fail, flakeid_status, guard};
use crate::generator::flakeid_manual_clock;
use crate::stats::stats_out;
use crate::{
    Close, bytes_in, c_string_at, c_strings, close_handle, free_handle, new_handle, out, put, put_with, text,
    with_handle, write,
};
use flakeid_core::{ManualClock, UUID_GENERATOR_OPTIONS, UuidGenerator, Wide};
use std::borrow::Cow;
use std::ffi::c_char;

/// Bytes of a UUID (and a ULID): 128 bits, big-endian.
pub const FLAKEID_UUID_LEN: usize = 16;
/// Characters of a UUID's `8-4-4-4-12` text (without the NUL).
pub const FLAKEID_UUID_TEXT_LEN: usize = 36;
/// Characters of a ULID (and of a TypeID's suffix), without the NUL.
pub const FLAKEID_ULID_TEXT_LEN: usize = 26;
/// The longest TypeID prefix (spec v0.3).
pub const FLAKEID_TYPEID_PREFIX_MAX: usize = 63;
/// The longest TypeID text: a prefix, `_` and the suffix (without the NUL).
pub const FLAKEID_TYPEID_MAX_LEN: usize = 90;
const _: () = assert!(FLAKEID_UUID_TEXT_LEN == Wide::UUID_TEXT_LEN && FLAKEID_ULID_TEXT_LEN == Wide::ULID_TEXT_LEN);
const _: () = assert!(FLAKEID_TYPEID_PREFIX_MAX == Wide::TYPEID_PREFIX_MAX);
const _: () = assert!(FLAKEID_TYPEID_MAX_LEN == Wide::TYPEID_PREFIX_MAX + 1 + Wide::ULID_TEXT_LEN);

/// The options of a `flakeid_uuid_generator`, set by name: the core's clock
/// options (`flakeid_uuid_option_name` lists them) and a manual clock. Made by
/// `flakeid_uuid_options_new`, read by `flakeid_uuid_generator_new`, released by
/// `flakeid_uuid_options_free`. Not thread-safe while being set.
#[derive(Debug, Default)]
pub struct flakeid_uuid_options {
    settings: Vec<(String, String)>,
    clock: Option<ManualClock>,
}

handle!(flakeid_uuid_options, "options");

/// Makes UUIDv7s, and ULIDs and TypeIDs of the same bits: strictly increasing
/// across every thread sharing it (RFC 9562 §6.2 method 1, a 16-bit counter;
/// docs/design.md). Thread-safe. Unlike `flakeid_generator` it goes on in a child
/// after `fork()`: the child's random bits are reseeded from the operating system
/// (`flakeid_uuid_stats.reseeds` counts it).
#[derive(Debug)]
pub struct flakeid_uuid_generator {
    inner: UuidGenerator,
}

handle!(flakeid_uuid_generator, "generator");

/// What a `flakeid_uuid_generator` has done (`flakeid_uuid_generator_stats()`).
/// Grows only by appending fields; `struct_size` as for `flakeid_stats`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakeid_uuid_stats {
    /// Bytes of this struct the library wrote. Always the first field.
    pub struct_size: usize,
    /// IDs handed out.
    pub ids_issued: u64,
    /// Milliseconds waited out because a millisecond's 65,536 (or the borrow
    /// window) were used up.
    pub tick_waits: u64,
    /// How far the last ID's time is ahead of the clock, ms (borrowing, or a clock
    /// that went back): the drift of the embedded time.
    pub lead_ms: u64,
    /// Calls that found the clock behind IDs already issued.
    pub clock_rollbacks: u64,
    /// The largest of those rollbacks, ms.
    pub max_rollback_ms: u64,
    /// Forked children in which the generator went on with reseeded random bits.
    pub reseeds: u64,
}

/// Text of `len` bytes (no NUL needed); bytes that are not UTF-8 read as U+FFFD,
/// which every parser refuses at that character's position.
///
/// # Safety
/// As [`bytes_in`].
unsafe fn text_in<'a>(p: *const c_char, len: usize) -> Result<Cow<'a, str>, Fail> {
    Ok(String::from_utf8_lossy(unsafe {
        bytes_in(p.cast::<u8>(), len, "text")
    }?))
}

/// A 128-bit value from 16 bytes (another length is the core's parse error).
///
/// # Safety
/// As [`bytes_in`].
unsafe fn uuid_in(p: *const u8, len: usize) -> Result<Wide, Fail> {
    Ok(Wide::from_slice(unsafe { bytes_in(p, len, "uuid") }?)?)
}

/// A checked output buffer of `len` bytes that must hold `needed`.
fn buf_out<'a>(p: *mut u8, len: usize, needed: usize, name: &'static str) -> Result<&'a mut [u8], Fail> {
    let dst = out(p, name)?;
    if len < needed {
        return Err(Fail::BufferTooSmall { needed, given: len });
    }
    // SAFETY: the caller promises `len >= needed` writable bytes at `p`.
    Ok(unsafe { std::slice::from_raw_parts_mut(dst.as_ptr(), needed) })
}

/// Writes `value`'s 16 bytes into a checked buffer.
fn uuid_out(value: impl Into<Wide>, dst: &mut [u8]) {
    dst.copy_from_slice(&value.into().to_bytes());
}

/// Writes `text` and a NUL into a checked buffer; `out_len` (may be NULL) gets the
/// text's length.
fn text_out(text: &str, dst: &mut [u8], out_len: *mut usize) {
    dst[..text.len()].copy_from_slice(text.as_bytes());
    dst[text.len()] = 0;
    if let Some(len_dst) = std::ptr::NonNull::new(out_len) {
        write(len_dst, text.len());
    }
}

/// Creates empty options (every option at the core's default, the system clock).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_options_new(out_options: *mut *mut flakeid_uuid_options) -> flakeid_status {
    new_handle(out_options, || Ok(flakeid_uuid_options::default()))
}

/// Sets the option `name` from text, by the core's names and rules
/// (`UuidGeneratorBuilder::set_text`): `"overflow"` (`borrow`, the default, or
/// `wait`), `"clock_backwards"` (`error`, `wait`, `monotonic`), `"max_borrow_ms"`,
/// `"max_wait_ms"`. A node, layout or lease option, an unknown name or a value the
/// option cannot take is `FLAKEID_ERR_CONFIG` naming it; `*options` is then
/// unchanged. The text is copied.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_options_set(
    options: *mut flakeid_uuid_options,
    name: *const c_char,
    value: *const c_char,
) -> flakeid_status {
    guard(|| {
        let dst = out(options, "options")?;
        let name = unsafe { text(name) }.ok_or(Fail::Null("name"))?;
        let value = unsafe { text(value) }.ok_or(Fail::Null("value"))?;
        // The core checks the name and the value now; the generator replays them.
        UuidGenerator::builder().set_text(&name, &value)?;
        // SAFETY: `options` is a live handle, not in use by another thread (documented).
        let o = unsafe { &mut *dst.as_ptr() };
        o.settings.push((name.into_owned(), value.into_owned()));
        Ok(())
    })
}

/// Makes the generator read `clock` (NULL: the system clock again). The generator
/// shares the clock's time; the clock handle may be freed first.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_options_set_clock(
    options: *mut flakeid_uuid_options,
    clock: *const flakeid_manual_clock,
) -> flakeid_status {
    guard(|| {
        let dst = out(options, "options")?;
        let clock = unsafe { clock.as_ref() }.map(|c| c.clock.clone());
        // SAFETY: as in flakeid_uuid_options_set.
        unsafe { &mut *dst.as_ptr() }.clock = clock;
        Ok(())
    })
}

/// Frees options. NULL is a no-op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_options_free(options: *mut flakeid_uuid_options) {
    unsafe { free_handle(options) }
}

/// The `index`th name `flakeid_uuid_options_set` takes (the core's
/// `UUID_GENERATOR_OPTIONS`), a static string; NULL past the last.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_uuid_option_name(index: usize) -> *const c_char {
    static NAMES: std::sync::OnceLock<Vec<std::ffi::CString>> = std::sync::OnceLock::new();
    c_string_at(c_strings(&NAMES, UUID_GENERATOR_OPTIONS.iter().copied()), index)
}

/// Creates a 128-bit generator from `options` (NULL: the defaults); on success
/// `*out_generator` owns it (free it with `flakeid_uuid_generator_free()`). The
/// options may be freed once this returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_generator_new(
    options: *const flakeid_uuid_options,
    out_generator: *mut *mut flakeid_uuid_generator,
) -> flakeid_status {
    new_handle(out_generator, || {
        let mut b = UuidGenerator::builder();
        if let Some(o) = unsafe { options.as_ref() } {
            for (name, value) in &o.settings {
                b = b.set_text(name, value)?;
            }
            if let Some(c) = &o.clock {
                b = b.clock(c.clone());
            }
        }
        Ok(flakeid_uuid_generator { inner: b.build()? })
    })
}

/// Frees a 128-bit generator. NULL is a no-op. No other thread may still use it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_generator_free(generator: *mut flakeid_uuid_generator) {
    unsafe { free_handle(generator) }
}

/// Stops the generator issuing (idempotent): later calls are `FLAKEID_ERR_CONFIG`
/// naming `generator`. Frees nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_generator_close(generator: *const flakeid_uuid_generator) -> flakeid_status {
    close_handle(generator)
}

impl Close for flakeid_uuid_generator {
    fn close(&self) {
        self.inner.close();
    }
}

/// `n` fresh UUIDv7s, increasing and in call order with the generator's other
/// IDs, into `out_uuids`: `n` × 16 bytes, big-endian (`out_len` at least
/// `n * FLAKEID_UUID_LEN`; `out_uuids` may be NULL when `n` is 0). `n` above
/// the batch limit is `FLAKEID_ERR_CONFIG` naming `n` (as `flakeid_next_ids`).
/// On failure the buffer is zeroed: it holds no ID.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_next_many(
    generator: *const flakeid_uuid_generator,
    out_uuids: *mut u8,
    out_len: usize,
    n: usize,
) -> flakeid_status {
    with_handle(generator, |g| {
        let n = flakeid_core::check_batch(n as i128)?;
        if n == 0 {
            return Ok(());
        }
        let dst = buf_out(out_uuids, out_len, n * FLAKEID_UUID_LEN, "out_uuids")?;
        let mut values = vec![0u128; n];
        g.inner.fill_uuid7(&mut values).inspect_err(|_| dst.fill(0))?;
        for (chunk, value) in dst.chunks_exact_mut(FLAKEID_UUID_LEN).zip(values) {
            uuid_out(value, chunk);
        }
        Ok(())
    })
}

/// The next UUIDv7 into `out` (16 bytes, big-endian; `out_len` at least
/// `FLAKEID_UUID_LEN`). Fails with `FLAKEID_ERR_CLOCK_BACKWARDS`,
/// `FLAKEID_ERR_TIME_EXHAUSTED` or `FLAKEID_ERR_CONFIG` (closed); `out` is
/// written only on success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_next(
    generator: *const flakeid_uuid_generator,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    issue_uuid(generator, out_uuid, out_len, |g| Ok(g.next_uuid7()?))
}

/// The one body of the calls that issue a UUIDv7 into 16 bytes: the handle, then
/// the buffer checked, then `issue`.
fn issue_uuid(
    generator: *const flakeid_uuid_generator,
    out_uuid: *mut u8,
    out_len: usize,
    issue: impl FnOnce(&UuidGenerator) -> Result<u128, Fail>,
) -> flakeid_status {
    with_handle(generator, |g| {
        let dst = buf_out(out_uuid, out_len, FLAKEID_UUID_LEN, "out_uuid")?;
        uuid_out(issue(&g.inner)?, dst);
        Ok(())
    })
}

/// A UUIDv7 of the Unix millisecond `unix_ms` and 74 random bits into `out` (16
/// bytes, big-endian): outside the generator's sequence (not ordered after its
/// earlier UUIDs, nor among others of that millisecond). `unix_ms` before 1970 or
/// past the 48-bit field is `FLAKEID_ERR_CONFIG` naming `unix_ms`; closed: naming
/// `generator`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_at(
    generator: *const flakeid_uuid_generator,
    unix_ms: i64,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    issue_uuid(generator, out_uuid, out_len, |g| {
        let ms = u64::try_from(unix_ms)
            .map_err(|_| flakeid_core::Error::out_of_range("unix_ms", 0, Wide::MAX_MS, unix_ms))?;
        Ok(g.uuid7_at(ms)?)
    })
}

/// A UUIDv7 of the generator's clock now shifted by `shift_ms` (negative: the
/// past), as PostgreSQL 18's `uuidv7(shift)`, into `out` (16 bytes): outside the
/// sequence, as `flakeid_uuid_at`. A shifted time outside the 48-bit field is
/// `FLAKEID_ERR_CONFIG` naming `shift_ms`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_shifted(
    generator: *const flakeid_uuid_generator,
    shift_ms: i64,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    issue_uuid(generator, out_uuid, out_len, |g| Ok(g.uuid7_shifted(shift_ms)?))
}

/// The next UUIDv7 as lowercase `8-4-4-4-12` text and a NUL (`buf_len` at least
/// `FLAKEID_UUID_TEXT_LEN + 1`). `out_len` (may be NULL) gets 36.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_next_string(
    generator: *const flakeid_uuid_generator,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    issue_text(
        generator,
        buf,
        buf_len,
        out_len,
        FLAKEID_UUID_TEXT_LEN,
        UuidGenerator::next_uuid7_string,
    )
}

/// The one body of the calls that issue one ID as text of `len` characters: the
/// handle, then the buffer checked (`len` and a NUL), then `issue`.
fn issue_text(
    generator: *const flakeid_uuid_generator,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
    len: usize,
    issue: impl FnOnce(&UuidGenerator) -> flakeid_core::Result<String>,
) -> flakeid_status {
    with_handle(generator, |g| {
        let dst = buf_out(buf.cast::<u8>(), buf_len, len + 1, "buf")?;
        text_out(&issue(&g.inner)?, dst, out_len);
        Ok(())
    })
}

/// The next ID as a ULID (upper-case Crockford base32) and a NUL (`buf_len` at
/// least `FLAKEID_ULID_TEXT_LEN + 1`). `out_len` (may be NULL) gets 26.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_ulid_next(
    generator: *const flakeid_uuid_generator,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    issue_text(
        generator,
        buf,
        buf_len,
        out_len,
        FLAKEID_ULID_TEXT_LEN,
        UuidGenerator::next_ulid,
    )
}

/// The length of the TypeID text of `prefix` (without the NUL).
fn typeid_len(prefix: &str) -> usize {
    if prefix.is_empty() {
        FLAKEID_ULID_TEXT_LEN
    } else {
        prefix.len() + 1 + FLAKEID_ULID_TEXT_LEN
    }
}

/// The next ID as a TypeID with `prefix` (NUL-terminated; `""` for none) and a NUL
/// (`FLAKEID_TYPEID_MAX_LEN + 1` always suffices). The prefix and the buffer are
/// checked first: a bad prefix (`FLAKEID_ERR_CONFIG` naming `prefix`) or a short
/// buffer costs no ID.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_typeid_next(
    generator: *const flakeid_uuid_generator,
    prefix: *const c_char,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    with_handle(generator, |g| {
        let prefix = unsafe { text(prefix) }.ok_or(Fail::Null("prefix"))?;
        Wide::check_typeid_prefix(&prefix)?;
        let dst = buf_out(buf.cast::<u8>(), buf_len, typeid_len(&prefix) + 1, "buf")?;
        text_out(&g.inner.next_typeid(&prefix)?, dst, out_len);
        Ok(())
    })
}

/// Writes a snapshot of the generator's statistics; `struct_size` is the caller's
/// `sizeof *out_stats` (smaller than the first `flakeid_uuid_stats`:
/// `FLAKEID_ERR_CONFIG` naming `struct_size`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_generator_stats(
    generator: *const flakeid_uuid_generator,
    out_stats: *mut flakeid_uuid_stats,
    struct_size: usize,
) -> flakeid_status {
    with_handle(generator, |g| {
        let (dst, ours) = stats_out(out_stats, struct_size, "flakeid_uuid_stats")?;
        let s = g.inner.stats();
        write(
            dst,
            flakeid_uuid_stats {
                struct_size: ours,
                ids_issued: s.ids_issued,
                tick_waits: s.tick_waits,
                lead_ms: s.lead_ms,
                clock_rollbacks: s.clock_rollbacks,
                max_rollback_ms: s.max_rollback_ms,
                reseeds: s.reseeds,
            },
        );
        Ok(())
    })
}

/// The UUIDv7 of Unix millisecond `ms` with `rand_a` (12 bits) and `rand_b` (62
/// bits), RFC 9562 §5.7, into `out_uuid` (16 bytes). A part wider than its field is
/// `FLAKEID_ERR_CONFIG` naming it (`ms`, `rand_a`, `rand_b`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid7_compose(
    ms: u64,
    rand_a: u32,
    rand_b: u64,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    guard(|| {
        let dst = buf_out(out_uuid, out_len, FLAKEID_UUID_LEN, "out_uuid")?;
        let a = u16::try_from(rand_a).map_err(|_| flakeid_core::Error::out_of_range("rand_a", 0, 0xfff, rand_a))?;
        uuid_out(Wide::compose_uuid7(ms, a, rand_b)?, dst);
        Ok(())
    })
}

/// The parts `flakeid_uuid7_compose` took, from 16 bytes; a value that is not a
/// version-7, variant-`10` UUID is `FLAKEID_ERR_PARSE` naming the bit.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid7_decompose(
    uuid: *const u8,
    uuid_len: usize,
    out_ms: *mut u64,
    out_rand_a: *mut u32,
    out_rand_b: *mut u64,
) -> flakeid_status {
    guard(|| {
        let value = unsafe { uuid_in(uuid, uuid_len) }?;
        let (ms, a, b) = (
            out(out_ms, "out_ms")?,
            out(out_rand_a, "out_rand_a")?,
            out(out_rand_b, "out_rand_b")?,
        );
        let (m, ra, rb) = value.decompose_uuid7()?;
        write(ms, m);
        write(a, u32::from(ra));
        write(b, rb);
        Ok(())
    })
}

/// The version field (bits 48-51) of any UUID's 16 bytes: 7 for ours.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_version(
    uuid: *const u8,
    uuid_len: usize,
    out_version: *mut u32,
) -> flakeid_status {
    guard(|| {
        let value = unsafe { uuid_in(uuid, uuid_len) }?;
        put(out_version, "out_version", u32::from(value.version()))
    })
}

/// The Unix millisecond a UUIDv7's 16 bytes carry; a UUID of another version is
/// `FLAKEID_ERR_PARSE` (its first bits are no time: read a ULID with
/// `flakeid_ulid_timestamp_ms`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid7_timestamp_ms(
    uuid: *const u8,
    uuid_len: usize,
    out_ms: *mut u64,
) -> flakeid_status {
    guard(|| {
        let value = unsafe { uuid_in(uuid, uuid_len) }?;
        put_with(out_ms, "out_ms", || value.uuid7_timestamp_ms())
    })
}

/// The Unix millisecond in a ULID's first 48 bits (its 16 bytes; any other bits).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_ulid_timestamp_ms(
    uuid: *const u8,
    uuid_len: usize,
    out_ms: *mut u64,
) -> flakeid_status {
    guard(|| {
        let value = unsafe { uuid_in(uuid, uuid_len) }?;
        put(out_ms, "out_ms", value.timestamp_ms())
    })
}

/// The first and last 128-bit values whose time is within `start_ms..=end_ms`
/// (for `WHERE id BETWEEN first AND last`), into two 16-byte buffers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid7_range(
    start_ms: u64,
    end_ms: u64,
    out_first: *mut u8,
    out_last: *mut u8,
    out_len: usize,
) -> flakeid_status {
    guard(|| {
        let first = buf_out(out_first, out_len, FLAKEID_UUID_LEN, "out_first")?;
        let last = buf_out(out_last, out_len, FLAKEID_UUID_LEN, "out_last")?;
        let (a, b) = Wide::uuid7_range(start_ms, end_ms)?;
        uuid_out(a, first);
        uuid_out(b, last);
        Ok(())
    })
}

/// Which text a `flakeid_*_parse` reads.
fn parse_kind(kind: &'static str, text: &str) -> Result<Wide, flakeid_core::Error> {
    match kind {
        "uuid" => Wide::parse_uuid(text),
        _ => Wide::parse_ulid(text),
    }
}

/// The shared body of the UUID and ULID parsers.
///
/// # Safety
/// As the exports'.
unsafe fn parse_into(
    kind: &'static str,
    text: *const c_char,
    text_len: usize,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    guard(|| {
        let text = unsafe { text_in(text, text_len) }?;
        let dst = buf_out(out_uuid, out_len, FLAKEID_UUID_LEN, "out_uuid")?;
        uuid_out(parse_kind(kind, &text)?, dst);
        Ok(())
    })
}

/// Reads `text_len` bytes of UUID text (`8-4-4-4-12`, or its 32 hex digits; any
/// case; no NUL needed) into 16 bytes. Bad text is `FLAKEID_ERR_PARSE`, and
/// `flakeid_last_error_position()` gives the 0-based character.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_parse(
    text: *const c_char,
    text_len: usize,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    unsafe { parse_into("uuid", text, text_len, out_uuid, out_len) }
}

/// Reads `text_len` bytes of ULID text (26 Crockford base32 characters, any case,
/// `I`/`L` as 1 and `O` as 0; at most `7ZZZZZZZZZZZZZZZZZZZZZZZZZ`) into 16 bytes.
/// Bad text is `FLAKEID_ERR_PARSE` with its position.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_ulid_parse(
    text: *const c_char,
    text_len: usize,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    unsafe { parse_into("ulid", text, text_len, out_uuid, out_len) }
}

/// Reads a TypeID (`prefix_` and a lowercase ULID suffix, split at the last `_`):
/// its 128 bits into `out_uuid` and its prefix and a NUL into `prefix_buf`
/// (`FLAKEID_TYPEID_PREFIX_MAX + 1` always suffices; `prefix_len_out` may be
/// NULL). Bad text is `FLAKEID_ERR_PARSE` with its position.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_typeid_parse(
    text: *const c_char,
    text_len: usize,
    prefix_buf: *mut c_char,
    prefix_buf_len: usize,
    prefix_len_out: *mut usize,
    out_uuid: *mut u8,
    out_len: usize,
) -> flakeid_status {
    guard(|| {
        let text = unsafe { text_in(text, text_len) }?;
        let (prefix, value) = Wide::parse_typeid(&text)?;
        let uuid_dst = buf_out(out_uuid, out_len, FLAKEID_UUID_LEN, "out_uuid")?;
        let prefix_dst = buf_out(prefix_buf.cast::<u8>(), prefix_buf_len, prefix.len() + 1, "prefix_buf")?;
        uuid_out(value, uuid_dst);
        text_out(&prefix, prefix_dst, prefix_len_out);
        Ok(())
    })
}

/// The shared body of the formatters: `text` of the 16 bytes into `buf`.
///
/// # Safety
/// As the exports'.
unsafe fn format_into(
    uuid: *const u8,
    uuid_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
    format: impl FnOnce(Wide) -> Result<String, flakeid_core::Error>,
) -> flakeid_status {
    guard(|| {
        let value = unsafe { uuid_in(uuid, uuid_len) }?;
        let text = format(value)?;
        let dst = buf_out(buf.cast::<u8>(), buf_len, text.len() + 1, "buf")?;
        text_out(&text, dst, out_len);
        Ok(())
    })
}

/// The lowercase `8-4-4-4-12` text of 16 bytes and a NUL (`buf_len` at least 37).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_uuid_format(
    uuid: *const u8,
    uuid_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    unsafe { format_into(uuid, uuid_len, buf, buf_len, out_len, |v| Ok(v.to_uuid())) }
}

/// The ULID text (upper-case Crockford base32) of 16 bytes and a NUL (`buf_len`
/// at least 27): the same bits, no bit changed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_ulid_format(
    uuid: *const u8,
    uuid_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    unsafe { format_into(uuid, uuid_len, buf, buf_len, out_len, |v| Ok(v.to_ulid())) }
}

/// The TypeID of `prefix` (NUL-terminated, `""` for none; checked:
/// `FLAKEID_ERR_CONFIG` naming `prefix`) and 16 bytes, and a NUL
/// (`FLAKEID_TYPEID_MAX_LEN + 1` always suffices).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_typeid_format(
    prefix: *const c_char,
    uuid: *const u8,
    uuid_len: usize,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    let Some(prefix) = (unsafe { text(prefix) }) else {
        return guard(|| Err(Fail::Null("prefix")));
    };
    unsafe { format_into(uuid, uuid_len, buf, buf_len, out_len, |v| v.to_typeid(&prefix)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::flakeid_status::*;

    #[test]
    fn the_rfc_vector_and_short_buffers() {
        let mut u = [0u8; 16];
        assert_eq!(
            unsafe { flakeid_uuid7_compose(1645557742000, 0xcc3, 0x18C4DC0C0C07398F, u.as_mut_ptr(), 16) },
            FLAKEID_OK
        );
        let mut buf = [0 as c_char; 37];
        let mut n = 0;
        let st = unsafe { flakeid_uuid_format(u.as_ptr(), 16, buf.as_mut_ptr(), 37, &mut n) };
        assert_eq!((st, n), (FLAKEID_OK, 36));
        let text = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(text.to_str(), Ok("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"));
        let st = unsafe { flakeid_uuid_format(u.as_ptr(), 16, buf.as_mut_ptr(), 36, &mut n) };
        assert_eq!(st, FLAKEID_ERR_BUFFER_TOO_SMALL);
        let st = unsafe { flakeid_uuid_format(u.as_ptr(), 15, buf.as_mut_ptr(), 37, &mut n) };
        assert_eq!(st, FLAKEID_ERR_PARSE);
        let mut short = [0u8; 15];
        let t = b"017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
        let st = unsafe { flakeid_uuid_parse(t.as_ptr().cast(), t.len(), short.as_mut_ptr(), 15) };
        assert_eq!(st, FLAKEID_ERR_BUFFER_TOO_SMALL);
        let st = unsafe { flakeid_uuid_parse(t.as_ptr().cast(), t.len(), std::ptr::null_mut(), 16) };
        assert_eq!(st, FLAKEID_ERR_NULL);
    }

    #[test]
    fn option_names_are_the_cores() {
        let names: Vec<String> = (0..)
            .map(|i: usize| flakeid_uuid_option_name(i))
            .take_while(|p| !p.is_null())
            .map(|p| unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, UUID_GENERATOR_OPTIONS);
    }
}
