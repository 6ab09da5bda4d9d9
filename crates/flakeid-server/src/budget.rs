//! The memory budgets of the service's responses and gRPC requests: responses
//! reserved from their connection's, their client's and the server's response
//! budgets before they are made ([`Flow::reserve`]) and held until written, the
//! responses the stream-idle rule watches ([`Streams`]), and the server's request
//! budget ([`Budget`]). The transport (conn/) carries them on the wire; the
//! handlers reserve from them.

use crate::config::Budgets;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The server-wide budgets of one service: the request budget, the response
/// budget and each client's share of it ([`Budgets`]).
#[derive(Debug)]
pub(crate) struct Memory {
    /// [`crate::Config::budgets`].
    pub(crate) budgets: Budgets,
    pub(crate) requests: Arc<Budget>,
    pub(crate) responses: Arc<tokio::sync::Semaphore>,
    /// Each client's share of `responses` ([`Budgets::client_response`]).
    pub(crate) shares: Arc<Shares>,
}

impl Memory {
    pub(crate) fn new(budgets: Budgets) -> Memory {
        Memory {
            budgets,
            requests: Arc::new(Budget::new(budgets.request)),
            responses: Arc::new(tokio::sync::Semaphore::new(budgets.response)),
            shares: Arc::new(Shares::grouped(budgets.client_response, budgets.client_ipv6_prefix)),
        }
    }

    /// Bytes of the response budget reserved now.
    pub(crate) fn responses_in_use(&self) -> usize {
        let free = self.responses.available_permits();
        self.budgets.response.saturating_sub(free)
    }
}

/// A connection's activity, which a response's bytes count as (its idle timeout:
/// conn/slots.rs, `SlotState`).
pub(crate) trait Activity: Send + Sync + std::fmt::Debug {
    /// Something moved on the connection.
    fn moved(&self);
}

/// The tracked responses of one connection ([`Flow`]), for the stream-idle rule
/// ([`crate::config::Limits::stream_idle_timeout`]); the connection's response budget and the
/// server's ([`Streams::reserve`]).
#[derive(Debug)]
pub(crate) struct Streams {
    inner: Mutex<(u64, HashMap<u64, Watched>)>,
    budget: Arc<tokio::sync::Semaphore>,
    total: Arc<tokio::sync::Semaphore>,
    /// The share of the connection's client address ([`Shares`]); a request with a
    /// bearer token reserves from its token's instead.
    client: Arc<tokio::sync::Semaphore>,
    shares: Arc<Shares>,
    /// How long a reservation may wait for room ([`crate::config::Limits::reserve_timeout`]).
    wait: Duration,
    /// Since when this connection's requests have found no room, with no progress
    /// since ([`Streams::longest_wait`]).
    starved: Mutex<Option<std::time::Instant>>,
    slot: Arc<dyn Activity>,
}

/// Who a share of the response budget belongs to ([`Shares`]): a client address,
/// or, when bearer tokens are on, the token a request carries (its place in the
/// token file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    Addr(std::net::IpAddr),
    Token(usize),
}

/// Which addresses make one client, for the shares and the connection limits
/// (conn/slots.rs, `Conns`): an IPv4 address (also written as an IPv4-mapped IPv6
/// one, as a dual-stack listener sees it), or an IPv6 address's first
/// [`crate::Limits::client_ipv6_prefix`] bits (a host with a /64 has as many
/// addresses as it likes, and one address would be one client no longer than it
/// pleases).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grouping {
    /// The IPv6 addresses' bits that are kept (the others cleared).
    ipv6_mask: u128,
}

impl Grouping {
    /// IPv6 clients grouped by their first `ipv6_prefix` bits (1..=128,
    /// [`crate::Config::validate`]).
    pub(crate) fn new(ipv6_prefix: u32) -> Grouping {
        Grouping {
            ipv6_mask: u128::MAX.checked_shl(128 - ipv6_prefix.min(128)).unwrap_or(0),
        }
    }

    /// The client `ip` belongs to, as an address: itself (IPv4), or its prefix
    /// with the other bits cleared (IPv6).
    pub(crate) fn client(self, ip: std::net::IpAddr) -> std::net::IpAddr {
        match ip.to_canonical() {
            std::net::IpAddr::V6(v6) => std::net::Ipv6Addr::from(u128::from(v6) & self.ipv6_mask).into(),
            v4 => v4,
        }
    }
}

