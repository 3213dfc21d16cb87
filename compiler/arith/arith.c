/* arith.c — variable ranges, symbolic interval analysis and proofs over integer
 * index expressions.
 *
 * interval_of works on the simplifier's canonical form (every atom appears once in a
 * sum), so that it is exact for affine expressions: each term's extreme values can be
 * taken independently. A variable's range may itself mention outer variables (regions
 * from bound inference); those are relaxed through the entries pushed before it, so the
 * result mentions only variables that are not in the map (fixed points: sizes). */
#include "arith/arith_impl.h"

#include <string.h>

void range_push(RangeMap *m, IrVar *v, Expr *min, Expr *extent) {
  if (m->n == m->cap) {
    int cap = m->cap ? m->cap * 2 : 16;
    VarRange *r = xalloc(sizeof *r * (size_t)cap);
    if (m->n) memcpy(r, m->r, sizeof *r * (size_t)m->n);
    m->r = r;
    m->cap = cap;
  }
  m->r[m->n++] = (VarRange){v, min, extent};
}

void range_pop(RangeMap *m) {
  if (m->n > 0) m->n--;
}

static const Interval UNBOUNDED = {NULL, NULL};

/* ---- shared integer rules ------------------------------------------------ */

bool arith_mul_bounds(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo, int64_t *hi) {
  int64_t p[4];
  if (__builtin_mul_overflow(al, bl, &p[0]) || __builtin_mul_overflow(al, bh, &p[1]) ||
      __builtin_mul_overflow(ah, bl, &p[2]) || __builtin_mul_overflow(ah, bh, &p[3]))
    return false;
  *lo = *hi = p[0];
  for (int i = 1; i < 4; i++) {
    if (p[i] < *lo) *lo = p[i];
    if (p[i] > *hi) *hi = p[i];
  }
  return true;
}

void arith_mod_bounds(int64_t xl, int64_t xh, int64_t c, int64_t *lo, int64_t *hi) {
  if (ir_int_floordiv(xl, c) == ir_int_floordiv(xh, c)) {
    /* wrapping products and differences: the remainders are exact, the base may wrap */
    uint64_t base = (uint64_t)ir_int_floordiv(xl, c) * (uint64_t)c;
    *lo = (int64_t)((uint64_t)xl - base);
    *hi = (int64_t)((uint64_t)xh - base);
  } else {
    *lo = 0;
    *hi = c - 1;
  }
}

BinOp cmp_negate(BinOp op) {
  static const BinOp flip[] = {[OP_EQ] = OP_NE, [OP_NE] = OP_EQ, [OP_LT] = OP_GE,
                               [OP_LE] = OP_GT, [OP_GT] = OP_LE, [OP_GE] = OP_LT};
  return flip[op];
}

bool cmp_holds_over(BinOp op, bool hl, int64_t lo, bool hh, int64_t hi) {
  switch (op) {
  case OP_LT: return hh && hi < 0;
  case OP_LE: return hh && hi <= 0;
  case OP_GT: return hl && lo > 0;
  case OP_GE: return hl && lo >= 0;
  case OP_EQ: return hl && hh && lo == 0 && hi == 0;
  case OP_NE: return (hh && hi < 0) || (hl && lo > 0);
  default: return false;
  }
}

/* Index of V's innermost entry among the first N of M, or -1. */
static int find_range(const RangeMap *m, int n, const IrVar *v) {
  for (int i = n - 1; i >= 0; i--)
    if (m->r[i].var == v) return i;
  return -1;
}

/* Does E mention a variable among the first N entries of M? */
static bool uses_ranged(const Expr *e, const RangeMap *m, int n) {
  if (!e || !m) return false;
  if (e->kind == E_VAR) return find_range(m, n, e->var) >= 0;
  for (int i = 0; i < e->nargs; i++)
    if (uses_ranged(e->args[i], m, n)) return true;
  return uses_ranged(e->a, m, n) || uses_ranged(e->b, m, n) || uses_ranged(e->c, m, n);
}

const VarRange *range_find(const RangeMap *m, const IrVar *v) {
  int j = m ? find_range(m, m->n, v) : -1;
  return j < 0 ? NULL : &m->r[j];
}

bool range_mentions(const Expr *e, const RangeMap *m) { return m && uses_ranged(e, m, m->n); }

/* An interval end: E simplified, or NULL (unbounded) when its linear arithmetic wrapped.
 * Ends are exact integers; a value computed by the machine lies between them only when
 * it did not wrap (sound() below). */
static Expr *simp0(Expr *e) {
  if (!e) return NULL;
  bool saved = arith_wrapped;
  arith_wrapped = false;
  Expr *r = simplify(e, NULL);
  if (arith_wrapped) r = NULL;
  arith_wrapped = saved;
  return r;
}

