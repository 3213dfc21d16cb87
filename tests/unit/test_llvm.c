/* test_llvm.c — the LLVM back end on hand-built loop IR: every loop kind, guards,
 * allocations, dtypes, math calls, symbolic sizes, emit kinds and `--emit so` loading. */
#include "texc.h"
#include "texrt.h"
#include "rt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void check(bool ok, const char *name) {
  printf("%s - %s\n", ok ? "ok" : "not ok", name);
  if (!ok) failures++;
}

static const Options opts = {.target = TARGET_LLVM, .opt_level = 3};

/* ---------------------------------------------------------------- builders */

static Buffer *buf1(const char *name, DType t, Expr *n, BufKind k) {
  return ir_buffer(name, t, 1, &n, SCOPE_GLOBAL, k);
}

static Buffer *buf2(const char *name, DType t, Expr *m, Expr *n, BufKind k) {
  Expr *sh[2] = {m, n};
  return ir_buffer(name, t, 2, sh, SCOPE_GLOBAL, k);
}

static Expr *ld1(Buffer *b, Expr *i) { return ir_load(b, &i); }
static Expr *ld2(Buffer *b, Expr *i, Expr *j) {
  Expr *ix[2] = {i, j};
  return ir_load(b, ix);
}
static Stmt *st1(Buffer *b, Expr *i, Expr *v) { return ir_store(b, &i, v); }
static Stmt *st2(Buffer *b, Expr *i, Expr *j, Expr *v) {
  Expr *ix[2] = {i, j};
  return ir_store(b, ix, v);
}
static Stmt *loop(IrVar *v, int64_t ext, ForKind k, Stmt *body) { return ir_for(v, ir_int(0), ir_int(ext), k, body); }
static Expr *V(IrVar *v) { return ir_var(v); }

static LoweredFunc *func(const char *name, Buffer **params, int np, int nin, IrVar **sizes, int ns, Stmt *body) {
  LoweredFunc *f = xalloc(sizeof *f);
  f->name = name;
  f->params = xalloc(sizeof(Buffer *) * (size_t)np);
  memcpy(f->params, params, sizeof(Buffer *) * (size_t)np);
  f->nparams = np;
  f->ninputs = nin;
  f->sizes = sizes;
  f->nsizes = ns;
  f->body = body;
  f->target = TARGET_LLVM;
  return f;
}

/* JIT-compile F and call it on ARGS (host pointers) with SIZES; returns its status or -1. */
static int run(LoweredFunc *f, void **args, const int64_t *sizes) {
  RtModule *m = backend_llvm.build(&f, 1, &opts);
  if (!m) return -1;
  RtTensor ts[16], *tp[16];
  for (int i = 0; i < f->nparams; i++) {
    ts[i] = (RtTensor){.data = args[i], .dev = {RT_CPU, 0}};
    tp[i] = &ts[i];
  }
  int rc = rt_func_call(rt_module_func(m, f->name), tp, f->nparams, sizes, f->nsizes);
  if (rc) fprintf(stderr, "  %s\n", rt_last_error());
  rt_module_free(m);
  return rc;
}

static float *randf(int64_t n, uint64_t seed) {
  float *p = aligned_alloc(64, (size_t)((n * 4 + 63) & ~63));
  fill_random(p, DT_F32, n, seed);
  return p;
}

static bool close_to(const float *a, const float *b, int64_t n, float tol) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(a[i] - b[i]) <= tol * (1 + fabsf(b[i])))) {
      fprintf(stderr, "  [%lld] %g != %g\n", (long long)i, a[i], b[i]);
      return false;
    }
  return true;
}

/* ------------------------------------------------------------------ tests */

