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

mod common;
use common::*;
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

/// Reports a refusal with the pid of the holder it names.
fn say_refused(message: &str) {
    let pid = message
        .split("by process ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or("?");
    say(format!("refused by process {pid}"));
}

/// A scenario in a child of its own (in a fresh guard directory): in that child,
/// the directory; here, once the child reported ok, None.
fn scenario(test: &str, dir: &str) -> Option<PathBuf> {
    if std::env::var_os(CHILD).is_some() {
        return Some(PathBuf::from(std::env::var_os(HOST_GUARD_ENV).unwrap()));
    }
    let (mut c, _stdin, mut out) = run_child(test, fresh_dir(dir).to_str().unwrap(), &[]);
    assert_eq!(report(&mut out), "ok");
    assert!(c.wait().unwrap().success());
    None
}

#[test]
fn generators_of_one_process_on_one_node_id_share_its_counter() {
    let Some(_) = scenario("generators_of_one_process_on_one_node_id_share_its_counter", "inproc") else {
        return;
    };
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
            say_refused(&message);
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
    let rounds = rounds("FLAKEID_HANDOVER_ROUNDS", 8); // the modes in turn
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
    let Some(_) = scenario("a_forked_child_neither_keeps_nor_takes_its_parents_guard", "fork") else {
        return;
    };
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
    assert_eq!(
        exit_code(pid),
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
    let Some(dir) = scenario("a_guard_it_cannot_use_never_stops_a_start", "links") else {
        return;
    };
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
    let Some(dir) = scenario("a_removed_guard_file_is_taken_again", "removed") else {
        return;
    };
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
    let Some(dir) = scenario("a_removed_guard_file_taken_by_another_process_stops_the_holder", "lost") else {
        return;
    };
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

/// The node id of [`probe_node`] and [`hold_node`].
const NODE: &str = "FLAKEID_GUARD_NODE";
/// A guard file [`probe_node`] removes first.
const REMOVE: &str = "FLAKEID_GUARD_REMOVE";

fn node_of_env() -> u64 {
    std::env::var(NODE).unwrap().parse().unwrap()
}

/// A child's step: builds on the node id `FLAKEID_GUARD_NODE` and says whether it
/// took it (then, with `FLAKEID_GUARD_OUT`, writes its first ID there and exits)
/// or who refused it (nothing when run by itself).
#[test]
fn probe_node() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    if let Ok(path) = std::env::var(REMOVE) {
        // A cleaner, then this newcomer at once (before the holder's watcher looks).
        std::fs::remove_file(path).unwrap();
    }
    let borrow = std::env::var(HOW).as_deref() == Ok("borrow");
    let built = if borrow {
        Generator::builder(Layout::SNOWFLAKE)
            .node(node_of_env())
            .overflow(Overflow::Borrow)
            .max_borrow_ms(500)
            .build()
    } else {
        node(node_of_env())
    };
    match built {
        Ok(g) => {
            if let Ok(out) = std::env::var(OUT) {
                // Borrowing: a burst ahead of the clock, its last ID written.
                let last = if borrow {
                    *g.next_ids(1_500_000).unwrap().last().unwrap()
                } else {
                    g.next_id().unwrap()
                };
                std::fs::write(out, format!("{last}\n")).unwrap();
            }
            say("took it");
        }
        Err(Error::Config { field: "node", message }) => {
            say_refused(&message);
        }
        Err(e) => say(format!("unexpected: {e}")),
    }
}

/// Asks a new process for `node` on `guard`: its answer.
fn probe(guard: &str, node: u64, env: &[(&str, &str)]) -> String {
    let n = node.to_string();
    let mut all = vec![(NODE, n.as_str())];
    all.extend_from_slice(env);
    let (mut c, _i, mut out) = run_child("probe_node", guard, &all);
    let answer = report(&mut out);
    c.wait().unwrap();
    answer
}

/// The guard file of `node` in `dir`.
fn guard_file(dir: &Path, node: u64) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("node-{node}."))
        })
        .unwrap()
}

/// A child's step: holds `FLAKEID_GUARD_NODE`, then, as `FLAKEID_GUARD_HOW` says,
/// opens and closes its own guard file (`touch`) or forks a child that outlives it
/// (`fork`: the child's pid is reported), and waits to be killed.
#[test]
fn hold_node() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let n = node_of_env();
    let g = node(n).unwrap();
    g.next_id().unwrap();
    let dir = PathBuf::from(std::env::var_os(HOST_GUARD_ENV).unwrap());
    let file = guard_file(&dir, n);
    match std::env::var(HOW).as_deref() {
        Ok("touch") => {
            // What a library, a log rotation or a backup in the holder's process may
            // do: open the file, read or write it, close it.
            drop(std::fs::File::open(&file).unwrap());
            drop(std::fs::OpenOptions::new().append(true).open(&file).unwrap());
            let _ = std::fs::read_to_string(&file).unwrap();
            say("held");
        }
        Ok("fork") => {
            // SAFETY: the child only sleeps until it is killed.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                loop {
                    // SAFETY: waits for a signal.
                    unsafe { libc::pause() };
                }
            }
            say(pid);
        }
        _ => say("held"),
    }
    std::thread::sleep(std::time::Duration::from_secs(120));
    drop(g);
}

