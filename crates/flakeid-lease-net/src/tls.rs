//! TLS for the network lease stores: rustls with the ring provider (no OpenSSL),
//! certificates from PEM files named in the URL (`ca`, `cert`, `key`; PostgreSQL
//! spells them `sslrootcert`, `sslcert`, `sslkey`), the system's roots when no CA is
//! given, and errors that name the cause (unknown CA, name mismatch, expired).

use crate::lease_error;
use crate::url::{LeaseUrl, config};
use flakeid_core::Result;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use std::sync::Arc;

/// PEM files for one TLS connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    /// Trusted CA certificates; `None`: the system's roots.
    pub ca: Option<String>,
    /// Client certificate chain and its key (mTLS).
    pub cert: Option<String>,
    pub key: Option<String>,
}

impl TlsFiles {
    /// Reads `ca`, `cert` and `key` (or the names given) from `u`; `cert` and `key`
    /// come together.
    pub fn from_url(u: &LeaseUrl, names: [&str; 3]) -> Result<TlsFiles> {
        let get = |k: &str| u.param(k).filter(|v| !v.is_empty()).map(str::to_string);
        let files = TlsFiles {
            ca: get(names[0]),
            cert: get(names[1]),
            key: get(names[2]),
        };
        if files.cert.is_some() != files.key.is_some() {
            return Err(config(format!(
                "lease URL {}: {} and {} (the client certificate and its key) come together",
                u.redacted(),
                names[1],
                names[2]
            )));
        }
        Ok(files)
    }

    pub fn any(&self) -> bool {
        self.ca.is_some() || self.cert.is_some()
    }
}

/// Reads a PEM file the URL names, as bytes; the error names the parameter.
pub(crate) fn read_pem(path: &str, param: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| lease_error(format!("cannot read the {param}= file {path:?}: {e}")))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The trusted roots: the `ca` file, or the system's.
pub(crate) fn roots(files: &TlsFiles, ca_param: &str) -> Result<rustls::RootCertStore> {
    let mut store = rustls::RootCertStore::empty();
    match &files.ca {
        Some(path) => {
            let pem = read_pem(path, ca_param)?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert =
                    cert.map_err(|e| lease_error(format!("{ca_param}= file {path:?} is not PEM certificates: {e}")))?;
                store
                    .add(cert)
                    .map_err(|e| lease_error(format!("{ca_param}= file {path:?}: {e}")))?;
            }
            if store.is_empty() {
                return Err(lease_error(format!("{ca_param}= file {path:?} holds no certificate")));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = store.add(cert);
            }
            if store.is_empty() {
                return Err(lease_error(
                    "no system CA certificates found (install ca-certificates, or name a CA file with ca=/sslrootcert=)",
                ));
            }
        }
    }
    Ok(store)
}

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verify {
    /// Chain to a trusted root and the host name (the default everywhere).
    Full,
    /// Chain only (PostgreSQL `sslmode=verify-ca`).
    ChainOnly,
    /// Encryption only (PostgreSQL `sslmode=require`/`prefer` without a root
    /// certificate, as libpq does). The handshake signature is still checked.
    None,
}

/// A rustls client configuration for `files` and `verify`.
pub(crate) fn client_config(files: &TlsFiles, verify: Verify, names: [&str; 3]) -> Result<rustls::ClientConfig> {
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| lease_error(format!("TLS setup: {e}")))?;
    let builder = match verify {
        Verify::Full => builder.with_root_certificates(roots(files, names[0])?),
        Verify::ChainOnly => {
            let chain = rustls::client::WebPkiServerVerifier::builder_with_provider(
                Arc::new(roots(files, names[0])?),
                provider.clone(),
            )
            .build()
            .map_err(|e| lease_error(format!("TLS setup: {e}")))?;
            let chain = Some(chain);
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Lenient { chain, provider }))
        }
        Verify::None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Lenient { chain: None, provider })),
    };
    match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => {
            let certs = CertificateDer::pem_slice_iter(&read_pem(cert, names[1])?)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| lease_error(format!("{}= file {cert:?} is not PEM certificates: {e}", names[1])))?;
            let key_der = PrivateKeyDer::from_pem_slice(&read_pem(key, names[2])?)
                .map_err(|e| lease_error(format!("{}= file {key:?} holds no PEM private key: {e}", names[2])))?;
            builder
                .with_client_auth_cert(certs, key_der)
                .map_err(|e| lease_error(format!("client certificate {cert:?} / key {key:?}: {e}")))
        }
        _ => Ok(builder.with_no_client_auth()),
    }
}

