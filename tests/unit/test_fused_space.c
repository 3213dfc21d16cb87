/* test_fused_space.c — the CPU search space of a network task whose reduction feeds a chain
 * of elementwise stages (convolution -> batch norm -> relu, as network.c fuses them): one
 * sketch computes the reduction at the tile of the chain's last stage (the batch norm
 * inlined into the relu), and every candidate of every sketch gives the interpreter's
 * result. Before, the fused sketch named the inlined batch norm as the consumer and never
 * lowered, or was dropped, so the search only tried the reduction tiled alone. */
#include "space.h"

#include <string.h>

/* depthwise 3 x 3 (stride 2 in DW2) + batch norm + relu, as stdlib/nn/conv2d.tex writes it */
static const char *dw_src =
    "kernel dw(X: f32[1, 10, 10, 16], K: f32[3, 3, 16], S: f32[16], B: f32[16]) -> Y: f32[1, 10, 10, 16] {\n"
    "  tensor P: f32[1, 12, 12, 16]\n"
    "  tensor A: f32[1, 10, 10, 16]\n"
    "  tensor T: f32[1, 10, 10, 16]\n"
    "  P[n, h, w, c] = h >= 1 && h < 11 && w >= 1 && w < 11 ? X[n, h - 1, w - 1, c] : 0.0\n"
    "  A[n, y, x, c] += P[n, y + ry, x + rx, c] * K[ry, rx, c]\n"
    "  T[n, y, x, c] = A[n, y, x, c] * S[c] + B[c]\n"
    "  Y[n, y, x, c] = max(T[n, y, x, c], 0.0)\n"
    "}\n"
    "kernel dw2(X: f32[1, 12, 12, 24], K: f32[3, 3, 24], S: f32[24], B: f32[24]) -> Y: f32[1, 6, 6, 24] {\n"
    "  tensor P: f32[1, 14, 14, 24]\n"
    "  tensor A: f32[1, 6, 6, 24]\n"
    "  tensor T: f32[1, 6, 6, 24]\n"
    "  P[n, h, w, c] = h >= 1 && h < 13 && w >= 1 && w < 13 ? X[n, h - 1, w - 1, c] : 0.0\n"
    "  A[n, y, x, c] += P[n, y * 2 + ry, x * 2 + rx, c] * K[ry, rx, c]\n"
    "  T[n, y, x, c] = A[n, y, x, c] * S[c] + B[c]\n"
    "  Y[n, y, x, c] = max(T[n, y, x, c], 0.0)\n"
    "}\n"
    /* a convolution + batch norm + relu (the reduction over ci too) */
    "kernel cbr(X: f32[1, 8, 8, 8], F: f32[3, 3, 8, 16], S: f32[16], B: f32[16]) -> Y: f32[1, 8, 8, 16] {\n"
    "  tensor P: f32[1, 10, 10, 8]\n"
    "  tensor A: f32[1, 8, 8, 16]\n"
    "  tensor T: f32[1, 8, 8, 16]\n"
    "  P[n, h, w, c] = h >= 1 && h < 9 && w >= 1 && w < 9 ? X[n, h - 1, w - 1, c] : 0.0\n"
    "  A[n, y, x, co] += P[n, y + ry, x + rx, ci] * F[ry, rx, ci, co]\n"
    "  T[n, y, x, co] = A[n, y, x, co] * S[co] + B[co]\n"
    "  Y[n, y, x, co] = max(T[n, y, x, co], 0.0)\n"
    "}\n"
    /* a batch norm read twice: inlined into both readers, so nothing to fuse into */
    "kernel twice(X: f32[8, 16], W: f32[16, 16], S: f32[16]) -> Y: f32[8, 16] {\n"
    "  tensor A: f32[8, 16]\n"
    "  tensor T: f32[8, 16]\n"
    "  tensor U: f32[8, 16]\n"
    "  A[i, j] += X[i, k] * W[k, j]\n"
    "  T[i, j] = A[i, j] * S[j]\n"
    "  U[i, j] = max(T[i, j], 0.0)\n"
    "  Y[i, j] = U[i, j] + T[i, j]\n"
    "}\n";

/* Sample (and mutate) N candidates of kernel NAME on LLVM; check that some sketch computes
 * A at the tile of Y with T inlined, and that every candidate matches the interpreter. */
static void explore(const char *name, int n, bool want_fused) {
  Kernel *k = kernel_of(dw_src, name);
  char what[128];
  snprintf(what, sizeof what, "fused space: %s parses and checks", name);
  check(k != NULL, what);
  if (!k) return;
  SketchSet *ss = sketch_new(k, TARGET_LLVM, 2);
  Task task = {.kernel = k, .target = TARGET_LLVM, .opts = {.target = TARGET_LLVM, .opt_level = 3}};
  Rng r = {11};
  int fused = 0, tiled = 0, right = 0, tried = 0;
  for (int i = 0; ss && i < n; i++, tried++) {
    Cand c;
    sketch_sample(ss, &r, &c);
    for (int j = 0; j < i % 3; j++) sketch_mutate(ss, &r, &c);
    char *t = sketch_render(ss, &c);
    fused += strstr(t, "compute_at(A, Y, ") != NULL;
    tiled += strstr(t, "parallel(A_") != NULL;
    char msg[512] = "";
    int ok = measure_check(&task, t, false, msg, sizeof msg);
    right += ok == 1;
    if (ok != 1) printf("# %s: a candidate differs from the interpreter (%s):\n%s\n", name, msg, t);
    free(t);
  }
  printf("# %s: %d sketches, %d candidates: %d fused at Y, %d tiled alone, %d right\n", name,
         ss ? sketch_count(ss) : 0, tried, fused, tiled, right);
  snprintf(what, sizeof what, "fused space: %s has %s", name,
           want_fused ? "a sketch computing A at the tile of Y" : "no sketch fused into an inlined stage");
  check(want_fused ? fused > 0 && tiled > 0 : fused == 0 && tried > 0, what);
  snprintf(what, sizeof what, "fused space: every %s candidate gives the interpreter's result", name);
  check(tried > 0 && right == tried, what);
  sketch_free(ss);
}

int main(void) {
  (void)matmul_src;
  explore("dw", 24, true);
  explore("dw2", 16, true);
  explore("cbr", 16, true);
  explore("twice", 8, false);
  return failures ? 1 : 0;
}
