//! One owner per node id (src/owner.rs, src/host_guard.rs): generators of one
//! process on one node id share its counter; another live process on the host is
//! refused that node id; the next owner, after a close, an exit or `kill -9`,
//! starts above every ID the last one issued; no node id given takes a free one;
//! the guard never stops a start and never lapses silently.
//!
//! Each scenario runs in processes of its own (this binary again, running one
//! test with `FLAKEID_GUARD_CHILD` set) with `FLAKEID_HOST_GUARD` pointed at a
//! fresh directory: nothing else on the machine meets these guards.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use flakeid_core::{Error, Generator, HOST_GUARD_ENV, Layout, ManualClock, Overflow};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const CHILD: &str = "FLAKEID_GUARD_CHILD";
/// What a child of the hand-over scenario does: `close`, `exit` or `hold`.
const HOW: &str = "FLAKEID_GUARD_HOW";
const OUT: &str = "FLAKEID_GUARD_OUT";

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
fn run_child(test: &str, guard: &str, env: &[(&str, &str)]) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut c = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD, "1")
        .env(HOST_GUARD_ENV, guard)
        .envs(env.iter().copied())
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
    let (mut c, _stdin, mut out) = run_child(test, fresh_dir(dir).to_str().unwrap(), &[]);
    assert_eq!(report(&mut out), "ok");
    assert!(c.wait().unwrap().success());
    false
}

#[test]
fn generators_of_one_process_on_one_node_id_share_its_counter() {
    if !scenario("generators_of_one_process_on_one_node_id_share_its_counter", "inproc") {
        return;
    }
    let a = node(5).unwrap();
    // datacenter + worker name the same node id: the same counter.
    let b = Generator::builder(Layout::SNOWFLAKE)
        .datacenter(0)
        .worker(5)
        .overflow(Overflow::Borrow)
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    let mut last = 0;
    for i in 0..20_000 {
        let id = if i % 2 == 0 { a.next_id() } else { b.next_id() }.unwrap();
        assert!(id > last, "{id} after {last}");
        assert!(seen.insert(id));
        last = id;
    }
    // A strict one waits past what a borrowing one reserved ahead of the clock.
    let ahead = b.next_ids(50_000).unwrap();
    let after = a.next_id().unwrap();
    assert!(after > *ahead.last().unwrap());
    // Another max_sequence shares the counter too: it caps what its own calls take
    // in a tick (flake-idgen's seqMask), and the IDs stay one sequence.
    let capped = Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .max_sequence(255)
        .build()
        .unwrap();
    for i in 0..20_000 {
        let id = if i % 3 == 0 { capped.next_id() } else { a.next_id() }.unwrap();
        assert!(id > last, "{id} after {last}");
        assert!(seen.insert(id));
        if i % 3 == 0 {
            assert!(Layout::SNOWFLAKE.decompose(id).sequence <= 255);
        }
        last = id;
    }
    drop(capped);
    // An injected clock issues a test's IDs, not the host's: a counter of its own.
    let manual = Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .clock(ManualClock::new(1_700_000_000_000))
        .build()
        .unwrap();
    assert_eq!(Layout::SNOWFLAKE.decompose(manual.next_id().unwrap()).sequence, 0);
    // Close and rebuild, drop and rebuild: the counter goes on, no ID again.
    drop((a, b));
    for _ in 0..1_000 {
        let g = node(5).unwrap();
        let id = g.next_id().unwrap();
        assert!(id > last, "{id} after {last}");
        last = id;
        if last % 2 == 0 {
            g.close();
        }
    }
    // Turned off, the cross-process check goes, never the in-process counter.
    let off = Generator::builder(Layout::SNOWFLAKE)
        .node(5)
        .host_guard(false)
        .build()
        .unwrap();
    let id = off.next_id().unwrap();
    assert!(id > last);
    say("ok");
}

