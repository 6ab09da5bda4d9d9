//! The settings of a service beyond its generator ([`Config`]): its limits
//! ([`Limits`]), its TLS and token files ([`SecurityFiles`]), and the memory
//! budgets that follow from them ([`Budgets`]). Plain data: the floor every other
//! module of the service stands on.

mod limits;

pub use limits::{Limits, PER_CONNECTION, SEND_BUFFER};

use flakeid_core::Error;
use flakeid_seal::Sealer;
use std::path::PathBuf;

/// The files of TLS and token authentication; `None`s leave them off. Loaded and
/// checked by security.rs (`SecurityFiles::check`).
#[derive(Debug, Clone, Default)]
pub struct SecurityFiles {
    /// `--tls-cert`: the server's certificate chain (PEM), reloaded when it changes.
    pub tls_cert: Option<PathBuf>,
    /// `--tls-key`: its private key (PEM).
    pub tls_key: Option<PathBuf>,
    /// `--tls-client-ca`: require client certificates signed by this CA (mTLS).
    pub tls_client_ca: Option<PathBuf>,
    /// `--auth-token-file`: bearer tokens, one per line, for `/v1/*` and gRPC.
    pub auth_token_file: Option<PathBuf>,
    /// `--metrics-auth`: `/metrics` needs a token too (needs `auth_token_file`).
    pub metrics_auth: bool,
}

/// The default and the hard ceiling of `n` for one `/v1/ids` request. The ceiling
/// bounds the memory one request can make the server allocate (8 bytes per ID plus
/// the text form).
pub const DEFAULT_MAX_BATCH: usize = 100_000;
/// The largest `--max-batch` accepted.
pub const MAX_BATCH_CEILING: usize = 10_000_000;

/// Batches at least this large are generated on the blocking pool: the wait policy
/// may sleep until the next tick, which must not stall an async worker.
pub(crate) const BLOCKING_BATCH: usize = 4096;

/// How many IDs one lazily made chunk of a large `/v1/ids` body or of a gRPC
/// `Stream` (chunk 0) holds: what is issued and not yet sent to a client is at
/// most its connection's response budget (budget.rs, `Flow`).
pub const CHUNK: usize = BLOCKING_BATCH;

/// Settings of one service beyond its generator.
#[derive(Debug, Clone)]
pub struct Config {
    /// The largest `n` one `/v1/ids` request may ask for.
    pub max_batch: usize,
    /// Timeouts, the connection cap and the HTTP/2 limits (config/limits.rs).
    pub limits: Limits,
    /// TLS, client certificates and bearer tokens (security.rs); all off by default.
    pub security: SecurityFiles,
    /// Seals every ID issued (`--seal-key-file`, docs/sealing.md) and serves
    /// `/v1/unseal/{id}`, `/v1/decode/{id}?sealed=1` and gRPC `Unseal`. `None` (the
    /// default): plain IDs, and those answer `sealing_not_configured`. Its width
    /// must be the generator's layout's. Its `Debug` never shows the key.
    pub sealer: Option<Sealer>,
    /// One JSON line per answered request on standard output (`--access-log`,
    /// access.rs). Default off.
    pub access_log: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_batch: DEFAULT_MAX_BATCH,
            limits: Limits::default(),
            security: SecurityFiles::default(),
            sealer: None,
            access_log: false,
        }
    }
}

impl Config {
    /// Checks the settings; `max_batch` must be in `1..=MAX_BATCH_CEILING`.
    pub fn validate(&self) -> Result<(), Error> {
        if self.max_batch == 0 || self.max_batch > MAX_BATCH_CEILING {
            return Err(Error::Config {
                field: "max_batch",
                message: format!("max_batch must be in 1..={MAX_BATCH_CEILING}, got {}", self.max_batch),
            });
        }
        self.limits.validate().map_err(|message| Error::Config {
            field: "limits",
            message,
        })?;
        let p = self.limits.client_ipv6_prefix;
        if !(1..=128).contains(&p) {
            return Err(Error::Config {
                field: "client_ipv6_prefix",
                message: format!("client_ipv6_prefix must be in 1..=128 bits, got {p}"),
            });
        }
        let b = self.budgets();
        let l = &self.limits;
        for (field, given, least, what) in [
            (
                "request_memory",
                l.request_memory,
                b.max_request_message,
                "the largest gRPC request (an Unseal of max_batch IDs)",
            ),
            (
                "connection_response_memory",
                l.connection_response_memory,
                b.largest_reservation,
                "the largest response (max_batch TypeIDs of a 63-character prefix as text)",
            ),
            (
                "client_response_memory",
                l.client_response_memory,
                b.connection_response,
                "connection_response_memory",
            ),
            (
                "response_memory",
                l.response_memory,
                b.client_response,
                "client_response_memory",
            ),
        ] {
            if let Some(given) = given
                && !(least..=MAX_MEMORY).contains(&given)
            {
                return Err(Error::Config {
                    field,
                    message: format!(
                        "{field} must be in {least}..={MAX_MEMORY} bytes (at least {what}, with max_batch {}), got {given}",
                        self.max_batch
                    ),
                });
            }
        }
        Ok(())
    }

