/* measure.c — the measurer: candidates built in parallel child processes, then timed one
 * at a time; a crash or a hang costs one error record, never the search. Also the
 * interpreter check of a candidate on small sizes.
 *
 * Protocol with each worker (a socket): the parent sends a candidate's text; the worker
 * builds it, sends a Msg (phase 1: built or an error), waits for a Go, times the kernel,
 * sends a Msg (phase 2) and waits for the next text. Workers live as long as their
 * Measurer and task (up to WORKER_CANDIDATES candidates each), so that a GPU's context and
 * the parameters' tensors are made once per worker, not once per candidate.
 */
#include "autosched.h"
#include "texrt.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct Msg {
  int phase, error, ncosts;
  double costs[REC_MAX_COSTS];
  char text[256];
} Msg;

typedef struct Go {
  double best_ms;       /* a candidate much slower than this is timed once */
  int inject;           /* test hook: 1 crash, 2 hang */
  int repeat;           /* the Measurer's options now (re-timings change them) */
  double min_repeat_ms;
} Go;

/* ---------------------------------------------------------------- building in a child */

/* Tensors for FN's parameters on DEV, inputs filled with random data. */
static RtTensor **alloc_args(const LoweredFunc *fn, RtDevice dev, uint64_t seed, char *msg,
                             size_t msgsz) {
  RtTensor **args = calloc((size_t)fn->nparams, sizeof *args);
  for (int i = 0; i < fn->nparams; i++) {
    Buffer *b = fn->params[i];
    int64_t shape[8];
    for (int d = 0; d < b->ndim && d < 8; d++)
      if (!ir_is_const(b->shape[d], &shape[d])) {
        snprintf(msg, msgsz, "tensor %s has a symbolic shape", b->name);
        return NULL;
      }
    args[i] = rt_tensor_alloc(dev, dtype_bytes(b->dtype), b->ndim, shape);
    if (!args[i]) {
      snprintf(msg, msgsz, "%s", rt_last_error());
      return NULL;
    }
    void *host = calloc(1, (size_t)args[i]->nbytes + 1);
    if (i < fn->ninputs)
      fill_random(host, b->dtype, args[i]->nbytes / dtype_bytes(b->dtype), seed + (uint64_t)i);
    rt_tensor_from_host(args[i], host);
    free(host);
  }
  return args;
}

/* Steps text -> lowered function for KERNEL on T; NULL with an error code and message. */
static LoweredFunc *lower_text(Kernel *k, Target t, const Options *o, const char *text,
                               int *err, char *msg, size_t msgsz) {
  Vec steps = {0};
  diag_reset();
  if (!parse_steps("<candidate>", text, &steps)) {
    *err = TE_INSTANTIATE;
    snprintf(msg, msgsz, "%s", diag_last());
    return NULL;
  }
  Schedule *s = sched_build(k, t, &steps);
  LoweredFunc *fn = s ? sched_lower(s, o) : NULL;
  if (!fn) {
    *err = TE_INSTANTIATE;
    snprintf(msg, msgsz, "%s", diag_last()[0] ? diag_last() : "schedule does not apply");
  }
  return fn;
}

/* Build TEXT for TASK in this (worker) process: the function, its module in *MOD; the
 * parameters' tensors in *ARGS, allocated and filled at the worker's first build and kept
 * (every candidate of a task has the kernel's parameters). */
static RtFunc *child_build(const Task *task, const char *text, RtTensor ***args, RtModule **mod,
                           Msg *m) {
  *mod = NULL;
  LoweredFunc *fn = lower_text(task->kernel, task->target, &task->opts, text, &m->error,
                               m->text, sizeof m->text);
  if (!fn) return NULL;
  *mod = backend_for(task->target)->build(&fn, 1, &task->opts);
  RtFunc *f = *mod ? rt_module_func(*mod, fn->name) : NULL;
  if (!f) {
    m->error = TE_COMPILE;
    snprintf(m->text, sizeof m->text, "%s", diag_last()[0] ? diag_last() : rt_last_error());
    return NULL;
  }
  if (!*args) *args = alloc_args(fn, target_device(task->target), 1, m->text, sizeof m->text);
  if (!*args) {
    m->error = TE_RUNTIME;
    return NULL;
  }
  /* A GPU candidate's first launch is part of its build: PoCL compiles the work-group
   * function for its local size there, and a CUDA module loads lazily. */
  int nargs = task->kernel->ninputs + task->kernel->noutputs;
  if (backend_for(task->target)->device == DEVICE_GPU && rt_func_call(f, *args, nargs, NULL, 0)) {
    m->error = TE_RUNTIME;
    snprintf(m->text, sizeof m->text, "%s", rt_last_error());
    return NULL;
  }
  return f;
}

