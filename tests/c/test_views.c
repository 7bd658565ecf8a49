/* Views and the entry object over a file: every top-level field of a fundamental type, a
 * std::vector (or ROOT::RVec) of one, or a std::string is read entry by entry through a view in a
 * scattered order and again in order, and all of them at once through one entry object, and a
 * digest of each is printed ("view FIELD TYPE DIGEST", "load FIELD TYPE DIGEST");
 * tests/c/test_views.py compares the digests with the Rust reader's values. The digest of a field
 * is the sum over entries i of (i + 1) * v_i modulo 2^64, v_i the value's bits (zero-extended from
 * its width) or, for items, count + sum over items k of (k + 1) * bits: independent of the visiting
 * order. Then misuse: a view of the wrong type, an entry past the end, a value read from an items
 * view. Usage: test_views FILE [NTUPLE]. Runs under AddressSanitizer and LeakSanitizer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_FIELDS 4096

struct field {
  char name[256];
  char type[256];
  uint32_t code, size;
  int items; /* 0: one value; 1: items; 2: string */
  uint64_t view, d_view, d_scatter, d_load;
  union {
    uint64_t u;
    unsigned char b[8];
  } value;
  struct rntuple_items got;
};

static const struct {
  const char* name;
  uint32_t code, size;
} TYPES[] = {{"bool", RNTUPLE_TYPE_BOOL, 1},           {"char", RNTUPLE_TYPE_I8, 1},           {"std::int8_t", RNTUPLE_TYPE_I8, 1},
             {"std::uint8_t", RNTUPLE_TYPE_U8, 1},      {"std::int16_t", RNTUPLE_TYPE_I16, 2},  {"std::uint16_t", RNTUPLE_TYPE_U16, 2},
             {"std::int32_t", RNTUPLE_TYPE_I32, 4},     {"std::uint32_t", RNTUPLE_TYPE_U32, 4}, {"std::int64_t", RNTUPLE_TYPE_I64, 8},
             {"std::uint64_t", RNTUPLE_TYPE_U64, 8},    {"float", RNTUPLE_TYPE_F32, 4},         {"double", RNTUPLE_TYPE_F64, 8}};

/* The code and size of a fundamental type name, 0 when it is none. */
static uint32_t fundamental(const char* t, size_t len, uint32_t* size) {
  for (size_t k = 0; k < sizeof TYPES / sizeof TYPES[0]; k++)
    if (strlen(TYPES[k].name) == len && strncmp(TYPES[k].name, t, len) == 0) {
      *size = TYPES[k].size;
      return TYPES[k].code;
    }
  return 0;
}

/* Whether the field's type is one a view reads, and how. */
static int classify(struct field* f) {
  const char* prefixes[] = {"std::vector<", "ROOT::VecOps::RVec<", "ROOT::RVec<"};
  size_t n = strlen(f->type);
  if (strcmp(f->type, "std::string") == 0) {
    f->items = 2;
    f->code = RNTUPLE_TYPE_STRING;
    f->size = 1;
    return 1;
  }
  for (size_t k = 0; k < 3; k++) {
    size_t p = strlen(prefixes[k]);
    if (n > p + 1 && strncmp(f->type, prefixes[k], p) == 0 && f->type[n - 1] == '>') {
      f->items = 1;
      f->code = fundamental(f->type + p, n - p - 1, &f->size);
      return f->code != 0;
    }
  }
  f->items = 0;
  f->code = fundamental(f->type, n, &f->size);
  return f->code != 0;
}

