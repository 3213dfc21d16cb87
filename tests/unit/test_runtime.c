/* test_runtime.c — the CPU runtime: errors, tensors, modules and calls, timing, the pool. */
#include "rt_internal.h"
#include "texrt.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char *name) {
  printf("%s - %s\n", ok ? "ok" : "not ok", name);
  if (!ok) failures++;
}

static const RtDevice cpu = {RT_CPU, 0};

static void test_tensors(void) {
  int64_t shape[3] = {3, 5, 7};
  RtTensor *a = rt_tensor_alloc(cpu, 4, 3, shape), *b = rt_tensor_alloc(cpu, 4, 3, shape);
  check(a && b && a->nbytes == 3 * 5 * 7 * 4 && ((uintptr_t)a->data % 64) == 0, "tensor alloc: size, 64-byte alignment");
  float host[105], back[105];
  for (int i = 0; i < 105; i++) host[i] = (float)i;
  check(rt_tensor_from_host(a, host) == 0 && rt_tensor_copy(b, a) == 0 && rt_tensor_to_host(back, b) == 0 &&
            memcmp(host, back, sizeof host) == 0,
        "tensor from_host, copy, to_host");
  int64_t other = 4;
  RtTensor *c = rt_tensor_alloc(cpu, 4, 1, &other);
  check(rt_tensor_copy(c, a) != 0 && strstr(rt_last_error(), "sizes differ"), "copy of different sizes fails");
  int64_t neg = -2;
  check(rt_tensor_alloc(cpu, 4, 1, &neg) == NULL && *rt_last_error(), "negative extent refused");
  rt_tensor_free(a), rt_tensor_free(b), rt_tensor_free(c);
  check(rt_device_exists(cpu) && !strcmp(rt_device_name(cpu), "cpu"), "cpu device exists");
}

/* A packed kernel: out[i] = in[i] * sizes[0]. */
static int scale(void **args, const int64_t *sizes) {
  const float *in = args[0];
  float *out = args[1];
  if (sizes[0] < 0) return 1;
  for (int i = 0; i < 16; i++) out[i] = in[i] * (float)sizes[0];
  return 0;
}

static void test_calls(void) {
  RtModule *m = rt_module_new(NULL, NULL);
  rt_module_add(m, rt_cpu_func("scale", scale, 2, 1));
  RtFunc *f = rt_module_func(m, "scale");
  check(f && rt_module_func(m, "nope") == NULL, "rt_module_func by name");
  int64_t n = 16;
  RtTensor *x = rt_tensor_alloc(cpu, 4, 1, &n), *y = rt_tensor_alloc(cpu, 4, 1, &n);
  for (int i = 0; i < 16; i++) ((float *)x->data)[i] = (float)i;
  RtTensor *args[2] = {x, y};
  int64_t k = 3;
  check(rt_func_call(f, args, 2, &k, 1) == 0 && ((float *)y->data)[5] == 15.0f, "rt_func_call runs the packed entry");
  check(rt_func_call(f, args, 1, &k, 1) != 0 && strstr(rt_last_error(), "takes 2 tensors"), "wrong tensor count refused");
  check(rt_func_call(f, args, 2, NULL, 0) != 0, "wrong size count refused");
  k = -1;
  check(rt_func_call(f, args, 2, &k, 1) != 0, "a kernel's failure is reported");
  RtTensor fake = *y;
  fake.dev = (RtDevice){RT_CUDA, 0};
  RtTensor *bad[2] = {x, &fake};
  k = 1;
  check(rt_func_call(f, bad, 2, &k, 1) != 0 && strstr(rt_last_error(), "cuda"), "tensor on another device refused");
  RtTiming t;
  check(rt_time(f, args, 2, &k, 1, 1, 5, 2.0, &t) == 0 && t.repeat == 5 && t.number >= 1 && t.min_ms <= t.median_ms &&
            t.min_ms <= t.mean_ms && t.stdev_ms >= 0,
        "rt_time statistics");
  rt_tensor_free(x), rt_tensor_free(y);
  rt_module_free(m);
  check(rt_module_load("/nonexistent/lib.so") == NULL && strstr(rt_last_error(), "cannot load"), "rt_module_load error");
  check(rt_module_load("libm.so.6") == NULL, "rt_module_load refuses a library without __texc_kernels");
}

