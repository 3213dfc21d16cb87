/* bench.c — texc-built kernels (.so from `texc --emit so`) against anchors measured in the
 * same process: OpenBLAS sgemm and oneDNN's dnnl_sgemm for matmul (one row each), oneDNN
 * for convolutions (NHWC, batch 1), a parallel memcpy for the bandwidth-bound vadd.
 * Medians of >= 5 measurements.
 *
 *   bench MANIFEST        one kernel per line:
 *     matmul VARIANT M N K FILE.so
 *     vadd   VARIANT N FILE.so
 *     conv   VARIANT LAYER H W CI CO K STRIDE PAD FILE.so
 *     convrelu (the same: a network task, relu(conv), the kernel's own .so)
 *     netconvrelu (the same, a network library `texc NET --emit so --name net` whose
 *            weight "w" bench writes to FILE.so.w.safetensors and loads with net_create_from)
 *     netdw  VARIANT LAYER H W C K STRIDE PAD FILE.so   a depthwise layer with batch norm
 *            and relu as a network library (weights "w", "s", "b"; bench/net_dw.sh)
 *
 * ratio = anchor time / texc time (above 1: texc is faster); for vadd it is the ratio of
 * bandwidths (vadd moves 12 bytes per element, memcpy 8).
 */
#include <cblas.h>
#include <dlfcn.h>
#include <dnnl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_internal.h"
#include "texrt.h"

#define REPEAT 7
#define MIN_MS 100.0

void openblas_set_num_threads(int num_threads);

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median ms of FN(CTX) as rt_time does it: a warm-up, NUMBER grown to MIN_MS, REPEAT runs. */
static double time_anchor(void (*fn)(void *), void *ctx) {
  fn(ctx);
  int number = 1;
  for (;;) {
    double t0 = now_ms();
    for (int i = 0; i < number; i++) fn(ctx);
    double ms = now_ms() - t0;
    if (ms >= MIN_MS) break;
    number = ms > 0.01 ? (int)(number * MIN_MS * 1.1 / ms) + 1 : number * 10;
  }
  double t[REPEAT];
  for (int r = 0; r < REPEAT; r++) {
    double t0 = now_ms();
    for (int i = 0; i < number; i++) fn(ctx);
    t[r] = (now_ms() - t0) / number;
  }
  qsort(t, REPEAT, sizeof *t, cmp_d);
  return t[REPEAT / 2];
}

static RtTensor *tensor(int ndim, const int64_t *shape, unsigned seed) {
  RtTensor *t = rt_tensor_alloc((RtDevice){RT_CPU, 0}, 4, ndim, shape);
  if (!t) {
    fprintf(stderr, "bench: %s\n", rt_last_error());
    exit(1);
  }
  float *p = t->data;
  for (int64_t i = 0; i < t->nbytes / 4; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
  return t;
}

/* Median ms of the texc kernel in SO on ARGS; negative on error (printed). */
static double time_texc(const char *so, RtTensor **args, int nargs, RtModule **keep) {
  RtModule *m = rt_module_load(so);
  if (!m || m->nfuncs < 1) {
    fprintf(stderr, "bench: %s: %s\n", so, rt_last_error());
    return -1;
  }
  double t0 = now_ms();
  if (rt_func_call(m->funcs[0], args, nargs, NULL, 0)) {
    fprintf(stderr, "bench: %s: %s\n", so, rt_last_error());
    return -1;
  }
  double once = now_ms() - t0;
  *keep = m;
  if (once > 1000) { /* too slow to repeat: one run, said so */
    fprintf(stderr, "bench: %s takes %.0f ms: timed once\n", so, once);
    return once;
  }
  RtTiming t;
  if (rt_time(m->funcs[0], args, nargs, NULL, 0, 1, REPEAT, MIN_MS, &t)) {
    fprintf(stderr, "bench: %s: %s\n", so, rt_last_error());
    return -1;
  }
  return t.median_ms;
}

static double max_rel_err(const float *a, const float *b, int64_t n) {
  double e = 0;
  for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]) / (1 + fabs(b[i])));
  return e;
}

