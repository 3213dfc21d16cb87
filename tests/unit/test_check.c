/* test_check.c — the checker: names, dtypes, reduction axes, DAG, bounds, schedules,
 * canonical text and flops. One line per check: `ok - NAME` / `not ok - NAME`. */
#include "texc.h"

#include <string.h>

static int failures;

static void check(bool cond, const char *name) {
  printf("%sok - check: %s\n", cond ? "" : "not ", name);
  if (!cond) failures++;
}

/* Parse and check SRC quietly; NULL on errors (diag_last() has the last one). */
static Program *load(const char *src, Define *defs, int ndefs) {
  diag_reset();
  diag_silent = true;
  Ast *f = parse_string("t.tex", src);
  Program *p = f && !diag_errors() ? check_program(f, defs, ndefs) : NULL;
  diag_silent = false;
  return p;
}

/* SRC fails to check, and the last error contains WANT. */
static void expect_error(const char *src, const char *want, const char *name) {
  Program *p = load(src, NULL, 0);
  bool ok = !p && strstr(diag_last(), want);
  if (!ok) printf("# got: %s\n", p ? "(no error)" : diag_last());
  check(ok, name);
}

static void expect_ok(const char *src, const char *name) {
  Program *p = load(src, NULL, 0);
  if (!p) printf("# got: %s\n", diag_last());
  check(p != NULL, name);
}

static const char *MATMUL =
    "const M = 64, N = 32, K = 16\n"
    "kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
    "  C[i, j] += A[i, k] * B[k, j]\n"
    "}\n"
    "schedule matmul.tiled for llvm {\n  io, ii = split(C.i, 8)\n}\n"
    "schedule matmul.gpu for cuda, opencl {\n  bx, tx = split(C.i, 16)\n}\n"
    "schedule matmul.tuned = auto\n";

static void test_matmul(void) {
  Program *p = load(MATMUL, NULL, 0);
  check(p && p->nkernels == 1, "matmul checks");
  if (!p) return;
  Kernel *k = program_kernel(p, "matmul");
  Op *op = kernel_op(k, "C");
  int64_t v;
  check(k && k->ninputs == 2 && k->noutputs == 1 && k->nops == 1 && k->nsizes == 0, "matmul buffers");
  check(op && op->rop == RED_SUM && op->nred == 1 && !strcmp(op->raxes[0]->name, "k"), "reduction axis k");
  check(op && ir_is_const(op->rext[0], &v) && v == 16 && ir_is_const(op->rmin[0], &v) && v == 0,
        "k inferred as 0..K");
  check(op && op->nreads == 2 && op->reads[0] == k->inputs[0] && op->reads[1] == k->inputs[1], "reads A, B");
  check(op && op->value->dtype == DT_F32 && op->value->kind == E_BIN && op->value->op == OP_MUL, "value A*B");
  check(op && op->ndim == 2 && op->axes[0]->dtype == DT_I64, "axes i64");
  check(kernel_flops(k) == 2.0 * 64 * 32 * 16, "matmul flops 2MNK");
  check(k->nvariants == 3, "three variants");
  check(kernel_pick_variant(k, "gpu", TARGET_CUDA) != NULL, "pick gpu for cuda");
  check(kernel_pick_variant(k, "gpu", TARGET_LLVM) == NULL, "no gpu for llvm");
  check(kernel_pick_variant(k, "tuned", TARGET_OPENCL) && kernel_variant(k, "tuned")->is_auto,
        "auto variant for every target");
  check(kernel_pick_variant(k, NULL, TARGET_LLVM) == NULL, "no name: default schedule");
  check(kernel_variant(k, "tiled") && kernel_variant(k, "tiled")->steps.len == 1, "variant steps kept");
}

