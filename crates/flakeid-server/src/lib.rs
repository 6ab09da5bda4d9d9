//! flakeid as a network service: the HTTP API of `flakeid serve`, as a library so it
//! can be embedded and tested. HTTP/1.1 (keep-alive) and HTTP/2 without TLS (h2c) on
//! one port, through axum/hyper.
//!
//! A leased server issues only while its lease is [`LeaseState::Held`]: the moment
//! a renewal fails it turns not-ready and answers 503 instead of issuing, so it stops
//! well before the store could give its node id to another holder.
#![warn(missing_docs)]

pub mod time;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use flakeid_core::{Encoding, Error, ErrorKind, Generator, Layout, LeaseState, Parts, encode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub mod grpc;

/// How long a shutdown waits for in-flight requests and streams before it closes
/// the remaining connections anyway.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The default and the hard ceiling of `n` for one `/v1/ids` request. The ceiling
/// bounds the memory one request can make the server allocate (8 bytes per ID plus
/// the text form).
pub const DEFAULT_MAX_BATCH: usize = 100_000;
/// The largest `--max-batch` accepted.
pub const MAX_BATCH_CEILING: usize = 10_000_000;

/// Batches at least this large are generated on the blocking pool: the wait policy
/// may sleep until the next tick, which must not stall an async worker.
const BLOCKING_BATCH: usize = 4096;

/// Settings of one service beyond its generator.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest `n` one `/v1/ids` request may ask for.
    pub max_batch: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_batch: DEFAULT_MAX_BATCH,
        }
    }
}

impl Config {
    /// Checks the settings; `max_batch` must be in `1..=MAX_BATCH_CEILING`.
    pub fn validate(&self) -> Result<(), Error> {
        if self.max_batch == 0 || self.max_batch > MAX_BATCH_CEILING {
            return Err(Error::Config {
                field: "max_batch",
                message: format!("max_batch must be in 1..={MAX_BATCH_CEILING}, got {}", self.max_batch),
            });
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RpcLabels {
    rpc: &'static str,
    code: u16,
}

#[derive(Debug)]
struct Metrics {
    registry: Registry,
    issued: Counter,
    requests: Family<RouteLabels, Counter>,
    errors: Family<KindLabels, Counter>,
    grpc: Family<RpcLabels, Counter>,
    lease_held: Gauge,
    lease_renew_us: Gauge,
    ahead_ms: Gauge,
}

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("flakeid");
        let issued = Counter::default();
        let requests = Family::<RouteLabels, Counter>::default();
        let errors = Family::<KindLabels, Counter>::default();
        let grpc = Family::<RpcLabels, Counter>::default();
        let lease_held = Gauge::default();
        let lease_renew_us = Gauge::default();
        let ahead_ms = Gauge::default();
        registry.register("ids_issued", "IDs issued", issued.clone());
        registry.register("http_requests", "HTTP requests by route and status", requests.clone());
        registry.register("errors", "Error responses by kind", errors.clone());
        registry.register("grpc_calls", "gRPC calls by method and status code", grpc.clone());
        registry.register(
            "lease_held",
            "1 while the node id is held (always 1 without a lease)",
            lease_held.clone(),
        );
        registry.register(
            "lease_renew_latency_us",
            "Round trip of the lease's last confirmed renewal, in microseconds (0 without a lease)",
            lease_renew_us.clone(),
        );
        registry.register(
            "ahead_ms",
            "How far the last issued ID's time runs ahead of the clock (borrow mode), in ms",
            ahead_ms.clone(),
        );
        Metrics {
            registry,
            issued,
            requests,
            errors,
            grpc,
            lease_held,
            lease_renew_us,
            ahead_ms,
        }
    }
}

/// One running service: a generator shared by every request.
#[derive(Debug)]
pub struct Service {
    generator: Arc<Generator>,
    config: Config,
    metrics: Metrics,
    draining: AtomicBool,
}

type Shared = Arc<Service>;

impl Service {
    /// A service issuing from `generator`, configured by `config`.
    pub fn new(generator: Generator, config: Config) -> Result<Arc<Service>, Error> {
        config.validate()?;
        Ok(Arc::new(Service {
            generator: Arc::new(generator),
            config,
            metrics: Metrics::new(),
            draining: AtomicBool::new(false),
        }))
    }

    /// How many IDs this service has issued (HTTP and gRPC).
    pub fn issued(&self) -> u64 {
        self.metrics.issued.get()
    }

