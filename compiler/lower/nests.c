/* nests.c — lowering pass `nests` (TE's ScheduleOps): the attach tree from the root
 * stages down as one loop nest. Each stage's loops in leaf order, the stages computed at
 * a loop (inside their allocations) before its body, reduction inits before the
 * outermost reduction loop, the store guarded; root temps allocated around it all. */
#include "lower.h"

/* E with loads of attached or re-scoped buffers redirected (indices offset). */
static Expr *remap_loads(LowerCtx *L, Expr *e) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Expr **args = e->nargs ? lower_map_args(L, e, remap_loads) : NULL;
  if (e->kind == E_LOAD) {
    Stage *p = sched_stage_of_buf(L->s, e->buf);
    if (!p || !p->offset) return ir_load(e->buf, args);
    for (int d = 0; d < e->nargs; d++) args[d] = bnd_simplify(ir_sub(args[d], p->offset[d]));
    return ir_load(p->buf, args);
  }
  Expr *n = xalloc(sizeof *n);
  *n = *e;
  n->a = remap_loads(L, e->a);
  n->b = remap_loads(L, e->b);
  n->c = remap_loads(L, e->c);
  if (e->nargs) n->args = args;
  return n;
}

static Expr *all_conds(Vec *a, Vec *b) {
  Expr *r = NULL;
  Vec *vs[2] = {a, b};
  for (int k = 0; k < 2; k++)
    for (int i = 0; vs[k] && i < vs[k]->len; i++) {
      Expr *c = bnd_simplify(VEC_AT(*vs[k], i));
      int64_t v;
      if (ir_is_const(c, &v) && v) continue;
      r = r ? ir_bin(OP_AND, r, c) : c;
    }
  return r;
}

static Stmt *guarded(Expr *cond, Stmt *s) {
  if (!cond) return s;
  Stmt *g = ir_if(cond, s, NULL);
  g->loc = s->loc;
  return g;
}

static Expr **store_index(Stage *x) {
  Expr **idx = xalloc(sizeof(Expr *) * (size_t)(x->ndata + 1));
  for (int d = 0; d < x->ndata; d++)
    idx[d] = x->offset ? bnd_simplify(ir_sub(x->full[d], x->offset[d])) : x->full[d];
  return idx;
}

static Expr *combine(ReduceOp rop, Expr *acc, Expr *v) {
  if (acc->dtype == DT_BOOL && (rop == RED_MAX || rop == RED_MIN)) /* any, all */
    return ir_bin(rop == RED_MAX ? OP_OR : OP_AND, acc, v);
  switch (rop) {
  case RED_SUM: return ir_bin(OP_ADD, acc, v);
  case RED_PROD: return ir_bin(OP_MUL, acc, v);
  case RED_MAX: return ir_bin(OP_MAX, acc, v);
  case RED_MIN: return ir_bin(OP_MIN, acc, v);
  default: return v;
  }
}

/* ---- scatters (H[A[i]] += 1): computed indices, checked at run time ---- */

/* A scatter's store index: its loops' values in the plain dimensions, in the others the
 * computed index (INIT NULL) or INIT's vars; *IN gets `0 <= idx < extent` of each
 * computed index. */
static Expr **scatter_index(LowerCtx *L, Stage *x, IrVar **init, Expr **in) {
  Op *op = x->op;
  Expr **idx = xalloc(sizeof(Expr *) * (size_t)(op->ndim + 1));
  *in = NULL;
  for (int d = 0, k = 0; d < op->ndim; d++) {
    if (!op->scatter[d]) {
      idx[d] = x->full[k++];
      continue;
    }
    if (init) {
      idx[d] = ir_var(init[d]);
      continue;
    }
    idx[d] = bnd_simplify(remap_loads(L, lower_root_subst(x, x->scatter_eff[d])));
    Expr *c = ir_bin(OP_AND, ir_bin(OP_GE, idx[d], ir_int(0)), ir_bin(OP_LT, idx[d], op->out->shape[d]));
    *in = *in ? ir_bin(OP_AND, *in, c) : c;
  }
  return idx;
}

/* A scatter's init: every element of its computed dimensions (the plain ones as the
 * loops around it give them). */
