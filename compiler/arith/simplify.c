/* simplify.c — the canonicalising simplifier for integer index arithmetic, and the
 * statement simplifier (guards, empty and unit loops).
 *
 * i64 expressions are brought to a linear form `c + k1*t1 + k2*t2 + ...` whose atoms
 * t are variables or non-linear simplified subexpressions (x*y, floordiv, min, loads),
 * each appearing once, in order of first appearance. That form makes
 * `(io*32 + ii) - io*32` into `ii` and lets the interval analysis be exact. Every rule
 * is exact: integer `/` and `%` are floor division and modulo; comparisons, min and max
 * are decided only when prove() shows it over the ranges. Index arithmetic is assumed
 * not to overflow i64; narrower integers are only constant-folded (with wrapping), and
 * floats only where the folded value is what the machine computes. */
#include "arith/arith_impl.h"

#include <string.h>

/* Terms with coefficient 0 are dropped on output. */
static Expr *simp(Expr *e, const RangeMap *r);

bool arith_wrapped;

/* Wrapping + and *, noting when the integer result differs. */
static int64_t wadd(int64_t a, int64_t b) {
  int64_t r;
  arith_wrapped |= __builtin_add_overflow(a, b, &r);
  return r;
}
static int64_t wmul(int64_t a, int64_t b) {
  int64_t r;
  arith_wrapped |= __builtin_mul_overflow(a, b, &r);
  return r;
}

/* ---- linear forms ---------------------------------------------------- */

void linform_add(LinForm *l, Expr *atom, int64_t coef) {
  for (int i = 0; i < l->n; i++)
    if (ir_equal(l->t[i].atom, atom)) {
      l->t[i].coef = wadd(l->t[i].coef, coef);
      return;
    }
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 4;
    LinTerm *t = xalloc(sizeof *t * (size_t)cap);
    if (l->n) memcpy(t, l->t, sizeof *t * (size_t)l->n);
    l->t = t;
    l->cap = cap;
  }
  l->t[l->n++] = (LinTerm){atom, coef};
}

bool linform_is_const(const LinForm *l) {
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef != 0) return false;
  return true;
}

/* L += COEF * ATOM with constant atoms folded into c. */
static void lin_term(LinForm *l, Expr *atom, int64_t coef) {
  int64_t v;
  if (ir_is_const(atom, &v)) l->c = wadd(l->c, wmul(v, coef));
  else linform_add(l, atom, coef);
}

/* L += K * O */
static void lin_addk(LinForm *l, const LinForm *o, int64_t k) {
  l->c = wadd(l->c, wmul(o->c, k));
  for (int i = 0; i < o->n; i++) lin_term(l, o->t[i].atom, wmul(o->t[i].coef, k));
}

/* Split an already simplified i64 expression into its linear form (no rewriting of atoms). */
static void lin_split(LinForm *l, Expr *e, int64_t k) {
  int64_t v;
  if (e->kind == E_BIN && e->op == OP_ADD) {
    lin_split(l, e->a, k);
    lin_split(l, e->b, k);
  } else if (e->kind == E_BIN && e->op == OP_SUB) {
    lin_split(l, e->a, k);
    lin_split(l, e->b, wmul(k, -1));
  } else if (e->kind == E_BIN && e->op == OP_MUL && ir_is_const(e->b, &v)) {
    lin_split(l, e->a, wmul(k, v));
  } else if (e->kind == E_BIN && e->op == OP_MUL && ir_is_const(e->a, &v)) {
    lin_split(l, e->b, wmul(k, v));
  } else if (e->kind == E_UN && e->op == OP_NEG) {
    lin_split(l, e->a, wmul(k, -1));
  } else {
    lin_term(l, e, k);
  }
}

static bool is_div_by(const Expr *e, BinOp op, int64_t *c) {
  return e->kind == E_BIN && e->op == (int)op && ir_is_const(e->b, c) && *c > 0;
}

