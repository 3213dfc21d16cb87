/* rt_opencl.c — OpenCL devices, memory and launches through the ICD loader.
 *
 * Devices are numbered flat, platform by platform (`clinfo -l` order); a device's context
 * and in-order queue are created once, on first use. A module is one cl_program; each of
 * its functions runs a plan (codegen_c.c): per call it allocates the temps, launches the
 * kernels in order, waits, and frees the temps.
 *
 * Plan copies and the evaluation of launch extents, shared with rt_cuda.c, are in rt_gpu.c.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rt_internal.h"
#include "rt_gpu.h"

#include <stdbool.h>

/* ---------------------------------------------------------- devices */

typedef struct ClDevice {
  cl_platform_id platform;
  cl_device_id id;
  char name[256];
  cl_context ctx;
  cl_command_queue queue;
  cl_mem scratch; /* cold timing (ocl_flush_cache) */
  size_t scratch_bytes;
} ClDevice;

static ClDevice *devices;
static int ndevices = -1;

static const char *cl_err(cl_int rc) {
  switch (rc) {
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE (too many threads per block)";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
  case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case -1001: return "no OpenCL platform (is an ICD such as pocl installed?)";
  default: {
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "OpenCL error %d", (int)rc);
    return buf;
  }
  }
}

/* Enumerate every device of every platform, once. */
static int enumerate(void) {
  if (ndevices >= 0) return ndevices;
  ndevices = 0;
  cl_uint np = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0) return 0;
  cl_platform_id *ps = calloc(np, sizeof *ps);
  clGetPlatformIDs(np, ps, NULL);
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
    cl_device_id *ds = calloc(nd, sizeof *ds);
    clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, nd, ds, NULL);
    devices = realloc(devices, sizeof *devices * (size_t)(ndevices + (int)nd));
    for (cl_uint d = 0; d < nd; d++) {
      ClDevice *cd = &devices[ndevices++];
      memset(cd, 0, sizeof *cd);
      cd->platform = ps[p];
      cd->id = ds[d];
      clGetDeviceInfo(ds[d], CL_DEVICE_NAME, sizeof cd->name - 1, cd->name, NULL);
    }
    free(ds);
  }
  free(ps);
  return ndevices;
}

/* Device ID with its context and queue, or NULL after setting the error. */
static ClDevice *device(int id) {
  if (id < 0 || id >= enumerate()) {
    rt_set_error("no OpenCL device %d (%d found; `clinfo -l` lists them)", id, enumerate());
    return NULL;
  }
  ClDevice *d = &devices[id];
  if (d->queue) return d;
  cl_int rc;
  d->ctx = clCreateContext(NULL, 1, &d->id, NULL, NULL, &rc);
  if (rc != CL_SUCCESS) {
    rt_set_error("OpenCL device %s: no context: %s", d->name, cl_err(rc));
    return NULL;
  }
  d->queue = clCreateCommandQueue(d->ctx, d->id, 0, &rc);
  if (rc != CL_SUCCESS) {
    rt_set_error("OpenCL device %s: no queue: %s", d->name, cl_err(rc));
    return NULL;
  }
  return d;
}

/* The flat index of the device SPEC names: "P:D", a name substring, NULL or "" the first. */
static int pick(const char *spec) {
  int n = enumerate();
  if (n == 0) {
    rt_set_error("no OpenCL device: no platform or device found (install an ICD such as pocl)");
    return -1;
  }
  if (!spec || !*spec) return 0;
  int p, d;
  char tail;
  if (sscanf(spec, "%d:%d%c", &p, &d, &tail) == 2) {
    cl_platform_id last = NULL;
    int pi = -1, di = 0;
    for (int i = 0; i < n; i++) {
      if (devices[i].platform != last) {
        last = devices[i].platform;
        pi++;
        di = 0;
      }
      if (pi == p && di == d) return i;
      di++;
    }
    rt_set_error("no OpenCL device %s (platform:device; `clinfo -l` lists them)", spec);
    return -1;
  }
  for (int i = 0; i < n; i++)
    if (strcasestr(devices[i].name, spec)) return i;
  rt_set_error("no OpenCL device named like \"%s\" (`clinfo -l` lists them)", spec);
  return -1;
}