/// Each client's share of the server's response budget
/// ([`crate::Budgets::client_response`]): the most one client, over all its
/// connections, can hold of it. A client is an IPv4 address or an IPv6 prefix
/// ([`Grouping`]), or a bearer token. A share lives while a connection or request of its client holds
/// it; the map forgets the others as it grows.
#[derive(Debug)]
pub(crate) struct Shares {
    size: usize,
    grouping: Grouping,
    inner: Mutex<(HashMap<Client, std::sync::Weak<tokio::sync::Semaphore>>, usize)>,
}

impl Shares {
    /// Shares of `size` bytes, IPv6 clients grouped by /64.
    #[cfg(test)]
    pub(crate) fn new(size: usize) -> Shares {
        Shares::grouped(size, 64)
    }

    /// Shares of `size` bytes, IPv6 clients grouped by their first `ipv6_prefix`
    /// bits (1..=128, [`crate::Config::validate`]).
    pub(crate) fn grouped(size: usize, ipv6_prefix: u32) -> Shares {
        Shares {
            size,
            grouping: Grouping::new(ipv6_prefix),
            inner: Mutex::new((HashMap::new(), 64)),
        }
    }

    /// The share of `client`.
    pub(crate) fn of(&self, client: Client) -> Arc<tokio::sync::Semaphore> {
        let client = match client {
            Client::Addr(ip) => Client::Addr(self.grouping.client(ip)),
            token => token,
        };
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = inner.0.get(&client).and_then(std::sync::Weak::upgrade) {
            return s;
        }
        let s = Arc::new(tokio::sync::Semaphore::new(self.size));
        inner.0.insert(client, Arc::downgrade(&s));
        if inner.0.len() > inner.1 {
            inner.0.retain(|_, w| w.strong_count() > 0);
            inner.1 = (2 * inner.0.len()).max(64);
        }
        s
    }
}

/// What the watchdog knows of one [`Flow`]: its counts, how many bytes the client
/// had taken when it last made progress, and since when it has waited (`None`: it
/// holds no bytes, or has just moved).
#[derive(Debug)]
pub(crate) struct Watched {
    sent: Arc<Sent>,
    taken: usize,
    since: Option<std::time::Instant>,
}

/// Bytes of one response handed to hyper, and bytes of them written to the socket
/// (or dropped with their stream): the difference is what HTTP/2 holds.
#[derive(Debug, Default)]
pub(crate) struct Sent {
    handed: AtomicUsize,
    gone: AtomicUsize,
}

/// What a stream's client must take of the bytes HTTP/2 holds for it within the
/// stream-idle time for its response to count as moving: one full HTTP/2 DATA frame
/// (16 KiB). A client that opens its window a few bytes at a time holds the
/// response, and its connection, no longer than one that opens none.
pub const MIN_TAKEN: usize = 16 * 1024;

/// Bytes of response reserved from a connection's budget and the server's
/// ([`Streams::reserve`]); given back when dropped.
#[derive(Debug)]
pub(crate) struct Reserved {
    conn: tokio::sync::OwnedSemaphorePermit,
    client: tokio::sync::OwnedSemaphorePermit,
    total: tokio::sync::OwnedSemaphorePermit,
}

impl Reserved {
    /// One reservation of both.
    pub(crate) fn merge(&mut self, other: Reserved) {
        self.conn.merge(other.conn);
        self.client.merge(other.client);
        self.total.merge(other.total);
    }

    /// Bytes held.
    fn bytes(&self) -> usize {
        self.conn.num_permits()
    }

    /// `bytes` of this reservation (at most all of it) as a reservation of their own.
    fn split(&mut self, bytes: usize) -> Option<Reserved> {
        let n = bytes.min(self.bytes());
        Some(Reserved {
            conn: self.conn.split(n)?,
            client: self.client.split(n)?,
            total: self.total.split(n)?,
        })
    }
}

