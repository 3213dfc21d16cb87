/* onnx_ops.c — one ONNX node at a time (docs/ONNX.md lists the operators).
 *
 * A node whose inputs are all constants folds here (Shape, Gather, Concat, arithmetic:
 * the shape arithmetic exporters emit); any other becomes network calls: a stdlib
 * operator where one fits (conv2d_nchw_pad, dense, relu, bias_add_nchw, batch_norm_nchw,
 * ...), else a kernel of the model's file written for the node's shapes (broadcasting
 * elementwise operators, transposes, reshapes, reductions, softmax). Float attributes
 * are literals in those kernels; integer ones are the operators' attributes.
 * An attribute or input form not handled is `not supported: ...`, never a guess.
 */
#include "onnx/onnx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Selu's default attributes (ONNX's operator text). */
#define SELU_ALPHA 1.67326319217681884765625
#define SELU_GAMMA 1.05070102214813232421875

/* ---- the node -------------------------------------------------------------------- */

static const Onnx__AttributeProto *attr(Imp *I, const char *name) {
  for (size_t i = 0; i < I->node->n_attribute; i++)
    if (strcmp(I->node->attribute[i]->name, name) == 0) return I->node->attribute[i];
  return NULL;
}

static int64_t attr_i(Imp *I, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = attr(I, name);
  return a && a->has_i ? a->i : def;
}

static double attr_f(Imp *I, const char *name, double def) {
  const Onnx__AttributeProto *a = attr(I, name);
  return a && a->has_f ? a->f : def;
}

static const char *attr_s(Imp *I, const char *name, const char *def) {
  const Onnx__AttributeProto *a = attr(I, name);
  return a && a->has_s ? xprintf("%.*s", (int)a->s.len, (const char *)a->s.data) : def;
}

/* The ints of attribute NAME into OUT (at most MAX); their number, -1 when absent. */
static int attr_ints(Imp *I, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = attr(I, name);
  if (!a) return -1;
  int n = (int)a->n_ints < max ? (int)a->n_ints : max;
  for (int i = 0; i < n; i++) out[i] = a->ints[i];
  return n;
}

/* Every attribute of the node is in the comma-separated list KNOWN; else unsupported. */
static bool attrs_known(Imp *I, const char *known) {
  for (size_t i = 0; i < I->node->n_attribute; i++) {
    const char *n = I->node->attribute[i]->name;
    const char *p = strstr(known, n);
    size_t len = strlen(n);
    if (!(p && (p == known || p[-1] == ',') && (p[len] == ',' || !p[len])))
      return imp_unsupported(I, "attribute '%s'", n);
  }
  return true;
}

/* Input K, or NULL when absent (omitted optional inputs are ""). */
static Val *in(Imp *I, int k) {
  if ((size_t)k >= I->node->n_input || !*I->node->input[k]) return NULL;
  return imp_val(I, I->node->input[k]);
}

static int nin(Imp *I) {
  return (int)I->node->n_input;
}

/* Input K must be present and constant. */
static Val *const_in(Imp *I, int k, const char *what) {
  Val *v = in(I, k);
  if (!v) return imp_error(I, "input %d (%s) is missing", k + 1, what), NULL;
  if (!v->c) return imp_unsupported(I, "input %d (%s) computed at run time; it must be a constant", k + 1, what), NULL;
  return v;
}

static Val *int_as_f32(Imp *I, Val *v);

/* Input K, present and a float network tensor or constant; run-time integers (token ids
 * and what arithmetic makes of them) as f32 values, exact to 2^24 (int_as_f32). */
static Val *float_in(Imp *I, int k) {
  Val *v = in(I, k);
  if (!v) return imp_error(I, "input %d is missing", k + 1), NULL;
  if (!v->c && (v->dtype == OT_INT64 || v->dtype == OT_INT32)) return int_as_f32(I, v);
  if (!v->c && v->dtype != OT_FLOAT) return imp_unsupported(I, "input %d of element type %d (networks are f32)", k + 1, v->dtype), NULL;
  return v;
}

static bool one_output(Imp *I) {
  for (size_t k = 1; k < I->node->n_output; k++)
    if (*I->node->output[k]) return imp_unsupported(I, "output %zu ('%s')", k + 1, I->node->output[k]);
  return true;
}

/* A normalized axis of a rank-R tensor; -1 (reported) when out of range. */
static int axis_of(Imp *I, int64_t a, int r) {
  if (a < -r || a >= r) return imp_error(I, "axis %lld outside rank %d", (long long)a, r), -1;
  return (int)(a < 0 ? a + r : a);
}

/* ---- text helpers ---------------------------------------------------------------- */

/* A float literal of the language: always with '.' or an exponent; +-inf as the largest f32. */
static char *flit(double v) {
  if (isinf(v)) v = v > 0 ? 3.4028234e38 : -3.4028234e38;
  char *s = xprintf("%.9g", fabs(v));
  if (!strpbrk(s, ".e")) s = xprintf("%s.0", s);
  return v < 0 ? xprintf("(-%s)", s) : s;
}

static char *dims_text(const int64_t *shape, int nd) {
  if (nd == 0) return xstrdup("1");
  char *s = xstrdup("");
  for (int d = 0; d < nd; d++) s = xprintf("%s%s%lld", s, d ? ", " : "", (long long)shape[d]);
  return s;
}

/* Is V a run-time integer tensor held as integers (token ids: i64 / i32)? */
static bool run_time_int(const Val *v) { return !v->c && (v->dtype == OT_INT64 || v->dtype == OT_INT32) && !v->fint; }

/* Run-time index expression of element IDX of IX (integers, or integers held as f32). */
static char *int_at(const Val *ix, const char *name, const char *idx_text) {
  return ix->fint ? xprintf("i64(%s[%s])", name, idx_text) : xprintf("%s[%s]", name, idx_text);
}

/* Is V an integer value: a constant of an integer type, or run-time integers held either way? */
static bool int_valued(const Val *v) { return v->dtype == OT_INT64 || v->dtype == OT_INT32; }

/* V's type in kernel text: f32 (masks too: 0 and 1; constants become f32 weights), or i64
 * / i32 for run-time integers. */
static char *ty(const Val *v) {
  return xprintf("%s[%s]", !run_time_int(v) ? "f32" : v->dtype == OT_INT64 ? "i64" : "i32", dims_text(v->shape, v->ndim));
}

/* "i0, i1, ..." for rank ND (rank 0: "i0"). */
static char *idx(const char *p, int nd) {
  char *s = xstrdup("");
  for (int d = 0; d < (nd ? nd : 1); d++) s = xprintf("%s%s%s%d", s, d ? ", " : "", p, d);
  return s;
}

/* A new output value K: a float network tensor named after it. */
static Val *net_out(Imp *I, int k, int nd, const int64_t *shape) {
  Val *v = imp_out(I, k, OT_FLOAT, nd, shape);
  v->tex = imp_name(I, v->name);
  return v;
}

/* Output K of the element type of X, which it moves: an integer for a run-time integer X, a
 * mask for a mask, else float. */
static Val *net_out_like(Imp *I, int k, int nd, const int64_t *shape, const Val *x) {
  Val *v = net_out(I, k, nd, shape);
  if (!x->c && (run_time_int(x) || x->dtype == OT_BOOL)) v->dtype = x->dtype;
  return v;
}

/* Run-time integers V as an f32 value (a kernel converting them, made once): what the
 * float operators read; integers beyond 2^24 would round (token ids and positions do not
 * come near). A value already held as f32 is itself. */
static Val *int_as_f32(Imp *I, Val *v) {
  if (v->fint) return v;
  Val *f = xalloc(sizeof *f);
  *f = *v;
  f->dtype = OT_FLOAT;
  f->other = NULL;
  if (!v->as_f32) {
    v->as_f32 = imp_name(I, xprintf("%s_f32", v->name));
    char *ix = idx("i", v->ndim);
    const char *kn = imp_kernel(I, "to_float", xprintf("(X: %s) -> Y: f32[%s] {\n  Y[%s] = f32(X[%s])\n}", ty(v),
                                                       dims_text(v->shape, v->ndim), ix, ix));
    imp_call(I, v->as_f32, kn, v->tex);
  }
  f->tex = v->as_f32;
  return f;
}

/* Output 0 as an alias of V (Identity, Dropout, Reshape to the same shape). */
static bool alias(Imp *I, Val *v) {
  Val *o = imp_out(I, 0, v->dtype, v->ndim, v->shape);
  if (v->c) {
    int64_t n = val_numel(v);
    o->c = malloc(sizeof(double) * (size_t)(n ? n : 1));
    memcpy(o->c, v->c, sizeof(double) * (size_t)n);
  } else {
    o->tex = v->tex;
    o->param = v->param;
    o->nhwc = v->nhwc;
    o->other = v->other;
    o->fint = v->fint;
    o->as_f32 = v->as_f32;
  }
  return true;
}

/* ---- broadcasting ---------------------------------------------------------------- */

/* The numpy broadcast of A and B into OUT; false: reported. */
static bool broadcast(Imp *I, const int64_t *a_in, int na, const int64_t *b_in, int nb, int64_t *out, int *no) {
  int64_t a[HT_MAX_DIMS], b[HT_MAX_DIMS]; /* OUT may be A or B */
  memcpy(a, a_in, sizeof(int64_t) * (size_t)na);
  memcpy(b, b_in, sizeof(int64_t) * (size_t)nb);
  int n = na > nb ? na : nb;
  for (int d = 0; d < n; d++) {
    int64_t x = d - (n - na) >= 0 ? a[d - (n - na)] : 1, y = d - (n - nb) >= 0 ? b[d - (n - nb)] : 1;
    if (x != y && x != 1 && y != 1)
      return imp_error(I, "shapes do not broadcast: dimension %d is %lld and %lld", d + 1, (long long)x, (long long)y);
    out[d] = x == 1 ? y : x;
  }
  *no = n;
  return true;
}

/* The flat index into a tensor of shape SH (rank NS) read at output point IDX (rank NO)
 * under broadcasting. */
static int64_t bidx(const int64_t *sh, int ns, const int64_t *idxs, int no) {
  int64_t f = 0;
  for (int d = 0; d < ns; d++) {
    int64_t i = sh[d] == 1 ? 0 : idxs[d + no - ns];
    f = f * sh[d] + i;
  }
  return f;
}

/* The access of V at the output's index i0.. (rank NO), broadcast. */
static char *baccess(const char *name, const Val *v, const int64_t *oshape, int no) {
  if (v->ndim == 0) return xprintf("%s[0]", name);
  char *s = xprintf("%s[", name);
  for (int d = 0; d < v->ndim; d++) {
    int od = d + no - v->ndim;
    s = xprintf("%s%s%s", s, d ? ", " : "", v->shape[d] == 1 && oshape[od] != 1 ? "0" : xprintf("i%d", od));
  }
  return xprintf("%s]", s);
}

/* ---- constant folding ------------------------------------------------------------ */

static double *vals(int64_t n) {
  return malloc(sizeof(double) * (size_t)(n ? n : 1));
}

/* A constant output K. */
static Val *const_out(Imp *I, int k, int dtype, int nd, const int64_t *shape, double *c) {
  Val *v = imp_out(I, k, dtype, nd, shape);
  v->c = c;
  return v;
}

/* Round a folded value to its type: f32 for float, truncation for integers. */
static double typed(int dtype, double x) {
  if (dtype == OT_FLOAT) return (float)x;
  if (dtype == OT_DOUBLE) return x;
  if (dtype == OT_BOOL) return x != 0;
  return isfinite(x) ? trunc(x) : 0;
}

static bool is_int(int dtype) {
  return dtype != OT_FLOAT && dtype != OT_DOUBLE;
}

/* One elementwise operation on folded values, in double precision (rounded to the type
 * by the caller); attributes from the node (I). */
static double fold_value(Imp *I, const char *op, int dt, double a, double b, double c);

/* Every operator fold_value knows: a constant input to any other is refused (it would
 * otherwise fold as the identity: a wrong model, not an error). */
static bool foldable(const char *op) {
  static const char *const ops[] = {
      "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
      "Or", "Max", "Min", "Where", "Neg", "Abs", "Not", "Sqrt", "Exp", "Log", "Relu", "Floor", "Ceil", "Reciprocal",
      "Sigmoid", "Tanh", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Round", "Sign",
      "Softplus", "Softsign", "HardSwish", "LeakyRelu", "HardSigmoid", "Elu", "Selu", "Celu", "ThresholdedRelu",
      "Shrink", "Asinh", "Acosh", "Atanh", "Mish", "PRelu", "Identity", "Cast", "IsNaN", "Gelu"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(op, ops[i])) return true;
  return false;
}

static double fold_value(Imp *I, const char *op, int dt, double a, double b, double c) {
  int64_t fmod_attr = attr_i(I, "fmod", 0);
  if (!strcmp(op, "Add")) return a + b;
  if (!strcmp(op, "Sub")) return a - b;
  if (!strcmp(op, "Mul")) return a * b;
  if (!strcmp(op, "Div")) return is_int(dt) ? (b == 0 ? 0 : trunc(a / b)) : a / b;
  if (!strcmp(op, "Mod")) {
    if (b == 0) return 0;
    if (fmod_attr || !is_int(dt)) return fmod(a, b);
    double r = fmod(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;
  }
  if (!strcmp(op, "Pow")) return pow(a, b);
  if (!strcmp(op, "Equal")) return a == b;
  if (!strcmp(op, "Less")) return a < b;
  if (!strcmp(op, "Greater")) return a > b;
  if (!strcmp(op, "LessOrEqual")) return a <= b;
  if (!strcmp(op, "GreaterOrEqual")) return a >= b;
  if (!strcmp(op, "And")) return a && b;
  if (!strcmp(op, "Or")) return a || b;
  if (!strcmp(op, "Max")) return a > b ? a : b;
  if (!strcmp(op, "Min")) return a < b ? a : b;
  if (!strcmp(op, "Where")) return a ? b : c;
  if (!strcmp(op, "Neg")) return -a;
  if (!strcmp(op, "Abs")) return fabs(a);
  if (!strcmp(op, "Not")) return !a;
  if (!strcmp(op, "IsNaN")) return a != a;
  if (!strcmp(op, "Gelu"))
    return !strcmp(attr_s(I, "approximate", "none"), "tanh") ? 0.5 * a * (1 + tanh(sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)))
                                                             : 0.5 * a * (1 + erf(a / sqrt(2)));
  if (!strcmp(op, "Sqrt")) return sqrt(a);
  if (!strcmp(op, "Exp")) return exp(a);
  if (!strcmp(op, "Log")) return log(a);
  if (!strcmp(op, "Relu")) return a > 0 ? a : 0;
  if (!strcmp(op, "Floor")) return floor(a);
  if (!strcmp(op, "Ceil")) return ceil(a);
  if (!strcmp(op, "Reciprocal")) return 1 / a;
  if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-a));
  if (!strcmp(op, "Tanh")) return tanh(a);
  if (!strcmp(op, "Erf")) return erf(a);
  if (!strcmp(op, "Sin")) return sin(a);
  if (!strcmp(op, "Cos")) return cos(a);
  if (!strcmp(op, "Tan")) return tan(a);
  if (!strcmp(op, "Asin")) return asin(a);
  if (!strcmp(op, "Acos")) return acos(a);
  if (!strcmp(op, "Atan")) return atan(a);
  if (!strcmp(op, "Sinh")) return sinh(a);
  if (!strcmp(op, "Cosh")) return cosh(a);
  if (!strcmp(op, "Round")) return nearbyint(a); /* ties to even in the default rounding mode */
  if (!strcmp(op, "Sign")) return a > 0 ? 1 : a < 0 ? -1 : a;
  if (!strcmp(op, "Softplus")) return log1p(exp(a));
  if (!strcmp(op, "Softsign")) return a / (1 + fabs(a));
  if (!strcmp(op, "HardSwish")) return a * fmax(0, fmin(1, a / 6 + 0.5));
  if (!strcmp(op, "LeakyRelu")) return a >= 0 ? a : (float)attr_f(I, "alpha", 0.01) * a;
  if (!strcmp(op, "HardSigmoid"))
    return fmax(0, fmin(1, (float)attr_f(I, "alpha", 0.2) * a + (float)attr_f(I, "beta", 0.5)));
  if (!strcmp(op, "Elu")) return a >= 0 ? a : (float)attr_f(I, "alpha", 1) * expm1(a);
  if (!strcmp(op, "Selu"))
    return (float)attr_f(I, "gamma", SELU_GAMMA) * (a > 0 ? a : (float)attr_f(I, "alpha", SELU_ALPHA) * expm1(a));
  if (!strcmp(op, "Celu")) {
    double al = (float)attr_f(I, "alpha", 1);
    return fmax(0, a) + fmin(0, al * expm1(a / al));
  }
  if (!strcmp(op, "ThresholdedRelu")) return a > (float)attr_f(I, "alpha", 1) ? a : 0;
  if (!strcmp(op, "Shrink")) {
    double l = (float)attr_f(I, "lambd", 0.5), bias = (float)attr_f(I, "bias", 0);
    return a < -l ? a + bias : a > l ? a - bias : 0;
  }
  if (!strcmp(op, "Asinh")) return asinh(a);
  if (!strcmp(op, "Acosh")) return acosh(a);
  if (!strcmp(op, "Atanh")) return atanh(a);
  if (!strcmp(op, "Mish")) return a * tanh(log1p(exp(a)));
  if (!strcmp(op, "PRelu")) return a < 0 ? b * a : a;
  return a; /* Identity, Cast */
}

/* Elementwise over constant inputs with broadcasting. */
static bool fold_ew(Imp *I, const char *op) {
  if (!foldable(op)) return imp_unsupported(I, "%s of constants (not folded at import)", op);
  Val *x[3] = {0};
  int n = nin(I) < 3 ? nin(I) : 3;
  int no = 0;
  int64_t os[HT_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    x[k] = in(I, k);
    if (!x[k]) return imp_error(I, "input %d is missing", k + 1);
    if (!broadcast(I, os, no, x[k]->shape, x[k]->ndim, os, &no)) return false;
  }
  int dt = x[strcmp(op, "Where") == 0 ? 1 : 0]->dtype;
  if (!strcmp(op, "Cast")) dt = (int)attr_i(I, "to", OT_FLOAT);
  bool logic = !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "LessOrEqual") ||
               !strcmp(op, "GreaterOrEqual") || !strcmp(op, "And") || !strcmp(op, "Or") || !strcmp(op, "Not") ||
               !strcmp(op, "IsNaN");
  Val tmp = {.ndim = no};
  memcpy(tmp.shape, os, sizeof os);
  int64_t total = val_numel(&tmp), ix[HT_MAX_DIMS] = {0};
  double *c = vals(total);
  for (int64_t i = 0; i < total; i++) {
    int64_t r = i;
    for (int d = no - 1; d >= 0; d--) ix[d] = r % os[d], r /= os[d];
    double a = x[0]->c[bidx(x[0]->shape, x[0]->ndim, ix, no)];
    double b = n > 1 ? x[1]->c[bidx(x[1]->shape, x[1]->ndim, ix, no)] : 0;
    double cc = n > 2 ? x[2]->c[bidx(x[2]->shape, x[2]->ndim, ix, no)] : 0;
    c[i] = typed(logic ? OT_BOOL : dt, fold_value(I, op, dt, a, b, cc));
  }
  const_out(I, 0, logic ? OT_BOOL : dt, no, os, c);
  return true;
}

