/* network_run.c — `texc NET.tex`, `texc run NET.tex [--check]`, `texc bench NET.tex`:
 * a network's tasks compiled into one module, run call after call on device tensors.
 *
 * Each task (distinct workload) is lowered once, with the best record of --records when
 * there is one (what `texc tune NET.tex` found), else the default schedule; every group of
 * that task calls the same function. --check runs each group's default schedule in the
 * interpreter on the same inputs and compares every group's output.
 */
#include "driver.h"
#include "front/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autosched/autosched.h"
#include "deploy/deploy.h"
#include "onnx/onnx.h"
#include "texrt.h"
#include <cjson/cJSON.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}


/* T's bytes: f32, or i32 / i64 for integer inputs and what kernels make of them. */
static size_t tbytes(const NetTensor *t) { return (size_t)dtype_bytes(t->dtype) * (size_t)net_numel(t); }

/* Weights: fill_random (uniform in [-1, 1)) seeded by the parameter's position, scaled
 * by sqrt(3 / fan_in) (unit variance per output) (fan_in: all but the last dimension) for tensors of
 * two or more dimensions; vectors are biases (x 0.1) or, when their name contains
 * "scale", batch-norm scales (1 + 0.2 x). The input is left in [-1, 1); an integer
 * parameter (token ids) is fill_random's integers, -3 to 3. */
void net_fill(const NetTensor *t, void *host) {
  int64_t n = net_numel(t);
  fill_random(host, t->dtype, n, 1000u + (uint64_t)t->index);
  float *data = host;
  if (t->kind == NT_INPUT || t->dtype != DT_F32) return;
  double mul = 0.1, add = 0;
  if (t->ndim >= 2) mul = sqrt(3.0 / (double)(n / t->shape[t->ndim - 1]));
  else if (strstr(t->name, "scale")) mul = 0.2, add = 1;
  for (int64_t i = 0; i < n; i++) data[i] = (float)(data[i] * mul + add);
}

/* TEXC_NET_DUMP=DIR: tensor T (a parameter, or a result) as raw data DIR/NAME.bin (f32, or
 * the integers as they are), listed with its shape in DIR/manifest.txt (what
 * bench/network_ort.py reads). */
static void dump(const NetTensor *t, const void *data, const char *name) {
  const char *dir = getenv("TEXC_NET_DUMP");
  if (!dir) return;
  FILE *f = fopen(xprintf("%s/%s.bin", dir, name), "wb");
  if (f) {
    fwrite(data, 1, tbytes(t), f);
    fclose(f);
  }
  FILE *m = fopen(xprintf("%s/manifest.txt", dir), "a");
  if (!m) return;
  fprintf(m, "%s", name);
  for (int d = 0; d < t->ndim; d++) fprintf(m, " %lld", (long long)t->shape[d]);
  fputc('\n', m);
  fclose(m);
}

/* ---- lowering -------------------------------------------------------------------- */

/* Where a task's schedule comes from. ORDER: sched_source_names[]. */
typedef enum { SRC_RECORD, SRC_DEFAULT, SRC_NONE, SRC_ERROR } SchedSource;
static const char *const sched_source_names[] = {"record", "default", "none", "error"};

/* The default text of task kernel K on TARGET: network_sched.c's on a CPU, the sketch
 * heuristic's on a GPU (sketch_gpu_default); NULL when none applies. */
static const char *task_default_text(Kernel *k, Target target) {
  return backend_for(target)->device == DEVICE_CPU ? net_default_steps(k) : sketch_gpu_default(k, target);
}

/* The steps of task T on the CLI's target: the best record, else the network default of
 * task_default_text (when it applies and builds; *TEXT gets it), else the kernel's own
 * default (GPU) or none. `--schedule bare`: neither records nor the network default. */
static SchedSource task_steps(Cli *c, Network *n, int t, Vec *steps, const char **text_out) {
  *text_out = NULL;
  Kernel *k = n->groups[n->tasks[t].group]->kernel;
  bool bare = c->schedule != NULL; /* `--schedule bare` (net_run_cli allows no other) */
  if (!bare && net_task_best(n, t, &c->o, c->records, steps) >= 0) return SRC_RECORD;
  const char *text = bare ? NULL : task_default_text(k, c->o.target);
  if (text) {
    bool quiet = diag_silent;
    int errors = diag_errors();
    diag_silent = true;
    Vec v = {0};
    bool ok = parse_steps("<default>", text, &v) && sched_build(k, c->o.target, &v);
    diag_silent = quiet;
    if (ok) {
      *steps = v;
      *text_out = text;
      return SRC_DEFAULT;
    }
    if (errors == 0) diag_reset(); /* a form the default did not foresee: the bare default */
  }
  const Backend *be = backend_for(c->o.target);
  if (be->default_steps) return be->default_steps(k, c->o.target, steps) ? SRC_DEFAULT : SRC_ERROR;
  return SRC_NONE;
}

/* Tasks lowered before, by their kernel text (kernel_canonical): a task's schedule (its
 * record, keyed by that text, or the default) and so its lowering follow from the text. */
typedef struct Lowered {
  Vec text, fn, tuned;
} Lowered;

/* One lowered function per task, for the CLI's target; with SEEN, a task lowered before
 * (another size of the network) is that function under this network's name. NULL on
 * errors (reported). */
static LoweredFunc **lower_tasks_seen(Cli *c, Network *n, int *ntuned, Lowered *seen) {
  LoweredFunc **fns = xalloc(sizeof *fns * (size_t)(n->ntasks + 1));
  *ntuned = 0;
  for (int t = 0; t < n->ntasks; t++) {
    Kernel *k = n->groups[n->tasks[t].group]->kernel;
    const char *canon = seen ? kernel_canonical(k) : NULL;
    int j = 0;
    while (seen && j < seen->text.len && strcmp(VEC_AT(seen->text, j), canon) != 0) j++;
    if (seen && j < seen->text.len) {
      LoweredFunc *f = xalloc(sizeof *f);
      *f = *(LoweredFunc *)VEC_AT(seen->fn, j);
      f->name = k->name; /* unique in this network: its tables find functions by name */
      fns[t] = f;
      *ntuned += VEC_AT(seen->tuned, j) != NULL;
      continue;
    }
    Vec steps = {0};
    const char *text;
    SchedSource src = task_steps(c, n, t, &steps, &text);
    if (src == SRC_ERROR) return NULL;
    if (src == SRC_RECORD) (*ntuned)++;
    fns[t] = drv_lower(c, k, c->o.target, &steps);
    if (!fns[t]) return NULL;
    if (seen) vec_push(&seen->text, (void *)canon), vec_push(&seen->fn, fns[t]), vec_push(&seen->tuned, src == SRC_RECORD ? fns[t] : NULL);
  }
  return fns;
}

