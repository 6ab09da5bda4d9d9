//! The gRPC API (`proto/flakeid.proto`), served on the HTTP port over HTTP/2.
//!
//! `Stream` makes each chunk when the response body is polled for it, which
//! HTTP/2 does only while the client has window: a client that stops reading stops
//! the issuing within about one chunk plus the flow-control window, and holds no
//! thread. The streams of one connection are limited by its HTTP/2 stream cap, and
//! a connection whose client reads nothing is closed by the idle timeout (conn/watchdog.rs).
//!
//! Memory: a request message is at most the largest real one (an `Unseal` of
//! `--max-batch` IDs; [`crate::Budgets::max_request_message`]); `Batch` and
//! `Unseal` reserve their answer's room before they make it; a `Stream` of `n`
//! its whole answer's when it fits a connection's budget, else each chunk's
//! ([`crate::budget::Flow::reserve`]). Calls are counted in
//! `flakeid_grpc_calls_total` as they end (conn/bodies.rs, `Tracked`), so that the
//! refusals made before a handler runs (a bad or oversized message, a body over
//! budget or late) are counted too.

use crate::budget::Flow;
use crate::chunks::{IdChunks, no_room, uuid7_chunks};
use crate::config::{CHUNK, RESERVE_OVERHEAD};
use crate::error::{ApiError, BUSY};
use crate::service::Service;
use std::pin::Pin;
use std::sync::Arc;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// The protobuf types and the client and server stubs, generated from
/// `proto/flakeid.proto` and committed (tests/grpc-stubs checks they are fresh;
/// `make grpc-stubs` rewrites them): building the service needs no protoc.
#[allow(missing_debug_implementations, missing_docs, clippy::all)]
pub mod proto {
    include!("generated/flakeid.v1.rs");
}

use proto::flakeid_server::{Flakeid, FlakeidServer};
use proto::{
    BatchRequest, BatchResponse, BatchUuidRequest, Chunk, NextRequest, NextResponse, NextUuidRequest, NextUuidResponse,
    StreamRequest, UnsealRequest, UnsealResponse, UuidChunk,
};

/// The encoded descriptors of `proto/flakeid.proto`, for server reflection
/// (written beside the stubs by tests/grpc-stubs, and checked fresh there).
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!("generated/flakeid.fds.bin");

/// The names `grpc.health.v1` answers for: the server as a whole (`""`) and the
/// ID service. Both follow readiness ([`Service::not_ready`]).
pub const HEALTH_NAMES: [&str; 2] = ["", "flakeid.v1.Flakeid"];

/// `grpc.health.v1.Health`: tonic-health's service, fed by [`Health::watch`].
pub type HealthServer = tonic_health::pb::health_server::HealthServer<tonic_health::server::HealthService>;

/// `grpc.health.v1`: the statuses ([`Health::set`], [`Health::watch`]) and the
/// service that answers them ([`Health::server`]).
#[derive(Clone)]
pub(crate) struct Health {
    reporter: tonic_health::server::HealthReporter,
    server: HealthServer,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health").finish_non_exhaustive()
    }
}

impl Health {
    /// A health reporter and the service that answers from it.
    pub(crate) fn new() -> Health {
        let reporter = tonic_health::server::HealthReporter::new();
        let server = tonic_health::pb::health_server::HealthServer::new(
            tonic_health::server::HealthService::from_health_reporter(reporter.clone()),
        )
        .max_decoding_message_size(SMALL_MESSAGE);
        Health { reporter, server }
    }

    /// The service that answers `grpc.health.v1` (routes.rs).
    pub(crate) fn server(&self) -> HealthServer {
        self.server.clone()
    }

    /// Sets the statuses from `svc`'s readiness now: `SERVING` exactly while
    /// `/readyz` answers 200 (a held lease, not draining), `NOT_SERVING` otherwise.
    /// Returns whether the service is ready.
    pub(crate) async fn set(&self, svc: &Service) -> bool {
        let ready = svc.not_ready().is_none();
        for name in HEALTH_NAMES {
            self.reporter.set_service_status(name, serving(ready)).await;
        }
        ready
    }

    /// Follows readiness every [`HEALTH_POLL`] (from `was`, what [`Health::set`]
    /// last set) until the service is dropped.
    pub(crate) async fn watch(self, svc: std::sync::Weak<Service>, mut was: bool) {
        loop {
            tokio::time::sleep(HEALTH_POLL).await;
            let Some(svc) = svc.upgrade() else { return };
            let ready = svc.not_ready().is_none();
            if ready != was {
                self.set(&svc).await;
                was = ready;
            }
        }
    }
}

/// The largest request message of the health and reflection services: a service
/// or symbol name.
pub const SMALL_MESSAGE: usize = 64 * 1024;

