/* tune.c — `texc tune FILE ...` and tune_auto_steps (`schedule K.V = auto`). */
#include "autosched.h"
#include "cli/options.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_RECORDS "texc-records.jsonl"

Measurer *tune_shared_measurer;
#define AUTO_TRIALS 64

/* The tuner's settings: the command line's (cli/options.c), or tune_auto_steps' own. */
typedef struct TuneArgs {
  const char *file, *kernel, *records;
  Target target;
  int trials, repeat, batch, jobs;
  double time_s, min_repeat_ms, run_timeout_s;
  uint64_t seed;
  Define *defs;
  int ndefs;
  bool check_all, quiet, deterministic;
  RecordLog *log; /* open and locked for the tune's duration */
} TuneArgs;

static TuneArgs args_of(const Cli *c) {
  return (TuneArgs){.file = c->file, .kernel = c->kernel, .records = c->records,
                    .target = c->o.target, .trials = c->trials, .repeat = c->repeat,
                    .batch = c->batch, .jobs = c->jobs, .time_s = c->time_s,
                    .min_repeat_ms = c->min_repeat_ms, .run_timeout_s = c->run_timeout_s,
                    .seed = c->seed, .defs = (Define *)c->defs, .ndefs = c->ndefs,
                    .check_all = c->check_all, .quiet = c->quiet, .deterministic = c->deterministic};
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
  for (int i = 0; i < k->nops; i++)
    if (k->ops[i]->ext) {
      diag_error(k->ops[i]->loc, "kernel '%s' calls extern kernel %s: the tuner does not schedule "
                 "kernels with extern calls; write a hand schedule", k->name, k->ops[i]->ext->callee);
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
                  .log = a->log, .quiet = a->quiet, .deterministic = a->deterministic};
  return s;
}

MeasureOpts tune_measure_opts(const Cli *c) {
  TuneArgs a = args_of(c);
  return measure_opts(&a);
}

/* Tune one kernel, measured by tune_shared_measurer when it is set (a runner, texc-mpi's
 * ranks), else here; prints the best block. Returns false when nothing succeeded. */
static bool tune_kernel(const TuneArgs *a, Task *t, const RecordList *prior) {
  MeasureOpts mo = measure_opts(a);
  Measurer *shared = tune_shared_measurer;
  Measurer m = shared ? *shared : measurer_local(&mo);
  m.o = mo;
  SearchOpts so = search_opts(a);
  SearchResult res;
  if (!a->quiet && a->trials == INT_MAX)
    fprintf(stderr, "tuning %s for %s: workload %s, %.3g GFLOP, for %.0f s\n", t->kernel->name,
            target_names[t->target], t->workload, t->flops / 1e9, a->time_s);
  else if (!a->quiet)
    fprintf(stderr, "tuning %s for %s: workload %s, %.3g GFLOP, %d trials%s\n", t->kernel->name,
            target_names[t->target], t->workload, t->flops / 1e9, a->trials,
            a->time_s > 0 ? " at most" : "");
  bool ok = tune_search(t, &m, &so, prior, &res);
  if (shared) shared->lost = m.lost;
  else measurer_local_free(&m);
  if (m.lost) {
    fprintf(stderr, "texc tune: error: no runner (or rank) is left to measure: stopped %s after %d trials (%d errors); "
            "every record measured is in %s\n", t->kernel->name, res.measured, res.errors, a->records);
    free(res.best_text);
    return false;
  }
  if (res.log_failed) { /* reported: no result that its records do not back */
    free(res.best_text);
    return false;
  }
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

int tune_main(Cli *c, Program *p) {
  TuneArgs a = args_of(c);
  if (a.repeat > REC_MAX_COSTS) {
    fprintf(stderr, "texc: error: --repeat expects at most %d, not %d\n", REC_MAX_COSTS, a.repeat);
    return 1;
  }
  Target tg = a.target;
  Ast *file = c->ast;
  a.log = records_open(a.records, false); /* before the search: fail fast */
  if (!a.log) return 1;
  RecordList prior = {0};
  records_load(a.records, &prior);
  int rc = 0;
  for (int i = 0; i < p->nkernels; i++) { /* drv_load checked that --kernel names one */
    Kernel *k = p->kernels[i];
    if (a.kernel && strcmp(k->name, a.kernel)) continue;
    Task t;
    if (!task_init(&t, k, tg, file, a.file, a.defs, a.ndefs)) {
      rc = 1;
      continue;
    }
    t.opts = c->o; /* -O, --mcpu, --opencl-device as for run and bench */
    if (!tune_kernel(&a, &t, &prior)) rc = 1;
    if (records_failed(a.log) || (tune_shared_measurer && tune_shared_measurer->lost))
      break; /* reported; the records before it are kept */
  }
  reclist_free(&prior);
  if (!records_close(a.log)) rc = 1;
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
  const Record *best = records_best(&l, task.workload, target_names[t], rec_code(&task.opts));
  if (best) {
    bool ok = steps_from_text(best->schedule, steps);
    reclist_free(&l);
    return ok;
  }
  fprintf(stderr, "texc: note: no record for %s on %s in %s: searching %d trials\n", k->name,
          target_names[t], path, AUTO_TRIALS);
  TuneArgs a = {.records = path, .trials = AUTO_TRIALS, .repeat = 3, .seed = 1, .batch = 16,
                .quiet = true, .log = records_open(path, false)};
  if (!a.log) {
    reclist_free(&l);
    return false;
  }
  MeasureOpts mo = measure_opts(&a);
  Measurer m = measurer_local(&mo);
  SearchOpts so = search_opts(&a);
  SearchResult res;
  bool ok = tune_search(&task, &m, &so, &l, &res) && res.best_text;
  bool logged = records_close(a.log) && !res.log_failed;
  measurer_local_free(&m);
  reclist_free(&l);
  if (!logged) {
    free(res.best_text);
    return false;
  }
  if (!ok) {
    diag_error(k->loc, "auto schedule of '%s': no candidate could be measured", k->name);
    free(res.best_text);
    return false;
  }
  ok = steps_from_text(res.best_text, steps);
  free(res.best_text);
  return ok;
}
