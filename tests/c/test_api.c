/* Every error path of the C API (bad layouts, out-of-range options, NULLs, small
 * buffers, bad text, clock errors), the out-params-only-on-success rule, the
 * thread-local last error, and the manual clock. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int contains(const char *hay, const char *needle) { return hay != NULL && strstr(hay, needle) != NULL; }

static int field_is(const char *want) {
  const char *f = flakeid_last_error_field();
  return f != NULL && strcmp(f, want) == 0;
}

/* ---- layouts ---- */

static void layouts(void) {
  flakeid_layout l, sentinel;
  memset(&sentinel, 0xA5, sizeof sentinel);

  CHECK_OK(flakeid_layout_preset("SnowFlake", &l));
  CHECK(l.time_bits == 41 && l.datacenter_bits == 5 && l.worker_bits == 5 && l.sequence_bits == 12 &&
            l.epoch_ms == UINT64_C(1288834974657) && l.order == FLAKEID_ORDER_TIME_NODE_SEQ,
        "snowflake preset");
  uint64_t id = 0;
  CHECK_OK(flakeid_compose_parts(&l, UINT64_C(1505914988849), 17, 25, 0, &id));
  CHECK(id == UINT64_C(910499571847892992), "seed 001's vector: %" PRIu64, id);

  l = sentinel;
  CHECK_STATUS(flakeid_layout_preset("snowflakes", &l), FLAKEID_ERR_CONFIG);
  CHECK(field_is("layout") && contains(flakeid_last_error_message(), "sonyflake"), "%s",
        flakeid_last_error_message());
  CHECK(memcmp(&l, &sentinel, sizeof l) == 0, "out_layout untouched on failure");

  /* A bad split names the field and the rule. */
  CHECK_STATUS(flakeid_layout_custom(50, 5, 5, 12, 1, UINT64_C(1288834974657), 0, &l), FLAKEID_ERR_CONFIG);
  CHECK(field_is("time_bits") && contains(flakeid_last_error_message(), "at most 64"), "%s",
        flakeid_last_error_message());
  CHECK_STATUS(flakeid_layout_custom(41, 5, 5, 12, 1, UINT64_C(1288834974657), 7, &l), FLAKEID_ERR_CONFIG);
  CHECK(field_is("order") && contains(flakeid_last_error_message(), "got 7"), "%s", flakeid_last_error_message());
  CHECK_STATUS(flakeid_layout_custom(41, 0, 10, 12, 0, 0, 0, &l), FLAKEID_ERR_CONFIG);
  CHECK(field_is("tick_ms"), "tick_ms 0");
  CHECK(memcmp(&l, &sentinel, sizeof l) == 0, "out_layout untouched on failure");

  /* A custom layout equal to Sonyflake's numbers; a hand-filled bad one is refused by every call. */
  CHECK_OK(flakeid_layout_custom(39, 0, 16, 8, 10, UINT64_C(1409529600000), FLAKEID_ORDER_TIME_SEQ_NODE, &l));
  flakeid_layout_limits lim;
  CHECK_OK(flakeid_layout_get_limits(&l, &lim));
  CHECK(lim.node_bits == 16 && lim.max_node == 65535 && lim.max_datacenter == 0 && lim.max_sequence == 255 &&
            lim.total_bits == 63,
        "sonyflake limits");
  flakeid_layout bad = l;
  bad.sequence_bits = 0;
  flakeid_parts parts;
  CHECK_STATUS(flakeid_decompose(&bad, 1, &parts), FLAKEID_ERR_CONFIG);
  CHECK(field_is("sequence_bits"), "hand-filled layout is validated");
  CHECK_STATUS(flakeid_compose(&bad, UINT64_C(1700000000000), 0, 0, &id), FLAKEID_ERR_CONFIG);
  CHECK_STATUS(flakeid_layout_get_limits(&bad, &lim), FLAKEID_ERR_CONFIG);

  /* Out-of-range parts, times and IDs. */
  CHECK_OK(flakeid_layout_preset("snowflake", &l));
  CHECK_STATUS(flakeid_compose_parts(&l, UINT64_C(1700000000000), 0, 32, 0, &id), FLAKEID_ERR_CONFIG);
  CHECK(field_is("worker") && contains(flakeid_last_error_message(), "0..=31"), "%s", flakeid_last_error_message());
  CHECK_STATUS(flakeid_compose(&l, 5, 0, 0, &id), FLAKEID_ERR_TIME_EXHAUSTED);
  CHECK(flakeid_last_error_field() == NULL, "field is NULL after a non-config error");
  CHECK_STATUS(flakeid_decompose(&l, UINT64_MAX, &parts), FLAKEID_ERR_PARSE);
  uint64_t first = 1, last = 2;
  CHECK_STATUS(flakeid_id_range(&l, 20, 10, &first, &last), FLAKEID_ERR_CONFIG);
  CHECK(first == 1 && last == 2 && field_is("end_ms"), "id_range refuses end < start");
}

