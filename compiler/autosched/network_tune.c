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
#include "front/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosched/autosched.h"
#include "cli/options.h"

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

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* What a record of a task for the code O compiles carries (rec_is): its workload, target
 * and code (--mcpu, --mtriple), made once per walk over the log. */
typedef struct TaskKey {
  char workload[17];
  const char *target, *code;
} TaskKey;

static TaskKey task_key(const Network *n, int task, const Options *o) {
  TaskKey k = {.target = target_names[o->target], .code = rec_code(o)};
  key_hex(n->tasks[task].key, k.workload);
  return k;
}

static bool task_record(const TaskKey *k, const Record *r) { return rec_is(r, k->workload, k->target, k->code); }

/* The successful records of TASK for O, as indices into the log L; *N gets how many. */
static int *task_records(const Network *n, int task, const Options *o, const RecordList *l, int *cnt) {
  TaskKey k = task_key(n, task, o);
  int *idx = xalloc(sizeof(int) * (size_t)(l->n + 1));
  *cnt = 0;
  for (int i = 0; i < l->n; i++)
    if (l->r[i].error == TE_OK && l->r[i].ncosts > 0 && task_record(&k, &l->r[i])) idx[(*cnt)++] = i;
  return idx;
}

/* The median of every cost of every record (among IDX[from..cnt)) with schedule TEXT. */
static double pooled_median(const RecordList *l, const int *idx, int from, int cnt, const char *text) {
  int m = 0, cap = 64;
  double *c = xalloc(sizeof(double) * (size_t)cap);
  for (int k = from; k < cnt; k++) {
    const Record *r = &l->r[idx[k]];
    if (strcmp(r->schedule, text)) continue;
    for (int j = 0; j < r->ncosts; j++) {
      if (m == cap) {
        double *g = xalloc(sizeof(double) * (size_t)(cap *= 2));
        memcpy(g, c, sizeof(double) * (size_t)m);
        c = g;
      }
      c[m++] = r->costs[j];
    }
  }
  qsort(c, (size_t)m, sizeof *c, cmp_double);
  return m ? c[m / 2] : INFINITY;
}

/* The best schedule of TASK: the least median over all measurements of one schedule, so a
 * schedule measured again (remeasure_best) is judged by all its runs, not its luckiest. */
static const char *best_schedule(const Network *n, int task, const Options *o, const char *path, double *ms) {
  const RecordList *l = records(path, false);
  int cnt;
  int *idx = task_records(n, task, o, l, &cnt);
  const char *best = NULL;
  *ms = INFINITY;
  for (int k = 0; k < cnt; k++) {
    const char *text = l->r[idx[k]].schedule;
    bool seen = false;
    for (int j = 0; j < k && !seen; j++) seen = !strcmp(l->r[idx[j]].schedule, text);
    if (seen) continue;
    double m = pooled_median(l, idx, k, cnt, text);
    if (m < *ms) *ms = m, best = text;
  }
  return best;
}

double net_task_best(const Network *n, int task, const Options *o, const char *path, Vec *steps) {
  double ms;
  const char *text = best_schedule(n, task, o, path, &ms);
  if (!text) return -1;
  if (steps && !parse_steps("<records>", text, steps)) return -1;
  return ms;
}

const char *net_task_record_text(const Network *n, int task, const Options *o, const char *path) {
  double ms;
  const char *text = best_schedule(n, task, o, path, &ms);
  return text ? xstrdup(text) : NULL;
}

/* Does the log hold a record of TASK for O with schedule TEXT? */
static bool has_schedule(const Network *n, int task, const Options *o, const char *path, const char *text) {
  const RecordList *l = records(path, false);
  TaskKey k = task_key(n, task, o);
  for (int i = 0; i < l->n; i++)
    if (task_record(&k, &l->r[i]) && !strcmp(l->r[i].schedule, text)) return true;
  return false;
}

/* Distinct schedules of TASK for O in the log (successful or not): its trials so far
 * (a schedule measured again by remeasure_best is not a new trial). */
static int task_trials(const Network *n, int task, const Options *o, const char *path) {
  const RecordList *l = records(path, false);
  TaskKey k = task_key(n, task, o);
  int *idx = xalloc(sizeof(int) * (size_t)(l->n + 1)), c = 0;
  for (int i = 0; i < l->n; i++) {
    if (!task_record(&k, &l->r[i])) continue;
    bool seen = false;
    for (int j = 0; j < c && !seen; j++) seen = !strcmp(l->r[idx[j]].schedule, l->r[i].schedule);
    if (!seen) idx[c++] = i;
  }
  return c;
}

