/* onnx_quant.c — the operators of quantized models (docs/ONNX.md, "Quantized models"):
 * QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, MatMulInteger and
 * ConvInteger, QLinearMatMul and QLinearConv; onnx_quant_op is their entry from the table.
 *
 * A quantized value at run time (uint8, int8) is held as f32 values that are exact
 * integers (Val.fint, dtype OT_UINT8 / OT_INT8); the integer products accumulate in i32
 * kernels (a sum over K of products up to 255 x 255 passes 2^24), whose results are i32
 * tensors (OT_INT32). A node of constants only folds here: an int8 weight behind a
 * DequantizeLinear becomes a float constant (and then a Conv's constant filter). The float
 * arithmetic is onnxruntime's, operation by operation: x / scale in f32, rounded half to
 * even, the zero point added, saturated; (x - zero point) * scale; a requantization's
 * multiplier (a_scale * b_scale) / y_scale, times the accumulator made f32.
 */
#include "onnx/onnx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- types and operands ------------------------------------------------------------ */

static bool q8(int dt) { return dt == OT_UINT8 || dt == OT_INT8; }
static double qlo(int dt) { return dt == OT_INT8 ? -128 : 0; }
static double qhi(int dt) { return dt == OT_INT8 ? 127 : 255; }

/* Kernel text of a quantization's last step: round(V) plus the zero point ZP (NULL: none),
 * saturated to DT's range. */
static char *q_saturate(const char *v, const char *zp, int dt) {
  return xprintf("min(max(round(%s)%s%s, %s), %s)", v, zp ? " + " : "", zp ? zp : "", imp_flit(qlo(dt)), imp_flit(qhi(dt)));
}

/* Input K (WHAT), present and of element type uint8 or int8 (or int32 where I32); NULL:
 * reported. */
static Val *q_in(Imp *I, int k, const char *what, bool i32) {
  Val *v = imp_in(I, k);
  if (!v) return imp_error(I, "input %d (%s) is missing", k + 1, what), NULL;
  if (q8(v->dtype) || (i32 && v->dtype == OT_INT32)) return v;
  return imp_unsupported(I, "input %d (%s) of element type %s (uint8, int8%s)", k + 1, what, imp_type_name(v->dtype),
                         i32 ? ", int32" : ""), NULL;
}

/* Optional zero point K: absent (NULL, no error), or of a quantized type (int32 too where
 * I32); *BAD on error. */
static Val *zp_in(Imp *I, int k, const char *what, bool *bad, bool i32) {
  if (!imp_in(I, k)) return NULL;
  Val *v = q_in(I, k, what, i32);
  *bad |= !v;
  return v;
}

/* Scale input K (WHAT): float, one value or a vector; NULL: reported. */
static Val *scale_in(Imp *I, int k, const char *what) {
  Val *v = imp_in(I, k);
  if (!v) return imp_error(I, "input %d (%s) is missing", k + 1, what), NULL;
  if (v->dtype != OT_FLOAT) return imp_unsupported(I, "input %d (%s) of element type %s (float)", k + 1, what, imp_type_name(v->dtype)), NULL;
  if (v->ndim > 1 && val_numel(v) != 1)
    return imp_unsupported(I, "input %d (%s) of rank %d (one value, or one per index of an axis)", k + 1, what, v->ndim), NULL;
  return v;
}

/* V read at index IDX in a kernel, as an f32 expression (an i32 one with AS_INT): a
 * literal when V is one constant value, else a parameter of the kernel (one value of any
 * rank is read at 0, ...). */
static char *operand(Imp *I, ImpCall *o, Val *v, const char *idx, bool as_int) {
  if (v->c && val_numel(v) == 1) return as_int ? xprintf("(%lld)", (long long)v->c[0]) : imp_flit(v->c[0]);
  const char *pn = xprintf("P%d", o->n);
  imp_call_arg(I, o, pn, v);
  char *at = xstrdup("");
  if (val_numel(v) == 1)
    for (int d = 0; d < (v->ndim ? v->ndim : 1); d++) at = xprintf("%s%s0", at, d ? ", " : "");
  char *acc = xprintf("%s[%s]", pn, val_numel(v) == 1 ? at : idx);
  bool i = imp_run_time_int(v);
  return as_int ? (i ? acc : xprintf("i32(%s)", acc)) : (i ? xprintf("f32(%s)", acc) : acc);
}

/* Scale or zero point V of X: one value, or one per index of axis AXIS of X, as a value
 * that broadcasts against X ([C, 1, ..., 1]: a constant reshaped, a network tensor through
 * a kernel). NULL: reported. */
static Val *along(Imp *I, Val *v, const Val *x, int axis, const char *what) {
  if (!v || val_numel(v) == 1) return v;
  if (v->ndim != 1 || v->shape[0] != x->shape[axis])
    return imp_error(I, "%s has %lld values; axis %d of the input has %lld", what, (long long)val_numel(v), axis,
                     (long long)x->shape[axis]), NULL;
  if (axis == x->ndim - 1) return v;
  Val *u = xalloc(sizeof *u);
  *u = *v;
  u->name = xprintf("%s_axis%d", v->name, axis);
  u->ndim = x->ndim - axis;
  for (int d = 1; d < u->ndim; d++) u->shape[d] = 1;
  u->tex = NULL, u->param = false, u->nhwc = false, u->other = NULL, u->as_f32 = NULL;
  if (v->c) return u;
  char *ix = imp_idx("i", u->ndim);
  const char *k = imp_kernel(I, "along_axis", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[i0]\n}", imp_ty(v), imp_ty(u), ix));
  u->tex = imp_name(I, u->name);
  imp_call(I, u->tex, k, imp_tensor(I, v));
  return u;
}

/* The axis attribute of a per-axis scale S of X; -1: reported. */
static int quant_axis(Imp *I, const Val *s, const Val *x) {
  if (val_numel(s) == 1) return 0;
  if (I->opset < 13) return imp_unsupported(I, "a scale of %lld values in opset %d (per axis from opset 13)", (long long)val_numel(s), I->opset), -1;
  return imp_axis_of(I, imp_attr_i(I, "axis", 1), x->ndim);
}

/* Attributes of opsets 19 and 21 that texc does not read: block_size (blocked
 * quantization) unless 0; saturate only concerns float8 types, refused anyway. */
static bool no_blocks(Imp *I) {
  if (imp_attr_i(I, "block_size", 0) != 0) return imp_unsupported(I, "block_size %lld (blocked quantization)", (long long)imp_attr_i(I, "block_size", 0));
  return true;
}

/* ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear ------------------------ */

/* round(x / s) + z saturated to [LO, HI], as onnxruntime computes it in f32. */
static double quantize1(double x, double s, double z, int dt) {
  float q = nearbyintf((float)x / (float)s) + (float)z;
  return q < qlo(dt) ? qlo(dt) : q > qhi(dt) ? qhi(dt) : q;
}

/* QuantizeLinear (DT the quantized type) or DequantizeLinear (DT float) of constants X,
 * scale S and zero point Z (NULL: 0), per tensor or along AXIS: folded into output 0. */
