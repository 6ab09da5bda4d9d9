/* The C test suite: `flakeid_test <tests/vectors dir>`. Built by mk/c.mk with
 * -Wall -Wextra -Werror, once against libflakeid.so and once against
 * libflakeid.a, and run under AddressSanitizer + UBSan. */
#include <string.h>

#include "check.h"
#include "json.h"

int check_failures = 0;
long check_passes = 0;

/* The reader must refuse what the vector schema does not have. */
static void test_json_reader(void) {
  static const char *bad[] = {"{\"a\": 1.5}", "{\"a\": 1e3}", "[1, 2,]", "{\"a\": 1, \"a\": 2}", "[01]",
                              "\"\\x\"",      "[1] x",      "{\"a\" 1}", "\"tab\there\"", "18446744073709551616"};
  char err[128];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_value *v = json_parse_text(bad[i], strlen(bad[i]), err, sizeof err);
    CHECK(v == NULL && err[0] != '\0', "the reader must refuse %s", bad[i]);
    json_free(v);
  }
  const char *good = " {\"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"n\": [18446744073709551615, -3, true, null]} ";
  json_value *v = json_parse_text(good, strlen(good), err, sizeof err);
  CHECK(v != NULL, "%s", err);
  if (v == NULL) return;
  const json_value *s = json_get(v, "s"), *n = json_get(v, "n");
  CHECK(s && strcmp(s->string, "a\xc3\xa9\xf0\x9f\x98\x80\n") == 0, "escapes");
  CHECK(n && n->count == 4 && n->items[0].integer == UINT64_MAX && n->items[1].negative && n->items[2].boolean &&
            n->items[3].type == JSON_NULL,
        "values");
  json_free(v);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <tests/vectors dir>\n", argv[0]);
    return 2;
  }
  printf("flakeid %s C tests\n", flakeid_version());
  test_json_reader();
  test_api();
  printf("  api, errors, NULLs: ok so far (%d failures)\n", check_failures);
  test_threads();
  test_stress();
  printf("  4 threads on one generator: done (%d failures)\n", check_failures);
  test_fork();
  printf("  fork: done (%d failures)\n", check_failures);
  test_uuid();
  printf("  uuid: generator, buffers, threads, fork: done (%d failures)\n", check_failures);
  test_vectors(argv[1]);
  printf("%s: %ld checks passed, %d failed\n", check_failures ? "FAILED" : "ok", check_passes, check_failures);
  return check_failures ? 1 : 0;
}
