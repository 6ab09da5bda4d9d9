//! The gate: what every leased `next_id()` checks before it issues (`docs/leases.md`,
//! "The hot path"; the argument is `docs/design.md`, "The lease gate").
//!
//! The heartbeat publishes the validity window of the last confirmed renewal; the
//! hot path compares the generator's own clock reading with its wall-clock end, and
//! one `CLOCK_REALTIME_COARSE` reading (a vDSO memory read) with the window on that
//! clock, `[real_start, real_end)`. The window itself is kept on `CLOCK_BOOTTIME`
//! (never stepped, counts a host's suspend), and the realtime window is derived from
//! it: `real_end = real_now + (boot_end − boot_now)`, read back to back. Realtime and
//! boot time differ by an offset that only a step of the realtime clock changes, so:
//!
//! * a stopped process (SIGSTOP, a VM paused) and a suspended host find the
//!   realtime clock moved on when they resume, before any thread runs: the gate is
//!   closed by the first ID's own reading, whatever the heartbeat thread does;
//! * a step of the realtime clock changes the offset. A step back past the window's
//!   start is refused by that same reading (`real_start`); any other step is
//!   corrected by re-deriving the window ([`Gate::reanchor`]) as soon as the kernel
//!   reports it (a `TFD_TIMER_CANCEL_ON_SET` timer, [`super::steps`]), within the
//!   margin that the window already keeps from the store's TTL.
//!
//! Where no step watch runs (not Linux, or the timer could not be set), every ID
//! also checks `CLOCK_MONOTONIC_COARSE`, as the gate did before (two reads).

use super::mono;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// The gate checks the wall-clock end alone: stores that keep the id for as long
/// as this process lives (file locks, [`super::LeaseStore::held_while_alive`]).
pub(crate) const WALL: u8 = 0;
/// Also the realtime window: steps of the realtime clock are watched.
pub(crate) const REAL: u8 = 1;
/// Also the realtime window and the monotonic end: steps are not watched.
pub(crate) const REAL_AND_MONO: u8 = 2;

/// What the hot path reads, published by the heartbeat. `wall_end_ms` or
/// `real_end` 0 = closed (lost, released, or not yet acquired). Cache-line aligned:
/// written only when a window is published, re-derived or closed.
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Gate {
    /// IDs stamped (by the generator's clock) at or past this Unix-ms time are refused.
    wall_end_ms: AtomicU64,
    /// The realtime window in whole seconds, `start_s << 32 | end_s`: a second `t`
    /// with `start_s <= t < end_s` lies inside `[real_start, real_end)` (`end_s` is
    /// the end's second, rounded down). One load and the vDSO's `time` decide every
    /// ID but those of the window's last second, which check the packed ends.
    window_s: AtomicU64,
    /// `CLOCK_REALTIME_COARSE` readings in `[real_start, real_end)` pass; packed as
    /// [`mono::read_real`] packs them. Stored end first, start last (see `store_real`).
    real_start: AtomicU64,
    real_end: AtomicU64,
    /// The window's end on `CLOCK_MONOTONIC_COARSE`, packed: what
    /// [`super::LeaseWindow::mono_end`] shows, and checked per ID in `REAL_AND_MONO`.
    mono_end: AtomicU64,
    /// [`WALL`], [`REAL`] or [`REAL_AND_MONO`].
    clocks: AtomicU8,
    seconds: mono::Seconds,
    reader: mono::Reader,
    /// The window's end on `CLOCK_BOOTTIME` (packed), from which the realtime
    /// window is derived; the lock orders publishing, re-anchoring and closing.
    boot_end: Mutex<u64>,
}

/// The kernel clocks' ends of a window: each clock's reading when the renewal
/// was sent, plus the validity window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ends {
    /// `CLOCK_MONOTONIC_COARSE`, ms.
    pub mono_ms: u64,
    /// `CLOCK_BOOTTIME`, ns.
    pub boot_ns: u64,
}

impl Ends {
    pub(crate) fn now() -> Ends {
        let reader = mono::reader();
        Ends {
            mono_ms: mono::now_ms(),
            boot_ns: mono::unpack_ns(mono::read_boot(reader)),
        }
    }

    pub(crate) fn plus(self, ms: u64) -> Ends {
        Ends {
            mono_ms: self.mono_ms + ms,
            boot_ns: self.boot_ns + ms * 1_000_000,
        }
    }
}

impl Gate {
    /// A closed gate checking `clocks` ([`WALL`], [`REAL`] or [`REAL_AND_MONO`]).
    pub(crate) fn closed(clocks: u8) -> Gate {
        Self::with_readers(clocks, mono::seconds(), mono::reader())
    }

