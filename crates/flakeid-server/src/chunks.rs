//! The IDs of a large response, made as they are sent: a chunk at a time, each
//! chunk's room reserved from the response budgets before it is made.

use crate::budget::{Flow, Reserved};
use crate::config::RESERVE_OVERHEAD;
use crate::error::ApiError;
use crate::service::{SHUTTING_DOWN, Service};
use flakeid_core::Generator;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The IDs of one large response, made one chunk at a time when the body is
/// polled, each chunk on the blocking pool (the wait policy may sleep until the
/// next tick). Each chunk's room is reserved from the connection's and the server's
/// response budgets before it is made ([`Flow::reserve`]), and handed to its
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
    flow: Option<Arc<Flow>>,
    bytes_per_id: usize,
    reserving: Option<Pin<Box<dyn Future<Output = Option<Reserved>> + Send>>>,
    reserved: Option<Reserved>,
}

impl std::fmt::Debug for IdChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdChunks")
            .field("left", &self.left)
            .field("chunk", &self.chunk)
            .finish_non_exhaustive()
    }
}

impl IdChunks {
    /// `flow`: the response's flow (the request's extension);
    /// `bytes_per_id`: what one ID holds until it is written.
    pub(crate) fn new(
        svc: Arc<Service>,
        generator: Arc<Generator>,
        total: Option<u64>,
        chunk: usize,
        flow: Option<Arc<Flow>>,
        bytes_per_id: usize,
    ) -> IdChunks {
        IdChunks {
            generator,
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

impl IdChunks {
    /// Reserves the first chunk's room now, before the response's head is sent, so
    /// that a response that finds no room is refused whole (`503`, gRPC
    /// `RESOURCE_EXHAUSTED`) rather than started and cut.
    pub(crate) async fn reserve_first(&mut self) -> Result<(), ApiError> {
        let Some(flow) = &self.flow else { return Ok(()) };
        let len = self
            .left
            .map_or(self.chunk, |left| left.min(self.chunk as u64) as usize);
        self.reserved = Some(
            flow.reserve(len * self.bytes_per_id + RESERVE_OVERHEAD)
                .await
                .ok_or_else(no_room)?,
        );
        Ok(())
    }
}

/// Room for `bytes` of a response in its flow's budgets (none: no budget), counted
/// as made: the next data frame carries it until HTTP/2 has written it. Every
/// response reserves through here before it issues.
pub(crate) async fn reserve_room(flow: Option<&Arc<Flow>>, bytes: usize) -> Result<(), ApiError> {
    if let Some(flow) = flow {
        let r = flow.reserve(bytes + RESERVE_OVERHEAD).await;
        flow.made(r.ok_or_else(no_room)?);
    }
    Ok(())
}

/// `n` fresh UUIDv7s in chunks of at most `chunk`, each made on the blocking pool
/// only when the reader took the one before and its room (`bytes_per_id` an ID)
/// is reserved; the first
/// chunk's room is reserved before this returns, so that a batch that finds no room
/// is refused whole. A reader that goes away stops the issuing.
pub(crate) async fn uuid7_chunks(
    svc: Arc<Service>,
    n: usize,
    chunk: usize,
    flow: Option<Arc<Flow>>,
    bytes_per_id: usize,
) -> Result<tokio_stream::wrappers::ReceiverStream<Result<Vec<u128>, ApiError>>, ApiError> {
    let chunk = chunk.max(1);
    reserve_room(flow.as_ref(), n.min(chunk) * bytes_per_id).await?;
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        let (mut left, mut first) = (n, true);
        while left > 0 {
            let len = left.min(chunk);
            if !first && let Err(e) = reserve_room(flow.as_ref(), len * bytes_per_id).await {
                let _ = tx.send(Err(e)).await;
                return;
            }
            first = false;
            // On the blocking pool, as IdChunks' chunks: past the borrow window the
            // clock policy may wait for the clock.
            let svc = svc.clone();
            let made = tokio::task::spawn_blocking(move || {
                let mut ids = vec![0u128; len];
                svc.issue_uuid7s(&mut ids).map(|()| ids)
            })
            .await
            .map_err(|e| ApiError::unavailable("internal", format!("chunk task failed: {e}")))
            .and_then(|r| r);
            let failed = made.is_err();
            left -= len;
            if tx.send(made).await.is_err() || failed {
                return;
            }
        }
    });
    Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// The refusal of a response that found no room in the response budgets within
/// `--reserve-timeout-ms`.
pub(crate) fn no_room() -> ApiError {
    ApiError::busy(
        "no room in the response memory (--response-memory, --client-response-memory, --connection-response-memory) in time: retry later".into(),
    )
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
            if this.left.is_none() && this.svc.is_draining() {
                // An endless stream has nothing to finish: it ends now, saying why,
                // so that the drain does not wait for its client.
                this.failed = true;
                return Poll::Ready(Some(Err(ApiError::unavailable("not_ready", SHUTTING_DOWN.into()))));
            }
            let len = match this.left {
                Some(0) => return Poll::Ready(None),
                Some(left) => left.min(this.chunk as u64) as usize,
                None => this.chunk,
            };
            if let Some(flow) = &this.flow
                && this.reserved.is_none()
            {
                if this.reserving.is_none() {
                    let (flow, bytes) = (flow.clone(), len * this.bytes_per_id + RESERVE_OVERHEAD);
                    this.reserving = Some(Box::pin(async move { flow.reserve(bytes).await }));
                }
                if let Some(r) = this.reserving.as_mut() {
                    this.reserved = std::task::ready!(r.as_mut().poll(cx));
                    this.reserving = None;
                    if this.reserved.is_none() {
                        this.failed = true;
                        tracing::info!("response cut short: no room for its next chunk in time");
                        return Poll::Ready(Some(Err(no_room())));
                    }
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