static Stmt *scatter_init_store(LowerCtx *L, Stage *x) {
  Op *op = x->op;
  IrVar **v = xalloc(sizeof(IrVar *) * (size_t)(op->ndim + 1));
  for (int d = 0; d < op->ndim; d++)
    if (op->scatter[d]) v[d] = ir_newvar(op->axes[d]->name, DT_I64);
  Expr *in;
  Stmt *st = ir_store(x->buf, scatter_index(L, x, v, &in), sched_identity(op->rop, x->buf->dtype));
  st->loc = op->loc;
  for (int d = op->ndim - 1; d >= 0; d--)
    if (op->scatter[d]) st = ir_for(v[d], ir_int(0), op->out->shape[d], FOR_SERIAL, st);
  return st;
}

/* Whether X is a scatter whose updates run atomically from GPU threads: a reduction loop
 * bound to blockIdx or threadIdx that is not one part of extent 1. */
static bool gpu_atomic_scatter(const Stage *x) {
  for (int i = 0; x->op->scatter && i < x->leaf.len; i++) {
    IterVar *iv = VEC_AT(x->leaf, i);
    int64_t e1 = 0;
    if (iv->reduce && forkind_is_gpu(iv->kind) && iv->kind != FOR_VTHREAD &&
        !(ir_is_const(iv->ext, &e1) && e1 == 1))
      return true;
  }
  return false;
}

/* The init of such a scatter: the whole tensor, in a launch of its own before the
 * updates (blocks of 256 threads over the first dimension, the others serial), so that
 * every block's updates find it done. */
static Stmt *gpu_scatter_init(Stage *x) {
  Op *op = x->op;
  IrVar **v = xalloc(sizeof(IrVar *) * (size_t)(op->ndim + 1));
  Expr **idx = xalloc(sizeof(Expr *) * (size_t)(op->ndim + 1));
  for (int d = 0; d < op->ndim; d++) {
    v[d] = ir_newvar(xprintf("%s_init", op->axes[d]->name), DT_I64);
    idx[d] = ir_var(v[d]);
  }
  Stmt *st = ir_store(x->buf, idx, sched_identity(op->rop, x->buf->dtype));
  st->loc = op->loc;
  for (int d = op->ndim - 1; d >= 1; d--) st = ir_for(v[d], ir_int(0), op->out->shape[d], FOR_SERIAL, st);
  const int64_t T = 256;
  Expr *e0 = op->out->shape[0];
  int64_t c0 = 0;
  IrVar *b = ir_newvar(xprintf("%s_init_bx", x->name), DT_I64);
  IrVar *t = ir_newvar(xprintf("%s_init_tx", x->name), DT_I64);
  bool one = ir_is_const(e0, &c0) && c0 <= T;
  Expr *pos = one ? ir_var(t) : ir_add(ir_mul(ir_var(b), ir_int(T)), ir_var(t));
  st = ir_stmt_subst(st, &v[0], &pos, 1);
  if (!one) st = ir_if(ir_bin(OP_LT, pos, e0), st, NULL);
  st = ir_for(t, ir_int(0), one ? e0 : ir_int(T), FOR_THREAD_X, st);
  st = ir_for(b, ir_int(0), one ? ir_int(1) : ir_floordiv(ir_add(e0, ir_int(T - 1)), ir_int(T)), FOR_BLOCK_X, st);
  st->loc = op->loc;
  return st;
}

/* ---- argmax= / argmin=: the index of the best value, the first on ties ---- */

/* The row-major position of X's reduction point (root values FULL) in its domain. */
static Expr *arg_position(Stage *x, Expr **full) {
  Op *op = x->op;
  Expr *pos = ir_int(0);
  for (int r = 0; r < op->nred; r++)
    pos = ir_add(ir_mul(pos, op->rext[r]), ir_sub(full[x->ndata + r], op->rmin[r]));
  return bnd_simplify(pos);
}

/* The root values at position POS (i64) of the reduction domain, X's data point. */
static Expr **arg_point(Stage *x, Expr *pos) {
  Op *op = x->op;
  Expr **full = xalloc(sizeof(Expr *) * (size_t)(x->nroot + 1));
  for (int d = 0; d < x->ndata; d++) full[d] = x->full[d];
  for (int r = op->nred - 1; r >= 0; r--) {
    Expr *k = r ? ir_floormod(pos, op->rext[r]) : pos;
    full[x->ndata + r] = ir_add(op->rmin[r], k);
    pos = ir_floordiv(pos, op->rext[r]);
  }
  return full;
}