static void row(const char *kernel, const char *variant, const char *anchor, double ms, double ams,
                double ratio, double gflops, double err) {
  printf("%-28s %-10s %10.4f %10.4f %-9s %7.2f %9.1f %s\n", kernel, variant, ms, ams, anchor, ratio, gflops,
         err > 1e-3 ? "MISMATCH" : "");
  fflush(stdout);
}

/* -------------------------------------------------------------------- matmul */

typedef struct Gemm {
  int m, n, k;
  const float *a, *b;
  float *c;
} Gemm;

static void run_sgemm(void *p) {
  Gemm *g = p;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n,
              0.0f, g->c, g->n);
}

/* oneDNN's sgemm (row-major, as cblas_sgemm above): the second anchor for matmul. */
static void run_dnnl_sgemm(void *p) {
  Gemm *g = p;
  if (dnnl_sgemm('N', 'N', g->m, g->n, g->k, 1.0f, g->a, g->k, g->b, g->n, 0.0f, g->c, g->n) != dnnl_success)
    fprintf(stderr, "bench: dnnl_sgemm failed\n");
}

static void bench_matmul(const char *variant, int m, int n, int k, const char *so) {
  int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
  RtTensor *a = tensor(2, sa, 1), *b = tensor(2, sb, 2), *c = tensor(2, sc, 3), *ref = tensor(2, sc, 4);
  RtTensor *args[3] = {a, b, c};
  RtModule *mod = NULL;
  double ms = time_texc(so, args, 3, &mod);
  Gemm g = {m, n, k, a->data, b->data, ref->data};
  double ams = time_anchor(run_sgemm, &g);
  char name[64];
  snprintf(name, sizeof name, "matmul %dx%dx%d", m, n, k);
  if (ms > 0)
    row(name, variant, "openblas", ms, ams, ams / ms, 2.0 * m * n * k / ms / 1e6,
        max_rel_err(c->data, ref->data, (int64_t)m * n));
  /* oneDNN's sgemm next to the same texc figure (its own result compared too) */
  double dms = time_anchor(run_dnnl_sgemm, &g);
  if (ms > 0)
    row(name, variant, "dnnl_sgemm", ms, dms, dms / ms, 2.0 * m * n * k / ms / 1e6,
        max_rel_err(c->data, ref->data, (int64_t)m * n));
  rt_module_free(mod);
  rt_tensor_free(a), rt_tensor_free(b), rt_tensor_free(c), rt_tensor_free(ref);
}

/* ---------------------------------------------------------------------- vadd */

typedef struct Copy {
  char *dst;
  const char *src;
  int64_t bytes;
} Copy;

static void copy_chunk(int64_t begin, int64_t end, void *p) {
  Copy *c = p;
  int64_t per = (c->bytes + 63) / 64;
  int64_t lo = begin * per, hi = end * per > c->bytes ? c->bytes : end * per;
  if (lo < hi) memcpy(c->dst + lo, c->src + lo, (size_t)(hi - lo));
}

static void run_memcpy(void *p) { rt_parallel_for(64, copy_chunk, p); }

static void bench_vadd(const char *variant, int64_t n, const char *so) {
  RtTensor *a = tensor(1, &n, 1), *b = tensor(1, &n, 2), *c = tensor(1, &n, 3), *d = tensor(1, &n, 4);
  RtTensor *args[3] = {a, b, c};
  RtModule *mod = NULL;
  double ms = time_texc(so, args, 3, &mod);
  Copy cp = {d->data, a->data, n * 4};
  double ams = time_anchor(run_memcpy, &cp);
  float *x = a->data, *y = b->data, *z = c->data;
  double err = 0;
  for (int64_t i = 0; i < n; i += 4099) err = fmax(err, fabs(z[i] - (x[i] + y[i])));
  char name[64];
  snprintf(name, sizeof name, "vadd %lld (GB/s %.1f/%.1f)", (long long)n, 12.0 * n / ms / 1e6, 8.0 * n / ams / 1e6);
  if (ms > 0) row(name, variant, "memcpy", ms, ams, (12.0 / ms) / (8.0 / ams), 1.0 * n / ms / 1e6, err);
  rt_module_free(mod);
  rt_tensor_free(a), rt_tensor_free(b), rt_tensor_free(c), rt_tensor_free(d);
}

