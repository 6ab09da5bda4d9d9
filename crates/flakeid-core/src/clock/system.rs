//! The system clock ([`SystemClock`]) and its millisecond cache (the module
//! above says why the cache exists); std only.

use super::Clock;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The real clock (`SystemTime`), with the millisecond cache described above.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        cached_now_ms()
    }

    fn now_ms_precise(&self) -> u64 {
        precise_now_ms()
    }
}

impl SystemClock {
    /// Turns the millisecond cache off for this whole process: from now on every
    /// reading goes to the OS (20–70 ns), and no ticker thread runs (one that is
    /// running stops at its next tick; a forked child keeps it off). For a process
    /// whose work per ID dwarfs a clock reading — a network service, some µs per
    /// request — where the ticker's thousand wake-ups a second, each taking a core
    /// from the request path, cost more than the cache saves: `flakeid serve` calls
    /// it (on 2 cores at 4 connections it served 7–10% more requests a second; the
    /// numbers are in `tests/serve/bench.sh`). IDs and every rule stay the same;
    /// only where the generator's clock readings come from changes. There is no way
    /// back.
    pub fn disable_cache() {
        #[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
        {
            // A ticker seeing this stops and clears the cache; readers then find
            // the cache empty and, with no ticker to start, read the OS.
            TICKER.store(TICKER_UNAVAILABLE, Ordering::Release);
            CACHE.store(0, Ordering::Relaxed);
        }
    }
}

/// Unix milliseconds straight from the OS (0 if the clock reads before 1970).
pub fn precise_now_ms() -> u64 {
    let ms = precise_now_ns() / 1_000_000;
    // Help a running ticker: its cache may lag a fresh tick by its wake-up latency.
    // (Never turn a stopped cache — 0 — into a frozen one.)
    let _ = CACHE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
        (c != 0 && ms > c).then_some(ms)
    });
    ms
}

pub(crate) fn precise_now_ns() -> u64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
        Err(_) => 0,
    }
}

/// Cached Unix ms; 0 means "no ticker is running, read the OS".
static CACHE: AtomicU64 = AtomicU64::new(0);
/// Set by readers, cleared by the ticker: lets an idle ticker stop.
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
static TOUCHED: AtomicBool = AtomicBool::new(false);
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
const TICKER_IDLE: u8 = 0;
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
const TICKER_RUNNING: u8 = 1;
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
const TICKER_UNAVAILABLE: u8 = 2;
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
static TICKER: AtomicU8 = AtomicU8::new(TICKER_IDLE);
/// Ticks without a reader before the ticker stops (about one second).
#[cfg_attr(all(target_family = "wasm", target_os = "unknown"), allow(dead_code))]
const IDLE_TICKS_BEFORE_STOP: u32 = 1000;

