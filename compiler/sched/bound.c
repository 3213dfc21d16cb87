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

bool bnd_reads_data(const Expr *e) {
  if (!e) return false;
  if (e->kind == E_LOAD) return true;
  for (int i = 0; i < e->nargs; i++)
    if (bnd_reads_data(e->args[i])) return true;
  return bnd_reads_data(e->a) || bnd_reads_data(e->b) || bnd_reads_data(e->c);
}

/* A nest f of such min / max is monotone and the identity on FIRST..LAST, so f(t) <= f(FIRST)
 * = FIRST for t < FIRST and f(t) >= LAST past LAST; the checker proved f(t) inside, so f(t)
 * is t clamped. A bound that depends on R's vars, or does not reach the domain's end
 * (min(t, 5) over 0..9), is kept, and so is the clamp of an index read from data
 * (`clamp(i32(I[i]), 0, 63)`: the clamp's range is all that is known of it). */
Expr *bnd_unclamp(Expr *idx, Expr *first, Expr *last, const Relax *r) {
  for (int depth = 0; idx && depth < 64 && idx->kind == E_BIN && (idx->op == OP_MIN || idx->op == OP_MAX); depth++) {
    bool b_free = !range_mentions(idx->b, r), a_free = !range_mentions(idx->a, r);
    Expr *t = b_free ? idx->a : a_free ? idx->b : NULL, *c = b_free ? idx->b : idx->a;
    if (!t || bnd_reads_data(t) || !(idx->op == OP_MAX ? bnd_prove_le(c, first, r) : bnd_prove_le(last, c, r))) break;
    idx = t;
  }
  return idx;
}

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