/* ---- encodings ---- */

static void encodings(void) {
  static const uint32_t all[] = {FLAKEID_ENCODING_DECIMAL, FLAKEID_ENCODING_HEX, FLAKEID_ENCODING_BASE32,
                                 FLAKEID_ENCODING_BASE62};
  const uint64_t id = UINT64_C(910499571847892992);
  for (size_t i = 0; i < 4; i++) {
    char buf[FLAKEID_MAX_ENCODED_LEN + 1], small[FLAKEID_MAX_ENCODED_LEN + 1];
    size_t len = 0, untouched = 99;
    CHECK_OK(flakeid_encode(id, all[i], buf, sizeof buf, &len));
    CHECK(len == strlen(buf), "out_len is the text length");
    /* Exactly len bytes leaves no room for the NUL. */
    memset(small, '#', sizeof small);
    CHECK_STATUS(flakeid_encode(id, all[i], small, len, &untouched), FLAKEID_ERR_BUFFER_TOO_SMALL);
    CHECK(untouched == 99 && small[0] == '#' && small[len - 1] == '#', "buffer untouched on failure");
    CHECK(contains(flakeid_last_error_message(), "are needed"), "%s", flakeid_last_error_message());
    CHECK_STATUS(flakeid_encode(id, all[i], small, 0, NULL), FLAKEID_ERR_BUFFER_TOO_SMALL);
    CHECK_OK(flakeid_encode(id, all[i], small, len + 1, NULL));
    CHECK(strcmp(small, buf) == 0, "len + 1 bytes suffice");
    uint64_t back = 0;
    CHECK_OK(flakeid_decode(buf, len, all[i], &back));
    CHECK(back == id, "round trip");
  }
  char buf[32];
  uint64_t out = 5;
  CHECK_STATUS(flakeid_encode(1, 4, buf, sizeof buf, NULL), FLAKEID_ERR_CONFIG);
  CHECK(field_is("encoding"), "bad encoding number");
  CHECK_STATUS(flakeid_decode("1", 1, 99, &out), FLAKEID_ERR_CONFIG);

  /* Bad text: the position of the first bad character. */
  CHECK_STATUS(flakeid_decode("12a", 3, FLAKEID_ENCODING_DECIMAL, &out), FLAKEID_ERR_PARSE);
  CHECK(flakeid_last_error_position() == 2 && contains(flakeid_last_error_message(), "position 2"), "%s",
        flakeid_last_error_message());
  CHECK_STATUS(flakeid_decode("18446744073709551616", 20, FLAKEID_ENCODING_DECIMAL, &out), FLAKEID_ERR_PARSE);
  CHECK_STATUS(flakeid_decode("", 0, FLAKEID_ENCODING_DECIMAL, &out), FLAKEID_ERR_PARSE);
  CHECK_STATUS(flakeid_decode("0000000000\xff\xfe", 12, FLAKEID_ENCODING_BASE62, &out), FLAKEID_ERR_PARSE);
  CHECK(flakeid_last_error_position() == 11 || flakeid_last_error_position() == 10, "non-UTF-8 position %zu",
        flakeid_last_error_position());
  CHECK_STATUS(flakeid_decode("00000000\0000", 10, FLAKEID_ENCODING_DECIMAL, &out), FLAKEID_ERR_PARSE);
  CHECK(flakeid_last_error_position() == 8, "an embedded NUL is a bad character");
  CHECK(out == 5, "out_id untouched by every failed decode");
  /* The length, not a NUL, ends the text. */
  CHECK_OK(flakeid_decode("123456", 3, FLAKEID_ENCODING_DECIMAL, &out));
  CHECK(out == 123, "decode reads text_len bytes");
}

