/* tails.c — full tiles without their guards (TVM's LoopPartition, Halide's partition
 * loops, done by versioning).
 *
 * A split whose factor does not divide its extent guards every statement of the tile
 * (`if (io*6 + i < 1024)`), and an inlined border reads through a select
 * (`select(0 <= y - 1, X[y - 1], 0)`). Inside a register tile such a test on every
 * element keeps the accumulators out of registers and the loads from being vectors,
 * although it fails only in the last tile. So, for the body B of a CPU loop (serial or
 * parallel), each condition c of an `if` or a select inside B that tests a vectorized or
 * unrolled loop (in a plain loop a test costs a branch, and the IR stays as written) is
 * widened over B's own loops: c* is the condition, over the loops outside B only, that c
 * holds for every value of the loops inside (`io*6 + 5 < 1024` for the guard above). When c* is neither
 * always true nor always false there, B becomes
 *
 *     if (c1* && c2* ...) B with c1, c2 ... true    (the full tiles: no test inside)
 *     else B                                        (the tail, as it was)
 *
 * at the outermost loop where this is possible, and again inside both versions for the
 * conditions left (at most MAX_DEPTH versions deep, so the code grows at most 2^4-fold).
 *
 * Integers wrap: c* is only used when c's operands (and their difference, when both vary)
 * and c*'s never wrap over the loops' ranges (arith_never_wraps), so their values in the generated code
 * are the mathematical ones the intervals speak of. GPU targets are left alone (a
 * barrier in a body must stay where every thread of the block reaches it). */
#include "lower.h"

#include <stdlib.h>

enum { MAX_DEPTH = 4, MAX_TAKEN = 8 };

typedef struct Tails {
  RangeMap all; /* ranges of every loop around the statement being walked */
  int nouter;   /* all.r[0..nouter): the loops outside the body being versioned */
  Vec done;     /* conjuncts an outer version took (its tail keeps them as they are) */
  int depth;    /* versions around the current statement */
  Vec tile;     /* vars of the vectorized and unrolled loops around, while collecting */
} Tails;

/* The conditions a version could take, one entry per occurrence: the conjunct in the
 * tree (identity: the pointer; a node may occur at several places) and c*, its
 * widening over the body's loops at that place, or NULL when it has none. */
typedef struct Cands {
  Vec conj, wide;
} Cands;

static bool in_vec(const Vec *v, const void *p) {
  for (int i = 0; i < v->len; i++)
    if (VEC_AT(*v, i) == p) return true;
  return false;
}

/* c* for the conjunct E (an integer comparison) over the loops in t->all past nouter,
 * or NULL when there is none that can be trusted. */
static Expr *widen(const Tails *t, Expr *e) {
  if (e->kind != E_BIN || e->op < OP_LT || e->op > OP_GE || !dtype_is_int(e->a->dtype))
    return NULL;
  RangeMap inner = {t->all.r + t->nouter, t->all.n - t->nouter, 0};
  RangeMap outer = {t->all.r, t->nouter, 0};
  bool va = range_mentions(e->a, &inner), vb = range_mentions(e->b, &inner);
  if (!va && !vb) return NULL; /* nothing to widen: simplify's job */
  if (!arith_never_wraps(e->a, &t->all) || !arith_never_wraps(e->b, &t->all)) return NULL;
  /* a < b for every inner value: max(a) < b when only a varies, a < min(b) when only b
   * does, else max(a - b) < 0 (and the mirror images for > and >=). */
  bool upper = e->op == OP_LT || e->op == OP_LE;
  Expr *a = e->a, *b = e->b;
  if (va && vb) {
    a = ir_bin(OP_SUB, e->a, e->b);
    b = ir_int(0);
    if (!arith_never_wraps(a, &t->all)) return NULL;
  }
  if (va) {
    Interval iv = interval_of(a, &inner);
    a = upper ? iv.max : iv.min;
  } else {
    Interval iv = interval_of(b, &inner);
    b = upper ? iv.min : iv.max;
  }
  if (!a || !b || range_mentions(a, &inner) || range_mentions(b, &inner)) return NULL;
  if (!arith_never_wraps(a, &outer) || !arith_never_wraps(b, &outer)) return NULL;
  return simplify(ir_bin((BinOp)e->op, a, b), &outer);
}

