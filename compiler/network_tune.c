/* network_tune.c — `texc tune NET.tex`: task extraction and the task scheduler.
 *
 * The tasks of a network are its distinct workloads (kernel_workload_key of each fused
 * group), each weighted by how often it occurs. The objective is the estimated latency
 * sum(weight x best latency). Each round gives ROUND trials to one task: first every task
 * once (round robin), then the task with the largest gradient of the objective, as
 * Ansor's task scheduler estimates it:
 *
 *   g_i = w_i * (alpha * backward_i + (1 - alpha) * forward_i)
 *   backward_i = (best_i before its last round - best_i now) / ROUND   (observed gain)
 *   forward_i  = best_i / trials_i      (optimistic: the same rate of gain again)
 *
 * A task's first trial in a run is its untuned default (network_sched.c) unless the log
 * holds it already, so tuning starts from it.
 * Every round runs the tuner's own search (tune_search) on the task with the shared
 * records log as its prior, so rounds of one task continue each other and a rerun of the
 * command resumes: latencies and trial counts are read back from the log.
 */
#include "network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autosched/autosched.h"

/* ---- the records cache ----------------------------------------------------------- */

static RecordList cache;
static char *cache_path;

static const RecordList *records(const char *path, bool reload) {
  if (reload || !cache_path || strcmp(cache_path, path)) {
    reclist_free(&cache);
    memset(&cache, 0, sizeof cache);
    free(cache_path);
    cache_path = strdup(path);
    records_load(path, &cache);
  }
  return &cache;
}

static void key_hex(uint64_t key, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)key);
}

double net_task_best(const Network *n, int task, Target target, const char *path, Vec *steps) {
  char w[17];
  key_hex(n->tasks[task].key, w);
  const Record *r = records_best(records(path, false), w, target_names[target]);
  if (!r) return -1;
  if (steps && !parse_steps("<records>", r->schedule, steps)) return -1;
  return rec_cost(r); /* the statistic records_best ranks by (the median of the repeats) */
}

const char *net_task_record_text(const Network *n, int task, Target target, const char *path) {
  char w[17];
  key_hex(n->tasks[task].key, w);
  const Record *r = records_best(records(path, false), w, target_names[target]);
  return r ? xstrdup(r->schedule) : NULL;
}

/* Does the log hold a record of TASK on TARGET with schedule TEXT? */
static bool has_schedule(const Network *n, int task, Target target, const char *path, const char *text) {
  char w[17];
  key_hex(n->tasks[task].key, w);
  const RecordList *l = records(path, false);
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->r[i].workload, w) && !strcmp(l->r[i].target, target_names[target]) &&
        !strcmp(l->r[i].schedule, text))
      return true;
  return false;
}

/* Records of TASK on TARGET (successful or not): its trials so far. */
static int task_trials(const Network *n, int task, Target target, const char *path) {
  char w[17];
  key_hex(n->tasks[task].key, w);
  const RecordList *l = records(path, false);
  int c = 0;
  for (int i = 0; i < l->n; i++)
    if (!strcmp(l->r[i].workload, w) && !strcmp(l->r[i].target, target_names[target])) c++;
  return c;
}

/* ---- arguments ------------------------------------------------------------------- */

typedef struct NetTuneArgs {
  const char *file, *records;
  Target target;
  int trials, round, repeat, jobs;
  double time_s;
  uint64_t seed;
  Define defs[64];
  int ndefs;
} NetTuneArgs;

static bool parse_define(NetTuneArgs *a, const char *s) {
  const char *eq = strchr(s, '=');
  char *end;
  if (!eq || eq == s || a->ndefs == 64) return false;
  long long v = strtoll(eq + 1, &end, 0);
  if (*end || end == eq + 1) return false;
  a->defs[a->ndefs++] = (Define){xstrndup(s, (size_t)(eq - s)), v, false};
  return true;
}

static bool parse_target(const char *s, Target *t) {
  for (int i = 0; i < TARGET_COUNT; i++)
    if (strcmp(s, target_names[i]) == 0) return *t = (Target)i, true;
  return false;
}

/* OPT's value (for options that take one); false when it is not valid. */
static bool parse_opt(NetTuneArgs *a, const char *opt, const char *v) {
  char *end = NULL;
  long x = strtol(v, &end, 10);
  bool num = end && !*end && x >= 0;
  if (!strcmp(opt, "--records")) a->records = v;
  else if (!strcmp(opt, "--target")) return parse_target(v, &a->target);
  else if (!strcmp(opt, "--trials") && num) a->trials = (int)x;
  else if (!strcmp(opt, "--round") && num && x > 0) a->round = (int)x;
  else if (!strcmp(opt, "--repeat") && num && x > 0) a->repeat = (int)x;
  else if (!strcmp(opt, "--jobs") && num && x > 0) a->jobs = (int)x;
  else if (!strcmp(opt, "--seed") && num) a->seed = (uint64_t)x;
  else if (!strcmp(opt, "--time")) {
    a->time_s = strtod(v, &end);
    if (*end == 'm') a->time_s *= 60, end++;
    else if (*end == 'h') a->time_s *= 3600, end++;
    else if (*end == 's') end++;
    return !*end && a->time_s >= 0;
  } else return false;
  return true;
}

