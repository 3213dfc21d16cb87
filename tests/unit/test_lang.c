/* test_lang.c — scans, scatters and argmax=/argmin= against references written here in
 * C as numpy defines them (np.cumsum, np.histogram / np.add.at dropping outside indices,
 * np.argmax / np.argmin: first index on ties, the first NaN wins): the interpreter and
 * the LLVM back end, default and scheduled. */
#include "texc.h"
#include "texrt.h"
#include "unit.h"

#include <math.h>
#include <string.h>

static const Options opts = {.target = TARGET_LLVM, .opt_level = 2};

/* Lower kernel NAME of SRC with STEPS (NULL: default) and run it in the interpreter
 * (JIT false) or compiled by LLVM on ARGS. */
static bool run(const char *src, const char *name, const char *steps, bool jit, void **args) {
  Kernel *k = unit_kernel(src, name);
  if (!k) return false;
  Schedule *s = sched_new(k, TARGET_LLVM);
  if (steps && !unit_apply(s, steps)) return false;
  LoweredFunc *f = sched_lower(s, NULL);
  if (!f) return false;
  if (!jit) return interp_run(f, args, NULL) == 0;
  RtModule *m = backend_llvm.build(&f, 1, &opts);
  if (!m) return false;
  RtTensor ts[8], *tp[8];
  for (int i = 0; i < f->nparams; i++) {
    ts[i] = (RtTensor){.data = args[i], .dev = {RT_CPU, 0}};
    tp[i] = &ts[i];
  }
  int rc = rt_func_call(rt_module_func(m, f->name), tp, f->nparams, NULL, 0);
  rt_module_free(m);
  return rc == 0;
}

static const char *scan_src =
    "kernel cumsum(X: f64[3, 20]) -> S: f64[3, 20] {\n"
    "  S[b, i] = i > 0 ? S[b, i - 1] + X[b, i] : X[b, i]\n"
    "}\n";

static void test_scan(void) {
  double x[60], s[60], want[60];
  for (int i = 0; i < 60; i++) x[i] = (double)rint_in(-50, 50) / 8;
  for (int b = 0; b < 3; b++)
    for (int i = 0; i < 20; i++) want[b * 20 + i] = (i ? want[b * 20 + i - 1] : 0) + x[b * 20 + i];
  const char *steps[] = {NULL, "io, ii = split(S.i, 6)\nreorder(io, S.b, ii)\nparallel(S.b)",
                         "reorder(S.i, S.b)\nvectorize(S.b)"};
  for (int v = 0; v < 3; v++)
    for (int jit = 0; jit < 2; jit++) {
      memset(s, 0, sizeof s);
      bool ok = run(scan_src, "cumsum", steps[v], jit, (void *[]){x, s});
      check(xprintf("scan: np.cumsum along rows (schedule %d, %s)", v, jit ? "llvm" : "interp"),
            ok && memcmp(s, want, sizeof s) == 0);
    }
}

static const char *hist_src =
    "kernel hist(A: i32[200]) -> H: i32[16] {\n"
    "  H[A[i]] += 1\n"
    "}\n"
    "kernel rows(X: f32[4, 50]) -> H: i32[4, 8] {\n"
    "  H[r, i32(floor(X[r, i] * 8.0))] += 1\n"
    "}\n";

