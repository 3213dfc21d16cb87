/* onnx_control.c — ONNX's control flow where the import can decide it (docs/ONNX.md): If
 * whose condition is known at import imports its chosen branch in place; Loop whose trip
 * count and condition are known at import, and Scan, whose trip count is a static shape,
 * are unrolled: the stepped inputs are halved until one position is left (imp_walk_steps:
 * log2 T kinds of cut, every step reading alike), the body is imported per step with its
 * inputs bound to the states and that position, and the steps' scan outputs are put
 * together by pairs (log2 T kinds of kernel). A body imported again per step makes the same
 * kernels (imp_kernel defines each text once); its values are renamed after the step, so
 * that the next step defines them anew. Sequences (a list appended to in a loop) are lists
 * of tensors known at import. onnx_control_op is the entry from the table.
 */
#include "onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

enum { SCAN_MAX_STEPS = 1024, SCAN_MAX_VALUES = 64 };

/* ---- If -------------------------------------------------------------------------------- */

/* Subgraph G (a branch, a body) imported once: its first NIN inputs bound to IN (a tensor
 * or constant each), its outputs into OUT (WHAT names G in errors); then the values it made
 * renamed NAME@SUFFIX, out of the way of G's next import. false: reported. */
static bool run_graph(Imp *I, const Onnx__GraphProto *g, const char *what, Val **in, int nin, Val **out, const char *suffix) {
  int first = I->vals.len;
  for (int j = 0; j < nin; j++) {
    const char *bn = g->input[j]->name;
    if (!bn || !*bn) return imp_error(I, "%s input %d has no name", what, j + 1);
    imp_alias_as(I, bn, in[j]);
  }
  if (!imp_import_graph(I, g)) return false;
  for (size_t j = 0; j < g->n_output; j++) {
    const char *bn = g->output[j]->name;
    if (!(out[j] = bn ? imp_val(I, bn) : NULL))
      return imp_error(I, "%s output %zu ('%s') is computed by no node", what, j + 1, bn ? bn : "");
  }
  for (int i = first; i < I->vals.len; i++) {
    Val *v = VEC_AT(I->vals, i);
    v->name = xprintf("%s@%s", v->name, suffix);
  }
  return true;
}

/* If of a condition computed at run time: both branches imported (the first's values renamed
 * out of the second's way), each output the one or the other by the condition (a kernel);
 * the branches must make outputs of one shape and kind. */
static bool if_both(Imp *I, Val *c) {
  const Onnx__NodeProto *nd = I->node;
  const Onnx__AttributeProto *ta = imp_attr(I, "then_branch"), *ea = imp_attr(I, "else_branch");
  if (!ta || !ta->g || !ea || !ea->g) return imp_error(I, "no then_branch or else_branch graph");
  const Onnx__GraphProto *br[2] = {ta->g, ea->g};
  Val **outs[2];
  for (int w = 0; w < 2; w++) {
    if (br[w]->n_output != nd->n_output) return imp_error(I, "a branch has %zu outputs, the node %zu", br[w]->n_output, nd->n_output);
    outs[w] = xalloc(sizeof(Val *) * (nd->n_output + 1));
    if (!run_graph(I, br[w], w ? "else_branch" : "then_branch", NULL, 0, outs[w], w ? "else" : "then")) return false;
  }
  for (size_t k = 0; k < nd->n_output; k++) {
    if (!*nd->output[k]) continue;
    Val *a = outs[0][k], *b = outs[1][k];
    if (a->is_seq || b->is_seq) return imp_unsupported(I, "If of a run-time condition whose output %zu is a sequence", k + 1);
    if (a->ndim != b->ndim || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim))
      return imp_unsupported(I, "If of a run-time condition whose branches make output %zu as %s and %s (both are computed, one "
                             "kept: they must agree)", k + 1, imp_ty(a), imp_ty(b));
    if (imp_ty(a)[0] != imp_ty(b)[0] || (!a->c && !b->c && a->dtype != b->dtype))
      return imp_unsupported(I, "If of a run-time condition whose branches make output %zu of kinds %s and %s", k + 1,
                             imp_type_name(a->dtype), imp_type_name(b->dtype));
    Val *o = imp_tmp_val(I, a->c ? b : a, nd->output[k], a->ndim, a->shape);
    const char *all = imp_idx("i", a->ndim);
    const char *kn = imp_kernel(I, "if_select", xprintf("(C: %s, A: %s, B: %s) -> Y: %s {\n  Y[%s] = %s ? A[%s] : B[%s]\n}",
                                                        imp_ty(c), imp_ty(a), imp_ty(b), imp_ty(o), all,
                                                        imp_run_time_int(c) ? "C[0] != 0" : "C[0] != 0.0", all, all));
    imp_call(I, o->tex, kn, xprintf("%s, %s, %s", imp_tensor(I, c), imp_tensor(I, a), imp_tensor(I, b)));
    imp_alias_as(I, nd->output[k], o);
  }
  return true;
}

