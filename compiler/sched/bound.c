/* bound.c — the arithmetic behind bound inference: an exact normalizer for affine
 * integer index expressions and interval evaluation over loop ranges.
 *
 * Index expressions are sums of terms; bnd_simplify rewrites them as
 * `t1*c1 + t2*c2 + ... + c` so that differences of regions fold to constants.
 * Intervals (texc.h Interval, inclusive, NULL = unbounded) are symbolic: a var that is
 * not relaxed stays in the endpoints. Everything here is exact or a superset; nothing
 * ever narrows a set of values. */
#include "sched_internal.h"

void relax_add(Relax *r, IrVar *v, Expr *ext) { range_push(r, v, ir_int(0), ext); }

/* ---- linear forms ---------------------------------------------------- */

/* texc.h's LinForm (simplify.c), all of dtype DT. Atoms are simplified non-affine
 * expressions; a constant too large to scale safely stays an atom. */
typedef LinForm Lin;

static Expr *simp_node(Expr *e);

/* Whether lin_build takes E apart (a sum, a difference, a product with a constant, a
 * negation, all of dtype DT). */
static bool affine_node(const Expr *e, DType dt) {
  if (e->dtype != dt) return false;
  if (e->kind == E_UN) return e->op == OP_NEG;
  if (e->kind != E_BIN || e->a->dtype != dt || e->b->dtype != dt) return false;
  if (e->op == OP_ADD || e->op == OP_SUB) return true;
  return e->op == OP_MUL && (ir_is_const(e->a, NULL) || ir_is_const(e->b, NULL));
}

/* Add SCALE * E to L. SIMP: simplify the atoms first; false when E is already simplified
 * (re-simplifying there made nested min/max exponential). */
/* SCALE * V when it is small enough that sums of such terms cannot overflow. */
static bool small_product(int64_t scale, int64_t v, int64_t *p) {
  const int64_t limit = (int64_t)1 << 40;
  return !__builtin_mul_overflow(scale, v, p) && *p > -limit && *p < limit;
}

static void lin_build(Lin *l, Expr *e, int64_t scale, bool simp) {
  int64_t v, p;
  if (ir_is_const(e, &v) && e->dtype == l->dt) {
    if (small_product(scale, v, &p)) l->c += p;
    else linform_add(l, e, scale); /* a huge constant stays an opaque atom */
    return;
  }
  if (affine_node(e, l->dt) && e->kind == E_BIN) {
    switch (e->op) {
    case OP_ADD: lin_build(l, e->a, scale, simp); lin_build(l, e->b, scale, simp); return;
    case OP_SUB: lin_build(l, e->a, scale, simp); lin_build(l, e->b, -scale, simp); return;
    case OP_MUL:
      if (ir_is_const(e->b, &v) && small_product(scale, v, &p)) { lin_build(l, e->a, p, simp); return; }
      if (ir_is_const(e->a, &v) && small_product(scale, v, &p)) { lin_build(l, e->b, p, simp); return; }
      break;
    default: break;
    }
  }
  if (affine_node(e, l->dt) && e->kind == E_UN) {
    lin_build(l, e->a, -scale, simp);
    return;
  }
  if (!simp) {
    linform_add(l, e, scale);
    return;
  }
  Expr *a = simp_node(e);
  if (ir_is_const(a, &v) && a->dtype == l->dt) l->c += scale * v;
  else if (affine_node(a, l->dt)) lin_build(l, a, scale, true); /* simplification exposed an affine form */
  else linform_add(l, a, scale);
}

static Lin lin_of(Expr *e) {
  Lin l = {0};
  l.dt = e->dtype;
  lin_build(&l, e, 1, true);
  return l;
}

static Expr *scaled(Expr *atom, int64_t c, DType dt) {
  return c == 1 ? atom : ir_bin(OP_MUL, atom, ir_const(dt, c));
}

/* Rebuild: positive terms, then the constant, then subtracted terms. */
static Expr *lin_expr(const Lin *l) {
  Expr *r = NULL;
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef > 0) {
      Expr *t = scaled(l->t[i].atom, l->t[i].coef, l->dt);
      r = r ? ir_bin(OP_ADD, r, t) : t;
    }
  if (l->c > 0 || (!r && l->c == 0)) r = r ? ir_bin(OP_ADD, r, ir_const(l->dt, l->c)) : ir_const(l->dt, l->c);
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef < 0) {
      Expr *t = scaled(l->t[i].atom, -l->t[i].coef, l->dt);
      r = (r && !(ir_is_const(r, NULL) && r->ival == 0)) ? ir_bin(OP_SUB, r, t) : ir_un(OP_NEG, t);
    }
  if (l->c < 0) r = r ? ir_bin(OP_SUB, r, ir_const(l->dt, -l->c)) : ir_const(l->dt, l->c);
  return r;
}

/* A - B as a constant, when it is one. */
static bool const_diff(Expr *a, Expr *b, int64_t *d) {
  if (!a || !b || a->dtype != b->dtype || !dtype_is_int(a->dtype)) return false;
  Lin l = {0};
  l.dt = a->dtype;
  lin_build(&l, ir_bin(OP_SUB, a, b), 1, false); /* A and B are simplified already */
  if (!linform_is_const(&l)) return false;
  *d = l.c;
  return true;
}

