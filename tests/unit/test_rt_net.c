/* test_rt_net.c — runtime/rt_net.c without the compiler: a hand-made two-call network
 * (y = (x + w) + w and its middle tensor t = x + w, both results: y the caller's output 0,
 * t output 1; a third call's u = t + w in the arena, unused) run from embedded weights and from
 * safetensors files; a truncated file, bytes after the last tensor or between two, a wrong
 * shape or dtype, a missing tensor and random corruptions of the header are errors at
 * create (and, for the byte layout, in texc's own reader), never a crash. */
#include "onnx/onnx.h"
#include "rt_net.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int add4(void **args, const int64_t *sizes) {
  (void)sizes;
  const float *a = args[0], *b = args[1];
  float *o = args[2];
  for (int i = 0; i < 4; i++) o[i] = a[i] + b[i];
  return 0;
}

static _Alignas(64) const unsigned char embedded[64] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64}; /* 1 2 3 4 */
static const RtNetTensor tensors[] = {
    {"x", RT_NET_INPUT, 4, 1, {4}, 0, 16},
    {"w", RT_NET_WEIGHT, 4, 1, {4}, 0, 16},
    {"t", RT_NET_OUTPUT, 4, 1, {4}, 1, 16},
    {"y", RT_NET_OUTPUT, 4, 1, {4}, 0, 16},
    {"u", RT_NET_VALUE, 4, 1, {4}, 0, 16},
};
static const int args0[] = {0, 1, 2}, args1[] = {2, 1, 3}, args2[] = {2, 1, 4};
static const RtNetCall calls[] = {{0, 3, args0}, {0, 3, args1}, {0, 3, args2}};
static const char *const names[] = {"add4"};
static const RtPackedFn fns[] = {add4};
static const RtNetDesc desc = {.name = "tiny", .device = RT_CPU, .ntensors = 5, .ncalls = 3, .nfuncs = 1,
                               .ninputs = 1, .noutputs = 2, .tensors = tensors, .calls = calls,
                               .func_names = names, .cpu_fns = fns, .arena_bytes = 64,
                               .weights_bytes = 64, .weights = embedded};

/* y and t for x = 10, 20, 30, 40 from context N; true when they are x + 2w and x + w for
 * W's values. */
static bool runs(RtNet *n, const float *w) {
  float x[4] = {10, 20, 30, 40}, y[4], t[4];
  const void *in[1] = {x};
  void *out[2] = {y, t};
  if (!n || rt_net_run(n, in, out, 0)) return false;
  for (int i = 0; i < 4; i++)
    if (y[i] != x[i] + 2 * w[i] || t[i] != x[i] + w[i]) return false;
  return true;
}

/* A safetensors file with tensor NAME of SHAPE (N elements of DATA). */
static const char *write_weights(const char *name, int64_t n, const float *data) {
  static int count;
  char *path = xprintf("/tmp/test_rt_net_%d_%d.safetensors", (int)getpid(), count++);
  HostTensor t = {.name = name, .ndim = 1, .shape = {n}, .data = (float *)data};
  WeightSet w = {0};
  ws_add(&w, t);
  return safetensors_write(path, &w) ? path : NULL;
}

/* A safetensors file of header JSON (padded to 8 bytes) and DATA_LEN bytes of 1.0f. */
static const char *write_raw(const char *json, size_t data_len) {
  static int count;
  char *path = xprintf("/tmp/test_rt_net_raw_%d_%d.safetensors", (int)getpid(), count++);
  size_t n = strlen(json), pad = (8 - n % 8) % 8;
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  for (int i = 0; i < 8; i++) fputc((int)(((n + pad) >> (8 * i)) & 255), f);
  fputs(json, f);
  for (size_t i = 0; i < pad; i++) fputc(' ', f);
  const float one = 1;
  for (size_t i = 0; i < data_len / 4; i++) fwrite(&one, 4, 1, f);
  fclose(f);
  return path;
}

/* Does texc's own reader (compiler/onnx/tensor_io.c) refuse PATH with WHAT? */
static bool compiler_refuses(const char *path, const char *what) {
  WeightSet w;
  int before = diag_errors();
  bool silent = diag_silent;
  diag_silent = true;
  bool read = safetensors_read(path, &w);
  diag_silent = silent;
  bool ok = !read && diag_errors() > before && strstr(diag_last(), what) != NULL;
  if (!ok) printf("  # texc: %s: %s\n", path, read ? "read" : diag_last());
  return ok;
}

