/* deploy.h — whole networks out (docs/DEPLOY.md):
 *
 *   plan.c    the arena of a network's intermediate tensors: liveness over the order of
 *             its calls, one offset per tensor, tensors never live together share bytes
 *   deploy.c  `texc NET --emit so|header`: one library per network (the task kernels, the
 *             call order, the planned arena, the weights embedded or in a file), for the
 *             CPU or CUDA, that needs nothing of texc at run time (runtime/rt_net.c)
 */
#ifndef DEPLOY_H
#define DEPLOY_H
#include <stdio.h>

#include "cli/driver.h"
#include "front/network.h"

#define PLAN_ALIGN 64

/* Where each intermediate tensor of a network lives in one arena. */
typedef struct NetPlan {
  int64_t *offset;     /* per tensor: its byte offset in the arena, -1 when not planned
                          (parameters and the network's output) */
  int64_t arena_bytes; /* the peak: the arena's size */
  int64_t sum_bytes;   /* the planned tensors each in its own buffer */
  int64_t live_bytes;  /* the most bytes live at one group: no arena is smaller */
  int nplanned;
} NetPlan;

/* Plan every NT_VALUE tensor of N but its output (each rounded up to PLAN_ALIGN bytes):
 * live from the group that writes it to the last group that reads it, in group order. */
void net_plan(const Network *n, NetPlan *p);
/* "memory: N intermediate tensors in an arena of X MiB (peak; at least L ...), Y MiB apart". */
void net_plan_print(FILE *f, const NetPlan *p);

/* cli/network_run.c: the weights of N as `texc run` takes them (--weights, an imported
 * model's, NET.safetensors beside NET.tex, else NULL: the fill; *BAD after an error), and
 * the host data of parameter T (position P in the header: --input P, its weight, or the
 * fill). */
struct WeightSet *net_weight_set(Cli *c, Network *n, bool *bad);
bool net_param_data(Cli *c, struct WeightSet *w, const NetTensor *t, int p, float *host);

/* `texc NET --emit so|header [-o OUT] [--name NAME] [--weights FILE]`: the library (or its
 * header) of network N, whose task functions FNS (N->ntasks) are lowered for the CLI's
 * target. 0, or 1 after an error (reported). */
int net_deploy_emit(Cli *c, Network *n, LoweredFunc **fns, const char *kind);
#endif
