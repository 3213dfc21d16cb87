/* onnx_ops.c — one ONNX node at a time (docs/ONNX.md lists the operators): the operator
 * table (onnx_op: which operators exist, in which opsets, and the dispatch), the helpers
 * every operator file shares (a node's inputs and attributes, kernel text, broadcasting,
 * constant folding, elementwise kernels), and the elementwise operators themselves
 * (arithmetic, activations, comparisons and masks, Cast, Where, constants and shapes).
 * onnx_nn.c and onnx_layout.c hold the other operators.
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

const Onnx__AttributeProto *imp_attr(Imp *I, const char *name) {
  for (size_t i = 0; i < I->node->n_attribute; i++)
    if (strcmp(I->node->attribute[i]->name, name) == 0) return I->node->attribute[i];
  return NULL;
}

/* Is NAME an attribute of geometry (pads, strides, a kernel's shape, groups, a block
 * size), whose values texc computes with, and V out of the range such values can have
 * (|V| < 2^31)? Then the value is an error: an import went on to overflow with it
 * (2^63 - 1 strides, found by mutating models). */
static bool geometry_out_of_range(Imp *I, const char *name, int64_t v) {
  static const char *const geometry[] = {"pads", "strides", "dilations", "kernel_shape", "output_padding", "output_shape",
                                         "group", "blocksize"};
  if (v > -(INT64_C(1) << 31) && v < (INT64_C(1) << 31)) return false;
  for (size_t i = 0; i < sizeof geometry / sizeof geometry[0]; i++)
    if (!strcmp(name, geometry[i])) return imp_error(I, "attribute '%s' is %lld, out of range", name, (long long)v), true;
  return false;
}

int64_t imp_attr_i(Imp *I, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = imp_attr(I, name);
  if (a && a->has_i && geometry_out_of_range(I, name, a->i)) return def;
  return a && a->has_i ? a->i : def;
}

double imp_attr_f(Imp *I, const char *name, double def) {
  const Onnx__AttributeProto *a = imp_attr(I, name);
  return a && a->has_f ? a->f : def;
}

const char *imp_attr_s(Imp *I, const char *name, const char *def) {
  const Onnx__AttributeProto *a = imp_attr(I, name);
  return a && a->has_s ? xprintf("%.*s", (int)a->s.len, (const char *)a->s.data) : def;
}

/* The ints of attribute NAME into OUT (at most MAX); their number, -1 when absent. */
int imp_attr_ints(Imp *I, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = imp_attr(I, name);
  if (!a) return -1;
  if (a->n_ints > (size_t)max) /* the import fails (I->failed); the caller goes on as without it */
    return imp_error(I, "attribute '%s' has %zu values (at most %d here)", name, a->n_ints, max), -1;
  int n = (int)a->n_ints;
  for (int i = 0; i < n; i++)
    if (geometry_out_of_range(I, name, a->ints[i])) return -1;
  for (int i = 0; i < n; i++) out[i] = a->ints[i];
  return n;
}

const char *imp_type_name(int dt) {
  static const char *const names[] = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                      "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
                                      "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
                                      "float8e5m2fnuz", "uint4", "int4", "float4e2m1"};
  return dt >= 0 && dt < (int)(sizeof names / sizeof names[0]) ? names[dt] : "unknown";
}