static LoweredFunc **lower_tasks(Cli *c, Network *n, int *ntuned) {
  return lower_tasks_seen(c, n, ntuned, NULL);
}

/* ---- execution ------------------------------------------------------------------- */

typedef struct Exec {
  Network *n;
  RtModule *m;
  RtFunc **fns;       /* per task */
  RtTensor **tensors; /* per network tensor */
  NetPlan plan;       /* planned intermediates: views into ARENA (plan.c) */
  RtTensor *arena;    /* NULL: every tensor its own buffer */
  RtSeq *seq;         /* a forward pass: the groups but the folded (CUDA: one graph) */
} Exec;

static void exec_free(Exec *e) {
  rt_seq_free(e->seq);
  for (int i = 0; e->tensors && i < e->n->ntensors; i++) {
    if (!e->arena || e->plan.offset[i] < 0) rt_tensor_free(e->tensors[i]); /* else a view (arena) */
  }
  rt_tensor_free(e->arena);
  if (e->m) rt_module_free(e->m);
}

/* Tensor T: a view into E's arena when the plan placed it, else its own buffer. */
static RtTensor *exec_tensor(Exec *e, Target target, const NetTensor *t) {
  if (!e->arena || e->plan.offset[t->index] < 0)
    return rt_tensor_alloc(target_device(target), dtype_bytes(t->dtype), t->ndim, t->shape);
  RtTensor *v = xalloc(sizeof *v);
  *v = *e->arena;
  v->data = (char *)e->arena->data + e->plan.offset[t->index];
  v->ndim = t->ndim;
  v->dtype_bytes = dtype_bytes(t->dtype);
  memcpy(v->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  v->nbytes = (int64_t)tbytes(t);
  return v;
}

/* The intermediates in one planned arena, unless --check reads them all after the run,
 * --interp fills them one by one, or the device's buffers cannot be offset (OpenCL's
 * cl_mem). false: printed. */
/* Does what a run of E's network holds at once fit half of this machine's memory (plans
 * E->plan)? */
static bool exec_fits(Cli *c, Exec *e) {
  net_plan(e->n, &e->plan);
  /* what a run holds at once: the arena, the parameters and the results (and with --check
   * or the interpreter each intermediate in its own buffer); an error at the network
   * rather than an allocation failing (a model declaring a 12 TiB input) */
  double bytes = (double)(c->check || c->interp ? e->plan.sum_bytes : e->plan.arena_bytes);
  for (int i = 0; i < e->n->ntensors; i++) {
    const NetTensor *t = e->n->tensors[i];
    if (t->kind != NT_VALUE || e->plan.offset[i] < 0) bytes += (double)net_numel(t) * dtype_bytes(t->dtype);
  }
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
  if (phys > 0 && bytes > phys / 2) {
    diag_error(e->n->loc, "network %s needs %.1f GiB for its tensors, more than half of this machine's memory (%.1f GiB)",
               e->n->name, bytes / (1 << 30), phys / (1 << 30));
    return false;
  }
  return true;
}

static bool exec_arena(Cli *c, Exec *e) {
  if (c->check || c->interp || backend_for(c->o.target)->rt_device == RT_OPENCL) return true;
  int64_t bytes = e->plan.arena_bytes;
  e->arena = rt_tensor_alloc(target_device(c->o.target), 1, 1, &bytes);
  return e->arena != NULL;
}

/* ---- parameters: --input files, weights, or the deterministic fill ---------------- */

/* The weights of N: --weights, else an imported model's, else NET.safetensors beside
 * NET.tex when there is one, else none (NULL: the fill). *BAD after a reported error. */
static WeightSet *net_weight_set(Cli *c, Network *n, bool *bad) {
  *bad = false;
  const char *path = c->weights;
  if (!path && n->weights) return n->weights;
  size_t len = strlen(c->file);
  if (!path && len > 4 && strcmp(c->file + len - 4, ".tex") == 0) {
    const char *side = xprintf("%.*s.safetensors", (int)(len - 4), c->file);
    FILE *f = fopen(side, "rb");
    if (f) fclose(f), path = side;
  }
  if (!path) return NULL;
  WeightSet *w = xalloc(sizeof *w);
  if (!safetensors_read(path, w)) return *bad = true, NULL;
  return w;
}

/* Does host tensor H (from FILE) have T's shape? A rank-0 H is [1]. Else an error. */
static bool same_shape(const HostTensor *h, const NetTensor *t, const char *file, const char *what) {
  int nd = h->ndim ? h->ndim : 1;
  int64_t one = 1;
  const int64_t *sh = h->ndim ? h->shape : &one;
  bool ok = nd == t->ndim && !memcmp(sh, t->shape, sizeof(int64_t) * (size_t)nd);
  if (!ok) {
    char *a = xstrdup(""), *b = xstrdup("");
    for (int d = 0; d < nd; d++) a = xprintf("%s%s%lld", a, d ? ", " : "", (long long)sh[d]);
    for (int d = 0; d < t->ndim; d++) b = xprintf("%s%s%lld", b, d ? ", " : "", (long long)t->shape[d]);
    if (t->kind == NT_VALUE) /* a result */
      diag_error((Loc){0}, "%s: the expected %s is [%s], but the network's result %s is [%s]", file, what, a, t->name, b);
    else diag_error((Loc){0}, "%s: %s '%s' is [%s], but the network's parameter %s is [%s]", file, what, h->name, a, t->name, b);
  }
  return ok;
}

/* HOST (T's dtype) from the f32 values of H (read from FILE): a copy, or for an integer or
 * boolean parameter or result the integers they hold (each exact in f32: tensor_file_read).
 * false: reported. */
static bool host_of(const HostTensor *h, const NetTensor *t, const char *file, void *host) {
  int64_t n = net_numel(t);
  const char *role = t->kind == NT_VALUE ? "result" : "parameter";
  if (t->dtype == DT_F32) {
    memcpy(host, h->data, sizeof(float) * (size_t)n);
    return true;
  }
  if (t->dtype == DT_F16 || t->dtype == DT_F64) { /* an imported float16 or double model's */
    for (int64_t i = 0; i < n; i++) {
      if (t->dtype == DT_F16) ((uint16_t *)host)[i] = f32_to_f16(h->data[i]);
      else ((double *)host)[i] = h->data[i];
    }
    return true;
  }
  for (int64_t i = 0; i < n; i++) {
    float v = h->data[i];
    if (v != floorf(v) || fabsf(v) > 2147483647.0f) {
      diag_error((Loc){0}, "%s: element %lld (%g) is no integer, but the network's %s %s is %s", file, (long long)i,
                 (double)v, role, t->name, dtype_name(t->dtype));
      return false;
    }
    if (t->dtype == DT_BOOL && v != 0 && v != 1) {
      diag_error((Loc){0}, "%s: element %lld (%g) is not 0 or 1, but the network's %s %s is bool", file, (long long)i,
                 (double)v, role, t->name);
      return false;
    }
    if (t->dtype == DT_I64) ((int64_t *)host)[i] = (int64_t)v;
    else if (t->dtype == DT_BOOL || t->dtype == DT_U8) ((uint8_t *)host)[i] = (uint8_t)(int32_t)v;
    else if (t->dtype == DT_I8) ((int8_t *)host)[i] = (int8_t)(int32_t)v;
    else ((int32_t *)host)[i] = (int32_t)v;
  }
  return true;
}

/* The data of parameter T (position P in the header): input file P, the weight of its
 * name, or net_fill. An integer parameter takes a file or the fill, and so does a float one
 * that an imported model's weights (IMPORTED) lack: a graph input after the first. false:
 * reported. */
static bool net_param_data(Cli *c, WeightSet *w, bool imported, const NetTensor *t, int p, void *host) {
  HostTensor h;
  if (p < c->ninputs) {
    if (!tensor_file_read(c->inputs[p], &h)) return false;
    h.name = t->name;
    bool ok = same_shape(&h, t, c->inputs[p], "input") && host_of(&h, t, c->inputs[p], host);
    free(h.data);
    return ok;
  }
  HostTensor *f = w && t->dtype == DT_F32 ? ws_find(w, t->name) : NULL;
  if (!f && (!w || imported || t->kind == NT_INPUT || t->dtype != DT_F32)) { /* no weights, an input, integers: the fill */
    net_fill(t, host);
    return true;
  }
  if (!f) {
    diag_error((Loc){0}, "%s: no tensor '%s' (a parameter of network %s; an input of the model goes "
               "with --input X.npy)", w->file, t->name, c->file);
    return false;
  }
  if (!same_shape(f, t, w->file, "tensor")) return false;
  memcpy(host, f->data, tbytes(t));
  return true;
}

static int exec_group(Exec *e, int k);

/* E->seq: the forward pass's calls, recorded once (rt_seq_new). false after rt_set_error. */
static bool exec_sequence(Exec *e) {
  Network *n = e->n;
  RtFunc **fns = xalloc(sizeof *fns * (size_t)(n->ngroups + 1));
  RtTensor ***args = xalloc(sizeof *args * (size_t)(n->ngroups + 1));
  int *nargs = xalloc(sizeof *nargs * (size_t)(n->ngroups + 1)), calls = 0;
  for (int k = 0; k < n->ngroups; k++) {
    NetGroup *g = n->groups[k];
    if (g->folded) continue;
    RtTensor **a = xalloc(sizeof *a * (size_t)(g->ninputs + 1));
    for (int i = 0; i < g->ninputs; i++) a[i] = e->tensors[g->inputs[i]->index];
    a[g->ninputs] = e->tensors[g->out->index];
    fns[calls] = e->fns[g->task];
    args[calls] = a;
    nargs[calls++] = g->ninputs + 1;
  }
  e->seq = rt_seq_new(fns, args, nargs, calls);
  return e->seq != NULL;
}

/* Build FNS into one module, allocate every tensor, upload the parameters, compute the
 * folded groups (the packed weights: NETWORKS.md). false: printed. --interp: no module
 * (FNS is NULL), host tensors, nothing computed (interp_forward computes every group). */
static bool exec_init(Cli *c, Network *n, LoweredFunc **fns, Exec *e) {
  memset(e, 0, sizeof *e);
  e->n = n;
  bool bad;
  WeightSet *w = net_weight_set(c, n, &bad);
  if (bad) return false;
  int nparams = 0;
  for (int i = 0; i < n->ntensors; i++) nparams += n->tensors[i]->kind != NT_VALUE;
  if (c->ninputs > nparams) {
    diag_error((Loc){0}, "%d --input files, but network %s has %d parameters", c->ninputs, n->name, nparams);
    return false;
  }
  Target target = c->interp ? TARGET_LLVM : c->o.target;
  if (!c->interp) {
    e->m = backend_for(target)->build(fns, n->ntasks, &c->o);
    if (!e->m) return false;
    e->fns = xalloc(sizeof *e->fns * (size_t)(n->ntasks + 1));
    for (int t = 0; t < n->ntasks; t++)
      if (!(e->fns[t] = rt_module_func(e->m, fns[t]->name))) goto rt_error;
  }
  if (!exec_fits(c, e)) return false;
  if (!exec_arena(c, e)) goto rt_error;
  e->tensors = xalloc(sizeof *e->tensors * (size_t)(n->ntensors + 1));
  for (int i = 0, p = 0; i < n->ntensors; i++) {
    NetTensor *t = n->tensors[i];
    e->tensors[i] = exec_tensor(e, target, t);
    if (!e->tensors[i]) goto rt_error;
    if (t->kind == NT_VALUE) continue;
    void *host = malloc(tbytes(t) + 1);
    if (!net_param_data(c, w, w && w == n->weights, t, p++, host)) {
      free(host);
      return false;
    }
    dump(t, host, t->name);
    int rc = rt_tensor_from_host(e->tensors[i], host);
    free(host);
    if (rc) goto rt_error;
  }
  if (c->interp) return true;
  for (int k = 0; k < n->ngroups; k++) /* the folded groups (packed weights), once */
    if (n->groups[k]->folded && exec_group(e, k)) return false;
  if (exec_sequence(e)) return true;
rt_error:
  fprintf(stderr, "texc: error: %s\n", rt_last_error());
  return false;
}

/* Call group K's function once. 0 on success. */
static int exec_group(Exec *e, int k) {
  NetGroup *g = e->n->groups[k];
  RtTensor *args[64];
  if (g->ninputs + 1 > 64) die("network: a group with more than 63 inputs");
  for (int i = 0; i < g->ninputs; i++) args[i] = e->tensors[g->inputs[i]->index];
  args[g->ninputs] = e->tensors[g->out->index];
  if (rt_func_call(e->fns[g->task], args, g->ninputs + 1, NULL, 0)) {
    fprintf(stderr, "texc: error: %s: %s\n", g->kernel->name, rt_last_error());
    return 1;
  }
  return 0;
}

/* One forward pass (the folded groups were computed at init); when GROUP_MS is not NULL
 * it gets each group's time (0 for the folded). 0 on success. */
static int exec_forward_timed(Exec *e, double *group_ms) {
  for (int k = 0; k < e->n->ngroups; k++) {
    if (group_ms) group_ms[k] = 0;
    if (e->n->groups[k]->folded) continue;
    double t0 = group_ms ? now_ms() : 0;
    if (exec_group(e, k)) return 1;
    if (group_ms) group_ms[k] = now_ms() - t0;
  }
  return 0;
}

/* One forward pass as the deployed library runs it: the recorded sequence. */
static int exec_forward(Exec *e) {
  if (rt_seq_run(e->seq)) {
    fprintf(stderr, "texc: error: %s: %s\n", e->n->name, rt_last_error());
    return 1;
  }
  return 0;
}

/* ---- --check: every group against the interpreter -------------------------------- */

static void *download(Exec *e, const NetTensor *t) {
  void *h = xalloc(tbytes(t) + 1);
  if (rt_tensor_to_host(h, e->tensors[t->index])) fprintf(stderr, "texc: error: %s\n", rt_last_error());
  return h;
}

/* --interp: every group, the folded too, in order, by the interpreter (its default
 * schedule: the reference), its inputs and output in E's host tensors. 0 on success. */
static int interp_forward(Cli *c, Exec *e) {
  Network *n = e->n;
  for (int k = 0; k < n->ngroups; k++) {
    NetGroup *g = n->groups[k];
    Vec none = {0};
    LoweredFunc *ref = drv_lower(c, g->kernel, TARGET_LLVM, &none);
    if (!ref) return 1;
    void **args = xalloc(sizeof(void *) * (size_t)(g->ninputs + 1));
    for (int i = 0; i < g->ninputs; i++) args[i] = e->tensors[g->inputs[i]->index]->data;
    args[g->ninputs] = e->tensors[g->out->index]->data;
    if (interp_run(ref, args, NULL)) return 1;
  }
  return 0;
}

/* Interpret every group on the compiled run's own inputs (so errors do not add up) and
 * compare its output (compare_values: the check of `texc run --check`). */
static bool check_groups(Cli *c, Exec *e) {
  Network *n = e->n;
  CompareResult r = {0};
  for (int k = 0; k < n->ngroups; k++) {
    NetGroup *g = n->groups[k];
    Vec none = {0};
    LoweredFunc *ref = drv_lower(c, g->kernel, TARGET_LLVM, &none);
    if (!ref) return false;
    void **args = xalloc(sizeof(void *) * (size_t)(g->ninputs + 1));
    for (int i = 0; i < g->ninputs; i++) args[i] = download(e, g->inputs[i]);
    args[g->ninputs] = xalloc(tbytes(g->out) + 1);
    if (interp_run(ref, args, NULL)) return false;
    void *got = download(e, g->out);
    if (!compare_values_as(got, args[g->ninputs], g->out->dtype, compare_dtype(ref, g->out->dtype), net_numel(g->out),
                           g->kernel->name, &r)) {
      NetNode *nd = n->nodes[g->nodes[g->nnodes - 1]];
      printf("  MISMATCH in %s (%s:%d)\n", compare_mismatch(&r), nd->loc.file, nd->loc.line);
      printf("  check: FAILED\n");
      return false;
    }
  }
  printf("  check: %d groups against the interpreter, max rel err %.3g, max abs err %.3g, rel L2 %.3g: ok\n",
         n->ngroups, r.max_rel, r.max_abs, r.rel_l2);
  return true;
}

/* ---- commands -------------------------------------------------------------------- */

/* The estimate from the records: sum of weight x best latency over tuned tasks; *MISSING
 * gets the number of tasks without a record. */
static double estimate_ms(Cli *c, Network *n, int *missing) {
  double sum = 0;
  *missing = 0;
  for (int t = 0; t < n->ntasks; t++) {
    if (n->tasks[t].folded) continue;
    double ms = net_task_best(n, t, &c->o, c->records, NULL);
    if (ms < 0) (*missing)++;
    else sum += ms * n->tasks[t].weight;
  }
  return sum;
}

static void print_summary(Network *n) {
  printf("network %s: %d calls, %d fused groups, %d tasks\n", n->name, n->nnodes, n->ngroups, n->ntasks);
}

/* `texc NET.tex --emit tasks`: the task table. */
static void print_tasks(Network *n) {
  print_summary(n);
  printf("%3s  %-16s  %6s  %10s  %s\n", "ID", "workload", "weight", "MFLOP", "task (first call)");
  for (int t = 0; t < n->ntasks; t++) {
    NetGroup *g = n->groups[n->tasks[t].group];
    NetNode *nd = n->nodes[g->nodes[0]];
    printf("%3d  %016llx  %6d  %10.2f  %s (line %d)%s\n", t, (unsigned long long)n->tasks[t].key,
           n->tasks[t].weight, n->tasks[t].flops / 1e6, g->kernel->name, nd->loc.line,
           n->tasks[t].folded ? " folded: once at load" : "");
  }
}

/* `texc NET.tex --emit steps`: each task's schedule as steps, and where it comes from. */
static void print_steps(Cli *c, Network *n) {
  for (int t = 0; t < n->ntasks; t++) {
    Vec steps = {0};
    const char *text;
    SchedSource src = task_steps(c, n, t, &steps, &text);
    Kernel *k = n->groups[n->tasks[t].group]->kernel;
    printf("%s# task %d: %s (%s)\n", t ? "\n" : "", t, k->name, sched_source_names[src]);
    if (src == SRC_RECORD) text = net_task_record_text(n, t, &c->o, c->records);
    if (text) tune_print_block(stdout, k->name, sched_source_names[src], target_names[c->o.target], text);
  }
}

/* The caller's parameters and the weights of network N in a library (deploy/): the
 * caller's are the leading ones that are the input or, with a weight set, not in it (an
 * ONNX graph's inputs); the others are weights, with the data `texc run` would give them. */
static bool deploy_net(Cli *c, Network *n, LoweredFunc **fns, int ntuned, DeployNet *d) {
  *d = (DeployNet){.n = n, .fns = fns, .ntuned = ntuned};
  bool bad, leading = true;
  WeightSet *w = net_weight_set(c, n, &bad);
  if (bad) return false;
  d->input = xalloc(sizeof(bool) * (size_t)(n->ntensors + 1));
  d->data = xalloc(sizeof(float *) * (size_t)(n->ntensors + 1));
  for (int i = 0, p = 0; i < n->ntensors; i++, p++) {
    NetTensor *t = n->tensors[i];
    if (t->kind == NT_VALUE) {
      p--;
      continue;
    }
    bool weight = w && ws_find(w, t->name); /* a graph of constants only: its first parameter is one */
    if (leading && !weight && (t->kind == NT_INPUT || t->dtype != DT_F32 || w)) {
      d->input[i] = true;
      continue;
    }
    leading = false;
    if (t->dtype != DT_F32) {
      diag_error(n->loc, "network %s: parameter %s is %s after a weight; a library's integer tensors are inputs, "
                 "the leading parameters", n->name, t->name, dtype_name(t->dtype));
      return false;
    }
    HostTensor *f = w && p >= c->ninputs ? ws_find(w, t->name) : NULL; /* the model's data itself, not a copy */
    int nd = f && f->ndim ? f->ndim : 1;
    if (f && nd == t->ndim && (!f->ndim || !memcmp(f->shape, t->shape, sizeof(int64_t) * (size_t)nd))) {
      d->data[i] = f->data;
      continue;
    }
    d->data[i] = xalloc(tbytes(t) + 1);
    if (!net_param_data(c, w, false, t, p, d->data[i])) return false;
  }
  return true;
}

/* What --emit so|header asks for, but its networks. --weights FILE: an existing file is
 * where the weights come from (create() reads it again); a new one gets them written. */
static DeploySpec deploy_spec(Cli *c, const char *kind) {
  DeploySpec s = {.kind = kind, .out = c->out, .name = c->name, .o = &c->o, .weights_file = c->weights};
  if (c->weights && access(c->weights, F_OK) != 0) s.weights_out = c->weights, c->weights = NULL;
  return s;
}

/* `--emit so|header`: one library for the network (deploy/). */
static int cmd_deploy(Cli *c, Network *n, LoweredFunc **fns, int ntuned, const char *kind) {
  DeploySpec s = deploy_spec(c, kind);
  DeployNet d;
  if (!deploy_net(c, n, fns, ntuned, &d)) return 1;
  s.nnets = 1, s.nets = &d;
  return net_deploy_emit(&s);
}

/* What `texc NET` compiles to: --emit's kind, else "so" (or "header" for -o X.h) when
 * there is an -o, else NULL (a summary). */
static const char *compile_kind(const Cli *c) {
  if (c->emit) return c->emit;
  if (!c->out) return NULL;
  size_t len = strlen(c->out);
  return len > 2 && strcmp(c->out + len - 2, ".h") == 0 ? "header" : "so";
}

/* The -D names given several values into NAMES; how many. */
static int size_names(const Cli *c, const char **names) {
  int n = 0;
  for (int i = 0; i < c->ndefs; i++)
    if (c->ndef_values[i] > 1) names[n++] = c->defs[i].name;
  return n;
}

/* The network at combination V of the -D lists (their values into VALUES), loaded. The
 * first (V = 0) also checks that every -D names something: a list that names nothing
 * would make identical networks (an error), a single value a warning. NULL after errors. */
static Network *load_size(Cli *c, int v, int64_t *values, const NetRewrites *rw) {
  cli_size_combos(c, v, values);
  Network *n = net_load(c->file, c->kernel, c->defs, c->ndefs, rw);
  if (!n || diag_errors()) return NULL;
  for (int i = 0; i < c->ndefs && v == 0; i++) {
    if (c->defs[i].used) continue;
    if (c->ndef_values[i] > 1) {
      fprintf(stderr, "texc: error: -D %s: no constant or symbolic dimension of that name in %s, so its values "
              "make no different networks\n", c->defs[i].name, c->file);
      return NULL;
    }
    diag_warning((Loc){0}, "-D %s: no constant of that name in %s", c->defs[i].name, c->file);
  }
  return n;
}

/* `-D NAME=V1,V2,...` (one or more lists) with --emit so|header: one network per
 * combination of the lists' values, loaded and lowered each, in one library (deploy/;
 * DEPLOY.md "Several sizes"). */
static int deploy_sizes(Cli *c, const NetRewrites *rw) {
  const char *kind = compile_kind(c), *names[MAX_DEFINES]; /* bench and tune do not come here */
  int nsizes = size_names(c, names), nnets = cli_size_combos(c, 0, NULL);
  if (!kind || (strcmp(kind, "so") != 0 && strcmp(kind, "header") != 0)) {
    fprintf(stderr, "texc: error: -D %s with several values makes a library of several sizes (`texc %s --emit so` or "
            "`--emit header`), not %s\n", names[0], c->file, c->emit ? xprintf("`--emit %s`", c->emit) : "a summary");
    return 1;
  }
  if (nnets > 64) { /* each network is loaded and lowered in memory (tens of MB) until the library is written */
    fprintf(stderr, "texc: error: the -D lists make %d networks; a library holds at most 64\n", nnets);
    return 1;
  }
  DeploySpec s = deploy_spec(c, kind);
  Lowered seen = {0};
  s.nsizes = nsizes, s.size_names = names, s.nnets = nnets;
  s.nets = xalloc(sizeof *s.nets * (size_t)nnets);
  for (int v = 0; v < nnets; v++) {
    int64_t *values = xalloc(sizeof(int64_t) * (size_t)nsizes);
    Network *n = load_size(c, v, values, rw);
    if (!n) return 1;
    if (c->o.verbose) {
      fprintf(stderr, "%s at", c->file);
      for (int k = 0; k < nsizes; k++) fprintf(stderr, "%s %s=%lld", k ? "," : "", names[k], (long long)values[k]);
      fprintf(stderr, "\n");
    }
    int ntuned;
    LoweredFunc **fns = lower_tasks_seen(c, n, &ntuned, &seen);
    if (!fns || !deploy_net(c, n, fns, ntuned, &s.nets[v])) return 1;
    s.nets[v].values = values;
  }
  return net_deploy_emit(&s);
}

static int cmd_compile(Cli *c, Network *n) {
  if (c->emit && strcmp(c->emit, "tasks") == 0) {
    print_tasks(n);
    return 0;
  }
  if (c->emit && strcmp(c->emit, "steps") == 0) {
    print_steps(c, n);
    return 0;
  }
  int ntuned;
  LoweredFunc **fns = lower_tasks(c, n, &ntuned);
  if (!fns) return 1;
  if (c->emit && strcmp(c->emit, "ir") == 0) {
    for (int t = 0; t < n->ntasks; t++) {
      if (t) putchar('\n');
      ir_print_func(stdout, fns[t]);
    }
    return 0;
  }
  const char *kind = compile_kind(c);
  if (!kind) {
    print_summary(n);
    return 0;
  }
  if (!strcmp(kind, "so") || !strcmp(kind, "header")) return cmd_deploy(c, n, fns, ntuned, kind);
  return backend_for(c->o.target)->emit(fns, n->ntasks, kind, c->out ? c->out : "-", &c->o) ? 0 : 1;
}

/* Element I of host data D of dtype T (a network tensor's: f32, f16, f64, i32, i64, u8, i8, bool). */
static double value_at(const void *d, DType t, int64_t i) {
  switch (t) {
  case DT_F32: return ((const float *)d)[i];
  case DT_F16: return f16_to_f32(((const uint16_t *)d)[i]);
  case DT_F64: return ((const double *)d)[i];
  case DT_I32: return ((const int32_t *)d)[i];
  case DT_I64: return (double)((const int64_t *)d)[i];
  case DT_BOOL:
  case DT_U8: return ((const uint8_t *)d)[i];
  case DT_I8: return ((const int8_t *)d)[i];
  default: die("network_run: a tensor of dtype %s", dtype_name(t));
  }
}

/* A short fingerprint of each result: its first values and its sum. */
static void print_outputs(Exec *e) {
  for (int r = 0; r < e->n->noutputs; r++) {
    NetTensor *o = e->n->outputs[r];
    void *h = download(e, o);
    dump(o, h, e->n->noutputs == 1 ? "output" : xprintf("output%d", r));
    double sum = 0;
    int64_t n = net_numel(o), arg = 0;
    for (int64_t i = 0; i < n; i++) {
      sum += value_at(h, o->dtype, i);
      if (value_at(h, o->dtype, i) > value_at(h, o->dtype, arg)) arg = i;
    }
    printf("  %s: sum %.6g, argmax %lld, first", o->name, sum, (long long)arg);
    for (int64_t i = 0; i < n && i < 4; i++) printf(" %.6g", value_at(h, o->dtype, i));
    printf("\n");
  }
}

/* --output OUT.npy and --expect REF, the I-th of each for result I: written, compared as
 * --check compares (compare_values: f32 tolerances, rel L2; docs/CLI.md). false: reported
 * (every --expect is compared, a mismatch or not). */
static bool write_and_compare(Cli *c, Exec *e) {
  bool ok = true;
  for (int i = 0; i < e->n->noutputs && (i < c->noutputs || i < c->nexpects); i++) {
    NetTensor *o = e->n->outputs[i];
    void *data = download(e, o);
    if (i < c->noutputs && !npy_write_array(c->outputs[i], o->dtype, o->ndim, o->shape, data)) ok = false;
    if (i >= c->nexpects) continue;
    HostTensor ref;
    if (!tensor_file_read(c->expects[i], &ref)) {
      ok = false;
      continue;
    }
    void *want = xalloc(tbytes(o) + 1); /* REF in the result's dtype: integers compared exactly */
    if (same_shape(&ref, o, c->expects[i], "result") && host_of(&ref, o, c->expects[i], want)) {
      CompareResult r = {0};
      if (o->dtype == DT_F64) { /* REF was read through f32 (tensor_file_read): compared at f32's tolerances */
        int64_t n = net_numel(o);
        float *g32 = xalloc(sizeof(float) * (size_t)(n + 1)), *w32 = xalloc(sizeof(float) * (size_t)(n + 1));
        for (int64_t k = 0; k < n; k++) g32[k] = (float)((double *)data)[k], w32[k] = (float)((double *)want)[k];
        ok &= compare_values(g32, w32, DT_F32, n, o->name, &r);
      } else
        ok &= compare_values(data, want, o->dtype, net_numel(o), o->name, &r);
      compare_print_as(stdout, xprintf("expect %s", c->expects[i]), &r);
    } else ok = false;
    free(ref.data);
  }
  return ok;
}

static int cmd_run(Cli *c, Network *n) {
  int ntuned = 0;
  LoweredFunc **fns = c->interp ? NULL : lower_tasks(c, n, &ntuned);
  Exec e;
  if ((!fns && !c->interp) || !exec_init(c, n, fns, &e)) return 1;
  double t0 = now_ms();
  int rc = c->interp ? interp_forward(c, &e) : exec_forward(&e);
  double ms = now_ms() - t0;
  if (rc == 0) {
    if (c->interp) printf("%s [%d tasks, interpreted]: %.3f ms\n", n->name, n->ntasks, ms);
    else printf("%s [%d tasks, %d tuned, %s]: %.3f ms\n", n->name, n->ntasks, ntuned, target_names[c->o.target], ms);
    print_outputs(&e);
    if (c->check && !check_groups(c, &e)) rc = 1;
    if (!write_and_compare(c, &e)) rc = 1;
  }
  exec_free(&e);
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of the N values of V (sorted in place). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n ? v[n / 2] : 0;
}

/* `texc bench -v`: per task, the record's latency next to the time of its calls inside the
 * forward pass (median over REPEAT passes, summed over the task's groups / weight) and
 * back to back (the tuner's way: the same call again, caches warm). */
static int print_profile(Cli *c, Exec *e) {
  Network *n = e->n;
  int reps = c->repeat;
  double *all = xalloc(sizeof(double) * (size_t)(n->ngroups * reps + 1));
  double *one = xalloc(sizeof(double) * (size_t)(n->ngroups + 1));
  for (int r = 0; r < reps; r++) {
    if (exec_forward_timed(e, one)) return 1;
    for (int k = 0; k < n->ngroups; k++) all[k * reps + r] = one[k];
  }
  double *in_net = xalloc(sizeof(double) * (size_t)(n->ntasks + 1));
  double *hot = xalloc(sizeof(double) * (size_t)(n->ntasks + 1));
  for (int k = 0; k < n->ngroups; k++) {
    NetGroup *g = n->groups[k];
    if (g->folded) continue;
    in_net[g->task] += median(all + k * reps, reps);
    double h[5];
    for (int r = 0; r < 5; r++) {
      double t0 = now_ms();
      if (exec_group(e, k)) return 1;
      h[r] = now_ms() - t0;
    }
    hot[g->task] += median(h, 5);
  }
  double sum_rec = 0, sum_net = 0, sum_hot = 0;
  printf("%3s  %-44s  %12s  %12s  %12s\n", "ID", "task x weight", "record (ms)", "in net (ms)", "hot (ms)");
  for (int t = 0; t < n->ntasks; t++) {
    if (n->tasks[t].folded) continue;
    int w = n->tasks[t].weight;
    double rec = net_task_best(n, t, &c->o, c->records, NULL);
    char label[64];
    snprintf(label, sizeof label, "%s x%d", n->groups[n->tasks[t].group]->kernel->name, w);
    printf("%3d  %-44s  %12s  %12.4f  %12.4f\n", t, label, rec < 0 ? "-" : xprintf("%.4f", rec),
           in_net[t] / w, hot[t] / w);
    sum_rec += rec < 0 ? 0 : rec * w;
    sum_net += in_net[t];
    sum_hot += hot[t];
  }
  printf("sum (weighted): record %.3f ms, in net %.3f ms, hot %.3f ms\n", sum_rec, sum_net, sum_hot);
  return 0;
}

/* `bench --json`: the document of a kernel file's bench (drv_bench_json), with one result,
 * the network's forward pass (MS sorted, C->repeat runs), in the same fields as a kernel's
 * rows, and the estimate when every task has a record. */
static int bench_json(Cli *c, Network *n, const double *ms, int passes, double est, int missing) {
  cJSON *o = drv_bench_json(c);
  cJSON_AddStringToObject(o, "network", n->name);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "results"), r);
  double sum = 0;
  for (int i = 0; i < c->repeat; i++) sum += ms[i];
  cJSON_AddStringToObject(r, "kernel", n->name);
  cJSON_AddStringToObject(r, "schedule", "network");
  cJSON_AddNumberToObject(r, "median_ms", ms[c->repeat / 2]);
  cJSON_AddNumberToObject(r, "min_ms", ms[0]);
  cJSON_AddNumberToObject(r, "mean_ms", sum / c->repeat);
  cJSON_AddNumberToObject(r, "runs", c->repeat);
  cJSON_AddNumberToObject(r, "calls_per_run", passes);
  if (!missing) cJSON_AddNumberToObject(r, "estimated_ms", est);
  char *s = cJSON_Print(o);
  printf("%s\n", s);
  free(s);
  cJSON_Delete(o);
  return 0;
}

