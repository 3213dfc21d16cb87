/* test_target.c — the table of targets (compiler/target/target.c): every row complete and
 * consistent with its device kind, names that round-trip, the schedule steps a row allows
 * being the ones the scheduler accepts, and GPU limits that come from the device or, when
 * there is none, from the one copy of the defaults. */
#include "unit.h"

#include <string.h>

#include "texrt.h"

static const char *vadd = "const N = 256\n"
                          "kernel vadd(A: f32[N], B: f32[N]) -> C: f32[N] {\n"
                          "  C[i] = A[i] + B[i]\n}\n";

static bool same_limits(GpuLimits a, GpuLimits b) {
  return a.max_threads_per_block == b.max_threads_per_block && a.max_shared_bytes == b.max_shared_bytes &&
         a.multiprocessors == b.multiprocessors;
}

static void test_rows(void) {
  for (int t = 0; t < TARGET_COUNT; t++) {
    const Backend *be = backend_for((Target)t);
    const char *n = target_names[t];
    check(xprintf("%s: row's id and name", n), be && be->id == (Target)t && be->name && !strcmp(be->name, n));
    check(xprintf("%s: emit, build, query and a default emit kind", n),
          be->emit && be->build && be->query && be->default_emit && be->default_emit[0]);
    bool gpu = be->device == DEVICE_GPU;
    check(xprintf("%s: device kind is CPU or GPU", n), gpu || be->device == DEVICE_CPU);
    if (gpu) {
      check(xprintf("%s: a GPU target has a default schedule and a check", n), be->default_steps && be->check);
      check(xprintf("%s: a GPU target binds, has kernel scopes, runs no CPU threads", n),
            be->allows_bind && be->kernel_scopes && !be->allows_parallel);
      check(xprintf("%s: runs on a GPU runtime device", n), be->rt_device == RT_CUDA || be->rt_device == RT_OPENCL);
      check(xprintf("%s: atomic add and max/min on i32 and u32 at least", n),
            (be->atomic_add & be->atomic_minmax & (1u << DT_I32 | 1u << DT_U32)) == (1u << DT_I32 | 1u << DT_U32));
    } else {
      check(xprintf("%s: a CPU target has no GPU limits", n),
            same_limits(gpu_limits((Target)t, NULL), (GpuLimits){0, 0, 0}));
      check(xprintf("%s: a CPU target runs on the CPU runtime device", n), be->rt_device == RT_CPU);
      check(xprintf("%s: a CPU target lists no GPU atomics", n), !be->atomic_add && !be->atomic_minmax);
    }
    for (int u = 0; u < t; u++)
      check(xprintf("%s: a name distinct from %s's", n, target_names[u]),
            strcmp(backend_for((Target)u)->name, n) != 0);
  }
}

/* Name -> id -> row -> name, as --target and `for cuda, opencl` parse it. */
static void test_names(void) {
  for (int t = 0; t < TARGET_COUNT; t++) {
    int j = 0;
    while (j < TARGET_COUNT && strcmp(target_names[j], backend_for((Target)t)->name)) j++;
    check(xprintf("%s: the name round-trips to its id", target_names[t]), j == t);
  }
}

/* bind and parallel are accepted exactly where the row says. */
static void test_legality(void) {
  Kernel *k = unit_kernel(vadd, "vadd");
  check("the test kernel checks", k != NULL);
  if (!k) return;
  diag_silent = true;
  for (int t = 0; t < TARGET_COUNT; t++) {
    const Backend *be = backend_for((Target)t);
    diag_reset();
    Schedule *s = sched_new(k, (Target)t);
    bool bind = unit_apply(s, "o, i = split(C.i, 64)\nbind(o, blockIdx.x)\nbind(i, threadIdx.x)\n");
    check(xprintf("%s: bind accepted iff the row allows it", be->name), bind == be->allows_bind);
    s = sched_new(k, (Target)t);
    bool par = unit_apply(s, "o, i = split(C.i, 64)\nparallel(o)\n");
    check(xprintf("%s: parallel accepted iff the row allows it", be->name), par == be->allows_parallel);
    s = sched_new(k, (Target)t);
    bool vec = unit_apply(s, "o, i = split(C.i, 8)\nvectorize(i)\n");
    check(xprintf("%s: vectorize accepted iff the row allows it", be->name), vec == be->allows_vectorize);
    if (be->default_steps) {
      Vec steps = {0};
      bool ok = be->default_steps(k, (Target)t, &steps);
      s = ok ? sched_build(k, (Target)t, &steps) : NULL;
      GpuLimits lim = gpu_limits((Target)t, NULL);
      LoweredFunc *f = s ? sched_lower(s, NULL) : NULL;
      check(xprintf("%s: the default schedule lowers and passes the check", be->name),
            f && (!be->check || be->check(f, &lim)));
    }
  }
  diag_silent = false;
}

/* GPU limits: the device's when there is one, else gpu_default_limits; Options.gpu
 * overrides each field that is not 0; the query runs once per device. */
