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

#include "front/network.h"

#define PLAN_ALIGN 64

/* Where each intermediate tensor of a network lives in one arena. */
typedef struct NetPlan {
  int64_t *offset;     /* per tensor: its byte offset in the arena, -1 when not planned
                          (parameters and the network's outputs) */
  int64_t arena_bytes; /* the peak: the arena's size */
  int64_t sum_bytes;   /* the planned tensors each in its own buffer */
  int64_t live_bytes;  /* the most bytes live at one group: no arena is smaller */
  int nplanned;
} NetPlan;

/* Plan every NT_VALUE tensor of N but its outputs (each rounded up to PLAN_ALIGN bytes):
 * live from the group that writes it to the last group that reads it, in group order. */
void net_plan(const Network *n, NetPlan *p);
/* "memory: N intermediate tensors in an arena of X MiB (peak; at least L ...), Y MiB apart". */
void net_plan_print(FILE *f, const NetPlan *p);

/* One network of a library: the model at one value of each of the -D lists. */
typedef struct DeployNet {
  Network *n;
  LoweredFunc **fns;        /* per task, lowered for the target (a task lowered once for
                               several networks: functions of one body, compiled once) */
  int ntuned;               /* tasks whose schedule is a record of --records (for -v) */
  bool *input;              /* per tensor: a parameter the caller passes at each run */
  float **data;             /* per tensor: a weight's data (host f32), else NULL */
  const int64_t *values;    /* this network's value of each of DeploySpec's size names */
} DeployNet;

/* What `texc NET --emit so|header` asks for (cli/network_run.c fills it). */
typedef struct DeploySpec {
  const char *kind;         /* "so" or "header" */
  const char *out;          /* -o (header: NULL or "-" is standard output) */
  const char *name;         /* --name, or NULL: from OUT (libNAME.so), else the network's */
  const char *weights_file; /* --weights: the file create() reads; NULL: embedded */
  const char *weights_out;  /* write the weights there (safetensors), or NULL */
  const Options *o;         /* the target: llvm or cuda */
  int nnets;                /* 1, or one per combination of the -D lists' values */
  DeployNet *nets;          /* the first is what create() and the one-shot call run */
  int nsizes;               /* the -D names given several values (0: one network) */
  const char *const *size_names;
} DeploySpec;

/* The library (or its header) of S's networks, their task functions lowered for S's
 * target. 0, or 1 after an error (reported). */
int net_deploy_emit(const DeploySpec *s);
#endif
