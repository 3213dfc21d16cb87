/* test_arith.c — interval_of, const_bounds and prove: exact on random affine expressions,
 * sound (the true range inside the interval) on random non-affine ones, symbolic bounds
 * over sizes, and ranges that depend on outer loop variables. */
#include "texc.h"
#include "unit.h"

#include <string.h>

static bool str_is(Expr *e, const char *want) {
  const char *got = e ? ir_expr_str(e) : "<unbounded>";
  if (strcmp(got, want) != 0) printf("# got `%s`, want `%s`\n", got, want);
  return strcmp(got, want) == 0;
}

enum { NV = 3 };
static IrVar *vars[NV];
static int64_t vals[NV];

static int64_t eval(const Expr *e) {
  switch (e->kind) {
  case E_INT: return e->ival;
  case E_VAR:
    for (int i = 0; i < NV; i++)
      if (vars[i] == e->var) return vals[i];
    return 0;
  case E_UN: return -eval(e->a);
  case E_SELECT: return eval(e->a) ? eval(e->b) : eval(e->c);
  case E_BIN: break;
  default: return 0;
  }
  int64_t a = eval(e->a), b = eval(e->b);
  switch (e->op) {
  case OP_ADD: return a + b;
  case OP_SUB: return a - b;
  case OP_MUL: return a * b;
  case OP_DIV: return fdiv64(a, b);
  case OP_MOD: return a - fdiv64(a, b) * b;
  case OP_MIN: return a < b ? a : b;
  case OP_MAX: return a > b ? a : b;
  case OP_LT: return a < b;
  default: return 0;
  }
}

/* A random affine expression, written redundantly (terms repeat and cancel). */
static Expr *gen_affine(void) {
  Expr *e = c(rint_in(-20, 20));
  int n = (int)rint_in(1, 6);
  for (int i = 0; i < n; i++) {
    Expr *t = bin(OP_MUL, v(vars[rnd() % NV]), c(rint_in(-6, 6)));
    e = rnd() % 2 ? bin(OP_ADD, e, t) : bin(OP_SUB, t, e);
  }
  return e;
}

static Expr *gen_any(int depth) {
  if (depth == 0 || rnd() % 4 == 0) return rnd() % 3 ? v(vars[rnd() % NV]) : c(rint_in(-9, 9));
  switch (rnd() % 8) {
  case 0: return bin(OP_DIV, gen_any(depth - 1), c(rint_in(1, 7)));
  case 1: return bin(OP_MOD, gen_any(depth - 1), c(rint_in(1, 7)));
  case 2: return bin(OP_MIN, gen_any(depth - 1), gen_any(depth - 1));
  case 3: return bin(OP_MAX, gen_any(depth - 1), gen_any(depth - 1));
  case 4: return ir_select(bin(OP_LT, gen_any(depth - 1), gen_any(depth - 1)), gen_any(depth - 1), gen_any(depth - 1));
  case 5: return bin(OP_MUL, gen_any(depth - 1), gen_any(depth - 1));
  case 6: return bin(OP_SUB, gen_any(depth - 1), gen_any(depth - 1));
  default: return bin(OP_ADD, gen_any(depth - 1), gen_any(depth - 1));
  }
}

/* True min and max of E over the box, by enumeration. */
static void true_range(Expr *e, const int64_t *lo, const int64_t *ext, int64_t *mn, int64_t *mx) {
  *mn = INT64_MAX, *mx = INT64_MIN;
  for (vals[0] = lo[0]; vals[0] < lo[0] + ext[0]; vals[0]++)
    for (vals[1] = lo[1]; vals[1] < lo[1] + ext[1]; vals[1]++)
      for (vals[2] = lo[2]; vals[2] < lo[2] + ext[2]; vals[2]++) {
        int64_t x = eval(e);
        *mn = x < *mn ? x : *mn;
        *mx = x > *mx ? x : *mx;
      }
}

