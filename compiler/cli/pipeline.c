/* pipeline.c — the pipeline every command goes through, one function per step:
 *
 *   1. load        parse + check                                        drv_load
 *   2. pick steps  a variant's, auto (records, else a search), the target's default
 *                                                                       drv_steps
 *   3. schedule    sched_build (every step; compute_at judged at the end)
 *   4. lower       sched_lower: the passes of compiler/lower/, verified,
 *                  checked by the target (GPU limits)          drv_lower, drv_kernel,
 *                                                                       drv_lower_all
 *   5. build       the target's build (CPU: LLVM JIT; CUDA: NVRTC + driver;
 *                  OpenCL: the ICD)                                     drv_build
 *
 * driver.c (compile), run.c (run, bench), randsched.c (fuzz-schedule), network_run.c and
 * the tuner call these; none of them calls back into a command.
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "texrt.h"

/* 1. Load: parse -> check. NULL when there were errors (reported). */
Program *drv_load(Cli *c) {
  c->ast = parse_file(c->file);
  if (!c->ast || diag_errors()) return NULL;
  Program *p = check_program(c->ast, c->defs, c->ndefs);
  if (!p || diag_errors()) return NULL;
  for (int i = 0; i < c->ndefs; i++)
    if (!c->defs[i].used)
      diag_warning((Loc){0}, "-D %s: no constant or symbolic size of that name", c->defs[i].name);
  if (c->kernel && !program_kernel(p, c->kernel)) {
    diag_error((Loc){0}, "--kernel %s: no kernel of that name in %s", c->kernel, c->file);
    return NULL;
  }
  return p;
}

bool drv_selected(Cli *c, Kernel *k) { return !c->kernel || strcmp(c->kernel, k->name) == 0; }

/* 2. Pick steps: those for kernel K on T under --schedule NAME: a variant's, auto's (the
 * best record, else a search in forked children), or the default's (empty on the CPU,
 * gpu_default_steps on GPUs). *VARIANT_OUT gets the variant used (or NULL). */
bool drv_steps(Cli *c, Kernel *k, const char *name, Target t, Vec *steps, Variant **variant_out) {
  Variant *v = name ? kernel_pick_variant(k, name, t) : NULL;
  Variant *other = name && !v ? kernel_variant(k, name) : NULL;
  if (other) {
    diag_error(other->loc, "schedule %s.%s is not for target %s", k->name, other->name, target_names[t]);
    return false;
  }
  if (variant_out) *variant_out = v;
  if (v && v->is_auto) return tune_auto_steps(k, t, &c->o, c->records, steps);
  if (v) {
    *steps = v->steps;
    return true;
  }
  const Backend *be = backend_for(t);
  return be->default_steps ? be->default_steps(k, t, steps) : true;
}

/* 3. Schedule and 4. lower one kernel under STEPS. NULL on error (reported). */
LoweredFunc *drv_lower(Cli *c, Kernel *k, Target t, const Vec *steps) {
  Schedule *s = sched_build(k, t, steps);
  if (!s) return NULL;
  return sched_lower(s, &c->o); /* verified, and checked by the target (GPU limits) */
}

LoweredFunc *drv_kernel(Cli *c, Kernel *k, const char *variant, Variant **variant_out) {
  Vec steps = {0};
  if (!drv_steps(c, k, variant, c->o.target, &steps, variant_out)) return NULL;
  return drv_lower(c, k, c->o.target, &steps);
}

int drv_lower_all(Cli *c, Program *p, LoweredFunc ***out, Variant ***variants) {
  LoweredFunc **fns = xalloc(sizeof(LoweredFunc *) * (size_t)(p->nkernels + 1));
  Variant **vs = xalloc(sizeof(Variant *) * (size_t)(p->nkernels + 1));
  int n = 0;
  /* `--schedule default` is every kernel's default schedule, unless a kernel names a
   * variant so (then that variant, as any other name). */
  const char *want = c->schedule;
  bool found = !want;
  if (want && strcmp(want, "default") == 0) {
    found = true;
    bool named = false;
    for (int i = 0; i < p->nkernels; i++) named |= kernel_variant(p->kernels[i], "default") != NULL;
    if (!named) want = NULL;
  }
  for (int i = 0; i < p->nkernels; i++) {
    Kernel *k = p->kernels[i];
    if (!drv_selected(c, k)) continue;
    if (want && kernel_variant(k, want)) found = true;
    LoweredFunc *f = drv_kernel(c, k, want, &vs[n]);
    if (f) fns[n++] = f;
  }
  if (!found) diag_error((Loc){0}, "--schedule %s: no kernel in %s has a schedule of that name", c->schedule, c->file);
  *out = fns;
  if (variants) *variants = vs;
  return diag_errors() ? -1 : n;
}

/* 5. Build F for its target in this process: the function, its module in *M. */
RtFunc *drv_build(Cli *c, LoweredFunc *f, RtModule **m) {
  *m = backend_for(f->target)->build(&f, 1, &c->o);
  if (!*m) return NULL;
  RtFunc *fn = rt_module_func(*m, f->name);
  if (!fn) fprintf(stderr, "texc: error: %s\n", rt_last_error());
  return fn;
}

size_t drv_param_bytes(const LoweredFunc *f, int i) {
  int64_t n = ir_buffer_numel(f->params[i], f, NULL);
  if (n < 0) die("size of %s is not constant", f->params[i]->name);
  return (size_t)n * (size_t)dtype_bytes(f->params[i]->dtype);
}
