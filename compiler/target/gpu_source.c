/* target/gpu_source.c — the C-like printer behind the CUDA and OpenCL back ends.
 *
 * A lowered GPU function is a host loop nest: its top-level statements are global temps
 * (S_ALLOC, SCOPE_GLOBAL) and launches (subtrees with blockIdx/threadIdx loops). Each launch
 * becomes one kernel; its block loops give the grid, its thread loops the block shape.
 *
 * Inside a kernel the printer is in one of two modes:
 *  - uniform: every thread of the block runs the code (no thread guard entered yet). Here
 *    statements that contain thread loops are walked structurally, and each "region" (a
 *    statement run per thread) is preceded by a barrier when it touches a shared or global
 *    buffer that an earlier region of the block wrote (or writes one an earlier region read).
 *  - divergent: inside a guard such as `if (threadIdx.x < 48)` or a single-thread region;
 *    no barrier may appear, nested thread loops of a bound dimension run serially.
 * The interpreter's meaning (sibling thread loops run one after another) is kept exactly.
 * Accesses come flat (LoweredFunc.flat, lowering's flatten pass): one offset each.
 */
#include "texc.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Dialects                                                                */
/* ---------------------------------------------------------------------- */

/* What differs between CUDA C and OpenCL C: strings and a few flags. */
typedef struct Dialect {
  const char *prelude;
  const char *kernel_prefix;   /* before `void NAME(` */
  const char *global_ptr;      /* address space of buffer pointers */
  const char *restrict_kw;
  const char *shared_kw;
  const char *barrier;
  const char *block_idx[3], *thread_idx[3];
  const char *i64, *u8, *i8, *u32;
  const char *i64_suffix;      /* integer literal suffix beyond 32 bits */
  const char *inf32, *inf64;
  bool f_suffix;               /* expf for f32 (CUDA); OpenCL's builtins are overloaded */
  bool half_storage;           /* f16 buffers as `half` + vload_half (OpenCL) */
  bool rn_ops;                 /* float + - * that no compiler contracts: __fadd_rn ... (CUDA);
                                  else a statement with such an operation is a compound statement
                                  under `#pragma OPENCL FP_CONTRACT OFF` (Gen.exact) */
} Dialect;

/* texc_fdiv / texc_fmod: floor division and modulo, total as LANGUAGE.md defines them
 * (x / 0 == x % 0 == 0, INT_MIN / -1 == INT_MIN): C's / traps or is undefined there. */
static const char cuda_prelude[] =
    "typedef long long texc_i64;\n"
    "typedef unsigned long long texc_u64;\n"
    "__device__ __forceinline__ texc_i64 texc_fdiv(texc_i64 a, texc_i64 b) {\n"
    "  if (b == 0) return 0;\n"
    "  if (b == -1) return (texc_i64)((texc_u64)0 - (texc_u64)a);\n"
    "  texc_i64 q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
    "__device__ __forceinline__ texc_i64 texc_fmod(texc_i64 a, texc_i64 b) {\n"
    "  if (b == 0 || b == -1) return 0;\n"
    "  texc_i64 r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"
    "__device__ __forceinline__ texc_i64 texc_ipow(texc_i64 x, texc_i64 n) {\n"
    "  if (n < 0) return x == 1 ? 1 : x == -1 ? ((n & 1) ? -1 : 1) : 0;\n"
    "  unsigned long long r = 1, b = (unsigned long long)x;\n"
    "  for (unsigned long long k = (unsigned long long)n; k; k >>= 1, b *= b) if (k & 1) r *= b;\n"
    "  return (texc_i64)r;\n}\n"
    "__device__ __forceinline__ float texc_h2f(unsigned short h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f;\n}\n"
    "__device__ __forceinline__ unsigned short texc_f2h(float f) {\n"
    "  unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h;\n}\n";

static const char opencl_prelude[] =
    "typedef long texc_i64;\n"
    "typedef ulong texc_u64;\n"
    "static inline texc_i64 texc_fdiv(texc_i64 a, texc_i64 b) {\n"
    "  if (b == 0) return 0;\n"
    "  if (b == -1) return (texc_i64)((texc_u64)0 - (texc_u64)a);\n"
    "  texc_i64 q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
    "static inline texc_i64 texc_fmod(texc_i64 a, texc_i64 b) {\n"
    "  if (b == 0 || b == -1) return 0;\n"
    "  texc_i64 r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"
    "static inline texc_i64 texc_ipow(texc_i64 x, texc_i64 n) {\n"
    "  if (n < 0) return x == 1 ? 1 : x == -1 ? ((n & 1) ? -1 : 1) : 0;\n"
    "  ulong r = 1, b = (ulong)x;\n"
    "  for (ulong k = (ulong)n; k; k >>= 1, b *= b) if (k & 1) r *= b;\n"
    "  return (texc_i64)r;\n}\n";

static const Dialect dialect_cuda = {
    .prelude = cuda_prelude,
    .kernel_prefix = "extern \"C\" __global__ void",
    .global_ptr = "",
    .restrict_kw = "__restrict__",
    .shared_kw = "__shared__",
    .barrier = "__syncthreads();",
    .block_idx = {"blockIdx.x", "blockIdx.y", "blockIdx.z"},
    .thread_idx = {"threadIdx.x", "threadIdx.y", "threadIdx.z"},
    .i64 = "long long", .u8 = "unsigned char", .i8 = "signed char", .u32 = "unsigned int",
    .i64_suffix = "LL",
    .inf32 = "__int_as_float(0x7f800000)",
    .inf64 = "__longlong_as_double(0x7ff0000000000000LL)",
    .f_suffix = true,
    .rn_ops = true,
};

static const Dialect dialect_opencl = {
    .prelude = opencl_prelude,
    .kernel_prefix = "__kernel void",
    .global_ptr = "__global ",
    .restrict_kw = "restrict",
    .shared_kw = "__local",
    .barrier = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
    .block_idx = {"get_group_id(0)", "get_group_id(1)", "get_group_id(2)"},
    .thread_idx = {"get_local_id(0)", "get_local_id(1)", "get_local_id(2)"},
    .i64 = "long", .u8 = "uchar", .i8 = "char", .u32 = "uint",
    .i64_suffix = "L",
    .inf32 = "INFINITY",
    .inf64 = "((double)INFINITY)",
    .half_storage = true,
};

/* ---------------------------------------------------------------------- */
/* Output text                                                             */
/* ---------------------------------------------------------------------- */

typedef struct Str {
  char *p;
  size_t len, cap;
} Str;

static void str_vputf(Str *s, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (s->len + (size_t)n + 1 > s->cap) {
    s->cap = (s->len + (size_t)n + 1) * 2;
    s->p = realloc(s->p, s->cap);
    if (!s->p) die_oom(0);
  }
  vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap2);
  s->len += (size_t)n;
  va_end(ap2);
}