static void randomized(void) {
  const char *names[NV] = {"x", "y", "z"};
  for (int i = 0; i < NV; i++) vars[i] = ir_newvar(names[i], DT_I64);
  int inexact = 0, unsound = 0, bounded = 0, bad_prove = 0;
  for (int t = 0; t < 2000; t++) {
    int64_t lo[NV], ext[NV], mn, mx, a, b;
    RangeMap r = {0};
    for (int i = 0; i < NV; i++) {
      lo[i] = rint_in(-8, 8);
      ext[i] = rint_in(1, 6);
      range_push(&r, vars[i], c(lo[i]), c(ext[i]));
    }
    bool aff = t % 2 == 0;
    Expr *e = aff ? gen_affine() : gen_any(3);
    true_range(e, lo, ext, &mn, &mx);
    bool has = const_bounds(e, &r, &a, &b);
    if (aff && (!has || a != mn || b != mx)) {
      if (inexact++ < 3) printf("# affine %s: [%lld, %lld] vs true [%lld, %lld]\n", ir_expr_str(e), (long long)a, (long long)b, (long long)mn, (long long)mx);
    }
    if (has) bounded++;
    if (has && (a > mn || b < mx)) {
      if (unsound++ < 3) printf("# %s: [%lld, %lld] misses true [%lld, %lld]\n", ir_expr_str(e), (long long)a, (long long)b, (long long)mn, (long long)mx);
    }
    /* prove(e < k) must be false whenever some point has e >= k */
    int64_t k = rint_in(mn - 3, mx + 3);
    if (prove(bin(OP_LT, e, c(k)), &r) && !(mx < k)) bad_prove++;
    if (prove(bin(OP_GE, e, c(k)), &r) && !(mn >= k)) bad_prove++;
  }
  check("affine intervals are exact (1000 expressions)", inexact == 0);
  check("intervals contain the true range (2000 expressions)", unsound == 0);
  printf("# %d of 2000 random expressions had constant bounds\n", bounded);
  check("prove is sound on random expressions", bad_prove == 0);
}

static void symbolic(void) {
  IrVar *n = ir_newvar("N", DT_I64), *i = ir_newvar("i", DT_I64), *j = ir_newvar("j", DT_I64);
  IrVar *io = ir_newvar("io", DT_I64), *ii = ir_newvar("ii", DT_I64);
  RangeMap r = {0};
  range_push(&r, i, c(0), v(n));
  Interval iv = interval_of(bin(OP_SUB, v(i), v(n)), &r);
  check("i - N over [0, N) is [-N, -1]", str_is(iv.min, "-N") && str_is(iv.max, "-1"));
  check("prove i < N", prove(bin(OP_LT, v(i), v(n)), &r));
  check("not prove i < N - 1", !prove(bin(OP_LT, v(i), bin(OP_SUB, v(n), c(1))), &r));
  iv = interval_of(bin(OP_MUL, v(i), v(n)), &r);
  check("i*N is [0, (N - 1)*N]", str_is(iv.min, "0") && iv.max != NULL);
  /* j ranges over [i*4, i*4 + 4) with i in [0, 8): relaxed to [0, 31] */
  RangeMap r2 = {0};
  range_push(&r2, i, c(0), c(8));
  range_push(&r2, j, bin(OP_MUL, v(i), c(4)), c(4));
  int64_t lo, hi;
  check("nested range relaxes", const_bounds(v(j), &r2, &lo, &hi) && lo == 0 && hi == 31);
  check("j - i*4 in [0, 3]", const_bounds(bin(OP_SUB, v(j), bin(OP_MUL, v(i), c(4))), &r2, &lo, &hi) && lo == 0 && hi == 3);
  /* a split of a symbolic extent: io*32 + ii < N is not provable, < N + 32 is for io < ceil(N/32) */
  RangeMap r3 = {0};
  range_push(&r3, io, c(0), bin(OP_DIV, bin(OP_ADD, v(n), c(31)), c(32)));
  range_push(&r3, ii, c(0), c(32));
  Expr *x = bin(OP_ADD, bin(OP_MUL, v(io), c(32)), v(ii));
  check("split guard not provable", !prove(bin(OP_LT, x, v(n)), &r3));
  iv = interval_of(x, &r3);
  check("split index interval", str_is(iv.min, "0") && str_is(iv.max, "((N + 31)/32)*32 - 1"));
  check("unbounded load", interval_of(ir_load(ir_buffer("A", DT_I64, 1, (Expr *[]){c(4)}, SCOPE_GLOBAL, BUF_INPUT), (Expr *[]){v(i)}), &r).max == NULL);
  check("mod of a size is a point", str_is(interval_of(bin(OP_MOD, v(n), c(8)), &r).max, "N%8"));
  check("mod interval", const_bounds(bin(OP_MOD, v(i), c(8)), &r, &lo, &hi) && lo == 0 && hi == 7);
  check("min with unbounded side", const_bounds(bin(OP_MIN, v(ii), v(n)), &r3, &lo, &hi) == false);
  Interval m = interval_of(bin(OP_MIN, v(ii), v(n)), &r3);
  check("min keeps the bounded upper end", m.max && str_is(m.max, "min(31, N)"));
  check("prove && and ||", prove(bin(OP_AND, bin(OP_GE, v(ii), c(0)), bin(OP_LT, v(ii), c(32))), &r3) &&
                               prove(bin(OP_OR, bin(OP_LT, v(ii), c(0)), bin(OP_LT, v(ii), c(32))), &r3));
  check("prove !", prove(ir_un(OP_NOT, bin(OP_GE, v(ii), c(32))), &r3));
}