/* A packed kernel without sizes: out[i] = 2 in[i] over 3 MiB (huge-page backed). */
#define BIG (3 << 18)
static int twice(void **args, const int64_t *sizes) {
  (void)sizes;
  const float *in = args[0];
  float *out = args[1];
  for (int i = 0; i < BIG; i++) out[i] = 2 * in[i];
  return 0;
}

/* Timing with cold arguments evicts them from the caches (clflush): their data is intact,
 * the kernel's result right, every repeat timed. */
static void test_cold_timing(void) {
  RtModule *m = rt_module_new(NULL, NULL);
  rt_module_add(m, rt_cpu_func("twice", twice, 2, 0));
  RtFunc *f = rt_module_func(m, "twice");
  int64_t n = BIG;
  setenv("TEXC_HUGEPAGES", "1", 1);
  RtTensor *x = rt_tensor_alloc(cpu, 4, 1, &n), *y = rt_tensor_alloc(cpu, 4, 1, &n);
  unsetenv("TEXC_HUGEPAGES");
  check(x && y && ((uintptr_t)x->data & ((2u << 20) - 1)) == 0,
        "TEXC_HUGEPAGES=1: a 3 MiB tensor is 2 MiB-aligned (huge pages)");
  if (!x || !y) return;
  for (int i = 0; i < BIG; i++) ((float *)x->data)[i] = (float)(i % 1000);
  RtTensor *args[2] = {x, y};
  double costs[8];
  int nc = rt_time_candidate_cold(f, args, 2, 1 /* x */, 3, 0, 0, costs, 8);
  bool same = true;
  for (int i = 0; i < BIG; i++)
    same &= ((float *)x->data)[i] == (float)(i % 1000) && ((float *)y->data)[i] == 2.0f * (float)(i % 1000);
  check(nc == 3 && costs[0] > 0 && same, "cold timing: 3 costs, data and result intact");
  check(rt_time_candidate_cold(f, args, 2, ~0ull, 2, 1.0, 0, costs, 8) == 2, "cold timing: every argument, batched");
  rt_tensor_free(x), rt_tensor_free(y);
  rt_module_free(m);
}

/* The OpenCL device's cache flush (cold timing of GPU tasks): a device tensor survives
 * it, twice (the scratch buffer made once); skipped without an OpenCL device. */
static void test_device_flush(void) {
  if (!rt_opencl_ops.exists || !rt_opencl_ops.exists(0)) {
    printf("ok - device cache flush # SKIP no OpenCL device\n");
    return;
  }
  RtDevice cl = {RT_OPENCL, 0};
  int64_t n = 4096;
  RtTensor *t = rt_tensor_alloc(cl, 4, 1, &n);
  float *host = malloc(4096 * sizeof *host), *back = malloc(4096 * sizeof *back);
  for (int i = 0; i < 4096; i++) host[i] = (float)i * 0.5f;
  bool ok = t && host && back && rt_tensor_from_host(t, host) == 0;
  ok = ok && rt_opencl_ops.flush_cache(0) == 0 && rt_opencl_ops.flush_cache(0) == 0;
  ok = ok && rt_tensor_to_host(back, t) == 0 && memcmp(host, back, 4096 * sizeof *host) == 0;
  check(ok, "device cache flush (OpenCL): twice, a device tensor intact");
  if (t) rt_tensor_free(t);
  free(host), free(back);
}

/* A packed kernel that fails: a sequence stops at it and says why. */
static int refuse(void **args, const int64_t *sizes) {
  (void)args, (void)sizes;
  rt_set_error("refuse: refused");
  return 1;
}

/* A sequence (a network's forward pass): the calls in order, each run again by every
 * rt_seq_run; the caller's arrays copied; a bad call refused when it is made, a failing one
 * reported by the run. (On CUDA the same sequence is one graph: bench/gpu.sh.) */
