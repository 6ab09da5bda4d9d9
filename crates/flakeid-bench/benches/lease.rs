//! `make bench-lease` (`cargo bench -p flakeid-bench --features lease --bench lease`)
//! — what a lease adds to `next_id()`. No store server and no network stack to build.
//!
//! All generators use a layout whose sequence never runs out (22 bits), so the
//! numbers are the cost of one call, not the per-tick cap. Two leased ones, no
//! server needed:
//! * `file`: a file lease — the gate checks the window's wall-clock end (a flock
//!   cannot be given to anyone else while this process lives);
//! * `expiring`: a store whose leases expire, as Redis, PostgreSQL and etcd do (an
//!   in-memory stand-in) — the gate also reads the kernel's coarse monotonic and
//!   realtime clocks;
//! * `state`: a fixed node id with a state file (docs/state.md): the file lease's
//!   gate, no store.
//!
//! Times are this thread's CPU time per call (`CLOCK_THREAD_CPUTIME_ID`), not wall
//! time, so that a busy machine's preemptions do not enter the ratio.
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use flakeid_core::lease::{Acquired, LeaseSpec, LeaseStore};
use flakeid_core::{Generator, Result};
use std::hint::black_box;
// Every generator here takes `host_guard(false)`: the benches build one per case
// on the same node id, some far ahead of the clock, and measure the hot path, which
// the guard is not on.
use std::time::{Duration, Instant};

/// This thread's CPU time: what a call costs, without the time the thread spent
/// preempted. On a machine shared with builds, wall time measured the neighbours
/// (unleased `next_id()` read 17–27 ns instead of ~5 ns under a load of 14 on two
/// cores), and the ratio this bench exists for was noise.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer; the clock exists on every unix.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// `iters` calls of `f`, timed on this thread's CPU clock.
fn cpu_time(iters: u64, mut f: impl FnMut()) -> Duration {
    let start = thread_cpu();
    for _ in 0..iters {
        f();
    }
    thread_cpu() - start
}

/// Grants node 0 and every renewal: what the hot path sees of a healthy network store.
#[derive(Debug)]
struct Expiring;

impl LeaseStore for Expiring {
    fn describe(&self) -> String {
        "in-memory expiring store".into()
    }
    fn namespace(&self) -> &str {
        "bench"
    }
    fn acquire(&mut self, _: u64, _: &str, _: u64, _: Instant) -> Result<Option<Acquired>> {
        // An old namespace: no lock delay.
        Ok(Some(Acquired::new(0, 0, u64::MAX / 2)))
    }
    fn renew(&mut self, _: u64, _: &str, _: u64, _: u64, _: Instant) -> Result<bool> {
        Ok(true)
    }
    fn release(&mut self, _: u64, _: &str, _: u64, _: Instant) -> Result<()> {
        Ok(())
    }
}

/// `ids.next_id()` as bench `name` of `g`, timed on this thread's CPU clock.
fn next_id_on_cpu(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, ids: &Generator) {
    g.bench_function(name, |b| {
        b.iter_custom(|n| {
            cpu_time(n, || {
                black_box(ids.next_id().expect("id"));
            })
        })
    });
}

fn lease(c: &mut Criterion) {
    let wide = flakeid_bench::below_the_cap();
    let mut g = c.benchmark_group("lease");
    g.throughput(Throughput::Elements(1));
    let plain = Generator::builder(wide)
        .node(0)
        .host_guard(false)
        .build()
        .expect("generator");
    next_id_on_cpu(&mut g, "unleased/next_id", &plain);
    // Gone before `state` takes its node id (one counter, one state file).
    drop(plain);
    let dir = std::env::temp_dir().join(format!("flakeid-lease-bench-{}", std::process::id()));
    let leased = Generator::builder(wide)
        .host_guard(false)
        .lease_url(&format!("file://{}", dir.display()))
        .build()
        .expect("leased generator");
    next_id_on_cpu(&mut g, "leased/file/next_id", &leased);
    let expiring = Generator::builder(wide)
        .host_guard(false)
        .lease(LeaseSpec::custom(|| Ok(Box::new(Expiring))))
        .build()
        .expect("leased generator");
    next_id_on_cpu(&mut g, "leased/expiring/next_id", &expiring);
    // The option `state` (docs/state.md): the file lease's gate, a fixed node id.
    let state = Generator::builder(wide)
        .node(0)
        .host_guard(false)
        .state(dir.join("bench.state").to_str().expect("a UTF-8 path"))
        .build()
        .expect("generator with a state file");
    next_id_on_cpu(&mut g, "state/next_id", &state);
    g.finish();
    drop(state);
    drop(leased);
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, lease);
criterion_main!(benches);
