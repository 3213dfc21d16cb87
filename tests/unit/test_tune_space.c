/* test_tune_space.c — the auto-scheduler's search space on real kernels (parsed .tex):
 * register-tile candidates, parallel outer loops kept, the rfactor sketch, every sampled
 * and mutated candidate applies, and the deterministic pseudo cost. */
#include "space.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *rowsum_src =
    "const M = 16, K = 65536\n"
    "kernel rowsum(A: f32[M, K]) -> C: f32[M] {\n"
    "  C[i] += A[i, k]\n"
    "}\n";

static const char *conv_src =
    "const H = 14, W = 14, CI = 32, CO = 64\n"
    "kernel conv(X: f32[1, H + 2, W + 2, CI], F: f32[3, 3, CI, CO]) -> Y: f32[1, H, W, CO] {\n"
    "  Y[n, h, w, co] += X[n, h + rh, w + rw, ci] * F[rh, rw, ci, co]\n"
    "}\n";

/* Sample and mutate N candidates of K; counts of those that apply (lower), that have a
 * parallel loop, that are register tiles (an unrolled local row loop and a vectorized
 * local lane loop, no S2 level), and that use rfactor. */
typedef struct SpaceStats {
  int n, applies, parallel, regtile, rfactor;
} SpaceStats;

static SpaceStats explore(Kernel *k, int n, uint64_t seed) {
  SpaceStats st = {0};
  SketchSet *ss = sketch_new(k, TARGET_LLVM, 2);
  if (!ss) return st;
  Task task = {.kernel = k, .target = TARGET_LLVM, .opts = {.target = TARGET_LLVM, .opt_level = 3}};
  Rng r = {seed};
  for (int i = 0; i < n; i++) {
    Cand c;
    sketch_sample(ss, &r, &c);
    for (int j = 0; j < i % 4; j++) sketch_mutate(ss, &r, &c);
    char *t = sketch_render(ss, &c);
    float f[FEAT_N];
    Arena *ar = arena_new(), *old = arena_swap(ar);
    st.applies += tune_lower_features(&task, t, f);
    arena_swap(old);
    arena_free(ar);
    st.parallel += strstr(t, "parallel(") != NULL;
    st.regtile += strstr(t, "_local_") && strstr(t, "unroll(") && !strstr(t, "_local_i2") &&
                  strstr(t, "vectorize(") != NULL;
    st.rfactor += strstr(t, "rfactor(") != NULL;
    st.n++;
    free(t);
  }
  sketch_free(ss);
  return st;
}

static void test_matmul_space(void) {
  Kernel *k = kernel_of(matmul_src, "matmul");
  check(k != NULL, "space: matmul parses and checks");
  if (!k) return;
  SpaceStats s = explore(k, 200, 11);
  printf("# matmul: %d applied, %d parallel, %d register tiles, %d rfactor of %d\n", s.applies,
         s.parallel, s.regtile, s.rfactor, s.n);
  check(s.applies == s.n, "space: every sampled and mutated matmul candidate applies");
  check(s.parallel == s.n, "space: every matmul candidate has a parallel loop");
  check(s.regtile >= s.n / 8, "space: register-tile candidates are common");
  check(s.rfactor == 0, "space: no rfactor sketch for a matmul");
}

static void test_rowsum_space(void) {
  Kernel *k = kernel_of(rowsum_src, "rowsum");
  check(k != NULL, "space: row-sum parses and checks");
  if (!k) return;
  SketchSet *ss = sketch_new(k, TARGET_LLVM, 2);
  bool named = false;
  for (int i = 0; ss && i < sketch_count(ss); i++) named |= strstr(sketch_name(ss, i), "rfactor") != NULL;
  check(named, "space: a long row-sum has an rfactor sketch");
  sketch_free(ss);
  SpaceStats s = explore(k, 60, 5);
  check(s.rfactor > 0 && s.applies == s.n, "space: rfactor candidates apply");
}

