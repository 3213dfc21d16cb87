/* onnx_rnn.c — ONNX's recurrent operators RNN, GRU and LSTM (docs/ONNX.md), unrolled over
 * the sequence at import, as TVM's ONNX frontend unrolls them: the input's product by W
 * for every step at once (one product, the biases added), then per step the hidden
 * state's product by R and the cell's elementwise kernels, and at the end the outputs
 * stacked. Every step runs the same kernels (one task each, whatever the length); the
 * steps' rows of the projection are cut out by halvings and the outputs stacked by
 * pairings (walk_steps), so that T steps make about 4 log2 T distinct small kernels, not
 * T, and no value lives more than O(log T) steps.
 * sequence_lens (a constant or a run-time input) masks each batch row's steps past its
 * length: its state stays, its output rows are zero; the mask is one more column of the
 * projection, so that each step's rows carry theirs. onnx_rnn_op is the entry from the
 * table.
 */
#include "onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

enum { ACTS_MAX = 6, TRANSPOSED_MAX = 8 };

typedef struct {
  Val *w, *t; /* rows J0..J0+N of W[d], transposed */
  int64_t d, j0, n;
} Transposed;

typedef struct {
  char name[24];
  double alpha, beta;
} Act;

typedef struct {
  const char *op;
  int gates;                /* RNN 1, GRU 3 (z, r, h), LSTM 4 (i, o, f, c) */
  int64_t T, B, In, H, D;
  bool batch_first;         /* layout 1: X [B, T, In], Y [B, T, D, H], Y_h [B, D, H] */
  bool lbr;                 /* GRU's linear_before_reset */
  bool input_forget;        /* LSTM: f = 1 - i */
  double clip;              /* 0: none */
  Act act[ACTS_MAX];        /* per direction: LSTM f, g, h; GRU f, g; RNN f */
  int nact;
  Val *x, *w, *r, *b, *h0, *c0, *p;
  Val *lens;                /* sequence_lens [B] (a constant or at run time); NULL: every row runs T steps */
  const char *prefix;       /* of the network names made here */
  Transposed transposed[TRANSPOSED_MAX];
  int ntransposed;
} Rnn;

/* ---- kernels and values made here ------------------------------------------------------ */

/* A network tensor of shape SHAPE that no ONNX name holds, named after HINT. */
static Val *net_tmp(Imp *I, const char *hint, int nd, const int64_t *shape) {
  return imp_tmp_val(I, NULL, hint, nd, shape);
}

/* N values for a constant made here, in the arena: no ONNX name holds it, so the importer,
 * which frees the values of its named constants, does not free these (a weight copies
 * them). */
static double *arena_vals(int64_t n) {
  return xalloc(sizeof(double) * (size_t)(n ? n : 1));
}

/* A constant value no ONNX name holds (a weight once a call reads it). */
static Val *const_tmp(const char *name, int nd, const int64_t *shape, double *c) {
  Val *v = xalloc(sizeof *v);
  v->name = name;
  v->dtype = OT_FLOAT;
  v->ndim = nd;
  memcpy(v->shape, shape, sizeof(int64_t) * (size_t)nd);
  v->c = c;
  return v;
}

/* `Y[i0, ..] = EXPR` (or `+=` with REDUCE) of shape OS over C's parameters, called into a
 * new tensor (OUT: an output of the node instead, when not NULL). */
static Val *emit(Imp *I, ImpCall *c, const char *base, const char *hint, int nd, const int64_t *os, const char *stmt, Val *out) {
  Val *o = out ? out : net_tmp(I, hint, nd, os);
  imp_call_kernel(I, c, base, o, stmt);
  return o;
}

/* Is V a constant of zeros (an initial state exporters write out)? */
static bool all_zero(const Val *v) {
  if (!v->c) return false;
  for (int64_t i = 0, n = val_numel(v); i < n; i++)
    if (v->c[i] != 0) return false;
  return true;
}

/* ---- the products ------------------------------------------------------------------------ */

/* A [M, K] times rows J0..J0+N of W[d] ([D, rows, K]) transposed: [M, N]. A constant W
 * becomes its [K, N] transpose once (a weight `dense` packs); a run-time one is read in
 * place by a kernel. */