    /// The memory budgets that follow from these settings (docs/service.md,
    /// "Memory budget").
    pub fn budgets(&self) -> Budgets {
        const MIB: usize = 1024 * 1024;
        let n = self.max_batch;
        // Unseal's packed `repeated fixed64`, 8 bytes an ID (9 unpacked), and tags.
        let max_request_message = n.saturating_mul(9).saturating_add(RESERVE_OVERHEAD);
        let max_response_message = n.saturating_mul(8).saturating_add(RESERVE_OVERHEAD);
        // A Batch or Unseal answer holds its IDs and their encoding (16 bytes an
        // ID); a batch over HTTP reserves its whole body first, the largest of
        // them a 128-bit batch as text of the longest TypeID prefix.
        let largest_reservation = whole_reservation(
            n,
            wide_text_chunk(MAX_TYPEID_PREFIX),
            wide_text_per_id(MAX_TYPEID_PREFIX),
        )
        .max(n.saturating_mul(16).saturating_add(RESERVE_OVERHEAD));
        let l = &self.limits;
        let connection_response = l
            .connection_response_memory
            .unwrap_or((4 * MIB).max(largest_reservation));
        let response = l.response_memory.unwrap_or(
            (64 * MIB)
                .max(connection_response)
                .max(l.client_response_memory.unwrap_or(0)),
        );
        Budgets {
            max_request_message,
            max_response_message,
            largest_reservation,
            request: l.request_memory.unwrap_or((32 * MIB).max(max_request_message)),
            response,
            client_response: l
                .client_response_memory
                .unwrap_or((response / 4).max(connection_response)),
            connection_response,
            client_ipv6_prefix: l.client_ipv6_prefix,
        }
    }
}

/// The largest memory budget accepted (1 TiB).
pub const MAX_MEMORY: usize = 1 << 40;

/// The memory budgets of a service ([`Config::budgets`]): what clients can make
/// it hold beyond each connection's own buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budgets {
    /// The largest gRPC request message decoded (tonic's
    /// `max_decoding_message_size`): an `Unseal` of `max_batch` IDs.
    pub max_request_message: usize,
    /// The largest gRPC response message (`max_encoding_message_size`): a `Batch`
    /// of `max_batch` IDs.
    pub max_response_message: usize,
    /// The most one response reserves at once.
    pub largest_reservation: usize,
    /// gRPC request bodies buffered at once, over every connection.
    pub request: usize,
    /// Responses made and not yet sent, over every connection.
    pub response: usize,
    /// The same, per client (an address, or a bearer token).
    pub client_response: usize,
    /// The same, per connection.
    pub connection_response: usize,
    /// The leading bits of an IPv6 address that make one client
    /// ([`crate::Limits::client_ipv6_prefix`]).
    pub client_ipv6_prefix: u32,
}

/// Bytes reserved for a response beyond its IDs' (framing, headers).
pub(crate) const RESERVE_OVERHEAD: usize = 64;

/// The longest TypeID prefix (`flakeid_core::Wide::check_typeid_prefix`).
pub(crate) const MAX_TYPEID_PREFIX: usize = 63;

/// What one 128-bit ID of a text batch holds until it is written, with a TypeID
/// prefix of `prefix` bytes: the ID (16 bytes), and its text (at most 36, or the
/// prefix, `_` and 26), quotes and a separator.
pub(crate) const fn wide_text_per_id(prefix: usize) -> usize {
    16 + prefix + 48
}

/// How many 128-bit IDs one chunk of a text batch holds: no more bytes than a
/// chunk of `/v1/ids` (a long prefix makes smaller chunks).
pub(crate) const fn wide_text_chunk(prefix: usize) -> usize {
    let c = 32 * CHUNK / wide_text_per_id(prefix);
    if c == 0 { 1 } else { c }
}

/// The room a batch of `n` IDs made in chunks of `chunk` reserves for its whole
/// body before its head is sent (budget.rs, `Flow::reserve_whole`): `bytes_per_id`
/// an ID, and each chunk's overhead, as its chunks draw it.
pub(crate) fn whole_reservation(n: usize, chunk: usize, bytes_per_id: usize) -> usize {
    n.saturating_mul(bytes_per_id)
        .saturating_add(n.div_ceil(chunk.max(1)).saturating_mul(RESERVE_OVERHEAD))
}

#[cfg(test)]
mod tests {
    /// The budgets follow `max_batch`, and one given below what a single
    /// request or response needs is refused naming it.
    #[test]
    fn budgets_fit_the_largest_request_and_response() {
        let mut c = crate::Config::default();
        let b = c.budgets();
        assert_eq!(b.max_request_message, 900_064);
        // 100 000 TypeIDs of the longest prefix as text (127 bytes an ID), in 97
        // chunks: a connection's default budget is the largest body, not 4 MiB.
        assert_eq!(b.largest_reservation, 12_706_208);
        assert_eq!(
            (b.request, b.response, b.client_response, b.connection_response),
            (32 << 20, 64 << 20, 16 << 20, 12_706_208)
        );
        c.max_batch = 10_000_000;
        let b = c.budgets();
        assert_eq!(b.connection_response, b.largest_reservation);
        assert_eq!(b.client_response, b.connection_response);
        assert!(b.response >= b.client_response && b.request >= b.max_request_message);
        c.limits.client_response_memory = Some(2 << 30);
        assert_eq!((c.budgets().client_response, c.budgets().response), (2 << 30, 2 << 30));
        c.limits.client_response_memory = None;
        c.max_batch = 100_000;
        c.limits.connection_response_memory = Some(1_000_000);
        let e = c.validate().unwrap_err().to_string();
        assert!(
            e.contains("connection_response_memory") && e.contains("12706208"),
            "{e}"
        );
        c.limits.connection_response_memory = None;
        for p in [0, 129] {
            c.limits.client_ipv6_prefix = p;
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("client_ipv6_prefix must be in 1..=128 bits"), "{e}");
        }
        c.limits.client_ipv6_prefix = 48;
        c.validate().unwrap();
        c.limits.request_memory = Some(usize::MAX);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("request_memory must be in 900064..=1099511627776"), "{e}");
    }
}
