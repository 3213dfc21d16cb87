/* bound.c — bound inference's names for the one analyzer (compiler/arith): ranges of
 * relaxed loops, simplification, intervals and proofs are arith's, so that bound inference,
 * the checker and the simplifier agree on every integer rule (wrapping included). */
#include "sched_internal.h"

void relax_add(Relax *r, IrVar *v, Expr *ext) { range_push(r, v, ir_int(0), ext); }

Expr *bnd_simplify(Expr *e) { return simplify(e, NULL); }

Expr *bnd_min(Expr *a, Expr *b) { return a && b ? simplify(ir_bin(OP_MIN, a, b), NULL) : NULL; }

Expr *bnd_max(Expr *a, Expr *b) { return a && b ? simplify(ir_bin(OP_MAX, a, b), NULL) : NULL; }

Interval bnd_interval(Expr *e, const Relax *r) { return interval_of(e, r); }

bool bnd_prove_le(Expr *a, Expr *b, const Relax *r) { return prove(ir_bin(OP_LE, a, b), r); }

bool bnd_loop_free(const Expr *e, const Kernel *k) {
  if (!e) return false;
  if (e->kind == E_VAR) {
    for (int i = 0; i < k->nsizes; i++)
      if (k->sizes[i] == e->var) return true;
    return false;
  }
  if (e->kind == E_LOAD) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!bnd_loop_free(e->args[i], k)) return false;
  return (!e->a || bnd_loop_free(e->a, k)) && (!e->b || bnd_loop_free(e->b, k)) &&
         (!e->c || bnd_loop_free(e->c, k));
}
