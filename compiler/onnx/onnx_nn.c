/* onnx_nn.c — the ONNX operators of neural-network layers (docs/ONNX.md): convolutions and
 * pools, Gemm and MatMul, batch, layer, instance and LRN normalizations, reductions and
 * softmax, Einsum, CumSum, CumProd, ArgMax / ArgMin, Resize and Upsample. Each becomes a stdlib
 * operator where one fits, else a kernel written for the node's shapes (onnx_ops.c's
 * helpers); onnx_nn_op is their entry from the table.
 */
#include "onnx/onnx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Conv and pools: the pads of N spatial axes (N = 1 to 3) from pads or auto_pad for input
 * sizes HW, in ONNX's order [begin of each axis, end of each axis]: [t, l, b, r] in 2-D. */
static bool pads_of(Imp *I, int n, const int64_t *hw, const int64_t *k, const int64_t *s, const int64_t *d, int64_t *p) {
  const char *ap = imp_attr_s(I, "auto_pad", "NOTSET");
  int64_t pads[6] = {0};
  int np = imp_attr_ints(I, "pads", pads, 6);
  if (np >= 0 && np != 2 * n) return imp_unsupported(I, "pads of %d values (%d-D: %d)", np, n, 2 * n);
  if (!strcmp(ap, "NOTSET") || !strcmp(ap, "VALID")) {
    for (int i = 0; i < 2 * n; i++) p[i] = !strcmp(ap, "VALID") ? 0 : pads[i];
    return true;
  }
  if (strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER")) return imp_unsupported(I, "auto_pad '%s'", ap);
  for (int i = 0; i < n; i++) {
    int64_t out = (hw[i] + s[i] - 1) / s[i];
    int64_t total = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - hw[i];
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    p[i] = !strcmp(ap, "SAME_UPPER") ? small : big;
    p[i + n] = !strcmp(ap, "SAME_UPPER") ? big : small;
  }
  return true;
}

/* Pools' output sizes: SPAN (the padded input less the window) over stride S rounded down,
 * or up for ceil_mode, for a negative SPAN too (an input shorter than the window). */
static int64_t pool_steps(int64_t span, int64_t s, bool ceil) {
  int64_t q = span / s, r = span % s;
  if (r && (r < 0) != ceil) q += ceil ? 1 : -1; /* C truncates toward zero */
  return q;
}

/* The integer attributes of a call ("SH = 2, PT = 1"), those at their defaults left out. */
static char *kw(char *s, const char *name, int64_t v, int64_t def) {
  return v == def ? s : xprintf("%s, %s = %lld", s, name, (long long)v);
}

char *imp_conv_attrs(char *args, const int64_t *s, const int64_t *d, const int64_t *p) {
  return kw(kw(kw(kw(kw(kw(kw(kw(args, "SH", s[0], 1), "SW", s[1], 1), "PT", p[0], 0), "PL", p[1], 0), "PB", p[2], 0), "PR", p[3], 0),
               "DH", d[0], 1), "DW", d[1], 1);
}

/* A Conv's or ConvTranspose's kernel_shape attribute, when given, is the filter W's spatial
 * shape (the filter decides here; a model where they differ is refused, as onnxruntime
 * does). */
static bool kernel_shape_fits(Imp *I, const Val *w) {
  int64_t ks[3];
  int n = imp_attr_ints(I, "kernel_shape", ks, 3);
  if (n < 0) return true;
  bool same = n == w->ndim - 2;
  for (int i = 0; same && i < n; i++) same = ks[i] == w->shape[2 + i];
  if (!same) return imp_error(I, "kernel_shape [%s] is not the filter's spatial shape [%s]", imp_dims_text(ks, n > 0 ? n : 0),
                              imp_dims_text(w->shape + 2, w->ndim - 2));
  return true;
}

/* strides, dilations (N each, default 1); false: reported. */
static bool spatial_n(Imp *I, int n, const char *name, int64_t *out) {
  int64_t v[3] = {1, 1, 1};
  int got = imp_attr_ints(I, name, v, 3);
  if (got >= 0 && got != n) return imp_unsupported(I, "%s of %d values (%d-D: %d)", name, got, n, n);
  for (int i = 0; i < n; i++)
    if ((out[i] = v[i]) < 1) return imp_error(I, "%s must be positive", name);
  if (n < 2) out[1] = 1;
  return true;
}


/* V (rank 3, [N, C, L]) as rank 4, [N, C, 1, L]: a 1-D convolution or pool is the 2-D one
 * over a height of 1. A constant is reshaped here; a network tensor by a kernel. */
static Val *height_one(Imp *I, Val *v) {
  Val *u = xalloc(sizeof *u);
  *u = (Val){.name = xprintf("%s_2d", v->name), .dtype = v->dtype, .ndim = 4,
             .shape = {v->shape[0], v->shape[1], 1, v->shape[2]}, .c = v->c};
  if (v->c) return u;
  const char *k = imp_kernel(I, "height_one", xprintf("(X: %s) -> Y: %s {\n  Y[n, c, h, l] = X[n, c, l]\n}", imp_ty(v), imp_ty(u)));
  u->tex = imp_name(I, u->name);
  imp_call(I, u->tex, k, imp_tensor(I, v));
  return u;
}

/* Output 0 of the node, made rank 4 ([N, C, 1, L]) by a 1-D convolution or pool, back to
 * rank 3: the node's output (the latest value of its name). */
static bool height_dropped(Imp *I, Val *o4) {
  int64_t os[3] = {o4->shape[0], o4->shape[1], o4->shape[3]};
  Val *o = imp_net_out(I, 0, 3, os);
  const char *k = imp_kernel(I, "height_dropped", xprintf("(X: %s) -> Y: %s {\n  Y[n, c, l] = X[n, c, 0, l]\n}", imp_ty(o4), imp_ty(o)));
  imp_call(I, o->tex, k, imp_tensor(I, o4));
  return true;
}

/* Conv's optional bias B added to its output O (bias_add in O's layout). */
static bool conv_bias(Imp *I, Val *o, Val *b) {
  if (!b) return true;
  if (b->ndim != 1 || b->shape[0] != o->shape[1]) return imp_error(I, "the bias is not [%lld]", (long long)o->shape[1]);
  const char *raw = o->tex;
  o->tex = imp_name(I, xprintf("%s_b", o->name));
  imp_call(I, o->tex, o->nhwc ? "bias_add" : "bias_add_nchw", xprintf("%s, %s", raw, imp_tensor(I, b)));
  return true;
}

/* A 2-D convolution of X by W (OIHW), group G, strides S, dilations D, pads P [t, l, b, r],
 * bias B (or NULL) into output 0 of the node; its value (maybe channels last) in *OUT. */
static bool conv2d(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p, Val **out);

static bool conv3d(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p);
static bool conv2d_regions(Imp *I, Val *x, Val *w, Val *b, const int64_t *s, const int64_t *d, const int64_t *p, const int64_t *os,
                           Val **out);

static bool op_conv(Imp *I) {
  if (!imp_attrs_known(I, "auto_pad,dilations,group,kernel_shape,pads,strides") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *w = x ? imp_float_in(I, 1) : NULL, *b = imp_in(I, 2);
  if (!w) return false;
  int n = x->ndim - 2;
  if (n < 1 || n > 3 || w->ndim != x->ndim) return imp_unsupported(I, "a %d-D convolution (1-D to 3-D only)", n);
  if (!(x = imp_as_tensor(I, x, "Conv"))) return false;
  if (!kernel_shape_fits(I, w)) return false;
  int64_t g = imp_attr_i(I, "group", 1), s[3], d[3], p[6], ks[3] = {w->shape[2], n >= 2 ? w->shape[3] : 1, n == 3 ? w->shape[4] : 1};
  if (!spatial_n(I, n, "strides", s) || !spatial_n(I, n, "dilations", d) || !pads_of(I, n, x->shape + 2, ks, s, d, p)) return false;
  Val *o;
  if (n == 3) return conv3d(I, x, w, b, g, s, d, p);
  if (n == 2) return conv2d(I, x, w, b, g, s, d, p, &o);
  /* 1-D: the 2-D convolution over a height of 1 ([N, C, 1, L], filter [CO, CI, 1, K]) */
  int64_t s2[2] = {1, s[0]}, d2[2] = {1, d[0]}, p2[4] = {0, p[0], 0, p[1]};
  return conv2d(I, height_one(I, x), height_one(I, w), b, g, s2, d2, p2, &o) && height_dropped(I, o);
}

bool imp_conv2d(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p, Val **out) {
  return conv2d(I, x, w, b, g, s, d, p, out);
}

/* The bands of one spatial axis of a convolution: runs of output points (N of them) whose
 * input points are in range for the same taps LO..HI (of K; LO > HI: none), the input L
 * long, stride S, dilation D, padding P before. Their count, or 0 when more than MAX_BANDS. */
typedef struct {
  int64_t start, len, lo, hi;
} Band;

enum { MAX_BANDS = 3 };

static int conv_bands(int64_t n, int64_t l, int64_t k, int64_t s, int64_t d, int64_t p, Band *out) {
  int nb = 0;
  for (int64_t o = 0; o < n; o++) {
    int64_t lo = k, hi = -1;
    for (int64_t r = 0; r < k; r++) {
      int64_t at = o * s + r * d - p;
      if (at >= 0 && at < l) {
        if (lo == k) lo = r;
        hi = r;
      }
    }
    if (nb && out[nb - 1].lo == lo && out[nb - 1].hi == hi) {
      out[nb - 1].len++;
      continue;
    }
    if (nb == MAX_BANDS) return 0;
    out[nb++] = (Band){o, 1, lo, hi};
  }
  return nb;
}

/* A 2-D convolution (group 1, constant filter W, OIHW) whose taps mostly land in the
 * padding — DeepLab's atrous pyramid: 3 x 3 filters dilated 12, 24 and 36 over a 28 x 28
 * map, where the padded copy was 100 x 100 and most products read its zeros — as one
 * convolution per region of the output whose points read the same taps (bands of rows x
 * bands of columns), each over those taps only and reading X in place (no padding), then
 * the regions put together (channels last; one region is the output itself). Where the
 * taps in range make more than 60% of the products, or an axis has more than MAX_BANDS
 * bands, false: nothing emitted. OS: [N, CO, OH, OW]. */
static bool conv2d_regions(Imp *I, Val *x, Val *w, Val *b, const int64_t *s, const int64_t *d, const int64_t *p, const int64_t *os,
                           Val **out) {
  int64_t kh = w->shape[2], kw = w->shape[3], ci = w->shape[1], co = w->shape[0];
  Band by[MAX_BANDS], bx[MAX_BANDS];
  int ny = conv_bands(os[2], x->shape[2], kh, s[0], d[0], p[0], by), nx = conv_bands(os[3], x->shape[3], kw, s[1], d[1], p[1], bx);
  if (!ny || !nx) return false;
  double used = 0, all = (double)os[2] * (double)os[3] * (double)(kh * kw);
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < nx; j++)
      if (by[i].hi >= by[i].lo && bx[j].hi >= bx[j].lo)
        used += (double)(by[i].len * bx[j].len) * (double)((by[i].hi - by[i].lo + 1) * (bx[j].hi - bx[j].lo + 1));
  if (used > 0.6 * all) return false;
  const char *tx = imp_tensor_nhwc(I, x), *xty = xprintf("f32[%lld, %lld, %lld, %lld]", (long long)x->shape[0], (long long)x->shape[2],
                                                          (long long)x->shape[3], (long long)ci);
  Val *o = *out = imp_net_out(I, 0, 4, os);
  o->nhwc = true;
  char *params = xstrdup(""), *args = xstrdup(""), *val[MAX_BANDS][MAX_BANDS];
  int regions = 0;
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < nx; j++) {
      const Band *u = &by[i], *v = &bx[j];
      if (u->hi < u->lo || v->hi < v->lo) { /* no tap in range: zero (the bias after) */
        val[i][j] = xstrdup("0.0");
        continue;
      }
      int64_t rh = u->hi - u->lo + 1, rw = v->hi - v->lo + 1;
      Val *k = xalloc(sizeof *k); /* the region's taps, HWIO */
      *k = (Val){.name = xprintf("%s_r%d%d", w->name, i, j), .dtype = OT_FLOAT, .ndim = 4, .shape = {rh, rw, ci, co},
                 .c = imp_vals(rh * rw * ci * co)};
      for (int64_t oc = 0; oc < co; oc++)
        for (int64_t c = 0; c < ci; c++)
          for (int64_t a = 0; a < rh; a++)
            for (int64_t e = 0; e < rw; e++)
              k->c[((a * rw + e) * ci + c) * co + oc] = w->c[((oc * ci + c) * kh + u->lo + a) * kw + v->lo + e];
      /* the input point of the region's output point (y, x) and its tap (ry, rx) */
      int64_t oy = u->start * s[0] + u->lo * d[0] - p[0], ox = v->start * s[1] + v->lo * d[1] - p[1];
      const char *kn = imp_kernel(I, "conv2d_region",
                                  xprintf("(X: %s, K: %s) -> Y: f32[%lld, %lld, %lld, %lld] {\n  Y[n, y, x, co] += X[n, y * %lld + ry * %lld + %lld, "
                                          "x * %lld + rx * %lld + %lld, ci] * K[ry, rx, ci, co]\n}",
                                          xty, imp_ty(k), (long long)os[0], (long long)u->len, (long long)v->len, (long long)co,
                                          (long long)s[0], (long long)d[0], (long long)oy, (long long)s[1], (long long)d[1], (long long)ox));
      bool whole = ny == 1 && nx == 1;
      const char *rn = whole ? o->tex : imp_name(I, xprintf("%s_r%d%d", x->name, i, j));
      imp_call(I, rn, kn, xprintf("%s, %s", tx, imp_tensor(I, k)));
      if (whole) return conv_bias(I, o, b);
      params = xprintf("%s, R%d%d: f32[%lld, %lld, %lld, %lld]", params, i, j, (long long)os[0], (long long)u->len, (long long)v->len, (long long)co);
      args = xprintf("%s, %s", args, rn);
      val[i][j] = xprintf("R%d%d[n, y - %lld, x - %lld, co]", i, j, (long long)u->start, (long long)v->start);
      regions++;
    }
  /* the regions put together by nested selects, the last band of each axis the fallback */
  char *rows = NULL;
  for (int i = ny - 1; i >= 0; i--) {
    char *cols = val[i][nx - 1];
    for (int j = nx - 2; j >= 0; j--) cols = xprintf("x < %lld ? %s : %s", (long long)bx[j + 1].start, val[i][j], cols);
    rows = !rows ? cols : xprintf("y < %lld ? (%s) : (%s)", (long long)by[i + 1].start, cols, rows);
  }
  const char *kn = regions ? imp_kernel(I, "regions", xprintf("(%s) -> Y: f32[%lld, %lld, %lld, %lld] {\n  Y[n, y, x, co] = %s\n}", params + 2,
                                                              (long long)os[0], (long long)os[2], (long long)os[3], (long long)co, rows))
                           : imp_kernel(I, "zeros", xprintf("(X: %s) -> Y: f32[%lld, %lld, %lld, %lld] {\n  Y[n, y, x, co] = 0.0\n}", xty,
                                                            (long long)os[0], (long long)os[2], (long long)os[3], (long long)co));
  imp_call(I, o->tex, kn, regions ? args + 2 : tx); /* no tap reaches the input anywhere: zeros */
  return conv_bias(I, o, b);
}

static bool conv2d(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p, Val **out) {
  int64_t ks[2] = {w->shape[2], w->shape[3]};
  if (g < 1 || x->shape[1] % g || w->shape[0] % g || w->shape[1] * g != x->shape[1])
    return imp_error(I, "group %lld does not fit %lld input channels and a filter of %lld", (long long)g, (long long)x->shape[1], (long long)w->shape[1]);
  int64_t span[2] = {x->shape[2] + p[0] + p[2] - d[0] * (ks[0] - 1) - 1, x->shape[3] + p[1] + p[3] - d[1] * (ks[1] - 1) - 1};
  if (span[0] < 0 || span[1] < 0) return imp_error(I, "the output would be empty"); /* the window outgrows the padded input */
  int64_t os[4] = {x->shape[0], w->shape[0], span[0] / s[0] + 1, span[1] / s[1] + 1};
  if ((g == 1 || g == x->shape[1]) && w->c) { /* a quantized model's convolution: integer products */
    int q = g == 1 ? imp_qconv2d(I, x, w, s, d, p, NULL, out) : imp_qdepthwise(I, x, w, s, d, p, NULL, out);
    if (q) return q > 0 && conv_bias(I, *out, b);
  }
  if (g == 1 && w->c && conv2d_regions(I, x, w, b, s, d, p, os, out)) return true;
  /* NHWC with HWIO weights when the filter is a constant (permuted here) */
  bool nhwc = w->c != NULL;
  const char *tx = nhwc ? imp_tensor_nhwc(I, x) : imp_tensor(I, x), *tw;
  if (nhwc) {
    Val *k = xalloc(sizeof *k);
    int64_t co = w->shape[0], ci = w->shape[1], kh = ks[0], kwd = ks[1];
    *k = (Val){.name = w->name, .dtype = OT_FLOAT, .ndim = 4, .shape = {kh, kwd, ci, co}, .c = imp_vals(co * ci * kh * kwd)};
    for (int64_t o = 0; o < co; o++)
      for (int64_t i = 0; i < ci; i++)
        for (int64_t y = 0; y < kh; y++)
          for (int64_t x2 = 0; x2 < kwd; x2++) k->c[((y * kwd + x2) * ci + i) * co + o] = w->c[((o * ci + i) * kh + y) * kwd + x2];
    tw = imp_tensor(I, k);
  } else {
    tw = imp_tensor(I, w);
  }
  if (nhwc && g == x->shape[1] && w->shape[0] == g && w->shape[1] == 1 && p[0] == p[2] && p[1] == p[3]) {
    /* depthwise, symmetric padding: stdlib's depthwise_conv2d_nhwc, K[KH, KW, C] */
    Val *k = xalloc(sizeof *k);
    *k = (Val){.name = xprintf("%s_dw", w->name), .dtype = OT_FLOAT, .ndim = 3, .shape = {ks[0], ks[1], g}, .c = imp_vals(ks[0] * ks[1] * g)};
    for (int64_t c = 0; c < g; c++)
      for (int64_t y = 0; y < ks[0] * ks[1]; y++) k->c[y * g + c] = w->c[c * ks[0] * ks[1] + y];
    char *a = xprintf("%s, %s", tx, imp_tensor(I, k));
    a = kw(kw(kw(kw(kw(kw(a, "SH", s[0], 1), "SW", s[1], 1), "PH", p[0], 0), "PW", p[1], 0), "DH", d[0], 1), "DW", d[1], 1);
    Val *o = *out = imp_net_out(I, 0, 4, os);
    o->nhwc = true;
    imp_call(I, o->tex, "depthwise_conv2d_nhwc", a);
    return conv_bias(I, o, b);
  }
  char *a = xprintf("%s, %s", tx, tw);
  a = imp_conv_attrs(a, s, d, p);
  Val *o = *out = imp_net_out(I, 0, 4, os);
  o->nhwc = nhwc;
  const char *op = g == 1 ? (nhwc ? "conv2d_nhwc_pad" : "conv2d_nchw_pad") : nhwc ? "group_conv2d_nhwc_pad" : "group_conv2d_nchw_pad";
  imp_call(I, o->tex, op, g == 1 ? a : xprintf("%s, G = %lld", a, (long long)g));
  return conv_bias(I, o, b);
}

/* The 3-D convolution of conv3d by a filter of KD x 1 x 1 (a (2+1)-D or separable video
 * model's temporal convolution: r2plus1d's, s3d's), stride and padding in depth only, as a
 * 2-D convolution of a KD x 1 filter over the image [N, C, D, H x W]: no depth slices
 * stacked (they were KD copies of the input: s3d's first, 7 x 1 x 1 over 64 channels of 16
 * x 112 x 112, wrote 180 MB), the input channels last once ([N, D, H x W, C]), the output
 * back to NCDHW once. OD: the output's depth. */
