/* check_bounds.c — the checker's bounds prover: is every tensor access inside its shape?
 *
 * Index expressions become affine forms (BForm) over axes, sizes and opaque atoms. An
 * access is in bounds when idx >= 0 and extent - 1 - idx >= 0 can be shown from the
 * axis ranges (narrowed by the guards of enclosing `c ? a : b`), or from one guard
 * fact g >= 0 with idx - g >= 0. Symbolic sizes are assumed >= 1. Everything is
 * checked for overflow: a form that overflowed proves nothing. Named constants fold first
 * ((13 - 1) / (29 - 1) is 0); min and max of bounds that do not compare take a form
 * below (above) both (lin_join).
 */
#include "check_impl.h"

#include <string.h>

/* ---- affine forms ---------------------------------------------------------- */

static BForm lin_const(int64_t c) {
  BForm l;
  memset(&l, 0, sizeof l);
  l.ok = true;
  l.c = c;
  return l;
}

static bool term_eq(const Expr *a, const Expr *b) { return a == b || ir_equal(a, b); }

/* L += K * X, merging equal terms and dropping zero coefficients. */
static void lin_addterm(BForm *l, Expr *x, int64_t k) {
  if (!l->ok || k == 0) return;
  for (int i = 0; i < l->n; i++) {
    if (!term_eq(l->x[i], x)) continue;
    if (__builtin_add_overflow(l->k[i], k, &l->k[i])) l->ok = false;
    if (l->k[i] == 0) {
      l->n--;
      l->x[i] = l->x[l->n];
      l->k[i] = l->k[l->n];
    }
    return;
  }
  if (l->n == LIN_TERMS) {
    l->ok = false;
    return;
  }
  l->x[l->n] = x;
  l->k[l->n++] = k;
}

/* A + S * B. */
static BForm lin_axpy(BForm a, int64_t s, const BForm *b) {
  if (!b->ok) a.ok = false;
  int64_t t;
  if (__builtin_mul_overflow(s, b->c, &t) || __builtin_add_overflow(a.c, t, &a.c)) a.ok = false;
  for (int i = 0; i < b->n && a.ok; i++) {
    if (__builtin_mul_overflow(s, b->k[i], &t)) a.ok = false;
    else lin_addterm(&a, b->x[i], t);
  }
  return a;
}

static BForm lin_scale(const BForm *a, int64_t s) { return lin_axpy(lin_const(0), s, a); }

static BForm lin_atom(Expr *e) {
  BForm l = lin_const(0);
  lin_addterm(&l, e, 1);
  return l;
}

/* The affine form of an integer IR expression; non-affine parts become atoms. */
static BForm lin_of(Expr *e) {
  if (!e) return (BForm){.ok = false};
  BForm a, b;
  switch (e->kind) {
  case E_INT: return lin_const(e->ival);
  case E_UN:
    if (e->op != OP_NEG) break;
    a = lin_of(e->a);
    return lin_scale(&a, -1);
  case E_CAST: /* exact when the operand is a leaf; narrower arithmetic wraps narrower */
    if (e->dtype == DT_I64 && e->a && dtype_is_int(e->a->dtype) &&
        (e->a->dtype == DT_I64 || e->a->kind == E_VAR || e->a->kind == E_LOAD || e->a->kind == E_INT))
      return lin_of(e->a);
    break;
  case E_BIN:
    if (e->op == OP_ADD || e->op == OP_SUB) {
      a = lin_of(e->a);
      b = lin_of(e->b);
      return lin_axpy(a, e->op == OP_ADD ? 1 : -1, &b);
    }
    if (e->op == OP_MUL) {
      a = lin_of(e->a);
      b = lin_of(e->b);
      if (a.ok && a.n == 0) return lin_scale(&b, a.c);
      if (b.ok && b.n == 0) return lin_scale(&a, b.c);
    }
    if (e->op == OP_DIV || e->op == OP_MOD) { /* named constants fold first: (13 - 1) / (29 - 1) */
      a = lin_of(e->a);
      b = lin_of(e->b);
      if (a.ok && a.n == 0 && b.ok && b.n == 0 && b.c > 0 && (dtype_is_signed(e->dtype) || a.c >= 0))
        return lin_const(e->op == OP_DIV ? ir_int_floordiv(a.c, b.c) : ir_int_floormod(a.c, b.c));
    }
    break;
  default: break;
  }
  return lin_atom(e);
}

/* Is E a constant once named constants fold (`OH - 1`)? */
static bool const_of(Expr *e, int64_t *c) {
  BForm l = lin_of(e);
  if (!l.ok || l.n) return false;
  *c = l.c;
  return true;
}

/* ---- ranges ------------------------------------------------------------------ */

/* The range of the values a statement stores in an integer `tensor`, as forms over sizes
 * (each size >= 1): every element a later statement reads holds a value in it. */
struct TRange {
  const Buffer *buf;
  BForm lo, hi;
  const char *why; /* NULL: LO..HI holds; else why the tensor has no range */
};

static char *form_text(const BForm *l);

