/* records.c — the tuning log: one JSON object per line, appended whole; and
 * `texc records show|best|distill FILE`.
 *
 * The log's guarantees (docs/TUNING.md): a writer holds an flock on it, so a second tune on
 * the same log fails at once (readers take no lock); each record is one write() of a whole
 * line with O_APPEND; a line cut off mid-write is ended by the next writer, so it costs
 * only itself, and readers skip it with a warning naming FILE:LINE; the first write that
 * fails stops the tune with an error, every record written before it kept. */
#include "autosched.h"
#include "cli/options.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ORDER TuneError */
const char *const tune_error_names[] = {"ok", "instantiate", "compile", "runtime",
                                        "wrong", "build-timeout", "run-timeout"};

static char *sdup(const char *s) {
  char *p = strdup(s ? s : "");
  if (!p) die_oom(0);
  return p;
}

double rec_mean_cost(const Record *r) {
  if (r->error != TE_OK || r->ncosts == 0) return INFINITY;
  double s = 0;
  for (int i = 0; i < r->ncosts; i++) s += r->costs[i];
  return s / r->ncosts;
}

double rec_cost(const Record *r) {
  if (r->error != TE_OK || r->ncosts == 0) return INFINITY;
  double c[REC_MAX_COSTS];
  int n = r->ncosts < REC_MAX_COSTS ? r->ncosts : REC_MAX_COSTS;
  memcpy(c, r->costs, sizeof(double) * (size_t)n);
  for (int i = 1; i < n; i++) /* insertion sort: at most REC_MAX_COSTS values */
    for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
      double t = c[j]; c[j] = c[j - 1]; c[j - 1] = t;
    }
  return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

void rec_free(Record *r) {
  free(r->workload); free(r->kernel); free(r->target); free(r->cpu); free(r->code);
  free(r->schedule); free(r->error_msg); free(r->version);
  free(r->host); free(r->isa); free(r->gpu); free(r->network);
  memset(r, 0, sizeof *r);
}

void reclist_free(RecordList *l) {
  for (int i = 0; i < l->n; i++) rec_free(&l->r[i]);
  free(l->r);
  memset(l, 0, sizeof *l);
}

void reclist_push(RecordList *l, Record r) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 64;
    l->r = realloc(l->r, sizeof(Record) * (size_t)l->cap);
    if (!l->r) die_oom(0);
  }
  l->r[l->n++] = r;
}

char *rec_to_json(const Record *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "workload", r->workload ? r->workload : "");
  cJSON_AddStringToObject(o, "kernel", r->kernel ? r->kernel : "");
  cJSON *t = cJSON_AddObjectToObject(o, "target");
  cJSON_AddStringToObject(t, "name", r->target ? r->target : "");
  cJSON_AddStringToObject(t, "cpu", r->cpu ? r->cpu : "");
  if (r->code && *r->code) cJSON_AddStringToObject(t, "code", r->code);
  cJSON_AddNumberToObject(t, "threads", r->threads);
  cJSON_AddStringToObject(o, "schedule", r->schedule ? r->schedule : "");
  cJSON *c = cJSON_AddArrayToObject(o, "costs_ms");
  for (int i = 0; i < r->ncosts; i++) cJSON_AddItemToArray(c, cJSON_CreateNumber(r->costs[i]));
  cJSON_AddNumberToObject(o, "error", r->error);
  cJSON_AddStringToObject(o, "error_msg", r->error_msg ? r->error_msg : "");
  cJSON_AddNumberToObject(o, "flops", r->flops);
  cJSON_AddNumberToObject(o, "timestamp", r->timestamp);
  cJSON_AddStringToObject(o, "version", r->version ? r->version : TEXC_VERSION);
  rec_machine_to_json(o, r);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* A string member, or NULL when it is missing or not a string. */
static const char *jstr(const cJSON *o, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool jnum(const cJSON *o, const char *name, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  if (!cJSON_IsNumber(v)) return false;
  *out = v->valuedouble;
  return true;
}

/* The fields every record must have; the rest default. */
static bool rec_fill(const cJSON *o, Record *r) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "target");
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "costs_ms");
  const char *wk = jstr(o, "workload"), *sch = jstr(o, "schedule"), *tn = jstr(t, "name");
  double err, th = 0, fl = 0, ts = 0;
  if (!wk || !sch || !tn || !cJSON_IsArray(c) || !jnum(o, "error", &err)) return false;
  if (err < 0 || err >= TE_COUNT) return false;
  jnum(t, "threads", &th);
  jnum(o, "flops", &fl);
  jnum(o, "timestamp", &ts);
  const cJSON *x;
  cJSON_ArrayForEach(x, c) {
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0) return false; /* not a time */
    if (r->ncosts < REC_MAX_COSTS) r->costs[r->ncosts++] = x->valuedouble;
  }
  if (err == TE_OK && r->ncosts == 0) return false;
  r->workload = sdup(wk);
  r->kernel = sdup(jstr(o, "kernel"));
  r->target = sdup(tn);
  r->cpu = sdup(jstr(t, "cpu"));
  r->code = jstr(t, "code") ? sdup(jstr(t, "code")) : NULL;
  r->threads = (int)th;
  r->schedule = sdup(sch);
  r->error = (int)err;
  r->error_msg = sdup(jstr(o, "error_msg"));
  r->flops = fl;
  r->timestamp = ts;
  r->version = sdup(jstr(o, "version"));
  rec_machine_from_json(o, r);
  return true;
}