static void str_putf(Str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void str_putf(Str *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  str_vputf(s, fmt, ap);
  va_end(ap);
}

/* ---------------------------------------------------------------------- */
/* Generator state                                                         */
/* ---------------------------------------------------------------------- */

/* One buffer access of a region, for barrier placement. */
typedef struct Access {
  Buffer *buf;
  bool write;
  const Stmt *region;
} Access;

typedef struct Name {
  const void *key;
  const char *name;
} Name;

typedef struct Gen {
  const Dialect *d;
  const LoweredFunc *fn;
  Str *out;
  int indent;
  Vec names;              /* Name*: vars and buffers of the function */
  RangeMap ranges;        /* enclosing loops, for the simplifier */
  bool idx32;             /* index variables fit in int */
  bool ok;
  /* the kernel being printed */
  Expr *grid[3], *block[3];
  Vec kbufs;              /* global buffers the kernel takes */
  Vec shared;             /* S_ALLOC of shared buffers, declared at the top */
  bool active[3];         /* inside a loop bound to threadIdx.d */
  bool pinned[3];         /* inside a region that only thread 0 of dim d runs */
  IrVar *tvar[3];         /* the variable of that loop */
  bool coop[3];           /* that loop was rebound in a cooperative fetch (rebindable) */
  bool divergent;
  Vec state;              /* Access* since the last barrier */
  Vec *log;               /* when set, every region's accesses are added too */
  int mark;               /* with LOG: its length at the first barrier since set (-1: none) */
  int in_block;           /* scan: depth of blockIdx loops */
  int nvec;               /* vector temps printed so far */
  DType red_type;         /* element type of the kernel's allreduce scratch array */
  const Stmt *promo;      /* a store kept in a register across the loops around it */
  const char *promo_name;
  Vec hoisted;            /* S_IF of the promoted nest whose test was printed outside it */
  Vec staged;             /* Buffer*: register staging of prefetched copies (staged_seq) */
  Vec stage_from, stage_to; /* Stmt*: each sequence staged, and what it was printed as */
  bool staging;           /* printing a staged sequence (its own copies are not staged again) */
  /* Inside a float made an integer or rounded to an integer value (round, floor, ceil,
   * trunc), float + - * are not contracted into fused multiply-adds: the interpreter rounds
   * each, and one rounding less can move the integer (x * 1e9 + y made i32, a
   * quantization's round). LLVM's backend does the same (llvm.c CG.exact). */
  int exact;              /* depth of such contexts around the expression being printed */
  bool exact_printed;     /* such an operation was printed (OpenCL: fence the statement) */
} Gen;

/* Every identifier made from a user's name is printed with a prefix (gpu_name), so that
 * no tensor, variable or kernel can be spelled like a keyword, builtin, type or macro of
 * C, C++, CUDA or OpenCL (int, half, expf, rsqrt, INFINITY, threadIdx, get_group_id,
 * vload_half...) or like texc's own helpers:
 *   t_NAME    a tensor: parameter, intermediate, shared or local buffer
 *   v_NAME    a loop variable or a symbolic size
 *   kN_NAME   the Nth kernel of function NAME (the host looks it up by this name; kernel
 *             names are unique in a program, so these are unique in the source)
 * The names texc makes itself (texc_* helpers, red_acc, the ids of the dialect) start
 * with none of these. Characters other than [A-Za-z0-9] become '_' (B.i.outer is
 * v_B_i_outer); a spelling another key of the function has already gets `_ID`. */
static const char *name_of(Gen *g, const void *key, const char *prefix, const char *want, int id) {
  for (int i = 0; i < g->names.len; i++) {
    Name *n = g->names.data[i];
    if (n->key == key) return n->name;
  }
  char *s = xprintf("%s%s", prefix, want && *want ? want : "v");
  for (char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      *p = '_';
  for (int i = 0; i < g->names.len; i++)
    if (strcmp(((Name *)g->names.data[i])->name, s) == 0) {
      s = xprintf("%s_%d", s, id);
      i = -1; /* rescan: the suffixed name may be taken too */
      id += 100000;
    }
  Name *n = xalloc(sizeof *n);
  n->key = key;
  n->name = s;
  vec_push(&g->names, n);
  return s;
}

static const char *var_name(Gen *g, IrVar *v) { return name_of(g, v, "v_", v->name, v->id); }
static const char *buf_name(Gen *g, Buffer *b) { return name_of(g, b, "t_", b->name, b->id); }

static void line(Gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(Gen *g, const char *fmt, ...) {
  for (int i = 0; i < g->indent; i++) str_putf(g->out, "  ");
  va_list ap;
  va_start(ap, fmt);
  str_vputf(g->out, fmt, ap);
  va_end(ap);
  str_putf(g->out, "\n");
}

static void fail(Gen *g, Loc loc, const char *msg) {
  if (g->ok) diag_error(loc, "%s", msg);
  g->ok = false;
}

/* The C type that holds a value of T in expressions (f16 computes in float). */
static const char *ctype(const Gen *g, DType t) {
  switch (t) {
  case DT_BOOL: return "bool";
  case DT_I8: return g->d->i8;
  case DT_I16: return "short";
  case DT_I32: return "int";
  case DT_I64: return g->d->i64;
  case DT_U8: return g->d->u8;
  case DT_U32: return g->d->u32;
  case DT_F16: return "float";
  case DT_F32: return "float";
  case DT_F64: return "double";
  default: return "int";
  }
}

/* The C type of T's elements in memory. */
static const char *storage_type(const Gen *g, DType t, Scope scope) {
  if (t == DT_BOOL) return g->d->u8;
  if (t == DT_F16 && scope == SCOPE_GLOBAL)
    return g->d->half_storage ? "half" : "unsigned short";
  return ctype(g, t);
}

static const char *idx_type(const Gen *g) { return g->idx32 ? "int" : "texc_i64"; }

/* ---------------------------------------------------------------------- */
/* Expressions                                                             */
/* ---------------------------------------------------------------------- */

static void expr(Gen *g, Str *o, const Expr *e);
static char *expr_str(Gen *g, const Expr *e);
static char *int_wrap(Gen *g, int op, DType t, const char *a, const char *b);

static bool is_size(const Gen *g, const IrVar *v) {
  for (int i = 0; i < g->fn->nsizes; i++)
    if (g->fn->sizes[i] == v) return true;
  return false;
}

static void float_lit(Gen *g, Str *o, double v, DType t) {
  if (t != DT_F64) v = (float)v; /* an f32 literal beyond FLT_MAX (-1.0e39) is the infinity it is on a CPU */
  if (isnan(v)) {
    str_putf(o, t == DT_F64 ? "(0.0/0.0)" : "(0.0f/0.0f)");
    return;
  }
  if (isinf(v)) {
    str_putf(o, "(%s%s)", v < 0 ? "-" : "", t == DT_F64 ? g->d->inf64 : g->d->inf32);
    return;
  }
  char buf[64];
  snprintf(buf, sizeof buf, t == DT_F64 ? "%.17g" : "%.9g", v);
  if (!strpbrk(buf, ".eE")) strcat(buf, ".0");
  str_putf(o, "%s%s", buf, t == DT_F64 ? "" : "f");
}

static void int_lit(Gen *g, Str *o, int64_t v, DType t) {
  if (t == DT_BOOL) {
    str_putf(o, "%d", v != 0);
  } else if (v == INT64_MIN) {
    str_putf(o, "(-9223372036854775807%s - 1)", g->d->i64_suffix);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    str_putf(o, v < 0 ? "(%" PRId64 ")" : "%" PRId64, v);
  } else if (t == DT_U32) {
    str_putf(o, "%" PRId64 "u", v);
  } else {
    str_putf(o, v < 0 ? "(%" PRId64 "%s)" : "%" PRId64 "%s", v, g->d->i64_suffix);
  }
}

/* The offset of a flat access buf[args[0]] (LoweredFunc.flat), simplified under the
 * ranges of the enclosing loops. */
static void flat_index(Gen *g, Str *o, Expr **args) { expr(g, o, simplify(args[0], &g->ranges)); }

static void load(Gen *g, Str *o, const Expr *e) {
  Buffer *b = e->buf;
  const char *name = buf_name(g, b);
  if (g->promo && g->promo->buf == b) { /* promote() checked that the indices match */
    str_putf(o, "%s", g->promo_name);
    return;
  }
  if (b->dtype == DT_F16 && b->scope == SCOPE_GLOBAL) {
    str_putf(o, g->d->half_storage ? "vload_half(" : "texc_h2f(%s[", g->d->half_storage ? "" : name);
    flat_index(g, o, e->args);
    if (g->d->half_storage) str_putf(o, ", %s)", name);
    else str_putf(o, "])");
    return;
  }
  str_putf(o, "%s[", name);
  flat_index(g, o, e->args);
  str_putf(o, "]");
}

/* A math function's name for dtype T in the dialect. */
static const char *math_name(const Gen *g, const char *base, DType t) {
  bool f = g->d->f_suffix && (t == DT_F32 || t == DT_F16);
  return f ? xprintf("%sf", base) : base;
}

static void call(Gen *g, Str *o, const Expr *e) {
  static const char *const names[CALLFN_COUNT] = {"exp",     "log",  "sqrt",  "rsqrt", "tanh",
                                                  "sigmoid", "fabs", "floor", "ceil",
                                                  "erf", "sin", "cos", "tan", "asin", "acos",
                                                  "atan", "sinh", "cosh", "rint", "trunc",
                                                  NULL, "log2", "log1p", "exp2", "expm1"};
  const Expr *x = e->args[0];
  if (e->op == FN_SIGN) { /* 1, -1, 0; a NaN stays NaN */
    char *a = expr_str(g, x);
    bool fl = dtype_is_float(e->dtype), d = e->dtype == DT_F64;
    const char *one = !fl ? "1" : d ? "1.0" : "1.0f", *zero = !fl ? "0" : d ? "0.0" : "0.0f";
    str_putf(o, "((%s)((%s) > %s ? %s : (%s) < %s ? -%s : ", ctype(g, e->dtype), a, zero, one,
             a, zero, one);
    if (fl) str_putf(o, "(%s) == %s ? %s : (%s)))", a, zero, zero, a);
    else str_putf(o, "%s))", zero);
    return;
  }
  if (e->op == FN_SIGMOID) {
    bool d = e->dtype == DT_F64;
    str_putf(o, "(%s / (%s + %s(-(", d ? "1.0" : "1.0f", d ? "1.0" : "1.0f",
             math_name(g, "exp", e->dtype));
    expr(g, o, x);
    str_putf(o, "))))");
    return;
  }
  if (e->op == FN_ABS && !dtype_is_float(e->dtype)) { /* abs(INT_MIN) wraps to INT_MIN */
    char *xs = expr_str(g, x);
    str_putf(o, "((%s) < 0 ? %s : (%s))", xs, int_wrap(g, OP_NEG, e->dtype, xs, NULL), xs);
    return;
  }
  if (!dtype_is_float(e->dtype)) { /* floor/ceil/... of an integer: itself */
    expr(g, o, x);
    return;
  }
  bool steps = callfn_rounds((CallFn)e->op);
  str_putf(o, "%s(", math_name(g, names[e->op], e->dtype));
  g->exact += steps;
  expr(g, o, x);
  g->exact -= steps;
  str_putf(o, ")");
}

/* Integer floor division and modulo: plain C when both sides are provably non-negative
 * and the divisor positive; unsigned: plain C unless the divisor may be 0 (x / 0 == 0). */
static void int_divmod(Gen *g, Str *o, const Expr *e) {
  int64_t alo, ahi, blo, bhi;
  bool uns = e->dtype == DT_U8 || e->dtype == DT_U32;
  bool bpos = const_bounds(e->b, &g->ranges, &blo, &bhi) && blo > 0;
  bool plain = (uns && bpos) || (const_bounds(e->a, &g->ranges, &alo, &ahi) && alo >= 0 && bpos);
  if (uns && !plain) {
    char *a = expr_str(g, e->a), *b = expr_str(g, e->b);
    str_putf(o, "((%s) == 0 ? 0 : (%s) %s (%s))", b, a, e->op == OP_DIV ? "/" : "%", b);
    return;
  }
  if (plain) {
    str_putf(o, "(");
    expr(g, o, e->a);
    str_putf(o, e->op == OP_DIV ? " / " : " %% ");
    expr(g, o, e->b);
    str_putf(o, ")");
    return;
  }
  str_putf(o, "((%s)%s((texc_i64)(", ctype(g, e->dtype), e->op == OP_DIV ? "texc_fdiv" : "texc_fmod");
  expr(g, o, e->a);
  str_putf(o, "), (texc_i64)(");
  expr(g, o, e->b);
  str_putf(o, ")))");
}

/* & | ^ << >> on integers. Shift counts are masked to the width less one (LANGUAGE.md);
 * a left shift runs unsigned (no signed overflow in C) and is cast back to the dtype. C
 * computes i8 / u8 / i16 in int, unwrapped: results are cast to the dtype, and so is the
 * operand of >>, whose high bits it shifts in. */
static void int_bits(Gen *g, Str *o, const Expr *e) {
  const char *ct = ctype(g, e->dtype);
  char *a = expr_str(g, e->a), *b = expr_str(g, e->b);
  int w = dtype_bytes(e->dtype) * 8;
  switch (e->op) {
  case OP_BAND: str_putf(o, "((%s)((%s) & (%s)))", ct, a, b); break;
  case OP_BOR: str_putf(o, "((%s)((%s) | (%s)))", ct, a, b); break;
  case OP_BXOR: str_putf(o, "((%s)((%s) ^ (%s)))", ct, a, b); break;
  case OP_SHL:
    str_putf(o, "((%s)((%s)(%s) << ((%s) & %d)))", ct, w == 64 ? xprintf("unsigned %s", g->d->i64) : g->d->u32,
             a, b, w - 1);
    break;
  default: str_putf(o, "((%s)((%s)(%s) >> ((%s) & %d)))", ct, ct, a, b, w - 1); break;
  }
}

/* Is integer E computed without wrapping, so that plain C (where signed overflow is
 * undefined, and i8/i16/u8 compute in int) gives its value? u32 wraps in C as it should. */
static bool int_plain(Gen *g, const Expr *e) {
  if (e->dtype == DT_U32 || !dtype_is_int(e->dtype)) return true;
  return arith_never_wraps((Expr *)e, &g->ranges);
}

/* A OP B (B NULL: -A) on integers of dtype T as wrapping C text: i32 and i64 through their
 * unsigned types, narrower types computed in int and converted back (LANGUAGE.md). */
static char *int_wrap(Gen *g, int op, DType t, const char *a, const char *b) {
  const char *ut = t == DT_I64 ? "texc_u64" : t == DT_I32 ? "unsigned int" : NULL;
  const char *sym = !b ? "-" : op == OP_ADD ? "+" : op == OP_SUB ? "-" : "*";
  if (!ut && !b) return xprintf("((%s)(-(%s)))", ctype(g, t), a);
  if (!ut) return xprintf("((%s)((%s) %s (%s)))", ctype(g, t), a, sym, b);
  if (!b) return xprintf("((%s)((%s)0 - (%s)(%s)))", ctype(g, t), ut, ut, a);
  return xprintf("((%s)((%s)(%s) %s (%s)(%s)))", ctype(g, t), ut, a, sym, ut, b);
}

static void binary(Gen *g, Str *o, const Expr *e) {
  static const char *const ops[BINOP_COUNT] = {"+",  "-",  "*",  "/",  "%",  NULL, NULL, "==",
                                               "!=", "<",  "<=", ">",  ">=", "&&", "||", NULL};
  DType t = e->a->dtype;
  bool fl = dtype_is_float(t);
  if ((e->op == OP_DIV || e->op == OP_MOD) && !fl) {
    int_divmod(g, o, e);
    return;
  }
  if ((e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL) && !fl && !int_plain(g, e)) {
    str_putf(o, "%s", int_wrap(g, e->op, e->dtype, expr_str(g, e->a), expr_str(g, e->b)));
    return;
  }
  const char *fn = NULL;
  if ((e->op == OP_MIN || e->op == OP_MAX) && !fl) { /* no overload puzzles: a ternary */
    char *a = expr_str(g, e->a), *b = expr_str(g, e->b);
    str_putf(o, "((%s) %s (%s) ? (%s) : (%s))", a, e->op == OP_MIN ? "<" : ">", b, a, b);
    return;
  }
  if (e->op == OP_MIN) fn = math_name(g, "fmin", t);
  if (e->op == OP_MAX) fn = math_name(g, "fmax", t);
  if (e->op == OP_POW && !fl) {
    str_putf(o, "((%s)texc_ipow((texc_i64)(", ctype(g, e->dtype));
    expr(g, o, e->a);
    str_putf(o, "), (texc_i64)(");
    expr(g, o, e->b);
    str_putf(o, ")))");
    return;
  }
  if (e->op >= OP_BAND && e->op <= OP_SHR) {
    int_bits(g, o, e);
    return;
  }
  if (e->op == OP_POW) fn = math_name(g, "pow", t);
  if (e->op == OP_FMOD) fn = math_name(g, "fmod", t);
  if (e->op == OP_ATAN2) fn = math_name(g, "atan2", t);
  if (e->op == OP_MOD) { /* floats: fmod moved into the divisor's sign, a zero too (numpy's mod) */
    char *r = xprintf("%s(%s, %s)", math_name(g, "fmod", t), expr_str(g, e->a), expr_str(g, e->b));
    char *b = expr_str(g, e->b);
    const char *zero = t == DT_F64 ? "0.0" : "0.0f";
    str_putf(o, "((%s) == %s ? %s(%s, %s) : (((%s) < 0) != ((%s) < 0)) ? (%s) + (%s) : (%s))", r, zero,
             math_name(g, "copysign", t), zero, b, r, b, r, b, r);
    return;
  }
  if (fn) {
    bool cast = e->op == OP_POW && !fl;
    if (cast) str_putf(o, "((%s)", ctype(g, e->dtype));
    str_putf(o, "%s(", fn);
    expr(g, o, e->a);
    str_putf(o, ", ");
    expr(g, o, e->b);
    str_putf(o, cast ? "))" : ")");
    return;
  }
  if (fl && g->exact && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL)) {
    g->exact_printed = true;
    if (g->d->rn_ops) {
      const char *op = e->op == OP_ADD ? "add" : e->op == OP_SUB ? "sub" : "mul";
      str_putf(o, "__%c%s_rn(", t == DT_F64 ? 'd' : 'f', op);
      expr(g, o, e->a);
      str_putf(o, ", ");
      expr(g, o, e->b);
      str_putf(o, ")");
      return;
    }
  }
  str_putf(o, "(");
  expr(g, o, e->a);
  str_putf(o, " %s ", ops[e->op]);
  expr(g, o, e->b);
  str_putf(o, ")");
}

/* Print E in the dialect. Index variables are idx_type; sizes are texc_i64 arguments. */
static void expr(Gen *g, Str *o, const Expr *e) {
  switch (e->kind) {
  case E_INT: int_lit(g, o, e->ival, e->dtype); break;
  case E_FLOAT: float_lit(g, o, e->fval, e->dtype); break;
  case E_VAR:
    str_putf(o, "%s", var_name(g, e->var));
    break;
  case E_LOAD: load(g, o, e); break;
  case E_BIN: binary(g, o, e); break;
  case E_UN:
    if (e->op == OP_NEG && !int_plain(g, e)) {
      str_putf(o, "%s", int_wrap(g, OP_NEG, e->dtype, expr_str(g, e->a), NULL));
      break;
    }
    str_putf(o, e->op == OP_NEG ? "(-" : "(!");
    expr(g, o, e->a);
    str_putf(o, ")");
    break;
  case E_SELECT:
    str_putf(o, "(");
    expr(g, o, e->a);
    str_putf(o, " ? ");
    expr(g, o, e->b);
    str_putf(o, " : ");
    expr(g, o, e->c);
    str_putf(o, ")");
    break;
  case E_CALL: call(g, o, e); break;
  case E_CAST:
    if (e->dtype == DT_BOOL) {
      str_putf(o, "((");
      expr(g, o, e->a);
      str_putf(o, ") != 0)");
    } else if (dtype_is_float(e->a->dtype) && !dtype_is_float(e->dtype)) {
      /* As the interpreter: truncate to i64 (0 for NaN and out of range), then wrap;
       * a plain C cast of an out-of-range float is undefined. */
      const char *f = e->a->dtype == DT_F64 ? "" : "f";
      g->exact++;
      char *x = expr_str(g, e->a);
      g->exact--;
      str_putf(o, "((%s)(texc_i64)((%s) > -9.2e18%s && (%s) < 9.2e18%s ? (%s) : 0))", ctype(g, e->dtype), x,
               f, x, f, x);
    } else {
      str_putf(o, "((%s)(", ctype(g, e->dtype));
      expr(g, o, e->a);
      str_putf(o, "))");
    }
    break;
  default: die("codegen_c: bad expression kind %d", e->kind);
  }
}

static char *expr_str(Gen *g, const Expr *e) {
  Str s = {0};
  expr(g, &s, e);
  char *r = xstrdup(s.p ? s.p : "");
  free(s.p);
  return r;
}

/* ---------------------------------------------------------------------- */
/* Analysis of a launch                                                    */
/* ---------------------------------------------------------------------- */

static int block_dim(ForKind k) { return k - FOR_BLOCK_X; }
static int thread_dim(ForKind k) { return k - FOR_THREAD_X; }
static bool is_block(ForKind k) { return k >= FOR_BLOCK_X && k <= FOR_BLOCK_Z; }
static bool is_thread(ForKind k) { return forkind_is_thread(k); }

/* True when S contains a loop for which PRED holds. */
static bool contains_loop(const Stmt *s, bool (*pred)(ForKind)) {
  if (!s) return false;
  if (s->kind == S_FOR && pred(s->for_kind)) return true;
  if (contains_loop(s->body, pred) || contains_loop(s->els, pred)) return true;
  for (int i = 0; i < s->n; i++)
    if (contains_loop(s->stmts[i], pred)) return true;
  return false;
}

/* Does E use only symbolic sizes (so that the host can evaluate it at launch)? */
static bool only_sizes(const Gen *g, const Expr *e) {
  if (!e) return true;
  if (e->kind == E_VAR) return is_size(g, e->var);
  if (e->kind == E_LOAD) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!only_sizes(g, e->args[i])) return false;
  return only_sizes(g, e->a) && only_sizes(g, e->b) && only_sizes(g, e->c);
}

/* An upper bound of a loop extent that the host can evaluate: the extent itself, or
 * its constant maximum over the enclosing loops. NULL when there is none. */
static Expr *launch_extent(Gen *g, Expr *ext) {
  ext = simplify(ext, &g->ranges);
  if (only_sizes(g, ext)) return ext;
  int64_t lo, hi;
  if (const_bounds(ext, &g->ranges, &lo, &hi)) return ir_int(hi);
  return NULL;
}

static bool same_extent(Gen *g, Expr *a, Expr *b) {
  int64_t x, y;
  if (!a || !b) return false;
  a = simplify(a, &g->ranges);
  b = simplify(b, &g->ranges);
  if (ir_is_const(a, &x) && ir_is_const(b, &y)) return x == y;
  return ir_equal(a, b);
}

static void widen(Gen *g, Expr **slot, Expr *ext, Loc loc) {
  Expr *e = launch_extent(g, ext);
  if (!e) {
    fail(g, loc, "a GPU loop's extent depends on other loops and has no constant bound");
    return;
  }
  *slot = *slot && !same_extent(g, *slot, e) ? simplify(ir_max(*slot, e), NULL) : e;
}

static void add_kbuf(Gen *g, Buffer *b) {
  if (b->scope != SCOPE_GLOBAL) return;
  for (int i = 0; i < g->kbufs.len; i++)
    if (g->kbufs.data[i] == b) return;
  vec_push(&g->kbufs, b);
}

static void scan_expr(Gen *g, const Expr *e) {
  if (!e) return;
  if (e->kind == E_LOAD) add_kbuf(g, e->buf);
  for (int i = 0; i < e->nargs; i++) scan_expr(g, e->args[i]);
  scan_expr(g, e->a);
  scan_expr(g, e->b);
  scan_expr(g, e->c);
}

/* Collect the launch shape, the buffers and the shared allocations of kernel S. */
static void scan_launch(Gen *g, Stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case S_FOR:
    if (!g->in_block && !is_block(s->for_kind) && contains_loop(s->body, is_block))
      fail(g, s->loc, xprintf("loop %s encloses a blockIdx loop: on a GPU the blockIdx loops "
                              "must be outermost", s->var->name));
    if (is_block(s->for_kind)) widen(g, &g->grid[block_dim(s->for_kind)], s->extent, s->loc);
    if (is_thread(s->for_kind)) widen(g, &g->block[thread_dim(s->for_kind)], s->extent, s->loc);
    scan_expr(g, s->min);
    scan_expr(g, s->extent);
    range_push(&g->ranges, s->var, s->min, s->extent);
    g->in_block += is_block(s->for_kind);
    scan_launch(g, s->body);
    g->in_block -= is_block(s->for_kind);
    range_pop(&g->ranges);
    return;
  case S_STORE:
    if (!g->in_block)
      fail(g, s->loc, xprintf("stage %s is not bound to blockIdx: a GPU schedule must bind "
                              "every root stage", s->buf->name));
    add_kbuf(g, s->buf);
    for (int i = 0; i < s->nargs; i++) scan_expr(g, s->args[i]);
    scan_expr(g, s->value);
    return;
  case S_ALLOC:
    if (s->buf->scope == SCOPE_SHARED) vec_push(&g->shared, s);
    if (s->buf->scope == SCOPE_GLOBAL)
      fail(g, s->loc, xprintf("global buffer %s is allocated inside a GPU kernel: compute it at "
                              "the root, or cache it in shared or local memory", s->buf->name));
    scan_launch(g, s->body);
    return;
  case S_IF:
    scan_expr(g, s->cond);
    scan_launch(g, s->body);
    scan_launch(g, s->els);
    return;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) scan_launch(g, s->stmts[i]);
    return;
  case S_BARRIER: return;
  default: die("codegen_c: bad statement kind %d", s->kind);
  }
}

