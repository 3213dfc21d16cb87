/* test_xreduce.c — the GPU cross-thread reduction sketch (sketch.c, PLAN_GPU_XREDUCE):
 * which reductions get it (a long row sum, a mat-vec, a pool, softmax; not a matmul), that
 * its candidates rfactor the reduction onto threadIdx.x within the Target's threads per
 * block, that every sampled and mutated candidate lowers on OpenCL and CUDA, that CUDA
 * candidates compile with NVRTC (when it is here), and TEXC_NO_XREDUCE turns it off. */
#include "space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *rowsum_src =
    "const M = 64, K = 65536\n"
    "kernel rowsum(A: f32[M, K]) -> C: f32[M] {\n"
    "  C[i] += A[i, k]\n"
    "}\n";

static const char *matvec_src =
    "const M = 256, K = 16384\n"
    "kernel matvec(A: f32[M, K], x: f32[K]) -> y: f32[M] {\n"
    "  y[i] += A[i, k] * x[k]\n"
    "}\n";

static const char *pool_src = /* global average pool, NHWC: the sum at the division's block */
    "const H = 7, W = 7, C = 512\n"
    "kernel pool(X: f32[1, H, W, C]) -> Y: f32[1, 1, 1, C] {\n"
    "  tensor S: f32[1, 1, 1, C]\n"
    "  S[n, a, b, c] += X[n, h, w, c]\n"
    "  Y[n, a, b, c] = S[n, a, b, c] / 49.0\n"
    "}\n";

static const char *softmax_src =
    "const N = 8, M = 1000\n"
    "kernel softmax(X: f32[N, M]) -> Y: f32[N, M] {\n"
    "  tensor mx: f32[N]\n"
    "  tensor e: f32[N, M]\n"
    "  tensor s: f32[N]\n"
    "  mx[i] max= X[i, j]\n"
    "  e[i, j] = exp(X[i, j] - mx[i])\n"
    "  s[i] += e[i, j]\n"
    "  Y[i, j] = e[i, j] / s[i]\n"
    "}\n";

static const char *ratio_src = /* two reductions into one consumer: one takes its block */
    "const M = 16, K = 2048\n"
    "kernel ratio(A: f32[M, K], B: f32[M, K]) -> Y: f32[M] {\n"
    "  tensor S: f32[M]\n"
    "  tensor Q: f32[M]\n"
    "  S[i] += A[i, k]\n"
    "  Q[i] max= B[i, k]\n"
    "  Y[i] = S[i] / Q[i]\n"
    "}\n";

static const char *pool2_src = /* two spatial and two reduction axes, no consumer */
    "const N = 4, H = 8, W = 8, C = 64\n"
    "kernel pool2(X: f32[N, H, W, C]) -> S: f32[N, C] {\n"
    "  S[n, c] += X[n, h, w, c]\n"
    "}\n";

/* The index of the sketch named "xreduce" in SS, or -1. */
static int xreduce_index(const SketchSet *ss) {
  for (int i = 0; ss && i < sketch_count(ss); i++)
    if (strcmp(sketch_name(ss, i), "xreduce") == 0) return i;
  return -1;
}

/* Sample (and mutate) N candidates of K's xreduce sketch on T: every one lowers, binds the
 * rfactored reduction to threadIdx.x with a power-of-two thread count within the Target's
 * limit, and (CUDA with NVRTC) the first few compile. WANT names a step every candidate
 * has (NULL: none asked); KINDS thread counts at least are sampled. */
