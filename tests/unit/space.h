/* space.h — what the search-space tests share (test_tune_space.c, test_xreduce.c): checks,
 * a matmul, a kernel from .tex source, and a candidate's steps lowered for a target (its
 * CUDA source compiled with NVRTC where that is here). */
#ifndef SPACE_H
#define SPACE_H
#include "autosched/autosched.h"

#include <stdio.h>
#include <stdlib.h>

static int failures;

/* One `ok - NAME` / `not ok - NAME` line (tests/run.sh counts them). */
static inline void check(bool ok, const char *name) {
  printf("%s - %s\n", ok ? "ok" : "not ok", name);
  if (!ok) failures++;
}

/* A matmul of 256^3, the reference kernel of the search-space tests. */
static const char *matmul_src =
    "const M = 256, N = 256, K = 256\n"
    "kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
    "  C[i, j] += A[i, k] * B[k, j]\n"
    "}\n";

/* The kernel NAME of the .tex source SRC, checked. */
static inline Kernel *kernel_of(const char *src, const char *name) {
  Ast *a = parse_string("<test>", src);
  Program *p = a ? check_program(a, NULL, 0) : NULL;
  return p ? program_kernel(p, name) : NULL;
}

/* Lower TEXT for K on T (sched_build, sched_lower with gpu_check) in a scratch arena; with
 * NVRTC_OK, count a CUDA source that compiles to PTX. */
static inline bool gpu_lowers(Kernel *k, Target t, const char *text, int *nvrtc_ok) {
  Arena *ar = arena_new(), *old = arena_swap(ar);
  Vec steps = {0};
  bool was = diag_silent;
  diag_silent = true;
  Options o = {.target = t, .opt_level = 3};
  LoweredFunc *fn = NULL;
  if (parse_steps("<candidate>", text, &steps)) {
    Schedule *s = sched_build(k, t, &steps);
    fn = s ? sched_lower(s, &o) : NULL;
  }
  if (fn && nvrtc_ok) {
    char *src = cg_gpu_source(&fn, 1, t, NULL);
    char *ptx = src ? cg_nvrtc_compile(src, "compute_90") : NULL;
    *nvrtc_ok += ptx != NULL;
    free(ptx);
  }
  diag_silent = was;
  diag_reset();
  bool ok = fn != NULL;
  arena_swap(old);
  arena_free(ar);
  return ok;
}

/* The features of the candidates X and Y of K on T, into A and B (in a scratch arena). */
static inline bool features_of_two(Kernel *k, Target t, const char *x, const char *y, float *a,
                                   float *b) {
  Task task = {.kernel = k, .target = t, .opts = {.target = t, .opt_level = 3}};
  Arena *ar = arena_new(), *old = arena_swap(ar);
  bool ok = tune_lower_features(&task, x, a) && tune_lower_features(&task, y, b);
  arena_swap(old);
  arena_free(ar);
  return ok;
}

#endif