/* C[i] = A[i] + B[i] with a symbolic N: serial, negative size rejected. */
static void test_vadd_symbolic(void) {
  IrVar *n = ir_newvar("N", DT_I64), *i = ir_newvar("i", DT_I64);
  Buffer *a = buf1("A", DT_F32, V(n), BUF_INPUT), *b = buf1("B", DT_F32, V(n), BUF_INPUT);
  Buffer *c = buf1("C", DT_F32, V(n), BUF_OUTPUT);
  Stmt *body = ir_for(i, ir_int(0), V(n), FOR_SERIAL, st1(c, V(i), ir_bin(OP_ADD, ld1(a, V(i)), ld1(b, V(i)))));
  Buffer *ps[3] = {a, b, c};
  IrVar **sz = xalloc(sizeof *sz);
  sz[0] = n;
  LoweredFunc *f = func("vadd", ps, 3, 2, sz, 1, body);
  RtModule *m = backend_llvm.build(&f, 1, &opts);
  check(m != NULL, "vadd_symbolic builds");
  if (!m) return;
  RtFunc *rf = rt_module_func(m, "vadd");
  float *x = randf(1000, 1), *y = randf(1000, 2), *z = calloc(1000, 4), *ref = calloc(1000, 4);
  for (int k = 0; k < 1000; k++) ref[k] = x[k] + y[k];
  int64_t shape = 1000;
  RtTensor ta = {x, {RT_CPU, 0}, 4, 1, {1000}, 4000}, tb = ta, tc = ta;
  tb.data = y;
  tc.data = z;
  RtTensor *args[3] = {&ta, &tb, &tc};
  check(rt_func_call(rf, args, 3, &shape, 1) == 0 && close_to(z, ref, 1000, 0), "vadd_symbolic N=1000");
  shape = 7;
  memset(z, 0, 4000);
  check(rt_func_call(rf, args, 3, &shape, 1) == 0 && close_to(z, ref, 7, 0) && z[7] == 0, "vadd_symbolic N=7");
  shape = -1;
  check(rt_func_call(rf, args, 3, &shape, 1) != 0, "vadd_symbolic negative size fails");
  /* The proofs assume sizes in 1..2^40: rt_func_call refuses the others (the compiled
   * function itself does too: examples/deploy calls it directly). */
  int64_t outside[] = {0, RT_SIZE_MAX + 1, INT64_MIN, INT64_MAX};
  for (int o = 0; o < 4; o++) {
    shape = outside[o];
    check(rt_func_call(rf, args, 3, &shape, 1) != 0, xprintf("vadd_symbolic size %lld refused", (long long)shape));
  }
  check(rt_func_call(rf, args, 2, &shape, 1) != 0, "rt_func_call checks nargs");
  rt_module_free(m);
  free(x), free(y), free(z), free(ref);
}

/* Tiled matmul: io parallel, ji vectorized, ii unrolled; TI x TJ tiles of C. With LOCAL,
 * the tile accumulates in a local buffer (as cache_write(C, local) lowers). */
static LoweredFunc *make_matmul(int64_t M, int64_t N, int64_t K, int ti, int tj, bool local) {
  IrVar *io = ir_newvar("io", DT_I64), *jo = ir_newvar("jo", DT_I64), *k = ir_newvar("k", DT_I64);
  IrVar *ii = ir_newvar("ii", DT_I64), *ji = ir_newvar("ji", DT_I64);
  Buffer *a = buf2("A", DT_F32, ir_int(M), ir_int(K), BUF_INPUT), *b = buf2("B", DT_F32, ir_int(K), ir_int(N), BUF_INPUT);
  Buffer *c = buf2("C", DT_F32, ir_int(M), ir_int(N), BUF_OUTPUT);
  Expr *i = ir_add(ir_mul(V(io), ir_int(ti)), V(ii)), *j = ir_add(ir_mul(V(jo), ir_int(tj)), V(ji));
  Buffer *t = c;
  Expr *ti_ = i, *tj_ = j;
  if (local) {
    t = buf2("CL", DT_F32, ir_int(ti), ir_int(tj), BUF_TEMP);
    t->scope = SCOPE_LOCAL;
    ti_ = V(ii);
    tj_ = V(ji);
  }
  Stmt *init = loop(ii, ti, FOR_UNROLL, loop(ji, tj, FOR_VECTORIZE, st2(t, ti_, tj_, ir_float(DT_F32, 0))));
  Stmt *upd = st2(t, ti_, tj_, ir_add(ld2(t, ti_, tj_), ir_mul(ld2(a, i, V(k)), ld2(b, V(k), j))));
  Stmt *kl = loop(k, K, FOR_SERIAL, loop(ii, ti, local ? FOR_UNROLL : FOR_SERIAL, loop(ji, tj, FOR_VECTORIZE, upd)));
  Stmt *tile = ir_seq2(init, kl);
  if (local) {
    Stmt *out = loop(ii, ti, FOR_SERIAL, loop(ji, tj, FOR_VECTORIZE, st2(c, i, j, ld2(t, V(ii), V(ji)))));
    tile = ir_alloc(t, ir_seq2(tile, out));
  }
  Stmt *body = loop(io, M / ti, FOR_PARALLEL, loop(jo, N / tj, FOR_SERIAL, tile));
  Buffer *ps[3] = {a, b, c};
  return func("matmul", ps, 3, 2, NULL, 0, body);
}

