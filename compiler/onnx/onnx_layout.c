/* onnx_layout.c — the ONNX operators that move data (docs/ONNX.md): Reshape, Flatten,
 * Squeeze / Unsqueeze, Transpose, Concat, Split, Slice, Expand, Tile, Pad, DepthToSpace /
 * SpaceToDepth, Trilu, Size, the gathers (Gather, GatherND, GatherElements) and scatters
 * (ScatterND, ScatterElements). Folded for constants, else a kernel of index arithmetic
 * (onnx_ops.c's helpers); onnx_layout_op is their entry from the table.
 */
#include "onnx/onnx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* X's indices, as text, of the output point i0.. of a reshape to SHAPE, or NULL when the
 * dimensions do not pair up. Dimensions of extent 1 are dropped (index 0 in X); the others
 * pair up into groups of equal products in order, and within a group X's indices come from
 * the group's own flat index: a dimension split in several reads X at their row-major
 * combination, several merged into one divide it; no division by a stride outside the
 * group ([197, 1, 2304] -> [197, 1, 3, 768] reads X[i0, 0, i2 * 768 + i3]). */
char *imp_reshape_index(const Val *x, const int64_t *shape, int nd) {
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
  if (val_numel(&tmp) != val_numel(x)) return imp_error(I, "cannot reshape %lld elements to %s", (long long)val_numel(x), imp_ty(&tmp));
  if (x->c) {
    int64_t n = val_numel(x);
    double *c = imp_vals(n);
    memcpy(c, x->c, sizeof(double) * (size_t)n);
    imp_const_out(I, 0, x->dtype, nd, shape, c);
    return true;
  }
  if (nd == x->ndim && !memcmp(shape, x->shape, sizeof(int64_t) * (size_t)nd)) return imp_alias(I, x);
  Val *o = imp_net_out_like(I, 0, nd, shape, x);
  char *rhs = imp_reshape_index(x, shape, nd);
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
    rhs = *guard ? xprintf("%s ? X[%s] : %s", guard, acc, imp_run_time_int(x) ? "0" : "0.0") : xprintf("X[%s]", acc);
  }
  const char *k = imp_kernel(I, "reshape", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = %s\n}", imp_ty(x), imp_ty(o), imp_idx("i", nd), rhs));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

static bool op_reshape(Imp *I) {
  if (!imp_attrs_known(I, "allowzero") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *s = imp_const_in(I, 1, "shape");
  if (!x || !s) return x ? false : imp_error(I, "input 1 is missing");
  int64_t shape[HT_MAX_DIMS];
  int nd = imp_shape_from(I, s, shape), neg = -1;
  if (nd < 0) return false;
  int64_t known = 1;
  for (int d = 0; d < nd; d++) {
    if (shape[d] == 0 && !imp_attr_i(I, "allowzero", 0)) {
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
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int a = (int)imp_attr_i(I, "axis", 1);
  if (a < 0) a += x->ndim;
  if (a < 0 || a > x->ndim) return imp_error(I, "axis %d outside rank %d", a, x->ndim);
  int64_t s[2] = {1, 1};
  for (int d = 0; d < x->ndim; d++) s[d >= a] *= x->shape[d];
  return reshape_to(I, x, s, 2);
}

/* Squeeze/Unsqueeze: axes from the attribute (opset < 13) or input 2. */
static int axes_of(Imp *I, int64_t *axes) {
  int na = imp_attr_ints(I, "axes", axes, HT_MAX_DIMS);
  if (imp_in(I, 1)) {
    Val *a = imp_const_in(I, 1, "axes");
    if (!a) return -2;
    na = (int)val_numel(a) > HT_MAX_DIMS ? HT_MAX_DIMS : (int)val_numel(a);
    for (int i = 0; i < na; i++) axes[i] = (int64_t)a->c[i];
  }
  return na;
}

static bool op_squeeze(Imp *I, bool un) {
  if (!imp_attrs_known(I, "axes") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0);
  int64_t axes[HT_MAX_DIMS], shape[HT_MAX_DIMS];
  int na = x ? axes_of(I, axes) : -2, nd = 0;
  if (!x) return imp_error(I, "input 1 is missing");
  if (na == -2) return false;
  if (un) {
    int r = x->ndim + na;
    if (na < 0 || r > HT_MAX_DIMS) return imp_error(I, "Unsqueeze needs axes (at most 8 dimensions)");
    bool ins[HT_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
      int a = imp_axis_of(I, axes[i], r);
      if (a < 0) return false;
      ins[a] = true;
    }
    for (int d = 0, k = 0; d < r; d++) shape[nd++] = ins[d] ? 1 : x->shape[k++];
  } else {
    bool drop[HT_MAX_DIMS] = {0};
    for (int i = 0; i < na; i++) {
      int a = imp_axis_of(I, axes[i], x->ndim);
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
  if (!imp_attrs_known(I, "perm") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int r = x->ndim;
  int64_t perm[HT_MAX_DIMS], os[HT_MAX_DIMS];
  int np = imp_attr_ints(I, "perm", perm, HT_MAX_DIMS);
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
    double *c = imp_vals(n);
    for (int64_t i = 0; i < n; i++) {
      int64_t rem = i, src = 0;
      for (int d = r - 1; d >= 0; d--) ix[d] = rem % os[d], rem /= os[d];
      int64_t xi[HT_MAX_DIMS];
      for (int d = 0; d < r; d++) xi[perm[d]] = ix[d];
      for (int d = 0; d < r; d++) src = src * x->shape[d] + xi[d];
      c[i] = x->c[src];
    }
    imp_const_out(I, 0, x->dtype, r, os, c);
    return true;
  }
  char *acc = xstrdup("");
  int64_t inv[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) inv[perm[d]] = d;
  for (int d = 0; d < r; d++) acc = xprintf("%s%si%lld", acc, d ? ", " : "", (long long)inv[d]);
  Val *o = imp_net_out_like(I, 0, r, os, x); /* run-time integers stay so */
  const char *k = imp_kernel(I, "transpose", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(o), imp_idx("i", r), acc));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

static bool concat_gen(Imp *I, Val **x, int n, int a, const int64_t *os);

static bool op_concat(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  int n = imp_nin(I);
  Val **x = xalloc(sizeof(Val *) * (size_t)(n + 1));
  for (int k = 0; k < n; k++)
    if (!(x[k] = imp_in(I, k))) return imp_error(I, "input %d is missing", k + 1);
  if (n < 1) return imp_error(I, "no inputs");
  return imp_concat(I, x, n, imp_attr_i(I, "axis", I->opset < 4 ? 1 : 0)); /* Concat-1: 1 */
}

bool imp_concat(Imp *I, Val **x, int n, int64_t axis) {
  bool all_const = true;
  for (int k = 0; k < n; k++) all_const &= x[k]->c != NULL;
  int r = x[0]->ndim, a = imp_axis_of(I, axis, r);
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
    double *c = imp_vals(total);
    for (int64_t o = 0; o < outer; o++)
      for (int k = 0; k < n; k++) {
        int64_t m = x[k]->shape[a] * inner;
        memcpy(c + pos, x[k]->c + o * m, sizeof(double) * (size_t)m);
        pos += m;
      }
    imp_const_out(I, 0, x[0]->dtype, r, os, c);
    return true;
  }
  /* channels last when an input is NHWC (the channel axis 1 is axis 3 there) */
  bool nhwc = false;
  for (int k = 0; k < n; k++) nhwc |= x[k]->nhwc;
  if (nhwc && r == 4) {
    static const int phys[4] = {0, 3, 1, 2};
    for (int k = 0; k < n; k++) x[k] = imp_ew_nhwc_input(I, x[k]);
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
    if (imp_run_time_int(x[k])) x[k] = imp_int_as_f32(I, x[k]); /* the result: integers held as f32 (int_result) */
    if (!x[k]->c && x[k]->dtype != OT_FLOAT && x[k]->dtype != OT_BOOL && !x[k]->fint)
      return imp_unsupported(I, "input %d is not float", k + 1);
    char *acc = xstrdup("");
    for (int d = 0; d < r; d++)
      acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? (off ? xprintf("i%d - %lld", d, (long long)off) : xprintf("i%d", d)) : xprintf("i%d", d));
    params = xprintf("%s%sX%d: %s", params, k ? ", " : "", k, imp_ty(x[k]));
    args = xprintf("%s%s%s", args, k ? ", " : "", imp_tensor(I, x[k]));
    off += x[k]->shape[a];
    char *cond = xprintf("i%d >= %lld && i%d < %lld", a, (long long)(off - x[k]->shape[a]), a, (long long)off);
    e = k == n - 1 ? xprintf("%s%s(%s ? X%d[%s] : 0.0)%s", e, "", cond, k, acc, "") : xprintf("%s%s ? X%d[%s] : ", e, cond, k, acc);
  }
  Val *o = imp_net_out(I, 0, r, os);
  const char *kn = imp_kernel(I, "concat", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, imp_ty(o), imp_idx("i", r), e));
  imp_call(I, o->tex, kn, args);
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
  Val *o = imp_net_out(I, 0, no, os);
  const char *kn = imp_kernel(I, "gather", xprintf("(X: %s, I: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(t), imp_ty(o),
                                                   imp_idx("i", no), acc));
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
  const char *ie = imp_int_at(ix, "Ix", iacc); /* integers held as f32: exact */
  char *sel = xprintf("clamp(%s < 0 ? %s + %lld : %s, 0, %lld)", ie, ie, (long long)n, ie, (long long)(n - 1));
  char *acc = xstrdup("");
  for (int d = 0, od = 0; d < r; d++) {
    acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? sel : xprintf("i%d", od));
    od += d == a ? ix->ndim : 1;
  }
  Val *o = imp_net_out_like(I, 0, no, os, x);
  const char *kn = imp_kernel(I, "gather", xprintf("(X: %s, Ix: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(ix), imp_ty(o),
                                                   imp_idx("i", no), acc));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), ix->tex));
  return true;
}