/* If whose condition is known at import (a constant, folded shape arithmetic, or a file
 * given with --input): the chosen branch's initializers and nodes imported in place, its
 * outputs the If's; else both (if_both). */
static bool op_if(Imp *I) {
  const Onnx__NodeProto *nd = I->node;
  if (!imp_attrs_known(I, "then_branch,else_branch")) return false;
  Val *c = imp_in(I, 0);
  if (!c) return imp_error(I, "input 1 (cond) is missing");
  if (val_numel(c) != 1) return imp_error(I, "cond has %lld values (one)", (long long)val_numel(c));
  if (!c->c) return if_both(I, c);
  const char *which = c->c[0] != 0 ? "then_branch" : "else_branch";
  const Onnx__AttributeProto *a = imp_attr(I, which);
  if (!a || !a->g) return imp_error(I, "no %s graph", which);
  const Onnx__GraphProto *b = a->g;
  if (b->n_output != nd->n_output) return imp_error(I, "%s has %zu outputs, the node %zu", which, b->n_output, nd->n_output);
  if (!imp_import_graph(I, b)) return false;
  for (size_t k = 0; k < nd->n_output; k++) {
    if (!*nd->output[k]) continue;
    Val *v = b->output[k]->name ? imp_val(I, b->output[k]->name) : NULL;
    if (!v) return imp_error(I, "%s's output %zu is computed by no node", which, k + 1);
    imp_alias_as(I, nd->output[k], v);
  }
  return true;
}

/* ---- Scan ------------------------------------------------------------------------------ */

Val *imp_tmp_val(Imp *I, const Val *x, const char *hint, int nd, const int64_t *shape) {
  Val *v = xalloc(sizeof *v);
  v->name = hint;
  v->dtype = x && !x->c && (imp_run_time_int(x) || x->dtype == OT_BOOL) ? x->dtype : OT_FLOAT;
  v->fint = x && !x->c && x->fint;
  v->ndim = nd;
  if (nd) memcpy(v->shape, shape, sizeof(int64_t) * (size_t)nd);
  v->tex = imp_name(I, hint);
  return v;
}

/* Index i0..i(ND-1) with axis A's index replaced by TEXT, or left out (TEXT NULL; "0" when
 * none is left: a rank-0 value, held as [1]). */
static char *index_with(int nd, int a, const char *text) {
  char *s = xstrdup("");
  int k = 0;
  for (int d = 0; d < nd; d++) {
    if (d == a && !text) continue;
    s = xprintf("%s%s%s", s, k++ ? ", " : "", d == a ? text : xprintf("i%d", d));
  }
  return k ? s : xstrdup("0");
}

/* X at position IDX of axis A, that axis gone (a constant sliced here, else a kernel). */
static Val *slice_at(Imp *I, Val *x, int a, int64_t idx, const char *hint) {
  int64_t shape[HT_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < x->ndim; d++)
    if (d != a) shape[nd++] = x->shape[d];
  Val *o = imp_tmp_val(I, x, hint, nd, shape);
  if (x->c) {
    int64_t inner = 1, n = x->shape[a];
    for (int d = a + 1; d < x->ndim; d++) inner *= x->shape[d];
    o->c = imp_vals(val_numel(o));
    o->dtype = x->dtype;
    o->tex = NULL; /* a constant: a weight where a kernel reads it */
    for (int64_t i = 0; i < val_numel(o); i++) o->c[i] = x->c[(i / inner * n + idx) * inner + i % inner];
    return o;
  }
  /* Y's axes: X's without A; X read at Y's index with IDX put in at A */
  char *src = xstrdup("");
  for (int d = 0, k = 0; d < x->ndim; d++)
    src = xprintf("%s%s%s", src, d ? ", " : "", d == a ? xprintf("%lld", (long long)idx) : xprintf("i%d", k++));
  const char *kn = imp_kernel(I, "scan_slice", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(o),
                                                       imp_idx("i", nd), src));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return o;
}

