/* rt.c — texc's runtime: errors, devices, tensors, modules, calls and timing.
 *
 * CPU memory is handled here; CUDA and OpenCL memory go through the RtDeviceOps tables
 * of rt_cuda.c and rt_opencl.c. Those are referenced weakly, so that a program (or a
 * `--emit so` library) linked against libtexrt.a without the GPU objects still links
 * and simply reports that the device does not exist.
 */
#include "rt_internal.h"

#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#pragma weak rt_cuda_ops
#pragma weak rt_opencl_ops

/* ------------------------------------------------------------------ errors */

static _Thread_local char last_error[1024];

const char *rt_last_error(void) { return last_error; }

void rt_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

/* ----------------------------------------------------------------- devices */

/* The memory operations of a GPU device kind; NULL for the CPU or when not linked in. */
static const RtDeviceOps *device_ops(RtDeviceKind k) {
  switch (k) {
  case RT_CUDA: return &rt_cuda_ops;
  case RT_OPENCL: return &rt_opencl_ops;
  default: return NULL;
  }
}

static const char *kind_name(RtDeviceKind k) {
  return k == RT_CPU ? "cpu" : k == RT_CUDA ? "cuda" : k == RT_OPENCL ? "opencl" : "?";
}

int rt_device_exists(RtDevice dev) {
  if (dev.kind == RT_CPU) return dev.id == 0;
  const RtDeviceOps *ops = device_ops(dev.kind);
  return ops && ops->exists && ops->exists(dev.id);
}

const char *rt_device_name(RtDevice dev) {
  if (dev.kind == RT_CPU) return "cpu";
  const RtDeviceOps *ops = device_ops(dev.kind);
  if (!ops || !ops->name) return "none";
  return ops->name(dev.id);
}

/* The ops of DEV, or NULL after setting the error when it has none. */
static const RtDeviceOps *need_ops(RtDevice dev) {
  const RtDeviceOps *ops = device_ops(dev.kind);
  if (!ops) rt_set_error("%s device %d: this runtime was built without it", kind_name(dev.kind), dev.id);
  return ops;
}

/* ----------------------------------------------------------------- tensors */

#define HUGE_PAGE ((size_t)2 << 20)

/* Host memory for a tensor: 64-byte aligned; with TEXC_HUGEPAGES=1, blocks from 2 MiB on
 * are aligned to 2 MiB and advised to the kernel as huge pages (where transparent huge pages
 * are "madvise", as on Debian, nothing else gives them), so that a kernel striding through a
 * large operand misses the TLB less. Opt-in, as PyTorch's THP_MEM_ALLOC_ENABLE: it rounds
 * each such block up to 2 MiB, and on the Zen 3 VM it was measured on it changed neither a
 * tuned matmul 1024^3 nor resnet18 (bench/RESULTS.md). */
void *rt_host_alloc(size_t bytes) {
  bytes = (bytes + 63) & ~(size_t)63;
  if (bytes < HUGE_PAGE) return aligned_alloc(64, bytes ? bytes : 64);
  const char *env = getenv("TEXC_HUGEPAGES");
  if (!env || strcmp(env, "1")) return aligned_alloc(64, bytes);
  bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  void *p = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
  return p;
}

