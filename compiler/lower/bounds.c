/* bounds.c — lowering pass `bounds` (TE's InferBound and the loops of MakeLoopNest).
 *
 * Consumers before producers: a stage computed at loop L of C covers the region its
 * consumers read per iteration of L (loops inside L relaxed over their ranges, loops at
 * and outside L fixed). Then each stage's leaf extents by splitting/fusing the root
 * ranges, root values from the leaf loop vars, and guards for split tails and for
 * regions that overrun the op's domain. */
#include "lower.h"

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

Expr *lower_root_subst(Stage *x, Expr *e) {
  IrVar **vars = xalloc(sizeof(IrVar *) * (size_t)(x->nroot + 1));
  for (int i = 0; i < x->nroot; i++) vars[i] = x->root[i]->var;
  return ir_subst(e, vars, x->full, x->nroot);
}


/* What consumers read of a stage, per dimension: the interval of each index, and of the
 * index with its clamps stripped (bnd_unclamp; CLAMPED: whether any was). */
typedef struct Region {
  Interval *iv, *un;
  bool *clamped;
} Region;

static Interval widen(Interval a, Interval b, bool have) {
  return have ? (Interval){bnd_min(a.min, b.min), bnd_max(a.max, b.max)} : b;
}

/* Widen REGION (per dimension of P) by what consumer X reads of P; *HAVE says whether
 * REGION holds anything yet. */
static bool consumer_region(Stage *p, Stage *x, Vec *fixed, Region *region, bool *have) {
  Vec ex = {0};
  encl_all(x, &ex);
  for (int i = 0; i < fixed->len; i++)
    if (i >= ex.len || VEC_AT(ex, i) != VEC_AT(*fixed, i)) {
      diag_error(p->attach_loc, "loop '%s' does not enclose the use of '%s' in stage '%s'",
                 p->at_iv->name, p->name, x->name);
      return false;
    }
  /* An argmax= update also reads its value at the best position so far (nests.c,
   * arg_update): any point of the reduction domain, so its reduction loops are relaxed. */
  bool arg = x->op->rop == RED_ARGMAX || x->op->rop == RED_ARGMIN;
  Relax r = {0};
  for (int i = 0; i < ex.len; i++) {
    IterVar *iv = VEC_AT(ex, i);
    bool relaxed = i >= fixed->len || gpu_relaxed(iv, p->scope) || (arg && iv->reduce);
    if (iv->loopvar && relaxed) relax_add(&r, iv->loopvar, iv->ext);
  }
  Vec loads = {0};
  collect_loads(x->eff, p->op->out, &loads);
  collect_loads(x->init_eff, p->op->out, &loads);
  for (int d = 0; x->op->scatter && d < x->op->ndim; d++) collect_loads(x->scatter_eff[d], p->op->out, &loads);
  for (int j = 0; j < loads.len; j++) {
    Expr *ld = VEC_AT(loads, j);
    for (int d = 0; d < p->op->ndim; d++) {
      Expr *idx = lower_root_subst(x, ld->args[d]), *first = p->root[d]->dmin;
      Expr *t = bnd_unclamp(idx, first, bnd_simplify(ir_sub(ir_add(first, p->root[d]->dext), ir_int(1))), &r);
      Interval iv = bnd_interval(idx, &r);
      if (bnd_reads_data(iv.min) || bnd_reads_data(iv.max)) /* where data says: anywhere in the domain */
        iv = (Interval){first, bnd_simplify(ir_sub(ir_add(first, p->root[d]->dext), ir_int(1)))};
      region->iv[d] = widen(region->iv[d], iv, *have);
      region->un[d] = widen(region->un[d], t == idx ? iv : bnd_interval(t, &r), *have);
      region->clamped[d] |= t != idx;
    }
    *have = true;
  }
  return true;
}

/* An update definition's initial value runs before X's reduction loops: a producer that
 * it reads (P) must not be computed inside them. */
