//! A connection's service: each request through the limits that apply before
//! routing (the size of its head, gRPC over HTTP/2 only, bearer tokens, the request
//! budget), then to the router, counted and timed when its answer is ready.

use super::bodies::{Messages, RequestBody, Tracked, grpc_status};
use super::{Active, Handler, Slot};
use crate::budget::{Budget, Flow, Streams};
use crate::error::ApiError;
use crate::metrics::{MethodLabel, Route};
use crate::security::Security;
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use hyper::body::Incoming;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The router as a hyper service that marks its connection as served.
#[derive(Debug)]
pub(super) struct ConnService<H> {
    pub(super) app: Router,
    pub(super) slot: Arc<Slot>,
    /// Bearer tokens are configured: check them (security.rs).
    pub(super) auth: Option<Arc<Security>>,
    /// Where each answered request is counted and timed (metrics.rs). One per
    /// connection: cloning it for each request touches no count shared with other
    /// connections.
    pub(super) peer: Arc<Peer<H>>,
    /// The connection's tracked responses and response budget (each gRPC or
    /// streamed request gets its [`Flow`] in its extensions).
    pub(super) streams: Arc<Streams>,
    /// The server's request budget and the body deadline of gRPC requests.
    pub(super) requests: Arc<Budget>,
    pub(super) body_timeout: Duration,
    /// The probe listener's: every request goes to its router.
    pub(super) probes: bool,
    /// The server's shutdown: calls that wait for ever end when it drains
    /// ([`UntilDrain`]).
    pub(super) stop: tokio::sync::watch::Receiver<super::Stop>,
}

// By hand: a derive would ask `H: Clone`, and only the `Arc` is cloned.
impl<H> Clone for ConnService<H> {
    fn clone(&self) -> Self {
        ConnService {
            app: self.app.clone(),
            slot: self.slot.clone(),
            auth: self.auth.clone(),
            peer: self.peer.clone(),
            streams: self.streams.clone(),
            requests: self.requests.clone(),
            body_timeout: self.body_timeout,
            probes: self.probes,
            stop: self.stop.clone(),
        }
    }
}

/// The service and the client of one connection, for the metrics.
#[derive(Debug)]
pub(crate) struct Peer<H> {
    pub svc: Arc<H>,
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
pub(crate) struct ConnFuture<H> {
    answer: Answer,
    started: std::time::Instant,
    route: Route,
    method: MethodLabel,
    peer: Arc<Peer<H>>,
    /// What the access log says of the request, when it is on.
    entry: Option<Box<crate::access::Entry>>,
    /// The request in flight on its connection, until its response is handed over.
    active: Option<Active>,
    /// A gRPC or streamed route: its response body is [`Tracked`].
    tracked: Option<Arc<Flow>>,
    /// Over HTTP/1.x: while draining, the connection closes after the answer.
    http1: bool,
    /// In a probe slot: the connection closes after the answer.
    last: bool,
    /// A call that waits for ever (health `Watch`, reflection): ends when the
    /// server drains ([`UntilDrain`]).
    until_drain: Option<tokio::sync::watch::Receiver<super::Stop>>,
}

impl<H: Handler> std::future::Future for ConnFuture<H> {
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
        this.peer.svc.metrics().observe(this.route, this.method, status, took);
        if let (Some(log), Some(e)) = (this.peer.svc.access(), &this.entry) {
            log.log(e, this.peer.addr, status, took, this.route.name());
            if let Ok(v) = axum::http::HeaderValue::from_str(&e.request_id) {
                resp.headers_mut().insert("x-request-id", v);
            }
        }
        if let Some(stop) = this.until_drain.take() {
            resp = resp.map(|inner| Body::new(UntilDrain::new(inner, stop)));
        }
        if let Some(flow) = this.tracked.take() {
            resp = track(resp, flow, this.route, this.peer.svc.metrics(), this.active.take());
        }
        if this.http1 && (this.last || this.peer.svc.is_draining()) {
            let close = axum::http::HeaderValue::from_static("close");
            resp.headers_mut().insert(axum::http::header::CONNECTION, close);
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
    route: Route,
    metrics: &Arc<crate::metrics::Metrics>,
    active: Option<Active>,
) -> axum::response::Response {
    let mut rpc = route.rpc().map(|name| (name, metrics.clone()));
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
        if let Some((name, metrics)) = rpc.take() {
            metrics.count_rpc(name, code);
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
        let e = ApiError::plain(
            StatusCode::URI_TOO_LONG,
            "uri_too_long",
            "path",
            format!("the request target is {uri} bytes; at most {MAX_URI} are served"),
        );
        return Some(e.into_response());
    }
    let headers: usize = req.headers().iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum();
    if headers > MAX_HEADER_BYTES {
        let e = ApiError::plain(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "headers_too_large",
            "headers",
            format!("the request headers are {headers} bytes; at most {MAX_HEADER_BYTES} are served"),
        );
        return Some(e.into_response());
    }
    None
}

impl<H: Handler> hyper::service::Service<Request<Incoming>> for ConnService<H> {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = ConnFuture<H>;

