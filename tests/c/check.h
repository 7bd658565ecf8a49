/* Small helpers of the C tests: CHECK aborts the test with the failing call, its status and the
 * library's message. */
#ifndef RNTUPLE_TEST_CHECK_H
#define RNTUPLE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "rntuple.h"

#define CHECK(call)                                                                              \
  do {                                                                                           \
    int32_t st_ = (call);                                                                        \
    if (st_ != RNTUPLE_OK) {                                                                     \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, rntuple_status_name(st_), \
              rntuple_last_error());                                                             \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

#define EXPECT(cond)                                                        \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);   \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

#endif
