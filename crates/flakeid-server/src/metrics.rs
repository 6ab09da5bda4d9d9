//! `/metrics`: the service's counters and the generator's [`Stats`], named after
//! Prometheus conventions: base units (`_seconds`),
//! `_total` on counters, one HELP and TYPE per family, `flakeid_build_info`, and a
//! request-latency histogram per route, method and status class.
//!
//! The generator's figures are read at scrape time (a collector), never on the
//! issuing path. A lost lease replaces the generator (lease.rs): the counters of
//! the generators retired that way are kept and added, so that every `_total`
//! only grows for the life of the process.

use crate::scrape::{ConnGauges, Live, Snapshot, Sources};
use axum::body::Bytes;
use flakeid_core::Generator;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use std::sync::{Arc, Mutex, OnceLock, Weak};

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

fn new_histogram() -> Histogram {
    Histogram::new(latency_buckets())
}

type HistogramFamily = Family<LatencyLabels, Histogram, fn() -> Histogram>;

/// How a route's response bodies are held to the response budgets (budget.rs):
/// said once for each route, in [`ROUTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BodyBudget {
    /// At most 4 KiB whatever the request (one ID, a probe, an
    /// error): counted in what each connection holds beyond the budgets
    /// ([`crate::config::PER_CONNECTION`]), reserving nothing.
    Small,
    /// Made only into room its handler reserved from the connection's, the client's
    /// and the server's response budgets first (budget.rs, `Flow::reserve`): the
    /// transport gives each request of the route its `Flow`.
    Reserved,
    /// One immutable buffer shared by every answer (`/metrics`' renderings, at
    /// most [`MAX_RENDERINGS`]; `/openapi.json`, made once): unread answers hold no
    /// copy of their own.
    Shared,
}

/// The route table: each route's `route` label (its pattern, a gRPC method's path,
/// and `other` for every unknown path: a scanner must not grow the metrics) and how
/// its bodies are budgeted. Listed once; [`Route`] is an index into it.
const ROUTES: [(&str, BodyBudget); 23] = {
    use BodyBudget::{Reserved, Shared, Small};
    [
        ("/v1/id", Small),
        ("/v1/ids", Reserved),
        ("/v1/layout", Small),
        ("/healthz", Small),
        ("/readyz", Small),
        ("/metrics", Shared),
        ("/openapi.json", Shared),
        ("/v1/uuid", Reserved),
        ("/v1/ulid", Reserved),
        ("/v1/typeid", Reserved),
        ("/flakeid.v1.Flakeid/Next", Small),
        ("/flakeid.v1.Flakeid/Batch", Reserved),
        ("/flakeid.v1.Flakeid/Stream", Reserved),
        ("/flakeid.v1.Flakeid/Unseal", Reserved),
        ("/flakeid.v1.Flakeid/NextUuid", Small),
        ("/flakeid.v1.Flakeid/BatchUuid", Reserved),
        ("/grpc.health.v1.Health/Check", Small),
        ("/grpc.health.v1.Health/Watch", Small),
        ("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", Small),
        ("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", Small),
        ("/v1/decode/{id}", Small),
        ("/v1/unseal/{id}", Small),
        ("other", Small),
    ]
};
/// The routes matched by their exact path: those before the first pattern.
const EXACT_ROUTES: usize = Route::DECODE.0 as usize;

/// The route label of a request: an index into [`ROUTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Route(u8);

impl Route {
    /// The route of a path: the route's pattern, a gRPC method's path, or `other`.
    pub fn of(path: &str) -> Route {
        if let Some(i) = ROUTES[..EXACT_ROUTES].iter().position(|r| r.0 == path) {
            return Route(i as u8);
        }
        match path.rsplit_once('/') {
            Some(("/v1/decode", id)) if !id.is_empty() => Route::DECODE,
            Some(("/v1/unseal", id)) if !id.is_empty() => Route::UNSEAL,
            _ => Route::OTHER,
        }
    }

