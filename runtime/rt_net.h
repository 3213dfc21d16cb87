/* rt_net.h — a whole network as plain data, run without the compiler: what a library
 * from `texc NET --emit so` holds (compiler/deploy/deploy.c writes the tables as C) and
 * rt_net.c runs. Not public: the library's own header (`--emit header`) is.
 *
 * Every tensor is f32 (or an integer input and what kernels make of it) and lives in one of five places: one of the caller's input or output
 * pointers, the weights (one block: embedded in the library, or read from a safetensors
 * file at create), the folded block (tensors computed from the weights alone, such as
 * packed filters: the first NINIT calls write them once at create), or the arena, one
 * block whose offsets the compiler planned so that tensors that are never live at the same
 * time share memory. A run is the other calls in order, with no allocation (CUDA: apart
 * from a kernel's own temps, which rt_cuda.c allocates).
 */
#ifndef RT_NET_H
#define RT_NET_H
#include <stdint.h>

#include "rt_gpu.h"
#include "rt_internal.h"

/* ORDER: where an RtNetTensor lives, and what its OFFSET means. */
enum {
  RT_NET_INPUT,  /* the caller's input pointer number OFFSET */
  RT_NET_WEIGHT, /* the weights block at byte OFFSET */
  RT_NET_VALUE,  /* the arena at byte OFFSET */
  RT_NET_OUTPUT, /* the caller's output pointer number OFFSET */
  RT_NET_FOLDED  /* the folded block at byte OFFSET: computed from the weights at create */
};

typedef struct RtNetTensor {
  const char *name; /* a weight's name in the safetensors file */
  int kind;
  int dtype_bytes;  /* 4 (f32, i32), 8 (i64: token ids) or 1 (bool) */
  int ndim;
  int64_t shape[8];
  int64_t offset;
  int64_t nbytes;
} RtNetTensor;

/* One call: function FUNC on tensors ARGS (the kernel's inputs, then its output). */
typedef struct RtNetCall {
  int func;
  int nargs;
  const int *args;
} RtNetCall;

typedef struct RtNetDesc {
  const char *name;
  RtDeviceKind device;       /* RT_CPU or RT_CUDA */
  int ntensors, ncalls, nfuncs, ninputs, noutputs;
  int ninit;                 /* CALLS[0, NINIT) run once at create (packed weights), the rest per run */
  const RtNetTensor *tensors;
  const RtNetCall *calls;
  const char *const *func_names;
  const RtPackedFn *cpu_fns; /* RT_CPU: the packed entry of each function */
  const char *ptx;           /* RT_CUDA: one module, and the plan of each function */
  const RtGpuFunc *gpu_fns;
  int64_t arena_bytes, weights_bytes, folded_bytes;
  const unsigned char *weights; /* embedded (64-byte aligned), or NULL */
  const char *weights_file;     /* else: the file create() reads by default */
} RtNetDesc;

typedef struct RtNet RtNet;
/* A context: weights in place (WEIGHTS_PATH, else the embedded ones, else DESC's file),
 * the arena allocated, the device's module loaded. NULL after rt_set_error. */
RtNet *rt_net_create(const RtNetDesc *desc, const char *weights_path);
/* One forward pass. INPUTS[i] and OUTPUTS[i] are host pointers, or (ON_DEVICE, CUDA) device
 * pointers. 0, or non-zero after rt_set_error. */
int rt_net_run(RtNet *net, const void *const *inputs, void *const *outputs, int on_device);
void rt_net_destroy(RtNet *net);
/* The one-shot call: a context created by the first call and kept in *SLOT, runs
 * serialised by a lock. */
int rt_net_oneshot(const RtNetDesc *desc, RtNet **slot, const void *const *inputs, void *const *outputs);
#endif