/* Passes per measurement, as a kernel's calls (docs/CLI.md): --number (default 1), more
 * when they would take less than --min-repeat-ms (one pass took WARM_MS), at most 1000. */
static int bench_passes(const Cli *c, double warm_ms) {
  int passes = c->number > 0 ? c->number : 1;
  if (passes * warm_ms >= c->min_repeat_ms) return passes;
  return (int)fmin(1000, ceil(c->min_repeat_ms / fmax(warm_ms, 1e-3)));
}

/* N's forward pass timed: MS[0, --repeat) sorted (each the mean of *PASSES passes), the
 * profile with -v; *HOW: ", one CUDA graph" or "". 0, or 1 after an error. */
static int bench_network(Cli *c, Network *n, double *ms, int *passes, const char **how, NetPlan *plan) {
  int ntuned;
  LoweredFunc **fns = lower_tasks(c, n, &ntuned);
  Exec e;
  if (!fns || !exec_init(c, n, fns, &e)) return 1;
  double t0 = now_ms();
  int rc = exec_forward(&e); /* warm-up */
  *passes = bench_passes(c, now_ms() - t0);
  for (int r = 0; rc == 0 && r < c->repeat; r++) {
    t0 = now_ms();
    for (int p = 0; rc == 0 && p < *passes; p++) rc = exec_forward(&e);
    ms[r] = (now_ms() - t0) / *passes;
  }
  if (rc == 0 && c->o.verbose) rc = print_profile(c, &e);
  *how = rt_seq_is_graph(e.seq) ? ", one CUDA graph" : "";
  *plan = e.plan;
  exec_free(&e);
  if (rc) return 1;
  median(ms, c->repeat);
  return 0;
}