/* floordiv(x, c)*c*k + floormod(x, c)*k  ->  x*k: one pass over the terms. */
static void lin_merge_divmod(LinForm *l) {
  int64_t c, c2;
  for (int i = 0; i < l->n; i++) {
    LinTerm *d = &l->t[i];
    if (d->coef == 0 || !is_div_by(d->atom, OP_DIV, &c) || d->coef % c != 0) continue;
    for (int j = 0; j < l->n; j++) {
      LinTerm *m = &l->t[j];
      if (m->coef != d->coef / c || !is_div_by(m->atom, OP_MOD, &c2) || c2 != c ||
          !ir_equal(m->atom->a, d->atom->a))
        continue;
      int64_t k = m->coef;
      Expr *x = d->atom->a;
      d->coef = m->coef = 0;
      lin_split(l, x, k);
      break;
    }
  }
}

static Expr *term_expr(Expr *atom, int64_t k) {
  return k == 1 ? atom : ir_bin(OP_MUL, atom, ir_int(k));
}

/* Back to an expression: positive terms first, then the constant; `5 - x` when every
 * term is negative. */
static Expr *lin_expr(LinForm *l) {
  lin_merge_divmod(l);
  Expr *e = NULL;
  bool any_pos = false;
  for (int i = 0; i < l->n; i++) any_pos |= l->t[i].coef > 0;
  if (!any_pos && l->c != 0) e = ir_int(l->c);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < l->n; i++) {
      int64_t k = l->t[i].coef;
      if (k == 0 || (pass == 0) != (k > 0)) continue;
      if (!e && k > 0) e = term_expr(l->t[i].atom, k);
      else if (!e) e = k == -1 ? ir_un(OP_NEG, l->t[i].atom) : ir_bin(OP_MUL, l->t[i].atom, ir_int(k));
      else if (k > 0) e = ir_bin(OP_ADD, e, term_expr(l->t[i].atom, k));
      else e = ir_bin(OP_SUB, e, term_expr(l->t[i].atom, wmul(k, -1)));
    }
  if (!e) return ir_int(l->c);
  if (!any_pos) return e;
  if (l->c > 0) return ir_bin(OP_ADD, e, ir_int(l->c));
  if (l->c < 0 && l->c != INT64_MIN) return ir_bin(OP_SUB, e, ir_int(-l->c));
  if (l->c < 0) return ir_bin(OP_ADD, e, ir_int(l->c));
  return e;
}

static LinForm lin_of_simplified(Expr *e) {
  LinForm l = {0};
  lin_split(&l, e, 1);
  return l;
}

/* ---- integer arithmetic ---------------------------------------------- */

/* Constant bounds of a linear form over the ranges (none without ranges). */
static bool lin_bounds(LinForm *l, const RangeMap *r, int64_t *lo, int64_t *hi) {
  if (linform_is_const(l)) {
    *lo = *hi = l->c;
    return true;
  }
  return r && r->n && const_bounds(lin_expr(l), r, lo, hi);
}

/* floordiv(A, c) for a constant c > 0: terms that are multiples of c leave the division. */
static Expr *simp_div_const(Expr *a, int64_t c, const RangeMap *r) {
  LinForm la = lin_of_simplified(a), q = {0}, rest = {0};
  int64_t lo, hi, c2;
  for (int i = 0; i < la.n; i++) {
    if (la.t[i].coef % c == 0) lin_term(&q, la.t[i].atom, la.t[i].coef / c);
    else lin_term(&rest, la.t[i].atom, la.t[i].coef);
  }
  rest.c = la.c;
  /* floor((c*q + rest) / c) = q + floor(rest / c) holds for integers: A must not wrap */
  if (!linform_is_const(&q) || linform_is_const(&rest)) {
    if (!arith_no_wrap(a, r)) return ir_bin(OP_DIV, a, ir_int(c));
  }
  if (lin_bounds(&rest, r, &lo, &hi) && ir_int_floordiv(lo, c) == ir_int_floordiv(hi, c)) {
    q.c = wadd(q.c, ir_int_floordiv(lo, c));
    return lin_expr(&q);
  }
  if (linform_is_const(&rest)) return lin_expr(&q); /* unreachable: constants always fold */
  Expr *re = lin_expr(&rest);
  Expr *d;
  if (is_div_by(re, OP_DIV, &c2) && c2 <= INT64_MAX / c)
    d = ir_bin(OP_DIV, re->a, ir_int(c * c2)); /* (x / c2) / c == x / (c2*c) */
  else
    d = ir_bin(OP_DIV, re, ir_int(c));
  lin_term(&q, d, 1);
  return lin_expr(&q);
}