/// Holds `node` in a child of its own (as `how` says: [`hold_node`]), asks another
/// process for it, kills the holder and asks again: the holder's pid, what it
/// reported, and the two answers.
fn hold_ask_kill(name: &str, node: u64, how: &str) -> (u32, String, String, String) {
    let dir = fresh_dir(name);
    let guard = dir.to_str().unwrap();
    let n = node.to_string();
    let (mut holder, _i, mut out) = run_child("hold_node", guard, &[(NODE, n.as_str()), (HOW, how)]);
    let said = report(&mut out);
    let before = probe(guard, node, &[]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    (holder.id(), said, before, probe(guard, node, &[]))
}

/// Code in the holder's own process that opens and closes the guard file (a
/// library, a log rotation) leaves the guard held: another process is refused.
#[test]
fn the_holders_own_open_and_close_keeps_the_guard() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let (holder, said, before, after) = hold_ask_kill("touch", 20, "touch");
    assert_eq!(said, "held");
    assert_eq!(before, format!("refused by process {holder}"));
    assert_eq!(after, "took it");
}

/// A forked child that outlives its parent (never execs, never closes anything)
/// does not keep the parent's guard: once the parent is killed, the node id is free.
#[test]
fn a_forked_child_does_not_keep_a_dead_parents_guard() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let (holder, orphan, before, after) = hold_ask_kill("orphan", 21, "fork");
    // SAFETY: ending the grandchild this test made (its parent is gone).
    unsafe { libc::kill(orphan.parse().unwrap(), libc::SIGKILL) };
    assert_eq!(before, format!("refused by process {holder}"));
    assert_eq!(after, "took it", "the parent's forked child kept its guard");
}

/// A child of the crash chain: builds strict on node 7, waiting out the floor
/// its dead predecessor left, and is killed meanwhile.
#[test]
fn wait_on_node_7() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let g = node(7).unwrap();
    say("built");
    std::thread::sleep(std::time::Duration::from_secs(120));
    drop(g);
}

/// The crash chain: A borrows ahead of the clock and is killed; B takes the node
/// id, writes its record and is killed while it waits out A's floor; C starts
/// above every ID of A's all the same (B's record carries A's floor).
#[test]
fn a_crash_while_waiting_out_a_floor_keeps_the_floor() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = fresh_dir("chain");
    let guard = dir.to_str().unwrap();
    let rounds = rounds("FLAKEID_CHAIN_ROUNDS", 2);
    let mut last_max = 0;
    for round in 0..rounds {
        let a_out = dir.join(format!("a-{round}"));
        let c_out = dir.join(format!("c-{round}"));
        let (mut a, _ai, mut ar) = run_child(
            "take_a_turn_on_node_7",
            guard,
            &[(HOW, "hold"), (OUT, a_out.to_str().unwrap())],
        );
        assert_eq!(report(&mut ar), "done");
        a.kill().unwrap();
        a.wait().unwrap();
        let (a_min, a_max) = read_ids(&a_out);
        assert!(a_min > last_max, "round {round}: A starts at {a_min}, below {last_max}");
        // B: killed as soon as its record is in the file (it is waiting out A's floor).
        let (mut b, _bi, _br) = run_child("wait_on_node_7", guard, &[]);
        let file = guard_file(&dir, 7);
        let held_by_b = format!("held {}.", b.id());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !std::fs::read_to_string(&file)
            .unwrap_or_default()
            .starts_with(&held_by_b)
        {
            assert!(std::time::Instant::now() < deadline, "B never took the node id");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        b.kill().unwrap();
        b.wait().unwrap();
        let (mut c, _ci, mut cr) = run_child(
            "take_a_turn_on_node_7",
            guard,
            &[(HOW, "close"), (OUT, c_out.to_str().unwrap())],
        );
        assert_eq!(report(&mut cr), "done");
        c.wait().unwrap();
        let (c_min, c_max) = read_ids(&c_out);
        assert!(
            c_min > a_max,
            "round {round}: C starts at {c_min}, below A's last ID {a_max} (B killed while waiting)"
        );
        last_max = c_max;
    }
}