static TRange *find_record(const Bounds *b, const Buffer *buf) {
  for (int i = 0; b->tranges && i < b->tranges->len; i++) {
    TRange *t = VEC_AT(*b->tranges, i);
    if (t->buf == buf) return t;
  }
  return NULL;
}

static const TRange *find_trange(const Bounds *b, const Buffer *buf) {
  const TRange *t = find_record(b, buf);
  return t && !t->why ? t : NULL;
}

static BVar *find_var(const Bounds *b, const IrVar *v) {
  for (int i = b->vars.len - 1; i >= 0; i--) {
    BVar *bv = VEC_AT(b->vars, i);
    if (bv->var == v) return bv;
  }
  return NULL;
}

/* Does E mention an axis (a variable with a range)? */
static bool uses_axis(const Bounds *b, const Expr *e) {
  if (!e) return false;
  if (e->kind == E_VAR) return find_var(b, e->var) != NULL;
  for (int i = 0; i < e->nargs; i++)
    if (uses_axis(b, e->args[i])) return true;
  return uses_axis(b, e->a) || uses_axis(b, e->b) || uses_axis(b, e->c);
}

static bool nonneg_depth(const BForm *s, int depth);

/* S with its term I (k * x, x a division or modulo over sizes) replaced by a bound that
 * keeps S >= 0 sufficient: c * floor(a / c) lies in [a - c + 1, a], a % c in [0, c - 1].
 * For a division the result R is below c * S, and S is an integer: R >= -(c - 1) gives
 * c * S > -c, so S >= 0 (W - 1 - W / 2 >= 0 for every W >= 1: 2W - 2 - W + 1 = W - 1). */
static bool elim_atom(const BForm *s, int i, BForm *out, int depth) {
  Expr *x = s->x[i];
  int64_t k = s->k[i], c;
  BForm r = *s;
  r.k[i] = 0;
  r = lin_axpy(lin_const(0), 1, &r);
  if (x->kind != E_BIN || (x->op != OP_DIV && x->op != OP_MOD)) return false;
  BForm a = lin_of(x->a), b = lin_of(x->b), one = lin_const(1);
  if (x->op == OP_DIV) {
    if (!const_of(x->b, &c) || c <= 0) return false;
    BForm bound = k < 0 ? a : lin_axpy(a, -(c - 1), &one);
    *out = lin_axpy(lin_scale(&r, c), k, &bound);
    *out = lin_axpy(*out, c - 1, &one);
    return out->ok;
  }
  BForm top = lin_axpy(b, -1, &one); /* a % b in [0, b - 1] when b >= 1 */
  if (!nonneg_depth(&top, depth + 1)) return false;
  *out = k > 0 ? r : lin_axpy(r, k, &top);
  return out->ok;
}

/* A form over sizes (each >= 1) that is >= 0 for every value of the sizes. */
static bool nonneg_depth(const BForm *s, int depth) {
  if (!s->ok || depth > 4) return false;
  int64_t least = s->c;
  for (int i = 0; i < s->n; i++) {
    if (s->x[i]->kind != E_VAR) {
      BForm r;
      return elim_atom(s, i, &r, depth) && nonneg_depth(&r, depth + 1);
    }
    if (s->k[i] < 0 || __builtin_add_overflow(least, s->k[i], &least)) return false;
  }
  return least >= 0;
}

static bool nonneg(const BForm *s) { return nonneg_depth(s, 0); }

/* X <= Y for every value of the sizes. */
static bool lin_le(const BForm *x, const BForm *y) {
  BForm d = lin_axpy(*y, -1, x);
  return nonneg(&d);
}

static bool lower(Bounds *b, const BForm *e, BForm *out);
static bool upper(Bounds *b, const BForm *e, BForm *out);

/* [lo, hi] of integer dtype T. */
static void dtype_range(DType t, int64_t *lo, int64_t *hi) {
  int bits = dtype_bytes(t) * 8;
  bool sgn = dtype_is_signed(t);
  *lo = sgn ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
  *hi = bits == 64 ? INT64_MAX : sgn ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
}

/* Constant bounds of X, an expression over sizes, each size in [1, ARITH_SIZE_MAX]. */
static bool size_range(Expr *x, int64_t *lo, int64_t *hi) {
  if (x->kind == E_VAR) return *lo = 1, *hi = ARITH_SIZE_MAX, true;
  RangeMap m = {0};
  Expr *todo[64];
  int n = 0;
  todo[n++] = x;
  while (n) { /* every variable of X gets the sizes' range */
    Expr *e = todo[--n];
    if (e->kind == E_VAR && !range_find(&m, e->var)) range_push(&m, e->var, ir_int(1), ir_int(ARITH_SIZE_MAX));
    if (e->kind == E_LOAD || n + 3 > 64) return false;
    if (e->a) todo[n++] = e->a;
    if (e->b) todo[n++] = e->b;
    if (e->c) todo[n++] = e->c;
  }
  return const_bounds(x, &m, lo, hi);
}

/* Does a form over sizes stay within dtype T for every value of the sizes? A bound that
 * may leave T bounds nothing: the machine's value wrapped. */