RtTensor *rt_tensor_alloc(RtDevice dev, int dtype_bytes, int ndim, const int64_t *shape) {
  if (ndim < 0 || ndim > 8 || dtype_bytes <= 0 || (ndim && !shape)) {
    rt_set_error("rt_tensor_alloc: bad arguments (ndim %d, dtype_bytes %d)", ndim, dtype_bytes);
    return NULL;
  }
  RtTensor *t = calloc(1, sizeof *t);
  if (!t) goto oom;
  t->dev = dev;
  t->dtype_bytes = dtype_bytes;
  t->ndim = ndim;
  t->nbytes = dtype_bytes;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) {
      rt_set_error("rt_tensor_alloc: negative extent %lld", (long long)shape[d]);
      free(t);
      return NULL;
    }
    t->shape[d] = shape[d];
    t->nbytes *= shape[d];
  }
  size_t bytes = ((size_t)t->nbytes + 63) & ~(size_t)63;
  if (dev.kind == RT_CPU) {
    t->data = rt_host_alloc(bytes);
  } else {
    const RtDeviceOps *ops = need_ops(dev);
    if (!ops) {
      free(t);
      return NULL;
    }
    t->data = ops->alloc(dev.id, t->nbytes ? t->nbytes : 64);
    if (!t->data) { /* the back end said why */
      free(t);
      return NULL;
    }
  }
  if (t->data) return t;
  free(t);
oom:
  rt_set_error("rt_tensor_alloc: out of memory");
  return NULL;
}

void rt_tensor_free(RtTensor *t) {
  if (!t) return;
  if (t->dev.kind == RT_CPU) free(t->data);
  else if (device_ops(t->dev.kind)) device_ops(t->dev.kind)->free(t->dev.id, t->data);
  free(t);
}

int rt_tensor_from_host(RtTensor *dst, const void *src) {
  if (dst->dev.kind == RT_CPU) {
    memcpy(dst->data, src, (size_t)dst->nbytes);
    return 0;
  }
  const RtDeviceOps *ops = need_ops(dst->dev);
  return ops ? ops->to_device(dst->dev.id, dst->data, src, dst->nbytes) : 1;
}

int rt_tensor_to_host(void *dst, const RtTensor *src) {
  if (src->dev.kind == RT_CPU) {
    memcpy(dst, src->data, (size_t)src->nbytes);
    return 0;
  }
  const RtDeviceOps *ops = need_ops(src->dev);
  return ops ? ops->to_host(src->dev.id, dst, src->data, src->nbytes) : 1;
}

int rt_tensor_copy(RtTensor *dst, const RtTensor *src) {
  if (dst->nbytes != src->nbytes) {
    rt_set_error("rt_tensor_copy: sizes differ (%lld and %lld bytes)", (long long)dst->nbytes,
                 (long long)src->nbytes);
    return 1;
  }
  if (src->dev.kind == RT_CPU) return rt_tensor_from_host(dst, src->data);
  if (dst->dev.kind == RT_CPU) return rt_tensor_to_host(dst->data, src);
  /* device to device: through the host */
  void *tmp = malloc((size_t)src->nbytes + 1);
  if (!tmp) {
    rt_set_error("rt_tensor_copy: out of memory");
    return 1;
  }
  int rc = rt_tensor_to_host(tmp, src);
  if (!rc) rc = rt_tensor_from_host(dst, tmp);
  free(tmp);
  return rc;
}

/* ----------------------------------------------------------------- modules */

RtModule *rt_module_new(void *impl, void (*destroy)(RtModule *m)) {
  RtModule *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->impl = impl;
  m->destroy = destroy;
  return m;
}

void rt_module_add(RtModule *m, RtFunc *f) {
  RtFunc **fs = realloc(m->funcs, sizeof *fs * (size_t)(m->nfuncs + 1));
  if (!fs) abort();
  m->funcs = fs;
  m->funcs[m->nfuncs++] = f;
}

RtFunc *rt_module_func(RtModule *m, const char *name) {
  if (!m) {
    rt_set_error("rt_module_func: no module");
    return NULL;
  }
  for (int i = 0; i < m->nfuncs; i++)
    if (strcmp(m->funcs[i]->name, name) == 0) return m->funcs[i];
  rt_set_error("no function '%s' in the module", name);
  return NULL;
}

void rt_module_free(RtModule *m) {
  if (!m) return;
  for (int i = 0; i < m->nfuncs; i++) {
    RtFunc *f = m->funcs[i];
    if (f->destroy) f->destroy(f);
    free(f);
  }
  free(m->funcs);
  if (m->destroy) m->destroy(m);
  free(m);
}

