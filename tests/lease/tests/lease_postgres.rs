//! PostgreSQL leases against a private PostgreSQL 15 cluster on 127.0.0.1, started
//! by tests/env/testenv.py (make test-lease; FLAKEID_TEST_POSTGRES_URL uses SCRAM-SHA-256;
//! FLAKEID_TEST_POSTGRES_TRUST_URL a trust login; FLAKEID_TEST_PG_PID is the postmaster).
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;
use std::process::Command;

const TTL_MS: u64 = 1500;

fn url() -> Option<String> {
    store_url("FLAKEID_TEST_POSTGRES_URL")
}

scenarios! { |u|
    postgres_32_concurrent_holders_get_distinct_ids: url(), serial => concurrent_distinct(&u, 32, TTL_MS);
    postgres_16_ids_for_32_holders_is_a_lease_error: url(), serial => exhaustion(&u, TTL_MS);
    postgres_killed_holder_id_waits_for_the_ttl: url(), serial => killed_holder(&u, TTL_MS, false);
    postgres_frozen_store_stops_then_resumes_ids: url(), serial => frozen_store(&u, TTL_MS, &freeze_postgres);
    postgres_taken_over_holder_never_issues_again: url(), serial => taken_over(&u, TTL_MS);
    postgres_frozen_store_at_build_is_a_lease_error_in_bounded_time: url(), serial => frozen_at_build(&u, TTL_MS, &freeze_postgres);
    postgres_clock_behind_the_store_is_refused_at_build: url() => clock_behind_the_store(&u, TTL_MS, 8_000);
}

#[test]
fn postgres_logins_trust_scram_and_wrong_password() {
    let Some(u) = url() else { return };
    let _s = serial();
    // SCRAM (the main URL) works: the other tests use it. A wrong password is a lease error.
    let bad = u.replacen(":secret@", ":b4d-pw@", 1);
    assert_ne!(bad, u, "the test URL carries the password 'secret'");
    let e = probe(&with_ns(&bad, &fresh_ns("pw")), TTL_MS, 10).unwrap_err();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Lease, "{e}");
    assert!(e.to_string().contains("28P01"), "SQLSTATE invalid_password: {e}");
    assert!(e.to_string().contains("wrong user or password"), "{e}");
    assert!(!e.to_string().contains("b4d-pw"), "no password in messages: {e}");
    let trust = std::env::var("FLAKEID_TEST_POSTGRES_TRUST_URL").expect("trust URL");
    let g = probe(&with_ns(&trust, &fresh_ns("trust")), TTL_MS, 10).unwrap();
    assert_eq!(g.node(), 0);
    g.next_id().unwrap();
}

fn psql(url: &str, sql: &str) {
    run(Command::new("psql").args([url, "-qXc", sql]));
}

fn private_table(tag: &str) -> (String, String) {
    let table = format!("lossy_{tag}_{}", std::process::id());
    let u = url().unwrap();
    let sep = if u.contains('?') { '&' } else { '?' };
    (
        table.clone(),
        with_ns(&format!("{u}{sep}table={table}"), &fresh_ns(tag)),
    )
}

/// The lease table loses its rows or itself (`statement`) under a namespace aged
/// past its lock delay: no id is given twice, the next holder waits out the TTL.
fn table_lost(statement: &str, tag: &str) {
    let Some(base) = url() else { return };
    let _s = serial(); // the frozen-store test stops the whole cluster
    let (table, u) = private_table(tag);
    drop(probe(&u, TTL_MS, 10).unwrap());
    let delay = data_loss(&u, TTL_MS, &format!("postgres {statement}"), &|| {
        psql(&base, &format!("{statement} {table}"))
    });
    assert!(delay >= TTL_MS);
}

#[test]
fn postgres_truncated_table_never_gives_two_holders_one_id() {
    table_lost("TRUNCATE", "trunc");
}

#[test]
fn postgres_dropped_table_never_gives_two_holders_one_id() {
    table_lost("DROP TABLE", "drop");
}
