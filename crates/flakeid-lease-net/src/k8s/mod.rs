//! `k8s://` — node-id leases as Kubernetes `coordination.k8s.io/v1` Lease objects.
//!
//! * `k8s://` alone: in a pod. The API server at `KUBERNETES_SERVICE_HOST` /
//!   `KUBERNETES_SERVICE_PORT`, the service account's mounted token, CA and
//!   namespace (`/var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}`).
//! * `k8s://HOST[:PORT]/NAMESPACE?token_file=PATH[&ca=PATH]`: a given API server
//!   (port 443 by default; no `ca`: the system's roots), for tests and use from
//!   outside a cluster. `k8s:///NAMESPACE` is the pod's API server with another
//!   namespace. `?namespace=` names the ID space, as on every store.
//!
//! One Lease per (ID space, node id), named `flakeid-<space>-<node>` (`<space>`: 12
//! hex digits of the SHA-256 of the ID space's name, which may hold characters a
//! Kubernetes name may not), labelled `flakeid/space=<space>` so one `list` finds
//! them all, annotated with the ID space's name (`flakeid/namespace`, checked: a
//! Lease of another space is never touched) and the fence (`flakeid/last-ms`).
//!
//! * **Acquire**: `list`, then for the lowest id with no Lease, `create` it; for
//!   the lowest whose Lease is released (no `holderIdentity`) or expired, `update`
//!   it with the `resourceVersion` read. Either fails with 409 Conflict when
//!   another acquirer won: the next candidate is tried.
//! * **Renew / release**: `update` with the `resourceVersion` of our last write:
//!   any other write in between is a 409. The Lease is then read again, and is
//!   still ours only if its `holderIdentity` is still our token (our own write
//!   whose answer was lost; a label someone added); otherwise, or when it was
//!   deleted (404), the lease is lost and the holder stops issuing, as with the
//!   other stores.
//! * **Expiry.** The API server keeps no timer: a Lease is expired when its
//!   `renewTime` (the holder's clock when it sent the renewal) plus
//!   `leaseDurationSeconds` (the TTL rounded up to seconds) is past the acquirer's
//!   clock — as Kubernetes's own leader election decides. The holder itself stops
//!   `M` before `renewTime + TTL` by its own clock (`docs/leases.md`). An acquirer
//!   whose clock is ahead of the holder's may take over early; that costs waiting,
//!   not duplicates: it starts after the fence the holder last wrote
//!   (`flakeid/last-ms`, which the holder's IDs never pass), read in the same
//!   `resourceVersion` as the take-over.
//! * **Incarnation marker** (the lock delay): the Lease object itself. A Lease
//!   just created may replace one that was deleted under a live holder, so its age
//!   is 0; an existing one is as old as its `creationTimestamp`, by the API
//!   server's clock (its `Date` header), less a second for the truncation of both.
//!   Deleting a Lease takes its fence and its marker together.
//! * The API server's clock (`Date`, whole seconds) is the store's clock that the
//!   acquirer checks its own against.
//!
//! 403 Forbidden is a refusal naming the Role and RoleBinding to apply
//! (`rbac.yaml` beside this file, also `examples/kubernetes/rbac.yaml` and
//! docs/leases.md), filled in with the namespace and the identity the API server
//! named.

mod api;
mod time;

use crate::block::Blocking;
use crate::url::{LeaseUrl, config};
use crate::{STARTING_RETRY, lease_error};
use api::{ApiError, Conn, Reply, Target};
use flakeid_core::lease::{Acquired, LeaseStore};
use flakeid_core::{Error, Result};
use http::{Method, StatusCode};
use serde_json::{Value, json};
use sha2::Digest;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The service account's files in a pod.
const SA_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

const LABEL_SPACE: &str = "flakeid/space";
const ANN_NAMESPACE: &str = "flakeid/namespace";
const ANN_LAST: &str = "flakeid/last-ms";

