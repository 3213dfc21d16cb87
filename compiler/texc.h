/* texc.h — the compiler's one shared header: utilities, diagnostics, the AST,
 * the checked compute DAG, the loop IR, and the interfaces between passes.
 *
 * Pipeline (driver.c):  parse_file -> check_program -> sched_build -> sched_lower
 *                       -> backend->emit / backend->build   (or interp_run)
 *
 * Sections are ordered as the pipeline; each names the file that implements it.
 */
#ifndef TEXC_H
#define TEXC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rt_gpu.h"

#define TEXC_VERSION "0.1.0"

/* ===================================================================== */
/* util.c — arenas, strings, growable pointer arrays                      */
/* ===================================================================== */

/* All compiler data lives in the current arena and is freed at once.
 * The tuner pushes an arena per candidate so that long searches do not grow. */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
Arena *arena_swap(Arena *a); /* make A current; returns the previous one */
void *xalloc(size_t n);      /* zeroed memory from the current arena */
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *read_file(const char *path, size_t *len); /* malloc'd, NUL-terminated; NULL if unreadable */

/* A growable array of pointers in the current arena. */
typedef struct Vec {
  void **data;
  int len, cap;
} Vec;
void vec_push(Vec *v, void *p);
#define VEC_AT(v, i) ((v).data[(i)])

/* ===================================================================== */
/* diag.c — diagnostics for people                                        */
/* ===================================================================== */

typedef struct Loc {
  const char *file; /* NULL: no location */
  int line, col;    /* 1-based */
} Loc;