static bool fails_with(const char *path, const char *what) {
  RtNet *n = rt_net_create(&desc, path);
  bool ok = !n && strstr(rt_last_error(), what) != NULL;
  if (!ok) printf("  # %s: %s\n", path, n ? "created" : rt_last_error());
  rt_net_destroy(n);
  return ok;
}

int main(void) {
  static const float one_to_four[4] = {1, 2, 3, 4}, other[4] = {-1, 0.5f, 7, 100};
  RtNet *n = rt_net_create(&desc, NULL);
  check("rt_net: embedded weights, two outputs (one read by the call after it), a value in the arena", runs(n, one_to_four));
  check("rt_net: a second run of the same context", runs(n, one_to_four));
  rt_net_destroy(n);
  const char *good = write_weights("w", 4, other);
  n = rt_net_create(&desc, good);
  check("rt_net: weights from a safetensors file", runs(n, other));
  rt_net_destroy(n);
  const char *shape = write_weights("w", 3, other), *missing = write_weights("v", 4, other);
  check("rt_net: a wrong shape", fails_with(shape, "tensor 'w' is [3], the network needs [4]"));
  check("rt_net: a missing tensor", fails_with(missing, "no tensor 'w' (a weight of network tiny)"));
  check("rt_net: a missing file", fails_with("/nonexistent/w.safetensors", "cannot open weights file"));
  /* every byte of the data in exactly one tensor (safetensors' own rule) */
  const char *longer = write_raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 24);
  const char *gap = write_raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}", 24);
  const char *overlap = write_raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                                  "\"v\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16);
  const char *exact = write_raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16);
  check("rt_net: 8 bytes after the last tensor", fails_with(longer, "8 bytes after the last tensor"));
  check("rt_net: a gap before the tensor", fails_with(gap, "bytes 0..8 of the data are in no tensor"));
  check("rt_net: overlapping tensors", fails_with(overlap, "tensors 'w' and 'v' overlap"));
  static const float ones[4] = {1, 1, 1, 1};
  n = rt_net_create(&desc, exact);
  check("rt_net: a hand-written file that indexes every byte", runs(n, ones));
  rt_net_destroy(n);
  check("texc: 8 bytes after the last tensor", compiler_refuses(longer, "8 bytes after the last tensor"));
  check("texc: a gap before the tensor", compiler_refuses(gap, "bytes 0..8 of the data are in no tensor"));
  check("texc: overlapping tensors", compiler_refuses(overlap, "tensors 'w' and 'v' overlap"));
  WeightSet ws;
  check("texc: a hand-written file that indexes every byte", safetensors_read(exact, &ws) && ws.n == 1);
  unlink(longer), unlink(gap), unlink(overlap), unlink(exact);
  /* the file's bytes, truncated and corrupted */
  FILE *f = fopen(good, "rb");
  unsigned char buf[4096];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  const char *bad = xprintf("%s.bad", good);
  f = fopen(bad, "wb");
  fwrite(buf, 1, len - 4, f);
  fclose(f);
  check("rt_net: a truncated file", fails_with(bad, "(a truncated or corrupt file)"));
  unsigned char *dtype = memmem(buf, len, "F32", 3);
  if (dtype) memcpy(dtype, "F16", 3);
  f = fopen(bad, "wb");
  fwrite(buf, 1, len, f);
  fclose(f);
  check("rt_net: a dtype other than F32", dtype && fails_with(bad, "tensor 'w' is F16, the network needs F32"));
  if (dtype) memcpy(dtype, "F32", 3);
  bool survived = true;
  unit_rng = 7;
  for (int trial = 0; trial < 500; trial++) { /* random bytes into the header: never a crash */
    unsigned char copy[4096];
    memcpy(copy, buf, len);
    for (int k = 0, m = (int)rint_in(1, 4); k < m; k++) copy[rint_in(0, (int64_t)len - 17)] = (unsigned char)rnd();
    f = fopen(bad, "wb");
    fwrite(copy, 1, (size_t)rint_in(0, (int64_t)len), f);
    fclose(f);
    n = rt_net_create(&desc, bad);
    if (n && !runs(n, other) && rt_last_error()[0] == 0) survived = false;
    rt_net_destroy(n);
  }
  check("rt_net: 500 corrupted files: an error or a context, never a crash", survived);
  unlink(good), unlink(shape), unlink(missing), unlink(bad);
  return failures ? 1 : 0;
}