/// `FLAKEID_HOST_GUARD=off`: close and rebuild in one process still repeats nothing.
#[test]
fn off_keeps_the_in_process_counter() {
    if std::env::var_os(CHILD).is_some() {
        let mut last = 0;
        for _ in 0..2_000 {
            let g = node(3).unwrap();
            let id = g.next_id().unwrap();
            assert!(id > last, "{id} after {last}");
            last = id;
            g.close();
        }
        say("ok");
        return;
    }
    let (mut c, _i, mut out) = run_child("off_keeps_the_in_process_counter", "off", &[]);
    assert_eq!(report(&mut out), "ok");
    assert!(c.wait().unwrap().success());
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
    let (mut holder, _stdin, mut out) = run_child("another_process_holds_it_until_it_is_killed", guard, &[]);
    assert_eq!(report(&mut out), "held");
    // Another process, on the same directory, is refused with the holder's pid.
    let (mut probe, _i, mut pout) = run_child("probe_node_7", guard, &[]);
    assert_eq!(report(&mut pout), format!("refused by process {}", holder.id()));
    probe.wait().unwrap();
    // kill -9: the kernel frees the guard with the process.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let (mut probe, _i, mut pout) = run_child("probe_node_7", guard, &[]);
    assert_eq!(report(&mut pout), "took it");
    probe.wait().unwrap();
    // Turned off, nothing is refused.
    let (mut holder, _stdin, mut out) = run_child("another_process_holds_it_until_it_is_killed", guard, &[]);
    assert_eq!(report(&mut out), "held");
    let (mut probe, _i, mut pout) = run_child("probe_node_7", "off", &[]);
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
            assert!(
                message.contains("Fixes, in order") && message.contains("leave the node id unset"),
                "{message}"
            );
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

/// One turn on node 7 (a child of the hand-over scenario): builds as soon as the
/// node id is free, issues a burst while borrowing ahead of the clock, writes its
/// first and last ID (its IDs increase), then closes, exits holding it, or holds
/// it until killed.
#[test]
fn take_a_turn_on_node_7() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let g = loop {
        match Generator::builder(Layout::SNOWFLAKE)
            .node(7)
            .overflow(Overflow::Borrow)
            .max_borrow_ms(500)
            .build()
        {
            Ok(g) => break g,
            Err(Error::Config { field: "node", .. }) => std::hint::spin_loop(),
            Err(e) => panic!("{e}"),
        }
    };
    // About 370 ms of IDs at the layout's cap: borrowed ahead of the clock.
    let ids = g.next_ids(1_500_000).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let text = format!("{} {}\n", ids[0], ids[ids.len() - 1]);
    std::fs::write(std::env::var(OUT).unwrap(), text).unwrap();
    match std::env::var(HOW).unwrap().as_str() {
        "close" => {
            g.close();
            say("done");
        }
        "exit" => {
            say("done");
            // Ends without dropping the generator (a crash's record).
            std::process::exit(0);
        }
        _ => {
            say("done");
            std::thread::sleep(std::time::Duration::from_secs(120));
        }
    }
}

/// A turn's first and last ID.
fn read_ids(path: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut words = text.split_whitespace().map(|w| w.parse().unwrap());
    (words.next().unwrap(), words.next().unwrap())
}

/// Processes taking turns on one node id, each starting the moment the last lets
/// go (a close, an exit without one, `kill -9`) and borrowing ahead of the clock:
/// every process's IDs lie above every ID of the one before, so none repeats.
#[test]
fn the_next_owner_starts_above_the_last_ones_ids() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = fresh_dir("handover");
    let guard = dir.to_str().unwrap();
    let mut last_max = 0;
    let mut before = "nothing";
    // FLAKEID_HANDOVER_ROUNDS: more rounds by hand (the modes in turn).
    let rounds: usize = std::env::var("FLAKEID_HANDOVER_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(8);
    let modes = ["close", "exit", "kill", "close", "kill", "exit", "close", "kill"];
    for (round, how) in modes.iter().cycle().take(rounds).enumerate() {
        let out = dir.join(format!("turn-{round}"));
        let out = out.to_str().unwrap();
        let mode = if *how == "kill" { "hold" } else { how };
        let (mut turn, _i, mut r) = run_child("take_a_turn_on_node_7", guard, &[(HOW, mode), (OUT, out)]);
        assert_eq!(report(&mut r), "done");
        if *how == "kill" {
            turn.kill().unwrap();
        }
        turn.wait().unwrap();
        let (min, max) = read_ids(Path::new(out));
        assert!(
            min > last_max,
            "turn {round} ({before} before it) starts at {min}, below {last_max}"
        );
        last_max = max;
        before = how;
    }
}

