/* What a host suspend looks like to one process, for the fault suite's `suspend`
 * fault (docs/faults.md, "Lease deadline clock").
 *
 * While a machine is suspended, CLOCK_MONOTONIC (and its COARSE and RAW variants)
 * stops; CLOCK_BOOTTIME keeps counting, and CLOCK_REALTIME is put forward by the
 * time slept when the machine resumes, before any process runs again. This
 * LD_PRELOAD library makes a process see exactly that: every CLOCK_MONOTONIC*
 * reading is moved back by the total "suspended" time, a little-endian int64 of
 * nanoseconds at the start of the file FLAKEID_FAULTS_SUSPEND_FILE (mapped shared,
 * so the harness changes it while the process runs). The harness suspends a
 * process with SIGSTOP, waits, adds the time waited to the file, and sends
 * SIGCONT: to the process, its monotonic clock never moved, while the wall clock
 * and the boot clock did, and so did the lease store's TTL.
 *
 * Two ways in, both covered:
 * - libc's clock_gettime (Rust's std, tokio): interposed below;
 * - the vDSO's own clock_gettime, which flakeid-core's lease gate calls directly
 *   (crates/flakeid-core/src/lease/mono.rs looks it up once with
 *   dlopen("linux-vdso.so.1", RTLD_NOLOAD) and dlsym "__vdso_clock_gettime", or
 *   "__kernel_clock_gettime" on aarch64), bypassing libc. So dlopen is
 *   interposed too: asked for the vDSO, it hands back this library's own handle,
 *   in which dlsym finds the two functions of those names below: wrappers around
 *   the real vDSO function that shift the same clocks. Without this the gate read
 *   the true monotonic clock and the simulation simulated nothing for it.
 *   (Not dlsym: libfaketime, preloaded beside this library, looks up its next
 *   clock_gettime with dlsym(RTLD_NEXT), which resolves relative to its caller;
 *   through a wrapper here it found itself and recursed for ever.)
 *
 * Timers with absolute CLOCK_MONOTONIC deadlines computed from a shifted reading
 * (a futex wait in Rust's std) then expire early; the code around them re-reads
 * the clock and waits again, so they only spin.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int (*gettime_fn)(clockid_t, struct timespec *);
typedef void *(*dlopen_fn)(const char *, int);

static gettime_fn next_clock_gettime;
static gettime_fn real_vdso_gettime;
static dlopen_fn next_dlopen;
static volatile int64_t *offset_ns;

static void shift(clockid_t clk, struct timespec *ts) {
  if (!offset_ns) return;
  if (clk == CLOCK_MONOTONIC || clk == CLOCK_MONOTONIC_COARSE || clk == CLOCK_MONOTONIC_RAW) {
    int64_t off = __atomic_load_n(offset_ns, __ATOMIC_ACQUIRE);
    int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec - off;
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
  }
}

static void resolve(void) {
  if (!next_clock_gettime) next_clock_gettime = (gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
  if (!next_dlopen) next_dlopen = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
  if (!real_vdso_gettime && next_dlopen) {
    void *vdso = next_dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (vdso) {
      void *f = dlsym(vdso, "__vdso_clock_gettime");
      if (!f) f = dlsym(vdso, "__kernel_clock_gettime");
      real_vdso_gettime = (gettime_fn)f;
    }
  }
}

__attribute__((constructor)) static void init(void) {
  resolve();
  const char *path = getenv("FLAKEID_FAULTS_SUSPEND_FILE");
  if (!path) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p != MAP_FAILED) offset_ns = (volatile int64_t *)p;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
  if (!next_clock_gettime) resolve();
  int r = next_clock_gettime(clk, ts);
  if (r == 0) shift(clk, ts);
  return r;
}

/* What dlsym finds in this library's handle, which dlopen hands out for the vDSO. */
static int shifted_vdso_gettime(clockid_t clk, struct timespec *ts) {
  if (!real_vdso_gettime) resolve();
  if (!real_vdso_gettime) return clock_gettime(clk, ts);
  int r = real_vdso_gettime(clk, ts);
  if (r == 0) shift(clk, ts);
  return r;
}
int __vdso_clock_gettime(clockid_t clk, struct timespec *ts) { return shifted_vdso_gettime(clk, ts); }
int __kernel_clock_gettime(clockid_t clk, struct timespec *ts) { return shifted_vdso_gettime(clk, ts); }

void *dlopen(const char *file, int mode) {
  if (!next_dlopen) resolve();
  if (file && strcmp(file, "linux-vdso.so.1") == 0) {
    Dl_info self;
    if (dladdr((void *)shifted_vdso_gettime, &self) && self.dli_fname)
      return next_dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }
  return next_dlopen(file, mode);
}
