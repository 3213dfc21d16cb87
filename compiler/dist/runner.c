/* runner.c — `texc tune --runner SPEC`: candidates measured by a texc-measure-server that
 * runs elsewhere (a board over ssh, an emulator, another process), started once for the
 * whole tune.
 *
 * SPEC may name several runners, one a line (--runner given again): a pool.
 *
 * Each batch, a group of --jobs candidates at a time: the candidates are built here in
 * parallel child processes into artifacts: for --target llvm, lowered, emitted as an
 * object for --mtriple/--mcpu and linked into a shared object with ld.lld (no toolchain of
 * the board's is needed); for --target opencl, the OpenCL C and launch plan that the local
 * OpenCL back end builds (target/gpu_source.c), which the server's OpenCL driver compiles
 * for the board's GPU. Then each artifact goes, in a request frame (wire.h), to whichever
 * runner is free, one candidate per runner at a time, and its answer becomes the record.
 * The server forks a child per candidate, so a failed build or a crash there is an error
 * record. A connection that closes, breaks or stays silent past the candidate's limits
 * loses that runner: its candidate in flight is an error record naming why, and the
 * others go on. With none left, the candidates not
 * sent are TE_UNMEASURED (dropped by the search, so a later tune measures them) and
 * Measurer.lost stops the search.
 */
#include "dist.h"
#include "rt_gpu.h"
#include "wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXPORT_PREFIX "texc_cand_" /* kernels are exported as this + name (no clashes) */
#define HELLO_TIMEOUT_S 60          /* ssh login and an emulator's start */
#define ANSWER_SLACK_S 30           /* transfer and the server's own work, past its limits */
#define MAX_RUNNERS 32

typedef struct Runner {
  char spec[512], why[512]; /* WHY: why it was lost ("" while alive) */
  pid_t pid;
  int to, from;             /* the server's stdin, its stdout */
  char cpu[256], isa[256];
  char artifacts[64];       /* the hello's artifact kinds ("": an older server, "so" only) */
  int threads, next_id;
  char workload[17];        /* the task BEST_MS belongs to (measure.c's LocalCtx) */
  double best_ms;
  int busy;                 /* the candidate in flight (its index in the group), -1: none */
  bool opencl_in_flight;    /* it is an OpenCL candidate */
  double deadline, wait_s;  /* its answer is late after DEADLINE (WAIT_S after sending) */
  struct timespec sent;
} Runner;

/* Measurer.ctx: the runners of one tune. */
typedef struct Pool {
  Runner *r[MAX_RUNNERS];
  int n;
  char dir[512];                /* $TMPDIR/texc-runner-XXXXXX: the artifacts */
  int count, crash_at, hang_at; /* TEXC_TUNE_INJECT, counted over the pool */
  int bad_source_at;            /* TEXC_TUNE_INJECT=badsource:N: OpenCL C that does not build */
  char why[1024];               /* the lost runners and their reasons */
} Pool;

static int alive_runners(const Pool *p) {
  int n = 0;
  for (int i = 0; i < p->n; i++) n += !p->r[i]->why[0];
  return n;
}

/* ---------------------------------------------------------------- the connection */

/* ARGV for SPEC into WORDS (at most N-1 and a NULL); false when SPEC is not a runner. */
static bool spec_argv(const char *spec, char *buf, size_t bufsz, char **argv, int n) {
  int argc = 0;
  if (strncmp(spec, "exec:", 5) == 0) {
    argv[argc++] = "/bin/sh", argv[argc++] = "-c", argv[argc++] = (char *)spec + 5;
  } else if (strncmp(spec, "ssh://", 6) == 0) {
    /* [USER@]HOST[:PORT][/PATH]; $TEXC_SSH: the ssh command with its options */
    snprintf(buf, bufsz, "%s", spec + 6);
    char *path = strchr(buf, '/'), *port = NULL;
    if (path) *path = 0;
    char *colon = strrchr(buf, ':');
    if (colon) *colon = 0, port = colon + 1;
    if (!*buf || (port && !*port)) return false;
    static char ssh[512];
    snprintf(ssh, sizeof ssh, "%s", getenv("TEXC_SSH") ? getenv("TEXC_SSH") : "ssh");
    for (char *w = strtok(ssh, " \t"); w && argc < n - 10; w = strtok(NULL, " \t")) argv[argc++] = w;
    argv[argc++] = "-T", argv[argc++] = "-o", argv[argc++] = "BatchMode=yes";
    argv[argc++] = "-o", argv[argc++] = "ServerAliveInterval=5";
    if (port) argv[argc++] = "-p", argv[argc++] = port;
    argv[argc++] = buf;
    static char remote[512];
    snprintf(remote, sizeof remote, "%s%s", path ? "/" : "", path ? path + 1 : "texc-measure-server");
    argv[argc++] = remote;
  } else {
    return false;
  }
  argv[argc] = NULL;
  return true;
}