static const char *usage =
    "usage: texc tune NET.tex [--trials N] [--round N] [--time 10m] [--records F.jsonl]\n"
    "                [--target llvm|cuda|opencl] [--seed S] [--repeat N] [-D NAME=VALUE]\n";

static bool parse_args(int argc, char **argv, NetTuneArgs *a) {
  *a = (NetTuneArgs){.records = getenv("TEXC_RECORDS") ? getenv("TEXC_RECORDS") : "texc-records.jsonl",
                     .target = TARGET_LLVM, .trials = 200, .round = 16, .repeat = 3, .seed = 1};
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (!strcmp(s, "-D") && i + 1 < argc) {
      if (!parse_define(a, argv[++i])) return fprintf(stderr, "texc tune: bad -D %s\n", argv[i]), false;
    } else if (!strncmp(s, "-D", 2) && s[2]) {
      if (!parse_define(a, s + 2)) return fprintf(stderr, "texc tune: bad %s\n", s), false;
    } else if (s[0] == '-' && s[1] == '-' && i + 1 < argc) {
      const char *eq = strchr(s, '=');
      bool ok = eq ? parse_opt(a, xstrndup(s, (size_t)(eq - s)), eq + 1) : parse_opt(a, s, argv[++i]);
      if (!ok) return fprintf(stderr, "texc tune: bad option %s\n%s", s, usage), false;
    } else if (s[0] != '-' && !a->file) a->file = s;
    else return fprintf(stderr, "texc tune: unexpected '%s'\n%s", s, usage), false;
  }
  if (!a->file) return fputs(usage, stderr), false;
  return true;
}

/* ---- the scheduler --------------------------------------------------------------- */

typedef struct TaskState {
  double best, prev_best; /* ms; INFINITY before a success */
  int trials;
  bool visited;           /* had a round in this run */
} TaskState;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The next task: one not yet tuned at all, else the largest gradient. */
static int pick_task(const Network *n, const TaskState *st, int round) {
  for (int i = 0; i < n->ntasks; i++)
    if (st[i].trials == 0 || (isinf(st[i].best) && !st[i].visited)) return i;
  const double alpha = 0.2;
  int best = 0;
  double gbest = -INFINITY;
  for (int i = 0; i < n->ntasks; i++) {
    double b = isinf(st[i].best) ? 1e3 : st[i].best;
    double back = isinf(st[i].prev_best) ? 0 : (st[i].prev_best - b) / round;
    double fwd = b / (st[i].trials > 0 ? st[i].trials : 1);
    double g = n->tasks[i].weight * (alpha * back + (1 - alpha) * fwd);
    if (g > gbest) gbest = g, best = i;
  }
  return best;
}

static void print_table(const Network *n, const TaskState *st, double used_s, int used_trials) {
  printf("|  ID | %-40s | latency (ms) |  GFLOP/s | trials |\n", "task");
  printf("|-----|------------------------------------------|--------------|----------|--------|\n");
  double total = 0;
  bool all = true;
  for (int i = 0; i < n->ntasks; i++) {
    const char *name = n->groups[n->tasks[i].group]->kernel->name;
    char label[64];
    snprintf(label, sizeof label, "%s x%d", name, n->tasks[i].weight);
    if (isinf(st[i].best)) {
      printf("| %3d | %-40s | %12s | %8s | %6d |\n", i, label, "-", "-", st[i].trials);
      all = false;
      continue;
    }
    printf("| %3d | %-40s | %12.4f | %8.2f | %6d |\n", i, label, st[i].best,
           n->tasks[i].flops / (st[i].best * 1e6), st[i].trials);
    total += n->tasks[i].weight * st[i].best;
  }
  int trials = 0;
  for (int i = 0; i < n->ntasks; i++) trials += st[i].trials;
  if (all) printf("Estimated total latency: %.3f ms", total);
  else printf("Estimated total latency: - ms");
  printf("  Trials: %d  Used time: %.0f s  (this run: %d trials)\n", trials, used_s, used_trials);
  fflush(stdout);
}