static int cmd_bench(Cli *c, Network *n) {
  int missing, passes;
  double *ms = xalloc(sizeof(double) * (size_t)(c->repeat + 1));
  const char *how;
  NetPlan plan;
  if (bench_network(c, n, ms, &passes, &how, &plan)) return 1;
  double est = estimate_ms(c, n, &missing);
  if (c->json) return bench_json(c, n, ms, passes, est, missing);
  print_summary(n);
  net_plan_print(stdout, &plan); /* deploy/plan.c */
  printf("Measured latency: %.3f ms (median of %d, best %.3f, %s%s%s)  Estimated: ", ms[c->repeat / 2], c->repeat,
         ms[0], target_names[c->o.target], how, passes > 1 ? xprintf(", %d passes each", passes) : "");
  int timed = 0; /* the folded tasks are not timed */
  for (int t = 0; t < n->ntasks; t++) timed += !n->tasks[t].folded;
  if (missing) printf("n/a (%d of %d tasks have no record in %s)\n", missing, timed, c->records);
  else printf("%.3f ms (sum of weight x best record)\n", est);
  return 0;
}

/* `texc bench NET -D batch=1,8`: the network at each size (each combination of the -D
 * lists) timed in turn, one table of their latencies: what a library of those sizes runs. */
static int bench_sizes(Cli *c, const NetRewrites *rw) {
  const char *names[MAX_DEFINES];
  int nnets = cli_size_combos(c, 0, NULL), nsizes = size_names(c, names);
  if (nnets > 64) {
    fprintf(stderr, "texc: error: the -D lists make %d networks; bench times at most 64\n", nnets);
    return 1;
  }
  char **rows = xalloc(sizeof(char *) * (size_t)nnets);
  double *ms = xalloc(sizeof(double) * (size_t)(c->repeat + 1));
  for (int v = 0; v < nnets; v++) {
    int64_t *values = xalloc(sizeof(int64_t) * (size_t)nsizes);
    Network *n = load_size(c, v, values, rw);
    if (!n) return 1;
    int passes;
    const char *how;
    NetPlan plan;
    if (bench_network(c, n, ms, &passes, &how, &plan)) return 1;
    char *row = xstrdup("|");
    for (int k = 0; k < nsizes; k++) row = xprintf("%s %10lld |", row, (long long)values[k]);
    rows[v] = xprintf("%s %12.3f | %12.3f | %10.2f |", row, ms[c->repeat / 2], ms[0], (double)plan.arena_bytes / (1024.0 * 1024.0));
    fprintf(stderr, "%s: %d of %d sizes timed\r", c->file, v + 1, nnets);
  }
  fprintf(stderr, "\n");
  printf("%s at %d sizes (%s, median of %d):\n|", c->file, nnets, target_names[c->o.target], c->repeat);
  for (int k = 0; k < nsizes; k++) printf(" %10s |", names[k]);
  printf(" latency (ms) |    best (ms) | arena (MiB) |\n|");
  for (int k = 0; k < nsizes; k++) printf("------------|");
  printf("--------------|--------------|------------|\n");
  for (int v = 0; v < nnets; v++) printf("%s\n", rows[v]);
  return 0;
}