/* What a device query found; plain data, so that a child process can send it. */
typedef struct QueryAnswer {
  int rc; /* 0: found */
  int id;
  GpuLimits lim;
  char why[256];
} QueryAnswer;

static void query_here(const char *spec, QueryAnswer *a) {
  int i = pick(spec);
  if (i < 0) {
    a->rc = 1;
    snprintf(a->why, sizeof a->why, "%s", rt_last_error());
    return;
  }
  a->rc = 0;
  a->id = i;
  size_t wg = 0;
  cl_ulong local = 0;
  cl_uint units = 0;
  clGetDeviceInfo(devices[i].id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  clGetDeviceInfo(devices[i].id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
  clGetDeviceInfo(devices[i].id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  if (units) a->lim.multiprocessors = units > 65536 ? 65536 : (int)units;
  if (wg) a->lim.max_threads_per_block = (int)wg;
  if (local) a->lim.max_shared_bytes = (int)(local > (1u << 30) ? (1u << 30) : local);
}

static void query_child(void *ctx, void *out) { query_here(ctx, out); }

int rt_opencl_query(const char *spec, int *id, GpuLimits *lim) {
  QueryAnswer a = {.rc = 1, .lim = {-1, -1}};
  /* Until this process uses OpenCL, a child asks: PoCL's threads do not survive fork. */
  if (ndevices >= 0) query_here(spec, &a);
  else if (rt_in_child(query_child, (void *)spec, &a, sizeof a))
    snprintf(a.why, sizeof a.why, "OpenCL: the device query process failed");
  if (a.rc) {
    rt_set_error("%s", a.why);
    return 1;
  }
  if (id) *id = a.id;
  if (lim && a.lim.max_threads_per_block > 0) lim->max_threads_per_block = a.lim.max_threads_per_block;
  if (lim && a.lim.max_shared_bytes > 0) lim->max_shared_bytes = a.lim.max_shared_bytes;
  if (lim && a.lim.multiprocessors > 0) lim->multiprocessors = a.lim.multiprocessors;
  return 0;
}

/* ----------------------------------------------------------- memory */

static int ocl_exists(int id) { return id >= 0 && id < enumerate(); }

static const char *ocl_name(int id) { return ocl_exists(id) ? devices[id].name : "none"; }

static void *ocl_alloc(int id, int64_t nbytes) {
  ClDevice *d = device(id);
  if (!d) return NULL;
  cl_int rc;
  cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, (size_t)(nbytes > 0 ? nbytes : 1), NULL, &rc);
  if (rc != CL_SUCCESS) {
    rt_set_error("OpenCL: cannot allocate %lld bytes: %s", (long long)nbytes, cl_err(rc));
    return NULL;
  }
  return m;
}

static void ocl_free(int id, void *p) {
  (void)id;
  if (p) clReleaseMemObject((cl_mem)p);
}

static int ocl_to_device(int id, void *dst, const void *src, int64_t nbytes) {
  ClDevice *d = device(id);
  if (!d) return 1;
  if (nbytes == 0) return 0;
  cl_int rc = clEnqueueWriteBuffer(d->queue, (cl_mem)dst, CL_TRUE, 0, (size_t)nbytes, src, 0, NULL, NULL);
  if (rc != CL_SUCCESS) rt_set_error("OpenCL: copy to device: %s", cl_err(rc));
  return rc != CL_SUCCESS;
}

static int ocl_to_host(int id, void *dst, const void *src, int64_t nbytes) {
  ClDevice *d = device(id);
  if (!d) return 1;
  if (nbytes == 0) return 0;
  cl_int rc = clEnqueueReadBuffer(d->queue, (cl_mem)src, CL_TRUE, 0, (size_t)nbytes, dst, 0, NULL, NULL);
  if (rc != CL_SUCCESS) rt_set_error("OpenCL: copy to host: %s", cl_err(rc));
  return rc != CL_SUCCESS;
}

static int ocl_sync(int id) {
  ClDevice *d = device(id);
  if (!d) return 1;
  cl_int rc = clFinish(d->queue);
  if (rc != CL_SUCCESS) rt_set_error("OpenCL: %s", cl_err(rc));
  return rc != CL_SUCCESS;
}

/* Cold timing: a scratch buffer of twice the device's global memory cache (64 MiB when it
 * does not say; at least 8 MiB) filled on the device (PoCL: by the CPU, through its
 * caches), so that the next kernel finds none of its data in that cache. */
static int ocl_flush_cache(int id) {
  ClDevice *d = device(id);
  if (!d) return 1;
  cl_int rc = CL_SUCCESS;
  if (!d->scratch) {
    cl_ulong cache = 0;
    if (clGetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache, &cache, NULL) != CL_SUCCESS ||
        cache == 0)
      cache = 32 << 20;
    d->scratch_bytes = (size_t)(2 * cache < (8 << 20) ? (8 << 20) : 2 * cache);
    d->scratch = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, d->scratch_bytes, NULL, &rc);
    if (rc != CL_SUCCESS) {
      d->scratch = NULL;
      rt_set_error("OpenCL: no scratch buffer for cold timing: %s", cl_err(rc));
      return 1;
    }
  }
  cl_uint zero = 0;
  rc = clEnqueueFillBuffer(d->queue, d->scratch, &zero, sizeof zero, 0, d->scratch_bytes, 0, NULL, NULL);
  if (rc == CL_SUCCESS) rc = clFinish(d->queue);
  if (rc != CL_SUCCESS) rt_set_error("OpenCL: cache flush: %s", cl_err(rc));
  return rc != CL_SUCCESS;
}

