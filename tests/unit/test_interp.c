/* test_interp.c — the reference interpreter on hand-built IR: a matmul nest (checked
 * exactly against C in f32), a guarded split, symbolic sizes, allocations, out-of-bounds
 * reads and writes that must be reported, every dtype, and the interpreter's speed. */
#include "texc.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static Buffer *buf(const char *name, DType t, Expr *d0, Expr *d1, BufKind k) {
  Expr *shape[2] = {d0, d1};
  return ir_buffer(name, t, d1 ? 2 : 1, shape, SCOPE_GLOBAL, k);
}
static Expr *ld2(Buffer *b, Expr *i, Expr *j) { return ir_load(b, (Expr *[]){i, j}); }
static Expr *ld1(Buffer *b, Expr *i) { return ir_load(b, (Expr *[]){i}); }
static Stmt *st2(Buffer *b, Expr *i, Expr *j, Expr *x) { return ir_store(b, (Expr *[]){i, j}, x); }
static Stmt *st1(Buffer *b, Expr *i, Expr *x) { return ir_store(b, (Expr *[]){i}, x); }
static Stmt *loop(IrVar *x, int64_t n, Stmt *body) { return ir_for(x, c(0), c(n), FOR_SERIAL, body); }

static LoweredFunc *func(const char *name, Buffer **params, int n, int ninputs, Stmt *body) {
  LoweredFunc *f = xalloc(sizeof *f);
  f->name = name;
  f->params = params;
  f->nparams = n;
  f->ninputs = ninputs;
  f->body = body;
  return f;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* C[i, j] = sum_k A[i, k] * B[k, j]; VARIANT 1 makes the update defeat the muladd
 * pattern (C + A*B*1) so that the general fast path is measured too. */
static LoweredFunc *matmul(int64_t n, int variant) {
  IrVar *i = ir_newvar("i", DT_I64), *j = ir_newvar("j", DT_I64), *k = ir_newvar("k", DT_I64);
  Buffer *A = buf("A", DT_F32, c(n), c(n), BUF_INPUT), *B = buf("B", DT_F32, c(n), c(n), BUF_INPUT);
  Buffer *C = buf("C", DT_F32, c(n), c(n), BUF_OUTPUT);
  Expr *prod = bin(OP_MUL, ld2(A, v(i), v(k)), ld2(B, v(k), v(j)));
  if (variant) prod = bin(OP_MUL, prod, ir_float(DT_F32, 1));
  Stmt *upd = st2(C, v(i), v(j), bin(OP_ADD, ld2(C, v(i), v(j)), prod));
  Stmt *body = ir_seq2(st2(C, v(i), v(j), ir_float(DT_F32, 0)), loop(k, n, upd));
  Buffer **p = xalloc(3 * sizeof *p);
  p[0] = A, p[1] = B, p[2] = C;
  return func("matmul", p, 3, 2, loop(i, n, loop(j, n, body)));
}

static void test_matmul(void) {
  int n = 48;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n);
  float *out = malloc(sizeof(float) * n * n), *want = malloc(sizeof(float) * n * n);
  fill_random(a, DT_F32, n * n, 1);
  fill_random(b, DT_F32, n * n, 2);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0;
      for (int k = 0; k < n; k++) {
        float p = a[i * n + k] * b[k * n + j];
        s = s + p;
      }
      want[i * n + j] = s;
    }
  for (int variant = 0; variant < 2; variant++) {
    LoweredFunc *f = matmul(n, variant);
    memset(out, 0xff, sizeof(float) * n * n);
    int rc = interp_run(f, (void *[]){a, b, out}, NULL);
    check(variant ? "matmul (general path) is exact" : "matmul (muladd path) is exact",
          rc == 0 && memcmp(out, want, sizeof(float) * n * n) == 0);
  }
  check("matmul verifies", ir_verify(matmul(n, 0)));
  free(a), free(b), free(out), free(want);
}

