/* test_tune.c — the auto-scheduler's pieces in isolation: records, the cost model,
 * features on hand-built IR, sketches of a hand-built matmul, the search loop with a
 * fake measurer. */
#include "autosched/autosched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

static void check(bool ok, const char *name) {
  printf("%s - %s\n", ok ? "ok" : "not ok", name);
  if (!ok) failures++;
}

static Record sample_record(int i) {
  Record r = {0};
  r.workload = strdup("00ff00ff00ff00ff");
  r.kernel = strdup("matmul");
  r.target = strdup("llvm");
  r.cpu = strdup("test cpu \"quoted\"");
  r.threads = 2;
  r.schedule = strdup(i % 2 ? "io, ii = split(C.i, 4)\nparallel(io)" : "vectorize(C.j)");
  r.costs[0] = 1.5 + i;
  r.costs[1] = 1.25 + i;
  r.ncosts = 2;
  if (i == 1) { /* tuned for another CPU: the fastest, but not for the host */
    r.code = strdup("--mcpu haswell");
    r.costs[0] = r.costs[1] = 0.5;
  }
  r.error = i == 3 ? TE_RUNTIME : TE_OK;
  if (r.error) r.ncosts = 0;
  r.error_msg = strdup(i == 3 ? "crashed (signal 11)" : "");
  r.flops = 2e9;
  r.timestamp = 1700000000 + i;
  r.version = strdup(TEXC_VERSION);
  return r;
}

static void test_records(void) {
  char path[] = "/tmp/texc-test-records-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  RecordLog *log = records_open(path, false);
  check(log != NULL, "records: log opens");
  for (int i = 0; i < 4; i++) {
    Record r = sample_record(i);
    check(records_write(log, &r), "records: write");
    rec_free(&r);
  }
  fprintf(stderr, "(an in-use error expected:)\n");
  check(records_open(path, false) == NULL, "records: a second writer is refused (flock)");
  check(records_close(log), "records: close");
  FILE *f = fopen(path, "a");
  fputs("{not json\n{\"foreign\": 1}\n\n", f); /* two bad lines, one blank */
  fputs("{\"workload\": \"cut off mid-wri", f); /* a killed writer's last line */
  fclose(f);
  fprintf(stderr, "(a cut-off warning expected:)\n");
  log = records_open(path, false); /* ends the cut line: the next record is not lost */
  Record r = sample_record(5);
  check(log && records_write(log, &r), "records: write after a cut line");
  rec_free(&r);
  check(records_close(log), "records: close");
  RecordList l = {0};
  fprintf(stderr, "(three warnings expected:)\n");
  check(records_load(path, &l), "records load");
  check(l.n == 5, "records: corrupt, foreign and cut lines skipped, the record after kept");
  check(l.n == 5 && l.r[4].timestamp == 1700000005, "records: the record after a cut line");
  check(l.n >= 4 && strcmp(l.r[1].schedule, "io, ii = split(C.i, 4)\nparallel(io)") == 0,
        "records: schedule text round trip");
  check(l.n >= 4 && strcmp(l.r[0].cpu, "test cpu \"quoted\"") == 0 && l.r[0].threads == 2,
        "records: target properties round trip");
  check(l.n >= 4 && l.r[3].error == TE_RUNTIME && isinf(rec_mean_cost(&l.r[3])),
        "records: error record round trip");
  check(l.n >= 1 && fabs(rec_mean_cost(&l.r[0]) - 1.375) < 1e-12, "records: costs round trip");
  const Record *b = records_best(&l, "00ff00ff00ff00ff", "llvm", "");
  check(b && b == &l.r[0], "records: best per workload and target");
  check(!records_best(&l, "00ff00ff00ff00ff", "cuda", ""), "records: no best for another target");
  check(l.n >= 2 && !l.r[0].code && l.r[1].code && !strcmp(l.r[1].code, "--mcpu haswell"),
        "records: the code's CPU round trip (none for the host)");
  b = records_best(&l, "00ff00ff00ff00ff", "llvm", "--mcpu haswell");
  check(b && b == &l.r[1], "records: a record tuned with --mcpu is the best only for that CPU");
  Options o = {.target = TARGET_LLVM, .mcpu = "haswell"};
  check(!strcmp(rec_code(&o), "--mcpu haswell"), "records: rec_code of --mcpu");
  o.mtriple = "aarch64-linux-gnu";
  check(!strcmp(rec_code(&o), "--mtriple aarch64-linux-gnu --mcpu haswell"), "records: rec_code of both");
  o.target = TARGET_CUDA;
  check(!strcmp(rec_code(&o), ""), "records: rec_code of a GPU target is empty");
  reclist_free(&l);
  unlink(path);
  /* a log that cannot be written: the first write fails, and so does everything after */
  fprintf(stderr, "(a write error expected:)\n");
  log = records_open("/dev/full", false);
  r = sample_record(0);
  check(log && !records_write(log, &r) && records_failed(log), "records: a full disk fails");
  check(log && !records_write(log, &r), "records: nothing written after a failure");
  check(!records_close(log), "records: close reports the failure");
  rec_free(&r);
  fprintf(stderr, "(an open error expected:)\n");
  check(records_open("/tmp", false) == NULL, "records: a directory is not a log");
}