static Val *product(Imp *I, Rnn *R, Val *a, Val *w, int64_t d, int64_t j0, int64_t n, const char *hint) {
  int64_t m = a->shape[0], k = w->shape[2], rows = w->shape[1], os[2] = {m, n};
  if (w->c) {
    Val *t = NULL;
    for (int i = 0; i < R->ntransposed && !t; i++)
      if (R->transposed[i].w == w && R->transposed[i].d == d && R->transposed[i].j0 == j0 && R->transposed[i].n == n)
        t = R->transposed[i].t;
    if (!t) {
      double *c = arena_vals(k * n);
      for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++) c[kk * n + j] = w->c[(d * rows + j0 + j) * k + kk];
      int64_t ts[2] = {k, n};
      t = const_tmp(xprintf("%s_t%lld_%lld", w->name, (long long)d, (long long)j0), 2, ts, c);
      if (R->ntransposed < TRANSPOSED_MAX)
        R->transposed[R->ntransposed++] = (Transposed){.w = w, .t = t, .d = d, .j0 = j0, .n = n};
    }
    Val *o = net_tmp(I, hint, 2, os);
    const char *na = imp_tensor(I, a);
    imp_call(I, o->tex, "dense", xprintf("%s, %s", na, imp_tensor(I, t)));
    return o;
  }
  ImpCall c = {0};
  imp_call_arg(I, &c, "A", a);
  imp_call_arg(I, &c, "W", w);
  return emit(I, &c, xprintf("%s_matmul", imp_lower(R->op)), hint, 2, os,
              xprintf("Y[i0, i1] += A[i0, k] * W[%lld, i1 + %lld, k] where k in 0..%lld", (long long)d, (long long)j0,
                      (long long)k),
              NULL);
}

/* The projection, biased: [T * B, gates * H]. */
static Val *projection_biased(Imp *I, Rnn *R, Val *x2, int64_t d) {
  int64_t gh = R->gates * R->H;
  Val *xw = product(I, R, x2, R->w, d, 0, gh, xprintf("%s_xw%lld", R->prefix, (long long)d));
  if (!R->b) return xw;
  /* Wb + Rb, except GRU's Rbh under linear_before_reset (added inside r's product) */
  int64_t rb_end = R->lbr ? 2 * R->H : gh, os[2] = {R->T * R->B, gh};
  if (R->b->c) {
    double *c = arena_vals(gh);
    for (int64_t j = 0; j < gh; j++) c[j] = (float)(R->b->c[d * 2 * gh + j] + (j < rb_end ? R->b->c[d * 2 * gh + gh + j] : 0));
    Val *bv = const_tmp(xprintf("%s_bias%lld", R->b->name, (long long)d), 1, &gh, c);
    Val *o = net_tmp(I, xprintf("%s_xwb%lld", R->prefix, (long long)d), 2, os);
    const char *nx = imp_tensor(I, xw);
    imp_call(I, o->tex, "bias_add_2d", xprintf("%s, %s", nx, imp_tensor(I, bv)));
    return o;
  }
  ImpCall c = {0};
  imp_call_arg(I, &c, "X", xw);
  imp_call_arg(I, &c, "Bv", R->b);
  char *rb = xprintf("Bv[%lld, i1 + %lld]", (long long)d, (long long)gh);
  if (rb_end < gh) rb = xprintf("(i1 < %lld ? %s : 0.0)", (long long)rb_end, rb);
  return emit(I, &c, "rnn_bias", xprintf("%s_xwb%lld", R->prefix, (long long)d), 2, os,
              xprintf("Y[i0, i1] = X[i0, i1] + Bv[%lld, i1] + %s", (long long)d, rb), NULL);
}

/* XW with one more column, the mask of sequence_lens: 1 where batch row b runs step s (row
 * s * B + b), else 0. */
static Val *mask_column(Imp *I, Rnn *R, Val *xw) {
  int64_t gh = xw->shape[1], os[2] = {xw->shape[0], gh + 1};
  ImpCall c = {0};
  imp_call_arg(I, &c, "X", xw);
  imp_call_arg(I, &c, "L", R->lens);
  return emit(I, &c, "rnn_mask", xprintf("%s_xwm", R->prefix), 2, os,
              xprintf("Y[i0, i1] = i1 < %lld ? X[i0, i1] : (f32(i0 / %lld) < f32(L[i0 %% %lld]) ? 1.0 : 0.0)", (long long)gh,
                      (long long)R->B, (long long)R->B),
              NULL);
}

/* The projection of every step's input: X's rows in step order, [T * B, In], times W[d]
 * transposed, plus the biases the cells do not add themselves: [T * B, gates * H] (and
 * the mask column of sequence_lens after them). */
static Val *projection(Imp *I, Rnn *R, Val *x2, int64_t d) {
  Val *xw = projection_biased(I, R, x2, d);
  return R->lens ? mask_column(I, R, xw) : xw;
}

/* ---- slices and stacks ------------------------------------------------------------------- */

/* Rows OFF..OFF+N of the 2-D X. */
static Val *rows(Imp *I, Rnn *R, Val *x, int64_t off, int64_t n) {
  int64_t os[2] = {n, x->shape[1]};
  ImpCall c = {0};
  imp_call_arg(I, &c, "X", x);
  return emit(I, &c, "rnn_rows", xprintf("%s_rows", R->prefix), 2, os,
              off ? xprintf("Y[i0, i1] = X[i0 + %lld, i1]", (long long)off) : xstrdup("Y[i0, i1] = X[i0, i1]"), NULL);
}

/* A and B ([m * B, H] each: the outputs of consecutive runs of steps, A's first)
 * stacked. */