/// The Role and RoleBinding a pod's service account needs (the template; see
/// [`rbac_for`]).
pub const RBAC_YAML: &str = include_str!("rbac.yaml");

/// Kubernetes-Lease-backed node ids.
pub struct K8sStore {
    url: LeaseUrl,
    target: Target,
    /// The Kubernetes namespace the Leases live in.
    k8s_namespace: String,
    /// flakeid's ID space (`?namespace=`).
    namespace: String,
    space: String,
    rt: Blocking,
    conn: Option<Conn>,
    /// The Lease we hold, as the API server last returned it.
    held: Option<Value>,
}

impl std::fmt::Debug for K8sStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "K8sStore({})", self.describe())
    }
}

const PARAMS: [&str; 3] = ["namespace", "token_file", "ca"];

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// The Kubernetes name part for an ID space: 12 hex digits of its SHA-256.
fn space_of(namespace: &str) -> String {
    sha2::Sha256::digest(namespace.as_bytes())
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn k8s_name_ok(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn ann<'a>(lease: &'a Value, key: &str) -> Option<&'a str> {
    lease.pointer("/metadata/annotations")?.get(key)?.as_str()
}

fn spec_str<'a>(lease: &'a Value, key: &str) -> Option<&'a str> {
    lease.pointer("/spec")?.get(key)?.as_str()
}

/// `lease` without `metadata.managedFields`, which an update may leave out (the
/// API server keeps them): half of a renewal's bytes.
fn without_managed_fields(lease: &Value) -> Value {
    let mut slim = lease.clone();
    if let Some(meta) = slim.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    slim
}

