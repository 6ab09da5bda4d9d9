//! The HTTP/2 client connection the etcd and Kubernetes stores share: hyper over
//! any stream (TCP, or rustls over TCP), driven by a task of the store's runtime.

use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The HTTP/2 handshake on `io`; the connection runs as a task of the current
/// runtime while the store's runtime runs (a call), and ends with it.
pub(crate) async fn handshake<B, I>(io: I) -> Result<SendRequest<B>, hyper::Error>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    B: hyper::body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    TokioExecutor: hyper::rt::bounds::Http2ClientConnExec<B, TokioIo<I>>,
{
    let (send, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        // A dead connection shows within a call's deadline, not at the OS's TCP timeout.
        .keep_alive_interval(Duration::from_secs(5))
        .keep_alive_timeout(Duration::from_secs(3))
        .handshake(TokioIo::new(io))
        .await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(send)
}