/* Time F as every tuner measurement is timed (rt_time_candidate). */
static void child_time(RtFunc *f, RtTensor **args, int nargs, uint64_t cold, const Go *go,
                       Msg *m) {
  int n = rt_time_candidate_cold(f, args, nargs, cold, go->repeat, go->min_repeat_ms, go->best_ms,
                                 m->costs, REC_MAX_COSTS);
  if (n < 0) {
    m->error = TE_RUNTIME;
    snprintf(m->text, sizeof m->text, "%s", rt_last_error());
    return;
  }
  m->ncosts = n;
}

static bool read_all(int fd, void *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, (char *)p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += (size_t)r;
  }
  return true;
}

/* Send N bytes to a worker: a socket, so that a dead one is an error, not SIGPIPE. */
static bool send_all(int fd, const void *p, size_t n) {
  size_t put = 0;
  while (put < n) {
    ssize_t w = send(fd, (const char *)p + put, n - put, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    put += (size_t)w;
  }
  return true;
}

/* A worker: candidates of TASK one after another until its socket closes. Each is built
 * in an arena of its own (freed after it), answered (phase 1), timed on the parent's Go
 * (phase 2) and unloaded; the device (a CUDA context, an OpenCL queue) and the
 * parameters' tensors stay, which is what a worker saves over a process per candidate. A
 * runtime error may leave the device unusable (CUDA's errors are sticky): the worker
 * answers, then exits. */
static _Noreturn void worker_main(const Task *forked, int fd) {
  diag_silent = true;
  Task cur = *forked;
  const Task *task = &cur;
  RtTensor **args = NULL;
  int nargs = task->kernel->ninputs + task->kernel->noutputs;
  for (;;) {
    uint32_t len;
    int32_t index;
    if (!read_all(fd, &len, sizeof len) || !read_all(fd, &index, sizeof index) || len > (1u << 24)) _exit(0);
    char *text = malloc((size_t)len + 1);
    if (!text || !read_all(fd, text, len)) _exit(0);
    text[len] = 0;
    if (cur.source && index != cur.index) { /* another task of the network: its own tensors */
      for (int i = 0; args && i < nargs; i++) rt_tensor_free(args[i]);
      free(args);
      args = NULL;
      cur = cur.source->at(cur.source->ctx, index);
      nargs = task->kernel->ninputs + task->kernel->noutputs;
    }
    Msg m = {.phase = 1};
    Arena *ar = arena_new(), *old = arena_swap(ar);
    double t0 = rt_now_ms();
    RtModule *mod;
    RtFunc *f = child_build(task, text, &args, &mod, &m);
    arena_swap(old);
    arena_free(ar);
    free(text);
    if (getenv("TEXC_TUNE_DEBUG"))
      fprintf(stderr, "[child %d] built in %.1f ms (cpu %.1f ms): %s\n", (int)getpid(),
              rt_now_ms() - t0, clock() * 1e3 / CLOCKS_PER_SEC, m.error ? m.text : "ok");
    if (write(fd, &m, sizeof m) != sizeof m || m.error == TE_RUNTIME) _exit(0);
    if (!f) {
      if (mod) rt_module_free(mod);
      continue;
    }
    Go go;
    if (!read_all(fd, &go, sizeof go)) _exit(0);
    if (go.inject == 1) signal(SIGSEGV, SIG_DFL), raise(SIGSEGV); /* PoCL handles SIGSEGV */
    if (go.inject == 2) for (;;) pause();
    m.phase = 2;
    child_time(f, args, nargs, task->cold_args, &go, &m);
    if (write(fd, &m, sizeof m) != sizeof m || m.error) _exit(0);
    rt_module_free(mod);
  }
}

/* ---------------------------------------------------------------- the parent side */

/* A worker process and the socket to it. */
typedef struct Worker {
  pid_t pid;
  int fd;
  int used;   /* candidates it built */
  bool built; /* this group's candidate is built: its Go is due */
} Worker;

/* Candidates a worker builds before it is replaced: what a build leaves behind (the
 * lowering's arena aside: LLVM's and the drivers' caches) stays bounded. */
#define WORKER_CANDIDATES 32
#define MAX_WORKERS 64

/* The workers of one task (or of one network's tasks), for one Measurer: started on
 * demand, kept across rounds. */
typedef struct Pool {
  Worker w[MAX_WORKERS];
  const Task *task; /* the task the workers were forked for */
  char workload[17];
  uint64_t cold_args;
  const TaskSource *source; /* a network's: the workers move to any of its tasks */
} Pool;

/* End worker W: closing its socket ends its loop; KILL_IT first for one that hangs or
 * must not finish. The exit is waited for: a worker holds device memory and a context. */
static void worker_end(Worker *w, bool kill_it, char *why, size_t whysz) {
  if (w->pid <= 0) return;
  if (kill_it) kill(w->pid, SIGKILL);
  close(w->fd);
  int st = 0;
  while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {}
  if (why && WIFSIGNALED(st) && (!kill_it || WTERMSIG(st) != SIGKILL))
    snprintf(why, whysz, "the candidate crashed (signal %d: %s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else if (why && !why[0]) snprintf(why, whysz, "the candidate exited with status %d", WEXITSTATUS(st));
  *w = (Worker){0};
}

static void pool_end(Pool *p) {
  for (int i = 0; i < MAX_WORKERS; i++) worker_end(&p->w[i], false, NULL, 0);
  p->task = NULL;
  p->source = NULL;
}

/* Start worker I of P for TASK; false when fork or the socket failed. */
static bool worker_start(Pool *p, int i, const Task *task) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) return false;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return false;
  }
  if (pid == 0) {
    close(sv[0]);
    for (int j = 0; j < MAX_WORKERS; j++) /* the others' sockets: theirs to end */
      if (p->w[j].pid > 0) close(p->w[j].fd);
    worker_main(task, sv[1]);
  }
  close(sv[1]);
  p->w[i] = (Worker){pid, sv[0], 0, false};
  return true;
}

