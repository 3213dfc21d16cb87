/* check.c — the checker: an A_FILE AST becomes a Program of Kernels, each a DAG of Ops
 * (one per tensor statement) with typed IR values, plus the Variants of its schedules.
 *
 *   check_program
 *     file items (imports first, each file with its own constants)
 *       const      -> folded int64 (or the -D override)
 *       kernel     -> buffers (inputs, outputs, `tensor`s), sizes, one Op per statement
 *                     (check_expr.c: reduction axes, dtypes; check_bounds.c: accesses)
 *                  -> writers, topological order, cycles
 *     schedules    -> Variants of their kernels (steps are checked by schedule.c)
 * Errors are reported with diag_error and checking goes on; NULL if there were any.
 */
#include "check_impl.h"

#include <string.h>

/* ---- the whole program -------------------------------------------------------- */

typedef struct Checker {
  Define *defs;
  int ndefs;
  Vec kernels;   /* Kernel* */
  Vec externs;   /* Kernel* of `extern kernel` declarations: buffers and sizes, no ops */
  Vec schedules; /* Ast* */
} Checker;

/* ---- constants ---------------------------------------------------------------- */

/* A constant of the file's table ENV (a SymTab). */
static bool const_value(void *env, const char *name, int64_t *value) {
  Sym *c = chk_lookup(env, name);
  if (c) *value = c->value;
  return c != NULL;
}

static void check_const(Checker *ck, SymTab *consts, Ast *c) {
  if (!c->name) return;
  Sym *old = chk_lookup(consts, c->name);
  if (old) {
    diag_error(c->loc, "constant '%s' is defined twice", c->name);
    diag_note(old->loc, "the first definition is here");
    return;
  }
  Define *d = chk_find_define(ck->defs, ck->ndefs, c->name);
  int64_t v = 0;
  if (d) {
    d->used = true;
    v = d->value;
  } else if (!check_const_expr(c->a, const_value, consts, NULL, &v)) {
    return;
  }
  chk_define(consts, SYM_CONST, c->name, c->loc)->value = v;
}

/* ---- buffers ------------------------------------------------------------------ */

static bool param_dtype(Ast *p, DType *t) {
  if (p->name2 && dtype_parse(p->name2, t)) return true;
  if (p->sval && dtype_parse(p->sval, t)) return true;
  const char *s = p->name2 ? p->name2 : p->sval;
  diag_error(p->loc, "unknown dtype '%s' of %s: use f32 f64 f16 i8 i16 i32 i64 u8 u32 bool",
             s ? s : "?", p->name ? p->name : "?");
  return false;
}

/* The constant dimensions of a shape, times the element size, fit in int64: every index
 * and byte offset computed later is then exact. (Symbolic dimensions are checked when
 * their values are known, at run time.) */
static bool shape_fits(Ast *p, DType t, Expr **shape, int nd) {
  int64_t bytes = dtype_bytes(t), c;
  for (int d = 0; d < nd; d++)
    if (ir_is_const(shape[d], &c) && __builtin_mul_overflow(bytes, c, &bytes)) {
      diag_error(p->loc, "%s has too many elements: its size in bytes does not fit in 64 bits",
                 p->name);
      return false;
    }
  return true;
}

/* A parameter, output or `tensor`: a Buffer of KIND, declared in the kernel's names. */
static Buffer *declare_buffer(KCtx *kc, Ast *p, BufKind kind) {
  if (!p || !p->name) return NULL;
  Sym *old = chk_lookup(&kc->syms, p->name);
  if (old && old->kind != SYM_CONST) {
    diag_error(p->loc, "'%s' is declared twice in kernel %s", p->name, kc->k->name);
    diag_note(old->loc, "the first declaration is here");
    return NULL;
  }
  if (old) {
    diag_error(p->loc, "'%s' is a constant; give the tensor another name", p->name);
    return NULL;
  }
  DType t;
  bool ok = param_dtype(p, &t);
  int nd = p->list.len;
  Expr **shape = xalloc(sizeof(Expr *) * (size_t)(nd + 1));
  for (int d = 0; d < nd; d++) {
    int64_t c;
    shape[d] = chk_size_expr(kc, VEC_AT(p->list, d), kind != BUF_TEMP);
    if (!shape[d]) ok = false;
    else if (ir_is_const(shape[d], &c) && c < 1) {
      diag_error(p->loc, "dimension %d of %s is %lld: dimensions must be at least 1", d + 1, p->name, (long long)c);
      ok = false;
    }
  }
  if (!ok) return NULL;
  shape_fits(p, t, shape, nd); /* reported; the buffer stays declared (no follow-up errors) */
  Buffer *b = ir_buffer(p->name, t, nd, shape, SCOPE_GLOBAL, kind);
  Sym *y = chk_define(&kc->syms, SYM_TENSOR, p->name, p->loc);
  y->buf = b;
  y->decl = p;
  return b;
}

/* ---- statements --------------------------------------------------------------- */