/* ---- generators ---- */

static void generators(void) {
  flakeid_options o = flakeid_options_default();
  CHECK(o.node == FLAKEID_UNSET && o.datacenter == FLAKEID_UNSET && o.worker == FLAKEID_UNSET &&
            o.node_source == NULL && o.lease_url == NULL && o.clock == NULL && o.overflow == FLAKEID_OVERFLOW_WAIT &&
            o.clock_backwards == FLAKEID_CLOCK_BACKWARDS_ERROR && o.max_borrow_ms == 2000 && o.max_wait_ms == 1000 &&
            o.layout.time_bits == 41 && o.layout.epoch_ms == UINT64_C(1288834974657),
        "defaults");
  flakeid_generator *g = NULL, *sentinel = (flakeid_generator *)&o;
  uint64_t id = 0, node = 99;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_next_id(g, &id));
  CHECK_OK(flakeid_generator_node(g, &node));
  flakeid_parts p;
  CHECK_OK(flakeid_decompose(&o.layout, id, &p));
  CHECK(node <= 1023 && p.node == node && p.timestamp_ms > UINT64_C(1700000000000),
        "default generator: a free node id on this host, now");
  flakeid_layout gl;
  CHECK_OK(flakeid_generator_layout(g, &gl));
  CHECK(gl.time_bits == o.layout.time_bits && gl.datacenter_bits == o.layout.datacenter_bits &&
            gl.worker_bits == o.layout.worker_bits && gl.sequence_bits == o.layout.sequence_bits &&
            gl.tick_ms == o.layout.tick_ms && gl.epoch_ms == o.layout.epoch_ms && gl.order == o.layout.order,
        "generator_layout");
  flakeid_generator_free(g);

  /* Worker out of range; the out-param stays untouched. */
  o.worker = 32;
  g = sentinel;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(g == sentinel && field_is("worker") && contains(flakeid_last_error_message(), "0..=31, got 32"), "%s",
        flakeid_last_error_message());
  o.worker = 3;
  o.datacenter = 2;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_generator_node(g, &node));
  CHECK(node == (2 << 5 | 3), "datacenter + worker");
  flakeid_generator_free(g);
  o.node = 1; /* and datacenter/worker too: refused */
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(contains(flakeid_last_error_message(), "not both"), "%s", flakeid_last_error_message());

  /* struct_size (the ABI can grow): set by both initialisers; 0 or a size from a
   * newer header is refused naming it; the new fields have defaults. */
  flakeid_options init;
  memset(&init, 0xAB, sizeof init);
  CHECK_OK(flakeid_options_init(&init, sizeof init));
  o = flakeid_options_default();
  CHECK(init.struct_size == sizeof init && o.struct_size == sizeof o && init.layout.time_bits == o.layout.time_bits && init.layout.epoch_ms == o.layout.epoch_ms &&
            init.lease_ttl_ms == FLAKEID_UNSET && init.max_sequence == FLAKEID_UNSET && o.max_sequence == FLAKEID_UNSET,
        "options_init and options_default agree");
  CHECK_STATUS(flakeid_options_init(&init, sizeof init + 8), FLAKEID_ERR_CONFIG);
  CHECK(field_is("struct_size"), "options_init with a newer size");
  CHECK_STATUS(flakeid_options_init(NULL, sizeof init), FLAKEID_ERR_NULL);
  o.struct_size = 0;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("struct_size") && contains(flakeid_last_error_message(), "flakeid_options_init"), "%s",
        flakeid_last_error_message());
  o.struct_size = sizeof o + 8;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("struct_size") && contains(flakeid_last_error_message(), "newer"), "%s", flakeid_last_error_message());
  o = flakeid_options_default();
  o.lease_ttl_ms = 5000; /* without lease_url */
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("lease_ttl_ms"), "%s", flakeid_last_error_message());
  o = flakeid_options_default();
  o.max_sequence = 1023;
  CHECK_OK(flakeid_generator_new(&o, &g));
  flakeid_generator_free(g);

  o = flakeid_options_default();
  o.overflow = 2;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("overflow"), "bad overflow");
  o = flakeid_options_default();
  o.clock_backwards = 3;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("clock_backwards"), "bad clock_backwards");
  o = flakeid_options_default();
  o.layout.time_bits = 70;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("time_bits"), "bad layout in options");

  /* Node sources. */
  o = flakeid_options_default();
  setenv("FLAKEID_C_TEST_NODE", "77", 1);
  o.node_source = "env:FLAKEID_C_TEST_NODE";
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_generator_node(g, &node));
  CHECK(node == 77, "env node source: %" PRIu64, node);
  flakeid_generator_free(g);
  setenv("FLAKEID_C_TEST_NODE", "4096", 1);
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("node") && contains(flakeid_last_error_message(), "FLAKEID_C_TEST_NODE"), "%s",
        flakeid_last_error_message());
  o.node_source = "carrier-pigeon";
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  g = NULL;

  /* Manual clock: rollback, time before the epoch, batches. */
  flakeid_manual_clock *clock = NULL;
  CHECK_OK(flakeid_manual_clock_new(UINT64_C(1700000000000), 1, &clock));
  o = flakeid_options_default();
  o.clock = clock;
  o.node = 9;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_next_id(g, &id));
  CHECK_OK(flakeid_manual_clock_set(clock, UINT64_C(1699999999990)));
  uint64_t kept = id;
  CHECK_STATUS(flakeid_next_id(g, &id), FLAKEID_ERR_CLOCK_BACKWARDS);
  CHECK(id == kept && flakeid_last_error_by_ms() == 10, "by_ms %" PRIu64, flakeid_last_error_by_ms());
  uint64_t ids[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_STATUS(flakeid_next_ids(g, ids, 8), FLAKEID_ERR_CLOCK_BACKWARDS);
  int zeroed = 1;
  for (int i = 0; i < 8; i++) zeroed &= ids[i] == 0;
  CHECK(zeroed, "a failed batch is zeroed: it holds no ID");
  CHECK_OK(flakeid_manual_clock_advance(clock, 10));
  CHECK_OK(flakeid_next_ids(g, ids, 8));
  for (int i = 1; i < 8; i++) CHECK(ids[i] > ids[i - 1], "a batch increases");
  /* Statistics: 9 IDs, the two calls that met the rollback (10 ms), no lease. */
  flakeid_stats st;
  memset(&st, 0xff, sizeof st);
  CHECK_OK(flakeid_generator_stats(g, &st, sizeof st));
  CHECK(st.struct_size == sizeof st && st.ids_issued == 9 && st.clock_rollbacks == 2 && st.max_rollback_ms == 10,
        "stats: size %zu, issued %" PRIu64 ", rollbacks %" PRIu64 " (max %" PRIu64 " ms)", st.struct_size,
        st.ids_issued, st.clock_rollbacks, st.max_rollback_ms);
  CHECK(st.tick_waits == 0 && st.lead_ms == 0, "stats: no waits, no lead");
  CHECK(st.lease_state == NULL && st.lease_remaining_ms == FLAKEID_UNSET, "stats: no lease");
  CHECK_STATUS(flakeid_generator_stats(g, &st, sizeof st - 1), FLAKEID_ERR_CONFIG);
  CHECK(field_is("struct_size"), "a short stats struct names struct_size");
  CHECK(ids[0] > kept, "after the rollback, IDs go on increasing");
  CHECK_OK(flakeid_next_ids(g, NULL, 0));
  uint64_t now = 0;
  CHECK_OK(flakeid_manual_clock_get(clock, &now));
  CHECK(now == UINT64_C(1700000000000), "manual clock reads back");
  flakeid_manual_clock_free(clock); /* the generator keeps the clock's time */
  CHECK_OK(flakeid_next_id(g, &id));
  flakeid_generator_free(g);

  CHECK_OK(flakeid_manual_clock_new(1000, 0, &clock));
  o.clock = clock;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_STATUS(flakeid_next_id(g, &id), FLAKEID_ERR_TIME_EXHAUSTED);
  CHECK(contains(flakeid_last_error_message(), "before"), "%s", flakeid_last_error_message());
  flakeid_generator_free(g);
  flakeid_manual_clock_free(clock);
}

