//! `flakeid-lease-holder --url URL [--ttl-ms N] [--node-bits B] [--interval-ms I]`
//! `flakeid-lease-holder --url URL --builds N [--ttl-ms N]`
//!
//! With `--builds N`: builds a leased generator and drops it (releasing the lease)
//! N times in a row in this process, printing `BUILD <i> <ms> <lock delay ms>
//! <node>` for each, and exits: what a build costs, first and again.
//!
//! Builds a leased generator and reports, one line each on stdout:
//! `ACQUIRED <node> <mono_ms>` (or `ERROR <kind> <message>` and exit 2), then
//! `OK <id> <mono_ms>` / `REFUSED <mono_ms> <message>` for one `next_id()` every
//! interval, until stdin closes: then it drops the generator (releasing the lease),
//! prints `RELEASED <mono_ms>` and exits 0. `mono_ms` is CLOCK_MONOTONIC, which the
//! tests read too.
use flakeid_core::{Generator, Layout};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod cmdline;

fn mono_ms() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

fn out(line: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}

fn main() {
    flakeid_lease_net::install();
    let args = cmdline::args();
    let opt = |name: &str| cmdline::value(&args, name);
    let Some(url) = opt("--url") else {
        eprintln!("usage: flakeid-lease-holder --url URL [--ttl-ms N] [--node-bits B] [--interval-ms I]");
        std::process::exit(64);
    };
    let num = |name: &str, default: u64| opt(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    let ttl = num("--ttl-ms", 1500);
    let node_bits = num("--node-bits", 10) as u32;
    let interval = num("--interval-ms", 20);
    let builds = num("--builds", 0);

    let layout = match Layout::builder()
        .time_bits(41)
        .node_bits(node_bits)
        .sequence_bits(12)
        .epoch_ms(Layout::SNOWFLAKE.epoch_ms())
        .build()
    {
        Ok(l) => l,
        Err(e) => {
            out(&format!("ERROR {} {e}", e.kind().name()));
            std::process::exit(2);
        }
    };
    for i in 1..=builds {
        let started = std::time::Instant::now();
        match Generator::builder(layout).lease_url(&url).lease_ttl_ms(ttl).build() {
            Ok(g) => out(&format!(
                "BUILD {i} {:.1} {} {}",
                started.elapsed().as_secs_f64() * 1000.0,
                g.lease_lock_delay_ms().unwrap_or(0),
                g.node()
            )),
            Err(e) => {
                out(&format!("ERROR {} {e}", e.kind().name()));
                std::process::exit(2);
            }
        }
    }
    if builds > 0 {
        return;
    }
    let generator = match Generator::builder(layout).lease_url(&url).lease_ttl_ms(ttl).build() {
        Ok(g) => g,
        Err(e) => {
            out(&format!("ERROR {} {e}", e.kind().name()));
            std::process::exit(2);
        }
    };
    out(&format!("ACQUIRED {} {}", generator.node(), mono_ms()));

    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        let mut sink = [0u8; 64];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        flag.store(true, Ordering::SeqCst);
    });
    while !done.load(Ordering::SeqCst) {
        match generator.next_id() {
            Ok(id) => out(&format!("OK {id} {}", mono_ms())),
            Err(e) => out(&format!("REFUSED {} {e}", mono_ms())),
        }
        std::thread::sleep(Duration::from_millis(interval));
    }
    drop(generator);
    out(&format!("RELEASED {}", mono_ms()));
}
