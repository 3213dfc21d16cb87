/* report.c — `texc records report LOG [-o OUT.html]`: one self-contained page of a tuning
 * log, and `texc records plot LOG -o OUT.svg`: its curve alone.
 *
 * The page, top to bottom: the machine the log was measured on (CPU model and ISA, GPU,
 * threads, texc version, from the records' "machine" member; older logs show what they
 * have); for each network tuned into the log, its estimated latency sum(weight x best) over
 * wall time and over trials, and each task's share of it; a table with one row per task
 * (workload and target); then per task its tuning curve (the best latency against trials,
 * over a scatter of every measured latency, and against wall time), its error records by
 * kind, and its best schedule as a `.tex` block that can be pasted into a file. */
#include "report/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autosched/autosched.h"
#include "cli/options.h"

/* One task of the log: the records of one (workload, target), in log order. */
typedef struct TaskView {
  const char *workload, *target, *kernel;
  const char *code;    /* rec_code of its records: "" for the host */
  const char *network; /* the network whose tune measured it; NULL: none recorded */
  int weight;
  int *idx, n, cap;    /* its records: indices into the log */
  int trials;          /* distinct schedules */
  int errors[TE_COUNT];
  const char *error_example[TE_COUNT];
  const Record *best;  /* records_best: the least median over a schedule's records */
  double best_ms, first_ms, flops;
} TaskView;

typedef struct Report {
  const RecordList *l;
  const char *log_path;
  TaskView *t;
  int nt;
  double t0;           /* the log's first timestamp */
  double tscale;       /* seconds per unit of the wall-time axis */
  const char *tunit;
  double *trial;       /* per record: its task's trial number (trial_numbers) */
} Report;

/* ---------------------------------------------------------------- gathering */

static uint64_t hash_text(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h ? h : 1;
}

/* X[i]: the trial number of task T's i-th record (a schedule measured again, as the
 * search re-times its best, keeps the count); returns the trials. */
static int trial_numbers(const Report *rp, const TaskView *t, double *x) {
  int cap = 2 * t->n + 1, trials = 0;
  uint64_t *set = calloc((size_t)cap, sizeof *set);
  if (!set) die("out of memory");
  for (int i = 0; i < t->n; i++) {
    uint64_t h = hash_text(rp->l->r[t->idx[i]].schedule);
    int j = (int)(h % (uint64_t)cap);
    while (set[j] && set[j] != h) j = (j + 1) % cap;
    if (!set[j]) set[j] = h, trials++;
    if (x) x[i] = trials;
  }
  free(set);
  return trials;
}

static TaskView *task_of(Report *rp, const Record *r) {
  for (int i = 0; i < rp->nt; i++)
    if (rec_is(r, rp->t[i].workload, rp->t[i].target, rp->t[i].code)) return &rp->t[i];
  rp->t = realloc(rp->t, sizeof *rp->t * (size_t)(rp->nt + 1));
  if (!rp->t) die("out of memory");
  TaskView *t = &rp->t[rp->nt++];
  memset(t, 0, sizeof *t);
  t->workload = r->workload, t->target = r->target, t->kernel = r->kernel;
  t->code = r->code ? r->code : "";
  t->first_ms = INFINITY;
  return t;
}

static void add_record(Report *rp, int i) {
  const Record *r = &rp->l->r[i];
  TaskView *t = task_of(rp, r);
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->idx = realloc(t->idx, sizeof(int) * (size_t)t->cap);
    if (!t->idx) die("out of memory");
  }
  t->idx[t->n++] = i;
  t->errors[r->error]++;
  if (r->error != TE_OK && !t->error_example[r->error]) t->error_example[r->error] = r->error_msg;
  if (r->error == TE_OK && isinf(t->first_ms)) t->first_ms = rec_cost(r);
  if (r->network && r->network[0]) t->network = r->network, t->weight = r->weight;
  if (r->flops > 0) t->flops = r->flops;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of every cost of task T's successful records of SCHEDULE: the figure
 * `records best` and `= auto` judge a schedule by (records.c). */
