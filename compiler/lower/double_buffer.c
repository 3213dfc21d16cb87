/* double_buffer.c — lowering pass `double-buffer` (TVM's InjectDoubleBuffer).
 *
 * A stage S computed at a serial loop `for (k, min, ext)` with double_buffer(S) gets a
 * second buffer S_1, and consecutive iterations of the loop alternate between the two:
 * iteration k fetches the copy for k + 1 into one buffer before it computes from the
 * other. The loop runs two iterations per trip, so that each half names its buffers:
 *
 *   S = F(min)                                   before the loop (if ext > 0)
 *   for (k_db, 0, (ext + 1) / 2)                 k = min + 2 * k_db
 *     barrier
 *     if (k + 1 < min + ext) S_1 = F(k + 1)
 *     body(k) reading S
 *     barrier
 *     if (k + 2 < min + ext) S = F(k + 2)
 *     if (k + 1 < min + ext) body(k + 1) reading S_1
 *
 * F is S's nest (its copy). On a GPU that is one barrier per iteration where one buffer
 * needs two, and the printer's analysis (target/gpu_source.c) adds none: nothing orders a
 * copy and the body beside it, which reads the other buffer. So the loads of the next
 * copy are issued before the body, and the compiler may overlap the two. (On CPUs the
 * barriers are not written: one thread runs the block.)
 *
 * With double_buffer(S, local) the copies made in the loop are marked (Stmt.prefetch):
 * the GPU printer loads them into registers where they stand and stores them after the
 * body beside them, so that the body's arithmetic hides the loads (target/gpu_source.c).
 *
 * The copies are made ahead of the body that precedes them, so F must read nothing that
 * the loop writes, and the body must not write S; both are errors at the step. With an
 * even constant extent the odd half needs no guard; the guard of the second copy stays
 * (the last trip has none to make). */
#include "lower.h"

#include <string.h>

#define DB_MAX 8 /* double-buffered stages at one loop */

typedef struct Db {
  Stage *stage[DB_MAX];
  Buffer *buf[DB_MAX], *alt[DB_MAX]; /* S and S_1 */
  Stmt *fetch[DB_MAX];               /* F: S's nest */
  int n;
} Db;

/* ---- buffers -------------------------------------------------------- */

/* A second buffer like B: its shape, scope and row padding. */
static Buffer *second_buffer(Buffer *b) {
  Buffer *n = ir_buffer(xprintf("%s_1", b->name), b->dtype, b->ndim, b->shape, b->scope, b->kind);
  n->op = b->op;
  n->pad = b->pad;
  return n;
}

/* ---- what a statement reads and writes ------------------------------ */

static bool stmt_loads(const Stmt *s, const Buffer *b) {
  if (!s) return false;
  if (sched_reads(s->min, b) || sched_reads(s->extent, b) || sched_reads(s->value, b) ||
      sched_reads(s->cond, b))
    return true;
  for (int i = 0; i < s->nargs; i++)
    if (sched_reads(s->args[i], b)) return true;
  for (int i = 0; s->kind == S_CALL && i < s->nin; i++)
    if (s->bufs[i] == b) return true;
  if (stmt_loads(s->body, b) || stmt_loads(s->els, b)) return true;
  for (int i = 0; i < s->n; i++)
    if (stmt_loads(s->stmts[i], b)) return true;
  return false;
}

/* The buffers S stores into (extern calls' outputs included), appended to OUT. */
static void stores_of(const Stmt *s, Vec *out) {
  if (!s) return;
  if (s->kind == S_STORE) vec_push(out, s->buf);
  for (int i = s->nin; s->kind == S_CALL && i < s->nbufs; i++) vec_push(out, s->bufs[i]);
  stores_of(s->body, out);
  stores_of(s->els, out);
  for (int i = 0; i < s->n; i++) stores_of(s->stmts[i], out);
}

static bool stores_into(const Stmt *s, const Buffer *b) {
  Vec w = {0};
  stores_of(s, &w);
  for (int i = 0; i < w.len; i++)
    if (w.data[i] == b) return true;
  return false;
}

/* ---- the loop's parts ----------------------------------------------- */

/* Is B the buffer of a stage of D (before or after vthreads, which may give it a copy
 * with one more dimension)? Its index in D, or -1. */
static int db_index(const Db *d, const Buffer *b) {
  for (int i = 0; i < d->n; i++)
    if (d->stage[i]->buf == b || (b->op && b->op == d->stage[i]->buf->op)) return i;
  return -1;
}

/* BODY without the allocations of D's stages: each one's nest (the statements at the
 * start of its allocation that store into it) goes to D->fetch, its buffer to D->buf.
 * The stages computed at a loop are allocations around the rest of its body, each
 * holding its nest and then the next (nests.c wrap_attached). */