static void test_model(void) {
  CostModel *m = model_new(1);
  Rng r = {42};
  float feat[FEAT_N];
  for (int i = 0; i < 200; i++) {
    for (int j = 0; j < FEAT_N; j++) feat[j] = (float)rng_unit(&r);
    model_add(m, feat, feat[3] > 0.5f ? 0.9f : 0.1f);
  }
  check(model_train(m), "model: trains");
  float x[2 * FEAT_N], y[2];
  for (int j = 0; j < 2 * FEAT_N; j++) x[j] = 0.5f;
  x[3] = 0.9f;
  x[FEAT_N + 3] = 0.1f;
  model_predict(m, x, 2, y);
  check(y[0] > 0.6f && y[1] < 0.4f, "model: learns a threshold");
  model_free(m);
}

/* A hand-built matmul: C[i, j] += A[i, k] * B[k, j], 64^3. */
static Kernel *hand_matmul(int n) {
  Kernel *k = xalloc(sizeof *k);
  k->name = "matmul";
  Expr *shp[2] = {ir_int(n), ir_int(n)};
  Buffer *a = ir_buffer("A", DT_F32, 2, shp, SCOPE_GLOBAL, BUF_INPUT);
  Buffer *b = ir_buffer("B", DT_F32, 2, shp, SCOPE_GLOBAL, BUF_INPUT);
  Buffer *c = ir_buffer("C", DT_F32, 2, shp, SCOPE_GLOBAL, BUF_OUTPUT);
  Op *op = xalloc(sizeof *op);
  op->name = "C";
  op->out = c;
  c->op = op;
  op->ndim = 2;
  op->axes = xalloc(sizeof(IrVar *) * 2);
  op->axes[0] = ir_newvar("i", DT_I64);
  op->axes[1] = ir_newvar("j", DT_I64);
  op->nred = 1;
  op->raxes = xalloc(sizeof(IrVar *));
  op->raxes[0] = ir_newvar("k", DT_I64);
  op->rmin = xalloc(sizeof(Expr *));
  op->rmin[0] = ir_int(0);
  op->rext = xalloc(sizeof(Expr *));
  op->rext[0] = ir_int(n);
  op->rop = RED_SUM;
  Expr *ia[2] = {ir_var(op->axes[0]), ir_var(op->raxes[0])};
  Expr *ib[2] = {ir_var(op->raxes[0]), ir_var(op->axes[1])};
  op->value = ir_bin(OP_MUL, ir_load(a, ia), ir_load(b, ib));
  op->reads = xalloc(sizeof(Buffer *) * 2);
  op->reads[0] = a;
  op->reads[1] = b;
  op->nreads = 2;
  k->inputs = xalloc(sizeof(Buffer *) * 2);
  k->inputs[0] = a;
  k->inputs[1] = b;
  k->ninputs = 2;
  k->outputs = xalloc(sizeof(Buffer *));
  k->outputs[0] = c;
  k->noutputs = 1;
  k->ops = xalloc(sizeof(Op *));
  k->ops[0] = op;
  k->nops = 1;
  return k;
}