static double pooled_cost(const Report *rp, const TaskView *t, const char *schedule) {
  double *c = malloc(sizeof(double) * (size_t)(t->n * REC_MAX_COSTS + 1));
  if (!c) die("out of memory");
  int m = 0;
  for (int k = 0; k < t->n; k++) {
    const Record *r = &rp->l->r[t->idx[k]];
    if (r->error != TE_OK || strcmp(r->schedule, schedule)) continue;
    for (int j = 0; j < r->ncosts; j++) c[m++] = r->costs[j];
  }
  qsort(c, (size_t)m, sizeof *c, cmp_double);
  double med = m == 0 ? INFINITY : m % 2 ? c[m / 2] : (c[m / 2 - 1] + c[m / 2]) / 2;
  free(c);
  return med;
}

static void gather(Report *rp, const RecordList *l, const char *path) {
  memset(rp, 0, sizeof *rp);
  rp->l = l, rp->log_path = path;
  rp->trial = calloc((size_t)l->n + 1, sizeof(double));
  if (!rp->trial) die("out of memory");
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < l->n; i++) {
    add_record(rp, i);
    if (l->r[i].timestamp > 0) lo = l->r[i].timestamp < lo ? l->r[i].timestamp : lo;
    hi = l->r[i].timestamp > hi ? l->r[i].timestamp : hi;
  }
  rp->t0 = isfinite(lo) ? lo : 0;
  double span = hi - rp->t0;
  rp->tscale = span > 3 * 3600 ? 3600 : span > 600 ? 60 : 1;
  rp->tunit = span > 3 * 3600 ? "h" : span > 600 ? "min" : "s";
  for (int i = 0; i < rp->nt; i++) {
    TaskView *t = &rp->t[i];
    double *x = malloc(sizeof(double) * (size_t)(t->n + 1));
    if (!x) die("out of memory");
    t->trials = trial_numbers(rp, t, x);
    for (int k = 0; k < t->n; k++) rp->trial[t->idx[k]] = x[k];
    free(x);
    t->best = records_best(l, t->workload, t->target, t->code);
    t->best_ms = INFINITY;
    if (t->best) t->best_ms = pooled_cost(rp, t, t->best->schedule);
  }
}

static void report_free(Report *rp) {
  for (int i = 0; i < rp->nt; i++) free(rp->t[i].idx);
  free(rp->t);
  free(rp->trial);
}

static double *dalloc(int n) {
  double *d = malloc(sizeof(double) * (size_t)(n + 1));
  if (!d) die("out of memory");
  return d;
}

static double wall(const Report *rp, const Record *r) {
  return r->timestamp > 0 ? (r->timestamp - rp->t0) / rp->tscale : 0;
}

static void fmt_ms(FILE *f, double ms) {
  if (isfinite(ms)) fprintf(f, "%.4f", ms);
  else fputs("-", f);
}

/* ---------------------------------------------------------------- a network */

/* The points of network NAME's estimated latency, sum(weight x best so far) over its tasks,
 * from the first record at which every task has a best: trials (all its tasks' together),
 * wall time and the latency. Returns how many; the arrays are malloc'd. */
static int network_points(const Report *rp, const char *name, double **xt, double **xw, double **y) {
  const RecordList *l = rp->l;
  double *best = dalloc(rp->nt);
  int *seen = calloc((size_t)rp->nt + 1, sizeof(int)), n = 0, trials = 0;
  *xt = dalloc(l->n), *xw = dalloc(l->n), *y = dalloc(l->n);
  for (int i = 0; i < rp->nt; i++) best[i] = INFINITY;
  for (int i = 0; i < l->n; i++) {
    const Record *r = &l->r[i];
    int k = 0;
    while (k < rp->nt && !rec_is(r, rp->t[k].workload, rp->t[k].target, rp->t[k].code)) k++;
    if (k == rp->nt || !rp->t[k].network || strcmp(rp->t[k].network, name)) continue;
    if (rp->trial[i] > seen[k]) trials++, seen[k] = (int)rp->trial[i];
    best[k] = fmin(best[k], rec_cost(r));
    double total = 0;
    for (int j = 0; j < rp->nt; j++)
      if (rp->t[j].network && !strcmp(rp->t[j].network, name)) total += rp->t[j].weight * best[j];
    if (isfinite(total)) (*xt)[n] = trials, (*xw)[n] = wall(rp, r), (*y)[n++] = total;
  }
  free(best);
  free(seen);
  return n;
}

