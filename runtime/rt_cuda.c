/* rt_cuda.c — CUDA devices, memory and launches through the driver API.
 *
 * libcuda.so.1 exists only where a GPU is, so it is loaded with dlopen on first use:
 * one texc binary runs everywhere and says "no CUDA device" where there is none. Each
 * device uses its primary context. A module is one CUmodule loaded from PTX; each of its
 * functions runs a plan (gpu_source.c): its temps allocated at the first call and kept (grown
 * when a call needs more), its kernels launched in order on the legacy stream, then a
 * synchronize so that a device fault is reported by the call that made it. The timing loops
 * launch without the synchronize (RtFunc.launch), and a sequence of calls (rt_seq_new: a
 * network's forward pass) is captured once into a CUDA graph on a capture stream and
 * replayed on the legacy stream, one synchronize per run.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "rt_gpu.h"

#include <stdbool.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef void *CUevent;

enum {
  ATTR_MAX_THREADS_PER_BLOCK = 1,
  ATTR_MAX_SHARED_PER_BLOCK = 8,
  ATTR_MULTIPROCESSOR_COUNT = 16,
  ATTR_L2_CACHE_SIZE = 38,
  ATTR_CC_MAJOR = 75,
  ATTR_CC_MINOR = 76,
};

/* The driver API entry points texc uses (cuda.h's signatures, versioned names). */
static struct {
  CUresult (*init)(unsigned);
  CUresult (*device_count)(int *);
  CUresult (*device_get)(CUdevice *, int);
  CUresult (*device_name)(char *, int, CUdevice);
  CUresult (*device_attr)(int *, int, CUdevice);
  CUresult (*ctx_retain)(CUcontext *, CUdevice);
  CUresult (*ctx_set)(CUcontext);
  CUresult (*ctx_sync)(void);
  CUresult (*mem_alloc)(CUdeviceptr *, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*module_load)(CUmodule *, const void *, unsigned, void *, void **);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_func)(CUfunction *, CUmodule, const char *);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, void *, void **, void **);
  CUresult (*error_string)(CUresult, const char **);
  CUresult (*memset8)(CUdeviceptr, unsigned char, size_t); /* optional: cold timing */
  /* optional: graphs of a sequence of calls (all or none) */
  CUresult (*stream_create)(CUstream *, unsigned);
  CUresult (*stream_sync)(CUstream);
  CUresult (*capture_begin)(CUstream, int);
  CUresult (*capture_end)(CUstream, CUgraph *);
  CUresult (*graph_instantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*graph_launch)(CUgraphExec, CUstream);
  CUresult (*graph_exec_destroy)(CUgraphExec);
  CUresult (*graph_destroy)(CUgraph);
  /* optional: the device's clock for timing (all or none) */
  CUresult (*event_create)(CUevent *, unsigned);
  CUresult (*event_record)(CUevent, CUstream);
  CUresult (*event_sync)(CUevent);
  CUresult (*event_elapsed)(float *, CUevent, CUevent);
} cu;

enum { STREAM_NON_BLOCKING = 1, CAPTURE_MODE_RELAXED = 2 };
static bool cu_graphs; /* the driver has every graph entry point above */
static bool cu_events; /* and every event entry point */

static int cu_state;      /* 0 untried, 1 ready, -1 unusable */
static char cu_why[256];  /* why it is unusable */
static int cu_ndev;
static CUcontext cu_ctx[16];
static char cu_names[16][256];

static const char *cu_err(CUresult rc) {
  const char *s = NULL;
  if (cu.error_string) cu.error_string(rc, &s);
  return s ? s : "unknown CUDA error";
}

static void *sym(void *h, const char *name, bool *ok) {
  void *p = dlsym(h, name);
  if (!p) *ok = false;
  return p;
}

