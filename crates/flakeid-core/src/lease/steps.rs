//! The step watch: one thread per lease on a store whose leases expire, blocked on a
//! `timerfd` armed with `TFD_TIMER_CANCEL_ON_SET`, which the kernel wakes whenever
//! `CLOCK_REALTIME` is set (`clock_settime`, `settimeofday`, `adjtimex` offsets, a
//! leap second) and when the host resumes from a suspend. Each time, it re-derives
//! the gate's realtime window from boot time ([`Gate::reanchor`]), so that the hot
//! path can read the realtime clock alone (`docs/design.md`, "The lease gate").
//!
//! Where it cannot run (not Linux, no timerfd, no thread), [`StepWatch::start`]
//! gives `None` and the gate checks the monotonic clock on every ID instead.

use super::gate::Gate;
use std::sync::Arc;

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use super::Gate;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::JoinHandle;

    #[derive(Debug)]
    pub(crate) struct StepWatch {
        timer: Arc<OwnedFd>,
        stop: Arc<AtomicBool>,
        thread: Option<JoinHandle<()>>,
        fork_generation: u64,
    }

    /// Arms `fd` for an absolute time that never comes, cancelled when the
    /// realtime clock is set.
    fn arm(fd: &OwnedFd) -> bool {
        let never = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            // Year ~36,800: far past any clock, within the kernel's range.
            it_value: libc::timespec {
                tv_sec: 1 << 40,
                tv_nsec: 0,
            },
        };
        let flags = libc::TFD_TIMER_ABSTIME | libc::TFD_TIMER_CANCEL_ON_SET;
        // SAFETY: a timerfd we own and valid pointers (the old value is not asked for).
        unsafe { libc::timerfd_settime(fd.as_raw_fd(), flags, &never, std::ptr::null_mut()) == 0 }
    }

    /// Makes `fd` expire at once (wakes the watch to stop).
    fn fire(fd: &OwnedFd) {
        let now = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: 0, tv_nsec: 1 },
        };
        // SAFETY: as in `arm`; an absolute time long past expires immediately.
        unsafe { libc::timerfd_settime(fd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &now, std::ptr::null_mut()) };
    }

    impl StepWatch {
        pub(crate) fn start(gate: Arc<Gate>, name: String) -> Option<StepWatch> {
            // SAFETY: plain system call; the result is checked.
            let raw = unsafe { libc::timerfd_create(libc::CLOCK_REALTIME, libc::TFD_CLOEXEC) };
            if raw < 0 {
                return None;
            }
            // SAFETY: a new descriptor that nothing else owns.
            let timer = Arc::new(unsafe { OwnedFd::from_raw_fd(raw) });
            if !arm(&timer) {
                return None;
            }
            let stop = Arc::new(AtomicBool::new(false));
            let (t, s) = (timer.clone(), stop.clone());
            let thread = std::thread::Builder::new()
                .name(name)
                .stack_size(64 * 1024)
                .spawn(move || watch(&t, &s, &gate))
                .ok()?;
            Some(StepWatch {
                timer,
                stop,
                thread: Some(thread),
                fork_generation: crate::fork::generation(),
            })
        }

        /// Stops the thread and waits for it (in a forked child, where the thread
        /// does not exist, only forgets it).
        pub(crate) fn stop(&mut self) {
            if crate::fork::generation() != self.fork_generation {
                self.thread.take();
                return;
            }
            self.stop.store(true, Ordering::SeqCst);
            fire(&self.timer);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }

    impl Drop for StepWatch {
        fn drop(&mut self) {
            self.stop();
        }
    }

    fn watch(timer: &OwnedFd, stop: &AtomicBool, gate: &Gate) {
        let mut buf = [0u8; 8];
        // `stop` is checked after every wake-up and before every wait: a `fire`
        // overwritten by the re-arming below is seen here.
        while !stop.load(Ordering::SeqCst) {
            // SAFETY: an 8-byte buffer for the timerfd's 8-byte expiry count.
            let n = unsafe { libc::read(timer.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::ECANCELED) => {
                        // Re-arm first, then re-derive: a step after the re-arming
                        // wakes us again; one before it is in the readings.
                        if !arm(timer) {
                            gate.check_mono_too();
                            return;
                        }
                    }
                    Some(libc::EINTR) => continue,
                    _ => {
                        gate.check_mono_too();
                        return;
                    }
                }
            }
            gate.reanchor();
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    use super::Gate;
    use std::sync::Arc;

    #[derive(Debug)]
    pub(crate) struct StepWatch;

    impl StepWatch {
        pub(crate) fn start(_gate: Arc<Gate>, _name: String) -> Option<StepWatch> {
            None
        }

        pub(crate) fn stop(&mut self) {}
    }
}

pub(crate) use imp::StepWatch;

/// Starts the watch for `gate` (a store whose leases expire), or, where none can
/// run, makes the gate check the monotonic clock on every ID.
pub(crate) fn watch(gate: &Arc<Gate>, node: u64) -> Option<StepWatch> {
    let w = StepWatch::start(gate.clone(), format!("flakeid-steps-{node}"));
    if w.is_none() {
        gate.check_mono_too();
    }
    w
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;
    use crate::lease::gate::REAL;

    #[test]
    fn starts_and_stops_promptly() {
        let gate = Arc::new(Gate::closed(REAL));
        let started = std::time::Instant::now();
        let mut w = watch(&gate, 7).expect("a timerfd and a thread");
        assert_eq!(gate.clocks(), REAL, "steps are watched: one kernel read per ID");
        w.stop();
        w.stop(); // idempotent
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(Arc::strong_count(&gate), 1, "the thread let the gate go");
    }
}