static void naive_matmul(const float *a, const float *b, float *c, int M, int N, int K) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float s = 0;
      for (int k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      c[i * N + j] = s;
    }
}

static void test_matmul(bool local) {
  int M = 64, N = 96, K = 48;
  LoweredFunc *f = make_matmul(M, N, K, 4, 16, local);
  float *a = randf(M * K, 3), *b = randf(K * N, 4), *c = calloc((size_t)(M * N), 4), *ref = calloc((size_t)(M * N), 4);
  naive_matmul(a, b, ref, M, N, K);
  void *args[3] = {a, b, c};
  check(run(f, args, NULL) == 0 && close_to(c, ref, M * N, 1e-4f), local ? "matmul tiled, local tile" : "matmul tiled parallel/vectorize/unroll");
  free(a), free(b), free(c), free(ref);
}

/* Padding guard: P[h] = h >= 1 && h <= H ? X[h - 1] : 0, with h vectorized: the select
 * guards a load, so the body falls back to a scalar loop and never reads outside X. */
static void test_guarded_select(void) {
  int H = 13;
  IrVar *h = ir_newvar("h", DT_I64);
  Buffer *x = buf1("X", DT_F32, ir_int(H), BUF_INPUT), *p = buf1("P", DT_F32, ir_int(H + 2), BUF_OUTPUT);
  Expr *cond = ir_bin(OP_AND, ir_bin(OP_GE, V(h), ir_int(1)), ir_bin(OP_LE, V(h), ir_int(H)));
  Stmt *body = loop(h, H + 2, FOR_VECTORIZE, st1(p, V(h), ir_select(cond, ld1(x, ir_sub(V(h), ir_int(1))), ir_float(DT_F32, 0))));
  Buffer *ps[2] = {x, p};
  float *xs = randf(H, 5), out[15], ref[15];
  for (int k = 0; k < H + 2; k++) ref[k] = k >= 1 && k <= H ? xs[k - 1] : 0;
  void *args[2] = {xs, out};
  check(run(func("pad", ps, 2, 1, NULL, 0, body), args, NULL) == 0 && close_to(out, ref, H + 2, 0), "guarded select under vectorize");
  free(xs);
}

/* Vectorizing a reduction axis must not change the result: s[0] += A[k], k vectorized. */
static void test_vector_reduction_fallback(void) {
  IrVar *k = ir_newvar("k", DT_I64);
  Buffer *a = buf1("A", DT_F32, ir_int(16), BUF_INPUT), *s = buf1("S", DT_F32, ir_int(1), BUF_OUTPUT);
  Stmt *body = ir_seq2(st1(s, ir_int(0), ir_float(DT_F32, 0)),
                       loop(k, 16, FOR_VECTORIZE, st1(s, ir_int(0), ir_add(ld1(s, ir_int(0)), ld1(a, V(k))))));
  Buffer *ps[2] = {a, s};
  float *as = randf(16, 6), out = -1, ref = 0;
  for (int q = 0; q < 16; q++) ref += as[q];
  void *args[2] = {as, &out};
  check(run(func("rsum", ps, 2, 1, NULL, 0, body), args, NULL) == 0 && fabsf(out - ref) < 1e-5f, "vectorized reduction axis stays serial");
  free(as);
}

