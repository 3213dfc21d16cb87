/* schedule.c — schedules as TE stages: one stage per op, iter vars with split/fuse
 * relations, attach points, annotations; the steps of LANGUAGE.md applied to them.
 *
 * A step is checked before it changes anything; as a safety net sched_step also takes a
 * snapshot and restores it when a step fails halfway, so a failed step never leaves the
 * schedule changed. Whether a compute_at's loop encloses every reader of the stage is
 * judged on the final schedule (sched_check_attach), as TVM does. */
#include "sched_internal.h"

#include <string.h>

/* ---- construction ---------------------------------------------------- */

static IterVar *iv_new(Schedule *s, Stage *st, const char *base, IrVar *var, bool reduce) {
  IterVar *iv = xalloc(sizeof *iv);
  iv->base = xstrdup(base);
  iv->name = iv->base;
  iv->var = var ? var : ir_newvar(base, DT_I64);
  iv->stage = st;
  iv->reduce = reduce;
  iv->kind = FOR_SERIAL;
  vec_push(&s->ivs, iv);
  return iv;
}

static IterVar *root_iv(Schedule *s, Stage *st, IrVar *var, Expr *min, Expr *ext, bool reduce) {
  IterVar *iv = iv_new(s, st, var->name, var, reduce);
  iv->name = xprintf("%s.%s", st->name, var->name);
  iv->root = true;
  iv->dmin = min;
  iv->dext = ext;
  return iv;
}

/* A stage for OP: its root iter vars are the op's axes, then its reduction axes. */
static Stage *stage_new(Schedule *s, Op *op, Loc loc) {
  Stage *st = xalloc(sizeof *st);
  st->name = op->name;
  st->op = op;
  st->loc = loc;
  st->output = op->out->kind == BUF_OUTPUT;
  st->scope = op->out->scope;
  st->root = xalloc(sizeof(IterVar *) * (size_t)(op->ndim + op->nred + 1));
  for (int d = 0; d < op->ndim; d++) /* a scatter's computed dimensions have no loop */
    if (!op->scatter || !op->scatter[d])
      st->root[st->ndata++] = root_iv(s, st, op->axes[d], ir_int(0), op->out->shape[d], false);
  st->nroot = st->ndata + op->nred;
  for (int r = 0; r < op->nred; r++)
    st->root[st->ndata + r] = root_iv(s, st, op->raxes[r], op->rmin[r], op->rext[r], true);
  if (op->is_scan) st->root[op->scan_dim]->scan = true;
  for (int i = 0; i < st->nroot; i++) vec_push(&st->leaf, st->root[i]);
  return st;
}

Schedule *sched_new(Kernel *k, Target t) {
  Schedule *s = xalloc(sizeof *s);
  s->k = k;
  s->target = t;
  for (int i = 0; i < k->nops; i++) vec_push(&s->stages, stage_new(s, k->ops[i], k->ops[i]->loc));
  return s;
}

/* Insert NEW into the stage list just before BEFORE (keeps producers first). */
static void insert_stage(Schedule *s, Stage *nw, Stage *before) {
  vec_push(&s->stages, NULL);
  int at = s->stages.len - 1;
  while (at > 0 && VEC_AT(s->stages, at - 1) != before) {
    s->stages.data[at] = s->stages.data[at - 1];
    at--;
  }
  if (at > 0) {
    s->stages.data[at] = before;
    at--;
  }
  s->stages.data[at] = nw;
}

/* ---- queries shared with lowering ------------------------------------ */

bool sched_reads(const Expr *e, const Buffer *b) {
  if (!e) return false;
  if (e->kind == E_LOAD && e->buf == b) return true;
  for (int i = 0; i < e->nargs; i++)
    if (sched_reads(e->args[i], b)) return true;
  return sched_reads(e->a, b) || sched_reads(e->b, b) || sched_reads(e->c, b);
}

bool sched_op_reads(const Op *op, Expr *eff, Expr **scatter, const Buffer *b) {
  if (sched_reads(eff, b) || sched_reads(op->init, b)) return true;
  for (int d = 0; op->scatter && d < op->ndim; d++)
    if (scatter[d] && sched_reads(scatter[d], b)) return true;
  return false;
}

Stage *sched_stage_of_buf(Schedule *s, const Buffer *b) {
  for (int i = 0; i < s->stages.len; i++) {
    Stage *st = VEC_AT(s->stages, i);
    if (st->op->out == b) return st;
  }
  return NULL;
}

int sched_leaf_pos(const Stage *st, const IterVar *iv) {
  for (int i = 0; i < st->leaf.len; i++)
    if (VEC_AT(st->leaf, i) == iv) return i;
  return -1;
}

Expr *sched_ceildiv(Expr *a, int64_t b) {
  return bnd_simplify(ir_floordiv(ir_add(a, ir_int(b - 1)), ir_int(b)));
}

/* a*b <= c is provable (the parts of a split cover exactly its parent). */
static bool covers_exactly(Expr *a, Expr *b, Expr *c) {
  return bnd_prove_le(bnd_simplify(ir_mul(a, b)), c, NULL);
}

/* Extents of the non-root iter vars from those of the roots (iv->ext), relation by
 * relation; marks split parents whose parts may overrun (tail). */
void sched_pass_down(Stage *st) {
  for (int i = 0; i < st->rels.len; i++) {
    Rel *r = VEC_AT(st->rels, i);
    if (r->kind == REL_FUSE) {
      r->parent->ext = bnd_simplify(ir_mul(r->outer->ext, r->inner->ext));
      r->parent->tail = false;
      continue;
    }
    /* A part never runs longer than its parent: splitting 8 by 1000000000 gives loops
     * of 1 and 8, not a guarded loop of a billion (no extent exceeds ARITH_SIZE_MAX). */
    int64_t k = r->factor > 0 ? r->factor : r->nparts;
    Expr *whole = k >= ARITH_SIZE_MAX || bnd_prove_le(r->parent->ext, ir_int(k), NULL) ? r->parent->ext : NULL;
    if (r->factor > 0) {
      r->inner->ext = whole ? whole : ir_int(r->factor);
      r->outer->ext = whole ? ir_int(1) : sched_ceildiv(r->parent->ext, r->factor);
    } else {
      r->outer->ext = whole ? whole : ir_int(r->nparts);
      r->inner->ext = whole ? ir_int(1) : sched_ceildiv(r->parent->ext, r->nparts);
    }
    r->parent->tail = !covers_exactly(r->outer->ext, r->inner->ext, r->parent->ext);
  }
}

/* Extents of every loop over the op's own domain (what steps see). */
static void static_extents(Stage *st) {
  for (int i = 0; i < st->nroot; i++) {
    st->root[i]->min = st->root[i]->dmin;
    st->root[i]->ext = st->root[i]->dext;
  }
  sched_pass_down(st);
}

/* ---- names ----------------------------------------------------------- */

static Stage *find_stage(Schedule *s, const char *name) {
  for (int i = 0; i < s->stages.len; i++) {
    Stage *st = VEC_AT(s->stages, i);
    if (strcmp(st->name, name) == 0) return st;
  }
  return NULL;
}

/* An extern kernel's output: no loops, computed whole at the root by the call. */
static bool extern_stage(Stage *st, Loc loc) {
  if (!st->op || !st->op->ext) return false;
  diag_error(loc, "stage '%s' is an output of extern kernel %s: it has no loops to schedule and "
             "is computed whole, at the root", st->name, st->op->ext->callee);
  return true;
}

/* The extern call that reads ST's tensor, if one does: ST must then be whole at the root. */
static bool read_by_extern(Schedule *s, Stage *st, Loc loc) {
  for (int i = 0; st->op && i < s->k->nops; i++) {
    ExternCall *e = s->k->ops[i]->ext;
    for (int j = 0; e && j < e->nin; j++)
      if (e->bufs[j] == st->op->out) {
        diag_error(loc, "'%s' is read by extern kernel %s, which needs it whole: it stays at the root",
                   st->name, e->callee);
        return true;
      }
  }
  return false;
}

static NameDef *find_name(Schedule *s, const char *name) {
  for (int i = 0; i < s->names.len; i++) {
    NameDef *d = VEC_AT(s->names, i);
    if (strcmp(d->name, name) == 0) return d;
  }
  return NULL;
}

