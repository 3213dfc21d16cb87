/* Calls texc's `median` (extern.tex, --emit so), which calls the user's `sort` (ext.c). */
#include <stdint.h>
#include <stdio.h>
int median(const float *X, float *M);
int range(const float *X, float *R);
int rows(const int32_t *A, int64_t *T);
int main(void) {
  float x[9] = {5, 3, 9, 1, 7, 2, 8, 6, 4}, m = 0, r = 0;
  int32_t a[28];
  int64_t t[4];
  for (int i = 0; i < 28; i++) a[i] = i;
  int rc = median(x, &m) | range(x, &r) | rows(a, t);
  printf("rc %d median %g range %g rows %lld %lld %lld %lld\n", rc, m, r, (long long)t[0],
         (long long)t[1], (long long)t[2], (long long)t[3]);
  return rc;
}