static bool fold_affine(Imp *I, const Val *x, const Val *s, const Val *z, int axis, int dt) {
  int64_t n = val_numel(x), inner = 1;
  for (int d = axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  double *c = imp_vals(n);
  for (int64_t i = 0; i < n; i++) {
    int64_t a = val_numel(s) == 1 ? 0 : (i / inner) % x->shape[axis];
    double zp = z ? z->c[a] : 0;
    c[i] = dt == OT_FLOAT ? (float)(x->c[i] - zp) * (float)s->c[a] : quantize1(x->c[i], s->c[a], zp, dt);
  }
  imp_const_out(I, 0, dt, x->ndim, x->shape, c);
  return true;
}

/* QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), per tensor or per axis;
 * the output's type is the zero point's (else output_dtype, else uint8). */
static bool op_quantize(Imp *I) {
  if (!imp_attrs_known(I, I->opset < 13 ? "" : "axis,saturate,block_size,output_dtype") || !imp_one_output(I) || !no_blocks(I)) return false;
  bool bad = false;
  Val *x = imp_in(I, 0), *s = scale_in(I, 1, "y_scale"), *z = s ? zp_in(I, 2, "y_zero_point", &bad, false) : NULL;
  if (!x) return imp_error(I, "input 1 (x) is missing");
  if (!s || bad) return false;
  if (x->dtype != OT_FLOAT) return imp_unsupported(I, "input 1 (x) of element type %s (float)", imp_type_name(x->dtype));
  int dt = z ? z->dtype : (int)imp_attr_i(I, "output_dtype", OT_UINT8);
  if (!q8(dt) || (imp_attr(I, "output_dtype") && imp_attr_i(I, "output_dtype", 0) != dt))
    return imp_unsupported(I, "output_dtype %s with a zero point of %s (uint8 and int8 only)", imp_type_name((int)imp_attr_i(I, "output_dtype", 0)), imp_type_name(dt));
  if (z && val_numel(z) != val_numel(s)) return imp_error(I, "the zero point has %lld values, the scale %lld", (long long)val_numel(z), (long long)val_numel(s));
  int axis = quant_axis(I, s, x);
  if (axis < 0) return false;
  if (x->c && s->c && (!z || z->c)) return fold_affine(I, x, s, z, axis, dt);
  Val *in[3] = {imp_float_in(I, 0), along(I, s, x, axis, "y_scale"), z ? along(I, z, x, axis, "y_zero_point") : NULL};
  if (!in[0] || !in[1] || (z && !in[2])) return false;
  return imp_as_int(I, imp_ew(I, "quantize", in, z ? 3 : 2, q_saturate("$0 / $1", z ? "$2" : NULL, dt)), dt);
}

static const char *q_nhwc_u8(Imp *I, Val *xq, int64_t c4, double zx, int xo);

/* Output 0 of a DequantizeLinear remembers X, its scale S and zero point Z along AXIS (the
 * quantized convolution reads them: imp_qconv2d). */
static bool dq_mark(Imp *I, const Val *x, const Val *s, const Val *z, int axis) {
  Val *o = imp_val(I, I->node->output[0]);
  if (o) o->dq_x = x, o->dq_s = s, o->dq_z = z, o->dq_axis = axis;
  return true;
}

/* Is NAME read as bytes anyway, or only by residual Adds: does a Conv of the graph read it
 * as its input X, or do Adds alone read it (at least one)? */
static bool bytes_pay(const Imp *I, const char *name) {
  bool adds = true, read = false;
  for (size_t i = 0; I->graph && i < I->graph->n_node; i++) {
    const Onnx__NodeProto *nd = I->graph->node[i];
    for (size_t j = 0; j < nd->n_input; j++) {
      if (strcmp(nd->input[j], name)) continue;
      if (j == 0 && nd->op_type && !strcmp(nd->op_type, "Conv")) return true;
      read = true;
      adds &= nd->op_type && !strcmp(nd->op_type, "Add");
    }
  }
  return read && adds;
}

/* With integer kernels (I->int8), a run-time uint8 / int8 X held channels last, its
 * channels a multiple of 4, with one constant scale S and zero point Z, whose dequantized
 * value a convolution reads (which will read X's u8 copy) or residual Adds alone (which
 * read it from another kernel: bytes cost less to pass): dequantized from that copy
 * (q_nhwc_u8, made here), f32(u) - (Z + XO) being X - Z exactly. Then the copy is all that
 * reads X and fuses into the kernel that quantizes it, which writes one byte per value
 * instead of four, and this dequantization reads bytes (a QDQ ResNet's block output:
 * quantized once, read by the next block's convolutions as u8 and, dequantized, by its
 * residual Add, into whose kernel it moves: front/network.c order_for_fusion). Other values
 * keep the f32 form: their kernels (a SiLU's sigmoid and product in
 * efficientnet_b0, fused into the convolution before) would convert to bytes and back for
 * nothing (1.1x slower measured). false: not such a value (nothing written). */
static bool dq_of_u8(Imp *I, Val *x, const Val *s, const Val *z) {
  if (!I->int8 || !x->nhwc || x->ndim != 4 || x->shape[1] % 4 || !q8(x->dtype) || val_numel(s) != 1 || !s->c ||
      (z && (val_numel(z) != 1 || !z->c)) || !bytes_pay(I, I->node->output[0]))
    return false;
  int xo = x->dtype == OT_INT8 ? 128 : 0;
  double zx = (z ? z->c[0] : 0) + xo;
  const char *u = q_nhwc_u8(I, x, x->shape[1], zx, xo);
  int64_t sh[4] = {x->shape[0], x->shape[2], x->shape[3], x->shape[1]};
  Val *o = imp_net_out(I, 0, 4, sh);
  ImpCall c = {.params = xprintf("X0: u8[%s]", imp_dims_text(sh, 4)), .args = xstrdup(u), .n = 1};
  imp_call_kernel(I, &c, "dequantize_u8", o,
                  xprintf("Y[i0, i1, i2, i3] = (f32(X0[i0, i1, i2, i3]) - %s) * %s", imp_flit(zx), imp_flit(s->c[0])));
  memcpy(o->shape, x->shape, sizeof o->shape);
  o->nhwc = true;
  return true;
}

/* DequantizeLinear: y = (x - x_zero_point) * x_scale (f32: the difference is exact, one
 * rounding of the product), per tensor or per axis; int32 x has no zero point but 0. */
static bool op_dequantize(Imp *I) {
  if (!imp_attrs_known(I, I->opset < 13 ? "" : "axis,block_size") || !imp_one_output(I) || !no_blocks(I)) return false;
  bool bad = false;
  Val *x = q_in(I, 0, "x", true), *s = x ? scale_in(I, 1, "x_scale") : NULL, *z = s ? zp_in(I, 2, "x_zero_point", &bad, true) : NULL;
  if (!s || bad) return false;
  if (z && z->dtype != x->dtype) return imp_error(I, "x is %s but its zero point %s", imp_type_name(x->dtype), imp_type_name(z->dtype));
  bool zero = true;
  for (int64_t i = 0; z && i < val_numel(z); i++) zero &= z->c && z->c[i] == 0;
  if (x->dtype == OT_INT32 && !zero) return imp_error(I, "int32 x with a zero point other than 0");
  if (z && val_numel(z) != val_numel(s)) return imp_error(I, "the zero point has %lld values, the scale %lld", (long long)val_numel(z), (long long)val_numel(s));
  int axis = quant_axis(I, s, x);
  if (axis < 0) return false;
  if (x->c && s->c && (!z || z->c)) return fold_affine(I, x, s, z, axis, OT_FLOAT) && dq_mark(I, x, s, z, axis);
  if (x->c) return imp_unsupported(I, "a constant x with a scale computed at run time");
  if (dq_of_u8(I, x, s, z)) return dq_mark(I, x, s, z, axis);
  Val *in[3] = {imp_run_time_int(x) ? imp_int_as_f32(I, x) : x, along(I, s, x, axis, "x_scale"),
                z ? along(I, z, x, axis, "x_zero_point") : NULL};
  if (!in[1] || (z && !in[2])) return false;
  return imp_ew(I, "dequantize", in, z ? 3 : 2, z ? "($0 - $2) * $1" : "$0 * $1") && dq_mark(I, x, s, z, axis);
}

/* ---- the quantized convolution (QDQ: DequantizeLinear -> Conv) ---------------------- */

static bool same_shape(const Val *a, const Val *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

/* One constant value of V (NULL: 0) in [LO, HI] into *OUT? */
static bool one_const(const Val *v, double lo, double hi, double *out) {
  *out = 0;
  if (!v) return true;
  if (!v->c || val_numel(v) != 1) return false;
  *out = v->c[0];
  return *out >= lo && *out <= hi;
}

/* The packed int8 filter W (f32 constants [KH, KW, C4 / 4, CO, 4], exact integers) made
 * i8 at load (stdlib qfilter_i8): its network name; *ZSUM: ZMUL times each output channel's
 * sum (qfilter_zsum, i32[CO], at load too). */
static const char *q_filter(Imp *I, Val *w, int64_t zmul, const char **zsum) {
  const char *kq = imp_name(I, xprintf("%s_i8", w->name));
  imp_call(I, kq, "qfilter_i8", imp_tensor(I, w));
  *zsum = imp_name(I, xprintf("%s_zsum", w->name));
  imp_call(I, *zsum, "qfilter_zsum", xprintf("%s, ZX = %lld", kq, (long long)zmul));
  return kq;
}

/* Is V absent or all zeros (a constant)? */
static bool zero_or_none(const Val *v) {
  for (int64_t i = 0; v && i < val_numel(v); i++)
    if (!v->c || v->c[i] != 0) return false;
  return true;
}

/* The run-time uint8 or int8 value that X dequantizes (one scale *SX and zero point *ZX,
 * the zero point made u8's: int8 values get 128 added, *XO), when I allows integer kernels
 * and X is its whole value; NULL otherwise. */
static Val *dq_input(Imp *I, const Val *x, double *sx, double *zx, int *xo) {
  Val *xq = (Val *)x->dq_x;
  if (!I->int8 || !xq || xq->c || !q8(xq->dtype) || !same_shape(xq, x) || !one_const(x->dq_s, 1e-30, 1e30, sx) ||
      !one_const(x->dq_z, qlo(xq->dtype), qhi(xq->dtype), zx))
    return NULL;
  *xo = xq->dtype == OT_INT8 ? 128 : 0; /* int8 values and their zero point made u8 */
  *zx += *xo;
  return xq;
}

/* The int8 constant that W dequantizes, symmetric, scaled per tensor or along axis AXIS's N
 * values; NULL otherwise. */
static const Val *dq_filter(const Val *w, int axis, int64_t n) {
  const Val *wq = w->dq_x;
  if (!wq || !wq->c || wq->dtype != OT_INT8 || !same_shape(wq, w) || !w->dq_s || !w->dq_s->c || !zero_or_none(w->dq_z) ||
      (val_numel(w->dq_s) != 1 && (w->dq_axis != axis || val_numel(w->dq_s) != n)))
    return NULL;
  return wq;
}

/* S[j] = SX * W's scale (its j-th, or its one), N values: an integer kernel's factor; for a
 * QLinearConv (QO) divided by y_scale, onnxruntime's requantization multiplier. */
static Val *q_scales(const Val *w, double sx, int64_t n, const QOut *qo) {
  Val *sc = xalloc(sizeof *sc);
  *sc = (Val){.name = xprintf("%s_qscale", w->name), .dtype = OT_FLOAT, .ndim = 1, .shape = {n}, .c = imp_vals(n)};
  for (int64_t j = 0; j < n; j++) {
    sc->c[j] = (float)sx * (float)w->dq_s->c[val_numel(w->dq_s) == 1 ? 0 : j];
    if (qo) sc->c[j] = (float)sc->c[j] / (float)qo->ys->c[0];
  }
  return sc;
}

/* Does a QLinearConv's bias (QO) fit f32 exactly (below 2^24), so that the zero-point term
 * less the bias is exact? No bias, or no QLinearConv: yes. */
static bool bias_fits(const QOut *qo) {
  for (int64_t i = 0; qo && qo->b && i < val_numel(qo->b); i++)
    if (fabs(qo->b->c[i]) >= 16777216.0) return false;
  return true;
}

/* XQ as u8 NHWC (plus XO), channels padded to C4 with the zero point ZX: once per value (and
 * zero point), written before the filter's calls so that it directly follows the call that
 * quantized the value, into whose kernel it fuses when nothing else reads that (the
 * DequantizeLinear's call, unread, is dropped: prune_dead). */
static const char *q_nhwc_u8(Imp *I, Val *xq, int64_t c4, double zx, int xo) {
  if (!xq->as_u8 || xq->as_u8_zx != zx) {
    xq->as_u8 = imp_name(I, xprintf("%s_u8", xq->name));
    xq->as_u8_zx = zx;
    imp_call(I, xq->as_u8, "quant_u8_nhwc",
             xprintf("%s, C4 = %lld, ZX = %lld%s", imp_tensor_nhwc(I, xq), (long long)c4, (long long)zx, xo ? ", XO = 128" : ""));
  }
  return xq->as_u8;
}

/* Output 0 of a 2-D convolution of X by a [C, _, KH, KW] filter (C output channels) with
 * strides S, dilations D and pads P, channels last, made by OP on ARGS (the attributes
 * added). */
static Val *q_conv_call(Imp *I, const Val *x, int64_t c, int64_t kh, int64_t kw, const int64_t *s, const int64_t *d,
                        const int64_t *p, const char *op, char *args) {
  int64_t os[4] = {x->shape[0], c, (x->shape[2] + p[0] + p[2] - d[0] * (kh - 1) - 1) / s[0] + 1,
                   (x->shape[3] + p[1] + p[3] - d[1] * (kw - 1) - 1) / s[1] + 1};
  Val *o = imp_net_out(I, 0, 4, os);
  o->nhwc = true;
  imp_call(I, o->tex, op, imp_conv_attrs(args, s, d, p));
  return o;
}

/* The int8 values C of filter W ([CO, CI, KH, KW]) packed [KH, KW, C4 / 4, CO, 4] (input
 * channel 4 c + j of output channel co at [.., c, co, j]; zeros past CI): f32 constants for
 * q_filter. */
static Val *q_conv_packed(const Val *w, const double *c) {
  int64_t co = w->shape[0], ci = w->shape[1], kh = w->shape[2], kw = w->shape[3], c4 = (ci + 3) / 4 * 4;
  Val *k = xalloc(sizeof *k);
  *k = (Val){.name = xprintf("%s_q", w->name), .dtype = OT_FLOAT, .ndim = 5, .shape = {kh, kw, c4 / 4, co, 4},
             .c = imp_vals(kh * kw * c4 * co)};
  for (int64_t o = 0; o < co; o++)
    for (int64_t y = 0; y < kh; y++)
      for (int64_t x = 0; x < kw; x++)
        for (int64_t i = 0; i < c4; i++)
          k->c[(((y * kw + x) * (c4 / 4) + i / 4) * co + o) * 4 + i % 4] = i < ci ? c[((o * ci + i) * kh + y) * kw + x] : 0;
  return k;
}

int imp_qconv2d(Imp *I, Val *x, Val *w, const int64_t *s, const int64_t *d, const int64_t *p, const QOut *qo, Val **out) {
  double sx, zx;
  int xo;
  Val *xq = x->ndim == 4 ? dq_input(I, x, &sx, &zx, &xo) : NULL;
  const Val *wq = xq ? dq_filter(w, 0, w->shape[0]) : NULL;
  if (!wq || !bias_fits(qo)) return 0;
  int64_t co = w->shape[0], kh = w->shape[2], kw = w->shape[3], c4 = (w->shape[1] + 3) / 4 * 4;
  Val *sc = q_scales(w, sx, co, qo);
  const char *xu = q_nhwc_u8(I, xq, c4, zx, xo), *zs, *kq = q_filter(I, q_conv_packed(w, wq->c), (int64_t)zx, &zs);
  if (qo && qo->b) { /* a QLinearConv's bias: the zero-point term less it (folded) */
    const char *zb = imp_name(I, xprintf("%s_zb", w->name));
    const char *kn = imp_kernel(I, "qbias", xprintf("(Z: i32[%lld], B: f32[%lld]) -> Y: i32[%lld] {\n  Y[i] = Z[i] - i32(B[i])\n}",
                                                    (long long)co, (long long)co, (long long)co));
    imp_call(I, zb, kn, xprintf("%s, %s", zs, imp_tensor(I, (Val *)qo->b)));
    zs = zb;
  }
  *out = q_conv_call(I, x, co, kh, kw, s, d, p, "qconv2d_nhwc_pad",
                     xprintf("%s, %s, %s, %s, ZX = %lld", xu, kq, imp_tensor(I, sc), zs, (long long)zx));
  return 1;
}

int imp_qdepthwise(Imp *I, Val *x, Val *w, const int64_t *s, const int64_t *d, const int64_t *p, const QOut *qo, Val **out) {
  double sx, zx;
  int xo;
  int64_t c = w->shape[0], kh = w->shape[2], kw = w->shape[3];
  Val *xq = x->ndim == 4 ? dq_input(I, x, &sx, &zx, &xo) : NULL;
  const Val *wq = xq ? dq_filter(w, 0, c) : NULL;
  if (!wq || w->shape[1] != 1 || x->shape[1] != c || kh * kw > 514 || !bias_fits(qo)) return 0;
  /* the int8 filter [KH, KW, C] as f32 values, Z: ZX times each channel's sum (below 2^24)
   * less a QLinearConv's bias: exact in f32 only below 2^24 too, else the plain path (the
   * sum A less Z is then one rounding of the exact integer, as onnxruntime's f32(acc + B)) */
  Val *k = xalloc(sizeof *k), *z = xalloc(sizeof *z);
  *k = (Val){.name = xprintf("%s_qdw", w->name), .dtype = OT_FLOAT, .ndim = 3, .shape = {kh, kw, c}, .c = imp_vals(kh * kw * c)};
  *z = (Val){.name = xprintf("%s_qzsum", w->name), .dtype = OT_FLOAT, .ndim = 1, .shape = {c}, .c = imp_vals(c)};
  for (int64_t i = 0; i < c; i++) {
    z->c[i] = 0;
    for (int64_t y = 0; y < kh * kw; y++) z->c[i] += zx * (k->c[y * c + i] = wq->c[i * kh * kw + y]);
    if (qo && qo->b) z->c[i] -= qo->b->c[i]; /* a QLinearConv's bias */
    if (fabs(z->c[i]) >= 16777216.0) return 0;
  }
  const char *xu = q_nhwc_u8(I, xq, (c + 3) / 4 * 4, zx, xo); /* imp_qconv2d's copy: channels padded to 4 (read below C) */
  Val *sc = q_scales(w, sx, c, qo);
  *out = q_conv_call(I, x, c, kh, kw, s, d, p, "qdepthwise_conv2d_nhwc_pad",
                     xprintf("%s, %s, %s, %s, ZX = %lld", xu, imp_tensor(I, k), imp_tensor(I, sc), imp_tensor(I, z), (long long)zx));
  return 1;
}

/* The int8 matrix BQ ([K, N], or [N, K] when TB) packed as a 1 x 1 filter [1, 1, K4 / 4, N, 4]
 * (zeros past K) through q_filter. */
static const char *q_pack(Imp *I, const Val *bq, bool tb, int64_t zmul, const char **zsum) {
  int64_t k = bq->shape[tb], n = bq->shape[!tb], k4 = (k + 3) / 4 * 4;
  Val *w = xalloc(sizeof *w);
  *w = (Val){.name = xprintf("%s_q", bq->name), .dtype = OT_FLOAT, .ndim = 5, .shape = {1, 1, k4 / 4, n, 4}, .c = imp_vals(k4 * n)};
  for (int64_t i = 0; i < k4; i++)
    for (int64_t j = 0; j < n; j++) w->c[((i / 4) * n + j) * 4 + i % 4] = i < k ? bq->c[tb ? j * k + i : i * n + j] : 0;
  return q_filter(I, w, zmul, zsum);
}

/* The run-time uint8 (int8) value AQ (rank >= 2; exact integers held as f32), plus 128 when
 * int8, as u8 with its last axis K padded to K4 with zeros (what a packed matrix's zero rows
 * meet): once per value. */
static const char *q_rows_u8(Imp *I, Val *aq, int64_t k4) {
  if (aq->as_u8_rows) return aq->as_u8_rows;
  int r = aq->ndim;
  char *lead = imp_idx("i", r - 1), *dims = imp_dims_text(aq->shape, r - 1);
  const char *ku = imp_kernel(I, "quant_u8", xprintf("(X: %s) -> Y: u8[%s, %lld] {\n  Y[%s, c] = c < %lld ? u8(X[%s, c]%s) : 0\n}", imp_ty(aq),
                                                    dims, (long long)k4, lead, (long long)aq->shape[r - 1], lead,
                                                    aq->dtype == OT_INT8 ? " + 128.0" : ""));
  aq->as_u8_rows = imp_name(I, xprintf("%s_u8", aq->name));
  imp_call(I, aq->as_u8_rows, ku, imp_tensor(I, aq));
  return aq->as_u8_rows;
}

/* The integer product of the u8 rows XU (A's shape, last axis K4) by the packed KQ into O
 * (A's shape with N last): a generated qdense kernel whose result is EPI, in which each @
 * is the output's index (the i32 sum is A[@]; EPI's parameters: the kernel's PARAMS after X
 * and K, bound to ARGS). */
static void q_dense_call(Imp *I, const Val *a, int64_t k4, int64_t n, const char *xu, const char *kq, const char *params,
                         const char *args, const char *epi, Val *o) {
  int r = a->ndim;
  char *lead = imp_idx("i", r - 1), *dims = imp_dims_text(a->shape, r - 1), *sum = xstrdup("");
  for (int e = 0; e < 4; e++) sum = xprintf("%s%si32(X[%s, 4 * c + %d]) * i32(K[0, 0, c, j, %d])", sum, e ? " + " : "", lead, e, e);
  char *y = xstrdup("");
  for (const char *p = epi; *p; p++) y = *p == '@' ? xprintf("%s%s, j", y, lead) : xprintf("%s%c", y, *p);
  const char *kd = imp_kernel(I, "qdense", xprintf("(X: u8[%s, %lld], K: i8[1, 1, %lld, %lld, 4]%s) -> Y: %s {\n"
                                                  "  tensor A: i32[%s, %lld]\n  A[%s, j] += %s\n  Y[%s, j] = %s\n}",
                                                  dims, (long long)k4, (long long)(k4 / 4), (long long)n, params, imp_ty(o), dims,
                                                  (long long)n, lead, sum, lead, y));
  imp_call(I, o->tex, kd, xprintf("%s, %s%s", xu, kq, args));
}

int imp_qdense(Imp *I, Val *a, Val *b, bool tb, Val *o) {
  double sa, za;
  int xo;
  if (a->ndim < 2 || b->ndim != 2 || a->nhwc) return 0;
  int64_t k = b->shape[tb], n = b->shape[!tb], k4 = (k + 3) / 4 * 4;
  Val *aq = dq_input(I, a, &sa, &za, &xo); /* q_rows_u8 adds XO itself */
  const Val *bq = aq ? dq_filter(b, !tb, n) : NULL;
  if (!bq || a->shape[a->ndim - 1] != k) return 0;
  Val *sc = q_scales(b, sa, n, NULL);
  const char *xu = q_rows_u8(I, aq, k4), *zs, *kq = q_pack(I, bq, tb, (int64_t)za, &zs);
  q_dense_call(I, a, k4, n, xu, kq, xprintf(", S: f32[%lld], Z: i32[%lld]", (long long)n, (long long)n),
               xprintf(", %s, %s", imp_tensor(I, sc), zs), "f32(A[@] - Z[j]) * S[j]", o);
  return 1;
}

/* DynamicQuantizeLinear (uint8): over the whole of x, lo = min(x, 0) and hi = max(x, 0);
 * y_scale = (hi - lo) / 255 (1 when both are 0, as onnxruntime), y_zero_point =
 * round(saturate(0 - lo / y_scale)), y = QuantizeLinear(x, y_scale, y_zero_point). */
static bool op_dynamic_quantize(Imp *I) {
  if (!imp_attrs_known(I, "")) return false;
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 (x) is missing");
  if (x->dtype != OT_FLOAT) return imp_unsupported(I, "input 1 (x) of element type %s (float)", imp_type_name(x->dtype));
  int64_t one = 1;
  if (x->c) {
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < val_numel(x); i++) lo = fminf(lo, (float)x->c[i]), hi = fmaxf(hi, (float)x->c[i]);
    float sc = hi == lo ? 1.0f : (hi - lo) / 255.0f, zp = nearbyintf(fminf(fmaxf(0.0f - lo / sc, 0), 255));
    double *c = imp_vals(val_numel(x));
    for (int64_t i = 0; i < val_numel(x); i++) c[i] = quantize1(x->c[i], sc, zp, OT_UINT8);
    double *cs = imp_vals(1), *cz = imp_vals(1);
    cs[0] = sc, cz[0] = zp;
    if (I->node->n_output > 1 && *I->node->output[1]) imp_const_out(I, 1, OT_FLOAT, 0, &one, cs);
    if (I->node->n_output > 2 && *I->node->output[2]) imp_const_out(I, 2, OT_UINT8, 0, &one, cz);
    imp_const_out(I, 0, OT_UINT8, x->ndim, x->shape, c);
    return true;
  }
  if (!(x = imp_float_in(I, 0))) return false;
  /* P = [scale, zero point]: a reduction over every value, in X's layout (channels last
   * as it comes from a convolution: no transposition for it) */
  const char *pn = imp_name(I, xprintf("%s_qparams", x->name));
  char *rx = imp_idx("r", x->ndim);
  Val xl = *x;
  if (x->nhwc) xl.shape[1] = x->shape[2], xl.shape[2] = x->shape[3], xl.shape[3] = x->shape[1];
  const char *kp = imp_kernel(I, "dynamic_qparams", xprintf(
      "(X: %s) -> Y: f32[2] {\n  tensor HI: f32[1]\n  tensor LO: f32[1]\n  tensor S: f32[1]\n"
      "  HI[z] max= X[%s]\n  LO[z] min= X[%s]\n"
      "  S[z] = max(HI[z], 0.0) == min(LO[z], 0.0) ? 1.0 : (max(HI[z], 0.0) - min(LO[z], 0.0)) / 255.0\n"
      "  Y[q] = q == 0 ? S[0] : round(min(max(0.0 - min(LO[0], 0.0) / S[0], 0.0), 255.0))\n}",
      imp_ty(&xl), rx, rx));
  imp_call(I, pn, kp, x->nhwc ? x->tex : imp_tensor(I, x));
  Val *sz[2];
  for (int k = 0; k < 2; k++) {
    bool named = I->node->n_output > (size_t)k + 1 && *I->node->output[k + 1];
    sz[k] = xalloc(sizeof(Val));
    *sz[k] = (Val){.name = xprintf("%s_%s", x->name, k ? "zp" : "scale"), .dtype = k ? OT_UINT8 : OT_FLOAT, .ndim = 0,
                   .fint = k == 1};
    sz[k]->tex = named ? imp_name(I, I->node->output[k + 1]) : imp_name(I, sz[k]->name);
    const char *kn = imp_kernel(I, k ? "qparam_zp" : "qparam_scale", xprintf("(P: f32[2]) -> Y: f32[1] {\n  Y[i] = P[%d]\n}", k));
    imp_call(I, sz[k]->tex, kn, pn);
    if (named) {
      Val *o = imp_out(I, k + 1, sz[k]->dtype, 0, &one);
      o->tex = sz[k]->tex;
      o->fint = k == 1;
    }
  }
  Val *in[3] = {x, sz[0], sz[1]};
  return imp_as_int(I, imp_ew(I, "quantize", in, 3, q_saturate("$0 / $1", "$2", OT_UINT8)), OT_UINT8);
}

/* ---- integer products: MatMulInteger, QLinearMatMul --------------------------------- */

/* Y = sum over k of (A - a_zero_point)(B - b_zero_point), numpy's matmul shapes, into a
 * new i32 tensor (output 0 of the node); a_zero_point one value, b_zero_point one value or
 * one per column. NULL: reported. */
static Val *matmul_integer(Imp *I, Val *a, Val *za, Val *b, Val *zb) {
  if (a->c && b->c) return imp_unsupported(I, "an integer product of constants"), NULL;
  MatmulPlan p;
  if (!imp_matmul_plan(I, a, b, &p)) return NULL;
  int64_t n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
  if (za && val_numel(za) != 1) return imp_unsupported(I, "a zero point of A with %lld values (one only: per tensor)", (long long)val_numel(za)), NULL;
  if (zb && val_numel(zb) != 1 && !(zb->ndim == 1 && zb->shape[0] == n && b->ndim > 1))
    return imp_unsupported(I, "a zero point of B of shape [%s] (one value, or one per column: [%lld])", imp_dims_text(zb->shape, zb->ndim),
                           (long long)n), NULL;
  if (!imp_shape_ok(I, p.os, p.no)) return NULL;
  if (I->int8 && !a->c && b->c && a->dtype == OT_UINT8 && b->dtype == OT_INT8 && a->ndim >= 2 && b->ndim == 2 &&
      zero_or_none(zb) && !a->nhwc) { /* uint8 x int8 constant: integer kernels as imp_qdense's */
    Val *y = imp_net_out(I, 0, p.no, p.os);
    y->dtype = OT_INT32;
    int64_t k4 = (p.k + 3) / 4 * 4;
    bool rt = za && !za->c;
    const char *xu = q_rows_u8(I, a, k4), *zs, *kq = q_pack(I, b, false, za && za->c ? (int64_t)za->c[0] : rt ? 1 : 0, &zs);
    q_dense_call(I, a, k4, n, xu, kq, xprintf(", Z: i32[%lld]%s", (long long)n, rt ? ", ZA: f32[1]" : ""),
                 rt ? xprintf(", %s, %s", zs, imp_tensor(I, za)) : xprintf(", %s", zs), rt ? "A[@] - i32(ZA[0]) * Z[j]" : "A[@] - Z[j]", y);
    return y;
  }
  ImpCall o = {0};
  imp_call_arg(I, &o, "A", a);
  imp_call_arg(I, &o, "B", b);
  char *ea = za ? xprintf("(i32(A[%s]) - %s)", p.ia, operand(I, &o, za, "0", true)) : xprintf("i32(A[%s])", p.ia);
  char *eb = zb ? xprintf("(i32(B[%s]) - %s)", p.ib, operand(I, &o, zb, "j", true)) : xprintf("i32(B[%s])", p.ib);
  Val *y = imp_net_out(I, 0, p.no, p.os);
  y->dtype = OT_INT32;
  imp_call_kernel(I, &o, "matmul_integer", y, xprintf("Y[%s] += %s * %s where k in 0..%lld", p.lhs, ea, eb, (long long)p.k));
  return y;
}

static bool op_matmul_integer(Imp *I) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  bool bad = false;
  Val *a = q_in(I, 0, "A", false), *b = a ? q_in(I, 1, "B", false) : NULL;
  Val *za = b ? zp_in(I, 2, "a_zero_point", &bad, false) : NULL, *zb = b && !bad ? zp_in(I, 3, "b_zero_point", &bad, false) : NULL;
  return b && !bad && matmul_integer(I, a, za, b, zb);
}