/* Whether value V at position P beats the best so far, value B at position Q: larger
 * (argmax) or smaller, NaN beating every number, the smaller position on ties. */
static Expr *arg_beats(ReduceOp rop, Expr *v, Expr *p, Expr *b, Expr *q) {
  Expr *better = ir_bin(rop == RED_ARGMAX ? OP_GT : OP_LT, v, b);
  Expr *tie = ir_bin(OP_AND, ir_bin(OP_EQ, v, b), ir_bin(OP_LT, p, q));
  Expr *num = ir_bin(OP_OR, better, tie);
  if (!dtype_is_float(v->dtype)) return num;
  Expr *vnan = ir_bin(OP_NE, v, v), *bnan = ir_bin(OP_NE, b, b);
  Expr *if_nan = ir_bin(OP_OR, ir_un(OP_NOT, bnan), ir_bin(OP_LT, p, q));
  return ir_select(vnan, if_nan, ir_bin(OP_AND, ir_un(OP_NOT, bnan), num));
}

/* ACC (the stored index) replaced by this point's position when its value beats the
 * value at ACC, which is recomputed: the state is the index alone. */
static Expr *arg_update(LowerCtx *L, Stage *x, Expr *acc) {
  IrVar **vars = xalloc(sizeof(IrVar *) * (size_t)(x->nroot + 1));
  for (int i = 0; i < x->nroot; i++) vars[i] = x->root[i]->var;
  Expr *q = ir_cast(DT_I64, acc), *p = arg_position(x, x->full);
  Expr *v = bnd_simplify(remap_loads(L, lower_root_subst(x, x->eff)));
  Expr *b = bnd_simplify(remap_loads(L, ir_subst(x->eff, vars, arg_point(x, q), x->nroot)));
  return ir_select(arg_beats(x->op->rop, v, p, b, q), ir_cast(acc->dtype, p), acc);
}

/* The innermost statement: the store (an update for reductions), guarded. */
static Stmt *update_stmt(LowerCtx *L, Stage *x) {
  Expr *in = NULL;
  Expr **idx = x->op->scatter ? scatter_index(L, x, NULL, &in) : store_index(x);
  Expr *v;
  if (x->op->rop == RED_ARGMAX || x->op->rop == RED_ARGMIN) {
    v = arg_update(L, x, ir_load(x->buf, idx));
  } else {
    v = bnd_simplify(remap_loads(L, lower_root_subst(x, x->eff)));
    if (x->op->rop != RED_NONE) v = combine(x->op->rop, ir_load(x->buf, idx), v);
  }
  Stmt *st = ir_store(x->buf, idx, v);
  st->loc = x->op->loc;
  for (int i = 0; x->op->scatter && i < x->leaf.len; i++) {
    IterVar *iv = VEC_AT(x->leaf, i);
    if (iv->reduce && iv->kind == FOR_PARALLEL) st->atomic = true; /* H[idx] OP= v, racing */
  }
  if (gpu_atomic_scatter(x)) st->atomic = true; /* from racing GPU threads */
  if (in) st = guarded(in, st);
  if (x->op->rcond) st = guarded(bnd_simplify(lower_root_subst(x, x->op->rcond)), st);
  return guarded(all_conds(&x->guards[0], &x->guards[1]), st);
}

/* auto_unroll of a loop (schedule.c): the serial loops in S of at most N iterations in
 * all unrolled, innermost first (a loop that passes holds only loops that passed: their
 * iterations are fewer). Returns the iterations of S's statements that one thread runs
 * when every loop in it runs: a vectorized loop's body counts once (one vector
 * operation), and so does a thread-bound loop's (each thread runs one iteration of it, as
 * TVM counts a thread extent; a cooperative copy's serial loop around it unrolls);
 * INT64_MAX when some extent is not a constant. */
