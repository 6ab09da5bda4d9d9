//! The forms of IDs in answers and which one a request gets: content negotiation
//! (`Accept`, `?format=`), the bodies of `/v1/id` and `/v1/ids`, and their headers.

use crate::error::ApiError;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Content negotiation (RFC 9110 §12.5.1): the offer with the highest q-value
/// among the `Accept` ranges that match it (the most specific range decides an
/// offer's q: `type/sub;ids=…` over `type/sub` over `type/*` over `*/*`), ties
/// going to the earlier offer. Media types compare case-insensitively. Of a
/// range's parameters only `ids` counts (`application/json; ids=number`, issue
/// 27): a range that names it matches only the offer with the same value; other
/// parameters (`charset`) are ignored. No `Accept` header: the first offer. Every
/// offer at q=0 or unmatched: 406 naming the offers.
pub(crate) fn negotiate(headers: &HeaderMap, offers: &[&'static str]) -> Result<usize, ApiError> {
    let mut ranges: Vec<(String, Option<String>, f32)> = Vec::new();
    for v in headers.get_all(header::ACCEPT) {
        let Ok(v) = v.to_str() else { continue };
        for item in v.split(',') {
            let (media, ids, q) = media_range(item);
            if !media.is_empty() {
                ranges.push((media, ids, q));
            }
        }
    }
    if ranges.is_empty() {
        return Ok(0);
    }
    let mut best: Option<(usize, f32)> = None;
    for (i, offer) in offers.iter().enumerate() {
        let (offer_media, offer_ids, _) = media_range(offer);
        let kind = offer_media.split('/').next().unwrap_or("");
        let mut found: Option<(u8, f32)> = None; // (specificity, q)
        for (media, ids, q) in &ranges {
            if ids.is_some() && *ids != offer_ids {
                continue;
            }
            let spec = if *media == offer_media {
                if ids.is_some() { 4 } else { 3 }
            } else if media.strip_suffix("/*") == Some(kind) {
                2
            } else if media == "*/*" {
                1
            } else {
                continue;
            };
            if found.is_none_or(|(s, _)| spec > s) {
                found = Some((spec, *q));
            }
        }
        if let Some((_, q)) = found
            && q > 0.0
            && best.is_none_or(|(_, bq)| q > bq)
        {
            best = Some((i, q));
        }
    }
    best.map(|(i, _)| i).ok_or_else(|| ApiError {
        status: StatusCode::NOT_ACCEPTABLE,
        kind: "not_acceptable",
        parameter: Some("accept"),
        message: format!(
            "no acceptable representation: this route serves {} (or say ?format=)",
            offers.join(", ")
        ),
    })
}

/// One media range of `Accept` (or an offer): the type in lower case, its `ids`
/// parameter (lower case, unquoted), its q-value (1 when absent, 0 when unreadable).
pub(crate) fn media_range(item: &str) -> (String, Option<String>, f32) {
    let mut parts = item.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let (mut ids, mut q) = (None, 1.0);
    for p in parts {
        let Some((k, v)) = p.split_once('=') else { continue };
        let v = v.trim().trim_matches('"');
        if k.trim().eq_ignore_ascii_case("q") {
            q = v.parse::<f32>().unwrap_or(0.0).clamp(0.0, 1.0);
        } else if k.trim().eq_ignore_ascii_case("ids") {
            ids = Some(v.to_ascii_lowercase());
        }
    }
    (media, ids, q)
}

/// Whether `Accept` names `ids=number` in any range.
pub(crate) fn asks_for_numbers(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| media_range(item).1.as_deref() == Some("number"))
}

/// The largest layout whose IDs are all exact JavaScript numbers (2^53 - 1).
pub const JS_SAFE_BITS: u32 = 53;

pub(crate) fn typed(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        body.into(),
    )
        .into_response()
}

/// A response carrying IDs: never cached or shared (each request gets new IDs),
/// and its form depends on `Accept`. HEAD gets the headers and issues nothing.
pub(crate) fn ids_response(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    // Inserted one by one: a clone of a map made once costs more, as its table then
    // has no room for the `content-length` axum adds (measured: 547 + 1,761
    // instructions against 676 + 183).
    let mut r = Response::new(body.into());
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    r
}

/// The body of a HEAD answer to an ID route: of unknown length, so that no
/// `Content-Length` is sent. GET's length depends on the IDs it would issue (a
/// sealed ID has any number of digits), which HEAD does not issue; a length of 0
/// would be false.
pub(crate) fn head_body() -> axum::body::Body {
    axum::body::Body::from_stream(tokio_stream::empty::<Result<axum::body::Bytes, std::io::Error>>())
}

/// The content types of `/v1/id`'s two forms.
pub(crate) const TEXT_PLAIN: &str = "text/plain; charset=utf-8";
pub(crate) const APPLICATION_JSON: &str = "application/json";

/// The form of a one-ID answer (`/v1/id`, `/v1/unseal`): `?format=text|json`, else
/// by `Accept` (text first). True: JSON.
pub(crate) fn wants_json(format: Option<&str>, headers: &HeaderMap) -> Result<bool, ApiError> {
    match format {
        Some("json") => Ok(true),
        Some("text") => Ok(false),
        Some(other) => {
            let shown: String = other.chars().take(32).collect();
            Err(ApiError::bad(
                "format",
                format!("format must be text or json, got {shown:?}"),
            ))
        }
        None => Ok(negotiate(headers, &["text/plain", "application/json"])? == 1),
    }
}