const RtDeviceOps rt_opencl_ops = {
    .exists = ocl_exists, .name = ocl_name, .alloc = ocl_alloc, .free = ocl_free,
    .to_device = ocl_to_device, .to_host = ocl_to_host, .sync = ocl_sync,
    .flush_cache = ocl_flush_cache};

/* ---------------------------------------------------------- modules */

typedef struct ClModule {
  cl_program prog;
  RtGpuFunc *plans; /* one malloc'd block */
} ClModule;

typedef struct ClFunc {
  const RtGpuFunc *plan;
  cl_kernel *kernels;
  ClDevice *dev;
} ClFunc;

/* Set kernel K's arguments from MEMS (tensors, then temps) and SIZES. */
static cl_int set_args(cl_kernel k, const RtGpuKernel *pk, cl_mem *mems, const int64_t *sizes) {
  for (int a = 0; a < pk->nargs; a++) {
    cl_int rc;
    if (pk->args[a] >= 0) {
      rc = clSetKernelArg(k, (cl_uint)a, sizeof(cl_mem), &mems[pk->args[a]]);
    } else {
      cl_long v = sizes[-1 - pk->args[a]];
      rc = clSetKernelArg(k, (cl_uint)a, sizeof v, &v);
    }
    if (rc != CL_SUCCESS) return rc;
  }
  return CL_SUCCESS;
}

/* Launch kernel I of F; 0, or 1 after setting the error. */
static int launch(ClFunc *cf, int i, cl_mem *mems, const int64_t *sizes) {
  const RtGpuKernel *pk = &cf->plan->kernels[i];
  size_t global[3], local[3];
  for (int d = 0; d < 3; d++) {
    int64_t g = rt_gpu_eval(&pk->grid[d], sizes), b = rt_gpu_eval(&pk->block[d], sizes);
    if (g < 0 || b < 0) {
      rt_set_error("%s: bad launch extents", pk->name);
      return 1;
    }
    if (g == 0 || b == 0) return 0; /* nothing to do */
    local[d] = (size_t)b;
    global[d] = (size_t)(g * b);
  }
  cl_int rc = set_args(cf->kernels[i], pk, mems, sizes);
  if (rc == CL_SUCCESS)
    rc = clEnqueueNDRangeKernel(cf->dev->queue, cf->kernels[i], 3, NULL, global, local, 0, NULL, NULL);
  if (rc != CL_SUCCESS) {
    rt_set_error("OpenCL: launch of %s (grid %zux%zux%zu, block %zux%zux%zu): %s", pk->name,
                 global[0] / local[0], global[1] / local[1], global[2] / local[2], local[0],
                 local[1], local[2], cl_err(rc));
    return 1;
  }
  return 0;
}

