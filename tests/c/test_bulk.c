/* Bulk column reads: writes a file of many small clusters (a number, a float, a vector and a
 * string per entry), then reads every column cluster by cluster into ONE buffer allocated once for
 * the largest cluster and reused, comparing every value with what was written; then the same columns of
 * the file opened through a memory map, in page-aligned chunks into one reused buffer
 * (rntuple_reader_read_column_range), against the whole-cluster reads; then the offsets of the whole
 * range at once (global end offsets). Runs under AddressSanitizer and LeakSanitizer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 40000

static uint32_t n_items(uint64_t i) { return (uint32_t)(i % 4); }
static uint32_t n_chars(uint64_t i) { return (uint32_t)(2 * (i % 3)); }

struct column {
  const char* field;
  uint32_t column;
  uint32_t size, type;
};

int main(int argc, char** argv) {
  char path[256];
  if (argc > 1) {
    snprintf(path, sizeof path, "%s", argv[1]);
  } else {
    snprintf(path, sizeof path, "/tmp/rntuple-c-bulk-%d.root", (int)getpid());
  }
  uint64_t o = 0, w = 0;
  uint32_t sid = 0, sx = 0, sv = 0, ss = 0;
  CHECK(rntuple_write_options_new(&o));
  CHECK(rntuple_write_options_set(o, "approx_zipped_cluster_size", "1500"));
  CHECK(rntuple_write_options_set(o, "max_unzipped_cluster_size", "16384"));
  CHECK(rntuple_write_options_set(o, "max_unzipped_page_size", "1024"));
  CHECK(rntuple_writer_create(path, "Events",
                              "{\"id\": \"std::uint64_t\", \"x\": \"float\", \"v\": \"std::vector<float>\", \"s\": \"std::string\"}", o, &w));
  CHECK(rntuple_write_options_free(o));
  CHECK(rntuple_entry_field(w, "id", &sid));
  CHECK(rntuple_entry_field(w, "x", &sx));
  CHECK(rntuple_entry_field(w, "v", &sv));
  CHECK(rntuple_entry_field(w, "s", &ss));
  for (uint64_t i = 0; i < N; i++) {
    float items[4];
    for (uint32_t k = 0; k < n_items(i); k++) items[k] = (float)(i + k) * 0.5f;
    CHECK(rntuple_entry_set_u64(w, sid, i * 3));
    CHECK(rntuple_entry_set_f32(w, sx, (float)i * 0.25f));
    CHECK(rntuple_entry_set_vec_f32(w, sv, items, n_items(i)));
    CHECK(rntuple_entry_set_string(w, ss, "ababab", n_chars(i)));
    CHECK(rntuple_entry_fill(w));
  }
  CHECK(rntuple_writer_commit(w, NULL));
  CHECK(rntuple_writer_free(w));

  uint64_t r = 0;
  size_t n_clusters = 0;
  CHECK(rntuple_open(path, "Events", &r));
  CHECK(rntuple_reader_cluster_count(r, &n_clusters));
  EXPECT(n_clusters > 3);

  struct column cols[] = {
      {"id", 0, 8, RNTUPLE_TYPE_U64}, {"x", 0, 4, RNTUPLE_TYPE_F32}, {"v", 0, 8, RNTUPLE_TYPE_U64},
      {"v._0", 0, 4, RNTUPLE_TYPE_F32}, {"s", 0, 8, RNTUPLE_TYPE_U64}, {"s", 1, 1, RNTUPLE_TYPE_I8},
  };
  const size_t n_cols = sizeof cols / sizeof cols[0];
  /* The largest cluster of any column sizes the one buffer. */
  size_t cap = 0;
  for (size_t c = 0; c < n_clusters; c++) {
    for (size_t j = 0; j < n_cols; j++) {
      uint64_t n = 0;
      uint32_t size = 0, type = 0;
      CHECK(rntuple_reader_column_elements(r, cols[j].field, cols[j].column, c, c + 1, &n, &size, &type));
      EXPECT(size == cols[j].size && type == cols[j].type);
      if (n * size > cap) cap = n * size;
    }
  }
  void* buf = malloc(cap);
  EXPECT(buf != NULL);

  uint64_t checked = 0;
  for (size_t c = 0; c < n_clusters; c++) {
    uint64_t first = 0, entries = 0;
    CHECK(rntuple_reader_cluster(r, c, &first, &entries));
    for (size_t j = 0; j < n_cols; j++) {
      uint64_t n = 0, got = 0;
      CHECK(rntuple_reader_column_elements(r, cols[j].field, cols[j].column, c, c + 1, &n, NULL, NULL));
      CHECK(rntuple_reader_read_column(r, cols[j].field, cols[j].column, c, c + 1, buf, cap, &got));
      EXPECT(got == n);
      /* What this cluster holds: entries, or their items (vector) or chars (string). */
      uint64_t items = 0, chars = 0;
      for (uint64_t i = first; i < first + entries; i++) {
        items += n_items(i);
        chars += n_chars(i);
      }
      if (j == 0 || j == 1 || j == 2 || j == 4) EXPECT(n == entries);
      if (j == 3) EXPECT(n == items);
      if (j == 5) EXPECT(n == chars);
      uint64_t at = 0, end = 0;
      for (uint64_t i = first; i < first + entries; i++) {
        uint64_t e = i - first;
        switch (j) {
          case 0: EXPECT(((uint64_t*)buf)[e] == i * 3); break;
          case 1: EXPECT(((float*)buf)[e] == (float)i * 0.25f); break;
          case 2: end += n_items(i); EXPECT(((uint64_t*)buf)[e] == end); break; /* cluster-local end offsets */
          case 3:
            for (uint32_t k = 0; k < n_items(i); k++) EXPECT(((float*)buf)[at++] == (float)(i + k) * 0.5f);
            break;
          case 4: end += n_chars(i); EXPECT(((uint64_t*)buf)[e] == end); break;
          case 5:
            for (uint32_t k = 0; k < n_chars(i); k++) EXPECT(((char*)buf)[at++] == "ababab"[k]);
            break;
        }
        checked++;
      }
    }
  }

  /* The same columns from the file opened through a memory map, cluster by cluster in chunks that end where
   * the column's pages end (each page decoded once), into ONE chunk buffer sized for the largest page and
   * reused for every chunk; each chunk equals its part of the whole-cluster read (offsets: cluster-local in
   * both). The page ends go into one array grown when a cluster has more. */
  uint64_t mf = 0, mr = 0;
  CHECK(rntuple_file_open_mapped(path, &mf));
  CHECK(rntuple_reader_open(mf, "Events", &mr));
  CHECK(rntuple_file_free(mf)); /* the reader keeps the mapping */
  size_t ends_cap = 0, n_ends = 0, chunk_cap = 0;
  uint64_t* ends = NULL;
  for (int pass = 0; pass < 2; pass++) { /* 0: size the chunk buffer; 1: read and compare */
    void* chunk = pass ? malloc(chunk_cap) : NULL;
    EXPECT(!pass || chunk != NULL);
    uint64_t chunks = 0;
    for (size_t c = 0; c < n_clusters; c++) {
      for (size_t j = 0; j < n_cols; j++) {
        int32_t st = rntuple_reader_column_page_ends(mr, cols[j].field, cols[j].column, c, ends, ends_cap, &n_ends);
        if (st == RNTUPLE_ERR_BUFFER) {
          EXPECT(n_ends > ends_cap);
          ends_cap = n_ends;
          ends = realloc(ends, ends_cap * sizeof *ends);
          EXPECT(ends != NULL);
          st = rntuple_reader_column_page_ends(mr, cols[j].field, cols[j].column, c, ends, ends_cap, &n_ends);
        }
        CHECK(st);
        uint64_t n = 0, got = 0, start = 0;
        CHECK(rntuple_reader_column_elements(mr, cols[j].field, cols[j].column, c, c + 1, &n, NULL, NULL));
        EXPECT(n_ends > 0 && ends[n_ends - 1] == n);
        if (pass == 0) {
          for (size_t e = 0; e < n_ends; e++) {
            EXPECT(ends[e] > start || (n == 0 && ends[e] == 0));
            if ((ends[e] - start) * cols[j].size > chunk_cap) chunk_cap = (ends[e] - start) * cols[j].size;
            start = ends[e];
          }
          continue;
        }
        CHECK(rntuple_reader_read_column(mr, cols[j].field, cols[j].column, c, c + 1, buf, cap, &got));
        EXPECT(got == n);
        for (size_t e = 0; e < n_ends; e++) {
          uint64_t count = ends[e] - start;
          CHECK(rntuple_reader_read_column_range(mr, cols[j].field, cols[j].column, c, start, count, chunk, chunk_cap, &got));
          EXPECT(got == count);
          EXPECT(memcmp(chunk, (char*)buf + start * cols[j].size, count * cols[j].size) == 0);
          start = ends[e];
          chunks++;
        }
      }
    }
    if (pass) {
      EXPECT(chunks > n_clusters * n_cols); /* pages smaller than clusters: several chunks per cluster */
      printf("bulk: %" PRIu64 " page-aligned chunks of a mapped file into one %zu-byte buffer\n", chunks, chunk_cap);
    }
    free(chunk);
  }
  free(ends);
  CHECK(rntuple_reader_free(mr));
  free(buf);

  /* The offsets of the whole range at once: global end offsets into the items of the range. */
  uint64_t n = 0, items = 0, got = 0;
  CHECK(rntuple_reader_column_elements(r, "v", 0, 0, n_clusters, &n, NULL, NULL));
  CHECK(rntuple_reader_column_elements(r, "v._0", 0, 0, n_clusters, &items, NULL, NULL));
  EXPECT(n == N);
  uint64_t* offs = malloc(n * sizeof *offs);
  CHECK(rntuple_reader_read_column(r, "v", 0, 0, n_clusters, offs, n * sizeof *offs, &got));
  EXPECT(got == N);
  uint64_t end = 0;
  for (uint64_t i = 0; i < N; i++) {
    end += n_items(i);
    EXPECT(offs[i] == end);
  }
  EXPECT(end == items);
  free(offs);
  CHECK(rntuple_reader_free(r));
  EXPECT(rntuple_live_handles() == 0);
  if (argc <= 1) remove(path);
  printf("bulk: %zu clusters, %" PRIu64 " entry-columns checked\n", n_clusters, checked);
  return 0;
}