/* floormod(A, c) for a constant c > 0. */
static Expr *simp_mod_const(Expr *a, int64_t c, const RangeMap *r) {
  LinForm la = lin_of_simplified(a), rest = {0};
  int64_t lo, hi, c2;
  bool dropped = false;
  for (int i = 0; i < la.n; i++)
    if (la.t[i].coef % c != 0) lin_term(&rest, la.t[i].atom, la.t[i].coef);
    else dropped |= la.t[i].coef != 0;
  rest.c = la.c;
  /* (c*q + rest) mod c = rest mod c for integers, and modulo 2^64 when c divides it */
  if ((dropped && (c & (c - 1))) && !arith_no_wrap(a, r)) return ir_bin(OP_MOD, a, ir_int(c));
  if (linform_is_const(&rest)) return ir_int(ir_int_floormod(rest.c, c));
  if (lin_bounds(&rest, r, &lo, &hi) && ir_int_floordiv(lo, c) == ir_int_floordiv(hi, c)) {
    rest.c = wadd(rest.c, (int64_t)(0 - (uint64_t)wmul(ir_int_floordiv(lo, c), c)));
    return lin_expr(&rest);
  }
  Expr *re = lin_expr(&rest);
  if (is_div_by(re, OP_MOD, &c2) && c2 % c == 0) re = re->a; /* (x % kc) % c == x % c */
  return ir_bin(OP_MOD, re, ir_int(c));
}

/* The number of nodes of E, counted up to LIMIT (then LIMIT). */
static int size_upto(const Expr *e, int limit) {
  if (!e || limit <= 0) return 0;
  int n = 1;
  n += size_upto(e->a, limit - n);
  n += size_upto(e->b, limit - n);
  n += size_upto(e->c, limit - n);
  for (int i = 0; i < e->nargs && n < limit; i++) n += size_upto(e->args[i], limit - n);
  return n < limit ? n : limit;
}

/* Sides larger than this are not compared over the ranges: the interval analysis is
 * quadratic in their size and runs at every level of a min/max nest, so a deep nest of
 * clamps that do not fold would cost cubic time. Keeping the min/max is always exact. */
enum { MINMAX_PROOF_NODES = 96 };

/* min / max: decided when the order of the two sides is provable. */
static Expr *simp_minmax(BinOp op, Expr *a, Expr *b, const RangeMap *r) {
  if (ir_equal(a, b)) return a;
  if (r && size_upto(a, MINMAX_PROOF_NODES) + size_upto(b, MINMAX_PROOF_NODES) >= MINMAX_PROOF_NODES)
    r = NULL; /* constants still decide */
  LinForm d = lin_of_simplified(a);
  LinForm lb = lin_of_simplified(b);
  lin_addk(&d, &lb, -1);
  int64_t lo, hi;
  /* a - b orders a and b only when neither wraps */
  if (lin_bounds(&d, r, &lo, &hi) && arith_no_wrap(a, r) && arith_no_wrap(b, r)) {
    if (hi <= 0) return op == OP_MIN ? a : b;
    if (lo >= 0) return op == OP_MIN ? b : a;
  }
  return ir_bin(op, a, b);
}