static void add_conds(Tails *t, Cands *c, Expr *cond) {
  if (!cond) return;
  if (cond->kind == E_BIN && cond->op == OP_AND) {
    add_conds(t, c, cond->a);
    add_conds(t, c, cond->b);
    return;
  }
  if (in_vec(&t->done, cond)) return;
  bool in_tile = false; /* a test in a plain loop costs a branch: left to LLVM */
  for (int i = 0; i < t->tile.len && !in_tile; i++) in_tile = ir_uses_var(cond, VEC_AT(t->tile, i));
  if (!in_tile) return;
  vec_push(&c->conj, cond);
  vec_push(&c->wide, widen(t, cond));
}

static void collect_expr(Tails *t, Cands *c, Expr *e) {
  if (!e) return;
  if (e->kind == E_SELECT) add_conds(t, c, e->a);
  collect_expr(t, c, e->a);
  collect_expr(t, c, e->b);
  collect_expr(t, c, e->c);
  for (int i = 0; i < e->nargs; i++) collect_expr(t, c, e->args[i]);
}

/* Every condition in S that a version of the body could take; loops inside push their
 * ranges onto t->all for the widening. */
static void collect(Tails *t, Cands *c, Stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case S_FOR: {
    bool tile = s->for_kind == FOR_VECTORIZE || s->for_kind == FOR_UNROLL;
    if (tile) vec_push(&t->tile, s->var);
    range_push(&t->all, s->var, s->min, s->extent);
    collect(t, c, s->body);
    range_pop(&t->all);
    if (tile) t->tile.len--;
    return;
  }
  case S_IF:
    add_conds(t, c, s->cond);
    collect(t, c, s->body);
    collect(t, c, s->els);
    return;
  case S_STORE:
    for (int i = 0; i < s->nargs; i++) collect_expr(t, c, s->args[i]);
    collect_expr(t, c, s->value);
    return;
  case S_ALLOC: collect(t, c, s->body); return;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) collect(t, c, s->stmts[i]);
    return;
  default: return;
  }
}

/* ---- the full version: the chosen conjuncts replaced by true ------------- */

typedef Vec Drop; /* the conjuncts that become true */

static bool dropped(const Drop *d, const Expr *e) { return in_vec(d, e); }

/* COND without the dropped conjuncts (true when none is left). */
static Expr *drop_cond(const Drop *d, Expr *cond) {
  if (dropped(d, cond)) return ir_const(DT_BOOL, 1);
  if (cond->kind != E_BIN || cond->op != OP_AND) return cond;
  Expr *a = drop_cond(d, cond->a), *b = drop_cond(d, cond->b);
  if (a == cond->a && b == cond->b) return cond;
  int64_t v;
  if (ir_is_const(a, &v) && v) return b;
  if (ir_is_const(b, &v) && v) return a;
  return ir_bin(OP_AND, a, b);
}

static Expr *drop_expr(const Drop *d, Expr *e) {
  if (!e) return NULL;
  Expr *a = drop_expr(d, e->a), *b = drop_expr(d, e->b), *c = drop_expr(d, e->c);
  if (e->kind == E_SELECT) {
    Expr *cond = drop_cond(d, a);
    int64_t v;
    if (ir_is_const(cond, &v) && v) return b;
    a = cond;
  }
  bool same = a == e->a && b == e->b && c == e->c;
  Expr **args = e->args;
  for (int i = 0; i < e->nargs; i++) {
    Expr *x = drop_expr(d, e->args[i]);
    if (x == e->args[i]) continue;
    if (args == e->args) {
      args = xalloc(sizeof(Expr *) * (size_t)e->nargs);
      for (int j = 0; j < e->nargs; j++) args[j] = e->args[j];
    }
    args[i] = x;
  }
  if (same && args == e->args) return e;
  Expr *n = xalloc(sizeof *n);
  *n = *e;
  n->a = a;
  n->b = b;
  n->c = c;
  n->args = args;
  return n;
}