/* Load the driver and count devices, once. 0 when at least one device is usable. */
static int cu_load(void) {
  if (cu_state) return cu_state > 0 ? 0 : 1;
  cu_state = -1;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(cu_why, sizeof cu_why, "no CUDA device: the CUDA driver (libcuda.so.1) is not installed");
    return 1;
  }
  bool ok = true;
  *(void **)&cu.init = sym(h, "cuInit", &ok);
  *(void **)&cu.device_count = sym(h, "cuDeviceGetCount", &ok);
  *(void **)&cu.device_get = sym(h, "cuDeviceGet", &ok);
  *(void **)&cu.device_name = sym(h, "cuDeviceGetName", &ok);
  *(void **)&cu.device_attr = sym(h, "cuDeviceGetAttribute", &ok);
  *(void **)&cu.ctx_retain = sym(h, "cuDevicePrimaryCtxRetain", &ok);
  *(void **)&cu.ctx_set = sym(h, "cuCtxSetCurrent", &ok);
  *(void **)&cu.ctx_sync = sym(h, "cuCtxSynchronize", &ok);
  *(void **)&cu.mem_alloc = sym(h, "cuMemAlloc_v2", &ok);
  *(void **)&cu.mem_free = sym(h, "cuMemFree_v2", &ok);
  *(void **)&cu.htod = sym(h, "cuMemcpyHtoD_v2", &ok);
  *(void **)&cu.dtoh = sym(h, "cuMemcpyDtoH_v2", &ok);
  *(void **)&cu.module_load = sym(h, "cuModuleLoadDataEx", &ok);
  *(void **)&cu.module_unload = sym(h, "cuModuleUnload", &ok);
  *(void **)&cu.module_func = sym(h, "cuModuleGetFunction", &ok);
  *(void **)&cu.launch = sym(h, "cuLaunchKernel", &ok);
  *(void **)&cu.error_string = sym(h, "cuGetErrorString", &ok);
  *(void **)&cu.memset8 = dlsym(h, "cuMemsetD8_v2");
  bool graphs = true;
  *(void **)&cu.stream_create = sym(h, "cuStreamCreate", &graphs);
  *(void **)&cu.stream_sync = sym(h, "cuStreamSynchronize", &graphs);
  *(void **)&cu.capture_begin = sym(h, "cuStreamBeginCapture_v2", &graphs);
  *(void **)&cu.capture_end = sym(h, "cuStreamEndCapture", &graphs);
  *(void **)&cu.graph_instantiate = sym(h, "cuGraphInstantiateWithFlags", &graphs);
  *(void **)&cu.graph_launch = sym(h, "cuGraphLaunch", &graphs);
  *(void **)&cu.graph_exec_destroy = sym(h, "cuGraphExecDestroy", &graphs);
  *(void **)&cu.graph_destroy = sym(h, "cuGraphDestroy", &graphs);
  cu_graphs = graphs;
  bool events = true;
  *(void **)&cu.event_create = sym(h, "cuEventCreate", &events);
  *(void **)&cu.event_record = sym(h, "cuEventRecord", &events);
  *(void **)&cu.event_sync = sym(h, "cuEventSynchronize", &events);
  *(void **)&cu.event_elapsed = dlsym(h, "cuEventElapsedTime_v2"); /* CUDA 12.8+ */
  if (!cu.event_elapsed) *(void **)&cu.event_elapsed = sym(h, "cuEventElapsedTime", &events);
  cu_events = events;
  if (!ok) {
    snprintf(cu_why, sizeof cu_why, "no CUDA device: libcuda.so.1 lacks driver API entry points");
    return 1;
  }
  CUresult rc = cu.init(0);
  if (rc == 0) rc = cu.device_count(&cu_ndev);
  if (rc != 0 || cu_ndev == 0) {
    snprintf(cu_why, sizeof cu_why, "no CUDA device: %s", rc ? cu_err(rc) : "the driver found none");
    return 1;
  }
  if (cu_ndev > 16) cu_ndev = 16;
  cu_state = 1;
  return 0;
}

/* Make device ID's primary context current; 0, or 1 after setting the error. */
static int cu_use(int id) {
  if (cu_load()) {
    rt_set_error("%s", cu_why);
    return 1;
  }
  if (id < 0 || id >= cu_ndev) {
    rt_set_error("no CUDA device %d (%d found)", id, cu_ndev);
    return 1;
  }
  CUresult rc = 0;
  if (!cu_ctx[id]) {
    CUdevice dev;
    rc = cu.device_get(&dev, id);
    if (rc == 0) rc = cu.ctx_retain(&cu_ctx[id], dev);
  }
  if (rc == 0) rc = cu.ctx_set(cu_ctx[id]);
  if (rc) rt_set_error("CUDA device %d: %s", id, cu_err(rc));
  return rc != 0;
}

/* What a device query found; plain data, so that a child process can send it. */
typedef struct QueryAnswer {
  int rc; /* 0: found */
  int cc_major, cc_minor;
  GpuLimits lim;
  char why[256];
} QueryAnswer;

