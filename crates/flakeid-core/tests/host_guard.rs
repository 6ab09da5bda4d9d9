//! The host guard (src/host_guard.rs): a second live generator on one layout and
//! node id is refused on this host, in this process or another; the kernel frees
//! the guard when its holder ends, `kill -9` included; a forked child neither
//! keeps nor takes over its parent's guard.
//!
//! Each scenario runs in a child process of its own (this binary again, running
//! one test with `FLAKEID_GUARD_CHILD` set) with `FLAKEID_HOST_GUARD` pointed at a
//! fresh directory: nothing else on the machine meets these guards, and the fork
//! scenario forks a single-threaded process.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use flakeid_core::{Error, Generator, HOST_GUARD_ENV, Layout, ManualClock};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const CHILD: &str = "FLAKEID_GUARD_CHILD";

fn node(n: u64) -> Result<Generator, Error> {
    Generator::builder(Layout::SNOWFLAKE).node(n).build()
}

fn refusal(r: Result<Generator, Error>) -> String {
    match r {
        Err(Error::Config { field: "node", message }) => message,
        other => panic!("expected the host guard's refusal, got {other:?}"),
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flakeid-guard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `test` of this binary in a child with the guard in `dir` (or `off`).
fn run_child(test: &str, guard: &str) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut c = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD, "1")
        .env(HOST_GUARD_ENV, guard)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdin, stdout) = (c.stdin.take().unwrap(), BufReader::new(c.stdout.take().unwrap()));
    (c, stdin, stdout)
}

/// The next line the child reports that starts with `@` (the harness prints too).
fn report(out: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the child ended before reporting"
        );
        if let Some(r) = line.strip_prefix('@') {
            return r.trim().to_string();
        }
    }
}

fn say(what: impl std::fmt::Display) {
    println!("@{what}");
    std::io::stdout().flush().unwrap();
}

/// A scenario in a child of its own: returns whether this process is that child.
fn scenario(test: &str, dir: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let (mut c, _stdin, mut out) = run_child(test, fresh_dir(dir).to_str().unwrap());
    assert_eq!(report(&mut out), "ok");
    assert!(c.wait().unwrap().success());
    false
}

#[test]
fn a_second_generator_in_this_process_is_refused_until_the_first_is_dropped() {
    if !scenario(
        "a_second_generator_in_this_process_is_refused_until_the_first_is_dropped",
        "inproc",
    ) {
        return;
    }
    let a = node(5).unwrap();
    let message = refusal(node(5));
    let pid = std::process::id();
    assert!(message.contains(&format!("this process (pid {pid})")), "{message}");
    assert!(
        message.starts_with("node id 5 of this layout is already in use"),
        "{message}"
    );
    assert!(
        message.contains("lease") && message.contains("FLAKEID_HOST_GUARD=off"),
        "{message}"
    );
    // datacenter + worker name the same node id; another node id or ID space is free.
    refusal(Generator::builder(Layout::SNOWFLAKE).datacenter(0).worker(5).build());
    let other_node = node(6).unwrap();
    let other_space = Generator::builder(Layout::DISCORD).node(5).build().unwrap();
    // An injected clock issues a test's IDs, not the host's; a lease coordinates itself.
    let manual = Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .clock(ManualClock::new(1_700_000_000_000))
        .build()
        .unwrap();
    let unguarded = Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .host_guard(false)
        .build()
        .unwrap();
    drop((other_node, other_space, manual, unguarded));
    drop(a);
    node(5).unwrap().next_id().unwrap();
    say("ok");
}

#[test]
fn another_process_holds_it_until_it_is_killed() {
    if std::env::var_os(CHILD).is_some() {
        // The holder: takes node 7, says so, and waits to be killed.
        let g = node(7).unwrap();
        say("held");
        std::thread::sleep(std::time::Duration::from_secs(120));
        drop(g);
        return;
    }
    let dir = fresh_dir("xproc");
    let guard = dir.to_str().unwrap();
    let (mut holder, _stdin, mut out) = run_child("another_process_holds_it_until_it_is_killed", guard);
    assert_eq!(report(&mut out), "held");
    // This process, on the same directory, is refused with the holder's pid.
    let (mut probe, _i, mut pout) = run_child("probe_node_7", guard);
    assert_eq!(report(&mut pout), format!("refused by process {}", holder.id()));
    probe.wait().unwrap();
    // kill -9: the kernel frees the guard with the process.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let (mut probe, _i, mut pout) = run_child("probe_node_7", guard);
    assert_eq!(report(&mut pout), "took it");
    probe.wait().unwrap();
    // Turned off, nothing is refused.
    let (mut holder, _stdin, mut out) = run_child("another_process_holds_it_until_it_is_killed", guard);
    assert_eq!(report(&mut out), "held");
    let (mut probe, _i, mut pout) = run_child("probe_node_7", "off");
    assert_eq!(report(&mut pout), "took it");
    probe.wait().unwrap();
    holder.kill().unwrap();
    holder.wait().unwrap();
}

