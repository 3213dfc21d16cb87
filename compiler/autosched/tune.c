/* tune.c — `texc tune FILE ...` and tune_auto_steps (`schedule K.V = auto`). */
#include "autosched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_RECORDS "texc-records.jsonl"
#define AUTO_TRIALS 64

typedef struct TuneArgs {
  const char *file, *kernel, *records, *target;
  int trials, repeat, batch, jobs;
  double time_s, min_repeat_ms, run_timeout_s;
  uint64_t seed;
  Define defs[64];
  int ndefs;
  bool check_all, quiet, deterministic;
} TuneArgs;

static const char *usage =
    "usage: texc tune FILE.tex [--kernel K] [--trials N] [--time 10m] [--records F.jsonl]\n"
    "                 [--target llvm|cuda|opencl] [--seed S] [--repeat N] [--min-repeat-ms MS]\n"
    "                 [--deterministic] [-D NAME=VALUE]\n";

/* "90", "90s", "10m", "1h" in seconds; negative when malformed. */
static double parse_duration(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || v < 0) return -1;
  if (*end == 0 || strcmp(end, "s") == 0) return v;
  if (strcmp(end, "m") == 0) return v * 60;
  if (strcmp(end, "h") == 0) return v * 3600;
  return -1;
}

static bool parse_define(const char *s, TuneArgs *a) {
  const char *eq = strchr(s, '=');
  if (!eq || eq == s || a->ndefs == 64) return false;
  char *end;
  long long v = strtoll(eq + 1, &end, 10);
  if (*end || end == eq + 1) return false;
  a->defs[a->ndefs++] = (Define){xstrndup(s, (size_t)(eq - s)), v, false};
  return true;
}

static bool target_parse(const char *s, Target *t) {
  for (int i = 0; i < TARGET_COUNT; i++)
    if (strcmp(s, target_names[i]) == 0) return *t = (Target)i, true;
  return false;
}

/* One option with a value; false on a malformed value. */
static bool parse_opt(TuneArgs *a, const char *opt, const char *v) {
  if (!strcmp(opt, "--kernel")) a->kernel = v;
  else if (!strcmp(opt, "--trials")) a->trials = atoi(v);
  else if (!strcmp(opt, "--time")) return (a->time_s = parse_duration(v)) >= 0;
  else if (!strcmp(opt, "--records")) a->records = v;
  else if (!strcmp(opt, "--target")) a->target = v;
  else if (!strcmp(opt, "--seed")) a->seed = strtoull(v, NULL, 10);
  else if (!strcmp(opt, "--repeat")) a->repeat = atoi(v);
  else if (!strcmp(opt, "--min-repeat-ms")) a->min_repeat_ms = atof(v);
  else if (!strcmp(opt, "--batch")) a->batch = atoi(v);
  else if (!strcmp(opt, "--jobs")) a->jobs = atoi(v);
  else if (!strcmp(opt, "--run-timeout")) return (a->run_timeout_s = parse_duration(v)) > 0;
  else if (!strcmp(opt, "-D")) return parse_define(v, a);
  else return false;
  return true;
}

static bool parse_args(int argc, char **argv, TuneArgs *a) {
  *a = (TuneArgs){.records = DEFAULT_RECORDS, .target = "llvm", .trials = 200, .repeat = 3,
                  .seed = 1, .batch = 16};
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "--check-all")) a->check_all = true; /* hidden: for the tests */
    else if (!strcmp(s, "--quiet")) a->quiet = true;
    else if (!strcmp(s, "--deterministic")) a->deterministic = true;
    else if (!strncmp(s, "-D", 2) && s[2]) {
      if (!parse_define(s + 2, a)) return fprintf(stderr, "texc tune: bad -D '%s'\n", s), false;
    } else if (s[0] == '-') {
      if (i + 1 >= argc || !parse_opt(a, s, argv[i + 1]))
        return fprintf(stderr, "texc tune: bad option '%s'\n%s", s, usage), false;
      i++;
    } else if (!a->file) a->file = s;
    else return fprintf(stderr, "texc tune: unexpected '%s'\n%s", s, usage), false;
  }
  if (!a->file) return fputs(usage, stderr), false;
  if (a->trials <= 0 || a->repeat <= 0 || a->repeat > REC_MAX_COSTS)
    return fprintf(stderr, "texc tune: --trials and --repeat (1..%d) must be positive\n", REC_MAX_COSTS), false;
  return true;
}

/* Fill TASK for kernel K; false (reported) when it cannot be tuned. */
static bool task_init(Task *t, Kernel *k, Target tg, Ast *file, const char *path, Define *defs,
                      int ndefs) {
  memset(t, 0, sizeof *t);
  if (k->nsizes > 0) {
    diag_error(k->loc, "kernel '%s' has the symbolic size '%s': tune it with -D %s=VALUE",
               k->name, k->sizes[0]->name, k->sizes[0]->name);
    return false;
  }
  t->file = file;
  t->path = path;
  t->defs = defs;
  t->ndefs = ndefs;
  t->kernel = k;
  t->target = tg;
  t->opts = (Options){.target = tg, .opt_level = 3};
  snprintf(t->workload, sizeof t->workload, "%016llx", (unsigned long long)kernel_workload_key(k));
  t->flops = kernel_flops(k);
  return true;
}

