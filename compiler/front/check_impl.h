/* check_impl.h — private to the checker (check.c, check_expr.c, check_bounds.c,
 * check_canon.c): symbol tables, the per-statement context, and the bounds prover. */
#ifndef CHECK_IMPL_H
#define CHECK_IMPL_H

#include "texc.h"

/* ---- names ---------------------------------------------------------------- */

/* What a name means inside a kernel. */
typedef enum {
  SYM_CONST,  /* value: a file constant (or a -D override) */
  SYM_SIZE,   /* size: an E_VAR of a symbolic size, or an E_INT when -D binds it */
  SYM_TENSOR, /* buf, decl: an input, output or `tensor` of the kernel */
  SYM_AXIS,   /* var: an index of the written tensor (LHS) */
  SYM_RAXIS   /* var: a reduction axis; index: its position in the statement's raxes */
} SymKind;

typedef struct Sym {
  SymKind kind;
  const char *name;
  Loc loc;
  int64_t value;
  Expr *size;
  Buffer *buf;
  Ast *decl;
  IrVar *var;
  int index;
  Loc first_read; /* SYM_TENSOR: where it is first read (file NULL: never) */
} Sym;

typedef struct SymTab {
  Vec syms; /* Sym*, in definition order */
  struct SymTab *parent;
  Sym **index; /* open addressing by name: the latest Sym of each name (NULL: empty) */
  int cap;     /* slots of index, a power of two; 0 before the first definition */
} SymTab;

/* check_names.c: symbol tables and -D overrides. */
Sym *chk_lookup(SymTab *t, const char *name);
Sym *chk_define(SymTab *t, SymKind k, const char *name, Loc loc);
Define *chk_find_define(Define *defs, int n, const char *name);

/* ---- bounds: a private affine prover --------------------------------------- */

/* An affine form c + sum k[i] * x[i] of fixed size (the prover copies forms by value); a
 * term x is an E_VAR (an axis or a size) or an opaque non-affine expression (an "atom",
 * matched by ir_equal). ok is false once a coefficient overflowed or there were too many
 * terms: such a form proves nothing. Bounds of sizes and atoms come from arith. */
#define LIN_TERMS 12
typedef struct BForm {
  bool ok;
  int n;
  int64_t c;
  Expr *x[LIN_TERMS];
  int64_t k[LIN_TERMS];
} BForm;

/* The range of one axis, lo..hi inclusive, as forms over sizes only. */
typedef struct BVar {
  IrVar *var;
  BForm lo, hi;
} BVar;

/* Axis ranges (a stack: guards push narrower entries) and guard facts (forms known
 * to be >= 0 in the current branch). Symbolic sizes are assumed >= 1. */
typedef struct TRange TRange; /* check_bounds.c: the value range of a tensor */
typedef struct Bounds {
  Vec vars;  /* BVar* */
  Vec facts; /* BForm* */
  Vec memo;  /* bounds of atoms, valid during one chk_bounds_index */
  int budget;
  Vec *tranges; /* the kernel's value ranges of tensors (KCtx.tranges), or NULL */
} Bounds;

typedef struct BMark {
  int vars, facts;
} BMark;

typedef enum { IN_BOUNDS, MAY_BE_OUTSIDE, OUTSIDE } BoundsVerdict;

/* Declare V in [MIN, MIN + EXTENT) (expressions over sizes). */
void chk_bounds_var(Bounds *b, IrVar *v, Expr *min, Expr *extent);
BMark chk_bounds_mark(const Bounds *b);
void chk_bounds_release(Bounds *b, BMark m);
/* Assume COND (a bool IR expression) is TRUTH: adds facts and narrows axis ranges. */
void chk_bounds_assume(Bounds *b, Expr *cond, bool truth);
/* Is IDX within [0, EXTENT)? */
BoundsVerdict chk_bounds_index(Bounds *b, Expr *idx, Expr *extent);
int chk_bounds_unproved(Bounds *b, Expr *idx, Expr *extent); /* 1: idx >= 0, 2: idx <= last, 3: both */
/* After OP's statement is checked: the range of the values it stores, for the reads of
 * later statements (an integer `tensor` written by `=`, or by `=` then max= / min=). */
void chk_bounds_record(Bounds *b, Op *op);
/* Notes for an index the prover refused: the ranges of the tensors it reads. */
void chk_bounds_explain(Bounds *b, Expr *idx, Loc at);
/* "H + 1": an integer expression over sizes, for messages. */
char *chk_int_text(Expr *e);
/* EXTENT - 1 as text, for "0..H-1". */
char *chk_last_text(Expr *extent);

/* ---- statements ------------------------------------------------------------ */

/* One kernel being checked. */
typedef struct KCtx {
  Define *defs;
  int ndefs;
  SymTab *consts; /* the file's constants */
  SymTab syms;    /* sizes and tensors; parent: consts */
  Kernel *k;
  Vec sizes;      /* IrVar* */
  Op *last;       /* the op of the statement before (an update may follow it) */
  Op *replaced;   /* an initial definition merged into the update after it */
  Vec tranges;    /* value ranges of tensors written so far (check_bounds.c) */
  Vec *externs;   /* Kernel* of the `extern kernel`s checked so far (no ops) */
} KCtx;

/* One statement being checked. */
typedef struct SCtx {
  KCtx *kc;
  Ast *stmt;
  SymTab names;   /* axes and reduction axes; parent: kc->syms */
  Op *op;
  Vec raxes;      /* Sym* of the reduction axes */
  Vec reads;      /* Buffer* */
  Vec reported;   /* names already reported unknown (const char*) */
  Bounds bounds;
} SCtx;

/* check_expr.c: the value of a statement as a typed IR expression; NULL after errors. */
Expr *chk_value(SCtx *s, Ast *rhs, DType want);
/* check_expr.c: the value of an argmax=/argmin= statement in its own dtype (a float
 * literal alone is f32, an integer one i32). */
Expr *chk_value_own(SCtx *s, Ast *rhs);
/* check_expr.c: the computed index IX of dimension D of BUF on a scatter's left side, i64. */
Expr *chk_scatter_index(SCtx *s, Ast *ix, Buffer *buf, int d);
/* check_expr.c: find reduction axes (or report unknown names) and infer their ranges. */
bool chk_reduction_axes(SCtx *s);
/* check_names.c: an integer expression over constants and sizes (shapes, `where` ranges). */
Expr *chk_size_expr(KCtx *kc, Ast *a, bool create_sizes);
/* check_names.c: text of an AST expression, for messages. */
char *chk_ast_text(const Ast *a);
const char *chk_op_text(int op); /* "<=", "+", "max=", ... of an operator token */

#endif
