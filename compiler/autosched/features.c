/* features.c — a fixed-length feature vector of a lowered function, as Ansor's
 * feature.cc: per innermost store, arithmetic counts, loop annotations and extents,
 * thread and block extents, and per buffer bytes, unique bytes (footprints at the
 * innermost loop levels), strides and reuse. The vector of the store with the most work
 * is used, plus totals over all stores.
 *
 * Layout (all counts as log2(1 + x)):
 *   0..27   the store: work, loops, annotations, GPU extents, allocations, totals
 *   28..77  five buffer slots of BUF_FEATS, by bytes accessed (largest first)
 *   78..84  GPU, over the whole function (0 on CPUs): shared bytes per block, threads per
 *           block, vthreads, unrolled iterations, widest contiguous vector access (bytes),
 *           flops per byte stored into shared memory (reuse of the tiles), and the worst
 *           shared-memory bank conflict (bank_degree: the first warp's addresses, row
 *           padding of storage_align included)
 *   85      GPU: the widest cross-thread reduction (threads of a block that combine into one
 *           element: a reduction store to global memory inside thread loops whose variables
 *           its indices do not use; the printer's tree in shared memory), 0 when none
 *   86      GPU: 1 when a loop's shared tiles are double-buffered (the barrier that the
 *           double_buffer pass writes between a trip's two halves), 2 when their copies are
 *           also staged through registers (double_buffer(S, local): stores marked
 *           prefetch), else 0
 */
#include "autosched.h"

#include <math.h>
#include <string.h>

#define MAX_DEPTH 32
#define MAX_ACC 16
#define NSLOTS 5
#define BUF_FEATS 10
#define GEN_FEATS 28
#define GPU_FEATS 78 /* first of the GPU features */

typedef struct Loop {
  IrVar *var;
  int64_t extent;
  ForKind kind;
} Loop;

/* The walk's state: the loops and guards around the current statement. */
typedef struct Walk {
  Loop loops[MAX_DEPTH];
  int depth, guards;
  double local_bytes, shared_bytes;
  double best_work, total_flops, total_bytes;
  int nstores;
  float best[FEAT_N];
  /* GPU, maxima over the function: shared bytes live at once, threads per block, vthreads,
   * unrolled iterations, vector bytes, bank conflict degree; bytes stored into shared. */
  double max_shared, max_threads, max_vthreads, max_unroll, max_vec_bytes, max_bank, max_xred;
  bool double_buffered, staged;
  double shared_stored;
} Walk;

typedef struct Access {
  Buffer *buf;
  Expr **idx;
  bool write;
} Access;

