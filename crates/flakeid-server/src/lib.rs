//! flakeid as a network service: the HTTP API of `flakeid serve`, as a library so it
//! can be embedded and tested. HTTP/1.1 (keep-alive) and HTTP/2 without TLS (h2c) on
//! one port, through axum/hyper.
//!
//! A leased server issues only while its lease is [`LeaseState::Held`]: the moment
//! a renewal fails it turns not-ready and answers 503 instead of issuing, so it stops
//! well before the store could give its node id to another holder.
#![warn(missing_docs)]

mod access;
mod conn;
mod lease;
mod metrics;
mod security;
mod trim;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

mod config;
mod error;
mod formats;
pub mod grpc;
mod routes;
mod service;

pub use config::{Budgets, CHUNK, Config, DEFAULT_MAX_BATCH, MAX_BATCH_CEILING, MAX_MEMORY};
pub use conn::{Limits, PER_CONNECTION, PROBE_SLOTS, PROBE_SLOTS_PER_CLIENT};
pub use formats::JS_SAFE_BITS;
pub use lease::{Supervision, supervise};
use routes::probe_router;
pub use routes::router;
pub use security::SecurityFiles;
pub use service::OPENAPI;
pub use service::Service;

/// How long a shutdown waits for in-flight requests and streams before it closes
/// the remaining connections anyway.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting,
/// drains in-flight requests and streamed bodies (at most [`DRAIN_TIMEOUT`]; then
/// the connections still open are reset, and the log says how many responses that
/// cut) and releases the lease.
/// Connections are bounded by the service's [`Limits`] (conn/slots.rs).
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
            let conns = conn::Conns::new(PROBE_CONNECTIONS, PROBE_CONNECTIONS, 0);
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
    let conns = conn::Conns::new(
        limits.connection_cap(),
        limits.max_connections_per_client,
        conn::PROBE_SLOTS,
    );
    *service.conns.lock().unwrap_or_else(|e| e.into_inner()) = Some(conns.clone());
    let draining = service.clone();
    let shutdown = async move {
        shutdown.await;
        tracing::info!("shutting down: draining in-flight requests");
        draining.start_draining();
    };
    let drained = conn::accept_loop(
        listener,
        app,
        service.clone(),
        security,
        conns,
        shutdown,
        DRAIN_TIMEOUT,
        false,
    )
    .await;
    let _ = probes_done.send(());
    if let Some(task) = probe_loop {
        let _ = task.await;
    }
    // The lease last: every answer that carried its IDs has been sent or cut.
    service.shutdown();
    match drained {
        true => tracing::info!("drained; lease released; stopped"),
        false => tracing::warn!("lease released; stopped, with responses cut at the drain limit"),
    }
    Ok(())
}
