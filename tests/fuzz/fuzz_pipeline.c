/* fuzz_pipeline.c — a libFuzzer target over the whole pipeline (tests/fuzz/pipeline.sh).
 *
 * Input: a .tex file. It is parsed and checked (constants shrunk to tiny sizes when the
 * file's own would be too much work), then every kernel is lowered under its default
 * schedule, under each of its hand schedules (CPU and GPU variants) and under the default
 * GPU schedule; each lowering must verify and run in the interpreter with the reference's
 * result. Each lowering is interpreted only when its own loop nest is small enough (the
 * trip counts of its loops, as lowered: a split by 1e9 makes a 1e9-iteration loop that is
 * skipped, not a stall). Diagnostics (errors a user can cause) are fine; integer division by
 * zero is defined (LANGUAGE.md: x / 0 == 0), so the interpreter never fails on data; an abort, a sanitizer report, an IR that does not verify, an
 * out-of-bounds access in the interpreter or a result that differs is a finding (abort).
 */
#include "texc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

enum { MAX_ELEMS = 1 << 12, MAX_WORK = 1 << 14, SMALL = 5, SYM_SIZE = 3 };

static _Noreturn void finding(const char *what, const char *kernel, const char *detail) {
  fprintf(stderr, "fuzz_pipeline: %s in kernel %s%s%s\n", what, kernel, detail ? ": " : "",
          detail ? detail : "");
  abort();
}

/* ---- work estimate ------------------------------------------------------------------ */

static int64_t sat_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > MAX_WORK * 4 / b ? MAX_WORK * 4 : a * b;
}

/* An upper bound of the loop iterations and stores S performs (MAX_WORK * 4 when unknown
 * or larger). */
static int64_t work(const Stmt *s, RangeMap *r) {
  int64_t lo, hi, w = 0;
  if (!s) return 0;
  switch (s->kind) {
  case S_FOR:
    if (!const_bounds(s->extent, r, &lo, &hi)) return MAX_WORK * 4;
    range_push(r, s->var, s->min, s->extent);
    w = sat_mul(hi, 1 + work(s->body, r)); /* an empty body still costs its iterations */
    range_pop(r);
    return w;
  case S_STORE: return 1;
  case S_IF: return work(s->body, r) + work(s->els, r);
  case S_ALLOC:
    for (int d = 0; d < s->buf->ndim; d++)
      if (!const_bounds(s->buf->shape[d], r, &lo, &hi) || hi > MAX_ELEMS) return MAX_WORK * 4;
    return work(s->body, r);
  case S_SEQ:
    for (int i = 0; i < s->n && w < MAX_WORK; i++) w += work(s->stmts[i], r);
    return w;
  default: return 0;
  }
}

/* Small enough to interpret: parameters and the loop nest of this lowering. */
static bool small(const LoweredFunc *f, const int64_t *sizes) {
  RangeMap r = {0};
  for (int i = 0; i < f->nsizes; i++) range_push(&r, f->sizes[i], ir_int(sizes[i]), ir_int(1));
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = ir_buffer_numel(f->params[i], f, sizes);
    if (n < 0 || n > MAX_ELEMS) return false;
  }
  return work(f->body, &r) <= MAX_WORK;
}

/* ---- running and comparing --------------------------------------------------------- */

