//! `postgres://user[:password]@host[:port]/dbname[?namespace=NAME&table=NAME]` —
//! leases as rows of a table the library creates if missing (Baidu's WORKER_NODE,
//! made reusable):
//!
//! ```sql
//! CREATE TABLE flakeid_worker_node (
//!   namespace text, node_id bigint, holder text, holder_info text,
//!   expires_at timestamptz, last_timestamp_ms bigint, acquired_at timestamptz,
//!   PRIMARY KEY (namespace, node_id));
//! ```
//!
//! Acquiring is one statement: pick the lowest id with no live holder and
//! `INSERT … ON CONFLICT DO UPDATE … WHERE the row is free or expired`. Two
//! acquirers racing for one id serialise on the row; the loser's statement
//! returns no row and it tries again. Expiry is judged by the server's clock.
//!
//! The namespace's incarnation marker is the row `node_id = -1` (its
//! `acquired_at` is when the namespace was first used, or first used after the
//! table was truncated or dropped), upserted and read by the same statement: a
//! `TRUNCATE` or `DROP` takes an exclusive lock, so it falls wholly before or
//! after. PostgreSQL is durable, so the lock delay is paid only on first use —
//! unless someone empties the table, which it then survives safely.
//!
//! The client is tokio-postgres (every login it supports: trust, password, md5,
//! SCRAM-SHA-256, SCRAM-SHA-256-PLUS channel binding over TLS) with rustls, driven
//! by a runtime of the store's own. TLS follows libpq's `sslmode`:
//! `disable`, `prefer` (the default: TLS if the server offers it, unverified, as
//! libpq), `require` (TLS, unverified unless `sslrootcert` is given, then as
//! `verify-ca`), `verify-ca` (the chain), `verify-full` (the chain and the host
//! name). `sslrootcert` (default: the system's roots), `sslcert` + `sslkey` (a
//! client certificate).

use crate::block::Blocking;
use crate::tls::{self, TlsFiles, Verify};
use crate::url::{LeaseUrl, config};
use crate::{lease_error, pause_before_retry};
use flakeid_core::lease::{Acquired, LeaseStore};
use flakeid_core::{Error, Result};
use std::time::{Duration, Instant};
use tokio_postgres::config::SslMode;

/// Table used when the URL names none.
pub const DEFAULT_TABLE: &str = "flakeid_worker_node";

/// PostgreSQL-backed leases.
pub struct PostgresStore {
    url: LeaseUrl,
    config: tokio_postgres::Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
    namespace: String,
    table: String,
    rt: Blocking,
    conn: Option<(tokio_postgres::Client, tokio::task::JoinHandle<()>)>,
    table_ready: bool,
    holder_info: String,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PostgresStore({})", self.describe())
    }
}

const TLS_PARAMS: [&str; 3] = ["sslrootcert", "sslcert", "sslkey"];
const SSLMODES: &str = "disable, prefer, require, verify-ca, verify-full";

/// libpq's `sslmode`, as this store applies it.
fn sslmode(u: &LeaseUrl) -> Result<(SslMode, Option<Verify>)> {
    let files = TlsFiles::from_url(u, TLS_PARAMS)?;
    Ok(match u.param("sslmode").unwrap_or("prefer") {
        "disable" => (SslMode::Disable, None),
        "prefer" => (SslMode::Prefer, Some(Verify::None)),
        "require" if files.ca.is_some() => (SslMode::Require, Some(Verify::ChainOnly)),
        "require" => (SslMode::Require, Some(Verify::None)),
        "verify-ca" => (SslMode::Require, Some(Verify::ChainOnly)),
        "verify-full" => (SslMode::Require, Some(Verify::Full)),
        other => {
            return Err(config(format!(
                "postgres lease URL {}: sslmode={other:?} is not one of {SSLMODES}",
                u.redacted()
            )));
        }
    })
}

fn check_table(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    if ok {
        Ok(())
    } else {
        Err(config(format!(
            "postgres lease table must be a lower-case identifier (a-z 0-9 _), got {name:?}"
        )))
    }
}