/* X's positions START..START+LEN along axis A (a constant cut here, else a kernel). */
static Val *rows_of(Imp *I, Val *x, int a, int64_t start, int64_t len, const char *hint) {
  int64_t shape[HT_MAX_DIMS], n = x->shape[a], inner = 1;
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[a] = len;
  for (int d = a + 1; d < x->ndim; d++) inner *= x->shape[d];
  Val *o = imp_tmp_val(I, x, hint, x->ndim, shape);
  if (x->c) {
    o->c = imp_vals(val_numel(o));
    o->dtype = x->dtype;
    o->tex = NULL; /* a constant: a weight where a kernel reads it */
    for (int64_t f = 0; f < val_numel(o); f++) {
      int64_t outer = f / (len * inner), p = f / inner % len;
      o->c[f] = x->c[(outer * n + start + p) * inner + f % inner];
    }
    return o;
  }
  const char *ia = start ? xprintf("i%d + %lld", a, (long long)start) : xprintf("i%d", a);
  const char *kn = imp_kernel(I, "steps", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(x), imp_ty(o),
                                                  imp_idx("i", x->ndim), index_with(x->ndim, a, ia)));
  imp_call(I, o->tex, kn, imp_tensor(I, x));
  return o;
}

typedef struct {
  ImpStepFn step;
  void *ctx;
  const int *axes;
  const bool *rev;
  int m;
  const char *hint;
} Walk;

/* Steps T0..T0+N of W, PIECES their positions of each input (reversed ones read from the
 * end): halved until one step is left. */
static bool walk(Imp *I, const Walk *w, Val **pieces, int64_t t0, int64_t n) {
  if (n == 1) return w->step(I, w->ctx, t0, pieces);
  int64_t n1 = n / 2;
  Val **a = xalloc(sizeof(Val *) * (size_t)w->m), **b = xalloc(sizeof(Val *) * (size_t)w->m);
  for (int j = 0; j < w->m; j++) {
    a[j] = rows_of(I, pieces[j], w->axes[j], w->rev[j] ? n - n1 : 0, n1, w->hint);
    b[j] = rows_of(I, pieces[j], w->axes[j], w->rev[j] ? 0 : n1, n - n1, w->hint);
  }
  return walk(I, w, a, t0, n1) && walk(I, w, b, t0 + n1, n - n1);
}

bool imp_walk_steps(Imp *I, Val **xs, const int *axes, const bool *rev, int m, int64_t steps, ImpStepFn step, void *ctx,
                    const char *hint) {
  Walk w = {step, ctx, axes, rev, m, hint};
  return walk(I, &w, xs, 0, steps);
}

/* The N values V (one rank; one shape but along axis A) put together along A: the two halves
 * put together, then the pair (a kernel reading A or B by which side of the seam). */
static Val *concat(Imp *I, Val **v, int64_t n, int a, const char *hint) {
  if (n == 1) return v[0];
  int64_t n1 = n / 2;
  Val *x = concat(I, v, n1, a, hint), *y = concat(I, v + n1, n - n1, a, hint);
  int r = x->ndim;
  int64_t shape[HT_MAX_DIMS];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)r);
  shape[a] += y->shape[a];
  Val *o = imp_tmp_val(I, x, hint, r, shape);
  const char *ia = xprintf("i%d", a), *all = imp_idx("i", r);
  long long na = x->shape[a];
  const char *kn = imp_kernel(I, "put_together", xprintf("(A: %s, B: %s) -> Y: %s {\n  Y[%s] = %s < %lld ? A[%s] : B[%s]\n}",
                                                         imp_ty(x), imp_ty(y), imp_ty(o), all, ia, na, all,
                                                         index_with(r, a, xprintf("%s - %lld", ia, na))));
  imp_call(I, o->tex, kn, xprintf("%s, %s", imp_tensor(I, x), imp_tensor(I, y)));
  return o;
}

