/* rt_gpu.h — the host side of a GPU function as plain data: what the compiler's GPU back
 * ends (compiler/target/gpu_source.c) produce and rt_cuda.c / rt_opencl.c run without the
 * compiler, and the device limits that the compiler's checks read. Not public (texrt.h is). */
#ifndef RT_GPU_H
#define RT_GPU_H
#include <stdint.h>

struct RtModule;

/* What a device can run per kernel launch. */
typedef struct GpuLimits {
  int max_threads_per_block;
  int max_shared_bytes;
  int multiprocessors; /* CUDA SMs, OpenCL compute units; 0: unknown (no device) */
} GpuLimits;

/* Launch extents and temp sizes are RPN programs over the symbolic sizes: code[2i] is an
 * RPN_ op, code[2i+1] its operand. */
enum { RPN_CONST, RPN_SIZE, RPN_ADD, RPN_SUB, RPN_MUL, RPN_DIV, RPN_MOD, RPN_MIN, RPN_MAX };
typedef struct RtGpuExpr {
  int n;           /* instructions */
  int64_t *code;
} RtGpuExpr;
typedef struct RtGpuKernel {
  const char *name;
  RtGpuExpr grid[3], block[3];
  int nargs;
  int *args;       /* >= 0: tensor (params, then temps); < 0: size -1 - args[i] (as int64) */
} RtGpuKernel;
typedef struct RtGpuFunc {
  const char *name;
  int nparams, nsizes, ntemps, nkernels;
  RtGpuExpr *temp_bytes;
  RtGpuKernel *kernels;
} RtGpuFunc;
/* rt_cuda.c / rt_opencl.c: modules that run plans (deep-copied). NULL after rt_set_error. */
struct RtModule *rt_cuda_module(const char *ptx, const RtGpuFunc *fns, int n)
    __attribute__((visibility("hidden"))); /* rt_net.c refers to it weakly */
struct RtModule *rt_opencl_module(const char *src, const char *device, const RtGpuFunc *fns, int n);
int64_t rt_gpu_eval(const RtGpuExpr *e, const int64_t *sizes); /* -1 on a bad program */
RtGpuFunc *rt_gpu_plans_copy(const RtGpuFunc *fns, int n); /* malloc'd, one block */
/* Device queries: 0 when there is a device. CUDA: id; OpenCL: the device that DEVICE names
 * ("P:D", a name substring; NULL: the first), whose flat index goes to *ID. Each limit the
 * device reports is written to *LIM; the others are left as they were (the caller's defaults). */
int rt_cuda_query(int id, int *cc_major, int *cc_minor, GpuLimits *lim);
int rt_opencl_query(const char *device, int *id, GpuLimits *lim);
#endif
