//! The accept loop and the per-connection limits of `flakeid serve` (issue 21):
//! every resource one client can hold is bounded.
//!
//! - **Connections** are capped ([`Limits::max_connections`], and always below the
//!   process's file-descriptor limit minus [`FD_HEADROOM`]). When the cap is reached,
//!   a new connection evicts the oldest connection that has not sent a complete
//!   request yet (a slowloris or silent client); only when every connection has
//!   sent one is the new connection closed at once. So a fresh client — a `/healthz`
//!   probe — is served even while thousands of silent connections are open.
//! - **A request head** must arrive within [`Limits::header_read_timeout`] of the
//!   connection (HTTP/1.1: of each request), however slowly its bytes trickle in.
//! - **An idle connection** — no byte read or written for [`Limits::idle_timeout`] —
//!   is shut down gracefully (HTTP/2 GOAWAY), then closed. This also ends HTTP/2 and
//!   gRPC streams whose client stopped reading: their connection makes no progress.
//! - **HTTP/2** (and so gRPC): at most [`Limits::max_streams`] streams per
//!   connection, flow-control windows of [`Limits::stream_window`] bytes per stream
//!   and [`Limits::connection_window`] per connection, and as much queued for sending
//!   per stream; response bodies of many IDs are made lazily, one bounded chunk at a
//!   time, as the client reads ([`crate::IdChunks`]).
//!
//! The timeouts are checked by each connection's watchdog task, every quarter of
//! the shortest one (at least every 50 ms), so a timeout ends its connection at
//! most that much late; nothing of them runs per request (issue 21, "Speed").

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::collections::{BTreeSet, HashMap};
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
    /// A connection that reads and writes nothing for this long is shut down.
    /// Default 60 s.
    pub idle_timeout: Duration,
    /// Open connections at most (default 10 000); lowered to the soft
    /// `RLIMIT_NOFILE` minus [`FD_HEADROOM`] when that is less.
    pub max_connections: usize,
    /// HTTP/2 streams (requests, gRPC calls) open at once on one connection.
    /// Default 32.
    pub max_streams: u32,
    /// HTTP/2 flow-control window of one stream, in bytes, and the most the server
    /// queues for sending on one stream. Default 64 KiB.
    pub stream_window: u32,
    /// HTTP/2 flow-control window of one connection, in bytes. Default 1 MiB.
    pub connection_window: u32,
    /// A streamed response (gRPC `Stream`, a large `/v1/ids`) whose client has
    /// had no room for its next chunk this long gets its connection closed (GOAWAY,
    /// then closed 1 s later), even while other requests keep the connection
    /// busy. Default 30 s.
    pub stream_idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 10_000,
            max_streams: 32,
            stream_window: 64 * 1024,
            connection_window: 1024 * 1024,
            stream_idle_timeout: Duration::from_secs(30),
        }
    }
}