    /// The route named `name` in [`ROUTES`], found when compiling: a name the table
    /// does not hold does not compile, and a route added or moved moves its constant.
    const fn named(name: &str) -> Route {
        let mut i = 0;
        while i < ROUTES.len() {
            let (a, b) = (ROUTES[i].0.as_bytes(), name.as_bytes());
            let mut same = a.len() == b.len();
            let mut j = 0;
            while same && j < a.len() {
                same = a[j] == b[j];
                j += 1;
            }
            if same {
                return Route(i as u8);
            }
            i += 1;
        }
        panic!("not a route of ROUTES");
    }

    pub(crate) const ID: Route = Route::named("/v1/id");
    pub(crate) const HEALTHZ: Route = Route::named("/healthz");
    pub(crate) const READYZ: Route = Route::named("/readyz");
    #[cfg(test)]
    const IDS: Route = Route::named("/v1/ids");
    const STREAM: Route = Route::named("/flakeid.v1.Flakeid/Stream");
    /// Health `Watch`, then reflection's two: the last gRPC methods.
    const WATCH: Route = Route::named("/grpc.health.v1.Health/Watch");
    /// The first and last gRPC method in [`ROUTES`].
    const GRPC: std::ops::RangeInclusive<u8> = Route::named("/flakeid.v1.Flakeid/Next").0
        ..=Route::named("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo").0;
    const DECODE: Route = Route::named("/v1/decode/{id}");
    const UNSEAL: Route = Route::named("/v1/unseal/{id}");
    const OTHER: Route = Route::named("other");

    /// The label.
    pub fn name(self) -> &'static str {
        ROUTES[usize::from(self.0)].0
    }

    /// How the route's bodies are budgeted.
    pub(crate) fn body(self) -> BodyBudget {
        ROUTES[usize::from(self.0)].1
    }

    /// The method's name of a `flakeid.v1.Flakeid` call (the `rpc` label of
    /// `flakeid_grpc_calls_total`); `None` for other routes.
    pub(crate) fn rpc(self) -> Option<&'static str> {
        self.name().strip_prefix("/flakeid.v1.Flakeid/")
    }

    /// Whether the route is a gRPC method's (served by `POST` only).
    pub(crate) fn is_grpc(self) -> bool {
        Route::GRPC.contains(&self.0)
    }

    /// Whether the route's handler reserves its bodies' room
    /// ([`BodyBudget::Reserved`]): it needs its [`crate::budget::Flow`].
    pub fn is_streamed(self) -> bool {
        self.body() == BodyBudget::Reserved
    }

    /// Whether the route's calls may stay in flight for as long as their client
    /// likes: gRPC `Stream`, health `Watch` and reflection's (conn/slots.rs,
    /// `LONG_CALLS_DIVISOR`).
    pub(crate) fn is_long_lived(self) -> bool {
        self == Route::STREAM || (Route::WATCH.0..=*Route::GRPC.end()).contains(&self.0)
    }
}

/// The `method` labels: the methods the routes serve, and `other` for every other
/// method and for any method on a route that does not serve it (a client must not
/// grow the metrics: a label is a series per route and status).
const METHODS: [&str; 4] = ["GET", "HEAD", "POST", "other"];

/// The method label of a request: an index into [`METHODS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MethodLabel(u8);

impl MethodLabel {
    const OTHER: MethodLabel = MethodLabel(3);

    /// The label of `m` on `route`: its name when the route serves it (`GET` and
    /// `HEAD` for the HTTP routes, `POST` for the gRPC methods), else `other`.
    pub fn of(route: Route, m: &axum::http::Method) -> MethodLabel {
        use axum::http::Method;
        match (route.is_grpc(), m) {
            _ if route == Route::OTHER => MethodLabel::OTHER,
            (false, &Method::GET) => MethodLabel(0),
            (false, &Method::HEAD) => MethodLabel(1),
            (true, &Method::POST) => MethodLabel(2),
            _ => MethodLabel::OTHER,
        }
    }

    /// The label.
    pub fn name(self) -> &'static str {
        METHODS[usize::from(self.0)]
    }
}

/// The statuses the server answers with, each with a place in [`Metrics`]'s
/// table of handles; any other status takes the label lookups.
const STATUSES: [u16; 10] = [200, 400, 404, 405, 406, 409, 414, 431, 500, 503];