/// No node id given: each process takes a free one on the host; generators of one
/// process take the same one (one counter).
#[test]
fn no_node_id_takes_a_free_one_on_this_host() {
    if std::env::var_os(CHILD).is_some() {
        if std::env::var(HOW).as_deref() == Ok("unset") {
            let a = Generator::builder(Layout::SNOWFLAKE).build().unwrap();
            let b = Generator::builder(Layout::SNOWFLAKE)
                .overflow(Overflow::Borrow)
                .build()
                .unwrap();
            assert_eq!(a.node(), b.node());
            say(a.node());
            std::thread::sleep(std::time::Duration::from_secs(120));
        }
        return;
    }
    let dir = fresh_dir("pick");
    let guard = dir.to_str().unwrap();
    let mut nodes = Vec::new();
    let mut children = Vec::new();
    for _ in 0..4 {
        let (c, i, mut out) = run_child("no_node_id_takes_a_free_one_on_this_host", guard, &[(HOW, "unset")]);
        nodes.push(report(&mut out).parse::<u64>().unwrap());
        children.push((c, i));
    }
    let top = Layout::SNOWFLAKE.max_node();
    assert_eq!(nodes, [top, top - 1, top - 2, top - 3]);
    // require_node keeps refusing it.
    match Generator::builder(Layout::SNOWFLAKE).require_node().build() {
        Err(Error::Config { field: "node", .. }) => {}
        other => panic!("require_node without a node id: {other:?}"),
    }
    // A process that ends frees its node id for the next.
    let (mut first, _) = children.remove(0);
    first.kill().unwrap();
    first.wait().unwrap();
    let (mut c, _i, mut out) = run_child("no_node_id_takes_a_free_one_on_this_host", guard, &[(HOW, "unset")]);
    assert_eq!(report(&mut out), top.to_string());
    c.kill().unwrap();
    c.wait().unwrap();
    for (mut c, _) in children {
        c.kill().unwrap();
        c.wait().unwrap();
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
    // SAFETY: this process runs one test (spawned with --test-threads=1); the
    // child builds generators and ends with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: closing the parent's ends, so that a failed parent is seen as an end.
        unsafe { libc::close(to_child) };
        unsafe { libc::close(from_child) };
        // The parent's generator came along, but neither its counter nor its
        // guard is the child's.
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

/// A directory the guard cannot use (a planted link, read-only, another user's)
/// never stops a start: the generator is built and the process keeps the
/// in-process rule.
#[test]
fn a_guard_it_cannot_use_never_stops_a_start() {
    if !scenario("a_guard_it_cannot_use_never_stops_a_start", "links") {
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
    let g = node(11).unwrap();
    let again = node(11).unwrap();
    assert!(again.next_id().unwrap() > g.next_id().unwrap() || g.next_id().unwrap() > 0);
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
    let (mut c, _i, mut out) = run_child("a_relative_directory_is_refused", "relative/dir", &[]);
    assert_eq!(report(&mut out), "ok");
    c.wait().unwrap();
}

/// A read-only guard directory (`readOnlyRootFilesystem`): every generator still
/// builds, warned once on stderr.
#[test]
fn a_read_only_guard_directory_warns_and_builds() {
    if std::env::var_os(CHILD).is_some() {
        node(14).unwrap().next_id().unwrap();
        // With no node id, a pick the guard cannot keep is refused, naming the fixes.
        let refused = Generator::builder(Layout::SNOWFLAKE).build().unwrap_err().to_string();
        assert!(
            refused.contains("cannot be used") && refused.contains("FLAKEID_NODE"),
            "{refused}"
        );
        say("ok");
        return;
    }
    // /proc is never writable, even by root.
    let c = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_read_only_guard_directory_warns_and_builds",
            "--nocapture",
            "-q",
        ])
        .env(CHILD, "1")
        .env(HOST_GUARD_ENV, "/proc/flakeid-host-guard")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&c.stdout), String::from_utf8_lossy(&c.stderr));
    assert!(out.contains("@ok"), "{out}\n{err}");
    assert_eq!(err.matches("cannot be used").count(), 1, "{err}");
    assert!(err.contains("FLAKEID_HOST_GUARD"), "{err}");
}

