//! IDs per second of the gRPC `Stream` over loopback (make bench-serve).
//!   usage: grpc_stream_bench http://127.0.0.1:PORT [total IDs] [chunk]

use flakeid_server::grpc::proto::StreamRequest;
use flakeid_server::grpc::proto::flakeid_client::FlakeidClient;
use std::time::Instant;
use tokio_stream::StreamExt;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args.next().ok_or("usage: grpc_stream_bench URL [total] [chunk]")?;
    let total: u64 = args.next().map_or(Ok(50_000_000), |s| s.parse())?;
    let chunk: u64 = args.next().map_or(Ok(65_536), |s| s.parse())?;
    let channel = tonic::transport::Channel::from_shared(url)?.connect().await?;
    let mut client = FlakeidClient::new(channel).max_decoding_message_size(64 << 20);
    let t = Instant::now();
    let mut stream = client.stream(StreamRequest { n: total, chunk }).await?.into_inner();
    let mut got = 0u64;
    let mut last = 0u64;
    while let Some(c) = stream.next().await {
        let c = c?;
        for b in c.ids.chunks_exact(8) {
            let id = u64::from_be_bytes(b.try_into()?);
            if id <= last {
                return Err(format!("ids not increasing: {id} after {last}").into());
            }
            last = id;
        }
        got += (c.ids.len() / 8) as u64;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "grpc Stream: {got} IDs in {s:.3} s = {:.1} M IDs/s (chunk {chunk})",
        got as f64 / s / 1e6
    );
    Ok(())
}