static bool op_gather(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *ix = imp_in(I, 1);
  if (x && ix && !ix->c && (imp_run_time_int(ix) || ix->fint)) {
    int a = imp_axis_of(I, imp_attr_i(I, "axis", 0), x->ndim);
    return a >= 0 && gather_run_time(I, x, a, ix);
  }
  ix = x ? imp_const_in(I, 1, "indices") : NULL;
  if (!x || !ix) return x ? false : imp_error(I, "input 1 is missing");
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  int no = r - 1 + ix->ndim;
  if (no > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
  int64_t os[HT_MAX_DIMS];
  int k = 0;
  for (int d = 0; d < a; d++) os[k++] = x->shape[d];
  for (int d = 0; d < ix->ndim; d++) os[k++] = ix->shape[d];
  for (int d = a + 1; d < r; d++) os[k++] = x->shape[d];
  int64_t ni = val_numel(ix);
  double *iv = imp_vals(ni); /* negative indices wrapped (ix itself may feed other nodes) */
  for (int64_t i = 0; i < ni; i++) {
    iv[i] = ix->c[i] < 0 ? ix->c[i] + (double)x->shape[a] : ix->c[i];
    if (iv[i] < 0 || iv[i] >= (double)x->shape[a])
      return free(iv), imp_error(I, "index %.0f outside axis %d of size %lld", ix->c[i], a, (long long)x->shape[a]);
  }
  if (x->c) {
    int64_t outer = 1, inner = 1, pos = 0;
    for (int d = 0; d < a; d++) outer *= x->shape[d];
    for (int d = a + 1; d < r; d++) inner *= x->shape[d];
    double *c = imp_vals(outer * ni * inner);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < ni; i++, pos += inner)
        memcpy(c + pos, x->c + (o * x->shape[a] + (int64_t)iv[i]) * inner, sizeof(double) * (size_t)inner);
    free(iv);
    imp_const_out(I, 0, x->dtype, no, os, c);
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
  Val *o = imp_net_out_like(I, 0, r - 1 + ix->ndim, os, x);
  const char *kn = imp_kernel(I, "gather", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(o), imp_idx("i", no), acc));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* A GatherND's shapes: data rank R, indices rank Q, B batch axes, tuples of K indices;
 * the output (NO axes, OS), TUPLES index tuples of INNER elements each, PER_BATCH tuples per
 * batch index; TAB[m * TUPLES + t]: axis B + m of tuple t, wrapped. */
typedef struct GatherNd {
  int r, q, b, k, no;
  int64_t os[HT_MAX_DIMS], tuples, inner, per_batch;
  double *tab;
} GatherNd;

/* G for data X and constant indices IX; false: reported (an index outside its axis). */
static bool gather_nd_plan(Imp *I, const Val *x, const Val *ix, GatherNd *G) {
  *G = (GatherNd){.r = x->ndim, .q = ix->ndim, .b = (int)imp_attr_i(I, "batch_dims", 0), .tuples = 1, .inner = 1, .per_batch = 1};
  int r = G->r, q = G->q, b = G->b, k = G->k = q ? (int)ix->shape[q - 1] : 0;
  if (q < 1 || b < 0 || b >= q || b >= r || k < 1 || b + k > r)
    return imp_error(I, "indices of rank %d (last axis %d) and batch_dims %d do not fit data of rank %d", q, k, b, r);
  for (int d = 0; d < b; d++)
    if (ix->shape[d] != x->shape[d]) return imp_error(I, "batch axis %d: indices %lld, data %lld", d, (long long)ix->shape[d], (long long)x->shape[d]);
  G->no = q - 1 + r - b - k;
  if (G->no > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
  for (int d = 0; d < q - 1; d++) G->os[d] = ix->shape[d], G->tuples *= ix->shape[d];
  for (int d = b + k; d < r; d++) G->os[q - 1 + d - b - k] = x->shape[d], G->inner *= x->shape[d];
  for (int d = b; d < q - 1; d++) G->per_batch *= ix->shape[d];
  G->tab = imp_vals(G->tuples * k);
  for (int64_t t = 0; t < G->tuples; t++)
    for (int m = 0; m < k; m++) {
      double v = ix->c[t * k + m], n = (double)x->shape[b + m];
      v = v < 0 ? v + n : v;
      if (v < 0 || v >= n) return imp_error(I, "index %.0f outside axis %d of size %.0f", ix->c[t * k + m], b + m, n);
      G->tab[m * G->tuples + t] = v;
    }
  if (G->no == 0) G->os[G->no++] = 1;
  return true;
}

/* GatherND of constant X: folded. */
static void gather_nd_fold(Imp *I, const Val *x, const GatherNd *G) {
  int64_t below = 1; /* elements of X per batch index */
  for (int d = G->b; d < G->r; d++) below *= x->shape[d];
  double *c = imp_vals(G->tuples * G->inner);
  for (int64_t t = 0; t < G->tuples; t++) {
    int64_t off = 0; /* the tuple's element among X's axes b .. b + k - 1 */
    for (int m = 0; m < G->k; m++) off = off * x->shape[G->b + m] + (int64_t)G->tab[m * G->tuples + t];
    memcpy(c + t * G->inner, x->c + (t / G->per_batch) * below + off * G->inner, sizeof(double) * (size_t)G->inner);
  }
  imp_const_out(I, 0, x->dtype, G->no, G->os, c);
}

/* GatherND of run-time X: a kernel reading, per indexed axis, a table of the tuples'
 * indices (literals for one tuple). */
static void gather_nd_kernel(Imp *I, Val *x, const Val *ix, const GatherNd *G) {
  int q = G->q;
  char *lead = imp_idx("i", q - 1 ? q - 1 : 1), *acc = xstrdup(""), *params = xprintf("X: %s", imp_ty(x));
  char *args = xstrdup(imp_tensor(I, x));
  for (int d = 0; d < G->b; d++) acc = xprintf("%s%si%d", acc, d ? ", " : "", d);
  for (int m = 0; m < G->k; m++) {
    const char *sel;
    if (q == 1) sel = xprintf("%.0f", G->tab[m]);
    else {
      Val *t = xalloc(sizeof *t);
      *t = (Val){.name = xprintf("%s_nd%d", I->node->output[0], m), .dtype = OT_FLOAT, .ndim = q - 1, .c = imp_vals(G->tuples)};
      memcpy(t->shape, ix->shape, sizeof(int64_t) * (size_t)(q - 1));
      memcpy(t->c, G->tab + m * G->tuples, sizeof(double) * (size_t)G->tuples);
      params = xprintf("%s, T%d: %s", params, m, imp_ty(t));
      args = xprintf("%s, %s", args, imp_tensor(I, t));
      sel = xprintf("clamp(i32(T%d[%s]), 0, %lld)", m, lead, (long long)x->shape[G->b + m] - 1);
    }
    acc = xprintf("%s%s%s", acc, *acc ? ", " : "", sel);
  }
  for (int d = G->b + G->k, od = q - 1; d < G->r; d++, od++) acc = xprintf("%s%si%d", acc, *acc ? ", " : "", od);
  Val *o = imp_net_out_like(I, 0, G->no, G->os, x);
  const char *kn = imp_kernel(I, "gather_nd", xprintf("(%s) -> Y: %s {\n  Y[%s] = X[%s]\n}", params, imp_ty(o), imp_idx("i", G->no), acc));
  imp_call(I, o->tex, kn, args);
}

/* GatherND (opset 11; batch_dims from 12) with constant indices: each index tuple of the
 * last indices axis picks X's element or slice after the batch axes. */
/* GatherND by indices computed at run time (P): Y[j, t] = X[batch axes of j, P[j, 0..k-1]
 * (a negative index counted from the end, then clamped into the axis: ONNX leaves one outside
 * undefined), t]. */
static bool gather_nd_run_time(Imp *I, Val *x, Val *ix) {
  int r = x->ndim, q = ix->ndim, b = (int)imp_attr_i(I, "batch_dims", 0), k = q ? (int)ix->shape[q - 1] : 0;
  if (q < 1 || b < 0 || b >= q || b >= r || k < 1 || b + k > r)
    return imp_error(I, "indices of rank %d (last axis %d) and batch_dims %d do not fit data of rank %d", q, k, b, r);
  for (int d = 0; d < b; d++)
    if (ix->shape[d] != x->shape[d]) return imp_error(I, "batch axis %d: indices %lld, data %lld", d, (long long)ix->shape[d], (long long)x->shape[d]);
  if (!imp_run_time_int(ix) && !ix->fint) return imp_unsupported(I, "indices of element type %s", imp_type_name(ix->dtype));
  int no = q - 1 + r - b - k;
  if (no > HT_MAX_DIMS) return imp_unsupported(I, "more than 8 dimensions");
  int64_t os[HT_MAX_DIMS];
  for (int d = 0; d < q - 1; d++) os[d] = ix->shape[d];
  for (int d = b + k; d < r; d++) os[q - 1 + d - b - k] = x->shape[d];
  char *lead = xstrdup(""), *acc = xstrdup("");
  for (int d = 0; d < q - 1; d++) lead = xprintf("%s%si%d", lead, d ? ", " : "", d);
  for (int d = 0; d < b; d++) acc = xprintf("%s%si%d", acc, d ? ", " : "", d);
  for (int m = 0; m < k; m++) {
    char *v = imp_int_at(ix, "P", xprintf("%s%s%d", lead, *lead ? ", " : "", m));
    long long n = (long long)x->shape[b + m];
    acc = xprintf("%s%sclamp(%s < 0 ? %s + %lld : %s, 0, %lld)", acc, *acc ? ", " : "", v, v, n, v, n - 1);
  }
  for (int d = b + k; d < r; d++) acc = xprintf("%s, i%d", acc, q - 1 + d - b - k);
  bool scalar = no == 0;
  if (scalar) os[no++] = 1;
  Val *o = imp_net_out_like(I, 0, no, os, x);
  const char *kn = imp_kernel(I, "gather_nd", xprintf("(X: %s, P: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(ix),
                                                      imp_ty(o), imp_idx("i", no), acc));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, ix)));
  return true;
}