/* ---------------------------------------------------------------------- */
/* Barriers                                                                */
/* ---------------------------------------------------------------------- */

static void access_expr(const Expr *e, const Stmt *region, Vec *acc) {
  if (!e) return;
  if (e->kind == E_LOAD && e->buf->scope != SCOPE_LOCAL && e->buf->kind != BUF_INPUT) {
    Access *a = xalloc(sizeof *a);
    *a = (Access){e->buf, false, region};
    vec_push(acc, a);
  }
  for (int i = 0; i < e->nargs; i++) access_expr(e->args[i], region, acc);
  access_expr(e->a, region, acc);
  access_expr(e->b, region, acc);
  access_expr(e->c, region, acc);
}

/* The shared and global buffers that S reads and writes (inputs are never written). */
static void accesses(const Stmt *s, const Stmt *region, Vec *acc) {
  if (!s) return;
  access_expr(s->min, region, acc);
  access_expr(s->extent, region, acc);
  access_expr(s->cond, region, acc);
  access_expr(s->value, region, acc);
  for (int i = 0; i < s->nargs; i++) access_expr(s->args[i], region, acc);
  if (s->kind == S_STORE && s->buf->scope != SCOPE_LOCAL) {
    Access *a = xalloc(sizeof *a);
    *a = (Access){s->buf, true, region};
    vec_push(acc, a);
  }
  accesses(s->body, region, acc);
  accesses(s->els, region, acc);
  for (int i = 0; i < s->n; i++) accesses(s->stmts[i], region, acc);
}

/* Does a region with accesses ACC need a barrier after what STATE holds? A region never
 * conflicts with itself: its threads own distinct elements (a legal schedule). */
static bool conflicts(const Vec *state, const Vec *acc) {
  for (int i = 0; i < acc->len; i++) {
    Access *a = acc->data[i];
    for (int j = 0; j < state->len; j++) {
      Access *b = state->data[j];
      if (a->buf == b->buf && a->region != b->region && (a->write || b->write)) return true;
    }
  }
  return false;
}

static void append_all(Vec *dst, const Vec *src) {
  for (int i = 0; i < src->len; i++) vec_push(dst, src->data[i]);
}

