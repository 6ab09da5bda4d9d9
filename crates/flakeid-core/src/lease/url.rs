//! What every lease URL shares, whoever parses it: the namespace rule, the one
//! redaction rule for secrets in messages, and the `file://` URL, read here without the `url`
//! crate (a path and `?namespace=` need no URL library; the network schemes'
//! parser lives in `flakeid-lease-net`).

use crate::error::{Error, Result};

/// The value of the `lease` setting that means the app's own database: the
/// framework adapters turn it into the database's `postgres://` URL
/// (`flakeid_lease_net::database_lease`); anywhere else it is refused.
pub const DATABASE_LEASE: &str = "database";

/// A lease URL error as users see it: every password redacted, then at most 400
/// characters (redacting first, so a cut cannot expose part of a password).
/// [`LeaseSpec::parse`](super::LeaseSpec::parse) applies it to every scheme's
/// errors; a scheme's own parser may use it for errors it returns directly.
pub fn redact_error(e: Error) -> Error {
    match e {
        Error::Config { field, message } => {
            let message = redact_passwords(&message);
            let message = match message.char_indices().nth(400) {
                Some((cut, _)) => format!("{}…", &message[..cut]),
                None => message,
            };
            Error::Config { field, message }
        }
        other => other,
    }
}

/// `text` — a URL, or a message quoting one — with every secret replaced by `***`:
/// - every `user:password@` password, not only the first authority's: a malformed
///   URL may repeat one (the fuzzer found `postgres://u:pw@h://u:pw@h:5432…`
///   leaking the second);
/// - the value of every query parameter [`is_secret_param`] names (`?password=…`,
///   `&sslpassword=…`, `&token=…`), up to the next `&`, `#`, quote or whitespace
///   (none of which a URL's query value holds unencoded).
///
/// The one rule for every surface that shows a lease URL: messages, logs, status.
pub fn redact_passwords(text: &str) -> String {
    redact_userinfo(&redact_secret_params(text))
}

/// Whether a URL query parameter carries a secret, by its name (percent-decoded,
/// any case): libpq's `password` and `sslpassword`, and any name containing
/// `password`, `passwd`, `passphrase`, `secret`, `token`, `credential`, `auth` or
/// `key`, or that is `pass`, `pwd` or `pw` — except `key` and `sslkey`, which name
/// a file (the private key is in the file, not in the URL).
pub fn is_secret_param(name: &str) -> bool {
    let name = percent_decode(name, true)
        .unwrap_or_else(|| name.to_string())
        .to_ascii_lowercase();
    if matches!(name.as_str(), "key" | "sslkey") {
        return false;
    }
    matches!(name.as_str(), "pass" | "pwd" | "pw")
        || [
            "password",
            "passwd",
            "passphrase",
            "secret",
            "token",
            "credential",
            "auth",
            "key",
        ]
        .iter()
        .any(|word| name.contains(word))
}

/// Where a secret query value ends (exclusive), from the start of the value.
fn value_end(value: &str) -> usize {
    value
        .find(|c: char| matches!(c, '&' | '#' | '"' | '\'' | '`') || c.is_whitespace())
        .unwrap_or(value.len())
}

fn redact_secret_params(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['?', '&']) {
        out.push_str(&rest[..=i]);
        rest = &rest[i + 1..];
        let name_end = rest
            .find(|c: char| matches!(c, '=' | '&' | '?' | '#' | '"' | '\'') || c.is_whitespace())
            .unwrap_or(rest.len());
        if rest[name_end..].starts_with('=') && name_end > 0 && is_secret_param(&rest[..name_end]) {
            let value = &rest[name_end + 1..];
            out.push_str(&rest[..=name_end]);
            out.push_str("***");
            rest = &value[value_end(value)..];
        }
    }
    out.push_str(rest);
    out
}

fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let before = &rest[..at];
        let start = before.rfind(['/', '@']).map_or(0, |i| i + 1);
        match before[start..].find(':') {
            Some(colon) => {
                out.push_str(&before[..start + colon + 1]);
                out.push_str("***@");
            }
            None => {
                out.push_str(before);
                out.push('@');
            }
        }
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out
}

/// A namespace names an independent ID space on one store. It becomes part of file
/// names and Redis keys, so it is kept to a safe alphabet.
pub fn check_namespace(ns: &str) -> Result<()> {
    let ok = !ns.is_empty()
        && ns.len() <= 64
        && ns
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        && !ns.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(Error::config(
            "lease",
            format!(
                "lease namespace must be 1..=64 characters of A-Z a-z 0-9 _ - . (not starting with '.'), got {ns:?}"
            ),
        ))
    }
}