/* The naive loop nest of a matmul, annotated: i parallel, j vectorized. */
static LoweredFunc *hand_lowered(Kernel *k, bool good) {
  Op *op = k->ops[0];
  int64_t n;
  ir_is_const(op->rext[0], &n);
  Expr *ic[2] = {ir_var(op->axes[0]), ir_var(op->axes[1])};
  Expr *acc = ir_load(op->out, ic);
  Stmt *st = ir_store(op->out, ic, ir_bin(OP_ADD, acc, op->value));
  IrVar *o1 = good ? op->axes[0] : op->axes[1], *o2 = good ? op->raxes[0] : op->axes[0],
        *o3 = good ? op->axes[1] : op->raxes[0];
  Stmt *l3 = ir_for(o3, ir_int(0), ir_int(n), good ? FOR_VECTORIZE : FOR_SERIAL, st);
  Stmt *l2 = ir_for(o2, ir_int(0), ir_int(n), FOR_SERIAL, l3);
  Stmt *l1 = ir_for(o1, ir_int(0), ir_int(n), good ? FOR_PARALLEL : FOR_SERIAL, l2);
  LoweredFunc *fn = xalloc(sizeof *fn);
  fn->name = "matmul";
  fn->body = l1;
  return fn;
}

static void test_features(void) {
  Kernel *k = hand_matmul(64);
  float g[FEAT_N], b[FEAT_N];
  features_extract(hand_lowered(k, true), g);
  features_extract(hand_lowered(k, false), b);
  check(fabsf(g[0] - (float)log2(1 + 2.0 * 64 * 64 * 64)) < 1e-3, "features: flop count");
  check(g[5] == 1 && b[5] == 0, "features: innermost vectorized");
  check(g[10] == 1 && b[10] == 0, "features: parallel loops");
  bool finite = true;
  for (int i = 0; i < FEAT_N; i++) finite &= isfinite(g[i]) && isfinite(b[i]);
  check(finite, "features: finite");
  /* buffer slot strides: with j innermost, B's stride is 1; with k innermost it is 64 */
  bool differ = memcmp(g + 28, b + 28, sizeof(float) * 50) != 0;
  check(differ, "features: buffer access patterns differ by loop order");
}

static void test_sketch(void) {
  Kernel *k = hand_matmul(64);
  SketchSet *ss = sketch_new(k, TARGET_LLVM, 2);
  check(ss && sketch_count(ss) == 2, "sketch: matmul has plain and cache_write sketches");
  if (!ss) return;
  Rng r = {7}, r2 = {7};
  Cand a, b;
  sketch_sample(ss, &r, &a);
  sketch_sample(ss, &r2, &b);
  char *ta = sketch_render(ss, &a), *tb = sketch_render(ss, &b);
  check(strcmp(ta, tb) == 0, "sketch: sampling is deterministic for a seed");
  bool all_ok = true, saw_cw = false, saw_par = false;
  for (int i = 0; i < 200; i++) {
    sketch_sample(ss, &r, &a);
    for (int j = 0; j < 5; j++) sketch_mutate(ss, &r, &a);
    /* tile factors fit the extent: the inner tile within it, all of them within twice it
     * (a register tile's rows need not divide: the tails pass runs its full tiles) */
    for (int g = 0; g + 2 < 6; g += 3) {
      int64_t p = (int64_t)a.genes[g] * a.genes[g + 1] * a.genes[g + 2];
      all_ok &= a.genes[g] >= 1 && a.genes[g + 1] >= 1 && a.genes[g + 2] >= 1 && p < 2 * 64 &&
                (int64_t)a.genes[g + 1] * a.genes[g + 2] <= 64;
    }
    char *t = sketch_render(ss, &a);
    saw_cw |= strstr(t, "cache_write(C, local)") != NULL;
    saw_par |= strstr(t, "parallel(") != NULL;
    free(t);
  }
  check(all_ok, "sketch: mutated tile sizes fit the extents");
  check(saw_cw && saw_par, "sketch: cache_write and parallel appear");
  printf("# a sample candidate:\n# %s\n", ta);
  free(ta);
  free(tb);
  sketch_free(ss);
}

