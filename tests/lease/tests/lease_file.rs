//! File leases: advisory locks in a directory, for processes on one host.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;
use flakeid_core::ErrorKind;

fn dir_url(tag: &str) -> String {
    let dir = std::env::temp_dir().join(format!("flakeid-lease-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    format!("file://{}", dir.display())
}

scenarios! { |u|
    // Serial: a holder being spawned briefly shares our descriptors (fork before exec).
    file_16_processes_get_distinct_ids: Some(dir_url("many")), serial => concurrent_distinct(&u, 16, 1000);
    file_16_ids_for_32_processes_is_a_lease_error: Some(dir_url("full")), serial => exhaustion(&u, 1000);
    file_killed_holder_id_is_free_at_once: Some(dir_url("kill")), serial => killed_holder(&u, 1000, true);
}

#[test]
fn file_release_records_the_last_timestamp_for_the_next_holder() {
    // Serial: a holder being spawned briefly shares our descriptors (fork before exec).
    let _s = serial();
    let url = with_ns(&dir_url("resume"), "r");
    let a = probe(&url, 1000, 10).unwrap();
    let ids = a.next_ids(5000).unwrap();
    let last = *ids.last().unwrap();
    let node = a.node();
    drop(a);
    let b = probe(&url, 1000, 10).unwrap();
    assert_eq!(b.node(), node);
    assert!(b.next_id().unwrap() > last);
    // In-process: a second generator cannot share the id while `b` lives.
    let c = probe(&url, 1000, 10).unwrap();
    assert_ne!(c.node(), b.node());
    // An explicit release stops IDs at once.
    b.release_lease();
    let e = b.next_id().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease);
    assert!(e.to_string().contains("released"), "{e}");
}

#[test]
fn lease_and_node_conflict_and_ttl_range() {
    // Serial: a holder being spawned briefly shares our descriptors (fork before exec).
    let _s = serial();
    let url = dir_url("conf");
    let e = flakeid_core::Generator::builder(layout(10))
        .node(3)
        .lease_url(&url)
        .build()
        .unwrap_err();
    assert!(matches!(e, flakeid_core::Error::Config { field: "lease", .. }), "{e}");
    let e = probe(&url, 50, 10).unwrap_err();
    assert!(
        matches!(
            e,
            flakeid_core::Error::Config {
                field: "lease_ttl_ms",
                ..
            }
        ),
        "{e}"
    );
}

/// A namespace in a fresh directory whose lease file records an ID issued at
/// `ahead_ms` past now: its URL, that time and the ID.
fn recorded_ahead(tag: &str, ns: &str, ahead_ms: u64) -> (String, u64, u64) {
    use flakeid_core::{Generator, ManualClock, precise_now_ms};
    let url = with_ns(&dir_url(tag), ns);
    let ahead = precise_now_ms() + ahead_ms;
    let a = Generator::builder(layout(10))
        .lease_url(&url)
        .clock(ManualClock::new(ahead))
        .build()
        .unwrap();
    let last = a.next_id().unwrap();
    (url, ahead, last)
}

/// The next holder `b` builds takes node id 0 and starts after `last`.
fn starts_after(b: flakeid_core::GeneratorBuilder, last: u64) {
    let g = b.build().unwrap();
    assert_eq!(g.node(), 0);
    assert!(g.next_id().unwrap() > last);
}

#[test]
fn a_clock_behind_the_recorded_timestamp_waits_bounded_or_refuses() {
    // Serial: a holder being spawned briefly shares our descriptors (fork before exec).
    let _s = serial();
    use flakeid_core::{Generator, ManualClock};
    let (url, ahead, last) = recorded_ahead("clock", "c", 100_000);
    // 100 s behind, a clock that never moves: refused after max_wait_ms, naming the gap.
    let started = std::time::Instant::now();
    let e = Generator::builder(layout(10))
        .lease_url(&url)
        .clock(ManualClock::new(ahead - 100_000))
        .max_wait_ms(200)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
    assert!(e.to_string().contains("behind"), "{e}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(200));
    // The refused holder released the id: a clock that catches up (auto-advance) gets it.
    let b = Generator::builder(layout(10))
        .lease_url(&url)
        .clock(ManualClock::new(ahead - 5_000).with_auto_advance(1))
        .max_wait_ms(10_000);
    starts_after(b, last);
}

#[test]
fn a_build_that_fails_after_leasing_keeps_the_recorded_timestamp() {
    // Serial: a holder being spawned briefly shares our descriptors (fork before exec).
    let _s = serial();
    use flakeid_core::{Generator, ManualClock};
    let (url, ahead, last) = recorded_ahead("fail", "f", 50_000);
    // The lease is taken, then resume_after_ms past the layout's end fails the build.
    let e = Generator::builder(layout(10))
        .lease_url(&url)
        .clock(ManualClock::new(ahead + 1_000))
        .resume_after_ms(u64::MAX / 2)
        .build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TimeExhausted, "{e}");
    // The next holder still starts after `a`'s IDs (its clock at the same time as a's).
    let c = Generator::builder(layout(10))
        .lease_url(&url)
        .clock(ManualClock::new(ahead).with_auto_advance(1));
    starts_after(c, last);
}

#[test]
fn file_directory_wiped_never_gives_two_holders_one_id() {
    let u = dir_url("wipe");
    let dir = u.trim_start_matches("file://").to_string();
    // File leases cap the TTL at 600 ms (locks never expire; it paces the fence).
    drop(probe(&u, 1000, 10).unwrap());
    let delay = data_loss(&u, 1000, "file directory removed and recreated", &|| {
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
    });
    assert!(delay >= 600, "{delay}");
}
