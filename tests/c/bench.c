/* `make bench-c`: the cost of an ID through the C ABI, to hold against the core's
 * Rust benches (`cargo bench -p flakeid-bench`, same cases and names):
 *   strict/next_id            default policy, snowflake: capped at 4,096,000 IDs/s
 *   strict/next_id_below_cap  the same path on a 22-sequence-bit layout (no cap)
 *   borrow/next_id            overflow=borrow, one thread
 *   local/next_id_below_cap   flakeid_local_next_id: the per-thread handle on the
 *                             22-bit layout (`local/next_id_below_cap` in Rust)
 *   borrow/next_id_N_threads  N = 2, 4, 8 pthreads sharing one borrowing generator:
 *                             wall time per ID of all threads together (`threads/borrow/N`
 *                             in the Rust bench); CPU ns per ID beside it, which a busy
 *                             machine does not distort
 *   borrow/fill_1m            flakeid_next_ids of 1,000,000 IDs
 *   seal/aes128, unseal/aes128, seal/aes256   flakeid_sealer_* on snowflake IDs
 *                             (against `cargo bench -p flakeid-seal`)
 * Each case runs 7 times; the median is printed. */
#define _POSIX_C_SOURCE 200809L
#include <flakeid.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 7

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void die(const char *what) {
  fprintf(stderr, "bench: %s: %s\n", what, flakeid_last_error_message());
  exit(1);
}

static flakeid_generator *make(flakeid_layout layout, uint32_t overflow) {
  flakeid_options o = flakeid_options_default();
  o.layout = layout;
  o.node = layout.datacenter_bits + layout.worker_bits > 0 ? 1 : 0;
  o.overflow = overflow;
  o.max_borrow_ms = 24 * 3600 * 1000; /* a bench runs far ahead of the clock */
  o.max_wait_ms = 0;
  flakeid_generator *g = NULL;
  if (flakeid_generator_new(&o, &g) != FLAKEID_OK) die("generator");
  return g;
}

static volatile uint64_t sink;

/* ns per ID of `n` single calls, median of RUNS. */
static double per_call(const flakeid_generator *g, size_t n) {
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    uint64_t id = 0, acc = 0;
    double start = now_s();
    for (size_t i = 0; i < n; i++) {
      if (flakeid_next_id(g, &id) != FLAKEID_OK) die("next_id");
      acc ^= id;
    }
    t[r] = (now_s() - start) * 1e9 / (double)n;
    sink = acc;
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

/* ns per ID of `n` calls of a per-thread handle on `g`, median of RUNS. */
static double per_local_call(const flakeid_generator *g, size_t n) {
  flakeid_local *h = NULL;
  if (flakeid_local_new(g, &h) != FLAKEID_OK) die("local");
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    uint64_t id = 0, acc = 0;
    double start = now_s();
    for (size_t i = 0; i < n; i++) {
      if (flakeid_local_next_id(h, &id) != FLAKEID_OK) die("local_next_id");
      acc ^= id;
    }
    t[r] = (now_s() - start) * 1e9 / (double)n;
    sink = acc;
  }
  flakeid_local_free(h);
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

struct shared_calls {
  const flakeid_generator *g;
  size_t n;
};

static void *calls(void *arg) {
  const struct shared_calls *c = arg;
  uint64_t id = 0, acc = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (flakeid_next_id(c->g, &id) != FLAKEID_OK) die("next_id");
    acc ^= id;
  }
  sink = acc;
  return NULL;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ns per ID of `n` calls split over `threads` pthreads on one generator (wall time,
 * all threads together), median of RUNS; `*cpu_ns` gets the median CPU ns per ID. */
static double per_call_threads(const flakeid_generator *g, size_t n, int threads, double *cpu_ns) {
  double t[RUNS], c[RUNS];
  pthread_t tid[8];
  struct shared_calls work = {g, n / (size_t)threads};
  for (int r = 0; r < RUNS; r++) {
    double start = now_s(), cpu = cpu_s();
    for (int k = 0; k < threads; k++)
      if (pthread_create(&tid[k], NULL, calls, &work) != 0) die("pthread_create");
    for (int k = 0; k < threads; k++) pthread_join(tid[k], NULL);
    t[r] = (now_s() - start) * 1e9 / (double)(work.n * (size_t)threads);
    c[r] = (cpu_s() - cpu) * 1e9 / (double)(work.n * (size_t)threads);
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  qsort(c, RUNS, sizeof c[0], cmp_double);
  *cpu_ns = c[RUNS / 2];
  return t[RUNS / 2];
}

static double per_batch(const flakeid_generator *g, size_t n, size_t rounds) {
  uint64_t *buf = malloc(n * sizeof *buf);
  if (buf == NULL) die("malloc");
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double start = now_s();
    for (size_t k = 0; k < rounds; k++)
      if (flakeid_next_ids(g, buf, n) != FLAKEID_OK) die("next_ids");
    t[r] = (now_s() - start) * 1e9 / (double)(n * rounds);
    sink = buf[n - 1];
  }
  free(buf);
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

/* ns per seal (or unseal) of `n` consecutive IDs, median of RUNS. */
static double per_seal(const flakeid_sealer *s, int unseal, size_t n) {
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    uint64_t out = 0, acc = 0;
    double start = now_s();
    for (size_t i = 0; i < n; i++) {
      flakeid_status st = unseal ? flakeid_sealer_unseal(s, 910499571847892992u + i, &out)
                                 : flakeid_sealer_seal(s, 910499571847892992u + i, &out);
      if (st != FLAKEID_OK) die("seal");
      acc ^= out;
    }
    t[r] = (now_s() - start) * 1e9 / (double)n;
    sink = acc;
  }
  qsort(t, RUNS, sizeof t[0], cmp_double);
  return t[RUNS / 2];
}

static flakeid_sealer *sealer(const flakeid_layout *layout, size_t key_len) {
  uint8_t key[32];
  for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)(0x42 + i);
  flakeid_sealer *s = NULL;
  if (flakeid_sealer_new(key, key_len, layout, NULL, 0, &s) != FLAKEID_OK) die("sealer");
  return s;
}

