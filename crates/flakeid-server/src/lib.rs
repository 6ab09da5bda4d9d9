//! flakeid as a network service: the HTTP API of `flakeid serve`, as a library so it
//! can be embedded and tested. HTTP/1.1 (keep-alive) and HTTP/2 without TLS (h2c) on
//! one port, through axum/hyper.
//!
//! A leased server issues only while its lease is [`LeaseState::Held`]: the moment
//! a renewal fails it turns not-ready and answers 503 instead of issuing, so it stops
//! well before the store could give its node id to another holder.
#![warn(missing_docs)]

pub mod access;
pub mod conn;
pub mod lease;
pub mod metrics;
pub mod security;
mod trim;

use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use flakeid_core::{Error, ErrorKind, Generator, Layout, LeaseState, Parts};
use flakeid_seal::Sealer;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
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

/// How many IDs one lazily made chunk of a large `/v1/ids` body or of a gRPC
/// `Stream` (chunk 0) holds: what is issued and not yet sent to a client is at
/// most its connection's response budget (conn.rs, `Flow`).
pub const CHUNK: usize = BLOCKING_BATCH;

pub use conn::Limits;
pub use security::SecurityFiles;

/// Settings of one service beyond its generator.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest `n` one `/v1/ids` request may ask for.
    pub max_batch: usize,
    /// Timeouts, the connection cap and the HTTP/2 limits (conn.rs).
    pub limits: Limits,
    /// TLS, client certificates and bearer tokens (security.rs); all off by default.
    pub security: SecurityFiles,
    /// Seals every ID issued (`--seal-key-file`, docs/sealing.md) and serves
    /// `/v1/unseal/{id}`, `/v1/decode/{id}?sealed=1` and gRPC `Unseal`. `None` (the
    /// default): plain IDs, and those answer `sealing_not_configured`. Its width
    /// must be the generator's layout's. Its `Debug` never shows the key.
    pub sealer: Option<Sealer>,
    /// One JSON line per answered request on standard output (`--access-log`,
    /// access.rs). Default off.
    pub access_log: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_batch: DEFAULT_MAX_BATCH,
            limits: Limits::default(),
            security: SecurityFiles::default(),
            sealer: None,
            access_log: false,
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
        self.limits.validate().map_err(|message| Error::Config {
            field: "limits",
            message,
        })?;
        let b = self.budgets();
        let l = &self.limits;
        for (field, given, least, what) in [
            (
                "request_memory",
                l.request_memory,
                b.max_request_message,
                "the largest gRPC request (an Unseal of max_batch IDs)",
            ),
            (
                "connection_response_memory",
                l.connection_response_memory,
                b.largest_reservation,
                "the largest response (a Batch of max_batch IDs)",
            ),
            (
                "response_memory",
                l.response_memory,
                b.connection_response,
                "connection_response_memory",
            ),
        ] {
            if let Some(given) = given
                && !(least..=MAX_MEMORY).contains(&given)
            {
                return Err(Error::Config {
                    field,
                    message: format!(
                        "{field} must be in {least}..={MAX_MEMORY} bytes (at least {what}, with max_batch {}), got {given}",
                        self.max_batch
                    ),
                });
            }
        }
        Ok(())
    }

    /// The memory budgets that follow from these settings (docs/service.md,
    /// "Memory budget").
    pub fn budgets(&self) -> Budgets {
        const MIB: usize = 1024 * 1024;
        let n = self.max_batch;
        // Unseal's packed `repeated fixed64`, 8 bytes an ID (9 unpacked), and tags.
        let max_request_message = n.saturating_mul(9).saturating_add(RESERVE_OVERHEAD);
        let max_response_message = n.saturating_mul(8).saturating_add(RESERVE_OVERHEAD);
        // A Batch or Unseal answer holds its IDs and their encoding (16 bytes an
        // ID); a chunk of /v1/ids its IDs and their text (32).
        let largest_reservation = n.saturating_mul(16).max(32 * CHUNK).saturating_add(RESERVE_OVERHEAD);
        let l = &self.limits;
        let connection_response = l
            .connection_response_memory
            .unwrap_or((4 * MIB).max(largest_reservation));
        Budgets {
            max_request_message,
            max_response_message,
            largest_reservation,
            request: l.request_memory.unwrap_or((32 * MIB).max(max_request_message)),
            response: l.response_memory.unwrap_or((64 * MIB).max(connection_response)),
            connection_response,
        }
    }
}

/// The largest memory budget accepted (1 TiB).
pub const MAX_MEMORY: usize = 1 << 40;

/// The memory budgets of a service ([`Config::budgets`]): what clients can make
/// it hold beyond each connection's own buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// The largest gRPC request message decoded (tonic's
    /// `max_decoding_message_size`): an `Unseal` of `max_batch` IDs.
    pub max_request_message: usize,
    /// The largest gRPC response message (`max_encoding_message_size`): a `Batch`
    /// of `max_batch` IDs.
    pub max_response_message: usize,
    /// The most one response reserves at once.
    pub largest_reservation: usize,
    /// gRPC request bodies buffered at once, over every connection.
    pub request: usize,
    /// Responses made and not yet sent, over every connection.
    pub response: usize,
    /// The same, per connection.
    pub connection_response: usize,
}

