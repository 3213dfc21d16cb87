/* randsched.c — `texc fuzz-schedule FILE [--count N] [--seed S]`: the differential test.
 *
 * For every kernel, builds COUNT random step lists (split, tile, fuse, reorder, parallel,
 * vectorize, unroll, compute_at, compute_inline, compute_root, cache_read, cache_write,
 * rfactor, auto_unroll, storage_align, double_buffer) by asking the schedule for its loops (sched_describe) and proposing steps as
 * text; steps the schedule rejects are dropped. Every accepted schedule is lowered and run
 * by the interpreter (and compiled, unless --interp) and must match the default schedule's
 * interpreted result. A failure prints the schedule block that reproduces it.
 *
 * Each trial runs in a forked child, so that a crash (a signal) or a hang (past
 * --run-timeout) of the compiler or of the compiled code is one finding, reported with
 * the steps that reproduce it, and the remaining trials still run. The child writes the
 * steps as it goes, and its verdict, into a shared TrialReport.
 */
#include "driver.h"
#include "autosched/autosched.h"
#include "front/network.h"
#include "onnx/onnx.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FUZZ_TIMEOUT_S 60 /* one trial, when --run-timeout is not given */

/* ORDER TrialKind */
typedef enum { TRIAL_OK, TRIAL_MISMATCH, TRIAL_ERROR, TRIAL_CRASH, TRIAL_TIMEOUT, TRIAL_NKINDS } TrialKind;

/* What a trial's child tells the parent, in memory they share. */
typedef struct TrialReport {
  char text[16384];  /* the steps so far (the one being tried included), one per line */
  char stage[32];    /* what the child was doing: for a crash or a hang */
  char why[1024];    /* the verdict's reason */
  int kind;          /* TrialKind; TRIAL_CRASH until the child gives its verdict */
  bool lower_error;  /* accepted steps failed to lower */
  char target[16];   /* a GPU sketch's target (the block's `for`); "": any */
} TrialReport;

static uint32_t rnd(Rng *r, uint32_t n) {
  r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
  return n ? (uint32_t)((r->s >> 33) % n) : 0;
}

#define MAX_STAGES 32
#define MAX_LOOPS 24

/* A stage and its leaf loops as sched_describe printed them, ready to be named in steps. */
typedef struct StageView {
  char name[64];
  char loops[MAX_LOOPS][128]; /* STAGE.LOOP: two names of up to 63 bytes */
  int nloops;
} StageView;

typedef struct Trial {
  Rng rng;
  Kernel *k;
  StageView st[MAX_STAGES];
  int nst;
  Vec fresh; /* names introduced by this trial's steps */
  int next_name;
  TrialReport *rep;
  const char *fixed; /* the steps of this trial (a network task's default), else NULL: random */
} Trial;

static bool is_fresh(Trial *t, const char *name) {
  for (int i = 0; i < t->fresh.len; i++)
    if (strcmp(t->fresh.data[i], name) == 0) return true;
  return false;
}

/* Parse `STAGE: loop loop ...` lines; each loop token starts with its name. */
static void read_view(Trial *t, const char *desc) {
  t->nst = 0;
  for (const char *p = desc; *p && t->nst < MAX_STAGES;) {
    const char *eol = strchr(p, '\n');
    if (!eol) eol = p + strlen(p);
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    if (colon) {
      StageView *s = &t->st[t->nst++];
      memset(s, 0, sizeof *s);
      int n = (int)(colon - p);
      while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
      while (n > 0 && isspace((unsigned char)*p)) p++, n--;
      if (n >= (int)sizeof s->name) n = (int)sizeof s->name - 1;
      memcpy(s->name, p, (size_t)n);
      s->name[n] = 0;
      char stage[64];
      memcpy(stage, s->name, sizeof stage);
      for (const char *q = colon + 1; q < eol && s->nloops < MAX_LOOPS;) {
        while (q < eol && !(isalnum((unsigned char)*q) || *q == '_')) q++;
        const char *b = q;
        while (q < eol && (isalnum((unsigned char)*q) || *q == '_' || *q == '.')) q++;
        if (q > b && !isdigit((unsigned char)*b)) {
          char name[64];
          snprintf(name, sizeof name, "%.*s", (int)(q - b), b);
          char full[128];
          if (strchr(name, '.') || is_fresh(t, name)) snprintf(full, sizeof full, "%s", name);
          else snprintf(full, sizeof full, "%s.%s", stage, name);
          memcpy(s->loops[s->nloops++], full, sizeof full);
        }
        while (q < eol && !isspace((unsigned char)*q)) q++; /* skip an extent suffix */
      }
    }
    p = *eol ? eol + 1 : eol;
  }
}