/* (sum c_i t_i + c) / d or % d with every c_i divisible by d. */
static bool lin_divisible(const Lin *l, int64_t d) {
  for (int i = 0; i < l->n; i++)
    if (l->t[i].coef % d) return false;
  return true;
}

static Expr *simp_divmod(Expr *e, Expr *a, Expr *b) {
  int64_t d;
  if (!ir_is_const(b, &d) || d <= 0) return ir_bin((BinOp)e->op, a, b);
  Lin l = lin_of(a);
  if (lin_divisible(&l, d)) {
    /* floor((d*x + c) / d) = x + floor(c / d); (d*x + c) % d = c mod d */
    if (e->op == OP_MOD) return ir_const(e->dtype, l.c - arith_floordiv(l.c, d) * d);
    for (int i = 0; i < l.n; i++) l.t[i].coef /= d;
    l.c = arith_floordiv(l.c, d);
    return lin_expr(&l);
  }
  if (e->op == OP_MOD) { /* drop terms that are multiples of d */
    Lin r = {0};
    r.dt = l.dt;
    for (int i = 0; i < l.n; i++)
      if (l.t[i].coef % d) linform_add(&r, l.t[i].atom, l.t[i].coef);
    r.c = l.c - arith_floordiv(l.c, d) * d;
    return ir_bin(OP_MOD, lin_expr(&r), b);
  }
  return ir_bin(OP_DIV, a, b);
}

/* Simplify a binary node whose operands are already simplified. */
static Expr *simp_bin(Expr *e, Expr *a, Expr *b) {
  int64_t d, x, y;
  switch (e->op) {
  case OP_DIV:
  case OP_MOD:
    if (dtype_is_int(e->dtype)) return simp_divmod(e, a, b);
    break;
  case OP_MIN:
  case OP_MAX:
    if (const_diff(a, b, &d)) return (d <= 0) == (e->op == OP_MIN) ? a : b;
    break;
  case OP_AND:
  case OP_OR:
    if (ir_is_const(a, &x)) return (x != 0) == (e->op == OP_AND) ? b : a;
    if (ir_is_const(b, &y)) return (y != 0) == (e->op == OP_AND) ? a : b;
    break;
  default:
    if (e->op >= OP_EQ && e->op <= OP_GE && const_diff(a, b, &d)) /* d = a - b */
      return ir_const(DT_BOOL, cmp_holds_over((BinOp)e->op, true, d, true, d));
    break;
  }
  Expr *n = ir_bin((BinOp)e->op, a, b);
  n->dtype = e->dtype;
  return n;
}