static bool fits(const BForm *l, DType t) {
  int64_t lo = l->c, hi = l->c, tlo, thi, a, z;
  for (int i = 0; i < l->n; i++) {
    if (!size_range(l->x[i], &tlo, &thi)) return false;
    if (__builtin_mul_overflow(l->k[i], tlo, &a) || __builtin_mul_overflow(l->k[i], thi, &z))
      return false;
    if (__builtin_add_overflow(lo, a < z ? a : z, &lo) || __builtin_add_overflow(hi, a < z ? z : a, &hi))
      return false;
  }
  dtype_range(t, &tlo, &thi);
  return lo >= tlo && hi <= thi;
}

/* Lower and upper bounds of an integer expression; HL/HH say which exist. Bounds of a
 * sum are bounds of its value only when that sum cannot wrap: both must exist and fit the
 * dtype. A bare atom (a min, a load) computes nothing here: one bound is enough. */
static bool bare(const BForm *l) { return l->ok && l->c == 0 && l->n == 1 && l->k[0] == 1; }

static void lin_interval(Bounds *b, Expr *e, BForm *lo, bool *hl, BForm *hi, bool *hh) {
  BForm l = lin_of(e);
  *hl = lower(b, &l, lo);
  *hh = upper(b, &l, hi);
  if (!bare(&l) && !(*hl && *hh && fits(lo, e->dtype) && fits(hi, e->dtype))) *hl = *hh = false;
}

/* Is the value of E (as the machine computes it) the value of its form? */
static bool exact(Bounds *b, Expr *e) {
  BForm l = lin_of(e), lo, hi;
  bool hl, hh;
  if (bare(&l) || (l.ok && l.n == 0)) return true;
  lin_interval(b, e, &lo, &hl, &hi, &hh);
  return hl && hh;
}

/* The IR of a form (over sizes and atoms). */
static Expr *lin_expr(const BForm *l) {
  Expr *e = ir_int(l->c);
  for (int i = 0; i < l->n; i++)
    e = ir_bin(OP_ADD, e, l->k[i] == 1 ? l->x[i] : ir_bin(OP_MUL, ir_int(l->k[i]), l->x[i]));
  return e;
}

/* floor(L / C) as a form: exact when every coefficient divides by C, else an atom
 * over sizes that nonneg() knows how to bound. */
static bool lin_floordiv(const BForm *l, int64_t c, BForm *out) {
  if (!l->ok || c <= 0) return false;
  BForm r = lin_const(ir_int_floordiv(l->c, c));
  for (int i = 0; i < l->n; i++) {
    if (l->k[i] % c) {
      *out = lin_atom(ir_bin(OP_DIV, lin_expr(l), ir_int(c)));
      return true;
    }
    lin_addterm(&r, l->x[i], l->k[i] / c);
  }
  *out = r;
  return r.ok;
}

/* A form below (WANT_MIN) or above both X and Y for every value of the sizes (each
 * >= 1), when they do not compare: `1` and `W - 1` are both >= 0, `W - 2` and `0` both
 * <= W - 1. Each size takes the smaller (larger) coefficient; the constant then covers
 * the rest, each size being at least 1. Other terms must be equal in both. */
static bool lin_join(const BForm *x, const BForm *y, bool want_min, BForm *out) {
  if (!x->ok || !y->ok) return false;
  BForm r = lin_const(0);
  int64_t cx = x->c, cy = y->c; /* the constants, less what the chosen coefficients add at 1 */
  const BForm *f[2] = {x, y};
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < f[s]->n; i++) {
      Expr *t = f[s]->x[i];
      int64_t kx = 0, ky = 0;
      for (int j = 0; j < x->n; j++) if (term_eq(x->x[j], t)) kx = x->k[j];
      for (int j = 0; j < y->n; j++) if (term_eq(y->x[j], t)) ky = y->k[j];
      if (s == 1 && kx) continue; /* done from X */
      if (t->kind != E_VAR && kx != ky) return false;
      int64_t m = want_min ? (kx < ky ? kx : ky) : (kx > ky ? kx : ky), dx, dy;
      if (__builtin_sub_overflow(kx, m, &dx) || __builtin_sub_overflow(ky, m, &dy)) return false;
      if (__builtin_add_overflow(cx, dx, &cx) || __builtin_add_overflow(cy, dy, &cy)) return false;
      lin_addterm(&r, t, m);
    }
  /* X - R = sum (kx - m) * v + cx0 - c with (kx - m) of one sign and v >= 1 */
  r.c = want_min ? (cx < cy ? cx : cy) : (cx > cy ? cx : cy);
  *out = r;
  return r.ok && (want_min ? lin_le(&r, x) && lin_le(&r, y) : lin_le(x, &r) && lin_le(y, &r));
}

/* The smaller (MIN) or larger of two bounds, when they compare for all sizes; else a
 * bound of both (lin_join). */
