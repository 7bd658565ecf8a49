/* A digest of Arrow data by value: FNV-1a 64 over a canonical token stream (per element: null,
 * or its value; lists by their length and items; structs by members; unions by type id and
 * value), so that two readers' outputs digest alike exactly when their values are equal,
 * however they are laid out (offsets, slices, batch boundaries). Used by the C tests and, through
 * ctypes, on arrays that pyarrow exports (tests/c/test_c_abi.py). */
#ifndef RNTUPLE_TEST_DIGEST_H
#define RNTUPLE_TEST_DIGEST_H

#include <stdint.h>

#include "rntuple.h"

#define DIGEST_INIT 0xcbf29ce484222325ULL

/* Folds elements [start, start + len) of `array` (described by `schema`) into `*h`. Returns 0,
 * or -1 for a format it does not know (the format is then in digest_error()). */
int digest_array(uint64_t* h, const struct ArrowSchema* schema, const struct ArrowArray* array, int64_t start, int64_t len);

/* Folds every row of a record batch (a struct array) into `*h`, row by row (fields in order). */
int digest_batch(uint64_t* h, const struct ArrowSchema* schema, const struct ArrowArray* array);

const char* digest_error(void);

#endif
