/* The misuse table: every way of calling the C ABI wrongly that a program can do without
 * undefined behaviour on its own side returns its error code and a message naming what is wrong,
 * with no crash and no leak (the test runs under AddressSanitizer and LeakSanitizer). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int failures = 0, cases = 0;

static void expect(const char* what, int32_t got, int32_t want, const char* needle) {
  cases++;
  const char* msg = rntuple_last_error();
  if (got != want || (needle && !strstr(msg, needle))) {
    fprintf(stderr, "FAIL %s: got %s (%s), want %s with '%s'\n", what, rntuple_status_name(got), msg, rntuple_status_name(want),
            needle ? needle : "");
    failures++;
  } else {
    printf("ok   %-58s %-30s %s\n", what, rntuple_status_name(got), msg);
  }
}

/* A hand-made record batch {y: int32} of two rows, counting its releases. */
static int releases = 0;
static int32_t y_values[2] = {1, 2};
static const void* y_buffers[2] = {NULL, y_values};
static const void* top_buffers[1] = {NULL};
static void release_child(struct ArrowArray* a) { a->release = NULL; }
static void release_array(struct ArrowArray* a) {
  releases++;
  struct ArrowArray* c = a->children[0];
  if (c->release) c->release(c);
  a->release = NULL;
}
static struct ArrowArray y_child;
static struct ArrowArray* y_children[1];
static void make_batch(struct ArrowArray* a) {
  y_child = (struct ArrowArray){2, 0, 0, 2, 0, y_buffers, NULL, NULL, release_child, NULL};
  y_children[0] = &y_child;
  *a = (struct ArrowArray){2, 0, 0, 1, 1, top_buffers, y_children, NULL, release_array, NULL};
}
static struct ArrowSchema y_schema = {"i", "y", NULL, 0, 0, NULL, NULL, NULL, NULL};
static struct ArrowSchema* y_schemas[1] = {&y_schema};
static struct ArrowSchema batch_schema = {"+s", "", NULL, 0, 1, y_schemas, NULL, NULL, NULL};

static void* other_thread(void* arg) {
  uint64_t f;
  *(int32_t*)arg = rntuple_file_open(NULL, &f); /* an error on this thread only */
  return NULL;
}