/// One running service: a generator shared by every request.
#[derive(Debug)]
pub struct Service {
    /// The generator in use: replaced by the lease supervisor (lease.rs) when a
    /// lost lease is taken again.
    generator: std::sync::RwLock<Arc<Generator>>,
    config: Config,
    /// The lease supervisor's record (lease.rs): how long without a held lease.
    lease: lease::Watch,
    metrics: metrics::Metrics,
    draining: AtomicBool,
    /// The open connections, once serving (for the metrics).
    conns: std::sync::Mutex<Option<Arc<conn::Conns>>>,
    /// `grpc.health.v1`: the statuses, and the service that answers them.
    health: (tonic_health::server::HealthReporter, grpc::HealthServer),
    /// The access log, when on ([`Config::access_log`]).
    access: Option<access::AccessLog>,
    /// [`Config::budgets`], and the server-wide request and response budgets.
    budgets: Budgets,
    requests: Arc<conn::Budget>,
    responses: Arc<tokio::sync::Semaphore>,
    /// The TLS and token files, once serving (for a reload on SIGHUP).
    security: std::sync::Mutex<Option<Arc<security::Security>>>,
    /// [`Service::openapi`], made once: every answer shares it, so the answers a
    /// client leaves unread hold no copy of it (docs/service.md, "Memory budget").
    openapi: axum::body::Bytes,
}

type Shared = Arc<Service>;

impl Service {
    /// A service issuing from `generator`, configured by `config`.
    ///
    /// Errors ([`Error::Config`]): those of [`Config::validate`]; a sealer whose
    /// width is not the layout's (`seal_key_file`).
    pub fn new(generator: Generator, config: Config) -> Result<Arc<Service>, Error> {
        config.validate()?;
        let bits = generator.layout().total_bits();
        if let Some(sealer) = &config.sealer
            && sealer.bits() != bits
        {
            return Err(Error::Config {
                field: "seal_key_file",
                message: format!(
                    "the sealer seals {}-bit IDs, but the generator's layout has {bits} bits",
                    sealer.bits()
                ),
            });
        }
        let access = match config.access_log {
            false => None,
            true => Some(access::AccessLog::start().map_err(|e| Error::Config {
                field: "access_log",
                message: format!("cannot start the access log's writer: {e}"),
            })?),
        };
        let budgets = config.budgets();
        let openapi = OPENAPI
            .replacen(OPENAPI_MAX_BATCH, &format!("\"maximum\": {}", config.max_batch), 1)
            .into();
        Ok(Arc::new_cyclic(|me| {
            let metrics = metrics::Metrics::new(me.clone());
            metrics.sealing.set(i64::from(config.sealer.is_some()));
            Service {
                budgets,
                requests: Arc::new(conn::Budget::new(budgets.request)),
                responses: Arc::new(tokio::sync::Semaphore::new(budgets.response)),
                security: std::sync::Mutex::new(None),
                generator: std::sync::RwLock::new(Arc::new(generator)),
                lease: lease::Watch::default(),
                config,
                metrics,
                draining: AtomicBool::new(false),
                conns: std::sync::Mutex::new(None),
                health: grpc::health(),
                access,
                openapi,
            }
        }))
    }

    /// The OpenAPI document this service serves at `/openapi.json`: [`OPENAPI`]
    /// with its own `--max-batch`.
    pub fn openapi(&self) -> String {
        String::from_utf8_lossy(&self.openapi).into_owned()
    }

    /// Whether issued IDs are sealed ([`Config::sealer`]).
    pub fn is_sealing(&self) -> bool {
        self.config.sealer.is_some()
    }

    /// The sealer, or the `sealing_not_configured` refusal of `/v1/unseal`,
    /// `?sealed=1` and gRPC `Unseal`.
    fn sealer(&self) -> Result<&Sealer, ApiError> {
        self.config.sealer.as_ref().ok_or_else(|| ApiError {
            status: StatusCode::CONFLICT,
            kind: "sealing_not_configured",
            parameter: None,
            message: "sealing is not configured: start the service with --seal-key-file FILE".into(),
        })
    }

    /// Unseals `id` ([`Config::sealer`]); a number outside the layout is refused
    /// naming `id`.
    fn unseal(&self, id: u64) -> Result<u64, ApiError> {
        self.sealer()?
            .unseal(id)
            .map_err(|e| ApiError::bad("id", e.to_string()))
    }

    /// How many IDs this service has issued (HTTP and gRPC).
    pub fn issued(&self) -> u64 {
        self.metrics.issued.get()
    }

