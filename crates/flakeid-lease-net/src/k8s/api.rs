//! The Kubernetes API server's REST API as the Lease store uses it: one HTTP/2
//! connection (hyper; rustls offering `h2` by ALPN, which every API server
//! accepts), JSON bodies (serde_json), and the bearer token read from its file at
//! each request, so a token the kubelet rotates (projected service-account tokens
//! are replaced well before they expire) is picked up without a restart.

use crate::tls::{self, TlsFiles, Verify};
use bytes::Bytes;
use flakeid_core::Result;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http2::SendRequest;
use std::sync::Arc;

/// Where the API server is and how to log in.
#[derive(Clone)]
pub(crate) struct Target {
    pub host: String,
    pub port: u16,
    tls: Arc<rustls::ClientConfig>,
    /// The bearer token's file (a service account's mounted token, or one given).
    pub token_file: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} (token file {:?})", self.host, self.port, self.token_file)
    }
}

impl Target {
    pub fn new(host: String, port: u16, ca: Option<String>, token_file: String) -> Result<Target> {
        let files = TlsFiles {
            ca,
            cert: None,
            key: None,
        };
        let mut config = tls::client_config(&files, Verify::Full, ["ca", "cert", "key"])?;
        config.alpn_protocols = vec![b"h2".to_vec()];
        Ok(Target {
            host,
            port,
            tls: Arc::new(config),
            token_file,
        })
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// What failed below the API: the connection, TLS, HTTP/2, or the token file.
#[derive(Debug)]
pub(crate) enum ApiError {
    Connect(std::io::Error),
    Http(hyper::Error),
    Token(String),
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiError::Connect(e) => write!(f, "cannot connect: {e}"),
            ApiError::Http(e) => write!(f, "HTTP/2: {e}"),
            ApiError::Token(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ApiError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ApiError::Connect(e) => Some(e),
            ApiError::Http(e) => Some(e),
            ApiError::Token(_) => None,
        }
    }
}

/// One answer: its status, the server's clock (the `Date` header, whole seconds,
/// as Unix ms) and its JSON body (`Null` when it had none or was not JSON).
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: StatusCode,
    pub date_ms: Option<u64>,
    pub body: serde_json::Value,
}

impl Reply {
    /// The message of a `Status` body (the API server's error answers), or the
    /// status line.
    pub fn message(&self) -> String {
        match self.body.get("message").and_then(|m| m.as_str()) {
            Some(m) => format!("{} {}", self.status, m),
            None => self.status.to_string(),
        }
    }
}

pub(crate) type Conn = SendRequest<Full<Bytes>>;

/// Opens the connection; must run inside a tokio runtime (a task of it drives
/// the connection).
pub(crate) async fn connect(target: &Target) -> std::result::Result<Conn, ApiError> {
    let tcp = tokio::net::TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(ApiError::Connect)?;
    let _ = tcp.set_nodelay(true);
    let name = rustls::pki_types::ServerName::try_from(target.host.clone())
        .map_err(|e| ApiError::Connect(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
    let stream = tokio_rustls::TlsConnector::from(target.tls.clone())
        .connect(name, tcp)
        .await
        .map_err(ApiError::Connect)?;
    if stream.get_ref().1.alpn_protocol() != Some(b"h2") {
        return Err(ApiError::Connect(std::io::Error::other(
            "the server did not agree to HTTP/2 (ALPN h2), which every Kubernetes API server offers: is this an API \
             server?",
        )));
    }
    let send = crate::h2::handshake(stream).await.map_err(ApiError::Http)?;
    Ok(send)
}

/// Reads the bearer token (at each request: the kubelet rotates it).
fn token(target: &Target) -> std::result::Result<String, ApiError> {
    let text = std::fs::read_to_string(&target.token_file)
        .map_err(|e| ApiError::Token(format!("cannot read the token file {:?}: {e}", target.token_file)))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ApiError::Token(format!(
            "the token file {:?} is empty",
            target.token_file
        )));
    }
    Ok(token.to_string())
}

/// One request: `path` (with its query) on the API server, a JSON body for
/// `POST`/`PUT`.
pub(crate) async fn request(
    conn: &mut Conn,
    target: &Target,
    method: Method,
    path: &str,
    body: Option<&serde_json::Value>,
) -> std::result::Result<Reply, ApiError> {
    let token = token(target)?;
    let bytes = match body {
        Some(v) => Bytes::from(serde_json::to_vec(v).map_err(|e| ApiError::Token(format!("JSON: {e}")))?),
        None => Bytes::new(),
    };
    let mut req = Request::builder()
        .method(method)
        .uri(format!("https://{}{path}", target.authority()))
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .header(
            http::header::USER_AGENT,
            concat!("flakeid-lease-net/", env!("CARGO_PKG_VERSION")),
        );
    if body.is_some() {
        req = req.header(http::header::CONTENT_TYPE, "application/json");
    }
    let req = req
        .body(Full::new(bytes))
        .map_err(|e| ApiError::Token(format!("request: {e}")))?;
    conn.ready().await.map_err(ApiError::Http)?;
    let resp = conn.send_request(req).await.map_err(ApiError::Http)?;
    let status = resp.status();
    let date_ms = resp
        .headers()
        .get(http::header::DATE)
        .and_then(|d| d.to_str().ok())
        .and_then(|d| httpdate::parse_http_date(d).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    let body = resp.into_body().collect().await.map_err(ApiError::Http)?.to_bytes();
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    Ok(Reply { status, date_ms, body })
}