/* An i64 expression whose operands are already simplified. */
static Expr *simp_i64_bin(Expr *e, Expr *a, Expr *b, const RangeMap *r) {
  int64_t c;
  LinForm l = {0};
  switch (e->op) {
  case OP_ADD:
  case OP_SUB:
    lin_split(&l, a, 1);
    lin_split(&l, b, e->op == OP_ADD ? 1 : -1);
    return lin_expr(&l);
  case OP_MUL:
    if (ir_is_const(b, &c) || ir_is_const(a, &c)) {
      lin_split(&l, ir_is_const(b, NULL) ? a : b, c);
      return lin_expr(&l);
    }
    return ir_bin(OP_MUL, a, b);
  case OP_DIV:
    if (ir_is_const(b, &c) && c > 0) return simp_div_const(a, c, r);
    if (ir_is_const(a, NULL) && ir_is_const(b, &c) && c != 0) return ir_int(ir_int_floordiv(a->ival, c));
    return ir_bin(OP_DIV, a, b);
  case OP_MOD:
    if (ir_is_const(b, &c) && c > 0) return simp_mod_const(a, c, r);
    if (ir_is_const(a, NULL) && ir_is_const(b, &c) && c != 0) return ir_int(ir_int_floormod(a->ival, c));
    return ir_bin(OP_MOD, a, b);
  case OP_MIN:
  case OP_MAX: return simp_minmax(e->op, a, b, r);
  default: return ir_bin(e->op, a, b);
  }
}

/* ---- other dtypes ----------------------------------------------------- */

/* Fold OP over integer constants of dtype T (not i64-specific rules). */
static Expr *fold_int(BinOp op, DType t, int64_t x, int64_t y) {
  bool u = !dtype_is_signed(t);
  int64_t r;
  switch (op) {
  case OP_ADD:
  case OP_SUB:
  case OP_MUL:
    r = op == OP_ADD ? wadd(x, y) : op == OP_MUL ? wmul(x, y) : (int64_t)((uint64_t)x - (uint64_t)y);
    int64_t exact;
    arith_wrapped |= (op == OP_SUB && __builtin_sub_overflow(x, y, &exact)) || dtype_wrap(t, r) != r;
    return ir_const(t, dtype_wrap(t, r));
  case OP_DIV: return y ? ir_const(t, dtype_wrap(t, u ? (int64_t)((uint64_t)x / (uint64_t)y) : ir_int_floordiv(x, y))) : NULL;
  case OP_MOD: return y ? ir_const(t, dtype_wrap(t, u ? (int64_t)((uint64_t)x % (uint64_t)y) : ir_int_floormod(x, y))) : NULL;
  case OP_MIN: return ir_const(t, x < y ? x : y);
  case OP_MAX: return ir_const(t, x > y ? x : y);
  case OP_EQ: return ir_const(DT_BOOL, x == y);
  case OP_NE: return ir_const(DT_BOOL, x != y);
  case OP_LT: return ir_const(DT_BOOL, x < y);
  case OP_LE: return ir_const(DT_BOOL, x <= y);
  case OP_GT: return ir_const(DT_BOOL, x > y);
  case OP_GE: return ir_const(DT_BOOL, x >= y);
  case OP_AND: return ir_const(DT_BOOL, x && y);
  case OP_OR: return ir_const(DT_BOOL, x || y);
  default: return NULL;
  }
}

/* Fold OP over float constants of dtype T, rounding as the machine does (f16: no fold). */
static Expr *fold_float(BinOp op, DType t, double x, double y) {
  if (t == DT_F16) return NULL;
  bool f = t == DT_F32;
  double v;
  switch (op) {
  case OP_ADD: v = f ? (double)((float)x + (float)y) : x + y; break;
  case OP_SUB: v = f ? (double)((float)x - (float)y) : x - y; break;
  case OP_MUL: v = f ? (double)((float)x * (float)y) : x * y; break;
  case OP_DIV: v = f ? (double)((float)x / (float)y) : x / y; break;
  case OP_EQ: return ir_const(DT_BOOL, x == y);
  case OP_NE: return ir_const(DT_BOOL, x != y);
  case OP_LT: return ir_const(DT_BOOL, x < y);
  case OP_LE: return ir_const(DT_BOOL, x <= y);
  case OP_GT: return ir_const(DT_BOOL, x > y);
  case OP_GE: return ir_const(DT_BOOL, x >= y);
  default: return NULL;
  }
  return ir_float(t, v);
}

/* && and || with a constant side. */
static Expr *simp_logic(BinOp op, Expr *a, Expr *b) {
  int64_t x;
  bool and = op == OP_AND;
  if (ir_is_const(a, &x)) return (x != 0) == and ? b : ir_const(DT_BOOL, !and);
  if (ir_is_const(b, &x) && (x != 0) == and) return a; /* b is the identity */
  if (ir_equal(a, b)) return a;
  return ir_bin(op, a, b);
}