    /// The generator in use now (a lost lease is replaced by a new one).
    pub fn generator(&self) -> Arc<Generator> {
        self.generator.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Why the service may not issue now (`None` when it may): shutting down, or a
    /// leased node id that is not provably held.
    pub fn not_ready(&self) -> Option<String> {
        self.not_ready_with(&self.generator())
    }

    /// [`Service::not_ready`], of the generator `g` already in hand.
    fn not_ready_with(&self, g: &Generator) -> Option<String> {
        if self.draining.load(Ordering::Acquire) {
            return Some("shutting down".into());
        }
        match g.lease_state() {
            None | Some(LeaseState::Held) => None,
            Some(state) => Some(format!("node-id lease {state}")),
        }
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Puts `new` in place of the generator (whose lease was lost) and returns the
    /// old one; gives `new` back when the service is draining.
    pub(crate) fn replace_generator(&self, new: Arc<Generator>) -> Result<Arc<Generator>, Arc<Generator>> {
        let mut g = self.generator.write().unwrap_or_else(|e| e.into_inner());
        if self.is_draining() {
            return Err(new);
        }
        let old = std::mem::replace(&mut *g, new);
        self.metrics.retire(&old);
        Ok(old)
    }

    /// Why the process counts as not live (`/healthz` 503): a leased service that
    /// has held no lease for longer than its liveness timeout ([`lease::supervise`]).
    pub fn not_live(&self) -> Option<String> {
        self.lease.liveness_failure()
    }

    /// Loads the TLS and token files again now, changed or not (SIGHUP; they are
    /// also reloaded within 2 s of a change). Blocking file reads: call it off the
    /// async workers. Nothing before [`serve`] has loaded them.
    pub fn reload_files(&self) {
        let s = self.security.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(s) = s {
            s.reload_now();
            tracing::info!("SIGHUP: TLS and token files reloaded");
        }
    }

    /// Bytes of the request and response budgets in use now (read by the trim
    /// watch, which runs on glibc only).
    #[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
    pub(crate) fn memory_in_use(&self) -> usize {
        let free = self.responses.available_permits();
        self.requests.held() + self.budgets.response.saturating_sub(free)
    }

    /// Marks the service as draining: `/readyz` turns 503 and no more IDs are issued.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Stops issuing and gives the node id back (recording the last timestamp).
    pub fn shutdown(&self) {
        self.start_draining();
        // Under the write lock: a generator the supervisor leases concurrently is
        // either in place now (and released here) or sees the drain and releases
        // itself (lease.rs).
        let g = self.generator.write().unwrap_or_else(|e| e.into_inner());
        g.release_lease();
    }

    /// Issues when ready, from the generator whose readiness was checked (one
    /// read of the generator in use per request).
    fn issue(&self, out: &mut [u64]) -> Result<(), ApiError> {
        let g = self.generator();
        if let Some(why) = self.not_ready_with(&g) {
            return Err(ApiError::unavailable("not_ready", why));
        }
        self.issue_from(&g, out)
    }

    /// Issues from `g`: the generator a multi-chunk response started with, so that
    /// one response never mixes two leases' IDs. Every issuing path (HTTP, gRPC,
    /// streamed chunks) comes through here, so with a sealer no plain ID leaves.
    fn issue_from(&self, g: &Generator, out: &mut [u64]) -> Result<(), ApiError> {
        g.fill(out).map_err(ApiError::from)?;
        if let Some(sealer) = &self.config.sealer {
            for id in out.iter_mut() {
                // The generator's IDs are within its layout, the sealer's width:
                // this cannot fail, and is reported rather than unwrapped.
                *id = sealer.seal(*id).map_err(ApiError::from)?;
            }
        }
        self.metrics.issued.inc_by(out.len() as u64);
        Ok(())
    }
}

/// The IDs of one large response, made one chunk at a time when the body is
/// polled, each chunk on the blocking pool (the wait policy may sleep until the
/// next tick). Each chunk's room is reserved from the connection's and the server's
/// response budgets before it is made ([`conn::Flow::reserve`]), and handed to its
/// data frame once made, which holds it until HTTP/2 has written it: a client that
/// reads nothing stops the issuing once its connection's budget is used. The caller
/// checks readiness before the first chunk.
pub(crate) struct IdChunks {
    svc: Arc<Service>,
    generator: Arc<Generator>,
    /// IDs still to make; `None`: endless (a gRPC `Stream` with `n` 0).
    left: Option<u64>,
    chunk: usize,
    pending: Option<tokio::task::JoinHandle<Result<Vec<u64>, ApiError>>>,
    failed: bool,
    /// The response's flow (its connection's budgets), and what one ID of a chunk
    /// holds until it is written (the IDs and their encoding).
    flow: Option<Arc<conn::Flow>>,
    bytes_per_id: usize,
    reserving: Option<Pin<Box<dyn Future<Output = Option<conn::Reserved>> + Send>>>,
    reserved: Option<conn::Reserved>,
}

impl std::fmt::Debug for IdChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdChunks")
            .field("left", &self.left)
            .field("chunk", &self.chunk)
            .finish_non_exhaustive()
    }
}

/// Bytes reserved for a response beyond its IDs' (framing, headers).
pub(crate) const RESERVE_OVERHEAD: usize = 64;

impl IdChunks {
    /// `flow`: the response's flow (the request's extension);
    /// `bytes_per_id`: what one ID holds until it is written.
    pub(crate) fn new(
        svc: Arc<Service>,
        total: Option<u64>,
        chunk: usize,
        flow: Option<Arc<conn::Flow>>,
        bytes_per_id: usize,
    ) -> IdChunks {
        IdChunks {
            generator: svc.generator(),
            svc,
            left: total,
            chunk: chunk.max(1),
            pending: None,
            failed: false,
            flow,
            bytes_per_id,
            reserving: None,
            reserved: None,
        }
    }
}

