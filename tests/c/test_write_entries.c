/* Writes through the C ABI with the typed setters: every fundamental type, vectors of each and
 * strings, with options (small clusters, a truncated float), into `argv[1]` (RNTuple "Events",
 * 5000 entries: entry i holds the values of the formulas below; tests/c/test_c_abi.py reads them
 * back with ROOT and uproot); then a file of two RNTuples (`argv[2]`): "A" from a sequential
 * writer, "B" from a parallel writer with two fill contexts. Reads the first file back through the
 * ABI and checks the entry count and clusters. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define N 5000

static const char* SCHEMA =
    "{\"b\": \"bool\", \"i8\": \"std::int8_t\", \"u8\": \"std::uint8_t\", \"i16\": \"std::int16_t\", "
    "\"u16\": \"std::uint16_t\", \"i32\": \"std::int32_t\", \"u32\": \"std::uint32_t\", \"i64\": \"std::int64_t\", "
    "\"u64\": \"std::uint64_t\", \"f32\": \"float\", \"f64\": \"double\", \"ft\": \"float\", \"s\": \"std::string\", "
    "\"vb\": \"std::vector<bool>\", \"vi8\": \"std::vector<std::int8_t>\", \"vu16\": \"std::vector<std::uint16_t>\", "
    "\"vi32\": \"ROOT::RVec<std::int32_t>\", \"vu64\": \"std::vector<std::uint64_t>\", \"vf32\": \"std::vector<float>\", "
    "\"vf64\": \"std::vector<double>\"}";

static void fill_one(uint64_t t, const uint32_t* s, int64_t i) {
  char text[32];
  int n = snprintf(text, sizeof text, "entry %" PRId64, i);
  CHECK(rntuple_entry_set_bool(t, s[0], i % 3 == 0));
  CHECK(rntuple_entry_set_i8(t, s[1], (int8_t)(i % 100 - 50)));
  CHECK(rntuple_entry_set_u8(t, s[2], (uint8_t)(i % 200)));
  CHECK(rntuple_entry_set_i16(t, s[3], (int16_t)(i * 3 - 1000)));
  CHECK(rntuple_entry_set_u16(t, s[4], (uint16_t)(i * 3)));
  CHECK(rntuple_entry_set_i32(t, s[5], (int32_t)(i * 1000 - 7)));
  CHECK(rntuple_entry_set_u32(t, s[6], (uint32_t)(i * 1000)));
  CHECK(rntuple_entry_set_i64(t, s[7], i * 100000000000LL - 5));
  CHECK(rntuple_entry_set_u64(t, s[8], (uint64_t)i * 100000000000ULL));
  CHECK(rntuple_entry_set_f32(t, s[9], (float)i * 0.5f));
  CHECK(rntuple_entry_set_f64(t, s[10], (double)i * 0.25));
  CHECK(rntuple_entry_set_f32(t, s[11], (float)i / 3.0f));
  CHECK(rntuple_entry_set_string(t, s[12], text, (size_t)n));
  size_t k = (size_t)(i % 4);
  bool vb[3];
  int8_t vi8[3];
  uint16_t vu16[3];
  int32_t vi32[3];
  uint64_t vu64[3];
  float vf32[3];
  double vf64[3];
  for (size_t j = 0; j < k; j++) {
    vb[j] = (i + (int64_t)j) % 2 == 0;
    vi8[j] = (int8_t)(i % 50 + (int64_t)j);
    vu16[j] = (uint16_t)(i + (int64_t)j);
    vi32[j] = (int32_t)(i - (int64_t)j);
    vu64[j] = (uint64_t)i * 7 + j;
    vf32[j] = (float)i + (float)j * 0.5f;
    vf64[j] = (double)i - (double)j * 0.125;
  }
  CHECK(rntuple_entry_set_vec_bool(t, s[13], vb, k));
  CHECK(rntuple_entry_set_vec_i8(t, s[14], vi8, k));
  CHECK(rntuple_entry_set_vec_u16(t, s[15], vu16, k));
  CHECK(rntuple_entry_set_vec_i32(t, s[16], vi32, k));
  CHECK(rntuple_entry_set_vec_u64(t, s[17], vu64, k));
  CHECK(rntuple_entry_set_vec_f32(t, s[18], vf32, k));
  CHECK(rntuple_entry_set_vec_f64(t, s[19], vf64, k));
  CHECK(rntuple_entry_fill(t));
}

static const char* NAMES[20] = {"b", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f32",
                                "f64", "ft", "s", "vb", "vi8", "vu16", "vi32", "vu64", "vf32", "vf64"};

static void slots(uint64_t t, uint32_t* s) {
  for (int k = 0; k < 20; k++) CHECK(rntuple_entry_field(t, NAMES[k], &s[k]));
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OUT.root OUT2.root\n", argv[0]);
    return 2;
  }
  uint64_t o = 0, w = 0, size = 0;
  uint32_t s[20];
  CHECK(rntuple_write_options_new(&o));
  CHECK(rntuple_write_options_set(o, "approx_zipped_cluster_size", "20000"));
  CHECK(rntuple_write_options_set(o, "compression", "404"));
  CHECK(rntuple_write_options_truncate(o, "ft", 16));
  char got[32];
  size_t len = 0;
  CHECK(rntuple_write_options_get(o, "compression", got, sizeof got, &len));
  EXPECT(strcmp(got, "404") == 0);
  CHECK(rntuple_writer_create(argv[1], "Events", SCHEMA, o, &w));
  slots(w, s);
  for (int64_t i = 0; i < N; i++) fill_one(w, s, i);
  uint64_t n = 0;
  CHECK(rntuple_writer_entries(w, &n));
  EXPECT(n == N);
  CHECK(rntuple_writer_commit(w, &size));
  EXPECT(size > 0);
  CHECK(rntuple_writer_free(w));

  /* Read back through the ABI: entries and several clusters. */
  uint64_t r = 0;
  size_t clusters = 0;
  CHECK(rntuple_open(argv[1], NULL, &r));
  CHECK(rntuple_reader_entries(r, &n));
  CHECK(rntuple_reader_cluster_count(r, &clusters));
  EXPECT(n == N && clusters > 1);
  CHECK(rntuple_reader_free(r));

  /* Two RNTuples in one file. */
  uint64_t fw = 0, a = 0, b = 0, c1 = 0, c2 = 0;
  CHECK(rntuple_file_writer_create(argv[2], o, &fw));
  CHECK(rntuple_file_writer_writer(fw, "A", SCHEMA, 0, &a));
  slots(a, s);
  for (int64_t i = 0; i < 100; i++) fill_one(a, s, i);
  CHECK(rntuple_writer_commit(a, NULL));
  CHECK(rntuple_file_writer_parallel_writer(fw, "B", SCHEMA, 0, &b));
  CHECK(rntuple_parallel_writer_fill_context(b, &c1));
  CHECK(rntuple_parallel_writer_fill_context(b, &c2));
  slots(c1, s);
  for (int64_t i = 0; i < 300; i++) fill_one(c1, s, i);
  slots(c2, s);
  for (int64_t i = 300; i < 500; i++) fill_one(c2, s, i);
  CHECK(rntuple_fill_context_finish(c1));
  CHECK(rntuple_fill_context_finish(c2));
  CHECK(rntuple_parallel_writer_commit(b, NULL));
  CHECK(rntuple_file_writer_commit(fw, NULL));
  CHECK(rntuple_fill_context_free(c1));
  CHECK(rntuple_fill_context_free(c2));
  CHECK(rntuple_parallel_writer_free(b));
  CHECK(rntuple_writer_free(a));
  CHECK(rntuple_file_writer_free(fw));
  CHECK(rntuple_write_options_free(o));
  EXPECT(rntuple_live_handles() == 0);
  printf("wrote %d entries (%" PRIu64 " bytes) and a file of two RNTuples\n", N, size);
  return 0;
}