/* ---------------------------------------------------------------- search with fakes */

/* The factor of the first `split(LOOP, F)` in TEXT, or 1. */
static int factor_of(const char *text, const char *loop) {
  char pat[64];
  snprintf(pat, sizeof pat, "split(%s, ", loop);
  const char *p = strstr(text, pat);
  return p ? atoi(p + strlen(pat)) : 1;
}

/* A made-up cost: best with an inner j tile of 16, an inner i tile of 4, parallel and
 * vectorized. */
static double fake_cost(const char *text) {
  double c = 1.0;
  c += fabs(log2(factor_of(text, "C.j")) - 4) + fabs(log2(factor_of(text, "C.i")) - 2);
  if (!strstr(text, "parallel(")) c += 2;
  if (!strstr(text, "vectorize(")) c += 2;
  return c;
}

static void fake_measure(Measurer *m, const Task *t, char **texts, int n, Record *out) {
  int *calls = m->ctx;
  for (int i = 0; i < n; i++) {
    (*calls)++;
    out[i].costs[0] = fake_cost(texts[i]);
    out[i].ncosts = 1;
    if (strstr(texts[i], "unroll(C_k1)") && factor_of(texts[i], "C.k") == 64) {
      out[i].error = TE_RUNTIME; /* some candidates "crash" */
      out[i].error_msg = strdup("fake crash");
      out[i].ncosts = 0;
    }
  }
}

/* Features from the text: the log factors and the annotations. */
static bool fake_featurize(const Task *t, const char *text, float *f) {
  memset(f, 0, sizeof(float) * FEAT_N);
  f[0] = (float)log2(factor_of(text, "C.j"));
  f[1] = (float)log2(factor_of(text, "C.i"));
  f[2] = strstr(text, "parallel(") != NULL;
  f[3] = strstr(text, "vectorize(") != NULL;
  f[4] = (float)log2(factor_of(text, "C.k"));
  return true;
}

static SearchResult run_search(Kernel *k, const char *records, int trials, const RecordList *prior,
                               int *calls) {
  Task t = {.kernel = k, .target = TARGET_LLVM, .flops = 2.0 * 64 * 64 * 64,
            .featurize = fake_featurize};
  snprintf(t.workload, sizeof t.workload, "%016llx", 0x1234ull);
  Measurer m = {.measure = fake_measure, .ctx = calls, .o = {.repeat = 1}};
  SearchOpts o = {.trials = trials, .seed = 3, .batch = 8, .population = 32, .generations = 2,
                  .eps_random = 0.1, .log = records_open(records, false), .quiet = true};
  SearchResult r;
  tune_search(&t, &m, &o, prior, &r);
  if (!records_close(o.log)) r.log_failed = true;
  return r;
}