static ReduceOp reduce_of(int op) {
  switch (op) {
  case TOKOP_ADDEQ: return RED_SUM;
  case TOKOP_MAXEQ: return RED_MAX;
  case TOKOP_MINEQ: return RED_MIN;
  case TOKOP_MULEQ: return RED_PROD;
  case TOKOP_ARGMAXEQ: return RED_ARGMAX;
  case TOKOP_ARGMINEQ: return RED_ARGMIN;
  default: return RED_NONE;
  }
}

/* The written tensor of a statement: an output or `tensor` of this kernel, not yet written. */
static Sym *stmt_target(KCtx *kc, Ast *st, Ast *lhs) {
  Sym *t = lhs && lhs->name ? chk_lookup(&kc->syms, lhs->name) : NULL;
  if (!lhs || (lhs->kind != A_ACCESS && lhs->kind != A_NAME)) {
    diag_error(st->loc, "the left side of a statement must be a tensor access such as C[i, j]");
    return NULL;
  }
  if (!t || t->kind != SYM_TENSOR) {
    diag_error(lhs->loc, "'%s' is not an output or a `tensor` of kernel %s: declare it with "
               "`tensor %s: f32[...]` or as an output", lhs->name ? lhs->name : "?", kc->k->name,
               lhs->name ? lhs->name : "?");
    return NULL;
  }
  if (t->buf->kind == BUF_INPUT) {
    diag_error(lhs->loc, "'%s' is an input of kernel %s and cannot be written; write a new tensor",
               t->name, kc->k->name);
    return NULL;
  }
  Op *first = t->buf->op;
  if (first && first == kc->last && first->rop == RED_NONE && !first->is_scan && !first->scatter &&
      st->op != '=' && st->op != TOKOP_ARGMAXEQ && st->op != TOKOP_ARGMINEQ)
    return t; /* an update definition: check_stmt merges FIRST into it */
  if (t->buf->op) {
    diag_error(lhs->loc, "'%s' is written by two statements: a tensor is written by exactly one "
               "(an initial `=` statement may be followed at once by one update, +=, max=, min= "
               "or *=)", t->name);
    diag_note(t->buf->op->loc, "the first statement that writes %s is here", t->name);
    return NULL;
  }
  return t;
}

/* LHS indices: distinct plain names that become the op's axes. */
static bool stmt_axes(SCtx *s, Ast *lhs, Buffer *out) {
  Op *op = s->op;
  int n = lhs->kind == A_ACCESS ? lhs->list.len : 0;
  if (n != out->ndim) {
    diag_error(lhs->loc, "%s has %d dimension%s but is written with %d ind%s", out->name, out->ndim,
               out->ndim == 1 ? "" : "s", n, n == 1 ? "ex" : "ices");
    return false;
  }
  op->ndim = n;
  op->axes = xalloc(sizeof(IrVar *) * (size_t)(n + 1));
  bool ok = true;
  for (int d = 0; d < n; d++) {
    Ast *ix = VEC_AT(lhs->list, d);
    if (ix && ix->kind != A_NAME && op->rop != RED_NONE) { /* a scatter: translated later */
      if (!op->scatter) op->scatter = xalloc(sizeof(Expr *) * (size_t)(n + 1));
      op->axes[d] = ir_newvar(xprintf("%s_d%d", out->name, d), DT_I64);
      continue;
    }
    if (!ix || ix->kind != A_NAME || !ix->name) {
      diag_error(ix ? ix->loc : lhs->loc, "index %d of %s must be a plain name such as i: the left "
                 "side names the axes it ranges over (a computed index, a scatter, needs a "
                 "reduction: H[A[i]] += 1)", d + 1, out->name);
      ok = false;
      continue;
    }
    Sym *y = chk_lookup(&s->names, ix->name);
    if (y && y->kind == SYM_AXIS) {
      diag_error(ix->loc, "index '%s' appears twice on the left side: use distinct names", ix->name);
      ok = false;
      continue;
    }
    if (y) {
      diag_error(ix->loc, "index '%s' of %s is already %s: use another name", ix->name, out->name,
                 y->kind == SYM_CONST ? "a constant" : y->kind == SYM_SIZE ? "a size" : "a tensor");
      ok = false;
      continue;
    }
    Sym *a = chk_define(&s->names, SYM_AXIS, ix->name, ix->loc);
    a->var = op->axes[d] = ir_newvar(ix->name, DT_I64);
    chk_bounds_var(&s->bounds, a->var, ir_int(0), out->shape[d]);
  }
  return ok;
}

/* The value's dtype fits the reduction. */
static bool reduce_dtype_ok(Op *op, Ast *st) {
  if (op->rop == RED_ARGMAX || op->rop == RED_ARGMIN) {
    if (dtype_is_int(op->out->dtype) && op->out->dtype != DT_BOOL) return true;
    diag_error(st->loc, "`%s` gives an index: %s must be an integer tensor (i32, i64, ...), not %s",
               reduceop_names[op->rop], op->name, dtype_name(op->out->dtype));
    return false;
  }
  if (op->rop == RED_NONE || op->out->dtype != DT_BOOL) return true;
  if (op->rop == RED_MAX || op->rop == RED_MIN) return true; /* any, all */
  diag_error(st->loc, "`%s` needs a numeric tensor, but %s is bool (max= is any, min= is all)",
             reduceop_names[op->rop], op->name);
  return false;
}