/* R is lost (WHY: FMT with DETAIL); the search stops when it was the last of P. */
static void lose(Pool *p, Runner *r, Measurer *m, const char *fmt, const char *detail) {
  if (r->why[0]) return;
  snprintf(r->why, sizeof r->why, fmt, detail);
  int left = alive_runners(p);
  if (left == 0) m->lost = true;
  size_t len = strlen(p->why);
  snprintf(p->why + len, sizeof p->why - len, "%s%s: %s", len ? "; " : "", r->spec, r->why);
  if (p->n > 1)
    fprintf(stderr, "texc tune: error: runner %s: %s; %d runner(s) left\n", r->spec, r->why, left);
  else
    fprintf(stderr, "texc tune: error: runner %s: %s\n", r->spec, r->why);
  if (r->pid > 0) kill(r->pid, SIGKILL); /* ssh, or the local command's shell */
}

/* ---------------------------------------------------------------- building here */

/* One DType as the server's fill letter: f float, h half, i integer or bool. */
static char fill_kind(DType t) {
  return t == DT_F16 ? 'h' : dtype_is_float(t) ? 'f' : 'i';
}

/* Run argv; 0 on exit status 0. */
static int run_cmd(char **argv) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    execvp(argv[0], argv);
    _exit(127);
  }
  int st;
  return pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

/* FN as a shared object at ART (an object for the task's --mtriple/--mcpu, linked by
 * ld.lld); the request's "func" line into T. TE_OK, or an error code with MSG. */
static int emit_so(const Task *task, LoweredFunc *fn, const char *art, WireText *t, char *msg,
                   size_t sz) {
  Options o = task->opts;
  o.prefix = EXPORT_PREFIX;
  o.so_object = true; /* linked below into the .so the server opens */
  char obj[700];
  snprintf(obj, sizeof obj, "%s.o", art);
  if (!backend_for(task->target)->emit(&fn, 1, "obj", obj, &o))
    return snprintf(msg, sz, "%s", diag_last()[0] ? diag_last() : "emit failed"), TE_COMPILE;
  const char *ld = getenv("TEXC_LD") ? getenv("TEXC_LD") : "ld.lld";
  char *argv[] = {(char *)ld, "-shared", "-z", "nodelete", "-o", (char *)art, obj, NULL};
  int rc = run_cmd(argv);
  unlink(obj);
  if (rc != 0) return snprintf(msg, sz, "linking the candidate with %s failed (set TEXC_LD)", ld), TE_COMPILE;
  wire_put(t, "func", EXPORT_PREFIX "%s", fn->name);
  return TE_OK;
}

/* FN's OpenCL C at ART and, into T, the request's "artifact", "func", "opencl_device" and
 * launch plan lines: what target/opencl.c builds locally, for the server to build there. */
static int emit_opencl(const Task *task, LoweredFunc *fn, const char *art, WireText *t, char *msg,
                       size_t sz) {
  RtGpuFunc *plans;
  char *src = cg_gpu_source(&fn, 1, TARGET_OPENCL, &plans);
  if (!src) return snprintf(msg, sz, "%s", diag_last()[0] ? diag_last() : "no OpenCL C"), TE_COMPILE;
  FILE *f = fopen(art, "w");
  bool written = f && fputs(src, f) >= 0;
  if (f && fclose(f)) written = false;
  if (!written) return snprintf(msg, sz, "cannot write %s", art), TE_COMPILE;
  wire_put(t, "artifact", WIRE_ARTIFACT_OPENCL);
  wire_put(t, "func", "%s", plans[0].name);
  if (task->opts.opencl_device && task->opts.opencl_device[0])
    wire_put(t, "opencl_device", "%s", task->opts.opencl_device);
  if (!wire_put_gpu_plan(t, &plans[0]))
    return snprintf(msg, sz, "the launch plan is too large for a request"), TE_COMPILE;
  return TE_OK;
}

/* One "arg KIND BYTES NDIM DIMS..." line per parameter of FN into T. */
static void put_args(const LoweredFunc *fn, WireText *t) {
  for (int i = 0; i < fn->nparams; i++) {
    Buffer *b = fn->params[i];
    char dims[256] = "";
    size_t len = 0;
    for (int d = 0; d < b->ndim; d++) {
      int64_t v = 0;
      ir_is_const(b->shape[d], &v);
      len += (size_t)snprintf(dims + len, sizeof dims - len, " %lld", (long long)v);
    }
    wire_put(t, "arg", "%c %d %d%s", i < fn->ninputs ? fill_kind(b->dtype) : 'o',
             dtype_bytes(b->dtype), b->ndim, dims);
  }
}

