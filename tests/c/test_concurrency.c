/* One generator shared by 4 pthreads (no duplicate, each thread increasing), also
 * with two of them on per-thread handles (flakeid_local_*); seconds
 * of 3-thread contention on the real clock with no error at all (a race
 * can give false "clock moved backwards" errors); and a forked child refusing with
 * FLAKEID_ERR_FORK. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <time.h>
#include <unistd.h>

#include "check.h"

#define THREADS 4

typedef struct {
  const flakeid_generator *g;
  uint64_t *ids;
  size_t n;
  size_t batch; /* 0: flakeid_next_id; else flakeid_next_ids in runs of `batch` */
  int failed;
  int local; /* through a handle of the thread's own (flakeid_local_new) */
} worker;

static void *run(void *arg) {
  worker *w = arg;
  flakeid_local *h = NULL;
  if (w->local && flakeid_local_new(w->g, &h) != FLAKEID_OK) { w->failed = 1; return NULL; }
  for (size_t done = 0; done < w->n;) {
    size_t take = w->batch == 0 ? 1 : (w->n - done < w->batch ? w->n - done : w->batch);
    flakeid_status st;
    if (h != NULL)
      st = w->batch == 0 ? flakeid_local_next_id(h, &w->ids[done]) : flakeid_local_next_ids(h, &w->ids[done], take);
    else
      st = w->batch == 0 ? flakeid_next_id(w->g, &w->ids[done]) : flakeid_next_ids(w->g, &w->ids[done], take);
    if (st != FLAKEID_OK) { w->failed = 1; break; }
    done += take;
  }
  flakeid_local_free(h);
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void shared_generator(uint32_t overflow, size_t per_thread, int locals) {
  flakeid_options o = flakeid_options_default();
  o.overflow = overflow;
  o.datacenter = 3;
  o.worker = 7;
  flakeid_generator *g = NULL;
  CHECK_OK(flakeid_generator_new(&o, &g));
  if (g == NULL) return;
  uint64_t *all = malloc(THREADS * per_thread * sizeof *all);
  worker w[THREADS];
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) {
    /* Two threads call next_id, two take batches of odd sizes. */
    w[i] = (worker){g, all + (size_t)i * per_thread, per_thread, i < 2 ? 0 : (size_t)(37 + 500 * (i - 2)), 0, 0};
    /* With `locals`, threads 1 and 3 issue through handles of their own. */
    w[i].local = locals && i % 2 == 1;
    CHECK(pthread_create(&t[i], NULL, run, &w[i]) == 0, "pthread_create");
  }
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; i++) {
    CHECK(!w[i].failed, "thread %d failed: %s", i, flakeid_last_error_message());
    size_t bad = 0;
    for (size_t k = 1; k < per_thread; k++) bad += w[i].ids[k] <= w[i].ids[k - 1];
    CHECK(bad == 0, "thread %d: %zu IDs not above the previous one", i, bad);
  }
  qsort(all, THREADS * per_thread, sizeof *all, cmp_u64);
  size_t dups = 0, wrong_node = 0;
  for (size_t k = 0; k < THREADS * per_thread; k++) {
    if (k > 0) dups += all[k] == all[k - 1];
    flakeid_parts p;
    if (flakeid_decompose(&o.layout, all[k], &p) != FLAKEID_OK || p.datacenter != 3 || p.worker != 7) wrong_node++;
  }
  CHECK(dups == 0, "%s: %zu duplicate IDs among %zu", overflow ? "borrow" : "strict", dups, THREADS * per_thread);
  CHECK(wrong_node == 0, "%zu IDs with another node", wrong_node);
  free(all);
  flakeid_generator_free(g);
}

