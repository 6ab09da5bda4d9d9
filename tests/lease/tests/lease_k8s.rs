//! Kubernetes Lease leases (`k8s://`) against a real kube-apiserver on 127.0.0.1,
//! started by tests/env/testenv.py (`run --kube`, make test-lease) on an etcd of its
//! own: FLAKEID_TEST_KUBE_URL (service account flakeid-pod, bound by
//! examples/kubernetes/rbac.yaml), FLAKEID_TEST_KUBE_DENIED_TOKEN_FILE (flakeid-denied,
//! bound to nothing), the admin's token for changes under a holder (`testenv.py
//! kube-api`), and FLAKEID_TEST_KUBE_PID / _DIR to stop and restart the API server.
//! One API server: every test takes `serial()`, so none runs while another stops it.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Leases last whole seconds (leaseDurationSeconds). 3 s, not etcd's 2: each
/// renewal goes through the API server to its etcd, and 16 holders building at
/// once beside the other groups of make test-lease on 2 cores missed 667 ms
/// renewal deadlines ("(renew): timed out" at build).
const TTL_MS: u64 = 3000;

fn url() -> Option<String> {
    store_url("FLAKEID_TEST_KUBE_URL")
}

fn env(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var}"))
}

fn pid() -> i32 {
    env("FLAKEID_TEST_KUBE_PID").parse().unwrap()
}

const TESTENV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../env/testenv.py");

/// One request as the API server's admin: `(status, JSON body)`.
fn kube_api(method: &str, path: &str, body: Option<&str>) -> (u16, serde_json::Value) {
    let mut cmd = Command::new("python3");
    cmd.args([TESTENV, "kube-api", method, path]);
    if let Some(b) = body {
        cmd.arg(b);
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let (status, json) = text
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("testenv.py kube-api: {text}{}", String::from_utf8_lossy(&out.stderr)));
    (status.parse().unwrap(), serde_json::from_str(json).unwrap())
}

fn leases_path() -> String {
    format!(
        "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
        env("FLAKEID_TEST_KUBE_NAMESPACE")
    )
}

/// The Lease of ID space `ns`'s `node`, as the admin reads it.
fn lease_of(ns: &str, node: u64) -> serde_json::Value {
    let (status, list) = kube_api("GET", &leases_path(), None);
    assert_eq!(status, 200, "{list}");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["metadata"]["annotations"]["flakeid/namespace"] == ns
                && l["metadata"]["name"].as_str().unwrap().ends_with(&format!("-{node}"))
        })
        .cloned()
        .unwrap_or_else(|| panic!("no Lease for {ns} node {node} in {list}"))
}

/// The API server answers /readyz (it serves before its caches, RBAC's among them,
/// are filled: a request then may be refused).
fn ready() -> bool {
    kube_api("GET", "/readyz", None).0 == 200
}

/// kill -9 the API server (and wait until it has exited), and a function that
/// starts it again on its etcd and waits until it is ready, handing its new pid on
/// (FLAKEID_TEST_KUBE_PID).
fn restarter() -> (impl Fn(), impl Fn()) {
    let cmdline: Vec<String> = std::fs::read(format!("/proc/{}/cmdline", pid()))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let stop = || kill9_and_wait(pid());
    let start = move || {
        let log = format!("{}/log.restarted", env("FLAKEID_TEST_KUBE_DIR"));
        let mut c = Command::new(&cmdline[0])
            .args(&cmdline[1..])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        // SAFETY: setenv in a test process; tests that read it take `serial()` first.
        unsafe { std::env::set_var("FLAKEID_TEST_KUBE_PID", c.id().to_string()) };
        wait_restarted(&mut c, &log, "the restarted kube-apiserver", &ready);
        std::mem::forget(c); // stays up for the tests after this one
    };
    (stop, start)
}

scenarios! { |u|
    k8s_16_concurrent_holders_get_distinct_ids: url(), serial => concurrent_distinct(&u, 16, TTL_MS);
    k8s_16_ids_for_32_holders_is_a_lease_error: url(), serial => exhaustion(&u, TTL_MS);
    k8s_frozen_api_server_stops_then_resumes_ids: url(), serial => frozen_store(&u, TTL_MS, &|on| freeze_process(pid(), on));
    k8s_taken_over_holder_never_issues_again: url(), serial => taken_over(&u, TTL_MS);
    k8s_frozen_api_server_at_build_is_a_lease_error_in_bounded_time: url(), serial => frozen_at_build(&u, TTL_MS, &|on| freeze_process(pid(), on));
    k8s_clock_behind_the_api_server_is_refused_at_build: url(), serial => clock_behind_the_store(&u, TTL_MS, 8000);
}