static const char *fresh_name(Trial *t) {
  char *n = xprintf("l%d", t->next_name++);
  vec_push(&t->fresh, n);
  return n;
}

static StageView *any_stage(Trial *t) { return t->nst ? &t->st[rnd(&t->rng, (uint32_t)t->nst)] : NULL; }

static const char *any_loop(Trial *t, StageView *s) {
  return s->nloops ? s->loops[rnd(&t->rng, (uint32_t)s->nloops)] : NULL;
}

static int factor(Trial *t) {
  static const int f[] = {1, 2, 3, 4, 5, 7, 8, 16, 32};
  return f[rnd(&t->rng, sizeof f / sizeof f[0])];
}

/* A tensor that some stage reads: an input or another stage. */
static const char *any_tensor(Trial *t) {
  Kernel *k = t->k;
  uint32_t n = (uint32_t)(k->ninputs + t->nst);
  uint32_t i = rnd(&t->rng, n);
  return i < (uint32_t)k->ninputs ? k->inputs[i]->name : t->st[i - (uint32_t)k->ninputs].name;
}

/* One random step as text, or NULL when the stage offers nothing to try. */
static char *random_step(Trial *t) {
  StageView *s = any_stage(t), *c;
  if (!s || !s->nloops) return NULL;
  const char *l = any_loop(t, s);
  int i = rnd(&t->rng, (uint32_t)s->nloops), j;
  switch (rnd(&t->rng, 19)) {
  case 0: case 1: case 2: {
    const char *o = fresh_name(t), *in = fresh_name(t);
    if (rnd(&t->rng, 4) == 0) return xprintf("%s, %s = split(%s, parts = %d)", o, in, l, factor(t));
    return xprintf("%s, %s = split(%s, %d)", o, in, l, factor(t));
  }
  case 3:
    if (i + 1 >= s->nloops) return NULL;
    {
      const char *a = fresh_name(t), *b = fresh_name(t), *d = fresh_name(t), *e = fresh_name(t);
      return xprintf("%s, %s, %s, %s = tile(%s, %s, %d, %d)", a, b, d, e, s->loops[i], s->loops[i + 1],
                     factor(t), factor(t));
    }
  case 4:
    if (i + 1 >= s->nloops) return NULL;
    return xprintf("%s = fuse(%s, %s)", fresh_name(t), s->loops[i], s->loops[i + 1]);
  case 5: case 6: {
    if (s->nloops < 2) return NULL;
    int perm[MAX_LOOPS], n = s->nloops;
    for (j = 0; j < n; j++) perm[j] = j;
    for (j = n - 1; j > 0; j--) {
      int r = (int)rnd(&t->rng, (uint32_t)j + 1), tmp = perm[j];
      perm[j] = perm[r];
      perm[r] = tmp;
    }
    char *txt = xprintf("reorder(%s", s->loops[perm[0]]);
    for (j = 1; j < n; j++) txt = xprintf("%s, %s", txt, s->loops[perm[j]]);
    return xprintf("%s)", txt);
  }
  case 7: return xprintf("parallel(%s)", s->loops[0]);
  case 8: return xprintf("vectorize(%s)", s->loops[s->nloops - 1]);
  case 9: return xprintf("unroll(%s)", l);
  case 10: return xprintf("compute_inline(%s)", s->name);
  case 11: case 12:
    c = any_stage(t);
    if (c == s || !c->nloops) return NULL;
    return xprintf("compute_at(%s, %s, %s)", s->name, c->name, any_loop(t, c));
  case 13: return xprintf("compute_root(%s)", s->name);
  case 14:
    if (rnd(&t->rng, 2)) return xprintf("%s = cache_write(%s, local)", fresh_name(t), s->name);
    return xprintf("%s = cache_read(%s, local, %s)", fresh_name(t), any_tensor(t), s->name);
  case 15: return xprintf("auto_unroll(%s, %d)", l, 4 << (2 * rnd(&t->rng, 3)));
  case 16: { /* one of the stage's own axes (the step takes only the next-to-last) */
    size_t len = strlen(s->name);
    for (j = 0; j < s->nloops; j++) {
      const char *a = s->loops[(i + j) % s->nloops];
      if (strncmp(a, s->name, len) || a[len] != '.') continue;
      int f = 2 << rnd(&t->rng, 5);
      return xprintf("storage_align(%s, %s, %d, %d)", s->name, a, f, (int)rnd(&t->rng, (uint32_t)f));
    }
    return NULL;
  }
  case 17: return xprintf(rnd(&t->rng, 2) ? "double_buffer(%s, local)" : "double_buffer(%s)", s->name);
  default: return xprintf("%s = rfactor(%s, %s)", fresh_name(t), s->name, l);
  }
}