/* Constant: its tensor or scalar attribute. */
static bool op_constant(Imp *I) {
  const Onnx__AttributeProto *a = I->node->n_attribute == 1 ? I->node->attribute[0] : NULL;
  if (!a) return imp_error(I, "a Constant needs exactly one value attribute");
  int64_t one = 1;
  if (!strcmp(a->name, "value") && a->t) {
    HostTensor t;
    const char *why;
    const Onnx__TensorProto *tp = a->t;
    if (tp->n_dims > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
    /* through f32 for floats; integers exactly */
    if (tp->data_type == OT_FLOAT) {
      if (!onnx_tensor_f32(tp, &t, &why)) return imp_error(I, "%s", why);
      double *c = vals(ht_numel(&t));
      for (int64_t i = 0; i < ht_numel(&t); i++) c[i] = t.data[i];
      free(t.data);
      const_out(I, 0, OT_FLOAT, (int)tp->n_dims, tp->dims, c);
      return true;
    }
    int64_t n = 1;
    for (size_t d = 0; d < tp->n_dims; d++) n *= tp->dims[d];
    if (tp->data_type != OT_INT64 && tp->data_type != OT_INT32 && tp->data_type != OT_BOOL && tp->data_type != OT_DOUBLE)
      return imp_unsupported(I, "a constant of element type %d", tp->data_type);
    double *c = vals(n);
    for (int64_t i = 0; i < n; i++) {
      const uint8_t *r = tp->has_raw_data ? tp->raw_data.data : NULL;
      size_t es = tp->data_type == OT_INT64 || tp->data_type == OT_DOUBLE ? 8 : tp->data_type == OT_INT32 ? 4 : 1;
      if (r && tp->raw_data.len != (size_t)n * es) return imp_error(I, "a constant's data does not match its shape");
      if (!r && (tp->data_type == OT_INT64 ? tp->n_int64_data : tp->data_type == OT_DOUBLE ? tp->n_double_data : tp->n_int32_data) != (size_t)n)
        return imp_error(I, "a constant's data does not match its shape");
      if (tp->data_type == OT_INT64) {
        int64_t x;
        if (r) memcpy(&x, r + 8 * i, 8);
        else x = tp->int64_data[i];
        c[i] = (double)x;
      } else if (tp->data_type == OT_DOUBLE) {
        if (r) memcpy(&c[i], r + 8 * i, 8);
        else c[i] = tp->double_data[i];
      } else if (tp->data_type == OT_INT32) {
        int32_t x;
        if (r) memcpy(&x, r + 4 * i, 4);
        else x = tp->int32_data[i];
        c[i] = x;
      } else {
        c[i] = r ? r[i] : tp->int32_data[i];
      }
    }
    const_out(I, 0, tp->data_type, (int)tp->n_dims, tp->dims, c);
    return true;
  }
  if (!strcmp(a->name, "value_float")) {
    double *c = vals(1);
    c[0] = a->f;
    const_out(I, 0, OT_FLOAT, 0, &one, c);
    return true;
  }
  if (!strcmp(a->name, "value_int")) {
    double *c = vals(1);
    c[0] = (double)a->i;
    const_out(I, 0, OT_INT64, 0, &one, c);
    return true;
  }
  if (!strcmp(a->name, "value_ints") || !strcmp(a->name, "value_floats")) {
    bool f = a->name[6] == 'f';
    int64_t n = f ? (int64_t)a->n_floats : (int64_t)a->n_ints;
    double *c = vals(n);
    for (int64_t i = 0; i < n; i++) c[i] = f ? (double)a->floats[i] : (double)a->ints[i];
    const_out(I, 0, f ? OT_FLOAT : OT_INT64, 1, &n, c);
    return true;
  }
  return imp_unsupported(I, "attribute '%s'", a->name);
}

/* Shape: the input's shape (run-time inputs too: shapes are static). */
static bool op_shape(Imp *I) {
  Val *x = in(I, 0);
  if (!x || !attrs_known(I, "start,end")) return x ? false : imp_error(I, "input 1 is missing");
  int64_t s = attr_i(I, "start", 0), e = attr_i(I, "end", x->ndim);
  if (s < 0) s += x->ndim;
  if (e < 0) e += x->ndim;
  s = s < 0 ? 0 : s > x->ndim ? x->ndim : s;
  e = e < s ? s : e > x->ndim ? x->ndim : e;
  int64_t n = e - s;
  double *c = vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = (double)x->shape[s + i];
  const_out(I, 0, OT_INT64, 1, &n, c);
  return true;
}

/* A constant 1-D int tensor as a shape (dims >= 0) into OUT; its length or -1. */
static int shape_from(Imp *I, Val *v, int64_t *out) {
  if (v->ndim > 1 || val_numel(v) > HT_MAX_DIMS) return imp_unsupported(I, "a shape of more than 8 dimensions"), -1;
  int n = (int)val_numel(v);
  for (int i = 0; i < n; i++) out[i] = (int64_t)v->c[i];
  return n;
}

#define MAX_RESULT ((int64_t)1 << 30) /* elements of one result at most: shape_ok */

/* A result shape the importer can hold: no negative dimension, at most 2^30 elements (4 GiB
 * of f32; a scale or a repeat count from a corrupt model would otherwise ask for more memory
 * than the machine has). false: reported. */
static bool shape_ok(Imp *I, const int64_t *s, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) {
    if (s[d] < 0) return imp_error(I, "a negative dimension (%lld)", (long long)s[d]);
    if (s[d] > MAX_RESULT || (n *= s[d]) > MAX_RESULT)
      return imp_unsupported(I, "a result of more than 2^30 elements");
  }
  return true;
}

static bool op_constant_of_shape(Imp *I) {
  Val *s = const_in(I, 0, "shape");
  if (!s) return false;
  int64_t shape[HT_MAX_DIMS];
  int nd = shape_from(I, s, shape);
  if (nd < 0 || !shape_ok(I, shape, nd)) return false;
  double v = 0;
  int dt = OT_FLOAT;
  const Onnx__AttributeProto *a = attr(I, "value");
  if (a && a->t) {
    HostTensor t;
    const char *why;
    if (!onnx_tensor_f32(a->t, &t, &why)) return imp_error(I, "%s", why);
    v = t.data[0];
    dt = a->t->data_type;
    free(t.data);
  }
  Val tmp = {.ndim = nd};
  memcpy(tmp.shape, shape, sizeof shape);
  int64_t n = val_numel(&tmp);
  double *c = vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = v;
  const_out(I, 0, dt, nd, shape, c);
  return true;
}

static bool op_range(Imp *I) {
  Val *s = const_in(I, 0, "start"), *l = s ? const_in(I, 1, "limit") : NULL, *d = l ? const_in(I, 2, "delta") : NULL;
  if (!d) return false;
  double st = s->c[0], lim = l->c[0], de = d->c[0];
  if (de == 0) return imp_error(I, "delta is 0");
  double len = fmax(ceil((lim - st) / de), 0);
  if (!(len <= (double)MAX_RESULT)) return imp_unsupported(I, "a result of more than 2^30 elements");
  int64_t n = (int64_t)len;
  double *c = vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = typed(s->dtype, st + (double)i * de);
  const_out(I, 0, s->dtype, 1, &n, c);
  return true;
}

/* ---- generated kernels ----------------------------------------------------------- */

/* Y = EXPR at every point of the broadcast of inputs X[0..N) (or of OSHAPE when NO >= 0),
 * $K in EXPR standing for input K there. Constant scalars are literals. */
static bool ew_to(Imp *I, const char *base, Val **x, int n, const char *expr, const int64_t *oshape, int no_in) {
  int no = 0;
  int64_t os[HT_MAX_DIMS];
  if (no_in >= 0) {
    no = no_in;
    memcpy(os, oshape, sizeof(int64_t) * (size_t)no);
  }
  for (int k = 0; k < n; k++)
    if (!broadcast(I, os, no, x[k]->shape, x[k]->ndim, os, &no)) return false;
  if (!shape_ok(I, os, no)) return false;
  char *params = xstrdup(""), *args = xstrdup(""), *e = xstrdup(expr);
  int np = 0;
  for (int k = 0; k < n; k++) {
    char *acc;
    if (x[k]->c && val_numel(x[k]) == 1) {
      acc = flit(x[k]->c[0]);
    } else {
      const char *pn = xprintf("X%d", k);
      params = xprintf("%s%s%s: %s", params, np ? ", " : "", pn, ty(x[k]));
      args = xprintf("%s%s%s", args, np++ ? ", " : "", imp_tensor(I, x[k]));
      acc = baccess(pn, x[k], os, no);
    }
    char *tok = xprintf("$%d", k), *p;
    while ((p = strstr(e, tok))) e = xprintf("%.*s%s%s", (int)(p - e), e, acc, p + strlen(tok));
  }
  if (!np) return imp_unsupported(I, "an operation on constants only that does not fold");
  Val *o = net_out(I, 0, no, os);
  const char *k = imp_kernel(I, base, xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, ty(o), idx("i", no), e));
  imp_call(I, o->tex, k, args);
  return true;
}

/* Input X of an elementwise operator seen channels last: a rank-4 NHWC tensor as is, an
 * NCHW one through nchw_to_nhwc, a constant (padded to rank 4 by leading 1s) permuted. */
static Val *ew_nhwc_input(Imp *I, Val *x) {
  if (x->c && val_numel(x) == 1) return x; /* a literal */
  Val *p = xalloc(sizeof *p);
  *p = *x;
  p->nhwc = false;
  p->other = NULL;
  if (!x->c) {
    p->tex = imp_tensor_nhwc(I, x);
  } else {
    Val r4 = *x; /* right-aligned to rank 4 */
    r4.ndim = 4;
    for (int d = 0; d < 4; d++) r4.shape[d] = d < 4 - x->ndim ? 1 : x->shape[d - (4 - x->ndim)];
    p->c = imp_permute_nhwc(&r4);
    p->name = xprintf("%s_nhwc", x->name);
    p->tex = NULL;
    memcpy(p->shape, r4.shape, sizeof r4.shape);
  }
  p->ndim = 4;
  int64_t c = p->shape[1];
  p->shape[1] = p->shape[2], p->shape[2] = p->shape[3], p->shape[3] = c;
  return p;
}

/* An elementwise operator: channels last when an input is an NHWC tensor and every other
 * input is a rank-4 tensor or a constant of rank <= 4; else in the model's layout. */
static bool ew(Imp *I, const char *base, Val **x, int n, const char *expr) {
  bool nhwc = false, can = true;
  for (int k = 0; k < n; k++) {
    nhwc |= x[k]->nhwc;
    can &= x[k]->c ? x[k]->ndim <= 4 : x[k]->ndim == 4;
  }
  if (!nhwc || !can) return ew_to(I, base, x, n, expr, NULL, -1);
  Val *p[8];
  for (int k = 0; k < n && k < 8; k++) p[k] = ew_nhwc_input(I, x[k]);
  if (!ew_to(I, base, p, n, expr, NULL, -1)) return false;
  Val *o = VEC_AT(I->vals, I->vals.len - 1); /* [N, H, W, C] back to the logical shape */
  int64_t c = o->shape[3];
  o->shape[3] = o->shape[2], o->shape[2] = o->shape[1], o->shape[1] = c;
  o->nhwc = true;
  return true;
}

