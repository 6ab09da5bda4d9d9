/* Runs every case of every file in tests/vectors/ through the C API. Unknown
 * files, sections or options fail the test: the vectors are the cross-language
 * contract, so nothing in them may be skipped silently. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "json.h"

static const char *current = "";  /* "file.json section[i]", for messages */
static char where[512];

/* Names the case being run, for every message (truncated if need be). */
static void set_where(const char *fmt, ...) {
  char tmp[sizeof where];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  memcpy(where, tmp, sizeof where);
}

static void fatal(const char *what) {
  fprintf(stderr, "FATAL %s: %s\n", where, what);
  exit(2);
}

static const json_value *need(const json_value *obj, const char *key, json_type type) {
  const json_value *v = json_get(obj, key);
  if (v == NULL || v->type != type) {
    char msg[160];
    snprintf(msg, sizeof msg, "member \"%s\" missing or of the wrong type", key);
    fatal(msg);
  }
  return v;
}

static uint64_t num(const json_value *obj, const char *key) {
  const json_value *v = need(obj, key, JSON_INT);
  if (v->negative) fatal("negative number");
  return v->integer;
}

static const char *str(const json_value *obj, const char *key) { return need(obj, key, JSON_STRING)->string; }

/* IDs are decimal strings (the schema keeps them out of JSON numbers). Parsed here
 * independently of flakeid_decode. */
static uint64_t id_of(const char *text) {
  uint64_t acc = 0;
  if (*text == '\0') fatal("empty id");
  for (const char *c = text; *c; c++) {
    if (*c < '0' || *c > '9') fatal("id is not a decimal string");
    uint64_t d = (uint64_t)(*c - '0');
    if (acc > (UINT64_MAX - d) / 10) fatal("id does not fit 64 bits");
    acc = acc * 10 + d;
  }
  return acc;
}

static uint64_t id_at(const json_value *obj, const char *key) { return id_of(str(obj, key)); }

static uint32_t order_of(const char *s) {
  if (strcmp(s, "time|node|seq") == 0) return FLAKEID_ORDER_TIME_NODE_SEQ;
  if (strcmp(s, "time|seq|node") == 0) return FLAKEID_ORDER_TIME_SEQ_NODE;
  fatal("unknown order");
  return 0;
}

/* A layout spec: a preset name or an object with every field. */
static flakeid_status layout_of(const json_value *spec, flakeid_layout *out) {
  if (spec->type == JSON_STRING) return flakeid_layout_preset(spec->string, out);
  if (spec->type != JSON_OBJECT) fatal("layout spec is neither a name nor an object");
  uint32_t dc = 0, worker;
  if (json_get(spec, "node_bits") != NULL) {
    worker = (uint32_t)num(spec, "node_bits");
  } else {
    dc = (uint32_t)num(spec, "datacenter_bits");
    worker = (uint32_t)num(spec, "worker_bits");
  }
  return flakeid_layout_custom((uint32_t)num(spec, "time_bits"), dc, worker, (uint32_t)num(spec, "sequence_bits"),
                               num(spec, "tick_ms"), num(spec, "epoch_ms"), order_of(str(spec, "order")), out);
}

static flakeid_layout layout_ok(const json_value *c) {
  const json_value *spec = json_get(c, "layout");
  if (spec == NULL) fatal("case without a layout");
  flakeid_layout l;
  memset(&l, 0, sizeof l);
  CHECK_OK(layout_of(spec, &l));
  return l;
}

/* The call failed as the case says: kind, and field / by_ms / position when pinned. */
static void expect_error(flakeid_status st, const json_value *c) {
  const char *kind = str(c, "error");
  CHECK(strcmp(flakeid_status_name(st), kind) == 0, "%s: got %s (%s), want %s", where, flakeid_status_name(st),
        flakeid_last_error_message(), kind);
  CHECK(st == FLAKEID_OK || flakeid_last_error_message()[0] != '\0', "%s: an error needs a message", where);
  if (json_get(c, "field") != NULL) {
    const char *field = flakeid_last_error_field();
    CHECK(field != NULL && strcmp(field, str(c, "field")) == 0, "%s: field %s, want %s (%s)", where,
          field ? field : "NULL", str(c, "field"), flakeid_last_error_message());
  }
  if (json_get(c, "by_ms") != NULL)
    CHECK(flakeid_last_error_by_ms() == num(c, "by_ms"), "%s: by_ms %" PRIu64 ", want %" PRIu64, where,
          flakeid_last_error_by_ms(), num(c, "by_ms"));
  if (json_get(c, "position") != NULL)
    CHECK(flakeid_last_error_position() == num(c, "position"), "%s: position %zu, want %" PRIu64, where,
          flakeid_last_error_position(), num(c, "position"));
}

typedef void (*case_fn)(const json_value *c);

static long run_section(const json_value *root, const char *section, case_fn fn) {
  const json_value *cases = need(root, section, JSON_ARRAY);
  if (cases->count == 0) fatal("empty section");
  for (size_t i = 0; i < cases->count; i++) {
    set_where("%s %s[%zu]", current, section, i);
    if (cases->items[i].type != JSON_OBJECT) fatal("case is not an object");
    fn(&cases->items[i]);
  }
  return (long)cases->count;
}