static void test_defines(void) {
  Define d[2] = {{"M", 8, false}, {"Q", 3, false}};
  Program *p = load(MATMUL, d, 2);
  int64_t v;
  Kernel *k = p ? p->kernels[0] : NULL;
  check(k && ir_is_const(k->inputs[0]->shape[0], &v) && v == 8, "-D M=8 overrides const");
  check(d[0].used && !d[1].used, "Define.used marks only used names");
  const char *sym = "kernel vadd(A: f32[N], B: f32[N]) -> C: f32[N] {\n  C[i] = A[i] + B[i]\n}\n";
  p = load(sym, NULL, 0);
  k = p ? p->kernels[0] : NULL;
  check(k && k->nsizes == 1 && !strcmp(k->sizes[0]->name, "N") && k->inputs[0]->shape[0]->kind == E_VAR &&
            k->inputs[0]->shape[0]->var == k->sizes[0] && k->outputs[0]->shape[0]->var == k->sizes[0],
        "symbolic size N shared by all shapes");
  check(k && kernel_flops(k) == 0, "flops 0 with symbolic sizes");
  Define n = {"N", 100, false};
  p = load(sym, &n, 1);
  k = p ? p->kernels[0] : NULL;
  check(k && k->nsizes == 0 && ir_is_const(k->inputs[0]->shape[0], &v) && v == 100 && n.used,
        "-D binds a symbolic size");
  check(k && kernel_flops(k) == 100, "vadd flops");
}

static void test_dag(void) {
  const char *sm = "const N = 4, M = 8\n"
                   "kernel softmax(X: f32[N, M]) -> Y: f32[N, M] {\n"
                   "  tensor mx: f32[N]\n  tensor e: f32[N, M]\n  tensor s: f32[N]\n"
                   "  Y[i, j] = e[i, j] / s[i]\n"
                   "  s[i] += e[i, j]\n"
                   "  e[i, j] = exp(X[i, j] - mx[i])\n"
                   "  mx[i] max= X[i, j]\n"
                   "}\n";
  Program *p = load(sm, NULL, 0);
  Kernel *k = p ? p->kernels[0] : NULL;
  check(k && k->nops == 4 && k->ntemps == 3, "softmax: four ops");
  if (!k || k->nops != 4) return;
  check(!strcmp(k->ops[0]->name, "mx") && !strcmp(k->ops[1]->name, "e") && !strcmp(k->ops[2]->name, "s") &&
            !strcmp(k->ops[3]->name, "Y"),
        "topological order: producers first");
  check(k->ops[0]->rop == RED_MAX && k->ops[0]->nred == 1, "max= reduction");
  check(k->temps[0]->kind == BUF_TEMP && k->temps[0]->op == k->ops[0], "temp buffer knows its op");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n tensor P: f32[4]\n tensor Q: f32[4]\n"
               " P[i] = Q[i]\n Q[i] = P[i]\n B[i] = P[i]\n}\n", "cycle", "cycle is an error");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = B[i] + A[i]\n}\n", "reads itself",
               "self read is an error");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n tensor P: f32[4]\n B[i] = P[i]\n}\n",
               "no statement writes it", "reading an unwritten tensor");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n B[j] = A[j]\n}\n",
               "written by two statements", "duplicate writer");
  expect_error("kernel f(A: f32[4]) -> (B: f32[4], C: f32[4]) {\n B[i] = A[i]\n}\n",
               "output 'C' of kernel f is never written", "unwritten output");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n A[i] = 1.0\n B[i] = A[i]\n}\n",
               "is an input", "writing an input");
}

