//! TLS (rustls, ring), optional client certificates (mTLS) and bearer tokens for
//! `flakeid serve`.
//!
//! - **TLS**: `--tls-cert` / `--tls-key` (PEM; the chain, then the key). HTTP/1.1
//!   and HTTP/2 (ALPN `h2`, `http/1.1`) on the one port, as without TLS.
//! - **mTLS**: `--tls-client-ca` (PEM roots): a client must present a certificate
//!   that chains to one of them, or the handshake fails.
//! - **Tokens**: `--auth-token-file` (one token per line; blank lines and `#`
//!   comments ignored): `/v1/*` and gRPC need `Authorization: Bearer <token>`,
//!   compared in constant time (`subtle`) against every token. `/healthz` and
//!   `/readyz` stay open (probes carry no secrets); `/metrics` too, unless
//!   `--metrics-auth` puts it behind the tokens (its counters tell the traffic).
//! - **Reload**: every file is checked every 2 s, and at once on SIGHUP; a changed
//!   certificate, key, CA or token file is loaded for new connections and requests
//!   (a file that does not load is logged and the previous one kept).

use crate::config::SecurityFiles;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};
use subtle::ConstantTimeEq;

impl SecurityFiles {
    /// Loads and checks every file (certificate chain, key, client CA, tokens) as
    /// [`crate::serve`] will, without keeping them: a service checks them before it
    /// leases a node id, so that a bad file never holds one.
    pub fn check(&self) -> std::io::Result<()> {
        self.check_flags()?;
        load_tls(self)?;
        load_tokens(self)?;
        Ok(())
    }
}

impl SecurityFiles {
    fn check_flags(&self) -> std::io::Result<()> {
        if self.metrics_auth && self.auth_token_file.is_none() {
            return Err(std::io::Error::other("--metrics-auth needs --auth-token-file"));
        }
        Ok(())
    }
}

/// The loaded TLS configuration and tokens, replaced when their files change.
#[derive(Debug)]
pub(crate) struct Security {
    files: SecurityFiles,
    tls: RwLock<Option<Arc<ServerConfig>>>,
    tokens: RwLock<Option<Arc<Vec<Vec<u8>>>>>,
    stamps: std::sync::Mutex<Vec<Option<SystemTime>>>,
}

fn io_err(what: &str, path: &std::path::Path, e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("{what} {}: {e}", path.display()))
}