/* ---- layouts.json ---- */

static void preset_case(const json_value *c) {
  flakeid_layout l;
  flakeid_layout_limits lim;
  CHECK_OK(flakeid_layout_preset(str(c, "name"), &l));
  CHECK_OK(flakeid_layout_get_limits(&l, &lim));
  CHECK(l.time_bits == num(c, "time_bits") && l.datacenter_bits == num(c, "datacenter_bits") &&
            l.worker_bits == num(c, "worker_bits") && l.sequence_bits == num(c, "sequence_bits") &&
            l.tick_ms == num(c, "tick_ms") && l.epoch_ms == num(c, "epoch_ms") &&
            l.order == order_of(str(c, "order")),
        "%s: preset fields differ", where);
  CHECK(lim.node_bits == num(c, "node_bits") && lim.last_timestamp_ms == num(c, "last_timestamp_ms") &&
            lim.max_id == id_at(c, "max_id"),
        "%s: limits differ (max_id %" PRIu64 ")", where, lim.max_id);
}

static void invalid_layout_case(const json_value *c) {
  flakeid_layout l, before;
  memset(&l, 0xA5, sizeof l);
  before = l;
  expect_error(layout_of(need(c, "layout", JSON_OBJECT), &l), c);
  CHECK(memcmp(&l, &before, sizeof l) == 0, "%s: out_layout written on failure", where);
}

static uint32_t overflow_of(const char *s) {
  if (strcmp(s, "wait") == 0) return FLAKEID_OVERFLOW_WAIT;
  if (strcmp(s, "borrow") == 0) return FLAKEID_OVERFLOW_BORROW;
  return 0xFFFFFFFFu; /* a value outside the enum: the library must refuse it */
}

static uint32_t clock_backwards_of(const char *s) {
  if (strcmp(s, "error") == 0) return FLAKEID_CLOCK_BACKWARDS_ERROR;
  if (strcmp(s, "wait") == 0) return FLAKEID_CLOCK_BACKWARDS_WAIT;
  if (strcmp(s, "monotonic") == 0) return FLAKEID_CLOCK_BACKWARDS_MONOTONIC;
  return 0xFFFFFFFFu;
}

static void invalid_generator_case(const json_value *c) {
  flakeid_options o = flakeid_options_default();
  o.layout = layout_ok(c);
  const json_value *opts = need(c, "options", JSON_OBJECT);
  for (size_t i = 0; i < opts->count; i++) {
    const char *k = opts->keys[i];
    if (strcmp(k, "node") == 0) o.node = num(opts, k);
    else if (strcmp(k, "datacenter") == 0) o.datacenter = num(opts, k);
    else if (strcmp(k, "worker") == 0) o.worker = num(opts, k);
    else if (strcmp(k, "overflow") == 0) o.overflow = overflow_of(str(opts, k));
    else if (strcmp(k, "clock_backwards") == 0) o.clock_backwards = clock_backwards_of(str(opts, k));
    else if (strcmp(k, "max_borrow_ms") == 0) o.max_borrow_ms = num(opts, k);
    else if (strcmp(k, "max_wait_ms") == 0) o.max_wait_ms = num(opts, k);
    else fatal("unknown option in the vector");
  }
  flakeid_generator *g = (flakeid_generator *)&o; /* a sentinel: must stay untouched */
  expect_error(flakeid_generator_new(&o, &g), c);
  CHECK(g == (flakeid_generator *)&o, "%s: out_generator written on failure", where);
}

/* ---- options.json ---- */

/* The options the C struct has, by their snake_case names (every one in the core's table). */
static const char *const C_OPTIONS[] = {"datacenter", "worker", "node", "layout", "overflow", "clock_backwards",
                                        "max_borrow_ms", "max_wait_ms", "lease", "lease_ttl_ms", "max_sequence",
                                        "clock", "state", "require_node"};

/* An option with no field of its own is set by name (flakeid_options_set keeps it in
   its by_name slot): every option of the table is a field or a name the setter takes. */
static void option_entry_case(const json_value *c) {
  int found = 0;
  for (size_t i = 0; i < sizeof C_OPTIONS / sizeof C_OPTIONS[0]; i++) found |= strcmp(C_OPTIONS[i], str(c, "name")) == 0;
  const char *n;
  for (size_t i = 0; !found && (n = flakeid_option_name(i)) != NULL; i++) found = strcmp(n, str(c, "name")) == 0;
  CHECK(found, "%s: option %s is neither in flakeid_options nor set by name", where, str(c, "name"));
}

/* A case's option with no field of its own, by name as text (its slot keeps the
   pointer: `buf` lives until the build). */
static flakeid_status option_by_name(flakeid_options *o, const char *k, const json_value *v, char *buf, size_t len) {
  if (v->type == JSON_STRING) return flakeid_options_set(o, k, v->string);
  if (v->type == JSON_BOOL) return flakeid_options_set(o, k, v->boolean ? "true" : "false");
  if (v->type != JSON_INT || v->negative) fatal("an option value the vectors do not use");
  snprintf(buf, len, "%" PRIu64, v->integer);
  return flakeid_options_set(o, k, buf);
}