bool rec_from_json(const char *line, Record *out) {
  memset(out, 0, sizeof *out);
  cJSON *o = cJSON_Parse(line);
  if (!o) return false;
  bool ok = cJSON_IsObject(o) && rec_fill(o, out);
  cJSON_Delete(o);
  if (!ok) rec_free(out);
  return ok;
}

#define MAX_LOAD_WARNINGS 10

/* Every line of PATH that is a record, in order; the others are skipped with a warning
 * naming PATH:LINE (the first MAX_LOAD_WARNINGS, then a count). A missing file is an empty
 * log, as is a device; false when it exists and cannot be read. */
bool records_load(const char *path, RecordList *out) {
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    return true; /* a device (/dev/null, /dev/full): no records to read, and no end */
  size_t len;
  char *text = read_file(path, &len);
  if (!text) return errno == ENOENT;
  int lineno = 0, bad = 0;
  for (char *p = text, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
    nl = strchr(p, '\n');
    lineno++;
    if (nl) *nl = 0;
    if (p[strspn(p, " \t\r")] == 0) continue;
    Record r;
    if (nl && rec_from_json(p, &r)) {
      reclist_push(out, r);
      continue;
    }
    if (++bad <= MAX_LOAD_WARNINGS)
      fprintf(stderr, "%s:%d: warning: skipping %s\n", path, lineno,
              nl ? "a line that is not a texc record"
                 : "the last line: it was cut off mid-write (no newline at the end)");
  }
  if (bad > MAX_LOAD_WARNINGS)
    fprintf(stderr, "%s: warning: %d lines skipped in all\n", path, bad);
  free(text);
  return true;
}

/* ---------------------------------------------------------------- the log, for writing */

struct RecordLog {
  char *path;
  int fd;      /* O_WRONLY | O_APPEND, holding an flock(LOCK_EX) until records_close */
  int written; /* records appended through this handle */
  bool failed; /* a write failed: nothing more is written */
};

/* The logs open in this process: a forked child (a measurement, a device query) closes
 * them, so that a child outliving a killed tune does not keep the log locked. */
#define MAX_OPEN_LOGS 8
static int open_fds[MAX_OPEN_LOGS];
static int nopen;

static void close_logs_in_child(void) {
  for (int i = 0; i < nopen; i++) close(open_fds[i]);
  nopen = 0;
}

static void track_fd(int fd, bool add) {
  static bool registered;
  if (!registered) registered = pthread_atfork(NULL, NULL, close_logs_in_child) == 0;
  if (add && nopen < MAX_OPEN_LOGS) open_fds[nopen++] = fd;
  for (int i = 0; !add && i < nopen; i++)
    if (open_fds[i] == fd) open_fds[i] = open_fds[--nopen];
}

/* The pid holding an flock on the file FD, from /proc/locks; 0 when unknown. */
static long flock_holder(int fd) {
  struct stat st;
  FILE *f = fstat(fd, &st) == 0 ? fopen("/proc/locks", "r") : NULL;
  char line[256];
  long pid = 0;
  while (f && !pid && fgets(line, sizeof line, f)) {
    char kind[16];
    long p;
    unsigned maj, min;
    unsigned long long ino;
    /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" */
    if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &p, &maj, &min, &ino) == 5 &&
        !strcmp(kind, "FLOCK") && ino == (unsigned long long)st.st_ino &&
        makedev(maj, min) == st.st_dev && p != (long)getpid())
      pid = p;
  }
  if (f) fclose(f);
  return pid;
}

/* Does PATH end in something other than '\n' (a line cut off mid-write)? */
static bool ends_cut(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  char c = '\n';
  bool cut = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
             pread(fd, &c, 1, st.st_size - 1) == 1 && c != '\n';
  if (fd >= 0) close(fd);
  return cut;
}

/* Write all of BUF to the log; a short write is undone (the file cut back to where it was)
 * so that no partial line stays. */
