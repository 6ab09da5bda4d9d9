//! `redis://[[user]:password@]host[:port][/db][?namespace=NAME]` — leases as Redis keys.
//!
//! * `flakeid:{NS}:node:{ID}` holds the holder's token, with a `PX` expiry: acquiring
//!   is `SET key token NX PX ttl` (inside a Lua script that walks the id range, so
//!   the scan is one atomic step per batch).
//! * `flakeid:{NS}:meta` is one hash per namespace that never expires: `created`
//!   (the incarnation marker: the server's `TIME`, in ms, when the namespace was
//!   first used or first used again after the data was lost), and per id
//!   `holder:{ID}` (the last acquirer's token) and `last:{ID}` (the fence / last
//!   timestamp issued). One key, so eviction or loss takes all of it or none: the
//!   fences can never be gone while the marker says the store remembers.
//!
//! Renewal is a compare-and-renew script: it extends the key only if it still holds
//! our token — or if it expired and nobody acquired it since (`holder:{ID}` is
//! still ours), which lets a holder resume after the store was unreachable. A store
//! that lost its data has neither, so the holder's next renewal stops it.
//!
//! Redis keeps data in memory and replicates asynchronously: a restart without
//! persistence, a failover to a replica that missed writes, `FLUSHALL` or eviction
//! can all lose leases. That is safe only because of the lock delay (see
//! `lease/mod.rs`): Redis is a best-effort store made safe by waiting.
//!
//! The client is redis-rs (sync, rustls). `rediss://` is TLS: `?ca=PATH` (default:
//! the system's roots), `&cert=PATH&key=PATH` for a client certificate; the
//! certificate and the host name are always checked. ACL users log in with
//! `user:password@`.

use crate::tls::{self, TlsFiles};
use crate::url::{LeaseUrl, config};
use crate::{lease_error, pause_before_retry};
use flakeid_core::lease::{Acquired, LeaseStore};
use flakeid_core::{Error, Result};
use std::time::{Duration, Instant};

/// Ids tried per acquire script call (keeps each call short on big ranges).
const BATCH: u64 = 512;

// Returns {id, last, marker age ms, TIME in ms}; {-1, '0', age, now} when every id
// is taken. The marker is read (or written) in the same atomic step as the id is
// taken; the server's TIME is returned so that the acquirer checks its clock
// against it (docs/leases.md, point 6).
const ACQUIRE: &str = r"
local prefix, token, ttl = ARGV[1], ARGV[2], ARGV[3]
local meta = prefix .. 'meta'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local created = tonumber(redis.call('HGET', meta, 'created') or '-1')
if created < 0 then
  redis.call('HSET', meta, 'created', string.format('%d', now))
  created = now
end
local age = string.format('%d', math.max(now - created, 0))
local nows = string.format('%d', now)
for i = tonumber(ARGV[4]), tonumber(ARGV[5]) do
  if redis.call('SET', prefix .. 'node:' .. i, token, 'NX', 'PX', ttl) then
    local last = redis.call('HGET', meta, 'last:' .. i) or '0'
    redis.call('HSET', meta, 'holder:' .. i, token)
    return {i, last, age, nows}
  end
end
return {-1, '0', age, nows}
";

// KEYS: node key, meta hash. ARGV: token, ttl, fence, id.
const RENEW: &str = r"
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] or ((not cur) and redis.call('HGET', KEYS[2], 'holder:' .. ARGV[4]) == ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  local last = tonumber(redis.call('HGET', KEYS[2], 'last:' .. ARGV[4]) or '0')
  if tonumber(ARGV[3]) > last then redis.call('HSET', KEYS[2], 'last:' .. ARGV[4], ARGV[3]) end
  return 1
end
return 0
";

// KEYS: node key, meta hash. ARGV: token, last, id.
const RELEASE: &str = r"
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] or ((not cur) and redis.call('HGET', KEYS[2], 'holder:' .. ARGV[3]) == ARGV[1]) then
  redis.call('HSET', KEYS[2], 'last:' .. ARGV[3], ARGV[2])
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
";

/// Redis-backed leases.
pub struct RedisStore {
    url: LeaseUrl,
    client: redis::Client,
    namespace: String,
    conn: Option<redis::Connection>,
    acquire: redis::Script,
    renew: redis::Script,
    release: redis::Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisStore({})", self.describe())
    }
}

const TLS_PARAMS: [&str; 3] = ["ca", "cert", "key"];