static bool conv3d_temporal(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p,
                            int64_t od) {
  int64_t n = x->shape[0], c = x->shape[1], dz = x->shape[2], hh = x->shape[3], ww = x->shape[4], co = w->shape[0], kd = w->shape[2];
  Val *xs = xalloc(sizeof *xs);
  *xs = (Val){.name = xprintf("%s_rows", x->name), .dtype = OT_FLOAT, .ndim = 4, .shape = {n, c, dz, hh * ww}, .nhwc = true};
  const char *k = imp_kernel(I, "depth_rows", xprintf("(X: %s) -> Y: f32[%lld, %lld, %lld, %lld] {\n  Y[n, z, q, c] = X[n, c, z, q / %lld, q %% %lld]\n}",
                                                      imp_ty(x), (long long)n, (long long)dz, (long long)(hh * ww), (long long)c,
                                                      (long long)ww, (long long)ww));
  xs->tex = imp_name(I, xs->name);
  imp_call(I, xs->tex, k, imp_tensor(I, x));
  Val *ws = xalloc(sizeof *ws);
  *ws = (Val){.name = xprintf("%s_rows", w->name), .dtype = OT_FLOAT, .ndim = 4, .shape = {co, w->shape[1], kd, 1}, .c = w->c};
  int64_t s2[2] = {s[0], 1}, d2[2] = {d[0], 1}, p2[4] = {p[0], 0, p[3], 0};
  Val *o4;
  if (!conv2d(I, xs, ws, b, g, s2, d2, p2, &o4)) return false;
  int64_t os[5] = {n, co, od, hh, ww};
  Val *o = imp_net_out(I, 0, 5, os);
  const char *src = o4->nhwc ? o4->tex : imp_tensor(I, o4);
  const char *at = o4->nhwc ? xprintf("n, z, y * %lld + x, c", (long long)ww) : xprintf("n, c, z, y * %lld + x", (long long)ww);
  const char *k2 = imp_kernel(I, "rows_back", xprintf("(X: f32[%lld, %lld, %lld, %lld]) -> Y: %s {\n  Y[n, c, z, y, x] = X[%s]\n}", (long long)n,
                                                      (long long)(o4->nhwc ? od : co), (long long)(o4->nhwc ? hh * ww : od),
                                                      (long long)(o4->nhwc ? co : hh * ww), imp_ty(o), at));
  imp_call(I, o->tex, k2, src);
  return true;
}

/* A 3-D convolution (NCDHW, a constant filter) as one 2-D convolution: each output depth z
 * of each image is an image of the batch (N * OD of them), whose channels are the KD input
 * depth slices it reads, stacked within each group (g * KD * Cg + rz * Cg + ci, zero where
 * z * SD + rz * DD - PD leaves the input); the filter [CO, Cg, KD, KH, KW] becomes [CO, KD *
 * Cg, KH, KW], group G kept. So the 2-D path's NHWC convolutions, packed weights and
 * schedules serve video models (torchvision's r3d_18; X3D's channel-wise 3-D convolutions
 * as grouped 2-D ones). S, D: 3 each; P: [d, h, w begins, d, h, w ends]. */
static bool conv3d(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p) {
  if (!w->c) return imp_unsupported(I, "a 3-D convolution by a run-time filter (constant filters only)");
  int64_t n = x->shape[0], c = x->shape[1], dz = x->shape[2], co = w->shape[0], kd = w->shape[2];
  if (g < 1 || c % g || co % g || w->shape[1] * g != c)
    return imp_error(I, "group %lld does not fit %lld input channels and a filter of %lld", (long long)g, (long long)c, (long long)w->shape[1]);
  int64_t cg = c / g;
  int64_t dspan = dz + p[0] + p[3] - d[0] * (kd - 1) - 1, od = dspan / s[0] + 1;
  if (dspan < 0) return imp_error(I, "the output would be empty"); /* the window outgrows the padded input */
  if (kd > 1 && w->shape[3] == 1 && w->shape[4] == 1 && s[1] == 1 && s[2] == 1 && !p[1] && !p[2] && !p[4] && !p[5])
    return conv3d_temporal(I, x, w, b, g, s, d, p, od);
  /* the stacked slices, channels last: Y[b, h, w, rz * C + ci] */
  Val *xs = xalloc(sizeof *xs);
  *xs = (Val){.name = xprintf("%s_depths", x->name), .dtype = OT_FLOAT, .ndim = 4, .shape = {n * od, kd * c, x->shape[3], x->shape[4]},
              .nhwc = true};
  /* channel c of the stack: group c / (KD * Cg), slice rz = c / Cg % KD, channel c % Cg */
  char *zz = xprintf("(b %% %lld) * %lld + (c / %lld %% %lld) * %lld - %lld", (long long)od, (long long)s[0], (long long)cg,
                     (long long)kd, (long long)d[0], (long long)p[0]);
  char *ci = xprintf("c / %lld * %lld + c %% %lld", (long long)(kd * cg), (long long)cg, (long long)cg);
  const char *k = imp_kernel(I, "depth_slices",
                             xprintf("(X: %s) -> Y: f32[%lld, %lld, %lld, %lld] {\n  Y[b, h, w, c] = %s >= 0 && %s < %lld ? "
                                     "X[b / %lld, %s, %s, h, w] : 0.0\n}",
                                     imp_ty(x), (long long)(n * od), (long long)x->shape[3], (long long)x->shape[4], (long long)(kd * c),
                                     zz, zz, (long long)dz, (long long)od, ci, zz));
  xs->tex = imp_name(I, xs->name);
  imp_call(I, xs->tex, k, imp_tensor(I, x));
  Val *ws = xalloc(sizeof *ws);
  int64_t kh = w->shape[3], kw2 = w->shape[4];
  *ws = (Val){.name = xprintf("%s_depths", w->name), .dtype = OT_FLOAT, .ndim = 4, .shape = {co, kd * cg, kh, kw2}, .c = imp_vals(co * kd * cg * kh * kw2)};
  for (int64_t o = 0; o < co; o++)
    for (int64_t j = 0; j < cg; j++)
      for (int64_t rz = 0; rz < kd; rz++)
        for (int64_t e = 0; e < kh * kw2; e++)
          ws->c[((o * kd + rz) * cg + j) * kh * kw2 + e] = w->c[((o * cg + j) * kd + rz) * kh * kw2 + e];
  int64_t p2[4] = {p[1], p[2], p[4], p[5]};
  Val *o4;
  if (!conv2d(I, xs, ws, b, g, s + 1, d + 1, p2, &o4)) return false;
  /* back to [N, CO, OD, OH, OW] */
  int64_t os[5] = {n, co, od, o4->shape[2], o4->shape[3]};
  Val *o = imp_net_out(I, 0, 5, os);
  const char *src = o4->nhwc ? o4->tex : imp_tensor(I, o4);
  const char *at = o4->nhwc ? xprintf("n * %lld + z, y, x, c", (long long)od) : xprintf("n * %lld + z, c, y, x", (long long)od);
  const char *k2 = imp_kernel(I, "depths_back", xprintf("(X: f32[%lld, %lld, %lld, %lld]) -> Y: %s {\n  Y[n, c, z, y, x] = X[%s]\n}",
                                                         (long long)(n * od), (long long)(o4->nhwc ? o4->shape[2] : co),
                                                         (long long)(o4->nhwc ? o4->shape[3] : o4->shape[2]),
                                                         (long long)(o4->nhwc ? co : o4->shape[3]), imp_ty(o), at));
  imp_call(I, o->tex, k2, src);
  return true;
}

static bool conv_transpose_nd(Imp *I, int n, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, int64_t *p,
                              const int64_t *op, const int64_t *oshape, bool given, Val **out);
static Val *conv_transpose_gemm(Imp *I, int n, Val *x, Val *w, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p,
                                const int64_t *os);

/* ConvTranspose (1-D to 3-D, group 1): Y[n, co, y, x] sums X[n, ci, iy, ix] K[ci, co, ry, rx]
 * over the points with iy * S + ry * D = y + PT (and the same for x); a 1-D one over a
 * height of 1 (vocoders' and audio decoders' upsampling), a 3-D one the same kernel over
 * depth too (3-D U-Nets). */
static bool op_conv_transpose(Imp *I) {
  if (!imp_attrs_known(I, "auto_pad,dilations,group,kernel_shape,output_padding,output_shape,pads,strides") || !imp_one_output(I))
    return false;
  Val *x = imp_float_in(I, 0), *w = x ? imp_float_in(I, 1) : NULL, *b = imp_in(I, 2);
  if (!w) return false;
  int n = x->ndim - 2;
  if (n < 1 || n > 3 || w->ndim != x->ndim) return imp_unsupported(I, "a %d-D transposed convolution (1-D to 3-D only)", n);
  int64_t g = imp_attr_i(I, "group", 1);
  if (!(x = imp_as_tensor(I, x, "ConvTranspose"))) return false;
  if (w->shape[0] != x->shape[1]) return imp_error(I, "the filter has %lld input channels, the input %lld", (long long)w->shape[0], (long long)x->shape[1]);
  if (g < 1 || x->shape[1] % g) return imp_error(I, "group %lld does not divide the %lld input channels", (long long)g, (long long)x->shape[1]);
  if (g != 1 && !w->c) return imp_unsupported(I, "group %lld of a run-time filter (groups of constant filters only)", (long long)g);
  if (!kernel_shape_fits(I, w)) return false;
  int64_t s[3], d[3], p[6] = {0}, op[3] = {0, 0, 0}, oshape[3] = {0, 0, 0};
  if (!spatial_n(I, n, "strides", s) || !spatial_n(I, n, "dilations", d)) return false;
  int np = imp_attr_ints(I, "pads", p, 6), nop = imp_attr_ints(I, "output_padding", op, 3), nos = imp_attr_ints(I, "output_shape", oshape, 3);
  if ((np >= 0 && np != 2 * n) || (nop >= 0 && nop != n) || (nos >= 0 && nos != n))
    return imp_unsupported(I, "pads, output_padding or output_shape of another length than %d-D's", n);
  for (int i = 0; i < n; i++) /* as onnxruntime: else the padding adds points no input reaches */
    if (op[i] < 0 || op[i] >= (s[i] > d[i] ? s[i] : d[i]))
      return imp_error(I, "output_padding %lld of axis %d must be less than its stride or dilation (%lld)", (long long)op[i], i,
                       (long long)(s[i] > d[i] ? s[i] : d[i]));
  Val *o;
  if (n > 1) return conv_transpose_nd(I, n, x, w, b, g, s, d, p, op, oshape, nos >= 0, &o);
  int64_t s2[2] = {1, s[0]}, d2[2] = {1, d[0]}, p2[4] = {0, p[0], 0, p[1]}, op2[2] = {0, op[0]}, os2[2] = {1, oshape[0]};
  return conv_transpose_nd(I, 2, height_one(I, x), height_one(I, w), b, g, s2, d2, p2, op2, os2, nos >= 0, &o) && height_dropped(I, o);
}

/* Where a ConvTranspose's output point (z,) y, x meets filter point (rz,) ry, rx: the input
 * index of each axis, (y + PT - ry D) / S, and the guard that the point is one (the stride
 * divides it, in range of the input X). */
typedef struct {
  const char *ov[3], *rv[3]; /* the output's and the filter's variables */
  char *in[3];               /* the input index per axis */
  char *guard;
} CtPoint;

static CtPoint ct_point(int n, const Val *x, const int64_t *s, const int64_t *d, const int64_t *p) {
  CtPoint c = {.ov = {"y", "x"}, .rv = {"ry", "rx"}};
  if (n == 3) c.ov[0] = "z", c.ov[1] = "y", c.ov[2] = "x", c.rv[0] = "rz", c.rv[1] = "ry", c.rv[2] = "rx";
  char *mod = xstrdup(""), *range = xstrdup("");
  for (int i = 0; i < n; i++) {
    char *at = xprintf("(%s + %lld - %s * %lld)", c.ov[i], (long long)p[i], c.rv[i], (long long)d[i]);
    mod = xprintf("%s%s%s %% %lld == 0", mod, i ? " && " : "", at, (long long)s[i]);
    range = xprintf("%s && %s / %lld >= 0 && %s / %lld < %lld", range, at, (long long)s[i], at, (long long)s[i], (long long)x->shape[2 + i]);
    c.in[i] = xprintf("%s / %lld", at, (long long)s[i]);
  }
  c.guard = xprintf("%s%s", mod, range);
  return c;
}

/* The channel of conv_transpose_gemm's products P that holds output channel co (COG per
 * group of G) at tap T (of KK taps per channel; T a text): g COg KK + T COg + cog. */
static char *tap_channel(int64_t g, int64_t cog, int64_t kk, const char *t) {
  if (g == 1) return xprintf("(%s) * %lld + co", t, (long long)cog);
  return xprintf("co / %lld * %lld + (%s) * %lld + co %% %lld", (long long)cog, (long long)(cog * kk), t, (long long)cog, (long long)cog);
}

/* An N-D ConvTranspose (N = 2 or 3) by a constant filter W [CI, CO / G, K...] (G groups) as
 * onnxruntime computes it: each input point's products with every tap, P[n, iy, ix, g T +
 * t COg + cog] (t the tap, T = COg x the taps: a group's; co = g COg + cog), as a 1 x 1
 * convolution (the NHWC product path: packed weights, the CPU's product schedule; grouped
 * for G > 1; a 3-D input's depths stacked into its rows), then each output point the sum
 * of the products that land on it (col2im; one product each where the stride is the
 * filter's size, U-Nets' upsampling). The direct form summed all CI x K... products of
 * every output point, stride^N times those that land: a U-Net's 2 x 2 upsampling of 64 x
 * 64 x 64 to 32 channels took 22 ms, 0.3 ms this way. OS: [N, CO, spatial...]; the output
 * channels last in 2-D (NCDHW in 3-D); no bias. NULL: reported. */
static Val *conv_transpose_gemm(Imp *I, int n, Val *x, Val *w, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p,
                                const int64_t *os) {
  int64_t ci = w->shape[0], cog = w->shape[1], kk = 1, cig = ci / g, co = cog * g;
  for (int i = 0; i < n; i++) kk *= w->shape[2 + i];
  int64_t tg = cog * kk;
  Val *w1 = xalloc(sizeof *w1); /* [G T, CI / G, 1, 1]: output channel g T + t COg + cog */
  *w1 = (Val){.name = xprintf("%s_taps", w->name), .dtype = OT_FLOAT, .ndim = 4, .shape = {g * tg, cig, 1, 1}, .c = imp_vals(g * tg * cig)};
  for (int64_t i = 0; i < ci; i++)
    for (int64_t o = 0; o < cog; o++)
      for (int64_t t = 0; t < kk; t++) w1->c[((i / cig) * tg + t * cog + o) * cig + i % cig] = w->c[(i * cog + o) * kk + t];
  int64_t nb = x->shape[0], rows = x->shape[2] * (n == 3 ? x->shape[3] : 1), cols = x->shape[1 + n];
  Val *x2 = x;
  if (n == 3) { /* [N, CI, D H, W]: the depths stacked into the rows */
    x2 = xalloc(sizeof *x2);
    *x2 = (Val){.name = xprintf("%s_rows", x->name), .dtype = OT_FLOAT, .ndim = 4, .shape = {nb, ci, rows, cols}};
    const char *k = imp_kernel(I, "depth_rows", xprintf("(X: %s) -> Y: %s {\n  Y[n, c, r, w] = X[n, c, r / %lld, r %% %lld, w]\n}", imp_ty(x),
                                                        imp_ty(x2), (long long)x->shape[3], (long long)x->shape[3]));
    x2->tex = imp_name(I, x2->name);
    imp_call(I, x2->tex, k, imp_tensor(I, x));
  }
  int64_t one[2] = {1, 1}, zero[4] = {0, 0, 0, 0};
  Val *pv;
  if (!conv2d(I, x2, w1, NULL, g, one, one, zero, &pv)) return NULL;
  const char *ptype = pv->nhwc ? xprintf("f32[%lld, %lld, %lld, %lld]", (long long)nb, (long long)rows, (long long)cols, (long long)(g * tg))
                               : imp_ty(pv);
  Val *o = imp_net_out(I, 0, 2 + n, os);
  o->nhwc = n == 2;
  CtPoint c = ct_point(n, x, s, d, p);
  bool tiles = true; /* do the taps tile the output (one product per output point)? */
  for (int i = 0; i < n; i++) {
    int64_t k = w->shape[2 + i];
    tiles &= s[i] == k && d[i] == 1 && !p[i] && os[2 + i] == x->shape[2 + i] * k;
  }
  /* per axis the input index and the tap (where the taps tile: y / K and y % K) */
  char *in[3], *tap = xstrdup(""), *ranges = xstrdup("");
  for (int i = 0; i < n; i++) {
    long long k = (long long)w->shape[2 + i];
    in[i] = tiles ? xprintf("%s / %lld", c.ov[i], k) : c.in[i];
    char *t = tiles ? xprintf("%s %% %lld", c.ov[i], k) : xstrdup(c.rv[i]);
    tap = i ? xprintf("(%s) * %lld + %s", tap, k, t) : t;
    ranges = xprintf("%s%s%s in 0..%lld", ranges, i ? ", " : "", c.rv[i], k);
  }
  /* P's row of an input point: its depth's rows, then its row (clamped where not tiled:
   * the guard keeps it in range, which the checker does not prove of the sum) */
  char *row = n == 2 ? in[0]
              : tiles ? xprintf("(%s) * %lld + %s", in[0], (long long)x->shape[3], in[1])
                      : xprintf("clamp((%s) * %lld + %s, 0, %lld)", in[0], (long long)x->shape[3], in[1], (long long)(rows - 1));
  char *ch = tap_channel(g, cog, kk, tap);
  char *read = pv->nhwc ? xprintf("P[n, %s, %s, %s]", row, in[n - 1], ch) : xprintf("P[n, %s, %s, %s]", ch, row, in[n - 1]);
  const char *lhs = n == 2 ? "Y[n, y, x, co]" : "Y[n, co, z, y, x]";
  char *body = tiles ? xprintf("  %s = %s", lhs, read) : xprintf("  %s += %s ? %s : 0.0 where %s", lhs, c.guard, read, ranges);
  const char *oty = n == 2 ? xprintf("f32[%lld, %lld, %lld, %lld]", (long long)nb, (long long)os[2], (long long)os[3], (long long)co) : imp_ty(o);
  const char *kn = imp_kernel(I, "col2im", xprintf("(P: %s) -> Y: %s {\n%s\n}", ptype, oty, body));
  imp_call(I, o->tex, kn, pv->tex);
  return o;
}

/* The N-D ConvTranspose (N = 2 or 3) of X by W ([CI, CO, K...]): strides S, dilations D,
 * pads P [begins, ends] (replaced under auto_pad SAME_* or a GIVEN output_shape OSHAPE),
 * output_padding OP; into output 0 of the node, that value in *OUT. */