static bool op_gather_nd(Imp *I) {
  if (!imp_attrs_known(I, "batch_dims") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *ix = x ? imp_in(I, 1) : NULL;
  if (!x || !ix) return x ? imp_error(I, "input 2 (indices) is missing") : imp_error(I, "input 1 is missing");
  if (!ix->c) return gather_nd_run_time(I, x, ix);
  GatherNd G;
  bool ok = gather_nd_plan(I, x, ix, &G);
  if (ok && !x->c && G.tuples > ((int64_t)1 << 24)) ok = imp_unsupported(I, "more than 2^24 index tuples");
  if (ok) x->c ? gather_nd_fold(I, x, &G) : gather_nd_kernel(I, x, ix, &G);
  free(G.tab);
  return ok;
}

/* Output K: X[start + i * step] for i over OS (folded for a constant X). */
static bool slice_out(Imp *I, Val *x, int k, const int64_t *start, const int64_t *step, const int64_t *os) {
  int r = x->ndim;
  if (x->c) {
    Val tmp = {.ndim = r};
    memcpy(tmp.shape, os, sizeof(int64_t) * (size_t)r);
    int64_t total = val_numel(&tmp), ix[HT_MAX_DIMS];
    double *c = imp_vals(total);
    for (int64_t i = 0; i < total; i++) {
      int64_t rem = i, src = 0;
      for (int d = r - 1; d >= 0; d--) ix[d] = rem % os[d], rem /= os[d];
      for (int d = 0; d < r; d++) src = src * x->shape[d] + start[d] + ix[d] * step[d];
      c[i] = x->c[src];
    }
    imp_const_out(I, k, x->dtype, r, os, c);
    return true;
  }
  bool nhwc = x->nhwc && r == 4;
  Val px = *x; /* X as its tensor holds it */
  int64_t ps[HT_MAX_DIMS];
  char *acc = xstrdup("");
  for (int d = 0; d < r; d++) {
    int a = nhwc ? imp_nhwc_axis[d] : d;
    px.shape[d] = x->shape[a], ps[d] = os[a];
    char *e = step[a] == 1 ? xprintf("i%d", d) : xprintf("i%d * %lld", d, (long long)step[a]);
    if (start[a]) e = xprintf("%s + %lld", e, (long long)start[a]);
    acc = xprintf("%s%s%s", acc, d ? ", " : "", e);
  }
  Val *o = imp_net_out_like(I, k, r, ps, x); /* run-time integers stay so */
  const char *kn = imp_kernel(I, "slice", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(&px), imp_ty(o), imp_idx("i", r), acc));
  imp_call(I, o->tex, kn, nhwc ? imp_tensor_nhwc(I, x) : imp_tensor(I, x));
  if (nhwc) { /* a slice of a channels-last value stays channels last */
    memcpy(o->shape, os, sizeof(int64_t) * 4);
    o->nhwc = true;
  }
  return true;
}

/* Split: along axis into the sizes of input 2 (opset 13), the split attribute (11) or
 * num_outputs / the number of outputs equal parts (the last one smaller). */