static void test_dtypes(void) {
  expect_ok("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i] * 2 + 1.5\n}\n", "literals adapt to f32");
  Program *p = load("kernel f(A: f64[4]) -> B: f64[4] {\n B[i] = A[i] * 0.5\n}\n", NULL, 0);
  check(p && p->kernels[0]->ops[0]->value->b->kind == E_FLOAT && p->kernels[0]->ops[0]->value->b->dtype == DT_F64,
        "float literal adapts to f64");
  p = load("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = 0\n}\n", NULL, 0);
  check(p && p->kernels[0]->ops[0]->value->kind == E_FLOAT, "integer literal value adapts to the output");
  expect_error("kernel f(A: f32[4], I: i32[4]) -> B: f32[4] {\n B[i] = A[i] + I[i]\n}\n",
               "mixed dtypes in '+': f32 and i32", "mixed dtypes");
  expect_ok("kernel f(A: f32[4], I: i32[4]) -> B: f32[4] {\n B[i] = A[i] + f32(I[i])\n}\n", "cast fixes dtypes");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i] + i\n}\n", "mixed dtypes",
               "an axis is i64");
  expect_ok("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i] + f32(i)\n}\n", "cast an axis");
  expect_error("kernel f(A: i32[4]) -> B: i32[4] {\n B[i] = A[i] * 1.5\n}\n", "float literal",
               "float literal with an integer");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i] > 0.0\n}\n", "bool",
               "comparison gives bool");
  expect_ok("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i] > 0.0 && A[i] < 1.0 ? A[i] : 0.0\n}\n",
            "&& and ?: on bools");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i] && 1.0\n}\n", "must be a bool",
               "&& needs bools");
  expect_ok("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = max(exp(A[i]), sqrt(abs(A[i]))) + pow(A[i], 2)\n}\n",
            "math calls");
  expect_error("kernel f(A: i32[4]) -> B: i32[4] {\n B[i] = exp(A[i])\n}\n", "needs a float",
               "exp on an integer");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = foo(A[i])\n}\n", "unknown function 'foo'",
               "unknown function");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = max(A[i])\n}\n", "takes 2 arguments",
               "arity");
  expect_error("kernel f(A: i8[4]) -> B: i8[4] {\n B[i] = A[i] + 300\n}\n", "does not fit in i8",
               "literal range");
  expect_ok("const N = 4\nkernel f(A: f32[N]) -> B: f32[N] {\n B[i] = A[i] * N\n}\n",
            "a constant is an untyped integer");
}

static void test_reductions(void) {
  expect_error("kernel f(A: f32[4, 5], B: f32[6]) -> C: f32[4] {\n C[i] += A[i, k] * B[k]\n}\n",
               "reduction axis 'k' gets two ranges", "ambiguous reduction axis");
  expect_error("kernel f(A: f32[4, 5]) -> C: f32[4] {\n C[i] += A[i, k + 1]\n}\n",
               "cannot infer the range of reduction axis 'k': add `where k in 0..N`", "unbounded reduction axis");
  expect_ok("kernel f(A: f32[4, 5]) -> C: f32[4] {\n C[i] += A[i, k + 1] where k in 0..4\n}\n",
            "where gives the range");
  expect_error("kernel f(A: f32[4, 5]) -> C: f32[4] {\n C[i] += A[i, k + 1] where k in 0..5\n}\n",
               "index 'k + 1' of A is outside 0..4", "where range checked against the shape");
  expect_error("kernel f(A: f32[4, 5]) -> C: f32[4] {\n C[i] += A[i, k] where i in 0..4\n}\n",
               "gives ranges only to reduction axes", "where for a non-reduction axis");
  expect_error("kernel f(A: f32[4, 5]) -> C: f32[4] {\n C[i] = A[i, k]\n}\n", "unknown name 'k'",
               "unknown name in =");
  Program *p = load("kernel f(A: f32[4, 5], B: f32[6]) -> C: f32[4] {\n"
                    "  C[i] += A[i, k] * B[k] where k in 0..5\n}\n", NULL, 0);
  check(p != NULL, "where settles a disagreement");
  p = load("kernel f(A: f32[3, 4, 5]) -> C: f32[3] {\n C[i] += A[i, r, s] * A[i, r, s]\n}\n", NULL, 0);
  Op *op = p ? p->kernels[0]->ops[0] : NULL;
  check(op && op->nred == 2 && !strcmp(op->raxes[0]->name, "r") && !strcmp(op->raxes[1]->name, "s"),
        "reduction axes in order of appearance");
  check(p && kernel_flops(p->kernels[0]) == 2.0 * 3 * 4 * 5, "flops of a product reduction");
}

