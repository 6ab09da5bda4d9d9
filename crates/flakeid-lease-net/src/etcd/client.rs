//! A small etcd v3 client: etcd's own gRPC API (the stubs in `generated/`, made
//! from `proto/etcd/*.proto` and committed) over one HTTP/2 connection — hyper on
//! a TCP stream, through rustls for `etcds://` — with the token of etcd's
//! authentication on every call. tonic does the gRPC framing and hyper the
//! HTTP/2; this file only opens the connection and names the calls the store makes.

use crate::tls::{self, TlsFiles, Verify};
use flakeid_core::Result;
use http::{HeaderValue, Uri};
use hyper::client::conn::http2::SendRequest;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite};
use tonic::body::Body;

/// The generated messages and clients (one module per protobuf package, as the
/// generated code refers to `super::mvccpb`).
#[allow(missing_debug_implementations, clippy::all, clippy::pedantic, unreachable_pub)]
pub(crate) mod pb {
    pub mod mvccpb {
        include!("generated/mvccpb.rs");
    }
    pub mod etcdserverpb {
        include!("generated/etcdserverpb.rs");
    }
}

use pb::etcdserverpb as rpc;
pub(crate) use pb::mvccpb::KeyValue;
pub(crate) use rpc::{RangeRequest, TxnRequest, TxnResponse};

/// What failed: opening the connection (TCP or TLS), the HTTP/2 handshake, or a call.
#[derive(Debug)]
pub(crate) enum EtcdError {
    Connect(std::io::Error),
    Http2(hyper::Error),
    Status(tonic::Status),
}

impl std::fmt::Display for EtcdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EtcdError::Connect(e) => write!(f, "cannot connect: {e}"),
            EtcdError::Http2(e) => write!(f, "HTTP/2: {e}"),
            EtcdError::Status(s) => write!(f, "{:?}: {}", s.code(), s.message()),
        }
    }
}

impl std::error::Error for EtcdError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EtcdError::Connect(e) => Some(e),
            EtcdError::Http2(e) => Some(e),
            EtcdError::Status(s) => std::error::Error::source(s),
        }
    }
}

impl From<tonic::Status> for EtcdError {
    fn from(s: tonic::Status) -> Self {
        EtcdError::Status(s)
    }
}

impl EtcdError {
    /// etcd's answer for a lease it does not know (expired and revoked, or lost).
    pub fn lease_not_found(&self) -> bool {
        matches!(self, EtcdError::Status(s) if s.message().contains("requested lease not found"))
    }
}

/// How to reach one etcd member.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// Host name or IP address (an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
}

/// Settings shared by every connection of a store.
#[derive(Clone)]
pub(crate) struct Options {
    /// `Some` for `etcds://`: rustls, offering HTTP/2 by ALPN.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// etcd's authentication: user and password.
    pub login: Option<(String, String)>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("tls", &self.tls.is_some())
            .field("user", &self.login.as_ref().map(|l| &l.0))
            .finish()
    }
}

impl Options {
    pub fn new(files: Option<&TlsFiles>, names: [&str; 3], login: Option<(String, String)>) -> Result<Options> {
        let tls = match files {
            Some(files) => {
                let mut config = tls::client_config(files, Verify::Full, names)?;
                config.alpn_protocols = vec![b"h2".to_vec()];
                Some(Arc::new(config))
            }
            None => None,
        };
        Ok(Options { tls, login })
    }
}

/// One HTTP/2 connection as the tower service the generated clients call through.
#[derive(Clone)]
pub(crate) struct Channel {
    send: SendRequest<Body>,
    /// etcd's authentication token, sent as the `token` metadata of every call.
    token: Option<HeaderValue>,
}

impl tonic::codegen::Service<http::Request<Body>> for Channel {
    type Response = http::Response<hyper::body::Incoming>;
    type Error = hyper::Error;
    type Future = Pin<Box<dyn Future<Output = std::result::Result<Self::Response, hyper::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<std::result::Result<(), hyper::Error>> {
        self.send.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<Body>) -> Self::Future {
        if let Some(token) = &self.token {
            req.headers_mut().insert("token", token.clone());
        }
        Box::pin(self.send.send_request(req))
    }
}