/* ------------------------------------------------------- CPU functions */

/* What a CPU RtFunc keeps: the packed entry and its name. */
typedef struct CpuFunc {
  RtPackedFn fn;
  char name[];
} CpuFunc;

static int cpu_call(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  CpuFunc *c = f->impl;
  void *ptrs[64];
  void **p = nargs <= 64 ? ptrs : malloc(sizeof *p * (size_t)nargs);
  if (!p) {
    rt_set_error("%s: out of memory", f->name);
    return 1;
  }
  for (int i = 0; i < nargs; i++) p[i] = args[i]->data;
  int rc = c->fn(p, sizes);
  if (p != ptrs) free(p);
  if (rc) /* the codes of llvm.c's compiled functions */
    rt_set_error(rc == 1   ? "%s: a size argument is outside 1..2^40"
                 : rc == 2 ? "%s: an intermediate tensor's size in bytes overflows 64 bits at these sizes"
                 : rc == 3 ? "%s: out of memory allocating an intermediate tensor"
                 : rc == 4 ? "%s: an extern kernel it calls returned non-zero"
                           : "%s failed",
                 f->name);
  return rc;
}

static void cpu_destroy(RtFunc *f) { free(f->impl); }

RtFunc *rt_cpu_func(const char *name, RtPackedFn fn, int nargs, int nsizes) {
  size_t len = strlen(name);
  RtFunc *f = calloc(1, sizeof *f);
  CpuFunc *c = calloc(1, sizeof *c + len + 1);
  if (!f || !c) {
    free(f);
    free(c);
    rt_set_error("out of memory");
    return NULL;
  }
  c->fn = fn;
  memcpy(c->name, name, len + 1);
  f->name = c->name;
  f->device = (RtDevice){RT_CPU, 0};
  f->nargs = nargs;
  f->nsizes = nsizes;
  f->impl = c;
  f->call = cpu_call;
  f->destroy = cpu_destroy;
  return f;
}

static void so_destroy(RtModule *m) {
  if (m->impl) dlclose(m->impl);
}

/* Add one kernel of the `__texc_kernels` table line "NAME NARGS NSIZES". */
static int add_so_kernel(RtModule *m, void *handle, const char *line, const char *path) {
  char name[256], sym[300];
  int nargs, nsizes;
  if (sscanf(line, "%255s %d %d", name, &nargs, &nsizes) != 3) {
    rt_set_error("%s: malformed kernel table", path);
    return 1;
  }
  snprintf(sym, sizeof sym, "__texc_packed_%s", name);
  void *fn = dlsym(handle, sym);
  if (!fn) {
    rt_set_error("%s: kernel '%s' is listed but %s is missing", path, name, sym);
    return 1;
  }
  RtFunc *f = rt_cpu_func(name, (RtPackedFn)fn, nargs, nsizes);
  if (!f) return 1;
  rt_module_add(m, f);
  return 0;
}

RtModule *rt_module_load(const char *so_path) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s", strchr(so_path, '/') ? "" : "./", so_path);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    rt_set_error("cannot load %s: %s", so_path, dlerror());
    return NULL;
  }
  const char *table = dlsym(h, "__texc_kernels");
  if (!table) {
    rt_set_error("%s was not made by `texc --emit so` (no __texc_kernels)", so_path);
    dlclose(h);
    return NULL;
  }
  RtModule *m = rt_module_new(h, so_destroy);
  for (const char *line = table; m && *line;) {
    if (add_so_kernel(m, h, line, so_path)) {
      rt_module_free(m);
      return NULL;
    }
    const char *nl = strchr(line, '\n');
    line = nl ? nl + 1 : line + strlen(line);
  }
  return m;
}

/* ------------------------------------------------------------------- calls */

