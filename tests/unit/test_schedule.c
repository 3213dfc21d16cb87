/* test_schedule.c — steps on stages (schedule.c) and lowering (lower.c): what the tuner
 * sees (sched_describe), failed steps leave the schedule unchanged, and every schedule
 * computes what the default schedule computes (run by the interpreter). */
#include "sched/sched_internal.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *mm =
    "const M = 19, N = 13, K = 11\n"
    "kernel mm(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
    "  C[i, j] += A[i, k] * B[k, j]\n}\n";

static const char *chain =
    "const N = 23\n"
    "kernel ch(X: f32[N + 2], W: f32[3]) -> (Y: f32[N], Z: f32[N]) {\n"
    "  tensor P: f32[N + 2]\n  P[i] = X[i] * 2.0\n"
    "  tensor Q: f32[N]\n  Q[i] max= P[i + r] * W[r]\n"
    "  tensor S: f32[N]\n  S[i] = Q[i] + P[i + 1]\n"
    "  Y[i] = S[i] + 1.0\n"
    "  Z[i] = S[i] * Y[i]\n}\n";

static void test_describe(void) {
  Kernel *k = unit_kernel(mm, "mm");
  Schedule *s = sched_new(k, TARGET_LLVM);
  check("describe: default loops", strcmp(sched_describe(s), "C: C.i(19) C.j(13) C.k(11)\n") == 0);
  check("describe: tile + split + reorder apply",
        unit_apply(s, "io, jo, ii, ji = tile(C.i, C.j, 8, 4)\nko, ki = split(C.k, parts = 2)\nreorder(ko, ii)"));
  check("describe: after tile", strcmp(sched_describe(s), "C: io(3) jo(4) ko(2) ji(4) ii(8) ki(6)\n") == 0);
  char *before = sched_describe(s);
  diag_silent = true;
  check("describe: a loop split away is refused", !unit_apply(s, "vectorize(C.i)"));
  check("describe: a name defined twice is refused", !unit_apply(s, "io, x = split(C.i, 2)"));
  diag_silent = false;
  check("describe: failures change nothing", strcmp(before, sched_describe(s)) == 0);
  check("describe: `C.io` names a step's loop", unit_apply(s, "unroll(C.io)"));
}

/* A step that fails after it changed something is rolled back. */
static void test_rollback(void) {
  Kernel *k = unit_kernel("kernel t(A: f32[8, 8]) -> C: f32[8, 8] {\n  tensor P: f32[8, 8]\n"
                     "  P[i, j] = A[i, j] + 1.0\n  C[i, j] = P[i, j] * 2.0\n}\n", "t");
  Schedule *s = sched_new(k, TARGET_LLVM);
  check("rollback: compute_at applies", unit_apply(s, "compute_at(P, C, C.j)"));
  char *before = sched_describe(s);
  diag_silent = true;
  /* tile splits C.i, then fails on C.j (P is computed there): C.i must come back */
  check("rollback: tile over an attach point fails", !unit_apply(s, "io, jo, ii, ji = tile(C.i, C.j, 2, 2)"));
  diag_silent = false;
  check("rollback: the schedule is unchanged", strcmp(before, sched_describe(s)) == 0);
  check("rollback: C.i is still a loop", unit_apply(s, "io, ii = split(C.i, 2)"));
  check("rollback: names of the failed step are free", unit_apply(s, "jo, ji = split(P.j, 2)"));
}

