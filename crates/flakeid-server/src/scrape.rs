//! What `/metrics` reads at scrape time ([`Live`], a collector): the service's
//! [`Snapshot`] and the connections' gauges, handed in by their owners, so that
//! the metrics know neither the service nor the connections.

use flakeid_core::Stats;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Unit;
use std::sync::{Arc, Mutex, OnceLock};

/// What `/metrics` reads of the service at scrape time ([`Metrics::set_source`]):
/// handed in by the service, so that the metrics know no service.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Snapshot {
    /// The generator in use: its stats, whether its lease is held (always without
    /// one) and its lease's last renewal round trip.
    pub stats: Stats,
    pub lease_held: bool,
    pub lease_renew_latency_us: Option<u64>,
    /// Leases taken again after one was lost.
    pub lease_reacquired: u64,
    /// Access-log lines dropped (`None`: no access log).
    pub access_log_dropped: Option<u64>,
    /// Bytes of the request budget held, requests it refused, and bytes of the
    /// response budget reserved.
    pub request_memory: usize,
    pub request_memory_refused: u64,
    pub response_memory: usize,
}

/// The connections' figures (conn/slots.rs, `Conns`), once serving.
pub(crate) trait ConnGauges: Send + Sync + std::fmt::Debug {
    /// Open client connections.
    fn open(&self) -> usize;
    /// Connections closed to make room.
    fn evicted(&self) -> u64;
    /// Connections closed at once at a cap.
    fn refused(&self) -> u64;
    /// `accept` calls that failed (out of descriptors).
    fn accept_failed(&self) -> u64;
}

pub(crate) type Source = Box<dyn Fn() -> Option<Snapshot> + Send + Sync>;

/// Where [`Live`] reads from: the service's snapshot, and the connections.
#[derive(Default)]
pub(crate) struct Sources {
    pub(crate) snapshot: OnceLock<Source>,
    pub(crate) conns: Mutex<Option<Arc<dyn ConnGauges>>>,
    /// The counters of generators replaced after a lost lease.
    pub(crate) retired: Mutex<Stats>,
}

impl std::fmt::Debug for Sources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sources").finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

#[derive(Debug)]
pub(crate) struct Live(pub(crate) Arc<Sources>);

fn seconds_ms(ms: u64) -> f64 {
    ms as f64 / 1e3
}

fn counter(e: &mut DescriptorEncoder, name: &str, help: &str, unit: Option<&Unit>, v: impl Into<f64>) -> Fmt {
    let c = ConstCounter::new(v.into());
    c.encode(e.encode_descriptor(name, help, unit, c.metric_type())?)
}