    pub(crate) fn with_readers(clocks: u8, seconds: mono::Seconds, reader: mono::Reader) -> Gate {
        Gate {
            wall_end_ms: AtomicU64::new(0),
            window_s: AtomicU64::new(0),
            seconds,
            real_start: AtomicU64::new(0),
            real_end: AtomicU64::new(0),
            mono_end: AtomicU64::new(0),
            clocks: AtomicU8::new(clocks),
            reader,
            boot_end: Mutex::new(0),
        }
    }

    /// Whether an ID stamped `now_ms` (the generator's own clock reading) may be issued.
    /// The window is loaded before the clock is read: a window published after the
    /// loads is not needed, and one published before them started before the reading.
    #[inline(always)]
    pub(crate) fn allows(&self, now_ms: u64) -> bool {
        let clocks = self.clocks.load(Ordering::Relaxed);
        let wall_end = self.wall_end_ms.load(Ordering::Acquire);
        if clocks == WALL {
            return now_ms < wall_end;
        }
        if clocks == REAL {
            let w = self.window_s.load(Ordering::Acquire);
            let t = mono::read_seconds(self.seconds);
            if now_ms < wall_end && w >> 32 <= t && t < w & 0xffff_ffff {
                return true;
            }
        }
        now_ms < wall_end && self.allows_precisely(clocks)
    }

    /// The window's last second (or a closed gate), and every ID where steps are
    /// not watched: the packed realtime ends, and the monotonic end if unwatched.
    #[inline(never)]
    fn allows_precisely(&self, clocks: u8) -> bool {
        let start = self.real_start.load(Ordering::Acquire);
        let end = self.real_end.load(Ordering::Acquire);
        let mono_end = self.mono_end.load(Ordering::Acquire);
        let real = mono::read_real(self.reader);
        start <= real && real < end && (clocks == REAL || mono::read(self.reader) < mono_end)
    }

    /// Publishes a confirmed renewal's window: `wall_end_ms` on the generator's
    /// clock, `ends` on the kernel's.
    pub(crate) fn open_until(&self, wall_end_ms: u64, ends: Ends) {
        let mut boot_end = self.lock();
        *boot_end = mono::pack_ns(ends.boot_ns);
        self.mono_end.store(mono::packed_ms(ends.mono_ms), Ordering::Release);
        self.store_real(*boot_end);
        self.wall_end_ms.store(wall_end_ms, Ordering::Release);
    }

    /// Derives the realtime window again from the boot-time end, after the realtime
    /// clock was stepped (or at any time: it changes nothing otherwise, but for the
    /// coarse clock's tick). A closed gate stays closed. Only the step watch
    /// (Linux) calls it; elsewhere the gate checks the monotonic end instead.
    #[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
    pub(crate) fn reanchor(&self) {
        let boot_end = self.lock();
        if self.real_end.load(Ordering::Acquire) != 0 {
            self.store_real(*boot_end);
        }
    }

    /// `[real_now, real_now + (boot_end − boot_now))`. The end is stored before the
    /// start, so a reader that sees a new start sees its end (a new end with the old
    /// start is the old window extended by a renewal, or narrowed by a re-anchoring:
    /// both valid).
    fn store_real(&self, boot_end: u64) {
        let real = mono::read_real(self.reader);
        let boot = mono::read_boot(self.reader);
        let left = mono::unpack_ns(boot_end).saturating_sub(mono::unpack_ns(boot));
        let end = if left == 0 {
            0
        } else {
            mono::pack_ns(mono::unpack_ns(real).saturating_add(left))
        };
        self.real_end.store(end, Ordering::Release);
        self.real_start.store(real, Ordering::Release);
        let secs = |p: u64| (p >> 30).min(u64::from(u32::MAX));
        self.window_s.store(secs(real) << 32 | secs(end), Ordering::Release);
    }

    pub(crate) fn close(&self) {
        let _boot_end = self.lock();
        self.window_s.store(0, Ordering::Release);
        self.real_end.store(0, Ordering::Release);
        self.mono_end.store(0, Ordering::Release);
        self.wall_end_ms.store(0, Ordering::Release);
    }

    /// From now on every ID also checks the monotonic end (the step watch stopped).
    pub(crate) fn check_mono_too(&self) {
        if self.clocks.load(Ordering::Relaxed) == REAL {
            self.clocks.store(REAL_AND_MONO, Ordering::Relaxed);
        }
    }

