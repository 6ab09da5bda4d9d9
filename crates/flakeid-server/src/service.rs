//! One running service ([`Service`]): the generator in use, readiness, and issuing
//! (the IDs of a large response, made as they are sent: chunks.rs).

use crate::access::AccessLog;
use crate::budget::Memory;
use crate::config::Config;
use crate::error::ApiError;
use crate::liveness::Watch;
use crate::metrics::Metrics;
use crate::scrape::Snapshot;
use crate::security::Security;
use axum::http::StatusCode;
use flakeid_core::{Error, Generator, LeaseState};
use flakeid_seal::Sealer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a draining service issues nothing.
pub(crate) const SHUTTING_DOWN: &str = "shutting down";

/// tokio's timer, for the generators' async calls ([`flakeid_core::AsyncSleep`]).
fn tokio_sleep(d: std::time::Duration) -> tokio::time::Sleep {
    tokio::time::sleep(d)
}

/// Why a service without a node id issues no 64-bit ID.
const NO_NODE_ID: &str = "this service issues 128-bit IDs only (/v1/uuid, /v1/ulid, /v1/typeid, gRPC NextUuid): it was started without a node id; start it with --node (or --datacenter and --worker, or --lease) to serve 64-bit IDs";

/// One running service: a generator shared by every request.
#[derive(Debug)]
pub struct Service {
    /// The generator in use: replaced by the lease supervisor (lease.rs) when a
    /// lost lease is taken again.
    /// `None`: a service without a node id, which issues 128-bit IDs only
    /// ([`Service::wide`]).
    pub(crate) generator: std::sync::RwLock<Option<Arc<Generator>>>,
    pub(crate) config: Config,
    /// The lease supervisor's record (lease.rs): how long without a held lease.
    pub(crate) lease: Watch,
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) draining: AtomicBool,
    /// The access log, when on ([`Config::access_log`]).
    pub(crate) access: Option<AccessLog>,
    /// The server-wide request and response budgets ([`Config::budgets`]).
    pub(crate) memory: Memory,
    /// The TLS and token files, once serving (for a reload on SIGHUP).
    pub(crate) security: std::sync::Mutex<Option<Arc<Security>>>,
    /// [`Service::openapi`], made once: every answer shares it, so the answers a
    /// client leaves unread hold no copy of it (docs/service.md, "Memory budget").
    pub(crate) openapi: axum::body::Bytes,
    /// `/v1/uuid` and `/v1/ulid`: 128-bit IDs need no node id, so neither the
    /// lease nor the node's readiness gates them.
    pub(crate) uuids: flakeid_core::UuidGenerator,
}

pub(crate) type Shared = Arc<Service>;

/// The OpenAPI 3 description of every HTTP route (routes.rs): written by hand,
/// kept here only, checked against the running server by schemathesis
/// (tests/serve). The largest `n` of `/v1/ids` in it is
/// [`DEFAULT_MAX_BATCH`](crate::DEFAULT_MAX_BATCH); a service serves its own
/// ([`Service::openapi`]).
pub const OPENAPI: &str = include_str!("openapi.json");

/// The one place in [`OPENAPI`] that names the largest `n`.
pub(crate) const OPENAPI_MAX_BATCH: &str = "\"maximum\": 100000";

impl Service {
    /// A service issuing from `generator`, configured by `config`.
    ///
    /// Errors ([`Error::Config`]): those of [`Config::validate`]; a sealer whose
    /// width is not the layout's (`seal_key_file`).
    pub fn new(generator: Generator, config: Config) -> Result<Arc<Service>, Error> {
        Service::build(Some(generator), config)
    }

    /// A service without a node id: it issues 128-bit IDs only (`/v1/uuid`,
    /// `/v1/ulid`, `/v1/typeid`, gRPC `NextUuid`), and its 64-bit routes answer
    /// 409 `no_node_id` (gRPC `FAILED_PRECONDITION`), saying why.
    ///
    /// Errors ([`Error::Config`]): those of [`Config::validate`]; a sealer
    /// (`seal_key_file`: sealing is of 64-bit IDs).
    pub fn wide(config: Config) -> Result<Arc<Service>, Error> {
        Service::build(None, config)
    }