/* The lower-case name of an op for kernel names. */
static char *lower(const char *s) {
  char *r = xstrdup(s);
  for (char *p = r; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  return r;
}

/* Unary float operators: EXPR over $0. */
static bool unary(Imp *I, const char *op, const char *expr) {
  Val *x = float_in(I, 0);
  if (!x || !one_output(I)) return false;
  if (x->c) return fold_ew(I, op);
  /* stdlib where it fits */
  if (!strcmp(op, "Relu") && (x->ndim == 4 || x->ndim == 2)) { /* relu: any 4-D layout */
    Val *o = net_out(I, 0, x->ndim, x->shape);
    o->nhwc = x->nhwc;
    imp_call(I, o->tex, x->ndim == 4 ? "relu" : "relu_2d", x->nhwc ? x->tex : imp_tensor(I, x));
    return true;
  }
  return ew(I, lower(op), &x, 1, expr);
}

static bool binary(Imp *I, const char *op, const char *sym) {
  if (!strcmp(op, "Div") && in(I, 0) && in(I, 1) && int_valued(in(I, 0)) && int_valued(in(I, 1)) && (!in(I, 0)->c || !in(I, 1)->c))
    return imp_unsupported(I, "Div of integers at run time (it truncates)");
  Val *x[2] = {float_in(I, 0), NULL};
  if (!x[0] || !(x[1] = float_in(I, 1)) || !one_output(I)) return false;
  if (x[0]->c && x[1]->c) return fold_ew(I, op);
  if (!strcmp(op, "Add") && x[0]->ndim == x[1]->ndim && (x[0]->ndim == 4 || x[0]->ndim == 2) &&
      !memcmp(x[0]->shape, x[1]->shape, sizeof(int64_t) * (size_t)x[0]->ndim)) {
    Val *o = net_out(I, 0, x[0]->ndim, x[0]->shape);
    o->nhwc = x[0]->ndim == 4 && (x[0]->nhwc || x[1]->nhwc);
    const char *a = o->nhwc ? imp_tensor_nhwc(I, x[0]) : imp_tensor(I, x[0]);
    const char *b = o->nhwc ? imp_tensor_nhwc(I, x[1]) : imp_tensor(I, x[1]);
    imp_call(I, o->tex, x[0]->ndim == 4 ? "add" : "add_2d", xprintf("%s, %s", a, b));
    return true;
  }
  const char *e = strlen(sym) == 1 ? xprintf("$0 %s $1", sym) : xprintf("%s($0, $1)", sym);
  if (!strcmp(op, "Pow") && int_valued(in(I, 0)) && !in(I, 0)->c) { /* integers to a power: integers, truncated */
    int dt = in(I, 0)->dtype;
    if (!ew(I, "pow_int", x, 2, "pow($0, $1) < 0.0 ? ceil(pow($0, $1)) : floor(pow($0, $1))")) return false;
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    o->dtype = dt;
    o->fint = true;
    return true;
  }
  return ew(I, lower(op), x, 2, e);
}

/* Max and Min of 1 or more inputs. */
static bool variadic(Imp *I, const char *op) {
  int n = nin(I);
  if (n < 1 || n > 8) return imp_unsupported(I, "%d inputs (1 to 8)", n);
  Val *x[8];
  char *e = xstrdup("$0");
  for (int k = 0; k < n; k++) {
    if (!(x[k] = float_in(I, k)) || x[k]->c) return x[k] ? imp_unsupported(I, "constant inputs") : false;
    if (k) e = xprintf("%s(%s, $%d)", !strcmp(op, "Max") ? "max" : "min", e, k);
  }
  return one_output(I) && ew(I, lower(op), x, n, n == 1 ? "$0 + 0.0" : e);
}

/* ---- operators with attributes --------------------------------------------------- */

static bool op_leaky_relu(Imp *I) {
  if (!attrs_known(I, "alpha")) return false;
  return unary(I, "LeakyRelu", xprintf("$0 >= 0.0 ? $0 : %s * $0", flit((float)attr_f(I, "alpha", 0.01))));
}

static bool op_hard_sigmoid(Imp *I) {
  if (!attrs_known(I, "alpha,beta")) return false;
  return unary(I, "HardSigmoid", xprintf("max(0.0, min(1.0, %s * $0 + %s))", flit((float)attr_f(I, "alpha", 0.2)),
                                         flit((float)attr_f(I, "beta", 0.5))));
}

/* Clip: bounds from inputs 2 and 3 (constants are literals; absent: none). */
static bool op_clip(Imp *I) {
  if (I->opset < 11) { /* Clip-6: the bounds are attributes (absent: none) */
    if (!attrs_known(I, "min,max") || !one_output(I)) return false;
    if (!float_in(I, 0)) return false;
    if (in(I, 0)->c) return imp_unsupported(I, "Clip of a constant");
    char *e = xstrdup("$0");
    if (attr(I, "min")) e = xprintf("max(%s, %s)", e, flit((float)attr_f(I, "min", 0)));
    if (attr(I, "max")) e = xprintf("min(%s, %s)", e, flit((float)attr_f(I, "max", 0)));
    return unary(I, "Clip", e);
  }
  if (!attrs_known(I, "") || !one_output(I)) return false;
  Val *x[3] = {float_in(I, 0), in(I, 1), in(I, 2)};
  if (!x[0]) return false;
  int n = 1;
  char *e = xstrdup("$0");
  for (int k = 1; k < 3; k++) {
    if (!x[k]) continue;
    if (!(x[n] = float_in(I, k))) return false;
    if (val_numel(x[n]) != 1) return imp_error(I, "input %d is not a scalar", k + 1);
    e = xprintf("%s(%s, $%d)", k == 1 ? "max" : "min", e, n);
    n++;
  }
  if (x[0]->c) return imp_unsupported(I, "Clip of a constant");
  return ew(I, "clip", x, n, e);
}

/* Conv and pools: spatial pads [t, l, b, r] from pads or auto_pad for input H x W. */
static bool pool_pads(Imp *I, const int64_t *hw, const int64_t *k, const int64_t *s, const int64_t *d, int64_t *p) {
  const char *ap = attr_s(I, "auto_pad", "NOTSET");
  int64_t pads[4] = {0};
  int np = attr_ints(I, "pads", pads, 4);
  if (np >= 0 && np != 4) return imp_unsupported(I, "pads of %d values (2-D: 4)", np);
  if (!strcmp(ap, "NOTSET") || !strcmp(ap, "VALID")) {
    for (int i = 0; i < 4; i++) p[i] = !strcmp(ap, "VALID") ? 0 : pads[i];
    return true;
  }
  if (strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER")) return imp_unsupported(I, "auto_pad '%s'", ap);
  for (int i = 0; i < 2; i++) {
    int64_t out = (hw[i] + s[i] - 1) / s[i];
    int64_t total = (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - hw[i];
    if (total < 0) total = 0;
    int64_t small = total / 2, big = total - small;
    p[i] = !strcmp(ap, "SAME_UPPER") ? small : big;
    p[i + 2] = !strcmp(ap, "SAME_UPPER") ? big : small;
  }
  return true;
}

/* The integer attributes of a call ("SH = 2, PT = 1"), those at their defaults left out. */
static char *kw(char *s, const char *name, int64_t v, int64_t def) {
  return v == def ? s : xprintf("%s, %s = %lld", s, name, (long long)v);
}

/* strides, dilations (2 each, default 1); false: reported. */
static bool spatial(Imp *I, const char *name, int64_t *out) {
  out[0] = out[1] = 1;
  int n = attr_ints(I, name, out, 2);
  if (n >= 0 && n != 2) return imp_unsupported(I, "%s of %d values (2-D only)", name, n);
  if (out[0] < 1 || out[1] < 1) return imp_error(I, "%s must be positive", name);
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

static bool op_conv(Imp *I) {
  if (!attrs_known(I, "auto_pad,dilations,group,kernel_shape,pads,strides") || !one_output(I)) return false;
  Val *x = float_in(I, 0), *w = x ? float_in(I, 1) : NULL, *b = in(I, 2);
  if (!w) return false;
  if (x->ndim != 4 || w->ndim != 4) return imp_unsupported(I, "a %d-D convolution (2-D only)", x->ndim - 2);
  if (x->c) return imp_unsupported(I, "a constant input");
  int64_t g = attr_i(I, "group", 1), s[2], d[2], p[4], ks[2] = {w->shape[2], w->shape[3]};
  if (!spatial(I, "strides", s) || !spatial(I, "dilations", d) || !pool_pads(I, x->shape + 2, ks, s, d, p)) return false;
  if (g < 1 || x->shape[1] % g || w->shape[0] % g || w->shape[1] * g != x->shape[1])
    return imp_error(I, "group %lld does not fit %lld input channels and a filter of %lld", (long long)g, (long long)x->shape[1], (long long)w->shape[1]);
  int64_t os[4] = {x->shape[0], w->shape[0], (x->shape[2] + p[0] + p[2] - d[0] * (ks[0] - 1) - 1) / s[0] + 1,
                   (x->shape[3] + p[1] + p[3] - d[1] * (ks[1] - 1) - 1) / s[1] + 1};
  if (os[2] < 1 || os[3] < 1) return imp_error(I, "the output would be empty");
  /* NHWC with HWIO weights when the filter is a constant (permuted here) */
  bool nhwc = w->c != NULL;
  const char *tx = nhwc ? imp_tensor_nhwc(I, x) : imp_tensor(I, x), *tw;
  if (nhwc) {
    Val *k = xalloc(sizeof *k);
    int64_t co = w->shape[0], ci = w->shape[1], kh = ks[0], kwd = ks[1];
    *k = (Val){.name = w->name, .dtype = OT_FLOAT, .ndim = 4, .shape = {kh, kwd, ci, co}, .c = vals(co * ci * kh * kwd)};
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
    *k = (Val){.name = xprintf("%s_dw", w->name), .dtype = OT_FLOAT, .ndim = 3, .shape = {ks[0], ks[1], g}, .c = vals(ks[0] * ks[1] * g)};
    for (int64_t c = 0; c < g; c++)
      for (int64_t y = 0; y < ks[0] * ks[1]; y++) k->c[y * g + c] = w->c[c * ks[0] * ks[1] + y];
    char *a = xprintf("%s, %s", tx, imp_tensor(I, k));
    a = kw(kw(kw(kw(kw(kw(a, "SH", s[0], 1), "SW", s[1], 1), "PH", p[0], 0), "PW", p[1], 0), "DH", d[0], 1), "DW", d[1], 1);
    Val *o = net_out(I, 0, 4, os);
    o->nhwc = true;
    imp_call(I, o->tex, "depthwise_conv2d_nhwc", a);
    return conv_bias(I, o, b);
  }
  char *a = xprintf("%s, %s", tx, tw);
  a = kw(kw(kw(kw(kw(kw(kw(kw(a, "SH", s[0], 1), "SW", s[1], 1), "PT", p[0], 0), "PL", p[1], 0), "PB", p[2], 0), "PR", p[3], 0), "DH", d[0], 1), "DW", d[1], 1);
  Val *o = net_out(I, 0, 4, os);
  o->nhwc = nhwc;
  const char *op = g == 1 ? (nhwc ? "conv2d_nhwc_pad" : "conv2d_nchw_pad") : nhwc ? "group_conv2d_nhwc_pad" : "group_conv2d_nchw_pad";
  imp_call(I, o->tex, op, g == 1 ? a : xprintf("%s, G = %lld", a, (long long)g));
  return conv_bias(I, o, b);
}

/* ConvTranspose (2-D, group 1): Y[n, co, y, x] sums X[n, ci, iy, ix] K[ci, co, ry, rx]
 * over the points with iy * S + ry * D = y + PT (and the same for x). */
static bool op_conv_transpose(Imp *I) {
  if (!attrs_known(I, "auto_pad,dilations,group,kernel_shape,output_padding,output_shape,pads,strides") || !one_output(I))
    return false;
  Val *x = float_in(I, 0), *w = x ? float_in(I, 1) : NULL, *b = in(I, 2);
  if (!w) return false;
  if (x->ndim != 4 || w->ndim != 4) return imp_unsupported(I, "a %d-D transposed convolution (2-D only)", x->ndim - 2);
  if (attr_i(I, "group", 1) != 1) return imp_unsupported(I, "group %lld (1 only)", (long long)attr_i(I, "group", 1));
  if (x->c) return imp_unsupported(I, "a constant input");
  if (w->shape[0] != x->shape[1]) return imp_error(I, "the filter has %lld input channels, the input %lld", (long long)w->shape[0], (long long)x->shape[1]);
  int64_t s[2], d[2], p[4] = {0}, op[2] = {0, 0}, oshape[2], ks[2] = {w->shape[2], w->shape[3]}, os[4];
  if (!spatial(I, "strides", s) || !spatial(I, "dilations", d)) return false;
  int np = attr_ints(I, "pads", p, 4), nop = attr_ints(I, "output_padding", op, 2), nos = attr_ints(I, "output_shape", oshape, 2);
  if ((np >= 0 && np != 4) || (nop >= 0 && nop != 2) || (nos >= 0 && nos != 2)) return imp_unsupported(I, "pads, output_padding or output_shape of another length than 2-D's");
  const char *ap = attr_s(I, "auto_pad", "NOTSET");
  for (int i = 0; i < 2; i++) {
    int64_t full = s[i] * (x->shape[2 + i] - 1) + op[i] + (ks[i] - 1) * d[i] + 1;
    if (nos < 0 && strcmp(ap, "SAME_UPPER") && strcmp(ap, "SAME_LOWER")) continue;
    /* as ONNX's reference: a negative total (a larger output_shape) pads the end */
    int64_t want = nos >= 0 ? oshape[i] : x->shape[2 + i] * s[i], total = full - want;
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
    bool upper = !strcmp(ap, "SAME_UPPER");
    p[i] = upper ? half : total - half;
    p[i + 2] = upper ? total - half : half;
  }
  os[0] = x->shape[0], os[1] = w->shape[1];
  for (int i = 0; i < 2; i++) os[2 + i] = s[i] * (x->shape[2 + i] - 1) + op[i] + (ks[i] - 1) * d[i] + 1 - p[i] - p[i + 2];
  if (os[2] < 1 || os[3] < 1) return imp_error(I, "the output would be empty");
  /* the input row of output row y and filter row ry, and its guard */
  char *iy = xprintf("(y + %lld - ry * %lld)", (long long)p[0], (long long)d[0]);
  char *ix = xprintf("(x + %lld - rx * %lld)", (long long)p[1], (long long)d[1]);
  char *guard = xprintf("%s %% %lld == 0 && %s %% %lld == 0 && %s / %lld >= 0 && %s / %lld < %lld && %s / %lld >= 0 && %s / %lld < %lld",
                        iy, (long long)s[0], ix, (long long)s[1], iy, (long long)s[0], iy, (long long)s[0], (long long)x->shape[2],
                        ix, (long long)s[1], ix, (long long)s[1], (long long)x->shape[3]);
  Val *o = net_out(I, 0, 4, os);
  const char *kn = imp_kernel(I, "conv_transpose",
                              xprintf("(X: %s, K: %s) -> Y: %s {\n  Y[n, co, y, x] += (%s ? X[n, ci, %s / %lld, %s / %lld] : 0.0) * K[ci, co, ry, rx]\n}",
                                      ty(x), ty(w), ty(o), guard, iy, (long long)s[0], ix, (long long)s[1]));
  const char *tx = imp_tensor(I, x), *tw = imp_tensor(I, w);
  imp_call(I, o->tex, kn, xprintf("%s, %s", tx, tw));
  return conv_bias(I, o, b);
}

static bool op_pool(Imp *I, bool max) {
  if (!attrs_known(I, max ? "auto_pad,ceil_mode,dilations,kernel_shape,pads,storage_order,strides"
                          : "auto_pad,ceil_mode,count_include_pad,kernel_shape,pads,strides") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->ndim != 4) return imp_unsupported(I, "a %d-D pool (2-D only)", x->ndim - 2);
  if (attr_i(I, "storage_order", 0)) return imp_unsupported(I, "storage_order 1");
  int64_t k[2], s[2], d[2], p[4];
  if (attr_ints(I, "kernel_shape", k, 2) != 2) return imp_error(I, "kernel_shape must have 2 values");
  if (!spatial(I, "strides", s) || !spatial(I, "dilations", d) || !pool_pads(I, x->shape + 2, k, s, d, p)) return false;
  int64_t os[4] = {x->shape[0], x->shape[1]}, extra[2] = {0};
  for (int i = 0; i < 2; i++) {
    int64_t span = x->shape[2 + i] + p[i] + p[i + 2] - ((k[i] - 1) * d[i] + 1);
    os[2 + i] = (attr_i(I, "ceil_mode", 0) ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
    if (attr_i(I, "ceil_mode", 0) && (os[2 + i] - 1) * s[i] >= x->shape[2 + i] + p[i]) os[2 + i]--;
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
    bool cip = attr_i(I, "count_include_pad", 0);
    a = kw(kw(a, "CT", cip ? 0 : p[0], -1), "CB", cip ? x->shape[2] + p[0] + p[2] : x->shape[2] + p[0], -1);
    a = kw(kw(a, "CL", cip ? 0 : p[1], -1), "CR", cip ? x->shape[3] + p[1] + p[3] : x->shape[3] + p[1], -1);
  }
  Val *o = net_out(I, 0, 4, os);
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
  char *all = idx("i", x->ndim), *n = flit((double)R.cnt);
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
  const char *post = !strcmp(kind, "mean")     ? xprintf("S[%s] / %s", sidx, flit((double)cnt))
                     : !strcmp(kind, "l2")     ? xprintf("sqrt(S[%s])", sidx)
                     : !strcmp(kind, "logsum") ? xprintf("log(S[%s])", sidx)
                                               : NULL;
  Val *o = net_out(I, 0, no, os);
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
  const char *k = imp_kernel(I, xprintf("reduce_%s", kind), xprintf("(X: %s) -> Y: %s {\n%s\n}", ty(x), ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

static bool op_reduce(Imp *I, const char *kind) {
  if (!attrs_known(I, "axes,keepdims,noop_with_empty_axes") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "a reduction of a constant");
  int64_t axes[HT_MAX_DIMS];
  int na = attr_ints(I, "axes", axes, HT_MAX_DIMS);
  Val *av = in(I, 1);
  if (av) {
    if (!(av = const_in(I, 1, "axes"))) return false;
    na = (int)val_numel(av) > HT_MAX_DIMS ? HT_MAX_DIMS : (int)val_numel(av);
    for (int i = 0; i < na; i++) axes[i] = (int64_t)av->c[i];
  }
  bool mask[HT_MAX_DIMS] = {0};
  if (na <= 0) {
    if (attr_i(I, "noop_with_empty_axes", 0)) return alias(I, x);
    for (int d = 0; d < x->ndim; d++) mask[d] = true;
  }
  for (int i = 0; i < na; i++) {
    int a = axis_of(I, axes[i], x->ndim);
    if (a < 0) return false;
    mask[a] = true;
  }
  return reduce(I, x, mask, attr_i(I, "keepdims", 1) != 0, kind);
}

static bool op_global_pool(Imp *I, const char *kind) {
  if (!attrs_known(I, "") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->ndim < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", x->ndim);
  bool mask[HT_MAX_DIMS] = {0};
  if (x->nhwc) { /* over H and W of [N, H, W, C]: [N, 1, 1, C], still NHWC */
    Val p = {.name = x->name, .dtype = OT_FLOAT, .ndim = 4, .shape = {x->shape[0], x->shape[2], x->shape[3], x->shape[1]}, .tex = x->tex};
    mask[1] = mask[2] = true;
    if (!reduce(I, &p, mask, true, kind)) return false;
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    int64_t logical[4] = {x->shape[0], x->shape[1], 1, 1};
    memcpy(o->shape, logical, sizeof logical);
    o->nhwc = true;
    return true;
  }
  for (int d = 2; d < x->ndim; d++) mask[d] = true;
  return reduce(I, x, mask, true, kind);
}

/* Softmax (LOG: LogSoftmax) over the axes from AXIS (opset < 13: all that follow; else one). */
static bool op_softmax(Imp *I, bool log_) {
  if (!attrs_known(I, "axis") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  int a = axis_of(I, attr_i(I, "axis", I->opset >= 13 ? -1 : 1), x->ndim ? x->ndim : 1);
  if (a < 0) return false;
  int r = x->ndim;
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = 0; d < r; d++) mask[d] = I->opset >= 13 ? d == a : d >= a;
  Reduced R = reduced_axes(x, mask);
  char *all = idx("i", r), *ridx = R.src, *where = R.where, *sd = R.kdims, *sidx = R.kept, *slhs = R.klhs;
  Val *o = net_out(I, 0, x->ndim, x->shape);
  char *body = xprintf("  tensor M: f32[%s]\n  tensor E: f32[%s]\n  tensor S: f32[%s]\n"
                       "  M[%s] max= X[%s] where %s\n  E[%s] = exp(X[%s] - M[%s])\n  S[%s] += E[%s] where %s\n",
                       sd, dims_text(x->shape, r), sd, slhs, ridx, where, all, all, sidx, slhs, ridx, where);
  body = log_ ? xprintf("%s  Y[%s] = X[%s] - M[%s] - log(S[%s])", body, all, all, sidx, sidx)
              : xprintf("%s  Y[%s] = E[%s] / S[%s]", body, all, all, sidx);
  const char *k = imp_kernel(I, log_ ? "log_softmax" : "softmax", xprintf("(X: %s) -> Y: %s {\n%s\n}", ty(x), ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* X's indices, as text, of the output point i0.. of a reshape to SHAPE, or NULL when the
 * dimensions do not pair up. Dimensions of extent 1 are dropped (index 0 in X); the others
 * pair up into groups of equal products in order, and within a group X's indices come from
 * the group's own flat index: a dimension split in several reads X at their row-major
 * combination, several merged into one divide it; no division by a stride outside the
 * group ([197, 1, 2304] -> [197, 1, 3, 768] reads X[i0, 0, i2 * 768 + i3]). */
static char *reshape_index(const Val *x, const int64_t *shape, int nd) {
  int in[HT_MAX_DIMS], out[HT_MAX_DIMS], ni = 0, no = 0;
  for (int d = 0; d < x->ndim; d++)
    if (x->shape[d] != 1) in[ni++] = d;
  for (int d = 0; d < nd; d++)
    if (shape[d] != 1) out[no++] = d;
  char *idxs[HT_MAX_DIMS];
  for (int d = 0; d < x->ndim; d++) idxs[d] = xstrdup("0");
  int a = 0, b = 0;
  while (a < ni || b < no) {
    if (a == ni || b == no) return NULL;
    int a1 = a, b1 = b;
    int64_t pa = x->shape[in[a1++]], pb = shape[out[b1++]];
    while (pa != pb) {
      if (pa < pb && a1 < ni) pa *= x->shape[in[a1++]];
      else if (pb < pa && b1 < no) pb *= shape[out[b1++]];
      else return NULL;
    }
    char *flat = NULL; /* the group's flat index over its output dimensions */
    for (int k = b; k < b1; k++)
      flat = flat ? xprintf("(%s) * %lld + i%d", flat, (long long)shape[out[k]], out[k]) : xprintf("i%d", out[k]);
    int64_t stride = 1;
    for (int k = a1 - 1; k >= a; k--) {
      int d = in[k];
      char *e = stride == 1 ? xprintf("%s", flat) : xprintf("(%s) / %lld", flat, (long long)stride);
      if (k > a) e = xprintf("(%s) %% %lld", e, (long long)x->shape[d]);
      idxs[d] = e;
      stride *= x->shape[d];
    }
    a = a1, b = b1;
  }
  char *acc = xstrdup("");
  for (int d = 0; d < x->ndim; d++) acc = xprintf("%s%s%s", acc, d ? ", " : "", idxs[d]);
  return x->ndim ? acc : xstrdup("0");
}

/* X reshaped to SHAPE (same number of elements): folded, an alias when equal, else a
 * kernel reading X at the same flat index (reshape_index: within groups of paired
 * dimensions where they pair up, else over the whole flat index). */
static bool reshape_to(Imp *I, Val *x, const int64_t *shape, int nd) {
  Val tmp = {.ndim = nd};
  memcpy(tmp.shape, shape, sizeof(int64_t) * (size_t)nd);
  if (val_numel(&tmp) != val_numel(x)) return imp_error(I, "cannot reshape %lld elements to %s", (long long)val_numel(x), ty(&tmp));
  if (x->c) {
    int64_t n = val_numel(x);
    double *c = vals(n);
    memcpy(c, x->c, sizeof(double) * (size_t)n);
    const_out(I, 0, x->dtype, nd, shape, c);
    return true;
  }
  if (nd == x->ndim && !memcmp(shape, x->shape, sizeof(int64_t) * (size_t)nd)) return alias(I, x);
  Val *o = net_out_like(I, 0, nd, shape, x);
  char *rhs = reshape_index(x, shape, nd);
  if (rhs) {
    rhs = xprintf("X[%s]", rhs);
  } else { /* the flat index of the output point, then X's index of the same flat index */
    char *flat = xstrdup("0");
    for (int d = 0; d < nd; d++) flat = d ? xprintf("(%s) * %lld + i%d", flat, (long long)shape[d], d) : xstrdup("i0");
    char *acc = xstrdup(""), *guard = xstrdup("");
    int64_t stride = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
      char *e = stride == 1 ? xprintf("(%s)", flat) : xprintf("(%s) / %lld", flat, (long long)stride);
      if (x->shape[d] == 1) e = xstrdup("0");
      else if (d > 0) e = xprintf("%s %% %lld", e, (long long)x->shape[d]);
      else guard = xprintf("%s < %lld", e, (long long)x->shape[0]); /* always true: for the checker */
      acc = xprintf("%s%s%s", e, *acc ? ", " : "", acc);
      stride *= x->shape[d];
    }
    if (x->ndim == 0) acc = xstrdup("0");
    rhs = *guard ? xprintf("%s ? X[%s] : %s", guard, acc, run_time_int(x) ? "0" : "0.0") : xprintf("X[%s]", acc);
  }
  const char *k = imp_kernel(I, "reshape", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = %s\n}", ty(x), ty(o), idx("i", nd), rhs));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

static bool op_reshape(Imp *I) {
  if (!attrs_known(I, "allowzero") || !one_output(I)) return false;
  Val *x = in(I, 0), *s = const_in(I, 1, "shape");
  if (!x || !s) return x ? false : imp_error(I, "input 1 is missing");
  int64_t shape[HT_MAX_DIMS];
  int nd = shape_from(I, s, shape), neg = -1;
  if (nd < 0) return false;
  int64_t known = 1;
  for (int d = 0; d < nd; d++) {
    if (shape[d] == 0 && !attr_i(I, "allowzero", 0)) {
      if (d >= x->ndim) return imp_error(I, "shape has 0 at dimension %d beyond the input's rank", d + 1);
      shape[d] = x->shape[d];
    }
    if (shape[d] == -1) {
      if (neg >= 0) return imp_error(I, "shape has two -1");
      neg = d;
    } else if (shape[d] < 1) {
      return imp_unsupported(I, "a dimension of %lld", (long long)shape[d]);
    } else {
      known *= shape[d];
    }
  }
  if (neg >= 0) shape[neg] = val_numel(x) / known;
  return reshape_to(I, x, shape, nd);
}

static bool op_flatten(Imp *I) {
  if (!attrs_known(I, "axis") || !one_output(I)) return false;
  Val *x = in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int a = (int)attr_i(I, "axis", 1);
  if (a < 0) a += x->ndim;
  if (a < 0 || a > x->ndim) return imp_error(I, "axis %d outside rank %d", a, x->ndim);
  int64_t s[2] = {1, 1};
  for (int d = 0; d < x->ndim; d++) s[d >= a] *= x->shape[d];
  return reshape_to(I, x, s, 2);
}

/* Squeeze/Unsqueeze: axes from the attribute (opset < 13) or input 2. */
static int axes_of(Imp *I, int64_t *axes) {
  int na = attr_ints(I, "axes", axes, HT_MAX_DIMS);
  if (in(I, 1)) {
    Val *a = const_in(I, 1, "axes");
    if (!a) return -2;
    na = (int)val_numel(a) > HT_MAX_DIMS ? HT_MAX_DIMS : (int)val_numel(a);
    for (int i = 0; i < na; i++) axes[i] = (int64_t)a->c[i];
  }
  return na;
}

static bool op_squeeze(Imp *I, bool un) {
  if (!attrs_known(I, "axes") || !one_output(I)) return false;
  Val *x = in(I, 0);
  int64_t axes[HT_MAX_DIMS], shape[HT_MAX_DIMS];
  int na = x ? axes_of(I, axes) : -2, nd = 0;
  if (!x) return imp_error(I, "input 1 is missing");
  if (na == -2) return false;
  if (un) {
    int r = x->ndim + na;
    if (na < 0 || r > HT_MAX_DIMS) return imp_error(I, "Unsqueeze needs axes (at most 8 dimensions)");
    bool ins[HT_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
      int a = axis_of(I, axes[i], r);
      if (a < 0) return false;
      ins[a] = true;
    }
    for (int d = 0, k = 0; d < r; d++) shape[nd++] = ins[d] ? 1 : x->shape[k++];
  } else {
    bool drop[HT_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
      int a = axis_of(I, axes[i], x->ndim);
      if (a < 0) return false;
      if (x->shape[a] != 1) return imp_error(I, "axis %d has size %lld, not 1", a, (long long)x->shape[a]);
      drop[a] = true;
    }
    for (int d = 0; d < x->ndim; d++)
      if (!(na < 0 ? x->shape[d] == 1 : drop[d])) shape[nd++] = x->shape[d];
  }
  return reshape_to(I, x, shape, nd);
}

static bool op_transpose(Imp *I) {
  if (!attrs_known(I, "perm") || !one_output(I)) return false;
  Val *x = in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int r = x->ndim;
  int64_t perm[HT_MAX_DIMS], os[HT_MAX_DIMS];
  int np = attr_ints(I, "perm", perm, HT_MAX_DIMS);
  if (np < 0)
    for (int d = 0; d < r; d++) perm[d] = r - 1 - d;
  else if (np != r) return imp_error(I, "perm has %d values for rank %d", np, r);
  bool seen[HT_MAX_DIMS] = {0};
  for (int d = 0; d < r; d++) {
    if (perm[d] < 0 || perm[d] >= r || seen[perm[d]]) return imp_error(I, "perm is not a permutation");
    seen[perm[d]] = true;
    os[d] = x->shape[perm[d]];
  }
  if (x->c) {
    Val tmp = {.ndim = r};
    memcpy(tmp.shape, os, sizeof os);
    int64_t n = val_numel(x), ix[HT_MAX_DIMS];
    double *c = vals(n);
    for (int64_t i = 0; i < n; i++) {
      int64_t rem = i, src = 0;
      for (int d = r - 1; d >= 0; d--) ix[d] = rem % os[d], rem /= os[d];
      int64_t xi[HT_MAX_DIMS];
      for (int d = 0; d < r; d++) xi[perm[d]] = ix[d];
      for (int d = 0; d < r; d++) src = src * x->shape[d] + xi[d];
      c[i] = x->c[src];
    }
    const_out(I, 0, x->dtype, r, os, c);
    return true;
  }
  char *acc = xstrdup("");
  int64_t inv[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) inv[perm[d]] = d;
  for (int d = 0; d < r; d++) acc = xprintf("%s%si%lld", acc, d ? ", " : "", (long long)inv[d]);
  Val *o = net_out(I, 0, r, os);
  const char *k = imp_kernel(I, "transpose", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(o), idx("i", r), acc));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

static bool concat_gen(Imp *I, Val **x, int n, int a, const int64_t *os);

static bool op_concat(Imp *I) {
  if (!attrs_known(I, "axis") || !one_output(I)) return false;
  int n = nin(I);
  Val **x = xalloc(sizeof(Val *) * (size_t)(n + 1));
  bool all_const = true;
  for (int k = 0; k < n; k++) {
    if (!(x[k] = in(I, k))) return imp_error(I, "input %d is missing", k + 1);
    all_const &= x[k]->c != NULL;
  }
  if (n < 1) return imp_error(I, "no inputs");
  int r = x[0]->ndim, a = axis_of(I, attr_i(I, "axis", I->opset < 4 ? 1 : 0), r); /* Concat-1: 1 */
  if (a < 0) return false;
  int64_t os[HT_MAX_DIMS];
  memcpy(os, x[0]->shape, sizeof os);
  os[a] = 0;
  for (int k = 0; k < n; k++) {
    if (x[k]->ndim != r) return imp_error(I, "inputs of different ranks");
    for (int d = 0; d < r; d++)
      if (d != a && x[k]->shape[d] != x[0]->shape[d]) return imp_error(I, "input %d's dimension %d differs", k + 1, d + 1);
    os[a] += x[k]->shape[a];
  }
  if (all_const) {
    Val tmp = {.ndim = r};
    memcpy(tmp.shape, os, sizeof os);
    int64_t total = val_numel(&tmp), outer = 1, inner = 1, pos = 0;
    for (int d = 0; d < a; d++) outer *= os[d];
    for (int d = a + 1; d < r; d++) inner *= os[d];
    double *c = vals(total);
    for (int64_t o = 0; o < outer; o++)
      for (int k = 0; k < n; k++) {
        int64_t m = x[k]->shape[a] * inner;
        memcpy(c + pos, x[k]->c + o * m, sizeof(double) * (size_t)m);
        pos += m;
      }
    const_out(I, 0, x[0]->dtype, r, os, c);
    return true;
  }
  /* channels last when an input is NHWC (the channel axis 1 is axis 3 there) */
  bool nhwc = false;
  for (int k = 0; k < n; k++) nhwc |= x[k]->nhwc;
  if (nhwc && r == 4) {
    static const int phys[4] = {0, 3, 1, 2};
    for (int k = 0; k < n; k++) x[k] = ew_nhwc_input(I, x[k]);
    int64_t ps[4] = {os[0], os[2], os[3], os[1]};
    if (!concat_gen(I, x, n, phys[a], ps)) return false;
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    memcpy(o->shape, os, sizeof(int64_t) * 4);
    o->nhwc = true;
    return true;
  }
  return concat_gen(I, x, n, a, os);
}

/* The run-time Concat of X[0..N) along axis A into shape OS. */
static bool concat_gen(Imp *I, Val **x, int n, int a, const int64_t *os) {
  int r = x[0]->ndim;
  char *params = xstrdup(""), *args = xstrdup(""), *e = xstrdup("");
  int64_t off = 0;
  for (int k = 0; k < n; k++) {
    if (run_time_int(x[k])) x[k] = int_as_f32(I, x[k]); /* the result: integers held as f32 (int_result) */
    if (!x[k]->c && x[k]->dtype != OT_FLOAT && x[k]->dtype != OT_BOOL && !x[k]->fint)
      return imp_unsupported(I, "input %d is not float", k + 1);
    char *acc = xstrdup("");
    for (int d = 0; d < r; d++)
      acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? (off ? xprintf("i%d - %lld", d, (long long)off) : xprintf("i%d", d)) : xprintf("i%d", d));
    params = xprintf("%s%sX%d: %s", params, k ? ", " : "", k, ty(x[k]));
    args = xprintf("%s%s%s", args, k ? ", " : "", imp_tensor(I, x[k]));
    off += x[k]->shape[a];
    char *cond = xprintf("i%d >= %lld && i%d < %lld", a, (long long)(off - x[k]->shape[a]), a, (long long)off);
    e = k == n - 1 ? xprintf("%s%s(%s ? X%d[%s] : 0.0)%s", e, "", cond, k, acc, "") : xprintf("%s%s ? X%d[%s] : ", e, cond, k, acc);
  }
  Val *o = net_out(I, 0, r, os);
  const char *kn = imp_kernel(I, "concat", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, ty(o), idx("i", r), e));
  imp_call(I, o->tex, kn, args);
  return true;
}

/* Gemm: Y = alpha * A' B' + beta * C. */
static bool op_gemm(Imp *I) {
  if (!attrs_known(I, "alpha,beta,transA,transB") || !one_output(I)) return false;
  Val *a = float_in(I, 0), *b = a ? float_in(I, 1) : NULL, *c = in(I, 2);
  if (!b) return false;
  if (a->ndim != 2 || b->ndim != 2) return imp_error(I, "A and B must be matrices");
  bool ta = attr_i(I, "transA", 0), tb = attr_i(I, "transB", 0);
  double alpha = attr_f(I, "alpha", 1), beta = attr_f(I, "beta", 1);
  int64_t m = a->shape[ta], k = a->shape[!ta], n = b->shape[!tb];
  if (b->shape[tb] != k) return imp_error(I, "A' is [%lld, %lld] but B' has %lld rows", (long long)m, (long long)k, (long long)b->shape[tb]);
  int64_t os[2] = {m, n};
  Val *o = net_out(I, 0, 2, os);
  if (!ta && b->c && !a->c) {
    /* dense with [K, N] weights: B transposed (and scaled by alpha) at import */
    Val *w = xalloc(sizeof *w);
    *w = (Val){.name = b->name, .dtype = OT_FLOAT, .ndim = 2, .shape = {k, n}, .c = vals(k * n)};
    for (int64_t i = 0; i < k; i++)
      for (int64_t j = 0; j < n; j++) w->c[i * n + j] = (float)(alpha * b->c[tb ? j * k + i : i * n + j]);
    const char *na = imp_tensor(I, a);
    imp_call(I, o->tex, "dense", xprintf("%s, %s", na, imp_tensor(I, w)));
    alpha = 1;
  } else {
    const char *kn = imp_kernel(I, "gemm", xprintf("(A: %s, B: %s) -> Y: %s {\n  Y[i, j] += A[%s] * B[%s] where k in 0..%lld\n}",
                                                   ty(a), ty(b), ty(o), ta ? "k, i" : "i, k", tb ? "j, k" : "k, j", (long long)k));
    const char *na = imp_tensor(I, a), *nb = imp_tensor(I, b);
    imp_call(I, o->tex, kn, xprintf("%s, %s", na, nb));
  }
  /* alpha, then beta * C: values of the same ONNX name (the latest is the output) */
  if (alpha != 1) {
    Val *xs[1] = {o};
    if (!ew(I, "scale", xs, 1, xprintf("%s * $0", flit((float)alpha)))) return false;
    o = VEC_AT(I->vals, I->vals.len - 1);
  }
  if (c && beta != 0) {
    if (c->ndim == 1 && c->shape[0] == n && beta == 1) {
      Val *s = net_out(I, 0, 2, os);
      imp_call(I, s->tex, "bias_add_2d", xprintf("%s, %s", o->tex, imp_tensor(I, c)));
    } else {
      Val *xs[2] = {o, c};
      if (!ew_to(I, "gemm_bias", xs, 2, beta == 1 ? "$0 + $1" : xprintf("$0 + %s * $1", flit((float)beta)), os, 2)) return false;
    }
  }
  return true;
}

/* MatMul: numpy's matmul (batched, broadcasting, 1-D operands). */
static bool op_matmul(Imp *I) {
  if (!attrs_known(I, "") || !one_output(I)) return false;
  Val *a = float_in(I, 0), *b = a ? float_in(I, 1) : NULL;
  if (!b) return false;
  if (a->ndim < 1 || b->ndim < 1) return imp_error(I, "a scalar operand");
  int ra = a->ndim, rb = b->ndim;
  int64_t k = a->shape[ra - 1], kb = rb == 1 ? b->shape[0] : b->shape[rb - 2];
  if (k != kb) return imp_error(I, "inner dimensions %lld and %lld differ", (long long)k, (long long)kb);
  int64_t batch[HT_MAX_DIMS], os[HT_MAX_DIMS];
  int nb = 0;
  if (!broadcast(I, a->shape, ra > 2 ? ra - 2 : 0, b->shape, rb > 2 ? rb - 2 : 0, batch, &nb)) return false;
  int no = nb;
  memcpy(os, batch, sizeof(int64_t) * (size_t)nb);
  if (ra > 1) os[no++] = a->shape[ra - 2];
  if (rb > 1) os[no++] = b->shape[rb - 1];
  Val *o = net_out(I, 0, no, os);
  if (ra == 2 && rb == 2 && !a->c) {
    const char *na = imp_tensor(I, a);
    imp_call(I, o->tex, "dense", xprintf("%s, %s", na, imp_tensor(I, b)));
    return true;
  }
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
  ia = xprintf("%s%sk", ia, ra > 1 ? "i, " : "");
  ib = xprintf("%sk%s", ib, rb > 1 ? ", j" : "");
  const char *kn = imp_kernel(I, "matmul", xprintf("(A: %s, B: %s) -> Y: %s {\n  Y[%s] += A[%s] * B[%s] where k in 0..%lld\n}",
                                                   ty(a), ty(b), ty(o), lhs, ia, ib, (long long)k));
  const char *ta = imp_tensor(I, a), *tb = imp_tensor(I, b);
  imp_call(I, o->tex, kn, xprintf("%s, %s", ta, tb));
  return true;
}

static bool op_batch_norm(Imp *I) {
  if (!attrs_known(I, "epsilon,momentum,training_mode,spatial,is_test")) return false;
  if (attr_i(I, "training_mode", 0)) return imp_unsupported(I, "training_mode 1 (inference only)");
  if (attr_i(I, "spatial", 1) != 1) return imp_unsupported(I, "spatial 0 (statistics per element, BatchNormalization-7)");
  if (!one_output(I)) return false;
  Val *x = float_in(I, 0), *p[4];
  if (!x) return false;
  if (x->ndim < 2) return imp_error(I, "the input has no channel axis");
  for (int i = 0; i < 4; i++) {
    if (!(p[i] = float_in(I, i + 1))) return false;
    if (p[i]->ndim != 1 || p[i]->shape[0] != x->shape[1]) return imp_error(I, "input %d is not [%lld]", i + 2, (long long)x->shape[1]);
  }
  double eps = (float)attr_f(I, "epsilon", 1e-5);
  if (x->ndim == 4 && p[0]->c && p[1]->c && p[2]->c && p[3]->c) {
    /* folded: S = gamma / sqrt(var + eps), B = beta - mean * S */
    int64_t c = x->shape[1];
    Val *s = xalloc(sizeof *s), *b = xalloc(sizeof *b);
    *s = (Val){.name = xprintf("%s_scale", p[0]->name), .dtype = OT_FLOAT, .ndim = 1, .shape = {c}, .c = vals(c)};
    *b = (Val){.name = xprintf("%s_shift", p[1]->name), .dtype = OT_FLOAT, .ndim = 1, .shape = {c}, .c = vals(c)};
    for (int64_t i = 0; i < c; i++) {
      s->c[i] = (float)(p[0]->c[i] / sqrt(p[3]->c[i] + eps));
      b->c[i] = (float)(p[1]->c[i] - p[2]->c[i] * s->c[i]);
    }
    Val *o = net_out(I, 0, 4, x->shape);
    o->nhwc = x->nhwc;
    const char *tx = x->nhwc ? x->tex : imp_tensor(I, x), *ts = imp_tensor(I, s), *tb = imp_tensor(I, b);
    imp_call(I, o->tex, x->nhwc ? "batch_norm" : "batch_norm_nchw", xprintf("%s, %s, %s", tx, ts, tb));
    return true;
  }
  char *all = idx("i", x->ndim);
  Val *o = net_out(I, 0, x->ndim, x->shape);
  char *cty = xprintf("f32[%lld]", (long long)x->shape[1]);
  const char *kn = imp_kernel(I, "batch_norm", xprintf("(X: %s, S: %s, B: %s, M: %s, V: %s) -> Y: %s {\n"
                                                       "  Y[%s] = (X[%s] - M[i1]) / sqrt(V[i1] + %s) * S[i1] + B[i1]\n}",
                                                       ty(x), cty, cty, cty, cty, ty(o), all, all, flit(eps)));
  const char *t[4];
  for (int i = 0; i < 4; i++) t[i] = imp_tensor(I, p[i]);
  const char *tx = imp_tensor(I, x);
  imp_call(I, o->tex, kn, xprintf("%s, %s, %s, %s, %s", tx, t[0], t[1], t[2], t[3]));
  return true;
}

/* Gather of run-time X along axis A by the constant indices IX (wrapped: IV, taken over)
 * of any rank or count: the indices become a weight, exact in f32, that the kernel reads
 * (clamped: the bounds checker's proof; they are in range already). OS: the output shape,
 * X's dims before A, IX's, X's after A. */
static bool gather_table(Imp *I, Val *x, int a, const Val *ix, double *iv, const int64_t *os) {
  int r = x->ndim, no = r - 1 + ix->ndim;
  if (x->shape[a] > (1 << 24)) return free(iv), imp_unsupported(I, "run-time Gather on an axis of more than 2^24 elements");
  Val *t = xalloc(sizeof *t);
  *t = (Val){.name = xprintf("%s_indices", ix->name), .dtype = OT_FLOAT, .ndim = ix->ndim, .c = iv};
  memcpy(t->shape, ix->shape, sizeof(int64_t) * (size_t)ix->ndim);
  char *sel = xstrdup(""), *acc = xstrdup("");
  for (int d = 0; d < ix->ndim; d++) sel = xprintf("%s%si%d", sel, d ? ", " : "", a + d);
  sel = xprintf("clamp(i32(I[%s]), 0, %lld)", sel, (long long)x->shape[a] - 1);
  for (int d = 0, od = 0; d < r; d++) {
    acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? sel : xprintf("i%d", od));
    od += d == a ? ix->ndim : 1;
  }
  Val *o = net_out(I, 0, no, os);
  const char *kn = imp_kernel(I, "gather", xprintf("(X: %s, I: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(t), ty(o),
                                                   idx("i", no), acc));
  const char *tx = imp_tensor(I, x);
  imp_call(I, o->tex, kn, xprintf("%s, %s", tx, imp_tensor(I, t)));
  return true;
}

/* Gather of X (a tensor of the network or a weight) along axis A by run-time integer
 * indices IX (token ids into an embedding): negative ones counted from the end, any index
 * clamped into the axis (ONNX leaves one outside undefined; no read leaves X). */
static bool gather_run_time(Imp *I, Val *x, int a, Val *ix) {
  int r = x->ndim, no = r - 1 + ix->ndim;
  if (no > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
  if (ix->ndim == 0) return imp_unsupported(I, "a scalar run-time index");
  int64_t os[HT_MAX_DIMS], n = x->shape[a];
  int k = 0;
  for (int d = 0; d < a; d++) os[k++] = x->shape[d];
  for (int d = 0; d < ix->ndim; d++) os[k++] = ix->shape[d];
  for (int d = a + 1; d < r; d++) os[k++] = x->shape[d];
  char *iacc = xstrdup("");
  for (int d = 0; d < ix->ndim; d++) iacc = xprintf("%s%si%d", iacc, d ? ", " : "", a + d);
  const char *ie = int_at(ix, "Ix", iacc); /* integers held as f32: exact */
  char *sel = xprintf("clamp(%s < 0 ? %s + %lld : %s, 0, %lld)", ie, ie, (long long)n, ie, (long long)(n - 1));
  char *acc = xstrdup("");
  for (int d = 0, od = 0; d < r; d++) {
    acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? sel : xprintf("i%d", od));
    od += d == a ? ix->ndim : 1;
  }
  Val *o = net_out_like(I, 0, no, os, x);
  const char *kn = imp_kernel(I, "gather", xprintf("(X: %s, Ix: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(ix), ty(o),
                                                   idx("i", no), acc));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), ix->tex));
  return true;
}

static bool op_gather(Imp *I) {
  if (!attrs_known(I, "axis") || !one_output(I)) return false;
  Val *x = in(I, 0), *ix = in(I, 1);
  if (x && ix && !ix->c && (run_time_int(ix) || ix->fint)) {
    int a = axis_of(I, attr_i(I, "axis", 0), x->ndim);
    return a >= 0 && gather_run_time(I, x, a, ix);
  }
  ix = x ? const_in(I, 1, "indices") : NULL;
  if (!x || !ix) return x ? false : imp_error(I, "input 1 is missing");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  int no = r - 1 + ix->ndim;
  if (no > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
  int64_t os[HT_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < a; d++) os[k++] = x->shape[d];
  for (int d = 0; d < ix->ndim; d++) os[k++] = ix->shape[d];
  for (int d = a + 1; d < r; d++) os[k++] = x->shape[d];
  int64_t ni = val_numel(ix);
  double *iv = vals(ni); /* negative indices wrapped (ix itself may feed other nodes) */
  for (int64_t i = 0; i < ni; i++) {
    iv[i] = ix->c[i] < 0 ? ix->c[i] + (double)x->shape[a] : ix->c[i];
    if (iv[i] < 0 || iv[i] >= (double)x->shape[a])
      return free(iv), imp_error(I, "index %.0f outside axis %d of size %lld", ix->c[i], a, (long long)x->shape[a]);
  }
  if (x->c) {
    int64_t outer = 1, inner = 1, pos = 0;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < r; d++) inner *= x->shape[d];
    double *c = vals(outer * ni * inner);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < ni; i++, pos += inner)
        memcpy(c + pos, x->c + (o * x->shape[a] + (int64_t)iv[i]) * inner, sizeof(double) * (size_t)inner);
    free(iv);
    const_out(I, 0, x->dtype, no, os, c);
    return true;
  }
  if (ix->ndim > 1 || ni > 64) return gather_table(I, x, a, ix, iv, os);
  /* the index at output axis a: a literal (scalar) or a chain of choices */
  char *sel = ix->ndim == 0 ? xprintf("%.0f", iv[0]) : xstrdup("");
  if (ix->ndim == 1) {
    for (int64_t i = ni - 1; i >= 0; i--)
      sel = i == ni - 1 ? xprintf("%.0f", iv[i]) : xprintf("i%d == %lld ? %.0f : %s", a, (long long)i, iv[i], sel);
    sel = xprintf("(%s)", sel);
  }
  free(iv);
  char *acc = xstrdup("");
  for (int d = 0, od = 0; d < r; d++) {
    acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? sel : xprintf("i%d", od));
    od += d == a ? ix->ndim : 1;
  }
  if (no == 0) os[no++] = 1;
  Val *o = net_out_like(I, 0, r - 1 + ix->ndim, os, x);
  const char *kn = imp_kernel(I, "gather", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(o), idx("i", no), acc));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* GatherND (opset 11; batch_dims from 12) with constant indices: each index tuple of the
 * last indices axis picks X's element or slice after the batch axes. Folded for a constant
 * X, else a kernel reading, per indexed axis, a table of the tuples' (wrapped) indices. */
static bool op_gather_nd(Imp *I) {
  if (!attrs_known(I, "batch_dims") || !one_output(I)) return false;
  Val *x = in(I, 0), *ix = x ? const_in(I, 1, "indices") : NULL;
  if (!x || !ix) return x ? false : imp_error(I, "input 1 is missing");
  int r = x->ndim, q = ix->ndim, b = (int)attr_i(I, "batch_dims", 0);
  int k = q ? (int)ix->shape[q - 1] : 0;
  if (q < 1 || b < 0 || b >= q || b >= r || k < 1 || b + k > r)
    return imp_error(I, "indices of rank %d (last axis %d) and batch_dims %d do not fit data of rank %d", q, k, b, r);
  for (int d = 0; d < b; d++)
    if (ix->shape[d] != x->shape[d]) return imp_error(I, "batch axis %d: indices %lld, data %lld", d, (long long)ix->shape[d], (long long)x->shape[d]);
  int no = q - 1 + r - b - k;
  if (no > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
  int64_t os[HT_MAX_DIMS], tuples = 1, inner = 1;
  for (int d = 0; d < q - 1; d++) os[d] = ix->shape[d], tuples *= ix->shape[d];
  for (int d = b + k; d < r; d++) os[q - 1 + d - b - k] = x->shape[d], inner *= x->shape[d];
  int64_t per_batch = 1;
  for (int d = b; d < q - 1; d++) per_batch *= ix->shape[d];
  double *tab = vals(tuples * k); /* tab[m * tuples + t]: axis b + m of tuple t, wrapped */
  for (int64_t t = 0; t < tuples; t++)
    for (int m = 0; m < k; m++) {
      double v = ix->c[t * k + m], n = (double)x->shape[b + m];
      v = v < 0 ? v + n : v;
      if (v < 0 || v >= n) return free(tab), imp_error(I, "index %.0f outside axis %d of size %.0f", ix->c[t * k + m], b + m, n);
      tab[m * tuples + t] = v;
    }
  if (no == 0) os[no++] = 1;
  if (x->c) {
    int64_t below = 1; /* elements of X per batch index */
    for (int d = b; d < r; d++) below *= x->shape[d];
    double *c = vals(tuples * inner);
    for (int64_t t = 0; t < tuples; t++) {
      int64_t off = 0; /* the tuple's element among X's axes b .. b + k - 1 */
      for (int m = 0; m < k; m++) off = off * x->shape[b + m] + (int64_t)tab[m * tuples + t];
      memcpy(c + t * inner, x->c + (t / per_batch) * below + off * inner, sizeof(double) * (size_t)inner);
    }
    free(tab);
    const_out(I, 0, x->dtype, no, os, c);
    return true;
  }
  if (tuples > 1 && (int64_t)1 << 24 < tuples) return free(tab), imp_unsupported(I, "more than 2^24 index tuples");
  char *lead = idx("i", q - 1 ? q - 1 : 1), *acc = xstrdup(""), *params = xprintf("X: %s", ty(x)), *args = xstrdup(imp_tensor(I, x));
  for (int d = 0; d < b; d++) acc = xprintf("%s%si%d", acc, d ? ", " : "", d);
  for (int m = 0; m < k; m++) {
    const char *sel;
    if (q == 1) sel = xprintf("%.0f", tab[m]); /* one tuple: literals */
    else {
      Val *t = xalloc(sizeof *t);
      *t = (Val){.name = xprintf("%s_nd%d", I->node->output[0], m), .dtype = OT_FLOAT, .ndim = q - 1, .c = vals(tuples)};
      memcpy(t->shape, ix->shape, sizeof(int64_t) * (size_t)(q - 1));
      memcpy(t->c, tab + m * tuples, sizeof(double) * (size_t)tuples);
      params = xprintf("%s, T%d: %s", params, m, ty(t));
      args = xprintf("%s, %s", args, imp_tensor(I, t));
      sel = xprintf("clamp(i32(T%d[%s]), 0, %lld)", m, lead, (long long)x->shape[b + m] - 1);
    }
    acc = xprintf("%s%s%s", acc, *acc ? ", " : "", sel);
  }
  for (int d = b + k, od = q - 1; d < r; d++, od++) acc = xprintf("%s%si%d", acc, *acc ? ", " : "", od);
  free(tab);
  Val *o = net_out_like(I, 0, no, os, x);
  const char *kn = imp_kernel(I, "gather_nd", xprintf("(%s) -> Y: %s {\n  Y[%s] = X[%s]\n}", params, ty(o), idx("i", no), acc));
  imp_call(I, o->tex, kn, args);
  return true;
}

/* Output K: X[start + i * step] for i over OS (folded for a constant X). */
static bool slice_out(Imp *I, Val *x, int k, const int64_t *start, const int64_t *step, const int64_t *os) {
  int r = x->ndim;
  if (x->c) {
    Val tmp = {.ndim = r};
    memcpy(tmp.shape, os, sizeof(int64_t) * (size_t)r);
    int64_t total = val_numel(&tmp), ix[HT_MAX_DIMS];
    double *c = vals(total);
    for (int64_t i = 0; i < total; i++) {
      int64_t rem = i, src = 0;
      for (int d = r - 1; d >= 0; d--) ix[d] = rem % os[d], rem /= os[d];
      for (int d = 0; d < r; d++) src = src * x->shape[d] + start[d] + ix[d] * step[d];
      c[i] = x->c[src];
    }
    const_out(I, k, x->dtype, r, os, c);
    return true;
  }
  char *acc = xstrdup("");
  for (int d = 0; d < r; d++) {
    char *e = step[d] == 1 ? xprintf("i%d", d) : xprintf("i%d * %lld", d, (long long)step[d]);
    if (start[d]) e = xprintf("%s + %lld", e, (long long)start[d]);
    acc = xprintf("%s%s%s", acc, d ? ", " : "", e);
  }
  Val *o = net_out(I, k, r, os);
  const char *kn = imp_kernel(I, "slice", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(o), idx("i", r), acc));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* Split: along axis into the sizes of input 2 (opset 13), the split attribute (11) or
 * num_outputs / the number of outputs equal parts (the last one smaller). */
static bool op_split(Imp *I) {
  if (!attrs_known(I, "axis,split,num_outputs")) return false;
  Val *x = in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", 0), r), n = (int)I->node->n_output;
  if (a < 0) return false;
  int64_t sizes[64];
  if (n > 64) return imp_unsupported(I, "more than 64 outputs");
  int ns = attr_ints(I, "split", sizes, 64);
  if (in(I, 1)) {
    Val *sv = const_in(I, 1, "split");
    if (!sv) return false;
    ns = (int)val_numel(sv) < 64 ? (int)val_numel(sv) : 64;
    for (int i = 0; i < ns; i++) sizes[i] = (int64_t)sv->c[i];
  }
  if (ns < 0) {
    int64_t part = (x->shape[a] + n - 1) / n;
    for (int i = 0; i < n; i++) sizes[i] = i < n - 1 ? part : x->shape[a] - part * (n - 1);
    ns = n;
  }
  int64_t total = 0;
  for (int i = 0; i < ns; i++) total += sizes[i];
  if (ns != n || total != x->shape[a]) return imp_error(I, "the split sizes do not add up to axis %d (%lld)", a, (long long)x->shape[a]);
  int64_t start[HT_MAX_DIMS] = {0}, step[HT_MAX_DIMS], os[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) step[d] = 1, os[d] = x->shape[d];
  for (int k = 0; k < n; k++) {
    os[a] = sizes[k];
    if (sizes[k] < 1) return imp_unsupported(I, "an empty part");
    if (*I->node->output[k] && !slice_out(I, x, k, start, step, os)) return false;
    start[a] += sizes[k];
  }
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
  Val *o = net_out(I, k, x->ndim, os);
  char *n = flit((double)R.cnt);
  char *body = xprintf("  tensor S: f32[%s]\n  S[%s] += X[%s] where %s\n", R.kdims, R.klhs, R.src, R.where);
  if (k == 1) body = xprintf("%s  Y[%s] = S[%s] / %s", body, lhs, R.kept, n);
  else
    body = xprintf("%s  tensor Mu: f32[%s]\n  tensor V: f32[%s]\n  Mu[%s] = S[%s] / %s\n"
                   "  V[%s] += (X[%s] - Mu[%s]) * (X[%s] - Mu[%s]) where %s\n  Y[%s] = 1.0 / sqrt(V[%s] / %s + %s)",
                   body, R.kdims, R.kdims, R.klhs, R.kept, n, R.klhs, R.src, R.kept, R.src, R.kept, R.where, lhs, R.kept, n, eps);
  const char *kn = imp_kernel(I, k == 1 ? "layer_norm_mean" : "layer_norm_inv_std",
                              xprintf("(X: %s) -> Y: %s {\n%s\n}", ty(x), ty(o), body));
  imp_call(I, o->tex, kn, imp_tensor(I, (Val *)x));
}

/* LayerNormalization (opset 17): over the axes from `axis`, times Scale plus B; outputs 2
 * and 3 (Mean, InvStdDev) when the graph uses them. */
static bool op_layer_norm(Imp *I) {
  if (!attrs_known(I, "axis,epsilon,stash_type")) return false;
  Val *x = float_in(I, 0), *sc = x ? float_in(I, 1) : NULL, *b = in(I, 2);
  if (!sc || (b && !(b = float_in(I, 2)))) return false;
  if (x->c) return imp_unsupported(I, "a constant input");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", -1), r);
  if (a < 0) return false;
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = a; d < r; d++) mask[d] = true;
  Val *o = net_out(I, 0, r, x->shape);
  char *params = xprintf("X: %s, Sc: %s", ty(x), ty(sc)), *args = xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, sc));
  const char *bterm = "";
  if (b) {
    params = xprintf("%s, B: %s", params, ty(b));
    args = xprintf("%s, %s", args, imp_tensor(I, b));
    bterm = xprintf(" + %s", baccess("B", b, x->shape, r));
  }
  char *eps = flit((float)attr_f(I, "epsilon", 1e-5));
  char *body = norm_body(x, mask, eps, xprintf(" * %s%s", baccess("Sc", sc, x->shape, r), bterm));
  const char *kn = imp_kernel(I, "layer_norm", xprintf("(%s) -> Y: %s {\n%s\n}", params, ty(o), body));
  imp_call(I, o->tex, kn, args);
  for (int k = 1; k < 3 && (size_t)k < I->node->n_output; k++)
    if (*I->node->output[k]) layer_norm_stat(I, x, mask, eps, k);
  return true;
}

/* Slice (opset >= 10: starts, ends, axes, steps as inputs). */
static Val *ints_val(Imp *I, const char *name) {
  int64_t v[HT_MAX_DIMS];
  int n = attr_ints(I, name, v, HT_MAX_DIMS);
  if (n < 0) return NULL;
  Val *c = xalloc(sizeof *c);
  *c = (Val){.name = name, .dtype = OT_INT64, .ndim = 1, .shape = {n}, .c = vals(n)};
  for (int i = 0; i < n; i++) c->c[i] = (double)v[i];
  return c;
}

static bool op_slice(Imp *I) {
  if (!attrs_known(I, I->opset < 10 ? "starts,ends,axes" : "") || !one_output(I)) return false;
  Val *x = in(I, 0), *st, *en, *ax, *sp = NULL;
  if (I->opset < 10) { /* Slice-1: starts, ends and axes are attributes, no steps */
    st = ints_val(I, "starts"), en = ints_val(I, "ends"), ax = ints_val(I, "axes");
    if (!st || !en) return imp_error(I, "no starts or ends");
    if (val_numel(st) != val_numel(en) || (ax && val_numel(ax) != val_numel(st)))
      return imp_error(I, "starts, ends and axes of different lengths");
    if (!x) return imp_error(I, "input 1 is missing");
  } else {
    st = const_in(I, 1, "starts"), en = st ? const_in(I, 2, "ends") : NULL, ax = in(I, 3), sp = in(I, 4);
    if (!x || !en) return x ? false : imp_error(I, "input 1 is missing");
    if ((ax && !(ax = const_in(I, 3, "axes"))) || (sp && !(sp = const_in(I, 4, "steps")))) return false;
  }
  int r = x->ndim;
  int64_t start[HT_MAX_DIMS], step[HT_MAX_DIMS], os[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) start[d] = 0, step[d] = 1, os[d] = x->shape[d];
  int64_t n = val_numel(st);
  for (int64_t i = 0; i < n; i++) {
    int a = axis_of(I, ax ? (int64_t)ax->c[i] : i, r);
    if (a < 0) return false;
    int64_t dim = x->shape[a], s = sp ? (int64_t)sp->c[i] : 1;
    double b = st->c[i], e = en->c[i];
    if (s == 0) return imp_error(I, "a step of 0");
    if (b < 0) b += (double)dim;
    if (e < 0) e += (double)dim;
    if (s > 0) {
      b = fmin(fmax(b, 0), (double)dim);
      e = fmin(fmax(e, 0), (double)dim);
    } else {
      b = fmin(fmax(b, 0), (double)dim - 1);
      e = fmin(fmax(e, -1), (double)dim - 1);
    }
    int64_t len = s > 0 ? (int64_t)ceil((e - b) / (double)s) : (int64_t)ceil((b - e) / (double)-s);
    if (len < 1 && !x->c) return imp_unsupported(I, "an empty slice of a run-time tensor");
    if (len < 1) len = 0; /* shape arithmetic: shape[3:] of a rank-3 shape */
    start[a] = (int64_t)b, step[a] = s, os[a] = len;
  }
  return slice_out(I, x, 0, start, step, os);
}

static bool op_expand(Imp *I) {
  Val *x = in(I, 0), *s = const_in(I, 1, "shape");
  if (!x || !s || !one_output(I)) return x ? false : imp_error(I, "input 1 is missing");
  int64_t shape[HT_MAX_DIMS];
  int nd = shape_from(I, s, shape);
  if (nd < 0) return false;
  if (x->c) {
    int no;
    int64_t os[HT_MAX_DIMS];
    if (!broadcast(I, x->shape, x->ndim, shape, nd, os, &no) || !shape_ok(I, os, no)) return false;
    Val tmp = {.ndim = no};
    memcpy(tmp.shape, os, sizeof os);
    int64_t total = val_numel(&tmp), ix[HT_MAX_DIMS];
    double *c = vals(total);
    for (int64_t i = 0; i < total; i++) {
      int64_t rem = i;
      for (int d = no - 1; d >= 0; d--) ix[d] = rem % os[d], rem /= os[d];
      c[i] = x->c[bidx(x->shape, x->ndim, ix, no)];
    }
    const_out(I, 0, x->dtype, no, os, c);
    return true;
  }
  return ew_to(I, "expand", &x, 1, "$0", shape, nd);
}

static bool as_mask(Imp *I, bool ok);

/* Cast of run-time integers X: to float, to a mask (bool: X != 0), to the same integer type
 * (an alias) or the other (a kernel); nothing else. */
static bool cast_int(Imp *I, Val *x, int to) {
  if (to == x->dtype) return alias(I, x);
  if (to != OT_FLOAT && to != OT_BOOL && to != OT_INT64 && to != OT_INT32)
    return imp_unsupported(I, "a run-time Cast of integers to element type %d", to);
  Val *o = net_out(I, 0, x->ndim, x->shape);
  const char *expr = to == OT_FLOAT ? "f32(X[$])" : to == OT_BOOL ? "X[$] != 0 ? 1.0 : 0.0" : to == OT_INT64 ? "i64(X[$])" : "i32(X[$])";
  o->dtype = to;
  char *ix = idx("i", x->ndim), *e = xstrdup("");
  for (const char *p = expr; *p; p++) e = *p == '$' ? xprintf("%s%s", e, ix) : xprintf("%s%c", e, *p);
  const char *kn = imp_kernel(I, to == OT_FLOAT ? "to_float" : to == OT_BOOL ? "to_bool" : "to_int",
                              xprintf("(X: %s) -> Y: %s {\n  Y[%s] = %s\n}", ty(x), ty(o), ix, e));
  imp_call(I, o->tex, kn, x->tex);
  return true;
}

static bool op_cast(Imp *I) {
  if (!attrs_known(I, "to,saturate") || !one_output(I)) return false;
  Val *x = in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int to = (int)attr_i(I, "to", 0);
  if (x->c) return fold_ew(I, "Cast");
  if (run_time_int(x)) return cast_int(I, x, to);
  if (x->fint && (to == OT_FLOAT || to == OT_INT64 || to == OT_INT32)) { /* held as f32 already */
    if (!alias(I, x)) return false;
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    o->dtype = to;
    o->fint = to != OT_FLOAT;
    return true;
  }
  if (x->fint && to == OT_BOOL) return as_mask(I, ew(I, "to_bool", &x, 1, "$0 != 0.0 ? 1.0 : 0.0"));
  if (x->fint) return imp_unsupported(I, "a run-time Cast of integers to element type %d", to);
  if (to == OT_BOOL && x->dtype == OT_FLOAT) return as_mask(I, ew(I, "to_bool", &x, 1, "$0 != 0.0 ? 1.0 : 0.0"));
  if (to == OT_BOOL && x->dtype == OT_BOOL) return alias(I, x);
  if ((to == OT_INT64 || to == OT_INT32) && x->dtype == OT_BOOL) { /* a mask's 0 and 1 as integers, held as f32 */
    if (!alias(I, x)) return false;
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    o->dtype = to;
    o->fint = true;
    return true;
  }
  if (to != OT_FLOAT) return imp_unsupported(I, "a run-time Cast to element type %d (networks are f32)", to);
  if (x->dtype != OT_FLOAT && x->dtype != OT_BOOL) return imp_unsupported(I, "a run-time Cast from element type %d", x->dtype);
  if (!alias(I, x)) return false;
  ((Val *)VEC_AT(I->vals, I->vals.len - 1))->dtype = OT_FLOAT; /* a mask's 0 and 1 as floats */
  return true;
}

static bool op_dropout(Imp *I) {
  if (!attrs_known(I, "seed,ratio") || !one_output(I)) return false;
  Val *t = in(I, 2);
  if (t && (!(t = const_in(I, 2, "training_mode")) || t->c[0] != 0)) return t ? imp_unsupported(I, "training_mode true") : false;
  Val *x = in(I, 0);
  return x ? alias(I, x) : imp_error(I, "input 1 is missing");
}

/* Folding of the constant-only forms (Mod: no run-time form). */
static bool fold_only(Imp *I, const char *op) {
  for (int k = 0; k < nin(I); k++) {
    Val *v = in(I, k);
    if (v && !v->c) return imp_unsupported(I, "%s on run-time tensors (only folded at import)", op);
  }
  return one_output(I) && fold_ew(I, op);
}

/* ---- run-time masks ---------------------------------------------------------------
 * A boolean computed at run time (a comparison of float tensors) is an f32 tensor of 0 and
 * 1 whose value is labelled OT_BOOL: Where, Not, And, Or and Cast read it; an arithmetic
 * operator refuses it (float_in), as ONNX's types do; a graph output refuses it (not float). */

/* Input K as a condition: a constant, or a run-time mask. */
static Val *mask_in(Imp *I, int k) {
  Val *v = in(I, k);
  if (!v) return imp_error(I, "input %d is missing", k + 1), NULL;
  if (!v->c && v->dtype != OT_BOOL)
    return imp_unsupported(I, "input %d of element type %d as a condition (a comparison's result is)", k + 1, v->dtype), NULL;
  return v;
}

/* The output just made by ew: a mask. */
static bool as_mask(Imp *I, bool ok) {
  if (ok) ((Val *)VEC_AT(I->vals, I->vals.len - 1))->dtype = OT_BOOL;
  return ok;
}

/* Equal Less Greater LessOrEqual GreaterOrEqual Not And Or: folded when every input is a
 * constant, else a mask kernel. */
static bool op_logic(Imp *I, const char *op) {
  if (!attrs_known(I, "") || !one_output(I)) return false;
  bool run_time = false;
  for (int k = 0; k < nin(I); k++) run_time |= in(I, k) && !in(I, k)->c;
  if (!run_time) return fold_ew(I, op);
  static const char *const cmp[][2] = {{"Equal", "=="}, {"Less", "<"}, {"Greater", ">"}, {"LessOrEqual", "<="},
                                       {"GreaterOrEqual", ">="}};
  for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++)
    if (!strcmp(op, cmp[i][0])) {
      Val *x[2] = {float_in(I, 0), NULL};
      if (!x[0] || !(x[1] = float_in(I, 1))) return false;
      return as_mask(I, ew(I, lower(op), x, 2, xprintf("$0 %s $1 ? 1.0 : 0.0", cmp[i][1])));
    }
  if (!strcmp(op, "IsNaN")) {
    Val *x = float_in(I, 0);
    return x && as_mask(I, ew(I, "isnan", &x, 1, "$0 != $0 ? 1.0 : 0.0"));
  }
  if (!strcmp(op, "Not")) {
    Val *x = mask_in(I, 0);
    return x && as_mask(I, ew(I, "not", &x, 1, "$0 == 0.0 ? 1.0 : 0.0"));
  }
  Val *x[2] = {mask_in(I, 0), NULL};
  if (!x[0] || !(x[1] = mask_in(I, 1))) return false;
  return as_mask(I, ew(I, lower(op), x, 2, !strcmp(op, "And") ? "$0 != 0.0 && $1 != 0.0 ? 1.0 : 0.0" : "$0 != 0.0 || $1 != 0.0 ? 1.0 : 0.0"));
}

/* Where: folded for constants; else a kernel (the condition a constant or a run-time mask). */
static bool op_where(Imp *I) {
  if (!attrs_known(I, "") || !one_output(I)) return false;
  Val *c = in(I, 0), *a = in(I, 1), *b = in(I, 2);
  if (c && a && b && c->c && a->c && b->c) return fold_ew(I, "Where");
  Val *x[3] = {mask_in(I, 0), float_in(I, 1), float_in(I, 2)};
  return x[0] && x[1] && x[2] && ew(I, "where", x, 3, "$0 != 0.0 ? $1 : $2");
}

/* ---- activations, n-ary sums, layout operators ------------------------------------ */

/* Elu Selu Celu ThresholdedRelu Shrink: EXPR over $0 with their float attributes. */
static bool op_activation(Imp *I, const char *op) {
  double alpha = (float)attr_f(I, "alpha", !strcmp(op, "Selu") ? SELU_ALPHA : 1);
  const char *a = flit(alpha), *e;
  if (!strcmp(op, "Elu")) {
    if (!attrs_known(I, "alpha")) return false;
    e = xprintf("$0 >= 0.0 ? $0 : %s * expm1($0)", a);
  } else if (!strcmp(op, "Selu")) {
    if (!attrs_known(I, "alpha,gamma")) return false;
    const char *g = flit((float)attr_f(I, "gamma", SELU_GAMMA));
    e = xprintf("%s * ($0 > 0.0 ? $0 : %s * expm1($0))", g, a);
  } else if (!strcmp(op, "Celu")) {
    if (!attrs_known(I, "alpha")) return false;
    e = xprintf("max(0.0, $0) + min(0.0, %s * expm1($0 / %s))", a, a);
  } else if (!strcmp(op, "ThresholdedRelu")) {
    if (!attrs_known(I, "alpha")) return false;
    e = xprintf("$0 > %s ? $0 : 0.0", a);
  } else { /* Shrink */
    if (!attrs_known(I, "bias,lambd")) return false;
    double l = (float)attr_f(I, "lambd", 0.5), b = (float)attr_f(I, "bias", 0);
    e = xprintf("$0 < %s ? $0 + %s : ($0 > %s ? $0 - %s : 0.0)", flit(-l), flit(b), flit(l), flit(b));
  }
  return unary(I, op, e);
}

/* PRelu: X where X >= 0, else slope x X (the slope broadcast to X). */
static bool op_prelu(Imp *I) {
  Val *x[2] = {float_in(I, 0), NULL};
  if (!attrs_known(I, "") || !x[0] || !(x[1] = float_in(I, 1)) || !one_output(I)) return false;
  if (x[0]->c && x[1]->c) return fold_ew(I, "PRelu");
  if (x[0]->c) return imp_unsupported(I, "PRelu of a constant");
  return ew(I, "prelu", x, 2, "$0 < 0.0 ? $1 * $0 : $0");
}

/* Sum and Mean of 1 to 8 inputs, broadcast. */
static bool op_sum_mean(Imp *I, bool mean) {
  int n = nin(I);
  if (!attrs_known(I, "") || !one_output(I)) return false;
  if (n < 1 || n > 8) return imp_unsupported(I, "%d inputs (1 to 8)", n);
  Val *x[8];
  bool run_time = false;
  char *e = xstrdup("$0");
  for (int k = 0; k < n; k++) {
    if (!(x[k] = float_in(I, k))) return false;
    run_time |= !x[k]->c;
    if (k) e = xprintf("%s + $%d", e, k);
  }
  if (!run_time) return imp_unsupported(I, "%s of constants only (not folded at import)", mean ? "Mean" : "Sum");
  if (mean) e = xprintf("(%s) / %s", e, flit(n));
  else if (n == 1) e = xstrdup("$0 + 0.0");
  return ew(I, mean ? "mean" : "sum", x, n, e);
}

/* Pad: constant (its value from input 3, constant or not, or the attribute), reflect or edge; pads from
 * input 2 (opset >= 11; axes from input 4) or the attribute; negative pads crop. */
/* Pad's amounts for a rank-R input into B (before) and E (after) per axis, its constant
 * value into *VALUE, or into *CV when it is computed at run time. false: reported. */
static bool pad_amounts(Imp *I, int r, int64_t *b, int64_t *e, double *value, Val **cv) {
  bool old = I->opset < 11;
  int64_t pads[2 * HT_MAX_DIMS];
  int axes[HT_MAX_DIMS], na = r, np;
  for (int d = 0; d < r; d++) axes[d] = d, b[d] = e[d] = 0;
  *value = 0, *cv = NULL;
  if (old) {
    np = attr_ints(I, "pads", pads, 2 * HT_MAX_DIMS);
    *value = (float)attr_f(I, "value", 0);
  } else {
    Val *pv = const_in(I, 1, "pads"), *av = in(I, 3);
    if (!pv) return false;
    np = (int)val_numel(pv) > 2 * HT_MAX_DIMS ? 2 * HT_MAX_DIMS : (int)val_numel(pv);
    for (int i = 0; i < np; i++) pads[i] = (int64_t)pv->c[i];
    if (in(I, 2)) { /* a constant, or a float scalar computed at run time */
      if (!(*cv = float_in(I, 2))) return false;
      if (val_numel(*cv) != 1) return imp_error(I, "constant_value is not a scalar");
      if ((*cv)->c) *value = (float)(*cv)->c[0], *cv = NULL;
    }
    if (av) {
      if (!(av = const_in(I, 3, "axes"))) return false;
      na = (int)val_numel(av) > r ? r : (int)val_numel(av);
      for (int i = 0; i < na; i++)
        if ((axes[i] = axis_of(I, (int64_t)av->c[i], r)) < 0) return false;
    }
  }
  if (np != 2 * na) return imp_error(I, "%d pads for %d axes (2 each)", np, na);
  for (int i = 0; i < na; i++) b[axes[i]] = pads[i], e[axes[i]] = pads[na + i];
  return true;
}

static bool op_pad(Imp *I) {
  if (!attrs_known(I, I->opset < 11 ? "mode,pads,value" : "mode") || !one_output(I)) return false;
  Val *x = float_in(I, 0), *cv;
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "Pad of a constant");
  int r = x->ndim;
  int64_t b[HT_MAX_DIMS], e[HT_MAX_DIMS];
  double value;
  if (!pad_amounts(I, r, b, e, &value, &cv)) return false;
  const char *mode = attr_s(I, "mode", "constant");
  bool constant = !strcmp(mode, "constant"), reflect = !strcmp(mode, "reflect"), edge = !strcmp(mode, "edge");
  if (!constant && !reflect && !edge) return imp_unsupported(I, "mode '%s'", mode);
  int64_t os[HT_MAX_DIMS];
  char *src = xstrdup(""), *cond = xstrdup("");
  for (int d = 0; d < r; d++) {
    int64_t n = x->shape[d];
    if (b[d] > MAX_RESULT || e[d] > MAX_RESULT || b[d] < -n || e[d] < -n)
      return imp_unsupported(I, "pads of %lld and %lld on an axis of %lld", (long long)b[d], (long long)e[d], (long long)n);
    os[d] = n + b[d] + e[d];
    if (os[d] <= 0) return imp_unsupported(I, "an empty result (axis %d)", d);
    if (!constant && (b[d] < 0 || e[d] < 0)) return imp_unsupported(I, "negative pads in mode '%s'", mode);
    if (reflect && (b[d] > n - 1 || e[d] > n - 1))
      return imp_unsupported(I, "reflect pads of more than the axis' extent - 1 (axis %d)", d);
    char *i = b[d] ? xprintf("(i%d - %lld)", d, (long long)b[d]) : xprintf("i%d", d);
    char *at = i;
    if (b[d] > 0 || e[d] > 0) {
      if (constant) {
        if (b[d] > 0) cond = xprintf("%s%s%s >= 0", cond, *cond ? " && " : "", i);
        if (e[d] > 0) cond = xprintf("%s%s%s < %lld", cond, *cond ? " && " : "", i, (long long)n);
      } else if (edge) {
        at = xprintf("clamp(%s, 0, %lld)", i, (long long)(n - 1));
      } else { /* reflect: -1 -> 1, n -> n - 2 (clamped for the bounds proof; it changes nothing) */
        at = xprintf("clamp(%lld - abs(%lld - abs(%s)), 0, %lld)", (long long)(n - 1), (long long)(n - 1), i,
                     (long long)(n - 1));
      }
    }
    src = xprintf("%s%s%s", src, d ? ", " : "", at);
  }
  if (!shape_ok(I, os, r)) return false;
  Val *o = net_out(I, 0, r, os);
  char *rhs = xprintf("X[%s]", r ? src : "0"), *params = xprintf("X: %s", ty(x)), *args = xstrdup(imp_tensor(I, x));
  if (*cond && cv) {
    params = xprintf("%s, V: %s", params, ty(cv));
    args = xprintf("%s, %s", args, imp_tensor(I, cv));
    char *zero = xstrdup("0");
    for (int d = 1; d < cv->ndim; d++) zero = xprintf("%s, 0", zero);
    rhs = xprintf("%s ? %s : V[%s]", cond, rhs, zero);
  } else if (*cond) {
    rhs = xprintf("%s ? %s : %s", cond, rhs, flit(value));
  }
  const char *k = imp_kernel(I, "pad", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, ty(o), idx("i", r), rhs));
  imp_call(I, o->tex, k, args);
  return true;
}