static void dtype_limits(DType t, int64_t *lo, int64_t *hi) {
  int bits = dtype_bytes(t) * 8;
  bool sgn = dtype_is_signed(t);
  *lo = !sgn ? 0 : bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  *hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - (sgn ? 1 : 0))) - 1;
}

/* Push every variable of E that M does not hold, with the sizes' range. */
static void push_free(Expr *e, RangeMap *m, const RangeMap *held) {
  if (!e) return;
  if (e->kind == E_VAR && !range_find(held, e->var) && !range_find(m, e->var))
    range_push(m, e->var, ir_int(-ARITH_SIZE_MAX), ir_int(2 * ARITH_SIZE_MAX + 1));
  for (int i = 0; i < e->nargs; i++) push_free(e->args[i], m, held);
  push_free(e->a, m, held);
  push_free(e->b, m, held);
  push_free(e->c, m, held);
}

/* Is every value of the end E (over the free variables, sizes) within dtype T? */
static bool end_fits(Expr *e, DType t) {
  int64_t lo, hi, tlo, thi;
  dtype_limits(dtype_is_int(t) ? t : DT_I64, &tlo, &thi);
  if (ir_is_const(e, &lo)) return lo >= tlo && lo <= thi;
  RangeMap m = {0};
  push_free(e, &m, NULL);
  return const_bounds(e, &m, &lo, &hi) && lo >= tlo && hi <= thi;
}

/* Does E compute a linear combination at its top (so that it may wrap there)? */
static bool linear_top(const Expr *e) {
  if (e->kind == E_UN) return e->op == OP_NEG;
  return e->kind == E_BIN && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL);
}

/* I, the interval of E's exact value, as an interval of the value the machine computes:
 * the same when E cannot wrap (both ends fit its dtype), else unbounded. */
static Interval sound(Expr *e, Interval i) {
  if (!linear_top(e) && e->kind != E_CAST) return i;
  if (i.min && i.max && end_fits(i.min, e->dtype) && end_fits(i.max, e->dtype)) return i;
  return (Interval){NULL, NULL};
}

/* Symbolic min/max of two bounds; NULL (unbounded) wins for the outer side. */
static Expr *bmin(Expr *a, Expr *b) { return a && b ? simp0(ir_bin(OP_MIN, a, b)) : NULL; }
static Expr *bmax(Expr *a, Expr *b) { return a && b ? simp0(ir_bin(OP_MAX, a, b)) : NULL; }

static Interval iv(Expr *e, const RangeMap *m, int n);

/* A variable: its range relaxed over the entries pushed before it. */
static Interval iv_var(Expr *e, const RangeMap *m, int n) {
  int j = find_range(m, n, e->var);
  if (j < 0) return (Interval){e, e};
  const VarRange *r = &m->r[j];
  Expr *last = simp0(ir_bin(OP_ADD, r->min, ir_bin(OP_SUB, r->extent, ir_int(1))));
  Interval lo = iv(simp0(r->min), m, j), hi = iv(last, m, j);
  return (Interval){lo.min, hi.max};
}

/* The whole map of the interval_of call in progress: interval_of relaxes one variable
 * at a time, and a variable that is fixed in one step may still range in the next. */
static const RangeMap *all_ranges;

/* Is E known to be non-negative: a constant >= 0, a loop variable whose range starts at a
 * constant >= 0, or a free variable (a size)? */
static bool nonneg_point(Expr *e) {
  int64_t v;
  if (ir_is_const(e, &v)) return v >= 0;
  if (e->kind != E_VAR) return false;
  int j = all_ranges ? find_range(all_ranges, all_ranges->n, e->var) : -1;
  return j < 0 || (ir_is_const(all_ranges->r[j].min, &v) && v >= 0);
}

/* Scale an interval by a constant. */
static Interval iv_scale(Interval a, int64_t k) {
  Expr *lo = a.min ? simp0(ir_bin(OP_MUL, a.min, ir_int(k))) : NULL;
  Expr *hi = a.max ? simp0(ir_bin(OP_MUL, a.max, ir_int(k))) : NULL;
  return k >= 0 ? (Interval){lo, hi} : (Interval){hi, lo};
}

