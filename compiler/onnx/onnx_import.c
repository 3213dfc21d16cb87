/* onnx_import.c — `texc import MODEL.onnx [-o NET.tex]` and `texc run|bench|tune MODEL.onnx`:
 * an ONNX model as a `.tex` network (docs/ONNX.md).
 *
 *   read     protobuf-c's onnx.ModelProto (generated at build time from libonnx-dev's
 *            onnx.proto); a file that does not unpack is truncated or corrupt
 *   check    the default domain's opset in 1..22 (before 11: onnx_ops.c's opset_rules); every graph input and output typed with
 *            a static shape; initializers as large as their shapes; every value defined
 *            once; the nodes a DAG (sorted here, so their order in the file does not matter)
 *   import   node by node (onnx_ops.c): constants fold (the shape arithmetic exporters
 *            emit), everything else becomes network calls
 *   write    imports, the kernels this model needs beyond stdlib, the network; the
 *            weights (constants that calls read) in a safetensors sidecar
 */
#include "onnx/onnx_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- tensors --------------------------------------------------------------------- */

/* Bytes of one element of ONNX type DT as raw_data holds it; 0: a type not read. */
static size_t element_size(int dt) {
  switch (dt) {
  case OT_UINT8: case OT_INT8: case OT_BOOL: return 1;
  case OT_UINT16: case OT_INT16: case OT_FLOAT16: case OT_BFLOAT16: return 2;
  case OT_FLOAT: case OT_INT32: case OT_UINT32: return 4;
  case OT_INT64: case OT_DOUBLE: case OT_UINT64: return 8;
  default: return 0;
  }
}

/* Element I of TP (of type DT), from its raw bytes R or its typed field: ONNX keeps the
 * types narrower than 32 bits (float16 and bfloat16 as their bits) in int32_data, uint32
 * and uint64 in uint64_data. */
static double element(const Onnx__TensorProto *tp, int dt, const uint8_t *r, int64_t i) {
  union { float f; uint32_t u; } b16;
  float f;
  double d;
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  uint64_t u64;
  uint16_t u16 = 0;
  if ((dt == OT_FLOAT16 || dt == OT_BFLOAT16 || dt == OT_UINT16 || dt == OT_INT16)) {
    if (r) memcpy(&u16, r, 2);
    else u16 = (uint16_t)tp->int32_data[i];
  }
  switch (dt) {
  case OT_FLOAT: return r ? (memcpy(&f, r, 4), f) : tp->float_data[i];
  case OT_DOUBLE: return r ? (memcpy(&d, r, 8), d) : tp->double_data[i];
  case OT_INT64: return (double)(r ? (memcpy(&i64, r, 8), i64) : tp->int64_data[i]);
  case OT_INT32: return r ? (memcpy(&i32, r, 4), i32) : tp->int32_data[i];
  case OT_UINT32: return r ? (memcpy(&u32, r, 4), u32) : (double)tp->uint64_data[i];
  case OT_UINT64: return (double)(r ? (memcpy(&u64, r, 8), u64) : tp->uint64_data[i]);
  case OT_FLOAT16: return f16_to_f32(u16);
  case OT_BFLOAT16: return b16.u = (uint32_t)u16 << 16, b16.f;
  case OT_UINT16: return u16;
  case OT_INT16: return (int16_t)u16;
  case OT_INT8: return r ? (int8_t)r[0] : tp->int32_data[i];
  default: return r ? r[0] : tp->int32_data[i]; /* uint8, bool */
  }
}

bool imp_tensor_values(const Onnx__TensorProto *tp, double **out, int64_t *n, const char **why) {
  int64_t m = 1;
  for (size_t d = 0; d < tp->n_dims; d++) {
    if (tp->dims[d] < 0 || (tp->dims[d] && m > ((int64_t)1 << 40) / tp->dims[d])) {
      *why = "a negative or huge dimension";
      return false;
    }
    m *= tp->dims[d];
  }
  if (tp->n_external_data || (tp->has_data_location && tp->data_location == 1)) {
    *why = "external data outside a model's initializers (only initializers read a data file)";
    return false;
  }
  int dt = tp->data_type;
  size_t esize = element_size(dt);
  if (!esize) {
    *why = xprintf("not supported: data type %s (float, float16, bfloat16, double, integers of 8 to 64 bits, bool)",
                   imp_type_name(dt));
    return false;
  }
  size_t have = tp->has_raw_data ? tp->raw_data.len / esize
                : dt == OT_FLOAT ? tp->n_float_data : dt == OT_INT64 ? tp->n_int64_data
                : dt == OT_DOUBLE ? tp->n_double_data : dt == OT_UINT32 || dt == OT_UINT64 ? tp->n_uint64_data
                : tp->n_int32_data;
  if (tp->has_raw_data && tp->raw_data.len % esize) have = (size_t)-1;
  if (have != (size_t)m) {
    *why = xprintf("%zu values for a shape of %lld elements", have == (size_t)-1 ? 0 : have, (long long)m);
    return false;
  }
  double *v = malloc(sizeof(double) * (size_t)(m ? m : 1));
  for (int64_t i = 0; i < m; i++)
    v[i] = element(tp, dt, tp->has_raw_data ? tp->raw_data.data + (size_t)i * esize : NULL, i);
  *out = v;
  *n = m;
  return true;
}

bool onnx_tensor_f32(const Onnx__TensorProto *tp, HostTensor *t, const char **why) {
  double *v;
  int64_t n;
  if (tp->n_dims > HT_MAX_DIMS) return *why = "more than 8 dimensions", false;
  if (!imp_tensor_values(tp, &v, &n, why)) return false;
  memset(t, 0, sizeof *t);
  t->ndim = tp->n_dims ? (int)tp->n_dims : 1;
  t->shape[0] = 1;
  for (size_t d = 0; d < tp->n_dims; d++) t->shape[d] = tp->dims[d];
  t->data = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) t->data[i] = (float)v[i];
  free(v);
  return true;
}

/* ---- values and errors ----------------------------------------------------------- */

int64_t val_numel(const Val *v) {
  int64_t n = 1;
  for (int d = 0; d < v->ndim; d++) n *= v->shape[d];
  return n;
}

Val *imp_val(Imp *I, const char *name) {
  for (int i = I->vals.len - 1; i >= 0; i--) {
    Val *v = VEC_AT(I->vals, i);
    if (strcmp(v->name, name) == 0) return v;
  }
  return NULL;
}

static Val *new_val(Imp *I, const char *name, int dtype, int nd, const int64_t *shape) {
  Val *v = xalloc(sizeof *v);
  v->name = xstrdup(name);
  v->dtype = imp_held_type(dtype);
  v->declared = v->dtype != dtype ? dtype : 0;
  v->ndim = nd;
  if (nd) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)nd);
  vec_push(&I->vals, v);
  return v;
}

Val *imp_out(Imp *I, int k, int dtype, int nd, const int64_t *shape) {
  return new_val(I, I->node->output[k], dtype, nd, shape);
}