impl tokio_stream::Stream for IdChunks {
    type Item = Result<Vec<u64>, ApiError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        if this.pending.is_none() {
            let len = match this.left {
                Some(0) => return Poll::Ready(None),
                Some(left) => left.min(this.chunk as u64) as usize,
                None => this.chunk,
            };
            if let Some(flow) = &this.flow {
                if this.reserving.is_none() {
                    let (flow, bytes) = (flow.clone(), len * this.bytes_per_id + RESERVE_OVERHEAD);
                    this.reserving = Some(Box::pin(async move { flow.reserve(bytes).await }));
                }
                if let Some(r) = this.reserving.as_mut() {
                    this.reserved = std::task::ready!(r.as_mut().poll(cx));
                    this.reserving = None;
                }
            }
            if let Some(left) = &mut this.left {
                *left -= len as u64;
            }
            let (svc, g) = (this.svc.clone(), this.generator.clone());
            this.pending = Some(tokio::task::spawn_blocking(move || {
                let mut ids = vec![0u64; len];
                svc.issue_from(&g, &mut ids).map(|()| ids)
            }));
        }
        let Some(task) = this.pending.as_mut() else {
            return Poll::Ready(None);
        };
        let done = std::task::ready!(std::pin::Pin::new(task).poll(cx));
        this.pending = None;
        // Made: its data frame carries its room from now on.
        if let (Some(flow), Some(r)) = (&this.flow, this.reserved.take()) {
            flow.made(r);
        }
        let item = done
            .map_err(|e| ApiError::unavailable("internal", format!("chunk task failed: {e}")))
            .and_then(|r| r);
        this.failed = item.is_err();
        if let Err(e) = &item {
            tracing::warn!("response cut short: {}", e.message);
        }
        Poll::Ready(Some(item))
    }
}

impl Drop for IdChunks {
    fn drop(&mut self) {
        if let Some(task) = &self.pending {
            task.abort();
        }
    }
}

/// The HTTP routes and the gRPC services of a service: `/flakeid.v1.Flakeid/*`,
/// `grpc.health.v1` and server reflection.
pub fn router(service: Arc<Service>) -> Router {
    let app = Router::new()
        .route_service("/flakeid.v1.Flakeid/{*method}", grpc::Grpc::server(service.clone()))
        .route_service("/grpc.health.v1.Health/{*method}", service.health.1.clone())
        .route("/v1/id", get(one_id))
        .route("/v1/ids", get(many_ids))
        .route("/v1/decode/{id}", get(decode_id))
        .route("/v1/unseal/{id}", get(unseal_id))
        .route("/v1/layout", get(layout_info))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(service);
    match grpc::reflection() {
        Some((v1, v1alpha)) => app.merge(v1).merge(v1alpha),
        None => app,
    }
}

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting,
/// drains in-flight requests (at most [`DRAIN_TIMEOUT`]) and releases the lease.
/// Connections are bounded by the service's [`Limits`] (conn.rs).
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with_probes(listener, None, service, shutdown).await
}

/// Connections at once on the probe listener ([`serve_with_probes`]).
pub const PROBE_CONNECTIONS: usize = 64;

/// [`serve`], and with `probes` a second listener that answers `/healthz` and
/// `/readyz` only, in plain HTTP without client certificates or tokens (a
/// Kubernetes `httpGet` probe beside mTLS), with connection slots of its own
/// ([`PROBE_CONNECTIONS`]) that no client of the API can take. It answers
/// until the drain is over.
pub async fn serve_with_probes(
    listener: tokio::net::TcpListener,
    probes: Option<tokio::net::TcpListener>,
    service: Arc<Service>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = router(service.clone());
    let security = security::Security::load(service.config.security.clone())?;
    *service.security.lock().unwrap_or_else(|e| e.into_inner()) = Some(security.clone());
    let s = &service.config.security;
    if s.tls_cert.is_some() || s.auth_token_file.is_some() {
        tokio::spawn(security.clone().watch());
    }
    let limits = service.config.limits.clone();
    let ready = grpc::set_health(&service).await;
    tokio::spawn(grpc::watch_health(Arc::downgrade(&service), ready));
    tokio::spawn(trim::run(Arc::downgrade(&service)));
    let (probes_done, probes_stop) = tokio::sync::oneshot::channel::<()>();
    let probe_loop = match probes {
        None => None,
        Some(l) => {
            let app = probe_router(service.clone());
            let plain = security::Security::load(security::SecurityFiles::default())?;
            let conns = conn::Conns::new(PROBE_CONNECTIONS, PROBE_CONNECTIONS);
            let stop = async move {
                let _ = probes_stop.await;
            };
            Some(tokio::spawn(conn::accept_loop(
                l,
                app,
                service.clone(),
                plain,
                conns,
                stop,
                Duration::from_secs(1),
                true,
            )))
        }
    };
    let conns = conn::Conns::new(limits.connection_cap(), limits.max_connections_per_client);
    *service.conns.lock().unwrap_or_else(|e| e.into_inner()) = Some(conns.clone());
    let draining = service.clone();
    let shutdown = async move {
        shutdown.await;
        tracing::info!("shutting down: draining in-flight requests");
        draining.start_draining();
    };
    if !conn::accept_loop(
        listener,
        app,
        service.clone(),
        security,
        conns,
        shutdown,
        DRAIN_TIMEOUT,
        false,
    )
    .await
    {
        tracing::warn!("requests still in flight after {DRAIN_TIMEOUT:?}: closing them");
    }
    let _ = probes_done.send(());
    if let Some(task) = probe_loop {
        let _ = task.await;
    }
    service.shutdown();
    tracing::info!("lease released; stopped");
    Ok(())
}