/// The fence recorded in a Lease (0 if none).
fn last_ms(lease: &Value) -> u64 {
    ann(lease, ANN_LAST).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Whether nobody holds `lease` at `now_ms` by this host's clock: released (no
/// holder), or its `renewTime + leaseDurationSeconds` has passed. A held Lease
/// whose times cannot be read counts as held.
fn is_free(lease: &Value, now_ms: u64) -> bool {
    match spec_str(lease, "holderIdentity") {
        None | Some("") => return true,
        Some(_) => {}
    }
    let renewed = spec_str(lease, "renewTime")
        .or_else(|| spec_str(lease, "acquireTime"))
        .and_then(time::parse_ms);
    let duration_s = lease.pointer("/spec/leaseDurationSeconds").and_then(Value::as_u64);
    match (renewed, duration_s) {
        (Some(r), Some(d)) => r.saturating_add(d.saturating_mul(1000)) < now_ms,
        _ => false,
    }
}

/// Who the API server said was refused: `User "NAME" cannot ...` in its message.
fn refused_user(message: &str) -> Option<&str> {
    let rest = message.split_once("User \"")?.1;
    rest.split_once('"').map(|(u, _)| u)
}

/// The Role and RoleBinding of [`RBAC_YAML`] for `namespace` and the identity the
/// API server named (`system:serviceaccount:NS:NAME`, or a user's name).
pub fn rbac_for(namespace: &str, user: Option<&str>) -> String {
    // Without the template's opening comment, which says what to replace.
    let manifest: String = RBAC_YAML
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let yaml = manifest.replace("namespace: my-namespace", &format!("namespace: {namespace}"));
    let sa = user.and_then(|u| {
        let mut parts = u.strip_prefix("system:serviceaccount:")?.splitn(2, ':');
        Some((parts.next()?, parts.next()?))
    });
    let subject_here = format!("  - kind: ServiceAccount\n    name: my-service-account\n    namespace: {namespace}\n");
    match (sa, user) {
        (Some((ns, name)), _) => yaml.replace(
            &subject_here,
            &format!("  - kind: ServiceAccount\n    name: {name}\n    namespace: {ns}\n"),
        ),
        (None, Some(u)) => yaml.replace(
            &subject_here,
            &format!("  - kind: User\n    name: {u}\n    apiGroup: rbac.authorization.k8s.io\n"),
        ),
        (None, None) => yaml,
    }
}

impl K8sStore {
    pub(crate) fn check_url(u: &LeaseUrl) -> Result<()> {
        u.check_params(&PARAMS)?;
        u.namespace()?;
        let ns = u.path.trim_matches('/');
        if !ns.is_empty() && !k8s_name_ok(ns) {
            return Err(config(format!(
                "k8s lease URL {}: {ns:?} is not a Kubernetes namespace name (lower-case letters, digits and '-', up \
                 to 63)",
                u.redacted()
            )));
        }
        if !u.host.is_empty() && u.param("token_file").is_none() {
            return Err(config(format!(
                "k8s lease URL {} names an API server: give its token with token_file=PATH (k8s:// alone, in a pod, \
                 uses the service account's)",
                u.redacted()
            )));
        }
        if !u.host.is_empty() && ns.is_empty() {
            return Err(config(format!(
                "k8s lease URL {} names an API server: give the namespace as its path, k8s://HOST:PORT/NAMESPACE",
                u.redacted()
            )));
        }
        if u.user.is_some() || u.password.is_some() {
            return Err(config(format!(
                "k8s lease URL {}: the API server takes a token (token_file=), not user:password@",
                u.redacted()
            )));
        }
        Ok(())
    }

    /// Resolves the URL: in a pod (no host), from the service account's files and
    /// `KUBERNETES_SERVICE_HOST`/`_PORT`.
    pub(crate) fn from_url(u: &LeaseUrl) -> Result<K8sStore> {
        Self::check_url(u)?;
        let in_pod = u.host.is_empty();
        let (host, port) = if in_pod {
            let host = std::env::var("KUBERNETES_SERVICE_HOST")
                .ok()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| {
                    config(format!(
                        "k8s lease URL {} (no host) is for a process in a Kubernetes pod, and \
                         KUBERNETES_SERVICE_HOST is not set: outside a pod, name the API server: \
                         k8s://HOST:PORT/NAMESPACE?token_file=PATH&ca=PATH",
                        u.redacted()
                    ))
                })?;
            let port = match std::env::var("KUBERNETES_SERVICE_PORT") {
                Ok(p) if !p.is_empty() => p.parse::<u16>().map_err(|_| {
                    config(format!(
                        "KUBERNETES_SERVICE_PORT={p:?} is not a port (k8s lease URL {})",
                        u.redacted()
                    ))
                })?,
                _ => 443,
            };
            (host.trim_matches(['[', ']']).to_string(), port)
        } else {
            (u.host.clone(), u.port.unwrap_or(443))
        };
        let k8s_namespace = match u.path.trim_matches('/') {
            "" => {
                let file = format!("{SA_DIR}/namespace");
                let ns = std::fs::read_to_string(&file).map_err(|e| {
                    lease_error(format!(
                        "k8s lease URL {}: cannot read the pod's namespace from {file:?} ({e}): is a service account \
                         token mounted (automountServiceAccountToken)? Or name it: k8s:///NAMESPACE",
                        u.redacted()
                    ))
                })?;
                ns.trim().to_string()
            }
            ns => ns.to_string(),
        };
        let param = |k: &str| u.param(k).filter(|v| !v.is_empty()).map(str::to_string);
        let token_file = param("token_file").unwrap_or_else(|| format!("{SA_DIR}/token"));
        let ca = param("ca").or_else(|| in_pod.then(|| format!("{SA_DIR}/ca.crt")));
        let target = Target::new(host, port, ca, token_file)?;
        let namespace = u.namespace()?;
        Ok(K8sStore {
            url: u.clone(),
            target,
            k8s_namespace,
            space: space_of(&namespace),
            namespace,
            rt: Blocking::new()?,
            conn: None,
            held: None,
        })
    }

    /// A store for `url`.
    pub fn connect_url(url: &str) -> Result<K8sStore> {
        Self::from_url(&LeaseUrl::parse(url)?)
    }

    fn leases_path(&self) -> String {
        format!("/apis/coordination.k8s.io/v1/namespaces/{}/leases", self.k8s_namespace)
    }

    fn lease_name(&self, node: u64) -> String {
        format!("flakeid-{}-{node}", self.space)
    }

    fn shown(&self) -> String {
        format!(
            "k8s {}:{} namespace {:?}",
            self.target.host, self.target.port, self.k8s_namespace
        )
    }

    /// One request within `until`. An answer that says the server is not ready
    /// (429, 503: starting, or shedding load) is asked again every
    /// [`STARTING_RETRY`]; 401 and 403 are errors that say what to do; any other
    /// answer is returned. A failure below HTTP drops the connection.
    fn call(&mut self, what: &str, method: Method, path: &str, body: Option<&Value>, until: Instant) -> Result<Reply> {
        loop {
            if self.conn.is_none() {
                let target = self.target.clone();
                match self.rt.within(until, async move { api::connect(&target).await }) {
                    Some(Ok(c)) => self.conn = Some(c),
                    Some(Err(e)) => return Err(self.fail(what, &e)),
                    None => return Err(self.timed_out(what)),
                }
            }
            let Some(mut conn) = self.conn.clone() else {
                return Err(lease_error("k8s: no connection"));
            };
            let target = self.target.clone();
            let (m, p, b) = (method.clone(), path.to_string(), body.cloned());
            let reply = match self.rt.within(until, async move {
                api::request(&mut conn, &target, m, &p, b.as_ref()).await
            }) {
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    self.conn = None;
                    return Err(self.fail(what, &e));
                }
                None => {
                    self.conn = None;
                    return Err(self.timed_out(what));
                }
            };
            match reply.status {
                StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
                    if Instant::now() + STARTING_RETRY < until =>
                {
                    std::thread::sleep(STARTING_RETRY);
                }
                StatusCode::UNAUTHORIZED => {
                    return Err(lease_error(format!(
                        "{} ({what}): {}: the API server did not accept the token in {:?} (expired, revoked, or \
                         not a token of this cluster)",
                        self.shown(),
                        reply.message(),
                        self.target.token_file
                    )));
                }
                StatusCode::FORBIDDEN => return Err(self.forbidden(what, &reply)),
                _ => return Ok(reply),
            }
        }
    }

    fn forbidden(&self, what: &str, reply: &Reply) -> Error {
        let message = reply.message();
        let user = refused_user(&message);
        lease_error(format!(
            "{} ({what}): {message}. flakeid's k8s:// leases need get, list, create, update, patch and delete on \
             leases (coordination.k8s.io) in namespace {:?}: apply this Role and RoleBinding (examples/kubernetes/\
             rbac.yaml, docs/leases.md):\n{}",
            self.shown(),
            self.k8s_namespace,
            rbac_for(&self.k8s_namespace, user)
        ))
    }

    fn timed_out(&self, what: &str) -> Error {
        lease_error(format!("{} ({what}): timed out", self.shown()))
    }

    fn fail(&self, what: &str, e: &ApiError) -> Error {
        let why = crate::tls::tls_cause(e).unwrap_or_else(|| e.to_string());
        lease_error(format!("{} ({what}): {why}", self.shown()))
    }

    fn unexpected(&self, what: &str, reply: &Reply) -> Error {
        lease_error(format!("{} ({what}): {}", self.shown(), reply.message()))
    }

    /// A new Lease for `node` held by `holder`.
    fn new_lease(&self, node: u64, holder: &str, ttl_ms: u64) -> Value {
        let now = time::micro_time(now_us());
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.lease_name(node),
                "labels": { LABEL_SPACE: self.space, "app.kubernetes.io/managed-by": "flakeid" },
                "annotations": { ANN_NAMESPACE: self.namespace },
            },
            "spec": {
                "holderIdentity": holder,
                "leaseDurationSeconds": ttl_ms.div_ceil(1000),
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": 0,
            },
        })
    }

    fn put_path(&self, lease: &Value) -> String {
        let name = lease.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
        format!("{}/{name}", self.leases_path())
    }

    /// Updates `lease` (which carries the `resourceVersion` it was read at) to
    /// `changed`: `Ok(Some(new))`, or `Ok(None)` when it changed since (409) or is
    /// gone (404).
    fn update(&mut self, what: &str, changed: &Value, until: Instant) -> Result<Option<Value>> {
        let path = self.put_path(changed);
        let reply = self.call(what, Method::PUT, &path, Some(&without_managed_fields(changed)), until)?;
        match reply.status {
            StatusCode::OK => Ok(Some(reply.body)),
            StatusCode::CONFLICT | StatusCode::NOT_FOUND => Ok(None),
            _ => Err(self.unexpected(what, &reply)),
        }
    }

    /// The Lease we hold, read again: `None` if it is gone or names another holder.
    fn reread_ours(&mut self, what: &str, name: &str, holder: &str, until: Instant) -> Result<Option<Value>> {
        let path = format!("{}/{name}", self.leases_path());
        let reply = self.call(what, Method::GET, &path, None, until)?;
        match reply.status {
            StatusCode::OK if spec_str(&reply.body, "holderIdentity") == Some(holder) => Ok(Some(reply.body)),
            StatusCode::OK | StatusCode::NOT_FOUND => Ok(None),
            _ => Err(self.unexpected(what, &reply)),
        }
    }

    /// Applies `edit` to our Lease and writes it with its `resourceVersion`:
    /// `Ok(false)` when it is no longer ours (see the module docs). A 409 on a Lease
    /// that still names us (our earlier write whose answer was lost, a label
    /// added) is applied again to the new version.
    fn write_ours(
        &mut self,
        what: &str,
        node: u64,
        holder: &str,
        until: Instant,
        edit: &dyn Fn(&mut Value),
    ) -> Result<bool> {
        let name = self.lease_name(node);
        let mut current = match self.held.take() {
            Some(l) if l.pointer("/metadata/name").and_then(Value::as_str) == Some(name.as_str()) => l,
            _ => match self.reread_ours(what, &name, holder, until)? {
                Some(l) => l,
                None => return Ok(false),
            },
        };
        loop {
            if spec_str(&current, "holderIdentity") != Some(holder) {
                return Ok(false);
            }
            let mut changed = current.clone();
            edit(&mut changed);
            if let Some(now) = self.update(what, &changed, until)? {
                self.held = Some(now);
                return Ok(true);
            }
            match self.reread_ours(what, &name, holder, until)? {
                Some(l) => current = l,
                None => return Ok(false),
            }
        }
    }
}