/// wasm32-unknown-unknown has no threads and no std clock: there, bindings pass
/// their own [`Clock`] (the wasm binding reads `Date.now()`), and the ticker is not
/// compiled in at all.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[inline]
fn cached_now_ms() -> u64 {
    precise_now_ms()
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[inline]
pub(crate) fn cached_now_ms_untouched() -> u64 {
    precise_now_ms()
}

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[inline]
pub(crate) fn touch() {}

/// No cache here: 0, which no fast state's millisecond matches.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[inline(always)]
pub(crate) fn cached_raw() -> u64 {
    0
}

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
#[inline]
fn cached_now_ms() -> u64 {
    let cached = CACHE.load(Ordering::Relaxed);
    if cached != 0 {
        if !TOUCHED.load(Ordering::Relaxed) {
            TOUCHED.store(true, Ordering::Relaxed);
        }
        return cached;
    }
    start_ticker_and_read()
}

/// [`cached_now_ms`] without telling the ticker that it is read: for a caller
/// that calls [`touch`] on every reading that differs from its last one (the
/// per-thread handle's fast path, which then serves the same millisecond). The
/// ticker updates the cache every millisecond, so such a caller touches it on
/// every tick it reads: the ticker never stops under it.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
#[inline]
pub(crate) fn cached_now_ms_untouched() -> u64 {
    let cached = CACHE.load(Ordering::Relaxed);
    if cached != 0 {
        return cached;
    }
    start_ticker_and_read()
}

/// The cache as it is: the ms of the ticker's last update, or 0 (no ticker), for
/// a per-thread handle's fast path to compare with the ms it last served.
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
#[inline(always)]
pub(crate) fn cached_raw() -> u64 {
    CACHE.load(Ordering::Relaxed)
}

/// Tells the ticker that the cache is read (see [`cached_now_ms_untouched`]).
#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
#[inline]
pub(crate) fn touch() {
    if !TOUCHED.load(Ordering::Relaxed) {
        TOUCHED.store(true, Ordering::Relaxed);
    }
}

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
#[cold]
fn start_ticker_and_read() -> u64 {
    let now = precise_now_ns() / 1_000_000;
    // With the cache off (or no thread to be had) every reading comes here: a load
    // and nothing else, not a compare-exchange that would take the line from the
    // other cores. The fork handler is registered before a ticker can exist.
    if TICKER.load(Ordering::Relaxed) != TICKER_IDLE {
        return now;
    }
    crate::fork::register_with(forget_ticker_after_fork);
    if TICKER
        .compare_exchange(TICKER_IDLE, TICKER_RUNNING, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
    {
        TOUCHED.store(true, Ordering::Relaxed);
        let spawned = std::thread::Builder::new()
            .name("flakeid-clock".into())
            .stack_size(64 * 1024)
            .spawn(ticker_loop);
        if spawned.is_err() {
            // No threads (or none to spare): every read goes to the OS.
            TICKER.store(TICKER_UNAVAILABLE, Ordering::Release);
        }
    }
    now
}

#[cfg(not(all(target_family = "wasm", target_os = "unknown")))]
fn ticker_loop() {
    let mut idle = 0u32;
    loop {
        if TICKER.load(Ordering::Acquire) == TICKER_UNAVAILABLE {
            // SystemClock::disable_cache: a value stored after its clearing is cleared here.
            CACHE.store(0, Ordering::Relaxed);
            return;
        }
        let ns = precise_now_ns();
        // `store`, not `fetch_max`: a real rollback must reach the readers so that
        // the generator looks closer (it confirms with a precise read).
        CACHE.store((ns / 1_000_000).max(1), Ordering::Relaxed);
        if TOUCHED.swap(false, Ordering::Relaxed) {
            idle = 0;
        } else {
            idle += 1;
            if idle >= IDLE_TICKS_BEFORE_STOP {
                CACHE.store(0, Ordering::Relaxed);
                TICKER.store(TICKER_IDLE, Ordering::Release);
                return;
            }
        }
        // Wake just after the next millisecond boundary.
        let into_ms = ns % 1_000_000;
        std::thread::sleep(std::time::Duration::from_nanos(1_000_000 - into_ms + 20_000));
    }
}

/// Sets the cache as a ticker would: for a test that must read a given
/// millisecond from it (in a forked child, where no ticker runs to overwrite it).
#[cfg(all(test, unix))]
pub(crate) fn set_cache_for_test(ms: u64) {
    CACHE.store(ms, Ordering::Relaxed);
}

/// Called in a forked child: the parent's ticker thread does not exist here.
#[cfg_attr(not(unix), allow(dead_code))] // no fork (e.g. wasm32): nothing calls it
pub(crate) fn forget_ticker_after_fork() {
    CACHE.store(0, Ordering::Relaxed);
    // A cache turned off (SystemClock::disable_cache) stays off.
    if TICKER.load(Ordering::Relaxed) != TICKER_UNAVAILABLE {
        TICKER.store(TICKER_IDLE, Ordering::Relaxed);
    }
}