/* NAME may be defined by a step at LOC: not a stage, tensor or earlier name. */
static bool check_new_name(Schedule *s, const char *name, Loc loc) {
  NameDef *d = find_name(s, name);
  if (d) {
    diag_error(loc, "name '%s' is already defined at line %d", name, d->loc.line);
    return false;
  }
  bool tensor = find_stage(s, name) != NULL;
  for (int i = 0; i < s->k->ninputs; i++) tensor |= strcmp(s->k->inputs[i]->name, name) == 0;
  for (int i = 0; i < s->k->noutputs; i++) tensor |= strcmp(s->k->outputs[i]->name, name) == 0;
  for (int i = 0; i < s->k->ntemps; i++) tensor |= strcmp(s->k->temps[i]->name, name) == 0;
  if (tensor) {
    diag_error(loc, "name '%s' is already defined: it names a tensor", name);
    return false;
  }
  return true;
}

static void define(Schedule *s, const char *name, IterVar *iv, Stage *st, Loc loc) {
  NameDef *d = xalloc(sizeof *d);
  d->name = xstrdup(name);
  d->iv = iv;
  d->stage = st;
  d->loc = loc;
  vec_push(&s->names, d);
}

/* The iter var that A (`C.i` or `io`) names, whether or not it is still a loop. */
static IterVar *lookup_iv(Schedule *s, const Ast *a) {
  if (a->kind == A_NAME) {
    NameDef *d = find_name(s, a->name);
    if (d && d->iv) return d->iv;
    diag_error(a->loc, "no loop named '%s' (write STAGE.axis for a stage's own axes)", a->name);
    return NULL;
  }
  if (a->kind != A_MEMBER) {
    diag_error(a->loc, "expected a loop (STAGE.axis or a name from an earlier step)");
    return NULL;
  }
  Stage *st = find_stage(s, a->name);
  if (!st) {
    diag_error(a->loc, "no stage named '%s'", a->name);
    return NULL;
  }
  if (extern_stage(st, a->loc)) return NULL;
  for (int i = 0; i < st->nroot; i++)
    if (strcmp(st->root[i]->base, a->name2) == 0) return st->root[i];
  NameDef *d = find_name(s, a->name2);
  if (d && d->iv && d->iv->stage == st) return d->iv;
  diag_error(a->loc, "stage '%s' has no loop '%s'", a->name, a->name2);
  return NULL;
}

/* The loop A names; it must still be a loop (a leaf) of its stage. */
static IterVar *find_loop(Schedule *s, const Ast *a) {
  IterVar *iv = lookup_iv(s, a);
  if (!iv) return NULL;
  if (iv->gone) {
    diag_error(a->loc, "loop '%s' %s", iv->name, iv->gone);
    return NULL;
  }
  return iv;
}

/* The stage A names (an A_NAME). */
static Stage *find_stage_arg(Schedule *s, const Ast *a) {
  if (a->kind != A_NAME) {
    diag_error(a->loc, "expected a stage name");
    return NULL;
  }
  Stage *st = find_stage(s, a->name);
  if (!st) diag_error(a->loc, "no stage named '%s'", a->name);
  if (st && extern_stage(st, a->loc)) return NULL;
  return st;
}

static bool has_attached(Schedule *s, Stage *st, Loc loc, const char *what) {
  for (int i = 0; i < s->stages.len; i++) {
    Stage *x = VEC_AT(s->stages, i);
    if (x->attach == ATTACH_AT && x->at_stage == st) {
      diag_error(loc, "%s: stage '%s' is computed at loop '%s' of '%s'", what, x->name,
                 x->at_iv->name, st->name);
      return true;
    }
  }
  return false;
}

static bool iv_has_attached(Schedule *s, IterVar *iv, Loc loc, const char *what) {
  for (int i = 0; i < s->stages.len; i++) {
    Stage *x = VEC_AT(s->stages, i);
    if (x->attach == ATTACH_AT && x->at_iv == iv) {
      diag_error(loc, "%s: stage '%s' is computed at loop '%s'; %s before compute_at", what,
                 x->name, iv->name, what);
      return true;
    }
  }
  return false;
}

/* ---- arguments ------------------------------------------------------- */

typedef struct StepCtx {
  Schedule *s;
  const Ast *step;
  Loc loc;
  const char **out; /* output names */
  int nout;
  const Ast **arg;
  int narg;
} StepCtx;

/* A positive integer argument (a literal, or `name = literal`). */
static bool int_arg(StepCtx *c, const Ast *a, const char *what, int64_t *v) {
  if (a->kind == A_KWARG) a = a->a;
  Loc at = a ? a->loc : c->loc;
  int64_t sign = 1;
  if (a && a->kind == A_UNARY && a->op == '-') {
    sign = -1;
    a = a->a;
  }
  if (!a || a->kind != A_INT) {
    diag_error(c->loc, "%s must be an integer literal", what);
    return false;
  }
  *v = sign * a->ival;
  if (*v <= 0) {
    diag_error(at, "%s must be positive, not %lld", what, (long long)*v);
    return false;
  }
  return true;
}

static bool count_args(StepCtx *c, int nout, int amin, int amax) {
  const char *fn = c->step->name;
  if (c->nout != nout) {
    if (nout == 0) diag_error(c->loc, "%s gives no loops or stages; remove the '=' and its names", fn);
    else diag_error(c->loc, "%s gives %d name%s, not %d", fn, nout, nout == 1 ? "" : "s", c->nout);
    return false;
  }
  if (c->narg < amin || c->narg > amax) {
    if (amin == amax) diag_error(c->loc, "%s takes %d argument%s, not %d", fn, amin, amin == 1 ? "" : "s", c->narg);
    else diag_error(c->loc, "%s takes %d to %d arguments, not %d", fn, amin, amax, c->narg);
    return false;
  }
  for (int i = 0; i < c->nout; i++) {
    if (!check_new_name(c->s, c->out[i], c->loc)) return false;
    for (int j = 0; j < i; j++)
      if (strcmp(c->out[i], c->out[j]) == 0) {
        diag_error(c->loc, "name '%s' is defined twice by this step", c->out[i]);
        return false;
      }
  }
  return true;
}

/* ---- split, tile, fuse, reorder -------------------------------------- */

static void replace_leaf(Stage *st, int pos, IterVar **with, int n) {
  Vec v = {0};
  for (int i = 0; i < st->leaf.len; i++) {
    if (i != pos) {
      vec_push(&v, VEC_AT(st->leaf, i));
      continue;
    }
    for (int j = 0; j < n; j++) vec_push(&v, with[j]);
  }
  st->leaf = v;
}

/* Split IV by FACTOR (or into NPARTS parts) into loops named O and I. */
static bool do_split(StepCtx *c, IterVar *iv, int64_t factor, int64_t nparts, const char *o, const char *i) {
  if (iv_has_attached(c->s, iv, c->loc, "split")) return false;
  Stage *st = iv->stage;
  Rel *r = xalloc(sizeof *r);
  r->kind = REL_SPLIT;
  r->parent = iv;
  /* No extent exceeds ARITH_SIZE_MAX, so a larger factor means the same split; clamping
   * keeps every extent computed from it (ceildiv) far from overflow. */
  r->factor = factor < ARITH_SIZE_MAX ? factor : ARITH_SIZE_MAX;
  r->nparts = nparts < ARITH_SIZE_MAX ? nparts : ARITH_SIZE_MAX;
  r->outer = iv_new(c->s, st, o, NULL, iv->reduce);
  r->inner = iv_new(c->s, st, i, NULL, iv->reduce);
  r->outer->scan = r->inner->scan = iv->scan;
  vec_push(&st->rels, r);
  IterVar *two[2] = {r->outer, r->inner};
  replace_leaf(st, sched_leaf_pos(st, iv), two, 2);
  iv->gone = xprintf("was split into '%s' and '%s' at line %d", o, i, c->loc.line);
  define(c->s, o, r->outer, NULL, c->loc);
  define(c->s, i, r->inner, NULL, c->loc);
  return true;
}