/* ---- node-id leases (options.lease_url) ---- */

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

static void leases(void) {
  char dir[] = "/tmp/flakeid-c-lease-XXXXXX", url[128];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(url, sizeof url, "file://%s", dir);
  flakeid_options o = flakeid_options_default();
  o.lease_url = url;
  flakeid_generator *a = NULL, *b = NULL, *c = NULL;
  uint64_t na = 99, nb = 99, nc = 99, id = 0;
  CHECK_OK(flakeid_generator_new(&o, &a));
  CHECK_OK(flakeid_generator_new(&o, &b));
  CHECK_OK(flakeid_generator_node(a, &na));
  CHECK_OK(flakeid_generator_node(b, &nb));
  CHECK(na == 0 && nb == 1, "two leases on one store take nodes 0 and 1, got %" PRIu64 " and %" PRIu64, na, nb);
  CHECK_OK(flakeid_next_id(b, &id));
  flakeid_stats st;
  CHECK_OK(flakeid_generator_stats(b, &st, sizeof st));
  CHECK(st.lease_state != NULL && strcmp(st.lease_state, "held") == 0 && st.lease_remaining_ms > 0 &&
            st.ids_issued == 1,
        "a leased generator's stats show its lease");
  flakeid_parts p;
  CHECK_OK(flakeid_decompose(&o.layout, id, &p));
  CHECK(p.node == nb, "IDs carry the leased node id");
  flakeid_generator_free(a); /* releases node 0 */
  CHECK_OK(flakeid_generator_new(&o, &c));
  CHECK_OK(flakeid_generator_node(c, &nc));
  CHECK(nc == 0, "a released node id is taken again, got %" PRIu64, nc);
  flakeid_generator_free(b);
  flakeid_generator_free(c);

  flakeid_generator *g = NULL;
  o.node = 3; /* a lease and an explicit node: refused */
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  o.node = FLAKEID_UNSET;
  o.lease_url = "gopher://example/1";
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("lease"), "a bad lease URL names the lease option");
  o.lease_url = "redis://127.0.0.1:1/0"; /* nothing listens on port 1 */
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_LEASE);
  CHECK(g == NULL, "no generator without a lease");
  remove_dir(dir);
}