static void explore(Kernel *k, Target t, const char *what, int n, bool nvrtc, const char *want,
                    int kinds) {
  SketchSet *ss = sketch_new(k, t, 2);
  int xi = xreduce_index(ss);
  char name[160];
  snprintf(name, sizeof name, "xreduce: %s on %s has a cross-thread sketch", what, target_names[t]);
  check(xi >= 0, name);
  if (xi < 0) {
    sketch_free(ss);
    return;
  }
  int maxt = gpu_limits(t, NULL).max_threads_per_block;
  Rng r = {3};
  int seen = 0, applies = 0, shaped = 0, tried = 0, compiled = 0, wanted = 0;
  int threads_seen = 0; /* bit log2(T) */
  int rows = 0, rows_compiled = -1; /* candidates with Y > 1 rows (threadIdx.y); T x Y within
                                     * the Target is gpu_check's, in "lowers" */
  for (int i = 0; seen < n && i < 40 * n; i++) {
    Cand c;
    sketch_sample(ss, &r, &c);
    for (int j = 0; j < i % 3; j++) sketch_mutate(ss, &r, &c);
    if (c.sketch != xi) continue;
    seen++;
    char *text = sketch_render(ss, &c);
    const char *sp = strstr(text, "_kt = split(");
    const char *comma = sp ? strchr(sp + 12, ',') : NULL; /* split(LOOP, T) */
    int th = comma ? atoi(comma + 1) : 0;
    bool pow2 = th >= 32 && (th & (th - 1)) == 0 && th <= maxt;
    if (pow2) threads_seen |= 1 << __builtin_ctz((unsigned)th);
    shaped += pow2 && strstr(text, "= rfactor(") && strstr(text, "_kt, threadIdx.x)") &&
              strstr(text, ", blockIdx.x)");
    wanted += !want || strstr(text, want) != NULL;
    const char *by = strstr(text, "_by = split(");
    const char *yc = by ? strchr(by + 12, ',') : NULL;
    int y = yc && strstr(text, "_by, threadIdx.y)") ? atoi(yc + 1) : 1;
    rows += y > 1;
    bool nv = nvrtc && (tried < 3 || (y > 1 && rows_compiled < 0));
    if (nv && y > 1) rows_compiled = compiled;
    tried += nv;
    bool ok = gpu_lowers(k, t, text, nv ? &compiled : NULL);
    if (!ok) printf("# does not lower:\n%s", text);
    applies += ok;
    free(text);
  }
  sketch_free(ss);
  printf("# %s on %s: %d xreduce candidates, %d lower, %d shaped, thread counts 0x%x, %d with rows "
         "on threadIdx.y, NVRTC %d of %d\n",
         what, target_names[t], seen, applies, shaped, threads_seen, rows, compiled, tried);
  snprintf(name, sizeof name, "xreduce: %s on %s: some blocks of several rows (threadIdx.y)", what,
           target_names[t]);
  check(rows > 0, name);
  snprintf(name, sizeof name, "xreduce: every %s candidate on %s lowers", what, target_names[t]);
  check(seen == n && applies == n, name);
  snprintf(name, sizeof name, "xreduce: %s: rfactor, threadIdx.x, blockIdx.x, T a power of two <= %d",
           what, maxt);
  check(shaped == n, name);
  snprintf(name, sizeof name, "xreduce: %s: several thread counts sampled", what);
  check(__builtin_popcount((unsigned)threads_seen) >= kinds, name);
  if (want) {
    snprintf(name, sizeof name, "xreduce: %s: every candidate has '%s'", what, want);
    check(wanted == n, name);
  }
  if (tried) {
    snprintf(name, sizeof name, "xreduce: %s: CUDA candidates compile with NVRTC", what);
    check(compiled == tried, name);
  }
}