fn load_tls(files: &SecurityFiles) -> std::io::Result<Option<Arc<ServerConfig>>> {
    let (cert, key) = match (&files.tls_cert, &files.tls_key) {
        (None, None) => {
            if files.tls_client_ca.is_some() {
                return Err(std::io::Error::other("--tls-client-ca needs --tls-cert and --tls-key"));
            }
            return Ok(None);
        }
        (Some(c), Some(k)) => (c, k),
        _ => return Err(std::io::Error::other("--tls-cert and --tls-key go together")),
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| io_err("cannot read the certificate", cert, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| io_err("cannot read the certificate", cert, e))?;
    if chain.is_empty() {
        return Err(io_err("no certificate in", cert, "empty"));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| io_err("cannot read the private key", key, e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?;
    let builder = match &files.tls_client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_file_iter(ca).map_err(|e| io_err("cannot read the client CA", ca, e))? {
                roots
                    .add(c.map_err(|e| io_err("cannot read the client CA", ca, e))?)
                    .map_err(|e| io_err("bad client CA certificate in", ca, e))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| io_err("bad client CA", ca, e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| io_err("the certificate and key do not go together:", cert, e))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Some(Arc::new(config)))
}

fn load_tokens(files: &SecurityFiles) -> std::io::Result<Option<Arc<Vec<Vec<u8>>>>> {
    let Some(path) = &files.auth_token_file else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|e| io_err("cannot read the token file", path, e))?;
    let tokens = tokens_of(&text).map_err(|(a, b)| {
        io_err(
            "a token is listed twice in",
            path,
            format!("lines {a} and {b} are the same token: list each token once (each is its own client share)"),
        )
    })?;
    if tokens.is_empty() {
        return Err(io_err("no token in", path, "every line is blank or a comment"));
    }
    Ok(Some(Arc::new(tokens)))
}

/// The tokens of a token file's text, one a line (blank lines and `#` comments
/// skipped). A token listed twice is refused with its two line numbers: a token's
/// place in the file is its share of the response budget (budget.rs, `Client`), and
/// [`Security::refuse`] finds it by ORing the places of the tokens it matches, so
/// one token on two lines would take a third token's share.
fn tokens_of(text: &str) -> Result<Vec<Vec<u8>>, (usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(first) = seen.insert(t, n + 1) {
            return Err((first, n + 1));
        }
        tokens.push(t.as_bytes().to_vec());
    }
    Ok(tokens)
}

fn stamps(files: &SecurityFiles) -> Vec<Option<SystemTime>> {
    [
        &files.tls_cert,
        &files.tls_key,
        &files.tls_client_ca,
        &files.auth_token_file,
    ]
    .iter()
    .map(|p| {
        p.as_ref()
            .and_then(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
    })
    .collect()
}

impl Security {
    /// Loads every file; any that does not load is an error (the service does not
    /// start).
    pub(crate) fn load(files: SecurityFiles) -> std::io::Result<Arc<Security>> {
        files.check_flags()?;
        let tls = load_tls(&files)?;
        let tokens = load_tokens(&files)?;
        let stamps = stamps(&files);
        Ok(Arc::new(Security {
            files,
            tls: RwLock::new(tls),
            tokens: RwLock::new(tokens),
            stamps: std::sync::Mutex::new(stamps),
        }))
    }

    pub(crate) fn tls(&self) -> Option<Arc<ServerConfig>> {
        self.tls.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn has_tokens(&self) -> bool {
        self.tokens.read().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Reloads every file now, changed or not (SIGHUP).
    pub(crate) fn reload_now(&self) {
        self.stamps.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.reload();
    }

    /// Reloads the files that changed since the last look.
    fn reload(&self) {
        let now = stamps(&self.files);
        let mut seen = self.stamps.lock().unwrap_or_else(|e| e.into_inner());
        if *seen == now {
            return;
        }
        *seen = now;
        match load_tls(&self.files) {
            Ok(tls) => {
                if tls.is_some() {
                    tracing::info!("TLS certificate, key and client CA reloaded");
                }
                *self.tls.write().unwrap_or_else(|e| e.into_inner()) = tls;
            }
            Err(e) => tracing::error!("TLS files changed but do not load (keeping the previous ones): {e}"),
        }
        match load_tokens(&self.files) {
            Ok(Some(tokens)) => {
                *self.tokens.write().unwrap_or_else(|e| e.into_inner()) = Some(tokens);
                tracing::info!("auth tokens reloaded");
            }
            Ok(None) => {}
            Err(e) => tracing::error!("the token file changed but does not load (keeping the previous tokens): {e}"),
        }
    }

    /// Checks the files every 2 s for as long as the service runs.
    pub(crate) async fn watch(self: Arc<Self>) {
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let me = self.clone();
            let _ = tokio::task::spawn_blocking(move || me.reload()).await;
        }
    }

    /// Whether a request to `path` may pass: open paths always (`Ok(None)`);
    /// `/v1/*` and gRPC only with one of the tokens (`Ok(Some(i))`: the `i`th, whose
    /// share of the response budget the request reserves from). `Err` is the
    /// refusal to send.
    pub(crate) fn refuse(&self, path: &str, headers: &HeaderMap) -> Result<Option<usize>, Box<Response>> {
        let tokens = match &*self.tokens.read().unwrap_or_else(|e| e.into_inner()) {
            None => return Ok(None),
            Some(t) => t.clone(),
        };
        let grpc = path.starts_with("/flakeid.v1.");
        let metrics = self.files.metrics_auth && path == "/metrics";
        if !grpc && !metrics && !path.starts_with("/v1/") {
            return Ok(None);
        }
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim().as_bytes());
        // Every token compared, none skipped: the time says nothing about which.
        if let Some(g) = given {
            let (mut ok, mut which) = (0u8, 0usize);
            for (i, t) in tokens.iter().enumerate() {
                let eq = g.ct_eq(t).unwrap_u8();
                ok |= eq;
                which |= i * usize::from(eq);
            }
            if ok == 1 {
                return Ok(Some(which));
            }
        }
        let why = if given.is_some() {
            "the bearer token is not one of the service's tokens"
        } else {
            "this route needs Authorization: Bearer <token>"
        };
        Err(Box::new(if grpc {
            let mut r = StatusCode::OK.into_response();
            let h = r.headers_mut();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
            h.insert("grpc-status", HeaderValue::from_static("16")); // UNAUTHENTICATED
            h.insert("grpc-message", HeaderValue::from_static("unauthenticated"));
            r
        } else {
            let mut r =
                crate::error::ApiError::plain(StatusCode::UNAUTHORIZED, "unauthorized", "authorization", why.into())
                    .into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            r
        }))
    }
}

#[cfg(test)]
mod tests {
    /// A token on two lines is refused, naming both; each other token is read once,
    /// in order (its place: its share).
    #[test]
    fn a_token_listed_twice_is_refused_naming_its_lines() {
        assert_eq!(super::tokens_of("x\nB\n\n# c\nB\nC\n"), Err((2, 5)));
        assert_eq!(super::tokens_of("x\n B \nB\nC"), Err((2, 3)));
        let t = super::tokens_of("x\n# B\nB\n\nC\n").unwrap();
        assert_eq!(t, [b"x".to_vec(), b"B".to_vec(), b"C".to_vec()]);
    }
}