    fn build(generator: Option<Generator>, config: Config) -> Result<Arc<Service>, Error> {
        config.validate()?;
        if let Some(sealer) = &config.sealer {
            let Some(g) = &generator else {
                return Err(Error::Config {
                    field: "seal_key_file",
                    message: "sealing is of 64-bit IDs: it needs a node id (--node, or a lease)".into(),
                });
            };
            let bits = g.layout().total_bits();
            if sealer.bits() != bits {
                return Err(Error::Config {
                    field: "seal_key_file",
                    message: format!(
                        "the sealer seals {}-bit IDs, but the generator's layout has {bits} bits",
                        sealer.bits()
                    ),
                });
            }
        }
        let access = match config.access_log {
            false => None,
            true => Some(AccessLog::start().map_err(|e| Error::Config {
                field: "access_log",
                message: format!("cannot start the access log's writer: {e}"),
            })?),
        };
        let budgets = config.budgets();
        let uuids = flakeid_core::UuidGenerator::builder().build()?;
        let openapi = OPENAPI
            .replacen(OPENAPI_MAX_BATCH, &format!("\"maximum\": {}", config.max_batch), 1)
            .into();
        Ok(Arc::new_cyclic(|me: &std::sync::Weak<Service>| {
            let metrics = Metrics::new();
            metrics.sealing.set(i64::from(config.sealer.is_some()));
            let me = me.clone();
            metrics.set_source(move || me.upgrade().map(|svc| svc.snapshot()));
            Service {
                memory: Memory::new(budgets),
                security: std::sync::Mutex::new(None),
                generator: std::sync::RwLock::new(generator.map(Arc::new)),
                lease: Watch::default(),
                config,
                metrics: Arc::new(metrics),
                draining: AtomicBool::new(false),
                access,
                openapi,
                uuids,
            }
        }))
    }

    /// The OpenAPI document this service serves at `/openapi.json`: [`OPENAPI`]
    /// with its own `--max-batch`.
    pub fn openapi(&self) -> String {
        String::from_utf8_lossy(&self.openapi).into_owned()
    }

    /// Whether issued IDs are sealed ([`Config::sealer`]).
    pub fn is_sealing(&self) -> bool {
        self.config.sealer.is_some()
    }

    /// The sealer, or the `sealing_not_configured` refusal of `/v1/unseal`,
    /// `?sealed=1` and gRPC `Unseal`.
    pub(crate) fn sealer(&self) -> Result<&Sealer, ApiError> {
        self.config.sealer.as_ref().ok_or_else(|| ApiError {
            status: StatusCode::CONFLICT,
            kind: "sealing_not_configured",
            parameter: None,
            message: "sealing is not configured: start the service with --seal-key-file FILE".into(),
        })
    }

    /// Unseals `id` ([`Config::sealer`]); a number outside the layout is refused
    /// naming `id`.
    pub(crate) fn unseal(&self, id: u64) -> Result<u64, ApiError> {
        self.sealer()?
            .unseal(id)
            .map_err(|e| ApiError::bad("id", e.to_string()))
    }

    /// How many IDs this service has issued (HTTP and gRPC).
    pub fn issued(&self) -> u64 {
        self.metrics.issued.get()
    }

    /// The generator of 64-bit IDs in use now (a lost lease is replaced by a new
    /// one); `None` for a service without a node id ([`Service::wide`]).
    pub fn generator(&self) -> Option<Arc<Generator>> {
        self.generator.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The generator in use, or the `no_node_id` refusal of the 64-bit routes of a
    /// service without a node id.
    pub(crate) fn generator64(&self) -> Result<Arc<Generator>, ApiError> {
        self.generator().ok_or_else(|| ApiError {
            status: StatusCode::CONFLICT,
            kind: "no_node_id",
            parameter: None,
            message: NO_NODE_ID.into(),
        })
    }

    /// The ID families this service issues, as `/healthz` names them.
    pub fn families(&self) -> &'static str {
        match self.generator.read().unwrap_or_else(|e| e.into_inner()).is_some() {
            true => "64-bit and 128-bit IDs",
            false => "128-bit IDs only (no node id)",
        }
    }