impl RedisStore {
    pub(crate) fn check_url(u: &LeaseUrl) -> Result<()> {
        u.check_params(&["namespace", "ca", "cert", "key"])?;
        u.namespace()?;
        if u.host.is_empty() {
            return Err(config(format!("redis lease URL {} needs a host", u.redacted())));
        }
        let files = TlsFiles::from_url(u, TLS_PARAMS)?;
        if u.scheme == "redis" && files.any() {
            return Err(config(format!(
                "lease URL {}: ca=, cert= and key= are TLS settings: use rediss://",
                u.redacted()
            )));
        }
        parse_db(u)?;
        Ok(())
    }

    pub(crate) fn from_url(u: &LeaseUrl) -> Result<RedisStore> {
        Self::check_url(u)?;
        let tls = u.scheme == "rediss";
        // redis-rs reads its own URL: rebuild one with only what it understands.
        let mut target = ::url::Url::parse(&format!("{}://localhost/{}", u.scheme, parse_db(u)?))
            .map_err(|e| lease_error(format!("redis URL: {e}")))?;
        let host = if u.host.contains(':') {
            format!("[{}]", u.host)
        } else {
            u.host.clone()
        };
        let bad = |what: &str| lease_error(format!("redis lease URL {}: invalid {what}", u.redacted()));
        target.set_host(Some(&host)).map_err(|_| bad("host"))?;
        target
            .set_port(Some(u.port.unwrap_or(6379)))
            .map_err(|()| bad("port"))?;
        if let Some(user) = u.user.as_deref().filter(|s| !s.is_empty()) {
            target.set_username(user).map_err(|()| bad("user"))?;
        }
        if let Some(pw) = u.password.as_deref() {
            target.set_password(Some(pw)).map_err(|()| bad("password"))?;
        }
        // No `CLIENT SETINFO` after connecting: redis-rs waits its whole timeout on
        // each of those replies, so a frozen server took twice the connect bound
        // (the frozen-store-at-build test found 20 s for 10).
        let info = redis::IntoConnectionInfo::into_connection_info(target.as_str())
            .map_err(|e| lease_error(format!("redis lease URL {}: {e}", u.redacted())))?;
        let settings = info.redis_settings().clone().set_skip_set_lib_name();
        let info = info.set_redis_settings(settings);
        let client = if tls {
            let files = TlsFiles::from_url(u, TLS_PARAMS)?;
            let client_tls = match (&files.cert, &files.key) {
                (Some(c), Some(k)) => Some(redis::ClientTlsConfig {
                    client_cert: tls::read_pem(c, "cert")?,
                    client_key: tls::read_pem(k, "key")?,
                }),
                _ => None,
            };
            let root_cert = files.ca.as_deref().map(|c| tls::read_pem(c, "ca")).transpose()?;
            redis::Client::build_with_tls(info, redis::TlsCertificates { client_tls, root_cert })
        } else {
            redis::Client::open(info)
        }
        .map_err(|e| lease_error(format!("redis lease URL {}: {e}", u.redacted())))?;
        Ok(RedisStore {
            url: u.clone(),
            client,
            namespace: u.namespace()?,
            conn: None,
            acquire: redis::Script::new(ACQUIRE),
            renew: redis::Script::new(RENEW),
            release: redis::Script::new(RELEASE),
        })
    }

    /// A store for `url` (`redis[s]://[user:password@]host:port/db?namespace=NAME`).
    pub fn connect_url(url: &str) -> Result<RedisStore> {
        Self::from_url(&LeaseUrl::parse(url)?)
    }

    fn prefix(&self) -> String {
        format!("flakeid:{}:", self.namespace)
    }

    /// Runs a script, (re)connecting first when needed, within `until`; drops the
    /// connection on any failure so the next call starts clean. A server that says
    /// it is not ready yet (`LOADING` while it reads its dataset after a restart,
    /// `MASTERDOWN`, `TRYAGAIN`: what redis-rs classes as wait-and-retry) is asked
    /// again every [`crate::STARTING_RETRY`] until `until`.
    fn invoke<T: redis::FromRedisValue>(
        &mut self,
        which: Which,
        keys: &[&str],
        args: &[&str],
        until: Instant,
    ) -> Result<T> {
        loop {
            match self.invoke_once(which, keys, args, until)? {
                Ok(v) => return Ok(v),
                Err((what, e)) => {
                    if matches!(e.retry_method(), redis::RetryMethod::WaitAndRetry) && pause_before_retry(until) {
                        continue;
                    }
                    return Err(self.fail(what, &e));
                }
            }
        }
    }

