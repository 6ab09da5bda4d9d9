//! What `/healthz` and `/v1/layout` read of the lease supervisor's state
//! ([`Watch`]): the supervisor (lease.rs) writes it, the service holds it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What `/healthz` and `/v1/layout` read of the supervisor's state.
#[derive(Debug)]
pub(crate) struct Watch {
    base: Instant,
    /// Milliseconds since `base` + 1 at which the lease stopped being held; 0 while
    /// it is held (or there is no lease).
    unleased_since: AtomicU64,
    /// The liveness timeout in ms; 0: no liveness failure (no supervisor).
    liveness_ms: AtomicU64,
    /// Leases taken again after a loss.
    pub(crate) releases: AtomicU64,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            base: Instant::now(),
            unleased_since: AtomicU64::new(0),
            liveness_ms: AtomicU64::new(0),
            releases: AtomicU64::new(0),
        }
    }
}

impl Watch {
    /// `/healthz` fails once no lease has been held for `t` (zero: never).
    pub(crate) fn set_liveness_timeout(&self, t: std::time::Duration) {
        self.liveness_ms.store(t.as_millis() as u64, Ordering::Relaxed);
    }

    fn now_ms(&self) -> u64 {
        self.base.elapsed().as_millis() as u64 + 1
    }

    /// The lease is held (again).
    pub(crate) fn held(&self) {
        self.unleased_since.store(0, Ordering::Relaxed);
    }

    /// The lease is not held: the liveness clock runs from the first time seen.
    pub(crate) fn not_held(&self) {
        let now = self.now_ms();
        let _ = self
            .unleased_since
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Why the process counts as not live: no lease held for longer than the
    /// liveness timeout.
    pub(crate) fn liveness_failure(&self) -> Option<String> {
        let limit = self.liveness_ms.load(Ordering::Relaxed);
        let since = self.unleased_since.load(Ordering::Relaxed);
        if limit == 0 || since == 0 {
            return None;
        }
        let without = self.now_ms().saturating_sub(since);
        (without >= limit)
            .then(|| format!("no node-id lease held for {without} ms (the liveness timeout is {limit} ms)"))
    }
}