/* In a child: TEXT for TASK lowered and built into the artifact ART (emit_so, emit_opencl).
 * Writes to FD "code CODE\nmsg MESSAGE\n" and, when built, the request's lines ("func",
 * "arg", ...); *FN (for the caller) when it is the check's child. */
static void build_artifact(const Task *task, const char *text, const char *art, int fd,
                           LoweredFunc **fnp) {
  diag_silent = true;
  diag_reset();
  Vec steps = {0};
  int err = TE_OK;
  char msg[512] = "";
  LoweredFunc *fn = NULL;
  if (!parse_steps("<candidate>", text, &steps)) err = TE_INSTANTIATE;
  else {
    Schedule *s = sched_build(task->kernel, task->target, &steps);
    fn = s ? sched_lower(s, &task->opts) : NULL;
    if (!fn) err = TE_INSTANTIATE;
  }
  if (err) snprintf(msg, sizeof msg, "%s", diag_last()[0] ? diag_last() : "schedule does not apply");
  WireText req = {0}, t = {0};
  if (!err && task->target == TARGET_OPENCL) err = emit_opencl(task, fn, art, &req, msg, sizeof msg);
  else if (!err) err = emit_so(task, fn, art, &req, msg, sizeof msg);
  if (!err) put_args(fn, &req);
  wire_put(&t, "code", "%d", err);
  wire_put(&t, "msg", "%s", msg);
  if (write(fd, t.s, t.len) != (ssize_t)t.len || (!err && write(fd, req.s, req.len) != (ssize_t)req.len))
    _exit(1);
  wire_text_free(&t);
  wire_text_free(&req);
  if (fnp) *fnp = fn;
}

/* Read all of FD until EOF or DEADLINE_S seconds; malloc'd, NUL-ended; NULL on timeout. */
static char *read_until_eof(int fd, double timeout_s) {
  size_t cap = 1024, len = 0;
  char *s = malloc(cap);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double left = timeout_s - (t.tv_sec - t0.tv_sec) - (t.tv_nsec - t0.tv_nsec) / 1e9;
    struct pollfd p = {fd, POLLIN, 0};
    int r = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      free(s);
      return NULL;
    }
    if (len + 1024 > cap) s = realloc(s, cap *= 2);
    ssize_t n = read(fd, s + len, cap - len - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += (size_t)n;
  }
  s[len] = 0;
  return s;
}

static void set_error(Record *r, int code, const char *msg) {
  r->error = code;
  free(r->error_msg);
  r->error_msg = strdup(msg);
  r->ncosts = 0;
}

/* Build TEXTS[0..n) in parallel children; INFO[i]: the child's report (NULL when it died:
 * then OUT[i] holds the error). */
static void build_group(Pool *pool, const Measurer *m, const Task *task, char **texts, int n,
                        int base, char **info, Record *out) {
  pid_t pid[64];
  int fd[64];
  for (int i = 0; i < n; i++) {
    char so[600];
    snprintf(so, sizeof so, "%s/c%d.art", pool->dir, base + i);
    int p[2];
    info[i] = NULL;
    if (pipe(p)) {
      pid[i] = -1;
      set_error(&out[i], TE_RUNTIME, "pipe failed");
      continue;
    }
    fflush(stdout);
    fflush(stderr);
    pid[i] = fork();
    if (pid[i] == 0) {
      close(p[0]);
      build_artifact(task, texts[i], so, p[1], NULL);
      _exit(0);
    }
    close(p[1]);
    fd[i] = p[0];
    if (pid[i] < 0) close(p[0]), set_error(&out[i], TE_RUNTIME, "fork failed");
  }
  for (int i = 0; i < n; i++) {
    if (pid[i] < 0) continue;
    info[i] = read_until_eof(fd[i], m->o.build_timeout_s);
    close(fd[i]);
    int st = 0;
    if (!info[i]) kill(pid[i], SIGKILL);
    waitpid(pid[i], &st, 0);
    if (!info[i]) set_error(&out[i], TE_BUILD_TIMEOUT, "the build timed out");
    else if (!strstr(info[i], "code ")) {
      char why[128];
      snprintf(why, sizeof why, "the build crashed (%s)", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "no report");
      set_error(&out[i], TE_COMPILE, why);
      free(info[i]);
      info[i] = NULL;
    }
  }
}

/* The file at PATH, malloc'd; NULL when unreadable. */
static unsigned char *slurp(const char *path, uint64_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
  *n = len > 0 && fread(b, 1, (size_t)len, f) == (size_t)len ? (uint64_t)len : 0;
  fclose(f);
  return b;
}

/* ---------------------------------------------------------------- measuring there */