static Interval iv_mul(Expr *e, const RangeMap *m, int n) {
  int64_t k, a0, a1, b0, b1;
  if (ir_is_const(e->b, &k)) return iv_scale(iv(e->a, m, n), k);
  if (ir_is_const(e->a, &k)) return iv_scale(iv(e->b, m, n), k);
  Interval a = sound(e->a, iv(e->a, m, n)), b = sound(e->b, iv(e->b, m, n));
  int64_t lo, hi;
  if (ir_is_const(a.min, &a0) && ir_is_const(a.max, &a1) && ir_is_const(b.min, &b0) &&
      ir_is_const(b.max, &b1))
    return arith_mul_bounds(a0, a1, b0, b1, &lo, &hi) ? (Interval){ir_int(lo), ir_int(hi)} : UNBOUNDED;
  if (!uses_ranged(e->b, m, n) && nonneg_point(e->b))
    return (Interval){a.min ? simp0(ir_bin(OP_MUL, a.min, e->b)) : NULL,
                      a.max ? simp0(ir_bin(OP_MUL, a.max, e->b)) : NULL};
  if (!uses_ranged(e->a, m, n) && nonneg_point(e->a))
    return (Interval){b.min ? simp0(ir_bin(OP_MUL, b.min, e->a)) : NULL,
                      b.max ? simp0(ir_bin(OP_MUL, b.max, e->a)) : NULL};
  return UNBOUNDED;
}

static Interval iv_div(Expr *e, const RangeMap *m, int n) {
  int64_t c;
  if (!ir_is_const(e->b, &c) || c == 0) return UNBOUNDED;
  Interval a = sound(e->a, iv(e->a, m, n));
  Expr *lo = a.min ? simp0(ir_bin(OP_DIV, a.min, e->b)) : NULL;
  Expr *hi = a.max ? simp0(ir_bin(OP_DIV, a.max, e->b)) : NULL;
  return c > 0 ? (Interval){lo, hi} : (Interval){hi, lo};
}

static Interval iv_mod(Expr *e, const RangeMap *m, int n) {
  int64_t c, lo, hi;
  if (!ir_is_const(e->b, &c) || c == 0) return UNBOUNDED;
  Interval a = sound(e->a, iv(e->a, m, n));
  if (c > 0 && ir_is_const(a.min, &lo) && ir_is_const(a.max, &hi)) {
    arith_mod_bounds(lo, hi, c, &lo, &hi);
    return (Interval){ir_int(lo), ir_int(hi)};
  }
  return c > 0 ? (Interval){ir_int(0), ir_int(c - 1)} : (Interval){ir_int(c + 1), ir_int(0)};
}

/* The interval of the canonical expression E over the first N entries of M. */
static Interval iv(Expr *e, const RangeMap *m, int n) {
  if (!e) return UNBOUNDED;
  if (e->dtype == DT_BOOL) return (Interval){ir_const(DT_BOOL, 0), ir_const(DT_BOOL, 1)};
  if (!uses_ranged(e, m, n)) return (Interval){e, e};
  Interval a, b;
  switch (e->kind) {
  case E_VAR: return iv_var(e, m, n);
  case E_UN:
    if (e->op != OP_NEG) return UNBOUNDED;
    return iv_scale(iv(e->a, m, n), -1);
  case E_SELECT:
    a = sound(e->b, iv(e->b, m, n));
    b = sound(e->c, iv(e->c, m, n));
    return (Interval){bmin(a.min, b.min), bmax(a.max, b.max)};
  case E_CAST:
    if (!dtype_is_int(e->a->dtype) || dtype_bytes(e->a->dtype) > dtype_bytes(e->dtype))
      return UNBOUNDED;
    a = sound(e->a, iv(e->a, m, n)); /* the operand wraps at its own width */
    if (e->a->dtype == e->dtype) return a;
    return (Interval){a.min ? simp0(ir_cast(e->dtype, a.min)) : NULL, a.max ? simp0(ir_cast(e->dtype, a.max)) : NULL};
  case E_BIN: break;
  default: return UNBOUNDED;
  }
  switch (e->op) {
  case OP_ADD:
  case OP_SUB:
    a = iv(e->a, m, n);
    b = iv(e->b, m, n);
    if (e->op == OP_SUB) b = iv_scale(b, -1);
    return (Interval){a.min && b.min ? simp0(ir_bin(OP_ADD, a.min, b.min)) : NULL,
                      a.max && b.max ? simp0(ir_bin(OP_ADD, a.max, b.max)) : NULL};
  case OP_MUL: return iv_mul(e, m, n);
  case OP_DIV: return iv_div(e, m, n);
  case OP_MOD: return iv_mod(e, m, n);
  case OP_MIN:
    a = sound(e->a, iv(e->a, m, n));
    b = sound(e->b, iv(e->b, m, n));
    return (Interval){bmin(a.min, b.min), a.max && b.max ? bmin(a.max, b.max)
                                                         : (a.max ? a.max : b.max)};
  case OP_MAX:
    a = sound(e->a, iv(e->a, m, n));
    b = sound(e->b, iv(e->b, m, n));
    return (Interval){a.min && b.min ? bmax(a.min, b.min) : (a.min ? a.min : b.min),
                      bmax(a.max, b.max)};
  default: return UNBOUNDED;
  }
}