/* A comparison: decided when provable over the ranges. */
static Expr *simp_cmp(BinOp op, Expr *a, Expr *b, const RangeMap *r) {
  Expr *c = ir_bin(op, a, b);
  if (!dtype_is_int(a->dtype) || a->dtype != b->dtype) return c;
  if (size_upto(a, MINMAX_PROOF_NODES) + size_upto(b, MINMAX_PROOF_NODES) >= MINMAX_PROOF_NODES)
    return c; /* as for min / max: bounded work per comparison */
  if (prove(c, r)) return ir_const(DT_BOOL, 1);
  if (prove(ir_bin(cmp_negate(op), a, b), r)) return ir_const(DT_BOOL, 0);
  return c;
}

static Expr *simp_bin(Expr *e, const RangeMap *r) {
  Expr *a = simp(e->a, r), *b = simp(e->b, r);
  BinOp op = e->op;
  if (op == OP_AND || op == OP_OR) return simp_logic(op, a, b);
  if (a->kind == E_INT && b->kind == E_INT && a->dtype == b->dtype) {
    Expr *f = fold_int(op, a->dtype, a->ival, b->ival);
    if (f) return f;
  }
  if (a->kind == E_FLOAT && b->kind == E_FLOAT && a->dtype == b->dtype) {
    Expr *f = fold_float(op, a->dtype, a->fval, b->fval);
    if (f) return f;
  }
  if (op >= OP_EQ && op <= OP_GE) return simp_cmp(op, a, b, r);
  if (e->dtype == DT_I64 && a->dtype == DT_I64 && b->dtype == DT_I64)
    return simp_i64_bin(e, a, b, r);
  return ir_bin(op, a, b);
}

static Expr *simp_un(Expr *e, const RangeMap *r) {
  Expr *a = simp(e->a, r);
  if (e->op == OP_NOT) {
    if (a->kind == E_INT) return ir_const(DT_BOOL, a->ival == 0);
    if (a->kind == E_UN && a->op == OP_NOT) return a->a;
    if (a->kind == E_BIN && a->op >= OP_EQ && a->op <= OP_GE && dtype_is_int(a->a->dtype))
      return ir_bin(cmp_negate(a->op), a->a, a->b); /* exact for integers (no NaN) */
    return ir_un(OP_NOT, a);
  }
  if (a->kind == E_INT) return ir_const(a->dtype, dtype_wrap(a->dtype, wmul(a->ival, -1)));
  if (a->kind == E_FLOAT) return ir_float(a->dtype, -a->fval);
  if (a->dtype == DT_I64) {
    LinForm l = {0};
    lin_split(&l, a, -1);
    return lin_expr(&l);
  }
  return ir_un(OP_NEG, a);
}

/* A cast of a constant: integer to integer wraps; float conversions only when exact. */
static Expr *simp_cast(Expr *e, const RangeMap *r) {
  Expr *a = simp(e->a, r);
  DType t = e->dtype;
  if (a->dtype == t) return a;
  if (a->kind == E_INT && (dtype_is_int(t) || t == DT_BOOL))
    return ir_const(t, dtype_wrap(t, a->ival));
  if (a->kind == E_INT && (t == DT_F32 || t == DT_F64) && a->ival > -(1 << 24) &&
      a->ival < (1 << 24))
    return ir_float(t, (double)a->ival);
  if (a->kind == E_FLOAT && t == DT_F64 && a->dtype == DT_F32) return ir_float(t, a->fval);
  return ir_cast(t, a);
}

static Expr *simp_select(Expr *e, const RangeMap *r) {
  Expr *c = simp(e->a, r);
  int64_t v;
  if (ir_is_const(c, &v)) return simp(v ? e->b : e->c, r);
  Expr *a = simp(e->b, r), *b = simp(e->c, r);
  if (ir_equal(a, b)) return a;
  return ir_select(c, a, b);
}