static bool step_split(StepCtx *c) {
  if (!count_args(c, 2, 2, 2)) return false;
  IterVar *iv = find_loop(c->s, c->arg[0]);
  if (!iv) return false;
  const Ast *f = c->arg[1];
  bool parts = f->kind == A_KWARG && strcmp(f->name, "parts") == 0;
  if (f->kind == A_KWARG && !parts && strcmp(f->name, "factor") != 0) {
    diag_error(f->loc, "split takes a factor or `parts = P`, not '%s ='", f->name);
    return false;
  }
  int64_t v;
  if (!int_arg(c, f, parts ? "the number of parts" : "split factor", &v)) return false;
  return do_split(c, iv, parts ? 0 : v, parts ? v : 0, c->out[0], c->out[1]);
}

/* ---- scans: the scan axis runs serially and in order (LANGUAGE.md, "Scans") ---- */

/* The leaves that IV was split into, outermost part first. */
static void scan_leaves(Stage *st, IterVar *iv, Vec *out) {
  for (int i = 0; i < st->rels.len; i++) {
    Rel *r = VEC_AT(st->rels, i);
    if (r->kind == REL_SPLIT && r->parent == iv) {
      scan_leaves(st, r->outer, out);
      scan_leaves(st, r->inner, out);
      return;
    }
  }
  vec_push(out, iv);
}

/* After a reorder: the parts of ST's scan axis are still outer part first. */
static bool scan_order_ok(StepCtx *c, Stage *st) {
  if (!st->op->is_scan) return true;
  Vec lv = {0};
  scan_leaves(st, st->root[st->op->scan_dim], &lv);
  for (int i = 1; i < lv.len; i++) {
    IterVar *o = VEC_AT(lv, i - 1), *in = VEC_AT(lv, i);
    if (sched_leaf_pos(st, o) > sched_leaf_pos(st, in)) {
      diag_error(c->loc, "this order puts loop '%s' inside '%s': both are parts of scan axis '%s', "
                 "whose iterations must run in order (%s reads the elements before), outer part first",
                 o->name, in->name, st->root[st->op->scan_dim]->name, st->name);
      return false;
    }
  }
  return true;
}

/* Whether loop IV may run out of order (parallel, vectorized, bound): not when it is a
 * part of a scan axis, unless its extent is 1. */
static bool scan_free(StepCtx *c, IterVar *iv, const char *what) {
  int64_t e;
  if (!iv->scan) return true;
  static_extents(iv->stage);
  if (ir_is_const(iv->ext, &e) && e == 1) return true;
  diag_error(c->loc, "cannot %s loop '%s': it runs scan axis '%s' of '%s', whose iterations read "
             "the ones before and must run serially, in order", what, iv->name,
             iv->stage->root[iv->stage->op->scan_dim]->name, iv->stage->name);
  return false;
}

/* A stage whose value reads its own tensor must stay at the root, as itself. */
static bool scan_stage_ok(StepCtx *c, Stage *st, const char *what) {
  if (!st->op->is_scan) return true;
  diag_error(c->loc, "cannot %s '%s': it is a scan (it reads its own earlier elements), which is "
             "computed whole, at the root", what, st->name);
  return false;
}

/* A scatter (H[A[i]] += 1) stays at the root, as itself. */
static bool scatter_stage_ok(StepCtx *c, Stage *st, const char *what) {
  if (!st->op->scatter) return true;
  diag_error(c->loc, "cannot %s '%s': it is a scatter (its left side has a computed index), which "
             "is computed whole, at the root", what, st->name);
  return false;
}

/* Put LOOPS (distinct leaves of one stage) at the positions they hold, in this order. */
static void apply_reorder(Stage *st, IterVar **loops, int n) {
  int pos[64], k = 0;
  for (int i = 0; i < st->leaf.len; i++)
    for (int j = 0; j < n; j++)
      if (VEC_AT(st->leaf, i) == loops[j]) pos[k++] = i;
  for (int j = 0; j < n; j++) st->leaf.data[pos[j]] = loops[j];
}

static bool step_tile(StepCtx *c) {
  if (!count_args(c, 4, 4, 4)) return false;
  IterVar *x = find_loop(c->s, c->arg[0]), *y = x ? find_loop(c->s, c->arg[1]) : NULL;
  int64_t fx, fy;
  if (!x || !y || !int_arg(c, c->arg[2], "tile factor", &fx) || !int_arg(c, c->arg[3], "tile factor", &fy))
    return false;
  if (x->stage != y->stage || x == y) {
    diag_error(c->loc, "tile needs two different loops of one stage ('%s' is in '%s', '%s' in '%s')",
               x->name, x->stage->name, y->name, y->stage->name);
    return false;
  }
  if (!do_split(c, x, fx, 0, c->out[0], c->out[2]) || !do_split(c, y, fy, 0, c->out[1], c->out[3]))
    return false;
  Stage *st = x->stage;
  Rel *rx = VEC_AT(st->rels, st->rels.len - 2), *ry = VEC_AT(st->rels, st->rels.len - 1);
  IterVar *order[4] = {rx->outer, ry->outer, rx->inner, ry->inner};
  apply_reorder(st, order, 4);
  return scan_order_ok(c, st);
}

static bool step_fuse(StepCtx *c) {
  if (!count_args(c, 1, 2, 2)) return false;
  IterVar *a = find_loop(c->s, c->arg[0]), *b = a ? find_loop(c->s, c->arg[1]) : NULL;
  if (!a || !b) return false;
  Stage *st = a->stage;
  if (b->stage != st) {
    diag_error(c->loc, "fuse needs two loops of one stage ('%s' is in '%s', '%s' in '%s')", a->name,
               st->name, b->name, b->stage->name);
    return false;
  }
  int pa = sched_leaf_pos(st, a), pb = sched_leaf_pos(st, b);
  if (a == b) {
    diag_error(c->loc, "fuse needs two different loops, not '%s' twice", a->name);
    return false;
  }
  if (pb != pa + 1) {
    diag_error(c->loc, "fuse needs adjacent loops, the outer one first: '%s' and '%s' are loops %d and %d of '%s'",
               a->name, b->name, pa + 1, pb + 1, st->name);
    return false;
  }
  if (a->reduce != b->reduce) {
    diag_error(c->loc, "fuse of a reduction loop with a data-parallel loop ('%s', '%s')", a->name, b->name);
    return false;
  }
  if (a->scan || b->scan) {
    diag_error(c->loc, "cannot fuse '%s' and '%s': '%s' runs the scan axis of '%s', which stays a "
               "loop of its own (split it instead)", a->name, b->name, (a->scan ? a : b)->name, st->name);
    return false;
  }
  if (iv_has_attached(c->s, a, c->loc, "fuse") || iv_has_attached(c->s, b, c->loc, "fuse")) return false;
  Rel *r = xalloc(sizeof *r);
  r->kind = REL_FUSE;
  r->outer = a;
  r->inner = b;
  r->parent = iv_new(c->s, st, c->out[0], NULL, a->reduce);
  vec_push(&st->rels, r);
  replace_leaf(st, pb, NULL, 0);
  replace_leaf(st, pa, &r->parent, 1);
  a->gone = b->gone = xprintf("was fused into '%s' at line %d", c->out[0], c->loc.line);
  define(c->s, c->out[0], r->parent, NULL, c->loc);
  return true;
}

static bool step_reorder(StepCtx *c) {
  if (!count_args(c, 0, 1, 64)) return false;
  IterVar *loops[64] = {0};
  for (int i = 0; i < c->narg; i++) {
    if (!(loops[i] = find_loop(c->s, c->arg[i]))) return false;
    if (loops[i]->stage != loops[0]->stage) {
      diag_error(c->arg[i]->loc, "reorder across stages: '%s' is a loop of '%s', '%s' of '%s'",
                 loops[0]->name, loops[0]->stage->name, loops[i]->name, loops[i]->stage->name);
      return false;
    }
    for (int j = 0; j < i; j++)
      if (loops[j] == loops[i]) {
        diag_error(c->arg[i]->loc, "reorder names loop '%s' twice", loops[i]->name);
        return false;
      }
  }
  apply_reorder(loops[0]->stage, loops, c->narg);
  return scan_order_ok(c, loops[0]->stage);
}

/* ---- annotations ----------------------------------------------------- */

