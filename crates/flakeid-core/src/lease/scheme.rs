//! Lease URL schemes beyond `file`, registered once per process by the crate that
//! provides them (as rustls's `CryptoProvider::install_default`): the core parses
//! `file://` itself and asks the registry for any other scheme, so a build without
//! the network stores carries none of their weight, and a build with them needs no
//! code change in the binding: `flakeid_lease_net::install()` at start-up.

use super::LeaseSpec;
use crate::error::{Error, Result};
use std::sync::Mutex;

/// Turns a URL of a registered scheme into a spec (checking it, not connecting).
/// Its errors are `Error::Config { field: "lease", .. }`; [`LeaseSpec::parse`]
/// redacts passwords from them.
pub type LeaseUrlParser = fn(&str) -> Result<LeaseSpec>;

/// What a provider registers: its schemes and their parser.
#[derive(Debug)]
pub struct LeaseSchemes {
    /// Who provides them, for messages (a crate name).
    pub provider: &'static str,
    /// Lower-case schemes, e.g. `["redis", "rediss"]`. `file` is the core's own.
    pub schemes: &'static [&'static str],
    /// Reads a URL of one of these schemes into a store.
    pub parse: LeaseUrlParser,
}

/// The schemes `flakeid-lease-net` provides: named in the error a build without it
/// gives for them.
const NETWORK_SCHEMES: [&str; 7] = ["redis", "rediss", "postgres", "postgresql", "etcd", "etcds", "k8s"];

static REGISTRY: Mutex<Vec<&'static LeaseSchemes>> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Vec<&'static LeaseSchemes>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes [`LeaseSpec::parse`] (and so `GeneratorBuilder::lease_url` everywhere in
/// this process) accept `schemes`. Idempotent: registering the same `&'static`
/// again is a no-op. A scheme another registration already provides is not
/// taken over: `Err` returns that registration and nothing changes.
pub fn register_lease_schemes(schemes: &'static LeaseSchemes) -> std::result::Result<(), &'static LeaseSchemes> {
    let mut reg = registry();
    for r in reg.iter() {
        if std::ptr::eq(*r, schemes) {
            return Ok(());
        }
        if r.schemes.iter().any(|s| schemes.schemes.contains(s)) {
            return Err(r);
        }
    }
    reg.push(schemes);
    Ok(())
}

/// The parser registered for `scheme` (lower case).
pub(crate) fn parser(scheme: &str) -> Option<LeaseUrlParser> {
    registry().iter().find(|r| r.schemes.contains(&scheme)).map(|r| r.parse)
}

/// The error for a scheme nobody registered, saying where it would come from.
pub(crate) fn unavailable(scheme: &str) -> Error {
    let message = if NETWORK_SCHEMES.contains(&scheme) {
        format!(
            "{scheme}:// leases are not in this build: the network lease stores ({}) come from the crate \
             flakeid-lease-net; call flakeid_lease_net::install() once at start-up (the Python, Node and C \
             bindings and the CLI do when built with their cargo feature \"net-leases\", on by default)",
            NETWORK_SCHEMES.join(", ")
        )
    } else {
        let mut known = vec!["file"];
        for r in registry().iter() {
            known.extend(r.schemes.iter().copied());
        }
        for s in NETWORK_SCHEMES {
            if !known.contains(&s) {
                known.push(s);
            }
        }
        format!("lease URL scheme {scheme:?} is not one of {}", known.join(", "))
    };
    Error::config("lease", message)
}