/* B[io*32 + ii] = A[io*32 + ii] * 2 over 100 elements, split by 32 with a guard. */
static void test_guarded_split(void) {
  IrVar *io = ir_newvar("io", DT_I64), *ii = ir_newvar("ii", DT_I64);
  Buffer *A = buf("A", DT_F32, c(100), NULL, BUF_INPUT), *B = buf("B", DT_F32, c(100), NULL, BUF_OUTPUT);
  Expr *x = bin(OP_ADD, bin(OP_MUL, v(io), c(32)), v(ii));
  Stmt *s = st1(B, x, bin(OP_MUL, ld1(A, x), ir_float(DT_F32, 2)));
  Stmt *body = loop(io, 4, loop(ii, 32, ir_if(bin(OP_LT, x, c(100)), s, NULL)));
  Buffer *p[2] = {A, B};
  float a[100], b[100];
  for (int i = 0; i < 100; i++) a[i] = (float)i;
  int rc = interp_run(func("split", p, 2, 1, body), (void *[]){a, b}, NULL);
  bool ok = rc == 0;
  for (int i = 0; i < 100; i++) ok = ok && b[i] == 2.0f * (float)i;
  check("guarded split", ok);
  /* without the guard the 101st element is out of bounds, reported as such */
  Stmt *bad = loop(io, 4, loop(ii, 32, s));
  fprintf(stderr, "# expected error follows:\n");
  rc = interp_run(func("split", p, 2, 1, bad), (void *[]){a, b}, NULL);
  check("unguarded split reports out-of-bounds", rc != 0);
}

static void test_oob(void) {
  IrVar *i = ir_newvar("i", DT_I64), *j = ir_newvar("j", DT_I64);
  Buffer *A = buf("A", DT_F32, c(4), c(4), BUF_INPUT), *B = buf("B", DT_F32, c(4), c(4), BUF_OUTPUT);
  Buffer *p[2] = {A, B};
  float a[16] = {0}, b[20];
  b[16] = 12345.0f;
  /* reads A[i, j + 1]: stays inside the flat buffer but leaves a row: must be reported */
  Stmt *s = loop(i, 4, loop(j, 4, st2(B, v(i), v(j), ld2(A, v(i), bin(OP_ADD, v(j), c(1))))));
  fprintf(stderr, "# expected errors follow:\n");
  check("row overrun is reported", interp_run(func("oob", p, 2, 1, s), (void *[]){a, b}, NULL) != 0);
  /* the same, lowered to the end: the flat offset (i*4 + j + 1) is mostly in range, but
   * the interpreter runs the multi-dimensional body and still reports it */
  LoweredFunc *flat = func("oob", p, 2, 1, s);
  flat->flat = ir_flatten(s);
  check("row overrun is reported when the function is flattened",
        ir_verify(flat) && interp_run(flat, (void *[]){a, b}, NULL) != 0);
  /* writes B[i + 1, j]: must stop before touching memory past B */
  Stmt *w = loop(i, 4, loop(j, 4, st2(B, bin(OP_ADD, v(i), c(1)), v(j), ir_float(DT_F32, 1))));
  int rc = interp_run(func("oob", p, 2, 1, w), (void *[]){a, b}, NULL);
  check("write past the end is reported and not done", rc != 0 && b[16] == 12345.0f);
  /* a non-affine index (i*i) goes through the checked path */
  Stmt *q = loop(i, 4, st2(B, bin(OP_MUL, v(i), v(i)), c(0), ir_float(DT_F32, 1)));
  check("non-affine index is checked", interp_run(func("oob", p, 2, 1, q), (void *[]){a, b}, NULL) != 0);
  /* a select arm that would be out of bounds is not evaluated when not taken */
  Expr *pad = ir_select(bin(OP_GE, v(j), c(1)), ld2(A, v(i), bin(OP_SUB, v(j), c(1))), ir_float(DT_F32, 0));
  Stmt *ok = loop(i, 4, loop(j, 4, st2(B, v(i), v(j), pad)));
  check("select arms are lazy", interp_run(func("pad", p, 2, 1, ok), (void *[]){a, b}, NULL) == 0);
}