static void test_hist(void) {
  int32_t a[200], h[16], want[16] = {0};
  for (int i = 0; i < 200; i++) a[i] = (int32_t)rint_in(-5, 20);
  a[0] = INT32_MIN;
  a[1] = INT32_MAX;
  a[2] = 16;
  for (int i = 0; i < 200; i++)
    if (a[i] >= 0 && a[i] < 16) want[a[i]]++;
  const char *hs[] = {NULL, "o, i = split(H.i, 7)\nunroll(i)", "o, i = split(H.i, parts = 8)\nparallel(o)"};
  for (int v = 0; v < 3; v++) {
    memset(h, 0x55, sizeof h);
    bool ok = run(hist_src, "hist", hs[v], v > 0, (void *[]){a, h});
    check(xprintf("scatter: a histogram, indices outside 0..15 dropped (%s)",
                  v == 0 ? "interp" : v == 1 ? "llvm" : "llvm, parallel: atomic"),
          ok && memcmp(h, want, sizeof h) == 0);
  }
  float x[200];
  int32_t g[32], gw[32] = {0};
  for (int i = 0; i < 200; i++) x[i] = (float)rint_in(-20, 90) / 80.0f; /* -0.25 .. 1.125 */
  for (int r = 0; r < 4; r++)
    for (int i = 0; i < 50; i++) {
      int bin = (int)floorf(x[r * 50 + i] * 8.0f);
      if (bin >= 0 && bin < 8) gw[r * 8 + bin]++;
    }
  for (int jit = 0; jit < 2; jit++) {
    memset(g, 0x55, sizeof g);
    bool ok = run(hist_src, "rows", jit ? "parallel(H.r)" : NULL, jit, (void *[]){x, g});
    check(xprintf("scatter: per-row histograms (%s)", jit ? "llvm" : "interp"), ok && memcmp(g, gw, sizeof g) == 0);
  }
}

static const char *arg_src =
    "kernel am(X: f32[6, 9]) -> I: i32[6] {\n"
    "  I[r] argmax= X[r, c]\n"
    "}\n"
    "kernel amin(X: f32[6, 9]) -> I: i64[6] {\n"
    "  I[r] argmin= X[r, c]\n"
    "}\n"
    "kernel am2(X: i32[6, 3, 3]) -> I: i32[6] {\n"
    "  I[r] argmax= X[r, h, w]\n"
    "}\n";

/* np.argmax (MAX) or np.argmin of N floats: the first NaN, else the first best. */
static int64_t np_arg(const float *x, int n, bool max) {
  int64_t best = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(x[i])) return i;
    if (max ? x[i] > x[best] : x[i] < x[best]) best = i;
  }
  return best;
}

static void test_argmax(void) {
  float x[54];
  for (int i = 0; i < 54; i++) x[i] = (float)rint_in(-3, 3); /* many ties */
  x[9 + 4] = NAN;                                             /* row 1: a NaN */
  x[18 + 2] = NAN, x[18 + 7] = NAN;                           /* row 2: two */
  x[27 + 8] = INFINITY;
  for (int i = 36; i < 45; i++) x[i] = 1.0f; /* row 4: all equal */
  x[45] = -0.0f, x[46] = 0.0f;
  int32_t want[6], got[6];
  int64_t wmin[6], gmin[6];
  for (int r = 0; r < 6; r++) {
    want[r] = (int32_t)np_arg(x + 9 * r, 9, true);
    wmin[r] = np_arg(x + 9 * r, 9, false);
  }
  const char *steps[] = {NULL, "co, ci = split(I.c, 4)\nreorder(ci, I.r, co)", "reorder(I.c, I.r)\nvectorize(I.r)"};
  for (int v = 0; v < 3; v++)
    for (int jit = 0; jit < 2; jit++) {
      memset(got, 0x55, sizeof got);
      memset(gmin, 0x55, sizeof gmin);
      bool ok = run(arg_src, "am", steps[v], jit, (void *[]){x, got}) &&
                run(arg_src, "amin", steps[v], jit, (void *[]){x, gmin});
      check(xprintf("argmax/argmin: numpy's, ties and NaN (schedule %d, %s)", v, jit ? "llvm" : "interp"),
            ok && memcmp(got, want, sizeof got) == 0 && memcmp(gmin, wmin, sizeof gmin) == 0);
    }
  int32_t y[54], yi[6], yw[6];
  for (int i = 0; i < 54; i++) y[i] = (int32_t)rint_in(0, 4);
  for (int r = 0; r < 6; r++) {
    yw[r] = 0;
    for (int i = 1; i < 9; i++)
      if (y[r * 9 + i] > y[r * 9 + yw[r]]) yw[r] = i;
  }
  for (int jit = 0; jit < 2; jit++) {
    bool ok = run(arg_src, "am2", jit ? "reorder(I.w, I.h)" : NULL, jit, (void *[]){y, yi});
    check(xprintf("argmax over two axes: the flat position (%s)", jit ? "llvm" : "interp"),
          ok && memcmp(yi, yw, sizeof yi) == 0);
  }
}