static bool log_write(RecordLog *log, const char *buf, size_t n) {
  ssize_t w = write(log->fd, buf, n);
  if (w == (ssize_t)n) return true;
  int err = w < 0 ? errno : ENOSPC;
  struct stat st;
  bool undone = w > 0 && fstat(log->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= w &&
                ftruncate(log->fd, st.st_size - w) == 0;
  (void)undone; /* when not undone, the partial line stays: the next records_open ends it */
  errno = err;
  return false;
}

RecordLog *records_open(const char *path, bool truncate) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "texc: error: cannot open the records log %s for appending: %s\n", path,
            strerror(errno));
    return NULL;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    long pid = flock_holder(fd);
    char who[32] = "";
    if (pid > 0) snprintf(who, sizeof who, " (pid %ld)", pid);
    fprintf(stderr,
            "texc: error: the records log %s is in use by another texc tune%s: wait for it "
            "to end, or give this one another log with --records\n",
            path, who);
    close(fd);
    return NULL;
  } /* other flock errors (a file system without locks): go on unlocked */
  RecordLog *log = calloc(1, sizeof *log);
  if (!log) die("out of memory");
  *log = (RecordLog){.path = sdup(path), .fd = fd};
  track_fd(fd, true);
  bool ok = true;
  if (truncate) ok = ftruncate(fd, 0) == 0 || errno == EINVAL; /* EINVAL: not a file */
  else if (ends_cut(path)) {
    fprintf(stderr,
            "%s: warning: the last line was cut off mid-write; it stays as a line that is "
            "not a record, and new records start on the next line\n", path);
    ok = log_write(log, "\n", 1);
  }
  if (!ok) {
    fprintf(stderr, "texc: error: cannot write the records log %s: %s\n", path, strerror(errno));
    records_close(log);
    return NULL;
  }
  return log;
}

bool records_write(RecordLog *log, const Record *r) {
  if (log->failed) return false;
  char *s = rec_to_json(r);
  size_t n = strlen(s);
  char *line = malloc(n + 2);
  if (!line) die_oom(0);
  memcpy(line, s, n);
  line[n] = '\n';
  free(s);
  bool ok = log_write(log, line, n + 1); /* one write of the whole line */
  free(line);
  if (!ok) {
    log->failed = true;
    fprintf(stderr,
            "texc: error: cannot append to the records log %s: %s; stopping (the %d records "
            "appended before are kept)\n", log->path, strerror(errno), log->written);
    return false;
  }
  log->written++;
  return true;
}

bool records_close(RecordLog *log) {
  if (!log) return true;
  /* fsync: what was written survives a power cut too (EINVAL: a device without it) */
  bool ok = fsync(log->fd) == 0 || errno == EINVAL || errno == EROFS;
  int err = errno;
  if (log->failed) ok = false;
  track_fd(log->fd, false);
  if (close(log->fd) != 0 && ok) ok = false, err = errno;
  if (!ok && !log->failed)
    fprintf(stderr, "texc: error: cannot write the records log %s: %s\n", log->path,
            strerror(err));
  free(log->path);
  free(log);
  return ok;
}

bool records_failed(const RecordLog *log) { return log && log->failed; }

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of every cost of R's schedule in L (all successful records of the same
 * workload, target and schedule text: a search re-times its best candidates at the end). */
