//! Network lease URLs, parsed by the `url` crate:
//! `scheme://[user[:password]@]host[:port][/path][?k=v&...]`, percent-decoded. etcd
//! URLs may list several endpoints: `etcd://h1:2379,h2:2379/`. Password redaction
//! and the namespace rule are the core's (one rule for every scheme).

use flakeid_core::lease::{DEFAULT_NAMESPACE, check_namespace, redact_error, redact_passwords};
use flakeid_core::{Error, Result};

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct LeaseUrl {
    pub scheme: String,
    pub user: Option<String>,
    pub password: Option<String>,
    /// The first host (without IPv6 brackets; may be empty: each store checks).
    pub host: String,
    pub port: Option<u16>,
    /// Further `host[:port]` endpoints, in order (etcd only).
    pub more_hosts: Vec<(String, Option<u16>)>,
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
    // The reason may quote pieces of the URL too: the whole message is redacted.
    redact_error(config(format!("lease URL {url:?} is invalid: {why}")))
}

/// A `Config` error about the `lease` option.
pub(crate) fn config(message: String) -> Error {
    Error::Config {
        field: "lease",
        message,
    }
}

/// Decodes a user, password or path the url crate left percent-encoded.
fn percent_decode(url: &str, s: &str) -> Result<String> {
    ::percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| bad(url, "percent-escapes do not decode to UTF-8"))
}

/// Splits `h1:1,h2:2` out of the authority of an etcd URL: the url crate parses
/// one host per URL, so each further endpoint is parsed as a URL of its own.
fn split_hosts(text: &str) -> (String, Vec<String>) {
    let Some((scheme, rest)) = text.split_once("://") else {
        return (text.to_string(), Vec::new());
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, hosts) = match authority.rfind('@') {
        Some(i) => authority.split_at(i + 1),
        None => ("", authority),
    };
    let mut parts = hosts.split(',');
    let first = parts.next().unwrap_or("");
    let more = parts.map(str::to_string).collect();
    (format!("{scheme}://{userinfo}{first}{tail}"), more)
}

fn host_port(url: &str, u: &::url::Url) -> Result<(String, Option<u16>)> {
    let host = match u.host() {
        None => String::new(),
        Some(::url::Host::Ipv6(ip)) => ip.to_string(),
        Some(h) => h.to_string(),
    };
    if host.is_empty() && u.port().is_some() {
        return Err(bad(url, "a port needs a host"));
    }
    Ok((host, u.port()))
}

impl LeaseUrl {
    pub fn parse(url: &str) -> Result<LeaseUrl> {
        let text = url.trim();
        if !text.contains("://") {
            return Err(bad(url, "expected scheme://..., e.g. redis://127.0.0.1:6379/0"));
        }
        let scheme = text
            .split_once("://")
            .map(|(s, _)| s.to_ascii_lowercase())
            .unwrap_or_default();
        let (main, more) = if matches!(scheme.as_str(), "etcd" | "etcds") {
            split_hosts(text)
        } else {
            (text.to_string(), Vec::new())
        };
        let u = ::url::Url::parse(&main).map_err(|e| bad(url, e))?;
        if u.fragment().is_some() {
            return Err(bad(url, "a lease URL has no #fragment"));
        }
        let (host, port) = host_port(url, &u)?;
        let mut more_hosts = Vec::new();
        for h in &more {
            let hu = ::url::Url::parse(&format!("{scheme}://{h}"))
                .map_err(|e| bad(url, format_args!("endpoint {h:?}: {e}")))?;
            if !hu.username().is_empty() || (hu.path() != "" && hu.path() != "/") {
                return Err(bad(url, format_args!("endpoint {h:?} must be host[:port]")));
            }
            let (h2, p2) = host_port(url, &hu)?;
            if h2.is_empty() {
                return Err(bad(url, "an empty endpoint in the host list"));
            }
            more_hosts.push((h2, p2));
        }
        let user = match u.username() {
            "" => None,
            name => Some(percent_decode(url, name)?),
        };
        let password = u.password().map(|p| percent_decode(url, p)).transpose()?;
        let path = if u.cannot_be_a_base() {
            return Err(bad(url, "expected scheme://host..., e.g. redis://127.0.0.1:6379/0"));
        } else {
            percent_decode(url, u.path())?
        };
        let query = u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        Ok(LeaseUrl {
            scheme,
            user,
            password,
            host,
            port,
            more_hosts,
            path,
            query,
        })
    }