static bool pick(const BForm *x, bool hx, const BForm *y, bool hy, bool want_min, BForm *out) {
  if (!hx || !hy) return false;
  bool xy = lin_le(x, y), yx = lin_le(y, x);
  if (!xy && !yx) return lin_join(x, y, want_min, out);
  *out = (xy == want_min) ? *x : *y;
  return true;
}

/* Either bound of two that are both sound: the tighter one when they compare, else Y
 * (a clamp's bound). Never a join: a form below both upper bounds of min(a, b) is no
 * upper bound of it (min(3*OH-3, IH) is not <= 0). */
static bool pick_any(const BForm *x, bool hx, const BForm *y, bool hy, bool want_min, BForm *out) {
  if (hx && hy && (lin_le(x, y) || lin_le(y, x))) return pick(x, hx, y, hy, want_min, out);
  if (hy) *out = *y;
  else if (hx) *out = *x;
  return hx || hy;
}

/* Bounds of min/max(a, b). */
static void minmax_interval(Bounds *b, Expr *e, BForm *lo, bool *hl, BForm *hi, bool *hh) {
  BForm la, ua, lb, ub;
  bool hla, hua, hlb, hub;
  lin_interval(b, e->a, &la, &hla, &ua, &hua);
  lin_interval(b, e->b, &lb, &hlb, &ub, &hub);
  if (e->op == OP_MIN) {
    *hl = pick(&la, hla, &lb, hlb, true, lo);
    *hh = pick_any(&ua, hua, &ub, hub, true, hi);
  } else {
    *hl = pick_any(&la, hla, &lb, hlb, false, lo);
    *hh = pick(&ua, hua, &ub, hub, false, hi);
  }
}

/* Bounds of a product whose factors have constant bounds. */
static void mul_interval(Bounds *b, Expr *e, BForm *lo, bool *hl, BForm *hi, bool *hh) {
  BForm la, ua, lb, ub;
  bool h1, h2, h3, h4;
  lin_interval(b, e->a, &la, &h1, &ua, &h2);
  lin_interval(b, e->b, &lb, &h3, &ub, &h4);
  *hl = *hh = false;
  if (!(h1 && h2 && h3 && h4) || la.n || ua.n || lb.n || ub.n) return;
  int64_t mn, mx;
  if (!arith_mul_bounds(la.c, ua.c, lb.c, ub.c, &mn, &mx)) return;
  *lo = lin_const(mn);
  *hi = lin_const(mx);
  *hl = *hh = true;
}

/* A remembered atom_interval. */
typedef struct Memo {
  const Expr *e;
  BForm lo, hi;
  bool hl, hh;
} Memo;

static void atom_interval_uncached(Bounds *b, Expr *e, BForm *lo, bool *hl, BForm *hi, bool *hh);

/* Bounds of a non-affine atom, as forms over sizes; each atom is bounded once per
 * index, which keeps nested min/max linear. */
static void atom_interval(Bounds *b, Expr *e, BForm *lo, bool *hl, BForm *hi, bool *hh) {
  for (int i = 0; i < b->memo.len; i++) {
    Memo *m = VEC_AT(b->memo, i);
    if (m->e != e) continue;
    *lo = m->lo, *hi = m->hi, *hl = m->hl, *hh = m->hh;
    return;
  }
  atom_interval_uncached(b, e, lo, hl, hi, hh);
  Memo *m = xalloc(sizeof *m);
  *m = (Memo){e, *lo, *hi, *hl, *hh};
  vec_push(&b->memo, m);
}

static void atom_interval_uncached(Bounds *b, Expr *e, BForm *lo, bool *hl, BForm *hi, bool *hh) {
  int64_t c, tlo, thi;
  const TRange *tr;
  *hl = *hh = false;
  if (e->kind == E_LOAD && (tr = find_trange(b, e->buf))) { /* what its statement stores */
    *lo = tr->lo;
    *hi = tr->hi;
    *hl = *hh = true;
    return;
  }
  if (e->kind == E_CAST && dtype_is_int(e->dtype) && e->dtype != DT_I64 && dtype_is_int(e->a->dtype)) {
    lin_interval(b, e->a, lo, hl, hi, hh); /* a narrowing cast keeps a value that fits */
    if (*hl && *hh && fits(lo, e->dtype) && fits(hi, e->dtype)) return;
  }
  if ((e->kind == E_LOAD || e->kind == E_CAST) && dtype_is_int(e->dtype) && e->dtype != DT_I64) {
    dtype_range(e->dtype, &tlo, &thi); /* the value of a narrower integer, whatever it is */
    *lo = lin_const(tlo);
    *hi = lin_const(thi);
    *hl = *hh = true;
  } else if (e->kind == E_CAST && dtype_is_int(e->a->dtype) && dtype_bytes(e->a->dtype) <= dtype_bytes(e->dtype)) {
    lin_interval(b, e->a, lo, hl, hi, hh); /* a widening cast keeps the value */
  } else if (e->kind == E_BIN && e->op == OP_MOD && const_of(e->b, &c) && c > 0) {
    *lo = lin_const(0);
    *hi = lin_const(c - 1);
    *hl = *hh = true;
  } else if (e->kind == E_BIN && e->op == OP_MOD && !uses_axis(b, e->b)) {
    BForm one = lin_const(1), top = lin_of(e->b); /* a % b in [0, b - 1] when b >= 1 */
    top = lin_axpy(top, -1, &one);
    if (!nonneg(&top)) return;
    *lo = lin_const(0);
    *hi = top;
    *hl = *hh = true;
  } else if (e->kind == E_BIN && e->op == OP_DIV && const_of(e->b, &c) && c > 0) {
    BForm l, u;
    lin_interval(b, e->a, &l, hl, &u, hh);
    *hl = *hl && lin_floordiv(&l, c, lo);
    *hh = *hh && lin_floordiv(&u, c, hi);
  } else if (e->kind == E_BIN && (e->op == OP_MIN || e->op == OP_MAX)) {
    minmax_interval(b, e, lo, hl, hi, hh);
  } else if (e->kind == E_BIN && e->op == OP_MUL) {
    mul_interval(b, e, lo, hl, hi, hh);
  } else if (e->kind == E_SELECT) {
    BForm lx, ux, ly, uy;
    bool a1, a2, a3, a4;
    lin_interval(b, e->b, &lx, &a1, &ux, &a2);
    lin_interval(b, e->c, &ly, &a3, &uy, &a4);
    *hl = pick(&lx, a1, &ly, a3, true, lo);
    *hh = pick(&ux, a2, &uy, a4, false, hi);
  }
}