fn bad(url: &str, why: impl std::fmt::Display) -> Error {
    // The reason may quote pieces of the URL too: the whole message is redacted.
    redact_error(Error::config("lease", format!("lease URL {url:?} is invalid: {why}")))
}

/// The scheme of a lease URL, lower-cased: the text before `://`.
pub(crate) fn scheme_of(url: &str) -> Result<String> {
    if url.trim() == DATABASE_LEASE {
        return Err(Error::config(
            "lease",
            format!(
                "lease = \"{DATABASE_LEASE}\" means the app's own PostgreSQL, which a framework adapter reads \
                 from the framework's settings (Django, SQLAlchemy, Drizzle, Kysely, GORM, Spring Boot); \
                 elsewhere give the database's postgres:// URL (docs/leases.md)"
            ),
        ));
    }
    match url.trim().split_once("://") {
        Some((scheme, _))
            if !scheme.is_empty()
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) =>
        {
            Ok(scheme.to_ascii_lowercase())
        }
        _ => Err(bad(url, "expected scheme://..., e.g. file:///var/lib/flakeid")),
    }
}

/// Decodes `%XX` escapes (and `+` as a space when `plus` is set, as in a query).
fn percent_decode(text: &str, plus: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        match b {
            b'%' => match (hex(i + 1), hex(i + 2)) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                // Not an escape: kept as it is (as the URL standard does).
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// `file://[localhost]/abs/dir[?namespace=NAME]`, percent-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileUrl {
    /// The directory (absolute).
    pub dir: String,
    pub namespace: String,
}

impl FileUrl {
    pub fn parse(url: &str) -> Result<FileUrl> {
        let text = url.trim();
        let rest = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("file") => rest,
            _ => return Err(bad(url, "expected file:///path/to/dir")),
        };
        if rest.contains('#') {
            return Err(bad(url, "a lease URL has no #fragment"));
        }
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if !(authority.is_empty() || authority.eq_ignore_ascii_case("localhost")) || path.is_empty() {
            return Err(redact_error(Error::config(
                "lease",
                format!("file lease URL {url:?} must name an absolute directory: file:///path/to/dir"),
            )));
        }
        let dir = percent_decode(path, false).ok_or_else(|| bad(url, "percent-escapes do not decode to UTF-8"))?;
        #[cfg(windows)]
        let dir = drive_path(&dir).to_string();
        let mut namespace = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let k = percent_decode(k, true).unwrap_or_default();
            if k != "namespace" {
                return Err(redact_error(Error::config(
                    "lease",
                    format!("lease URL file://{dir} has an unknown parameter {k:?} (known: namespace)"),
                )));
            }
            // The last value given wins, as for every other scheme.
            namespace =
                Some(percent_decode(v, true).ok_or_else(|| bad(url, "percent-escapes do not decode to UTF-8"))?);
        }
        let namespace = namespace.unwrap_or_else(|| super::DEFAULT_NAMESPACE.to_string());
        check_namespace(&namespace)?;
        Ok(FileUrl { dir, namespace })
    }

    /// `file://DIR`, for messages (a path can hold text that looks like `user:password@`).
    pub fn redacted(&self) -> String {
        format!("file://{}", redact_passwords(&self.dir))
    }
}