static bool report(Imp *I, const char *prefix, const char *fmt, va_list ap) {
  char msg[700];
  vsnprintf(msg, sizeof msg, fmt, ap);
  const Onnx__NodeProto *n = I->node;
  if (n)
    diag_error((Loc){0}, "%s: node '%s' (%s): %s%s", I->path, n->name && *n->name ? n->name : n->n_output ? n->output[0] : "?",
               n->op_type ? n->op_type : "?", prefix, msg);
  else
    diag_error((Loc){0}, "%s: %s%s", I->path, prefix, msg);
  I->failed = true;
  return false;
}

bool imp_error(Imp *I, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(I, "", fmt, ap);
  va_end(ap);
  return false;
}

bool imp_unsupported(Imp *I, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(I, "not supported: ", fmt, ap);
  va_end(ap);
  return false;
}

/* ---- the network's text ---------------------------------------------------------- */

static bool keyword(const char *s) {
  static const char *const kw[] = {"const", "import", "kernel", "tensor", "where", "in", "schedule", "for", "auto",
                                   "network", "f32", "f64", "f16", "i8", "i16", "i32", "i64", "u8", "u32", "bool"};
  return IMP_ONE_OF(s, kw);
}

/* The slot of NAME in I's hash set of names, or the free slot where it would go. */
static size_t name_slot(const Imp *I, const char *name) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  size_t i = (size_t)h & (I->name_cap - 1);
  while (I->name_set[i] && strcmp(I->name_set[i], name) != 0) i = (i + 1) & (I->name_cap - 1);
  return i;
}

static void name_add(Imp *I, const char *name) {
  if (2 * (size_t)(I->names.len + 1) > I->name_cap) { /* grow to keep it at most half full */
    const char **old = I->name_set;
    int *old_next = I->name_next;
    size_t old_cap = I->name_cap, cap = old_cap ? 2 * old_cap : 256;
    I->name_set = xalloc(sizeof(char *) * cap); /* zeroed */
    I->name_next = xalloc(sizeof(int) * cap);
    I->name_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
      if (old[i]) {
        size_t j = name_slot(I, old[i]);
        I->name_set[j] = old[i], I->name_next[j] = old_next[i];
      }
  }
  I->name_set[name_slot(I, name)] = name;
  vec_push(&I->names, (void *)name);
}

const char *imp_name(Imp *I, const char *hint) {
  char *s = xstrdup(hint && *hint ? hint : "t");
  for (char *p = s; *p; p++)
    if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9')) *p = '_';
  if (*s >= '0' && *s <= '9') s = xprintf("t%s", s);
  if (keyword(s)) s = xprintf("%s_", s);
  const char *name = s;
  size_t taken = I->name_cap ? name_slot(I, name) : 0;
  if (I->name_cap && I->name_set[taken]) { /* S_2, S_3, ... from where the last search for S stopped */
    int k = I->name_next[taken] ? I->name_next[taken] : 2;
    do name = xprintf("%s_%d", s, k++);
    while (I->name_set[name_slot(I, name)]);
    I->name_next[taken] = k;
  }
  name_add(I, name);
  return name;
}

static char *shape_decl(const Val *v) {
  char *s = xstrdup(v->dtype == OT_INT64 ? "i64[" : v->dtype == OT_INT32 ? "i32[" : "f32[");
  for (int d = 0; d < v->ndim; d++) s = xprintf("%s%s%lld", s, d ? ", " : "", (long long)v->shape[d]);
  return xprintf("%s%s]", s, v->ndim ? "" : "1");
}

/* A weight parameter for constant V (data D, shape SHAPE) named after HINT. */
static const char *new_weight(Imp *I, const char *hint, const double *d, int nd, const int64_t *shape) {
  const char *name = imp_name(I, hint);
  Val tmp = {.ndim = nd};
  if (nd) memcpy(tmp.shape, shape, sizeof(int64_t) * (size_t)nd);
  I->params = xprintf("%s,\n    %s: %s", I->params, name, shape_decl(&tmp));
  HostTensor t = {.name = name, .ndim = nd ? nd : 1, .shape = {1}};
  if (nd) memcpy(t.shape, shape, sizeof(int64_t) * (size_t)nd);
  int64_t n = val_numel(&tmp);
  t.data = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) t.data[i] = (float)d[i];
  ws_add(&I->weights, t);
  return name;
}

const int imp_nhwc_axis[4] = {0, 2, 3, 1};

double *imp_permute_nhwc(const Val *v) {
  int64_t n = v->shape[0], c = v->shape[1], h = v->shape[2], w = v->shape[3];
  int64_t total = n * c * h * w;
  double *d = malloc(sizeof(double) * (size_t)(total > 0 ? total : 1));
  for (int64_t a = 0; a < n; a++)
    for (int64_t b = 0; b < c; b++)
      for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) d[((a * h + y) * w + x) * c + b] = v->c[((a * c + b) * h + y) * w + x];
  return d;
}

/* V's tensor moved to the other layout (TO_NCHW: from channels last) into a new tensor:
 * stdlib's nchw_to_nhwc / nhwc_to_nchw for f32, a kernel of their element type for
 * integers (a ConvInteger's i32 result read as a graph output). */
static const char *layout_call(Imp *I, Val *v, bool to_nchw) {
  const char *out = imp_name(I, xprintf("%s_%s", v->name, to_nchw ? "nchw" : "nhwc"));
  const char *et = v->fint ? NULL : v->dtype == OT_INT64 ? "i64" : v->dtype == OT_INT32 ? "i32" : NULL;
  if (!et) {
    imp_call(I, out, to_nchw ? "nhwc_to_nchw" : "nchw_to_nhwc", v->tex);
    return out;
  }
  long long n = v->shape[0], c = v->shape[1], h = v->shape[2], w = v->shape[3];
  const char *nchw = xprintf("%s[%lld, %lld, %lld, %lld]", et, n, c, h, w), *nhwc = xprintf("%s[%lld, %lld, %lld, %lld]", et, n, h, w, c);
  const char *k = to_nchw ? imp_kernel(I, xprintf("nhwc_to_nchw_%s", et), xprintf("(X: %s) -> Y: %s {\n  Y[n, c, h, w] = X[n, h, w, c]\n}", nhwc, nchw))
                          : imp_kernel(I, xprintf("nchw_to_nhwc_%s", et), xprintf("(X: %s) -> Y: %s {\n  Y[n, h, w, c] = X[n, c, h, w]\n}", nchw, nhwc));
  imp_call(I, out, k, v->tex);
  return out;
}

const char *imp_tensor_nhwc(Imp *I, Val *v) {
  if (v->nhwc) return v->tex;
  if (v->other) return v->other;
  int64_t sh[4] = {v->shape[0], v->shape[2], v->shape[3], v->shape[1]};
  if (v->c) {
    double *d = imp_permute_nhwc(v);
    v->other = new_weight(I, xprintf("%s_nhwc", v->name), d, 4, sh);
    free(d);
  } else v->other = layout_call(I, v, false);
  return v->other;
}