static MeasureOpts measure_opts(const TuneArgs *a) {
  MeasureOpts m = {.repeat = a->repeat, .min_repeat_ms = a->min_repeat_ms,
                   .build_timeout_s = 20, .run_timeout_s = a->run_timeout_s > 0 ? a->run_timeout_s : 10,
                   .check_all = a->check_all};
  m.jobs = a->jobs > 0 ? a->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (m.jobs < 1) m.jobs = 1;
  return m;
}

static SearchOpts search_opts(const TuneArgs *a) {
  SearchOpts s = {.trials = a->trials, .time_s = a->time_s, .seed = a->seed, .batch = a->batch,
                  .population = 64, .generations = 3, .eps_random = 0.1,
                  .records = a->records, .quiet = a->quiet, .deterministic = a->deterministic};
  return s;
}

/* Tune one kernel; prints the best block. Returns false when nothing succeeded. */
static bool tune_kernel(const TuneArgs *a, Task *t, const RecordList *prior) {
  MeasureOpts mo = measure_opts(a);
  Measurer m = measurer_local(&mo);
  SearchOpts so = search_opts(a);
  SearchResult res;
  if (!a->quiet)
    fprintf(stderr, "tuning %s for %s: workload %s, %.3g GFLOP, %d trials\n", t->kernel->name,
            target_names[t->target], t->workload, t->flops / 1e9, a->trials);
  bool ok = tune_search(t, &m, &so, prior, &res);
  free(m.ctx);
  if (!ok || !res.best_text) {
    fprintf(stderr, "texc tune: error: no schedule of %s could be measured (%d trials, %d errors)\n",
            t->kernel->name, res.measured, res.errors);
    free(res.best_text);
    return false;
  }
  printf("# %s: %.4f ms, %.2f GFLOP/s (%d trials, %d errors)\n", t->kernel->name, res.best_ms,
         t->flops > 0 ? t->flops / (res.best_ms * 1e6) : 0.0, res.measured, res.errors);
  tune_print_block(stdout, t->kernel->name, "tuned", target_names[t->target], res.best_text);
  fflush(stdout);
  free(res.best_text);
  return true;
}

int tune_main(int argc, char **argv) {
  TuneArgs a;
  if (!parse_args(argc, argv, &a)) return 1;
  Target tg;
  if (!target_parse(a.target, &tg)) {
    fprintf(stderr, "texc tune: unknown target '%s' (llvm, cuda, opencl)\n", a.target);
    return 1;
  }
  Ast *file = parse_file(a.file);
  Program *p = file ? check_program(file, a.defs, a.ndefs) : NULL;
  if (!p) return 1;
  for (int i = 0; i < a.ndefs; i++)
    if (!a.defs[i].used)
      fprintf(stderr, "texc tune: warning: -D %s is not a constant or size of %s\n",
              a.defs[i].name, a.file);
  RecordList prior = {0};
  records_load(a.records, &prior);
  int ntuned = 0, rc = 0;
  for (int i = 0; i < p->nkernels; i++) {
    Kernel *k = p->kernels[i];
    if (a.kernel && strcmp(k->name, a.kernel)) continue;
    ntuned++;
    Task t;
    if (!task_init(&t, k, tg, file, a.file, a.defs, a.ndefs) || !tune_kernel(&a, &t, &prior))
      rc = 1;
  }
  if (a.kernel && ntuned == 0) {
    fprintf(stderr, "texc tune: error: no kernel '%s' in %s\n", a.kernel, a.file);
    rc = 1;
  }
  reclist_free(&prior);
  return rc;
}

/* The steps of TEXT into STEPS; false (reported) when they do not parse. */
static bool steps_from_text(const char *text, Vec *steps) {
  return parse_steps("<records>", text, steps);
}

bool tune_auto_steps(Kernel *k, Target t, const Options *o, const char *records_path,
                     Vec *steps) {
  const char *path = records_path ? records_path : DEFAULT_RECORDS;
  Task task;
  if (!task_init(&task, k, t, NULL, NULL, NULL, 0)) return false;
  task.opts = *o;
  task.opts.target = t;
  RecordList l = {0};
  records_load(path, &l);
  const Record *best = records_best(&l, task.workload, target_names[t]);
  if (best) {
    bool ok = steps_from_text(best->schedule, steps);
    reclist_free(&l);
    return ok;
  }
  fprintf(stderr, "texc: note: no record for %s on %s in %s: searching %d trials\n", k->name,
          target_names[t], path, AUTO_TRIALS);
  TuneArgs a = {.records = path, .trials = AUTO_TRIALS, .repeat = 3, .seed = 1, .batch = 16,
                .quiet = true};
  MeasureOpts mo = measure_opts(&a);
  Measurer m = measurer_local(&mo);
  SearchOpts so = search_opts(&a);
  SearchResult res;
  bool ok = tune_search(&task, &m, &so, &l, &res) && res.best_text;
  free(m.ctx);
  reclist_free(&l);
  if (!ok) {
    diag_error(k->loc, "auto schedule of '%s': no candidate could be measured", k->name);
    free(res.best_text);
    return false;
  }
  ok = steps_from_text(res.best_text, steps);
  free(res.best_text);
  return ok;
}