static void option_case(const json_value *c) {
  flakeid_options o;
  CHECK_OK(flakeid_options_init(&o, sizeof o));
  o.layout = layout_ok(c);
  const json_value *opts = need(c, "options", JSON_OBJECT);
  flakeid_status st = FLAKEID_OK;
  char texts[16][24]; /* the by-name values' text, kept until the build */
  if (opts->count > 16) fatal("more options than texts");
  for (size_t i = 0; i < opts->count; i++) {
    const char *k = opts->keys[i];
    const json_value *v = &opts->items[i];
    if (strcmp(k, "node") == 0) {
      if (v->type == JSON_STRING) o.node_source = v->string;
      else o.node = num(opts, k);
    } else if (strcmp(k, "datacenter") == 0) o.datacenter = num(opts, k);
    else if (strcmp(k, "worker") == 0) o.worker = num(opts, k);
    else if (strcmp(k, "overflow") == 0) o.overflow = overflow_of(str(opts, k));
    else if (strcmp(k, "clock_backwards") == 0) o.clock_backwards = clock_backwards_of(str(opts, k));
    else if (strcmp(k, "max_borrow_ms") == 0) o.max_borrow_ms = num(opts, k);
    else if (strcmp(k, "max_wait_ms") == 0) o.max_wait_ms = num(opts, k);
    else if (strcmp(k, "lease") == 0) o.lease_url = str(opts, k);
    else if (strcmp(k, "lease_ttl_ms") == 0) o.lease_ttl_ms = num(opts, k);
    else if (strcmp(k, "max_sequence") == 0) o.max_sequence = num(opts, k);
    else if (strcmp(k, "state") == 0) o.state = str(opts, k);
    else if (strcmp(k, "require_node") == 0) o.require_node = need(opts, k, JSON_BOOL)->boolean ? 1 : 0;
    else if (st == FLAKEID_OK) st = option_by_name(&o, k, v, texts[i], sizeof texts[0]);
  }
  flakeid_generator *g = (flakeid_generator *)&o; /* a sentinel: must stay untouched on failure */
  if (st == FLAKEID_OK) st = flakeid_generator_new(&o, &g);
  if (json_get(c, "error") != NULL) {
    expect_error(st, c);
    CHECK(g == (flakeid_generator *)&o, "%s: out_generator written on failure", where);
  } else {
    CHECK(st == FLAKEID_OK, "%s: %s", where, flakeid_last_error_message());
    if (st == FLAKEID_OK) flakeid_generator_free(g);
  }
}

/* The environment's options (name -> text) through flakeid_options_set, in the table's
   order (flakeid_option_name), with require_node, on a manual clock: fine, or the error
   (at the set for a malformed number, else at the build). */
static void option_env_case(const json_value *c) {
  flakeid_options o;
  CHECK_OK(flakeid_options_init(&o, sizeof o));
  flakeid_manual_clock *clock = NULL;
  CHECK_OK(flakeid_manual_clock_new(1700000000000ULL, 0, &clock));
  o.clock = clock;
  CHECK_OK(flakeid_options_set(&o, "require_node", "true"));
  const json_value *opts = need(c, "options", JSON_OBJECT);
  flakeid_status st = FLAKEID_OK;
  const char *name;
  for (size_t i = 0; st == FLAKEID_OK && (name = flakeid_option_name(i)) != NULL; i++) {
    if (json_get(opts, name) != NULL) st = flakeid_options_set(&o, name, str(opts, name));
  }
  flakeid_generator *g = NULL;
  if (st == FLAKEID_OK) st = flakeid_generator_new(&o, &g);
  if (json_get(c, "error") != NULL) expect_error(st, c);
  else CHECK(st == FLAKEID_OK, "%s: %s", where, flakeid_last_error_message());
  if (st == FLAKEID_OK) flakeid_generator_free(g);
  flakeid_manual_clock_free(clock);
}

/* A settings key flakeid_options_set refuses is named as in every binding. */
static void option_settings_case(const json_value *c) {
  const json_value *keys = need(c, "keys", JSON_ARRAY);
  flakeid_status st = FLAKEID_OK;
  for (size_t i = 0; i < keys->count; i++) {
    flakeid_options o;
    CHECK_OK(flakeid_options_init(&o, sizeof o));
    st = flakeid_options_set(&o, keys->items[i].string, "1");
    if (st != FLAKEID_OK && strstr(flakeid_last_error_message(), "unknown setting") != NULL) break;
    st = FLAKEID_OK;
  }
  if (json_get(c, "error") == NULL) {
    CHECK(st == FLAKEID_OK, "%s: %s", where, flakeid_last_error_message());
    return;
  }
  expect_error(st, c);
  /* message_starts is the Display form ("invalid configuration: unknown setting ..."). */
  CHECK(strstr(flakeid_last_error_message(), strchr(str(c, "message_starts"), ':') + 2) != NULL, "%s: %s", where,
        flakeid_last_error_message());
}

/* ---- compose.json ---- */