static const char *tri_src =
    "kernel tri(A: f64[9, 9], B: f64[9]) -> Y: f64[9] {\n"
    "  Y[i] += A[i, k] * B[k] where k in 0..i + 1\n"
    "}\n";

static void test_triangular(void) {
  double a[81], b[9], y[9], want[9];
  for (int i = 0; i < 81; i++) a[i] = (double)rint_in(-9, 9);
  for (int i = 0; i < 9; i++) b[i] = (double)rint_in(-9, 9);
  for (int i = 0; i < 9; i++) {
    want[i] = 0;
    for (int k = 0; k <= i; k++) want[i] += a[i * 9 + k] * b[k];
  }
  for (int jit = 0; jit < 2; jit++) {
    memset(y, 0, sizeof y);
    bool ok = run(tri_src, "tri", jit ? "ko, ki = split(Y.k, 4)\nreorder(ko, Y.i, ki)" : NULL, jit, (void *[]){a, b, y});
    check(xprintf("triangular: np.tril(A) @ B (%s)", jit ? "llvm" : "interp"), ok && memcmp(y, want, sizeof y) == 0);
  }
}

static void test_scalar(void) {
  const char *src = "kernel total(X: i32[50], B: i32[]) -> S: i32[] {\n  S[] += X[i] * B[]\n}\n";
  int32_t x[50], b = -3, got = 7, want = 0;
  for (int i = 0; i < 50; i++) want += (x[i] = (int32_t)rint_in(-100, 100)) * b;
  for (int jit = 0; jit < 2; jit++) {
    got = 7;
    bool ok = run(src, "total", jit ? "io, ii = split(S.i, parts = 4)\nSR = rfactor(S, io)\nparallel(SR.io)" : NULL,
                  jit, (void *[]){x, &b, &got});
    check(xprintf("0-d: a scalar input and a scalar sum (%s)", jit ? "llvm" : "interp"), ok && got == want);
  }
}

static void test_update(void) {
  const char *src = "kernel mmb(X: f64[3, 4], W: f64[4, 5], B: f64[5]) -> Y: f64[3, 5] {\n"
                    "  Y[i, j] = B[j]\n  Y[i, j] += X[i, r] * W[r, j]\n}\n";
  double x[12], w[20], b[5], y[15], want[15];
  for (int i = 0; i < 12; i++) x[i] = (double)rint_in(-9, 9);
  for (int i = 0; i < 20; i++) w[i] = (double)rint_in(-9, 9);
  for (int i = 0; i < 5; i++) b[i] = (double)rint_in(-9, 9);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 5; j++) {
      want[i * 5 + j] = b[j];
      for (int r = 0; r < 4; r++) want[i * 5 + j] += x[i * 4 + r] * w[r * 5 + j];
    }
  for (int jit = 0; jit < 2; jit++) {
    memset(y, 0, sizeof y);
    bool ok = run(src, "mmb", jit ? "reorder(Y.r, Y.i, Y.j)\nvectorize(Y.j)" : NULL, jit, (void *[]){x, w, b, y});
    check(xprintf("update definition: X @ W + B (%s)", jit ? "llvm" : "interp"), ok && memcmp(y, want, sizeof y) == 0);
  }
}

int main(void) {
  unit_rng = 11;
  test_update();
  test_scalar();
  test_triangular();
  test_scan();
  test_hist();
  test_argmax();
  return failures != 0;
}
