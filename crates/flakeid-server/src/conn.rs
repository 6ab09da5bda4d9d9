//! The accept loop and the per-connection limits of `flakeid serve`: every
//! resource one client can hold is bounded, and the memory all clients together
//! can make the server hold is bounded by configuration (docs/service.md,
//! "Memory budget").
//!
//! - **Connections** are capped ([`Limits::max_connections`], and on Unix always
//!   below the process's file-descriptor limit minus [`FD_HEADROOM`]), and so are
//!   those of one client address ([`Limits::max_connections_per_client`]). At a cap, a new
//!   connection evicts the oldest connection that has not sent a complete request
//!   within [`UNSERVED_GRACE`] of its accept (a slowloris or silent client), else
//!   the served connection with no request in flight that started its last request
//!   longest ago (a client that holds a slot with a request now and then), else the
//!   oldest that has sent none yet; only when every connection has a request in
//!   flight is the new connection closed at once. So a fresh client — a `/healthz`
//!   probe — is served while every slot is held, even by clients that reconnect as
//!   soon as they are evicted.
//! - **A request head** must arrive within [`Limits::header_read_timeout`] of the
//!   connection (HTTP/1.1: of each request), however slowly its bytes trickle in;
//!   **a gRPC request body** within [`Limits::body_timeout`] of its head, and its
//!   bytes count against one budget for the whole server ([`RequestBody`]). gRPC
//!   over HTTP/1.1 is refused before its body is read.
//! - **An idle connection** — no request started and no body frame moved for
//!   [`Limits::idle_timeout`] — is shut down gracefully (HTTP/2 GOAWAY), then
//!   closed. PINGs and other control frames are not progress: they do not keep a
//!   connection whose requests make no progress open.
//! - **HTTP/2** (and so gRPC): at most [`Limits::max_streams`] streams per
//!   connection, flow-control windows of [`Limits::stream_window`] bytes per stream
//!   and [`Limits::connection_window`] per connection.
//! - **Responses**: what a response holds until HTTP/2 has written it to the socket
//!   is reserved first, from its connection's budget and the server's
//!   ([`Flow::reserve`]): a gRPC `Batch` or `Unseal` answer before it is made, each
//!   chunk of a large `/v1/ids` or a gRPC `Stream` before it is made
//!   ([`crate::IdChunks`]); the data frame that holds it carries the reservation
//!   ([`Piece`]). Every gRPC and streamed response ([`Tracked`]) counts toward the
//!   stream-idle rule: one of whose bytes held for sending its client takes fewer
//!   than [`MIN_TAKEN`] in [`Limits::stream_idle_timeout`] (a window kept shut or
//!   near zero, PINGs or not) closes its connection, unary answers included.
//!
//! The timeouts are checked by each connection's watchdog task, every quarter of
//! the shortest one (at least every 50 ms), so a timeout ends its connection at
//! most that much late; nothing of them runs per request (docs/performance.md).

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

/// File descriptors kept free below `RLIMIT_NOFILE` when the connection cap is
/// derived from it: the listener, the runtime's own, the lease store's connections,
/// log files, and connections accepted while an evicted one is still closing.
pub const FD_HEADROOM: usize = 64;

/// The resource limits of one service; every one is a `flakeid serve` option.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long a client may take to send a complete request head (from the
    /// connection's start, and in HTTP/1.1 for each later request). Default 10 s.
    pub header_read_timeout: Duration,
    /// A connection that starts no request and moves no body frame for this long
    /// is shut down (PINGs and other control frames do not count). Default 60 s.
    pub idle_timeout: Duration,
    /// Open connections at most (default 1024: each may hold up to
    /// [`PER_CONNECTION`] bytes, so the cap bounds their memory); on Unix lowered to
    /// the soft `RLIMIT_NOFILE` minus [`FD_HEADROOM`] when that is less (Windows has
    /// no such limit on sockets).
    pub max_connections: usize,
    /// HTTP/2 streams (requests, gRPC calls) open at once on one connection.
    /// Default 32.
    pub max_streams: u32,
    /// HTTP/2 flow-control window of one stream, in bytes. Default 64 KiB.
    pub stream_window: u32,
    /// HTTP/2 flow-control window of one connection, in bytes. Default 1 MiB.
    pub connection_window: u32,
    /// A gRPC response (any call, unary ones included) or a `/v1/ids` one whose
    /// client has taken less than [`MIN_TAKEN`] of what waits to be sent this long
    /// gets its connection closed (GOAWAY, then closed 1 s later), even while other
    /// requests or PINGs keep the connection busy. Default 30 s.
    pub stream_idle_timeout: Duration,
    /// A gRPC request's body must be complete this long after its head: a body
    /// trickled in holds its buffer no longer. Default 10 s.
    pub body_timeout: Duration,
    /// Open connections from one client address at most (default 256; at most
    /// [`Limits::max_connections`]). At the limit the client's own oldest unserved
    /// or idle connection makes room, as at the server's cap.
    pub max_connections_per_client: usize,
    /// Bytes of gRPC request bodies buffered at once, over every connection; a
    /// request that would pass it is refused (`RESOURCE_EXHAUSTED`). `None`: 32 MiB,
    /// or the largest request if more ([`crate::Config::budgets`]).
    pub request_memory: Option<usize>,
    /// Bytes of responses made and not yet written to their sockets, over every
    /// connection; a response waits for room before it is made. `None`: 64 MiB, or
    /// [`Limits::connection_response_memory`] if more.
    pub response_memory: Option<usize>,
    /// The same, per connection. `None`: 4 MiB, or the largest response if more.
    pub connection_response_memory: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            max_streams: 32,
            stream_window: 64 * 1024,
            connection_window: 1024 * 1024,
            stream_idle_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(10),
            max_connections_per_client: 256,
            request_memory: None,
            response_memory: None,
            connection_response_memory: None,
        }
    }
}

/// What one connection may hold beyond the budgets, at most: its HTTP/1.1 read
/// buffer (64 KiB) or its HTTP/2 state and its streams' requests and answers that
/// reserve nothing (headers, trailers, small answers: 32 streams), TLS buffers, its
/// tasks. The documented budget (docs/service.md) counts this much per connection.
pub const PER_CONNECTION: usize = 384 * 1024;

/// hyper's `max_send_buf_size`: how much HTTP/2 may buffer for a stream before hyper
/// waits for the client's window to hand it the next frame it has polled. It bounds
/// no memory by itself (hyper polls the body before it waits, and HTTP/2 takes a
/// whole frame): the reservations its pieces carry do ([`Piece`]).
pub const SEND_BUFFER: usize = 8 * 1024;