static void compose_case(const json_value *c) {
  flakeid_layout l = layout_ok(c);
  uint64_t want = id_at(c, "id"), id = 0, id2 = 0;
  CHECK_OK(flakeid_compose(&l, num(c, "timestamp_ms"), num(c, "node"), num(c, "sequence"), &id));
  CHECK(id == want, "%s: compose gave %" PRIu64 ", want %" PRIu64, where, id, want);
  CHECK_OK(flakeid_compose_parts(&l, num(c, "timestamp_ms"), num(c, "datacenter"), num(c, "worker"),
                                 num(c, "sequence"), &id2));
  CHECK(id2 == want, "%s: compose_parts gave %" PRIu64, where, id2);
  flakeid_parts p;
  memset(&p, 0, sizeof p);
  CHECK_OK(flakeid_decompose(&l, want, &p));
  CHECK(p.timestamp_ms == num(c, "timestamp_ms") && p.ticks == num(c, "ticks") && p.node == num(c, "node") &&
            p.datacenter == num(c, "datacenter") && p.worker == num(c, "worker") &&
            p.sequence == num(c, "sequence"),
        "%s: decompose differs (ts %" PRIu64 " node %" PRIu64 " seq %" PRIu64 ")", where, p.timestamp_ms, p.node,
        p.sequence);
}

static void compose_error_case(const json_value *c) {
  flakeid_layout l = layout_ok(c);
  uint64_t id = 12345;
  expect_error(flakeid_compose(&l, num(c, "timestamp_ms"), num(c, "node"), num(c, "sequence"), &id), c);
  CHECK(id == 12345, "%s: out_id written on failure", where);
}

static void decompose_error_case(const json_value *c) {
  flakeid_layout l = layout_ok(c);
  flakeid_parts p, before;
  memset(&p, 0x5A, sizeof p);
  before = p;
  expect_error(flakeid_decompose(&l, id_at(c, "id"), &p), c);
  CHECK(memcmp(&p, &before, sizeof p) == 0, "%s: out_parts written on failure", where);
}

static void range_case(const json_value *c) {
  flakeid_layout l = layout_ok(c);
  uint64_t first = 0, last = 0;
  CHECK_OK(flakeid_id_range(&l, num(c, "start_ms"), num(c, "end_ms"), &first, &last));
  CHECK(first == id_at(c, "first") && last == id_at(c, "last"), "%s: range [%" PRIu64 ", %" PRIu64 "]", where,
        first, last);
}

/* ---- encodings.json ---- */

static const struct {
  const char *name;
  uint32_t value;
} ENCODINGS[] = {{"decimal", FLAKEID_ENCODING_DECIMAL},
                 {"hex", FLAKEID_ENCODING_HEX},
                 {"base32", FLAKEID_ENCODING_BASE32},
                 {"base62", FLAKEID_ENCODING_BASE62}};

static uint32_t encoding_of(const char *name) {
  for (size_t i = 0; i < sizeof ENCODINGS / sizeof ENCODINGS[0]; i++)
    if (strcmp(ENCODINGS[i].name, name) == 0) return ENCODINGS[i].value;
  fatal("unknown encoding");
  return 0;
}

static void encoding_case(const json_value *c) {
  uint64_t id = id_at(c, "id");
  for (size_t i = 0; i < sizeof ENCODINGS / sizeof ENCODINGS[0]; i++) {
    const char *want = str(c, ENCODINGS[i].name);
    char buf[FLAKEID_MAX_ENCODED_LEN + 1];
    size_t len = 0;
    uint64_t back = 0;
    CHECK_OK(flakeid_encode(id, ENCODINGS[i].value, buf, sizeof buf, &len));
    CHECK(strcmp(buf, want) == 0 && len == strlen(want), "%s: %s gave %s, want %s", where, ENCODINGS[i].name, buf,
          want);
    CHECK_OK(flakeid_decode(want, strlen(want), ENCODINGS[i].value, &back));
    CHECK(back == id, "%s: %s decodes to %" PRIu64, where, want, back);
  }
  /* bytes: the 8 big-endian bytes, as 16 hex digits */
  char hex[17];
  for (int i = 0; i < 8; i++) snprintf(hex + 2 * i, 3, "%02x", (unsigned)(id >> (56 - 8 * i) & 0xFF));
  CHECK(strcmp(hex, str(c, "bytes")) == 0, "%s: bytes %s, want %s", where, hex, str(c, "bytes"));
}

static void alias_case(const json_value *c) {
  const char *text = str(c, "text");
  uint64_t id = 0;
  CHECK_OK(flakeid_decode(text, strlen(text), encoding_of(str(c, "encoding")), &id));
  CHECK(id == id_at(c, "id"), "%s: %s decodes to %" PRIu64, where, text, id);
}

static void bad_text_case(const json_value *c) {
  const json_value *text = need(c, "text", JSON_STRING);
  uint64_t id = 777;
  expect_error(flakeid_decode(text->string, text->len, encoding_of(str(c, "encoding")), &id), c);
  CHECK(id == 777, "%s: out_id written on failure", where);
}

/* ---- timelines.json ---- */