static void network_table(FILE *f, const Report *rp, const char *name, double total) {
  fprintf(f, "<table class=\"share\"><tr><th>task</th><th>kernel</th><th>weight</th>"
             "<th>best ms</th><th>weight &times; best</th><th>share</th></tr>\n");
  for (int i = 0; i < rp->nt; i++) {
    const TaskView *t = &rp->t[i];
    if (!t->network || strcmp(t->network, name)) continue;
    fprintf(f, "<tr><td><a href=\"#task-%d\">%d</a></td><td>", i + 1, i + 1);
    html_escape(f, t->kernel);
    fprintf(f, "</td><td>%d</td><td>", t->weight);
    fmt_ms(f, t->best_ms);
    fprintf(f, "</td><td>");
    fmt_ms(f, t->weight * t->best_ms);
    if (isfinite(total) && total > 0) fprintf(f, "</td><td>%.1f %%</td></tr>\n", 100 * t->weight * t->best_ms / total);
    else fprintf(f, "</td><td>-</td></tr>\n");
  }
  fprintf(f, "</table>\n");
}

/* Network NAME: its latency over time and trials, and each task's share of the last. */
static void network_section(FILE *f, const Report *rp, const char *name) {
  double *xt, *xw, *y;
  int n = network_points(rp, name, &xt, &xw, &y);
  fprintf(f, "<section class=\"network\"><h2>Network ");
  html_escape(f, name);
  fprintf(f, "</h2>\n");
  double total = 0, *v = dalloc(rp->nt);
  const char **names = calloc((size_t)rp->nt + 1, sizeof(char *));
  int k = 0;
  for (int i = 0; i < rp->nt; i++)
    if (rp->t[i].network && !strcmp(rp->t[i].network, name)) {
      v[k] = rp->t[i].weight * rp->t[i].best_ms, names[k++] = rp->t[i].kernel;
      total += rp->t[i].weight * rp->t[i].best_ms;
    }
  fprintf(f, "<p>Estimated latency (sum of weight &times; best over its %d tasks): <b>", k);
  fmt_ms(f, total);
  fprintf(f, " ms</b></p>\n<div class=\"charts\">");
  char xl[64];
  snprintf(xl, sizeof xl, "wall time (%s)", rp->tunit);
  SvgSeries sw = {xw, y, n, SVG_STEP, NULL, NULL}, st = {xt, y, n, SVG_STEP, NULL, NULL};
  svg_chart(f, &(SvgChart){540, 300, "estimated latency over time", xl, "ms", &sw, 1});
  svg_chart(f, &(SvgChart){540, 300, "estimated latency over trials", "trials", "ms", &st, 1});
  fprintf(f, "</div>\n<h3>Each task's share</h3>\n");
  if (isfinite(total)) svg_share_bar(f, 1100, v, names, k);
  network_table(f, rp, name, total);
  fprintf(f, "</section>\n");
  free(xt), free(xw), free(y), free(v), free(names);
}

/* ---------------------------------------------------------------- tasks */