static void test_conv_space(void) {
  Kernel *k = kernel_of(conv_src, "conv");
  check(k != NULL, "space: conv parses and checks");
  if (!k) return;
  SpaceStats s = explore(k, 120, 3);
  printf("# conv: %d applied, %d parallel, %d register tiles of %d\n", s.applies, s.parallel,
         s.regtile, s.n);
  check(s.applies == s.n, "space: every conv candidate applies");
  check(s.parallel == s.n, "space: every conv candidate is parallel (batch 1 is not enough)");
}

/* A convolution reading its filter packed in blocks of 16 output channels, as a network's
 * tasks read weights packed at load (network.c pack_weight). */
static const char *packconv_src =
    "const H = 14, W = 14, CI = 32, CO = 64\n"
    "kernel conv(X: f32[1, H + 2, W + 2, CI], F: f32[CO / 16, 3, 3, CI, 16]) -> Y: f32[1, H, W, CO] {\n"
    "  Y[n, h, w, co] += X[n, h + rh, w + rw, ci] * F[co / 16, rh, rw, ci, co % 16]\n"
    "}\n";

/* Every candidate of the packed convolution tiles the channels by the block: its lowered
 * code divides by 16 nowhere (a tile of 8 or 32 would leave `/16` or `%16` in the
 * indices of its inner loops). */
static void test_packed_space(void) {
  Kernel *k = kernel_of(packconv_src, "conv");
  check(k != NULL, "space: packed conv parses and checks");
  if (!k) return;
  SketchSet *ss = sketch_new(k, TARGET_LLVM, 2);
  Options o = {.target = TARGET_LLVM, .opt_level = 3};
  Rng r = {7};
  int n = 0, lowered = 0, clean = 0;
  for (int i = 0; ss && i < 80; i++, n++) {
    Cand c;
    sketch_sample(ss, &r, &c);
    for (int j = 0; j < i % 5; j++) sketch_mutate(ss, &r, &c);
    char *t = sketch_render(ss, &c);
    Arena *ar = arena_new(), *old = arena_swap(ar);
    Vec steps = {0};
    Schedule *sc = parse_steps("<cand>", t, &steps) ? sched_build(k, TARGET_LLVM, &steps) : NULL;
    LoweredFunc *fn = sc ? sched_lower(sc, &o) : NULL;
    if (fn) {
      lowered++;
      char *buf = NULL;
      size_t len = 0;
      FILE *f = open_memstream(&buf, &len);
      ir_print_func(f, fn);
      fclose(f);
      bool divides = !buf || strstr(buf, "/16") || strstr(buf, "%16");
      clean += !divides;
      if (divides && clean == lowered - 1)
        printf("# first packed candidate that divides:\n%s\n", t);
      free(buf);
    }
    arena_swap(old);
    arena_free(ar);
    free(t);
  }
  sketch_free(ss);
  printf("# packed conv: %d lowered, %d without a division by the block, of %d\n", lowered, clean, n);
  check(n > 0 && lowered == n, "space: every packed conv candidate applies");
  check(n > 0 && clean == n, "space: every packed conv candidate tiles the channels by the block");
}

/* A matmul whose rows no register tile divides (50 = 2 x 5 x 5) and whose B columns are
 * read a vector at a time: register tiles of the machine's MR rows (the tails pass runs
 * the full ones without guards) and B packed into a panel, each candidate checked against
 * the interpreter in a child (measure_check). */
static const char *tailmm_src =
    "const M = 50, N = 64, K = 24\n"
    "kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
    "  C[i, j] += A[i, k] * B[k, j]\n"
    "}\n";