/* ---- scans -------------------------------------------------------------------- */

static void self_loads(Expr *e, const Buffer *b, Vec *out) {
  if (!e) return;
  if (e->kind == E_LOAD && e->buf == b) vec_push(out, e);
  for (int i = 0; i < e->nargs; i++) self_loads(e->args[i], b, out);
  self_loads(e->a, b, out);
  self_loads(e->b, b, out);
  self_loads(e->c, b, out);
}

/* The first access of tensor NAME in A (for the location of errors). */
static Ast *self_access(Ast *a, const char *name) {
  if (!a) return NULL;
  if (a->kind == A_ACCESS && a->name && strcmp(a->name, name) == 0) return a;
  Ast *r = self_access(a->a, name);
  if (!r) r = self_access(a->b, name);
  if (!r) r = self_access(a->c, name);
  for (int i = 0; !r && i < a->list.len; i++) r = self_access(VEC_AT(a->list, i), name);
  return r;
}

/* How far back index IDX of a self-load reaches along axis V: c for `v - c`, 0 for `v`,
 * -1 for anything else. */
static int64_t scan_distance(Expr *idx, IrVar *v) {
  Expr *e = simplify(idx, NULL);
  int64_t c;
  if (e->kind == E_VAR && e->var == v) return 0;
  if (e->kind != E_BIN || !e->a || e->a->kind != E_VAR || e->a->var != v || !ir_is_const(e->b, &c))
    return -1;
  if (e->op == OP_SUB && c >= 1) return c;
  if (e->op == OP_ADD && c <= -1 && c != INT64_MIN) return -c;
  return -1;
}

/* A statement that reads the tensor it writes is a scan (LANGUAGE.md, "Scans"): `=`,
 * every self-read at the same indices but one dimension, the scan dimension, where it
 * is `i - c` with c >= 1 (an element computed earlier in that dimension's loop). */
static bool check_scan(Op *op, Ast *st) {
  Vec loads = {0};
  self_loads(op->value, op->out, &loads);
  if (!loads.len) return true;
  Ast *at = self_access(st->b, op->name);
  Loc loc = at ? at->loc : st->loc;
  if (op->rop != RED_NONE) {
    diag_error(loc, "%s reads itself in a `%s` statement: a reduction cannot read the tensor it "
               "writes (a scan is written with `=`: S[i] = i > 0 ? S[i - 1] + X[i] : X[i])",
               op->name, reduceop_names[op->rop]);
    return false;
  }
  int dim = -1;
  for (int j = 0; j < loads.len; j++) {
    Expr *ld = VEC_AT(loads, j);
    for (int d = 0; d < op->ndim; d++) {
      int64_t c = scan_distance(ld->args[d], op->axes[d]);
      if (c == 0) continue;
      if (c < 0) {
        diag_error(loc, "%s reads itself at index '%s' in dimension %d: a scan reads an element "
                   "computed before, `%s - c` with c >= 1 in its scan dimension and the left "
                   "side's index in the others", op->name, ir_expr_str(ld->args[d]), d + 1,
                   op->axes[d]->name);
        return false;
      }
      if (dim >= 0 && dim != d) {
        diag_error(loc, "%s is scanned along two dimensions (%s and %s): a scan runs along one",
                   op->name, op->axes[dim]->name, op->axes[d]->name);
        return false;
      }
      dim = d;
    }
    if (dim < 0) {
      diag_error(loc, "%s reads itself at the element it writes: a scan reads an element computed before, "
                 "such as %s[%s - 1] (a reduction is written with +=, max=, ...)", op->name, op->name,
                 op->ndim ? op->axes[0]->name : "i");
      return false;
    }
  }
  op->is_scan = true;
  op->scan_dim = dim;
  return true;
}

/* ---- update definitions --------------------------------------------------------- */

/* OP, an update of the tensor that FIRST (the statement before) defines, starts from
 * FIRST's value: OP->init, FIRST's reads added, FIRST replaced in the kernel. */
static bool merge_init(KCtx *kc, Op *op, Op *first, Ast *st, Vec *reads) {
  if (op->scatter) {
    diag_error(st->loc, "a scatter cannot update a tensor that a statement before defines");
    return false;
  }
  Expr **to = xalloc(sizeof(Expr *) * (size_t)(op->ndim + 1));
  for (int d = 0; d < op->ndim; d++) to[d] = ir_var(op->axes[d]);
  op->init = ir_subst(first->value, first->axes, to, first->ndim);
  for (int i = 0; i < first->nreads; i++) {
    bool seen = false;
    for (int j = 0; j < reads->len; j++) seen |= VEC_AT(*reads, j) == first->reads[i];
    if (!seen) vec_push(reads, first->reads[i]);
  }
  kc->replaced = first;
  return true;
}