/// `/C:/dir` (from `file:///C:/dir`) is the path `C:/dir` on Windows (RFC 8089,
/// appendix E.2); anything else stays as it is (`/dir`: the current drive's root).
#[cfg_attr(not(windows), allow(dead_code))]
fn drive_path(path: &str) -> &str {
    match path.as_bytes() {
        [b'/', d, b':', rest @ ..] if d.is_ascii_alphabetic() && matches!(rest, [] | [b'/' | b'\\', ..]) => &path[1..],
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_drive_paths() {
        assert_eq!(drive_path("/C:/ProgramData/flakeid"), "C:/ProgramData/flakeid");
        assert_eq!(drive_path("/d:"), "d:");
        for same in ["/var/lib/flakeid", "/C:x", "/1:/x", "C:/x", "/"] {
            assert_eq!(drive_path(same), same);
        }
        let f = FileUrl::parse("file:///C:/ProgramData/flakeid").unwrap();
        let want = if cfg!(windows) {
            "C:/ProgramData/flakeid"
        } else {
            "/C:/ProgramData/flakeid"
        };
        assert_eq!(f.dir, want);
    }

    #[test]
    fn file_urls() {
        let f = FileUrl::parse("file:///var/lib/flakeid").unwrap();
        assert_eq!((f.dir.as_str(), f.namespace.as_str()), ("/var/lib/flakeid", "flakeid"));
        let f = FileUrl::parse(" FILE://localhost/tmp/a%20b+c?namespace=x&namespace=orders ").unwrap();
        assert_eq!((f.dir.as_str(), f.namespace.as_str()), ("/tmp/a b+c", "orders"));
        for bad_url in [
            "file://host/dir",
            "file://",
            "file:dir",
            "file:///d?nmespace=x",
            "file:///d?namespace=a/b",
            "file:///d#x",
            "file:///%ff",
            "redis://h/0",
        ] {
            let e = FileUrl::parse(bad_url).unwrap_err();
            assert!(matches!(e, Error::Config { field: "lease", .. }), "{bad_url}: {e}");
        }
        let e = FileUrl::parse("file://u:hunter22@/x").unwrap_err().to_string();
        assert!(!e.contains("hunter22"), "{e}");
        assert_eq!(
            FileUrl::parse("file:///a/u:pw12345@b").unwrap().redacted(),
            "file:///a/u:***@b"
        );
    }

    #[test]
    fn schemes() {
        assert_eq!(scheme_of(" Redis://h/0").unwrap(), "redis");
        for bad_url in ["redis//x", "://x", "not a url", "a b://c"] {
            assert!(scheme_of(bad_url).is_err(), "{bad_url}");
        }
        // The adapters' word, reaching a generator unconverted: said what it means.
        let e = scheme_of("database").unwrap_err().to_string();
        assert!(e.contains("framework adapter") && e.contains("postgres://"), "{e}");
    }

    #[test]
    fn redaction_and_length() {
        // Found by the lease_url fuzz target: a repeated authority leaked its password,
        // and a cut-short message could leave a password with its '@' cut off.
        for leaky in [
            "postgres://u:hunter22@h://u:hunter22@h:5432er22@hlble=t",
            &format!("xoses://{}u:hunter20{}@h:99999", "\0".repeat(190), " ".repeat(30)),
            "redis://u:pa:ss99w0rd@h:99999/0",
        ] {
            let e = redact_error(Error::config("lease", format!("lease URL {leaky:?} is invalid"))).to_string();
            for pw in ["hunter22", "hunter20", "ss99w0rd", "pa:ss"] {
                assert!(!e.contains(pw), "{e}");
            }
            assert!(e.chars().count() <= 430, "{} characters", e.chars().count()); // 400 + the Display prefix
        }
    }

    #[test]
    fn secret_query_parameters() {
        for (url, shown) in [
            (
                "postgres://u@h/db?password=hunter22&namespace=n",
                "postgres://u@h/db?password=***&namespace=n",
            ),
            (
                "postgres://u:hunter22@h/db?sslpassword=hunter23&sslkey=/k.pem",
                "postgres://u:***@h/db?sslpassword=***&sslkey=/k.pem",
            ),
            (
                "redis://h/0?namespace=n&Token=hunter24#x",
                "redis://h/0?namespace=n&Token=***#x",
            ),
            (
                "etcd://h/?api_key=hunter25&key=/c.key",
                "etcd://h/?api_key=***&key=/c.key",
            ),
            ("postgres://h/db?pass%77ord=hunter26", "postgres://h/db?pass%77ord=***"),
            ("postgres://h/db?password=", "postgres://h/db?password=***"),
            ("postgres://h/db?password", "postgres://h/db?password"),
            ("redis://h/0?namespace=a&ca=/x", "redis://h/0?namespace=a&ca=/x"),
        ] {
            assert_eq!(redact_passwords(url), shown, "{url}");
        }
        // Inside a message that quotes the URL: the value ends at the quote.
        let e = redact_error(Error::config(
            "lease",
            format!(
                "lease URL {:?} is invalid: bad port",
                "postgres://u:hunter27@h:99999/db?password=hunter28&x=1"
            ),
        ))
        .to_string();
        assert!(!e.contains("hunter27") && !e.contains("hunter28"), "{e}");
        assert!(e.contains("password=***&x=1\" is invalid: bad port"), "{e}");
        for name in [
            "password",
            "sslpassword",
            "PASSWORD",
            "secret",
            "client_secret",
            "access_token",
            "apikey",
            "pwd",
        ] {
            assert!(is_secret_param(name), "{name}");
        }
        for name in [
            "namespace",
            "table",
            "sslmode",
            "sslrootcert",
            "sslcert",
            "sslkey",
            "key",
            "cert",
            "ca",
            "user",
        ] {
            assert!(!is_secret_param(name), "{name}");
        }
    }

    #[test]
    fn namespaces() {
        check_namespace("orders-v2.eu_1").unwrap();
        for bad in ["", ".hidden", "a/b", "a b", &"x".repeat(65)] {
            assert!(check_namespace(bad).is_err(), "{bad:?}");
        }
    }
}
