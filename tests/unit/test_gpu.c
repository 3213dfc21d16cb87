/* test_gpu.c — the GPU back ends on hand-built GPU-shaped IR: run on OpenCL (PoCL here)
 * and compared with the interpreter, compiled for CUDA through NVRTC to PTX, and the
 * errors of gpu_check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "texc.h"
#include "texrt.h"

static int failures;

static void check(bool ok, const char *name) {
  printf("%s - %s\n", ok ? "ok" : "not ok", name);
  if (!ok) failures++;
}

/* ------------------------------------------------------------ IR helpers */

static Buffer *buf1(const char *name, int64_t n, Scope sc, BufKind k) {
  Expr *shape[1] = {ir_int(n)};
  return ir_buffer(name, DT_F32, 1, shape, sc, k);
}

static Buffer *buf2(const char *name, int64_t a, int64_t b, Scope sc, BufKind k) {
  Expr *shape[2] = {ir_int(a), ir_int(b)};
  return ir_buffer(name, DT_F32, 2, shape, sc, k);
}

static Expr *ld1(Buffer *b, Expr *i) { return ir_load(b, (Expr *[]){i}); }
static Expr *ld2(Buffer *b, Expr *i, Expr *j) { return ir_load(b, (Expr *[]){i, j}); }
static Stmt *st1(Buffer *b, Expr *i, Expr *v) { return ir_store(b, (Expr *[]){i}, v); }
static Stmt *st2(Buffer *b, Expr *i, Expr *j, Expr *v) { return ir_store(b, (Expr *[]){i, j}, v); }
static Expr *V(IrVar *v) { return ir_var(v); }
static Stmt *loop(IrVar *v, int64_t n, ForKind k, Stmt *body) { return ir_for(v, ir_int(0), ir_int(n), k, body); }

static LoweredFunc *func(const char *name, Buffer **params, int np, int nin, Stmt *body) {
  LoweredFunc *f = xalloc(sizeof *f);
  f->name = name;
  f->params = xalloc(sizeof(Buffer *) * (size_t)np);
  memcpy(f->params, params, sizeof(Buffer *) * (size_t)np);
  f->nparams = np;
  f->ninputs = nin;
  f->body = body;
  f->target = TARGET_OPENCL;
  return f;
}

/* C[i] = A[i] + B[i], N = 1000: blocks of 64 threads and a guarded tail. */
static LoweredFunc *vadd(void) {
  Buffer *A = buf1("A", 1000, SCOPE_GLOBAL, BUF_INPUT), *B = buf1("B", 1000, SCOPE_GLOBAL, BUF_INPUT);
  Buffer *C = buf1("C", 1000, SCOPE_GLOBAL, BUF_OUTPUT);
  IrVar *bx = ir_newvar("bx", DT_I64), *tx = ir_newvar("tx", DT_I64);
  Expr *i = ir_add(ir_mul(V(bx), ir_int(64)), V(tx));
  Stmt *s = st1(C, i, ir_bin(OP_ADD, ld1(A, i), ld1(B, i)));
  s = ir_if(ir_bin(OP_LT, i, ir_int(1000)), s, NULL);
  s = loop(bx, 16, FOR_BLOCK_X, loop(tx, 64, FOR_THREAD_X, s));
  return func("vadd", (Buffer *[]){A, B, C}, 3, 2, s);
}

/* C = A x B, 64^3, 16x16 tiles cached in shared memory: sibling thread loops (fetch A,
 * fetch B, compute) under a serial loop, which need barriers between and across. */
