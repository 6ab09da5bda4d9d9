//! `flakeid serve`: runs the ID service of `flakeid-server` until SIGTERM/SIGINT.

use crate::Failure;
use crate::args::ServeArgs;
use flakeid_core::{Error, LeaseState};
use flakeid_server::{Config, Service};
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
    };
    config.validate()?;
    // A service is run as replicas: node 0 by default would give every replica the
    // same IDs, so a node source is required (the core refuses to build without).
    let builder = crate::generator_options(&args.generator)?.require_node();
    init_logging();
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

/// Logs to standard error, filtered by `FLAKEID_LOG` (`info` when unset or
/// invalid): a level, or `target=level` directives separated by commas
/// (`warn,flakeid_server=debug`). `Targets` reads them without the regex engine
/// that `EnvFilter`'s span and field filters need.
fn init_logging() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = std::env::var("FLAKEID_LOG")
        .ok()
        .and_then(|v| v.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .finish()
        .with(filter)
        .try_init();
}