static bool conv_transpose_nd(Imp *I, int n, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, int64_t *p,
                              const int64_t *op, const int64_t *oshape, bool given, Val **out) {
  const char *ap = imp_attr_s(I, "auto_pad", "NOTSET");
  int64_t os[5] = {x->shape[0], w->shape[1] * g};
  for (int i = 0; i < n; i++) {
    int64_t full = s[i] * (x->shape[2 + i] - 1) + op[i] + (w->shape[2 + i] - 1) * d[i] + 1;
    if (given || !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
      /* as ONNX's reference: a negative total (a larger output_shape) pads the end */
      int64_t want = given ? oshape[i] : x->shape[2 + i] * s[i], total = full - want;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
      bool upper = !strcmp(ap, "SAME_UPPER");
      p[i] = upper ? half : total - half;
      p[i + n] = upper ? total - half : half;
    }
    os[2 + i] = full - p[i] - p[i + n];
    if (os[2 + i] < 1) return imp_error(I, "the output would be empty");
  }
  Val *o;
  if (w->c) {
    if (!(o = *out = conv_transpose_gemm(I, n, x, w, g, s, d, p, os))) return false;
  } else {
    CtPoint c = ct_point(n, x, s, d, p);
    char *xs = xstrdup(""), *outv = xstrdup(""), *kv = xstrdup("");
    for (int i = 0; i < n; i++) {
      xs = xprintf("%s, %s", xs, c.in[i]);
      outv = xprintf("%s, %s", outv, c.ov[i]);
      kv = xprintf("%s, %s", kv, c.rv[i]);
    }
    o = *out = imp_net_out(I, 0, 2 + n, os);
    const char *kn = imp_kernel(I, "conv_transpose",
                                xprintf("(X: %s, K: %s) -> Y: %s {\n  Y[n, co%s] += (%s ? X[n, ci%s] : 0.0) * K[ci, co%s]\n}",
                                        imp_ty(x), imp_ty(w), imp_ty(o), outv, c.guard, xs, kv));
    const char *tx = imp_tensor(I, x), *tw = imp_tensor(I, w);
    imp_call(I, o->tex, kn, xprintf("%s, %s", tx, tw));
  }
  if (n == 2 || !b) return conv_bias(I, o, b);
  if (b->ndim != 1 || b->shape[0] != os[1]) return imp_error(I, "the bias is not [%lld]", (long long)os[1]);
  const char *raw = o->tex, *kb = imp_kernel(I, "bias_add_5d", xprintf("(X: %s, B: %s) -> Y: %s {\n  Y[n, c, z, y, x] = X[n, c, z, y, x] + B[c]\n}",
                                                                    imp_ty(o), imp_ty(b), imp_ty(o)));
  o->tex = imp_name(I, xprintf("%s_b", o->name));
  imp_call(I, o->tex, kb, xprintf("%s, %s", raw, imp_tensor(I, b)));
  return true;
}

static bool pool2d(Imp *I, bool max, Val *x, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *p, Val **out);

/* A 3-D max or average pool (NCDHW) as a kernel of the node's shapes: the input padded
 * (with the lowest float for max; ceil_mode's extra end too), then the window's max, or its
 * sum over the points counted (count_include_pad: the padded ones, ceil_mode's aside). */
