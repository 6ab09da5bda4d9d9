//! The clocks the lease gate reads on every leased ID: the kernel's coarse
//! monotonic and realtime clocks (`CLOCK_MONOTONIC_COARSE`, `CLOCK_REALTIME_COARSE`,
//! advanced every timer tick, 1–4 ms; each a memory read in the vDSO). Both keep
//! moving while the process is stopped, unlike any cache a thread maintains, so
//! they tell a resumed process its window may be over. Each covers the other's
//! blind spot: the monotonic clock is never stepped, but stops while the host is
//! suspended; the realtime clock is put forward by the time slept when the host
//! resumes, but can be stepped back (`docs/leases.md`, "The hot path").
//!
//! On Linux it is read by calling the vDSO's `clock_gettime` directly: the same
//! function libc calls, without libc's wrapper around it (measured here: 3.2 ns a
//! reading instead of 5.5 ns, about a third of a whole `next_id()`). Where the vDSO
//! cannot be looked up (a static musl binary has no `dlopen`), libc's
//! `clock_gettime` is used. Readings are packed as `seconds << 30 | nanoseconds`,
//! which orders them like the time without a multiplication on the hot path.

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

    #[inline(always)]
    pub(crate) fn read_real(_reader: Reader) -> u64 {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        (d.as_secs() << 30) | u64::from(d.subsec_nanos())
    }
}

pub(crate) use imp::{Reader, read, read_real, reader};

/// Milliseconds, packed as readings are (for deadlines computed in ms).
pub(crate) fn packed_ms(ms: u64) -> u64 {
    ((ms / 1000) << 30) | ((ms % 1000) * 1_000_000)
}

fn unpack_ms(p: u64) -> u64 {
    (p >> 30) * 1000 + (p & ((1 << 30) - 1)) / 1_000_000
}

/// A reading in milliseconds (for the heartbeat's bookkeeping, not the hot path).
pub(crate) fn now_ms() -> u64 {
    unpack_ms(read(reader()))
}

/// A `CLOCK_REALTIME_COARSE` reading in Unix milliseconds (the heartbeat's
/// bookkeeping for the suspend check; never the generator's clock, which may be
/// injected).
pub(crate) fn real_now_ms() -> u64 {
    unpack_ms(read_real(reader()))
}

#[cfg(all(test, any(target_os = "linux", target_os = "android")))]
mod tests {
    use super::*;

    #[test]
    fn packs_in_order_and_moves() {
        assert!(packed_ms(1_999) < packed_ms(2_000));
        assert_eq!(packed_ms(2_500), (2 << 30) | 500_000_000);
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
        // The realtime reading is Unix time, a tick behind at most.
        let unix = crate::clock::precise_now_ms();
        let real = real_now_ms();
        assert!(real <= unix + 1 && real + 50 > unix, "{unix} vs {real}");
    }
}