/* DepthToSpace (DCR, CRD) and SpaceToDepth of an NCHW tensor, blocks of B x B. */
static bool op_depth_space(Imp *I, bool to_space) {
  if (!attrs_known(I, to_space ? "blocksize,mode" : "blocksize") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "a constant input");
  if (x->ndim != 4) return imp_error(I, "the input has rank %d (4)", x->ndim);
  long long b = attr_i(I, "blocksize", 0), n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (b < 1) return imp_error(I, "blocksize %lld", b);
  const char *mode = attr_s(I, "mode", "DCR"), *rhs;
  int64_t os[4];
  if (to_space) {
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD")) return imp_unsupported(I, "mode '%s'", mode);
    if (c % (b * b)) return imp_error(I, "%lld channels are not a multiple of blocksize^2 = %lld", c, b * b);
    long long cp = c / (b * b);
    os[0] = n, os[1] = cp, os[2] = h * b, os[3] = w * b;
    rhs = !strcmp(mode, "DCR") ? xprintf("X[i0, ((i2 %% %lld) * %lld + i3 %% %lld) * %lld + i1, i2 / %lld, i3 / %lld]", b, b, b, cp, b, b)
                               : xprintf("X[i0, i1 * %lld + (i2 %% %lld) * %lld + i3 %% %lld, i2 / %lld, i3 / %lld]", b * b, b, b, b, b, b);
  } else {
    if (h % b || w % b) return imp_error(I, "H x W %lld x %lld is not a multiple of blocksize %lld", h, w, b);
    os[0] = n, os[1] = c * b * b, os[2] = h / b, os[3] = w / b;
    rhs = xprintf("X[i0, i1 %% %lld, i2 * %lld + (i1 / %lld) / %lld, i3 * %lld + (i1 / %lld) %% %lld]", c, b, c, b, b, c, b);
  }
  Val *o = net_out(I, 0, 4, os);
  const char *k = imp_kernel(I, to_space ? "depth_to_space" : "space_to_depth",
                             xprintf("(X: %s) -> Y: %s {\n  Y[i0, i1, i2, i3] = %s\n}", ty(x), ty(o), rhs));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* Tile: each axis repeated (repeats from input 2, a constant). */
static bool op_tile(Imp *I) {
  if (!attrs_known(I, "") || !one_output(I)) return false;
  Val *x = float_in(I, 0), *rv = x ? const_in(I, 1, "repeats") : NULL;
  if (!rv) return false;
  if (x->c) return imp_unsupported(I, "Tile of a constant");
  int r = x->ndim;
  if (val_numel(rv) != r) return imp_error(I, "%lld repeats for rank %d", (long long)val_numel(rv), r);
  int64_t os[HT_MAX_DIMS];
  char *src = xstrdup("");
  for (int d = 0; d < r; d++) {
    int64_t k = (int64_t)rv->c[d];
    if (k < 1) return imp_unsupported(I, "%lld repeats (axis %d)", (long long)k, d);
    if (k > MAX_RESULT) return imp_unsupported(I, "a result of more than 2^30 elements");
    os[d] = x->shape[d] * k;
    src = xprintf("%s%s%s", src, d ? ", " : "", k > 1 ? xprintf("i%d %% %lld", d, (long long)x->shape[d]) : xprintf("i%d", d));
  }
  if (!r) return alias(I, x);
  if (!shape_ok(I, os, r)) return false;
  Val *o = net_out(I, 0, r, os);
  const char *k = imp_kernel(I, "tile", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(o), idx("i", r), src));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* InstanceNormalization: each (n, c) normalized over the spatial axes, then scale[c] and
 * bias[c]. */
static bool op_instance_norm(Imp *I) {
  if (!attrs_known(I, "epsilon") || !one_output(I)) return false;
  Val *x = float_in(I, 0), *sc = x ? float_in(I, 1) : NULL, *bi = sc ? float_in(I, 2) : NULL;
  if (!bi) return false;
  if (x->c) return imp_unsupported(I, "a constant input");
  int r = x->ndim;
  if (r < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", r);
  int64_t c = x->shape[1];
  if (sc->ndim != 1 || bi->ndim != 1 || sc->shape[0] != c || bi->shape[0] != c)
    return imp_error(I, "scale and B must be vectors of %lld values", (long long)c);
  bool mask[HT_MAX_DIMS] = {0};
  for (int d = 2; d < r; d++) mask[d] = true;
  Val *o = net_out(I, 0, r, x->shape);
  char *body = norm_body(x, mask, flit((float)attr_f(I, "epsilon", 1e-5)), " * Sc[i1] + B[i1]");
  const char *k = imp_kernel(I, "instance_norm", xprintf("(X: %s, Sc: f32[%lld], B: f32[%lld]) -> Y: %s {\n%s\n}", ty(x),
                                                        (long long)c, (long long)c, ty(o), body));
  imp_call(I, o->tex, k, xprintf("%s, %s, %s", imp_tensor(I, x), imp_tensor(I, sc), imp_tensor(I, bi)));
  return true;
}

/* LRN: each value over (bias + alpha / size x the sum of squares of SIZE neighbouring
 * channels)^beta (the window cut at the edges). */
static bool op_lrn(Imp *I) {
  if (!attrs_known(I, "alpha,beta,bias,size") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "LRN of a constant");
  int r = x->ndim;
  long long size = attr_i(I, "size", 0), c = r >= 2 ? x->shape[1] : 0, lo = (size - 1) / 2;
  if (r < 3) return imp_error(I, "the input has rank %d (N, C and spatial axes)", r);
  if (size < 1) return imp_error(I, "size %lld", size);
  /* the window: channels i1 - lo .. i1 - lo + size - 1 */
  char *all = idx("i", r), *ch = xprintf("i1 + q - %lld", lo), *nb = xprintf("i0, %s", ch);
  for (int d = 2; d < r; d++) nb = xprintf("%s, i%d", nb, d);
  Val *o = net_out(I, 0, r, x->shape);
  char *body = xprintf("  tensor S: %s\n  S[%s] += %s >= 0 && %s < %lld ? X[%s] * X[%s] : 0.0 where q in 0..%lld\n"
                       "  Y[%s] = X[%s] / pow(%s + %s * S[%s], %s)",
                       ty(x), all, ch, ch, c, nb, nb, size, all, all, flit((float)attr_f(I, "bias", 1)),
                       flit((float)attr_f(I, "alpha", 1e-4) / (double)size), all, flit((float)attr_f(I, "beta", 0.75)));
  const char *k = imp_kernel(I, "lrn", xprintf("(X: %s) -> Y: %s {\n%s\n}", ty(x), ty(o), body));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* GatherElements with constant indices: Y[i] = X[i with axis a replaced by I[i]]. */
static bool op_gather_elements(Imp *I) {
  if (!attrs_known(I, "axis") || !one_output(I)) return false;
  Val *x = in(I, 0), *ix = in(I, 1);
  if (x && ix && !ix->c && (run_time_int(ix) || ix->fint)) { /* run-time indices, each clamped into the axis */
    if (!x->c && !(x = float_in(I, 0))) return false;
    int r = x->ndim, a = axis_of(I, attr_i(I, "axis", 0), r);
    if (a < 0) return false;
    if (ix->ndim != r) return imp_error(I, "indices of rank %d for data of rank %d", ix->ndim, r);
    for (int d = 0; d < r; d++)
      if (ix->shape[d] > x->shape[d] && d != a) return imp_error(I, "indices larger than the data on axis %d", d);
    long long len = x->shape[a];
    char *ie = int_at(ix, "Ix", idx("i", r)), *at = xstrdup("");
    for (int d = 0; d < r; d++)
      at = xprintf("%s%s%s", at, d ? ", " : "", d == a ? xprintf("clamp(%s < 0 ? %s + %lld : %s, 0, %lld)", ie, ie, len, ie, len - 1)
                                                       : xprintf("i%d", d));
    Val *o = net_out(I, 0, r, ix->shape);
    const char *k = imp_kernel(I, "gather_elements", xprintf("(X: %s, Ix: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(ix),
                                                             ty(o), idx("i", r), at));
    imp_call(I, o->tex, k, xprintf("%s, %s", imp_tensor(I, x), ix->tex));
    return true;
  }
  x = float_in(I, 0), ix = x ? const_in(I, 1, "indices") : NULL;
  if (!ix) return false;
  if (x->c) return imp_unsupported(I, "GatherElements of a constant");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  if (ix->ndim != r) return imp_error(I, "indices of rank %d for data of rank %d", ix->ndim, r);
  for (int d = 0; d < r; d++)
    if (ix->shape[d] > x->shape[d] && d != a) return imp_error(I, "indices larger than the data on axis %d", d);
  int64_t n = val_numel(ix), len = x->shape[a];
  Val *t = xalloc(sizeof *t);
  *t = (Val){.name = xprintf("%s_indices", ix->name), .dtype = OT_FLOAT, .ndim = r, .c = vals(n)};
  memcpy(t->shape, ix->shape, sizeof(int64_t) * (size_t)r);
  for (int64_t i = 0; i < n; i++) {
    double v = ix->c[i] < 0 ? ix->c[i] + (double)len : ix->c[i];
    if (v < 0 || v >= (double)len) return imp_error(I, "index %.0f outside axis %d of size %lld", ix->c[i], a, (long long)len);
    t->c[i] = v;
  }
  char *at = xstrdup("");
  for (int d = 0; d < r; d++)
    at = xprintf("%s%s%s", at, d ? ", " : "", d == a ? xprintf("clamp(i32(T[%s]), 0, %lld)", idx("i", r), (long long)len - 1)
                                                     : xprintf("i%d", d));
  Val *o = net_out(I, 0, r, ix->shape);
  const char *k = imp_kernel(I, "gather_elements", xprintf("(X: %s, T: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", ty(x), ty(t),
                                                           ty(o), idx("i", r), at));
  imp_call(I, o->tex, k, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, t)));
  return true;
}

/* Hardmax: 1 at the first largest value along the axis (opset >= 13; before, over the
 * flattened axes from it), 0 elsewhere. */
static bool op_hardmax(Imp *I) {
  if (!attrs_known(I, "axis") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "Hardmax of a constant");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", I->opset >= 13 ? -1 : 1), r ? r : 1);
  if (a < 0) return false;
  bool mask[HT_MAX_DIMS] = {0};
  char *pos = xstrdup(""); /* the position along the reduced axes, row-major */
  for (int d = 0; d < r; d++)
    if ((mask[d] = I->opset >= 13 ? d == a : d >= a))
      pos = *pos ? xprintf("(%s) * %lld + i%d", pos, (long long)x->shape[d], d) : xprintf("i%d", d);
  Reduced R = reduced_axes(x, mask);
  char *kdims = R.kdims, *klhs = R.klhs, *src = R.src, *where = R.where, *kept = R.kept;
  Val *o = net_out(I, 0, r, x->shape);
  char *body = xprintf("  tensor A: i64[%s]\n  A[%s] argmax= X[%s] where %s\n  Y[%s] = %s == A[%s] ? 1.0 : 0.0", kdims, klhs,
                       src, where, idx("i", r), pos, kept);
  const char *k = imp_kernel(I, "hardmax", xprintf("(X: %s) -> Y: %s {\n%s\n}", ty(x), ty(o), body));
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
  if (!attrs_known(I, "equation") || !one_output(I)) return false;
  const char *eq = attr_s(I, "equation", "");
  int n = nin(I);
  if (n < 1 || n > 8) return imp_unsupported(I, "%d inputs (1 to 8)", n);
  Einsum *E = xalloc(sizeof *E);
  if (!einsum_parse(I, eq, E)) return false;
  if ((E->arrow ? E->nt - 1 : E->nt) != n)
    return imp_error(I, "equation '%s' has %d operands, the node %d inputs", eq, E->arrow ? E->nt - 1 : E->nt, n);
  Val *x[8];
  for (int k = 0; k < n; k++)
    if (!(x[k] = float_in(I, k))) return false;
  if (!einsum_axes(I, eq, x, n, E)) return false;
  char *params = xstrdup(""), *args = xstrdup(""), *prod = xstrdup("");
  for (int k = 0; k < n; k++) {
    char *at = xstrdup("");
    for (int d = 0; E->full[k][d]; d++) {
      int c = (unsigned char)E->full[k][d];
      bool one = x[k]->shape[d] == 1 && E->size[c] > 1; /* broadcast: read at 0 */
      at = one ? xprintf("%s%s0", at, d ? ", " : "") : xprintf("%s%se_%c", at, d ? ", " : "", E->full[k][d]);
    }
    params = xprintf("%s%sX%d: %s", params, k ? ", " : "", k, ty(x[k]));
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
  Val *o = net_out(I, 0, no, os);
  const char *k = imp_kernel(I, "einsum", xprintf("(%s) -> Y: %s {\n  Y[%s] %s %s%s%s\n}", params, ty(o), lhs,
                                                  *where ? "+=" : "=", prod, *where ? " where " : "", where));
  imp_call(I, o->tex, k, args);
  return true;
}

/* CumSum along a constant axis: inclusive or exclusive, forward or reverse. */
static bool op_cumsum(Imp *I) {
  if (!attrs_known(I, "exclusive,reverse") || !one_output(I)) return false;
  Val *x = float_in(I, 0), *av = x ? const_in(I, 1, "axis") : NULL;
  if (!av) return false;
  if (x->c) return imp_unsupported(I, "CumSum of a constant");
  if (val_numel(av) != 1) return imp_error(I, "axis is not a scalar");
  int r = x->ndim, a = axis_of(I, (int64_t)av->c[0], r);
  if (a < 0) return false;
  bool ex = attr_i(I, "exclusive", 0), rev = attr_i(I, "reverse", 0);
  long long n = x->shape[a];
  char *src = xstrdup("");
  for (int d = 0; d < r; d++) src = xprintf("%s%s%s", src, d ? ", " : "", d == a ? "q" : xprintf("i%d", d));
  const char *range = rev ? xprintf("i%d%s..%lld", a, ex ? " + 1" : "", n) : xprintf("0..i%d%s", a, ex ? "" : " + 1");
  Val *o = net_out(I, 0, r, x->shape);
  const char *k = imp_kernel(I, "cumsum", xprintf("(X: %s) -> Y: %s {\n  Y[%s] += X[%s] where q in %s\n}", ty(x), ty(o),
                                                  idx("i", r), src, range));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* Size: the number of elements of any value (shapes are static): a constant. */
static bool op_size(Imp *I) {
  Val *x = in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  if (!attrs_known(I, "") || !one_output(I)) return false;
  double *c = vals(1);
  c[0] = (double)val_numel(x);
  const_out(I, 0, OT_INT64, 0, NULL, c);
  return true;
}

/* Trilu: the lower (upper = 0) or upper triangle of the last two axes from diagonal k
 * (input 2, a constant; 0 when absent), the rest 0. */
static bool op_trilu(Imp *I) {
  if (!attrs_known(I, "upper") || !one_output(I)) return false;
  Val *x = in(I, 0), *kv = in(I, 1);
  if (!x) return imp_error(I, "input 1 is missing");
  if (kv && !(kv = const_in(I, 1, "k"))) return false;
  int r = x->ndim;
  if (r < 2) return imp_error(I, "the input has rank %d (at least 2)", r);
  long long k = kv ? (long long)kv->c[0] : 0;
  bool upper = attr_i(I, "upper", 1) != 0;
  if (x->c) { /* folded: a causal mask made by the exporter */
    int64_t n = val_numel(x), rows = x->shape[r - 2], cols = x->shape[r - 1];
    double *c = vals(n);
    for (int64_t i = 0; i < n; i++) {
      long long row = (long long)(i / cols % rows), col = (long long)(i % cols);
      c[i] = (upper ? col - row >= k : col - row <= k) ? x->c[i] : 0;
    }
    const_out(I, 0, x->dtype, r, x->shape, c);
    return true;
  }
  if (x->dtype != OT_FLOAT) return imp_unsupported(I, "input 1 of element type %d (networks are f32)", x->dtype);
  char *all = idx("i", r);
  Val *o = net_out(I, 0, r, x->shape);
  const char *kn = imp_kernel(I, "trilu", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = i%d - i%d %s %lld ? X[%s] : 0.0\n}", ty(x), ty(o), all,
                                                 r - 1, r - 2, upper ? ">=" : "<=", k, all));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* MeanVarianceNormalization: (X - mean) / sqrt(variance + 1e-9) over AXES (default 0, 2, 3). */
static bool op_mvn(Imp *I) {
  if (!attrs_known(I, "axes") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "a constant input");
  int r = x->ndim;
  int64_t axes[HT_MAX_DIMS] = {0, 2, 3};
  int na = attr_ints(I, "axes", axes, HT_MAX_DIMS);
  if (na < 0) na = 3;
  bool mask[HT_MAX_DIMS] = {0};
  for (int i = 0; i < na; i++) {
    int a = axis_of(I, axes[i], r);
    if (a < 0) return false;
    mask[a] = true;
  }
  Val *o = net_out(I, 0, r, x->shape);
  char *body = norm_body(x, mask, "1e-9", "");
  const char *kn = imp_kernel(I, "mvn", xprintf("(X: %s) -> Y: %s {\n%s\n}", ty(x), ty(o), body));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* ---- ScatterND, ScatterElements ---------------------------------------------------
 * With constant indices, a scatter is a gather from the output's side: a table per
 * position of the data (ScatterND: of its first K axes) names the update that lands there,
 * or -1; a position that several updates reach (add, mul, max, min) has one table per
 * update, D in all. */

#define SCATTER_MAX_HITS 8

/* The update tables: for each of the P positions, the updates that land there (their
 * numbers, in order) in T[j * P + pos], -1 past the last; *D: the most at one position. */
typedef struct ScatterMap {
  int64_t p;
  int d;
  double *t;
} ScatterMap;

static bool scatter_hit(Imp *I, ScatterMap *m, int64_t pos, double what) {
  int j = 0;
  while (j < SCATTER_MAX_HITS && m->t[(int64_t)j * m->p + pos] >= 0) j++;
  if (j == SCATTER_MAX_HITS) return imp_unsupported(I, "more than %d updates of one position", SCATTER_MAX_HITS);
  m->t[(int64_t)j * m->p + pos] = what;
  if (j + 1 > m->d) m->d = j + 1;
  return true;
}

/* Y = X with the updates folded in by REDUCTION: AT(j) is U's index expression for table j
 * (a string with "%s" for that table's access), POS the tables' index. */
static char *scatter_expr(const char *reduction, int d, const char *pos, const char *uat[SCATTER_MAX_HITS],
                          const char *xat) {
  char *e = xprintf("X[%s]", xat);
  bool none = !strcmp(reduction, "none");
  for (int j = 0; j < d; j++) {
    const char *hit = xprintf("T%d[%s] >= 0.0", j, pos), *u = xprintf("U[%s]", uat[j]);
    if (none) e = xprintf("(%s ? %s : %s)", hit, u, e);
    else if (!strcmp(reduction, "add")) e = xprintf("%s + (%s ? %s : 0.0)", e, hit, u);
    else if (!strcmp(reduction, "mul")) e = xprintf("%s * (%s ? %s : 1.0)", e, hit, u);
    else e = xprintf("(%s ? %s(%s, %s) : %s)", hit, reduction, e, u, e); /* max, min */
  }
  return e;
}

/* The kernel: X, U, the D tables of shape TS (TN axes), Y = EXPR. */
static bool scatter_call(Imp *I, Val *x, Val *u, ScatterMap *m, const int64_t *ts, int tn, const char *expr) {
  char *params = xprintf("X: %s, U: %s", ty(x), ty(u)), *args = xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, u));
  for (int j = 0; j < m->d; j++) {
    Val *t = xalloc(sizeof *t);
    *t = (Val){.name = xprintf("%s_scatter%d", I->node->output[0], j), .dtype = OT_FLOAT, .ndim = tn, .c = vals(m->p)};
    memcpy(t->shape, ts, sizeof(int64_t) * (size_t)tn);
    memcpy(t->c, m->t + (int64_t)j * m->p, sizeof(double) * (size_t)m->p);
    params = xprintf("%s, T%d: %s", params, j, ty(t));
    args = xprintf("%s, %s", args, imp_tensor(I, t));
  }
  Val *o = net_out(I, 0, x->ndim, x->shape);
  const char *k = imp_kernel(I, "scatter", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, ty(o), idx("i", x->ndim), expr));
  imp_call(I, o->tex, k, args);
  return true;
}

