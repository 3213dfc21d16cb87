/* ir.c — loop IR constructors, substitution and structural equality. */
#include "texc.h"

#include <string.h>

const char *const binop_names[BINOP_COUNT] = {"+",  "-",  "*", "/",  "%",  "min", "max", "==",
                                              "!=", "<",  "<=", ">", ">=", "&&",  "||",  "pow",
                                              "atan2", "fmod", "&", "|", "^", "<<", ">>"};
const char *const callfn_names[CALLFN_COUNT] = {"exp", "log",     "sqrt",  "rsqrt", "tanh",
                                                "sigmoid", "abs", "floor", "ceil",
                                                "erf", "sin", "cos", "tan", "asin", "acos",
                                                "atan", "sinh", "cosh", "round", "trunc",
                                                "sign", "log2", "log1p", "exp2", "expm1"};
const char *const forkind_names[FORKIND_COUNT] = {
    "serial",     "parallel",   "vectorized",  "unrolled",    "blockIdx.x", "blockIdx.y",
    "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread"};

static int next_id;

IrVar *ir_newvar(const char *name, DType t) {
  IrVar *v = xalloc(sizeof *v);
  v->name = xstrdup(name);
  v->dtype = t;
  v->id = ++next_id;
  return v;
}

static Expr *new_expr(ExprKind k, DType t) {
  Expr *e = xalloc(sizeof *e);
  e->kind = k;
  e->dtype = t;
  return e;
}

Expr *ir_const(DType t, int64_t v) {
  Expr *e = new_expr(E_INT, t);
  e->ival = v;
  return e;
}

Expr *ir_int(int64_t v) { return ir_const(DT_I64, v); }

Expr *ir_float(DType t, double v) {
  Expr *e = new_expr(E_FLOAT, t);
  e->fval = v;
  return e;
}

Expr *ir_var(IrVar *v) {
  Expr *e = new_expr(E_VAR, v->dtype);
  e->var = v;
  return e;
}

static Expr **copy_args(Expr **args, int n) {
  Expr **a = xalloc(sizeof(Expr *) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) a[i] = args[i];
  return a;
}

Expr *ir_load(Buffer *b, Expr **idx) {
  Expr *e = new_expr(E_LOAD, b->dtype);
  e->buf = b;
  e->nargs = b->ndim;
  e->args = copy_args(idx, b->ndim);
  return e;
}

Expr *ir_bin(BinOp op, Expr *a, Expr *b) {
  bool cmp = op >= OP_EQ && op <= OP_OR;
  Expr *e = new_expr(E_BIN, cmp ? DT_BOOL : a->dtype);
  e->op = op;
  e->a = a;
  e->b = b;
  return e;
}

Expr *ir_un(UnOp op, Expr *a) {
  Expr *e = new_expr(E_UN, op == OP_NOT ? DT_BOOL : a->dtype);
  e->op = op;
  e->a = a;
  return e;
}

Expr *ir_select(Expr *c, Expr *a, Expr *b) {
  Expr *e = new_expr(E_SELECT, a->dtype);
  e->a = c;
  e->b = a;
  e->c = b;
  return e;
}

Expr *ir_call(CallFn fn, Expr **args, int n, DType t) {
  Expr *e = new_expr(E_CALL, t);
  e->op = fn;
  e->nargs = n;
  e->args = copy_args(args, n);
  return e;
}

Expr *ir_cast(DType t, Expr *a) {
  Expr *e = new_expr(E_CAST, t);
  e->a = a;
  return e;
}

bool ir_is_const(const Expr *e, int64_t *v) {
  if (!e || e->kind != E_INT) return false;
  if (v) *v = e->ival;
  return true;
}


/* Fold OP over two integer constants, or with an identity; NULL when nothing folds. */
static Expr *fold(BinOp op, Expr *a, Expr *b) {
  int64_t x, y;
  bool ca = ir_is_const(a, &x), cb = ir_is_const(b, &y);
  int64_t r;
  if (ca && cb && a->dtype == b->dtype && op <= OP_MAX && ir_int_apply(op, x, y, &r))
    return ir_const(a->dtype, dtype_wrap(a->dtype, r)); /* wraps as the generated code does */
  if (op == OP_ADD && ca && x == 0) return b;
  if ((op == OP_ADD || op == OP_SUB) && cb && y == 0) return a;
  if (op == OP_MUL && ((ca && x == 1))) return b;
  if ((op == OP_MUL || op == OP_DIV) && cb && y == 1) return a;
  if (op == OP_MUL && ((ca && x == 0) || (cb && y == 0)) && dtype_is_int(a->dtype))
    return ir_const(a->dtype, 0);
  if (op == OP_MOD && cb && y == 1) return ir_const(a->dtype, 0);
  return NULL;
}