/* One A_STMT -> an Op (NULL after errors; the tensor is still marked as written). */
static Op *check_stmt(KCtx *kc, Ast *st) {
  Sym *t = stmt_target(kc, st, st->a);
  if (!t) return NULL;
  Op *first = t->buf->op; /* an update definition's initial one */
  t->buf->op = NULL;
  SCtx s;
  memset(&s, 0, sizeof s);
  s.kc = kc;
  s.stmt = st;
  s.names.parent = &kc->syms;
  s.bounds.tranges = &kc->tranges;
  Op *op = s.op = xalloc(sizeof *op);
  op->name = t->name;
  op->loc = st->a->loc;
  op->out = t->buf;
  op->rop = reduce_of(st->op);
  t->buf->op = op;
  if (st->op != '=' && op->rop == RED_NONE) {
    diag_error(st->loc, "unknown statement operator: use =, +=, max=, min= or *=");
    return NULL;
  }
  if (!stmt_axes(&s, st->a, t->buf) || !reduce_dtype_ok(op, st)) return NULL;
  if (!chk_reduction_axes(&s)) return NULL;
  for (int i = 0; i < op->nred; i++)
    chk_bounds_var(&s.bounds, op->raxes[i], op->rmin[i], op->rext[i]);
  if (op->rcond) chk_bounds_assume(&s.bounds, op->rcond, true);
  for (int d = 0; op->scatter && d < op->ndim; d++) {
    Ast *ix = VEC_AT(st->a->list, d);
    if (ix->kind != A_NAME && !(op->scatter[d] = chk_scatter_index(&s, ix, t->buf, d))) return NULL;
  }
  bool arg = op->rop == RED_ARGMAX || op->rop == RED_ARGMIN;
  op->value = arg ? chk_value_own(&s, st->b) : chk_value(&s, st->b, t->buf->dtype);
  if (!op->value || !check_scan(op, st)) return NULL;
  if (arg && op->rcond) {
    diag_error(st->loc, "`%s` over a range that depends on the indices of %s is not supported: "
               "write the value as a guard, c ? X[...] : -inf", reduceop_names[op->rop], op->name);
    return NULL;
  }
  if (arg && op->scatter) {
    diag_error(st->loc, "a scatter's reduction is +=, max=, min= or *=, not `%s`", reduceop_names[op->rop]);
    return NULL;
  }
  if (arg && (op->value->dtype == DT_BOOL || !op->nred)) {
    diag_error(st->loc, op->nred ? "`%s` compares numbers, not bools: cast the value, i32(...)"
                                 : "`%s` needs a reduction axis: a name on the right only",
               reduceop_names[op->rop]);
    return NULL;
  }
  if (first && !merge_init(kc, op, first, st, &s.reads)) return NULL;
  op->nreads = s.reads.len;
  op->reads = (Buffer **)s.reads.data;
  if (!op->reads) op->reads = xalloc(sizeof(Buffer *));
  chk_bounds_record(&s.bounds, op);
  return op;
}

/* ---- kernels ------------------------------------------------------------------ */

static Buffer **vec_bufs(Vec *v, int *n) {
  *n = v->len;
  return v->len ? (Buffer **)v->data : xalloc(sizeof(Buffer *));
}

/* Declare the kernel's buffers: parameters, outputs, then `tensor`s. */
static void kernel_buffers(KCtx *kc, Ast *kn) {
  Kernel *k = kc->k;
  Vec in = {0}, out = {0}, tmp = {0};
  Buffer *b;
  for (int i = 0; i < kn->list.len; i++)
    if ((b = declare_buffer(kc, VEC_AT(kn->list, i), BUF_INPUT))) vec_push(&in, b);
  for (int i = 0; i < kn->list2.len; i++)
    if ((b = declare_buffer(kc, VEC_AT(kn->list2, i), BUF_OUTPUT))) vec_push(&out, b);
  for (int i = 0; i < kn->list3.len; i++) {
    Ast *t = VEC_AT(kn->list3, i);
    if (t && t->kind == A_TENSOR && (b = declare_buffer(kc, t, BUF_TEMP))) vec_push(&tmp, b);
  }
  k->inputs = vec_bufs(&in, &k->ninputs);
  k->outputs = vec_bufs(&out, &k->noutputs);
  k->temps = vec_bufs(&tmp, &k->ntemps);
  if (!kn->list2.len) diag_error(kn->loc, "kernel %s has no output: add `-> C: f32[...]`", k->name);
}

/* Every output and `tensor` is written; a `tensor` nobody writes is an error. */
static void check_written(KCtx *kc) {
  for (int i = 0; i < kc->syms.syms.len; i++) {
    Sym *y = VEC_AT(kc->syms.syms, i);
    if (y->kind != SYM_TENSOR || y->buf->kind == BUF_INPUT || y->buf->op) continue;
    if (y->buf->kind == BUF_OUTPUT)
      diag_error(y->loc, "output '%s' of kernel %s is never written: add a statement %s[...] = ...",
                 y->name, kc->k->name, y->name);
    else if (y->first_read.file || y->first_read.line)
      diag_error(y->first_read, "tensor '%s' is read but no statement writes it", y->name);
    else
      diag_error(y->loc, "tensor '%s' is declared but never written: write it or remove it", y->name);
  }
}