    /// The generator behind the service.
    pub fn generator(&self) -> &Generator {
        &self.generator
    }

    /// Why the service may not issue now (`None` when it may): shutting down, or a
    /// leased node id that is not provably held.
    pub fn not_ready(&self) -> Option<String> {
        if self.draining.load(Ordering::Acquire) {
            return Some("shutting down".into());
        }
        match self.generator.lease_state() {
            None | Some(LeaseState::Held) => None,
            Some(state) => Some(format!("node-id lease {state}")),
        }
    }

    /// Marks the service as draining: `/readyz` turns 503 and no more IDs are issued.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Stops issuing and gives the node id back (recording the last timestamp).
    pub fn shutdown(&self) {
        self.start_draining();
        self.generator.release_lease();
    }

    fn issue(&self, out: &mut [u64]) -> Result<(), ApiError> {
        if let Some(why) = self.not_ready() {
            return Err(ApiError::unavailable("not_ready", why));
        }
        self.generator.fill(out).map_err(ApiError::from)?;
        self.metrics.issued.inc_by(out.len() as u64);
        Ok(())
    }
}

/// The HTTP routes and the gRPC service (`/flakeid.v1.Flakeid/*`) of a service.
pub fn router(service: Arc<Service>) -> Router {
    Router::new()
        .route_service("/flakeid.v1.Flakeid/{*method}", grpc::Grpc::server(service.clone()))
        .route("/v1/id", get(one_id))
        .route("/v1/ids", get(many_ids))
        .route("/v1/decode/{id}", get(decode_id))
        .route("/v1/layout", get(layout_info))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(service)
}

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting,
/// drains in-flight requests and releases the lease.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(service.clone());
    let draining = service.clone();
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopped = stop.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        tracing::info!("shutting down: draining in-flight requests");
        draining.start_draining();
        stop.notify_one();
    });
    let result = tokio::select! {
        r = server => r,
        () = async {
            stopped.notified().await;
            tokio::time::sleep(DRAIN_TIMEOUT).await;
        } => {
            tracing::warn!("requests still in flight after {DRAIN_TIMEOUT:?}: closing them");
            Ok(())
        }
    };
    service.shutdown();
    tracing::info!("lease released; stopped");
    result
}

/// An error response: a status and a JSON body naming what was wrong.
#[derive(Debug)]
struct ApiError {
    status: StatusCode,
    kind: &'static str,
    parameter: Option<&'static str>,
    message: String,
}

impl ApiError {
    fn bad(parameter: &'static str, message: String) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            kind: "bad_request",
            parameter: Some(parameter),
            message,
        }
    }
    fn unavailable(kind: &'static str, message: String) -> ApiError {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            kind,
            parameter: None,
            message,
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let status = match e.kind() {
            ErrorKind::Config | ErrorKind::Parse => StatusCode::BAD_REQUEST,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError {
            status,
            kind: e.kind().code(),
            parameter: None,
            message: e.to_string(),
        }
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = format!("{{\"error\":{}", json_string(self.kind));
        if let Some(p) = self.parameter {
            let _ = write!(body, ",\"parameter\":{}", json_string(p));
        }
        let _ = writeln!(body, ",\"message\":{}}}", json_string(&self.message));
        (
            self.status,
            [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response()
    }
}

fn count(svc: &Service, route: &'static str, status: StatusCode) {
    svc.metrics
        .requests
        .get_or_create(&RouteLabels {
            route,
            status: status.as_u16(),
        })
        .inc();
}

/// Records a finished request in the metrics and turns it into a response.
fn finish(svc: &Service, route: &'static str, result: Result<Response, ApiError>) -> Response {
    match result {
        Ok(r) => {
            count(svc, route, r.status());
            r
        }
        Err(e) => {
            count(svc, route, e.status);
            svc.metrics.errors.get_or_create(&KindLabels { kind: e.kind }).inc();
            e.into_response()
        }
    }
}

fn accepts(headers: &HeaderMap, mime: &str) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|m| m.split(';').next().unwrap_or("").trim() == mime))
}

fn typed(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.into(),
    )
        .into_response()
}

fn query_params(
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
    allowed: &[&str],
) -> Result<HashMap<String, String>, ApiError> {
    let Query(map) = q.map_err(|e| ApiError::bad("query", format!("unreadable query string: {e}")))?;
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        let shown: String = k.chars().take(32).collect();
        return Err(ApiError::bad(
            "query",
            format!("unknown parameter {shown:?} (allowed: {})", allowed.join(", ")),
        ));
    }
    Ok(map)
}

