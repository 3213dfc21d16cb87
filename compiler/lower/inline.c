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

bool pass_inline(LowerCtx *L) {
  for (int i = 0; i < L->s->stages.len; i++) {
    Stage *x = lower_stage(L, i);
    x->topo = i;
    x->done = false;
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