static bool pool3d(Imp *I, bool max, Val *x, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *p) {
  int64_t os[5] = {x->shape[0], x->shape[1]}, ps[3];
  bool ceil = imp_attr_i(I, "ceil_mode", 0), cip = imp_attr_i(I, "count_include_pad", 0);
  char *pin = xstrdup(""), *pat = xstrdup(""), *win = xstrdup(""), *where = xstrdup(""), *cnt = xstrdup("");
  const char *o3 = "zyx", *r3[3] = {"rz", "ry", "rx"}, *i3 = "dhw";
  if (!max && (d[0] != 1 || d[1] != 1 || d[2] != 1)) return imp_unsupported(I, "dilations in an average pool");
  for (int i = 0; i < 3; i++) {
    int64_t len = x->shape[2 + i], span = len + p[i] + p[i + 3] - ((k[i] - 1) * d[i] + 1);
    os[2 + i] = pool_steps(span, s[i], ceil) + 1;
    if (ceil && (os[2 + i] - 1) * s[i] >= len + p[i]) os[2 + i]--;
    if (os[2 + i] < 1) return imp_error(I, "the output would be empty");
    int64_t extra = (os[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - (len + p[i] + p[i + 3]);
    ps[i] = len + p[i] + p[i + 3] + (extra > 0 ? extra : 0);
    const char *sep = i ? ", " : "";
    pin = xprintf("%s%s%c >= %lld && %c < %lld", pin, i ? " && " : "", i3[i], (long long)p[i], i3[i], (long long)(len + p[i]));
    pat = xprintf("%s%s%c - %lld", pat, sep, i3[i], (long long)p[i]);
    win = xprintf("%s%s%c * %lld + %s * %lld", win, sep, o3[i], (long long)s[i], r3[i], (long long)d[i]);
    where = xprintf("%s%s%s in 0..%lld", where, sep, r3[i], (long long)k[i]);
    int64_t lo = cip ? 0 : p[i], hi = cip ? len + p[i] + p[i + 3] : len + p[i];
    cnt = xprintf("%s%s(min(%c * %lld + %lld, %lld) - max(%c * %lld, %lld))", cnt, i ? " * " : "", o3[i], (long long)s[i],
                  (long long)k[i], (long long)hi, o3[i], (long long)s[i], (long long)lo);
  }
  Val *o = imp_net_out(I, 0, 5, os);
  char *pdims = xprintf("%lld, %lld, %lld, %lld, %lld", (long long)os[0], (long long)os[1], (long long)ps[0], (long long)ps[1], (long long)ps[2]);
  char *body = xprintf("  tensor P: f32[%s]\n  P[n, c, d, h, w] = %s ? X[n, c, %s] : %s\n", pdims, pin, pat, max ? "-3.4028234e38" : "0.0");
  if (max) {
    body = xprintf("%s  Y[n, c, z, y, x] max= P[n, c, %s] where %s", body, win, where);
  } else {
    char *odims = xprintf("%lld, %lld, %lld, %lld, %lld", (long long)os[0], (long long)os[1], (long long)os[2], (long long)os[3], (long long)os[4]);
    body = xprintf("%s  tensor S: f32[%s]\n  S[n, c, z, y, x] += P[n, c, %s] where %s\n  Y[n, c, z, y, x] = S[n, c, z, y, x] / f32(%s)",
                   body, odims, win, where, cnt);
  }
  const char *kn = imp_kernel(I, max ? "max_pool3d" : "avg_pool3d", xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

static bool pool_indices(Imp *I, Val *x, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *p,
                         const int64_t *os);

static bool op_pool(Imp *I, bool max) {
  bool indices = max && I->node->n_output > 1 && *I->node->output[1]; /* MaxPool's second output */
  if (!imp_attrs_known(I, max ? "auto_pad,ceil_mode,dilations,kernel_shape,pads,storage_order,strides"
                          : "auto_pad,ceil_mode,count_include_pad,kernel_shape,pads,strides") ||
      (!indices && !imp_one_output(I)))
    return false;
  if (indices && !imp_two_outputs(I)) return false;
  /* a max pool of quantized values (uint8 / int8 at run time, held as exact f32): one of
   * them, of their type (a QOperator model's MaxPool) */
  Val *in = imp_in(I, 0);
  bool q = max && in && !in->c && (in->dtype == OT_UINT8 || in->dtype == OT_INT8) && in->ndim == 4;
  Val *x = q ? in : imp_float_in(I, 0);
  if (!x) return false;
  int n = x->ndim - 2;
  if (n < 1 || n > 3) return imp_unsupported(I, "a %d-D pool (1-D to 3-D only)", n);
  int64_t k[3] = {1, 1, 1}, s[3], d[3], p[6];
  if (imp_attr_ints(I, "kernel_shape", k, 3) != n) return imp_error(I, "kernel_shape must have %d values", n);
  if (!spatial_n(I, n, "strides", s) || !spatial_n(I, n, "dilations", d) || !pads_of(I, n, x->shape + 2, k, s, d, p)) return false;
  for (int i = 0; i < n; i++) /* onnxruntime's and PyTorch's rule: no window wholly in the padding */
    if (p[i] >= k[i] || p[i + n] >= k[i])
      return imp_error(I, "pads (%lld, %lld) of axis %d must be smaller than the kernel (%lld)", (long long)p[i], (long long)p[i + n], i, (long long)k[i]);
  if (indices && (n != 2 || q)) return imp_unsupported(I, "the indices of a %s pool", q ? "quantized" : n == 1 ? "1-D" : "3-D");
  if (n == 3) return pool3d(I, max, x, k, s, d, p);
  if (n == 1) { /* the 2-D pool over a height of 1, then the height dropped */
    int64_t k2[2] = {1, k[0]}, s2[2] = {1, s[0]}, d2[2] = {1, d[0]}, p2[4] = {0, p[0], 0, p[1]};
    Val *o;
    return pool2d(I, max, height_one(I, x), k2, s2, d2, p2, &o) && height_dropped(I, o);
  }
  Val *o;
  if (!pool2d(I, max, x, k, s, d, p, &o)) return false;
  if (q) o->dtype = x->dtype, o->fint = true;
  return !indices || pool_indices(I, x, k, s, d, p, o->shape);
}

/* MaxPool's Indices (output 2, int64): per output the flat NCHW index of the input element
 * that is its maximum, the first in the window's row-major order on ties (argmax=; padding
 * never wins), as onnxruntime and PyTorch's return_indices give them; storage_order 1
 * counts H and W column-major (n, c, w, h). OS: the output's logical shape. (The pooled
 * values do not depend on storage_order.) */
static bool pool_indices(Imp *I, Val *x, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *p,
                         const int64_t *os) {
  long long H = x->shape[2], W = x->shape[3];
  char *h = xprintf("y * %lld - %lld + ry * %lld", (long long)s[0], (long long)p[0], (long long)d[0]);
  char *w = xprintf("x * %lld - %lld + rx * %lld", (long long)s[1], (long long)p[1], (long long)d[1]);
  Val *o = imp_net_out(I, 1, 4, os);
  o->dtype = OT_INT64;
  char *hi = xprintf("y * %lld - %lld + T[n, c, y, x] / %lld * %lld", (long long)s[0], (long long)p[0], (long long)k[1], (long long)d[0]);
  char *wi = xprintf("x * %lld - %lld + T[n, c, y, x] %% %lld * %lld", (long long)s[1], (long long)p[1], (long long)k[1], (long long)d[1]);
  bool col = imp_attr_i(I, "storage_order", 0) != 0;
  const char *kn = imp_kernel(I, col ? "max_pool_indices_col" : "max_pool_indices",
                              xprintf("(X: %s) -> Y: %s {\n  tensor T: i64[%s]\n"
                                      "  T[n, c, y, x] argmax= %s >= 0 && %s < %lld && %s >= 0 && %s < %lld ? X[n, c, clamp(%s, 0, %lld), "
                                      "clamp(%s, 0, %lld)] : %s where ry in 0..%lld, rx in 0..%lld\n"
                                      "  Y[n, c, y, x] = ((n * %lld + c) * %lld + %s) * %lld + %s\n}",
                                      imp_ty(x), imp_ty(o), imp_dims_text(os, 4), h, h, H, w, w, W, h, H - 1, w, W - 1,
                                      imp_flit(-INFINITY), (long long)k[0], (long long)k[1], (long long)x->shape[1],
                                      col ? W : H, col ? wi : hi, col ? H : W, col ? hi : wi));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* The 2-D pool of X (kernel K, strides S, dilations D, pads P [t, l, b, r]) into output 0
 * of the node, in X's layout; that value in *OUT. */
static bool pool2d(Imp *I, bool max, Val *x, const int64_t *k, const int64_t *s, const int64_t *d, const int64_t *p, Val **out) {
  int64_t os[4] = {x->shape[0], x->shape[1]}, extra[2] = {0};
  for (int i = 0; i < 2; i++) {
    int64_t span = x->shape[2 + i] + p[i] + p[i + 2] - ((k[i] - 1) * d[i] + 1);
    os[2 + i] = pool_steps(span, s[i], imp_attr_i(I, "ceil_mode", 0)) + 1;
    if (imp_attr_i(I, "ceil_mode", 0) && (os[2 + i] - 1) * s[i] >= x->shape[2 + i] + p[i]) os[2 + i]--;
    extra[i] = (os[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - (x->shape[2 + i] + p[i] + p[i + 2]);
    if (extra[i] < 0) extra[i] = 0;
    if (os[2 + i] < 1) return imp_error(I, "the output would be empty");
  }
  char *a = xstrdup(x->nhwc ? x->tex : imp_tensor(I, x));
  a = kw(kw(kw(kw(kw(kw(a, "FH", k[0], 1), "FW", k[1], 1), "SH", s[0], 1), "SW", s[1], 1), "PT", p[0], 0), "PL", p[1], 0);
  a = kw(kw(a, "PB", p[2] + extra[0], 0), "PR", p[3] + extra[1], 0);
  if (max) {
    a = kw(kw(a, "DH", d[0], 1), "DW", d[1], 1);
  } else {
    if (d[0] != 1 || d[1] != 1) return imp_unsupported(I, "dilations in an average pool");
    bool cip = imp_attr_i(I, "count_include_pad", 0);
    a = kw(kw(a, "CT", cip ? 0 : p[0], -1), "CB", cip ? x->shape[2] + p[0] + p[2] : x->shape[2] + p[0], -1);
    a = kw(kw(a, "CL", cip ? 0 : p[1], -1), "CR", cip ? x->shape[3] + p[1] + p[3] : x->shape[3] + p[1], -1);
  }
  Val *o = *out = imp_net_out(I, 0, 4, os);
  o->nhwc = x->nhwc; /* pools keep the layout they are given */
  imp_call(I, o->tex, max ? (o->nhwc ? "max_pool2d_nhwc_pad" : "max_pool2d_nchw_pad") : o->nhwc ? "avg_pool2d_nhwc_pad" : "avg_pool2d_nchw_pad", a);
  return true;
}

/* The axes MASK of X reduced, as kernel text: X's index with r (reduced) and i (kept)
 * names, the reduced ranges, the kept indices (KEPT, as a read; KLHS, as a written
 * tensor's: z0 over [1] when nothing is kept) and dimensions, and the reduced count. */
typedef struct Reduced {
  char *src, *where, *kept, *klhs, *kdims;
  int64_t cnt;
} Reduced;

static Reduced reduced_axes(const Val *x, const bool *mask) {
  Reduced R = {xstrdup(""), xstrdup(""), xstrdup(""), NULL, xstrdup(""), 1};
  int nk = 0;
  for (int d = 0; d < x->ndim; d++) {
    R.src = xprintf("%s%s%s%d", R.src, d ? ", " : "", mask[d] ? "r" : "i", d);
    if (mask[d]) {
      R.cnt *= x->shape[d];
      R.where = xprintf("%s%sr%d in 0..%lld", R.where, *R.where ? ", " : "", d, (long long)x->shape[d]);
    } else {
      R.kept = xprintf("%s%si%d", R.kept, nk ? ", " : "", d);
      R.kdims = xprintf("%s%s%lld", R.kdims, nk++ ? ", " : "", (long long)x->shape[d]);
    }
  }
  R.klhs = R.kept;
  if (!nk) R.kdims = xstrdup("1"), R.kept = xstrdup("0"), R.klhs = xstrdup("z0");
  return R;
}

/* A normalization's body: X less its mean over the axes MASK, over the root of their
 * variance + EPS (text), then TAIL (the scale and bias, or nothing). LayerNormalization,
 * InstanceNormalization and MeanVarianceNormalization. */
static char *norm_body(const Val *x, const bool *mask, const char *eps, const char *tail) {
  Reduced R = reduced_axes(x, mask);
  char *all = imp_idx("i", x->ndim), *n = imp_flit((double)R.cnt);
  return xprintf("  tensor S: f32[%s]\n  tensor Mu: f32[%s]\n  tensor V: f32[%s]\n"
                 "  S[%s] += X[%s] where %s\n  Mu[%s] = S[%s] / %s\n"
                 "  V[%s] += (X[%s] - Mu[%s]) * (X[%s] - Mu[%s]) where %s\n"
                 "  Y[%s] = (X[%s] - Mu[%s]) / sqrt(V[%s] / %s + %s)%s",
                 R.kdims, R.kdims, R.kdims, R.klhs, R.src, R.where, R.klhs, R.kept, n, R.klhs, R.src, R.kept, R.src,
                 R.kept, R.where, all, all, R.kept, R.kept, n, eps, tail);
}

/* Reductions of X over the axes MASK: KIND "sum", "mean", "max", "min", "sumsq"; keepdims. */
static bool reduce(Imp *I, Val *x, const bool *mask, bool keep, const char *kind) {
  int r = x->ndim, no = 0;
  int64_t os[HT_MAX_DIMS];
  char *lhs = xstrdup(""); /* Y's index: the kept axes, and the reduced ones as z (KEEP) */
  for (int d = 0; d < r; d++) {
    if (mask[d] && !keep) continue;
    lhs = xprintf("%s%s%s%d", lhs, no ? ", " : "", mask[d] ? "z" : "i", d);
    os[no++] = mask[d] ? 1 : x->shape[d];
  }
  if (!no) {
    lhs = xstrdup("z0");
    os[0] = 1;
  }
  /* S, the sum before POST: indexed by the kept axes (a full reduction: z0 over [1]) */
  Reduced R = reduced_axes(x, mask);
  char *rhs = R.src, *where = R.where, *sidx = R.kept, *slhs = R.klhs, *sdims = R.kdims;
  int64_t cnt = R.cnt;
  const char *acc = xprintf("X[%s]", rhs);
  if (!strcmp(kind, "sumsq") || !strcmp(kind, "l2")) acc = xprintf("%s * %s", acc, acc);
  if (!strcmp(kind, "l1")) acc = xprintf("abs(%s)", acc);
  const char *op = !strcmp(kind, "max") ? "max=" : !strcmp(kind, "min") ? "min=" : !strcmp(kind, "prod") ? "*=" : "+=";
  /* what the sum S becomes (NULL: the reduction is the result) */
  const char *post = !strcmp(kind, "mean")     ? xprintf("S[%s] / %s", sidx, imp_flit((double)cnt))
                     : !strcmp(kind, "l2")     ? xprintf("sqrt(S[%s])", sidx)
                     : !strcmp(kind, "logsum") ? xprintf("log(S[%s])", sidx)
                                               : NULL;
  Val *o = imp_net_out(I, 0, no, os);
  char *body;
  if (!strcmp(kind, "logsumexp")) { /* log(sum(exp(x - max))) + max */
    body = xprintf("  tensor M: f32[%s]\n  tensor S: f32[%s]\n  M[%s] max= %s where %s\n"
                   "  S[%s] += exp(%s - M[%s]) where %s\n  Y[%s] = M[%s] + log(S[%s])",
                   sdims, sdims, slhs, acc, where, slhs, acc, sidx, where, lhs, sidx,
                   sidx);
  } else if (post) {
    body = xprintf("  tensor S: f32[%s]\n  S[%s] += %s where %s\n  Y[%s] = %s", sdims, slhs, acc,
                   where, lhs, post);
  } else {
    body = xprintf("  Y[%s] %s %s where %s", lhs, op, acc, where);
  }
  const char *k = imp_kernel(I, xprintf("reduce_%s", kind), xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* A reduction over H and W of a channels-last X ([N, H, W, C] holding logical NCHW): KEEP,
 * [N, 1, 1, C], still channels last; else [N, C]. */
static bool reduce_hw_nhwc(Imp *I, Val *x, bool keep, const char *kind) {
  Val p = {.name = x->name, .dtype = OT_FLOAT, .ndim = 4, .shape = {x->shape[0], x->shape[2], x->shape[3], x->shape[1]}, .tex = x->tex};
  bool mask[HT_MAX_DIMS] = {false, true, true, false};
  if (!reduce(I, &p, mask, keep, kind)) return false;
  if (keep) {
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    int64_t logical[4] = {x->shape[0], x->shape[1], 1, 1};
    memcpy(o->shape, logical, sizeof logical);
    o->nhwc = true;
  }
  return true;
}

/* The output element of X's element I, STRIDE each axis's step in the output (0: reduced). */
static int64_t reduced_at(const Val *x, const int64_t *stride, int64_t i) {
  int64_t o = 0;
  for (int d = x->ndim - 1; d >= 0; d--) o += (i % x->shape[d]) * stride[d], i /= x->shape[d];
  return o;
}

/* A reduction of a constant X (the weight norm of a model exported with weight_norm, say):
 * folded at import, summed in double and rounded to f32 once. */
static bool fold_reduce(Imp *I, const Val *x, const bool *mask, bool keep, const char *kind) {
  int r = x->ndim, no = 0;
  int64_t os[HT_MAX_DIMS], stride[HT_MAX_DIMS] = {0}, n = 1;
  for (int d = r - 1; d >= 0; d--)
    if (!mask[d]) stride[d] = n, n *= x->shape[d];
  for (int d = 0; d < r; d++) /* a full reduction without keepdims: a scalar (rank 0), as ONNX's */
    if (!mask[d] || keep) os[no++] = mask[d] ? 1 : x->shape[d];
  bool mx = !strcmp(kind, "max"), mn = !strcmp(kind, "min"), prod = !strcmp(kind, "prod");
  bool lse = !strcmp(kind, "logsumexp"), l1 = !strcmp(kind, "l1");
  bool sq = !strcmp(kind, "sumsq") || !strcmp(kind, "l2");
  double *acc = imp_vals(n), *m = imp_vals(n), *c = imp_vals(n);
  for (int64_t j = 0; j < n; j++) acc[j] = mx ? -INFINITY : mn ? INFINITY : prod ? 1 : 0, m[j] = -INFINITY;
  int64_t total = val_numel(x), cnt = n ? total / n : 0;
  for (int64_t i = 0, o; lse && i < total; i++) /* the maximum first, as the kernel subtracts it */
    o = reduced_at(x, stride, i), m[o] = fmax(m[o], x->c[i]);
  for (int64_t i = 0; i < total; i++) {
    int64_t o = reduced_at(x, stride, i);
    double v = x->c[i];
    acc[o] = mx     ? fmax(acc[o], v)
             : mn   ? fmin(acc[o], v)
             : prod ? acc[o] * v
             : lse  ? acc[o] + exp(v - m[o])
                    : acc[o] + (l1 ? fabs(v) : sq ? v * v : v);
  }
  for (int64_t j = 0; j < n; j++) {
    double v = acc[j];
    if (!strcmp(kind, "mean")) v /= (double)cnt;
    if (!strcmp(kind, "l2")) v = sqrt(v);
    if (!strcmp(kind, "logsum")) v = log(v);
    if (lse) v = m[j] + log(v);
    c[j] = (float)v;
  }
  free(acc);
  free(m);
  imp_const_out(I, 0, OT_FLOAT, no, os, c);
  return true;
}

static bool op_reduce(Imp *I, const char *kind) {
  if (!imp_attrs_known(I, "axes,keepdims,noop_with_empty_axes") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  int64_t axes[HT_MAX_DIMS];
  int na = imp_attr_ints(I, "axes", axes, HT_MAX_DIMS);
  Val *av = imp_in(I, 1);
  if (av) {
    if (!(av = imp_const_in(I, 1, "axes"))) return false;
    na = (int)val_numel(av) > HT_MAX_DIMS ? HT_MAX_DIMS : (int)val_numel(av);
    for (int i = 0; i < na; i++) axes[i] = (int64_t)av->c[i];
  }
  bool mask[HT_MAX_DIMS] = {0};
  if (na <= 0) {
    if (imp_attr_i(I, "noop_with_empty_axes", 0)) return imp_alias(I, x);
    for (int d = 0; d < x->ndim; d++) mask[d] = true;
  }
  for (int i = 0; i < na; i++) {
    int a = imp_axis_of(I, axes[i], x->ndim);
    if (a < 0) return false;
    mask[a] = true;
  }
  bool keep = imp_attr_i(I, "keepdims", 1) != 0;
  if (x->c) return fold_reduce(I, x, mask, keep, kind);
  /* over H and W of a channels-last value (a squeeze-excitation's mean): in place, not
   * turned to NCHW first */
  if (x->nhwc && x->ndim == 4 && !mask[0] && !mask[1] && mask[2] && mask[3]) return reduce_hw_nhwc(I, x, keep, kind);
  return reduce(I, x, mask, keep, kind);
}

static bool op_global_pool(Imp *I, const char *kind) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (x->ndim < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", x->ndim);
  if (x->nhwc) return reduce_hw_nhwc(I, x, true, kind);
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = 2; d < x->ndim; d++) mask[d] = true;
  return reduce(I, x, mask, true, kind);
}

/* Softmax (LOG: LogSoftmax) over the axes from AXIS (opset < 13: all that follow; else one). */
static bool op_softmax(Imp *I, bool log_) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  int a = imp_axis_of(I, imp_attr_i(I, "axis", I->opset >= 13 ? -1 : 1), x->ndim ? x->ndim : 1);
  if (a < 0) return false;
  int r = x->ndim;
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = 0; d < r; d++) mask[d] = I->opset >= 13 ? d == a : d >= a;
  Reduced R = reduced_axes(x, mask);
  char *all = imp_idx("i", r), *ridx = R.src, *where = R.where, *sd = R.kdims, *sidx = R.kept, *slhs = R.klhs;
  Val *o = imp_net_out(I, 0, x->ndim, x->shape);
  char *body = xprintf("  tensor M: f32[%s]\n  tensor E: f32[%s]\n  tensor S: f32[%s]\n"
                       "  M[%s] max= X[%s] where %s\n  E[%s] = exp(X[%s] - M[%s])\n  S[%s] += E[%s] where %s\n",
                       sd, imp_dims_text(x->shape, r), sd, slhs, ridx, where, all, all, sidx, slhs, ridx, where);
  body = log_ ? xprintf("%s  Y[%s] = X[%s] - M[%s] - log(S[%s])", body, all, all, sidx, sidx)
              : xprintf("%s  Y[%s] = E[%s] / S[%s]", body, all, all, sidx);
  const char *k = imp_kernel(I, log_ ? "log_softmax" : "softmax", xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* Gemm: Y = alpha * A' B' + beta * C. */
static bool op_gemm(Imp *I) {
  if (!imp_attrs_known(I, "alpha,beta,transA,transB") || !imp_one_output(I)) return false;
  Val *a = imp_float_in(I, 0), *b = a ? imp_float_in(I, 1) : NULL, *c = imp_in(I, 2);
  if (!b) return false;
  if (a->ndim != 2 || b->ndim != 2) return imp_error(I, "A and B must be matrices");
  bool ta = imp_attr_i(I, "transA", 0), tb = imp_attr_i(I, "transB", 0);
  double alpha = imp_attr_f(I, "alpha", 1), beta = imp_attr_f(I, "beta", 1);
  int64_t m = a->shape[ta], k = a->shape[!ta], n = b->shape[!tb];
  if (b->shape[tb] != k) return imp_error(I, "A' is [%lld, %lld] but B' has %lld rows", (long long)m, (long long)k, (long long)b->shape[tb]);
  int64_t os[2] = {m, n};
  Val *o = imp_net_out(I, 0, 2, os);
  if (!ta && b->c && !a->c && alpha == 1 && imp_qdense(I, a, b, tb, o)) {
    /* a quantized model's product: integer products */
  } else if (!ta && b->c && !a->c) {
    /* dense with [K, N] weights: B transposed (and scaled by alpha) at import */
    Val *w = xalloc(sizeof *w);
    *w = (Val){.name = b->name, .dtype = OT_FLOAT, .ndim = 2, .shape = {k, n}, .c = imp_vals(k * n)};
    for (int64_t i = 0; i < k; i++)
      for (int64_t j = 0; j < n; j++) w->c[i * n + j] = (float)(alpha * b->c[tb ? j * k + i : i * n + j]);
    const char *na = imp_tensor(I, a);
    imp_call(I, o->tex, "dense", xprintf("%s, %s", na, imp_tensor(I, w)));
    alpha = 1;
  } else {
    const char *kn = imp_kernel(I, "gemm", xprintf("(A: %s, B: %s) -> Y: %s {\n  Y[i, j] += A[%s] * B[%s] where k in 0..%lld\n}",
                                                   imp_ty(a), imp_ty(b), imp_ty(o), ta ? "k, i" : "i, k", tb ? "j, k" : "k, j", (long long)k));
    const char *na = imp_tensor(I, a), *nb = imp_tensor(I, b);
    imp_call(I, o->tex, kn, xprintf("%s, %s", na, nb));
  }
  /* alpha, then beta * C: values of the same ONNX name (the latest is the output) */
  if (alpha != 1) {
    Val *xs[1] = {o};
    if (!imp_ew(I, "scale", xs, 1, xprintf("%s * $0", imp_flit((float)alpha)))) return false;
    o = VEC_AT(I->vals, I->vals.len - 1);
  }
  if (c && beta != 0) {
    if (c->ndim == 1 && c->shape[0] == n && beta == 1) {
      Val *s = imp_net_out(I, 0, 2, os);
      imp_call(I, s->tex, "bias_add_2d", xprintf("%s, %s", o->tex, imp_tensor(I, c)));
    } else {
      Val *xs[2] = {o, c};
      if (!imp_ew_to(I, "gemm_bias", xs, 2, beta == 1 ? "$0 + $1" : xprintf("$0 + %s * $1", imp_flit((float)beta)), os, 2)) return false;
    }
  }
  return true;
}

bool imp_matmul_plan(Imp *I, const Val *a, const Val *b, MatmulPlan *p) {
  if (a->ndim < 1 || b->ndim < 1) return imp_error(I, "a scalar operand");
  int ra = a->ndim, rb = b->ndim;
  int64_t kb = rb == 1 ? b->shape[0] : b->shape[rb - 2];
  p->k = a->shape[ra - 1];
  if (p->k != kb) return imp_error(I, "inner dimensions %lld and %lld differ", (long long)p->k, (long long)kb);
  int64_t batch[HT_MAX_DIMS];
  int nb = 0;
  if (!imp_broadcast(I, a->shape, ra > 2 ? ra - 2 : 0, b->shape, rb > 2 ? rb - 2 : 0, batch, &nb)) return false;
  p->no = nb;
  memcpy(p->os, batch, sizeof(int64_t) * (size_t)nb);
  if (ra > 1) p->os[p->no++] = a->shape[ra - 2];
  if (rb > 1) p->os[p->no++] = b->shape[rb - 1];
  /* index names: batch b0.., rows i, columns j, reduction k */
  char *lhs = xstrdup(""), *ia = xstrdup(""), *ib = xstrdup("");
  for (int d = 0; d < nb; d++) lhs = xprintf("%s%sb%d", lhs, d ? ", " : "", d);
  if (ra > 1) lhs = xprintf("%s%si", lhs, nb ? ", " : "");
  if (rb > 1) lhs = xprintf("%s%sj", lhs, *lhs ? ", " : "");
  if (!*lhs) lhs = xstrdup("z");
  for (int d = 0; d < ra - 2; d++) {
    int od = d + nb - (ra - 2);
    ia = xprintf("%s%s", ia, a->shape[d] == 1 && batch[od] != 1 ? "0, " : xprintf("b%d, ", od));
  }
  for (int d = 0; d < rb - 2; d++) {
    int od = d + nb - (rb - 2);
    ib = xprintf("%s%s", ib, b->shape[d] == 1 && batch[od] != 1 ? "0, " : xprintf("b%d, ", od));
  }
  p->lhs = lhs;
  p->ia = xprintf("%s%sk", ia, ra > 1 ? "i, " : "");
  p->ib = xprintf("%sk%s", ib, rb > 1 ? ", j" : "");
  return true;
}

/* MatMul: numpy's matmul (batched, broadcasting, 1-D operands). */
static bool op_matmul(Imp *I) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *a = imp_float_in(I, 0), *b = a ? imp_float_in(I, 1) : NULL;
  MatmulPlan p;
  if (!b || !imp_matmul_plan(I, a, b, &p)) return false;
  Val *o = imp_net_out(I, 0, p.no, p.os);
  if (b->c && !a->c && a->ndim >= 2 && b->ndim == 2 && imp_qdense(I, a, b, false, o)) return true;
  if (a->ndim == 2 && b->ndim == 2 && !a->c) {
    const char *na = imp_tensor(I, a);
    imp_call(I, o->tex, "dense", xprintf("%s, %s", na, imp_tensor(I, b)));
    return true;
  }
  const char *kn = imp_kernel(I, "matmul", xprintf("(A: %s, B: %s) -> Y: %s {\n  Y[%s] += A[%s] * B[%s] where k in 0..%lld\n}",
                                                   imp_ty(a), imp_ty(b), imp_ty(o), p.lhs, p.ia, p.ib, (long long)p.k));
  const char *ta = imp_tensor(I, a), *tb = imp_tensor(I, b);
  imp_call(I, o->tex, kn, xprintf("%s, %s", ta, tb));
  return true;
}

static bool op_batch_norm(Imp *I) {
  if (!imp_attrs_known(I, "epsilon,momentum,training_mode,spatial,is_test")) return false;
  if (imp_attr_i(I, "training_mode", 0)) return imp_unsupported(I, "training_mode 1 (inference only)");
  if (imp_attr_i(I, "spatial", 1) != 1) return imp_unsupported(I, "spatial 0 (statistics per element, BatchNormalization-7)");
  if (!imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *p[4];
  if (!x) return false;
  if (x->ndim < 2) return imp_error(I, "the input has no channel axis");
  for (int i = 0; i < 4; i++) {
    if (!(p[i] = imp_float_in(I, i + 1))) return false;
    if (p[i]->ndim != 1 || p[i]->shape[0] != x->shape[1]) return imp_error(I, "input %d is not [%lld]", i + 2, (long long)x->shape[1]);
  }
  double eps = (float)imp_attr_f(I, "epsilon", 1e-5);
  if (x->ndim == 4 && p[0]->c && p[1]->c && p[2]->c && p[3]->c) {
    /* folded: S = gamma / sqrt(var + eps), B = beta - mean * S */
    int64_t c = x->shape[1];
    Val *s = xalloc(sizeof *s), *b = xalloc(sizeof *b);
    *s = (Val){.name = xprintf("%s_scale", p[0]->name), .dtype = OT_FLOAT, .ndim = 1, .shape = {c}, .c = imp_vals(c)};
    *b = (Val){.name = xprintf("%s_shift", p[1]->name), .dtype = OT_FLOAT, .ndim = 1, .shape = {c}, .c = imp_vals(c)};
    for (int64_t i = 0; i < c; i++) {
      s->c[i] = (float)(p[0]->c[i] / sqrt(p[3]->c[i] + eps));
      b->c[i] = (float)(p[1]->c[i] - p[2]->c[i] * s->c[i]);
    }
    Val *o = imp_net_out(I, 0, 4, x->shape);
    o->nhwc = x->nhwc;
    const char *tx = x->nhwc ? x->tex : imp_tensor(I, x), *ts = imp_tensor(I, s), *tb = imp_tensor(I, b);
    imp_call(I, o->tex, x->nhwc ? "batch_norm" : "batch_norm_nchw", xprintf("%s, %s, %s", tx, ts, tb));
    return true;
  }
  char *all = imp_idx("i", x->ndim);
  Val *o = imp_net_out(I, 0, x->ndim, x->shape);
  char *cty = xprintf("f32[%lld]", (long long)x->shape[1]);
  const char *kn = imp_kernel(I, "batch_norm", xprintf("(X: %s, S: %s, B: %s, M: %s, V: %s) -> Y: %s {\n"
                                                       "  Y[%s] = (X[%s] - M[i1]) / sqrt(V[i1] + %s) * S[i1] + B[i1]\n}",
                                                       imp_ty(x), cty, cty, cty, cty, imp_ty(o), all, all, imp_flit(eps)));
  const char *t[4];
  for (int i = 0; i < 4; i++) t[i] = imp_tensor(I, p[i]);
  const char *tx = imp_tensor(I, x);
  imp_call(I, o->tex, kn, xprintf("%s, %s, %s, %s, %s", tx, t[0], t[1], t[2], t[3]));
  return true;
}

/* LayerNormalization's optional outputs 2 and 3 (K 1, 2): the mean of X over the axes
 * MASK, or the inverse of the root of the variance + EPS, with the reduced axes kept as 1
 * (z names over [1]), each by a kernel of its own. */
static void layer_norm_stat(Imp *I, const Val *x, const bool *mask, const char *eps, int k) {
  Reduced R = reduced_axes(x, mask);
  int64_t os[HT_MAX_DIMS];
  char *lhs = xstrdup("");
  for (int d = 0; d < x->ndim; d++) {
    lhs = xprintf("%s%s%s%d", lhs, d ? ", " : "", mask[d] ? "z" : "i", d);
    os[d] = mask[d] ? 1 : x->shape[d];
  }
  Val *o = imp_net_out(I, k, x->ndim, os);
  char *n = imp_flit((double)R.cnt);
  char *body = xprintf("  tensor S: f32[%s]\n  S[%s] += X[%s] where %s\n", R.kdims, R.klhs, R.src, R.where);
  if (k == 1) body = xprintf("%s  Y[%s] = S[%s] / %s", body, lhs, R.kept, n);
  else
    body = xprintf("%s  tensor Mu: f32[%s]\n  tensor V: f32[%s]\n  Mu[%s] = S[%s] / %s\n"
                   "  V[%s] += (X[%s] - Mu[%s]) * (X[%s] - Mu[%s]) where %s\n  Y[%s] = 1.0 / sqrt(V[%s] / %s + %s)",
                   body, R.kdims, R.kdims, R.klhs, R.kept, n, R.klhs, R.src, R.kept, R.src, R.kept, R.where, lhs, R.kept, n, eps);
  const char *kn = imp_kernel(I, k == 1 ? "layer_norm_mean" : "layer_norm_inv_std",
                              xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, kn, imp_tensor(I, (Val *)x));
}

/* LayerNormalization (opset 17): over the axes from `axis`, times Scale plus B; outputs 2
 * and 3 (Mean, InvStdDev) when the graph uses them. */
static bool op_layer_norm(Imp *I) {
  if (!imp_attrs_known(I, "axis,epsilon,stash_type")) return false;
  Val *x = imp_float_in(I, 0), *sc = x ? imp_float_in(I, 1) : NULL, *b = imp_in(I, 2);
  if (!sc || (b && !(b = imp_float_in(I, 2)))) return false;
  if (!(x = imp_as_tensor(I, x, "LayerNormalization"))) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", -1), r);
  if (a < 0) return false;
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = a; d < r; d++) mask[d] = true;
  Val *o = imp_net_out(I, 0, r, x->shape);
  char *params = xprintf("X: %s, Sc: %s", imp_ty(x), imp_ty(sc)), *args = xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, sc));
  const char *bterm = "";
  if (b) {
    params = xprintf("%s, B: %s", params, imp_ty(b));
    args = xprintf("%s, %s", args, imp_tensor(I, b));
    bterm = xprintf(" + %s", imp_baccess("B", b, x->shape, r));
  }
  char *eps = imp_flit((float)imp_attr_f(I, "epsilon", 1e-5));
  char *body = norm_body(x, mask, eps, xprintf(" * %s%s", imp_baccess("Sc", sc, x->shape, r), bterm));
  const char *kn = imp_kernel(I, "layer_norm", xprintf("(%s) -> Y: %s {\n%s\n}", params, imp_ty(o), body));
  imp_call(I, o->tex, kn, args);
  for (int k = 1; k < 3 && (size_t)k < I->node->n_output; k++)
    if (*I->node->output[k]) layer_norm_stat(I, x, mask, eps, k);
  return true;
}

/* RMSNormalization (opset 23): X over the root of the mean of its squares over the axes
 * from `axis`, plus epsilon, times Scale. */
static bool op_rms_norm(Imp *I) {
  if (!imp_attrs_known(I, "axis,epsilon,stash_type") || !imp_one_output(I)) return false;
  if (imp_attr_i(I, "stash_type", 1) != 1) return imp_unsupported(I, "stash_type %lld (float only)", (long long)imp_attr_i(I, "stash_type", 1));
  Val *x = imp_float_in(I, 0), *sc = x ? imp_float_in(I, 1) : NULL;
  if (!sc) return false;
  if (!(x = imp_as_tensor(I, x, "RMSNormalization"))) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", -1), r);
  if (a < 0) return false;
  int64_t bs[HT_MAX_DIMS];
  int nb;
  if (!imp_broadcast(I, x->shape, r, sc->shape, sc->ndim, bs, &nb)) return false;
  if (nb != r || memcmp(bs, x->shape, sizeof(int64_t) * (size_t)r)) return imp_error(I, "the scale does not broadcast to the input's shape");
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = a; d < r; d++) mask[d] = true;
  Reduced R = reduced_axes(x, mask);
  char *all = imp_idx("i", r);
  Val *o = imp_net_out(I, 0, r, x->shape);
  char *body = xprintf("  tensor S: f32[%s]\n  S[%s] += X[%s] * X[%s] where %s\n  Y[%s] = X[%s] / sqrt(S[%s] / %s + %s) * %s", R.kdims, R.klhs,
                       R.src, R.src, R.where, all, all, R.kept, imp_flit((double)R.cnt), imp_flit((float)imp_attr_f(I, "epsilon", 1e-5)),
                       imp_baccess("Sc", sc, x->shape, r));
  const char *kn = imp_kernel(I, "rms_norm", xprintf("(X: %s, Sc: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(sc), imp_ty(o), body));
  const char *tx = imp_tensor(I, x);
  imp_call(I, o->tex, kn, xprintf("%s, %s", tx, imp_tensor(I, sc)));
  return true;
}

/* GroupNormalization (opset 18; 21: scale and bias per channel, before per group): each
 * instance's groups of C / G channels normalized over those channels and the spatial axes
 * together. As the exporters' own decomposition (Reshape, InstanceNormalization, Reshape,
 * Mul, Add) computes it: the normalization over [N, G, C / G x spatial] rows (a row-wise
 * kernel, its rows read from X in place), then the scale and bias on X's shape. */
static bool op_group_norm(Imp *I) {
  if (!imp_attrs_known(I, "epsilon,num_groups,stash_type") || !imp_one_output(I)) return false;
  if (imp_attr_i(I, "stash_type", 1) != 1) return imp_unsupported(I, "stash_type %lld (float only)", (long long)imp_attr_i(I, "stash_type", 1));
  Val *x = imp_float_in(I, 0), *sc = x ? imp_float_in(I, 1) : NULL, *bi = sc ? imp_float_in(I, 2) : NULL;
  if (!bi) return false;
  if (!(x = imp_as_tensor(I, x, I->node->op_type))) return false;
  int r = x->ndim;
  if (r < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", r);
  int64_t c = x->shape[1], g = imp_attr_i(I, "num_groups", 0), per = I->opset >= 21 ? c : g;
  if (g < 1 || c % g) return imp_error(I, "num_groups %lld does not divide %lld channels", (long long)g, (long long)c);
  if (sc->ndim != 1 || bi->ndim != 1 || sc->shape[0] != per || bi->shape[0] != per)
    return imp_error(I, "scale and bias must be vectors of %lld values (opset %d: per %s)", (long long)per, I->opset, per == c ? "channel" : "group");
  int64_t rows[3] = {x->shape[0], g, val_numel(x) / x->shape[0] / g};
  char *in = imp_reshape_index(x, rows, 3);
  if (!in) return imp_error(I, "cannot view the input as [%lld, %lld, %lld]", (long long)rows[0], (long long)rows[1], (long long)rows[2]);
  Val z = {.name = xprintf("%s_groups", x->name), .dtype = OT_FLOAT, .ndim = 3, .shape = {rows[0], rows[1], rows[2]}};
  bool mask[HT_MAX_DIMS] = {false, false, true};
  char *body = norm_body(&z, mask, imp_flit((float)imp_attr_f(I, "epsilon", 1e-5)), "");
  const char *kn = imp_kernel(I, "group_norm", xprintf("(In: %s) -> Y: %s {\n  tensor X: %s\n  X[i0, i1, i2] = In[%s]\n%s\n}", imp_ty(x),
                                                       imp_ty(&z), imp_ty(&z), in, body));
  z.tex = imp_name(I, z.name);
  imp_call(I, z.tex, kn, imp_tensor(I, x));
  Val *o = imp_net_out(I, 0, r, x->shape);
  const char *ch = per == c ? "i1" : xprintf("i1 / %lld", (long long)(c / g));
  const char *ak = imp_kernel(I, "group_affine", xprintf("(Z: %s, Sc: f32[%lld], B: f32[%lld]) -> Y: %s {\n  Y[%s] = Z[%s] * Sc[%s] + B[%s]\n}",
                                                         imp_ty(&z), (long long)per, (long long)per, imp_ty(o), imp_idx("i", r),
                                                         imp_reshape_index(&z, x->shape, r), ch, ch));
  const char *ts = imp_tensor(I, sc), *tb = imp_tensor(I, bi);
  imp_call(I, o->tex, ak, xprintf("%s, %s, %s", z.tex, ts, tb));
  return true;
}

/* InstanceNormalization: each (n, c) normalized over the spatial axes, then scale[c] and
 * bias[c]. */
static bool op_instance_norm(Imp *I) {
  if (!imp_attrs_known(I, "epsilon") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *sc = x ? imp_float_in(I, 1) : NULL, *bi = sc ? imp_float_in(I, 2) : NULL;
  if (!bi) return false;
  if (!(x = imp_as_tensor(I, x, I->node->op_type))) return false;
  int r = x->ndim;
  if (r < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", r);
  int64_t c = x->shape[1];
  if (sc->ndim != 1 || bi->ndim != 1 || sc->shape[0] != c || bi->shape[0] != c)
    return imp_error(I, "scale and B must be vectors of %lld values", (long long)c);
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = 2; d < r; d++) mask[d] = true;
  Val *o = imp_net_out(I, 0, r, x->shape);
  char *body = norm_body(x, mask, imp_flit((float)imp_attr_f(I, "epsilon", 1e-5)), " * Sc[i1] + B[i1]");
  const char *k = imp_kernel(I, "instance_norm", xprintf("(X: %s, Sc: f32[%lld], B: f32[%lld]) -> Y: %s {\n%s\n}", imp_ty(x),
                                                        (long long)c, (long long)c, imp_ty(o), body));
  imp_call(I, o->tex, k, xprintf("%s, %s, %s", imp_tensor(I, x), imp_tensor(I, sc), imp_tensor(I, bi)));
  return true;
}

/* LRN: each value over (bias + alpha / size x the sum of squares of SIZE neighbouring
 * channels)^beta (the window cut at the edges). */
static bool op_lrn(Imp *I) {
  if (!imp_attrs_known(I, "alpha,beta,bias,size") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, "LRN"))) return false;
  int r = x->ndim;
  long long size = imp_attr_i(I, "size", 0), c = r >= 2 ? x->shape[1] : 0, lo = (size - 1) / 2;
  if (r < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", r);
  if (size < 1) return imp_error(I, "size %lld", size);
  /* the window: channels i1 - lo .. i1 - lo + size - 1 */
  char *all = imp_idx("i", r), *ch = xprintf("i1 + q - %lld", lo), *nb = xprintf("i0, %s", ch);
  for (int d = 2; d < r; d++) nb = xprintf("%s, i%d", nb, d);
  Val *o = imp_net_out(I, 0, r, x->shape);
  char *body = xprintf("  tensor S: %s\n  S[%s] += %s >= 0 && %s < %lld ? X[%s] * X[%s] : 0.0 where q in 0..%lld\n"
                       "  Y[%s] = X[%s] / pow(%s + %s * S[%s], %s)",
                       imp_ty(x), all, ch, ch, c, nb, nb, size, all, all, imp_flit((float)imp_attr_f(I, "bias", 1)),
                       imp_flit((float)imp_attr_f(I, "alpha", 1e-4) / (double)size), all, imp_flit((float)imp_attr_f(I, "beta", 0.75)));
  const char *k = imp_kernel(I, "lrn", xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* Hardmax: 1 at the first largest value along the axis (opset >= 13; before, over the
 * flattened axes from it), 0 elsewhere. */
static bool op_hardmax(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, "Hardmax"))) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", I->opset >= 13 ? -1 : 1), r ? r : 1);
  if (a < 0) return false;
  bool mask[HT_MAX_DIMS] = {0};
  char *pos = xstrdup(""); /* the position along the reduced axes, row-major */
  for (int d = 0; d < r; d++)
    if ((mask[d] = I->opset >= 13 ? d == a : d >= a))
      pos = *pos ? xprintf("(%s) * %lld + i%d", pos, (long long)x->shape[d], d) : xprintf("i%d", d);
  Reduced R = reduced_axes(x, mask);
  char *kdims = R.kdims, *klhs = R.klhs, *src = R.src, *where = R.where, *kept = R.kept;
  Val *o = imp_net_out(I, 0, r, x->shape);
  char *body = xprintf("  tensor A: i64[%s]\n  A[%s] argmax= X[%s] where %s\n  Y[%s] = %s == A[%s] ? 1.0 : 0.0", kdims, klhs,
                       src, where, imp_idx("i", r), pos, kept);
  const char *k = imp_kernel(I, "hardmax", xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* An Einsum equation: its terms (inputs', then the output's after `->`; '.' stands for an
 * ellipsis), then with the operands known each term with its ellipsis expanded to the axes
 * named '0' + ELL - e .. '0' + ELL - 1 (right-aligned), and each axis' size and count. */
typedef struct Einsum {
  char terms[9][HT_MAX_DIMS + 2];
  char full[9][2 * HT_MAX_DIMS + 1];
  int nt, ell;
  bool arrow;
  int64_t size[128];
  int count[128];
} Einsum;

static bool einsum_parse(Imp *I, const char *eq, Einsum *E) {
  int len = 0;
  for (const char *p = eq;; p++) {
    char ch = *p;
    if (ch == ' ') continue;
    if (ch == ',' || ch == '-' || !ch) {
      if (E->nt >= 9) return imp_error(I, "equation '%s': too many terms", eq);
      E->terms[E->nt][len] = 0, E->nt++, len = 0;
      if (ch == '-') {
        if (p[1] != '>' || E->arrow) return imp_error(I, "equation '%s'", eq);
        p++, E->arrow = true;
      }
      if (!ch) return true;
      continue;
    }
    if (ch == '.') {
      if (strncmp(p, "...", 3) || memchr(E->terms[E->nt], '.', (size_t)len)) return imp_error(I, "equation '%s'", eq);
      p += 2;
    } else if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
      return imp_error(I, "equation '%s': '%c'", eq, ch);
    }
    if (len > HT_MAX_DIMS) return imp_unsupported(I, "equation '%s': more than 8 axes", eq);
    E->terms[E->nt][len++] = ch;
  }
}

/* The operands X[0..N) against E's terms: the ellipsis' axes, the expanded terms, sizes
 * (an ellipsis axis of 1 broadcasts) and counts. */
static bool einsum_axes(Imp *I, const char *eq, Val **x, int n, Einsum *E) {
  for (int k = 0; k < n; k++) {
    int letters = (int)strlen(E->terms[k]), dots = strchr(E->terms[k], '.') != NULL;
    int e = x[k]->ndim - (letters - dots);
    if (dots ? e < 0 : e != 0) return imp_error(I, "operand %d '%s' for a tensor of rank %d", k + 1, E->terms[k], x[k]->ndim);
    if (e > E->ell) E->ell = e;
  }
  for (int t = 0; t < E->nt; t++) {
    int m = 0, e = t < n ? x[t]->ndim - ((int)strlen(E->terms[t]) - 1) : E->ell;
    for (const char *c = E->terms[t]; *c; c++)
      if (*c == '.')
        for (int a = E->ell - e; a < E->ell; a++) E->full[t][m++] = (char)('0' + a);
      else
        E->full[t][m++] = *c;
    E->full[t][m] = 0;
  }
  for (int k = 0; k < n; k++)
    for (int d = 0; E->full[k][d]; d++) {
      int c = (unsigned char)E->full[k][d];
      int64_t v = x[k]->shape[d], *sz = &E->size[c];
      if (*sz && *sz != v && !(c < 'A' && (v == 1 || *sz == 1)))
        return imp_error(I, "equation '%s': '%c' is %lld and %lld", eq, E->full[k][d], (long long)*sz, (long long)v);
      if (v > *sz) *sz = v;
      E->count[c]++;
    }
  return true;
}

/* Einsum: the equation is the kernel (`ij,jk->ik`: Y[i, k] += X0[i, j] * X1[j, k]); without
 * `->`, the output is the ellipsis' axes, then the letters that appear once, sorted. An
 * ellipsis stands for the axes an operand has beyond its letters, right-aligned across the
 * operands and broadcast (an axis of 1 read at 0). */
static bool op_einsum(Imp *I) {
  if (!imp_attrs_known(I, "equation") || !imp_one_output(I)) return false;
  const char *eq = imp_attr_s(I, "equation", "");
  int n = imp_nin(I);
  if (n < 1 || n > 8) return imp_unsupported(I, "%d inputs (1 to 8)", n);
  Einsum *E = xalloc(sizeof *E);
  if (!einsum_parse(I, eq, E)) return false;
  if ((E->arrow ? E->nt - 1 : E->nt) != n)
    return imp_error(I, "equation '%s' has %d operands, the node %d inputs", eq, E->arrow ? E->nt - 1 : E->nt, n);
  Val *x[8];
  for (int k = 0; k < n; k++)
    if (!(x[k] = imp_float_in(I, k))) return false;
  if (!einsum_axes(I, eq, x, n, E)) return false;
  char *params = xstrdup(""), *args = xstrdup(""), *prod = xstrdup("");
  for (int k = 0; k < n; k++) {
    char *at = xstrdup("");
    for (int d = 0; E->full[k][d]; d++) {
      int c = (unsigned char)E->full[k][d];
      bool one = x[k]->shape[d] == 1 && E->size[c] > 1; /* broadcast: read at 0 */
      at = one ? xprintf("%s%s0", at, d ? ", " : "") : xprintf("%s%se_%c", at, d ? ", " : "", E->full[k][d]);
    }
    params = xprintf("%s%sX%d: %s", params, k ? ", " : "", k, imp_ty(x[k]));
    args = xprintf("%s%s%s", args, k ? ", " : "", imp_tensor(I, x[k]));
    prod = xprintf("%s%sX%d[%s]", prod, k ? " * " : "", k, x[k]->ndim ? at : "0");
  }
  char out[2 * HT_MAX_DIMS + 1];
  int no = 0;
  if (E->arrow) {
    if (E->ell && !strchr(E->terms[E->nt - 1], '.')) /* numpy's rule: the axes cannot vanish silently */
      return imp_error(I, "equation '%s': the output drops the ellipsis' %d axes", eq, E->ell);
    for (const char *c = E->full[E->nt - 1]; *c; c++)
      if (!E->count[(unsigned char)*c]) return imp_error(I, "equation '%s': output '%c' is in no operand", eq, *c);
      else out[no++] = *c;
  } else {
    for (int a = 0; a < E->ell; a++) out[no++] = (char)('0' + a);
    for (int c = 'A'; c <= 'z'; c++)
      if (E->count[c] == 1 && no < HT_MAX_DIMS) out[no++] = (char)c;
  }
  if (no > HT_MAX_DIMS) return imp_unsupported(I, "an output of more than 8 axes");
  int64_t os[HT_MAX_DIMS];
  char *lhs = xstrdup(no ? "" : "z0"), *where = xstrdup("");
  bool in_out[128] = {0};
  for (int d = 0; d < no; d++) {
    os[d] = E->size[(unsigned char)out[d]], in_out[(unsigned char)out[d]] = true;
    lhs = xprintf("%s%se_%c", lhs, d ? ", " : "", out[d]);
  }
  for (int c = '0'; c <= 'z'; c++)
    if (E->count[c] && !in_out[c]) where = xprintf("%s%se_%c in 0..%lld", where, *where ? ", " : "", c, (long long)E->size[c]);
  Val *o = imp_net_out(I, 0, no, os);
  const char *k = imp_kernel(I, "einsum", xprintf("(%s) -> Y: %s {\n  Y[%s] %s %s%s%s\n}", params, imp_ty(o), lhs,
                                                  *where ? "+=" : "=", prod, *where ? " where " : "", where));
  imp_call(I, o->tex, k, args);
  return true;
}

/* CumSum (PROD: CumProd, opset 26) along a constant axis: inclusive or exclusive, forward
 * or reverse; an exclusive first element is 0 (1). */
static bool op_cumulative(Imp *I, bool prod) {
  if (!imp_attrs_known(I, "exclusive,reverse") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *av = x ? imp_const_in(I, 1, "axis") : NULL;
  if (!av) return false;
  if (val_numel(av) != 1) return imp_error(I, "axis is not a scalar");
  int r = x->ndim, a = imp_axis_of(I, (int64_t)av->c[0], r);
  if (a < 0) return false;
  bool ex = imp_attr_i(I, "exclusive", 0), rev = imp_attr_i(I, "reverse", 0);
  long long n = x->shape[a];
  if (x->c) { /* folded: in order along the axis (float ones rounded to f32 at each step, as the kernel's) */
    int64_t inner = 1, total = val_numel(x);
    for (int d = a + 1; d < r; d++) inner *= x->shape[d];
    double *c = imp_vals(total);
    for (int64_t o = 0; o < total / (n * inner); o++)
      for (int64_t in = 0; in < inner; in++) {
        double acc = prod;
        for (int64_t t = 0; t < n; t++) {
          int64_t at = (o * n + (rev ? n - 1 - t : t)) * inner + in;
          double v = x->c[at];
          if (ex) c[at] = acc;
          acc = imp_round_to(x->dtype, prod ? acc * v : acc + v);
          if (!ex) c[at] = acc;
        }
      }
    imp_const_out(I, 0, x->dtype, r, x->shape, c);
    return true;
  }
  char *src = xstrdup("");
  for (int d = 0; d < r; d++) src = xprintf("%s%s%s", src, d ? ", " : "", d == a ? "q" : xprintf("i%d", d));
  const char *range = rev ? xprintf("i%d%s..%lld", a, ex ? " + 1" : "", n) : xprintf("0..i%d%s", a, ex ? "" : " + 1");
  Val *o = imp_net_out(I, 0, r, x->shape);
  const char *k = imp_kernel(I, prod ? "cumprod" : "cumsum", xprintf("(X: %s) -> Y: %s {\n  Y[%s] %s X[%s] where q in %s\n}", imp_ty(x),
                                                  imp_ty(o), imp_idx("i", r), prod ? "*=" : "+=", src, range));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* CausalConvWithState (opset 27: Mamba's and Gated DeltaNet's convolution): a depthwise
 * causal 1-D convolution of X [B, C, L] by W [C, 1, K] over the past state P [B, C, K - 1]
 * (zeros when absent) followed by X, plus the bias, SiLU when asked; output 2 is the last
 * K - 1 positions of that sequence, the next step's state. Two kernels, each reading X or P
 * by which side of the seam its position falls. */
static bool op_causal_conv(Imp *I) {
  if (!imp_attrs_known(I, "activation")) return false;
  for (size_t k = 2; k < I->node->n_output; k++)
    if (*I->node->output[k]) return imp_error(I, "output %zu: CausalConvWithState has two", k + 1);
  Val *x = imp_float_in(I, 0), *w = x ? imp_float_in(I, 1) : NULL, *b = imp_in(I, 2), *p = imp_in(I, 3);
  if (!w || (b && !(b = imp_float_in(I, 2))) || (p && !(p = imp_float_in(I, 3)))) return false;
  const char *act = imp_attr_s(I, "activation", "none");
  bool silu = !strcmp(act, "silu") || !strcmp(act, "swish");
  if (!silu && strcmp(act, "none")) return imp_error(I, "activation '%s' (silu, swish or none)", act);
  if (x->ndim != 3 || w->ndim != 3) return imp_error(I, "input is %s and weight %s (rank 3 both)", imp_ty(x), imp_ty(w));
  long long B = x->shape[0], C = x->shape[1], L = x->shape[2], K = w->shape[2];
  if (w->shape[0] != C || w->shape[1] != 1)
    return imp_error(I, "weight is %s; [%lld, 1, K] for %lld channels", imp_ty(w), C, C);
  if (K < 2) return imp_unsupported(I, "a kernel of size %lld (its state would be empty)", K);
  if (b && (b->ndim != 1 || b->shape[0] != C)) return imp_error(I, "bias is %s, not f32[%lld]", imp_ty(b), C);
  if (p && (p->ndim != 3 || p->shape[0] != B || p->shape[1] != C || p->shape[2] != K - 1))
    return imp_error(I, "past_state is %s, not f32[%lld, %lld, %lld]", imp_ty(p), B, C, K - 1);
  ImpCall call = {0};
  imp_call_arg(I, &call, "X", x);
  imp_call_arg(I, &call, "W", w);
  if (b) imp_call_arg(I, &call, "Bi", b);
  if (p) imp_call_arg(I, &call, "P", p);
  /* position T of the sequence P ++ X: X[T - (K - 1)] past the seam, else P[T] (or 0) */
  const char *at = "i2 + j";
  char *seq = xprintf("(%s >= %lld ? X[i0, i1, %s - %lld] : %s)", at, K - 1, at, K - 1, p ? xprintf("P[i0, i1, %s]", at) : "0.0");
  const char *v = xprintf("S[i0, i1, i2]%s", b ? " + Bi[i1]" : "");
  Val *o = imp_net_out(I, 0, 3, x->shape);
  imp_call_kernel(I, &call, silu ? "causal_conv_silu" : "causal_conv", o,
                  xprintf("tensor S: f32[%lld, %lld, %lld]\n  S[i0, i1, i2] += W[i1, 0, j] * %s where j in 0..%lld\n"
                          "  Y[i0, i1, i2] = %s", B, C, L, seq, K, silu ? xprintf("(%s) * sigmoid(%s)", v, v) : v));
  if (I->node->n_output < 2 || !*I->node->output[1]) return true;
  ImpCall st = {0};
  imp_call_arg(I, &st, "X", x);
  if (p) imp_call_arg(I, &st, "P", p);
  int64_t ss[3] = {B, C, K - 1};
  Val *ps = imp_net_out(I, 1, 3, ss);
  imp_call_kernel(I, &st, "causal_conv_state", ps,
                  xprintf("Y[i0, i1, i2] = i2 + %lld >= %lld ? X[i0, i1, i2 + %lld - %lld] : %s", L, K - 1, L, K - 1,
                          p ? xprintf("P[i0, i1, i2 + %lld]", L) : "0.0"));
  return true;
}

/* MeanVarianceNormalization: (X - mean) / sqrt(variance + 1e-9) over AXES (default 0, 2, 3). */
static bool op_mvn(Imp *I) {
  if (!imp_attrs_known(I, "axes") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, "MeanVarianceNormalization"))) return false;
  int r = x->ndim;
  int64_t axes[HT_MAX_DIMS] = {0, 2, 3};
  int na = imp_attr_ints(I, "axes", axes, HT_MAX_DIMS);
  if (na < 0) na = 3;
  bool mask[HT_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++) {
    int a = imp_axis_of(I, axes[i], r);
    if (a < 0) return false;
    mask[a] = true;
  }
  Val *o = imp_net_out(I, 0, r, x->shape);
  char *body = norm_body(x, mask, "1e-9", "");
  const char *kn = imp_kernel(I, "mvn", xprintf("(X: %s) -> Y: %s {\n%s\n}", imp_ty(x), imp_ty(o), body));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* ---- Resize and Upsample ----------------------------------------------------------- */

/* The floats of attribute NAME into OUT (at most MAX); their number, -1 when absent. */
static int attr_floats(Imp *I, const char *name, double *out, int max) {
  const Onnx__AttributeProto *a = imp_attr(I, name);
  if (!a) return -1;
  int n = (int)a->n_floats < max ? (int)a->n_floats : max;
  for (int i = 0; i < n; i++) out[i] = a->floats[i];
  return n;
}

/* Where output coordinate X of an axis resized from IN points by SCALE falls in the input,
 * by ONNX's coordinate_transformation_mode CT. OUT is the resized length as ONNX's
 * reference takes it: IN x SCALE unrounded when scales are given, else the size (so an
 * align_corners downsample of 4 by 0.6 maps 1 to 3 / 1.4, not 3 / 1); for
 * half_pixel_symmetric always the size (its centring adjusts for the rounding). */
static double resize_coord(const char *ct, double x, double scale, int64_t in, double out) {
  if (!strcmp(ct, "asymmetric")) return x / scale;
  if (!strcmp(ct, "align_corners")) return out == 1 ? 0 : x * (double)(in - 1) / (out - 1);
  if (!strcmp(ct, "pytorch_half_pixel")) return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  if (!strcmp(ct, "tf_half_pixel_for_nn")) return (x + 0.5) / scale;
  if (!strcmp(ct, "half_pixel_symmetric")) { /* opset 19: centred when the size was rounded */
    double adjust = out / (scale * (double)in), centre = (double)in / 2;
    return centre * (1 - adjust) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5; /* half_pixel (op_resize refuses any other) */
}

/* The input index nearest to coordinate X by ONNX's nearest_mode NM, within 0..IN-1. */
static int64_t resize_nearest(const char *nm, double x, int64_t in) {
  double f = floor(x), r;
  if (!strcmp(nm, "floor")) r = f;
  else if (!strcmp(nm, "ceil")) r = ceil(x);
  else if (x - f == 0.5) r = !strcmp(nm, "round_prefer_ceil") ? f + 1 : f;
  else r = floor(x + 0.5);
  return r < 0 ? 0 : r > (double)(in - 1) ? in - 1 : (int64_t)r;
}

/* How Resize interpolates: TAPS input points per output point along a resized axis (1
 * nearest, 2 linear, 4 cubic), the coordinate_transformation_mode CT, nearest_mode NM, and
 * for cubic the coefficient A (cubic_coeff_a) and exclude_outside. */
typedef struct ResizeMode {
  int taps;
  const char *ct, *nm;
  double a;
  bool exclude;
} ResizeMode;

/* Keys' cubic convolution weight of a point at distance D (0 <= D <= 2) with coefficient A. */
static double cubic_weight(double d, double a) {
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
}

/* The table of axis D resized from IN to OUT (by SCALE; BY_SIZE: OUT was given): per
 * output index the nearest input index; or (linear) rows of the lower and upper neighbours
 * and the upper's weight; or (cubic) rows of the four neighbours (clamped: the edge
 * repeated) and their four weights. Cubic follows ONNX's reference: the neighbours of
 * coordinate x are f - 1 .. f + 2 for f = floor(x), or f = x - 1 when x is an integer;
 * exclude_outside gives a neighbour outside 0..IN-1 no weight and rescales the others to
 * sum 1. */
static Val *resize_table(Imp *I, int d, int64_t in, int64_t out, double scale, bool by_size, const ResizeMode *m) {
  Val *tab = xalloc(sizeof *tab);
  int rows = m->taps == 1 ? 1 : m->taps == 2 ? 3 : 8;
  *tab = (Val){.name = xprintf("%s_resize%d", I->node->output[0], d), .dtype = OT_FLOAT, .ndim = rows > 1 ? 2 : 1,
               .shape = {rows > 1 ? rows : out, out}, .c = imp_vals(rows * out)};
  for (int64_t i = 0; i < out; i++) {
    bool rounded = by_size || !strcmp(m->ct, "half_pixel_symmetric"); /* its adjustment is of the rounded size */
    double c = resize_coord(m->ct, (double)i, scale, in, rounded ? (double)out : (double)in * scale);
    if (m->taps == 1) {
      tab->c[i] = (double)resize_nearest(m->nm, c, in);
      continue;
    }
    if (m->taps == 4) {
      double f = floor(c), w[4], sum = 0;
      if (f == c) f -= 1;
      double t = c - f;
      w[0] = cubic_weight(1 + t, m->a), w[1] = cubic_weight(t, m->a);
      w[2] = cubic_weight(1 - t, m->a), w[3] = cubic_weight(2 - t, m->a);
      for (int j = 0; j < 4; j++) {
        double at = f - 1 + j;
        if (m->exclude && (at < 0 || at > (double)(in - 1))) w[j] = 0;
        sum += w[j];
        tab->c[j * out + i] = at < 0 ? 0 : at > (double)(in - 1) ? (double)(in - 1) : at;
      }
      for (int j = 0; j < 4; j++) tab->c[(4 + j) * out + i] = m->exclude && sum != 0 ? w[j] / sum : w[j];
      continue;
    }
    c = c < 0 ? 0 : c > (double)(in - 1) ? (double)(in - 1) : c;
    double lo = floor(c);
    tab->c[i] = lo, tab->c[out + i] = lo + 1 < (double)in ? lo + 1 : lo, tab->c[2 * out + i] = c - lo;
  }
  return tab;
}

/* Resize X (at most 3 of its axes resized) to OS, by SCALE per axis (BY_SIZE: OS was
 * given, SCALE derived from it): nearest (an index table per resized axis), linear (per
 * resized axis a table of the lower and upper neighbours and the weight of the upper: 2^k
 * terms) or cubic (four neighbours and four weights per axis: 4^k terms, k at most 2). A
 * channels-last X stays so when its N and C are not resized. */
static bool resize_to(Imp *I, Val *x, const int64_t *os, const double *scale, bool by_size, const ResizeMode *m) {
  int r = x->ndim, k = 0, ax[HT_MAX_DIMS];
  for (int d = 0; d < r; d++)
    if (os[d] != x->shape[d] || scale[d] != 1) ax[k++] = d;
  if (!k) return imp_alias(I, x);
  if (k > 3 || (m->taps == 4 && k > 2))
    return imp_unsupported(I, "%d resized axes (at most %d)", k, m->taps == 4 ? 2 : 3);
  bool linear = m->taps == 2;
  bool nhwc = x->nhwc && r == 4 && os[0] == x->shape[0] && os[1] == x->shape[1];
  /* the tensor's axis t holds logical axis lg[t] */
  int lg[HT_MAX_DIMS];
  for (int t = 0; t < r; t++) lg[t] = nhwc ? imp_nhwc_axis[t] : t;
  int64_t ts[HT_MAX_DIMS], tin[HT_MAX_DIMS];
  for (int t = 0; t < r; t++) ts[t] = os[lg[t]], tin[t] = x->shape[lg[t]];
  char *params = xprintf("X: f32[%s]", imp_dims_text(tin, r)), *args = xstrdup(nhwc ? imp_tensor_nhwc(I, x) : imp_tensor(I, x));
  char *pos[HT_MAX_DIMS][4];  /* per tensor axis: the source index of each tap */
  char *wt[HT_MAX_DIMS][4] = {{0}}; /* per tensor axis: each tap's weight (linear: the upper's) */
  for (int t = 0; t < r; t++) {
    int d = lg[t];
    for (int h = 0; h < 4; h++) pos[t][h] = xprintf("i%d", t);
    bool resized = false;
    for (int j = 0; j < k; j++) resized |= ax[j] == d;
    if (!resized) continue;
    int64_t in = x->shape[d];
    Val *tab = resize_table(I, d, in, os[d], scale[d], by_size, m);
    const char *tn = xprintf("T%d", t);
    params = xprintf("%s, %s: %s", params, tn, imp_ty(tab));
    args = xprintf("%s, %s", args, imp_tensor(I, tab));
    if (m->taps == 1) {
      pos[t][0] = xprintf("clamp(i32(%s[i%d]), 0, %lld)", tn, t, (long long)(in - 1));
      continue;
    }
    for (int h = 0; h < m->taps; h++) pos[t][h] = xprintf("clamp(i32(%s[%d, i%d]), 0, %lld)", tn, h, t, (long long)(in - 1));
    if (linear) wt[t][1] = xprintf("%s[2, i%d]", tn, t), wt[t][0] = xprintf("(1.0 - %s)", wt[t][1]);
    else
      for (int h = 0; h < 4; h++) wt[t][h] = xprintf("%s[%d, i%d]", tn, 4 + h, t);
  }
  char *e = xstrdup("");
  int terms = 1;
  for (int j = 0; j < k; j++) terms *= m->taps;
  for (int term = 0; term < terms; term++) {
    char *w = xstrdup(""), *at = xstrdup("");
    for (int t = 0, rest = term; t < r; t++) {
      int tap = 0;
      if (wt[t][0]) {
        tap = rest % m->taps, rest /= m->taps;
        w = xprintf("%s%s%s", w, *w ? " * " : "", wt[t][tap]);
      }
      at = xprintf("%s%s%s", at, t ? ", " : "", pos[t][tap]);
    }
    e = xprintf("%s%s%s%sX[%s]", e, term ? " + " : "", w, *w ? " * " : "", at);
  }
  Val *o = imp_net_out(I, 0, r, ts);
  const char *kn = imp_kernel(I, m->taps == 1 ? "resize_nearest" : linear ? "resize_linear" : "resize_cubic",
                              xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, imp_ty(o), imp_idx("i", r), e));
  imp_call(I, o->tex, kn, args);
  if (nhwc) { /* back to the logical shape */
    memcpy(o->shape, os, sizeof(int64_t) * 4);
    o->nhwc = true;
  }
  return true;
}

/* Resize's (Upsample's) output shape OS of X and the SCALE per axis, from constant scales
 * (an attribute for Upsample before opset 9) or sizes (*BY_SIZE), over the axes attribute
 * (opset 18) or all. false: reported. */
static bool resize_shape(Imp *I, const Val *x, bool upsample, int64_t *os, double *scale, bool *by_size) {
  bool old = upsample || I->opset < 11;
  int r = x->ndim, axes[HT_MAX_DIMS], na = r;
  int64_t av[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) axes[d] = d;
  int nav = imp_attr_ints(I, "axes", av, HT_MAX_DIMS);
  if (nav >= 0) {
    na = nav;
    for (int i = 0; i < na; i++)
      if ((axes[i] = imp_axis_of(I, av[i], r)) < 0) return false;
  }
  double given[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) scale[d] = 1, os[d] = x->shape[d];
  int ns = -1;
  Val *sv = upsample && I->opset < 9 ? NULL : imp_in(I, old ? 1 : 2), *zv = old ? NULL : imp_in(I, 3);
  if (upsample && I->opset < 9) ns = attr_floats(I, "scales", given, HT_MAX_DIMS);
  else if (sv && !(sv = imp_const_in(I, old ? 1 : 2, "scales"))) return false;
  if (sv && val_numel(sv) > 0) {
    ns = (int)val_numel(sv) > HT_MAX_DIMS ? HT_MAX_DIMS : (int)val_numel(sv);
    for (int i = 0; i < ns; i++) given[i] = sv->c[i];
  }
  if (zv && !(zv = imp_const_in(I, 3, "sizes"))) return false;
  if (zv && val_numel(zv) > 0) {
    if (ns > 0) return imp_error(I, "both scales and sizes");
    if (val_numel(zv) != na) return imp_error(I, "%lld sizes for %d axes", (long long)val_numel(zv), na);
    for (int i = 0; i < na; i++) {
      int d = axes[i];
      if (!(zv->c[i] >= 1 && zv->c[i] <= (double)MAX_RESULT)) return imp_unsupported(I, "size %g (axis %d)", zv->c[i], d);
      os[d] = (int64_t)zv->c[i];
      scale[d] = (double)os[d] / (double)x->shape[d];
    }
  } else {
    if (ns != na) return imp_error(I, "%d scales for %d axes", ns, na);
    for (int i = 0; i < na; i++) {
      int d = axes[i];
      if (!(given[i] > 0)) return imp_error(I, "scale %g (axis %d)", given[i], d);
      double len = floor((double)x->shape[d] * given[i]);
      if (!(len >= 1 && len <= (double)MAX_RESULT)) return imp_unsupported(I, "an axis of %g elements (axis %d)", len, d);
      scale[d] = given[i];
      os[d] = (int64_t)len;
    }
  }
  *by_size = zv && val_numel(zv) > 0;
  return imp_shape_ok(I, os, r);
}

/* Resize (opset >= 10) and Upsample (7 to 9): nearest, linear and (Resize, opset 11 on)
 * cubic; scales or sizes constant. */
static bool op_resize(Imp *I, bool upsample) {
  bool old = upsample || I->opset < 11;
  if (!imp_one_output(I)) return false;
  if (upsample ? !imp_attrs_known(I, I->opset < 9 ? "mode,scales" : "mode")
               : !imp_attrs_known(I, old ? "mode"
                                     : "mode,coordinate_transformation_mode,nearest_mode,cubic_coeff_a,exclude_outside,"
                                       "extrapolation_value,antialias,axes,keep_aspect_ratio_policy"))
    return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, upsample ? "Upsample" : "Resize"))) return false;
  const char *mode = imp_attr_s(I, "mode", "nearest");
  ResizeMode m = {.taps = !strcmp(mode, "linear") ? 2 : !strcmp(mode, "cubic") && !old ? 4 : 1,
                  .a = imp_attr_f(I, "cubic_coeff_a", -0.75), .exclude = imp_attr_i(I, "exclude_outside", 0) != 0};
  if (m.taps == 1 && strcmp(mode, "nearest")) return imp_unsupported(I, "mode '%s'", mode);
  const char *ct = m.ct = old ? "asymmetric" : imp_attr_s(I, "coordinate_transformation_mode", "half_pixel");
  m.nm = old ? "floor" : imp_attr_s(I, "nearest_mode", "round_prefer_floor");
  static const char *const modes[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn"};
  if (!IMP_ONE_OF(ct, modes) || (!strcmp(ct, "half_pixel_symmetric") && I->opset < 19))
    return imp_unsupported(I, "coordinate_transformation_mode '%s'", ct);
  if (imp_attr_i(I, "antialias", 0)) return imp_unsupported(I, "antialias");
  if (strcmp(imp_attr_s(I, "keep_aspect_ratio_policy", "stretch"), "stretch"))
    return imp_unsupported(I, "keep_aspect_ratio_policy '%s'", imp_attr_s(I, "keep_aspect_ratio_policy", ""));
  double scale[HT_MAX_DIMS];
  int64_t os[HT_MAX_DIMS];
  bool by_size = false;
  if (!resize_shape(I, x, upsample, os, scale, &by_size)) return false;
  return resize_to(I, x, os, scale, by_size, &m);
}

/* MaxUnpool: X's values put back at the flat positions INDICES names (MaxPool's Indices,
 * NCHW row-major) of an output of zeros, [N, C] and each spatial axis (in - 1) x stride +
 * kernel - its pads, or output_shape (constant, or an --input file folded; the indices
 * still count in the default shape, each element kept at its coordinates). Two scatters
 * into the flat output (an index outside it is skipped): the largest value sent to each
 * position, and how many were; a position none reached is 0. (Windows that overlap send one
 * element twice: its value both times.) */
static bool op_max_unpool(Imp *I) {
  if (!imp_attrs_known(I, "kernel_shape,pads,strides") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *ix = x ? imp_in(I, 1) : NULL, *shp = imp_in(I, 2);
  if (!ix) return x ? imp_error(I, "input 2 (indices) is missing") : false;
  if (!ix->c && !imp_run_time_int(ix) && !ix->fint) return imp_unsupported(I, "indices of element type %s", imp_type_name(ix->dtype));
  int r = x->ndim, n = r - 2;
  if (n < 1 || n > 3) return imp_unsupported(I, "input of rank %d (3 to 5)", r);
  if (ix->ndim != r || memcmp(ix->shape, x->shape, sizeof(int64_t) * (size_t)r))
    return imp_error(I, "indices of shape [%s] for an input of shape [%s]", imp_dims_text(ix->shape, ix->ndim), imp_dims_text(x->shape, r));
  int64_t k[3], st[3] = {1, 1, 1}, p[6] = {0}, os[HT_MAX_DIMS];
  if (imp_attr_ints(I, "kernel_shape", k, 3) != n) return imp_error(I, "kernel_shape must have %d values", n);
  int ns = imp_attr_ints(I, "strides", st, 3), np = imp_attr_ints(I, "pads", p, 6);
  if ((ns >= 0 && ns != n) || (np >= 0 && np != 2 * n)) return imp_error(I, "strides or pads of another rank than the kernel's");
  os[0] = x->shape[0], os[1] = x->shape[1];
  for (int i = 0; i < n; i++) os[2 + i] = (x->shape[2 + i] - 1) * st[i] + k[i] - p[i] - p[n + i];
  int64_t ds[HT_MAX_DIMS]; /* the shape the indices count in: the default output's */
  memcpy(ds, os, sizeof(int64_t) * (size_t)r);
  if (shp) {
    if (!(shp = imp_const_in(I, 2, "output_shape"))) return false;
    if (val_numel(shp) != r) return imp_error(I, "output_shape has %lld values for rank %d", (long long)val_numel(shp), r);
    for (int d = 0; d < r; d++) os[d] = (int64_t)shp->c[d];
    if (os[0] != x->shape[0] || os[1] != x->shape[1]) return imp_error(I, "output_shape changes N or C");
  }
  int64_t total = 1;
  for (int d = 0; d < r; d++) {
    if (os[d] < 1) return imp_error(I, "the output would be empty (axis %d: %lld)", d, (long long)os[d]);
    total *= os[d];
  }
  if (!imp_shape_ok(I, os, r)) return false;
  char *flat = xstrdup("i0");
  for (int d = 1; d < r; d++) flat = xprintf("(%s) * %lld + i%d", flat, (long long)os[d], d);
  char *src = imp_idx("r", r), *at = ix->c ? xprintf("i64(P[%s])", src) : imp_int_at(ix, "P", src);
  if (memcmp(ds, os, sizeof(int64_t) * (size_t)r)) { /* output_shape: each index's coordinates in it (-1 past it) */
    char *fits = xstrdup(""), *to = xstrdup("0");
    int64_t inner = 1;
    for (int d = r - 1; d >= 0; d--) {
      char *cd = xprintf("%s / %lld %% %lld", at, (long long)inner, (long long)ds[d]);
      fits = xprintf("%s%s%s < %lld", fits, *fits ? " && " : "", cd, (long long)os[d]);
      inner *= ds[d];
    }
    for (int d = 0; d < r; d++) {
      int64_t below = 1;
      for (int e = d + 1; e < r; e++) below *= ds[e];
      to = xprintf("(%s) * %lld + %s / %lld %% %lld", to, (long long)os[d], at, (long long)below, (long long)ds[d]);
    }
    at = xprintf("%s >= 0 && %s ? %s : -1", at, fits, to);
  }
  Val *o = imp_net_out(I, 0, r, os);
  const char *kn = imp_kernel(I, "max_unpool",
                              xprintf("(X: %s, P: %s) -> Y: %s {\n  tensor M: f32[%lld]\n  tensor K: f32[%lld]\n"
                                      "  M[%s] max= X[%s]\n  K[%s] += 1.0\n"
                                      "  Y[%s] = K[%s] > 0.0 ? M[%s] : 0.0\n}",
                                      imp_ty(x), imp_ty(ix), imp_ty(o), (long long)total, (long long)total, at, src, at,
                                      imp_idx("i", r), flat, flat));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, ix)));
  return true;
}

/* ---- DFT, STFT -------------------------------------------------------------------- */

/* The twiddle tables of a K-point output from N input points as weights [2, K, M] (M = the
 * points that exist, at most N: the rest are zeros): cos(2 pi k n / N) and sign x sin, both
 * times SCALE (1, or 1 / N for the inverse). */
static Val *twiddles(Imp *I, int64_t k, int64_t n, int64_t m, bool inverse) {
  Val *t = xalloc(sizeof *t);
  *t = (Val){.name = xprintf("%s_twiddles", I->node->output[0]), .dtype = OT_FLOAT, .ndim = 3, .shape = {2, k, m}, .c = imp_vals(2 * k * m)};
  double scale = inverse ? 1.0 / (double)n : 1.0, sign = inverse ? 1 : -1;
  for (int64_t a = 0; a < k; a++)
    for (int64_t b = 0; b < m; b++) {
      double th = 2 * M_PI * (double)((a * b) % n) / (double)n;
      t->c[a * m + b] = cos(th) * scale, t->c[k * m + a * m + b] = sign * sin(th) * scale;
    }
  return t;
}

/* The sum over the reduction axis r of the complex product of X's point (XRE, XIM: its
 * real and imaginary parts as text, XIM NULL for a real signal) by the twiddle T[., k, r],
 * component c of the output. */
static char *dft_term(const char *k, const char *xre, const char *xim) {
  if (!xim) return xprintf("%s * T[c, %s, r]", xre, k); /* a real signal: one product per component */
  return xprintf("c == 0 ? %s * T[0, %s, r] - %s * T[1, %s, r] : %s * T[0, %s, r] + %s * T[1, %s, r]", xre, k, xim, k, xim, k,
                 xre, k);
}

/* DFT (opset 17: axis, inverse, onesided attributes; dft_length a constant input): a sum
 * over the signal axis against constant twiddle tables (N^2 products: no FFT), the signal
 * real ([..., 1]) or complex ([..., 2]), zero-padded or cut to dft_length. */
static bool op_dft(Imp *I) {
  if (!imp_attrs_known(I, "axis,inverse,onesided") || !imp_one_output(I)) return false;
  if (I->opset >= 20) return imp_unsupported(I, "DFT-20 (axis as an input)");
  Val *x = imp_float_in(I, 0), *lv = x ? imp_in(I, 1) : NULL;
  if (!x) return false;
  if (lv && !(lv = imp_const_in(I, 1, "dft_length"))) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 1), r);
  if (a < 0) return false;
  int64_t cmp = r ? x->shape[r - 1] : 0;
  if (r < 2 || (cmp != 1 && cmp != 2) || a == r - 1) return imp_error(I, "input [%s]: the last axis holds 1 (real) or 2 (complex) values, the axis another", imp_dims_text(x->shape, r));
  bool inverse = imp_attr_i(I, "inverse", 0), onesided = imp_attr_i(I, "onesided", 0);
  if (inverse && onesided) return imp_error(I, "inverse and onesided together");
  int64_t n = lv ? (int64_t)lv->c[0] : x->shape[a], m = n < x->shape[a] ? n : x->shape[a], k = onesided ? n / 2 + 1 : n;
  if (n < 1 || n > (1 << 16)) return imp_unsupported(I, "a DFT of %lld points (1 to 65536)", (long long)n);
  int64_t os[HT_MAX_DIMS];
  memcpy(os, x->shape, sizeof(int64_t) * (size_t)r);
  os[a] = k, os[r - 1] = 2;
  char *yi = xstrdup(""), *xat = xstrdup("");
  for (int d = 0; d < r - 1; d++) {
    const char *v = d == a ? "k" : xprintf("i%d", d);
    yi = xprintf("%s%s, ", yi, v);
    xat = xprintf("%s%s, ", xat, d == a ? "r" : v);
  }
  char *term = dft_term("k", xprintf("X[%s0]", xat), cmp == 2 ? xprintf("X[%s1]", xat) : NULL);
  Val *t = twiddles(I, k, n, m, inverse), *o = imp_net_out(I, 0, r, os);
  const char *kn = imp_kernel(I, inverse ? "idft" : "dft",
                              xprintf("(X: %s, T: %s) -> Y: %s {\n  Y[%sc] += %s where r in 0..%lld\n}", imp_ty(x), imp_ty(t), imp_ty(o),
                                      yi, term, (long long)m));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, t)));
  return true;
}

