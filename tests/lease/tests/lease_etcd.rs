//! etcd leases against real etcd servers on 127.0.0.1, started by
//! tests/env/testenv.py (make test-lease): FLAKEID_TEST_ETCD_URL (plain, authentication on) and
//! FLAKEID_TEST_ETCDS_URL (TLS with a client certificate; FLAKEID_TEST_ETCDS_PID
//! and _DIR let a test restart it on its data).
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;
use std::process::{Command, Stdio};

/// etcd grants whole seconds.
const TTL_MS: u64 = 2000;

fn url() -> Option<String> {
    store_url("FLAKEID_TEST_ETCD_URL")
}

fn tls_url() -> Option<String> {
    store_url("FLAKEID_TEST_ETCDS_URL")
}

fn pid(var: &str) -> i32 {
    std::env::var(var).unwrap_or_else(|_| panic!("{var}")).parse().unwrap()
}

scenarios! { |u|
    etcd_32_concurrent_holders_get_distinct_ids: url(), serial => concurrent_distinct(&u, 32, TTL_MS);
    etcd_16_ids_for_32_holders_is_a_lease_error: url(), serial => exhaustion(&u, TTL_MS);
    etcd_killed_holder_id_waits_for_the_ttl: url(), serial => killed_holder(&u, TTL_MS, false);
    etcd_frozen_store_stops_then_resumes_ids: url(), serial => frozen_store(&u, TTL_MS, &|on| freeze_process(pid("FLAKEID_TEST_ETCD_PID"), on));
    etcd_taken_over_holder_never_issues_again: url(), serial => taken_over(&u, TTL_MS);
    etcds_32_concurrent_holders_get_distinct_ids: tls_url(), serial => concurrent_distinct(&u, 32, TTL_MS);
    etcds_16_ids_for_32_holders_is_a_lease_error: tls_url(), serial => exhaustion(&u, TTL_MS);
    etcds_killed_holder_id_waits_for_the_ttl: tls_url(), serial => killed_holder(&u, TTL_MS, false);
    // Read at the time of each signal: the restart test hands on a new pid.
    etcds_frozen_store_stops_then_resumes_ids: tls_url(), serial => frozen_store(&u, TTL_MS, &|on| freeze_process(pid("FLAKEID_TEST_ETCDS_PID"), on));
    etcds_taken_over_holder_never_issues_again: tls_url(), serial => taken_over(&u, TTL_MS);
    etcd_frozen_store_at_build_is_a_lease_error_in_bounded_time: url(), serial => frozen_at_build(&u, TTL_MS, &|on| freeze_process(pid("FLAKEID_TEST_ETCD_PID"), on));
}

/// kill -9 the TLS etcd and start it again on its data directory (same ports).
#[test]
fn etcds_restarted_store_stops_ids_then_leases_again() {
    let Some(u) = tls_url() else { return };
    let _s = serial();
    let dir = std::env::var("FLAKEID_TEST_ETCDS_DIR").unwrap();
    let cmdline: Vec<String> = std::fs::read(format!("/proc/{}/cmdline", pid("FLAKEID_TEST_ETCDS_PID")))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let child = std::sync::Mutex::new(None::<std::process::Child>);
    let stop = || kill9_and_wait(pid("FLAKEID_TEST_ETCDS_PID"));
    let start = || {
        let c = Command::new(&cmdline[0])
            .args(&cmdline[1..])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(format!("{dir}/log.restarted")).unwrap())
            .spawn()
            .unwrap();
        *child.lock().unwrap() = Some(c);
        let port: u16 = u.split(':').nth(2).unwrap().split('/').next().unwrap().parse().unwrap();
        wait_for_port(port, "the restarted etcd");
    };
    store_restart(&u, TTL_MS, &stop, &start);
    // The restarted server stays up for the tests after this one: hand its pid on.
    let c = child.lock().unwrap().take().unwrap();
    // SAFETY: setenv in a test process; tests that read it take `serial()` first.
    unsafe { std::env::set_var("FLAKEID_TEST_ETCDS_PID", c.id().to_string()) };
    std::mem::forget(c);
}

