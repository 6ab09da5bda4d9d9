//! The accept loop and the per-connection limits of `flakeid serve`: every
//! resource one client can hold is bounded, and the memory all clients together
//! can make the server hold is bounded by configuration (docs/service.md,
//! "Memory budget").
//!
//! - **Connections** are capped ([`crate::config::Limits::max_connections`], and on Unix always
//!   below the process's file-descriptor limit minus [`FD_HEADROOM`](crate::config::Limits::connection_cap)), and so are
//!   those of one client ([`crate::config::Limits::max_connections_per_client`]; an IPv4
//!   address or an IPv6 prefix, [`crate::budget::Grouping`]). At a cap, a new
//!   connection evicts the oldest connection that has not sent a complete request
//!   within [`UNSERVED_GRACE`] of its accept (a slowloris or silent client), else
//!   one of the client holding the most connections: of those with no request in
//!   flight, a served one idle for the grace, else a new one, else the served one
//!   whose last request started longest ago (slots.rs, `ConnsInner::victim`). So
//!   churn evicts the churner's own connections and keep-alive clients in use go
//!   last. Only when every connection has a request in flight does the new
//!   connection take a probe slot ([`PROBE_SLOTS`]: `/healthz` and `/readyz` only),
//!   or, with those full, get closed at once. So a fresh client — a `/healthz`
//!   probe — is served while every slot is held, even by clients that reconnect as
//!   soon as they are evicted. An `accept` that fails (out of descriptors) pauses
//!   the listener, longer while it fails (`AcceptBackoff`), and is counted.
//! - **A request head** must arrive within [`crate::config::Limits::header_read_timeout`] of the
//!   connection (HTTP/1.1: of each request), however slowly its bytes trickle in;
//!   **a gRPC request body** within [`crate::config::Limits::body_timeout`] of its head, and its
//!   bytes count against one budget for the whole server (bodies.rs, `RequestBody`). gRPC
//!   over HTTP/1.1 is refused before its body is read.
//! - **An idle connection** — no request started and no body frame moved for
//!   [`crate::config::Limits::idle_timeout`] — is shut down gracefully (HTTP/2 GOAWAY), then
//!   closed. PINGs and other control frames are not progress: they do not keep a
//!   connection whose requests make no progress open.
//! - **HTTP/2** (and so gRPC): at most [`crate::config::Limits::max_streams`] streams per
//!   connection, flow-control windows of [`crate::config::Limits::stream_window`] bytes per stream
//!   and [`crate::config::Limits::connection_window`] per connection.
//! - **Responses**: what a response holds until HTTP/2 has written it to the socket
//!   is reserved first, from its connection's budget, its client's share
//!   ([`crate::budget::Shares`]) and the server's budget, within [`crate::config::Limits::reserve_timeout`] (else
//!   `503`, gRPC `RESOURCE_EXHAUSTED`) ([`crate::budget::Flow::reserve`]): a gRPC `Batch` or `Unseal` answer before it is made, each
//!   chunk of a large `/v1/ids` or a gRPC `Stream` before it is made
//!   (service.rs, `IdChunks`); the data frame that holds it carries the reservation
//!   (bodies.rs, `Piece`). Every gRPC and streamed response (bodies.rs, `Tracked`) counts toward the
//!   stream-idle rule: one of whose bytes held for sending its client takes fewer
//!   than [`crate::budget::MIN_TAKEN`] in [`crate::config::Limits::stream_idle_timeout`] (a window kept shut or
//!   near zero, PINGs or not) closes its connection, unary answers included.
//!
//! The timeouts are checked by each connection's watchdog task, every quarter of
//! the shortest one (at least every 50 ms), so a timeout ends its connection at
//! most that much late; nothing of them runs per request (docs/performance.md).

mod bodies;
mod requests;
mod slots;
mod watchdog;

use requests::{ConnService, Peer};
pub(crate) use slots::Conns;
use slots::{Active, Slot, SlotState};
pub use slots::{PROBE_SLOTS, PROBE_SLOTS_PER_CLIENT};
use watchdog::{AbortOnDrop, Ctl, Watchdog, WatchdogTimer};

use crate::access::AccessLog;
use crate::budget::{Memory, Streams};
use crate::config::{Limits, SEND_BUFFER};
use crate::metrics::{Metrics, Route};
use crate::security::Security;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