static LoweredFunc *matmul_shared(int n) {
  Buffer *A = buf2("A", n, n, SCOPE_GLOBAL, BUF_INPUT), *B = buf2("B", n, n, SCOPE_GLOBAL, BUF_INPUT);
  Buffer *C = buf2("C", n, n, SCOPE_GLOBAL, BUF_OUTPUT);
  Buffer *AS = buf2("AS", 16, 16, SCOPE_SHARED, BUF_TEMP), *BS = buf2("BS", 16, 16, SCOPE_SHARED, BUF_TEMP);
  IrVar *by = ir_newvar("by", DT_I64), *bx = ir_newvar("bx", DT_I64), *ko = ir_newvar("ko", DT_I64);
  IrVar *t[8], *ki = ir_newvar("ki", DT_I64);
  for (int k = 0; k < 8; k++) t[k] = ir_newvar(k % 2 ? "tx" : "ty", DT_I64);
  Expr *row = ir_add(ir_mul(V(by), ir_int(16)), V(t[0])), *col = ir_add(ir_mul(V(bx), ir_int(16)), V(t[1]));
  Stmt *init = loop(t[0], 16, FOR_THREAD_Y, loop(t[1], 16, FOR_THREAD_X, st2(C, row, col, ir_float(DT_F32, 0))));
  Stmt *fa = loop(t[2], 16, FOR_THREAD_Y, loop(t[3], 16, FOR_THREAD_X,
      st2(AS, V(t[2]), V(t[3]), ld2(A, ir_add(ir_mul(V(by), ir_int(16)), V(t[2])), ir_add(ir_mul(V(ko), ir_int(16)), V(t[3]))))));
  Stmt *fb = loop(t[4], 16, FOR_THREAD_Y, loop(t[5], 16, FOR_THREAD_X,
      st2(BS, V(t[4]), V(t[5]), ld2(B, ir_add(ir_mul(V(ko), ir_int(16)), V(t[4])), ir_add(ir_mul(V(bx), ir_int(16)), V(t[5]))))));
  Expr *r2 = ir_add(ir_mul(V(by), ir_int(16)), V(t[6])), *c2 = ir_add(ir_mul(V(bx), ir_int(16)), V(t[7]));
  Stmt *upd = st2(C, r2, c2, ir_bin(OP_ADD, ld2(C, r2, c2), ir_bin(OP_MUL, ld2(AS, V(t[6]), V(ki)), ld2(BS, V(ki), V(t[7])))));
  Stmt *comp = loop(t[6], 16, FOR_THREAD_Y, loop(t[7], 16, FOR_THREAD_X, loop(ki, 16, FOR_UNROLL, upd)));
  Stmt *kl = loop(ko, n / 16, FOR_SERIAL, ir_seq((Stmt *[]){fa, fb, comp}, 3));
  Stmt *body = ir_alloc(AS, ir_alloc(BS, ir_seq2(init, kl)));
  Stmt *s = loop(by, n / 16, FOR_BLOCK_Y, loop(bx, n / 16, FOR_BLOCK_X, body));
  return func("matmul", (Buffer *[]){A, B, C}, 3, 2, s);
}

/* out[i] = in[i] + in[i+1] + in[i+2]: a 66-element halo fetched by 33 threads (guarded,
 * the block has 64), then the compute. */
static LoweredFunc *blur(void) {
  Buffer *In = buf1("In", 258, SCOPE_GLOBAL, BUF_INPUT), *Out = buf1("Out", 256, SCOPE_GLOBAL, BUF_OUTPUT);
  Buffer *S = buf1("S", 66, SCOPE_SHARED, BUF_TEMP);
  IrVar *bx = ir_newvar("bx", DT_I64), *t = ir_newvar("t", DT_I64), *r = ir_newvar("r", DT_I64);
  IrVar *tx = ir_newvar("tx", DT_I64);
  Expr *si = ir_add(ir_mul(V(t), ir_int(2)), V(r));
  Stmt *fetch = loop(t, 33, FOR_THREAD_X, loop(r, 2, FOR_SERIAL,
      st1(S, si, ld1(In, ir_add(ir_mul(V(bx), ir_int(64)), si)))));
  Expr *sum = ir_bin(OP_ADD, ir_bin(OP_ADD, ld1(S, V(tx)), ld1(S, ir_add(V(tx), ir_int(1)))), ld1(S, ir_add(V(tx), ir_int(2))));
  Stmt *comp = loop(tx, 64, FOR_THREAD_X, st1(Out, ir_add(ir_mul(V(bx), ir_int(64)), V(tx)), sum));
  Stmt *s = loop(bx, 4, FOR_BLOCK_X, ir_alloc(S, ir_seq2(fetch, comp)));
  return func("blur", (Buffer *[]){In, Out}, 2, 1, s);
}

/* T = exp(A) in a global temp, then C[i] = T[i] * 2 + max(T[i], 0.5): two launches. */
static LoweredFunc *two_launches(void) {
  Buffer *A = buf1("A", 300, SCOPE_GLOBAL, BUF_INPUT), *C = buf1("C", 300, SCOPE_GLOBAL, BUF_OUTPUT);
  Buffer *T = buf1("T", 300, SCOPE_GLOBAL, BUF_TEMP);
  IrVar *b1 = ir_newvar("bx", DT_I64), *t1 = ir_newvar("tx", DT_I64);
  IrVar *b2 = ir_newvar("bx", DT_I64), *t2 = ir_newvar("tx", DT_I64);
  Expr *i1 = ir_add(ir_mul(V(b1), ir_int(100)), V(t1)), *i2 = ir_add(ir_mul(V(b2), ir_int(100)), V(t2));
  Stmt *k1 = loop(b1, 3, FOR_BLOCK_X, loop(t1, 100, FOR_THREAD_X,
      st1(T, i1, ir_call(FN_EXP, (Expr *[]){ld1(A, i1)}, 1, DT_F32))));
  Expr *v = ir_bin(OP_ADD, ir_bin(OP_MUL, ld1(T, i2), ir_float(DT_F32, 2)), ir_bin(OP_MAX, ld1(T, i2), ir_float(DT_F32, 0.5)));
  Stmt *k2 = loop(b2, 3, FOR_BLOCK_X, loop(t2, 100, FOR_THREAD_X, st1(C, i2, v)));
  return func("twol", (Buffer *[]){A, C}, 2, 1, ir_alloc(T, ir_seq2(k1, k2)));
}

