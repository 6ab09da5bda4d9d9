//! The yardstick of `make bench-serve`: an axum hello-world
//! route, on the same axum, hyper and tokio versions and runtime settings as
//! `flakeid serve`, so that `GET /v1/id` is compared with the least any axum
//! route costs on the same machine under the same wrk settings. A bench-only
//! example: nothing depends on it.
//!   usage: hello_axum 127.0.0.1:PORT

use axum::Router;
use axum::routing::get;
use axum::serve::ListenerExt;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .ok_or_else(|| std::io::Error::other("usage: hello_axum ADDR:PORT"))?;
    // TCP_NODELAY, as flakeid serve's accept loop sets it.
    let listener = tokio::net::TcpListener::bind(&addr).await?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let app = Router::new().route("/", get(|| async { "Hello, World!\n" }));
    eprintln!("hello_axum: listening on {addr}");
    axum::serve(listener, app).await
}
