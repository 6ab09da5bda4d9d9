//! The HTTP routes and their handlers.

use crate::budget::Flow;
use crate::chunks::{IdChunks, reserve_room};
use crate::config::{CHUNK, whole_reservation};
use crate::error::ApiError;
use crate::formats::{
    APPLICATION_JSON, BatchFormat, JS_SAFE_BITS, TEXT_PLAIN, asks_for_numbers, head_body, ids_response, negotiate,
    one_id_response, typed, wants_json,
};
use crate::grpc::{Grpc, Health, reflection};
use crate::metrics::Route;
use crate::params::{batch_format, batch_n, finish, path_id, query_params, reserve_whole};
use crate::service::{Service, Shared};
use crate::wide_routes::{one_typeid, one_ulid, one_uuid};
use axum::Router;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::routing::{MethodRouter, get};
use flakeid_core::{Generator, text};
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The HTTP routes: each path and its handler, written once. [`router`] and
/// [`probe_router`] are built from it, and their 404 answers name its paths.
fn http_routes() -> [(&'static str, MethodRouter<Shared>); 12] {
    [
        ("/v1/id", get(one_id)),
        ("/v1/ids", get(many_ids)),
        ("/v1/uuid", get(one_uuid)),
        ("/v1/ulid", get(one_ulid)),
        ("/v1/typeid", get(one_typeid)),
        ("/v1/decode/{id}", get(decode_id)),
        ("/v1/unseal/{id}", get(unseal_id)),
        ("/v1/layout", get(layout_info)),
        ("/healthz", get(healthz)),
        ("/readyz", get(readyz)),
        ("/metrics", get(metrics)),
        ("/openapi.json", get(openapi)),
    ]
}

/// The paths of the probe listener's routes (a subset of [`http_routes`]).
const PROBE_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// `routes` on a router whose 404 answer names their paths, and whose 405 says
/// which methods are served.
fn serving(
    app: Router<Shared>,
    routes: impl IntoIterator<Item = (&'static str, MethodRouter<Shared>)>,
) -> Router<Shared> {
    let mut app = app;
    let mut paths = Vec::new();
    for (path, handler) in routes {
        app = app.route(path, handler);
        paths.push(path);
    }
    let message: Arc<str> = format!("no such route (try {})", paths.join(", ")).into();
    app.fallback(move |State(svc): State<Shared>| not_found(svc, message.clone()))
        .method_not_allowed_fallback(not_allowed)
}

/// The HTTP routes and the gRPC services of a service: `/flakeid.v1.Flakeid/*`,
/// `grpc.health.v1` (answered from `health`) and server reflection.
pub(crate) fn router(service: Arc<Service>, health: &Health) -> Router {
    let grpc = Router::new()
        .route_service("/flakeid.v1.Flakeid/{*method}", Grpc::server(service.clone()))
        .route_service("/grpc.health.v1.Health/{*method}", health.server());
    let app = serving(grpc, http_routes()).with_state(service);
    match reflection() {
        Some((v1, v1alpha)) => app.merge(v1).merge(v1alpha),
        None => app,
    }
}

/// The routes of the probe listener: `/healthz` and `/readyz`.
pub(crate) fn probe_router(service: Arc<Service>) -> Router {
    let probes = http_routes().into_iter().filter(|(path, _)| PROBE_PATHS.contains(path));
    serving(Router::new(), probes).with_state(service)
}

/// Whether `path` is a gRPC method's (served over HTTP/2 only).
pub(crate) fn is_grpc(path: &str) -> bool {
    path.starts_with("/flakeid.v1.") || path.starts_with("/grpc.")
}

/// Whether the gRPC method at `path` takes one request message (reflection's
/// calls stream requests; every other method takes one).
pub(crate) fn single_message(path: &str) -> bool {
    !path.starts_with("/grpc.reflection.")
}

/// Whether a probe slot answers `route`: `/healthz` and `/readyz` only.
pub(crate) fn is_probe(route: Route) -> bool {
    route == Route::HEALTHZ || route == Route::READYZ
}

/// The answers made without the router: `GET` and `HEAD /v1/id`, the hot route
/// (the router would only match the path, insert its empty parameters, box the
/// body and add content-length). `None`: the router answers.
#[inline]
pub(crate) fn answer_now(
    svc: &Service,
    route: Route,
    req: &axum::http::Request<hyper::body::Incoming>,
) -> Option<Response> {
    if route == Route::ID && (req.method() == Method::GET || req.method() == Method::HEAD) {
        one_id_answer(svc, req.method(), req.uri(), req.headers())
    } else {
        None
    }
}

/// `GET /v1/id` through the router. It takes the request whole, to read its
/// method, headers and query in place: the `HeaderMap` extractor would copy the
/// headers on every call. The connection's service (conn/requests.rs) answers GET and HEAD
/// of `/v1/id` itself, through [`one_id_answer`], without the router, unless the
/// generator must wait for the clock: then the router's answer awaits it here.
async fn one_id(State(svc): State<Shared>, req: axum::extract::Request) -> Response {
    if let Some(r) = one_id_answer(&svc, req.method(), req.uri(), req.headers()) {
        return r;
    }
    let result = match one_id_json(req.uri(), req.headers()) {
        Ok(json) => svc.issue_async(1).await.map(|ids| one_id_response(json, ids[0])),
        Err(e) => Err(e),
    };
    finish(&svc, result)
}

/// Whether `GET /v1/id` answers in JSON (`?format=json`, or the Accept header).
fn one_id_json(uri: &axum::http::Uri, headers: &HeaderMap) -> Result<bool, ApiError> {
    // No query string (the usual request): nothing to parse.
    match uri.query() {
        None => wants_json(None, headers),
        Some(_) => {
            let q = Query::<Vec<(String, String)>>::try_from_uri(uri);
            let params = query_params(q, &["format"])?;
            wants_json(params.get("format").map(String::as_str), headers)
        }
    }
}

/// The answer to `GET` or `HEAD /v1/id` made at once; `None` where the generator
/// would wait for the clock (its tick used up), which the caller awaits on tokio's
/// timer ([`one_id`]) instead of holding the worker.
pub(crate) fn one_id_answer(
    svc: &Service,
    method: &Method,
    uri: &axum::http::Uri,
    headers: &HeaderMap,
) -> Option<Response> {
    let result = (|| {
        let json = one_id_json(uri, headers)?;
        if method == Method::HEAD {
            let ct = if json { APPLICATION_JSON } else { TEXT_PLAIN };
            return Ok(Some(ids_response(ct, head_body())));
        }
        Ok(svc.try_issue_one()?.map(|id| one_id_response(json, id)))
    })();
    result.transpose().map(|r| finish(svc, r))
}

async fn many_ids(
    State(svc): State<Shared>,
    method: Method,
    headers: HeaderMap,
    flow: Option<axum::Extension<Arc<Flow>>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let result = many_ids_inner(&svc, method == Method::HEAD, &headers, flow.map(|e| e.0), q).await;
    finish(&svc, result)
}

async fn many_ids_inner(
    svc: &Shared,
    head: bool,
    headers: &HeaderMap,
    flow: Option<Arc<Flow>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ApiError> {
    let params = query_params(q, &["n", "format"])?;
    let n = batch_n(svc, &params)?.unwrap_or(1);
    let g = svc.generator64()?;
    let format = match batch_format(&params)? {
        Some(f) => f,
        None => {
            // JSON numbers only where every ID is an exact JavaScript number.
            let bits = g.layout().total_bits();
            let numbers = bits <= JS_SAFE_BITS;
            let all = [
                BatchFormat::Json,
                BatchFormat::Ndjson,
                BatchFormat::Octets,
                BatchFormat::JsonNumbers,
            ];
            let offers = [
                "application/json",
                "application/x-ndjson",
                "application/octet-stream",
                "application/json; ids=number",
            ];
            let served = if numbers { 4 } else { 3 };
            match negotiate(headers, &offers[..served]) {
                Ok(i) => all[i],
                Err(_) if !numbers && asks_for_numbers(headers) => {
                    let name = g.layout().display_name();
                    return Err(ApiError {
                        status: StatusCode::NOT_ACCEPTABLE,
                        kind: "not_acceptable",
                        parameter: Some("accept"),
                        message: format!(
                            "ids=number needs a layout of at most {JS_SAFE_BITS} bits (JavaScript numbers are exact up to 2^53); this service's layout {name} has {bits} bits: take the IDs as strings (application/json), or serve a layout such as js53"
                        ),
                    });
                }
                Err(e) => return Err(e),
            }
        }
    };
    if head {
        return Ok(ids_response(format.content_type(), head_body()));
    }
    // Octets: 8 bytes an ID and the IDs themselves; text: at most 23 and the IDs.
    let bytes_per_id = if format == BatchFormat::Octets { 16 } else { 32 };
    if n < CHUNK {
        // Room for it until it is written, as for a chunk (budget.rs, `Flow`).
        reserve_room(flow.as_ref(), n * bytes_per_id).await?;
        let ids = svc.issue_async(n).await?;
        let mut body = Vec::new();
        format.write(&ids, true, true, &mut body);
        return Ok(ids_response(format.content_type(), body));
    }
    // Larger batches are made as the client reads, one chunk at a time: a client
    // that stops reading stops the issuing, and no whole batch sits in memory.
    if let Some(why) = svc.not_ready_with(&g) {
        return Err(ApiError::unavailable("not_ready", why));
    }
    reserve_whole(flow.as_ref(), whole_reservation(n, CHUNK, bytes_per_id)).await?;
    let mut first = true;
    let mut chunks = IdChunks::new(svc.clone(), g, Some(n as u64), CHUNK, flow, bytes_per_id);
    chunks.reserve_first().await?;
    let mut left = n;
    let body = tokio_stream::StreamExt::map(chunks, move |r| {
        r.map(|ids| {
            left -= ids.len();
            let mut out = Vec::new();
            format.write(&ids, first, left == 0, &mut out);
            first = false;
            axum::body::Bytes::from(out)
        })
        .map_err(|e| std::io::Error::other(e.message))
    });
    Ok(ids_response(format.content_type(), axum::body::Body::from_stream(body)))
}

async fn decode_id(
    State(svc): State<Shared>,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let result = (|| {
        let params = query_params(q, &["from", "sealed"])?;
        let sealed = match params.get("sealed").map(String::as_str) {
            None | Some("0" | "false") => false,
            Some("1" | "true") => true,
            Some(other) => {
                let shown: String = other.chars().take(32).collect();
                return Err(ApiError::bad(
                    "sealed",
                    format!("sealed must be 1, true, 0 or false, got {shown:?}"),
                ));
            }
        };
        let Path(given) = path.map_err(|e| ApiError::bad("id", format!("unreadable id in the path: {e}")))?;
        // A UUID, ULID or TypeID (their shapes are no 64-bit form's), read as the
        // CLI's `decode` reads it, answered with its JSON.
        if !params.contains_key("from")
            && let Some(wide) = flakeid_core::Wide::recognize(&given)
        {
            if sealed {
                return Err(ApiError::bad(
                    "sealed",
                    "a UUID, ULID or TypeID is never sealed: only 64-bit IDs are".into(),
                ));
            }
            let (u, form) = wide.map_err(|e| ApiError::bad("id", e.to_string()))?;
            let body = text::wide_json(u, &form).map_err(|e| ApiError::bad("id", e.to_string()))?;
            return Ok(typed("application/json", format!("{body}\n")));
        }
        if sealed {
            svc.sealer()?;
        }
        let mut id = path_id(Ok(Path(given)), &params)?;
        if sealed {
            id = svc.unseal(id)?;
        }
        let g = svc.generator64()?;
        let layout = g.layout();
        let p = layout
            .try_decompose(id)
            .map_err(|e| ApiError::bad("id", e.to_string()))?;
        Ok(typed(
            "application/json",
            format!("{}\n", text::parts_json(layout, id, &p)),
        ))
    })();
    finish(&svc, result)
}

/// `GET /v1/unseal/{id}`: the plain ID a sealed one stands for, in the forms of
/// `/v1/id` (text, or JSON by `?format=json` or `Accept`).
async fn unseal_id(
    State(svc): State<Shared>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let result = (|| {
        let params = query_params(q, &["from", "format"])?;
        let json = wants_json(params.get("format").map(String::as_str), &headers)?;
        svc.sealer()?;
        let id = svc.unseal(path_id(path, &params)?)?;
        let mut r = if json {
            typed("application/json", format!("{{\"id\":\"{id}\"}}\n"))
        } else {
            typed("text/plain; charset=utf-8", format!("{id}\n"))
        };
        r.headers_mut().insert(header::VARY, HeaderValue::from_static("Accept"));
        Ok(r)
    })();
    finish(&svc, result)
}

fn lease_text(g: &Generator) -> String {
    g.lease_state().map_or("none", |s| s.as_str()).into()
}

async fn layout_info(State(svc): State<Shared>) -> Response {
    let result = svc
        .generator64()
        .map(|g| typed("application/json", layout_body(&svc, &g)));
    finish(&svc, result)
}

/// `/v1/layout`'s body: the layout as the core shows it everywhere
/// ([`text::layout_json`], what `flakeid layouts --json` prints), then this
/// service's own fields: its node id, its lease and its largest batch.
fn layout_body(svc: &Service, g: &Generator) -> String {
    let layout = text::layout_json(g.layout());
    let mut body = layout.strip_suffix('}').unwrap_or(&layout).to_owned();
    let _ = writeln!(
        body,
        ",\"node\":{},\"datacenter\":{},\"worker\":{},\"lease\":\"{}\",\"lease_epoch\":{},\"max_batch\":{}}}",
        g.node(),
        g.datacenter(),
        g.worker(),
        lease_text(g),
        svc.lease.releases.load(Ordering::Relaxed),
        svc.config.max_batch,
    );
    body
}

async fn healthz(State(svc): State<Shared>) -> Response {
    let result = match svc.not_live() {
        None => Ok(typed("text/plain; charset=utf-8", format!("ok: {}\n", svc.families()))),
        Some(why) => Err(ApiError::unavailable("not_live", why)),
    };
    finish(&svc, result)
}

async fn readyz(State(svc): State<Shared>) -> Response {
    let result = match svc.not_ready() {
        None => Ok(typed("text/plain; charset=utf-8", "ready\n")),
        Some(why) => Err(ApiError::unavailable("not_ready", why)),
    };
    finish(&svc, result)
}

async fn metrics(State(svc): State<Shared>) -> Response {
    match svc.metrics.scrape() {
        Ok(body) => typed("application/openmetrics-text; version=1.0.0; charset=utf-8", body),
        Err(e) => finish(
            &svc,
            Err(ApiError::unavailable(
                "internal",
                format!("metrics encoding failed: {e}"),
            )),
        ),
    }
}

async fn openapi(State(svc): State<Shared>) -> Response {
    typed("application/json", svc.openapi.clone())
}

/// The 404 answer: `message` names the router's routes ([`serving`]).
async fn not_found(svc: Shared, message: Arc<str>) -> Response {
    let e = ApiError {
        status: StatusCode::NOT_FOUND,
        kind: "not_found",
        parameter: Some("path"),
        message: message.to_string(),
    };
    finish(&svc, Err(e))
}

async fn not_allowed(State(svc): State<Shared>) -> Response {
    let e = ApiError {
        status: StatusCode::METHOD_NOT_ALLOWED,
        kind: "method_not_allowed",
        parameter: Some("method"),
        message: "only GET and HEAD are served here".into(),
    };
    let mut r = finish(&svc, Err(e));
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_openapi_document_names_the_largest_n_once() {
        assert_eq!(crate::DEFAULT_MAX_BATCH, 100_000);
        use crate::service::{OPENAPI, OPENAPI_MAX_BATCH};
        assert_eq!(OPENAPI.matches(OPENAPI_MAX_BATCH).count(), 1);
    }

    /// `/v1/layout` shows the layout as `flakeid layouts --json` does (the core's
    /// `layout_json`, key `name` first), then the service's fields: one shape.
    #[test]
    fn the_layout_route_shows_the_layout_as_the_core_does() {
        use flakeid_core::{Generator, Layout, text::layout_json};
        let g = Generator::builder(Layout::SNOWFLAKE)
            .node(7)
            .host_guard(false)
            .build()
            .unwrap();
        let svc = crate::Service::new(g, crate::Config::default()).unwrap();
        let body = super::layout_body(&svc, &svc.generator().unwrap());
        let layout = layout_json(&Layout::SNOWFLAKE);
        assert!(body.starts_with(layout.strip_suffix('}').unwrap()), "{body}");
        assert_eq!(
            body,
            concat!(
                r#"{"name":"snowflake","time_bits":41,"datacenter_bits":5,"worker_bits":5,"sequence_bits":12,"#,
                r#""tick_ms":1,"epoch_ms":1288834974657,"order":"time|node|seq","epoch":"2010-11-04T01:42:54.657Z","#,
                r#""last_time":"2080-07-10T17:30:30.208Z","last_timestamp_ms":3487858230208,"#,
                r#""signed_until":"2080-07-10T17:30:30.208Z","node":7,"datacenter":0,"worker":7,"lease":"none","#,
                r#""lease_epoch":0,"max_batch":100000}"#,
                "\n"
            )
        );
    }

    use axum::http::StatusCode;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Still;
    impl crate::budget::Activity for Still {
        fn moved(&self) {}
    }

    /// A flow of its own budgets, each `room` bytes, that waits for none
    /// (the budgets' server-wide semaphore, to read what is reserved).
    fn flow(room: usize) -> (Arc<super::Flow>, Arc<tokio::sync::Semaphore>) {
        let total = Arc::new(tokio::sync::Semaphore::new(room));
        let shares = Arc::new(crate::budget::Shares::new(room));
        let ip = std::net::IpAddr::from([127, 0, 0, 1]);
        let streams = crate::budget::Streams::new(
            room,
            total.clone(),
            shares,
            std::time::Duration::ZERO,
            ip,
            Arc::new(Still),
        );
        (Arc::new(streams).open(None), total)
    }

    /// Every body an HTTP route makes is budgeted as the route table says
    /// (metrics.rs, `ROUTES`), asked for its largest answers: one over
    /// `SMALL_BODY` comes from a `Reserved` route whose every byte was reserved
    /// before it was made (none in its flow: refused 503), or from a `Shared` one
    /// whose answers share one buffer. A route that makes a body and is not
    /// budgeted fails here.
    #[tokio::test]
    async fn every_body_is_budgeted_as_the_route_table_says() {
        use crate::metrics::{BodyBudget, Route};
        // The most bytes a `BodyBudget::Small` body holds.
        const SMALL_BODY: usize = 4 * 1024;
        use flakeid_core::{Generator, Layout};
        let g = Generator::builder(Layout::SNOWFLAKE)
            .node(7)
            .host_guard(false)
            .build()
            .unwrap();
        let max = 10_000;
        let config = crate::Config {
            max_batch: max,
            ..crate::Config::default()
        };
        let svc = crate::Service::new(g, config).unwrap();
        let prefix = "p".repeat(63);
        let queries = [
            String::new(),
            format!("?n={max}"),
            format!("?n={max}&format=json"),
            format!("?n={max}&format=ndjson"),
            format!("?n={max}&format=octets"),
            format!("?n={max}&prefix={prefix}"),
            format!("?n={max}&prefix={prefix}&format=json"),
            format!("?n={max}&prefix={prefix}&format=ndjson"),
            "?format=json".into(),
        ];
        let answer = |uri: String, flow: Option<Arc<super::Flow>>| {
            let mut app = crate::router(svc.clone());
            async move {
                let mut req = axum::http::Request::get(uri).body(axum::body::Body::empty()).unwrap();
                if let Some(f) = flow {
                    req.extensions_mut().insert(f);
                }
                let r = tower_service::Service::call(&mut app, req).await.unwrap();
                let status = r.status();
                (status, axum::body::to_bytes(r.into_body(), usize::MAX).await.unwrap())
            }
        };
        let mut large = Vec::new();
        for (pattern, _) in super::http_routes() {
            let path = pattern.replace("{id}", "1");
            let route = Route::of(&path);
            assert_eq!(route.name(), pattern, "{pattern} is not in the route table");
            for q in &queries {
                let uri = format!("{path}{q}");
                let room = 1 << 30;
                let (f, total) = flow(room);
                let reserved = route.is_streamed().then_some(f.clone());
                let (status, body) = answer(uri.clone(), reserved).await;
                if body.len() <= SMALL_BODY {
                    continue;
                }
                large.push(pattern);
                match route.body() {
                    BodyBudget::Small => panic!("{uri}: {status}, {} bytes, from a route not budgeted", body.len()),
                    BodyBudget::Reserved => {
                        let held = room - total.available_permits();
                        assert!(held >= body.len(), "{uri}: {} bytes made, {held} reserved", body.len());
                        let (refused, _) = answer(uri.clone(), Some(flow(0).0)).await;
                        assert_eq!(refused, StatusCode::SERVICE_UNAVAILABLE, "{uri}: made with no room");
                    }
                    BodyBudget::Shared => {
                        let (_, again) = answer(uri.clone(), None).await;
                        assert_eq!(body.as_ptr(), again.as_ptr(), "{uri}: a copy an answer");
                    }
                }
            }
        }
        large.dedup();
        assert_eq!(
            large,
            ["/v1/ids", "/v1/uuid", "/v1/ulid", "/v1/typeid", "/openapi.json"]
        );
    }

    /// A batch made in chunks has its whole body's room before its head: with one
    /// byte less than that, it is refused whole (`503`), never answered `200` and
    /// cut; with that much, it is made whole without waiting for room again (the
    /// flow waits for none).
    #[tokio::test]
    async fn a_batch_is_refused_whole_or_made_whole() {
        use crate::config::{CHUNK, whole_reservation, wide_text_chunk, wide_text_per_id};
        use flakeid_core::{Generator, Layout};
        let g = Generator::builder(Layout::SNOWFLAKE)
            .node(8)
            .host_guard(false)
            .build()
            .unwrap();
        let svc = crate::Service::new(g, crate::Config::default()).unwrap();
        let n = 20_000;
        let prefix = "p".repeat(63);
        for (uri, whole) in [
            (format!("/v1/ids?n={n}"), whole_reservation(n, CHUNK, 32)),
            (
                format!("/v1/uuid?n={n}"),
                whole_reservation(n, wide_text_chunk(0), wide_text_per_id(0)),
            ),
            (format!("/v1/ulid?n={n}&format=octets"), whole_reservation(n, CHUNK, 32)),
            (
                format!("/v1/typeid?n={n}&prefix={prefix}"),
                whole_reservation(n, wide_text_chunk(63), wide_text_per_id(63)),
            ),
        ] {
            for room in [whole - 1, whole] {
                let mut app = crate::router(svc.clone());
                let mut req = axum::http::Request::get(&uri).body(axum::body::Body::empty()).unwrap();
                req.extensions_mut().insert(flow(room).0);
                let r = tower_service::Service::call(&mut app, req).await.unwrap();
                let status = r.status();
                let body = axum::body::to_bytes(r.into_body(), usize::MAX).await;
                if room < whole {
                    assert_eq!(
                        status,
                        StatusCode::SERVICE_UNAVAILABLE,
                        "{uri} with {room} bytes of room"
                    );
                } else {
                    assert_eq!(status, StatusCode::OK, "{uri}");
                    assert!(body.is_ok_and(|b| b.len() >= 16 * n), "{uri}: cut after its head");
                }
            }
        }
    }
}