int main(void) {
  char path[256], junk[256];
  snprintf(path, sizeof path, "/tmp/rntuple-c-misuse-%d.root", (int)getpid());
  snprintf(junk, sizeof junk, "/tmp/rntuple-c-misuse-%d.junk", (int)getpid());
  FILE* j = fopen(junk, "wb");
  fputs("this is not a ROOT file, not at all; it is long enough to be read", j);
  fclose(j);

  /* A file to misuse: {x: float, v: std::vector<std::int32_t>}, three entries. */
  uint64_t w = 0, f = 0, r = 0, o = 0;
  uint32_t sx = 0, sv = 0;
  CHECK(rntuple_writer_create(path, "T", "{\"x\": \"float\", \"v\": \"std::vector<std::int32_t>\"}", 0, &w));
  CHECK(rntuple_entry_field(w, "x", &sx));
  CHECK(rntuple_entry_field(w, "v", &sv));
  for (int i = 0; i < 3; i++) {
    int32_t items[3] = {i, i, i};
    CHECK(rntuple_entry_set_f32(w, sx, (float)i));
    CHECK(rntuple_entry_set_vec_i32(w, sv, items, (size_t)i));
    CHECK(rntuple_entry_fill(w));
  }
  uint64_t n = 0;
  char buf[64];
  size_t len = 0;

  expect("entry setter of the wrong C type", rntuple_entry_set_i32(w, sx, 1), RNTUPLE_ERR_SCHEMA_MISMATCH, "field 'x'");
  expect("vector setter on a scalar field", rntuple_entry_set_vec_f32(w, sx, NULL, 0), RNTUPLE_ERR_SCHEMA_MISMATCH, "field 'x'");
  expect("entry field that does not exist", rntuple_entry_field(w, "nope", &sx), RNTUPLE_ERR_NOT_FOUND, "no top-level field 'nope'");
  expect("setter slot past the fields", rntuple_entry_set_f32(w, 7, 1.0f), RNTUPLE_ERR_INVALID_ARGUMENT, "slot 7");
  expect("vector setter with null data", rntuple_entry_set_vec_i32(w, sv, NULL, 2), RNTUPLE_ERR_NULL_POINTER, "'data'");
  CHECK(rntuple_entry_set_f32(w, sx, 9.0f));
  expect("fill with a field not set", rntuple_entry_fill(w), RNTUPLE_ERR_INVALID_ARGUMENT, "fields not set: v");
  struct ArrowArray batch;
  make_batch(&batch);
  expect("append of a batch of another schema", rntuple_writer_append(w, &batch, &batch_schema), RNTUPLE_ERR_SCHEMA_MISMATCH, "(y) are not the writer's (x, v)");
  EXPECT(batch.release == NULL && releases == 1); /* moved in and released by the library, once */
  expect("append of a released array", rntuple_writer_append(w, &batch, &batch_schema), RNTUPLE_ERR_INVALID_ARGUMENT, "released");
  expect("append with a null schema", rntuple_writer_append(w, &batch, NULL), RNTUPLE_ERR_NULL_POINTER, "'schema'");
  CHECK(rntuple_writer_entries(w, &n));
  EXPECT(n == 3); /* the half-set entry is not one */
  CHECK(rntuple_writer_commit(w, NULL));
  expect("commit after commit", rntuple_writer_commit(w, NULL), RNTUPLE_ERR_STATE, "committed or aborted already");
  expect("setter after commit", rntuple_entry_set_f32(w, sx, 1.0f), RNTUPLE_ERR_STATE, "committed");
  make_batch(&batch);
  expect("append after commit", rntuple_writer_append(w, &batch, &batch_schema), RNTUPLE_ERR_STATE, "committed");
  EXPECT(batch.release == NULL && releases == 2);
  CHECK(rntuple_writer_free(w));
  /* Entries handed over column by column (a writer of the same schema): two good ones, then every kind of bad
   * column (none appends anything). */
  char path2[300];
  snprintf(path2, sizeof path2, "%s.columns.root", path);
  uint64_t w2 = 0;
  CHECK(rntuple_writer_create(path2, "T", "{\"x\": \"float\", \"v\": \"std::vector<std::int32_t>\"}", 0, &w2));
  float xs[2] = {10.0f, 11.0f};
  int32_t vs[3] = {7, 8, 9};
  int64_t voff[3] = {0, 1, 3}, vdown[3] = {0, 2, 1};
  struct rntuple_column cols[2] = {{sx, RNTUPLE_TYPE_F32, xs, 2, NULL}, {sv, RNTUPLE_TYPE_I32, vs, 3, voff}};
  CHECK(rntuple_entry_fill_columns(w2, 2, cols, 2));
  expect("columns: a null column array", rntuple_entry_fill_columns(w2, 2, NULL, 2), RNTUPLE_ERR_NULL_POINTER, "'columns'");
  cols[0].ctype = RNTUPLE_TYPE_I32;
  expect("columns: a column of the wrong C type", rntuple_entry_fill_columns(w2, 2, cols, 2), RNTUPLE_ERR_SCHEMA_MISMATCH, "field 'x'");
  cols[0].ctype = 99;
  expect("columns: an unknown C type code", rntuple_entry_fill_columns(w2, 2, cols, 2), RNTUPLE_ERR_INVALID_ARGUMENT, "unknown C type code 99");
  cols[0].ctype = RNTUPLE_TYPE_F32;
  expect("columns: a field not given", rntuple_entry_fill_columns(w2, 2, cols, 1), RNTUPLE_ERR_INVALID_ARGUMENT, "fields not given: v");
  cols[1].offsets = vdown;
  expect("columns: offsets that decrease", rntuple_entry_fill_columns(w2, 2, cols, 2), RNTUPLE_ERR_INVALID_ARGUMENT, "offsets decrease");
  cols[1].offsets = NULL;
  expect("columns: a collection without offsets", rntuple_entry_fill_columns(w2, 2, cols, 2), RNTUPLE_ERR_NULL_POINTER, "offsets of the collection field 'v'");
  cols[1].offsets = voff;
  cols[1].len = 2;
  expect("columns: offsets past the items", rntuple_entry_fill_columns(w2, 2, cols, 2), RNTUPLE_ERR_INVALID_ARGUMENT, "past the 2 items");
  cols[1].len = 3;
  CHECK(rntuple_entry_set_f32(w2, sx, 9.0f));
  expect("columns while an entry is being set", rntuple_entry_fill_columns(w2, 2, cols, 2), RNTUPLE_ERR_STATE, "being filled with setters");
  CHECK(rntuple_writer_entries(w2, &n));
  EXPECT(n == 2);
  CHECK(rntuple_writer_commit(w2, NULL));
  CHECK(rntuple_writer_free(w2));
  unlink(path2);
  expect("writer used after free", rntuple_writer_checkpoint(w), RNTUPLE_ERR_BAD_HANDLE, "freed or never issued");

  expect("open a null path", rntuple_file_open(NULL, &f), RNTUPLE_ERR_NULL_POINTER, "'path'");
  expect("open with a null out-pointer", rntuple_file_open(path, NULL), RNTUPLE_ERR_NULL_POINTER, "'out'");
  expect("open a missing file", rntuple_file_open("/nonexistent/x.root", &f), RNTUPLE_ERR_NOT_FOUND, "/nonexistent/x.root");
  expect("open a file that is not ROOT's", rntuple_file_open(junk, &f), RNTUPLE_ERR_CORRUPT, "");
  expect("mapped open of a directory", rntuple_file_open_mapped("/tmp", &f), RNTUPLE_ERR_INVALID_ARGUMENT, "/tmp: not a regular file");
  expect("mapped open of a missing file", rntuple_file_open_mapped("/nonexistent/x.root", &f), RNTUPLE_ERR_NOT_FOUND, "/nonexistent/x.root");
  expect("mapped open of a file that is not ROOT's", rntuple_file_open_mapped(junk, &f), RNTUPLE_ERR_CORRUPT, "mapped file /tmp/rntuple-c-misuse-");
  expect("mapped open of a null path", rntuple_file_open_mapped(NULL, &f), RNTUPLE_ERR_NULL_POINTER, "'path'");
  expect("mapped open with a null out-pointer", rntuple_file_open_mapped(path, NULL), RNTUPLE_ERR_NULL_POINTER, "'out'");
  CHECK(rntuple_file_open(path, &f));
  expect("reader of a missing RNTuple", rntuple_reader_open(f, "Nope", &r), RNTUPLE_ERR_NOT_FOUND, "Nope");
  expect("file handle where a reader goes", rntuple_reader_entries(f, &n), RNTUPLE_ERR_WRONG_HANDLE, "is a file, not a reader");
  expect("handle 0", rntuple_reader_entries(0, &n), RNTUPLE_ERR_BAD_HANDLE, "handle 0");
  expect("forged handle", rntuple_reader_entries(0x02000000deadbeefULL, &n), RNTUPLE_ERR_BAD_HANDLE, "never issued");
  CHECK(rntuple_reader_open(f, NULL, &r)); /* the only RNTuple */
  expect("reader handle where a writer goes", rntuple_entry_set_f32(r, 0, 1.0f), RNTUPLE_ERR_WRONG_HANDLE, "not a writer or a fill context");
  expect("field index past the fields", rntuple_reader_field_name(r, 2, buf, sizeof buf, &len), RNTUPLE_ERR_INVALID_ARGUMENT, "past the 2");
  expect("name into a small buffer", rntuple_reader_field_type(r, 1, buf, 4, &len), RNTUPLE_ERR_BUFFER, "too small");
  EXPECT(len == strlen("std::vector<std::int32_t>") && strcmp(buf, "std") == 0);
  expect("cluster index past the clusters", rntuple_reader_cluster(r, 5, &n, &n), RNTUPLE_ERR_INVALID_ARGUMENT, "past the 1 clusters");
  const char* nope[1] = {"nope"};
  struct ArrowArrayStream s;
  expect("stream of a missing field", rntuple_reader_stream(r, nope, 1, 0, UINT64_MAX, 0, &s), RNTUPLE_ERR_NOT_FOUND, "no top-level field 'nope'");
  expect("stream of a reversed range", rntuple_reader_stream(r, NULL, 0, 3, 1, 0, &s), RNTUPLE_ERR_INVALID_ARGUMENT, "entry range 3:1 is reversed");
  expect("stream starting past the end", rntuple_reader_stream(r, NULL, 0, 10, UINT64_MAX, 0, &s), RNTUPLE_ERR_INVALID_ARGUMENT,
         "starts past the RNTuple's 3 entries");
  expect("fields null with a count", rntuple_reader_stream(r, NULL, 2, 0, 1, 0, &s), RNTUPLE_ERR_NULL_POINTER, "'fields'");
  /* Bulk column reads (the file's one cluster holds 0 + 1 + 2 items of v). */
  int32_t bulk[4];
  uint64_t got = 0;
  expect("bulk read into a small buffer", rntuple_reader_read_column(r, "v._0", 0, 0, 1, bulk, 8, &got), RNTUPLE_ERR_BUFFER,
         "field 'v._0' column 0: clusters 0..1 hold 3 elements of 4 bytes (12 bytes), the buffer has 8 bytes");
  EXPECT(got == 3); /* the elements needed */
  expect("bulk read of a missing field", rntuple_reader_column_elements(r, "nope", 0, 0, 1, &n, NULL, NULL), RNTUPLE_ERR_NOT_FOUND,
         "no field 'nope'");
  expect("bulk read of a column the field lacks", rntuple_reader_column_elements(r, "v", 1, 0, 1, &n, NULL, NULL), RNTUPLE_ERR_NOT_FOUND,
         "field 'v' has 1 column(s), no column 1; its subfields: 'v._0'");
  expect("bulk read past the clusters", rntuple_reader_read_column(r, "x", 0, 0, 2, bulk, sizeof bulk, &got), RNTUPLE_ERR_INVALID_ARGUMENT,
         "field 'x' column 0: cluster range 0..2 outside the RNTuple's 1 clusters");
  expect("bulk read of a reversed cluster range", rntuple_reader_column_elements(r, "x", 0, 1, 0, &n, NULL, NULL), RNTUPLE_ERR_INVALID_ARGUMENT,
         "cluster range 1..0 is reversed");
  expect("bulk read into an unaligned buffer", rntuple_reader_read_column(r, "x", 0, 0, 1, (char*)bulk + 1, 12, &got), RNTUPLE_ERR_INVALID_ARGUMENT,
         "not aligned to the 4-byte elements of field 'x'");
  expect("bulk read of a null field", rntuple_reader_read_column(r, NULL, 0, 0, 1, bulk, sizeof bulk, &got), RNTUPLE_ERR_NULL_POINTER, "'field'");
  /* Range reads within a cluster and page ends (its one cluster holds 3 elements of x). */
  expect("range read past the cluster", rntuple_reader_read_column_range(r, "x", 0, 0, 2, 2, bulk, sizeof bulk, &got), RNTUPLE_ERR_INVALID_ARGUMENT,
         "field 'x' column 0: elements 2..4 of cluster 0: the cluster holds 3");
  expect("range read reversed (count overflows)", rntuple_reader_read_column_range(r, "x", 0, 0, 2, UINT64_MAX, bulk, sizeof bulk, &got),
         RNTUPLE_ERR_INVALID_ARGUMENT, "elements 2 + 18446744073709551615 of cluster 0: the range's end overflows 64 bits");
  got = 0;
  expect("range read into a small buffer", rntuple_reader_read_column_range(r, "v._0", 0, 0, 0, 3, bulk, 8, &got), RNTUPLE_ERR_BUFFER,
         "field 'v._0' column 0: elements 0..3 of cluster 0 are 3 elements of 4 bytes (12 bytes), the buffer has 8 bytes");
  EXPECT(got == 3); /* the elements needed */
  expect("range read into an unaligned buffer", rntuple_reader_read_column_range(r, "x", 0, 0, 0, 1, (char*)bulk + 1, 12, &got),
         RNTUPLE_ERR_INVALID_ARGUMENT, "not aligned to the 4-byte elements of field 'x' column 0");
  expect("range read of a null field", rntuple_reader_read_column_range(r, NULL, 0, 0, 0, 1, bulk, sizeof bulk, &got), RNTUPLE_ERR_NULL_POINTER, "'field'");
  expect("range read of a cluster past the clusters", rntuple_reader_read_column_range(r, "x", 0, 1, 0, 1, bulk, sizeof bulk, &got),
         RNTUPLE_ERR_INVALID_ARGUMENT, "field 'x' column 0: cluster index 1 is past the RNTuple's 1 clusters");
  expect("range read of a missing field", rntuple_reader_read_column_range(r, "nope", 0, 0, 0, 1, bulk, sizeof bulk, &got), RNTUPLE_ERR_NOT_FOUND,
         "no field 'nope'");
  uint64_t ends[2] = {7, 7};
  size_t n_ends = 0;
  expect("page ends into no room", rntuple_reader_column_page_ends(r, "x", 0, 0, NULL, 0, &n_ends), RNTUPLE_ERR_BUFFER,
         "field 'x' column 0: cluster 0 has 1 page ends, the buffer has room for 0");
  EXPECT(n_ends == 1); /* the count needed */
  expect("page ends of a cluster past the clusters", rntuple_reader_column_page_ends(r, "x", 0, 3, ends, 2, &n_ends), RNTUPLE_ERR_INVALID_ARGUMENT,
         "field 'x' column 0: cluster index 3 is past the RNTuple's 1 clusters");
  expect("page ends into a null buffer with room", rntuple_reader_column_page_ends(r, "x", 0, 0, NULL, 2, &n_ends), RNTUPLE_ERR_NULL_POINTER, "'ends'");
  expect("page ends of a null field", rntuple_reader_column_page_ends(r, NULL, 0, 0, ends, 2, &n_ends), RNTUPLE_ERR_NULL_POINTER, "'field'");
  CHECK(rntuple_reader_column_page_ends(r, "x", 0, 0, ends, 2, &n_ends));
  EXPECT(n_ends == 1 && ends[0] == 3 && ends[1] == 7);
  CHECK(rntuple_reader_free(r));
  expect("reader freed twice", rntuple_reader_free(r), RNTUPLE_ERR_BAD_HANDLE, "freed");
  CHECK(rntuple_file_free(f));

  CHECK(rntuple_write_options_new(&o));
  expect("unknown write option", rntuple_write_options_set(o, "no_such_option", "1"), RNTUPLE_ERR_INVALID_ARGUMENT, "unknown write option 'no_such_option'");
  expect("option value not a number", rntuple_write_options_set(o, "compression", "abc"), RNTUPLE_ERR_INVALID_ARGUMENT, "non-negative integer");
  expect("switch value not a bool", rntuple_write_options_set(o, "enable_page_checksums", "maybe"), RNTUPLE_ERR_INVALID_ARGUMENT, "true or false");
  expect("quantization of 99 bits", rntuple_write_options_quantize(o, "x", 0.0, 1.0, 99), RNTUPLE_ERR_INVALID_ARGUMENT, "field 'x'");
  expect("schema that is not JSON", rntuple_writer_create(path, "T", "{x", o, &w), RNTUPLE_ERR_INVALID_ARGUMENT, "not JSON");
  expect("schema with an unknown type", rntuple_writer_create(path, "T", "{\"x\": \"NoSuchClass\"}", o, &w), RNTUPLE_ERR_INVALID_ARGUMENT, "field 'x'");
  expect("schema without fields", rntuple_writer_create(path, "T", "{}", o, &w), RNTUPLE_ERR_INVALID_ARGUMENT, "no field");
  expect("options handle where a writer goes", rntuple_writer_commit(o, NULL), RNTUPLE_ERR_WRONG_HANDLE, "is a write options, not a writer");
  CHECK(rntuple_write_options_free(o));
  expect("options used after free", rntuple_writer_create(path, "T", "{\"x\": \"float\"}", o, &w), RNTUPLE_ERR_BAD_HANDLE, "write options");

  uint64_t p = 0, c = 0;
  CHECK(rntuple_parallel_writer_create(path, "P", "{\"s\": \"std::string\"}", 0, &p));
  CHECK(rntuple_parallel_writer_fill_context(p, &c));
  uint32_t ss = 0;
  CHECK(rntuple_entry_field(c, "s", &ss));
  expect("string that is not UTF-8", rntuple_entry_set_string(c, ss, "\xff\xfe", 2), RNTUPLE_ERR_INVALID_ARGUMENT, "UTF-8");
  CHECK(rntuple_entry_set_string(c, ss, "muon", 4));
  CHECK(rntuple_entry_fill(c));
  CHECK(rntuple_fill_context_finish(c));
  expect("fill context finished twice", rntuple_fill_context_finish(c), RNTUPLE_ERR_STATE, "finished");
  expect("setter on a finished context", rntuple_entry_set_string(c, ss, "x", 1), RNTUPLE_ERR_STATE, "finished");
  CHECK(rntuple_fill_context_free(c));
  CHECK(rntuple_parallel_writer_commit(p, NULL));
  expect("fill context after commit", rntuple_parallel_writer_fill_context(p, &c), RNTUPLE_ERR_STATE, "committed");
  CHECK(rntuple_parallel_writer_free(p));

  /* Messages are per thread. */
  int32_t theirs = 0;
  int32_t ours = rntuple_reader_entries(0, &n);
  pthread_t t;
  pthread_create(&t, NULL, other_thread, &theirs);
  pthread_join(t, NULL);
  EXPECT(theirs == RNTUPLE_ERR_NULL_POINTER);
  expect("a message stays with its thread", ours, RNTUPLE_ERR_BAD_HANDLE, "rntuple_reader_entries: handle 0");
  EXPECT(strcmp(rntuple_status_name(99), "RNTUPLE_UNKNOWN_STATUS") == 0);

  EXPECT(rntuple_live_handles() == 0);
  remove(path);
  remove(junk);
  printf("%d misuse cases, %d failed\n", cases, failures);
  return failures == 0 ? 0 : 1;
}