/* Simplify the children of a node that is not itself affine. */
static Expr *simp_node(Expr *e) {
  int64_t v;
  switch (e->kind) {
  case E_INT:
  case E_FLOAT:
  case E_VAR: return e;
  case E_BIN: return simp_bin(e, bnd_simplify(e->a), bnd_simplify(e->b));
  case E_SELECT: {
    Expr *c = bnd_simplify(e->a);
    if (ir_is_const(c, &v)) return bnd_simplify(v ? e->b : e->c);
    return ir_select(c, bnd_simplify(e->b), bnd_simplify(e->c));
  }
  case E_UN: {
    Expr *a = bnd_simplify(e->a);
    if (e->op == OP_NOT && ir_is_const(a, &v)) return ir_const(DT_BOOL, !v);
    Expr *n = ir_un((UnOp)e->op, a);
    n->dtype = e->dtype;
    return n;
  }
  default: break;
  }
  Expr *c = xalloc(sizeof *c);
  *c = *e;
  if (e->a) c->a = bnd_simplify(e->a);
  if (e->nargs) {
    c->args = xalloc(sizeof(Expr *) * (size_t)e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = bnd_simplify(e->args[i]);
  }
  return c;
}

Expr *bnd_simplify(Expr *e) {
  if (!e) return NULL;
  if (dtype_is_int(e->dtype) && affine_node(e, e->dtype)) {
    Lin l = lin_of(e);
    return lin_expr(&l);
  }
  return simp_node(e);
}

Expr *bnd_min(Expr *a, Expr *b) {
  if (!a || !b) return NULL;
  return simp_bin(&(Expr){.kind = E_BIN, .op = OP_MIN, .dtype = a->dtype}, a, b);
}

Expr *bnd_max(Expr *a, Expr *b) {
  if (!a || !b) return NULL;
  return simp_bin(&(Expr){.kind = E_BIN, .op = OP_MAX, .dtype = a->dtype}, a, b);
}

/* ---- intervals ------------------------------------------------------- */

static Interval unbounded(void) { return (Interval){NULL, NULL}; }

static Expr *add_or_null(Expr *a, Expr *b) { return a && b ? ir_bin(OP_ADD, a, b) : NULL; }

/* C * I for a constant C. */
static Interval iv_scale(Interval i, int64_t c, DType dt) {
  Expr *k = ir_const(dt, c);
  Expr *lo = i.min ? ir_bin(OP_MUL, i.min, k) : NULL, *hi = i.max ? ir_bin(OP_MUL, i.max, k) : NULL;
  if (c >= 0) return (Interval){lo, hi};
  return (Interval){hi, lo};
}

static Interval atom_interval(Expr *e, const Relax *r);

/* Interval of an affine form: term by term. */
static Interval lin_interval(const Lin *l, const Relax *r) {
  Interval acc = {ir_const(l->dt, l->c), ir_const(l->dt, l->c)};
  for (int i = 0; i < l->n; i++) {
    if (l->t[i].coef == 0) continue;
    Interval t = atom_interval(l->t[i].atom, r);
    t = iv_scale(t, l->t[i].coef, l->dt);
    acc.min = add_or_null(acc.min, t.min);
    acc.max = add_or_null(acc.max, t.max);
  }
  return acc;
}

static bool interval_consts(Interval i, int64_t *lo, int64_t *hi) {
  return ir_is_const(i.min, lo) && ir_is_const(i.max, hi);
}

/* A * B when both have constant bounds. */
static Interval mul_interval(Interval a, Interval b, DType dt) {
  int64_t al, ah, bl, bh, lo, hi;
  if (!interval_consts(a, &al, &ah) || !interval_consts(b, &bl, &bh) ||
      !arith_mul_bounds(al, ah, bl, bh, &lo, &hi))
    return unbounded();
  return (Interval){ir_const(dt, lo), ir_const(dt, hi)};
}

static Interval divmod_interval(Expr *e, const Relax *r) {
  int64_t d, lo, hi;
  if (!ir_is_const(e->b, &d) || d <= 0) return unbounded();
  Interval a = bnd_interval(e->a, r);
  if (e->op == OP_DIV)
    return (Interval){a.min ? ir_floordiv(a.min, e->b) : NULL, a.max ? ir_floordiv(a.max, e->b) : NULL};
  if (!interval_consts(a, &lo, &hi)) lo = 0, hi = d; /* spans two periods: [0, d - 1] */
  arith_mod_bounds(lo, hi, d, &lo, &hi);
  return (Interval){ir_const(e->dtype, lo), ir_const(e->dtype, hi)};
}

/* Interval of a non-affine expression (or a var). */
static Interval atom_interval(Expr *e, const Relax *r) {
  if (!range_mentions(e, r)) return (Interval){e, e};
  if (e->kind == E_VAR) {
    Expr *ext = range_find(r, e->var)->extent;
    return (Interval){ir_const(e->dtype, 0), ir_sub(ext, ir_const(e->dtype, 1))};
  }
  if (!dtype_is_int(e->dtype)) return unbounded();
  if (e->kind == E_SELECT) {
    Interval a = bnd_interval(e->b, r), b = bnd_interval(e->c, r);
    return (Interval){bnd_min(a.min, b.min), bnd_max(a.max, b.max)};
  }
  if (e->kind != E_BIN) return unbounded();
  switch (e->op) {
  case OP_DIV:
  case OP_MOD: return divmod_interval(e, r);
  case OP_MIN:
  case OP_MAX: {
    Interval a = bnd_interval(e->a, r), b = bnd_interval(e->b, r);
    if (e->op == OP_MIN) return (Interval){bnd_min(a.min, b.min), bnd_min(a.max, b.max)};
    return (Interval){bnd_max(a.min, b.min), bnd_max(a.max, b.max)};
  }
  case OP_MUL: return mul_interval(bnd_interval(e->a, r), bnd_interval(e->b, r), e->dtype);
  default: return unbounded();
  }
}

Interval bnd_interval(Expr *e, const Relax *r) {
  e = bnd_simplify(e);
  if (!range_mentions(e, r)) return (Interval){e, e};
  Interval i;
  if (dtype_is_int(e->dtype)) {
    Lin l = lin_of(e);
    i = lin_interval(&l, r);
  } else {
    i = atom_interval(e, r);
  }
  return (Interval){bnd_simplify(i.min), bnd_simplify(i.max)};
}

bool bnd_prove_le(Expr *a, Expr *b, const Relax *r) {
  int64_t lo;
  Interval d = bnd_interval(ir_bin(OP_SUB, b, a), r);
  if (ir_is_const(d.min, &lo) && lo >= 0) return true;
  return prove(ir_bin(OP_LE, a, b), r); /* the shared simplifier may know more (arith.c) */
}

bool bnd_loop_free(const Expr *e, const Kernel *k) {
  if (!e) return false;
  if (e->kind == E_VAR) {
    for (int i = 0; i < k->nsizes; i++)
      if (k->sizes[i] == e->var) return true;
    return false;
  }
  if (e->kind == E_LOAD) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!bnd_loop_free(e->args[i], k)) return false;
  return (!e->a || bnd_loop_free(e->a, k)) && (!e->b || bnd_loop_free(e->b, k)) &&
         (!e->c || bnd_loop_free(e->c, k));
}