static Stmt *drop_stmt(const Drop *d, Stmt *s) {
  if (!s) return NULL;
  Stmt *c = xalloc(sizeof *c);
  *c = *s;
  switch (s->kind) {
  case S_FOR:
  case S_ALLOC: c->body = drop_stmt(d, s->body); break;
  case S_IF:
    c->cond = drop_cond(d, s->cond);
    c->body = drop_stmt(d, s->body);
    c->els = drop_stmt(d, s->els);
    break;
  case S_STORE:
    c->args = xalloc(sizeof(Expr *) * (size_t)(s->nargs ? s->nargs : 1));
    for (int i = 0; i < s->nargs; i++) c->args[i] = drop_expr(d, s->args[i]);
    c->value = drop_expr(d, s->value);
    break;
  case S_SEQ:
    c->stmts = xalloc(sizeof(Stmt *) * (size_t)(s->n ? s->n : 1));
    for (int i = 0; i < s->n; i++) c->stmts[i] = drop_stmt(d, s->stmts[i]);
    break;
  default: break;
  }
  return c;
}

/* ---- the walk ------------------------------------------------------------ */

static Stmt *walk(Tails *t, Stmt *s);

/* B, the body of a loop whose range is the last of t->all, versioned on the conditions
 * whose widening is not decided there; then the walk goes on inside each version. */
static Stmt *version(Tails *t, Stmt *b) {
  if (t->depth >= MAX_DEPTH) return walk(t, b);
  int saved = t->nouter;
  t->nouter = t->all.n;
  Cands c = {0};
  collect(t, &c, b);
  t->nouter = saved;
  RangeMap outer = {t->all.r, t->all.n, 0};
  /* A conjunct is taken when every occurrence has a widening that is not always false
   * here; the version's condition is the widenings that are not always true. */
  Drop take = {0};
  Vec wides = {0};
  for (int i = 0; i < c.conj.len; i++) {
    const Expr *conj = VEC_AT(c.conj, i);
    bool ok = !in_vec(&take, conj);
    for (int j = 0; j < c.conj.len && ok; j++) {
      Expr *w = VEC_AT(c.wide, j);
      int64_t v;
      if (VEC_AT(c.conj, j) == conj)
        ok = w && (ir_is_const(w, &v) ? v != 0 : !prove(ir_un(OP_NOT, w), &outer));
    }
    if (!ok || take.len == MAX_TAKEN) continue;
    vec_push(&take, (void *)conj);
    for (int j = 0; j < c.conj.len; j++) {
      Expr *w = VEC_AT(c.wide, j);
      if (VEC_AT(c.conj, j) != conj || ir_is_const(w, NULL) || prove(w, &outer)) continue;
      bool seen = false;
      for (int k = 0; k < wides.len && !seen; k++) seen = ir_equal(VEC_AT(wides, k), w);
      if (!seen) vec_push(&wides, w);
    }
  }
  if (!take.len) return walk(t, b);
  Stmt *full = drop_stmt(&take, b);
  if (!wides.len) return walk(t, full); /* every taken conjunct always holds here */
  Expr *cond = VEC_AT(wides, 0);
  for (int j = 1; j < wides.len; j++) cond = ir_bin(OP_AND, cond, VEC_AT(wides, j));
  t->depth++;
  full = walk(t, full);
  int ndone = t->done.len;
  for (int i = 0; i < take.len; i++) vec_push(&t->done, VEC_AT(take, i));
  Stmt *tail = walk(t, b);
  t->done.len = ndone;
  t->depth--;
  return ir_if(cond, full, tail);
}