/* ---- arguments ------------------------------------------------------------------- */

/* The command line's settings (cli/options.c) that the scheduler uses. */
typedef struct NetTuneArgs {
  const char *file, *records, *network; /* --kernel NAME: which network of the file */
  Target target;
  Options o; /* -O, --mcpu, --mtriple, --opencl-device: as kernels are tuned and networks run */
  int trials, round, repeat, jobs, batch;
  double time_s, min_repeat_ms, run_timeout_s;
  uint64_t seed;
  bool check_all; /* every candidate against the interpreter (--check-all) */
  bool quiet;     /* no round tables or progress: the final table only */
  Define *defs;
  int ndefs;
  RecordLog *log; /* open and locked for the tune's duration */
  TaskSource source; /* task_of for the measurer's workers */
  Measurer *local;   /* the tune's own measurer, kept from round to round (NULL: a shared one) */
} NetTuneArgs;

static NetTuneArgs args_of(const Cli *c) {
  return (NetTuneArgs){.file = c->file, .records = c->records, .target = c->o.target, .o = c->o,
                       .trials = c->trials, .round = c->round, .repeat = c->repeat,
                       .jobs = c->jobs, .time_s = c->time_s, .seed = c->seed, .network = c->kernel,
                       .check_all = c->check_all, .defs = (Define *)c->defs, .ndefs = c->ndefs, .batch = c->batch,
                       .min_repeat_ms = c->min_repeat_ms, .run_timeout_s = c->run_timeout_s, .quiet = c->quiet};
}

/* ---- the scheduler --------------------------------------------------------------- */

typedef struct TaskState {
  double best, prev_best; /* ms; INFINITY before a success */
  int trials;
  bool visited;           /* had a round in this run */
} TaskState;

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

/* The estimated latency of the network: sum(weight x best); +inf until every task has one. */
static double total_latency(const Network *n, const TaskState *st) {
  double total = 0;
  for (int i = 0; i < n->ntasks; i++) total += n->tasks[i].weight * st[i].best;
  return total;
}

/* Read back every task's best and trial count from the log. */
static void refresh(const Network *n, const NetTuneArgs *a, TaskState *st) {
  records(a->records, true);
  for (int i = 0; i < n->ntasks; i++) {
    double ms = net_task_best(n, i, &a->o, a->records, NULL);
    st[i].best = ms < 0 ? INFINITY : ms;
    st[i].trials = task_trials(n, i, &a->o, a->records);
  }
}

/* Bytes of weights a forward pass reads: parameters and what is folded from them (packed
 * filters, Winograd's), as the groups run per pass read them (f32). */
static int64_t weight_bytes(const Network *n) {
  int64_t bytes = 0;
  bool *seen = xalloc(sizeof(bool) * (size_t)(n->ntensors + 1));
  for (int k = 0; k < n->ngroups; k++)
    for (int p = 0; p < n->groups[k]->ninputs && !n->groups[k]->folded; p++) {
      const NetTensor *t = n->groups[k]->inputs[p];
      if (seen[t->index] || (t->kind != NT_WEIGHT && !net_is_folded(n, t))) continue;
      seen[t->index] = true;
      bytes += 4 * net_numel(t);
    }
  return bytes;
}

uint64_t net_cold_params(const Network *n, const NetGroup *g, const CpuInfo *cpu) {
  uint64_t cold = 0;
  if (!cpu) { /* a device: its cache is flushed whole, when a task reads weights */
    for (int p = 0; p < g->ninputs && p < 52; p++)
      if (g->inputs[p]->kind == NT_WEIGHT || net_is_folded(n, g->inputs[p])) cold |= (uint64_t)1 << p;
    return cold;
  }
  if (cpu->l3 > 0 && weight_bytes(n) <= cpu->l3 * 3 / 4) return 0;
  int k = 0, prev = -1; /* G's place in the run, and the group run just before it */
  while (k < n->ngroups && n->groups[k] != g) k++;
  for (int j = k - 1; j >= 0 && prev < 0; j--)
    if (!n->groups[j]->folded) prev = j;
  for (int p = 0; p < g->ninputs && p < 52; p++) {
    const NetTensor *t = g->inputs[p];
    int by = t->producer >= 0 ? n->nodes[t->producer]->group : -1;
    if (by < 0 || by != prev) cold |= (uint64_t)1 << p;
  }
  if (g->ninputs < 52) cold |= (uint64_t)1 << g->ninputs; /* the output: an arena slot */
  return cold;
}

