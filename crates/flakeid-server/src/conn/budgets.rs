//! The memory budgets of a connection: gRPC request bodies against the server's
//! request budget ([`RequestBody`]), responses reserved from the connection's and
//! the server's response budgets before they are made ([`Flow::reserve`]) and held
//! by their data frames until written ([`Piece`]), and the responses the
//! stream-idle rule watches ([`Tracked`]).

use super::slots::{Active, SlotState};
use axum::body::Body;
use hyper::body::Incoming;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

/// The `grpc-status` of a response's head (a trailers-only answer) or trailers.
pub(super) fn grpc_status(headers: &axum::http::HeaderMap) -> Option<u16> {
    headers.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// The tracked responses of one connection ([`Flow`]), for the stream-idle rule
/// ([`Limits::stream_idle_timeout`]); the connection's response budget and the
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
    /// How long a reservation may wait for room ([`Limits::reserve_timeout`]).
    wait: Duration,
    /// Since when this connection's requests have found no room, with no progress
    /// since ([`Streams::longest_wait`]).
    starved: Mutex<Option<std::time::Instant>>,
    slot: Arc<SlotState>,
}

/// Who a share of the response budget belongs to ([`Shares`]): a client address,
/// or, when bearer tokens are on, the token a request carries (its place in the
/// token file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Client {
    Addr(std::net::IpAddr),
    Token(usize),
}

/// Each client's share of the server's response budget
/// ([`crate::Budgets::client_response`]): the most one client, over all its
/// connections, can hold of it. A share lives while a connection or request of its
/// client holds it; the map forgets the others as it grows.
#[derive(Debug)]
pub(crate) struct Shares {
    size: usize,
    inner: Mutex<(HashMap<Client, std::sync::Weak<tokio::sync::Semaphore>>, usize)>,
}

impl Shares {
    pub(crate) fn new(size: usize) -> Shares {
        Shares {
            size,
            inner: Mutex::new((HashMap::new(), 64)),
        }
    }