/* Propose up to NSTEPS steps; the accepted ones go to STEPS (as text, one per line).
 * Attachments are judged on the final schedule, so a step may leave a compute_at that a
 * later step completes (compute_at(M, Y, Y.r), then M's reader at Y.r); when the last
 * steps leave one incomplete, the schedule is rebuilt from the longest prefix that holds. */
static Schedule *random_schedule(Trial *t, int nsteps, char **text) {
  *text = xstrdup("");
  Schedule *s = sched_new(t->k, TARGET_LLVM);
  if (!s) return NULL;
  Vec kept = {0};
  int nvalid = 0;
  char *valid_text = *text;
  for (int tries = 0, applied = 0; applied < nsteps && tries < nsteps * 6; tries++) {
    read_view(t, sched_describe(s));
    char *step = random_step(t);
    Vec st = {0};
    if (step) snprintf(t->rep->text, sizeof t->rep->text, "%s  %s\n", *text, step);
    if (!step || !parse_steps("<random>", step, &st) || st.len != 1) continue;
    if (!sched_step(s, st.data[0])) continue;
    vec_push(&kept, st.data[0]);
    *text = xprintf("%s  %s\n", *text, step);
    applied++;
    if (sched_check_attach(s)) nvalid = kept.len, valid_text = *text;
  }
  snprintf(t->rep->text, sizeof t->rep->text, "%s", *text);
  if (nvalid == kept.len) return s;
  s = sched_new(t->k, TARGET_LLVM);
  *text = valid_text;
  snprintf(t->rep->text, sizeof t->rep->text, "%s", *text);
  for (int i = 0; s && i < nvalid; i++)
    if (!sched_step(s, kept.data[i])) s = NULL;
  return s;
}

/* On a GPU target, the odd trials are the tuner's GPU candidates instead: a random
 * annotation of one of its sketches (shared-memory tiles fetched cooperatively, vthreads,
 * unrolling, padded and double-buffered buffers, cross-thread reductions), mutated up to
 * three times; the generic steps above bind nothing, so they leave the GPU printer's
 * thread and shared-memory paths alone. NULL when the kernel has no sketch. */
static Schedule *sketch_schedule(Trial *t, Target target, char **text) {
  SketchSet *ss = sketch_new(t->k, target, 2);
  if (!ss || sketch_count(ss) == 0) {
    if (ss) sketch_free(ss);
    return NULL;
  }
  Cand cand;
  sketch_sample(ss, &t->rng, &cand);
  for (uint32_t m = rnd(&t->rng, 4); m > 0; m--) sketch_mutate(ss, &t->rng, &cand);
  char *steps = sketch_render(ss, &cand);
  sketch_free(ss);
  *text = xstrdup("");
  for (char *line = strtok(steps, "\n"); line; line = strtok(NULL, "\n")) *text = xprintf("%s  %s\n", *text, line);
  free(steps);
  snprintf(t->rep->text, sizeof t->rep->text, "%s", *text);
  snprintf(t->rep->target, sizeof t->rep->target, "%s", target_names[target]);
  Vec st = {0};
  if (!parse_steps("<sketch>", *text, &st)) return NULL;
  return sched_build(t->k, target, &st);
}

static void set_stage(TrialReport *rep, const char *stage) {
  snprintf(rep->stage, sizeof rep->stage, "%s", stage);
}

/* TEXC_FUZZ_INJECT=crash:N,hang:M makes trial N crash (trial M hang) once its schedule is
 * built: a hidden hook for the tests. */
static void inject(int n) {
  const char *e = getenv("TEXC_FUZZ_INJECT"), *p;
  if (!e) return;
  if ((p = strstr(e, "crash:")) && atoi(p + 6) == n) raise(SIGSEGV);
  if ((p = strstr(e, "hang:")) && atoi(p + 5) == n)
    for (;;) pause();
}

