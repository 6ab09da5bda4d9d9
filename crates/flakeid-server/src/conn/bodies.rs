//! What a connection's bodies carry of the budgets (budget.rs): gRPC request
//! bodies against the server's request budget ([`RequestBody`]), responses' data
//! frames holding their reservations until written ([`Piece`]), and the responses
//! the stream-idle rule watches ([`Tracked`]).

use super::slots::Active;
use crate::budget::{Budget, Flow, MIN_TAKEN, Reserved};
use crate::metrics::Metrics;
use axum::body::Body;
use hyper::body::Incoming;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The `grpc-status` of a response's head (a trailers-only answer) or trailers.
pub(super) fn grpc_status(headers: &axum::http::HeaderMap) -> Option<u16> {
    headers.get("grpc-status")?.to_str().ok()?.parse().ok()
}

/// What one piece of a tracked response's data holds until HTTP/2 drops it
/// (written to the socket, or its stream gone): its bytes, counted as gone then,
/// and the reservation of the bytes it belongs to, shared with the other pieces of
/// its frame. hyper polls a body for its next frame as soon as it has handed the
/// last one to HTTP/2, whatever the client's window: what is not written yet is
/// only in these. A piece is [`MIN_TAKEN`] bytes at most, so a client that reads
/// slowly but steadily shows progress ([`crate::budget::Streams::longest_wait`]).
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
        self.flow.gone(self.bytes.len());
    }
}

/// A gRPC request's body as tonic reads it: each frame's bytes count against the
/// server's request budget ([`crate::config::Limits::request_memory`]) until the body is dropped
/// (tonic drops it once the message is decoded), and the whole body must arrive
/// by its deadline ([`crate::config::Limits::body_timeout`]). A body over the budget or late ends
/// in a [`tonic::Status`], which tonic answers as is.
pub(crate) struct RequestBody {
    pub(super) inner: Incoming,
    pub(super) deadline: Pin<Box<tokio::time::Sleep>>,
    pub(super) budget: Arc<Budget>,
    pub(super) held: usize,
    pub(super) slot: Arc<super::SlotState>,
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

impl Drop for RequestBody {
    fn drop(&mut self) {
        self.budget.give(self.held);
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
    pub(super) rpc: Option<(&'static str, Arc<Metrics>)>,
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
        if let Some((rpc, metrics)) = self.rpc.take() {
            metrics.count_rpc(rpc, code);
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
                    this.flow.handed(bytes.len());
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