static Val *stack2(Imp *I, Rnn *R, Val *a, Val *b) {
  int64_t split = a->shape[0], os[2] = {a->shape[0] + b->shape[0], a->shape[1]};
  ImpCall c = {0};
  imp_call_arg(I, &c, "A", a);
  imp_call_arg(I, &c, "Bp", b);
  return emit(I, &c, "rnn_stack", xprintf("%s_stack", R->prefix), 2, os,
              xprintf("Y[i0, i1] = i0 < %lld ? A[i0, i1] : (i0 >= %lld ? Bp[i0 - %lld, i1] : 0.0)", (long long)split,
                      (long long)split, (long long)split),
              NULL);
}

/* Direction D's [B, H] of an initial state V ([D, B, H], or [B, D, H] batch first):
 * folded when V is a constant (named after V and D: `initial_h_d1`). */
static Val *direction_of(Imp *I, Rnn *R, Val *v, int64_t d) {
  int64_t os[2] = {R->B, R->H};
  if (v->c) {
    double *c = arena_vals(R->B * R->H);
    for (int64_t b = 0; b < R->B; b++)
      for (int64_t h = 0; h < R->H; h++)
        c[b * R->H + h] = v->c[(R->batch_first ? (b * R->D + d) : (d * R->B + b)) * R->H + h];
    return const_tmp(xprintf("%s_d%lld", v->name, (long long)d), 2, os, c);
  }
  ImpCall c = {0};
  imp_call_arg(I, &c, "S", v);
  return emit(I, &c, "rnn_state", xprintf("%s_d%lld", v->name, (long long)d), 2, os,
              R->batch_first ? xprintf("Y[i0, i1] = S[i0, %lld, i1]", (long long)d)
                             : xprintf("Y[i0, i1] = S[%lld, i0, i1]", (long long)d),
              NULL);
}

/* ---- the cells --------------------------------------------------------------------------- */

/* Activation K of direction D applied to the text V, clipped first when clip is set and
 * CLIP (the gates' inputs are, LSTM's cell state before h is not: onnxruntime's reading). */
static char *act(const Rnn *R, int64_t d, int k, const char *v, bool clip) {
  const Act *a = &R->act[d * R->nact + k];
  if (clip && R->clip > 0) v = xprintf("min(max(%s, %s), %s)", v, imp_flit(-R->clip), imp_flit(R->clip));
  const char *n = a->name, *al = imp_flit(a->alpha), *be = imp_flit(a->beta);
  char *e;
  if (!strcmp(n, "sigmoid")) e = xprintf("sigmoid(%s)", v);
  else if (!strcmp(n, "tanh")) e = xprintf("tanh(%s)", v);
  else if (!strcmp(n, "relu")) e = xprintf("max(%s, 0.0)", v);
  else if (!strcmp(n, "affine")) e = xprintf("%s * (%s) + %s", al, v, be);
  else if (!strcmp(n, "leakyrelu")) e = xprintf("(%s) >= 0.0 ? (%s) : %s * (%s)", v, v, al, v);
  else if (!strcmp(n, "thresholdedrelu")) e = xprintf("(%s) > %s ? (%s) : 0.0", v, al, v);
  else if (!strcmp(n, "scaledtanh")) e = xprintf("%s * tanh(%s * (%s))", al, be, v);
  else if (!strcmp(n, "hardsigmoid")) e = xprintf("max(0.0, min(1.0, %s * (%s) + %s))", al, v, be);
  else if (!strcmp(n, "elu")) e = xprintf("(%s) >= 0.0 ? (%s) : %s * expm1(%s)", v, v, al, v);
  else if (!strcmp(n, "softsign")) e = xprintf("(%s) / (1.0 + abs(%s))", v, v);
  else e = xprintf("log1p(exp(%s))", v); /* softplus */
  return xprintf("(%s)", e);
}

/* One step of one direction: XS holds the projection's rows of a run of 1 to 3 steps
 * (walk_steps), this one's from row XS_ROW. */
typedef struct {
  Val *xs, *hp, *cp; /* hp, cp NULL: zero states (the first step without one) */
  int64_t d, s, xs_row;
} Step;

/* The step's projection at batch row i0, column text COL. */
static char *xs_at(const Step *st, const char *col) {
  return st->xs_row ? xprintf("XS[i0 + %lld, %s]", (long long)st->xs_row, col) : xprintf("XS[i0, %s]", col);
}

/* The text of gate G's pre-activation at [i0, i1]: the projection's XS and, when there
 * is a previous state, the recurrent product's GR (NULL: none). */
static char *gate(const Rnn *R, const Step *st, int g, bool gr) {
  int64_t off = g * R->H;
  char *col = off ? xprintf("i1 + %lld", (long long)off) : xstrdup("i1");
  return gr ? xprintf("%s + GR[i0, %s]", xs_at(st, col), col) : xs_at(st, col);
}

/* NEW where the step runs for batch row i0 (the mask column of XS), else OLD ("0.0"
 * without a state). */