/* Depth-first: producers of OPS[i] before it. COLOR: 0 new, 1 on the path, 2 done. */
static bool topo_visit(Op **ops, int n, int *color, int i, Vec *order, Vec *path) {
  if (color[i] == 2) return true;
  if (color[i] == 1) {
    char *cyc = (char *)ops[i]->name;
    int from = path->len - 1;
    while (from > 0 && VEC_AT(*path, from) != ops[i]) from--;
    for (int j = from + 1; j < path->len; j++) cyc = xprintf("%s -> %s", cyc, ((Op *)VEC_AT(*path, j))->name);
    cyc = xprintf("%s -> %s", cyc, ops[i]->name);
    if (path->len && VEC_AT(*path, path->len - 1) == ops[i])
      diag_error(ops[i]->loc, "%s reads itself: a statement cannot read the tensor it writes "
                 "(use a reduction such as += or write a new tensor)", ops[i]->name);
    else
      diag_error(ops[i]->loc, "the tensors form a cycle: %s; a kernel's stages must form a DAG", cyc);
    return false;
  }
  color[i] = 1;
  vec_push(path, ops[i]);
  bool ok = true;
  for (int r = 0; r < ops[i]->nreads && ok; r++)
    for (int j = 0; j < n; j++)
      if (ops[j] == ops[i]->reads[r]->op && !(j == i && ops[i]->is_scan) &&
          !topo_visit(ops, n, color, j, order, path))
        ok = false;
  path->len--;
  color[i] = 2;
  vec_push(order, ops[i]);
  return ok;
}

/* Order the ops producers first; report one cycle. */
static void topo_sort(Kernel *k, Vec *ops) {
  int n = ops->len, *color = xalloc(sizeof(int) * (size_t)(n + 1));
  Vec order = {0}, path = {0};
  bool ok = true;
  for (int i = 0; i < n && ok; i++) ok = topo_visit((Op **)ops->data, n, color, i, &order, &path);
  k->ops = (Op **)(order.len ? order.data : xalloc(sizeof(Op *)));
  k->nops = order.len;
}

/* ---- extern kernels ----------------------------------------------------------- */

/* The value of extern size V under the binding VARS -> VALS (N of them): E with those
 * replaced, simplified; NULL when E still has a size of the extern. */
static Expr *bound_shape(Expr *e, Kernel *ek, Expr **vals) {
  for (int i = 0; i < ek->nsizes; i++)
    if (!vals[i] && ir_uses_var(e, ek->sizes[i])) return NULL;
  return simplify(ir_subst(e, ek->sizes, vals, ek->nsizes), NULL);
}

/* Bind the extern's sizes that stand alone as a dimension of P to A's extents. */
static void bind_sizes(Kernel *ek, Buffer *p, Buffer *a, Expr **vals) {
  for (int d = 0; d < p->ndim && d < a->ndim; d++)
    for (int i = 0; i < ek->nsizes; i++)
      if (!vals[i] && p->shape[d]->kind == E_VAR && p->shape[d]->var == ek->sizes[i]) vals[i] = a->shape[d];
}

/* A of the call matches the extern's P (DType, rank, extents under VALS). */
static bool arg_matches(Kernel *ek, Buffer *p, Buffer *a, Expr **vals, Loc loc, const char *what) {
  bool ok = p->dtype == a->dtype && p->ndim == a->ndim;
  for (int d = 0; ok && d < p->ndim; d++) {
    Expr *want = bound_shape(p->shape[d], ek, vals);
    if (!want) {
      diag_error(loc, "extern kernel %s: dimension %d of its %s %s (%s) uses a size that no "
                 "dimension of its own gives; a size must stand alone as a dimension somewhere",
                 ek->name, d + 1, what, p->name, ir_expr_str(p->shape[d]));
      return false;
    }
    ok = ir_equal(want, simplify(a->shape[d], NULL));
  }
  if (ok) return true;
  char *want = xprintf("%s[", dtype_name(p->dtype)), *got = xprintf("%s[", dtype_name(a->dtype));
  for (int d = 0; d < p->ndim; d++) {
    Expr *w = bound_shape(p->shape[d], ek, vals);
    want = xprintf("%s%s%s", want, d ? ", " : "", w ? ir_expr_str(w) : ir_expr_str(p->shape[d]));
  }
  for (int d = 0; d < a->ndim; d++) got = xprintf("%s%s%s", got, d ? ", " : "", ir_expr_str(a->shape[d]));
  diag_error(loc, "'%s' is %s], but extern kernel %s's %s %s is %s] here", a->name, got, ek->name,
             what, p->name, want);
  diag_note(ek->loc, "extern kernel %s is declared here", ek->name);
  return false;
}

