//! What every HTTP route reads of its request (the query's parameters, a batch's
//! `n` and format, the ID in a path), the room a batch reserves, and how an answer
//! is finished (errors counted).

use crate::budget::Flow;
use crate::error::ApiError;
use crate::formats::BatchFormat;
use crate::metrics::KindLabels;
use crate::service::Service;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::Arc;

/// Records an error response in the metrics (requests and their latency are
/// counted for every route in conn/requests.rs) and turns the result into a response.
pub(crate) fn finish(svc: &Service, result: Result<Response, ApiError>) -> Response {
    match result {
        Ok(r) => r,
        Err(e) => {
            svc.metrics.errors.get_or_create(&KindLabels { kind: e.kind }).inc();
            e.into_response()
        }
    }
}

pub(crate) fn query_params(
    q: Result<Query<Vec<(String, String)>>, QueryRejection>,
    allowed: &[&'static str],
) -> Result<HashMap<String, String>, ApiError> {
    let Query(pairs) = q.map_err(|e| ApiError::bad("query", format!("unreadable query string: {e}")))?;
    let mut map = HashMap::with_capacity(pairs.len());
    for (k, v) in pairs {
        let Some(name) = allowed.iter().find(|a| **a == k) else {
            let shown: String = k.chars().take(32).collect();
            return Err(ApiError::bad(
                "query",
                format!("unknown parameter {shown:?} (allowed: {})", allowed.join(", ")),
            ));
        };
        if map.insert(k, v).is_some() {
            // Which one a client meant is not ours to guess.
            return Err(ApiError::bad(name, format!("{name} is given more than once")));
        }
    }
    Ok(map)
}

/// Room for the whole body of a batch made in chunks, reserved before its head is
/// sent: its chunks draw from it, so once answered `200` it finishes; without room
/// in time it is refused whole (`503` with `Retry-After`).
pub(crate) async fn reserve_whole(flow: Option<&Arc<Flow>>, bytes: usize) -> Result<(), ApiError> {
    match flow {
        Some(f) if !f.reserve_whole(bytes).await => Err(crate::chunks::no_room()),
        _ => Ok(()),
    }
}

/// A batch's `n` (`None`: not given): an integer in 1..=`--max-batch` (at most the
/// core's batch limit, `flakeid_core::check_batch`), for every batch route.
pub(crate) fn batch_n(svc: &Service, params: &HashMap<String, String>) -> Result<Option<usize>, ApiError> {
    let max = svc.config.max_batch;
    let Some(text) = params.get("n") else { return Ok(None) };
    match text.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) && !text.starts_with('+') && flakeid_core::check_batch(n as i128).is_ok() => {
            Ok(Some(n))
        }
        _ => {
            let shown: String = text.chars().take(32).collect();
            Err(ApiError::bad(
                "n",
                format!("n must be an integer in 1..={max}, got {shown:?}"),
            ))
        }
    }
}

/// A batch's `format=` (`None`: not given, the `Accept` header decides).
pub(crate) fn batch_format(params: &HashMap<String, String>) -> Result<Option<BatchFormat>, ApiError> {
    Ok(Some(match params.get("format").map(String::as_str) {
        Some("json") => BatchFormat::Json,
        Some("ndjson") => BatchFormat::Ndjson,
        Some("octet-stream") | Some("octets") | Some("binary") => BatchFormat::Octets,
        Some(other) => {
            let shown: String = other.chars().take(32).collect();
            return Err(ApiError::bad(
                "format",
                format!("format must be json, ndjson or octet-stream, got {shown:?}"),
            ));
        }
        None => return Ok(None),
    }))
}

/// The ID in a path (`/v1/decode/{id}`, `/v1/unseal/{id}`). One rule with the core
/// and the CLI: `from=` reads exactly that form; without it, zero-padded or
/// otherwise ambiguous text is refused, asking.
pub(crate) fn path_id(
    path: Result<Path<String>, PathRejection>,
    params: &HashMap<String, String>,
) -> Result<u64, ApiError> {
    let Path(text) = path.map_err(|e| ApiError::bad("id", format!("unreadable id in the path: {e}")))?;
    match params.get("from") {
        Some(from) => {
            let enc = from
                .parse::<flakeid_core::Encoding>()
                .map_err(|e| ApiError::bad("from", e.to_string()))?;
            flakeid_core::decode(&text, enc)
        }
        None => flakeid_core::decode_auto(&text).map(|(id, _)| id),
    }
    .map_err(|e| ApiError::bad("id", e.to_string()))
}