/* The reduction attribute (none, add, mul; max, min from opset 18). */
static const char *scatter_reduction(Imp *I) {
  const char *r = attr_s(I, "reduction", "none");
  if (strcmp(r, "none") && strcmp(r, "add") && strcmp(r, "mul") && strcmp(r, "max") && strcmp(r, "min"))
    return imp_unsupported(I, "reduction '%s'", r), NULL;
  return r;
}

/* ScatterND with constant indices: update row q (of indices' leading axes) replaces (or
 * reduces into) the slice of the data at the index tuple indices[q]. */
static bool op_scatter_nd(Imp *I) {
  if (!attrs_known(I, "reduction") || !one_output(I)) return false;
  const char *red = scatter_reduction(I);
  Val *x = red ? float_in(I, 0) : NULL, *ix = x ? const_in(I, 1, "indices") : NULL, *u = ix ? float_in(I, 2) : NULL;
  if (!u) return false;
  if (x->c) return imp_unsupported(I, "ScatterND into a constant");
  int r = x->ndim, q = ix->ndim - 1;
  int64_t k = q >= 0 ? ix->shape[q] : 0, rows = 1;
  if (q < 0 || k < 1 || k > r) return imp_error(I, "indices of shape [%s] for data of rank %d", dims_text(ix->shape, ix->ndim), r);
  for (int i = 0; i < q; i++) rows *= ix->shape[i];
  if (u->ndim != q + r - (int)k) return imp_error(I, "updates of rank %d (%d expected)", u->ndim, q + r - (int)k);
  ScatterMap m = {.p = 1};
  for (int d = 0; d < k; d++) m.p *= x->shape[d];
  m.t = vals(m.p * SCATTER_MAX_HITS);
  for (int64_t i = 0; i < m.p * SCATTER_MAX_HITS; i++) m.t[i] = -1;
  for (int64_t row = 0; row < rows; row++) {
    int64_t pos = 0;
    for (int d = 0; d < k; d++) {
      double v = ix->c[row * k + d], n = (double)x->shape[d];
      if (v < 0) v += n;
      if (v < 0 || v >= n) return imp_error(I, "index %.0f outside axis %d of size %.0f", ix->c[row * k + d], d, n);
      pos = pos * x->shape[d] + (int64_t)v;
    }
    if (!scatter_hit(I, &m, pos, (double)row)) return false;
  }
  /* U[row as indices' leading axes, the data's axes from k]; row from the table */
  const char *pos = xstrdup(""), *xat = idx("i", r), *uat[SCATTER_MAX_HITS];
  for (int d = 0; d < k; d++) pos = xprintf("%s%si%d", pos, d ? ", " : "", d);
  for (int j = 0; j < m.d; j++) {
    char *at = xstrdup("");
    int64_t stride = rows;
    for (int i = 0; i < q; i++) {
      stride /= ix->shape[i];
      at = xprintf("%s%sclamp(i32(T%d[%s]) / %lld %% %lld, 0, %lld)", at, i ? ", " : "", j, pos, (long long)stride,
                   (long long)ix->shape[i], (long long)ix->shape[i] - 1);
    }
    for (int d = (int)k; d < r; d++) at = xprintf("%s%si%d", at, *at ? ", " : "", d);
    uat[j] = q ? at : xprintf("0%s%s", r > k ? ", " : "", at);
  }
  return scatter_call(I, x, u, &m, x->shape, (int)k, scatter_expr(red, m.d, pos, uat, xat));
}

