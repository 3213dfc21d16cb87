/* truth_probe.c — one schedule timed the tuner's way and texc bench's way, to find why
 * they disagree (bench/RESULTS.md, "One measured truth"). Built against texc's objects by
 * bench/truth_probe.sh; each invocation is a fresh process that never ran a parallel loop
 * before it times (so a forked measuring child gets a fresh thread pool, as in the tuner).
 *
 *   truth_probe MODE FILE KERNEL STEPS_FILE [NAME=VALUE ...]
 *     tuner    the measurer of `texc tune` (a forked child, rt_time_candidate, --repeat 3,
 *              --min-repeat-ms 0): the median of its costs
 *     tuner50  the same with --min-repeat-ms 50
 *     cand     rt_time_candidate in this process (no fork), repeat 3
 *     bench    rt_time in this process as `texc bench` and bench.c (a warm-up, batches of
 *              >= 100 ms, the median of 7)
 *     drift    single calls one after the other for 10 s, each printed (ms): how the host's
 *              speed drifts while nothing changes in the process (the same pages, code,
 *              threads); then the median
 * Prints "MODE MS".
 */
#include "autosched/autosched.h"
#include "texrt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static RtFunc *build(Kernel *k, const Options *o, const char *text) {
  Vec steps = {0};
  if (!parse_steps("<probe>", text, &steps)) return NULL;
  Schedule *s = sched_build(k, o->target, &steps);
  LoweredFunc *fn = s ? sched_lower(s, o) : NULL;
  RtModule *m = fn ? backend_for(o->target)->build(&fn, 1, o) : NULL;
  return m ? rt_module_func(m, fn->name) : NULL;
}

static RtTensor **args_for(Kernel *k) {
  int n = k->ninputs + k->noutputs;
  RtTensor **a = calloc((size_t)n, sizeof *a);
  for (int i = 0; i < n; i++) {
    Buffer *b = i < k->ninputs ? k->inputs[i] : k->outputs[i - k->ninputs];
    int64_t shape[8];
    for (int d = 0; d < b->ndim; d++) ir_is_const(b->shape[d], &shape[d]);
    a[i] = rt_tensor_alloc((RtDevice){RT_CPU, 0}, 4, b->ndim, shape);
    fill_random(a[i]->data, DT_F32, a[i]->nbytes / 4, 1 + (uint64_t)i);
  }
  return a;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: truth_probe MODE FILE KERNEL STEPS_FILE [NAME=VALUE ...]\n");
    return 2;
  }
  const char *mode = argv[1], *text = slurp(argv[4]);
  texc_stdlib_dir = "stdlib";
  Define defs[16];
  int ndefs = 0;
  for (int i = 5; i < argc && ndefs < 16; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) continue;
    *eq = 0;
    defs[ndefs++] = (Define){argv[i], strtoll(eq + 1, NULL, 10), false};
  }
  Ast *file = parse_file(argv[2]);
  Program *p = file ? check_program(file, defs, ndefs) : NULL;
  Kernel *k = NULL;
  for (int i = 0; p && i < p->nkernels; i++)
    if (!strcmp(p->kernels[i]->name, argv[3])) k = p->kernels[i];
  if (!k || !text) {
    fprintf(stderr, "truth_probe: no kernel %s or steps\n", argv[3]);
    return 1;
  }
  /* TEXC_MCPU: compile for that CPU (bench/truth.sh passes --mcpu of TEXC_FLAGS) */
  Options o = {.target = TARGET_LLVM, .opt_level = 3, .mcpu = getenv("TEXC_MCPU")};
  double ms = -1;
  if (!strncmp(mode, "tuner", 5)) {
    Task t = {.file = file, .path = argv[2], .defs = defs, .ndefs = ndefs, .kernel = k, .target = TARGET_LLVM, .opts = o};
    MeasureOpts mo = {.repeat = 3, .min_repeat_ms = mode[5] ? atof(mode + 5) : 0, .build_timeout_s = 60,
                      .run_timeout_s = 60, .jobs = 1};
    Measurer m = measurer_local(&mo);
    char *texts[1] = {(char *)text};
    Record r = {0};
    m.measure(&m, &t, texts, 1, &r);
    if (r.error || r.ncosts < 1) {
      fprintf(stderr, "truth_probe: %s\n", r.error_msg ? r.error_msg : "no cost");
      return 1;
    }
    qsort(r.costs, (size_t)r.ncosts, sizeof(double), cmp_d);
    ms = r.costs[r.ncosts / 2];
  } else if (!strcmp(mode, "cand") || !strcmp(mode, "bench")) {
    RtFunc *f = build(k, &o, text);
    RtTensor **a = f ? args_for(k) : NULL;
    if (!a) return 1;
    if (!strcmp(mode, "cand")) {
      double c[8];
      int n = rt_time_candidate(f, a, k->ninputs + k->noutputs, 3, 0, 0, c, 8);
      qsort(c, (size_t)n, sizeof(double), cmp_d);
      ms = n > 0 ? c[n / 2] : -1;
    } else {
      RtTiming tm;
      if (!rt_time(f, a, k->ninputs + k->noutputs, NULL, 0, 1, 7, 100, &tm)) ms = tm.median_ms;
    }
  } else if (!strcmp(mode, "drift")) {
    RtFunc *f = build(k, &o, text);
    RtTensor **a = f ? args_for(k) : NULL;
    if (!a) return 1;
    static double c[1 << 16];
    int n = 0, nargs = k->ninputs + k->noutputs;
    for (double spent = 0; spent < 10e3 && n < (1 << 16); n++) {
      if (rt_time_candidate(f, a, nargs, 1, 0, 0, &c[n], 1) != 1) return 1;
      spent += c[n];
      printf("%.1f%s", c[n], n % 20 == 19 ? "\n" : " ");
    }
    printf("\n");
    qsort(c, (size_t)n, sizeof(double), cmp_d);
    ms = c[n / 2];
  } else {
    fprintf(stderr, "truth_probe: unknown mode %s\n", mode);
    return 2;
  }
  printf("%s %.4f\n", mode, ms);
  return ms > 0 ? 0 : 1;
}