/* The shared integer rules (arith_*, cmp_*, range_*) against brute force. */
static void helpers(void) {
  bool ok = true;
  for (int64_t a = -20; a <= 20; a++)
    for (int64_t b = -5; b <= 5; b++) {
      if (!b) continue;
      int64_t q = ir_int_floordiv(a, b), m = ir_int_floormod(a, b);
      ok &= q * b + m == a && (b > 0 ? m >= 0 && m < b : m <= 0 && m > b);
    }
  check("floordiv / floormod", ok && ir_int_floordiv(INT64_MIN, -1) == INT64_MIN);
  int64_t lo, hi;
  check("mul bounds", arith_mul_bounds(-2, 3, -5, 4, &lo, &hi) && lo == -15 && hi == 12);
  check("mul bounds overflow", !arith_mul_bounds(0, INT64_MAX / 2, 0, 3, &lo, &hi));
  arith_mod_bounds(9, 13, 8, &lo, &hi);
  check("mod bounds in one period", lo == 1 && hi == 5);
  arith_mod_bounds(6, 9, 8, &lo, &hi);
  check("mod bounds across periods", lo == 0 && hi == 7);
  ok = true;
  for (int op = OP_EQ; op <= OP_GE; op++)
    for (int64_t d = -2; d <= 2; d++) {
      bool t = cmp_holds_over((BinOp)op, true, d, true, d);
      ok &= t != cmp_holds_over(cmp_negate((BinOp)op), true, d, true, d);
    }
  check("cmp_negate / cmp_holds_over", ok && cmp_holds_over(OP_LT, false, 0, true, -1) &&
                                           !cmp_holds_over(OP_GE, false, 0, true, 5));
  IrVar *x = ir_newvar("x", DT_I64), *y = ir_newvar("y", DT_I64);
  RangeMap r = {0};
  range_push(&r, x, c(0), c(4));
  range_push(&r, x, c(1), c(2));
  check("range_find innermost", range_find(&r, x) == &r.r[1] && !range_find(&r, y) && !range_find(NULL, x));
  check("range_mentions", range_mentions(bin(OP_ADD, v(y), v(x)), &r) && !range_mentions(v(y), &r) &&
                              !range_mentions(v(x), NULL));
}

/* Integers wrap: folding wraps, an interval end that would overflow is unbounded, and
 * prove() refuses a comparison whose sides may wrap. */