/* Read one Msg from W within TIMEOUT_S; 1: got it, 0: the worker died, -1: timeout. */
static int recv_msg(Worker *w, double timeout_s, Msg *m) {
  struct pollfd p = {w->fd, POLLIN, 0};
  int r;
  do r = poll(&p, 1, (int)(timeout_s * 1000));
  while (r < 0 && errno == EINTR);
  if (r == 0) return -1;
  return read_all(w->fd, m, sizeof *m) ? 1 : 0;
}

static void set_error(Record *r, int code, const char *msg) {
  r->error = code;
  free(r->error_msg);
  r->error_msg = strdup(msg);
  r->ncosts = 0;
}

static void finish(Record *r, const Msg *m) {
  r->error = m->error;
  r->error_msg = strdup(m->text);
  r->ncosts = m->ncosts;
  memcpy(r->costs, m->costs, sizeof m->costs);
}

/* The best cost measured so far of the task WORKLOAD (for the "timed once" shortcut): one
 * measurer may serve many tasks (texc-mpi's ranks, a runner), and a fast task's best must
 * not cut a slow task's candidates to their warm-up, or stop them as timeouts. */
typedef struct LocalCtx {
  char workload[17];
  double best_ms;
  int count;          /* candidates measured, for the test hook */
  int crash_at, hang_at;
  Pool pool;
} LocalCtx;

/* Seconds a run may take: enough for the warm-up and the repeats of a candidate near the
 * best, even on a loaded machine (a candidate over 2x the best is timed by one call; one
 * over ~12x (+0.25 s) is stopped: a run-timeout record, which is cheaper than its whole call); the
 * configured limit while there is no best. */
static double run_timeout(const Measurer *me, double best_ms) {
  if (best_ms <= 0) return me->o.run_timeout_s;
  double t = 0.25 + best_ms / 1e3 * (6 + 2.0 * me->o.repeat) +
             me->o.min_repeat_ms / 1e3 * me->o.repeat * 2;
  return t < me->o.run_timeout_s ? t : me->o.run_timeout_s;
}

/* Hand TEXT to worker I of P (started, or replaced when it is used up or gone). */
static bool give_job(Pool *p, int i, const Task *task, const char *text) {
  Worker *w = &p->w[i];
  if (w->pid > 0 && w->used >= WORKER_CANDIDATES) worker_end(w, false, NULL, 0);
  uint32_t len = (uint32_t)strlen(text);
  int32_t index = task->index;
  for (int attempt = 0; attempt < 2; attempt++) {
    if (w->pid <= 0 && !worker_start(p, i, task)) return false;
    if (send_all(w->fd, &len, sizeof len) && send_all(w->fd, &index, sizeof index) && send_all(w->fd, text, len)) {
      w->used++;
      return true;
    }
    worker_end(w, true, NULL, 0); /* it had died since its last candidate: a new one */
  }
  return false;
}