/* As the local measurer's run_timeout (measure.c): generous near the best. */
static double run_limit(const Measurer *m, double best_ms) {
  if (best_ms <= 0) return m->o.run_timeout_s;
  double t = 0.25 + best_ms / 1e3 * (6 + 2.0 * m->o.repeat) + m->o.min_repeat_ms / 1e3 * m->o.repeat * 2;
  return t < m->o.run_timeout_s ? t : m->o.run_timeout_s;
}

/* Send one request (HDR lines so far, the shared object and INPUTS) and read its answer;
 * false when the runner is lost (reported). */
static bool exchange(Pool *p, Runner *r, Measurer *m, WireText *hdr, const unsigned char *so, uint64_t nso,
                     const void *inputs, uint64_t nin, double limit_s, char **ans,
                     unsigned char **pl, uint64_t *npl) {
  wire_put(hdr, "id", "%d", ++r->next_id);
  wire_put(hdr, "so_bytes", "%llu", (unsigned long long)nso);
  unsigned char *buf = malloc((size_t)(nso + nin) + 1);
  memcpy(buf, so, (size_t)nso);
  if (nin) memcpy(buf + nso, inputs, (size_t)nin);
  bool sent = wire_write(r->to, hdr->s, buf, nso + nin);
  free(buf);
  char why[256];
  if (!sent) {
    lose(p, r, m, "the connection was closed (%s)", "writing a request failed");
    return false;
  }
  int got = wire_read(r->from, limit_s + m->o.build_timeout_s + ANSWER_SLACK_S, ans, pl, npl, why, sizeof why);
  if (got != 1) {
    lose(p, r, m, "%s", why);
    return false;
  }
  return true;
}

/* Copy the request's lines of the build report INFO (all but "code" and "msg": the
 * function's name, its arguments' shapes, an OpenCL artifact's kind, device and launch
 * plan) into H. */
static void put_request_lines(WireText *h, const char *info) {
  for (const char *l = info; *l;) {
    size_t len = strcspn(l, "\n"), klen = strcspn(l, " \n");
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)klen, l);
    if (strcmp(key, "code") && strcmp(key, "msg") && klen < len)
      wire_put(h, key, "%.*s", (int)(len - klen - 1), l + klen + 1);
    l += len + (l[len] == '\n');
  }
}

/* The answer ANS into REC; OPENCL: it was measured on the server's OpenCL device (the
 * answer's "device"), a CPU candidate on its CPU. */
static void answer_record(Runner *r, const char *ans, bool opencl, Record *rec) {
  char msg[512], costs[1024];
  rec->error = (int)wire_num(ans, "error", TE_RUNTIME);
  wire_get(ans, "msg", msg, sizeof msg);
  rec->error_msg = strdup(msg);
  wire_get(ans, "costs", costs, sizeof costs);
  char *p = costs;
  for (rec->ncosts = 0; rec->ncosts < REC_MAX_COSTS; rec->ncosts++) {
    char *end;
    double c = strtod(p, &end);
    if (end == p) break;
    rec->costs[rec->ncosts] = c, p = end;
  }
  if (rec->error == TE_OK && rec->ncosts == 0) set_error(rec, TE_RUNTIME, "the server sent no times");
  char device[256];
  wire_get(ans, "device", device, sizeof device);
  if (!opencl) rec->cpu = strdup(r->cpu), rec->threads = r->threads; /* else as local: "opencl" */
  rec->host = strdup(r->cpu);
  rec->isa = strdup(r->isa);
  rec->gpu = strdup(device);
}

/* False (R lost, with the reason) when R's server cannot run TASK's artifacts: an OpenCL
 * candidate needs a server whose hello lists them. */
static bool runs_target(Pool *p, Runner *r, Measurer *m, const Task *task) {
  if (task->target != TARGET_OPENCL) return true;
  char kinds[sizeof r->artifacts];
  snprintf(kinds, sizeof kinds, "%s", r->artifacts);
  for (char *save, *w = strtok_r(kinds, " ", &save); w; w = strtok_r(NULL, " ", &save))
    if (!strcmp(w, WIRE_ARTIFACT_OPENCL)) return true;
  lose(p, r, m, "%s", !r->artifacts[0]
                          ? "its texc-measure-server predates OpenCL candidates (it runs CPU shared objects only): install this texc's server there"
                          : "its texc-measure-server was built without OpenCL (artifacts: so): --target opencl needs one linked with an OpenCL loader");
  return false;
}

/* Send candidate I of the group (INFO: its build report; its artifact cART.art) to R.
 * 1: sent (R is busy with it); 0: not sendable (OUT holds the error); -1: R is lost and
 * the candidate is still here for another runner. */
