//! What the service's integration tests share: a service on a free 127.0.0.1
//! port, over real TCP. Each test binary includes it (`mod common;`).

use flakeid_core::{Generator, Layout};
use flakeid_server::{Config, Service};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::oneshot;

/// A service on `node` with `config`, listening on a free loopback port: the
/// service, its address, and the sender whose send or drop stops it.
pub async fn serve_on_loopback(node: u64, config: Config) -> (Arc<Service>, SocketAddr, oneshot::Sender<()>) {
    // Every test of a binary runs a service on the same node at once (their IDs are
    // checked for it): the host guard, which would refuse all but one, is not what
    // these test.
    let generator = Generator::builder(Layout::SNOWFLAKE)
        .node(node)
        .host_guard(false)
        .build()
        .unwrap();
    let svc = Service::new(generator, config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(flakeid_server::serve(listener, svc.clone(), async move {
        let _ = stopped.await;
    }));
    (svc, addr, stop)
}