static void test_panel_space(void) {
  Kernel *k = kernel_of(tailmm_src, "matmul");
  check(k != NULL, "space: a 50-row matmul parses and checks");
  if (!k) return;
  SketchSet *ss = sketch_new(k, TARGET_LLVM, 2);
  Task task = {.kernel = k, .target = TARGET_LLVM, .opts = {.target = TARGET_LLVM, .opt_level = 3}};
  Rng r = {5};
  int n = 0, packed = 0, tails = 0, checked = 0, right = 0, micro = 0;
  int mr = target_cpu(NULL)->mr; /* the micro-kernel's rows (6 on AVX2, 14 on AVX-512) */
  for (int i = 0; ss && i < 160; i++, n++) {
    Cand c;
    sketch_sample(ss, &r, &c);
    for (int j = 0; j < i % 3; j++) sketch_mutate(ss, &r, &c);
    char *t = sketch_render(ss, &c);
    bool pk = strstr(t, "B_pack = cache_read(B, local, ") != NULL;
    bool tail = false; /* a split of C.i by a factor that does not divide 50 */
    for (const char *q = strstr(t, "split(C.i, "); q; q = strstr(q + 1, "split(C.i, ")) {
      int f = atoi(q + strlen("split(C.i, "));
      tail |= f > 1 && 50 % f != 0;
      micro += f == mr;
    }
    packed += pk;
    tails += tail;
    if ((pk || tail) && checked < 12) {
      char msg[256] = "";
      checked++;
      int ok = measure_check(&task, t, false, msg, sizeof msg);
      right += ok == 1;
      if (ok != 1) printf("# a wrong candidate (%s):\n%s\n", msg, t);
    }
    free(t);
  }
  sketch_free(ss);
  printf("# 50-row matmul: %d packed, %d with a row tail, %d with %d rows, of %d; %d of %d checked right\n",
         packed, tails, micro, mr, n, right, checked);
  check(micro >= n / 32, "space: register tiles of the micro-kernel's MR rows (the vectors chosen first)");
  check(packed >= n / 32, "space: B is packed into a panel in some register-tile candidates");
  check(tails >= n / 32, "space: register tiles of the machine's rows that leave a tail");
  check(checked > 0 && right == checked, "space: packed and tail candidates match the interpreter");
}

/* A task without a source file (a network's imported task) above 2e8 operations is
 * checked at full size against its unscheduled kernel compiled for the CPU, where the
 * interpreter would take minutes: a right candidate passes, a wrong one (the output's
 * first element changed by a test hook) is found wrong. */
static void test_compiled_reference(void) {
  Kernel *k = kernel_of(tailmm_src, "matmul");
  check(k != NULL, "reference: a 50-row matmul parses and checks");
  if (!k) return;
  const char *cand = "i_o, i_i = split(C.i, 5)\nvectorize(C.j)\n";
  for (int big = 0; big < 2; big++) {
    Task task = {.kernel = k, .target = TARGET_LLVM, .opts = {.target = TARGET_LLVM, .opt_level = 3},
                 .flops = big ? 3e8 : 2 * 50 * 64 * 24};
    const char *by = big ? "the unscheduled kernel" : "the interpreter";
    char msg[256] = "";
    int ok = measure_check(&task, cand, false, msg, sizeof msg);
    if (ok != 1) printf("# %s\n", msg);
    check(ok == 1, xprintf("reference: a right candidate passes against %s", by));
    setenv("TEXC_CHECK_INJECT_WRONG", "1", 1);
    msg[0] = 0;
    ok = measure_check(&task, cand, false, msg, sizeof msg);
    unsetenv("TEXC_CHECK_INJECT_WRONG");
    printf("# %s\n", msg);
    check(ok == 0 && strstr(msg, by), xprintf("reference: a wrong candidate is found wrong against %s", by));
  }
}

static const char *padconv_src =
    "const H = 8, W = 8, CI = 16, CO = 32\n"
    "kernel conv(X: f32[1, H, W, CI], F: f32[3, 3, CI, CO]) -> Y: f32[1, H, W, CO] {\n"
    "  tensor P: f32[1, H + 2, W + 2, CI]\n"
    "  P[n, h, w, c] = h >= 1 && h <= H && w >= 1 && w <= W ? X[n, h - 1, w - 1, c] : 0.0\n"
    "  Y[n, h, w, co] += P[n, h + rh, w + rw, ci] * F[rh, rw, ci, co]\n"
    "}\n";

static const char *mmrelu_src =
    "const M = 64, N = 96, K = 32\n"
    "kernel mmrelu(A: f32[M, K], W: f32[K, N], bias: f32[N]) -> R: f32[M, N] {\n"
    "  tensor T: f32[M, N]\n"
    "  T[i, j] += A[i, k] * W[k, j]\n"
    "  R[i, j] = max(T[i, j] + bias[j], 0.0)\n"
    "}\n";