/// libpq's `channel_binding`: SCRAM-SHA-256-PLUS over TLS (`prefer`, the default,
/// uses it when the server offers it; `require` refuses a login without it).
fn channel_binding(u: &LeaseUrl) -> Result<tokio_postgres::config::ChannelBinding> {
    use tokio_postgres::config::ChannelBinding;
    match u.param("channel_binding").unwrap_or("prefer") {
        "disable" => Ok(ChannelBinding::Disable),
        "prefer" => Ok(ChannelBinding::Prefer),
        "require" => Ok(ChannelBinding::Require),
        other => Err(config(format!(
            "postgres lease URL {}: channel_binding={other:?} is not one of disable, prefer, require",
            u.redacted()
        ))),
    }
}

impl PostgresStore {
    pub(crate) fn check_url(u: &LeaseUrl) -> Result<()> {
        u.check_params(&[
            "namespace",
            "table",
            "sslmode",
            "sslrootcert",
            "sslcert",
            "sslkey",
            "channel_binding",
            "user",
            "password",
        ])?;
        u.namespace()?;
        check_table(u.param("table").unwrap_or(DEFAULT_TABLE))?;
        sslmode(u)?;
        channel_binding(u)?;
        if u.host.is_empty() {
            return Err(config(format!(
                "postgres lease URL {} needs a host (TCP only)",
                u.redacted()
            )));
        }
        Ok(())
    }

    pub(crate) fn from_url(u: &LeaseUrl) -> Result<PostgresStore> {
        Self::check_url(u)?;
        let user = u
            .param("user")
            .map(str::to_string)
            .or_else(|| u.user.clone())
            .unwrap_or_else(|| "postgres".into());
        let database = match u.path.trim_start_matches('/') {
            "" => user.clone(),
            db => db.to_string(),
        };
        let mut config = tokio_postgres::Config::new();
        config
            .host(&u.host)
            .port(u.port.unwrap_or(5432))
            .user(&user)
            .dbname(&database)
            .application_name("flakeid-lease")
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(30));
        if let Some(pw) = u.param("password").map(str::to_string).or_else(|| u.password.clone()) {
            config.password(pw);
        }
        let (mode, verify) = sslmode(u)?;
        config.ssl_mode(mode).channel_binding(channel_binding(u)?);
        let tls = match verify {
            Some(v) => {
                let files = TlsFiles::from_url(u, TLS_PARAMS)?;
                let cfg = tls::client_config(&files, v, TLS_PARAMS)?;
                Some(tokio_postgres_rustls::MakeRustlsConnect::new(cfg))
            }
            None => None,
        };
        Ok(PostgresStore {
            url: u.clone(),
            config,
            tls,
            namespace: u.namespace()?,
            table: u.param("table").unwrap_or(DEFAULT_TABLE).to_string(),
            rt: Blocking::new()?,
            conn: None,
            table_ready: false,
            holder_info: format!(
                "{} pid {}",
                flakeid_core::hostname().unwrap_or_default(),
                std::process::id()
            ),
        })
    }

    /// A store for `url`.
    pub fn connect_url(url: &str) -> Result<PostgresStore> {
        Self::from_url(&LeaseUrl::parse(url)?)
    }

    fn drop_conn(&mut self) {
        if let Some((_, task)) = self.conn.take() {
            task.abort();
        }
    }

    /// Connects within `until`. A server that is starting up, shutting down or
    /// recovering (SQLSTATE 57P03, `cannot_connect_now`: the seconds after a
    /// restart) is asked again every [`super::STARTING_RETRY`] until `until`.
    fn connect(&mut self, until: Instant) -> Result<()> {
        loop {
            match self.connect_once(until) {
                Err(Some(e))
                    if e.as_db_error().is_some_and(|db| db.code().code() == "57P03") && pause_before_retry(until) => {}
                Err(Some(e)) => return Err(self.fail("connect", &e)),
                Err(None) => return Err(self.timed_out("connect")),
                Ok(()) => return Ok(()),
            }
        }
    }

    /// One try of [`connect`](Self::connect); `Err(None)`: timed out.
    fn connect_once(&mut self, until: Instant) -> std::result::Result<(), Option<tokio_postgres::Error>> {
        if self.conn.is_some() {
            return Ok(());
        }
        let mut config = self.config.clone();
        config.connect_timeout(
            until
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1)),
        );
        let connected = match self.tls.clone() {
            Some(tls) => self.rt.within(until, async move {
                config.connect(tls).await.map(|(client, conn)| {
                    let conn: std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>> = Box::pin(conn);
                    (client, conn)
                })
            }),
            None => self.rt.within(until, async move {
                config.connect(tokio_postgres::NoTls).await.map(|(client, conn)| {
                    let conn: std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>> = Box::pin(conn);
                    (client, conn)
                })
            }),
        };
        match connected {
            None => Err(None),
            Some(Err(e)) => Err(Some(e)),
            Some(Ok((client, conn))) => {
                let task = self.rt.spawn(async move {
                    let _ = conn.await;
                });
                self.conn = Some((client, task));
                Ok(())
            }
        }
    }

    /// Runs one statement (simple protocol when `params` is empty) within `until`.
    fn query(
        &mut self,
        what: &str,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
        until: Instant,
    ) -> Result<Vec<tokio_postgres::Row>> {
        self.connect(until)?;
        let Some((client, _)) = self.conn.as_ref() else {
            return Err(lease_error("postgres: no connection"));
        };
        let out = if params.is_empty() {
            self.rt
                .within(until, async { client.batch_execute(sql).await.map(|()| Vec::new()) })
        } else {
            self.rt.within(until, client.query(sql, params))
        };
        match out {
            Some(Ok(rows)) => Ok(rows),
            Some(Err(e)) => {
                // An SQL error leaves the connection usable; anything else does not.
                if e.as_db_error().is_none() {
                    self.drop_conn();
                }
                Err(self.fail(what, &e))
            }
            None => {
                self.drop_conn();
                Err(self.timed_out(what))
            }
        }
    }

    fn timed_out(&self, what: &str) -> Error {
        lease_error(format!("postgres {} ({what}): timed out", self.url.redacted()))
    }

    fn fail(&self, what: &str, e: &tokio_postgres::Error) -> Error {
        let why = if let Some(db) = e.as_db_error() {
            let code = db.code().code();
            match code {
                "28P01" | "28000" => format!(
                    "authentication failed: wrong user or password (SQLSTATE {code}: {})",
                    db.message()
                ),
                _ => format!("postgres error {code}: {}", db.message()),
            }
        } else if let Some(cause) = tls::tls_cause(e) {
            cause
        } else {
            let mut text = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                text.push_str(": ");
                text.push_str(&s.to_string());
                src = s.source();
            }
            text
        };
        lease_error(format!("postgres {} ({what}): {why}", self.url.redacted()))
    }

    fn ensure_table(&mut self, until: Instant) -> Result<()> {
        if self.table_ready {
            return Ok(());
        }
        // The advisory lock serialises concurrent first-time creators (CREATE TABLE
        // IF NOT EXISTS alone can still fail on the catalog's unique index); the
        // simple protocol runs both statements in one implicit transaction.
        let t = self.table.clone();
        self.query(
            "create table",
            &format!(
                "SELECT pg_advisory_xact_lock(7036823469151);
                 CREATE TABLE IF NOT EXISTS {t} (
                   namespace text NOT NULL,
                   node_id bigint NOT NULL,
                   holder text,
                   holder_info text,
                   expires_at timestamptz,
                   last_timestamp_ms bigint NOT NULL DEFAULT 0,
                   acquired_at timestamptz,
                   PRIMARY KEY (namespace, node_id))"
            ),
            &[],
            until,
        )?;
        self.table_ready = true;
        Ok(())
    }
}

