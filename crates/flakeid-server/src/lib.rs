//! flakeid as a network service: the HTTP API of `flakeid serve`, as a library so it
//! can be embedded and tested. HTTP/1.1 (keep-alive) and HTTP/2 without TLS (h2c) on
//! one port, through axum/hyper.
//!
//! A leased server issues only while its lease is [`LeaseState::Held`]: the moment
//! a renewal fails it turns not-ready and answers 503 instead of issuing, so it stops
//! well before the store could give its node id to another holder.
#![warn(missing_docs)]

//!
//! The modules stand in floors, each using only those below it (tests/docs/imports.py
//! fails on a circle):
//! 1. plain data: `config` (the settings, limits, budgets and security files),
//!    `error`, `formats`, `access`, `liveness`;
//! 2. `metrics` (the figures of a snapshot handed in), `security`, `budget` (the
//!    memory budgets: `Budget`, `Flow`, `Streams`);
//! 3. `service`: the issuing state;
//! 4. the handlers: `grpc`, `routes`, and beside them `lease` (the supervisor) and
//!    `trim`;
//! 5. the transport: `conn` (connections, their limits and bodies), given a router
//!    and a [`conn::Handler`], naming no route;
//! 6. the wiring: this file.

// 1. plain data
mod access;
mod config;
mod error;
mod formats;
mod liveness;
// 2.
mod budget;
mod chunks;
mod codec;
mod metrics;
mod scrape;
mod security;
// 3.
mod service;
// 4. handlers
pub mod grpc;
mod lease;
mod params;
mod routes;
mod trim;
mod wide_routes;
// 5. transport
mod conn;

use axum::Router;
use axum::http::Request;
use axum::response::Response;
use hyper::body::Incoming;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use config::{
    Budgets, CHUNK, Config, DEFAULT_MAX_BATCH, Limits, MAX_BATCH_CEILING, MAX_MEMORY, PER_CONNECTION, SecurityFiles,
};
pub use conn::{PROBE_SLOTS, PROBE_SLOTS_PER_CLIENT};
pub use formats::JS_SAFE_BITS;
pub use lease::Supervision;
pub use service::supervise;
pub use service::{OPENAPI, Service};

/// The HTTP routes and the gRPC services of `service` (what [`serve`] answers
/// with): `/flakeid.v1.Flakeid/*`, `grpc.health.v1` and server reflection. The
/// health statuses follow readiness under [`serve`] only.
pub fn router(service: Arc<Service>) -> Router {
    routes::router(service, &grpc::Health::new())
}

/// The transport's questions, answered by the handlers (routes.rs) and the
/// service: one static dispatch per question, inlined.
impl conn::Handler for Service {
    #[inline]
    fn route(&self, path: &str) -> metrics::Route {
        metrics::Route::of(path)
    }
    #[inline]
    fn is_grpc(&self, path: &str) -> bool {
        routes::is_grpc(path)
    }
    #[inline]
    fn single_message(&self, path: &str) -> bool {
        routes::single_message(path)
    }
    #[inline]
    fn streamed(&self, route: metrics::Route) -> bool {
        route.is_streamed()
    }
    #[inline]
    fn probe(&self, route: metrics::Route) -> bool {
        routes::is_probe(route)
    }
    #[inline]
    fn long_lived(&self, route: metrics::Route) -> bool {
        route.is_long_lived()
    }
    #[inline]
    fn answer(&self, route: metrics::Route, req: &Request<Incoming>) -> Option<Response> {
        routes::answer_now(self, route, req)
    }
    #[inline]
    fn metrics(&self) -> &Arc<metrics::Metrics> {
        &self.metrics
    }
    #[inline]
    fn access(&self) -> Option<&access::AccessLog> {
        self.access.as_ref()
    }
    #[inline]
    fn is_draining(&self) -> bool {
        Service::is_draining(self)
    }
    #[inline]
    fn memory(&self) -> &budget::Memory {
        &self.memory
    }
    #[inline]
    fn limits(&self) -> &Limits {
        &self.config.limits
    }
}

/// How long a shutdown waits for in-flight requests and streams before it closes
/// the remaining connections anyway.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `service` on `listener` until `shutdown` completes, then stops accepting,
/// drains in-flight requests and streamed bodies to their last byte written (at
/// most [`DRAIN_TIMEOUT`]; then the connections still open are reset, and the log
/// says how many responses that cut) and releases the lease.
/// Connections are bounded by the service's [`Limits`] (config/limits.rs).
///
/// Errors: the TLS or token files do not load; after the lease is released, a
/// drain that cut responses short ([`std::io::ErrorKind::TimedOut`], saying how
/// many), so that the process's exit says so.
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
    let health = grpc::Health::new();
    let app = routes::router(service.clone(), &health);
    let security = security::Security::load(service.config.security.clone())?;
    *service.security.lock().unwrap_or_else(|e| e.into_inner()) = Some(security.clone());
    let s = &service.config.security;
    if s.tls_cert.is_some() || s.auth_token_file.is_some() {
        tokio::spawn(security.clone().watch());
    }
    let limits = service.config.limits.clone();
    let ready = health.set(&service).await;
    tokio::spawn(health.watch(Arc::downgrade(&service), ready));
    let weak = Arc::downgrade(&service);
    tokio::spawn(trim::run(move || weak.upgrade().map(|s| s.memory_in_use())));
    let (probes_done, probes_stop) = tokio::sync::oneshot::channel::<()>();
    let probe_loop = match probes {
        None => None,
        Some(l) => {
            let app = routes::probe_router(service.clone());
            let plain = security::Security::load(SecurityFiles::default())?;
            let conns = conn::Conns::new(
                PROBE_CONNECTIONS,
                PROBE_CONNECTIONS,
                0,
                budget::Grouping::new(limits.client_ipv6_prefix),
            );
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
        budget::Grouping::new(limits.client_ipv6_prefix),
    );
    service.metrics.set_conns(conns.clone());
    let draining = service.clone();
    let shutdown = async move {
        shutdown.await;
        tracing::info!("shutting down: draining in-flight requests");
        draining.start_draining();
    };
    let cut = conn::accept_loop(
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
    if cut == 0 {
        tracing::info!("drained; lease released; stopped");
        return Ok(());
    }
    tracing::warn!("lease released; stopped, with {cut} responses cut at the drain limit");
    Err(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("the drain limit ({DRAIN_TIMEOUT:?}) cut {cut} responses short"),
    ))
}