/* The GPU search space of K on T: every sampled and mutated candidate lowers (gpu_check
 * included: threads and shared memory within the Target's limits); the shared-memory
 * sketch is sampled, with its tiles fetched cooperatively (threadIdx.x) into shared memory,
 * and (CUDA, when NVRTC is here) its first candidates compile. */
static void explore_gpu(Kernel *k, Target t, const char *what, int n, bool nvrtc) {
  SketchSet *ss = sketch_new(k, t, 2);
  check(ss && sketch_count(ss) == 2, "gpu space: two sketches (global loads; shared tiles)");
  if (!ss) return;
  Rng r = {7};
  int applies = 0, shared = 0, coop = 0, tried = 0, compiled = 0, fused = 0, padded = 0, au = 0, db = 0, staged = 0;
  for (int i = 0; i < n; i++) {
    Cand c;
    sketch_sample(ss, &r, &c);
    for (int j = 0; j < i % 4; j++) sketch_mutate(ss, &r, &c);
    char *text = sketch_render(ss, &c);
    bool sh = strstr(text, "= cache_read(") && strstr(text, ", shared, ");
    bool pad = strstr(text, "storage_align(") != NULL;
    padded += pad;
    au += strstr(text, "auto_unroll(") != NULL;
    bool dbl = strstr(text, "double_buffer(") != NULL;
    db += dbl;
    staged += strstr(text, "_shared, local)") != NULL; /* double_buffer(X_shared, local) */
    bool nv = nvrtc && sh && (tried < 4 || ((pad || dbl) && tried < 8));
    tried += nv;
    bool ok = gpu_lowers(k, t, text, nv ? &compiled : NULL);
    if (!ok) printf("# does not lower:\n%s", text);
    applies += ok;
    shared += sh;
    coop += sh && strstr(text, "_shared_t, threadIdx.x)") &&
            (strstr(text, "= cache_write(") || strstr(text, "compute_at(T, R, "));
    fused += sh && strstr(text, "compute_at(T, R, ") && !strstr(text, "cache_write(");
    free(text);
  }
  sketch_free(ss);
  printf("# %s on %s: %d applied, %d with shared tiles (%d fetched by threads, %d with padded "
         "rows, %d auto-unrolled, %d double-buffered, %d of those staged) of %d; NVRTC %d of %d\n", what,
         target_names[t], applies, shared, coop, padded, au, db, staged, n, compiled, tried);
  check(applies == n, "gpu space: every candidate lowers within the Target's limits");
  check(shared >= n / 4 && coop == shared, "gpu space: shared tiles, fetched cooperatively");
  check(padded > 0 && padded < shared, "gpu space: some shared tiles with padded rows (storage_align)");
  check(au > 0 && au < shared, "gpu space: some with auto_unroll of the block's loops");
  check(db > 0 && db < shared, "gpu space: some with double-buffered shared tiles");
  check(staged > 0 && staged < db, "gpu space: some double-buffered copies staged through registers");
  if (tried) check(compiled == tried, "gpu space: CUDA candidates compile with NVRTC");
  if (strcmp(what, "matmul + relu") == 0)
    check(fused == shared, "gpu space: the reduction in registers at its consumer's threads");
}

static void test_gpu_space(void) {
  Kernel *mm = kernel_of(matmul_src, "matmul"), *cv = kernel_of(padconv_src, "conv");
  check(mm && cv, "gpu space: kernels parse and check");
  if (!mm || !cv) return;
  bool nvrtc = getenv("TEXC_NO_NVRTC") == NULL;
  explore_gpu(mm, TARGET_CUDA, "matmul", 120, nvrtc);
  explore_gpu(cv, TARGET_CUDA, "padded conv", 60, nvrtc);
  explore_gpu(mm, TARGET_OPENCL, "matmul", 40, false);
  Kernel *mr = kernel_of(mmrelu_src, "mmrelu");
  check(mr != NULL, "gpu space: matmul + relu parses and checks");
  if (mr) explore_gpu(mr, TARGET_CUDA, "matmul + relu", 60, nvrtc);
}

