//! The committed gRPC stubs are what their `.proto` files compile to.
//!
//! protox (a protobuf compiler written in Rust) parses the files and
//! tonic-prost-build writes the Rust, into a temporary directory; each file must
//! equal the committed one. `FLAKEID_REGENERATE_STUBS=1` (`make grpc-stubs`) writes
//! them instead. No protoc anywhere: not in the builds, not in this check.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

struct Stubs {
    /// Where the committed files live.
    out: &'static str,
    protos: &'static [&'static str],
    include: &'static str,
    server: bool,
}

const STUBS: [Stubs; 2] = [
    // The service's API: server and client (the tests and the bench use the client).
    Stubs {
        out: "crates/flakeid-server/src/generated",
        protos: &["flakeid.proto"],
        include: "crates/flakeid-server/proto",
        server: true,
    },
    // The subset of etcd's API the etcd lease store calls: client only.
    Stubs {
        out: "crates/flakeid-lease-net/src/etcd/generated",
        protos: &["rpc.proto", "kv.proto"],
        include: "crates/flakeid-lease-net/proto/etcd",
        server: false,
    },
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn generate(s: &Stubs, dir: &Path) {
    let include = root().join(s.include);
    let fds = protox::compile(s.protos, [&include]).unwrap_or_else(|e| panic!("{}: {e}", s.include));
    if s.server {
        // The encoded descriptors, for the server's gRPC reflection service.
        let name = s.protos[0].trim_end_matches(".proto");
        std::fs::write(dir.join(format!("{name}.fds.bin")), prost::Message::encode_to_vec(&fds)).unwrap();
    }
    let mut config = tonic_prost_build::configure();
    if s.server {
        // The server's codec, with buffers sized to its messages (flakeid-server's codec.rs).
        config = config.codec_path("crate::codec::Codec");
    }
    config
        .build_server(s.server)
        .build_client(true)
        // Stubs are generic over the transport: no tonic `channel` feature needed.
        .build_transport(false)
        .emit_rerun_if_changed(false)
        .out_dir(dir)
        .compile_fds(fds)
        .unwrap_or_else(|e| panic!("{}: {e}", s.include));
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| {
                let e = e.unwrap();
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

#[test]
fn stubs_are_fresh() {
    let regenerate = std::env::var("FLAKEID_REGENERATE_STUBS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for s in &STUBS {
        let tmp = std::env::temp_dir().join(format!("flakeid-grpc-stubs-{}-{}", std::process::id(), s.out.len()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).unwrap();
        generate(s, &tmp);
        let fresh = files(&tmp);
        let committed_dir = root().join(s.out);
        if regenerate {
            let _ = std::fs::remove_dir_all(&committed_dir);
            std::fs::create_dir_all(&committed_dir).unwrap();
            for (name, text) in &fresh {
                std::fs::write(committed_dir.join(name), text).unwrap();
            }
        } else if files(&committed_dir) != fresh {
            stale.push(s.out);
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }
    assert!(
        stale.is_empty(),
        "the committed gRPC stubs in {stale:?} differ from what their .proto files compile to: \
         regenerate them with `make grpc-stubs` and commit the result"
    );
}