impl Streams {
    pub(crate) fn new(
        budget: usize,
        total: Arc<tokio::sync::Semaphore>,
        shares: Arc<Shares>,
        wait: Duration,
        ip: std::net::IpAddr,
        slot: Arc<dyn Activity>,
    ) -> Streams {
        Streams {
            inner: Mutex::default(),
            budget: Arc::new(tokio::sync::Semaphore::new(budget)),
            total,
            client: shares.of(Client::Addr(ip)),
            shares,
            wait,
            starved: Mutex::new(None),
            slot,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, (u64, HashMap<u64, Watched>)> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn starved(&self) -> MutexGuard<'_, Option<std::time::Instant>> {
        self.starved.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for `bytes` of response, from this connection's budget, its client's
    /// share ([`Shares`]) and the server's budget, waiting for it (first come, first
    /// served) at most [`crate::config::Limits::reserve_timeout`] in all. Each budget is at least
    /// the largest reservation ([`crate::Config::validate`]). `None`: no room in
    /// time; the caller answers `503` with `Retry-After` (gRPC
    /// `RESOURCE_EXHAUSTED`), and the connection counts as stalled from then until
    /// one of its reservations succeeds or its client takes bytes
    /// ([`Streams::longest_wait`]): a connection whose requests only wait for room
    /// is closed by the stream-idle rule too.
    async fn reserve(&self, bytes: usize, client: &Arc<tokio::sync::Semaphore>) -> Option<Reserved> {
        let n = u32::try_from(bytes).unwrap_or(u32::MAX);
        let all = async {
            let conn = self.budget.clone().acquire_many_owned(n).await.ok()?;
            let client = client.clone().acquire_many_owned(n).await.ok()?;
            let total = self.total.clone().acquire_many_owned(n).await.ok()?;
            Some(Reserved { conn, client, total })
        };
        match tokio::time::timeout(self.wait, all).await {
            Ok(Some(r)) => {
                *self.starved() = None;
                Some(r)
            }
            _ => {
                self.starved().get_or_insert_with(std::time::Instant::now);
                None
            }
        }
    }

    /// Something moved on the connection (a body frame), for the idle timeout.
    pub(crate) fn moved(&self) {
        self.slot.moved();
    }

    /// A new tracked response on this connection, reserving from the share of
    /// `token` (the bearer token it carries, when tokens are on) or else of the
    /// connection's client address.
    pub(crate) fn open(self: &Arc<Self>, token: Option<usize>) -> Arc<Flow> {
        let client = match token {
            Some(t) => self.shares.of(Client::Token(t)),
            None => self.client.clone(),
        };
        let sent = Arc::new(Sent::default());
        let mut inner = self.lock();
        let id = inner.0;
        inner.0 += 1;
        inner.1.insert(
            id,
            Watched {
                sent: sent.clone(),
                taken: 0,
                since: None,
            },
        );
        drop(inner);
        Arc::new(Flow {
            streams: self.clone(),
            client,
            id,
            sent,
            made: Mutex::new(None),
            ahead: Mutex::new(None),
        })
    }

    /// How long the response that has waited longest for its client to take its
    /// bytes has waited (zero: none waits), as seen now: a response waits while
    /// HTTP/2 holds bytes of it and its client takes fewer than [`MIN_TAKEN`] of them.
    /// Called on each watchdog tick, which is when a wait is first seen: a tick late
    /// at most.
    /// A connection whose reservations found no room counts as waiting since the
    /// first of them, until a reservation succeeds or its client takes bytes.
    pub(crate) fn longest_wait(&self) -> Duration {
        let now = std::time::Instant::now();
        let mut longest = Duration::ZERO;
        let mut progress = false;
        for w in self.lock().1.values_mut() {
            let gone = w.sent.gone.load(Ordering::Acquire);
            let held = w.sent.handed.load(Ordering::Acquire).saturating_sub(gone);
            progress |= gone.wrapping_sub(w.taken) >= MIN_TAKEN;
            if held == 0 {
                (w.taken, w.since) = (gone, None);
            } else if gone.wrapping_sub(w.taken) >= MIN_TAKEN || w.since.is_none() {
                (w.taken, w.since) = (gone, Some(now));
            } else if let Some(t) = w.since {
                longest = longest.max(now.saturating_duration_since(t));
            }
        }
        let mut starved = self.starved();
        if progress {
            *starved = None;
        }
        if let Some(t) = *starved {
            longest = longest.max(now.saturating_duration_since(t));
        }
        longest
    }
}

/// One tracked response (a gRPC call, a `/v1/ids`) from its request to the
/// last of its bytes written to the socket: shared by its handler (the request's
/// extension), its body and its bytes in HTTP/2 (conn/bodies.rs, `Tracked` and `Piece`).
/// The handler reserves room for what it makes ([`Flow::reserve`]) and hands the
/// reservation over once it is made ([`Flow::made`]); the next data frame of the
/// body carries it until HTTP/2 has written that frame, and a reservation not
/// carried is given back with the last of the flow.
#[derive(Debug)]
pub(crate) struct Flow {
    streams: Arc<Streams>,
    /// The share it reserves from ([`Streams::open`]).
    client: Arc<tokio::sync::Semaphore>,
    id: u64,
    sent: Arc<Sent>,
    made: Mutex<Option<Reserved>>,
    /// Room reserved for the whole response and not yet drawn ([`Flow::reserve_whole`]).
    ahead: Mutex<Option<Reserved>>,
}

impl Flow {
    /// Room for `bytes` of response: drawn from what [`Flow::reserve_whole`] holds,
    /// at once, else reserved ([`Streams::reserve`]); `None`: none in time.
    pub(crate) async fn reserve(&self, bytes: usize) -> Option<Reserved> {
        let drawn = {
            let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
            ahead.as_mut().and_then(|a| a.split(bytes))
        };
        match drawn {
            Some(r) if r.bytes() >= bytes => Some(r),
            Some(mut r) => {
                r.merge(self.streams.reserve(bytes - r.bytes(), &self.client).await?);
                Some(r)
            }
            None => self.streams.reserve(bytes, &self.client).await,
        }
    }

    /// Room for a whole response of `bytes`, reserved now (waiting as
    /// [`Streams::reserve`] does) and drawn by its parts' [`Flow::reserve`]s as they
    /// are made: a response that has its room sends its head and then finishes,
    /// never waiting for room again; one that finds none is refused whole. `false`:
    /// none in time.
    pub(crate) async fn reserve_whole(&self, bytes: usize) -> bool {
        let Some(r) = self.streams.reserve(bytes, &self.client).await else {
            return false;
        };
        let mut ahead = self.ahead.lock().unwrap_or_else(|e| e.into_inner());
        match ahead.as_mut() {
            Some(a) => a.merge(r),
            None => *ahead = Some(r),
        }
        true
    }

    /// The bytes `r` is for are made: the next data frame carries `r`.
    pub(crate) fn made(&self, r: Reserved) {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        match made.as_mut() {
            Some(m) => m.merge(r),
            None => *made = Some(r),
        }
    }

    pub(crate) fn take_made(&self) -> Option<Reserved> {
        self.made.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// `n` bytes of the response handed to hyper: something moved on the connection.
    pub(crate) fn handed(&self, n: usize) {
        self.sent.handed.fetch_add(n, Ordering::AcqRel);
        self.streams.moved();
    }

    /// `n` bytes of the response written to the socket, or dropped with its stream.
    pub(crate) fn gone(&self, n: usize) {
        self.sent.gone.fetch_add(n, Ordering::AcqRel);
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        self.streams.lock().1.remove(&self.id);
    }
}

/// The server's request budget: bytes held by gRPC request bodies now (conn/bodies.rs,
/// `RequestBody`), and at most.
#[derive(Debug)]
pub(crate) struct Budget {
    held: AtomicUsize,
    cap: usize,
    pub(crate) refused: AtomicU64,
}

impl Budget {
    pub(crate) fn new(cap: usize) -> Budget {
        Budget {
            held: AtomicUsize::new(0),
            cap,
            refused: AtomicU64::new(0),
        }
    }

    /// Bytes held now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// `n` bytes taken ([`Budget::take`]) given back.
    pub(crate) fn give(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::AcqRel);
    }

    /// Takes `n` bytes; `false` (and counted as refused) when that passes the cap.
    pub(crate) fn take(&self, n: usize) -> bool {
        let before = self.held.fetch_add(n, Ordering::AcqRel);
        if before.saturating_add(n) > self.cap {
            self.held.fetch_sub(n, Ordering::AcqRel);
            self.refused.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::{Client, Shares};
    use std::sync::Arc;

    fn addr(s: &str) -> Client {
        Client::Addr(s.parse().unwrap())
    }

    /// IPv6 addresses of one prefix share one share, as one IPv4 address does; an
    /// IPv4-mapped address is its IPv4 client; tokens are their own.
    #[test]
    fn ipv6_clients_are_grouped_by_their_prefix() {
        let s = Shares::new(100);
        let same = |a: &str, b: &str| Arc::ptr_eq(&s.of(addr(a)), &s.of(addr(b)));
        assert!(same("2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe"));
        assert!(!same("2001:db8:1:2::1", "2001:db8:1:3::1"));
        assert!(same("192.0.2.7", "::ffff:192.0.2.7"));
        assert!(!same("192.0.2.7", "192.0.2.8"));
        assert!(!same("::ffff:192.0.2.7", "::ffff:192.0.2.8"));
        assert!(!Arc::ptr_eq(&s.of(Client::Token(0)), &s.of(Client::Token(1))));
        let s = Shares::grouped(100, 48);
        let same = |a: &str, b: &str| Arc::ptr_eq(&s.of(addr(a)), &s.of(addr(b)));
        assert!(same("2001:db8:1:2::1", "2001:db8:1:3::1"));
        assert!(!same("2001:db8:1::1", "2001:db8:2::1"));
        let s = Shares::grouped(100, 128);
        let same = |a: &str, b: &str| Arc::ptr_eq(&s.of(addr(a)), &s.of(addr(b)));
        assert!(!same("2001:db8::1", "2001:db8::2"));
        assert!(same("2001:db8::1", "2001:db8::1"));
    }
}