/* (onnx_internal.h) Constants stacked here; else each value unsqueezed, then put together. */
Val *imp_stack(Imp *I, Val **v, int64_t n, int a, const char *hint) {
  int r = v[0]->ndim;
  int64_t shape[HT_MAX_DIMS];
  for (int d = 0, k = 0; d <= r; d++) shape[d] = d == a ? n : v[0]->shape[k++];
  bool folded = true;
  for (int64_t t = 0; t < n; t++) folded &= v[t]->c != NULL;
  if (folded) { /* constants (a loop over shapes): stacked here, in their type */
    Val *o = imp_tmp_val(I, v[0], hint, r + 1, shape);
    int64_t inner = 1, each = val_numel(v[0]);
    for (int d = a; d < r; d++) inner *= v[0]->shape[d];
    o->c = imp_vals(each * n);
    o->dtype = v[0]->dtype;
    o->tex = NULL; /* a constant: a weight where a kernel reads it */
    for (int64_t t = 0; t < n; t++)
      for (int64_t e = 0; e < each; e++) o->c[(e / inner * n + t) * inner + e % inner] = v[t]->c[e];
    return o;
  }
  shape[a] = 1;
  Val **u = xalloc(sizeof(Val *) * (size_t)n);
  for (int64_t t = 0; t < n; t++) {
    u[t] = imp_tmp_val(I, v[t], hint, r + 1, shape);
    const char *kn = imp_kernel(I, "unsqueeze", xprintf("(X: %s) -> Y: %s {\n  Y[%s] = X[%s]\n}", imp_ty(v[t]),
                                                       imp_ty(u[t]), imp_idx("i", r + 1), index_with(r + 1, a, NULL)));
    imp_call(I, u[t]->tex, kn, imp_tensor(I, v[t]));
  }
  return concat(I, u, n, a, hint);
}

/* Up to MAX ints of attribute NAME into OUT, else DEF for each of N; false: reported. */
static bool axes_attr(Imp *I, const char *name, int64_t *out, int n, int64_t def) {
  int got = imp_attr_ints(I, name, out, SCAN_MAX_VALUES);
  if (got < 0)
    for (int k = 0; k < n; k++) out[k] = def;
  else if (got != n)
    return imp_error(I, "attribute '%s' has %d values for %d tensors", name, got, n);
  return !I->failed;
}

/* A Scan being unrolled: its body, counts, the states so far and the steps' scan outputs. */
typedef struct {
  const Onnx__GraphProto *body;
  int n, m, k;
  int64_t steps;
  Val **state, **outs;
  const int *axes;
  const char *hint;
} ScanRun;

/* Step T of a Scan (ImpStepFn): the body imported with its inputs bound to the states and
 * ROWS (each scan input's position of this step, one along its axis); its values renamed
 * after. */
static bool scan_step(Imp *I, void *ctx, int64_t t, Val **rows) {
  ScanRun *r = ctx;
  Val *in[SCAN_MAX_VALUES], *out[SCAN_MAX_VALUES];
  for (int j = 0; j < r->n + r->m; j++)
    in[j] = j < r->n ? r->state[j] : slice_at(I, rows[j - r->n], r->axes[j - r->n], 0, r->hint);
  if (!run_graph(I, r->body, "body", in, r->n + r->m, out, xprintf("%lld", (long long)t))) return false;
  for (int j = 0; j < r->n + r->k; j++) {
    if (j < r->n) r->state[j] = out[j];
    else r->outs[(j - r->n) * r->steps + t] = out[j];
  }
  return true;
}