/// One ID as decimal text or as `{"id":"…"}` (a string: JS numbers lose IDs).
/// Written on the stack and copied once: `format!` would grow its `String`, and
/// `write!` goes through the formatting machinery.
pub(crate) fn one_id_response(json: bool, id: u64) -> Response {
    let (buf, len) = one_id_text(json, id);
    let ct = if json { APPLICATION_JSON } else { TEXT_PLAIN };
    ids_response(ct, axum::body::Bytes::copy_from_slice(&buf[..len]))
}

/// The body of [`one_id_response`] and its length: the longest is
/// `{"id":"18446744073709551615"}` and a newline, 31 bytes.
pub(crate) fn one_id_text(json: bool, id: u64) -> ([u8; 32], usize) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(id).as_bytes();
    let mut buf = [0u8; 32];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        buf[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    if json {
        put(b"{\"id\":\"");
    }
    put(digits);
    if json {
        put(b"\"}");
    }
    put(b"\n");
    (buf, n)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BatchFormat {
    Json,
    Ndjson,
    Octets,
    /// A JSON array of numbers (`Accept: application/json; ids=number`), for
    /// layouts of at most [`JS_SAFE_BITS`] bits.
    JsonNumbers,
}

impl BatchFormat {
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            BatchFormat::Json => "application/json",
            BatchFormat::Ndjson => "application/x-ndjson",
            BatchFormat::Octets => "application/octet-stream",
            BatchFormat::JsonNumbers => "application/json; ids=number",
        }
    }

    /// Appends `ids` in this format; `first` and `last` say whether they open or
    /// close the body.
    pub(crate) fn write(self, ids: &[u64], first: bool, last: bool, out: &mut Vec<u8>) {
        use std::io::Write as _;
        match self {
            BatchFormat::Octets => {
                out.reserve(ids.len() * 8);
                for id in ids {
                    out.extend_from_slice(&id.to_be_bytes());
                }
            }
            BatchFormat::Json | BatchFormat::JsonNumbers => {
                out.reserve(ids.len() * 23 + 3);
                if first {
                    out.push(b'[');
                }
                let quote = if self == BatchFormat::Json { "\"" } else { "" };
                for (i, id) in ids.iter().enumerate() {
                    let sep = if first && i == 0 { "" } else { "," };
                    let _ = write!(out, "{sep}{quote}{id}{quote}");
                }
                if last {
                    out.extend_from_slice(b"]\n");
                }
            }
            BatchFormat::Ndjson => {
                out.reserve(ids.len() * 22);
                for id in ids {
                    let _ = writeln!(out, "\"{id}\"");
                }
            }
        }
    }
}

impl BatchFormat {
    /// Appends 128-bit `ids` in this format, each as `text` renders it (a JSON
    /// string; octets: its 16 bytes, big-endian); `first` and `last` as for
    /// [`write`](Self::write).
    pub(crate) fn write_wide(
        self,
        ids: &[u128],
        text: &dyn Fn(u128) -> String,
        first: bool,
        last: bool,
        out: &mut Vec<u8>,
    ) {
        match self {
            BatchFormat::Octets => {
                out.reserve(ids.len() * 16);
                for id in ids {
                    out.extend_from_slice(&id.to_be_bytes());
                }
            }
            BatchFormat::Json | BatchFormat::JsonNumbers => {
                if first {
                    out.push(b'[');
                }
                for (i, id) in ids.iter().enumerate() {
                    if !(first && i == 0) {
                        out.push(b',');
                    }
                    out.extend_from_slice(flakeid_core::text::json_string(&text(*id)).as_bytes());
                }
                if last {
                    out.extend_from_slice(b"]\n");
                }
            }
            BatchFormat::Ndjson => {
                for id in ids {
                    out.extend_from_slice(flakeid_core::text::json_string(&text(*id)).as_bytes());
                    out.push(b'\n');
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// `/v1/id`'s bodies, written by hand, say what `format!` says.
    #[test]
    fn one_id_bodies_match_format() {
        for id in [0, 1, 9, 10, 42, 1 << 53, 999_999_999_999, u64::MAX - 1, u64::MAX] {
            let (buf, n) = super::one_id_text(false, id);
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), format!("{id}\n"));
            let (buf, n) = super::one_id_text(true, id);
            assert_eq!(
                std::str::from_utf8(&buf[..n]).unwrap(),
                format!("{{\"id\":\"{id}\"}}\n")
            );
        }
    }

    /// Every ID response is uncacheable and varies on `Accept`.
    #[test]
    fn id_responses_carry_their_headers() {
        for ct in [super::TEXT_PLAIN, super::APPLICATION_JSON, "application/x-ndjson"] {
            let r = super::ids_response(ct, ());
            let h = r.headers();
            assert_eq!(h.len(), 3);
            assert_eq!(h["content-type"], ct);
            assert_eq!(h["cache-control"], "no-store");
            assert_eq!(h["vary"], "Accept");
        }
    }
}