static void test_which(void) {
  Kernel *mm = kernel_of(matmul_src, "matmul"), *rs = kernel_of(rowsum_src, "rowsum");
  check(mm && rs, "xreduce: kernels parse and check");
  if (!mm || !rs) return;
  SketchSet *a = sketch_new(mm, TARGET_CUDA, 2), *b = sketch_new(rs, TARGET_LLVM, 2);
  check(a && xreduce_index(a) < 0, "xreduce: none for a matmul (enough spatial work)");
  check(b && xreduce_index(b) < 0, "xreduce: none on a CPU target");
  sketch_free(a);
  sketch_free(b);
  setenv("TEXC_NO_XREDUCE", "1", 1);
  SketchSet *c = sketch_new(rs, TARGET_OPENCL, 2);
  check(c && xreduce_index(c) < 0 && sketch_count(c) >= 1, "xreduce: TEXC_NO_XREDUCE=1 turns it off");
  sketch_free(c);
  unsetenv("TEXC_NO_XREDUCE");
  SketchSet *d = sketch_new(rs, TARGET_OPENCL, 2);
  check(d && xreduce_index(d) >= 0 && sketch_count(d) >= 2, "xreduce: an extra sketch beside the others");
  sketch_free(d);
}

/* Feature 85 (features.c): the threads that combine one element, 0 without a cross-thread
 * reduction (one thread per row: the same work, 64 threads, no combine). */
static void test_feature(void) {
  Kernel *k = kernel_of(rowsum_src, "rowsum");
  if (!k) return;
  const char *xr = "C_ko, C_kt = split(C.k, 256)\nC_rf = rfactor(C, C_kt)\nbind(C.i, blockIdx.x)\n"
                   "bind(C.C_kt, threadIdx.x)\ncompute_at(C_rf, C, C.C_kt)\n";
  const char *plain = "C_b, C_t = split(C.i, 64)\nbind(C_b, blockIdx.x)\nbind(C_t, threadIdx.x)\n";
  float a[FEAT_N], b[FEAT_N];
  bool ok = features_of_two(k, TARGET_OPENCL, xr, plain, a, b);
  check(ok, "xreduce feature: both schedules lower");
  if (!ok) return;
  printf("# cross-thread width: %g and %g\n", exp2(a[85]) - 1, exp2(b[85]) - 1);
  check(FEAT_N >= 86 && fabs(a[85] - log2(257.0)) < 1e-3 && b[85] == 0,
        "xreduce feature: 256 threads combine one element; none without rfactor");
}

int main(void) {
  test_which();
  test_feature();
  bool nvrtc = getenv("TEXC_NO_NVRTC") == NULL;
  Kernel *rs = kernel_of(rowsum_src, "rowsum"), *mv = kernel_of(matvec_src, "matvec");
  Kernel *pl = kernel_of(pool_src, "pool"), *sm = kernel_of(softmax_src, "softmax");
  check(rs && mv && pl && sm, "xreduce: row sum, mat-vec, pool, softmax parse and check");
  if (!rs || !mv || !pl || !sm) return 1;
  explore(rs, TARGET_OPENCL, "row sum", 24, false, NULL, 4);
  explore(rs, TARGET_CUDA, "row sum", 24, nvrtc, NULL, 4);
  explore(mv, TARGET_OPENCL, "mat-vec", 16, false, NULL, 4);
  explore(pl, TARGET_OPENCL, "pool", 16, false, "compute_at(S, Y, ", 2); /* 32, 64 for 49 */
  explore(pl, TARGET_CUDA, "pool", 8, nvrtc, "S_r1 = fuse(S.h, S.w)", 2);
  explore(sm, TARGET_OPENCL, "softmax", 16, false, "mx_rf = rfactor(", 4);
  Kernel *p2 = kernel_of(pool2_src, "pool2");
  check(p2 != NULL, "xreduce: a 2-d sum over two axes parses and checks");
  if (p2) explore(p2, TARGET_CUDA, "2-d sum over two axes", 12, nvrtc, "S_b1 = fuse(S.n, S.c)", 2);
  Kernel *ra = kernel_of(ratio_src, "ratio");
  check(ra != NULL, "xreduce: two reductions into one consumer parse and check");
  if (ra) explore(ra, TARGET_OPENCL, "two reductions, one consumer", 12, false, "Q_rf = rfactor(", 4);
  return failures ? 1 : 0;
}
