/* lower.c — a schedule to one loop nest, as a list of passes (Halide's Lower.cpp).
 *
 * Each pass is a function in its own file of this folder; `texc --dump-after PASS` prints
 * what a pass leaves, and the verifier runs after each pass that has loop IR in debug
 * builds (TEXC_DEBUG, which `make asan` defines), under --verify-passes or with
 * TEXC_VERIFY_PASSES=1 in the environment, and after the last pass always. Every path
 * that lowers (the driver, `texc run`, networks, fuzz-schedule, the tuner's search and
 * measurement) goes through sched_lower. */
#include "lower.h"

#include <stdlib.h>
#include <string.h>

static bool pass_simplify(LowerCtx *L);
static bool pass_gpu_check(LowerCtx *L);

typedef struct Pass {
  const char *name;
  bool (*run)(LowerCtx *L);
} Pass;

/* ORDER: what each pass needs is made by those before it. */
static const Pass passes[] = {
    {"inline", pass_inline},       /* inline.c: inlined producers substituted */
    {"bounds", pass_bounds},       /* bounds.c: bound inference, loop vars, guards */
    {"nests", pass_nests},         /* nests.c: the attach tree as one loop nest */
    {"vthreads", pass_vthreads},   /* vthreads.c: vthread loops injected (GPU) */
    {"double-buffer", pass_double_buffer}, /* double_buffer.c: copies fetched a step ahead */
    {"simplify", pass_simplify},   /* arith/simplify.c: indices, guards, constants */
    {"tails", pass_tails},         /* tails.c: full tiles versioned without guards (CPU) */
    {"gpu-check", pass_gpu_check}, /* the target's check (target/gpu_check.c on GPUs) */
    {"flatten", pass_flatten},     /* flatten.c: one row-major offset per access */
};
enum { NPASSES = sizeof passes / sizeof passes[0] };

static bool pass_simplify(LowerCtx *L) {
  L->fn->body = simplify_stmt(L->fn->body);
  return true;
}

/* The target's checks of the lowered function (GPU: blocks, threads, shared memory)
 * against its device's limits (target/target.c: the device's, or O's overrides). */
static bool pass_gpu_check(LowerCtx *L) {
  const Backend *be = backend_for(L->s->target);
  if (!be->check) return true;
  GpuLimits lim = gpu_limits(L->s->target, L->o);
  return be->check(L->fn, &lim);
}

bool sched_pass_known(const char *name) {
  if (strcmp(name, "all") == 0) return true;
  for (int i = 0; i < NPASSES; i++)
    if (strcmp(name, passes[i].name) == 0) return true;
  fprintf(stderr, "texc: error: --dump-after %s: no lowering pass of that name; the passes are:", name);
  for (int i = 0; i < NPASSES; i++) fprintf(stderr, " %s", passes[i].name);
  fputs(" (or all)\n", stderr);
  return false;
}

/* Before nests there is no loop IR: each stage's value and, once bounded, its root
 * ranges as loops print them: (min, extent). */
static void dump_stages(LowerCtx *L, FILE *f) {
  for (int i = 0; i < L->s->stages.len; i++) {
    Stage *x = lower_stage(L, i);
    const char *at = x->attach == ATTACH_INLINE ? "inline"
                     : x->attach == ATTACH_ROOT ? "root"
                                                : xprintf("at %s", x->at_iv->name);
    fprintf(f, "stage %s (%s) = %s\n", x->name, at, ir_expr_str(x->eff));
    if (!x->done) continue;
    for (int d = 0; d < x->nroot; d++)
      fprintf(f, "  %s (%s, %s)\n", x->root[d]->name, ir_expr_str(x->root[d]->min),
              ir_expr_str(x->root[d]->ext));
  }
}

static void dump(LowerCtx *L, const Pass *p, bool header) {
  if (header) printf("// after %s: %s\n", p->name, L->k->name);
  if (!L->fn) dump_stages(L, stdout);
  else if (p->run != pass_flatten) ir_print_func(stdout, L->fn);
  else {
    LoweredFunc flat = *L->fn;
    flat.body = L->fn->flat;
    flat.flat = NULL;
    ir_print_func(stdout, &flat);
  }
  fflush(stdout);
}

static bool verify_each(const LowerOptions *lo) {
#ifdef TEXC_DEBUG
  return true;
#else
  const char *e = getenv("TEXC_VERIFY_PASSES");
  return (lo && lo->verify) || (e && *e && strcmp(e, "0") != 0);
#endif
}

LoweredFunc *sched_lower(Schedule *s, const Options *o) {
  LowerCtx L = {s, s->k, o, {0}, NULL, true};
  const LowerOptions *lo = o ? &o->lower : NULL;
  const char *d = lo ? lo->dump_after : NULL;
  bool each = verify_each(lo);
  if (!sched_check_attach(s)) return NULL; /* attachments are judged on the final schedule */
  for (int i = 0; i < NPASSES; i++) {
    const Pass *p = &passes[i];
    if (!p->run(&L)) return NULL;
    if (d && (strcmp(d, "all") == 0 || strcmp(d, p->name) == 0)) dump(&L, p, strcmp(d, "all") == 0);
    if (L.fn && (each || i == NPASSES - 1) && !ir_verify(L.fn))
      die("lowering kernel %s: the IR after pass '%s' does not verify", s->k->name, p->name);
  }
  return L.fn;
}