/* texc fuzz-schedule NET.tex: random schedules of every task (or of --kernel's: a task's
 * name or its id tN, as `--emit tasks` lists them), each checked as a kernel's are
 * (randsched.c): against the interpreter's result of the task's default at the task's
 * full size, on random inputs (weights too). */
static int net_fuzz(Cli *c) {
  NetRewrites rw = net_rewrites(c->o.target);
  Network *n = net_load(c->file, NULL, c->defs, c->ndefs, &rw);
  if (!n || diag_errors()) return 1;
  Program p = {.file = c->file, .kernels = xalloc(sizeof(Kernel *) * (size_t)(n->ntasks + 1))};
  bool found = !c->kernel;
  for (int i = 0; i < n->ntasks; i++) { /* every task, so that a trial's seed is the same with --kernel */
    Kernel *k = p.kernels[p.nkernels++] = n->groups[n->tasks[i].group]->kernel;
    char id[32];
    snprintf(id, sizeof id, "t%d", i);
    if (c->kernel && (!strcmp(c->kernel, k->name) || !strcmp(c->kernel, id))) c->kernel = k->name, found = true;
  }
  if (!found) {
    fprintf(stderr, "texc: error: --kernel %s: no task of that name or id in network %s (`texc %s --emit tasks` "
            "lists them)\n", c->kernel, n->name, c->file);
    return 1;
  }
  return drv_fuzz_schedule(c, &p, true);
}