/* 0 when F may be called on ARGS and SIZES, else 1 after rt_set_error. */
static int check_call(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  if (!f) {
    rt_set_error("rt_func_call: no function");
    return 1;
  }
  if (nargs < 0 || (nargs && !args) || nsizes < 0 || (nsizes && !sizes)) {
    rt_set_error("%s: bad argument arrays", f->name);
    return 1;
  }
  if (nargs != f->nargs || nsizes != f->nsizes) {
    rt_set_error("%s takes %d tensors and %d sizes, not %d and %d", f->name, f->nargs, f->nsizes,
                 nargs, nsizes);
    return 1;
  }
  for (int i = 0; i < nsizes; i++)
    if (sizes[i] < 1 || sizes[i] > RT_SIZE_MAX) {
      rt_set_error("%s: size argument %d is %lld; sizes must be in 1..2^40", f->name, i,
                   (long long)sizes[i]);
      return 1;
    }
  for (int i = 0; i < nargs; i++) {
    if (!args[i] || !args[i]->data) {
      rt_set_error("%s: tensor argument %d is missing", f->name, i);
      return 1;
    }
    if (args[i]->dev.kind != f->device.kind || args[i]->dev.id != f->device.id) {
      rt_set_error("%s runs on %s:%d but tensor argument %d is on %s:%d", f->name,
                   kind_name(f->device.kind), f->device.id, i, kind_name(args[i]->dev.kind),
                   args[i]->dev.id);
      return 1;
    }
  }
  return 0;
}

int rt_func_call(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  return check_call(f, args, nargs, sizes, nsizes) ? 1 : f->call(f, args, nargs, sizes, nsizes);
}

/* rt_func_call without waiting for the device where the function can (RtFunc.launch). */
static int func_launch(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  if (check_call(f, args, nargs, sizes, nsizes)) return 1;
  return (f->launch ? f->launch : f->call)(f, args, nargs, sizes, nsizes);
}

/* ------------------------------------------------------------------ sequences */

struct RtSeq {
  int n;
  RtFunc **fns;
  RtTensor ***args; /* copies of the caller's arrays */
  int *nargs;
  RtDevice dev;
  const RtDeviceOps *ops;
  void *graph; /* the device's recorded graph, or NULL: launched one by one */
};

void rt_seq_free(RtSeq *s) {
  if (!s) return;
  if (s->graph) s->ops->graph_free(s->dev.id, s->graph);
  for (int i = 0; s->args && i < s->n; i++) free(s->args[i]);
  free(s->args);
  free(s->fns);
  free(s->nargs);
  free(s);
}

RtSeq *rt_seq_new(RtFunc *const *fns, RtTensor **const *args, const int *nargs, int n) {
  if (n < 0 || (n && (!fns || !args || !nargs))) {
    rt_set_error("rt_seq_new: bad arrays");
    return NULL;
  }
  RtSeq *s = calloc(1, sizeof *s);
  if (!s) goto oom;
  s->n = n;
  s->fns = calloc((size_t)n + 1, sizeof *s->fns);
  s->args = calloc((size_t)n + 1, sizeof *s->args);
  s->nargs = calloc((size_t)n + 1, sizeof *s->nargs);
  if (!s->fns || !s->args || !s->nargs) goto oom;
  for (int i = 0; i < n; i++) {
    if (check_call(fns[i], args[i], nargs[i], NULL, 0)) goto fail;
    if (i && (fns[i]->device.kind != fns[0]->device.kind || fns[i]->device.id != fns[0]->device.id)) {
      rt_set_error("rt_seq_new: call %d runs on another device than call 0", i);
      goto fail;
    }
    s->fns[i] = fns[i];
    s->nargs[i] = nargs[i];
    if (!(s->args[i] = calloc((size_t)nargs[i] + 1, sizeof(RtTensor *)))) goto oom;
    memcpy(s->args[i], args[i], sizeof(RtTensor *) * (size_t)nargs[i]);
  }
  if (n == 0) return s;
  s->dev = fns[0]->device;
  s->ops = device_ops(s->dev.kind);
  const char *env = getenv("TEXC_CUDA_GRAPH");
  if (s->ops && s->ops->graph_new && !(env && strcmp(env, "0") == 0))
    s->graph = s->ops->graph_new(s->dev.id, s->fns, s->args, s->nargs, n);
  /* no graph (an old driver, a capture refused): the calls launched one by one, whose
   * errors, if any, the first run reports */
  return s;
oom:
  rt_set_error("rt_seq_new: out of memory");
fail:
  rt_seq_free(s);
  return NULL;
}

