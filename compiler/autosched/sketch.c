/* sketch.c — the search space, as Ansor's sketch rules without templates.
 *
 * Sketch rules over the compute DAG (one Plan per stage that stays at the root):
 *   - an elementwise stage that is not an output is inlined (compute_inline);
 *   - a reduction is tiled in levels: SSRSRS on CPUs (S0 S1 R0 S2 R1 S3), SSRRS on GPUs
 *     (blockIdx, threadIdx, R0, R1, inner; sketch 0), and on GPUs also SSSRRSRS with its
 *     inputs in shared memory (sketch 1, Ansor's: blockIdx, vthread, threadIdx; a local
 *     stage R0 R1 S3 R2 S4; each tensor read staged at R0 by cooperative fetching), sized
 *     within the Target's threads and shared bytes per block;
 *   - a reduction's elementwise consumer is fused with it: the consumer is tiled and the
 *     reduction computed at its tile (compute_at); an output reduction gets the same
 *     structure from cache_write(C, local);
 *   - other elementwise stages are split in two levels.
 * Random annotation then fills the genes: tile sizes (factors of the extents; on CPUs the
 * innermost tile in whole vectors and the register tile around the machine's micro-kernel,
 * from target_cpu's lanes and vector registers), how many
 * outer loops are fused and run in parallel (or bound to blocks), vectorization of the
 * innermost loop, unrolling of the inner tile. Candidates render to LANGUAGE.md steps.
 */
#include "autosched.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_AXES 8
#define MAX_PLANS 16
#define MAX_SKETCHES 16
#define SLEVELS 3  /* inner spatial factors of a tiled stage: S1 S2 S3 (CPU) */
#define RLEVELS 1  /* inner reduction factors: R1 */
#define MAX_INNER 64
#define UNROLL_COPIES 128 /* CPU: copies of a tile's body that its unrolled loops make, at most */
#define NM 256 /* loop and stage names */
#define GLEVELS 4  /* GPU_SHARED: spatial factors vthread, thread, S3, S4 */
#define GRLEVELS 2 /* GPU_SHARED: reduction factors R1, R2 */
#define GPU_MAX_ACC 128 /* GPU_SHARED: accumulators per thread (registers; no limit is queried) */
/* GPU_SHARED with staged copies (gpu_double 2): accumulators plus staging registers per
 * thread. ptxas (sm_90, 255 registers) spilled examples/matmul.tex's 128 accumulators
 * beside 40 staged words; without staging they take 214-224 registers. */
#define GPU_MAX_HELD 144

/* ---------------------------------------------------------------- rng */