/* Measure TEXTS[0..n) as one group: parallel builds in the workers, then the runs one at
 * a time. A worker that crashes, hangs or reports a runtime error is ended (and replaced
 * at its next candidate); the others are kept for the next group. */
static void measure_group(Measurer *me, const Task *task, char **texts, int n, Record *out) {
  LocalCtx *ctx = me->ctx;
  Pool *p = &ctx->pool;
  Worker *w = p->w;
  for (int i = 0; i < n; i++) {
    w[i].built = false;
    if (!give_job(p, i, task, texts[i])) set_error(&out[i], TE_RUNTIME, "fork failed");
    else w[i].built = true; /* a job given: its build answer is due */
  }
  double deadline = rt_now_ms() + me->o.build_timeout_s * 1e3;
  for (int i = 0; i < n; i++) {
    if (!w[i].built) continue;
    w[i].built = false;
    Msg m = {0};
    int r = recv_msg(&w[i], fmax(0.01, (deadline - rt_now_ms()) / 1e3), &m);
    char why[256] = "";
    if (r == 1 && m.error == TE_OK) {
      w[i].built = true;
      continue;
    }
    if (r == 1) finish(&out[i], &m);
    if (r != 1 || m.error == TE_RUNTIME) worker_end(&w[i], r < 0, why, sizeof why);
    if (r == 0) set_error(&out[i], TE_COMPILE, why);
    if (r < 0) set_error(&out[i], TE_BUILD_TIMEOUT, "the build timed out");
  }
  for (int i = 0; i < n; i++) {
    if (!w[i].built) continue;
    w[i].built = false;
    int idx = ctx->count++;
    Go go = {me->o.full ? 0 : ctx->best_ms, idx == ctx->crash_at ? 1 : idx == ctx->hang_at ? 2 : 0,
             me->o.repeat, me->o.min_repeat_ms};
    Msg m = {0};
    double limit = run_timeout(me, ctx->best_ms);
    int r = send_all(w[i].fd, &go, sizeof go) ? recv_msg(&w[i], limit, &m) : 0;
    char why[256] = "";
    if (r == 1) finish(&out[i], &m);
    if (r != 1 || m.error) worker_end(&w[i], r < 0, why, sizeof why);
    if (r == 0) set_error(&out[i], TE_RUNTIME, why);
    if (r < 0) {
      snprintf(why, sizeof why, "the run timed out (stopped after %.0f ms)", limit * 1e3);
      set_error(&out[i], TE_RUN_TIMEOUT, why);
    }
    double ms = rec_cost(&out[i]);
    if (ms < ctx->best_ms || ctx->best_ms <= 0) ctx->best_ms = isinf(ms) ? ctx->best_ms : ms;
  }
}

static void measure_local(Measurer *me, const Task *task, char **texts, int n, Record *out) {
  LocalCtx *ctx = me->ctx;
  if (strcmp(ctx->workload, task->workload)) { /* another task: its own best */
    snprintf(ctx->workload, sizeof ctx->workload, "%s", task->workload);
    ctx->best_ms = 0;
  }
  /* Workers hold the task they were forked with: another task (or the same workload in
   * another Task, or with other parameters cold) needs new ones. */
  Pool *p = &ctx->pool;
  bool same = task->source ? p->source == task->source
                           : !p->source && p->task == task && !strcmp(p->workload, task->workload) &&
                                 p->cold_args == task->cold_args;
  if (!same) {
    pool_end(p);
    p->task = task;
    p->source = task->source;
    p->cold_args = task->cold_args;
    snprintf(p->workload, sizeof p->workload, "%s", task->workload);
  }
  int jobs = me->o.jobs > 0 ? me->o.jobs : 1;
  if (jobs > MAX_WORKERS) jobs = MAX_WORKERS;
  for (int i = 0; i < n; i += jobs)
    measure_group(me, task, texts + i, n - i < jobs ? n - i : jobs, out + i);
}

/* TEXC_TUNE_INJECT=crash:N,hang:M makes the N-th (M-th) measured candidate crash (hang):
 * a hidden hook for the tests. */