/// The routes of the probe listener: `/healthz` and `/readyz`.
fn probe_router(service: Arc<Service>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .with_state(service)
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

use flakeid_core::present::json_string;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = format!("{{\"error\":{}", json_string(self.kind));
        if let Some(p) = self.parameter {
            let _ = write!(body, ",\"parameter\":{}", json_string(p));
        }
        let _ = writeln!(body, ",\"message\":{}}}", json_string(&self.message));
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            // Not ready (lease, drain) or refused by the generator: both pass.
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

impl ApiError {
    /// The JSON error for a status the server writes outside any route (414, 431,
    /// an unreadable path).
    pub(crate) fn plain(status: StatusCode, kind: &'static str, parameter: &'static str, message: String) -> ApiError {
        ApiError {
            status,
            kind,
            parameter: Some(parameter),
            message,
        }
    }
}

/// Records an error response in the metrics (requests and their latency are
/// counted for every route in conn.rs) and turns the result into a response.
fn finish(svc: &Service, result: Result<Response, ApiError>) -> Response {
    match result {
        Ok(r) => r,
        Err(e) => {
            svc.metrics
                .errors
                .get_or_create(&metrics::KindLabels { kind: e.kind })
                .inc();
            e.into_response()
        }
    }
}

/// Content negotiation (RFC 9110 §12.5.1): the offer with the highest q-value
/// among the `Accept` ranges that match it (the most specific range decides an
/// offer's q: `type/sub;ids=…` over `type/sub` over `type/*` over `*/*`), ties
/// going to the earlier offer. Media types compare case-insensitively. Of a
/// range's parameters only `ids` counts (`application/json; ids=number`, issue
/// 27): a range that names it matches only the offer with the same value; other
/// parameters (`charset`) are ignored. No `Accept` header: the first offer. Every
/// offer at q=0 or unmatched: 406 naming the offers.
fn negotiate(headers: &HeaderMap, offers: &[&'static str]) -> Result<usize, ApiError> {
    let mut ranges: Vec<(String, Option<String>, f32)> = Vec::new();
    for v in headers.get_all(header::ACCEPT) {
        let Ok(v) = v.to_str() else { continue };
        for item in v.split(',') {
            let (media, ids, q) = media_range(item);
            if !media.is_empty() {
                ranges.push((media, ids, q));
            }
        }
    }
    if ranges.is_empty() {
        return Ok(0);
    }
    let mut best: Option<(usize, f32)> = None;
    for (i, offer) in offers.iter().enumerate() {
        let (offer_media, offer_ids, _) = media_range(offer);
        let kind = offer_media.split('/').next().unwrap_or("");
        let mut found: Option<(u8, f32)> = None; // (specificity, q)
        for (media, ids, q) in &ranges {
            if ids.is_some() && *ids != offer_ids {
                continue;
            }
            let spec = if *media == offer_media {
                if ids.is_some() { 4 } else { 3 }
            } else if media.strip_suffix("/*") == Some(kind) {
                2
            } else if media == "*/*" {
                1
            } else {
                continue;
            };
            if found.is_none_or(|(s, _)| spec > s) {
                found = Some((spec, *q));
            }
        }
        if let Some((_, q)) = found
            && q > 0.0
            && best.is_none_or(|(_, bq)| q > bq)
        {
            best = Some((i, q));
        }
    }
    best.map(|(i, _)| i).ok_or_else(|| ApiError {
        status: StatusCode::NOT_ACCEPTABLE,
        kind: "not_acceptable",
        parameter: Some("accept"),
        message: format!(
            "no acceptable representation: this route serves {} (or say ?format=)",
            offers.join(", ")
        ),
    })
}

/// One media range of `Accept` (or an offer): the type in lower case, its `ids`
/// parameter (lower case, unquoted), its q-value (1 when absent, 0 when unreadable).
fn media_range(item: &str) -> (String, Option<String>, f32) {
    let mut parts = item.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let (mut ids, mut q) = (None, 1.0);
    for p in parts {
        let Some((k, v)) = p.split_once('=') else { continue };
        let v = v.trim().trim_matches('"');
        if k.trim().eq_ignore_ascii_case("q") {
            q = v.parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0);
        } else if k.trim().eq_ignore_ascii_case("ids") {
            ids = Some(v.to_ascii_lowercase());
        }
    }
    (media, ids, q)
}

/// Whether `Accept` names `ids=number` in any range.
fn asks_for_numbers(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| media_range(item).1.as_deref() == Some("number"))
}

/// The largest layout whose IDs are all exact JavaScript numbers (2^53 - 1).
pub const JS_SAFE_BITS: u32 = 53;

fn typed(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.into(),
    )
        .into_response()
}

/// A response carrying IDs: never cached or shared (each request gets new IDs),
/// and its form depends on `Accept`. HEAD gets the headers and issues nothing.
fn ids_response(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    // Inserted one by one: a clone of a map made once costs more, as its table then
    // has no room for the `content-length` axum adds (measured: 547 + 1,761
    // instructions against 676 + 183).
    let mut r = Response::new(body.into());
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    r
}

/// The body of a HEAD answer to an ID route: of unknown length, so that no
/// `Content-Length` is sent. GET's length depends on the IDs it would issue (a
/// sealed ID has any number of digits), which HEAD does not issue; a length of 0
/// would be false.
fn head_body() -> axum::body::Body {
    axum::body::Body::from_stream(tokio_stream::empty::<Result<axum::body::Bytes, std::io::Error>>())
}

/// The content types of `/v1/id`'s two forms.
const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
const APPLICATION_JSON: &str = "application/json";

