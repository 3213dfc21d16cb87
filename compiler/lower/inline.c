/* inline.c — lowering pass `inline`: each stage's value with the values of inlined
 * producers substituted for their loads (Stage.eff), in topological order. */
#include "lower.h"

Expr **lower_map_args(LowerCtx *L, Expr *e, Expr *(*f)(LowerCtx *, Expr *)) {
  Expr **args = xalloc(sizeof(Expr *) * (size_t)(e->nargs + 1));
  for (int i = 0; i < e->nargs; i++) args[i] = f(L, e->args[i]);
  return args;
}

/* E with loads of inlined stages replaced by their values. */
static Expr *inline_expr(LowerCtx *L, Expr *e) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Expr **args = e->nargs ? lower_map_args(L, e, inline_expr) : NULL;
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

/* A stage computed at a loop that a later step removed is an error at the compute_at. */
static bool check_attach(Stage *p) {
  if (p->attach != ATTACH_AT) return true;
  if (p->at_stage->attach == ATTACH_INLINE || sched_leaf_pos(p->at_stage, p->at_iv) < 0) {
    diag_error(p->attach_loc, "stage '%s' is computed at loop '%s', which is no longer a loop of '%s'",
               p->name, p->at_iv->name, p->at_stage->name);
    return false;
  }
  return true;
}

/* The operations of E once the inlined stages' values stand for their loads (SIZES: of
 * the stages before, by topo), saturating at MAX_INLINED; *FROM: the inlined stage that
 * adds the most. */
enum { MAX_INLINED = 1 << 20 };
static int64_t inlined_size(LowerCtx *L, const Expr *e, const int64_t *sizes, Stage **from) {
  if (!e) return 0;
  int64_t n = 1, best = 0;
  if (e->kind == E_LOAD) {
    Stage *p = sched_stage_of_buf(L->s, e->buf);
    if (p && p->attach == ATTACH_INLINE && p->topo >= 0) n = sizes[p->topo], *from = p; /* topo: set once sized */
  }
  const Expr *sub[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3 + e->nargs && n < MAX_INLINED; i++) {
    Stage *f = NULL;
    int64_t k = inlined_size(L, i < 3 ? sub[i] : e->args[i - 3], sizes, &f);
    n += k;
    if (f && k > best) best = k, *from = f;
  }
  return n < MAX_INLINED ? n : MAX_INLINED;
}

bool pass_inline(LowerCtx *L) {
  int64_t *sizes = xalloc(sizeof(int64_t) * (size_t)(L->s->stages.len + 1));
  for (int i = 0; i < L->s->stages.len; i++) lower_stage(L, i)->topo = -1;
  for (int i = 0; i < L->s->stages.len; i++) {
    Stage *x = lower_stage(L, i), *from = NULL;
    /* inlining copies a producer's value at every load of it: a chain of stages that each
     * read the one before 4 times grows 4-fold a stage (38 lines took 1.9 GB) */
    sizes[i] = inlined_size(L, x->op->value, sizes, &from);
    x->topo = i;
    x->done = false;
    if (sizes[i] >= MAX_INLINED) {
      diag_error(from ? from->attach_loc : x->loc,
                 "inlining makes stage '%s' an expression of more than %d operations: compute '%s' at the root "
                 "or at a loop (compute_root, compute_at) instead",
                 x->name, MAX_INLINED, from ? from->name : x->name);
      return false;
    }
    x->eff = inline_expr(L, x->op->value);
    x->scatter_eff = NULL;
    x->init_eff = inline_expr(L, x->op->init);
    if (x->op->scatter) {
      x->scatter_eff = xalloc(sizeof(Expr *) * (size_t)(x->op->ndim + 1));
      for (int d = 0; d < x->op->ndim; d++) x->scatter_eff[d] = inline_expr(L, x->op->scatter[d]);
    }
    if (!check_attach(x)) return false;
  }
  return true;
}