static bool init_attach_ok(Stage *p, Stage *x) {
  if (!sched_reads(x->init_eff, p->op->out)) return true;
  Stage *st = p;
  for (int depth = 0; st->attach == ATTACH_AT && depth < 64; depth++, st = st->at_stage) {
    if (st->at_stage != x) continue;
    int at = sched_leaf_pos(x, st->at_iv);
    for (int i = 0; i < at; i++)
      if (((IterVar *)VEC_AT(x->leaf, i))->reduce) at = -1;
    if (at >= 0 && !st->at_iv->reduce) return true;
    diag_error(p->attach_loc, "'%s' is computed inside the reduction loops of '%s', but the initial "
               "value of '%s' (its update definition) reads it before them: compute it at a loop "
               "outside them", p->name, x->name, x->name);
    return false;
  }
  return true;
}

/* The scope of P's buffer. A temp that no step gave a scope, computed inside a GPU
 * kernel, takes TVM's default by its attach point: local under a threadIdx loop, else
 * shared under a blockIdx loop (a global buffer cannot be allocated in a kernel). */
static Scope attached_scope(LowerCtx *L, Stage *p) {
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

/* The region of a dimension whose reads are clamped (bnd_unclamp): t ranges over U, so the
 * elements read lie in clamp(U.min)..clamp(U.max), at most min(U's extent, the domain's)
 * of them. That many from the domain's start, U.min moved into the domain: the extent is
 * the same at every iteration (one buffer) and the region never leaves the domain (no
 * guards). Halide's blur strip y*8 .. y*8+7 reads rows y*8-1 .. y*8+8: 10 rows from
 * max(min(y*8 - 1, H - 10), 0). */
static bool clamped_region(IterVar *iv, Interval u, const Relax *outer, const Kernel *k) {
  if (!u.min || !u.max) return false;
  Expr *ext = bnd_simplify(ir_add(ir_sub(u.max, u.min), ir_int(1)));
  if (!bnd_loop_free(ext, k)) ext = bnd_interval(ext, outer).max;
  if (!ext || !bnd_loop_free(ext, k)) return false;
  ext = bnd_min(ext, iv->dext);
  Expr *last_start = bnd_simplify(ir_sub(ir_add(iv->dmin, iv->dext), ext));
  iv->min = bnd_max(bnd_min(u.min, last_start), iv->dmin);
  iv->ext = ext;
  return iv->min && ext;
}

/* storage_align of P (schedule.c): its buffer's rows padded to the least pitch >= the row
 * length with pitch % factor == offset. The row length must be a constant there. (That P
 * is computed at a loop at all is sched_check_attach's, before lowering.) */
static bool align_rows(Stage *p) {
  if (!p->align_factor) return true;
  int64_t len;
  if (p->buf->ndim < 2 || !ir_is_const(p->buf->shape[p->buf->ndim - 1], &len)) {
    diag_error(p->align_loc, "storage_align of '%s': its rows have no constant length where it is computed",
               p->name);
    return false;
  }
  int64_t f = p->align_factor;
  p->buf->pad = ((p->align_offset - len) % f + f) % f;
  return true;
}

/* Bound inference for a stage computed at a loop: its root ranges and its buffer.
 * INSIDE[d]: whether dimension d's region lies in the op's domain by construction. */
static bool infer_attached(LowerCtx *L, Stage *p, bool *inside) {
  int nd = p->op->ndim;
  Scope saved = p->scope;
  p->scope = attached_scope(L, p); /* consumer_region relaxes loops by it */
  Region region = {xalloc(sizeof(Interval) * (size_t)(nd + 1)), xalloc(sizeof(Interval) * (size_t)(nd + 1)),
                   xalloc(sizeof(bool) * (size_t)(nd + 1))};
  bool have = false;
  Vec fixed = {0};
  encl_attach(p, &fixed);
  Relax outer = {0};
  for (int i = 0; i < fixed.len; i++) {
    IterVar *iv = VEC_AT(fixed, i);
    if (iv->loopvar) relax_add(&outer, iv->loopvar, iv->ext);
  }
  for (int i = 0; i < L->s->stages.len; i++) {
    Stage *x = lower_stage(L, i);
    if (x == p || x->attach == ATTACH_INLINE ||
        !(sched_op_reads(x->op, x->eff, x->scatter_eff, p->op->out) || sched_reads(x->init_eff, p->op->out)))
      continue;
    if (!x->done) die("lower: consumer %s of %s not bounded first", x->name, p->name);
    if (!init_attach_ok(p, x)) {
      p->scope = saved;
      return false;
    }
    if (!consumer_region(p, x, &fixed, &region, &have)) {
      p->scope = saved;
      return false;
    }
  }
  p->offset = xalloc(sizeof(Expr *) * (size_t)(nd + 1));
  Expr **shape = xalloc(sizeof(Expr *) * (size_t)(nd + 1));
  for (int d = 0; d < nd; d++) {
    IterVar *iv = p->root[d];
    Interval rd = region.iv[d];
    Expr *ext = have && rd.min && rd.max ? bnd_simplify(ir_add(ir_sub(rd.max, rd.min), ir_int(1))) : NULL;
    if ((!ext || !bnd_loop_free(ext, L->k)) && have && region.clamped[d] &&
        clamped_region(iv, region.un[d], &outer, L->k)) {
      inside[d] = true;
      shape[d] = iv->ext;
      p->offset[d] = iv->min;
      continue;
    }
    if (ext && !bnd_loop_free(ext, L->k)) ext = bnd_interval(ext, &outer).max;
    if (!ext || !bnd_loop_free(ext, L->k)) { /* unknown: the whole domain */
      iv->min = iv->dmin;
      iv->ext = iv->dext;
    } else {
      iv->min = rd.min;
      iv->ext = ext;
    }
    shape[d] = iv->ext;
    p->offset[d] = iv->min;
  }
  p->buf = ir_buffer(p->op->out->name, p->op->out->dtype, nd, shape, p->scope, BUF_TEMP);
  p->buf->op = p->op;
  p->scope = saved;
  return align_rows(p);
}


static bool used_loopvar(LowerCtx *L, IrVar *v) {
  for (int i = 0; i < L->loopvars.len; i++)
    if (VEC_AT(L->loopvars, i) == v) return true;
  return false;
}

/* Loop vars and values of the leaves: a leaf of extent 1 that is not bound to a GPU
 * axis gets no loop (its value is 0). */
static void leaf_vars(LowerCtx *L, Stage *x) {
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
static void domain_guards(Stage *x, const bool *inside) {
  Vec ex = {0};
  encl_all(x, &ex);
  Relax r = {0};
  for (int i = 0; i < ex.len; i++) {
    IterVar *iv = VEC_AT(ex, i);
    if (iv->loopvar) relax_add(&r, iv->loopvar, iv->ext);
  }
  for (int d = 0; d < x->ndata; d++) {
    IterVar *iv = x->root[d];
    if (inside[d]) continue;
    if (!bnd_prove_le(iv->dmin, x->full[d], &r))
      vec_push(&x->guards[0], ir_bin(OP_GE, x->full[d], iv->dmin));
    Expr *end = bnd_simplify(ir_add(iv->dmin, iv->dext));
    if (!bnd_prove_le(x->full[d], bnd_simplify(ir_sub(end, ir_int(1))), &r))
      vec_push(&x->guards[0], ir_bin(OP_LT, x->full[d], end));
  }
}

/* Ranges, loop vars, root values and guards of X. */
static bool prepare_stage(LowerCtx *L, Stage *x) {
  x->guards[0] = x->guards[1] = (Vec){0};
  x->buf = x->op->out;
  x->offset = NULL;
  bool *inside = xalloc(sizeof(bool) * (size_t)(x->nroot + 1));
  if (x->attach == ATTACH_AT) {
    if (!infer_attached(L, x, inside)) return false;
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
  if (x->attach == ATTACH_AT) domain_guards(x, inside);
  x->done = true;
  return true;
}

bool pass_bounds(LowerCtx *L) {
  for (int i = L->s->stages.len - 1; i >= 0; i--) {
    Stage *x = lower_stage(L, i);
    if (x->attach != ATTACH_INLINE && !prepare_stage(L, x)) return false;
  }
  return true;
}