static bool parse_bind_axis(const Ast *a, ForKind *k) {
  static const char *const names[] = {"blockIdx", "threadIdx"};
  if (a->kind == A_NAME && strcmp(a->name, "vthread") == 0) {
    *k = FOR_VTHREAD;
    return true;
  }
  if (a->kind != A_MEMBER || strlen(a->name2) != 1 || a->name2[0] < 'x' || a->name2[0] > 'z') return false;
  for (int i = 0; i < 2; i++)
    if (strcmp(a->name, names[i]) == 0) {
      *k = (ForKind)((i ? FOR_THREAD_X : FOR_BLOCK_X) + (a->name2[0] - 'x'));
      return true;
    }
  return false;
}

/* Whether a scatter's updates can be atomic on GPU target T: +=, max= or min= on a dtype
 * whose atomic the target's row lists (Backend.atomic_add, atomic_minmax). */
static bool gpu_atomic_ok(const Op *op, Target t) {
  const Backend *be = backend_for(t);
  unsigned d = 1u << op->out->dtype;
  if (!op->scatter) return false;
  if (op->rop == RED_SUM) return (be->atomic_add & d) != 0;
  return (op->rop == RED_MAX || op->rop == RED_MIN) && (be->atomic_minmax & d);
}

static bool step_bind(StepCtx *c) {
  if (!count_args(c, 0, 2, 2)) return false;
  if (!backend_for(c->s->target)->allows_bind) {
    diag_error(c->loc, "bind needs a GPU target (cuda, opencl); this schedule is lowered for %s",
               target_names[c->s->target]);
    return false;
  }
  IterVar *iv = find_loop(c->s, c->arg[0]);
  ForKind k;
  if (!iv) return false;
  if (!parse_bind_axis(c->arg[1], &k)) {
    diag_error(c->arg[1]->loc, "bind to blockIdx.x/y/z, threadIdx.x/y/z or vthread");
    return false;
  }
  /* After rfactor the remaining reduction (over the factored axis) may be bound to
   * threads: the GPU back ends emit a block reduction for it (TVM's allreduce). */
  bool cross = iv->stage->rfactored && forkind_is_thread(k);
  int64_t e1 = 0;
  if (iv->reduce && iv->stage->op->scatter) { /* one part of extent 1: one thread does all */
    static_extents(iv->stage);
    cross = ir_is_const(iv->ext, &e1) && e1 == 1;
    /* or the updates are atomic (nests.c, gpu_source.c) */
    cross |= k != FOR_VTHREAD && gpu_atomic_ok(iv->stage->op, c->s->target);
  }
  if (iv->reduce && !cross) {
    diag_error(c->loc, "cannot bind reduction loop '%s' to %s: threads would race on '%s'; "
               "use rfactor and bind the data-parallel loops%s", iv->name, forkind_names[k], iv->stage->name,
               iv->stage->op->scatter && k != FOR_VTHREAD
                   ? " (a scatter's updates are atomic on a GPU for +=, max=, min= on i32 and u32, += "
                     "on f32; on cuda also i64 and f64 +=, i64 max= and min=)"
                   : "");
    return false;
  }
  if (!scan_free(c, iv, "bind")) return false;
  Stage *st = iv->stage;
  for (int i = 0; i < st->leaf.len && k != FOR_VTHREAD; i++) {
    IterVar *o = VEC_AT(st->leaf, i);
    if (o != iv && o->kind == k) {
      diag_error(c->loc, "loop '%s' of '%s' is already bound to %s", o->name, st->name, forkind_names[k]);
      return false;
    }
  }
  iv->kind = k;
  iv->kind_loc = c->loc;
  return true;
}

/* Whether a scatter's updates can be atomic on the CPU: += on integers, f32, f64;
 * max=, min= on integers. */
static bool atomic_ok(const Op *op) {
  DType t = op->out->dtype;
  bool num = dtype_is_int(t) && t != DT_BOOL;
  if (!op->scatter) return false;
  if (op->rop == RED_SUM) return num || t == DT_F32 || t == DT_F64;
  return (op->rop == RED_MAX || op->rop == RED_MIN) && num;
}

/* parallel, vectorize, unroll. */
static bool step_annotate(StepCtx *c, ForKind k) {
  if (!count_args(c, 0, 1, 1)) return false;
  IterVar *iv = find_loop(c->s, c->arg[0]);
  if (!iv) return false;
  if (k == FOR_PARALLEL && !backend_for(c->s->target)->allows_parallel) {
    diag_error(c->loc, "parallel is for CPU targets; on %s bind the loop to blockIdx/threadIdx",
               target_names[c->s->target]);
    return false;
  }
  if (k == FOR_VECTORIZE && !backend_for(c->s->target)->allows_vectorize) {
    diag_error(c->loc, "vectorize does not apply to %s", target_names[c->s->target]);
    return false;
  }
  if (iv->reduce && k == FOR_PARALLEL && atomic_ok(iv->stage->op)) {
    /* a scatter's updates, made atomic (nests.c) */
  } else if (iv->reduce && k != FOR_UNROLL) {
    diag_error(c->loc, "cannot %s reduction loop '%s': its iterations update the same element%s",
               k == FOR_PARALLEL ? "parallelize" : "vectorize", iv->name,
               iv->stage->op->scatter && k == FOR_PARALLEL
                   ? " (a scatter's updates are atomic for += on integers, f32 and f64, max= and "
                     "min= on integers)"
                   : "");
    return false;
  }
  if (k != FOR_UNROLL && !scan_free(c, iv, k == FOR_PARALLEL ? "parallelize" : "vectorize"))
    return false;
  if (k == FOR_VECTORIZE) {
    static_extents(iv->stage);
    if (!ir_is_const(iv->ext, NULL)) {
      diag_error(c->loc, "vectorize needs a loop with a constant extent; '%s' has extent %s", iv->name,
                 ir_expr_str(iv->ext));
      return false;
    }
  }
  iv->kind = k;
  iv->kind_loc = c->loc;
  return true;
}

/* ---- attachment ------------------------------------------------------ */

/* Add to OUT the non-inlined stages that read ST's output (through inlined stages). */
static void consumers(Schedule *s, Stage *st, Vec *out, int depth) {
  for (int i = 0; i < s->stages.len && depth < 64; i++) {
    Stage *x = VEC_AT(s->stages, i);
    if (x == st || !sched_op_reads(x->op, x->op->value, x->op->scatter, st->op->out)) continue;
    if (x->attach == ATTACH_INLINE) {
      consumers(s, x, out, depth + 1);
      continue;
    }
    bool seen = false;
    for (int j = 0; j < out->len; j++) seen |= VEC_AT(*out, j) == x;
    if (!seen) vec_push(out, x);
  }
}

/* X runs inside loop L of C: X is C, or is attached (through other stages) to C at L
 * or at a loop inside it. */
static bool in_scope(Stage *x, Stage *c, IterVar *l) {
  for (int depth = 0; depth < 64; depth++) {
    if (x == c) return true;
    if (x->attach != ATTACH_AT) return false;
    if (x->at_stage == c) return sched_leaf_pos(c, x->at_iv) >= sched_leaf_pos(c, l);
    x = x->at_stage;
  }
  return false;
}

static bool step_compute_at(StepCtx *c) {
  if (!count_args(c, 0, 3, 3)) return false;
  Stage *p = find_stage_arg(c->s, c->arg[0]), *cs = p ? find_stage_arg(c->s, c->arg[1]) : NULL;
  IterVar *l = cs ? find_loop(c->s, c->arg[2]) : NULL;
  if (!l) return false;
  if (l->stage != cs) {
    diag_error(c->arg[2]->loc, "loop '%s' is not a loop of stage '%s'", l->name, cs->name);
    return false;
  }
  if (p == cs) {
    diag_error(c->loc, "cannot compute stage '%s' at its own loop '%s'", p->name, l->name);
    return false;
  }
  if (p->output) {
    diag_error(c->loc, "cannot compute_at output '%s': outputs are computed at the root", p->name);
    return false;
  }
  if (!scan_stage_ok(c, p, "compute_at") || !scatter_stage_ok(c, p, "compute_at")) return false;
  if (read_by_extern(c->s, p, c->loc)) return false;
  if (cs->attach == ATTACH_INLINE) {
    diag_error(c->loc, "cannot compute '%s' at a loop of '%s': '%s' is inlined", p->name, cs->name, cs->name);
    return false;
  }
  for (Stage *x = cs; x->attach == ATTACH_AT; x = x->at_stage)
    if (x->at_stage == p) {
      diag_error(c->loc, "compute_at makes a cycle: '%s' is computed inside '%s'", cs->name, p->name);
      return false;
    }
  p->attach = ATTACH_AT;
  p->at_stage = cs;
  p->at_iv = l;
  p->attach_loc = c->loc;
  p->attach_broken = (Loc){0}; /* judged anew after this step (track_attachments) */
  return true;
}

