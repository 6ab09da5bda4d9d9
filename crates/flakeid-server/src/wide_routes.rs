//! The 128-bit routes: `/v1/uuid`, `/v1/ulid` and `/v1/typeid`, one ID or (`?n=`) a
//! batch made in chunks as the client reads.

use crate::budget::Flow;
use crate::chunks::uuid7_chunks;
use crate::config::{CHUNK, whole_reservation, wide_text_chunk, wide_text_per_id};
use crate::error::ApiError;
use crate::formats::{APPLICATION_JSON, BatchFormat, TEXT_PLAIN, ids_response, negotiate, wants_json};
use crate::params::{batch_format, batch_n, finish, query_params, reserve_whole};
use crate::service::Shared;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use flakeid_core::text;
use std::collections::HashMap;
use std::sync::Arc;

/// A batch of `n` 128-bit IDs (the service's `UuidGenerator`), each as `render`
/// writes it, in the formats of `/v1/ids` (JSON strings, NDJSON, octets: 16 bytes
/// an ID). Made one chunk at a time as the client reads, each chunk's room
/// reserved from the response budgets first ([`Flow::reserve`]); the first chunk's
/// before the head is sent, so that a batch that finds no room is refused whole.
async fn wide_batch(
    svc: &Shared,
    headers: &HeaderMap,
    params: &HashMap<String, String>,
    flow: Option<Arc<Flow>>,
    n: usize,
    render: fn(&str, u128) -> String,
    prefix: String,
) -> Result<Response, ApiError> {
    let format = match batch_format(params)? {
        Some(f) => f,
        None => {
            let all = [BatchFormat::Json, BatchFormat::Ndjson, BatchFormat::Octets];
            all[negotiate(
                headers,
                &["application/json", "application/x-ndjson", "application/octet-stream"],
            )?]
        }
    };
    // Octets: 16 bytes an ID and the IDs; text: the IDs and their text.
    let (bytes_per_id, chunk) = if format == BatchFormat::Octets {
        (32, CHUNK)
    } else {
        (wide_text_per_id(prefix.len()), wide_text_chunk(prefix.len()))
    };
    if n > chunk {
        reserve_whole(flow.as_ref(), whole_reservation(n, chunk, bytes_per_id)).await?;
    }
    let text = move |u: u128| render(&prefix, u);
    let mut chunks = uuid7_chunks(svc.clone(), n, chunk, flow, bytes_per_id).await?;
    if n <= chunk {
        let ids = match tokio_stream::StreamExt::next(&mut chunks).await {
            Some(r) => r?,
            None => Vec::new(),
        };
        let mut body = Vec::new();
        format.write_wide(&ids, &text, true, true, &mut body);
        return Ok(ids_response(format.content_type(), body));
    }
    let (mut first, mut left) = (true, n);
    let body = tokio_stream::StreamExt::map(chunks, move |r| {
        r.map(|ids| {
            left -= ids.len();
            let mut out = Vec::new();
            format.write_wide(&ids, &text, first, left == 0, &mut out);
            first = false;
            axum::body::Bytes::from(out)
        })
        .map_err(|e| std::io::Error::other(e.message))
    });
    Ok(ids_response(format.content_type(), axum::body::Body::from_stream(body)))
}

/// `GET /v1/uuid`: one UUIDv7 as text or `{"uuid":"…"}`; `?n=N`: a batch, as
/// `/v1/ids` answers one.
pub(crate) async fn one_uuid(
    State(svc): State<Shared>,
    headers: HeaderMap,
    flow: Option<axum::Extension<Arc<Flow>>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    wide_answer(&svc, &headers, flow.map(|e| e.0), q, "uuid").await
}

/// `GET /v1/ulid`: the same 128 bits as a ULID, as text or `{"ulid":"…"}`; `?n=N`:
/// a batch, as `/v1/ids` answers one.
pub(crate) async fn one_ulid(
    State(svc): State<Shared>,
    headers: HeaderMap,
    flow: Option<axum::Extension<Arc<Flow>>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    wide_answer(&svc, &headers, flow.map(|e| e.0), q, "ulid").await
}

/// One 128-bit ID (the service's `UuidGenerator`), in the forms of `/v1/id`, or
/// with `n` a batch of them.
async fn wide_answer(
    svc: &Shared,
    headers: &HeaderMap,
    flow: Option<Arc<Flow>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
    key: &'static str,
) -> Response {
    let params = match query_params(q, &["n", "format"]) {
        Ok(p) => p,
        Err(e) => return finish(svc, Err(e)),
    };
    match batch_n(svc, &params) {
        Err(e) => return finish(svc, Err(e)),
        Ok(Some(n)) => {
            let render: fn(&str, u128) -> String = match key {
                "ulid" => |_, u| flakeid_core::Wide(u).to_ulid(),
                _ => |_, u| flakeid_core::Wide(u).to_uuid(),
            };
            let r = wide_batch(svc, headers, &params, flow, n, render, String::new()).await;
            return finish(svc, r);
        }
        Ok(None) => {}
    }
    let result: Result<Response, ApiError> = async {
        let json = wants_json(params.get("format").map(String::as_str), headers)?;
        let u = svc.issue_uuid7().await?;
        let text = match key {
            "ulid" => flakeid_core::Wide(u).to_ulid(),
            _ => flakeid_core::Wide(u).to_uuid(),
        };
        Ok(if json {
            ids_response(APPLICATION_JSON, format!("{{\"{key}\":\"{text}\"}}\n"))
        } else {
            ids_response(TEXT_PLAIN, format!("{text}\n"))
        })
    }
    .await;
    finish(svc, result)
}

/// `GET /v1/typeid?prefix=P`: the same 128 bits as a TypeID (`P_` and the
/// lowercase ULID; no prefix: the bare suffix), as text or `{"typeid":"…"}`.
pub(crate) async fn one_typeid(
    State(svc): State<Shared>,
    headers: HeaderMap,
    flow: Option<axum::Extension<Arc<Flow>>>,
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Response {
    let params = match query_params(q, &["prefix", "n", "format"]) {
        Ok(p) => p,
        Err(e) => return finish(&svc, Err(e)),
    };
    let prefix = params.get("prefix").map_or("", String::as_str);
    if let Err(e) = flakeid_core::Wide::check_typeid_prefix(prefix) {
        return finish(&svc, Err(ApiError::bad("prefix", e.to_string())));
    }
    match batch_n(&svc, &params) {
        Err(e) => return finish(&svc, Err(e)),
        Ok(Some(n)) => {
            let render: fn(&str, u128) -> String = |p, u| flakeid_core::Wide(u).to_typeid(p).unwrap_or_default();
            let r = wide_batch(&svc, &headers, &params, flow.map(|e| e.0), n, render, prefix.to_owned()).await;
            return finish(&svc, r);
        }
        Ok(None) => {}
    }
    let result: Result<Response, ApiError> = async {
        let json = wants_json(params.get("format").map(String::as_str), &headers)?;
        let u = svc.issue_uuid7().await?;
        let text = flakeid_core::Wide(u).to_typeid(prefix)?;
        Ok(if json {
            ids_response(
                APPLICATION_JSON,
                format!("{{\"typeid\":{}}}\n", text::json_string(&text)),
            )
        } else {
            ids_response(TEXT_PLAIN, format!("{text}\n"))
        })
    }
    .await;
    finish(&svc, result)
}