static void parse_inject(LocalCtx *c) {
  c->crash_at = c->hang_at = -1;
  const char *e = getenv("TEXC_TUNE_INJECT");
  if (!e) return;
  const char *p;
  if ((p = strstr(e, "crash:"))) c->crash_at = atoi(p + 6);
  if ((p = strstr(e, "hang:"))) c->hang_at = atoi(p + 5);
}

Measurer measurer_local(const MeasureOpts *o) {
  LocalCtx *c = calloc(1, sizeof *c);
  if (!c) die_oom(0);
  parse_inject(c);
  Measurer m = {.measure = measure_local, .ctx = c, .o = *o};
  return m;
}

void measurer_local_free(Measurer *m) {
  LocalCtx *c = m->ctx;
  if (!c) return;
  pool_end(&c->pool);
  free(c);
  m->ctx = NULL;
}

/* ---------------------------------------------------------------- interpreter check */

/* A name's value among the first N of DEFS (the latest definition wins), for
 * check_const_expr. */
typedef struct DefTable {
  const Define *defs;
  int n;
} DefTable;

static bool def_value(void *env, const char *name, int64_t *value) {
  const DefTable *t = env;
  for (int i = t->n - 1; i >= 0; i--)
    if (strcmp(t->defs[i].name, name) == 0) return *value = t->defs[i].value, true;
  return false;
}

/* A small size with the same divisibility flavour: what the check runs with. */
static int64_t reduce_size(int64_t v) { return v < 32 ? v : 16 + v % 7; }

/* Defines for the small check: every constant and -D value reduced. */
static int small_defines(const Task *task, Define *out, int cap) {
  int n = 0;
  Define all[256];
  int na = 0;
  for (int i = 0; task->file && i < task->file->list.len && na < 256; i++) {
    Ast *c = VEC_AT(task->file->list, i);
    int64_t v;
    if (c->kind != A_CONST) continue;
    bool user = false;
    for (int j = 0; j < task->ndefs; j++)
      if (strcmp(task->defs[j].name, c->name) == 0) v = task->defs[j].value, user = true;
    /* folded as the checker folded it (the file passed the checker with these values);
     * a name from an import is unknown here, and the constant is left out */
    const char *unknown = NULL;
    if (user || check_const_expr(c->a, def_value, &(DefTable){all, na}, &unknown, &v))
      all[na++] = (Define){c->name, v, false};
  }
  for (int j = 0; j < task->ndefs && na < 256; j++) all[na++] = task->defs[j];
  for (int i = 0; i < na && n < cap; i++) {
    bool dup = false;
    for (int j = 0; j < n; j++) dup |= strcmp(out[j].name, all[i].name) == 0;
    if (!dup) out[n++] = (Define){all[i].name, reduce_size(all[i].value), false};
  }
  return n;
}

/* The unscheduled function REF run as compiled CPU code on HOST (its inputs; its outputs
 * are written there): the reference of a task too large to interpret. 0 on success. */
static int run_compiled_ref(const Task *task, LoweredFunc *ref, void **host, char *msg, size_t sz) {
  RtModule *mod = backend_for(TARGET_LLVM)->build(&ref, 1, &task->opts);
  RtFunc *f = mod ? rt_module_func(mod, ref->name) : NULL;
  RtTensor **args = f ? alloc_args(ref, target_device(TARGET_LLVM), 7, msg, sz) : NULL;
  if (!args) return snprintf(msg, sz, "the unscheduled kernel does not build"), -1;
  for (int i = 0; i < ref->ninputs; i++) rt_tensor_from_host(args[i], host[i]);
  if (rt_func_call(f, args, ref->nparams, NULL, 0))
    return snprintf(msg, sz, "the unscheduled kernel failed: %s", rt_last_error()), -1;
  for (int i = ref->ninputs; i < ref->nparams; i++) rt_tensor_to_host(host[i], args[i]);
  return 0;
}

/* Run TEXT's compiled code and the default schedule's interpretation on the same inputs.
 * A task above 2e8 operations is re-checked at reduced sizes when it has a source file;
 * without one (a network's imported task), its reference is the unscheduled kernel
 * compiled for the CPU at full size: the interpreter would take minutes there, and the
 * unscheduled loop nest is the interpreter's own order, free of every schedule step the
 * candidate took. In the child of measure_check. */