static void task_row(FILE *f, const TaskView *t, int i) {
  int errors = 0;
  for (int e = 1; e < TE_COUNT; e++) errors += t->errors[e];
  fprintf(f, "<tr class=\"task\"><td><a href=\"#task-%d\">%d</a></td><td>", i + 1, i + 1);
  html_escape(f, t->kernel);
  fprintf(f, "</td><td><code>");
  html_escape(f, t->workload);
  fprintf(f, "</code></td><td>");
  html_escape(f, t->target);
  if (*t->code) fputc(' ', f), html_escape(f, t->code);
  fprintf(f, "</td><td>%d</td><td>%d</td><td>", t->trials, errors);
  fmt_ms(f, t->first_ms);
  fprintf(f, "</td><td><b>");
  fmt_ms(f, t->best_ms);
  fprintf(f, "</b></td><td>");
  if (t->flops > 0 && isfinite(t->best_ms)) fprintf(f, "%.2f", t->flops / (t->best_ms * 1e6));
  else fputs("-", f);
  fprintf(f, "</td><td>");
  if (isfinite(t->best_ms) && isfinite(t->first_ms)) fprintf(f, "%.2fx", t->first_ms / t->best_ms);
  else fputs("-", f);
  fprintf(f, "</td></tr>\n");
}

static void task_table(FILE *f, const Report *rp) {
  fprintf(f, "<h2>Tasks</h2>\n<table class=\"tasks\"><tr><th>#</th><th>kernel</th>"
             "<th>workload</th><th>target</th><th>trials</th><th>errors</th>"
             "<th>first ms</th><th>best ms</th><th>GFLOP/s</th><th>speedup</th></tr>\n");
  for (int i = 0; i < rp->nt; i++) task_row(f, &rp->t[i], i);
  fprintf(f, "</table>\n<p class=\"note\">first: the first successful measurement; best: the "
             "median of every measurement of the best schedule; speedup: first / best.</p>\n");
}

/* Task T's charts: the best against trials over every measurement, and against time. */
static void task_charts(FILE *f, const Report *rp, const TaskView *t) {
  double *x = dalloc(t->n), *y = dalloc(t->n), *b = dalloc(t->n), *w = dalloc(t->n);
  double best = INFINITY;
  for (int k = 0; k < t->n; k++) {
    const Record *r = &rp->l->r[t->idx[k]];
    x[k] = rp->trial[t->idx[k]], y[k] = rec_cost(r), w[k] = wall(rp, r);
    best = fmin(best, y[k]), b[k] = best;
  }
  SvgSeries s1[2] = {{x, y, t->n, SVG_DOTS, "every measurement", "#888"},
                     {x, b, t->n, SVG_STEP, "best so far", NULL}};
  SvgSeries s2 = {w, b, t->n, SVG_STEP, NULL, NULL};
  char xl[64];
  snprintf(xl, sizeof xl, "wall time (%s)", rp->tunit);
  fprintf(f, "<div class=\"charts\">");
  svg_chart(f, &(SvgChart){540, 300, "latency against trials", "trials", "ms", s1, 2});
  svg_chart(f, &(SvgChart){540, 300, "best latency against wall time", xl, "ms", &s2, 1});
  fprintf(f, "</div>\n");
  free(x), free(y), free(b), free(w);
}

static void task_errors(FILE *f, const TaskView *t) {
  int errors = 0;
  for (int e = 1; e < TE_COUNT; e++) errors += t->errors[e];
  if (!errors) {
    fprintf(f, "<p>No error records.</p>\n");
    return;
  }
  fprintf(f, "<table class=\"errors\"><tr><th>kind</th><th>records</th><th>first message</th></tr>\n");
  for (int e = 1; e < TE_COUNT; e++) {
    if (!t->errors[e]) continue;
    fprintf(f, "<tr><td>%s</td><td>%d</td><td><code>", tune_error_names[e], t->errors[e]);
    html_escape(f, t->error_example[e]);
    fprintf(f, "</code></td></tr>\n");
  }
  fprintf(f, "</table>\n");
}