/* Strided (gather) and broadcast (uniform) accesses in a vector body, math calls. */
static void test_vector_access_kinds(void) {
  IrVar *i = ir_newvar("i", DT_I64);
  Buffer *a = buf1("A", DT_F32, ir_int(32), BUF_INPUT), *o = buf1("O", DT_F32, ir_int(16), BUF_OUTPUT);
  Expr *g = ld1(a, ir_mul(V(i), ir_int(2)));  /* stride 2 */
  Expr *u = ld1(a, ir_int(3));                   /* uniform */
  Expr *e1[1] = {g}, *e2[1] = {u};
  Expr *v = ir_add(ir_call(FN_TANH, e1, 1, DT_F32), ir_call(FN_EXP, e2, 1, DT_F32));
  Expr *e3[1] = {ld1(a, V(i))};
  v = ir_add(v, ir_call(FN_SIGMOID, e3, 1, DT_F32));
  Stmt *body = loop(i, 16, FOR_VECTORIZE, st1(o, V(i), v));
  Buffer *ps[2] = {a, o};
  float *as = randf(32, 7), out[16], ref[16];
  for (int q = 0; q < 16; q++) ref[q] = tanhf(as[2 * q]) + expf(as[3]) + 1 / (1 + expf(-as[q]));
  void *args[2] = {as, out};
  check(run(func("access", ps, 2, 1, NULL, 0, body), args, NULL) == 0 && close_to(out, ref, 16, 1e-5f), "gather, broadcast and math in a vector body");
  free(as);
}

/* Floor division and modulo on negative integers, and casts. */
static void test_int_ops(void) {
  IrVar *i = ir_newvar("i", DT_I64);
  Buffer *a = buf1("A", DT_I32, ir_int(8), BUF_INPUT);
  Buffer *q = buf1("Q", DT_I32, ir_int(8), BUF_OUTPUT), *r = buf1("R", DT_I32, ir_int(8), BUF_OUTPUT);
  Buffer *f = buf1("F", DT_F64, ir_int(8), BUF_OUTPUT);
  Expr *x = ld1(a, V(i));
  Stmt *ss[3] = {st1(q, V(i), ir_bin(OP_DIV, x, ir_const(DT_I32, 3))), st1(r, V(i), ir_bin(OP_MOD, x, ir_const(DT_I32, -3))),
                 st1(f, V(i), ir_cast(DT_F64, ir_bin(OP_MAX, x, ir_const(DT_I32, -2))))};
  Stmt *body = loop(i, 8, FOR_VECTORIZE, ir_seq(ss, 3));
  Buffer *ps[4] = {a, q, r, f};
  int32_t as[8] = {-7, -6, -5, -1, 0, 1, 5, 7}, qs[8], rs[8];
  double fs[8];
  bool ok = true;
  void *args[4] = {as, qs, rs, fs};
  ok = run(func("intops", ps, 4, 1, NULL, 0, body), args, NULL) == 0;
  for (int k = 0; ok && k < 8; k++) {
    int fq = (int)floor(as[k] / 3.0), fr = as[k] - (int)floor(as[k] / -3.0) * -3;
    ok = qs[k] == fq && rs[k] == fr && fs[k] == (as[k] > -2 ? as[k] : -2);
    if (!ok) fprintf(stderr, "  %d: %d %d %g\n", as[k], qs[k], rs[k], fs[k]);
  }
  check(ok, "floordiv, floormod, max, cast");
}

