#include "digest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_error[256];

const char* digest_error(void) { return g_error; }

static void fold(uint64_t* h, const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  for (size_t i = 0; i < n; i++) {
    *h ^= b[i];
    *h *= 0x100000001b3ULL;
  }
}

static void token(uint64_t* h, char t) { fold(h, &t, 1); }

static int bit(const void* buf, int64_t i) { return (((const uint8_t*)buf)[i >> 3] >> (i & 7)) & 1; }

static int width(const char* f) {
  switch (f[0]) {
    case 'c': case 'C': return 1;
    case 's': case 'S': case 'e': return 2;
    case 'i': case 'I': case 'f': return 4;
    case 'l': case 'L': case 'g': return 8;
    default: return 0;
  }
}

static int element(uint64_t* h, const struct ArrowSchema* s, const struct ArrowArray* a, int64_t i);

static int range(uint64_t* h, const struct ArrowSchema* s, const struct ArrowArray* a, int64_t start, int64_t len) {
  int w = s->format[1] == '\0' ? width(s->format) : 0;
  if (w > 0) { /* fixed-width values: the same tokens as element(), without its dispatch per value */
    const void* valid = a->n_buffers > 0 ? a->buffers[0] : NULL;
    const char* data = (const char*)a->buffers[1];
    for (int64_t k = 0; k < len; k++) {
      int64_t j = a->offset + start + k;
      if (valid != NULL && !bit(valid, j)) {
        token(h, 'N');
      } else {
        token(h, 'V');
        fold(h, data + j * w, (size_t)w);
      }
    }
    return 0;
  }
  for (int64_t k = 0; k < len; k++)
    if (element(h, s, a, start + k) != 0) return -1;
  return 0;
}

/* Element i (relative to the array's own offset) of a. */
static int element(uint64_t* h, const struct ArrowSchema* s, const struct ArrowArray* a, int64_t i) {
  const char* f = s->format;
  int64_t j = a->offset + i; /* index into the buffers */
  int is_union = f[0] == '+' && f[1] == 'u';
  if (f[0] == 'n') { token(h, 'N'); return 0; }
  if (!is_union && a->n_buffers > 0 && a->buffers[0] != NULL && !bit(a->buffers[0], j)) {
    token(h, 'N');
    return 0;
  }
  token(h, 'V');
  int w = width(f);
  if (f[1] == '\0' && w > 0) { fold(h, (const char*)a->buffers[1] + j * w, (size_t)w); return 0; }
  /* Dispatch on the format's first characters (no string compares per value). */
  char f0 = f[0], f1 = f[1], f2 = f1 ? f[2] : '\0';
  if (f0 == 'b' && f1 == '\0') { token(h, (char)bit(a->buffers[1], j)); return 0; }
  if ((f0 == 'u' || f0 == 'z' || f0 == 'U' || f0 == 'Z') && f1 == '\0') {
    int64_t o0, o1;
    if (f0 == 'u' || f0 == 'z') { o0 = ((const int32_t*)a->buffers[1])[j]; o1 = ((const int32_t*)a->buffers[1])[j + 1]; }
    else { o0 = ((const int64_t*)a->buffers[1])[j]; o1 = ((const int64_t*)a->buffers[1])[j + 1]; }
    int64_t n = o1 - o0;
    if (n < 0) { snprintf(g_error, sizeof g_error, "string %lld has a negative length", (long long)j); return -1; }
    fold(h, &n, sizeof n);
    fold(h, (const char*)a->buffers[2] + o0, (size_t)n);
    return 0;
  }
  if (f0 == '+' && (f1 == 'l' || f1 == 'L' || f1 == 'm') && f2 == '\0') {
    int64_t o0, o1;
    if (f1 == 'L') { o0 = ((const int64_t*)a->buffers[1])[j]; o1 = ((const int64_t*)a->buffers[1])[j + 1]; }
    else { o0 = ((const int32_t*)a->buffers[1])[j]; o1 = ((const int32_t*)a->buffers[1])[j + 1]; }
    int64_t n = o1 - o0;
    if (n < 0) { snprintf(g_error, sizeof g_error, "list %lld has a negative length", (long long)j); return -1; }
    fold(h, &n, sizeof n);
    return range(h, s->children[0], a->children[0], o0, n);
  }
  if (f0 == '+' && f1 == 'w' && f2 == ':') {
    int64_t n = atoll(f + 3);
    fold(h, &n, sizeof n);
    return range(h, s->children[0], a->children[0], j * n, n);
  }
  if (f0 == '+' && f1 == 's' && f2 == '\0') {
    for (int64_t c = 0; c < s->n_children; c++)
      if (element(h, s->children[c], a->children[c], j) != 0) return -1;
    return 0;
  }
  if (is_union && (f2 == 'd' || f2 == 's') && f[3] == ':') {
    /* Type ids in buffers[0]; the child whose id it is: the ids list in the format, in child order. */
    int8_t id = ((const int8_t*)a->buffers[0])[j];
    int64_t child = -1, k = 0;
    for (const char* p = f + 4; *p; k++) {
      if (atoi(p) == id) { child = k; break; }
      while (*p && *p != ',') p++;
      if (*p == ',') p++;
    }
    if (child < 0 || child >= s->n_children) { snprintf(g_error, sizeof g_error, "union type id %d not in %s", id, f); return -1; }
    fold(h, &id, 1);
    int64_t at = f2 == 'd' ? ((const int32_t*)a->buffers[1])[j] : j;
    return element(h, s->children[child], a->children[child], at);
  }
  snprintf(g_error, sizeof g_error, "unsupported Arrow format '%s'", f);
  return -1;
}

int digest_array(uint64_t* h, const struct ArrowSchema* schema, const struct ArrowArray* array, int64_t start, int64_t len) {
  return range(h, schema, array, start, len);
}

int digest_batch(uint64_t* h, const struct ArrowSchema* schema, const struct ArrowArray* array) {
  return range(h, schema, array, 0, array->length);
}
