/* names-link.tex: a program that calls malloc and free and the kernels of two texc
 * libraries: scale as written, and tx_malloc / tx_scale (--prefix tx_). */
#include <stdio.h>
#include <stdlib.h>

#include "scale.h"
#include "tx.h"

int main(void) {
  enum { N = 100000 };
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
  if (!a || !b || !c) return 2;
  for (int i = 0; i < N; i++) a[i] = (float)i;
  int rc = scale(a, b, N);
  printf("scale: %d %g %g\n", rc, b[1], b[N - 1]);
  rc = tx_malloc(a, c, N);
  printf("tx_malloc: %d %g %g\n", rc, c[1], c[N - 1]);
  rc = tx_scale(c, b, N);
  printf("tx_scale: %d %g\n", rc, b[3]);
  free(a);
  free(b);
  free(c);
  char *p = malloc(64); /* still libc's */
  printf("malloc: %s\n", p ? "ok" : "null");
  free(p);
  return 0;
}