/// How often [`Health::watch`] looks at readiness (a lease lost, a drain begun).
pub const HEALTH_POLL: std::time::Duration = std::time::Duration::from_millis(100);

fn serving(ready: bool) -> tonic_health::ServingStatus {
    if ready {
        tonic_health::ServingStatus::Serving
    } else {
        tonic_health::ServingStatus::NotServing
    }
}

/// Server reflection (v1, and v1alpha for older tools) of the ID service and the
/// health service; `None` (logged) if the descriptors do not load, which the
/// tests rule out.
pub(crate) fn reflection() -> Option<(axum::Router, axum::Router)> {
    let builder = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let built = builder()
        .build_v1()
        .and_then(|v1| builder().build_v1alpha().map(|a| (v1, a)));
    match built {
        Ok((v1, v1alpha)) => Some((
            axum::Router::new().route_service(
                "/grpc.reflection.v1.ServerReflection/{*method}",
                v1.max_decoding_message_size(SMALL_MESSAGE),
            ),
            axum::Router::new().route_service(
                "/grpc.reflection.v1alpha.ServerReflection/{*method}",
                v1alpha.max_decoding_message_size(SMALL_MESSAGE),
            ),
        )),
        Err(e) => {
            tracing::error!("gRPC reflection is off: {e}");
            None
        }
    }
}

/// Chunk size of `Stream` when the request says 0.
pub const DEFAULT_CHUNK: usize = CHUNK;

impl From<ApiError> for Status {
    fn from(e: ApiError) -> Status {
        let text = match e.parameter {
            Some(p) => format!("{p}: {}", e.message),
            None => e.message,
        };
        match e.status.as_u16() {
            400 => Status::invalid_argument(text),
            // sealing_not_configured: the call is fine, the server lacks a key.
            409 => Status::failed_precondition(text),
            503 if e.kind == BUSY => Status::resource_exhausted(text),
            503 => Status::unavailable(text),
            _ => Status::internal(text),
        }
    }
}

/// The tonic service over a shared [`Service`].
#[derive(Debug, Clone)]
pub struct Grpc {
    svc: Arc<Service>,
}

impl Grpc {
    /// The tonic service for `svc`, to be served by axum beside the HTTP routes.
    pub fn server(svc: Arc<Service>) -> FlakeidServer<Grpc> {
        let b = svc.memory.budgets;
        FlakeidServer::new(Grpc { svc })
            .max_decoding_message_size(b.max_request_message)
            .max_encoding_message_size(b.max_response_message)
    }

    /// Room for an answer of `n` IDs (the IDs and their encoding, 16 bytes an ID),
    /// reserved before it is made, from the call's flow (budget.rs): its answer's
    /// data frame carries it until HTTP/2 has written it to the socket. No room in
    /// time: `RESOURCE_EXHAUSTED`.
    async fn reserve(&self, ext: &tonic::Extensions, n: usize) -> Result<(), Status> {
        if let Some(flow) = ext.get::<Arc<Flow>>() {
            let r = flow.reserve(n * 16 + RESERVE_OVERHEAD).await;
            flow.made(r.ok_or_else(no_room)?);
        }
        Ok(())
    }
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<Chunk, Status>> + Send>>;

#[tonic::async_trait]
impl Flakeid for Grpc {
    async fn next(&self, _request: Request<NextRequest>) -> Result<Response<NextResponse>, Status> {
        let ids = self.svc.issue_async(1).await?;
        Ok(Response::new(NextResponse { id: ids[0] }))
    }

    async fn batch(&self, request: Request<BatchRequest>) -> Result<Response<BatchResponse>, Status> {
        let n = self.batch_n(request.get_ref().n)?;
        self.reserve(request.extensions(), n).await?;
        let svc = self.svc.clone();
        tokio::task::spawn_blocking(move || {
            let mut ids = vec![0u64; n];
            svc.issue(&mut ids).map(|()| ids)
        })
        .await
        .map_err(|e| Status::internal(format!("batch task failed: {e}")))
        .and_then(|r| r.map_err(Status::from))
        .map(|ids| Response::new(BatchResponse { ids }))
    }

    type StreamStream = ChunkStream;

    async fn stream(&self, request: Request<StreamRequest>) -> Result<Response<ChunkStream>, Status> {
        let flow = request.extensions().get::<Arc<Flow>>().cloned();
        self.start_stream(request.into_inner(), flow).await
    }

    async fn unseal(&self, request: Request<UnsealRequest>) -> Result<Response<UnsealResponse>, Status> {
        let n = request.get_ref().ids.len();
        if n <= self.svc.config.max_batch {
            self.reserve(request.extensions(), n).await?;
        }
        self.unseal_ids(request.into_inner().ids)
    }