static char *masked(const Rnn *R, const Step *st, const char *nw, const char *old) {
  return R->lens ? xprintf("%s != 0.0 ? %s : %s", xs_at(st, xprintf("%lld", (long long)(R->gates * R->H))), nw, old)
                 : xstrdup(nw);
}

/* One step of direction ST->d: the next hidden state (and, for LSTM, cell state *C). */
static Val *cell(Imp *I, Rnn *R, const Step *st, Val **c_out) {
  int64_t os[2] = {R->B, R->H}, d = st->d;
  const char *hint = xprintf("%s_h%lld_%lld", R->prefix, (long long)d, (long long)st->s);
  const char *hold = st->hp ? "HP[i0, i1]" : "0.0";
  Val *gr = NULL;
  ImpCall c = {0};
  if (!strcmp(R->op, "RNN") || !strcmp(R->op, "LSTM")) {
    if (st->hp) gr = product(I, R, st->hp, R->r, d, 0, R->gates * R->H, xprintf("%s_gr", R->prefix));
    if (!strcmp(R->op, "RNN")) {
      imp_call_arg(I, &c, "XS", st->xs);
      if (gr) imp_call_arg(I, &c, "GR", gr);
      if (st->hp && R->lens) imp_call_arg(I, &c, "HP", st->hp);
      return emit(I, &c, "rnn_cell", hint, 2, os, xprintf("Y[i0, i1] = %s", masked(R, st, act(R, d, 0, gate(R, st, 0, gr), true), hold)), NULL);
    }
    /* LSTM: C = f * C' + i * g(c~), then H = o * h(C), o's peephole reading the new C */
    const char *cp = st->cp ? "CP[i0, i1]" : "0.0";
    char *pi = gate(R, st, 0, gr), *po = gate(R, st, 1, gr), *pf = gate(R, st, 2, gr);
    if (R->p && st->cp) {
      pi = xprintf("%s + P[%lld, i1] * CP[i0, i1]", pi, (long long)d);
      pf = xprintf("%s + P[%lld, i1 + %lld] * CP[i0, i1]", pf, (long long)d, (long long)(2 * R->H));
    }
    if (R->p) po = xprintf("%s + P[%lld, i1 + %lld] * C[i0, i1]", po, (long long)d, (long long)R->H);
    char *i = act(R, d, 0, pi, true), *f = R->input_forget ? xprintf("(1.0 - %s)", i) : act(R, d, 0, pf, true);
    char *cnew = st->cp ? xprintf("%s * CP[i0, i1] + %s * %s", f, i, act(R, d, 1, gate(R, st, 3, gr), true))
                        : xprintf("%s * %s", i, act(R, d, 1, gate(R, st, 3, gr), true));
    imp_call_arg(I, &c, "XS", st->xs);
    if (gr) imp_call_arg(I, &c, "GR", gr);
    if (st->cp) imp_call_arg(I, &c, "CP", st->cp);
    if (R->p && st->cp) imp_call_arg(I, &c, "P", R->p);
    Val *cv = emit(I, &c, "lstm_c", xprintf("%s_c%lld_%lld", R->prefix, (long long)d, (long long)st->s), 2, os,
                   xprintf("Y[i0, i1] = %s", masked(R, st, cnew, cp)), NULL);
    *c_out = cv;
    ImpCall h = {0};
    imp_call_arg(I, &h, "XS", st->xs);
    if (gr) imp_call_arg(I, &h, "GR", gr);
    imp_call_arg(I, &h, "C", cv);
    if (R->p) imp_call_arg(I, &h, "P", R->p);
    if (st->hp && R->lens) imp_call_arg(I, &h, "HP", st->hp);
    char *hnew = xprintf("%s * %s", act(R, d, 0, po, true), act(R, d, 2, "C[i0, i1]", false));
    return emit(I, &h, "lstm_h", hint, 2, os, xprintf("Y[i0, i1] = %s", masked(R, st, hnew, hold)), NULL);
  }
  /* GRU: z and r, then h~ with r applied after R's product (linear_before_reset) or
   * before it, then H = (1 - z) h~ + z H' */
  char *z = act(R, d, 0, gate(R, st, 0, st->hp != NULL), true), *hc;
  Val *gh = NULL;
  if (st->hp) gr = product(I, R, st->hp, R->r, d, 0, R->lbr ? 3 * R->H : 2 * R->H, xprintf("%s_gr", R->prefix));
  if (R->lbr) {
    char *rbh = xstrdup("");
    if (R->b) rbh = xprintf(" + Bv[%lld, i1 + %lld]", (long long)d, (long long)(5 * R->H));
    if (R->b && R->b->c) rbh = xstrdup(" + RB[i1]");
    char *xh = xs_at(st, xprintf("i1 + %lld", (long long)(2 * R->H)));
    hc = st->hp ? xprintf("%s + %s * (GR[i0, i1 + %lld]%s)", xh, act(R, d, 0, gate(R, st, 1, true), true), (long long)(2 * R->H), rbh)
                : xprintf("%s + %s * (0.0%s)", xh, act(R, d, 0, gate(R, st, 1, false), true), rbh);
  } else {
    if (st->hp) {
      ImpCall rc = {0};
      imp_call_arg(I, &rc, "XS", st->xs);
      imp_call_arg(I, &rc, "GR", gr);
      imp_call_arg(I, &rc, "HP", st->hp);
      Val *rh = emit(I, &rc, "gru_reset", xprintf("%s_rh", R->prefix), 2, os,
                     xprintf("Y[i0, i1] = %s * HP[i0, i1]", act(R, d, 0, gate(R, st, 1, true), true)), NULL);
      gh = product(I, R, rh, R->r, d, 2 * R->H, R->H, xprintf("%s_gh", R->prefix));
    }
    char *xh = xs_at(st, xprintf("i1 + %lld", (long long)(2 * R->H)));
    hc = gh ? xprintf("%s + GH[i0, i1]", xh) : xh;
  }
  hc = act(R, d, 1, hc, true);
  imp_call_arg(I, &c, "XS", st->xs);
  if (gr) imp_call_arg(I, &c, "GR", gr);
  if (gh) imp_call_arg(I, &c, "GH", gh);
  if (st->hp) imp_call_arg(I, &c, "HP", st->hp);
  if (R->lbr && R->b) {
    if (R->b->c) {
      double *v = arena_vals(R->H);
      for (int64_t j = 0; j < R->H; j++) v[j] = R->b->c[d * 6 * R->H + 5 * R->H + j];
      imp_call_arg(I, &c, "RB", const_tmp(xprintf("%s_rbh%lld", R->b->name, (long long)d), 1, &R->H, v));
    } else {
      imp_call_arg(I, &c, "Bv", R->b);
    }
  }
  char *hnew = st->hp ? xprintf("(1.0 - %s) * %s + %s * HP[i0, i1]", z, hc, z) : xprintf("(1.0 - %s) * %s", z, hc);
  return emit(I, &c, "gru_cell", hint, 2, os, xprintf("Y[i0, i1] = %s", masked(R, st, hnew, hold)), NULL);
}