static void test_limits(void) {
  check("defaults: positive", gpu_default_limits.max_threads_per_block > 0 && gpu_default_limits.max_shared_bytes > 0);
  for (int t = 0; t < TARGET_COUNT; t++) {
    const Backend *be = backend_for((Target)t);
    if (be->device != DEVICE_GPU) continue;
    Options o = {.target = (Target)t};
    const DeviceInfo *d = target_device_info((Target)t, &o);
    check(xprintf("%s: cached (one query)", be->name), d == target_device_info((Target)t, &o));
    GpuLimits lim = gpu_limits((Target)t, &o);
    check(xprintf("%s: zero options give the device's limits", be->name), same_limits(lim, d->gpu));
    if (!d->found)
      check(xprintf("%s: no device: the defaults", be->name), same_limits(lim, gpu_default_limits));
    else
      check(xprintf("%s: a device: its limits are positive", be->name),
            lim.max_threads_per_block > 0 && lim.max_shared_bytes > 0);
    o.gpu.max_threads_per_block = 77;
    lim = gpu_limits((Target)t, &o);
    check(xprintf("%s: one override replaces one field", be->name),
          lim.max_threads_per_block == 77 && lim.max_shared_bytes == d->gpu.max_shared_bytes);
    o.gpu = (GpuLimits){33, 99, 5};
    check(xprintf("%s: both overrides", be->name), same_limits(gpu_limits((Target)t, &o), o.gpu));
  }
  /* The runtime's own queries agree: the limits are the device's, not a copy. */
  GpuLimits q = {0, 0, 0};
  int id;
  if (rt_opencl_query(NULL, &id, &q) == 0)
    check("opencl: the limits are the runtime query's", same_limits(gpu_limits(TARGET_OPENCL, NULL), q));
  q = (GpuLimits){0, 0, 0};
  if (rt_cuda_query(0, NULL, NULL, &q) == 0)
    check("cuda: the limits are the runtime query's", same_limits(gpu_limits(TARGET_CUDA, NULL), q));
  /* The host CPU: LLVM's features give its widest vector register. */
#if defined(__x86_64__) || defined(__aarch64__)
  const DeviceInfo *cpu = target_device_info(TARGET_LLVM, &(Options){.target = TARGET_LLVM});
  check("llvm: the host CPU is found, with a vector width of at least 128 bits", cpu->found && cpu->vector_bits >= 128);
  cpu = target_device_info(TARGET_LLVM, &(Options){.target = TARGET_LLVM, .mcpu = "generic"});
  check("llvm: --mcpu names another CPU: not the host's facts", !cpu->found && cpu->vector_bits == 0);
#endif
  /* A device spec that names nothing: no device, the defaults (and a fresh query). */
  Options o = {.target = TARGET_OPENCL, .opencl_device = "no-such-device-texc-test"};
  const DeviceInfo *d = target_device_info(TARGET_OPENCL, &o);
  check("opencl: an unknown device: not found, the defaults",
        !d->found && same_limits(d->gpu, gpu_default_limits));
}

/* The machine description: micro-kernels derived from lanes and registers, cross CPUs by
 * --mcpu/--mtriple, the host's facts from LLVM and sysfs. */
static void test_cpu(void) {
  struct {
    int lanes, vregs, mr, nr;
    const char *what;
  } mk[] = {{8, 16, 6, 16, "AVX2: 6 x 16 (12 ymm accumulators)"},
            {16, 32, 14, 32, "AVX-512: 14 x 32 (28 zmm accumulators)"},
            {4, 32, 8, 12, "NEON: 8 x 12 (24 q accumulators)"},
            {4, 16, 4, 12, "SSE2: 4 x 12"}};
  for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++) {
    CpuInfo c = {.lanes = mk[i].lanes, .vregs = mk[i].vregs};
    cpu_describe(&c);
    check(xprintf("micro-kernel %s, got %d x %d", mk[i].what, c.mr, c.nr), c.mr == mk[i].mr && c.nr == mk[i].nr);
    int nv = c.nr / c.lanes;
    check(xprintf("micro-kernel %s fits the registers", mk[i].what),
          c.mr * nv + nv + (c.mr + c.lanes - 1) / c.lanes <= c.vregs);
  }
  struct {
    const char *triple, *mcpu;
    int lanes, vregs;
  } x[] = {{"x86_64-linux-gnu", "haswell", 8, 16},    {"x86_64-linux-gnu", "skylake-avx512", 16, 32},
           {"x86_64-linux-gnu", "znver3", 8, 16},     {"x86_64-linux-gnu", "x86-64", 4, 16},
           {"aarch64-linux-gnu", NULL, 4, 32},        {"x86_64-linux-gnu", "znver4", 16, 32}};
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) {
    const CpuInfo *c = target_cpu(&(Options){.target = TARGET_LLVM, .mtriple = x[i].triple, .mcpu = x[i].mcpu});
    check(xprintf("target_cpu %s %s: %d lanes x %d registers, got %d x %d", x[i].triple,
                  x[i].mcpu ? x[i].mcpu : "", x[i].lanes, x[i].vregs, c->lanes, c->vregs),
          c->lanes == x[i].lanes && c->vregs == x[i].vregs && c->mr > 0 && c->nr % c->lanes == 0);
  }
#if defined(__x86_64__) || defined(__aarch64__)
  const CpuInfo *h = target_cpu(&(Options){.target = TARGET_LLVM});
  check("target_cpu of the host: lanes, registers, caches and cores",
        h->lanes >= 4 && h->vregs >= 16 && h->l1d > 0 && h->l2 > h->l1d && h->cores >= 1 &&
            !strcmp(h->source, "host"));
#endif
}

int main(void) {
  test_cpu();
  test_rows();
  test_names();
  test_legality();
  test_limits();
  return failures ? 1 : 0;
}