static Expr *bin_fold(BinOp op, Expr *a, Expr *b) {
  Expr *f = fold(op, a, b);
  return f ? f : ir_bin(op, a, b);
}

Expr *ir_add(Expr *a, Expr *b) { return bin_fold(OP_ADD, a, b); }
Expr *ir_sub(Expr *a, Expr *b) { return bin_fold(OP_SUB, a, b); }
Expr *ir_mul(Expr *a, Expr *b) { return bin_fold(OP_MUL, a, b); }
Expr *ir_min(Expr *a, Expr *b) { return bin_fold(OP_MIN, a, b); }
Expr *ir_max(Expr *a, Expr *b) { return bin_fold(OP_MAX, a, b); }
Expr *ir_floordiv(Expr *a, Expr *b) { return bin_fold(OP_DIV, a, b); }
Expr *ir_floormod(Expr *a, Expr *b) { return bin_fold(OP_MOD, a, b); }

static Stmt *new_stmt(StmtKind k) {
  Stmt *s = xalloc(sizeof *s);
  s->kind = k;
  return s;
}

Stmt *ir_for(IrVar *v, Expr *min, Expr *extent, ForKind k, Stmt *body) {
  Stmt *s = new_stmt(S_FOR);
  s->var = v;
  s->min = min;
  s->extent = extent;
  s->for_kind = k;
  s->body = body;
  return s;
}

Stmt *ir_store(Buffer *b, Expr **idx, Expr *value) {
  Stmt *s = new_stmt(S_STORE);
  s->buf = b;
  s->nargs = b->ndim;
  s->args = copy_args(idx, b->ndim);
  s->value = value;
  return s;
}

Stmt *ir_alloc(Buffer *b, Stmt *body) {
  Stmt *s = new_stmt(S_ALLOC);
  s->buf = b;
  s->body = body;
  return s;
}

Stmt *ir_if(Expr *cond, Stmt *then, Stmt *els) {
  Stmt *s = new_stmt(S_IF);
  s->cond = cond;
  s->body = then;
  s->els = els;
  return s;
}

static void seq_collect(Vec *out, Stmt *s) {
  if (!s) return;
  if (s->kind == S_SEQ) {
    for (int i = 0; i < s->n; i++) seq_collect(out, s->stmts[i]);
    return;
  }
  vec_push(out, s);
}

Stmt *ir_seq(Stmt **ss, int n) {
  Vec v = {0};
  for (int i = 0; i < n; i++) seq_collect(&v, ss[i]);
  if (v.len == 1) return v.data[0];
  Stmt *s = new_stmt(S_SEQ);
  s->n = v.len;
  s->stmts = (Stmt **)v.data;
  return s;
}

Stmt *ir_seq2(Stmt *a, Stmt *b) {
  Stmt *two[2] = {a, b};
  return ir_seq(two, 2);
}

Stmt *ir_barrier(void) { return new_stmt(S_BARRIER); }

Buffer *ir_buffer(const char *name, DType t, int ndim, Expr **shape, Scope scope, BufKind kind) {
  static int next_buf;
  Buffer *b = xalloc(sizeof *b);
  b->name = xstrdup(name);
  b->dtype = t;
  b->ndim = ndim;
  b->shape = copy_args(shape, ndim);
  b->scope = scope;
  b->kind = kind;
  b->id = ++next_buf;
  return b;
}