void test_threads(void) {
  flakeid_local *none = NULL;
  uint64_t id = 0;
  CHECK_STATUS(flakeid_local_new(NULL, &none), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_local_next_id(NULL, &id), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_local_next_ids(NULL, &id, 1), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_generator_close(NULL), FLAKEID_ERR_NULL);
  /* flakeid_generator_close: the generator and its open handle refuse (config,
   * naming generator); the node id is free at once; the handle is freed first. */
  flakeid_options o = flakeid_options_default();
  o.node = 58;
  flakeid_generator *g = NULL, *again = NULL;
  flakeid_local *h = NULL;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_local_new(g, &h));
  CHECK_OK(flakeid_local_next_id(h, &id));
  CHECK_OK(flakeid_generator_close(g));
  CHECK_OK(flakeid_generator_close(g));
  CHECK_STATUS(flakeid_local_next_id(h, &id), FLAKEID_ERR_CONFIG);
  CHECK(flakeid_last_error_field() != NULL && strcmp(flakeid_last_error_field(), "generator") == 0,
        "a closed generator's handle names generator");
  CHECK_STATUS(flakeid_local_next_ids(h, &id, 1), FLAKEID_ERR_CONFIG);
  CHECK_STATUS(flakeid_next_id(g, &id), FLAKEID_ERR_CONFIG);
  CHECK_OK(flakeid_generator_new(&o, &again));
  flakeid_generator_free(again);
  flakeid_local_free(h);
  flakeid_generator_free(g);
  shared_generator(FLAKEID_OVERFLOW_WAIT, 20000, 0);
  shared_generator(FLAKEID_OVERFLOW_BORROW, 200000, 0);
  shared_generator(FLAKEID_OVERFLOW_WAIT, 20000, 1);
  shared_generator(FLAKEID_OVERFLOW_BORROW, 200000, 1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define STRESS_THREADS 3
#define STRESS_ROUND 2000000

typedef struct {
  const flakeid_generator *g;
  uint64_t *ids;
  size_t n;
  double deadline;
  size_t errors;
  flakeid_status first_error;
} stresser;

static void *stress_run(void *arg) {
  stresser *s = arg;
  s->n = 0;
  while (s->n < STRESS_ROUND) {
    /* Every third call a batch of 100; otherwise one ID. */
    size_t take = s->n % 3 == 0 && STRESS_ROUND - s->n >= 100 ? 100 : 1;
    flakeid_status st = take == 1 ? flakeid_next_id(s->g, &s->ids[s->n]) : flakeid_next_ids(s->g, &s->ids[s->n], take);
    if (st != FLAKEID_OK) {
      if (s->errors++ == 0) s->first_error = st;
      continue;
    }
    s->n += take;
    if ((s->n & 0xffff) < take && now_s() > s->deadline) break;
  }
  return NULL;
}

/* Rounds of 3 threads on one generator until the time is up; fresh threads each
 * round, so a round's IDs are all above the previous round's. */
static void stress(uint32_t overflow, double secs) {
  flakeid_options o = flakeid_options_default();
  o.overflow = overflow;
  o.node = 11;
  flakeid_generator *g = NULL;
  CHECK_OK(flakeid_generator_new(&o, &g));
  if (g == NULL) return;
  uint64_t *all = malloc((size_t)STRESS_THREADS * STRESS_ROUND * sizeof *all);
  double start = now_s();
  uint64_t prev_max = 0, total = 0, errors = 0, dups = 0, backwards = 0, rounds = 0;
  do {
    stresser s[STRESS_THREADS];
    pthread_t t[STRESS_THREADS];
    for (int i = 0; i < STRESS_THREADS; i++) {
      s[i] = (stresser){g, all + (size_t)i * STRESS_ROUND, 0, start + secs, 0, FLAKEID_OK};
      CHECK(pthread_create(&t[i], NULL, stress_run, &s[i]) == 0, "pthread_create");
    }
    size_t n = 0;
    for (int i = 0; i < STRESS_THREADS; i++) {
      pthread_join(t[i], NULL);
      errors += s[i].errors;
      CHECK(s[i].errors == 0, "%s: %zu errors under contention, the first %s", overflow ? "borrow" : "strict",
            s[i].errors, flakeid_status_name(s[i].first_error));
      for (size_t k = 1; k < s[i].n; k++) backwards += s[i].ids[k] <= s[i].ids[k - 1];
      /* Pack this thread's IDs after the previous threads'. */
      memmove(all + n, s[i].ids, s[i].n * sizeof *all);
      n += s[i].n;
    }
    qsort(all, n, sizeof *all, cmp_u64);
    for (size_t k = 1; k < n; k++) dups += all[k] == all[k - 1];
    if (n > 0) {
      backwards += all[0] <= prev_max && rounds > 0;
      prev_max = all[n - 1];
    }
    total += n;
    rounds++;
  } while (now_s() - start < secs);
  CHECK(errors == 0 && dups == 0 && backwards == 0, "%s stress: %" PRIu64 " errors, %" PRIu64 " duplicates, %" PRIu64
        " out of order", overflow ? "borrow" : "strict", errors, dups, backwards);
  fprintf(stderr, "  stress %s: %" PRIu64 " IDs in %" PRIu64 " rounds over %.1f s, 3 threads, no error\n",
          overflow ? "borrow" : "strict", total, rounds, now_s() - start);
  free(all);
  flakeid_generator_free(g);
}

void test_stress(void) {
  const char *env = getenv("FLAKEID_STRESS_SECS");
  double secs = env != NULL ? atof(env) : 3.0;
  if (secs <= 0) secs = 3.0;
  stress(FLAKEID_OVERFLOW_WAIT, secs);
  stress(FLAKEID_OVERFLOW_BORROW, secs);
}

#ifdef _WIN32
void test_fork(void) { printf("  fork: skipped: Windows has no fork()\n"); }
#else
void test_fork(void) {
  flakeid_options o = flakeid_options_default();
  o.node = 5;
  flakeid_generator *g = NULL;
  uint64_t id = 0;
  flakeid_local *h = NULL;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_next_id(g, &id));
  /* A handle holding a run of the parent's slots. */
  CHECK_OK(flakeid_local_new(g, &h));
  CHECK_OK(flakeid_local_next_id(h, &id));
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int bad = 0;
    uint64_t child_id = 1, ids[4] = {0};
    bad |= flakeid_local_next_id(h, &child_id) != FLAKEID_ERR_FORK || child_id != 1;
    bad |= flakeid_local_next_ids(h, ids, 4) != FLAKEID_ERR_FORK;
    bad |= flakeid_next_id(g, &child_id) != FLAKEID_ERR_FORK || child_id != 1;
    bad |= strstr(flakeid_last_error_message(), "fork") == NULL;
    bad |= flakeid_next_ids(g, ids, 4) != FLAKEID_ERR_FORK;
    /* A generator made in the child on the parent's node id is refused while the
       parent's lives (the host guard, naming the parent's pid); on its own, it works. */
    flakeid_generator *mine = NULL;
    char parent[40];
    snprintf(parent, sizeof parent, "by process %ld ", (long)getppid());
    bad |= flakeid_generator_new(&o, &mine) != FLAKEID_ERR_CONFIG || mine != NULL;
    bad |= strstr(flakeid_last_error_message(), parent) == NULL;
    o.node = 6;
    bad |= flakeid_generator_new(&o, &mine) != FLAKEID_OK || flakeid_next_id(mine, &child_id) != FLAKEID_OK;
    flakeid_generator_free(mine);
    if (bad) fprintf(stderr, "FAIL child: %s\n", flakeid_last_error_message());
    _exit(bad ? 1 : 0);
  }
  CHECK(pid > 0, "fork");
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child got FLAKEID_ERR_FORK from the parent's generator and handle, and the host guard's refusal on its node id");
  uint64_t after = 0;
  CHECK_OK(flakeid_next_id(g, &after));
  CHECK(after > id, "the parent's generator goes on");
  CHECK_OK(flakeid_local_next_id(h, &after));
  CHECK(after > id, "the parent's handle goes on");
  flakeid_local_free(h);
  flakeid_generator_free(g);
}
#endif