/* f16 storage computed in f32; bool buffers. */
static void test_f16_bool(void) {
  IrVar *i = ir_newvar("i", DT_I64);
  Buffer *a = buf1("A", DT_F16, ir_int(8), BUF_INPUT), *o = buf1("O", DT_F16, ir_int(8), BUF_OUTPUT);
  Buffer *m = buf1("M", DT_BOOL, ir_int(8), BUF_OUTPUT);
  Stmt *body = loop(i, 8, FOR_VECTORIZE, ir_seq2(st1(o, V(i), ir_mul(ld1(a, V(i)), ir_float(DT_F16, 2.0))),
                                                 st1(m, V(i), ir_bin(OP_GT, ld1(a, V(i)), ir_float(DT_F16, 0)))));
  Buffer *ps[3] = {a, o, m};
  uint16_t as[8] = {0x3c00, 0xbc00, 0x4000, 0x0000, 0x3800, 0xc200, 0x4400, 0x3555}; /* 1 -1 2 0 .5 -3 4 .333 */
  uint16_t os[8];
  uint8_t ms[8];
  uint16_t want[8] = {0x4000, 0xc000, 0x4400, 0x0000, 0x3c00, 0xc600, 0x4800, 0x3955};
  void *args[3] = {as, os, ms};
  bool ok = run(func("half", ps, 3, 1, NULL, 0, body), args, NULL) == 0;
  for (int k = 0; ok && k < 8; k++) ok = os[k] == want[k] && ms[k] == (k == 0 || k == 2 || k == 4 || k == 6 || k == 7);
  check(ok, "f16 storage and bool buffers");
}

/* Compiled and interpreted results agree bit for bit where the IR defines them and C
 * does not: float -> integer casts of NaN, infinities and out-of-range values (truncate to
 * i64, 0 beyond +-9.2e18 and for NaN, wrap), and f16 rounded after every operation. */
static void test_defined_conversions(void) {
  IrVar *i = ir_newvar("i", DT_I64);
  Buffer *a = buf1("A", DT_F32, ir_int(16), BUF_INPUT), *h = buf1("H", DT_F16, ir_int(16), BUF_INPUT);
  DType to[4] = {DT_U8, DT_I32, DT_U32, DT_I64};
  Buffer *o[4], *hf = buf1("HF", DT_F16, ir_int(16), BUF_OUTPUT);
  Stmt *ss[5];
  for (int k = 0; k < 4; k++) {
    o[k] = buf1(xprintf("O%d", k), to[k], ir_int(16), BUF_OUTPUT);
    ss[k] = st1(o[k], V(i), ir_cast(to[k], ld1(a, V(i))));
  }
  Expr *third = ir_bin(OP_DIV, ld1(h, V(i)), ir_float(DT_F16, 3.0));
  Expr *fl = ir_call(FN_FLOOR, (Expr *[]){ir_mul(third, ir_float(DT_F16, 3.0))}, 1, DT_F16);
  ss[4] = st1(hf, V(i), fl);
  Buffer *ps[7] = {a, h, o[0], o[1], o[2], o[3], hf};
  float as[16] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, -3.7f, 3.7f, 300.5f, -300.5f, 5e9f, -5e9f,
                  9.3e18f, -9.3e18f, 0.0f, -0.0f, 2147483648.0f};
  uint16_t hs[16];
  for (int k = 0; k < 16; k++) hs[k] = (uint16_t)(0x3c00 + k * 0x0155); /* 1, 1.33, ... */
  int64_t got[4][16], ref[4][16];
  uint16_t gh[16], rh[16];
  void *g[7] = {as, hs, got[0], got[1], got[2], got[3], gh}, *r[7] = {as, hs, ref[0], ref[1], ref[2], ref[3], rh};
  LoweredFunc *f = func("convert", ps, 7, 2, NULL, 0, loop(i, 16, FOR_SERIAL, ir_seq(ss, 5)));
  bool ok = run(f, g, NULL) == 0 && interp_run(f, r, NULL) == 0;
  for (int k = 0; ok && k < 4; k++)
    ok = memcmp(got[k], ref[k], (size_t)(16 * dtype_bytes(to[k]))) == 0;
  check(ok, "float -> integer casts out of range: compiled == interpreted");
  check(ok && memcmp(gh, rh, sizeof gh) == 0, "f16 rounded after every operation: compiled == interpreted");
}

