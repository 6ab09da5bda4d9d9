//! `flakeid-faults-driver --url URL --dir DIR --tag TAG [--ttl-ms N] [--rate R]
//! [--seed S] [--overflow wait|borrow] [--max-batch N] [--threads N] [--singles-pct P]
//! [--handles 0|1|2]`
//!
//! The fault suite's in-process Rust generator (tests/faults, docs/faults.md). It
//! builds a leased generator, asks it for IDs — runs of single `next_id()` calls
//! and `next_ids(n)` batches, paced to `R` IDs/s — and records every ID it is given,
//! exactly as the Python and Node drivers do:
//!
//! * `DIR/TAG-K.ids`, one file per incarnation K (one built generator; with
//!   `--threads N` > 1, N threads share it, each writing `DIR/TAG-K.tJ.ids` and
//!   asking for `R / N` IDs/s): records of
//!   `t0 u64, t1 u64, count u32, op u32` then `count` IDs as u64, little-endian;
//!   `t0`/`t1` are CLOCK_MONOTONIC ns read before and after the call (op 1 = a run
//!   of singles, 2 = a batch). With `--handles 1` each thread issues through a
//!   per-thread handle of its own (`Generator::local()`); with `--handles 2` the
//!   odd-numbered threads do, beside even-numbered ones calling the generator.
//! * `DIR/TAG.events.jsonl`: `start` (pid, threads, handles), `build`, `acquired`
//!   (node, lock delay), `build_failed`, `refused` (the first error of a run of
//!   errors), `resumed`, `lost`, `releasing` (logged before the lease is given
//!   back), `dropped`, `exit`, each with `t` (CLOCK_MONOTONIC ns).
//!
//! A generator whose lease was taken over (`LeaseState::Lost`) never issues again:
//! the driver drops it and builds a new one (the next incarnation). SIGTERM: release
//! the lease and exit 0. The checker reads the files, never this program.

use flakeid_core::text::json_string;
use flakeid_core::{Generator, Layout, LeaseState, Overflow};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[path = "../../../lease/src/cmdline.rs"]
mod cmdline;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// CLOCK_MONOTONIC in ns: the suite's one timeline, which the harness and the other
/// drivers read too. Read with a system call, not through libc: the clock faults
/// are LD_PRELOAD libraries that change what libc's clock_gettime returns to the
/// generator (libfaketime its wall clock, the suspend shim its monotonic clock),
/// and the record of when things happened must not move with them.
fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer; clock_gettime(2) with a clock id that always exists.
    unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            libc::CLOCK_MONOTONIC,
            &mut ts as *mut libc::timespec,
        )
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// xorshift64*: the op mix is reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// Log-uniform in 1..=max: mostly small batches, some large.
    fn batch(&mut self, max: u64) -> u64 {
        let bits = 64 - max.leading_zeros() as u64;
        let b = self.below(bits) + 1;
        (1 + self.below(1 << b)).min(max)
    }
}

struct Events(File);

impl Events {
    fn log(&self, ev: &str, fields: &str) {
        let sep = if fields.is_empty() { "" } else { "," };
        let line = format!("{{\"t\":{},\"ev\":\"{ev}\"{sep}{fields}}}\n", mono_ns());
        // One write per line: a line is whole in the file even if we are killed.
        let _ = (&self.0).write_all(line.as_bytes());
    }
}

struct Ids {
    out: BufWriter<File>,
    flushed: u64,
}

impl Ids {
    fn record(&mut self, t0: u64, t1: u64, op: u32, ids: &[u64]) {
        let mut head = [0u8; 24];
        head[..8].copy_from_slice(&t0.to_le_bytes());
        head[8..16].copy_from_slice(&t1.to_le_bytes());
        head[16..20].copy_from_slice(&(ids.len() as u32).to_le_bytes());
        head[20..].copy_from_slice(&op.to_le_bytes());
        let _ = self.out.write_all(&head);
        for id in ids {
            let _ = self.out.write_all(&id.to_le_bytes());
        }
        if t1 - self.flushed > 50_000_000 {
            let _ = self.out.flush();
            self.flushed = t1;
        }
    }
}