static int64_t auto_unroll_marks(Stmt *s, int64_t n) {
  if (!s) return 0;
  int64_t size = 0, e, b;
  switch (s->kind) {
  case S_FOR:
    b = auto_unroll_marks(s->body, n);
    if (s->for_kind == FOR_VECTORIZE || forkind_is_thread(s->for_kind)) return b;
    if (!ir_is_const(bnd_simplify(s->extent), &e) || e < 0 || b == INT64_MAX) return INT64_MAX;
    if (__builtin_mul_overflow(e, b, &size)) return INT64_MAX;
    if (s->for_kind == FOR_SERIAL && size <= n) s->for_kind = FOR_UNROLL;
    return size;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) {
      int64_t k = auto_unroll_marks(s->stmts[i], n);
      if (size != INT64_MAX && (k == INT64_MAX || __builtin_add_overflow(size, k, &size))) size = INT64_MAX;
    }
    return size;
  case S_IF:
    b = auto_unroll_marks(s->body, n);
    e = auto_unroll_marks(s->els, n);
    return b == INT64_MAX || e == INT64_MAX ? INT64_MAX : b + e;
  case S_ALLOC: return auto_unroll_marks(s->body, n);
  default: return 1;
  }
}

static Stmt *make_loop(LowerCtx *L, Stage *x, IterVar *iv, IrVar *var, Stmt *body) {
  if (iv->auto_unroll) auto_unroll_marks(body, iv->auto_unroll);
  if (!iv->loopvar) return body;
  if (iv->kind == FOR_VECTORIZE && !ir_is_const(iv->ext, NULL)) {
    diag_error(iv->kind_loc, "vectorize needs a constant extent; loop '%s' of '%s' has extent %s",
               iv->name, x->name, ir_expr_str(iv->ext));
    L->ok = false;
  }
  Stmt *f = ir_for(var, ir_int(0), iv->ext, iv->kind, body);
  f->loc = iv->kind_loc.file ? iv->kind_loc : x->op->loc;
  return f;
}

/* The reduction init: the data-parallel leaves from position POS on, fresh vars. */
static Stmt *init_stmt(LowerCtx *L, Stage *x, int pos) {
  Stmt *st;
  if (x->op->scatter) {
    st = scatter_init_store(L, x);
  } else {
    Expr *v = x->init_eff ? bnd_simplify(remap_loads(L, lower_root_subst(x, x->init_eff)))
                          : sched_identity(x->op->rop, x->buf->dtype);
    st = ir_store(x->buf, store_index(x), v);
    st->loc = x->op->loc;
  }
  Stmt *body = guarded(all_conds(&x->guards[0], NULL), st);
  Vec from = {0}, to = {0};
  for (int i = x->leaf.len - 1; i >= pos; i--) {
    IterVar *iv = VEC_AT(x->leaf, i);
    if (iv->reduce || !iv->loopvar) continue;
    IrVar *v = ir_newvar(xprintf("%s_init", iv->loopvar->name), DT_I64);
    vec_push(&from, iv->loopvar);
    vec_push(&to, ir_var(v));
    body = make_loop(L, x, iv, v, body);
  }
  return ir_stmt_subst(body, (IrVar **)from.data, (Expr **)to.data, from.len);
}

static Stmt *gen_stage(LowerCtx *L, Stage *x);

/* INNER preceded by the stages computed at IV, inside their allocations. */
static Stmt *wrap_attached(LowerCtx *L, IterVar *iv, Stmt *inner) {
  for (int i = L->s->stages.len - 1; i >= 0; i--) {
    Stage *p = lower_stage(L, i);
    if (p->attach != ATTACH_AT || p->at_iv != iv) continue;
    Stmt *a = ir_alloc(p->buf, ir_seq2(gen_stage(L, p), inner));
    a->loc = p->op->loc;
    inner = a;
  }
  return inner;
}

static Stmt *gen_level(LowerCtx *L, Stage *x, int pos, int pos_r, Stmt *init, Stmt *body) {
  if (pos == x->leaf.len) return body;
  IterVar *iv = VEC_AT(x->leaf, pos);
  Stmt *inner = gen_level(L, x, pos + 1, pos_r, init, body);
  if (pos + 1 == pos_r) inner = ir_seq2(init, inner);
  inner = wrap_attached(L, iv, inner);
  return make_loop(L, x, iv, iv->loopvar, inner);
}