/* ---------------------------------------------------------------------- conv */

#define DNNL_OK(x)                                                   \
  do {                                                               \
    if ((x) != dnnl_success) {                                       \
      fprintf(stderr, "bench: oneDNN call failed: %s\n", #x);        \
      exit(1);                                                       \
    }                                                                \
  } while (0)

typedef struct Conv {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  dnnl_exec_arg_t args[3];
} Conv;

static void run_conv(void *p) {
  Conv *c = p;
  DNNL_OK(dnnl_primitive_execute(c->prim, c->stream, 3, c->args));
  DNNL_OK(dnnl_stream_wait(c->stream));
}

typedef struct Conv4 {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  dnnl_exec_arg_t args[4];
} Conv4;

static void run_conv4(void *p) {
  Conv4 *c = p;
  DNNL_OK(dnnl_primitive_execute(c->prim, c->stream, 4, c->args));
  DNNL_OK(dnnl_stream_wait(c->stream));
}

/* oneDNN forward-inference convolution: NHWC src/dst, weights in oneDNN's preferred
 * layout (reordered once, untimed, from our HWIO). Fills OUT (NHWC); returns ms. */
static double onednn_conv(int h, int w, int ci, int co, int kk, int s, int pad, float *x, float *f, float *out) {
  int oh = (h + 2 * pad - kk) / s + 1, ow = (w + 2 * pad - kk) / s + 1;
  dnnl_engine_t eng;
  dnnl_stream_t st;
  DNNL_OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  DNNL_OK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
  dnnl_memory_desc_t src, wany, whwio, dst;
  dnnl_dims_t sd = {1, ci, h, w}, wd = {co, ci, kk, kk}, dd = {1, co, oh, ow};
  dnnl_dims_t strides = {s, s}, padl = {pad, pad}, padr = {pad, pad};
  DNNL_OK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_nhwc));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&wany, 4, wd, dnnl_f32, dnnl_format_tag_any));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&whwio, 4, wd, dnnl_f32, dnnl_hwio));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_nhwc));
  dnnl_convolution_desc_t cd;
  DNNL_OK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src, &wany,
                                             NULL, &dst, strides, padl, padr));
  dnnl_primitive_desc_t pd;
  DNNL_OK(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  dnnl_memory_t msrc, mwu, mw, mdst;
  DNNL_OK(dnnl_memory_create(&msrc, &src, eng, x));
  DNNL_OK(dnnl_memory_create(&mwu, &whwio, eng, f));
  DNNL_OK(dnnl_memory_create(&mw, wmd, eng, DNNL_MEMORY_ALLOCATE));
  DNNL_OK(dnnl_memory_create(&mdst, &dst, eng, out));
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t reorder;
  DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &whwio, eng, wmd, eng, NULL));
  DNNL_OK(dnnl_primitive_create(&reorder, rpd));
  dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, mwu}, {DNNL_ARG_TO, mw}};
  DNNL_OK(dnnl_primitive_execute(reorder, st, 2, rargs));
  DNNL_OK(dnnl_stream_wait(st));
  Conv c = {NULL, st, {{DNNL_ARG_SRC, msrc}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, mdst}}};
  DNNL_OK(dnnl_primitive_create(&c.prim, pd));
  double ms = time_anchor(run_conv, &c);
  dnnl_primitive_destroy(c.prim), dnnl_primitive_destroy(reorder);
  dnnl_primitive_desc_destroy(pd), dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(msrc), dnnl_memory_destroy(mwu), dnnl_memory_destroy(mw), dnnl_memory_destroy(mdst);
  dnnl_stream_destroy(st), dnnl_engine_destroy(eng);
  return ms;
}

/* ---- a network library (`texc NET.tex --emit so --name net`): net_create_from(FILE),
 * net_run(ctx, x, y), timed as a program that links it would time it */

typedef struct NetLib {
  void *dl, *ctx;
  int (*run)(void *, const float *, float *);
  void (*destroy)(void *);
  const float *x;
  float *y;
} NetLib;