/* The requantization of i32 accumulator ACC (+ bias BIAS, i32, read at index BIDX) with
 * multiplier (SA * SB) / SY (SB read at SBIDX) into output 0: round(f32(acc) * m) + zy,
 * saturated to the type of ZY (uint8 when absent), as onnxruntime's requantizing output
 * stage. */
static bool requantize(Imp *I, Val *acc, Val *bias, const char *bidx, Val *sa, Val *sb, const char *sbidx, Val *sy, Val *zy) {
  int dt = zy ? zy->dtype : OT_UINT8;
  ImpCall o = {0};
  /* sums held channels last (qlinear_conv_f32's) stay so: the channel index is i3 */
  bool nhwc = acc->nhwc && acc->ndim == 4;
  int64_t ps[4] = {acc->shape[0], acc->shape[2], acc->shape[3], acc->shape[1]};
  if (nhwc) {
    o.params = xprintf("X: f32[%s]", imp_dims_text(ps, 4));
    o.args = xstrdup(imp_tensor_nhwc(I, acc));
    o.n = 1;
    if (!strcmp(bidx, "i1")) bidx = "i3";
    if (!strcmp(sbidx, "i1")) sbidx = "i3";
  } else {
    imp_call_arg(I, &o, "X", acc);
  }
  char *ix = imp_idx("i", acc->ndim);
  char *sum = xprintf(acc->fint ? "i32(X[%s])" : "X[%s]", ix); /* i32 sums held as f32 (qlinear_conv_f32): exact */
  if (bias) {
    /* int32 bias values beyond 2^24 do not fit f32 weights: as high and low parts */
    bool big = false;
    for (int64_t i = 0; bias->c && i < val_numel(bias); i++) big |= fabs(bias->c[i]) >= 16777216.0;
    if (!big) sum = xprintf("%s + %s", sum, operand(I, &o, bias, bidx, true));
    else {
      Val *hl[2];
      for (int h = 0; h < 2; h++) {
        hl[h] = xalloc(sizeof(Val));
        *hl[h] = *bias;
        hl[h]->name = xprintf("%s_%s", bias->name, h ? "lo" : "hi");
        hl[h]->tex = NULL, hl[h]->param = false;
        hl[h]->c = imp_vals(val_numel(bias));
        for (int64_t i = 0; i < val_numel(bias); i++) {
          double hi = floor(bias->c[i] / 4096.0);
          hl[h]->c[i] = h ? bias->c[i] - hi * 4096.0 : hi;
        }
      }
      sum = xprintf("%s + %s * 4096 + %s", sum, operand(I, &o, hl[0], bidx, true), operand(I, &o, hl[1], bidx, true));
    }
  }
  char *m = xprintf("((%s * %s) / %s)", operand(I, &o, sa, "0", false), operand(I, &o, sb, sbidx, false), operand(I, &o, sy, "0", false));
  char *z = zy ? operand(I, &o, zy, "0", false) : NULL;
  Val *y = imp_net_out(I, 0, acc->ndim, nhwc ? ps : acc->shape);
  y->dtype = dt;
  y->fint = true;
  imp_call_kernel(I, &o, "requantize", y, xprintf("Y[%s] = %s", ix, q_saturate(xprintf("f32(%s) * %s", sum, m), z, dt)));
  if (nhwc) memcpy(y->shape, acc->shape, sizeof y->shape), y->nhwc = true;
  return true;
}

