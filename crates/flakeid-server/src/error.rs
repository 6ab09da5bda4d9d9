//! The JSON error answers ([`ApiError`]). Plain data: their count in the metrics
//! is the handlers' (routes.rs, `finish`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use flakeid_core::{Error, ErrorKind};
use std::fmt::Write as _;

#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) kind: &'static str,
    pub(crate) parameter: Option<&'static str>,
    pub(crate) message: String,
}

impl ApiError {
    pub(crate) fn bad(parameter: &'static str, message: String) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            kind: "bad_request",
            parameter: Some(parameter),
            message,
        }
    }
    pub(crate) fn unavailable(kind: &'static str, message: String) -> ApiError {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            kind,
            parameter: None,
            message,
        }
    }
    /// No room in the response budgets within the wait allowed (`503`, kind
    /// [`BUSY`], with `Retry-After`; gRPC `RESOURCE_EXHAUSTED`).
    pub(crate) fn busy(message: String) -> ApiError {
        ApiError::unavailable(BUSY, message)
    }
}

/// The kind of [`ApiError::busy`].
pub(crate) const BUSY: &str = "busy";

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        let status = match e.kind() {
            ErrorKind::Config | ErrorKind::Parse => StatusCode::BAD_REQUEST,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError {
            status,
            kind: e.kind().code(),
            parameter: None,
            message: e.to_string(),
        }
    }
}

use flakeid_core::text::json_string;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = format!("{{\"error\":{}", json_string(self.kind));
        if let Some(p) = self.parameter {
            let _ = write!(body, ",\"parameter\":{}", json_string(p));
        }
        let _ = writeln!(body, ",\"message\":{}}}", json_string(&self.message));
        let mut r = (
            self.status,
            [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            // Not ready (lease, drain), busy, or refused by the generator: all pass.
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

impl ApiError {
    /// The JSON error for a status the server writes outside any route (414, 431,
    /// an unreadable path).
    pub(crate) fn plain(status: StatusCode, kind: &'static str, parameter: &'static str, message: String) -> ApiError {
        ApiError {
            status,
            kind,
            parameter: Some(parameter),
            message,
        }
    }
}