impl LeaseStore for PostgresStore {
    fn describe(&self) -> String {
        format!(
            "{} table {} namespace {:?}",
            self.url.redacted(),
            self.table,
            self.namespace
        )
    }

    fn namespace(&self) -> &str {
        &self.namespace
    }

    fn acquire(&mut self, max_node: u64, holder: &str, ttl_ms: u64, until: Instant) -> Result<Option<Acquired>> {
        self.ensure_table(until)?;
        let t = self.table.clone();
        let (ns, info) = (self.namespace.clone(), self.holder_info.clone());
        let (max, ttl) = (
            i64::try_from(max_node).unwrap_or(i64::MAX),
            i64::try_from(ttl_ms).unwrap_or(i64::MAX),
        );
        let sql = format!(
            "WITH mk AS (
               INSERT INTO {t} (namespace, node_id, acquired_at, last_timestamp_ms)
               VALUES ($1, -1, clock_timestamp(), 0)
               ON CONFLICT (namespace, node_id) DO NOTHING
               RETURNING acquired_at),
             marker AS (
               SELECT coalesce((SELECT acquired_at FROM mk),
                               (SELECT acquired_at FROM {t} WHERE namespace = $1 AND node_id = -1)) AS at),
             cand AS (
               SELECT g.n FROM generate_series(0::bigint, $2::bigint) AS g(n)
               WHERE NOT EXISTS (SELECT 1 FROM {t} x WHERE x.namespace = $1 AND x.node_id = g.n
                                 AND x.holder IS NOT NULL AND x.expires_at > clock_timestamp())
               LIMIT 1),
             ins AS (
               INSERT INTO {t} AS w (namespace, node_id, holder, holder_info, expires_at,
                                     last_timestamp_ms, acquired_at)
               SELECT $1, cand.n, $3, $5, clock_timestamp() + $4::bigint * interval '1 millisecond',
                      0, clock_timestamp() FROM cand
               ON CONFLICT (namespace, node_id) DO UPDATE
                 SET holder = EXCLUDED.holder, holder_info = EXCLUDED.holder_info,
                     expires_at = EXCLUDED.expires_at, acquired_at = EXCLUDED.acquired_at
                 WHERE w.holder IS NULL OR w.expires_at IS NULL OR w.expires_at <= clock_timestamp()
               RETURNING w.node_id, w.last_timestamp_ms)
             SELECT (SELECT count(*) FROM cand), ins.node_id, ins.last_timestamp_ms,
                    (SELECT coalesce(greatest(0, floor(extract(epoch FROM clock_timestamp() - at) * 1000)), 0)::bigint
                     FROM marker),
                    floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
             FROM (SELECT 1) AS one LEFT JOIN ins ON true"
        );
        loop {
            let rows = self.query("acquire", &sql, &[&ns, &max, &holder, &ttl, &info], until)?;
            let row = rows
                .first()
                .ok_or_else(|| lease_error("postgres: acquire returned no row"))?;
            let num = |i: usize| -> Option<u64> {
                row.try_get::<_, Option<i64>>(i)
                    .ok()
                    .flatten()
                    .and_then(|v| u64::try_from(v).ok())
            };
            if num(0) == Some(0) {
                return Ok(None);
            }
            if let (Some(node), Some(last_ms)) = (num(1), num(2)) {
                // No marker age (a concurrent first creator's row is not yet
                // visible to this statement): count it as brand new.
                let incarnation_age_ms = num(3).unwrap_or(0);
                let got = Acquired::new(node, last_ms, incarnation_age_ms);
                // The server's clock, read after it took the id: checked against ours.
                return Ok(Some(match num(4) {
                    Some(now) => got.with_store_now_ms(now),
                    None => got,
                }));
            }
            // Lost a race for the candidate id: look again.
            if Instant::now() >= until {
                return Err(lease_error(format!(
                    "timed out acquiring a node id at {}",
                    self.describe()
                )));
            }
        }
    }

    fn renew(&mut self, node: u64, holder: &str, ttl_ms: u64, fence_ms: u64, until: Instant) -> Result<bool> {
        let t = self.table.clone();
        let ns = self.namespace.clone();
        let (node, ttl, fence) = (node as i64, ttl_ms as i64, i64::try_from(fence_ms).unwrap_or(i64::MAX));
        let rows = self.query(
            "renew",
            &format!(
                "UPDATE {t} SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond',
                   last_timestamp_ms = GREATEST(last_timestamp_ms, $5::bigint)
                 WHERE namespace = $1 AND node_id = $2::bigint AND holder = $3
                 RETURNING node_id"
            ),
            &[&ns, &node, &holder, &ttl, &fence],
            until,
        );
        match rows {
            Ok(rows) => Ok(!rows.is_empty()),
            // The table was dropped (SQLSTATE 42P01, undefined_table): the store
            // forgot every lease, ours included. Stop now, as for a lost lease.
            Err(e) if e.to_string().contains("postgres error 42P01") => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn release(&mut self, node: u64, holder: &str, last_ms: u64, until: Instant) -> Result<()> {
        let t = self.table.clone();
        let ns = self.namespace.clone();
        let (node, last) = (node as i64, i64::try_from(last_ms).unwrap_or(i64::MAX));
        self.query(
            "release",
            &format!(
                "UPDATE {t} SET holder = NULL, expires_at = NULL, last_timestamp_ms = $4::bigint
                 WHERE namespace = $1 AND node_id = $2::bigint AND holder = $3"
            ),
            &[&ns, &node, &holder, &last],
            until,
        )?;
        Ok(())
    }
}

impl Drop for PostgresStore {
    fn drop(&mut self) {
        self.drop_conn();
    }
}