/* Axes named like the tags of the sketches' own names (b, t, f, o, v, ...): every candidate
 * still applies. A batch axis `b` once made Z_b2 twice (its split level, and the fused
 * block loop STAGE_b2), so that a third of batch_matmul's GPU candidates failed to build. */
static const char *tagaxes_src =
    "const B = 3, T = 20, F = 40, V = 17\n"
    "kernel bmm(X: f32[B, T, V], Y: f32[B, V, F]) -> Z: f32[B, T, F] {\n"
    "  Z[b, t, f] += X[b, t, v] * Y[b, v, f]\n"
    "}\n";

static void test_tag_named_axes(void) {
  Kernel *k = kernel_of(tagaxes_src, "bmm");
  check(k != NULL, "tag-named axes: the kernel parses and checks");
  if (!k) return;
  const Target ts[2] = {TARGET_OPENCL, TARGET_LLVM};
  for (int ti = 0; ti < 2; ti++) {
    SketchSet *ss = sketch_new(k, ts[ti], 2);
    Rng r = {11};
    int bad = 0, n = 60;
    for (int i = 0; ss && i < n; i++) {
      Cand c;
      sketch_sample(ss, &r, &c);
      for (int j = 0; j < i % 3; j++) sketch_mutate(ss, &r, &c);
      char *text = sketch_render(ss, &c);
      if (!gpu_lowers(k, ts[ti], text, NULL)) {
        if (!bad) printf("# does not build:\n%s", text);
        bad++;
      }
      free(text);
    }
    if (ss) sketch_free(ss);
    check(ss && bad == 0, xprintf("tag-named axes (b, t, f, v) on %s: every candidate builds (%d of %d do not)",
                                  target_names[ts[ti]], bad, n));
  }
}

/* The GPU features (features.c 78..84) of matmul 256 staged as gpu_fast is: 128x128
 * blocks of 256 threads, 8x8 accumulators, k tiles of 8 in shared memory (2 x 4 KiB),
 * float4 fetches; against the same kernel without shared memory. */