/* Register a file's text so that diagnostics can print the source line. */
void diag_source(const char *file, const char *text);
/* `FILE:LINE:COL: error: MESSAGE`, the source line and a caret, on stderr. */
void diag_error(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_warning(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void diag_note(Loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int diag_errors(void); /* errors reported since the last diag_reset */
void diag_reset(void);
/* When set, diagnostics are counted but not printed (the tuner tries steps that may fail). */
extern bool diag_silent;
extern int diag_max_errors; /* diag_error exits(1) at this many errors (0: never; not when silent) */
/* The text of the last error, for the tuner's error records. */
const char *diag_last(void);
/* Internal compiler errors: print and abort. Never for user mistakes. */
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Out of memory asking for BYTES (0: unknown): an error for the user, exit 1 (not a crash). */
_Noreturn void die_oom(size_t bytes);

/* ===================================================================== */
/* Data types                                                             */
/* ===================================================================== */

/* ORDER DType: dtype_name[] in util.c */
typedef enum {
  DT_BOOL, DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U32, DT_F16, DT_F32, DT_F64,
  DT_COUNT
} DType;
const char *dtype_name(DType t);       /* "f32" */
/* util.c: why NAME cannot be a C symbol that texc exports or calls (a name of the C
 * library, libm, POSIX, or with a reserved prefix: a phrase after "which is"), or NULL.
 * Exported kernels (llvm.c) and extern kernels (check.c) are checked with it. */
const char *c_symbol_clash(const char *name);
bool dtype_parse(const char *s, DType *out);
int dtype_bytes(DType t);              /* storage size; bool is 1 byte */
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);            /* signed or unsigned integer, not bool */
bool dtype_is_signed(DType t);
int64_t dtype_wrap(DType t, int64_t v); /* V as a value of integer dtype T, wrapped as C converts */
float f16_to_f32(uint16_t h);           /* IEEE half to float, subnormals included */
uint16_t f32_to_f16(float f);           /* round to nearest even; overflow to infinity */

/* ===================================================================== */
/* The AST — grammar/parser.y builds it, ast.c prints it (--emit ast)     */
/* ===================================================================== */

/* Every node is one struct; the comment on each kind says which fields it uses.
 * Lists are Vec of Ast*. Names are arena strings. */
#define AST_KINDS(X)                                                                  \
  /* expressions */                                                                   \
  X(A_INT)     /* ival */                                                             \
  X(A_FLOAT)   /* fval */                                                             \
  X(A_STR)     /* sval */                                                             \
  X(A_NAME)    /* name */                                                             \
  X(A_MEMBER)  /* name.name2: `C.i`, `blockIdx.x` (steps only) */                     \
  X(A_ACCESS)  /* name[list]: a tensor access */                                      \
  X(A_CALL)    /* name(list): a math call or a cast (`f32(x)`) */                     \
  X(A_UNARY)   /* op a: op is '-' or '!' */                                           \
  X(A_BINARY)  /* a op b: op is a char or a TOKOP_ below */                           \
  X(A_COND)    /* a ? b : c */                                                        \
  X(A_KWARG)   /* name = a: `parts = 4` (steps only) */                               \
  /* kernel bodies */                                                                 \
  X(A_PARAM)   /* name: dtype[list]; also a kernel output */                          \
  X(A_TENSOR)  /* tensor name: dtype[list] — a local intermediate */                  \
  X(A_STMT)    /* a (an A_ACCESS) op b, where list2 (A_RANGE); op: '=' or a TOKOP_ */ \
  X(A_RANGE)   /* name in a..b */                                                     \
  X(A_CALLSTMT) /* list (A_NAME outputs) = name(list2: A_NAME inputs): an extern call */ \
  /* top level */                                                                     \
  X(A_CONST)   /* const name = a (one node per name) */                               \
  X(A_IMPORT)  /* import sval; list holds the imported file's items once resolved */  \
  X(A_KERNEL)  /* kernel name(list: A_PARAM) -> list2: A_PARAM { list3: A_STMT|A_TENSOR } */ \
  X(A_EXTERN)  /* extern kernel name(list: A_PARAM) -> list2: A_PARAM (no body) */      \
  X(A_SCHEDULE) /* schedule name.name2 for list (A_NAME targets; empty: all)          \
                   { list2: A_STEP } or `= auto` (ival = 1) */                        \
  X(A_STEP)    /* list (A_NAME outputs) = name(list2 args) */                         \
  X(A_NETWORK) /* network name(list: A_PARAM) -> list2: A_PARAM { list3: A_NETCALL }  \
                  (NETWORKS.md; `network` is a keyword only there) */                 \
  X(A_NETCALL) /* list (A_NAME results; empty when unassigned) = name(list2: args,    \
                  A_KWARG attributes): an operator call of a network body */          \
  X(A_FILE)    /* sval: path; list: items */

typedef enum {
#define X(k) k,
  AST_KINDS(X)
#undef X
  A_KIND_COUNT
} AstKind;

/* Operators that are more than one character; single-char ops use the char itself. */
enum {
  TOKOP_LE = 256, TOKOP_GE, TOKOP_EQ, TOKOP_NE, TOKOP_AND, TOKOP_OR,
  TOKOP_ADDEQ, TOKOP_MAXEQ, TOKOP_MINEQ, TOKOP_MULEQ,
  TOKOP_SHL, TOKOP_SHR, /* << >>; & | ^ ~ are their chars */
  TOKOP_ARGMAXEQ, TOKOP_ARGMINEQ
};

typedef struct Ast Ast;
struct Ast {
  AstKind kind;
  Loc loc;
  const char *name, *name2;
  int op;
  int64_t ival;
  double fval;
  const char *sval;
  Ast *a, *b, *c;
  Vec list, list2, list3;
};

extern const char *const ast_kind_names[];
Ast *ast_new(AstKind k, Loc loc);

/* parse.c / parser.y: parse a whole file and, recursively, its imports (relative to
 * the file, then to the stdlib directory). NULL when there were errors (reported). */
Ast *parse_file(const char *path);
Ast *parse_string(const char *file, const char *text);
/* Parse the steps of one schedule block (without braces): the tuner and the records
 * store schedules as text. Returns a Vec of A_STEP in *out. */
bool parse_steps(const char *file, const char *text, Vec *out);
extern const char *texc_stdlib_dir; /* set by the driver; default: <exe>/../stdlib */

/* ast.c */
void ast_print(FILE *f, const Ast *file);         /* --emit ast */
void steps_print(FILE *f, const Vec *steps, const char *indent); /* steps back to text */
char *steps_to_text(const Vec *steps);            /* one step per line */

/* ===================================================================== */
/* The loop IR — ir.c (constructors, substitution, equality)             */
/* ===================================================================== */

typedef struct Expr Expr;
typedef struct Stmt Stmt;
typedef struct Buffer Buffer;
typedef struct Op Op;

/* A variable: a loop variable, an axis of a compute, or a symbolic size. Identity is
 * the pointer. Index arithmetic is i64 throughout (dtype DT_I64). */
typedef struct IrVar {
  const char *name;
  DType dtype;
  int id; /* unique per process, for printing duplicates apart */
} IrVar;

typedef enum { SCOPE_GLOBAL, SCOPE_SHARED, SCOPE_LOCAL } Scope;
typedef enum { BUF_INPUT, BUF_OUTPUT, BUF_TEMP } BufKind;

/* A multi-dimensional, row-major tensor. Loads and stores index it with one
 * expression per dimension; lowering's flatten pass makes the one offset back ends use. */
struct Buffer {
  const char *name;
  DType dtype;
  int ndim;
  Expr **shape; /* extents; constants or expressions over symbolic sizes */
  Scope scope;
  BufKind kind;
  Op *op;       /* the compute that writes it (NULL for inputs) */
  int id;
  int64_t pad;  /* storage_align: elements after each innermost row in storage (row pitch =
                 * last extent + pad); 0 for every buffer but a stage's own allocation */
};

/* ORDER BinOp: binop_names[] in ir.c */
typedef enum {
  OP_ADD, OP_SUB, OP_MUL,
  OP_DIV, /* integers: floor division (TVM floordiv); floats: true division */
  OP_MOD, /* integers: floor modulo (result has the divisor's sign) */
  OP_MIN, OP_MAX,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, /* result bool */
  OP_AND, OP_OR,                           /* bool operands */
  OP_POW,   /* floats: C's pow; integers: wrapping x**n, n < 0 as LANGUAGE.md says */
  OP_ATAN2, OP_FMOD,                       /* floats: C's atan2 and fmod */
  OP_BAND, OP_BOR, OP_BXOR,                /* integers: & | ^ */
  OP_SHL, OP_SHR, /* integers: << >>, the count masked to width - 1; >> is arithmetic for
                     signed dtypes, logical for unsigned */
  BINOP_COUNT
} BinOp;
typedef enum { OP_NEG, OP_NOT } UnOp;
/* ORDER CallFn: callfn_names[] in ir.c */
typedef enum {
  FN_EXP, FN_LOG, FN_SQRT, FN_RSQRT, FN_TANH, FN_SIGMOID, FN_ABS, FN_FLOOR, FN_CEIL,
  FN_ERF, FN_SIN, FN_COS, FN_TAN, FN_ASIN, FN_ACOS, FN_ATAN, FN_SINH, FN_COSH,
  FN_ROUND, /* half to even (C's rint, numpy's round) */
  FN_TRUNC, FN_SIGN, /* sign: -1, 0 or 1 (NaN stays NaN); integers too */
  FN_LOG2, FN_LOG1P, FN_EXP2, FN_EXPM1,
  CALLFN_COUNT
} CallFn;
/* Does OP round a float to an integer value (round, floor, ceil, trunc)? Backends compute
 * its argument, as a float made an integer, without fused multiply-adds. */
static inline bool callfn_rounds(CallFn op) { return op == FN_ROUND || op == FN_FLOOR || op == FN_CEIL || op == FN_TRUNC; }
extern const char *const binop_names[];
extern const char *const callfn_names[];

#define EXPR_KINDS(X)                                          \
  X(E_INT)    /* ival (integer or bool dtype) */               \
  X(E_FLOAT)  /* fval */                                       \
  X(E_VAR)    /* var */                                        \
  X(E_LOAD)   /* buf[args[0..nargs)], nargs == buf->ndim (flat: 1) */ \
  X(E_BIN)    /* op (BinOp), a, b */                           \
  X(E_UN)     /* op (UnOp), a */                               \
  X(E_SELECT) /* a ? b : c (a is bool; b, c evaluated lazily) */ \
  X(E_CALL)   /* op (CallFn), args[0..nargs) */                \
  X(E_CAST)   /* dtype(a) */

typedef enum {
#define X(k) k,
  EXPR_KINDS(X)
#undef X
  E_KIND_COUNT
} ExprKind;

struct Expr {
  ExprKind kind;
  DType dtype;
  int op;
  int64_t ival;
  double fval;
  IrVar *var;
  Buffer *buf;
  Expr *a, *b, *c;
  Expr **args;
  int nargs;
};

/* How a loop runs. ORDER ForKind: forkind_names[] in ir.c */
typedef enum {
  FOR_SERIAL, FOR_PARALLEL, FOR_VECTORIZE, FOR_UNROLL,
  FOR_BLOCK_X, FOR_BLOCK_Y, FOR_BLOCK_Z,
  FOR_THREAD_X, FOR_THREAD_Y, FOR_THREAD_Z,
  FOR_VTHREAD,
  FORKIND_COUNT
} ForKind;
extern const char *const forkind_names[]; /* "serial", ..., "blockIdx.x", "threadIdx.x", "vthread" */
static inline bool forkind_is_gpu(ForKind k) { return k >= FOR_BLOCK_X; }
static inline bool forkind_is_thread(ForKind k) { return k >= FOR_THREAD_X && k <= FOR_THREAD_Z; }

#define STMT_KINDS(X)                                                               \
  X(S_FOR)     /* var in [min, min + extent), kind, body */                         \
  X(S_STORE)   /* buf[args] = value (nargs as E_LOAD's) */                          \
  X(S_ALLOC)   /* buf (its shape and scope) allocated for body */                   \
  X(S_IF)      /* if cond then body else els (els may be NULL) */                   \
  X(S_SEQ)     /* stmts[0..n) in order */                                           \
  X(S_BARRIER) /* all threads of a block: shared-memory writes visible (GPU only) */  \
  X(S_CALL)    /* callee(bufs[0..nbufs), args[0..nargs)): an extern kernel, its       \
                  buffers (inputs, then outputs) and its sizes (i64); CPU only */

typedef enum {
#define X(k) k,
  STMT_KINDS(X)
#undef X
  S_KIND_COUNT
} StmtKind;

/* GPU semantics: a thread-bound loop (FOR_THREAD_*) stands for all threads of the block;
 * sibling thread loops under one block loop run one after another in the interpreter,
 * and the GPU backends turn them into guarded regions separated by barriers. */
struct Stmt {
  StmtKind kind;
  Loc loc;         /* the step that made this loop kind, where one did */
  IrVar *var;
  Expr *min, *extent;
  ForKind for_kind;
  Buffer *buf;
  Expr **args;
  int nargs;
  Expr *value, *cond;
  Stmt *body, *els;
  Stmt **stmts;
  int n;
  /* S_STORE of a scatter updated from a parallel loop: value is buf[args] OP v (OP: +,
   * max, min) and the back end does it as one atomic read-modify-write (llvm.c's
   * atomicrmw); everywhere else it reads as the plain store it equals. */
  bool atomic;
  /* S_STORE of a copy made a step ahead (lower/double_buffer.c): it reads only what the
   * loop does not write, and until the next barrier (or the end of its sequence) nothing
   * reads or writes the element it stores. So a GPU printer may load its value where it
   * stands and store it later, before that barrier (register staging, gpu_source.c); to
   * everything else it is a plain store. */
  bool prefetch;
  /* S_CALL */
  const char *callee;
  Buffer **bufs;
  int nbufs, nin; /* bufs[0..nin) are read, the others written */
};

/* A kernel lowered to one loop nest: what every backend and the interpreter consume. */
typedef enum { TARGET_LLVM, TARGET_CUDA, TARGET_OPENCL, TARGET_COUNT } Target;
extern const char *const target_names[]; /* "llvm", "cuda", "opencl" (util.c) */
#define TARGET_BIT(t) (1u << (t))

typedef struct LoweredFunc {
  const char *name;
  Buffer **params; /* inputs in declaration order, then outputs */
  int nparams, ninputs;
  IrVar **sizes;   /* symbolic sizes, in order of first appearance */
  int nsizes;
  Stmt *body;      /* multi-dimensional accesses: --emit ir, the interpreter, checks */
  Stmt *flat;      /* body with one row-major offset per access: the back ends (NULL:
                      not flattened; ir_flat_body makes it) */
  Target target;
  Loc loc;         /* the kernel's (errors about its exported name) */
} LoweredFunc;

IrVar *ir_newvar(const char *name, DType t);
Expr *ir_int(int64_t v);                  /* i64 */
Expr *ir_const(DType t, int64_t v);       /* integer or bool of dtype t */
Expr *ir_float(DType t, double v);
Expr *ir_var(IrVar *v);
Expr *ir_load(Buffer *b, Expr **idx);     /* copies idx (b->ndim entries) */
Expr *ir_bin(BinOp op, Expr *a, Expr *b); /* dtype: a's, or bool for comparisons */
Expr *ir_un(UnOp op, Expr *a);
Expr *ir_select(Expr *c, Expr *a, Expr *b);
Expr *ir_call(CallFn fn, Expr **args, int n, DType t);
Expr *ir_cast(DType t, Expr *a);
/* Shorthands that fold constants: ir_add(ir_int(1), ir_int(2)) is 3. */
Expr *ir_add(Expr *a, Expr *b);
Expr *ir_sub(Expr *a, Expr *b);
Expr *ir_mul(Expr *a, Expr *b);
Expr *ir_min(Expr *a, Expr *b);
Expr *ir_max(Expr *a, Expr *b);
Expr *ir_floordiv(Expr *a, Expr *b);
Expr *ir_floormod(Expr *a, Expr *b);
bool ir_is_const(const Expr *e, int64_t *v); /* an E_INT; *v gets its value */

Stmt *ir_for(IrVar *v, Expr *min, Expr *extent, ForKind k, Stmt *body);
Stmt *ir_store(Buffer *b, Expr **idx, Expr *value);
Stmt *ir_alloc(Buffer *b, Stmt *body);
Stmt *ir_if(Expr *cond, Stmt *then, Stmt *els);
Stmt *ir_seq(Stmt **s, int n);            /* flattens nested seqs, drops NULLs */
Stmt *ir_seq2(Stmt *a, Stmt *b);
Stmt *ir_barrier(void);
Stmt *ir_call_stmt(const char *callee, Buffer **bufs, int nin, int nout, Expr **sizes, int nsizes);
Buffer *ir_buffer(const char *name, DType t, int ndim, Expr **shape, Scope scope, BufKind kind);

/* Replace every use of a var: MAP is parallel arrays VARS -> VALS of length N. */
Expr *ir_subst(Expr *e, IrVar **vars, Expr **vals, int n);
Stmt *ir_stmt_subst(Stmt *s, IrVar **vars, Expr **vals, int n);
/* Every access of FROM[i] going to TO[i] instead (same indices): in E, and in a copy of S
 * (its stores' and allocations' buffers too). */
Expr *ir_buf_subst(Expr *e, Buffer **from, Buffer **to, int n);
Stmt *ir_stmt_buf_subst(Stmt *s, Buffer **from, Buffer **to, int n);
/* The first load of B in E (arguments before operands), or NULL. */
const Expr *ir_first_load(const Expr *e, const Buffer *b);
bool ir_equal(const Expr *a, const Expr *b);   /* structural */
bool ir_uses_var(const Expr *e, const IrVar *v);
/* The operand V of an update store S, buf[idx] = buf[idx] OP V (OP: + with the load
 * anywhere in a sum, max, min: *HOW), as atomic back ends need it; NULL when S is not one. */
Expr *ir_update_operand(const Stmt *s, BinOp *how);
Expr *ir_copy(Expr *e);
/* The elements B's storage holds (its rows padded by B->pad); -1 when a size is unknown
 * or the product overflows. */
int64_t ir_buffer_numel(const Buffer *b, const LoweredFunc *f, const int64_t *sizes);

/* ir/eval.c: the IR's integer semantics, written once. */
int64_t ir_int_floordiv(int64_t a, int64_t b); /* floor(a / b); 0 for b = 0; wraps at -1 */
int64_t ir_int_floormod(int64_t a, int64_t b); /* a - b * floor(a / b); 0 for b = 0 */
/* X OP Y on integers as generated code computes it: + - * wrap (64-bit two's
 * complement), / and % are floor division and modulo (x / 0 == x % 0 == 0: LANGUAGE.md),
 * comparisons give 0 or 1. false for an OP that is not an integer operation. */
bool ir_int_apply(BinOp op, int64_t x, int64_t y, int64_t *out);
/* pow(x, n) on integers: x**n wrapped to 64 bits (exact modulo 2**64, so narrower dtypes
 * wrap it further); for a negative n of a signed dtype, 1/x**n truncated toward zero:
 * 1 for x = 1, -1 or 1 for x = -1, else 0 (x = 0 included). */
int64_t ir_int_pow(int64_t x, int64_t n, bool is_signed);
/* The shared integer evaluator: the value of E, each operation as ir_int_apply computes
 * it and wrapped to its dtype. LEAF (may be NULL) gives the value of any other node
 * (variables, loads); false when it leaves E unknown. */
typedef bool (*IrIntLeaf)(const Expr *e, void *ctx, int64_t *out);
bool ir_eval_int(const Expr *e, IrIntLeaf leaf, void *ctx, int64_t *out);

/* ===================================================================== */
/* arith/ — the one analyzer: linear forms, intervals, simplifier, proofs,  */
/* used by the checker, bound inference, lowering and the tuner          */
/* ===================================================================== */

/* Known ranges of variables: v in [min, min + extent). */
typedef struct VarRange {
  IrVar *var;
  Expr *min, *extent;
} VarRange;
typedef struct RangeMap {
  VarRange *r;
  int n, cap;
} RangeMap;
void range_push(RangeMap *m, IrVar *v, Expr *min, Expr *extent);
void range_pop(RangeMap *m);

/* Integers wrap (64-bit two's complement, narrower types at their width), and every rule
 * here holds for wrapping values: a bound that would overflow is no bound. The one
 * assumption is about inputs: a symbolic size (a variable that no range map holds) is in
 * [-ARITH_SIZE_MAX, ARITH_SIZE_MAX]; sizes are tensor extents, far below this. */
#define ARITH_SIZE_MAX ((int64_t)1 << 40)

/* Simplify integer index arithmetic and fold constants (exactly: never changes a value).
 * RANGES (may be NULL) lets it drop guards and fold divisions it can prove. */
Expr *simplify(Expr *e, const RangeMap *ranges);
Stmt *simplify_stmt(Stmt *s);
/* Lowering's tails pass (lower/tails.c) on a loop nest: loop bodies versioned so that the
 * full tiles of vectorized and unrolled loops run without the guards and selects only a
 * tail needs; never where the widened test could wrap. Then simplify_stmt. */
Stmt *tails_stmt(Stmt *s);
/* True only when COND is provably true for every value in RANGES. */
bool prove(Expr *cond, const RangeMap *ranges);

/* A closed symbolic interval [min, max]; a NULL end is unbounded. */
typedef struct Interval {
  Expr *min, *max;
} Interval;
/* The set of values E takes when its variables range over RANGES (a superset;
 * exact for affine expressions). Variables not in RANGES are treated as fixed points. */
Interval interval_of(Expr *e, const RangeMap *ranges);
/* Constant bounds when they exist. */
bool const_bounds(Expr *e, const RangeMap *ranges, int64_t *lo, int64_t *hi);
/* True only when E and every + - * and negation in it are computed without wrapping at
 * their dtypes, for every value of RANGES' variables (sizes in +-ARITH_SIZE_MAX): then C
 * code may compute E with plain signed arithmetic (backends print it so). */
bool arith_never_wraps(Expr *e, const RangeMap *ranges);
/* Small pieces of integer index arithmetic shared by the simplifier and the checker. */
/* [lo, hi] of x * y for x in [al, ah], y in [bl, bh]; false when a corner overflows. */
bool arith_mul_bounds(int64_t al, int64_t ah, int64_t bl, int64_t bh, int64_t *lo, int64_t *hi);
/* [lo, hi] of x % c (c > 0) for x in [xl, xh]: exact within one period, else [0, c - 1]. */
void arith_mod_bounds(int64_t xl, int64_t xh, int64_t c, int64_t *lo, int64_t *hi);
/* The comparison that is true exactly when integer comparison OP (OP_EQ..OP_GE) is false. */
BinOp cmp_negate(BinOp op);
/* Does `d OP 0` hold for every d in [lo, hi]? HL / HH: whether that end is known. */
bool cmp_holds_over(BinOp op, bool hl, int64_t lo, bool hh, int64_t hi);
/* The innermost entry of V in M (NULL when none, or M is NULL). */
const VarRange *range_find(const RangeMap *m, const IrVar *v);
/* Does E mention a variable of M? */
bool range_mentions(const Expr *e, const RangeMap *m);
/* A linear form c + sum t[i].coef * t[i].atom (i64), each atom (matched by ir_equal)
 * once, in order of first appearance: the simplifier's canonical form. */
typedef struct LinTerm {
  Expr *atom;
  int64_t coef;
} LinTerm;
typedef struct LinForm {
  int64_t c;
  LinTerm *t;
  int n, cap;
} LinForm;
/* L += COEF * ATOM (coefficients add with wrapping; ATOM is never folded). */
void linform_add(LinForm *l, Expr *atom, int64_t coef);
/* Whether every coefficient of L is 0. */
bool linform_is_const(const LinForm *l);

/* ===================================================================== */
/* check.c — names, dtypes, shapes, reduction axes: the compute DAG      */
/* ===================================================================== */

/* RED_ARGMAX / RED_ARGMIN: the integer output holds the position (row-major over the
 * reduction axes, from their minimums) of the largest / smallest value, the first on
 * ties, NaN largest (numpy's argmax, argmin). */
typedef enum { RED_NONE, RED_SUM, RED_MAX, RED_MIN, RED_PROD, RED_ARGMAX, RED_ARGMIN } ReduceOp;
extern const char *const reduceop_names[]; /* "", "+=", "max=", "min=", "*=", "argmax=", "argmin=" */

/* One tensor statement: out[axes] (rop)= value, over raxes. */
struct Op {
  const char *name;   /* the tensor written */
  Loc loc;
  Buffer *out;
  IrVar **axes;       /* one per dimension of out, ranging over out->shape[d] */
  int ndim;
  IrVar **raxes;      /* reduction axes, in order of first appearance in value */
  Expr **rmin, **rext;
  int nred;
  ReduceOp rop;
  Expr *value;        /* over axes, raxes, sizes; E_LOADs of inputs and other ops */
  Buffer **reads;     /* distinct buffers that value loads, in order of first use */
  int nreads;
  /* A scan (recurrence): value loads out itself at axes[scan_dim] - c (c >= 1) and at
   * the other axes unchanged; the loop over axes[scan_dim] runs serially, in order.
   * is_scan false: value never loads out. */
  bool is_scan;
  int scan_dim;
  /* A scatter (H[A[i]] += 1): per dimension of out, NULL where the left side's index is a
   * plain name (axes[d]), else the computed index (i64, over axes and raxes); updates at
   * an index outside out are skipped. axes[d] of a scattered dimension only ranges over
   * out for the init. NULL: no scattered dimension. */
  Expr **scatter;
  /* A reduction domain that depends on the axes (`where j in 0..i + 1`): raxes range over
   * its bounding box rmin/rext, and the value is reduced only where RCOND holds (over
   * axes and raxes). NULL: the box is the domain. */
  Expr *rcond;
  /* An update definition (`Y[i, j] = B[j]` then `Y[i, j] += ...`): the reduction starts
   * at INIT (over axes) instead of its start value. NULL: the start value. */
  Expr *init;
  /* An output of an extern kernel's call (`S = sort(X)`): the stage has no loops of its
   * own, value is a 0 of out's dtype; EXT->first's stage makes the call. NULL: a compute. */
  struct ExternCall *ext;
};

/* `Lo, Hi = f(X)` calling `extern kernel f(...) -> (...)`: one Op per output. */
typedef struct ExternCall {
  const char *callee;  /* the C symbol */
  Loc decl;            /* the `extern kernel` */
  Buffer **bufs;       /* the caller's buffers: inputs, then outputs */
  int nin, nout;
  Expr **sizes;        /* the extern's sizes, over the caller's (i64) */
  int nsizes;
  Op *first;           /* the op of the first output: its stage makes the call */
} ExternCall;

typedef struct Variant {
  const char *name;
  unsigned targets;   /* TARGET_BIT mask */
  bool is_auto;
  Vec steps;          /* A_STEP nodes (empty for auto) */
  Loc loc;
} Variant;

typedef struct Kernel {
  const char *name;
  Loc loc;
  Buffer **inputs;  int ninputs;
  Buffer **outputs; int noutputs;
  Buffer **temps;   int ntemps;    /* `tensor` declarations and other intermediates */
  Op **ops;         int nops;      /* topological order: producers before consumers */
  IrVar **sizes;    int nsizes;    /* symbolic sizes, in order of first appearance */
  Variant **variants; int nvariants;
} Kernel;

typedef struct Program {
  const char *file;
  Kernel **kernels;
  int nkernels;
} Program;

/* -D NAME=VALUE: overrides a const, or binds a symbolic size (which is then a constant). */
typedef struct Define {
  const char *name;
  int64_t value;
  bool used;
} Define;

/* Check a parsed file (imports resolved). NULL when there were errors (reported). */
Program *check_program(Ast *file, Define *defs, int ndefs);
/* The value of NAME for check_const_expr; false when it has none. */
typedef bool (*ConstLookup)(void *env, const char *name, int64_t *value);
/* The integer constant expression A, folded as constants are (LANGUAGE.md): integers,
 * names (LOOKUP over ENV), unary -, + - * / % (floor division and modulo), max, min.
 * False when it is not one, overflows 64 bits or divides by zero, reported at the part
 * at fault; an unknown name too, unless UNKNOWN is not NULL: then the first one goes
 * to *UNKNOWN unreported (the caller words that error). network.c uses it as well. */
bool check_const_expr(const Ast *a, ConstLookup lookup, void *env, const char **unknown,
                      int64_t *out);
Kernel *program_kernel(Program *p, const char *name);
Op *kernel_op(Kernel *k, const char *tensor); /* the op writing TENSOR, or NULL */
Variant *kernel_variant(Kernel *k, const char *name);
/* The variant a kernel uses for TARGET when --schedule NAME (NULL: none) is given;
 * NULL means the default schedule. */
Variant *kernel_pick_variant(Kernel *k, const char *name, Target t);
/* The canonical text of the compute DAG (for the workload key) and its 64-bit hash. */
char *kernel_canonical(Kernel *k);
uint64_t kernel_workload_key(Kernel *k);
double kernel_flops(Kernel *k); /* arithmetic operations of one call, integer ones too (sizes bound) */

/* ===================================================================== */
/* schedule.c, bound.c, lower/ — steps on stages, bound inference, loops    */
/* ===================================================================== */

/* A kernel's schedule state, TE style: one stage per op (plus stages made by cache_read,
 * cache_write, rfactor), each with its loop relations, attachment and annotations.
 * Opaque; steps are the only way to change it. */
typedef struct Schedule Schedule;


/* The default schedule: every stage at the root, loops in declaration order, no
 * annotations. (The driver applies the target's default_steps, if any, when a kernel has
 * no variant for the target.) TARGET's table decides which steps are legal (bind, parallel). */
Schedule *sched_new(Kernel *k, Target t);
/* Apply one step. On error: a diagnostic at the step's line, false, and S unchanged.
 * Whether a compute_at's loop encloses every reader is judged on the final schedule
 * (as TVM does), by sched_check_attach, which sched_build and sched_lower call. */
bool sched_step(Schedule *s, const Ast *step);
/* false, after an error at the step that broke it, when a stage computed at a loop has
 * a reader outside that loop (or none). */
bool sched_check_attach(Schedule *s);
/* sched_new + every step of the variant (or of STEPS); NULL on error (reported). */
Schedule *sched_build(Kernel *k, Target t, const Vec *steps);
/* What sched_lower shows and checks besides lowering (part of Options). */
typedef struct LowerOptions {
  const char *dump_after; /* a pass name or "all": its IR to stdout (--dump-after) */
  bool verify;            /* ir_verify after every pass (--verify-passes) */
} LowerOptions;
typedef struct Options Options;
/* Bound inference and loop-nest generation, as the list of passes in lower/lower.c:
 * inline, bounds, nests, vthreads, simplify, gpu-check, flatten. The result verifies
 * (ir_verify; after every pass too in TEXC_DEBUG builds, under O->lower.verify or with
 * TEXC_VERIFY_PASSES=1). NULL on error (reported), e.g. a GPU schedule with an unbound
 * root stage, or more threads per block or shared memory than the device allows (the
 * target's check with gpu_limits(T, O); O may be NULL: the device's limits). */
LoweredFunc *sched_lower(Schedule *s, const Options *o);
/* Whether NAME is a lowering pass or "all"; else an error that lists the passes. */
bool sched_pass_known(const char *name);
/* ir/flatten.c: S with every access by one row-major offset (see LoweredFunc.flat),
 * and FN's flat body (FN->flat, or FN->body flattened for a hand-made function). */
Stmt *ir_flatten(const Stmt *s);
Stmt *ir_flat_body(const LoweredFunc *fn);
/* Names of the loops of every stage, outermost first, as steps may use them: the
 * tuner's view of a schedule. Each line `STAGE: l1 l2 ...` */
char *sched_describe(Schedule *s);

/* ===================================================================== */
/* irprint.c, verify.c, interp.c                                          */
/* ===================================================================== */

void ir_print_expr(FILE *f, const Expr *e);
void ir_print_stmt(FILE *f, const Stmt *s, int indent);
void ir_print_func(FILE *f, const LoweredFunc *fn);   /* --emit ir: TIR-like text */
char *ir_expr_str(const Expr *e);
/* Structural checks: every var bound before use, loads/stores with ndim indices (one in
 * FN->flat, which is checked too), dtypes consistent. Returns false and prints what is
 * wrong (an internal error). */
bool ir_verify(const LoweredFunc *fn);

/* Run a lowered function on host memory: ARGS[i] points to params[i]'s data,
 * SIZES[j] is the value of sizes[j]. Returns 0, or non-zero after printing the
 * error (an out-of-bounds access is reported, never performed). */
int interp_run(const LoweredFunc *fn, void **args, const int64_t *sizes);

/* compare.c: computed results against the reference (the interpreter's), the one check
 * of run --check, fuzz-schedule, the tuner and networks' --check. Ints and bools exact;
 * floats elementwise within rtol*|ref| + atol*max(max|ref|, 1) and in norm,
 * ||got - ref||_2 / ||ref||_2 <= l2tol (f16 1e-2 1e-3 1e-2, f32 1e-3 1e-4 1e-4, f64 1e-9
 * 1e-10 1e-10); NaN matches only NaN. Zero a result ({0}) before the first value. */
typedef struct CompareResult {
  double max_abs, max_rel, rel_l2; /* worst over everything compared */
  bool failed;
  const char *name;                /* the first output that failed */
  int64_t index;                   /* its first mismatch (-1: only its norm failed) */
  double got, want, l2, l2_threshold;
} CompareResult;
/* Compare N values of dtype T (output NAME); false when they differ. Adds to R. */
bool compare_values(const void *got, const void *ref, DType t, int64_t n, const char *name,
                    CompareResult *r);
/* Every output of F (params ninputs..nparams-1) in GOT against REF; R is zeroed first. */
bool compare_outputs(const LoweredFunc *f, void **got, void **ref, CompareResult *r);
/* compare_values with the tolerances of PRECISION for floats (what the values were
 * computed in; T their storage type). */
bool compare_values_as(const void *got, const void *ref, DType t, DType precision, int64_t n, const char *name,
                       CompareResult *r);
/* The float type whose tolerances fit output type T of F: T, but f32 (f16) for an f64
 * output when F computes or stores in f32 (f16) anywhere. */
DType compare_dtype(const LoweredFunc *f, DType t);
/* What failed, e.g. `C at flat index 7: got 1, expected 2` ("" when nothing). */
char *compare_mismatch(const CompareResult *r);
/* `  MISMATCH in ...` when failed, then `  check: max abs err A, max rel err R, rel L2 E: ok`. */
void compare_print(FILE *out, const CompareResult *r);
/* The same with WHAT for "check" (`  expect REF.npy: max abs err ...`). */
void compare_print_as(FILE *out, const char *what, const CompareResult *r);

/* ===================================================================== */
/* targets — one table per target (compiler/target/target.c holds the rows) */
/* ===================================================================== */

typedef struct Options {
  Target target;
  const char *mcpu, *mtriple;   /* llvm: default host */
  const char *prefix;           /* llvm: of every exported kernel name (--prefix) */
  bool so_object;               /* llvm, --emit obj: the object will be linked into a shared
                                   library that rt_module_load opens (its kernel table global) */
  const char *opencl_device;    /* "P:D" or a name substring */
  int opt_level;                /* 3 */
  bool verbose;
  GpuLimits gpu;                /* overrides of the device's limits; 0: the device's */
  LowerOptions lower;
} Options;

struct RtModule;

typedef enum { DEVICE_CPU, DEVICE_GPU } DeviceKind;

/* What the device of a target can do: from the device when there is one (queried once,
 * cached), else the target's defaults (target.c writes the GPU ones, once). */
/* What a CPU offers generated code (llvm.c: llvm_query, cpu_describe): from the
 * host (LLVM's host features, sysfs caches) or, under --mcpu/--mtriple, from the named CPU. */
typedef struct CpuInfo {
  int lanes;            /* f32 lanes of the widest vector register (16 AVX-512, 8 AVX2, 4 NEON) */
  int vregs;            /* architectural vector registers (32, 16, 32) */
  bool fma;             /* fused multiply-add */
  int dot_lanes;        /* i32 lanes of a four-byte dot product instruction (x86 VNNI's
                           vpdpbusd: 16 with AVX-512, 8 with AVX-VNNI; AArch64 I8MM's
                           usdot: 4); 0: none */
  int64_t l1d, l2, l3;  /* data cache bytes: L1 and L2 per core, L3 in all */
  int cores;           /* the threads its code runs with (rt_num_threads: TEX_NUM_THREADS, else the cores) */
  int mr, nr;           /* the micro-kernel: MR rows x NR f32 columns (NR / lanes vectors) of
                           accumulators in registers, from lanes and vregs (cpu_describe) */
  const char *source;   /* "host", or the --mcpu / --mtriple it was derived from */
} CpuInfo;

typedef struct DeviceInfo {
  bool found;          /* false: no device here; the facts below are defaults */
  GpuLimits gpu;       /* GPU: per-launch limits; zero on a CPU */
  int vector_bits;     /* CPU: widest SIMD register (bits); 0 when unknown */
  CpuInfo cpu;         /* CPU: the machine description (also for cross targets) */
} DeviceInfo;

/* A target: what the passes may ask about it and the functions that compile for it.
 * Every field is set (functions may be NULL only where the comment says so); adding a
 * target is one file with its row plus one line in target.c's table. */
typedef struct Backend {
  Target id;
  const char *name;          /* == target_names[id] */
  DeviceKind device;
  int rt_device;             /* the RtDeviceKind its functions run on (texrt.h) */
  /* What schedules may do on it (sched/schedule.c) and what lowering does for it. */
  bool allows_bind;          /* bind to blockIdx/threadIdx/vthread (and vthreads lower) */
  bool allows_parallel;      /* parallel: loops over CPU threads */
  bool allows_vectorize;
  bool kernel_scopes;        /* a temp inside a kernel takes shared/local memory by where it is */
  /* The dtypes (bit 1u << DType) whose atomic add, and atomic max and min, its kernels
   * have (gpu_source.c emits them): a scatter's reduction bound to threads updates its
   * output atomically only in these (sched/schedule.c); 0: none. */
  unsigned atomic_add, atomic_minmax;
  const char *default_emit;  /* --emit kind when -o's extension names none */
  /* The steps of the default schedule of K when it has no variant for this target;
   * NULL: none (every stage at the root, no annotations). */
  bool (*default_steps)(Kernel *k, Target t, Vec *steps);
  /* Checks of a lowered function against the device's limits (diagnostics, false);
   * NULL: nothing to check. */
  bool (*check)(const LoweredFunc *fn, const GpuLimits *limits);
  /* Fill D from the device that O picks; false when there is none (D untouched). */
  bool (*query)(const Options *o, DeviceInfo *d);
  /* Write FNS as KIND ("llvm", "asm", "obj", "so", "header", "cuda", "ptx", "opencl")
   * to PATH ("-" is stdout). false after a diagnostic when KIND does not apply. */
  bool (*emit)(LoweredFunc **fns, int n, const char *kind, const char *path, const Options *o);
  /* Compile FNS to run in this process; NULL after printing why (e.g. no device). */
  struct RtModule *(*build)(LoweredFunc **fns, int n, const Options *o);
} Backend;

extern const Backend backend_llvm, backend_cuda, backend_opencl;
const Backend *backend_for(Target t);
/* target.c: the facts of the device that O picks for T: queried once per device (the
 * OpenCL device spec is part of the key), cached; defaults when there is none. */
const DeviceInfo *target_device_info(Target t, const Options *o);
/* target.c: the CPU that O compiles for (NULL: the command line's options, else the host),
 * never NULL: its facts, its micro-kernel (mr x nr) derived from lanes and registers. */
const CpuInfo *target_cpu(const Options *o);
/* llvm.c: fill C's micro-kernel (mr, nr) from its lanes and vregs: NV = max(2, 12 / lanes) vectors
 * of columns, as many rows as fit with NV B vectors and the A broadcasts in the registers. */
void cpu_describe(CpuInfo *c);
/* The options of this process's command line (set once by cli_parse; NULL in tests). */
extern const Options *target_cli_options;
/* The GPU limits when there is no device: the only place they are written. */
extern const GpuLimits gpu_default_limits;
/* target.c: the runtime device (device 0 of its row's kind) that runs what T builds. */
struct RtDevice target_device(Target t);

/* gpu_default.c: the steps of the default GPU schedule for a kernel with no variant for
 * a GPU target: each root stage's spatial loops fused, split, bound to blockIdx.x and
 * threadIdx.x. Appends A_STEP nodes to STEPS. */
bool gpu_default_steps(Kernel *k, Target t, Vec *steps);
/* gpu_check.c: checks of a lowered GPU function against the device's limits: every
 * store under a blockIdx loop, threads per block, shared memory. Diagnostics at the
 * step that made the offending loop. LIMITS: gpu_limits' (never 0; no defaults here). */
bool gpu_check(const LoweredFunc *fn, const GpuLimits *limits);

/* GPU back ends. target/gpu_source.c prints CUDA C / OpenCL C for lowered GPU functions
 * and, for each, an RtGpuFunc: its host side (temps, then launches in order) as plain data,
 * which rt_cuda.c / rt_opencl.c run without the compiler. Launch extents and temp sizes are
 * RPN programs over the symbolic sizes: code[2i] is an RPN_ op, code[2i+1] its operand. */
/* The source of FNS for T (TARGET_CUDA or TARGET_OPENCL) and, when PLANS is not NULL, one
 * plan per function (arena). NULL after a diagnostic. */
char *cg_gpu_source(LoweredFunc **fns, int n, Target t, RtGpuFunc **plans);
/* target/cuda.c: CUDA C to PTX through NVRTC (dlopen'd). ARCH: "compute_90"; NULL: the
 * device's, else compute_90. Malloc'd PTX, or NULL after a diagnostic with NVRTC's log. */
char *cg_nvrtc_compile(const char *src, const char *arch);
/* target/llvm.c: the runtime archive a `--emit so` library links (libtexrt.a: $TEXC_RUNTIME,
 * else beside the texc binary or up to two folders above it), or NULL. */
const char *cg_runtime_archive(void);

/* target.c: the limits to check T's functions against: the device's (target_device_info;
 * a limit it does not give, gpu_default_limits'), each replaced by O->gpu's when that is
 * not 0; zero on a CPU target. */
GpuLimits gpu_limits(Target t, const Options *o);

/* ===================================================================== */
/* autosched/ — the auto-scheduler, records, `texc tune`, `texc records`  */
/* ===================================================================== */

/* `texc tune FILE` (P: FILE loaded) and `texc records show|best|distill ...` of a readable
 * log (report and plot are report/'s), as the command line C (cli/options.h) says. Return
 * the process exit status. */
struct Cli;
int tune_main(struct Cli *c, Program *p);
int records_main(struct Cli *c);
/* For `schedule K.V = auto`: the steps of the best record for K and T in RECORDS_PATH,
 * or, when there is none, those of a short search (which appends its records). */
bool tune_auto_steps(Kernel *k, Target t, const Options *o, const char *records_path,
                     Vec *steps);

/* util.c: deterministic random input data (uniform in [-1, 1) for floats, small integers;
 * when fill_int_edges is set, half of the integers are their dtype's edge values). */
void fill_random(void *data, DType t, int64_t n, uint64_t seed);
extern bool fill_int_edges;

#endif
