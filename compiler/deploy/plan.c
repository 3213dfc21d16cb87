/* plan.c — the arena of a network's intermediate tensors.
 *
 * A tensor is live from the group that writes it to the last group that reads it (groups
 * run in order, one at a time); two tensors whose lives overlap get disjoint bytes. Each
 * tensor in turn goes to the smallest gap that fits it between the placed tensors whose
 * lives overlap its own (else above them). Two orders are tried and the smaller arena
 * kept: the order the groups write them, and largest first (TFLite's greedy-by-size). A
 * group's output never shares bytes with its inputs: they are live at that group too.
 */
#include "deploy/deploy.h"

#include <stdlib.h>

typedef struct Lives {
  const Network *n;
  int *first, *last; /* per tensor: the groups that write it and read it last (-1: none) */
  int64_t *bytes;    /* per tensor, rounded up to PLAN_ALIGN */
  int *live_start;   /* group k's planned live tensors: live[live_start[k] .. live_start[k + 1]] */
  int *live;
  struct Span *spans; /* scratch of ntensors */
} Lives;

static bool planned(const Lives *v, int i) {
  const NetTensor *t = v->n->tensors[i];
  return t->kind == NT_VALUE && net_output_index(v->n, t) < 0 && v->first[i] >= 0 && !v->n->groups[v->first[i]]->folded;
}

typedef struct Span {
  int64_t start, end;
} Span;

static int by_start(const void *a, const void *b) {
  int64_t x = ((const Span *)a)->start, y = ((const Span *)b)->start;
  return (x > y) - (x < y);
}

static int ascending(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

/* The offset of tensor T among the tensors placed in OFF (-1: not yet) whose lives overlap
 * its own (gathered first into NEAR, scratch of ntensors, from the tensors live at each of
 * its groups: a network of thousands of short-lived tensors, an unrolled recurrent layer's,
 * has few at each; in index order, which breaks ties): the start of the smallest gap that
 * fits (gaps start at 0 or just above a block), else the top. */
static int64_t place(const Lives *v, const int64_t *off, int t, int *near) {
  int m = 0, f = v->first[t];
  int64_t best = -1, best_gap = 0, top = 0, size = v->bytes[t];
  /* the tensors live where T is written, then those written while T lives (no tensor is
   * both: the first are written before T, the others after); the placed ones */
  for (int e = v->live_start[f]; e < v->live_start[f + 1]; e++) near[m++] = v->live[e];
  for (int k = f + 1; k <= v->last[t]; k++) near[m++] = v->n->groups[k]->out->index;
  int placed = 0;
  for (int i = 0; i < m; i++) {
    int j = near[i];
    if (off[j] < 0) continue;
    near[placed++] = j;
    if (off[j] + v->bytes[j] > top) top = off[j] + v->bytes[j];
  }
  m = placed;
  qsort(near, (size_t)m, sizeof(int), ascending);
  /* the blocks' bytes as disjoint spans sorted by start (merged where they touch or overlap) */
  Span *u = v->spans;
  int nu = 0;
  for (int k = 0; k < m; k++) u[k] = (Span){off[near[k]], off[near[k]] + v->bytes[near[k]]};
  qsort(u, (size_t)m, sizeof(Span), by_start);
  for (int k = 0; k < m; k++) {
    if (u[k].end <= u[k].start) continue;
    if (nu && u[k].start < u[nu - 1].end) {
      if (u[k].end > u[nu - 1].end) u[nu - 1].end = u[k].end;
    } else
      u[nu++] = u[k];
  }
  /* candidates: 0, then just above each block in index order; the first smallest gap wins */
  for (int i = -1; i < m; i++) {
    int64_t at = i < 0 ? 0 : off[near[i]] + v->bytes[near[i]];
    if (at >= top) continue;
    int lo = 0, hi = nu; /* the first span ending after AT */
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (u[mid].end <= at) lo = mid + 1;
      else hi = mid;
    }
    if (lo < nu && u[lo].start < at + size) continue; /* a block inside [at, at + size) */
    int64_t ceil = lo < nu && u[lo].start < top ? u[lo].start : top;
    if (best < 0 || ceil - at < best_gap) best = at, best_gap = ceil - at;
  }
  return best >= 0 ? best : top;
}