static void timeline_case(const json_value *t) {
  flakeid_manual_clock *clock = NULL;
  flakeid_generator *g = NULL;
  CHECK_OK(flakeid_manual_clock_new(num(t, "start_ms"), num(t, "auto_advance_ms"), &clock));
  flakeid_options o = flakeid_options_default();
  o.layout = layout_ok(t);
  o.node = num(t, "node");
  o.overflow = overflow_of(str(t, "overflow"));
  o.clock_backwards = clock_backwards_of(str(t, "clock_backwards"));
  o.max_borrow_ms = num(t, "max_borrow_ms");
  o.max_wait_ms = num(t, "max_wait_ms");
  o.clock = clock;
  CHECK_OK(flakeid_generator_new(&o, &g));
  if (g == NULL) { flakeid_manual_clock_free(clock); return; }
  const json_value *steps = need(t, "steps", JSON_ARRAY);
  char base[sizeof where];
  memcpy(base, where, sizeof base);
  set_where("%s (%s)", base, str(t, "name"));
  memcpy(base, where, sizeof base);
  for (size_t i = 0; i < steps->count; i++) {
    const json_value *s = &steps->items[i];
    const char *op = str(s, "op");
    set_where("%s step %zu (%s)", base, i, op);
    if (strcmp(op, "set") == 0) {
      CHECK_OK(flakeid_manual_clock_set(clock, num(s, "ms")));
      continue;
    }
    uint64_t now = 0;
    if (strcmp(op, "next") == 0) {
      uint64_t id = 42;
      flakeid_status st = flakeid_next_id(g, &id);
      if (json_get(s, "error") != NULL) {
        expect_error(st, s);
        CHECK(id == 42, "%s: out_id written on failure", where);
      } else {
        CHECK(st == FLAKEID_OK, "%s: %s", where, flakeid_last_error_message());
        CHECK(id == id_at(s, "id"), "%s: id %" PRIu64 ", want %s", where, id, str(s, "id"));
      }
    } else if (strcmp(op, "next_ids") == 0) {
      size_t n = (size_t)num(s, "n");
      uint64_t *ids = calloc(n ? n : 1, sizeof *ids);
      if (ids == NULL) fatal("out of memory");
      flakeid_status st = flakeid_next_ids(g, ids, n);
      if (json_get(s, "error") != NULL) {
        expect_error(st, s);
      } else {
        const json_value *want = need(s, "ids", JSON_ARRAY);
        CHECK(st == FLAKEID_OK && want->count == n, "%s: %s", where, flakeid_last_error_message());
        for (size_t k = 0; k < n && k < want->count; k++)
          CHECK(ids[k] == id_of(want->items[k].string), "%s: ids[%zu] %" PRIu64 ", want %s", where, k, ids[k],
                want->items[k].string);
      }
      free(ids);
    } else {
      fatal("unknown op");
    }
    if (json_get(s, "clock_ms") != NULL) {
      CHECK_OK(flakeid_manual_clock_get(clock, &now));
      CHECK(now == num(s, "clock_ms"), "%s: clock %" PRIu64 ", want %" PRIu64, where, now, num(s, "clock_ms"));
    }
  }
  flakeid_generator_free(g);
  flakeid_manual_clock_free(clock);
}

/* ---- seal.json ---- */

/* Hex text to bytes (the vectors' keys and tweaks); returns the byte count. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t len = strlen(hex);
  if (len % 2 != 0 || len / 2 > cap) fatal("hex of odd length or too long");
  for (size_t i = 0; i < len / 2; i++) {
    unsigned byte;
    if (sscanf(hex + 2 * i, "%2x", &byte) != 1) fatal("not hex");
    out[i] = (uint8_t)byte;
  }
  return len / 2;
}

static flakeid_status sealer_of(const json_value *c, flakeid_sealer **out) {
  uint8_t key[64], tweak[64];
  size_t key_len = unhex(str(c, "key"), key, sizeof key);
  size_t tweak_len = json_get(c, "tweak") != NULL ? unhex(str(c, "tweak"), tweak, sizeof tweak) : 0;
  flakeid_layout l = layout_ok(c);
  return flakeid_sealer_new(key, key_len, &l, tweak_len ? tweak : NULL, tweak_len, out);
}

static void seal_group_case(const json_value *g) {
  flakeid_sealer *s = NULL;
  CHECK_OK(sealer_of(g, &s));
  if (s == NULL) return;
  flakeid_layout l = layout_ok(g);
  flakeid_layout_limits lim;
  CHECK_OK(flakeid_layout_get_limits(&l, &lim));
  CHECK(lim.total_bits == num(g, "bits"), "%s: %u bits, want %" PRIu64, where, lim.total_bits, num(g, "bits"));
  const json_value *cases = need(g, "cases", JSON_ARRAY);
  if (cases->count == 0) fatal("a group without cases");
  for (size_t i = 0; i < cases->count; i++) {
    uint64_t id = id_at(&cases->items[i], "id"), sealed = id_at(&cases->items[i], "sealed"), got = 0, back = 0;
    CHECK_OK(flakeid_sealer_seal(s, id, &got));
    CHECK(got == sealed, "%s case %zu: seal(%" PRIu64 ") = %" PRIu64 ", want %" PRIu64, where, i, id, got, sealed);
    CHECK_OK(flakeid_sealer_unseal(s, sealed, &back));
    CHECK(back == id, "%s case %zu: unseal(%" PRIu64 ") = %" PRIu64 ", want %" PRIu64, where, i, sealed, back, id);
  }
  flakeid_sealer_free(s);
}

static void seal_invalid_case(const json_value *c) {
  const char *op = str(c, "op");
  flakeid_sealer *s = NULL;
  if (strcmp(op, "new") == 0) {
    flakeid_sealer *sentinel = (flakeid_sealer *)&s; /* must stay untouched */
    flakeid_sealer *got = sentinel;
    expect_error(sealer_of(c, &got), c);
    CHECK(got == sentinel, "%s: out_sealer written on failure", where);
    return;
  }
  CHECK_OK(sealer_of(c, &s));
  if (s == NULL) return;
  uint64_t out = 4242;
  if (strcmp(op, "seal") == 0) expect_error(flakeid_sealer_seal(s, id_at(c, "id"), &out), c);
  else if (strcmp(op, "unseal") == 0) expect_error(flakeid_sealer_unseal(s, id_at(c, "id"), &out), c);
  else fatal("unknown op");
  CHECK(out == 4242, "%s: out_id written on failure", where);
  flakeid_sealer_free(s);
}

