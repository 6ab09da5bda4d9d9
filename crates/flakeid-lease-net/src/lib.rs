//! # flakeid-lease-net
//!
//! The network node-id lease stores of flakeid — Redis, PostgreSQL and etcd, plain
//! and over TLS, and Kubernetes Lease objects — behind the core's [`LeaseStore`] seam. The lease machinery
//! (heartbeat, fence, lock delay; `docs/leases.md`) and the `file://` store stay in
//! `flakeid-core`, which has no dependencies; everything that needs a runtime, a TLS
//! stack or a protocol client is here.
//!
//! Two ways in:
//!
//! * [`install()`] once at start-up: from then on `LeaseSpec::parse` and
//!   `GeneratorBuilder::lease_url` anywhere in the process accept `redis://`,
//!   `rediss://`, `postgres://`, `postgresql://`, `etcd://`, `etcds://` and `k8s://` URLs (the
//!   bindings and the CLI do this when built with their `net-leases` feature);
//! * [`lease_spec`] to turn one URL into a [`LeaseSpec`] without touching
//!   process-wide state.
//!
//! ```no_run
//! use flakeid_core::{Generator, Layout};
//! flakeid_lease_net::install();
//! let generator = Generator::builder(Layout::SNOWFLAKE)
//!     .lease_url("redis://127.0.0.1:6379/0?namespace=orders")
//!     .build()?;
//! # Ok::<(), flakeid_core::Error>(())
//! ```
//!
//! Clients: redis-rs (synchronous), tokio-postgres and etcd's own gRPC API (stubs
//! generated from its `.proto` files and committed, so nothing here runs `protoc`),
//! each with rustls (ring) for TLS; Kubernetes's REST API over hyper's HTTP/2 with
//! serde_json. The async clients run on a current-thread tokio runtime of each
//! store's own.
#![warn(missing_docs)]

mod block;
mod database;
mod etcd;
mod h2;
mod k8s;
mod postgres;
mod redis;
mod tls;
mod url;

use flakeid_core::lease::{LeaseSchemes, LeaseSpec, LeaseStore, redact_error, register_lease_schemes};
use flakeid_core::{Error, Result};
use std::time::{Duration, Instant};
use url::LeaseUrl;

pub use database::database_lease;
pub use etcd::EtcdStore;
pub use k8s::{K8sStore, RBAC_YAML, rbac_for};
pub use postgres::{DEFAULT_TABLE, PostgresStore};
pub use redis::RedisStore;

/// The schemes this crate provides, as registered by [`install()`].
pub const SCHEMES: [&str; 7] = ["redis", "rediss", "postgres", "postgresql", "etcd", "etcds", "k8s"];

static REGISTRATION: LeaseSchemes = LeaseSchemes {
    provider: "flakeid-lease-net",
    schemes: &SCHEMES,
    parse: lease_spec,
};

/// docs/leases.md's Rust example, compiled by `cargo test --doc` (tests/docs/run.py
/// checks that every Rust block of the docs is in a file included so).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/leases.md")]
pub struct LeasesDoctests;

/// Registers the network schemes ([`SCHEMES`]) with `flakeid-core`, so that every
/// lease URL parsed in this process may use them. Idempotent and cheap: call it at
/// start-up, or before each build. If another crate registered one of these
/// schemes first, that registration stays (and this returns without changing it).
pub fn install() {
    let _ = register_lease_schemes(&REGISTRATION);
}

/// Checks a network lease URL (without connecting) and returns its spec: a store
/// opened afresh for each generator built from it.
pub fn lease_spec(url: &str) -> Result<LeaseSpec> {
    parse(url).map_err(redact_error)
}

fn parse(url: &str) -> Result<LeaseSpec> {
    let u = LeaseUrl::parse(url)?;
    u.namespace()?;
    let open: fn(&LeaseUrl) -> Result<Box<dyn LeaseStore>> = match u.scheme.as_str() {
        "redis" | "rediss" => {
            RedisStore::check_url(&u)?;
            |u| Ok(Box::new(RedisStore::from_url(u)?))
        }
        "postgres" | "postgresql" => {
            PostgresStore::check_url(&u)?;
            |u| Ok(Box::new(PostgresStore::from_url(u)?))
        }
        "etcd" | "etcds" => {
            EtcdStore::check_url(&u)?;
            |u| Ok(Box::new(EtcdStore::from_url(u)?))
        }
        "k8s" => {
            K8sStore::check_url(&u)?;
            |u| Ok(Box::new(K8sStore::from_url(u)?))
        }
        other => {
            return Err(url::config(format!(
                "lease URL scheme {other:?} is not one of {} (flakeid-lease-net)",
                SCHEMES.join(", ")
            )));
        }
    };
    let name = u.redacted();
    Ok(LeaseSpec::custom(move || open(&u)).named(name))
}

pub(crate) fn lease_error(message: impl Into<String>) -> Error {
    Error::Lease {
        message: message.into(),
    }
}

/// How long to wait before asking again a store that answered that it is not
/// ready yet (Redis `LOADING` while it reads its data after a restart, PostgreSQL
/// `57P03` while it starts up, an etcd member without a leader). Such answers are
/// retried until the call's deadline instead of failing `build()` in the seconds
/// after a store restarts.
pub(crate) const STARTING_RETRY: Duration = Duration::from_millis(50);

/// Sleeps [`STARTING_RETRY`] if another try still fits before `until`; false when
/// it does not (the caller then reports the store's answer).
pub(crate) fn pause_before_retry(until: Instant) -> bool {
    if Instant::now() + STARTING_RETRY >= until {
        return false;
    }
    std::thread::sleep(STARTING_RETRY);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_and_registration() {
        let e = lease_spec("zk://h/x").unwrap_err();
        assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
        let spec = lease_spec("redis://u:s3cret99@127.0.0.1:6379/0?namespace=a").unwrap();
        let shown = format!("{spec:?}");
        assert!(
            shown.contains("redis://u@127.0.0.1:6379/0") && !shown.contains("s3cret99"),
            "{shown}"
        );
        assert!(lease_spec("etcd://h:1/path").is_err());
        // Before install() the core names this crate; after it, the URL parses.
        install();
        install();
        assert!(LeaseSpec::parse("postgres://u:pw@h:1/db?sslmode=verify-full").is_ok());
        let e = LeaseSpec::parse("postgres://u:pw@h:1/db?sslmode=nope")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sslmode"), "{e}");
    }
}
