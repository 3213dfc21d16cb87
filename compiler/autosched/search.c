/* search.c — the search loop, as Ansor's SketchPolicy: random annotation of sketches
 * until the cost model has data, then rounds of evolutionary search (mutation and
 * crossover, ranked by the XGBoost model), a few random picks (epsilon-greedy), a batch
 * measured, records appended, the model retrained. */
#include "autosched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOPK 16 /* measured candidates kept as seeds of the next population */

/* A candidate with what is known of it. */
typedef struct Entry {
  Cand c;
  char *text;
  uint64_t hash;
  float feat[FEAT_N];
  float score;
  double costs[REC_MAX_COSTS]; /* kept entries (top): the measured costs */
  int nc;
} Entry;

/* One training row: features and the measured mean cost (INFINITY for errors). */
typedef struct Row {
  float feat[FEAT_N];
  double ms;
} Row;

/* The state of one search. */
typedef struct Search {
  Task *task;
  const SketchSet *ss;
  const SearchOpts *o;
  Rng rng;
  CostModel *model;
  uint64_t *seen; /* open addressing: hashes of measured schedule texts */
  int seen_n, seen_cap;
  Row *rows;
  int nrows, caprows;
  Entry top[TOPK];
  int ntop;
  double best_ms;
  char *best_text;
  bool log_failed; /* a record could not be appended: the search stops */
  int next_sketch; /* random candidates take the sketches in turn (sample_random) */
  TuneProgress pg;
} Search;

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h ? h : 1;
}

static bool seen_has(const Search *s, uint64_t h) {
  if (!s->seen_cap) return false;
  for (int i = (int)(h % (uint64_t)s->seen_cap);; i = (i + 1) % s->seen_cap) {
    if (s->seen[i] == 0) return false;
    if (s->seen[i] == h) return true;
  }
}

static void seen_add(Search *s, uint64_t h) {
  if (seen_has(s, h)) return;
  if (2 * (s->seen_n + 1) > s->seen_cap) {
    uint64_t *old = s->seen;
    int oc = s->seen_cap;
    s->seen_cap = oc ? oc * 2 : 1024;
    s->seen = calloc((size_t)s->seen_cap, sizeof *s->seen);
    s->seen_n = 0;
    for (int i = 0; i < oc; i++)
      if (old[i]) seen_add(s, old[i]);
    free(old);
  }
  int i = (int)(h % (uint64_t)s->seen_cap);
  while (s->seen[i]) i = (i + 1) % s->seen_cap;
  s->seen[i] = h;
  s->seen_n++;
}

static void add_row(Search *s, const float *feat, double ms) {
  if (s->nrows == s->caprows) {
    s->caprows = s->caprows ? s->caprows * 2 : 256;
    s->rows = realloc(s->rows, sizeof(Row) * (size_t)s->caprows);
    if (!s->rows) die_oom(0);
  }
  memcpy(s->rows[s->nrows].feat, feat, sizeof(float) * FEAT_N);
  s->rows[s->nrows++].ms = ms;
}

bool tune_lower_features(const Task *task, const char *text, float *feat) {
  bool was = diag_silent;
  diag_silent = true;
  diag_reset();
  Vec steps = {0};
  LoweredFunc *fn = NULL;
  if (parse_steps("<candidate>", text, &steps)) {
    Schedule *s = sched_build(task->kernel, task->target, &steps);
    fn = s ? sched_lower(s, &task->opts) : NULL;
  }
  diag_silent = was;
  diag_reset();
  if (!fn) return false;
  features_extract(fn, feat);
  return true;
}

/* Render and lower C into E; false when its steps do not apply. */
static bool make_entry(Search *s, const Cand *c, Entry *e) {
  e->c = *c;
  e->text = sketch_render(s->ss, c);
  e->hash = text_hash(e->text);
  e->score = 0;
  bool (*feat)(const Task *, const char *, float *) =
      s->task->featurize ? s->task->featurize : tune_lower_features;
  if (feat(s->task, e->text, e->feat)) return true;
  free(e->text);
  e->text = NULL;
  return false;
}

/* Retrain a fresh model on every row, labels normalized by the best cost. */
static void retrain(Search *s) {
  model_free(s->model);
  s->model = model_new((int)s->o->seed);
  double best = INFINITY;
  for (int i = 0; i < s->nrows; i++) best = fmin(best, s->rows[i].ms);
  if (isinf(best)) return;
  for (int i = 0; i < s->nrows; i++)
    model_add(s->model, s->rows[i].feat, isinf(s->rows[i].ms) ? 0.0f : (float)(best / s->rows[i].ms));
  model_train(s->model);
}