/* ---- uuid.json ---- */

/* The vectors' "rand_b" is a decimal string (62 bits). */
static uint64_t u64_at(const json_value *c, const char *key) { return id_of(str(c, key)); }

/* 16 bytes from UUID text, by the library's parser (checked against the "bytes"
   hex of the uuid7 cases). */
static void uuid_of(const char *text, uint8_t out[16]) {
  CHECK_OK(flakeid_uuid_parse(text, strlen(text), out, 16));
}

/* The text a formatter writes, checked against `want` with its length. */
static void check_text(flakeid_status st, const char *buf, const size_t *len, const char *want) {
  CHECK(st == FLAKEID_OK, "%s: %s: %s", where, flakeid_status_name(st), flakeid_last_error_message());
  CHECK(strcmp(buf, want) == 0 && *len == strlen(want), "%s: got %s (%zu), want %s", where, buf, *len, want);
}

static void uuid7_case(const json_value *c) {
  uint8_t u[16] = {0}, want[16], back[16];
  unhex(str(c, "bytes"), want, sizeof want);
  uint64_t ms = num(c, "ms"), rand_b = u64_at(c, "rand_b");
  uint32_t rand_a = (uint32_t)num(c, "rand_a");
  CHECK_OK(flakeid_uuid7_compose(ms, rand_a, rand_b, u, sizeof u));
  CHECK(memcmp(u, want, 16) == 0, "%s: compose's bytes", where);
  char buf[FLAKEID_TYPEID_MAX_LEN + 1];
  size_t len = 0;
  check_text(flakeid_uuid_format(u, 16, buf, sizeof buf, &len), buf, &len, str(c, "uuid"));
  check_text(flakeid_ulid_format(u, 16, buf, sizeof buf, &len), buf, &len, str(c, "ulid"));
  check_text(flakeid_typeid_format("user", u, 16, buf, sizeof buf, &len), buf, &len, str(c, "typeid"));
  uuid_of(str(c, "uuid"), back);
  CHECK(memcmp(back, want, 16) == 0, "%s: parse_uuid", where);
  memset(back, 0, 16);
  CHECK_OK(flakeid_ulid_parse(str(c, "ulid"), strlen(str(c, "ulid")), back, 16));
  CHECK(memcmp(back, want, 16) == 0, "%s: parse_ulid", where);
  char prefix[FLAKEID_TYPEID_PREFIX_MAX + 1];
  size_t plen = 0;
  memset(back, 0, 16);
  CHECK_OK(flakeid_typeid_parse(str(c, "typeid"), strlen(str(c, "typeid")), prefix, sizeof prefix, &plen, back, 16));
  CHECK(memcmp(back, want, 16) == 0 && strcmp(prefix, "user") == 0 && plen == 4, "%s: parse_typeid", where);
  uint64_t got_ms = 0, got_b = 0, ulid_ms = 0;
  uint32_t got_a = 0, version = 0;
  CHECK_OK(flakeid_uuid7_decompose(u, 16, &got_ms, &got_a, &got_b));
  CHECK(got_ms == ms && got_a == rand_a && got_b == rand_b, "%s: decompose", where);
  CHECK_OK(flakeid_uuid7_timestamp_ms(u, 16, &got_ms));
  CHECK_OK(flakeid_ulid_timestamp_ms(u, 16, &ulid_ms));
  CHECK_OK(flakeid_uuid_version(u, 16, &version));
  CHECK(got_ms == ms && ulid_ms == ms && version == 7, "%s: timestamp, version", where);
}

static void uuid_compose_error_case(const json_value *c) {
  uint8_t u[16] = {0};
  expect_error(flakeid_uuid7_compose(num(c, "ms"), (uint32_t)num(c, "rand_a"), u64_at(c, "rand_b"), u, 16), c);
  static const uint8_t zero[16] = {0};
  CHECK(memcmp(u, zero, 16) == 0, "%s: out written on failure", where);
}

static void uuid_conversion_case(const json_value *c) {
  uint8_t u[16], l[16];
  char buf[FLAKEID_ULID_TEXT_LEN + 1];
  size_t len = 0;
  uuid_of(str(c, "uuid"), u);
  CHECK_OK(flakeid_ulid_parse(str(c, "ulid"), strlen(str(c, "ulid")), l, 16));
  CHECK(memcmp(u, l, 16) == 0, "%s: the same bits", where);
  check_text(flakeid_ulid_format(u, 16, buf, sizeof buf, &len), buf, &len, str(c, "ulid"));
}