static bool step_compute_inline(StepCtx *c) {
  if (!count_args(c, 0, 1, 1)) return false;
  Stage *p = find_stage_arg(c->s, c->arg[0]);
  if (!p) return false;
  if (p->op->nred) {
    diag_error(c->loc, "cannot inline '%s': it is a reduction", p->name);
    return false;
  }
  if (p->output) {
    diag_error(c->loc, "cannot inline '%s': it is an output of the kernel", p->name);
    return false;
  }
  if (!scan_stage_ok(c, p, "inline") || !scatter_stage_ok(c, p, "inline")) return false;
  if (read_by_extern(c->s, p, c->loc)) return false;
  if (has_attached(c->s, p, c->loc, "compute_inline")) return false;
  p->attach = ATTACH_INLINE;
  p->attach_loc = c->loc;
  return true;
}

static bool step_compute_root(StepCtx *c) {
  if (!count_args(c, 0, 1, 1)) return false;
  Stage *p = find_stage_arg(c->s, c->arg[0]);
  if (!p) return false;
  p->attach = ATTACH_ROOT;
  p->attach_loc = c->loc;
  return true;
}

/* ---- cache_read, cache_write, rfactor -------------------------------- */

/* Axis names of a cache_read stage: C's plain index names of T, else ax0, ax1, ... */
static IrVar **cache_axes(const Expr *load, int ndim) {
  IrVar **v = xalloc(sizeof(IrVar *) * (size_t)(ndim + 1));
  bool plain = true;
  for (int d = 0; d < ndim; d++) {
    plain &= load->args[d]->kind == E_VAR;
    for (int e = 0; plain && e < d; e++) plain &= load->args[e]->var != load->args[d]->var;
  }
  for (int d = 0; d < ndim; d++)
    v[d] = ir_newvar(plain ? load->args[d]->var->name : xprintf("ax%d", d), DT_I64);
  return v;
}

static bool scope_arg(StepCtx *c, const Ast *a, Scope *sc) {
  if (a->kind == A_NAME && strcmp(a->name, "shared") == 0) *sc = SCOPE_SHARED;
  else if (a->kind == A_NAME && strcmp(a->name, "local") == 0) *sc = SCOPE_LOCAL;
  else {
    diag_error(a->loc, "expected a memory scope: shared or local");
    return false;
  }
  return true;
}

static Buffer *find_tensor(Schedule *s, const Ast *a) {
  if (a->kind == A_NAME) {
    for (int i = 0; i < s->k->ninputs; i++)
      if (strcmp(s->k->inputs[i]->name, a->name) == 0) return s->k->inputs[i];
    Stage *st = find_stage(s, a->name);
    if (st) return st->op->out;
  }
  diag_error(a->loc, "expected a tensor of the kernel");
  return NULL;
}

/* An op NAME = VALUE over AXES (no reduction), writing a new temp buffer. */
static Op *simple_op(const char *name, Loc loc, Buffer *out, IrVar **axes, Expr *value, Buffer *read) {
  Op *o = xalloc(sizeof *o);
  o->name = out->name;
  o->loc = loc;
  o->out = out;
  o->axes = axes;
  o->ndim = out->ndim;
  o->value = value;
  o->reads = xalloc(sizeof(Buffer *));
  o->reads[0] = read;
  o->nreads = 1;
  (void)name;
  return o;
}

static Expr *load_vars(Buffer *b, IrVar **vars) {
  Expr **idx = xalloc(sizeof(Expr *) * (size_t)(b->ndim + 1));
  for (int d = 0; d < b->ndim; d++) idx[d] = ir_var(vars[d]);
  return ir_load(b, idx);
}

static bool step_cache_read(StepCtx *c) {
  if (!count_args(c, 1, 3, 3)) return false;
  Buffer *t = find_tensor(c->s, c->arg[0]);
  Scope sc;
  Stage *cs = t && scope_arg(c, c->arg[1], &sc) ? find_stage_arg(c->s, c->arg[2]) : NULL;
  if (!cs) return false;
  const Expr *use = ir_first_load(cs->op->value, t);
  if (use && t == cs->op->out && !scan_stage_ok(c, cs, "cache_read its own tensor in")) return false;
  if (!scatter_stage_ok(c, cs, "cache_read for")) return false;
  if (!use) {
    diag_error(c->arg[2]->loc, "stage '%s' does not read '%s'", cs->name, t->name);
    return false;
  }
  Buffer *b = ir_buffer(c->out[0], t->dtype, t->ndim, t->shape, sc, BUF_TEMP);
  IrVar **axes = cache_axes(use, t->ndim);
  Op *o = simple_op(c->out[0], c->loc, b, axes, load_vars(t, axes), t);
  b->op = o;
  Op *co = xalloc(sizeof *co);
  *co = *cs->op;
  co->value = ir_buf_subst(cs->op->value, &t, &b, 1);
  co->reads = xalloc(sizeof(Buffer *) * (size_t)(co->nreads + 1));
  for (int i = 0; i < co->nreads; i++) co->reads[i] = cs->op->reads[i] == t ? b : cs->op->reads[i];
  Stage *st = stage_new(c->s, o, c->loc);
  st->scope = sc;
  insert_stage(c->s, st, cs);
  cs->op = co;
  define(c->s, c->out[0], NULL, st, c->loc);
  return true;
}

/* The stage has no relations, reorders or stages at its loops. */
static bool untouched(StepCtx *c, Stage *st, const char *what) {
  bool same = st->leaf.len == st->nroot && !st->rels.len;
  for (int i = 0; same && i < st->nroot; i++) same = VEC_AT(st->leaf, i) == st->root[i];
  if (!same) {
    diag_error(c->loc, "%s must come before split, fuse and reorder steps on '%s'", what, st->name);
    return false;
  }
  return !has_attached(c->s, st, c->loc, what);
}

/* A copy of OP writing OUT, over fresh axis vars. */
static Op *op_fresh(Op *op, Buffer *out) {
  Op *o = xalloc(sizeof *o);
  *o = *op;
  o->name = out->name;
  o->out = out;
  int n = op->ndim + op->nred;
  IrVar **from = xalloc(sizeof(IrVar *) * (size_t)(n + 1));
  Expr **to = xalloc(sizeof(Expr *) * (size_t)(n + 1));
  o->axes = xalloc(sizeof(IrVar *) * (size_t)(op->ndim + 1));
  o->raxes = xalloc(sizeof(IrVar *) * (size_t)(op->nred + 1));
  for (int i = 0; i < n; i++) {
    from[i] = i < op->ndim ? op->axes[i] : op->raxes[i - op->ndim];
    IrVar *v = ir_newvar(from[i]->name, DT_I64);
    to[i] = ir_var(v);
    if (i < op->ndim) o->axes[i] = v;
    else o->raxes[i - op->ndim] = v;
  }
  o->value = ir_subst(op->value, from, to, n);
  if (op->rcond) o->rcond = ir_subst(op->rcond, from, to, n);
  if (op->init) o->init = ir_subst(op->init, from, to, n);
  out->op = o;
  return o;
}

static void retire_reduce(Stage *st, const char *why) {
  for (int i = 0; i < st->nroot; i++)
    if (st->root[i]->reduce && !st->root[i]->gone) st->root[i]->gone = why;
  for (int i = 0; i < st->leaf.len; i++) {
    IterVar *iv = VEC_AT(st->leaf, i);
    if (iv->reduce && !iv->gone) iv->gone = why;
  }
}