static Stmt *take_fetches(Db *d, Stmt *s) {
  if (!s || (s->kind != S_ALLOC && s->kind != S_SEQ)) return s;
  if (s->kind == S_SEQ) { /* a stage's nest, then the allocations inside */
    if (!s->n) return s;
    Stmt *c = xalloc(sizeof *c);
    *c = *s;
    c->stmts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    memcpy(c->stmts, s->stmts, sizeof(Stmt *) * (size_t)s->n);
    c->stmts[s->n - 1] = take_fetches(d, s->stmts[s->n - 1]);
    return c;
  }
  int i = db_index(d, s->buf);
  if (i < 0) {
    Stmt *c = xalloc(sizeof *c);
    *c = *s;
    c->body = take_fetches(d, s->body);
    return c;
  }
  Stmt *b = s->body, **parts = b && b->kind == S_SEQ ? b->stmts : &b;
  int n = b && b->kind == S_SEQ ? b->n : 1, k = 0;
  while (k < n && stores_into(parts[k], s->buf)) k++;
  d->buf[i] = s->buf;
  d->fetch[i] = ir_seq(parts, k);
  return take_fetches(d, ir_seq(parts + k, n - k));
}

/* ---- the transformation --------------------------------------------- */

/* S (a fresh copy of a copy's nest) with its stores marked as made ahead (Stmt.prefetch),
 * when its stage asked for it (double_buffer(S, local)): the GPU printer then stages them
 * through registers. */
static Stmt *ahead(Stmt *s, bool mark) {
  if (!s || !mark) return s;
  if (s->kind == S_STORE) s->prefetch = true;
  ahead(s->body, mark);
  ahead(s->els, mark);
  for (int i = 0; i < s->n; i++) ahead(s->stmts[i], mark);
  return s;
}

static Stmt *at(Stmt *s, IrVar *v, Expr *k) { return ir_stmt_subst(s, &v, &k, 1); }

/* S under COND (NULL: always); NULL when S is. */
static Stmt *when(Expr *cond, Stmt *s) { return s && cond ? ir_if(cond, s, NULL) : s; }

/* The statements of V in order; NULL when there are none. */
static Stmt *group(const Vec *v) { return v->len ? ir_seq((Stmt **)v->data, v->len) : NULL; }

/* Can the copy of D's stage I be made ahead: does it read nothing that the loop (whose
 * body is REST plus the copies) writes, and does REST not write the stage? Diagnoses it. */
static bool reads_nothing_written(LowerCtx *L, const Db *d, int i, Stmt *rest) {
  Vec w = {0}; /* what the loop writes outside this copy (the copy's own inner stages are its own) */
  stores_of(rest, &w);
  for (int j = 0; j < d->n; j++)
    if (j != i) stores_of(d->fetch[j], &w);
  for (int j = 0; j < w.len; j++) {
    Buffer *b = w.data[j];
    if (b == d->buf[i] || !stmt_loads(d->fetch[i], b)) continue;
    diag_error(d->stage[i]->double_buffer, "double_buffer of '%s': its copy reads '%s', which loop "
               "'%s' writes, so the next iteration's copy cannot be made ahead",
               d->stage[i]->name, b->name, d->stage[i]->at_iv->name);
    L->ok = false;
    return false;
  }
  if (stores_into(rest, d->buf[i])) {
    diag_error(d->stage[i]->double_buffer, "double_buffer of '%s': loop '%s' writes it beside its "
               "copy; only a stage that the loop reads can be double-buffered", d->stage[i]->name,
               d->stage[i]->at_iv->name);
    L->ok = false;
    return false;
  }
  return true;
}

/* The loop of trips over LOOP's iterations (REST: its body without D's copies), each two
 * iterations: the next copies into the second buffers, body(k), the copies after it into
 * the first ones, body(k + 1) from the second (the sketch at the top). */