#[test]
fn etcd_namespaces_endpoints_and_bad_urls() {
    let Some(u) = url() else { return };
    let _s = serial();
    namespaces_are_independent(&u, TTL_MS);
    // A dead endpoint listed first: the client uses the live one.
    let dead = free_port();
    let live = u.split('@').nth(1).unwrap().trim_end_matches('/');
    let failover = format!("etcd://root:etcd-pw@127.0.0.1:{dead},{live}/");
    let g = probe(&with_ns(&failover, &fresh_ns("failover")), TTL_MS, 10).unwrap();
    assert!(g.next_id().is_ok());
    let e = lease_error_of(&format!("etcd://root:etcd-pw@127.0.0.1:{dead}/"), TTL_MS);
    assert!(e.contains("etcd") && !e.contains("etcd-pw"), "{e}");
    let e = probe(&format!("{u}?namespace=no/slash"), TTL_MS, 10).unwrap_err();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Config, "{e}");
    let e = probe(&format!("{u}?ca=/x.pem"), TTL_MS, 10).unwrap_err();
    assert!(e.to_string().contains("etcds://"), "{e}");
}

#[test]
fn etcd_wrong_password_wrong_ca_wrong_host_each_say_so() {
    let (Some(u), Some(t)) = (url(), tls_url()) else { return };
    let e = lease_error_of(&u.replace("etcd-pw", "not-the-pw"), TTL_MS);
    assert!(e.contains("wrong user or password") && !e.contains("not-the-pw"), "{e}");
    wrong_ca_and_wrong_host_say_so(&t, "127.0.0.1", TTL_MS);
}

#[test]
fn etcd_namespace_in_use_pays_no_lock_delay() {
    let Some(u) = url() else { return };
    // etcd's lease timer counts whole seconds: the marker's age is known to a
    // second, so a namespace is trusted a second or two after its lock delay.
    namespace_in_use_pays_no_lock_delay(&u, TTL_MS, std::time::Duration::from_millis(2500));
}

/// A two-member cluster that loses a member has no quorum: the other member
/// still answers (a status request) but knows no leader, so every request fails
/// or stalls (as in a network partition). `build()` then fails at the 10 s
/// acquire bound saying so (before: "timed out", or a request error, with no
/// cause), and waits for a leader that comes back within the bound.
#[test]
fn etcd_member_without_leader_says_so_and_build_waits_for_one() {
    if url().is_none() {
        return;
    }
    // Two members of one cluster, from the fixture (testenv.py control etcd-pair).
    let (pair, hello) = Fixture::start(&["etcd-pair"]);
    let pair = std::sync::Mutex::new(pair);
    let ca = reply_field(&hello, "port0");
    let u = format!("etcd://127.0.0.1:{ca}/?namespace={}", fresh_ns("noleader"));
    // The cluster works (this waits for its first election).
    drop(probe(&u, TTL_MS, 10).unwrap());
    pair.lock().unwrap().call("kill 1");
    // etcd's election timeout is 1 s: by then `a` has stepped down or failed to win.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let started = std::time::Instant::now();
    let lost = probe(&u, TTL_MS, 10);
    let took_lost = started.elapsed();
    let Err(e) = lost else {
        panic!("a generator from a member without quorum");
    };
    assert!(e.to_string().contains("knows no leader"), "{e}");
    assert!(took_lost < std::time::Duration::from_secs(12), "{took_lost:?}: {e}");
    let took = build_waits_until_ready(&u, TTL_MS, &|| {
        pair.lock().unwrap().call("start 1");
    });
    eprintln!("etcd without a leader: lease error after {took_lost:?} ({e}); build() waited {took:?} for a new leader");
}
