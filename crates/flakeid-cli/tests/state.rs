//! `--state FILE` across real processes (docs/state.md): issue, exit (or be killed
//! with SIGKILL mid-run), restart with the wall clock set back by libfaketime, and
//! never issue an ID at or below the saved mark, under every clock_backwards policy.
//! Also: a second process on the same file is refused, and a corrupt file is a
//! config error naming `state`. libfaketime is Debian's `faketime` (make setup-rust).
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const NODE: &str = "5";

fn libfaketime() -> PathBuf {
    for dir in std::fs::read_dir("/usr/lib").unwrap().flatten() {
        let p = dir.path().join("faketime/libfaketime.so.1");
        if p.exists() {
            return p;
        }
    }
    panic!("libfaketime is not installed: apt-get install faketime (make setup-rust does)");
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flakeid-cli-state-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `flakeid generate --node 5 --state FILE ARGS`, its wall clock `behind` back
/// (libfaketime's FAKETIME, e.g. "-30s"; the monotonic clocks stay real).
fn generate(state: &Path, behind: Option<&str>, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_flakeid"));
    c.args(["generate", "--node", NODE, "--state"])
        .arg(state)
        .args(args)
        .env_remove("FLAKEID_NODE")
        .env_remove("FLAKEID_LEASE")
        .env_remove("FLAKEID_STATE")
        // Each test's host guard in its own directory: the tests run at once, all on node 5.
        .env("FLAKEID_HOST_GUARD", state.parent().unwrap().join("guard"));
    if let Some(offset) = behind {
        c.env("LD_PRELOAD", libfaketime())
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_RESET", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    }
    c
}

fn ids(o: &Output) -> Vec<u64> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn ts(id: u64) -> u64 {
    flakeid_core::Layout::SNOWFLAKE.decompose(id).timestamp_ms
}

fn mark(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("high_water_ms "))
        .unwrap()
        .parse()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A restart 30 s behind the mark, under each policy: no ID at or below the mark.
fn restarts_behind(state: &Path, issued_max: u64) {
    let saved = mark(state);
    assert!(saved >= ts(issued_max), "the file covers every ID issued");
    // error (the default): refused, naming the rollback.
    let o = generate(state, Some("-30s"), &["-n", "10"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(ids(&o).is_empty(), "{o:?}");
    assert!(stderr(&o).contains("clock moved backwards"), "{}", stderr(&o));
    // wait: 30 s is more than max_wait_ms allows: refused the same way.
    let o = generate(state, Some("-30s"), &["-n", "10", "--clock-backwards", "wait"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        ids(&o).is_empty() && stderr(&o).contains("clock moved backwards"),
        "{o:?}"
    );
    // monotonic: IDs after the mark, in the tick after it.
    let o = generate(state, Some("-30s"), &["-n", "1000", "--clock-backwards", "monotonic"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let after = ids(&o);
    assert_eq!(after.len(), 1000);
    assert!(
        after.iter().all(|&id| id > issued_max && ts(id) > saved),
        "{} <= {saved}",
        ts(after[0])
    );
    assert!(after.windows(2).all(|w| w[0] < w[1]));
    // wait, with a rollback shorter than max_wait_ms: waits, then IDs after the mark.
    let saved = mark(state);
    let o = generate(
        state,
        Some("-1s"),
        &["-n", "10", "--clock-backwards", "wait", "--max-wait-ms", "5000"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(ids(&o).iter().all(|&id| ts(id) > saved && id > after[999]));
}

#[test]
fn restart_after_a_clean_exit_behind_the_mark() {
    let d = dir("clean");
    let state = d.join("node5.state");
    let o = generate(&state, None, &["-n", "5000"]).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let first = ids(&o);
    // A clean exit records the last timestamp issued.
    assert_eq!(mark(&state), ts(*first.last().unwrap()));
    restarts_behind(&state, *first.last().unwrap());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn restart_after_sigkill_behind_the_mark() {
    let d = dir("kill");
    let state = d.join("node5.state");
    let mut child = generate(&state, None, &["-n", "1000000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    // Read until well past the first window renewal, then kill it mid-run.
    let mut text = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_millis(1500) {
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0, "flakeid generate ended early");
        text.extend_from_slice(&buf[..n]);
    }
    child.kill().unwrap();
    // Everything it wrote before it died, to EOF.
    out.read_to_end(&mut text).unwrap();
    child.wait().unwrap();
    let text = String::from_utf8(text).unwrap();
    // The last line may have been cut by the kill.
    let issued_max = text.lines().filter_map(|l| l.parse::<u64>().ok()).max().unwrap();
    assert!(
        mark(&state) > ts(issued_max),
        "killed mid-run, the mark is ahead of every ID"
    );
    restarts_behind(&state, issued_max);
    std::fs::remove_dir_all(&d).unwrap();
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_second_process_on_one_file_is_refused() {
    let d = dir("two");
    let state = d.join("node5.state");
    // The first blocks on a pipe nobody reads, holding the file.
    let mut first = Killed(
        generate(&state, None, &["-n", "1000000000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = first.0.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    out.read_exact(&mut byte).unwrap(); // it has built its generator: the file is locked
    // The host guard refuses it first; beneath it, the state file's own lock.
    let o = generate(&state, None, &["-n", "1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        stderr(&o).contains("node id 5 of this layout is already in use"),
        "{o:?}"
    );
    let o = generate(&state, None, &["-n", "1"])
        .env("FLAKEID_HOST_GUARD", "off")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = stderr(&o);
    assert!(
        err.contains("invalid configuration") && err.contains("state") && err.contains("in use by another process"),
        "{err}"
    );
    drop(out);
    drop(first);
    // Free again once the first is gone (the OS dropped its lock). Killed, it left
    // its mark up to a window ahead of the clock: the wait policy waits that out.
    let o = generate(
        &state,
        None,
        &["-n", "1", "--clock-backwards", "wait", "--max-wait-ms", "3000"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{o:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_corrupt_file_is_a_config_error_naming_state() {
    let d = dir("corrupt");
    let state = d.join("node5.state");
    std::fs::write(&state, "not a state file\n").unwrap();
    let o = generate(&state, None, &["-n", "1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = stderr(&o);
    assert!(err.contains("invalid configuration") && err.contains("state"), "{err}");
    assert!(ids(&o).is_empty());
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "not a state file\n");
    std::fs::remove_dir_all(&d).unwrap();
}