    /// Every endpoint, `host` first, with `default_port` where none was given.
    pub fn endpoints(&self, default_port: u16) -> Vec<(String, u16)> {
        std::iter::once((self.host.clone(), self.port))
            .chain(self.more_hosts.iter().cloned())
            .map(|(h, p)| (h, p.unwrap_or(default_port)))
            .collect()
    }

    /// The last value given for `key`.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Fails on query keys outside `known`, so that a typo is not silently ignored.
    pub fn check_params(&self, known: &[&str]) -> Result<()> {
        for (k, _) in &self.query {
            if !known.contains(&k.as_str()) {
                return Err(config(format!(
                    "lease URL {} has an unknown parameter {k:?} (known: {})",
                    self.redacted(),
                    known.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The `namespace` parameter (default `flakeid`), checked.
    pub fn namespace(&self) -> Result<String> {
        let ns = self.param("namespace").unwrap_or(DEFAULT_NAMESPACE);
        check_namespace(ns)?;
        Ok(ns.to_string())
    }

    /// `scheme://[user@]host[:port][,host2…]path`, without the password or the query.
    pub fn redacted(&self) -> String {
        let user = self.user.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let hosts: Vec<String> = std::iter::once((self.host.clone(), self.port))
            .chain(self.more_hosts.iter().cloned())
            .map(|(h, p)| {
                let h = if h.contains(':') { format!("[{h}]") } else { h };
                format!("{h}{}", p.map(|p| format!(":{p}")).unwrap_or_default())
            })
            .collect();
        // A path can hold text that looks like `user:password@` too.
        format!(
            "{}://{user}{}{}",
            self.scheme,
            hosts.join(","),
            redact_passwords(&self.path)
        )
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

        let r = LeaseUrl::parse("redis://[::1]:6380/2").unwrap();
        assert_eq!((r.host.as_str(), r.port, r.path.as_str()), ("::1", Some(6380), "/2"));
        assert_eq!(r.redacted(), "redis://[::1]:6380/2");
    }

    #[test]
    fn rejects_bad_urls_without_leaking_passwords() {
        for bad_url in [
            "redis//x",
            "redis://h:99999",
            "redis://h:1/%ff",
            "redis://h:1/0#frag",
            "etcd://a:1,,b:2/",
        ] {
            let e = LeaseUrl::parse(bad_url).unwrap_err();
            assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
        }
        let e = LeaseUrl::parse("postgres://u:secret@h:70000/db")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret"), "{e}");
        // The query's secrets too (libpq's password and sslpassword), in errors and
        // in the form every later message shows.
        let e = LeaseUrl::parse("postgres://u:hunter31@h:70000/db?password=hunter32&sslpassword=hunter33")
            .unwrap_err()
            .to_string();
        let u = LeaseUrl::parse("postgres://u:hunter31@h/db?password=hunter32&sslpassword=hunter33").unwrap();
        for shown in [e, u.redacted(), format!("{u:?}")] {
            for pw in ["hunter31", "hunter32", "hunter33"] {
                assert!(!shown.contains(pw), "{shown}");
            }
        }
        // Found by the lease_url fuzz target: a repeated authority leaked its password,
        // and a cut-short message could leave a password with its '@' cut off.
        for leaky in [
            "postgres://u:hunter22@h://u:hunter22@h:5432er22@hlble=t",
            &format!("xoses://{}u:hunter20{}@h:99999", "\0".repeat(190), " ".repeat(30)),
            "redis://u:pa:ss99w0rd@h:99999/0",
        ] {
            // The url crate reads some of these as a path: then the redacted form
            // (used in every later message) must not show the password either.
            let e = match LeaseUrl::parse(leaky) {
                Err(e) => e.to_string(),
                Ok(u) => format!("{} {u:?}", u.redacted()),
            };
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
}