/* A global temp with a symbolic size (malloc'ed) used by two loops. */
static void test_alloc_symbolic(void) {
  IrVar *n = ir_newvar("N", DT_I64), *i = ir_newvar("i", DT_I64), *j = ir_newvar("j", DT_I64);
  Buffer *a = buf1("A", DT_F32, V(n), BUF_INPUT), *c = buf1("C", DT_F32, V(n), BUF_OUTPUT);
  Buffer *t = buf1("T", DT_F32, V(n), BUF_TEMP);
  Stmt *s1 = ir_for(i, ir_int(0), V(n), FOR_PARALLEL, st1(t, V(i), ir_mul(ld1(a, V(i)), ld1(a, V(i)))));
  Stmt *s2 = ir_for(j, ir_int(0), V(n), FOR_SERIAL, st1(c, V(j), ir_add(ld1(t, V(j)), ir_float(DT_F32, 1))));
  Buffer *ps[2] = {a, c};
  IrVar **sz = xalloc(sizeof *sz);
  sz[0] = n;
  float *as = randf(5000, 8), *cs = calloc(5000, 4), *ref = calloc(5000, 4);
  for (int q = 0; q < 5000; q++) ref[q] = as[q] * as[q] + 1;
  void *args[2] = {as, cs};
  int64_t size = 5000;
  check(run(func("tmp", ps, 2, 1, sz, 1, ir_alloc(t, ir_seq2(s1, s2))), args, &size) == 0 && close_to(cs, ref, 5000, 0),
        "malloc'ed temp with a symbolic size, parallel producer");
  free(as), free(cs), free(ref);
}

/* An intermediate whose size in bytes overflows 64 bits at the call's sizes fails the call
 * with an error (issue 10: 4 * 65536^4 wrapped to 0 and aligned_alloc got 64 bytes), both
 * as a 4-D shape and as one extent N * N * N * N; N = 1000 still runs. */
static void test_alloc_overflow(void) {
  IrVar *n = ir_newvar("N", DT_I64), *i = ir_newvar("i", DT_I64);
  Expr *nn = ir_mul(ir_mul(V(n), V(n)), ir_mul(V(n), V(n)));
  for (int shape4 = 0; shape4 < 2; shape4++) {
    Buffer *a = buf1("A", DT_F32, V(n), BUF_INPUT), *c = buf1("C", DT_F32, V(n), BUF_OUTPUT);
    Expr *sh[4] = {V(n), V(n), V(n), V(n)}, *z = ir_int(0);
    Buffer *t = shape4 ? ir_buffer("T", DT_F32, 4, sh, SCOPE_GLOBAL, BUF_TEMP) : buf1("T", DT_F32, nn, BUF_TEMP);
    Expr *ti[4] = {V(i), z, z, z};
    Stmt *s1 = ir_for(i, ir_int(0), V(n), FOR_SERIAL, ir_store(t, ti, ld1(a, V(i))));
    Stmt *s2 = ir_for(i, ir_int(0), V(n), FOR_SERIAL, st1(c, V(i), ir_load(t, ti)));
    Buffer *ps[2] = {a, c};
    IrVar **sz = xalloc(sizeof *sz);
    sz[0] = n;
    LoweredFunc *f = func("big", ps, 2, 1, sz, 1, ir_alloc(t, ir_seq2(s1, s2)));
    float *as = randf(65536, 9), *cs = calloc(65536, 4);
    void *args[2] = {as, cs};
    int64_t size = 65536;
    check(run(f, args, &size) != 0 && strstr(rt_last_error(), "overflows 64 bits"),
          shape4 ? "a 4-D intermediate of 4 * 65536^4 bytes fails the call" : "an extent N * N * N * N that overflows fails the call");
    size = 30;
    check(run(f, args, &size) == 0 && cs[29] == as[29], "the same intermediate at N = 30 runs");
    free(as), free(cs);
  }
}

