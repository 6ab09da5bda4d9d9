//! Layouts as plain C structs, and the stateless calls on them: compose,
//! decompose, ID ranges, text encodings.

use crate::error::{Fail, flakeid_status, guard};
use crate::{arg, c_enum, out, put_with, write};
use flakeid_core::{Encoding, Error, Layout, MAX_ENCODED_LEN, decode, encode_into};
use std::ffi::{CStr, c_char};

/// Field order values of `flakeid_layout.order`.
#[repr(u32)]
#[derive(Debug, Clone, Copy)]
pub enum flakeid_order {
    /// `time | node | seq`: Twitter, FlakeID, Discord, Baidu, Instagram.
    FLAKEID_ORDER_TIME_NODE_SEQ = 0,
    /// `time | seq | node`: Sonyflake.
    FLAKEID_ORDER_TIME_SEQ_NODE = 1,
}

/// Text forms for `flakeid_encode` / `flakeid_decode`.
#[repr(u32)]
#[derive(Debug, Clone, Copy)]
pub enum flakeid_encoding {
    /// Base 10, unpadded (up to 20 characters).
    FLAKEID_ENCODING_DECIMAL = 0,
    /// 16 lowercase hex digits.
    FLAKEID_ENCODING_HEX = 1,
    /// 13 Crockford base32 characters (decoding ignores case, reads I/L as 1, O as 0).
    FLAKEID_ENCODING_BASE32 = 2,
    /// 11 characters of 0-9A-Za-z.
    FLAKEID_ENCODING_BASE62 = 3,
}

/// The longest text `flakeid_encode` writes, without its NUL (a decimal u64).
pub const FLAKEID_MAX_ENCODED_LEN: usize = 20;
const _: () = assert!(FLAKEID_MAX_ENCODED_LEN == MAX_ENCODED_LEN);

/// How the 64 bits are split. A plain value: copy it freely. Fill it with
/// `flakeid_layout_preset()` or `flakeid_layout_custom()`; a struct filled by hand
/// is validated by every call that takes it. A layout with a single node field
/// (Sonyflake, Baidu, Instagram) has `datacenter_bits == 0`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct flakeid_layout {
    pub time_bits: u32,
    pub datacenter_bits: u32,
    pub worker_bits: u32,
    pub sequence_bits: u32,
    /// Milliseconds per tick (1; 10 for Sonyflake; 1000 for Baidu).
    pub tick_ms: u64,
    /// The layout's epoch, Unix milliseconds.
    pub epoch_ms: u64,
    /// A `flakeid_order` value.
    pub order: u32,
}

/// Derived numbers of a layout (`flakeid_layout_get_limits()`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakeid_layout_limits {
    /// `datacenter_bits + worker_bits`.
    pub node_bits: u32,
    /// Bits used in all; IDs are below `2^total_bits`.
    pub total_bits: u32,
    pub max_node: u64,
    pub max_datacenter: u64,
    pub max_worker: u64,
    pub max_sequence: u64,
    /// The largest ID the layout can produce.
    pub max_id: u64,
    /// The last Unix millisecond the layout can represent.
    pub last_timestamp_ms: u64,
    /// The last Unix millisecond whose IDs leave bit 63 clear (fit a signed BIGINT).
    pub signed_until_ms: u64,
}

/// An ID taken apart (`flakeid_decompose()`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct flakeid_parts {
    /// Unix milliseconds at the start of the ID's tick.
    pub timestamp_ms: u64,
    /// The raw time field: ticks since the layout's epoch.
    pub ticks: u64,
    /// `datacenter << worker_bits | worker`.
    pub node: u64,
    /// 0 for layouts with a single node field.
    pub datacenter: u64,
    /// Equals `node` for layouts with a single node field.
    pub worker: u64,
    pub sequence: u64,
}

/// `flakeid_order`'s values, in the core's words.
const ORDERS: [&str; 2] = ["time|node|seq", "time|seq|node"];

/// Validates a C layout into the engine's (a preset's numbers are that preset).
pub(crate) fn layout_in(l: &flakeid_layout) -> Result<Layout, Error> {
    Layout::builder()
        .time_bits(l.time_bits)
        .datacenter_bits(l.datacenter_bits)
        .worker_bits(l.worker_bits)
        .sequence_bits(l.sequence_bits)
        .tick_ms(l.tick_ms)
        .epoch_ms(l.epoch_ms)
        .order(c_enum("order", "FLAKEID_ORDER", &ORDERS, l.order)?.parse()?)
        .build()
}