static void uuid_alias_case(const json_value *c) {
  uint8_t got[16], want[16];
  const char *kind = str(c, "kind"), *text = str(c, "text");
  uuid_of(str(c, "uuid"), want);
  if (strcmp(kind, "uuid") == 0) CHECK_OK(flakeid_uuid_parse(text, strlen(text), got, 16));
  else if (strcmp(kind, "ulid") == 0) CHECK_OK(flakeid_ulid_parse(text, strlen(text), got, 16));
  else fatal("unknown kind");
  CHECK(memcmp(got, want, 16) == 0, "%s: %s", where, text);
}

static void uuid_bad_case(const json_value *c) {
  const char *kind = str(c, "kind");
  const json_value *t = need(c, "text", JSON_STRING);
  uint8_t out[16];
  memset(out, 0x42, sizeof out);
  if (strcmp(kind, "uuid") == 0) expect_error(flakeid_uuid_parse(t->string, t->len, out, 16), c);
  else if (strcmp(kind, "ulid") == 0) expect_error(flakeid_ulid_parse(t->string, t->len, out, 16), c);
  else fatal("unknown kind");
  CHECK(out[0] == 0x42 && out[15] == 0x42, "%s: out written on failure", where);
}

static void typeid_valid_case(const json_value *c) {
  const char *text = str(c, "typeid");
  uint8_t got[16], want[16];
  char prefix[FLAKEID_TYPEID_PREFIX_MAX + 1], buf[FLAKEID_TYPEID_MAX_LEN + 1];
  size_t plen = 0, len = 0;
  uuid_of(str(c, "uuid"), want);
  CHECK_OK(flakeid_typeid_parse(text, strlen(text), prefix, sizeof prefix, &plen, got, 16));
  CHECK(memcmp(got, want, 16) == 0 && strcmp(prefix, str(c, "prefix")) == 0, "%s: %s", where, text);
  check_text(flakeid_typeid_format(prefix, got, 16, buf, sizeof buf, &len), buf, &len, text);
}

static void typeid_invalid_case(const json_value *c) {
  const json_value *t = need(c, "typeid", JSON_STRING);
  uint8_t out[16];
  char prefix[FLAKEID_TYPEID_PREFIX_MAX + 1];
  expect_error(flakeid_typeid_parse(t->string, t->len, prefix, sizeof prefix, NULL, out, 16), c);
}

static void prefix_error_case(const json_value *c) {
  flakeid_uuid_generator *g = NULL;
  CHECK_OK(flakeid_uuid_generator_new(NULL, &g));
  char buf[256];
  expect_error(flakeid_typeid_next(g, str(c, "prefix"), buf, sizeof buf, NULL), c);
  flakeid_uuid_stats s;
  CHECK_OK(flakeid_uuid_generator_stats(g, &s, sizeof s));
  CHECK(s.ids_issued == 0, "%s: a bad prefix cost an ID", where);
  flakeid_uuid_generator_free(g);
}

static void uuid_range_case(const json_value *c) {
  uint8_t first[16], last[16], want_first[16], want_last[16];
  uuid_of(str(c, "first"), want_first);
  uuid_of(str(c, "last"), want_last);
  CHECK_OK(flakeid_uuid7_range(num(c, "start_ms"), num(c, "end_ms"), first, last, 16));
  CHECK(memcmp(first, want_first, 16) == 0 && memcmp(last, want_last, 16) == 0, "%s: range", where);
}

/* ---- wide.json ---- */

static const char *vectors_dir = ".";

/* The core's table of the 128-bit family's functions: the c column names a
   function the committed header declares (NULL: the note says what does it). */