const char *imp_tensor(Imp *I, Val *v) {
  if (v->nhwc) {
    if (!v->other) v->other = layout_call(I, v, true);
    return v->other;
  }
  if (v->tex) return v->tex;
  v->tex = new_weight(I, v->name, v->c, v->ndim, v->shape);
  v->param = true;
  return v->tex;
}

Val *imp_as_tensor(Imp *I, Val *v, const char *what) {
  if (!v->c) return v;
  if (v->dtype != OT_FLOAT) return imp_unsupported(I, "%s of a constant of element type %s", what, imp_type_name(v->dtype)), NULL;
  Val *t = xalloc(sizeof *t);
  *t = (Val){.name = v->name, .dtype = v->dtype, .ndim = v->ndim, .declared = v->declared, .param = true};
  memcpy(t->shape, v->shape, sizeof v->shape);
  t->tex = imp_tensor(I, v);
  return t;
}

const char *imp_kernel(Imp *I, const char *base, const char *text) {
  for (int i = 0; i < I->ktext.len; i++)
    if (strcmp(VEC_AT(I->ktext, i), text) == 0) return VEC_AT(I->kname, i);
  /* named after the result's shape too ("relu_3x4x5"): never a stdlib operator's name */
  const char *res = strstr(text, "-> Y: f32[");
  char *tag = xstrdup("");
  for (const char *p = res ? res + 10 : "]"; *p && *p != ']'; p++)
    if (*p != ' ') tag = xprintf("%s%c", tag, *p == ',' ? 'x' : *p);
  base = xprintf("%s_%s", base, tag);
  const char *name = base;
  for (int k = 2;; k++) {
    bool used = false;
    for (int i = 0; i < I->kname.len && !used; i++) used = strcmp(VEC_AT(I->kname, i), name) == 0;
    if (!used) break;
    name = xprintf("%s_%d", base, k);
  }
  vec_push(&I->ktext, (void *)xstrdup(text));
  vec_push(&I->kname, (void *)name);
  I->kernels = xprintf("%s\nkernel %s%s\n", I->kernels, name, text);
  return name;
}

void imp_call(Imp *I, const char *out, const char *op, const char *args) {
  char *line = xprintf("  %s = %s(%s)\n", out, op, args);
  size_t n = strlen(line);
  if (I->body_len + n + 1 > I->body_cap) { /* doubled: a model of thousands of calls */
    size_t cap = 2 * (I->body_len + n + 1) + 4096;
    char *b = xalloc(cap);
    memcpy(b, I->body, I->body_len + 1);
    I->body = b, I->body_cap = cap;
  }
  memcpy(I->body + I->body_len, line, n + 1);
  I->body_len += n;
}

void imp_call_arg(Imp *I, ImpCall *c, const char *pname, Val *v) {
  c->params = xprintf("%s%s%s: %s", c->params ? c->params : "", c->n ? ", " : "", pname, imp_ty(v));
  c->args = xprintf("%s%s%s", c->args ? c->args : "", c->n++ ? ", " : "", imp_tensor(I, v));
}

void imp_call_kernel(Imp *I, const ImpCall *c, const char *base, const Val *out, const char *stmt) {
  const char *kn = imp_kernel(I, base, xprintf("(%s) -> Y: %s {\n  %s\n}", c->params ? c->params : "", imp_ty(out), stmt));
  imp_call(I, out->tex, kn, c->args ? c->args : "");
}

/* ---- checks ---------------------------------------------------------------------- */

/* The opset of the default domain; false: reported. */
static bool check_opset(Imp *I, const Onnx__ModelProto *m) {
  I->opset = -1;
  for (size_t i = 0; i < m->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = m->opset_import[i];
    if (!o->domain || !*o->domain || strcmp(o->domain, "ai.onnx") == 0) I->opset = (int)o->version;
  }
  if (I->opset < 0) return imp_error(I, "the model imports no opset of the default domain");
  if (I->opset < 1 || I->opset > ONNX_MAX_OPSET)
    return imp_unsupported(I, "opset %d of the default domain (texc imports opsets 1 to %d)", I->opset, ONNX_MAX_OPSET);
  return true;
}

/* Is NAME an entry of LIST ("a = 1, b = 2" or "a, b"), whole, not a part of one ("h" of
 * "batch")? */
static bool listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ',' || p[n] == ' ')) return true;
  return false;
}

/* The value of symbolic dimension NAME: its -D, else what an --input file gives it
 * (input_sizes), else 1 (an unnamed one: 1), noted in I->guessed. Each name is noted once
 * for the header comment. */
static int64_t symbolic_size(Imp *I, const char *name) {
  int64_t v = 1;
  bool given = false;
  for (int i = 0; i < I->ndefs; i++)
    if (*name && strcmp(I->defs[i].name, name) == 0) {
      v = I->defs[i].value;
      I->defs[i].used = given = true;
    }
  for (int i = 0; i < I->nsized && !given; i++)
    if (*name && strcmp(I->sized[i].name, name) == 0) v = I->sized[i].value, given = true;
  const char *shown = *name ? name : "(unnamed)";
  if (!listed(I->symbolic, shown))
    I->symbolic = xprintf("%s%s%s = %lld", I->symbolic, *I->symbolic ? ", " : "", shown, (long long)v);
  if (!given && !listed(I->guessed, shown)) I->guessed = xprintf("%s%s%s", I->guessed, *I->guessed ? ", " : "", shown);
  return v;
}

/* Is the symbolic dimension NAME of an output free: neither given with -D nor a dimension of
 * a graph input of G? Then the graph computes it (an exporter that could not infer a shape
 * names each output dimension after the node: `DepthToSpace73_dim_3`). */
static bool free_output_dim(Imp *I, const Onnx__GraphProto *g, const char *name) {
  if (!*name) return true;
  for (int i = 0; i < I->ndefs; i++)
    if (strcmp(I->defs[i].name, name) == 0) return false;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__TypeProto *tp = g->input[i]->type;
    const Onnx__TensorShapeProto *sh = tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type->shape : NULL;
    for (size_t d = 0; sh && d < sh->n_dim; d++)
      if (sh->dim[d]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && !strcmp(sh->dim[d]->dim_param, name))
        return false;
  }
  return true;
}

/* A graph input or output's type into DTYPE, SHAPE; false: reported. With OUT_OF (an
 * output's graph), a free symbolic dimension (free_output_dim) is 0: the node's. */