int rt_seq_is_graph(const RtSeq *s) { return s && s->graph; }

int rt_seq_run(RtSeq *s) {
  if (!s) {
    rt_set_error("rt_seq_run: no sequence");
    return 1;
  }
  if (s->graph) return s->ops->graph_run(s->dev.id, s->graph);
  for (int i = 0; i < s->n; i++)
    if (func_launch(s->fns[i], s->args[i], s->nargs[i], NULL, 0)) return 1;
  return s->n && s->ops && s->ops->sync ? s->ops->sync(s->dev.id) : 0;
}

/* ------------------------------------------------------------------ timing */

double rt_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Milliseconds for NUMBER calls (device work finished), or a negative value on error. */
/* Evict [P, P + N) from every level of the CPU's caches (written back, then invalid), as a
 * forward pass does to a task's weights before the task runs again. */
static void evict(const void *p, int64_t n) {
  const char *b = p, *e = b + n;
#if defined(__x86_64__) || defined(__i386__)
  for (const char *q = (const char *)((uintptr_t)b & ~(uintptr_t)63); q < e; q += 64)
    __builtin_ia32_clflush(q);
  __builtin_ia32_mfence();
#elif defined(__aarch64__)
  for (const char *q = (const char *)((uintptr_t)b & ~(uintptr_t)63); q < e; q += 64)
    __asm__ volatile("dc civac, %0" : : "r"(q) : "memory");
  __asm__ volatile("dsb ish" : : : "memory");
#else
  (void)b, (void)e; /* no portable way: the data stays where it is */
#endif
}

/* Milliseconds of NUMBER calls back to back (after a device sync); the tensors of COLD (bit
 * i: argument i) evicted from the caches before each call, outside the timed region: host tensors
 * line by line, a device's by flushing its cache (RtDeviceOps.flush_cache; a device that
 * cannot is timed warm). A device with its own clock (RtDeviceOps.timer_start: CUDA events)
 * times the kernels themselves, not the host's launch and wait; the wall clock bounds it. */
