/* network.h — whole networks (docs/NETWORKS.md): what network.c, network_run.c and
 * network_tune.c share.
 *
 *   network.c       pick a `network` of the parsed file, instantiate each operator call
 *                   (shapes unified, attributes bound), fuse elementwise tails into their
 *                   producer, build one checked Kernel per group (a task)
 *   network_run.c   `texc run|bench|compile NET.tex`: weights, execution, --check
 *   network_tune.c  `texc tune NET.tex`: task extraction and the task scheduler
 *   network_sched.c the untuned CPU schedule of a task (steps), used without a record
 */
#ifndef NETWORK_H
#define NETWORK_H

#include "texc.h"

#define NET_MAX_DIMS 8

/* ORDER NetTensorKind: how a tensor gets its data. */
typedef enum {
  NT_INPUT,  /* the network's first parameter: uniform in [-1, 1) */
  NT_WEIGHT, /* the other parameters: seeded random, scaled (NETWORKS.md) */
  NT_VALUE   /* the result of an operator call */
} NetTensorKind;

typedef struct NetTensor {
  const char *name;   /* as written: a parameter, or the name a call assigned */
  NetTensorKind kind;
  DType dtype;        /* f32; i32, i64 or bool for token ids, masks, labels and what kernels make of them */
  int ndim;
  int64_t shape[NET_MAX_DIMS];
  int index;          /* position in Network.tensors */
  int producer;       /* the node writing it, -1 for parameters */
  int nuses;          /* calls reading it */
} NetTensor;

/* A name bound to a value while an operator is instantiated: a constant of the operator's
 * file (maybe overridden by an attribute) or a size unified from an argument's shape. */
typedef struct NetBinding {
  const char *name;
  int64_t value;
} NetBinding;

/* One operator call `y = op(a, b, ATTR = v)`. */
typedef struct NetNode {
  const char *op;
  Loc loc;
  Ast *kernel;        /* the operator's A_KERNEL */
  NetTensor **args;
  int nargs;
  NetTensor *out;
  NetBinding *env;
  int nenv;
  bool elementwise;   /* one `=` statement, no `tensor`: fusable into its producer */
  bool side;          /* moved to just before its one reader, to fuse into its group (network.c
                         order_for_fusion) */
  int group;
  int packed_arg;     /* the argument read in the packed layout (a pack node's output), or -1 */
  int64_t pack_block; /* its block B: [KH, KW, CI, CO] read as [CO / B, KH, KW, CI, B] */
} NetNode;

/* A group of calls fused into one kernel: a task of the tuner. */
typedef struct NetGroup {
  int *nodes;
  int nnodes;
  NetTensor **inputs; /* the kernel's parameters in order */
  int ninputs;
  NetTensor *out;
  const char *name;   /* the kernel's name: the ops joined by "_" */
  Kernel *kernel;     /* checked */
  uint64_t key;       /* kernel_workload_key */
  int task;           /* index of its task (distinct keys) */
  bool folded;        /* every input a weight or folded: computed once at load, not per run */
} NetGroup;

/* A distinct workload and how often it occurs. */
typedef struct NetTask {
  int group;          /* the first group with this key */
  int weight;
  uint64_t key;
  double flops;
  bool folded;        /* its groups are folded (weight packing): never tuned nor timed */
} NetTask;

typedef struct Network {
  const char *name;
  const char *file;
  Loc loc;
  NetTensor **tensors;
  int ntensors;
  NetNode **nodes;
  int nnodes;
  NetGroup **groups;
  int ngroups;
  NetTask *tasks;
  int ntasks;
  NetTensor **outputs; /* the results, in the header's order (distinct tensors, each a call's) */
  int noutputs;
  const char **output_names; /* per result: the model's name of it (an ONNX graph output's;
                                net_output_name), or NULL: the tensors' names */
  struct WeightSet *weights; /* an imported model's weights (onnx/); NULL for .tex files */
  Vec externs; /* the `extern kernel` items of the file and its imports (group kernels call them) */
} Network;

/* network.c */
/* The rewrites of a network's convolutions that the loader makes for the target it is
 * loaded for. The caller that knows the target decides them (autosched/network_sched.c
 * net_rewrites), so that front/ asks no target and no tuner. */