/* STFT (opset 17): frames of frame_length points every frame_step (constant), each times the
 * window (at run time or constant; none: ones), then their DFT (onesided: bins 0..L/2).
 * Signal [batch, length, 1 or 2] -> [batch, frames, bins, 2]. */
static bool op_stft(Imp *I) {
  if (!imp_attrs_known(I, "onesided") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *st = x ? imp_const_in(I, 1, "frame_step") : NULL, *w = imp_in(I, 2), *fl = imp_in(I, 3);
  if (!st) return false;
  if (w && !(w = imp_float_in(I, 2))) return false;
  if (fl && !(fl = imp_const_in(I, 3, "frame_length"))) return false;
  if (x->ndim != 3 || (x->shape[2] != 1 && x->shape[2] != 2)) return imp_error(I, "signal [%s] ([batch, length, 1 or 2])", imp_dims_text(x->shape, x->ndim));
  int64_t len = fl ? (int64_t)fl->c[0] : w ? w->shape[0] : x->shape[1], step = (int64_t)st->c[0];
  if (w && (w->ndim != 1 || w->shape[0] != len)) return imp_error(I, "a window of shape [%s] for frames of %lld", imp_dims_text(w->shape, w->ndim), (long long)len);
  if (step < 1 || len < 1 || len > x->shape[1] || len > (1 << 16)) return imp_error(I, "frame_step %lld and frame_length %lld for a signal of %lld", (long long)step, (long long)len, (long long)x->shape[1]);
  bool onesided = imp_attr_i(I, "onesided", 1);
  int64_t frames = 1 + (x->shape[1] - len) / step, k = onesided ? len / 2 + 1 : len;
  int64_t os[4] = {x->shape[0], frames, k, 2};
  Val *t = twiddles(I, k, len, len, false), *o = imp_net_out(I, 0, 4, os);
  if (x->shape[2] == 1) { /* real: the windowed frames, then a matrix product with the tables (the CPU's default for
                           * products: 41 -> 8 ms for 5 s of 16 kHz audio in 400-point frames), its bins as pairs */
    const char *fr = imp_name(I, xprintf("%s_frames", I->node->output[0]));
    const char *fk = imp_kernel(I, "stft_frames", xprintf("(X: %s%s) -> Y: f32[%lld, %lld, %lld] {\n  Y[i0, i1, i2] = X[i0, i1 * %lld + i2, 0]%s\n}",
                                                          imp_ty(x), w ? xprintf(", W: %s", imp_ty(w)) : "", (long long)x->shape[0],
                                                          (long long)frames, (long long)len, (long long)step, w ? " * W[i2]" : ""));
    imp_call(I, fr, fk, w ? xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, w)) : imp_tensor(I, x));
    Val *t2 = xalloc(sizeof *t2); /* the tables as [len, 2k]: bin k's two components side by side */
    *t2 = (Val){.name = xprintf("%s_twiddles_rows", I->node->output[0]), .dtype = OT_FLOAT, .ndim = 2, .shape = {len, 2 * k}, .c = imp_vals(2 * k * len)};
    for (int64_t r = 0; r < len; r++)
      for (int64_t j = 0; j < 2 * k; j++) t2->c[r * 2 * k + j] = t->c[(j % 2) * k * len + (j / 2) * len + r];
    const char *pr = imp_name(I, xprintf("%s_bins", I->node->output[0]));
    const char *pk = imp_kernel(I, "stft_product", xprintf("(F: f32[%lld, %lld, %lld], T: %s) -> Y: f32[%lld, %lld, %lld] {\n  Y[i0, i1, j] += F[i0, i1, r] * T[r, j]\n}",
                                                           (long long)x->shape[0], (long long)frames, (long long)len, imp_ty(t2),
                                                           (long long)x->shape[0], (long long)frames, (long long)(2 * k)));
    imp_call(I, pr, pk, xprintf("%s, %s", fr, imp_tensor(I, t2)));
    const char *sk = imp_kernel(I, "stft_bins", xprintf("(B: f32[%lld, %lld, %lld]) -> Y: %s {\n  Y[i0, i1, k, c] = B[i0, i1, k * 2 + c]\n}",
                                                        (long long)x->shape[0], (long long)frames, (long long)(2 * k), imp_ty(o)));
    imp_call(I, o->tex, sk, pr);
    return true;
  }
  char *at = xprintf("i0, i1 * %lld + r", (long long)step), *win = w ? xstrdup(" * W[r]") : xstrdup("");
  char *term = dft_term("k", xprintf("X[%s, 0]%s", at, win), xprintf("X[%s, 1]%s", at, win));
  const char *kn = imp_kernel(I, "stft", xprintf("(X: %s, T: %s%s) -> Y: %s {\n  Y[i0, i1, k, c] += %s where r in 0..%lld\n}", imp_ty(x),
                                                 imp_ty(t), w ? xprintf(", W: %s", imp_ty(w)) : "", imp_ty(o), term, (long long)len));
  imp_call(I, o->tex, kn, xprintf("%s, %s%s", imp_tensor(I, x), imp_tensor(I, t), w ? xprintf(", %s", imp_tensor(I, w)) : ""));
  return true;
}