impl LeaseStore for K8sStore {
    fn describe(&self) -> String {
        format!("{} namespace {:?}", self.url.redacted(), self.namespace)
    }

    fn namespace(&self) -> &str {
        &self.namespace
    }

    fn acquire(&mut self, max_node: u64, holder: &str, ttl_ms: u64, until: Instant) -> Result<Option<Acquired>> {
        let list = format!(
            "{}?labelSelector={}",
            self.leases_path(),
            percent_encoding::utf8_percent_encode(
                &format!("{LABEL_SPACE}={}", self.space),
                percent_encoding::NON_ALPHANUMERIC
            )
        );
        let duration_s = ttl_ms.div_ceil(1000);
        'scan: loop {
            let reply = self.call("acquire", Method::GET, &list, None, until)?;
            if reply.status != StatusCode::OK {
                return Err(self.unexpected("acquire", &reply));
            }
            let mut existing = std::collections::HashMap::new();
            for item in reply.body.get("items").and_then(Value::as_array).into_iter().flatten() {
                let name = item.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("");
                let Some(node) = name
                    .strip_prefix(&format!("flakeid-{}-", self.space))
                    .and_then(|n| n.parse::<u64>().ok())
                else {
                    continue;
                };
                existing.insert(node, item.clone());
            }
            for node in 0..=max_node {
                let reply = match existing.get(&node) {
                    None => {
                        let lease = self.new_lease(node, holder, ttl_ms);
                        let path = self.leases_path();
                        self.call("acquire", Method::POST, &path, Some(&lease), until)?
                    }
                    Some(lease) => {
                        // Another ID space's Lease under this name (a hash collision)
                        // is never taken.
                        if ann(lease, ANN_NAMESPACE) != Some(self.namespace.as_str()) || !is_free(lease, now_ms()) {
                            continue;
                        }
                        let mut taken = lease.clone();
                        let transitions = lease.pointer("/spec/leaseTransitions").and_then(Value::as_u64);
                        let now = time::micro_time(now_us());
                        taken["spec"]["holderIdentity"] = json!(holder);
                        taken["spec"]["leaseDurationSeconds"] = json!(duration_s);
                        taken["spec"]["acquireTime"] = json!(now);
                        taken["spec"]["renewTime"] = json!(now);
                        taken["spec"]["leaseTransitions"] = json!(transitions.unwrap_or(0) + 1);
                        let path = self.put_path(&taken);
                        self.call(
                            "acquire",
                            Method::PUT,
                            &path,
                            Some(&without_managed_fields(&taken)),
                            until,
                        )?
                    }
                };
                match reply.status {
                    StatusCode::OK | StatusCode::CREATED => {
                        let created = reply.status == StatusCode::CREATED;
                        let lease = reply.body;
                        let age_ms = match (created, reply.date_ms) {
                            (true, _) | (false, None) => 0,
                            (false, Some(date)) => lease
                                .pointer("/metadata/creationTimestamp")
                                .and_then(Value::as_str)
                                .and_then(time::parse_ms)
                                .map_or(0, |c| date.saturating_sub(c).saturating_sub(1000)),
                        };
                        let got = Acquired::new(node, last_ms(&lease), age_ms);
                        self.held = Some(lease);
                        return Ok(Some(match reply.date_ms {
                            Some(d) => got.with_store_now_ms(d),
                            None => got,
                        }));
                    }
                    // Another acquirer won this id: try the next one.
                    StatusCode::CONFLICT => {}
                    // Deleted between the list and the update: look again.
                    StatusCode::NOT_FOUND if existing.contains_key(&node) => continue 'scan,
                    _ => return Err(self.unexpected("acquire", &reply)),
                }
                if Instant::now() >= until {
                    return Err(self.timed_out("acquire"));
                }
            }
            return Ok(None);
        }
    }

    fn renew(&mut self, node: u64, holder: &str, ttl_ms: u64, fence_ms: u64, until: Instant) -> Result<bool> {
        let duration_s = ttl_ms.div_ceil(1000);
        self.write_ours("renew", node, holder, until, &|lease| {
            let fence = last_ms(lease).max(fence_ms);
            lease["spec"]["renewTime"] = json!(time::micro_time(now_us()));
            lease["spec"]["leaseDurationSeconds"] = json!(duration_s);
            lease["metadata"]["annotations"][ANN_LAST] = json!(fence.to_string());
        })
    }

    fn release(&mut self, node: u64, holder: &str, last: u64, until: Instant) -> Result<()> {
        self.write_ours("release", node, holder, until, &|lease| {
            if let Some(spec) = lease.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("holderIdentity");
            }
            lease["metadata"]["annotations"][ANN_LAST] = json!(last.to_string());
        })?;
        self.held = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let ok = |u: &str| K8sStore::check_url(&LeaseUrl::parse(u).unwrap());
        assert!(ok("k8s://").is_ok());
        assert!(ok("k8s://?namespace=Orders_1").is_ok());
        assert!(ok("k8s:///team-a").is_ok());
        assert!(ok("k8s://10.0.0.1:6443/team-a?token_file=/t&ca=/ca.pem").is_ok());
        for (bad, says) in [
            ("k8s://10.0.0.1:6443/team-a", "token_file"),
            ("k8s://10.0.0.1:6443/?token_file=/t", "namespace as its path"),
            ("k8s:///Team_A", "not a Kubernetes namespace"),
            ("k8s://u:pw@10.0.0.1/a?token_file=/t", "not user:password"),
            ("k8s://?tokenfile=/t", "unknown parameter"),
        ] {
            let e = ok(bad).unwrap_err();
            assert!(matches!(e, Error::Config { field: "lease", .. }), "{e}");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn names_fit_kubernetes() {
        let s = space_of("Orders_1.x");
        assert_eq!(s.len(), 12);
        assert_ne!(s, space_of("orders_1.x"));
        assert!(k8s_name_ok(&format!("flakeid-{s}-1023")));
    }

    #[test]
    fn expiry_by_renew_time_and_duration() {
        let lease = |holder: Option<&str>, renew: &str| json!({"spec": {"holderIdentity": holder, "renewTime": renew, "leaseDurationSeconds": 2}});
        let t = time::parse_ms("2026-11-29T07:39:29.500000Z").unwrap();
        let held = lease(Some("a"), "2026-11-29T07:39:29.500000Z");
        assert!(!is_free(&held, t + 2000));
        assert!(is_free(&held, t + 2001));
        assert!(is_free(&lease(None, "2026-11-29T07:39:29.500000Z"), t));
        assert!(is_free(&lease(Some(""), "2026-11-29T07:39:29.500000Z"), t));
        // Unreadable times: held (never taken on a guess).
        assert!(!is_free(&lease(Some("a"), "yesterday"), u64::MAX));
    }

    #[test]
    fn forbidden_names_the_role_and_binding_for_the_identity() {
        let m = "leases.coordination.k8s.io is forbidden: User \"system:serviceaccount:shop:orders\" cannot list \
                 resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"shop\"";
        let y = rbac_for("shop", refused_user(m));
        assert!(
            y.contains("kind: Role\nmetadata:\n  name: flakeid-leases\n  namespace: shop\n"),
            "{y}"
        );
        assert!(
            y.contains("  - kind: ServiceAccount\n    name: orders\n    namespace: shop\n"),
            "{y}"
        );
        assert!(y.contains("verbs: [\"get\", \"list\", \"create\", \"update\", \"patch\", \"delete\"]"));
        assert!(!y.contains("my-"), "{y}");
        let y = rbac_for("shop", Some("jane"));
        assert!(
            y.contains("  - kind: User\n    name: jane\n    apiGroup: rbac.authorization.k8s.io\n"),
            "{y}"
        );
        let y = rbac_for("shop", None);
        assert!(y.contains("name: my-service-account\n    namespace: shop\n"), "{y}");
    }

    /// One text: the crate's manifest is examples/kubernetes/rbac.yaml and the one
    /// docs/leases.md shows.
    #[test]
    fn the_manifest_is_the_example_and_the_docs() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let Ok(example) = std::fs::read_to_string(format!("{root}/examples/kubernetes/rbac.yaml")) else {
            return; // a packaged crate: no repository around it
        };
        assert_eq!(
            example, RBAC_YAML,
            "examples/kubernetes/rbac.yaml differs from src/k8s/rbac.yaml"
        );
        let docs = std::fs::read_to_string(format!("{root}/docs/leases.md")).unwrap_or_default();
        assert!(
            docs.contains(&format!("```yaml\n{RBAC_YAML}```")),
            "docs/leases.md must show src/k8s/rbac.yaml verbatim"
        );
    }
}