/* The tuner's view of task I. */
static Task task_of(const Network *n, const NetTuneArgs *a, int i) {
  NetGroup *g = n->groups[n->tasks[i].group];
  Task t;
  memset(&t, 0, sizeof t);
  t.kernel = g->kernel;
  t.target = a->target;
  t.opts = a->o; /* compiled for the CPU (--mcpu, --mtriple) or device the run will use */
  key_hex(g->key, t.workload);
  t.flops = n->tasks[i].flops;
  t.network = n->name;
  t.weight = n->tasks[i].weight;
  t.cold_args = net_cold_params(n, g, backend_for(a->target)->device == DEVICE_CPU ? target_cpu(NULL) : NULL);
  t.source = a->source.at ? &a->source : NULL;
  t.index = i;
  return t;
}

/* The network and arguments behind a NetTuneArgs' TaskSource. */
typedef struct NetSource {
  const Network *n;
  const NetTuneArgs *a;
} NetSource;

static Task task_at(const void *ctx, int i) {
  const NetSource *src = ctx;
  return task_of(src->n, src->a, i);
}

static Measurer measurer_of(const NetTuneArgs *a) {
  MeasureOpts mo = {.repeat = a->repeat, .min_repeat_ms = a->min_repeat_ms, .build_timeout_s = 20,
                    .run_timeout_s = a->run_timeout_s > 0 ? a->run_timeout_s : 10, .check_all = a->check_all};
  mo.jobs = a->jobs > 0 ? a->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (mo.jobs < 1) mo.jobs = 1;
  if (tune_shared_measurer) { /* texc-mpi: the ranks measure */
    Measurer m = *tune_shared_measurer;
    m.o = mo;
    return m;
  }
  if (a->local) { /* one for the whole tune: its workers move from task to task */
    Measurer m = *a->local;
    m.o = mo;
    return m;
  }
  return measurer_local(&mo);
}

/* Done with M from measurer_of; a shared measurer keeps its state (lost or not), the
 * tune's own its workers. */
static void measurer_done(const NetTuneArgs *a, Measurer *m) {
  if (tune_shared_measurer) tune_shared_measurer->lost |= m->lost;
  else if (!a->local) measurer_local_free(m);
}

static bool measurers_lost(void) { return tune_shared_measurer && tune_shared_measurer->lost; }

/* Measure TEXTS[0..k) of task I with REPEAT runs each and append their records. */
static void measure_append(const Network *n, const NetTuneArgs *a, int i, char **texts, int k, int repeat) {
  Task t = task_of(n, a, i);
  NetTuneArgs b = *a;
  b.repeat = repeat;
  Measurer m = measurer_of(&b);
  Record *r = xalloc(sizeof *r * (size_t)(k + 1));
  memset(r, 0, sizeof *r * (size_t)(k + 1));
  m.measure(&m, &t, texts, k, r);
  for (int j = 0; j < k; j++) {
    r[j].workload = strdup(t.workload);
    r[j].kernel = strdup(t.kernel->name);
    r[j].target = strdup(target_names[t.target]);
    r[j].code = strdup(rec_code(&t.opts));
    if (!r[j].cpu) r[j].cpu = strdup(rt_cpu_name()); /* else the measuring rank's */
    if (!r[j].threads) r[j].threads = tune_threads();
    r[j].schedule = strdup(texts[j]);
    r[j].flops = t.flops;
    r[j].timestamp = tune_now();
    r[j].version = strdup(TEXC_VERSION);
    if (!r[j].error_msg) r[j].error_msg = strdup("");
    if (!r[j].host) rec_set_machine(&r[j]);
    r[j].network = strdup(n->name), r[j].weight = n->tasks[i].weight;
    if (r[j].error != TE_UNMEASURED) /* a lost rank's is measured by a later tune */
      records_write(a->log, &r[j]); /* a failure is reported and stops the tune */
    rec_free(&r[j]);
  }
  measurer_done(a, &m);
}

/* Measure task I's untuned default (network_sched.c) when the log does not hold it yet
 * (a new task, or a default changed since), so that the search starts from it and a tuned
 * task is never slower than an untuned one. false when nothing was measured. */
