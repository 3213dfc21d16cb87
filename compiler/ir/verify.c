/* verify.c — structural checks of a lowered function, run between passes.
 *
 * Checks: every variable is a size or bound by an enclosing For (and no For rebinds a
 * variable that is still bound); loads and stores name a parameter or an enclosing
 * allocation and have ndim integer indices (one, the offset, in the flat body); a
 * store's value has the buffer's dtype; binary operands agree in dtype; conditions are
 * bool; loop bounds are integers; barriers appear only inside a GPU block loop. Each
 * problem is printed (an internal error: the IR came from the compiler, not the user). */
#include "texc.h"

/* What is in scope while walking: bound variables and visible buffers. */
typedef struct Scope_ {
  const LoweredFunc *fn;
  Vec vars;     /* IrVar* */
  Vec bufs;     /* Buffer* */
  int in_block; /* enclosing blockIdx loops */
  int errors;
  const char *where;
  bool flat;    /* checking fn->flat: one index per access */
} VScope;

static void fail(VScope *s, const char *fmt, const char *arg) {
  if (s->errors++ < 20) {
    fprintf(stderr, "ir_verify: %s%s: ", s->fn->name, s->flat ? " (flat)" : "");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (in %s)\n", s->where ? s->where : "?");
  }
}

static bool has(const Vec *v, const void *p) {
  for (int i = 0; i < v->len; i++)
    if (v->data[i] == p) return true;
  return false;
}

static void pop(Vec *v) { v->len--; }

static void check_expr(VScope *s, const Expr *e);

static void check_indices(VScope *s, const Buffer *b, Expr **args, int nargs) {
  if (!has(&s->bufs, b)) fail(s, "buffer %s is used outside its allocation", b->name);
  if (nargs != (s->flat ? 1 : b->ndim)) fail(s, "%s is indexed with the wrong number of indices", b->name);
  for (int i = 0; i < nargs; i++) {
    if (!args[i]) {
      fail(s, "%s has a missing index", b->name);
      continue;
    }
    if (!dtype_is_int(args[i]->dtype)) fail(s, "an index of %s is not an integer", b->name);
    check_expr(s, args[i]);
  }
}

static void check_bin(VScope *s, const Expr *e) {
  if (!e->a || !e->b) {
    fail(s, "binary %s has a missing operand", binop_names[e->op]);
    return;
  }
  bool logic = e->op == OP_AND || e->op == OP_OR;
  if (logic && (e->a->dtype != DT_BOOL || e->b->dtype != DT_BOOL))
    fail(s, "%s of non-bool operands", binop_names[e->op]);
  if (!logic && e->a->dtype != e->b->dtype)
    fail(s, "operands of %s differ in dtype", binop_names[e->op]);
  check_expr(s, e->a);
  check_expr(s, e->b);
}

static void check_expr(VScope *s, const Expr *e) {
  if (!e) {
    fail(s, "%s", "missing expression");
    return;
  }
  switch (e->kind) {
  case E_INT:
  case E_FLOAT: break;
  case E_VAR:
    if (!has(&s->vars, e->var)) fail(s, "variable %s is not bound here", e->var->name);
    break;
  case E_LOAD: check_indices(s, e->buf, e->args, e->nargs); break;
  case E_BIN: check_bin(s, e); break;
  case E_UN: check_expr(s, e->a); break;
  case E_SELECT:
    if (e->a && e->a->dtype != DT_BOOL) fail(s, "%s", "select condition is not bool");
    if (e->b && e->c && e->b->dtype != e->c->dtype) fail(s, "%s", "select arms differ in dtype");
    check_expr(s, e->a);
    check_expr(s, e->b);
    check_expr(s, e->c);
    break;
  case E_CALL:
    for (int i = 0; i < e->nargs; i++) check_expr(s, e->args[i]);
    break;
  case E_CAST: check_expr(s, e->a); break;
  default: fail(s, "%s", "unknown expression kind");
  }
}

static void check_stmt(VScope *s, const Stmt *st);

static void check_for(VScope *s, const Stmt *st) {
  s->where = xprintf("loop %s", st->var->name);
  check_expr(s, st->min);
  check_expr(s, st->extent);
  if ((st->min && !dtype_is_int(st->min->dtype)) || (st->extent && !dtype_is_int(st->extent->dtype)))
    fail(s, "loop %s has non-integer bounds", st->var->name);
  if (has(&s->vars, st->var)) fail(s, "loop variable %s is bound twice", st->var->name);
  bool block = st->for_kind >= FOR_BLOCK_X && st->for_kind <= FOR_BLOCK_Z;
  vec_push(&s->vars, st->var);
  s->in_block += block;
  check_stmt(s, st->body);
  s->in_block -= block;
  pop(&s->vars);
}

static void check_store(VScope *s, const Stmt *st) {
  s->where = xprintf("store to %s", st->buf->name);
  check_indices(s, st->buf, st->args, st->nargs);
  check_expr(s, st->value);
  if (st->value && st->value->dtype != st->buf->dtype)
    fail(s, "a %s value is stored to a buffer of another dtype", dtype_name(st->value->dtype));
}

static void check_stmt(VScope *s, const Stmt *st) {
  if (!st) return;
  switch (st->kind) {
  case S_FOR: check_for(s, st); break;
  case S_STORE: check_store(s, st); break;
  case S_ALLOC:
    s->where = xprintf("allocate %s", st->buf->name);
    for (int d = 0; d < st->buf->ndim; d++) check_expr(s, st->buf->shape[d]);
    vec_push(&s->bufs, st->buf);
    check_stmt(s, st->body);
    pop(&s->bufs);
    break;
  case S_IF:
    s->where = "if";
    check_expr(s, st->cond);
    if (st->cond && st->cond->dtype != DT_BOOL) fail(s, "%s", "if condition is not bool");
    check_stmt(s, st->body);
    check_stmt(s, st->els);
    break;
  case S_SEQ:
    for (int i = 0; i < st->n; i++) check_stmt(s, st->stmts[i]);
    break;
  case S_CALL:
    s->where = xprintf("extern %s", st->callee);
    for (int i = 0; i < st->nbufs; i++)
      if (!has(&s->bufs, st->bufs[i])) fail(s, "buffer %s is used outside its allocation", st->bufs[i]->name);
    for (int i = 0; i < st->nargs; i++) check_expr(s, st->args[i]);
    if (s->in_block) fail(s, "%s", "an extern call inside a GPU kernel");
    break;
  case S_BARRIER:
    s->where = "barrier";
    if (!s->in_block) fail(s, "%s", "a barrier outside any blockIdx loop");
    break;
  default: fail(s, "%s", "unknown statement kind");
  }
}

static int verify_body(const LoweredFunc *fn, const Stmt *body, bool flat) {
  VScope s = {.fn = fn, .flat = flat};
  for (int i = 0; i < fn->nsizes; i++) vec_push(&s.vars, fn->sizes[i]);
  for (int i = 0; i < fn->nparams; i++) {
    const Buffer *b = fn->params[i];
    s.where = xprintf("parameter %s", b->name);
    for (int d = 0; d < b->ndim; d++) check_expr(&s, b->shape[d]);
    vec_push(&s.bufs, (void *)b);
  }
  check_stmt(&s, body);
  if (s.errors > 20) fprintf(stderr, "ir_verify: %s: %d more problems\n", fn->name, s.errors - 20);
  return s.errors;
}

bool ir_verify(const LoweredFunc *fn) {
  int errors = verify_body(fn, fn->body, false);
  if (fn->flat) errors += verify_body(fn, fn->flat, true);
  return errors == 0;
}
