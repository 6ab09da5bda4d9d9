/* A small, strict JSON reader for the shared test vectors (the files in tests/vectors).
 *
 * It accepts exactly what the vector files use: objects, arrays, strings (with
 * every JSON escape), integers (no fractions or exponents: the schema has none),
 * booleans and null. Anything else is an error with its byte offset, so a schema
 * change fails the C tests loudly instead of being misread. */
#ifndef FLAKEID_TEST_JSON_H
#define FLAKEID_TEST_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_INT, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
  json_type type;
  bool boolean;
  bool negative;     /* JSON_INT: the magnitude is `integer` */
  uint64_t integer;
  char *string;      /* JSON_STRING: NUL-terminated (may contain \u0000 escapes: see len) */
  size_t len;
  size_t count;      /* JSON_ARRAY / JSON_OBJECT: number of items */
  struct json_value *items;
  char **keys;       /* JSON_OBJECT: keys[i] names items[i] */
} json_value;

/* Parses a whole file; NULL on error (the reason is written to `err`). */
json_value *json_parse_file(const char *path, char *err, size_t err_len);
/* Parses a NUL-terminated text (for the reader's own self-test). */
json_value *json_parse_text(const char *text, size_t len, char *err, size_t err_len);
void json_free(json_value *v);

/* The member `key` of an object, or NULL when absent (or `obj` is not an object). */
const json_value *json_get(const json_value *obj, const char *key);

#endif