/* C[i] = A[i] * 3 with a symbolic N: the grid is (N + 63) / 64, a size argument. */
static LoweredFunc *symbolic(void) {
  IrVar *N = ir_newvar("N", DT_I64);
  Expr *shape[1] = {V(N)};
  Buffer *A = ir_buffer("A", DT_F32, 1, shape, SCOPE_GLOBAL, BUF_INPUT);
  Buffer *C = ir_buffer("C", DT_F32, 1, shape, SCOPE_GLOBAL, BUF_OUTPUT);
  IrVar *bx = ir_newvar("bx", DT_I64), *tx = ir_newvar("tx", DT_I64);
  Expr *i = ir_add(ir_mul(V(bx), ir_int(64)), V(tx));
  Stmt *s = ir_if(ir_bin(OP_LT, i, V(N)), st1(C, i, ir_bin(OP_MUL, ld1(A, i), ir_float(DT_F32, 3))), NULL);
  Expr *grid = ir_floordiv(ir_add(V(N), ir_int(63)), ir_int(64));
  s = ir_for(bx, ir_int(0), grid, FOR_BLOCK_X, loop(tx, 64, FOR_THREAD_X, s));
  LoweredFunc *f = func("scale", (Buffer *[]){A, C}, 2, 1, s);
  f->sizes = xalloc(sizeof(IrVar *));
  f->sizes[0] = N;
  f->nsizes = 1;
  return f;
}

/* ------------------------------------------------------------ running */

static int64_t numel(const LoweredFunc *f, int i, const int64_t *sizes) {
  return ir_buffer_numel(f->params[i], f, sizes);
}

/* Run F on OpenCL and with the interpreter on the same random inputs; true when every
 * output matches within 1e-4 relative. */
static bool run_opencl(LoweredFunc *f, const int64_t *sizes, bool *ran) {
  *ran = false;
  RtGpuFunc *plans;
  char *src = cg_gpu_source(&f, 1, TARGET_OPENCL, &plans);
  if (!src) return false;
  RtModule *m = rt_opencl_module(src, NULL, plans, 1);
  if (!m) {
    printf("# %s\n", rt_last_error());
    return false;
  }
  RtFunc *fn = rt_module_func(m, f->name);
  void *host[8], *ref[8];
  RtTensor *t[8];
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = numel(f, i, sizes);
    host[i] = calloc((size_t)n, 4);
    ref[i] = calloc((size_t)n, 4);
    fill_random(host[i], DT_F32, n, 7 + (uint64_t)i);
    memcpy(ref[i], host[i], (size_t)n * 4);
    t[i] = rt_tensor_alloc(fn->device, 4, 1, &n);
    rt_tensor_from_host(t[i], host[i]);
  }
  int rc = rt_func_call(fn, t, f->nparams, sizes, f->nsizes);
  if (rc) printf("# %s\n", rt_last_error());
  bool ok = rc == 0;
  int irc = interp_run(f, ref, sizes);
  *ran = irc == 0;
  for (int i = f->ninputs; ok && i < f->nparams; i++) {
    rt_tensor_to_host(host[i], t[i]);
    int64_t n = numel(f, i, sizes);
    for (int64_t j = 0; j < n && ok && irc == 0; j++) {
      float a = ((float *)host[i])[j], b = ((float *)ref[i])[j];
      if (fabsf(a - b) > 1e-4f * (1 + fabsf(b))) {
        printf("# %s[%lld]: got %g, interpreter %g\n", f->params[i]->name, (long long)j, a, b);
        ok = false;
      }
    }
  }
  for (int i = 0; i < f->nparams; i++) {
    rt_tensor_free(t[i]);
    free(host[i]);
    free(ref[i]);
  }
  rt_module_free(m);
  return ok;
}

static void test_opencl(const char *name, LoweredFunc *f, const int64_t *sizes) {
  bool ran;
  bool ok = run_opencl(f, sizes, &ran);
  check(ok, xprintf("opencl %s matches the interpreter%s", name, ran ? "" : " (interpreter missing)"));
}