static Stmt *walk(Tails *t, Stmt *s) {
  if (!s) return NULL;
  Stmt *c;
  switch (s->kind) {
  case S_FOR:
    /* Vectorized and unrolled loops are the tile itself: versions go around them. */
    if (s->for_kind != FOR_SERIAL && s->for_kind != FOR_PARALLEL) return s;
    c = xalloc(sizeof *c);
    *c = *s;
    range_push(&t->all, s->var, s->min, s->extent);
    c->body = version(t, s->body);
    range_pop(&t->all);
    return c;
  case S_IF:
    c = xalloc(sizeof *c);
    *c = *s;
    c->body = walk(t, s->body);
    c->els = walk(t, s->els);
    return c;
  case S_ALLOC:
    c = xalloc(sizeof *c);
    *c = *s;
    c->body = walk(t, s->body);
    return c;
  case S_SEQ:
    c = xalloc(sizeof *c);
    *c = *s;
    c->stmts = xalloc(sizeof(Stmt *) * (size_t)(s->n ? s->n : 1));
    for (int i = 0; i < s->n; i++) c->stmts[i] = walk(t, s->stmts[i]);
    return c;
  default: return s;
  }
}

/* ---- guarded stores to the function's own buffers ------------------------ */

/* `if (c) B[idx] = v` (no else) inside a vectorized loop whose lanes C tests, where B is
 * allocated in the function and IDX lies in B's
 * shape for every value of the loops around (RANGES; proved without wrapping) becomes
 * `B[idx] = c ? v : B[idx]`: the same values (a lane whose test fails stores what was
 * there), but the store is no longer under a lane mask. A tail tile's accumulators
 * (cache_write's local tile, which covers the tile's every lane) were masked loads and
 * stores in memory at every step, which CPUs without mask registers (AVX2, NEON) do
 * slowly and which kept them out of registers everywhere (a 28 x 28 x 58 convolution in
 * AVX2 code). V's loads stay guarded: the backends load a select's branch only for the
 * lanes that take it. */
static bool in_shape(const Stmt *st, const RangeMap *ranges) {
  for (int d = 0; d < st->nargs; d++) {
    int64_t lo, hi, ext;
    if (!ir_is_const(st->buf->shape[d], &ext) || !arith_never_wraps(st->args[d], ranges) ||
        !const_bounds(st->args[d], ranges, &lo, &hi) || lo < 0 || hi >= ext)
      return false;
  }
  return st->nargs == st->buf->ndim;
}

static Stmt *guarded_locals(Stmt *s, RangeMap *ranges, Vec *allocs, IrVar *lane) {
  if (!s) return NULL;
  Stmt *c = xalloc(sizeof *c);
  *c = *s;
  switch (s->kind) {
  case S_FOR:
    range_push(ranges, s->var, s->min, s->extent);
    c->body = guarded_locals(s->body, ranges, allocs, s->for_kind == FOR_VECTORIZE ? s->var : lane);
    range_pop(ranges);
    return c;
  case S_ALLOC:
    vec_push(allocs, s->buf);
    c->body = guarded_locals(s->body, ranges, allocs, lane);
    allocs->len--;
    return c;
  case S_IF: {
    const Stmt *st = s->body; /* a test of the lanes (elsewhere a branch: left as written) */
    if (!s->els && lane && ir_uses_var(s->cond, lane) && st && st->kind == S_STORE && !st->atomic && !st->prefetch &&
        in_vec(allocs, st->buf) && in_shape(st, ranges))
      return ir_store(st->buf, st->args, ir_select(s->cond, st->value, ir_load(st->buf, st->args)));
    c->body = guarded_locals(s->body, ranges, allocs, lane);
    c->els = guarded_locals(s->els, ranges, allocs, lane);
    return c;
  }
  case S_SEQ:
    c->stmts = xalloc(sizeof(Stmt *) * (size_t)(s->n ? s->n : 1));
    for (int i = 0; i < s->n; i++) c->stmts[i] = guarded_locals(s->stmts[i], ranges, allocs, lane);
    return c;
  default: return c;
  }
}

Stmt *tails_stmt(Stmt *s) {
  Tails t = {0};
  Stmt *v = walk(&t, s);
  RangeMap ranges = {0};
  Vec allocs = {0};
  return simplify_stmt(guarded_locals(v, &ranges, &allocs, NULL));
}

bool pass_tails(LowerCtx *L) {
  if (backend_for(L->s->target)->device != DEVICE_CPU) return true;
  if (getenv("TEXC_NO_TAILS")) return true;
  L->fn->body = tails_stmt(L->fn->body);
  return true;
}