static void task_section(FILE *f, const Report *rp, const TaskView *t, int i) {
  fprintf(f, "<section class=\"task\" id=\"task-%d\"><h2>%d. ", i + 1, i + 1);
  html_escape(f, t->kernel);
  fprintf(f, " <small>workload <code>");
  html_escape(f, t->workload);
  fprintf(f, "</code> on ");
  html_escape(f, t->target);
  if (*t->code) fputc(' ', f), html_escape(f, t->code);
  if (t->network) {
    fprintf(f, ", in network ");
    html_escape(f, t->network);
    fprintf(f, " &times;%d", t->weight);
  }
  fprintf(f, "</small></h2>\n");
  task_charts(f, rp, t);
  fprintf(f, "<h3>Errors by kind</h3>\n");
  task_errors(f, t);
  fprintf(f, "<h3>Best schedule</h3>\n");
  if (!t->best) {
    fprintf(f, "<p>No schedule succeeded.</p></section>\n");
    return;
  }
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&text, &len);
  if (!m) die("out of memory");
  fprintf(m, "# %s: %.4f ms\n", t->kernel, t->best_ms);
  tune_print_block(m, t->kernel, "tuned", t->target, t->best->schedule);
  fclose(m);
  fprintf(f, "<pre class=\"schedule\">");
  html_escape(f, text);
  fprintf(f, "</pre>\n</section>\n");
  free(text);
}

/* ---------------------------------------------------------------- the machine */

/* Does record R name the same machine as Q? */
static bool same_machine(const Record *r, const Record *q) {
  const char *a[] = {r->host, r->isa, r->gpu, r->cpu, r->version, r->target};
  const char *b[] = {q->host, q->isa, q->gpu, q->cpu, q->version, q->target};
  for (int i = 0; i < 6; i++)
    if (strcmp(a[i] ? a[i] : "", b[i] ? b[i] : "")) return false;
  return r->threads == q->threads;
}

static void cell(FILE *f, const char *s, const char *missing) {
  fprintf(f, "<td>");
  if (s && *s) html_escape(f, s);
  else fprintf(f, "<i>%s</i>", missing);
  fprintf(f, "</td>");
}

/* One row per distinct machine (CPU, ISA, GPU, threads, texc, target) in the log. */
static void machine_section(FILE *f, const Report *rp) {
  const RecordList *l = rp->l;
  fprintf(f, "<h2>Machine</h2>\n<table class=\"machine\"><tr><th>CPU</th><th>ISA</th>"
             "<th>GPU</th><th>threads</th><th>texc</th><th>target</th><th>records</th></tr>\n");
  int *rep = malloc(sizeof(int) * (size_t)(l->n + 1)), *count = calloc((size_t)l->n + 1, sizeof(int)), m = 0;
  for (int i = 0; i < l->n; i++) {
    int j = 0;
    while (j < m && !same_machine(&l->r[rep[j]], &l->r[i])) j++;
    if (j == m) rep[m++] = i;
    count[j]++;
  }
  for (int j = 0; j < m; j++) {
    const Record *r = &l->r[rep[j]];
    fprintf(f, "<tr>");
    cell(f, r->host ? r->host : r->cpu, "not recorded");
    cell(f, r->isa, "not recorded");
    cell(f, r->gpu, r->host ? "none" : "not recorded");
    fprintf(f, "<td>%d</td>", r->threads);
    cell(f, r->version, "not recorded");
    cell(f, r->target, "-");
    fprintf(f, "<td>%d</td></tr>\n", count[j]);
  }
  fprintf(f, "</table>\n");
  free(rep);
  free(count);
}

/* ---------------------------------------------------------------- the page */

static const char css[] =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1180px}"
    "h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}"
    "h3{font-size:14px}small{font-weight:normal;color:#555}"
    "table{border-collapse:collapse;font-size:13px;margin:8px 0}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f2f2f2}"
    "pre.schedule{background:#f7f7f7;border:1px solid #ddd;padding:8px;font-size:12px;overflow-x:auto}"
    ".charts svg{margin:4px 8px 4px 0;border:1px solid #eee}.note{color:#666;font-size:12px}";

