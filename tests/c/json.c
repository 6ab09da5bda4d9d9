/* See json.h. Recursive descent over the whole text; every allocation is freed by
 * json_free, also on the error path. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s;
  size_t len, pos;
  char *err;
  size_t err_len;
  int depth;
} parser;

static bool fail(parser *p, const char *what) {
  if (p->err[0] == '\0') snprintf(p->err, p->err_len, "JSON error at byte %zu: %s", p->pos, what);
  return false;
}

static void skip_ws(parser *p) {
  while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) != NULL && p->s[p->pos] != '\0') p->pos++;
}

static bool literal(parser *p, const char *word) {
  size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return fail(p, "unexpected token");
  p->pos += n;
  return true;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool read_hex4(parser *p, uint32_t *out) {
  if (p->len - p->pos < 4) return fail(p, "short \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    int d = hex_digit(p->s[p->pos + i]);
    if (d < 0) return fail(p, "bad \\u escape");
    v = v << 4 | (uint32_t)d;
  }
  p->pos += 4;
  *out = v;
  return true;
}

static size_t put_utf8(char *dst, uint32_t cp) {
  if (cp < 0x80) { dst[0] = (char)cp; return 1; }
  if (cp < 0x800) { dst[0] = (char)(0xC0 | cp >> 6); dst[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
  if (cp < 0x10000) {
    dst[0] = (char)(0xE0 | cp >> 12); dst[1] = (char)(0x80 | (cp >> 6 & 0x3F)); dst[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  dst[0] = (char)(0xF0 | cp >> 18); dst[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  dst[2] = (char)(0x80 | (cp >> 6 & 0x3F)); dst[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Reads a string starting at its opening quote into a fresh buffer. */