static void net_call(void *p) {
  NetLib *l = p;
  if (l->run(l->ctx, l->x, l->y)) fprintf(stderr, "bench: net_run failed\n");
}

/* The N tensors T named NAMES (f32) as the safetensors file PATH. */
static bool write_tensors(const char *path, int n, const char *const *names, const RtTensor *const *t) {
  char hdr[1024];
  int len = snprintf(hdr, sizeof hdr, "{");
  long long off = 0;
  for (int i = 0; i < n; i++) {
    len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[", i ? "," : "", names[i]);
    for (int d = 0; d < t[i]->ndim; d++)
      len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%s%lld", d ? "," : "", (long long)t[i]->shape[d]);
    len += snprintf(hdr + len, sizeof hdr - (size_t)len, "],\"data_offsets\":[%lld,%lld]}", off, off + (long long)t[i]->nbytes);
    off += t[i]->nbytes;
  }
  len += snprintf(hdr + len, sizeof hdr - (size_t)len, "}");
  while (len % 8) hdr[len++] = ' ';
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  unsigned char le[8];
  for (int i = 0; i < 8; i++) le[i] = (unsigned char)((uint64_t)len >> (8 * i));
  bool ok = fwrite(le, 1, 8, f) == 8 && fwrite(hdr, 1, (size_t)len, f) == (size_t)len;
  for (int i = 0; i < n && ok; i++) ok = fwrite(t[i]->data, 1, (size_t)t[i]->nbytes, f) == (size_t)t[i]->nbytes;
  return fclose(f) == 0 && ok;
}

/* Median ms of network library SO (entry points net_*) on X -> Y with the N weights T
 * named NAMES; negative on error (printed). *L keeps the library open until net_close. */
static double time_net(const char *so, const RtTensor *x, int n, const char *const *names, const RtTensor *const *t,
                       RtTensor *y, NetLib *l) {
  memset(l, 0, sizeof *l);
  char wpath[600];
  snprintf(wpath, sizeof wpath, "%s.w.safetensors", so);
  void *(*create_from)(const char *) = NULL;
  if (!write_tensors(wpath, n, names, t) || !(l->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL)) ||
      !(create_from = (void *(*)(const char *))dlsym(l->dl, "net_create_from")) ||
      !(l->run = (int (*)(void *, const float *, float *))dlsym(l->dl, "net_run")) ||
      !(l->destroy = (void (*)(void *))dlsym(l->dl, "net_destroy"))) {
    fprintf(stderr, "bench: %s: %s\n", so, l->dl ? dlerror() : "cannot write the weights or open the library");
    return -1;
  }
  if (!(l->ctx = create_from(wpath))) {
    fprintf(stderr, "bench: %s: net_create_from failed\n", so);
    return -1;
  }
  l->x = x->data, l->y = y->data;
  return time_anchor(net_call, l);
}

static void net_close(NetLib *l) {
  if (l->ctx) l->destroy(l->ctx);
  if (l->dl) dlclose(l->dl);
}

/* RELU: the texc kernel computes relu(conv) (a network task: conv and relu fused); oneDNN
 * times the convolution alone, its result clamped at 0 only for the comparison. */
static void bench_conv(const char *variant, const char *layer, int h, int w, int ci, int co, int kk, int s,
                       int pad, const char *so, bool relu, bool net) {
  int oh = (h + 2 * pad - kk) / s + 1, ow = (w + 2 * pad - kk) / s + 1;
  int64_t sx[4] = {1, h, w, ci}, sf[4] = {kk, kk, ci, co}, sy[4] = {1, oh, ow, co};
  RtTensor *x = tensor(4, sx, 1), *f = tensor(4, sf, 2), *y = tensor(4, sy, 3), *ref = tensor(4, sy, 4);
  RtTensor *args[3] = {x, f, y};
  RtModule *mod = NULL;
  NetLib lib = {0};
  const char *wname = "w";
  const RtTensor *wt = f;
  double ms = net ? time_net(so, x, 1, &wname, &wt, y, &lib) : time_texc(so, args, 3, &mod);
  double ams = onednn_conv(h, w, ci, co, kk, s, pad, x->data, f->data, ref->data);
  for (int64_t i = 0; relu && i < ref->nbytes / 4; i++) ((float *)ref->data)[i] = fmaxf(((float *)ref->data)[i], 0.0f);
  char name[96];
  snprintf(name, sizeof name, "conv %s %dx%dx%d>%d k%d s%d", layer, h, w, ci, co, kk, s);
  double flops = 2.0 * oh * ow * co * ci * kk * kk;
  if (ms > 0) row(name, variant, "onednn", ms, ams, ams / ms, flops / ms / 1e6, max_rel_err(y->data, ref->data, y->nbytes / 4));
  if (mod) rt_module_free(mod);
  net_close(&lib);
  rt_tensor_free(x), rt_tensor_free(f), rt_tensor_free(y), rt_tensor_free(ref);
}