/* Scan (opset 9 on): the body run once per position of the scan inputs, unrolled. */
static bool op_scan(Imp *I) {
  const Onnx__NodeProto *nd = I->node;
  if (!imp_attrs_known(I, "body,num_scan_inputs,scan_input_axes,scan_input_directions,scan_output_axes,scan_output_directions"))
    return false;
  const Onnx__AttributeProto *ba = imp_attr(I, "body");
  if (!ba || !ba->g) return imp_error(I, "no body graph");
  const Onnx__GraphProto *body = ba->g;
  int m = (int)imp_attr_i(I, "num_scan_inputs", -1), nin = imp_nin(I), n = nin - m, nout = (int)nd->n_output, k = nout - n;
  if (m < 1 || n < 0 || k < 0 || nin > SCAN_MAX_VALUES || nout > SCAN_MAX_VALUES)
    return imp_error(I, "num_scan_inputs %d for %d inputs and %d outputs", m, nin, nout);
  if ((int)body->n_input != n + m || (int)body->n_output != n + k)
    return imp_error(I, "the body has %zu inputs and %zu outputs; %d and %d here", body->n_input, body->n_output, n + m, n + k);
  int64_t in_axes[SCAN_MAX_VALUES], in_dirs[SCAN_MAX_VALUES], out_axes[SCAN_MAX_VALUES], out_dirs[SCAN_MAX_VALUES];
  if (!axes_attr(I, "scan_input_axes", in_axes, m, 0) || !axes_attr(I, "scan_input_directions", in_dirs, m, 0) ||
      !axes_attr(I, "scan_output_axes", out_axes, k, 0) || !axes_attr(I, "scan_output_directions", out_dirs, k, 0))
    return false;
  Val *state[SCAN_MAX_VALUES], *scanned[SCAN_MAX_VALUES];
  int64_t steps = -1;
  for (int j = 0; j < nin; j++) {
    Val *v = imp_in(I, j);
    if (!v) return imp_error(I, "input %d is missing", j + 1);
    if (j < n) {
      state[j] = v;
      continue;
    }
    int a = imp_axis_of(I, in_axes[j - n], v->ndim);
    if (a < 0) return false;
    in_axes[j - n] = a;
    if (steps >= 0 && v->shape[a] != steps)
      return imp_error(I, "scan input %d has %lld positions along its axis, the first %lld", j - n + 1,
                       (long long)v->shape[a], (long long)steps);
    steps = v->shape[a];
    scanned[j - n] = v;
  }
  if (steps < 1) return imp_unsupported(I, "a scan of no position (empty tensors)");
  if (steps > SCAN_MAX_STEPS) return imp_unsupported(I, "a scan of %lld positions (unrolled at import: %d at most)", (long long)steps, SCAN_MAX_STEPS);
  Val **outs = xalloc(sizeof(Val *) * (size_t)(k * steps + 1));
  int axes[SCAN_MAX_VALUES];
  bool rev[SCAN_MAX_VALUES];
  for (int j = 0; j < m; j++) axes[j] = (int)in_axes[j], rev[j] = in_dirs[j] != 0;
  ScanRun run = {body, n, m, k, steps, state, outs, axes, nd->output[0]};
  if (!imp_walk_steps(I, scanned, axes, rev, m, steps, scan_step, &run, xprintf("%s_in", nd->output[0]))) return false;
  for (int j = 0; j < nout; j++) {
    if (!*nd->output[j]) continue;
    if (j < n) {
      imp_alias_as(I, nd->output[j], state[j]);
      continue;
    }
    Val **per = outs + (int64_t)(j - n) * steps;
    for (int64_t t = 1; t < steps; t++)
      if (per[t]->ndim != per[0]->ndim || memcmp(per[t]->shape, per[0]->shape, sizeof(int64_t) * (size_t)per[0]->ndim))
        return imp_error(I, "scan output %d changes its shape between steps", j - n + 1);
    if (out_dirs[j - n]) /* reverse: the last step's value first */
      for (int64_t t = 0; t < steps / 2; t++) {
        Val *x = per[t];
        per[t] = per[steps - 1 - t], per[steps - 1 - t] = x;
      }
    int a = imp_axis_of(I, out_axes[j - n], per[0]->ndim + 1);
    if (a < 0) return false;
    imp_alias_as(I, nd->output[j], imp_stack(I, per, steps, a, nd->output[j]));
  }
  return true;
}

