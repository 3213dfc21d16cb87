/* test_simplify.c — identities of the simplifier, statement simplification, and a
 * randomized exactness test: simplify(e) evaluates to e's value at random points. */
#include "texc.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* simplify(E, R) prints as WANT. */
static void check_str(const char *name, Expr *e, const RangeMap *r, const char *want) {
  char *got = ir_expr_str(simplify(e, r));
  bool ok = strcmp(got, want) == 0;
  if (!ok) printf("# %s: got `%s`, want `%s`\n", name, got, want);
  check(name, ok);
}

static void identities(void) {
  IrVar *io = ir_newvar("io", DT_I64), *ii = ir_newvar("ii", DT_I64);
  IrVar *x = ir_newvar("x", DT_I64), *y = ir_newvar("y", DT_I64), *n = ir_newvar("N", DT_I64);
  RangeMap r = {0};
  range_push(&r, io, c(0), c(8));
  range_push(&r, ii, c(0), c(32));
  Expr *fused = bin(OP_ADD, bin(OP_MUL, v(io), c(32)), v(ii));
  check_str("split cancels", bin(OP_SUB, fused, bin(OP_MUL, v(io), c(32))), NULL, "ii");
  check_str("x*4 + y*4 stays", bin(OP_ADD, bin(OP_MUL, v(x), c(4)), bin(OP_MUL, v(y), c(4))),
            NULL, "x*4 + y*4");
  check_str("constant fold", bin(OP_MUL, bin(OP_ADD, c(3), c(4)), c(5)), NULL, "35");
  check_str("x - x", bin(OP_SUB, v(x), v(x)), NULL, "0");
  check_str("terms merge", bin(OP_ADD, bin(OP_ADD, v(x), c(3)), bin(OP_SUB, v(x), c(5))), NULL,
            "x*2 - 2");
  check_str("all negative", bin(OP_SUB, c(5), v(x)), NULL, "5 - x");
  check_str("div of split", bin(OP_DIV, fused, c(32)), &r, "io");
  check_str("mod of split", bin(OP_MOD, fused, c(32)), &r, "ii");
  check_str("div needs range", bin(OP_DIV, bin(OP_ADD, bin(OP_MUL, v(x), c(32)), v(y)), c(32)),
            NULL, "x + y/32");
  check_str("mod drops multiples", bin(OP_MOD, bin(OP_ADD, bin(OP_MUL, v(x), c(32)), v(y)), c(8)),
            NULL, "y%8");
  check_str("div const offset", bin(OP_DIV, bin(OP_ADD, bin(OP_MUL, v(x), c(4)), c(5)), c(4)),
            NULL, "x + 1");
  check_str("nested div", bin(OP_DIV, bin(OP_DIV, v(x), c(2)), c(3)), NULL, "x/6");
  check_str("nested mod", bin(OP_MOD, bin(OP_MOD, v(x), c(12)), c(4)), NULL, "x%4");
  check_str("div-mod merge",
            bin(OP_ADD, bin(OP_MUL, bin(OP_DIV, v(x), c(4)), c(4)), bin(OP_MOD, v(x), c(4))), NULL,
            "x");
  check_str("floor div const", bin(OP_DIV, c(-7), c(2)), NULL, "-4");
  check_str("floor mod const", bin(OP_MOD, c(-7), c(2)), NULL, "1");
  check_str("min provable", bin(OP_MIN, v(ii), c(32)), &r, "ii");
  check_str("max provable", bin(OP_MAX, v(ii), c(0)), &r, "ii");
  check_str("min unknown", bin(OP_MIN, v(x), c(32)), NULL, "min(x, 32)");
  check_str("min of sum", bin(OP_MIN, bin(OP_ADD, v(x), c(1)), v(x)), NULL, "x");
  check_str("cmp true", bin(OP_LT, fused, c(256)), &r, "true");
  check_str("cmp false", bin(OP_GE, v(ii), c(32)), &r, "false");
  check_str("cmp unknown", bin(OP_LT, fused, c(200)), &r, "io*32 + ii < 200");
  check_str("and folds", bin(OP_AND, bin(OP_LT, v(ii), c(32)), bin(OP_LT, v(x), c(3))), &r,
            "x < 3");
  check_str("select folds", ir_select(bin(OP_LE, v(ii), c(31)), v(x), v(y)), &r, "x");
  RangeMap rn = {0};
  range_push(&rn, ii, c(0), v(n));
  check_str("symbolic cmp", bin(OP_LT, v(ii), v(n)), &rn, "true");
  check_str("float fold f32", bin(OP_ADD, ir_float(DT_F32, 0.1), ir_float(DT_F32, 0.2)), NULL,
            "0.3f");
  check_str("float no reassoc",
            bin(OP_SUB, bin(OP_ADD, ir_load(ir_buffer("A", DT_F32, 1, (Expr *[]){c(4)},
                                                      SCOPE_GLOBAL, BUF_INPUT),
                                            (Expr *[]){c(0)}),
                            ir_float(DT_F32, 1)),
                ir_float(DT_F32, 1)),
            NULL, "A[0] + 1f - 1f");
  check_str("i8 wraps", bin(OP_ADD, ir_const(DT_I8, 100), ir_const(DT_I8, 100)), NULL, "-56");
  check_str("u8 wraps", bin(OP_SUB, ir_const(DT_U8, 1), ir_const(DT_U8, 2)), NULL, "255");
}

