//! Option names of the public API (shared/API.md §5), so that every binding refuses
//! a misspelled option the same way instead of ignoring it: `{ workerId: 3 }`
//! silently gave every process node 0 — duplicate IDs across processes.

use crate::encoding::shown;
use crate::error::Error;

/// The options of `new Generator({...})` in `@flakeid/node` and `@flakeid/wasm`.
pub const JS_GENERATOR_OPTIONS: [&str; 12] = [
    "datacenter",
    "worker",
    "node",
    "layout",
    "overflow",
    "clockBackwards",
    "maxBorrowMs",
    "maxWaitMs",
    "lease",
    "leaseTtlMs",
    "maxSequence",
    "clock",
];

/// The options of `new Sealer(key, {...})` (sealed IDs, flakeid-seal) in
/// `@flakeid/node` and `@flakeid/wasm`.
pub const JS_SEALER_OPTIONS: [&str; 2] = ["layout", "tweak"];

/// The error for an ID passed to `@flakeid/node` or `@flakeid/wasm` as a JS
/// `number`: refused in both, since a number cannot hold every 64-bit ID exactly.
pub fn js_number_id_error(field: &'static str) -> Error {
    Error::config(
        field,
        format!(
            "{field} must be a bigint or a decimal string, got a number (a number cannot hold every 64-bit ID \
             exactly: pass 123n or '123')"
        ),
    )
}

/// The known name most like `key`: the same letters ignoring case, `_` and `-`
/// (`lease_ttl_ms` → `leaseTtlMs`), else the longest known name `key` starts with
/// (`workerId` → `worker`). Allocation-free: it ships in the wasm build.
pub fn closest_option(key: &str, known: &[&'static str]) -> Option<&'static str> {
    fn letters(s: &str) -> impl Iterator<Item = u8> + '_ {
        s.bytes()
            .filter(u8::is_ascii_alphanumeric)
            .map(|b| b.to_ascii_lowercase())
    }
    let mut prefix: Option<&'static str> = None;
    for &name in known {
        if letters(key).eq(letters(name)) {
            return Some(name);
        }
        let mut k = letters(key);
        if letters(name).all(|b| k.next() == Some(b)) && prefix.is_none_or(|p| p.len() < name.len()) {
            prefix = Some(name);
        }
    }
    prefix
}

/// The error for an option nobody reads: names it (briefly), suggests the likeliest
/// meant one, and lists the options.
pub fn unknown_option(key: &str, known: &[&'static str]) -> Error {
    let mut message = format!("unknown option {}", shown(key));
    if let Some(k) = closest_option(key, known) {
        message.push_str(" (did you mean \"");
        message.push_str(k);
        message.push_str("\"?)");
    }
    message.push_str("; the options are ");
    for (i, name) in known.iter().enumerate() {
        if i > 0 {
            message.push_str(", ");
        }
        message.push_str(name);
    }
    Error::config("options", message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let k = &JS_GENERATOR_OPTIONS;
        assert_eq!(closest_option("workerId", k), Some("worker"));
        assert_eq!(closest_option("lease_ttl_ms", k), Some("leaseTtlMs"));
        assert_eq!(closest_option("ClockBackwards", k), Some("clockBackwards"));
        assert_eq!(closest_option("zzz", k), None);
        let e = unknown_option("workerId", k).to_string();
        assert!(
            e.contains("\"workerId\"") && e.contains("did you mean \"worker\""),
            "{e}"
        );
    }
}