uint64_t rng_next(Rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
int rng_int(Rng *r, int n) { return n <= 1 ? 0 : (int)(rng_next(r) % (uint64_t)n); }
double rng_unit(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

/* ---------------------------------------------------------------- plans */

/* How one root stage is scheduled. Genes of a plan, from GENE0:
 *   PLAN_SIMPLE: ns inner factors, par, vec
 *   PLAN_TILE, PLAN_FUSED: ns x SLEVELS spatial factors (S1 S2 S3), nr reduction factors
 *                          (R1), par, vec, unroll, pack (CPU FUSED with a Plan.pack input:
 *                          that input copied into a contiguous panel; else 0)
 *   GPU plans use the same layout: S1 = threads, S2 = inner; par = fused block loops.
 *   PLAN_GPU_SHARED: ns x GLEVELS spatial factors (vthread, thread, S3, S4), nr x 2
 *                    reduction factors (R1, R2), then vectorized fetch, unroll (0: none,
 *                    1: S4, 2: S3 R2 S4, 3: R1 S3 R2 S4, all below the shared tiles' fetch),
 *                    vectorized register tile and store, padded shared rows (gpu_row_pad),
 *                    auto_unroll of the block's loops (an index into auto_unroll_steps),
 *                    double-buffered shared tiles (gpu_double: 0 no, 1 yes, 2 with their
 *                    copies staged through registers; 0 in the untuned default).
 *   PLAN_GPU_XREDUCE: threads T of the cross-thread reduction (a power of two), rows Y of
 *                    a block (threadIdx.y: 1, 2, 4 or 8; T x Y within the Target), unroll of
 *                    each thread's serial part (1, 2, 4 or 8). */
typedef enum {
  PLAN_SIMPLE, /* elementwise at the root */
  PLAN_TILE,   /* multi-level tiling of a reduction */
  PLAN_FUSED,  /* a reduction computed at the tile of its consumer (or of a cache_write) */
  PLAN_RFACTOR, /* little spatial work, a long reduction: its lanes become a vector axis */
  PLAN_GPU_SHARED, /* GPU: SSSRRSRS tiling, inputs staged in shared memory (gpu_* below) */
  PLAN_GPU_XREDUCE /* GPU: little spatial work, a long reduction: rfactor over threadIdx.x */
} PlanKind;

typedef struct Axis {
  const char *name;
  int64_t extent;
} Axis;

typedef struct Plan {
  PlanKind kind;
  Op *op;           /* the stage tiled (FUSED: the producer) */
  Op *consumer;     /* FUSED: the elementwise consumer; NULL for cache_write */
  int ns, nr;
  Axis s[MAX_AXES], r[MAX_AXES];
  const char *cons_axes[MAX_AXES]; /* FUSED with a consumer: its axis names */
  int64_t block[MAX_AXES]; /* CPU: a packed operand's block along spatial axis d, or 0 */
  Buffer *pack;     /* CPU FUSED: an input read as B[r.., s_last] (packable), or NULL */
  int64_t pack_rows; /* its elements per column of the panel: the product of those r extents */
  int gene0, ngenes;
} Plan;

typedef struct Sketch {
  char name[96];
  Plan plans[MAX_PLANS];
  int nplans;
  Op *inlined[MAX_PLANS];
  int ninlined;
  int ngenes;
  bool shared; /* GPU: some plan is PLAN_GPU_SHARED */
} Sketch;

struct SketchSet {
  Kernel *k;
  Target target;
  int threads;
  GpuLimits lim; /* GPU: threads per block and shared bytes, from the Target (gpu_limits) */
  CpuInfo cpu; /* CPU: the machine the register tiles are derived from (target_cpu) */
  Op *rf_op; /* while building: the reduction given PLAN_RFACTOR, or NULL */
  bool xr;   /* while building: worthy reductions get PLAN_GPU_XREDUCE (xreduce_worthy) */
  bool fixed; /* the untuned default (sketch_gpu_default): genes it has not measured stay 0 */
  Sketch sk[MAX_SKETCHES];
  int n;
};

static bool is_gpu(const SketchSet *ss) { return backend_for(ss->target)->device == DEVICE_GPU; }

static bool is_output(Kernel *k, Op *op) {
  for (int i = 0; i < k->noutputs; i++)
    if (k->outputs[i] == op->out) return true;
  return false;
}

/* The ops that read OP's tensor; returns how many, the first in *FIRST. */
static int consumers(Kernel *k, Op *op, Op **first) {
  int n = 0;
  for (int i = 0; i < k->nops; i++)
    for (int j = 0; j < k->ops[i]->nreads; j++)
      if (k->ops[i]->reads[j] == op->out) {
        if (!n) *first = k->ops[i];
        n++;
        break;
      }
  return n;
}

/* True when every load of P's tensor in E is P[axes of C, in order]. */
static bool loads_identity(const Expr *e, const Op *p, const Op *c) {
  if (!e) return true;
  if (e->kind == E_LOAD && e->buf == p->out) {
    if (e->nargs != c->ndim) return false;
    for (int i = 0; i < e->nargs; i++)
      if (e->args[i]->kind != E_VAR || e->args[i]->var != c->axes[i]) return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!loads_identity(e->args[i], p, c)) return false;
  return loads_identity(e->a, p, c) && loads_identity(e->b, p, c) && loads_identity(e->c, p, c);
}

static bool inlinable(Kernel *k, Op *op) { return op->nred == 0 && !is_output(k, op); }

/* The elementwise consumer that OP may be fused into, or NULL: OP's one reader, or when
 * that reader is inlined (not an output, read by one op: a network's batch norm between a
 * convolution and its relu), the first stage down that chain that keeps its own loops;
 * each stage of the chain reads the one before at its own indices, so that OP's loads in
 * that stage stay at its indices once the chain is inlined. */
static Op *fusable_consumer(Kernel *k, Op *op) {
  Op *c = NULL, *p = op, *next;
  if (op->nred == 0 || is_output(k, op) || consumers(k, op, &c) != 1) return NULL;
  for (;;) {
    if (c->nred != 0 || c->ndim != op->ndim || !loads_identity(c->value, p, c)) return NULL;
    int n = is_output(k, c) ? 0 : consumers(k, c, &next);
    if (n == 0) return c;
    if (n > 1) return NULL; /* inlined into each reader: no stage to fuse into */
    p = c, c = next;
  }
}

/* The largest B > 1 such that E reads a tensor at index `V % B`: the block of an operand
 * packed along V (a network's weights, [CO / B, KH, KW, CI, B]: network.c pack_weight), or
 * 0. A tile whose innermost factor along V is B reads whole blocks, with no division left in
 * its inner loops (fit_blocks). */
static int64_t mod_block(const Expr *e, const IrVar *v) {
  if (!e) return 0;
  int64_t b = 0, c;
  if (e->kind == E_BIN && e->op == OP_MOD && e->a && e->a->kind == E_VAR && e->a->var == v &&
      ir_is_const(e->b, &c) && c > 1)
    b = c;
  const Expr *kids[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3; i++) {
    int64_t k = mod_block(kids[i], v);
    if (k > b) b = k;
  }
  for (int i = 0; i < e->nargs; i++) {
    int64_t k = mod_block(e->args[i], v);
    if (k > b) b = k;
  }
  return b;
}

/* The input of OP that a register tile reads along its vectors only, B[k, j] of a matmul:
 * every index a plain reduction variable, the last one the last spatial axis (so the
 * rows of the tile broadcast the other input). Such a B is read a row of NR floats per k,
 * rows N x 4 bytes apart: with N a power of two, all of a tile's rows fall in a few sets
 * of the L1 cache. A copy into a contiguous panel (OpenBLAS's packing of B) streams it.
 * *ROWS gets the panel's elements per column. NULL when there is none. */
static Buffer *packable(const Plan *p, const Op *op, int64_t *rows) {
  if (p->ns < 2 || p->nr < 1) return NULL;
  for (int j = 0; j < op->nreads; j++) {
    Buffer *b = op->reads[j];
    const Expr *ld = ir_first_load(op->value, b);
    if (!ld || b->ndim < 2 || b == op->out) continue;
    const Expr *last = ld->args[b->ndim - 1];
    bool ok = last->kind == E_VAR && last->var == op->axes[p->ns - 1];
    int64_t n = 1;
    for (int d = 0; ok && d < b->ndim - 1; d++) {
      const Expr *a = ld->args[d];
      ok = a->kind == E_VAR;
      int r = -1;
      for (int q = 0; ok && q < op->nred; q++)
        if (op->raxes[q] == a->var) r = q;
      ok = ok && r >= 0;
      if (ok) n *= p->r[r].extent;
    }
    if (ok) {
      *rows = n;
      return b;
    }
  }
  return NULL;
}

static bool plan_init(Plan *p, PlanKind kind, Op *op, Op *cons) {
  memset(p, 0, sizeof *p);
  p->kind = kind;
  p->op = op;
  p->consumer = cons;
  if (op->ndim > MAX_AXES || op->nred > MAX_AXES) return false;
  p->ns = op->ndim;
  p->nr = op->nred;
  for (int d = 0; d < op->ndim; d++) {
    p->s[d].name = op->axes[d]->name;
    if (!ir_is_const(op->out->shape[d], &p->s[d].extent)) return false;
    if (cons) p->cons_axes[d] = cons->axes[d]->name;
  }
  for (int d = 0; d < op->ndim; d++) {
    int64_t b = mod_block(op->value, op->axes[d]);
    p->block[d] = b > 1 && p->s[d].extent % b == 0 && b < p->s[d].extent ? b : 0;
  }
  for (int d = 0; d < op->nred; d++) {
    p->r[d].name = op->raxes[d]->name;
    if (!ir_is_const(op->rext[d], &p->r[d].extent)) return false;
  }
  if (kind == PLAN_FUSED) p->pack = packable(p, op, &p->pack_rows);
  p->ngenes = kind == PLAN_SIMPLE    ? p->ns + 2
             : kind == PLAN_RFACTOR ? 2
             : kind == PLAN_GPU_SHARED ? p->ns * GLEVELS + p->nr * GRLEVELS + 6
             : kind == PLAN_GPU_XREDUCE ? 3
                                       : p->ns * SLEVELS + p->nr + 4;
  return true;
}

static bool sketch_add_plan(Sketch *s, PlanKind kind, Op *op, Op *cons) {
  if (s->nplans == MAX_PLANS) return false;
  Plan *p = &s->plans[s->nplans];
  if (!plan_init(p, kind, op, cons)) return false;
  p->gene0 = s->ngenes;
  s->ngenes += p->ngenes;
  if (s->ngenes > CAND_MAX_GENES) return false;
  s->nplans++;
  return true;
}

/* A reduction that the shared-memory GPU sketch can take: constant extents (plan_init
 * checks), a plain reduction (no scan, scatter, argmax or axis-dependent domain: these
 * take cache_write badly or not at all) reading at least one tensor. */
static bool gpu_shared_ok(const Op *op) {
  return op->nred > 0 && op->ndim > 0 && !op->is_scan && !op->scatter && !op->rcond &&
         (op->rop == RED_SUM || op->rop == RED_MAX || op->rop == RED_MIN || op->rop == RED_PROD) &&
         !op->init && op->nreads > 0;
}

/* An elementwise op that a GPU_SHARED reduction takes as its consumer (sketch 1). */
static bool gpu_fused_consumer(Kernel *k, Op *op) {
  if (op->nred) return false;
  for (int i = 0; i < k->nops; i++)
    if (k->ops[i] != op && gpu_shared_ok(k->ops[i]) && fusable_consumer(k, k->ops[i]) == op)
      return true;
  return false;
}

/* ---- GPU cross-thread reduction (PLAN_GPU_XREDUCE, Ansor's RuleCrossThreadReduction) */

#define XR_WARP 32 /* a warp: the fewest threads worth a combine (GpuLimits has no warp size) */

/* Whether some tensor that OP reads is read without one of OP's spatial axes of extent
 * > 1 (each of its elements serves several outputs: a matmul's operands, a mat-vec's
 * vector; not a pool's input, whose output has axes of extent 1). */
static bool has_reuse(const Expr *e, const Op *op) {
  if (!e) return false;
  if (e->kind == E_LOAD && e->buf != op->out)
    for (int d = 0; d < op->ndim; d++) {
      int64_t ext;
      bool used = ir_is_const(op->out->shape[d], &ext) && ext == 1;
      for (int i = 0; i < e->nargs && !used; i++) used = ir_uses_var(e->args[i], op->axes[d]);
      if (!used) return true;
    }
  for (int i = 0; i < e->nargs; i++)
    if (has_reuse(e->args[i], op)) return true;
  return has_reuse(e->a, op) || has_reuse(e->b, op) || has_reuse(e->c, op);
}

/* The products of OP's constant spatial and reduction extents; false when one is not a
 * constant. */
static bool op_extents(const Op *op, int64_t *space, int64_t *red) {
  *space = *red = 1;
  for (int d = 0; d < op->ndim; d++) {
    int64_t e;
    if (!ir_is_const(op->out->shape[d], &e)) return false;
    *space *= e;
  }
  for (int d = 0; d < op->nred; d++) {
    int64_t e;
    if (!ir_is_const(op->rext[d], &e)) return false;
    *red *= e;
  }
  return true;
}

/* A reduction that gets a cross-thread sketch on a GPU (Ansor's NeedsCrossThreadReduction):
 * a plain reduction (gpu_shared_ok) with constant extents, at most MAX_AXES of each, whose
 * reduction (the product R of its reduction extents) has more than a warp of iterations and
 *   - when its inputs are reused across outputs (has_reuse: a matmul, a mat-vec), R exceeds
 *     the spatial work S (the product of its output extents): multi-level tiling would
 *     find too few threads (a mat-vec [256 x 16384]: S 256 < R 16384; a matmul 256^3: no);
 *   - otherwise (no reuse: row sums, pools, softmax denominators), always: one thread per
 *     output would run R iterations alone, and the search compares the sketches. */
static bool xreduce_worthy(const SketchSet *ss, const Op *op) {
  int64_t space, red;
  if (!is_gpu(ss) || !gpu_shared_ok(op) || op->ndim > MAX_AXES || op->nred > MAX_AXES ||
      !op_extents(op, &space, &red) || ss->lim.max_threads_per_block < XR_WARP)
    return false;
  if (red <= XR_WARP) return false;
  return has_reuse(op->value, op) ? space < red : true;
}

/* The elementwise consumer whose blocks compute a cross-thread reduction OP: an output or
 * an unread stage (an elementwise stage that is read gets inlined), or NULL. */
static Op *xr_consumer(Kernel *k, Op *op) {
  Op *c = fusable_consumer(k, op), *x;
  return c && (is_output(k, c) || consumers(k, c, &x) == 0) ? c : NULL;
}

/* Whether OP is the consumer a cross-thread reduction of the sketch being built takes. */
static bool xr_taken_consumer(const SketchSet *ss, const Op *op) {
  if (op->nred) return false;
  for (int i = 0; i < ss->k->nops; i++)
    if (ss->k->ops[i] != op && xreduce_worthy(ss, ss->k->ops[i]) && xr_consumer(ss->k, ss->k->ops[i]) == op)
      return true;
  return false;
}

/* CPU: the one reduction whose fused consumer (fusable_consumer) OP is, or NULL. OP is
 * visited before it and leaves its plan to it: OP is the reduction's tile when the sketch
 * fuses, else it gets its own plan after the reduction's. */
static Op *cpu_fused_producer(const SketchSet *ss, Op *op) {
  Op *r = NULL;
  if (is_gpu(ss) || op->nred) return NULL;
  for (int i = 0; i < ss->k->nops; i++) {
    Op *q = ss->k->ops[i];
    if (q == op || q->nred == 0 || q == ss->rf_op || fusable_consumer(ss->k, q) != op) continue;
    if (r) return NULL; /* two reductions into one consumer: it keeps its own plan */
    r = q;
  }
  return r;
}

/* Build the sketch whose choices are the bits of MASK (one bit per reduction that has
 * two structures). Ops are visited consumers first, as Ansor's rules. */
static bool build_sketch(SketchSet *ss, unsigned mask, Sketch *s) {
  Kernel *k = ss->k;
  memset(s, 0, sizeof *s);
  bool taken[256] = {0};
  int bit = 0;
  snprintf(s->name, sizeof s->name, "sketch");
  for (int i = k->nops - 1; i >= 0; i--) {
    Op *op = k->ops[i];
    if (i < 256 && taken[i]) continue;
    if (inlinable(k, op) && fusable_consumer(k, op) == NULL) {
      /* fused consumers are visited first; an elementwise op that is read is inlined */
      Op *c;
      if (consumers(k, op, &c) > 0) {
        if (s->ninlined == MAX_PLANS) return false;
        s->inlined[s->ninlined++] = op;
        continue;
      }
    }
    PlanKind kind = PLAN_SIMPLE;
    Op *cons = NULL;
    if (is_gpu(ss) && (mask & 1) && gpu_fused_consumer(k, op)) continue; /* its producer's */
    if (cpu_fused_producer(ss, op)) continue; /* placed by its producer, below */
    Op *after = NULL; /* CPU: a consumer that the reduction did not fuse, planned next */
    if (ss->xr && xr_taken_consumer(ss, op)) continue; /* its producer's block */
    if (ss->xr && xreduce_worthy(ss, op)) {
      kind = PLAN_GPU_XREDUCE;
      cons = xr_consumer(k, op);
      for (int j = 0; cons && j < k->nops && j < 256; j++)
        if (k->ops[j] == cons && taken[j]) cons = NULL; /* another reduction's block: stand alone */
    } else if (op->nred > 0 && is_gpu(ss)) {
      /* GPU: sketch 0 tiles the reduction alone (its consumer gets its own plan); sketch 1
       * stages its inputs in shared memory, computed at the threads of its elementwise
       * consumer when it has one */
      kind = (mask & 1) && gpu_shared_ok(op) ? PLAN_GPU_SHARED : PLAN_TILE;
      if (kind == PLAN_GPU_SHARED) s->shared = true, cons = fusable_consumer(k, op);
    } else if (op->nred > 0 && op == ss->rf_op) {
      kind = PLAN_RFACTOR;
    } else if (op->nred > 0) {
      bool alt = (mask >> bit++) & 1;
      Op *fc = fusable_consumer(k, op);
      if (fc && cpu_fused_producer(ss, fc) != op) fc = NULL; /* it has its own plan */
      if (fc) {
        /* choice: fuse into the consumer, or tile alone (the consumer then stands alone) */
        kind = alt ? PLAN_TILE : PLAN_FUSED;
        cons = alt ? NULL : fc;
        after = alt ? fc : NULL;
      } else {
        kind = is_output(k, op) && !alt ? PLAN_FUSED : PLAN_TILE;
      }
    }
    if (!sketch_add_plan(s, kind, op, cons)) return false;
    if (after && !sketch_add_plan(s, PLAN_SIMPLE, after, NULL)) return false;
    if (cons) {
      /* the consumer's plan is this one: mark it taken */
      for (int j = 0; j < k->nops && j < 256; j++)
        if (k->ops[j] == cons) taken[j] = true;
    }
  }
  /* a consumer already given its own plan before its producer chose to fuse: drop it */
  for (int i = 0; i < s->nplans; i++)
    for (int j = 0; j < s->nplans; j++)
      if (s->plans[j].consumer && s->plans[i].op == s->plans[j].consumer) return false;
  return true;
}

/* A reduction worth an rfactor sketch (Ansor's rule for little spatial parallelism): on
 * CPUs, constant extents, a last reduction axis of at least 256 that divides by 8 and
 * dominates the spatial work (at least 16 x the spatial extent product). */
static bool rfactor_worthy(const Op *op) {
  if (op->nred == 0 || op->ndim == 0) return false;
  int64_t space = 1, red;
  for (int d = 0; d < op->ndim; d++) {
    int64_t e;
    if (!ir_is_const(op->out->shape[d], &e)) return false;
    space *= e;
  }
  if (!ir_is_const(op->rext[op->nred - 1], &red)) return false;
  return red >= 256 && red % 8 == 0 && red >= 16 * space;
}

/* GPU: one more sketch where every xreduce_worthy reduction is a cross-thread reduction
 * (the others as in sketch 0); none when TEXC_NO_XREDUCE is set (to compare). */
static void sketch_add_xreduce(SketchSet *ss) {
  bool any = false;
  for (int i = 0; i < ss->k->nops; i++) any |= xreduce_worthy(ss, ss->k->ops[i]);
  const char *off = getenv("TEXC_NO_XREDUCE");
  if (!any || ss->n >= MAX_SKETCHES || (off && *off && strcmp(off, "0") != 0)) return;
  ss->xr = true;
  Sketch *s = &ss->sk[ss->n];
  if (build_sketch(ss, 0, s)) {
    snprintf(s->name, sizeof s->name, "xreduce");
    ss->n++;
  }
  ss->xr = false;
}

SketchSet *sketch_new(Kernel *k, Target t, int threads) {
  SketchSet *ss = calloc(1, sizeof *ss);
  if (!ss) die_oom(0);
  ss->k = k;
  ss->target = t;
  ss->threads = threads;
  ss->cpu = *target_cpu(NULL);
  int nred = 0;
  for (int i = 0; i < k->nops; i++) {
    nred += k->ops[i]->nred > 0;
    if (k->ops[i]->scatter) { /* no sketch takes a scatter's loops (their names are not its axes') */
      free(ss);
      return NULL;
    }
  }
  ss->lim = gpu_limits(t, target_cli_options);
  /* GPU: sketch 0 as before (global loads), sketch 1 with shared-memory tiles */
  unsigned nmask = is_gpu(ss) ? 2u : nred > 4 ? 16u : 1u << nred;
  for (unsigned m = 0; m < nmask && ss->n < MAX_SKETCHES; m++) {
    Sketch *s = &ss->sk[ss->n];
    if (!build_sketch(ss, m, s)) continue;
    if (is_gpu(ss) && m == 1 && !s->shared) continue; /* the same as sketch 0 */
    snprintf(s->name, sizeof s->name, "sketch%u", m);
    ss->n++;
  }
  sketch_add_xreduce(ss);
  for (int i = 0; !is_gpu(ss) && i < k->nops && ss->n < MAX_SKETCHES; i++) {
    if (!rfactor_worthy(k->ops[i])) continue;
    ss->rf_op = k->ops[i]; /* one more sketch: this reduction rfactored */
    Sketch *s = &ss->sk[ss->n];
    if (build_sketch(ss, 0, s)) {
      snprintf(s->name, sizeof s->name, "rfactor_%s", k->ops[i]->name);
      ss->n++;
    }
    ss->rf_op = NULL;
  }
  if (ss->n == 0) {
    free(ss);
    return NULL;
  }
  return ss;
}

void sketch_free(SketchSet *s) { free(s); }
int sketch_count(const SketchSet *s) { return s->n; }
const char *sketch_name(const SketchSet *s, int i) { return s->sk[i].name; }

/* ---------------------------------------------------------------- annotation */

/* A random divisor of N that is at most CAP. */
static int rand_divisor(Rng *r, int64_t n, int64_t cap) {
  int64_t d[64];
  int nd = 0;
  for (int64_t i = 1; i <= n && i <= cap && nd < 64; i++)
    if (n % i == 0) d[nd++] = i;
  return nd ? (int)d[rng_int(r, nd)] : 1;
}

/* A random divisor of N in [LO, CAP], or any divisor up to CAP when there is none. */
static int rand_divisor_min(Rng *r, int64_t n, int64_t lo, int64_t cap) {
  int64_t d[64];
  int nd = 0;
  for (int64_t i = lo; i <= n && i <= cap && nd < 64; i++)
    if (n % i == 0) d[nd++] = i;
  return nd ? (int)d[rng_int(r, nd)] : rand_divisor(r, n, cap);
}

/* Sample the SLEVELS factors of one spatial axis, innermost first. */
static void sample_axis(const SketchSet *ss, Rng *r, int64_t e, bool last, int *g) {
  int64_t rem = e;
  if (is_gpu(ss)) { /* g[0] = threads, g[1] = inner, g[2] unused */
    g[1] = rand_divisor(r, rem, 8);
    rem /= g[1];
    g[0] = rand_divisor(r, rem, last ? 256 : 16);
    g[2] = 1;
    return;
  }
  /* innermost: a register tile, vector-wide on the last axis (mostly), small elsewhere */
  int lanes = ss->cpu.lanes;
  g[2] = last && rng_int(r, 10) < 7 ? rand_divisor_min(r, rem, lanes, MAX_INNER)
                                    : rand_divisor(r, rem, last ? MAX_INNER : 8);
  rem /= g[2];
  g[1] = rand_divisor(r, rem, 32);
  rem /= g[1];
  g[0] = rand_divisor(r, rem, 64);
}

/* A divisor of N among whole vectors of CPU's lanes: the micro-kernel's NR (most often), 1-4
 * vectors (then any in [lanes, 64]). */
static int vector_width(const CpuInfo *cpu, Rng *r, int64_t n) {
  int L = cpu->lanes, w[6] = {cpu->nr, cpu->nr, L, 2 * L, 3 * L, 4 * L};
  int ok[6], nok = 0;
  for (int i = 0; i < 6; i++)
    if (w[i] > 0 && w[i] <= MAX_INNER && n % w[i] == 0) ok[nok++] = w[i];
  return nok ? ok[rng_int(r, nok)] : rand_divisor_min(r, n, L, MAX_INNER);
}

static int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

/* The most rows of a register tile with VREGS vectors per row that fit CPU's registers
 * beside the VREGS B vectors and the A broadcasts (cpu_describe's rule). */
static int max_rows(const CpuInfo *cpu, int vregs) {
  int rows = 1;
  while ((rows + 1) * vregs + vregs + (rows + cpu->lanes) / cpu->lanes <= cpu->vregs) rows++;
  return rows;
}

/* Register blocking (the shape of a hand-written micro-kernel): the local tile is the
 * register tile itself (S2 = 1), whole vectors on the last axis, a few rows (unrolled) on one
 * other axis, as many as fit the machine's vector registers (the micro-kernel's MR x NR when
 * they divide); the reduction runs outside it. */
static void sample_register_tile(const SketchSet *ss, const Plan *p, Rng *r, int *g) {
  const CpuInfo *cpu = &ss->cpu;
  int last = p->ns - 1, row = -1, nrow = 0;
  for (int d = 0; d < last; d++)
    if (p->s[d].extent > 1 && rng_int(r, ++nrow) == 0) row = d; /* a random candidate row axis */
  int *v = g + last * SLEVELS; /* the vectors first: the rows that fit depend on them */
  v[2] = p->block[last] ? (int)p->block[last] : vector_width(cpu, r, p->s[last].extent);
  for (int d = 0; d < p->ns; d++) {
    int *a = g + d * SLEVELS;
    int64_t e = p->s[d].extent;
    a[1] = 1;
    if (d == last) continue;
    if (d == row) {
      int vregs = (g[last * SLEVELS + 2] + cpu->lanes - 1) / cpu->lanes;
      int cap = max_rows(cpu, vregs > 0 ? vregs : 1);
      /* the most rows that fit, also when they do not divide (the tails pass runs the
       * full tiles without the guard), or a divisor */
      a[2] = cap <= e && rng_int(r, 2) ? cap : rand_divisor_min(r, e, 2, cap);
    } else a[2] = 1;
  }
  for (int d = 0; d < p->ns; d++) { /* S1: the L2 blocking of the tiles, outside the local tile */
    int *a = g + d * SLEVELS;
    a[0] = rand_divisor(r, ceil_div(p->s[d].extent, a[2]), 64);
  }
}

/* The lanes of an rfactored reduction: a multiple of 8 up to 64 dividing the extent. */
static int rfactor_lanes(Rng *r, int64_t e) {
  static const int w[] = {8, 16, 32, 64, 16, 32};
  int ok[6], nok = 0;
  for (int i = 0; i < 6; i++)
    if (e % w[i] == 0) ok[nok++] = w[i];
  return nok ? ok[rng_int(r, nok)] : 1;
}

/* ---- GPU shared-memory tiling (PLAN_GPU_SHARED): sizes and limits */

/* Variable V is 1 in CTX's eval, every other variable (and any load) 0. */
static bool unit_leaf(const Expr *e, void *ctx, int64_t *out) {
  *out = e->kind == E_VAR && e->var == ctx;
  return true;
}

/* The coefficient of V in index E (E at V = 1 minus E at 0); 0 when it does not evaluate. */
static int64_t coef_of(const Expr *e, const IrVar *v) {
  int64_t a, b;
  if (!ir_eval_int(e, unit_leaf, (void *)v, &a) || !ir_eval_int(e, unit_leaf, NULL, &b)) return 0;
  return a - b;
}

/* The tile of P's axis VAR under genes G: the block's extent of a spatial axis, the
 * extent inside R0 of a reduction axis; 1 for any other variable. */
static int64_t gpu_tile_of(const Plan *p, const int *g, const IrVar *var) {
  for (int d = 0; d < p->ns; d++)
    if (p->op->axes[d] == var) {
      const int *a = g + d * GLEVELS;
      return (int64_t)a[0] * a[1] * a[2] * a[3];
    }
  for (int d = 0; d < p->nr; d++)
    if (p->op->raxes[d] == var) {
      const int *a = g + p->ns * GLEVELS + d * GRLEVELS;
      return (int64_t)a[0] * a[1];
    }
  return 1;
}

/* Elements of buffer B's tile in shared memory (the union of the loads of B in E, per
 * dimension 1 + sum |coef| x (tile - 1), capped by B's extent) into SPAN[]; returns them. */
static int64_t gpu_span(const Plan *p, const int *g, const Expr *e, const Buffer *b, int64_t *span) {
  if (!e) return 0;
  if (e->kind == E_LOAD && e->buf == b) {
    for (int d = 0; d < b->ndim && d < MAX_AXES; d++) {
      int64_t sp = 1, ext;
      for (int v = 0; v < p->ns + p->nr; v++) {
        const IrVar *var = v < p->ns ? p->op->axes[v] : p->op->raxes[v - p->ns];
        int64_t c = coef_of(e->args[d], var);
        sp += (c < 0 ? -c : c) * (gpu_tile_of(p, g, var) - 1);
      }
      if (ir_is_const(b->shape[d], &ext) && sp > ext) sp = ext;
      if (sp > span[d]) span[d] = sp;
    }
  }
  for (int i = 0; i < e->nargs; i++) gpu_span(p, g, e->args[i], b, span);
  gpu_span(p, g, e->a, b, span);
  gpu_span(p, g, e->b, b, span);
  gpu_span(p, g, e->c, b, span);
  int64_t n = 1;
  for (int d = 0; d < b->ndim && d < MAX_AXES; d++) n *= span[d] > 0 ? span[d] : 1;
  return n;
}

/* Threads per block of P under genes G. */
static int64_t gpu_threads(const Plan *p, const int *g) {
  int64_t n = 1;
  for (int d = 0; d < p->ns; d++) n *= g[d * GLEVELS + 1];
  return n;
}

/* Whether the fetch of B (its tile's SPAN) is in 16-byte vectors under genes G: the gene,
 * and the last dimension's span a whole number of them (render_fetch). */
static bool fetch_vec(const Plan *p, const int *g, const Buffer *b, const int64_t *span) {
  int fl = p->ns * GLEVELS + p->nr * GRLEVELS, w = 16 / (dtype_bytes(b->dtype) > 0 ? dtype_bytes(b->dtype) : 16);
  return g[fl] && w > 1 && span[b->ndim - 1] % w == 0 && gpu_threads(p, g) > 1;
}

/* The padding of each row of B's shared tile under genes G (0: none), against bank
 * conflicts: threads that read down a column of a tile whose rows are an even number of
 * floats long hit the same banks (rows of 8: every fourth row in one bank); one more
 * float makes the pitch odd, four more keep 16-byte rows for a vectorized fetch (a pitch of
 * 4 mod 8). With the gene off, or rows too short or too long, none. */
static int64_t gpu_row_pad(const Plan *p, const int *g, const Buffer *b, const int64_t *span) {
  int fl = p->ns * GLEVELS + p->nr * GRLEVELS;
  int64_t len = b->ndim >= 2 ? span[b->ndim - 1] : 0;
  if (!g[fl + 3] || len < 2 || len > 1024) return 0;
  if (fetch_vec(p, g, b, span)) return len % 8 == 0 ? 4 : 0;
  return len % 2 == 0 ? 1 : 0;
}

/* Whether genes G double-buffer P's shared tiles: two of each, the next reduction step's
 * fetched into one while the block computes from the other (double_buffer); 2: their
 * copies staged through registers too (double_buffer(S, local)). */
static int gpu_double(const Plan *p, const int *g) { return g[p->ns * GLEVELS + p->nr * GRLEVELS + 5]; }

/* Shared bytes per block of P under genes G: every tensor it reads, staged (rows padded),
 * twice when double-buffered; in *WORDS the 32-bit words of one copy of them all. */
static int64_t gpu_shared_words(const Plan *p, const int *g, int64_t *words) {
  int64_t bytes = 0;
  *words = 0;
  for (int j = 0; j < p->op->nreads; j++) {
    const Buffer *b = p->op->reads[j];
    int64_t span[MAX_AXES] = {0};
    if (b->ndim > MAX_AXES) return INT64_MAX;
    int64_t n = gpu_span(p, g, p->op->value, b, span), pad = gpu_row_pad(p, g, b, span);
    if (pad) n = n / span[b->ndim - 1] * (span[b->ndim - 1] + pad);
    bytes += n * dtype_bytes(b->dtype);
  }
  *words = bytes / 4;
  return gpu_double(p, g) ? 2 * bytes : bytes;
}


/* Whether genes G fit the Target's limits: threads per block, shared memory per block,
 * and at most GPU_MAX_ACC accumulators per thread (vthread copies included); with staged
 * copies, at most GPU_MAX_HELD accumulators and staging registers (a thread stages its
 * share of the copied words). */
static bool gpu_fits(const SketchSet *ss, const Plan *p, const int *g) {
  int64_t acc = 1, words = 0, threads = gpu_threads(p, g);
  for (int d = 0; d < p->ns; d++) {
    const int *a = g + d * GLEVELS;
    acc *= (int64_t)a[0] * a[2] * a[3];
  }
  int64_t bytes = gpu_shared_words(p, g, &words);
  if (gpu_double(p, g) == 2 && acc + (words + threads - 1) / (threads > 0 ? threads : 1) > GPU_MAX_HELD) return false;
  return acc <= GPU_MAX_ACC && threads <= ss->lim.max_threads_per_block && bytes <= ss->lim.max_shared_bytes;
}

/* One random draw of P's genes: per spatial axis S4 (<= 4), S3 (<= 8), threads (<= 64 on
 * the last axis, <= 16 elsewhere: coalesced rows), a vthread factor a quarter of the time;
 * per reduction axis R2 (<= 4) and R1 (R1 x R2 <= 32); the flags. */
static void gpu_draw(Rng *r, const Plan *p, int *g) {
  for (int d = 0; d < p->ns; d++) {
    int *a = g + d * GLEVELS;
    int64_t rem = p->s[d].extent;
    bool last = d == p->ns - 1;
    a[3] = rand_divisor(r, rem, 4), rem /= a[3];
    a[2] = rand_divisor(r, rem, 8), rem /= a[2];
    a[1] = rand_divisor(r, rem, last ? 64 : 16), rem /= a[1];
    a[0] = rng_int(r, 4) == 0 ? rand_divisor(r, rem, 4) : 1;
  }
  for (int d = 0; d < p->nr; d++) {
    int *a = g + p->ns * GLEVELS + d * GRLEVELS;
    int64_t e = p->r[d].extent;
    a[1] = rand_divisor(r, e, 4);
    a[0] = rand_divisor(r, e / a[1], 32 / a[1]);
  }
  int f = p->ns * GLEVELS + p->nr * GRLEVELS;
  g[f] = rng_int(r, 5) != 0;     /* vectorized fetch */
  g[f + 1] = rng_int(r, 4);      /* unroll */
  g[f + 2] = rng_int(r, 4) != 0; /* vectorized register tile and store */
  g[f + 3] = rng_int(r, 2);      /* padded shared rows */
  g[f + 4] = rng_int(r, 5);      /* auto_unroll: auto_unroll_steps */
  g[f + 5] = 0;                  /* double buffering: sample_gpu_shared */
}

/* Random genes of a GPU_SHARED plan that fit the Target, preferring at least a warp of
 * threads per block (the first fitting draw when none has); then, but for the untuned
 * default, double buffering two times in three (staged through registers half of those)
 * where the doubled tiles (and the staging registers) fit. */
static void sample_gpu_shared(const SketchSet *ss, const Plan *p, Rng *r, int *g) {
  int tmp[CAND_MAX_GENES];
  bool have = false;
  for (int tries = 0; tries < 64; tries++) {
    gpu_draw(r, p, tmp);
    if (!gpu_fits(ss, p, tmp)) continue;
    if (!have || gpu_threads(p, tmp) >= 32) memcpy(g, tmp, sizeof(int) * (size_t)p->ngenes), have = true;
    if (gpu_threads(p, tmp) >= 32) break;
  }
  if (!have) gpu_draw(r, p, g); /* nothing fits: lowering's gpu_check rejects it */
  if (ss->fixed) return;
  int f = p->ns * GLEVELS + p->nr * GRLEVELS;
  g[f + 5] = rng_int(r, 3);
  while (have && g[f + 5] > 0 && !gpu_fits(ss, p, g)) g[f + 5]--;
}

/* ---- GPU cross-thread reduction (PLAN_GPU_XREDUCE): genes */

/* The reduction iterations of P (the product of its extents). */
static int64_t xr_red(const Plan *p) {
  int64_t n = 1;
  for (int d = 0; d < p->nr; d++) n *= p->r[d].extent;
  return n;
}

/* The thread counts of P: powers of two from a warp up to the Target's threads per block,
 * and no more than the first that covers the reduction. Returns how many, in OUT. */
static int xr_thread_choices(const SketchSet *ss, const Plan *p, int *out) {
  int n = 0;
  int64_t red = xr_red(p);
  for (int64_t t = XR_WARP; t <= ss->lim.max_threads_per_block && n < 16; t *= 2) {
    out[n++] = (int)t;
    if (t >= red) break;
  }
  if (n == 0) out[n++] = XR_WARP; /* not reached: xreduce_worthy asks for a warp */
  return n;
}

/* Unroll factors of the serial part: 1, 2, 4, 8, no more than its iterations. */
static int xr_unroll(Rng *r, const Plan *p, int threads) {
  int64_t serial = (xr_red(p) + threads - 1) / threads;
  int u = 1 << rng_int(r, 4);
  while (u > 1 && u > serial) u /= 2;
  return u;
}

/* Rows of a block (on threadIdx.y, each reduced by its own T threads): 1, 2, 4 or 8, at
 * most the spatial iterations, T x Y within the Target's threads per block. */
static int xr_rows(const SketchSet *ss, const Plan *p, Rng *r, int threads) {
  int64_t spatial = 1;
  for (int d = 0; d < p->ns; d++) spatial *= p->s[d].extent;
  int y = 1 << rng_int(r, 4);
  while (y > 1 && (y > spatial || (int64_t)y * threads > ss->lim.max_threads_per_block)) y /= 2;
  return y;
}

static void sample_xreduce(const SketchSet *ss, const Plan *p, Rng *r, int *g) {
  int ch[16], n = xr_thread_choices(ss, p, ch);
  g[0] = ch[rng_int(r, n)];
  g[1] = xr_unroll(r, p, g[0]);
  g[2] = rng_int(r, 2) ? xr_rows(ss, p, r, g[0]) : 1;
}

/* Mutate the threads (to a neighbouring power of two within the choices), the rows or the
 * unroll. */
static void mutate_xreduce(const SketchSet *ss, const Plan *p, Rng *r, int *g) {
  int ch[16], n = xr_thread_choices(ss, p, ch), at = 0;
  for (int i = 0; i < n; i++)
    if (ch[i] == g[0]) at = i;
  int pick = rng_int(r, 3);
  if (pick == 0) {
    at += rng_int(r, 2) ? 1 : -1;
    g[0] = ch[at < 0 ? 1 % n : at >= n ? (n > 1 ? n - 2 : 0) : at];
  } else if (pick == 1) {
    g[2] = xr_rows(ss, p, r, g[0]);
  }
  while (g[2] > 1 && (int64_t)g[2] * g[0] > ss->lim.max_threads_per_block) g[2] /= 2;
  g[1] = xr_unroll(r, p, g[0]);
}

static void sample_plan(const SketchSet *ss, const Plan *p, Rng *r, int *g) {
  if (p->kind == PLAN_GPU_XREDUCE) {
    sample_xreduce(ss, p, r, g);
    return;
  }
  if (p->kind == PLAN_GPU_SHARED) {
    sample_gpu_shared(ss, p, r, g);
    return;
  }
  if (p->kind == PLAN_RFACTOR) {
    g[0] = rfactor_lanes(r, p->r[p->nr - 1].extent);
    g[1] = 1 + rng_int(r, p->ns);
    return;
  }
  if (p->kind == PLAN_SIMPLE) {
    for (int d = 0; d < p->ns; d++)
      g[d] = rand_divisor(r, p->s[d].extent, is_gpu(ss) ? 1024 : (d == p->ns - 1 ? 64 : 8));
    g[p->ns] = rng_int(r, p->ns + 1);
    g[p->ns + 1] = rng_int(r, 2);
    return;
  }
  bool regtile = !is_gpu(ss) && p->kind == PLAN_FUSED && p->ns > 0 && rng_int(r, 2);
  if (regtile) {
    sample_register_tile(ss, p, r, g);
  } else {
    for (int d = 0; d < p->ns; d++)
      sample_axis(ss, r, p->s[d].extent, d == p->ns - 1, g + d * SLEVELS);
  }
  for (int d = 0; d < p->nr; d++) g[p->ns * SLEVELS + d] = rand_divisor(r, p->r[d].extent, 32);
  int a = p->ns * SLEVELS + p->nr;
  g[a] = p->ns ? 1 + rng_int(r, p->ns) : 0;      /* fused parallel (block) loops */
  g[a + 1] = regtile || rng_int(r, 8) != 0;      /* vectorize: mostly yes */
  g[a + 2] = regtile ? 1 + rng_int(r, 2) : rng_int(r, 3); /* unroll: none, inner spatial, + inner reduction */
  g[a + 3] = regtile && p->pack && rng_int(r, 2);        /* pack: half of the register tiles */
}

/* The smallest prime factor of N > 1. */
static int small_prime(int n) {
  for (int q = 2; q * q <= n; q++)
    if (n % q == 0) return q;
  return n;
}

/* A CPU tile of an axis with a packed block B (Plan.block) gets B as its innermost factor
 * S3, its S1 and S2 shrunk by prime factors until S1 x S2 x B divides the extent. */
static void fit_blocks(const SketchSet *ss, const Plan *p, int *g) {
  if (is_gpu(ss) || (p->kind != PLAN_TILE && p->kind != PLAN_FUSED)) return;
  for (int d = 0; d < p->ns; d++) {
    int64_t b = p->block[d], e = p->s[d].extent;
    if (!b) continue;
    int *a = g + d * SLEVELS;
    a[2] = (int)b;
    for (int l = 0; l < 2; l++)
      while (a[l] > 1 && (e % ((int64_t)a[0] * a[1] * b) != 0)) a[l] /= small_prime(a[l]);
  }
}

/* A packed panel (Plan.pack) is copied once per iteration of the last outer loop, and
 * used by every tile below it: the other axes' outer loops get extent 1 (their S1 spans
 * the rest of the axis), so the copy is made once per column block. A panel that would not
 * fit half of the L2 cache is not packed. */
static void fit_pack(const SketchSet *ss, const Plan *p, int *g) {
  int a = p->ns * SLEVELS + p->nr;
  if (is_gpu(ss) || p->kind != PLAN_FUSED || !g[a + 3]) return;
  const int *l = g + (p->ns - 1) * SLEVELS;
  int64_t cols = (int64_t)l[0] * l[1] * l[2], l2 = ss->cpu.l2 > 0 ? ss->cpu.l2 : 256 * 1024;
  if (!p->pack || p->pack_rows * cols * 4 > l2 / 2) {
    g[a + 3] = 0;
    return;
  }
  for (int d = 0; d < p->ns - 1; d++) {
    int *f = g + d * SLEVELS;
    int64_t s1 = ceil_div(p->s[d].extent, (int64_t)f[1] * f[2]);
    f[0] = s1 < INT32_MAX ? (int)s1 : 1;
  }
}

/* Keep a tiled CPU plan parallel: while its outermost loops have fewer than 2 x threads
 * iterations in all, move a prime factor from an S1 (then S2) tile out to them. A schedule
 * without parallel loops can look fast on a loaded machine (no straggler thread) but it is
 * never the answer for the threads asked for. */
static void ensure_parallel(const SketchSet *ss, const Plan *p, int *g) {
  if (is_gpu(ss) || (p->kind != PLAN_TILE && p->kind != PLAN_FUSED) || p->ns == 0) return;
  for (int guard = 0; guard < 64; guard++) {
    int64_t prod = 1;
    for (int d = 0; d < p->ns; d++) {
      const int *a = g + d * SLEVELS;
      prod *= ceil_div(p->s[d].extent, (int64_t)a[0] * a[1] * a[2]);
    }
    if (prod >= 2 * (int64_t)ss->threads) return;
    int *f = NULL;
    for (int l = 0; l < 2 && !f; l++)
      for (int d = 0; d < p->ns && !f; d++)
        if (g[d * SLEVELS + l] > 1) f = &g[d * SLEVELS + l];
    if (!f) return;
    *f /= small_prime(*f);
  }
}

/* Keep a GPU tiled plan (global loads) within the Target's threads per block: divide the
 * largest thread factor by its smallest prime until they fit. */
static void gpu_clamp_threads(const SketchSet *ss, const Plan *p, int *g) {
  if (!is_gpu(ss) || (p->kind != PLAN_TILE && p->kind != PLAN_FUSED)) return;
  for (int guard = 0; guard < 64; guard++) {
    int64_t n = 1;
    int big = -1;
    for (int d = 0; d < p->ns; d++) {
      n *= g[d * SLEVELS];
      if (big < 0 || g[d * SLEVELS] > g[big * SLEVELS]) big = d;
    }
    if (big < 0 || n <= ss->lim.max_threads_per_block || g[big * SLEVELS] <= 1) return;
    g[big * SLEVELS] /= small_prime(g[big * SLEVELS]);
  }
}

void sketch_sample(const SketchSet *ss, Rng *r, Cand *out) {
  sketch_sample_of(ss, rng_int(r, ss->n), r, out);
}

void sketch_sample_of(const SketchSet *ss, int k, Rng *r, Cand *out) {
  memset(out, 0, sizeof *out);
  out->sketch = k;
  const Sketch *s = &ss->sk[out->sketch];
  out->ngenes = s->ngenes;
  for (int i = 0; i < s->nplans; i++) {
    sample_plan(ss, &s->plans[i], r, out->genes + s->plans[i].gene0);
    fit_blocks(ss, &s->plans[i], out->genes + s->plans[i].gene0);
    fit_pack(ss, &s->plans[i], out->genes + s->plans[i].gene0);
    ensure_parallel(ss, &s->plans[i], out->genes + s->plans[i].gene0);
    gpu_clamp_threads(ss, &s->plans[i], out->genes + s->plans[i].gene0);
  }
}

/* Move a factor between two tile levels of one axis (Ansor's MutateTileSize).
 * G points to the axis's inner factors (N of them); the outermost level is implicit. */
static void mutate_axis(Rng *r, int64_t extent, int *g, int n, int64_t cap_inner) {
  int64_t prod = 1;
  for (int i = 0; i < n; i++) prod *= g[i];
  int from = rng_int(r, n + 1), to = rng_int(r, n + 1); /* n: the implicit outer level */
  if (from == to) return;
  int64_t fv = from == n ? extent / prod : g[from];
  if (fv <= 1) return;
  int d = rand_divisor(r, fv, fv);
  if (d <= 1) d = (int)fv;
  if (to < n && (int64_t)g[to] * d > (to == n - 1 ? cap_inner : 256)) return;
  int old_from = from < n ? g[from] : 0, old_to = to < n ? g[to] : 0;
  if (from < n) g[from] /= d;
  if (to < n) g[to] *= d;
  /* factors that need not divide (a register tile's rows) may leave a tail, never a
   * level wider than the axis: the inner levels within it, all within twice it */
  int64_t all = 1, inner = 1;
  for (int i = 0; i < n; i++) all *= g[i], inner *= i ? g[i] : 1;
  if (all >= 2 * extent || inner > extent) {
    if (from < n) g[from] = old_from;
    if (to < n) g[to] = old_to;
  }
}

/* Mutate a GPU_SHARED plan: a spatial tile (most often), a reduction tile or a flag; a
 * mutation that leaves the Target's limits is undone. */
static void mutate_gpu_shared(const SketchSet *ss, const Plan *p, Rng *r, int *g) {
  int old[CAND_MAX_GENES];
  memcpy(old, g, sizeof(int) * (size_t)p->ngenes);
  int f = p->ns * GLEVELS + p->nr * GRLEVELS, pick = rng_int(r, 10);
  if (pick < 6) {
    int d = rng_int(r, p->ns);
    mutate_axis(r, p->s[d].extent, g + d * GLEVELS, GLEVELS, 4);
  } else if (pick < 8 && p->nr) {
    int d = rng_int(r, p->nr);
    mutate_axis(r, p->r[d].extent, g + p->ns * GLEVELS + d * GRLEVELS, GRLEVELS, 4);
  } else {
    int k = rng_int(r, 6);
    g[f + k] = k == 1 ? rng_int(r, 4) : k == 4 ? rng_int(r, 5) : k == 5 ? (g[f + k] + 1 + rng_int(r, 2)) % 3 : !g[f + k];
  }
  if (!gpu_fits(ss, p, g)) memcpy(g, old, sizeof(int) * (size_t)p->ngenes);
}

void sketch_mutate(const SketchSet *ss, Rng *r, Cand *c) {
  const Sketch *s = &ss->sk[c->sketch];
  if (s->nplans == 0) return;
  const Plan *p = &s->plans[rng_int(r, s->nplans)];
  int *g = c->genes + p->gene0;
  if (p->kind == PLAN_RFACTOR) {
    if (rng_int(r, 2)) g[0] = rfactor_lanes(r, p->r[p->nr - 1].extent);
    else g[1] = 1 + rng_int(r, p->ns);
    return;
  }
  if (p->kind == PLAN_GPU_SHARED) {
    mutate_gpu_shared(ss, p, r, g);
    return;
  }
  if (p->kind == PLAN_GPU_XREDUCE) {
    mutate_xreduce(ss, p, r, g);
    return;
  }
  if (p->kind == PLAN_SIMPLE) {
    int d = rng_int(r, p->ns + 1);
    if (d < p->ns) g[d] = rand_divisor(r, p->s[d].extent, is_gpu(ss) ? 1024 : 64);
    else g[p->ns + rng_int(r, 2)] = rng_int(r, 2) ? rng_int(r, p->ns + 1) : rng_int(r, 2);
    return;
  }
  int a = p->ns * SLEVELS + p->nr, pick = rng_int(r, 10);
  if (pick < 6 && p->ns) { /* tile sizes, most often */
    int d = rng_int(r, p->ns);
    mutate_axis(r, p->s[d].extent, g + d * SLEVELS, is_gpu(ss) ? 2 : SLEVELS,
                d == p->ns - 1 ? MAX_INNER : 32);
    fit_blocks(ss, p, g);
    fit_pack(ss, p, g);
    ensure_parallel(ss, p, g);
    gpu_clamp_threads(ss, p, g);
  } else if (pick < 8 && p->nr) {
    int d = rng_int(r, p->nr);
    mutate_axis(r, p->r[d].extent, g + p->ns * SLEVELS + d, 1, 64);
  } else if (pick == 8) {
    g[a] = p->ns ? 1 + rng_int(r, p->ns) : 0;
  } else if (p->pack && !is_gpu(ss) && rng_int(r, 3) == 0) {
    g[a + 3] = !g[a + 3];
    fit_pack(ss, p, g);
    ensure_parallel(ss, p, g);
  } else {
    g[a + 1 + rng_int(r, 2)] = rng_int(r, 3) % (rng_int(r, 2) ? 2 : 3);
  }
}

bool sketch_crossover(const SketchSet *ss, Rng *r, const Cand *a, const Cand *b, Cand *out) {
  if (a->sketch != b->sketch) return false;
  const Sketch *s = &ss->sk[a->sketch];
  *out = *a;
  for (int i = 0; i < s->nplans; i++)
    if (rng_int(r, 2)) {
      const Plan *p = &s->plans[i];
      memcpy(out->genes + p->gene0, b->genes + p->gene0, sizeof(int) * (size_t)p->ngenes);
    }
  return true;
}

/* ---------------------------------------------------------------- rendering */

/* Format a loop or stage name into a buffer of NM bytes. */
static void nm(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nm(char *dst, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, NM, fmt, ap);
  va_end(ap);
}

typedef struct Text {
  char *s;
  size_t n, cap;
} Text;

static void emit(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(Text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[1024];
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if (t->n + (size_t)k + 2 > t->cap) {
    t->cap = (t->n + (size_t)k + 2) * 2;
    t->s = realloc(t->s, t->cap);
    if (!t->s) die_oom(0);
  }
  memcpy(t->s + t->n, tmp, (size_t)k);
  t->n += (size_t)k;
  t->s[t->n++] = '\n';
  t->s[t->n] = 0;
}

/* Loop names of one axis at each level (NULL: the level has extent 1 and no loop). */
typedef struct Levels {
  char name[5][NM];
  bool has[5];
} Levels;

/* Is AXIS one of the tags of the names the steps below make from a stage's name alone
 * (STAGE_b1, STAGE_t1, STAGE_f1, STAGE_vo, STAGE_ko, STAGE_by, ...)? An axis of that name
 * would make the same names by split_levels (batch_matmul's `b`: Z_b2 twice). */
static bool tag_named(const char *axis) {
  static const char *const tags[] = {"b", "t", "f", "o", "v", "vo", "ko", "kv", "kt", "ku", "rf", "bo", "by"};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (!strcmp(axis, tags[i])) return true;
  return false;
}

/* AXIS as the part of the loop names made from it: AXIS, or AXIS_ for one named like a tag. */
static void axis_key(char *dst, const char *axis) { nm(dst, tag_named(axis) ? "%s_" : "%s", axis); }

/* Split LOOP into NLV levels with inner factors F[0..nlv-1) (innermost last); names are
 * STAGE_AXIS0 .. STAGE_AXIS<nlv-1> (STAGE_AXIS_0 .. for an axis named like a tag). A
 * factor of 1 makes no loop. */
static void split_levels(Text *t, const char *stage, const char *axis_name, const char *loop,
                         const int *f, int nlv, Levels *lv) {
  char axis[NM];
  axis_key(axis, axis_name);
  char cur[NM];
  nm(cur, "%s", loop);
  memset(lv, 0, sizeof *lv);
  int first = nlv;
  for (int l = nlv - 1; l >= 1; l--)
    if (f[l - 1] > 1) first = l;
  for (int l = nlv - 1; l >= 1; l--) {
    if (f[l - 1] <= 1) continue;
    char outer[NM];
    if (l == first) nm(outer, "%s_%s0", stage, axis);
    else nm(outer, "%s_%s_t%d", stage, axis, l);
    nm(lv->name[l], "%s_%s%d", stage, axis, l);
    lv->has[l] = true;
    emit(t, "%s, %s = split(%s, %d)", outer, lv->name[l], cur, f[l - 1]);
    nm(cur, "%s", outer);
  }
  nm(lv->name[0], "%s", cur);
  lv->has[0] = true;
}

/* Append the loops at level L of axes LV[0..n) to a comma list. */
static void list_level(char *buf, size_t sz, const Levels *lv, int n, int l) {
  for (int d = 0; d < n; d++) {
    if (!lv[d].has[l]) continue;
    size_t len = strlen(buf);
    snprintf(buf + len, sz - len, "%s%s", len ? ", " : "", lv[d].name[l]);
  }
}

/* The number of outer loops to fuse for parallelism: at least WANT, more while the fused
 * loops have fewer than 2 x THREADS iterations (a batch axis of extent 1 alone gives no
 * parallelism); 0 when all outer loops together have a single iteration. OUTER[d] is the
 * extent of axis d's outermost loop. */
static int par_depth(const int64_t *outer, int ns, int want, int threads) {
  if (want <= 0 || ns == 0) return 0;
  int depth = want < ns ? want : ns;
  int64_t prod = 1;
  for (int d = 0; d < depth; d++) prod *= outer[d];
  while (depth < ns && prod < 2 * (int64_t)threads) prod *= outer[depth++];
  return prod > 1 ? depth : 0;
}

/* The extents of the outermost loops of P's spatial axes under genes G, where NF inner
 * factors per axis (from G + d * STRIDE) are split off. */
static void outer_extents(const Plan *p, const int *g, int stride, int nf, int64_t *out) {
  for (int d = 0; d < p->ns; d++) {
    int64_t e = p->s[d].extent;
    for (int l = 0; l < nf; l++) e = ceil_div(e, g[d * stride + l] > 0 ? g[d * stride + l] : 1);
    out[d] = e > 0 ? e : 1;
  }
}

/* Fuse the level-0 loops of the first DEPTH axes and mark the result parallel (CPU) or
 * bind it to blockIdx.x (GPU). Returns the name of the fused loop in OUT. */
static void fuse_outer(Text *t, const char *stage, Levels *lv, int depth, const char *kind) {
  if (depth <= 0) return;
  char cur[NM];
  nm(cur, "%s", lv[0].name[0]);
  for (int d = 1; d < depth; d++) {
    char f[NM];
    nm(f, "%s_f%d", stage, d);
    emit(t, "%s = fuse(%s, %s)", f, cur, lv[d].name[0]);
    nm(cur, "%s", f);
  }
  emit(t, kind, cur);
}

static void loop_ref(char *buf, size_t sz, const char *stage, const char *axis) {
  (void)sz;
  nm(buf, "%s.%s", stage, axis);
}

/* SIMPLE on GPUs: all axes fused, split by the thread count, bound. */
/* Split every reduction axis of P's stage ST in two, by its gene. */
static void split_reductions(Text *t, const Plan *p, const char *st, const int *g, Levels *rl) {
  for (int d = 0; d < p->nr; d++) {
    char ref[NM];
    loop_ref(ref, sizeof ref, st, p->r[d].name);
    int f[1] = {g[p->ns * SLEVELS + d]};
    split_levels(t, st, p->r[d].name, ref, f, 2, &rl[d]);
  }
}

/* Threads per block of a GPU SIMPLE plan under genes G: 32 to 512, at most its iterations. */
/* The axis of P's op that a scan runs along (a serial loop of its own), or -1. */
static int scan_axis(const Plan *p) { return p->op->is_scan ? p->op->scan_dim : -1; }

static int64_t simple_gpu_threads(const Plan *p, const int *g) {
  int64_t total = 1, th = 32 << (g[0] % 5);
  for (int d = 0; d < p->ns; d++)
    if (d != scan_axis(p)) total *= p->s[d].extent;
  return th < total ? th : total;
}

/* SIMPLE on a GPU: the axes fused, split into blocks of threads. A scan's axis stays a
 * serial loop inside each thread (moved innermost first when it is not). */
static void render_simple_gpu(const Plan *p, const int *g, Text *t) {
  const char *st = p->op->name;
  int sc = scan_axis(p), first = sc == 0 ? 1 : 0;
  if (first >= p->ns) return; /* a scan alone: one thread runs it (the default) */
  if (sc >= 0 && sc != p->ns - 1) {
    char order[1024] = "";
    for (int d = 0; d <= p->ns; d++) {
      int a = d < p->ns ? d : sc;
      if (d < p->ns && d == sc) continue;
      size_t len = strlen(order);
      snprintf(order + len, sizeof order - len, "%s%s.%s", len ? ", " : "", st, p->s[a].name);
    }
    emit(t, "reorder(%s)", order);
  }
  char cur[NM];
  nm(cur, "%s.%s", st, p->s[first].name);
  for (int d = first + 1, k = 1; d < p->ns; d++) {
    if (d == sc) continue;
    char f[NM];
    nm(f, "%s_f%d", st, k++);
    emit(t, "%s = fuse(%s, %s.%s)", f, cur, st, p->s[d].name);
    nm(cur, "%s", f);
  }
  emit(t, "%s_b, %s_t = split(%s, %lld)", st, st, cur, (long long)simple_gpu_threads(p, g));
  emit(t, "bind(%s_b, blockIdx.x)", st);
  emit(t, "bind(%s_t, threadIdx.x)", st);
}

/* SIMPLE: each axis split in two; outer loops fused and parallel, inner vectorized. */
static void render_simple(const SketchSet *ss, const Plan *p, const int *g, Text *t) {
  int64_t outer[MAX_AXES] = {0};
  outer_extents(p, g, 1, 1, outer);
  const char *st = p->op->name;
  if (is_gpu(ss)) {
    render_simple_gpu(p, g, t);
    return;
  }
  Levels lv[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    char ref[NM];
    loop_ref(ref, sizeof ref, st, p->s[d].name);
    int f[1] = {g[d]};
    split_levels(t, st, p->s[d].name, ref, f, 2, &lv[d]);
  }
  char order[512] = "";
  list_level(order, sizeof order, lv, p->ns, 0);
  list_level(order, sizeof order, lv, p->ns, 1);
  if (p->ns > 1) emit(t, "reorder(%s)", order);
  fuse_outer(t, st, lv, par_depth(outer, p->ns, g[p->ns], ss->threads), "parallel(%s)");
  if (g[p->ns + 1] && p->ns && lv[p->ns - 1].has[1]) emit(t, "vectorize(%s)", lv[p->ns - 1].name[1]);
}

/* The innermost tiled block of a CPU reduction stage: R0 S2 R1 S3 below the loops already
 * placed (OUTER, a comma list), with vectorize and unroll. F: per spatial axis the
 * factors of levels 2 and 3; RF: per reduction axis R1. */
static void render_inner(const SketchSet *ss, const Plan *p, const char *st, const char *outer,
                         const int *g, bool split_s1, Text *t) {
  Levels sl[MAX_AXES], rl[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    char ref[NM];
    loop_ref(ref, sizeof ref, st, p->s[d].name);
    const int *f = g + d * SLEVELS;
    if (split_s1) {
      split_levels(t, st, p->s[d].name, ref, f, 4, &sl[d]);
    } else { /* fused: the axis spans S2*S3 only; levels 2, 3 */
      Levels tmp;
      int ff[1] = {f[2]};
      split_levels(t, st, p->s[d].name, ref, ff, 2, &tmp);
      memset(&sl[d], 0, sizeof sl[d]);
      sl[d].has[2] = true;
      nm(sl[d].name[2], "%s", tmp.name[0]);
      sl[d].has[3] = tmp.has[1];
      nm(sl[d].name[3], "%s", tmp.name[1]);
    }
  }
  split_reductions(t, p, st, g, rl);
  char order[1024];
  nm(order, "%s", outer);
  if (split_s1) {
    list_level(order, sizeof order, sl, p->ns, 0);
    list_level(order, sizeof order, sl, p->ns, 1);
  }
  list_level(order, sizeof order, rl, p->nr, 0);
  list_level(order, sizeof order, sl, p->ns, 2);
  list_level(order, sizeof order, rl, p->nr, 1);
  list_level(order, sizeof order, sl, p->ns, 3);
  emit(t, "reorder(%s)", order);
  int a = p->ns * SLEVELS + p->nr;
  if (split_s1) {
    int64_t oe[MAX_AXES] = {0};
    outer_extents(p, g, SLEVELS, SLEVELS, oe);
    fuse_outer(t, st, sl, par_depth(oe, p->ns, g[a], ss->threads), "parallel(%s)");
  }
  bool vec = g[a + 1] && p->ns && sl[p->ns - 1].has[3];
  if (vec) emit(t, "vectorize(%s)", sl[p->ns - 1].name[3]);
  if (g[a + 2] >= 1) {
    /* copies of the body: at most 32 from the spatial tile, UNROLL_COPIES in all (an int8
     * convolution's 2 x 8 tile by 3 x 16 reduction steps, 768 copies of four vpdpbusd,
     * took LLVM 13 s to build) */
    int64_t prod = 1, copies = 1;
    for (int d = 0; d < p->ns - (vec ? 1 : 0); d++)
      if (sl[d].has[3] && (prod *= g[d * SLEVELS + 2]) <= 32) {
        emit(t, "unroll(%s)", sl[d].name[3]);
        copies = prod;
      }
    for (int d = 0; g[a + 2] >= 2 && d < p->nr; d++) {
      int64_t f = g[p->ns * SLEVELS + d];
      if (rl[d].has[1] && f <= 16 && copies * f <= UNROLL_COPIES) {
        emit(t, "unroll(%s)", rl[d].name[1]);
        copies *= f;
      }
    }
  }
}

static void cache_axis_names(const Op *op, const Buffer *b, char names[][NM]);

/* FUSED on CPUs: the consumer CS tiled S0 S1 (parallel) Si; the producer at its S1. */
static void render_fused_cpu(const SketchSet *ss, const Plan *p, const int *g, Text *t) {
  const char *prod = p->op->name;
  char cs[NM], pst[64];
  if (p->consumer) {
    nm(cs, "%s", p->consumer->name);
    nm(pst, "%s", prod);
  } else {
    nm(cs, "%s", prod);
    nm(pst, "%s_local", prod);
    emit(t, "%s = cache_write(%s, local)", pst, prod);
  }
  Levels lv[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    const char *ax = p->consumer ? p->cons_axes[d] : p->s[d].name;
    char ref[NM];
    loop_ref(ref, sizeof ref, cs, ax);
    const int *f = g + d * SLEVELS;
    int ff[2] = {f[0], f[1] * f[2]};
    split_levels(t, cs, ax, ref, ff, 3, &lv[d]);
  }
  char order[512] = "";
  for (int l = 0; l < 3; l++) list_level(order, sizeof order, lv, p->ns, l);
  if (p->ns > 1) emit(t, "reorder(%s)", order);
  int a = p->ns * SLEVELS + p->nr;
  int64_t oe[MAX_AXES] = {0};
  outer_extents(p, g, SLEVELS, SLEVELS, oe);
  int depth = par_depth(oe, p->ns, g[a], ss->threads);
  fuse_outer(t, cs, lv, depth, "parallel(%s)");
  /* the attach point: the last loop above the inner tile */
  const char *at = NULL;
  char fused[NM];
  for (int d = 0; d < p->ns; d++)
    if (lv[d].has[1]) at = lv[d].name[1];
  if (!at && p->ns) {
    if (depth >= p->ns && p->ns > 1) {
      nm(fused, "%s_f%d", cs, p->ns - 1);
      at = fused;
    } else {
      at = lv[p->ns - 1].name[0];
    }
  }
  if (at) emit(t, "compute_at(%s, %s, %s)", pst, cs, at);
  if (g[a + 3] && p->pack && p->ns) { /* the panel: at the last outer loop (fused or not) */
    char ax[MAX_AXES][NM], bp[NM], at0[NM];
    nm(bp, "%s_pack", p->pack->name);
    if (depth >= p->ns && p->ns > 1) nm(at0, "%s_f%d", cs, p->ns - 1);
    else nm(at0, "%s", lv[p->ns - 1].name[0]);
    cache_axis_names(p->op, p->pack, ax);
    emit(t, "%s = cache_read(%s, local, %s)", bp, p->pack->name, pst);
    emit(t, "compute_at(%s, %s, %s)", bp, cs, at0);
    emit(t, "vectorize(%s.%s)", bp, ax[p->pack->ndim - 1]);
  }
  if (g[a + 1] && p->ns && lv[p->ns - 1].has[2]) emit(t, "vectorize(%s)", lv[p->ns - 1].name[2]);
  Plan q = *p;
  render_inner(ss, &q, pst, "", g, false, t);
}

/* GPU tiling: S0 fused -> blockIdx.x, S1 fused -> threadIdx.x, then R0 R1 S2. */
static void render_tile_gpu(const Plan *p, const int *g, Text *t) {
  const char *st = p->op->name;
  char pst[NM];
  nm(pst, "%s", st);
  Levels sl[MAX_AXES], rl[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    char ref[NM];
    loop_ref(ref, sizeof ref, st, p->s[d].name);
    int f[2] = {g[d * SLEVELS], g[d * SLEVELS + 1]};
    split_levels(t, st, p->s[d].name, ref, f, 3, &sl[d]);
    sl[d].has[1] = true; /* the thread level always exists (a split by 1 is not made) */
    if (f[0] <= 1) {
      char o[NM], ax[NM];
      axis_key(ax, p->s[d].name);
      nm(o, "%s", sl[d].name[0]);
      nm(sl[d].name[0], "%s_%sb", st, ax);
      nm(sl[d].name[1], "%s_%s1", st, ax);
      emit(t, "%s, %s = split(%s, 1)", sl[d].name[0], sl[d].name[1], o);
    }
  }
  split_reductions(t, p, st, g, rl);
  char order[1024] = "";
  list_level(order, sizeof order, sl, p->ns, 0);
  list_level(order, sizeof order, sl, p->ns, 1);
  list_level(order, sizeof order, rl, p->nr, 0);
  list_level(order, sizeof order, rl, p->nr, 1);
  list_level(order, sizeof order, sl, p->ns, 2);
  emit(t, "reorder(%s)", order);
  fuse_outer(t, st, sl, p->ns, "bind(%s, blockIdx.x)");
  Levels th[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    th[d] = sl[d];
    nm(th[d].name[0], "%s", sl[d].name[1]);
  }
  char stt[NM];
  nm(stt, "%s_t", st);
  fuse_outer(t, stt, th, p->ns, "bind(%s, threadIdx.x)");
}

/* ---- GPU shared-memory tiling (PLAN_GPU_SHARED): the steps */

/* Fuse the loops NAMES[0..n) of stage ST (adjacent, in order) into one; its name in OUT
 * (the loop itself when n == 1). */
static void fuse_list(Text *t, const char *st, const char *tag, char names[][NM], int n, char *out) {
  nm(out, "%s", names[0]);
  for (int i = 1; i < n; i++) {
    char f[NM];
    nm(f, "%s_%s%d", st, tag, i);
    emit(t, "%s = fuse(%s, %s)", f, out, names[i]);
    nm(out, "%s", f);
  }
}

/* The axis names of the cache_read stage of B for P's stage (schedule.c's cache_axes: the
 * indices of the first load of B where all are distinct plain names, else ax0, ax1, ...). */
static void cache_axis_names(const Op *op, const Buffer *b, char names[][NM]) {
  const Expr *ld = ir_first_load(op->value, b);
  bool plain = ld != NULL;
  for (int d = 0; plain && d < b->ndim; d++) {
    plain &= ld->args[d]->kind == E_VAR;
    for (int e = 0; plain && e < d; e++) plain &= ld->args[e]->var != ld->args[d]->var;
  }
  for (int d = 0; d < b->ndim; d++) {
    if (plain) nm(names[d], "%s", ld->args[d]->var->name);
    else nm(names[d], "ax%d", d);
  }
}

/* Cooperative fetching of tensor B into shared memory for the local stage LST, at loop AT:
 * the copy's loops fused, split by the THREADS of the block and bound to threadIdx.x; its
 * last dimension split off in 16-byte vectors first when the gene says so and they divide
 * its span (fetch_vec); its rows padded when gpu_row_pad says so. */
static void render_fetch(const Plan *p, const int *g, const Buffer *b, const char *lst,
                         const char *at, int64_t threads, Text *t) {
  char sst[NM], ax[MAX_AXES][NM], loops[MAX_AXES + 1][NM];
  nm(sst, "%s_shared", b->name);
  emit(t, "%s = cache_read(%s, shared, %s)", sst, b->name, lst);
  emit(t, "compute_at(%s, %s, %s)", sst, lst, at);
  cache_axis_names(p->op, b, ax);
  int64_t span[MAX_AXES] = {0};
  gpu_span(p, g, p->op->value, b, span);
  int n = b->ndim, w = 16 / (dtype_bytes(b->dtype) > 0 ? dtype_bytes(b->dtype) : 16);
  for (int d = 0; d < n; d++) nm(loops[d], "%s.%s", sst, ax[d]);
  bool v = fetch_vec(p, g, b, span);
  int64_t pad = gpu_row_pad(p, g, b, span);
  if (pad) emit(t, "storage_align(%s, %s, %" PRId64 ", %" PRId64 ")", sst, loops[n - 2], span[n - 1], pad);
  if (v) {
    char o[NM];
    nm(o, "%s_vo", sst);
    emit(t, "%s, %s_v = split(%s, %d)", o, sst, loops[n - 1], w);
    nm(loops[n - 1], "%s", o);
  }
  if (threads > 1) {
    char f[NM];
    fuse_list(t, sst, "f", loops, n, f);
    emit(t, "%s_o, %s_t = split(%s, %" PRId64 ")", sst, sst, f, threads);
    emit(t, "bind(%s_t, threadIdx.x)", sst);
  }
  if (v) emit(t, "vectorize(%s_v)", sst);
  if (gpu_double(p, g)) emit(t, gpu_double(p, g) == 2 ? "double_buffer(%s, local)" : "double_buffer(%s)", sst);
}

/* The local stage LST of a GPU_SHARED plan: R0 R1 S3 R2 S4 with unrolling and a vector
 * of 2 or 4 accumulators, then the shared tiles of every tensor read, fetched at R0. */
static void render_gpu_local(const Plan *p, const int *g, const char *lst, int64_t threads,
                             Text *t) {
  Levels sl[MAX_AXES], rl[MAX_AXES];
  char ref[NM];
  for (int d = 0; d < p->ns; d++) {
    int f[1] = {g[d * GLEVELS + 3]};
    loop_ref(ref, sizeof ref, lst, p->s[d].name);
    split_levels(t, lst, p->s[d].name, ref, f, 2, &sl[d]);
  }
  for (int d = 0; d < p->nr; d++) {
    const int *a = g + p->ns * GLEVELS + d * GRLEVELS;
    int f[2] = {a[0], a[1]};
    loop_ref(ref, sizeof ref, lst, p->r[d].name);
    split_levels(t, lst, p->r[d].name, ref, f, 3, &rl[d]);
  }
  char order[1024] = "";
  list_level(order, sizeof order, rl, p->nr, 0);
  list_level(order, sizeof order, rl, p->nr, 1);
  list_level(order, sizeof order, sl, p->ns, 0);
  list_level(order, sizeof order, rl, p->nr, 2);
  list_level(order, sizeof order, sl, p->ns, 1);
  emit(t, "reorder(%s)", order);
  int fl = p->ns * GLEVELS + p->nr * GRLEVELS, last = p->ns - 1, s4 = g[last * GLEVELS + 3];
  bool vec = g[fl + 2] && sl[last].has[1] && (s4 == 2 || s4 == 4);
  if (vec) emit(t, "vectorize(%s)", sl[last].name[1]);
  for (int d = 0; g[fl + 1] >= 1 && d < p->ns; d++)
    if (sl[d].has[1] && !(vec && d == last)) emit(t, "unroll(%s)", sl[d].name[1]);
  for (int d = 0; g[fl + 1] >= 2 && d < p->nr; d++)
    if (rl[d].has[2]) emit(t, "unroll(%s)", rl[d].name[2]);
  for (int d = 0; g[fl + 1] >= 2 && d < p->ns; d++)
    if (sl[d].has[0] && g[d * GLEVELS + 2] > 1) emit(t, "unroll(%s)", sl[d].name[0]);
  for (int d = 0; g[fl + 1] >= 3 && d < p->nr; d++)
    if (rl[d].has[1]) emit(t, "unroll(%s)", rl[d].name[1]);
  for (int j = 0; j < p->op->nreads; j++)
    render_fetch(p, g, p->op->reads[j], lst, rl[p->nr - 1].name[0], threads, t);
}

/* SSSRRSRS on GPUs (Ansor's multi-level tiling with shared memory): the output ST computed
 * through ST_local (accumulators in registers), or the reduction computed in registers at
 * the threads of its elementwise consumer ST; ST's loops split block / vthread / thread /
 * inner, the block loops fused on blockIdx.x, each vthread loop bound, the thread loops
 * fused on threadIdx.x, the inner loop stored in vectors; ST_local at the thread loop,
 * ordered R0 R1 S3 R2 S4; every tensor it reads staged in shared memory at the last R0. */
static void render_gpu_shared(const Plan *p, const int *g, Text *t) {
  const char *st = p->consumer ? p->consumer->name : p->op->name;
  char lst[NM], ref[NM];
  if (p->consumer) { /* the reduction itself is the local stage, at the consumer's threads */
    nm(lst, "%s", p->op->name);
  } else {
    nm(lst, "%s_local", st);
    emit(t, "%s = cache_write(%s, local)", lst, st);
  }
  Levels lv[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    const int *a = g + d * GLEVELS;
    int f[3] = {a[0], a[1], a[2] * a[3]};
    const char *ax = p->consumer ? p->cons_axes[d] : p->s[d].name;
    loop_ref(ref, sizeof ref, st, ax);
    split_levels(t, st, ax, ref, f, 4, &lv[d]);
  }
  char order[1024] = "";
  for (int l = 0; l < 4; l++) list_level(order, sizeof order, lv, p->ns, l);
  if (p->ns > 1) emit(t, "reorder(%s)", order);
  char names[MAX_AXES][NM], blk[NM], thr[NM] = "", at[NM];
  for (int d = 0; d < p->ns; d++) nm(names[d], "%s", lv[d].name[0]);
  fuse_list(t, st, "b", names, p->ns, blk);
  emit(t, "bind(%s, blockIdx.x)", blk);
  nm(at, "%s", blk);
  for (int d = 0; d < p->ns; d++)
    if (lv[d].has[1]) emit(t, "bind(%s, vthread)", lv[d].name[1]), nm(at, "%s", lv[d].name[1]);
  int nt = 0;
  for (int d = 0; d < p->ns; d++)
    if (lv[d].has[2]) nm(names[nt++], "%s", lv[d].name[2]);
  if (nt) {
    fuse_list(t, st, "t", names, nt, thr);
    emit(t, "bind(%s, threadIdx.x)", thr);
    nm(at, "%s", thr);
  }
  int fl = p->ns * GLEVELS + p->nr * GRLEVELS, last = p->ns - 1;
  const int *gl = g + last * GLEVELS;
  if (g[fl + 2] && lv[last].has[3] && (gl[2] * gl[3]) % 4 == 0) {
    emit(t, "%s_vo, %s_v = split(%s, 4)", st, st, lv[last].name[3]);
    emit(t, "vectorize(%s_v)", st);
  }
  emit(t, "compute_at(%s, %s, %s)", lst, st, at);
  render_gpu_local(p, g, lst, gpu_threads(p, g), t);
  /* Ansor's auto_unroll_max_step choices, on the block loop: every serial loop of the
   * block's work (the fetches too) of at most that many iterations in all is unrolled */
  static const int auto_unroll_steps[] = {0, 16, 64, 512, 1024};
  if (g[fl + 4] > 0 && g[fl + 4] < 5) emit(t, "auto_unroll(%s, %d)", blk, auto_unroll_steps[g[fl + 4]]);
}

/* RFACTOR on CPUs: the last reduction axis split by the lanes V; the lanes rfactored into a
 * stage ST_rf[v, spatial...] accumulated in a local vector at its last spatial loop (the
 * other reductions outside, the lanes vectorized innermost); its outer spatial loops fused
 * and parallel. The final sum over the V lanes stays as it is. */
static void render_rfactor(const SketchSet *ss, const Plan *p, const int *g, Text *t) {
  const char *st = p->op->name, *k = p->r[p->nr - 1].name;
  emit(t, "%s_ko, %s_kv = split(%s.%s, %d)", st, st, st, k, g[0]);
  emit(t, "%s_rf = rfactor(%s, %s_kv)", st, st, st);
  emit(t, "%s_rf_local = cache_write(%s_rf, local)", st, st);
  char order[1024] = "";
  for (int d = 0; d < p->ns; d++) {
    size_t n = strlen(order);
    snprintf(order + n, sizeof order - n, "%s_rf.%s, ", st, p->s[d].name);
  }
  emit(t, "reorder(%s%s_rf.%s_kv)", order, st, st);
  emit(t, "compute_at(%s_rf_local, %s_rf, %s_rf.%s)", st, st, st, p->s[p->ns - 1].name);
  order[0] = 0;
  for (int d = 0; d < p->nr - 1; d++) {
    size_t n = strlen(order);
    snprintf(order + n, sizeof order - n, "%s_rf_local.%s, ", st, p->r[d].name);
  }
  emit(t, "reorder(%s%s_rf_local.%s_ko, %s_rf_local.%s_kv)", order, st, st, st, st);
  emit(t, "vectorize(%s_rf_local.%s_kv)", st, st);
  int64_t outer[MAX_AXES] = {0};
  Levels lv[MAX_AXES];
  for (int d = 0; d < p->ns; d++) {
    outer[d] = p->s[d].extent;
    memset(&lv[d], 0, sizeof lv[d]);
    nm(lv[d].name[0], "%s_rf.%s", st, p->s[d].name);
  }
  char fst[NM];
  nm(fst, "%s_rf", st);
  int ns = p->ns > 1 ? p->ns - 1 : 1; /* the last spatial loop holds the local stage */
  fuse_outer(t, fst, lv, par_depth(outer, ns, g[1] < ns ? g[1] : ns, ss->threads), "parallel(%s)");
}

/* XREDUCE on GPUs: the reduction loops of ST fused and split by the T threads (ST_ko
 * serial, ST_kt across the threads), ST_kt rfactored into ST_rf; the spatial loops fused
 * on blockIdx.x (those of the consumer, with ST computed at its block, when it has one),
 * or with Y > 1 split by Y rows, the rows on threadIdx.y (each row's tree apart, as
 * tests/lit/gpu/allreduce_2d.tex); ST's reduction over ST_kt bound to threadIdx.x (the
 * printer's tree in shared memory); ST_rf, each thread's serial part, at ST_kt, unrolled
 * by U. */
static void render_xreduce(const Plan *p, const int *g, Text *t) {
  const char *st = p->op->name;
  char red[NM], names[MAX_AXES][NM], blk[NM];
  nm(red, "%s.%s", st, p->r[0].name);
  for (int d = 1; d < p->nr; d++) {
    char f[NM];
    nm(f, "%s_r%d", st, d);
    emit(t, "%s = fuse(%s, %s.%s)", f, red, st, p->r[d].name);
    nm(red, "%s", f);
  }
  emit(t, "%s_ko, %s_kt = split(%s, %d)", st, st, red, g[0]);
  emit(t, "%s_rf = rfactor(%s, %s_kt)", st, st, st);
  const char *bst = p->consumer ? p->consumer->name : st;
  for (int d = 0; d < p->ns; d++)
    nm(names[d], "%s.%s", bst, p->consumer ? p->cons_axes[d] : p->s[d].name);
  fuse_list(t, bst, "b", names, p->ns, blk);
  if (g[2] > 1) {
    emit(t, "%s_bo, %s_by = split(%s, %d)", bst, bst, blk, g[2]);
    emit(t, "bind(%s_bo, blockIdx.x)", bst);
    emit(t, "bind(%s_by, threadIdx.y)", bst);
    nm(blk, "%s_by", bst);
  } else {
    emit(t, "bind(%s, blockIdx.x)", blk);
  }
  if (p->consumer) emit(t, "compute_at(%s, %s, %s)", st, bst, blk);
  emit(t, "bind(%s.%s_kt, threadIdx.x)", st, st);
  emit(t, "compute_at(%s_rf, %s, %s.%s_kt)", st, st, st, st);
  if (g[1] > 1) {
    emit(t, "%s_rf_ko, %s_rf_ku = split(%s_rf.%s_ko, %d)", st, st, st, st, g[1]);
    emit(t, "unroll(%s_rf_ku)", st);
  }
}

static void render_plan(const SketchSet *ss, const Plan *p, const int *g, Text *t) {
  switch (p->kind) {
  case PLAN_SIMPLE: render_simple(ss, p, g, t); break;
  case PLAN_TILE:
    if (is_gpu(ss)) render_tile_gpu(p, g, t);
    else render_inner(ss, p, p->op->name, "", g, true, t);
    break;
  case PLAN_RFACTOR: render_rfactor(ss, p, g, t); break;
  case PLAN_GPU_SHARED: render_gpu_shared(p, g, t); break;
  case PLAN_GPU_XREDUCE: render_xreduce(p, g, t); break;
  case PLAN_FUSED:
    if (is_gpu(ss)) render_tile_gpu(p, g, t);
    else render_fused_cpu(ss, p, g, t);
    break;
  }
}

char *sketch_render(const SketchSet *ss, const Cand *c) {
  const Sketch *s = &ss->sk[c->sketch];
  Text t = {0};
  for (int i = 0; i < s->ninlined; i++) emit(&t, "compute_inline(%s)", s->inlined[i]->name);
  for (int i = 0; i < s->nplans; i++) {
    const Plan *p = &s->plans[i];
    render_plan(ss, p, c->genes + p->gene0, &t);
  }
  if (!t.s) t.s = strdup("");
  return t.s;
}

/* ---------------------------------------------------------------- the GPU network default */

static double log2_dist(double x, double want) { return fabs(log2(x > 0 ? x / want : 1e-9)); }

/* How close genes G of GPU plan P come to a shape that runs well on recent NVIDIA GPUs
 * without measuring (higher is better). Parallelism first: at least WANT_BLOCKS blocks
 * (several per multiprocessor of a large GPU) while the work allows, then about 128 threads
 * per block, a register tile of about 8 outputs per thread (4 for the global-load tiling),
 * shared tiles staged over a reduction step of about 16, 16-byte fetches and padded rows. */
static double gpu_default_score(const Plan *p, const int *g, double want_blocks) {
  double threads = 1, acc = 1, blocks = 1, red = 1, s = 0;
  switch (p->kind) {
  case PLAN_GPU_SHARED: {
    threads = (double)gpu_threads(p, g);
    for (int d = 0; d < p->ns; d++) {
      const int *a = g + d * GLEVELS;
      acc *= (double)a[0] * a[2] * a[3];
      blocks *= (double)p->s[d].extent / ((double)a[0] * a[1] * a[2] * a[3]);
    }
    for (int d = 0; d < p->nr; d++) red *= (double)g[p->ns * GLEVELS + d * GRLEVELS] * g[p->ns * GLEVELS + d * GRLEVELS + 1];
    const int *f = g + p->ns * GLEVELS + p->nr * GRLEVELS;
    s = -0.5 * log2_dist(acc, 8) - 0.5 * log2_dist(red, 16) + 0.3 * f[0] + 0.2 * f[2] + 0.2 * f[3] +
        0.1 * (f[1] == 2) + 0.1 * (f[4] == 2);
    break;
  }
  case PLAN_TILE:
  case PLAN_FUSED:
    for (int d = 0; d < p->ns; d++) {
      const int *a = g + d * SLEVELS;
      threads *= a[0];
      acc *= a[1];
      blocks *= (double)p->s[d].extent / ((double)a[0] * a[1]);
    }
    s = -0.5 * log2_dist(acc, 4);
    break;
  case PLAN_SIMPLE:
    threads = (double)simple_gpu_threads(p, g);
    for (int d = 0; d < p->ns; d++) blocks *= (double)p->s[d].extent;
    blocks /= threads;
    break;
  default:
    return 0;
  }
  return s - log2_dist(threads, 128) - 2 * fmax(0, log2(want_blocks / fmax(blocks, 1)));
}

char *sketch_gpu_default(Kernel *k, Target t) {
  SketchSet *ss = sketch_new(k, t, 1);
  if (!ss || !is_gpu(ss)) {
    sketch_free(ss);
    return NULL;
  }
  ss->fixed = true;
  int pick = 0; /* the shared-memory sketch when there is one */
  for (int i = 0; i < ss->n; i++)
    if (ss->sk[i].shared && strcmp(ss->sk[i].name, "xreduce") != 0) {
      pick = i;
      break;
    }
  /* 16 blocks per multiprocessor (H200: 132 x 16; measured there, 2048 blocks beat 512 by
   * 1.05x on resnet18 and 1.6x on mobilenet); 128 multiprocessors when no device says */
  double want = 16.0 * (ss->lim.multiprocessors > 0 ? ss->lim.multiprocessors : 128);
  Rng r = {.s = 0x7e8c}; /* fixed: the same default on every run */
  Cand best = {0}, c;
  double best_score = -INFINITY;
  for (int i = 0; i < 512; i++) {
    sketch_sample_of(ss, pick, &r, &c);
    const Sketch *s = &ss->sk[pick];
    double score = 0;
    for (int j = 0; j < s->nplans; j++) score += gpu_default_score(&s->plans[j], c.genes + s->plans[j].gene0, want);
    if (score > best_score) best_score = score, best = c;
  }
  char *text = sketch_render(ss, &best);
  sketch_free(ss);
  return text;
}