/* The scales and zero points of a QLinear node: inputs SA (and ZA = SA + 1) for A, SB / ZB
 * for B, SY / ZY for the output. false: reported. */
static bool qlinear_params(Imp *I, int ia, int ib, int iy, Val **s, Val **z) {
  int at[3] = {ia, ib, iy};
  static const char *const sn[3] = {"a_scale", "b_scale", "y_scale"}, *const zn[3] = {"a_zero_point", "b_zero_point", "y_zero_point"};
  bool bad = false;
  for (int k = 0; k < 3; k++) {
    if (!(s[k] = scale_in(I, at[k] + 1, sn[k]))) return false;
    z[k] = zp_in(I, at[k] + 2, zn[k], &bad, false);
    if (bad) return false;
    if (z[k] && val_numel(z[k]) != val_numel(s[k]))
      return imp_error(I, "%s has %lld values, %s %lld", zn[k], (long long)val_numel(z[k]), sn[k], (long long)val_numel(s[k]));
    if (k != 1 && val_numel(s[k]) != 1) return imp_unsupported(I, "%s of %lld values (one only: per tensor)", sn[k], (long long)val_numel(s[k]));
  }
  return true;
}

/* QLinearMatMul: MatMulInteger's accumulator requantized (b's scale per tensor or per
 * column). */