/* X's loop nest with everything computed at its loops. */
static Stmt *gen_stage(LowerCtx *L, Stage *x) {
  int pos_r = x->leaf.len;
  for (int i = x->leaf.len - 1; i >= 0; i--) {
    IterVar *iv = VEC_AT(x->leaf, i);
    /* a scatter's reduction part of extent 1 bound to the grid is no reduction loop */
    if (iv->reduce && !(x->op->scatter && forkind_is_gpu(iv->kind))) pos_r = i;
  }
  if (gpu_atomic_scatter(x)) { /* the init is a launch of its own (pass_nests) */
    return gen_level(L, x, 0, -1, NULL, update_stmt(L, x));
  }
  Stmt *init = x->op->rop != RED_NONE ? init_stmt(L, x, pos_r) : NULL;
  Stmt *nest = gen_level(L, x, 0, pos_r, init, update_stmt(L, x));
  return pos_r == 0 ? ir_seq2(init, nest) : nest;
}

static LoweredFunc *make_func(LowerCtx *L, Stmt *body) {
  Kernel *k = L->k;
  LoweredFunc *f = xalloc(sizeof *f);
  f->name = k->name;
  f->loc = k->loc;
  f->nparams = k->ninputs + k->noutputs;
  f->ninputs = k->ninputs;
  f->params = xalloc(sizeof(Buffer *) * (size_t)(f->nparams + 1));
  for (int i = 0; i < k->ninputs; i++) f->params[i] = k->inputs[i];
  for (int i = 0; i < k->noutputs; i++) f->params[k->ninputs + i] = k->outputs[i];
  f->sizes = k->sizes;
  f->nsizes = k->nsizes;
  f->target = L->s->target;
  f->body = body;
  return f;
}

/* On a GPU, a root stage with no data axis (a 0-d result: `S[] += X[i]`) and no loop
 * bound to blockIdx runs in one block (in one thread, unless rfactor bound its reduction
 * to threads): its nest inside a blockIdx.x loop of extent 1. */
static Stmt *gpu_single(LowerCtx *L, Stage *x, Stmt *nest) {
  if (!backend_for(L->s->target)->allows_bind || x->ndata > 0) return nest;
  for (int i = 0; i < x->leaf.len; i++) {
    ForKind k = ((IterVar *)VEC_AT(x->leaf, i))->kind;
    if (k >= FOR_BLOCK_X && k <= FOR_BLOCK_Z) return nest;
  }
  Stmt *f = ir_for(ir_newvar(xprintf("%s_b", x->name), DT_I64), ir_int(0), ir_int(1), FOR_BLOCK_X, nest);
  f->loc = x->op->loc;
  return f;
}

bool pass_nests(LowerCtx *L) {
  int n = L->s->stages.len;
  Vec parts = {0};
  for (int i = 0; i < n; i++) {
    Stage *x = lower_stage(L, i);
    if (x->op && x->op->ext) { /* an extern kernel's call, made by its first output's stage */
      ExternCall *e = x->op->ext;
      if (backend_for(L->s->target)->allows_bind) {
        diag_error(x->op->loc, "extern kernel %s is a C function called on the host: the %s target "
                   "cannot call it (use --target llvm)", e->callee, target_names[L->s->target]);
        L->ok = false;
      } else if (e->first == x->op) {
        Stmt *c = ir_call_stmt(e->callee, e->bufs, e->nin, e->nout, e->sizes, e->nsizes);
        c->loc = x->op->loc;
        vec_push(&parts, c);
      }
      continue;
    }
    if (x->attach == ATTACH_ROOT && gpu_atomic_scatter(x)) vec_push(&parts, gpu_scatter_init(x));
    if (x->attach == ATTACH_ROOT) vec_push(&parts, gpu_single(L, x, gen_stage(L, x)));
  }
  Stmt *body = ir_seq((Stmt **)parts.data, parts.len);
  for (int i = n - 1; i >= 0; i--) {
    Stage *x = lower_stage(L, i);
    if (x->attach == ATTACH_ROOT && !x->output) body = ir_alloc(x->buf, body);
  }
  if (!L->ok) return false;
  L->fn = make_func(L, body);
  return true;
}