impl Limits {
    /// The connection cap in force: [`Limits::max_connections`], lowered to keep
    /// [`FD_HEADROOM`] descriptors below the soft `RLIMIT_NOFILE`.
    pub fn connection_cap(&self) -> usize {
        let by_fds = fd_limit().map_or(usize::MAX, |n| n.saturating_sub(FD_HEADROOM as u64) as usize);
        self.max_connections.min(by_fds).max(1)
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.header_read_timeout.is_zero() || self.idle_timeout.is_zero() || self.stream_idle_timeout.is_zero() {
            return Err("the header-read, idle and stream-idle timeouts must be positive".into());
        }
        if self.max_connections == 0 || self.max_streams == 0 {
            return Err("max_connections and max_streams must be at least 1".into());
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
fn fd_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a valid pointer.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur)
}

/// The open connections: which have not sent a request yet (evictable), and a
/// signal for when the last one closes.
#[derive(Debug)]
pub(crate) struct Conns {
    cap: usize,
    inner: Mutex<ConnsInner>,
    empty: Notify,
    pub(crate) evicted: AtomicU64,
    pub(crate) refused: AtomicU64,
}

#[derive(Debug, Default)]
struct ConnsInner {
    next: u64,
    live: HashMap<u64, Arc<SlotState>>,
    /// Connections without a complete request yet, oldest first.
    waiting: BTreeSet<u64>,
}

#[derive(Debug)]
struct SlotState {
    id: u64,
    served: AtomicBool,
    evict: Notify,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
struct Slot {
    conns: Arc<Conns>,
    state: Arc<SlotState>,
}

impl Conns {
    pub(crate) fn new(cap: usize) -> Arc<Conns> {
        Arc::new(Conns {
            cap,
            inner: Mutex::new(ConnsInner::default()),
            empty: Notify::new(),
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

    /// A place for a new connection: free, or taken from the oldest connection that
    /// has not sent a request; `None` when every connection has.
    fn admit(self: &Arc<Self>) -> Option<Slot> {
        let mut inner = self.lock();
        if inner.live.len() >= self.cap {
            let oldest = inner.waiting.pop_first();
            match oldest.and_then(|id| inner.live.remove(&id)) {
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
            served: AtomicBool::new(false),
            evict: Notify::new(),
        });
        inner.live.insert(id, state.clone());
        inner.waiting.insert(id);
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
    /// The connection sent a complete request: it may no longer be evicted.
    fn served(&self) {
        if !self.state.served.swap(true, Ordering::AcqRel) {
            self.conns.lock().waiting.remove(&self.state.id);
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.conns.lock();
        inner.waiting.remove(&self.state.id);
        if inner.live.remove(&self.state.id).is_some() && inner.live.is_empty() {
            self.conns.empty.notify_waiters();
        }
    }
}

/// The streamed responses of one connection, and since when each has waited for
/// its client to make room for its next chunk ([`Limits::stream_idle_timeout`]).
#[derive(Debug, Default)]
pub(crate) struct Streams {
    inner: Mutex<(u64, HashMap<u64, Option<std::time::Instant>>)>,
}

impl Streams {
    fn lock(&self) -> MutexGuard<'_, (u64, HashMap<u64, Option<std::time::Instant>>)> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new streamed response on this connection.
    pub(crate) fn open(self: &Arc<Self>) -> StreamTicket {
        let mut inner = self.lock();
        let id = inner.0;
        inner.0 += 1;
        inner.1.insert(id, None);
        StreamTicket {
            streams: self.clone(),
            id,
        }
    }

    /// How long the longest-waiting stream has waited (zero: none waits).
    fn longest_wait(&self) -> Duration {
        let now = std::time::Instant::now();
        self.lock()
            .1
            .values()
            .flatten()
            .map(|t| now.saturating_duration_since(*t))
            .max()
            .unwrap_or_default()
    }
}

/// One streamed response's place in its connection's [`Streams`].
#[derive(Debug)]
pub(crate) struct StreamTicket {
    streams: Arc<Streams>,
    id: u64,
}

impl StreamTicket {
    /// A chunk was handed over: the stream now waits for the client to want more.
    pub(crate) fn waiting(&self) {
        if let Some(w) = self.streams.lock().1.get_mut(&self.id) {
            *w = Some(std::time::Instant::now());
        }
    }

    /// The next chunk was asked for (the client had room).
    pub(crate) fn polled(&self) {
        if let Some(w) = self.streams.lock().1.get_mut(&self.id) {
            *w = None;
        }
    }
}

impl Drop for StreamTicket {
    fn drop(&mut self) {
        self.streams.lock().1.remove(&self.id);
    }
}

/// A TCP stream that counts its reads and writes that moved bytes, for the idle
/// timeout.
#[derive(Debug)]
struct Metered {
    tcp: TcpStream,
    progress: Arc<AtomicU64>,
}

impl Metered {
    /// Only this connection's task moves it: a load and a store, no locked add.
    fn moved(&self) {
        let p = self.progress.load(Ordering::Relaxed);
        self.progress.store(p.wrapping_add(1), Ordering::Relaxed);
    }
}

impl AsyncRead for Metered {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.moved();
        }
        r
    }
}

impl AsyncWrite for Metered {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.tcp).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            this.moved();
        }
        r
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.tcp).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            this.moved();
        }
        r
    }
    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
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
    /// The connection's streamed responses (passed to handlers in the request's
    /// extensions).
    streams: Arc<Streams>,
}

/// The service and the client of one connection, for the metrics.
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    pub svc: Arc<crate::Service>,
    pub addr: std::net::SocketAddr,
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
}

