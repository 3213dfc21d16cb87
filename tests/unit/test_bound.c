/* test_bound.c — the arithmetic of bound inference (bound.c): affine normalization,
 * symbolic intervals, proofs; regions of compute_at'ed stages; the index relations of
 * split and fuse (pass down / pass up). */
#include "sched/sched_internal.h"
#include "unit.h"

#include <string.h>

static Expr *add(Expr *a, Expr *b) { return ir_bin(OP_ADD, a, b); }
static Expr *sub(Expr *a, Expr *b) { return ir_bin(OP_SUB, a, b); }
static Expr *mul(Expr *a, Expr *b) { return ir_bin(OP_MUL, a, b); }

/* E, once simplified, equals WANT up to a constant difference of zero. */
static bool same(Expr *e, Expr *want) {
  if (!e || !want) return e == want;
  Expr *d = bnd_simplify(ir_bin(OP_SUB, e, want));
  int64_t k;
  return ir_is_const(d, &k) && k == 0;
}

static bool is_const(Expr *e, int64_t want) {
  int64_t k;
  return ir_is_const(e, &k) && k == want;
}

static void test_simplify(void) {
  IrVar *x = ir_newvar("x", DT_I64), *y = ir_newvar("y", DT_I64);
  check("simplify: (x*4 + y) - x*4 is y", bnd_simplify(sub(add(mul(v(x), c(4)), v(y)), mul(v(x), c(4))))->kind == E_VAR);
  check("simplify: (x + 3)*2 - 6 is x*2", same(bnd_simplify(sub(mul(add(v(x), c(3)), c(2)), c(6))), mul(v(x), c(2))));
  check("simplify: x + 0 is x", bnd_simplify(add(v(x), c(0)))->kind == E_VAR);
  check("simplify: min(x + 1, x + 3) is x + 1", same(bnd_simplify(ir_bin(OP_MIN, add(v(x), c(1)), add(v(x), c(3)))), add(v(x), c(1))));
  check("simplify: max(x + 1, x + 3) is x + 3", same(bnd_simplify(ir_bin(OP_MAX, add(v(x), c(1)), add(v(x), c(3)))), add(v(x), c(3))));
  check("simplify: (x*8 + 4)/4 is x*2 + 1", same(bnd_simplify(ir_bin(OP_DIV, add(mul(v(x), c(8)), c(4)), c(4))), add(mul(v(x), c(2)), c(1))));
  check("simplify: (x*8 + 5)%4 is 1", is_const(bnd_simplify(ir_bin(OP_MOD, add(mul(v(x), c(8)), c(5)), c(4))), 1));
  check("simplify: (x*8 - 3)/4 floors", same(bnd_simplify(ir_bin(OP_DIV, sub(mul(v(x), c(8)), c(4)), c(4))), sub(mul(v(x), c(2)), c(1))));
  check("simplify: x + 1 < x + 2 is true", is_const(bnd_simplify(ir_bin(OP_LT, add(v(x), c(1)), add(v(x), c(2)))), 1));
  check("simplify: x*2 < x*2 is false", is_const(bnd_simplify(ir_bin(OP_LT, mul(v(x), c(2)), mul(c(2), v(x)))), 0));
  check("simplify: x*y stays", bnd_simplify(mul(v(x), v(y)))->kind == E_BIN);
  check("simplify: -(x - y) + x is y", bnd_simplify(add(ir_un(OP_NEG, sub(v(x), v(y))), v(x)))->kind == E_VAR);
}