pub(crate) fn layout_out(l: &Layout) -> flakeid_layout {
    flakeid_layout {
        time_bits: l.time_bits(),
        datacenter_bits: l.datacenter_bits(),
        worker_bits: l.worker_bits(),
        sequence_bits: l.sequence_bits(),
        tick_ms: l.tick_ms(),
        epoch_ms: l.epoch_ms(),
        order: ORDERS.iter().position(|o| *o == l.order().as_str()).unwrap_or(0) as u32,
    }
}

fn encoding_in(e: u32) -> Result<Encoding, Error> {
    c_enum("encoding", "FLAKEID_ENCODING", &Encoding::ALL.map(Encoding::name), e)?.parse()
}

/// Fills `out` with a preset: `"snowflake"`, `"flake"`, `"discord"`, `"sonyflake"`,
/// `"baidu"`, `"instagram"` or `"js53"` (case-insensitive).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_layout_preset(name: *const c_char, out_layout: *mut flakeid_layout) -> flakeid_status {
    guard(|| {
        let name = unsafe { arg(name, "name") }.map(|_| unsafe { CStr::from_ptr(name) }.to_string_lossy())?;
        let dst = out(out_layout, "out_layout")?;
        let layout = Layout::preset(&name)?;
        write(dst, layout_out(&layout));
        Ok(())
    })
}

/// Validates a custom layout and fills `out`. `order` is a `flakeid_order`. Bits
/// add up to at most 64, the epoch is not in the future, and the last timestamp is
/// at most 9999-12-31; the error names the field and its allowed range. A layout
/// whose time has already run out is valid (it decodes its IDs); a generator on it
/// returns `FLAKEID_ERR_TIME_EXHAUSTED`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn flakeid_layout_custom(
    time_bits: u32,
    datacenter_bits: u32,
    worker_bits: u32,
    sequence_bits: u32,
    tick_ms: u64,
    epoch_ms: u64,
    order: u32,
    out_layout: *mut flakeid_layout,
) -> flakeid_status {
    guard(|| {
        let dst = out(out_layout, "out_layout")?;
        let spec = flakeid_layout {
            time_bits,
            datacenter_bits,
            worker_bits,
            sequence_bits,
            tick_ms,
            epoch_ms,
            order,
        };
        let layout = layout_in(&spec)?;
        write(dst, layout_out(&layout));
        Ok(())
    })
}

/// The derived numbers of a layout (maxima, last representable time).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_layout_get_limits(
    layout: *const flakeid_layout,
    out_limits: *mut flakeid_layout_limits,
) -> flakeid_status {
    with_layout(layout, |l| {
        let dst = out(out_limits, "out_limits")?;
        write(
            dst,
            flakeid_layout_limits {
                node_bits: l.node_bits(),
                total_bits: l.total_bits(),
                max_node: l.max_node(),
                max_datacenter: l.max_datacenter(),
                max_worker: l.max_worker(),
                max_sequence: l.max_sequence(),
                max_id: l.max_id(),
                last_timestamp_ms: l.last_timestamp_ms(),
                signed_until_ms: l.signed_until_ms(),
            },
        );
        Ok(())
    })
}

/// The one body of the calls on a layout: the layout read and checked (NULL:
/// refused naming `layout`), then `body` with it.
fn with_layout(layout: *const flakeid_layout, body: impl FnOnce(&Layout) -> Result<(), Fail>) -> flakeid_status {
    // SAFETY: C callers pass a layout that is NULL or valid for reads (documented ABI).
    guard(|| body(&layout_in(unsafe { arg(layout, "layout") }?)?))
}

/// Takes an ID apart. An ID with bits set above the layout's width is
/// `FLAKEID_ERR_PARSE` (it cannot come from this layout).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_decompose(
    layout: *const flakeid_layout,
    id: u64,
    out_parts: *mut flakeid_parts,
) -> flakeid_status {
    with_layout(layout, |l| {
        let dst = out(out_parts, "out_parts")?;
        let p = l.try_decompose(id)?;
        #[rustfmt::skip]
        let parts = flakeid_parts {
            timestamp_ms: p.timestamp_ms, ticks: p.ticks, node: p.node,
            datacenter: p.datacenter, worker: p.worker, sequence: p.sequence,
        };
        write(dst, parts);
        Ok(())
    })
}