static int send_one(Pool *p, Runner *r, Measurer *m, const Task *task, const char *info, int i,
                    int art_index, Record *out) {
  if (!runs_target(p, r, m, task)) return -1;
  char so[600];
  snprintf(so, sizeof so, "%s/c%d.art", p->dir, art_index);
  uint64_t nso = 0;
  unsigned char *bytes = slurp(so, &nso);
  if (!bytes || !nso) {
    free(bytes);
    unlink(so);
    set_error(out, TE_COMPILE, "the built candidate is missing");
    return 0;
  }
  if (strcmp(r->workload, task->workload)) { /* another task: its own best */
    snprintf(r->workload, sizeof r->workload, "%s", task->workload);
    r->best_ms = 0;
  }
  int k = p->count++;
  if (k == p->bad_source_at && task->target == TARGET_OPENCL) { /* test hook: no OpenCL C */
    static const char junk[] = "\nthis line is not OpenCL C\n";
    bytes = realloc(bytes, (size_t)nso + sizeof junk);
    memcpy(bytes + nso, junk, sizeof junk - 1);
    nso += sizeof junk - 1;
  }
  double limit = run_limit(m, r->best_ms);
  WireText h = {0};
  wire_put(&h, "op", "measure");
  put_request_lines(&h, info);
  wire_put(&h, "repeat", "%d", m->o.repeat);
  wire_put(&h, "min_repeat_ms", "%g", m->o.min_repeat_ms);
  wire_put(&h, "best_ms", "%.9g", m->o.full ? 0 : r->best_ms);
  wire_put(&h, "cold", "%llu", (unsigned long long)task->cold_args);
  wire_put(&h, "timeout_s", "%.3f", limit);
  wire_put(&h, "build_timeout_s", "%g", m->o.build_timeout_s);
  wire_put(&h, "inject", "%d", k == p->crash_at ? 1 : k == p->hang_at ? 2 : 0);
  wire_put(&h, "id", "%d", ++r->next_id);
  wire_put(&h, "so_bytes", "%llu", (unsigned long long)nso);
  bool sent = wire_write(r->to, h.s, bytes, nso);
  free(bytes);
  wire_text_free(&h);
  if (!sent) {
    lose(p, r, m, "the connection was closed (%s)", "writing a request failed");
    return -1;
  }
  unlink(so);
  clock_gettime(CLOCK_MONOTONIC, &r->sent);
  r->busy = i;
  r->opencl_in_flight = task->target == TARGET_OPENCL;
  r->wait_s = limit + m->o.build_timeout_s + ANSWER_SLACK_S;
  r->deadline = (rt_now_ms() / 1e3) + r->wait_s;
  return 1;
}

/* R's answer to its candidate in flight into OUT, or R lost with OUT an error naming why. */
static void take_answer(Pool *p, Runner *r, Measurer *m, Record *out) {
  char *ans = NULL, why[256];
  unsigned char *pl = NULL;
  uint64_t npl;
  double left = r->deadline - (rt_now_ms() / 1e3);
  int got = wire_read(r->from, left > 0.1 ? left : 0.1, &ans, &pl, &npl, why, sizeof why);
  r->busy = -1;
  if (got != 1) {
    if (got < 0) snprintf(why, sizeof why, "no answer in %.0f s", r->wait_s);
    lose(p, r, m, "%s", why);
    char msg[1100];
    snprintf(msg, sizeof msg, "the runner %s was lost: %s", r->spec, r->why);
    set_error(out, TE_RUNTIME, msg);
    return;
  }
  answer_record(r, ans, r->opencl_in_flight, out);
  if (getenv("TEXC_TUNE_DEBUG")) { /* the round trip against the times measured there */
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - r->sent.tv_sec) * 1e3 + (t1.tv_nsec - r->sent.tv_nsec) / 1e6, run = 0;
    for (int i = 0; i < out->ncosts; i++) run += out->costs[i];
    fprintf(stderr, "[runner] %s: round trip %.1f ms, timed runs %.1f ms\n", r->spec, ms, run);
  }
  double ms = rec_cost(out);
  if (!isinf(ms) && (r->best_ms <= 0 || ms < r->best_ms)) r->best_ms = ms;
  free(ans);
  free(pl);
}

/* Wait (up to the first deadline) for the busy runners' answers; take those that came and
 * lose the runners past their deadline. */