static bool measure_default(const Network *n, const NetTuneArgs *a, int i) {
  if (backend_for(a->target)->device != DEVICE_CPU) return false;
  char *text = net_default_steps(n->groups[n->tasks[i].group]->kernel);
  if (!text || has_schedule(n, i, &a->o, a->records, text)) return false;
  measure_append(n, a, i, &text, 1, a->repeat);
  return true;
}

#define REMEASURE_TOP 3

/* With --time, the part of it that the rounds may take; the rest is for remeasure_best. */
#define SEARCH_SHARE 0.9

/* After the search: the REMEASURE_TOP best schedules of every task (and its default) are
 * measured again, REMEASURE_TOP x 2 runs each, so that the best is judged by all its runs
 * (best_schedule pools them) rather than by one lucky measurement on a shared machine.
 * The tasks go by their share of the latency (weight x best), largest first; at DEADLINE_MS
 * (rt_now_ms; 0: none) it stops, the tasks left keeping the costs the search recorded.
 * Returns the tasks measured again. */
static int remeasure_best(const Network *n, const NetTuneArgs *a, const TaskState *st, double deadline_ms) {
  int *order = xalloc(sizeof(int) * (size_t)(n->ntasks + 1)), done = 0;
  double *share = xalloc(sizeof(double) * (size_t)(n->ntasks + 1));
  for (int i = 0; i < n->ntasks; i++) { /* insertion by weight x best, descending */
    share[i] = n->tasks[i].weight * (isinf(st[i].best) ? 0 : st[i].best);
    int j = i;
    for (; j > 0 && share[order[j - 1]] < share[i]; j--) order[j] = order[j - 1];
    order[j] = i;
  }
  for (int oi = 0; oi < n->ntasks && !records_failed(a->log) && !measurers_lost(); oi++, done++) {
    if (deadline_ms > 0 && rt_now_ms() > deadline_ms) break;
    int i = order[oi];
    const RecordList *l = records(a->records, true);
    int cnt;
    int *idx = task_records(n, i, &a->o, l, &cnt);
    const char **text = xalloc(sizeof(char *) * (size_t)(cnt + 1));
    double *cost = xalloc(sizeof(double) * (size_t)(cnt + 1));
    int nd = 0;
    for (int j = 0; j < cnt; j++) { /* distinct schedules and their pooled medians */
      bool seen = false;
      for (int q = 0; q < nd && !seen; q++) seen = !strcmp(text[q], l->r[idx[j]].schedule);
      if (seen) continue;
      text[nd] = l->r[idx[j]].schedule;
      cost[nd] = pooled_median(l, idx, j, cnt, text[nd]);
      nd++;
    }
    char *top[REMEASURE_TOP + 1];
    int k = 0;
    for (; k < REMEASURE_TOP && k < nd; k++) { /* selection of the least costs */
      int b = k;
      for (int q = k + 1; q < nd; q++)
        if (cost[q] < cost[b]) b = q;
      double c = cost[b];
      const char *t = text[b];
      cost[b] = cost[k], text[b] = text[k];
      cost[k] = c, text[k] = t;
      top[k] = xstrdup(t);
    }
    char *def = backend_for(a->target)->device == DEVICE_CPU ? net_default_steps(n->groups[n->tasks[i].group]->kernel) : NULL;
    bool def_in = !def;
    for (int q = 0; q < k && !def_in; q++) def_in = !strcmp(top[q], def);
    if (!def_in) top[k++] = def;
    if (k) measure_append(n, a, i, top, k, 2 * REMEASURE_TOP);
  }
  records(a->records, true);
  return done;
}

/* One round: TRIALS of task I, --batch (16) at a time; LEFT_S: seconds left of --time (0:
 * none), which the search stops at between batches of at most 8 (a 16-candidate round of a
 * large convolution took 44 s past a 150 s budget). */
static void tune_round(const Network *n, const NetTuneArgs *a, int i, int trials, uint64_t seed, double left_s) {
  Task t = task_of(n, a, i);
  Measurer m = measurer_of(a);
  int batch = a->batch > 0 ? a->batch : 16;
  if (left_s > 0 && batch > 8) batch = 8;
  SearchOpts so = {.trials = trials, .seed = seed, .batch = trials < batch ? trials : batch, .time_s = left_s,
                   .population = 64, .generations = 3, .eps_random = 0.1,
                   .log = a->log, .quiet = true};
  SearchResult res;
  Arena *ar = arena_new(), *old = arena_swap(ar);
  if (tune_search(&t, &m, &so, records(a->records, false), &res)) free(res.best_text);
  arena_swap(old);
  arena_free(ar);
  measurer_done(a, &m);
}

