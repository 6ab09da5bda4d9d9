//! The small URL grammar leases need: `scheme://[user[:password]@]host[:port][/path][?k=v&...]`,
//! with percent-decoding of the user, password, path and query values.

use crate::error::{Error, Result};

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct LeaseUrl {
    pub scheme: String,
    pub user: Option<String>,
    pub password: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// Decoded path, with its leading `/` (empty when there is none).
    pub path: String,
    pub query: Vec<(String, String)>,
}

// Never print the password.
impl std::fmt::Debug for LeaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

fn bad(url: &str, why: impl std::fmt::Display) -> Error {
    // The reason may quote pieces of the URL too: the whole message is tidied.
    tidy(Error::config("lease", format!("lease URL {url:?} is invalid: {why}")))
}

/// A lease URL error as users see it: every password redacted, then at most 400
/// characters (redacting first, so a cut cannot expose part of a password).
pub(crate) fn tidy(e: Error) -> Error {
    match e {
        Error::Config { field, message } => {
            let message = redact_raw(&message);
            let message = match message.char_indices().nth(400) {
                Some((cut, _)) => format!("{}…", &message[..cut]),
                None => message,
            };
            Error::Config { field, message }
        }
        other => other,
    }
}

/// `text` with every `user:password@` password replaced by `***` — not only the
/// first authority's: a malformed URL may repeat one (the fuzzer found
/// `postgres://u:pw@h://u:pw@h:5432…` leaking the second).
fn redact_raw(text: &str) -> String {
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

impl LeaseUrl {
    pub fn parse(url: &str) -> Result<LeaseUrl> {
        let text = url.trim();
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| bad(url, "expected scheme://..., e.g. redis://127.0.0.1:6379/0"))?;
        let scheme = scheme.to_ascii_lowercase();
        let (before_query, query_text) = match rest.split_once('?') {
            Some((a, q)) => (a, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match before_query.find('/') {
            Some(i) => (&before_query[..i], &before_query[i..]),
            None => (before_query, ""),
        };
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            None => (None, None),
            Some(ui) => match ui.split_once(':') {
                Some((u, p)) => (Some(decode(url, u)?), Some(decode(url, p)?)),
                None => (Some(decode(url, ui)?), None),
            },
        };
        let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
            // [::1]:port
            let (h, after) = h.split_once(']').ok_or_else(|| bad(url, "unclosed '[' in the host"))?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(parse_port(url, p)?),
                None if after.is_empty() => None,
                None => return Err(bad(url, "junk after the IPv6 host")),
            };
            (h.to_string(), port)
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(parse_port(url, p)?)),
                None => (hostport.to_string(), None),
            }
        };
        let mut query = Vec::new();
        if let Some(q) = query_text {
            for pair in q.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                query.push((decode(url, k)?, decode(url, v)?));
            }
        }
        Ok(LeaseUrl {
            scheme,
            user,
            password,
            host,
            port,
            path: decode(url, path)?,
            query,
        })
    }

    /// The last value given for `key`.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    #[cfg_attr(
        not(any(feature = "lease-file", feature = "lease-redis", feature = "lease-postgres")),
        allow(dead_code)
    )]
    /// Fails on query keys outside `known`, so that a typo is not silently ignored.
    pub fn check_params(&self, known: &[&str]) -> Result<()> {
        for (k, _) in &self.query {
            if !known.contains(&k.as_str()) {
                return Err(Error::config(
                    "lease",
                    format!(
                        "lease URL {} has an unknown parameter {k:?} (known: {})",
                        self.redacted(),
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `scheme://[user@]host[:port]path`, without the password or the query.
    pub fn redacted(&self) -> String {
        let user = self.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("{}://{user}{host}{port}{}", self.scheme, self.path)
    }
}

fn parse_port(url: &str, p: &str) -> Result<u16> {
    p.parse::<u16>()
        .map_err(|_| bad(url, format_args!("port {p:?} is not a number in 0..=65535")))
}

fn decode(url: &str, s: &str) -> Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad(url, format_args!("bad percent-escape at byte {i}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(url, "percent-escapes do not decode to UTF-8"))
}

/// A namespace names an independent ID space on one store. It becomes part of file
/// names and Redis keys, so it is kept to a safe alphabet.
pub(crate) fn check_namespace(ns: &str) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_part() {
        let u = LeaseUrl::parse("postgres://fl%40ke:p%3Ass@127.0.0.1:5432/ids?namespace=a&table=t").unwrap();
        assert_eq!(u.scheme, "postgres");
        assert_eq!(u.user.as_deref(), Some("fl@ke"));
        assert_eq!(u.password.as_deref(), Some("p:ss"));
        assert_eq!((u.host.as_str(), u.port), ("127.0.0.1", Some(5432)));
        assert_eq!(u.path, "/ids");
        assert_eq!(u.param("namespace"), Some("a"));
        assert_eq!(u.param("table"), Some("t"));
        assert!(!u.redacted().contains("p:ss"));
        assert!(!format!("{u:?}").contains("p:ss"));

        let f = LeaseUrl::parse("file:///var/lib/flakeid").unwrap();
        assert_eq!((f.host.as_str(), f.path.as_str()), ("", "/var/lib/flakeid"));
        let r = LeaseUrl::parse("redis://[::1]:6380/2").unwrap();
        assert_eq!((r.host.as_str(), r.port, r.path.as_str()), ("::1", Some(6380), "/2"));
        assert_eq!(r.redacted(), "redis://[::1]:6380/2");
    }

    #[test]
    fn rejects_bad_urls_without_leaking_passwords() {
        for bad_url in ["redis//x", "redis://h:99999", "redis://h:1/%zz"] {
            let e = LeaseUrl::parse(bad_url).unwrap_err();
            assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
        }
        let e = LeaseUrl::parse("postgres://u:secret@h:70000/db")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret"), "{e}");
        // Found by the lease_url fuzz target: a repeated authority leaked its password,
        // and a cut-short message could leave a password with its '@' cut off.
        for leaky in [
            "postgres://u:hunter22@h://u:hunter22@h:5432er22@hlble=t",
            &format!("xoses://{}u:hunter20{}@h:99999", "\0".repeat(190), " ".repeat(30)),
            "redis://u:pa:ss99w0rd@h:99999/0",
        ] {
            let e = LeaseUrl::parse(leaky).unwrap_err().to_string();
            for pw in ["hunter22", "hunter20", "ss99w0rd", "pa:ss"] {
                assert!(!e.contains(pw), "{e}");
            }
            assert!(e.chars().count() <= 430, "{} characters", e.chars().count()); // 400 + the Display prefix
        }
        let u = LeaseUrl::parse("redis://h/0?nmespace=x").unwrap();
        assert!(
            u.check_params(&["namespace"])
                .unwrap_err()
                .to_string()
                .contains("nmespace")
        );
    }

    #[test]
    fn namespaces() {
        check_namespace("orders-v2.eu_1").unwrap();
        for bad in ["", ".hidden", "a/b", "a b", &"x".repeat(65)] {
            assert!(check_namespace(bad).is_err(), "{bad:?}");
        }
    }
}