/* Rebuild a node with simplified children (loads, calls). */
static Expr *simp_args(Expr *e, const RangeMap *r) {
  Expr *c = xalloc(sizeof *c);
  *c = *e;
  c->args = xalloc(sizeof(Expr *) * (size_t)(e->nargs ? e->nargs : 1));
  for (int i = 0; i < e->nargs; i++) c->args[i] = simp(e->args[i], r);
  return c;
}

static Expr *simp(Expr *e, const RangeMap *r) {
  switch (e->kind) {
  case E_INT:
  case E_FLOAT:
  case E_VAR: return e;
  case E_BIN: return simp_bin(e, r);
  case E_UN: return simp_un(e, r);
  case E_CAST: return simp_cast(e, r);
  case E_SELECT: return simp_select(e, r);
  case E_LOAD:
  case E_CALL: return simp_args(e, r);
  default: return e;
  }
}

Expr *simplify(Expr *e, const RangeMap *ranges) {
  if (!e) return NULL;
  if (ranges && ranges->n == 0) ranges = NULL;
  return simp(e, ranges);
}

/* ---- statements -------------------------------------------------------- */

static Stmt *simp_stmt(Stmt *s, RangeMap *r);

static Stmt *copy_stmt(const Stmt *s) {
  Stmt *c = xalloc(sizeof *c);
  *c = *s;
  return c;
}

/* Loops of extent 0 vanish; CPU loops of extent 1 become their body with var := min
 * (GPU-bound loops stay: they carry the launch configuration). */
static Stmt *simp_for(Stmt *s, RangeMap *r) {
  Expr *min = simplify(s->min, r), *ext = simplify(s->extent, r);
  int64_t n;
  if (ir_is_const(ext, &n) && n <= 0) return NULL;
  if (!ir_is_const(ext, NULL) && prove(ir_bin(OP_LE, ext, ir_int(0)), r)) return NULL;
  if (ir_is_const(ext, &n) && n == 1 && !forkind_is_gpu(s->for_kind))
    return simp_stmt(ir_stmt_subst(s->body, &s->var, &min, 1), r);
  range_push(r, s->var, min, ext);
  Stmt *body = simp_stmt(s->body, r);
  range_pop(r);
  if (!body) return NULL;
  Stmt *c = copy_stmt(s);
  c->min = min;
  c->extent = ext;
  c->body = body;
  return c;
}

static Stmt *simp_if(Stmt *s, RangeMap *r) {
  Expr *cond = simplify(s->cond, r);
  int64_t v;
  if (ir_is_const(cond, &v)) return simp_stmt(v ? s->body : s->els, r);
  Stmt *then = simp_stmt(s->body, r), *els = simp_stmt(s->els, r);
  if (!then && !els) return NULL;
  if (!then) return ir_if(simplify(ir_un(OP_NOT, cond), r), els, NULL);
  Stmt *c = ir_if(cond, then, els);
  c->loc = s->loc;
  return c;
}

static Stmt *simp_stmt(Stmt *s, RangeMap *r) {
  if (!s) return NULL;
  Stmt *c;
  switch (s->kind) {
  case S_FOR: return simp_for(s, r);
  case S_IF: return simp_if(s, r);
  case S_STORE:
    c = copy_stmt(s);
    c->args = xalloc(sizeof(Expr *) * (size_t)(s->nargs ? s->nargs : 1));
    for (int i = 0; i < s->nargs; i++) c->args[i] = simplify(s->args[i], r);
    c->value = simplify(s->value, r);
    return c;
  case S_ALLOC:
    c = copy_stmt(s);
    c->body = simp_stmt(s->body, r);
    return c->body ? c : NULL;
  case S_SEQ: {
    Stmt **v = xalloc(sizeof(Stmt *) * (size_t)(s->n ? s->n : 1));
    int n = 0;
    for (int i = 0; i < s->n; i++)
      if ((v[n] = simp_stmt(s->stmts[i], r))) n++;
    return n ? ir_seq(v, n) : NULL;
  }
  default: return s;
  }
}

Stmt *simplify_stmt(Stmt *s) {
  RangeMap r = {0};
  Stmt *out = simp_stmt(s, &r);
  return out ? out : ir_seq(NULL, 0);
}