/* Symbolic size N, an allocation (zero-filled), and floor division of negatives. */
static void test_sizes_alloc(void) {
  IrVar *n = ir_newvar("N", DT_I64), *i = ir_newvar("i", DT_I64);
  Buffer *A = buf("A", DT_I32, v(n), NULL, BUF_INPUT), *B = buf("B", DT_I32, v(n), NULL, BUF_OUTPUT);
  Buffer *T = ir_buffer("T", DT_I32, 1, (Expr *[]){v(n)}, SCOPE_LOCAL, BUF_TEMP);
  Expr *ai = ld1(A, v(i));
  Stmt *fill = ir_for(i, c(0), v(n), FOR_SERIAL,
                      st1(T, v(i), bin(OP_ADD, ld1(T, v(i)), bin(OP_DIV, ai, ir_const(DT_I32, 2)))));
  Stmt *out = ir_for(i, c(0), v(n), FOR_PARALLEL,
                     st1(B, v(i), bin(OP_ADD, ld1(T, v(i)), bin(OP_MOD, ai, ir_const(DT_I32, 3)))));
  Buffer *p[2] = {A, B};
  LoweredFunc *f = func("sym", p, 2, 1, ir_alloc(T, ir_seq2(fill, out)));
  f->sizes = (IrVar *[]){n};
  f->nsizes = 1;
  int32_t a[37], b[37];
  for (int k = 0; k < 37; k++) a[k] = k - 18;
  int rc = interp_run(f, (void *[]){a, b}, (int64_t[]){37});
  bool ok = rc == 0;
  for (int k = 0; k < 37; k++) {
    int32_t x = a[k], q = x / 2 - (x % 2 != 0 && x < 0), m = ((x % 3) + 3) % 3;
    ok = ok && b[k] == q + m;
  }
  check("symbolic size, alloc, floor div/mod", ok);
  check("symbolic function verifies", ir_verify(f));
}

/* O[i] = A[i] OP B[i] for one dtype; results checked against WANT. */
static bool run_binop(DType t, BinOp op, const void *a, const void *b, void *o, int n) {
  IrVar *i = ir_newvar("i", DT_I64);
  Buffer *A = buf("A", t, c(n), NULL, BUF_INPUT), *B = buf("B", t, c(n), NULL, BUF_INPUT);
  Buffer *O = buf("O", op >= OP_EQ && op <= OP_OR ? DT_BOOL : t, c(n), NULL, BUF_OUTPUT);
  Stmt *s = loop(i, n, st1(O, v(i), bin(op, ld1(A, v(i)), ld1(B, v(i)))));
  Buffer *p[3] = {A, B, O};
  return interp_run(func("dt", p, 3, 2, s), (void *[]){(void *)a, (void *)b, o}, NULL) == 0;
}

static void test_dtypes(void) {
  int8_t a8[3] = {100, -128, -7}, b8[3] = {100, -1, 2}, o8[3];
  check("i8 wraps", run_binop(DT_I8, OP_ADD, a8, b8, o8, 3) && o8[0] == -56 && o8[1] == 127 && o8[2] == -5);
  check("i8 floor div", run_binop(DT_I8, OP_DIV, a8, b8, o8, 3) && o8[2] == -4 && o8[1] == -128);
  uint8_t ua[2] = {1, 200}, ub[2] = {2, 100}, uo[2];
  check("u8 wraps", run_binop(DT_U8, OP_SUB, ua, ub, uo, 2) && uo[0] == 255 && uo[1] == 100);
  int16_t a16[2] = {300, -7}, b16[2] = {300, 3}, o16[2];
  check("i16 mul wraps, mod floors", run_binop(DT_I16, OP_MUL, a16, b16, o16, 2) && o16[0] == (int16_t)90000 &&
                                         run_binop(DT_I16, OP_MOD, a16, b16, o16, 2) && o16[1] == 2);
  int32_t a32[2] = {INT32_MAX, -9}, b32[2] = {1, 4}, o32[2];
  check("i32 wraps", run_binop(DT_I32, OP_ADD, a32, b32, o32, 2) && o32[0] == INT32_MIN && o32[1] == -5);
  uint32_t u32a[2] = {4000000000u, 7}, u32b[2] = {2, 2}, u32o[2];
  check("u32 divides unsigned", run_binop(DT_U32, OP_DIV, u32a, u32b, u32o, 2) && u32o[0] == 2000000000u && u32o[1] == 3);
  int64_t a64[2] = {-7, 1LL << 40}, b64[2] = {2, 3}, o64[2];
  check("i64 floor div", run_binop(DT_I64, OP_DIV, a64, b64, o64, 2) && o64[0] == -4 && o64[1] == (1LL << 40) / 3);
  int64_t z64a[4] = {7, -7, INT64_MIN, INT64_MIN}, z64b[4] = {0, 0, -1, 0}, z64o[4];
  check("i64 division is total: x / 0 == 0, INT_MIN / -1 == INT_MIN",
        run_binop(DT_I64, OP_DIV, z64a, z64b, z64o, 4) && z64o[0] == 0 && z64o[1] == 0 && z64o[2] == INT64_MIN &&
            z64o[3] == 0 && run_binop(DT_I64, OP_MOD, z64a, z64b, z64o, 4) && !z64o[0] && !z64o[1] && !z64o[2] && !z64o[3]);
  uint32_t zu[2] = {5, 0}, zuo[2];
  check("u32 x / 0 == x % 0 == 0", run_binop(DT_U32, OP_DIV, zu, (uint32_t[]){0, 0}, zuo, 2) && !zuo[0] && !zuo[1] &&
                                       run_binop(DT_U32, OP_MOD, zu, (uint32_t[]){0, 0}, zuo, 2) && !zuo[0]);
  uint8_t ba[4] = {0, 0, 1, 1}, bb[4] = {0, 1, 0, 1}, bo[4];
  check("bool and", run_binop(DT_BOOL, OP_AND, ba, bb, bo, 4) && !bo[0] && !bo[1] && !bo[2] && bo[3]);
  float fa[2] = {0.1f, 16777216.0f}, fb[2] = {0.2f, 1.0f}, fo[2];
  check("f32 adds in f32", run_binop(DT_F32, OP_ADD, fa, fb, fo, 2) && fo[0] == 0.1f + 0.2f && fo[1] == 16777216.0f);
  double da[1] = {16777216.0}, db[1] = {1.0}, dd[1];
  check("f64 adds in f64", run_binop(DT_F64, OP_ADD, da, db, dd, 1) && dd[0] == 16777217.0);
  uint16_t ha[3] = {0x3c00, 0x7bff, 0x0001}, hb[3] = {0x3c00, 0x7bff, 0x0001}, ho[3]; /* 1, 65504, 2^-24 */
  check("f16 adds and rounds to half", run_binop(DT_F16, OP_ADD, ha, hb, ho, 3) && ho[0] == 0x4000 &&
                                            ho[1] == 0x7c00 && ho[2] == 0x0002);
  uint16_t h1[1] = {0x3c00}, h2[1] = {0x1000}, h3[1]; /* 1 + 2^-11: a tie, rounds to even 1 */
  check("f16 ties round to even", run_binop(DT_F16, OP_ADD, h1, h2, h3, 1) && h3[0] == 0x3c00);
  float ca[2] = {1.0f, 2.0f}, cb[2] = {2.0f, 2.0f};
  uint8_t co[2];
  check("f32 compare to bool", run_binop(DT_F32, OP_LT, ca, cb, co, 2) && co[0] == 1 && co[1] == 0);
}