static void statements(void) {
  IrVar *i = ir_newvar("i", DT_I64), *j = ir_newvar("j", DT_I64);
  Buffer *b = ir_buffer("B", DT_F32, 1, (Expr *[]){c(64)}, SCOPE_GLOBAL, BUF_OUTPUT);
  Expr *idx = bin(OP_ADD, bin(OP_MUL, v(i), c(8)), v(j));
  Stmt *st = ir_store(b, (Expr *[]){idx}, ir_float(DT_F32, 1));
  Stmt *guard = ir_if(bin(OP_LT, idx, c(64)), st, NULL);
  Stmt *loop = ir_for(i, c(0), c(8), FOR_SERIAL, ir_for(j, c(0), c(8), FOR_SERIAL, guard));
  Stmt *s = simplify_stmt(loop);
  check("guard dropped", s->kind == S_FOR && s->body->kind == S_FOR && s->body->body->kind == S_STORE);
  Stmt *unit = simplify_stmt(ir_for(i, c(3), c(1), FOR_SERIAL, st));
  check("unit loop substituted", unit->kind == S_STORE && strcmp(ir_expr_str(unit->args[0]), "j + 24") == 0);
  Stmt *empty = simplify_stmt(ir_seq2(ir_for(i, c(0), c(0), FOR_SERIAL, st), st));
  check("empty loop removed", empty->kind == S_STORE);
  Stmt *gpu = simplify_stmt(ir_for(i, c(0), c(1), FOR_THREAD_X, st));
  check("gpu unit loop kept", gpu->kind == S_FOR);
  Stmt *never = simplify_stmt(ir_for(i, c(0), c(8), FOR_SERIAL, ir_if(bin(OP_GE, v(i), c(8)), st, NULL)));
  check("loop with dead body removed", never->kind == S_SEQ && never->n == 0);
}

static char *stmt_str(const Stmt *s) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ir_print_stmt(f, s, 0);
  fclose(f);
  return buf;
}

/* The tails pass: a 6-row tile of 1024 rows is versioned on io*6 + 5 < 1024; not when the
 * widened test could wrap, nor for a guard in plain loops. */
