/* run.c — `texc run` and `texc bench`: random inputs (or --input files: kernel_io.c),
 * compiled or interpreted execution, comparison with the reference interpreter, timing
 * tables. */
#include "driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "autosched/autosched.h"
#include "rt_internal.h"
#include "texrt.h"

#include <cjson/cJSON.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int64_t param_numel(const LoweredFunc *f, int i) {
  int64_t n = ir_buffer_numel(f->params[i], f, NULL);
  if (n < 0) die("size of %s is not constant", f->params[i]->name);
  return n;
}

/* Bytes of F's tensors, every parameter once (what a call reads and writes); -1 when a
 * size is symbolic. */
static double tensor_bytes(const LoweredFunc *f) {
  double bytes = 0;
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = ir_buffer_numel(f->params[i], f, NULL);
    if (n < 0) return -1;
    bytes += (double)n * dtype_bytes(f->params[i]->dtype);
  }
  return bytes;
}

bool drv_fits(const LoweredFunc *f, int copies) {
  double bytes = tensor_bytes(f);
  if (bytes < 0) {
    diag_error(f->loc, "kernel %s has a symbolic size: give it a value with -D NAME=VALUE", f->name);
    return false;
  }
  double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
  if (phys > 0 && bytes * copies > phys / 2) {
    diag_error(f->loc,
               "kernel %s needs %.1f GiB for its tensors, more than half of this machine's memory "
               "(%.1f GiB): use -D to run it at smaller sizes",
               f->name, bytes * copies / (1 << 30), phys / (1 << 30));
    return false;
  }
  struct rlimit as; /* `ulimit -v`: the address space this process may have */
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      bytes * copies > 0.8 * (double)as.rlim_cur) {
    diag_error(f->loc,
               "kernel %s needs %.1f GiB for its tensors, more than this process may allocate "
               "(ulimit -v: %.1f GiB): use -D to run it at smaller sizes",
               f->name, bytes * copies / (1 << 30), (double)as.rlim_cur / (1 << 30));
    return false;
  }
  return true;
}