static void wrapping(void) {
  int64_t x0;
  check("ir_add folds INT64_MAX + 1 to INT64_MIN", ir_is_const(ir_add(c(INT64_MAX), c(1)), &x0) && x0 == INT64_MIN);
  check("ir_sub folds INT64_MIN - 1 to INT64_MAX", ir_is_const(ir_sub(c(INT64_MIN), c(1)), &x0) && x0 == INT64_MAX);
  check("ir_mul folds INT64_MAX * 2 to -2", ir_is_const(ir_mul(c(INT64_MAX), c(2)), &x0) && x0 == -2);
  check("simplify folds INT64_MAX + 1 to INT64_MIN",
        ir_is_const(simplify(bin(OP_ADD, c(INT64_MAX), c(1)), NULL), &x0) && x0 == INT64_MIN);
  int64_t r;
  check("ir_int_apply wraps and floors", ir_int_apply(OP_ADD, INT64_MAX, 1, &r) && r == INT64_MIN &&
                                            ir_int_apply(OP_DIV, -7, 2, &r) && r == -4 &&
                                            ir_int_apply(OP_MOD, -7, 2, &r) && r == 1 &&
                                            ir_int_apply(OP_DIV, 1, 0, &r) && r == 0);
  check("division is total: x / 0 == x % 0 == 0, INT_MIN / -1 == INT_MIN, INT_MIN % -1 == 0",
        ir_int_floordiv(7, 0) == 0 && ir_int_floormod(-7, 0) == 0 && ir_int_floordiv(INT64_MIN, 0) == 0 &&
            ir_int_floordiv(INT64_MIN, -1) == INT64_MIN && ir_int_floormod(INT64_MIN, -1) == 0 &&
            ir_int_apply(OP_MOD, 5, 0, &r) && r == 0);
  check("ir_floordiv folds a division by zero to 0",
        ir_is_const(ir_floordiv(c(9), c(0)), &x0) && x0 == 0 && ir_is_const(ir_floormod(c(9), c(0)), &x0) && x0 == 0);
  check("ir_mul folds INT64_MIN * -1 to INT64_MIN, ir_sub 0 - INT64_MIN to INT64_MIN",
        ir_is_const(ir_mul(c(INT64_MIN), c(-1)), &x0) && x0 == INT64_MIN &&
            ir_is_const(ir_sub(c(0), c(INT64_MIN)), &x0) && x0 == INT64_MIN);

  IrVar *x = ir_newvar("x", DT_I64), *n = ir_newvar("N", DT_I64);
  Buffer *buf = ir_buffer("L", DT_I64, 1, (Expr *[]){c(4)}, SCOPE_GLOBAL, BUF_INPUT);
  Expr *load = ir_load(buf, (Expr *[]){c(0)});
  RangeMap top = {0}, small = {0};
  range_push(&top, x, c(INT64_MAX - 10), c(11)); /* x in [MAX - 10, MAX] */
  range_push(&small, x, c(0), c(100));
  int64_t lo, hi;
  check("interval: x + 1 near INT64_MAX is unbounded", !const_bounds(bin(OP_ADD, v(x), c(1)), &top, &lo, &hi));
  check("interval: x * 2 near INT64_MAX is unbounded", !const_bounds(bin(OP_MUL, v(x), c(2)), &top, &lo, &hi));
  check("interval: x + INT64_MAX overflows at the top", !const_bounds(bin(OP_ADD, v(x), c(INT64_MAX)), &small, &lo, &hi));
  check("interval: x - 1 near INT64_MAX is exact",
        const_bounds(bin(OP_SUB, v(x), c(1)), &top, &lo, &hi) && lo == INT64_MAX - 11 && hi == INT64_MAX - 1);
  check("interval: (x + 5) / 2 near INT64_MAX is unbounded",
        !const_bounds(bin(OP_DIV, bin(OP_ADD, v(x), c(5)), c(2)), &top, &lo, &hi));
  check("interval: min(x + 5, 0) near INT64_MAX has no lower bound",
        !const_bounds(bin(OP_MIN, bin(OP_ADD, v(x), c(5)), c(0)), &top, &lo, &hi));

  Expr *gt = bin(OP_GT, bin(OP_ADD, v(x), c(1)), v(x)); /* false at x = INT64_MAX */
  check("prove refuses x + 1 > x near INT64_MAX", !prove(gt, &top));
  check("prove: x + 1 > x for x in [0, 100)", prove(gt, &small));
  check("prove: x + 1 > x for a size x", prove(gt, NULL));
  check("prove refuses L + 1 > L for a loaded L", !prove(bin(OP_GT, bin(OP_ADD, load, c(1)), load), NULL));
  check("prove refuses L + 100000001 <= 4 -> L < 0",
        !prove(bin(OP_LE, bin(OP_ADD, load, c(100000001)), c(4)), NULL));
  check("prove: N < N + 1 for a size", prove(bin(OP_LT, v(n), bin(OP_ADD, v(n), c(1))), NULL));

  /* rewrites that hold for integers but not modulo 2^64 stay unless nothing wraps */
  Expr *m = simplify(bin(OP_MIN, bin(OP_ADD, load, c(1)), load), NULL);
  check("simplify keeps min(L + 1, L) for a loaded L", m->kind == E_BIN && m->op == OP_MIN);
  check("simplify: min(x + 1, x) is x in [0, 100)", simplify(bin(OP_MIN, bin(OP_ADD, v(x), c(1)), v(x)), &small)->kind == E_VAR);
  Expr *d = simplify(bin(OP_DIV, bin(OP_ADD, bin(OP_MUL, load, c(3)), c(1)), c(3)), NULL);
  check("simplify keeps (L*3 + 1) / 3 for a loaded L", d->kind == E_BIN && d->op == OP_DIV);
  check("simplify: (x*3 + 1) / 3 is x in [0, 100)",
        simplify(bin(OP_DIV, bin(OP_ADD, bin(OP_MUL, v(x), c(3)), c(1)), c(3)), &small)->kind == E_VAR);
  Expr *md = simplify(bin(OP_MOD, bin(OP_ADD, bin(OP_MUL, load, c(3)), c(1)), c(3)), NULL);
  check("simplify keeps (L*3 + 1) % 3 for a loaded L", md->kind == E_BIN && md->op == OP_MOD);
  check("simplify: (L*4 + 1) % 4 is 1 (4 divides 2^64)",
        ir_is_const(simplify(bin(OP_MOD, bin(OP_ADD, bin(OP_MUL, load, c(4)), c(1)), c(4)), NULL), &x0) && x0 == 1);
}

int main(void) {
  unit_rng = 0x2545F4914F6CDD1Dull;
  randomized();
  symbolic();
  helpers();
  wrapping();
  return failures != 0;
}