/// Builds an ID from a Unix-ms time (floored to its tick), a node id and a
/// sequence; out-of-range parts are `FLAKEID_ERR_CONFIG` (time:
/// `FLAKEID_ERR_TIME_EXHAUSTED`), never a truncated ID.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_compose(
    layout: *const flakeid_layout,
    timestamp_ms: u64,
    node: u64,
    sequence: u64,
    out_id: *mut u64,
) -> flakeid_status {
    with_layout(layout, |l| {
        put_with(out_id, "out_id", || l.compose(timestamp_ms, node, sequence))
    })
}

/// `flakeid_compose()` with the node given as datacenter and worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_compose_parts(
    layout: *const flakeid_layout,
    timestamp_ms: u64,
    datacenter: u64,
    worker: u64,
    sequence: u64,
    out_id: *mut u64,
) -> flakeid_status {
    with_layout(layout, |l| {
        put_with(out_id, "out_id", || {
            l.compose_parts(timestamp_ms, datacenter, worker, sequence)
        })
    })
}

/// The ID bounds for a time interval: every ID made from `start_ms` to `end_ms`
/// (inclusive) lies in `[*out_first, *out_last]` — for `WHERE id BETWEEN` queries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_id_range(
    layout: *const flakeid_layout,
    start_ms: u64,
    end_ms: u64,
    out_first: *mut u64,
    out_last: *mut u64,
) -> flakeid_status {
    with_layout(layout, |l| {
        let (first_dst, last_dst) = (out(out_first, "out_first")?, out(out_last, "out_last")?);
        let (first, last) = l.id_range(start_ms, end_ms)?;
        write(first_dst, first);
        write(last_dst, last);
        Ok(())
    })
}

/// Writes the text form of `id` and a NUL into `buf` (`buf_len` bytes;
/// `FLAKEID_MAX_ENCODED_LEN + 1` always suffices). `out_len` (may be NULL) receives
/// the text's length without the NUL. A buffer that is too small is
/// `FLAKEID_ERR_BUFFER_TOO_SMALL` and is left untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_encode(
    id: u64,
    encoding: u32,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> flakeid_status {
    guard(|| {
        let encoding = encoding_in(encoding)?;
        let dst = out(buf, "buf")?;
        let mut text = [0u8; MAX_ENCODED_LEN];
        let len = encode_into(id, encoding, &mut text);
        if buf_len < len + 1 {
            return Err(Fail::BufferTooSmall {
                needed: len + 1,
                given: buf_len,
            });
        }
        // SAFETY: the caller promises `buf` holds `buf_len >= len + 1` bytes.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst.as_ptr().cast::<u8>(), len + 1) };
        dst[..len].copy_from_slice(&text[..len]);
        dst[len] = 0;
        if let Some(len_dst) = std::ptr::NonNull::new(out_len) {
            write(len_dst, len);
        }
        Ok(())
    })
}

/// Parses `text_len` bytes of `text` (no NUL needed) back into an ID. Bad text is
/// `FLAKEID_ERR_PARSE`, and `flakeid_last_error_position()` gives the position.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn flakeid_decode(
    text: *const c_char,
    text_len: usize,
    encoding: u32,
    out_id: *mut u64,
) -> flakeid_status {
    guard(|| {
        let encoding = encoding_in(encoding)?;
        let src = unsafe { arg(text, "text") }?;
        let dst = out(out_id, "out_id")?;
        // SAFETY: the caller promises `text` holds `text_len` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts((src as *const c_char).cast::<u8>(), text_len) };
        let text = std::str::from_utf8(bytes).map_err(|e| {
            // Positions are character indexes, as for every other parse error.
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).map_or(0, |t| t.chars().count());
            Error::Parse {
                position: valid,
                message: format!("text is not UTF-8 (bad byte after character {valid})"),
            }
        })?;
        write(dst, decode(text, encoding)?);
        Ok(())
    })
}