/// Another user can neither write a node id's guard file (a record that lowers a
/// floor) nor take the node id from its holder, nor after it let go (it could leave
/// no floor in a file it cannot write). Run as root: the other user is `nobody`,
/// in a forked child; the record's own rejection is the unit tests'.
#[test]
fn another_user_cannot_write_the_record_nor_take_the_node_id() {
    let Some(dir) = scenario("another_user_cannot_write_the_record_nor_take_the_node_id", "user") else {
        return;
    };
    let g = node(22).unwrap();
    g.next_id().unwrap();
    let file = guard_file(&dir, 22);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777, 0o644);
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        say("ok");
        return;
    }
    let as_nobody = |released: bool| {
        // This process runs one test: the child is alone with what it touches.
        let code = in_child(|| {
            // SAFETY: dropping to nobody in the child.
            let dropped = unsafe { libc::setgid(65534) == 0 && libc::setuid(65534) == 0 };
            let writes = std::fs::OpenOptions::new().write(true).open(&file).is_ok()
                || std::fs::OpenOptions::new().append(true).open(&file).is_ok();
            let built = node(22);
            // Held: its holder named; released: its owner, whose process ended.
            let named = built.as_ref().err().is_some_and(|e| {
                e.to_string().contains(if released {
                    "last used on this host by a process of uid 0, which has ended"
                } else {
                    "already in use on this host by process"
                })
            });
            let code =
                u8::from(!dropped) | u8::from(writes) << 1 | u8::from(built.is_ok()) << 2 | u8::from(!named) << 3;
            i32::from(code)
        });
        assert_eq!(
            code, 0,
            "released: {released}; bit 0: not nobody; bit 1: nobody could write the record; bit 2: nobody took node 22; \
             bit 3: the refusal named neither the live holder nor the ended owner"
        );
    };
    as_nobody(false);
    let before = std::fs::read_to_string(&file).unwrap();
    g.close();
    as_nobody(true);
    assert_ne!(std::fs::read_to_string(&file).unwrap(), before);
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("released "));
    say("ok");
}