static void query_here(int id, QueryAnswer *a) {
  a->rc = 1;
  if (cu_load()) {
    snprintf(a->why, sizeof a->why, "%s", cu_why);
    return;
  }
  CUdevice dev;
  if (id < 0 || id >= cu_ndev || cu.device_get(&dev, id)) {
    snprintf(a->why, sizeof a->why, "no CUDA device %d (%d found)", id, cu_ndev);
    return;
  }
  int v;
  if (cu.device_attr(&v, ATTR_CC_MAJOR, dev) == 0) a->cc_major = v;
  if (cu.device_attr(&v, ATTR_CC_MINOR, dev) == 0) a->cc_minor = v;
  if (cu.device_attr(&v, ATTR_MAX_THREADS_PER_BLOCK, dev) == 0) a->lim.max_threads_per_block = v;
  if (cu.device_attr(&v, ATTR_MAX_SHARED_PER_BLOCK, dev) == 0) a->lim.max_shared_bytes = v;
  if (cu.device_attr(&v, ATTR_MULTIPROCESSOR_COUNT, dev) == 0) a->lim.multiprocessors = v;
  a->rc = 0;
}

static void query_child(void *ctx, void *out) { query_here(*(int *)ctx, out); }

int rt_cuda_query(int id, int *cc_major, int *cc_minor, GpuLimits *lim) {
  /* A child's answer is kept: the devices do not change while this process runs, and
   * NVRTC asks for the compute capability at every compile. */
  static QueryAnswer asked[16];
  static bool have[16];
  QueryAnswer a = {.cc_major = -1, .cc_minor = -1, .lim = {-1, -1}};
  bool cacheable = id >= 0 && id < 16;
  if (cu_state) query_here(id, &a); /* this process already uses (or failed to load) CUDA */
  else if (cacheable && have[id]) a = asked[id];
  else if (rt_in_child(query_child, &id, &a, sizeof a)) /* leaves this process without CUDA */
    snprintf(a.why, sizeof a.why, "no CUDA device: the query process failed");
  else if (cacheable) asked[id] = a, have[id] = true;
  if (a.rc) {
    rt_set_error("%s", a.why);
    return 1;
  }
  if (cc_major && a.cc_major >= 0) *cc_major = a.cc_major;
  if (cc_minor && a.cc_minor >= 0) *cc_minor = a.cc_minor;
  if (lim && a.lim.max_threads_per_block > 0) lim->max_threads_per_block = a.lim.max_threads_per_block;
  if (lim && a.lim.max_shared_bytes > 0) lim->max_shared_bytes = a.lim.max_shared_bytes;
  if (lim && a.lim.multiprocessors > 0) lim->multiprocessors = a.lim.multiprocessors;
  return 0;
}

/* ----------------------------------------------------------- memory */

static int cuda_exists(int id) { return cu_load() == 0 && id >= 0 && id < cu_ndev; }

static const char *cuda_name(int id) {
  if (!cuda_exists(id)) return "none";
  if (!cu_names[id][0]) {
    CUdevice dev;
    if (cu.device_get(&dev, id) || cu.device_name(cu_names[id], 255, dev))
      snprintf(cu_names[id], sizeof cu_names[id], "cuda:%d", id);
  }
  return cu_names[id];
}