static bool op_split(Imp *I) {
  if (!imp_attrs_known(I, "axis,split,num_outputs")) return false;
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r), n = (int)I->node->n_output;
  if (a < 0) return false;
  int64_t sizes[64];
  if (n > 64) return imp_unsupported(I, "more than 64 outputs");
  int ns = imp_attr_ints(I, "split", sizes, 64);
  if (imp_in(I, 1)) {
    Val *sv = imp_const_in(I, 1, "split");
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

/* Slice (opset >= 10: starts, ends, axes, steps as inputs). */
static Val *ints_val(Imp *I, const char *name) {
  int64_t v[HT_MAX_DIMS];
  int n = imp_attr_ints(I, name, v, HT_MAX_DIMS);
  if (n < 0) return NULL;
  Val *c = xalloc(sizeof *c);
  *c = (Val){.name = name, .dtype = OT_INT64, .ndim = 1, .shape = {n}, .c = imp_vals(n)};
  for (int i = 0; i < n; i++) c->c[i] = (double)v[i];
  return c;
}

static bool op_slice(Imp *I) {
  if (!imp_attrs_known(I, I->opset < 10 ? "starts,ends,axes" : "") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *st, *en, *ax, *sp = NULL;
  if (I->opset < 10) { /* Slice-1: starts, ends and axes are attributes, no steps */
    st = ints_val(I, "starts"), en = ints_val(I, "ends"), ax = ints_val(I, "axes");
    if (!st || !en) return imp_error(I, "no starts or ends");
    if (val_numel(st) != val_numel(en) || (ax && val_numel(ax) != val_numel(st)))
      return imp_error(I, "starts, ends and axes of different lengths");
    if (!x) return imp_error(I, "input 1 is missing");
  } else {
    st = imp_const_in(I, 1, "starts"), en = st ? imp_const_in(I, 2, "ends") : NULL, ax = imp_in(I, 3), sp = imp_in(I, 4);
    if (!x || !en) return x ? false : imp_error(I, "input 1 is missing");
    if ((ax && !(ax = imp_const_in(I, 3, "axes"))) || (sp && !(sp = imp_const_in(I, 4, "steps")))) return false;
  }
  int r = x->ndim;
  int64_t start[HT_MAX_DIMS], step[HT_MAX_DIMS], os[HT_MAX_DIMS];
  for (int d = 0; d < r; d++) start[d] = 0, step[d] = 1, os[d] = x->shape[d];
  int64_t n = val_numel(st);
  for (int64_t i = 0; i < n; i++) {
    int a = imp_axis_of(I, ax ? (int64_t)ax->c[i] : i, r);
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
  Val *x = imp_in(I, 0), *s = imp_const_in(I, 1, "shape");
  if (!x || !s || !imp_one_output(I)) return x ? false : imp_error(I, "input 1 is missing");
  int64_t shape[HT_MAX_DIMS];
  int nd = imp_shape_from(I, s, shape);
  if (nd < 0) return false;
  if (x->c) {
    int no;
    int64_t os[HT_MAX_DIMS];
    if (!imp_broadcast(I, x->shape, x->ndim, shape, nd, os, &no) || !imp_shape_ok(I, os, no)) return false;
    Val tmp = {.ndim = no};
    memcpy(tmp.shape, os, sizeof os);
    int64_t total = val_numel(&tmp), ix[HT_MAX_DIMS];
    double *c = imp_vals(total);
    for (int64_t i = 0; i < total; i++) {
      int64_t rem = i;
      for (int d = no - 1; d >= 0; d--) ix[d] = rem % os[d], rem /= os[d];
      c[i] = x->c[imp_bidx(x->shape, x->ndim, ix, no)];
    }
    imp_const_out(I, 0, x->dtype, no, os, c);
    return true;
  }
  if (imp_run_time_int(x)) x = imp_int_as_f32(I, x); /* the result: integers held as f32 (int_result), as Concat's */
  return imp_ew_to(I, "expand", &x, 1, "$0", shape, nd);
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
    np = imp_attr_ints(I, "pads", pads, 2 * HT_MAX_DIMS);
    *value = (float)imp_attr_f(I, "value", 0);
  } else {
    Val *pv = imp_const_in(I, 1, "pads"), *av = imp_in(I, 3);
    if (!pv) return false;
    np = (int)val_numel(pv) > 2 * HT_MAX_DIMS ? 2 * HT_MAX_DIMS : (int)val_numel(pv);
    for (int i = 0; i < np; i++) pads[i] = (int64_t)pv->c[i];
    if (imp_in(I, 2)) { /* a constant, or a float scalar computed at run time */
      if (!(*cv = imp_float_in(I, 2))) return false;
      if (val_numel(*cv) != 1) return imp_error(I, "constant_value is not a scalar");
      if ((*cv)->c) *value = (float)(*cv)->c[0], *cv = NULL;
    }
    if (av) {
      if (!(av = imp_const_in(I, 3, "axes"))) return false;
      na = (int)val_numel(av) > r ? r : (int)val_numel(av);
      for (int i = 0; i < na; i++)
        if ((axes[i] = imp_axis_of(I, (int64_t)av->c[i], r)) < 0) return false;
    }
  }
  if (np != 2 * na) return imp_error(I, "%d pads for %d axes (2 each)", np, na);
  for (int i = 0; i < na; i++) b[axes[i]] = pads[i], e[axes[i]] = pads[na + i];
  return true;
}

/* Pad of a constant X, folded (output shape OS, B pads before each axis): each point's
 * source as the kernel below reads it. */
static bool pad_fold(Imp *I, const Val *x, const int64_t *b, const int64_t *os, double value, bool constant, bool reflect) {
  int r = x->ndim;
  Val shape = {.ndim = r};
  memcpy(shape.shape, os, sizeof(int64_t) * (size_t)r);
  int64_t n = val_numel(&shape);
  double *c = imp_vals(n);
  for (int64_t k = 0; k < n; k++) {
    int64_t rest = k, src = 0, stride = 1;
    bool in = true;
    for (int d = r - 1; d >= 0; d--) {
      int64_t i = rest % os[d] - b[d], len = x->shape[d];
      rest /= os[d];
      if (i < 0 || i >= len) {
        if (constant) in = false;
        else if (reflect) i = len - 1 - llabs(len - 1 - llabs(i));
        else i = i < 0 ? 0 : len - 1; /* edge */
      }
      src += i * stride, stride *= len;
    }
    c[k] = in ? x->c[src] : value;
  }
  imp_const_out(I, 0, x->dtype, r, os, c);
  return true;
}

static bool op_pad(Imp *I) {
  if (!imp_attrs_known(I, I->opset < 11 ? "mode,pads,value" : "mode") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *cv;
  if (!x) return false;
  int r = x->ndim;
  int64_t b[HT_MAX_DIMS], e[HT_MAX_DIMS];
  double value;
  if (!pad_amounts(I, r, b, e, &value, &cv)) return false;
  if (x->c && cv) return imp_unsupported(I, "Pad of a constant by a value computed at run time");
  const char *mode = imp_attr_s(I, "mode", "constant");
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
  if (!imp_shape_ok(I, os, r)) return false;
  if (x->c) return pad_fold(I, x, b, os, value, constant, reflect);
  Val *o = imp_net_out(I, 0, r, os);
  char *rhs = xprintf("X[%s]", r ? src : "0"), *params = xprintf("X: %s", imp_ty(x)), *args = xstrdup(imp_tensor(I, x));
  if (*cond && cv) {
    params = xprintf("%s, V: %s", params, imp_ty(cv));
    args = xprintf("%s, %s", args, imp_tensor(I, cv));
    char *zero = xstrdup("0");
    for (int d = 1; d < cv->ndim; d++) zero = xprintf("%s, 0", zero);
    rhs = xprintf("%s ? %s : V[%s]", cond, rhs, zero);
  } else if (*cond) {
    rhs = xprintf("%s ? %s : %s", cond, rhs, imp_flit(value));
  }
  const char *k = imp_kernel(I, "pad", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, imp_ty(o), imp_idx("i", r), rhs));
  imp_call(I, o->tex, k, args);
  return true;
}

/* DepthToSpace and SpaceToDepth (DCR, CRD: SpaceToDepth's from opset 28) of an NCHW tensor, blocks of B x B. */
static bool op_depth_space(Imp *I, bool to_space) {
  if (!imp_attrs_known(I, "blocksize,mode") || !imp_one_output(I)) return false; /* SpaceToDepth's mode: opset 28 */
  Val *x = imp_float_in(I, 0);
  if (!x) return false;
  if (!(x = imp_as_tensor(I, x, I->node->op_type))) return false;
  if (x->ndim != 4) return imp_error(I, "the input has rank %d (4)", x->ndim);
  long long b = imp_attr_i(I, "blocksize", 0), n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (b < 1) return imp_error(I, "blocksize %lld", b);
  const char *mode = imp_attr_s(I, "mode", "DCR"), *rhs;
  int64_t os[4];
  if (strcmp(mode, "DCR") && strcmp(mode, "CRD")) return imp_unsupported(I, "mode '%s'", mode);
  if (to_space) {
    if (c % (b * b)) return imp_error(I, "%lld channels are not a multiple of blocksize^2 = %lld", c, b * b);
    long long cp = c / (b * b);
    os[0] = n, os[1] = cp, os[2] = h * b, os[3] = w * b;
    rhs = !strcmp(mode, "DCR") ? xprintf("X[i0, ((i2 %% %lld) * %lld + i3 %% %lld) * %lld + i1, i2 / %lld, i3 / %lld]", b, b, b, cp, b, b)
                               : xprintf("X[i0, i1 * %lld + (i2 %% %lld) * %lld + i3 %% %lld, i2 / %lld, i3 / %lld]", b * b, b, b, b, b, b);
  } else {
    if (h % b || w % b) return imp_error(I, "H x W %lld x %lld is not a multiple of blocksize %lld", h, w, b);
    os[0] = n, os[1] = c * b * b, os[2] = h / b, os[3] = w / b;
    rhs = !strcmp(mode, "DCR") ? xprintf("X[i0, i1 %% %lld, i2 * %lld + (i1 / %lld) / %lld, i3 * %lld + (i1 / %lld) %% %lld]", c, b, c, b, b, c, b)
                               : xprintf("X[i0, i1 / %lld, i2 * %lld + (i1 %% %lld) / %lld, i3 * %lld + i1 %% %lld]", b * b, b, b * b, b, b, b);
  }
  Val *o = imp_net_out(I, 0, 4, os);
  const char *k = imp_kernel(I, to_space ? "depth_to_space" : "space_to_depth",
                             xprintf("(X: %s) -> Y: %s {\n  Y[i0, i1, i2, i3] = %s\n}", imp_ty(x), imp_ty(o), rhs));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* NonZero of a constant, folded: the indices [rank, count] of its nonzero values in
 * row-major order (Longformer's of a ConstantOfShape). Of a run-time tensor the result's
 * shape would depend on the data, which static shapes cannot hold: refused by name. */
static bool op_nonzero(Imp *I) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  if (!x->c) return imp_unsupported(I, "NonZero of a tensor computed at run time (its result's shape depends on the data)");
  if (!x->ndim) return imp_unsupported(I, "NonZero of a scalar");
  int64_t n = val_numel(x), count = 0;
  for (int64_t k = 0; k < n; k++) count += x->c[k] != 0;
  if (!count) return imp_unsupported(I, "an empty result (NonZero of all zeros)");
  int r = x->ndim;
  double *c = imp_vals(r * count);
  for (int64_t k = 0, j = 0; k < n; k++) {
    if (x->c[k] == 0) continue;
    for (int64_t d = r - 1, rest = k; d >= 0; d--) c[d * count + j] = (double)(rest % x->shape[d]), rest /= x->shape[d];
    j++;
  }
  int64_t os[2] = {r, count};
  imp_const_out(I, 0, OT_INT64, 2, os, c);
  return true;
}

/* Tile of a constant X to shape OS, folded (up to 2^22 values: a decoder's position ids). */
static bool tile_fold(Imp *I, const Val *x, const int64_t *os) {
  Val shape = {.ndim = x->ndim};
  memcpy(shape.shape, os, sizeof(int64_t) * (size_t)x->ndim);
  int64_t n = val_numel(&shape);
  double *c = imp_vals(n);
  for (int64_t k = 0; k < n; k++) {
    int64_t rest = k, src = 0, stride = 1;
    for (int d = x->ndim - 1; d >= 0; d--) {
      src += (rest % os[d]) % x->shape[d] * stride;
      rest /= os[d], stride *= x->shape[d];
    }
    c[k] = x->c[src];
  }
  imp_const_out(I, 0, x->dtype, x->ndim, os, c);
  return true;
}

/* Tile: each axis repeated (repeats from input 2, a constant). */
static bool op_tile(Imp *I) {
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *rv = x ? imp_const_in(I, 1, "repeats") : NULL;
  if (!rv) return false;
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
  if (!r) return imp_alias(I, x);
  if (!imp_shape_ok(I, os, r)) return false;
  Val shape = {.ndim = r};
  memcpy(shape.shape, os, sizeof(int64_t) * (size_t)r);
  if (x->c && val_numel(&shape) <= ((int64_t)1 << 22)) return tile_fold(I, x, os);
  if (!(x = imp_as_tensor(I, x, "Tile"))) return false;
  Val *o = imp_net_out(I, 0, r, os);
  const char *k = imp_kernel(I, "tile", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(o), imp_idx("i", r), src));
  imp_call(I, o->tex, k, imp_tensor(I, x));
  return true;
}

/* GatherElements by run-time integer indices IX (of X's rank): each clamped into the axis
 * after counting negative ones from the end. */
static bool gather_elements_run_time(Imp *I, Val *x, Val *ix) {
  if (!x->c && !(x = imp_float_in(I, 0))) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  if (ix->ndim != r) return imp_error(I, "indices of rank %d for data of rank %d", ix->ndim, r);
  for (int d = 0; d < r; d++)
    if (ix->shape[d] > x->shape[d] && d != a) return imp_error(I, "indices larger than the data on axis %d", d);
  long long len = x->shape[a];
  char *ie = imp_int_at(ix, "Ix", imp_idx("i", r)), *at = xstrdup("");
  for (int d = 0; d < r; d++)
    at = xprintf("%s%s%s", at, d ? ", " : "", d == a ? xprintf("clamp(%s < 0 ? %s + %lld : %s, 0, %lld)", ie, ie, len, ie, len - 1)
                                                     : xprintf("i%d", d));
  Val *o = imp_net_out(I, 0, r, ix->shape);
  const char *k = imp_kernel(I, "gather_elements", xprintf("(X: %s, Ix: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x),
                                                           imp_ty(ix), imp_ty(o), imp_idx("i", r), at));
  imp_call(I, o->tex, k, xprintf("%s, %s", imp_tensor(I, x), ix->tex));
  return true;
}

/* GatherElements: Y[i] = X[i with axis a replaced by I[i]]; constant indices (a table) or
 * run-time ones. */
static bool op_gather_elements(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *ix = imp_in(I, 1);
  if (x && ix && !ix->c && (imp_run_time_int(ix) || ix->fint)) return gather_elements_run_time(I, x, ix);
  Val *c0 = x;
  x = x && x->c ? x : imp_float_in(I, 0), ix = x ? imp_const_in(I, 1, "indices") : NULL;
  if (!ix) return false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  if (ix->ndim != r) return imp_error(I, "indices of rank %d for data of rank %d", ix->ndim, r);
  for (int d = 0; d < r; d++)
    if (ix->shape[d] > x->shape[d] && d != a) return imp_error(I, "indices larger than the data on axis %d", d);
  int64_t n = val_numel(ix), len = x->shape[a];
  Val *t = xalloc(sizeof *t);
  *t = (Val){.name = xprintf("%s_indices", ix->name), .dtype = OT_FLOAT, .ndim = r, .c = imp_vals(n)};
  memcpy(t->shape, ix->shape, sizeof(int64_t) * (size_t)r);
  for (int64_t i = 0; i < n; i++) {
    double v = ix->c[i] < 0 ? ix->c[i] + (double)len : ix->c[i];
    if (v < 0 || v >= (double)len) return imp_error(I, "index %.0f outside axis %d of size %lld", ix->c[i], a, (long long)len);
    t->c[i] = v;
  }
  if (x->c) { /* folded (ALBERT's position ids: a constant buffer gathered by constants) */
    double *c = imp_vals(n);
    for (int64_t i = 0; i < n; i++) {
      int64_t rem = i, pos = 0, at[HT_MAX_DIMS];
      for (int d = r - 1; d >= 0; d--) at[d] = rem % ix->shape[d], rem /= ix->shape[d];
      at[a] = (int64_t)t->c[i];
      for (int d = 0; d < r; d++) pos = pos * x->shape[d] + at[d];
      c[i] = x->c[pos];
    }
    imp_const_out(I, 0, c0->dtype, r, ix->shape, c);
    return true;
  }
  char *at = xstrdup("");
  for (int d = 0; d < r; d++)
    at = xprintf("%s%s%s", at, d ? ", " : "", d == a ? xprintf("clamp(i32(T[%s]), 0, %lld)", imp_idx("i", r), (long long)len - 1)
                                                     : xprintf("i%d", d));
  Val *o = imp_net_out(I, 0, r, ix->shape);
  const char *k = imp_kernel(I, "gather_elements", xprintf("(X: %s, T: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(t),
                                                           imp_ty(o), imp_idx("i", r), at));
  imp_call(I, o->tex, k, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, t)));
  return true;
}

