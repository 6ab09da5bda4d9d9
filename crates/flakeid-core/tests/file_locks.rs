//! File leases and state files exclude each other through the OS's file lock
//! (`File::try_lock`: flock on unix, LockFileEx on Windows): two holders in one
//! process, and a holder in another process, which the OS releases when that
//! process exits. Run on Linux (make test-rust) and under Wine (make test-windows).
//!
//! The other process is this test binary again, running the same test with
//! `FLAKEID_LOCK_CHILD` set; the two talk through files in the test's directory.
#![cfg(all(feature = "lease", any(unix, windows)))]
#![allow(clippy::unwrap_used)]

use flakeid_core::{Error, Generator, Layout};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One test at a time: on unix a child being spawned holds a copy of every open
/// descriptor until it execs, so a lock dropped meanwhile would linger.
static SERIAL: Mutex<()> = Mutex::new(());

const CHILD: &str = "FLAKEID_LOCK_CHILD";

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flakeid-locks-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn file_url(d: &Path) -> String {
    // file:///tmp/x on unix, file:///C:/users/x/Temp/x on Windows.
    let path = d.to_str().unwrap().replace('\\', "/");
    let slash = if path.starts_with('/') { "" } else { "/" };
    format!("file://{slash}{path}?namespace=locks")
}

fn leased(d: &Path) -> Result<Generator, Error> {
    Generator::builder(Layout::SNOWFLAKE).lease_url(&file_url(d)).build()
}

/// The state file's own lock, beneath the host guard (which would refuse first).
fn with_state(path: &Path) -> Result<Generator, Error> {
    Generator::builder(Layout::SNOWFLAKE)
        .node(7)
        .host_guard(false)
        .state(path.to_str().unwrap())
        .build()
}

fn wait_for(path: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(Instant::now() < deadline, "{} never came", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// In the child: run `hold`, report it in `DIR/child.out`, keep what it holds
/// until the parent writes `DIR/release`, then exit without dropping it (the OS
/// must release the lock).
fn child(hold: impl FnOnce(&Path) -> (String, Option<Generator>)) {
    let d = PathBuf::from(std::env::var_os(CHILD).unwrap());
    let (report, held) = hold(&d);
    std::fs::write(d.join("child.out.tmp"), format!("{report}\n")).unwrap();
    std::fs::rename(d.join("child.out.tmp"), d.join("child.out")).unwrap();
    wait_for(&d.join("release"));
    std::mem::forget(held);
    std::process::exit(0);
}

/// This test binary, running only `test` with `FLAKEID_LOCK_CHILD=dir`.
fn spawn(test: &str, d: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, d)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn release(mut c: Child, d: &Path) {
    std::fs::write(d.join("release"), "now\n").unwrap();
    assert!(c.wait().unwrap().success());
}

#[test]
fn two_file_leases_in_one_process_get_distinct_node_ids() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let d = dir("inproc");
    let a = leased(&d).unwrap();
    let b = leased(&d).unwrap();
    assert_ne!(a.node(), b.node());
    let first = a.node();
    assert!(a.next_id().is_ok() && b.next_id().is_ok());
    drop(a);
    // Dropping a holder unlocks its id: the next generator gets it back.
    let c = leased(&d).unwrap();
    assert_eq!(c.node(), first);
}

#[test]
fn a_file_lease_held_by_another_process() {
    if std::env::var_os(CHILD).is_some() {
        return child(|d| {
            let g = leased(d).unwrap();
            g.next_id().unwrap();
            (format!("node {}", g.node()), Some(g))
        });
    }
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let d = dir("xproc");
    let c = spawn("a_file_lease_held_by_another_process", &d);
    let theirs: u64 = wait_for(&d.join("child.out"))
        .trim()
        .strip_prefix("node ")
        .unwrap()
        .parse()
        .unwrap();
    let ours = leased(&d).unwrap();
    assert_ne!(ours.node(), theirs, "two processes hold node id {theirs}");
    ours.next_id().unwrap();
    // The child exits holding its lease; the OS releases the lock at once.
    release(c, &d);
    let again = leased(&d).unwrap();
    assert_eq!(again.node(), theirs);
    again.next_id().unwrap();
}

/// A build refused because another generator holds its state file.
fn refused_in_use(built: Result<Generator, Error>, what: &str) {
    match built {
        Err(Error::Config {
            field: "state",
            message,
        }) => assert!(message.contains("is in use"), "{message}"),
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn two_generators_on_one_state_file_in_one_process() {
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let d = dir("state-inproc");
    let path = d.join("node7.state");
    let a = with_state(&path).unwrap();
    refused_in_use(with_state(&path), "a second generator on one state file");
    drop(a);
    with_state(&path).unwrap();
}

#[test]
fn a_state_file_held_by_another_process() {
    if std::env::var_os(CHILD).is_some() {
        return child(|d| match with_state(&d.join("node7.state")) {
            Ok(g) => ("held".into(), Some(g)),
            Err(e) => (format!("refused: {e}"), None),
        });
    }
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let d = dir("state-xproc");
    let path = d.join("node7.state");
    let c = spawn("a_state_file_held_by_another_process", &d);
    assert_eq!(wait_for(&d.join("child.out")), "held\n");
    refused_in_use(with_state(&path), "two processes on one state file");
    release(c, &d);
    // The child's mark (written by its heartbeat) is the floor of ours.
    let g = with_state(&path).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while g.next_id().is_err() {
        assert!(Instant::now() < deadline, "the heartbeat never renewed");
        std::thread::sleep(Duration::from_millis(20));
    }
}