/* A lower bound of E over sizes only: axes replaced by their range ends. */
static bool lower(Bounds *b, const BForm *e, BForm *out) {
  if (!e->ok || --b->budget < 0) return false;
  BForm r = lin_const(e->c);
  for (int i = 0; i < e->n && r.ok; i++) {
    Expr *x = e->x[i];
    int64_t k = e->k[i];
    BVar *bv = x->kind == E_VAR ? find_var(b, x->var) : NULL;
    if (bv) {
      r = lin_axpy(r, k, k > 0 ? &bv->lo : &bv->hi);
    } else if (x->kind == E_VAR || !uses_axis(b, x)) {
      lin_addterm(&r, x, k); /* a size, or an expression over sizes */
    } else {
      BForm lo, hi;
      bool hl, hh;
      atom_interval(b, x, &lo, &hl, &hi, &hh);
      if (k > 0 ? !hl : !hh) return false;
      r = lin_axpy(r, k, k > 0 ? &lo : &hi);
    }
  }
  *out = r;
  return r.ok;
}

static bool upper(Bounds *b, const BForm *e, BForm *out) {
  BForm n = lin_scale(e, -1);
  if (!lower(b, &n, out)) return false;
  *out = lin_scale(out, -1);
  return out->ok;
}

/* E >= 0 in the current branch: from the ranges alone, or from one guard fact. */
static bool prove_nonneg(Bounds *b, const BForm *e) {
  BForm l;
  if (lower(b, e, &l) && nonneg(&l)) return true;
  for (int i = b->facts.len - 1; i >= 0; i--) {
    BForm d = lin_axpy(*e, -1, VEC_AT(b->facts, i));
    if (lower(b, &d, &l) && nonneg(&l)) return true;
  }
  return false;
}

/* ---- the interface ------------------------------------------------------------ */

void chk_bounds_var(Bounds *b, IrVar *v, Expr *min, Expr *extent) {
  BVar *bv = xalloc(sizeof *bv);
  bv->var = v;
  bv->lo = lin_of(min);
  BForm ext = lin_of(extent);
  bv->hi = lin_axpy(bv->lo, 1, &ext);
  bv->hi = lin_axpy(bv->hi, -1, &(BForm){.ok = true, .c = 1});
  vec_push(&b->vars, bv);
}

BMark chk_bounds_mark(const Bounds *b) { return (BMark){b->vars.len, b->facts.len}; }

void chk_bounds_release(Bounds *b, BMark m) {
  b->vars.len = m.vars;
  b->facts.len = m.facts;
}

/* A fact k*v + rest >= 0 with k = +-1 and REST over sizes narrows v's range. */
static void narrow(Bounds *b, const BForm *f) {
  int at = -1;
  for (int i = 0; i < f->n; i++) {
    bool axis = f->x[i]->kind == E_VAR && find_var(b, f->x[i]->var);
    if (axis && at < 0 && (f->k[i] == 1 || f->k[i] == -1)) at = i;
    else if (axis || uses_axis(b, f->x[i])) return;
  }
  if (at < 0) return;
  BVar *old = find_var(b, f->x[at]->var), *nv = xalloc(sizeof *nv);
  *nv = *old;
  BForm rest = *f;
  rest.k[at] = 0;
  rest = lin_axpy(lin_const(0), 1, &rest); /* drops the zero term */
  if (f->k[at] == 1) {
    BForm cand = lin_scale(&rest, -1); /* v >= -rest */
    if (!cand.ok || lin_le(&cand, &old->lo)) return;
    nv->lo = cand;
  } else {
    if (!rest.ok || lin_le(&old->hi, &rest)) return; /* v <= rest */
    nv->hi = rest;
  }
  vec_push(&b->vars, nv);
}