async fn one_id(
    State(svc): State<Shared>,
    headers: HeaderMap,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let result = (|| {
        let params = query_params(q, &["format"])?;
        let json = match params.get("format").map(String::as_str) {
            Some("json") => true,
            Some("text") => false,
            Some(other) => {
                let shown: String = other.chars().take(32).collect();
                return Err(ApiError::bad(
                    "format",
                    format!("format must be text or json, got {shown:?}"),
                ));
            }
            None => accepts(&headers, "application/json"),
        };
        let mut id = [0u64; 1];
        svc.issue(&mut id)?;
        Ok(if json {
            typed("application/json", format!("{{\"id\":\"{}\"}}\n", id[0]))
        } else {
            typed("text/plain; charset=utf-8", format!("{}\n", id[0]))
        })
    })();
    finish(&svc, "/v1/id", result)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BatchFormat {
    Json,
    Ndjson,
    Octets,
}

async fn many_ids(
    State(svc): State<Shared>,
    headers: HeaderMap,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Response {
    let result = many_ids_inner(&svc, &headers, q).await;
    finish(&svc, "/v1/ids", result)
}

async fn many_ids_inner(
    svc: &Shared,
    headers: &HeaderMap,
    q: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let params = query_params(q, &["n", "format"])?;
    let max = svc.config.max_batch;
    let n: usize = match params.get("n") {
        None => 1,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) && !text.starts_with('+') => n,
            _ => {
                let shown: String = text.chars().take(32).collect();
                return Err(ApiError::bad(
                    "n",
                    format!("n must be an integer in 1..={max}, got {shown:?}"),
                ));
            }
        },
    };
    let format = match params.get("format").map(String::as_str) {
        Some("json") => BatchFormat::Json,
        Some("ndjson") => BatchFormat::Ndjson,
        Some("octet-stream") | Some("octets") | Some("binary") => BatchFormat::Octets,
        Some(other) => {
            let shown: String = other.chars().take(32).collect();
            return Err(ApiError::bad(
                "format",
                format!("format must be json, ndjson or octet-stream, got {shown:?}"),
            ));
        }
        None if accepts(headers, "application/octet-stream") => BatchFormat::Octets,
        None if accepts(headers, "application/x-ndjson") => BatchFormat::Ndjson,
        None => BatchFormat::Json,
    };
    let ids = if n >= BLOCKING_BATCH {
        let svc = svc.clone();
        tokio::task::spawn_blocking(move || {
            let mut ids = vec![0u64; n];
            svc.issue(&mut ids).map(|()| ids)
        })
        .await
        .map_err(|e| ApiError::unavailable("internal", format!("batch task failed: {e}")))??
    } else {
        let mut ids = vec![0u64; n];
        svc.issue(&mut ids)?;
        ids
    };
    Ok(match format {
        BatchFormat::Octets => {
            let mut body = Vec::with_capacity(n * 8);
            for id in &ids {
                body.extend_from_slice(&id.to_be_bytes());
            }
            typed("application/octet-stream", body)
        }
        BatchFormat::Json => {
            let mut body = String::with_capacity(n * 23 + 3);
            body.push('[');
            for (i, id) in ids.iter().enumerate() {
                let _ = write!(body, "{}\"{id}\"", if i == 0 { "" } else { "," });
            }
            body.push_str("]\n");
            typed("application/json", body)
        }
        BatchFormat::Ndjson => {
            let mut body = String::with_capacity(n * 22);
            for id in &ids {
                let _ = writeln!(body, "\"{id}\"");
            }
            typed("application/x-ndjson", body)
        }
    })
}

/// Reads an ID in any text form `flakeid decode` accepts: the core's
/// auto-detection, which refuses (rather than guesses) a text that reads as more
/// than one form, e.g. 16 hex digits that are all 0-9.
pub fn parse_any(text: &str) -> Result<u64, Error> {
    flakeid_core::decode_auto(text).map(|(id, _)| id)
}

/// An ID taken apart, as one JSON object: what `GET /v1/decode/{id}` answers and
/// `flakeid decode --json` prints (the id as a string: JS numbers lose IDs).
pub fn parts_json(layout: &Layout, id: u64, p: &Parts) -> String {
    format!(
        "{{\"id\":\"{id}\",\"layout\":\"{}\",\"time\":\"{}\",\"timestamp_ms\":{},\"datacenter\":{},\"worker\":{},\"node\":{},\"sequence\":{},\"hex\":\"{}\",\"base32\":\"{}\",\"base62\":\"{}\"}}",
        layout_name(layout),
        time::iso8601(p.timestamp_ms),
        p.timestamp_ms,
        p.datacenter,
        p.worker,
        p.node,
        p.sequence,
        encode(id, Encoding::Hex),
        encode(id, Encoding::Base32),
        encode(id, Encoding::Base62),
    )
}