static void test_interval(void) {
  IrVar *x = ir_newvar("x", DT_I64), *y = ir_newvar("y", DT_I64), *n = ir_newvar("N", DT_I64);
  Relax r = {0};
  relax_add(&r, y, c(4));
  Interval i = bnd_interval(add(mul(v(x), c(4)), v(y)), &r);
  check("interval: x*4 + y, y in [0,4) is [x*4, x*4 + 3]", same(i.min, mul(v(x), c(4))) && same(i.max, add(mul(v(x), c(4)), c(3))));
  relax_add(&r, x, v(n));
  i = bnd_interval(add(mul(v(x), c(4)), v(y)), &r);
  check("interval: x in [0,N) too gives [0, N*4 - 1]", is_const(i.min, 0) && same(i.max, sub(mul(v(n), c(4)), c(1))));
  i = bnd_interval(sub(c(10), v(y)), &r);
  check("interval: 10 - y is [7, 10]", is_const(i.min, 7) && is_const(i.max, 10));
  Relax q = {0};
  relax_add(&q, y, c(8));
  i = bnd_interval(ir_bin(OP_DIV, add(v(y), c(2)), c(4)), &q);
  check("interval: (y + 2)/4 is [0, 2]", is_const(i.min, 0) && is_const(i.max, 2));
  i = bnd_interval(ir_bin(OP_MOD, v(y), c(3)), &q);
  check("interval: y%3 is [0, 2]", is_const(i.min, 0) && is_const(i.max, 2));
  i = bnd_interval(ir_bin(OP_MOD, v(y), c(16)), &q);
  check("interval: y%16 with y < 8 is [0, 7]", is_const(i.min, 0) && is_const(i.max, 7));
  i = bnd_interval(ir_select(ir_bin(OP_LT, v(y), c(2)), v(y), add(v(y), c(10))), &q);
  check("interval: select is the union", is_const(i.min, 0) && is_const(i.max, 17));
  i = bnd_interval(mul(v(y), v(y)), &q);
  check("interval: y*y with constant bounds", is_const(i.min, 0) && is_const(i.max, 49));
  i = bnd_interval(mul(v(y), v(n)), &q);
  check("interval: y*N, y in [0,8), N a size (>= 0) is [0, N*7]", is_const(i.min, 0) && same(i.max, mul(v(n), c(7))));
  i = bnd_interval(mul(v(y), ir_load(ir_buffer("L", DT_I64, 1, (Expr *[]){c(4)}, SCOPE_GLOBAL, BUF_INPUT), (Expr *[]){c(0)})), &q);
  check("interval: y*L, L loaded, is unbounded", !i.min && !i.max);
  i = bnd_interval(v(x), &q);
  check("interval: a fixed var is a point", i.min && i.min->kind == E_VAR && i.min->var == x);
  check("prove: y <= 7", bnd_prove_le(v(y), c(7), &q));
  check("prove: not y <= 6", !bnd_prove_le(v(y), c(6), &q));
  check("prove: x*4 + y < x*4 + 8", bnd_prove_le(add(mul(v(x), c(4)), v(y)), add(mul(v(x), c(4)), c(7)), &q));
}

/* Compile SRC and return its first kernel. */
static Kernel *kernel(const char *src) {
  Ast *a = parse_string("test.tex", src);
  Program *p = a ? check_program(a, NULL, 0) : NULL;
  return p && p->nkernels ? p->kernels[0] : NULL;
}

static Schedule *build(Kernel *k, const char *steps) {
  Vec st = {0};
  if (!k || !parse_steps("steps", steps, &st)) return NULL;
  return sched_build(k, TARGET_LLVM, &st);
}

static Stmt *find_alloc(Stmt *s, const char *name) {
  if (!s) return NULL;
  if (s->kind == S_ALLOC && strcmp(s->buf->name, name) == 0) return s;
  Stmt *r = find_alloc(s->body, name);
  if (!r) r = find_alloc(s->els, name);
  for (int i = 0; i < s->n && !r; i++) r = find_alloc(s->stmts[i], name);
  return r;
}

static bool alloc_shape(LoweredFunc *f, const char *name, int64_t d0, int64_t d1) {
  Stmt *a = f ? find_alloc(f->body, name) : NULL;
  if (!a) return false;
  return is_const(a->buf->shape[0], d0) && (a->buf->ndim == 1 || is_const(a->buf->shape[1], d1));
}

static const char *chain =
    "const N = 30\n"
    "kernel ch(X: f32[N + 2], W: f32[3]) -> Y: f32[N] {\n"
    "  tensor P: f32[N + 2]\n  P[i] = X[i] * 2.0\n"
    "  tensor Q: f32[N]\n  Q[i] += P[i + r] * W[r]\n"
    "  Y[i] = Q[i] + 1.0\n}\n";

static const char *stencil =
    "const H = 20, W = 16\n"
    "kernel st(X: f32[H + 2, W + 2]) -> Y: f32[H, W] {\n"
    "  tensor P: f32[H + 2, W + 2]\n  P[h, w] = X[h, w] + 1.0\n"
    "  Y[h, w] = P[h, w] + P[h + 2, w + 1] + P[h + 1, w + 2]\n}\n";

static void test_regions(void) {
  Kernel *k = kernel(chain);
  check("regions: the test kernel checks", k != NULL);
  if (!k) return;
  LoweredFunc *f = sched_lower(build(k, "yo, yi = split(Y.i, 8)\ncompute_at(Q, Y, yo)\ncompute_at(P, Q, Q.i)"), NULL);
  check("regions: Q at yo (split 8) is 8 long", alloc_shape(f, "Q", 8, 0));
  check("regions: P at Q.i (3 taps) is 3 long", alloc_shape(f, "P", 3, 0));
  f = sched_lower(build(k, "yo, yi = split(Y.i, 8)\ncompute_at(Q, Y, yo)\ncompute_at(P, Y, yo)"), NULL);
  check("regions: P at yo covers 8 + 2 taps", alloc_shape(f, "P", 10, 0));
  f = sched_lower(build(k, "yo, yi = split(Y.i, 8)\ncompute_at(Q, Y, yo)\ncompute_at(P, Q, Q.r)"), NULL);
  check("regions: P at the reduction loop is 1 long", alloc_shape(f, "P", 1, 0));
  f = sched_lower(build(k, "yo, yi = split(Y.i, parts = 3)\ncompute_at(Q, Y, yo)"), NULL);
  check("regions: split by 3 parts gives 10", alloc_shape(f, "Q", 10, 0));
  k = kernel(stencil);
  f = sched_lower(build(k, "compute_at(P, Y, Y.h)"), NULL);
  check("regions: 2-D stencil at a row is 3 x 18", alloc_shape(f, "P", 3, 18));
  f = sched_lower(build(k, "ho, wo, hi, wi = tile(Y.h, Y.w, 4, 8)\ncompute_at(P, Y, wo)"), NULL);
  check("regions: 2-D stencil at a 4x8 tile is 6 x 10", alloc_shape(f, "P", 6, 10));
  f = sched_lower(build(k, "f = fuse(Y.h, Y.w)\nfo, fi = split(f, 16)\ncompute_at(P, Y, fo)"), NULL);
  check("regions: fused rows of 16: whole rows (3 x 18)", alloc_shape(f, "P", 3, 18));
}