/* Random inputs for F's parameters; outputs zeroed. */
static void **make_args(LoweredFunc *f) {
  void **args = xalloc(sizeof(void *) * (size_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = ir_buffer_numel(f->params[i], f, NULL);
    args[i] = xalloc((size_t)(n * dtype_bytes(f->params[i]->dtype)) + 1);
    if (i < f->ninputs) fill_random(args[i], f->params[i]->dtype, n, 7 + (uint64_t)i);
  }
  return args;
}

static bool same_outputs(LoweredFunc *f, void **a, void **b) {
  for (int i = f->ninputs; i < f->nparams; i++) {
    int64_t n = ir_buffer_numel(f->params[i], f, NULL);
    for (int64_t j = 0; j < n; j++) {
      float x = ((float *)a[i])[j], y = ((float *)b[i])[j];
      if (!(fabsf(x - y) <= 1e-4f * (1 + fabsf(x)))) return false;
    }
  }
  return true;
}

/* Lower K under STEPS for T, run it and compare with the default schedule. */
static void differential(Kernel *k, Target t, const char *name, const char *steps) {
  LoweredFunc *ref = sched_lower(sched_new(k, TARGET_LLVM), NULL);
  Schedule *s = sched_new(k, t);
  bool built = unit_apply(s, steps);
  LoweredFunc *f = built ? sched_lower(s, NULL) : NULL;
  if (!f || !ir_verify(f)) {
    check(name, false);
    return;
  }
  void **a = make_args(ref), **b = xalloc(sizeof(void *) * (size_t)ref->nparams);
  for (int i = 0; i < ref->nparams; i++) {
    int64_t bytes = ir_buffer_numel(ref->params[i], ref, NULL) * dtype_bytes(ref->params[i]->dtype);
    b[i] = xalloc((size_t)bytes + 1);
    memcpy(b[i], a[i], (size_t)bytes);
  }
  bool ok = interp_run(ref, a, NULL) == 0 && interp_run(f, b, NULL) == 0 && same_outputs(ref, a, b);
  check(name, ok);
}

static void test_results(void) {
  Kernel *k = unit_kernel(mm, "mm");
  differential(k, TARGET_LLVM, "run: tile, split, reorder, vectorize, parallel",
               "io, jo, ii, ji = tile(C.i, C.j, 8, 4)\nko, ki = split(C.k, 4)\n"
               "reorder(io, jo, ko, ki, ii, ji)\nvectorize(ji)\nparallel(io)");
  differential(k, TARGET_LLVM, "run: fuse then split in parts", "f = fuse(C.i, C.j)\nfo, fi = split(f, parts = 7)");
  differential(k, TARGET_LLVM, "run: split of a split (inner tail)", "io, ii = split(C.i, 8)\na, b = split(ii, 3)\nreorder(C.k, a)");
  differential(k, TARGET_LLVM, "run: rfactor of a split reduction", "ko, ki = split(C.k, 4)\nR = rfactor(C, ki)");
  differential(k, TARGET_LLVM, "run: rfactor of an outer part, R split", "ko, ki = split(C.k, 3)\nR = rfactor(C, ko)\nx, y = split(R.i, 5)");
  differential(k, TARGET_LLVM, "run: cache_write at a tile", "CL = cache_write(C, local)\nio, jo, ii, ji = tile(C.i, C.j, 4, 4)\n"
               "compute_at(CL, C, jo)\nreorder(CL.k, CL.i)");
  differential(k, TARGET_LLVM, "run: cache_read at the reduction", "AS = cache_read(A, local, C)\nko, ki = split(C.k, 4)\ncompute_at(AS, C, ko)");
  differential(k, TARGET_CUDA, "run: GPU shared tiles with cooperative fetch",
               "bx, tx = split(C.i, 8)\nby, ty = split(C.j, 8)\nko, ki = split(C.k, 4)\nreorder(bx, by, ko, tx, ty, ki)\n"
               "AS = cache_read(A, shared, C)\ncompute_at(AS, C, ko)\nbind(bx, blockIdx.y)\nbind(by, blockIdx.x)\n"
               "bind(tx, threadIdx.y)\nbind(ty, threadIdx.x)\nbind(AS.i, threadIdx.y)\nbind(AS.k, threadIdx.x)");
  differential(k, TARGET_CUDA, "run: GPU local cache_write inside threads",
               "CL = cache_write(C, local)\nbx, tx = split(C.i, 8)\nbind(bx, blockIdx.x)\nbind(tx, threadIdx.x)\ncompute_at(CL, C, tx)");
  k = unit_kernel(chain, "ch");
  differential(k, TARGET_LLVM, "run: chain at split loops", "so, si = split(S.i, 4)\ncompute_at(Q, S, so)\n"
               "compute_at(P, S, so)");
  differential(k, TARGET_LLVM, "run: inline into two outputs", "compute_inline(S)\ncompute_inline(P)");
  differential(k, TARGET_LLVM, "run: Q at S.i, its reduction split and reordered",
               "compute_at(Q, S, S.i)\nro, ri = split(Q.r, 2)\nreorder(ri, ro)");
  diag_silent = true;
  Schedule *s = sched_new(k, TARGET_LLVM);
  check("run: compute_at outside another reader waits for the final schedule", unit_apply(s, "compute_at(P, Q, Q.r)"));
  check("run: ... which is refused when it is final", !sched_check_attach(s) && !sched_lower(s, NULL));
  check("run: the error is at the compute_at", strstr(diag_last(), "steps:1:1: error: loop 'Q.r' does not enclose"));
  s = sched_new(k, TARGET_LLVM);
  check("run: compute_inline of a stage with stages at its loops is refused",
        unit_apply(s, "compute_at(Q, S, S.i)") && !unit_apply(s, "compute_inline(S)"));
  diag_silent = false;
  /* as TVM judges it: P read by Q and S, computed at S.i once Q is computed there too */
  s = sched_new(k, TARGET_LLVM);
  check("run: compute_at before its reader's compute_at is accepted",
        unit_apply(s, "compute_at(P, S, S.i)\ncompute_at(Q, S, S.i)") && sched_check_attach(s));
  differential(k, TARGET_LLVM, "run: compute_at before its reader's compute_at computes the same",
               "compute_at(P, S, S.i)\ncompute_at(Q, S, S.i)");
  diag_silent = true;
  s = sched_new(k, TARGET_LLVM);
  check("run: a later step that breaks an attachment is named",
        unit_apply(s, "compute_at(P, S, S.i)\ncompute_at(Q, S, S.i)\ncompute_root(Q)") && !sched_check_attach(s) &&
            strstr(diag_last(), "steps:3:1: error: after this step, loop 'S.i' (where 'P' is computed, line 1)"));
  diag_silent = false;
}

int main(void) {
  test_describe();
  test_rollback();
  test_results();
  return failures != 0;
}