/// A layout's preset name, or `custom`.
pub fn layout_name(layout: &Layout) -> &'static str {
    layout.name().unwrap_or("custom")
}

async fn decode_id(State(svc): State<Shared>, Path(text): Path<String>) -> Response {
    let result = (|| {
        let layout = svc.generator.layout();
        let id = parse_any(&text).map_err(|e| ApiError::bad("id", e.to_string()))?;
        let p = layout
            .try_decompose(id)
            .map_err(|e| ApiError::bad("id", e.to_string()))?;
        Ok(typed("application/json", format!("{}\n", parts_json(layout, id, &p))))
    })();
    finish(&svc, "/v1/decode", result)
}

fn lease_text(g: &Generator) -> String {
    match g.lease_state() {
        None => "none".into(),
        Some(LeaseState::Held) => "held".into(),
        Some(LeaseState::Unreachable { .. }) => "unreachable".into(),
        Some(LeaseState::Lost) => "lost".into(),
        Some(LeaseState::Released) => "released".into(),
        Some(other) => other.to_string(),
    }
}

async fn layout_info(State(svc): State<Shared>) -> Response {
    let g = &svc.generator;
    let l = g.layout();
    let body = format!(
        "{{\"layout\":\"{}\",\"time_bits\":{},\"datacenter_bits\":{},\"worker_bits\":{},\"sequence_bits\":{},\"tick_ms\":{},\"epoch_ms\":{},\"node\":{},\"datacenter\":{},\"worker\":{},\"lease\":\"{}\",\"max_batch\":{}}}\n",
        layout_name(l),
        l.time_bits(),
        l.datacenter_bits(),
        l.worker_bits(),
        l.sequence_bits(),
        l.tick_ms(),
        l.epoch_ms(),
        g.node(),
        g.datacenter(),
        g.worker(),
        lease_text(g),
        svc.config.max_batch,
    );
    finish(&svc, "/v1/layout", Ok(typed("application/json", body)))
}

async fn healthz(State(svc): State<Shared>) -> Response {
    finish(&svc, "/healthz", Ok(typed("text/plain; charset=utf-8", "ok\n")))
}

async fn readyz(State(svc): State<Shared>) -> Response {
    let result = match svc.not_ready() {
        None => Ok(typed("text/plain; charset=utf-8", "ready\n")),
        Some(why) => Err(ApiError::unavailable("not_ready", why)),
    };
    finish(&svc, "/readyz", result)
}

async fn metrics(State(svc): State<Shared>) -> Response {
    let g = &svc.generator;
    svc.metrics
        .lease_held
        .set(i64::from(matches!(g.lease_state(), None | Some(LeaseState::Held))));
    let renew_us = g.lease_renew_latency_us().unwrap_or(0);
    svc.metrics
        .lease_renew_us
        .set(i64::try_from(renew_us).unwrap_or(i64::MAX));
    let now = flakeid_core::precise_now_ms();
    let ahead = g.last_issued_ms().map_or(0, |t| t.saturating_sub(now));
    svc.metrics.ahead_ms.set(i64::try_from(ahead).unwrap_or(i64::MAX));
    count(&svc, "/metrics", StatusCode::OK);
    let mut body = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut body, &svc.metrics.registry) {
        return ApiError::unavailable("internal", format!("metrics encoding failed: {e}")).into_response();
    }
    typed("application/openmetrics-text; version=1.0.0; charset=utf-8", body)
}

async fn not_found(State(svc): State<Shared>) -> Response {
    let e = ApiError {
        status: StatusCode::NOT_FOUND,
        kind: "not_found",
        parameter: Some("path"),
        message: "no such route (try /v1/id, /v1/ids?n=N, /v1/decode/{id}, /v1/layout, /healthz, /readyz, /metrics)"
            .into(),
    };
    finish(&svc, "other", Err(e))
}

async fn not_allowed(State(svc): State<Shared>) -> Response {
    let e = ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        kind: "method_not_allowed",
        parameter: Some("method"),
        message: "only GET is served here".into(),
    };
    let mut r = finish(&svc, "other", Err(e));
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}
