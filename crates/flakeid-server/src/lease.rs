//! The lease supervisor of a leased service: logs every change of the
//! lease's state, leases again — any free node id — when the lease is lost for good
//! (taken over, or forgotten by a store that lost its data), with exponential
//! backoff, and turns `/healthz` into a liveness failure once the service has been
//! without a held lease for [`Supervision::liveness_timeout`], so that a supervisor
//! (Kubernetes liveness probe, a systemd watchdog script) restarts a replica that
//! cannot recover by itself.
//!
//! A lost lease is never held again by the same generator: the supervisor builds a
//! new one (`rebuild`, the builder the service was started with) and swaps it in.
//! Requests already holding the old generator are refused by it (its gate is shut);
//! new requests use the new one.

use crate::liveness::Watch;
use flakeid_core::{Error, Generator, LeaseState};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How the supervisor polls, backs off and reports.
#[derive(Debug, Clone)]
pub struct Supervision {
    /// `/healthz` answers 503 once no lease has been held this long (0: never).
    /// Default 60 s.
    pub liveness_timeout: Duration,
    /// The first wait after a failed attempt to lease again; doubled after each
    /// failure up to `backoff_max`, with ±25 % jitter. Defaults 500 ms and 30 s.
    pub backoff_min: Duration,
    /// The longest wait between attempts (see `backoff_min`).
    pub backoff_max: Duration,
}

impl Default for Supervision {
    fn default() -> Self {
        Supervision {
            liveness_timeout: Duration::from_secs(60),
            backoff_min: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
        }
    }
}

fn kind(state: &LeaseState) -> &'static str {
    match state {
        LeaseState::Held => "held",
        LeaseState::Unreachable { .. } => "unreachable",
        LeaseState::Lost => "lost",
        LeaseState::Released => "released",
        _ => "other",
    }
}

/// A pseudo-random factor in [0.75, 1.25) for the backoff (no RNG dependency:
/// the clock's nanoseconds and the process id differ between replicas).
fn jitter(d: Duration) -> Duration {
    let seed = u64::from(std::process::id()).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.subsec_nanos() as u64);
    let frac = (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
    d.mul_f64(0.75 + frac / 2.0)
}

/// What the supervisor reads and changes of the service it watches (service.rs
/// implements it, so the supervisor knows no service).
pub(crate) trait Supervised: Send + Sync + 'static {
    /// The generator in use (`None`: no node id).
    fn generator(&self) -> Option<Arc<Generator>>;
    /// Whether the service drains (the supervisor then stops).
    fn is_draining(&self) -> bool;
    /// The liveness record the supervisor keeps.
    fn lease(&self) -> &Watch;
    /// Swaps `new` in, giving back the generator it replaced; refused (`new` back)
    /// once the service drains.
    fn replace_generator(&self, new: Arc<Generator>) -> Result<Arc<Generator>, Arc<Generator>>;
}

/// Watches the service's lease until the service drains: logs each state change,
/// leases again after a loss (calling `rebuild` on the blocking pool, with
/// backoff), and keeps the liveness record. Returns at once for a service without
/// a lease.
pub(crate) async fn supervise<S: Supervised, F>(svc: Arc<S>, rebuild: F, opts: Supervision)
where
    F: Fn() -> Result<Generator, Error> + Send + Sync + 'static,
{
    if !svc.generator().is_some_and(|g| g.is_leased()) {
        return;
    }
    svc.lease().set_liveness_timeout(opts.liveness_timeout);
    let rebuild = Arc::new(rebuild);
    let mut last = "held";
    let mut reported_liveness = false;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if svc.is_draining() {
            return;
        }
        let Some(g) = svc.generator() else { return };
        let Some(state) = g.lease_state() else { return };
        let now = kind(&state);
        if now != last {
            match state {
                LeaseState::Held => tracing::info!(node = g.node(), "node-id lease {state}"),
                _ => tracing::warn!(node = g.node(), "node-id lease {state} (was {last}): not issuing"),
            }
            last = now;
        }
        if matches!(state, LeaseState::Held) {
            svc.lease().held();
            reported_liveness = false;
            continue;
        }
        svc.lease().not_held();
        if let Some(why) = svc.lease().liveness_failure()
            && !reported_liveness
        {
            tracing::error!("liveness failure: {why}; /healthz answers 503");
            reported_liveness = true;
        }
        if !matches!(state, LeaseState::Lost) {
            continue; // unreachable: the core renews by itself
        }
        tracing::warn!(
            node = g.node(),
            "node-id lease lost (taken over, or forgotten by the store): leasing any free node id again"
        );
        drop(g);
        let mut backoff = opts.backoff_min;
        loop {
            if svc.is_draining() {
                return;
            }
            let build = rebuild.clone();
            let built = tokio::task::spawn_blocking(move || build())
                .await
                .map_err(|e| Error::Lease {
                    message: format!("lease task failed: {e}"),
                })
                .and_then(|r| r);
            match built {
                Ok(new) => {
                    let node = new.node();
                    match svc.replace_generator(Arc::new(new)) {
                        Ok(old) => {
                            // The lost generator refuses already; dropping it may
                            // talk to the store.
                            tokio::task::spawn_blocking(move || drop(old));
                            svc.lease().releases.fetch_add(1, Ordering::Relaxed);
                            svc.lease().held();
                            tracing::info!(node, "node-id lease taken again: issuing as node {node}");
                            last = "held";
                            reported_liveness = false;
                        }
                        Err(new) => {
                            // Draining meanwhile: give it straight back.
                            tokio::task::spawn_blocking(move || new.release_lease());
                            return;
                        }
                    }
                    break;
                }
                Err(e) => {
                    let wait = jitter(backoff);
                    tracing::warn!(retry_in_ms = wait.as_millis() as u64, "leasing again failed: {e}");
                    // Wait in steps: report the liveness failure when it happens, and
                    // stop at once on a drain.
                    let until = tokio::time::Instant::now() + wait;
                    while tokio::time::Instant::now() < until {
                        if svc.is_draining() {
                            return;
                        }
                        if let Some(why) = svc.lease().liveness_failure()
                            && !reported_liveness
                        {
                            tracing::error!("liveness failure: {why}; /healthz answers 503");
                            reported_liveness = true;
                        }
                        tokio::time::sleep_until(until.min(tokio::time::Instant::now() + Duration::from_millis(100)))
                            .await;
                    }
                    backoff = (backoff * 2).min(opts.backoff_max);
                }
            }
        }
    }
}
