//! The Kubernetes API's times: `MicroTime` (`renewTime`, `acquireTime`:
//! `2006-01-02T15:04:05.000000Z`) written, and RFC 3339 times in UTC read
//! (`creationTimestamp` in whole seconds, `MicroTime`s with a fraction). Reading
//! uses Howard Hinnant's `days_from_civil`; writing, the core's ISO-8601 text.

/// Days since 1970-01-01 of `y-m-d`.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A `MicroTime` for Unix time `us` (microseconds): the core's ISO-8601 form of
/// the millisecond with the microseconds after it.
pub(crate) fn micro_time(us: u64) -> String {
    let ms = flakeid_core::text::iso8601(us / 1000);
    format!("{}{:03}Z", ms.trim_end_matches('Z'), us % 1000)
}

/// Unix ms of an RFC 3339 time in UTC (`Z`) as the API server writes them, with
/// or without a fraction (cut to ms); `None` for anything else.
pub(crate) fn parse_ms(t: &str) -> Option<u64> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = t.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let rest = &t[19..];
    let (frac, zone) = match rest.strip_prefix('.') {
        Some(r) => {
            let n = r.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            (&r[..n], &r[n..])
        }
        None => ("", rest),
    };
    if !matches!(zone, "Z" | "z") {
        return None;
    }
    let ms: u64 = format!("{frac:0<3}")[..3].parse().ok()?;
    let days = days_from_civil(i64::from(y), mo, d);
    let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s);
    u64::try_from(secs).ok()?.checked_mul(1000)?.checked_add(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_known_values() {
        assert_eq!(micro_time(0), "1970-01-01T00:00:00.000000Z");
        // 2026-11-29T07:39:29.123456Z, as `date -u -d @1795937969` says.
        assert_eq!(micro_time(1_795_937_969_123_456), "2026-11-29T07:39:29.123456Z");
        assert_eq!(parse_ms("2026-11-29T07:39:29Z"), Some(1_795_937_969_000));
        assert_eq!(parse_ms("2026-11-29T07:39:29.123456Z"), Some(1_795_937_969_123));
        assert_eq!(parse_ms("2024-02-29T23:59:59.9Z"), Some(1_709_251_199_900));
        for us in [0u64, 951_782_400_000_000, 1_709_251_199_999_999, 4_102_444_800_000_001] {
            assert_eq!(parse_ms(&micro_time(us)), Some(us / 1000), "{}", micro_time(us));
        }
        for bad in [
            "",
            "2026-11-29 07:39:29Z",
            "2026-11-29T07:39:29+01:00",
            "2026-13-01T00:00:00Z",
            "2026-11-29T07:39:29.Z",
            "2026-11-29T07:39:2xZ",
            "+026-11-29T07:39:29Z",
        ] {
            assert_eq!(parse_ms(bad), None, "{bad}");
        }
    }
}