/* Data for F's params: random inputs, outputs a garbage pattern (the driver's way). */
static void **make_args(const LoweredFunc *f, const int64_t *sizes) {
  void **a = xalloc(sizeof(void *) * (size_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = ir_buffer_numel(f->params[i], f, sizes);
    a[i] = xalloc((size_t)(n ? n : 1) * (size_t)dtype_bytes(f->params[i]->dtype));
    fill_random(a[i], f->params[i]->dtype, n, i < f->ninputs ? 1000u + (uint64_t)i : 0xdeadbeefu + (uint64_t)i);
  }
  return a;
}

static void **copy_args(const LoweredFunc *f, void **a, const int64_t *sizes) {
  void **c = xalloc(sizeof(void *) * (size_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    size_t n = (size_t)ir_buffer_numel(f->params[i], f, sizes) * (size_t)dtype_bytes(f->params[i]->dtype);
    c[i] = xalloc(n ? n : 1);
    memcpy(c[i], a[i], n);
  }
  return c;
}

/* Interpret F; stderr is captured so that the kind of failure can be told apart.
 * 0: ran; aborts (a finding) on any failure: no data makes the interpreter fail. */
static int run(const LoweredFunc *f, void **args, const int64_t *sizes, const char *what) {
  char *buf = NULL;
  size_t len = 0;
  FILE *saved = stderr, *mem = open_memstream(&buf, &len);
  stderr = mem;
  int rc = interp_run(f, args, sizes);
  stderr = saved;
  fclose(mem);
  int out = 0;
  if (rc) finding("the interpreter failed", f->name, xprintf("%s: %s", what, buf));
  free(buf);
  return out;
}

/* Every output against the default schedule's, with the one comparator of texc run
 * --check (compiler/ir/compare.c). */
static void compare(const LoweredFunc *f, void **got, void **ref, const int64_t *sizes, const char *what) {
  for (int i = f->ninputs; i < f->nparams; i++) {
    Buffer *b = f->params[i];
    CompareResult r = {0};
    if (!compare_values(got[i], ref[i], b->dtype, ir_buffer_numel(b, f, sizes), b->name, &r))
      finding("wrong result", f->name, xprintf("%s: %s", what, compare_mismatch(&r)));
  }
}

/* ---- schedules ---------------------------------------------------------------------- */

typedef struct Ref {
  void **args, **out;
  int64_t sizes[64];
  bool ok; /* the reference ran: variants are compared with it */
} Ref;

/* Lower K under STEPS for T; NULL when a step or lowering reported an error. */
static LoweredFunc *lower(Kernel *k, Target t, const Vec *steps) {
  const Options o = {.gpu = gpu_default_limits}; /* the same limits on every machine */
  Schedule *s = sched_build(k, t, steps);
  LoweredFunc *f = s ? sched_lower(s, &o) : NULL;
  if (!f) return NULL;
  if (!ir_verify(f)) finding("the lowered IR does not verify", k->name, target_names[t]);
  return f;
}

/* One schedule of K: lowered, run, compared with the reference. */
static void try_schedule(Kernel *k, Target t, const Vec *steps, Ref *ref, const char *what) {
  diag_reset();
  LoweredFunc *f = lower(k, t, steps);
  if (!f || !ref->ok || !small(f, ref->sizes)) return;
  void **a = copy_args(f, ref->args, ref->sizes);
  if (run(f, a, ref->sizes, what) == 0) compare(f, a, ref->out, ref->sizes, what);
}

/* Does K call an extern kernel? The fuzzer loads no library, so those are not run. */
static bool calls_extern(const Kernel *k) {
  for (int i = 0; i < k->nops; i++)
    if (k->ops[i]->ext) return true;
  return false;
}

static void fuzz_kernel(Kernel *k) {
  Ref ref = {0};
  if (calls_extern(k)) return;
  for (int i = 0; i < k->nsizes && i < 64; i++) ref.sizes[i] = SYM_SIZE;
  if (k->nsizes > 64) return;
  Vec none = {0};
  diag_reset();
  LoweredFunc *f = lower(k, TARGET_LLVM, &none);
  if (!f) return; /* e.g. a shape the bound inference cannot handle: reported */
  if (!small(f, ref.sizes)) return;
  ref.args = make_args(f, ref.sizes);
  ref.out = copy_args(f, ref.args, ref.sizes);
  ref.ok = run(f, ref.out, ref.sizes, "default schedule") == 0;
  bool gpu_variant[TARGET_COUNT] = {false};
  for (int v = 0; v < k->nvariants; v++) {
    Variant *var = k->variants[v];
    if (var->is_auto) continue;
    for (int t = 0; t < TARGET_COUNT; t++)
      if (var->targets & TARGET_BIT(t)) {
        gpu_variant[t] = true;
        try_schedule(k, (Target)t, &var->steps, &ref, var->name);
        if (t == TARGET_OPENCL && (var->targets & TARGET_BIT(TARGET_CUDA))) break; /* same loops */
      }
  }
  if (!gpu_variant[TARGET_CUDA]) {
    Vec steps = {0};
    diag_reset();
    if (gpu_default_steps(k, TARGET_CUDA, &steps)) try_schedule(k, TARGET_CUDA, &steps, &ref, "default gpu");
  }
}

/* ---- the target ------------------------------------------------------------------------ */

/* Every top-level constant of FILE overridden with a small value. */
static int shrink_consts(Ast *file, Define *defs, int max) {
  int n = 0;
  for (int i = 0; i < file->list.len && n < max; i++) {
    Ast *c = file->list.data[i];
    if (c && c->kind == A_CONST && c->name) defs[n++] = (Define){c->name, SMALL, false};
  }
  return n;
}

/* Is some kernel of P too big to interpret with its own constants? */
static bool too_big(Program *p) {
  for (int i = 0; i < p->nkernels; i++) {
    Kernel *k = p->kernels[i];
    for (int j = 0; j < k->ninputs + k->noutputs; j++) {
      Buffer *b = j < k->ninputs ? k->inputs[j] : k->outputs[j - k->ninputs];
      for (int d = 0; d < b->ndim; d++) {
        int64_t v;
        if (ir_is_const(b->shape[d], &v) && v > 64) return true;
      }
    }
    for (int o = 0; o < k->nops; o++)
      for (int r = 0; r < k->ops[o]->nred; r++) {
        int64_t v;
        if (ir_is_const(k->ops[o]->rext[r], &v) && v > 64) return true;
      }
  }
  return false;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  if (size > 8192) return 0;
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  Arena *arena = arena_new();
  Arena *old = arena_swap(arena);
  diag_silent = true;
  texc_stdlib_dir = "/nonexistent-texc-stdlib";
  diag_reset();
  Ast *f = parse_string("/nonexistent-texc-fuzz/fuzz.tex", text);
  Program *p = f && !diag_errors() ? check_program(f, NULL, 0) : NULL;
  if (p && !diag_errors() && too_big(p)) {
    Define defs[64];
    int n = shrink_consts(f, defs, 64);
    diag_reset();
    p = n ? check_program(f, defs, n) : NULL;
  }
  if (p && !diag_errors())
    for (int i = 0; i < p->nkernels; i++) fuzz_kernel(p->kernels[i]);
  diag_reset();
  arena_swap(old);
  arena_free(arena);
  free(text);
  return 0;
}