static bool step_cache_write(StepCtx *c) {
  if (!count_args(c, 1, 2, 2)) return false;
  Stage *cs = find_stage_arg(c->s, c->arg[0]);
  Scope sc;
  if (!cs || !scope_arg(c, c->arg[1], &sc) || !untouched(c, cs, "cache_write")) return false;
  if (!scan_stage_ok(c, cs, "cache_write") || !scatter_stage_ok(c, cs, "cache_write")) return false;
  if (cs->attach == ATTACH_INLINE) {
    diag_error(c->loc, "cannot cache_write inlined stage '%s'", cs->name);
    return false;
  }
  Buffer *out = cs->op->out;
  Buffer *b = ir_buffer(c->out[0], out->dtype, out->ndim, out->shape, sc, BUF_TEMP);
  Op *comp = op_fresh(cs->op, b);
  comp->loc = c->loc;
  Op *copy = simple_op(cs->name, cs->op->loc, out, cs->op->axes, load_vars(b, cs->op->axes), b);
  Stage *st = stage_new(c->s, comp, c->loc);
  st->scope = sc;
  insert_stage(c->s, st, cs);
  retire_reduce(cs, xprintf("moved to stage '%s' by cache_write at line %d", c->out[0], c->loc.line));
  cs->op = copy;
  cs->nroot = cs->ndata;
  cs->leaf = (Vec){0};
  for (int i = 0; i < cs->ndata; i++) vec_push(&cs->leaf, cs->root[i]);
  define(c->s, c->out[0], NULL, st, c->loc);
  return true;
}

void sched_pass_up(Stage *st, Vec guards[2]) {
  for (int i = st->rels.len - 1; i >= 0; i--) {
    Rel *r = VEC_AT(st->rels, i);
    if (r->kind == REL_SPLIT) {
      Expr *f = r->factor > 0 ? ir_int(r->factor) : r->inner->ext;
      r->parent->val = bnd_simplify(ir_add(ir_mul(r->outer->val, f), r->inner->val));
      if (r->parent->tail) vec_push(&guards[r->parent->reduce], ir_bin(OP_LT, r->parent->val, r->parent->ext));
      continue;
    }
    int64_t e;
    if (ir_is_const(r->inner->ext, &e) && e == 1) {
      r->outer->val = r->parent->val;
      r->inner->val = ir_int(0);
    } else {
      r->outer->val = bnd_simplify(ir_floordiv(r->parent->val, r->inner->ext));
      r->inner->val = bnd_simplify(ir_floormod(r->parent->val, r->inner->ext));
    }
  }
}

Expr *sched_identity(ReduceOp rop, DType t) {
  if (dtype_is_float(t)) {
    switch (rop) {
    case RED_PROD: return ir_float(t, 1.0);
    case RED_MAX: return ir_float(t, -__builtin_inf());
    case RED_MIN: return ir_float(t, __builtin_inf());
    default: return ir_float(t, 0.0);
    }
  }
  int bits = dtype_bytes(t) * 8;
  bool sgn = dtype_is_signed(t);
  int64_t lo = t == DT_BOOL ? 0 : sgn ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
  int64_t hi = t == DT_BOOL ? 1 : bits == 64 ? INT64_MAX : sgn ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
  switch (rop) {
  case RED_PROD: return ir_const(t, 1);
  case RED_MAX: return ir_const(t, lo);
  case RED_MIN: return ir_const(t, hi);
  default: return ir_const(t, 0);
  }
}

static Expr *all_of(Vec *conds) {
  Expr *r = NULL;
  for (int i = 0; i < conds->len; i++) r = r ? ir_bin(OP_AND, r, VEC_AT(*conds, i)) : VEC_AT(*conds, i);
  return r;
}

/* rfactor may apply: L a reduction loop of C, C's data loops untouched. */
static bool rfactor_ok(StepCtx *c, Stage *cs, IterVar *l) {
  if (l->stage != cs) {
    diag_error(c->arg[1]->loc, "loop '%s' is not a loop of stage '%s'", l->name, cs->name);
    return false;
  }
  if (!l->reduce) {
    diag_error(c->loc, "rfactor of a non-reduction loop '%s'", l->name);
    return false;
  }
  for (int i = 0; i < cs->rels.len; i++) {
    Rel *r = VEC_AT(cs->rels, i);
    if (!r->parent->reduce) {
      diag_error(c->loc, "rfactor must come before split and fuse steps on the data-parallel loops of '%s'", cs->name);
      return false;
    }
  }
  return !has_attached(c->s, cs, c->loc, "rfactor");
}

/* The rfactor stage's op: C's data axes and L, reducing over C's other reduction loops. */
static Op *rfactor_op(StepCtx *c, Stage *cs, IterVar *l, IrVar *lv) {
  Op *op = cs->op, *o = xalloc(sizeof *o);
  static_extents(cs);
  Expr **shape = xalloc(sizeof(Expr *) * (size_t)(op->ndim + 2));
  IrVar **axes = xalloc(sizeof(IrVar *) * (size_t)(op->ndim + 2));
  IrVar **from = xalloc(sizeof(IrVar *) * (size_t)(cs->nroot + 1));
  Expr **to = xalloc(sizeof(Expr *) * (size_t)(cs->nroot + 1));
  shape[0] = l->ext;
  axes[0] = lv;
  for (int d = 0; d < op->ndim; d++) {
    shape[d + 1] = op->out->shape[d];
    axes[d + 1] = ir_newvar(op->axes[d]->name, DT_I64);
    from[d] = op->axes[d];
    to[d] = ir_var(axes[d + 1]);
  }
  o->raxes = xalloc(sizeof(IrVar *) * (size_t)(cs->leaf.len + 1));
  o->rmin = xalloc(sizeof(Expr *) * (size_t)(cs->leaf.len + 1));
  o->rext = xalloc(sizeof(Expr *) * (size_t)(cs->leaf.len + 1));
  for (int i = 0; i < cs->leaf.len; i++) {
    IterVar *iv = VEC_AT(cs->leaf, i);
    if (!iv->reduce) continue;
    IrVar *v = iv == l ? lv : ir_newvar(iv->base, DT_I64);
    iv->val = ir_var(v);
    if (iv == l) continue;
    o->raxes[o->nred] = v;
    o->rmin[o->nred] = ir_int(0);
    o->rext[o->nred++] = iv->ext;
  }
  Vec g[2] = {{0}, {0}};
  sched_pass_up(cs, g);
  for (int r = 0; r < op->nred; r++) {
    IterVar *root = cs->root[op->ndim + r];
    from[op->ndim + r] = op->raxes[r];
    to[op->ndim + r] = bnd_simplify(ir_add(root->dmin, root->val));
  }
  o->value = ir_subst(op->value, from, to, cs->nroot);
  if (g[1].len) o->value = ir_select(all_of(&g[1]), o->value, sched_identity(op->rop, op->value->dtype));
  o->name = c->out[0];
  o->loc = c->loc;
  o->out = ir_buffer(c->out[0], op->out->dtype, op->ndim + 1, shape, SCOPE_GLOBAL, BUF_TEMP);
  o->out->op = o;
  o->axes = axes;
  o->ndim = op->ndim + 1;
  o->rop = o->nred ? op->rop : RED_NONE;
  o->reads = op->reads;
  o->nreads = op->nreads;
  return o;
}