/* ScatterElements (and Scatter, opsets 9-10) with constant indices along AXIS: update i
 * lands at i with its axis coordinate replaced by indices[i]; the table holds, per data
 * position, that coordinate of i. */
static bool op_scatter_elements(Imp *I) {
  if (!attrs_known(I, "axis,reduction") || !one_output(I)) return false;
  const char *red = scatter_reduction(I);
  Val *x = red ? float_in(I, 0) : NULL, *ix = x ? const_in(I, 1, "indices") : NULL, *u = ix ? float_in(I, 2) : NULL;
  if (!u) return false;
  if (x->c) return imp_unsupported(I, "ScatterElements into a constant");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  if (ix->ndim != r || u->ndim != r || memcmp(ix->shape, u->shape, sizeof(int64_t) * (size_t)r))
    return imp_error(I, "indices [%s] and updates [%s] must have one shape, of the data's rank", dims_text(ix->shape, ix->ndim), dims_text(u->shape, u->ndim));
  for (int d = 0; d < r; d++)
    if (ix->shape[d] > x->shape[d] && d != a) return imp_error(I, "indices larger than the data on axis %d", d);
  ScatterMap m = {.p = val_numel(x)};
  m.t = vals(m.p * SCATTER_MAX_HITS);
  for (int64_t i = 0; i < m.p * SCATTER_MAX_HITS; i++) m.t[i] = -1;
  int64_t n = val_numel(ix), c[HT_MAX_DIMS];
  for (int64_t i = 0; i < n; i++) {
    int64_t rem = i, pos = 0;
    for (int d = r - 1; d >= 0; d--) c[d] = rem % ix->shape[d], rem /= ix->shape[d];
    double v = ix->c[i], len = (double)x->shape[a];
    if (v < 0) v += len;
    if (v < 0 || v >= len) return imp_error(I, "index %.0f outside axis %d of size %.0f", ix->c[i], a, len);
    int64_t at_a = c[a];
    c[a] = (int64_t)v;
    for (int d = 0; d < r; d++) pos = pos * x->shape[d] + c[d];
    if (!scatter_hit(I, &m, pos, (double)at_a)) return false;
  }
  const char *xat = idx("i", r), *uat[SCATTER_MAX_HITS];
  for (int j = 0; j < m.d; j++) {
    char *at = xstrdup("");
    for (int d = 0; d < r; d++)
      at = xprintf("%s%s%s", at, d ? ", " : "",
                   d == a ? xprintf("clamp(i32(T%d[%s]), 0, %lld)", j, xat, (long long)ix->shape[a] - 1)
                          : xprintf("clamp(i%d, 0, %lld)", d, (long long)ix->shape[d] - 1));
    uat[j] = at;
  }
  return scatter_call(I, x, u, &m, x->shape, r, scatter_expr(red, m.d, xat, uat, xat));
}