static uint64_t gcd(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static uint64_t bits(const void* p, uint32_t size) {
  uint64_t v = 0;
  memcpy(&v, p, size); /* little-endian: the value's bits, zero-extended */
  return v;
}

static uint64_t items_term(const void* data, uint64_t len, uint32_t size) {
  uint64_t t = len;
  for (uint64_t k = 0; k < len; k++) t += (k + 1) * bits((const unsigned char*)data + k * size, size);
  return t;
}

/* Entry i's term of the field's digest through its view. */
static uint64_t view_term(struct field* f, uint64_t i) {
  if (f->items) {
    const void* data = NULL;
    uint64_t len = 0;
    CHECK(rntuple_view_get_items(f->view, i, &data, &len));
    return items_term(data, len, f->size);
  }
  f->value.u = 0;
  CHECK(rntuple_view_get(f->view, i, f->value.b, f->size));
  return f->value.u;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_views FILE [NTUPLE]\n");
    return 2;
  }
  uint64_t r = 0, n = 0, loader = 0;
  size_t nf = 0, used = 0;
  CHECK(rntuple_open(argv[1], argc > 2 ? argv[2] : NULL, &r));
  CHECK(rntuple_reader_entries(r, &n));
  CHECK(rntuple_reader_field_count(r, &nf));
  struct field* fields = calloc(MAX_FIELDS, sizeof *fields);
  if (!fields) return 1;
  CHECK(rntuple_entry_load_create(r, &loader));
  for (size_t k = 0; k < nf && used < MAX_FIELDS; k++) {
    struct field* f = &fields[used];
    size_t len = 0;
    CHECK(rntuple_reader_field_name(r, k, f->name, sizeof f->name, &len));
    CHECK(rntuple_reader_field_type(r, k, f->type, sizeof f->type, &len));
    if (!classify(f)) continue;
    if (f->items == 1) {
      CHECK(rntuple_view_create_items(r, f->name, f->code, &f->view));
      CHECK(rntuple_entry_load_bind_items(loader, f->name, f->code, &f->got));
    } else {
      CHECK(rntuple_view_create(r, f->name, f->code, &f->view));
      CHECK(rntuple_entry_load_bind(loader, f->name, f->code, f->items ? (void*)&f->got : (void*)f->value.b));
    }
    used++;
  }
  /* Scattered (a stride coprime with n visits every entry once), through the views and the entry
   * object, then in order through the views. */
  uint64_t stride = 7919;
  while (n > 1 && gcd(stride, n) != 1) stride += 2;
  for (uint64_t j = 0, i = 0; j < n; j++, i = (i + stride) % n) {
    for (size_t k = 0; k < used; k++) fields[k].d_scatter += (i + 1) * view_term(&fields[k], i);
    for (size_t k = 0; k < used; k++) fields[k].value.u = 0;
    CHECK(rntuple_entry_load(loader, i));
    for (size_t k = 0; k < used; k++) {
      struct field* f = &fields[k];
      f->d_load += (i + 1) * (f->items ? items_term(f->got.data, f->got.len, f->size) : f->value.u);
    }
  }
  uint64_t* pages = calloc(used + 1, sizeof *pages);
  uint64_t* cached = calloc(used + 1, sizeof *cached);
  if (!pages || !cached) return 1;
  for (size_t k = 0; k < used; k++) CHECK(rntuple_view_stats(fields[k].view, &pages[k], &cached[k]));
  for (size_t k = 0; k < used; k++)
    for (uint64_t i = 0; i < n; i++) fields[k].d_view += (i + 1) * view_term(&fields[k], i);
  int bad = 0;
  for (size_t k = 0; k < used; k++) {
    struct field* f = &fields[k];
    printf("view %s %s %" PRIu64 "\n", f->name, f->type, f->d_view);
    printf("load %s %s %" PRIu64 "\n", f->name, f->type, f->d_load);
    if (f->d_scatter != f->d_view) {
      fprintf(stderr, "%s: scattered order digest %" PRIu64 " != in order %" PRIu64 "\n", f->name, f->d_scatter, f->d_view);
      bad = 1;
    }
    /* Every page once: the scattered pass kept every page it touched (when they fit the cache), so
     * the pass in order decoded none again. */
    uint64_t p2 = 0;
    CHECK(rntuple_view_stats(f->view, &p2, NULL));
    if (cached[k] < (8u << 20) && p2 != pages[k]) {
      fprintf(stderr, "%s: %" PRIu64 " pages decoded scattered, %" PRIu64 " after the pass in order\n", f->name, pages[k], p2);
      bad = 1;
    }
  }
  free(pages);
  free(cached);
  /* Misuse: each an error code, never a crash. */
  if (used > 0) {
    struct field* f = &fields[0];
    unsigned char buf[16];
    const void* data = NULL;
    uint64_t len = 0, v2 = 0;
    EXPECT(rntuple_view_get(f->view, n, buf, f->size) == RNTUPLE_ERR_INVALID_ARGUMENT);
    EXPECT(rntuple_entry_load(loader, n) == RNTUPLE_ERR_INVALID_ARGUMENT);
    if (f->items)
      EXPECT(rntuple_view_get(f->view, 0, buf, f->size) == RNTUPLE_ERR_INVALID_ARGUMENT);
    else
      EXPECT(rntuple_view_get_items(f->view, 0, &data, &len) == RNTUPLE_ERR_INVALID_ARGUMENT);
    uint32_t wrong = f->code == RNTUPLE_TYPE_F64 ? RNTUPLE_TYPE_I16 : RNTUPLE_TYPE_F64;
    if (f->items != 2) {
      int32_t st = f->items ? rntuple_view_create_items(r, f->name, wrong, &v2) : rntuple_view_create(r, f->name, wrong, &v2);
      if (st == RNTUPLE_OK) {
        fprintf(stderr, "%s viewed as type %u did not fail\n", f->name, wrong);
        bad = 1;
        rntuple_view_free(v2);
      }
    }
    EXPECT(rntuple_view_get(r, 0, buf, 8) == RNTUPLE_ERR_WRONG_HANDLE);
  }
  printf("fields %zu of %zu viewed, %" PRIu64 " entries\n", used, nf, n);
  for (size_t k = 0; k < used; k++) CHECK(rntuple_view_free(fields[k].view));
  CHECK(rntuple_entry_load_free(loader));
  CHECK(rntuple_reader_free(r));
  free(fields);
  return bad;
}