static void tails(void) {
  IrVar *io = ir_newvar("io", DT_I64), *i = ir_newvar("i", DT_I64);
  Buffer *b = ir_buffer("B", DT_F32, 1, (Expr *[]){c(1024)}, SCOPE_GLOBAL, BUF_OUTPUT);
  Expr *row = bin(OP_ADD, bin(OP_MUL, v(io), c(6)), v(i));
  Stmt *st = ir_if(bin(OP_LT, row, c(1024)), ir_store(b, (Expr *[]){row}, ir_float(DT_F32, 1)), NULL);
  char *got = stmt_str(tails_stmt(ir_for(io, c(0), c(171), FOR_PARALLEL, ir_for(i, c(0), c(6), FOR_UNROLL, st))));
  bool ok = strstr(got, "if (io*6 + 5 < 1024)") && strstr(got, "else");
  if (!ok) printf("# got:\n%s", got);
  check("tails: a 6-row tile versioned on its last row", ok);
  free(got);
  /* io up to 2^61: io*6 wraps, so io*6 + 5 < 1024 would not imply io*6 + i < 1024 */
  got = stmt_str(tails_stmt(ir_for(io, c(0), c((int64_t)1 << 61), FOR_PARALLEL, ir_for(i, c(0), c(6), FOR_UNROLL, st))));
  ok = !strstr(got, "io*6 + 5") && strstr(got, "if (io*6 + i < 1024)");
  if (!ok) printf("# got:\n%s", got);
  check("tails: no version when the widened test could wrap", ok);
  free(got);
  got = stmt_str(tails_stmt(ir_for(io, c(0), c(171), FOR_PARALLEL, ir_for(i, c(0), c(6), FOR_SERIAL, st))));
  ok = !strstr(got, "else");
  check("tails: a guard in plain loops is left to the compiler", ok);
  free(got);
}

/* ---- randomized exactness ------------------------------------------------ */

enum { NV = 3 };
static IrVar *vars[NV];
static int64_t vals[NV];

static int64_t eval(const Expr *e) {
  int64_t a, b;
  switch (e->kind) {
  case E_INT: return e->ival;
  case E_VAR:
    for (int i = 0; i < NV; i++)
      if (vars[i] == e->var) return vals[i];
    return 0;
  case E_UN: return e->op == OP_NEG ? -eval(e->a) : !eval(e->a);
  case E_SELECT: return eval(e->a) ? eval(e->b) : eval(e->c);
  case E_BIN: break;
  default: return 0;
  }
  a = eval(e->a);
  b = eval(e->b);
  switch (e->op) {
  case OP_ADD: return a + b;
  case OP_SUB: return a - b;
  case OP_MUL: return a * b;
  case OP_DIV: return fdiv64(a, b);
  case OP_MOD: return a - fdiv64(a, b) * b;
  case OP_MIN: return a < b ? a : b;
  case OP_MAX: return a > b ? a : b;
  case OP_EQ: return a == b;
  case OP_NE: return a != b;
  case OP_LT: return a < b;
  case OP_LE: return a <= b;
  case OP_GT: return a > b;
  case OP_GE: return a >= b;
  case OP_AND: return a && b;
  case OP_OR: return a || b;
  default: return 0;
  }
}

static Expr *gen(int depth) {
  if (depth == 0 || rnd() % 4 == 0)
    return rnd() % 3 ? v(vars[rnd() % NV]) : c(rint_in(-9, 9));
  static const BinOp ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_MIN, OP_MAX, OP_ADD, OP_SUB};
  int k = (int)(rnd() % 11);
  if (k == 9) return ir_select(bin(OP_LT + (int)(rnd() % 4), gen(depth - 1), gen(depth - 1)),
                               gen(depth - 1), gen(depth - 1));
  if (k == 10) return ir_un(OP_NEG, gen(depth - 1));
  BinOp op = ops[k];
  if (op == OP_DIV || op == OP_MOD) {
    int64_t d = rint_in(1, 8) * (rnd() % 5 == 0 ? -1 : 1);
    return bin(op, gen(depth - 1), c(d));
  }
  if (op == OP_MUL && rnd() % 2) return bin(op, gen(depth - 1), c(rint_in(-5, 9)));
  return bin(op, gen(depth - 1), gen(depth - 1));
}

