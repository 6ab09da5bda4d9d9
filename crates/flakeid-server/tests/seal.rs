//! Sealed IDs from the service (`Config::sealer`, `serve --seal-key-file`): every
//! issuing route and RPC gives sealed IDs that unseal, with the same key, to the
//! generator's IDs; `/v1/unseal/{id}`, `/v1/decode/{id}?sealed=1` and gRPC
//! `Unseal` read them; without a key those answer `sealing_not_configured`; the key
//! shows nowhere. Against a service on a free 127.0.0.1 port, over real TCP.

#![allow(clippy::unwrap_used)]

mod common;
use common::serve_on_loopback;
use flakeid_core::{Generator, Layout};
use flakeid_seal::Sealer;
use flakeid_server::grpc::proto::flakeid_client::FlakeidClient;
use flakeid_server::grpc::proto::{BatchRequest, NextRequest, StreamRequest, UnsealRequest};
use flakeid_server::{Config, Service};
use serde_json::Value;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_stream::StreamExt;
use tonic::Code;
use tonic::transport::Channel;

/// NIST's FF1 sample key for AES-256, as in tests/vectors/seal.json.
const KEY: &str = "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94";
const NODE: u64 = 9;

struct Running {
    svc: Arc<Service>,
    addr: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start(sealer: Option<Sealer>) -> Running {
    let config = Config {
        max_batch: 10_000,
        sealer,
        ..Config::default()
    };
    let (svc, addr, stop) = serve_on_loopback(NODE, config).await;
    Running { svc, addr, _stop: stop }
}

fn sealer() -> Sealer {
    Sealer::from_hex_key(KEY, &Layout::SNOWFLAKE).unwrap()
}

/// One HTTP/1.1 request (`Connection: close`): the status, the content type and
/// the body.
async fn get(addr: SocketAddr, path: &str, accept: Option<&str>) -> (u16, String, Vec<u8>) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let accept = accept.map(|a| format!("Accept: {a}\r\n")).unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nHost: t\r\n{accept}Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut body = raw[split + 4..].to_vec();
    let status = head[9..12].parse().unwrap();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v.trim().to_string())
    };
    if header("transfer-encoding").as_deref() == Some("chunked") {
        body = dechunk(&body);
    }
    (status, header("content-type").unwrap_or_default(), body)
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n").unwrap();
        let len = usize::from_str_radix(std::str::from_utf8(&raw[..eol]).unwrap().trim(), 16).unwrap();
        if len == 0 {
            return out;
        }
        out.extend_from_slice(&raw[eol + 2..eol + 2 + len]);
        raw = &raw[eol + 4 + len..];
    }
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)))
}

fn text(body: &[u8]) -> String {
    String::from_utf8(body.to_vec()).unwrap()
}

fn unpack(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
        .collect()
}