    /// One try of [`invoke`](Self::invoke): the outer error is our own deadline,
    /// the inner one the client's, with the step it failed in.
    fn invoke_once<T: redis::FromRedisValue>(
        &mut self,
        which: Which,
        keys: &[&str],
        args: &[&str],
        until: Instant,
    ) -> Result<std::result::Result<T, (&'static str, redis::RedisError)>> {
        let left = remaining(until)?;
        if self.conn.is_none() {
            // redis-rs applies its timeout to each read of the login (AUTH, SELECT):
            // give the connection half the time left, the command the rest.
            match self
                .client
                .get_connection_with_timeout((left / 2).max(Duration::from_millis(1)))
            {
                Ok(c) => self.conn = Some(c),
                Err(e) => return Ok(Err(("connect", e))),
            }
        }
        let left = remaining(until)?;
        let script = match which {
            Which::Acquire => &self.acquire,
            Which::Renew => &self.renew,
            Which::Release => &self.release,
        };
        let mut call = script.prepare_invoke();
        for k in keys {
            call.key(*k);
        }
        for a in args {
            call.arg(*a);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(lease_error("redis: no connection"));
        };
        let result = conn
            .set_read_timeout(Some(left))
            .and_then(|()| conn.set_write_timeout(Some(left)))
            .and_then(|()| call.invoke::<T>(conn));
        Ok(result.map_err(|e| {
            self.conn = None;
            (which.name(), e)
        }))
    }

    fn fail(&self, what: &str, e: &redis::RedisError) -> Error {
        let why = if let Some(cause) = tls::tls_cause(e) {
            cause
        } else if e.kind() == redis::ErrorKind::AuthenticationFailed || e.to_string().contains("WRONGPASS") {
            format!("authentication failed: wrong user or password ({e})")
        } else if e.is_timeout() {
            "timed out".to_string()
        } else {
            e.to_string()
        };
        lease_error(format!("redis {} ({what}): {why}", self.url.redacted()))
    }

    fn keys(&self, node: u64) -> (String, String) {
        let p = self.prefix();
        (format!("{p}node:{node}"), format!("{p}meta"))
    }
}

#[derive(Clone, Copy)]
enum Which {
    Acquire,
    Renew,
    Release,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Acquire => "acquire",
            Which::Renew => "renew",
            Which::Release => "release",
        }
    }
}

fn remaining(until: Instant) -> Result<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(lease_error("redis: timed out"))
    } else {
        Ok(left)
    }
}

fn parse_db(u: &LeaseUrl) -> Result<u32> {
    let db = u.path.trim_start_matches('/');
    if db.is_empty() {
        return Ok(0);
    }
    db.parse::<u32>().map_err(|_| {
        config(format!(
            "redis lease URL {} must end in a database number, e.g. /0",
            u.redacted()
        ))
    })
}

impl LeaseStore for RedisStore {
    fn describe(&self) -> String {
        format!("{} namespace {:?}", self.url.redacted(), self.namespace)
    }

    fn namespace(&self) -> &str {
        &self.namespace
    }

    fn acquire(&mut self, max_node: u64, holder: &str, ttl_ms: u64, until: Instant) -> Result<Option<Acquired>> {
        let prefix = self.prefix();
        let ttl = ttl_ms.to_string();
        let mut from = 0u64;
        loop {
            let to = from.saturating_add(BATCH - 1).min(max_node);
            let (f, t) = (from.to_string(), to.to_string());
            let (node, last, age, now): (i64, String, String, String) =
                self.invoke(Which::Acquire, &[], &[&prefix, holder, &ttl, &f, &t], until)?;
            if node >= 0 {
                let got = Acquired::new(
                    node as u64,
                    last.parse::<u64>().unwrap_or(0),
                    age.parse::<u64>().unwrap_or(0),
                );
                return Ok(Some(match now.parse::<u64>() {
                    Ok(now) => got.with_store_now_ms(now),
                    Err(_) => got,
                }));
            }
            if to >= max_node {
                return Ok(None);
            }
            from = to + 1;
        }
    }

    fn renew(&mut self, node: u64, holder: &str, ttl_ms: u64, fence_ms: u64, until: Instant) -> Result<bool> {
        let (k, m) = self.keys(node);
        let (ttl, fence, id) = (ttl_ms.to_string(), fence_ms.to_string(), node.to_string());
        let r: i64 = self.invoke(Which::Renew, &[&k, &m], &[holder, &ttl, &fence, &id], until)?;
        Ok(r == 1)
    }

    fn release(&mut self, node: u64, holder: &str, last_ms: u64, until: Instant) -> Result<()> {
        let (k, m) = self.keys(node);
        let (last, id) = (last_ms.to_string(), node.to_string());
        let _: i64 = self.invoke(Which::Release, &[&k, &m], &[holder, &last, &id], until)?;
        Ok(())
    }
}