static int ocl_call(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes) {
  ClFunc *cf = f->impl;
  const RtGpuFunc *p = cf->plan;
  cl_mem *mems = calloc((size_t)(p->nparams + p->ntemps + 1), sizeof *mems);
  int rc = 0;
  for (int i = 0; i < p->nparams; i++) mems[i] = (cl_mem)args[i]->data;
  for (int t = 0; t < p->ntemps && !rc; t++) {
    int64_t bytes = rt_gpu_eval(&p->temp_bytes[t], sizes);
    if (bytes < 0)
      rt_set_error("%s: an intermediate tensor's size in bytes overflows 64 bits at these sizes", p->name);
    mems[p->nparams + t] = bytes < 0 ? NULL : ocl_alloc((int)(cf->dev - devices), bytes);
    if (!mems[p->nparams + t]) rc = 1;
  }
  for (int k = 0; k < p->nkernels && !rc; k++) rc = launch(cf, k, mems, sizes);
  cl_int frc = clFinish(cf->dev->queue);
  if (!rc && frc != CL_SUCCESS) {
    rt_set_error("OpenCL: %s failed on the device: %s", p->name, cl_err(frc));
    rc = 1;
  }
  for (int t = 0; t < p->ntemps; t++) ocl_free(0, mems[p->nparams + t]);
  free(mems);
  return rc;
}

static void ocl_func_destroy(RtFunc *f) {
  ClFunc *cf = f->impl;
  for (int k = 0; k < cf->plan->nkernels; k++)
    if (cf->kernels[k]) clReleaseKernel(cf->kernels[k]);
  free(cf->kernels);
  free(cf);
}

static void ocl_module_destroy(RtModule *m) {
  ClModule *cm = m->impl;
  if (cm->prog) clReleaseProgram(cm->prog);
  free(cm->plans);
  free(cm);
}

/* Build SRC for D; NULL after setting the error with the build log. */
static cl_program build_program(ClDevice *d, const char *src) {
  cl_int rc;
  cl_program prog = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &rc);
  if (rc != CL_SUCCESS) {
    rt_set_error("OpenCL: %s", cl_err(rc));
    return NULL;
  }
  rc = clBuildProgram(prog, 1, &d->id, "", NULL, NULL);
  if (rc == CL_SUCCESS) return prog;
  size_t n = 0;
  clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
  char *log = calloc(n + 1, 1);
  clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, n, log, NULL);
  rt_set_error("OpenCL program build failed on %s (%s):\n%.900s", d->name, cl_err(rc), log);
  free(log);
  clReleaseProgram(prog);
  return NULL;
}

/* One RtFunc for PLAN, its kernels created from PROG; NULL after setting the error. */
static RtFunc *make_func(ClDevice *d, int id, cl_program prog, const RtGpuFunc *plan) {
  ClFunc *cf = calloc(1, sizeof *cf);
  cf->plan = plan;
  cf->dev = d;
  cf->kernels = calloc((size_t)plan->nkernels + 1, sizeof(cl_kernel));
  RtFunc *f = calloc(1, sizeof *f);
  *f = (RtFunc){.name = plan->name, .device = {RT_OPENCL, id}, .nargs = plan->nparams,
                .nsizes = plan->nsizes, .impl = cf, .call = ocl_call, .destroy = ocl_func_destroy};
  for (int k = 0; k < plan->nkernels; k++) {
    cl_int rc;
    cf->kernels[k] = clCreateKernel(prog, plan->kernels[k].name, &rc);
    if (rc != CL_SUCCESS) {
      rt_set_error("OpenCL: kernel %s: %s", plan->kernels[k].name, cl_err(rc));
      ocl_func_destroy(f);
      free(f);
      return NULL;
    }
  }
  return f;
}

RtModule *rt_opencl_module(const char *src, const char *spec, const RtGpuFunc *fns, int n) {
  int id;
  if (rt_opencl_query(spec, &id, NULL)) return NULL;
  ClDevice *d = device(id);
  if (!d) return NULL;
  cl_program prog = build_program(d, src);
  if (!prog) return NULL;
  ClModule *cm = calloc(1, sizeof *cm);
  cm->prog = prog;
  cm->plans = rt_gpu_plans_copy(fns, n);
  RtModule *m = rt_module_new(cm, ocl_module_destroy);
  for (int i = 0; i < n; i++) {
    RtFunc *f = make_func(d, id, prog, &cm->plans[i]);
    if (!f) {
      rt_module_free(m);
      return NULL;
    }
    rt_module_add(m, f);
  }
  return m;
}