static void add_fact(Bounds *b, BForm f) {
  if (!f.ok) return;
  BForm *p = xalloc(sizeof *p);
  *p = f;
  vec_push(&b->facts, p);
  narrow(b, p);
}

/* D != 0 where D's range ends at 0 (`i != 0` with i in 0..N-1): D is past that end. */
static void ne_fact(Bounds *b, BForm d) {
  BForm l, one = lin_const(1);
  if (lower(b, &d, &l) && l.ok && l.n == 0 && l.c == 0) add_fact(b, lin_axpy(d, -1, &one));
  else if (upper(b, &d, &l) && l.ok && l.n == 0 && l.c == 0)
    add_fact(b, lin_axpy(lin_scale(&d, -1), -1, &one));
}

/* Facts from one integer comparison a OP b known to hold. */
static void assume_cmp(Bounds *b, int op, Expr *x, Expr *y) {
  b->budget = 20000;
  b->memo.len = 0;
  /* A side that may wrap is a fact about its value only: an opaque atom. */
  BForm lx = exact(b, x) ? lin_of(x) : lin_atom(x), ly = exact(b, y) ? lin_of(y) : lin_atom(y);
  BForm xy = lin_axpy(lx, -1, &ly), yx = lin_axpy(ly, -1, &lx);
  BForm one = lin_const(1);
  switch (op) {
  case OP_GE: add_fact(b, xy); break;
  case OP_GT: add_fact(b, lin_axpy(xy, -1, &one)); break;
  case OP_LE: add_fact(b, yx); break;
  case OP_LT: add_fact(b, lin_axpy(yx, -1, &one)); break;
  case OP_EQ: add_fact(b, xy); add_fact(b, yx); break;
  case OP_NE: ne_fact(b, xy); break;
  default: break;
  }
}

void chk_bounds_assume(Bounds *b, Expr *cond, bool truth) {
  if (!cond) return;
  if (cond->kind == E_UN && cond->op == OP_NOT) {
    chk_bounds_assume(b, cond->a, !truth);
    return;
  }
  if (cond->kind != E_BIN) return;
  if ((cond->op == OP_AND && truth) || (cond->op == OP_OR && !truth)) {
    chk_bounds_assume(b, cond->a, truth);
    chk_bounds_assume(b, cond->b, truth);
    return;
  }
  if (cond->op < OP_EQ || cond->op > OP_GE || !cond->a || !dtype_is_int(cond->a->dtype)) return;
  assume_cmp(b, truth ? cond->op : (int)cmp_negate((BinOp)cond->op), cond->a, cond->b);
}

BoundsVerdict chk_bounds_index(Bounds *b, Expr *idx, Expr *extent) {
  b->budget = 20000;
  b->memo.len = 0;
  BForm li = lin_of(idx), le = lin_of(extent), one = lin_const(1);
  BForm top = lin_axpy(lin_axpy(le, -1, &one), -1, &li);
  bool lo_ok = prove_nonneg(b, &li), hi_ok = prove_nonneg(b, &top);
  if (lo_ok && hi_ok) return IN_BOUNDS;
  if (!bare(&li)) { /* guarded as a whole: `e >= 0 && e < N ? A[e]` (facts on an atom) */
    BForm whole = lin_atom(idx), wtop = lin_axpy(lin_axpy(le, -1, &one), -1, &whole);
    if (prove_nonneg(b, &whole) && prove_nonneg(b, &wtop)) return IN_BOUNDS;
  }
  /* Every value outside: min(x, W / 2 - 1) with W = 1 is -1. */
  BForm below = lin_axpy(lin_scale(&li, -1), -1, &one), past = lin_axpy(li, -1, &le);
  if (prove_nonneg(b, &below) || prove_nonneg(b, &past)) return OUTSIDE;
  /* Without guards, an affine index over axes reaches its interval's ends. */
  if (b->facts.len || !li.ok) return MAY_BE_OUTSIDE;
  for (int i = 0; i < li.n; i++)
    if (li.x[i]->kind != E_VAR) return MAY_BE_OUTSIDE;
  BForm l, u;
  if (!lo_ok && lower(b, &li, &l)) {
    BForm neg = lin_axpy(lin_scale(&l, -1), -1, &one); /* -1 - min >= 0 */
    if (nonneg(&neg)) return OUTSIDE;
  }
  if (!hi_ok && upper(b, &li, &u)) {
    BForm over = lin_axpy(u, -1, &le); /* max - extent >= 0 */
    if (nonneg(&over)) return OUTSIDE;
  }
  return MAY_BE_OUTSIDE;
}

/* Which side of an index MAY_BE_OUTSIDE the prover could not show: 1 for idx >= 0,
 * 2 for idx <= extent - 1, 3 for both. */
