//! `lease = "database"`: the lease URL of the app's own PostgreSQL, made from the
//! connection settings a framework adapter already holds, so that no URL or
//! credential is written twice. One conversion for every adapter (Django,
//! SQLAlchemy, Drizzle, Kysely, GORM, Spring Boot); each only collects its
//! framework's settings as (key, value) parts:
//!
//! - `url`: the app's connection string in any of its frameworks' forms:
//!   `postgres://`, `postgresql://`, `postgresql+driver://` (SQLAlchemy),
//!   `jdbc:postgresql://` (JDBC), or a libpq `key=value` DSN (pgx, GORM);
//! - `vendor`: the framework's name for the database's kind (Django's `vendor`,
//!   SQLAlchemy's dialect, GORM's dialector): only PostgreSQL is supported;
//! - libpq's keys, which win over the URL's: `host`, `port`, `user` (or
//!   `username`), `password`, `dbname` (or `database`), and the TLS settings the
//!   store applies (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`,
//!   `channel_binding`; node-postgres's and JDBC's `ssl=true` is `verify-full`).
//!
//! Other keys (a driver's timeouts, pool sizes, application name, …) do not change
//! which server and login the lease uses and are left out; `service`, `passfile`,
//! `hostaddr` and `sslpassword` do, and the store cannot follow them, so they are
//! refused. No message quotes a value that may hold a secret.

use crate::url::config;
use flakeid_core::lease::{DATABASE_LEASE, redact_error};
use flakeid_core::{Error, Result};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Escaped in every part of the URL: all but RFC 3986's unreserved characters.
const ESCAPED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The TLS settings the PostgreSQL store applies, passed through as they are.
const TLS_KEYS: [&str; 5] = ["sslmode", "sslrootcert", "sslcert", "sslkey", "channel_binding"];

/// Keys that change the server or the login in ways the store cannot follow.
const UNSUPPORTED: [&str; 4] = ["service", "passfile", "hostaddr", "sslpassword"];

fn refused(why: impl std::fmt::Display) -> Error {
    config(format!(
        "lease = \"{DATABASE_LEASE}\" (the app's own PostgreSQL): {why}"
    ))
}

fn not_postgres(vendor: &str) -> Error {
    refused(format_args!(
        "the app's database is {vendor:?}, and only PostgreSQL is supported; give a lease URL instead \
         (redis://, etcd://, k8s://, file://; docs/leases.md) or a node id per replica"
    ))
}

fn is_postgres(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let base = name.split('+').next().unwrap_or_default();
    matches!(base, "postgres" | "postgresql" | "pg" | "pgx")
}

/// One connection's settings, by libpq's key names.
#[derive(Default)]
struct Conn {
    keys: Vec<(String, String)>,
}

impl Conn {
    fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let key = match key {
            "username" => "user",
            "database" => "dbname",
            k => k,
        };
        if UNSUPPORTED.contains(&key) {
            return Err(refused(format_args!(
                "the connection's {key:?} is not supported here; give the host, port, user, password and \
                 database themselves"
            )));
        }
        if ["host", "port", "user", "password", "dbname", "ssl"].contains(&key) || TLS_KEYS.contains(&key) {
            self.keys.retain(|(k, _)| k != key);
            if !value.is_empty() {
                self.keys.push((key.to_string(), value.to_string()));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.keys.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Reads `url`: a URL in one of the frameworks' forms, or a `key=value` DSN.
    fn read_url(&mut self, url: &str) -> Result<()> {
        let text = url.trim();
        let text = text.strip_prefix("jdbc:").unwrap_or(text);
        let scheme = text
            .split_once(':')
            .map(|(s, _)| s)
            .filter(|s| !s.is_empty() && !s.contains(['=', ' ', '/']));
        let Some(scheme) = scheme else {
            return self.read_dsn(text);
        };
        if !is_postgres(scheme) {
            return Err(not_postgres(scheme));
        }
        if !text.contains("://") {
            return Err(refused(
                "the connection URL names no host (scheme://host/database): the lease connects over TCP",
            ));
        }
        // libpq's URL may leave the host out (`postgresql://u@/db?host=/socket`), which
        // the url crate refuses: a stand-in host is parsed, then dropped.
        let mut url = format!("postgres{}", &text[scheme.len()..]);
        let authority = "postgres://".len();
        let end = url[authority..]
            .find(['/', '?', '#'])
            .map_or(url.len(), |i| authority + i);
        let host_at = url[authority..end].rfind('@').map_or(authority, |i| authority + i + 1);
        let no_host = url[host_at..end].is_empty() || url[host_at..].starts_with(':');
        if no_host {
            url.insert_str(host_at, "no-host");
        }
        // The store's own parser (password redaction in its errors included).
        let u = crate::url::LeaseUrl::parse(&url)?;
        if !u.more_hosts.is_empty() || u.host.contains(',') {
            return Err(refused("the connection lists several hosts; the lease needs one"));
        }
        self.set("host", if no_host { "" } else { &u.host })?;
        if let Some(port) = u.port {
            self.set("port", &port.to_string())?;
        }
        self.set("user", u.user.as_deref().unwrap_or_default())?;
        self.set("password", u.password.as_deref().unwrap_or_default())?;
        self.set("dbname", u.path.trim_start_matches('/'))?;
        for (k, v) in &u.query {
            self.set(k, v)?;
        }
        Ok(())
    }

    /// libpq's `key=value` connection string: values bare or single-quoted, with
    /// `\'` and `\\` escapes in either.
    fn read_dsn(&mut self, text: &str) -> Result<()> {
        let mut chars = text.chars().peekable();
        loop {
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if chars.peek().is_none() {
                return Ok(());
            }
            let mut key = String::new();
            while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
                key.push(c);
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            if chars.next() != Some('=') {
                return Err(refused(
                    "the connection string is neither a URL (postgres://…) nor libpq's key=value form",
                ));
            }
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            let quoted = chars.next_if_eq(&'\'').is_some();
            let mut value = String::new();
            let mut closed = !quoted;
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '\'' if quoted => {
                        closed = true;
                        break;
                    }
                    c if c.is_whitespace() && !quoted => break,
                    c => value.push(c),
                }
            }
            if !closed {
                return Err(refused(format_args!(
                    "the connection string's {key:?} opens a quote it does not close"
                )));
            }
            self.set(&key, &value)?;
        }
    }

