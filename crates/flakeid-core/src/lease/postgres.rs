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
//! Why not the `postgres` crate: it brings tokio and ~50 crates to run four
//! statements; the wire protocol subset needed is in `pgwire.rs` (~300 lines,
//! SCRAM checked against RFC vectors and a real server).

use super::pgwire::{PgConn, PgParams};
use super::{Acquired, LeaseStore, LeaseUrl, lease_error, namespace_of};
use crate::error::{Error, Result};
use std::time::Instant;

/// Table used when the URL names none.
pub const DEFAULT_TABLE: &str = "flakeid_worker_node";

/// PostgreSQL-backed leases.
#[derive(Debug)]
pub struct PostgresStore {
    url: LeaseUrl,
    params: PgParams,
    namespace: String,
    table: String,
    conn: Option<PgConn>,
    table_ready: bool,
    holder_info: String,
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
        Err(Error::config(
            "lease",
            format!("postgres lease table must be a lower-case identifier (a-z 0-9 _), got {name:?}"),
        ))
    }
}

impl PostgresStore {
    pub(crate) fn check_url(u: &LeaseUrl) -> Result<()> {
        u.check_params(&["namespace", "table", "sslmode", "user", "password"])?;
        namespace_of(u)?;
        check_table(u.param("table").unwrap_or(DEFAULT_TABLE))?;
        match u.param("sslmode") {
            None | Some("disable") | Some("allow") | Some("prefer") => {}
            Some(other) => {
                return Err(Error::config(
                    "lease",
                    format!("postgres lease URLs support no TLS (sslmode={other}): use sslmode=disable"),
                ));
            }
        }
        if u.host.is_empty() {
            return Err(Error::config(
                "lease",
                format!("postgres lease URL {} needs a host (TCP only)", u.redacted()),
            ));
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
        let host = if u.host.contains(':') {
            format!("[{}]", u.host)
        } else {
            u.host.clone()
        };
        Ok(PostgresStore {
            url: u.clone(),
            params: PgParams {
                addr: format!("{host}:{}", u.port.unwrap_or(5432)),
                user,
                password: u.param("password").map(str::to_string).or_else(|| u.password.clone()),
                database,
            },
            namespace: namespace_of(u)?,
            table: u.param("table").unwrap_or(DEFAULT_TABLE).to_string(),
            conn: None,
            table_ready: false,
            holder_info: format!(
                "{} pid {}",
                crate::node_id::hostname().unwrap_or_default(),
                std::process::id()
            ),
        })
    }

    /// A store for `url`.
    pub fn connect_url(url: &str) -> Result<PostgresStore> {
        Self::from_url(&LeaseUrl::parse(url)?)
    }

    fn with_conn<T>(&mut self, until: Instant, f: impl FnOnce(&mut PgConn, &str) -> Result<T>) -> Result<T> {
        if self.conn.is_none() {
            let conn = PgConn::connect(&self.params, until).map_err(|e| self.context(e))?;
            self.conn = Some(conn);
        }
        let table = self.table.clone();
        let result = match self.conn.as_mut() {
            Some(c) => f(c, &table),
            None => Err(lease_error("postgres: no connection")),
        };
        if let Err(e) = &result {
            // A timeout or I/O error leaves the connection mid-reply: start afresh.
            if !e.to_string().contains("postgres error") {
                self.conn = None;
            }
        }
        result.map_err(|e| self.context(e))
    }

    fn context(&self, e: Error) -> Error {
        match e {
            Error::Lease { message } => lease_error(format!("{} ({})", message, self.url.redacted())),
            other => other,
        }
    }

    fn ensure_table(&mut self, until: Instant) -> Result<()> {
        if self.table_ready {
            return Ok(());
        }
        // The advisory lock serialises concurrent first-time creators (CREATE TABLE
        // IF NOT EXISTS alone can still fail on the catalog's unique index).
        self.with_conn(until, |c, t| {
            c.simple(
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
                until,
            )
        })?;
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
        let (ns, max, ttl, info) = (
            self.namespace.clone(),
            max_node.to_string(),
            ttl_ms.to_string(),
            self.holder_info.clone(),
        );
        loop {
            let rows = self.with_conn(until, |c, t| {
                c.query(
                    &format!(
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
                                 FROM marker)
                         FROM (SELECT 1) AS one LEFT JOIN ins ON true"
                    ),
                    &[&ns, &max, holder, &ttl, &info],
                    until,
                )
            })?;
            let row = rows
                .first()
                .ok_or_else(|| lease_error("postgres: acquire returned no row"))?;
            let num = |i: usize| row.get(i).cloned().flatten().and_then(|v| v.parse::<u64>().ok());
            if num(0) == Some(0) {
                return Ok(None);
            }
            if let (Some(node), Some(last_ms)) = (num(1), num(2)) {
                // No marker age (a concurrent first creator's row is not yet
                // visible to this statement): count it as brand new.
                let incarnation_age_ms = num(3).unwrap_or(0);
                return Ok(Some(Acquired {
                    node,
                    last_ms,
                    incarnation_age_ms,
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
        let (ns, node_s, ttl, fence) = (
            self.namespace.clone(),
            node.to_string(),
            ttl_ms.to_string(),
            fence_ms.to_string(),
        );
        let rows = self.with_conn(until, |c, t| {
            c.query(
                &format!(
                    "UPDATE {t} SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond',
                       last_timestamp_ms = GREATEST(last_timestamp_ms, $5::bigint)
                     WHERE namespace = $1 AND node_id = $2::bigint AND holder = $3
                     RETURNING node_id"
                ),
                &[&ns, &node_s, holder, &ttl, &fence],
                until,
            )
        });
        match rows {
            Ok(rows) => Ok(!rows.is_empty()),
            // The table was dropped (SQLSTATE 42P01, undefined_table): the store
            // forgot every lease, ours included. Stop now, as for a lost lease.
            Err(e) if e.to_string().contains("postgres error 42P01") => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn release(&mut self, node: u64, holder: &str, last_ms: u64, until: Instant) -> Result<()> {
        let (ns, node_s, last) = (self.namespace.clone(), node.to_string(), last_ms.to_string());
        self.with_conn(until, |c, t| {
            c.query(
                &format!(
                    "UPDATE {t} SET holder = NULL, expires_at = NULL, last_timestamp_ms = $4::bigint
                     WHERE namespace = $1 AND node_id = $2::bigint AND holder = $3"
                ),
                &[&ns, &node_s, holder, &last],
                until,
            )
        })?;
        Ok(())
    }
}
