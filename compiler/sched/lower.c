/* lower.c — a schedule to one loop nest (TE's ScheduleOps / MakeLoopNest).
 *
 *   1. inline:   every stage's value with inlined producers substituted (topological)
 *   2. bounds:   consumers before producers; a stage computed at loop L of C covers the
 *                region its consumers read per iteration of L (bound inference: loops
 *                inside L relaxed over their ranges, loops at and outside L fixed)
 *   3. loops:    leaf extents by splitting/fusing the root ranges, root values from the
 *                leaf loop vars, guards for split tails and for regions that overrun the
 *                op's domain
 *   4. nests:    the attach tree from the root stages down; allocations at attach points,
 *                reduction inits before the outermost reduction loop. */
#include "sched_internal.h"

#include <string.h>

typedef struct Lower {
  Schedule *s;
  Kernel *k;
  Vec loopvars; /* IrVars already used as loop vars: a second use gets a fresh var */
  bool ok;
} Lower;

static Stage *stage_at(Lower *L, int i) { return VEC_AT(L->s->stages, i); }

/* ---- 1. inline ------------------------------------------------------- */

static Expr **map_args(Lower *L, Expr *e, Expr *(*f)(Lower *, Expr *)) {
  Expr **args = xalloc(sizeof(Expr *) * (size_t)(e->nargs + 1));
  for (int i = 0; i < e->nargs; i++) args[i] = f(L, e->args[i]);
  return args;
}

/* E with loads of inlined stages replaced by their values. */
static Expr *inline_expr(Lower *L, Expr *e) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Expr **args = e->nargs ? map_args(L, e, inline_expr) : NULL;
  if (e->kind == E_LOAD) {
    Stage *p = sched_stage_of_buf(L->s, e->buf);
    if (p && p->attach == ATTACH_INLINE) return ir_subst(p->eff, p->op->axes, args, p->op->ndim);
    return ir_load(e->buf, args);
  }
  Expr *n = xalloc(sizeof *n);
  *n = *e;
  n->a = inline_expr(L, e->a);
  n->b = inline_expr(L, e->b);
  n->c = inline_expr(L, e->c);
  if (e->nargs) n->args = args;
  return n;
}

/* ---- 2. bound inference ---------------------------------------------- */

/* The leaf iter vars enclosing ST's computation: those of its attach chain. */
static void encl_attach(Stage *st, Vec *out) {
  if (st->attach != ATTACH_AT) return;
  encl_attach(st->at_stage, out);
  int pos = sched_leaf_pos(st->at_stage, st->at_iv);
  for (int i = 0; i <= pos; i++) vec_push(out, VEC_AT(st->at_stage->leaf, i));
}

static void encl_all(Stage *st, Vec *out) {
  encl_attach(st, out);
  for (int i = 0; i < st->leaf.len; i++) vec_push(out, VEC_AT(st->leaf, i));
}

static int scope_rank(Scope s) { return s == SCOPE_GLOBAL ? 0 : s == SCOPE_SHARED ? 1 : 2; }

/* TE's NeedRelax for a loop enclosing the attach point: a loop bound to blocks (rank 0)
 * or threads (rank 1) is relaxed when the buffer is shared at least that widely. */
static bool gpu_relaxed(const IterVar *iv, Scope sc) {
  if (!forkind_is_gpu(iv->kind)) return false;
  int rank = iv->kind <= FOR_BLOCK_Z ? 0 : 1;
  return scope_rank(sc) <= rank;
}

static void collect_loads(Expr *e, const Buffer *b, Vec *out) {
  if (!e) return;
  if (e->kind == E_LOAD && e->buf == b) vec_push(out, e);
  for (int i = 0; i < e->nargs; i++) collect_loads(e->args[i], b, out);
  collect_loads(e->a, b, out);
  collect_loads(e->b, b, out);
  collect_loads(e->c, b, out);
}

