//! The text forms of IDs, layouts and times, once: ISO-8601 UTC times, JSON
//! strings, and the JSON of an ID's parts and of a layout that `flakeid decode
//! --json`, `flakeid layouts --json` and the service's `GET /v1/decode/{id}` and
//! `GET /v1/layout` print.
//!
//! Hand-written JSON (numbers, fixed words and escaped strings) keeps the core
//! dependency-free. Nothing on an ID's path calls this module, so builds that do
//! not show text (the WebAssembly package) carry none of it.

use crate::encoding::{Encoding, encode};
use crate::layout::{Layout, Parts};
use alloc::string::String;
use core::fmt::Write as _;

/// `2017-09-20T13:43:08.849Z` for Unix milliseconds (UTC, millisecond precision).
///
/// ```
/// assert_eq!(flakeid_core::text::iso8601(1505914988849), "2017-09-20T13:43:08.849Z");
/// ```
pub fn iso8601(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let ms = unix_ms % 1000;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(secs / 86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for days on or after the Unix epoch).
fn civil_from_days(days: u64) -> (u64, u32, u32) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `text` as a JSON string, quotes included: `"` and `\` escaped, control
/// characters as `\u00XX`; everything else (UTF-8) as it is.
///
/// ```
/// assert_eq!(flakeid_core::text::json_string("a\"b\\\n"), r#""a\"b\\\u000a""#);
/// ```
pub fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An ID taken apart, as one JSON object (one line): what `GET /v1/decode/{id}`
/// answers and `flakeid decode --json` prints. The ID is a string (a JS number
/// loses IDs above 2^53); the parts are numbers.
///
/// ```
/// use flakeid_core::{Layout, text::parts_json};
/// let id = 910499571847892992;
/// let json = parts_json(&Layout::SNOWFLAKE, id, &Layout::SNOWFLAKE.decompose(id));
/// assert!(json.starts_with(r#"{"id":"910499571847892992","layout":"snowflake","time":"2017-09-20T13:43:08.849Z""#));
/// ```
pub fn parts_json(layout: &Layout, id: u64, p: &Parts) -> String {
    format!(
        "{{\"id\":\"{id}\",\"layout\":{},\"time\":\"{}\",\"timestamp_ms\":{},\"datacenter\":{},\"worker\":{},\"node\":{},\"sequence\":{},\"hex\":\"{}\",\"base32\":\"{}\",\"base62\":\"{}\"}}",
        json_string(layout.display_name()),
        iso8601(p.timestamp_ms),
        p.timestamp_ms,
        p.datacenter,
        p.worker,
        p.node,
        p.sequence,
        encode(id, Encoding::Hex),
        encode(id, Encoding::Base32),
        encode(id, Encoding::Base62),
    )
}

/// A UUID, ULID or TypeID read by [`Wide::parse`](crate::Wide::parse) as one JSON
/// object: its UUID and ULID forms, its version, its TypeID when it was read as
/// one, and its time when its form carries one. What `flakeid decode --json` prints
/// for one, and what the service's `GET /v1/decode/{id}` answers. Errors: those of
/// [`Wide::to_typeid`](crate::Wide::to_typeid) (a prefix `Wide::parse` read is valid).
///
/// ```
/// use flakeid_core::{Wide, text::wide_json};
/// let (w, form) = Wide::parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398f")?;
/// assert_eq!(
///     wide_json(w, &form)?,
///     r#"{"uuid":"017f22e2-79b0-7cc3-98c4-dc0c0c07398f","ulid":"01FWHE4YDGFK1SHH6W1G60EECF","version":7,"timestamp_ms":1645557742000,"time":"2022-02-22T19:22:22.000Z"}"#
/// );
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub fn wide_json(value: crate::Wide, form: &crate::WideForm) -> crate::Result<String> {
    let mut out = format!(
        "{{\"uuid\":\"{}\",\"ulid\":\"{}\",\"version\":{}",
        value.to_uuid(),
        value.to_ulid(),
        value.version()
    );
    if let crate::WideForm::TypeId(prefix) = form {
        let _ = write!(out, ",\"typeid\":{}", json_string(&value.to_typeid(prefix)?));
    }
    if let Ok(ms) = form.timestamp_ms(value) {
        let _ = write!(out, ",\"timestamp_ms\":{ms},\"time\":\"{}\"", iso8601(ms));
    }
    out.push('}');
    Ok(out)
}

/// A layout as one JSON object: its split, its epoch, and the times it ends
/// (`last_time`: the last its time field holds; `signed_until`: the last whose IDs
/// stay below 2^63). What `flakeid layouts --json` prints, one per preset, and
/// what the service's `GET /v1/layout` opens with (then its node and lease).
///
/// ```
/// use flakeid_core::{Layout, text::layout_json};
/// assert!(layout_json(&Layout::SNOWFLAKE).starts_with(r#"{"name":"snowflake","time_bits":41,"#));
/// ```
pub fn layout_json(l: &Layout) -> String {
    format!(
        "{{\"name\":{},\"time_bits\":{},\"datacenter_bits\":{},\"worker_bits\":{},\"sequence_bits\":{},\"tick_ms\":{},\"epoch_ms\":{},\"order\":{},\"epoch\":\"{}\",\"last_time\":\"{}\",\"last_timestamp_ms\":{},\"signed_until\":\"{}\"}}",
        json_string(l.display_name()),
        l.time_bits(),
        l.datacenter_bits(),
        l.worker_bits(),
        l.sequence_bits(),
        l.tick_ms(),
        l.epoch_ms(),
        json_string(l.order().as_str()),
        iso8601(l.epoch_ms()),
        iso8601(l.last_timestamp_ms()),
        l.last_timestamp_ms(),
        iso8601(l.signed_until_ms()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1505914988849), "2017-09-20T13:43:08.849Z");
        assert_eq!(iso8601(951782400000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(951868799999), "2000-02-29T23:59:59.999Z");
        assert_eq!(iso8601(1288834974657), "2010-11-04T01:42:54.657Z");
        // 2100 is not a leap year; 2400 is.
        assert_eq!(iso8601(4107542400000), "2100-03-01T00:00:00.000Z");
        assert_eq!(iso8601(13574563200000), "2400-02-29T00:00:00.000Z");
        // The largest u64 still formats (a custom layout's end can be that far).
        assert!(iso8601(u64::MAX).ends_with("Z"));
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_previous() {
        // Day by day from 1970 to 2370: the date advances by exactly one day.
        let mut prev = civil_from_days(0);
        assert_eq!(prev, (1970, 1, 1));
        for day in 1..146_097 {
            let (y, m, d) = civil_from_days(day);
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let days_in = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
            let expected = if prev.2 < days_in[prev.1 as usize - 1] {
                (prev.0, prev.1, prev.2 + 1)
            } else if prev.1 < 12 {
                (prev.0, prev.1 + 1, 1)
            } else {
                (prev.0 + 1, 1, 1)
            };
            assert_eq!((y, m, d), expected, "day {day}");
            prev = (y, m, d);
        }
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_string("snowflake"), "\"snowflake\"");
        assert_eq!(json_string("\u{1}é\t"), "\"\\u0001é\\u0009\"");
    }

    #[test]
    fn parts_and_layouts() {
        let id = 910499571847892992;
        let l = Layout::SNOWFLAKE;
        assert_eq!(
            parts_json(&l, id, &l.decompose(id)),
            r#"{"id":"910499571847892992","layout":"snowflake","time":"2017-09-20T13:43:08.849Z","timestamp_ms":1505914988849,"datacenter":17,"worker":25,"node":569,"sequence":0,"hex":"0ca2be895c239000","base32":"0S8NYH5E27400","base62":"15G63YLn9Ae"}"#
        );
        let custom = Layout::builder().time_bits(40).build().unwrap_or(Layout::FLAKE);
        assert!(parts_json(&custom, 1, &custom.decompose(1)).contains(r#""layout":"custom""#));
        assert_eq!(
            layout_json(&Layout::SONYFLAKE),
            r#"{"name":"sonyflake","time_bits":39,"datacenter_bits":0,"worker_bits":16,"sequence_bits":8,"tick_ms":10,"epoch_ms":1409529600000,"order":"time|seq|node","epoch":"2014-09-01T00:00:00.000Z","last_time":"2188-11-16T03:28:58.879Z","last_timestamp_ms":6907087738879,"signed_until":"2188-11-16T03:28:58.879Z"}"#
        );
    }
}
