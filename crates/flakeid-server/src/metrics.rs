//! `/metrics`: the service's counters and the generator's [`Stats`], named after
//! Prometheus conventions (issue 21, issue 27 §2): base units (`_seconds`),
//! `_total` on counters, one HELP and TYPE per family, `flakeid_build_info`, and a
//! request-latency histogram per route, method and status class.
//!
//! The generator's figures are read at scrape time (a collector), never on the
//! issuing path. A lost lease replaces the generator (lease.rs): the counters of
//! the generators retired that way are kept and added, so that every `_total`
//! only grows for the life of the process.

use crate::Service;
use flakeid_core::{Generator, LeaseState, Stats};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use std::sync::{Mutex, Weak};

/// The upper bounds of the latency histogram's buckets, in seconds: 50 µs
/// doubling to about 1.6 s (16 buckets, and `+Inf`).
pub fn latency_buckets() -> impl Iterator<Item = f64> {
    exponential_buckets(0.000_05, 2.0, 16)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RouteLabels {
    pub route: &'static str,
    pub method: &'static str,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct LatencyLabels {
    pub route: &'static str,
    pub method: &'static str,
    /// `2xx`, `4xx`, ...
    pub class: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabels {
    pub kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RpcLabels {
    pub rpc: &'static str,
    pub code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabels {
    state: &'static str,
}

fn new_histogram() -> Histogram {
    Histogram::new(latency_buckets())
}

type HistogramFamily = Family<LatencyLabels, Histogram, fn() -> Histogram>;

#[derive(Debug)]
pub(crate) struct Metrics {
    pub registry: Registry,
    pub issued: Counter,
    pub requests: Family<RouteLabels, Counter>,
    pub latency: HistogramFamily,
    pub errors: Family<KindLabels, Counter>,
    pub grpc: Family<RpcLabels, Counter>,
    pub sealing: Gauge,
    /// The counters of generators replaced after a lost lease.
    pub retired: Mutex<Stats>,
}

impl Metrics {
    pub fn new(svc: Weak<Service>) -> Metrics {
        let mut registry = Registry::with_prefix("flakeid");
        let issued = Counter::default();
        let requests = Family::<RouteLabels, Counter>::default();
        let latency: HistogramFamily = Family::new_with_constructor(new_histogram);
        let errors = Family::<KindLabels, Counter>::default();
        let grpc = Family::<RpcLabels, Counter>::default();
        let sealing = Gauge::default();
        registry.register(
            "build",
            "The flakeid version serving",
            Info::new(BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            }),
        );
        registry.register("ids_issued", "IDs handed to clients (HTTP and gRPC)", issued.clone());
        registry.register(
            "http_requests",
            "Requests by route, method and status (gRPC calls are POSTs to their method's route)",
            requests.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's head to its response's head, by route, method and status class",
            Unit::Seconds,
            latency.clone(),
        );
        registry.register("errors", "Error responses by kind", errors.clone());
        registry.register("grpc_calls", "gRPC calls by method and status code", grpc.clone());
        registry.register(
            "sealing",
            "1 when issued IDs are sealed (--seal-key-file), else 0",
            sealing.clone(),
        );
        registry.register_collector(Box::new(Live(svc)));
        Metrics {
            registry,
            issued,
            requests,
            latency,
            errors,
            grpc,
            sealing,
            retired: Mutex::new(Stats::default()),
        }
    }

    /// Keeps the counters of `old`, a generator being replaced.
    pub fn retire(&self, old: &Generator) {
        let s = old.stats();
        let mut r = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        r.ids_issued += s.ids_issued;
        r.tick_waits += s.tick_waits;
        r.tick_wait_us += s.tick_wait_us;
        r.clock_rollbacks += s.clock_rollbacks;
        r.max_rollback_ms = r.max_rollback_ms.max(s.max_rollback_ms);
    }

    /// Records one answered request (conn.rs).
    pub fn observe(&self, route: &'static str, method: &'static str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RouteLabels { route, method, status })
            .inc();
        self.latency
            .get_or_create(&LatencyLabels {
                route,
                method,
                class: status_class(status),
            })
            .observe(seconds);
    }
}

/// `2xx`, `4xx`, ... of an HTTP status.
pub(crate) fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}

/// The figures read at scrape time: the generator's stats, the lease, the
/// connections.
#[derive(Debug)]
struct Live(Weak<Service>);

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
        let Some(svc) = self.0.upgrade() else {
            return Ok(());
        };
        let g = svc.generator();
        let s = g.stats();
        let r = *svc.metrics.retired.lock().unwrap_or_else(|e| e.into_inner());
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
        let held = matches!(g.lease_state(), None | Some(LeaseState::Held));
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
            g.lease_renew_latency_us().unwrap_or(0) as f64 / 1e6,
        )?;
        counter_u64(
            &mut e,
            "lease_reacquired",
            "Leases taken again after one was lost",
            svc.lease.releases.load(std::sync::atomic::Ordering::Relaxed),
        )?;
        if let Some(log) = &svc.access {
            counter_u64(
                &mut e,
                "access_log_dropped",
                "Access-log lines dropped because the writer fell behind (--access-log)",
                log.dropped.load(std::sync::atomic::Ordering::Relaxed),
            )?;
        }
        if let Some(c) = svc.conns.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            gauge_i64(
                &mut e,
                "connections_open",
                "Open client connections",
                i64::try_from(c.open()).unwrap_or(i64::MAX),
            )?;
            counter_u64(
                &mut e,
                "connections_evicted",
                "Connections closed to make room because they had sent no request",
                c.evicted.load(std::sync::atomic::Ordering::Relaxed),
            )?;
            counter_u64(
                &mut e,
                "connections_refused",
                "Connections closed at once: the cap was reached and every connection had sent a request",
                c.refused.load(std::sync::atomic::Ordering::Relaxed),
            )?;
        }
        Ok(())
    }
}