/* After an error in call ST: its outputs count as written (no "never written" after it). */
static void outputs_written(KCtx *kc, Ast *st) {
  for (int i = 0; i < st->list.len; i++) {
    Ast *a = VEC_AT(st->list, i);
    Sym *y = chk_lookup(&kc->syms, a->name);
    if (!y || y->kind != SYM_TENSOR || y->buf->kind == BUF_INPUT || y->buf->op) continue;
    Op *op = xalloc(sizeof *op);
    op->name = a->name;
    op->loc = a->loc;
    y->buf->op = op;
  }
}

/* `Lo, Hi = f(X, Y)`: one Op per output of extern kernel f, the first making the call. */
static bool check_call1(KCtx *kc, Ast *st, Vec *ops);
static void check_call(KCtx *kc, Ast *st, Vec *ops) {
  if (!check_call1(kc, st, ops)) outputs_written(kc, st);
}

static bool check_call1(KCtx *kc, Ast *st, Vec *ops) {
  Kernel *ek = NULL;
  for (int i = 0; kc->externs && i < kc->externs->len; i++)
    if (!strcmp(((Kernel *)VEC_AT(*kc->externs, i))->name, st->name)) ek = VEC_AT(*kc->externs, i);
  if (!ek) {
    diag_error(st->loc, "'%s' is not an extern kernel: a call statement `Y = f(X)` calls one "
               "declared with `extern kernel %s(...) -> ...`", st->name, st->name);
    return false;
  }
  if (st->list2.len != ek->ninputs || st->list.len != ek->noutputs) {
    diag_error(st->loc, "extern kernel %s takes %d input%s and gives %d output%s; this call has %d and %d",
               ek->name, ek->ninputs, ek->ninputs == 1 ? "" : "s", ek->noutputs,
               ek->noutputs == 1 ? "" : "s", st->list2.len, st->list.len);
    diag_note(ek->loc, "extern kernel %s is declared here", ek->name);
    return false;
  }
  int nb = ek->ninputs + ek->noutputs;
  Buffer **bufs = xalloc(sizeof(Buffer *) * (size_t)(nb + 1));
  Expr **vals = xalloc(sizeof(Expr *) * (size_t)(ek->nsizes + 1));
  for (int i = 0; i < nb; i++) {
    bool in = i < ek->ninputs;
    Ast *a = in ? VEC_AT(st->list2, i) : VEC_AT(st->list, i - ek->ninputs);
    Sym *y = chk_lookup(&kc->syms, a->name);
    if (!y || y->kind != SYM_TENSOR) {
      diag_error(a->loc, "'%s' is not a tensor of kernel %s%s", a->name, kc->k->name,
                 in ? "" : ": declare the call's outputs with `tensor NAME: DTYPE[...]` or as outputs");
      return false;
    }
    if (!in && y->buf->kind == BUF_INPUT) {
      diag_error(a->loc, "'%s' is an input of kernel %s and cannot be written; write a new tensor",
                 a->name, kc->k->name);
      return false;
    }
    if (!in && y->buf->op) {
      diag_error(a->loc, "'%s' is written by two statements: a tensor is written by exactly one", a->name);
      diag_note(y->buf->op->loc, "the first statement that writes %s is here", a->name);
      return false;
    }
    for (int j = ek->ninputs; !in && j < i; j++)
      if (bufs[j] == y->buf) {
        diag_error(a->loc, "'%s' is two outputs of one call", a->name);
        return false;
      }
    if (in && !y->first_read.file && !y->first_read.line) y->first_read = a->loc;
    bufs[i] = y->buf;
  }
  Buffer **params = xalloc(sizeof(Buffer *) * (size_t)(nb + 1));
  for (int i = 0; i < nb; i++) params[i] = i < ek->ninputs ? ek->inputs[i] : ek->outputs[i - ek->ninputs];
  for (int i = 0; i < nb; i++) bind_sizes(ek, params[i], bufs[i], vals);
  for (int i = 0; i < nb; i++) {
    Ast *a = i < ek->ninputs ? VEC_AT(st->list2, i) : VEC_AT(st->list, i - ek->ninputs);
    if (!arg_matches(ek, params[i], bufs[i], vals, a->loc, i < ek->ninputs ? "input" : "output")) return false;
  }
  ExternCall *call = xalloc(sizeof *call);
  *call = (ExternCall){ek->name, ek->loc, bufs, ek->ninputs, ek->noutputs, vals, ek->nsizes, NULL};
  for (int j = 0; j < ek->noutputs; j++) {
    Buffer *b = bufs[ek->ninputs + j];
    Op *op = xalloc(sizeof *op);
    op->name = b->name;
    op->loc = ((Ast *)VEC_AT(st->list, j))->loc;
    op->out = b;
    op->ndim = b->ndim;
    op->axes = xalloc(sizeof(IrVar *) * (size_t)(b->ndim + 1));
    for (int d = 0; d < b->ndim; d++) op->axes[d] = ir_newvar(xprintf("d%d", d), DT_I64);
    op->raxes = xalloc(sizeof(IrVar *));
    op->rop = RED_NONE;
    op->value = dtype_is_float(b->dtype) ? ir_float(b->dtype, 0) : ir_const(b->dtype, 0);
    op->ext = call;
    /* the inputs; the later outputs also the first, so that they come after its call */
    op->nreads = ek->ninputs + (j > 0);
    op->reads = xalloc(sizeof(Buffer *) * (size_t)(op->nreads + 1));
    memcpy(op->reads, bufs, sizeof(Buffer *) * (size_t)ek->ninputs);
    if (j > 0) op->reads[ek->ninputs] = bufs[ek->ninputs];
    if (!j) call->first = op;
    b->op = op;
    vec_push(ops, op);
  }
  return true;
}