/* ---- state files (options.state, docs/state.md) ---- */

static void state_files(void) {
  char dir[] = "/tmp/flakeid-c-state-XXXXXX", path[160];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/node5.state", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "fopen");
  fputs("flakeid-state 1\nhigh_water_ms 1700000030000\nnode 5\n", f);
  fclose(f);
  flakeid_manual_clock *clock = NULL;
  CHECK_OK(flakeid_manual_clock_new(UINT64_C(1700000000000), 1, &clock));
  flakeid_options o = flakeid_options_default();
  o.node = 5;
  o.clock = clock;
  o.state = path;
  flakeid_generator *g = NULL, *h = NULL;
  uint64_t id = 0;
  /* Restarted 30 s behind the saved mark: the policy decides, as for any rollback. */
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_STATUS(flakeid_next_id(g, &id), FLAKEID_ERR_CLOCK_BACKWARDS);
  /* A second generator on the same file: refused, naming state. */
  CHECK_STATUS(flakeid_generator_new(&o, &h), FLAKEID_ERR_CONFIG);
  CHECK(field_is("state") && contains(flakeid_last_error_message(), "in use"), "%s", flakeid_last_error_message());
  flakeid_generator_free(g);
  o.clock_backwards = FLAKEID_CLOCK_BACKWARDS_MONOTONIC;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_next_id(g, &id));
  flakeid_parts p;
  CHECK_OK(flakeid_decompose(&o.layout, id, &p));
  CHECK(p.timestamp_ms > UINT64_C(1700000030000), "monotonic issues after the mark, got %" PRIu64, p.timestamp_ms);
  flakeid_generator_free(g);
  /* A struct from a header before `state` (struct_size ends at max_sequence): state reads as NULL. */
  o.struct_size = offsetof(flakeid_options, state);
  o.state = "/nonexistent/dir/never-read";
  CHECK_OK(flakeid_generator_new(&o, &g));
  flakeid_generator_free(g);
  /* A corrupt file: refused, naming state, and left as it was. */
  o = flakeid_options_default();
  f = fopen(path, "w");
  fputs("garbage\n", f);
  fclose(f);
  o.state = path;
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("state"), "%s", flakeid_last_error_message());
  flakeid_manual_clock_free(clock);
  remove_dir(dir);
}