/* Size: the number of elements of any value (shapes are static): a constant. */
static bool op_size(Imp *I) {
  Val *x = imp_in(I, 0);
  if (!x) return imp_error(I, "input 1 is missing");
  if (!imp_attrs_known(I, "") || !imp_one_output(I)) return false;
  double *c = imp_vals(1);
  c[0] = (double)val_numel(x);
  imp_const_out(I, 0, OT_INT64, 0, NULL, c);
  return true;
}

/* Trilu: the lower (upper = 0) or upper triangle of the last two axes from diagonal k
 * (input 2, a constant; 0 when absent), the rest 0. */
static bool op_trilu(Imp *I) {
  if (!imp_attrs_known(I, "upper") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *kv = imp_in(I, 1);
  if (!x) return imp_error(I, "input 1 is missing");
  if (kv && !(kv = imp_const_in(I, 1, "k"))) return false;
  int r = x->ndim;
  if (r < 2) return imp_error(I, "the input has rank %d (at least 2)", r);
  long long k = kv ? (long long)kv->c[0] : 0;
  bool upper = imp_attr_i(I, "upper", 1) != 0;
  if (x->c) { /* folded: a causal mask made by the exporter */
    int64_t n = val_numel(x), rows = x->shape[r - 2], cols = x->shape[r - 1];
    double *c = imp_vals(n);
    for (int64_t i = 0; i < n; i++) {
      long long row = (long long)(i / cols % rows), col = (long long)(i % cols);
      c[i] = (upper ? col - row >= k : col - row <= k) ? x->c[i] : 0;
    }
    imp_const_out(I, 0, x->dtype, r, x->shape, c);
    return true;
  }
  if (!(x = imp_float_in(I, 0))) return false; /* integers as f32: the result is integers again (int_result) */
  char *all = imp_idx("i", r);
  Val *o = imp_net_out(I, 0, r, x->shape);
  const char *kn = imp_kernel(I, "trilu", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = i%d - i%d %s %lld ? X[%s] : 0.0\n}", imp_ty(x), imp_ty(o), all,
                                                 r - 1, r - 2, upper ? ">=" : "<=", k, all));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return true;
}

/* OneHot: for indices X (integers, or floats truncated; negative ones counted from the end)
 * the output has a new axis of DEPTH (constant, or an --input file folded) at AXIS, holding
 * values[1] where its position is the index and values[0] elsewhere (everywhere for an
 * index outside -DEPTH..DEPTH-1). */
static bool op_onehot(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *dv = x ? imp_const_in(I, 1, "depth") : NULL, *v = dv ? imp_float_in(I, 2) : NULL;
  if (!v) return false;
  if (val_numel(dv) != 1) return imp_error(I, "depth has %lld values (one)", (long long)val_numel(dv));
  if (val_numel(v) != 2) return imp_error(I, "values has %lld values (off, on)", (long long)val_numel(v));
  double depth = trunc(dv->c[0]);
  if (!(depth >= 1 && depth <= (double)MAX_RESULT)) return imp_unsupported(I, "depth %g", dv->c[0]);
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", -1), r + 1);
  if (a < 0) return false;
  int64_t os[HT_MAX_DIMS];
  if (r + 1 > HT_MAX_DIMS) return imp_unsupported(I, "an output of rank %d", r + 1);
  char *at = xstrdup("");
  for (int d = 0, k = 0; d <= r; d++) {
    if (d == a) {
      os[d] = (int64_t)depth;
      continue;
    }
    os[d] = x->shape[k];
    at = xprintf("%s%si%d", at, k ? ", " : "", d);
    k++;
  }
  if (!r) at = xstrdup("0");
  const char *D = imp_flit(depth), *idx = xprintf("trunc(X[%s])", at);
  char *on = v->c ? imp_flit(v->c[1]) : xstrdup("V[1]"), *off = v->c ? imp_flit(v->c[0]) : xstrdup("V[0]");
  Val *o = imp_net_out(I, 0, r + 1, os);
  const char *kn = imp_kernel(I, "one_hot",
                              xprintf("(X: %s%s) -> Y: %s {\n  Y[%s] = (%s < 0.0 ? %s + %s : %s) == f32(i%d) ? %s : %s\n}", imp_ty(x),
                                      v->c ? "" : xprintf(", V: %s", imp_ty(v)), imp_ty(o), imp_idx("i", r + 1), idx, idx, D, idx, a,
                                      on, off));
  imp_call(I, o->tex, kn, v->c ? imp_tensor(I, x) : xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, v)));
  return true;
}