/* Relax one variable at a time, innermost first: a range that depends on outer variables
 * ([i*4, i*4 + 4)) first gives bounds over those, which are relaxed next, so that
 * `j - i*4` gets [0, 3] rather than the independent [-28, 31]. */
Interval interval_of(Expr *e, const RangeMap *ranges) {
  if (!e) return UNBOUNDED;
  Expr *s = simplify(e, NULL);
  Interval r = {s, s};
  const RangeMap *saved = all_ranges;
  all_ranges = ranges;
  for (int k = ranges ? ranges->n - 1 : -1; k >= 0; k--) {
    RangeMap one = {&ranges->r[k], 1, 1};
    if (r.min && uses_ranged(r.min, &one, 1)) r.min = iv(r.min, &one, 1).min;
    if (r.max && uses_ranged(r.max, &one, 1)) r.max = iv(r.max, &one, 1).max;
  }
  all_ranges = saved;
  return r;
}

bool const_bounds(Expr *e, const RangeMap *ranges, int64_t *lo, int64_t *hi) {
  Interval i = interval_of(e, ranges);
  int64_t a, b;
  if (!ir_is_const(i.min, &a) || !ir_is_const(i.max, &b)) return false;
  if (lo) *lo = a;
  if (hi) *hi = b;
  return true;
}

/* The logical negation of COND, pushed through comparisons and && / || where exact
 * (integer comparisons only: for floats, NaN makes !(a < b) differ from a >= b). */
static Expr *negate(Expr *c) {
  if (c->kind == E_UN && c->op == OP_NOT) return c->a;
  if (c->kind == E_BIN) {
    bool intcmp = c->op >= OP_EQ && c->op <= OP_GE && !dtype_is_float(c->a->dtype);
    if (intcmp) return ir_bin(cmp_negate(c->op), c->a, c->b);
    if (c->op == OP_AND) return ir_bin(OP_OR, negate(c->a), negate(c->b));
    if (c->op == OP_OR) return ir_bin(OP_AND, negate(c->a), negate(c->b));
  }
  return ir_un(OP_NOT, c);
}

/* Does the machine compute E without wrapping (its value is its linear form's)? */
bool arith_no_wrap(Expr *e, const RangeMap *ranges) {
  if (!linear_top(e) && e->kind != E_CAST) return true; /* an atom: its value is itself */
  Interval i = interval_of(e, ranges);
  return i.min && i.max && end_fits(i.min, e->dtype) && end_fits(i.max, e->dtype);
}

bool arith_never_wraps(Expr *e, const RangeMap *ranges) {
  if (!e) return true;
  if (!linear_top(e)) return true; /* an atom or another operation: its value is its own */
  bool saved = arith_wrapped;
  arith_wrapped = false;
  bool ok = arith_no_wrap(e, ranges) && !arith_wrapped;
  arith_wrapped = saved;
  return ok && arith_never_wraps(e->a, ranges) && arith_never_wraps(e->b, ranges);
}

/* Prove an integer comparison through the interval of the difference of its sides: a
 * OP b is d OP 0 only when neither side wraps and forming d wrapped nothing. */
static bool prove_cmp(Expr *c, const RangeMap *ranges) {
  DType t = c->a->dtype;
  if (t != DT_I64 && t != DT_I32) return false; /* narrower types may wrap */
  bool saved = arith_wrapped;
  arith_wrapped = false;
  bool ok = arith_no_wrap(c->a, ranges) && arith_no_wrap(c->b, ranges);
  Expr *d = ir_sub(t == DT_I64 ? c->a : ir_cast(DT_I64, c->a),
                   t == DT_I64 ? c->b : ir_cast(DT_I64, c->b));
  Interval i = ok ? interval_of(d, ranges) : (Interval){NULL, NULL};
  ok = ok && !arith_wrapped;
  arith_wrapped = saved;
  int64_t lo, hi;
  bool hl = ok && ir_is_const(i.min, &lo), hh = ok && ir_is_const(i.max, &hi);
  return cmp_holds_over(c->op, hl, lo, hh, hi);
}

bool prove(Expr *cond, const RangeMap *ranges) {
  int64_t v;
  if (!cond) return false;
  if (ir_is_const(cond, &v)) return v != 0;
  if (cond->kind == E_UN && cond->op == OP_NOT) {
    Expr *n = negate(cond->a);
    return !(n->kind == E_UN && n->op == OP_NOT) && prove(n, ranges);
  }
  if (cond->kind != E_BIN) return false;
  switch (cond->op) {
  case OP_AND: return prove(cond->a, ranges) && prove(cond->b, ranges);
  case OP_OR: return prove(cond->a, ranges) || prove(cond->b, ranges);
  case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
    return dtype_is_int(cond->a->dtype) && prove_cmp(cond, ranges);
  default: return false;
  }
}