/* The default schedule of an N^3 matmul: inner-loop iterations per second. */
static void speed(void) {
  int n = 512;
  float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n), *o = malloc(sizeof(float) * n * n);
  fill_random(a, DT_F32, (int64_t)n * n, 1);
  fill_random(b, DT_F32, (int64_t)n * n, 2);
  for (int variant = 0; variant < 2; variant++) {
    int m = variant ? 256 : n;
    LoweredFunc *f = matmul(m, variant);
    double t0 = now();
    int rc = interp_run(f, (void *[]){a, b, o}, NULL);
    double dt = now() - t0, iters = (double)m * m * m;
    printf("# interp %s %d^3 matmul: %.3f s, %.0f M inner iterations/s\n",
           variant ? "general path" : "muladd path", m, dt, iters / dt * 1e-6);
    /* Speed is reported, never asserted (a benchmark, not a test): the aim is >= 100M/s. */
    check(variant ? "general path matmul runs" : "muladd path matmul runs", rc == 0);
  }
  free(a), free(b), free(o);
}

/* The --emit ir text: loop kinds, allocations, guards, thread loops, duplicate names. */
static void test_print(void) {
  IrVar *io = ir_newvar("i.outer", DT_I64), *ii = ir_newvar("i.inner", DT_I64);
  IrVar *j = ir_newvar("j", DT_I64), *j2 = ir_newvar("j", DT_I64), *tx = ir_newvar("tx", DT_I64);
  IrVar *n = ir_newvar("N", DT_I64);
  Buffer *A = buf("A", DT_F32, v(n), c(4), BUF_INPUT), *C = buf("C", DT_F32, v(n), c(4), BUF_OUTPUT);
  Buffer *S = ir_buffer("AS", DT_F32, 2, (Expr *[]){c(32), c(4)}, SCOPE_SHARED, BUF_TEMP);
  Expr *i = bin(OP_ADD, bin(OP_MUL, v(io), c(32)), v(ii));
  Stmt *copy = ir_for(j, c(0), c(4), FOR_VECTORIZE, st2(S, v(ii), v(j), ld2(A, i, v(j))));
  Stmt *use = ir_for(j2, c(0), c(4), FOR_UNROLL,
                     st2(C, i, v(j2), bin(OP_MUL, ld2(S, v(ii), v(j2)), ir_float(DT_F32, 0.5))));
  Stmt *guarded = ir_if(bin(OP_LT, i, v(n)), ir_seq2(copy, use), NULL);
  Stmt *body = ir_for(io, c(0), bin(OP_DIV, bin(OP_ADD, v(n), c(31)), c(32)), FOR_BLOCK_X,
                      ir_alloc(S, ir_seq2(ir_for(ii, c(0), c(32), FOR_THREAD_X, guarded),
                                          ir_seq2(ir_barrier(), ir_for(tx, c(0), c(1), FOR_PARALLEL,
                                                                       st2(C, c(0), c(0), ir_float(DT_F32, 0)))))));
  Buffer *p[2] = {A, C};
  LoweredFunc *f = func("k", p, 2, 1, body);
  f->sizes = (IrVar *[]){n};
  f->nsizes = 1;
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  ir_print_func(out, f);
  fclose(out);
  const char *want =
      "func k(A: f32[N, 4], C: f32[N, 4]) {\n"
      "  for (i.outer, 0, (N + 31)/32) {  // blockIdx.x\n"
      "    allocate AS: f32[32, 4] shared\n"
      "    for (i.inner, 0, 32) {  // threadIdx.x\n"
      "      if (i.outer*32 + i.inner < N) {\n"
      "        vectorized (j, 0, 4) {\n"
      "          AS[i.inner, j] = A[i.outer*32 + i.inner, j]\n"
      "        }\n"
      "        unrolled (j_1, 0, 4) {\n"
      "          C[i.outer*32 + i.inner, j_1] = AS[i.inner, j_1]*0.5f\n"
      "        }\n"
      "      }\n"
      "    }\n"
      "    barrier()\n"
      "    parallel (tx, 0, 1) {\n"
      "      C[0, 0] = 0f\n"
      "    }\n"
      "  }\n"
      "}\n";
  bool ok = strcmp(text, want) == 0;
  if (!ok) printf("# got:\n%s", text);
  check("ir_print_func text", ok);
  check("printed function verifies", ir_verify(f));
  free(text);
  check("expression parentheses",
        strcmp(ir_expr_str(bin(OP_SUB, v(j), bin(OP_SUB, v(ii), c(1)))), "j - (i.inner - 1)") == 0 &&
            strcmp(ir_expr_str(bin(OP_MUL, bin(OP_ADD, v(j), c(1)), c(2))), "(j + 1)*2") == 0 &&
            strcmp(ir_expr_str(ir_select(bin(OP_AND, bin(OP_LT, v(j), c(1)), bin(OP_GT, v(j), c(0))),
                                         ir_float(DT_F64, 1), ir_float(DT_F64, -2.5))),
                   "j < 1 && j > 0 ? 1.0 : -2.5") == 0);
  /* a variable used outside its loop, and a barrier outside a block loop, fail to verify */
  fprintf(stderr, "# expected verifier errors follow:\n");
  LoweredFunc *bad = func("bad", p, 2, 1, ir_seq2(st2(C, v(j), c(0), ir_float(DT_F32, 0)), ir_barrier()));
  check("verifier rejects unbound var and stray barrier", !ir_verify(bad));
  /* lower/flatten.c: one row-major offset per access, and the verifier's view of it */
  Stmt *nd = loop(j, 4, st2(C, v(j), c(1), ld2(A, v(j), c(2))));
  LoweredFunc *fl = func("fl", p, 2, 1, nd);
  fl->sizes = &n;
  fl->nsizes = 1;
  fl->flat = ir_flatten(nd);
  char *ft = NULL;
  size_t fn = 0;
  FILE *mf = open_memstream(&ft, &fn);
  ir_print_stmt(mf, fl->flat, 0);
  fclose(mf);
  check("flatten: row-major offsets", strstr(ft, "C[j*4 + 1] = A[j*4 + 2]") != NULL);
  check("flat body verifies", ir_verify(fl));
  fl->flat = nd;
  check("verifier rejects a multi-dimensional access in the flat body", !ir_verify(fl));
  free(ft);
}

int main(void) {
  test_print();
  test_matmul();
  test_guarded_split();
  test_oob();
  test_sizes_alloc();
  test_dtypes();
  speed();
  return failures != 0;
}