static void wait_answers(Pool *p, Measurer *m, Record *out) {
  struct pollfd pf[MAX_RUNNERS];
  Runner *who[MAX_RUNNERS];
  int n = 0;
  double first = INFINITY;
  for (int j = 0; j < p->n; j++)
    if (p->r[j]->busy >= 0) {
      who[n] = p->r[j];
      pf[n++] = (struct pollfd){p->r[j]->from, POLLIN, 0};
      if (p->r[j]->deadline < first) first = p->r[j]->deadline;
    }
  double left = first - (rt_now_ms() / 1e3);
  if (poll(pf, (nfds_t)n, left > 0 ? (int)(left * 1000) + 1 : 0) < 0 && errno != EINTR) return;
  for (int i = 0; i < n; i++)
    if (pf[i].revents || (rt_now_ms() / 1e3) > who[i]->deadline) take_answer(p, who[i], m, &out[who[i]->busy]);
}

/* Measure the built candidates of a group (READY[i]: built, OUT[i] to fill; BASE: the
 * first one's artifact number) on whichever runners are free. */
static void dispatch(Pool *p, Measurer *m, const Task *task, char **info, const bool *ready,
                     int k, int base, Record *out) {
  int next = 0;
  for (;;) {
    for (int j = 0; j < p->n; j++) {
      while (next < k && !ready[next]) next++;
      Runner *r = p->r[j];
      if (next == k || r->why[0] || r->busy >= 0) continue;
      if (send_one(p, r, m, task, info[next], next, base + next, &out[next]) >= 0) next++;
    }
    bool busy = false;
    for (int j = 0; j < p->n; j++) busy |= p->r[j]->busy >= 0;
    if (!busy) break;
    wait_answers(p, m, out);
  }
  for (; next < k; next++) /* no runner is left: measured by a later tune */
    if (ready[next]) {
      char so[600];
      snprintf(so, sizeof so, "%s/c%d.art", p->dir, base + next);
      unlink(so);
      out[next].error = TE_UNMEASURED;
    }
}

static void measure_remote(Measurer *m, const Task *task, char **texts, int n, Record *out) {
  Pool *p = m->ctx;
  int jobs = m->o.jobs > 0 ? (m->o.jobs < 64 ? m->o.jobs : 64) : 1;
  char *info[64];
  bool ready[64];
  for (int g = 0; g < n; g += jobs) {
    int k = n - g < jobs ? n - g : jobs;
    if (m->lost) {
      for (int i = g; i < n; i++) out[i].error = TE_UNMEASURED;
      return;
    }
    build_group(p, m, task, texts + g, k, g, info, out + g);
    for (int i = 0; i < k; i++) {
      int code = info[i] ? (int)wire_num(info[i], "code", TE_COMPILE) : -2;
      ready[i] = info[i] && code == TE_OK;
      if (info[i] && code != TE_OK) {
        char msg[512];
        wire_get(info[i], "msg", msg, sizeof msg);
        set_error(&out[g + i], code, msg);
      }
    }
    dispatch(p, m, task, info, ready, k, g, out + g);
    for (int i = 0; i < k; i++) free(info[i]);
  }
}

/* ---------------------------------------------------------------- the check there */

/* In the check's child: build TEXT, run it there on seeded random inputs, compare the
 * outputs with the interpreter's run of the default schedule here. */
static int check_child(Pool *pool, Runner *r, Measurer *m, const Task *task, const char *text,
                       char *msg, size_t sz) {
  char so[600];
  snprintf(so, sizeof so, "%s/check.art", pool->dir);
  int p[2];
  if (pipe(p)) return -1;
  LoweredFunc *fn = NULL;
  build_artifact(task, text, so, p[1], &fn);
  close(p[1]);
  char *info = read_until_eof(p[0], 5);
  close(p[0]);
  if (!fn || !info || wire_num(info, "code", 1) != TE_OK) return snprintf(msg, sz, "the candidate does not build"), -1;
  Vec none = {0};
  Schedule *ds = sched_build(task->kernel, TARGET_LLVM, &none);
  LoweredFunc *ref = ds ? sched_lower(ds, &task->opts) : NULL;
  if (!ref) return snprintf(msg, sz, "the default schedule does not lower"), -1;
  void **host = calloc((size_t)fn->nparams, sizeof *host);
  uint64_t nin = 0, off = 0;
  int64_t *count = calloc((size_t)fn->nparams, sizeof *count);
  for (int i = 0; i < fn->nparams; i++) {
    Buffer *b = fn->params[i];
    count[i] = 1;
    for (int d = 0; d < b->ndim; d++) {
      int64_t v = 0;
      ir_is_const(b->shape[d], &v);
      count[i] *= v;
    }
    host[i] = calloc(1, (size_t)(count[i] * dtype_bytes(b->dtype)) + 1);
    if (i < fn->ninputs) {
      fill_random(host[i], b->dtype, count[i], 7 + (uint64_t)i);
      nin += (uint64_t)(count[i] * dtype_bytes(b->dtype));
    }
  }
  unsigned char *in = malloc((size_t)nin + 1);
  for (int i = 0; i < fn->ninputs; i++) {
    size_t nb = (size_t)(count[i] * dtype_bytes(fn->params[i]->dtype));
    memcpy(in + off, host[i], nb);
    off += nb;
  }
  uint64_t nso = 0;
  unsigned char *bytes = slurp(so, &nso);
  unlink(so);
  WireText h = {0};
  wire_put(&h, "op", "run");
  put_request_lines(&h, info);
  wire_put(&h, "timeout_s", "%g", m->o.run_timeout_s);
  wire_put(&h, "build_timeout_s", "%g", m->o.build_timeout_s);
  char *ans;
  unsigned char *pl;
  uint64_t npl;
  if (!bytes || !exchange(pool, r, m, &h, bytes, nso, in, nin, m->o.run_timeout_s, &ans, &pl, &npl))
    return snprintf(msg, sz, "the runner was lost"), -2;
  if (wire_num(ans, "error", 3) != TE_OK) {
    char why[200];
    wire_get(ans, "msg", why, sizeof why);
    return snprintf(msg, sz, "run failed there: %s", why), 0;
  }
  if (interp_run(ref, host, NULL)) return snprintf(msg, sz, "the interpreter failed"), -1;
  uint64_t at = 0;
  for (int i = fn->ninputs; i < fn->nparams; i++) {
    uint64_t nb = (uint64_t)(count[i] * dtype_bytes(fn->params[i]->dtype));
    if (at + nb > npl) return snprintf(msg, sz, "the server sent too few output bytes"), -1;
    CompareResult cr = {0};
    if (!compare_values_as(pl + at, host[i], fn->params[i]->dtype, compare_dtype(fn, fn->params[i]->dtype), count[i],
                           fn->params[i]->name, &cr))
      return snprintf(msg, sz, "wrong result against the interpreter: %s", compare_mismatch(&cr)), 0;
    at += nb;
  }
  return 1;
}