/* oneDNN depthwise convolution (groups = C, weights hwigo = our [K, K, C] times SCALE),
 * bias SHIFT and a relu post-op: batch norm folded into the convolution, as onnxruntime
 * does. Fills OUT (NHWC); returns ms. */
static double onednn_dw(int h, int w, int c, int kk, int s, int pad, float *x, float *f, float *shift, float *out) {
  int oh = (h + 2 * pad - kk) / s + 1, ow = (w + 2 * pad - kk) / s + 1;
  dnnl_engine_t eng;
  dnnl_stream_t st;
  DNNL_OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  DNNL_OK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
  dnnl_memory_desc_t src, wany, wus, bias, dst;
  dnnl_dims_t sd = {1, c, h, w}, wd = {c, 1, 1, kk, kk}, bd = {c}, dd = {1, c, oh, ow};
  dnnl_dims_t strides = {s, s}, padl = {pad, pad}, padr = {pad, pad};
  DNNL_OK(dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32, dnnl_nhwc));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&wany, 5, wd, dnnl_f32, dnnl_format_tag_any));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&wus, 5, wd, dnnl_f32, dnnl_hwigo));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&bias, 1, bd, dnnl_f32, dnnl_x));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_nhwc));
  dnnl_convolution_desc_t cd;
  DNNL_OK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src, &wany,
                                             &bias, &dst, strides, padl, padr));
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  DNNL_OK(dnnl_post_ops_create(&po));
  DNNL_OK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
  DNNL_OK(dnnl_primitive_attr_create(&attr));
  DNNL_OK(dnnl_primitive_attr_set_post_ops(attr, po));
  dnnl_primitive_desc_t pd;
  DNNL_OK(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  dnnl_memory_t msrc, mwu, mw, mb, mdst;
  DNNL_OK(dnnl_memory_create(&msrc, &src, eng, x));
  DNNL_OK(dnnl_memory_create(&mwu, &wus, eng, f));
  DNNL_OK(dnnl_memory_create(&mw, wmd, eng, DNNL_MEMORY_ALLOCATE));
  DNNL_OK(dnnl_memory_create(&mb, &bias, eng, shift));
  DNNL_OK(dnnl_memory_create(&mdst, &dst, eng, out));
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t reorder;
  DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &wus, eng, wmd, eng, NULL));
  DNNL_OK(dnnl_primitive_create(&reorder, rpd));
  dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, mwu}, {DNNL_ARG_TO, mw}};
  DNNL_OK(dnnl_primitive_execute(reorder, st, 2, rargs));
  DNNL_OK(dnnl_stream_wait(st));
  Conv4 cv = {NULL, st, {{DNNL_ARG_SRC, msrc}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, mdst}}};
  DNNL_OK(dnnl_primitive_create(&cv.prim, pd));
  double ms = time_anchor(run_conv4, &cv);
  dnnl_primitive_destroy(cv.prim), dnnl_primitive_destroy(reorder);
  dnnl_primitive_desc_destroy(pd), dnnl_primitive_desc_destroy(rpd);
  dnnl_primitive_attr_destroy(attr), dnnl_post_ops_destroy(po);
  dnnl_memory_destroy(msrc), dnnl_memory_destroy(mwu), dnnl_memory_destroy(mw), dnnl_memory_destroy(mb);
  dnnl_memory_destroy(mdst), dnnl_stream_destroy(st), dnnl_engine_destroy(eng);
  return ms;
}