/* ---- Loop ------------------------------------------------------------------------------ */

/* Loop whose iterations the import can count: a constant trip count M (or none) and a
 * condition that is a constant at every iteration (the body's cond_out folds: passed
 * through, or shape arithmetic), unrolled as Scan is; a condition computed at run time is
 * refused by name. Its scan outputs are stacked along a new first axis. */
static bool op_loop(Imp *I) {
  const Onnx__NodeProto *nd = I->node;
  if (!imp_attrs_known(I, "body")) return false;
  const Onnx__AttributeProto *ba = imp_attr(I, "body");
  if (!ba || !ba->g) return imp_error(I, "no body graph");
  const Onnx__GraphProto *body = ba->g;
  int n = imp_nin(I) - 2, nout = (int)nd->n_output, k = nout - n;
  if (n < 0 || k < 0 || n > SCAN_MAX_VALUES || nout > SCAN_MAX_VALUES)
    return imp_error(I, "%d inputs and %d outputs (M, cond, then the loop's values)", imp_nin(I), nout);
  if ((int)body->n_input != n + 2 || (int)body->n_output != n + 1 + k)
    return imp_error(I, "the body has %zu inputs and %zu outputs; %d and %d here", body->n_input, body->n_output, n + 2, n + 1 + k);
  Val *mv = imp_in(I, 0), *cv = imp_in(I, 1);
  if ((mv && !mv->c) || (cv && !cv->c))
    return imp_unsupported(I, "a Loop whose %s is computed at run time (its iterations are unrolled at import)",
                           mv && !mv->c ? "trip count" : "condition");
  int64_t trips = mv ? (int64_t)mv->c[0] : SCAN_MAX_STEPS + 1;
  bool cond = cv ? cv->c[0] != 0 : true;
  if (mv && trips > SCAN_MAX_STEPS)
    return imp_unsupported(I, "a Loop of %lld iterations (unrolled at import: %d at most)", (long long)trips, SCAN_MAX_STEPS);
  Val *state[SCAN_MAX_VALUES];
  for (int j = 0; j < n; j++)
    if (!(state[j] = imp_in(I, j + 2))) return imp_error(I, "input %d is missing", j + 3);
  Val **outs = xalloc(sizeof(Val *) * (size_t)(k * SCAN_MAX_STEPS + 1));
  int64_t it = 0;
  for (; it < trips && cond; it++) {
    if (it == SCAN_MAX_STEPS) return imp_unsupported(I, "a Loop of more than %d iterations (unrolled at import)", SCAN_MAX_STEPS);
    double iter = (double)it, yes = 1;
    Val num = {.dtype = OT_INT64, .shape = {1}, .c = &iter}, go = {.dtype = OT_BOOL, .shape = {1}, .c = &yes};
    Val *in[SCAN_MAX_VALUES + 2] = {&num, &go}, *out[SCAN_MAX_VALUES + 1];
    for (int j = 0; j < n; j++) in[j + 2] = state[j];
    if (!run_graph(I, body, "body", in, n + 2, out, xprintf("%lld", (long long)it))) return false;
    for (int j = 0; j < n + 1 + k; j++) {
      Val *v = out[j];
      if (j == 0 && (!v->c || val_numel(v) != 1))
        return imp_unsupported(I, "a Loop whose condition is computed at run time (its iterations are unrolled at import)");
      if (j == 0) cond = v->c[0] != 0;
      else if (j <= n) state[j - 1] = v;
      else outs[(j - n - 1) * SCAN_MAX_STEPS + it] = v;
    }
  }
  for (int j = 0; j < nout; j++) {
    if (!*nd->output[j]) continue;
    if (j < n) {
      imp_alias_as(I, nd->output[j], state[j]);
      continue;
    }
    if (it == 0) return imp_unsupported(I, "scan output %d of no iteration (an empty tensor)", j - n + 1);
    Val **per = outs + (int64_t)(j - n) * SCAN_MAX_STEPS;
    for (int64_t t = 1; t < it; t++)
      if (per[t]->ndim != per[0]->ndim || memcmp(per[t]->shape, per[0]->shape, sizeof(int64_t) * (size_t)per[0]->ndim))
        return imp_error(I, "scan output %d changes its shape between iterations", j - n + 1);
    imp_alias_as(I, nd->output[j], imp_stack(I, per, it, 0, nd->output[j]));
  }
  return true;
}