static bool step_rfactor(StepCtx *c) {
  if (!count_args(c, 1, 2, 2)) return false;
  Stage *cs = find_stage_arg(c->s, c->arg[0]);
  IterVar *l = cs ? find_loop(c->s, c->arg[1]) : NULL;
  if (!l || !scatter_stage_ok(c, cs, "rfactor") || !rfactor_ok(c, cs, l)) return false;
  if (cs->op->rcond) {
    diag_error(c->loc, "cannot rfactor '%s': its reduction range depends on its indices (`where` "
               "over them)", cs->name);
    return false;
  }
  if (cs->op->init) {
    diag_error(c->loc, "cannot rfactor '%s': it is an update definition (it starts from the "
               "statement before)", cs->name);
    return false;
  }
  if (cs->op->rop == RED_ARGMAX || cs->op->rop == RED_ARGMIN) {
    diag_error(c->loc, "cannot rfactor '%s': `%s` keeps a (value, index) pair, which rfactor "
               "does not combine", cs->name, reduceop_names[cs->op->rop]);
    return false;
  }
  IrVar *lv = ir_newvar(l->base, DT_I64), *cv = ir_newvar(l->base, DT_I64);
  Op *ro = rfactor_op(c, cs, l, lv);
  Op *co = xalloc(sizeof *co);
  *co = *cs->op;
  co->raxes = xalloc(sizeof(IrVar *));
  co->rmin = xalloc(sizeof(Expr *));
  co->rext = xalloc(sizeof(Expr *));
  co->raxes[0] = cv;
  co->rmin[0] = ir_int(0);
  co->rext[0] = l->ext;
  co->nred = 1;
  IrVar **idx = xalloc(sizeof(IrVar *) * (size_t)(co->ndim + 2));
  idx[0] = cv;
  for (int d = 0; d < co->ndim; d++) idx[d + 1] = co->axes[d];
  co->value = load_vars(ro->out, idx);
  co->reads = xalloc(sizeof(Buffer *));
  co->reads[0] = ro->out;
  co->nreads = 1;
  retire_reduce(cs, xprintf("moved to rfactor stage '%s' at line %d", c->out[0], c->loc.line));
  Vec leaf = {0};
  for (int i = 0; i < cs->leaf.len; i++)
    if (!((IterVar *)VEC_AT(cs->leaf, i))->reduce) vec_push(&leaf, VEC_AT(cs->leaf, i));
  IterVar **root = xalloc(sizeof(IterVar *) * (size_t)(cs->ndata + 2));
  memcpy(root, cs->root, sizeof(IterVar *) * (size_t)cs->ndata);
  root[cs->ndata] = root_iv(c->s, cs, cv, ir_int(0), l->ext, true);
  vec_push(&leaf, root[cs->ndata]);
  cs->root = root;
  cs->nroot = cs->ndata + 1;
  cs->leaf = leaf;
  cs->rels = (Vec){0};
  cs->op = co;
  cs->rfactored = true;
  Stage *st = stage_new(c->s, ro, c->loc);
  insert_stage(c->s, st, cs);
  define(c->s, c->out[0], NULL, st, c->loc);
  return true;
}

/* ---- steps ----------------------------------------------------------- */

/* storage_align(S, S.axis, FACTOR, OFFSET), TVM's: the stride of AXIS (the next-to-last
 * dimension of S's buffer: its rows) becomes the least pitch >= the row length with
 * pitch % FACTOR == OFFSET, so that threads reading down a column of a shared tile fall in
 * different banks (32 x 4 bytes: FACTOR 32, OFFSET 1; OFFSET 4 keeps float4 rows aligned).
 * Only for a stage the schedule computes at a loop (its own allocation, sized there); the
 * padding is applied by bound inference (lower/bounds.c) and shows in `--emit ir`. */
static bool step_storage_align(StepCtx *c) {
  if (!count_args(c, 0, 4, 4)) return false;
  Stage *st = find_stage_arg(c->s, c->arg[0]);
  IterVar *iv = st ? lookup_iv(c->s, c->arg[1]) : NULL;
  if (!iv) return false;
  if (iv->stage != st || !iv->root || iv->reduce) {
    diag_error(c->arg[1]->loc, "storage_align takes an axis of stage '%s' (STAGE.axis), not loop '%s'",
               st->name, iv->name);
    return false;
  }
  if (st->ndata < 2 || iv != st->root[st->ndata - 2]) {
    diag_error(c->arg[1]->loc, "storage_align pads the rows of '%s': give its next-to-last axis%s%s", st->name,
               st->ndata >= 2 ? ", " : " (it has fewer than two)",
               st->ndata >= 2 ? st->root[st->ndata - 2]->name : "");
    return false;
  }
  if (st->output || st->op->out->kind != BUF_TEMP) {
    diag_error(c->arg[0]->loc, "cannot storage_align '%s': it is an output of the kernel", st->name);
    return false;
  }
  int64_t factor, offset = 0;
  if (!int_arg(c, c->arg[2], "storage_align factor", &factor)) return false;
  const Ast *o = c->arg[3]->kind == A_KWARG ? c->arg[3]->a : c->arg[3];
  if (!o || o->kind != A_INT || o->ival >= factor) {
    diag_error(o ? o->loc : c->loc, "storage_align offset must be an integer literal from 0 to %lld",
               (long long)factor - 1);
    return false;
  }
  offset = o->ival;
  if (factor > 1024) {
    diag_error(c->arg[2]->loc, "storage_align factor %lld is larger than 1024", (long long)factor);
    return false;
  }
  st->align_factor = factor;
  st->align_offset = offset;
  st->align_loc = c->loc;
  return true;
}

/* double_buffer(S), TVM's: S, computed at a serial loop, gets a second buffer, and the
 * iterations of that loop alternate between the two, each fetching the next iteration's
 * copy while it computes from its own (lower/double_buffer.c). double_buffer(S, local):
 * on a GPU that copy is also staged through each thread's registers, loaded before the
 * computation and stored to the second buffer after it (target/gpu_source.c). Where S is
 * computed is judged on the final schedule (sched_check_attach). */
static bool step_double_buffer(StepCtx *c) {
  if (!count_args(c, 0, 1, 2)) return false;
  Stage *st = find_stage_arg(c->s, c->arg[0]);
  if (!st) return false;
  if (st->output || st->op->out->kind != BUF_TEMP) {
    diag_error(c->arg[0]->loc, "cannot double_buffer '%s': it is an output of the kernel", st->name);
    return false;
  }
  if (c->narg == 2) {
    const Ast *a = c->arg[1];
    if (a->kind != A_NAME || strcmp(a->name, "local") != 0) {
      diag_error(a->loc, "double_buffer's second argument is 'local' (stage the copy through "
                 "registers), not this");
      return false;
    }
    st->stage_local = true;
  }
  st->double_buffer = c->loc;
  return true;
}

/* auto_unroll(L, N), TVM's pragma auto_unroll_max_step: every serial loop nested in L
 * (in L's stage and in the stages computed inside it) whose constant extent times the
 * iterations of its body is at most N is unrolled when the nest is built (nests.c
 * auto_unroll_marks); the loops a vectorized or a thread-bound loop holds count once (per
 * thread, as TVM counts). L itself is not. */
#define AUTO_UNROLL_MAX 4096
static bool step_auto_unroll(StepCtx *c) {
  if (!count_args(c, 0, 2, 2)) return false;
  IterVar *iv = find_loop(c->s, c->arg[0]);
  int64_t n;
  if (!iv || !int_arg(c, c->arg[1], "auto_unroll's iteration count", &n)) return false;
  if (n > AUTO_UNROLL_MAX) {
    diag_error(c->arg[1]->loc, "auto_unroll's iteration count %lld is larger than %d", (long long)n,
               AUTO_UNROLL_MAX);
    return false;
  }
  iv->auto_unroll = n;
  return true;
}

static bool step_parallel(StepCtx *c) { return step_annotate(c, FOR_PARALLEL); }
static bool step_vectorize(StepCtx *c) { return step_annotate(c, FOR_VECTORIZE); }
static bool step_unroll(StepCtx *c) { return step_annotate(c, FOR_UNROLL); }

static const struct {
  const char *name;
  bool (*fn)(StepCtx *c);
} steps[] = {
    {"split", step_split},       {"tile", step_tile},
    {"fuse", step_fuse},         {"reorder", step_reorder},
    {"bind", step_bind},         {"parallel", step_parallel},
    {"vectorize", step_vectorize}, {"unroll", step_unroll},
    {"compute_at", step_compute_at}, {"compute_inline", step_compute_inline},
    {"compute_root", step_compute_root}, {"cache_read", step_cache_read},
    {"cache_write", step_cache_write}, {"rfactor", step_rfactor},
    {"storage_align", step_storage_align}, {"auto_unroll", step_auto_unroll},
    {"double_buffer", step_double_buffer},
};

/* What a failed step must not leave behind: copies of every stage and iter var. */
typedef struct Snapshot {
  Vec stages, names;
  int nivs;
  Stage *st;
  IterVar *iv;
} Snapshot;

static Vec vec_dup(Vec v) {
  Vec r = v;
  if (v.cap) {
    r.data = xalloc(sizeof(void *) * (size_t)v.cap);
    memcpy(r.data, v.data, sizeof(void *) * (size_t)v.len);
  }
  return r;
}