static Expr *root_subst(Stage *x, Expr *e) {
  IrVar **vars = xalloc(sizeof(IrVar *) * (size_t)(x->nroot + 1));
  for (int i = 0; i < x->nroot; i++) vars[i] = x->root[i]->var;
  return ir_subst(e, vars, x->full, x->nroot);
}

/* Widen REGION (per dimension of P) by what consumer X reads of P; *HAVE says whether
 * REGION holds anything yet. */
static bool consumer_region(Stage *p, Stage *x, Vec *fixed, Interval *region, bool *have) {
  Vec ex = {0};
  encl_all(x, &ex);
  for (int i = 0; i < fixed->len; i++)
    if (i >= ex.len || VEC_AT(ex, i) != VEC_AT(*fixed, i)) {
      diag_error(p->attach_loc, "loop '%s' does not enclose the use of '%s' in stage '%s'",
                 p->at_iv->name, p->name, x->name);
      return false;
    }
  Relax r = {0};
  for (int i = 0; i < ex.len; i++) {
    IterVar *iv = VEC_AT(ex, i);
    if (iv->loopvar && (i >= fixed->len || gpu_relaxed(iv, p->scope))) relax_add(&r, iv->loopvar, iv->ext);
  }
  Vec loads = {0};
  collect_loads(x->eff, p->op->out, &loads);
  for (int j = 0; j < loads.len; j++) {
    Expr *ld = VEC_AT(loads, j);
    for (int d = 0; d < p->op->ndim; d++) {
      Interval iv = bnd_interval(root_subst(x, ld->args[d]), &r);
      region[d].min = *have ? bnd_min(region[d].min, iv.min) : iv.min;
      region[d].max = *have ? bnd_max(region[d].max, iv.max) : iv.max;
    }
    *have = true;
  }
  return true;
}

/* The scope of P's buffer. A temp that no step gave a scope, computed inside a GPU
 * kernel, takes TVM's default by its attach point: local under a threadIdx loop, else
 * shared under a blockIdx loop (a global buffer cannot be allocated in a kernel). */
static Scope attached_scope(Lower *L, Stage *p) {
  if (p->scope != SCOPE_GLOBAL || !backend_for(L->s->target)->kernel_scopes) return p->scope;
  Vec fixed = {0};
  encl_attach(p, &fixed);
  Scope sc = SCOPE_GLOBAL;
  for (int i = 0; i < fixed.len; i++) {
    ForKind k = ((IterVar *)VEC_AT(fixed, i))->kind;
    if (k >= FOR_THREAD_X && k <= FOR_VTHREAD) return SCOPE_LOCAL;
    if (k >= FOR_BLOCK_X && k <= FOR_BLOCK_Z) sc = SCOPE_SHARED;
  }
  return sc;
}

/* Bound inference for a stage computed at a loop: its root ranges and its buffer. */
static bool infer_attached(Lower *L, Stage *p) {
  int nd = p->op->ndim;
  Scope saved = p->scope;
  p->scope = attached_scope(L, p); /* consumer_region relaxes loops by it */
  Interval *region = xalloc(sizeof(Interval) * (size_t)(nd + 1));
  bool have = false;
  Vec fixed = {0};
  encl_attach(p, &fixed);
  Relax outer = {0};
  for (int i = 0; i < fixed.len; i++) {
    IterVar *iv = VEC_AT(fixed, i);
    if (iv->loopvar) relax_add(&outer, iv->loopvar, iv->ext);
  }
  for (int i = 0; i < L->s->stages.len; i++) {
    Stage *x = stage_at(L, i);
    if (x == p || x->attach == ATTACH_INLINE || !sched_reads(x->eff, p->op->out)) continue;
    if (!x->done) die("lower: consumer %s of %s not bounded first", x->name, p->name);
    if (!consumer_region(p, x, &fixed, region, &have)) {
      p->scope = saved;
      return false;
    }
  }
  p->offset = xalloc(sizeof(Expr *) * (size_t)(nd + 1));
  Expr **shape = xalloc(sizeof(Expr *) * (size_t)(nd + 1));
  for (int d = 0; d < nd; d++) {
    IterVar *iv = p->root[d];
    Expr *ext = have && region[d].min && region[d].max
                    ? bnd_simplify(ir_add(ir_sub(region[d].max, region[d].min), ir_int(1)))
                    : NULL;
    if (ext && !bnd_loop_free(ext, L->k)) ext = bnd_interval(ext, &outer).max;
    if (!ext || !bnd_loop_free(ext, L->k)) { /* unknown: the whole domain */
      iv->min = iv->dmin;
      iv->ext = iv->dext;
    } else {
      iv->min = region[d].min;
      iv->ext = ext;
    }
    shape[d] = iv->ext;
    p->offset[d] = iv->min;
  }
  p->buf = ir_buffer(p->op->out->name, p->op->out->dtype, nd, shape, p->scope, BUF_TEMP);
  p->buf->op = p->op;
  p->scope = saved;
  return true;
}