static bool value_type(Imp *I, const Onnx__ValueInfoProto *vi, const char *what, int *dtype, int *nd, int64_t *shape,
                       const Onnx__GraphProto *out_of) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return imp_error(I, "%s '%s' has no type", what, vi->name);
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
    return imp_unsupported(I, "%s '%s' is not a tensor (a sequence, map or optional)", what, vi->name);
  if (!tp->tensor_type->has_elem_type) return imp_error(I, "%s '%s' has no element type", what, vi->name);
  const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
  if (!sh) return imp_error(I, "%s '%s' has no shape", what, vi->name);
  if (sh->n_dim > HT_MAX_DIMS) return imp_unsupported(I, "%s '%s' has %zu dimensions (at most 8)", what, vi->name, sh->n_dim);
  *dtype = tp->tensor_type->elem_type;
  *nd = (int)sh->n_dim;
  for (size_t d = 0; d < sh->n_dim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
    if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      const char *name = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dim->dim_param : "";
      if (out_of && free_output_dim(I, out_of, name)) {
        shape[d] = 0;
        continue;
      }
      shape[d] = symbolic_size(I, name);
      if (shape[d] < 1) return imp_error(I, "%s '%s': -D %s=%lld: a size must be at least 1", what, vi->name, dim->dim_param, (long long)shape[d]);
      continue;
    }
    if (dim->dim_value < (imp_held_type(*dtype) == OT_FLOAT ? 1 : 0)) return imp_unsupported(I, "%s '%s': dimension %zu is %lld (empty tensors)", what, vi->name, d + 1, (long long)dim->dim_value);
    shape[d] = dim->dim_value;
  }
  return true;
}

/* ---- stripped weights (--random-weights) ---------------------------------------------
 * The test models of tests/models/ keep their graphs but not their weights: a float
 * initializer without data whose doc_string is `texc:uniform SEED LO HI` holds value i =
 * (float)(LO + (HI - LO) * u_i), u_i the top 24 bits of splitmix64's output number i + 1
 * from SEED, over 2^24 (tests/models/make_models.py computes the same in numpy). */
static bool random_weights, int8_convs;

void onnx_int8_convs(bool on) {
  int8_convs = on;
}

void onnx_random_weights(bool on) {
  random_weights = on;
}

static uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* TP's values from its generator when it is a stripped initializer: true and *OUT set;
 * true and *OUT NULL when it is none; false after an error. */
static bool stripped_values(Imp *I, const Onnx__TensorProto *tp, double **out, int64_t *n) {
  *out = NULL;
  const char *doc = tp->doc_string;
  if (!doc || strncmp(doc, "texc:uniform ", 13) != 0 || tp->has_raw_data || tp->n_float_data) return true;
  if (!random_weights)
    return imp_error(I, "initializer '%s' has no data, only a generator (`%s`): --random-weights fills it", tp->name, doc);
  unsigned long long seed;
  double lo, hi;
  char end;
  if (tp->data_type != OT_FLOAT || sscanf(doc + 13, "%llu %lf %lf %c", &seed, &lo, &hi, &end) != 3 || !(lo <= hi))
    return imp_error(I, "initializer '%s': a generator `%s` (float, `texc:uniform SEED LO HI`)", tp->name, doc);
  int64_t m = 1;
  for (size_t d = 0; d < tp->n_dims; d++) {
    if (tp->dims[d] < 0 || (tp->dims[d] && m > ((int64_t)1 << 32) / tp->dims[d]))
      return imp_error(I, "initializer '%s': a negative or huge dimension", tp->name);
    m *= tp->dims[d];
  }
  double *v = malloc(sizeof(double) * (size_t)(m ? m : 1));
  for (int64_t i = 0; i < m; i++) {
    uint64_t z = splitmix64((uint64_t)seed + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull);
    v[i] = (float)(lo + (hi - lo) * ((double)(z >> 40) * 0x1p-24));
  }
  *out = v;
  *n = m;
  return true;
}

/* Initializers as constants; false: reported. */
/* Initializer TP of external data (ONNX's `location`, `offset`, `length`: what PyTorch's
 * exporter writes beside MODEL.onnx as MODEL.onnx.data) into *OUT, *N; a file named relative
 * to the model's folder, inside it. false: reported. */
static bool external_values(Imp *I, const Onnx__TensorProto *tp, double **out, int64_t *n) {
  const char *loc = NULL;
  long long off = 0, len = -1;
  for (size_t k = 0; k < tp->n_external_data; k++) {
    const Onnx__StringStringEntryProto *e = tp->external_data[k];
    char end;
    if (!e->key || !e->value) continue;
    if (!strcmp(e->key, "location")) loc = e->value;
    else if ((!strcmp(e->key, "offset") && sscanf(e->value, "%lld%c", &off, &end) != 1) ||
             (!strcmp(e->key, "length") && sscanf(e->value, "%lld%c", &len, &end) != 1))
      return imp_error(I, "initializer '%s': external data %s '%s' is not a number", tp->name, e->key, e->value);
  }
  if (!loc || !*loc || loc[0] == '/' || strstr(loc, "..") || off < 0)
    return imp_error(I, "initializer '%s': external data needs a location inside the model's folder (got '%s') and an "
                     "offset of at least 0", tp->name, loc ? loc : "");
  const char *slash = strrchr(I->path, '/');
  const char *file = slash ? xprintf("%.*s/%s", (int)(slash - I->path), I->path, loc) : loc;
  FILE *f = fopen(file, "rb");
  if (!f) return imp_error(I, "initializer '%s': cannot open its external data file %s", tp->name, file);
  long long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (len < 0) len = size - off;
  if (size < 0 || off > size || len < 0 || len > size - off) {
    fclose(f);
    return imp_error(I, "initializer '%s': bytes %lld to %lld of %s, a file of %lld bytes (truncated?)", tp->name, off,
                     off + len, file, size);
  }
  Onnx__TensorProto raw = *tp; /* the same tensor with its bytes inside */
  raw.n_external_data = 0;
  raw.has_data_location = 0;
  raw.has_raw_data = 1;
  raw.raw_data.len = (size_t)len;
  raw.raw_data.data = malloc((size_t)len + 1);
  bool read = fseek(f, off, SEEK_SET) == 0 && fread(raw.raw_data.data, 1, (size_t)len, f) == (size_t)len;
  fclose(f);
  const char *why = "cannot read its external data file";
  bool ok = read && imp_tensor_values(&raw, out, n, &why);
  free(raw.raw_data.data);
  return ok ? true : imp_error(I, "initializer '%s': %s (%s)", tp->name, why, file);
}

static bool load_initializers(Imp *I, const Onnx__GraphProto *g) {
  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *tp = g->initializer[i];
    double *v;
    int64_t n;
    const char *why;
    if (!tp->name || !*tp->name) return imp_error(I, "initializer %zu has no name", i);
    if (tp->n_dims > HT_MAX_DIMS) return imp_unsupported(I, "initializer '%s' has more than 8 dimensions", tp->name);
    if (!stripped_values(I, tp, &v, &n)) return false;
    if (!v && tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
      if (!external_values(I, tp, &v, &n)) return false;
    } else if (!v && !imp_tensor_values(tp, &v, &n, &why)) return imp_error(I, "initializer '%s': %s", tp->name, why);
    if (imp_val(I, tp->name)) return imp_error(I, "initializer '%s' is defined twice", tp->name);
    new_val(I, tp->name, tp->data_type, (int)tp->n_dims, tp->dims)->c = v;
  }
  return true;
}