int net_run_cli(Cli *c) {
  if (c->cmd == CMD_FUZZ) return net_fuzz(c);
  onnx_bind_inputs(c->inputs, c->ninputs);
  NetRewrites rw = net_rewrites(c->o.target);
  for (int i = 0; i < c->ndefs; i++)
    if (c->ndef_values[i] > 1) return c->cmd == CMD_BENCH ? bench_sizes(c, &rw) : deploy_sizes(c, &rw);
  Network *n = net_load(c->file, c->kernel, c->defs, c->ndefs, &rw);
  if (!n || diag_errors()) return 1;
  int kept = 0; /* the inputs folded in at import are no parameters */
  for (int i = 0; i < c->ninputs; i++)
    if (!onnx_input_folded(i)) c->inputs[kept++] = c->inputs[i];
  c->ninputs = kept;
  for (int i = 0; i < c->ndefs; i++)
    if (!c->defs[i].used) diag_warning((Loc){0}, "-D %s: no constant of that name in %s", c->defs[i].name, c->file);
  if (c->noutputs > n->noutputs || c->nexpects > n->noutputs) {
    fprintf(stderr, "texc: error: %d --output and %d --expect files, but network %s has %d result%s\n", c->noutputs,
            c->nexpects, n->name, n->noutputs, n->noutputs == 1 ? "" : "s");
    return 1;
  }
  if (c->schedule && strcmp(c->schedule, "bare") != 0) {
    fprintf(stderr, "texc: error: --schedule %s: a network takes only `--schedule bare` (the default "
            "schedule of every task, no records, no CPU default)\n", c->schedule);
    return 1;
  }
  if (c->repeat < 1) c->repeat = 1;
  switch (c->cmd) {
  case CMD_COMPILE: return cmd_compile(c, n);
  case CMD_RUN: return cmd_run(c, n);
  case CMD_BENCH: return cmd_bench(c, n);
  default:
    fprintf(stderr, "texc: error: '%s' does not apply to a network file\n", cli_command_names[c->cmd]);
    return 1;
  }
}
