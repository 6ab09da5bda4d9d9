//! flakeid-core's benches (`benches/`, run with `cargo bench -p flakeid-bench`;
//! `--features lease` or `uuid7` for the benches that need them). Not published:
//! a crate of its own so that criterion and the peer crates stay out of the core's
//! dev-dependencies.
