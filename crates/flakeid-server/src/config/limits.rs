//! The resource limits of one service ([`Limits`]): every one a `flakeid serve`
//! option, read by the connections' bounds (conn/).

use std::time::Duration;

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
    /// client has taken less than [`MIN_TAKEN`](crate::budget::MIN_TAKEN) of what waits to be sent this long
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
    /// The same, per client: a client address, or a bearer token when tokens are
    /// on, over all its connections. `None`: a quarter of the server's budget, or
    /// the connection's if more.
    pub client_response_memory: Option<usize>,
    /// How many leading bits of an IPv6 client address make one client, for its
    /// share of the response budget ([`Limits::client_response_memory`]): one
    /// host's addresses are usually one /64, as an IPv4 client is one address.
    /// In 1..=128; default 64.
    pub client_ipv6_prefix: u32,
    /// How long a response may wait for room in those budgets before it is
    /// refused: `503` with `Retry-After` (gRPC `RESOURCE_EXHAUSTED`); a chunk of a
    /// streamed response that finds none ends its response. Default 2 s.
    pub reserve_timeout: Duration,
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
            client_response_memory: None,
            client_ipv6_prefix: 64,
            reserve_timeout: Duration::from_secs(2),
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
/// whole frame): the reservations its pieces carry do (conn/bodies.rs, `Piece`).
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
            ("reserve_timeout", self.reserve_timeout),
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
