//! The option `state` (docs/state.md): a fixed node id's high-water timestamp in a
//! file, on a manual clock. The same across real processes, restarted under
//! libfaketime and killed with SIGKILL: crates/flakeid-cli/tests/state.rs.
#![cfg(all(feature = "lease", any(unix, windows)))]
#![allow(clippy::unwrap_used)]

use flakeid_core::{ClockBackwards, Error, Generator, Layout, ManualClock};
use std::path::{Path, PathBuf};

const T0: u64 = 1_800_000_000_000;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flakeid-state-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fresh directory `name` and the path of a state file `file` in it.
fn state_in(name: &str, file: &str) -> (PathBuf, PathBuf) {
    let d = dir(name);
    let path = d.join(file);
    (d, path)
}

fn mark(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("flakeid-state 1"), "{text}");
    lines
        .next()
        .unwrap()
        .strip_prefix("high_water_ms ")
        .unwrap()
        .parse()
        .unwrap()
}

fn gen_at(path: &Path, clock: &ManualClock, policy: ClockBackwards) -> Result<Generator, Error> {
    Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .clock(clock.clone())
        .clock_backwards(policy)
        .state(path.to_str().unwrap())
        .build()
}

/// The next ID once the heartbeat has renewed the window (refused until then,
/// with an error naming the option).
fn after_renewal(g: &Generator) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match g.next_id() {
            Ok(id) => return id,
            Err(Error::Lease { message }) => {
                assert!(message.contains("option state"), "{message}");
                assert!(std::time::Instant::now() < deadline, "the heartbeat never renewed");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn ts(id: u64) -> u64 {
    Layout::SNOWFLAKE.decompose(id).timestamp_ms
}

fn config_field(r: Result<impl std::fmt::Debug, Error>) -> (&'static str, String) {
    match r {
        Err(e @ Error::Config { field, .. }) => (field, e.to_string()),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn a_missing_file_is_a_fresh_start_and_the_file_stays_ahead() {
    let (d, path) = state_in("fresh", "node5.state");
    let clock = ManualClock::new(T0);
    let g = gen_at(&path, &clock, ClockBackwards::Error).unwrap();
    assert!(g.has_state() && !g.is_leased() && g.lease_state().is_none());
    // Written before the first ID: a window ahead of the clock.
    let first = mark(&path);
    assert!(first > T0, "{first}");
    let id = g.next_id().unwrap();
    assert_eq!(ts(id), T0);
    // The window ends: IDs stop until the heartbeat has moved the mark on.
    clock.set(first);
    let id = after_renewal(&g);
    assert!(mark(&path) > ts(id), "the file is ahead of every ID");
    drop(g);
    // A clean exit records the exact last timestamp: a restart at once starts.
    assert_eq!(mark(&path), ts(id));
    let g = gen_at(&path, &clock, ClockBackwards::Error).unwrap();
    assert!(g.next_id().is_err(), "same ms as the last ID: the clock must move on");
    clock.advance(1);
    assert!(ts(g.next_id().unwrap()) > ts(id));
    drop(g);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A file saved at `T0 + 30 s` (as a killed process leaves it), then a restart at T0.
fn saved_ahead(name: &str) -> (PathBuf, PathBuf, u64) {
    let (d, path) = state_in(name, "s");
    let saved = T0 + 30_000;
    std::fs::write(&path, format!("flakeid-state 1\nhigh_water_ms {saved}\nnode 5\n")).unwrap();
    (d, path, saved)
}

#[test]
fn restart_behind_the_mark_error_policy() {
    let (d, path, saved) = saved_ahead("error");
    let clock = ManualClock::new(T0);
    let g = gen_at(&path, &clock, ClockBackwards::Error).unwrap();
    assert_eq!(g.next_id(), Err(Error::ClockMovedBackwards { by_ms: 30_000 }));
    // A jump past the window: IDs wait for the heartbeat to move the file on.
    clock.set(saved + 1);
    assert_eq!(ts(after_renewal(&g)), saved + 1);
    drop(g);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn restart_behind_the_mark_wait_policy() {
    let (d, path, saved) = saved_ahead("wait");
    // Too far behind for max_wait_ms: refused, naming by how much.
    let clock = ManualClock::new(T0).with_auto_advance(1);
    let g = gen_at(&path, &clock, ClockBackwards::Wait).unwrap();
    match g.next_id() {
        Err(Error::ClockMovedBackwards { by_ms }) => assert!(by_ms >= 29_000, "{by_ms}"),
        other => panic!("{other:?}"),
    }
    drop(g);
    // Within max_wait_ms: waits, then issues after the mark.
    let clock = ManualClock::new(saved - 500).with_auto_advance(1);
    let g = gen_at(&path, &clock, ClockBackwards::Wait).unwrap();
    let id = g.next_id().unwrap();
    assert!(ts(id) > saved, "{} <= {saved}", ts(id));
    drop(g);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn restart_behind_the_mark_monotonic_policy() {
    let (d, path, saved) = saved_ahead("monotonic");
    let clock = ManualClock::new(T0);
    let g = gen_at(&path, &clock, ClockBackwards::Monotonic).unwrap();
    // The tick after the mark, its sequence to the end; the file covers it.
    let ids = g.next_ids(4095).unwrap();
    assert!(ids.iter().all(|&id| ts(id) == saved + 1), "{:?}", ts(ids[0]));
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(mark(&path) > saved, "the file covers the tick after the mark");
    // Then, as any rollback longer than max_wait_ms: an error, never a lower ID.
    assert!(matches!(g.next_id(), Err(Error::ClockMovedBackwards { .. })));
    drop(g);
    // A second restart starts after those too.
    let g = gen_at(&path, &clock, ClockBackwards::Monotonic).unwrap();
    assert!(ts(g.next_id().unwrap()) > saved + 1);
    drop(g);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn corrupt_or_unreadable_files_are_config_errors_naming_state() {
    let d = dir("corrupt");
    let clock = ManualClock::new(T0);
    for text in [
        "",
        "garbage\n",
        "flakeid-state 1\nhigh_water_ms 12x\n",
        "1800000000000\n",
    ] {
        let path = d.join("bad");
        std::fs::write(&path, text).unwrap();
        let (field, msg) = config_field(gen_at(&path, &clock, ClockBackwards::Monotonic));
        assert_eq!(field, "state", "{msg}");
        assert!(msg.contains("not a flakeid state file"), "{msg}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "never overwritten");
    }
    // A directory where the file should be: unreadable.
    let path = d.join("adir");
    std::fs::create_dir_all(&path).unwrap();
    let (field, msg) = config_field(gen_at(&path, &clock, ClockBackwards::Error));
    assert_eq!(field, "state", "{msg}");
    // In a directory that does not exist: cannot be locked or written.
    let (field, _) = config_field(gen_at(&d.join("no/such/dir/s"), &clock, ClockBackwards::Error));
    assert_eq!(field, "state");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn one_file_one_generator() {
    let (d, path) = state_in("twice", "s");
    let clock = ManualClock::new(T0);
    let a = gen_at(&path, &clock, ClockBackwards::Error).unwrap();
    let (field, msg) = config_field(gen_at(&path, &clock, ClockBackwards::Error));
    assert_eq!(field, "state");
    assert!(msg.contains("in use by another process"), "{msg}");
    drop(a);
    assert!(
        gen_at(&path, &clock, ClockBackwards::Error).is_ok(),
        "free once the first is dropped"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn state_with_a_lease_is_refused_and_by_name() {
    let (d, path) = state_in("lease", "s");
    let b = Generator::builder(Layout::SNOWFLAKE)
        .lease_url(&format!("file://{}", d.display()))
        .state(path.to_str().unwrap());
    let (field, msg) = config_field(b.build());
    assert_eq!(field, "state");
    assert!(msg.contains("not both"), "{msg}");
    assert!(!path.exists());
    let g = Generator::builder(Layout::SNOWFLAKE)
        .set_text("state", path.to_str().unwrap())
        .and_then(|b| b.set_text("node", "3"))
        .and_then(|b| b.build())
        .unwrap();
    assert!(g.has_state());
    drop(g);
    std::fs::remove_dir_all(&d).unwrap();
}