fn query_params(
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
    allowed: &[&'static str],
) -> Result<HashMap<String, String>, ApiError> {
    let Query(pairs) = q.map_err(|e| ApiError::bad("query", format!("unreadable query string: {e}")))?;
    let mut map = HashMap::with_capacity(pairs.len());
    for (k, v) in pairs {
        let Some(name) = allowed.iter().find(|a| **a == k) else {
            let shown: String = k.chars().take(32).collect();
            return Err(ApiError::bad(
                "query",
                format!("unknown parameter {shown:?} (allowed: {})", allowed.join(", ")),
            ));
        };
        if map.insert(k, v).is_some() {
            // Which one a client meant is not ours to guess.
            return Err(ApiError::bad(name, format!("{name} is given more than once")));
        }
    }
    Ok(map)
}

/// `GET /v1/id` through the router. It takes the request whole, to read its
/// method, headers and query in place: the `HeaderMap` extractor would copy the
/// headers on every call. The connection's service (conn.rs) answers GET and HEAD
/// of `/v1/id` itself, through [`one_id_answer`], without the router.
async fn one_id(State(svc): State<Shared>, req: axum::extract::Request) -> Response {
    one_id_answer(&svc, req.method(), req.uri(), req.headers())
}

/// The answer to `GET` or `HEAD /v1/id`.
pub(crate) fn one_id_answer(svc: &Service, method: &Method, uri: &axum::http::Uri, headers: &HeaderMap) -> Response {
    let result = (|| {
        // No query string (the usual request): nothing to parse.
        let json = match uri.query() {
            None => wants_json(None, headers)?,
            Some(_) => {
                let q = Query::<Vec<(String, String)>>::try_from_uri(uri);
                let params = query_params(q, &["format"])?;
                wants_json(params.get("format").map(String::as_str), headers)?
            }
        };
        if method == Method::HEAD {
            let ct = if json { APPLICATION_JSON } else { TEXT_PLAIN };
            return Ok(ids_response(ct, head_body()));
        }
        let mut id = [0u64; 1];
        svc.issue(&mut id)?;
        Ok(one_id_response(json, id[0]))
    })();
    finish(svc, result)
}

/// The form of a one-ID answer (`/v1/id`, `/v1/unseal`): `?format=text|json`, else
/// by `Accept` (text first). True: JSON.
fn wants_json(format: Option<&str>, headers: &HeaderMap) -> Result<bool, ApiError> {
    match format {
        Some("json") => Ok(true),
        Some("text") => Ok(false),
        Some(other) => {
            let shown: String = other.chars().take(32).collect();
            Err(ApiError::bad(
                "format",
                format!("format must be text or json, got {shown:?}"),
            ))
        }
        None => Ok(negotiate(headers, &["text/plain", "application/json"])? == 1),
    }
}

/// One ID as decimal text or as `{"id":"…"}` (a string: JS numbers lose IDs).
/// Written on the stack and copied once: `format!` would grow its `String`, and
/// `write!` goes through the formatting machinery.
fn one_id_response(json: bool, id: u64) -> Response {
    let (buf, len) = one_id_text(json, id);
    let ct = if json { APPLICATION_JSON } else { TEXT_PLAIN };
    ids_response(ct, axum::body::Bytes::copy_from_slice(&buf[..len]))
}

/// The body of [`one_id_response`] and its length: the longest is
/// `{"id":"18446744073709551615"}` and a newline, 31 bytes.
fn one_id_text(json: bool, id: u64) -> ([u8; 32], usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(id).as_bytes();
    let mut buf = [0u8; 32];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        buf[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    if json {
        put(b"{\"id\":\"");
    }
    put(digits);
    if json {
        put(b"\"}");
    }
    put(b"\n");
    (buf, n)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BatchFormat {
    Json,
    Ndjson,
    Octets,
    /// A JSON array of numbers (`Accept: application/json; ids=number`), for
    /// layouts of at most [`JS_SAFE_BITS`] bits.
    JsonNumbers,
}

async fn many_ids(
    State(svc): State<Shared>,
    method: Method,
    headers: HeaderMap,
    flow: Option<axum::Extension<Arc<conn::Flow>>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let result = many_ids_inner(&svc, method == Method::HEAD, &headers, flow.map(|e| e.0), q).await;
    finish(&svc, result)
}

async fn many_ids_inner(
    svc: &Shared,
    head: bool,
    headers: &HeaderMap,
    flow: Option<Arc<conn::Flow>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
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
        None => {
            // JSON numbers only where every ID is an exact JavaScript number.
            let bits = svc.generator().layout().total_bits();
            let numbers = bits <= JS_SAFE_BITS;
            let all = [
                BatchFormat::Json,
                BatchFormat::Ndjson,
                BatchFormat::Octets,
                BatchFormat::JsonNumbers,
            ];
            let offers = [
                "application/json",
                "application/x-ndjson",
                "application/octet-stream",
                "application/json; ids=number",
            ];
            let served = if numbers { 4 } else { 3 };
            match negotiate(headers, &offers[..served]) {
                Ok(i) => all[i],
                Err(_) if !numbers && asks_for_numbers(headers) => {
                    let name = layout_name(svc.generator().layout());
                    return Err(ApiError {
                        status: StatusCode::NOT_ACCEPTABLE,
                        kind: "not_acceptable",
                        parameter: Some("accept"),
                        message: format!(
                            "ids=number needs a layout of at most {JS_SAFE_BITS} bits (JavaScript numbers are exact up to 2^53); this service's layout {name} has {bits} bits: take the IDs as strings (application/json), or serve a layout such as js53"
                        ),
                    });
                }
                Err(e) => return Err(e),
            }
        }
    };
    if head {
        return Ok(ids_response(format.content_type(), head_body()));
    }
    // Octets: 8 bytes an ID and the IDs themselves; text: at most 23 and the IDs.
    let bytes_per_id = if format == BatchFormat::Octets { 16 } else { 32 };
    if n < CHUNK {
        // Room for it until it is written, as for a chunk (conn.rs, `Flow`).
        if let Some(flow) = &flow
            && let Some(r) = flow.reserve(n * bytes_per_id + RESERVE_OVERHEAD).await
        {
            flow.made(r);
        }
        let mut ids = vec![0u64; n];
        svc.issue(&mut ids)?;
        let mut body = Vec::new();
        format.write(&ids, true, true, &mut body);
        return Ok(ids_response(format.content_type(), body));
    }
    // Larger batches are made as the client reads, one chunk at a time: a client
    // that stops reading stops the issuing, and no whole batch sits in memory.
    if let Some(why) = svc.not_ready() {
        return Err(ApiError::unavailable("not_ready", why));
    }
    let mut first = true;
    let chunks = IdChunks::new(svc.clone(), Some(n as u64), CHUNK, flow, bytes_per_id);
    let mut left = n;
    let body = tokio_stream::StreamExt::map(chunks, move |r| {
        r.map(|ids| {
            left -= ids.len();
            let mut out = Vec::new();
            format.write(&ids, first, left == 0, &mut out);
            first = false;
            axum::body::Bytes::from(out)
        })
        .map_err(|e| std::io::Error::other(e.message))
    });
    Ok(ids_response(format.content_type(), axum::body::Body::from_stream(body)))
}

impl BatchFormat {
    fn content_type(self) -> &'static str {
        match self {
            BatchFormat::Json => "application/json",
            BatchFormat::Ndjson => "application/x-ndjson",
            BatchFormat::Octets => "application/octet-stream",
            BatchFormat::JsonNumbers => "application/json; ids=number",
        }
    }

    /// Appends `ids` in this format; `first` and `last` say whether they open or
    /// close the body.
    fn write(self, ids: &[u64], first: bool, last: bool, out: &mut Vec<u8>) {
        use std::io::Write as _;
        match self {
            BatchFormat::Octets => {
                out.reserve(ids.len() * 8);
                for id in ids {
                    out.extend_from_slice(&id.to_be_bytes());
                }
            }
            BatchFormat::Json | BatchFormat::JsonNumbers => {
                out.reserve(ids.len() * 23 + 3);
                if first {
                    out.push(b'[');
                }
                let quote = if self == BatchFormat::Json { "\"" } else { "" };
                for (i, id) in ids.iter().enumerate() {
                    let sep = if first && i == 0 { "" } else { "," };
                    let _ = write!(out, "{sep}{quote}{id}{quote}");
                }
                if last {
                    out.extend_from_slice(b"]\n");
                }
            }
            BatchFormat::Ndjson => {
                out.reserve(ids.len() * 22);
                for id in ids {
                    let _ = writeln!(out, "\"{id}\"");
                }
            }
        }
    }
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
    flakeid_core::present::parts_json(layout, id, p)
}

/// A layout's preset name, or `custom`.
pub fn layout_name(layout: &Layout) -> &'static str {
    layout.display_name()
}

