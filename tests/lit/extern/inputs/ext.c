/* Extern kernels for tests/lit/extern: C functions with texc's kernel ABI,
 * int NAME(const T *inputs..., T *outputs..., int64_t sizes...), 0 on success. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

int sort(const float *X, float *Y, int64_t n) {
  memcpy(Y, X, (size_t)n * sizeof *X);
  qsort(Y, (size_t)n, sizeof *Y, cmp);
  return 0;
}

int minmax(const float *X, float *Lo, float *Hi, int64_t n) {
  *Lo = *Hi = X[0];
  for (int64_t i = 1; i < n; i++) {
    if (X[i] < *Lo) *Lo = X[i];
    if (X[i] > *Hi) *Hi = X[i];
  }
  return 0;
}

int rowsum(const int32_t *A, int64_t *S, int64_t r, int64_t c) {
  for (int64_t i = 0; i < r; i++) {
    S[i] = 0;
    for (int64_t j = 0; j < c; j++) S[i] += A[i * c + j];
  }
  return 0;
}

int fails(const float *X, float *Y, int64_t n) {
  (void)X, (void)Y, (void)n;
  return 7;
}