fn ids_file(path: &str) -> Ids {
    match File::create(path) {
        Ok(f) => Ids {
            out: BufWriter::with_capacity(1 << 16, f),
            flushed: mono_ns(),
        },
        Err(e) => {
            eprintln!("flakeid-faults-driver: {e}");
            std::process::exit(1);
        }
    }
}

struct Opts {
    url: String,
    dir: String,
    tag: String,
    ttl_ms: u64,
    rate: f64,
    seed: u64,
    overflow: Overflow,
    max_batch: u64,
    threads: u64,
    /// Percent of calls that are runs of singles (the rest are batches), in tens.
    singles_pct: u64,
    /// Which threads issue through a per-thread handle (`Generator::local()`):
    /// 0 none, 1 every one, 2 the odd-numbered ones (the others call the generator).
    handles: u64,
}

fn parse_args() -> Result<Opts, String> {
    let args = cmdline::args();
    let opt = |name: &str| cmdline::value(&args, name);
    let num = |name: &str, default: u64| -> Result<u64, String> {
        opt(name).map_or(Ok(default), |v| {
            v.parse().map_err(|_| format!("{name}: not a number: {v}"))
        })
    };
    let need = |name: &str| opt(name).ok_or(format!("{name} is required"));
    Ok(Opts {
        url: need("--url")?,
        dir: need("--dir")?,
        tag: need("--tag")?,
        ttl_ms: num("--ttl-ms", 2000)?,
        rate: num("--rate", 12_000)? as f64,
        seed: num("--seed", 1)?.max(1),
        overflow: opt("--overflow")
            .unwrap_or_else(|| "wait".into())
            .parse::<Overflow>()
            .map_err(|e| e.to_string())?,
        max_batch: num("--max-batch", 2000)?.max(1),
        threads: num("--threads", 1)?.clamp(1, 64),
        singles_pct: num("--singles-pct", 30)?.min(100),
        handles: num("--handles", 0)?.min(2),
    })
}

fn main() {
    // redis://, postgres://, etcd:// lease URLs.
    flakeid_lease_net::install();
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("flakeid-faults-driver: {e}");
            std::process::exit(64);
        }
    };
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGTERM, on_term as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_term as *const () as libc::sighandler_t);
    }
    let events = OpenOptions::new()
        .create(true)
        .append(true)
        .open(format!("{}/{}.events.jsonl", o.dir, o.tag));
    let ev = match events {
        Ok(f) => Events(f),
        Err(e) => {
            eprintln!("flakeid-faults-driver: {}: {e}", o.dir);
            std::process::exit(1);
        }
    };
    ev.log(
        "start",
        &format!(
            "\"pid\":{},\"kind\":\"rust\",\"threads\":{},\"handles\":{}",
            std::process::id(),
            o.threads,
            o.handles
        ),
    );
    let mut rng = Rng(o.seed);
    let mut inc = 0u64;
    while !STOP.load(Ordering::Relaxed) {
        ev.log("build", &format!("\"inc\":{inc}"));
        let built = Generator::builder(Layout::SNOWFLAKE)
            .lease_url(&o.url)
            .lease_ttl_ms(o.ttl_ms)
            .overflow(o.overflow)
            .build();
        let g = match built {
            Ok(g) => g,
            Err(e) => {
                let kind = e.kind().code();
                ev.log(
                    "build_failed",
                    &format!(
                        "\"inc\":{inc},\"kind\":\"{kind}\",\"msg\":{}",
                        json_string(&e.to_string())
                    ),
                );
                std::thread::sleep(Duration::from_millis(250));
                continue;
            }
        };
        ev.log(
            "acquired",
            &format!(
                "\"inc\":{inc},\"node\":{},\"lock_delay_ms\":{}",
                g.node(),
                g.lease_lock_delay_ms().unwrap_or(0)
            ),
        );
        let lost = if o.threads == 1 {
            let mut ids = ids_file(&format!("{}/{}-{inc}.ids", o.dir, o.tag));
            let lost = issue(&g, &o, 0, &mut rng, &mut ids, &ev, &AtomicBool::new(false));
            let _ = ids.out.flush();
            lost
        } else {
            // Threads sharing the generator: each its own file and op mix; the
            // first to see the lease lost stops the others.
            let stop = AtomicBool::new(false);
            let seeds: Vec<u64> = (0..o.threads).map(|_| rng.next() | 1).collect();
            std::thread::scope(|s| {
                let handles: Vec<_> = seeds
                    .iter()
                    .enumerate()
                    .map(|(j, &seed)| {
                        let (g, o, ev, stop) = (&g, &o, &ev, &stop);
                        s.spawn(move || {
                            let mut ids = ids_file(&format!("{}/{}-{inc}.t{j}.ids", o.dir, o.tag));
                            let lost = issue(g, o, j, &mut Rng(seed), &mut ids, ev, stop);
                            let _ = ids.out.flush();
                            stop.store(true, Ordering::Relaxed);
                            lost
                        })
                    })
                    .collect();
                handles.into_iter().any(|h| h.join().unwrap_or(true))
            })
        };
        if lost {
            ev.log("lost", &format!("\"inc\":{inc}"));
        }
        // Before: the store may forget the lease from now on.
        ev.log("releasing", &format!("\"inc\":{inc}"));
        g.release_lease();
        drop(g);
        ev.log("dropped", &format!("\"inc\":{inc}"));
        inc += 1;
    }
    ev.log("exit", "");
}