/* Inputs given as files (`texc run MODEL.onnx --input ...`): the integer ones (shapes,
 * axes, indices: no network tensor can hold them) are folded in as constants. */
static const char *const *bound_files;
static int nbound;
static bool bound_folded[64];

void onnx_bind_inputs(const char *const *files, int n) {
  bound_files = files;
  nbound = n < 64 ? n : 64;
  memset(bound_folded, 0, sizeof bound_folded);
}

bool onnx_input_folded(int i) {
  return i >= 0 && i < nbound && bound_folded[i];
}

/* The values of input file PATH (.pb exactly, .npy through f32) as V's constant; false:
 * reported. */
static bool bind_input(Imp *I, const char *path, Val *v) {
  int64_t n = 0;
  size_t len = strlen(path);
  if (len > 3 && strcmp(path + len - 3, ".pb") == 0) {
    unsigned char *b = (unsigned char *)read_file(path, &len);
    Onnx__TensorProto *tp = b ? onnx__tensor_proto__unpack(NULL, len, b) : NULL;
    free(b);
    const char *why = "not a serialized onnx.TensorProto";
    bool ok = tp && imp_tensor_values(tp, &v->c, &n, &why);
    if (tp) onnx__tensor_proto__free_unpacked(tp, NULL);
    if (!ok) return diag_error((Loc){0}, "%s: %s", path, why), I->failed = true, false;
  } else {
    HostTensor h;
    if (!npy_read(path, &h)) return I->failed = true, false;
    n = ht_numel(&h);
    v->c = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) v->c[i] = h.data[i];
    free(h.data);
  }
  if (n != val_numel(v)) {
    diag_error((Loc){0}, "%s: %lld values, but input '%s' has %lld", path, (long long)n, v->name, (long long)val_numel(v));
    return I->failed = true, false;
  }
  return true;
}

/* Integer and boolean graph inputs: run-time tensors of the network (token ids, masks: the
 * first attempt of onnx_import), or, in its second attempt, folded in from their --input
 * files (shapes and axes; ONNX's node tests), and so float inputs read only as Resize's
 * scales (float_const_only). */
static bool fold_bound_ints;

static char *idx_text(int nd) {
  char *s = xstrdup("");
  for (int d = 0; d < (nd ? nd : 1); d++) s = xprintf("%s%si%d", s, d ? ", " : "", d);
  return s;
}

/* Input V, a parameter of type FROM (`bool`, or `i32` for uint8 and int8: the library
 * takes int32_t), as the f32 values the operators read, by a first kernel BASE computing
 * EXPR of `X[...]` (its %s: the index), into a tensor named after V and SUFFIX: a bool
 * input's mask (0 and 1), a quantized input's exact integers (Val.fint, onnx_quant.c). */
static void param_as_f32(Imp *I, Val *v, const char *from, const char *base, const char *expr, const char *suffix) {
  char *ix = idx_text(v->ndim), *dims = strchr(shape_decl(v), '[');
  const char *kn = imp_kernel(I, base, xprintf("(X: %s%s) -> Y: f32%s {\n  Y[%s] = %s\n}", from, dims, dims, ix,
                                               xprintf(expr, ix)));
  const char *t = imp_name(I, xprintf("%s_%s", v->name, suffix));
  imp_call(I, t, kn, v->tex);
  v->tex = t;
  v->param = false;
}

/* The shape of input file PATH (.npy: its header; else a TensorProto's dims) into ND and
 * SHAPE; false when it cannot be read (loading the file later reports why). */
static bool file_shape(const char *path, int *nd, int64_t *shape) {
  size_t len = strlen(path);
  if (len > 4 && strcmp(path + len - 4, ".npy") == 0) return npy_read_shape(path, nd, shape);
  unsigned char *b = (unsigned char *)read_file(path, &len);
  Onnx__TensorProto *tp = b ? onnx__tensor_proto__unpack(NULL, len, b) : NULL;
  free(b);
  if (!tp || tp->n_dims > HT_MAX_DIMS) {
    if (tp) onnx__tensor_proto__free_unpacked(tp, NULL);
    return false;
  }
  *nd = (int)tp->n_dims;
  for (size_t d = 0; d < tp->n_dims; d++) shape[d] = tp->dims[d];
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return true;
}

static bool is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return true;
  return false;
}

/* The symbolic dimensions that the --input files give (onnx_bind_inputs: the i-th file is
 * the i-th graph input that is not an initializer): a model exported with dynamic axes
 * (`batch`, `h`, `w`, `sequence`) runs at the sizes of the data it is given, unless -D says
 * otherwise. Two files that disagree on one name are an error; a file of another rank is
 * left to the input's own check. false: reported. */
static bool input_sizes(Imp *I, const Onnx__GraphProto *g) {
  I->sized = xalloc(sizeof(Define) * 64);
  I->nsized = 0;
  for (size_t i = 0, k = 0; i < g->n_input && (int)k < nbound; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name || is_initializer(g, vi->name)) continue;
    const char *path = bound_files[k++];
    const Onnx__TypeProto *tp = vi->type;
    const Onnx__TensorShapeProto *sh =
        tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type->shape : NULL;
    int nd;
    int64_t shape[HT_MAX_DIMS];
    if (!sh || !file_shape(path, &nd, shape) || nd != (int)sh->n_dim) continue;
    for (int d = 0; d < nd; d++) {
      const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
      if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || !*dim->dim_param) continue;
      bool by_d = false;
      for (int j = 0; j < I->ndefs; j++) by_d |= strcmp(I->defs[j].name, dim->dim_param) == 0;
      if (by_d || shape[d] < 1) continue;
      int j = 0;
      while (j < I->nsized && strcmp(I->sized[j].name, dim->dim_param) != 0) j++;
      if (j < I->nsized && I->sized[j].value != shape[d])
        return imp_error(I, "the input files disagree on symbolic dimension %s: %lld, and %lld in %s (input '%s'); "
                         "-D %s=N picks one", dim->dim_param, (long long)I->sized[j].value, (long long)shape[d], path,
                         vi->name, dim->dim_param);
      if (j == I->nsized && I->nsized < 64)
        I->sized[I->nsized++] = (Define){.name = dim->dim_param, .value = shape[d]};
    }
  }
  return true;
}

/* Is graph input NAME a float that G reads only as Resize's roi or scales (Upsample's
 * scales, OneHot's depth, Dropout's ratio, MelWeightMatrix's edges, Range's bounds): numbers the import needs as constants, folded in from an --input file as the
 * integer shapes and axes are (ONNX's node tests give scales so). */