    fn call(&self, req: Request<Incoming>) -> Self::Future {
        let started = std::time::Instant::now();
        let mut active = self.slot.request(started);
        let http1 = req.version() < axum::http::Version::HTTP_2;
        if http1 {
            self.slot.state.http1.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let svc = &*self.peer.svc;
        let route = svc.route(req.uri().path());
        let grpc = svc.is_grpc(req.uri().path());
        let mut tracked = svc.streamed(route) || grpc;
        let mut tracked_flow = None;
        let method = MethodLabel::of(route, req.method());
        let entry = svc.access().map(|log| {
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
        let mut token = None;
        let last = self.slot.state.probe_only;
        if last {
            // A probe slot (slots.rs, PROBE_SLOTS) answers one request, then closes:
            // its place is free for the next probe at once.
            self.slot.state.done.notify_one();
        }
        let answer = if let Some(r) = oversized(&req) {
            Answer::Ready(Some(r))
        } else if last && !svc.probe(route) {
            // Every other slot has a request in flight. Not a gRPC call's answer:
            // counted as an HTTP request only.
            tracked = false;
            Answer::Ready(Some(slots_full()))
        } else if grpc && req.version() != axum::http::Version::HTTP_2 {
            // gRPC is HTTP/2 only: an HTTP/1.1 body to a gRPC path is never read.
            // Not a gRPC call: counted as an HTTP request only.
            tracked = false;
            Answer::Ready(Some(http2_required()))
        } else if let Some(refused) = self
            .auth
            .as_ref()
            .and_then(|auth| auth.refuse(req.uri().path(), req.headers()).map(|t| token = t).err())
        {
            Answer::Ready(Some(*refused))
        } else if grpc && svc.long_lived(route) && self.slot.long_call().map(|long| active.hold(long)).is_none() {
            // A call that may stay in flight for ever holds a place of its own
            // (slots.rs, LONG_CALLS_DIVISOR) until it ends; none free: refused now.
            Answer::Ready(Some(long_calls_full(self.slot.long_limits())))
        } else if let Some(r) = (!self.probes).then(|| svc.answer(route, &req)).flatten() {
            // The hot route, answered without the router, which would only match the
            // path, insert its (empty) parameters, box the body and add content-length.
            let head = req.method() == axum::http::Method::HEAD;
            Answer::Ready(Some(as_routed(r, head)))
        } else {
            let mut app = self.app.clone();
            // Reflection's calls stream requests; every other method takes one message.
            let single = svc.single_message(req.uri().path());
            let mut req = if grpc {
                req.map(|inner| {
                    Body::new(RequestBody {
                        inner,
                        deadline: Box::pin(tokio::time::sleep(self.body_timeout)),
                        budget: self.requests.clone(),
                        held: 0,
                        slot: self.slot.state.clone(),
                        single: single.then(Messages::default),
                    })
                })
            } else {
                req.map(Body::new)
            };
            // Only the routes that stream a response or reserve room for one read
            // it: the others skip the allocation of an extension map.
            if tracked {
                let flow = self.streams.open(token);
                req.extensions_mut().insert(flow.clone());
                tracked_flow = Some(flow);
            }
            Answer::Route(tower_service::Service::call(&mut app, req))
        };
        if tracked && tracked_flow.is_none() {
            tracked_flow = Some(self.streams.open(None));
        }
        if tracked {
            active.tracked();
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
            http1,
            last,
            // The long-lived calls that are not the ID service's (its Stream ends
            // at the drain by itself: service.rs, IdChunks).
            until_drain: (grpc && svc.long_lived(route) && route.rpc().is_none()).then(|| self.stop.clone()),
        }
    }
}

/// The answer to anything but a probe in a probe slot: 503 with `Retry-After`,
/// and over HTTP/1.1 the connection closed after it.
fn slots_full() -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut r = ApiError::busy("every connection slot has a request in flight (--max-connections): retry later".into())
        .into_response();
    r.headers_mut().insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    r
}

/// How long a call that waits for ever has, once the server drains, to say so
/// before it is ended ([`UntilDrain`]): health `Watch` sends `NOT_SERVING` within
/// [`crate::grpc::HEALTH_POLL`].
const DRAIN_GRACE: std::time::Duration =
    std::time::Duration::from_millis(2 * crate::grpc::HEALTH_POLL.as_millis() as u64);

/// The body of a call that waits for ever for something to say (health `Watch`,
/// reflection): once the server drains and [`DRAIN_GRACE`] has passed, when it has
/// nothing to send, it ends with `UNAVAILABLE` in its trailers, so that the drain
/// waits for no such call and its client knows to go elsewhere.
struct UntilDrain {
    inner: Body,
    drained: Option<Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
    ended: bool,
}

impl UntilDrain {
    fn new(inner: Body, mut stop: tokio::sync::watch::Receiver<super::Stop>) -> UntilDrain {
        let drained = async move {
            let _ = stop.wait_for(|s| *s != super::Stop::Serving).await;
            tokio::time::sleep(DRAIN_GRACE).await;
        };
        UntilDrain {
            inner,
            drained: Some(Box::pin(drained)),
            ended: false,
        }
    }
}

impl hyper::body::Body for UntilDrain {
    type Data = hyper::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        if let Poll::Ready(r) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(r);
        }
        let Some(drained) = this.drained.as_mut() else {
            return Poll::Pending;
        };
        std::task::ready!(drained.as_mut().poll(cx));
        this.drained = None;
        this.ended = true;
        let mut trailers = axum::http::HeaderMap::new();
        trailers.insert(
            "grpc-status",
            axum::http::HeaderValue::from(tonic::Code::Unavailable as u16),
        );
        trailers.insert("grpc-message", axum::http::HeaderValue::from_static("shutting%20down"));
        Poll::Ready(Some(Ok(hyper::body::Frame::trailers(trailers))))
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.is_end_stream()
    }
}

/// The answer to a long-lived call (gRPC `Stream`, health `Watch`, reflection)
/// past their limit (`(in all, per client address)`, slots.rs,
/// `LONG_CALLS_DIVISOR`): `RESOURCE_EXHAUSTED` at once, in the head.
fn long_calls_full((all, per_client): (usize, usize)) -> axum::response::Response {
    tonic::Status::resource_exhausted(format!(
        "too many long-lived calls (Stream, health Watch, reflection) in flight: at most {all}, and {per_client} \
         from one client address (half of --max-connections and of --max-connections-per-client): retry later"
    ))
    .into_http()
}

/// The answer to gRPC over HTTP/1.x: 505, and the connection closed after it, so
/// that hyper reads none of the body.
fn http2_required() -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut r = ApiError::plain(
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
