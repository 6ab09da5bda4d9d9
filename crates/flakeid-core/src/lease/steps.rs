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

    /// Makes `fd` expire at once (wakes the watch to stop). A relative time: an
    /// absolute one in the past is what a time-translating preload (libfaketime,
    /// with its clock ahead of the real one) turns into a negative time and the
    /// kernel refuses (EINVAL), which left the watch blocked and `stop` joining it
    /// forever (the fault suite, seed 419938474). False if the kernel refused.
    fn fire(fd: &OwnedFd) -> bool {
        let now = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: 0, tv_nsec: 1 },
        };
        // SAFETY: as in `arm`; 1 ns from now.
        unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &now, std::ptr::null_mut()) == 0 }
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
            let woken = fire(&self.timer);
            if let Some(t) = self.thread.take() {
                // Never wait on a thread that nothing will wake: if the timer could
                // not be set, it is left to stop at the next clock step (it holds
                // only the timer and the gate).
                if woken {
                    let _ = t.join();
                }
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

    /// Waits until the thread named `name` sleeps in the kernel: the watch's only
    /// sleep is its read of the timer.
    fn wait_until_blocked(name: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task").flatten() {
                let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                // "pid (comm) S ...": the state follows the last ')'.
                let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                if comm.trim_end() == name && state.is_some_and(|r| r.starts_with('S')) {
                    return;
                }
            }
            assert!(std::time::Instant::now() < deadline, "{name} never blocked");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Stopping wakes a watch already blocked on its timer.
    #[test]
    fn stops_a_watch_blocked_on_its_timer() {
        let gate = Arc::new(Gate::closed(REAL));
        let mut w = watch(&gate, 9).expect("a timerfd and a thread");
        wait_until_blocked("flakeid-steps-9");
        let started = std::time::Instant::now();
        w.stop();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(Arc::strong_count(&gate), 1, "the thread ended and let the gate go");
    }

    /// The watch stops, and its thread ends, in a process whose realtime clock a
    /// preload moves ahead (libfaketime, as the fault suite's clock faults do): an
    /// absolute wake-up time in the past became a negative one there, the kernel
    /// refused it, and `stop` — so every leased generator's drop, and a build that
    /// failed after its lease was taken — waited forever. This test runs
    /// `stops_a_watch_blocked_on_its_timer` in a child under libfaketime and bounds it.
    #[test]
    fn stops_under_a_clock_moved_ahead_by_a_preload() {
        let lib = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
            .iter()
            .map(|d| std::path::Path::new(d).join("faketime/libfaketime.so.1"))
            .find(|p| p.exists())
            .expect("libfaketime is not installed: apt-get install faketime (make setup-rust does)");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "lease::steps::tests::stops_a_watch_blocked_on_its_timer",
                "--test-threads=1",
            ])
            .env("LD_PRELOAD", &lib)
            .env("FAKETIME", "+1s")
            .env("FAKETIME_DONT_RESET", "1")
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("stopping the step watch under libfaketime (+1s) hung for 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            status.success() && stdout.contains("1 passed"),
            "the child test failed: {status}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