static bool parse_string(parser *p, char **out, size_t *out_len) {
  p->pos++; /* opening quote */
  /* Escapes only shrink the text (\uXXXX is 6 bytes for at most 3, a pair 12 for 4). */
  char *buf = malloc(p->len - p->pos + 1);
  if (buf == NULL) return fail(p, "out of memory");
  size_t n = 0;
  for (;;) {
    if (p->pos >= p->len) { free(buf); return fail(p, "unterminated string"); }
    unsigned char c = (unsigned char)p->s[p->pos++];
    if (c == '"') break;
    if (c < 0x20) { free(buf); return fail(p, "control character in string"); }
    if (c != '\\') { buf[n++] = (char)c; continue; }
    if (p->pos >= p->len) { free(buf); return fail(p, "unterminated escape"); }
    char e = p->s[p->pos++];
    const char *simple = strchr("\"\\/bfnrt", e);
    if (simple != NULL && e != '\0') {
      buf[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
    } else if (e == 'u') {
      uint32_t cp;
      if (!read_hex4(p, &cp)) { free(buf); return false; }
      if (cp >= 0xD800 && cp < 0xDC00) {
        uint32_t lo;
        if (!literal(p, "\\u") || !read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
          free(buf);
          return fail(p, "bad surrogate pair");
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        free(buf);
        return fail(p, "lone low surrogate");
      }
      n += put_utf8(buf + n, cp);
    } else {
      free(buf);
      return fail(p, "unknown escape");
    }
  }
  buf[n] = '\0';
  *out = buf;
  *out_len = n;
  return true;
}

static bool parse_value(parser *p, json_value *v);

static bool parse_int(parser *p, json_value *v) {
  v->type = JSON_INT;
  if (p->s[p->pos] == '-') { v->negative = true; p->pos++; }
  size_t start = p->pos;
  uint64_t acc = 0;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
    uint64_t d = (uint64_t)(p->s[p->pos] - '0');
    if (acc > (UINT64_MAX - d) / 10) return fail(p, "integer does not fit 64 bits");
    acc = acc * 10 + d;
    p->pos++;
  }
  if (p->pos == start) return fail(p, "expected a digit");
  if (p->s[start] == '0' && p->pos - start > 1) return fail(p, "leading zero");
  if (p->pos < p->len && strchr(".eE", p->s[p->pos]) != NULL && p->s[p->pos] != '\0')
    return fail(p, "fractions and exponents are not part of the vector schema");
  v->integer = acc;
  return true;
}

static bool parse_container(parser *p, json_value *v, bool object) {
  if (++p->depth > 64) return fail(p, "nesting too deep");
  v->type = object ? JSON_OBJECT : JSON_ARRAY;
  char close = object ? '}' : ']';
  p->pos++;
  size_t cap = 0;
  skip_ws(p);
  if (p->pos < p->len && p->s[p->pos] == close) { p->pos++; p->depth--; return true; }
  for (;;) {
    if (v->count == cap) {
      cap = cap ? cap * 2 : 8;
      json_value *items = realloc(v->items, cap * sizeof *items);
      if (items == NULL) return fail(p, "out of memory");
      v->items = items;
      if (object) {
        char **keys = realloc(v->keys, cap * sizeof *keys);
        if (keys == NULL) return fail(p, "out of memory");
        v->keys = keys;
      }
    }
    json_value *item = &v->items[v->count];
    memset(item, 0, sizeof *item);
    if (object) {
      skip_ws(p);
      size_t key_len;
      if (p->pos >= p->len || p->s[p->pos] != '"') return fail(p, "expected a key");
      if (!parse_string(p, &v->keys[v->count], &key_len)) return false;
      for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], v->keys[v->count]) == 0) { v->count++; return fail(p, "duplicate key"); }
      skip_ws(p);
      if (p->pos >= p->len || p->s[p->pos] != ':') { v->count++; return fail(p, "expected ':'"); }
      p->pos++;
    }
    v->count++; /* counted before parsing, so json_free sees a half-parsed item */
    if (!parse_value(p, item)) return false;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; continue; }
    if (p->pos < p->len && p->s[p->pos] == close) { p->pos++; p->depth--; return true; }
    return fail(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static bool parse_value(parser *p, json_value *v) {
  skip_ws(p);
  if (p->pos >= p->len) return fail(p, "unexpected end");
  switch (p->s[p->pos]) {
    case '{': return parse_container(p, v, true);
    case '[': return parse_container(p, v, false);
    case '"': v->type = JSON_STRING; return parse_string(p, &v->string, &v->len);
    case 't': v->type = JSON_BOOL; v->boolean = true; return literal(p, "true");
    case 'f': v->type = JSON_BOOL; return literal(p, "false");
    case 'n': v->type = JSON_NULL; return literal(p, "null");
    default:
      if (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9')) return parse_int(p, v);
      return fail(p, "unexpected character");
  }
}

static void free_inner(json_value *v) {
  free(v->string);
  for (size_t i = 0; i < v->count; i++) {
    free_inner(&v->items[i]);
    if (v->keys != NULL) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
}

void json_free(json_value *v) {
  if (v == NULL) return;
  free_inner(v);
  free(v);
}

json_value *json_parse_text(const char *text, size_t len, char *err, size_t err_len) {
  parser p = {text, len, 0, err, err_len, 0};
  err[0] = '\0';
  json_value *v = calloc(1, sizeof *v);
  if (v == NULL) { snprintf(err, err_len, "out of memory"); return NULL; }
  if (!parse_value(&p, v)) { json_free(v); return NULL; }
  skip_ws(&p);
  if (p.pos != p.len) { fail(&p, "trailing characters"); json_free(v); return NULL; }
  return v;
}

json_value *json_parse_file(const char *path, char *err, size_t err_len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) { snprintf(err, err_len, "cannot open %s", path); return NULL; }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf != NULL) {
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap) break;
    cap *= 2;
    char *bigger = realloc(buf, cap);
    if (bigger == NULL) { free(buf); buf = NULL; break; }
    buf = bigger;
  }
  bool read_error = ferror(f);
  fclose(f);
  if (buf == NULL || read_error) { free(buf); snprintf(err, err_len, "cannot read %s", path); return NULL; }
  json_value *v = json_parse_text(buf, len, err, err_len);
  free(buf);
  return v;
}

const json_value *json_get(const json_value *obj, const char *key) {
  if (obj == NULL || obj->type != JSON_OBJECT) return NULL;
  for (size_t i = 0; i < obj->count; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}