/* ---- a direction's walk over the steps ---------------------------------------------------- */

/* One direction's pass: its steps in order (reverse: from the last), each step's rows of
 * the projection cut out by halvings on the way down a tree of ranges, depth first, and
 * its outputs stacked as they come, runs of equal length paired (a binary counter). So a
 * step's slice is made just before it and every value lives O(log T) steps: with all
 * slices made first, an unrolled sequence of 1000 steps kept 1000 of them alive and the
 * arena's placement, quadratic in the live tensors, took seconds. */
typedef struct {
  Rnn *R;
  Step st;
  bool rev, want_y;
  Val *runs[64];     /* the stacked outputs of runs of steps, oldest first */
  int64_t len[64];   /* their lengths in steps */
  int nruns;
} Walk;

/* Stack the newest two runs, in step order. */
static void merge_runs(Imp *I, Walk *w) {
  Val *older = w->runs[w->nruns - 2], *newer = w->runs[w->nruns - 1];
  w->runs[w->nruns - 2] = w->rev ? stack2(I, w->R, newer, older) : stack2(I, w->R, older, newer);
  w->len[w->nruns - 2] += w->len[w->nruns - 1];
  w->nruns--;
}

static void run_step(Imp *I, Walk *w, int64_t s, Val *xs, int64_t row) {
  Rnn *R = w->R;
  w->st.s = s;
  w->st.xs = xs;
  w->st.xs_row = row;
  Val *c = NULL, *h = cell(I, R, &w->st, &c);
  w->st.hp = h;
  w->st.cp = c;
  if (!w->want_y) return;
  Val *y = h;
  if (R->lens) { /* the output row: zero past the length */
    ImpCall mc = {0};
    imp_call_arg(I, &mc, "HS", h);
    imp_call_arg(I, &mc, "XS", xs);
    int64_t os[2] = {R->B, R->H};
    y = emit(I, &mc, "rnn_out", xprintf("%s_y%lld_%lld", R->prefix, (long long)w->st.d, (long long)s), 2, os,
             xprintf("Y[i0, i1] = %s", masked(R, &w->st, "HS[i0, i1]", "0.0")), NULL);
  }
  w->runs[w->nruns] = y;
  w->len[w->nruns++] = 1;
  while (w->nruns >= 2 && w->len[w->nruns - 1] == w->len[w->nruns - 2]) merge_runs(I, w);
}

/* Steps T0..T0+N, whose projection is XW ([N * B, cols], rows in step order). A run of
 * at most 3 steps is not cut further: each step's kernels read their rows of it (a few
 * kernel variants by offset, one slice call a step fewer). */