/// What the transport asks of the service it carries, answered by the floors
/// below it (lib.rs implements it for the service): the transport names no route
/// and no handler; it classifies each request, counts and times its answer, and
/// hands it to the router unless [`Handler::answer`] has answered it.
pub(crate) trait Handler: Send + Sync + std::fmt::Debug + 'static {
    /// The route label of a path (metrics.rs).
    fn route(&self, path: &str) -> Route;
    /// Whether `path` is a gRPC method's (served over HTTP/2 only).
    fn is_grpc(&self, path: &str) -> bool;
    /// Whether the gRPC method at `path` takes exactly one request message.
    fn single_message(&self, path: &str) -> bool;
    /// Whether `route`'s response may stream (its handler needs its
    /// [`crate::budget::Flow`]).
    fn streamed(&self, route: Route) -> bool;
    /// Whether a probe slot ([`PROBE_SLOTS`]) answers `route`.
    fn probe(&self, route: Route) -> bool;
    /// Whether `route`'s calls may stay in flight for as long as their client
    /// likes: they count against a limit of their own (slots.rs, `LONG_CALLS_DIVISOR`).
    fn long_lived(&self, route: Route) -> bool;
    /// The answer to `req` made without the router (the hot route), or `None`.
    fn answer(&self, route: Route, req: &axum::http::Request<Incoming>) -> Option<axum::response::Response>;
    /// Where answered requests and gRPC calls are counted.
    fn metrics(&self) -> &Arc<Metrics>;
    /// The access log, when on.
    fn access(&self) -> Option<&AccessLog>;
    /// Whether the service is draining (HTTP/1.1 answers then close their connection).
    fn is_draining(&self) -> bool;
    /// The server-wide memory budgets.
    fn memory(&self) -> &Memory;
    /// The connections' limits.
    fn limits(&self) -> &Limits;
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

/// The phases of a shutdown, as the connections' watchdogs see them
/// ([`accept_loop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stop {
    Serving,
    /// Not accepting: HTTP/2 connections get a GOAWAY (their streams finish),
    /// HTTP/1.1 ones answer their next request with `Connection: close`.
    Draining,
    /// Nothing in flight, or the drain limit: every connection finishes what it has
    /// in flight and closes.
    Closing,
    /// Past the limit: the connections still open are reset (TCP RST), so that a
    /// response cut short is never taken for a whole one.
    Cut,
}

/// Accepts connections until `shutdown` completes, then drains: stops accepting,
/// lets the responses unfinished finish (streamed bodies included, to their last
/// byte written) for up to `drain`, closes the connections, and resets those still
/// open a second later, logging how many responses that cut. Returns that number.
/// `probes`: the probe listener's loop (its router alone answers).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn accept_loop<H: Handler>(
    listener: tokio::net::TcpListener,
    app: Router,
    svc: Arc<H>,
    security: Arc<Security>,
    conns: Arc<Conns>,
    shutdown: impl std::future::Future<Output = ()>,
    drain: Duration,
    probes: bool,
) -> usize {
    let limits = svc.limits().clone();
    let builder = Arc::new(builder(&limits));
    let (stop_tx, stop_rx) = watch::channel(Stop::Serving);
    let mut backoff = AcceptBackoff::default();
    tokio::pin!(shutdown);
    loop {
        let (tcp, addr) = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok((tcp, addr)) => {
                    backoff.reset();
                    (tcp, addr)
                }
                Err(e) => {
                    // Out of descriptors (or another transient error): the connection
                    // stays in the backlog and accept fails again at once, so keep
                    // serving the open connections and retry after a pause that grows
                    // while it fails; counted, and warned at most once a second.
                    conns.accept_failed.fetch_add(1, Ordering::Relaxed);
                    let pause = backoff.failed(|failures| {
                        tracing::warn!(open = conns.open(), failures, "accept failed: {e}");
                    });
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(pause) => continue,
                    }
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
    let _ = stop_tx.send(Stop::Draining);
    let started = Instant::now();
    let quiet = tokio::time::timeout(drain, conns.wait_quiet()).await.is_ok();
    let _ = stop_tx.send(Stop::Closing);
    if tokio::time::timeout(Duration::from_secs(1), conns.wait_empty())
        .await
        .is_ok()
    {
        return 0;
    }
    // What is still unfinished now is cut: each response whose last bytes are not
    // written (a request in flight, or a body HTTP/2 still holds).
    let (cut, responses) = conns.unfinished();
    let open = conns.open();
    if !probes {
        tracing::warn!(
            connections = open,
            unfinished = cut,
            responses,
            "drain limit ({drain:?}) reached after {:?}{}: resetting the {open} connections still open, cutting {responses} responses short",
            started.elapsed(),
            if quiet { "" } else { " with responses unfinished" },
        );
    }
    let _ = stop_tx.send(Stop::Cut);
    let _ = tokio::time::timeout(Duration::from_secs(1), conns.wait_empty()).await;
    responses
}

/// The pause after a failed `accept`: [`AcceptBackoff::FIRST`], doubled at each
/// failure in a row up to [`AcceptBackoff::MOST`], and back to the first after a
/// success; and the warnings' pace (one a second, with the failures since the last).
#[derive(Debug, Default)]
struct AcceptBackoff {
    pause: Duration,
    failures: u64,
    warned: Option<Instant>,
}

impl AcceptBackoff {
    const FIRST: Duration = Duration::from_millis(5);
    /// A descriptor freed waits at most this long to be used: the open
    /// connections are served meanwhile.
    const MOST: Duration = Duration::from_secs(1);

    /// A failure: how long to pause; `warn` is called with the failures since the
    /// last warning, at most once a second.
    fn failed(&mut self, warn: impl FnOnce(u64)) -> Duration {
        self.failures += 1;
        if self.warned.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            warn(std::mem::take(&mut self.failures));
            self.warned = Some(Instant::now());
        }
        self.pause = (self.pause * 2).clamp(Self::FIRST, Self::MOST);
        self.pause
    }

    fn reset(&mut self) {
        self.pause = Duration::ZERO;
    }
}

