/* The 128-bit family through the C ABI beyond the shared vectors: the generator
 * (monotonic within a millisecond and across threads, options by name, close),
 * NULL and short buffers, and a forked child that goes on without repeating the
 * parent's IDs. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/wait.h>
#endif
#include <unistd.h>

#include "check.h"

#define T0 1764000000000ULL

static int cmp16(const void *a, const void *b) { return memcmp(a, b, 16); }

/* A generator on a manual clock at T0 that may borrow `borrow` ms ahead. */
static flakeid_uuid_generator *generator_at(flakeid_manual_clock **clock, const char *borrow) {
  flakeid_uuid_options *o = NULL;
  flakeid_uuid_generator *g = NULL;
  CHECK_OK(flakeid_manual_clock_new(T0, 0, clock));
  CHECK_OK(flakeid_uuid_options_new(&o));
  CHECK_OK(flakeid_uuid_options_set(o, "max_borrow_ms", borrow));
  CHECK_OK(flakeid_uuid_options_set_clock(o, *clock));
  CHECK_OK(flakeid_uuid_generator_new(o, &g));
  flakeid_uuid_options_free(o);
  return g;
}

static void test_monotonic_in_one_millisecond(void) {
  flakeid_manual_clock *clock = NULL;
  flakeid_uuid_generator *g = generator_at(&clock, "10");
  enum { N = 70000 };
  uint8_t(*ids)[16] = malloc(sizeof *ids * N);
  if (ids == NULL) return;
  int increasing = 1;
  uint64_t first_ms = 0, last_ms = 0;
  for (size_t i = 0; i < N; i++) {
    CHECK_OK(flakeid_uuid_next(g, ids[i], 16));
    if (i > 0 && memcmp(ids[i - 1], ids[i], 16) >= 0) increasing = 0;
  }
  CHECK(increasing, "70,000 UUIDs of one millisecond strictly increase");
  CHECK_OK(flakeid_uuid7_timestamp_ms(ids[0], 16, &first_ms));
  CHECK_OK(flakeid_uuid7_timestamp_ms(ids[N - 1], 16, &last_ms));
  CHECK(first_ms == T0 && last_ms == T0 + 1, "65,536 in a millisecond, then the next: %llu %llu",
        (unsigned long long)first_ms, (unsigned long long)last_ms);
  flakeid_uuid_stats s;
  CHECK_OK(flakeid_uuid_generator_stats(g, &s, sizeof s));
  CHECK(s.ids_issued == N && s.lead_ms == 1 && s.reseeds == 0, "stats: %llu issued, lead %llu",
        (unsigned long long)s.ids_issued, (unsigned long long)s.lead_ms);
  CHECK_STATUS(flakeid_uuid_generator_stats(g, &s, sizeof s - 1), FLAKEID_ERR_CONFIG);
  /* The text forms are the next IDs. */
  char buf[FLAKEID_TYPEID_MAX_LEN + 1];
  size_t len = 0;
  CHECK_OK(flakeid_uuid_next_string(g, buf, FLAKEID_UUID_TEXT_LEN + 1, &len));
  CHECK(len == 36 && buf[36] == '\0' && buf[14] == '7', "uuid text %s", buf);
  CHECK_OK(flakeid_ulid_next(g, buf, FLAKEID_ULID_TEXT_LEN + 1, &len));
  CHECK(len == 26 && strlen(buf) == 26, "ulid text %s", buf);
  CHECK_OK(flakeid_typeid_next(g, "order", buf, sizeof buf, &len));
  CHECK(len == 32 && strncmp(buf, "order_", 6) == 0, "typeid text %s", buf);
  /* The clock going back: the default policy refuses, and names the distance. */
  CHECK_OK(flakeid_manual_clock_set(clock, T0 - 5000));
  uint8_t u[16];
  CHECK_STATUS(flakeid_uuid_next(g, u, 16), FLAKEID_ERR_CLOCK_BACKWARDS);
  CHECK(flakeid_last_error_by_ms() > 0, "by_ms");
  /* Closed: later calls are refused naming the generator. */
  CHECK_OK(flakeid_manual_clock_set(clock, T0 + 10));
  CHECK_OK(flakeid_uuid_generator_close(g));
  CHECK_STATUS(flakeid_uuid_next(g, u, 16), FLAKEID_ERR_CONFIG);
  CHECK(flakeid_last_error_field() && strcmp(flakeid_last_error_field(), "generator") == 0, "closed: field");
  flakeid_uuid_generator_free(g);
  flakeid_manual_clock_free(clock);
  free(ids);
}