static void test_gpu_features(void) {
  Kernel *k = kernel_of(matmul_src, "matmul");
  if (!k) return;
  const char *staged =
      "C_local = cache_write(C, local)\n"
      "C_i_t3, C_i3 = split(C.i, 8)\nC_i0, C_i2 = split(C_i_t3, 16)\n"
      "C_j_t3, C_j3 = split(C.j, 8)\nC_j0, C_j2 = split(C_j_t3, 16)\n"
      "reorder(C_i0, C_j0, C_i2, C_j2, C_i3, C_j3)\n"
      "C_b1 = fuse(C_i0, C_j0)\nbind(C_b1, blockIdx.x)\nC_t1 = fuse(C_i2, C_j2)\nbind(C_t1, threadIdx.x)\n"
      "compute_at(C_local, C, C_t1)\n"
      "C_local_k0, C_local_k1 = split(C_local.k, 8)\n"
      "reorder(C_local_k0, C_local_k1, C_local.i, C_local.j)\nunroll(C_local.i)\n"
      "A_shared = cache_read(A, shared, C_local)\ncompute_at(A_shared, C_local, C_local_k0)\n"
      "A_shared_vo, A_shared_v = split(A_shared.k, 4)\nA_shared_f1 = fuse(A_shared.i, A_shared_vo)\n"
      "A_shared_o, A_shared_t = split(A_shared_f1, 256)\nbind(A_shared_t, threadIdx.x)\nvectorize(A_shared_v)\n"
      "B_shared = cache_read(B, shared, C_local)\ncompute_at(B_shared, C_local, C_local_k0)\n"
      "B_shared_f1 = fuse(B_shared.k, B_shared.j)\n"
      "B_shared_o, B_shared_t = split(B_shared_f1, 256)\nbind(B_shared_t, threadIdx.x)\n";
  const char *plain = "C_i0, C_i1 = split(C.i, 16)\nC_j0, C_j1 = split(C.j, 16)\n"
                      "reorder(C_i0, C_j0, C_i1, C_j1)\nC_b = fuse(C_i0, C_j0)\nbind(C_b, blockIdx.x)\n"
                      "C_t = fuse(C_i1, C_j1)\nbind(C_t, threadIdx.x)\n";
  float a[FEAT_N], b[FEAT_N];
  bool ok = features_of_two(k, TARGET_CUDA, staged, plain, a, b);
  check(ok, "gpu features: both schedules lower");
  if (!ok) return;
  printf("# staged: shared %g threads %g vthreads %g unroll %g vec %g reuse %g bank %g\n",
         exp2(a[78]) - 1, exp2(a[79]) - 1, exp2(a[80]) - 1, exp2(a[81]) - 1, exp2(a[82]) - 1,
         exp2(a[83]) - 1, exp2(a[84]) - 1);
  check(fabs(a[78] - log2(1 + 8192.0)) < 1e-3 && b[78] == 0, "gpu features: shared bytes per block");
  check(fabs(a[79] - log2(1 + 256.0)) < 1e-3 && fabs(b[79] - log2(1 + 256.0)) < 1e-3,
        "gpu features: threads per block");
  check(fabs(a[81] - log2(1 + 8.0)) < 1e-3 && b[81] == 0, "gpu features: unrolled iterations");
  check(fabs(a[82] - log2(1 + 16.0)) < 1e-3 && b[82] == 0, "gpu features: 16-byte vector loads");
  check(fabs(a[83] - log2(1 + 32.0)) < 1e-3 && b[83] == 0, /* 2 x 128 x 128 x 8 flops per 8 KiB */
        "gpu features: flops per byte staged in shared memory");
  check(fabs(a[84] - log2(1 + 4.0)) < 1e-3 && b[84] == 0, /* B_shared[k, (t % 16) * 8 + j] */
        "gpu features: bank conflicts of strided shared reads (4 addresses per bank)");
  /* tests/lit/gpu/storage_align.tex: A's shared rows of 8 read at rows (t / 8) * 4 put the
   * warp's 4 row groups in one bank; rows padded to 9 spread them over 4 banks (the copy's
   * stores, 32 threads over 4 rows of 9, then put words 0 and 32 in bank 0: degree 2) */
  const char *rows =
      "CL = cache_write(C, local)\nbi, bj, ii, ij = tile(C.i, C.j, 32, 32)\n"
      "ty, yi = split(ii, 4)\ntx, xi = split(ij, 4)\nreorder(bi, bj, ty, tx, yi, xi)\n"
      "b = fuse(bi, bj)\nt = fuse(ty, tx)\nbind(b, blockIdx.x)\nbind(t, threadIdx.x)\n"
      "compute_at(CL, C, t)\nko, ki = split(CL.k, 8)\nreorder(ko, ki, CL.i, CL.j)\n"
      "AS = cache_read(A, shared, CL)\ncompute_at(AS, CL, ko)\n%s"
      "af = fuse(AS.i, AS.k)\nao, at = split(af, 64)\nbind(at, threadIdx.x)\n"
      "BS = cache_read(B, shared, CL)\ncompute_at(BS, CL, ko)\n"
      "bf = fuse(BS.k, BS.j)\nbo, bt = split(bf, 64)\nbind(bt, threadIdx.x)\n";
  ok = features_of_two(k, TARGET_CUDA, xprintf(rows, ""), xprintf(rows, "storage_align(AS, AS.i, 8, 1)\n"), a, b);
  check(ok, "gpu features: a shared tile with and without padded rows lowers");
  printf("# rows of 8: bank %g; padded to 9: bank %g, shared %g -> %g bytes\n", exp2(a[84]) - 1,
         exp2(b[84]) - 1, exp2(a[78]) - 1, exp2(b[78]) - 1);
  check(ok && fabs(a[84] - log2(1 + 4.0)) < 1e-3 && fabs(b[84] - log2(1 + 2.0)) < 1e-3,
        "gpu features: storage_align removes the bank conflicts of column reads");
  check(ok && fabs(b[78] - log2(1 + 32 * 9 * 4 + 8 * 32 * 4)) < 1e-3,
        "gpu features: padded rows count in the shared bytes");
  /* double_buffer: two of each tile, and the flag of feature 86 */
  ok = features_of_two(k, TARGET_CUDA, xprintf("%s%s", xprintf(rows, ""), "double_buffer(AS)\ndouble_buffer(BS)\n"),
                       xprintf(rows, ""), a, b);
  printf("# double-buffered: shared %g bytes, flag %g; single: %g, %g\n", exp2(a[78]) - 1, a[86], exp2(b[78]) - 1, b[86]);
  check(ok && fabs(a[78] - log2(1 + 2 * (32 * 8 * 4 + 8 * 32 * 4))) < 1e-3 && a[86] == 1 && b[86] == 0,
        "gpu features: double-buffered tiles count twice and set the flag");
  /* double_buffer(S, local): the same tiles, the flag 2 */
  ok = features_of_two(k, TARGET_CUDA, xprintf("%s%s", xprintf(rows, ""), "double_buffer(AS, local)\ndouble_buffer(BS, local)\n"),
                       xprintf("%s%s", xprintf(rows, ""), "double_buffer(AS)\ndouble_buffer(BS)\n"), a, b);
  check(ok && a[78] == b[78] && a[86] == 2 && b[86] == 1, "gpu features: staged copies set the flag to 2");
}

