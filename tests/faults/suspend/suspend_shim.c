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
 * Timers with absolute CLOCK_MONOTONIC deadlines computed from a shifted reading
 * (a futex wait in Rust's std) then expire early; the code around them re-reads
 * the clock and waits again, so they only spin. Only for programs that read the
 * clock through libc's clock_gettime (Rust's std, tokio, flakeid-core do).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int (*next_clock_gettime)(clockid_t, struct timespec *);
static volatile int64_t *offset_ns;

__attribute__((constructor)) static void init(void) {
  next_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
  const char *path = getenv("FLAKEID_FAULTS_SUSPEND_FILE");
  if (!path) return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p != MAP_FAILED) offset_ns = (volatile int64_t *)p;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
  int r = next_clock_gettime(clk, ts);
  if (r != 0 || !offset_ns) return r;
  if (clk == CLOCK_MONOTONIC || clk == CLOCK_MONOTONIC_COARSE || clk == CLOCK_MONOTONIC_RAW) {
    int64_t off = __atomic_load_n(offset_ns, __ATOMIC_ACQUIRE);
    int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec - off;
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
  }
  return r;
}
