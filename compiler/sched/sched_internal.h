/* sched_internal.h — private to schedule.c, bound.c and lower/: stages, iteration
 * variables and their relations (TVM TE's model), and the arithmetic that bound
 * inference and lowering share. */
#ifndef SCHED_INTERNAL_H
#define SCHED_INTERNAL_H
#include "texc.h"

typedef struct IterVar IterVar;
typedef struct Stage Stage;

/* A relation between loops of one stage.
 *   REL_SPLIT: parent -> outer, inner. factor > 0: inner extent is factor;
 *              factor == 0: by parts, outer extent is nparts.
 *   REL_FUSE:  outer, inner -> parent (the fused loop). */
typedef enum { REL_SPLIT, REL_FUSE } RelKind;
typedef struct Rel {
  RelKind kind;
  IterVar *parent, *outer, *inner;
  int64_t factor, nparts;
} Rel;

/* One loop (or axis) of a stage. Root iter vars are the op's axes (then its reduction
 * axes); the others come from split and fuse. */
struct IterVar {
  const char *name;    /* as steps write it: "C.i" for a root, else "io" */
  const char *base;    /* the short name: "i", "io" */
  IrVar *var;          /* root: the op's axis var; else the loop's var */
  Stage *stage;
  bool reduce, root;
  bool scan;           /* the scan axis of a scan stage, or split from it: serial, in order */
  Expr *dmin, *dext;   /* root: the op's domain */
  ForKind kind;        /* annotation or binding */
  Loc kind_loc;        /* the step that set KIND (file NULL: none) */
  int64_t auto_unroll; /* auto_unroll(L, N): serial loops nested in this one of at most N
                        * iterations in all are unrolled (0: none; nests.c) */
  const char *gone;    /* why this is no longer a loop; NULL while it is a leaf */
  /* lowering state, recomputed by each sched_lower */
  Expr *min, *ext;     /* root: [min, min + ext); others [0, ext) */
  Expr *val;           /* offset from min, over leaf loop vars */
  IrVar *loopvar;      /* leaf: the emitted loop's var (NULL: extent 1, no loop) */
  bool tail;           /* split parent whose parts may overrun its extent */
};

typedef enum { ATTACH_ROOT, ATTACH_AT, ATTACH_INLINE } AttachKind;

/* One compute: an op (from the kernel, or made by cache_read / cache_write / rfactor)
 * with its loops. */
struct Stage {
  const char *name;
  Op *op;
  IterVar **root;      /* op axes, then reduction axes */
  int nroot, ndata;
  Vec leaf;            /* IterVar*, outermost first */
  Vec rels;            /* Rel*, in the order the steps made them */
  AttachKind attach;
  Stage *at_stage;     /* ATTACH_AT: computed inside loop at_iv of at_stage */
  IterVar *at_iv;
  Loc attach_loc;
  Loc attach_broken;   /* ATTACH_AT: the step after which it stopped holding (file NULL: holds) */
  Scope scope;
  bool output;         /* writes a kernel output */
  bool rfactored;      /* made to reduce over an rfactor stage */
  int64_t align_factor, align_offset; /* storage_align: row pitch % factor == offset (0: none) */
  Loc align_loc;
  Loc double_buffer;   /* the double_buffer step (file NULL: none; lower/double_buffer.c) */
  bool stage_local;    /* double_buffer(S, local): the next copy staged in registers (GPU) */
  Loc loc;
  /* lowering state */
  Expr *eff;           /* value with inlined stages substituted */
  Expr **scatter_eff;  /* a scatter's computed indices (op->scatter), the same way */
  Expr *init_eff;      /* an update definition's initial value (op->init), the same way */
  Buffer *buf;         /* what the nest stores into */
  Expr **offset;       /* per dimension of buf: subtracted from indices (NULL: none) */
  Expr **full;         /* per root iter var: its value, min + offset */
  Vec guards[2];       /* conditions of the data / reduction iterations */
  int topo;
  bool done;
};

typedef struct NameDef {
  const char *name;
  IterVar *iv;         /* a loop name, or */
  Stage *stage;        /* a stage name made by a step */
  Loc loc;
} NameDef;

struct Schedule {
  Kernel *k;
  Target target;
  Vec stages;          /* Stage*, producers before consumers */
  Vec names;           /* NameDef*: names introduced by steps */
  Vec ivs;             /* every IterVar ever made (for rollback) */
};

/* schedule.c */
Stage *sched_stage_of_buf(Schedule *s, const Buffer *b); /* the stage writing B, or NULL */
bool sched_reads(const Expr *e, const Buffer *b);       /* E loads B somewhere */
/* OP's value or a scatter's computed index (EFF, SCATTER: those of a stage) loads B. */
bool sched_op_reads(const Op *op, Expr *eff, Expr **scatter, const Buffer *b);
int sched_leaf_pos(const Stage *st, const IterVar *iv);  /* -1 when not a leaf */
void sched_pass_down(Stage *st);                         /* extents of non-root ivs */
Expr *sched_ceildiv(Expr *a, int64_t b);
/* Values (iv->val) of non-leaf iter vars from the leaves', backwards through the
 * relations; each tail split adds `parent < extent` to GUARDS[0] (data) or [1] (reduce). */
void sched_pass_up(Stage *st, Vec guards[2]);
/* The start value of a reduction: 0, 1, lowest, highest. */
Expr *sched_identity(ReduceOp rop, DType t);

/* bound.c — bound inference's names for the one analyzer (compiler/arith). */
/* Loop vars and their extents: each var ranges over [0, ext) (min 0 in a RangeMap). */
typedef RangeMap Relax;
void relax_add(Relax *r, IrVar *v, Expr *ext);
Expr *bnd_simplify(Expr *e);                          /* simplify(E, NULL) */
/* interval_of: the values E takes when the vars of R range over their extents (others
 * fixed); NULL ends are unbounded. Endpoints are inclusive and simplified. */
Interval bnd_interval(Expr *e, const Relax *r);
/* A <= B for every value of the vars in R (prove). false when unknown. */
bool bnd_prove_le(Expr *a, Expr *b, const Relax *r);
/* Whether E uses only the kernel's symbolic sizes (no loop vars). */
bool bnd_loop_free(const Expr *e, const Kernel *k);
Expr *bnd_min(Expr *a, Expr *b); /* simplified min; NULL (unbounded) when either is */
Expr *bnd_max(Expr *a, Expr *b);
/* Halide's clamp rule. IDX, an index in bounds of a domain FIRST..LAST, with min(t, hi) /
 * max(t, lo) at its top (hi >= LAST, lo <= FIRST, neither over R's vars): the element it
 * reads is t clamped into the domain. Returns t (IDX when nothing is stripped). */
Expr *bnd_unclamp(Expr *idx, Expr *first, Expr *last, const Relax *r);
/* Does E read a buffer (a value known only at run time: a data-dependent index)? */
bool bnd_reads_data(const Expr *e);

#endif