static double schedule_cost(const RecordList *l, const Record *r) {
  int n = 0, cap = 0;
  double *c = NULL;
  for (int i = 0; i < l->n; i++) {
    const Record *q = &l->r[i];
    if (q->error != TE_OK || strcmp(q->workload, r->workload) || strcmp(q->target, r->target) ||
        strcmp(q->schedule, r->schedule))
      continue;
    if (n + q->ncosts > cap) {
      cap = (n + q->ncosts) * 2;
      c = realloc(c, sizeof *c * (size_t)cap);
      if (!c) die_oom(0);
    }
    for (int j = 0; j < q->ncosts; j++) c[n++] = q->costs[j];
  }
  if (n == 0) return free(c), rec_cost(r);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

char *rec_code(const Options *o) {
  if (!o || backend_for(o->target)->device != DEVICE_CPU) return xstrdup("");
  const char *t = o->mtriple && *o->mtriple ? o->mtriple : NULL, *c = o->mcpu && *o->mcpu ? o->mcpu : NULL;
  return xprintf("%s%s%s%s%s", t ? "--mtriple " : "", t ? t : "", t && c ? " " : "", c ? "--mcpu " : "",
                 c ? c : "");
}

bool rec_is(const Record *r, const char *workload, const char *target, const char *code) {
  return !strcmp(r->workload, workload) && !strcmp(r->target, target) &&
         !strcmp(r->code ? r->code : "", code ? code : "");
}

const Record *records_best(const RecordList *l, const char *workload, const char *target, const char *code) {
  double lo = INFINITY;
  for (int i = 0; i < l->n; i++) {
    const Record *r = &l->r[i];
    if (r->error == TE_OK && rec_is(r, workload, target, code)) lo = fmin(lo, rec_cost(r));
  }
  const Record *best = NULL;
  double bc = INFINITY;
  for (int i = 0; i < l->n && !isinf(lo); i++) {
    const Record *r = &l->r[i];
    /* only near-best records can be the best once their schedule's re-timings count */
    if (r->error != TE_OK || !rec_is(r, workload, target, code) || rec_cost(r) > 2 * lo) continue;
    double c = schedule_cost(l, r);
    if (!best || c < bc) best = r, bc = c;
  }
  return best;
}

int tune_threads(void) {
  const char *e = getenv("TEX_NUM_THREADS");
  int n = e ? atoi(e) : 0;
  if (n <= 0) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : 1;
}

/* ---------------------------------------------------------------- texc records */

/* "show": one row per record. */
static void records_show(const RecordList *l) {
  printf("%-4s %-16s %-14s %-7s %10s %10s  %s\n", "#", "workload", "kernel", "target", "ms",
         "GFLOP/s", "status");
  for (int i = 0; i < l->n; i++) {
    const Record *r = &l->r[i];
    double ms = rec_cost(r);
    if (r->error == TE_OK)
      printf("%-4d %-16s %-14s %-7s %10.4f %10.2f  ok\n", i + 1, r->workload, r->kernel,
             r->target, ms, r->flops > 0 ? r->flops / (ms * 1e6) : 0.0);
    else
      printf("%-4d %-16s %-14s %-7s %10s %10s  %s: %.60s\n", i + 1, r->workload, r->kernel,
             r->target, "-", "-", tune_error_names[r->error], r->error_msg);
  }
}

/* Indices of the best record per (workload, target, code), in order of first appearance. */
static int best_per_task(const RecordList *l, int *idx) {
  int n = 0;
  for (int i = 0; i < l->n; i++) {
    const Record *r = &l->r[i];
    if (r->error != TE_OK) continue;
    int j = 0;
    while (j < n && !rec_is(&l->r[idx[j]], r->workload, r->target, r->code)) j++;
    if (j == n) idx[n++] = i;
  }
  for (int j = 0; j < n; j++) {
    const Record *r = &l->r[idx[j]], *b = records_best(l, r->workload, r->target, r->code);
    if (b) idx[j] = (int)(b - l->r);
  }
  return n;
}

/* Print TEXT (steps, one per line) as a `schedule K.V for T { ... }` block. */
void tune_print_block(FILE *f, const char *kernel, const char *variant, const char *target,
                      const char *text) {
  fprintf(f, "schedule %s.%s for %s {\n", kernel, variant, target);
  for (const char *p = text; *p;) {
    size_t n = strcspn(p, "\n");
    if (n) fprintf(f, "  %.*s\n", (int)n, p);
    p += n + (p[n] == '\n');
  }
  fprintf(f, "}\n");
}

static int records_best_cmd(const RecordList *l) {
  int *idx = malloc(sizeof(int) * (size_t)(l->n + 1));
  int n = best_per_task(l, idx);
  for (int i = 0; i < n; i++) {
    const Record *r = &l->r[idx[i]];
    bool code = r->code && *r->code;
    printf("# workload %s: %.4f ms%s%s\n", r->workload, schedule_cost(l, r), code ? ", compiled with " : "",
           code ? r->code : "");
    tune_print_block(stdout, r->kernel, "tuned", r->target, r->schedule);
  }
  free(idx);
  return 0;
}

static int records_distill(const RecordList *l, const char *out) {
  int *idx = malloc(sizeof(int) * (size_t)(l->n + 1));
  int n = best_per_task(l, idx);
  RecordLog *log = records_open(out, true);
  bool ok = log != NULL;
  for (int i = 0; i < n && ok; i++) ok = records_write(log, &l->r[idx[i]]);
  if (log && !records_close(log)) ok = false;
  free(idx);
  if (ok) fprintf(stderr, "%s: %d records kept of %d\n", out, n, l->n);
  return ok ? 0 : 1;
}

int records_main(Cli *c) {
  const char *cmd = c->action, *path = c->file, *out = c->out; /* checked by cli_parse and drv_main */
  RecordList l = {0};
  records_load(path, &l);
  int rc = 0;
  if (strcmp(cmd, "show") == 0) records_show(&l);
  else if (strcmp(cmd, "best") == 0) rc = records_best_cmd(&l);
  else rc = records_distill(&l, out);
  reclist_free(&l);
  return rc;
}

/* The current time for records, seconds since the epoch. */
double tune_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)(t.tv_nsec / 1000000) / 1e3;
}