/* ---- Resize and Upsample ----------------------------------------------------------- */

/* The floats of attribute NAME into OUT (at most MAX); their number, -1 when absent. */
static int attr_floats(Imp *I, const char *name, double *out, int max) {
  const Onnx__AttributeProto *a = attr(I, name);
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

/* The table of axis D resized from IN to OUT (by SCALE; BY_SIZE: OUT was given): per
 * output index the nearest input index, or (LINEAR) rows of the lower and upper neighbours
 * and the upper's weight. */
static Val *resize_table(Imp *I, int d, int64_t in, int64_t out, double scale, bool by_size, bool linear, const char *ct,
                         const char *nm) {
  Val *tab = xalloc(sizeof *tab);
  *tab = (Val){.name = xprintf("%s_resize%d", I->node->output[0], d), .dtype = OT_FLOAT, .ndim = linear ? 2 : 1,
               .shape = {linear ? 3 : out, out}, .c = vals(linear ? 3 * out : out)};
  for (int64_t i = 0; i < out; i++) {
    bool rounded = by_size || !strcmp(ct, "half_pixel_symmetric"); /* its adjustment is of the rounded size */
    double c = resize_coord(ct, (double)i, scale, in, rounded ? (double)out : (double)in * scale);
    if (!linear) {
      tab->c[i] = (double)resize_nearest(nm, c, in);
      continue;
    }
    c = c < 0 ? 0 : c > (double)(in - 1) ? (double)(in - 1) : c;
    double lo = floor(c);
    tab->c[i] = lo, tab->c[out + i] = lo + 1 < (double)in ? lo + 1 : lo, tab->c[2 * out + i] = c - lo;
  }
  return tab;
}

/* Resize X (at most 3 of its axes resized) to OS, by SCALE per axis (BY_SIZE: OS was
 * given, SCALE derived from it): nearest (an index
 * table per resized axis) or linear (per resized axis a table of the lower and upper
 * neighbours and the weight of the upper: 2^k terms). A channels-last X stays so when its
 * N and C are not resized. */
static bool resize_to(Imp *I, Val *x, const int64_t *os, const double *scale, bool by_size, bool linear,
                      const char *ct, const char *nm) {
  int r = x->ndim, k = 0, ax[HT_MAX_DIMS];
  for (int d = 0; d < r; d++)
    if (os[d] != x->shape[d] || scale[d] != 1) ax[k++] = d;
  if (!k) return alias(I, x);
  if (k > 3) return imp_unsupported(I, "%d resized axes (at most 3)", k);
  bool nhwc = x->nhwc && r == 4 && os[0] == x->shape[0] && os[1] == x->shape[1];
  /* the tensor's axis t holds logical axis lg[t] */
  int lg[HT_MAX_DIMS];
  for (int t = 0; t < r; t++) lg[t] = nhwc ? (int[]){0, 2, 3, 1}[t] : t;
  int64_t ts[HT_MAX_DIMS], tin[HT_MAX_DIMS];
  for (int t = 0; t < r; t++) ts[t] = os[lg[t]], tin[t] = x->shape[lg[t]];
  char *params = xprintf("X: f32[%s]", dims_text(tin, r)), *args = xstrdup(nhwc ? imp_tensor_nhwc(I, x) : imp_tensor(I, x));
  char *pos[HT_MAX_DIMS][2];  /* per tensor axis: the source index (lower, upper) */
  char *wt[HT_MAX_DIMS] = {0}; /* per tensor axis: the upper's weight (linear) */
  for (int t = 0; t < r; t++) {
    int d = lg[t];
    pos[t][0] = pos[t][1] = xprintf("i%d", t);
    bool resized = false;
    for (int j = 0; j < k; j++) resized |= ax[j] == d;
    if (!resized) continue;
    int64_t in = x->shape[d];
    Val *tab = resize_table(I, d, in, os[d], scale[d], by_size, linear, ct, nm);
    const char *tn = xprintf("T%d", t);
    params = xprintf("%s, %s: %s", params, tn, ty(tab));
    args = xprintf("%s, %s", args, imp_tensor(I, tab));
    if (linear) {
      for (int h = 0; h < 2; h++) pos[t][h] = xprintf("clamp(i32(%s[%d, i%d]), 0, %lld)", tn, h, t, (long long)(in - 1));
      wt[t] = xprintf("%s[2, i%d]", tn, t);
    } else {
      pos[t][0] = pos[t][1] = xprintf("clamp(i32(%s[i%d]), 0, %lld)", tn, t, (long long)(in - 1));
    }
  }
  char *e = xstrdup("");
  for (int corner = 0; corner < (linear ? 1 << k : 1); corner++) {
    char *w = xstrdup(""), *at = xstrdup("");
    for (int t = 0, j = 0; t < r; t++) {
      int hi = 0;
      if (wt[t]) {
        hi = corner >> j++ & 1;
        w = xprintf("%s%s%s", w, *w ? " * " : "", hi ? wt[t] : xprintf("(1.0 - %s)", wt[t]));
      }
      at = xprintf("%s%s%s", at, t ? ", " : "", pos[t][hi]);
    }
    e = xprintf("%s%s%s%sX[%s]", e, corner ? " + " : "", w, *w ? " * " : "", at);
  }
  Val *o = net_out(I, 0, r, ts);
  const char *kn = imp_kernel(I, linear ? "resize_linear" : "resize_nearest",
                              xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, ty(o), idx("i", r), e));
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
  int nav = attr_ints(I, "axes", av, HT_MAX_DIMS);
  if (nav >= 0) {
    na = nav;
    for (int i = 0; i < na; i++)
      if ((axes[i] = axis_of(I, av[i], r)) < 0) return false;
  }
  double given[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) scale[d] = 1, os[d] = x->shape[d];
  int ns = -1;
  Val *sv = upsample && I->opset < 9 ? NULL : in(I, old ? 1 : 2), *zv = old ? NULL : in(I, 3);
  if (upsample && I->opset < 9) ns = attr_floats(I, "scales", given, HT_MAX_DIMS);
  else if (sv && !(sv = const_in(I, old ? 1 : 2, "scales"))) return false;
  if (sv && val_numel(sv) > 0) {
    ns = (int)val_numel(sv) > HT_MAX_DIMS ? HT_MAX_DIMS : (int)val_numel(sv);
    for (int i = 0; i < ns; i++) given[i] = sv->c[i];
  }
  if (zv && !(zv = const_in(I, 3, "sizes"))) return false;
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
  return shape_ok(I, os, r);
}