typedef struct NetRewrites {
  /* 3 x 3 stride-1 convolutions by Winograd F(2x2, 3x3) (NETWORKS.md, "Winograd") */
  bool winograd;
  /* The block B in which a call with output OUT reads its weights packed (NETWORKS.md,
   * "Packed weights"), 0: not packed; NULL: no packing. */
  int64_t (*pack_block)(const NetTensor *out);
  /* an ONNX model's quantized convolutions as integer kernels (onnx_int8_convs) */
  bool int8;
  /* Does the target's default compute K, the kernel of a product, a row-wise kernel of its
   * result and a product of that fused into one, a block of rows at a time (attention)?
   * NULL or false: they stay three kernels (network.c merge_attention). */
  bool (*attention)(Kernel *k);
} NetRewrites;
/* Load network NAME of FILE (NULL: the file's only network; `--kernel NAME` picks one
 * of several): parse, instantiate, fuse, check every group. NULL on errors (reported at
 * the call's line). DEFS override constants of the network's file. An ONNX model
 * (FILE.onnx) is imported in memory first (docs/ONNX.md), its weights in Network.weights.
 * RW: the rewrites to make (NULL: none, every call as written). */
Network *net_load(const char *file, const char *name, Define *defs, int ndefs, const NetRewrites *rw);
/* Does PATH parse, and hold a `network`? (Quiet: a file that does not parse says no.) */
bool net_is_network_file(const char *path);
/* Is T computed once at load: the output of a folded group (packed or transformed weights)? */
bool net_is_folded(const Network *n, const NetTensor *t);
/* The position of T among N's results, or -1. */
int net_output_index(const Network *n, const NetTensor *t);
/* The model's name of result I: the ONNX graph output's, else the tensor's. */
const char *net_output_name(const Network *n, int i);
/* T's number of elements. */
int64_t net_numel(const NetTensor *t);

/* cli/network_run.c (net_run_cli is declared in cli/driver.h) */
/* The deterministic data of a parameter tensor (host, its dtype), as NETWORKS.md describes. */
void net_fill(const NetTensor *t, void *data);

/* network_tune.c */
struct Cli;
int net_tune_main(struct Cli *c);
/* The best recorded latency (ms) of task T in RECORDS for the code O compiles (its target,
 * --mcpu and --mtriple: rec_code), or -1. When STEPS is not NULL it gets the record's steps. */
double net_task_best(const Network *n, int task, const Options *o, const char *records, Vec *steps);
/* The parameters of group G (bit i: parameter i < 52, as the wire's numbers are doubles;
 * the output is parameter G->ninputs) that the tuner times cold (Task.cold_args), as a
 * forward pass leaves them when G runs on CPU (NULL: on a device).
 * - CPU: weights and what is folded from them at load (packed filters), activations written
 *   before the group run just before G (the network's input, a residual's shortcut), and
 *   G's output (an arena slot last written long before); the producer's output, just
 *   written, stays warm. None at all when 3/4 of CPU's L3 holds every weight a pass reads:
 *   they, and the rest, stay in that cache (mobilenet's 17 MB in a 32 MB L3).
 * - A device (its whole cache flushed once a batch when any bit is set): the weights and
 *   what is folded from them. */
uint64_t net_cold_params(const Network *n, const NetGroup *g, const CpuInfo *cpu);
/* The steps text of that best record (arena), or NULL. */
const char *net_task_record_text(const Network *n, int task, const Options *o, const char *records);

/* network_sched.c */
/* The untuned CPU schedule of a network task as step text (one step a line): elementwise
 * stages inlined, the output tiled and parallel (when net_threads_pay), the reduction
 * computed per tile; NULL when the kernel is not of that form (the default schedule
 * applies). */
char *net_default_steps(Kernel *k);
/* Is K's work worth the thread pool (about 64 K multiply-adds), or does it run on one
 * thread? */
bool net_threads_pay(const Kernel *k);
/* The block B in which a call with output OUT (C channels innermost) reads its weights
 * packed, [KH, KW, CI, C] as [C / B, KH, KW, CI, B] or [K, C] as [C / B, K, B]: the
 * channels of the default register tile of OUT (its rows on the same axis, whole vectors of
 * the CPU compiled for); 0: no packing (C is one block, or not a multiple of one). */
int64_t net_pack_block(const NetTensor *out);
/* Does the CPU default compute K as attention, a block of rows at a time (NetRewrites.attention)? */
bool net_attention(Kernel *k);
/* The rewrites net_load makes for target T: on a CPU, Winograd (unless TEXC_NET_WINOGRAD=0)
 * and filters packed in net_pack_block's blocks (unless TEXC_NET_PACK=0); none on GPUs. */
NetRewrites net_rewrites(Target t);

#endif