static bool float_const_only(const Onnx__GraphProto *g, const char *name) {
  bool read = false;
  if (!name || !*name) return false;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    for (size_t j = 0; j < nd->n_input; j++) {
      if (!nd->input[j] || strcmp(nd->input[j], name) != 0) continue;
      bool resize = nd->op_type && !strcmp(nd->op_type, "Resize") && (j == 1 || j == 2);
      bool upsample = nd->op_type && !strcmp(nd->op_type, "Upsample") && j == 1;
      bool depth = nd->op_type && !strcmp(nd->op_type, "OneHot") && j == 1;
      bool ratio = nd->op_type && !strcmp(nd->op_type, "Dropout") && j == 1;
      bool mel = nd->op_type && !strcmp(nd->op_type, "MelWeightMatrix") && (j == 3 || j == 4);
      bool range = nd->op_type && !strcmp(nd->op_type, "Range");
      if (!resize && !upsample && !depth && !ratio && !mel && !range) return false;
      read = true;
    }
  }
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i]->name && !strcmp(g->output[i]->name, name)) return false;
  return read;
}

/* The graph inputs that are not initializers: the network's first parameters, in order. */
static bool load_inputs(Imp *I, const Onnx__GraphProto *g, char **header) {
  int count = 0, k = 0;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    int dtype, nd;
    int64_t shape[HT_MAX_DIMS];
    if (!vi->name || !*vi->name) return imp_error(I, "graph input %zu has no name", i);
    Val *init = imp_val(I, vi->name);
    if (!value_type(I, vi, "input", &dtype, &nd, shape, NULL)) return false;
    if (init) continue; /* an initializer listed as an input (IR < 4): a constant */
    if (dtype == OT_BFLOAT16)
      return imp_unsupported(I, "input '%s' of element type bfloat16 (texc's tensors are float16, float or double; a "
                             "model's bfloat16 weights and Casts are read)", vi->name);
    Val *v = new_val(I, vi->name, dtype, nd, shape);
    bool q8 = dtype == OT_UINT8 || dtype == OT_INT8; /* quantized values: always at run time */
    bool fl = v->dtype == OT_FLOAT; /* float, float16 or double, held as f32 */
    if (fl && fold_bound_ints && k < nbound && float_const_only(g, vi->name)) {
      if (!bind_input(I, bound_files[k], v)) return false;
      bound_folded[k++] = true;
      continue;
    }
    bool int_param = ((dtype == OT_INT64 || dtype == OT_INT32 || dtype == OT_BOOL) && nd > 0 && val_numel(v) > 0 &&
                      !(fold_bound_ints && k < nbound)) || (q8 && val_numel(v) > 0);
    if (!fl && !int_param && k < nbound) {
      if (!bind_input(I, bound_files[k], v)) return false;
      bound_folded[k++] = true;
      continue;
    }
    k++;
    if (val_numel(v) == 0) return imp_unsupported(I, "input '%s' is empty (a dimension of 0)", vi->name);
    if (!fl && !int_param)
      return imp_unsupported(I, "input '%s' has element type %s; networks take float (f32, f16, f64), int64, int32 and "
                             "bool (an integer input given with --input is folded in as a constant where it must be "
                             "one)", vi->name, imp_type_name(dtype));
    v->tex = imp_name(I, vi->name);
    v->param = true;
    I->ninputs++;
    const char *from = dtype == OT_BOOL ? "bool" : q8 ? "i32" : dtype == OT_FLOAT16 ? "f16" : dtype == OT_DOUBLE ? "f64" : NULL;
    const char *decl = from ? xprintf("%s%s", from, strchr(shape_decl(v), '[')) : shape_decl(v);
    *header = xprintf("%s%s%s: %s", *header, count++ ? ",\n    " : "", v->tex, decl);
    if (dtype == OT_BOOL) param_as_f32(I, v, "bool", "to_mask", "X[%s] ? 1.0 : 0.0", "mask");
    if (q8) param_as_f32(I, v, "i32", "to_float", "f32(X[%s])", "f32"), v->fint = true;
    if (v->declared) param_as_f32(I, v, from, "to_float", "f32(X[%s])", "f32");
  }
  return true; /* none at all: a graph of constants only, its outputs copies of weights (load_output) */
}

/* Nodes in an order where each reads only what earlier nodes (or the graph) define;
 * false after "cycle" or "undefined" errors. */
static bool topo_order(Imp *I, const Onnx__GraphProto *g, int *order) {
  size_t n = g->n_node;
  bool *done = xalloc(sizeof(bool) * (n + 1));
  Vec defined = {0}; /* names defined so far */
  for (int i = 0; i < I->vals.len; i++) vec_push(&defined, (void *)((Val *)VEC_AT(I->vals, i))->name);
  int k = 0;
  for (bool progress = true; progress && (size_t)k < n;) {
    progress = false;
    for (size_t i = 0; i < n; i++) {
      if (done[i]) continue;
      const Onnx__NodeProto *nd = g->node[i];
      bool ready = true;
      for (size_t j = 0; j < nd->n_input && ready; j++) {
        if (!*nd->input[j]) continue; /* an omitted optional input */
        bool found = false;
        for (int d = defined.len - 1; d >= 0 && !found; d--) found = strcmp(VEC_AT(defined, d), nd->input[j]) == 0;
        ready = found;
      }
      if (!ready) continue;
      done[i] = progress = true;
      order[k++] = (int)i;
      for (size_t j = 0; j < nd->n_output; j++) vec_push(&defined, nd->output[j]);
    }
  }
  if ((size_t)k == n) return true;
  /* The first node left: a cycle when everything it reads is some node's output. */
  for (size_t i = 0; i < n; i++) {
    if (done[i]) continue;
    const Onnx__NodeProto *nd = g->node[i];
    I->node = nd;
    for (size_t j = 0; j < nd->n_input; j++) {
      bool produced = false;
      for (size_t p = 0; p < n && !produced; p++)
        for (size_t q = 0; q < g->node[p]->n_output; q++) produced |= strcmp(g->node[p]->output[q], nd->input[j]) == 0;
      bool known = false;
      for (int d = 0; d < defined.len && !known; d++) known = strcmp(VEC_AT(defined, d), nd->input[j]) == 0;
      if (!known && !produced && *nd->input[j])
        return imp_error(I, "input '%s' is defined by no node, initializer or graph input", nd->input[j]);
    }
    return imp_error(I, "the graph has a cycle through this node (what it reads depends on its own result)");
  }
  return false;
}


/* Graph output K as a result of the network: its name into *NAME, `f32[...]` into *DECL;
 * false: reported. RESULTS: the names of the results before it. */