fn counter_u64(e: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> Fmt {
    let c = ConstCounter::new(v);
    c.encode(e.encode_descriptor(name, help, None, c.metric_type())?)
}

fn gauge(e: &mut DescriptorEncoder, name: &str, help: &str, unit: Option<&Unit>, v: f64) -> Fmt {
    let g = ConstGauge::new(v);
    g.encode(e.encode_descriptor(name, help, unit, g.metric_type())?)
}

fn gauge_i64(e: &mut DescriptorEncoder, name: &str, help: &str, v: i64) -> Fmt {
    let g = ConstGauge::new(v);
    g.encode(e.encode_descriptor(name, help, None, g.metric_type())?)
}

type Fmt = Result<(), std::fmt::Error>;

/// The lease states, each a series of `flakeid_lease_state` (a state set: the
/// current one is 1). `none`: no lease.
const LEASE_STATES: [&str; 5] = ["none", "held", "unreachable", "lost", "released"];

impl Collector for Live {
    fn encode(&self, mut e: DescriptorEncoder) -> Fmt {
        let Some(snap) = self.0.snapshot.get().and_then(|source| source()) else {
            return Ok(());
        };
        let s = snap.stats;
        let r = *self.0.retired.lock().unwrap_or_else(|e| e.into_inner());
        let secs = Some(&Unit::Seconds);
        counter_u64(
            &mut e,
            "generator_ids_issued",
            "IDs the generator issued (Stats::ids_issued; a lost lease's generator included)",
            s.ids_issued + r.ids_issued,
        )?;
        counter_u64(
            &mut e,
            "tick_waits",
            "Waits for the next tick because the sequence (or the borrow window) was used up",
            s.tick_waits + r.tick_waits,
        )?;
        counter(
            &mut e,
            "tick_wait",
            "Time spent in those waits",
            secs,
            (s.tick_wait_us + r.tick_wait_us) as f64 / 1e6,
        )?;
        gauge(
            &mut e,
            "lead",
            "How far the last ID issued is ahead of the clock (borrow mode, or a clock that went back)",
            secs,
            seconds_ms(s.lead_ms),
        )?;
        counter_u64(
            &mut e,
            "clock_rollbacks",
            "Calls that found the clock behind IDs already issued",
            s.clock_rollbacks + r.clock_rollbacks,
        )?;
        gauge(
            &mut e,
            "clock_rollback_max",
            "The largest clock rollback seen",
            secs,
            seconds_ms(s.max_rollback_ms.max(r.max_rollback_ms)),
        )?;
        let state = s.lease_state.unwrap_or("none");
        {
            let fam = e.encode_descriptor(
                "lease_state",
                "The node-id lease's state: the current one is 1 (none: no lease)",
                None,
                MetricType::Gauge,
            )?;
            let mut fam = fam;
            for name in LEASE_STATES {
                let v = ConstGauge::new(i64::from(name == state));
                v.encode(fam.encode_family(&StateLabels { state: name })?)?;
            }
        }
        let held = snap.lease_held;
        gauge_i64(
            &mut e,
            "lease_held",
            "1 while the node id is held (always 1 without a lease)",
            i64::from(held),
        )?;
        gauge(
            &mut e,
            "lease_remaining",
            "Time until the lease's window closes unless renewed (0 without a lease)",
            secs,
            seconds_ms(s.lease_remaining_ms.unwrap_or(0)),
        )?;
        gauge(
            &mut e,
            "lease_renew_latency",
            "Round trip of the lease's last confirmed renewal (0 without a lease)",
            secs,
            snap.lease_renew_latency_us.unwrap_or(0) as f64 / 1e6,
        )?;
        counter_u64(
            &mut e,
            "lease_reacquired",
            "Leases taken again after one was lost",
            snap.lease_reacquired,
        )?;
        if let Some(dropped) = snap.access_log_dropped {
            counter_u64(
                &mut e,
                "access_log_dropped",
                "Access-log lines dropped because the writer fell behind (--access-log)",
                dropped,
            )?;
        }
        gauge_i64(
            &mut e,
            "request_memory_bytes",
            "Bytes of gRPC request bodies buffered now (at most --request-memory)",
            i64::try_from(snap.request_memory).unwrap_or(i64::MAX),
        )?;
        counter_u64(
            &mut e,
            "request_memory_refused",
            "gRPC requests refused (RESOURCE_EXHAUSTED) because --request-memory was in use",
            snap.request_memory_refused,
        )?;
        gauge_i64(
            &mut e,
            "response_memory_bytes",
            "Bytes reserved for responses not yet sent to their clients (at most --response-memory)",
            i64::try_from(snap.response_memory).unwrap_or(i64::MAX),
        )?;
        let conns = self.0.conns.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(c) = conns {
            gauge_i64(
                &mut e,
                "connections_open",
                "Open client connections",
                i64::try_from(c.open()).unwrap_or(i64::MAX),
            )?;
            counter_u64(
                &mut e,
                "connections_evicted",
                "Connections closed to make room: unserved, or served with no request in flight",
                c.evicted(),
            )?;
            counter_u64(
                &mut e,
                "connections_refused",
                "Connections closed at once: at a cap, every other connection had a request in flight",
                c.refused(),
            )?;
            counter_u64(
                &mut e,
                "connections_accept_failed",
                "accept calls that failed (out of file descriptors): the listener backed off, up to 1 s",
                c.accept_failed(),
            )?;
        }
        Ok(())
    }
}