/* ReverseSequence: along the time axis, each batch entry's first sequence_lens[b] steps
 * reversed, the rest as they are (lengths at run time or constant; one past the axis reads
 * as the axis's length). */
static bool op_reverse_sequence(Imp *I) {
  if (!imp_attrs_known(I, "batch_axis,time_axis") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *len = x ? imp_in(I, 1) : NULL;
  if (!len) return imp_error(I, "input %d is missing", x ? 2 : 1);
  if (!x->c && imp_run_time_int(x)) x = imp_int_as_f32(I, x);
  int r = x->ndim, ba = imp_axis_of(I, imp_attr_i(I, "batch_axis", 1), r), ta = imp_axis_of(I, imp_attr_i(I, "time_axis", 0), r);
  if (ba < 0 || ta < 0) return false;
  if (r < 2 || ba == ta) return imp_error(I, "batch_axis %d and time_axis %d of a rank-%d input", ba, ta, r);
  if (len->ndim != 1 || len->shape[0] != x->shape[ba]) return imp_error(I, "sequence_lens of shape [%s] for a batch of %lld", imp_dims_text(len->shape, len->ndim), (long long)x->shape[ba]);
  if (!len->c && !imp_run_time_int(len) && !len->fint) return imp_unsupported(I, "sequence_lens of element type %s", imp_type_name(len->dtype));
  long long T = (long long)x->shape[ta];
  char *l = xprintf("min(i64(L[i%d]), %lld)", ba, T), *acc = xstrdup("");
  for (int d = 0; d < r; d++)
    acc = xprintf("%s%s%s", acc, d ? ", " : "", d != ta ? xprintf("i%d", d)
                                                   : xprintf("clamp(i%d < %s ? %s - 1 - i%d : i%d, 0, %lld)", d, l, l, d, d, T - 1));
  Val *o = imp_net_out_like(I, 0, r, x->shape, x);
  const char *kn = imp_kernel(I, "reverse_sequence", xprintf("(X: %s, L: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x),
                                                             len->c ? xprintf("f32[%lld]", (long long)len->shape[0]) : imp_ty(len),
                                                             imp_ty(o), imp_idx("i", r), acc));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, len)));
  return true;
}

/* Compress by a constant condition (or an --input file folded): the positions along AXIS
 * (or of the flattened input) whose condition is true, in order; a condition shorter than
 * the axis selects nothing past its end, a longer one is read only as far as the axis. */
static bool op_compress(Imp *I) {
  if (!imp_attrs_known(I, "axis") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *cv = x ? imp_const_in(I, 1, "condition") : NULL;
  if (!cv) return x ? false : imp_error(I, "input 1 is missing");
  if (!x->c && imp_run_time_int(x)) x = imp_int_as_f32(I, x);
  bool flat = !imp_attr(I, "axis");
  int r = x->ndim, a = flat ? 0 : imp_axis_of(I, imp_attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  int64_t n = flat ? val_numel(x) : x->shape[a], k = 0;
  double *sel = imp_vals(n);
  for (int64_t i = 0; i < n && i < val_numel(cv); i++)
    if (cv->c[i] != 0) sel[k++] = (double)i;
  if (!k) return imp_unsupported(I, "an empty result (no condition true)");
  int64_t os[HT_MAX_DIMS];
  int no = flat ? 1 : r;
  if (flat) os[0] = k;
  else memcpy(os, x->shape, sizeof(int64_t) * (size_t)r), os[a] = k;
  if (x->c) {
    int64_t inner = 1, total = k;
    for (int d = a + 1; !flat && d < r; d++) inner *= x->shape[d];
    for (int d = 0; d < no; d++) total = d == a ? total : total * os[d];
    double *c = imp_vals(total);
    for (int64_t i = 0; i < total; i++) {
      int64_t in = i % inner, j = i / inner % k, out = i / inner / k;
      c[i] = flat ? x->c[(int64_t)sel[i]] : x->c[(out * n + (int64_t)sel[j]) * inner + in];
    }
    imp_const_out(I, 0, x->dtype, no, os, c);
    return true;
  }
  Val *t = xalloc(sizeof *t);
  *t = (Val){.name = xprintf("%s_selected", I->node->output[0]), .dtype = OT_FLOAT, .ndim = 1, .shape = {k}, .c = sel};
  char *acc = xstrdup("");
  if (flat) { /* the flat position S[i0] decoded into X's axes */
    int64_t below = val_numel(x);
    for (int d = 0; d < r; d++) {
      below /= x->shape[d];
      acc = xprintf("%s%sclamp(i64(S[i0]) / %lld %% %lld, 0, %lld)", acc, d ? ", " : "", (long long)below, (long long)x->shape[d],
                    (long long)x->shape[d] - 1);
    }
  } else {
    for (int d = 0; d < r; d++)
      acc = xprintf("%s%s%s", acc, d ? ", " : "", d == a ? xprintf("clamp(i64(S[i%d]), 0, %lld)", d, (long long)n - 1) : xprintf("i%d", d));
  }
  Val *o = imp_net_out_like(I, 0, no, os, x);
  const char *kn = imp_kernel(I, "compress", xprintf("(X: %s, S: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(t), imp_ty(o),
                                                     imp_idx("i", no), acc));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, t)));
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
  char *params = xprintf("X: %s, U: %s", imp_ty(x), imp_ty(u)), *args = xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, u));
  for (int j = 0; j < m->d; j++) {
    Val *t = xalloc(sizeof *t);
    *t = (Val){.name = xprintf("%s_scatter%d", I->node->output[0], j), .dtype = OT_FLOAT, .ndim = tn, .c = imp_vals(m->p)};
    memcpy(t->shape, ts, sizeof(int64_t) * (size_t)tn);
    memcpy(t->c, m->t + (int64_t)j * m->p, sizeof(double) * (size_t)m->p);
    params = xprintf("%s, T%d: %s", params, j, imp_ty(t));
    args = xprintf("%s, %s", args, imp_tensor(I, t));
  }
  Val *o = imp_net_out(I, 0, x->ndim, x->shape);
  const char *k = imp_kernel(I, "scatter", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s\n}", params, imp_ty(o), imp_idx("i", x->ndim), expr));
  imp_call(I, o->tex, k, args);
  return true;
}

/* The reduction attribute (none, add, mul; max, min from opset 18). */
static const char *scatter_reduction(Imp *I) {
  const char *r = imp_attr_s(I, "reduction", "none");
  if (strcmp(r, "none") && strcmp(r, "add") && strcmp(r, "mul") && strcmp(r, "max") && strcmp(r, "min"))
    return imp_unsupported(I, "reduction '%s'", r), NULL;
  return r;
}

/* Update *AT by V under reduction RED (none: replaced). */
static void scatter_apply(const char *red, double *at, double v) {
  if (!strcmp(red, "add")) *at += v;
  else if (!strcmp(red, "mul")) *at *= v;
  else if (!strcmp(red, "max")) *at = fmax(*at, v);
  else if (!strcmp(red, "min")) *at = fmin(*at, v);
  else *at = v;
}

/* ScatterND with constant indices: update row q (of indices' leading axes) replaces (or
 * reduces into) the slice of the data at the index tuple indices[q]; folded when the data
 * and the updates are constants too (Swin's shifted-window mask, made by slice
 * assignments into zeros). */
/* A scatter with indices known only at run time (P): one kernel whose local tensor M
 * takes each update at the position LHS names (the language's scatter: an update outside
 * the data is skipped), under RED (none and max: max=, add: +=, mul: *=, min: min=), then
 * the data combined with it; for none a count K says which positions an update reached
 * (duplicates are undefined in ONNX: the largest wins). UAT: the update read per point. */