/// `kill -9` a holder: its id is not handed out before its TTL can have passed, and
/// is after. A Lease pays the lock delay at its first use (a new Lease may replace
/// one deleted under a live holder), so the probes' ids, 0 and 1, are made first and
/// left to age past it.
#[test]
fn k8s_killed_holder_id_waits_for_the_ttl() {
    let Some(u) = url() else { return };
    let _s = serial();
    let u = with_ns(&u, &fresh_ns("kill"));
    loop {
        let (a, b) = (probe(&u, TTL_MS, 10).unwrap(), probe(&u, TTL_MS, 10).unwrap());
        let quiet = a.lease_lock_delay_ms() == Some(0) && b.lease_lock_delay_ms() == Some(0);
        drop((a, b));
        if quiet {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    killed_holder_in(&u, TTL_MS, false);
}

/// Acquire, renew, release: the Lease names the holder (host and pid), is renewed
/// (renewTime moves, the fence annotation grows), and on release has no holder and
/// the exact last timestamp, which the next holder starts above.
#[test]
fn k8s_acquire_renew_release_and_the_floor_carried_to_the_next_holder() {
    let Some(u) = url() else { return };
    let _s = serial();
    let ns = fresh_ns("life");
    let u = with_ns(&u, &ns);
    let mut a = Holder::spawn(&u, TTL_MS, 10, 10);
    let node = a.acquired().unwrap();
    assert_eq!(node, 0);
    a.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
    let first = lease_of(&ns, node);
    let holder = first["spec"]["holderIdentity"].as_str().unwrap().to_string();
    assert!(
        holder.contains(&format!("/{}/", a.pid())),
        "holderIdentity names host and pid: {holder}"
    );
    assert_eq!(first["spec"]["leaseDurationSeconds"], 3);
    std::thread::sleep(Duration::from_millis(TTL_MS));
    let later = lease_of(&ns, node);
    assert_ne!(first["spec"]["renewTime"], later["spec"]["renewTime"], "renewed");
    let fence = |l: &serde_json::Value| -> u64 {
        l["metadata"]["annotations"]["flakeid/last-ms"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(fence(&later) > fence(&first), "the fence grows with each renewal");
    let seen = a.release();
    let last_id = seen.iter().filter_map(|l| ok_line(l)).map(|(id, _)| id).max().unwrap();
    let released = lease_of(&ns, node);
    assert!(released["spec"].get("holderIdentity").is_none(), "{released}");
    let last_ms = fence(&released);
    assert_eq!(
        last_ms,
        layout(10).decompose(last_id).timestamp_ms,
        "release records the exact last timestamp"
    );
    // The next holder takes the released Lease (no lock delay: it is older than
    // one) and starts above the floor.
    let b = probe(&u, TTL_MS, 10).unwrap();
    assert_eq!(b.node(), node);
    assert!(b.next_id().unwrap() > last_id);
    assert_eq!(lease_of(&ns, node)["spec"]["leaseTransitions"], 1);
}

/// The Lease deleted or taken over (updated by someone else) under a holder: its
/// next renewal finds it so and the holder stops for good, and a holder on the
/// re-created Lease (which waits out the lock delay: its marker is new) shares no
/// ID with it.
#[test]
fn k8s_lease_deleted_or_updated_under_a_holder_stops_it() {
    let Some(u) = url() else { return };
    let _s = serial();
    for how in ["delete", "update"] {
        let ns = fresh_ns(how);
        let u = with_ns(&u, &ns);
        let mut a = Holder::spawn(&u, TTL_MS, 10, 1);
        let node = a.acquired().unwrap();
        a.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
        let lease = lease_of(&ns, node);
        let name = lease["metadata"]["name"].as_str().unwrap().to_string();
        let path = format!("{}/{name}", leases_path());
        let changed = mono_ms();
        if how == "delete" {
            assert_eq!(kube_api("DELETE", &path, None).0, 200);
        } else {
            // The holder renews it meanwhile (409 Conflict then): read it again.
            let mut tries = 0;
            loop {
                let (_, mut other) = kube_api("GET", &path, None);
                other["spec"]["holderIdentity"] = "someone-else".into();
                let (status, body) = kube_api("PUT", &path, Some(&other.to_string()));
                tries += 1;
                if status == 200 {
                    break;
                }
                assert!(status == 409 && tries < 10, "{status} {body}");
            }
        }
        // A renewal comes every TTL/3: within one, the holder knows.
        let stopped = a
            .wait_for(Duration::from_millis(2 * TTL_MS), |l| l.contains("taken over"))
            .unwrap_or_else(|| panic!("{how}: the holder never said it lost its lease: {:?}", a.seen.last()));
        let stopped_at = refused_line(&stopped).unwrap();
        let after = a.lines_until(mono_ms() + 500);
        assert!(
            after.iter().all(|l| ok_line(l).is_none()),
            "{how}: IDs after the loss: {after:?}"
        );
        eprintln!(
            "{how}: the holder stopped {} ms after the Lease changed",
            stopped_at - changed
        );
        let theirs: std::collections::HashSet<u64> =
            a.seen.iter().filter_map(|l| ok_line(l)).map(|(id, _)| id).collect();
        if how == "delete" {
            let b = probe(&u, TTL_MS, 10).unwrap();
            assert_eq!(b.node(), node, "the deleted Lease's id is free");
            assert!(
                b.lease_lock_delay_ms().unwrap() >= TTL_MS,
                "a re-created Lease waits out the lock delay"
            );
            let mine = b.next_ids(1000).unwrap();
            assert!(mine.iter().all(|id| !theirs.contains(id)), "a repeated ID");
        }
        drop(a);
    }
}

/// A service account without the Role: build() is refused with the Role and
/// RoleBinding to apply, naming this namespace and this service account.
#[test]
fn k8s_rbac_denied_names_the_role_and_binding() {
    let Some(u) = url() else { return };
    let _s = serial();
    let denied = u.replace(
        &env("FLAKEID_TEST_KUBE_TOKEN_FILE"),
        &env("FLAKEID_TEST_KUBE_DENIED_TOKEN_FILE"),
    );
    assert_ne!(denied, u);
    let e = lease_error_of(&with_ns(&denied, &fresh_ns("denied")), TTL_MS);
    let ns = env("FLAKEID_TEST_KUBE_NAMESPACE");
    for want in [
        "403 Forbidden".to_string(),
        "kind: Role\n".into(),
        "kind: RoleBinding\n".into(),
        format!("  name: flakeid-leases\n  namespace: {ns}\n"),
        "resources: [\"leases\"]".into(),
        "verbs: [\"get\", \"list\", \"create\", \"update\", \"patch\", \"delete\"]".into(),
        format!("  - kind: ServiceAccount\n    name: flakeid-denied\n    namespace: {ns}\n"),
    ] {
        assert!(e.contains(&want), "{want:?} missing from: {e}");
    }
    // A token the API server does not know: 401, naming the token file.
    let dir = std::env::temp_dir().join(fresh_ns("badtoken"));
    std::fs::write(&dir, "not-a-token").unwrap();
    let bad = u.replace(&env("FLAKEID_TEST_KUBE_TOKEN_FILE"), dir.to_str().unwrap());
    let e = lease_error_of(&bad, TTL_MS);
    assert!(
        e.contains("401") && e.contains(dir.to_str().unwrap()) && !e.contains("not-a-token"),
        "{e}"
    );
    let _ = std::fs::remove_file(&dir);
    // The wrong CA and a name the certificate does not carry.
    wrong_ca_and_wrong_host_say_so(&u, "127.0.0.1", TTL_MS);
}

/// `k8s:///NAMESPACE` reads the API server from KUBERNETES_SERVICE_HOST and
/// _PORT, as in a pod (the token and CA given: this host has no mounted service
/// account); `k8s://` alone outside a pod says what to give instead.
#[test]
fn k8s_in_cluster_address_from_the_environment() {
    let Some(u) = url() else { return };
    let _s = serial();
    let (host_port, rest) = u.strip_prefix("k8s://").unwrap().split_once('/').unwrap();
    let (host, port) = host_port.split_once(':').unwrap();
    let in_pod = format!("k8s:///{}", rest);
    let out = Command::new(HOLDER)
        .args(["--url", &with_ns(&in_pod, &fresh_ns("inpod")), "--ttl-ms", "3000"])
        .env("KUBERNETES_SERVICE_HOST", host)
        .env("KUBERNETES_SERVICE_PORT", port)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("ACQUIRED 0 "), "{text}");
    let out = Command::new(HOLDER)
        .args(["--url", "k8s://"])
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("ERROR config ") && text.contains("KUBERNETES_SERVICE_HOST is not set"),
        "{text}"
    );
}

/// The API server killed and started again (on its etcd) while a holder issues:
/// the holder refuses IDs while it cannot renew, and resumes under the same id
/// once the API server is back (nobody took the Lease), its IDs increasing.
#[test]
fn k8s_api_server_restarted_mid_hold() {
    let Some(u) = url() else { return };
    let _s = serial();
    let (stop, start) = restarter();
    let u = with_ns(&u, &fresh_ns("midhold"));
    let mut h = Holder::spawn(&u, 10_000, 10, 5);
    let node = h.acquired().unwrap();
    h.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
    stop();
    let t0 = mono_ms();
    start();
    eprintln!("kube-apiserver restarted in {} ms", mono_ms() - t0);
    let resumed = h
        .wait_for(Duration::from_secs(30), |l| {
            ok_line(l).is_some_and(|(_, t)| t > t0) && mono_ms() > t0
        })
        .expect("IDs after the restart");
    assert!(ok_line(&resumed).is_some());
    let after = h.lines_until(mono_ms() + 3000);
    assert!(
        after.iter().any(|l| ok_line(l).is_some()),
        "the holder keeps issuing: {:?}",
        after.last()
    );
    let seen = h.release();
    let ids: Vec<u64> = seen.iter().filter_map(|l| ok_line(l)).map(|(id, _)| id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs increase");
    assert!(ids.iter().all(|id| layout(10).decompose(*id).node == node));
}

/// The API server down for longer than the lease: the holder stops issuing before
/// the TTL has passed (0 IDs after), and once it is back a new generator leases
/// and repeats none of the holder's IDs.
#[test]
fn k8s_api_server_stopped_longer_than_the_lease() {
    let Some(u) = url() else { return };
    let _s = serial();
    let (stop, start) = restarter();
    store_restart(&u, TTL_MS, &stop, &start);
}
