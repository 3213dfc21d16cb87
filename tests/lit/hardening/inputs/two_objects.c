/* Calls a kernel from each of two objects texc emitted (two_objects.tex). */
#include <stdio.h>
#include "double.h"
#include "inc.h"

int main(void) {
  float x[4] = {1, 2, 3, 4}, y[4], z[4];
  twice(x, y);
  plus_one(y, z);
  printf("%g %g %g %g\n", z[0], z[1], z[2], z[3]);
  return 0;
}