/* A depthwise layer as a network library (bench/net_dw.sh): y = relu(dw(x, w) * s + b),
 * weights "w" [K, K, C], "s", "b" [C], against onednn_dw on the folded weights. */
static void bench_dw(const char *variant, const char *layer, int h, int w, int c, int kk, int s, int pad,
                     const char *so) {
  int oh = (h + 2 * pad - kk) / s + 1, ow = (w + 2 * pad - kk) / s + 1;
  int64_t sx[4] = {1, h, w, c}, sf[3] = {kk, kk, c}, sc = c, sy[4] = {1, oh, ow, c};
  RtTensor *x = tensor(4, sx, 1), *f = tensor(3, sf, 2), *sca = tensor(1, &sc, 5), *sh = tensor(1, &sc, 6);
  RtTensor *y = tensor(4, sy, 3), *ref = tensor(4, sy, 4), *ff = tensor(3, sf, 7);
  for (int64_t i = 0; i < f->nbytes / 4; i++)
    ((float *)ff->data)[i] = ((float *)f->data)[i] * ((float *)sca->data)[i % c];
  NetLib lib = {0};
  const char *names[3] = {"w", "s", "b"};
  const RtTensor *ts[3] = {f, sca, sh};
  double ms = time_net(so, x, 3, names, ts, y, &lib);
  double ams = onednn_dw(h, w, c, kk, s, pad, x->data, ff->data, sh->data, ref->data);
  char name[96];
  snprintf(name, sizeof name, "dw %s %dx%dx%d k%d s%d", layer, h, w, c, kk, s);
  double flops = 2.0 * oh * ow * c * kk * kk;
  if (ms > 0) row(name, variant, "onednn", ms, ams, ams / ms, flops / ms / 1e6, max_rel_err(y->data, ref->data, y->nbytes / 4));
  net_close(&lib);
  rt_tensor_free(x), rt_tensor_free(f), rt_tensor_free(sca), rt_tensor_free(sh);
  rt_tensor_free(y), rt_tensor_free(ref), rt_tensor_free(ff);
}

int main(int argc, char **argv) {
  FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
  if (!in) {
    fprintf(stderr, "usage: bench MANIFEST\n");
    return 2;
  }
  openblas_set_num_threads(rt_num_threads());
  printf("threads: %d (TEX_NUM_THREADS; OpenBLAS and oneDNN use as many)\n", rt_num_threads());
  printf("%-28s %-10s %10s %10s %-9s %7s %9s\n", "kernel", "variant", "texc ms", "anchor ms", "anchor", "ratio",
         "GFLOP/s");
  char line[1024], kind[32], variant[64], layer[32], so[512];
  while (fgets(line, sizeof line, in)) {
    int m, n, k, h, w, ci, co, kk, s, pad;
    long long len;
    if (line[0] == '#' || sscanf(line, "%31s", kind) != 1) continue;
    if (!strcmp(kind, "matmul") && sscanf(line, "%*s %63s %d %d %d %511s", variant, &m, &n, &k, so) == 5)
      bench_matmul(variant, m, n, k, so);
    else if (!strcmp(kind, "vadd") && sscanf(line, "%*s %63s %lld %511s", variant, &len, so) == 3)
      bench_vadd(variant, len, so);
    else if ((!strcmp(kind, "conv") || !strcmp(kind, "convrelu") || !strcmp(kind, "netconvrelu")) && sscanf(line, "%*s %63s %31s %d %d %d %d %d %d %d %511s", variant, layer, &h,
                                             &w, &ci, &co, &kk, &s, &pad, so) == 10)
      bench_conv(variant, layer, h, w, ci, co, kk, s, pad, so, strcmp(kind, "conv") != 0, !strcmp(kind, "netconvrelu"));
    else if (!strcmp(kind, "netdw") && sscanf(line, "%*s %63s %31s %d %d %d %d %d %d %511s", variant, layer, &h, &w,
                                               &ci, &kk, &s, &pad, so) == 9)
      bench_dw(variant, layer, h, w, ci, kk, s, pad, so);
    else fprintf(stderr, "bench: bad manifest line: %s", line);
  }
  return 0;
}