/// The ID in a path (`/v1/decode/{id}`, `/v1/unseal/{id}`). One rule with the core
/// and the CLI: `from=` reads exactly that form; without it, zero-padded or
/// otherwise ambiguous text is refused, asking.
fn path_id(path: Result<Path<String>, PathRejection>, params: &HashMap<String, String>) -> Result<u64, ApiError> {
    let Path(text) = path.map_err(|e| ApiError::bad("id", format!("unreadable id in the path: {e}")))?;
    match params.get("from") {
        Some(from) => {
            let enc = flakeid_core::Encoding::parse(from).map_err(|e| ApiError::bad("from", e.to_string()))?;
            flakeid_core::decode(&text, enc)
        }
        None => parse_any(&text),
    }
    .map_err(|e| ApiError::bad("id", e.to_string()))
}

async fn decode_id(
    State(svc): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let result = (|| {
        let params = query_params(q, &["from", "sealed"])?;
        let sealed = match params.get("sealed").map(String::as_str) {
            None | Some("0" | "false") => false,
            Some("1" | "true") => true,
            Some(other) => {
                let shown: String = other.chars().take(32).collect();
                return Err(ApiError::bad(
                    "sealed",
                    format!("sealed must be 1, true, 0 or false, got {shown:?}"),
                ));
            }
        };
        if sealed {
            svc.sealer()?;
        }
        let mut id = path_id(path, &params)?;
        if sealed {
            id = svc.unseal(id)?;
        }
        let g = svc.generator();
        let layout = g.layout();
        let p = layout
            .try_decompose(id)
            .map_err(|e| ApiError::bad("id", e.to_string()))?;
        Ok(typed("application/json", format!("{}\n", parts_json(layout, id, &p))))
    })();
    finish(&svc, result)
}

/// `GET /v1/unseal/{id}`: the plain ID a sealed one stands for, in the forms of
/// `/v1/id` (text, or JSON by `?format=json` or `Accept`).
async fn unseal_id(
    State(svc): State<Shared>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let result = (|| {
        let params = query_params(q, &["from", "format"])?;
        let json = wants_json(params.get("format").map(String::as_str), &headers)?;
        svc.sealer()?;
        let id = svc.unseal(path_id(path, &params)?)?;
        let mut r = if json {
            typed("application/json", format!("{{\"id\":\"{id}\"}}\n"))
        } else {
            typed("text/plain; charset=utf-8", format!("{id}\n"))
        };
        r.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept"));
        Ok(r)
    })();
    finish(&svc, result)
}