impl std::future::Future for ConnFuture {
    type Output = Result<axum::response::Response, Infallible>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let r = match &mut this.answer {
            Answer::Route(f) => std::task::ready!(Pin::new(f).poll(cx)),
            Answer::Ready(r) => Ok(r.take().unwrap_or_default()),
        };
        if let Ok(resp) = &r {
            let took = this.started.elapsed().as_secs_f64();
            let status = resp.status().as_u16();
            this.peer.svc.metrics.observe(this.route, this.method, status, took);
            if let (Some(log), Some(e)) = (&this.peer.svc.access, &this.entry) {
                log.log(e, this.peer.addr, status, took, this.route.name());
            }
        }
        Poll::Ready(r)
    }
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
        self.slot.served();
        let started = std::time::Instant::now();
        let route = crate::metrics::Route::of(req.uri().path());
        let streamed = route.is_streamed();
        let method = crate::metrics::MethodLabel::of(req.method());
        let entry = self.peer.svc.access.as_ref().map(|_| {
            Box::new(crate::access::Entry {
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
        } else if let Some(auth) = &self.auth
            && let Some(r) = auth.refuse(req.uri().path(), req.headers())
        {
            Answer::Ready(Some(r))
        } else if route == crate::metrics::Route::ID
            && (req.method() == axum::http::Method::GET || req.method() == axum::http::Method::HEAD)
        {
            // The hot route, answered here: the router would only match the path,
            // insert its (empty) parameters, box the body and add content-length.
            let head = req.method() == axum::http::Method::HEAD;
            let r = crate::one_id_answer(&self.peer.svc, req.method(), req.uri(), req.headers());
            Answer::Ready(Some(as_routed(r, head)))
        } else {
            let mut app = self.app.clone();
            let mut req = req.map(Body::new);
            // Only the routes that stream a response read it: the others skip the
            // allocation of an extension map.
            if streamed {
                req.extensions_mut().insert(self.streams.clone());
            }
            Answer::Route(tower_service::Service::call(&mut app, req))
        };
        ConnFuture {
            answer,
            started,
            route,
            method,
            peer: self.peer.clone(),
            entry,
        }
    }
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
        .max_send_buf_size(limits.stream_window as usize)
        .max_header_list_size(64 * 1024);
    b
}

/// Accepts connections until `shutdown` completes, then asks every connection to
/// finish (HTTP/2 GOAWAY, HTTP/1.1 close after the response in flight) and waits
/// up to `drain` for them. Returns whether every connection finished in time.
pub(crate) async fn accept_loop(
    listener: tokio::net::TcpListener,
    app: Router,
    svc: Arc<crate::Service>,
    security: Arc<crate::security::Security>,
    conns: Arc<Conns>,
    shutdown: impl std::future::Future<Output = ()>,
    drain: Duration,
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
        let Some(slot) = conns.admit() else {
            drop(tcp);
            continue;
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(serve_conn(
            builder.clone(),
            app.clone(),
            Peer { svc: svc.clone(), addr },
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
    let progress = Arc::new(AtomicU64::new(0));
    let metered = Metered {
        tcp,
        progress: progress.clone(),
    };
    let auth = security.has_tokens().then(|| security.clone());
    let Some(tls) = security.tls() else {
        return drive(
            builder,
            app,
            peer,
            auth,
            TokioIo::new(metered),
            slot,
            progress,
            limits,
            stop,
        )
        .await;
    };
    // The handshake counts against the header-read timeout; eviction ends it too.
    let started = tokio::time::Instant::now();
    let state = slot.state.clone();
    let handshake = tokio_rustls::TlsAcceptor::from(tls).accept(metered);
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
    drive(builder, app, peer, auth, TokioIo::new(io), slot, progress, limits, stop).await;
}

#[allow(clippy::too_many_arguments)]
async fn drive<I>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    app: Router,
    peer: Peer,
    auth: Option<Arc<crate::security::Security>>,
    io: TokioIo<I>,
    slot: Slot,
    progress: Arc<AtomicU64>,
    limits: Limits,
    stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let slot = Arc::new(slot);
    let state = slot.state.clone();
    let streams = Arc::new(Streams::default());
    let addr = peer.addr;
    let service = ConnService {
        app,
        slot,
        auth,
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
        progress,
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
    progress: Arc<AtomicU64>,
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
                    let p = self.progress.load(Ordering::Relaxed);
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