/// `verify-ca` (with `chain`: it must lead to a trusted root; the name is not
/// checked) and libpq's `require`/`prefer` without a root certificate (no `chain`:
/// encrypted, not authenticated). Either way the handshake's signature is checked
/// with the provider's algorithms, as rustls's own verifier does.
#[derive(Debug)]
struct Lenient {
    chain: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl rustls::client::danger::ServerCertVerifier for Lenient {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::CertificateError::{NotValidForName, NotValidForNameContext};
        let Some(chain) = &self.chain else {
            return Ok(rustls::client::danger::ServerCertVerified::assertion());
        };
        // webpki checks the chain (and validity dates) before the name: a name
        // error means everything else passed.
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(NotValidForName | NotValidForNameContext { .. })) => {
                Ok(rustls::client::danger::ServerCertVerified::assertion())
            }
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// The TLS reason behind a client library's error, in words, when there is one:
/// looks for a `rustls::Error` down the source chain, then for rustls's wording in
/// the messages (some clients keep only the text).
pub(crate) fn tls_cause(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut text = String::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    let mut depth = 0;
    while let Some(e) = cur {
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            return Some(describe(r));
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(r) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>())
        {
            return Some(describe(r));
        }
        text.push_str(&e.to_string());
        text.push('\n');
        depth += 1;
        cur = if depth < 16 { e.source() } else { None };
    }
    cause_in_text(&text)
}

fn describe(e: &rustls::Error) -> String {
    use rustls::CertificateError as C;
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer => UNKNOWN_CA.into(),
            C::NotValidForName | C::NotValidForNameContext { .. } => format!("{NAME_MISMATCH} ({e})"),
            C::Expired | C::ExpiredContext { .. } => format!("{EXPIRED} ({e})"),
            C::NotValidYet | C::NotValidYetContext { .. } => {
                format!("TLS: the server's certificate is not valid yet ({e})")
            }
            C::Revoked => "TLS: the server's certificate is revoked".into(),
            _ => format!("TLS: the server's certificate was refused: {e}"),
        },
        rustls::Error::AlertReceived(alert) => format!(
            "TLS: the server refused the handshake (alert {alert:?}); if it requires a client certificate, \
             give cert= and key= (sslcert=/sslkey= for PostgreSQL)"
        ),
        other => format!("TLS: {other}"),
    }
}

const UNKNOWN_CA: &str = "TLS: the server's certificate is signed by an unknown CA (give its CA file with ca=, or sslrootcert= for PostgreSQL)";
const NAME_MISMATCH: &str = "TLS: the server's certificate does not name the host in the URL (hostname mismatch)";
const EXPIRED: &str = "TLS: the server's certificate has expired";

fn cause_in_text(text: &str) -> Option<String> {
    if text.contains("UnknownIssuer") {
        Some(UNKNOWN_CA.into())
    } else if text.contains("NotValidForName") || text.contains("not valid for name") {
        Some(format!("{NAME_MISMATCH} ({})", first_line_with(text, "name")))
    } else if text.contains("certificate expired") || text.contains("Expired") {
        Some(EXPIRED.into())
    } else if text.contains("CertificateRequired") || text.contains("received fatal alert") {
        Some(format!(
            "TLS: the server refused the handshake ({}); if it requires a client certificate, give cert= and key=",
            first_line_with(text, "alert")
        ))
    } else {
        None
    }
}

fn first_line_with<'a>(text: &'a str, word: &str) -> &'a str {
    text.lines().find(|l| l.contains(word)).unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_tls_cause() {
        use rustls::CertificateError as C;
        let io = std::io::Error::other(rustls::Error::InvalidCertificate(C::UnknownIssuer));
        assert!(tls_cause(&io).unwrap().contains("unknown CA"));
        let e = rustls::Error::InvalidCertificate(C::Expired);
        assert!(tls_cause(&e).unwrap().contains("expired"));
        let e = rustls::Error::InvalidCertificate(C::NotValidForName);
        assert!(tls_cause(&e).unwrap().contains("hostname mismatch"));
        // Only the text survived (a client that stringifies its errors).
        let text = std::io::Error::other("transport error: invalid peer certificate: UnknownIssuer");
        assert!(tls_cause(&text).unwrap().contains("unknown CA"));
        assert!(tls_cause(&std::io::Error::other("connection refused")).is_none());
    }

    #[test]
    fn cert_and_key_come_together() {
        let u = LeaseUrl::parse("rediss://h/0?cert=/c.pem").unwrap();
        let e = TlsFiles::from_url(&u, ["ca", "cert", "key"]).unwrap_err().to_string();
        assert!(e.contains("cert and key"), "{e}");
        let u = LeaseUrl::parse("rediss://h/0?ca=/nonexistent/ca.pem").unwrap();
        let files = TlsFiles::from_url(&u, ["ca", "cert", "key"]).unwrap();
        let e = client_config(&files, Verify::Full, ["ca", "cert", "key"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("ca= file") && e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
