//! The gRPC API (`proto/flakeid.proto`), served on the HTTP port over HTTP/2.
//!
//! `Stream` makes each chunk when the response body is polled for it, which
//! HTTP/2 does only while the client has window: a client that stops reading stops
//! the issuing within about one chunk plus the flow-control window, and holds no
//! thread. The streams of one connection are limited by its HTTP/2 stream cap, and
//! a connection whose client reads nothing is closed by the idle timeout (conn.rs).

use crate::{ApiError, Service};
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
    BatchRequest, BatchResponse, Chunk, NextRequest, NextResponse, StreamRequest, UnsealRequest, UnsealResponse,
};

/// Chunk size of `Stream` when the request says 0.
pub const DEFAULT_CHUNK: usize = crate::CHUNK;

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
        FlakeidServer::new(Grpc { svc })
    }

    fn count(&self, rpc: &'static str, result: &Result<impl Sized, Status>) {
        let code = match result {
            Ok(_) => 0,
            Err(s) => s.code() as u16,
        };
        self.svc
            .metrics
            .grpc
            .get_or_create(&crate::metrics::RpcLabels { rpc, code })
            .inc();
    }
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<Chunk, Status>> + Send>>;

#[tonic::async_trait]
impl Flakeid for Grpc {
    async fn next(&self, _request: Request<NextRequest>) -> Result<Response<NextResponse>, Status> {
        let mut id = [0u64; 1];
        let result = self
            .svc
            .issue(&mut id)
            .map(|()| Response::new(NextResponse { id: id[0] }))
            .map_err(Status::from);
        self.count("Next", &result);
        result
    }

    async fn batch(&self, request: Request<BatchRequest>) -> Result<Response<BatchResponse>, Status> {
        let n = request.into_inner().n as usize;
        let max = self.svc.config.max_batch;
        let result = if !(1..=max).contains(&n) {
            Err(Status::invalid_argument(format!("n: must be in 1..={max}, got {n}")))
        } else {
            let svc = self.svc.clone();
            tokio::task::spawn_blocking(move || {
                let mut ids = vec![0u64; n];
                svc.issue(&mut ids).map(|()| ids)
            })
            .await
            .map_err(|e| Status::internal(format!("batch task failed: {e}")))
            .and_then(|r| r.map_err(Status::from))
            .map(|ids| Response::new(BatchResponse { ids }))
        };
        self.count("Batch", &result);
        result
    }

    type StreamStream = ChunkStream;

    async fn stream(&self, request: Request<StreamRequest>) -> Result<Response<ChunkStream>, Status> {
        let result = self.start_stream(request.into_inner());
        self.count("Stream", &result);
        result
    }

    async fn unseal(&self, request: Request<UnsealRequest>) -> Result<Response<UnsealResponse>, Status> {
        let result = self.unseal_ids(request.into_inner().ids);
        self.count("Unseal", &result);
        result
    }
}

impl Grpc {
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

    fn start_stream(&self, req: StreamRequest) -> Result<Response<ChunkStream>, Status> {
        let max = self.svc.config.max_batch;
        let chunk = match req.chunk as usize {
            0 => DEFAULT_CHUNK.min(max),
            c if c <= max => c,
            c => {
                return Err(Status::invalid_argument(format!(
                    "chunk: must be in 0..={max}, got {c}"
                )));
            }
        };
        if let Some(why) = self.svc.not_ready() {
            return Err(Status::unavailable(why));
        }
        let total = (req.n != 0).then_some(req.n);
        let chunks = crate::IdChunks::new(self.svc.clone(), total, chunk);
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