static void walk_steps(Imp *I, Walk *w, Val *xw, int64_t t0, int64_t n) {
  if (n <= 3) {
    for (int64_t k = 0; k < n; k++) {
      int64_t i = w->rev ? n - 1 - k : k;
      run_step(I, w, t0 + i, xw, i * w->R->B);
    }
    return;
  }
  int64_t n1 = n / 2, b = w->R->B;
  if (!w->rev) {
    walk_steps(I, w, rows(I, w->R, xw, 0, n1 * b), t0, n1);
    walk_steps(I, w, rows(I, w->R, xw, n1 * b, (n - n1) * b), t0 + n1, n - n1);
  } else {
    walk_steps(I, w, rows(I, w->R, xw, n1 * b, (n - n1) * b), t0 + n1, n - n1);
    walk_steps(I, w, rows(I, w->R, xw, 0, n1 * b), t0, n1);
  }
}

/* ---- the node ---------------------------------------------------------------------------- */

/* The activations: attribute `activations` (names), activation_alpha / _beta consumed in
 * order by the functions that take them; the operator's defaults otherwise. */
static bool read_acts(Imp *I, Rnn *R) {
  static const char *const defaults[3][3] = {{"tanh"}, {"sigmoid", "tanh"}, {"sigmoid", "tanh", "tanh"}};
  R->nact = R->gates == 1 ? 1 : R->gates == 3 ? 2 : 3;
  const Onnx__AttributeProto *names = imp_attr(I, "activations");
  double alphas[ACTS_MAX], betas[ACTS_MAX];
  int na = 0, nb = 0, ia = 0, ib = 0;
  const Onnx__AttributeProto *al = imp_attr(I, "activation_alpha"), *be = imp_attr(I, "activation_beta");
  for (size_t i = 0; al && i < al->n_floats && na < ACTS_MAX; i++) alphas[na++] = al->floats[i];
  for (size_t i = 0; be && i < be->n_floats && nb < ACTS_MAX; i++) betas[nb++] = be->floats[i];
  int want = (int)(R->nact * R->D);
  if (names && (int)names->n_strings != want)
    return imp_error(I, "%zu activations (%d for %lld direction%s)", names->n_strings, want, (long long)R->D, R->D > 1 ? "s" : "");
  for (int k = 0; k < want; k++) {
    Act *a = &R->act[k];
    const char *n = defaults[R->nact - 1][k % R->nact];
    if (names) {
      const ProtobufCBinaryData *s = &names->strings[k];
      if (s->len >= sizeof a->name) return imp_unsupported(I, "activation '%.*s'", (int)s->len, (const char *)s->data);
      char buf[sizeof a->name];
      for (size_t j = 0; j < s->len; j++) buf[j] = (char)(s->data[j] >= 'A' && s->data[j] <= 'Z' ? s->data[j] - 'A' + 'a' : s->data[j]);
      buf[s->len] = 0;
      n = xstrdup(buf);
    }
    /* which take alpha and beta, and their defaults; onnxruntime takes 0 for a missing
       alpha or beta of Affine, ThresholdedRelu and ScaledTanh where ONNX's operators of
       those names take 1: refused rather than guessed */
    static const struct { const char *n; bool alpha, beta, guessed; double da, db; } known[] = {
        {"sigmoid", 0, 0, 0, 0, 0},       {"tanh", 0, 0, 0, 0, 0},          {"relu", 0, 0, 0, 0, 0},
        {"affine", 1, 1, 1, 0, 0},        {"leakyrelu", 1, 0, 0, 0.01, 0},  {"thresholdedrelu", 1, 0, 1, 0, 0},
        {"scaledtanh", 1, 1, 1, 0, 0},    {"hardsigmoid", 1, 1, 0, 0.2, 0.5}, {"elu", 1, 0, 0, 1, 0},
        {"softsign", 0, 0, 0, 0, 0},      {"softplus", 0, 0, 0, 0, 0}};
    size_t j = 0;
    while (j < sizeof known / sizeof known[0] && strcmp(known[j].n, n)) j++;
    if (j == sizeof known / sizeof known[0]) return imp_unsupported(I, "activation '%s'", n);
    if (known[j].guessed && ((known[j].alpha && ia == na) || (known[j].beta && ib == nb)))
      return imp_unsupported(I, "activation '%s' without its activation_alpha%s", n, known[j].beta ? " and activation_beta" : "");
    snprintf(a->name, sizeof a->name, "%s", n);
    a->alpha = known[j].alpha && ia < na ? alphas[ia++] : known[j].da;
    a->beta = known[j].beta && ib < nb ? betas[ib++] : known[j].db;
  }
  return true;
}