static bool op_qlinear_matmul(Imp *I) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *a = q_in(I, 0, "a", false), *b = a ? q_in(I, 3, "b", false) : NULL, *s[3], *z[3];
  if (!b || !qlinear_params(I, 0, 3, 5, s, z)) return false;
  int64_t n = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  if (val_numel(s[1]) != 1 && !(s[1]->ndim == 1 && s[1]->shape[0] == n && b->ndim > 1))
    return imp_unsupported(I, "b_scale of %lld values (one, or one per column: %lld)", (long long)val_numel(s[1]), (long long)n);
  Val *acc = matmul_integer(I, a, z[0], b, z[1]);
  return acc && requantize(I, acc, NULL, NULL, s[0], s[1], xprintf("i%d", acc->ndim - 1), s[2], z[2]);
}

/* ---- integer convolutions: ConvInteger, QLinearConv --------------------------------- */

/* A 2-D convolution (NCHW) of X by W (OIHW) over integers: sum of (x - xz)(w - wz), the
 * padding contributing 0, into a new i32 tensor (output 0); WZ one value or one per output
 * channel. NULL: reported. */
/* The strides S, dilations D and pads P [t, l, b, r] of the current node, an integer 2-D
 * convolution of X by W. false: reported. */
static bool int_conv_attrs(Imp *I, const Val *x, const Val *w, int64_t *s, int64_t *d, int64_t *p) {
  if (x->ndim != 4 || w->ndim != 4) return imp_unsupported(I, "a %d-D integer convolution (2-D only)", x->ndim - 2);
  if (x->c) return imp_unsupported(I, "a constant input");
  const char *ap = imp_attr_s(I, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return imp_unsupported(I, "auto_pad %s in an integer convolution (pads only)", ap);
  int64_t s3[3] = {1, 1}, d3[3] = {1, 1}, p5[5] = {0}, ks[3] = {0, 0};
  int ns = imp_attr_ints(I, "strides", s3, 3), nd = imp_attr_ints(I, "dilations", d3, 3), np = imp_attr_ints(I, "pads", p5, 5);
  if ((ns >= 0 && ns != 2) || (nd >= 0 && nd != 2) || (np >= 0 && np != 4))
    return imp_unsupported(I, "strides, dilations or pads not of a 2-D convolution");
  if (!strcmp(ap, "VALID")) memset(p5, 0, sizeof p5);
  int nks = imp_attr_ints(I, "kernel_shape", ks, 3);
  if (nks >= 0 && (nks != 2 || ks[0] != w->shape[2] || ks[1] != w->shape[3])) return imp_error(I, "kernel_shape is not the filter's spatial shape");
  if (s3[0] < 1 || s3[1] < 1 || d3[0] < 1 || d3[1] < 1 || p5[0] < 0 || p5[1] < 0 || p5[2] < 0 || p5[3] < 0)
    return imp_error(I, "strides and dilations must be positive, pads not negative");
  memcpy(s, s3, sizeof(int64_t) * 2);
  memcpy(d, d3, sizeof(int64_t) * 2);
  memcpy(p, p5, sizeof(int64_t) * 4);
  return true;
}

static Val *conv_integer(Imp *I, Val *x, Val *xz, Val *w, Val *wz) {
  int64_t s[2], d[2], p[4], g = imp_attr_i(I, "group", 1);
  if (!int_conv_attrs(I, x, w, s, d, p)) return NULL;
  int64_t c = x->shape[1], m = w->shape[0], cg = w->shape[1];
  if (g < 1 || c % g || m % g || cg * g != c)
    return imp_error(I, "group %lld does not fit %lld input channels and a filter of %lld", (long long)g, (long long)c, (long long)cg), NULL;
  if (xz && val_numel(xz) != 1) return imp_unsupported(I, "a zero point of x with %lld values (one only)", (long long)val_numel(xz)), NULL;
  if (wz && val_numel(wz) != 1 && !(wz->ndim == 1 && wz->shape[0] == m))
    return imp_error(I, "the filter's zero point has %lld values (one, or one per output channel: %lld)", (long long)val_numel(wz), (long long)m), NULL;
  int64_t os[4] = {x->shape[0], m};
  char *guard = xstrdup(""), *at[2];
  const char *ov[2] = {"y", "x"}, *rv[2] = {"ry", "rx"};
  for (int i = 0; i < 2; i++) {
    int64_t in = x->shape[2 + i], span = in + p[i] + p[i + 2] - ((w->shape[2 + i] - 1) * d[i] + 1);
    if (span < 0) return imp_error(I, "the output would be empty"), NULL;
    os[2 + i] = span / s[i] + 1;
    at[i] = xprintf("%s * %lld + %s * %lld - %lld", ov[i], (long long)s[i], rv[i], (long long)d[i], (long long)p[i]);
    if (p[i] || p[i + 2])
      guard = xprintf("%s%s%s >= 0 && %s < %lld", guard, *guard ? " && " : "", at[i], at[i], (long long)in);
  }
  if (!imp_shape_ok(I, os, 4)) return NULL;
  ImpCall o = {0};
  imp_call_arg(I, &o, "X", x);
  imp_call_arg(I, &o, "W", w);
  const char *ci = g == 1 ? "c" : xprintf("m / %lld * %lld + c", (long long)(m / g), (long long)cg);
  char *ex = xprintf("i32(X[n, %s, %s, %s])", ci, at[0], at[1]);
  if (xz) ex = xprintf("(%s - %s)", ex, operand(I, &o, xz, "0", true));
  if (*guard) ex = xprintf("(%s ? %s : 0)", guard, ex);
  char *ew = xprintf("i32(W[m, c, ry, rx])");
  if (wz) ew = xprintf("(%s - %s)", ew, operand(I, &o, wz, "m", true));
  Val *y = imp_net_out(I, 0, 4, os);
  y->dtype = OT_INT32;
  imp_call_kernel(I, &o, "conv_integer", y, xprintf("Y[n, m, y, x] += %s * %s where c in 0..%lld, ry in 0..%lld, rx in 0..%lld", ex, ew,
                                                    (long long)cg, (long long)w->shape[2], (long long)w->shape[3]));
  return y;
}

static const char *const conv_attrs = "auto_pad,dilations,group,kernel_shape,pads,strides";

/* Is NAME read, and only by Casts to float (not a graph output)? */
static bool read_as_float(const Imp *I, const char *name) {
  bool read = false;
  for (size_t i = 0; I->graph && i < I->graph->n_output; i++)
    if (!strcmp(I->graph->output[i]->name, name)) return false;
  for (size_t i = 0; I->graph && i < I->graph->n_node; i++) {
    const Onnx__NodeProto *nd = I->graph->node[i];
    for (size_t j = 0; j < nd->n_input; j++) {
      if (strcmp(nd->input[j], name)) continue;
      if (!nd->op_type || strcmp(nd->op_type, "Cast")) return false;
      int64_t to = 0;
      for (size_t a = 0; a < nd->n_attribute; a++)
        if (nd->attribute[a]->name && !strcmp(nd->attribute[a]->name, "to")) to = nd->attribute[a]->i;
      if (to != OT_FLOAT) return false;
      read = true;
    }
  }
  return read;
}

/* ConvInteger read only by Casts to float (quantize_dynamic's convolutions: ConvInteger,
 * Cast, Mul by x_scale * w_scale) as Conv's f32 convolution (imp_conv2d: channels last,
 * packed filters, Winograd) of X less its zero point (one value, constant or run-time: a
 * DynamicQuantizeLinear's) by the constant filter less its zero point (one, or one per
 * output channel), into f32 values held as its int32 output (Val.fint), which the Casts read
 * as they are. The sums are the integer ones while below 2^24, above it rounded as an f32
 * convolution rounds (the Cast of the exact sum rounds there too). The plain i32 kernel
 * (conv_integer) took resnet18's 20 convolutions 980 ms; onnxruntime 130 ms. 1: done; 0:
 * not of that form (nothing written); -1: reported. */
static int conv_less_zp_f32(Imp *I, Val *x, Val *xz, Val *w, Val *wz, Val **acc);

static int conv_integer_f32(Imp *I, Val *x, Val *xz, Val *w, Val *wz) {
  if (!w->c || x->c || x->ndim != 4 || w->ndim != 4 || (wz && !wz->c) || (xz && val_numel(xz) != 1) ||
      !read_as_float(I, I->node->output[0]))
    return 0;
  Val *acc;
  return conv_less_zp_f32(I, x, xz, w, wz, &acc);
}

/* The integer convolution of X less its zero point XZ by the constant filter W less WZ
 * as Conv's f32 one (conv_integer_f32), into *ACC (i32 values held as f32): 1, or -1
 * after an error. */
static int conv_less_zp_f32(Imp *I, Val *x, Val *xz, Val *w, Val *wz, Val **acc) {
  int64_t g = imp_attr_i(I, "group", 1), s[2], d[2], p[4];
  if (!int_conv_attrs(I, x, w, s, d, p)) return -1;
  int64_t m = w->shape[0], per = val_numel(w) / m;
  if (wz && val_numel(wz) != 1 && !(wz->ndim == 1 && wz->shape[0] == m))
    return imp_error(I, "the filter's zero point has %lld values (one, or one per output channel: %lld)", (long long)val_numel(wz), (long long)m), -1;
  /* X less its zero point, channels last, as f32 */
  Val *u = xalloc(sizeof *u);
  *u = (Val){.name = xprintf("%s_less_zp", x->name), .dtype = OT_FLOAT, .ndim = 4, .nhwc = true};
  memcpy(u->shape, x->shape, sizeof u->shape);
  const char *ty = xprintf("f32[%lld, %lld, %lld, %lld]", (long long)x->shape[0], (long long)x->shape[2],
                           (long long)x->shape[3], (long long)x->shape[1]);
  ImpCall o = {.params = xprintf("X: %s", ty), .args = xstrdup(imp_tensor_nhwc(I, x)), .n = 1};
  const char *z = xz ? operand(I, &o, xz, "0", false) : "0.0";
  u->tex = imp_name(I, u->name);
  imp_call(I, u->tex, imp_kernel(I, "less_zero_point", xprintf("(%s) -> Y: %s {\n  Y[n, h, w, c] = X[n, h, w, c] - %s\n}", o.params, ty, z)),
           o.args);
  /* the filter less its zero point, as f32 constants */
  Val *k = xalloc(sizeof *k);
  *k = (Val){.name = xprintf("%s_less_zp", w->name), .dtype = OT_FLOAT, .ndim = 4, .c = imp_vals(val_numel(w))};
  memcpy(k->shape, w->shape, sizeof k->shape);
  for (int64_t i = 0; i < val_numel(w); i++) k->c[i] = w->c[i] - (wz ? wz->c[val_numel(wz) == 1 ? 0 : i / per] : 0);
  Val *out = NULL;
  if (!imp_conv2d(I, u, k, NULL, g, s, d, p, &out)) return -1;
  out->dtype = OT_INT32;
  out->fint = true;
  *acc = out;
  return 1;
}

/* A QLinearConv's sums by Conv's f32 convolution (channels last, packed filters, Winograd)
 * where the integer kernels are not used (no VNNI, TEXC_NET_INT8=0): exact when no sum can
 * reach 2^24, which a constant filter and a constant zero point of X bound (per output
 * channel the filter's |w - wz| summed, times X's largest |x - zx|); else 0 (the plain i32
 * convolution, conv_integer). A QOperator shufflenet_v2 took 81 ms on one thread by the
 * plain one. */
static int qlinear_conv_f32(Imp *I, Val *x, Val *xz, Val *w, Val *wz, Val **acc) {
  if (!w->c || x->c || x->ndim != 4 || w->ndim != 4 || (wz && !wz->c) || (xz && (val_numel(xz) != 1 || !xz->c))) return 0;
  int64_t m = w->shape[0], per = val_numel(w) / m;
  if (wz && val_numel(wz) != 1 && !(wz->ndim == 1 && wz->shape[0] == m)) return 0;
  double zx = xz ? xz->c[0] : 0, xmax = fmax(fabs(qlo(x->dtype) - zx), fabs(qhi(x->dtype) - zx));
  for (int64_t o = 0; o < m; o++) {
    double sum = 0, z = wz ? wz->c[val_numel(wz) == 1 ? 0 : o] : 0;
    for (int64_t i = 0; i < per; i++) sum += fabs(w->c[o * per + i] - z);
    if (sum * xmax >= 16777216.0) return 0;
  }
  return conv_less_zp_f32(I, x, xz, w, wz, acc);
}

/* ConvInteger of a run-time uint8 X with a run-time zero point (a DynamicQuantizeLinear's)
 * by a constant int8 filter without a zero point, one group, where the CPU has a four-byte
 * dot product (I->int8): stdlib's qconv2d_nhwc_rzp, ConvInteger's exact i32 result,
 * channels last: X's u8 copy (quant_u8_nhwc; channels padded to a multiple of 4 with zeros,
 * which meet zero filter values), the filter packed as for the QDQ convolutions with each
 * output channel's sum, which the kernel multiplies by the zero point. 1: done; 0: not of
 * that form (nothing written); -1: reported. */
static int conv_integer_q(Imp *I, Val *x, Val *xz, Val *w, Val *wz) {
  if (!I->int8 || x->c || x->dtype != OT_UINT8 || x->ndim != 4 || !w->c || w->dtype != OT_INT8 || w->ndim != 4 ||
      !zero_or_none(wz) || !xz || xz->c || val_numel(xz) != 1 || imp_attr_i(I, "group", 1) != 1)
    return 0;
  int64_t s[2], d[2], p[4];
  if (!int_conv_attrs(I, x, w, s, d, p)) return -1;
  int64_t co = w->shape[0], ci = w->shape[1], kh = w->shape[2], kw = w->shape[3], c4 = (ci + 3) / 4 * 4;
  if (x->shape[1] != ci) return imp_error(I, "the filter has %lld input channels, x %lld", (long long)ci, (long long)x->shape[1]), -1;
  const char *zs, *kq = q_filter(I, q_conv_packed(w, w->c), 1, &zs), *xu = q_nhwc_u8(I, x, c4, 0, 0);
  Val *o = q_conv_call(I, x, co, kh, kw, s, d, p, "qconv2d_nhwc_rzp", xprintf("%s, %s, %s, %s", xu, imp_tensor(I, xz), kq, zs));
  o->dtype = OT_INT32;
  return 1;
}

static bool op_conv_integer(Imp *I) {
  if (!imp_attrs_known(I, conv_attrs) || !imp_one_output(I)) return false;
  bool bad = false;
  Val *x = q_in(I, 0, "x", false), *w = x ? q_in(I, 1, "w", false) : NULL;
  Val *xz = w ? zp_in(I, 2, "x_zero_point", &bad, false) : NULL, *wz = w && !bad ? zp_in(I, 3, "w_zero_point", &bad, false) : NULL;
  if (!w || bad) return false;
  int f = conv_integer_q(I, x, xz, w, wz);
  if (!f) f = conv_integer_f32(I, x, xz, w, wz);
  return f ? f > 0 : conv_integer(I, x, xz, w, wz) != NULL;
}

/* QLinearConv of a run-time X by a constant int8 W (no zero point; one group, or depthwise)
 * with a constant bias as the QDQ convolutions' integer kernels (imp_qconv2d,
 * imp_qdepthwise; I->int8): X and W seen as the DequantizeLinear outputs they stand for,
 * the kernel's zero-point term less the bias and its factor x_scale * w_scale / y_scale,
 * so that its f32 result is onnxruntime's f32(acc + B) * multiplier, then rounded, offset
 * by y's zero point and saturated. 1: done; 0: not of that form (nothing written); -1:
 * reported. */
static int qlinear_conv_int(Imp *I, Val *x, Val *w, Val *b, Val **s, Val **z) {
  if (!I->int8 || x->c || x->ndim != 4 || !w->c || w->dtype != OT_INT8 || (b && !b->c) || !s[2]->c || (z[2] && !z[2]->c))
    return 0;
  int64_t g = imp_attr_i(I, "group", 1), st[2], d[2], p[4];
  if ((g != 1 && (g != x->shape[1] || g != w->shape[0])) || !int_conv_attrs(I, x, w, st, d, p)) return I->failed ? -1 : 0;
  Val xd = {.name = x->name, .dtype = OT_FLOAT, .ndim = 4, .nhwc = x->nhwc, .dq_x = x, .dq_s = s[0], .dq_z = z[0]};
  Val wd = {.name = w->name, .dtype = OT_FLOAT, .ndim = 4, .c = w->c, .dq_x = w, .dq_s = s[1], .dq_z = z[1], .dq_axis = 0};
  memcpy(xd.shape, x->shape, sizeof xd.shape);
  memcpy(wd.shape, w->shape, sizeof wd.shape);
  QOut qo = {.b = b, .ys = s[2]};
  Val *o = NULL;
  int r = g == 1 ? imp_qconv2d(I, &xd, &wd, st, d, p, &qo, &o) : imp_qdepthwise(I, &xd, &wd, st, d, p, &qo, &o);
  if (r <= 0) return r;
  int dt = z[2] ? z[2]->dtype : OT_UINT8;
  return imp_as_int(I, imp_ew(I, "requantize", &o, 1, q_saturate("$0", z[2] ? imp_flit(z[2]->c[0]) : NULL, dt)), dt) ? 1 : -1;
}

/* QLinearConv: ConvInteger's accumulator plus the int32 bias B, requantized (w's scale per
 * tensor or per output channel); the integer kernels where they apply (qlinear_conv_int). */
static bool op_qlinear_conv(Imp *I) {
  if (!imp_attrs_known(I, conv_attrs) || !imp_one_output(I)) return false;
  Val *x = q_in(I, 0, "x", false), *w = x ? q_in(I, 3, "w", false) : NULL, *s[3], *z[3], *b = imp_in(I, 8);
  if (!w || !qlinear_params(I, 0, 3, 5, s, z)) return false;
  if (b && (b->dtype != OT_INT32 || b->ndim != 1 || b->shape[0] != w->shape[0]))
    return imp_error(I, "the bias B is not int32 [%lld]", (long long)w->shape[0]);
  if (val_numel(s[1]) != 1 && !(s[1]->ndim == 1 && s[1]->shape[0] == w->shape[0]))
    return imp_error(I, "w_scale has %lld values (one, or one per output channel: %lld)", (long long)val_numel(s[1]), (long long)w->shape[0]);
  int fast = w->ndim == 4 ? qlinear_conv_int(I, x, w, b, s, z) : 0;
  if (fast) return fast > 0;
  Val *acc = NULL;
  int f32 = qlinear_conv_f32(I, x, z[0], w, z[1], &acc);
  if (f32 < 0) return false;
  if (!f32) acc = conv_integer(I, x, z[0], w, z[1]);
  return acc && requantize(I, acc, b, "i1", s[0], s[1], "i1", s[2], z[2]);
}

/* ---- onnxruntime's QOperator contrib operators (domain com.microsoft) ---------------- */

/* A constant scale or zero point K, one value (a zero point may be absent: 0): *OUT; false:
 * reported. */
static bool one_param(Imp *I, int k, const char *what, bool zero_point, double *out) {
  *out = 0;
  if (zero_point && !imp_in(I, k)) return true;
  bool bad = false;
  Val *v = zero_point ? zp_in(I, k, what, &bad, false) : scale_in(I, k, what);
  if (!v || bad) return false;
  if (!v->c || val_numel(v) != 1) return imp_unsupported(I, "%s computed at run time or of %lld values (one constant)", what, (long long)val_numel(v));
  *out = v->c[0];
  return true;
}

/* The output's type: that of input K's zero point when given, else of input X. */
static int q_out_type(Imp *I, int k, const Val *x) {
  Val *z = imp_in(I, k);
  return z ? z->dtype : x->dtype;
}

/* QLinearAdd and QLinearMul: C = quantize(dequantize(A) op dequantize(B)) with numpy
 * broadcasting, in f32 as the operators' definition writes it (Add: (A_scale (A - A_zp) +
 * B_scale (B - B_zp)) / C_scale; Mul: A_scale (A - A_zp) B_scale (B - B_zp) / C_scale),
 * rounded to even, offset by C's zero point and saturated: onnxruntime's scalar form (its
 * vector kernels use fixed-point multipliers, which can differ by one unit). */
static bool op_qlinear_binary(Imp *I, bool mul) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *x[2] = {q_in(I, 0, "A", false), NULL};
  x[1] = x[0] ? q_in(I, 3, "B", false) : NULL;
  double as, az, bs, bz, cs, cz;
  if (!x[1] || !one_param(I, 1, "A_scale", false, &as) || !one_param(I, 2, "A_zero_point", true, &az) ||
      !one_param(I, 4, "B_scale", false, &bs) || !one_param(I, 5, "B_zero_point", true, &bz) ||
      !one_param(I, 6, "C_scale", false, &cs) || !one_param(I, 7, "C_zero_point", true, &cz))
    return false;
  if (x[0]->c && x[1]->c) return imp_unsupported(I, "an operation on constants only");
  int dt = q_out_type(I, 7, x[0]);
  const char *a = xprintf("(%s * ($0 - %s))", imp_flit(as), imp_flit(az)), *b = xprintf("(%s * ($1 - %s))", imp_flit(bs), imp_flit(bz));
  const char *v = xprintf("(%s %s %s) / %s", a, mul ? "*" : "+", b, imp_flit(cs));
  return imp_as_int(I, imp_ew(I, mul ? "qlinear_mul" : "qlinear_add", x, 2, q_saturate(v, imp_flit(cz), dt)), dt);
}