#[test]
fn a_removed_guard_file_is_taken_again() {
    if !scenario("a_removed_guard_file_is_taken_again", "removed") {
        return;
    }
    let dir = PathBuf::from(std::env::var_os(HOST_GUARD_ENV).unwrap());
    let g = node(15).unwrap();
    g.next_id().unwrap();
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("node-15."))
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    // The watcher notices within its period and takes the path again: it creates
    // the file, locks it, then writes its record (read here without the lock, so
    // the file may be seen empty in between).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.starts_with("held ") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the removed guard file was not taken again: {text:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    g.next_id().unwrap();
    say("ok");
}

/// A child of the scenario below: removes node 16's guard file and builds node 16
/// at once (a cleaner and a newcomer, before the holder's watcher looks), then
/// reports its first ID.
#[test]
fn take_node_16() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    std::fs::remove_file(std::env::var(OUT).unwrap()).unwrap();
    match node(16) {
        Ok(g) => say(g.next_id().unwrap()),
        Err(e) => say(format!("refused: {e}")),
    }
}

/// A guard file removed while its holder issues, and another process takes the
/// path before the holder's watcher does: the holder stops issuing (reported),
/// and the newcomer, after its wait, starts above every ID the holder issued.
#[test]
fn a_removed_guard_file_taken_by_another_process_stops_the_holder() {
    if !scenario("a_removed_guard_file_taken_by_another_process_stops_the_holder", "lost") {
        return;
    }
    let dir = PathBuf::from(std::env::var_os(HOST_GUARD_ENV).unwrap());
    let g = node(16).unwrap();
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("node-16."))
        .unwrap();
    // The newcomer removes the file and creates the path at once (its fresh-file
    // wait outlasts our watcher's period); meanwhile this process goes on issuing,
    // one ID a millisecond (a call that never waits: only the watcher can stop it).
    // A per-thread handle beside it issues a few IDs a millisecond from its runs
    // (slots it holds in the current tick) and must stop with the generator.
    let (mut c, _i, mut out) = run_child("take_node_16", dir.to_str().unwrap(), &[(OUT, file.to_str().unwrap())]);
    let mut h = g.local();
    let mut last = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let stopped = loop {
        for _ in 0..20 {
            match h.next_id() {
                Ok(id) => last = last.max(id),
                Err(Error::Config { field: "node", .. }) => break,
                Err(e) => panic!("{e}"),
            }
        }
        match g.next_id() {
            Ok(id) => last = last.max(id),
            Err(Error::Config { field: "node", message }) => {
                // The handle holds slots of this tick: it refuses them too.
                assert!(
                    matches!(h.next_id(), Err(Error::Config { field: "node", .. })),
                    "the handle issued after its node id was lost"
                );
                break message;
            }
            Err(e) => panic!("{e}"),
        }
        assert!(std::time::Instant::now() < deadline, "the holder never stopped");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert!(stopped.contains("was taken by another process"), "{stopped}");
    let first: u64 = report(&mut out).parse().unwrap();
    assert!(
        first > last,
        "the newcomer's first ID {first} is not above the holder's last {last}"
    );
    assert!(c.wait().unwrap().success());
    say("ok");
}