static void randomized(void) {
  const char *names[NV] = {"x", "y", "z"};
  int64_t lo[NV], ext[NV];
  int bad = 0, trials = 3000;
  for (int i = 0; i < NV; i++) vars[i] = ir_newvar(names[i], DT_I64);
  for (int t = 0; t < trials && bad < 5; t++) {
    RangeMap r = {0};
    for (int i = 0; i < NV; i++) {
      lo[i] = rint_in(-10, 10);
      ext[i] = rint_in(1, 12);
      range_push(&r, vars[i], c(lo[i]), c(ext[i]));
    }
    Expr *e = gen(4);
    Expr *s = simplify(e, &r), *s0 = simplify(e, NULL);
    for (int k = 0; k < 20; k++) {
      for (int i = 0; i < NV; i++) vals[i] = rint_in(lo[i], lo[i] + ext[i] - 1);
      if (eval(e) != eval(s) || eval(e) != eval(s0)) {
        printf("# %s  =>  %s / %s at x=%lld y=%lld z=%lld: %lld vs %lld\n", ir_expr_str(e),
               ir_expr_str(s), ir_expr_str(s0), (long long)vals[0], (long long)vals[1],
               (long long)vals[2], (long long)eval(e), (long long)eval(s));
        bad++;
        break;
      }
    }
  }
  check("randomized exactness (3000 expressions)", bad == 0);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Deep min/max nests stay polynomial: redundant clamps fold, others are kept, in well
 * under a second (exponential recursion took minutes at 60 levels). */
static void deep_nests(void) {
  IrVar *i = ir_newvar("i", DT_I64), *j = ir_newvar("j", DT_I64), *k = ir_newvar("k", DT_I64);
  RangeMap r = {0};
  range_push(&r, i, c(0), c(10));
  range_push(&r, j, c(0), c(10));
  range_push(&r, k, c(0), c(10));
  Expr *clamp = v(i), *mixed = v(j);
  for (int d = 0; d < 200; d++) {
    clamp = d % 2 ? bin(OP_MAX, clamp, c(0)) : bin(OP_MIN, clamp, c(9));
    mixed = d % 2 ? bin(OP_MAX, mixed, v(k)) : bin(OP_MIN, mixed, v(i));
  }
  double t0 = now_s();
  check_str("200 redundant clamps fold to i", clamp, &r, "i");
  Expr *s = simplify(mixed, &r);
  int64_t lo = -1, hi = -1;
  bool b = const_bounds(mixed, &r, &lo, &hi);
  bool p = prove(bin(OP_LT, mixed, c(10)), &r);
  double dt = now_s() - t0;
  check("200 mixed min/max levels: simplified, bounded [0, 9], proven < 10", s && b && lo == 0 && hi == 9 && p);
  if (dt > 1.0) printf("# deep nests took %.2f s\n", dt);
  check("deep nests in under a second", dt < 1.0);
}

/* The shared linear form: equal atoms merge, constants are never folded into c. */
static void linear_forms(void) {
  IrVar *x = ir_newvar("x", DT_I64), *y = ir_newvar("y", DT_I64);
  LinForm l = {0};
  for (int i = 0; i < 10; i++) linform_add(&l, ir_var(i % 2 ? x : y), 3);
  check("linform merges equal atoms", l.n == 2 && l.t[0].coef == 15 && l.t[1].coef == 15);
  linform_add(&l, ir_var(x), -15);
  check("linform not constant with one term left", !linform_is_const(&l));
  linform_add(&l, ir_var(y), -15);
  linform_add(&l, ir_int(7), 0);
  check("linform constant when every coefficient is 0", linform_is_const(&l) && l.n == 3);
}

int main(void) {
  unit_rng = 88172645463325252ull;
  linear_forms();
  identities();
  statements();
  tails();
  randomized();
  deep_nests();
  return failures != 0;
}