/// A connected (and, with a user, logged-in) client of one member.
#[derive(Clone)]
pub(crate) struct Client {
    channel: Channel,
    origin: Uri,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "etcd::Client({})", self.origin)
    }
}

async fn handshake<I>(io: I) -> std::result::Result<SendRequest<Body>, EtcdError>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    crate::h2::handshake(io).await.map_err(EtcdError::Http2)
}

impl Client {
    /// Opens a connection to `endpoint` and logs in when `options` has a user.
    /// Must run inside a tokio runtime (the connection is driven by a task of it).
    pub async fn connect(endpoint: &Endpoint, options: &Options) -> std::result::Result<Client, EtcdError> {
        let host = endpoint.host.as_str();
        let tcp = tokio::net::TcpStream::connect((host, endpoint.port))
            .await
            .map_err(EtcdError::Connect)?;
        let _ = tcp.set_nodelay(true);
        let shown = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        let (send, scheme) = match &options.tls {
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from(host.to_string())
                    .map_err(|e| EtcdError::Connect(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
                let stream = tokio_rustls::TlsConnector::from(config.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(EtcdError::Connect)?;
                (handshake(stream).await?, "https")
            }
            None => (handshake(tcp).await?, "http"),
        };
        let origin = Uri::try_from(format!("{scheme}://{shown}:{}", endpoint.port))
            .map_err(|e| EtcdError::Connect(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?;
        let mut client = Client {
            channel: Channel { send, token: None },
            origin,
        };
        if let Some((name, password)) = &options.login {
            let mut auth = rpc::auth_client::AuthClient::with_origin(client.channel.clone(), client.origin.clone());
            let token = auth
                .authenticate(rpc::AuthenticateRequest {
                    name: name.clone(),
                    password: password.clone(),
                })
                .await?
                .into_inner()
                .token;
            let token = HeaderValue::try_from(token)
                .map_err(|_| EtcdError::Status(tonic::Status::internal("etcd returned an unusable token")))?;
            client.channel.token = Some(token);
        }
        Ok(client)
    }

    fn kv(&self) -> rpc::kv_client::KvClient<Channel> {
        rpc::kv_client::KvClient::with_origin(self.channel.clone(), self.origin.clone())
    }

    fn lease(&self) -> rpc::lease_client::LeaseClient<Channel> {
        rpc::lease_client::LeaseClient::with_origin(self.channel.clone(), self.origin.clone())
    }

    /// The member's leader as it sees it (0: none).
    pub async fn leader(&self) -> std::result::Result<u64, EtcdError> {
        let mut m = rpc::maintenance_client::MaintenanceClient::with_origin(self.channel.clone(), self.origin.clone());
        Ok(m.status(rpc::StatusRequest {}).await?.into_inner().leader)
    }

    pub async fn range(&self, req: RangeRequest) -> std::result::Result<Vec<KeyValue>, EtcdError> {
        Ok(self.kv().range(req).await?.into_inner().kvs)
    }

    pub async fn txn(&self, req: TxnRequest) -> std::result::Result<TxnResponse, EtcdError> {
        Ok(self.kv().txn(req).await?.into_inner())
    }

    /// A new etcd lease of `ttl_s` seconds: its id.
    pub async fn lease_grant(&self, ttl_s: i64) -> std::result::Result<i64, EtcdError> {
        let req = rpc::LeaseGrantRequest { ttl: ttl_s, id: 0 };
        Ok(self.lease().lease_grant(req).await?.into_inner().id)
    }

    pub async fn lease_revoke(&self, id: i64) -> std::result::Result<(), EtcdError> {
        self.lease().lease_revoke(rpc::LeaseRevokeRequest { id }).await?;
        Ok(())
    }

    /// `(remaining, granted)` seconds of lease `id` (remaining ≤ 0: unknown or expired).
    pub async fn lease_time_to_live(&self, id: i64) -> std::result::Result<(i64, i64), EtcdError> {
        let r = self
            .lease()
            .lease_time_to_live(rpc::LeaseTimeToLiveRequest { id, keys: false })
            .await?
            .into_inner();
        Ok((r.ttl, r.granted_ttl))
    }

    /// Refreshes lease `id` once: its new TTL in seconds (0: etcd does not know it).
    pub async fn lease_keep_alive(&self, id: i64) -> std::result::Result<i64, EtcdError> {
        let requests = tonic::codegen::tokio_stream::once(rpc::LeaseKeepAliveRequest { id });
        let mut answers = self.lease().lease_keep_alive(requests).await?.into_inner();
        Ok(answers.message().await?.map_or(0, |r| r.ttl))
    }
}

/// `Compare` and `RequestOp` in the words of the store's transactions.
pub(crate) mod txn {
    use super::rpc::compare::{CompareResult, CompareTarget, TargetUnion};
    use super::rpc::request_op::Request;
    use super::rpc::{Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp};

    pub use super::rpc::compare::CompareResult as Cmp;

    fn compare(key: impl Into<Vec<u8>>, result: CompareResult, target: CompareTarget, value: TargetUnion) -> Compare {
        Compare {
            result: result as i32,
            target: target as i32,
            key: key.into(),
            target_union: Some(value),
            range_end: Vec::new(),
        }
    }

    /// The key's value compared with `value`.
    pub fn value(key: impl Into<Vec<u8>>, result: CompareResult, value: impl Into<Vec<u8>>) -> Compare {
        compare(key, result, CompareTarget::Value, TargetUnion::Value(value.into()))
    }

    /// The key's creation revision compared with `rev` (`Equal, 0`: the key is absent).
    pub fn create_revision(key: impl Into<Vec<u8>>, result: CompareResult, rev: i64) -> Compare {
        compare(key, result, CompareTarget::Create, TargetUnion::CreateRevision(rev))
    }

    /// The key's last modification revision compared with `rev`.
    pub fn mod_revision(key: impl Into<Vec<u8>>, result: CompareResult, rev: i64) -> Compare {
        compare(key, result, CompareTarget::Mod, TargetUnion::ModRevision(rev))
    }

    /// Writes `value` under `key`, attached to etcd lease `lease` (0: none).
    pub fn put(key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, lease: i64) -> RequestOp {
        RequestOp {
            request: Some(Request::RequestPut(PutRequest {
                key: key.into(),
                value: value.into(),
                lease,
                ..PutRequest::default()
            })),
        }
    }

    pub fn get(key: impl Into<Vec<u8>>) -> RequestOp {
        RequestOp {
            request: Some(Request::RequestRange(RangeRequest {
                key: key.into(),
                ..RangeRequest::default()
            })),
        }
    }

    pub fn delete(key: impl Into<Vec<u8>>) -> RequestOp {
        RequestOp {
            request: Some(Request::RequestDeleteRange(DeleteRangeRequest {
                key: key.into(),
                ..DeleteRangeRequest::default()
            })),
        }
    }
}

/// The keys under `prefix`: the range `[prefix, prefix + 1)`.
pub(crate) fn prefix_range(prefix: &str) -> RangeRequest {
    let mut end = prefix.as_bytes().to_vec();
    // The prefix is ASCII text (never all 0xff), so its last byte can be raised.
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            break;
        }
    }
    RangeRequest {
        key: prefix.as_bytes().to_vec(),
        range_end: end,
        keys_only: true,
        ..RangeRequest::default()
    }
}

/// The values of the `get`s among a transaction's responses, in order.
pub(crate) fn gets(resp: &TxnResponse) -> Vec<Option<KeyValue>> {
    use rpc::response_op::Response;
    resp.responses
        .iter()
        .filter_map(|r| match &r.response {
            Some(Response::ResponseRange(g)) => Some(g.kvs.first().cloned()),
            _ => None,
        })
        .collect()
}
