/* gpu_check.c — checks of a lowered GPU function against what a device can run.
 *
 * Every store must be under a blockIdx loop (and no plain loop may enclose a blockIdx
 * loop: the host does not loop around launches), a kernel's threads per block and shared
 * memory must fit the device. Diagnostics point at the step that made the offending loop
 * (Stmt.loc), else at the statement that defines the stage.
 */
#include "texc.h"

#include <inttypes.h>

/* What one launch uses, found by a walk of its subtree. */
typedef struct Use {
  RangeMap ranges;
  int in_block;
  int64_t threads[3];     /* the largest extent bound to threadIdx.d */
  const Stmt *widest[3];  /* the loop that has it */
  int64_t shared;         /* bytes of shared buffers */
  const Stmt *last_shared;
  bool ok;
} Use;

static Loc where(const Stmt *s) {
  if (s->loc.file) return s->loc;
  if (s->buf && s->buf->op) return s->buf->op->loc;
  return s->loc;
}

static bool has_block_loop(const Stmt *s) {
  if (!s) return false;
  if (s->kind == S_FOR && s->for_kind >= FOR_BLOCK_X && s->for_kind <= FOR_BLOCK_Z) return true;
  if (has_block_loop(s->body) || has_block_loop(s->els)) return true;
  for (int i = 0; i < s->n; i++)
    if (has_block_loop(s->stmts[i])) return true;
  return false;
}

/* The first store under S, to name its stage. */
static const Stmt *first_store(const Stmt *s) {
  if (!s) return NULL;
  if (s->kind == S_STORE) return s;
  const Stmt *r = first_store(s->body);
  if (!r) r = first_store(s->els);
  for (int i = 0; !r && i < s->n; i++) r = first_store(s->stmts[i]);
  return r;
}

static void unbound(Use *u, const Stmt *at, const Stmt *store) {
  if (!u->ok) return;
  Loc loc = at->loc.file ? at->loc : where(store);
  diag_error(loc, "stage %s is not bound to blockIdx: a GPU schedule must bind every root stage",
             store->buf->name);
  u->ok = false;
}

static void walk(Use *u, const Stmt *s, const Stmt *outer);

static void walk_for(Use *u, const Stmt *s, const Stmt *outer) {
  ForKind k = s->for_kind;
  bool block = k >= FOR_BLOCK_X && k <= FOR_BLOCK_Z;
  if (!u->in_block && !block && has_block_loop(s->body) && u->ok) {
    diag_error(where(s), "loop %s encloses a blockIdx loop: on a GPU the blockIdx loops must be "
               "outermost", s->var->name);
    u->ok = false;
  }
  if (forkind_is_thread(k)) {
    int64_t lo, hi;
    int d = k - FOR_THREAD_X;
    if (const_bounds(s->extent, &u->ranges, &lo, &hi) && hi > u->threads[d]) {
      u->threads[d] = hi;
      u->widest[d] = s;
    }
  }
  range_push(&u->ranges, s->var, s->min, s->extent);
  u->in_block += block;
  walk(u, s->body, outer ? outer : s);
  u->in_block -= block;
  range_pop(&u->ranges);
}

static void walk(Use *u, const Stmt *s, const Stmt *outer) {
  if (!s) return;
  switch (s->kind) {
  case S_FOR: walk_for(u, s, outer); return;
  case S_STORE:
    if (!u->in_block) unbound(u, outer ? outer : s, s);
    return;
  case S_ALLOC:
    if (s->buf->scope == SCOPE_SHARED) {
      int64_t n = ir_buffer_numel(s->buf, NULL, NULL);
      if (n > 0) u->shared += n * dtype_bytes(s->buf->dtype);
      u->last_shared = s;
    }
    walk(u, s->body, outer);
    return;
  case S_IF:
    walk(u, s->body, outer);
    walk(u, s->els, outer);
    return;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) walk(u, s->stmts[i], outer);
    return;
  default: return;
  }
}

/* Check one launch (or a top-level statement that should have been one). */
static bool check_launch(const Stmt *s, const GpuLimits *lim) {
  Use u = {.ok = true};
  for (int d = 0; d < 3; d++) u.threads[d] = 1;
  walk(&u, s, NULL);
  if (!u.ok) return false;
  int64_t n = u.threads[0] * u.threads[1] * u.threads[2];
  if (n > lim->max_threads_per_block) {
    int d = u.threads[1] > u.threads[0] ? 1 : 0;
    if (u.threads[2] > u.threads[d]) d = 2;
    diag_error(where(u.widest[d]),
               "%" PRId64 " threads per block (threadIdx.x %" PRId64 " x .y %" PRId64 " x .z %" PRId64
               ") exceed the device's limit of %d: bind smaller loops to threadIdx",
               n, u.threads[0], u.threads[1], u.threads[2], lim->max_threads_per_block);
    return false;
  }
  if (u.shared > lim->max_shared_bytes) {
    diag_error(where(u.last_shared),
               "%" PRId64 " bytes of shared memory per block exceed the device's limit of %d: "
               "cache smaller tiles", u.shared, lim->max_shared_bytes);
    return false;
  }
  return true;
}

/* The host level: global temps and a sequence of launches. */
static bool check_host(const Stmt *s, const GpuLimits *lim) {
  if (!s) return true;
  if (s->kind == S_SEQ) {
    bool ok = true;
    for (int i = 0; i < s->n; i++) ok = check_host(s->stmts[i], lim) && ok;
    return ok;
  }
  if (s->kind == S_ALLOC && s->buf->scope == SCOPE_GLOBAL) return check_host(s->body, lim);
  if (!has_block_loop(s) && !first_store(s)) return true;
  return check_launch(s, lim);
}

bool gpu_check(const LoweredFunc *fn, const GpuLimits *limits) {
  if (!limits || limits->max_threads_per_block <= 0 || limits->max_shared_bytes <= 0)
    die("gpu_check: no limits (gpu_limits gives the device's or target.c's defaults)");
  return check_host(fn->body, limits);
}
