/* test_plan.c — the arena planner of deploy/plan.c on the example networks: no two tensors
 * that are live at the same group share a byte, every planned tensor lies inside the
 * arena, parameters and the output are not planned, and reuse makes the arena smaller
 * than half the tensors apart (resnet18, mobilenet). */
#include "deploy/deploy.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static int64_t bytes(const NetTensor *t) {
  int64_t n = dtype_bytes(t->dtype);
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return (n + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
}

/* The group that writes T, and the last that reads it (or writes it). */
static void span(const Network *n, const NetTensor *t, int *first, int *last) {
  *first = *last = -1;
  for (int k = 0; k < n->ngroups; k++) {
    const NetGroup *g = n->groups[k];
    if (g->out == t) *first = *last = k;
    for (int a = 0; a < g->ninputs; a++)
      if (g->inputs[a] == t) *last = k;
  }
}

static bool plan_sound(const Network *n, const NetPlan *p) {
  bool ok = p->live_bytes <= p->arena_bytes && p->arena_bytes <= p->sum_bytes;
  for (int i = 0; i < n->ntensors; i++) {
    const NetTensor *t = n->tensors[i];
    int fi, li;
    span(n, t, &fi, &li);
    /* written by a group that runs per call (a folded group's output, a packed filter, is
     * computed once at load and kept apart) */
    bool planned = t->kind == NT_VALUE && net_output_index(n, t) < 0 && fi >= 0 && !n->groups[fi]->folded;
    if (planned != (p->offset[i] >= 0)) ok = false;
    if (!planned) continue;
    if (p->offset[i] % PLAN_ALIGN || p->offset[i] + bytes(t) > p->arena_bytes) ok = false;
    for (int j = 0; j < i; j++) {
      if (p->offset[j] < 0) continue;
      int fj, lj;
      span(n, n->tensors[j], &fj, &lj);
      bool together = fi <= lj && fj <= li;
      bool overlap = p->offset[i] < p->offset[j] + bytes(n->tensors[j]) && p->offset[j] < p->offset[i] + bytes(t);
      if (together && overlap) ok = false;
    }
  }
  return ok;
}

static void test_network(const char *file, const char *hw) {
  Define d = {"HW", 0, false};
  d.value = strtoll(hw, NULL, 10);
  NetRewrites rw = net_rewrites(TARGET_LLVM);
  Network *n = net_load(file, NULL, &d, 1, &rw);
  check(xprintf("plan: %s -D HW=%s loads", file, hw), n != NULL);
  if (!n) return;
  NetPlan p;
  net_plan(n, &p);
  check(xprintf("plan: %s: live tensors never share bytes, all inside the arena", file), plan_sound(n, &p));
  check(xprintf("plan: %s -D HW=%s: the arena (%lld) is under half the tensors apart (%lld)", file, hw,
                (long long)p.arena_bytes, (long long)p.sum_bytes),
        p.nplanned > 10 && 2 * p.arena_bytes < p.sum_bytes);
}

int main(void) {
  test_network("examples/resnet18.tex", "224");
  test_network("examples/mobilenet.tex", "224");
  test_network("examples/resnet18.tex", "32");
  return failures ? 1 : 0;
}
