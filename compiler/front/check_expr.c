/* check_expr.c — the right-hand side of a statement: reduction axes, names, dtypes,
 * accesses (rank and bounds) -> a typed IR expression.
 *
 * Literals are untyped until they meet a typed operand: an untyped tree (TE.lit) is
 * built with placeholder dtypes (i64 for integers, f32 for floats, the defaults) and
 * retyped when it adapts. Errors return a NULL expression; callers pass NULL on
 * without more messages, so one mistake gives one error.
 */
#include "check_impl.h"

#include <math.h>
#include <string.h>

enum { TYPED, LIT_INT, LIT_FLOAT };

typedef struct TE {
  Expr *e;   /* NULL after an error */
  int lit;   /* TYPED, LIT_INT or LIT_FLOAT */
} TE;

static const TE BAD = {NULL, TYPED};

static TE tr(SCtx *s, Ast *a);

/* ---- reduction axes ------------------------------------------------------------ */

static bool reported(SCtx *s, const char *name) {
  for (int i = 0; i < s->reported.len; i++)
    if (strcmp(VEC_AT(s->reported, i), name) == 0) return true;
  vec_push(&s->reported, (void *)name);
  return false;
}

/* `inf` and `nan` are float literals where no symbol of that name is in scope. */
static bool is_float_word(const char *name) { return !strcmp(name, "inf") || !strcmp(name, "nan"); }

/* Walk A in evaluation order: unknown names become reduction axes (or errors). */
static void collect(SCtx *s, Ast *a) {
  if (!a) return;
  if (a->kind == A_NAME && a->name && !chk_lookup(&s->names, a->name) && !is_float_word(a->name)) {
    if (s->op->rop == RED_NONE) {
      if (!reported(s, a->name))
        diag_error(a->loc, "unknown name '%s': not an index of %s, a constant, a size or a tensor "
                   "(to reduce over it, use `+=`, `max=`, `min=` or `*=`)", a->name, s->op->name);
      return;
    }
    Sym *r = chk_define(&s->names, SYM_RAXIS, a->name, a->loc);
    r->var = ir_newvar(a->name, DT_I64);
    r->index = s->raxes.len;
    vec_push(&s->raxes, r);
    return;
  }
  for (int i = 0; i < a->list.len; i++) collect(s, VEC_AT(a->list, i));
  collect(s, a->a);
  collect(s, a->b);
  collect(s, a->c);
}

/* What the uses of one reduction axis as a plain index say about its range. */
typedef struct RInfo {
  Buffer *from;     /* the first tensor that gave a range (op->rext) */
  Buffer *clash;    /* a later one that disagrees, if any */
  Expr *clash_ext;
  Loc clash_loc;
} RInfo;

/* Infer ranges: reduction axis r used alone as index d of T gives r in 0..T.shape[d]. */
static void infer(SCtx *s, Ast *a, RInfo *ri) {
  if (!a) return;
  for (int i = 0; i < a->list.len; i++) infer(s, VEC_AT(a->list, i), ri);
  infer(s, a->a, ri);
  infer(s, a->b, ri);
  infer(s, a->c, ri);
  Sym *t = a->kind == A_ACCESS && a->name ? chk_lookup(&s->names, a->name) : NULL;
  if (!t || t->kind != SYM_TENSOR || t->buf->ndim != a->list.len) return;
  for (int d = 0; d < a->list.len; d++) {
    Ast *ix = VEC_AT(a->list, d);
    Sym *r = ix && ix->kind == A_NAME && ix->name ? chk_lookup(&s->names, ix->name) : NULL;
    if (!r || r->kind != SYM_RAXIS) continue;
    RInfo *info = &ri[r->index];
    Expr *ext = t->buf->shape[d];
    if (!info->from) {
      info->from = t->buf;
      s->op->rmin[r->index] = ir_int(0);
      s->op->rext[r->index] = ext;
    } else if (!info->clash && !ir_equal(s->op->rext[r->index], ext)) {
      info->clash = t->buf;
      info->clash_ext = ext;
      info->clash_loc = ix->loc;
    }
  }
}

/* One `where NAME in A..B`. */
/* Does A use a name of kind K of the statement? */
static bool mentions(SCtx *s, const Ast *a, SymKind k) {
  if (!a) return false;
  if (a->kind == A_NAME && a->name) {
    Sym *y = chk_lookup(&s->names, a->name);
    return y && y->kind == k;
  }
  for (int i = 0; i < a->list.len; i++)
    if (mentions(s, VEC_AT(a->list, i), k)) return true;
  return mentions(s, a->a, k) || mentions(s, a->b, k) || mentions(s, a->c, k);
}

