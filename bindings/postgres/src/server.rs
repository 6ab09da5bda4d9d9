//! The server's generator: `flakeid.*` settings (fixed at server start, so every
//! backend agrees), the shared-memory counter, and each backend's generator over it.

use crate::error::{self, Source};
use flakeid_core::{
    Clock, ClockBackwards, Error, Generator, GeneratorBuilder, Layout, Overflow, SharedCounter, precise_now_ms,
};
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PgAtomic, PgSqlErrorCode, pg_shmem_init, pg_sys};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

static LAYOUT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"snowflake"));
static NODE: GucSetting<i32> = GucSetting::<i32>::new(-1);
static DATACENTER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static WORKER: GucSetting<i32> = GucSetting::<i32>::new(-1);
static OVERFLOW: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"wait"));
static CLOCK_BACKWARDS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"error"));
static MAX_BORROW_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_MAX_BORROW_MS as i32);
static MAX_WAIT_MS: GucSetting<i32> = GucSetting::<i32>::new(flakeid_core::DEFAULT_MAX_WAIT_MS as i32);

/// The generator's whole state: the next free `(tick, sequence)` slot.
static COUNTER: PgAtomic<AtomicU64> = unsafe { PgAtomic::new(c"flakeid_counter") };
/// Set in the postmaster when loaded by `shared_preload_libraries`; backends
/// inherit it through fork(). False in a backend that loaded the library itself.
static PRELOADED: AtomicBool = AtomicBool::new(false);
/// This backend's generator, built on first use.
static GENERATOR: OnceLock<Generator<SharedCounter>> = OnceLock::new();
/// The layout of `flakeid.layout`, for functions called without a layout name.
static SERVER_LAYOUT: OnceLock<Layout> = OnceLock::new();

const NOT_PRELOADED_HINT: &str = "add flakeid to shared_preload_libraries in postgresql.conf \
     (shared_preload_libraries = 'flakeid') and restart the server";

#[allow(unexpected_cfgs)] // pg_shmem_init! tests features for other PostgreSQL versions
pub fn init() {
    // SAFETY: reading a flag PostgreSQL sets while it loads preload libraries.
    let preloading = unsafe { pg_sys::process_shared_preload_libraries_in_progress };
    // PostgreSQL refuses (FATAL) PGC_POSTMASTER settings defined after startup: a
    // backend loading the library itself (no generator; the pure functions only
    // read flakeid.layout) defines them as reload-time settings instead.
    define_gucs(preloading);
    if preloading {
        pg_shmem_init!(COUNTER);
        PRELOADED.store(true, Ordering::Relaxed);
        // Refuse to start with settings no backend could use.
        if let Err(err) = builder().and_then(|b| b.build()) {
            error::raise(err, Source::Setting, "");
        }
    }
}

fn define_gucs(preloading: bool) {
    let ctx = || {
        if preloading {
            GucContext::Postmaster
        } else {
            GucContext::Sighup
        }
    };
    let flags = GucFlags::default();
    GucRegistry::define_string_guc(
        c"flakeid.layout",
        c"flakeid layout preset of the server's IDs.",
        c"snowflake, flake, discord, sonyflake, baidu or instagram.",
        &LAYOUT,
        ctx(),
        flags,
    );
    let ids = [
        (c"flakeid.node", c"This server's whole node id (-1: not set).", &NODE),
        (
            c"flakeid.datacenter",
            c"This server's datacenter id (-1: not set).",
            &DATACENTER,
        ),
        (c"flakeid.worker", c"This server's worker id (-1: not set).", &WORKER),
    ];
    for (name, short, setting) in ids {
        GucRegistry::define_int_guc(
            name,
            short,
            c"Every server issuing IDs (primary, replicas, shards) needs its own node id.",
            setting,
            -1,
            i32::MAX,
            ctx(),
            flags,
        );
    }
    GucRegistry::define_string_guc(
        c"flakeid.overflow",
        c"When a tick's sequence is used up: wait or borrow.",
        c"",
        &OVERFLOW,
        ctx(),
        flags,
    );
    GucRegistry::define_string_guc(
        c"flakeid.clock_backwards",
        c"When the clock moves backwards: error, wait or monotonic.",
        c"",
        &CLOCK_BACKWARDS,
        ctx(),
        flags,
    );
    let ms = [
        (
            c"flakeid.max_borrow_ms",
            c"How far overflow = borrow may run ahead of the clock.",
            &MAX_BORROW_MS,
        ),
        (
            c"flakeid.max_wait_ms",
            c"Longest wait for a clock that moved backwards.",
            &MAX_WAIT_MS,
        ),
    ];
    for (name, short, setting) in ms {
        GucRegistry::define_int_guc(name, short, c"", setting, 0, i32::MAX, ctx(), flags | GucFlags::UNIT_MS);
    }
}

fn text(setting: &GucSetting<Option<CString>>) -> String {
    setting
        .get()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A generator builder from the settings; the core checks every value.
fn builder() -> Result<GeneratorBuilder, Error> {
    let layout = Layout::preset(&text(&LAYOUT))?;
    let mut b = Generator::builder(layout)
        .clock(BackendClock)
        .overflow(Overflow::parse(&text(&OVERFLOW))?)
        .clock_backwards(ClockBackwards::parse(&text(&CLOCK_BACKWARDS))?)
        .max_borrow_ms(MAX_BORROW_MS.get() as u64)
        .max_wait_ms(MAX_WAIT_MS.get() as u64);
    let (node, dc, worker) = (NODE.get(), DATACENTER.get(), WORKER.get());
    if node >= 0 {
        b = b.node(node as u64);
    }
    if dc >= 0 {
        b = b.datacenter(dc as u64);
    }
    if worker >= 0 {
        b = b.worker(worker as u64);
    }
    if node < 0 && dc < 0 && worker < 0 {
        b = b.node(0);
    }
    // A cancel request ends a wait for the clock (the core polls this every ~10 ms).
    Ok(b.wait_hook(Arc::new(|| {
        // SAFETY: a sig_atomic_t flag that PostgreSQL's signal handlers set.
        if unsafe { std::ptr::read_volatile(&raw const pg_sys::InterruptPending) } != 0 {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    })))
}

/// This backend's generator over the server's shared counter.
#[inline]
pub fn generator() -> &'static Generator<SharedCounter> {
    match GENERATOR.get() {
        Some(g) => g,
        None => build_generator(),
    }
}

#[cold]
fn build_generator() -> &'static Generator<SharedCounter> {
    if !PRELOADED.load(Ordering::Relaxed) {
        error::raise_code(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "flakeid_next() needs the flakeid library preloaded: its generator lives in shared memory, \
             one per server"
                .into(),
            Some(NOT_PRELOADED_HINT),
        );
    }
    let built = builder().and_then(|b| b.build_shared(COUNTER.get()));
    match built {
        Ok(g) => GENERATOR.get_or_init(|| g),
        Err(err) => error::raise(err, Source::Setting, ""),
    }
}

/// The layout of `flakeid.layout`.
pub fn server_layout() -> Layout {
    *SERVER_LAYOUT
        .get_or_init(|| Layout::preset(&text(&LAYOUT)).unwrap_or_else(|err| error::raise(err, Source::Setting, "")))
}

/// The OS clock, read on every call. The core's default clock serves a cache from a
/// background thread; PostgreSQL backends are single-threaded processes (and there
/// may be hundreds), so each reads the vDSO clock instead.
#[derive(Debug)]
struct BackendClock;

impl Clock for BackendClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        precise_now_ms()
    }
}