    fn url(&self) -> Result<String> {
        let host = self.get("host").unwrap_or_default();
        if host.is_empty() || host.starts_with('/') || host.starts_with('@') {
            return Err(refused(
                "the app's database connection names no TCP host (a Unix socket, or none); the lease connects \
                 over TCP: set the database's host",
            ));
        }
        if host.contains(',') {
            return Err(refused("the connection lists several hosts; the lease needs one"));
        }
        let enc = |s: &str| utf8_percent_encode(s, ESCAPED).to_string();
        let mut url = String::from("postgres://");
        if let Some(user) = self.get("user") {
            url += &enc(user);
            if let Some(pw) = self.get("password") {
                url += ":";
                url += &enc(pw);
            }
            url += "@";
        } else if self.get("password").is_some() {
            return Err(refused("the connection gives a password but no user"));
        }
        if host.contains(':') {
            url += &format!("[{host}]");
        } else {
            url += host;
        }
        if let Some(port) = self.get("port") {
            let port: u16 = port
                .parse()
                .map_err(|_| refused(format_args!("the connection's port {port:?} is not a port number")))?;
            url += &format!(":{port}");
        }
        url += "/";
        url += &enc(self.get("dbname").unwrap_or_default());
        // node-postgres's and JDBC's `ssl=true`: TLS, verified (as their default
        // `rejectUnauthorized` / `sslmode=verify-full`), unless `sslmode` says otherwise.
        let ssl = match self.get("ssl") {
            None => None,
            Some("true" | "1") => Some("verify-full"),
            Some("false" | "0") => Some("disable"),
            Some(other) => {
                return Err(refused(format_args!(
                    "the connection's ssl={other:?} is not true or false"
                )));
            }
        };
        let sslmode = self.get("sslmode").or(ssl);
        let query: Vec<String> = TLS_KEYS
            .iter()
            .filter_map(|k| {
                match *k {
                    "sslmode" => sslmode,
                    k => self.get(k),
                }
                .map(|v| format!("{k}={}", enc(v)))
            })
            .collect();
        if !query.is_empty() {
            url += "?";
            url += &query.join("&");
        }
        Ok(url)
    }
}

