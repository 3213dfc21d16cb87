/* lower.h — private to compiler/lower/: the state that lowering's passes share.
 *
 * sched_lower (lower.c) runs the passes of its table in order; each pass is a function
 * in its own file, reads and writes a LowerCtx, and returns false after a diagnostic.
 * Passes before `nests` work on the schedule's stages (sched_internal.h); from `nests` on
 * FN->body holds the loop IR, and `flatten` adds FN->flat. */
#ifndef LOWER_H
#define LOWER_H
#include "sched/sched_internal.h"

typedef struct LowerCtx {
  Schedule *s;
  Kernel *k;
  const Options *o; /* may be NULL */
  Vec loopvars;     /* IrVars already used as loop vars: a second use gets a fresh var */
  LoweredFunc *fn;  /* NULL before nests */
  bool ok;
} LowerCtx;

static inline Stage *lower_stage(LowerCtx *L, int i) { return VEC_AT(L->s->stages, i); }

/* inline.c: every stage's value with inlined producers substituted (topological). */
bool pass_inline(LowerCtx *L);
/* bounds.c: consumers before producers, each stage's root ranges, buffer, loop vars,
 * root values and guards (bound inference for stages computed at a loop). */
bool pass_bounds(LowerCtx *L);
/* nests.c: the attach tree from the root stages down as one loop nest, allocations at
 * attach points, reduction inits before the outermost reduction loop. Makes L->fn. */
bool pass_nests(LowerCtx *L);
/* vthreads.c: loops bound to vthread run inside one thread (GPU targets). */
bool pass_vthreads(LowerCtx *L);
/* double_buffer.c: loops at which double_buffer stages are computed run two iterations
 * per trip over two buffers, each fetching the next iteration's copy ahead of its body. */
bool pass_double_buffer(LowerCtx *L);
/* tails.c: on CPU targets, loop bodies versioned so that full tiles run without the
 * guards and border selects that only their tail needs. */
bool pass_tails(LowerCtx *L);
/* flatten.c: FN->flat, FN->body with every access by one row-major offset. */
bool pass_flatten(LowerCtx *L);

/* E with each root iter var of X replaced by its value X->full (bounds.c). */
Expr *lower_root_subst(Stage *x, Expr *e);
/* A copy of E's node with F applied to each index of a load (inline.c). */
Expr **lower_map_args(LowerCtx *L, Expr *e, Expr *(*f)(LowerCtx *, Expr *));
#endif