impl Limits {
    /// The connection cap in force: [`Limits::max_connections`], lowered to keep
    /// [`FD_HEADROOM`] descriptors below the soft `RLIMIT_NOFILE`.
    pub fn connection_cap(&self) -> usize {
        let by_fds = fd_limit().map_or(usize::MAX, |n| n.saturating_sub(FD_HEADROOM as u64) as usize);
        self.max_connections.min(by_fds).max(1)
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        for (name, t) in [
            ("header_read_timeout", self.header_read_timeout),
            ("idle_timeout", self.idle_timeout),
            ("stream_idle_timeout", self.stream_idle_timeout),
            ("body_timeout", self.body_timeout),
        ] {
            if t.is_zero() {
                return Err(format!("{name} must be positive (at least 1 ms), got 0"));
            }
        }
        for (name, n) in [
            ("max_connections", self.max_connections),
            ("max_streams", self.max_streams as usize),
            ("max_connections_per_client", self.max_connections_per_client),
        ] {
            if n == 0 {
                return Err(format!("{name} must be at least 1, got 0"));
            }
        }
        // HTTP/2's limits: windows of 65 535 bytes up to 2^31 - 1.
        for (name, w) in [
            ("stream_window", self.stream_window),
            ("connection_window", self.connection_window),
        ] {
            if !(65_535..=0x7fff_ffff).contains(&w) {
                return Err(format!("{name} must be in 65535..=2147483647 bytes, got {w}"));
            }
        }
        Ok(())
    }
}

/// The soft `RLIMIT_NOFILE` (`None`: unlimited or unknown).
#[cfg(unix)]
fn fd_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a valid pointer.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur)
}

/// No descriptor limit to keep below: a Windows socket is a kernel handle, not a C
/// runtime descriptor, and a process's handles are bounded only by memory (the C
/// runtime's 8192-descriptor table never holds a socket). `max_connections` alone
/// is the cap there.
#[cfg(not(unix))]
fn fd_limit() -> Option<u64> {
    None
}

/// How long a new connection has to send its first request before, at a cap, it is
/// evicted ahead of the idle served ones. A fresh client (a probe) has sent no
/// request for the milliseconds between its accept and its request: without this,
/// under churn (clients that reconnect as soon as they are evicted) it is the oldest
/// unserved connection and the next newcomer takes its place before it is served.
/// Silent connections older than this still go first.
pub const UNSERVED_GRACE: Duration = Duration::from_secs(1);

/// The open connections: which have not sent a request yet (evicted first once
/// [`UNSERVED_GRACE`] old), how many each client address holds, and a signal for
/// when the last one closes.
#[derive(Debug)]
pub(crate) struct Conns {
    cap: usize,
    per_client: usize,
    /// [`UNSERVED_GRACE`], in ns (the unit tests set their own).
    grace_ns: u64,
    inner: Mutex<ConnsInner>,
    empty: Notify,
    /// What [`SlotState::last_active`] counts from.
    epoch: std::time::Instant,
    pub(crate) evicted: AtomicU64,
    pub(crate) refused: AtomicU64,
}

#[derive(Debug, Default)]
struct ConnsInner {
    next: u64,
    live: HashMap<u64, Arc<SlotState>>,
    /// Connections without a complete request yet, oldest first.
    waiting: BTreeSet<u64>,
    /// Open connections per client address.
    clients: HashMap<IpAddr, usize>,
}

impl ConnsInner {
    /// The connection to close to make room (of `ip`'s only, when given), at `now`
    /// (ns since [`Conns::epoch`]): the oldest that has sent no request within
    /// `grace_ns` of its accept; else the served one with no request in flight whose
    /// last request started longest ago; else the oldest that has sent no request
    /// yet, however new.
    fn victim(&self, ip: Option<IpAddr>, now: u64, grace_ns: u64) -> Option<u64> {
        let mine = |s: &SlotState| ip.is_none_or(|ip| s.ip == ip);
        let unserved = self.waiting.iter().filter_map(|id| self.live.get(id)).find(|s| mine(s));
        if let Some(s) = unserved
            && now.saturating_sub(s.admitted) >= grace_ns
        {
            return Some(s.id);
        }
        self.live
            .values()
            .filter(|s| mine(s) && s.served.load(Ordering::Acquire) && s.in_flight.load(Ordering::Acquire) == 0)
            .min_by_key(|s| s.last_active.load(Ordering::Relaxed))
            .or(unserved)
            .map(|s| s.id)
    }

    /// Forgets connection `id`; whether it was open.
    fn remove(&mut self, id: u64) -> Option<Arc<SlotState>> {
        self.waiting.remove(&id);
        let state = self.live.remove(&id)?;
        if let Some(n) = self.clients.get_mut(&state.ip) {
            *n -= 1;
            if *n == 0 {
                self.clients.remove(&state.ip);
            }
        }
        Some(state)
    }
}

#[derive(Debug)]
pub(crate) struct SlotState {
    id: u64,
    ip: IpAddr,
    /// When it was accepted, in ns since [`Conns::epoch`].
    admitted: u64,
    served: AtomicBool,
    evict: Notify,
    /// Requests whose response is not handed over yet (streamed bodies: not
    /// finished); a connection with none may be evicted.
    in_flight: AtomicU32,
    /// When the connection's last request started, in ns since [`Conns::epoch`].
    last_active: AtomicU64,
    /// Counts requests started and body frames moved, for the idle timeout.
    progress: AtomicU64,
}

impl SlotState {
    /// Something moved on the connection: a request, a body frame.
    pub(crate) fn moved(&self) {
        self.progress.fetch_add(1, Ordering::Relaxed);
    }
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
struct Slot {
    conns: Arc<Conns>,
    state: Arc<SlotState>,
}

impl Conns {
    pub(crate) fn new(cap: usize, per_client: usize) -> Arc<Conns> {
        Conns::with_grace(cap, per_client, UNSERVED_GRACE)
    }