static bool scatter_run_time(Imp *I, Val *x, Val *ix, Val *u, const char *red, const char *lhs, const char *uat) {
  int r = x->ndim;
  bool none = !strcmp(red, "none"), add = !strcmp(red, "add"), mul = !strcmp(red, "mul"), min = !strcmp(red, "min");
  const char *op = add ? "+=" : mul ? "*=" : min ? "min=" : "max=", *xi = imp_idx("i", r), *dims = imp_dims_text(x->shape, r);
  char *y = add ? xprintf("X[%s] + M[%s]", xi, xi) : mul ? xprintf("X[%s] * M[%s]", xi, xi)
          : none ? xprintf("K[%s] > 0.0 ? M[%s] : X[%s]", xi, xi, xi) : xprintf("%s(X[%s], M[%s])", min ? "min" : "max", xi, xi);
  Val *o = imp_net_out(I, 0, r, x->shape);
  const char *kn = imp_kernel(I, xprintf("scatter_%s", red),
                              xprintf("(X: %s, P: %s, U: %s) -> Y: %s {\n  tensor M: f32[%s]\n%s  M[%s] %s U[%s]\n%s  Y[%s] = %s\n}",
                                      imp_ty(x), imp_ty(ix), imp_ty(u), imp_ty(o), dims,
                                      none ? xprintf("  tensor K: f32[%s]\n", dims) : "", lhs, op, uat,
                                      none ? xprintf("  K[%s] += 1.0\n", lhs) : "", xi, y));
  imp_call(I, o->tex, kn, xprintf("%s, %s, %s", imp_tensor(I, x), imp_tensor(I, ix), imp_tensor(I, u)));
  return true;
}

/* Index D of P at the point AT, run-time integers (or integers held as f32), a negative
 * one counted from the end of an axis of N. */
static char *scatter_index(const Val *ix, const char *at, int64_t n) {
  char *v = imp_int_at(ix, "P", at);
  return xprintf("(%s < 0 ? %s + %lld : %s)", v, v, (long long)n, v);
}

static bool op_scatter_nd(Imp *I) {
  if (!imp_attrs_known(I, "reduction") || !imp_one_output(I)) return false;
  const char *red = scatter_reduction(I);
  Val *x = red ? imp_float_in(I, 0) : NULL, *ix = x ? imp_in(I, 1) : NULL, *u = ix ? imp_float_in(I, 2) : NULL;
  if (!u) return x && !ix ? imp_error(I, "input 2 (indices) is missing") : false;
  int r = x->ndim, q = ix->ndim - 1;
  int64_t k = q >= 0 ? ix->shape[q] : 0, rows = 1;
  if (q < 0 || k < 1 || k > r) return imp_error(I, "indices of shape [%s] for data of rank %d", imp_dims_text(ix->shape, ix->ndim), r);
  for (int i = 0; i < q; i++) rows *= ix->shape[i];
  if (u->ndim != q + r - (int)k) return imp_error(I, "updates of rank %d (%d expected)", u->ndim, q + r - (int)k);
  if (!ix->c) { /* at run time: M[indices[j], t...] red= U[j, t...] */
    if (!imp_run_time_int(ix) && !ix->fint) return imp_unsupported(I, "indices of element type %s", imp_type_name(ix->dtype));
    char *j = imp_idx("j", q), *lhs = xstrdup(""), *uat = xstrdup(q ? j : "");
    for (int d = 0; d < r; d++)
      lhs = xprintf("%s%s%s", lhs, d ? ", " : "", d < k ? scatter_index(ix, q ? xprintf("%s, %d", j, d) : xprintf("%d", d), x->shape[d])
                                                          : xprintf("t%d", d));
    for (int d = (int)k; d < r; d++) uat = xprintf("%s%st%d", uat, *uat ? ", " : "", d);
    if (!*uat) uat = xstrdup("0");
    return scatter_run_time(I, x, ix, u, red, lhs, uat);
  }
  ScatterMap m = {.p = 1};
  for (int d = 0; d < k; d++) m.p *= x->shape[d];
  m.t = imp_vals(m.p * SCATTER_MAX_HITS);
  for (int64_t i = 0; i < m.p * SCATTER_MAX_HITS; i++) m.t[i] = -1;
  double *folded = x->c && u->c ? imp_vals(val_numel(x)) : NULL;
  if (folded) memcpy(folded, x->c, sizeof(double) * (size_t)val_numel(x));
  for (int64_t row = 0; row < rows; row++) {
    int64_t pos = 0;
    for (int d = 0; d < k; d++) {
      double v = ix->c[row * k + d], n = (double)x->shape[d];
      if (v < 0) v += n;
      if (v < 0 || v >= n) return imp_error(I, "index %.0f outside axis %d of size %.0f", ix->c[row * k + d], d, n);
      pos = pos * x->shape[d] + (int64_t)v;
    }
    if (folded) {
      int64_t slice = val_numel(x) / m.p;
      for (int64_t e = 0; e < slice; e++) scatter_apply(red, &folded[pos * slice + e], u->c[row * slice + e]);
    } else if (!scatter_hit(I, &m, pos, (double)row)) {
      return false;
    }
  }
  if (folded) return imp_const_out(I, 0, x->dtype, x->ndim, x->shape, folded), true;
  /* U[row as indices' leading axes, the data's axes from k]; row from the table */
  const char *pos = xstrdup(""), *xat = imp_idx("i", r), *uat[SCATTER_MAX_HITS];
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
  if (!imp_attrs_known(I, "axis,reduction") || !imp_one_output(I)) return false;
  const char *red = scatter_reduction(I);
  Val *x = red ? imp_float_in(I, 0) : NULL, *ix = x ? imp_in(I, 1) : NULL, *u = ix ? imp_float_in(I, 2) : NULL;
  if (!u) return x && !ix ? imp_error(I, "input 2 (indices) is missing") : false;
  int r = x->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r);
  if (a < 0) return false;
  if (ix->ndim != r || u->ndim != r || memcmp(ix->shape, u->shape, sizeof(int64_t) * (size_t)r))
    return imp_error(I, "indices [%s] and updates [%s] must have one shape, of the data's rank", imp_dims_text(ix->shape, ix->ndim), imp_dims_text(u->shape, u->ndim));
  for (int d = 0; d < r; d++)
    if (ix->shape[d] > x->shape[d] && d != a) return imp_error(I, "indices larger than the data on axis %d", d);
  if (!ix->c) { /* at run time: M[r0, .., indices[r], .., rN] red= U[r] (every axis a reduction axis) */
    if (!imp_run_time_int(ix) && !ix->fint) return imp_unsupported(I, "indices of element type %s", imp_type_name(ix->dtype));
    char *ri = imp_idx("r", r), *lhs = xstrdup("");
    for (int d = 0; d < r; d++)
      lhs = xprintf("%s%s%s", lhs, d ? ", " : "", d == a ? scatter_index(ix, ri, x->shape[d]) : xprintf("r%d + 0", d));
    return scatter_run_time(I, x, ix, u, red, lhs, ri);
  }
  ScatterMap m = {.p = val_numel(x)};
  m.t = imp_vals(m.p * SCATTER_MAX_HITS);
  for (int64_t i = 0; i < m.p * SCATTER_MAX_HITS; i++) m.t[i] = -1;
  double *folded = x->c && u->c ? imp_vals(val_numel(x)) : NULL; /* all constants: folded */
  if (folded) memcpy(folded, x->c, sizeof(double) * (size_t)val_numel(x));
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
    if (folded) scatter_apply(red, &folded[pos], u->c[i]);
    else if (!scatter_hit(I, &m, pos, (double)at_a)) return false;
  }
  if (folded) return imp_const_out(I, 0, x->dtype, x->ndim, x->shape, folded), true;
  const char *xat = imp_idx("i", r), *uat[SCATTER_MAX_HITS];
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

/* ---- channel shuffle ---------------------------------------------------------------- */

/* The one node of G that reads NAME (a graph output counts as a reader: -1), or -1. */
static int sole_reader(const Onnx__GraphProto *g, const char *name) {
  int r = -1;
  for (size_t i = 0; i < g->n_output; i++)
    if (strcmp(g->output[i]->name, name) == 0) return -1;
  for (size_t i = 0; i < g->n_node; i++)
    for (size_t j = 0; j < g->node[i]->n_input; j++)
      if (strcmp(g->node[i]->input[j], name) == 0) {
        if (r >= 0 && r != (int)i) return -1;
        r = (int)i;
      }
  return r;
}

/* Value NAME, made now when a Constant node of G that comes later in the import order
 * makes it (*SKIP marks that node done); NULL: not yet known. */
static Val *val_now(Imp *I, const Onnx__GraphProto *g, const char *name, bool *skip) {
  Val *v = imp_val(I, name);
  for (size_t i = 0; !v && i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (strcmp(n->op_type, "Constant") != 0 || n->n_output != 1 || strcmp(n->output[0], name) != 0) continue;
    const Onnx__NodeProto *saved = I->node;
    I->node = n;
    bool ok = onnx_op(I);
    I->node = saved;
    if (!ok) return NULL;
    skip[i] = true;
    v = imp_val(I, name);
  }
  return v;
}

/* Does node N of G reshape to the constant SHAPE of rank ND (every value given, none 0 or
 * -1)? */
