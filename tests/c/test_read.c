/* Reads every RNTuple of the files given through the C ABI and prints, per RNTuple, one JSON line:
 * file, ntuple, entries, clusters, fields (name and ROOT type) and the digest of all values read
 * as an Arrow stream (tests/c/test_c_abi.py compares it with the Rust reader's output through the
 * Python package). RNTUPLE_BATCH sets the stream's batch size (0: one batch per cluster). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "digest.h"

static void read_one(const char* path, uint64_t file, const char* name, uint64_t batch) {
  uint64_t r = 0, entries = 0;
  size_t n_fields = 0, n_clusters = 0;
  CHECK(rntuple_reader_open(file, name, &r));
  CHECK(rntuple_reader_entries(r, &entries));
  CHECK(rntuple_reader_field_count(r, &n_fields));
  CHECK(rntuple_reader_cluster_count(r, &n_clusters));
  uint64_t covered = 0;
  for (size_t c = 0; c < n_clusters; c++) {
    uint64_t first = 0, n = 0;
    CHECK(rntuple_reader_cluster(r, c, &first, &n));
    EXPECT(first == covered); /* clusters tile the entries */
    covered += n;
  }
  EXPECT(covered == entries);
  printf("{\"file\": \"%s\", \"ntuple\": \"%s\", \"entries\": %" PRIu64 ", \"clusters\": %zu, \"fields\": [", path, name, entries, n_clusters);
  for (size_t i = 0; i < n_fields; i++) {
    char fname[4096], ftype[4096];
    size_t len = 0;
    CHECK(rntuple_reader_field_name(r, i, fname, sizeof fname, &len));
    CHECK(rntuple_reader_field_type(r, i, ftype, sizeof ftype, &len));
    printf("%s[\"%s\", \"%s\"]", i ? ", " : "", fname, ftype);
  }
  struct ArrowArrayStream s;
  CHECK(rntuple_reader_stream(r, NULL, 0, 0, UINT64_MAX, batch, &s));
  CHECK(rntuple_reader_free(r)); /* the stream keeps what it reads from */
  struct ArrowSchema schema;
  EXPECT(s.get_schema(&s, &schema) == 0);
  EXPECT(schema.n_children == (int64_t)n_fields);
  uint64_t h = DIGEST_INIT, rows = 0, batches = 0;
  for (;;) {
    struct ArrowArray a;
    int rc = s.get_next(&s, &a);
    if (rc != 0) {
      fprintf(stderr, "%s/%s: get_next: %s\n", path, name, s.get_last_error(&s));
      exit(1);
    }
    if (a.release == NULL) break; /* end of stream */
    if (digest_batch(&h, &schema, &a) != 0) {
      fprintf(stderr, "%s/%s: %s\n", path, name, digest_error());
      exit(1);
    }
    rows += (uint64_t)a.length;
    batches++;
    a.release(&a);
  }
  schema.release(&schema);
  s.release(&s);
  EXPECT(rows == entries);
  printf("], \"batches\": %" PRIu64 ", \"digest\": \"%016" PRIx64 "\"}\n", batches, h);
}

int main(int argc, char** argv) {
  const char* b = getenv("RNTUPLE_BATCH");
  uint64_t batch = b ? strtoull(b, NULL, 10) : 0;
  for (int i = 1; i < argc; i++) {
    uint64_t f = 0;
    size_t n = 0;
    CHECK(rntuple_file_open(argv[i], &f));
    CHECK(rntuple_file_ntuple_count(f, &n));
    for (size_t k = 0; k < n; k++) {
      char name[1024];
      size_t len = 0;
      CHECK(rntuple_file_ntuple_name(f, k, name, sizeof name, &len));
      read_one(argv[i], f, name, batch);
    }
    CHECK(rntuple_file_free(f));
  }
  EXPECT(rntuple_live_handles() == 0);
  return 0;
}
