//! The 128-bit family's JS values: a UUID, ULID or TypeID in (text, 16 bytes or a
//! `bigint`), and the options of `new UuidGenerator({...})`.

use crate::{JS_MAX_SAFE, JsArg, config, js_uint};
#[cfg(feature = "uuid7")]
use crate::{JsOption, js_generator_options};
use flakeid_core::{Result, Wide};

/// A 128-bit value as a binding reads it: what [`JsArg`] cannot hold.
#[derive(Debug, Clone, PartialEq)]
pub enum JsWide<'a> {
    /// A `string`.
    Text(&'a str),
    /// A `Uint8Array` (or `Buffer`).
    Bytes(&'a [u8]),
    /// A `bigint`: its sign and, when it is below 2^128 in magnitude, that magnitude.
    BigInt {
        /// Below zero.
        negative: bool,
        /// `|value|`, or `None` when it is 2^128 or more.
        magnitude: Option<u128>,
    },
    /// Anything else ([`JsArg::type_name`] names it).
    Other(&'static str),
}

/// A UUID's 128 bits from UUID text (or, with `any_form`, ULID or TypeID text too),
/// 16 big-endian bytes or a `bigint` in `0..2^128`: the core's parsers, their
/// errors (a parse error names the position); a wrong type or range is a
/// configuration error naming `field`.
pub fn js_wide(field: &'static str, value: &JsWide<'_>, any_form: bool) -> Result<Wide> {
    match *value {
        JsWide::Text(text) if any_form => Wide::parse_any(text),
        JsWide::Text(text) => Wide::parse_uuid(text),
        JsWide::Bytes(b) => Wide::from_slice(b),
        JsWide::BigInt {
            negative: false,
            magnitude: Some(v),
        }
        | JsWide::BigInt {
            negative: true,
            magnitude: Some(v @ 0),
        } => Ok(Wide(v)),
        JsWide::BigInt { negative, .. } => Err(config(
            field,
            format!(
                "{field} must be a bigint in 0n..=2n**128n-1n, got {}",
                if negative {
                    "a negative bigint"
                } else {
                    "a bigint of 2^128 or more"
                }
            ),
        )),
        JsWide::Other(type_name) => Err(config(
            field,
            format!("{field} must be UUID text, a 16-byte Uint8Array or a bigint, got {type_name}"),
        )),
    }
}

/// The Unix millisecond a UUIDv7 carries, or a ULID or TypeID (text): the ULID's
/// first 48 bits, whatever its other bits; a UUID of another version is the core's
/// parse error.
pub fn js_wide_timestamp_ms(value: &JsWide<'_>) -> Result<u64> {
    if let JsWide::Text(text) = value {
        return Wide::timestamp_ms_of_text(text);
    }
    js_wide("value", value, true)?.uuid7_timestamp_ms()
}

/// `rand_a` of `composeUuid7`: a whole `number` (the core checks its 12 bits).
pub fn js_rand_a(value: &JsArg) -> Result<u16> {
    let v = js_uint("rand_a", value, JS_MAX_SAFE)?;
    u16::try_from(v).map_err(|_| flakeid_core::Error::out_of_range("rand_a", 0, 0xfff, v))
}

/// The Unix ms of `uuid7At(ms)` and of `uuid7({ msecs })`: a whole `number` (the
/// core checks the UUID's 48-bit field).
pub fn js_unix_ms(field: &'static str, value: &JsArg) -> Result<u64> {
    js_uint(field, value, JS_MAX_SAFE)
}

/// The `n` of `uuid7s(n)`: a whole `number`, then the core's rule for a batch of
/// UUIDv7 text (`n` in `0..=MAX_UUID7_BATCH`), one string per ID.
pub fn js_uuid7_batch(value: &JsArg) -> Result<usize> {
    flakeid_core::check_uuid7_batch(i128::from(js_uint("n", value, JS_MAX_SAFE)?))
}

/// The shift of `uuid7Shifted(ms)`: a whole `number`, negative for the past.
pub fn js_shift_ms(value: &JsArg) -> Result<i64> {
    match *value {
        JsArg::Number(v) if v.fract() == 0.0 && v.abs() <= JS_MAX_SAFE as f64 => Ok(v as i64),
        ref other => Err(config(
            "shift_ms",
            format!(
                "shift_ms must be a whole number in -{JS_MAX_SAFE}..={JS_MAX_SAFE}, got {}",
                match other {
                    JsArg::Number(v) => crate::js_number_text(*v),
                    other => other.type_name().to_string(),
                }
            ),
        )),
    }
}

/// The options of `uuid7(options)`, the npm `uuid` package's `v7(options)`: `msecs`
/// (an explicit time, [`js_unix_ms`]); any other member (`seq`, `random`, `rng`, a
/// typo) is refused naming it, never ignored. `None`: the generator's next UUID.
pub fn js_uuid7_options<'a>(members: impl IntoIterator<Item = (&'a str, &'a JsArg)>) -> Result<Option<u64>> {
    let mut msecs = None;
    for (key, value) in members {
        match key {
            "msecs" if !matches!(value, JsArg::Undefined) => msecs = Some(js_unix_ms("msecs", value)?),
            "msecs" => {}
            // npm `uuid`'s own counter: flakeid's counter is the generator's, and an
            // explicit one is composeUuid7's field.
            "seq" => {
                // Field `options`, as every option refused here.
                return Err(config(
                    "options",
                    "seq is npm uuid's counter; a flakeid generator keeps its own: to set the \
                     bits yourself, call composeUuid7(ms, randA, randB)"
                        .into(),
                ));
            }
            other => return Err(flakeid_core::unknown_option(other, &["msecs"])),
        }
    }
    Ok(msecs)
}

/// Where `uuid7(options, buf, offset)` (npm `uuid`'s `v7(options, buf, offset)`)
/// writes the UUID's 16 bytes in a `buf` of `buf_len` bytes: `offset`, `0` when
/// `undefined`, a whole `number` in `0..=buf_len - 16`; a shorter `buf` is
/// refused naming `buf`, a bad `offset` naming `offset` and that range (npm `uuid`
/// throws a `RangeError` there).
pub fn js_buffer_offset(buf_len: usize, offset: &JsArg) -> Result<usize> {
    let Some(max) = buf_len.checked_sub(16) else {
        return Err(config(
            "buf",
            format!("buf must have room for the UUID's 16 bytes, got a Uint8Array of {buf_len}"),
        ));
    };
    if matches!(offset, JsArg::Undefined) {
        return Ok(0);
    }
    let at = js_uint("offset", offset, max as u64).map_err(|_| {
        config(
            "offset",
            format!(
                "offset must be a whole number in 0..={max} (16 bytes in a buf of {buf_len}), got {}",
                match offset {
                    JsArg::Number(v) => crate::js_number_text(*v),
                    other => other.type_name().to_string(),
                }
            ),
        )
    })?;
    Ok(at as usize)
}

/// A `uuid7(options, buf)` `buf` that is not a `Uint8Array`: refused naming it.
pub fn js_not_a_buffer(type_name: &str) -> flakeid_core::Error {
    config(
        "buf",
        format!("buf must be a Uint8Array (or a Buffer) for the UUID's 16 bytes, got {type_name}"),
    )
}

/// The options of `new UuidGenerator({...})`: the members of a generator-options
/// object, read by [`js_generator_options`], set by name through the core's
/// [`UuidGeneratorBuilder::set_text`](flakeid_core::UuidGeneratorBuilder::set_text)
/// (which refuses the options a UUID has no use for, a node among them). The index
/// of the member that gave `clock` comes back for the binding to unwrap.
#[cfg(feature = "uuid7")]
pub fn js_uuid_generator_options<'a>(
    members: impl IntoIterator<Item = (&'a str, &'a JsArg)>,
) -> Result<(flakeid_core::UuidGeneratorBuilder, Option<usize>)> {
    use flakeid_core::{GENERATOR_OPTIONS, OptionValue, UUID_GENERATOR_OPTIONS, unknown_option};
    let members: Vec<_> = members.into_iter().collect();
    // A key of neither table is refused with the names this constructor reads.
    if let Some((key, _)) = members
        .iter()
        .find(|(k, _)| !GENERATOR_OPTIONS.iter().any(|o| o.camel_name == *k))
    {
        let mut known: Vec<&'static str> = GENERATOR_OPTIONS
            .iter()
            .filter(|o| UUID_GENERATOR_OPTIONS.contains(&o.name))
            .map(|o| o.camel_name)
            .collect();
        known.push("clock");
        return Err(unknown_option(key, &known));
    }
    let mut b = flakeid_core::UuidGenerator::builder();
    let mut clock = None;
    for (i, option, value) in js_generator_options(members)? {
        match value {
            JsOption::Value(OptionValue::Uint(v)) => b = b.set_text(option.name, &v.to_string())?,
            JsOption::Value(OptionValue::Text(t)) => b = b.set_text(option.name, t)?,
            JsOption::Object if option.name == "clock" => clock = Some(i),
            // A layout object: the core's refusal, as for a layout's name.
            JsOption::Object => b = b.set_text(option.name, "")?,
            JsOption::Absent => {}
        }
    }
    Ok((b, clock))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakeid_core::Error;

    fn field<T: std::fmt::Debug>(r: Result<T>) -> (&'static str, String) {
        match r {
            Err(Error::Config { field, message }) => (field, message),
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn a_buffers_offset_is_checked_against_its_length() {
        assert_eq!(js_buffer_offset(16, &JsArg::Undefined).ok(), Some(0));
        assert_eq!(js_buffer_offset(48, &JsArg::Number(32.0)).ok(), Some(32));
        assert_eq!(
            field(js_buffer_offset(48, &JsArg::Number(33.0))),
            (
                "offset",
                "offset must be a whole number in 0..=32 (16 bytes in a buf of 48), got 33".into()
            )
        );
        for bad in [JsArg::Number(-1.0), JsArg::Number(1.5), JsArg::String("1".into())] {
            assert_eq!(field(js_buffer_offset(48, &bad)).0, "offset", "{bad:?}");
        }
        assert_eq!(field(js_buffer_offset(15, &JsArg::Undefined)).0, "buf");
    }

    #[test]
    fn npm_uuids_seq_points_to_compose_uuid7() {
        let seq = JsArg::Number(5.0);
        let (name, message) = field(js_uuid7_options([("seq", &seq)]));
        assert_eq!(name, "options");
        assert!(message.contains("composeUuid7"), "{message}");
        assert_eq!(js_uuid7_options([("msecs", &seq)]).ok(), Some(Some(5)));
    }

    #[test]
    fn a_batch_of_uuid_text_has_the_cores_limit() {
        let limit = flakeid_core::MAX_UUID7_BATCH as f64;
        assert_eq!(js_uuid7_batch(&JsArg::Number(limit)).ok(), Some(1 << 20));
        let (name, message) = field(js_uuid7_batch(&JsArg::Number(limit + 1.0)));
        assert_eq!(name, "n");
        assert!(message.contains("0..=1048576"), "{message}");
    }
}