    type BatchUuidStream = Pin<Box<dyn Stream<Item = Result<UuidChunk, Status>> + Send>>;

    async fn batch_uuid(&self, request: Request<BatchUuidRequest>) -> Result<Response<Self::BatchUuidStream>, Status> {
        let n = self.batch_n(request.get_ref().n)?;
        let max = self.svc.config.max_batch;
        let flow = request.extensions().get::<Arc<Flow>>().cloned();
        // A chunk's message stays within the largest answer (a Batch of --max-batch
        // 8-byte IDs): at most half as many 16-byte UUIDs. Each chunk holds its
        // IDs (16 bytes each), and as many bytes again encoded.
        let chunk = CHUNK.min(max / 2).max(1);
        // The whole answer's room first (routes.rs): once started, it finishes.
        if let Some(f) = &flow
            && !f.reserve_whole(crate::config::whole_reservation(n, chunk, 32)).await
        {
            return Err(no_room().into());
        }
        let chunks = uuid7_chunks(self.svc.clone(), n, chunk, flow, 32).await?;
        let stream = tokio_stream::StreamExt::map(chunks, |r| {
            r.map(|ids| {
                let mut uuids = Vec::with_capacity(ids.len() * 16);
                for u in &ids {
                    uuids.extend_from_slice(&u.to_be_bytes());
                }
                UuidChunk { uuids }
            })
            .map_err(Status::from)
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn next_uuid(&self, _request: Request<NextUuidRequest>) -> Result<Response<NextUuidResponse>, Status> {
        let u = self.svc.issue_uuid7().await?;
        Ok(Response::new(NextUuidResponse {
            uuid: u.to_be_bytes().to_vec(),
        }))
    }
}

impl Grpc {
    /// A batch's `n` in `1..=--max-batch` (`Batch`, `BatchUuid`), or `INVALID_ARGUMENT`
    /// naming it.
    fn batch_n(&self, n: u64) -> Result<usize, Status> {
        let max = self.svc.config.max_batch;
        match usize::try_from(n) {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(Status::invalid_argument(format!("n: must be in 1..={max}, got {n}"))),
        }
    }

    fn unseal_ids(&self, ids: Vec<u64>) -> Result<Response<UnsealResponse>, Status> {
        self.svc.sealer()?;
        let max = self.svc.config.max_batch;
        if !(1..=max).contains(&ids.len()) {
            return Err(Status::invalid_argument(format!(
                "ids: must hold 1..={max} IDs, got {}",
                ids.len()
            )));
        }
        let ids = ids
            .into_iter()
            .map(|id| self.svc.unseal(id))
            .collect::<Result<Vec<u64>, ApiError>>()?;
        Ok(Response::new(UnsealResponse { ids }))
    }

    async fn start_stream(&self, req: StreamRequest, flow: Option<Arc<Flow>>) -> Result<Response<ChunkStream>, Status> {
        let max = self.svc.config.max_batch;
        let chunk = match usize::try_from(req.chunk).unwrap_or(usize::MAX) {
            0 => DEFAULT_CHUNK.min(max),
            c if c <= max => c,
            _ => {
                let c = req.chunk;
                return Err(Status::invalid_argument(format!(
                    "chunk: must be in 0..={max}, got {c}"
                )));
            }
        };
        let g = self.svc.generator64()?;
        if let Some(why) = self.svc.not_ready_with(&g) {
            return Err(Status::unavailable(why));
        }
        let total = (req.n != 0).then_some(req.n);
        // Each chunk: its IDs, and as many bytes again encoded. A stream of `n`
        // whose whole answer fits one connection's budget reserves it before its
        // head, as a batch does (routes.rs): once started it finishes. An endless
        // or longer one can hold no such room, and reserves each chunk's.
        if let (Some(f), Some(n)) = (&flow, total.and_then(|n| usize::try_from(n).ok())) {
            let whole = crate::config::whole_reservation(n, chunk, 16);
            if whole <= self.svc.memory.budgets.connection_response && !f.reserve_whole(whole).await {
                return Err(no_room().into());
            }
        }
        let mut chunks = IdChunks::new(self.svc.clone(), g, total, chunk, flow, 16);
        chunks.reserve_first().await?;
        let stream = tokio_stream::StreamExt::map(chunks, |r| {
            r.map(|ids| {
                let mut bytes = Vec::with_capacity(ids.len() * 8);
                for id in &ids {
                    bytes.extend_from_slice(&id.to_be_bytes());
                }
                Chunk { ids: bytes }
            })
            .map_err(Status::from)
        });
        Ok(Response::new(Box::pin(stream)))
    }
}
