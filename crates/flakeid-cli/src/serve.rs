//! `flakeid serve`: runs the ID service of `flakeid-server` until SIGTERM/SIGINT.

use crate::Failure;
use crate::args::ServeArgs;
use flakeid_core::{Error, LeaseState};
use flakeid_server::{Config, Limits, Service};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub fn serve(args: ServeArgs) -> Result<(), Failure> {
    let listen = &args.listen;
    let addr: SocketAddr = listen.parse().map_err(|_| {
        Failure::Usage(format!(
            "--listen expects ADDR:PORT (e.g. 127.0.0.1:7676), got {listen:?}"
        ))
    })?;
    let config = Config {
        max_batch: usize::try_from(args.max_batch).unwrap_or(usize::MAX),
        limits: limits(&args),
    };
    config.validate()?;
    let max_connections = config.limits.connection_cap();
    // A service is run as replicas: node 0 by default would give every replica the
    // same IDs, so a node source is required (the core refuses to build without).
    let builder = crate::generator_options(&args.generator)?.require_node();
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FLAKEID_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        // Acquire the node id (a lease may take a network round trip) only once the
        // port is ours, so a busy port never holds a lease.
        let generator = tokio::task::spawn_blocking(move || builder.build())
            .await
            .map_err(|e| Failure::Io(std::io::Error::other(e)))??;
        let service = Service::new(generator, config)?;
        let local = listener.local_addr()?;
        tracing::info!(
            listen = %local,
            node = service.generator().node(),
            leased = service.generator().is_leased(),
            max_connections,
            "flakeid serve: listening"
        );
        // A lease taken over by another holder is never given back: this process can
        // only answer 503 from then on. Exit instead (after draining), so that the
        // supervisor (systemd Restart=on-failure, a Kubernetes restart) starts a
        // replica that leases a fresh node id. Found by the fault suite: after a
        // store lost its data, every `flakeid serve` stayed up refusing forever.
        let lost = Arc::new(AtomicBool::new(false));
        let shutdown = {
            let (service, lost) = (service.clone(), lost.clone());
            async move {
                tokio::select! {
                    () = shutdown_signal() => {}
                    () = lease_lost(&service) => {
                        tracing::error!("node-id lease lost (taken over, or forgotten by the store): draining and exiting");
                        lost.store(true, Ordering::Release);
                    }
                }
            }
        };
        flakeid_server::serve(listener, service, shutdown).await?;
        if lost.load(Ordering::Acquire) {
            return Err(Failure::Flake(Error::Lease {
                message: "the node-id lease was lost (taken over by another holder, or forgotten by a store \
                          that lost its data); exiting so that a new replica leases a free node id"
                    .into(),
            }));
        }
        Ok(())
    })
}

/// The connection limits from the command line (the defaults of [`Limits`]).
fn limits(args: &ServeArgs) -> Limits {
    let d = Limits::default();
    let clamp32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    Limits {
        header_read_timeout: args
            .header_timeout_ms
            .map_or(d.header_read_timeout, Duration::from_millis),
        idle_timeout: args.idle_timeout_ms.map_or(d.idle_timeout, Duration::from_millis),
        max_connections: args
            .max_connections
            .map_or(d.max_connections, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        max_streams: args.max_streams.map_or(d.max_streams, clamp32),
        stream_window: args.stream_window.map_or(d.stream_window, clamp32),
        connection_window: args.connection_window.map_or(d.connection_window, clamp32),
    }
}

/// Completes once the generator's lease is lost for good (never without a lease).
async fn lease_lost(service: &Service) {
    if !service.generator().is_leased() {
        return std::future::pending().await;
    }
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if matches!(service.generator().lease_state(), Some(LeaseState::Lost)) {
            return;
        }
    }
}

/// Completes on SIGTERM or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
