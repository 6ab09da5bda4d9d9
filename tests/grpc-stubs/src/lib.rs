//! No code: the test in `tests/grpc-stubs/tests/fresh.rs` regenerates the gRPC stubs that
//! `flakeid-server` and `flakeid-lease-net` commit, and compares.
