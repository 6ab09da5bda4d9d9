//! `SystemClock::disable_cache` (what `flakeid serve` calls): the ticker thread
//! stops and never comes back, readings come from the OS, and the generator issues
//! as before. A file of its own: the switch is for the whole process.
#![cfg(target_os = "linux")] // threads are counted in /proc

use flakeid_core::{Generator, Layout, SystemClock, precise_now_ms};
use std::time::{Duration, Instant};

/// Threads of this process named `flakeid-clock`.
fn tickers() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == "flakeid-clock"))
        .count()
}

#[test]
fn the_ticker_stops_for_good_and_ids_follow_the_os_clock() {
    let g = Generator::builder(Layout::SNOWFLAKE).node(3).build().unwrap();
    let mut last = g.next_id().unwrap();
    // The thread names itself once it runs.
    let deadline = Instant::now() + Duration::from_secs(5);
    while tickers() != 1 {
        assert!(
            Instant::now() < deadline,
            "the cache's ticker runs while IDs are issued"
        );
        std::thread::sleep(Duration::from_millis(1));
    }

    SystemClock::disable_cache();
    let deadline = Instant::now() + Duration::from_secs(5);
    while tickers() != 0 {
        assert!(Instant::now() < deadline, "the ticker did not stop within 5 s");
        std::thread::sleep(Duration::from_millis(1));
    }
    // 300 ms of issuing: no ticker comes back, every ID increases, and each
    // timestamp is the OS's reading at the call (no cache to lag behind).
    let until = Instant::now() + Duration::from_millis(300);
    let mut n = 0u64;
    while Instant::now() < until {
        let before = precise_now_ms();
        let id = g.next_id().unwrap();
        let after = precise_now_ms();
        assert!(id > last, "{id} after {last}");
        let ts = Layout::SNOWFLAKE.decompose(id).timestamp_ms;
        assert!(
            ts >= before && ts <= after + 1,
            "timestamp {ts} outside the call's OS readings {before}..={after}"
        );
        last = id;
        n += 1;
    }
    assert!(n > 1000, "{n} IDs in 300 ms");
    assert_eq!(tickers(), 0, "a ticker started again after disable_cache");
}