/* ---- NULL pointers: every pointer argument of every call ---- */

#define CHECK_NULL(call, arg)                                                                      \
  do {                                                                                             \
    CHECK_STATUS(call, FLAKEID_ERR_NULL);                                                          \
    CHECK(contains(flakeid_last_error_message(), "`" arg "`"), "%s names %s", #call, arg);         \
  } while (0)

static void nulls(void) {
  flakeid_layout l;
  flakeid_layout_limits lim;
  flakeid_parts p;
  flakeid_options o = flakeid_options_default();
  flakeid_generator *g = NULL;
  flakeid_manual_clock *c = NULL;
  uint64_t x = 0, y = 0;
  char buf[32];
  CHECK_OK(flakeid_layout_preset("flake", &l));
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_manual_clock_new(0, 0, &c));

  CHECK_NULL(flakeid_layout_preset(NULL, &l), "name");
  CHECK_NULL(flakeid_layout_preset("flake", NULL), "out_layout");
  CHECK_NULL(flakeid_layout_custom(41, 5, 5, 12, 1, 0, 0, NULL), "out_layout");
  CHECK_NULL(flakeid_layout_get_limits(NULL, &lim), "layout");
  CHECK_NULL(flakeid_layout_get_limits(&l, NULL), "out_limits");
  CHECK_NULL(flakeid_decompose(NULL, 1, &p), "layout");
  CHECK_NULL(flakeid_decompose(&l, 1, NULL), "out_parts");
  CHECK_NULL(flakeid_compose(NULL, 1, 0, 0, &x), "layout");
  CHECK_NULL(flakeid_compose(&l, 1, 0, 0, NULL), "out_id");
  CHECK_NULL(flakeid_compose_parts(NULL, 1, 0, 0, 0, &x), "layout");
  CHECK_NULL(flakeid_compose_parts(&l, 1, 0, 0, 0, NULL), "out_id");
  CHECK_NULL(flakeid_id_range(NULL, 1, 2, &x, &y), "layout");
  x = 7;
  CHECK_NULL(flakeid_id_range(&l, 1, 2, &x, NULL), "out_last");
  CHECK(x == 7, "no out-param is written when another is NULL");
  CHECK_NULL(flakeid_id_range(&l, 1, 2, NULL, &y), "out_first");
  CHECK_NULL(flakeid_encode(1, FLAKEID_ENCODING_HEX, NULL, 32, NULL), "buf");
  CHECK_NULL(flakeid_decode(NULL, 1, FLAKEID_ENCODING_HEX, &x), "text");
  CHECK_NULL(flakeid_decode("1", 1, FLAKEID_ENCODING_DECIMAL, NULL), "out_id");
  CHECK_NULL(flakeid_generator_new(NULL, &g), "options");
  CHECK_NULL(flakeid_generator_new(&o, NULL), "out_generator");
  CHECK_NULL(flakeid_next_id(NULL, &x), "generator");
  CHECK_NULL(flakeid_next_id(g, NULL), "out_id");
  CHECK_NULL(flakeid_next_ids(NULL, &x, 1), "generator");
  CHECK_NULL(flakeid_next_ids(g, NULL, 1), "ids");
  CHECK_NULL(flakeid_generator_node(NULL, &x), "generator");
  CHECK_NULL(flakeid_generator_node(g, NULL), "out_node");
  CHECK_NULL(flakeid_generator_layout(NULL, &l), "generator");
  CHECK_NULL(flakeid_generator_layout(g, NULL), "out_layout");
  flakeid_stats st;
  CHECK_NULL(flakeid_generator_stats(NULL, &st, sizeof st), "generator");
  CHECK_NULL(flakeid_generator_stats(g, NULL, sizeof st), "out_stats");
  CHECK_NULL(flakeid_manual_clock_new(0, 0, NULL), "out_clock");
  CHECK_NULL(flakeid_manual_clock_set(NULL, 1), "clock");
  CHECK_NULL(flakeid_manual_clock_advance(NULL, 1), "clock");
  CHECK_NULL(flakeid_manual_clock_get(NULL, &x), "clock");
  CHECK_NULL(flakeid_manual_clock_get(c, NULL), "out_ms");
  static const uint8_t key[16] = {0};
  flakeid_sealer *s = NULL;
  CHECK_OK(flakeid_sealer_new(key, sizeof key, &l, NULL, 0, &s));
  CHECK_NULL(flakeid_sealer_new(NULL, sizeof key, &l, NULL, 0, &s), "key");
  CHECK_NULL(flakeid_sealer_new(key, sizeof key, NULL, NULL, 0, &s), "layout");
  CHECK_NULL(flakeid_sealer_new(key, sizeof key, &l, NULL, 1, &s), "tweak");
  CHECK_NULL(flakeid_sealer_new(key, sizeof key, &l, NULL, 0, NULL), "out_sealer");
  CHECK_NULL(flakeid_sealer_seal(NULL, 1, &x), "sealer");
  CHECK_NULL(flakeid_sealer_seal(s, 1, NULL), "out_id");
  CHECK_NULL(flakeid_sealer_unseal(NULL, 1, &x), "sealer");
  CHECK_NULL(flakeid_sealer_unseal(s, 1, NULL), "out_id");
  flakeid_generator_free(NULL);
  flakeid_manual_clock_free(NULL);
  flakeid_sealer_free(NULL);
  flakeid_sealer_free(s);
  (void)buf;
  flakeid_generator_free(g);
  flakeid_manual_clock_free(c);
}

