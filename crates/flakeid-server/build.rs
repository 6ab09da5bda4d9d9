//! Generates the gRPC service from the committed `proto/flakeid.proto` (needs
//! `protoc`: Debian's protobuf-compiler, installed by scripts/setup-serve.sh).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/flakeid.proto");
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_protos(&["proto/flakeid.proto"], &["proto"])?;
    Ok(())
}