static bool load_output(Imp *I, const Onnx__GraphProto *g, size_t k, const Vec *results, const char **name, const char **decl) {
  const Onnx__ValueInfoProto *vi = g->output[k];
  int dtype, nd;
  int64_t shape[HT_MAX_DIMS];
  if (!vi->name || !*vi->name) return imp_error(I, "graph output %zu has no name", k + 1);
  if (!value_type(I, vi, "output", &dtype, &nd, shape, g)) return false;
  Val *v = imp_val(I, vi->name);
  if (!v) return imp_error(I, "output '%s' is computed by no node", vi->name);
  for (int d = 0; d < nd && nd == v->ndim; d++)
    if (!shape[d]) shape[d] = v->shape[d]; /* a free symbolic dimension: the graph's */
  bool ints = dtype == OT_INT64 || dtype == OT_INT32, q8 = dtype == OT_UINT8 || dtype == OT_INT8; /* q8: an i32 result */
  int held = imp_held_type(dtype); /* float16 and double results: held as f32, converted */
  if (held != OT_FLOAT && dtype != OT_BOOL && !ints && !q8)
    return imp_unsupported(I, "output '%s' of element type %s (float, float16, double, int64, int32, uint8, int8, bool)",
                           vi->name, imp_type_name(dtype));
  if (dtype == OT_BFLOAT16)
    return imp_unsupported(I, "output '%s' of element type bfloat16 (texc's tensors are float16, float or double)", vi->name);
  if (v->dtype != held && !(ints && (v->dtype == OT_INT64 || v->dtype == OT_INT32)))
    return imp_unsupported(I, "output '%s' of element type %s, made as element type %s here", vi->name, imp_type_name(dtype), imp_type_name(v->dtype));
  if (nd != v->ndim || (nd && memcmp(shape, v->shape, sizeof(int64_t) * (size_t)nd)))
    return imp_error(I, "output '%s' is declared %s but its node makes %s", vi->name,
                     shape_decl(&(Val){.ndim = nd, .shape = {shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6], shape[7]}}),
                     shape_decl(v));
  if (val_numel(v) == 0) return imp_unsupported(I, "output '%s' is empty (a dimension of 0)", vi->name);
  char *dims = strchr(shape_decl(v), '[');
  const char *ty = dtype == OT_BOOL ? "bool" : dtype == OT_INT64 ? "i64" : dtype == OT_INT32 || q8 ? "i32"
                   : dtype == OT_FLOAT16 ? "f16" : dtype == OT_DOUBLE ? "f64" : "f32";
  *decl = xprintf("%s%s", ty, dims);
  /* The result is a call's, in the model's layout and type: a copy when the output is a
   * parameter (Identity of the input, or a constant: Shape, Size, an inference Dropout's
   * mask) or an earlier output's tensor too (each result is its own); a mask (0 and 1 held
   * as f32) or integers held as f32 converted. */
  const char *res = imp_tensor(I, v); /* a constant: a weight of its values (f32), copied */
  bool taken = false, convert = dtype == OT_BOOL || v->fint || v->dtype != dtype || (v->c && dtype != OT_FLOAT);
  for (int i = 0; i < results->len; i++) taken |= strcmp(VEC_AT(*results, i), res) == 0;
  if ((v->param && !v->nhwc) || taken || convert) {
    const char *src = res, *ix = idx_text(v->ndim);
    const char *rhs = dtype == OT_BOOL ? xprintf("X[%s] != 0.0", ix)
                      : convert ? xprintf("%s(X[%s])", ty, ix) : xprintf("X[%s]", ix);
    const char *xdecl = v->fint || v->dtype == OT_BOOL || v->c ? xprintf("f32%s", dims) : shape_decl(v);
    res = imp_name(I, xprintf("%s_out", vi->name));
    const char *copy = imp_kernel(I, convert ? "to_output" : "copy", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = %s\n}", xdecl, *decl, ix, rhs));
    imp_call(I, res, copy, src);
  }
  *name = res;
  return true;
}

/* The graph's outputs as the network's results: `NAME: f32[...]`, or a parenthesised list
 * of several, into *DECLS; false: reported. */
static bool load_outputs(Imp *I, const Onnx__GraphProto *g, const char **decls) {
  I->node = NULL;
  if (g->n_output == 0) return imp_error(I, "the graph has no output");
  Vec results = {0};
  char *text = xstrdup("");
  for (size_t k = 0; k < g->n_output; k++) {
    const char *name = NULL, *decl = NULL;
    if (!load_output(I, g, k, &results, &name, &decl)) return false;
    vec_push(&results, (void *)name);
    text = xprintf("%s%s%s: %s", text, k ? ", " : "", name, decl);
  }
  *decls = g->n_output == 1 ? text : xprintf("(%s)", text);
  return true;
}

Imp *imp_now;

/* G's nodes in an order where each reads what is defined before it; false after errors. */
static bool import_nodes(Imp *I, const Onnx__GraphProto *g) {
  imp_now = I;
  int *order = xalloc(sizeof(int) * (g->n_node + 1));
  if (!topo_order(I, g, order)) return false;
  bool *skip = xalloc(sizeof(bool) * (g->n_node + 1)); /* nodes imported with an earlier one */
  for (size_t i = 0; i < g->n_node; i++) {
    if (skip[order[i]]) continue;
    I->node = g->node[order[i]];
    for (size_t j = 0; j < I->node->n_attribute; j++) /* protobuf-c leaves a missing name NULL */
      if (!I->node->attribute[j]->name || !*I->node->attribute[j]->name) return imp_error(I, "attribute %zu has no name", j + 1);
    for (size_t j = 0; j < I->node->n_output; j++)
      if (*I->node->output[j] && imp_val(I, I->node->output[j])) return imp_error(I, "value '%s' is defined twice", I->node->output[j]);
    if (!onnx_channel_shuffle(I, g, order[i], skip) && !onnx_op(I)) return false;
  }
  return true;
}

bool imp_import_graph(Imp *I, const Onnx__GraphProto *g) {
  const Onnx__GraphProto *outer = I->graph;
  const Onnx__NodeProto *node = I->node;
  I->graph = g; /* what the importer searches for a value's readers: the subgraph's nodes */
  bool ok = load_initializers(I, g) && import_nodes(I, g);
  I->graph = outer;
  I->node = node;
  return ok;
}

Val *imp_alias_as(Imp *I, const char *name, const Val *v) {
  Val *o = new_val(I, name, v->dtype, v->ndim, v->shape);
  const char *n = o->name;
  *o = *v; /* the same tensor (or constant) under another name */
  o->name = n;
  if (v->c) {
    o->c = imp_vals(val_numel(v));
    memcpy(o->c, v->c, sizeof(double) * (size_t)val_numel(v));
  }
  return o;
}