/* The distinct network names of the log's tasks, in order (at most CAP). */
static int network_names(const Report *rp, const char **names, int cap) {
  int n = 0;
  for (int i = 0; i < rp->nt; i++) {
    const char *nm = rp->t[i].network;
    int j = 0;
    while (nm && j < n && strcmp(names[j], nm)) j++;
    if (nm && j == n && n < cap) names[n++] = nm;
  }
  return n;
}

static void write_page(FILE *f, const Report *rp) {
  fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
             "<title>texc tuning report: ");
  html_escape(f, rp->log_path);
  fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>texc tuning report</h1>\n<p>Log <code>",
          css);
  html_escape(f, rp->log_path);
  fprintf(f, "</code>: %d records, %d tasks. Written by texc %s.</p>\n", rp->l->n, rp->nt, TEXC_VERSION);
  machine_section(f, rp);
  const char *nets[16];
  int nn = network_names(rp, nets, 16);
  for (int i = 0; i < nn; i++) network_section(f, rp, nets[i]);
  task_table(f, rp);
  for (int i = 0; i < rp->nt; i++) task_section(f, rp, &rp->t[i], i);
  fprintf(f, "</body></html>\n");
}

/* The curve alone: a network's estimated latency against trials, else every task's best. */
static void write_plot(FILE *f, const Report *rp) {
  const char *nets[1];
  if (network_names(rp, nets, 1)) {
    double *xt, *xw, *y;
    int n = network_points(rp, nets[0], &xt, &xw, &y);
    SvgSeries s = {xt, y, n, SVG_STEP, NULL, NULL};
    svg_chart(f, &(SvgChart){720, 400, "estimated network latency", "trials", "ms", &s, 1});
    free(xt), free(xw), free(y);
    return;
  }
  SvgSeries *s = calloc((size_t)rp->nt + 1, sizeof *s);
  double **buf = calloc((size_t)rp->nt * 2 + 1, sizeof *buf);
  for (int i = 0; i < rp->nt; i++) {
    const TaskView *t = &rp->t[i];
    double *x = buf[2 * i] = dalloc(t->n), *b = buf[2 * i + 1] = dalloc(t->n), best = INFINITY;
    for (int k = 0; k < t->n; k++)
      x[k] = rp->trial[t->idx[k]], best = fmin(best, rec_cost(&rp->l->r[t->idx[k]])), b[k] = best;
    s[i] = (SvgSeries){x, b, t->n, SVG_STEP, t->kernel, NULL};
  }
  svg_chart(f, &(SvgChart){720, 400, "best latency against trials", "trials", "ms", s, rp->nt});
  for (int i = 0; i < 2 * rp->nt; i++) free(buf[i]);
  free(buf), free(s);
}

/* LOG with .jsonl (or its extension) replaced by .html. */
static char *default_out(const char *log) {
  const char *slash = strrchr(log, '/'), *dot = strrchr(log, '.');
  size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - log) : strlen(log);
  return xprintf("%.*s.html", (int)n, log);
}

int report_main(Cli *c) {
  bool plot = !strcmp(c->action, "plot");
  const char *out = c->out ? c->out : default_out(c->file);
  RecordList l = {0};
  if (!records_load(c->file, &l)) {
    fprintf(stderr, "texc: error: cannot read %s: %s\n", c->file, strerror(errno));
    return 1;
  }
  Report rp;
  gather(&rp, &l, c->file);
  FILE *f = fopen(out, "w");
  if (!f) {
    fprintf(stderr, "texc: error: cannot write %s: %s\n", out, strerror(errno));
    report_free(&rp), reclist_free(&l);
    return 1;
  }
  if (plot) write_plot(f, &rp);
  else write_page(f, &rp);
  bool ok = !ferror(f);
  ok = fclose(f) == 0 && ok;
  if (ok) fprintf(stderr, "%s: %s of %d records, %d tasks\n", out, plot ? "curve" : "report", l.n, rp.nt);
  else fprintf(stderr, "texc: error: cannot write %s\n", out);
  report_free(&rp);
  reclist_free(&l);
  return ok ? 0 : 1;
}
