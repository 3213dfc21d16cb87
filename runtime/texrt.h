/* texrt.h — texc's public runtime API: devices, tensors, modules, functions, timing.
 *
 * A module is what texc compiled: a shared library from `texc --emit so`, or a JIT /
 * GPU module built in-process. Functions take tensors (inputs in declaration order,
 * then outputs) and the values of the kernel's symbolic sizes.
 *
 *   RtModule *m = rt_module_load("matmul.so");
 *   RtFunc *f = rt_module_func(m, "matmul");
 *   RtTensor *args[3] = { a, b, c };
 *   if (rt_func_call(f, args, 3, NULL, 0)) fprintf(stderr, "%s\n", rt_last_error());
 *
 * All functions return 0 on success (or a non-NULL pointer) and set rt_last_error()
 * otherwise.
 */
#ifndef TEXRT_H
#define TEXRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { RT_CPU, RT_CUDA, RT_OPENCL } RtDeviceKind;

typedef struct RtDevice {
  RtDeviceKind kind;
  int id;
} RtDevice;

/* A dense, row-major tensor on a device. DATA is a host pointer on RT_CPU, a CUdeviceptr
 * on RT_CUDA, a cl_mem on RT_OPENCL. */
typedef struct RtTensor {
  void *data;
  RtDevice dev;
  int dtype_bytes;
  int ndim;
  int64_t shape[8];
  int64_t nbytes;
} RtTensor;

const char *rt_last_error(void);
void rt_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Devices. rt_device_exists is 0 when the driver or device is missing. */
int rt_device_exists(RtDevice dev);
const char *rt_device_name(RtDevice dev);

/* Tensors */
RtTensor *rt_tensor_alloc(RtDevice dev, int dtype_bytes, int ndim, const int64_t *shape);
void rt_tensor_free(RtTensor *t);
int rt_tensor_copy(RtTensor *dst, const RtTensor *src); /* any device to any device */
int rt_tensor_from_host(RtTensor *dst, const void *src);  /* dst->nbytes bytes */
int rt_tensor_to_host(void *dst, const RtTensor *src);

/* Modules and functions */
typedef struct RtModule RtModule;
typedef struct RtFunc RtFunc;
RtModule *rt_module_load(const char *so_path);
RtFunc *rt_module_func(RtModule *m, const char *name);
void rt_module_free(RtModule *m);
int rt_func_call(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes);

/* A sequence of calls recorded once and run again and again, as a network's forward pass:
 * call i is FNS[i] on the NARGS[i] tensors ARGS[i] (functions without symbolic sizes, all on
 * one device). On CUDA the calls are captured into one CUDA graph, replayed with no host
 * synchronisation between kernels (TEXC_CUDA_GRAPH=0: launched one by one, one sync at the
 * end); elsewhere they run in order. The tensors' DATA pointers are read when the sequence is
 * made: when they change, make a new one. rt_seq_run returns when the last call is done. */
typedef struct RtSeq RtSeq;
RtSeq *rt_seq_new(RtFunc *const *fns, RtTensor **const *args, const int *nargs, int n);
int rt_seq_run(RtSeq *s);
int rt_seq_is_graph(const RtSeq *s); /* 1 when runs replay a device graph */
void rt_seq_free(RtSeq *s);

/* Timing, as TVM's time_evaluator: each of REPEAT measurements runs the function NUMBER
 * times (NUMBER grows until a measurement lasts MIN_REPEAT_MS) after one warm-up call. On a
 * GPU the NUMBER calls are launched back to back and the device synchronised once at the
 * end of the measurement, as the kernels of a forward pass run; on CUDA the device's own
 * clock (two events around the launches) times them, so that the host's launch latency and
 * wait are not counted (the wall clock where the driver has no events). */
typedef struct RtTiming {
  double mean_ms, median_ms, stdev_ms, min_ms;
  int repeat, number;
} RtTiming;
int rt_time(RtFunc *f, RtTensor **args, int nargs, const int64_t *sizes, int nsizes,
            int number, int repeat, double min_repeat_ms, RtTiming *out);
/* The tuner's timing of one candidate (texc tune's children, texc-measure-server): the
 * first call (which also starts the thread pool) is the warm-up, and timed. A candidate
 * whose warm-up is over 2x BEST_MS (0: no best yet) is timed by its warm-up alone, one
 * over 1.3x by one measurement, others by REPEAT; each measurement runs NUMBER calls,
 * NUMBER grown until it lasts MIN_REPEAT_MS. Writes per-call milliseconds into COSTS (at
 * most MAX); returns their count, or -1 when a call failed (rt_last_error says why). */
int rt_time_candidate(RtFunc *f, RtTensor **args, int nargs, int repeat, double min_repeat_ms,
                      double best_ms, double *costs, int max);
/* The same with the host tensors of COLD (bit i: argument i < 64) evicted from the CPU's
 * caches before every timed measurement (x86 clflush, aarch64 dc civac; elsewhere nothing):
 * a network task's weights, which the rest of a forward pass evicts before the task runs
 * again (TVM's cache flush of the inputs). With MIN_REPEAT_MS, every call of a batch is
 * cold on the CPU (each evicted, only the calls timed); on a device, the first. */
int rt_time_candidate_cold(RtFunc *f, RtTensor **args, int nargs, uint64_t cold, int repeat,
                           double min_repeat_ms, double best_ms, double *costs, int max);

/* This machine, as records name it: the CPU model ("AMD EPYC 7B13"; the architecture when
 * /proc/cpuinfo has none) and its ISA ("x86_64 avx avx2 fma": the architecture and the
 * vector extensions that matter to generated code). */
const char *rt_cpu_name(void);
const char *rt_cpu_isa(void);

/* The CPU thread pool: TEX_NUM_THREADS threads (default: all cores), created once.
 * Generated code calls rt_parallel_for for `parallel` loops. */
int rt_num_threads(void);
/* TASK runs iterations [begin, end) of the loop; each thread gets one contiguous chunk. */
typedef void (*RtTask)(int64_t begin, int64_t end, void *closure);
void rt_parallel_for(int64_t n, RtTask task, void *closure);

#ifdef __cplusplus
}
#endif
/* The symbolic sizes a kernel accepts: 1 .. RT_SIZE_MAX. The compiler's bounds proofs
 * assume it; rt_func_call and every compiled CPU function refuse other values. */
#define RT_SIZE_MAX ((int64_t)1 << 40)

/* Milliseconds of the monotonic clock (for intervals): the one clock of texc and its runtime. */
double rt_now_ms(void);

#endif