static float lg(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

/* Loop var CTX is 1, every other var (and any load) 0. */
static bool unit_at(const Expr *e, void *ctx, int64_t *out) {
  *out = e->kind == E_VAR && e->var == ctx;
  return true;
}

/* An integer value of E with loop var V = 1 (when V) and every other var 0 (the shared
 * evaluator: wrapping, floor division; 0 where it is undefined). */
static int64_t eval_at(const Expr *e, const IrVar *v) {
  int64_t x;
  return e && ir_eval_int(e, unit_at, (void *)v, &x) ? x : 0;
}

typedef struct VarVal {
  const IrVar *var;
  int64_t val;
} VarVal;

/* Loop var CTX->var is CTX->val, every other var (and any load) 0. */
static bool var_at(const Expr *e, void *ctx, int64_t *out) {
  const VarVal *vv = ctx;
  *out = e->kind == E_VAR && e->var == vv->var ? vv->val : 0;
  return true;
}

/* Float and integer operations of an expression; collects its loads into ACC. */
static void count_ops(const Expr *e, double *fops, double *iops, int *calls, Access *acc,
                      int *nacc) {
  if (!e) return;
  switch (e->kind) {
  case E_LOAD:
    if (*nacc < MAX_ACC) acc[(*nacc)++] = (Access){e->buf, e->args, false};
    for (int i = 0; i < e->nargs; i++) count_ops(e->args[i], fops, iops, calls, acc, nacc);
    return;
  case E_BIN:
  case E_UN:
  case E_CAST:
  case E_SELECT:
    if (dtype_is_float(e->dtype)) *fops += 1;
    else *iops += 1;
    break;
  case E_CALL:
    *fops += 1;
    *calls += 1;
    for (int i = 0; i < e->nargs; i++) count_ops(e->args[i], fops, iops, calls, acc, nacc);
    return;
  default: return;
  }
  count_ops(e->a, fops, iops, calls, acc, nacc);
  count_ops(e->b, fops, iops, calls, acc, nacc);
  count_ops(e->c, fops, iops, calls, acc, nacc);
}

static int64_t dim_extent(const Buffer *b, int d) {
  int64_t v;
  return ir_is_const(b->shape[d], &v) && v > 0 ? v : 1;
}

/* Footprint in bytes of access A when loops [from, depth) vary. */
static double footprint(const Walk *w, const Access *a, int from) {
  double fp = dtype_bytes(a->buf->dtype);
  for (int d = 0; d < a->buf->ndim; d++) {
    int64_t base = eval_at(a->idx[d], NULL), span = 1;
    for (int l = from; l < w->depth; l++) {
      int64_t c = eval_at(a->idx[d], w->loops[l].var) - base;
      span += (c < 0 ? -c : c) * (w->loops[l].extent - 1);
    }
    int64_t ext = dim_extent(a->buf, d);
    fp *= (double)(span < ext ? span : ext);
  }
  return fp;
}

/* The storage extent of dimension D of B: its extent, the last one with its rows'
 * padding (storage_align). */
static int64_t pitch_extent(const Buffer *b, int d) {
  return dim_extent(b, d) + (d == b->ndim - 1 ? b->pad : 0);
}

/* Elements between consecutive iterations of loop L in the flattened buffer. */
static int64_t stride_of(const Access *a, const IrVar *v) {
  int64_t s = 0, row = 1;
  for (int d = a->buf->ndim - 1; d >= 0; d--) {
    s += (eval_at(a->idx[d], v) - eval_at(a->idx[d], NULL)) * row;
    row *= pitch_extent(a->buf, d);
  }
  return s;
}

/* The shared-memory bank conflict degree of access A by the first warp of threadIdx.x
 * (TX, of extent N): the flat word address of each of the first min(N, 32) threads (every
 * other variable 0), the most distinct addresses that fall in one of the 32 banks of 4
 * bytes (1: conflict-free; threads on one address are a broadcast). Thread t reading row
 * (t / 8) * 4 of a tile with rows of 8 floats: 4 rows 32 words apart, degree 4; with rows
 * padded to 9 (storage_align), degree 1. */
static int64_t bank_degree(const Access *a, const IrVar *tx, int64_t n) {
  int64_t addr[32], words = dtype_bytes(a->buf->dtype) >= 4 ? dtype_bytes(a->buf->dtype) / 4 : 1, worst = 1;
  int m = n < 32 ? (int)n : 32;
  for (int t = 0; t < m; t++) {
    VarVal vv = {tx, t};
    int64_t off = 0, row = 1, x;
    for (int d = a->buf->ndim - 1; d >= 0; d--) {
      off += (ir_eval_int(a->idx[d], var_at, &vv, &x) ? x : 0) * row;
      row *= pitch_extent(a->buf, d);
    }
    addr[t] = off * words;
  }
  for (int b = 0; b < 32; b++) {
    int64_t distinct = 0;
    for (int t = 0; t < m; t++) {
      if (((addr[t] % 32) + 32) % 32 != b) continue;
      bool seen = false;
      for (int u = 0; u < t && !seen; u++) seen = addr[u] == addr[t];
      distinct += !seen;
    }
    if (distinct > worst) worst = distinct;
  }
  return worst;
}

/* The BUF_FEATS features of one buffer slot from its accesses ACC[0..n). */
static void buffer_feats(const Walk *w, Access *acc, int n, double iters, float *f) {
  double bytes = 0, uniq = 0, fp[4] = {0};
  int64_t stride = 0;
  bool write = false;
  for (int i = 0; i < n; i++) {
    bytes += iters * dtype_bytes(acc[i].buf->dtype);
    double u = footprint(w, &acc[i], 0);
    if (u > uniq) uniq = u;
    for (int k = 0; k < 4; k++) {
      int from = w->depth - 1 - k;
      double x = footprint(w, &acc[i], from < 0 ? 0 : from);
      if (x > fp[k]) fp[k] = x;
    }
    if (w->depth) stride = stride_of(&acc[i], w->loops[w->depth - 1].var);
    write |= acc[i].write;
  }
  f[0] = lg(bytes);
  f[1] = lg(uniq);
  f[2] = lg((double)(stride < 0 ? -stride : stride));
  f[3] = stride == 0;
  f[4] = lg(uniq > 0 ? bytes / uniq : 0);
  f[5] = write;
  for (int k = 0; k < 4; k++) f[6 + k] = lg(fp[k]);
}

/* Loop-annotation features of the current nest into F[3..18]. */
static void loop_feats(const Walk *w, float *f, double *par_iters) {
  double vec = 1, unr = 1, par = 1, blk = 1, thr = 1, vth = 1;
  int nunr = 0, npar = 0, first_par = -1;
  for (int l = 0; l < w->depth; l++) {
    double e = (double)w->loops[l].extent;
    switch (w->loops[l].kind) {
    case FOR_VECTORIZE: vec *= e; break;
    case FOR_UNROLL: unr *= e; nunr++; break;
    case FOR_PARALLEL: par *= e; npar++; if (first_par < 0) first_par = l; break;
    case FOR_BLOCK_X: case FOR_BLOCK_Y: case FOR_BLOCK_Z: blk *= e; break;
    case FOR_THREAD_X: case FOR_THREAD_Y: case FOR_THREAD_Z: thr *= e; break;
    case FOR_VTHREAD: vth *= e; break;
    default: break;
    }
  }
  const Loop *in = w->depth ? &w->loops[w->depth - 1] : NULL;
  f[3] = (float)w->depth;
  f[4] = lg(in ? (double)in->extent : 1);
  f[5] = in && in->kind == FOR_VECTORIZE;
  f[6] = lg(vec);
  f[7] = lg(unr);
  f[8] = (float)nunr;
  f[9] = lg(par);
  f[10] = (float)npar;
  f[11] = first_par < 0 ? -1 : (float)first_par / (float)(w->depth ? w->depth : 1);
  f[12] = lg(blk);
  f[13] = lg(thr);
  f[14] = lg(vth);
  f[15] = (float)w->guards;
  f[16] = lg(w->local_bytes);
  f[17] = lg(w->shared_bytes);
  f[18] = lg(w->depth ? (double)w->loops[0].extent : 1);
  f[25] = lg(w->depth > 1 ? (double)w->loops[w->depth - 2].extent : 1);
  *par_iters = 1;
  for (int l = first_par + 1; first_par >= 0 && l < w->depth; l++)
    *par_iters *= (double)w->loops[l].extent;
}


/* The threads that combine into the element of ACC[0], a store that updates itself (SELF)
 * in global memory: the product of the thread loops whose variables its indices do not use
 * (gpu_source's cross-thread reduction); 1 for any other store. */
static double xred_threads(const Walk *w, const Access *acc, int ndim, bool self) {
  if (!self || acc[0].buf->scope == SCOPE_LOCAL || acc[0].buf->scope == SCOPE_SHARED) return 1;
  double n = 1;
  for (int l = 0; l < w->depth; l++) {
    ForKind k = w->loops[l].kind;
    if (k != FOR_THREAD_X && k != FOR_THREAD_Y && k != FOR_THREAD_Z) continue;
    bool used = false;
    for (int d = 0; d < ndim && !used; d++) used = ir_uses_var(acc[0].idx[d], w->loops[l].var);
    if (!used) n *= (double)w->loops[l].extent;
  }
  return n;
}

/* The GPU facts of one store's nest (ACC[0] the store, then its loads) into W's maxima. */
static void gpu_feats(Walk *w, const Access *acc, int nacc, double iters) {
  double td[3] = {1, 1, 1}, vth = 1, unr = 1; /* a fetch's threadIdx.x loop nests in C's */
  const IrVar *tx = NULL;
  int64_t ntx = 1;
  for (int l = 0; l < w->depth; l++) {
    double e = (double)w->loops[l].extent;
    ForKind k = w->loops[l].kind;
    if (k == FOR_THREAD_X || k == FOR_THREAD_Y || k == FOR_THREAD_Z)
      td[k - FOR_THREAD_X] = fmax(td[k - FOR_THREAD_X], e);
    if (k == FOR_THREAD_X) tx = w->loops[l].var, ntx = w->loops[l].extent;
    if (k == FOR_VTHREAD) vth *= e;
    if (k == FOR_UNROLL) unr *= e;
  }
  w->max_threads = fmax(w->max_threads, td[0] * td[1] * td[2]);
  /* the outer of two nested loops on one thread dimension is the same threads: not iterations */
  double dup = 1;
  bool seen[3] = {false, false, false};
  for (int l = w->depth - 1; l >= 0; l--) {
    ForKind k = w->loops[l].kind;
    if (k != FOR_THREAD_X && k != FOR_THREAD_Y && k != FOR_THREAD_Z) continue;
    if (seen[k - FOR_THREAD_X]) dup *= (double)w->loops[l].extent;
    seen[k - FOR_THREAD_X] = true;
  }
  w->max_vthreads = fmax(w->max_vthreads, vth);
  w->max_unroll = fmax(w->max_unroll, unr);
  const Loop *in = w->depth ? &w->loops[w->depth - 1] : NULL;
  for (int i = 0; i < nacc; i++) {
    double bytes = dtype_bytes(acc[i].buf->dtype);
    if (in && in->kind == FOR_VECTORIZE && stride_of(&acc[i], in->var) == 1)
      w->max_vec_bytes = fmax(w->max_vec_bytes, bytes * (double)in->extent);
    if (acc[i].buf->scope != SCOPE_SHARED) continue;
    if (acc[i].write) w->shared_stored += iters / dup * bytes;
    w->max_bank = fmax(w->max_bank, tx ? (double)bank_degree(&acc[i], tx, ntx) : 1);
  }
}

/* Features of one store; kept when it does the most work so far. */
static void visit_store(Walk *w, const Stmt *s) {
  Access acc[MAX_ACC];
  int nacc = 0, calls = 0;
  double fops = 0, iops = 0, iters = 1;
  acc[nacc++] = (Access){s->buf, s->args, true};
  count_ops(s->value, &fops, &iops, &calls, acc, &nacc);
  for (int l = 0; l < w->depth; l++) iters *= (double)w->loops[l].extent;
  float f[FEAT_N];
  for (int i = 0; i < FEAT_N; i++) f[i] = 0;
  f[0] = lg(fops * iters);
  f[1] = lg(iops * iters);
  f[2] = lg(iters);
  double par_iters;
  loop_feats(w, f, &par_iters);
  gpu_feats(w, acc, nacc, iters);
  bool self = false;
  for (int i = 1; i < nacc; i++) self |= acc[i].buf == s->buf;
  w->max_xred = fmax(w->max_xred, xred_threads(w, acc, s->nargs, self));
  f[19] = self;
  f[20] = (float)calls;
  f[24] = lg(par_iters);
  /* group accesses by buffer, largest first, into the slots */
  bool used[MAX_ACC] = {0};
  double total_bytes = 0, total_uniq = 0;
  int nbuf = 0;
  for (int slot = 0; slot < NSLOTS + MAX_ACC; slot++) {
    int pick = -1;
    for (int i = 0; i < nacc; i++)
      if (!used[i] && (pick < 0 || dtype_bytes(acc[i].buf->dtype) > dtype_bytes(acc[pick].buf->dtype)))
        pick = i;
    if (pick < 0) break;
    Access group[MAX_ACC];
    int ng = 0;
    for (int i = 0; i < nacc; i++)
      if (!used[i] && acc[i].buf == acc[pick].buf) used[i] = true, group[ng++] = acc[i];
    float bf[BUF_FEATS];
    buffer_feats(w, group, ng, iters, bf);
    total_bytes += exp2(bf[0]) - 1;
    total_uniq += exp2(bf[1]) - 1;
    if (nbuf < NSLOTS) memcpy(f + GEN_FEATS + nbuf * BUF_FEATS, bf, sizeof bf);
    nbuf++;
  }
  f[26] = (float)nbuf;
  f[27] = (float)log2((fops * iters + 1) / (total_uniq + 1));
  double work = fops * iters + iters * 1e-3;
  w->total_flops += fops * iters;
  w->total_bytes += total_bytes;
  w->nstores++;
  if (work >= w->best_work) {
    w->best_work = work;
    memcpy(w->best, f, sizeof f);
  }
}

static void walk(Walk *w, const Stmt *s);

static void walk_for(Walk *w, const Stmt *s) {
  int64_t ext = 1, lo, hi;
  if (!ir_is_const(s->extent, &ext)) ext = const_bounds(s->extent, NULL, &lo, &hi) ? hi : 16;
  if (w->depth < MAX_DEPTH) {
    w->loops[w->depth++] = (Loop){s->var, ext > 0 ? ext : 1, s->for_kind};
    walk(w, s->body);
    w->depth--;
  } else {
    walk(w, s->body);
  }
}

static void walk(Walk *w, const Stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case S_FOR: walk_for(w, s); break;
  case S_STORE:
    w->staged = w->staged || s->prefetch;
    visit_store(w, s);
    break;
  case S_IF:
    w->guards++;
    walk(w, s->body);
    walk(w, s->els);
    w->guards--;
    break;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) walk(w, s->stmts[i]);
    break;
  case S_ALLOC: {
    double b = dtype_bytes(s->buf->dtype);
    for (int d = 0; d < s->buf->ndim; d++) b *= (double)pitch_extent(s->buf, d);
    double *slot = s->buf->scope == SCOPE_SHARED ? &w->shared_bytes : &w->local_bytes;
    *slot += b;
    w->max_shared = fmax(w->max_shared, w->shared_bytes);
    walk(w, s->body);
    *slot -= b;
    break;
  }
  case S_BARRIER: w->double_buffered = true; break; /* only double_buffer writes one */
  default: break;
  }
}