/* QLinearGlobalAveragePool (channels first): the sum over each channel's H x W values
 * (exact in f32: below 2^24) less H x W times the zero point, times x_scale / (y_scale x
 * H x W), rounded, offset and saturated (onnxruntime's form). */
static bool op_qlinear_global_pool(Imp *I) {
  if (!imp_attrs_known(I, "channels_last") || !imp_one_output(I)) return false;
  if (imp_attr_i(I, "channels_last", 0)) return imp_unsupported(I, "channels_last 1 (channels first only)");
  Val *x = q_in(I, 0, "X", false);
  double xs, xz, ys, yz;
  if (!x || !one_param(I, 1, "x_scale", false, &xs) || !one_param(I, 2, "x_zero_point", true, &xz) ||
      !one_param(I, 3, "y_scale", false, &ys) || !one_param(I, 4, "y_zero_point", true, &yz))
    return false;
  if (x->c || x->ndim != 4) return imp_unsupported(I, "a constant or not 4-D input (N, C, H, W run-time values only)");
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3], hw = h * w;
  if (hw * 255 >= 16777216) return imp_unsupported(I, "more than 65793 values per channel");
  int dt = q_out_type(I, 4, x);
  /* the sum S and the output [N, 1, 1, C] channels last, [N, C, 1, 1] first */
  const char *at = x->nhwc ? "n, a, b, c" : "n, c, a, b", *from = x->nhwc ? "n, h, w, c" : "n, c, h, w";
  int64_t xs4[4] = {n, h, w, c}, xc4[4] = {n, c, h, w}, os4[4] = {n, 1, 1, c}, oc4[4] = {n, c, 1, 1};
  const char *in = imp_dims_text(x->nhwc ? xs4 : xc4, 4), *ot = imp_dims_text(x->nhwc ? os4 : oc4, 4);
  const char *e = q_saturate(xprintf("(S[%s] - %s) * %s", at, imp_flit(xz * (double)hw), imp_flit((float)xs / ((float)ys * (float)hw))),
                             imp_flit(yz), dt);
  Val *o = imp_net_out(I, 0, 4, oc4);
  o->dtype = dt;
  o->fint = true;
  o->nhwc = x->nhwc;
  const char *kn = imp_kernel(I, "qlinear_global_pool",
                              xprintf("(X: f32[%s]) -> Y: f32[%s] {\n  tensor S: f32[%s]\n  S[%s] += X[%s] where h in 0..%lld, w in 0..%lld\n  Y[%s] = %s\n}",
                                      in, ot, ot, at, from, (long long)h, (long long)w, at, e));
  imp_call(I, o->tex, kn, x->tex);
  return true;
}