static void test_pseudo_cost(void) {
  float a[FEAT_N] = {0}, b[FEAT_N] = {0};
  a[0] = b[0] = 20; /* the same flops */
  b[6] = 4;         /* b: 16 vector lanes */
  double ca = features_pseudo_cost(a), cb = features_pseudo_cost(b);
  check(ca > cb && cb > 0 && isfinite(ca), "pseudo cost: vector lanes make it cheaper");
  check(features_pseudo_cost(a) == ca, "pseudo cost: deterministic");
}

static const char *tiny_src =
    "kernel tiny(A: f32[16]) -> B: f32[16] {\n"
    "  B[i] = A[i] * 2.0\n"
    "}\n";

/* One local measurer serving two tasks (as texc-mpi's ranks and a runner do): the fast
 * task's best must not make the slow task's candidates "clearly worse" (timed by their
 * warm-up alone) — each task has its own best. */
static void test_measurer_best_per_task(void) {
  Kernel *fast = kernel_of(tiny_src, "tiny"), *slow = kernel_of(matmul_src, "matmul");
  check(fast && slow, "measure: the two kernels check");
  if (!fast || !slow) return;
  Options o = {.target = TARGET_LLVM, .opt_level = 3};
  Task a = {.kernel = fast, .target = TARGET_LLVM, .opts = o};
  Task b = {.kernel = slow, .target = TARGET_LLVM, .opts = o};
  snprintf(a.workload, sizeof a.workload, "%016x", 1);
  snprintf(b.workload, sizeof b.workload, "%016x", 2);
  MeasureOpts mo = {.repeat = 3, .build_timeout_s = 60, .run_timeout_s = 60, .jobs = 1};
  Measurer m = measurer_local(&mo);
  char *none[1] = {""};
  Record ra = {0}, rb = {0};
  m.measure(&m, &a, none, 1, &ra);
  m.measure(&m, &b, none, 1, &rb);
  printf("# fast task: %d costs (%g ms), slow task: %d costs (%g ms)\n", ra.ncosts,
         ra.ncosts ? ra.costs[0] : 0.0, rb.ncosts, rb.ncosts ? rb.costs[0] : 0.0);
  check(ra.error == TE_OK && rb.error == TE_OK && ra.ncosts == 3 && rb.ncosts == 3,
        "measure: a slow task after a fast one is measured in full (its own best)");
  rec_free(&ra);
  rec_free(&rb);
  free(m.ctx);
}

int main(void) {
  test_matmul_space();
  test_rowsum_space();
  test_conv_space();
  test_packed_space();
  test_panel_space();
  test_compiled_reference();
  test_measurer_best_per_task();
  test_gpu_space();
  test_tag_named_axes();
  test_gpu_features();
  test_pseudo_cost();
  return failures ? 1 : 0;
}