static void wide_function_case(const json_value *c) {
  const json_value *name = json_get(c, "c");
  CHECK(name != NULL, "%s: no c column", where);
  if (name->type == JSON_NULL) {
    CHECK(strlen(str(c, "note")) > 0, "%s: no C function and no note", where);
    return;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/../../include/flakeid.h", vectors_dir);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL, "%s: %s: %s", where, path, strerror(errno));
  static char header[1 << 20];
  size_t n = fread(header, 1, sizeof header - 1, f);
  fclose(f);
  header[n] = 0;
  char call[256];
  snprintf(call, sizeof call, " %s(", name->string);
  CHECK(strstr(header, call) != NULL, "%s: include/flakeid.h declares no %s", where, name->string);
}

/* An explicit time: the UUID's first 12 hex digits (its 48-bit ms), version 7 and
   RFC 9562's variant; or the error's kind and field. */
static void explicit_time_case(const json_value *c) {
  flakeid_uuid_generator *g = NULL;
  CHECK_OK(flakeid_uuid_generator_new(NULL, &g));
  uint8_t out[16];
  uint64_t ms = num(c, "unix_ms");
  flakeid_status st = flakeid_uuid_at(g, ms > INT64_MAX ? -1 : (int64_t)ms, out, sizeof out);
  if (json_get(c, "error") != NULL) {
    expect_error(st, c);
  } else {
    CHECK_OK(st);
    char hex[13];
    for (int i = 0; i < 6; i++) snprintf(hex + 2 * i, 3, "%02x", out[i]);
    CHECK(strcmp(hex, str(c, "time_hex")) == 0, "%s: time %s", where, hex);
    CHECK(out[6] >> 4 == 7 && out[8] >> 6 == 2, "%s: version or variant", where);
  }
  flakeid_uuid_stats s;
  CHECK_OK(flakeid_uuid_generator_stats(g, &s, sizeof s));
  CHECK(s.ids_issued == 0, "%s: an explicit time took a slot of the sequence", where);
  flakeid_uuid_generator_free(g);
}

/* A shifted now: within [clock before + shift, clock after + shift] (the clock in
   whole seconds here: C's portable time()); or the error. */
static void shift_case(const json_value *c) {
  const json_value *v = need(c, "shift_ms", JSON_INT);
  int64_t shift = v->negative ? (int64_t)(0 - v->integer) : (int64_t)v->integer;
  flakeid_uuid_generator *g = NULL;
  CHECK_OK(flakeid_uuid_generator_new(NULL, &g));
  uint8_t out[16];
  uint64_t before = (uint64_t)time(NULL) * 1000;
  flakeid_status st = flakeid_uuid_shifted(g, shift, out, sizeof out);
  uint64_t after = ((uint64_t)time(NULL) + 1) * 1000;
  if (json_get(c, "error") != NULL) {
    expect_error(st, c);
  } else {
    CHECK_OK(st);
    uint64_t ms = 0;
    for (int i = 0; i < 6; i++) ms = ms << 8 | out[i];
    CHECK((int64_t)ms >= (int64_t)before + shift - 1 && (int64_t)ms <= (int64_t)after + shift + 1,
          "%s: %llu not within [%llu, %llu] + %lld", where, (unsigned long long)ms, (unsigned long long)before,
          (unsigned long long)after, (long long)shift);
  }
  flakeid_uuid_generator_free(g);
}

/* ---- driver ---- */

typedef struct {
  const char *section;
  case_fn fn;
} section;

typedef struct {
  const char *file;
  section sections[10];
} vector_file;

static const vector_file FILES[] = {
    {"layouts.json",
     {{"presets", preset_case}, {"invalid_layouts", invalid_layout_case}, {"invalid_generators", invalid_generator_case}}},
    {"compose.json",
     {{"cases", compose_case},
      {"compose_errors", compose_error_case},
      {"decompose_errors", decompose_error_case},
      {"ranges", range_case}}},
    {"encodings.json", {{"cases", encoding_case}, {"decode_aliases", alias_case}, {"bad", bad_text_case}}},
    {"timelines.json", {{"timelines", timeline_case}}},
    {"seal.json", {{"groups", seal_group_case}, {"invalid", seal_invalid_case}}},
    {"options.json",
     {{"options", option_entry_case},
      {"cases", option_case},
      {"env_cases", option_env_case},
      {"settings_cases", option_settings_case}}},
    {"uuid.json",
     {{"uuid7", uuid7_case},
      {"compose_errors", uuid_compose_error_case},
      {"conversions", uuid_conversion_case},
      {"text_aliases", uuid_alias_case},
      {"bad", uuid_bad_case},
      {"typeid_valid", typeid_valid_case},
      {"typeid_invalid", typeid_invalid_case},
      {"prefix_errors", prefix_error_case},
      {"ranges", uuid_range_case}}},
    {"wide.json", {{"functions", wide_function_case}, {"explicit_times", explicit_time_case}, {"shifts", shift_case}}},
};
#define NFILES (sizeof FILES / sizeof FILES[0])

void test_vectors(const char *dir) {
  long total = 0;
  vectors_dir = dir;
  for (size_t f = 0; f < NFILES; f++) {
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", dir, FILES[f].file);
    set_where("%s", path);
    json_value *root = json_parse_file(path, err, sizeof err);
    if (root == NULL) fatal(err);
    if (root->type != JSON_OBJECT) fatal("root is not an object");
    /* Every top-level member is a known section (or the _comment). */
    for (size_t k = 0; k < root->count; k++) {
      int known = strcmp(root->keys[k], "_comment") == 0;
      for (const section *s = FILES[f].sections; s->section != NULL; s++) known |= strcmp(s->section, root->keys[k]) == 0;
      set_where("%s: section %s", path, root->keys[k]);
      if (!known) fatal("unknown section: teach tests/c/test_vectors.c to run it");
    }
    current = FILES[f].file;
    long n = 0;
    for (const section *s = FILES[f].sections; s->section != NULL; s++) n += run_section(root, s->section, s->fn);
    printf("  vectors: %-15s %4ld cases\n", FILES[f].file, n);
    total += n;
    json_free(root);
  }
  /* Every vector file is one this program runs. */
  DIR *d = opendir(dir);
  if (d == NULL) { set_where("%s", dir); fatal(strerror(errno)); }
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
    int known = 0;
    for (size_t f = 0; f < NFILES; f++) known |= strcmp(FILES[f].file, e->d_name) == 0;
    /* Run by the core, the CLI and the service only: the C ABI has no auto-detecting decode. */
    known |= strcmp(e->d_name, "decode_auto.json") == 0;
    CHECK(known, "tests/vectors/%s is not run by the C tests", e->d_name);
  }
  closedir(d);
  printf("  vectors: %ld cases in all\n", total);
}
