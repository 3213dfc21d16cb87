/* target.c — the table of targets and the facts of their devices.
 *
 * Each target is one Backend row, written in its own file (llvm.c, cuda.c, opencl.c) with
 * designated initializers; this file indexes them by Target id. Passes ask the row what a
 * target allows (bind, parallel, ...) instead of testing which target it is. Device facts
 * (GPU limits, CPU vector width) come from the device when there is one, queried once and
 * cached (per target, keyed by the options that pick the device); the GPU defaults below
 * are the only copy and serve only when there is none.
 *
 * A new target: its enum value in texc.h (before TARGET_COUNT) with an extern for its row,
 * a file with the row (e.g. target/metal.c), its row in the table here and its name in
 * util.c's target_names; docs/DESIGN.md lists the rest ("Adding a backend"). The rows
 * call nothing in this file (no file cycle: scripts/depgraph.py).
 */
#include "texc.h"
#include "texrt.h"

#include <stdlib.h>
#include <string.h>

static const Backend *const backends[TARGET_COUNT] = {
    [TARGET_LLVM] = &backend_llvm,
    [TARGET_CUDA] = &backend_cuda,
    [TARGET_OPENCL] = &backend_opencl,
};

const GpuLimits gpu_default_limits = {.max_threads_per_block = 1024, .max_shared_bytes = 48 * 1024};

const Backend *backend_for(Target t) {
  if ((unsigned)t >= TARGET_COUNT) die("no target %d", (int)t);
  return backends[t];
}

/* One cached query per target, for the options that pick its device. */
enum { KEY_OPENCL_DEVICE, KEY_MCPU, KEY_MTRIPLE, NKEYS };
static struct {
  bool done;
  const char *key[NKEYS];
  DeviceInfo info;
} cache[TARGET_COUNT];

static bool same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

const DeviceInfo *target_device_info(Target t, const Options *o) {
  const Backend *be = backend_for(t);
  const char *key[NKEYS] = {o ? o->opencl_device : NULL, o ? o->mcpu : NULL, o ? o->mtriple : NULL};
  bool hit = cache[t].done;
  for (int i = 0; i < NKEYS && hit; i++) hit = same_str(cache[t].key[i], key[i]);
  if (hit) return &cache[t].info;
  DeviceInfo d = {.found = false};
  if (be->device == DEVICE_GPU) d.gpu = gpu_default_limits;
  if (be->query) {
    DeviceInfo q = d;
    if (be->query(o, &q)) d = q, d.found = true;
    d.cpu = q.cpu; /* a CPU target describes the CPU it compiles for, host or not */
  }
  cache[t].done = true;
  for (int i = 0; i < NKEYS; i++) { /* malloc'd: the cache outlives every arena */
    free((void *)cache[t].key[i]);
    cache[t].key[i] = key[i] ? strdup(key[i]) : NULL;
  }
  cache[t].info = d;
  return &cache[t].info;
}

GpuLimits gpu_limits(Target t, const Options *o) {
  if (backend_for(t)->device != DEVICE_GPU) return (GpuLimits){0, 0, 0};
  if (o && o->gpu.max_threads_per_block > 0 && o->gpu.max_shared_bytes > 0 && o->gpu.multiprocessors > 0)
    return o->gpu;
  GpuLimits lim = target_device_info(t, o)->gpu;
  if (lim.max_threads_per_block <= 0) lim.max_threads_per_block = gpu_default_limits.max_threads_per_block;
  if (lim.max_shared_bytes <= 0) lim.max_shared_bytes = gpu_default_limits.max_shared_bytes;
  if (o && o->gpu.max_threads_per_block > 0) lim.max_threads_per_block = o->gpu.max_threads_per_block;
  if (o && o->gpu.max_shared_bytes > 0) lim.max_shared_bytes = o->gpu.max_shared_bytes;
  if (o && o->gpu.multiprocessors > 0) lim.multiprocessors = o->gpu.multiprocessors;
  return lim;
}

const Options *target_cli_options;

const CpuInfo *target_cpu(const Options *o) {
  if (!o) o = target_cli_options;
  return &target_device_info(TARGET_LLVM, o)->cpu;
}

RtDevice target_device(Target t) { return (RtDevice){(RtDeviceKind)backend_for(t)->rt_device, 0}; }

_Static_assert(DT_COUNT <= 32, "Backend.atomic_add and atomic_minmax hold a bit per dtype");
_Static_assert(ARITH_SIZE_MAX == RT_SIZE_MAX, "the proofs assume the sizes the runtime accepts");