/* Every attribute of the node is in the comma-separated list KNOWN; else unsupported. */
bool imp_attrs_known(Imp *I, const char *known) {
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
Val *imp_in(Imp *I, int k) {
  if ((size_t)k >= I->node->n_input || !*I->node->input[k]) return NULL;
  return imp_val(I, I->node->input[k]);
}

int imp_nin(Imp *I) {
  return (int)I->node->n_input;
}

/* Input K must be present and constant. */
Val *imp_const_in(Imp *I, int k, const char *what) {
  Val *v = imp_in(I, k);
  if (!v) return imp_error(I, "input %d (%s) is missing", k + 1, what), NULL;
  if (!v->c) return imp_unsupported(I, "input %d (%s) computed at run time; it must be a constant", k + 1, what), NULL;
  return v;
}


/* Input K, present and a float network tensor or constant; run-time integers (token ids
 * and what arithmetic makes of them) as f32 values, exact to 2^24 (int_as_f32). */
Val *imp_float_in(Imp *I, int k) {
  Val *v = imp_in(I, k);
  if (!v) return imp_error(I, "input %d is missing", k + 1), NULL;
  if (!v->c && (v->dtype == OT_INT64 || v->dtype == OT_INT32)) return imp_int_as_f32(I, v);
  if (!v->c && v->dtype != OT_FLOAT) return imp_unsupported(I, "input %d of element type %s (networks are f32)", k + 1, imp_type_name(v->dtype)), NULL;
  return v;
}

/* An operator of two outputs: a third is an error. */
bool imp_two_outputs(Imp *I) {
  for (size_t k = 2; k < I->node->n_output; k++)
    if (*I->node->output[k]) return imp_error(I, "output %zu ('%s'): %s has two", k + 1, I->node->output[k], I->node->op_type);
  return true;
}

bool imp_one_output(Imp *I) {
  for (size_t k = 1; k < I->node->n_output; k++)
    if (*I->node->output[k]) return imp_unsupported(I, "output %zu ('%s')", k + 1, I->node->output[k]);
  return true;
}

/* A normalized axis of a rank-R tensor; -1 (reported) when out of range. */
int imp_axis_of(Imp *I, int64_t a, int r) {
  if (a < -r || a >= r) return imp_error(I, "axis %lld outside rank %d", (long long)a, r), -1;
  return (int)(a < 0 ? a + r : a);
}

/* ---- text helpers ---------------------------------------------------------------- */

/* A float literal of the language: always with '.' or an exponent; +-inf as 1.0e39, an f32
 * literal beyond FLT_MAX, which is infinity (FLT_MAX would not be: a mask's -inf cast to
 * float16 and compared with -inf, or -inf - -inf, would differ from the model's). */
char *imp_flit(double v) {
  if (isinf(v)) return xstrdup(v > 0 ? "1.0e39" : "(-1.0e39)");
  char *s = xprintf("%.9g", fabs(v));
  if (!strpbrk(s, ".e")) s = xprintf("%s.0", s);
  return v < 0 ? xprintf("(-%s)", s) : s;
}

char *imp_dims_text(const int64_t *shape, int nd) {
  if (nd == 0) return xstrdup("1");
  char *s = xstrdup("");
  for (int d = 0; d < nd; d++) s = xprintf("%s%s%lld", s, d ? ", " : "", (long long)shape[d]);
  return s;
}

/* Is V a run-time integer tensor held as integers (token ids: i64 / i32)? */
bool imp_run_time_int(const Val *v) { return !v->c && (v->dtype == OT_INT64 || v->dtype == OT_INT32) && !v->fint; }

/* Run-time index expression of element IDX of IX (integers, or integers held as f32). */
char *imp_int_at(const Val *ix, const char *name, const char *idx_text) {
  return ix->fint ? xprintf("i64(%s[%s])", name, idx_text) : xprintf("%s[%s]", name, idx_text);
}

/* Is V an integer value: a constant of an integer type, or run-time integers held either way? */
static bool int_valued(const Val *v) { return v->dtype == OT_INT64 || v->dtype == OT_INT32; }

/* V's type in kernel text: f32 (masks too: 0 and 1; constants become f32 weights), or i64
 * / i32 for run-time integers. */
char *imp_ty(const Val *v) {
  return xprintf("%s[%s]", !imp_run_time_int(v) ? "f32" : v->dtype == OT_INT64 ? "i64" : "i32", imp_dims_text(v->shape, v->ndim));
}

/* "i0, i1, ..." for rank ND (rank 0: "i0"). */
char *imp_idx(const char *p, int nd) {
  char *s = xstrdup("");
  for (int d = 0; d < (nd ? nd : 1); d++) s = xprintf("%s%s%s%d", s, d ? ", " : "", p, d);
  return s;
}

/* A new output value K: a float network tensor named after it. */
Val *imp_net_out(Imp *I, int k, int nd, const int64_t *shape) {
  Val *v = imp_out(I, k, OT_FLOAT, nd, shape);
  v->tex = imp_name(I, v->name);
  return v;
}

/* Output K of the element type of X, which it moves: an integer for a run-time integer X, a
 * mask for a mask, else float. */
Val *imp_net_out_like(Imp *I, int k, int nd, const int64_t *shape, const Val *x) {
  Val *v = imp_net_out(I, k, nd, shape);
  if (!x->c && (imp_run_time_int(x) || x->dtype == OT_BOOL)) v->dtype = x->dtype;
  return v;
}

/* Run-time integers V as an f32 value (a kernel converting them, made once): what the
 * float operators read; integers beyond 2^24 would round (token ids and positions do not
 * come near). A value already held as f32 is itself. */
Val *imp_int_as_f32(Imp *I, Val *v) {
  if (v->fint) return v;
  Val *f = xalloc(sizeof *f);
  *f = *v;
  f->dtype = OT_FLOAT;
  f->other = NULL;
  if (!v->as_f32) {
    v->as_f32 = imp_name(I, xprintf("%s_f32", v->name));
    char *ix = imp_idx("i", v->ndim);
    const char *kn = imp_kernel(I, "to_float", xprintf("(X: %s) -> Y: f32[%s] {\n  Y[%s] = f32(X[%s])\n}", imp_ty(v),
                                                       imp_dims_text(v->shape, v->ndim), ix, ix));
    imp_call(I, v->as_f32, kn, v->tex);
  }
  f->tex = v->as_f32;
  return f;
}

/* Output 0 as an alias of V (Identity, Dropout, Reshape to the same shape). */
bool imp_alias(Imp *I, Val *v) {
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
bool imp_broadcast(Imp *I, const int64_t *a_in, int na, const int64_t *b_in, int nb, int64_t *out, int *no) {
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
int64_t imp_bidx(const int64_t *sh, int ns, const int64_t *idxs, int no) {
  int64_t f = 0;
  for (int d = 0; d < ns; d++) {
    int64_t i = sh[d] == 1 ? 0 : idxs[d + no - ns];
    f = f * sh[d] + i;
  }
  return f;
}

/* The access of V at the output's index i0.. (rank NO), broadcast. */
char *imp_baccess(const char *name, const Val *v, const int64_t *oshape, int no) {
  if (v->ndim == 0) return xprintf("%s[0]", name);
  char *s = xprintf("%s[", name);
  for (int d = 0; d < v->ndim; d++) {
    int od = d + no - v->ndim;
    s = xprintf("%s%s%s", s, d ? ", " : "", v->shape[d] == 1 && oshape[od] != 1 ? "0" : xprintf("i%d", od));
  }
  return xprintf("%s]", s);
}

/* ---- constant folding ------------------------------------------------------------ */

double *imp_vals(int64_t n) {
  /* a constant computed at import (folded) of more values than this is refused: a model
   * asking for 2^61 (an EyeLike of a mutated shape) wrapped the size and overflowed */
  if (n < 0 || n > IMP_MAX_FOLD) {
    if (imp_now) imp_unsupported(imp_now, "a constant of %lld values to compute at import (at most %lld)", (long long)n,
                                 (long long)IMP_MAX_FOLD);
    else fprintf(stderr, "texc: error: a constant of %lld values to compute at import (at most %lld)\n", (long long)n,
                 (long long)IMP_MAX_FOLD);
    exit(1);
  }
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  if (!v) die_oom(sizeof(double) * (size_t)n);
  return v;
}

/* A constant output K. */
Val *imp_const_out(Imp *I, int k, int dtype, int nd, const int64_t *shape, double *c) {
  Val *v = imp_out(I, k, dtype, nd, shape);
  v->c = c;
  return v;
}

int imp_held_type(int dt) {
  return dt == OT_FLOAT16 || dt == OT_BFLOAT16 || dt == OT_DOUBLE ? OT_FLOAT : dt;
}

/* bfloat16: the top half of an f32, rounded to nearest even (NaN kept a NaN). */
static float round_bf16(float f) {
  union { float f; uint32_t u; } b = {f};
  if (isnan(f)) return f;
  b.u = (b.u + 0x7fffu + ((b.u >> 16) & 1u)) & 0xffff0000u;
  return b.f;
}

double imp_round_to(int dt, double x) {
  switch (dt) {
  case OT_FLOAT: return (float)x;
  case OT_FLOAT16: return f16_to_f32(f32_to_f16((float)x));
  case OT_BFLOAT16: return round_bf16((float)x);
  case OT_DOUBLE: return x;
  case OT_BOOL: return x != 0;
  default: return isfinite(x) ? trunc(x) : 0;
  }
}

static bool is_int(int dtype) {
  return imp_held_type(dtype) != OT_FLOAT;
}

/* One elementwise operation on folded values, in double precision (rounded to the type
 * by the caller); attributes from the node (I). */
static double fold_value(Imp *I, const char *op, int dt, double a, double b, double c);

bool imp_one_of(const char *s, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(s, list[i])) return true;
  return false;
}

/* Every operator fold_value knows: a constant input to any other is refused (it would
 * otherwise fold as the identity: a wrong model, not an error). */
static bool foldable(const char *op) {
  static const char *const ops[] = {
      "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
      "Or", "Max", "Min", "Where", "Neg", "Abs", "Not", "Sqrt", "Exp", "Log", "Relu", "Floor", "Ceil", "Reciprocal",
      "Sigmoid", "Tanh", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Round", "Sign",
      "Softplus", "Softsign", "HardSwish", "LeakyRelu", "HardSigmoid", "Elu", "Selu", "Celu", "ThresholdedRelu",
      "Shrink", "Asinh", "Acosh", "Atanh", "Mish", "PRelu", "Identity", "Cast", "IsNaN", "Gelu", "IsInf", "Xor", "Swish"};
  return IMP_ONE_OF(op, ops);
}

static double fold_value(Imp *I, const char *op, int dt, double a, double b, double c) {
  int64_t fmod_attr = imp_attr_i(I, "fmod", 0);
  if (!strcmp(op, "Add")) return a + b;
  if (!strcmp(op, "Sub")) return a - b;
  if (!strcmp(op, "Mul")) return a * b;
  if (!strcmp(op, "Div")) return is_int(dt) ? (b == 0 ? 0 : trunc(a / b)) : a / b;
  if (!strcmp(op, "Mod")) { /* integers by 0: 0 (ONNX leaves it undefined); floats as the kernels' (int_div_mod) */
    if (b == 0 && is_int(dt)) return 0;
    if (fmod_attr) return fmod(a, b);
    if (!is_int(dt) && isinf(b) && isfinite(a)) return a == 0 || (a < 0) == (b < 0) ? copysign(a, b) : b;
    double r = fmod(a, b); /* floor division's remainder: the divisor's sign, a zero one too */
    return r != 0 && (r < 0) != (b < 0) ? r + b : is_int(dt) || r != 0 ? r : copysign(0.0, b);
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
  if (!strcmp(op, "IsInf"))
    return isinf(a) && (a > 0 ? imp_attr_i(I, "detect_positive", 1) != 0 : imp_attr_i(I, "detect_negative", 1) != 0);
  if (!strcmp(op, "Xor")) return (a != 0) != (b != 0);
  if (!strcmp(op, "Gelu"))
    return !strcmp(imp_attr_s(I, "approximate", "none"), "tanh") ? 0.5 * a * (1 + tanh(sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)))
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
  if (!strcmp(op, "LeakyRelu")) return a >= 0 ? a : (float)imp_attr_f(I, "alpha", 0.01) * a;
  if (!strcmp(op, "HardSigmoid"))
    return fmax(0, fmin(1, (float)imp_attr_f(I, "alpha", 0.2) * a + (float)imp_attr_f(I, "beta", 0.5)));
  if (!strcmp(op, "Elu")) return a >= 0 ? a : (float)imp_attr_f(I, "alpha", 1) * expm1(a);
  if (!strcmp(op, "Selu"))
    return (float)imp_attr_f(I, "gamma", SELU_GAMMA) * (a > 0 ? a : (float)imp_attr_f(I, "alpha", SELU_ALPHA) * expm1(a));
  if (!strcmp(op, "Celu")) {
    double al = (float)imp_attr_f(I, "alpha", 1);
    return fmax(0, a) + fmin(0, al * expm1(a / al));
  }
  if (!strcmp(op, "ThresholdedRelu")) return a > (float)imp_attr_f(I, "alpha", 1) ? a : 0;
  if (!strcmp(op, "Swish")) return a / (1 + exp(-(float)imp_attr_f(I, "alpha", 1) * a));
  if (!strcmp(op, "Shrink")) {
    double l = (float)imp_attr_f(I, "lambd", 0.5), bias = (float)imp_attr_f(I, "bias", 0);
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
  int n = imp_nin(I) < 3 ? imp_nin(I) : 3;
  if (n < 1) return imp_error(I, "no inputs");
  int no = 0;
  int64_t os[HT_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    x[k] = imp_in(I, k);
    if (!x[k]) return imp_error(I, "input %d is missing", k + 1);
    if (!imp_broadcast(I, os, no, x[k]->shape, x[k]->ndim, os, &no)) return false;
  }
  int dt = x[strcmp(op, "Where") == 0 ? 1 : 0]->dtype;
  if (!strcmp(op, "Cast")) dt = (int)imp_attr_i(I, "to", OT_FLOAT);
  bool logic = !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "LessOrEqual") ||
               !strcmp(op, "GreaterOrEqual") || !strcmp(op, "And") || !strcmp(op, "Or") || !strcmp(op, "Not") ||
               !strcmp(op, "IsNaN") || !strcmp(op, "IsInf") || !strcmp(op, "Xor");
  Val tmp = {.ndim = no};
  memcpy(tmp.shape, os, sizeof os);
  int64_t total = val_numel(&tmp), ix[HT_MAX_DIMS] = {0};
  double *c = imp_vals(total);
  for (int64_t i = 0; i < total; i++) {
    int64_t r = i;
    for (int d = no - 1; d >= 0; d--) ix[d] = r % os[d], r /= os[d];
    double a = x[0]->c[imp_bidx(x[0]->shape, x[0]->ndim, ix, no)];
    double b = n > 1 ? x[1]->c[imp_bidx(x[1]->shape, x[1]->ndim, ix, no)] : 0;
    double cc = n > 2 ? x[2]->c[imp_bidx(x[2]->shape, x[2]->ndim, ix, no)] : 0;
    c[i] = imp_round_to(logic ? OT_BOOL : dt, fold_value(I, op, dt, a, b, cc));
  }
  imp_const_out(I, 0, logic ? OT_BOOL : dt, no, os, c);
  return true;
}

/* Constant: its tensor or scalar attribute. */
static bool op_constant(Imp *I) {
  const Onnx__AttributeProto *a = I->node->n_attribute == 1 ? I->node->attribute[0] : NULL;
  if (!a) return imp_error(I, "a Constant needs exactly one value attribute");
  int64_t one = 1;
  if (!strcmp(a->name, "value") && a->t) {
    const Onnx__TensorProto *tp = a->t;
    const char *why;
    double *c;
    int64_t n;
    if (tp->n_dims > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
    if (!imp_tensor_values(tp, &c, &n, &why))
      return strncmp(why, "not supported: ", 15) ? imp_error(I, "%s", why) : imp_unsupported(I, "%s", why + 15);
    imp_const_out(I, 0, tp->data_type, (int)tp->n_dims, tp->dims, c);
    return true;
  }
  if (!strcmp(a->name, "value_float")) {
    double *c = imp_vals(1);
    c[0] = a->f;
    imp_const_out(I, 0, OT_FLOAT, 0, &one, c);
    return true;
  }
  if (!strcmp(a->name, "value_int")) {
    double *c = imp_vals(1);
    c[0] = (double)a->i;
    imp_const_out(I, 0, OT_INT64, 0, &one, c);
    return true;
  }
  if (!strcmp(a->name, "value_ints") || !strcmp(a->name, "value_floats")) {
    bool f = a->name[6] == 'f';
    int64_t n = f ? (int64_t)a->n_floats : (int64_t)a->n_ints;
    double *c = imp_vals(n);
    for (int64_t i = 0; i < n; i++) c[i] = f ? (double)a->floats[i] : (double)a->ints[i];
    imp_const_out(I, 0, f ? OT_FLOAT : OT_INT64, 1, &n, c);
    return true;
  }
  return imp_unsupported(I, "attribute '%s'", a->name);
}

/* Shape: the input's shape (run-time inputs too: shapes are static). */
static bool op_shape(Imp *I) {
  Val *x = imp_in(I, 0);
  if (!x || !imp_attrs_known(I, "start,end")) return x ? false : imp_error(I, "input 1 is missing");
  int64_t s = imp_attr_i(I, "start", 0), e = imp_attr_i(I, "end", x->ndim);
  if (s < 0) s += x->ndim;
  if (e < 0) e += x->ndim;
  s = s < 0 ? 0 : s > x->ndim ? x->ndim : s;
  e = e < s ? s : e > x->ndim ? x->ndim : e;
  int64_t n = e - s;
  double *c = imp_vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = (double)x->shape[s + i];
  imp_const_out(I, 0, OT_INT64, 1, &n, c);
  return true;
}

/* A constant 1-D int tensor as a shape (dims >= 0) into OUT; its length or -1. */
int imp_shape_from(Imp *I, Val *v, int64_t *out) {
  if (v->ndim > 1 || val_numel(v) > HT_MAX_DIMS) return imp_unsupported(I, "a shape of more than 8 dimensions"), -1;
  int n = (int)val_numel(v);
  for (int i = 0; i < n; i++) out[i] = (int64_t)v->c[i];
  return n;
}


/* A result shape the importer can hold: no negative dimension, at most 2^30 elements (4 GiB
 * of f32; a scale or a repeat count from a corrupt model would otherwise ask for more memory
 * than the machine has). false: reported. */
bool imp_shape_ok(Imp *I, const int64_t *s, int nd) {
  int64_t n = 1;
  for (int d = 0; d < nd; d++) {
    if (s[d] < 0) return imp_error(I, "a negative dimension (%lld)", (long long)s[d]);
    if (s[d] > MAX_RESULT || (n *= s[d]) > MAX_RESULT)
      return imp_unsupported(I, "a result of more than 2^30 elements");
  }
  return true;
}

static bool op_constant_of_shape(Imp *I) {
  Val *s = imp_const_in(I, 0, "shape");
  if (!s) return false;
  int64_t shape[HT_MAX_DIMS];
  int nd = imp_shape_from(I, s, shape);
  if (nd < 0 || !imp_shape_ok(I, shape, nd)) return false;
  double v = 0;
  int dt = OT_FLOAT;
  const Onnx__AttributeProto *a = imp_attr(I, "value");
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
  double *c = imp_vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = v;
  imp_const_out(I, 0, dt, nd, shape, c);
  return true;
}

static bool op_range(Imp *I) {
  if (!imp_attrs_known(I, "stash_type")) return false;
  if (imp_attr_i(I, "stash_type", 1) != 1) /* opset 27: float16 / bfloat16 ranges computed in float (1) or their own type */
    return imp_unsupported(I, "stash_type %lld (a range accumulated in float16 or bfloat16)", (long long)imp_attr_i(I, "stash_type", 1));
  Val *s = imp_const_in(I, 0, "start"), *l = s ? imp_const_in(I, 1, "limit") : NULL, *d = l ? imp_const_in(I, 2, "delta") : NULL;
  if (!d) return false;
  double st = s->c[0], lim = l->c[0], de = d->c[0];
  if (de == 0) return imp_error(I, "delta is 0");
  double len = fmax(ceil((lim - st) / de), 0);
  if (!(len <= (double)MAX_RESULT)) return imp_unsupported(I, "a result of more than 2^30 elements");
  int64_t n = (int64_t)len;
  double *c = imp_vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = imp_round_to(s->dtype, st + (double)i * de);
  imp_const_out(I, 0, s->dtype, 1, &n, c);
  return true;
}

/* HannWindow, HammingWindow, BlackmanWindow (opset 17) of a constant size: folded, as ONNX's
 * reference computes them (in double, then the output type): over n = 0..size-1 with N =
 * size (periodic, the default) or size - 1. */
static bool op_window(Imp *I, const char *op) {
  if (!imp_attrs_known(I, "output_datatype,periodic") || !imp_one_output(I)) return false;
  Val *sz = imp_const_in(I, 0, "size");
  if (!sz) return false;
  if (val_numel(sz) != 1 || !(sz->c[0] >= 1 && sz->c[0] <= (double)MAX_RESULT)) return imp_unsupported(I, "size %g", val_numel(sz) ? sz->c[0] : 0.0);
  int64_t n = (int64_t)sz->c[0];
  int dt = (int)imp_attr_i(I, "output_datatype", OT_FLOAT);
  double N = imp_attr_i(I, "periodic", 1) ? (double)n : (double)n - 1, *c = imp_vals(n);
  for (int64_t i = 0; i < n; i++) {
    double x = (double)i;
    if (!strcmp(op, "HannWindow")) c[i] = pow(sin(x * M_PI / N), 2);
    else if (!strcmp(op, "HammingWindow")) c[i] = 25.0 / 46.0 - 21.0 / 46.0 * cos(2 * M_PI * x / N);
    else c[i] = 0.42 - 0.5 * cos(x * 2 * M_PI / N) + 0.08 * cos(x * 4 * M_PI / N);
    c[i] = imp_round_to(dt, c[i]);
  }
  imp_const_out(I, 0, dt, 1, &n, c);
  return true;
}

/* MelWeightMatrix (opset 17) of constant inputs: folded, as ONNX's reference computes it:
 * num_mel_bins + 2 edges equally spaced in mels (2595 log10(1 + f / 700), the ends in f32)
 * between lower_edge_hertz and upper_edge_hertz, each made a DFT bin, floor((dft_length +
 * 1) f / sample_rate); filter i rises from edge i to edge i + 1 and falls to edge i + 2.
 * [dft_length / 2 + 1, num_mel_bins]: a log-mel front end's product with the STFT's
 * magnitudes. */
static bool op_mel_weight_matrix(Imp *I) {
  if (!imp_attrs_known(I, "output_datatype") || !imp_one_output(I)) return false;
  static const char *const names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
  double a[5];
  for (int k = 0; k < 5; k++) {
    Val *v = imp_const_in(I, k, names[k]);
    if (!v) return false;
    if (val_numel(v) != 1) return imp_error(I, "%s is not a scalar", names[k]);
    a[k] = v->c[0];
  }
  int64_t mels = (int64_t)a[0], dft = (int64_t)a[1], rate = (int64_t)a[2], bins = dft / 2 + 1;
  if (mels < 1 || mels > 4096 || dft < 1 || dft > MAX_RESULT || rate < 1 || !(a[4] >= a[3]))
    return imp_unsupported(I, "num_mel_bins %lld, dft_length %lld, sample_rate %lld, edges %g to %g", (long long)mels, (long long)dft,
                           (long long)rate, a[3], a[4]);
  float lo = (float)(2595 * log10f((float)(1 + (float)a[3] / 700))), hi = (float)(2595 * log10f((float)(1 + (float)a[4] / 700)));
  float step = (hi - lo) / (float)(mels + 2);
  int64_t *edge = xalloc(sizeof *edge * (size_t)(mels + 2));
  for (int64_t i = 0; i < mels + 2; i++) {
    double hz = 700 * (pow(10, ((double)i * (double)step + (double)lo) / 2595) - 1);
    edge[i] = (int64_t)floor((double)(dft + 1) * hz / (double)rate);
  }
  double *c = imp_vals(bins * mels);
  for (int64_t j = 0; j < bins * mels; j++) c[j] = 0;
  for (int64_t i = 0; i < mels; i++) {
    int64_t l = edge[i], m = edge[i + 1], r = edge[i + 2];
    if (m - l == 0 && m >= 0 && m < bins) c[m * mels + i] = 1;
    for (int64_t j = l; m - l != 0 && j <= m; j++)
      if (j >= 0 && j < bins) c[j * mels + i] = (double)(j - l) / (double)(m - l);
    for (int64_t j = m; r - m > 0 && j < r; j++)
      if (j >= 0 && j < bins) c[j * mels + i] = (double)(r - j) / (double)(r - m);
  }
  int dt = (int)imp_attr_i(I, "output_datatype", OT_FLOAT);
  for (int64_t j = 0; j < bins * mels; j++) c[j] = imp_round_to(dt, c[j]);
  int64_t shape[2] = {bins, mels};
  imp_const_out(I, 0, dt, 2, shape, c);
  return true;
}

/* EyeLike: ones on the diagonal K of X's 2-D shape (X's values unread), of dtype (X's). */
static bool op_eye_like(Imp *I) {
  if (!imp_attrs_known(I, "dtype,k") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  if (x->ndim != 2) return imp_error(I, "input of rank %d (2)", x->ndim);
  int dt = (int)imp_attr_i(I, "dtype", x->dtype);
  int64_t k = imp_attr_i(I, "k", 0), n = val_numel(x);
  double *c = imp_vals(n);
  for (int64_t i = 0; i < n; i++) c[i] = i % x->shape[1] - i / x->shape[1] == k;
  imp_const_out(I, 0, dt, 2, x->shape, c);
  return true;
}

/* ---- generated kernels ----------------------------------------------------------- */

/* Y = EXPR at every point of the broadcast of inputs X[0..N) (or of OSHAPE when NO >= 0),
 * $K in EXPR standing for input K there. Constant scalars are literals. */
bool imp_ew_to(Imp *I, const char *base, Val **x, int n, const char *expr, const int64_t *oshape, int no_in) {
  int no = 0;
  int64_t os[HT_MAX_DIMS];
  if (no_in >= 0) {
    no = no_in;
    memcpy(os, oshape, sizeof(int64_t) * (size_t)no);
  }
  for (int k = 0; k < n; k++)
    if (!imp_broadcast(I, os, no, x[k]->shape, x[k]->ndim, os, &no)) return false;
  if (!imp_shape_ok(I, os, no)) return false;
  ImpCall c = {0};
  char *e = xstrdup(expr);
  for (int k = 0; k < n; k++) {
    char *acc;
    if (x[k]->c && val_numel(x[k]) == 1) {
      acc = imp_flit(x[k]->c[0]);
    } else {
      const char *pn = xprintf("X%d", k);
      imp_call_arg(I, &c, pn, x[k]);
      acc = imp_baccess(pn, x[k], os, no);
    }
    char *tok = xprintf("$%d", k), *p;
    while ((p = strstr(e, tok))) e = xprintf("%.*s%s%s", (int)(p - e), e, acc, p + strlen(tok));
  }
  if (!c.n) return imp_unsupported(I, "an operation on constants only that does not fold");
  Val *o = imp_net_out(I, 0, no, os);
  imp_call_kernel(I, &c, base, o, xprintf("Y[%s] = %s", imp_idx("i", no), e));
  return true;
}

/* Input X of an elementwise operator seen channels last: a rank-4 NHWC tensor as is, an
 * NCHW one through nchw_to_nhwc, a constant (padded to rank 4 by leading 1s) permuted. */
Val *imp_ew_nhwc_input(Imp *I, Val *x) {
  if (val_numel(x) == 1 && (x->c || x->ndim < 4)) return x; /* a literal, or one run-time value (any layout) */
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
 * input is a rank-4 tensor, a constant of rank <= 4 or one run-time value (a dynamic
 * quantization's scale); else in the model's layout. */
bool imp_ew(Imp *I, const char *base, Val **x, int n, const char *expr) {
  bool nhwc = false, can = true;
  for (int k = 0; k < n; k++) {
    nhwc |= x[k]->nhwc;
    can &= x[k]->c || val_numel(x[k]) == 1 ? x[k]->ndim <= 4 : x[k]->ndim == 4;
  }
  if (!nhwc || !can) return imp_ew_to(I, base, x, n, expr, NULL, -1);
  Val *p[8];
  for (int k = 0; k < n && k < 8; k++) p[k] = imp_ew_nhwc_input(I, x[k]);
  if (!imp_ew_to(I, base, p, n, expr, NULL, -1)) return false;
  Val *o = VEC_AT(I->vals, I->vals.len - 1); /* [N, H, W, C] back to the logical shape */
  int64_t c = o->shape[3];
  o->shape[3] = o->shape[2], o->shape[2] = o->shape[1], o->shape[1] = c;
  o->nhwc = true;
  return true;
}

/* The lower-case name of an op for kernel names. */
char *imp_lower(const char *s) {
  char *r = xstrdup(s);
  for (char *p = r; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  return r;
}

/* Unary float operators: EXPR over $0. */
static bool unary(Imp *I, const char *op, const char *expr) {
  Val *x = imp_float_in(I, 0);
  if (!x || !imp_one_output(I)) return false;
  if (x->c) return fold_ew(I, op);
  /* stdlib where it fits */
  if (!strcmp(op, "Relu") && (x->ndim == 4 || x->ndim == 2)) { /* relu: any 4-D layout */
    Val *o = imp_net_out(I, 0, x->ndim, x->shape);
    o->nhwc = x->nhwc;
    imp_call(I, o->tex, x->ndim == 4 ? "relu" : "relu_2d", x->nhwc ? x->tex : imp_tensor(I, x));
    return true;
  }
  return imp_ew(I, imp_lower(op), &x, 1, expr);
}

bool imp_as_int(Imp *I, bool ok, int dt) {
  if (ok) {
    Val *o = VEC_AT(I->vals, I->vals.len - 1);
    o->dtype = dt;
    o->fint = true;
  }
  return ok;
}

/* Div and Mod of integers at run time, held as f32 (exact to 2^24): Div truncates toward
 * zero; Mod takes the divisor's sign (fmod 0) or the dividend's (fmod 1); by 0 both give 0
 * (ONNX leaves it undefined). Mod of floats: the language's `%` (floor division's remainder,
 * the divisor's sign: fmod 0, as opset 28 spells it out) or C's fmod (fmod 1); by 0: NaN. */
static bool int_div_mod(Imp *I, const char *op) {
  Val *x[2] = {imp_float_in(I, 0), NULL};
  if (!x[0] || !(x[1] = imp_float_in(I, 1)) || !imp_one_output(I)) return false;
  bool ints = int_valued(imp_in(I, 0)) && int_valued(imp_in(I, 1)), div = !strcmp(op, "Div");
  bool fm = imp_attr_i(I, "fmod", 0);
  if (!div && !ints) return imp_ew(I, "mod", x, 2, fm ? "fmod($0, $1)" : "$0 % $1");
  const char *q = "($0 / $1 < 0.0 ? ceil($0 / $1) : floor($0 / $1))"; /* the quotient truncated */
  const char *e = div ? xprintf("$1 == 0.0 ? 0.0 : %s", q) : xprintf("$1 == 0.0 ? 0.0 : $0 - $1 * %s", fm ? q : "floor($0 / $1)");
  return imp_as_int(I, imp_ew(I, div ? "div_int" : "mod", x, 2, e), imp_in(I, 0)->dtype);
}

static bool binary(Imp *I, const char *op, const char *sym) {
  if (!strcmp(op, "Div") && imp_in(I, 0) && imp_in(I, 1) && int_valued(imp_in(I, 0)) && int_valued(imp_in(I, 1)) && (!imp_in(I, 0)->c || !imp_in(I, 1)->c))
    return int_div_mod(I, op);
  Val *x[2] = {imp_float_in(I, 0), NULL};
  if (!x[0] || !(x[1] = imp_float_in(I, 1)) || !imp_one_output(I)) return false;
  if (x[0]->c && x[1]->c) return fold_ew(I, op);
  if (!strcmp(op, "Add") && x[0]->ndim == x[1]->ndim && (x[0]->ndim == 4 || x[0]->ndim == 2) &&
      !memcmp(x[0]->shape, x[1]->shape, sizeof(int64_t) * (size_t)x[0]->ndim)) {
    Val *o = imp_net_out(I, 0, x[0]->ndim, x[0]->shape);
    o->nhwc = x[0]->ndim == 4 && (x[0]->nhwc || x[1]->nhwc);
    const char *a = o->nhwc ? imp_tensor_nhwc(I, x[0]) : imp_tensor(I, x[0]);
    const char *b = o->nhwc ? imp_tensor_nhwc(I, x[1]) : imp_tensor(I, x[1]);
    imp_call(I, o->tex, x[0]->ndim == 4 ? "add" : "add_2d", xprintf("%s, %s", a, b));
    return true;
  }
  const char *e = strlen(sym) == 1 ? xprintf("$0 %s $1", sym) : xprintf("%s($0, $1)", sym);
  if (!strcmp(op, "Pow") && int_valued(imp_in(I, 0)) && !imp_in(I, 0)->c) /* integers to a power: integers, truncated */
    return imp_as_int(I, imp_ew(I, "pow_int", x, 2, "pow($0, $1) < 0.0 ? ceil(pow($0, $1)) : floor(pow($0, $1))"), imp_in(I, 0)->dtype);
  return imp_ew(I, imp_lower(op), x, 2, e);
}

/* Max and Min of 1 or more inputs. */
static bool variadic(Imp *I, const char *op) {
  int n = imp_nin(I);
  if (n < 1 || n > 8) return imp_unsupported(I, "%d inputs (1 to 8)", n);
  Val *x[8];
  char *e = xstrdup("$0");
  for (int k = 0; k < n; k++) {
    if (!(x[k] = imp_float_in(I, k)) || x[k]->c) return x[k] ? imp_unsupported(I, "constant inputs") : false;
    if (k) e = xprintf("%s(%s, $%d)", !strcmp(op, "Max") ? "max" : "min", e, k);
  }
  return imp_one_output(I) && imp_ew(I, imp_lower(op), x, n, n == 1 ? "$0 + 0.0" : e);
}

/* ---- operators with attributes --------------------------------------------------- */

static bool op_leaky_relu(Imp *I) {
  if (!imp_attrs_known(I, "alpha")) return false;
  return unary(I, "LeakyRelu", xprintf("$0 >= 0.0 ? $0 : %s * $0", imp_flit((float)imp_attr_f(I, "alpha", 0.01))));
}

static bool op_hard_sigmoid(Imp *I) {
  if (!imp_attrs_known(I, "alpha,beta")) return false;
  return unary(I, "HardSigmoid", xprintf("max(0.0, min(1.0, %s * $0 + %s))", imp_flit((float)imp_attr_f(I, "alpha", 0.2)),
                                         imp_flit((float)imp_attr_f(I, "beta", 0.5))));
}

/* Clip: bounds from inputs 2 and 3 (constants are literals; absent: none). */
static bool op_clip(Imp *I) {
  if (I->opset < 11) { /* Clip-6: the bounds are attributes (absent: none) */
    if (!imp_attrs_known(I, "min,max") || !imp_one_output(I)) return false;
    if (!imp_float_in(I, 0)) return false;
    if (imp_in(I, 0)->c) return imp_unsupported(I, "Clip of a constant");
    char *e = xstrdup("$0");
    if (imp_attr(I, "min")) e = xprintf("max(%s, %s)", e, imp_flit((float)imp_attr_f(I, "min", 0)));
    if (imp_attr(I, "max")) e = xprintf("min(%s, %s)", e, imp_flit((float)imp_attr_f(I, "max", 0)));
    return unary(I, "Clip", e);
  }
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *x[3] = {imp_float_in(I, 0), imp_in(I, 1), imp_in(I, 2)};
  if (!x[0]) return false;
  if (x[0]->c && (!x[1] || x[1]->c) && (!x[2] || x[2]->c)) { /* of constants: folded (LayoutLMv3's int64 clamp) */
    if ((x[1] && val_numel(x[1]) != 1) || (x[2] && val_numel(x[2]) != 1)) return imp_error(I, "a bound is not a scalar");
    int64_t n = val_numel(x[0]);
    double *c = imp_vals(n);
    for (int64_t i = 0; i < n; i++) {
      double v = x[0]->c[i];
      if (x[1] && v < x[1]->c[0]) v = x[1]->c[0];
      if (x[2] && v > x[2]->c[0]) v = x[2]->c[0];
      c[i] = v;
    }
    imp_const_out(I, 0, x[0]->dtype, x[0]->ndim, x[0]->shape, c);
    return true;
  }
  int n = 1;
  char *e = xstrdup("$0");
  for (int k = 1; k < 3; k++) {
    if (!x[k]) continue;
    if (!(x[n] = imp_float_in(I, k))) return false;
    if (val_numel(x[n]) != 1) return imp_error(I, "input %d is not a scalar", k + 1);
    e = xprintf("%s(%s, $%d)", k == 1 ? "max" : "min", e, n);
    n++;
  }
  if (!(x[0] = imp_as_tensor(I, x[0], "Clip"))) return false;
  return imp_ew(I, "clip", x, n, e);
}

static bool as_mask(Imp *I, bool ok);

/* Cast of run-time integers X: to float, to a mask (bool: X != 0), to the same integer type
 * (an alias) or the other (a kernel); nothing else. */
static bool cast_int(Imp *I, Val *x, int to) {
  if (to == x->dtype) return imp_alias(I, x);
  if (to != OT_FLOAT && to != OT_BOOL && to != OT_INT64 && to != OT_INT32)
    return imp_unsupported(I, "a run-time Cast of integers to element type %s", imp_type_name(to));
  Val *o = imp_net_out(I, 0, x->ndim, x->shape);
  const char *expr = to == OT_FLOAT ? "f32(X[$])" : to == OT_BOOL ? "X[$] != 0 ? 1.0 : 0.0" : to == OT_INT64 ? "i64(X[$])" : "i32(X[$])";
  o->dtype = to;
  char *ix = imp_idx("i", x->ndim), *e = xstrdup("");
  for (const char *p = expr; *p; p++) e = *p == '$' ? xprintf("%s%s", e, ix) : xprintf("%s%c", e, *p);
  Val xl = *x, ol = *o; /* the tensors as held: an integer convolution's output channels last */
  if (x->nhwc && x->ndim == 4) {
    o->nhwc = true;
    for (Val *v = &xl; v; v = v == &xl ? &ol : NULL) {
      int64_t c = v->shape[1];
      v->shape[1] = v->shape[2], v->shape[2] = v->shape[3], v->shape[3] = c;
    }
  }
  const char *kn = imp_kernel(I, to == OT_FLOAT ? "to_float" : to == OT_BOOL ? "to_bool" : "to_int",
                              xprintf("(X: %s) -> Y: %s {\n  Y[%s] = %s\n}", imp_ty(&xl), imp_ty(&ol), ix, e));
  imp_call(I, o->tex, kn, x->tex);
  return true;
}

/* Cast (to the type of attribute to), CastLike (LIKE: to the type of input 2): folded for a
 * constant, else a kernel or an alias (below). */
static bool op_cast(Imp *I, bool like) {
  if (!imp_attrs_known(I, like ? "saturate" : "to,saturate") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *type_of = like ? imp_in(I, 1) : NULL;
  if (!x || (like && !type_of)) return imp_error(I, "input %d is missing", x ? 2 : 1);
  int to = like ? (type_of->declared ? type_of->declared : type_of->dtype) : (int)imp_attr_i(I, "to", 0);
  if (x->c && like) { /* CastLike of a constant: its values in the type of input 2 */
    int64_t n = val_numel(x);
    double *c = imp_vals(n);
    for (int64_t i = 0; i < n; i++) c[i] = imp_round_to(to, x->c[i]);
    imp_const_out(I, 0, to, x->ndim, x->shape, c);
    return true;
  }
  if (x->c) return fold_ew(I, "Cast");
  if (imp_run_time_int(x)) { /* to float16 or double: to f32 first, then as a float */
    if (to != OT_FLOAT16 && to != OT_DOUBLE) return cast_int(I, x, to);
    if (!cast_int(I, x, OT_FLOAT)) return false;
    x = VEC_AT(I->vals, I->vals.len - 1);
  }
  /* the rest is held as f32: floats, masks (0 and 1), integers (Val.fint) */
  bool ints = to == OT_INT64 || to == OT_INT32;
  if (x->dtype != OT_FLOAT && x->dtype != OT_BOOL && !x->fint)
    return imp_unsupported(I, "a run-time Cast from element type %s", imp_type_name(x->dtype));
  if (to == OT_BOOL) return x->dtype == OT_BOOL ? imp_alias(I, x) : as_mask(I, imp_ew(I, "to_bool", &x, 1, "$0 != 0.0 ? 1.0 : 0.0"));
  if (to == OT_UINT8 || to == OT_INT8) { /* truncated toward zero, wrapped into the type (x86's conversion; ONNX
                                          * leaves a value outside the type undefined): quantized values */
    const char *t = "($0 < 0.0 ? ceil($0) : floor($0))", *o = to == OT_INT8 ? " + 128.0" : "";
    return imp_as_int(I, imp_ew(I, "to_byte", &x, 1, xprintf("%s%s - 256.0 * floor((%s%s) / 256.0)%s", t, o, t, o, to == OT_INT8 ? " - 128.0" : "")), to);
  }
  if (ints && x->dtype == OT_FLOAT) /* truncated toward zero */
    return imp_as_int(I, imp_ew(I, "to_int", &x, 1, "$0 < 0.0 ? ceil($0) : floor($0)"), to);
  if (ints) return imp_as_int(I, imp_alias(I, x), to); /* a mask's 0 and 1, or integers: as they are */
  if (to == OT_BFLOAT16)
    return imp_unsupported(I, "a run-time Cast to bfloat16 (texc has no bfloat16 tensors to round to; float16 and double are read)");
  if (imp_held_type(to) != OT_FLOAT)
    return imp_unsupported(I, "a run-time Cast to element type %s (networks hold floats and integers)", imp_type_name(to));
  /* float and double: as it is (held as f32); float16: rounded to half precision, held as f32 */
  if (!(to == OT_FLOAT16 ? imp_ew(I, "to_half", &x, 1, "f32(f16($0))") : imp_alias(I, x))) return false;
  Val *o = VEC_AT(I->vals, I->vals.len - 1); /* a mask's 0 and 1, or integers, as floats */
  o->dtype = OT_FLOAT;
  o->declared = to == OT_FLOAT ? 0 : to;
  o->fint = false;
  return true;
}

/* Dropout at inference (or in training with ratio 0): the input itself, and (output 2) a
 * mask of every element kept. */
static bool op_dropout(Imp *I) {
  if (!imp_attrs_known(I, "seed,ratio")) return false;
  if (!imp_two_outputs(I)) return false;
  Val *t = imp_in(I, 2), *ratio = imp_in(I, 1);
  if (t && !(t = imp_const_in(I, 2, "training_mode"))) return false;
  if (t && t->c[0] != 0) { /* training: only a ratio of 0 keeps every element (nothing random) */
    if (ratio && !(ratio = imp_const_in(I, 1, "ratio"))) return false;
    if (!ratio || ratio->c[0] != 0) return imp_unsupported(I, "training_mode true (with a ratio other than 0: random)");
  }
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  if (I->node->n_output > 1 && *I->node->output[1]) {
    double *ones = imp_vals(val_numel(x));
    for (int64_t i = 0; i < val_numel(x); i++) ones[i] = 1;
    imp_const_out(I, 1, OT_BOOL, x->ndim, x->shape, ones);
  }
  return imp_alias(I, x);
}

/* Folding of the constant-only forms (Mod: no run-time form). */
static bool fold_only(Imp *I, const char *op) {
  for (int k = 0; k < imp_nin(I); k++) {
    Val *v = imp_in(I, k);
    if (v && !v->c) return !strcmp(op, "Mod") ? int_div_mod(I, op) : imp_unsupported(I, "%s on run-time tensors (only folded at import)", op);
  }
  return imp_one_output(I) && fold_ew(I, op);
}

/* ---- run-time masks ---------------------------------------------------------------
 * A boolean computed at run time (a comparison of float tensors) is an f32 tensor of 0 and
 * 1 whose value is labelled OT_BOOL: Where, Not, And, Or and Cast read it; an arithmetic
 * operator refuses it (float_in), as ONNX's types do; a graph output refuses it (not float). */

/* Input K as a condition: a constant, or a run-time mask. */
static Val *mask_in(Imp *I, int k) {
  Val *v = imp_in(I, k);
  if (!v) return imp_error(I, "input %d is missing", k + 1), NULL;
  if (!v->c && v->dtype != OT_BOOL)
    return imp_unsupported(I, "input %d of element type %s as a condition (a comparison's result is)", k + 1, imp_type_name(v->dtype)), NULL;
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
  if (!imp_attrs_known(I, !strcmp(op, "IsInf") ? "detect_negative,detect_positive" : "") || !imp_one_output(I)) return false;
  int want = !strcmp(op, "Not") || !strcmp(op, "IsNaN") || !strcmp(op, "IsInf") ? 1 : 2;
  if (imp_nin(I) != want) return imp_error(I, "%d inputs (%d)", imp_nin(I), want);
  bool run_time = false;
  for (int k = 0; k < imp_nin(I); k++) run_time |= imp_in(I, k) && !imp_in(I, k)->c;
  if (!run_time) return fold_ew(I, op);
  static const char *const cmp[][2] = {{"Equal", "=="}, {"Less", "<"}, {"Greater", ">"}, {"LessOrEqual", "<="},
                                       {"GreaterOrEqual", ">="}};
  for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++)
    if (!strcmp(op, cmp[i][0])) {
      Val *x[2] = {imp_float_in(I, 0), NULL};
      if (!x[0] || !(x[1] = imp_float_in(I, 1))) return false;
      return as_mask(I, imp_ew(I, imp_lower(op), x, 2, xprintf("$0 %s $1 ? 1.0 : 0.0", cmp[i][1])));
    }
  if (!strcmp(op, "IsNaN")) {
    Val *x = imp_float_in(I, 0);
    return x && as_mask(I, imp_ew(I, "isnan", &x, 1, "$0 != $0 ? 1.0 : 0.0"));
  }
  if (!strcmp(op, "IsInf")) { /* beyond the largest float: the literal of infinity (imp_flit) */
    Val *x = imp_float_in(I, 0);
    bool pos = imp_attr_i(I, "detect_positive", 1) != 0, neg = imp_attr_i(I, "detect_negative", 1) != 0;
    const char *e = pos && neg ? "$0 > 3.4028234e38 || $0 < -3.4028234e38 ? 1.0 : 0.0"
                    : pos      ? "$0 > 3.4028234e38 ? 1.0 : 0.0"
                    : neg      ? "$0 < -3.4028234e38 ? 1.0 : 0.0"
                               : "0.0 * $0";
    return x && as_mask(I, imp_ew(I, "isinf", &x, 1, e));
  }
  if (!strcmp(op, "Not")) {
    Val *x = mask_in(I, 0);
    return x && as_mask(I, imp_ew(I, "not", &x, 1, "$0 == 0.0 ? 1.0 : 0.0"));
  }
  Val *x[2] = {mask_in(I, 0), NULL};
  if (!x[0] || !(x[1] = mask_in(I, 1))) return false;
  const char *e = !strcmp(op, "And")  ? "$0 != 0.0 && $1 != 0.0 ? 1.0 : 0.0"
                  : !strcmp(op, "Or") ? "$0 != 0.0 || $1 != 0.0 ? 1.0 : 0.0"
                                      : "($0 != 0.0) != ($1 != 0.0) ? 1.0 : 0.0"; /* Xor */
  return as_mask(I, imp_ew(I, imp_lower(op), x, 2, e));
}

/* Where: folded for constants; else a kernel (the condition a constant or a run-time mask). */
static bool op_where(Imp *I) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *c = imp_in(I, 0), *a = imp_in(I, 1), *b = imp_in(I, 2);
  if (c && a && b && c->c && a->c && b->c) return fold_ew(I, "Where");
  Val *x[3] = {mask_in(I, 0), imp_float_in(I, 1), imp_float_in(I, 2)};
  return x[0] && x[1] && x[2] && imp_ew(I, "where", x, 3, "$0 != 0.0 ? $1 : $2");
}

/* ---- activations, n-ary sums ------------------------------------------------------- */

/* Elu Selu Celu ThresholdedRelu Shrink: EXPR over $0 with their float attributes. */
static bool op_activation(Imp *I, const char *op) {
  double alpha = (float)imp_attr_f(I, "alpha", !strcmp(op, "Selu") ? SELU_ALPHA : 1);
  const char *a = imp_flit(alpha), *e;
  if (!strcmp(op, "Elu")) {
    if (!imp_attrs_known(I, "alpha")) return false;
    e = xprintf("$0 >= 0.0 ? $0 : %s * expm1($0)", a);
  } else if (!strcmp(op, "Selu")) {
    if (!imp_attrs_known(I, "alpha,gamma")) return false;
    const char *g = imp_flit((float)imp_attr_f(I, "gamma", SELU_GAMMA));
    e = xprintf("%s * ($0 > 0.0 ? $0 : %s * expm1($0))", g, a);
  } else if (!strcmp(op, "Celu")) {
    if (!imp_attrs_known(I, "alpha")) return false;
    e = xprintf("max(0.0, $0) + min(0.0, %s * expm1($0 / %s))", a, a);
  } else if (!strcmp(op, "ThresholdedRelu")) {
    if (!imp_attrs_known(I, "alpha")) return false;
    e = xprintf("$0 > %s ? $0 : 0.0", a);
  } else if (!strcmp(op, "Swish")) { /* opset 24 */
    if (!imp_attrs_known(I, "alpha")) return false;
    e = xprintf("$0 * sigmoid(%s * $0)", a);
  } else { /* Shrink */
    if (!imp_attrs_known(I, "bias,lambd")) return false;
    double l = (float)imp_attr_f(I, "lambd", 0.5), b = (float)imp_attr_f(I, "bias", 0);
    e = xprintf("$0 < %s ? $0 + %s : ($0 > %s ? $0 - %s : 0.0)", imp_flit(-l), imp_flit(b), imp_flit(l), imp_flit(b));
  }
  return unary(I, op, e);
}

/* PRelu: X where X >= 0, else slope x X (the slope broadcast to X). */
static bool op_prelu(Imp *I) {
  Val *x[2] = {imp_float_in(I, 0), NULL};
  if (!imp_attrs_known(I, "") || !x[0] || !(x[1] = imp_float_in(I, 1)) || !imp_one_output(I)) return false;
  if (x[0]->c && x[1]->c) return fold_ew(I, "PRelu");
  if (!(x[0] = imp_as_tensor(I, x[0], "PRelu"))) return false;
  return imp_ew(I, "prelu", x, 2, "$0 < 0.0 ? $1 * $0 : $0");
}

/* SwiGLU (opset 28): Swish_alpha(A) x B, A and B of one shape (no broadcasting). */
static bool op_swiglu(Imp *I) {
  Val *x[2] = {imp_float_in(I, 0), NULL};
  if (!imp_attrs_known(I, "alpha") || !x[0] || !(x[1] = imp_float_in(I, 1)) || !imp_one_output(I)) return false;
  if (x[0]->ndim != x[1]->ndim || memcmp(x[0]->shape, x[1]->shape, sizeof(int64_t) * (size_t)x[0]->ndim))
    return imp_error(I, "A is %s but B is %s (SwiGLU does not broadcast)", imp_ty(x[0]), imp_ty(x[1]));
  if (x[0]->c && x[1]->c && !(x[0] = imp_as_tensor(I, x[0], "SwiGLU"))) return false;
  return imp_ew(I, "swiglu", x, 2, xprintf("$0 * sigmoid(%s * $0) * $1", imp_flit((float)imp_attr_f(I, "alpha", 1))));
}

/* Sum and Mean of 1 to 8 inputs, broadcast. */
static bool op_sum_mean(Imp *I, bool mean) {
  int n = imp_nin(I);
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  if (n < 1 || n > 8) return imp_unsupported(I, "%d inputs (1 to 8)", n);
  Val *x[8];
  bool run_time = false;
  char *e = xstrdup("$0");
  for (int k = 0; k < n; k++) {
    if (!(x[k] = imp_float_in(I, k))) return false;
    run_time |= !x[k]->c;
    if (k) e = xprintf("%s + $%d", e, k);
  }
  if (!run_time) return imp_unsupported(I, "%s of constants only (not folded at import)", mean ? "Mean" : "Sum");
  if (mean) e = xprintf("(%s) / %s", e, imp_flit(n));
  else if (n == 1) e = xstrdup("$0 + 0.0");
  return imp_ew(I, mean ? "mean" : "sum", x, n, e);
}

/* Gelu (opset 20): x Phi(x) by erf, or its tanh approximation. */
static bool op_gelu(Imp *I) {
  if (!imp_attrs_known(I, "approximate")) return false;
  const char *ap = imp_attr_s(I, "approximate", "none");
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
      "Scatter", "RNN", "GRU", "LSTM", "IsInf", "Xor", "CastLike", "TopK", "GridSample", "OneHot", "MaxUnpool", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss",
      "HannWindow", "HammingWindow", "BlackmanWindow", "EyeLike", "ReverseSequence", "Compress", "DFT", "STFT",
      "MelWeightMatrix", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv",
      "Attention", "RotaryEmbedding", "RMSNormalization", "Swish", "GroupNormalization", "TensorScatter", "CumProd",
      "SwiGLU", "CausalConvWithState", "If", "Scan", "Loop", "LinearAttention", "Col2Im", "NonZero",
      "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceErase", "SequenceLength",
      "ConcatFromSequence", "SplitToSequence"};
  return IMP_ONE_OF(op, known);
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
    {"GridSample", 16, 0, NULL},
    {"Col2Im", 18, 0, NULL},
    {"NonZero", 9, 0, NULL},
    {"OneHot", 9, 0, NULL},
    {"MaxUnpool", 9, 0, NULL},
    {"NegativeLogLikelihoodLoss", 12, 0, NULL},
    {"SoftmaxCrossEntropyLoss", 12, 0, NULL},
    {"HannWindow", 17, 0, NULL},
    {"HammingWindow", 17, 0, NULL},
    {"BlackmanWindow", 17, 0, NULL},
    {"MelWeightMatrix", 17, 0, NULL},
    {"EyeLike", 9, 0, NULL},
    {"ReverseSequence", 10, 0, NULL},
    {"Compress", 9, 0, NULL},
    {"DFT", 17, 0, NULL},
    {"STFT", 17, 0, NULL},
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
    {"IsInf", 10, 0, NULL},
    {"Xor", 7, 0, NULL},
    {"CastLike", 15, 0, NULL},
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
    {"RNN", 1, 7, "RNN-1 has output_sequence"},
    {"GRU", 1, 7, "GRU-1 and -3 have output_sequence"},
    {"LSTM", 1, 7, "LSTM-1 has output_sequence"},
    {"QuantizeLinear", 10, 0, NULL}, {"DequantizeLinear", 10, 0, NULL}, {"DynamicQuantizeLinear", 11, 0, NULL},
    {"MatMulInteger", 10, 0, NULL}, {"ConvInteger", 10, 0, NULL}, {"QLinearMatMul", 10, 0, NULL}, {"QLinearConv", 10, 0, NULL},
    {"Attention", 23, 0, NULL}, {"RotaryEmbedding", 23, 0, NULL}, {"RMSNormalization", 23, 0, NULL}, {"Swish", 24, 0, NULL}, {"GroupNormalization", 18, 0, NULL}, {"TensorScatter", 24, 0, NULL},
    {"Scan", 8, 9, "Scan-8 has a batch axis and sequence_lens"},
    {"SequenceEmpty", 11, 0, NULL}, {"SequenceConstruct", 11, 0, NULL}, {"SequenceInsert", 11, 0, NULL},
    {"SequenceAt", 11, 0, NULL}, {"SequenceErase", 11, 0, NULL}, {"SequenceLength", 11, 0, NULL},
    {"ConcatFromSequence", 11, 0, NULL}, {"SplitToSequence", 11, 0, NULL}, {"CumProd", 26, 0, NULL}, {"CausalConvWithState", 27, 0, NULL}, {"LinearAttention", 27, 0, NULL}, {"SwiGLU", 28, 0, NULL},
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
  const Onnx__AttributeProto *ap = imp_attr(I, "auto_pad"), *st = imp_attr(I, "strides");
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
  static const char *const arith[] = {"Add", "Sub", "Mul", "Neg", "Abs", "Max", "Min", "Sum", "CumSum", "CumProd", "Where",
                                      "ReduceSum", "ReduceMax", "ReduceMin", "Identity", "Trilu", "Clip"};
  if (!moves && !IMP_ONE_OF(op, arith)) return;
  bool run_time = false;
  for (int k = !strcmp(op, "Where"); k < imp_nin(I); k++) {
    Val *v = imp_in(I, k);
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
  if (!onnx_reads_sequences(op)) /* a sequence where a tensor belongs: refused, not read as one */
    for (int k = 0; k < imp_nin(I); k++)
      if (imp_in(I, k) && imp_in(I, k)->is_seq) return imp_unsupported(I, "input %d is a sequence (%s reads tensors)", k + 1, op);
  if (!opset_ok(I, op) || !dispatch(I, op)) return false;
  static const char *const movers[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Gather",
                                       "GatherND", "GatherElements", "Slice", "Expand", "Split", "Tile"};
  Val *x = imp_nin(I) ? imp_in(I, 0) : NULL;
  bool moves = IMP_ONE_OF(op, movers);
  bool q8 = x && (x->dtype == OT_UINT8 || x->dtype == OT_INT8); /* quantized values (a Gather of an int8 table) */
  if (moves && x && ((!x->c && x->dtype == OT_BOOL) || q8))
    for (size_t k = 0; k < I->node->n_output; k++) {
      Val *o = *I->node->output[k] ? imp_val(I, I->node->output[k]) : NULL;
      if (o && !o->c) o->dtype = x->dtype, o->fint |= q8;
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
    if (!strcmp(op, un[i][0])) return imp_attrs_known(I, "") && unary(I, op, un[i][1]);
  static const char *const bin[][2] = {{"Add", "+"}, {"Sub", "-"}, {"Mul", "*"}, {"Div", "/"},
                                       {"Pow", "pow"}, {"Max", "max"}, {"Min", "min"}};
  for (size_t i = 0; i < sizeof bin / sizeof bin[0]; i++)
    if (!strcmp(op, bin[i][0])) {
      if ((!strcmp(op, "Max") || !strcmp(op, "Min")) && imp_nin(I) != 2) return imp_attrs_known(I, "") && variadic(I, op);
      if (imp_nin(I) != 2) return imp_error(I, "%d inputs (2)", imp_nin(I));
      return imp_attrs_known(I, "") && binary(I, op, bin[i][1]);
    }
  if (!strcmp(op, "Constant")) return op_constant(I);
  if (!strcmp(op, "Shape")) return op_shape(I);
  if (!strcmp(op, "ConstantOfShape")) return imp_attrs_known(I, "value") && op_constant_of_shape(I);
  if (!strcmp(op, "Range")) return op_range(I);
  if (!strcmp(op, "HannWindow") || !strcmp(op, "HammingWindow") || !strcmp(op, "BlackmanWindow")) return op_window(I, op);
  if (!strcmp(op, "MelWeightMatrix")) return op_mel_weight_matrix(I);
  if (!strcmp(op, "EyeLike")) return op_eye_like(I);
  if (!strcmp(op, "Where")) return op_where(I);
  if (!strcmp(op, "Gelu")) return op_gelu(I);
  if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "LessOrEqual") ||
      !strcmp(op, "GreaterOrEqual") || !strcmp(op, "Not") || !strcmp(op, "And") || !strcmp(op, "Or") || !strcmp(op, "IsNaN") ||
      !strcmp(op, "IsInf") || !strcmp(op, "Xor"))
    return op_logic(I, op);
  if (!strcmp(op, "Mod")) return imp_attrs_known(I, "fmod") && fold_only(I, op);
  if (!strcmp(op, "LeakyRelu")) return op_leaky_relu(I);
  if (!strcmp(op, "HardSigmoid")) return op_hard_sigmoid(I);
  if (!strcmp(op, "Clip")) return op_clip(I);
  if (!strcmp(op, "Elu") || !strcmp(op, "Selu") || !strcmp(op, "Celu") || !strcmp(op, "ThresholdedRelu") || !strcmp(op, "Swish") ||
      !strcmp(op, "Shrink"))
    return op_activation(I, op);
  if (!strcmp(op, "PRelu")) return op_prelu(I);
  if (!strcmp(op, "SwiGLU")) return op_swiglu(I);
  if (!strcmp(op, "Sum")) return op_sum_mean(I, false);
  if (!strcmp(op, "Mean")) return op_sum_mean(I, true);
  if (!strcmp(op, "Cast") || !strcmp(op, "CastLike")) return op_cast(I, !strcmp(op, "CastLike"));
  if (!strcmp(op, "Identity") && imp_in(I, 0) && imp_in(I, 0)->is_seq) /* a sequence: the same tensors */
    return imp_attrs_known(I, "") && imp_one_output(I) && imp_alias_as(I, I->node->output[0], imp_in(I, 0));
  if (!strcmp(op, "Identity")) return imp_attrs_known(I, "") && imp_one_output(I) && (imp_in(I, 0) ? imp_alias(I, imp_in(I, 0)) : imp_error(I, "input 1 is missing"));
  if (!strcmp(op, "Dropout")) return op_dropout(I);
  int r = onnx_nn_op(I, op); /* onnx_nn.c, then onnx_layout.c, onnx_rnn.c, onnx_attention.c, onnx_quant.c, onnx_control.c */
  if (r < 0) r = onnx_layout_op(I, op);
  if (r < 0) r = onnx_rnn_op(I, op);
  if (r < 0) r = onnx_attention_op(I, op);
  if (r < 0) r = onnx_quant_op(I, op);
  if (r < 0) r = onnx_control_op(I, op);
  return r >= 0 ? r : imp_unsupported(I, "operator %s", op);
}
