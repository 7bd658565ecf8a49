/* Reads an RNTuple column by column through the C ABI: each top-level field on its own, as an
 * Arrow stream of that field alone, one batch per cluster; prints per field its ROOT type, its
 * number of values and, for numbers and collections of numbers, their sum.
 *
 *   cc read_columns.c $(pkg-config --cflags --libs rntuple) -o read_columns
 *   ./read_columns events.root [NTUPLE]
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rntuple.h"

/* The sum of elements [start, start + n) of a primitive Arrow array; 0 when it is not one. */
static int sum_primitive(const struct ArrowSchema* s, const struct ArrowArray* a, int64_t start, int64_t n, double* sum) {
  const char* f = s->format;
  const void* v = a->buffers[1];
  for (int64_t i = a->offset + start; i < a->offset + start + n; i++) {
    switch (f[0]) {
      case 'c': *sum += ((const int8_t*)v)[i]; break;
      case 'C': *sum += ((const uint8_t*)v)[i]; break;
      case 's': *sum += ((const int16_t*)v)[i]; break;
      case 'S': *sum += ((const uint16_t*)v)[i]; break;
      case 'i': *sum += ((const int32_t*)v)[i]; break;
      case 'I': *sum += ((const uint32_t*)v)[i]; break;
      case 'l': *sum += (double)((const int64_t*)v)[i]; break;
      case 'L': *sum += (double)((const uint64_t*)v)[i]; break;
      case 'f': *sum += ((const float*)v)[i]; break;
      case 'g': *sum += ((const double*)v)[i]; break;
      case 'b': *sum += (((const uint8_t*)v)[i >> 3] >> (i & 7)) & 1; break;
      default: return 0;
    }
  }
  return f[1] == '\0';
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.root [NTUPLE]\n", argv[0]);
    return 2;
  }
  uint64_t reader = 0, entries = 0;
  size_t n_fields = 0;
  if (rntuple_open(argv[1], argc > 2 ? argv[2] : NULL, &reader) != RNTUPLE_OK || rntuple_reader_entries(reader, &entries) != RNTUPLE_OK ||
      rntuple_reader_field_count(reader, &n_fields) != RNTUPLE_OK) {
    fprintf(stderr, "%s\n", rntuple_last_error());
    return 1;
  }
  printf("%" PRIu64 " entries, %zu fields\n", entries, n_fields);
  for (size_t k = 0; k < n_fields; k++) {
    char name[1024], type[1024];
    size_t len = 0;
    rntuple_reader_field_name(reader, k, name, sizeof name, &len);
    rntuple_reader_field_type(reader, k, type, sizeof type, &len);
    const char* fields[1] = {name};
    struct ArrowArrayStream stream;
    if (rntuple_reader_stream(reader, fields, 1, 0, UINT64_MAX, 0, &stream) != RNTUPLE_OK) {
      fprintf(stderr, "%s\n", rntuple_last_error());
      return 1;
    }
    struct ArrowSchema schema;
    stream.get_schema(&stream, &schema);
    const struct ArrowSchema* col = schema.children[0];
    int is_list = strcmp(col->format, "+L") == 0 || strcmp(col->format, "+l") == 0;
    double sum = 0;
    int64_t values = 0, summed = 1;
    struct ArrowArray batch;
    while (stream.get_next(&stream, &batch) == 0 && batch.release != NULL) {
      const struct ArrowArray* a = batch.children[0];
      if (is_list) { /* the items of the batch's lists, from the first list's start to the last one's end */
        int64_t first, last;
        if (col->format[1] == 'L') {
          first = ((const int64_t*)a->buffers[1])[a->offset];
          last = ((const int64_t*)a->buffers[1])[a->offset + a->length];
        } else {
          first = ((const int32_t*)a->buffers[1])[a->offset];
          last = ((const int32_t*)a->buffers[1])[a->offset + a->length];
        }
        values += last - first;
        summed &= sum_primitive(col->children[0], a->children[0], first, last - first, &sum);
      } else {
        values += a->length;
        summed &= sum_primitive(col, a, 0, a->length, &sum);
      }
      batch.release(&batch);
    }
    const char* err = stream.get_last_error(&stream);
    if (err != NULL && err[0] != '\0') {
      fprintf(stderr, "%s: %s\n", name, err);
      return 1;
    }
    schema.release(&schema);
    stream.release(&stream);
    if (summed)
      printf("%-28s %-28s %10" PRId64 " values, sum %.6g\n", name, type, values, sum);
    else
      printf("%-28s %-28s %10" PRId64 " values\n", name, type, values);
  }
  rntuple_reader_free(reader);
  return 0;
}