    fn with_grace(cap: usize, per_client: usize, grace: Duration) -> Arc<Conns> {
        Arc::new(Conns {
            cap,
            per_client: per_client.min(cap).max(1),
            grace_ns: u64::try_from(grace.as_nanos()).unwrap_or(u64::MAX),
            inner: Mutex::new(ConnsInner::default()),
            empty: Notify::new(),
            epoch: std::time::Instant::now(),
            evicted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, ConnsInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Open connections now.
    pub(crate) fn open(&self) -> usize {
        self.lock().live.len()
    }

    /// A place for a new connection from `ip`: free, or taken from the connection
    /// [`ConnsInner::victim`] names (`ip`'s own at its per-client limit); `None`
    /// when every candidate has a request in flight.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Slot> {
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let mut inner = self.lock();
        let full = if inner.clients.get(&ip).copied().unwrap_or(0) >= self.per_client {
            Some(Some(ip))
        } else if inner.live.len() >= self.cap {
            Some(None)
        } else {
            None
        };
        if let Some(of) = full {
            let victim = inner.victim(of, now, self.grace_ns).and_then(|id| inner.remove(id));
            match victim {
                Some(victim) => {
                    victim.evict.notify_one();
                    self.evicted.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    self.refused.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
            }
        }
        let id = inner.next;
        inner.next += 1;
        let state = Arc::new(SlotState {
            id,
            ip,
            admitted: now,
            served: AtomicBool::new(false),
            evict: Notify::new(),
            in_flight: AtomicU32::new(0),
            last_active: AtomicU64::new(0),
            progress: AtomicU64::new(0),
        });
        inner.live.insert(id, state.clone());
        inner.waiting.insert(id);
        *inner.clients.entry(ip).or_insert(0) += 1;
        Some(Slot {
            conns: self.clone(),
            state,
        })
    }

    async fn wait_empty(&self) {
        loop {
            let notified = self.empty.notified();
            if self.open() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Slot {
    /// The connection sent a complete request: it is no longer evicted before the
    /// served ones, and has a request in flight until [`Active`] is dropped.
    fn request(&self, started: std::time::Instant) -> Active {
        let s = &self.state;
        if !s.served.swap(true, Ordering::AcqRel) {
            self.conns.lock().waiting.remove(&s.id);
        }
        s.in_flight.fetch_add(1, Ordering::AcqRel);
        let since = started.saturating_duration_since(self.conns.epoch).as_nanos();
        s.last_active
            .store(u64::try_from(since).unwrap_or(u64::MAX), Ordering::Relaxed);
        s.moved();
        Active(self.state.clone())
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.conns.lock();
        if inner.remove(self.state.id).is_some() && inner.live.is_empty() {
            self.conns.empty.notify_waiters();
        }
    }
}

/// A request in flight on its connection (see [`Slot::request`]), until dropped.
#[derive(Debug)]
pub(crate) struct Active(Arc<SlotState>);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The tracked responses of one connection ([`Flow`]), for the stream-idle rule
/// ([`Limits::stream_idle_timeout`]); the connection's response budget and the
/// server's ([`Streams::reserve`]).
#[derive(Debug)]
pub(crate) struct Streams {
    inner: Mutex<(u64, HashMap<u64, Watched>)>,
    budget: Arc<tokio::sync::Semaphore>,
    total: Arc<tokio::sync::Semaphore>,
    slot: Arc<SlotState>,
}

/// What the watchdog knows of one [`Flow`]: its counts, how many bytes the client
/// had taken when it last made progress, and since when it has waited (`None`: it
/// holds no bytes, or has just moved).
#[derive(Debug)]
struct Watched {
    sent: Arc<Sent>,
    taken: usize,
    since: Option<std::time::Instant>,
}

/// Bytes of one response handed to hyper, and bytes of them written to the socket
/// (or dropped with their stream): the difference is what HTTP/2 holds.
#[derive(Debug, Default)]
struct Sent {
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
    total: tokio::sync::OwnedSemaphorePermit,
}

impl Reserved {
    /// One reservation of both.
    fn merge(&mut self, other: Reserved) {
        self.conn.merge(other.conn);
        self.total.merge(other.total);
    }
}

impl Streams {
    fn new(budget: usize, total: Arc<tokio::sync::Semaphore>, slot: Arc<SlotState>) -> Streams {
        Streams {
            inner: Mutex::default(),
            budget: Arc::new(tokio::sync::Semaphore::new(budget)),
            total,
            slot,
        }
    }

    fn lock(&self) -> MutexGuard<'_, (u64, HashMap<u64, Watched>)> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for `bytes` of response, from this connection's budget and then the
    /// server's, waiting for it (first come, first served) if need be. Each budget
    /// is at least the largest reservation ([`crate::Config::validate`]), so the
    /// wait ends once earlier responses are written to their sockets or their
    /// connections close (the stream-idle and idle timeouts). `None`: never (the
    /// budgets are never closed).
    async fn reserve(&self, bytes: usize) -> Option<Reserved> {
        let n = u32::try_from(bytes).unwrap_or(u32::MAX);
        let conn = self.budget.clone().acquire_many_owned(n).await.ok()?;
        let total = self.total.clone().acquire_many_owned(n).await.ok()?;
        Some(Reserved { conn, total })
    }

    /// Something moved on the connection (a body frame), for the idle timeout.
    fn moved(&self) {
        self.slot.moved();
    }

    /// A new tracked response on this connection.
    fn open(self: &Arc<Self>) -> Arc<Flow> {
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
            id,
            sent,
            made: Mutex::new(None),
        })
    }

    /// How long the response that has waited longest for its client to take its
    /// bytes has waited (zero: none waits), as seen now: a response waits while
    /// HTTP/2 holds bytes of it and its client takes fewer than [`MIN_TAKEN`] of them.
    /// Called on each watchdog tick, which is when a wait is first seen: a tick late
    /// at most.
    fn longest_wait(&self) -> Duration {
        let now = std::time::Instant::now();
        let mut longest = Duration::ZERO;
        for w in self.lock().1.values_mut() {
            let gone = w.sent.gone.load(Ordering::Acquire);
            let held = w.sent.handed.load(Ordering::Acquire).saturating_sub(gone);
            if held == 0 {
                (w.taken, w.since) = (gone, None);
            } else if gone.wrapping_sub(w.taken) >= MIN_TAKEN || w.since.is_none() {
                (w.taken, w.since) = (gone, Some(now));
            } else if let Some(t) = w.since {
                longest = longest.max(now.saturating_duration_since(t));
            }
        }
        longest
    }
}

/// One tracked response (a gRPC call, a `/v1/ids`) from its request to the
/// last of its bytes written to the socket: shared by its handler (the request's
/// extension), its body ([`Tracked`]) and its bytes in HTTP/2 ([`Piece`]).
/// The handler reserves room for what it makes ([`Flow::reserve`]) and hands the
/// reservation over once it is made ([`Flow::made`]); the next data frame of the
/// body carries it until HTTP/2 has written that frame, and a reservation not
/// carried is given back with the last of the flow.
#[derive(Debug)]
pub(crate) struct Flow {
    streams: Arc<Streams>,
    id: u64,
    sent: Arc<Sent>,
    made: Mutex<Option<Reserved>>,
}

impl Flow {
    /// Room for `bytes` of response ([`Streams::reserve`]).
    pub(crate) async fn reserve(&self, bytes: usize) -> Option<Reserved> {
        self.streams.reserve(bytes).await
    }

    /// The bytes `r` is for are made: the next data frame carries `r`.
    pub(crate) fn made(&self, r: Reserved) {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        match made.as_mut() {
            Some(m) => m.merge(r),
            None => *made = Some(r),
        }
    }

    fn take_made(&self) -> Option<Reserved> {
        self.made.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Drop for Flow {
    fn drop(&mut self) {
        self.streams.lock().1.remove(&self.id);
    }
}

/// What one piece of a tracked response's data holds until HTTP/2 drops it
/// (written to the socket, or its stream gone): its bytes, counted as gone then,
/// and the reservation of the bytes it belongs to, shared with the other pieces of
/// its frame. hyper polls a body for its next frame as soon as it has handed the
/// last one to HTTP/2, whatever the client's window: what is not written yet is
/// only in these. A piece is [`MIN_TAKEN`] bytes at most, so a client that reads
/// slowly but steadily shows progress ([`Streams::longest_wait`]).
#[derive(Debug)]
struct Piece {
    bytes: hyper::body::Bytes,
    flow: Arc<Flow>,
    _reserved: Option<Arc<Reserved>>,
}

impl AsRef<[u8]> for Piece {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Piece {
    fn drop(&mut self) {
        self.flow.sent.gone.fetch_add(self.bytes.len(), Ordering::AcqRel);
    }
}

/// A gRPC request's body as tonic reads it: each frame's bytes count against the
/// server's request budget ([`Limits::request_memory`]) until the body is dropped
/// (tonic drops it once the message is decoded), and the whole body must arrive
/// by its deadline ([`Limits::body_timeout`]). A body over the budget or late ends
/// in a [`tonic::Status`], which tonic answers as is.
pub(crate) struct RequestBody {
    inner: Incoming,
    deadline: Pin<Box<tokio::time::Sleep>>,
    budget: Arc<Budget>,
    held: usize,
    slot: Arc<SlotState>,
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestBody")
            .field("held", &self.held)
            .finish_non_exhaustive()
    }
}

/// The server's request budget: bytes held by [`RequestBody`]s now, and at most.
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

    fn take(&self, n: usize) -> bool {
        let before = self.held.fetch_add(n, Ordering::AcqRel);
        if before.saturating_add(n) > self.cap {
            self.held.fetch_sub(n, Ordering::AcqRel);
            self.refused.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.held, Ordering::AcqRel);
    }
}

impl hyper::body::Body for RequestBody {
    type Data = hyper::body::Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if !this.budget.take(data.len()) {
                        let s = tonic::Status::resource_exhausted(
                            "the server's request memory (--request-memory) is in use: retry later",
                        );
                        return Poll::Ready(Some(Err(Box::new(s))));
                    }
                    this.held += data.len();
                    this.slot.moved();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(other) => Poll::Ready(other.map(|r| r.map_err(Into::into))),
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    let s =
                        tonic::Status::deadline_exceeded("the request body did not arrive in time (--body-timeout-ms)");
                    return Poll::Ready(Some(Err(Box::new(s))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// A gRPC or streamed response's body as hyper sends it:
/// - each data frame is handed over in pieces of [`MIN_TAKEN`] bytes at most, each
///   holding the frame's reservation until HTTP/2 has written it ([`Piece`]); the
///   stream-idle rule watches the bytes HTTP/2 holds ([`Flow`]);
/// - a gRPC call is counted in `flakeid_grpc_calls_total` with the status it ends
///   with (in the head, or in the trailers; a body dropped before either:
///   `CANCELLED`);
/// - the request stays in flight on its connection ([`Active`]) until it ends.
pub(crate) struct Tracked {
    inner: Body,
    flow: Arc<Flow>,
    /// What is left of the data frame being handed over, and its reservation.
    rest: Option<(hyper::body::Bytes, Option<Arc<Reserved>>)>,
    /// The method and the service to count the call in, until counted.
    rpc: Option<(&'static str, Arc<crate::Service>)>,
    _active: Option<Active>,
}

impl std::fmt::Debug for Tracked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracked")
            .field("flow", &self.flow)
            .finish_non_exhaustive()
    }
}

impl Tracked {
    fn count(&mut self, code: u16) {
        if let Some((rpc, svc)) = self.rpc.take() {
            svc.metrics.count_rpc(rpc, code);
        }
    }

    /// The next piece of the frame being handed over.
    fn piece(&mut self) -> Option<hyper::body::Bytes> {
        let (rest, reserved) = self.rest.as_mut()?;
        let bytes = rest.split_to(rest.len().min(MIN_TAKEN));
        let piece = Piece {
            bytes,
            flow: self.flow.clone(),
            _reserved: reserved.clone(),
        };
        if rest.is_empty() {
            self.rest = None;
        }
        Some(hyper::body::Bytes::from_owner(piece))
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.count(tonic::Code::Cancelled as u16);
    }
}

impl hyper::body::Body for Tracked {
    type Data = hyper::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if let Some(piece) = this.piece() {
            return Poll::Ready(Some(Ok(hyper::body::Frame::data(piece))));
        }
        let r = std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match &r {
            Some(Ok(frame)) if frame.is_data() => {
                if let Some(bytes) = frame.data_ref().filter(|b| !b.is_empty()) {
                    this.flow.sent.handed.fetch_add(bytes.len(), Ordering::AcqRel);
                    this.flow.streams.moved();
                    this.rest = Some((bytes.clone(), this.flow.take_made().map(Arc::new)));
                    let piece = this.piece().map(hyper::body::Frame::data);
                    return Poll::Ready(piece.map(Ok));
                }
            }
            Some(Ok(frame)) => {
                let code = frame.trailers_ref().and_then(grpc_status).unwrap_or(0);
                this.count(code);
            }
            Some(Err(_)) => this.count(tonic::Code::Internal as u16),
            None => this.count(0),
        }
        Poll::Ready(r)
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        let h = self.inner.size_hint();
        let n = self.rest.as_ref().map_or(0, |(b, _)| b.len() as u64);
        let mut out = hyper::body::SizeHint::new();
        if let Some(upper) = h.upper() {
            out.set_upper(upper + n);
        }
        out.set_lower(h.lower() + n);
        out
    }
}

/// The `grpc-status` of a response's head (a trailers-only answer) or trailers.
fn grpc_status(headers: &axum::http::HeaderMap) -> Option<u16> {
    headers.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// Whether `path` is a gRPC method's (served over HTTP/2 only).
pub(crate) fn is_grpc(path: &str) -> bool {
    path.starts_with("/flakeid.v1.") || path.starts_with("/grpc.")
}

/// The router as a hyper service that marks its connection as served.
#[derive(Debug, Clone)]
struct ConnService {
    app: Router,
    slot: Arc<Slot>,
    /// Bearer tokens are configured: check them (security.rs).
    auth: Option<Arc<crate::security::Security>>,
    /// Where each answered request is counted and timed (metrics.rs). One per
    /// connection: cloning it for each request touches no count shared with other
    /// connections.
    peer: Arc<Peer>,
    /// The connection's tracked responses and response budget (each gRPC or
    /// streamed request gets its [`Flow`] in its extensions).
    streams: Arc<Streams>,
    /// The server's request budget and the body deadline of gRPC requests.
    requests: Arc<Budget>,
    body_timeout: Duration,
    /// The probe listener's: every request goes to its router.
    probes: bool,
}

/// The service and the client of one connection, for the metrics.
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    pub svc: Arc<crate::Service>,
    pub addr: std::net::SocketAddr,
    /// A connection of the probe listener.
    pub probes: bool,
}

/// The longest request target served (a longer one: 414, as JSON).
pub const MAX_URI: usize = 8 * 1024;
/// The most header bytes (names, values, 4 per line) served (more: 431, as JSON).
/// HTTP/1.1 heads beyond 64 KiB are refused by hyper itself with a bodiless 431.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// What the connection's service answers: the router's future, or an error made
/// before routing.
#[allow(missing_debug_implementations)] // axum's RouteFuture has no Debug
enum Answer {
    Route(axum::routing::future::RouteFuture<Infallible>),
    Ready(Option<axum::response::Response>),
}

/// An answer being made, timed from the request's head to the response's head,
/// and counted when it is ready.
#[allow(missing_debug_implementations)]
pub(crate) struct ConnFuture {
    answer: Answer,
    started: std::time::Instant,
    route: crate::metrics::Route,
    method: crate::metrics::MethodLabel,
    peer: Arc<Peer>,
    /// What the access log says of the request, when it is on.
    entry: Option<Box<crate::access::Entry>>,
    /// The request in flight on its connection, until its response is handed over.
    active: Option<Active>,
    /// A gRPC or streamed route: its response body is [`Tracked`].
    tracked: Option<Arc<Flow>>,
}

impl std::future::Future for ConnFuture {
    type Output = Result<axum::response::Response, Infallible>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let r = match &mut this.answer {
            Answer::Route(f) => std::task::ready!(Pin::new(f).poll(cx)),
            Answer::Ready(r) => Ok(r.take().unwrap_or_default()),
        };
        let Ok(mut resp) = r;
        let took = this.started.elapsed().as_secs_f64();
        let status = resp.status().as_u16();
        this.peer.svc.metrics.observe(this.route, this.method, status, took);
        if let (Some(log), Some(e)) = (&this.peer.svc.access, &this.entry) {
            log.log(e, this.peer.addr, status, took, this.route.name());
            if let Ok(v) = axum::http::HeaderValue::from_str(&e.request_id) {
                resp.headers_mut().insert("x-request-id", v);
            }
        }
        if let Some(flow) = this.tracked.take() {
            resp = track(resp, flow, this.route, &this.peer.svc, this.active.take());
        }
        Poll::Ready(Ok(resp))
    }
}

/// The message tonic-prost gives a request that is not valid protobuf, as
/// `INTERNAL` (percent-encoded in `grpc-message`); the API answers it
/// `INVALID_ARGUMENT`, as for any bad argument.
const DECODE_ERROR: &str = "failed%20to%20decode%20Protobuf%20message";

/// `resp` with its body [`Tracked`]: a gRPC call answered in its head
/// (trailers-only: every refusal) is counted now.
fn track(
    mut resp: axum::response::Response,
    flow: Arc<Flow>,
    route: crate::metrics::Route,
    svc: &Arc<crate::Service>,
    active: Option<Active>,
) -> axum::response::Response {
    let mut rpc = route.rpc().map(|name| (name, svc.clone()));
    if let Some(code) = grpc_status(resp.headers()) {
        let code = if code == tonic::Code::Internal as u16
            && resp
                .headers()
                .get("grpc-message")
                .is_some_and(|m| m.as_bytes().starts_with(DECODE_ERROR.as_bytes()))
        {
            let h = resp.headers_mut();
            h.insert(
                "grpc-status",
                axum::http::HeaderValue::from(tonic::Code::InvalidArgument as u16),
            );
            tonic::Code::InvalidArgument as u16
        } else {
            code
        };
        if let Some((name, svc)) = rpc.take() {
            svc.metrics.count_rpc(name, code);
        }
    }
    resp.map(|inner| {
        Body::new(Tracked {
            inner,
            flow,
            rest: None,
            rpc,
            _active: active,
        })
    })
}

/// The JSON 414 or 431 for a request over the limits, or `None`.
fn oversized(req: &Request<Incoming>) -> Option<axum::response::Response> {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let uri = req.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if uri > MAX_URI {
        let e = crate::ApiError::plain(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            "path",
            format!("the request target is {uri} bytes; at most {MAX_URI} are served"),
        );
        return Some(e.into_response());
    }
    let headers: usize = req.headers().iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum();
    if headers > MAX_HEADER_BYTES {
        let e = crate::ApiError::plain(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            "headers",
            format!("the request headers are {headers} bytes; at most {MAX_HEADER_BYTES} are served"),
        );
        return Some(e.into_response());
    }
    None
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = ConnFuture;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let started = std::time::Instant::now();
        let active = self.slot.request(started);
        let route = crate::metrics::Route::of(req.uri().path());
        let grpc = is_grpc(req.uri().path());
        let mut tracked = route.is_streamed() || grpc;
        let mut tracked_flow = None;
        let method = crate::metrics::MethodLabel::of(req.method());
        let entry = self.peer.svc.access.as_ref().map(|log| {
            Box::new(crate::access::Entry {
                request_id: log.request_id(req.headers().get("x-request-id")),
                method: req.method().as_str().to_owned(),
                path: req.uri().path().to_owned(),
                query: req.uri().query().map(str::to_owned),
                version: match req.version() {
                    axum::http::Version::HTTP_09 => "HTTP/0.9",
                    axum::http::Version::HTTP_10 => "HTTP/1.0",
                    axum::http::Version::HTTP_11 => "HTTP/1.1",
                    axum::http::Version::HTTP_2 => "HTTP/2",
                    _ => "other",
                },
            })
        });
        let answer = if let Some(r) = oversized(&req) {
            Answer::Ready(Some(r))
        } else if grpc && req.version() != axum::http::Version::HTTP_2 {
            // gRPC is HTTP/2 only: an HTTP/1.1 body to a gRPC path is never read.
            // Not a gRPC call: counted as an HTTP request only.
            tracked = false;
            Answer::Ready(Some(http2_required()))
        } else if let Some(auth) = &self.auth
            && let Some(r) = auth.refuse(req.uri().path(), req.headers())
        {
            Answer::Ready(Some(r))
        } else if route == crate::metrics::Route::ID
            && !self.probes
            && (req.method() == axum::http::Method::GET || req.method() == axum::http::Method::HEAD)
        {
            // The hot route, answered here: the router would only match the path,
            // insert its (empty) parameters, box the body and add content-length.
            let head = req.method() == axum::http::Method::HEAD;
            let r = crate::one_id_answer(&self.peer.svc, req.method(), req.uri(), req.headers());
            Answer::Ready(Some(as_routed(r, head)))
        } else {
            let mut app = self.app.clone();
            let mut req = if grpc {
                req.map(|inner| {
                    Body::new(RequestBody {
                        inner,
                        deadline: Box::pin(tokio::time::sleep(self.body_timeout)),
                        budget: self.requests.clone(),
                        held: 0,
                        slot: self.slot.state.clone(),
                    })
                })
            } else {
                req.map(Body::new)
            };
            // Only the routes that stream a response or reserve room for one read
            // it: the others skip the allocation of an extension map.
            if tracked {
                let flow = self.streams.open();
                req.extensions_mut().insert(flow.clone());
                tracked_flow = Some(flow);
            }
            Answer::Route(tower_service::Service::call(&mut app, req))
        };
        if tracked && tracked_flow.is_none() {
            tracked_flow = Some(self.streams.open());
        }
        ConnFuture {
            answer,
            started,
            route,
            method,
            peer: self.peer.clone(),
            entry,
            active: Some(active),
            tracked: tracked_flow,
        }
    }
}

/// The answer to gRPC over HTTP/1.x: 505, and the connection closed after it, so
/// that hyper reads none of the body.
fn http2_required() -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut r = crate::ApiError::plain(
        axum::http::StatusCode::HTTP_VERSION_NOT_SUPPORTED,
        "http2_required",
        "version",
        "gRPC is served over HTTP/2 only (h2c or TLS with ALPN h2)".into(),
    )
    .into_response();
    r.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    r
}

/// What the router does to its routes' responses (axum's `RouteFuture`):
/// `content-length` when the body's length is known, and for HEAD no body (but
/// the length of the one GET would get).
fn as_routed(mut r: axum::response::Response, head: bool) -> axum::response::Response {
    use axum::body::HttpBody as _;
    if !r.headers().contains_key(axum::http::header::CONTENT_LENGTH)
        && let Some(n) = r.body().size_hint().exact()
    {
        let v = axum::http::HeaderValue::from(n);
        r.headers_mut().insert(axum::http::header::CONTENT_LENGTH, v);
    }
    if head {
        *r.body_mut() = Body::empty();
    }
    r
}

/// The HTTP/1.1 + HTTP/2 connection settings from `limits`.
pub(crate) fn builder(limits: &Limits) -> auto::Builder<TokioExecutor> {
    let mut b = auto::Builder::new(TokioExecutor::new());
    b.http1()
        .timer(WatchdogTimer)
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(64 * 1024);
    b.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_streams)
        .initial_stream_window_size(limits.stream_window)
        .initial_connection_window_size(limits.connection_window)
        .max_send_buf_size(SEND_BUFFER)
        .max_header_list_size(64 * 1024);
    b
}

/// Accepts connections until `shutdown` completes, then asks every connection to
/// finish (HTTP/2 GOAWAY, HTTP/1.1 close after the response in flight) and waits
/// up to `drain` for them. Returns whether every connection finished in time.
/// `probes`: the probe listener's loop (its router alone answers).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    svc: Arc<crate::Service>,
    security: Arc<crate::security::Security>,
    conns: Arc<Conns>,
    shutdown: impl std::future::Future<Output = ()>,
    drain: Duration,
    probes: bool,
) -> bool {
    let limits = svc.config.limits.clone();
    let builder = Arc::new(builder(&limits));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut last_accept_warning: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let (tcp, addr) = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok((tcp, addr)) => (tcp, addr),
                Err(e) => {
                    // Out of descriptors (or another transient error): keep serving
                    // the open connections and retry shortly; warn at most once a second.
                    if last_accept_warning.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                        tracing::warn!(open = conns.open(), "accept failed: {e}");
                        last_accept_warning = Some(Instant::now());
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
            }
        };
        let Some(slot) = conns.admit(addr.ip()) else {
            drop(tcp);
            continue;
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(serve_conn(
            builder.clone(),
            app.clone(),
            Peer {
                svc: svc.clone(),
                addr,
                probes,
            },
            security.clone(),
            tcp,
            slot,
            limits.clone(),
            stop_rx.clone(),
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    tokio::time::timeout(drain, conns.wait_empty()).await.is_ok()
}

#[allow(clippy::too_many_arguments)]
async fn serve_conn(
    builder: Arc<auto::Builder<TokioExecutor>>,
    app: Router,
    peer: Peer,
    security: Arc<crate::security::Security>,
    tcp: TcpStream,
    slot: Slot,
    limits: Limits,
    stop: watch::Receiver<bool>,
) {
    let auth = security.has_tokens().then(|| security.clone());
    let Some(tls) = security.tls() else {
        return drive(builder, app, peer, auth, TokioIo::new(tcp), slot, limits, stop).await;
    };
    // The handshake counts against the header-read timeout; eviction ends it too.
    let started = tokio::time::Instant::now();
    let state = slot.state.clone();
    let handshake = tokio_rustls::TlsAcceptor::from(tls).accept(tcp);
    let io = tokio::select! {
        r = tokio::time::timeout_at(started + limits.header_read_timeout, handshake) => match r {
            Ok(Ok(io)) => io,
            Ok(Err(e)) => {
                tracing::debug!("TLS handshake failed: {e}");
                return;
            }
            Err(_) => return,
        },
        () = state.evict.notified() => return,
    };
    drive(builder, app, peer, auth, TokioIo::new(io), slot, limits, stop).await;
}

#[allow(clippy::too_many_arguments)]
async fn drive<I>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    app: Router,
    peer: Peer,
    auth: Option<Arc<crate::security::Security>>,
    io: TokioIo<I>,
    slot: Slot,
    limits: Limits,
    stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let slot = Arc::new(slot);
    let state = slot.state.clone();
    let budgets = &peer.svc.budgets;
    let streams = Arc::new(Streams::new(
        budgets.connection_response,
        peer.svc.responses.clone(),
        state.clone(),
    ));
    let addr = peer.addr;
    let service = ConnService {
        app,
        slot,
        auth,
        requests: peer.svc.requests.clone(),
        body_timeout: limits.body_timeout,
        probes: peer.probes,
        peer: Arc::new(peer),
        streams: streams.clone(),
    };
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    // The limits are watched by a task of their own, which tells this one what to
    // do through `ctl`: a wake-up of this task (every request) then polls the
    // connection and reads one atomic, not a timer, a notification and a channel.
    let ctl = Arc::new(Ctl::default());
    let watchdog = Watchdog {
        ctl: ctl.clone(),
        state,
        streams,
        limits,
        stop,
        addr,
    };
    let _watchdog = AbortOnDrop(tokio::spawn(watchdog.run()));
    let mut shut_down = false;
    std::future::poll_fn(|cx| {
        if conn.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        ctl.waker.register(cx.waker());
        let cmd = ctl.cmd.load(Ordering::Acquire);
        if cmd & Ctl::CLOSE != 0 {
            return Poll::Ready(());
        }
        if cmd & Ctl::SHUT_DOWN != 0 && !shut_down {
            shut_down = true;
            conn.as_mut().graceful_shutdown();
            // GOAWAY, or a close when no request is in flight: poll again.
            return match conn.as_mut().poll(cx) {
                Poll::Ready(_) => Poll::Ready(()),
                Poll::Pending => Poll::Pending,
            };
        }
        Poll::Pending
    })
    .await;
}

/// What a connection's watchdog asks of its connection's task.
#[derive(Debug, Default)]
struct Ctl {
    /// [`Ctl::SHUT_DOWN`] and [`Ctl::CLOSE`], set by the watchdog, never cleared.
    cmd: std::sync::atomic::AtomicU8,
    /// The connection's task, woken when `cmd` changes and on every watchdog tick
    /// (which polls hyper's header-read deadline, [`WatchdogTimer`]).
    waker: atomic_waker::AtomicWaker,
}

impl Ctl {
    /// Finish the requests in flight, then close (HTTP/2 GOAWAY).
    const SHUT_DOWN: u8 = 1;
    /// Close now.
    const CLOSE: u8 = 2;

    fn send(&self, cmd: u8) {
        self.cmd.fetch_or(cmd, Ordering::AcqRel);
        self.waker.wake();
    }
}

/// Aborts a task when dropped: a connection's watchdog ends with its connection.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The limits of one connection that no request enforces: the header-read timeout
/// (an HTTP/2 connection, or one whose protocol is not known yet, that sends no
/// request), eviction, the server's shutdown, stalled streams and idleness.
#[derive(Debug)]
struct Watchdog {
    ctl: Arc<Ctl>,
    state: Arc<SlotState>,
    streams: Arc<Streams>,
    limits: Limits,
    stop: watch::Receiver<bool>,
    addr: std::net::SocketAddr,
}

impl Watchdog {
    async fn run(mut self) {
        let limits = &self.limits;
        let started = Instant::now();
        let tick = watchdog_tick(limits);
        // Set when a stalled stream made us close the connection (GOAWAY).
        let mut stalled: Option<Instant> = None;
        let mut last_progress = (0u64, started);
        let mut closing: Option<Instant> = None;
        let mut stopping = *self.stop.borrow();
        if stopping {
            self.ctl.send(Ctl::SHUT_DOWN);
        }
        let mut next = started + tick;
        loop {
            tokio::select! {
                () = self.state.evict.notified() => return self.ctl.send(Ctl::CLOSE),
                r = self.stop.changed(), if !stopping => {
                    stopping = true;
                    if r.is_ok() {
                        self.ctl.send(Ctl::SHUT_DOWN);
                    }
                }
                () = tokio::time::sleep_until(next) => {
                    next += tick;
                    let now = Instant::now();
                    // hyper's HTTP/1.1 header-read deadline is polled on this wake-up.
                    self.ctl.waker.wake();
                    if !self.state.served.load(Ordering::Acquire)
                        && now.duration_since(started) >= limits.header_read_timeout
                    {
                        // No complete request in time: a slow or silent client.
                        return self.ctl.send(Ctl::CLOSE);
                    }
                    match stalled {
                        None => {
                            let waited = self.streams.longest_wait();
                            if waited >= limits.stream_idle_timeout {
                                tracing::info!(
                                    peer = %self.addr,
                                    "a streamed response's client made no room for {waited:?}: closing its connection"
                                );
                                self.ctl.send(Ctl::SHUT_DOWN);
                                stalled = Some(now);
                            }
                        }
                        // A second after GOAWAY: the stalled stream never lets it finish.
                        Some(t) if now.duration_since(t) >= Duration::from_secs(1) => {
                            return self.ctl.send(Ctl::CLOSE);
                        }
                        Some(_) => {}
                    }
                    let p = self.state.progress.load(Ordering::Relaxed);
                    if p != last_progress.0 {
                        last_progress = (p, now);
                        closing = None;
                    } else if now.duration_since(last_progress.1) >= limits.idle_timeout {
                        match closing {
                            None => {
                                self.ctl.send(Ctl::SHUT_DOWN);
                                closing = Some(now);
                            }
                            // Still not done a second after GOAWAY: a peer that reads
                            // nothing never lets it finish.
                            Some(t) if now.duration_since(t) >= Duration::from_secs(1) => {
                                return self.ctl.send(Ctl::CLOSE);
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
        }
    }
}

/// How often a connection's watchdog looks: a quarter of the shortest timeout,
/// at least every 50 ms.
fn watchdog_tick(limits: &Limits) -> Duration {
    (limits
        .header_read_timeout
        .min(limits.idle_timeout)
        .min(limits.stream_idle_timeout)
        / 4)
    .max(Duration::from_millis(50))
}

/// hyper's timer for HTTP/1.1's header-read timeout, which hyper sets anew for
/// every request: a deadline compared with the clock when hyper polls it, with no
/// timer-wheel entry to register and remove. What wakes the connection's task to
/// poll it is its watchdog's tick ([`watchdog_tick`]), so the timeout fires at most
/// a tick late.
#[derive(Debug, Clone, Copy)]
struct WatchdogTimer;

/// A deadline of [`WatchdogTimer`].
#[derive(Debug)]
struct Deadline(std::time::Instant);

impl std::future::Future for Deadline {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if std::time::Instant::now() >= self.0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl hyper::rt::Sleep for Deadline {}

impl hyper::rt::Timer for WatchdogTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(std::time::Instant::now() + duration)
    }
    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Deadline(deadline))
    }
    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: std::time::Instant) {
        match sleep.as_mut().downcast_mut_pin::<Deadline>() {
            Some(d) => d.get_mut().0 = new_deadline,
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    fn open(conns: &Conns, slot: &Slot) -> bool {
        conns.lock().live.contains_key(&slot.state.id)
    }

    #[tokio::test]
    async fn a_frame_holds_its_reservation_until_written_and_waits_for_its_client() {
        use hyper::body::{Body as _, Buf as _};
        let conns = Conns::with_grace(1, 1, Duration::ZERO);
        let slot = conns.admit(ip(1)).unwrap();
        let all = 1 << 20;
        let total = Arc::new(tokio::sync::Semaphore::new(all));
        let streams = Arc::new(Streams::new(all, total.clone(), slot.state.clone()));
        let flow = streams.open();
        let r = flow.reserve(100_000).await.unwrap();
        flow.made(r);
        let mut body = Tracked {
            inner: Body::from(vec![7u8; 3 * MIN_TAKEN]),
            flow,
            rest: None,
            rpc: None,
            _active: None,
        };
        let mut pieces = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            pieces.push(frame.unwrap().into_data().unwrap());
        }
        assert_eq!(pieces.iter().map(|p| p.len()).collect::<Vec<_>>(), [MIN_TAKEN; 3]);
        // The body is done; HTTP/2 still holds the pieces, and they the frame's room.
        drop(body);
        assert_eq!(total.available_permits(), all - 100_000);
        assert_eq!(streams.longest_wait(), Duration::ZERO, "a wait starts when first seen");
        std::thread::sleep(Duration::from_millis(20));
        assert!(streams.longest_wait() >= Duration::from_millis(20));
        // A part of a piece written is not progress; a piece written (MIN_TAKEN) is.
        let mut first = pieces.remove(0);
        first.advance(MIN_TAKEN - 1);
        assert!(streams.longest_wait() >= Duration::from_millis(20));
        drop(first);
        assert_eq!(streams.longest_wait(), Duration::ZERO);
        assert_eq!(total.available_permits(), all - 100_000);
        // All written (or dropped with their stream): the room is given back.
        drop(pieces);
        assert_eq!(total.available_permits(), all);
        assert_eq!(streams.longest_wait(), Duration::ZERO);
        assert!(streams.lock().1.is_empty());
    }

    #[test]
    fn at_the_cap_the_unserved_go_first_then_the_idle_served_longest_ago() {
        let conns = Conns::with_grace(3, 3, Duration::ZERO);
        let t = std::time::Instant::now();
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(1)).unwrap();
        let c = conns.admit(ip(1)).unwrap();
        drop(a.request(t + Duration::from_millis(1)));
        let _in_flight = b.request(t);
        drop(c.request(t + Duration::from_millis(2)));
        // Every one served: the idle one whose last request is oldest goes.
        let d = conns.admit(ip(2)).unwrap();
        assert!(!open(&conns, &a) && open(&conns, &b) && open(&conns, &c));
        // An unserved one goes before any served one.
        let e = conns.admit(ip(2)).unwrap();
        assert!(!open(&conns, &d) && open(&conns, &c) && open(&conns, &e));
        let _e_busy = e.request(t);
        let _c_busy = c.request(t);
        // Every one has a request in flight: the new one is refused.
        assert!(conns.admit(ip(3)).is_none());
        assert_eq!(conns.evicted.load(Ordering::Relaxed), 2);
        assert_eq!(conns.refused.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn one_address_is_held_to_its_limit_by_its_own_connections() {
        let conns = Conns::with_grace(10, 2, Duration::ZERO);
        let t = std::time::Instant::now();
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(1)).unwrap();
        let other = conns.admit(ip(2)).unwrap();
        let (_a, _b) = (a.request(t), b.request(t));
        // Its two are busy: refused, though the server has room; others get in.
        assert!(conns.admit(ip(1)).is_none());
        assert!(conns.admit(ip(3)).is_some());
        drop(_a);
        // One of its own is idle: that one makes room, not another client's.
        let c = conns.admit(ip(1)).unwrap();
        assert!(!open(&conns, &a) && open(&conns, &other) && open(&conns, &c));
        assert_eq!(conns.lock().clients[&ip(1)], 2);
    }

    #[test]
    fn a_new_connection_keeps_its_place_until_its_grace_ends() {
        let conns = Conns::with_grace(2, 2, Duration::from_secs(3600));
        let t = std::time::Instant::now();
        let served = conns.admit(ip(1)).unwrap();
        drop(served.request(t));
        let probe = conns.admit(ip(2)).unwrap();
        // The probe has sent nothing yet, but is new: the idle served one goes.
        let next = conns.admit(ip(3)).unwrap();
        assert!(!open(&conns, &served) && open(&conns, &probe) && open(&conns, &next));
        // Only new unserved ones left: the oldest of them goes, not the newcomer.
        let last = conns.admit(ip(4)).unwrap();
        assert!(!open(&conns, &probe) && open(&conns, &next) && open(&conns, &last));
        // Past its grace, an unserved one goes before an idle served one.
        let conns = Conns::with_grace(2, 2, Duration::from_millis(20));
        let served = conns.admit(ip(1)).unwrap();
        drop(served.request(t));
        let silent = conns.admit(ip(2)).unwrap();
        std::thread::sleep(Duration::from_millis(40));
        let fresh = conns.admit(ip(3)).unwrap();
        assert!(open(&conns, &served) && !open(&conns, &silent) && open(&conns, &fresh));
        assert_eq!(conns.evicted.load(Ordering::Relaxed), 1);
    }
}