static void test_search(void) {
  Kernel *k = hand_matmul(64);
  char p1[] = "/tmp/texc-test-search1-XXXXXX", p2[] = "/tmp/texc-test-search2-XXXXXX";
  close(mkstemp(p1));
  close(mkstemp(p2));
  int c1 = 0, c2 = 0;
  SearchResult a = run_search(k, p1, 40, NULL, &c1);
  SearchResult b = run_search(k, p2, 40, NULL, &c2);
  check(a.measured == 40 && c1 == 40, "search: measures exactly --trials candidates");
  RecordList la = {0}, lb = {0};
  records_load(p1, &la);
  records_load(p2, &lb);
  bool same = la.n == lb.n && la.n == 40;
  for (int i = 0; same && i < la.n; i++) same = strcmp(la.r[i].schedule, lb.r[i].schedule) == 0;
  check(same, "search: a fixed seed measures the same candidates in the same order");
  bool distinct = true;
  for (int i = 0; i < la.n; i++)
    for (int j = 0; j < i; j++) distinct &= strcmp(la.r[i].schedule, la.r[j].schedule) != 0;
  check(distinct, "search: no candidate measured twice");
  /* resume: the 40 prior records are not measured again */
  int c3 = 0;
  SearchResult c = run_search(k, p1, 40, &la, &c3);
  RecordList lc = {0};
  records_load(p1, &lc);
  distinct = lc.n == 80;
  for (int i = 40; i < lc.n; i++)
    for (int j = 0; j < i; j++) distinct &= strcmp(lc.r[i].schedule, lc.r[j].schedule) != 0;
  check(distinct, "search: resumed search skips measured candidates");
  check(c.best_ms <= a.best_ms, "search: resumed search starts from the prior best");
  /* the model guides: model-ranked rounds beat random sampling of the same budget */
  check(a.best_text && c.best_ms <= 2.0, "search: model-guided search finds a good candidate");
  printf("# fake search best %.3f then %.3f\n", a.best_ms, c.best_ms);
  free(a.best_text); free(b.best_text); free(c.best_text);
  reclist_free(&la); reclist_free(&lb); reclist_free(&lc);
  unlink(p1);
  unlink(p2);
  /* a log that cannot be written stops the search at its first batch */
  int c4 = 0;
  fprintf(stderr, "(a write error expected:)\n");
  SearchResult d = run_search(k, "/dev/full", 40, NULL, &c4);
  check(d.log_failed && c4 == 8, "search: stops at the first record it cannot append");
  free(d.best_text);
}

/* The re-timing at the end of a long search (>= 200 trials): the figure of the best is a
 * measurement of it alone after it was chosen, not the least of the medians that chose it
 * (optimistic). A fake measurer whose costs fall with each call (as a machine that grows
 * quieter) must leave exactly the last measurement's median as the best. */
typedef struct Last {
  int calls, n, repeat;
  bool full, full_before; /* the last call's MeasureOpts.full; any call's before it */
  double median;
  char text[4096];
} Last;

static void falling_measure(Measurer *m, const Task *t, char **texts, int n, Record *out) {
  Last *l = m->ctx;
  for (int i = 0; i < n; i++) {
    double c = fake_cost(texts[i]) * (1.0 + 1.0 / (1 + l->calls++));
    int r = m->o.repeat < REC_MAX_COSTS ? m->o.repeat : REC_MAX_COSTS;
    for (int k = 0; k < r; k++) out[i].costs[k] = c * (1 + 0.01 * k);
    out[i].ncosts = r;
    l->median = r % 2 ? out[i].costs[r / 2] : (out[i].costs[r / 2 - 1] + out[i].costs[r / 2]) / 2;
  }
  l->full_before |= l->full;
  l->n = n, l->repeat = m->o.repeat, l->full = m->o.full;
  snprintf(l->text, sizeof l->text, "%s", texts[n - 1]);
}

static void test_retime(void) {
  Kernel *k = hand_matmul(64);
  Task t = {.kernel = k, .target = TARGET_LLVM, .flops = 2.0 * 64 * 64 * 64, .featurize = fake_featurize};
  snprintf(t.workload, sizeof t.workload, "%016llx", 0x1234ull);
  Last last = {0};
  Measurer m = {.measure = falling_measure, .ctx = &last, .o = {.repeat = 3}};
  SearchOpts o = {.trials = 200, .seed = 3, .batch = 16, .population = 32, .generations = 2, .eps_random = 0.1,
                  .quiet = true};
  SearchResult r;
  tune_search(&t, &m, &o, NULL, &r);
  printf("# retime: n %d repeat %d best %g last %g same %d\n", last.n, last.repeat, r.best_ms, last.median, r.best_text && !strcmp(last.text, r.best_text));
  check(r.best_text && last.n == 1 && last.repeat == 10 && !strcmp(last.text, r.best_text) &&
            r.best_ms == last.median && m.o.repeat == 3,
        "search: the best's figure is one more measurement of it after the re-timing chose it");
  check(last.full && last.full_before && !m.o.full,
        "search: re-timings take every repeat (MeasureOpts.full), the search's own measurements not");
  free(r.best_text);
}

int main(void) {
  test_records();
  test_retime();
  test_model();
  test_features();
  test_sketch();
  test_search();
  return failures ? 1 : 0;
}