int chk_bounds_unproved(Bounds *b, Expr *idx, Expr *extent) {
  b->budget = 20000;
  b->memo.len = 0;
  BForm li = lin_of(idx), le = lin_of(extent), one = lin_const(1);
  BForm top = lin_axpy(lin_axpy(le, -1, &one), -1, &li);
  int r = (prove_nonneg(b, &li) ? 0 : 1) | (prove_nonneg(b, &top) ? 0 : 2);
  return r ? r : 3;
}

/* ---- value ranges of tensors ---------------------------------------------------- */

/* Does a range end mention only sizes: no axis of the statement, no load? */
static bool over_sizes(Bounds *b, const Expr *e) {
  if (!e) return true;
  if (e->kind == E_LOAD || (e->kind == E_VAR && find_var(b, e->var))) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!over_sizes(b, e->args[i])) return false;
  return over_sizes(b, e->a) && over_sizes(b, e->b) && over_sizes(b, e->c);
}

static bool form_over_sizes(Bounds *b, const BForm *l) {
  for (int i = 0; l->ok && i < l->n; i++)
    if (!over_sizes(b, l->x[i])) return false;
  return l->ok;
}

/* Bounds of VALUE (of the stored dtype) over the statement's axes, as forms over sizes. */
static bool value_range(Bounds *b, Expr *value, BForm *lo, BForm *hi) {
  bool hl, hh;
  b->budget = 20000;
  b->memo.len = 0;
  lin_interval(b, value, lo, &hl, hi, &hh);
  return hl && hh && form_over_sizes(b, lo) && form_over_sizes(b, hi);
}

/* argmax= / argmin= store a position 0..P-1, P the product of the reduction extents (a
 * constant times at most one size), converted to the tensor's dtype: the range when P >= 1
 * and P - 1 fits. */
static const char *arg_range(Op *op, BForm *lo, BForm *hi) {
  BForm p = lin_const(1), one = lin_const(1);
  for (int i = 0; i < op->nred; i++) {
    BForm e = lin_of(op->rext[i]);
    if (e.ok && e.n == 0) p = lin_scale(&p, e.c);
    else if (p.ok && p.n == 0) p = lin_scale(&e, p.c);
    else return "its positions are a product of sizes";
  }
  *lo = lin_const(0);
  *hi = lin_axpy(p, -1, &one);
  if (!nonneg(hi) || !fits(hi, op->out->dtype))
    return xprintf("its positions 0..%s may be empty or leave %s", form_text(hi), dtype_name(op->out->dtype));
  return NULL;
}

/* Why OP's tensor has no range, or NULL when it has one: a tensor whose every element
 * is a value of OP's statement (one `=`, or `=` then max= / min= over its values). The
 * ends are of the stored dtype, so a value that wraps there has no range but the dtype's. */
static const char *record_why_not(Bounds *b, Op *op, BForm *lo, BForm *hi) {
  if (op->is_scan) return "it is a scan, which reads its own values";
  if (op->scatter) return "it is written by a scatter";
  bool upd = op->init && (op->rop == RED_MAX || op->rop == RED_MIN);
  if (op->rop == RED_ARGMAX || op->rop == RED_ARGMIN) return arg_range(op, lo, hi);
  if (op->rop != RED_NONE && !upd) return xprintf("it is written by a `%s` reduction", reduceop_names[op->rop]);
  if (!value_range(b, op->value, lo, hi))
    return xprintf("the bounds of its value are not known, or may leave %s", dtype_name(op->out->dtype));
  BForm l2, h2;
  if (upd && !value_range(b, op->init, &l2, &h2))
    return xprintf("the bounds of its initial value are not known, or may leave %s",
                   dtype_name(op->out->dtype));
  if (upd && !(pick(lo, true, &l2, true, true, lo) && pick(hi, true, &h2, true, false, hi)))
    return "the bounds of its initial value and of its update do not compare";
  int64_t tlo, thi;
  dtype_range(op->out->dtype, &tlo, &thi);
  if (lo->n || hi->n || lo->c != tlo || hi->c != thi) return NULL;
  Expr *v = op->value; /* no range but the dtype's: say why */
  if (v->kind == E_CAST && dtype_is_int(v->a->dtype) && value_range(b, v->a, &l2, &h2))
    return xprintf("its value is %s..%s converted to %s, which may not hold it%s", form_text(&l2),
                   form_text(&h2), dtype_name(op->out->dtype),
                   l2.n || h2.n ? " (a size may be up to 2^40): store it as i64" : "");
  return xprintf("the bounds of its value are not known, or may leave %s", dtype_name(op->out->dtype));
}

void chk_bounds_record(Bounds *b, Op *op) {
  if (!b->tranges || op->out->kind != BUF_TEMP || !dtype_is_int(op->out->dtype)) return;
  TRange *t = find_record(b, op->out); /* an update definition replaces its initial one */
  if (!t) {
    t = xalloc(sizeof *t);
    vec_push(b->tranges, t);
  }
  t->buf = op->out;
  t->why = record_why_not(b, op, &t->lo, &t->hi);
}

