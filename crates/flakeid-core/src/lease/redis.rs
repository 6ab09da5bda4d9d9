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
//! The client is a few dozen lines of RESP2 over `std::net::TcpStream`: four
//! commands (`AUTH`, `SELECT`, `EVAL`, `PING`) do not justify a dependency tree.

use super::{Acquired, LeaseStore, LeaseUrl, lease_error, namespace_of};
use crate::error::{Error, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Ids tried per acquire script call (keeps each call short on big ranges).
const BATCH: u64 = 512;

// Returns {id, last, marker age ms}; {-1, '0', age} when every id is taken. The
// marker is read (or written) in the same atomic step as the id is taken.
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
for i = tonumber(ARGV[4]), tonumber(ARGV[5]) do
  if redis.call('SET', prefix .. 'node:' .. i, token, 'NX', 'PX', ttl) then
    local last = redis.call('HGET', meta, 'last:' .. i) or '0'
    redis.call('HSET', meta, 'holder:' .. i, token)
    return {i, last, age}
  end
end
return {-1, '0', age}
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
#[derive(Debug)]
pub struct RedisStore {
    url: LeaseUrl,
    addr: String,
    db: u32,
    namespace: String,
    conn: Option<Conn>,
}

impl RedisStore {
    pub(crate) fn check_url(u: &LeaseUrl) -> Result<()> {
        u.check_params(&["namespace"])?;
        namespace_of(u)?;
        if u.host.is_empty() {
            return Err(Error::config(
                "lease",
                format!("redis lease URL {} needs a host", u.redacted()),
            ));
        }
        parse_db(u)?;
        Ok(())
    }

    pub(crate) fn from_url(u: &LeaseUrl) -> Result<RedisStore> {
        Self::check_url(u)?;
        let host = if u.host.contains(':') {
            format!("[{}]", u.host)
        } else {
            u.host.clone()
        };
        Ok(RedisStore {
            url: u.clone(),
            addr: format!("{host}:{}", u.port.unwrap_or(6379)),
            db: parse_db(u)?,
            namespace: namespace_of(u)?,
            conn: None,
        })
    }

    /// A store for `url` (`redis://host:port/db?namespace=NAME`).
    pub fn connect_url(url: &str) -> Result<RedisStore> {
        Self::from_url(&LeaseUrl::parse(url)?)
    }

    fn prefix(&self) -> String {
        format!("flakeid:{}:", self.namespace)
    }

    /// Runs a command, (re)connecting first when needed; drops the connection on
    /// any I/O or protocol failure so the next call starts clean.
    fn call(&mut self, args: &[&[u8]], until: Instant) -> Result<Reply> {
        if self.conn.is_none() {
            let mut c = Conn::open(&self.addr, until)?;
            let user = self.url.user.clone().filter(|u| !u.is_empty());
            if let Some(pw) = self.url.password.clone() {
                let reply = match &user {
                    Some(u) => c.call(&[b"AUTH", u.as_bytes(), pw.as_bytes()], until)?,
                    None => c.call(&[b"AUTH", pw.as_bytes()], until)?,
                };
                reply.ok_or_err("AUTH")?;
            }
            if self.db != 0 {
                c.call(&[b"SELECT", self.db.to_string().as_bytes()], until)?
                    .ok_or_err("SELECT")?;
            }
            self.conn = Some(c);
        }
        let conn = self.conn.as_mut().ok_or_else(|| lease_error("redis: no connection"))?;
        let result = conn.call(args, until);
        if result.is_err() {
            self.conn = None;
        }
        result.map_err(|e| lease_error(format!("redis {}: {}", self.url.redacted(), strip(&e))))
    }

    fn keys(&self, node: u64) -> (String, String) {
        let p = self.prefix();
        (format!("{p}node:{node}"), format!("{p}meta"))
    }
}

fn strip(e: &Error) -> String {
    match e {
        Error::Lease { message } => message.clone(),
        other => other.to_string(),
    }
}

fn parse_db(u: &LeaseUrl) -> Result<u32> {
    let db = u.path.trim_start_matches('/');
    if db.is_empty() {
        return Ok(0);
    }
    db.parse::<u32>().map_err(|_| {
        Error::config(
            "lease",
            format!(
                "redis lease URL {} must end in a database number, e.g. /0",
                u.redacted()
            ),
        )
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
            let reply = self.call(
                &[
                    b"EVAL",
                    ACQUIRE.as_bytes(),
                    b"0",
                    prefix.as_bytes(),
                    holder.as_bytes(),
                    ttl.as_bytes(),
                    f.as_bytes(),
                    t.as_bytes(),
                ],
                until,
            )?;
            let items = match reply {
                Reply::Array(Some(items)) if items.len() == 3 => items,
                other => return Err(lease_error(format!("redis: unexpected reply to acquire: {other:?}"))),
            };
            let node = items[0].as_int()?;
            if node >= 0 {
                let last_ms = items[1].as_text()?.parse::<u64>().unwrap_or(0);
                let incarnation_age_ms = items[2].as_text()?.parse::<u64>().unwrap_or(0);
                return Ok(Some(Acquired {
                    node: node as u64,
                    last_ms,
                    incarnation_age_ms,
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
        let r = self.call(
            &[
                b"EVAL",
                RENEW.as_bytes(),
                b"2",
                k.as_bytes(),
                m.as_bytes(),
                holder.as_bytes(),
                ttl.as_bytes(),
                fence.as_bytes(),
                id.as_bytes(),
            ],
            until,
        )?;
        Ok(r.as_int()? == 1)
    }

    fn release(&mut self, node: u64, holder: &str, last_ms: u64, until: Instant) -> Result<()> {
        let (k, m) = self.keys(node);
        let (last, id) = (last_ms.to_string(), node.to_string());
        self.call(
            &[
                b"EVAL",
                RELEASE.as_bytes(),
                b"2",
                k.as_bytes(),
                m.as_bytes(),
                holder.as_bytes(),
                last.as_bytes(),
                id.as_bytes(),
            ],
            until,
        )?
        .as_int()?;
        Ok(())
    }
}

/// A RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    fn ok_or_err(self, what: &str) -> Result<()> {
        match self {
            Reply::Error(e) => Err(lease_error(format!("redis {what} failed: {e}"))),
            _ => Ok(()),
        }
    }
    fn as_int(&self) -> Result<i64> {
        match self {
            Reply::Int(i) => Ok(*i),
            Reply::Error(e) => Err(lease_error(format!("redis error: {e}"))),
            other => Err(lease_error(format!("redis: expected an integer, got {other:?}"))),
        }
    }
    fn as_text(&self) -> Result<String> {
        match self {
            Reply::Bulk(Some(b)) => Ok(String::from_utf8_lossy(b).into_owned()),
            Reply::Status(s) => Ok(s.clone()),
            Reply::Int(i) => Ok(i.to_string()),
            other => Err(lease_error(format!("redis: expected text, got {other:?}"))),
        }
    }
}

#[derive(Debug)]
struct Conn {
    reader: BufReader<TcpStream>,
}

fn remaining(until: Instant) -> Result<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(lease_error("timed out"))
    } else {
        Ok(left)
    }
}

fn io_err(e: std::io::Error) -> Error {
    lease_error(e.to_string())
}

impl Conn {
    fn open(addr: &str, until: Instant) -> Result<Conn> {
        let mut last = lease_error(format!("redis: {addr} resolves to no address"));
        let addrs = addr
            .to_socket_addrs()
            .map_err(|e| lease_error(format!("redis: cannot resolve {addr}: {e}")))?;
        for a in addrs {
            match TcpStream::connect_timeout(&a, remaining(until)?) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(Conn {
                        reader: BufReader::new(s),
                    });
                }
                Err(e) => last = lease_error(format!("redis: cannot connect to {a}: {e}")),
            }
        }
        Err(last)
    }

    fn call(&mut self, args: &[&[u8]], until: Instant) -> Result<Reply> {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        let s = self.reader.get_mut();
        s.set_write_timeout(Some(remaining(until)?)).map_err(io_err)?;
        s.write_all(&out).map_err(io_err)?;
        self.read_reply(until, 0)
    }

    fn read_line(&mut self, until: Instant) -> Result<String> {
        self.reader
            .get_ref()
            .set_read_timeout(Some(remaining(until)?))
            .map_err(io_err)?;
        let mut line = Vec::new();
        self.reader.read_until(b'\n', &mut line).map_err(io_err)?;
        if !line.ends_with(b"\r\n") {
            return Err(lease_error("connection closed mid-reply"));
        }
        line.truncate(line.len() - 2);
        String::from_utf8(line).map_err(|_| lease_error("non-UTF-8 reply header"))
    }

    fn read_reply(&mut self, until: Instant, depth: u32) -> Result<Reply> {
        if depth > 8 {
            return Err(lease_error("reply nested too deeply"));
        }
        let line = self.read_line(until)?;
        let (kind, rest) = line.split_at(line.len().min(1));
        let num = || {
            rest.parse::<i64>()
                .map_err(|_| lease_error(format!("bad reply header {line:?}")))
        };
        match kind {
            "+" => Ok(Reply::Status(rest.to_string())),
            "-" => Ok(Reply::Error(rest.to_string())),
            ":" => Ok(Reply::Int(num()?)),
            "$" => {
                let n = num()?;
                if n < 0 {
                    return Ok(Reply::Bulk(None));
                }
                let n = usize::try_from(n).map_err(|_| lease_error("bulk too long"))?;
                if n > 64 << 20 {
                    return Err(lease_error("bulk reply too long"));
                }
                let mut buf = vec![0u8; n + 2];
                self.reader
                    .get_ref()
                    .set_read_timeout(Some(remaining(until)?))
                    .map_err(io_err)?;
                self.reader.read_exact(&mut buf).map_err(io_err)?;
                buf.truncate(n);
                Ok(Reply::Bulk(Some(buf)))
            }
            "*" => {
                let n = num()?;
                if n < 0 {
                    return Ok(Reply::Array(None));
                }
                let mut items = Vec::new();
                for _ in 0..n.min(1 << 20) {
                    items.push(self.read_reply(until, depth + 1)?);
                }
                Ok(Reply::Array(Some(items)))
            }
            _ => Err(lease_error(format!("unknown reply type in {line:?}"))),
        }
    }
}
