/* driver.c — texc's command line: the pipeline every command goes through.
 *
 *   load        parse + check                       drv_load
 *   pick steps  a variant's, auto (records, else a search), the GPU default   drv_steps
 *   schedule    sched_build                         drv_lower
 *   lower       sched_lower (+ verify, gpu_check)   drv_lower
 *   then        emit (compile), build + call (run, bench), interpret (--interp, fuzz)
 *
 * The commands and their options are in options.c (one table); `texc CMD --help`.
 *   compile: cmd_compile here; run, bench: run.c; fuzz-schedule: randsched.c;
 *   tune: autosched/tune.c; records: autosched/records.c; network files: network_run.c
 *   and autosched/network_tune.c.
 */
#include "driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "front/network.h" /* networks: network*.c */
#include "texrt.h"

/* Where stdlib/ is: beside the binary's folder (build/texc -> stdlib), else ./stdlib. */
static void find_stdlib(const char *argv0) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return;
  *slash = 0;
  char *dir = xprintf("%s/../stdlib", exe);
  if (access(dir, R_OK) == 0) texc_stdlib_dir = dir;
  (void)argv0;
}

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
  bool found = !c->schedule;
  for (int i = 0; i < p->nkernels; i++) {
    Kernel *k = p->kernels[i];
    if (!drv_selected(c, k)) continue;
    if (c->schedule && kernel_variant(k, c->schedule)) found = true;
    LoweredFunc *f = drv_kernel(c, k, c->schedule, &vs[n]);
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

/* The emit kind from -o's extension when --emit is not given. */
static const char *kind_from_output(const char *out, Target t) {
  static const char *const ext[][2] = {{".so", "so"},   {".o", "obj"},   {".ll", "llvm"},
                                       {".s", "asm"},   {".h", "header"}, {".cu", "cuda"},
                                       {".ptx", "ptx"}, {".cl", "opencl"}};
  size_t n = strlen(out);
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    size_t m = strlen(ext[i][0]);
    if (n > m && strcmp(out + n - m, ext[i][0]) == 0) return ext[i][1];
  }
  return backend_for(t)->default_emit;
}

/* `texc FILE --emit ast`: the parse alone. */
static int emit_ast(Cli *c) {
  Ast *file = parse_file(c->file);
  if (!file || diag_errors()) return 1;
  ast_print(stdout, file);
  return 0;
}

/* `texc FILE`: steps -> lower every selected kernel -> emit. */
static int cmd_compile(Cli *c, Program *p) {
  LoweredFunc **fns;
  int n = drv_lower_all(c, p, &fns, NULL);
  if (n < 0) return 1;
  if (c->emit && strcmp(c->emit, "ir") == 0) {
    for (int i = 0; i < n; i++) {
      if (i) putchar('\n');
      ir_print_func(stdout, fns[i]);
    }
    return 0;
  }
  if (!c->emit && !c->out) return 0; /* checked and lowered: nothing to write */
  const char *kind = c->emit ? c->emit : kind_from_output(c->out, c->o.target);
  const Backend *be = backend_for(c->o.target);
  if (!be->emit(fns, n, kind, c->out ? c->out : "-", &c->o)) return 1;
  return 0;
}

int drv_main(int argc, char **argv) {
  find_stdlib(argv[0]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  Cli c;
  cli_parse(&c, argc, argv);                             /* options.c */
  if (c.cmd == CMD_RECORDS) return records_main(&c);     /* no .tex file */
  if (c.cmd == CMD_COMPILE && c.emit && strcmp(c.emit, "ast") == 0) return emit_ast(&c); /* any file */
  if (net_is_network_file(c.file)) {                     /* networks: network*.c */
    if (c.cmd == CMD_TUNE) return net_tune_main(&c);
    return net_run_cli(&c);
  }
  Program *p = drv_load(&c);                             /* 1. parse + check */
  if (!p) return 1;
  switch (c.cmd) {                                       /* 2.. pick steps, schedule, lower */
  case CMD_COMPILE: return cmd_compile(&c, p);           /* ... -> emit */
  case CMD_RUN: return drv_run(&c, p);                   /* ... -> build -> call (--check) */
  case CMD_BENCH: return drv_bench(&c, p);               /* ... -> build -> time */
  case CMD_FUZZ: return drv_fuzz_schedule(&c, p);        /* random steps -> interpret */
  case CMD_TUNE: return tune_main(&c, p);                /* searched steps -> measure */
  default: return 1;
  }
}