/// One series of `flakeid_http_requests_total` and its latency histogram, shared
/// with their families (a clone of a metric is the same metric).
#[derive(Debug)]
struct Handles {
    requests: Counter,
    latency: Histogram,
}

#[derive(Debug)]
pub(crate) struct Metrics {
    pub registry: Registry,
    pub issued: Counter,
    pub requests: Family<RouteLabels, Counter>,
    pub latency: HistogramFamily,
    pub errors: Family<KindLabels, Counter>,
    pub grpc: Family<RpcLabels, Counter>,
    pub sealing: Gauge,
    /// The handles of each (route, method, status in [`STATUSES`]), made when first
    /// used: recording a request is then a counter add and a histogram observe, with
    /// no label hashing and no family lock.
    handles: Box<[OnceLock<Handles>]>,
    /// The last rendering of `/metrics` and when it was made, alive while an
    /// answer holds it ([`Metrics::scrape`]).
    rendered: Mutex<Option<(std::time::Instant, Weak<Rendered>)>>,
    /// Renderings alive ([`MAX_RENDERINGS`]).
    renderings: Arc<std::sync::atomic::AtomicUsize>,
    /// What the figures read at scrape time come from.
    sources: Arc<Sources>,
}

/// How long one rendering of `/metrics` is served to every scrape
/// ([`Metrics::scrape`]).
pub const METRICS_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Renderings of `/metrics` alive at once at most: while answers left unread hold
/// this many, scrapes get the newest of them again rather than a new one.
pub const MAX_RENDERINGS: usize = 4;