static Snapshot snapshot(Schedule *s) {
  Snapshot sn = {vec_dup(s->stages), vec_dup(s->names), s->ivs.len, NULL, NULL};
  sn.st = xalloc(sizeof(Stage) * (size_t)(s->stages.len + 1));
  sn.iv = xalloc(sizeof(IterVar) * (size_t)(s->ivs.len + 1));
  for (int i = 0; i < s->stages.len; i++) {
    sn.st[i] = *(Stage *)VEC_AT(s->stages, i);
    sn.st[i].leaf = vec_dup(sn.st[i].leaf);
    sn.st[i].rels = vec_dup(sn.st[i].rels);
  }
  for (int i = 0; i < s->ivs.len; i++) sn.iv[i] = *(IterVar *)VEC_AT(s->ivs, i);
  return sn;
}

static void restore(Schedule *s, Snapshot *sn) {
  s->stages = sn->stages;
  s->names = sn->names;
  s->ivs.len = sn->nivs;
  for (int i = 0; i < s->stages.len; i++) *(Stage *)VEC_AT(s->stages, i) = sn->st[i];
  for (int i = 0; i < sn->nivs; i++) *(IterVar *)VEC_AT(s->ivs, i) = sn->iv[i];
}

/* Whether stage P, computed at a loop, has every reader inside that loop. When not,
 * *OUTSIDE gets a reader outside it (NULL: P is read by no stage). */
static bool attach_holds(Schedule *s, Stage *p, Stage **outside) {
  Vec users = {0};
  consumers(s, p, &users, 0);
  *outside = NULL;
  for (int j = 0; j < users.len; j++) {
    Stage *x = VEC_AT(users, j);
    if (!in_scope(x, p->at_stage, p->at_iv)) {
      *outside = x;
      return false;
    }
  }
  return users.len > 0;
}

/* After a step at LOC: whether each attachment holds depends on where its readers are
 * computed, which later steps may still change (compute_at(M, Y, Y.r) before
 * compute_at(E, Y, Y.r), E the reader of M). As TVM does, attachments are judged on the
 * final schedule (sched_check_attach); here each stage only remembers the step after
 * which its attachment stopped holding, for the error to point at. */
static void track_attachments(Schedule *s, Loc loc) {
  for (int i = 0; i < s->stages.len; i++) {
    Stage *p = VEC_AT(s->stages, i), *x;
    if (p->attach != ATTACH_AT || attach_holds(s, p, &x)) p->attach_broken = (Loc){0};
    else if (!p->attach_broken.file) p->attach_broken = loc;
  }
}

static bool same_loc(Loc a, Loc b) { return a.file == b.file && a.line == b.line && a.col == b.col; }

/* P is computed at a loop of X that encloses X's initial value (an update definition's,
 * which runs before X's reduction loops), when that value reads P. */
static bool init_encloses(Stage *p) {
  Stage *x = p->at_stage;
  if (!x->op->init || !sched_reads(x->op->init, p->op->out)) return true;
  int at = sched_leaf_pos(x, p->at_iv);
  for (int i = 0; i <= at; i++)
    if (((IterVar *)VEC_AT(x->leaf, i))->reduce) {
      diag_error(p->attach_loc, "'%s' is computed inside the reduction loops of '%s', but the "
                 "initial value of '%s' (its update definition) reads it before them: compute it "
                 "at a loop outside them", p->name, x->name, x->name);
      return false;
    }
  return true;
}

/* STEP (STEP_LOC) of P needs P computed at a loop, which WHY says; diagnoses it when P is
 * inlined or at the root. */
static bool at_a_loop(const Stage *p, const char *step, Loc step_loc, const char *why) {
  if (p->attach == ATTACH_AT) return true;
  if (p->attach == ATTACH_INLINE) diag_error(step_loc, "%s of '%s': it is inlined and has no buffer", step, p->name);
  else diag_error(step_loc, "%s of '%s': it must be computed at a loop (compute_at), %s", step, p->name, why);
  return false;
}

/* double_buffer(P) needs P computed at a loop whose iterations run one after another in
 * one thread: serial or unrolled. */
static bool double_buffer_loop(const Stage *p) {
  if (!at_a_loop(p, "double_buffer", p->double_buffer, "whose next iteration's copy it fetches ahead")) return false;
  ForKind k = p->at_iv->kind;
  if (k != FOR_SERIAL && k != FOR_UNROLL) {
    diag_error(p->double_buffer, "double_buffer of '%s': loop '%s', where it is computed, is %s%s; "
               "double buffering overlaps consecutive iterations of a serial loop",
               p->name, p->at_iv->name, forkind_is_gpu(k) ? "bound to " : "", forkind_names[k]);
    return false;
  }
  return true;
}

bool sched_check_attach(Schedule *s) {
  for (int i = 0; i < s->stages.len; i++) {
    Stage *p = VEC_AT(s->stages, i), *x;
    /* storage_align needs its own buffer */
    if (p->align_factor && !at_a_loop(p, "storage_align", p->align_loc, "where its own buffer is allocated")) return false;
    if (p->double_buffer.file && !double_buffer_loop(p)) return false;
    if (p->attach == ATTACH_AT && !init_encloses(p)) return false;
    if (p->attach != ATTACH_AT || attach_holds(s, p, &x)) continue;
    Loc at = p->attach_broken.file ? p->attach_broken : p->attach_loc;
    bool own = same_loc(at, p->attach_loc); /* broken from its own compute_at on */
    if (!x && own) diag_error(at, "stage '%s' is read by no stage", p->name);
    else if (!x)
      diag_error(at, "after this step, stage '%s' (computed at loop '%s') is read by no stage", p->name,
                 p->at_iv->name);
    else if (own) diag_error(at, "loop '%s' does not enclose the use of '%s' in stage '%s'", p->at_iv->name, p->name, x->name);
    else
      diag_error(at, "after this step, loop '%s' (where '%s' is computed, line %d) no longer encloses "
                 "its use in stage '%s'", p->at_iv->name, p->name, p->attach_loc.line, x->name);
    return false;
  }
  return true;
}

bool sched_step(Schedule *s, const Ast *step) {
  StepCtx c = {s, step, step->loc, NULL, 0, NULL, 0};
  c.nout = step->list.len;
  c.out = xalloc(sizeof(char *) * (size_t)(c.nout + 1));
  for (int i = 0; i < c.nout; i++) c.out[i] = ((Ast *)VEC_AT(step->list, i))->name;
  c.narg = step->list2.len;
  c.arg = (const Ast **)step->list2.data;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (strcmp(steps[i].name, step->name) != 0) continue;
    Snapshot sn = snapshot(s);
    int before = diag_errors();
    if (steps[i].fn(&c) && diag_errors() == before) {
      track_attachments(s, c.loc);
      return true;
    }
    restore(s, &sn);
    return false;
  }
  diag_error(step->loc, "unknown schedule step '%s'", step->name);
  return false;
}

Schedule *sched_build(Kernel *k, Target t, const Vec *stps) {
  for (int i = 0; i < k->nops && backend_for(t)->allows_bind; i++)
    if (k->ops[i]->ext) {
      diag_error(k->ops[i]->loc, "extern kernel %s is a C function called on the host: the %s "
                 "target cannot call it (use --target llvm)", k->ops[i]->ext->callee, target_names[t]);
      return NULL;
    }
  Schedule *s = sched_new(k, t);
  for (int i = 0; stps && i < stps->len; i++)
    if (!sched_step(s, VEC_AT(*stps, i))) return NULL;
  return sched_check_attach(s) ? s : NULL;
}

/* `STAGE: loop(extent) ...` per stage; extents over the op's own domain, `?` when
 * symbolic. Inlined stages have no loops. */
char *sched_describe(Schedule *s) {
  char *out = xstrdup("");
  for (int i = 0; i < s->stages.len; i++) {
    Stage *st = VEC_AT(s->stages, i);
    out = xprintf("%s%s:", out, st->name);
    if (st->attach == ATTACH_INLINE) {
      out = xprintf("%s\n", out);
      continue;
    }
    static_extents(st);
    for (int j = 0; j < st->leaf.len; j++) {
      IterVar *iv = VEC_AT(st->leaf, j);
      int64_t e;
      if (ir_is_const(iv->ext, &e)) out = xprintf("%s %s(%lld)", out, iv->name, (long long)e);
      else out = xprintf("%s %s(?)", out, iv->name);
    }
    out = xprintf("%s\n", out);
  }
  return out;
}