/* Measurer.check: on small sizes here (the schedule's semantics); at the task's sizes
 * there, through the first runner alive (the board's code against the interpreter). */
static int runner_check(Measurer *m, const Task *task, const char *text, bool small, char *msg,
                        size_t sz) {
  Pool *pool = m->ctx;
  Runner *r = NULL;
  for (int j = 0; j < pool->n && !r; j++)
    if (!pool->r[j]->why[0]) r = pool->r[j];
  if (small || !r) return measure_check(task, text, small, msg, sz);
  int p[2];
  if (pipe(p)) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) { /* the child talks to the server: the parent waits meanwhile */
    close(p[0]);
    diag_silent = true;
    char m2[256] = "";
    int rc = check_child(pool, r, m, task, text, m2, sizeof m2);
    char out[300];
    int len = snprintf(out, sizeof out, "%d %s", rc, m2);
    if (write(p[1], out, (size_t)len) != len) _exit(1);
    _exit(0);
  }
  close(p[1]);
  char *got = read_until_eof(p[0], 2 * (m->o.run_timeout_s + m->o.build_timeout_s) + 2 * ANSWER_SLACK_S);
  close(p[0]);
  if (!got) kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  int rc = got && *got ? atoi(got) : -2;
  const char *sp = got ? strchr(got, ' ') : NULL;
  snprintf(msg, sz, "%s", sp ? sp + 1 : "the check's child died");
  free(got);
  if (rc == -2) { /* the child may have died mid-frame: the stream cannot be trusted */
    lose(pool, r, m, "the interpreter check lost the connection (%s)", msg);
    return -1;
  }
  return rc;
}

/* ---------------------------------------------------------------- start and stop */

static void parse_inject(Pool *p) {
  p->crash_at = p->hang_at = -1;
  const char *e = getenv("TEXC_TUNE_INJECT"), *at;
  if (e && (at = strstr(e, "crash:"))) p->crash_at = atoi(at + 6);
  if (e && (at = strstr(e, "hang:"))) p->hang_at = atoi(at + 5);
  p->bad_source_at = e && (at = strstr(e, "badsource:")) ? atoi(at + 10) : -1;
}

/* Quit R's server (killed after the 5 s that END_S leaves), free R. */
static void stop_one(Runner *r, double end_s) {
  close(r->from);
  while (r->pid > 0 && waitpid(r->pid, NULL, WNOHANG) != r->pid) {
    if ((rt_now_ms() / 1e3) > end_s) {
      kill(r->pid, SIGKILL), waitpid(r->pid, NULL, 0);
      break;
    }
    nanosleep(&(struct timespec){0, 50000000}, NULL);
  }
  free(r);
}