/* One trial, in the child: build, lower, interpret (and compile), compare; the verdict
 * into T->rep. */
static void run_trial(Cli *c, Trial *t, int n, void **args, void **ref) {
  TrialReport *rep = t->rep;
  char *text = NULL;
  diag_silent = true;
  set_stage(rep, "building the schedule");
  bool gpu = backend_for(c->o.target)->device == DEVICE_GPU && n % 2 == 1 && !t->fixed;
  Schedule *s = gpu ? sketch_schedule(t, c->o.target, &text) : NULL;
  if (t->fixed) { /* the task's network default */
    Vec st = {0};
    text = xstrdup(t->fixed);
    snprintf(rep->text, sizeof rep->text, "%s", text);
    snprintf(rep->target, sizeof rep->target, "%s", target_names[c->o.target]);
    s = parse_steps("<default>", text, &st) ? sched_build(t->k, c->o.target, &st) : NULL;
    if (!s) rep->lower_error = true;
  }
  if (!s && gpu && rep->target[0]) rep->lower_error = true; /* a sketch candidate that does not apply */
  if (!s && !rep->target[0]) s = random_schedule(t, 1 + (int)rnd(&t->rng, 6), &text);
  set_stage(rep, "lowering");
  inject(n);
  LoweredFunc *f = s ? sched_lower(s, &c->o) : NULL;
  diag_silent = false;
  const char *why = NULL;
  int kind = TRIAL_ERROR;
  if (!f) {
    rep->lower_error = true;
    why = xprintf("accepted steps failed to lower: %s", diag_last());
  } else if (!ir_verify(f)) {
    why = "lowered IR does not verify";
  } else {
    void **got;
    double ms;
    CompareResult r;
    /* a task's GPU default is checked compiled only: interpreted, its thread loops over a
     * whole network layer took minutes (resnet18's first convolution on OpenCL: past 60 s) */
    if (c->interp || !(t->fixed && backend_for(c->o.target)->device == DEVICE_GPU)) {
      set_stage(rep, "interpreting");
      got = drv_copy_args(f, args);
      if (interp_run(f, got, NULL)) why = "interpreter error";
      else if (!compare_outputs(f, got, ref, &r))
        kind = TRIAL_MISMATCH,
        why = xprintf("interpreted result differs from the reference: %s", compare_mismatch(&r));
    }
    if (!why && !c->interp) {
      got = drv_copy_args(f, args);
      set_stage(rep, "compiling and running");
      if (drv_execute(c, f, got, false, &ms)) why = "compiled code failed";
      else if (!compare_outputs(f, got, ref, &r))
        kind = TRIAL_MISMATCH,
        why = xprintf("compiled result differs from the reference: %s", compare_mismatch(&r));
    }
  }
  snprintf(rep->why, sizeof rep->why, "%s", why ? why : "");
  rep->kind = why ? kind : TRIAL_OK;
}

/* Wait for the child PID at most TIMEOUT_S seconds (then kill it); its wait status, or -1
 * when it was stopped for the time. */
static int wait_child(pid_t pid, double timeout_s) {
  struct timespec t0, now, nap = {0, 100000};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int st;
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) return st;
    if (w < 0 && errno != EINTR) return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 > timeout_s) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
      return -1;
    }
    nanosleep(&nap, NULL);
    if (nap.tv_nsec < 10000000) nap.tv_nsec *= 2; /* 0.1 ms doubling up to ~10 ms */
  }
}

/* Run trial T in a forked child; fill T->rep with its verdict, a crash's or a hang's
 * included. */
static void fork_trial(Cli *c, Trial *t, int n, void **args, void **ref, double timeout_s) {
  TrialReport *rep = t->rep;
  memset(rep, 0, sizeof *rep);
  rep->kind = TRIAL_CRASH;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    run_trial(c, t, n, args, ref);
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
  if (pid < 0) {
    rep->kind = TRIAL_ERROR;
    snprintf(rep->why, sizeof rep->why, "fork failed: %s", strerror(errno));
    return;
  }
  int st = wait_child(pid, timeout_s);
  if (st == -1) {
    rep->kind = TRIAL_TIMEOUT;
    snprintf(rep->why, sizeof rep->why, "timed out after %.0f s while %s", timeout_s, rep->stage);
  } else if (WIFSIGNALED(st)) {
    rep->kind = TRIAL_CRASH;
    snprintf(rep->why, sizeof rep->why, "crashed (signal %d, %s) while %s", WTERMSIG(st),
             strsignal(WTERMSIG(st)), rep->stage);
  } else if (rep->kind == TRIAL_CRASH) { /* exited without a verdict */
    rep->kind = TRIAL_ERROR;
    snprintf(rep->why, sizeof rep->why, "texc exited with status %d while %s",
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, rep->stage);
  }
}