    /// Why the service may not issue now (`None` when it may): shutting down, or a
    /// leased node id that is not provably held.
    pub fn not_ready(&self) -> Option<String> {
        match self.generator() {
            Some(g) => self.not_ready_with(&g),
            None if self.is_draining() => Some(SHUTTING_DOWN.into()),
            None => None,
        }
    }

    /// [`Service::not_ready`], of the generator `g` already in hand.
    pub(crate) fn not_ready_with(&self, g: &Generator) -> Option<String> {
        if self.is_draining() {
            return Some(SHUTTING_DOWN.into());
        }
        match g.lease_state() {
            None | Some(LeaseState::Held) => None,
            Some(state) => Some(format!("node-id lease {state}")),
        }
    }

    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Puts `new` in place of the generator (whose lease was lost) and returns the
    /// old one; gives `new` back when the service is draining.
    pub(crate) fn replace_generator(&self, new: Arc<Generator>) -> Result<Arc<Generator>, Arc<Generator>> {
        let mut g = self.generator.write().unwrap_or_else(|e| e.into_inner());
        let Some(held) = g.as_mut().filter(|_| !self.is_draining()) else {
            return Err(new);
        };
        let old = std::mem::replace(held, new);
        self.metrics.retire(&old);
        Ok(old)
    }

    /// Why the process counts as not live (`/healthz` 503): a leased service that
    /// has held no lease for longer than its liveness timeout ([`supervise`]).
    pub fn not_live(&self) -> Option<String> {
        self.lease.liveness_failure()
    }

    /// Loads the TLS and token files again now, changed or not (SIGHUP; they are
    /// also reloaded within 2 s of a change). Blocking file reads: call it off the
    /// async workers. Nothing before [`serve`] has loaded them.
    pub fn reload_files(&self) {
        let s = self.security.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(s) = s {
            s.reload_now();
            tracing::info!("SIGHUP: TLS and token files reloaded");
        }
    }

    /// Bytes of the request and response budgets in use now (read by the trim
    /// watch, which runs on glibc only).
    #[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
    pub(crate) fn memory_in_use(&self) -> usize {
        self.memory.requests.held() + self.memory.responses_in_use()
    }

    /// What `/metrics` reads of the service at scrape time.
    fn snapshot(&self) -> Snapshot {
        let g = self.generator();
        Snapshot {
            stats: g.as_ref().map(|g| g.stats()).unwrap_or_default(),
            lease_held: g
                .as_ref()
                .is_none_or(|g| matches!(g.lease_state(), None | Some(LeaseState::Held))),
            lease_renew_latency_us: g.as_ref().and_then(|g| g.lease_renew_latency_us()),
            lease_reacquired: self.lease.releases.load(Ordering::Relaxed),
            access_log_dropped: self.access.as_ref().map(|log| log.dropped.load(Ordering::Relaxed)),
            request_memory: self.memory.requests.held(),
            request_memory_refused: self.memory.requests.refused.load(Ordering::Relaxed),
            response_memory: self.memory.responses_in_use(),
        }
    }

    /// Marks the service as draining: `/readyz` turns 503 and no more IDs are issued.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// Stops issuing and gives the node id back (recording the last timestamp).
    pub fn shutdown(&self) {
        self.start_draining();
        // Under the write lock: a generator the supervisor leases concurrently is
        // either in place now (and released here) or sees the drain and releases
        // itself (lease.rs).
        let g = self.generator.write().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = &*g {
            g.release_lease();
        }
    }

    /// The next UUIDv7 unless the service is shutting down: a UUID needs no node id,
    /// so no lease decides whether it may issue. A wait for the clock (past the
    /// borrow window) awaits tokio's timer, never holding the worker.
    pub(crate) async fn issue_uuid7(&self) -> Result<u128, ApiError> {
        if self.is_draining() {
            return Err(ApiError::unavailable("not_ready", SHUTTING_DOWN.into()));
        }
        Ok(self.uuids.next_uuid7_async(&tokio_sleep).await?)
    }

