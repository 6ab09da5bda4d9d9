/* Assertions for the C tests: a failed CHECK prints where and why, and counts;
 * main() exits non-zero when any failed. */
#ifndef FLAKEID_TEST_CHECK_H
#define FLAKEID_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "flakeid.h"

#ifdef _WIN32
/* The POSIX calls the suite uses that mingw-w64's C runtime lacks
 * (make test-windows builds it for Windows). */
#include <direct.h>
#include <stdlib.h>
#include <string.h>
static inline int setenv(const char *name, const char *value, int overwrite) {
  (void)overwrite;
  return _putenv_s(name, value);
}
static inline int unsetenv(const char *name) {
  /* An empty value removes the variable (_putenv_s). */
  return _putenv_s(name, "");
}
static inline char *mkdtemp(char *tmpl) {
  return _mktemp_s(tmpl, strlen(tmpl) + 1) == 0 && _mkdir(tmpl) == 0 ? tmpl : NULL;
}
#endif

extern int check_failures;
extern long check_passes;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (cond) {                                                              \
      check_passes++;                                                        \
    } else {                                                                 \
      check_failures++;                                                      \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
    }                                                                        \
  } while (0)

/* A call that must succeed; on failure prints the status and message. */
#define CHECK_OK(call)                                                                         \
  do {                                                                                         \
    flakeid_status check_st_ = (call);                                                         \
    CHECK(check_st_ == FLAKEID_OK, "%s -> %s: %s", #call, flakeid_status_name(check_st_),     \
          flakeid_last_error_message());                                                       \
  } while (0)

/* A call that must fail with `want`. */
#define CHECK_STATUS(call, want)                                                               \
  do {                                                                                         \
    flakeid_status check_st_ = (call);                                                         \
    CHECK(check_st_ == (want), "%s -> %s, want %s (%s)", #call, flakeid_status_name(check_st_), \
          flakeid_status_name(want), flakeid_last_error_message());                           \
  } while (0)

void test_vectors(const char *vectors_dir);
void test_api(void);
void test_threads(void);
void test_fork(void);
void test_stress(void);
void test_uuid(void);

#endif
