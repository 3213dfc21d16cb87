/* vthreads.c — lowering pass `vthreads` (TVM's InjectVirtualThread, the simple cases).
 *
 * A loop bound to vthread runs its iterations inside one thread: its body is pushed
 * through the loops and guards that do not depend on it, buffers allocated inside get one
 * copy per iteration (an outer dimension), and statements that depend on it are unrolled
 * once per iteration, interleaved (instruction-level parallelism instead of a serial loop).
 * A fetch that does not depend on it (a shared tile) runs once. The iterations of a
 * vthread loop touch disjoint memory (a data-parallel loop), so any interleaving is the
 * loop's meaning. */
#include "lower.h"

#include <string.h>

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
    nb->pad = b->pad;
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

bool pass_vthreads(LowerCtx *L) {
  if (backend_for(L->s->target)->allows_bind) L->fn->body = inject_vthreads(L->fn->body);
  return true;
}