/* The Kernel of KN (a kernel or an extern kernel) with its buffers and sizes, in KC (whose
 * -D values, if any, are set). */
static Kernel *kernel_head(KCtx *kc, SymTab *consts, Ast *kn) {
  kc->consts = consts;
  kc->syms.parent = consts;
  Kernel *k = kc->k = xalloc(sizeof *k);
  k->name = kn->name;
  k->loc = kn->loc;
  kernel_buffers(kc, kn);
  k->nsizes = kc->sizes.len;
  k->sizes = kc->sizes.len ? (IrVar **)kc->sizes.data : xalloc(sizeof(IrVar *));
  return k;
}

static Kernel *check_kernel(Checker *ck, SymTab *consts, Ast *kn) {
  KCtx kc;
  memset(&kc, 0, sizeof kc);
  kc.defs = ck->defs;
  kc.ndefs = ck->ndefs;
  kc.externs = &ck->externs;
  Kernel *k = kernel_head(&kc, consts, kn);
  Vec ops = {0};
  for (int i = 0; i < kn->list3.len; i++) {
    Ast *st = VEC_AT(kn->list3, i);
    if (st && st->kind == A_CALLSTMT) {
      check_call(&kc, st, &ops);
      kc.last = NULL;
      continue;
    }
    if (!st || st->kind != A_STMT) continue;
    kc.replaced = NULL;
    Op *op = check_stmt(&kc, st);
    if (op && kc.replaced) /* an update definition takes its initial one's place */
      for (int j = 0; j < ops.len; j++)
        if (VEC_AT(ops, j) == kc.replaced) ops.data[j] = op, op = NULL;
    if (op) vec_push(&ops, op);
    kc.last = op ? op : kc.replaced ? VEC_AT(ops, ops.len - 1) : NULL;
  }
  check_written(&kc);
  topo_sort(k, &ops);
  return k;
}

/* ---- files, imports, schedules ------------------------------------------------ */

/* The sizes and buffers of `extern kernel NAME(...) -> ...` (sizes never bound by -D:
 * each call binds them). */
static Kernel *check_extern(SymTab *consts, Ast *ex) {
  KCtx kc;
  memset(&kc, 0, sizeof kc);
  Kernel *k = kernel_head(&kc, consts, ex);
  k->ops = xalloc(sizeof(Op *));
  return k;
}

/* A kernel or extern kernel of this name already, other than at LOC (one file imported twice). */
static bool name_taken(Checker *ck, const char *name, Loc loc, bool *same) {
  *same = false;
  for (int v = 0; v < 2; v++) {
    Vec *l = v ? &ck->externs : &ck->kernels;
    for (int i = 0; i < l->len; i++) {
      Kernel *old = VEC_AT(*l, i);
      if (strcmp(old->name, name)) continue;
      *same = old->loc.line == loc.line && old->loc.col == loc.col &&
              (old->loc.file == loc.file || (old->loc.file && loc.file && !strcmp(old->loc.file, loc.file)));
      if (!*same) {
        diag_error(loc, "%s '%s' is defined twice; rename one of them", v ? "extern kernel" : "kernel", name);
        diag_note(old->loc, "the first definition is here");
      }
      return true;
    }
  }
  return false;
}

static void add_extern(Checker *ck, SymTab *consts, Ast *ex) {
  bool same;
  if (!ex->name || name_taken(ck, ex->name, ex->loc, &same)) return;
  const char *why = c_symbol_clash(ex->name);
  if (why) {
    diag_error(ex->loc, "extern kernel %s is the C symbol %s, which is %s: the function must have "
               "another name", ex->name, ex->name, why);
    return;
  }
  vec_push(&ck->externs, check_extern(consts, ex));
}

static void add_kernel(Checker *ck, SymTab *consts, Ast *kn) {
  if (!kn->name) return;
  bool twice;
  for (int i = 0; i < ck->externs.len; i++)
    if (!strcmp(((Kernel *)VEC_AT(ck->externs, i))->name, kn->name)) {
      name_taken(ck, kn->name, kn->loc, &twice);
      return;
    }
  for (int i = 0; i < ck->kernels.len; i++) {
    Kernel *old = VEC_AT(ck->kernels, i);
    if (strcmp(old->name, kn->name)) continue;
    bool same = old->loc.line == kn->loc.line && old->loc.col == kn->loc.col &&
                (old->loc.file == kn->loc.file ||
                 (old->loc.file && kn->loc.file && !strcmp(old->loc.file, kn->loc.file)));
    if (same) return; /* one file imported twice */
    diag_error(kn->loc, "kernel '%s' is defined twice; rename one of them", kn->name);
    diag_note(old->loc, "the first definition is here");
    return;
  }
  vec_push(&ck->kernels, check_kernel(ck, consts, kn));
}

