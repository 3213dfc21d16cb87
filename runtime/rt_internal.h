/* rt_internal.h — how device back ends plug into the runtime (not public). */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H
#include "texrt.h"

#include <stddef.h>

/* A function of a module. CALL receives the tensors and sizes as rt_func_call got them,
 * after the runtime checked that there are NARGS tensors, all on DEVICE, and NSIZES sizes. */
struct RtFunc {
  const char *name;
  RtDevice device;
  int nargs, nsizes;
  void *impl;
  int (*call)(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes);
  /* Optional (CUDA): CALL without waiting for the device, whose next sync reports a fault;
   * the timing loops and sequences (rt_seq_run) use it. */
  int (*launch)(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes);
  void (*destroy)(RtFunc *f);
};

struct RtModule {
  RtFunc **funcs;
  int nfuncs;
  void *impl;
  void (*destroy)(RtModule *m); /* frees IMPL; the runtime frees the funcs */
};

/* Host memory for tensors and arenas (free with free): 64-byte aligned; with
 * TEXC_HUGEPAGES=1 large blocks on 2 MiB huge pages where the kernel gives them (rt.c). */
void *rt_host_alloc(size_t bytes);

RtModule *rt_module_new(void *impl, void (*destroy)(RtModule *m));
void rt_module_add(RtModule *m, RtFunc *f); /* takes ownership of F (malloc'd) */

/* Device memory back ends (rt_cuda.c, rt_opencl.c) provide these per kind. */
typedef struct RtDeviceOps {
  int (*exists)(int id);
  const char *(*name)(int id);
  void *(*alloc)(int id, int64_t nbytes);
  void (*free)(int id, void *p);
  int (*to_device)(int id, void *dst, const void *src, int64_t nbytes);
  int (*to_host)(int id, void *dst, const void *src, int64_t nbytes);
  int (*sync)(int id);
  /* Evict the device's caches (L2) before a cold measurement: a scratch buffer twice
   * their size written on the device, then a sync. 0 on success. */
  int (*flush_cache)(int id);
  /* Optional (CUDA): N calls (FNS[i] on ARGS[i], no sizes) recorded once into a graph that
   * GRAPH_RUN replays with one synchronisation at its end. NULL after rt_set_error. */
  void *(*graph_new)(int id, RtFunc *const *fns, RtTensor **const *args, const int *nargs, int n);
  int (*graph_run)(int id, void *graph);
  void (*graph_free)(int id, void *graph);
  /* Optional (CUDA): the device's own clock over the work launched between TIMER_START and
   * TIMER_STOP (events on the launches' stream). TIMER_STOP waits for that work and returns
   * milliseconds, or a negative number when the device cannot say. */
  int (*timer_start)(int id);
  double (*timer_stop)(int id);
} RtDeviceOps;
/* Hidden: a library that links no GPU code keeps its weak references to them inside
 * (resolved to NULL at link time), not as dynamic symbols a program could bind. */
extern const RtDeviceOps rt_cuda_ops __attribute__((visibility("hidden")));
extern const RtDeviceOps rt_opencl_ops __attribute__((visibility("hidden")));

/* The packed entry point every CPU kernel also exports as `__texc_packed_NAME`:
 * ARGS[i] points to the i-th tensor's data, SIZES to the symbolic sizes. */
typedef int (*RtPackedFn)(void **args, const int64_t *sizes);
RtFunc *rt_cpu_func(const char *name, RtPackedFn fn, int nargs, int nsizes);
/* Run FN(CTX, OUT) in a forked child and copy its N bytes of OUT back: 0 on success.
 * Device queries use it while this process has no device state, because CUDA contexts and
 * PoCL's threads do not survive fork and the tuner forks its measurement children after
 * asking for a device's limits. OUT must be plain data. */
int rt_in_child(void (*fn)(void *ctx, void *out), void *ctx, void *out, size_t n);
#endif