/* The inputs' shapes against X [T, B, In] (or [B, T, In]), D directions and H. */
static bool check_shapes(Imp *I, Rnn *R) {
  int64_t gh = R->gates * R->H;
  const struct { Val *v; const char *what; int nd; int64_t s[3]; } want[] = {
      {R->w, "W", 3, {R->D, gh, R->In}},
      {R->r, "R", 3, {R->D, gh, R->H}},
      {R->b, "B", 2, {R->D, 2 * gh}},
      {R->h0, "initial_h", 3, {R->batch_first ? R->B : R->D, R->batch_first ? R->D : R->B, R->H}},
      {R->c0, "initial_c", 3, {R->batch_first ? R->B : R->D, R->batch_first ? R->D : R->B, R->H}},
      {R->p, "P", 2, {R->D, 3 * R->H}},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const Val *v = want[i].v;
    if (!v) continue;
    bool ok = v->ndim == want[i].nd;
    for (int d = 0; ok && d < v->ndim; d++) ok = v->shape[d] == want[i].s[d];
    if (!ok) {
      Val tmp = {.ndim = want[i].nd};
      memcpy(tmp.shape, want[i].s, sizeof want[i].s);
      return imp_error(I, "%s is %s, expected %s", want[i].what, imp_ty(v), imp_ty(&tmp));
    }
  }
  return true;
}

/* sequence_lens: NULL when absent or every row runs T steps; a constant's lengths outside
 * 1..T refused (an empty sequence's final state is zero in onnxruntime, its initial state
 * by the spec's equations: not guessed); at run time (int32 or int64: a library's input, a
 * batch of padded sequences) a length of 0 or less keeps the initial state, one beyond T
 * runs every step. */
static bool read_lens(Imp *I, Rnn *R) {
  Val *l = imp_in(I, 4);
  if (!l) return true;
  if (l->ndim != 1 || l->shape[0] != R->B) return imp_error(I, "sequence_lens is %s, expected [%lld]", imp_ty(l), (long long)R->B);
  if (!l->c) {
    if (!imp_run_time_int(l) && !l->fint)
      return imp_unsupported(I, "sequence_lens of element type %s (int32)", imp_type_name(l->dtype));
    R->lens = l;
    return true;
  }
  bool all = true;
  for (int64_t b = 0; b < R->B; b++) {
    if (l->c[b] == 0) return imp_unsupported(I, "sequence_lens[%lld] is 0 (an empty sequence)", (long long)b);
    if (l->c[b] < 0 || l->c[b] > R->T)
      return imp_error(I, "sequence_lens[%lld] is %g, outside 1..%lld", (long long)b, l->c[b], (long long)R->T);
    all &= l->c[b] == R->T;
  }
  if (all) return true;
  double *c = arena_vals(R->B);
  memcpy(c, l->c, sizeof(double) * (size_t)R->B);
  R->lens = const_tmp(xprintf("%s_lens", l->name), 1, &R->B, c);
  return true;
}

/* Output K of the node ([D, B, H] or [B, D, H]) from each direction's last state. */
static void final_state(Imp *I, Rnn *R, int k, Val **last) {
  if ((size_t)k >= I->node->n_output || !*I->node->output[k]) return;
  int64_t os[3] = {R->batch_first ? R->B : R->D, R->batch_first ? R->D : R->B, R->H};
  Val *o = imp_net_out(I, k, 3, os);
  ImpCall c = {0};
  char *e = xstrdup("");
  for (int64_t d = R->D - 1; d >= 0; d--) {
    imp_call_arg(I, &c, d ? "S1" : "S0", last[d]);
    char *at = R->batch_first ? xprintf("S%lld[i0, i2]", (long long)d) : xprintf("S%lld[i1, i2]", (long long)d);
    e = d == R->D - 1 ? at : xprintf("%s == %lld ? %s : %s", R->batch_first ? "i1" : "i0", (long long)d, at, e);
  }
  emit(I, &c, "rnn_state_out", NULL, 3, os, xprintf("Y[i0, i1, i2] = %s", e), o);
}