/* ---- sequences -------------------------------------------------------------------------- */

/* A sequence's tensors are known at import (the loops that build one are unrolled): a Val
 * with is_seq holds them; each operator makes a new list. */
static bool seq_out(Imp *I, Val **items, int n) {
  int64_t one = 1;
  Val *o = imp_out(I, 0, OT_FLOAT, 0, &one);
  o->is_seq = true;
  o->nseq = n;
  o->seq = xalloc(sizeof(Val *) * (size_t)(n + 1));
  if (n) memcpy(o->seq, items, sizeof(Val *) * (size_t)n);
  return true;
}

static Val *seq_in(Imp *I, int k) {
  Val *v = imp_in(I, k);
  if (!v) return imp_error(I, "input %d is missing", k + 1), NULL;
  if (!v->is_seq) return imp_error(I, "input %d is a tensor, not a sequence", k + 1), NULL;
  return v;
}

/* Input K, a constant position in a sequence of N (negative: from the end), into *POS;
 * absent: DEF. AT_END: N itself is a position (an insertion's). false: reported. */
static bool seq_position(Imp *I, int k, int n, int def, bool at_end, int *pos) {
  Val *p = imp_in(I, k);
  if (!p) return *pos = def, true;
  if (!(p = imp_const_in(I, k, "position"))) return false;
  long long x = (long long)p->c[0];
  if (x < -n || x > n - !at_end) return imp_error(I, "position %lld in a sequence of %d", x, n);
  *pos = (int)(x < 0 ? x + n : x);
  return true;
}

static bool op_sequence(Imp *I, const char *op) {
  if (!imp_one_output(I)) return false;
  if (!strcmp(op, "SequenceEmpty")) return imp_attrs_known(I, "dtype") && seq_out(I, NULL, 0);
  if (!strcmp(op, "SequenceConstruct")) {
    Val **items = xalloc(sizeof(Val *) * (size_t)(imp_nin(I) + 1));
    for (int k = 0; k < imp_nin(I); k++) {
      if (!(items[k] = imp_in(I, k))) return imp_error(I, "input %d is missing", k + 1);
      if (items[k]->is_seq) return imp_unsupported(I, "a sequence of sequences");
    }
    return imp_attrs_known(I, "") && seq_out(I, items, imp_nin(I));
  }
  Val *s = seq_in(I, 0);
  if (!s || !imp_attrs_known(I, !strcmp(op, "ConcatFromSequence") ? "axis,new_axis" : "")) return false;
  int n = s->nseq, pos;
  Val **items = xalloc(sizeof(Val *) * (size_t)(n + 2));
  if (!strcmp(op, "SequenceInsert")) {
    Val *t = imp_in(I, 1);
    if (!t) return imp_error(I, "input 2 is missing");
    if (t->is_seq) return imp_unsupported(I, "a sequence of sequences");
    if (!seq_position(I, 2, n, n, true, &pos)) return false;
    for (int k = 0, j = 0; k <= n; k++) items[k] = k == pos ? t : s->seq[j++];
    return seq_out(I, items, n + 1);
  }
  if (!strcmp(op, "SequenceErase")) {
    if (!n) return imp_error(I, "erasing from an empty sequence");
    if (!seq_position(I, 1, n, n - 1, false, &pos)) return false;
    for (int k = 0, j = 0; k < n; k++)
      if (k != pos) items[j++] = s->seq[k];
    return seq_out(I, items, n - 1);
  }
  if (!strcmp(op, "SequenceAt")) {
    if (!imp_in(I, 1)) return imp_error(I, "input 2 (position) is missing");
    if (!seq_position(I, 1, n, 0, false, &pos)) return false;
    return imp_alias_as(I, I->node->output[0], s->seq[pos]);
  }
  if (!strcmp(op, "SequenceLength")) {
    double *c = imp_vals(1);
    c[0] = n;
    int64_t one = 1;
    return imp_const_out(I, 0, OT_INT64, 0, &one, c);
  }
  /* ConcatFromSequence */
  if (!n) return imp_unsupported(I, "an empty sequence (an empty tensor)");
  bool stack = imp_attr_i(I, "new_axis", 0) != 0;
  Val *first = s->seq[0];
  int r = first->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", 0), r + stack);
  if (a < 0) return false;
  for (int k = 1; k < n; k++) {
    const Val *v = s->seq[k];
    bool same = v->ndim == r;
    for (int d = 0; same && d < r; d++) same = v->shape[d] == first->shape[d] || (!stack && d == a);
    if (!same) return imp_error(I, "tensor %d of the sequence is %s, the first %s", k + 1, imp_ty(v), imp_ty(first));
  }
  const char *name = I->node->output[0];
  return imp_alias_as(I, name, stack ? imp_stack(I, s->seq, n, a, name) : concat(I, s->seq, n, a, name));
}