    pub(crate) fn clocks(&self) -> u8 {
        self.clocks.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, u64> {
        self.boot_end.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The window as published now (for [`Generator::lease_window`](crate::Generator::lease_window)).
    pub(crate) fn window(&self) -> super::LeaseWindow {
        let mono_end = self.mono_end.load(Ordering::Acquire);
        super::LeaseWindow {
            wall_end_ms: self.wall_end_ms.load(Ordering::Acquire),
            mono_end: if self.clocks() != WALL || mono_end == 0 {
                mono_end
            } else {
                u64::MAX
            },
        }
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
pub(crate) mod tests {
    //! The gate on a simulated kernel: a clock reader whose three clocks the test
    //! moves as a pause, a host suspend and clock steps move the real ones.
    use super::*;
    use std::cell::Cell;

    const SEC: u64 = 1_000_000_000;
    const MS: u64 = 1_000_000;

    thread_local! {
        /// CLOCK_MONOTONIC_COARSE, CLOCK_REALTIME_COARSE, CLOCK_BOOTTIME, in ns.
        static CLOCKS: Cell<(u64, u64, u64)> = const { Cell::new((0, 0, 0)) };
    }

    unsafe extern "C" fn fake(clock: libc::clockid_t, ts: *mut libc::timespec) -> libc::c_int {
        let (mono, real, boot) = CLOCKS.with(Cell::get);
        let ns = match clock {
            libc::CLOCK_MONOTONIC_COARSE => mono,
            libc::CLOCK_REALTIME_COARSE => real,
            libc::CLOCK_BOOTTIME => boot,
            _ => panic!("the gate read clock {clock}"),
        };
        // SAFETY: the gate passes a valid out-pointer.
        unsafe {
            (*ts).tv_sec = (ns / SEC) as libc::time_t;
            (*ts).tv_nsec = (ns % SEC) as libc::c_long;
        }
        0
    }

    unsafe extern "C" fn fake_seconds(_: *mut libc::time_t) -> libc::time_t {
        (CLOCKS.with(Cell::get).1 / SEC) as libc::time_t
    }

    fn gate(clocks: u8) -> Gate {
        Gate::with_readers(clocks, fake_seconds, fake)
    }

    /// The simulated host: time passing, a pause, a suspend, steps.
    pub(crate) struct Host;

    impl Host {
        fn set(mono: u64, real: u64, boot: u64) {
            CLOCKS.with(|c| c.set((mono, real, boot)));
        }
        fn get() -> (u64, u64, u64) {
            CLOCKS.with(Cell::get)
        }
        /// Time passes (or the process is stopped: the same to its clocks).
        fn pass(ms: u64) {
            let (m, r, b) = Self::get();
            Self::set(m + ms * MS, r + ms * MS, b + ms * MS);
        }
        /// The host sleeps: the monotonic clock stops; at resume the kernel puts
        /// the realtime clock forward by the time slept, boot time counted it.
        fn suspend(ms: u64) {
            let (m, r, b) = Self::get();
            Self::set(m, r + ms * MS, b + ms * MS);
        }
        /// An operator or NTP steps the realtime clock (back: negative).
        fn step(ms: i64) {
            let (m, r, b) = Self::get();
            Self::set(
                m,
                r.checked_add_signed(ms * MS as i64).expect("a step within u64 ns"),
                b,
            );
        }
        fn ends() -> Ends {
            let (m, _, b) = Self::get();
            Ends {
                mono_ms: m / MS,
                boot_ns: b,
            }
        }
    }

    /// A gate opened for `window_ms` from now, on the simulated clocks (the wall
    /// end far away: the kernel clocks decide).
    fn opened(clocks: u8, window_ms: u64) -> Gate {
        Host::set(1_000 * SEC, 1_800_000_000 * SEC, 1_100 * SEC);
        let g = gate(clocks);
        assert!(!g.allows(0), "a new gate is closed");
        g.open_until(u64::MAX, Host::ends().plus(window_ms));
        g
    }

    #[test]
    fn the_window_ends_on_time() {
        for clocks in [REAL, REAL_AND_MONO] {
            let g = opened(clocks, 1_000);
            assert!(g.allows(5));
            Host::pass(999);
            assert!(g.allows(5));
            Host::pass(1);
            assert!(!g.allows(5), "closed at the end");
            g.reanchor();
            assert!(!g.allows(5), "re-anchoring never reopens");
        }
    }

    #[test]
    fn the_seconds_and_the_precise_ends_agree() {
        // The whole-second fast path and the packed ends decide alike, for windows
        // starting anywhere in a second and ending anywhere in one.
        for start_ms in [0, 1, 300, 999] {
            for window_ms in [1, 999, 1_000, 1_001, 1_500, 2_700, 8_000] {
                for clocks in [REAL, REAL_AND_MONO] {
                    Host::set(1_000 * SEC, 1_800_000_000 * SEC + start_ms * MS, 1_100 * SEC);
                    let g = gate(clocks);
                    g.open_until(u64::MAX, Host::ends().plus(window_ms));
                    let mut elapsed = 0;
                    while elapsed < window_ms + 2_000 {
                        assert_eq!(
                            g.allows(5),
                            elapsed < window_ms,
                            "start {start_ms} ms into a second, window {window_ms} ms, {elapsed} ms in, clocks {clocks}"
                        );
                        let step = 1 + elapsed % 97;
                        Host::pass(step);
                        elapsed += step;
                    }
                }
            }
        }
    }

    #[test]
    fn a_paused_process_finds_the_gate_closed() {
        // SIGSTOP for longer than the window: the first ID after SIGCONT reads the
        // moved clock itself (nothing re-anchored, no heartbeat ran).
        for clocks in [REAL, REAL_AND_MONO] {
            let g = opened(clocks, 1_000);
            Host::pass(5_000);
            assert!(!g.allows(5), "clocks {clocks}");
        }
    }

    #[test]
    fn a_suspended_host_finds_the_gate_closed() {
        // The monotonic clock did not move; the realtime clock did, before any
        // thread ran: closed by the first ID's reading, without a re-anchoring.
        for clocks in [REAL, REAL_AND_MONO] {
            let g = opened(clocks, 1_000);
            Host::pass(200);
            Host::suspend(60_000);
            assert!(!g.allows(5), "clocks {clocks}");
            g.reanchor(); // the kernel reports a resume as a clock change too
            assert!(!g.allows(5));
        }
    }

    #[test]
    fn a_step_back_past_the_window_start_closes_at_once() {
        for clocks in [REAL, REAL_AND_MONO] {
            let g = opened(clocks, 1_000);
            Host::pass(300);
            Host::step(-301);
            assert!(!g.allows(5), "a reading below the window's start (clocks {clocks})");
        }
    }

    #[test]
    fn a_step_back_is_corrected_by_reanchoring() {
        let g = opened(REAL, 1_000);
        Host::pass(600);
        Host::step(-500); // less than the time since the window began
        Host::pass(400); // the window's end, in real elapsed time
        // Until the step is reported, the realtime reading alone still passes
        // (docs/design.md, "The lease gate": the margin covers the watch's latency).
        assert!(g.allows(5));
        g.reanchor();
        assert!(!g.allows(5), "re-derived from boot time: ended");

        // Reported before the end: the gate stays open for exactly what is left.
        let g = opened(REAL, 1_000);
        Host::pass(600);
        Host::step(-500);
        g.reanchor();
        Host::pass(399);
        assert!(g.allows(5));
        Host::pass(1);
        assert!(!g.allows(5));

        // Without a step watch, the monotonic end closes it by itself.
        let g = opened(REAL_AND_MONO, 1_000);
        Host::pass(600);
        Host::step(-500);
        Host::pass(400);
        assert!(!g.allows(5));
    }

    #[test]
    fn a_step_forward_keeps_the_window() {
        let g = opened(REAL, 1_000);
        Host::pass(100);
        Host::step(3_600_000);
        assert!(!g.allows(5), "until it is reported, a forward step only closes early");
        g.reanchor();
        assert!(g.allows(5));
        Host::pass(899);
        assert!(g.allows(5));
        Host::pass(1);
        assert!(!g.allows(5));
    }

    #[test]
    fn a_suspend_with_a_step_back_longer_than_the_sleep_is_closed_when_reported() {
        // The two coarse clocks' blind spot (neither sees it); boot time does.
        let g = opened(REAL, 1_000);
        Host::pass(600);
        Host::suspend(10_000);
        Host::step(-10_100);
        assert!(g.allows(5), "the realtime reading alone cannot tell");
        g.reanchor(); // a resume and a step are both reported
        assert!(!g.allows(5));
    }

    #[test]
    fn the_wall_end_binds_in_every_mode() {
        for clocks in [WALL, REAL, REAL_AND_MONO] {
            Host::set(1_000 * SEC, 1_800_000_000 * SEC, 1_100 * SEC);
            let g = gate(clocks);
            g.open_until(1_000, Host::ends().plus(60_000));
            assert!(g.allows(999) && !g.allows(1_000), "clocks {clocks}");
            Host::pass(120_000);
            assert_eq!(g.allows(999), clocks == WALL, "clocks {clocks}");
            g.close();
            assert!(!g.allows(0));
            g.reanchor();
            assert!(!g.allows(0), "closed stays closed");
        }
    }

    #[test]
    fn the_step_watch_stopping_turns_the_monotonic_check_on() {
        let g = opened(REAL, 1_000);
        g.check_mono_too();
        assert_eq!(g.clocks(), REAL_AND_MONO);
        Host::pass(600);
        Host::step(-500);
        Host::pass(400);
        assert!(!g.allows(5));
        let w = gate(WALL);
        w.check_mono_too();
        assert_eq!(w.clocks(), WALL, "a file lease never checks kernel clocks");
    }
}