/* QGemm: Y = alpha A B' + C over the integers of A and B less their zero points (C an int32
 * bias), requantized by y_scale and y_zero_point (onnxruntime's form, as QLinearMatMul's),
 * or without y_scale made float: f32(acc + C) * alpha * A_scale * B_scale. B constant when
 * transposed; not transA. */
static bool op_qgemm(Imp *I) {
  if (!imp_attrs_known(I, "alpha,transA,transB") || !imp_one_output(I)) return false;
  if (imp_attr_i(I, "transA", 0)) return imp_unsupported(I, "transA 1");
  Val *a = q_in(I, 0, "A", false), *b = a ? q_in(I, 3, "B", false) : NULL, *c = imp_in(I, 6), *ys = imp_in(I, 7);
  bool bad = false;
  Val *sa = b ? scale_in(I, 1, "a_scale") : NULL, *sb = sa ? scale_in(I, 4, "b_scale") : NULL;
  Val *za = sb ? zp_in(I, 2, "a_zero_point", &bad, false) : NULL, *zb = sb && !bad ? zp_in(I, 5, "b_zero_point", &bad, false) : NULL;
  Val *zy = sb && !bad && ys ? zp_in(I, 8, "y_zero_point", &bad, false) : NULL;
  if (!sb || bad || a->ndim != 2 || b->ndim != 2) return sb && !bad ? imp_unsupported(I, "A or B not 2-D") : false;
  if (imp_attr_i(I, "transB", 0)) {
    if (!b->c) return imp_unsupported(I, "a transposed B computed at run time");
    Val *t = xalloc(sizeof *t);
    int64_t r = b->shape[0], k = b->shape[1];
    *t = (Val){.name = xprintf("%s_t", b->name), .dtype = b->dtype, .ndim = 2, .shape = {k, r}, .c = imp_vals(r * k)};
    for (int64_t i = 0; i < r; i++)
      for (int64_t j = 0; j < k; j++) t->c[j * r + i] = b->c[i * k + j];
    b = t;
  }
  int64_t n = b->shape[1];
  if (c && (c->dtype != OT_INT32 || val_numel(c) != n)) return imp_unsupported(I, "a bias C not int32 of %lld values", (long long)n);
  if (val_numel(sb) != 1 && val_numel(sb) != n) return imp_unsupported(I, "b_scale of %lld values (one, or one per column)", (long long)val_numel(sb));
  double alpha = imp_attr_f(I, "alpha", 1.0);
  if (ys && alpha != 1.0) return imp_unsupported(I, "alpha %g with a quantized output", alpha);
  Val *acc = matmul_integer(I, a, za, b, zb);
  if (!acc) return false;
  if (ys) return requantize(I, acc, c, "i1", sa, sb, "i1", ys, zy);
  ImpCall o = {0};
  imp_call_arg(I, &o, "X", acc);
  char *sum = c ? xprintf("X[i0, i1] + %s", operand(I, &o, c, "i1", true)) : xstrdup("X[i0, i1]");
  char *m = xprintf("%s * %s * %s", imp_flit(alpha), operand(I, &o, sa, "0", false), operand(I, &o, sb, "i1", false));
  Val *y = imp_net_out(I, 0, 2, acc->shape);
  imp_call_kernel(I, &o, "qgemm_float", y, xprintf("Y[i0, i1] = f32(%s) * %s", sum, m));
  return true;
}