/* An end of a `where` range over the written tensor's indices: an i64 expression. */
static Expr *where_end(SCtx *s, Ast *a) {
  int before = diag_errors();
  TE x = tr(s, a);
  if (x.e && x.lit == LIT_INT) return x.e;
  if (x.e && x.lit == TYPED && dtype_is_int(x.e->dtype) && x.e->dtype != DT_BOOL)
    return x.e->dtype == DT_I64 ? x.e : ir_cast(DT_I64, x.e);
  if (x.e || diag_errors() == before)
    diag_error(a->loc, "'%s' is not an integer expression over constants, sizes and the indices of "
               "the written tensor", chk_ast_text(a));
  return NULL;
}

/* `where j in LO..HI` with LO or HI over the written tensor's indices (a triangular
 * domain): j ranges over the bounding box, and the value is reduced where LO <= j < HI. */
static void tri_range(SCtx *s, Ast *w, Sym *r) {
  Op *op = s->op;
  if (mentions(s, w->a, SYM_RAXIS) || mentions(s, w->b, SYM_RAXIS)) {
    diag_error(w->loc, "`where %s`: its range may use the indices of %s, not reduction axes",
               r->name, op->name);
    return;
  }
  Expr *lo = where_end(s, w->a), *hi = where_end(s, w->b);
  if (!lo || !hi) return;
  RangeMap m = {0};
  for (int d = 0; d < op->ndim; d++) range_push(&m, op->axes[d], ir_int(0), op->out->shape[d]);
  Interval li = interval_of(lo, &m), hi_i = interval_of(hi, &m);
  if (!li.min || !hi_i.max || range_mentions(li.min, &m) || range_mentions(hi_i.max, &m)) {
    diag_error(w->loc, "`where %s in %s..%s`: cannot bound the range over the indices of %s",
               r->name, chk_ast_text(w->a), chk_ast_text(w->b), op->name);
    return;
  }
  Expr *ext = simplify(ir_sub(hi_i.max, li.min), NULL);
  int64_t e;
  if (ir_is_const(ext, &e) && e <= 0) {
    diag_error(w->loc, "`where %s in %s..%s` is empty for every index of %s", r->name,
               chk_ast_text(w->a), chk_ast_text(w->b), op->name);
    return;
  }
  op->rmin[r->index] = simplify(li.min, NULL);
  op->rext[r->index] = ext;
  Expr *k = ir_var(r->var), *c = NULL;
  if (mentions(s, w->a, SYM_AXIS)) c = ir_bin(OP_GE, k, lo);
  if (mentions(s, w->b, SYM_AXIS)) c = c ? ir_bin(OP_AND, c, ir_bin(OP_LT, k, hi)) : ir_bin(OP_LT, k, hi);
  op->rcond = op->rcond ? ir_bin(OP_AND, op->rcond, c) : c;
}

static void where_range(SCtx *s, Ast *w, bool *given) {
  Sym *r = w->name ? chk_lookup(&s->names, w->name) : NULL;
  if (!r || r->kind != SYM_RAXIS) {
    const char *what = !r ? "is not used in the statement" : r->kind == SYM_AXIS ? "is an index of the written tensor"
                                                                      : "is not an index name";
    diag_error(w->loc, "`where %s`: '%s' %s; `where` gives ranges only to reduction axes",
               w->name ? w->name : "?", w->name ? w->name : "?", what);
    return;
  }
  if (given[r->index]) {
    diag_error(w->loc, "a second `where` for reduction axis '%s': give each range once", r->name);
    return;
  }
  given[r->index] = true;
  if (mentions(s, w->a, SYM_AXIS) || mentions(s, w->b, SYM_AXIS) || mentions(s, w->a, SYM_RAXIS) ||
      mentions(s, w->b, SYM_RAXIS)) {
    tri_range(s, w, r);
    return;
  }
  Expr *lo = chk_size_expr(s->kc, w->a, false), *hi = chk_size_expr(s->kc, w->b, false);
  if (!lo || !hi) return;
  int64_t a, b;
  if (ir_is_const(lo, &a) && ir_is_const(hi, &b)) {
    if (b <= a) {
      diag_error(w->loc, "`where %s in %s..%s` is empty: the upper end is exclusive and must be "
                 "above the lower end", r->name, chk_int_text(lo), chk_int_text(hi));
      return;
    }
    if (__builtin_sub_overflow(b, a, &b)) {
      diag_error(w->loc, "`where %s in %s..%s` is too large: its length does not fit in 64 bits",
                 r->name, chk_int_text(lo), chk_int_text(hi));
      return;
    }
  }
  s->op->rmin[r->index] = lo;
  s->op->rext[r->index] = ir_is_const(lo, &a) && a == 0 ? hi : ir_sub(hi, lo);
}