/* ---- the last error is per thread ---- */

static void *fresh_thread(void *arg) {
  int *ok = arg;
  /* Nothing failed on this thread yet, whatever the main thread did. */
  *ok = strcmp(flakeid_last_error_message(), "") == 0 && flakeid_last_error_field() == NULL;
  flakeid_layout l;
  *ok &= flakeid_layout_preset("nope", &l) == FLAKEID_ERR_CONFIG && field_is("layout");
  return NULL;
}

static void last_error(void) {
  flakeid_layout l;
  CHECK_STATUS(flakeid_layout_custom(0, 5, 5, 12, 1, 0, 0, &l), FLAKEID_ERR_CONFIG);
  const char *msg = flakeid_last_error_message();
  CHECK(field_is("time_bits"), "field");
  int ok = 0;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, fresh_thread, &ok) == 0, "pthread_create");
  pthread_join(t, NULL);
  CHECK(ok, "a new thread starts with no error and keeps its own");
  CHECK(field_is("time_bits") && msg == flakeid_last_error_message(), "another thread's error leaves ours");
  CHECK_OK(flakeid_layout_preset("discord", &l));
  CHECK(contains(flakeid_last_error_message(), "time_bits"), "success does not clear the last error");

  static const struct {
    flakeid_status s;
    const char *name;
  } names[] = {{FLAKEID_OK, "ok"},
               {FLAKEID_ERR_CONFIG, "config"},
               {FLAKEID_ERR_CLOCK_BACKWARDS, "clock_backwards"},
               {FLAKEID_ERR_TIME_EXHAUSTED, "time_exhausted"},
               {FLAKEID_ERR_PARSE, "parse"},
               {FLAKEID_ERR_FORK, "fork"},
               {FLAKEID_ERR_LEASE, "lease"},
               {FLAKEID_ERR_INTERRUPTED, "interrupted"},
               {FLAKEID_ERR_NULL, "null"},
               {FLAKEID_ERR_PANIC, "panic"},
               {FLAKEID_ERR_BUFFER_TOO_SMALL, "buffer_too_small"},
               {8, "unknown"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    CHECK(strcmp(flakeid_status_name(names[i].s), names[i].name) == 0, "status %u is %s", (unsigned)names[i].s,
          names[i].name);
  /* The stable numbers themselves. */
  CHECK(FLAKEID_OK == 0 && FLAKEID_ERR_CONFIG == 1 && FLAKEID_ERR_CLOCK_BACKWARDS == 2 &&
            FLAKEID_ERR_TIME_EXHAUSTED == 3 && FLAKEID_ERR_PARSE == 4 && FLAKEID_ERR_FORK == 5 &&
            FLAKEID_ERR_LEASE == 6 && FLAKEID_ERR_INTERRUPTED == 7 && FLAKEID_ERR_NULL == 100 && FLAKEID_ERR_PANIC == 101 &&
            FLAKEID_ERR_BUFFER_TOO_SMALL == 102,
        "status numbers are ABI");
  CHECK(strcmp(flakeid_version(), "0.1.0") == 0 || flakeid_version()[0] != '\0', "version");
}

/* ---- by-name slots: an option with no field of its own ---- */

/* The slot of the option `name`: its index in flakeid_option_name's list (the core's
   table order). */
static size_t slot_of(const char *name) {
  const char *n;
  for (size_t i = 0; (n = flakeid_option_name(i)) != NULL; i++) {
    if (strcmp(n, name) == 0) return i;
  }
  CHECK(0, "%s is not a name flakeid_option_name lists", name);
  return 0;
}

/* Every option of today's table has a field, so flakeid_options_set fills no slot;
   the path a new option takes (slot i = the table's i-th name, applied by name when
   the generator is built, after the fields) is proven with an existing option whose
   slot is written directly: the slot's node wins over the field's, a slot value out
   of range is the core's refusal naming the option, and a struct from a header
   before the slots (struct_size ending at require_node) never reads them. */
static void by_name_slots(void) {
  CHECK(FLAKEID_OPTION_SLOTS >= 1 && flakeid_option_name(FLAKEID_OPTION_SLOTS) == NULL, "the table fits the slots");
  flakeid_options o;
  CHECK_OK(flakeid_options_init(&o, sizeof o));
  for (size_t i = 0; i < FLAKEID_OPTION_SLOTS; i++) CHECK(o.by_name[i] == NULL, "slot %zu starts unset", i);
  flakeid_manual_clock *clock = NULL;
  CHECK_OK(flakeid_manual_clock_new(UINT64_C(1700000000000), 0, &clock));
  o.clock = clock;
  o.node = 931;
  o.by_name[slot_of("node")] = "917";
  flakeid_generator *g = NULL;
  uint64_t node = 0;
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_generator_node(g, &node));
  CHECK(node == 917, "the slot reaches the generator: node %" PRIu64, node);
  flakeid_generator_free(g);
  o.by_name[slot_of("max_sequence")] = "5000";
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(field_is("max_sequence"), "a slot's bad value names its option: %s", flakeid_last_error_message());
  o.by_name[slot_of("max_sequence")] = NULL;
  o.struct_size = offsetof(flakeid_options, by_name);
  CHECK_OK(flakeid_generator_new(&o, &g));
  CHECK_OK(flakeid_generator_node(g, &node));
  CHECK(node == 931, "an older struct without slots: the field, got %" PRIu64, node);
  flakeid_generator_free(g);
  /* flakeid_options_set still fills the fields, and on an older struct too. */
  CHECK_OK(flakeid_options_set(&o, "node", "12"));
  CHECK(o.node == 12, "set by name on an older struct");
  flakeid_manual_clock_free(clock);
}

/* FLAKEID_REQUIRE_NODE=true is the engine's to read: a generator with no node id is
 * refused, naming the fixes, as the CLI and the adapters refuse it. */
static void require_node_from_the_environment(void) {
  flakeid_options o = flakeid_options_default();
  flakeid_generator *g = NULL;
  CHECK(setenv("FLAKEID_REQUIRE_NODE", "true", 1) == 0, "setenv");
  CHECK_STATUS(flakeid_generator_new(&o, &g), FLAKEID_ERR_CONFIG);
  CHECK(contains(flakeid_last_error_message(), "require_node") &&
            contains(flakeid_last_error_message(), "FLAKEID_NODE"),
        "%s", flakeid_last_error_message());
  o.node = 3;
  CHECK_OK(flakeid_generator_new(&o, &g));
  flakeid_generator_free(g);
  CHECK(unsetenv("FLAKEID_REQUIRE_NODE") == 0, "unsetenv");
}

void test_api(void) {
  require_node_from_the_environment();
  layouts();
  encodings();
  generators();
  leases();
  state_files();
  nulls();
  last_error();
  by_name_slots();
}