static double time_batch(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes,
                         int number, uint64_t cold) {
  const RtDeviceOps *ops = device_ops(f->device.kind);
  if (cold && number > 1 && f->device.kind == RT_CPU) { /* each call cold, as in a pass */
    double sum = 0;
    for (int i = 0; i < number; i++) {
      double ms = time_batch(f, args, nargs, sizes, nsizes, 1, cold);
      if (ms < 0) return -1;
      sum += ms;
    }
    return sum;
  }
  int flush = 0;
  for (int i = 0; cold && i < nargs && i < 64; i++) {
    if (!(cold >> i & 1) || !args[i]) continue;
    if (args[i]->dev.kind == RT_CPU) evict(args[i]->data, args[i]->nbytes);
    else flush = 1;
  }
  if (flush && ops && ops->flush_cache) ops->flush_cache(f->device.id);
  bool clocked = ops && ops->timer_start && ops->timer_start(f->device.id) == 0;
  double t0 = rt_now_ms();
  for (int i = 0; i < number; i++) /* GPU: launched back to back, one sync below */
    if (func_launch(f, args, nargs, sizes, nsizes)) return -1;
  double device_ms = clocked ? ops->timer_stop(f->device.id) : -1;
  if (ops && ops->sync && ops->sync(f->device.id)) return -1;
  double wall_ms = rt_now_ms() - t0;
  return device_ms > 0 && device_ms <= wall_ms ? device_ms : wall_ms;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Fill OUT's statistics from the per-call times T[0..n). */
static void summarize(double *t, int n, RtTiming *out) {
  double sum = 0, var = 0;
  for (int i = 0; i < n; i++) sum += t[i];
  out->mean_ms = sum / n;
  for (int i = 0; i < n; i++) var += (t[i] - out->mean_ms) * (t[i] - out->mean_ms);
  out->stdev_ms = n > 1 ? sqrt(var / (n - 1)) : 0;
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  out->min_ms = t[0];
  out->median_ms = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int rt_time(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes, int number,
            int repeat, double min_repeat_ms, RtTiming *out) {
  if (number <= 0) number = 1;
  if (repeat <= 0) repeat = 1;
  if (time_batch(f, args, nargs, sizes, nsizes, 1, 0) < 0) return 1; /* warm-up */
  for (;;) { /* grow NUMBER until one measurement lasts MIN_REPEAT_MS */
    double ms = time_batch(f, args, nargs, sizes, nsizes, number, 0);
    if (ms < 0) return 1;
    if (ms >= min_repeat_ms || number >= (1 << 30)) break;
    double per = ms > 1e-6 ? ms / number : 1e-6;
    int want = (int)fmin(min_repeat_ms / per * 1.1 + 1, 1 << 30);
    number = want > number * 2 ? want : number * 2;
  }
  double *t = malloc(sizeof *t * (size_t)repeat);
  if (!t) {
    rt_set_error("rt_time: out of memory");
    return 1;
  }
  for (int r = 0; r < repeat; r++) {
    double ms = time_batch(f, args, nargs, sizes, nsizes, number, 0);
    if (ms < 0) {
      free(t);
      return 1;
    }
    t[r] = ms / number;
  }
  summarize(t, repeat, out);
  out->repeat = repeat;
  out->number = number;
  free(t);
  return 0;
}

int rt_time_candidate_cold(RtFunc *f, RtTensor **args, int nargs, uint64_t cold, int repeat,
                           double min_repeat_ms, double best_ms, double *costs, int max) {
  double warm = time_batch(f, args, nargs, NULL, 0, 1, cold);
  if (warm < 0) return -1;
  if (max < 1) return 0;
  if (best_ms > 0 && warm > 2 * best_ms + 1) { /* clearly worse: the warm-up is its time */
    costs[0] = warm;
    return 1;
  }
  int number = 1, n = 0;
  if (min_repeat_ms > 0 && warm < min_repeat_ms)
    number = (int)fmin(1e6, ceil(min_repeat_ms / fmax(warm, 1e-3)));
  if (best_ms > 0 && warm > 1.3 * best_ms + 0.5 && repeat > 1) repeat = 1; /* unlikely a best */
  for (int r = 0; r < repeat && n < max; r++) {
    double ms = time_batch(f, args, nargs, NULL, 0, number, cold);
    if (ms < 0) return -1;
    costs[n++] = ms / number;
  }
  return n;
}

int rt_time_candidate(RtFunc *f, RtTensor **args, int nargs, int repeat, double min_repeat_ms,
                      double best_ms, double *costs, int max) {
  return rt_time_candidate_cold(f, args, nargs, 0, repeat, min_repeat_ms, best_ms, costs, max);
}

/* ------------------------------------------------------- queries in a child */

int rt_in_child(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t n) {
  int fd[2];
  if (pipe(fd) != 0) return 1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return 1;
  }
  if (pid == 0) {
    close(fd[0]);
    fn(ctx, out);
    ssize_t w = write(fd[1], out, n);
    _exit(w == (ssize_t)n ? 0 : 1);
  }
  close(fd[1]);
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd[0], (char *)out + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd[0]);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
  return got == n ? 0 : 1;
}