    /// Fills `out` with fresh UUIDv7s, increasing, unless the service is shutting
    /// down (the batch form of [`issue_uuid7`](Self::issue_uuid7)).
    pub(crate) fn issue_uuid7s(&self, out: &mut [u128]) -> Result<(), ApiError> {
        if self.is_draining() {
            return Err(ApiError::unavailable("not_ready", SHUTTING_DOWN.into()));
        }
        Ok(self.uuids.fill_uuid7(out)?)
    }

    /// Issues when ready, from the generator whose readiness was checked (one
    /// read of the generator in use per request). For the blocking pool: the
    /// generator may wait for the clock here.
    pub(crate) fn issue(&self, out: &mut [u64]) -> Result<(), ApiError> {
        let g = self.ready_generator()?;
        self.issue_from(&g, out)
    }

    /// The generator in use, when it is ready to issue.
    fn ready_generator(&self) -> Result<Arc<Generator>, ApiError> {
        let g = self.generator64()?;
        match self.not_ready_with(&g) {
            Some(why) => Err(ApiError::unavailable("not_ready", why)),
            None => Ok(g),
        }
    }

    /// One ID when ready, if the generator has one without waiting for the clock;
    /// `Ok(None)` where it would wait (its tick used up, a clock behind its IDs):
    /// the caller then awaits [`issue_async`](Self::issue_async).
    pub(crate) fn try_issue_one(&self) -> Result<Option<u64>, ApiError> {
        let g = self.ready_generator()?;
        match g.try_next_id()? {
            Some(id) => {
                let mut one = [id];
                self.seal_and_count(&mut one)?;
                Ok(Some(one[0]))
            }
            None => Ok(None),
        }
    }

    /// `n` IDs when ready, increasing; a wait for the clock awaits tokio's timer
    /// instead of holding the worker, whose other tasks (probes, other requests)
    /// go on meanwhile.
    pub(crate) async fn issue_async(&self, n: usize) -> Result<Vec<u64>, ApiError> {
        let g = self.ready_generator()?;
        let mut ids = if n == 1 {
            vec![g.next_id_async(&tokio_sleep).await?]
        } else {
            g.next_ids_async(n, &tokio_sleep).await?
        };
        self.seal_and_count(&mut ids)?;
        Ok(ids)
    }

    /// Issues from `g`: the generator a multi-chunk response started with, so that
    /// one response never mixes two leases' IDs. Every issuing path (HTTP, gRPC,
    /// streamed chunks) comes through here, so with a sealer no plain ID leaves.
    pub(crate) fn issue_from(&self, g: &Generator, out: &mut [u64]) -> Result<(), ApiError> {
        g.fill(out).map_err(ApiError::from)?;
        self.seal_and_count(out)
    }

    /// Seals `out` in place when the service seals, and counts it as issued: every
    /// issuing path comes through here, so with a sealer no plain ID leaves.
    fn seal_and_count(&self, out: &mut [u64]) -> Result<(), ApiError> {
        if let Some(sealer) = &self.config.sealer {
            for id in out.iter_mut() {
                // The generator's IDs are within its layout, the sealer's width:
                // this cannot fail, and is reported rather than unwrapped.
                *id = sealer.seal(*id).map_err(ApiError::from)?;
            }
        }
        self.metrics.issued.inc_by(out.len() as u64);
        Ok(())
    }
}

impl crate::lease::Supervised for Service {
    fn generator(&self) -> Option<Arc<Generator>> {
        Service::generator(self)
    }
    fn is_draining(&self) -> bool {
        Service::is_draining(self)
    }
    fn lease(&self) -> &Watch {
        &self.lease
    }
    fn replace_generator(&self, new: Arc<Generator>) -> Result<Arc<Generator>, Arc<Generator>> {
        Service::replace_generator(self, new)
    }
}

/// Watches the service's lease until the service drains: logs each state change,
/// leases again after a loss (calling `rebuild` on the blocking pool, with
/// backoff), and keeps the liveness record (lease.rs). Returns at once for a
/// service without a lease.
pub async fn supervise<F>(svc: Arc<Service>, rebuild: F, opts: crate::Supervision)
where
    F: Fn() -> Result<Generator, Error> + Send + Sync + 'static,
{
    crate::lease::supervise(svc, rebuild, opts).await;
}
