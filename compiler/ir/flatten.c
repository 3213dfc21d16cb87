/* flatten.c — the loop IR with every load and store by one row-major offset (what the
 * lowering pass `flatten`, compiler/lower/flatten.c, leaves in LoweredFunc.flat).
 *
 * FN->flat is FN->body with each access buf[i0, i1, ..., in] (n + 1 == buf->ndim)
 * rewritten as buf[i0*(s1*...*sn) + ... + i(n-1)*sn + in], s the buffer's shape: the
 * same Buffer, one index (a 0-d buffer's offset is 0). A buffer with rows padded by
 * storage_align (Buffer.pad) uses the row pitch sn + pad in place of sn. The back ends emit FN->flat; the
 * readable FN->body stays what `--emit ir` prints and what the interpreter runs, so that
 * an index outside its dimension is caught there even when its offset is in range. */
#include "texc.h"

static Expr *flat_expr(Expr *e);

/* The row-major offset of B[ARGS]: i0*stride0 + i1*stride1 + ... + in, each stride the
 * product of the extents after its dimension (folded when they are constants). */
static Expr *offset(Buffer *b, Expr **args) {
  int n = b->ndim;
  Expr **stride = xalloc(sizeof(Expr *) * (size_t)(n + 1));
  for (int d = n - 1; d >= 0; d--) {
    Expr *ext = d + 1 == n - 1 && b->pad ? ir_add(b->shape[d + 1], ir_int(b->pad)) : d + 1 < n ? b->shape[d + 1] : NULL;
    stride[d] = d == n - 1 ? NULL : stride[d + 1] ? ir_mul(stride[d + 1], ext) : ext;
  }
  Expr *off = NULL;
  for (int d = 0; d < n; d++) {
    Expr *i = flat_expr(args[d]);
    if (stride[d]) i = ir_mul(i, stride[d]);
    off = off ? ir_add(off, i) : i;
  }
  return off ? off : ir_int(0);
}

static Expr **one(Expr *off) {
  Expr **a = xalloc(sizeof(Expr *) * 2);
  a[0] = off;
  return a;
}

static Expr *flat_expr(Expr *e) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  Expr *n = xalloc(sizeof *n);
  *n = *e;
  if (e->kind == E_LOAD) {
    n->args = one(offset(e->buf, e->args));
    n->nargs = 1;
    return n;
  }
  n->a = flat_expr(e->a);
  n->b = flat_expr(e->b);
  n->c = flat_expr(e->c);
  if (e->nargs) {
    n->args = xalloc(sizeof(Expr *) * (size_t)(e->nargs + 1));
    for (int i = 0; i < e->nargs; i++) n->args[i] = flat_expr(e->args[i]);
  }
  return n;
}

Stmt *ir_flatten(const Stmt *s) {
  if (!s) return NULL;
  Stmt *n = xalloc(sizeof *n);
  *n = *s;
  n->min = flat_expr(s->min);
  n->extent = flat_expr(s->extent);
  n->cond = flat_expr(s->cond);
  n->value = flat_expr(s->value);
  if (s->kind == S_STORE) {
    n->args = one(offset(s->buf, s->args));
    n->nargs = 1;
  }
  n->body = ir_flatten(s->body);
  n->els = ir_flatten(s->els);
  if (s->n) {
    n->stmts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    for (int i = 0; i < s->n; i++) n->stmts[i] = ir_flatten(s->stmts[i]);
  }
  return n;
}

Stmt *ir_flat_body(const LoweredFunc *fn) { return fn->flat ? fn->flat : ir_flatten(fn->body); }
