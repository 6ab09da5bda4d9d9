//! Redis leases against a real `redis-server` on 127.0.0.1, started by
//! tests/env/testenv.py (make test-lease; it exports FLAKEID_TEST_REDIS_URL and _PID).
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;

const TTL_MS: u64 = 1500;

fn url() -> Option<String> {
    store_url("FLAKEID_TEST_REDIS_URL")
}

scenarios! { |u|
    redis_32_concurrent_holders_get_distinct_ids: url(), serial => concurrent_distinct(&u, 32, TTL_MS);
    redis_16_ids_for_32_holders_is_a_lease_error: url(), serial => exhaustion(&u, TTL_MS);
    redis_killed_holder_id_waits_for_the_ttl: url(), serial => killed_holder(&u, TTL_MS, false);
    redis_frozen_store_stops_then_resumes_ids: url(), serial => frozen_store(&u, TTL_MS, &freeze_redis);
    redis_taken_over_holder_never_issues_again: url(), serial => taken_over(&u, TTL_MS);
    redis_frozen_store_at_build_is_a_lease_error_in_bounded_time: url(), serial => frozen_at_build(&u, TTL_MS, &freeze_redis);
    redis_clock_behind_the_store_is_refused_at_build: url() => clock_behind_the_store(&u, TTL_MS, 8_000);
}

#[test]
fn redis_namespaces_are_independent_and_bad_urls_are_config_errors() {
    let Some(u) = url() else { return };
    let _s = serial();
    namespaces_are_independent(&u, TTL_MS);
    let e = probe("redis://127.0.0.1:1/0", TTL_MS, 10).unwrap_err();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Lease, "{e}");
    let e = probe(&format!("{u}?namespace=no/slash"), TTL_MS, 10).unwrap_err();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Config, "{e}");
}

/// A private server (the suite's Redis given) and a namespace on it aged past the
/// lock delay, as a store in use would be.
fn private_aged(tag: &str) -> Option<(PrivateRedis, String)> {
    url()?;
    let redis = PrivateRedis::start();
    let u = with_ns(&redis.url(), &fresh_ns(tag));
    drop(probe(&u, TTL_MS, 10).unwrap());
    Some((redis, u))
}

#[test]
fn redis_restarted_empty_never_gives_two_holders_one_id() {
    let Some((redis, u)) = private_aged("restart") else {
        return;
    };
    let delay = data_loss(&u, TTL_MS, "redis kill -9 + restart empty", &|| redis.restart_empty());
    assert!(
        delay >= TTL_MS,
        "the first holder after the loss waits out the TTL ({delay} ms)"
    );
}

#[test]
fn redis_flushall_never_gives_two_holders_one_id() {
    let Some((redis, u)) = private_aged("flush") else {
        return;
    };
    let delay = data_loss(&u, TTL_MS, "redis FLUSHALL", &|| redis.cli(&["FLUSHALL"]));
    assert!(delay >= TTL_MS);
}

#[test]
fn redis_namespace_in_use_pays_no_lock_delay() {
    let Some(u) = url() else { return };
    namespace_in_use_pays_no_lock_delay(&u, TTL_MS, std::time::Duration::ZERO);
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