/* ---- 3. loops of one stage ------------------------------------------- */

static bool used_loopvar(Lower *L, IrVar *v) {
  for (int i = 0; i < L->loopvars.len; i++)
    if (VEC_AT(L->loopvars, i) == v) return true;
  return false;
}

/* Loop vars and values of the leaves: a leaf of extent 1 that is not bound to a GPU
 * axis gets no loop (its value is 0). */
static void leaf_vars(Lower *L, Stage *x) {
  for (int i = 0; i < x->leaf.len; i++) {
    IterVar *iv = VEC_AT(x->leaf, i);
    int64_t e;
    iv->loopvar = NULL;
    if (ir_is_const(iv->ext, &e) && e == 1 && !forkind_is_gpu(iv->kind)) {
      iv->val = ir_int(0);
      continue;
    }
    bool own = !(iv->root && !(ir_is_const(iv->min, &e) && e == 0)) && !used_loopvar(L, iv->var);
    iv->loopvar = own ? iv->var : ir_newvar(iv->base, DT_I64);
    vec_push(&L->loopvars, iv->loopvar);
    iv->val = ir_var(iv->loopvar);
  }
}

/* Guards for attached stages whose region may leave the op's domain. */
static void domain_guards(Stage *x) {
  Vec ex = {0};
  encl_all(x, &ex);
  Relax r = {0};
  for (int i = 0; i < ex.len; i++) {
    IterVar *iv = VEC_AT(ex, i);
    if (iv->loopvar) relax_add(&r, iv->loopvar, iv->ext);
  }
  for (int d = 0; d < x->ndata; d++) {
    IterVar *iv = x->root[d];
    if (!bnd_prove_le(iv->dmin, x->full[d], &r))
      vec_push(&x->guards[0], ir_bin(OP_GE, x->full[d], iv->dmin));
    Expr *end = bnd_simplify(ir_add(iv->dmin, iv->dext));
    if (!bnd_prove_le(x->full[d], bnd_simplify(ir_sub(end, ir_int(1))), &r))
      vec_push(&x->guards[0], ir_bin(OP_LT, x->full[d], end));
  }
}

/* Ranges, loop vars, root values and guards of X. */
static bool prepare_stage(Lower *L, Stage *x) {
  x->guards[0] = x->guards[1] = (Vec){0};
  x->buf = x->op->out;
  x->offset = NULL;
  if (x->attach == ATTACH_AT) {
    if (!infer_attached(L, x)) return false;
  } else {
    for (int d = 0; d < x->ndata; d++) {
      x->root[d]->min = x->root[d]->dmin;
      x->root[d]->ext = x->root[d]->dext;
    }
  }
  for (int r = x->ndata; r < x->nroot; r++) {
    x->root[r]->min = x->root[r]->dmin;
    x->root[r]->ext = x->root[r]->dext;
  }
  sched_pass_down(x);
  leaf_vars(L, x);
  sched_pass_up(x, x->guards);
  x->full = xalloc(sizeof(Expr *) * (size_t)(x->nroot + 1));
  for (int i = 0; i < x->nroot; i++)
    x->full[i] = bnd_simplify(ir_add(x->root[i]->min, x->root[i]->val));
  if (x->attach == ATTACH_AT) domain_guards(x);
  x->done = true;
  return true;
}