/* SplitToSequence: the input cut along `axis` into pieces of 1 (squeezed unless keepdims),
 * of `split` each (a scalar: the last one shorter), or of the sizes `split` lists. */
static bool op_split_to_sequence(Imp *I) {
  if (!imp_attrs_known(I, "axis,keepdims") || !imp_one_output(I)) return false;
  Val *x = imp_in(I, 0), *sp = imp_in(I, 1);
  if (!x) return imp_error(I, "input 1 is missing");
  if (sp && !(sp = imp_const_in(I, 1, "split"))) return false;
  int a = imp_axis_of(I, imp_attr_i(I, "axis", 0), x->ndim);
  if (a < 0) return false;
  int64_t n = x->shape[a], sizes[SCAN_MAX_STEPS];
  int np = 0;
  if (!sp || (val_numel(sp) == 1 && sp->ndim == 0)) {
    int64_t each = sp ? (int64_t)sp->c[0] : 1;
    if (each < 1) return imp_error(I, "split %lld", (long long)each);
    for (int64_t at = 0; at < n; at += each) {
      if (np == SCAN_MAX_STEPS) return imp_unsupported(I, "more than %d pieces", SCAN_MAX_STEPS);
      sizes[np++] = at + each <= n ? each : n - at;
    }
  } else {
    int64_t sum = 0;
    if (val_numel(sp) > SCAN_MAX_STEPS) return imp_unsupported(I, "more than %d pieces", SCAN_MAX_STEPS);
    for (int64_t k = 0; k < val_numel(sp); k++) {
      sizes[np++] = (int64_t)sp->c[k];
      if (sizes[np - 1] < 1) return imp_unsupported(I, "a piece of %lld (empty tensors)", (long long)sizes[np - 1]);
      sum += sizes[np - 1];
    }
    if (sum != n) return imp_error(I, "split sums to %lld along an axis of %lld", (long long)sum, (long long)n);
  }
  bool squeeze = !sp && !imp_attr_i(I, "keepdims", 1);
  Val **items = xalloc(sizeof(Val *) * (size_t)(np + 1));
  for (int64_t k = 0, at = 0; k < np; at += sizes[k++]) {
    const char *hint = xprintf("%s_%lld", I->node->output[0], (long long)k);
    items[k] = squeeze ? slice_at(I, x, a, at, hint) : sizes[k] == n ? x : rows_of(I, x, a, at, sizes[k], hint);
  }
  return seq_out(I, items, np);
}

bool onnx_reads_sequences(const char *op) {
  static const char *const ops[] = {"SequenceInsert", "SequenceAt", "SequenceErase", "SequenceLength", "SequenceConstruct",
                                    "ConcatFromSequence", "Identity", "Loop", "If", "Scan"};
  return IMP_ONE_OF(op, ops);
}

int onnx_control_op(Imp *I, const char *op) {
  if (!strcmp(op, "If")) return op_if(I);
  if (!strcmp(op, "Scan")) return op_scan(I);
  if (!strcmp(op, "Loop")) return op_loop(I);
  if (!strncmp(op, "Sequence", 8) || !strcmp(op, "ConcatFromSequence")) return op_sequence(I, op);
  if (!strcmp(op, "SplitToSequence")) return op_split_to_sequence(I);
  return -1;
}