/// A cleaner removes a holder's guard file and a one-shot process takes the node
/// id, borrowing ahead of the clock, and exits: the holder stops issuing meanwhile,
/// then issues again on its own (the watcher takes the file back), above the
/// one-shot's last ID, without a restart.
#[test]
fn a_lost_node_id_issues_again_once_the_other_lets_go() {
    let Some(dir) = scenario("a_lost_node_id_issues_again_once_the_other_lets_go", "recover") else {
        return;
    };
    let g = node(23).unwrap();
    let mut h = g.local();
    let mut before = vec![g.next_id().unwrap()];
    let file = guard_file(&dir, 23);
    let once = dir.join("once");
    let (mut c, _i, mut out) = run_child(
        "probe_node",
        dir.to_str().unwrap(),
        &[
            (NODE, "23"),
            (REMOVE, file.to_str().unwrap()),
            (OUT, once.to_str().unwrap()),
            (HOW, "borrow"),
        ],
    );
    // Issue while the other process runs (what the holder issues before its watcher
    // sees the file gone, and nothing after).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(report(&mut out));
        let _ = std::io::copy(&mut out, &mut std::io::sink());
    });
    let answer = loop {
        if let Ok(a) = rx.try_recv() {
            break a;
        }
        for id in [g.next_id(), h.next_id()].into_iter().flatten() {
            before.push(id);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert_eq!(answer, "took it");
    assert!(c.wait().unwrap().success());
    let theirs: u64 = std::fs::read_to_string(&once).unwrap().trim().parse().unwrap();
    // The one-shot started above everything the holder issued (its lost floor).
    assert!(before.iter().all(|&id| id < theirs));
    // The other process let go: the holder issues again, above its ID.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let again = loop {
        match g.next_id() {
            Ok(id) => break id,
            Err(Error::Config { field: "node", .. }) => {}
            Err(e) => panic!("{e}"),
        }
        assert!(std::time::Instant::now() < deadline, "the holder never issued again");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert!(again > theirs, "{again} after the other process's {theirs}");
    let handle = loop {
        match h.next_id() {
            Ok(id) => break id,
            Err(Error::Config { field: "node", .. }) => std::thread::sleep(std::time::Duration::from_millis(1)),
            Err(e) => panic!("{e}"),
        }
    };
    assert!(handle > theirs && handle != again);
    // It holds the file again: another process is refused.
    let probe = probe(dir.to_str().unwrap(), 23, &[]);
    assert_eq!(probe, format!("refused by process {}", std::process::id()));
    say("ok");
}

/// How long [`stream_node`] issues after its first ID (unset: until its stdin ends).
const FOR_MS: &str = "FLAKEID_GUARD_FOR_MS";

/// A child's step: builds on `FLAKEID_GUARD_NODE` (says `built`) and issues from
/// two threads (the shared path and a handle) until its stdin ends or for
/// `FLAKEID_GUARD_FOR_MS`, refusals counted; then writes every ID it issued to
/// `FLAKEID_GUARD_OUT` (little-endian u64s) and says `done IDS REFUSALS`.
#[test]
fn stream_node() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let g = node(node_of_env()).unwrap();
    say("built");
    let stop = AtomicBool::new(false);
    let refused = AtomicU64::new(0);
    let for_ms = std::env::var(FOR_MS).ok().map(|v| v.parse::<u64>().unwrap());
    let ids: Vec<u64> = std::thread::scope(|s| {
        let workers: Vec<_> = [false, true]
            .into_iter()
            .map(|handle| {
                let (g, stop, refused) = (&g, &stop, &refused);
                s.spawn(move || {
                    let mut h = g.local();
                    let mut ids = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            match if handle { h.next_id() } else { g.next_id() } {
                                Ok(id) => ids.push(id),
                                Err(Error::Config { field: "node", .. }) => {
                                    refused.fetch_add(1, Ordering::Relaxed);
                                }
                                Err(e) => panic!("{e}"),
                            }
                        }
                        // A pace the test can keep every ID of.
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                    ids
                })
            })
            .collect();
        match for_ms {
            Some(ms) => std::thread::sleep(std::time::Duration::from_millis(ms)),
            None => {
                let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            }
        }
        stop.store(true, Ordering::Relaxed);
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
    std::fs::write(std::env::var(OUT).unwrap(), bytes).unwrap();
    say(format!("done {} {}", ids.len(), refused.load(Ordering::Relaxed)));
}

fn read_all_ids(path: &Path) -> Vec<u64> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The paused holder: a holder stopped (`SIGSTOP`) while a cleaner removes its
/// guard file and a newcomer takes the node id and issues; resumed while the
/// newcomer still issues, it takes no new tick before it has looked at its file
/// (the guard's bound), so it stops, then issues again above the newcomer's IDs
/// once the newcomer let go. Not one ID is issued by both.
#[test]
fn a_paused_holder_whose_file_was_removed_issues_nothing_twice() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = fresh_dir("paused");
    let guard = dir.to_str().unwrap();
    let rounds = rounds("FLAKEID_PAUSE_ROUNDS", 2);
    let signal = |pid: u32, sig| {
        // SAFETY: signals our own child.
        assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
    };
    let mut resumed_refusals = 0;
    for round in 0..rounds {
        let (h_out, k_out) = (dir.join(format!("h-{round}")), dir.join(format!("k-{round}")));
        let (mut h, h_in, mut hr) = run_child("stream_node", guard, &[(NODE, "24"), (OUT, h_out.to_str().unwrap())]);
        assert_eq!(report(&mut hr), "built");
        std::thread::sleep(std::time::Duration::from_millis(50));
        signal(h.id(), libc::SIGSTOP);
        std::fs::remove_file(guard_file(&dir, 24)).unwrap();
        let (mut k, _ki, mut kr) = run_child(
            "stream_node",
            guard,
            &[(NODE, "24"), (OUT, k_out.to_str().unwrap()), (FOR_MS, "300")],
        );
        assert_eq!(report(&mut kr), "built", "round {round}: the newcomer was refused");
        std::thread::sleep(std::time::Duration::from_millis(20));
        signal(h.id(), libc::SIGCONT);
        let k_said = report(&mut kr);
        assert!(k.wait().unwrap().success());
        // The holder goes on after the newcomer let go, then stops.
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(h_in);
        let h_said = report(&mut hr);
        assert!(h.wait().unwrap().success());
        let (held, newcomer) = (read_all_ids(&h_out), read_all_ids(&k_out));
        let mut seen = HashSet::new();
        let twice = held.iter().chain(&newcomer).filter(|id| !seen.insert(**id)).count();
        assert_eq!(
            twice, 0,
            "round {round}: {twice} IDs issued twice (holder: {h_said}; newcomer: {k_said})"
        );
        let k_max = *newcomer.iter().max().unwrap();
        assert!(
            held.iter().any(|&id| id > k_max),
            "round {round}: the holder never issued again ({h_said})"
        );
        resumed_refusals += h_said.split(' ').nth(2).unwrap().parse::<u64>().unwrap();
    }
    eprintln!("{rounds} rounds: 0 IDs twice; the resumed holder refused {resumed_refusals} calls in all");
}