/* ---- losses ---------------------------------------------------------------------- */

/* NegativeLogLikelihoodLoss of log-probabilities X [N, C, d...] (a Val, or TEXX: its tensor
 * text when it was made here) at the targets TG [N, d...] (int64 at run time, or constants),
 * weighted by W [C] (NULL: 1): per point -X[n, t, d] * W[t], 0 where t is ignore_index;
 * reduction none (that tensor), sum, or mean (the sum over the sum of the weights taken). A
 * target outside 0..C-1 other than ignore_index reads the clamped class (ONNX: undefined). */
static bool nll_loss(Imp *I, const Val *x, const char *texx, Val *tg, Val *w, int out) {
  const char *red = imp_attr_s(I, "reduction", "mean");
  bool none = !strcmp(red, "none"), sum = !strcmp(red, "sum");
  if (!none && !sum && strcmp(red, "mean")) return imp_error(I, "reduction '%s' (none, sum or mean)", red);
  int r = x->ndim;
  long long C = r >= 2 ? (long long)x->shape[1] : 0;
  if (r < 2 || tg->ndim != r - 1 || tg->shape[0] != x->shape[0] || memcmp(tg->shape + 1, x->shape + 2, sizeof(int64_t) * (size_t)(r - 2)))
    return imp_error(I, "target of shape [%s] for input [%s] (N, then the input's axes after C)", imp_dims_text(tg->shape, tg->ndim),
                     imp_dims_text(x->shape, r));
  if (w && (w->ndim != 1 || w->shape[0] != C)) return imp_error(I, "weight of shape [%s] for %lld classes", imp_dims_text(w->shape, w->ndim), C);
  if (!tg->c && !imp_run_time_int(tg) && !tg->fint) return imp_unsupported(I, "target of element type %s", imp_type_name(tg->dtype));
  const Onnx__AttributeProto *ia = imp_attr(I, "ignore_index");
  bool has_ii = ia && ia->has_i;
  long long ii = has_ii ? (long long)ia->i : 0;
  const char *p = none ? "i" : "r"; /* the points: the output's axes, or reduction axes */
  char *pt = imp_idx(p, r - 1), *t = tg->c || tg->fint ? xprintf("i64(T[%s])", pt) : xprintf("T[%s]", pt);
  char *cls = xprintf("clamp(%s, 0, %lld)", t, C - 1), *xat = xprintf("%s0, %s", p, cls);
  for (int d = 1; d < r - 1; d++) xat = xprintf("%s, %s%d", xat, p, d);
  char *wt = w ? xprintf("W[%s]", cls) : xstrdup("1.0");
  char *term = xprintf("-(X[%s] * %s)", xat, wt), *taken = wt;
  if (has_ii) term = xprintf("%s == %lld ? 0.0 : %s", t, ii, term), taken = xprintf("%s == %lld ? 0.0 : %s", t, ii, wt);
  char *params = xprintf("X: f32[%s], T: %s%s", imp_dims_text(x->shape, r), tg->c || tg->fint ? xprintf("f32[%s]", imp_dims_text(tg->shape, tg->ndim)) : imp_ty(tg),
                         w ? xprintf(", W: f32[%lld]", C) : "");
  char *args = xprintf("%s, %s%s", texx, imp_tensor(I, tg), w ? xprintf(", %s", imp_tensor(I, w)) : "");
  Val *o = none ? imp_net_out(I, out, r - 1, tg->shape) : imp_net_out(I, out, 0, NULL);
  const char *body = none ? xprintf("  Y[%s] = %s\n", pt, term)
                   : sum  ? xprintf("  Y[z] += %s\n", term)
                   : !w && !has_ii /* the mean over every point: their count */
                          ? xprintf("  tensor S: f32[1]\n  S[z] += %s\n  Y[i0] = S[i0] / %s\n", term, imp_flit((double)val_numel(tg)))
                          : xprintf("  tensor S: f32[1]\n  tensor Q: f32[1]\n  S[z] += %s\n  Q[z] += %s\n  Y[i0] = S[i0] / Q[i0]\n", term, taken);
  const char *kn = imp_kernel(I, xprintf("nll_loss_%s", red), xprintf("(%s) -> Y: %s {\n%s}", params, imp_ty(o), body));
  imp_call(I, o->tex, kn, args);
  return true;
}