static void test_options_by_name(void) {
  size_t n = 0;
  while (flakeid_uuid_option_name(n) != NULL) n++;
  CHECK(n == 4 && strcmp(flakeid_uuid_option_name(0), "overflow") == 0, "%zu names", n);
  flakeid_uuid_options *o = NULL;
  CHECK_OK(flakeid_uuid_options_new(&o));
  static const struct {
    const char *name, *value, *field;
  } bad[] = {{"node", "3", "node"},
             {"layout", "sonyflake", "layout"},
             {"overflow", "sometimes", "overflow"},
             {"max_borrow_ms", "lots", "max_borrow_ms"},
             {"workerId", "1", "options"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_STATUS(flakeid_uuid_options_set(o, bad[i].name, bad[i].value), FLAKEID_ERR_CONFIG);
    const char *field = flakeid_last_error_field();
    CHECK(field && strcmp(field, bad[i].field) == 0, "%s: field %s (%s)", bad[i].name, field ? field : "NULL",
          flakeid_last_error_message());
  }
  CHECK_STATUS(flakeid_uuid_options_set(o, NULL, "1"), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_uuid_options_set(NULL, "overflow", "wait"), FLAKEID_ERR_NULL);
  /* A range the build checks: the core's message, naming the option. */
  CHECK_OK(flakeid_uuid_options_set(o, "max_borrow_ms", "1000000000000"));
  flakeid_uuid_generator *g = (flakeid_uuid_generator *)&o; /* must stay untouched */
  flakeid_uuid_generator *sentinel = g;
  flakeid_status st = flakeid_uuid_generator_new(o, &g);
  CHECK(st == FLAKEID_ERR_CONFIG && g == sentinel, "max_borrow_ms out of range: %s", flakeid_status_name(st));
  CHECK(flakeid_last_error_field() && strcmp(flakeid_last_error_field(), "max_borrow_ms") == 0, "%s",
        flakeid_last_error_message());
  flakeid_uuid_options_free(o);
  flakeid_uuid_options_free(NULL);
  flakeid_uuid_generator_free(NULL);
}

static void test_null_and_short_buffers(void) {
  flakeid_uuid_generator *g = NULL;
  CHECK_OK(flakeid_uuid_generator_new(NULL, &g));
  uint8_t u[16];
  char buf[FLAKEID_TYPEID_MAX_LEN + 1];
  memset(buf, 'x', sizeof buf);
  CHECK_STATUS(flakeid_uuid_next(NULL, u, 16), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_uuid_next(g, NULL, 16), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_uuid_next(g, u, 15), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK(strstr(flakeid_last_error_message(), "16 are needed") != NULL, "%s", flakeid_last_error_message());
  CHECK_STATUS(flakeid_uuid_next_string(g, buf, 36, NULL), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(flakeid_uuid_next_string(g, NULL, 37, NULL), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_ulid_next(g, buf, 26, NULL), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(flakeid_typeid_next(g, "user", buf, 31, NULL), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(flakeid_typeid_next(g, NULL, buf, sizeof buf, NULL), FLAKEID_ERR_NULL);
  CHECK(buf[0] == 'x', "a refused call wrote its buffer");
  flakeid_uuid_stats s;
  CHECK_OK(flakeid_uuid_generator_stats(g, &s, sizeof s));
  CHECK(s.ids_issued == 0, "a refused buffer cost %llu IDs", (unsigned long long)s.ids_issued);
  /* Parsers and formatters: NULL text with a length, short inputs and outputs. */
  CHECK_STATUS(flakeid_uuid_parse(NULL, 36, u, 16), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_uuid_parse("", 0, u, 16), FLAKEID_ERR_PARSE);
  const char *t = "017f22e2-79b0-7cc3-98c4-dc0c0c07398f";
  CHECK_STATUS(flakeid_uuid_parse(t, 36, u, 8), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_OK(flakeid_uuid_parse(t, 36, u, 16));
  CHECK_STATUS(flakeid_uuid_format(u, 8, buf, sizeof buf, NULL), FLAKEID_ERR_PARSE);
  CHECK_STATUS(flakeid_uuid_format(NULL, 16, buf, sizeof buf, NULL), FLAKEID_ERR_NULL);
  CHECK_STATUS(flakeid_ulid_format(u, 16, buf, 26, NULL), FLAKEID_ERR_BUFFER_TOO_SMALL);
  char prefix[4];
  const char *tid = "user_01fwhe4ydgfk1shh6w1g60eecf";
  CHECK_STATUS(flakeid_typeid_parse(tid, strlen(tid), prefix, sizeof prefix, NULL, u, 16),
               FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(flakeid_typeid_format("user", u, 16, buf, 31, NULL), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(flakeid_typeid_format(NULL, u, 16, buf, sizeof buf, NULL), FLAKEID_ERR_NULL);
  /* Bad text names the position, UTF-8 or not. */
  CHECK_STATUS(flakeid_ulid_parse("01ARYZ6S41TSV4RRFFQ69G5FA\xff", 26, u, 16), FLAKEID_ERR_PARSE);
  CHECK(flakeid_last_error_position() == 25, "position %zu", flakeid_last_error_position());
  uint64_t ms = 0;
  uint8_t v4[16] = {0};
  v4[6] = 0x40;
  CHECK_STATUS(flakeid_uuid7_timestamp_ms(v4, 16, &ms), FLAKEID_ERR_PARSE);
  CHECK_STATUS(flakeid_uuid7_range(10, 5, u, u, 16), FLAKEID_ERR_CONFIG);
  flakeid_uuid_generator_free(g);
}

/* ---- threads ---- */

enum { THREADS = 4, PER_THREAD = 20000 };
static flakeid_uuid_generator *shared;
static uint8_t thread_ids[THREADS][PER_THREAD][16];

static void *worker(void *arg) {
  uint8_t(*mine)[16] = thread_ids[(size_t)arg];
  for (size_t i = 0; i < PER_THREAD; i++) {
    if (flakeid_uuid_next(shared, mine[i], 16) != FLAKEID_OK) memset(mine[i], 0, 16);
  }
  return NULL;
}

static void test_threads_never_repeat(void) {
  CHECK_OK(flakeid_uuid_generator_new(NULL, &shared));
  pthread_t t[THREADS];
  for (size_t k = 0; k < THREADS; k++) CHECK(pthread_create(&t[k], NULL, worker, (void *)k) == 0, "create");
  for (size_t k = 0; k < THREADS; k++) pthread_join(t[k], NULL);
  int each_increasing = 1;
  for (size_t k = 0; k < THREADS; k++)
    for (size_t i = 1; i < PER_THREAD; i++) each_increasing &= memcmp(thread_ids[k][i - 1], thread_ids[k][i], 16) < 0;
  CHECK(each_increasing, "each thread's UUIDs strictly increase");
  uint8_t(*all)[16] = malloc(sizeof thread_ids);
  if (all == NULL) return;
  memcpy(all, thread_ids, sizeof thread_ids);
  qsort(all, THREADS * PER_THREAD, 16, cmp16);
  int distinct = 1;
  for (size_t i = 1; i < THREADS * PER_THREAD; i++) distinct &= memcmp(all[i - 1], all[i], 16) != 0;
  CHECK(distinct, "%d threads' UUIDs are all distinct", THREADS);
  free(all);
  flakeid_uuid_generator_free(shared);
}

/* ---- fork ---- */

#ifdef _WIN32
static void test_fork_goes_on(void) { printf("  uuid fork: skipped: Windows has no fork()\n"); }
#else
enum { FORK_N = 1000 };

static void test_fork_goes_on(void) {
  flakeid_uuid_generator *g = NULL;
  CHECK_OK(flakeid_uuid_generator_new(NULL, &g));
  static uint8_t parent[2 * FORK_N][16], child[FORK_N][16];
  for (size_t i = 0; i < FORK_N; i++) CHECK_OK(flakeid_uuid_next(g, parent[i], 16));
  int pipefd[2];
  CHECK(pipe(pipefd) == 0, "pipe");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    /* The child goes on from the parent's generator: no FLAKEID_ERR_FORK. */
    close(pipefd[0]);
    int bad = 0;
    for (size_t i = 0; i < FORK_N; i++) bad |= flakeid_uuid_next(g, child[i], 16) != FLAKEID_OK;
    flakeid_uuid_stats s;
    bad |= flakeid_uuid_generator_stats(g, &s, sizeof s) != FLAKEID_OK || s.reseeds != 1;
    if (bad) fprintf(stderr, "FAIL child: %s\n", flakeid_last_error_message());
    size_t off = 0;
    while (!bad && off < sizeof child) {
      ssize_t w = write(pipefd[1], (uint8_t *)child + off, sizeof child - off);
      if (w <= 0) bad = 1;
      else off += (size_t)w;
    }
    _exit(bad ? 1 : 0);
  }
  CHECK(pid > 0, "fork");
  close(pipefd[1]);
  size_t off = 0;
  for (ssize_t r; off < sizeof child && (r = read(pipefd[0], (uint8_t *)child + off, sizeof child - off)) > 0;)
    off += (size_t)r;
  close(pipefd[0]);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child went on, reseeded once");
  CHECK(off == sizeof child, "the child's %d IDs arrived (%zu bytes)", FORK_N, off);
  /* The parent goes on too; no ID of either repeats one of the other, and the
     child's random bits (the last 58) are not the parent's. */
  for (size_t i = FORK_N; i < 2 * FORK_N; i++) CHECK_OK(flakeid_uuid_next(g, parent[i], 16));
  CHECK(memcmp(child[0], parent[FORK_N - 1], 16) > 0, "the child's first ID is above the parent's before the fork");
  qsort(parent, 2 * FORK_N, 16, cmp16);
  int repeats = 0, same_random = 0;
  for (size_t i = 0; i < FORK_N; i++) {
    repeats += bsearch(child[i], parent, 2 * FORK_N, 16, cmp16) != NULL;
    for (size_t j = 0; j < 2 * FORK_N; j++) same_random += memcmp(child[i] + 9, parent[j] + 9, 7) == 0;
  }
  CHECK(repeats == 0, "%d of the child's IDs repeat the parent's", repeats);
  CHECK(same_random == 0, "%d of the child's random tails repeat the parent's", same_random);
  flakeid_uuid_stats s;
  CHECK_OK(flakeid_uuid_generator_stats(g, &s, sizeof s));
  CHECK(s.reseeds == 0, "the parent did not reseed");
  flakeid_uuid_generator_free(g);
}
#endif

/* A batch: increasing, between the single calls around it; the 64-bit batches'
   limit and error on n; a short buffer is refused and costs no ID. */
static void test_batch(void) {
  flakeid_manual_clock *clock = NULL;
  flakeid_uuid_generator *g = generator_at(&clock, "10");
  enum { N = 70000 };
  uint8_t before[16], after[16];
  uint8_t(*ids)[16] = malloc(sizeof *ids * N);
  if (ids == NULL) return;
  CHECK_OK(flakeid_uuid_next(g, before, 16));
  CHECK_OK(flakeid_uuid_next_many(g, ids[0], sizeof *ids * N, N));
  CHECK_OK(flakeid_uuid_next(g, after, 16));
  int increasing = memcmp(before, ids[0], 16) < 0 && memcmp(ids[N - 1], after, 16) < 0;
  for (size_t i = 1; i < N; i++) increasing &= memcmp(ids[i - 1], ids[i], 16) < 0;
  CHECK(increasing, "a batch of 70,000 increases, between the calls around it");
  CHECK_OK(flakeid_uuid_next_many(g, NULL, 0, 0));
  CHECK_STATUS(flakeid_uuid_next_many(g, ids[0], 16, 2), FLAKEID_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(flakeid_uuid_next_many(g, ids[0], sizeof *ids * N, (size_t)1 << 40), FLAKEID_ERR_CONFIG);
  CHECK(strcmp(flakeid_last_error_field(), "n") == 0, "field %s", flakeid_last_error_field());
  flakeid_uuid_stats s;
  CHECK_OK(flakeid_uuid_generator_stats(g, &s, sizeof s));
  CHECK(s.ids_issued == N + 2, "refusals cost no ID: %llu issued", (unsigned long long)s.ids_issued);
  free(ids);
  flakeid_uuid_generator_free(g);
  flakeid_manual_clock_free(clock);
}

void test_uuid(void) {
  test_batch();
  test_monotonic_in_one_millisecond();
  test_options_by_name();
  test_null_and_short_buffers();
  test_threads_never_repeat();
  test_fork_goes_on();
}