static void test_seq(void) {
  RtModule *m = rt_module_new(NULL, NULL);
  rt_module_add(m, rt_cpu_func("twice", twice, 2, 0));
  rt_module_add(m, rt_cpu_func("refuse", refuse, 2, 0));
  RtFunc *f = rt_module_func(m, "twice"), *bad = rt_module_func(m, "refuse");
  int64_t n = BIG;
  RtTensor *x = rt_tensor_alloc(cpu, 4, 1, &n), *y = rt_tensor_alloc(cpu, 4, 1, &n), *z = rt_tensor_alloc(cpu, 4, 1, &n);
  if (!x || !y || !z) return;
  for (int i = 0; i < BIG; i++) ((float *)x->data)[i] = (float)(i % 100);
  RtTensor *a0[2] = {x, y}, *a1[2] = {y, z};
  RtTensor **args[2] = {a0, a1};
  RtFunc *fns[2] = {f, f};
  int nargs[2] = {2, 2};
  RtSeq *s = rt_seq_new(fns, args, nargs, 2);
  a0[1] = z, fns[1] = bad; /* the sequence keeps its own copies */
  bool ok = s && !rt_seq_is_graph(s) && rt_seq_run(s) == 0;
  for (int i = 0; ok && i < BIG; i++) ok = ((float *)z->data)[i] == 4.0f * (float)(i % 100);
  for (int i = 0; i < BIG; i++) ((float *)x->data)[i] = 1;
  ok = ok && rt_seq_run(s) == 0 && ((float *)z->data)[BIG - 1] == 4.0f;
  check(ok, "sequence: two calls in order, run twice, the caller's arrays copied");
  rt_seq_free(s);
  nargs[1] = 3;
  check(!rt_seq_new(fns, args, nargs, 2) && strstr(rt_last_error(), "takes 2 tensors"),
        "sequence: a call with the wrong tensors refused when made");
  nargs[1] = 2;
  s = rt_seq_new(fns, args, nargs, 2);
  check(s && rt_seq_run(s) != 0 && strncmp(rt_last_error(), "refuse: ", 8) == 0,
        "sequence: a failing call stops the run with its error");
  rt_seq_free(s);
  s = rt_seq_new(NULL, NULL, NULL, 0);
  check(s && rt_seq_run(s) == 0, "sequence: an empty one runs");
  rt_seq_free(s);
  rt_tensor_free(x), rt_tensor_free(y), rt_tensor_free(z);
  rt_module_free(m);
}

static atomic_int hits[10007];
static atomic_int calls;

static void mark(int64_t begin, int64_t end, void *closure) {
  (void)closure;
  atomic_fetch_add(&calls, 1);
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&hits[i], 1);
}

static void nested(int64_t begin, int64_t end, void *closure) {
  for (int64_t i = begin; i < end; i++) rt_parallel_for(10, mark, closure); /* runs serially */
}

static void test_pool(void) {
  check(rt_num_threads() >= 1, "rt_num_threads");
  for (int round = 0; round < 50; round++) rt_parallel_for(10007, mark, NULL);
  int ok = 1;
  for (int i = 0; i < 10007; i++) ok &= hits[i] == 50;
  check(ok, "rt_parallel_for covers [0, n) exactly once, 50 rounds");
  check(atomic_load(&calls) <= 50 * 4 * rt_num_threads(), "at most 4 chunks per thread");
  memset(hits, 0, sizeof hits);
  rt_parallel_for(3, nested, NULL);
  ok = 1;
  for (int i = 0; i < 10; i++) ok &= hits[i] == 3;
  check(ok, "nested rt_parallel_for");
  rt_parallel_for(0, mark, NULL);
  rt_parallel_for(-5, mark, NULL);
  check(1, "empty ranges");
  /* every length from 1 to 300: the threads' slots of chunks (rt_cpu.c) split unevenly,
   * some empty, and the caller takes the chunks of workers that start late */
  ok = 1;
  for (int64_t n = 1; n <= 300 && ok; n++) {
    memset(hits, 0, sizeof hits);
    rt_parallel_for(n, mark, NULL);
    for (int64_t i = 0; i < n; i++) ok &= hits[i] == 1;
    for (int64_t i = n; i < 310; i++) ok &= hits[i] == 0;
  }
  check(ok, "rt_parallel_for covers [0, n) exactly once for n = 1..300");
}

int main(void) {
  setenv("TEX_NUM_THREADS", "5", 0); /* more threads than this machine's cores: late workers */
  test_tensors();
  test_calls();
  test_cold_timing();
  test_device_flush();
  test_seq();
  test_pool();
  return failures != 0;
}