static bool reshapes_to(Imp *I, const Onnx__GraphProto *g, const Onnx__NodeProto *n, int nd, const int64_t *shape, bool *skip) {
  if (strcmp(n->op_type, "Reshape") != 0 || n->n_input != 2) return false;
  Val *s = val_now(I, g, n->input[1], skip);
  if (!s || !s->c || s->ndim != 1 || s->shape[0] != nd) return false;
  for (int d = 0; d < nd; d++)
    if (s->c[d] != (double)shape[d]) return false;
  return true;
}

/* Is node N of G a QuantizeLinear (Q) or DequantizeLinear (DQ) by the one scale S and zero
 * point Z (NULL: none) of quantized type DT, constants, per tensor? */
static bool same_q(Imp *I, const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *op, const Val *s, const Val *z, int dt,
                   bool *skip) {
  if (strcmp(n->op_type, op) != 0 || n->n_output != 1 || n->n_input < 2 || n->n_input > 3) return false;
  for (size_t i = 0; i < n->n_attribute; i++)
    if (!n->attribute[i]->name || strcmp(n->attribute[i]->name, "axis") != 0) return false;
  Val *ns = val_now(I, g, n->input[1], skip), *nz = n->n_input == 3 && *n->input[2] ? val_now(I, g, n->input[2], skip) : NULL;
  if (!ns || !ns->c || val_numel(ns) != 1 || (float)ns->c[0] != (float)s->c[0]) return false;
  if (n->n_input == 3 && *n->input[2] && (!nz || !nz->c || val_numel(nz) != 1)) return false;
  int ndt = nz ? nz->dtype : OT_UINT8;
  return ndt == dt && (nz ? nz->c[0] : 0) == (z ? z->c[0] : 0);
}

/* NAME, or past a QuantizeLinear -> DequantizeLinear pair that alone reads it (*Q, *DQ: the
 * two nodes, else -1), when X is the DequantizeLinear of a quantized value by one constant
 * scale and zero point and the pair quantizes by the same ones. A permutation of X's
 * values (a channel shuffle) is on X's grid, where the pair is the identity: round((q -
 * z) * s / s) is q - z exactly for the 8-bit q (ONNX's QDQ form puts a pair after every
 * Reshape and Transpose of a quantized model). */
static const char *past_qdq(Imp *I, const Onnx__GraphProto *g, const char *name, const Val *x, int *q, int *dq, bool *skip) {
  *q = *dq = -1;
  const Val *s = x->dq_s, *z = x->dq_z;
  if (!x->dq_x || !s || !s->c || val_numel(s) != 1 || (z && (!z->c || val_numel(z) != 1))) return name;
  int dt = x->dq_x->dtype, a = sole_reader(g, name);
  if (dt != OT_UINT8 && dt != OT_INT8) return name;
  if (a < 0 || !same_q(I, g, g->node[a], "QuantizeLinear", s, z, dt, skip)) return name;
  int b = sole_reader(g, g->node[a]->output[0]);
  if (b < 0 || !same_q(I, g, g->node[b], "DequantizeLinear", s, z, dt, skip) || strcmp(g->node[b]->input[0], g->node[a]->output[0]))
    return name;
  *q = a, *dq = b;
  return g->node[b]->output[0];
}

/* ShuffleNet's channel shuffle of a channels-last value: Reshape [N, C, H, W] -> [N, G,
 * C / G, H, W], Transpose (0, 2, 1, 3, 4), Reshape back to [N, C, H, W], the two later nodes
 * reading only what the one before makes. Node K (of G) is the first Reshape: the three
 * become one kernel permuting the channels of the NHWC tensor, output channel o reading
 * channel (o % G) * (C / G) + o / G, and *SKIP marks the two others done. In the model's
 * layout they were five copies (to NCHW, reshape, transpose, reshape, back to NHWC). In a
 * QDQ model a QuantizeLinear -> DequantizeLinear pair follows the first Reshape and the
 * Transpose: skipped (past_qdq) when X is dequantized by their scale and zero point. X may
 * be quantized values themselves (a QOperator model's uint8). False: not this form (the
 * nodes are imported one by one). */
bool onnx_channel_shuffle(Imp *I, const Onnx__GraphProto *g, int k, bool *skip) {
  const Onnx__NodeProto *n0 = g->node[k];
  if (strcmp(n0->op_type, "Reshape") != 0 || n0->n_input != 2 || n0->n_output != 1) return false;
  Val *x = imp_val(I, n0->input[0]);
  bool q8 = x && !x->c && (x->dtype == OT_UINT8 || x->dtype == OT_INT8); /* a QOperator model's uint8 values */
  if (!x || !x->nhwc || x->ndim != 4 || (x->dtype != OT_FLOAT && !q8)) return false;
  Val *s = imp_val(I, n0->input[1]);
  if (!s || !s->c || s->ndim != 1 || s->shape[0] != 5) return false;
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3], gr = (int64_t)s->c[1];
  if (gr < 1 || c % gr != 0) return false;
  int64_t split[5] = {n, gr, c / gr, h, w};
  if (!reshapes_to(I, g, n0, 5, split, skip)) return false;
  int q1, dq1, q2, dq2;
  int t = sole_reader(g, past_qdq(I, g, n0->output[0], x, &q1, &dq1, skip));
  if (t < 0 || strcmp(g->node[t]->op_type, "Transpose") != 0 || g->node[t]->n_output != 1) return false;
  const Onnx__NodeProto *saved = I->node;
  I->node = g->node[t];
  int64_t perm[HT_MAX_DIMS];
  int np = imp_attr_ints(I, "perm", perm, HT_MAX_DIMS);
  I->node = saved;
  static const int64_t swap12[5] = {0, 2, 1, 3, 4};
  if (np != 5 || memcmp(perm, swap12, sizeof swap12) != 0) return false;
  int r = sole_reader(g, past_qdq(I, g, g->node[t]->output[0], x, &q2, &dq2, skip));
  if (r < 0 || g->node[r]->n_output != 1 || !reshapes_to(I, g, g->node[r], 4, x->shape, skip)) return false;
  if ((q1 < 0) != (q2 < 0)) return false; /* both pairs or none */
  I->node = g->node[r];
  int64_t os[4] = {n, h, w, c};
  Val *o = imp_net_out(I, 0, 4, os);
  const char *kn = imp_kernel(I, "channel_shuffle", xprintf("(X: %s) -> Y: %s {\n  Y[i0, i1, i2, i3] = X[i0, i1, i2, (i3 %% %lld) * %lld + i3 / %lld]\n}",
                                                          imp_ty(o), imp_ty(o), (long long)gr, (long long)(c / gr), (long long)gr));
  imp_call(I, o->tex, kn, x->tex);
  memcpy(o->shape, x->shape, sizeof o->shape);
  o->nhwc = true;
  if (q8) o->dtype = x->dtype, o->fint = true; /* the quantized integers, moved (onnx_op's movers) */
  skip[t] = skip[r] = true;
  if (q1 >= 0) skip[q1] = skip[dq1] = skip[q2] = skip[dq2] = true;
  return true;
}

/* Node I->node if OP is one of this file's operators (reshapes, transposes, concatenation, gathers, slices, pads, tiles, scatters): 1 or 0 (reported), else -1. */
int onnx_layout_op(Imp *I, const char *op) {
  if (!strcmp(op, "Split")) return op_split(I);
  if (!strcmp(op, "Pad")) return op_pad(I);
  if (!strcmp(op, "DepthToSpace")) return op_depth_space(I, true);
  if (!strcmp(op, "SpaceToDepth")) return op_depth_space(I, false);
  if (!strcmp(op, "Tile")) return op_tile(I);
  if (!strcmp(op, "NonZero")) return op_nonzero(I);
  if (!strcmp(op, "GatherElements")) return op_gather_elements(I);
  if (!strcmp(op, "Size")) return op_size(I);
  if (!strcmp(op, "Trilu")) return op_trilu(I);
  if (!strcmp(op, "OneHot")) return op_onehot(I);
  if (!strcmp(op, "ReverseSequence")) return op_reverse_sequence(I);
  if (!strcmp(op, "Compress")) return op_compress(I);
  if (!strcmp(op, "ScatterND")) return op_scatter_nd(I);
  if (!strcmp(op, "ScatterElements") || !strcmp(op, "Scatter")) return op_scatter_elements(I);
  if (!strcmp(op, "Reshape")) return op_reshape(I);
  if (!strcmp(op, "Flatten")) return op_flatten(I);
  if (!strcmp(op, "Squeeze")) return op_squeeze(I, false);
  if (!strcmp(op, "Unsqueeze")) return op_squeeze(I, true);
  if (!strcmp(op, "Transpose")) return op_transpose(I);
  if (!strcmp(op, "Concat")) return op_concat(I);
  if (!strcmp(op, "Gather")) return op_gather(I);
  if (!strcmp(op, "GatherND")) return op_gather_nd(I);
  if (!strcmp(op, "Slice")) return op_slice(I);
  if (!strcmp(op, "Expand")) return imp_attrs_known(I, "") && op_expand(I);
  return -1;
}