static bool has_threads(const Gen *g) {
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (g->block[d] && !(ir_is_const(g->block[d], &v) && v == 1)) return true;
  }
  return false;
}

/* A barrier: every access before it is ordered before every access after it. */
static void barrier(Gen *g) {
  line(g, "%s", g->d->barrier);
  g->state = (Vec){0};
  if (g->log && g->mark < 0) g->mark = g->log->len;
}

/* Before a region: a barrier when it conflicts with the state; then record it. */
static void region_barrier(Gen *g, const Stmt *region) {
  Vec acc = {0};
  accesses(region, region, &acc);
  if (conflicts(&g->state, &acc) && has_threads(g)) barrier(g);
  append_all(&g->state, &acc);
  if (g->log) append_all(g->log, &acc);
}

/* ---------------------------------------------------------------------- */
/* Statements                                                              */
/* ---------------------------------------------------------------------- */

static void stmt(Gen *g, Stmt *s);

/* A scatter's update from threads, buf[idx] = buf[idx] OP v (the Backend rows' atomic_add
 * and atomic_minmax say which, as schedule.c's gpu_atomic_ok reads them): CUDA's
 * atomicAdd/Max/Min; OpenCL's atomic_add/max/min on 32-bit integers and, for f32 +=, a
 * compare-and-swap loop on the bit pattern. */
static void atomic_store(Gen *g, Stmt *s, const char *name, const char *idx) {
  BinOp how;
  Expr *v = ir_update_operand(s, &how);
  DType t = s->buf->dtype;
  if (!v) {
    fail(g, s->loc, xprintf("atomic update of %s is not an update of it", s->buf->name));
    return;
  }
  char *val = expr_str(g, v);
  const char *fn = how == OP_ADD ? "add" : how == OP_MAX ? "max" : "min";
  if (g->d == &dialect_cuda) {
    const char *cast = t == DT_I64 && how == OP_ADD ? "(unsigned long long *)" : "";
    const char *vcast = t == DT_I64 && how == OP_ADD ? "(unsigned long long)" : "";
    line(g, "atomic%c%s(%s&%s[%s], %s(%s));", fn[0] - 'a' + 'A', fn + 1, cast, name, idx, vcast, val);
  } else if (t == DT_F32 && how == OP_ADD) {
    line(g, "{");
    line(g, "  __global volatile uint *texc_p = (__global volatile uint *)&%s[%s];", name, idx);
    line(g, "  float texc_v = %s;", val);
    line(g, "  uint texc_old = *texc_p, texc_was;");
    line(g, "  do {");
    line(g, "    texc_was = texc_old;");
    line(g, "    texc_old = atomic_cmpxchg(texc_p, texc_was, as_uint(as_float(texc_was) + texc_v));");
    line(g, "  } while (texc_old != texc_was);");
    line(g, "}");
  } else if (t == DT_I32 || t == DT_U32) {
    line(g, "atomic_%s(&%s[%s], %s);", fn, name, idx, val);
  } else {
    fail(g, s->loc, xprintf("no OpenCL atomic %s= on %s", how == OP_ADD ? "+" : fn, dtype_name(t)));
  }
}

/* OpenCL has no float operation that is never contracted: the lines printed between
 * fence_begin and fence_end become a compound statement under `#pragma OPENCL FP_CONTRACT
 * OFF` when they hold a float + - * inside a float made an integer (Gen.exact). CUDA
 * prints those as __fadd_rn ... and needs no fence. */
typedef struct Fence {
  Str *out, text;
  bool was;
} Fence;

static void fence_begin(Gen *g, Fence *f) {
  *f = (Fence){.out = g->out, .was = g->exact_printed};
  g->exact_printed = false;
  g->out = &f->text;
}

static void fence_end(Gen *g, Fence *f) {
  g->out = f->out;
  bool fenced = g->exact_printed && !g->d->rn_ops;
  if (fenced) {
    line(g, "{");
    line(g, "#pragma OPENCL FP_CONTRACT OFF");
  }
  if (f->text.p) str_putf(g->out, "%s", f->text.p);
  if (fenced) line(g, "}");
  free(f->text.p);
  g->exact_printed = g->exact_printed || f->was;
}

static void store_text(Gen *g, Stmt *s);

static void store(Gen *g, Stmt *s) {
  Fence f;
  fence_begin(g, &f);
  store_text(g, s);
  fence_end(g, &f);
}

static void store_text(Gen *g, Stmt *s) {
  Buffer *b = s->buf;
  if (s == g->promo) {
    line(g, "%s = %s;", g->promo_name, expr_str(g, s->value));
    return;
  }
  Str o = {0};
  flat_index(g, &o, s->args);
  char *idx = xstrdup(o.p);
  free(o.p);
  char *val = expr_str(g, s->value);
  const char *name = buf_name(g, b);
  if (s->atomic) {
    atomic_store(g, s, name, idx);
  } else if (b->dtype == DT_F16 && b->scope == SCOPE_GLOBAL) {
    if (g->d->half_storage) line(g, "vstore_half(%s, %s, %s);", val, idx, name);
    else line(g, "%s[%s] = texc_f2h(%s);", name, idx, val);
  } else if (b->dtype == DT_BOOL) {
    line(g, "%s[%s] = (%s)(%s);", name, idx, g->d->u8, val);
  } else {
    line(g, "%s[%s] = %s;", name, idx, val);
  }
}

static bool loads_match(const Expr *e, const Stmt *st) {
  if (!e) return true;
  if (e->kind == E_LOAD && e->buf == st->buf)
    for (int d = 0; d < st->nargs; d++)
      if (!ir_equal(e->args[d], st->args[d])) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!loads_match(e->args[i], st)) return false;
  return loads_match(e->a, st) && loads_match(e->b, st) && loads_match(e->c, st);
}

/* The store that serial loop nest S accumulates into one element, when the element can
 * live in a register across the nest (S's loops nest directly, the store's indices use none
 * of their variables, and every load of its buffer in the nest reads that element). */
static bool has_load(const Expr *e) {
  if (!e) return false;
  if (e->kind == E_LOAD) return true;
  for (int i = 0; i < e->nargs; i++)
    if (has_load(e->args[i])) return true;
  return has_load(e->a) || has_load(e->b) || has_load(e->c);
}

static const Stmt *promotable(const Stmt *s, Vec *ifs) {
  IrVar *vars[16];
  int n = 0;
  const Stmt *b = s;
  while (b && n < 16) { /* loops, and guards that none of their variables decide */
    if (b->kind == S_FOR && !forkind_is_gpu(b->for_kind)) {
      vars[n++] = b->var;
    } else if (b->kind == S_IF && !b->els && !has_load(b->cond) && b != s) {
      for (int i = 0; i < n; i++)
        if (ir_uses_var(b->cond, vars[i])) return NULL;
      vec_push(ifs, (void *)b);
    } else {
      break;
    }
    b = b->body;
  }
  if (!b || b->kind != S_STORE || b->atomic || b->buf->dtype == DT_BOOL ||
      (b->buf->dtype == DT_F16 && b->buf->scope == SCOPE_GLOBAL))
    return NULL;
  for (int d = 0; d < b->nargs; d++)
    for (int i = 0; i < n; i++)
      if (ir_uses_var(b->args[d], vars[i])) return NULL;
  return loads_match(b->value, b) ? b : NULL;
}

static void plain_loop(Gen *g, Stmt *s);

/* A serial loop; an accumulation into one element is kept in a register. */
static void serial_loop(Gen *g, Stmt *s) {
  Vec ifs = {0};
  const Stmt *st = g->promo ? NULL : promotable(s, &ifs);
  if (!st) {
    plain_loop(g, s);
    return;
  }
  char *test = NULL;
  for (int i = 0; i < ifs.len; i++) {
    char *c = expr_str(g, simplify(((Stmt *)ifs.data[i])->cond, &g->ranges));
    test = test ? xprintf("%s && %s", test, c) : c;
  }
  if (test) {
    line(g, "if (%s) {", test);
    g->indent++;
  }
  Str o = {0};
  flat_index(g, &o, st->args);
  const char *buf = buf_name(g, st->buf);
  char *elem = xprintf("%s[%s]", buf, o.p);
  free(o.p);
  g->promo_name = name_of(g, st, "", xprintf("%s_acc", buf), st->buf->id);
  line(g, "{");
  g->indent++;
  line(g, "%s %s = %s;", ctype(g, st->buf->dtype), g->promo_name, elem);
  g->promo = st;
  g->hoisted = ifs;
  plain_loop(g, s);
  g->promo = NULL;
  g->hoisted = (Vec){0};
  line(g, "%s = %s;", elem, g->promo_name);
  g->indent--;
  line(g, "}");
  if (test) {
    g->indent--;
    line(g, "}");
  }
}

/* ---------------------------------------------------------------------- */
/* vectorize: float2 / float4 memory accesses                              */
/* ---------------------------------------------------------------------- */

/* Is E a multiple of L for every value of its variables? (Affine terms only.) */
static bool divisible(const Expr *e, int64_t l) {
  switch (e->kind) {
  case E_INT: return e->ival % l == 0;
  case E_BIN:
    if (e->op == OP_ADD || e->op == OP_SUB) return divisible(e->a, l) && divisible(e->b, l);
    if (e->op == OP_MUL) return divisible(e->a, l) || divisible(e->b, l);
    return false;
  case E_CAST: return divisible(e->a, l);
  default: return false;
  }
}

/* The flat start of buf[args] when its L lanes (V = 0..L-1) are contiguous and the start
 * is a multiple of L: the row stride and the offset are checked from the index. */
static Expr *vector_base(Gen *g, Buffer *b, Expr **args, IrVar *v, int64_t l) {
  if (b->dtype != DT_F32 || b->scope == SCOPE_LOCAL) return NULL;
  Expr *flat = simplify(args[0], &g->ranges);
  Expr *zero = ir_int(0);
  Expr *base = simplify(ir_subst(flat, &v, &zero, 1), &g->ranges);
  Expr *step = simplify(ir_sub(flat, base), &g->ranges);
  if (step->kind != E_VAR || step->var != v || !divisible(base, l)) return NULL;
  return base;
}

/* E with the loads in FROM replaced by the expressions in TO. */
static Expr *swap_loads(Expr *e, Vec *from, Vec *to) {
  if (!e || e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_VAR) return e;
  for (int i = 0; i < from->len; i++)
    if (from->data[i] == e) return to->data[i];
  Expr *n = xalloc(sizeof *n);
  *n = *e;
  n->a = swap_loads(e->a, from, to);
  n->b = swap_loads(e->b, from, to);
  n->c = swap_loads(e->c, from, to);
  if (e->nargs) {
    n->args = xalloc(sizeof(Expr *) * (size_t)e->nargs);
    for (int i = 0; i < e->nargs; i++) n->args[i] = swap_loads(e->args[i], from, to);
  }
  return n;
}

static void lane_loads(Expr *e, IrVar *v, Vec *out) {
  if (!e) return;
  if (e->kind == E_LOAD && ir_uses_var(e, v)) {
    vec_push(out, e);
    return;
  }
  for (int i = 0; i < e->nargs; i++) lane_loads(e->args[i], v, out);
  lane_loads(e->a, v, out);
  lane_loads(e->b, v, out);
  lane_loads(e->c, v, out);
}

/* A C name for a vector temp, registered so that var_name prints it as is. */
static IrVar *vec_temp(Gen *g, const char *text) {
  IrVar *v = ir_newvar("vec", DT_F32);
  Name *n = xalloc(sizeof *n);
  n->key = v;
  n->name = xstrdup(text);
  vec_push(&g->names, n);
  return v;
}

static char *vec_addr(Gen *g, Buffer *b, Expr *base) {
  return xprintf("%s + %s", buf_name(g, b), expr_str(g, base));
}