/// The raw socket of a connection, to reset it at [`Stop::Cut`].
#[cfg(unix)]
type RawSocket = std::os::fd::RawFd;
#[cfg(not(unix))]
type RawSocket = ();

#[cfg(unix)]
fn raw_socket(tcp: &TcpStream) -> RawSocket {
    use std::os::fd::AsRawFd;
    tcp.as_raw_fd()
}
#[cfg(not(unix))]
fn raw_socket(_: &TcpStream) -> RawSocket {}

/// Makes the close of `fd` a reset (`SO_LINGER` 0): what was not sent is dropped
/// and the client sees `ECONNRESET`, never an end that looks like a whole answer.
/// Called by the connection's own task, which owns the socket until it returns.
#[cfg(unix)]
fn reset_on_close(fd: RawSocket) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `fd` is the connection's socket, open until this task drops it;
    // setsockopt reads one `linger` through a valid pointer.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
#[cfg(not(unix))]
fn reset_on_close(_: RawSocket) {}

#[allow(clippy::too_many_arguments)]
async fn serve_conn<H: Handler>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    app: Router,
    peer: Peer<H>,
    security: Arc<Security>,
    tcp: TcpStream,
    slot: Slot,
    limits: Limits,
    stop: watch::Receiver<Stop>,
) {
    let auth = security.has_tokens().then(|| security.clone());
    let raw = raw_socket(&tcp);
    let Some(tls) = security.tls() else {
        return drive(builder, app, peer, auth, TokioIo::new(tcp), raw, slot, limits, stop).await;
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
    drive(builder, app, peer, auth, TokioIo::new(io), raw, slot, limits, stop).await;
}

#[allow(clippy::too_many_arguments)]
async fn drive<H: Handler, I>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    app: Router,
    peer: Peer<H>,
    auth: Option<Arc<Security>>,
    io: TokioIo<I>,
    raw: RawSocket,
    slot: Slot,
    limits: Limits,
    stop: watch::Receiver<Stop>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let slot = Arc::new(slot);
    let state = slot.state.clone();
    let memory = peer.svc.memory();
    let streams = Arc::new(Streams::new(
        memory.budgets.connection_response,
        memory.responses.clone(),
        memory.shares.clone(),
        limits.reserve_timeout,
        state.ip,
        state.clone(),
    ));
    let _ = state.streams.set(Arc::downgrade(&streams));
    let addr = peer.addr;
    let service = ConnService {
        app,
        slot,
        auth,
        requests: memory.requests.clone(),
        body_timeout: limits.body_timeout,
        probes: peer.probes,
        peer: Arc::new(peer),
        streams: streams.clone(),
        stop: stop.clone(),
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
        if cmd & Ctl::RESET != 0 {
            reset_on_close(raw);
            return Poll::Ready(());
        }
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