void **drv_host_args(const LoweredFunc *f) {
  void **args = xalloc(sizeof(void *) * (size_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    Buffer *b = f->params[i];
    int64_t n = param_numel(f, i);
    args[i] = xalloc((size_t)(n ? n : 1) * (size_t)dtype_bytes(b->dtype));
    fill_random(args[i], b->dtype, n, i < f->ninputs ? 1000u + (uint64_t)i : 0xdeadbeefu + (uint64_t)i);
  }
  return args;
}

void **drv_copy_args(const LoweredFunc *f, void **args) {
  void **copy = xalloc(sizeof(void *) * (size_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    size_t bytes = drv_param_bytes(f, i);
    copy[i] = xalloc(bytes ? bytes : 1);
    memcpy(copy[i], args[i], bytes);
  }
  return copy;
}

/* Device tensors for F's params holding ARGS. NULL after printing why. */
static RtTensor **device_args(const LoweredFunc *f, void **args, RtDevice dev) {
  RtTensor **t = xalloc(sizeof(RtTensor *) * (size_t)f->nparams);
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = param_numel(f, i);
    t[i] = rt_tensor_alloc(dev, dtype_bytes(f->params[i]->dtype), 1, &n);
    if (!t[i] || rt_tensor_from_host(t[i], args[i])) {
      fprintf(stderr, "texc: error: %s\n", rt_last_error());
      return NULL;
    }
  }
  return t;
}

static void free_device_args(const LoweredFunc *f, RtTensor **t) {
  for (int i = 0; t && i < f->nparams; i++) rt_tensor_free(t[i]);
}

int drv_execute(Cli *c, LoweredFunc *f, void **args, bool interp, double *ms) {
  if (interp) {
    double t0 = now_ms();
    int rc = interp_run(f, args, NULL);
    *ms = now_ms() - t0;
    return rc;
  }
  RtModule *m;
  RtFunc *fn = drv_build(c, f, &m);
  if (!fn) return 1;
  RtTensor **t = device_args(f, args, target_device(f->target));
  int rc = 1;
  if (t) {
    double t0 = now_ms();
    rc = rt_func_call(fn, t, f->nparams, NULL, 0);
    *ms = now_ms() - t0;
    if (rc) fprintf(stderr, "texc: error: %s: %s\n", f->name, rt_last_error());
    for (int i = f->ninputs; rc == 0 && i < f->nparams; i++)
      if (rt_tensor_to_host(args[i], t[i])) {
        fprintf(stderr, "texc: error: %s\n", rt_last_error());
        rc = 1;
      }
  }
  free_device_args(f, t);
  rt_module_free(m);
  return rc;
}

bool drv_compare(const LoweredFunc *f, void **got, void **ref, bool quiet) {
  CompareResult r;
  bool ok = compare_outputs(f, got, ref, &r);
  if (!quiet) compare_print(stdout, &r);
  return ok;
}

void **drv_reference(Cli *c, Kernel *k, void **args, const LoweredFunc *like) {
  Vec none = {0};
  LoweredFunc *ref = drv_lower(c, k, TARGET_LLVM, &none);
  if (!ref) return NULL;
  void **copy = drv_copy_args(like, args);
  if (interp_run(ref, copy, NULL)) return NULL;
  return copy;
}

static const char *variant_label(Variant *v) { return v ? v->name : "default"; }

/* Run F (kernel K under variant V) once, on --input files where given, else random
 * inputs; with --check compare with the reference; then --output and --expect. */
static bool run_kernel(Cli *c, Kernel *k, LoweredFunc *f, Variant *v) {
  if (!drv_fits(f, c->check ? 3 : 1)) return false;
  void **args = drv_host_args(f);
  if (!kio_read_inputs(c, f, args)) return false;
  void **before = c->check ? drv_copy_args(f, args) : NULL;
  double ms = 0;
  bool interp = c->interp;
  if (drv_execute(c, f, args, interp, &ms)) return false;
  printf("%s [%s, %s%s]: %.3f ms\n", k->name, variant_label(v), target_names[c->o.target],
         interp ? ", interpreted" : "", ms);
  bool ok = true;
  if (c->check) {
    void **ref = drv_reference(c, k, before, f);
    ok = ref && drv_compare(f, args, ref, false);
  }
  return kio_write_outputs(c, f, args) && ok;
}

bool drv_sizes_bound(Kernel *k) {
  if (!k->nsizes) return true;
  diag_error(k->loc, "kernel %s has symbolic size '%s': give it a value with -D %s=VALUE", k->name,
             k->sizes[0]->name, k->sizes[0]->name);
  return false;
}

/* Every kernel is lowered (its steps picked: auto ones searched in forked children)
 * before any runs, so that no device is initialised in this process before a fork: a
 * CUDA context does not survive one, and OpenCL drivers' threads do not either. */
int drv_run(Cli *c, Program *p) {
  if (!kio_check(c, p) || !(p = kio_bind_sizes(c, p))) return 1; /* --input, --output, --expect */
  bool ok = true;
  for (int i = 0; i < p->nkernels; i++)
    if (drv_selected(c, p->kernels[i]) && !drv_sizes_bound(p->kernels[i])) ok = false;
  LoweredFunc **fns;
  Variant **vs;
  int n = ok ? drv_lower_all(c, p, &fns, &vs) : -1;
  if (n < 0) return 1;
  for (int i = 0, j = 0; i < p->nkernels; i++) {
    if (!drv_selected(c, p->kernels[i])) continue;
    if (!run_kernel(c, p->kernels[i], fns[j], vs[j])) ok = false;
    j++;
  }
  return ok && !diag_errors() ? 0 : 1;
}

/* One row of the bench table: kernel K under a schedule (LABEL), lowered to F (NULL: it
 * failed), its median MS once timed (-1: failed). */
typedef struct BenchRow {
  Kernel *k;
  const char *label;
  LoweredFunc *f;
  double ms;
  RtTiming tm;
} BenchRow;

/* Time F into *TM. Returns the median in ms, or -1. */
static double bench_time(Cli *c, LoweredFunc *f, RtTiming *out) {
  if (!f || !drv_fits(f, 2)) return -1;
  RtModule *m;
  RtFunc *fn = drv_build(c, f, &m);
  if (!fn) return -1;
  void **args = drv_host_args(f);
  RtTensor **t = device_args(f, args, target_device(f->target));
  RtTiming tm = {0};
  int rc = t ? rt_time(fn, t, f->nparams, NULL, 0, c->number, c->repeat, c->min_repeat_ms, &tm) : 1;
  if (rc && t) fprintf(stderr, "texc: error: %s\n", rt_last_error());
  free_device_args(f, t);
  rt_module_free(m);
  *out = tm;
  return rc ? -1 : tm.median_ms;
}

/* GB/s counts each tensor once per call (what a memory-bound kernel must move). */
static void bench_row(const BenchRow *r, double base) {
  if (r->ms < 0) {
    printf("%-16s %-14s %12s\n", r->k->name, r->label, "error");
    return;
  }
  double flops = kernel_flops(r->k);
  printf("%-16s %-14s %12.4f %10.2f %10.2f %9.2fx\n", r->k->name, r->label, r->ms,
         flops > 0 ? flops / (r->ms * 1e6) : 0.0, tensor_bytes(r->f) / (r->ms * 1e6),
         base > 0 ? base / r->ms : 1.0);
}

cJSON *drv_bench_json(Cli *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "texc", TEXC_VERSION);
  cJSON *m = machine_to_json(o, rt_cpu_name(), rt_cpu_isa(), tune_gpu_name());
  cJSON_AddNumberToObject(m, "threads", tune_threads());
  cJSON_AddStringToObject(o, "target", target_names[c->o.target]);
  cJSON_AddStringToObject(o, "file", c->file);
  return o;
}