static int check_in_child(const Task *task, const char *text, bool small, char *msg, size_t sz) {
  Kernel *k = task->kernel;
  bool compiled_ref = false;
  if (task->file) { /* re-check the file with reduced sizes (or the user's) */
    Define defs[64];
    int nd = small ? small_defines(task, defs, 64) : task->ndefs;
    if (!small) memcpy(defs, task->defs, sizeof(Define) * (size_t)(nd < 64 ? nd : 64));
    Program *p = check_program(task->file, defs, nd);
    k = p ? program_kernel(p, task->kernel->name) : NULL;
    if (!k) return snprintf(msg, sz, "the kernel does not check at small sizes"), -1;
  } else {
    compiled_ref = task->flops > 2e8;
  }
  int err;
  LoweredFunc *fn = lower_text(k, task->target, &task->opts, text, &err, msg, sz);
  Vec none = {0};
  Schedule *ds = sched_build(k, TARGET_LLVM, &none);
  LoweredFunc *ref = ds ? sched_lower(ds, &task->opts) : NULL;
  if (!fn || !ref) return -1;
  RtModule *mod = backend_for(task->target)->build(&fn, 1, &task->opts);
  RtFunc *f = mod ? rt_module_func(mod, fn->name) : NULL;
  RtTensor **args = f ? alloc_args(fn, target_device(task->target), 7, msg, sz) : NULL;
  if (!args) return snprintf(msg, sz, "the candidate does not build at small sizes"), -1;
  if (rt_func_call(f, args, fn->nparams, NULL, 0))
    return snprintf(msg, sz, "run failed: %s", rt_last_error()), 0;
  void **host = calloc((size_t)fn->nparams, sizeof *host);
  for (int i = 0; i < fn->nparams; i++) {
    host[i] = calloc(1, (size_t)args[i]->nbytes + 1);
    if (i < fn->ninputs) rt_tensor_to_host(host[i], args[i]);
  }
  if (compiled_ref ? run_compiled_ref(task, ref, host, msg, sz) != 0 : interp_run(ref, host, NULL) != 0)
    return msg[0] ? -1 : (snprintf(msg, sz, "the interpreter failed"), -1);
  for (int i = fn->ninputs; i < fn->nparams; i++) {
    void *got = calloc(1, (size_t)args[i]->nbytes + 1);
    rt_tensor_to_host(got, args[i]);
    if (i == fn->ninputs && getenv("TEXC_CHECK_INJECT_WRONG")) /* test hook: a wrong candidate */
      ((unsigned char *)got)[dtype_bytes(fn->params[i]->dtype) - 1] ^= 0x40;
    int64_t n = args[i]->nbytes / dtype_bytes(fn->params[i]->dtype);
    CompareResult r = {0};
    if (!compare_values_as(got, host[i], fn->params[i]->dtype, compare_dtype(fn, fn->params[i]->dtype), n, fn->params[i]->name, &r))
      return snprintf(msg, sz, "wrong result against %s: %s", compiled_ref ? "the unscheduled kernel" : "the interpreter", compare_mismatch(&r)), 0;
  }
  return 1;
}

/* How long a check's child may take (an ASan build on a loaded machine needs tens of
 * seconds for a network's candidate); then it is killed and the check fails as a timeout. */
#define CHECK_TIMEOUT_S 180

int measure_check(const Task *task, const char *text, bool small, char *msg, size_t msgsz) {
  int fd[2];
  if (pipe(fd)) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(fd[0]);
    diag_silent = true;
    Msg m = {0};
    m.error = check_in_child(task, text, small, m.text, sizeof m.text);
    if (write(fd[1], &m, sizeof m) != sizeof m) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  Worker c = {pid, fd[0], 0, false};
  Msg m = {0};
  int r = recv_msg(&c, CHECK_TIMEOUT_S, &m);
  char why[256] = "";
  int st = 0;
  if (r != 1) kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  close(fd[0]);
  if (r == 1) {
    snprintf(msg, msgsz, "%s", m.text);
    return m.error;
  }
  if (r < 0) snprintf(why, sizeof why, "the check did not finish within %d s (killed)", CHECK_TIMEOUT_S);
  else if (WIFSIGNALED(st)) snprintf(why, sizeof why, "the candidate crashed at small sizes (signal %d)", WTERMSIG(st));
  else snprintf(why, sizeof why, "the check ended without an answer (exit status %d)", WEXITSTATUS(st));
  snprintf(msg, msgsz, "%s", why);
  return r < 0 ? -1 : 0;
}
