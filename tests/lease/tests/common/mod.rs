//! Shared scenarios: each starts real holder processes against a real store.
#![allow(dead_code)] // each test binary uses its own subset
#![allow(clippy::unwrap_used)]

use flakeid_core::{Error, Generator, Layout};
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const HOLDER: &str = env!("CARGO_BIN_EXE_flakeid-lease-holder");

/// The scenario table of a store's test file: one `#[test]` per entry,
/// `name: url, serial => scenario;`. Each test returns at once when its store is
/// not configured (`url` is `None`: [`store_url`]), takes the [`serial`] lock when
/// the entry says `serial`, and runs `scenario` with the URL bound to the name given
/// after `|` at the top (`|u|`). Doc comments and attributes pass through.
#[allow(unused_macros)] // lease_tls runs its scenarios in one test each
macro_rules! scenarios {
    (|$u:ident| $($(#[$meta:meta])* $name:ident: $url:expr $(, $serial:ident)? => $run:expr;)*) => {$(
        $(#[$meta])*
        #[test]
        fn $name() {
            let Some($u) = $url else { return };
            $(let _s = $serial();)?
            $run;
        }
    )*};
}
#[allow(unused_imports)]
pub(crate) use scenarios;

/// Scenarios that freeze a store must not overlap others on the same store.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Scenarios that start dozens of holder processes at once (`concurrent_distinct`,
/// `exhaustion`) take turns across every test process: make test-lease runs the
/// store test binaries side by side (tests/lease/run.py stores), and six crowds of
/// up to 32 debug-built holders doing TLS handshakes on 2 cores at the same moment
/// starved some holder's renewal into a timeout (a lease error at build, which is
/// what flakeid should say then, but not what the scenario tests). An exclusive
/// `flock` on `$TMPDIR/flakeid-lease-crowd.lock`, released when the guard drops.
pub struct Crowd(#[allow(dead_code)] std::fs::File);

pub fn crowd() -> Crowd {
    Crowd(flock_file(&std::env::temp_dir().join("flakeid-lease-crowd.lock"), true).expect("the crowd lock"))
}

/// An exclusive `flock` on `path` (created if missing), held until the file drops
/// or the process exits: waits for it when `wait`, else `None` if another holds it.
/// Opened close-on-exec (std's default): a process a test starts does not keep it.
fn flock_file(path: &std::path::Path, wait: bool) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .ok()?;
    let op = if wait {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: flock(2) on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return Some(f);
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// The store URL the test script exported, or `None` (with a message) when the
/// script could not install the server. With `FLAKEID_LEASE_REQUIRE=1` a missing
/// server is a failure.
pub fn store_url(var: &str) -> Option<String> {
    // The network schemes come from flakeid-lease-net, as in the bindings and the CLI.
    flakeid_lease_net::install();
    match std::env::var(var) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            let msg = format!(
                "SKIPPED: {var} is not set — run `make test-lease` (tests/env/testenv.py), which installs and \
                 starts the server on 127.0.0.1"
            );
            if std::env::var("FLAKEID_LEASE_REQUIRE").as_deref() == Ok("1") {
                panic!("{msg}");
            }
            eprintln!("{msg}");
            None
        }
    }
}

pub fn mono_ms() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// A namespace no earlier run has used.
pub fn fresh_ns(tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("t{}-{tag}-{:x}", std::process::id(), nanos & 0xffff_ffff_ffff)
}

pub fn with_ns(base: &str, ns: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}namespace={ns}")
}

pub fn layout(node_bits: u32) -> Layout {
    Layout::builder()
        .time_bits(41)
        .node_bits(node_bits)
        .sequence_bits(12)
        .epoch_ms(Layout::SNOWFLAKE.epoch_ms())
        .build()
        .unwrap()
}

/// One `flakeid-lease-holder` process.
pub struct Holder {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub seen: Vec<String>,
}

impl Holder {
    pub fn spawn(url: &str, ttl_ms: u64, node_bits: u32, interval_ms: u64) -> Holder {
        let mut child = Command::new(HOLDER)
            .args(["--url", url])
            .args(["--ttl-ms", &ttl_ms.to_string()])
            .args(["--node-bits", &node_bits.to_string()])
            .args(["--interval-ms", &interval_ms.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start flakeid-lease-holder");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Holder {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The next line, waiting at most `timeout`.
    pub fn next_line(&mut self, timeout: Duration) -> Option<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(l) => {
                self.seen.push(l.clone());
                Some(l)
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// `Ok(node)` for `ACQUIRED`, `Err(line)` for `ERROR ...`.
    pub fn acquired(&mut self) -> Result<u64, String> {
        let line = self
            .next_line(Duration::from_secs(30))
            .expect("holder printed nothing within 30 s");
        match line.strip_prefix("ACQUIRED ") {
            Some(rest) => Ok(rest.split(' ').next().unwrap().parse().unwrap()),
            None => Err(line),
        }
    }

    /// Every line until the monotonic time `until_mono`.
    pub fn lines_until(&mut self, until_mono: u64) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let now = mono_ms();
            if now >= until_mono {
                return out;
            }
            if let Some(l) = self.next_line(Duration::from_millis(until_mono - now)) {
                out.push(l);
            }
        }
    }

    /// Waits for the first line matching `pred`, at most `timeout`.
    pub fn wait_for(&mut self, timeout: Duration, pred: impl Fn(&str) -> bool) -> Option<String> {
        let end = Instant::now() + timeout;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.next_line(left) {
                Some(l) if pred(&l) => return Some(l),
                Some(_) => {}
                None => return None,
            }
        }
        None
    }

    /// Closes stdin (the holder releases its lease and exits) and waits.
    pub fn release(mut self) -> Vec<String> {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        while let Some(_l) = self.next_line(Duration::from_millis(200)) {}
        assert!(status.success(), "holder exited with {status}: {:?}", self.seen.last());
        assert!(self.seen.iter().any(|l| l.starts_with("RELEASED")), "no RELEASED line");
        std::mem::take(&mut self.seen)
    }

    pub fn kill9(&mut self) {
        signal(self.pid(), libc::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        // Never leave a holder behind (a stopped one would never read EOF).
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn signal(pid: i32, sig: i32) {
    // SAFETY: plain kill(2) on a process this test started.
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig}) failed: {}", std::io::Error::last_os_error());
}

/// Freezes (SIGSTOP) or thaws (SIGCONT) the store process `pid`: a frozen store.
pub fn freeze_process(pid: i32, on: bool) {
    signal(pid, if on { libc::SIGSTOP } else { libc::SIGCONT });
}

/// Freezes (SIGSTOP) or thaws the fixture's redis-server (FLAKEID_TEST_REDIS_PID),
/// which serves both the plain and the TLS URL.
pub fn freeze_redis(on: bool) {
    let pid: i32 = std::env::var("FLAKEID_TEST_REDIS_PID")
        .expect("FLAKEID_TEST_REDIS_PID")
        .parse()
        .unwrap();
    freeze_process(pid, on);
}

/// `(id, mono_ms)` of an `OK` line.
pub fn ok_line(l: &str) -> Option<(u64, u64)> {
    let mut it = l.strip_prefix("OK ")?.split(' ');
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// `mono_ms` of a `REFUSED` line.
pub fn refused_line(l: &str) -> Option<u64> {
    l.strip_prefix("REFUSED ")?.split(' ').next()?.parse().ok()
}

/// An in-process generator on the same store, for probing which id is free.
pub fn probe(url: &str, ttl_ms: u64, node_bits: u32) -> Result<Generator, Error> {
    Generator::builder(layout(node_bits))
        .lease_url(url)
        .lease_ttl_ms(ttl_ms)
        .build()
}

// ---------------------------------------------------------------- scenarios

/// `n` holders started together get `n` distinct ids and issue IDs under them.
pub fn concurrent_distinct(base: &str, n: usize, ttl_ms: u64) {
    let url = with_ns(base, &fresh_ns("many"));
    let _crowd = crowd();
    let mut holders: Vec<Holder> = (0..n).map(|_| Holder::spawn(&url, ttl_ms, 10, 20)).collect();
    let mut nodes: Vec<u64> = holders
        .iter_mut()
        .map(|h| h.acquired().expect("every holder gets an id"))
        .collect();
    for (h, node) in holders.iter_mut().zip(&nodes) {
        let line = h
            .wait_for(Duration::from_secs(10), |l| l.starts_with("OK "))
            .expect("an ID");
        let (id, _) = ok_line(&line).unwrap();
        assert_eq!(layout(10).decompose(id).node, *node, "ID issued under the leased id");
    }
    nodes.sort_unstable();
    let before = nodes.len();
    nodes.dedup();
    assert_eq!(nodes.len(), before, "two holders got the same node id: {nodes:?}");
    assert_eq!(nodes, (0..n as u64).collect::<Vec<_>>(), "lowest free ids first");
    for h in holders {
        h.release();
    }
}

/// A layout with 16 node ids: 16 of 32 holders succeed, the others get a lease
/// error naming the namespace and the range.
pub fn exhaustion(base: &str, ttl_ms: u64) {
    let ns = fresh_ns("full");
    let url = with_ns(base, &ns);
    let _crowd = crowd();
    let mut holders: Vec<Holder> = (0..32).map(|_| Holder::spawn(&url, ttl_ms, 4, 50)).collect();
    let results: Vec<Result<u64, String>> = holders.iter_mut().map(Holder::acquired).collect();
    let mut got: Vec<u64> = results.iter().filter_map(|r| r.as_ref().ok().copied()).collect();
    got.sort_unstable();
    assert_eq!(got, (0..16).collect::<Vec<_>>(), "{results:?}");
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(r.starts_with("ERROR lease "), "{r}");
        assert!(
            r.contains(&ns) && r.contains("0..=15"),
            "message names namespace and range: {r}"
        );
    }
    for (h, r) in holders.into_iter().zip(&results) {
        if r.is_ok() {
            h.release();
        }
    }
}

/// `kill -9` a holder: its id is not handed out before the TTL can have run out
/// (or, with `instant_reuse`, is free at once), and is handed out after; the new
/// holder's IDs come after the dead one's.
pub fn killed_holder(base: &str, ttl_ms: u64, instant_reuse: bool) {
    killed_holder_in(&with_ns(base, &fresh_ns("kill")), ttl_ms, instant_reuse);
}

/// [`killed_holder`] in the namespace of `url`, where the probes may need ids
/// 0 and 1 ready (a store whose ids pay the lock delay each at first use).
pub fn killed_holder_in(url: &str, ttl_ms: u64, instant_reuse: bool) {
    let url = url.to_string();
    let renew_ms = ttl_ms / 3;
    let mut a = Holder::spawn(&url, ttl_ms, 10, 10);
    let node = a.acquired().unwrap();
    let mut last_id = 0;
    for _ in 0..5 {
        let l = a.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
        last_id = ok_line(&l).unwrap().0;
    }
    a.kill9();
    let killed = mono_ms();
    if instant_reuse {
        let g = probe(&url, ttl_ms, 10).unwrap();
        assert_eq!(g.node(), node, "a killed holder's file lock is free at once");
        assert!(g.next_id().unwrap() > last_id);
        return;
    }
    // The store's expiry is at least (last renewal + ttl) >= killed - renew + ttl.
    let safe_until = killed + ttl_ms - renew_ms - 50;
    let mut probes = 0;
    while mono_ms() < safe_until {
        let g = probe(&url, ttl_ms, 10).unwrap();
        assert_ne!(
            g.node(),
            node,
            "id {node} handed out {} ms after kill -9",
            mono_ms() - killed
        );
        probes += 1;
        drop(g);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(probes >= 3, "too few probes ({probes}) to mean anything");
    std::thread::sleep(Duration::from_millis((killed + ttl_ms + 200).saturating_sub(mono_ms())));
    // Stores expire leases on a timer of their own (etcd checks every 500 ms).
    let g = probe_until_node(&url, ttl_ms, node, killed + ttl_ms + 1500);
    assert_eq!(g.node(), node, "id {node} is free once the TTL has passed");
    let first = g.next_id().unwrap();
    assert!(
        first > last_id,
        "the new holder starts after the dead one: {first} <= {last_id}"
    );
}

/// A TLS URL with another CA's file is refused naming the unknown CA, and with
/// `host` (the certificate's 127.0.0.1, as the URL spells it) as localhost, naming
/// the hostname mismatch.
pub fn wrong_ca_and_wrong_host_say_so(url: &str, host: &str, ttl_ms: u64) {
    let e = lease_error_of(&url.replace("/ca.pem", "/other-ca.pem"), ttl_ms);
    assert!(e.contains("unknown CA"), "{e}");
    let e = lease_error_of(&url.replace(host, &host.replace("127.0.0.1", "localhost")), ttl_ms);
    assert!(e.contains("hostname mismatch"), "{e}");
}

/// Two fresh namespaces of one store each give their first holder node id 0.
pub fn namespaces_are_independent(base: &str, ttl_ms: u64) {
    let a = probe(&with_ns(base, &fresh_ns("a")), ttl_ms, 10).unwrap();
    let b = probe(&with_ns(base, &fresh_ns("b")), ttl_ms, 10).unwrap();
    assert_eq!((a.node(), b.node()), (0, 0));
}

/// Probes until one gets `node` or the monotonic clock passes `until_ms`, and
/// returns the last probe: stores expire leases on a timer of their own (etcd
/// checks every 500 ms), so a free id may come a little after its TTL.
fn probe_until_node(url: &str, ttl_ms: u64, node: u64, until_ms: u64) -> Generator {
    loop {
        let g = probe(url, ttl_ms, 10).unwrap();
        if g.node() == node || mono_ms() > until_ms {
            return g;
        }
        drop(g);
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The scenarios every store runs over TLS too: distinct ids for 16 holders,
/// exhaustion, a killed holder, a taken-over one, a frozen store.
pub fn tls_scenarios(url: &str, ttl_ms: u64, freeze: &dyn Fn(bool)) {
    concurrent_distinct(url, 16, ttl_ms);
    exhaustion(url, ttl_ms);
    killed_holder(url, ttl_ms, false);
    taken_over(url, ttl_ms);
    frozen_store(url, ttl_ms, freeze);
}

/// A namespace that kept its data is trusted: its first holder waits out the lock
/// delay once, one `settle` later the next pays none.
pub fn namespace_in_use_pays_no_lock_delay(base: &str, ttl_ms: u64, settle: Duration) {
    let u = with_ns(base, &fresh_ns("warm"));
    let first = probe(&u, ttl_ms, 10).unwrap();
    assert!(
        first.lease_lock_delay_ms().unwrap() >= ttl_ms,
        "a new namespace waits once"
    );
    std::thread::sleep(settle);
    let second = probe(&u, ttl_ms, 10).unwrap();
    assert_eq!(
        second.lease_lock_delay_ms(),
        Some(0),
        "a store that kept its data is trusted"
    );
    assert_ne!(first.node(), second.node());
}

/// Freeze the store: the holder stops issuing before the TTL passes, and resumes
/// once the store answers again. Its IDs increase throughout.
pub fn frozen_store(base: &str, ttl_ms: u64, freeze: &dyn Fn(bool)) {
    let url = with_ns(base, &fresh_ns("freeze"));
    let mut h = Holder::spawn(&url, ttl_ms, 10, 5);
    h.acquired().unwrap();
    h.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
    let t0 = mono_ms();
    freeze(true);
    let during = h.lines_until(t0 + ttl_ms + 300);
    freeze(false);
    let thawed = mono_ms();
    let last_ok = during.iter().filter_map(|l| ok_line(l)).map(|(_, t)| t).max();
    let first_refusal = during.iter().filter_map(|l| refused_line(l)).min();
    assert!(
        last_ok.is_none_or(|t| t < t0 + ttl_ms),
        "an ID was issued at {} ms after the store froze (ttl {ttl_ms})",
        last_ok.unwrap_or(0) - t0
    );
    let refused_at = first_refusal.expect("the holder refused IDs while the store was frozen");
    assert!(
        refused_at < t0 + ttl_ms,
        "refused only {} ms after the freeze",
        refused_at - t0
    );
    let resumed = h
        .wait_for(Duration::from_millis(4 * ttl_ms), |l| l.starts_with("OK "))
        .expect("IDs resume once the store answers");
    let resumed_at = ok_line(&resumed).unwrap().1;
    eprintln!(
        "frozen store: last ID {} ms after freeze, first refusal {} ms, resumed {} ms after thaw",
        last_ok.map_or(-1, |t| t as i64 - t0 as i64),
        refused_at - t0,
        resumed_at.saturating_sub(thawed)
    );
    let seen = h.release();
    let ids: Vec<u64> = seen.iter().filter_map(|l| ok_line(l)).map(|(id, _)| id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "IDs increase");
}

/// Pause a holder past its TTL so another process takes its id: once resumed it
/// never issues another ID, and says why.
pub fn taken_over(base: &str, ttl_ms: u64) {
    let url = with_ns(base, &fresh_ns("takeover"));
    // 1 ms between IDs: on SIGCONT the issuing thread is ready at once, racing the
    // heartbeat's renewal (which would learn of the takeover one round trip later).
    let mut a = Holder::spawn(&url, ttl_ms, 10, 1);
    let node = a.acquired().unwrap();
    a.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
    signal(a.pid(), libc::SIGSTOP);
    let stopped = mono_ms();
    std::thread::sleep(Duration::from_millis(ttl_ms + 300));
    let b = probe_until_node(&url, ttl_ms, node, stopped + ttl_ms + 1500);
    assert_eq!(b.node(), node, "the paused holder's id was taken over");
    let b_first = b.next_id().unwrap();
    signal(a.pid(), libc::SIGCONT);
    let after = a.lines_until(mono_ms() + 2 * ttl_ms);
    let late: Vec<&String> = after
        .iter()
        .filter(|l| ok_line(l).is_some_and(|(_, t)| t > stopped))
        .collect();
    assert!(late.is_empty(), "the taken-over holder issued IDs: {late:?}");
    assert!(
        after
            .iter()
            .any(|l| l.starts_with("REFUSED") && l.contains("taken over")),
        "the holder reports the takeover: {:?}",
        after.last()
    );
    assert!(b.next_id().unwrap() > b_first);
    drop(b);
    a.release();
}

/// The store goes down (`stop`) while a holder issues, then comes back (`start`)
/// with its data: the holder refuses IDs before the TTL has passed since the
/// stop, and afterwards a new generator leases again and issues IDs, none of them
/// equal to the first holder's.
pub fn store_restart(base: &str, ttl_ms: u64, stop: &dyn Fn(), start: &dyn Fn()) {
    let url = with_ns(base, &fresh_ns("restart"));
    let mut h = Holder::spawn(&url, ttl_ms, 10, 5);
    h.acquired().unwrap();
    h.wait_for(Duration::from_secs(5), |l| l.starts_with("OK ")).unwrap();
    let t0 = mono_ms();
    stop();
    let during = h.lines_until(t0 + ttl_ms + 300);
    let last_ok = during.iter().filter_map(|l| ok_line(l)).map(|(_, t)| t).max();
    assert!(
        last_ok.is_none_or(|t| t < t0 + ttl_ms),
        "an ID was issued {} ms after the store went down (ttl {ttl_ms})",
        last_ok.unwrap_or(0) - t0
    );
    assert!(
        during.iter().any(|l| refused_line(l).is_some()),
        "the holder refused IDs while the store was down"
    );
    start();
    let g = probe(&url, ttl_ms, 10).unwrap();
    let mine: Vec<u64> = g.next_ids(1000).unwrap();
    let seen = h.release();
    let theirs: std::collections::HashSet<u64> = seen.iter().filter_map(|l| ok_line(l)).map(|(id, _)| id).collect();
    assert!(
        mine.iter().all(|id| !theirs.contains(id)),
        "the new generator repeated an ID of the old holder"
    );
}

/// A store frozen (SIGSTOP) before a generator is built: `build()` returns a lease
/// error within the documented 10 s acquire bound (plus scheduling slack), never
/// hangs.
pub fn frozen_at_build(base: &str, ttl_ms: u64, freeze: &dyn Fn(bool)) {
    let url = with_ns(base, &fresh_ns("frozenbuild"));
    freeze(true);
    let started = Instant::now();
    let outcome = probe(&url, ttl_ms, 10);
    let took = started.elapsed();
    freeze(false);
    let Err(e) = outcome else {
        panic!("a frozen store gave a lease");
    };
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Lease, "{e}");
    assert!(
        took < Duration::from_secs(12),
        "build() took {took:?} against a frozen store: {e}"
    );
    eprintln!("frozen store at build: lease error after {took:?}: {e}");
}

/// Stops or continues the private PostgreSQL cluster's postmaster and every
/// backend it forked (the pid read from `postmaster.pid`, which a restart changes).
pub fn freeze_postgres(on: bool) {
    let data = std::env::var("FLAKEID_TEST_PG_DATA").expect("FLAKEID_TEST_PG_DATA");
    let pm: i32 = std::fs::read_to_string(format!("{data}/postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut pids = vec![pm];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let after_comm = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let ppid = after_comm.split_whitespace().nth(1).and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(pm) {
            pids.push(pid);
        }
    }
    let sig = if on { libc::SIGSTOP } else { libc::SIGCONT };
    freeze_process(pm, on);
    for pid in &pids[1..] {
        // A backend listed may have exited since (a zombie the postmaster reaps as
        // soon as it runs): only the postmaster must exist.
        // SAFETY: plain kill(2).
        unsafe { libc::kill(*pid, sig) };
    }
}

/// A host whose clock is behind the store's by more than the margin (docs/leases.md,
/// point 6; docs/faults.md, bug 3) is refused at build, with a message naming both
/// clocks and the margin, and gives the id back at once: a generator in step then
/// takes the same id. `lag_ms` is how far this generator's (injected) clock is behind.
pub fn clock_behind_the_store(base: &str, ttl_ms: u64, lag_ms: u64) {
    let url = with_ns(base, &fresh_ns("skew"));
    let behind = flakeid_core::ManualClock::new(flakeid_core::precise_now_ms() - lag_ms);
    let e = Generator::builder(layout(10))
        .lease_url(&url)
        .lease_ttl_ms(ttl_ms)
        .clock(behind)
        .build()
        .map(|g| g.node())
        .unwrap_err();
    let msg = e.to_string();
    assert_eq!(e.kind(), flakeid_core::ErrorKind::Lease, "{msg}");
    let margin = flakeid_core::LeaseTiming::for_ttl(ttl_ms).unwrap().margin_ms;
    for want in [
        "acquired node id 0".to_string(),
        "this host's clock reads".into(),
        "and the store's".into(),
        "ms behind".into(),
        format!("{margin} ms margin"),
    ] {
        assert!(msg.contains(&want), "{want:?} missing from: {msg}");
    }
    // Within the margin: builds, and takes id 0 (the refused build released it).
    let ok = probe(&url, ttl_ms, 10).unwrap();
    assert_eq!(ok.node(), 0);
    ok.next_id().unwrap();
}

/// The message of a lease error from building a generator on `url`.
pub fn lease_error_of(url: &str, ttl_ms: u64) -> String {
    match probe(url, ttl_ms, 10) {
        Ok(g) => panic!("{url}: expected a lease error, got node {}", g.node()),
        Err(e) => {
            assert_eq!(e.kind(), flakeid_core::ErrorKind::Lease, "{e}");
            e.to_string()
        }
    }
}

/// Runs `cmd` to completion and fails the test if it does not succeed.
pub fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits (up to 10 s) until something accepts connections on 127.0.0.1:`port`.
/// `kill -9` a server this test did not start as a `Child` (the fixture's, or one a
/// restart test forgot), and waits until every thread of it has exited: its sockets
/// closed, so a server started again on its ports can bind them. The kill is
/// asynchronous: kill(2) returns before the threads are torn down, and a process's
/// files are closed only when its last thread exits. The thread group's leader may
/// be a zombie (state `Z`) while its other threads still hold the listening socket:
/// a restarted kube-apiserver (Go, many threads) reached bind(2) then, "address
/// already in use". An exited process this test cannot reap stays a zombie, which
/// holds no socket.
pub fn kill9_and_wait(pid: i32) {
    signal(pid, libc::SIGKILL);
    let end = Instant::now() + Duration::from_secs(30);
    let exited = |stat: &str| {
        // pid (comm) STATE ...: comm may hold spaces and parentheses.
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with(['Z', 'X']))
    };
    loop {
        let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return;
        };
        let running: Vec<String> = threads
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("stat")).ok())
            .filter(|stat| !exited(stat))
            .collect();
        if running.is_empty() {
            return;
        }
        assert!(
            Instant::now() < end,
            "pid {pid} still running 30 s after SIGKILL: {running:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server started again by a restart test: waits until `ready()` says so, and
/// panics with the server's exit status and the end of its log if it exits first or
/// is not ready within 90 s.
pub fn wait_restarted(child: &mut std::process::Child, log: &str, what: &str, ready: &dyn Fn() -> bool) {
    let end = Instant::now() + Duration::from_secs(90);
    let tail = || {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    };
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "{what} exited with {status} before it was ready; the end of {log}:\n{}",
                tail()
            );
        }
        assert!(
            Instant::now() < end,
            "{what} not ready within 90 s; the end of {log}:\n{}",
            tail()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn wait_for_port(port: u16, what: &str) {
    let end = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "{what} did not start on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The store at `url` is up but not ready (it refuses or stalls every request):
/// a `build()` started now must still be waiting 1.5 s later, when `ready` makes
/// the store ready, and then succeed (within the 10 s acquire bound) with an ID.
/// Returns how long `build()` took.
pub fn build_waits_until_ready(url: &str, ttl_ms: u64, ready: &dyn Fn()) -> Duration {
    let url = url.to_string();
    let started = Instant::now();
    let building = std::thread::spawn(move || probe(&url, ttl_ms, 10).map(|g| g.next_id()));
    std::thread::sleep(Duration::from_millis(1500));
    let waited = !building.is_finished();
    ready();
    let outcome = building.join().unwrap();
    let took = started.elapsed();
    assert!(waited, "build() returned while the store was not ready: {outcome:?}");
    let id = outcome.unwrap_or_else(|e| panic!("build() once the store was ready: {e}"));
    assert!(id.is_ok(), "{id:?}");
    took
}

/// A server of the one test fixture, tests/env/testenv.py (`testenv.py control
/// KIND`), or its port picker, driven over the script's stdin and stdout, a line
/// each way: `ok key=value ...` or `error <why>`. The same servers, port picker and
/// port locks as every other suite's; the server stops, and its files go, when
/// the handle drops or this process exits (the script's stdin closes).
pub struct Fixture {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
    what: String,
}

const TESTENV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../env/testenv.py");

impl Fixture {
    /// Starts `testenv.py control ARGS...`; returns it and its first reply (where the
    /// server is).
    pub fn start(args: &[&str]) -> (Fixture, String) {
        let what = format!("testenv.py control {}", args.join(" "));
        let mut child = Command::new("python3")
            .arg(TESTENV)
            .arg("control")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut f = Fixture {
            child,
            stdin,
            stdout,
            what,
        };
        let hello = f.reply();
        (f, hello)
    }

    /// Sends one command; returns its `ok ...` reply (an error reply fails the test).
    pub fn call(&mut self, command: &str) -> String {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("open stdin");
        writeln!(stdin, "{command}")
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("{}: cannot send {command:?}: {e}", self.what));
        self.reply()
    }

    fn reply(&mut self) -> String {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap_or(0);
        let line = line.trim_end().to_string();
        assert!(
            n > 0 && (line == "ok" || line.starts_with("ok ")),
            "{}: {line:?}",
            self.what
        );
        line
    }
}

/// The number after `key=` in a fixture's reply.
pub fn reply_field(reply: &str, key: &str) -> u64 {
    reply
        .split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {reply:?}"))
}

impl Drop for Fixture {
    fn drop(&mut self) {
        drop(self.stdin.take()); // end of input: the script stops its server
        let _ = self.child.wait();
    }
}

/// A free TCP port on 127.0.0.1 for a server a test starts: the fixture's picker
/// (below the kernel's ephemeral range, free when checked, reserved against every
/// other process picking at the same time until this one exits).
pub fn free_port() -> u16 {
    static PORTS: Mutex<Option<Fixture>> = Mutex::new(None);
    let mut ports = PORTS.lock().unwrap_or_else(|p| p.into_inner());
    let picker = ports.get_or_insert_with(|| Fixture::start(&["ports"]).0);
    reply_field(&picker.call("port"), "port") as u16
}

/// A private `redis-server` of the fixture without persistence (a cache node), which
/// a test may kill -9 and restart empty on the same port.
pub struct PrivateRedis {
    pub port: u16,
    fixture: Mutex<Fixture>,
}

impl PrivateRedis {
    pub fn start() -> PrivateRedis {
        PrivateRedis::with(&["redis"])
    }

    /// A redis-server that keeps its data across `kill -9` (AOF, fsync always).
    pub fn start_persistent() -> PrivateRedis {
        PrivateRedis::with(&["redis", "--persistent"])
    }

    fn with(args: &[&str]) -> PrivateRedis {
        let (fixture, hello) = Fixture::start(args);
        PrivateRedis {
            port: reply_field(&hello, "port") as u16,
            fixture: Mutex::new(fixture),
        }
    }

    fn call(&self, command: &str) {
        self.fixture.lock().unwrap_or_else(|p| p.into_inner()).call(command);
    }

    pub fn kill9(&self) {
        self.call("kill9");
    }

    pub fn start_again(&self) {
        self.call("start");
    }

    /// Fills the (persistent) server with `keys` keys of 200 bytes and saves them
    /// to an RDB snapshot, then kills it and starts it again loading that snapshot
    /// with a delay of `delay_us` per key: for about `keys * delay_us` it answers
    /// every command with `LOADING`, as a server with a large dataset does after a
    /// restart.
    pub fn restart_loading_slowly(&self, keys: u32, delay_us: u32) {
        self.call(&format!("restart-loading-slowly {keys} {delay_us}"));
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// `kill -9`, then start again empty on the same port.
    pub fn restart_empty(&self) {
        self.call("restart-empty");
    }

    fn cli_command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("redis-cli");
        c.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]).args(args);
        c
    }

    /// Runs a command, which must succeed.
    pub fn cli(&self, args: &[&str]) {
        run(&mut self.cli_command(args));
    }

    /// Runs a command and returns what it printed (empty if redis-cli could not
    /// run); an error reply is output too, e.g. `LOADING …`.
    pub fn cli_output(&self, args: &[&str]) -> String {
        self.cli_command(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }
}

/// Issues with `next_ids(500)` until `stop` is set or the generator refuses (a lost
/// lease): every ID, and whether it stopped on a refusal.
fn issue_until(g: &Generator, stop: &std::sync::atomic::AtomicBool) -> (Vec<u64>, Option<Error>) {
    let mut ids = Vec::new();
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        match g.next_ids(500) {
            Ok(batch) => ids.extend(batch),
            Err(e) => return (ids, Some(e)),
        }
    }
    (ids, None)
}

/// The store forgets everything while A holds a lease and issues (`lose`); B then
/// leases from the forgotten store. Both keep calling `next_ids` for seconds: the
/// IDs of A and B must not intersect, and B must get an id. Returns B's lock delay.
pub fn data_loss(url: &str, ttl_ms: u64, what: &str, lose: &dyn Fn()) -> u64 {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let layout = layout(10);
    let build = || {
        Generator::builder(layout)
            .lease_url(url)
            .lease_ttl_ms(ttl_ms)
            .build()
            .unwrap()
    };
    let a = Arc::new(build());
    let stop = Arc::new(AtomicBool::new(false));
    let (ga, sa) = (Arc::clone(&a), Arc::clone(&stop));
    let a_thread = std::thread::spawn(move || issue_until(&ga, &sa));
    std::thread::sleep(Duration::from_millis(300));
    lose();
    let lost_at = Instant::now();
    let b = Arc::new(build());
    let delay = b.lease_lock_delay_ms().unwrap();
    let (gb, sb) = (Arc::clone(&b), Arc::clone(&stop));
    let b_thread = std::thread::spawn(move || {
        let first = gb.next_id();
        let first_at = Instant::now();
        let (rest, err) = issue_until(&gb, &sb);
        let mut ids: Vec<u64> = first.ok().into_iter().collect();
        ids.extend(rest);
        (ids, err, first_at)
    });
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    let (ids_a, err_a) = a_thread.join().unwrap();
    let (ids_b, err_b, b_first_at) = b_thread.join().unwrap();
    assert_eq!(
        a.node(),
        b.node(),
        "{what}: B must get the forgotten id (the scenario tests reuse)"
    );
    assert!(err_b.is_none(), "{what}: B stopped: {err_b:?}");
    assert!(!ids_b.is_empty(), "{what}: B issued nothing");
    // One thread each, so each list is in issue order: increasing, which the merge
    // below needs (no sort: millions of IDs take seconds in the test build).
    for (who, ids) in [("A", &ids_a), ("B", &ids_b)] {
        assert!(ids.is_sorted_by(|x, y| x < y), "{what}: {who}'s IDs did not increase");
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < ids_a.len() && j < ids_b.len() {
        match ids_a[i].cmp(&ids_b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    eprintln!(
        "{what}: A issued {} IDs ({}), B {} IDs; B's lock delay {delay} ms, first ID {} ms after the loss; {common} in common",
        ids_a.len(),
        err_a
            .as_ref()
            .map_or("until stopped".to_string(), |e| format!("then stopped: {e}")),
        ids_b.len(),
        b_first_at.duration_since(lost_at).as_millis()
    );
    assert_eq!(common, 0, "{what}: A and B issued {common} identical IDs");
    // A renews within a third of its TTL: it must have found the store forgot it.
    assert!(
        matches!(err_a, Some(Error::Lease { .. })),
        "{what}: A must stop once the store forgot its lease, got {err_a:?}"
    );
    delay
}