/* Guards (tail of a non-dividing split) inside a vectorized loop: scalar fallback. */
static void test_tail_guard(void) {
  IrVar *o = ir_newvar("o", DT_I64), *l = ir_newvar("l", DT_I64);
  Buffer *a = buf1("A", DT_F32, ir_int(21), BUF_INPUT), *c = buf1("C", DT_F32, ir_int(21), BUF_OUTPUT);
  Expr *idx = ir_add(ir_mul(V(o), ir_int(8)), V(l));
  Stmt *body = loop(o, 3, FOR_PARALLEL, loop(l, 8, FOR_VECTORIZE, ir_if(ir_bin(OP_LT, idx, ir_int(21)), st1(c, idx, ir_un(OP_NEG, ld1(a, idx))), NULL)));
  Buffer *ps[2] = {a, c};
  float *as = randf(21, 9), cs[22], ref[21];
  cs[21] = 42;
  for (int q = 0; q < 21; q++) ref[q] = -as[q];
  void *args[2] = {as, cs};
  check(run(func("tail", ps, 2, 1, NULL, 0, body), args, NULL) == 0 && close_to(cs, ref, 21, 0) && cs[21] == 42, "tail guard under vectorize");
  free(as);
}

/* ------------------------------------------------------------------- emit */

static bool file_has(const char *path, const char *needle) {
  size_t n;
  char *s = read_file(path, &n);
  bool ok = s && (!needle || strstr(s, needle));
  free(s);
  return ok;
}

static void test_emit(void) {
  LoweredFunc *f = make_matmul(32, 32, 32, 4, 8, false);
  char dir[] = "/tmp/texc-test-llvm-XXXXXX";
  if (!mkdtemp(dir)) return;
  const char *ll = xprintf("%s/m.ll", dir), *s = xprintf("%s/m.s", dir), *o = xprintf("%s/m.o", dir);
  const char *h = xprintf("%s/m.h", dir), *so = xprintf("%s/m.so", dir), *arm = xprintf("%s/arm.o", dir);
  check(backend_llvm.emit(&f, 1, "llvm", ll, &opts) && file_has(ll, "define i32 @matmul(ptr noalias"), "emit llvm");
  check(backend_llvm.emit(&f, 1, "asm", s, &opts) && file_has(s, "__texc_packed_matmul"), "emit asm");
  check(backend_llvm.emit(&f, 1, "obj", o, &opts) && file_has(o, NULL), "emit obj");
  check(backend_llvm.emit(&f, 1, "header", h, &opts) && file_has(h, "int matmul(const float *A, const float *B, float *C);"), "emit header");
  Options cross = opts;
  cross.mtriple = "aarch64-linux-gnu";
  check(backend_llvm.emit(&f, 1, "obj", arm, &cross) && file_has(arm, NULL), "emit obj for aarch64-linux-gnu");
  bool built = backend_llvm.emit(&f, 1, "so", so, &opts);
  check(built, "emit so");
  RtModule *m = built ? rt_module_load(so) : NULL;
  RtFunc *fn = m ? rt_module_func(m, "matmul") : NULL;
  check(fn != NULL, "rt_module_load finds the kernel");
  if (fn) {
    float *a = randf(1024, 10), *b = randf(1024, 11), *c = calloc(1024, 4), ref[1024];
    naive_matmul(a, b, ref, 32, 32, 32);
    int64_t sh[2] = {32, 32};
    RtTensor *ta = rt_tensor_alloc((RtDevice){RT_CPU, 0}, 4, 2, sh), *tb = rt_tensor_alloc((RtDevice){RT_CPU, 0}, 4, 2, sh);
    RtTensor *tc = rt_tensor_alloc((RtDevice){RT_CPU, 0}, 4, 2, sh);
    rt_tensor_from_host(ta, a);
    rt_tensor_from_host(tb, b);
    RtTensor *args[3] = {ta, tb, tc};
    bool ok = rt_func_call(fn, args, 3, NULL, 0) == 0 && rt_tensor_to_host(c, tc) == 0;
    check(ok && close_to(c, ref, 1024, 1e-4f), "loaded .so computes matmul");
    RtTiming t;
    check(rt_time(fn, args, 3, NULL, 0, 1, 5, 5, &t) == 0 && t.repeat == 5 && t.min_ms <= t.median_ms && t.number >= 1, "rt_time");
    rt_tensor_free(ta), rt_tensor_free(tb), rt_tensor_free(tc);
    free(a), free(b), free(c);
  }
  rt_module_free(m);
  const char *files[] = {ll, s, o, h, so, arm};
  for (int i = 0; i < 6; i++) unlink(files[i]);
  rmdir(dir);
}