/* ORDER TrialKind */
static const char *const kind_names[TRIAL_NKINDS] = {"ok", "MISMATCH", "ERROR", "CRASH", "TIMEOUT"};

/* A finding: what, the block that reproduces it, and how to run it. */
static void report(const Cli *c, const Kernel *k, int n, const TrialReport *rep) {
  printf("FAIL %s trial %d: %s: %s\n", k->name, n, kind_names[rep->kind], rep->why);
  printf("schedule %s.repro%d%s%s {\n%s}\n", k->name, n, rep->target[0] ? " for " : "", rep->target, rep->text);
  if (net_is_network_file(c->file) || onnx_is_model(c->file)) /* a network's task: no block to add */
    printf("# to reproduce: texc fuzz-schedule %s --kernel %s --seed %llu --count %d (its last trial)", c->file,
           k->name, (unsigned long long)c->seed, n + 1);
  else
    printf("# to reproduce: add the block to %s, then: texc run %s --kernel %s --schedule repro%d "
           "--check", c->file, c->file, k->name, n);
  for (int i = 0; i < c->ndefs; i++)
    printf(" -D %s=%lld", c->defs[i].name, (long long)c->defs[i].value);
  printf("%s\n", c->interp ? " --interp" : "");
}

int drv_fuzz_schedule(Cli *c, Program *p, bool tasks) {
  int count = c->count, total_failed = 0;
  double timeout_s = c->run_timeout_s > 0 ? c->run_timeout_s : FUZZ_TIMEOUT_S;
  TrialReport *rep = mmap(NULL, sizeof *rep, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                          -1, 0);
  if (rep == MAP_FAILED) die("fuzz-schedule: cannot map shared memory: %s", strerror(errno));
  for (int i = 0; i < p->nkernels; i++) {
    Kernel *k = p->kernels[i];
    if (!drv_selected(c, k)) continue;
    if (!drv_sizes_bound(k)) return 1;
    Vec none = {0};
    LoweredFunc *def = drv_lower(c, k, TARGET_LLVM, &none);
    if (!def || !drv_fits(def, 4)) return 1;
    void **args = drv_host_args(def);
    void **ref = drv_reference(c, k, args, def);
    if (!ref) return 1;
    int tally[TRIAL_NKINDS] = {0}, lower_errors = 0, failed = 0, sketched = 0;
    const char *task_def = !tasks ? NULL
                    : backend_for(c->o.target)->device == DEVICE_CPU ? net_default_steps(k) : sketch_gpu_default(k, c->o.target);
    for (int n = 0; n < count; n++) {
      Arena *a = arena_new(), *old = arena_swap(a);
      Trial t = {.rng = {(c->seed + 1) * 1000003u + (uint64_t)n * 7919u + (uint64_t)i}, .k = k,
                 .rep = rep, .fixed = n == 0 ? task_def : NULL};
      fork_trial(c, &t, n, args, ref, timeout_s);
      if (c->o.verbose) printf("trial %d:\n%s", n, rep->text);
      tally[rep->kind]++;
      lower_errors += rep->lower_error;
      sketched += rep->target[0] != 0 && !t.fixed;
      if (rep->kind != TRIAL_OK) failed++, report(c, k, n, rep);
      arena_swap(old);
      arena_free(a);
    }
    diag_reset();
    printf("%s: %d %s checked, %d failed (%d crashes, %d timeouts, %d mismatches, "
           "%d errors; %d failed to lower)%s\n", k->name, count,
           task_def && count > 0 ? "schedules (the task's default, then random ones)" : "random schedules", failed, tally[TRIAL_CRASH],
           tally[TRIAL_TIMEOUT], tally[TRIAL_MISMATCH], tally[TRIAL_ERROR], lower_errors,
           sketched ? xprintf("; %d of them the tuner's GPU candidates", sketched) : "");
    fflush(stdout);
    total_failed += failed;
  }
  munmap(rep, sizeof *rep);
  return total_failed ? 1 : 0;
}