static void test_ptx(const char *name, LoweredFunc *f) {
  char *src = cg_gpu_source(&f, 1, TARGET_CUDA, NULL);
  char *ptx = src ? cg_nvrtc_compile(src, "compute_90") : NULL;
  check(ptx && strstr(ptx, ".entry"), xprintf("cuda %s compiles to PTX", name));
  free(ptx);
}

/* The source must contain NEEDLE (barrier placement and guards). */
static void test_source(const char *name, LoweredFunc *f, Target t, const char *needle, int count) {
  char *src = cg_gpu_source(&f, 1, t, NULL);
  int n = 0;
  for (const char *p = src; p && (p = strstr(p, needle)); p++) n++;
  check(n == count, xprintf("%s source has %d x '%s' (found %d)", name, count, needle, n));
  if ((n != count || getenv("TEST_GPU_DUMP")) && src) printf("%s", src);
}

static void test_checks(void) {
  diag_silent = true;
  GpuLimits lim = gpu_default_limits;
  /* an unbound store */
  Buffer *C = buf1("C", 10, SCOPE_GLOBAL, BUF_OUTPUT);
  IrVar *i = ir_newvar("i", DT_I64);
  LoweredFunc *f = func("u", (Buffer *[]){C}, 1, 0, loop(i, 10, FOR_SERIAL, st1(C, V(i), ir_float(DT_F32, 1))));
  diag_reset();
  check(!gpu_check(f, &lim) && strstr(diag_last(), "stage C is not bound to blockIdx"),
        "gpu_check: unbound stage");
  /* 32 x 64 threads */
  IrVar *b = ir_newvar("b", DT_I64), *ty = ir_newvar("ty", DT_I64), *tx = ir_newvar("tx", DT_I64);
  Buffer *D = buf2("D", 32, 64, SCOPE_GLOBAL, BUF_OUTPUT);
  Stmt *s = loop(b, 1, FOR_BLOCK_X, loop(ty, 32, FOR_THREAD_Y, loop(tx, 64, FOR_THREAD_X, st2(D, V(ty), V(tx), ir_float(DT_F32, 0)))));
  s->body->body->loc = (Loc){"x.tex", 3, 5};
  f = func("t", (Buffer *[]){D}, 1, 0, s);
  diag_reset();
  check(!gpu_check(f, &lim) && strstr(diag_last(), "x.tex:3:5") && strstr(diag_last(), "2048 threads per block"),
        "gpu_check: too many threads, at the binding step");
  /* 64 KiB of shared memory */
  Buffer *S = buf2("S", 128, 128, SCOPE_SHARED, BUF_TEMP);
  IrVar *b2 = ir_newvar("b", DT_I64), *t2 = ir_newvar("t", DT_I64);
  Buffer *E = buf1("E", 128, SCOPE_GLOBAL, BUF_OUTPUT);
  s = loop(b2, 1, FOR_BLOCK_X, ir_alloc(S, loop(t2, 128, FOR_THREAD_X, ir_seq2(st2(S, V(t2), ir_int(0), ir_float(DT_F32, 0)),
                                                                                 st1(E, V(t2), ld2(S, V(t2), ir_int(0)))))));
  f = func("sh", (Buffer *[]){E}, 1, 0, s);
  diag_reset();
  check(!gpu_check(f, &lim) && strstr(diag_last(), "65536 bytes of shared memory"), "gpu_check: shared memory limit");
  check(gpu_check(matmul_shared(64), &lim), "gpu_check: shared-memory matmul passes");
  diag_reset();
  diag_silent = false;
}

int main(void) {
  int64_t n77 = 777;
  test_source("vadd", vadd(), TARGET_OPENCL, "barrier(", 0);
  test_source("matmul", matmul_shared(64), TARGET_OPENCL, "barrier(", 2);
  test_source("matmul", matmul_shared(64), TARGET_CUDA, "__syncthreads();", 2);
  test_source("blur", blur(), TARGET_OPENCL, "if ((int)get_local_id(0) < 33)", 1);
  test_opencl("vadd", vadd(), NULL);
  test_opencl("matmul (shared, barriers)", matmul_shared(64), NULL);
  test_opencl("blur (guarded halo fetch)", blur(), NULL);
  test_opencl("two launches with a global temp", two_launches(), NULL);
  test_opencl("symbolic size", symbolic(), &n77);
  test_ptx("vadd", vadd());
  test_ptx("matmul", matmul_shared(64));
  test_ptx("symbolic", symbolic());
  test_checks();
  return failures != 0;
}