/* The items of one file: constants first (imports have their own), then kernels. */
static void check_items(Checker *ck, Vec *items, int depth) {
  SymTab *consts = xalloc(sizeof *consts);
  if (depth > 64) return;
  for (int i = 0; i < items->len; i++) {
    Ast *it = VEC_AT(*items, i);
    if (it && it->kind == A_IMPORT) check_items(ck, &it->list, depth + 1);
    else if (it && it->kind == A_CONST) check_const(ck, consts, it);
  }
  for (int i = 0; i < items->len; i++) {
    Ast *it = VEC_AT(*items, i);
    if (it && it->kind == A_EXTERN) add_extern(ck, consts, it);
  }
  for (int i = 0; i < items->len; i++) {
    Ast *it = VEC_AT(*items, i);
    if (it && it->kind == A_KERNEL) add_kernel(ck, consts, it);
    else if (it && it->kind == A_SCHEDULE) vec_push(&ck->schedules, it);
  }
}

static bool parse_targets(Ast *sc, unsigned *mask) {
  *mask = 0;
  for (int i = 0; i < sc->list.len; i++) {
    Ast *t = VEC_AT(sc->list, i);
    const char *name = t && t->name ? t->name : "?";
    int j = 0;
    while (j < TARGET_COUNT && strcmp(name, target_names[j])) j++;
    if (j == TARGET_COUNT) {
      diag_error(t ? t->loc : sc->loc, "unknown target '%s': use llvm, cuda or opencl", name);
      return false;
    }
    *mask |= TARGET_BIT(j);
  }
  if (!*mask) *mask = (1u << TARGET_COUNT) - 1;
  return true;
}

static void add_variant(Kernel *k, Variant *v) {
  Variant **vs = xalloc(sizeof(Variant *) * (size_t)(k->nvariants + 1));
  if (k->nvariants) memcpy(vs, k->variants, sizeof(Variant *) * (size_t)k->nvariants);
  vs[k->nvariants++] = v;
  k->variants = vs;
}

static void check_schedule(Program *p, Ast *sc) {
  const char *kn = sc->name ? sc->name : "?";
  Kernel *k = program_kernel(p, kn);
  if (!k) {
    diag_error(sc->loc, "schedule for unknown kernel '%s': define `kernel %s(...)` or import it", kn, kn);
    return;
  }
  if (!sc->name2) {
    diag_error(sc->loc, "a schedule needs a variant name: `schedule %s.NAME`", kn);
    return;
  }
  Variant *v = xalloc(sizeof *v);
  if (!parse_targets(sc, &v->targets)) return;
  v->name = sc->name2;
  v->loc = sc->loc;
  v->is_auto = sc->ival == 1;
  v->steps = sc->list2;
  for (int i = 0; i < k->nvariants; i++) {
    Variant *o = k->variants[i];
    if (strcmp(o->name, v->name) || !(o->targets & v->targets)) continue;
    diag_error(sc->loc, "schedule %s.%s is defined twice for the same target; rename one", kn, v->name);
    diag_note(o->loc, "the first one is here");
    return;
  }
  add_variant(k, v);
}

Program *check_program(Ast *file, Define *defs, int ndefs) {
  if (!file) return NULL;
  int before = diag_errors();
  Checker ck;
  memset(&ck, 0, sizeof ck);
  ck.defs = defs;
  ck.ndefs = ndefs;
  check_items(&ck, &file->list, 0);
  Program *p = xalloc(sizeof *p);
  p->file = file->sval;
  p->nkernels = ck.kernels.len;
  p->kernels = ck.kernels.len ? (Kernel **)ck.kernels.data : xalloc(sizeof(Kernel *));
  for (int i = 0; i < ck.schedules.len; i++) check_schedule(p, VEC_AT(ck.schedules, i));
  return diag_errors() == before ? p : NULL;
}

/* ---- queries ------------------------------------------------------------------ */

Kernel *program_kernel(Program *p, const char *name) {
  for (int i = 0; p && name && i < p->nkernels; i++)
    if (strcmp(p->kernels[i]->name, name) == 0) return p->kernels[i];
  return NULL;
}

Op *kernel_op(Kernel *k, const char *tensor) {
  for (int i = 0; k && tensor && i < k->nops; i++)
    if (strcmp(k->ops[i]->name, tensor) == 0) return k->ops[i];
  return NULL;
}

Variant *kernel_variant(Kernel *k, const char *name) {
  for (int i = 0; k && name && i < k->nvariants; i++)
    if (strcmp(k->variants[i]->name, name) == 0) return k->variants[i];
  return NULL;
}

Variant *kernel_pick_variant(Kernel *k, const char *name, Target t) {
  for (int i = 0; k && name && i < k->nvariants; i++)
    if (strcmp(k->variants[i]->name, name) == 0 && (k->variants[i]->targets & TARGET_BIT(t)))
      return k->variants[i];
  return NULL;
}