static void test_bounds(void) {
  const char *pad = "const N = 1, H = 8, W = 8, C = 2\n"
                    "kernel pad(X: f32[N, H, W, C]) -> P: f32[N, H + 2, W + 2, C] {\n"
                    "  P[n, h, w, c] = h >= 1 && h <= H && w >= 1 && w <= W ? X[n, h - 1, w - 1, c] : 0.0\n}\n";
  expect_ok(pad, "guarded padding accepted");
  expect_ok("kernel pad(X: f32[N, H, W]) -> P: f32[N, H + 2, W + 2] {\n"
            "  P[n, h, w] = h >= 1 && h <= H && w >= 1 && w <= W ? X[n, h - 1, w - 1] : 0.0\n}\n",
            "guarded padding with symbolic sizes");
  expect_error("kernel f(X: f32[H]) -> P: f32[H] {\n P[h] = X[h - 1]\n}\n",
               "index 'h - 1' of X is outside 0..H-1", "X[h - 1] alone is rejected");
  expect_error("kernel f(X: f32[H]) -> P: f32[H + 2] {\n P[h] = h <= H ? X[h - 1] : 0.0\n}\n",
               "index 'h - 1' of X may be outside 0..H-1", "a guard on one side is not enough");
  expect_ok("kernel f(X: f32[H]) -> P: f32[H] {\n P[h] = h < 1 ? 0.0 : X[h - 1]\n}\n",
            "the else branch is narrowed by the negated guard");
  expect_ok("const H = 16, W = 16\nkernel blur(I: f32[H + 2, W + 2]) -> O: f32[H, W] {\n"
            "  tensor bx: f32[H + 2, W]\n"
            "  bx[y, x] = (I[y, x] + I[y, x + 1] + I[y, x + 2]) / 3.0\n"
            "  O[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3.0\n}\n", "blur in bounds");
  expect_error("const N = 8\nkernel f(A: f32[N]) -> B: f32[N] {\n B[i] = A[i + 1]\n}\n",
               "index 'i + 1' of A is outside 0..7", "provably out of bounds");
  expect_ok("kernel f(A: f32[N]) -> B: f32[N / 2] {\n B[i] = A[2 * i] + A[2 * i + 1]\n}\n",
            "strided access within N/2");
  expect_ok("kernel f(A: f32[N], I: i32[M]) -> B: f32[M] {\n B[i] = A[min(max(i64(I[i]), 0), N - 1)]\n}\n",
            "clamped gather");
  expect_error("kernel f(A: f32[N], I: i32[M]) -> B: f32[M] {\n B[i] = A[I[i]]\n}\n", "may be outside",
               "unclamped gather");
  expect_ok("kernel f(A: f32[N]) -> B: f32[N] {\n B[i] = A[(i + 3) % N]\n}\n", "modulo index");
  expect_ok("kernel f(A: f32[N]) -> B: f32[N] {\n B[i] = A[i / 2] + A[i / 3 + i / 2]\n}\n",
            "halving index over a symbolic size");
  expect_ok("kernel f(A: f32[N]) -> B: f32[2 * N] {\n B[i] = A[i / 2]\n}\n", "upsampling index");
  expect_error("kernel f(A: f32[N]) -> B: f32[2 * N + 1] {\n B[i] = A[i / 2]\n}\n", "may be outside",
               "upsampling one past the end");
  expect_ok("const N = 8\nkernel f(A: f32[N, 4]) -> B: f32[N * 4] {\n B[i] = A[i / 4, i % 4]\n}\n",
            "reshape by / and %");
  expect_ok("kernel conv(X: f32[H + 2, W + 2], F: f32[3, 3]) -> Y: f32[H, W] {\n"
            "  Y[h, w] += X[h + rh, w + rw] * F[rh, rw]\n}\n", "convolution window in bounds");
  expect_ok("kernel conv(X: f32[H, W], F: f32[3, 3]) -> Y: f32[H, W] {\n"
            "  Y[h, w] += h + rh >= 1 && h + rh <= H && w + rw >= 1 && w + rw <= W ? "
            "X[h + rh - 1, w + rw - 1] * F[rh, rw] : 0.0\n}\n", "inline padding by guard facts");
  expect_error("kernel f(A: f32[4, 4]) -> B: f32[4] {\n B[i] = A[i]\n}\n", "has 2 dimensions but is indexed with 1",
               "rank mismatch in an access");
  expect_error("kernel f(A: f32[4]) -> B: f32[4, 4] {\n B[i] = A[i]\n}\n", "written with 1 index",
               "rank mismatch on the left");
}