/// A child's step of the scenario above (nothing when run by itself).
#[test]
fn probe_node_7() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    match node(7) {
        Ok(_) => say("took it"),
        Err(Error::Config { field: "node", message }) => {
            let pid = message
                .split("by process ")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .unwrap_or("?");
            say(format!("refused by process {pid}"));
        }
        Err(e) => say(format!("unexpected: {e}")),
    }
}

/// A pipe's (read, write) ends.
fn pipe() -> (i32, i32) {
    let mut fds = [0; 2];
    // SAFETY: a pipe into a two-int array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

fn send(fd: i32) {
    // SAFETY: one byte into a pipe this process holds.
    assert_eq!(unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) }, 1);
}

/// Waits for a byte, or for the other side to end (then the scenario is over).
fn receive(fd: i32) {
    let mut b = [0u8; 1];
    // SAFETY: one byte from a pipe this process holds.
    unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
}

#[test]
fn a_forked_child_neither_keeps_nor_takes_its_parents_guard() {
    if !scenario("a_forked_child_neither_keeps_nor_takes_its_parents_guard", "fork") {
        return;
    }
    let parent = node(9).unwrap();
    let parent_pid = std::process::id();
    let (to_child, from_parent) = {
        let (r, w) = pipe();
        (w, r)
    };
    let (to_parent, from_child) = {
        let (r, w) = pipe();
        (w, r)
    };
    // SAFETY: this process runs one test on one thread (spawned with
    // --test-threads=1); the child builds generators and ends with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: closing the parent's ends, so that a failed parent is seen as an end.
        unsafe { libc::close(to_child) };
        unsafe { libc::close(from_child) };
        // The parent's generator came along, but its guard is not the child's.
        let refused = matches!(node(9), Err(Error::Config { message, .. }) if message.contains(&format!("by process {parent_pid}")));
        send(to_parent);
        receive(from_parent); // the parent dropped its generator
        let mine = node(9);
        let took = mine.is_ok();
        // Dropping the inherited copy must not release the child's own guard.
        drop(parent);
        send(to_parent);
        receive(from_parent); // the parent has probed
        let code = u8::from(!refused) | u8::from(!took) << 1;
        drop(mine);
        // SAFETY: ending the child without running the parent's destructors.
        unsafe { libc::_exit(i32::from(code)) };
    }
    // SAFETY: the child's ends.
    unsafe { libc::close(from_parent) };
    unsafe { libc::close(to_parent) };
    refusal(node(9));
    receive(from_child); // the child has probed: only now may the parent let go
    drop(parent);
    send(to_child);
    receive(from_child);
    // The child holds node 9 now, its inherited copy of ours dropped.
    let message = refusal(node(9));
    assert!(message.contains(&format!("by process {pid}")), "{message}");
    send(to_child);
    let mut status = 0;
    // SAFETY: waiting for our child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status));
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "bit 0: the child was not refused with its parent's pid; bit 1: the child could not take the node id once free"
    );
    node(9).unwrap();
    say("ok");
}

#[test]
fn links_and_foreign_directories_are_refused() {
    if !scenario("links_and_foreign_directories_are_refused", "links") {
        return;
    }
    let dir = PathBuf::from(std::env::var_os(HOST_GUARD_ENV).unwrap());
    // A guard file planted as a link to another file is never followed.
    let target = dir.join("victim");
    std::fs::write(&target, "keep me").unwrap();
    let name = format!(
        "node-11.t41d5w5s12.tick1.epoch{}.tns.lock",
        Layout::SNOWFLAKE.epoch_ms()
    );
    std::os::unix::fs::symlink(&target, dir.join(name)).unwrap();
    match node(11) {
        Err(Error::Config {
            field: "host_guard",
            message,
        }) => assert!(message.contains("cannot be used"), "{message}"),
        other => panic!("a linked guard file: {other:?}"),
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    say("ok");
}

#[test]
fn a_relative_directory_is_refused() {
    if std::env::var_os(CHILD).is_some() {
        match node(12) {
            Err(Error::Config {
                field: "host_guard", ..
            }) => say("ok"),
            other => say(format!("unexpected: {other:?}")),
        }
        return;
    }
    let (mut c, _i, mut out) = run_child("a_relative_directory_is_refused", "relative/dir");
    assert_eq!(report(&mut out), "ok");
    c.wait().unwrap();
}

#[test]
fn a_rebuilt_generator_starts_after_the_last_one() {
    if !scenario("a_rebuilt_generator_starts_after_the_last_one", "rebuild") {
        return;
    }
    for _ in 0..200 {
        let a = node(13).unwrap();
        let last = *a.next_ids(3000).unwrap().last().unwrap();
        drop(a);
        let b = node(13).unwrap();
        let first = b.next_id().unwrap();
        assert!(first > last, "{first} after {last}");
        // close() lets go as dropping does, and refuses every later call.
        b.close();
        assert!(matches!(b.next_id(), Err(Error::Config { field: "generator", .. })));
        let c = node(13).unwrap();
        assert!(c.next_id().unwrap() > first);
    }
    say("ok");
}
