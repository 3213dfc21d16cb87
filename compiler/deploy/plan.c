/* plan.c — the arena of a network's intermediate tensors.
 *
 * A tensor is live from the group that writes it to the last group that reads it (groups
 * run in order, one at a time). Tensors are placed in the order they are written, each at
 * the best-fitting gap between the blocks of the tensors still live then (else above
 * them): a greedy first-come placement, as TFLite's and TVM's static planners do. A
 * group's output never shares bytes with its inputs: they are live at that group too.
 */
#include "deploy/deploy.h"

#include <stdlib.h>

static int64_t round_up(int64_t x) {
  return (x + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
}

static int64_t tensor_bytes(const NetTensor *t) {
  int64_t n = 4;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return round_up(n);
}

static bool live_at(const NetPlan *p, const int *first, const int *last, int i, int k) {
  return p->offset[i] >= 0 && first[i] <= k && k <= last[i];
}

/* The offset for SIZE bytes among the placed tensors live at group K: the start of the
 * smallest gap that fits (gaps start at 0 or just above a live block), else the top. */
static int64_t place(const Network *n, const NetPlan *p, const int *first, const int *last, int k,
                     int64_t size) {
  int64_t best = -1, best_gap = 0, top = 0;
  for (int j = 0; j < n->ntensors; j++)
    if (live_at(p, first, last, j, k) && p->offset[j] + tensor_bytes(n->tensors[j]) > top)
      top = p->offset[j] + tensor_bytes(n->tensors[j]);
  for (int i = -1; i < n->ntensors; i++) {
    if (i >= 0 && !live_at(p, first, last, i, k)) continue;
    int64_t at = i < 0 ? 0 : p->offset[i] + tensor_bytes(n->tensors[i]);
    int64_t ceil = top;
    bool clash = at >= top;
    for (int j = 0; j < n->ntensors && !clash; j++) {
      if (!live_at(p, first, last, j, k)) continue;
      int64_t lo = p->offset[j], hi = lo + tensor_bytes(n->tensors[j]);
      if (lo < at + size && at < hi) clash = true;
      else if (lo >= at + size && lo < ceil) ceil = lo;
    }
    if (!clash && (best < 0 || ceil - at < best_gap)) best = at, best_gap = ceil - at;
  }
  return best >= 0 ? best : top;
}

void net_plan(const Network *n, NetPlan *p) {
  p->offset = xalloc(sizeof *p->offset * (size_t)(n->ntensors + 1));
  p->arena_bytes = p->sum_bytes = 0;
  p->nplanned = 0;
  int *first = xalloc(sizeof(int) * (size_t)(n->ntensors + 1));
  int *last = xalloc(sizeof(int) * (size_t)(n->ntensors + 1));
  for (int i = 0; i < n->ntensors; i++) p->offset[i] = -1, first[i] = last[i] = -1;
  for (int k = 0; k < n->ngroups; k++) {
    const NetGroup *g = n->groups[k];
    first[g->out->index] = last[g->out->index] = k;
    for (int a = 0; a < g->ninputs; a++) last[g->inputs[a]->index] = k;
  }
  for (int k = 0; k < n->ngroups; k++) {
    const NetTensor *t = n->groups[k]->out;
    if (t->kind != NT_VALUE || t == n->output || p->offset[t->index] >= 0) continue;
    int64_t size = tensor_bytes(t);
    p->offset[t->index] = place(n, p, first, last, k, size);
    if (p->offset[t->index] + size > p->arena_bytes) p->arena_bytes = p->offset[t->index] + size;
    p->sum_bytes += size;
    p->nplanned++;
  }
}

void net_plan_print(FILE *f, const NetPlan *p) {
  double mib = 1024.0 * 1024.0;
  fprintf(f, "memory: %d intermediate tensors in an arena of %.2f MiB (peak), %.2f MiB apart (%.0f%%)\n",
          p->nplanned, (double)p->arena_bytes / mib, (double)p->sum_bytes / mib,
          p->sum_bytes ? 100.0 * (double)p->arena_bytes / (double)p->sum_bytes : 100.0);
}