/* QLinearConcat: inputs Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per
 * input: each X requantized to Y's scale and zero point (as is where they are Y's),
 * round((X - X_zp) * X_scale / Y_scale) + Y_zp saturated, then concatenated along axis. */
static bool op_qlinear_concat(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  int nin = imp_nin(I), n = (nin - 2) / 3;
  if (nin < 5 || (nin - 2) % 3) return imp_error(I, "%d inputs (Y_scale, Y_zero_point, then X, X_scale, X_zero_point per input)", nin);
  double ys, yz;
  if (!one_param(I, 0, "Y_scale", false, &ys) || !one_param(I, 1, "Y_zero_point", true, &yz)) return false;
  Val **x = xalloc(sizeof(Val *) * (size_t)(n + 1)), *x0 = q_in(I, 2, "X", false);
  if (!x0) return false;
  int dt = q_out_type(I, 1, x0);
  for (int k = 0; k < n; k++) {
    double xs, xz;
    Val *in = q_in(I, 2 + 3 * k, "X", false);
    if (!in || !one_param(I, 3 + 3 * k, "X_scale", false, &xs) || !one_param(I, 4 + 3 * k, "X_zero_point", true, &xz)) return false;
    x[k] = in;
    if ((float)xs == (float)ys && xz == yz) continue;
    const char *e = q_saturate(xprintf("($0 - %s) * %s / %s", imp_flit(xz), imp_flit(xs), imp_flit(ys)), imp_flit(yz), dt);
    if (!imp_as_int(I, imp_ew(I, "qlinear_requantize", &in, 1, e), dt)) return false;
    x[k] = VEC_AT(I->vals, I->vals.len - 1);
  }
  return imp_as_int(I, imp_concat(I, x, n, imp_attr_i(I, "axis", 0)), dt);
}

bool onnx_contrib_known(const char *op) {
  static const char *const known[] = {"QLinearAdd", "QLinearMul", "QLinearGlobalAveragePool", "QGemm", "QLinearConcat"};
  return IMP_ONE_OF(op, known);
}

/* Node I->node if OP is one of this file's operators: 1 or 0 (reported), else -1. */
int onnx_quant_op(Imp *I, const char *op) {
  if (!strcmp(op, "QuantizeLinear")) return op_quantize(I);
  if (!strcmp(op, "DequantizeLinear")) return op_dequantize(I);
  if (!strcmp(op, "DynamicQuantizeLinear")) return op_dynamic_quantize(I);
  if (!strcmp(op, "MatMulInteger")) return op_matmul_integer(I);
  if (!strcmp(op, "ConvInteger")) return op_conv_integer(I);
  if (!strcmp(op, "QLinearMatMul")) return op_qlinear_matmul(I);
  if (!strcmp(op, "QLinearConv")) return op_qlinear_conv(I);
  if (!strcmp(op, "QLinearAdd") || !strcmp(op, "QLinearMul")) return op_qlinear_binary(I, !strcmp(op, "QLinearMul"));
  if (!strcmp(op, "QLinearGlobalAveragePool")) return op_qlinear_global_pool(I);
  if (!strcmp(op, "QGemm")) return op_qgemm(I);
  if (!strcmp(op, "QLinearConcat")) return op_qlinear_concat(I);
  return -1;
}