/* ---- 4. nests -------------------------------------------------------- */

/* E with loads of attached or re-scoped buffers redirected (indices offset). */
static Expr *remap_loads(Lower *L, Expr *e) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Expr **args = e->nargs ? map_args(L, e, remap_loads) : NULL;
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
  switch (rop) {
  case RED_SUM: return ir_bin(OP_ADD, acc, v);
  case RED_PROD: return ir_bin(OP_MUL, acc, v);
  case RED_MAX: return ir_bin(OP_MAX, acc, v);
  case RED_MIN: return ir_bin(OP_MIN, acc, v);
  default: return v;
  }
}

/* The innermost statement: the store (an update for reductions), guarded. */
static Stmt *update_stmt(Lower *L, Stage *x) {
  Expr **idx = store_index(x);
  Expr *v = bnd_simplify(remap_loads(L, root_subst(x, x->eff)));
  if (x->op->rop != RED_NONE) v = combine(x->op->rop, ir_load(x->buf, idx), v);
  Stmt *st = ir_store(x->buf, idx, v);
  st->loc = x->op->loc;
  return guarded(all_conds(&x->guards[0], &x->guards[1]), st);
}

static Stmt *make_loop(Lower *L, Stage *x, IterVar *iv, IrVar *var, Stmt *body) {
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
static Stmt *init_stmt(Lower *L, Stage *x, int pos) {
  Stmt *st = ir_store(x->buf, store_index(x), sched_identity(x->op->rop, x->buf->dtype));
  st->loc = x->op->loc;
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

static Stmt *gen_stage(Lower *L, Stage *x);

/* INNER preceded by the stages computed at IV, inside their allocations. */
static Stmt *wrap_attached(Lower *L, IterVar *iv, Stmt *inner) {
  for (int i = L->s->stages.len - 1; i >= 0; i--) {
    Stage *p = stage_at(L, i);
    if (p->attach != ATTACH_AT || p->at_iv != iv) continue;
    Stmt *a = ir_alloc(p->buf, ir_seq2(gen_stage(L, p), inner));
    a->loc = p->op->loc;
    inner = a;
  }
  return inner;
}

static Stmt *gen_level(Lower *L, Stage *x, int pos, int pos_r, Stmt *init, Stmt *body) {
  if (pos == x->leaf.len) return body;
  IterVar *iv = VEC_AT(x->leaf, pos);
  Stmt *inner = gen_level(L, x, pos + 1, pos_r, init, body);
  if (pos + 1 == pos_r) inner = ir_seq2(init, inner);
  inner = wrap_attached(L, iv, inner);
  return make_loop(L, x, iv, iv->loopvar, inner);
}

/* X's loop nest with everything computed at its loops. */
static Stmt *gen_stage(Lower *L, Stage *x) {
  int pos_r = x->leaf.len;
  for (int i = x->leaf.len - 1; i >= 0; i--)
    if (((IterVar *)VEC_AT(x->leaf, i))->reduce) pos_r = i;
  Stmt *init = x->op->rop != RED_NONE ? init_stmt(L, x, pos_r) : NULL;
  Stmt *nest = gen_level(L, x, 0, pos_r, init, update_stmt(L, x));
  return pos_r == 0 ? ir_seq2(init, nest) : nest;
}

/* ---- vthread injection (TVM's InjectVirtualThread, the simple cases) ---- */

/* A loop bound to vthread runs its iterations inside one thread: its body is pushed
 * through the loops and guards that do not depend on it, buffers allocated inside get one
 * copy per iteration (an outer dimension), and statements that depend on it are unrolled
 * once per iteration, interleaved (instruction-level parallelism instead of a serial loop).
 * A fetch that does not depend on it (a shared tile) runs once. The iterations of a
 * vthread loop touch disjoint memory (a data-parallel loop), so any interleaving is the
 * loop's meaning. */
typedef struct Vt {
  IrVar *v;
  int64_t n;
  Vec from, to; /* expanded buffers: old -> new (one more dimension) */
} Vt;

static bool e_uses(const Expr *e, const IrVar *v) { return e && ir_uses_var(e, v); }

static bool s_uses(const Stmt *s, const IrVar *v) {
  if (!s) return false;
  if (e_uses(s->min, v) || e_uses(s->extent, v) || e_uses(s->cond, v) || e_uses(s->value, v)) return true;
  for (int i = 0; i < s->nargs; i++)
    if (e_uses(s->args[i], v)) return true;
  if (s_uses(s->body, v) || s_uses(s->els, v)) return true;
  for (int i = 0; i < s->n; i++)
    if (s_uses(s->stmts[i], v)) return true;
  return false;
}

static bool e_loads_scoped(const Expr *e) {
  if (!e) return false;
  if (e->kind == E_LOAD && e->buf->scope != SCOPE_GLOBAL) return true;
  for (int i = 0; i < e->nargs; i++)
    if (e_loads_scoped(e->args[i])) return true;
  return e_loads_scoped(e->a) || e_loads_scoped(e->b) || e_loads_scoped(e->c);
}

/* S may run once instead of once per iteration: it writes only shared buffers that are
 * not expanded, from values that read no shared or local memory, and has no v in it. */
static bool vt_once(Vt *t, const Stmt *s) {
  if (!s) return true;
  switch (s->kind) {
  case S_STORE:
    if (s->buf->scope != SCOPE_SHARED || e_loads_scoped(s->value)) return false;
    for (int i = 0; i < t->from.len; i++)
      if (t->from.data[i] == s->buf) return false;
    return true;
  case S_FOR: return s->for_kind != FOR_VTHREAD && vt_once(t, s->body);
  case S_IF: return vt_once(t, s->body) && vt_once(t, s->els);
  case S_SEQ:
    for (int i = 0; i < s->n; i++)
      if (!vt_once(t, s->stmts[i])) return false;
    return true;
  default: return false;
  }
}

/* Does a store to B under S depend on V (its indices, value, or an enclosing loop/guard)? */
static bool vt_dep_write(const Stmt *s, const Buffer *b, const IrVar *v, bool dep) {
  if (!s) return false;
  if (s->kind == S_STORE) return s->buf == b && (dep || s_uses(s, v));
  dep = dep || e_uses(s->min, v) || e_uses(s->extent, v) || e_uses(s->cond, v);
  if (vt_dep_write(s->body, b, v, dep) || vt_dep_write(s->els, b, v, dep)) return true;
  for (int i = 0; i < s->n; i++)
    if (vt_dep_write(s->stmts[i], b, v, dep)) return true;
  return false;
}

static Expr *vt_expr(Vt *t, Expr *e) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Expr *n = xalloc(sizeof *n);
  *n = *e;
  n->a = vt_expr(t, e->a);
  n->b = vt_expr(t, e->b);
  n->c = vt_expr(t, e->c);
  if (e->nargs) {
    n->args = xalloc(sizeof(Expr *) * (size_t)(e->nargs + 1));
    for (int i = 0; i < e->nargs; i++) n->args[i] = vt_expr(t, e->args[i]);
  }
  if (e->kind == E_LOAD)
    for (int i = 0; i < t->from.len; i++)
      if (t->from.data[i] == e->buf) {
        Expr **idx = xalloc(sizeof(Expr *) * (size_t)(e->nargs + 2));
        idx[0] = ir_var(t->v);
        memcpy(idx + 1, n->args, sizeof(Expr *) * (size_t)e->nargs);
        return ir_load(t->to.data[i], idx);
      }
  return n;
}

/* S with accesses of expanded buffers indexed by the vthread var first. */
static Stmt *vt_stmt(Vt *t, Stmt *s) {
  if (!s) return NULL;
  Stmt *n = xalloc(sizeof *n);
  *n = *s;
  n->min = vt_expr(t, s->min);
  n->extent = vt_expr(t, s->extent);
  n->cond = vt_expr(t, s->cond);
  n->value = vt_expr(t, s->value);
  if (s->nargs) {
    n->args = xalloc(sizeof(Expr *) * (size_t)(s->nargs + 2));
    for (int i = 0; i < s->nargs; i++) n->args[i] = vt_expr(t, s->args[i]);
  }
  n->body = vt_stmt(t, s->body);
  n->els = vt_stmt(t, s->els);
  if (s->n) {
    n->stmts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    for (int i = 0; i < s->n; i++) n->stmts[i] = vt_stmt(t, s->stmts[i]);
  }
  if (s->kind == S_STORE)
    for (int i = 0; i < t->from.len; i++)
      if (t->from.data[i] == s->buf) {
        n->buf = t->to.data[i];
        Expr **idx = xalloc(sizeof(Expr *) * (size_t)(s->nargs + 2));
        idx[0] = ir_var(t->v);
        memcpy(idx + 1, n->args, sizeof(Expr *) * (size_t)s->nargs);
        n->args = idx;
        n->nargs = s->nargs + 1;
      }
  return n;
}

static Stmt *vt_unroll(Vt *t, Stmt *s) {
  Stmt **parts = xalloc(sizeof(Stmt *) * (size_t)t->n);
  for (int64_t i = 0; i < t->n; i++) {
    Expr *c = ir_int(i);
    parts[i] = ir_stmt_subst(s, &t->v, &c, 1);
  }
  return ir_seq(parts, (int)t->n);
}

/* `for v in vthread(n): S`, with S's expanded accesses already rewritten. */
static Stmt *vt_inject(Vt *t, Stmt *s) {
  if (!s) return NULL;
  if (!s_uses(s, t->v) && vt_once(t, s)) return s;
  Stmt *n;
  switch (s->kind) {
  case S_SEQ: {
    Stmt **parts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    for (int i = 0; i < s->n; i++) parts[i] = vt_inject(t, s->stmts[i]);
    return ir_seq(parts, s->n);
  }
  case S_ALLOC:
    n = xalloc(sizeof *n);
    *n = *s;
    n->body = vt_inject(t, s->body);
    return n;
  case S_FOR:
    if (s->for_kind == FOR_VECTORIZE || s->for_kind == FOR_VTHREAD ||
        e_uses(s->min, t->v) || e_uses(s->extent, t->v))
      return vt_unroll(t, s);
    n = xalloc(sizeof *n);
    *n = *s;
    n->body = vt_inject(t, s->body);
    return n;
  case S_IF:
    if (e_uses(s->cond, t->v)) return vt_unroll(t, s);
    n = xalloc(sizeof *n);
    *n = *s;
    n->body = vt_inject(t, s->body);
    n->els = vt_inject(t, s->els);
    return n;
  default: return vt_unroll(t, s);
  }
}

/* The buffers allocated in S that get one copy per vthread iteration. */
static void vt_expand(Vt *t, Stmt *s, Stmt *top) {
  if (!s) return;
  if (s->kind == S_ALLOC &&
      (s->buf->scope == SCOPE_LOCAL || vt_dep_write(top, s->buf, t->v, false))) {
    Buffer *b = s->buf;
    Expr **shape = xalloc(sizeof(Expr *) * (size_t)(b->ndim + 2));
    shape[0] = ir_int(t->n);
    memcpy(shape + 1, b->shape, sizeof(Expr *) * (size_t)b->ndim);
    Buffer *nb = ir_buffer(b->name, b->dtype, b->ndim + 1, shape, b->scope, b->kind);
    nb->op = b->op;
    vec_push(&t->from, b);
    vec_push(&t->to, nb);
  }
  vt_expand(t, s->body, top);
  vt_expand(t, s->els, top);
  for (int i = 0; i < s->n; i++) vt_expand(t, s->stmts[i], top);
}

/* Allocations of expanded buffers take the new buffer. */
static Stmt *vt_allocs(Vt *t, Stmt *s) {
  if (!s) return NULL;
  if (s->kind == S_ALLOC)
    for (int i = 0; i < t->from.len; i++)
      if (t->from.data[i] == s->buf) s->buf = t->to.data[i];
  vt_allocs(t, s->body);
  vt_allocs(t, s->els);
  for (int i = 0; i < s->n; i++) vt_allocs(t, s->stmts[i]);
  return s;
}

/* Every vthread loop of S with a constant extent, innermost first, injected. */
static Stmt *inject_vthreads(Stmt *s) {
  if (!s) return NULL;
  Stmt *n = xalloc(sizeof *n);
  *n = *s;
  n->body = inject_vthreads(s->body);
  n->els = inject_vthreads(s->els);
  if (s->n) {
    n->stmts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    for (int i = 0; i < s->n; i++) n->stmts[i] = inject_vthreads(s->stmts[i]);
  }
  int64_t ext, mn;
  if (s->kind != S_FOR || s->for_kind != FOR_VTHREAD || !ir_is_const(s->extent, &ext) ||
      !ir_is_const(s->min, &mn) || mn != 0 || ext > 16)
    return n;
  Vt t = {s->var, ext, {0}, {0}};
  vt_expand(&t, n->body, n->body);
  Stmt *body = vt_allocs(&t, vt_stmt(&t, n->body));
  return vt_inject(&t, body);
}

/* ---- the function ---------------------------------------------------- */

static bool check_attach(Lower *L, Stage *p) {
  if (p->attach != ATTACH_AT) return true;
  if (p->at_stage->attach == ATTACH_INLINE || sched_leaf_pos(p->at_stage, p->at_iv) < 0) {
    diag_error(p->attach_loc, "stage '%s' is computed at loop '%s', which is no longer a loop of '%s'",
               p->name, p->at_iv->name, p->at_stage->name);
    return false;
  }
  (void)L;
  return true;
}

static LoweredFunc *make_func(Lower *L, Stmt *body) {
  Kernel *k = L->k;
  LoweredFunc *f = xalloc(sizeof *f);
  f->name = k->name;
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

LoweredFunc *sched_lower(Schedule *s, const GpuLimits *limits) {
  Lower L = {s, s->k, {0}, true};
  (void)limits; /* the driver runs gpu_check on the result */
  if (!sched_check_attach(s)) return NULL;
  int n = s->stages.len;
  for (int i = 0; i < n; i++) {
    Stage *x = stage_at(&L, i);
    x->topo = i;
    x->done = false;
    x->eff = inline_expr(&L, x->op->value);
    if (!check_attach(&L, x)) return NULL;
  }
  for (int i = n - 1; i >= 0; i--) {
    Stage *x = stage_at(&L, i);
    if (x->attach != ATTACH_INLINE && !prepare_stage(&L, x)) return NULL;
  }
  Vec parts = {0};
  for (int i = 0; i < n; i++) {
    Stage *x = stage_at(&L, i);
    if (x->attach == ATTACH_ROOT) vec_push(&parts, gen_stage(&L, x));
  }
  Stmt *body = ir_seq((Stmt **)parts.data, parts.len);
  for (int i = n - 1; i >= 0; i--) {
    Stage *x = stage_at(&L, i);
    if (x->attach == ATTACH_ROOT && !x->output) body = ir_alloc(x->buf, body);
  }
  if (!L.ok) return NULL;
  if (backend_for(s->target)->allows_bind) body = inject_vthreads(body);
  return make_func(&L, simplify_stmt(body));
}