static bool op_nll_loss(Imp *I) {
  if (!imp_attrs_known(I, "ignore_index,reduction") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *tg = x ? imp_in(I, 1) : NULL, *w = imp_in(I, 2);
  if (!tg) return x ? imp_error(I, "input 2 (target) is missing") : false;
  if (w && !(w = imp_float_in(I, 2))) return false;
  return nll_loss(I, x, imp_tensor(I, x), tg, w, 0);
}

/* SoftmaxCrossEntropyLoss: the log-softmax of the scores over axis 1 (output 2, log_prob,
 * when asked), then NegativeLogLikelihoodLoss of it. */
static bool op_sce_loss(Imp *I) {
  if (!imp_attrs_known(I, "ignore_index,reduction")) return false;
  if (!imp_two_outputs(I)) return false;
  Val *x = imp_float_in(I, 0), *tg = x ? imp_in(I, 1) : NULL, *w = imp_in(I, 2);
  if (!tg) return x ? imp_error(I, "input 2 (labels) is missing") : false;
  if (w && !(w = imp_float_in(I, 2))) return false;
  int r = x->ndim;
  if (r < 2) return imp_error(I, "scores of rank %d (at least 2: N, C)", r);
  char *all = imp_idx("i", r), *red = xstrdup("i0"), *over = xstrdup("i0, r");
  int64_t rs[HT_MAX_DIMS] = {x->shape[0]};
  for (int d = 2; d < r; d++) red = xprintf("%s, i%d", red, d), over = xprintf("%s, i%d", over, d), rs[d - 1] = x->shape[d];
  bool keep = I->node->n_output > 1 && *I->node->output[1];
  Val *lp = keep ? imp_net_out(I, 1, r, x->shape) : NULL;
  const char *lpt = keep ? lp->tex : imp_name(I, xprintf("%s_log_prob", I->node->output[0]));
  const char *dims = imp_dims_text(rs, r - 1);
  const char *kn = imp_kernel(I, "log_softmax_c", xprintf("(X: %s) -> Y: f32[%s] {\n  tensor M: f32[%s]\n  tensor S: f32[%s]\n"
                                                         "  M[%s] max= X[%s]\n  S[%s] += exp(X[%s] - M[%s])\n"
                                                         "  Y[%s] = X[%s] - M[%s] - log(S[%s])\n}",
                                                         imp_ty(x), imp_dims_text(x->shape, r), dims, dims, red, over, red, over, red,
                                                         all, all, red, red));
  imp_call(I, lpt, kn, imp_tensor(I, x));
  return nll_loss(I, x, lpt, tg, w, 0);
}

/* GridSample's reflection of coordinate V (text) into LO..HI, as ONNX's reference: by the
 * near border, over and over (an odd count of ranges from the other border). */
static char *grid_reflect(const char *v, double lo, double hi) {
  const char *L = imp_flit(lo), *H = imp_flit(hi), *R = imp_flit(hi - lo);
  char *below = xprintf("(%s - %s)", L, v), *above = xprintf("(%s - %s)", v, H);
  char *rb = xprintf("(%s - trunc(%s / %s) * %s)", below, below, R, R), *ra = xprintf("(%s - trunc(%s / %s) * %s)", above, above, R, R);
  return xprintf("(%s < %s ? (fmod(trunc(%s / %s), 2.0) == 0.0 ? %s + %s : %s - %s) : %s > %s ? (fmod(trunc(%s / %s), 2.0) == "
                 "0.0 ? %s - %s : %s + %s) : %s)",
                 v, L, below, R, L, rb, H, rb, v, H, above, R, H, ra, L, ra, v);
}

/* Keys' cubic weight (A = -0.75, as GridSample fixes it) at distance D (text), 0..1 or
 * (FAR) 1..2. */
static char *grid_cubic(const char *d, bool far) {
  const double a = -0.75;
  if (far)
    return xprintf("(((%s * %s - %s) * %s + %s) * %s - %s)", imp_flit(a), d, imp_flit(5 * a), d, imp_flit(8 * a), d, imp_flit(4 * a));
  return xprintf("((%s * %s - %s) * %s * %s + 1.0)", imp_flit(a + 2), d, imp_flit(a + 3), d, d);
}

/* GridSample (opset 16; 20's N-D and mode names): X [N, C, D1..DS] sampled at the grid's
 * normalized coordinates [N, O1..OS, S] (last component first: x, y, ...), S at most 3.
 * One kernel: per spatial axis s the coordinate (un-normalized, rounded for nearest, then
 * clamped for border or reflected for reflection padding: tensor U_s), its taps' input
 * indices (-1 for a tap outside under zeros padding: P_s) and weights (Q_s); the output
 * sums, over the taps of every axis (reduction axes), the product of the weights by the
 * element there (0 outside); with two spatial axes channels last, each tap a contiguous
 * row of the channels (the output channels last too). As ONNX's reference: align_corners maps -1 and 1 to the
 * corner elements' centres, else to the edges of the corner elements. But cubic with
 * border padding clamps each tap, not the coordinate first, as PyTorch and onnxruntime
 * do (the reference clamps both: 0.07-0.2 away from them at coordinates past the border;
 * no node test has the pair). */
static bool op_grid_sample(Imp *I) {
  if (!imp_attrs_known(I, "align_corners,mode,padding_mode") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *g = x ? imp_float_in(I, 1) : NULL;
  if (!g) return false;
  int r = x->ndim, S = r - 2;
  if (S < 1 || S > 3) return imp_unsupported(I, "input of rank %d (3 to 5)", r);
  if (g->ndim != r || g->shape[0] != x->shape[0] || g->shape[r - 1] != S)
    return imp_error(I, "grid of shape [%s] for an input of shape [%s]", imp_dims_text(g->shape, g->ndim), imp_dims_text(x->shape, r));
  const char *mode = imp_attr_s(I, "mode", I->opset >= 20 ? "linear" : "bilinear"),
             *pad = imp_attr_s(I, "padding_mode", "zeros");
  int taps = !strcmp(mode, "nearest") ? 1 : !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? 2
           : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic") ? 4 : 0;
  if (!taps) return imp_error(I, "mode '%s'", mode);
  bool zeros = !strcmp(pad, "zeros"), border = !strcmp(pad, "border"), reflection = !strcmp(pad, "reflection");
  if (!zeros && !border && !reflection) return imp_error(I, "padding_mode '%s'", pad);
  bool align = imp_attr_i(I, "align_corners", 0) != 0;
  int64_t os[HT_MAX_DIMS];
  os[0] = x->shape[0], os[1] = x->shape[1];
  for (int d = 0; d < S; d++) os[2 + d] = g->shape[1 + d];
  char *o = xstrdup("");
  for (int d = 0; d < S; d++) o = xprintf("%s, o%d", o, d);
  char *body = xstrdup(""), *decl = xstrdup("");
  char *odims = xstrdup("");
  for (int d = 0; d < S; d++) odims = xprintf("%s, %lld", odims, (long long)g->shape[1 + d]);
  char *prod = xstrdup(""), *guard = xstrdup(""), *at = xstrdup("");
  for (int s = 0; s < S; s++) {
    double D = (double)x->shape[2 + s], lo = align ? 0 : -0.5, hi = align ? D - 1 : D - 0.5;
    const char *Dl = imp_flit(D), *Dm = imp_flit(D - 1);
    char *gv = xprintf("G[n%s, %d]", o, S - 1 - s);
    char *den = align ? xprintf("(%s + 1.0) / 2.0 * %s", gv, Dm) : xprintf("((%s + 1.0) * %s - 1.0) / 2.0", gv, Dl);
    if (taps == 1) den = xprintf("round(%s)", den);
    char *V = xprintf("V%d[n%s]", s, o), *U = xprintf("U%d[n%s]", s, o);
    char *u = border && taps != 4 ? xprintf("%s < %s ? 0.0 : %s > %s ? %s : %s", V, imp_flit(lo), V, imp_flit(hi), Dm, V)
            : reflection ? grid_reflect(V, lo, hi) : V;
    char *k = taps == 1 ? xprintf("trunc(%s)", U) : xprintf("floor(%s) + %sf32(t)", U, taps == 4 ? "(-1.0) + " : "");
    char *idx = zeros ? xprintf("%s >= 0.0 && %s <= %s ? %s : (-1.0)", k, k, Dm, k)
              : border ? xprintf("clamp(%s, 0.0, %s)", k, Dm) : xprintf("trunc(%s)", grid_reflect(xprintf("(%s)", k), lo, hi));
    char *f = xprintf("(%s - floor(%s))", U, U);
    char *w = taps == 1 ? xstrdup("1.0")
            : taps == 2 ? xprintf("t == 0 ? 1.0 - %s : %s", f, f)
                        : xprintf("t == 0 ? %s : t == 1 ? %s : t == 2 ? %s : %s", grid_cubic(xprintf("(%s + 1.0)", f), true),
                                  grid_cubic(f, false), grid_cubic(xprintf("(1.0 - %s)", f), false),
                                  grid_cubic(xprintf("(2.0 - %s)", f), true));
    decl = xprintf("%s  tensor V%d: f32[%lld%s]\n  tensor U%d: f32[%lld%s]\n  tensor P%d: f32[%lld%s, %d]\n  tensor Q%d: f32[%lld%s, %d]\n",
                   decl, s, (long long)x->shape[0], odims, s, (long long)x->shape[0], odims, s, (long long)x->shape[0], odims,
                   taps, s, (long long)x->shape[0], odims, taps);
    body = xprintf("%s  V%d[n%s] = %s\n  U%d[n%s] = %s\n  P%d[n%s, t] = %s\n  Q%d[n%s, t] = %s\n", body, s, o, den, s, o, u, s, o,
                   idx, s, o, w);
    char *p = xprintf("P%d[n%s, r%d]", s, o, s);
    prod = xprintf("%s%sQ%d[n%s, r%d]", prod, s ? " * " : "", s, o, s);
    guard = xprintf("%s%s%s >= 0.0", guard, s ? " && " : "", p);
    at = xprintf("%s, clamp(i32(%s), 0, %lld)", at, p, (long long)x->shape[2 + s] - 1);
  }
  bool nhwc = S == 2; /* channels last: each tap one contiguous row of C */
  char *val = nhwc ? xprintf("X[n%s, c]", at) : xprintf("X[n, c%s]", at);
  if (zeros) val = xprintf("(%s ? %s : 0.0)", guard, val);
  int64_t xs[HT_MAX_DIMS], ys[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) xs[d] = x->shape[nhwc ? imp_nhwc_axis[d] : d], ys[d] = os[nhwc ? imp_nhwc_axis[d] : d];
  Val *y = imp_net_out(I, 0, r, ys);
  const char *kn = imp_kernel(I, xprintf("grid_sample_%s", taps == 1 ? "nearest" : taps == 2 ? "linear" : "cubic"),
                              xprintf("(X: f32[%s], G: f32[%s]) -> Y: %s {\n%s%s  Y[n%s%s] += %s * %s\n}",
                                      imp_dims_text(xs, r), imp_dims_text(g->shape, r), imp_ty(y), decl, body,
                                      nhwc ? "" : ", c", xprintf("%s%s", o, nhwc ? ", c" : ""), prod, val));
  imp_call(I, y->tex, kn, xprintf("%s, %s", nhwc ? imp_tensor_nhwc(I, x) : imp_tensor(I, x), imp_tensor(I, g)));
  if (nhwc) { /* the logical shape, held channels last */
    memcpy(y->shape, os, sizeof(int64_t) * 4);
    y->nhwc = true;
  }
  return true;
}

/* ArgMax / ArgMin: the index (int64, held as such) of the largest / smallest value along
 * the axis, the first one or (select_last_index) the last one: argmax= over the axis read
 * backwards, then counted from the end. keepdims keeps the axis as 1. */
static bool op_argmax(Imp *I, bool max) {
  if (!imp_attrs_known(I, "axis,keepdims,select_last_index") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, max ? "ArgMax" : "ArgMin"))) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r ? r : 1), no = 0;
  if (a < 0) return false;
  bool keep = imp_attr_i(I, "keepdims", 1), last = imp_attr_i(I, "select_last_index", 0);
  long long n = x->shape[a];
  int64_t os[HT_MAX_DIMS], ks[HT_MAX_DIMS];
  char *src = xstrdup(""), *kept = xstrdup(""), *lhs = xstrdup("");
  int nk = 0;
  for (int d = 0; d < r; d++) {
    const char *at = d != a ? xprintf("i%d", d) : last ? xprintf("%lld - 1 - r", n) : "r";
    src = xprintf("%s%s%s", src, d ? ", " : "", at);
    if (d != a) kept = xprintf("%s%si%d", kept, nk ? ", " : "", d), ks[nk++] = x->shape[d];
    if (d != a || keep) {
      lhs = xprintf("%s%s%s", lhs, no ? ", " : "", d == a ? "z" : xprintf("i%d", d));
      os[no++] = d == a ? 1 : x->shape[d];
    }
  }
  bool none = !nk; /* every axis reduced: T is [1] */
  if (none) kept = xstrdup("0"), ks[nk++] = 1;
  if (!no) lhs = xstrdup("z"), os[no++] = 1;
  Val *o = imp_net_out(I, 0, no, os);
  o->dtype = OT_INT64;
  const char *kn = imp_kernel(I, max ? "argmax" : "argmin",
                              xprintf("(X: %s) -> Y: %s {\n  tensor T: i64[%s]\n  T[%s] %s X[%s] where r in 0..%lld\n"
                                      "  Y[%s] = %s\n}",
                                      imp_ty(x), imp_ty(o), imp_dims_text(ks, nk), none ? "z0" : kept, max ? "argmax=" : "argmin=",
                                      src, n, lhs, last ? xprintf("%lld - 1 - T[%s]", n, kept) : xprintf("T[%s]", kept)));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* TopK: the K largest (smallest) along an axis, in order, ties to the lower index, and
 * their indices. Each element's rank (how many elements come before it: larger, or equal
 * at a lower index) is counted by one kernel, exactly in f32 (up to 2^24 elements); output
 * q of the values and of the indices then sums the one element whose rank is q. n^2
 * comparisons along an axis of n: a classifier's or a router's top-k, not a sort of
 * millions. */