void features_extract(const LoweredFunc *fn, float *v) {
  Walk *w = xalloc(sizeof *w);
  w->best_work = -1;
  walk(w, fn->body);
  memcpy(v, w->best, sizeof(float) * FEAT_N);
  v[21] = lg(w->nstores);
  v[22] = lg(w->total_flops);
  v[23] = lg(w->total_bytes);
  v[GPU_FEATS + 0] = lg(w->max_shared);
  v[GPU_FEATS + 1] = lg(w->max_threads > 1 ? w->max_threads : 0);
  v[GPU_FEATS + 2] = lg(w->max_vthreads > 1 ? w->max_vthreads : 0);
  v[GPU_FEATS + 3] = lg(w->max_unroll > 1 ? w->max_unroll : 0);
  v[GPU_FEATS + 4] = lg(w->max_vec_bytes);
  v[GPU_FEATS + 5] = lg(w->shared_stored > 0 ? w->total_flops / w->shared_stored : 0);
  v[GPU_FEATS + 6] = lg(w->max_bank > 1 ? w->max_bank : 0);
  v[GPU_FEATS + 7] = lg(w->max_xred > 1 ? w->max_xred : 0);
  v[GPU_FEATS + 8] = w->double_buffered ? 1 + w->staged : 0;
}
_Static_assert(GPU_FEATS + 9 == FEAT_N, "the feature layout above");

/* A deterministic stand-in for a measured cost (ms, arbitrary scale) computed from FEAT:
 * flops spread over vector lanes (up to 16), unrolling (up to 8) and parallel iterations
 * (up to 2), plus the bytes moved. --deterministic trains the model on it, so that a seeded
 * search chooses the same candidates whatever the timing noise. */
double features_pseudo_cost(const float *f) {
  double flops = exp2(f[0]) - 1, vec = exp2(f[6]), unr = exp2(f[7]), par = exp2(f[9]);
  double bytes = exp2(f[23]) - 1;
  double speed = fmin(vec, 16) * fmin(fmax(unr, 1), 8) * fmin(par, 2);
  return (flops / fmax(speed, 1) + bytes / 8) * 1e-6 + 1e-6;
}