fn lease_text(g: &Generator) -> String {
    g.lease_state().map_or("none", |s| s.as_str()).into()
}

async fn layout_info(State(svc): State<Shared>) -> Response {
    let g = &*svc.generator();
    let l = g.layout();
    let body = format!(
        "{{\"layout\":\"{}\",\"time_bits\":{},\"datacenter_bits\":{},\"worker_bits\":{},\"sequence_bits\":{},\"tick_ms\":{},\"epoch_ms\":{},\"node\":{},\"datacenter\":{},\"worker\":{},\"lease\":\"{}\",\"lease_epoch\":{},\"max_batch\":{}}}\n",
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
        svc.lease.releases.load(Ordering::Relaxed),
        svc.config.max_batch,
    );
    finish(&svc, Ok(typed("application/json", body)))
}

async fn healthz(State(svc): State<Shared>) -> Response {
    let result = match svc.not_live() {
        None => Ok(typed("text/plain; charset=utf-8", "ok\n")),
        Some(why) => Err(ApiError::unavailable("not_live", why)),
    };
    finish(&svc, result)
}

async fn readyz(State(svc): State<Shared>) -> Response {
    let result = match svc.not_ready() {
        None => Ok(typed("text/plain; charset=utf-8", "ready\n")),
        Some(why) => Err(ApiError::unavailable("not_ready", why)),
    };
    finish(&svc, result)
}

async fn metrics(State(svc): State<Shared>) -> Response {
    let mut body = String::new();
    if let Err(e) = prometheus_client::encoding::text::encode(&mut body, &svc.metrics.registry) {
        return finish(
            &svc,
            Err(ApiError::unavailable(
                "internal",
                format!("metrics encoding failed: {e}"),
            )),
        );
    }
    typed("application/openmetrics-text; version=1.0.0; charset=utf-8", body)
}

/// The OpenAPI 3 description of every HTTP route: written by hand, kept here
/// only, checked against the running server by schemathesis (tests/serve). The
/// largest `n` of `/v1/ids` in it is [`DEFAULT_MAX_BATCH`]; a service serves its
/// own ([`Service::openapi`]).
pub const OPENAPI: &str = include_str!("openapi.json");

/// The one place in [`OPENAPI`] that names the largest `n`.
const OPENAPI_MAX_BATCH: &str = "\"maximum\": 100000";

async fn openapi(State(svc): State<Shared>) -> Response {
    typed("application/json", svc.openapi.clone())
}

async fn not_found(State(svc): State<Shared>) -> Response {
    let e = ApiError {
        status: StatusCode::NOT_FOUND,
        kind: "not_found",
        parameter: Some("path"),
        message: "no such route (try /v1/id, /v1/ids?n=N, /v1/decode/{id}, /v1/unseal/{id}, /v1/layout, /healthz, /readyz, /metrics, /openapi.json)"
            .into(),
    };
    finish(&svc, Err(e))
}

async fn not_allowed(State(svc): State<Shared>) -> Response {
    let e = ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        kind: "method_not_allowed",
        parameter: Some("method"),
        message: "only GET and HEAD are served here".into(),
    };
    let mut r = finish(&svc, Err(e));
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_openapi_document_names_the_largest_n_once() {
        assert_eq!(super::DEFAULT_MAX_BATCH, 100_000);
        assert_eq!(super::OPENAPI.matches(super::OPENAPI_MAX_BATCH).count(), 1);
    }

    /// The budgets follow `max_batch`, and one given below what a single
    /// request or response needs is refused naming it.
    #[test]
    fn budgets_fit_the_largest_request_and_response() {
        let mut c = super::Config::default();
        let b = c.budgets();
        assert_eq!(b.max_request_message, 900_064);
        assert_eq!(b.largest_reservation, 1_600_064);
        assert_eq!(
            (b.request, b.response, b.connection_response),
            (32 << 20, 64 << 20, 4 << 20)
        );
        c.max_batch = 10_000_000;
        let b = c.budgets();
        assert_eq!(b.connection_response, b.largest_reservation);
        assert!(b.response >= b.connection_response && b.request >= b.max_request_message);
        c.max_batch = 100_000;
        c.limits.connection_response_memory = Some(1_000_000);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("connection_response_memory") && e.contains("1600064"), "{e}");
        c.limits.connection_response_memory = None;
        c.limits.request_memory = Some(usize::MAX);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("request_memory must be in 900064..=1099511627776"), "{e}");
    }

    /// `/v1/id`'s bodies, written by hand, say what `format!` says.
    #[test]
    fn one_id_bodies_match_format() {
        for id in [0, 1, 9, 10, 42, 1 << 53, 999_999_999_999, u64::MAX - 1, u64::MAX] {
            let (buf, n) = super::one_id_text(false, id);
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), format!("{id}\n"));
            let (buf, n) = super::one_id_text(true, id);
            assert_eq!(
                std::str::from_utf8(&buf[..n]).unwrap(),
                format!("{{\"id\":\"{id}\"}}\n")
            );
        }
    }

    /// Every ID response is uncacheable and varies on `Accept`.
    #[test]
    fn id_responses_carry_their_headers() {
        for ct in [super::TEXT_PLAIN, super::APPLICATION_JSON, "application/x-ndjson"] {
            let r = super::ids_response(ct, ());
            let h = r.headers();
            assert_eq!(h.len(), 3);
            assert_eq!(h["content-type"], ct);
            assert_eq!(h["cache-control"], "no-store");
            assert_eq!(h["vary"], "Accept");
        }
    }
}