/* Substitution rebuilds only the spine that changes. */
Expr *ir_subst(Expr *e, IrVar **vars, Expr **vals, int n) {
  if (!e) return NULL;
  switch (e->kind) {
  case E_INT:
  case E_FLOAT: return e;
  case E_VAR:
    for (int i = 0; i < n; i++)
      if (vars[i] == e->var) return vals[i];
    return e;
  default: break;
  }
  Expr *c = xalloc(sizeof *c);
  *c = *e;
  c->a = ir_subst(e->a, vars, vals, n);
  c->b = ir_subst(e->b, vars, vals, n);
  c->c = ir_subst(e->c, vars, vals, n);
  if (e->nargs) {
    c->args = xalloc(sizeof(Expr *) * (size_t)e->nargs);
    for (int i = 0; i < e->nargs; i++) c->args[i] = ir_subst(e->args[i], vars, vals, n);
  }
  return c;
}

static Buffer *buf_swapped(Buffer **from, Buffer **to, int n, Buffer *b) {
  for (int i = 0; i < n; i++)
    if (from[i] == b) return to[i];
  return b;
}

/* Like ir_subst, for buffers: only the spine above a swapped load is rebuilt. */
Expr *ir_buf_subst(Expr *e, Buffer **from, Buffer **to, int n) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Buffer *b = e->kind == E_LOAD ? buf_swapped(from, to, n, e->buf) : e->buf;
  Expr *a = ir_buf_subst(e->a, from, to, n), *bb = ir_buf_subst(e->b, from, to, n), *cc = ir_buf_subst(e->c, from, to, n);
  Expr **args = e->args;
  for (int i = 0; i < e->nargs; i++) {
    Expr *x = ir_buf_subst(e->args[i], from, to, n);
    if (x == e->args[i]) continue;
    if (args == e->args) args = copy_args(e->args, e->nargs);
    args[i] = x;
  }
  if (b == e->buf && a == e->a && bb == e->b && cc == e->c && args == e->args) return e;
  Expr *c = xalloc(sizeof *c);
  *c = *e;
  c->buf = b, c->a = a, c->b = bb, c->c = cc, c->args = args;
  return c;
}

/* What a statement's copy substitutes: variables (VARS -> VALS) or buffers (FROM -> TO,
 * its accesses and its own buffer, a store's or an allocation's). */
typedef struct StmtSubst {
  IrVar **vars;
  Expr **vals;
  Buffer **from, **to;
  int n;
} StmtSubst;

static Expr *subst_expr(Expr *e, const StmtSubst *m) {
  return m->from ? ir_buf_subst(e, m->from, m->to, m->n) : ir_subst(e, m->vars, m->vals, m->n);
}

static Stmt *stmt_subst(Stmt *s, const StmtSubst *m) {
  if (!s) return NULL;
  Stmt *c = xalloc(sizeof *c);
  *c = *s;
  c->min = subst_expr(s->min, m);
  c->extent = subst_expr(s->extent, m);
  c->value = subst_expr(s->value, m);
  c->cond = subst_expr(s->cond, m);
  if (s->nargs) {
    c->args = xalloc(sizeof(Expr *) * (size_t)s->nargs);
    for (int i = 0; i < s->nargs; i++) c->args[i] = subst_expr(s->args[i], m);
  }
  if (m->from && (s->kind == S_STORE || s->kind == S_ALLOC)) c->buf = buf_swapped(m->from, m->to, m->n, s->buf);
  c->body = stmt_subst(s->body, m);
  c->els = stmt_subst(s->els, m);
  if (s->n) {
    c->stmts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    for (int i = 0; i < s->n; i++) c->stmts[i] = stmt_subst(s->stmts[i], m);
  }
  return c;
}

Stmt *ir_stmt_subst(Stmt *s, IrVar **vars, Expr **vals, int n) {
  StmtSubst m = {vars, vals, NULL, NULL, n};
  return stmt_subst(s, &m);
}

Stmt *ir_stmt_buf_subst(Stmt *s, Buffer **from, Buffer **to, int n) {
  StmtSubst m = {NULL, NULL, from, to, n};
  return stmt_subst(s, &m);
}

const Expr *ir_first_load(const Expr *e, const Buffer *b) {
  if (!e) return NULL;
  if (e->kind == E_LOAD && e->buf == b) return e;
  const Expr *r = NULL;
  for (int i = 0; i < e->nargs && !r; i++) r = ir_first_load(e->args[i], b);
  if (!r) r = ir_first_load(e->a, b);
  if (!r) r = ir_first_load(e->b, b);
  if (!r) r = ir_first_load(e->c, b);
  return r;
}

Expr *ir_copy(Expr *e) { return ir_subst(e, NULL, NULL, 0); }