/// Checks that `sealed` are sealed IDs of this service: none is a plain ID of node
/// 9, and unsealed they are the generator's IDs, increasing.
fn assert_sealed_run(sealed: &[u64]) {
    let s = sealer();
    let plain: Vec<u64> = sealed.iter().map(|&id| s.unseal(id).unwrap()).collect();
    assert!(
        plain.iter().all(|id| (id >> 12) & 0x3ff == NODE),
        "unsealed: node {NODE}"
    );
    assert!(plain.windows(2).all(|w| w[0] < w[1]), "unsealed: increasing");
    // A plain batch is increasing; sealed, it is not (unordered by design; 20
    // sealed IDs come out sorted with odds of 1 in 20!).
    assert!(
        sealed.len() < 20 || sealed.windows(2).any(|w| w[0] > w[1]),
        "{sealed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_issuing_route_seals() {
    let r = start(Some(sealer())).await;
    let mut all = Vec::new();
    let (st, ct, body) = get(r.addr, "/v1/id", None).await;
    assert_eq!((st, ct.as_str()), (200, "text/plain; charset=utf-8"));
    all.push(text(&body).trim().parse::<u64>().unwrap());
    let (_, _, body) = get(r.addr, "/v1/id?format=json", None).await;
    all.push(json(&body)["id"].as_str().unwrap().parse().unwrap());
    let (_, _, body) = get(r.addr, "/v1/id", Some("application/json")).await;
    all.push(json(&body)["id"].as_str().unwrap().parse().unwrap());
    assert_sealed_run(&all);

    let (st, ct, body) = get(r.addr, "/v1/ids?n=100", None).await;
    assert_eq!((st, ct.as_str()), (200, "application/json"));
    let ids: Vec<u64> = json(&body)
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 100);
    assert_sealed_run(&ids);
    all.extend(ids);
    let (_, ct, body) = get(r.addr, "/v1/ids?n=50&format=ndjson", None).await;
    assert_eq!(ct, "application/x-ndjson");
    let ids: Vec<u64> = text(&body)
        .lines()
        .map(|l| serde_json::from_str::<String>(l).unwrap().parse().unwrap())
        .collect();
    assert_sealed_run(&ids);
    all.extend(ids);
    let (_, ct, body) = get(r.addr, "/v1/ids?n=40", Some("application/octet-stream")).await;
    assert_eq!(ct, "application/octet-stream");
    let ids = unpack(&body);
    assert_sealed_run(&ids);
    all.extend(ids);
    // Past one chunk (4096): made as the client reads, sealed chunk by chunk.
    let (_, _, body) = get(r.addr, "/v1/ids?n=9000&format=octet-stream", None).await;
    let ids = unpack(&body);
    assert_eq!(ids.len(), 9000);
    assert_sealed_run(&ids);
    all.extend(ids);

    let total = all.len();
    let unique: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(unique.len(), total, "no sealed ID twice");
    assert_eq!(r.svc.issued(), total as u64);
    assert!(all.iter().all(|&id| id <= Layout::SNOWFLAKE.max_id()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unseal_and_sealed_decode_read_them() {
    let r = start(Some(sealer())).await;
    let (_, _, body) = get(r.addr, "/v1/id", None).await;
    let sealed: u64 = text(&body).trim().parse().unwrap();
    let plain = sealer().unseal(sealed).unwrap();
    // `?from=int` throughout: about 1 sealed ID in 1000 has 16 decimal digits,
    // which also read as hex (or 13 or 11, as base32 or base62), and the
    // auto-detection refuses ambiguous text rather than guess.

    let (st, ct, body) = get(r.addr, &format!("/v1/unseal/{sealed}?from=int"), None).await;
    assert_eq!((st, ct.as_str()), (200, "text/plain; charset=utf-8"));
    assert_eq!(text(&body), format!("{plain}\n"));
    let (_, ct, body) = get(
        r.addr,
        &format!("/v1/unseal/{sealed}?from=int"),
        Some("application/json"),
    )
    .await;
    assert_eq!(ct, "application/json");
    assert_eq!(json(&body)["id"], plain.to_string());
    // Any encoding of the sealed ID, as /v1/decode reads them.
    for enc in [
        flakeid_core::Encoding::Hex,
        flakeid_core::Encoding::Base32,
        flakeid_core::Encoding::Base62,
    ] {
        let t = flakeid_core::encode(sealed, enc);
        let (st, _, body) = get(r.addr, &format!("/v1/unseal/{t}?from={enc}&format=json"), None).await;
        assert_eq!(st, 200, "{}", text(&body));
        assert_eq!(json(&body)["id"], plain.to_string());
    }

    let (st, _, body) = get(r.addr, &format!("/v1/decode/{sealed}?sealed=1&from=int"), None).await;
    assert_eq!(st, 200, "{}", text(&body));
    let parts = json(&body);
    assert_eq!(parts["id"], plain.to_string());
    assert_eq!(parts["node"], NODE);
    let (_, _, body) = get(r.addr, &format!("/v1/decode/{sealed}?from=int&sealed=true"), None).await;
    assert_eq!(json(&body)["id"], plain.to_string());
    // Without ?sealed, the sealed number itself is decoded (a random-looking node).
    let (_, _, body) = get(r.addr, &format!("/v1/decode/{sealed}?from=int"), None).await;
    assert_eq!(json(&body)["id"], sealed.to_string());
    let (_, _, body) = get(r.addr, &format!("/v1/decode/{sealed}?sealed=0&from=int"), None).await;
    assert_eq!(json(&body)["id"], sealed.to_string());

    // Bad input: 400 naming the parameter.
    let (st, _, body) = get(r.addr, &format!("/v1/decode/{sealed}?sealed=yes"), None).await;
    assert_eq!((st, json(&body)["parameter"].as_str()), (400, Some("sealed")));
    let (st, _, body) = get(r.addr, "/v1/unseal/9223372036854775808", None).await;
    let e = json(&body);
    assert_eq!((st, e["parameter"].as_str()), (400, Some("id")));
    assert!(
        e["message"].as_str().unwrap().contains("0..=9223372036854775807"),
        "{e}"
    );
    let (st, _, body) = get(r.addr, "/v1/unseal/12?format=xml", None).await;
    assert_eq!((st, json(&body)["parameter"].as_str()), (400, Some("format")));
    let (st, _, body) = get(r.addr, "/v1/unseal/12?n=1", None).await;
    assert_eq!((st, json(&body)["parameter"].as_str()), (400, Some("query")));
}

/// The service's sealing is the Sealer's: tests/vectors/seal.json's snowflake
/// groups, read back through `/v1/unseal` by services started with their keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unseal_matches_the_shared_vectors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/seal.json");
    let vectors: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for g in vectors["groups"].as_array().unwrap() {
        if g["layout"] != "snowflake" {
            continue;
        }
        let tweak = decode_hex(g["tweak"].as_str().unwrap());
        let s = Sealer::from_hex_key(g["key"].as_str().unwrap(), &Layout::SNOWFLAKE)
            .unwrap()
            .tweak(tweak);
        let r = start(Some(s)).await;
        for case in g["cases"].as_array().unwrap() {
            let (id, sealed) = (case["id"].as_str().unwrap(), case["sealed"].as_str().unwrap());
            let (st, _, body) = get(r.addr, &format!("/v1/unseal/{sealed}?from=int"), None).await;
            assert_eq!((st, text(&body).trim()), (200, id), "{g}");
            checked += 1;
        }
    }
    assert!(checked >= 9 * 7, "{checked}");
}

fn decode_hex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

async fn client(addr: SocketAddr) -> FlakeidClient<Channel> {
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    FlakeidClient::new(channel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_seals_and_unseals() {
    let r = start(Some(sealer())).await;
    let mut c = client(r.addr).await;
    let mut all = vec![c.next(NextRequest {}).await.unwrap().into_inner().id];
    let ids = c.batch(BatchRequest { n: 500 }).await.unwrap().into_inner().ids;
    assert_sealed_run(&ids);
    all.extend(&ids);
    let mut stream = c
        .stream(StreamRequest { n: 5000, chunk: 1000 })
        .await
        .unwrap()
        .into_inner();
    let mut streamed = Vec::new();
    while let Some(chunk) = stream.next().await {
        streamed.extend(unpack(&chunk.unwrap().ids));
    }
    assert_eq!(streamed.len(), 5000);
    assert_sealed_run(&streamed);
    all.extend(&streamed);
    assert_sealed_run(&all);

    // Unseal: the plain IDs, in order; what the local Sealer gives.
    let plain = c
        .unseal(UnsealRequest { ids: ids.clone() })
        .await
        .unwrap()
        .into_inner()
        .ids;
    let s = sealer();
    assert_eq!(plain, ids.iter().map(|&id| s.unseal(id).unwrap()).collect::<Vec<_>>());
    for ids in [vec![], vec![0; 10_001]] {
        let e = c.unseal(UnsealRequest { ids }).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument);
        assert!(e.message().starts_with("ids:"), "{}", e.message());
    }
    let e = c.unseal(UnsealRequest { ids: vec![1, 1 << 63] }).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("id:"), "{}", e.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_key_reading_sealed_ids_is_refused() {
    let r = start(None).await;
    // Issuing gives plain IDs.
    let (_, _, body) = get(r.addr, "/v1/id", None).await;
    let id: u64 = text(&body).trim().parse().unwrap();
    assert_eq!((id >> 12) & 0x3ff, NODE);
    for path in ["/v1/unseal/12345", "/v1/decode/12345?sealed=1", "/v1/unseal/not-an-id"] {
        let (st, ct, body) = get(r.addr, path, None).await;
        assert_eq!((st, ct.as_str()), (409, "application/json"), "{path}");
        let e = json(&body);
        assert_eq!(e["error"], "sealing_not_configured", "{path}");
        assert!(e["message"].as_str().unwrap().contains("--seal-key-file"), "{e}");
    }
    let mut c = client(r.addr).await;
    let e = c.unseal(UnsealRequest { ids: vec![1] }).await.unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert!(e.message().contains("--seal-key-file"), "{}", e.message());
    let (_, _, body) = get(r.addr, "/metrics", None).await;
    let metrics = text(&body);
    assert!(metrics.contains("\nflakeid_sealing 0\n"), "{metrics}");
    assert!(
        metrics.contains("flakeid_errors_total{kind=\"sealing_not_configured\"} 3"),
        "{metrics}"
    );
}

/// The key is in no response, no metric and no `Debug` output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_shows_nowhere() {
    let r = start(Some(sealer())).await;
    let mut seen = String::new();
    for path in [
        "/v1/id",
        "/v1/layout",
        "/metrics",
        "/v1/unseal/1",
        "/v1/unseal/x",
        "/v1/decode/1?sealed=1",
        "/nowhere",
    ] {
        seen.push_str(&text(&get(r.addr, path, None).await.2));
    }
    assert!(seen.contains("\nflakeid_sealing 1\n"), "{seen}");
    seen.push_str(&format!("{:?}", r.svc));
    assert!(
        format!("{:?}", r.svc).contains("Sealer"),
        "the Debug output has the sealer"
    );
    let lower = seen.to_ascii_lowercase();
    for probe in [&KEY[..16], &KEY[16..32], &KEY[48..]] {
        assert!(!lower.contains(probe), "{probe} in {seen}");
    }
}

#[test]
fn a_sealer_of_another_width_is_refused() {
    let generator = Generator::builder(Layout::SNOWFLAKE).node(1).build().unwrap();
    let discord = Sealer::from_hex_key(KEY, &Layout::DISCORD).unwrap();
    let err = Service::new(
        generator,
        Config {
            sealer: Some(discord),
            ..Config::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            flakeid_core::Error::Config {
                field: "seal_key_file",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("64-bit") && err.to_string().contains("63 bits"),
        "{err}"
    );
}

/// `/v1/decode/{id}` reads TypeIDs as the libraries' `parse_typeid` does: every case
/// of the TypeID spec's valid file gives its UUID, every case of its invalid file
/// (spaces around the ID included) is refused (tests/vectors/uuid.json).
#[tokio::test]
async fn decode_reads_typeids_as_the_spec_says() {
    let r = start(None).await;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/uuid.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // Every byte but the unreserved ones percent-encoded, spaces too.
    let escaped = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    for c in v["typeid_valid"].as_array().unwrap() {
        let text = c["typeid"].as_str().unwrap();
        let (st, _, body) = get(r.addr, &format!("/v1/decode/{}", escaped(text)), None).await;
        assert_eq!(st, 200, "{text:?}: {}", self::text(&body));
        assert_eq!(json(&body)["uuid"], c["uuid"], "{}", c["name"]);
    }
    for c in v["typeid_invalid"].as_array().unwrap() {
        let text = c["typeid"].as_str().unwrap();
        let (st, _, body) = get(r.addr, &format!("/v1/decode/{}", escaped(text)), None).await;
        // The empty one leaves no ID in the path: no such route.
        let want = if text.is_empty() { 404 } else { 400 };
        assert_eq!(st, want, "{text:?} ({}): {}", c["name"], self::text(&body));
    }
}