static void *cuda_alloc(int id, int64_t nbytes) {
  if (cu_use(id)) return NULL;
  CUdeviceptr p = 0;
  CUresult rc = cu.mem_alloc(&p, (size_t)(nbytes > 0 ? nbytes : 1));
  if (rc) {
    rt_set_error("CUDA: cannot allocate %lld bytes: %s", (long long)nbytes, cu_err(rc));
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

static void cuda_free(int id, void *p) {
  if (p && cu_use(id) == 0) cu.mem_free((CUdeviceptr)(uintptr_t)p);
}

static int cuda_to_device(int id, void *dst, const void *src, int64_t nbytes) {
  if (cu_use(id)) return 1;
  CUresult rc = nbytes ? cu.htod((CUdeviceptr)(uintptr_t)dst, src, (size_t)nbytes) : 0;
  if (rc) rt_set_error("CUDA: copy to device: %s", cu_err(rc));
  return rc != 0;
}

static int cuda_to_host(int id, void *dst, const void *src, int64_t nbytes) {
  if (cu_use(id)) return 1;
  CUresult rc = nbytes ? cu.dtoh(dst, (CUdeviceptr)(uintptr_t)src, (size_t)nbytes) : 0;
  if (rc) rt_set_error("CUDA: copy to host: %s", cu_err(rc));
  return rc != 0;
}

static int cuda_sync(int id) {
  if (cu_use(id)) return 1;
  CUresult rc = cu.ctx_sync();
  if (rc) rt_set_error("CUDA: %s", cu_err(rc));
  return rc != 0;
}

/* Cold timing: a scratch buffer of twice the device's L2 (H100: 2 x 50 MB; 64 MiB when
 * the driver does not say) set on the device, so that the next launch finds none of its
 * data in L2, as a kernel of a network finds its weights after the other layers ran. */
static int cuda_flush_cache(int id) {
  static CUdeviceptr scratch[16];
  static size_t bytes[16];
  if (cu_use(id)) return 1;
  if (!cu.memset8) {
    rt_set_error("CUDA: the driver has no cuMemsetD8_v2");
    return 1;
  }
  if (!scratch[id]) {
    int l2 = 0;
    CUdevice dev;
    if (cu.device_get(&dev, id) || cu.device_attr(&l2, ATTR_L2_CACHE_SIZE, dev) || l2 <= 0) l2 = 32 << 20;
    bytes[id] = 2 * (size_t)l2;
    CUresult rc = cu.mem_alloc(&scratch[id], bytes[id]);
    if (rc) {
      scratch[id] = 0;
      rt_set_error("CUDA: no scratch buffer for cold timing: %s", cu_err(rc));
      return 1;
    }
  }
  CUresult rc = cu.memset8(scratch[id], 0, bytes[id]);
  if (rc == 0) rc = cu.ctx_sync();
  if (rc) rt_set_error("CUDA: cache flush: %s", cu_err(rc));
  return rc != 0;
}


/* ---------------------------------------------------------- modules */

typedef struct CuModule {
  CUmodule mod;
  int dev;
  RtGpuFunc *plans; /* one malloc'd block */
} CuModule;

typedef struct CuFunc {
  const RtGpuFunc *plan;
  CUfunction *kernels;
  int dev;
  CUdeviceptr *ptrs;  /* a call's pointers: its tensors, then the temps */
  int64_t *temp_cap;  /* the bytes of each temp allocated so far */
} CuFunc;

/* Launch kernel I of CF on STREAM with the pointers of CF->ptrs. */
static int cu_launch(CuFunc *cf, int i, const int64_t *sizes, CUstream stream) {
  CUdeviceptr *ptrs = cf->ptrs;
  const RtGpuKernel *pk = &cf->plan->kernels[i];
  int64_t g[3], b[3];
  for (int d = 0; d < 3; d++) {
    g[d] = rt_gpu_eval(&pk->grid[d], sizes);
    b[d] = rt_gpu_eval(&pk->block[d], sizes);
    if (g[d] < 0 || b[d] < 0) {
      rt_set_error("%s: bad launch extents", pk->name);
      return 1;
    }
    if (g[d] == 0 || b[d] == 0) return 0;
  }
  if (g[0] > 2147483647 || g[1] > 65535 || g[2] > 65535) {
    rt_set_error("%s: grid %lldx%lldx%lld is larger than CUDA allows (y and z at most 65535)",
                 pk->name, (long long)g[0], (long long)g[1], (long long)g[2]);
    return 1;
  }
  void **params = calloc((size_t)pk->nargs + 1, sizeof(void *));
  for (int a = 0; a < pk->nargs; a++)
    params[a] = pk->args[a] >= 0 ? (void *)&ptrs[pk->args[a]] : (void *)&sizes[-1 - pk->args[a]];
  CUresult rc = cu.launch(cf->kernels[i], (unsigned)g[0], (unsigned)g[1], (unsigned)g[2],
                          (unsigned)b[0], (unsigned)b[1], (unsigned)b[2], 0, stream, params, NULL);
  free(params);
  if (rc) {
    rt_set_error("CUDA: launch of %s (grid %lldx%lldx%lld, block %lldx%lldx%lld): %s", pk->name,
                 (long long)g[0], (long long)g[1], (long long)g[2], (long long)b[0],
                 (long long)b[1], (long long)b[2], cu_err(rc));
    return 1;
  }
  return 0;
}

/* CF's temps at SIZES: kept from earlier calls, allocated (or grown) when they need more;
 * a temp is freed only after the device is idle, since a launched kernel may still use it.
 * 0, or 1 after rt_set_error. */
static int cu_temps(CuFunc *cf, const int64_t *sizes) {
  const RtGpuFunc *p = cf->plan;
  for (int t = 0; t < p->ntemps; t++) {
    int64_t bytes = rt_gpu_eval(&p->temp_bytes[t], sizes);
    if (bytes < 0) {
      rt_set_error("%s: an intermediate tensor's size in bytes overflows 64 bits at these sizes", p->name);
      return 1;
    }
    CUdeviceptr *m = &cf->ptrs[p->nparams + t];
    if (*m && bytes <= cf->temp_cap[t]) continue;
    if (*m) {
      cu.ctx_sync();
      cu.mem_free(*m);
    }
    *m = (CUdeviceptr)(uintptr_t)cuda_alloc(cf->dev, bytes);
    cf->temp_cap[t] = *m ? bytes : 0;
    if (!*m) return 1;
  }
  return 0;
}

/* Enqueue F's kernels on STREAM with ARGS and SIZES; nothing waits for them. */
static int cu_enqueue(RtFunc *f, RtTensor **args, const int64_t *sizes, CUstream stream) {
  CuFunc *cf = f->impl;
  const RtGpuFunc *p = cf->plan;
  if (cu_use(cf->dev) || cu_temps(cf, sizes)) return 1;
  for (int i = 0; i < p->nparams; i++) cf->ptrs[i] = (CUdeviceptr)(uintptr_t)args[i]->data;
  for (int k = 0; k < p->nkernels; k++)
    if (cu_launch(cf, k, sizes, stream)) return 1;
  return 0;
}

static int cu_launch_only(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  (void)nargs, (void)nsizes;
  return cu_enqueue(f, args, sizes, NULL);
}

static int cu_call(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  (void)nargs, (void)nsizes;
  CuFunc *cf = f->impl;
  int rc = cu_enqueue(f, args, sizes, NULL);
  CUresult src = cu_state > 0 ? cu.ctx_sync() : 0;
  if (!rc && src) {
    rt_set_error("CUDA: %s failed on the device: %s", cf->plan->name, cu_err(src));
    rc = 1;
  }
  return rc;
}

static void cu_func_destroy(RtFunc *f) {
  CuFunc *cf = f->impl;
  bool live = false;
  for (int t = 0; t < cf->plan->ntemps; t++) live |= cf->ptrs[cf->plan->nparams + t] != 0;
  if (live && cu_use(cf->dev) == 0) {
    cu.ctx_sync();
    for (int t = 0; t < cf->plan->ntemps; t++)
      if (cf->ptrs[cf->plan->nparams + t]) cu.mem_free(cf->ptrs[cf->plan->nparams + t]);
  }
  free(cf->ptrs);
  free(cf->temp_cap);
  free(cf->kernels);
  free(cf);
}

static void cu_module_destroy(RtModule *m) {
  CuModule *cm = m->impl;
  if (cm->mod && cu_use(cm->dev) == 0) cu.module_unload(cm->mod);
  free(cm->plans);
  free(cm);
}

RtModule *rt_cuda_module(const char *ptx, const RtGpuFunc *fns, int n) {
  if (cu_use(0)) return NULL;
  CUmodule mod;
  CUresult rc = cu.module_load(&mod, ptx, 0, NULL, NULL);
  if (rc) {
    rt_set_error("CUDA: the device rejected the PTX: %s", cu_err(rc));
    return NULL;
  }
  CuModule *cm = calloc(1, sizeof *cm);
  cm->mod = mod;
  cm->plans = rt_gpu_plans_copy(fns, n);
  RtModule *m = rt_module_new(cm, cu_module_destroy);
  for (int i = 0; i < n; i++) {
    CuFunc *cf = calloc(1, sizeof *cf);
    cf->plan = &cm->plans[i];
    cf->kernels = calloc((size_t)cf->plan->nkernels + 1, sizeof(CUfunction));
    cf->ptrs = calloc((size_t)(cf->plan->nparams + cf->plan->ntemps + 1), sizeof *cf->ptrs);
    cf->temp_cap = calloc((size_t)cf->plan->ntemps + 1, sizeof *cf->temp_cap);
    RtFunc *f = calloc(1, sizeof *f);
    *f = (RtFunc){.name = cf->plan->name, .device = {RT_CUDA, 0}, .nargs = cf->plan->nparams,
                  .nsizes = cf->plan->nsizes, .impl = cf, .call = cu_call, .launch = cu_launch_only,
                  .destroy = cu_func_destroy};
    rt_module_add(m, f);
    for (int k = 0; k < cf->plan->nkernels; k++) {
      rc = cu.module_func(&cf->kernels[k], mod, cf->plan->kernels[k].name);
      if (rc) {
        rt_set_error("CUDA: kernel %s: %s", cf->plan->kernels[k].name, cu_err(rc));
        rt_module_free(m);
        return NULL;
      }
    }
  }
  return m;
}

/* ----------------------------------------------------------- graphs */

typedef struct CuGraph {
  CUgraph graph;
  CUgraphExec exec;
} CuGraph;

/* Per device: the stream that captures (non-blocking: the legacy stream's other work is no
 * part of a graph), and the one that replays (blocking: ordered with the legacy stream's
 * copies of the inputs and the output). */
static CUstream capture_stream[16], run_stream[16];

static void cuda_graph_free(int id, void *p) {
  CuGraph *g = p;
  if (!g) return;
  if (cu_use(id) == 0) {
    if (g->exec) cu.graph_exec_destroy(g->exec);
    if (g->graph) cu.graph_destroy(g->graph);
  }
  free(g);
}

static void *cuda_graph_new(int id, RtFunc *const *fns, RtTensor **const *args, const int *nargs, int n) {
  (void)nargs;
  if (cu_use(id)) return NULL;
  if (!cu_graphs) {
    rt_set_error("CUDA: the driver has no graph entry points");
    return NULL;
  }
  for (int i = 0; i < n; i++) /* no allocation while the stream is captured */
    if (cu_temps(fns[i]->impl, NULL)) return NULL;
  CUresult rc = 0;
  if (!capture_stream[id]) rc = cu.stream_create(&capture_stream[id], STREAM_NON_BLOCKING);
  if (!rc && !run_stream[id]) rc = cu.stream_create(&run_stream[id], 0);
  CuGraph *g = calloc(1, sizeof *g);
  if (!rc && g) rc = cu.capture_begin(capture_stream[id], CAPTURE_MODE_RELAXED);
  if (rc || !g) {
    rt_set_error("CUDA: cannot capture a graph: %s", g ? cu_err(rc) : "out of memory");
    free(g);
    return NULL;
  }
  int bad = 0;
  for (int i = 0; i < n && !bad; i++) bad = cu_enqueue(fns[i], args[i], NULL, capture_stream[id]);
  rc = cu.capture_end(capture_stream[id], &g->graph); /* ends the capture even after an error */
  if (!bad && !rc) rc = cu.graph_instantiate(&g->exec, g->graph, 0);
  if (bad || rc) {
    if (!bad) rt_set_error("CUDA: cannot capture a graph: %s", cu_err(rc));
    cuda_graph_free(id, g);
    return NULL;
  }
  return g;
}

static int cuda_graph_run(int id, void *p) {
  CuGraph *g = p;
  if (cu_use(id)) return 1;
  CUresult rc = cu.graph_launch(g->exec, run_stream[id]);
  if (rc == 0) rc = cu.stream_sync(run_stream[id]);
  if (rc) rt_set_error("CUDA: a replay of the recorded calls failed on the device: %s", cu_err(rc));
  return rc != 0;
}

/* ----------------------------------------------------------- timing */

/* Per device: two events around the launches on the legacy stream, made at first use. */
static CUevent ev_start[16], ev_stop[16];

static int cuda_timer_start(int id) {
  if (!cu_events || cu_use(id)) return 1;
  if (!ev_stop[id]) {
    if (cu.event_create(&ev_start[id], 0) || cu.event_create(&ev_stop[id], 0)) {
      ev_start[id] = ev_stop[id] = NULL;
      cu_events = false; /* the wall clock from now on */
      return 1;
    }
  }
  return cu.event_record(ev_start[id], NULL) != 0;
}

static double cuda_timer_stop(int id) {
  float ms = -1;
  if (cu_use(id) || !ev_stop[id] || cu.event_record(ev_stop[id], NULL) || cu.event_sync(ev_stop[id]) ||
      cu.event_elapsed(&ms, ev_start[id], ev_stop[id]))
    return -1;
  return ms;
}

const RtDeviceOps rt_cuda_ops = {
    .exists = cuda_exists, .name = cuda_name, .alloc = cuda_alloc, .free = cuda_free,
    .to_device = cuda_to_device, .to_host = cuda_to_host, .sync = cuda_sync,
    .flush_cache = cuda_flush_cache, .graph_new = cuda_graph_new, .graph_run = cuda_graph_run,
    .graph_free = cuda_graph_free, .timer_start = cuda_timer_start, .timer_stop = cuda_timer_stop};
