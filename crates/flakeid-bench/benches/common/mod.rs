//! What several benches share and the bench library cannot hold (it would need
//! libc and tokio, the benches' dev-dependencies). Each bench uses a part of it.
#![allow(dead_code)]

use std::time::Duration;

/// The process's CPU time (all threads).
#[cfg(unix)]
pub fn process_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer; the clock exists on every unix.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// tokio's timer, as an async call's sleep.
pub fn tokio_sleep(d: Duration) -> tokio::time::Sleep {
    tokio::time::sleep(d)
}

/// A tokio runtime of one thread with its timer: where a waiting call that held
/// its thread would hold every other task.
pub fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}