/* A vectorized loop S (extent 2 or 4) whose body is one store: contiguous, aligned f32
 * loads and the store become float2/float4 accesses; the arithmetic stays per lane.
 * False (nothing printed) when no access qualifies: the plain loop is printed then. */
static bool vector_loop(Gen *g, Stmt *s) {
  int64_t l, mn;
  Stmt *st = s->body;
  if (!ir_is_const(s->extent, &l) || (l != 2 && l != 4) || !ir_is_const(s->min, &mn) || mn != 0 ||
      !st || st->kind != S_STORE || st->atomic || st == g->promo || st->buf->dtype == DT_BOOL ||
      (st->buf->dtype == DT_F16 && st->buf->scope == SCOPE_GLOBAL))
    return false;
  range_push(&g->ranges, s->var, s->min, s->extent);
  Vec loads = {0}, from = {0}, to[4] = {{0}}, decl = {0};
  lane_loads(st->value, s->var, &loads);
  static const char lanes[] = "xyzw";
  const char *vt = l == 2 ? "float2" : "float4";
  for (int i = 0; i < loads.len; i++) {
    Expr *ld = loads.data[i], *base;
    if (g->promo && g->promo->buf == ld->buf) continue;
    if (!(base = vector_base(g, ld->buf, ld->args, s->var, l))) continue;
    int id = g->nvec++;
    vec_push(&from, ld);
    for (int k = 0; k < l; k++) vec_push(&to[k], ir_var(vec_temp(g, xprintf("texc_v%d.%c", id, lanes[k]))));
    char *addr = vec_addr(g, ld->buf, base);
    vec_push(&decl, g->d == &dialect_cuda ? xprintf("%s texc_v%d = *(const %s*)(%s);", vt, id, vt, addr)
                                          : xprintf("%s texc_v%d = vload%d(0, %s);", vt, id, (int)l, addr));
  }
  Expr *sbase = vector_base(g, st->buf, st->args, s->var, l);
  if (!from.len && !sbase) {
    range_pop(&g->ranges);
    return false;
  }
  bool copy = sbase && from.len == 1 && ir_equal(st->value, from.data[0]);
  line(g, "{");
  g->indent++;
  for (int i = 0; i < decl.len && !copy; i++) line(g, "%s", (char *)decl.data[i]);
  int rid = g->nvec++;
  if (copy) { /* one vector move */
    char *dst = vec_addr(g, st->buf, sbase), *src = vec_addr(g, ((Expr *)from.data[0])->buf,
                                                            vector_base(g, ((Expr *)from.data[0])->buf,
                                                                        ((Expr *)from.data[0])->args, s->var, l));
    if (g->d == &dialect_cuda) line(g, "*(%s*)(%s) = *(const %s*)(%s);", vt, dst, vt, src);
    else line(g, "vstore%d(vload%d(0, %s), 0, %s);", (int)l, (int)l, src, dst);
    g->indent--;
    line(g, "}");
    range_pop(&g->ranges);
    return true;
  }
  if (sbase) line(g, "%s texc_v%d;", vt, rid);
  for (int k = 0; k < l; k++) {
    Expr *lane = ir_int(k);
    Expr *val = simplify(ir_subst(swap_loads(st->value, &from, &to[k]), &s->var, &lane, 1), &g->ranges);
    if (sbase) {
      Fence f;
      fence_begin(g, &f);
      line(g, "texc_v%d.%c = %s;", rid, lanes[k], expr_str(g, val));
      fence_end(g, &f);
    } else {
      Stmt one = *st;
      one.value = val;
      one.args = xalloc(sizeof(Expr *) * (size_t)st->nargs);
      for (int d = 0; d < st->nargs; d++) one.args[d] = simplify(ir_subst(st->args[d], &s->var, &lane, 1), &g->ranges);
      store(g, &one);
    }
  }
  char *addr = sbase ? vec_addr(g, st->buf, sbase) : NULL;
  if (sbase && g->d == &dialect_cuda) line(g, "*(%s*)(%s) = texc_v%d;", vt, addr, rid);
  else if (sbase) line(g, "vstore%d(texc_v%d, 0, %s);", (int)l, rid, addr);
  g->indent--;
  line(g, "}");
  range_pop(&g->ranges);
  return true;
}

static void plain_loop(Gen *g, Stmt *s) {
  if (s->for_kind == FOR_VECTORIZE && vector_loop(g, s)) return;
  const char *v = var_name(g, s->var);
  char *mn = expr_str(g, simplify(s->min, &g->ranges));
  char *end = expr_str(g, simplify(ir_add(s->min, s->extent), &g->ranges));
  if (s->for_kind == FOR_UNROLL || s->for_kind == FOR_VECTORIZE) line(g, "#pragma unroll");
  line(g, "for (%s %s = %s; %s < %s; ++%s) {", idx_type(g), v, mn, v, end, v);
  g->indent++;
  range_push(&g->ranges, s->var, s->min, s->extent);
  stmt(g, s->body);
  range_pop(&g->ranges);
  g->indent--;
  line(g, "}");
}

/* " + MIN", or nothing when MIN is 0. */
static const char *plus_min(Gen *g, Expr *min) {
  int64_t v;
  min = simplify(min, &g->ranges);
  if (ir_is_const(min, &v) && v == 0) return "";
  return xprintf(" + %s", expr_str(g, min));
}

/* A loop bound to blockIdx.d: the block index, guarded when the grid is wider. */
static void block_loop(Gen *g, Stmt *s) {
  int d = block_dim(s->for_kind);
  line(g, "%s %s = (%s)%s%s;", idx_type(g), var_name(g, s->var), idx_type(g),
       g->d->block_idx[d], plus_min(g, s->min));
  range_push(&g->ranges, s->var, s->min, s->extent);
  bool guard = !same_extent(g, g->grid[d], s->extent);
  if (guard) {
    line(g, "if ((%s)%s < %s) {", idx_type(g), g->d->block_idx[d],
         expr_str(g, simplify(s->extent, &g->ranges)));
    g->indent++;
  }
  stmt(g, s->body); /* block-uniform: a guard here keeps the mode */
  if (guard) {
    g->indent--;
    line(g, "}");
  }
  range_pop(&g->ranges);
}

/* A loop bound to threadIdx.d where d is free: each thread takes its index; a guard
 * when the block is wider than the loop (which makes the code divergent). */
static void thread_loop(Gen *g, Stmt *s) {
  int d = thread_dim(s->for_kind);
  line(g, "{");
  g->indent++;
  line(g, "%s %s = (%s)%s%s;", idx_type(g), var_name(g, s->var), idx_type(g),
       g->d->thread_idx[d], plus_min(g, s->min));
  range_push(&g->ranges, s->var, s->min, s->extent);
  bool guard = !same_extent(g, g->block[d], s->extent);
  bool was = g->divergent;
  if (guard) {
    line(g, "if ((%s)%s < %s) {", idx_type(g), g->d->thread_idx[d],
         expr_str(g, simplify(s->extent, &g->ranges)));
    g->indent++;
    g->divergent = true;
  }
  bool was_active = g->active[d], was_coop = g->coop[d];
  IrVar *was_var = g->tvar[d];
  g->coop[d] = was_active; /* a rebound loop: its variable is the block's, not a thread's */
  g->active[d] = true;
  g->tvar[d] = s->var;
  stmt(g, s->body);
  g->active[d] = was_active;
  g->coop[d] = was_coop;
  g->tvar[d] = was_var;
  g->divergent = was;
  if (guard) {
    g->indent--;
    line(g, "}");
  }
  range_pop(&g->ranges);
  g->indent--;
  line(g, "}");
}

static bool is_staged(const Gen *g, const Buffer *b) {
  for (int i = 0; i < g->staged.len; i++)
    if (g->staged.data[i] == b) return true;
  return false;
}