/// Issues, as thread `thread`, until SIGTERM or `stop` (false) or until the lease is
/// lost (true).
fn issue(g: &Generator, o: &Opts, thread: usize, rng: &mut Rng, ids: &mut Ids, ev: &Events, stop: &AtomicBool) -> bool {
    let rate = o.rate / o.threads as f64;
    let mut buf = vec![0u64; o.max_batch as usize];
    // A token bucket: at most 50 ms of IDs in a burst, no catching up after an outage.
    let burst = rate * 0.05;
    let mut budget = 0.0f64;
    let mut last = mono_ns();
    let mut failing: Option<(String, u64)> = None;
    let mut handle = (o.handles == 1 || (o.handles == 2 && thread % 2 == 1)).then(|| g.local());
    while !STOP.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
        let now = mono_ns();
        budget = (budget + (now - last) as f64 * rate / 1e9).min(burst);
        last = now;
        if budget < 0.0 {
            let wait_ns = (-budget / rate * 1e9) as u64;
            std::thread::sleep(Duration::from_nanos(wait_ns.clamp(200_000, 20_000_000)));
            continue;
        }
        // In tens of percent: the default draws what it always drew from a seed.
        let singles = rng.below(10) < o.singles_pct / 10;
        let n = if singles {
            1 + rng.below(32)
        } else {
            rng.batch(o.max_batch)
        } as usize;
        let t0 = mono_ns();
        // How many IDs the call gave before an error (a run of singles may fail
        // part-way: the IDs before the error were issued and are recorded).
        let (got, error) = if singles {
            let mut got = 0;
            let mut error = None;
            for slot in buf.iter_mut().take(n) {
                let next = match handle.as_mut() {
                    Some(h) => h.next_id(),
                    None => g.next_id(),
                };
                match next {
                    Ok(id) => {
                        *slot = id;
                        got += 1;
                    }
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            (got, error)
        } else {
            let filled = match handle.as_mut() {
                Some(h) => h.fill(&mut buf[..n]),
                None => g.fill(&mut buf[..n]),
            };
            match filled {
                Ok(()) => (n, None),
                Err(e) => (0, Some(e)),
            }
        };
        let t1 = mono_ns();
        if got > 0 {
            ids.record(t0, t1, if singles { 1 } else { 2 }, &buf[..got]);
            budget -= got as f64;
        }
        match error {
            None => {
                if let Some((kind, count)) = failing.take() {
                    ev.log("resumed", &format!("\"kind\":\"{kind}\",\"errors\":{count}"));
                }
            }
            Some(e) => {
                let kind = e.kind().code().to_string();
                match &mut failing {
                    Some((k, count)) if *k == kind => *count += 1,
                    _ => {
                        ev.log(
                            "refused",
                            &format!("\"kind\":\"{kind}\",\"msg\":{}", json_string(&e.to_string())),
                        );
                        failing = Some((kind, 1));
                    }
                }
                if matches!(g.lease_state(), Some(LeaseState::Lost)) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    false
}