/* The model's text and weights; false after errors. */
static bool import_model(Imp *I, const Onnx__ModelProto *m, const char *tex_name, OnnxImport *out) {
  const Onnx__GraphProto *g = m->graph;
  if (!g) return imp_error(I, "the model has no graph");
  I->graph = g;
  for (size_t i = 0; i < g->n_node; i++) { /* first what no opset would make importable */
    I->node = g->node[i];
    if (!I->node->op_type || !*I->node->op_type) return imp_error(I, "the node has no op_type"); /* a corrupt file */
    const char *dom = I->node->domain && *I->node->domain ? I->node->domain : "ai.onnx";
    bool contrib = !strcmp(dom, "com.microsoft") && onnx_contrib_known(I->node->op_type);
    if (strcmp(dom, "ai.onnx") && !contrib) return imp_unsupported(I, "operator %s of domain '%s'", I->node->op_type, dom);
    if (!contrib && !onnx_op_known(I->node->op_type)) return imp_unsupported(I, "operator %s", I->node->op_type);
  }
  I->node = NULL;
  if (!check_opset(I, m)) return false;
  char *inputs = xstrdup("");
  if (!input_sizes(I, g) || !load_initializers(I, g) || !load_inputs(I, g, &inputs)) return false;
  if (!import_nodes(I, g)) return false;
  const char *results = NULL;
  if (!load_outputs(I, g, &results)) return false;
  const char *gname = imp_name(I, g->name && *g->name ? g->name : "model");
  out->text = xprintf("# %s: imported by `texc import` from %s (opset %d%s%s).\n"
                      "# Weights: %zu tensors in the safetensors file beside this one.\n%s"
                      "import \"nn/elementwise.tex\"\nimport \"nn/dense.tex\"\nimport \"nn/shape.tex\"\nimport \"nn/conv2d.tex\"\n"
                      "import \"nn/onnx.tex\"\n%s\n"
                      "network %s(%s%s)\n    -> %s {\n%s}\n",
                      tex_name, I->path, I->opset, m->producer_name && *m->producer_name ? ", producer " : "",
                      m->producer_name && *m->producer_name ? m->producer_name : "", (size_t)I->weights.n,
                      *I->symbolic ? xprintf("# Symbolic sizes, fixed here: %s (texc import -D NAME=N picks others).\n", I->symbolic) : "",
                      I->kernels,
                      gname, inputs, *inputs ? I->params : I->params + strspn(I->params, ",\n "), results, I->body);
  out->weights = I->weights;
  out->ninputs = I->ninputs;
  out->output_names = xalloc(sizeof(char *) * (g->n_output + 1));
  for (size_t k = 0; k < g->n_output; k++) out->output_names[k] = xstrdup(g->output[k]->name);
  return true;
}

bool onnx_is_model(const char *path) {
  size_t n = strlen(path);
  return n > 5 && strcmp(path + n - 5, ".onnx") == 0;
}

/* Is a second attempt worth it: is an integer graph input of M (or a float one read only
 * as a constant, float_const_only) given as an --input file (onnx_bind_inputs)? When every
 * input folds so, the graph is one of constants (MelWeightMatrix's node test), which
 * imports too. */
static bool int_input_bound(const Onnx__ModelProto *m) {
  const Onnx__GraphProto *g = m->graph;
  bool bound = false;
  for (size_t i = 0, k = 0; g && i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (vi->name && is_initializer(g, vi->name)) continue;
    const Onnx__TypeProto *tp = vi->type;
    int dt = tp && tp->tensor_type ? tp->tensor_type->elem_type : 0;
    bool is_int = dt == OT_INT64 || dt == OT_INT32 || dt == OT_BOOL || (imp_held_type(dt) == OT_FLOAT && float_const_only(g, vi->name)),
         has_file = (int)k++ < nbound;
    bound |= is_int && has_file;
  }
  return bound;
}

/* One attempt at M: integer inputs at run time, or (FOLD) those given as files folded. */
static bool import_attempt(const char *path, const char *tex_name, Define *defs, int ndefs, const Onnx__ModelProto *m,
                           bool fold, OnnxImport *out) {
  memset(out, 0, sizeof *out);
  Imp I = {.path = path, .body = xstrdup(""), .kernels = xstrdup(""), .params = xstrdup(""), .defs = defs, .ndefs = ndefs,
           .symbolic = xstrdup(""), .guessed = xstrdup(""), .int8 = int8_convs};
  fold_bound_ints = fold;
  memset(bound_folded, 0, sizeof bound_folded);
  bool ok = import_model(&I, m, tex_name, out) && !I.failed;
  for (int i = 0; i < I.vals.len; i++) free(((Val *)VEC_AT(I.vals, i))->c);
  if (ok && *I.guessed)
    diag_note((Loc){0}, "%s: symbolic dimension%s %s taken as 1 (-D NAME=N, or --input files of the sizes, give "
              "others)", path, strchr(I.guessed, ',') ? "s" : "", I.guessed);
  return ok;
}

bool onnx_import(const char *path, const char *tex_name, Define *defs, int ndefs, OnnxImport *out) {
  memset(out, 0, sizeof *out);
  Imp I = {.path = path};
  size_t len;
  unsigned char *b = (unsigned char *)read_file(path, &len);
  if (!b) return imp_error(&I, "cannot read the model");
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, b);
  free(b);
  if (!m) return imp_error(&I, "not an ONNX model: the protobuf is truncated or corrupt");
  /* Integer inputs stay run-time inputs (token ids, masks, their arithmetic); where the
   * model needs one as a constant (a shape, axes) and a file gives it, the second attempt
   * folds it in, and its diagnostics are the ones shown. */
  bool retry = int_input_bound(m) && diag_errors() == 0, quiet = diag_silent;
  diag_silent = quiet || retry;
  bool ok = import_attempt(path, tex_name, defs, ndefs, m, false, out);
  diag_silent = quiet;
  if (!ok && retry) {
    const char *first = xstrdup(diag_last()), *colon = strstr(first, "error: ");
    diag_reset(); /* the first attempt's errors, unseen */
    ok = import_attempt(path, tex_name, defs, ndefs, m, true, out);
    if (!ok && strcmp(first, diag_last()) != 0) /* both errors: the first may be the model's real limit */
      diag_note((Loc){0}, "with the integer inputs at run time (as the model takes them), the import stopped at: %s",
                colon ? colon + 7 : first);
  }
  onnx__model_proto__free_unpacked(m, NULL);
  return ok;
}

/* NET.tex for MODEL.onnx: the model's path with .tex for .onnx. */
static const char *tex_for(const char *model) {
  size_t n = strlen(model);
  return xprintf("%.*s.tex", (int)(onnx_is_model(model) ? n - 5 : n), model);
}

int onnx_import_main(const char *model, const char *out, Define *defs, int ndefs) {
  const char *tex = out ? out : tex_for(model);
  size_t n = strlen(tex);
  if (n < 5 || strcmp(tex + n - 4, ".tex") != 0) {
    diag_error((Loc){0}, "-o %s: the network file's name ends in .tex", tex);
    return 1;
  }
  OnnxImport im;
  if (!onnx_import(model, tex, defs, ndefs, &im)) return 1;
  for (int i = 0; i < ndefs; i++)
    if (!defs[i].used) diag_warning((Loc){0}, "-D %s: no symbolic dimension of that name in %s", defs[i].name, model);
  const char *weights = xprintf("%.*s.safetensors", (int)(n - 4), tex);
  FILE *f = fopen(tex, "w");
  if (!f || fputs(im.text, f) < 0 || fclose(f) != 0) {
    diag_error((Loc){0}, "%s: cannot write the file", tex);
    return 1;
  }
  if (!safetensors_write(weights, &im.weights)) return 1;
  printf("%s: %s and %s (%d weight tensors)\n", model, tex, weights, im.weights.n);
  return 0;
}