static bool op_topk(Imp *I) {
  if (!imp_attrs_known(I, I->opset < 10 ? "axis,k" : "axis,largest,sorted")) return false;
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, "TopK"))) return false;
  int64_t k = imp_attr_i(I, "k", 0);
  if (I->opset >= 10) {
    Val *kv = imp_const_in(I, 1, "k");
    if (!kv) return false;
    if (val_numel(kv) != 1) return imp_error(I, "k has %lld values (1)", (long long)val_numel(kv));
    k = (int64_t)kv->c[0];
  }
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", -1), r);
  if (a < 0) return false;
  int64_t n = x->shape[a];
  if (k < 1 || k > n)
    return k == 0 ? imp_unsupported(I, "k 0 (an empty output)") : imp_error(I, "k %lld outside 1..%lld", (long long)k, (long long)n);
  if (n > (1 << 24)) return imp_unsupported(I, "an axis of %lld elements (ranks are counted in f32: at most 2^24)", (long long)n);
  bool largest = imp_attr_i(I, "largest", 1) != 0;
  char *idx = imp_idx("i", r), *at_j = xstrdup(""), *at_i = xstrdup(""), *at_q = xstrdup("");
  for (int d = 0; d < r; d++) {
    at_j = xprintf("%s%s%s", at_j, d ? ", " : "", d == a ? "j" : xprintf("i%d", d));
    at_i = xprintf("%s%s%s", at_i, d ? ", " : "", d == a ? "i" : xprintf("i%d", d));
    at_q = xprintf("%s%s%s", at_q, d ? ", " : "", d == a ? "q" : xprintf("i%d", d));
  }
  const char *rank = imp_name(I, xprintf("%s_rank", x->name)); /* f32, X's shape */
  const char *kn = imp_kernel(I, largest ? "topk_rank" : "bottomk_rank",
                              xprintf("(X: %s) -> Y: f32[%s] {\n  Y[%s] += X[%s] %s X[%s] || X[%s] == X[%s] && j < i%d ? 1.0 : 0.0 "
                                      "where j in 0..%lld\n}",
                                      imp_ty(x), imp_dims_text(x->shape, r), idx, at_j, largest ? ">" : "<", idx, at_j, idx, a,
                                      (long long)n));
  imp_call(I, rank, kn, imp_tensor(I, x));
  int64_t os[HT_MAX_DIMS];
  memcpy(os, x->shape, sizeof(int64_t) * (size_t)r);
  os[a] = k;
  for (int out = 0; out < 2; out++) {
    if ((size_t)out >= I->node->n_output || !*I->node->output[out]) continue;
    Val *o = imp_net_out(I, out, r, os);
    if (out) o->dtype = OT_INT64;
    kn = imp_kernel(I, out ? "topk_indices" : "topk_values",
                    xprintf("(X: %s, R: f32[%s]) -> Y: %s {\n  Y[%s] += R[%s] == f32(q) ? %s : %s where i in 0..%lld\n}",
                            imp_ty(x), imp_dims_text(x->shape, r), imp_ty(o), at_q, at_i,
                            out ? "i64(i)" : xprintf("X[%s]", at_i), out ? "i64(0)" : "0.0", (long long)n));
    imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), rank));
  }
  return true;
}

/* Node I->node if OP is one of this file's operators (convolutions, pools, products, reductions, normalizations, Einsum, CumSum, ArgMax, Resize): 1 or 0 (reported), else -1. */
/* Col2Im (opset 18; MobileViTv2's folding of patches back into the image): the blocks of an
 * im2col, X [N, C x KH x KW, L], summed into the image [N, C, H, W]: each output point the sum
 * of the block elements that land on it (2-D; image_shape and block_shape constants). */
static bool op_col2im(Imp *I) {
  if (!imp_attrs_known(I, "dilations,pads,strides") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *is = x ? imp_const_in(I, 1, "image_shape") : NULL, *bs = is ? imp_const_in(I, 2, "block_shape") : NULL;
  if (!bs || !(x = imp_as_tensor(I, x, "Col2Im"))) return false;
  if (val_numel(is) != 2 || val_numel(bs) != 2) return imp_unsupported(I, "a %lld-D image (2-D only)", (long long)val_numel(is));
  if (x->ndim != 3) return imp_error(I, "the input has rank %d (3: [N, C x block, blocks])", x->ndim);
  int64_t img[2] = {(int64_t)is->c[0], (int64_t)is->c[1]}, k[2] = {(int64_t)bs->c[0], (int64_t)bs->c[1]}, s[2], d[2], p[4] = {0};
  if (!spatial_n(I, 2, "strides", s) || !spatial_n(I, 2, "dilations", d)) return false;
  int np = imp_attr_ints(I, "pads", p, 4);
  if (np >= 0 && np != 4) return imp_unsupported(I, "pads of %d values (2-D: 4)", np);
  int64_t o[2];
  for (int i = 0; i < 2; i++) {
    if (img[i] < 1 || k[i] < 1 || p[i] < 0 || p[i + 2] < 0 || img[i] > (1 << 24) || k[i] > (1 << 24) || p[i] > (1 << 24) || p[i + 2] > (1 << 24))
      return imp_error(I, "image %lld, block %lld, pads %lld and %lld along axis %d", (long long)img[i], (long long)k[i],
                       (long long)p[i], (long long)p[i + 2], i);
    o[i] = (img[i] + p[i] + p[i + 2] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
    if (o[i] < 1) return imp_error(I, "the block (%lld, dilated %lld) does not fit the padded image (%lld) along axis %d",
                                   (long long)k[i], (long long)d[i], (long long)(img[i] + p[i] + p[i + 2]), i);
  }
  int64_t kk = k[0] * k[1], n = x->shape[0];
  if (x->shape[1] % kk || x->shape[2] != o[0] * o[1])
    return imp_error(I, "the input %s is not [N, C x %lld, %lld] (blocks of %lld x %lld over %lld x %lld)", imp_ty(x), (long long)kk,
                     (long long)(o[0] * o[1]), (long long)k[0], (long long)k[1], (long long)o[0], (long long)o[1]);
  int64_t os[4] = {n, x->shape[1] / kk, img[0], img[1]};
  Val *out = imp_net_out(I, 0, 4, os);
  /* along each axis the padded position v + P - tap D: a block start where a multiple of S */
  char *at[2], *ok = xstrdup("");
  const char *v[2] = {"y", "x"}, *t[2] = {"i", "j"};
  for (int i = 0; i < 2; i++) {
    char *e = xprintf("(%s + %lld - %s * %lld)", v[i], (long long)p[i], t[i], (long long)d[i]);
    ok = xprintf("%s%s%s %% %lld == 0 && %s >= 0 && %s / %lld < %lld", ok, i ? " && " : "", e, (long long)s[i], e, e,
                 (long long)s[i], (long long)o[i]);
    at[i] = xprintf("clamp(%s / %lld, 0, %lld)", e, (long long)s[i], (long long)(o[i] - 1));
  }
  const char *kn = imp_kernel(I, "col2im", xprintf("(X: %s) -> Y: %s {\n  Y[n, c, y, x] += %s ? X[n, c * %lld + i * %lld + j, %s * %lld + %s] "
                                                   ": 0.0 where i in 0..%lld, j in 0..%lld\n}", imp_ty(x), imp_ty(out), ok,
                                                   (long long)kk, (long long)k[1], at[0], (long long)o[1], at[1], (long long)k[0],
                                                   (long long)k[1]));
  imp_call(I, out->tex, kn, imp_tensor(I, x));
  return true;
}

int onnx_nn_op(Imp *I, const char *op) {
  if (!strcmp(op, "Col2Im")) return op_col2im(I);
  if (!strcmp(op, "LayerNormalization")) return op_layer_norm(I);
  if (!strcmp(op, "RMSNormalization")) return op_rms_norm(I);
  if (!strcmp(op, "GroupNormalization")) return op_group_norm(I);
  if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin")) return op_argmax(I, !strcmp(op, "ArgMax"));
  if (!strcmp(op, "TopK")) return op_topk(I);
  if (!strcmp(op, "Conv")) return op_conv(I);
  if (!strcmp(op, "ConvTranspose")) return op_conv_transpose(I);
  if (!strcmp(op, "MaxPool")) return op_pool(I, true);
  if (!strcmp(op, "AveragePool")) return op_pool(I, false);
  if (!strcmp(op, "GlobalAveragePool")) return op_global_pool(I, "mean");
  if (!strcmp(op, "GlobalMaxPool")) return op_global_pool(I, "max");
  if (!strcmp(op, "ReduceMean")) return op_reduce(I, "mean");
  if (!strcmp(op, "ReduceSum")) return op_reduce(I, "sum");
  if (!strcmp(op, "ReduceMax")) return op_reduce(I, "max");
  if (!strcmp(op, "ReduceMin")) return op_reduce(I, "min");
  if (!strcmp(op, "ReduceSumSquare")) return op_reduce(I, "sumsq");
  if (!strcmp(op, "ReduceL1")) return op_reduce(I, "l1");
  if (!strcmp(op, "ReduceL2")) return op_reduce(I, "l2");
  if (!strcmp(op, "ReduceLogSum")) return op_reduce(I, "logsum");
  if (!strcmp(op, "ReduceLogSumExp")) return op_reduce(I, "logsumexp");
  if (!strcmp(op, "ReduceProd")) return op_reduce(I, "prod");
  if (!strcmp(op, "InstanceNormalization")) return op_instance_norm(I);
  if (!strcmp(op, "Resize")) return op_resize(I, false);
  if (!strcmp(op, "Upsample")) return op_resize(I, true);
  if (!strcmp(op, "GridSample")) return op_grid_sample(I);
  if (!strcmp(op, "MaxUnpool")) return op_max_unpool(I);
  if (!strcmp(op, "NegativeLogLikelihoodLoss")) return op_nll_loss(I);
  if (!strcmp(op, "DFT")) return op_dft(I);
  if (!strcmp(op, "STFT")) return op_stft(I);
  if (!strcmp(op, "SoftmaxCrossEntropyLoss")) return op_sce_loss(I);
  if (!strcmp(op, "LRN")) return op_lrn(I);
  if (!strcmp(op, "Hardmax")) return op_hardmax(I);
  if (!strcmp(op, "Einsum")) return op_einsum(I);
  if (!strcmp(op, "CausalConvWithState")) return op_causal_conv(I);
  if (!strcmp(op, "CumSum") || !strcmp(op, "CumProd")) return op_cumulative(I, !strcmp(op, "CumProd"));
  if (!strcmp(op, "MeanVarianceNormalization")) return op_mvn(I);
  if (!strcmp(op, "Softmax")) return op_softmax(I, false);
  if (!strcmp(op, "LogSoftmax")) return op_softmax(I, true);
  if (!strcmp(op, "Gemm")) return op_gemm(I);
  if (!strcmp(op, "MatMul")) return op_matmul(I);
  if (!strcmp(op, "BatchNormalization")) return op_batch_norm(I);
  return -1;
}