bool ir_equal(const Expr *a, const Expr *b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
  case E_INT: return a->ival == b->ival;
  case E_FLOAT: return a->fval == b->fval;
  case E_VAR: return a->var == b->var;
  default: break;
  }
  if (a->op != b->op || a->buf != b->buf || a->nargs != b->nargs) return false;
  for (int i = 0; i < a->nargs; i++)
    if (!ir_equal(a->args[i], b->args[i])) return false;
  return ir_equal(a->a, b->a) && ir_equal(a->b, b->b) && ir_equal(a->c, b->c);
}

bool ir_uses_var(const Expr *e, const IrVar *v) {
  if (!e) return false;
  if (e->kind == E_VAR) return e->var == v;
  for (int i = 0; i < e->nargs; i++)
    if (ir_uses_var(e->args[i], v)) return true;
  return ir_uses_var(e->a, v) || ir_uses_var(e->b, v) || ir_uses_var(e->c, v);
}

/* The value of a size variable (CTX: the function and the sizes' values). */
typedef struct SizeEnv {
  const LoweredFunc *f;
  const int64_t *sizes;
} SizeEnv;

static bool size_value(const Expr *e, void *ctx, int64_t *out) {
  const SizeEnv *env = ctx;
  if (e->kind != E_VAR || !env->f || !env->sizes) return false;
  for (int i = 0; i < env->f->nsizes; i++)
    if (env->f->sizes[i] == e->var) return *out = env->sizes[i], true;
  return false;
}

int64_t ir_buffer_numel(const Buffer *b, const LoweredFunc *f, const int64_t *sizes) {
  int64_t n = 1;
  for (int d = 0; d < b->ndim; d++) {
    int64_t e;
    if (!ir_eval_int(b->shape[d], size_value, &(SizeEnv){f, sizes}, &e) || e < 0) return -1;
    if (d == b->ndim - 1 && b->pad && e > 0 && __builtin_add_overflow(e, b->pad, &e)) return -1; /* row pitch */
    if (__builtin_mul_overflow(n, e, &n)) return -1;
  }
  return n;
}

/* ---- atomic updates ---- */

/* Is E the load of what store S writes? */
static bool self_load(const Expr *e, const Stmt *s) {
  if (!e || e->kind != E_LOAD || e->buf != s->buf || e->nargs != s->nargs) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!ir_equal(e->args[i], s->args[i])) return false;
  return true;
}

/* E, a sum in which S's own load appears once with a + sign (the simplifier may have
 * reassociated `H[x] + (a - 3)` into `H[x] + a - 3`), without that load; NULL when it
 * is not one. *ALONE: E was the load itself (nothing is left). */
static Expr *strip_self(Expr *e, const Stmt *s, bool *alone) {
  if (self_load(e, s)) {
    *alone = true;
    return NULL;
  }
  if (e->kind != E_BIN || (e->op != OP_ADD && e->op != OP_SUB)) return NULL;
  bool in_a = false;
  Expr *a = strip_self(e->a, s, &in_a);
  if (in_a || a) {
    if (in_a) return e->op == OP_ADD ? e->b : ir_un(OP_NEG, e->b);
    return ir_bin(e->op, a, e->b);
  }
  if (e->op != OP_ADD) return NULL;
  bool in_b = false;
  Expr *b = strip_self(e->b, s, &in_b);
  return in_b ? e->a : b ? ir_bin(OP_ADD, e->a, b) : NULL;
}

Expr *ir_update_operand(const Stmt *s, BinOp *how) {
  Expr *e = s->value;
  bool alone = false;
  *how = OP_ADD;
  if (e->kind == E_BIN && (e->op == OP_MAX || e->op == OP_MIN)) {
    *how = (BinOp)e->op;
    return self_load(e->a, s) ? e->b : self_load(e->b, s) ? e->a : NULL;
  }
  return strip_self(e, s, &alone);
}

Stmt *ir_call_stmt(const char *callee, Buffer **bufs, int nin, int nout, Expr **sizes, int nsizes) {
  Stmt *s = new_stmt(S_CALL);
  s->callee = callee;
  s->bufs = bufs;
  s->nbufs = nin + nout;
  s->nin = nin;
  s->args = sizes;
  s->nargs = nsizes;
  return s;
}