/* Place the tensors in ORDER (NORDER of them) into OFF; the arena's size. */
static int64_t place_all(const Lives *v, const int *order, int norder, int64_t *off) {
  int64_t arena = 0;
  int *near = xalloc(sizeof(int) * (size_t)(v->n->ntensors + 1));
  for (int i = 0; i < v->n->ntensors; i++) off[i] = -1;
  for (int k = 0; k < norder; k++) {
    int t = order[k];
    off[t] = place(v, off, t, near);
    if (off[t] + v->bytes[t] > arena) arena = off[t] + v->bytes[t];
  }
  return arena;
}

static const Lives *sort_lives;
static int larger_first(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  int64_t x = sort_lives->bytes[i], y = sort_lives->bytes[j];
  return x != y ? (x < y) - (x > y) : sort_lives->first[i] - sort_lives->first[j];
}

static void lives(const Network *n, Lives *v) {
  v->n = n;
  v->first = xalloc(sizeof(int) * (size_t)(n->ntensors + 1));
  v->last = xalloc(sizeof(int) * (size_t)(n->ntensors + 1));
  v->bytes = xalloc(sizeof(int64_t) * (size_t)(n->ntensors + 1));
  for (int i = 0; i < n->ntensors; i++) {
    const NetTensor *t = n->tensors[i];
    int64_t b = dtype_bytes(t->dtype) * net_numel(t);
    v->bytes[i] = (b + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
    v->first[i] = v->last[i] = -1;
  }
  for (int k = 0; k < n->ngroups; k++) {
    const NetGroup *g = n->groups[k];
    v->first[g->out->index] = v->last[g->out->index] = k;
    for (int a = 0; a < g->ninputs; a++) v->last[g->inputs[a]->index] = k;
  }
  /* the planned tensors live at each group, by counting then filling */
  v->live_start = xalloc(sizeof(int) * (size_t)(n->ngroups + 2));
  v->spans = xalloc(sizeof(struct Span) * (size_t)(n->ntensors + 1));
  int64_t total = 0;
  for (int i = 0; i < n->ntensors; i++)
    if (planned(v, i))
      for (int k = v->first[i]; k <= v->last[i]; k++) v->live_start[k + 1]++, total++;
  for (int k = 0; k < n->ngroups; k++) v->live_start[k + 1] += v->live_start[k];
  v->live = xalloc(sizeof(int) * (size_t)(total + 1));
  int *fill = xalloc(sizeof(int) * (size_t)(n->ngroups + 1));
  for (int i = 0; i < n->ntensors; i++)
    if (planned(v, i))
      for (int k = v->first[i]; k <= v->last[i]; k++) v->live[v->live_start[k] + fill[k]++] = i;
}

void net_plan(const Network *n, NetPlan *p) {
  Lives v;
  lives(n, &v);
  int *order = xalloc(sizeof(int) * (size_t)(n->ngroups + 1)), norder = 0;
  for (int k = 0; k < n->ngroups; k++)
    if (planned(&v, n->groups[k]->out->index)) order[norder++] = n->groups[k]->out->index;
  *p = (NetPlan){.offset = xalloc(sizeof(int64_t) * (size_t)(n->ntensors + 1)), .nplanned = norder};
  int64_t *by_size = xalloc(sizeof(int64_t) * (size_t)(n->ntensors + 1));
  p->arena_bytes = place_all(&v, order, norder, p->offset);
  sort_lives = &v;
  qsort(order, (size_t)norder, sizeof(int), larger_first);
  int64_t arena = place_all(&v, order, norder, by_size);
  if (arena < p->arena_bytes) {
    p->arena_bytes = arena;
    for (int i = 0; i < n->ntensors; i++) p->offset[i] = by_size[i];
  }
  for (int k = 0; k < norder; k++) p->sum_bytes += v.bytes[order[k]];
  for (int k = 0; k < n->ngroups; k++) { /* the bound: the most bytes live at one group */
    int64_t live = 0;
    for (int e = v.live_start[k]; e < v.live_start[k + 1]; e++) live += v.bytes[v.live[e]];
    if (live > p->live_bytes) p->live_bytes = live;
  }
}

void net_plan_print(FILE *f, const NetPlan *p) {
  double mib = 1024.0 * 1024.0;
  fprintf(f, "memory: %d intermediate tensors in an arena of %.2f MiB (peak; at least %.2f MiB are live at "
          "once), %.2f MiB apart\n", p->nplanned, (double)p->arena_bytes / mib, (double)p->live_bytes / mib,
          (double)p->sum_bytes / mib);
}