/// The lease URL a generator takes for the `lease` setting `lease`: `lease` itself,
/// unless it is `"database"` (the core's `DATABASE_LEASE`); then the `postgres://`
/// URL of the app's own database, from the connection settings the framework holds
/// (`parts`; the module's documentation lists the keys). That URL is checked as any
/// lease URL is, without connecting. A database other than PostgreSQL, or a
/// connection the store cannot follow, is a `Config` error on `lease` that names what
/// was found and what is supported, never a secret.
///
/// ```
/// let url = flakeid_lease_net::database_lease("database", &[
///     ("vendor", "postgresql"),
///     ("url", "jdbc:postgresql://db.internal:5432/shop?sslmode=require"),
///     ("user", "app"),
///     ("password", "p@ss word"),
/// ])?;
/// assert_eq!(url, "postgres://app:p%40ss%20word@db.internal:5432/shop?sslmode=require");
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub fn database_lease<K: AsRef<str>, V: AsRef<str>>(lease: &str, parts: &[(K, V)]) -> Result<String> {
    if lease.trim() != DATABASE_LEASE {
        return Ok(lease.to_string());
    }
    if parts.is_empty() {
        return Err(refused(
            "the framework adapter was given no database connection (docs/frameworks.md says where each \
             adapter reads it)",
        ));
    }
    let mut conn = Conn::default();
    for (k, v) in parts {
        if k.as_ref() == "vendor" && !is_postgres(v.as_ref()) {
            return Err(not_postgres(v.as_ref()));
        }
    }
    // The URL first: the other parts win over it.
    for (k, v) in parts {
        if k.as_ref() == "url" && !v.as_ref().trim().is_empty() {
            conn.read_url(v.as_ref()).map_err(redact_error)?;
        }
    }
    for (k, v) in parts {
        match k.as_ref() {
            "url" | "vendor" => {}
            k => conn.set(k, v.as_ref())?,
        }
    }
    let url = conn.url()?;
    crate::lease_spec(&url)?;
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(parts: &[(&str, &str)]) -> Result<String> {
        database_lease(DATABASE_LEASE, parts)
    }

    #[test]
    fn every_frameworks_form() {
        // Any other lease is kept as it is.
        assert_eq!(
            database_lease("file:///x", &[("url", "sqlite://")]).unwrap(),
            "file:///x"
        );
        // Django's DATABASES (libpq's names), with OPTIONS the lease has no use for.
        let django = lease(&[
            ("vendor", "postgresql"),
            ("host", "db"),
            ("port", "5433"),
            ("user", "app"),
            ("password", "s3:cr/et@"),
            ("dbname", "shop"),
            ("sslmode", "verify-full"),
            ("connect_timeout", "10"),
            ("isolation_level", "IsolationLevel.SERIALIZABLE"),
        ])
        .unwrap();
        assert_eq!(
            django,
            "postgres://app:s3%3Acr%2Fet%40@db:5433/shop?sslmode=verify-full"
        );
        // SQLAlchemy's URL, its driver in the scheme.
        assert_eq!(
            lease(&[
                ("vendor", "postgresql"),
                ("url", "postgresql+psycopg://app:pw@127.0.0.1/shop?application_name=x")
            ])
            .unwrap(),
            "postgres://app:pw@127.0.0.1/shop"
        );
        // JDBC: the login beside the URL, which it wins over.
        assert_eq!(
            lease(&[
                ("url", "jdbc:postgresql://[::1]:5432/shop?user=old&currentSchema=s"),
                ("user", "app"),
                ("password", "pw")
            ])
            .unwrap(),
            "postgres://app:pw@[::1]:5432/shop"
        );
        // pgx / GORM's DSN, quoted values and a key the lease ignores.
        assert_eq!(
            lease(&[(
                "url",
                "host=db user=app password='a \\'b\\' c' dbname = shop port=5432 sslmode=disable TimeZone=UTC"
            )])
            .unwrap(),
            "postgres://app:a%20%27b%27%20c@db:5432/shop?sslmode=disable"
        );
        // libpq's URL without a host, given in the query.
        assert_eq!(
            lease(&[("url", "postgresql://app@/shop?host=db&port=5433")]).unwrap(),
            "postgres://app@db:5433/shop"
        );
        // node-postgres's and JDBC's ssl flag; sslmode wins over it.
        assert_eq!(
            lease(&[("url", "jdbc:postgresql://h/d?ssl=true")]).unwrap(),
            "postgres://h/d?sslmode=verify-full"
        );
        assert_eq!(
            lease(&[("sslmode", "require"), ("host", "h"), ("ssl", "true")]).unwrap(),
            "postgres://h/?sslmode=require"
        );
        // node-postgres: a connection string and the Pool's own fields.
        assert_eq!(
            lease(&[("url", "postgres://u:p@h/d"), ("database", "other"), ("port", "")]).unwrap(),
            "postgres://u:p@h/other"
        );
    }

    #[test]
    fn other_databases_and_connections_the_store_cannot_follow() {
        for parts in [
            &[("vendor", "sqlite"), ("dbname", ":memory:")][..],
            &[("url", "sqlite:///tmp/x.db")],
            &[("url", "mysql+pymysql://u:hunter2@h/db")],
            &[("url", "jdbc:mysql://h:3306/db?password=hunter2")],
            &[("vendor", "mysql"), ("url", "u:hunter2@tcp(127.0.0.1:3306)/db")],
        ] {
            let e = lease(parts).unwrap_err();
            let shown = e.to_string();
            assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
            assert!(shown.contains("only PostgreSQL is supported"), "{shown}");
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        for (parts, why) in [
            (
                &[("vendor", "postgresql"), ("host", ""), ("dbname", "d")][..],
                "TCP host",
            ),
            (&[("host", "/var/run/postgresql")], "TCP host"),
            (&[("url", "postgresql:///shop")], "TCP host"),
            (
                &[("url", "postgresql+psycopg://app:hunter2@/shop?host=/run/postgresql")],
                "TCP host",
            ),
            (&[("url", "postgresql://app:hunter2@:5433/shop")], "TCP host"),
            (&[("url", "host=db service=main")], "\"service\""),
            (&[("host", "a,b")], "several hosts"),
            (&[("host", "h"), ("port", "99999")], "port"),
            (&[("url", "host=h password='hunter2")], "quote"),
            (&[("url", "postgres://u:hunter2@h/d?sslmode=maybe")], "sslmode"),
            (&[], "no database connection"),
        ] {
            let e = lease(parts).unwrap_err();
            let shown = e.to_string();
            assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
            assert!(shown.contains(why) && !shown.contains("hunter2"), "{shown}");
        }
    }
}