static int net_tune_rounds(Network *n, NetTuneArgs *pa, TaskState *st);

int net_tune_main(Cli *c) {
  if (c->deterministic) {
    fprintf(stderr, "texc tune: error: --deterministic applies to kernels: a network's rounds go to the tasks whose "
            "measured latencies weigh most, which no seed fixes\n");
    return 1;
  }
  NetTuneArgs a = args_of(c);
  NetRewrites rw = net_rewrites(a.target);
  Network *n = net_load(a.file, a.network, a.defs, a.ndefs, &rw);
  if (!n) return 1;
  while (n->ntasks > 0 && n->tasks[n->ntasks - 1].folded) n->ntasks--; /* run once at load (they come last): not tuned */
  TaskState *st = xalloc(sizeof *st * (size_t)(n->ntasks + 1));
  for (int i = 0; i < n->ntasks; i++) st[i].prev_best = INFINITY;
  a.log = records_open(a.records, false); /* before the search: fail fast */
  if (!a.log) return 1;
  NetSource src = {n, &a};
  a.source = (TaskSource){task_at, &src};
  Measurer local;
  if (!tune_shared_measurer) {
    local = measurer_of(&a);
    a.local = &local;
  }
  int rc = net_tune_rounds(n, &a, st);
  if (a.local) measurer_local_free(a.local);
  return rc;
}

/* The rounds of net_tune_main, then the best schedules measured again; its exit status. */
static int net_tune_rounds(Network *n, NetTuneArgs *pa, TaskState *st) {
  NetTuneArgs a = *pa;
  refresh(n, &a, st);
  printf("network %s: %d calls, %d tasks; records %s\n", n->name, n->nnodes, n->ntasks, a.records);
  double t0 = rt_now_ms();
  int used = 0;
  TuneProgress pg;
  progress_start(&pg);
  if (!a.quiet) print_table(n, st, 0, 0);
  /* --time bounds the whole run: the rounds stop at SEARCH_SHARE of it, the re-measuring
   * of the best at its end */
  double search_s = a.time_s * SEARCH_SHARE;
  for (int r = 1; used < a.trials && !records_failed(a.log) && !measurers_lost(); r++) {
    if (a.time_s > 0 && rt_now_ms() - t0 > search_s * 1e3) break;
    progress_end(&pg);
    int i = pick_task(n, st, a.round);
    int k = a.trials - used < a.round ? a.trials - used : a.round;
    int before = st[i].trials;
    if (!a.quiet) printf("\nround %d: task %d (%s), %d trials\n", r, i, n->groups[n->tasks[i].group]->kernel->name, k);
    double prev = st[i].best;
    int searched = k;
    if (!st[i].visited && measure_default(n, &a, i)) searched--; /* the default, once */
    double left_s = a.time_s > 0 ? search_s - (rt_now_ms() - t0) / 1e3 : 0;
    if (searched > 0 && !records_failed(a.log) && (a.time_s <= 0 || left_s > 0))
      tune_round(n, &a, i, searched, a.seed + (uint64_t)r * 7919u, left_s);
    refresh(n, &a, st);
    st[i].prev_best = prev;
    st[i].visited = true;
    if (st[i].trials == before) st[i].trials = before + k; /* nothing recorded: do not loop */
    used += st[i].trials - before < k ? st[i].trials - before : k; /* fewer when the time ran out */
    if (a.quiet) continue;
    print_table(n, st, (rt_now_ms() - t0) / 1e3, used);
    progress_show(&pg, "network", used, a.trials, total_latency(n, st), 0, a.time_s);
  }
  progress_end(&pg);
  if (measurers_lost()) {
    fprintf(stderr, "texc tune: error: no runner (or rank) is left to measure: stopped after %d trials; every "
            "record measured is in %s\n", used, a.records);
    records_close(a.log);
    return 1;
  }
  if (used > 0 && !records_failed(a.log)) {
    if (!a.quiet) printf("\nmeasuring the best schedules of every task again\n");
    int again = remeasure_best(n, &a, st, a.time_s > 0 ? t0 + a.time_s * 1e3 : 0);
    if (again < n->ntasks)
      printf("the time is up: %d of %d tasks measured again (the largest first); the others keep the costs "
             "the search recorded\n", again, n->ntasks);
    refresh(n, &a, st);
    print_table(n, st, (rt_now_ms() - t0) / 1e3, used);
  }
  return records_close(a.log) ? 0 : 1;
}

