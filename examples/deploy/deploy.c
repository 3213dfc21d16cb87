/* deploy.c — a program that uses texc-built kernels as a library, the way a user would:
 * include the header from `texc --emit header`, link the .so from `texc --emit so`, call.
 * Checks a few results against naive loops; exits non-zero on a mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

enum { M = 256, N = 192, K = 128 };

static float rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int check_matmul(void) {
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), *c = malloc(sizeof(float) * M * N);
  unsigned s = 1;
  for (int i = 0; i < M * K; i++) a[i] = rnd(&s);
  for (int i = 0; i < K * N; i++) b[i] = rnd(&s);
  int bad = matmul(a, b, c);
  int probes[4][2] = {{0, 0}, {17, 101}, {M - 1, N - 1}, {128, 5}};
  for (int p = 0; p < 4 && !bad; p++) {
    int i = probes[p][0], j = probes[p][1];
    double ref = 0;
    for (int k = 0; k < K; k++) ref += (double)a[i * K + k] * b[k * N + j];
    if (fabs(c[i * N + j] - ref) > 1e-3 * (1 + fabs(ref))) {
      printf("matmul: C[%d,%d] = %g, want %g\n", i, j, c[i * N + j], ref);
      bad = 1;
    }
  }
  free(a), free(b), free(c);
  printf("%s - deploy matmul %dx%dx%d\n", bad ? "not ok" : "ok", M, N, K);
  return bad;
}

/* A symbolic size: the same kernel on two lengths (one not a multiple of the vector width). */
static int check_saxpy(int64_t n) {
  float *x = malloc(sizeof(float) * (size_t)(n + 1)), *y = malloc(sizeof(float) * (size_t)(n + 1));
  float *z = malloc(sizeof(float) * (size_t)(n + 1));
  unsigned s = 7;
  for (int64_t i = 0; i < n; i++) x[i] = rnd(&s), y[i] = rnd(&s);
  z[n] = 12345.0f; /* must stay untouched */
  int bad = saxpy(x, y, z, n);
  for (int64_t i = 0; i < n && !bad; i++) bad = z[i] != 2.0f * x[i] + y[i];
  bad |= z[n] != 12345.0f;
  bad |= saxpy(x, y, z, -1) == 0; /* a negative size is refused */
  bad |= saxpy(x, y, z, 0) == 0;  /* so are 0 and sizes above 2^40, which the bounds proofs exclude */
  bad |= saxpy(x, y, z, ((int64_t)1 << 40) + 1) == 0;
  free(x), free(y), free(z);
  printf("%s - deploy saxpy n=%lld\n", bad ? "not ok" : "ok", (long long)n);
  return bad;
}

int main(void) {
  int bad = check_matmul();
  bad |= check_saxpy(1000);
  bad |= check_saxpy(37);
  return bad;
}