/* Resize (opset >= 10) and Upsample (7 to 9): nearest and linear; scales or sizes constant. */
static bool op_resize(Imp *I, bool upsample) {
  bool old = upsample || I->opset < 11;
  if (!one_output(I)) return false;
  if (upsample ? !attrs_known(I, I->opset < 9 ? "mode,scales" : "mode")
               : !attrs_known(I, old ? "mode"
                                     : "mode,coordinate_transformation_mode,nearest_mode,cubic_coeff_a,exclude_outside,"
                                       "extrapolation_value,antialias,axes,keep_aspect_ratio_policy"))
    return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "%s of a constant", upsample ? "Upsample" : "Resize");
  const char *mode = attr_s(I, "mode", "nearest");
  bool linear = !strcmp(mode, "linear");
  if (!linear && strcmp(mode, "nearest")) return imp_unsupported(I, "mode '%s'", mode);
  const char *ct = old ? "asymmetric" : attr_s(I, "coordinate_transformation_mode", "half_pixel");
  const char *nm = old ? "floor" : attr_s(I, "nearest_mode", "round_prefer_floor");
  static const char *const modes[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                      "asymmetric", "tf_half_pixel_for_nn"};
  bool known = false;
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) known |= !strcmp(ct, modes[i]);
  if (!known || (!strcmp(ct, "half_pixel_symmetric") && I->opset < 19))
    return imp_unsupported(I, "coordinate_transformation_mode '%s'", ct);
  if (attr_i(I, "antialias", 0)) return imp_unsupported(I, "antialias");
  if (strcmp(attr_s(I, "keep_aspect_ratio_policy", "stretch"), "stretch"))
    return imp_unsupported(I, "keep_aspect_ratio_policy '%s'", attr_s(I, "keep_aspect_ratio_policy", ""));
  double scale[HT_MAX_DIMS];
  int64_t os[HT_MAX_DIMS];
  bool by_size = false;
  if (!resize_shape(I, x, upsample, os, scale, &by_size)) return false;
  return resize_to(I, x, os, scale, by_size, linear, ct, nm);
}

/* ArgMax / ArgMin: the index (int64, held as such) of the largest / smallest value along
 * the axis, the first one or (select_last_index) the last one: argmax= over the axis read
 * backwards, then counted from the end. keepdims keeps the axis as 1. */
static bool op_argmax(Imp *I, bool max) {
  if (!attrs_known(I, "axis,keepdims,select_last_index") || !one_output(I)) return false;
  Val *x = float_in(I, 0);
  if (!x) return false;
  if (x->c) return imp_unsupported(I, "%s of a constant", max ? "ArgMax" : "ArgMin");
  int r = x->ndim, a = axis_of(I, attr_i(I, "axis", 0), r ? r : 1), no = 0;
  if (a < 0) return false;
  bool keep = attr_i(I, "keepdims", 1), last = attr_i(I, "select_last_index", 0);
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
  Val *o = net_out(I, 0, no, os);
  o->dtype = OT_INT64;
  const char *kn = imp_kernel(I, max ? "argmax" : "argmin",
                              xprintf("(X: %s) -> Y: %s {\n  tensor T: i64[%s]\n  T[%s] %s X[%s] where r in 0..%lld\n"
                                      "  Y[%s] = %s\n}",
                                      ty(x), ty(o), dims_text(ks, nk), none ? "z0" : kept, max ? "argmax=" : "argmin=",
                                      src, n, lhs, last ? xprintf("%lld - 1 - T[%s]", n, kept) : xprintf("T[%s]", kept)));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* Gelu (opset 20): x Phi(x) by erf, or its tanh approximation. */
static bool op_gelu(Imp *I) {
  if (!attrs_known(I, "approximate")) return false;
  const char *ap = attr_s(I, "approximate", "none");
  if (strcmp(ap, "none") && strcmp(ap, "tanh")) return imp_unsupported(I, "approximate '%s'", ap);
  return unary(I, "Gelu", !strcmp(ap, "tanh") ? "0.5 * $0 * (1.0 + tanh(0.7978845608028654 * ($0 + 0.044715 * $0 * $0 * $0)))"
                                              : "0.5 * $0 * (1.0 + erf($0 * 0.7071067811865476))");
}

/* ---- the table ------------------------------------------------------------------- */

bool onnx_op_known(const char *op) {
  static const char *const known[] = {
      "Relu", "Sigmoid", "Tanh", "Sqrt", "Exp", "Log", "Neg", "Abs", "Floor", "Ceil", "Reciprocal", "HardSwish",
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Constant", "Shape", "ConstantOfShape", "Range", "Equal",
      "Where", "Less", "Greater", "Not", "And", "Or", "Mod", "LeakyRelu", "HardSigmoid", "Clip", "Conv", "MaxPool",
      "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
      "ReduceSumSquare", "Softmax", "LogSoftmax", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
      "Concat", "Gemm", "MatMul", "BatchNormalization", "Gather", "Slice", "Expand", "Cast", "Identity", "Dropout",
      "Split", "LayerNormalization", "ConvTranspose", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
      "Sinh", "Cosh", "Round", "Sign", "Softplus", "Softsign", "Asinh", "Acosh", "Atanh", "Elu", "Selu", "Celu",
      "ThresholdedRelu", "Shrink", "PRelu", "Sum", "Mean", "ReduceL1", "ReduceL2", "ReduceLogSum", "IsNaN", "Gelu",
      "GatherND", "ArgMax", "ArgMin",
      "ReduceLogSumExp", "ReduceProd", "Pad", "DepthToSpace", "SpaceToDepth", "Tile", "InstanceNormalization",
      "Resize", "Upsample", "LRN", "GatherElements", "Hardmax", "Einsum", "CumSum", "Size", "Trilu",
      "MeanVarianceNormalization", "Mish", "LessOrEqual", "GreaterOrEqual", "ScatterND", "ScatterElements",
      "Scatter"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(op, known[i])) return true;
  return false;
}

/* Opsets before 11 (ONNX's Changelog.md, operator by operator): the first opset of each
 * operator, and where an older version means something else than what onnx_op reads. An
 * operator not listed is read alike from opset 1 (its older versions differ only in
 * attributes that onnx_op refuses by name: consumed_inputs, broadcast, axis of the
 * binary operators, is_test, ...; or in types and negative axes). */
static const struct {
  const char *op;
  int first; /* the operator exists from this opset */
  int same;  /* read as onnx_op reads it from this opset (0: from FIRST) */
  const char *why;
} opset_rules[] = {
    {"Reshape", 1, 5, "Reshape-1 takes the shape as an attribute"},
    {"Cast", 1, 6, "Cast-1 names the type `to` as a string"},
    {"Dropout", 1, 7, "Dropout-1 and -6 drop at random unless is_test is set"},
    {"Expand", 8, 0, NULL},
    {"Tile", 1, 6, "Tile-1 takes the tiles and the axis as inputs"},
    {"Resize", 10, 0, NULL},
    {"GatherElements", 11, 0, NULL},
    {"Einsum", 12, 0, NULL},
    {"Size", 1, 0, NULL},
    {"Trilu", 14, 0, NULL},
    {"MeanVarianceNormalization", 9, 0, NULL},
    {"Mish", 18, 0, NULL},
    {"LessOrEqual", 12, 0, NULL},
    {"ScatterND", 11, 0, NULL},
    {"ScatterElements", 11, 0, NULL},
    {"Scatter", 9, 0, NULL},
    {"GreaterOrEqual", 12, 0, NULL},
    {"CumSum", 11, 0, NULL},
    {"Upsample", 1, 7, "Upsample-1 takes height_scale and width_scale"},
    {"Pad", 2, 0, NULL},
    {"Asinh", 9, 0, NULL},
    {"Acosh", 9, 0, NULL},
    {"Atanh", 9, 0, NULL},
    {"Shrink", 9, 0, NULL},
    {"Celu", 12, 0, NULL},
    {"ThresholdedRelu", 10, 0, NULL},
    {"Erf", 9, 0, NULL},
    {"IsNaN", 9, 0, NULL},
    {"Gelu", 20, 0, NULL},
    {"GatherND", 11, 0, NULL},
    {"Sign", 9, 0, NULL},
    {"Sinh", 9, 0, NULL},
    {"Cosh", 9, 0, NULL},
    {"Where", 9, 0, NULL},
    {"ConstantOfShape", 9, 0, NULL},
    {"Sin", 7, 0, NULL},
    {"Cos", 7, 0, NULL},
    {"Tan", 7, 0, NULL},
    {"Asin", 7, 0, NULL},
    {"Acos", 7, 0, NULL},
    {"Atan", 7, 0, NULL},
    {"Mod", 10, 0, NULL},
    {"Round", 11, 0, NULL},
    {"Range", 11, 0, NULL},
    {"HardSwish", 14, 0, NULL},
    {"LayerNormalization", 17, 0, NULL},
};

/* Does the node's operator mean in this opset what onnx_op reads? false: reported. */
static bool opset_ok(Imp *I, const char *op) {
  for (size_t i = 0; i < sizeof opset_rules / sizeof opset_rules[0]; i++) {
    if (strcmp(op, opset_rules[i].op)) continue;
    if (I->opset < opset_rules[i].first)
      return imp_unsupported(I, "%s in opset %d (it exists from opset %d)", op, I->opset, opset_rules[i].first);
    if (I->opset < opset_rules[i].same)
      return imp_unsupported(I, "%s in opset %d (%s; from opset %d as texc reads it)", op, I->opset, opset_rules[i].why,
                             opset_rules[i].same);
  }
  /* auto_pad SAME_*: before opset 11 the output is as large as the input (Conv-1,
   * ConvTranspose-1, the pools); from 11, input / strides (input * strides): alike only for
   * strides 1 */
  const Onnx__AttributeProto *ap = attr(I, "auto_pad"), *st = attr(I, "strides");
  if (I->opset < 11 && ap && ap->has_s && ap->s.len >= 4 && !memcmp(ap->s.data, "SAME", 4) && st)
    for (size_t i = 0; i < st->n_ints; i++)
      if (st->ints[i] != 1)
        return imp_unsupported(I, "auto_pad SAME_* with strides other than 1 in opset %d (before 11 it meant the input's size)", I->opset);
  return true;
}

static bool dispatch(Imp *I, const char *op);

/* Arithmetic and data movement of integers make integers: when every input of such an
 * operator is integer-valued (a constant of an integer type, or run-time integers) and one
 * is at run time, its float outputs are integers held as f32 (Val.fint): a Gather reads them
 * as indices, a Cast as what they are (RoBERTa's positions: a cumulative sum of the mask
 * times the mask, plus the padding index). Where's condition is not counted. */
static void int_result(Imp *I, const char *op, bool moves) {
  static const char *const arith[] = {"Add", "Sub", "Mul", "Neg", "Abs", "Max", "Min", "Sum", "CumSum", "Where",
                                      "ReduceSum", "ReduceMax", "ReduceMin", "Identity"};
  bool listed = moves;
  for (size_t i = 0; i < sizeof arith / sizeof arith[0]; i++) listed |= !strcmp(op, arith[i]);
  if (!listed) return;
  bool run_time = false;
  for (int k = !strcmp(op, "Where"); k < nin(I); k++) {
    Val *v = in(I, k);
    if (!v) continue;
    if (!int_valued(v)) return;
    run_time |= !v->c;
  }
  for (size_t k = 0; run_time && k < I->node->n_output; k++) {
    Val *o = *I->node->output[k] ? imp_val(I, I->node->output[k]) : NULL;
    if (o && !o->c && o->dtype == OT_FLOAT) o->dtype = OT_INT64, o->fint = true;
  }
}

/* Node I->node; the outputs of an operator that only moves data (a reshape, a gather, a
 * transpose...) of a run-time mask are masks too. */
bool onnx_op(Imp *I) {
  const char *op = I->node->op_type;
  if (!opset_ok(I, op) || !dispatch(I, op)) return false;
  static const char *const movers[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Gather",
                                       "GatherND", "GatherElements", "Slice", "Expand", "Split", "Tile"};
  Val *x = nin(I) ? in(I, 0) : NULL;
  bool moves = false;
  for (size_t i = 0; i < sizeof movers / sizeof movers[0]; i++) moves |= !strcmp(op, movers[i]);
  if (moves && x && !x->c && x->dtype == OT_BOOL)
    for (size_t k = 0; k < I->node->n_output; k++) {
      Val *o = *I->node->output[k] ? imp_val(I, I->node->output[k]) : NULL;
      if (o && !o->c) o->dtype = OT_BOOL;
    }
  int_result(I, op, moves);
  return true;
}

static bool dispatch(Imp *I, const char *op) {
  /* unary float operators: their expression over $0 */
  static const char *const un[][2] = {
      {"Relu", "max($0, 0.0)"},     {"Sigmoid", "sigmoid($0)"}, {"Tanh", "tanh($0)"},         {"Sqrt", "sqrt($0)"},
      {"Exp", "exp($0)"},           {"Log", "log($0)"},         {"Neg", "-$0"},               {"Abs", "abs($0)"},
      {"Floor", "floor($0)"},       {"Ceil", "ceil($0)"},       {"Reciprocal", "1.0 / $0"},
      {"HardSwish", "$0 * max(0.0, min(1.0, $0 / 6.0 + 0.5))"},
      {"Erf", "erf($0)"},           {"Sin", "sin($0)"},         {"Cos", "cos($0)"},           {"Tan", "tan($0)"},
      {"Asin", "asin($0)"},         {"Acos", "acos($0)"},       {"Atan", "atan($0)"},         {"Sinh", "sinh($0)"},
      {"Cosh", "cosh($0)"},         {"Round", "round($0)"},     {"Sign", "sign($0)"},
      {"Softplus", "log1p(exp($0))"}, {"Softsign", "$0 / (1.0 + abs($0))"},
      /* accurate near 0 (log1p) and for negative x (asinh is odd) */
      {"Asinh", "sign($0) * log1p(abs($0) + $0 * $0 / (1.0 + sqrt($0 * $0 + 1.0)))"},
      {"Acosh", "log1p($0 - 1.0 + sqrt(($0 - 1.0) * ($0 + 1.0)))"},
      {"Atanh", "0.5 * (log1p($0) - log1p(-$0))"},
      {"Mish", "$0 * tanh(log1p(exp($0)))"},
  };
  for (size_t i = 0; i < sizeof un / sizeof un[0]; i++)
    if (!strcmp(op, un[i][0])) return attrs_known(I, "") && unary(I, op, un[i][1]);
  static const char *const bin[][2] = {{"Add", "+"}, {"Sub", "-"}, {"Mul", "*"}, {"Div", "/"},
                                       {"Pow", "pow"}, {"Max", "max"}, {"Min", "min"}};
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
    if (!strcmp(op, bin[i][0])) {
      if ((!strcmp(op, "Max") || !strcmp(op, "Min")) && nin(I) != 2) return attrs_known(I, "") && variadic(I, op);
      if (nin(I) != 2) return imp_error(I, "%d inputs (2)", nin(I));
      return attrs_known(I, "") && binary(I, op, bin[i][1]);
    }
  if (!strcmp(op, "Constant")) return op_constant(I);
  if (!strcmp(op, "Shape")) return op_shape(I);
  if (!strcmp(op, "ConstantOfShape")) return attrs_known(I, "value") && op_constant_of_shape(I);
  if (!strcmp(op, "Range")) return op_range(I);
  if (!strcmp(op, "Split")) return op_split(I);
  if (!strcmp(op, "LayerNormalization")) return op_layer_norm(I);
  if (!strcmp(op, "Where")) return op_where(I);
  if (!strcmp(op, "Gelu")) return op_gelu(I);
  if (!strcmp(op, "ArgMax") || !strcmp(op, "ArgMin")) return op_argmax(I, !strcmp(op, "ArgMax"));
  if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "LessOrEqual") ||
      !strcmp(op, "GreaterOrEqual") || !strcmp(op, "Not") || !strcmp(op, "And") || !strcmp(op, "Or") || !strcmp(op, "IsNaN"))
    return op_logic(I, op);
  if (!strcmp(op, "Mod")) return attrs_known(I, "fmod") && fold_only(I, op);
  if (!strcmp(op, "LeakyRelu")) return op_leaky_relu(I);
  if (!strcmp(op, "HardSigmoid")) return op_hard_sigmoid(I);
  if (!strcmp(op, "Clip")) return op_clip(I);
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
  if (!strcmp(op, "Elu") || !strcmp(op, "Selu") || !strcmp(op, "Celu") || !strcmp(op, "ThresholdedRelu") ||
      !strcmp(op, "Shrink"))
    return op_activation(I, op);
  if (!strcmp(op, "PRelu")) return op_prelu(I);
  if (!strcmp(op, "Sum")) return op_sum_mean(I, false);
  if (!strcmp(op, "Mean")) return op_sum_mean(I, true);
  if (!strcmp(op, "Pad")) return op_pad(I);
  if (!strcmp(op, "DepthToSpace")) return op_depth_space(I, true);
  if (!strcmp(op, "SpaceToDepth")) return op_depth_space(I, false);
  if (!strcmp(op, "Tile")) return op_tile(I);
  if (!strcmp(op, "InstanceNormalization")) return op_instance_norm(I);
  if (!strcmp(op, "Resize")) return op_resize(I, false);
  if (!strcmp(op, "Upsample")) return op_resize(I, true);
  if (!strcmp(op, "LRN")) return op_lrn(I);
  if (!strcmp(op, "GatherElements")) return op_gather_elements(I);
  if (!strcmp(op, "Hardmax")) return op_hardmax(I);
  if (!strcmp(op, "Einsum")) return op_einsum(I);
  if (!strcmp(op, "CumSum")) return op_cumsum(I);
  if (!strcmp(op, "Size")) return op_size(I);
  if (!strcmp(op, "Trilu")) return op_trilu(I);
  if (!strcmp(op, "MeanVarianceNormalization")) return op_mvn(I);
  if (!strcmp(op, "ScatterND")) return op_scatter_nd(I);
  if (!strcmp(op, "ScatterElements") || !strcmp(op, "Scatter")) return op_scatter_elements(I);
  if (!strcmp(op, "Softmax")) return op_softmax(I, false);
  if (!strcmp(op, "LogSoftmax")) return op_softmax(I, true);
  if (!strcmp(op, "Reshape")) return op_reshape(I);
  if (!strcmp(op, "Flatten")) return op_flatten(I);
  if (!strcmp(op, "Squeeze")) return op_squeeze(I, false);
  if (!strcmp(op, "Unsqueeze")) return op_squeeze(I, true);
  if (!strcmp(op, "Transpose")) return op_transpose(I);
  if (!strcmp(op, "Concat")) return op_concat(I);
  if (!strcmp(op, "Gemm")) return op_gemm(I);
  if (!strcmp(op, "MatMul")) return op_matmul(I);
  if (!strcmp(op, "BatchNormalization")) return op_batch_norm(I);
  if (!strcmp(op, "Gather")) return op_gather(I);
  if (!strcmp(op, "GatherND")) return op_gather_nd(I);
  if (!strcmp(op, "Slice")) return op_slice(I);
  if (!strcmp(op, "Expand")) return attrs_known(I, "") && op_expand(I);
  if (!strcmp(op, "Cast")) return op_cast(I);
  if (!strcmp(op, "Identity")) return attrs_known(I, "") && one_output(I) && (in(I, 0) ? alias(I, in(I, 0)) : imp_error(I, "input 1 is missing"));
  if (!strcmp(op, "Dropout")) return op_dropout(I);
  return imp_unsupported(I, "operator %s", op);
}
