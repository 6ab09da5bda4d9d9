//! The gRPC API through the generated tonic client, against a service listening on
//! a free 127.0.0.1 port (HTTP/2 over real TCP).

#![allow(clippy::unwrap_used)]

mod common;
use common::serve_on_loopback;
use flakeid_server::grpc::proto::flakeid_client::FlakeidClient;
use flakeid_server::grpc::proto::{BatchRequest, NextRequest, NextUuidRequest, StreamRequest};
use flakeid_server::{Config, Service};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::StreamExt;
use tonic::Code;
use tonic::transport::Channel;

async fn start(max_batch: usize) -> (Arc<Service>, FlakeidClient<Channel>, tokio::sync::oneshot::Sender<()>) {
    let (svc, client, stop, _) = start_at(max_batch).await;
    (svc, client, stop)
}

async fn start_at(
    max_batch: usize,
) -> (
    Arc<Service>,
    FlakeidClient<Channel>,
    tokio::sync::oneshot::Sender<()>,
    std::net::SocketAddr,
) {
    let config = Config {
        max_batch,
        ..Config::default()
    };
    let (svc, addr, stop) = serve_on_loopback(9, config).await;
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let client = FlakeidClient::new(channel);
    (svc, client, stop, addr)
}

fn unpack(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_batch_stream() {
    let (svc, mut c, _stop) = start(50_000).await;
    let mut seen = HashSet::new();
    let id = c.next(NextRequest {}).await.unwrap().into_inner().id;
    assert_eq!((id >> 12) & 0x3ff, 9);
    seen.insert(id);
    let ids = c.batch(BatchRequest { n: 50_000 }).await.unwrap().into_inner().ids;
    assert_eq!(ids.len(), 50_000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    seen.extend(ids);
    let mut stream = c
        .stream(StreamRequest {
            n: 100_001,
            chunk: 10_000,
        })
        .await
        .unwrap()
        .into_inner();
    let mut chunks = 0;
    while let Some(chunk) = stream.next().await {
        let ids = unpack(&chunk.unwrap().ids);
        assert!(ids.len() == 10_000 || ids.len() == 1, "{}", ids.len());
        seen.extend(ids);
        chunks += 1;
    }
    assert_eq!(chunks, 11);
    assert_eq!(seen.len(), 150_002);
    assert_eq!(svc.issued(), 150_002);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_uuid_is_16_bytes_of_an_increasing_uuid7_until_draining() {
    let (svc, mut c, _stop) = start(1000).await;
    let mut last = flakeid_core::Wide(0);
    for _ in 0..100 {
        let bytes = c.next_uuid(NextUuidRequest {}).await.unwrap().into_inner().uuid;
        let u = flakeid_core::Wide::from_slice(&bytes).unwrap();
        assert_eq!(u.version(), 7);
        assert!(u > last, "UUIDs went back");
        last = u;
    }
    svc.start_draining();
    let e = c.next_uuid(NextUuidRequest {}).await.unwrap_err();
    assert_eq!(e.code(), Code::Unavailable);
    assert!(e.message().contains("shutting down"), "{}", e.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_invalid_argument() {
    let (_svc, mut c, _stop) = start(1000).await;
    // 2^32 + 5: once read as 5 (a uint32 field), now refused naming what was sent.
    for n in [0, 1001, u64::from(u32::MAX), (1 << 32) + 5, u64::MAX] {
        let e = c.batch(BatchRequest { n }).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{n}");
        assert_eq!(e.message(), format!("n: must be in 1..=1000, got {n}"));
    }
    for chunk in [1001, (1 << 32) + 5] {
        let e = c.stream(StreamRequest { n: 5, chunk }).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument);
        assert_eq!(e.message(), format!("chunk: must be in 0..=1000, got {chunk}"));
    }
}

/// An endless stream whose client stops reading generates at most a bounded number
/// of IDs (flow control); once the client cancels, generation stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_flow_control_and_cancellation() {
    let (svc, mut c, _stop) = start(100_000).await;
    let mut stream = c
        .stream(StreamRequest { n: 0, chunk: 4096 })
        .await
        .unwrap()
        .into_inner();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.ids.len(), 4096 * 8);
    // Not reading: the HTTP/2 windows and the two-chunk channel fill, then the
    // generating thread blocks. Unthrottled it would issue millions per second.
    let mut stalled = svc.issued();
    let mut steady = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = svc.issued();
        steady = if now == stalled { steady + 1 } else { 0 };
        stalled = now;
        if steady == 3 {
            break;
        }
    }
    assert_eq!(steady, 3, "generation never stopped for a client that does not read");
    assert!(
        stalled < 4_000_000,
        "{stalled} IDs buffered for a client that does not read"
    );
    // Cancelling (dropping the stream) ends the generating thread.
    drop(stream);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = svc.issued();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(svc.issued(), after);
    // The service still answers.
    assert!(c.next(NextRequest {}).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_ready_is_unavailable() {
    let (svc, mut c, _stop) = start(1000).await;
    svc.start_draining();
    assert_eq!(c.next(NextRequest {}).await.unwrap_err().code(), Code::Unavailable);
    assert_eq!(
        c.batch(BatchRequest { n: 5 }).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(
        c.stream(StreamRequest { n: 5, chunk: 0 }).await.unwrap_err().code(),
        Code::Unavailable
    );
    assert_eq!(svc.issued(), 0);
}

/// 124 `Stream` calls that never read (over 4 connections) neither take
/// the slots of other clients nor make the server issue far ahead of them: each
/// stream is at most about a chunk ahead, and a fresh client's stream is served.
/// (One address holds at most 128 long-lived calls: half its connection limit.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_reading_streams_do_not_starve_others() {
    let (svc, _c, _stop, addr) = start_at(100_000).await;
    let (mut held, mut streams) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        // The smallest windows HTTP/2 allows: what the client's library buffers
        // counts as read.
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .initial_stream_window_size(65_535)
            .initial_connection_window_size(65_535)
            .connect()
            .await
            .unwrap();
        let mut c = FlakeidClient::new(channel);
        for _ in 0..31 {
            let s = c.stream(StreamRequest { n: 0, chunk: 0 }).await.unwrap().into_inner();
            streams.push(s);
        }
        held.push(c);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let issued = svc.issued();
    // Each stream at most two chunks ahead, plus the client's connection window.
    assert!(
        issued < 124 * 2 * 4096 + 4 * 8192,
        "{issued} IDs issued for 124 streams that read nothing"
    );
    let mut fresh = FlakeidClient::new(
        Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap(),
    );
    let mut s = fresh
        .stream(StreamRequest { n: 10_000, chunk: 0 })
        .await
        .unwrap()
        .into_inner();
    let mut got = 0;
    while let Some(chunk) = s.next().await {
        got += chunk.unwrap().ids.len() / 8;
    }
    assert_eq!(got, 10_000);
    assert!(fresh.next(NextRequest {}).await.is_ok());
    drop((streams, held));
}