static void report(const char *name, double ns) {
  printf("%-26s %14.0f IDs/s %9.2f ns/ID\n", name, 1e9 / ns, ns);
}

int main(void) {
  flakeid_layout snowflake, wide;
  if (flakeid_layout_preset("snowflake", &snowflake) != FLAKEID_OK) die("preset");
  if (flakeid_layout_custom(41, 0, 0, 22, 1, snowflake.epoch_ms, FLAKEID_ORDER_TIME_NODE_SEQ, &wide) != FLAKEID_OK)
    die("layout");
  printf("flakeid %s C bench (median of %d runs)\n", flakeid_version(), RUNS);
  flakeid_generator *strict = make(snowflake, FLAKEID_OVERFLOW_WAIT);
  flakeid_generator *below = make(wide, FLAKEID_OVERFLOW_WAIT);
  flakeid_generator *borrow = make(snowflake, FLAKEID_OVERFLOW_BORROW);
  flakeid_generator *filler = make(snowflake, FLAKEID_OVERFLOW_BORROW);
  report("strict/next_id", per_call(strict, 1000000));
  report("strict/next_id_below_cap", per_call(below, 5000000));
  report("borrow/next_id", per_call(borrow, 10000000));
  report("local/next_id_below_cap", per_local_call(below, 10000000));
  for (int threads = 2; threads <= 8; threads *= 2) {
    char name[32];
    double cpu_ns = 0;
    flakeid_generator *shared = make(snowflake, FLAKEID_OVERFLOW_BORROW);
    snprintf(name, sizeof name, "borrow/next_id_%d_threads", threads);
    double ns = per_call_threads(shared, 10000000, threads, &cpu_ns);
    printf("%-26s %14.0f IDs/s %9.2f ns/ID %6.2f CPU ns/ID\n", name, 1e9 / ns, ns, cpu_ns);
    flakeid_generator_free(shared);
  }
  report("borrow/fill_1m", per_batch(filler, 1000000, 5));
  flakeid_sealer *s128 = sealer(&snowflake, 16), *s256 = sealer(&snowflake, 32);
  report("seal/aes128", per_seal(s128, 0, 200000));
  report("unseal/aes128", per_seal(s128, 1, 200000));
  report("seal/aes256", per_seal(s256, 0, 200000));
  flakeid_sealer_free(s128);
  flakeid_sealer_free(s256);
  flakeid_generator_free(strict);
  flakeid_generator_free(below);
  flakeid_generator_free(borrow);
  flakeid_generator_free(filler);
  return 0;
}