/* One note per integer `tensor` that the index reads: its range, or why it has none. */
static void explain_loads(Bounds *b, Expr *e, Loc at, Vec *seen) {
  if (!e) return;
  if (e->kind == E_LOAD && dtype_is_int(e->dtype) && e->buf->kind == BUF_TEMP) {
    bool done = false;
    for (int i = 0; i < seen->len; i++) done |= VEC_AT(*seen, i) == e->buf;
    const TRange *t = done ? NULL : find_record(b, e->buf);
    vec_push(seen, e->buf);
    if (done) {
    } else if (!t && e->buf->op) { /* its statement had errors */
    } else if (!t)
      diag_note(at, "%s is written by a later statement: its values have no range here (a range "
                "comes from a statement before the read)", e->buf->name);
    else if (!t->why)
      diag_note(e->buf->op->loc, "the values of %s are in %s..%s (from the statement that writes it)",
                e->buf->name, form_text(&t->lo), form_text(&t->hi));
    else
      diag_note(e->buf->op->loc, "the values of %s have no range but %s's: %s; clamp the value here "
                "(min(max(..., 0), N - 1)) or the index where it is used", e->buf->name,
                dtype_name(e->buf->dtype), t->why);
  }
  for (int i = 0; i < e->nargs; i++) explain_loads(b, e->args[i], at, seen);
  explain_loads(b, e->a, at, seen);
  explain_loads(b, e->b, at, seen);
  explain_loads(b, e->c, at, seen);
}

void chk_bounds_explain(Bounds *b, Expr *idx, Loc at) {
  Vec seen = {0};
  explain_loads(b, idx, at, &seen);
}

/* ---- text for messages -------------------------------------------------------- */

static void put_int_expr(Vec *out, const Expr *e, int prec);

static void puts_vec(Vec *out, const char *s) { vec_push(out, (void *)s); }

static int bin_prec(int op) {
  switch (op) {
  case OP_ADD: case OP_SUB: return 1;
  case OP_MUL: case OP_DIV: case OP_MOD: return 2;
  default: return 0;
  }
}

/* Append E's text to OUT (a list of strings), parenthesised below precedence PREC. */
static void put_int_expr(Vec *out, const Expr *e, int prec) {
  int p = e && e->kind == E_BIN ? bin_prec(e->op) : 0;
  switch (e ? e->kind : E_KIND_COUNT) {
  case E_INT: puts_vec(out, xprintf("%lld", (long long)e->ival)); break;
  case E_VAR: puts_vec(out, e->var->name); break;
  case E_BIN:
    if (!p) { /* min, max, comparisons: a call */
      puts_vec(out, xprintf("%s(", binop_names[e->op]));
      put_int_expr(out, e->a, 0);
      puts_vec(out, ", ");
      put_int_expr(out, e->b, 0);
      puts_vec(out, ")");
      break;
    }
    if (p < prec) puts_vec(out, "(");
    put_int_expr(out, e->a, p);
    puts_vec(out, xprintf(" %s ", binop_names[e->op]));
    put_int_expr(out, e->b, p + 1);
    if (p < prec) puts_vec(out, ")");
    break;
  case E_UN:
    puts_vec(out, "-");
    put_int_expr(out, e->a, 3);
    break;
  case E_CAST:
    puts_vec(out, xprintf("%s(", dtype_name(e->dtype)));
    put_int_expr(out, e->a, 0);
    puts_vec(out, ")");
    break;
  case E_LOAD: puts_vec(out, xprintf("%s[...]", e->buf->name)); break;
  default: puts_vec(out, "?"); break;
  }
}

static char *join(const Vec *v) {
  size_t n = 1;
  for (int i = 0; i < v->len; i++) n += strlen(VEC_AT(*v, i));
  char *s = xalloc(n), *p = s;
  for (int i = 0; i < v->len; i++) {
    size_t m = strlen(VEC_AT(*v, i));
    memcpy(p, VEC_AT(*v, i), m);
    p += m;
  }
  return s;
}

char *chk_int_text(Expr *e) {
  Vec v = {0};
  put_int_expr(&v, e, 0);
  return join(&v);
}

/* "H-1", "2*W+1", "1023": a form printed compactly. */
static char *form_text(const BForm *l) {
  Vec v = {0};
  for (int i = 0; i < l->n; i++) {
    int64_t k = l->k[i];
    const char *sign = k < 0 ? "-" : i ? "+" : "";
    const char *t = l->x[i]->kind == E_VAR ? l->x[i]->var->name : xprintf("(%s)", chk_int_text(l->x[i]));
    if (k == 1 || k == -1) puts_vec(&v, xprintf("%s%s", sign, t));
    else puts_vec(&v, xprintf("%s%llu*%s", sign, k < 0 ? 0ull - (unsigned long long)k : (unsigned long long)k, t));
  }
  if (l->c || !l->n) puts_vec(&v, xprintf(l->n && l->c > 0 ? "+%lld" : "%lld", (long long)l->c));
  return join(&v);
}

char *chk_last_text(Expr *extent) {
  BForm l = lin_of(extent), one = lin_const(1);
  l = lin_axpy(l, -1, &one);
  if (!l.ok) return xprintf("%s-1", chk_int_text(extent));
  return form_text(&l);
}