static Stmt *trips(Db *d, Stmt *loop, Stmt *rest, bool in_block) {
  IrVar *v = loop->var, *t = ir_newvar(xprintf("%s_db", loop->var->name), DT_I64);
  Expr *ext = loop->extent, *two_t = ir_mul(ir_int(2), ir_var(t));
  Expr *k0 = ir_add(loop->min, two_t), *k1 = ir_add(k0, ir_int(1)), *k2 = ir_add(k0, ir_int(2));
  int64_t e;
  Expr *g1 = ir_is_const(ext, &e) && e % 2 == 0 ? NULL : ir_bin(OP_LT, ir_add(two_t, ir_int(1)), ext);
  Expr *g2 = ir_bin(OP_LT, ir_add(two_t, ir_int(2)), ext);
  Vec next1 = {0}, next2 = {0};
  for (int i = 0; i < d->n; i++) {
    Buffer *one[1] = {d->buf[i]}, *other[1] = {d->alt[i]};
    bool mark = d->stage[i]->stage_local;
    vec_push(&next1, ahead(ir_stmt_buf_subst(at(d->fetch[i], v, k1), one, other, 1), mark));
    vec_push(&next2, ahead(at(d->fetch[i], v, k2), mark));
  }
  Stmt *odd = ir_stmt_buf_subst(at(rest, v, k1), d->buf, d->alt, d->n);
  /* The barrier at the top orders the previous trip's body(k - 1) (reading S_1) and copy
   * into S before this trip's copy into S_1 and body(k); the one after body(k) orders its
   * reads of S before the next copy into S, and the copy into S_1 before body(k + 1).
   * Both are unconditional: a barrier inside a guarded copy would not order what is
   * around it when the guard fails. */
  Stmt *top = in_block ? ir_barrier() : NULL, *half = in_block ? ir_barrier() : NULL;
  Stmt *trip[6] = {top, when(g1, group(&next1)), at(rest, v, k0), half, when(g2, group(&next2)), when(g1, odd)};
  Stmt *f = ir_for(t, ir_int(0), ir_floordiv(ir_add(ext, ir_int(1)), ir_int(2)), loop->for_kind, ir_seq(trip, 6));
  f->loc = loop->loc;
  return f;
}

/* LOOP, at which D's stages are computed, double-buffered: the first copies before the
 * trips (guarded when the loop may run no iteration), both buffers allocated around. */
static Stmt *double_buffer(LowerCtx *L, Db *d, Stmt *loop, bool in_block) {
  Stmt *rest = take_fetches(d, loop->body);
  for (int i = 0; i < d->n; i++) {
    if (!d->fetch[i]) {
      diag_error(d->stage[i]->double_buffer, "double_buffer of '%s': its copy is not at the top of "
                 "loop '%s' (another stage's nest holds it?)", d->stage[i]->name, d->stage[i]->at_iv->name);
      L->ok = false;
      return loop;
    }
    if (!reads_nothing_written(L, d, i, rest)) return loop;
  }
  Vec first = {0};
  for (int i = 0; i < d->n; i++) {
    d->alt[i] = second_buffer(d->buf[i]);
    vec_push(&first, at(d->fetch[i], loop->var, loop->min));
  }
  int64_t e;
  Expr *nonempty = ir_is_const(loop->extent, &e) && e > 0 ? NULL : ir_bin(OP_GT, loop->extent, ir_int(0));
  Stmt *s = ir_seq2(when(nonempty, group(&first)), trips(d, loop, rest, in_block));
  for (int i = d->n - 1; i >= 0; i--) {
    s = ir_alloc(d->alt[i], s);
    s = ir_alloc(d->buf[i], s);
    s->loc = d->stage[i]->op->loc;
  }
  return s;
}

/* S with every loop at which double-buffered stages are computed transformed, inner
 * loops first. IN_BLOCK: S is inside a blockIdx loop (a GPU kernel's, where barriers are). */
static Stmt *walk(LowerCtx *L, Stmt *s, bool in_block) {
  if (!s) return NULL;
  Stmt *c = xalloc(sizeof *c);
  *c = *s;
  bool inner = in_block || (s->kind == S_FOR && s->for_kind >= FOR_BLOCK_X && s->for_kind <= FOR_BLOCK_Z);
  c->body = walk(L, s->body, inner);
  c->els = walk(L, s->els, inner);
  if (s->n) {
    c->stmts = xalloc(sizeof(Stmt *) * (size_t)s->n);
    for (int i = 0; i < s->n; i++) c->stmts[i] = walk(L, s->stmts[i], inner);
  }
  if (s->kind != S_FOR) return c;
  Db d = {0};
  for (int i = 0; i < L->s->stages.len; i++) {
    Stage *x = lower_stage(L, i);
    if (!x->double_buffer.file || x->attach != ATTACH_AT || x->at_iv->loopvar != s->var) continue;
    if (d.n == DB_MAX) {
      diag_error(x->double_buffer, "double_buffer of '%s': more than %d double-buffered stages at "
                 "loop '%s'", x->name, DB_MAX, x->at_iv->name);
      L->ok = false;
      return c;
    }
    d.stage[d.n++] = x;
  }
  return d.n ? double_buffer(L, &d, c, in_block) : c;
}

bool pass_double_buffer(LowerCtx *L) {
  bool any = false;
  for (int i = 0; i < L->s->stages.len; i++)
    any = any || lower_stage(L, i)->double_buffer.file;
  if (any) L->fn->body = walk(L, L->fn->body, false);
  return L->ok;
}