/* vadd over N floats: 64 parallel chunks, 16 lanes inside (vadd.fast of examples/vadd.tex). */
static LoweredFunc *make_vadd(int64_t n) {
  IrVar *o = ir_newvar("o", DT_I64), *b = ir_newvar("ib", DT_I64), *l = ir_newvar("il", DT_I64);
  Buffer *x = buf1("A", DT_F32, ir_int(n), BUF_INPUT), *y = buf1("B", DT_F32, ir_int(n), BUF_INPUT);
  Buffer *z = buf1("C", DT_F32, ir_int(n), BUF_OUTPUT);
  Expr *i = ir_add(ir_mul(ir_add(ir_mul(V(o), ir_int(n / 64 / 16)), V(b)), ir_int(16)), V(l));
  Stmt *body = loop(o, 64, FOR_PARALLEL, loop(b, n / 64 / 16, FOR_SERIAL, loop(l, 16, FOR_VECTORIZE,
                    st1(z, i, ir_add(ld1(x, i), ld1(y, i))))));
  Buffer *ps[3] = {x, y, z};
  return func("vadd", ps, 3, 2, NULL, 0, body);
}

/* TEXC_BENCH_OUT=DIR: write hand-built-IR kernels as .so files and a bench manifest there
 * (what bench/run.sh uses while `texc FILE.tex --emit so` cannot lower schedules yet). */
static int write_bench_kernels(const char *dir) {
  FILE *man = fopen(xprintf("%s/manifest", dir), "w");
  if (!man) return 1;
  static const int sizes[] = {256, 512, 1024, 2048};
  for (int v = 0; v < 2; v++)
    for (int s = 0; s < 4; s++) {
      int n = sizes[s];
      const char *variant = v ? "blocked" : "tiled";
      LoweredFunc *f = v ? make_matmul(n, n, n, 8, 32, true) : make_matmul(n, n, n, 32, 32, false);
      const char *so = xprintf("%s/matmul_%s_%d.so", dir, variant, n);
      if (!backend_llvm.emit(&f, 1, "so", so, &opts)) return 1;
      fprintf(man, "matmul %s-hand %d %d %d %s\n", variant, n, n, n, so);
    }
  LoweredFunc *f = make_vadd(16777216);
  const char *so = xprintf("%s/vadd_fast.so", dir);
  if (!backend_llvm.emit(&f, 1, "so", so, &opts)) return 1;
  fprintf(man, "vadd fast-hand 16777216 %s\n", so);
  fclose(man);
  return 0;
}

int main(void) {
  if (getenv("TEXC_BENCH_OUT")) return write_bench_kernels(getenv("TEXC_BENCH_OUT"));
  test_vadd_symbolic();
  test_matmul(false);
  test_matmul(true);
  test_guarded_select();
  test_vector_reduction_fallback();
  test_vector_access_kinds();
  test_int_ops();
  test_f16_bool();
  test_defined_conversions();
  test_alloc_symbolic();
  test_alloc_overflow();
  test_tail_guard();
  test_emit();
  return failures != 0;
}
