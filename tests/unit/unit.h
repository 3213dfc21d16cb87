/* unit.h — what the C unit tests share: one `ok - NAME` / `not ok - NAME` line per check
 * (tests/run.sh counts them), a kernel from source and steps applied to a schedule, IR
 * shorthands, a seeded xorshift generator, and floor
 * division written independently of ir/eval.c, as the oracle the randomized tests use. */
#ifndef UNIT_H
#define UNIT_H
#include "texc.h"

static int failures;

static inline void check(const char *name, bool ok) {
  printf("%s - %s\n", ok ? "ok" : "not ok", name);
  if (!ok) failures++;
}

static inline Expr *c(int64_t k) { return ir_int(k); }
static inline Expr *v(IrVar *x) { return ir_var(x); }
static inline Expr *bin(BinOp op, Expr *a, Expr *b) { return ir_bin(op, a, b); }

/* The generator's state: a test sets its own seed before the first draw. */
static uint64_t unit_rng = 1;
static inline uint64_t rnd(void) {
  unit_rng ^= unit_rng << 13;
  unit_rng ^= unit_rng >> 7;
  unit_rng ^= unit_rng << 17;
  return unit_rng;
}
static inline int64_t rint_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static inline int64_t fdiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Kernel NAME of SRC (checked), or NULL. */
static inline Kernel *unit_kernel(const char *src, const char *name) {
  Ast *a = parse_string("test.tex", src);
  Program *p = a ? check_program(a, NULL, 0) : NULL;
  return p ? program_kernel(p, name) : NULL;
}

/* Apply STEPS (text) to S one by one; false at the first that fails. */
static inline bool unit_apply(Schedule *s, const char *steps) {
  Vec st = {0};
  if (!parse_steps("steps", steps, &st)) return false;
  for (int i = 0; i < st.len; i++)
    if (!sched_step(s, VEC_AT(st, i))) return false;
  return true;
}
#endif