/// One rendering of `/metrics`, shared by every answer made from it (each holds an
/// `Arc` of it) and counted in [`Metrics::renderings`] until the last of them is
/// written or dropped.
#[derive(Debug)]
struct Rendered {
    text: Vec<u8>,
    alive: Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for Rendered {
    fn drop(&mut self) {
        self.alive.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// An answer's hold on a [`Rendered`].
#[derive(Debug)]
struct Answer(Arc<Rendered>);

impl AsRef<[u8]> for Answer {
    fn as_ref(&self) -> &[u8] {
        &self.0.text
    }
}

impl AsRef<[u8]> for Rendered {
    fn as_ref(&self) -> &[u8] {
        &self.text
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let sources = Arc::new(Sources::default());
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
        registry.register_collector(Box::new(Live(sources.clone())));
        Metrics {
            registry,
            issued,
            requests,
            latency,
            errors,
            grpc,
            sealing,
            handles: (0..ROUTES.len() * METHODS.len() * STATUSES.len())
                .map(|_| OnceLock::new())
                .collect(),
            rendered: Mutex::new(None),
            renderings: Arc::default(),
            sources,
        }
    }

    /// Where the figures read at scrape time come from: `source` gives them, or
    /// `None` once the service is gone (then they are left out). Set once; a second
    /// call changes nothing.
    pub fn set_source(&self, source: impl Fn() -> Option<Snapshot> + Send + Sync + 'static) {
        let _ = self.sources.snapshot.set(Box::new(source));
    }

    /// The open connections, counted from now on (`connections_*`).
    pub fn set_conns(&self, conns: Arc<dyn ConnGauges>) {
        *self.sources.conns.lock().unwrap_or_else(|e| e.into_inner()) = Some(conns);
    }

    /// The body of `/metrics`, fresh unless answers not yet written hold the last
    /// rendering: then that one is shared (one immutable buffer, so N answers left
    /// unread hold one copy) for [`METRICS_INTERVAL`], and, while [`MAX_RENDERINGS`]
    /// are held, for as long as they are. So `/metrics` holds at most
    /// `MAX_RENDERINGS` x its largest rendering, whatever its clients leave unread
    /// (docs/service.md, "Memory budget").
    pub(crate) fn scrape(&self) -> Result<Bytes, std::fmt::Error> {
        use std::sync::atomic::Ordering;
        let mut last = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, held)) = last.as_ref()
            && let Some(r) = held.upgrade()
            && (at.elapsed() < METRICS_INTERVAL || self.renderings.load(Ordering::Acquire) >= MAX_RENDERINGS)
        {
            return Ok(Bytes::from_owner(Answer(r)));
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        self.renderings.fetch_add(1, Ordering::AcqRel);
        let r = Arc::new(Rendered {
            text: text.into_bytes(),
            alive: self.renderings.clone(),
        });
        *last = Some((std::time::Instant::now(), Arc::downgrade(&r)));
        Ok(Bytes::from_owner(Answer(r)))
    }

    /// Keeps the counters of `old`, a generator being replaced.
    pub fn retire(&self, old: &Generator) {
        let s = old.stats();
        let mut r = self.sources.retired.lock().unwrap_or_else(|e| e.into_inner());
        r.ids_issued += s.ids_issued;
        r.tick_waits += s.tick_waits;
        r.tick_wait_us += s.tick_wait_us;
        r.clock_rollbacks += s.clock_rollbacks;
        r.max_rollback_ms = r.max_rollback_ms.max(s.max_rollback_ms);
    }

    /// Counts one `flakeid.v1.Flakeid` call by the status it ended with (conn/bodies.rs,
    /// `Tracked`: every call, refusals made before its handler included).
    pub fn count_rpc(&self, rpc: &'static str, code: u16) {
        self.grpc.get_or_create(&RpcLabels { rpc, code }).inc();
    }

    /// Records one answered request (conn/requests.rs).
    pub fn observe(&self, route: Route, method: MethodLabel, status: u16, seconds: f64) {
        match STATUSES.iter().position(|s| *s == status) {
            Some(s) => {
                let i = (usize::from(route.0) * METHODS.len() + usize::from(method.0)) * STATUSES.len() + s;
                let h = self.handles[i].get_or_init(|| Handles {
                    requests: self.request_counter(route, method, status),
                    latency: self.latency_histogram(route, method, status),
                });
                h.requests.inc();
                h.latency.observe(seconds);
            }
            None => {
                self.request_counter(route, method, status).inc();
                self.latency_histogram(route, method, status).observe(seconds);
            }
        }
    }

    fn request_counter(&self, route: Route, method: MethodLabel, status: u16) -> Counter {
        self.requests
            .get_or_create(&RouteLabels {
                route: route.name(),
                method: method.name(),
                status,
            })
            .clone()
    }

    fn latency_histogram(&self, route: Route, method: MethodLabel, status: u16) -> Histogram {
        self.latency
            .get_or_create(&LatencyLabels {
                route: route.name(),
                method: method.name(),
                class: status_class(status),
            })
            .clone()
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
/// budgets ([`Snapshot`]), and the connections.
#[cfg(test)]
mod tests {
    use super::*;

    /// The most bytes one rendering of `/metrics` can hold: its series are bounded by
    /// the routes, methods and statuses, not by what clients send
    /// (`clients_cannot_grow_the_metrics` renders every route and method with more
    /// statuses than the server answers with: 557 KiB).
    const MAX_SCRAPE: usize = 768 * 1024;

    fn text(m: &Metrics) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &m.registry).unwrap();
        out
    }

    fn value(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn routes_and_methods_map_to_their_labels() {
        for (path, label) in [
            ("/v1/id", "/v1/id"),
            ("/v1/ids", "/v1/ids"),
            ("/v1/decode/42", "/v1/decode/{id}"),
            ("/v1/unseal/abc", "/v1/unseal/{id}"),
            ("/v1/decode/", "other"),
            ("/v1/decode/1/2", "other"),
            ("/flakeid.v1.Flakeid/Stream", "/flakeid.v1.Flakeid/Stream"),
            (
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            ),
            ("/nope", "other"),
            ("", "other"),
        ] {
            assert_eq!(Route::of(path).name(), label, "{path}");
        }
        for (r, body) in ROUTES {
            assert_eq!(Route::of(r).name(), r);
            assert_eq!(Route::of(r).body(), body, "{r}");
            assert_eq!(Route::of(r).is_streamed(), body == BodyBudget::Reserved, "{r}");
        }
        assert_eq!(Route::ID.name(), "/v1/id");
        assert_eq!(Route::HEALTHZ.name(), "/healthz");
        assert_eq!(Route::READYZ.name(), "/readyz");
        assert_eq!(Route::IDS.name(), "/v1/ids");
        assert_eq!(Route::STREAM.name(), "/flakeid.v1.Flakeid/Stream");
        assert_eq!(Route::DECODE.name(), "/v1/decode/{id}");
        assert_eq!(Route::UNSEAL.name(), "/v1/unseal/{id}");
        assert_eq!(Route::OTHER.name(), "other");
        assert_eq!(ROUTES.len(), EXACT_ROUTES + 3);
        use axum::http::Method;
        let brew = Method::from_bytes(b"BREW").unwrap();
        for (route, m, label) in [
            ("/v1/id", Method::GET, "GET"),
            ("/v1/ids", Method::HEAD, "HEAD"),
            ("/v1/id", Method::POST, "other"),
            ("/v1/id", Method::CONNECT, "other"),
            ("/v1/id", brew.clone(), "other"),
            ("/v1/id", Method::from_bytes(b"other").unwrap(), "other"),
            ("/flakeid.v1.Flakeid/Batch", Method::POST, "POST"),
            ("/flakeid.v1.Flakeid/Batch", Method::GET, "other"),
            ("/nope", Method::GET, "other"),
            ("/nope", brew, "other"),
        ] {
            assert_eq!(MethodLabel::of(Route::of(route), &m).name(), label, "{route} {m}");
        }
    }

    /// A scrape while no answer holds the last rendering is fresh; scrapes while
    /// one does share it for an interval; renderings held by unread answers are at
    /// most [`MAX_RENDERINGS`], and go with their answers.
    #[test]
    fn scrapes_share_a_few_renderings() {
        use std::sync::atomic::Ordering;
        let m = Metrics::new();
        let age = |m: &Metrics| {
            let mut r = m.rendered.lock().unwrap();
            let at = &mut r.as_mut().unwrap().0;
            *at = at.checked_sub(METRICS_INTERVAL).unwrap();
        };
        let first = m.scrape().unwrap();
        let again = m.scrape().unwrap();
        assert_eq!(first.as_ptr(), again.as_ptr());
        let mut held = vec![first, again];
        for _ in 0..10 {
            age(&m);
            held.push(m.scrape().unwrap());
        }
        let distinct: std::collections::HashSet<_> = held.iter().map(|b| b.as_ptr()).collect();
        assert_eq!(distinct.len(), MAX_RENDERINGS);
        assert_eq!(m.renderings.load(Ordering::Acquire), MAX_RENDERINGS);
        drop(held);
        assert_eq!(m.renderings.load(Ordering::Acquire), 0);
        // Nothing holds one: each scrape is fresh.
        m.issued.inc();
        let one = m.scrape().unwrap();
        let text = std::str::from_utf8(&one).unwrap().to_owned();
        drop(one);
        m.issued.inc();
        let two = m.scrape().unwrap();
        assert_eq!(value(&text, "flakeid_ids_issued_total"), Some(1.0));
        assert_eq!(
            value(std::str::from_utf8(&two).unwrap(), "flakeid_ids_issued_total"),
            Some(2.0)
        );
    }

    /// Whatever paths and methods clients send, the series of the request families
    /// are the routes' own: every route, with every method HTTP defines and a few
    /// others, and every status the server answers with, renders at most
    /// [`MAX_SCRAPE`] bytes.
    #[test]
    fn clients_cannot_grow_the_metrics() {
        use axum::http::Method;
        let m = Metrics::new();
        let mut methods = [
            "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT",
        ]
        .map(|n| Method::from_bytes(n.as_bytes()).unwrap())
        .to_vec();
        methods.extend((0..20).map(|i| Method::from_bytes(format!("X{i}").as_bytes()).unwrap()));
        let paths = ROUTES
            .iter()
            .map(|r| r.0.replace("{id}", "1"))
            .chain((0..50).map(|i| format!("/scan/{i}")));
        for path in paths {
            for method in &methods {
                for status in STATUSES.iter().copied().chain([201, 302, 413, 418, 429, 502, 505]) {
                    m.observe(
                        Route::of(&path),
                        MethodLabel::of(Route::of(&path), method),
                        status,
                        0.01,
                    );
                }
            }
        }
        let t = text(&m);
        let series = t.matches("\nflakeid_http_requests_total{").count();
        // 12 HTTP routes x (GET, HEAD, other), 10 gRPC x (POST, other), other x other.
        assert_eq!(series, (12 * 3 + 10 * 2 + 1) * (STATUSES.len() + 7), "{t}");
        assert!(t.len() <= MAX_SCRAPE, "{} bytes", t.len());
    }

    /// Every (route, method, status) is counted in its own series, through the
    /// handle table and through the lookups alike (418 has no place in the table).
    #[test]
    fn each_request_is_counted_in_its_route_method_and_status() {
        let m = Metrics::new();
        let id = Route::of("/v1/id");
        let ids = Route::of("/v1/ids");
        let (get, head, post) = (
            MethodLabel::of(id, &axum::http::Method::GET),
            MethodLabel::of(id, &axum::http::Method::HEAD),
            MethodLabel::of(id, &axum::http::Method::POST),
        );
        let calls = [
            (id, get, 200, 3, 0.001),
            (id, head, 200, 2, 0.002),
            (id, get, 400, 1, 0.004),
            (id, post, 405, 1, 0.008),
            (ids, get, 200, 4, 0.5),
            (ids, get, 418, 2, 0.25),
            (ids, get, 404, 1, 0.125),
        ];
        for (route, method, status, n, secs) in calls {
            for _ in 0..n {
                m.observe(route, method, status, secs);
            }
        }
        let t = text(&m);
        for (route, method, status, n, _) in calls {
            let series = format!(
                "flakeid_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{status}\"}}",
                route.name(),
                method.name()
            );
            assert_eq!(value(&t, &series), Some(f64::from(n)), "{series}\n{t}");
        }
        assert_eq!(t.matches("\nflakeid_http_requests_total{").count(), calls.len(), "{t}");
        // The histograms, per status class: count, sum and the buckets.
        for (route, method, class, count, sum) in [
            ("/v1/id", "GET", "2xx", 3.0, 0.003),
            ("/v1/id", "HEAD", "2xx", 2.0, 0.004),
            ("/v1/id", "GET", "4xx", 1.0, 0.004),
            ("/v1/id", "other", "4xx", 1.0, 0.008),
            ("/v1/ids", "GET", "2xx", 4.0, 2.0),
            ("/v1/ids", "GET", "4xx", 3.0, 0.625),
        ] {
            let labels = format!("route=\"{route}\",method=\"{method}\",class=\"{class}\"");
            let c = value(&t, &format!("flakeid_http_request_duration_seconds_count{{{labels}}}"));
            assert_eq!(c, Some(count), "{labels}\n{t}");
            let s = value(&t, &format!("flakeid_http_request_duration_seconds_sum{{{labels}}}")).unwrap();
            assert!((s - sum).abs() < 1e-9, "{labels}: sum {s}");
            let inf = value(
                &t,
                &format!("flakeid_http_request_duration_seconds_bucket{{le=\"+Inf\",{labels}}}"),
            );
            assert_eq!(inf, Some(count), "{labels}\n{t}");
        }
        assert_eq!(
            t.matches("\nflakeid_http_request_duration_seconds_count{").count(),
            6,
            "{t}"
        );
        // 0.001 s falls in the 1.6 ms bucket, not the 0.8 ms one.
        let l = "route=\"/v1/id\",method=\"GET\",class=\"2xx\"";
        assert_eq!(
            value(
                &t,
                &format!("flakeid_http_request_duration_seconds_bucket{{le=\"0.0008\",{l}}}")
            ),
            Some(0.0)
        );
        assert_eq!(
            value(
                &t,
                &format!("flakeid_http_request_duration_seconds_bucket{{le=\"0.0016\",{l}}}")
            ),
            Some(3.0)
        );
    }
}