/* Split and fuse: extents down, values up, tails. */
static void test_relations(void) {
  Kernel *k = kernel("kernel r(A: f32[10, 6]) -> B: f32[10, 6] {\n  B[i, j] = A[i, j]\n}\n");
  Schedule *s = build(k, "io, ii = split(B.i, 4)\nf = fuse(ii, B.j)\nfo, fi = split(f, parts = 5)");
  check("relations: schedule builds", s != NULL);
  if (!s) return;
  Stage *st = VEC_AT(s->stages, 0);
  for (int i = 0; i < st->nroot; i++) st->root[i]->ext = st->root[i]->dext;
  sched_pass_down(st);
  IterVar *io = VEC_AT(st->leaf, 0), *fo = VEC_AT(st->leaf, 1), *fi = VEC_AT(st->leaf, 2);
  check("relations: io has ceil(10/4) = 3", is_const(io->ext, 3));
  check("relations: fused ii*j is 24, in 5 parts of 5", is_const(fo->ext, 5) && is_const(fi->ext, 5));
  check("relations: the split of B.i has a tail", st->root[0]->tail);
  check("relations: 5 parts of 5 overrun the fused 24", ((Rel *)VEC_AT(st->rels, 2))->parent->tail);
  IrVar *a = ir_newvar("a", DT_I64), *b = ir_newvar("b", DT_I64), *cc = ir_newvar("c", DT_I64);
  io->val = v(a), fo->val = v(b), fi->val = v(cc);
  Vec g[2] = {{0}, {0}};
  sched_pass_up(st, g);
  Expr *f = add(mul(v(b), c(5)), v(cc));
  check("relations: B.i = a*4 + (b*5 + c)/6", same(st->root[0]->val, add(mul(v(a), c(4)), ir_bin(OP_DIV, f, c(6)))));
  check("relations: B.j = (b*5 + c)%6", same(st->root[1]->val, ir_bin(OP_MOD, f, c(6))));
  check("relations: two tail guards", g[0].len == 2 && g[1].len == 0);
}

/* Halide's clamp rule (bnd_unclamp): min / max whose bound reaches the domain 0..N-1 go,
 * others stay. */
static void test_unclamp(void) {
  IrVar *yo = ir_newvar("yo", DT_I64), *yi = ir_newvar("yi", DT_I64), *n = ir_newvar("N", DT_I64);
  Relax r = {0};
  relax_add(&r, yi, c(8));
  Expr *t = sub(add(mul(v(yo), c(8)), v(yi)), c(1)), *last = sub(v(n), c(1));
  Expr *cl = ir_bin(OP_MIN, ir_bin(OP_MAX, t, c(0)), last);
  check("unclamp: min(max(t, 0), N - 1) is t", bnd_unclamp(cl, c(0), last, &r) == t);
  check("unclamp: max(min(t, N - 1), 0) is t",
        bnd_unclamp(ir_bin(OP_MAX, ir_bin(OP_MIN, t, last), c(0)), c(0), last, &r) == t);
  check("unclamp: min(N + 3, t) is t (a bound past the end)", bnd_unclamp(ir_bin(OP_MIN, add(v(n), c(3)), t), c(0), last, &r) == t);
  Expr *m5 = ir_bin(OP_MIN, t, c(5));
  check("unclamp: min(t, 5) stays (5 may be before N - 1)", bnd_unclamp(m5, c(0), last, &r) == m5);
  Expr *m1 = ir_bin(OP_MAX, t, c(1));
  check("unclamp: max(t, 1) stays (1 is past the first element)", bnd_unclamp(m1, c(0), last, &r) == m1);
  Expr *mv = ir_bin(OP_MIN, t, add(v(yi), v(n)));
  check("unclamp: min(t, yi + N) stays (its bound is over the relaxed loop)", bnd_unclamp(mv, c(0), last, &r) == mv);
  check("unclamp: t alone is t", bnd_unclamp(t, c(0), last, &r) == t);
}

int main(void) {
  test_simplify();
  test_unclamp();
  test_interval();
  test_regions();
  test_relations();
  return failures != 0;
}