/* Read back every task's best and trial count from the log. */
static void refresh(const Network *n, const NetTuneArgs *a, TaskState *st) {
  records(a->records, true);
  for (int i = 0; i < n->ntasks; i++) {
    double ms = net_task_best(n, i, a->target, a->records, NULL);
    st[i].best = ms < 0 ? INFINITY : ms;
    st[i].trials = task_trials(n, i, a->target, a->records);
  }
}

/* The tuner's view of task I. */
static Task task_of(const Network *n, const NetTuneArgs *a, int i) {
  NetGroup *g = n->groups[n->tasks[i].group];
  Task t;
  memset(&t, 0, sizeof t);
  t.kernel = g->kernel;
  t.target = a->target;
  t.opts = (Options){.target = a->target, .opt_level = 3, .gpu = {1024, 49152}};
  key_hex(g->key, t.workload);
  t.flops = n->tasks[i].flops;
  return t;
}

static Measurer measurer_of(const NetTuneArgs *a) {
  MeasureOpts mo = {.repeat = a->repeat, .build_timeout_s = 20, .run_timeout_s = 10};
  mo.jobs = a->jobs > 0 ? a->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (mo.jobs < 1) mo.jobs = 1;
  return measurer_local(&mo);
}

/* Measure task I's untuned default (network_sched.c) when the log does not hold it yet
 * (a new task, or a default changed since), so that the search starts from it and a tuned
 * task is never slower than an untuned one. false when nothing was measured. */
static bool measure_default(const Network *n, const NetTuneArgs *a, int i) {
  if (a->target != TARGET_LLVM) return false;
  Task t = task_of(n, a, i);
  char *text = net_default_steps(t.kernel);
  if (!text || has_schedule(n, i, a->target, a->records, text)) return false;
  Measurer m = measurer_of(a);
  Record r;
  memset(&r, 0, sizeof r);
  m.measure(&m, &t, &text, 1, &r);
  r.workload = strdup(t.workload);
  r.kernel = strdup(t.kernel->name);
  r.target = strdup(target_names[t.target]);
  r.cpu = strdup(tune_cpu_name());
  r.threads = tune_threads();
  r.schedule = strdup(text);
  r.flops = t.flops;
  r.timestamp = tune_now();
  r.version = strdup(TEXC_VERSION);
  if (!r.error_msg) r.error_msg = strdup("");
  records_append(a->records, &r);
  rec_free(&r);
  free(m.ctx);
  return true;
}

/* One round of trials on task I. */
static void tune_round(const Network *n, const NetTuneArgs *a, int i, int trials, uint64_t seed) {
  Task t = task_of(n, a, i);
  Measurer m = measurer_of(a);
  SearchOpts so = {.trials = trials, .seed = seed, .batch = trials < 16 ? trials : 16,
                   .population = 64, .generations = 3, .eps_random = 0.1,
                   .records = a->records, .quiet = true};
  SearchResult res;
  Arena *ar = arena_new(), *old = arena_swap(ar);
  if (tune_search(&t, &m, &so, records(a->records, false), &res)) free(res.best_text);
  arena_swap(old);
  arena_free(ar);
  free(m.ctx);
}

int net_tune_main(int argc, char **argv) {
  NetTuneArgs a;
  if (!parse_args(argc, argv, &a)) return 1;
  Network *n = net_load(a.file, a.defs, a.ndefs);
  if (!n) return 1;
  TaskState *st = xalloc(sizeof *st * (size_t)(n->ntasks + 1));
  for (int i = 0; i < n->ntasks; i++) st[i].prev_best = INFINITY;
  refresh(n, &a, st);
  printf("network %s: %d calls, %d tasks; records %s\n", n->name, n->nnodes, n->ntasks, a.records);
  double t0 = now_s();
  int used = 0;
  print_table(n, st, 0, 0);
  for (int r = 1; used < a.trials; r++) {
    if (a.time_s > 0 && now_s() - t0 > a.time_s) break;
    int i = pick_task(n, st, a.round);
    int k = a.trials - used < a.round ? a.trials - used : a.round;
    int before = st[i].trials;
    printf("\nround %d: task %d (%s), %d trials\n", r, i, n->groups[n->tasks[i].group]->kernel->name, k);
    double prev = st[i].best;
    int searched = k;
    if (!st[i].visited && measure_default(n, &a, i)) searched--; /* the default, once */
    if (searched > 0) tune_round(n, &a, i, searched, a.seed + (uint64_t)r * 7919u);
    refresh(n, &a, st);
    st[i].prev_best = prev;
    st[i].visited = true;
    if (st[i].trials == before) st[i].trials = before + k; /* nothing recorded: do not loop */
    used += k;
    print_table(n, st, now_s() - t0, used);
  }
  return 0;
}