/* Print DOC (formatted, one document) on stdout and free it. */
static void print_json(cJSON *doc) {
  char *s = cJSON_Print(doc);
  if (!s) die("out of memory");
  printf("%s\n", s);
  free(s);
  cJSON_Delete(doc);
}

/* Row R as a JSON object: the same figures as bench_row's, plus min and runs. */
static cJSON *bench_json_row(const BenchRow *r, double base) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kernel", r->k->name);
  cJSON_AddStringToObject(o, "schedule", r->label);
  if (r->ms < 0) {
    cJSON_AddStringToObject(o, "error", "did not build or run");
    return o;
  }
  double flops = kernel_flops(r->k);
  cJSON_AddNumberToObject(o, "median_ms", r->ms);
  cJSON_AddNumberToObject(o, "min_ms", r->tm.min_ms);
  cJSON_AddNumberToObject(o, "mean_ms", r->tm.mean_ms);
  cJSON_AddNumberToObject(o, "runs", r->tm.repeat);
  cJSON_AddNumberToObject(o, "calls_per_run", r->tm.number);
  cJSON_AddNumberToObject(o, "flops", flops);
  cJSON_AddNumberToObject(o, "gflops", flops > 0 ? flops / (r->ms * 1e6) : 0.0);
  cJSON_AddNumberToObject(o, "bytes", tensor_bytes(r->f));
  cJSON_AddNumberToObject(o, "gbs", tensor_bytes(r->f) / (r->ms * 1e6));
  cJSON_AddNumberToObject(o, "speedup", base > 0 ? base / r->ms : 1.0);
  return o;
}

/* The rows of kernel K: its default, then --schedule's variant (or all that apply). */
static int bench_rows(Cli *c, Kernel *k, BenchRow *rows) {
  bool all = c->schedule && strcmp(c->schedule, "all") == 0;
  int n = 0;
  rows[n++] = (BenchRow){.k = k, .label = "default", .f = drv_kernel(c, k, NULL, NULL), .ms = -1};
  for (int j = 0; j < k->nvariants; j++) {
    Variant *v = k->variants[j];
    if (!(v->targets & TARGET_BIT(c->o.target))) continue;
    if (!all && (!c->schedule || strcmp(c->schedule, v->name) != 0)) continue;
    rows[n++] = (BenchRow){.k = k, .label = v->name, .f = drv_kernel(c, k, v->name, NULL), .ms = -1};
  }
  return n;
}

/* Every row is lowered before any is timed (see drv_run: no device before a fork). */
int drv_bench(Cli *c, Program *p) {
  int cap = 1;
  for (int i = 0; i < p->nkernels; i++) cap += 1 + p->kernels[i]->nvariants;
  BenchRow *rows = xalloc(sizeof *rows * (size_t)cap);
  int n = 0;
  for (int i = 0; i < p->nkernels; i++)
    if (drv_selected(c, p->kernels[i]) && drv_sizes_bound(p->kernels[i])) n += bench_rows(c, p->kernels[i], rows + n);
  if (!c->json)
    printf("%-16s %-14s %12s %10s %10s %10s\n", "kernel", "schedule", "median ms", "GFLOP/s", "GB/s", "speedup");
  cJSON *doc = c->json ? drv_bench_json(c) : NULL;
  cJSON *res = doc ? cJSON_AddArrayToObject(doc, "results") : NULL;
  double base = -1;
  for (int i = 0; i < n; i++) {
    rows[i].ms = bench_time(c, rows[i].f, &rows[i].tm);
    if (!strcmp(rows[i].label, "default")) base = rows[i].ms;
    if (res) cJSON_AddItemToArray(res, bench_json_row(&rows[i], base));
    else bench_row(&rows[i], base);
  }
  if (doc) print_json(doc);
  return diag_errors() ? 1 : 0;
}