static void test_schedules(void) {
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n}\nschedule g.fast {\n parallel(B.i)\n}\n",
               "schedule for unknown kernel 'g'", "unknown kernel in a schedule");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n}\nschedule f.fast for tpu {\n parallel(B.i)\n}\n",
               "unknown target 'tpu'", "unknown target");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n}\n"
               "schedule f.fast for llvm, cuda = auto\nschedule f.fast for cuda = auto\n",
               "defined twice for the same target", "duplicate variant");
  Program *p = load("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n}\n"
                    "schedule f.fast for llvm = auto\nschedule f.fast for cuda {\n parallel(B.i)\n}\n", NULL, 0);
  Kernel *k = p ? p->kernels[0] : NULL;
  check(k && k->nvariants == 2 && kernel_pick_variant(k, "fast", TARGET_CUDA) == k->variants[1] &&
            kernel_pick_variant(k, "fast", TARGET_LLVM) == k->variants[0],
        "same variant name on disjoint targets");
  expect_error("kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n}\n"
               "kernel f(A: f32[4]) -> B: f32[4] {\n B[i] = A[i]\n}\n", "kernel 'f' is defined twice",
               "duplicate kernel");
}

static void test_canonical(void) {
  Program *a = load("kernel mm(A: f32[8, 4], B: f32[4, 8]) -> C: f32[8, 8] {\n C[i, j] += A[i, k] * B[k, j]\n}\n",
                    NULL, 0);
  Program *b = load("const R = 8\nkernel other(X: f32[R, 4], Y: f32[4, R]) -> Z: f32[R, R] {\n"
                    "  Z[p, q] += X[p, r] * Y[r, q]\n}\n", NULL, 0);
  Program *c = load("kernel mm(A: f64[8, 4], B: f64[4, 8]) -> C: f64[8, 8] {\n C[i, j] += A[i, k] * B[k, j]\n}\n",
                    NULL, 0);
  if (!a || !b || !c) {
    check(false, "canonical programs check");
    return;
  }
  Kernel *ka = a->kernels[0], *kb = b->kernels[0], *kc = c->kernels[0];
  check(!strcmp(kernel_canonical(ka), kernel_canonical(kb)), "canonical text ignores names");
  check(kernel_workload_key(ka) == kernel_workload_key(kb), "same workload key");
  check(kernel_workload_key(ka) != kernel_workload_key(kc), "dtype changes the key");
  check(strstr(kernel_canonical(ka), "in0[a0,r0]") != NULL, "canonical names by position");
}

/* A kernel built by hand, without the parser: B[i] = A[i] + 1. */
static void test_hand_ast(void) {
  Loc l = {"hand.tex", 1, 1};
  Ast *file = ast_new(A_FILE, l), *k = ast_new(A_KERNEL, l);
  k->name = "inc";
  Ast *pa = ast_new(A_PARAM, l), *pb = ast_new(A_PARAM, l), *n4 = ast_new(A_INT, l);
  n4->ival = 4;
  pa->name = "A", pa->name2 = "f32";
  pb->name = "B", pb->name2 = "f32";
  vec_push(&pa->list, n4);
  vec_push(&pb->list, n4);
  vec_push(&k->list, pa);
  vec_push(&k->list2, pb);
  Ast *st = ast_new(A_STMT, l), *lhs = ast_new(A_ACCESS, l), *i1 = ast_new(A_NAME, l);
  Ast *rhs = ast_new(A_BINARY, l), *acc = ast_new(A_ACCESS, l), *i2 = ast_new(A_NAME, l), *one = ast_new(A_INT, l);
  i1->name = i2->name = "i";
  lhs->name = "B";
  vec_push(&lhs->list, i1);
  acc->name = "A";
  vec_push(&acc->list, i2);
  one->ival = 1;
  rhs->op = '+', rhs->a = acc, rhs->b = one;
  st->a = lhs, st->op = '=', st->b = rhs;
  vec_push(&k->list3, st);
  vec_push(&file->list, k);
  diag_reset();
  Program *p = check_program(file, NULL, 0);
  Op *op = p ? kernel_op(p->kernels[0], "B") : NULL;
  check(op && op->value->kind == E_BIN && op->value->b->kind == E_FLOAT && op->value->b->fval == 1.0,
        "hand-built AST checks");
}

int main(void) {
  test_hand_ast();
  test_matmul();
  test_defines();
  test_dag();
  test_dtypes();
  test_reductions();
  test_bounds();
  test_schedules();
  test_canonical();
  return failures ? 1 : 0;
}