static void score_all(Search *s, Entry *e, int n) {
  if (n == 0) return;
  float *x = calloc((size_t)n * FEAT_N, sizeof(float)), *y = calloc((size_t)n, sizeof(float));
  for (int i = 0; i < n; i++) memcpy(x + (size_t)i * FEAT_N, e[i].feat, sizeof(float) * FEAT_N);
  model_predict(s->model, x, n, y);
  for (int i = 0; i < n; i++) e[i].score = y[i];
  free(x);
  free(y);
}

static int by_score(const void *a, const void *b) {
  float x = ((const Entry *)a)->score, y = ((const Entry *)b)->score;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* A parent index chosen by tournament of two (the better score wins). */
static int pick_parent(Search *s, const Entry *e, int n) {
  int a = rng_int(&s->rng, n), b = rng_int(&s->rng, n);
  return e[a].score >= e[b].score ? a : b;
}

/* One generation: elites kept, the rest children of mutation or crossover. */
static int evolve(Search *s, Entry *pop, int n, Entry *next, int cap) {
  qsort(pop, (size_t)n, sizeof *pop, by_score);
  int m = 0, elites = n / 8;
  for (int i = 0; i < elites && m < cap; i++) {
    next[m] = pop[i];
    next[m++].text = strdup(pop[i].text);
  }
  for (int tries = 0; m < cap && tries < cap * 4; tries++) {
    Cand c = pop[pick_parent(s, pop, n)].c;
    if (rng_unit(&s->rng) < 0.15) {
      Cand d;
      if (sketch_crossover(s->ss, &s->rng, &c, &pop[pick_parent(s, pop, n)].c, &d)) c = d;
      else sketch_mutate(s->ss, &s->rng, &c);
    } else {
      sketch_mutate(s->ss, &s->rng, &c);
      if (rng_unit(&s->rng) < 0.3) sketch_mutate(s->ss, &s->rng, &c);
    }
    if (make_entry(s, &c, &next[m])) m++;
  }
  return m;
}

static void free_entries(Entry *e, int n) {
  for (int i = 0; i < n; i++) free(e[i].text);
}

/* Random valid candidates, unmeasured, into OUT (at most N; tries bounded). The sketches
 * take turns, so that a batch of random candidates (the whole first round, before the
 * model is trained) measures every sketch, however few trials the search has. */
static int sample_random(Search *s, Entry *out, int n) {
  int m = 0, ns = sketch_count(s->ss);
  for (int tries = 0; m < n && tries < n * 20 + 50 && ns > 0; tries++) {
    Cand c;
    sketch_sample_of(s->ss, s->next_sketch++ % ns, &s->rng, &c);
    if (!make_entry(s, &c, &out[m])) continue;
    bool dup = seen_has(s, out[m].hash);
    for (int j = 0; j < m && !dup; j++) dup = out[j].hash == out[m].hash;
    if (dup) free(out[m].text);
    else m++;
  }
  return m;
}

/* Append the unmeasured, distinct entries of SRC to BATCH (up to N). */
static int take(Search *s, Entry *src, int nsrc, Entry *batch, int nb, int n) {
  for (int i = 0; i < nsrc && nb < n; i++) {
    if (!src[i].text || seen_has(s, src[i].hash)) continue;
    bool dup = false;
    for (int j = 0; j < nb && !dup; j++) dup = batch[j].hash == src[i].hash;
    if (dup) continue;
    batch[nb] = src[i];
    batch[nb++].text = strdup(src[i].text);
  }
  return nb;
}

/* The next N candidates to measure into BATCH. */
static int pick_batch(Search *s, Entry *batch, int n) {
  if (!model_trained(s->model)) return sample_random(s, batch, n);
  int pn = s->o->population;
  Entry *pop = calloc((size_t)pn, sizeof *pop), *next = calloc((size_t)pn, sizeof *next);
  int np = 0;
  for (int i = 0; i < s->ntop && np < pn / 2; i++) { /* seeds: the best measured, mutated */
    Cand c = s->top[i].c;
    sketch_mutate(s->ss, &s->rng, &c);
    if (make_entry(s, &c, &pop[np])) np++;
  }
  np += sample_random(s, pop + np, pn - np);
  int nrand = (int)(n * s->o->eps_random + 0.5);
  Entry *rnd = calloc((size_t)nrand + 1, sizeof *rnd);
  int nr = sample_random(s, rnd, nrand);
  score_all(s, pop, np);
  Entry *all = calloc((size_t)pn * (size_t)(s->o->generations + 1), sizeof *all);
  int na = 0;
  for (int g = 0; g < s->o->generations && np > 0; g++) {
    int nn = evolve(s, pop, np, next, pn);
    score_all(s, next, nn);
    memcpy(all + na, pop, sizeof(Entry) * (size_t)np); /* keep every scored entry */
    na += np;
    Entry *t = pop; pop = next; next = t;
    np = nn;
  }
  memcpy(all + na, pop, sizeof(Entry) * (size_t)np);
  na += np;
  qsort(all, (size_t)na, sizeof *all, by_score);
  int nb = take(s, all, na, batch, 0, n - nr);
  nb = take(s, rnd, nr, batch, nb, n);
  free_entries(all, na);
  free_entries(rnd, nr);
  free(all); free(pop); free(next); free(rnd);
  return nb;
}

/* ---------------------------------------------------------------- bookkeeping */

static void keep_top(Search *s, const Entry *e, double ms, const Record *r) {
  if (isinf(ms)) return;
  Entry x = *e;
  x.nc = r ? r->ncosts : 0;
  if (r) memcpy(x.costs, r->costs, sizeof x.costs);
  x.score = (float)(-ms);
  bool full = s->ntop == TOPK;
  if (full && s->top[TOPK - 1].score >= x.score) return;
  int i = full ? TOPK - 1 : s->ntop++;
  free(s->top[i].text);
  x.text = strdup(e->text);
  s->top[i] = x;
  for (; i > 0 && s->top[i].score > s->top[i - 1].score; i--) {
    Entry t = s->top[i]; s->top[i] = s->top[i - 1]; s->top[i - 1] = t;
  }
}

static void fill_record(const Task *t, const char *text, Record *r) {
  r->workload = strdup(t->workload);
  r->kernel = strdup(t->kernel->name);
  r->target = strdup(target_names[t->target]);
  r->code = strdup(rec_code(&t->opts));
  if (!r->cpu) /* a runner (compiler/dist/) names the machine it measured on */
    r->cpu = strdup(backend_for(t->target)->device == DEVICE_CPU ? rt_cpu_name() : target_names[t->target]);
  if (!r->threads) r->threads = tune_threads();
  r->schedule = strdup(text);
  r->flops = t->flops;
  r->timestamp = tune_now();
  r->version = strdup(TEXC_VERSION);
  if (!r->error_msg) r->error_msg = strdup("");
  if (!r->host) rec_set_machine(r);
  if (t->network) r->network = strdup(t->network), r->weight = t->weight;
}

/* A new best is first compared with the interpreter; a wrong one becomes an error. */
static void verify_best(Search *s, Measurer *m, Record *r, bool check_all) {
  double ms = rec_cost(r);
  if (isinf(ms) || (!check_all && ms >= s->best_ms)) return;
  char msg[256] = "";
  int ok = m->check ? m->check(m, s->task, r->schedule, !check_all, msg, sizeof msg)
                    : measure_check(s->task, r->schedule, !check_all, msg, sizeof msg);
  if (ok == 0) {
    r->error = TE_WRONG;
    r->ncosts = 0;
    free(r->error_msg);
    r->error_msg = strdup(msg);
  } else if (ok < 0 && !s->o->quiet) {
    progress_end(&s->pg);
    fprintf(stderr, "texc tune: note: not checked against the interpreter: %s\n", msg);
  }
}

static void progress(Search *s, int round, int measured) {
  if (s->o->quiet) return;
  double gf = s->best_ms < INFINITY && s->task->flops > 0 ? s->task->flops / (s->best_ms * 1e6) : 0;
  char label[32];
  snprintf(label, sizeof label, "round %3d", round);
  progress_show(&s->pg, label, measured, s->o->trials, s->best_ms, gf, s->o->time_s);
}

/* Prior records of this task: skipped when met again, and rows for the model. */
static void warm_start(Search *s, const RecordList *prior) {
  const char *code = rec_code(&s->task->opts);
  for (int i = 0; prior && i < prior->n; i++) {
    const Record *r = &prior->r[i];
    if (!rec_is(r, s->task->workload, target_names[s->task->target], code)) continue;
    seen_add(s, text_hash(r->schedule));
    float feat[FEAT_N];
    if (!(s->task->featurize ? s->task->featurize : tune_lower_features)(s->task, r->schedule, feat))
      continue;
    double ms = rec_cost(r);
    add_row(s, feat, s->o->deterministic && !isinf(ms) ? features_pseudo_cost(feat) : ms);
    if (ms < s->best_ms) {
      s->best_ms = ms;
      free(s->best_text);
      s->best_text = strdup(r->schedule);
    }
  }
}

/* Measure BATCH, append the records, update the rows, the seeds and the best. */
static void measure_batch(Search *s, Measurer *m, Entry *batch, int n, SearchResult *res) {
  char **texts = malloc(sizeof(char *) * (size_t)n);
  Record *recs = calloc((size_t)n, sizeof *recs);
  for (int i = 0; i < n; i++) texts[i] = batch[i].text;
  m->measure(m, s->task, texts, n, recs);
  for (int i = 0; i < n; i++) {
    Record *r = &recs[i];
    if (r->error == TE_UNMEASURED) { /* a lost runner's: measured by a later tune */
      rec_free(r);
      continue;
    }
    fill_record(s->task, texts[i], r);
    verify_best(s, m, r, m->o.check_all);
    if (s->o->log && !s->log_failed && !records_write(s->o->log, r)) s->log_failed = true;
    double ms = rec_cost(r);
    /* what steers the search: the measured time, or its deterministic stand-in */
    bool ran = r->error == TE_OK || r->error == TE_RUN_TIMEOUT; /* a timeout is noise too */
    double steer = s->o->deterministic && ran ? features_pseudo_cost(batch[i].feat) : ms;
    seen_add(s, batch[i].hash);
    add_row(s, batch[i].feat, steer);
    keep_top(s, &batch[i], steer, r);
    res->measured++;
    if (r->error != TE_OK) res->errors++;
    if (ms < s->best_ms) {
      s->best_ms = ms;
      free(s->best_text);
      s->best_text = strdup(texts[i]);
    }
    rec_free(r);
  }
  free(recs);
  free(texts);
}

#define RETIME_TOP 8     /* candidates re-timed at the end of a long search */
#define RETIME_REPEAT 10 /* repeats of each */
#define RETIME_MIN_TRIALS 200
#define RETIME_MIN_MS 50 /* each re-timed cost: calls batched to at least this long */

/* The median of the costs of R1 and R2 together (R2 may be NULL). */
static double joint_median(const Record *r1, const Record *r2) {
  double c[2 * REC_MAX_COSTS];
  int n = 0;
  for (int i = 0; i < r1->ncosts; i++) c[n++] = r1->costs[i];
  for (int i = 0; r2 && i < r2->ncosts; i++) c[n++] = r2->costs[i];
  if (n == 0) return INFINITY;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
      double t = c[j]; c[j] = c[j - 1]; c[j - 1] = t;
    }
  return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

/* The best of many noisy measurements is optimistic (one lucky run): a long search ends by
 * re-timing its RETIME_TOP best candidates RETIME_REPEAT times. The new records are
 * appended; the best is the candidate with the lowest median of all its costs (as
 * records_best chooses), checked against the interpreter when it changes. */
static void retime_top(Search *s, Measurer *m) {
  int n = s->ntop < RETIME_TOP ? s->ntop : RETIME_TOP;
  char *texts[RETIME_TOP];
  Record recs[RETIME_TOP], old[RETIME_TOP];
  memset(recs, 0, sizeof recs);
  for (int i = 0; i < n; i++) texts[i] = s->top[i].text;
  MeasureOpts saved = m->o;
  m->o.repeat = RETIME_REPEAT;
  m->o.full = true; /* a warm-up at a slow moment must not cut a re-timing to one cost */
  /* measured as `texc bench` and an exported library timed from C (rt_time) measure: each
   * cost a batch of calls lasting at least RETIME_MIN_MS, not one call */
  if (m->o.min_repeat_ms < RETIME_MIN_MS) m->o.min_repeat_ms = RETIME_MIN_MS;
  m->measure(m, s->task, texts, n, recs);
  m->o = saved;
  int pick = -1;
  double pick_ms = INFINITY;
  for (int i = 0; i < n; i++) {
    Record *r = &recs[i];
    if (r->error == TE_UNMEASURED) continue;
    fill_record(s->task, texts[i], r);
    if (s->o->log && !s->log_failed && !records_write(s->o->log, r)) s->log_failed = true;
    old[i] = (Record){.ncosts = s->top[i].nc, .error = TE_OK};
    memcpy(old[i].costs, s->top[i].costs, sizeof old[i].costs);
    double ms = r->error == TE_OK ? joint_median(&old[i], r) : INFINITY;
    if (ms < pick_ms) {
      char msg[256] = "";
      if (strcmp(texts[i], s->best_text ? s->best_text : "") &&
          measure_check(s->task, texts[i], true, msg, sizeof msg) == 0)
        ms = INFINITY; /* never the best: wrong on small sizes */
      if (ms < pick_ms) pick = i, pick_ms = ms;
    }
  }
  if (pick >= 0) {
    s->best_ms = pick_ms;
    free(s->best_text);
    s->best_text = strdup(texts[pick]);
    /* Its figure from one more measurement, independent of those that chose it: the least
     * of several noisy medians is optimistic (bench/RESULTS.md, "One measured truth": the
     * top candidates re-measured at 2x their recorded costs, random ones at 1.2x). */
    Record fresh = {0};
    m->o.repeat = RETIME_REPEAT;
    m->o.full = true;
    if (m->o.min_repeat_ms < RETIME_MIN_MS) m->o.min_repeat_ms = RETIME_MIN_MS;
    m->measure(m, s->task, &texts[pick], 1, &fresh);
    m->o = saved;
    if (fresh.error == TE_OK && fresh.ncosts > 0) {
      fill_record(s->task, texts[pick], &fresh);
      if (s->o->log && !s->log_failed && !records_write(s->o->log, &fresh)) s->log_failed = true;
      s->best_ms = joint_median(&fresh, NULL);
    }
    rec_free(&fresh);
  }
  if (!s->o->quiet) {
    progress_end(&s->pg);
    fprintf(stderr, "re-timed the best %d candidates (%d repeats), the best once more: %.4f ms\n", n,
            RETIME_REPEAT, s->best_ms);
  }
  for (int i = 0; i < n; i++) rec_free(&recs[i]);
}

bool tune_search(Task *task, Measurer *m, const SearchOpts *o, const RecordList *prior,
                 SearchResult *res) {
  memset(res, 0, sizeof *res);
  SketchSet *ss = sketch_new(task->kernel, task->target, tune_threads());
  if (!ss) {
    fprintf(stderr, "texc tune: error: no sketch applies to kernel %s (the tuner does not take scatters yet: "
            "write its schedule by hand)\n", task->kernel->name);
    return false;
  }
  Search s = {.task = task, .ss = ss, .o = o, .rng = {o->seed * 0x2545F4914F6CDD1Dull + 7},
              .best_ms = INFINITY};
  s.model = model_new((int)o->seed);
  Arena *war = arena_new(), *wold = arena_swap(war);
  warm_start(&s, prior);
  arena_swap(wold);
  arena_free(war);
  retrain(&s);
  double t0 = rt_now_ms();
  progress_start(&s.pg);
  int batch_n = o->batch > 0 ? o->batch : 16;
  Entry *batch = calloc((size_t)batch_n, sizeof *batch);
  for (int round = 1, stall = 0;
       res->measured < o->trials && stall < 3 && !s.log_failed && !m->lost; round++) {
    if (o->time_s > 0 && rt_now_ms() - t0 > o->time_s * 1e3) break;
    Arena *ar = arena_new(), *old = arena_swap(ar);
    int want = o->trials - res->measured < batch_n ? o->trials - res->measured : batch_n;
    double tp = rt_now_ms();
    int n = pick_batch(&s, batch, want);
    double tm = rt_now_ms();
    stall = n == 0 ? stall + 1 : 0;
    measure_batch(&s, m, batch, n, res);
    free_entries(batch, n);
    arena_swap(old);
    arena_free(ar);
    double tr = rt_now_ms();
    retrain(&s);
    if (getenv("TEXC_TUNE_DEBUG")) {
      progress_end(&s.pg);
      fprintf(stderr, "[round %d] pick %.0f ms, measure %.0f ms, train %.0f ms\n", round,
              tm - tp, tr - tm, rt_now_ms() - tr);
    }
    progress(&s, round, res->measured);
  }
  progress_end(&s.pg);
  free(batch);
  if (!o->deterministic && o->trials >= RETIME_MIN_TRIALS && s.ntop > 1 && !s.log_failed && !m->lost &&
      (o->time_s <= 0 || rt_now_ms() - t0 < o->time_s * 1e3)) {
    Arena *ar = arena_new(), *old = arena_swap(ar);
    retime_top(&s, m);
    arena_swap(old);
    arena_free(ar);
  }
  res->best_ms = s.best_ms;
  res->best_text = s.best_text;
  res->log_failed = s.log_failed;
  free_entries(s.top, s.ntop);
  free(s.seen);
  free(s.rows);
  model_free(s.model);
  sketch_free(ss);
  return true;
}