/* Report reduction axes whose range is neither given nor inferred, or inferred twice
 * differently. */
static void check_ranges(SCtx *s, const bool *given, const RInfo *ri) {
  Op *op = s->op;
  for (int i = 0; i < op->nred; i++) {
    Sym *r = VEC_AT(s->raxes, i);
    if (given[i]) continue;
    if (!ri[i].from) {
      diag_error(r->loc, "cannot infer the range of reduction axis '%s': add `where %s in 0..N`",
                 r->name, r->name);
    } else if (ri[i].clash) {
      diag_error(ri[i].clash_loc, "reduction axis '%s' gets two ranges: 0..%s from %s and 0..%s "
                 "from %s; add `where %s in 0..N` to say which", r->name,
                 chk_int_text(op->rext[i]), ri[i].from->name, chk_int_text(ri[i].clash_ext),
                 ri[i].clash->name, r->name);
    }
  }
}

bool chk_reduction_axes(SCtx *s) {
  int before = diag_errors();
  Op *op = s->op;
  Ast *lhs = s->stmt->a;
  for (int d = 0; lhs && d < lhs->list.len; d++) { /* a scatter's computed indices */
    Ast *ix = VEC_AT(lhs->list, d);
    if (ix && ix->kind != A_NAME) collect(s, ix);
  }
  collect(s, s->stmt->b);
  int n = s->raxes.len;
  op->nred = n;
  op->raxes = xalloc(sizeof(IrVar *) * (size_t)(n + 1));
  op->rmin = xalloc(sizeof(Expr *) * (size_t)(n + 1));
  op->rext = xalloc(sizeof(Expr *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) op->raxes[i] = ((Sym *)VEC_AT(s->raxes, i))->var;
  RInfo *ri = xalloc(sizeof(RInfo) * (size_t)(n + 1));
  for (int d = 0; lhs && d < lhs->list.len; d++) {
    Ast *ix = VEC_AT(lhs->list, d);
    if (ix && ix->kind != A_NAME) infer(s, ix, ri);
  }
  infer(s, s->stmt->b, ri);
  bool *given = xalloc(sizeof(bool) * (size_t)(n + 1));
  for (int i = 0; i < s->stmt->list2.len; i++) {
    Ast *w = VEC_AT(s->stmt->list2, i);
    if (w && w->kind == A_RANGE) where_range(s, w, given);
  }
  check_ranges(s, given, ri);
  return diag_errors() == before;
}

/* ---- literals and dtypes ------------------------------------------------------ */

static TE typed(Expr *e) { return (TE){e, TYPED}; }

static bool fits(int64_t v, DType t) {
  switch (t) {
  case DT_I8: return v >= -128 && v <= 127;
  case DT_U8: return v >= 0 && v <= 255;
  case DT_I16: return v >= -32768 && v <= 32767;
  case DT_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case DT_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
  default: return true;
  }
}

/* The first integer literal of an untyped tree that does not fit in T, or NULL. */
static Expr *misfit(Expr *e, DType t) {
  if (!e || dtype_is_float(t)) return NULL;
  if (e->kind == E_INT) return fits(e->ival, t) ? NULL : e;
  if (e->kind == E_BIN && e->op == OP_BXOR && e->b->kind == E_INT && e->b->ival == -1)
    return misfit(e->a, t); /* ~x: the -1 is all ones of T */
  Expr *m = misfit(e->a, t);
  if (!m) m = misfit(e->b, t);
  if (!m) m = misfit(e->c, t);
  return m;
}

/* Give an untyped tree dtype T (integer division of literals stays integer). */
static Expr *retype(Expr *e, DType t) {
  switch (e->kind) {
  case E_INT: return dtype_is_float(t) ? ir_float(t, (double)e->ival) : ir_const(t, dtype_wrap(t, e->ival));
  case E_FLOAT: return ir_float(t, e->fval);
  case E_UN: return ir_un((UnOp)e->op, retype(e->a, t));
  case E_BIN:
    if (dtype_is_float(t) && !dtype_is_float(e->dtype) &&
        (e->op == OP_DIV || e->op == OP_MOD || (e->op >= OP_BAND && e->op <= OP_SHR)))
      return ir_cast(t, e); /* and bit operations of literals stay integer */
    return ir_bin((BinOp)e->op, retype(e->a, t), retype(e->b, t));
  case E_SELECT: return ir_select(e->a, retype(e->b, t), retype(e->c, t));
  case E_CALL: {
    Expr **args = xalloc(sizeof(Expr *) * (size_t)(e->nargs + 1));
    for (int i = 0; i < e->nargs; i++) args[i] = retype(e->args[i], t);
    return ir_call((CallFn)e->op, args, e->nargs, t);
  }
  default: return ir_cast(t, e);
  }
}

/* Make X of dtype T: an untyped literal adapts; a typed value must already be T. */
static bool adapt(TE *x, DType t, Loc loc, const char *what) {
  if (!x->e) return false;
  if (x->lit == TYPED) {
    if (x->e->dtype == t) return true;
    diag_error(loc, "%s is %s, but it must be %s: cast it, %s(...)", what, dtype_name(x->e->dtype),
               dtype_name(t), dtype_name(t));
    return false;
  }
  if (t == DT_BOOL) {
    diag_error(loc, "%s is a number, but it must be a bool: write a comparison such as x != 0", what);
    return false;
  }
  if (x->lit == LIT_FLOAT && !dtype_is_float(t)) {
    diag_error(loc, "%s is a float literal, but it must be %s: write an integer, or cast the "
               "other side to a float type", what, dtype_name(t));
    return false;
  }
  Expr *m = misfit(x->e, t);
  if (m) {
    diag_error(loc, "the literal %lld does not fit in %s", (long long)m->ival, dtype_name(t));
    return false;
  }
  x->e = retype(x->e, t);
  x->lit = TYPED;
  return true;
}

/* Give A and B one dtype: literals adapt to the typed side; two types must agree. */
static bool unify(TE *a, TE *b, Loc loc, const char *op) {
  if (!a->e || !b->e) return false;
  if (a->lit == TYPED && b->lit == TYPED) {
    if (a->e->dtype == b->e->dtype) return true;
    diag_error(loc, "mixed dtypes in '%s': %s and %s; cast one side, e.g. %s(...)", op,
               dtype_name(a->e->dtype), dtype_name(b->e->dtype), dtype_name(a->e->dtype));
    return false;
  }
  const char *what = xprintf("an operand of '%s'", op);
  if (a->lit == TYPED) return adapt(b, a->e->dtype, loc, what);
  if (b->lit == TYPED) return adapt(a, b->e->dtype, loc, what);
  if (a->lit != b->lit) { /* an integer literal meets a float one: both f32 for now */
    TE *i = a->lit == LIT_INT ? a : b;
    i->e = retype(i->e, DT_F32);
    i->lit = LIT_FLOAT;
  }
  return true;
}

static bool need_bool(TE *x, Loc loc, const char *what) {
  if (!x->e) return false;
  if (x->lit == TYPED && x->e->dtype == DT_BOOL) return true;
  diag_error(loc, "%s must be a bool (a comparison), not %s", what,
             x->lit == TYPED ? dtype_name(x->e->dtype) : "a number");
  return false;
}

/* ---- names and accesses ------------------------------------------------------- */

static void note_read(SCtx *s, Sym *t, Loc loc) {
  if (!t->first_read.file && !t->first_read.line) t->first_read = loc;
  for (int i = 0; i < s->reads.len; i++)
    if (VEC_AT(s->reads, i) == t->buf) return;
  vec_push(&s->reads, t->buf);
}

/* Index D of an access to BUF: an integer expression, made i64. */
static Expr *tr_index(SCtx *s, Ast *ix, Buffer *buf, int d) {
  TE x = tr(s, ix);
  if (!x.e) return NULL;
  if (x.lit == LIT_INT) return x.e;
  if (x.lit == TYPED && dtype_is_int(x.e->dtype))
    return x.e->dtype == DT_I64 ? x.e : ir_cast(DT_I64, x.e);
  diag_error(ix ? ix->loc : s->stmt->loc, "index %d of %s is %s: indices are integers", d + 1, buf->name,
             x.lit == LIT_FLOAT ? "a float literal" : dtype_name(x.e->dtype));
  return NULL;
}

/* Report an index that the prover cannot keep inside the tensor. */
static bool check_index(SCtx *s, Ast *a, Buffer *buf, int d, Expr *idx) {
  BoundsVerdict v = chk_bounds_index(&s->bounds, idx, buf->shape[d]);
  if (v == IN_BOUNDS) return true;
  const char *text = d < a->list.len ? chk_ast_text(VEC_AT(a->list, d)) : "?";
  if (v == OUTSIDE)
    diag_error(a->loc, "index '%s' of %s is outside 0..%s: it goes past the tensor's dimension %d", text,
               buf->name, chk_last_text(buf->shape[d]), d + 1);
  else {
    int side = chk_bounds_unproved(&s->bounds, idx, buf->shape[d]);
    const char *last = chk_last_text(buf->shape[d]);
    const char *want = side == 1 ? xprintf("%s >= 0", text) : side == 2 ? xprintf("%s <= %s", text, last)
                                                            : xprintf("0 <= %s <= %s", text, last);
    diag_error(a->loc, "index '%s' of %s may be outside 0..%s: guard the access (`c ? %s[...] : 0`) "
               "or narrow the ranges (cannot prove %s)", text, buf->name, last, buf->name, want);
    chk_bounds_explain(&s->bounds, idx, a->loc);
  }
  return false;
}

/* Does E contain a min or max? */
static bool has_minmax(const Expr *e) {
  if (!e) return false;
  if (e->kind == E_BIN && (e->op == OP_MIN || e->op == OP_MAX)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (has_minmax(e->args[i])) return true;
  return has_minmax(e->a) || has_minmax(e->b) || has_minmax(e->c);
}

/* An index with min / max, simplified over the ranges of the statement's axes: clamps
 * that the ranges make redundant go away here, once, instead of burdening every later
 * pass (a 60-level min/max nest is a plain `i`). Exact, so the value never changes. */
static Expr *simplify_index(SCtx *s, Expr *idx) {
  if (!has_minmax(idx)) return idx;
  Op *op = s->op;
  RangeMap r = {0};
  for (int d = 0; d < op->ndim; d++) range_push(&r, op->axes[d], ir_int(0), op->out->shape[d]);
  for (int i = 0; i < op->nred; i++) range_push(&r, op->raxes[i], op->rmin[i], op->rext[i]);
  return simplify(idx, &r);
}

/* T[i, j]: a load, its rank and bounds checked. */
static TE tr_access(SCtx *s, Ast *a, Sym *t) {
  Buffer *buf = t->buf;
  if (a->list.len != buf->ndim) {
    diag_error(a->loc, "%s has %d dimension%s but is indexed with %d", buf->name, buf->ndim,
               buf->ndim == 1 ? "" : "s", a->list.len);
    return BAD;
  }
  Expr **idx = xalloc(sizeof(Expr *) * (size_t)(buf->ndim + 1));
  bool ok = true;
  for (int d = 0; d < buf->ndim; d++)
    if (!(idx[d] = tr_index(s, VEC_AT(a->list, d), buf, d))) ok = false;
  for (int d = 0; ok && d < buf->ndim; d++)
    if (!check_index(s, a, buf, d, idx[d])) ok = false;
    else idx[d] = simplify_index(s, idx[d]);
  note_read(s, t, a->loc);
  return ok ? typed(ir_load(buf, idx)) : BAD;
}

static const char *sym_what(const Sym *y) {
  switch (y->kind) {
  case SYM_CONST: return "a constant";
  case SYM_SIZE: return "a size";
  case SYM_AXIS: return "an index";
  case SYM_RAXIS: return "a reduction axis";
  default: return "a tensor";
  }
}

static TE tr_name(SCtx *s, Ast *a) {
  Sym *y = a->name ? chk_lookup(&s->names, a->name) : NULL;
  if (!y && a->name && is_float_word(a->name))
    return (TE){ir_float(DT_F32, a->name[0] == 'i' ? (double)INFINITY : (double)NAN), LIT_FLOAT};
  if (!y) return BAD; /* reported by collect */
  switch (y->kind) {
  case SYM_AXIS:
  case SYM_RAXIS: return typed(ir_var(y->var));
  case SYM_CONST: return (TE){ir_int(y->value), LIT_INT};
  case SYM_SIZE: return typed(y->size);
  case SYM_TENSOR:
    if (y->buf->ndim == 0) return tr_access(s, a, y);
    diag_error(a->loc, "tensor '%s' needs indices: write %s[...]", a->name, a->name);
    return BAD;
  }
  return BAD;
}

/* ---- calls -------------------------------------------------------------------- */

static const struct {
  const char *name;
  CallFn fn;
} math_fns[] = {{"exp", FN_EXP},         {"log", FN_LOG}, {"sqrt", FN_SQRT},   {"rsqrt", FN_RSQRT},
                {"tanh", FN_TANH},       {"sigmoid", FN_SIGMOID}, {"abs", FN_ABS}, {"floor", FN_FLOOR},
                {"ceil", FN_CEIL},       {"erf", FN_ERF}, {"sin", FN_SIN},     {"cos", FN_COS},
                {"tan", FN_TAN},         {"asin", FN_ASIN}, {"acos", FN_ACOS}, {"atan", FN_ATAN},
                {"sinh", FN_SINH},       {"cosh", FN_COSH}, {"round", FN_ROUND}, {"trunc", FN_TRUNC},
                {"sign", FN_SIGN},       {"log2", FN_LOG2}, {"log1p", FN_LOG1P}, {"exp2", FN_EXP2},
                {"expm1", FN_EXPM1}};

/* Functions of two arguments, operators of the IR. */
static const struct {
  const char *name;
  BinOp op;
} math_fns2[] = {{"max", OP_MAX}, {"min", OP_MIN}, {"pow", OP_POW}, {"atan2", OP_ATAN2}, {"fmod", OP_FMOD}};

static TE tr_cast(SCtx *s, Ast *a, DType t) {
  TE x = tr(s, VEC_AT(a->list, 0));
  if (!x.e) return BAD;
  bool direct = (x.lit == LIT_INT && t != DT_BOOL) || (x.lit == LIT_FLOAT && dtype_is_float(t));
  if (direct) return adapt(&x, t, a->loc, "the argument of the cast") ? x : BAD;
  return typed(x.e->dtype == t && x.lit == TYPED ? x.e : ir_cast(t, x.e));
}

static TE tr_math1(SCtx *s, Ast *a, CallFn fn) {
  TE x = tr(s, VEC_AT(a->list, 0));
  if (!x.e) return BAD;
  if (x.lit == TYPED && x.e->dtype == DT_BOOL) {
    diag_error(a->loc, "%s needs a number, not bool", a->name);
    return BAD;
  }
  bool ints = fn == FN_ABS || fn == FN_SIGN; /* defined on integers too */
  if (!ints && x.lit == LIT_INT) {
    x.e = retype(x.e, DT_F32);
    x.lit = LIT_FLOAT;
  }
  if (!ints && x.lit == TYPED && !dtype_is_float(x.e->dtype)) {
    diag_error(a->loc, "%s needs a float argument, but it is %s: cast it, f32(...)", a->name,
               dtype_name(x.e->dtype));
    return BAD;
  }
  return (TE){ir_call(fn, &x.e, 1, x.e->dtype), x.lit};
}

/* isnan(x) is x != x; isinf(x) is abs(x) == inf. */
static TE tr_isnan(SCtx *s, Ast *a) {
  TE x = tr(s, VEC_AT(a->list, 0));
  if (!x.e) return BAD;
  if (x.lit != TYPED) {
    x.e = retype(x.e, DT_F32);
  } else if (!dtype_is_float(x.e->dtype)) {
    diag_error(a->loc, "%s needs a float argument, but it is %s", a->name, dtype_name(x.e->dtype));
    return BAD;
  }
  if (!strcmp(a->name, "isnan")) return typed(ir_bin(OP_NE, x.e, x.e));
  Expr *m = ir_call(FN_ABS, &x.e, 1, x.e->dtype);
  return typed(ir_bin(OP_EQ, m, ir_float(x.e->dtype, (double)INFINITY)));
}

/* max(a, b), min(a, b), pow(a, b), atan2(y, x), fmod(a, b). */
static TE tr_math2(SCtx *s, Ast *a, BinOp op) {
  TE x = tr(s, VEC_AT(a->list, 0)), y = tr(s, VEC_AT(a->list, 1));
  if (!unify(&x, &y, a->loc, a->name)) return BAD;
  if (x.lit == TYPED ? x.e->dtype == DT_BOOL : false) {
    diag_error(a->loc, "%s needs numbers, not bool", a->name);
    return BAD;
  }
  bool fonly = op == OP_ATAN2 || op == OP_FMOD; /* pow is defined on integers too */
  if ((op == OP_POW || fonly) && x.lit == LIT_INT) {
    x.e = retype(x.e, DT_F32);
    y.e = retype(y.e, DT_F32);
    x.lit = LIT_FLOAT;
  }
  if (fonly && x.lit == TYPED && !dtype_is_float(x.e->dtype)) {
    diag_error(a->loc, "%s needs float arguments, but they are %s: cast them, f32(...)", a->name,
               dtype_name(x.e->dtype));
    return BAD;
  }
  return (TE){ir_bin(op, x.e, y.e), x.lit};
}

/* "exp, log, ..., isnan, isinf": every function name, for messages. */
static const char *fn_list(void) {
  char *l = "";
  for (size_t i = 0; i < sizeof math_fns / sizeof math_fns[0]; i++)
    l = xprintf("%s%s, ", l, math_fns[i].name);
  for (size_t i = 0; i < sizeof math_fns2 / sizeof math_fns2[0]; i++)
    l = xprintf("%s%s, ", l, math_fns2[i].name);
  return xprintf("%sclamp, isnan, isinf", l);
}

/* clamp(x, lo, hi) is min(max(x, lo), hi). */
static TE tr_clamp(SCtx *s, Ast *a) {
  Ast *in = xalloc(sizeof *in), *out = xalloc(sizeof *out);
  *in = *a, *out = *a;
  in->name = "max", out->name = "min";
  in->list = out->list = (Vec){0};
  vec_push(&in->list, VEC_AT(a->list, 0));
  vec_push(&in->list, VEC_AT(a->list, 1));
  vec_push(&out->list, in);
  vec_push(&out->list, VEC_AT(a->list, 2));
  return tr_math2(s, out, OP_MIN);
}

static TE tr_call(SCtx *s, Ast *a) {
  const char *f = a->name ? a->name : "?";
  int n = a->list.len, want = 1;
  DType t;
  bool cast = dtype_parse(f, &t);
  int fn = -1;
  for (size_t i = 0; i < sizeof math_fns / sizeof math_fns[0]; i++)
    if (strcmp(f, math_fns[i].name) == 0) fn = (int)i;
  int fn2 = -1;
  for (size_t i = 0; i < sizeof math_fns2 / sizeof math_fns2[0]; i++)
    if (strcmp(f, math_fns2[i].name) == 0) fn2 = (int)i;
  bool two = fn2 >= 0, isnan_ = !strcmp(f, "isnan") || !strcmp(f, "isinf"), clamp = !strcmp(f, "clamp");
  if (!cast && fn < 0 && !two && !isnan_ && !clamp) {
    Sym *y = chk_lookup(&s->names, f);
    if (y && y->kind == SYM_TENSOR)
      diag_error(a->loc, "%s is a tensor: index it with square brackets, %s[...]", f, f);
    else if (y)
      diag_error(a->loc, "'%s' is %s, not a function", f, sym_what(y));
    else
      diag_error(a->loc, "unknown function '%s': use %s, or a cast such as f32(x)", f, fn_list());
    return BAD;
  }
  if (two) want = 2;
  if (clamp) want = 3;
  if (n != want) {
    diag_error(a->loc, "%s takes %d argument%s, not %d", f, want, want == 1 ? "" : "s", n);
    return BAD;
  }
  if (cast) return tr_cast(s, a, t);
  if (fn >= 0) return tr_math1(s, a, math_fns[fn].fn);
  if (isnan_) return tr_isnan(s, a);
  if (clamp) return tr_clamp(s, a);
  return tr_math2(s, a, math_fns2[fn2].op);
}

/* ---- operators ---------------------------------------------------------------- */

static int binop_of(int tok) {
  switch (tok) {
  case '+': return OP_ADD;
  case '-': return OP_SUB;
  case '*': return OP_MUL;
  case '/': return OP_DIV;
  case '%': return OP_MOD;
  case '<': return OP_LT;
  case '>': return OP_GT;
  case TOKOP_LE: return OP_LE;
  case TOKOP_GE: return OP_GE;
  case TOKOP_EQ: return OP_EQ;
  case TOKOP_NE: return OP_NE;
  case TOKOP_AND: return OP_AND;
  case TOKOP_OR: return OP_OR;
  case '&': return OP_BAND;
  case '|': return OP_BOR;
  case '^': return OP_BXOR;
  case TOKOP_SHL: return OP_SHL;
  case TOKOP_SHR: return OP_SHR;
  default: return -1;
  }
}

/* The bit operators & | ^ << >>: integers only (X and Y unified). */
static TE need_int(TE x, TE y, Loc loc, int op, const char *ot) {
  if (x.lit == TYPED && dtype_is_int(x.e->dtype)) return (TE){ir_bin((BinOp)op, x.e, y.e), TYPED};
  if (x.lit == LIT_INT) return (TE){ir_bin((BinOp)op, x.e, y.e), LIT_INT};
  const char *what = x.lit == LIT_FLOAT ? "a float literal" : dtype_name(x.e->dtype);
  bool logic = x.lit == TYPED && x.e->dtype == DT_BOOL && op != OP_SHL && op != OP_SHR;
  diag_error(loc, "'%s' needs integers, not %s%s", ot, what,
             logic ? xprintf(" (use %s on bools)", op == OP_BAND ? "&&" : op == OP_BOR ? "||" : "!=")
                   : "");
  return BAD;
}

static TE tr_binary(SCtx *s, Ast *a) {
  int op = binop_of(a->op);
  const char *ot = chk_op_text(a->op);
  if (op < 0) {
    diag_error(a->loc, "operator '%s' is not allowed in an expression", ot);
    return BAD;
  }
  TE x = tr(s, a->a), y = tr(s, a->b);
  if (!x.e || !y.e) return BAD;
  if (op == OP_AND || op == OP_OR) {
    bool ok = need_bool(&x, a->loc, xprintf("the left side of '%s'", ot));
    if (!need_bool(&y, a->loc, xprintf("the right side of '%s'", ot)) || !ok) return BAD;
    return typed(ir_bin((BinOp)op, x.e, y.e));
  }
  if (!unify(&x, &y, a->loc, ot)) return BAD;
  bool is_bool = x.lit == TYPED && x.e->dtype == DT_BOOL;
  if (op >= OP_EQ && op <= OP_GE) { /* a comparison */
    if (is_bool && op != OP_EQ && op != OP_NE) {
      diag_error(a->loc, "'%s' compares numbers, not bools", ot);
      return BAD;
    }
    return typed(ir_bin((BinOp)op, x.e, y.e));
  }
  if (op >= OP_BAND && op <= OP_SHR) return need_int(x, y, a->loc, op, ot);
  if (is_bool) {
    diag_error(a->loc, "'%s' needs numbers, not bools (use && or || on bools)", ot);
    return BAD;
  }
  return (TE){ir_bin((BinOp)op, x.e, y.e), x.lit};
}

static TE tr_unary(SCtx *s, Ast *a) {
  TE x = tr(s, a->a);
  if (!x.e) return BAD;
  if (a->op == '!') {
    if (!need_bool(&x, a->loc, "the operand of '!'")) return BAD;
    return typed(ir_un(OP_NOT, x.e));
  }
  if (a->op == '~') { /* ~x is x ^ -1 (all ones in x's dtype) */
    if (x.lit == LIT_INT) return (TE){ir_bin(OP_BXOR, x.e, ir_int(-1)), LIT_INT};
    if (x.lit == TYPED && dtype_is_int(x.e->dtype))
      return typed(ir_bin(OP_BXOR, x.e, ir_const(x.e->dtype, dtype_wrap(x.e->dtype, -1))));
    diag_error(a->loc, "'~' needs an integer, not %s%s",
               x.lit == LIT_FLOAT ? "a float literal" : dtype_name(x.e->dtype),
               x.lit == TYPED && x.e->dtype == DT_BOOL ? " (use ! on a bool)" : "");
    return BAD;
  }
  if (x.lit == TYPED && x.e->dtype == DT_BOOL) {
    diag_error(a->loc, "'-' needs a number, not bool (use ! to negate a bool)");
    return BAD;
  }
  return (TE){ir_un(OP_NEG, x.e), x.lit};
}

/* c ? a : b — each branch is checked under its guard, which narrows the bounds. */
static TE tr_cond(SCtx *s, Ast *a) {
  TE c = tr(s, a->a);
  if (!need_bool(&c, a->loc, "the condition of '?:'")) return BAD;
  BMark m = chk_bounds_mark(&s->bounds);
  chk_bounds_assume(&s->bounds, c.e, true);
  TE x = tr(s, a->b);
  chk_bounds_release(&s->bounds, m);
  chk_bounds_assume(&s->bounds, c.e, false);
  TE y = tr(s, a->c);
  chk_bounds_release(&s->bounds, m);
  if (!unify(&x, &y, a->loc, "?:")) return BAD;
  return (TE){ir_select(c.e, x.e, y.e), x.lit};
}

/* The typed IR of one AST expression. */
static TE tr(SCtx *s, Ast *a) {
  if (!a) return BAD;
  switch (a->kind) {
  case A_INT: return (TE){ir_int(a->ival), LIT_INT};
  case A_FLOAT: return (TE){ir_float(DT_F32, a->fval), LIT_FLOAT};
  case A_NAME: return tr_name(s, a);
  case A_ACCESS: {
    Sym *y = a->name ? chk_lookup(&s->names, a->name) : NULL;
    if (y && y->kind == SYM_TENSOR) return tr_access(s, a, y);
    if (y) diag_error(a->loc, "'%s' is %s, not a tensor: it cannot be indexed", a->name, sym_what(y));
    else diag_error(a->loc, "unknown tensor '%s': declare it as a parameter, an output or a `tensor`",
                    a->name ? a->name : "?");
    return BAD;
  }
  case A_CALL: return tr_call(s, a);
  case A_UNARY: return tr_unary(s, a);
  case A_BINARY: return tr_binary(s, a);
  case A_COND: return tr_cond(s, a);
  default:
    diag_error(a->loc, "'%s' is not allowed in a tensor expression", chk_ast_text(a));
    return BAD;
  }
}

Expr *chk_scatter_index(SCtx *s, Ast *ix, Buffer *buf, int d) { return tr_index(s, ix, buf, d); }

Expr *chk_value_own(SCtx *s, Ast *rhs) {
  TE v = tr(s, rhs);
  if (!v.e) return NULL;
  if (v.lit == TYPED) return v.e;
  return adapt(&v, v.lit == LIT_FLOAT ? DT_F32 : DT_I32, rhs->loc, "the value") ? v.e : NULL;
}

Expr *chk_value(SCtx *s, Ast *rhs, DType want) {
  TE v = tr(s, rhs);
  if (!v.e) return NULL;
  const char *what = xprintf("the value of %s", s->op->name);
  return adapt(&v, want, rhs->loc, what) ? v.e : NULL;
}
