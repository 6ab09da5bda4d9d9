//! The clocks the lease gate reads: the kernel's coarse realtime clock
//! (`CLOCK_REALTIME_COARSE`, advanced every timer tick, 1–4 ms; a memory read in
//! the vDSO; its seconds through the vDSO's `time`) on every leased ID, and off the hot path `CLOCK_BOOTTIME` (never
//! stepped, counts the time a host spends suspended; a full read, ~23 ns here) from
//! which the gate's realtime window is derived, and `CLOCK_MONOTONIC_COARSE`, the
//! clock of [`LeaseWindow::mono_end`](super::LeaseWindow) (`docs/leases.md`, "The
//! hot path").
//!
//! On Linux they are read by calling the vDSO's `clock_gettime` directly: the same
//! function libc calls, without libc's wrapper around it (measured here: 3.2 ns a
//! reading instead of 5.5 ns, about a third of a whole `next_id()`). Where the vDSO
//! cannot be looked up (a static musl binary has no `dlopen`), libc's
//! `clock_gettime` is used. Readings are packed as `seconds << 30 | nanoseconds`,
//! which orders them like the time without a multiplication on the hot path.
//!
//! Elsewhere the monotonic clock is std's `Instant` and the realtime one
//! `SystemTime`, and the boot clock (which must count a host's suspend) is:
//! on macOS and iOS `clock_gettime(CLOCK_MONOTONIC)`, which Apple's kernel
//! advances while asleep (std's `Instant` there is `CLOCK_UPTIME_RAW`, which
//! stops); on Windows `Instant` itself, `QueryPerformanceCounter`, which counts
//! sleep and hibernation. Elsewhere again (the BSDs, where `CLOCK_MONOTONIC`
//! stops during a suspend): `Instant`, a limitation docs/leases.md states.

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use std::sync::OnceLock;

    /// `clock_gettime`'s signature: the vDSO's function or libc's.
    pub(crate) type Reader = unsafe extern "C" fn(libc::clockid_t, *mut libc::timespec) -> libc::c_int;

    unsafe extern "C" fn via_libc(clock: libc::clockid_t, ts: *mut libc::timespec) -> libc::c_int {
        // SAFETY: the caller passes a valid out-pointer.
        unsafe { libc::clock_gettime(clock, ts) }
    }

    /// The vDSO's `clock_gettime`, looked up once. glibc lists the vDSO among the
    /// loaded objects as `linux-vdso.so.1`; the symbol is `__vdso_clock_gettime`
    /// on x86_64 and `__kernel_clock_gettime` on aarch64.
    pub(crate) fn reader() -> Reader {
        static READER: OnceLock<Reader> = OnceLock::new();
        *READER.get_or_init(|| {
            // SAFETY: dlopen with RTLD_NOLOAD only looks the object up (it loads
            // nothing); dlsym returns the address of a function with the signature
            // of `clock_gettime`, or null.
            unsafe {
                let vdso = libc::dlopen(c"linux-vdso.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
                if vdso.is_null() {
                    return via_libc as Reader;
                }
                for name in [c"__vdso_clock_gettime", c"__kernel_clock_gettime"] {
                    let f = libc::dlsym(vdso, name.as_ptr());
                    if !f.is_null() {
                        let f = std::mem::transmute::<*mut libc::c_void, Reader>(f);
                        // Trust it only if it answers like libc does.
                        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                        if f(libc::CLOCK_MONOTONIC_COARSE, &mut ts) == 0 && ts.tv_sec > 0 {
                            return f;
                        }
                    }
                }
                via_libc as Reader
            }
        })
    }

    /// The vDSO's `__vdso_time` signature (or [`via_coarse`]'s): the kernel's `time`
    /// takes and returns a C `long` (`__kernel_old_time_t`), whatever the C library's
    /// `time_t` is (64 bits on 32-bit musl since 1.2).
    pub(crate) type Seconds = unsafe extern "C" fn(*mut libc::c_long) -> libc::c_long;

    /// `CLOCK_REALTIME_COARSE`'s seconds, from the `clock_gettime` reader.
    unsafe extern "C" fn via_coarse(_: *mut libc::c_long) -> libc::c_long {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid out-pointer.
        unsafe { reader()(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        ts.tv_sec as libc::c_long
    }

    /// The vDSO's `time` (x86_64: `__vdso_time`), looked up once: the seconds of
    /// the coarse realtime clock, one load from the kernel's page without the
    /// sequence lock a `timespec` needs (2.2 ns a reading here against 3.1 ns for
    /// `CLOCK_REALTIME_COARSE`). Elsewhere (aarch64 has none; a static binary),
    /// the coarse clock's seconds.
    pub(crate) fn seconds() -> Seconds {
        static SECONDS: OnceLock<Seconds> = OnceLock::new();
        *SECONDS.get_or_init(|| {
            // SAFETY: as in `reader`; dlsym returns a function with the signature
            // of `time`, or null. Called with a null pointer, `time` only returns.
            unsafe {
                let vdso = libc::dlopen(c"linux-vdso.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
                if !vdso.is_null() {
                    let f = libc::dlsym(vdso, c"__vdso_time".as_ptr());
                    if !f.is_null() {
                        let f = std::mem::transmute::<*mut libc::c_void, Seconds>(f);
                        // Trust it only if it reads the clock it stands for.
                        let before = via_coarse(std::ptr::null_mut());
                        let t = f(std::ptr::null_mut());
                        let after = via_coarse(std::ptr::null_mut());
                        if before <= t && t <= after {
                            return f;
                        }
                    }
                }
                via_coarse as Seconds
            }
        })
    }

    /// The coarse realtime clock's seconds (Unix) with `seconds`.
    #[inline(always)]
    pub(crate) fn read_seconds(seconds: Seconds) -> u64 {
        // SAFETY: `time` accepts a null pointer.
        unsafe { seconds(std::ptr::null_mut()) as u64 }
    }

    /// A reading of `CLOCK_MONOTONIC_COARSE` with `reader`, packed.
    #[inline(always)]
    pub(crate) fn read(reader: Reader) -> u64 {
        read_clock(reader, libc::CLOCK_MONOTONIC_COARSE)
    }

    /// A reading of `CLOCK_REALTIME_COARSE` with `reader`, packed (Unix time).
    #[inline(always)]
    pub(crate) fn read_real(reader: Reader) -> u64 {
        read_clock(reader, libc::CLOCK_REALTIME_COARSE)
    }

    /// A reading of `CLOCK_BOOTTIME` with `reader`, packed (a full read: never on
    /// the hot path).
    pub(crate) fn read_boot(reader: Reader) -> u64 {
        read_clock(reader, libc::CLOCK_BOOTTIME)
    }

    #[inline(always)]
    fn read_clock(reader: Reader, clock: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid out-pointer; both coarse clocks always exist on
        // Linux, so the call cannot fail (a zero reading would only close the gate).
        unsafe { reader(clock, &mut ts) };
        ((ts.tv_sec as u64) << 30) | ts.tv_nsec as u64
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    use std::sync::OnceLock;
    use std::time::Instant;

    pub(crate) type Reader = fn() -> (u64, u32);

    fn since_start() -> (u64, u32) {
        static START: OnceLock<Instant> = OnceLock::new();
        // +1 s so that 0 stays "closed".
        let d = START.get_or_init(Instant::now).elapsed() + std::time::Duration::from_secs(1);
        (d.as_secs(), d.subsec_nanos())
    }

    pub(crate) fn reader() -> Reader {
        since_start
    }

    #[inline(always)]
    pub(crate) fn read(reader: Reader) -> u64 {
        let (s, ns) = reader();
        (s << 30) | u64::from(ns)
    }

    pub(crate) type Seconds = fn() -> u64;

    pub(crate) fn seconds() -> Seconds {
        || read_real(since_start) >> 30
    }

    #[inline(always)]
    pub(crate) fn read_seconds(seconds: Seconds) -> u64 {
        seconds()
    }

    /// Apple's `CLOCK_MONOTONIC` counts the time the host sleeps (its
    /// `CLOCK_UPTIME_RAW`, std's `Instant`, does not). Only differences of its
    /// readings are used, so its origin (boot) need not match [`read`]'s.
    #[cfg(target_vendor = "apple")]
    pub(crate) fn read_boot(_reader: Reader) -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid out-pointer; CLOCK_MONOTONIC always exists (macOS ≥ 10.12).
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ((ts.tv_sec as u64) << 30) | ts.tv_nsec as u64
    }

    /// std's `Instant`: on Windows `QueryPerformanceCounter`, which counts sleep
    /// and hibernation. Elsewhere it may not (the gate checks it on every ID here
    /// too, `Gate`'s `REAL_AND_MONO`; docs/leases.md).
    #[cfg(not(target_vendor = "apple"))]
    pub(crate) fn read_boot(reader: Reader) -> u64 {
        read(reader)
    }

    #[inline(always)]
    pub(crate) fn read_real(_reader: Reader) -> u64 {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (d.as_secs() << 30) | u64::from(d.subsec_nanos())
    }
}

pub(crate) use imp::{Reader, Seconds, read, read_boot, read_real, read_seconds, reader, seconds};

/// Milliseconds, packed as readings are (for deadlines computed in ms).
pub(crate) fn packed_ms(ms: u64) -> u64 {
    ((ms / 1000) << 30) | ((ms % 1000) * 1_000_000)
}

fn unpack_ms(p: u64) -> u64 {
    (p >> 30) * 1000 + (p & ((1 << 30) - 1)) / 1_000_000
}

/// A packed reading in nanoseconds (for arithmetic off the hot path).
pub(crate) fn unpack_ns(p: u64) -> u64 {
    (p >> 30)
        .saturating_mul(1_000_000_000)
        .saturating_add(p & ((1 << 30) - 1))
}

/// Nanoseconds, packed as readings are.
pub(crate) fn pack_ns(ns: u64) -> u64 {
    ((ns / 1_000_000_000) << 30) | (ns % 1_000_000_000)
}

/// A reading in milliseconds (for the heartbeat's bookkeeping, not the hot path).
pub(crate) fn now_ms() -> u64 {
    unpack_ms(read(reader()))
}

/// Every OS: the clocks move, agree with std's, and pack in order.
#[cfg(test)]
mod portable_tests {
    use super::*;

    #[test]
    fn each_clock_moves_with_the_wall_clock() {
        let reader = reader();
        let (mono0, boot0, real0) = (read(reader), read_boot(reader), read_real(reader));
        assert!(mono0 > 0 && boot0 > 0 && real0 > 0);
        let wall0 = crate::clock::precise_now_ms();
        std::thread::sleep(std::time::Duration::from_millis(60));
        let (mono1, boot1, real1) = (read(reader), read_boot(reader), read_real(reader));
        let wall1 = crate::clock::precise_now_ms();
        let ms = |a: u64, b: u64| (unpack_ns(b) - unpack_ns(a)) / 1_000_000;
        let wall = wall1 - wall0;
        // Coarse clocks lag by a tick (Linux: ≤ 4 ms; Windows: ≤ 16 ms).
        for (name, d) in [
            ("mono", ms(mono0, mono1)),
            ("boot", ms(boot0, boot1)),
            ("real", ms(real0, real1)),
        ] {
            assert!(d >= 40 && d <= wall + 40, "{name}: {d} ms in {wall} ms");
        }
        // The realtime reading is Unix time, a coarse tick behind at most; its
        // seconds too. Bracketed by two precise readings, so a preemption between
        // the reads widens the window instead of failing the test.
        let before = crate::clock::precise_now_ms();
        let real = unpack_ns(read_real(reader)) / 1_000_000;
        let secs = read_seconds(seconds());
        let after = crate::clock::precise_now_ms();
        assert!(real <= after + 1 && real + 50 > before, "{before}..{after} vs {real}");
        assert!(
            secs * 1000 <= after + 1 && secs * 1000 + 1050 > before,
            "{before}..{after} vs {secs} s"
        );
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;

    #[test]
    fn packs_in_order_and_moves() {
        assert!(packed_ms(1_999) < packed_ms(2_000));
        assert_eq!(packed_ms(2_500), (2 << 30) | 500_000_000);
        assert_eq!(unpack_ns(packed_ms(2_500)), 2_500_000_000);
        assert_eq!(pack_ns(2_500_000_001), packed_ms(2_500) + 1);
        // Boot time runs with the monotonic clock (equal but for suspends).
        let (mono, boot) = (read(reader()), read_boot(reader()));
        assert!(unpack_ns(boot) + 50_000_000 >= unpack_ns(mono), "{mono} vs {boot}");
        let a = now_ms();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = now_ms();
        assert!(b >= a + 10 && b < a + 1000, "{a} -> {b}");
        // The reading libc gives and the direct one agree (to the coarse clock's tick).
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
        let libc_ms = ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000;
        let ours = now_ms();
        assert!(ours >= libc_ms && ours < libc_ms + 50, "{libc_ms} vs {ours}");
        // The realtime reading: portable_tests, on every OS.
    }
}
