//! Redis leases against a real `redis-server` on 127.0.0.1, started by
//! tests/env/testenv.py (make test-lease; it exports FLAKEID_TEST_REDIS_URL and _PID).
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;

const TTL_MS: u64 = 1500;

fn url() -> Option<String> {
    store_url("FLAKEID_TEST_REDIS_URL")
}

fn freeze(on: bool) {
    let pid: i32 = std::env::var("FLAKEID_TEST_REDIS_PID")
        .expect("FLAKEID_TEST_REDIS_PID")
        .parse()
        .unwrap();
    signal(pid, if on { libc::SIGSTOP } else { libc::SIGCONT });
}

scenarios! { |u|
    redis_32_concurrent_holders_get_distinct_ids: url(), serial => concurrent_distinct(&u, 32, TTL_MS);
    redis_16_ids_for_32_holders_is_a_lease_error: url(), serial => exhaustion(&u, TTL_MS);
    redis_killed_holder_id_waits_for_the_ttl: url(), serial => killed_holder(&u, TTL_MS, false);
    redis_frozen_store_stops_then_resumes_ids: url(), serial => frozen_store(&u, TTL_MS, &freeze);
    redis_taken_over_holder_never_issues_again: url(), serial => taken_over(&u, TTL_MS);
    redis_frozen_store_at_build_is_a_lease_error_in_bounded_time: url(), serial => frozen_at_build(&u, TTL_MS, &freeze);
    redis_clock_behind_the_store_is_refused_at_build: url() => clock_behind_the_store(&u, TTL_MS, 8_000);
}

#[test]
fn redis_namespaces_are_independent_and_bad_urls_are_config_errors() {
    let Some(u) = url() else { return };
    let _s = serial();
    let a = probe(&with_ns(&u, &fresh_ns("a")), TTL_MS, 10).unwrap();
    let b = probe(&with_ns(&u, &fresh_ns("b")), TTL_MS, 10).unwrap();
    assert_eq!((a.node(), b.node()), (0, 0));
    let e = probe("redis://127.0.0.1:1/0", TTL_MS, 10).unwrap_err();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Lease, "{e}");
    let e = probe(&format!("{u}?namespace=no/slash"), TTL_MS, 10).unwrap_err();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Config, "{e}");
}

#[test]
fn redis_restarted_empty_never_gives_two_holders_one_id() {
    if url().is_none() {
        return;
    }
    let redis = PrivateRedis::start();
    let u = with_ns(&redis.url(), &fresh_ns("restart"));
    // Age the namespace past the lock delay first, as a store in use would be.
    drop(probe(&u, TTL_MS, 10).unwrap());
    let delay = data_loss(&u, TTL_MS, "redis kill -9 + restart empty", &|| redis.restart_empty());
    assert!(
        delay >= TTL_MS,
        "the first holder after the loss waits out the TTL ({delay} ms)"
    );
}

#[test]
fn redis_flushall_never_gives_two_holders_one_id() {
    if url().is_none() {
        return;
    }
    let redis = PrivateRedis::start();
    let u = with_ns(&redis.url(), &fresh_ns("flush"));
    drop(probe(&u, TTL_MS, 10).unwrap());
    let delay = data_loss(&u, TTL_MS, "redis FLUSHALL", &|| redis.cli(&["FLUSHALL"]));
    assert!(delay >= TTL_MS);
}

#[test]
fn redis_namespace_in_use_pays_no_lock_delay() {
    let Some(u) = url() else { return };
    let u = with_ns(&u, &fresh_ns("warm"));
    let first = probe(&u, TTL_MS, 10).unwrap();
    assert!(
        first.lease_lock_delay_ms().unwrap() >= TTL_MS,
        "a new namespace waits once"
    );
    let second = probe(&u, TTL_MS, 10).unwrap();
    assert_eq!(
        second.lease_lock_delay_ms(),
        Some(0),
        "a store that kept its data is trusted"
    );
    assert_ne!(first.node(), second.node());
}

/// A server that restarts with a large dataset answers `LOADING` to everything
/// until it has read it (seconds, in production). `build()` in that window waits
/// for it, within the 10 s acquire bound, instead of failing: before, the first
/// `build()` after a restart failed with "BusyLoading" (a flaky CI run found it).
#[test]
fn redis_loading_its_dataset_build_waits_for_it() {
    if url().is_none() {
        return;
    }
    let r = PrivateRedis::start_persistent();
    let u = with_ns(&r.url(), &fresh_ns("loading"));
    drop(probe(&u, TTL_MS, 10).unwrap());
    // 2,000 keys, 1 ms each: about 2 s of LOADING.
    r.restart_loading_slowly(2000, 1000);
    let started = std::time::Instant::now();
    let ping = r.cli_output(&["PING"]);
    assert!(ping.starts_with("LOADING"), "the server is loading: {ping}");
    let g = probe(&u, TTL_MS, 10).unwrap();
    let took = started.elapsed();
    assert!(g.next_id().is_ok());
    assert!(
        took > std::time::Duration::from_millis(500),
        "build() returned after {took:?}, before the load ended"
    );
    eprintln!("build() during LOADING returned after {took:?}");
}