    /// The share of `client`.
    pub(crate) fn of(&self, client: Client) -> Arc<tokio::sync::Semaphore> {
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
pub(super) struct Watched {
    sent: Arc<Sent>,
    taken: usize,
    since: Option<std::time::Instant>,
}

/// Bytes of one response handed to hyper, and bytes of them written to the socket
/// (or dropped with their stream): the difference is what HTTP/2 holds.
#[derive(Debug, Default)]
pub(super) struct Sent {
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
    pub(super) fn merge(&mut self, other: Reserved) {
        self.conn.merge(other.conn);
        self.client.merge(other.client);
        self.total.merge(other.total);
    }
}

impl Streams {
    pub(super) fn new(
        budget: usize,
        total: Arc<tokio::sync::Semaphore>,
        shares: Arc<Shares>,
        wait: Duration,
        slot: Arc<SlotState>,
    ) -> Streams {
        Streams {
            inner: Mutex::default(),
            budget: Arc::new(tokio::sync::Semaphore::new(budget)),
            total,
            client: shares.of(Client::Addr(slot.ip)),
            shares,
            wait,
            starved: Mutex::new(None),
            slot,
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, (u64, HashMap<u64, Watched>)> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn starved(&self) -> MutexGuard<'_, Option<std::time::Instant>> {
        self.starved.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for `bytes` of response, from this connection's budget, its client's
    /// share ([`Shares`]) and the server's budget, waiting for it (first come, first
    /// served) at most [`Limits::reserve_timeout`] in all. Each budget is at least
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
    pub(super) fn moved(&self) {
        self.slot.moved();
    }

    /// A new tracked response on this connection, reserving from the share of
    /// `token` (the bearer token it carries, when tokens are on) or else of the
    /// connection's client address.
    pub(super) fn open(self: &Arc<Self>, token: Option<usize>) -> Arc<Flow> {
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
        })
    }

    /// How long the response that has waited longest for its client to take its
    /// bytes has waited (zero: none waits), as seen now: a response waits while
    /// HTTP/2 holds bytes of it and its client takes fewer than [`MIN_TAKEN`] of them.
    /// Called on each watchdog tick, which is when a wait is first seen: a tick late
    /// at most.
    /// A connection whose reservations found no room counts as waiting since the
    /// first of them, until a reservation succeeds or its client takes bytes.
    pub(super) fn longest_wait(&self) -> Duration {
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
/// extension), its body ([`Tracked`]) and its bytes in HTTP/2 ([`Piece`]).
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
}

impl Flow {
    /// Room for `bytes` of response ([`Streams::reserve`]); `None`: none in time.
    pub(crate) async fn reserve(&self, bytes: usize) -> Option<Reserved> {
        self.streams.reserve(bytes, &self.client).await
    }

    /// The bytes `r` is for are made: the next data frame carries `r`.
    pub(crate) fn made(&self, r: Reserved) {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        match made.as_mut() {
            Some(m) => m.merge(r),
            None => *made = Some(r),
        }
    }

    pub(super) fn take_made(&self) -> Option<Reserved> {
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
pub(super) struct Piece {
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
    pub(super) inner: Incoming,
    pub(super) deadline: Pin<Box<tokio::time::Sleep>>,
    pub(super) budget: Arc<Budget>,
    pub(super) held: usize,
    pub(super) slot: Arc<SlotState>,
    /// `Some` for a method that takes one request message (every method but
    /// reflection's): where the body is in gRPC's message framing.
    pub(super) single: Option<Messages>,
}

/// Where a gRPC request body is in its messages (each a 1-byte flag, a 4-byte
/// big-endian length, then that many bytes), to refuse a second message to a
/// method that takes one. tonic answers a unary call from its first message and
/// drops the rest unread; gRPC implementations answer it `INTERNAL` (grpc-java's
/// "Too many requests"), as here.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    /// Bytes of the current message's prefix seen (0..5), and the prefix.
    prefix: ([u8; 5], usize),
    /// Bytes of the current message's payload still to come.
    left: u64,
    count: u32,
}

impl Messages {
    /// Follows `data`; whether the body still holds at most one message.
    fn read(&mut self, mut data: &[u8]) -> bool {
        while !data.is_empty() {
            if self.left > 0 {
                let k = data.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
                self.left -= k as u64;
                data = &data[k..];
                continue;
            }
            let (prefix, seen) = &mut self.prefix;
            if *seen == 0 {
                self.count += 1;
                if self.count > 1 {
                    return false;
                }
            }
            let k = data.len().min(5 - *seen);
            prefix[*seen..*seen + k].copy_from_slice(&data[..k]);
            *seen += k;
            data = &data[k..];
            if *seen == 5 {
                self.left = u64::from(u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]));
                *seen = 0;
            }
        }
        true
    }
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

    pub(super) fn take(&self, n: usize) -> bool {
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
                    if let Some(m) = &mut this.single
                        && !m.read(data)
                    {
                        let s = tonic::Status::internal("more than one request message: this method takes exactly one");
                        return Poll::Ready(Some(Err(Box::new(s))));
                    }
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
    pub(super) inner: Body,
    pub(super) flow: Arc<Flow>,
    /// What is left of the data frame being handed over, and its reservation.
    pub(super) rest: Option<(hyper::body::Bytes, Option<Arc<Reserved>>)>,
    /// The method and the service to count the call in, until counted.
    pub(super) rpc: Option<(&'static str, Arc<crate::Service>)>,
    pub(super) _active: Option<Active>,
}

impl std::fmt::Debug for Tracked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracked")
            .field("flow", &self.flow)
            .finish_non_exhaustive()
    }
}

impl Tracked {
    pub(super) fn count(&mut self, code: u16) {
        if let Some((rpc, svc)) = self.rpc.take() {
            svc.metrics.count_rpc(rpc, code);
        }
    }

    /// The next piece of the frame being handed over.
    pub(super) fn piece(&mut self) -> Option<hyper::body::Bytes> {
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

#[cfg(test)]
mod tests {
    use super::Messages;

    /// One message, however its bytes are split into frames, passes; the first
    /// byte of a second one does not.
    #[test]
    fn a_second_request_message_is_seen_wherever_the_frames_split() {
        let one = [&[0u8, 0, 0, 0, 3][..], &[8, 1, 2]].concat();
        let two = [&one[..], &one[..]].concat();
        for split in 0..=two.len() {
            let mut m = Messages::default();
            let (a, b) = two.split_at(split);
            let ok = m.read(a) && m.read(b);
            assert!(!ok, "split at {split}");
            let mut m = Messages::default();
            let (a, b) = one.split_at(split.min(one.len()));
            assert!(m.read(a) && m.read(b) && m.read(&[]), "one message, split at {split}");
        }
        // An empty message (length 0), then a second: refused.
        let mut m = Messages::default();
        assert!(m.read(&[0, 0, 0, 0, 0]));
        assert!(!m.read(&[0]));
    }
}