static bool rnn(Imp *I, const char *op) {
  Rnn R = {.op = op, .gates = !strcmp(op, "RNN") ? 1 : !strcmp(op, "GRU") ? 3 : 4};
  bool lstm = R.gates == 4;
  const char *known = lstm ? "activation_alpha,activation_beta,activations,clip,direction,hidden_size,input_forget,layout"
                      : R.gates == 3 ? "activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout,linear_before_reset"
                                     : "activation_alpha,activation_beta,activations,clip,direction,hidden_size,layout";
  if (!imp_attrs_known(I, known)) return false;
  if ((int)I->node->n_output > (lstm ? 3 : 2)) return imp_error(I, "%zu outputs (%d)", I->node->n_output, lstm ? 3 : 2);
  if (imp_nin(I) > (lstm ? 8 : 6)) return imp_error(I, "%d inputs (%d)", imp_nin(I), lstm ? 8 : 6);
  if (!(R.x = imp_float_in(I, 0)) || !(R.w = imp_float_in(I, 1)) || !(R.r = imp_float_in(I, 2))) return false;
  if (imp_in(I, 3) && !(R.b = imp_float_in(I, 3))) return false;
  if (imp_in(I, 5) && !(R.h0 = imp_float_in(I, 5))) return false;
  if (lstm && imp_in(I, 6) && !(R.c0 = imp_float_in(I, 6))) return false;
  if (lstm && imp_in(I, 7) && !(R.p = imp_float_in(I, 7))) return false;
  if (R.x->ndim != 3) return imp_error(I, "X is %s, expected rank 3", imp_ty(R.x));
  if (R.w->ndim != 3 || R.r->ndim != 3) return imp_error(I, "W and R must have rank 3");
  R.batch_first = imp_attr_i(I, "layout", 0) != 0;
  R.T = R.x->shape[R.batch_first ? 1 : 0];
  R.B = R.x->shape[R.batch_first ? 0 : 1];
  R.In = R.x->shape[2];
  R.H = imp_attr_i(I, "hidden_size", R.r->shape[2]);
  if (R.H < 1 || R.H != R.r->shape[2]) /* R is [D, gates x H, H] (and H * gates must not overflow) */
    return imp_error(I, "hidden_size %lld, but R is %s", (long long)R.H, imp_ty(R.r));
  const char *dir = imp_attr_s(I, "direction", "forward");
  if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
    return imp_error(I, "direction '%s' (forward, reverse or bidirectional)", dir);
  bool reverse = !strcmp(dir, "reverse");
  R.D = !strcmp(dir, "bidirectional") ? 2 : 1;
  R.lbr = imp_attr_i(I, "linear_before_reset", 0) != 0;
  R.input_forget = imp_attr_i(I, "input_forget", 0) != 0;
  R.clip = imp_attr_f(I, "clip", 0);
  if (imp_attr(I, "clip") && !(R.clip > 0)) return imp_error(I, "clip %g (a positive threshold)", R.clip);
  if (!check_shapes(I, &R) || !read_acts(I, &R) || !read_lens(I, &R)) return false;
  int64_t shape2[2] = {R.T * R.B, R.In};
  if (!imp_shape_ok(I, shape2, 2)) return false;
  const char *o0 = I->node->n_output && *I->node->output[0] ? I->node->output[0] : NULL;
  R.prefix = imp_lower(xprintf("%s_%s", op, o0 ? o0 : I->node->n_output > 1 ? I->node->output[1] : "out"));

  /* X's rows in step order: [T * B, In] */
  ImpCall xc = {0};
  imp_call_arg(I, &xc, "X", R.x);
  Val *x2 = emit(I, &xc, "rnn_steps", xprintf("%s_x", R.prefix), 2, shape2,
                 R.batch_first ? xprintf("Y[i0, i1] = X[i0 %% %lld, i0 / %lld, i1]", (long long)R.B, (long long)R.B)
                               : xprintf("Y[i0, i1] = X[i0 / %lld, i0 %% %lld, i1]", (long long)R.B, (long long)R.B),
                 NULL);
  bool want_y = o0 != NULL;
  Val *last_h[2], *last_c[2], *sd[2];
  for (int64_t d = 0; d < R.D; d++) {
    Walk w = {.R = &R, .st = {.d = d}, .rev = reverse || d == 1, .want_y = want_y};
    w.st.hp = R.h0 && !all_zero(R.h0) ? direction_of(I, &R, R.h0, d) : NULL;
    w.st.cp = R.c0 && !all_zero(R.c0) ? direction_of(I, &R, R.c0, d) : NULL;
    walk_steps(I, &w, projection(I, &R, x2, d), 0, R.T);
    while (w.nruns > 1) merge_runs(I, &w);
    sd[d] = w.runs[0];
    last_h[d] = w.st.hp;
    last_c[d] = w.st.cp;
  }
  if (want_y) { /* Y: [T, D, B, H] or [B, T, D, H] */
    int64_t os[4] = {R.T, R.D, R.B, R.H};
    if (R.batch_first) os[0] = R.B, os[1] = R.T, os[2] = R.D;
    Val *o = imp_net_out(I, 0, 4, os);
    ImpCall c = {0};
    char *e = xstrdup("");
    const char *ti = R.batch_first ? "i1" : "i0", *bi = R.batch_first ? "i0" : "i2", *di = R.batch_first ? "i2" : "i1";
    for (int64_t d = R.D - 1; d >= 0; d--) {
      imp_call_arg(I, &c, d ? "S1" : "S0", sd[d]);
      char *at = xprintf("S%lld[%s * %lld + %s, i3]", (long long)d, ti, (long long)R.B, bi);
      e = d == R.D - 1 ? at : xprintf("%s == %lld ? %s : %s", di, (long long)d, at, e);
    }
    emit(I, &c, "rnn_y", NULL, 4, os, xprintf("Y[i0, i1, i2, i3] = %s", e), o);
  }
  final_state(I, &R, 1, last_h);
  if (lstm) final_state(I, &R, 2, last_c);
  return true;
}

int onnx_rnn_op(Imp *I, const char *op) {
  if (!strcmp(op, "RNN") || !strcmp(op, "GRU") || !strcmp(op, "LSTM")) return rnn(I, op);
  return -1;
}