/* Start the server of SPEC and read its hello; NULL (reported) when it does not answer. */
static Runner *start_one(const char *spec) {
  char buf[512], *argv[48];
  spec_argv(spec, buf, sizeof buf, argv, 48);
  Runner *r = calloc(1, sizeof *r);
  snprintf(r->spec, sizeof r->spec, "%s", spec);
  r->busy = -1;
  int in[2], outp[2];
  if (pipe(in) || pipe(outp)) {
    fprintf(stderr, "texc tune: error: --runner %s: cannot create a pipe\n", spec);
    free(r);
    return NULL;
  }
  fflush(stdout);
  fflush(stderr);
  r->pid = fork();
  if (r->pid == 0) {
    dup2(in[0], 0);
    dup2(outp[1], 1);
    close(in[0]), close(in[1]), close(outp[0]), close(outp[1]);
    execvp(argv[0], argv);
    fprintf(stderr, "texc tune: error: cannot run %s\n", argv[0]);
    _exit(127);
  }
  close(in[0]);
  close(outp[1]);
  r->to = in[1], r->from = outp[0];
  fcntl(r->to, F_SETFD, FD_CLOEXEC);
  fcntl(r->from, F_SETFD, FD_CLOEXEC);
  char *hello = NULL, why[256];
  unsigned char *pl = NULL;
  uint64_t n;
  if (wire_read(r->from, HELLO_TIMEOUT_S, &hello, &pl, &n, why, sizeof why) != 1 ||
      !strstr(hello, "server texc-measure-server")) {
    fprintf(stderr, "texc tune: error: runner %s: no texc-measure-server answered (%s)\n", spec,
            r->pid > 0 ? why : "fork failed");
    close(r->to);
    stop_one(r, (rt_now_ms() / 1e3));
    free(hello);
    free(pl);
    return NULL;
  }
  wire_get(hello, "cpu", r->cpu, sizeof r->cpu);
  wire_get(hello, "isa", r->isa, sizeof r->isa);
  wire_get(hello, "artifacts", r->artifacts, sizeof r->artifacts);
  r->threads = (int)wire_num(hello, "threads", 1);
  fprintf(stderr, "runner %s: %s (%s), %d threads\n", spec, r->cpu, r->isa, r->threads);
  free(hello);
  free(pl);
  return r;
}

/* Every SPEC of SPECS (one a line) a runner; false (reported) when one is not. */
static bool specs_valid(const char *specs) {
  char one[512], buf[512], *argv[48];
  for (const char *s = specs; *s;) {
    size_t len = strcspn(s, "\n");
    snprintf(one, sizeof one, "%.*s", (int)len, s);
    if (!spec_argv(one, buf, sizeof buf, argv, 48)) {
      fprintf(stderr, "texc tune: error: --runner %s: expected ssh://[USER@]HOST[:PORT][/PATH] or exec:COMMAND\n", one);
      return false;
    }
    s += len + (s[len] == '\n');
  }
  return true;
}

bool runner_start(const char *spec, const MeasureOpts *o, Measurer *out) {
  if (!specs_valid(spec)) return false;
  Pool *p = calloc(1, sizeof *p);
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(p->dir, sizeof p->dir, "%s/texc-runner-XXXXXX", tmp);
  if (!mkdtemp(p->dir)) {
    fprintf(stderr, "texc tune: error: --runner: cannot create a folder in %s\n", tmp);
    free(p);
    return false;
  }
  signal(SIGPIPE, SIG_IGN); /* a dead connection is an error return, not a signal */
  *out = (Measurer){measure_remote, p, *o, .check = runner_check};
  char one[512];
  for (const char *s = spec; *s;) {
    size_t len = strcspn(s, "\n");
    snprintf(one, sizeof one, "%.*s", (int)len, s);
    s += len + (s[len] == '\n');
    if (p->n == MAX_RUNNERS) {
      fprintf(stderr, "texc tune: error: more than %d runners\n", MAX_RUNNERS);
      break;
    }
    Runner *r = start_one(one); /* one that does not answer is left out */
    if (r) p->r[p->n++] = r;
  }
  parse_inject(p);
  if (p->n == 0) runner_stop(out);
  return p->n > 0;
}

/* Remove DIR and the files in it (artifacts left by a lost runner). */
static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
}

void runner_stop(Measurer *m) {
  Pool *p = m->ctx;
  if (!p) return;
  for (int j = 0; j < p->n; j++) { /* all told first, then each waited for */
    if (!p->r[j]->why[0]) wire_write(p->r[j]->to, "op quit\n", NULL, 0);
    close(p->r[j]->to);
  }
  double end = (rt_now_ms() / 1e3) + 5;
  for (int j = 0; j < p->n; j++) stop_one(p->r[j], end);
  remove_dir(p->dir);
  free(p);
  m->ctx = NULL;
}

const char *runner_lost_reason(const Measurer *m) {
  const Pool *p = m->ctx;
  return p ? p->why : "";
}