/* Does E load a thread's own local buffer (the staging registers of a fetch aside)? */
static bool local_load(const Gen *g, const Expr *e) {
  if (!e) return false;
  if (e->kind == E_LOAD && e->buf->scope == SCOPE_LOCAL && !is_staged(g, e->buf)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (local_load(g, e->args[i])) return true;
  return local_load(g, e->a) || local_load(g, e->b) || local_load(g, e->c);
}

static bool expr_uses_tvar(const Gen *g, const Expr *e) {
  for (int d = 0; d < 3; d++)
    if (g->active[d] && !g->coop[d] && g->tvar[d] && ir_uses_var(e, g->tvar[d])) return true;
  return false;
}

/* A cooperative fetch: S writes only shared memory, from values that no thread's own
 * index or registers decide. */
static bool coop_body(const Gen *g, const Stmt *s) {
  if (!s) return true;
  const Expr *es[3] = {s->min, s->extent, s->kind == S_IF ? s->cond : s->value};
  for (int i = 0; i < 3; i++)
    if (es[i] && (local_load(g, es[i]) || expr_uses_tvar(g, es[i]))) return false;
  switch (s->kind) {
  case S_STORE:
    for (int d = 0; d < s->nargs; d++)
      if (local_load(g, s->args[d]) || expr_uses_tvar(g, s->args[d])) return false;
    return s->buf->scope == SCOPE_SHARED || is_staged(g, s->buf);
  case S_FOR: return coop_body(g, s->body);
  case S_IF: return coop_body(g, s->body) && coop_body(g, s->els);
  case S_SEQ:
    for (int i = 0; i < s->n; i++)
      if (!coop_body(g, s->stmts[i])) return false;
    return true;
  default: return false;
  }
}

/* Does a loop of extent EXT fit in the block's dimension BLOCK: the same extent, or
 * both constant and EXT no larger (the threads past it then skip the loop's body)? */
static bool fits_block(Gen *g, Expr *block, Expr *ext) {
  int64_t b, e;
  if (same_extent(g, block, ext)) return true;
  return block && ext && ir_is_const(simplify(block, &g->ranges), &b) &&
         ir_is_const(simplify(ext, &g->ranges), &e) && e <= b;
}

/* A thread loop of dimension d nested in a loop already bound to d (a shared-memory
 * stage computed inside the threads' loops): every thread would run all of it and store
 * the same values, so the block runs it once, each thread taking its index (TVM's
 * meaning of a thread binding), in uniform mode where barriers can follow. A fetch
 * shorter than the block (90 values for 128 threads) is the same, the threads past its
 * end idle: run serially, every thread would write every value, 128 times the work and
 * concurrent writes of one location, a data race in OpenCL's and CUDA's memory models. */
static bool rebindable(const Gen *g, const Stmt *s) {
  int d = thread_dim(s->for_kind);
  return g->active[d] && !g->pinned[d] && !g->divergent &&
         fits_block((Gen *)g, g->block[d], s->extent) && coop_body(g, s->body);
}

static bool free_thread_loop(const Gen *g, const Stmt *s) {
  if (s->kind != S_FOR || !is_thread(s->for_kind)) return false;
  int d = thread_dim(s->for_kind);
  return (!g->active[d] && !g->pinned[d]) || rebindable(g, s);
}

static bool is_free_thread(ForKind k) { return is_thread(k); }

/* Does E depend on the index of a bound thread dimension? */
static bool thread_dependent(const Gen *g, const Expr *e) {
  for (int d = 0; d < 3; d++)
    if (g->tvar[d] && ir_uses_var(e, g->tvar[d])) return true;
  return false;
}

/* Uniform mode: is S walked structurally (it holds regions), or is it a region itself? */
static bool structural(Gen *g, const Stmt *s) {
  if (!contains_loop(s, is_free_thread)) return false;
  switch (s->kind) {
  case S_SEQ: case S_ALLOC: return true;
  case S_IF: return !thread_dependent(g, s->cond);
  case S_FOR:
    if (is_block(s->for_kind)) return true;
    if (free_thread_loop(g, s)) return same_extent(g, g->block[thread_dim(s->for_kind)], s->extent);
    return !is_thread(s->for_kind) && !thread_dependent(g, s->min) &&
           !thread_dependent(g, s->extent);
  default: return false;
  }
}

/* A region in uniform mode: the barrier it needs, then its code, run by the threads of
 * the dims it binds and by thread 0 of the others. */
static void region(Gen *g, Stmt *s) {
  region_barrier(g, s);
  bool own = free_thread_loop(g, s); /* asked before the region turns divergent: a rebound fetch */
  char guard[256] = "";
  bool pin[3] = {false, false, false};
  for (int d = 0; d < 3; d++) {
    int64_t v;
    if (g->active[d] || !g->block[d] || (ir_is_const(g->block[d], &v) && v == 1)) continue;
    if (free_thread_loop(g, s) && thread_dim(s->for_kind) == d) continue;
    size_t n = strlen(guard);
    snprintf(guard + n, sizeof guard - n, "%s%s == 0", n ? " && " : "", g->d->thread_idx[d]);
    pin[d] = true;
  }
  if (!*guard) {
    bool was = g->divergent;
    g->divergent = true;
    if (own) thread_loop(g, s);
    else stmt(g, s);
    g->divergent = was;
    return;
  }
  line(g, "if (%s) {", guard);
  g->indent++;
  for (int d = 0; d < 3; d++) g->pinned[d] = pin[d];
  g->divergent = true;
  if (own) thread_loop(g, s);
  else stmt(g, s);
  g->divergent = false;
  for (int d = 0; d < 3; d++) g->pinned[d] = false;
  g->indent--;
  line(g, "}");
}

/* A serial loop in uniform mode that holds regions. An iteration needs a barrier after
 * the previous one where its regions conflict with it (placed inside, where the region
 * asks); the first iteration may need one after what came before the loop: where the
 * accesses before the loop's own first barrier conflict with those, it goes once before
 * the loop, not in every iteration. */
static void uniform_loop(Gen *g, Stmt *s) {
  Str scratch = {0};
  Str *out = g->out;
  Vec before = {0}, *log = g->log, body = {0}, again = {0};
  int mark = g->mark;
  append_all(&before, &g->state);
  g->out = &scratch;
  g->log = &body; /* a dry run: what one iteration accesses */
  g->state = (Vec){0};
  g->mark = -1;
  serial_loop(g, s);
  g->log = &again; /* another, after an iteration: what comes before its first barrier */
  g->state = (Vec){0};
  append_all(&g->state, &body);
  g->mark = -1;
  serial_loop(g, s);
  if (g->mark >= 0) again.len = g->mark;
  free(scratch.p);
  g->out = out;
  g->log = log;
  g->mark = mark;
  if (conflicts(&before, &again) && has_threads(g)) {
    barrier(g);
    before = (Vec){0};
  }
  g->state = (Vec){0};
  append_all(&g->state, &before);
  append_all(&g->state, &body); /* as the previous iteration left them */
  serial_loop(g, s);
  append_all(&g->state, &body);
  int64_t n;
  if (!ir_is_const(simplify(s->extent, &g->ranges), &n) || n < 1)
    append_all(&g->state, &before); /* no iteration, no barrier inside */
}

/* ---------------------------------------------------------------------- */
/* Register staging of copies made ahead                                   */
/* ---------------------------------------------------------------------- */

/* A double-buffered loop (lower/double_buffer.c) copies the next step's tiles into the
 * other shared buffers, S_1[..] = A[..] for each element a thread fetches, and then
 * computes from the first ones. Printed in that order, each store to shared memory waits
 * for its global load, and a warp issues in order: the body's first FMA waits behind it
 * for the whole latency of global memory. With double_buffer(S, local) the copy is
 * staged: the loads go to registers where the copy stands, the body follows, and the
 * stores from those registers come after it, before the barrier that ends the step
 * (Stmt.prefetch: nothing touches the elements until then), so that the body's FMAs hide
 * the loads, as in cuBLAS's and CUTLASS's main loops. A copy's registers are a local
 * array, indexed by its loops around the store other than its threads (made unrolled:
 * the index is then a constant, and the array registers). Those registers add to the
 * thread's (`ptxas -v` tells whether a tile then spills); a copy of more than
 * STAGE_WORDS 32-bit words per thread is not staged. */
enum { STAGE_WORDS = 128, STAGE_LOOPS = 16 };

typedef struct StageLoops {
  IrVar *var[STAGE_LOOPS];
  int64_t min[STAGE_LOOPS], ext[STAGE_LOOPS];
  int n;
} StageLoops;

/* Can S, a statement of a sequence, be staged: stores made ahead, under loops of constant
 * bounds (serial, unrolled, vectorized, and thread loops that each thread runs once: a
 * thread loop printed as a plain loop, one that a bound loop cannot rebind, would make
 * every thread copy all of it) and ifs without else? Adds the words of registers it needs
 * (COUNT: the iterations of the loops around it, threads aside) to *WORDS. THREADS: the
 * thread dimensions bound by loops around S inside the copy (bits). */
static bool stageable(const Gen *g, const Stmt *s, int64_t count, int depth, unsigned threads, int64_t *words) {
  if (!s) return true;
  switch (s->kind) {
  case S_STORE:
    if (!s->prefetch || s->atomic || s->nargs != 1) return false;
    *words += count * ((dtype_bytes(s->buf->dtype) + 3) / 4);
    return true;
  case S_FOR: {
    int64_t mn, ext;
    bool thread = is_thread(s->for_kind);
    if (!ir_is_const(s->min, &mn) || !ir_is_const(s->extent, &ext) || ext < 1 ||
        (!thread && (ext > STAGE_WORDS || depth == STAGE_LOOPS)))
      return false;
    if (s->for_kind != FOR_SERIAL && s->for_kind != FOR_UNROLL && s->for_kind != FOR_VECTORIZE && !thread)
      return false;
    unsigned bit = thread ? 1u << thread_dim(s->for_kind) : 0;
    if (thread && ((threads & bit) || !free_thread_loop(g, s))) return false;
    return stageable(g, s->body, thread ? count : count * ext, thread ? depth : depth + 1, threads | bit, words);
  }
  case S_IF: return !s->els && stageable(g, s->body, count, depth, threads, words);
  case S_SEQ:
    for (int i = 0; i < s->n; i++)
      if (!stageable(g, s->stmts[i], count, depth, threads, words)) return false;
    return true;
  default: return false;
  }
}

/* S, a statement of a sequence, split into the loads into staging registers (returned)
 * and the stores from them (*POST; NULL when nothing of S is staged), each staged store's
 * registers a new local buffer (added to BUFS). With BUDGET, S is staged whole when it is
 * stageable within *BUDGET words, which it takes, else the parts of a sequence or of an
 * if's body one by one, and the rest stays where it is; without, S is stageable and LP
 * holds the loops of its copy around it. */
static Stmt *stage_split(Gen *g, Stmt *s, StageLoops *lp, Vec *bufs, Stmt **post, int64_t *budget) {
  *post = NULL;
  if (!s) return NULL;
  if (budget) {
    int64_t w = 0;
    if (stageable(g, s, 1, 0, 0, &w) && w > 0 && w <= *budget) {
      *budget -= w;
      return stage_split(g, s, lp, bufs, post, NULL);
    }
    if (s->kind != S_SEQ && (s->kind != S_IF || s->els)) return s;
  }
  switch (s->kind) {
  case S_STORE: {
    int64_t n = 1;
    Expr *idx = ir_int(0);
    for (int i = 0; i < lp->n; i++) {
      n *= lp->ext[i];
      idx = ir_add(ir_mul(idx, ir_int(lp->ext[i])), ir_sub(ir_var(lp->var[i]), ir_int(lp->min[i])));
    }
    Expr *shape = ir_int(n);
    Buffer *b = ir_buffer(xprintf("%s_stage", s->buf->name), s->buf->dtype, 1, &shape, SCOPE_LOCAL, BUF_TEMP);
    vec_push(bufs, b);
    Stmt *after = xalloc(sizeof *after);
    *after = *s;
    after->value = ir_load(b, &idx);
    after->prefetch = false;
    *post = after;
    return ir_store(b, &idx, s->value);
  }
  case S_FOR:
  case S_IF: {
    Stmt *pre = xalloc(sizeof *pre), *after = xalloc(sizeof *after);
    *pre = *s;
    *after = *s;
    bool loop = s->kind == S_FOR && !is_thread(s->for_kind);
    if (loop) {
      int64_t mn = 0, ext = 1;
      ir_is_const(s->min, &mn);
      ir_is_const(s->extent, &ext);
      lp->var[lp->n] = s->var, lp->min[lp->n] = mn, lp->ext[lp->n] = ext;
      lp->n++;
      if (s->for_kind == FOR_SERIAL) pre->for_kind = after->for_kind = FOR_UNROLL;
    }
    pre->body = stage_split(g, s->body, lp, bufs, &after->body, budget);
    if (loop) lp->n--;
    *post = after->body ? after : NULL;
    return pre;
  }
  case S_SEQ: {
    Vec a = {0}, b = {0};
    for (int i = 0; i < s->n; i++) {
      Stmt *p;
      vec_push(&a, stage_split(g, s->stmts[i], lp, bufs, &p, budget));
      if (p) vec_push(&b, p);
    }
    *post = b.len ? ir_seq((Stmt **)b.data, b.len) : NULL;
    return ir_seq((Stmt **)a.data, a.len);
  }
  default: return s;
  }
}

/* The sequence S with its copies made ahead staged (above): each one's loads where it
 * stands, its stores before the next barrier of S or at its end; NULL when S has none to
 * stage. The same statement is staged once, however many times a dry run prints it. */
static Stmt *staged_seq(Gen *g, Stmt *s) {
  if (g->divergent || g->staging || !has_threads(g)) return NULL;
  for (int i = 0; i < g->stage_from.len; i++)
    if (g->stage_from.data[i] == s) return g->stage_to.data[i];
  Vec out = {0}, post = {0}, bufs = {0};
  int64_t budget = STAGE_WORDS;
  for (int i = 0; i <= s->n; i++) {
    Stmt *c = i < s->n ? s->stmts[i] : NULL;
    if (!c || c->kind == S_BARRIER) {
      for (int j = 0; j < post.len; j++) vec_push(&out, post.data[j]);
      post.len = 0;
      budget = STAGE_WORDS;
      if (c) vec_push(&out, c);
      continue;
    }
    StageLoops lp = {0};
    Stmt *p;
    vec_push(&out, stage_split(g, c, &lp, &bufs, &p, &budget));
    if (p) vec_push(&post, p);
  }
  Stmt *r = NULL;
  if (bufs.len) {
    r = ir_seq((Stmt **)out.data, out.len);
    for (int i = 0; i < bufs.len; i++) {
      r = ir_alloc(bufs.data[i], r);
      vec_push(&g->staged, bufs.data[i]);
    }
  }
  vec_push(&g->stage_from, s);
  vec_push(&g->stage_to, r);
  return r;
}

/* ---------------------------------------------------------------------- */
/* Cross-thread reductions (after rfactor, a reduction loop bound to threads) */
/* ---------------------------------------------------------------------- */

/* What a thread loop that reduces into one element looks like (TVM's allreduce):
 * its body holds exactly one store to a non-local buffer, B[idx] = op(B[idx], X), whose
 * indices use neither the thread variable nor a loop inside it; every other store is to
 * a thread-private (local) buffer. GUARD gets the conjuncts of the ifs around the store
 * that the whole block agrees on (they decide whether B[idx] exists at all). */
typedef struct Reduce {
  const Stmt *store;
  int op;        /* OP_ADD, OP_MUL, OP_MIN, OP_MAX */
  Expr *guard;   /* NULL: none */
} Reduce;

static bool uses_any(const Expr *e, IrVar **vars, int n) {
  for (int i = 0; i < n; i++)
    if (ir_uses_var(e, vars[i])) return true;
  return false;
}

static void add_guard(Expr **g, Expr *c, IrVar **vars, int n) {
  if (c->kind == E_BIN && c->op == OP_AND) {
    add_guard(g, c->a, vars, n);
    add_guard(g, c->b, vars, n);
  } else if (!uses_any(c, vars, n)) {
    *g = *g ? ir_bin(OP_AND, *g, c) : c;
  }
}

/* Walk S (inside the thread loop) for the reduction store; VARS are the thread variable
 * and the loops entered so far. False when S does something else with global memory. */
static bool find_reduce(const Stmt *s, IrVar **vars, int n, Expr *guard, Reduce *r) {
  if (!s) return true;
  switch (s->kind) {
  case S_STORE: {
    if (s->buf->scope == SCOPE_LOCAL) return true;
    if (r->store) return false;
    for (int d = 0; d < s->nargs; d++)
      if (uses_any(s->args[d], vars, n)) return false;
    const Expr *v = s->value;
    if (v->kind != E_BIN || (v->op != OP_ADD && v->op != OP_MUL && v->op != OP_MIN && v->op != OP_MAX))
      return false;
    if (v->a->kind != E_LOAD || v->a->buf != s->buf || !loads_match(v->a, s) || !loads_match(v->b, s))
      return false;
    r->store = s;
    r->op = v->op;
    r->guard = guard;
    return true;
  }
  case S_FOR:
    if (forkind_is_gpu(s->for_kind) || n >= 16) return false;
    vars[n] = s->var;
    return find_reduce(s->body, vars, n + 1, guard, r);
  case S_IF: {
    if (has_load(s->cond)) return false;
    Expr *g2 = guard;
    add_guard(&g2, s->cond, vars, n);
    return find_reduce(s->body, vars, n, g2, r) && find_reduce(s->els, vars, n, guard, r);
  }
  case S_ALLOC: return s->buf->scope == SCOPE_LOCAL && find_reduce(s->body, vars, n, guard, r);
  case S_SEQ:
    for (int i = 0; i < s->n; i++)
      if (!find_reduce(s->stmts[i], vars, n, guard, r)) return false;
    return true;
  default: return false;
  }
}

/* Is S a free thread loop that reduces across its threads? */
static bool is_allreduce(const Gen *g, const Stmt *s, Reduce *r) {
  if (s->kind != S_FOR || !is_thread(s->for_kind)) return false;
  if (g && !free_thread_loop(g, s)) return false;
  IrVar *vars[17] = {s->var};
  *r = (Reduce){0};
  if (!find_reduce(s->body, vars, 1, NULL, r) || !r->store) return false;
  DType t = r->store->buf->dtype;
  return t != DT_BOOL && !(t == DT_F16 && r->store->buf->scope == SCOPE_GLOBAL);
}

/* Any allreduce under S: the kernel declares its scratch array. */
static bool has_allreduce(const Stmt *s, DType *t) {
  if (!s) return false;
  Reduce r;
  if (is_allreduce(NULL, s, &r)) {
    *t = r.store->buf->dtype;
    return true;
  }
  if (has_allreduce(s->body, t) || has_allreduce(s->els, t)) return true;
  for (int i = 0; i < s->n; i++)
    if (has_allreduce(s->stmts[i], t)) return true;
  return false;
}

/* The identity of OP for T, as C text. */
static char *reduce_identity(Gen *g, int op, DType t) {
  Str o = {0};
  if (op == OP_ADD || op == OP_MUL) {
    Expr *e = dtype_is_float(t) ? ir_float(t, op == OP_MUL) : ir_const(t, op == OP_MUL);
    expr(g, &o, e);
  } else if (dtype_is_float(t)) {
    float_lit(g, &o, op == OP_MAX ? -INFINITY : INFINITY, t);
  } else {
    int64_t lo = t == DT_I8 ? INT8_MIN : t == DT_I16 ? INT16_MIN : t == DT_I32 ? INT32_MIN : INT64_MIN;
    int64_t hi = t == DT_I8 ? INT8_MAX : t == DT_I16 ? INT16_MAX : t == DT_I32 ? INT32_MAX : INT64_MAX;
    if (t == DT_U8) lo = 0, hi = UINT8_MAX;
    if (t == DT_U32) lo = 0, hi = UINT32_MAX;
    if (t == DT_BOOL) lo = 0, hi = 1;
    int_lit(g, &o, op == OP_MAX ? lo : hi, t);
  }
  char *r = xstrdup(o.p);
  free(o.p);
  return r;
}

/* OP applied to the C texts A and B. */
static char *reduce_apply(Gen *g, int op, DType t, const char *a, const char *b) {
  if ((op == OP_ADD || op == OP_MUL) && dtype_is_int(t)) return int_wrap(g, op, t, a, b);
  if (op == OP_ADD || op == OP_MUL) return xprintf("(%s %s %s)", a, op == OP_ADD ? "+" : "*", b);
  if (dtype_is_float(t)) return xprintf("%s(%s, %s)", math_name(g, op == OP_MIN ? "fmin" : "fmax", t), a, b);
  return xprintf("((%s) %s (%s) ? (%s) : (%s))", a, op == OP_MIN ? "<" : ">", b, a, b);
}

/* The flat thread id and the product of the block extents (0: not constant). */
static int64_t block_threads(const Gen *g, int64_t ext[3]) {
  int64_t n = 1;
  for (int d = 0; d < 3; d++) {
    ext[d] = 1;
    if (g->block[d] && !ir_is_const(g->block[d], &ext[d])) return 0;
    n *= ext[d];
  }
  return n;
}

/* The flat index of this thread in the block, as C text. */
static const char *flat_tid(Gen *g, const int64_t ext[3]) {
  const char *r = NULL;
  int64_t stride = 1;
  for (int d = 0; d < 3; d++) {
    if (ext[d] == 1) continue;
    const char *t = stride == 1 ? xprintf("(int)%s", g->d->thread_idx[d])
                                : xprintf("(int)%s * %" PRId64, g->d->thread_idx[d], stride);
    r = r ? xprintf("%s + %s", r, t) : t;
    stride *= ext[d];
  }
  return r ? xprintf("(%s)", r) : "0";
}

/* The tree reduction of the block's partial values in the scratch array, along thread
 * dimension D: log2 steps separated by barriers. Then thread 0 of D holds the result. */
static void reduce_tree(Gen *g, int op, DType t, int d, const int64_t ext[3], const char *tid) {
  int64_t stride = d == 0 ? 1 : d == 1 ? ext[0] : ext[0] * ext[1], p = 1;
  while (p < ext[d]) p *= 2;
  const char *ti = g->d->thread_idx[d];
  for (int64_t h = p / 2; h > 0; h /= 2) {
    char *mine = xprintf("texc_red[%s]", tid);
    char *other = xprintf("texc_red[%s + %" PRId64 "]", tid, h * stride);
    if (h * 2 == p && p != ext[d])
      line(g, "if ((int)%s < %" PRId64 " && (int)%s + %" PRId64 " < %" PRId64 ") %s = %s;", ti, h,
           ti, h, ext[d], mine, reduce_apply(g, op, t, mine, other));
    else
      line(g, "if ((int)%s < %" PRId64 ") %s = %s;", ti, h, mine, reduce_apply(g, op, t, mine, other));
    line(g, "%s", g->d->barrier);
  }
}

/* Uniform mode: a thread loop S that reduces into one element. Every thread of the block
 * computes its partial value in a register (the identity past the loop's extent), the
 * block combines them in shared memory, and one thread updates the element. */
static void allreduce(Gen *g, Stmt *s, const Reduce *r) {
  int64_t ext[3];
  int d = thread_dim(s->for_kind);
  if (block_threads(g, ext) <= 0) {
    fail(g, s->loc, "a cross-thread reduction needs a constant number of threads per block");
    return;
  }
  DType t = r->store->buf->dtype;
  if (t != g->red_type) {
    fail(g, s->loc, "cross-thread reductions of different types in one kernel");
    return;
  }
  region_barrier(g, s);
  const char *acc = name_of(g, r->store, "", "red_acc", r->store->buf->id);
  const char *tid = flat_tid(g, ext);
  line(g, "{");
  g->indent++;
  line(g, "%s %s = %s;", ctype(g, t), acc, reduce_identity(g, r->op, t));
  bool was = g->divergent;
  g->divergent = true;
  g->promo = r->store;
  g->promo_name = acc;
  thread_loop(g, s);
  g->promo = NULL;
  g->divergent = was;
  line(g, "texc_red[%s] = %s;", tid, acc);
  line(g, "%s", g->d->barrier);
  reduce_tree(g, r->op, t, d, ext, tid);
  char *test = xprintf("%s == 0", g->d->thread_idx[d]);
  for (int e = 0; e < 3; e++)
    if (e != d && !g->active[e] && ext[e] > 1) test = xprintf("%s && %s == 0", test, g->d->thread_idx[e]);
  if (r->guard) test = xprintf("%s && %s", test, expr_str(g, simplify(r->guard, &g->ranges)));
  Str o = {0};
  flat_index(g, &o, r->store->args);
  char *elem = xprintf("%s[%s]", buf_name(g, r->store->buf), o.p);
  free(o.p);
  line(g, "if (%s) %s = %s;", test, elem, reduce_apply(g, r->op, t, elem, xprintf("texc_red[%s]", tid)));
  g->indent--;
  line(g, "}");
}

/* Print S in the current mode. */
static void stmt(Gen *g, Stmt *s) {
  if (!s) return;
  Reduce red;
  if (s->kind == S_FOR && is_allreduce(g, s, &red)) {
    if (!g->divergent) {
      allreduce(g, s, &red);
    } else { /* no barrier can be reached here: one thread reduces serially */
      int d = thread_dim(s->for_kind);
      line(g, "if (%s == 0) {", g->d->thread_idx[d]);
      g->indent++;
      g->pinned[d] = true;
      serial_loop(g, s);
      g->pinned[d] = false;
      g->indent--;
      line(g, "}");
    }
    return;
  }
  if (!g->divergent && !structural(g, s) && s->kind != S_BARRIER &&
      !(s->kind == S_FOR && is_block(s->for_kind))) {
    region(g, s);
    return;
  }
  switch (s->kind) {
  case S_FOR:
    if (is_block(s->for_kind)) block_loop(g, s);
    else if (free_thread_loop(g, s)) thread_loop(g, s);
    else if (!g->divergent) uniform_loop(g, s);
    else serial_loop(g, s);
    return;
  case S_STORE: store(g, s); return;
  case S_ALLOC:
    if (s->buf->scope == SCOPE_LOCAL) {
      int64_t n = ir_buffer_numel(s->buf, NULL, NULL);
      if (n <= 0) fail(g, s->loc, xprintf("local buffer %s needs a constant size", s->buf->name));
      line(g, "{");
      g->indent++;
      line(g, "%s %s[%" PRId64 "];", storage_type(g, s->buf->dtype, SCOPE_LOCAL), buf_name(g, s->buf),
           n > 0 ? n : 1);
      stmt(g, s->body);
      g->indent--;
      line(g, "}");
    } else {
      stmt(g, s->body);
    }
    return;
  case S_IF: {
    for (int i = 0; i < g->hoisted.len; i++)
      if (g->hoisted.data[i] == s) {
        stmt(g, s->body);
        return;
      }
    /* A barrier inside runs only when its branch does: each branch starts from what came
     * before, and after the if, that may still be unordered with what follows. */
    Vec before = {0}, then = {0};
    append_all(&before, &g->state);
    line(g, "if (%s) {", expr_str(g, simplify(s->cond, &g->ranges)));
    g->indent++;
    stmt(g, s->body);
    g->indent--;
    append_all(&then, &g->state);
    if (s->els) {
      g->state = (Vec){0};
      append_all(&g->state, &before);
      line(g, "} else {");
      g->indent++;
      stmt(g, s->els);
      g->indent--;
    }
    line(g, "}");
    append_all(&g->state, &then);
    append_all(&g->state, &before);
    return;
  }
  case S_SEQ: {
    Stmt *staged = staged_seq(g, s);
    if (staged) {
      g->staging = true;
      stmt(g, staged);
      g->staging = false;
      return;
    }
    for (int i = 0; i < s->n; i++) stmt(g, s->stmts[i]);
    return;
  }
  case S_BARRIER:
    if (!g->divergent && has_threads(g)) barrier(g);
    return;
  default: die("codegen_c: bad statement kind %d", s->kind);
  }
}

/* ---------------------------------------------------------------------- */
/* Kernels and plans                                                       */
/* ---------------------------------------------------------------------- */

/* Append E as RPN to CODE; false when E is not host-evaluable arithmetic. */
static bool rpn(const Gen *g, const Expr *e, Vec *code) {
  static const int ops[BINOP_COUNT] = {RPN_ADD, RPN_SUB, RPN_MUL, RPN_DIV, RPN_MOD,
                                       RPN_MIN, RPN_MAX, -1};
  switch (e->kind) {
  case E_INT:
    vec_push(code, (void *)(intptr_t)RPN_CONST);
    vec_push(code, (void *)(intptr_t)e->ival);
    return true;
  case E_VAR:
    for (int i = 0; i < g->fn->nsizes; i++)
      if (g->fn->sizes[i] == e->var) {
        vec_push(code, (void *)(intptr_t)RPN_SIZE);
        vec_push(code, (void *)(intptr_t)i);
        return true;
      }
    return false;
  case E_CAST: return rpn(g, e->a, code);
  case E_BIN:
    if (e->op > OP_MAX || !rpn(g, e->a, code) || !rpn(g, e->b, code)) return false;
    vec_push(code, (void *)(intptr_t)ops[e->op]);
    vec_push(code, (void *)(intptr_t)0);
    return true;
  default: return false;
  }
}

static RtGpuExpr to_rpn(Gen *g, Expr *e, Loc loc) {
  Vec code = {0};
  RtGpuExpr r = {0};
  if (!rpn(g, e ? e : ir_int(1), &code)) {
    fail(g, loc, xprintf("a launch extent or temp size (%s) is not computable from the sizes",
                         ir_expr_str(e)));
    return r;
  }
  r.n = code.len / 2;
  r.code = xalloc(sizeof(int64_t) * (size_t)(code.len ? code.len : 1));
  for (int i = 0; i < code.len; i++) r.code[i] = (int64_t)(intptr_t)code.data[i];
  return r;
}

static int param_index(const LoweredFunc *fn, const Vec *temps, const Buffer *b) {
  for (int i = 0; i < fn->nparams; i++)
    if (fn->params[i] == b) return i;
  for (int i = 0; i < temps->len; i++)
    if (temps->data[i] == b) return fn->nparams + i;
  return -1;
}

static bool is_written(const Stmt *s, const Buffer *b) {
  if (!s) return false;
  if (s->kind == S_STORE && s->buf == b) return true;
  if (is_written(s->body, b) || is_written(s->els, b)) return true;
  for (int i = 0; i < s->n; i++)
    if (is_written(s->stmts[i], b)) return true;
  return false;
}

static void kernel_signature(Gen *g, Stmt *s, const char *kname, RtGpuKernel *k, const Vec *temps) {
  Str *o = g->out;
  int64_t nthreads = 1, v;
  bool constant = true;
  for (int d = 0; d < 3; d++) {
    if (!g->block[d]) continue;
    if (ir_is_const(g->block[d], &v)) nthreads *= v;
    else constant = false;
  }
  str_putf(o, "%s ", g->d->kernel_prefix);
  if (g->d == &dialect_cuda && constant) str_putf(o, "__launch_bounds__(%" PRId64 ") ", nthreads);
  str_putf(o, "%s(", kname);
  k->args = xalloc(sizeof(int) * (size_t)(g->kbufs.len + g->fn->nsizes + 1));
  for (int i = 0; i < g->kbufs.len; i++) {
    Buffer *b = g->kbufs.data[i];
    bool ro = !is_written(s, b);
    str_putf(o, "%s%s%s%s* %s %s", i ? ", " : "", g->d->global_ptr, ro ? "const " : "",
             storage_type(g, b->dtype, SCOPE_GLOBAL), g->d->restrict_kw, buf_name(g, b));
    k->args[k->nargs++] = param_index(g->fn, temps, b);
  }
  for (int i = 0; i < g->fn->nsizes; i++) {
    str_putf(o, "%stexc_i64 %s", g->kbufs.len || i ? ", " : "", var_name(g, g->fn->sizes[i]));
    k->args[k->nargs++] = -1 - i;
  }
  str_putf(o, ") {\n");
}

/* Print launch S as kernel KNAME and fill K's launch shape and arguments. */
static void emit_kernel(Gen *g, Stmt *s, const char *kname, RtGpuKernel *k, const Vec *temps) {
  for (int d = 0; d < 3; d++) g->grid[d] = g->block[d] = NULL;
  g->kbufs = (Vec){0};
  g->shared = (Vec){0};
  g->state = (Vec){0};
  g->divergent = false;
  scan_launch(g, s);
  k->name = xstrdup(kname);
  for (int d = 0; d < 3; d++) {
    k->grid[d] = to_rpn(g, g->grid[d], s->loc);
    k->block[d] = to_rpn(g, g->block[d], s->loc);
  }
  kernel_signature(g, s, kname, k, temps);
  g->indent = 1;
  for (int i = 0; i < g->shared.len; i++) {
    Stmt *a = g->shared.data[i];
    int64_t n = ir_buffer_numel(a->buf, NULL, NULL);
    if (n <= 0) fail(g, a->loc, xprintf("shared buffer %s needs a constant size", a->buf->name));
    line(g, "%s%s %s %s[%" PRId64 "];", g->d->shared_kw, g->d == &dialect_cuda ? " __align__(16)" : "",
         storage_type(g, a->buf->dtype, SCOPE_SHARED),
         buf_name(g, a->buf), n > 0 ? n : 1);
  }
  int64_t ext[3], nt = block_threads(g, ext);
  if (has_allreduce(s, &g->red_type) && nt > 0)
    line(g, "%s %s texc_red[%" PRId64 "];", g->d->shared_kw, ctype(g, g->red_type), nt);
  stmt(g, s);
  str_putf(g->out, "}\n\n");
}

/* Do all index values of FN fit in 32 bits? Only when every shape and extent is a
 * small constant (symbolic sizes may be anything). */
static bool fits_int(const LoweredFunc *fn, const Stmt *s) {
  if (fn->nsizes) return false;
  for (int i = 0; i < fn->nparams; i++) {
    int64_t n = ir_buffer_numel(fn->params[i], NULL, NULL);
    if (n < 0 || n >= INT32_MAX / 2) return false;
  }
  if (!s) return true;
  if (s->kind == S_ALLOC) {
    int64_t n = ir_buffer_numel(s->buf, NULL, NULL);
    if (n < 0 || n >= INT32_MAX / 2) return false;
  }
  if (fits_int(fn, s->body) == false || fits_int(fn, s->els) == false) return false;
  for (int i = 0; i < s->n; i++)
    if (!fits_int(fn, s->stmts[i])) return false;
  return true;
}

static bool uses_dtype(const Expr *e, DType t) {
  if (!e) return false;
  if (e->dtype == t || (e->buf && e->buf->dtype == t)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (uses_dtype(e->args[i], t)) return true;
  return uses_dtype(e->a, t) || uses_dtype(e->b, t) || uses_dtype(e->c, t);
}

static bool stmt_uses_dtype(const Stmt *s, DType t) {
  if (!s) return false;
  if ((s->buf && s->buf->dtype == t) || uses_dtype(s->value, t) || uses_dtype(s->cond, t))
    return true;
  for (int i = 0; i < s->nargs; i++)
    if (uses_dtype(s->args[i], t)) return true;
  if (stmt_uses_dtype(s->body, t) || stmt_uses_dtype(s->els, t)) return true;
  for (int i = 0; i < s->n; i++)
    if (stmt_uses_dtype(s->stmts[i], t)) return true;
  return false;
}

/* Walk the host level of FN: global temps are recorded, every other statement with a
 * blockIdx loop is a launch. */
static void host_level(Gen *g, Stmt *s, Vec *temps, Vec *kernels) {
  if (!s) return;
  if (s->kind == S_SEQ) {
    for (int i = 0; i < s->n; i++) host_level(g, s->stmts[i], temps, kernels);
    return;
  }
  if (s->kind == S_ALLOC && s->buf->scope == SCOPE_GLOBAL) {
    vec_push(temps, s->buf);
    host_level(g, s->body, temps, kernels);
    return;
  }
  if (contains_loop(s, is_block)) {
    vec_push(kernels, s);
    return;
  }
  Vec acc = {0};
  accesses(s, s, &acc);
  for (int i = 0; i < acc.len; i++)
    if (((Access *)acc.data[i])->write) {
      fail(g, s->loc, xprintf("stage %s is not bound to blockIdx: a GPU schedule must bind every "
                              "root stage", ((Access *)acc.data[i])->buf->name));
      return;
    }
}

static void emit_func(Gen *g, LoweredFunc *fn, RtGpuFunc *plan) {
  g->fn = fn;
  g->names = (Vec){0};
  Stmt *body = ir_flat_body(fn);
  g->idx32 = fits_int(fn, body);
  for (int i = 0; i < fn->nparams; i++) buf_name(g, fn->params[i]);
  for (int i = 0; i < fn->nsizes; i++) var_name(g, fn->sizes[i]);
  Vec temps = {0}, launches = {0};
  host_level(g, body, &temps, &launches);
  plan->name = xstrdup(fn->name);
  plan->nparams = fn->nparams;
  plan->nsizes = fn->nsizes;
  plan->ntemps = temps.len;
  plan->temp_bytes = xalloc(sizeof(RtGpuExpr) * (size_t)(temps.len + 1));
  for (int i = 0; i < temps.len; i++) {
    Buffer *b = temps.data[i];
    Expr *bytes = ir_int(dtype_bytes(b->dtype));
    for (int d = 0; d < b->ndim; d++) bytes = ir_mul(bytes, b->shape[d]);
    plan->temp_bytes[i] = to_rpn(g, simplify(bytes, NULL), (Loc){0});
  }
  plan->nkernels = launches.len;
  plan->kernels = xalloc(sizeof(RtGpuKernel) * (size_t)(launches.len + 1));
  for (int i = 0; i < launches.len; i++)
    emit_kernel(g, launches.data[i], xprintf("k%d_%s", i, fn->name), &plan->kernels[i], &temps);
}

char *cg_gpu_source(LoweredFunc **fns, int n, Target t, RtGpuFunc **plans) {
  Str out = {0};
  Gen g = {.d = t == TARGET_CUDA ? &dialect_cuda : &dialect_opencl, .out = &out, .ok = true};
  bool f64 = false;
  for (int i = 0; i < n; i++) f64 = f64 || stmt_uses_dtype(fns[i]->body, DT_F64);
  str_putf(&out, "// generated by texc %s for %s\n", TEXC_VERSION, target_names[t]);
  if (t == TARGET_OPENCL && f64) str_putf(&out, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  str_putf(&out, "%s\n", g.d->prelude);
  RtGpuFunc *p = xalloc(sizeof(RtGpuFunc) * (size_t)(n + 1));
  for (int i = 0; i < n && g.ok; i++) emit_func(&g, fns[i], &p[i]);
  char *src = g.ok ? xstrdup(out.p) : NULL;
  free(out.p);
  if (plans) *plans = p;
  return src;
}
