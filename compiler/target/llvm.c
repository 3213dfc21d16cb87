/* target/llvm.c — the CPU back end: loop IR to LLVM IR (LLVM-C), then to machine code
 * in memory (JIT through ORC LLJIT) or to files (llvm, asm, obj, so, header).
 *
 * Each LoweredFunc F becomes
 *     int F(const T *in..., T *out..., int64_t size...)      0, or 1 on a size outside 1..2^40
 *                                                             or a failed allocation
 *     int __texc_packed_F(void **args, const int64_t *sizes) (RtPackedFn) calling F
 * and every module carries `__texc_kernels`, a NUL-terminated text with one line
 * "NAME NARGS NSIZES" per kernel, which rt_module_load reads.
 *
 * Loop kinds:
 *   serial     a counted loop (phi).
 *   vectorize  constant extent L: the loop var becomes <L x i64> and the body is emitted
 *              once on vectors (see "vectorized bodies"); else a serial loop.
 *   unroll     constant extent: the body is emitted once per value.
 *   parallel   the body is outlined into `F.body.N(begin, end, captures...)` with noalias
 *              buffer pointers and called through `F.task.N(begin, end, closure)` by
 *              rt_parallel_for; the closure is a struct of every binding in scope.
 * Registers: bool is i1, f16 is computed in f32 (stored as half); index math is i64.
 * Memory: F's flat body (lowering's flatten pass): each access one element offset.
 */
#include "texc.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#define MAX_VECTOR_LANES 64
#define MAX_UNROLL 64
#define MAX_STACK_ALLOC 65536

/* A value bound to a loop variable or a size: scalar i64, or <lanes x i64> for the var
 * of a vectorized loop. */
typedef struct VarBind {
  IrVar *var;
  LLVMValueRef val;
} VarBind;

/* A buffer in scope: its base pointer. Accesses come flat (LoweredFunc.flat): one
 * element offset each. */
typedef struct BufBind {
  Buffer *buf;
  LLVMValueRef ptr;
} BufBind;

typedef struct CG {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTypeRef i1, i8, i16, i32, i64, half, f32, f64, ptr, voidt;
  const LoweredFunc *lf;
  LLVMValueRef fn;            /* the function being built */
  LLVMBasicBlockRef allocas;  /* its first block: allocas go before its branch */
  LLVMValueRef errp;          /* i32* error flag of the kernel call */
  Buffer *store_buf;          /* the buffer of the store being emitted (never_nan) */
  const Expr *kept;           /* the store's own element in `B[i] = c ? v : B[i]` (tails.c
                                 guarded_locals): read where the store writes, so every lane
                                 may read it, unmasked like the store */
  VarBind *vars;
  int nvars, capvars;
  BufBind *bufs;
  int nbufs, capbufs;
  int lanes;                  /* > 1 inside a vectorized body */
  IrVar *vvar;                /* the vectorized loop's var */
  LLVMValueRef vmin;          /* its first lane's value (a constant, or not) */
  LLVMValueRef mask;          /* inside a vectorized body: <lanes x i1> of the lanes whose
                                 guards hold (NULL: all); loads and stores are masked by it */
  int nouts;                  /* outlined functions so far (for names) */
  int in_parallel;            /* > 0 inside an outlined parallel body */
  const char *sym_prefix;     /* of the kernels' symbols (kernel_symbol); NULL: none */
  int dot_lanes;              /* i32 lanes of the target's four-byte dot product (x86's
                                 vpdpbusd: 16 with AVX-512 VNNI, 8 with AVX-VNNI or VNNI and
                                 VL; AArch64's usdot: 4, with the I8MM extension); 0: none
                                 (emit_dot4) */
  bool dot_arm;               /* that instruction is AArch64's usdot */
  int exact;                  /* > 0 inside a float made an integer or rounded to one
                                 (round, floor, ceil, trunc): no fused multiply-adds */
} CG;

static LLVMValueRef emit_expr(CG *g, Expr *e);
static LLVMValueRef emit_expr_raw(CG *g, Expr *e);
static void emit_stmt(CG *g, Stmt *s);

/* ================================================================ bindings */

static void bind_var(CG *g, IrVar *v, LLVMValueRef val) {
  if (g->nvars == g->capvars) {
    g->capvars = g->capvars ? 2 * g->capvars : 32;
    g->vars = realloc(g->vars, sizeof *g->vars * (size_t)g->capvars);
    if (!g->vars) die_oom(0);
  }
  g->vars[g->nvars++] = (VarBind){v, val};
}

static LLVMValueRef lookup_var(CG *g, IrVar *v) {
  for (int i = g->nvars - 1; i >= 0; i--)
    if (g->vars[i].var == v) return g->vars[i].val;
  die("llvm codegen: variable %s#%d is not bound", v->name, v->id);
}

static void bind_buf(CG *g, Buffer *b, LLVMValueRef ptr) {
  if (g->nbufs == g->capbufs) {
    g->capbufs = g->capbufs ? 2 * g->capbufs : 16;
    g->bufs = realloc(g->bufs, sizeof *g->bufs * (size_t)g->capbufs);
    if (!g->bufs) die_oom(0);
  }
  g->bufs[g->nbufs++] = (BufBind){b, ptr};
}

static BufBind *lookup_buf(CG *g, Buffer *b) {
  for (int i = g->nbufs - 1; i >= 0; i--)
    if (g->bufs[i].buf == b) return &g->bufs[i];
  die("llvm codegen: buffer %s is not allocated", b->name);
}

/* =================================================================== types */

static LLVMTypeRef reg_type(CG *g, DType t) {
  switch (t) {
  case DT_BOOL: return g->i1;
  case DT_I8: case DT_U8: return g->i8;
  case DT_I16: return g->i16;
  case DT_I32: case DT_U32: return g->i32;
  case DT_I64: return g->i64;
  case DT_F16: case DT_F32: return g->f32;
  case DT_F64: return g->f64;
  default: die("llvm codegen: bad dtype %d", t);
  }
}

static LLVMTypeRef mem_type(CG *g, DType t) {
  if (t == DT_BOOL) return g->i8;
  if (t == DT_F16) return g->half;
  return reg_type(g, t);
}

static bool is_vec(LLVMValueRef v) { return LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMVectorTypeKind; }

static LLVMTypeRef vec_of(LLVMTypeRef t, int lanes) {
  return lanes > 1 ? LLVMVectorType(t, (unsigned)lanes) : t;
}

/* V broadcast to the current lane count (no-op for scalars outside vector bodies). */
static LLVMValueRef splat(CG *g, LLVMValueRef v) {
  if (g->lanes <= 1 || is_vec(v)) return v;
  LLVMTypeRef vt = LLVMVectorType(LLVMTypeOf(v), (unsigned)g->lanes);
  LLVMValueRef one = LLVMBuildInsertElement(g->b, LLVMGetPoison(vt), v, LLVMConstInt(g->i32, 0, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(g->i32, (unsigned)g->lanes));
  return LLVMBuildShuffleVector(g->b, one, LLVMGetPoison(vt), mask, "splat");
}

/* Make A and B both vectors when either is. */
static void unify(CG *g, LLVMValueRef *a, LLVMValueRef *b) {
  if (is_vec(*a) != is_vec(*b)) {
    *a = splat(g, *a);
    *b = splat(g, *b);
  }
}

/* A constant of scalar type T shaped like V (a vector constant when V is a vector). */
static LLVMValueRef const_like(LLVMValueRef v, LLVMValueRef c) {
  if (!is_vec(v)) return c;
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(v));
  LLVMValueRef elems[MAX_VECTOR_LANES];
  for (unsigned i = 0; i < n; i++) elems[i] = c;
  return LLVMConstVector(elems, n);
}

static LLVMValueRef i64c(CG *g, int64_t v) { return LLVMConstInt(g->i64, (unsigned long long)v, 1); }

/* ============================================================ expressions */

static LLVMValueRef contract(LLVMValueRef v) {
  if (LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
  return v;
}

/* The divisor B made safe for sdiv/udiv/srem/urem: 1 where B is 0 (and, signed, where B is
 * -1, so that INT_MIN / -1 cannot trap). *ZERO and *M1 get the lanes where B was 0 / -1. */
static LLVMValueRef safe_divisor(CG *g, LLVMValueRef b, bool sign, LLVMValueRef *zero, LLVMValueRef *m1) {
  LLVMTypeRef t = LLVMTypeOf(b);
  if (LLVMIsAConstantInt(b) && LLVMConstIntGetZExtValue(b) != 0 && !(sign && LLVMConstIntGetSExtValue(b) == -1)) {
    *zero = *m1 = NULL; /* a constant divisor that needs no care (the common i / 8) */
    return b;
  }
  LLVMValueRef one = LLVMConstInt(is_vec(b) ? LLVMGetElementType(t) : t, 1, 0);
  *zero = LLVMBuildICmp(g->b, LLVMIntEQ, b, LLVMConstNull(t), "");
  *m1 = sign ? LLVMBuildICmp(g->b, LLVMIntEQ, b, LLVMConstAllOnes(t), "") : NULL;
  LLVMValueRef bad = *m1 ? LLVMBuildOr(g->b, *zero, *m1, "") : *zero;
  return LLVMBuildSelect(g->b, bad, const_like(b, one), b, "safe.div");
}

/* Floor division of integers (TVM floordiv), total as LANGUAGE.md defines it: a / 0 == 0,
 * a / -1 == -a (wrapping, so INT_MIN / -1 == INT_MIN); sdiv never sees 0 or -1. */
static LLVMValueRef emit_floordiv(CG *g, LLVMValueRef a, LLVMValueRef b, bool sign) {
  LLVMValueRef isz, ism1, zero = LLVMConstNull(LLVMTypeOf(a));
  LLVMValueRef sb = safe_divisor(g, b, sign, &isz, &ism1);
  if (!sign) return isz ? LLVMBuildSelect(g->b, isz, zero, LLVMBuildUDiv(g->b, a, sb, ""), "udiv")
                     : LLVMBuildUDiv(g->b, a, sb, "");
  LLVMValueRef q = LLVMBuildSDiv(g->b, a, sb, ""), r = LLVMBuildSRem(g->b, a, sb, "");
  LLVMValueRef nz = LLVMBuildICmp(g->b, LLVMIntNE, r, zero, "");
  LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, LLVMBuildXor(g->b, r, sb, ""), zero, "");
  LLVMValueRef adj = LLVMBuildZExt(g->b, LLVMBuildAnd(g->b, nz, neg, ""), LLVMTypeOf(a), "");
  LLVMValueRef fq = LLVMBuildSub(g->b, q, adj, "fdiv");
  if (!isz) return fq;
  fq = LLVMBuildSelect(g->b, ism1, LLVMBuildSub(g->b, zero, a, ""), fq, "");
  return LLVMBuildSelect(g->b, isz, zero, fq, "fdiv");
}

/* Floor modulo of integers: the result has the divisor's sign; a % 0 == a % -1 == 0
 * (the safe divisor 1 gives that remainder). */
static LLVMValueRef emit_floormod(CG *g, LLVMValueRef a, LLVMValueRef b, bool sign) {
  LLVMValueRef isz, ism1;
  LLVMValueRef sb = safe_divisor(g, b, sign, &isz, &ism1);
  if (!sign) return LLVMBuildURem(g->b, a, sb, "");
  LLVMValueRef r = LLVMBuildSRem(g->b, a, sb, "");
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(a));
  LLVMValueRef nz = LLVMBuildICmp(g->b, LLVMIntNE, r, zero, "");
  LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, LLVMBuildXor(g->b, r, sb, ""), zero, "");
  LLVMValueRef adj = LLVMBuildSelect(g->b, LLVMBuildAnd(g->b, nz, neg, ""), sb, zero, "");
  return LLVMBuildAdd(g->b, r, adj, "fmod");
}

/* Call the intrinsic NAME overloaded on the type of ARGS[0], on N arguments. */
static LLVMValueRef intrinsic_n(CG *g, const char *name, LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) die("llvm codegen: no intrinsic %s", name);
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, &t, 1);
  return LLVMBuildCall2(g->b, LLVMIntrinsicGetType(g->ctx, id, &t, 1), fn, args, n, "");
}

/* The intrinsic NAME on X (and Y unless NULL). */
static LLVMValueRef intrinsic1(CG *g, const char *name, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef args[2] = {x, y};
  return intrinsic_n(g, name, args, y ? 2 : 1);
}

/* Call the two-argument libm function NAME (atan2f / atan2) on X and Y, lane by lane for
 * vectors. */
static LLVMValueRef libm2(CG *g, const char *fname, const char *dname, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef et = is_vec(x) ? LLVMGetElementType(LLVMTypeOf(x)) : LLVMTypeOf(x);
  LLVMTypeRef pt[2] = {et, et};
  const char *name = et == g->f32 ? fname : dname;
  LLVMTypeRef fty = LLVMFunctionType(et, pt, 2, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
  if (!fn) fn = LLVMAddFunction(g->mod, name, fty);
  LLVMValueRef args[2] = {x, y};
  if (!is_vec(x)) return LLVMBuildCall2(g->b, fty, fn, args, 2, "");
  LLVMValueRef out = LLVMGetPoison(LLVMTypeOf(x));
  for (unsigned i = 0; i < LLVMGetVectorSize(LLVMTypeOf(x)); i++) {
    LLVMValueRef idx = LLVMConstInt(g->i32, i, 0);
    args[0] = LLVMBuildExtractElement(g->b, x, idx, "");
    args[1] = LLVMBuildExtractElement(g->b, y, idx, "");
    out = LLVMBuildInsertElement(g->b, out, LLVMBuildCall2(g->b, fty, fn, args, 2, ""), idx, "");
  }
  return out;
}

/* Call the libm function NAME (tanhf / tanh) on X, lane by lane for vectors. */
static LLVMValueRef libm1(CG *g, const char *fname, const char *dname, LLVMValueRef x) {
  LLVMTypeRef et = is_vec(x) ? LLVMGetElementType(LLVMTypeOf(x)) : LLVMTypeOf(x);
  const char *name = et == g->f32 ? fname : dname;
  LLVMTypeRef fty = LLVMFunctionType(et, &et, 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
  if (!fn) fn = LLVMAddFunction(g->mod, name, fty);
  if (!is_vec(x)) return LLVMBuildCall2(g->b, fty, fn, &x, 1, "");
  LLVMValueRef out = LLVMGetPoison(LLVMTypeOf(x));
  for (unsigned i = 0; i < LLVMGetVectorSize(LLVMTypeOf(x)); i++) {
    LLVMValueRef idx = LLVMConstInt(g->i32, i, 0);
    LLVMValueRef lane = LLVMBuildExtractElement(g->b, x, idx, "");
    out = LLVMBuildInsertElement(g->b, out, LLVMBuildCall2(g->b, fty, fn, &lane, 1, ""), idx, "");
  }
  return out;
}

static LLVMValueRef emit_cmp(CG *g, int op, DType t, LLVMValueRef a, LLVMValueRef b) {
  if (dtype_is_float(t)) {
    static const LLVMRealPredicate fp[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                           LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(g->b, fp[op - OP_EQ], a, b, "");
  }
  static const LLVMIntPredicate si[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate ui[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  return LLVMBuildICmp(g->b, dtype_is_signed(t) ? si[op - OP_EQ] : ui[op - OP_EQ], a, b, "");
}

/* An integer constant of A's type (a vector when A is one). */
static LLVMValueRef iconst_like(LLVMValueRef a, int64_t v) {
  LLVMTypeRef t = is_vec(a) ? LLVMGetElementType(LLVMTypeOf(a)) : LLVMTypeOf(a);
  return const_like(a, LLVMConstInt(t, (unsigned long long)v, 1));
}

/* Float x % y: fmod moved into the divisor's sign, a zero too (numpy's mod). */
static LLVMValueRef emit_fmod_floor(CG *g, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef r = LLVMBuildFRem(g->b, a, b, "");
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(r));
  LLVMValueRef rneg = LLVMBuildFCmp(g->b, LLVMRealOLT, r, zero, "");
  LLVMValueRef bneg = LLVMBuildFCmp(g->b, LLVMRealOLT, b, zero, "");
  LLVMValueRef flip = LLVMBuildXor(g->b, rneg, bneg, "");
  LLVMValueRef moved = LLVMBuildSelect(g->b, flip, LLVMBuildFAdd(g->b, r, b, ""), r, "");
  LLVMValueRef z = intrinsic1(g, "llvm.copysign", zero, b);
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, r, zero, ""), z, moved, "fmodf");
}

/* Integer pow: square-and-multiply over every bit of N, straight-line (vectors too; a
 * constant N folds to a few multiplications), wrapping; N < 0 as ir_int_pow says. */
static LLVMValueRef emit_ipow(CG *g, LLVMValueRef x, LLVMValueRef n, DType t) {
  int bits = dtype_bytes(t) * 8;
  LLVMValueRef one = iconst_like(x, 1), r = one, b = x;
  for (int k = 0; k < bits; k++) {
    LLVMValueRef bit = LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, n, iconst_like(n, k), ""), one, "");
    LLVMValueRef set = LLVMBuildICmp(g->b, LLVMIntNE, bit, LLVMConstNull(LLVMTypeOf(n)), "");
    r = LLVMBuildSelect(g->b, set, LLVMBuildMul(g->b, r, b, ""), r, "");
    if (k + 1 < bits) b = LLVMBuildMul(g->b, b, b, "");
  }
  if (!dtype_is_signed(t)) return r;
  /* n < 0: x == 1 ? 1 : x == -1 ? (n odd ? -1 : 1) : 0 */
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x)), m1 = iconst_like(x, -1);
  LLVMValueRef odd = LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, n, one, ""), zero, "");
  LLVMValueRef neg1 = LLVMBuildSelect(g->b, odd, m1, one, "");
  LLVMValueRef inv = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, x, one, ""), one,
                                     LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, x, m1, ""),
                                                     neg1, zero, ""), "");
  return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, n, zero, ""), inv, r, "ipow");
}

/* x << n, x >> n: the count masked to the width less one, as LANGUAGE.md defines. */
static LLVMValueRef emit_shift(CG *g, int op, DType t, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef k = LLVMBuildAnd(g->b, b, iconst_like(b, dtype_bytes(t) * 8 - 1), "");
  if (op == OP_SHL) return LLVMBuildShl(g->b, a, k, "");
  return dtype_is_signed(t) ? LLVMBuildAShr(g->b, a, k, "") : LLVMBuildLShr(g->b, a, k, "");
}

/* V contractible, but not inside a float made an integer (CG.exact). */
static LLVMValueRef contract_unless_exact(CG *g, LLVMValueRef v) {
  return g->exact ? v : contract(v);
}

/* The value of a constant float, or of each lane of a constant vector that repeats one
 * (*OUT); false for anything else. */
static bool const_splat(LLVMValueRef v, double *out) {
  if (!LLVMIsConstant(v)) return false;
  if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind) {
    LLVMBool lost;
    if (!LLVMIsAConstantFP(v)) return false;
    *out = LLVMConstRealGetDouble(v, &lost);
    return true;
  }
  unsigned n = LLVMGetVectorSize(LLVMTypeOf(v));
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef e = LLVMGetAggregateElement(v, i);
    double x;
    if (!e || !const_splat(e, &x) || (i && x != *out)) return false;
    *out = x;
  }
  return n > 0;
}

static LLVMValueRef fconst_like(CG *g, LLVMValueRef like, double v);

/* pow(A, B) in floats: a constant B of 1 to 4, or -1 (GPT-2's GELU: x^3), by products
 * (and a division): llvm.pow of a vector with any other constant is a libm call per lane,
 * and that one was 0.3 ms of 64 x 1024 GELU inputs (x * x * x rounds twice: within an ulp
 * or so of the power; the infinities and NaN as pow's). */
static LLVMValueRef emit_fpow(CG *g, LLVMValueRef a, LLVMValueRef b) {
  double e;
  if (const_splat(b, &e) && (e == 1 || e == 2 || e == 3 || e == 4 || e == -1)) {
    if (e == 1) return a;
    if (e == -1) return LLVMBuildFDiv(g->b, fconst_like(g, a, 1.0), a, "");
    LLVMValueRef sq = LLVMBuildFMul(g->b, a, a, "");
    return e == 2 ? sq : LLVMBuildFMul(g->b, sq, e == 3 ? a : sq, "");
  }
  return intrinsic1(g, "llvm.pow", a, b);
}

/* A binary operation on operands of dtype T (already unified). */
static LLVMValueRef emit_binop(CG *g, int op, DType t, LLVMValueRef a, LLVMValueRef b) {
  bool fp = dtype_is_float(t), sign = dtype_is_signed(t); /* integers wrap: no nsw */
  switch (op) {
  case OP_ADD: return fp ? contract_unless_exact(g, LLVMBuildFAdd(g->b, a, b, "")) : LLVMBuildAdd(g->b, a, b, "");
  case OP_SUB: return fp ? contract_unless_exact(g, LLVMBuildFSub(g->b, a, b, "")) : LLVMBuildSub(g->b, a, b, "");
  case OP_MUL: return fp ? contract_unless_exact(g, LLVMBuildFMul(g->b, a, b, "")) : LLVMBuildMul(g->b, a, b, "");
  case OP_DIV: return fp ? LLVMBuildFDiv(g->b, a, b, "") : emit_floordiv(g, a, b, sign);
  case OP_MOD: return fp ? emit_fmod_floor(g, a, b) : emit_floormod(g, a, b, sign);
  /* Float min/max are IEEE minNum/maxNum (C's fmin/fmax, CUDA's and OpenCL's): a NaN
   * operand gives the other, so that a reduction's result does not depend on its order. */
  case OP_MIN:
    if (fp) return intrinsic1(g, "llvm.minnum", a, b);
    return LLVMBuildSelect(g->b, emit_cmp(g, OP_LT, t, a, b), a, b, "min");
  case OP_MAX:
    if (fp) return intrinsic1(g, "llvm.maxnum", a, b);
    return LLVMBuildSelect(g->b, emit_cmp(g, OP_GT, t, a, b), a, b, "max");
  case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
    return emit_cmp(g, op, t, a, b);
  case OP_AND: return LLVMBuildAnd(g->b, a, b, "");
  case OP_OR: return LLVMBuildOr(g->b, a, b, "");
  case OP_POW: return fp ? emit_fpow(g, a, b) : emit_ipow(g, a, b, t);
  case OP_ATAN2: return libm2(g, "atan2f", "atan2", a, b);
  case OP_FMOD: return LLVMBuildFRem(g->b, a, b, "");
  case OP_BAND: return LLVMBuildAnd(g->b, a, b, "");
  case OP_BOR: return LLVMBuildOr(g->b, a, b, "");
  case OP_BXOR: return LLVMBuildXor(g->b, a, b, "");
  case OP_SHL: case OP_SHR: return emit_shift(g, op, t, a, b);
  default: die("llvm codegen: bad binary op %d", op);
  }
}

static LLVMValueRef fconst_like(CG *g, LLVMValueRef v, double x) {
  LLVMTypeRef t = is_vec(v) ? LLVMGetElementType(LLVMTypeOf(v)) : LLVMTypeOf(v);
  (void)g;
  return const_like(v, LLVMConstReal(t, x));
}

/* ---- f32 vector exp and erf in registers. LLVM turns llvm.exp and erff of a vector into
 * one libm call per lane (~25 cycles each); these are a handful of FMAs per vector.
 * Accuracy (checked against libm over the whole float range, tests/lit/hardening/
 * vector_math.tex): exp within 1 ulp, erf within 3 ulp; NaN, +-inf, overflow to inf and
 * underflow to 0 as libm. Scalars keep libm. */

/* C0 + X * (C1 + X * (...)): Horner, each step one contractible multiply-add. */
static LLVMValueRef horner(CG *g, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef r = fconst_like(g, x, c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    r = contract(LLVMBuildFAdd(g->b, contract(LLVMBuildFMul(g->b, r, x, "")), fconst_like(g, x, c[i]), ""));
  return r;
}

static LLVMValueRef fselect_lt(CG *g, LLVMValueRef x, double lim, bool below) {
  LLVMValueRef c = fconst_like(g, x, lim);
  LLVMValueRef out = LLVMBuildFCmp(g->b, below ? LLVMRealOLT : LLVMRealOGT, x, c, "");
  return LLVMBuildSelect(g->b, out, c, x, ""); /* a NaN compares false and stays */
}

/* 2^N for integer lanes N in [-252, 254], as two normal powers of two multiplied into Y. */
static LLVMValueRef scale_pow2(CG *g, LLVMValueRef y, LLVMValueRef n) {
  LLVMValueRef n1 = LLVMBuildAShr(g->b, n, const_like(n, LLVMConstInt(g->i32, 1, 0)), "");
  LLVMValueRef n2 = LLVMBuildSub(g->b, n, n1, "");
  LLVMValueRef bias = const_like(n, LLVMConstInt(g->i32, 127, 0)), sh = const_like(n, LLVMConstInt(g->i32, 23, 0));
  LLVMValueRef p1 = LLVMBuildBitCast(g->b, LLVMBuildShl(g->b, LLVMBuildAdd(g->b, n1, bias, ""), sh, ""), LLVMTypeOf(y), "");
  LLVMValueRef p2 = LLVMBuildBitCast(g->b, LLVMBuildShl(g->b, LLVMBuildAdd(g->b, n2, bias, ""), sh, ""), LLVMTypeOf(y), "");
  return LLVMBuildFMul(g->b, LLVMBuildFMul(g->b, y, p1, ""), p2, "");
}

/* exp(x) = 2^n * e^r, n = round(x / ln 2), |r| <= ln 2 / 2, e^r by a degree-7 polynomial
 * (Cephes' expf coefficients); ln 2 split in two so that n * hi is exact. */
static LLVMValueRef vec_exp(CG *g, LLVMValueRef x) {
  static const double c[] = {5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
                             1.3981999507e-3, 1.9875691500e-4};
  LLVMValueRef xc = fselect_lt(g, fselect_lt(g, x, -120.0, true), 89.0, false);
  LLVMValueRef n = intrinsic1(g, "llvm.roundeven", LLVMBuildFMul(g->b, xc, fconst_like(g, x, 1.44269504088896341), ""), NULL);
  LLVMValueRef r = LLVMBuildFSub(g->b, xc, LLVMBuildFMul(g->b, n, fconst_like(g, x, 0.693359375), ""), "");
  r = LLVMBuildFSub(g->b, r, LLVMBuildFMul(g->b, n, fconst_like(g, x, -2.12194440e-4), ""), "");
  LLVMValueRef r2 = LLVMBuildFMul(g->b, r, r, "");
  LLVMValueRef y = contract(LLVMBuildFMul(g->b, horner(g, r, c, 6), r2, ""));
  y = LLVMBuildFAdd(g->b, contract(LLVMBuildFAdd(g->b, y, r, "")), fconst_like(g, x, 1.0), "");
  unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(x));
  LLVMValueRef ni = LLVMBuildFPToSI(g->b, n, LLVMVectorType(g->i32, lanes), ""); /* NaN: poison, not selected */
  LLVMValueRef e = scale_pow2(g, y, ni);
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, ""), x, e, "exp");
}

/* erf(x): x * P(x^2) below 1 (relative error 1.4e-9); 1 - e^(-x^2) Q(1/|x|) from 1 to 4
 * (Q: relative error 4e-8), with the sign of x; +-1 beyond 4, where erfc < half an ulp of
 * 1. The coefficients are least-squares fits on Chebyshev nodes (made for texc). */
static LLVMValueRef vec_erf(CG *g, LLVMValueRef x) {
  static const double p[] = {1.128379225730896, -0.3761262893676758, 0.11283612251281738,
                             -0.026854809373617172, 0.00519005348905921, -0.0008024353883229196,
                             7.898209878476337e-05};
  static const double q[] = {0.00017017543723341078, 0.5608466267585754, 0.02798231691122055,
                             -0.4098767340183258, 0.3271782696247101, 0.06031937897205353,
                             -0.32508763670921326, 0.2807171940803528, -0.11322084069252014,
                             0.01855483092367649};
  LLVMValueRef a = intrinsic1(g, "llvm.fabs", x, NULL), one = fconst_like(g, x, 1.0);
  LLVMValueRef x2 = LLVMBuildFMul(g->b, x, x, "");
  LLVMValueRef small = LLVMBuildFMul(g->b, x, horner(g, x2, p, 7), "");
  LLVMValueRef ac = fselect_lt(g, fselect_lt(g, a, 1.0, true), 4.0, false); /* in [1, 4] */
  LLVMValueRef u = LLVMBuildFDiv(g->b, one, ac, "");
  LLVMValueRef e = vec_exp(g, LLVMBuildFNeg(g->b, LLVMBuildFMul(g->b, ac, ac, ""), ""));
  LLVMValueRef big = LLVMBuildFSub(g->b, one, LLVMBuildFMul(g->b, e, horner(g, u, q, 10), ""), "");
  big = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOGE, a, fconst_like(g, x, 4.0), ""), one, big, "");
  big = intrinsic1(g, "llvm.copysign", big, x);
  LLVMValueRef r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOLT, a, one, ""), small, big, "");
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, ""), x, r, "erf");
}

/* log(x) = e ln 2 + log(m) for x = m 2^e, m in [sqrt(1/2), sqrt(2)): log(1 + f) = f - f^2 / 2
 * + f^3 P(f) (Cephes' logf coefficients), ln 2 split in two so that e * hi is exact;
 * subnormals scaled by 2^25 first; 0 gives -inf, a negative x or NaN NaN, +inf +inf. */
static LLVMValueRef vec_log(CG *g, LLVMValueRef x) {
  static const double p[] = {3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1,
                             -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2};
  unsigned lanes = LLVMGetVectorSize(LLVMTypeOf(x));
  LLVMTypeRef iv = LLVMVectorType(g->i32, lanes);
  LLVMValueRef tiny = LLVMBuildFCmp(g->b, LLVMRealOLT, x, fconst_like(g, x, 1.17549435e-38), "");
  LLVMValueRef xs = LLVMBuildSelect(g->b, tiny, LLVMBuildFMul(g->b, x, fconst_like(g, x, 33554432.0), ""), x, "");
  LLVMValueRef bits = LLVMBuildBitCast(g->b, xs, iv, "");
  LLVMValueRef e = LLVMBuildSub(g->b, LLVMBuildAnd(g->b, LLVMBuildLShr(g->b, bits, iconst_like(bits, 23), ""), iconst_like(bits, 255), ""),
                                iconst_like(bits, 126), "");
  e = LLVMBuildSub(g->b, e, LLVMBuildSelect(g->b, tiny, iconst_like(bits, 25), iconst_like(bits, 0), ""), "");
  /* m in [0.5, 1): the exponent field set to 126 */
  LLVMValueRef m = LLVMBuildBitCast(g->b, LLVMBuildOr(g->b, LLVMBuildAnd(g->b, bits, iconst_like(bits, 0x807fffff), ""),
                                                      iconst_like(bits, 0x3f000000), ""), LLVMTypeOf(x), "");
  LLVMValueRef lo = LLVMBuildFCmp(g->b, LLVMRealOLT, m, fconst_like(g, x, 0.707106781186547524), "");
  e = LLVMBuildSub(g->b, e, LLVMBuildSelect(g->b, lo, iconst_like(bits, 1), iconst_like(bits, 0), ""), "");
  LLVMValueRef f = LLVMBuildFSub(g->b, LLVMBuildSelect(g->b, lo, LLVMBuildFAdd(g->b, m, m, ""), m, ""), fconst_like(g, x, 1.0), "");
  LLVMValueRef ef = LLVMBuildSIToFP(g->b, e, LLVMTypeOf(x), "");
  LLVMValueRef z = LLVMBuildFMul(g->b, f, f, "");
  LLVMValueRef y = LLVMBuildFMul(g->b, LLVMBuildFMul(g->b, f, z, ""), horner(g, f, p, 9), "");
  y = contract(LLVMBuildFAdd(g->b, y, LLVMBuildFMul(g->b, ef, fconst_like(g, x, -2.12194440e-4), ""), ""));
  y = contract(LLVMBuildFSub(g->b, y, LLVMBuildFMul(g->b, z, fconst_like(g, x, 0.5), ""), ""));
  LLVMValueRef r = contract(LLVMBuildFAdd(g->b, LLVMBuildFAdd(g->b, f, y, ""), LLVMBuildFMul(g->b, ef, fconst_like(g, x, 0.693359375), ""), ""));
  LLVMValueRef inf = fconst_like(g, x, INFINITY), zero = fconst_like(g, x, 0.0);
  r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, x, inf, ""), inf, r, "");
  r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, x, zero, ""), fconst_like(g, x, -INFINITY), r, "");
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealULT, x, zero, ""), fconst_like(g, x, NAN), r, "log");
}

/* log1p(x) = log(u) (x / (u - 1)) with u = 1 + x (the rounding of u cancels: Goldberg; the
 * quotient first, so that a large x does not overflow), x itself where u is 1; +inf for
 * +inf. */
static LLVMValueRef vec_log1p(CG *g, LLVMValueRef x) {
  LLVMValueRef one = fconst_like(g, x, 1.0), u = LLVMBuildFAdd(g->b, x, one, ""), d = LLVMBuildFSub(g->b, u, one, "");
  LLVMValueRef r = LLVMBuildFMul(g->b, vec_log(g, u), LLVMBuildFDiv(g->b, x, d, ""), "");
  r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, d, fconst_like(g, x, 0.0), ""), x, r, "");
  LLVMValueRef inf = fconst_like(g, x, INFINITY);
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, x, inf, ""), inf, r, "log1p");
}

/* expm1(x) = (u - 1) (x / log(u)) with u = e^x (Kahan; the quotient first, so that a large
 * x does not overflow), x itself where u is 1, -1 where u - 1 is, +inf above 88.7 (e^x
 * overflows). */
static LLVMValueRef vec_expm1(CG *g, LLVMValueRef x) {
  LLVMValueRef one = fconst_like(g, x, 1.0), u = vec_exp(g, x), d = LLVMBuildFSub(g->b, u, one, "");
  LLVMValueRef r = LLVMBuildFMul(g->b, d, LLVMBuildFDiv(g->b, x, vec_log(g, u), ""), "");
  r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, u, one, ""), x, r, "");
  r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, d, fconst_like(g, x, -1.0), ""), fconst_like(g, x, -1.0), r, "");
  r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOGT, x, fconst_like(g, x, 88.72283), ""), fconst_like(g, x, INFINITY), r, "");
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, ""), x, r, "expm1");
}

/* tanh(x): x + x^3 P(x^2) below 0.55 (P: a least-squares fit on Chebyshev nodes, made
 * for texc: 0.06 ulp before rounding), else 1 - 2 / (e^(2|x|) + 1) with the sign of x,
 * |x| clamped to 9 (where tanh rounds to 1). */
static LLVMValueRef vec_tanh(CG *g, LLVMValueRef x) {
  static const double p[] = {-0.33333316445350647, 0.13332580029964447, -0.053851865231990814, 0.02107025310397148,
                             -0.006272607482969761};
  LLVMValueRef a = intrinsic1(g, "llvm.fabs", x, NULL), one = fconst_like(g, x, 1.0);
  LLVMValueRef x2 = LLVMBuildFMul(g->b, x, x, "");
  LLVMValueRef x3 = LLVMBuildFMul(g->b, x, x2, "");
  LLVMValueRef small = contract(LLVMBuildFAdd(g->b, contract(LLVMBuildFMul(g->b, x3, horner(g, x2, p, 5), "")), x, ""));
  LLVMValueRef ac = fselect_lt(g, a, 9.0, false);
  LLVMValueRef e = vec_exp(g, LLVMBuildFAdd(g->b, ac, ac, ""));
  LLVMValueRef big = LLVMBuildFSub(g->b, one, LLVMBuildFDiv(g->b, fconst_like(g, x, 2.0), LLVMBuildFAdd(g->b, e, one, ""), ""), "");
  big = intrinsic1(g, "llvm.copysign", big, x);
  LLVMValueRef r = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOLT, a, fconst_like(g, x, 0.55), ""), small, big, "");
  return LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, ""), x, r, "tanh");
}

static bool is_f32_vec(CG *g, LLVMValueRef x) { return is_vec(x) && LLVMGetElementType(LLVMTypeOf(x)) == g->f32; }

/* sign(x): 1, -1 or 0; a float NaN stays NaN (numpy's sign). */
static LLVMValueRef emit_sign(CG *g, LLVMValueRef x, DType t) {
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(x)), pos, neg, one, m1, rest;
  if (!dtype_is_float(t)) {
    one = iconst_like(x, 1);
    if (!dtype_is_signed(t)) return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntNE, x, zero, ""), one, zero, "");
    pos = LLVMBuildICmp(g->b, LLVMIntSGT, x, zero, "");
    neg = LLVMBuildICmp(g->b, LLVMIntSLT, x, zero, "");
    m1 = iconst_like(x, -1);
    rest = zero;
  } else {
    pos = LLVMBuildFCmp(g->b, LLVMRealOGT, x, zero, "");
    neg = LLVMBuildFCmp(g->b, LLVMRealOLT, x, zero, "");
    one = fconst_like(g, x, 1.0);
    m1 = fconst_like(g, x, -1.0);
    rest = LLVMBuildSelect(g->b, LLVMBuildFCmp(g->b, LLVMRealOEQ, x, zero, ""), zero, x, ""); /* 0 or NaN */
  }
  return LLVMBuildSelect(g->b, pos, one, LLVMBuildSelect(g->b, neg, m1, rest, ""), "sign");
}

static LLVMValueRef emit_call(CG *g, Expr *e) {
  /* a float rounded to an integer value is computed as a float made an integer (CG.exact):
   * one rounding less before it can move the result by one (a quantization's round) */
  bool steps = callfn_rounds((CallFn)e->op);
  g->exact += steps;
  LLVMValueRef x = emit_expr(g, e->args[0]);
  g->exact -= steps;
  bool fp = dtype_is_float(e->dtype);
  switch (e->op) {
  case FN_EXP: return is_f32_vec(g, x) ? vec_exp(g, x) : intrinsic1(g, "llvm.exp", x, NULL);
  case FN_LOG: return is_f32_vec(g, x) ? vec_log(g, x) : intrinsic1(g, "llvm.log", x, NULL);
  case FN_SQRT: return intrinsic1(g, "llvm.sqrt", x, NULL);
  case FN_RSQRT: return LLVMBuildFDiv(g->b, fconst_like(g, x, 1.0), intrinsic1(g, "llvm.sqrt", x, NULL), "");
  case FN_TANH: return is_f32_vec(g, x) ? vec_tanh(g, x) : libm1(g, "tanhf", "tanh", x);
  case FN_SIGMOID: {
    LLVMValueRef nx = LLVMBuildFNeg(g->b, x, "");
    LLVMValueRef ex = is_f32_vec(g, x) ? vec_exp(g, nx) : intrinsic1(g, "llvm.exp", nx, NULL);
    return LLVMBuildFDiv(g->b, fconst_like(g, x, 1.0), LLVMBuildFAdd(g->b, fconst_like(g, x, 1.0), ex, ""), "");
  }
  case FN_ABS:
    if (fp) return intrinsic1(g, "llvm.fabs", x, NULL);
    if (!dtype_is_signed(e->dtype)) return x;
    return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, x, LLVMConstNull(LLVMTypeOf(x)), ""),
                           LLVMBuildNeg(g->b, x, ""), x, "abs");
  case FN_FLOOR: return fp ? intrinsic1(g, "llvm.floor", x, NULL) : x;
  case FN_CEIL: return fp ? intrinsic1(g, "llvm.ceil", x, NULL) : x;
  case FN_ERF: return is_f32_vec(g, x) ? vec_erf(g, x) : libm1(g, "erff", "erf", x);
  case FN_SIN: return intrinsic1(g, "llvm.sin", x, NULL);
  case FN_COS: return intrinsic1(g, "llvm.cos", x, NULL);
  case FN_TAN: return libm1(g, "tanf", "tan", x);
  case FN_ASIN: return libm1(g, "asinf", "asin", x);
  case FN_ACOS: return libm1(g, "acosf", "acos", x);
  case FN_ATAN: return libm1(g, "atanf", "atan", x);
  case FN_SINH: return libm1(g, "sinhf", "sinh", x);
  case FN_COSH: return libm1(g, "coshf", "cosh", x);
  case FN_ROUND: return intrinsic1(g, "llvm.roundeven", x, NULL);
  case FN_TRUNC: return intrinsic1(g, "llvm.trunc", x, NULL);
  case FN_SIGN: return emit_sign(g, x, e->dtype);
  case FN_LOG2: return intrinsic1(g, "llvm.log2", x, NULL);
  case FN_LOG1P: return is_f32_vec(g, x) ? vec_log1p(g, x) : libm1(g, "log1pf", "log1p", x);
  case FN_EXP2: return intrinsic1(g, "llvm.exp2", x, NULL);
  case FN_EXPM1: return is_f32_vec(g, x) ? vec_expm1(g, x) : libm1(g, "expm1f", "expm1", x);
  default: die("llvm codegen: bad call %d", e->op);
  }
}

/* Float to integer as the interpreter defines it: truncated toward zero to i64, 0 for NaN
 * and beyond +-9.2e18, then wrapped to RT's width. (fptosi/fptoui alone give poison out of
 * range, and a compiled kernel would then differ from the reference.) */
static LLVMValueRef fp_to_int(CG *g, LLVMValueRef v, LLVMTypeRef rt, int lanes) {
  LLVMValueRef gt = LLVMBuildFCmp(g->b, LLVMRealOGT, v, fconst_like(g, v, -9.2e18), "");
  LLVMValueRef lt = LLVMBuildFCmp(g->b, LLVMRealOLT, v, fconst_like(g, v, 9.2e18), "");
  LLVMValueRef safe = LLVMBuildSelect(g->b, LLVMBuildAnd(g->b, gt, lt, ""), v, fconst_like(g, v, 0.0), "");
  LLVMValueRef i = LLVMBuildFPToSI(g->b, safe, vec_of(g->i64, lanes), "");
  return LLVMBuildIntCast2(g->b, i, rt, 1, "");
}

/* Bounds [*LO, *HI] (maybe infinite) of float expression E, which is never NaN, when its
 * form gives them: a literal, an integer constant or one of at most 16 bits made float, a
 * max / min with a literal (texc's max(x, k) is k for a NaN x), sums and differences of
 * such values with finite bounds. False: unknown. */
static bool float_bounds(const Expr *e, double *lo, double *hi) {
  double al, ah, bl, bh;
  switch (e->kind) {
  case E_FLOAT:
    if (isnan(e->fval)) return false;
    *lo = *hi = e->fval;
    return true;
  case E_CAST:
    if (dtype_is_float(e->a->dtype)) return false;
    if (e->a->kind == E_INT) {
      *lo = *hi = (double)(float)e->a->ival;
      return true;
    }
    if (dtype_bytes(e->a->dtype) > 2) return false;
    *lo = dtype_is_signed(e->a->dtype) ? -32768 : 0, *hi = 65535;
    return true;
  case E_BIN:
    if (e->op == OP_MAX || e->op == OP_MIN) {
      const Expr *k = e->b->kind == E_FLOAT ? e->b : e->a->kind == E_FLOAT ? e->a : NULL;
      if (!k || isnan(k->fval)) return false;
      bool known = float_bounds(k == e->b ? e->a : e->b, &al, &ah);
      if (e->op == OP_MAX) *lo = known && al > k->fval ? al : k->fval, *hi = known ? (ah > k->fval ? ah : k->fval) : INFINITY;
      else *hi = known && ah < k->fval ? ah : k->fval, *lo = known ? (al < k->fval ? al : k->fval) : -INFINITY;
      return true;
    }
    if ((e->op == OP_ADD || e->op == OP_SUB) && float_bounds(e->a, &al, &ah) && float_bounds(e->b, &bl, &bh) &&
        isfinite(al) && isfinite(ah) && isfinite(bl) && isfinite(bh)) {
      *lo = e->op == OP_ADD ? al + bl : al - bh;
      *hi = e->op == OP_ADD ? ah + bh : ah - bl;
      return true;
    }
    return false;
  default: return false;
  }
}

/* Convert V (a register value of dtype FROM) to dtype TO. */
static LLVMValueRef emit_convert(CG *g, LLVMValueRef v, DType from, DType to) {
  int lanes = is_vec(v) ? (int)LLVMGetVectorSize(LLVMTypeOf(v)) : 1;
  LLVMTypeRef rt = vec_of(reg_type(g, to), lanes);
  if (from == to) return v;
  if (to == DT_F16) { /* round to half precision, keep computing in f32 */
    LLVMValueRef f = emit_convert(g, v, from, DT_F32);
    LLVMValueRef h = LLVMBuildFPTrunc(g->b, f, vec_of(g->half, lanes), "");
    return LLVMBuildFPExt(g->b, h, rt, "");
  }
  if (to == DT_BOOL) {
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(v));
    return dtype_is_float(from) ? LLVMBuildFCmp(g->b, LLVMRealUNE, v, zero, "")
                                : LLVMBuildICmp(g->b, LLVMIntNE, v, zero, "");
  }
  bool fsrc = dtype_is_float(from), fdst = dtype_is_float(to);
  bool ssrc = dtype_is_signed(from);
  if (fsrc && fdst) return LLVMBuildFPCast(g->b, v, rt, "");
  if (fsrc) return fp_to_int(g, v, rt, lanes);
  if (fdst) return ssrc ? LLVMBuildSIToFP(g->b, v, rt, "") : LLVMBuildUIToFP(g->b, v, rt, "");
  return LLVMBuildIntCast2(g->b, v, rt, ssrc, "");
}

/* True when evaluating E cannot fault: no loads (integer division is total). Such branches
 * of a select may be evaluated eagerly. */
static bool expr_safe(const Expr *e) {
  if (!e) return true;
  if (e->kind == E_LOAD) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!expr_safe(e->args[i])) return false;
  return expr_safe(e->a) && expr_safe(e->b) && expr_safe(e->c);
}

/* Lane mask M and-ed into the mask in force (the outer one returned in *OUTER), and a
 * branch to a new block, where the builder is left, taken when some lane is live (a
 * uniform load there is one a live lane reads); the join block is returned. The caller
 * emits, branches to the join, and restores *OUTER. */
static LLVMBasicBlockRef lanes_on(CG *g, LLVMValueRef m, LLVMValueRef *outer) {
  *outer = g->mask;
  g->mask = *outer ? LLVMBuildAnd(g->b, *outer, m, "") : m;
  LLVMValueRef any = intrinsic1(g, "llvm.vector.reduce.or", g->mask, NULL);
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "lanes.on");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "lanes.end");
  LLVMBuildCondBr(g->b, any, tb, jb);
  LLVMPositionBuilderAtEnd(g->b, tb);
  return jb;
}

/* E under lane mask M (lanes_on); zeros when no lane is live. */
static LLVMValueRef emit_under_mask(CG *g, LLVMValueRef m, Expr *e) {
  LLVMValueRef outer;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b), jb = lanes_on(g, m, &outer);
  LLVMValueRef x = splat(g, emit_expr(g, e));
  LLVMBasicBlockRef tend = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, jb);
  LLVMPositionBuilderAtEnd(g->b, jb);
  LLVMValueRef phi = LLVMBuildPhi(g->b, LLVMTypeOf(x), "lanes");
  LLVMValueRef vals[2] = {x, LLVMConstNull(LLVMTypeOf(x))};
  LLVMBasicBlockRef blocks[2] = {tend, pre};
  LLVMAddIncoming(phi, vals, blocks, 2);
  g->mask = outer;
  return phi;
}

/* c ? a : b. Eager (an LLVM select) when both branches are safe, else branches and a phi,
 * so that a guarded load is never performed when its guard is false; a guard that differs
 * by lane evaluates each branch under the mask of its lanes. */
static LLVMValueRef emit_select(CG *g, Expr *e) {
  LLVMValueRef c = emit_expr(g, e->a);
  bool kept = e->c == g->kept; /* the stored element itself: read by every lane, as written */
  if (is_vec(c) && !(expr_safe(e->b) && expr_safe(e->c))) {
    LLVMValueRef x = expr_safe(e->b) ? splat(g, emit_expr(g, e->b)) : emit_under_mask(g, c, e->b);
    LLVMValueRef y = expr_safe(e->c) || kept ? splat(g, emit_expr(g, e->c)) : emit_under_mask(g, LLVMBuildNot(g->b, c, ""), e->c);
    return LLVMBuildSelect(g->b, c, x, y, "");
  }
  if ((expr_safe(e->b) && expr_safe(e->c)) || is_vec(c)) {
    LLVMValueRef x = emit_expr(g, e->b), y = emit_expr(g, e->c);
    if (is_vec(c) || is_vec(x) || is_vec(y)) { /* any vector operand: all three are */
      c = splat(g, c);
      x = splat(g, x);
      y = splat(g, y);
    }
    return LLVMBuildSelect(g->b, c, x, y, "");
  }
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.t");
  LLVMBasicBlockRef fb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.f");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "sel.j");
  LLVMBuildCondBr(g->b, c, tb, fb);
  LLVMPositionBuilderAtEnd(g->b, tb);
  LLVMValueRef x = emit_expr(g, e->b);
  LLVMBasicBlockRef tend = LLVMGetInsertBlock(g->b);
  LLVMPositionBuilderAtEnd(g->b, fb);
  LLVMValueRef y = emit_expr(g, e->c);
  LLVMBasicBlockRef fend = LLVMGetInsertBlock(g->b);
  if (is_vec(x) != is_vec(y)) {
    LLVMPositionBuilderAtEnd(g->b, tend);
    x = splat(g, x);
    LLVMPositionBuilderAtEnd(g->b, fend);
    y = splat(g, y);
  }
  LLVMPositionBuilderAtEnd(g->b, tend);
  LLVMBuildBr(g->b, jb);
  LLVMPositionBuilderAtEnd(g->b, fend);
  LLVMBuildBr(g->b, jb);
  LLVMPositionBuilderAtEnd(g->b, jb);
  LLVMValueRef phi = LLVMBuildPhi(g->b, LLVMTypeOf(x), "sel");
  LLVMValueRef vals[2] = {x, y};
  LLVMBasicBlockRef blocks[2] = {tend, fend};
  LLVMAddIncoming(phi, vals, blocks, 2);
  return phi;
}

/* ------------------------------------------------------- memory accesses */

typedef enum { ACC_UNIFORM, ACC_CONTIG, ACC_GATHER } AccKind;

/* The constant coefficient of V in E when E is affine in V; false otherwise. */
static bool affine_coef(const Expr *e, const IrVar *v, int64_t *c) {
  int64_t x, y, k;
  if (!ir_uses_var(e, v)) {
    *c = 0;
    return true;
  }
  switch (e->kind) {
  case E_VAR: *c = 1; return true;
  case E_BIN:
    if (e->op == OP_ADD || e->op == OP_SUB) {
      if (!affine_coef(e->a, v, &x) || !affine_coef(e->b, v, &y)) return false;
      int64_t r; /* wrapping, as the machine moves the index: 1 means contiguous */
      ir_int_apply((BinOp)e->op, x, y, &r);
      *c = r;
      return true;
    }
    if (e->op == OP_MUL) {
      if (ir_is_const(e->a, &k) && affine_coef(e->b, v, &y)) return ir_int_apply(OP_MUL, k, y, c);
      if (ir_is_const(e->b, &k) && affine_coef(e->a, v, &x)) return ir_int_apply(OP_MUL, k, x, c);
    }
    return false;
  case E_UN:
    if (e->op == OP_NEG && affine_coef(e->a, v, &x)) return ir_int_apply(OP_SUB, 0, x, c);
    return false;
  default: return false;
  }
}

/* How an access at flat offset ARGS[0] moves with the vectorized var. */
static AccKind classify(Expr **args, const IrVar *v) {
  int64_t c;
  if (!affine_coef(args[0], v, &c)) return ACC_GATHER;
  return c == 0 ? ACC_UNIFORM : c == 1 ? ACC_CONTIG : ACC_GATHER;
}

/* The offset of a uniform or contiguous flat access: that of lane 0. */
static LLVMValueRef lane0_index(CG *g, Expr **args) {
  int lanes = g->lanes;
  LLVMValueRef v = lookup_var(g, g->vvar);
  LLVMValueRef first = LLVMBuildExtractElement(g->b, v, LLVMConstInt(g->i32, 0, 0), "");
  bind_var(g, g->vvar, first);
  g->lanes = 1;
  LLVMValueRef flat = emit_expr(g, args[0]);
  g->lanes = lanes;
  g->nvars--;
  return flat;
}

static LLVMValueRef from_mem(CG *g, LLVMValueRef v, DType t) {
  int lanes = is_vec(v) ? (int)LLVMGetVectorSize(LLVMTypeOf(v)) : 1;
  if (t == DT_BOOL) return LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  if (t == DT_F16) return LLVMBuildFPExt(g->b, v, vec_of(g->f32, lanes), "");
  return v;
}

static LLVMValueRef to_mem(CG *g, LLVMValueRef v, DType t) {
  int lanes = is_vec(v) ? (int)LLVMGetVectorSize(LLVMTypeOf(v)) : 1;
  if (t == DT_BOOL) return LLVMBuildZExt(g->b, v, vec_of(g->i8, lanes), "");
  if (t == DT_F16) return LLVMBuildFPTrunc(g->b, v, vec_of(g->half, lanes), "");
  return v;
}

static LLVMValueRef elem_ptr(CG *g, Buffer *buf, LLVMValueRef idx) {
  return LLVMBuildInBoundsGEP2(g->b, mem_type(g, buf->dtype), lookup_buf(g, buf)->ptr, &idx, 1, "");
}

static LLVMValueRef load_scalar(CG *g, Buffer *buf, LLVMValueRef idx) {
  LLVMValueRef l = LLVMBuildLoad2(g->b, mem_type(g, buf->dtype), elem_ptr(g, buf, idx), "");
  return from_mem(g, l, buf->dtype);
}

/* llvm.masked.* of vector type VT (and pointer type PT) under G's mask. */
static LLVMValueRef masked_intrinsic(CG *g, const char *name, LLVMTypeRef vt, LLVMTypeRef pt, LLVMValueRef *args,
                                     unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef tys[2] = {vt, pt};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->mod, id, tys, 2);
  return LLVMBuildCall2(g->b, LLVMIntrinsicGetType(g->ctx, id, tys, 2), fn, args, n, "");
}

/* A vector of L lanes of BUF from the lane pointers PTRS (lane by lane when there is no
 * mask; a masked gather under one: lanes whose guards fail load nothing). */
static LLVMValueRef gather(CG *g, Buffer *buf, LLVMValueRef idx) {
  LLVMTypeRef et = mem_type(g, buf->dtype), vt = LLVMVectorType(et, (unsigned)g->lanes);
  if (g->mask) {
    LLVMValueRef base = lookup_buf(g, buf)->ptr;
    LLVMValueRef ptrs = LLVMBuildInBoundsGEP2(g->b, et, base, &idx, 1, "");
    LLVMValueRef args[4] = {ptrs, LLVMConstInt(g->i32, (unsigned)dtype_bytes(buf->dtype), 0), g->mask,
                            LLVMConstNull(vt)};
    return from_mem(g, masked_intrinsic(g, "llvm.masked.gather", vt, LLVMTypeOf(ptrs), args, 4), buf->dtype);
  }
  LLVMValueRef out = LLVMGetPoison(LLVMVectorType(reg_type(g, buf->dtype), (unsigned)g->lanes));
  for (int i = 0; i < g->lanes; i++) {
    LLVMValueRef li = LLVMConstInt(g->i32, (unsigned)i, 0);
    LLVMValueRef x = load_scalar(g, buf, LLVMBuildExtractElement(g->b, idx, li, ""));
    out = LLVMBuildInsertElement(g->b, out, x, li, "");
  }
  return out;
}

/* The part of flat index E that moves with V at V = VAL, when E is U + L(V) for some U free
 * of V: E's sums and products by constants (64-bit, wrapping: the split is exact) are split,
 * and a term that uses V uses nothing else (V / 8 * 8, V % 3). False: not of that form. */
typedef struct {
  const IrVar *v;
  int64_t val;
} LaneAt;
static bool lane_leaf(const Expr *e, void *ctx, int64_t *out) {
  const LaneAt *at = ctx;
  if (e->kind != E_VAR || e->var != at->v) return false;
  *out = at->val;
  return true;
}
static bool lane_part(const Expr *e, const IrVar *v, int64_t val, int64_t *out) {
  int64_t x, y, k;
  if (!ir_uses_var(e, v)) return *out = 0, true;
  if (e->dtype == DT_I64 && e->kind == E_BIN && (e->op == OP_ADD || e->op == OP_SUB))
    return lane_part(e->a, v, val, &x) && lane_part(e->b, v, val, &y) && ir_int_apply((BinOp)e->op, x, y, out);
  if (e->dtype == DT_I64 && e->kind == E_BIN && e->op == OP_MUL) {
    if (ir_is_const(e->a, &k) && lane_part(e->b, v, val, &y)) return ir_int_apply(OP_MUL, k, y, out);
    if (ir_is_const(e->b, &k) && lane_part(e->a, v, val, &x)) return ir_int_apply(OP_MUL, k, x, out);
  }
  if (e->dtype == DT_I64 && e->kind == E_UN && e->op == OP_NEG && lane_part(e->a, v, val, &x))
    return ir_int_apply(OP_SUB, 0, x, out);
  LaneAt at = {v, val};
  return ir_eval_int(e, lane_leaf, &at, out);
}

/* The elements that LANES lanes of a flat access ARGS read, V's lanes from BASE on: lane l
 * reads OFF[l] elements past lane 0; ND distinct distances DIST, from LO to HI. False: the
 * distances are not constants (a real gather) or are far apart. */
typedef struct {
  int64_t off[MAX_VECTOR_LANES], dist[MAX_VECTOR_LANES], lo, hi;
  int nd;
} LaneOffsets;
static bool lane_offsets(Expr **args, const IrVar *v, int64_t base, int lanes, LaneOffsets *o) {
  int64_t l0;
  if (!lane_part(args[0], v, base, &l0)) return false;
  o->nd = 0, o->lo = INT64_MAX, o->hi = INT64_MIN;
  for (int l = 0; l < lanes; l++) {
    int64_t x = l0, d;
    if (l && !lane_part(args[0], v, (int64_t)((uint64_t)base + (uint64_t)l), &x)) return false;
    d = o->off[l] = (int64_t)((uint64_t)x - (uint64_t)l0);
    if (d < -(1 << 20) || d > (1 << 20)) return false;
    int j = 0;
    while (j < o->nd && o->dist[j] != d) j++;
    if (j == o->nd) o->dist[o->nd++] = d;
    o->lo = d < o->lo ? d : o->lo;
    o->hi = d > o->hi ? d : o->hi;
  }
  return true;
}

/* Does few_offsets load O (a range without holes under no mask, or at most half as many
 * elements as lanes)? */
static bool few(const LaneOffsets *o, int lanes, bool masked) {
  return (!masked && o->hi - o->lo + 1 == o->nd) || o->nd * 2 <= lanes;
}

/* A gather whose lanes read few distinct elements at constant distances from lane 0's (a
 * grouped convolution's input channel (co / 8) * 8 + ci: two elements for 16 lanes): each
 * element loaded once and broadcast, the lanes blended (under a mask: an element is loaded
 * when a live lane reads it); with no mask and distances that cover a range without holes,
 * one vector load of that range and a shuffle. Every element loaded is one a live lane
 * reads. NULL: not of that form (a real gather). */
static LLVMValueRef few_offsets(CG *g, Buffer *buf, Expr **args) {
  LaneOffsets o;
  if (!g->vmin || !LLVMIsAConstantInt(g->vmin)) return NULL;
  if (!lane_offsets(args, g->vvar, LLVMConstIntGetSExtValue(g->vmin), g->lanes, &o) || !few(&o, g->lanes, g->mask))
    return NULL;
  LLVMValueRef idx0 = lane0_index(g, args), m[MAX_VECTOR_LANES];
  LLVMTypeRef et = mem_type(g, buf->dtype);
  if (!g->mask && o.hi - o.lo + 1 == o.nd) { /* a range without holes: load it, shuffle */
    LLVMTypeRef vt = LLVMVectorType(et, (unsigned)o.nd);
    LLVMValueRef l = LLVMBuildLoad2(g->b, vt, elem_ptr(g, buf, LLVMBuildAdd(g->b, idx0, i64c(g, o.lo), "")), "");
    LLVMSetAlignment(l, (unsigned)dtype_bytes(buf->dtype));
    for (int i = 0; i < g->lanes; i++) m[i] = LLVMConstInt(g->i32, (unsigned long long)(o.off[i] - o.lo), 0);
    LLVMValueRef sh = LLVMBuildShuffleVector(g->b, l, LLVMGetPoison(vt), LLVMConstVector(m, (unsigned)g->lanes), "");
    return from_mem(g, sh, buf->dtype);
  }
  LLVMValueRef out = NULL;
  for (int j = 0; j < o.nd; j++) {
    LLVMValueRef at = LLVMBuildAdd(g->b, idx0, i64c(g, o.dist[j]), ""), x;
    for (int i = 0; i < g->lanes; i++) m[i] = LLVMConstInt(g->i1, o.off[i] == o.dist[j], 0);
    LLVMValueRef sel = LLVMConstVector(m, (unsigned)g->lanes);
    if (g->mask) {
      LLVMValueRef live = intrinsic1(g, "llvm.vector.reduce.or", LLVMBuildAnd(g->b, g->mask, sel, ""), NULL);
      LLVMTypeRef vt = LLVMVectorType(et, 1);
      LLVMValueRef margs[4] = {elem_ptr(g, buf, at), LLVMConstInt(g->i32, (unsigned)dtype_bytes(buf->dtype), 0),
                               LLVMBuildInsertElement(g->b, LLVMGetPoison(LLVMVectorType(g->i1, 1)), live, LLVMConstInt(g->i32, 0, 0), ""),
                               LLVMConstNull(vt)};
      LLVMValueRef one = masked_intrinsic(g, "llvm.masked.load", vt, g->ptr, margs, 4);
      x = splat(g, from_mem(g, LLVMBuildExtractElement(g->b, one, LLVMConstInt(g->i32, 0, 0), ""), buf->dtype));
    } else {
      x = splat(g, load_scalar(g, buf, at));
    }
    out = out ? LLVMBuildSelect(g->b, sel, x, out, "") : x;
  }
  return out;
}

/* Does a span load (span_load) serve these offsets: distinct, at most 4 x LANES elements? */
static bool span_fits(const LaneOffsets *o, int lanes) {
  return o->nd == lanes && o->hi - o->lo + 1 <= 4 * (int64_t)lanes;
}

/* Is the 64-bit integer E a multiple of S (a power of two: so it stays one when E wraps)? */
static bool multiple_of(const Expr *e, int64_t s) {
  int64_t k;
  if (ir_is_const(e, &k)) return k % s == 0;
  if (e->kind != E_BIN || e->dtype != DT_I64) return false;
  if (e->op == OP_MUL) return multiple_of(e->a, s) || multiple_of(e->b, s);
  if (e->op == OP_ADD || e->op == OP_SUB) return multiple_of(e->a, s) && multiple_of(e->b, s);
  return false;
}

/* The row of BUF's innermost axis that the flat offset E reads in: *S its extent (2 to 8,
 * a power of two, rows unpadded) when E is a multiple of it plus a constant *J below it
 * (flatten's `... * S + j`). Every element of a row is in BUF when one is. */
static bool in_row(const Buffer *buf, const Expr *e, int64_t *s, int64_t *j) {
  if (buf->ndim < 1 || buf->pad || !ir_is_const(buf->shape[buf->ndim - 1], s) || *s < 2 || *s > 8 || (*s & (*s - 1)))
    return false;
  if (multiple_of(e, *s)) return *j = 0, true;
  if (e->kind != E_BIN || e->op != OP_ADD) return false;
  if (ir_is_const(e->b, j) && *j >= 0 && *j < *s) return multiple_of(e->a, *s);
  return ir_is_const(e->a, j) && *j >= 0 && *j < *s && multiple_of(e->b, *s);
}

/* A gather whose lanes read distinct elements at constant distances, a span of at most 4
 * x lanes: one load of the span and a shuffle into lanes. Without a mask the span lies
 * between two elements that lanes read, so all of it is in the buffer (a pooling's stride
 * 2: vgatherdps before). Under a mask (a packed int8 filter's [.., co, 4] read at one of
 * its 4 bytes by a tail tile's lanes of co, stride 4) one masked load in which only the
 * elements the live lanes read are enabled: a masked gather was lane by lane (vpinsrb per
 * byte: a 7 x 7 x 232 int8 convolution's tail tile took 15x the time of a full one). NULL:
 * not of that form. */
static LLVMValueRef span_load(CG *g, Buffer *buf, Expr **args) {
  LaneOffsets o;
  if (!g->vmin || !LLVMIsAConstantInt(g->vmin)) return NULL;
  if (!lane_offsets(args, g->vvar, LLVMConstIntGetSExtValue(g->vmin), g->lanes, &o) || !span_fits(&o, g->lanes)) return NULL;
  if (!g->mask) { /* every lane reads: the span between the first and the last element read */
    LLVMValueRef sel[MAX_VECTOR_LANES];
    for (int l = 0; l < g->lanes; l++) sel[l] = LLVMConstInt(g->i32, (unsigned long long)(o.off[l] - o.lo), 0);
    LLVMTypeRef vt = LLVMVectorType(mem_type(g, buf->dtype), (unsigned)(o.hi - o.lo + 1));
    LLVMValueRef l = LLVMBuildLoad2(g->b, vt, elem_ptr(g, buf, LLVMBuildAdd(g->b, lane0_index(g, args), i64c(g, o.lo), "")), "");
    LLVMSetAlignment(l, (unsigned)dtype_bytes(buf->dtype));
    LLVMValueRef sh = LLVMBuildShuffleVector(g->b, l, LLVMGetPoison(vt), LLVMConstVector(sel, (unsigned)g->lanes), "");
    return from_mem(g, sh, buf->dtype);
  }
  /* each live lane's whole row when the rows are disjoint (the loads of a row's other
   * elements then are this same load: a tail tile's four bytes of each filter channel in
   * one vector, as a full tile reads them), else its element alone */
  int64_t rs = 1, j = 0, lo = o.lo;
  int owner[4 * MAX_VECTOR_LANES + 8], span;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 0 && !in_row(buf, args[0], &rs, &j)) continue;
    if (pass == 1) rs = 1, j = 0;
    lo = o.lo - j, span = (int)(o.hi - j + rs - lo);
    bool disjoint = true;
    for (int p = 0; p < span; p++) owner[p] = -1;
    for (int l = 0; l < g->lanes && disjoint; l++)
      for (int64_t t = 0; t < rs; t++) {
        int p = (int)(o.off[l] - j + t - lo);
        disjoint &= owner[p] < 0;
        owner[p] = l;
      }
    if (disjoint) break;
  }
  LLVMValueRef m[4 * MAX_VECTOR_LANES + 8], sel[MAX_VECTOR_LANES];
  for (int p = 0; p < span; p++) m[p] = LLVMConstInt(g->i32, (unsigned)(owner[p] < 0 ? g->lanes : owner[p]), 0);
  for (int l = 0; l < g->lanes; l++) sel[l] = LLVMConstInt(g->i32, (unsigned long long)(o.off[l] - lo), 0);
  LLVMValueRef none = LLVMConstNull(LLVMTypeOf(g->mask));
  LLVMValueRef mask = LLVMBuildShuffleVector(g->b, g->mask, none, LLVMConstVector(m, (unsigned)span), "");
  LLVMTypeRef vt = LLVMVectorType(mem_type(g, buf->dtype), (unsigned)span);
  LLVMValueRef ptr = elem_ptr(g, buf, LLVMBuildAdd(g->b, lane0_index(g, args), i64c(g, lo), ""));
  LLVMValueRef margs[4] = {ptr, LLVMConstInt(g->i32, (unsigned)dtype_bytes(buf->dtype), 0), mask, LLVMConstNull(vt)};
  LLVMValueRef l = masked_intrinsic(g, "llvm.masked.load", vt, g->ptr, margs, 4);
  LLVMValueRef sh = LLVMBuildShuffleVector(g->b, l, LLVMGetPoison(vt), LLVMConstVector(sel, (unsigned)g->lanes), "");
  return from_mem(g, sh, buf->dtype);
}

static LLVMValueRef emit_load(CG *g, Expr *e) {
  Buffer *buf = e->buf;
  if (g->mask && g->kept && e != g->kept && e->buf == g->kept->buf && e->nargs == 1 && ir_equal(e->args[0], g->kept->args[0])) {
    LLVMValueRef m = g->mask; /* the stored element (a tail tile's accumulator): every lane may read it */
    g->mask = NULL;
    LLVMValueRef v = emit_load(g, (Expr *)g->kept);
    g->mask = m;
    return v;
  }
  bool vec = false;
  for (int d = 0; g->lanes > 1 && d < e->nargs; d++) vec |= ir_uses_var(e->args[d], g->vvar);
  if (!vec) return load_scalar(g, buf, emit_expr(g, e->args[0]));
  switch (classify(e->args, g->vvar)) {
  case ACC_UNIFORM: return load_scalar(g, buf, lane0_index(g, e->args));
  case ACC_CONTIG: {
    LLVMTypeRef vt = LLVMVectorType(mem_type(g, buf->dtype), (unsigned)g->lanes);
    LLVMValueRef ptr = elem_ptr(g, buf, lane0_index(g, e->args));
    if (g->mask) {
      LLVMValueRef args[4] = {ptr, LLVMConstInt(g->i32, (unsigned)dtype_bytes(buf->dtype), 0), g->mask,
                              LLVMConstNull(vt)};
      return from_mem(g, masked_intrinsic(g, "llvm.masked.load", vt, g->ptr, args, 4), buf->dtype);
    }
    LLVMValueRef l = LLVMBuildLoad2(g->b, vt, ptr, "");
    LLVMSetAlignment(l, (unsigned)dtype_bytes(buf->dtype));
    return from_mem(g, l, buf->dtype);
  }
  default: {
    LLVMValueRef v = few_offsets(g, buf, e->args);
    if (!v) v = span_load(g, buf, e->args);
    return v ? v : gather(g, buf, emit_expr(g, e->args[0])); /* lane by lane */
  }
  }
}

/* An f16 value (held in f32) rounded to half precision, as the interpreter rounds the
 * result of every f16 operation and constant: otherwise floor() or a comparison of a
 * value computed in f32 can differ from the reference by a whole unit. */
static LLVMValueRef round_half(CG *g, LLVMValueRef v) {
  int lanes = is_vec(v) ? (int)LLVMGetVectorSize(LLVMTypeOf(v)) : 1;
  LLVMValueRef h = LLVMBuildFPTrunc(g->b, v, vec_of(g->half, lanes), "");
  return LLVMBuildFPExt(g->b, h, vec_of(g->f32, lanes), "");
}

/* Is float E never NaN where a min or max meets it: a literal that is not NaN, an integer
 * converted, or the accumulator of the store being emitted (a load of the buffer it
 * writes: only reductions read what they write, and a max= / min= accumulator starts at
 * -inf / inf and stays a number under maxNum / minNum). */
static bool never_nan(CG *g, const Expr *e) {
  if (e->kind == E_FLOAT) return !isnan(e->fval);
  if (e->kind == E_CAST) return !dtype_is_float(e->a->dtype);
  return e->kind == E_LOAD && g->store_buf && e->buf == g->store_buf;
}

static bool is_fmul(const Expr *e) {
  return e->kind == E_BIN && e->op == OP_MUL && (e->dtype == DT_F32 || e->dtype == DT_F64);
}

/* M->a * M->b + C as one llvm.fmuladd (contracted to an FMA where the target has one, as
 * `contract` fmul and fadd may be): kept one operation, so that LLVM cannot form the
 * product in the branches of a guarded load and the sum after their join, where no FMA
 * forms (a padded convolution's edge tiles). */
static LLVMValueRef emit_fmuladd(CG *g, Expr *m, Expr *c) {
  LLVMValueRef x = emit_expr(g, m->a), y = emit_expr(g, m->b), z = emit_expr(g, c);
  unify(g, &x, &y);
  unify(g, &x, &z);
  unify(g, &y, &z);
  LLVMValueRef args[3] = {x, y, z};
  return intrinsic_n(g, "llvm.fmuladd", args, 3);
}

/* ---- four-byte dot products (vpdpbusd) ---------------------------------------------
 * An i32 sum ACC + i32(u0) * i32(s0) + ... + i32(u3) * i32(s3) on vector lanes, where the
 * u are u8 values that no lane tells apart (loads of four consecutive bytes, all under one
 * guard with one constant in its place) and the s are i8 loads of four consecutive bytes
 * per lane, the lanes four bytes apart: what a quantized convolution's packed filter
 * ([.., CI / 4, CO, 4]) and its input channels make. On a target with VNNI that is one
 * vpdpbusd per DOT_LANES lanes: the four u bytes read as one i32 and broadcast, the lanes'
 * 4 x LANES s bytes as one load; products of u8 and i8 summed in i32 without saturation,
 * the sum added to ACC wrapping: the interpreter's i32 arithmetic exactly. */
typedef struct {
  Expr *u[4], *s[4];
} Dot4;

/* The terms of the i32 sum E (its + nodes flattened) into T; false past 4 of them. */
static bool sum_terms(Expr *e, Expr **t, int *n) {
  if (e->kind == E_BIN && e->op == OP_ADD && e->dtype == DT_I32) return sum_terms(e->a, t, n) && sum_terms(e->b, t, n);
  if (*n == 4) return false;
  t[(*n)++] = e;
  return true;
}

/* X of i32(X) where X is of dtype DT; NULL otherwise. */
static Expr *widened(Expr *e, DType dt) {
  return e->kind == E_CAST && e->dtype == DT_I32 && e->a->dtype == dt ? e->a : NULL;
}

/* Is B's flat index A's plus D (the difference folds to that constant)? */
static bool index_plus(Expr *a, Expr *b, int64_t d) {
  int64_t k;
  return ir_is_const(simplify(ir_sub(b->args[0], a->args[0]), NULL), &k) && k == d;
}

/* The load of a u8 term (U itself, or the loading branch of a guard U ? load : constant). */
static Expr *u_load(Expr *u) { return u->kind == E_SELECT ? u->b : u; }

static bool dot4_of(CG *g, Expr *sum, Dot4 *d) {
  Expr *t[4];
  int n = 0;
  if (!sum_terms(sum, t, &n) || n != 4) return false;
  for (int i = 0; i < 4; i++) {
    if (t[i]->kind != E_BIN || t[i]->op != OP_MUL || t[i]->dtype != DT_I32) return false;
    Expr *x = widened(t[i]->a, DT_U8) ? t[i]->a : t[i]->b, *y = x == t[i]->a ? t[i]->b : t[i]->a;
    d->u[i] = widened(x, DT_U8), d->s[i] = widened(y, DT_I8);
    if (!d->u[i] || !d->s[i] || ir_uses_var(d->u[i], g->vvar)) return false;
    Expr *ul = u_load(d->u[i]), *u0 = d->u[0];
    if (u0->kind == E_SELECT) { /* the guard's other value: a constant or one u8 value for all lanes */
      if (d->u[i]->kind != E_SELECT || (d->u[i]->c->kind != E_INT && ir_uses_var(d->u[i]->c, g->vvar)) ||
          !ir_equal(d->u[i]->a, u0->a) || !ir_equal(d->u[i]->c, u0->c))
        return false;
    } else if (d->u[i]->kind != E_LOAD) {
      return false;
    }
    if (ul->kind != E_LOAD || ul->nargs != 1 || d->s[i]->kind != E_LOAD || d->s[i]->nargs != 1) return false;
    if (ul->buf != u_load(u0)->buf || d->s[i]->buf != d->s[0]->buf) return false;
    if (i && (!index_plus(u_load(u0), ul, i) || !index_plus(d->s[0], d->s[i], i))) return false;
  }
  int64_t c;
  return affine_coef(d->s[0]->args[0], g->vvar, &c) && c == 4;
}

/* The four u8 bytes of D as one i32 (uniform): loaded when their guard holds, else the
 * guard's other value (a constant, or a u8 value the same for every lane: a run-time zero
 * point) in each byte. */
static LLVMValueRef dot4_word(CG *g, const Dot4 *d) {
  int lanes = g->lanes;
  g->lanes = 1; /* nothing here moves with the vector's var */
  Expr *l = u_load(d->u[0]);
  LLVMValueRef word;
  if (d->u[0]->kind != E_SELECT) {
    word = LLVMBuildLoad2(g->b, g->i32, elem_ptr(g, l->buf, emit_expr(g, l->args[0])), "");
    LLVMSetAlignment(word, 1);
  } else {
    LLVMValueRef c = emit_expr(g, d->u[0]->a), z;
    if (d->u[0]->c->kind == E_INT)
      z = LLVMConstInt(g->i32, (uint32_t)(d->u[0]->c->ival & 0xff) * 0x01010101u, 0);
    else /* the byte in each of the four */
      z = LLVMBuildMul(g->b, LLVMBuildZExt(g->b, emit_expr(g, d->u[0]->c), g->i32, ""), LLVMConstInt(g->i32, 0x01010101u, 0), "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "dot.t");
    LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "dot.j");
    LLVMBuildCondBr(g->b, c, tb, jb);
    LLVMPositionBuilderAtEnd(g->b, tb);
    LLVMValueRef x = LLVMBuildLoad2(g->b, g->i32, elem_ptr(g, l->buf, emit_expr(g, l->args[0])), "");
    LLVMSetAlignment(x, 1);
    LLVMBasicBlockRef tend = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, jb);
    LLVMPositionBuilderAtEnd(g->b, jb);
    word = LLVMBuildPhi(g->b, g->i32, "dot.word");
    LLVMValueRef vals[2] = {x, z};
    LLVMBasicBlockRef blocks[2] = {tend, pre};
    LLVMAddIncoming(word, vals, blocks, 2);
  }
  g->lanes = lanes;
  return word;
}

/* ACC + SUM as vpdpbusd when SUM is a four-byte dot product (Dot4) on a multiple of 4
 * lanes (under a lane mask, a tail tile's: each live lane's four bytes by one masked load);
 * NULL otherwise. The lanes go 16, 8 or 4 at a time
 * (zmm, ymm, xmm: every VNNI CPU has the narrower forms), the widest that the target has and
 * that fits what is left: 24 output channels are vectors of 8 (emit_for), each one ymm
 * vpdpbusd on an AVX-512 CPU too (mobilenet_v2's 24-channel layers were 14x slower). */
static LLVMValueRef emit_dot4(CG *g, Expr *acc, Expr *sum) {
  Dot4 d;
  int lanes = g->lanes;
  if (!g->dot_lanes || lanes % 4 || !dot4_of(g, sum, &d)) return NULL;
  LLVMValueRef a = splat(g, emit_expr(g, acc));
  LLVMValueRef word, bytes, sptr = elem_ptr(g, d.s[0]->buf, lane0_index(g, d.s[0]->args));
  LLVMTypeRef bt = LLVMVectorType(g->i8, (unsigned)(4 * lanes));
  if (g->mask) { /* a tail tile: each live lane's four bytes, the u word when a lane lives */
    LLVMValueRef m4[4 * MAX_VECTOR_LANES];
    for (int i = 0; i < 4 * lanes; i++) m4[i] = LLVMConstInt(g->i32, (unsigned)(i / 4), 0);
    LLVMValueRef bmask = LLVMBuildShuffleVector(g->b, g->mask, LLVMGetPoison(LLVMTypeOf(g->mask)), LLVMConstVector(m4, (unsigned)(4 * lanes)), "");
    LLVMValueRef margs[4] = {sptr, LLVMConstInt(g->i32, 1, 0), bmask, LLVMConstNull(bt)};
    bytes = masked_intrinsic(g, "llvm.masked.load", bt, g->ptr, margs, 4);
    LLVMValueRef outer; /* the word where some lane lives (lanes_on, as emit_under_mask) */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b), jb = lanes_on(g, g->mask, &outer);
    LLVMValueRef x = dot4_word(g, &d);
    LLVMBasicBlockRef tend = LLVMGetInsertBlock(g->b);
    LLVMBuildBr(g->b, jb);
    LLVMPositionBuilderAtEnd(g->b, jb);
    word = LLVMBuildPhi(g->b, g->i32, "dot.lword");
    LLVMValueRef vals[2] = {x, LLVMConstInt(g->i32, 0, 0)};
    LLVMBasicBlockRef blocks[2] = {tend, pre};
    LLVMAddIncoming(word, vals, blocks, 2);
    g->mask = outer;
  } else {
    word = dot4_word(g, &d);
    bytes = LLVMBuildLoad2(g->b, bt, sptr, "");
    LLVMSetAlignment(bytes, 1);
  }
  LLVMValueRef s = LLVMBuildBitCast(g->b, bytes, LLVMVectorType(g->i32, (unsigned)lanes), "");
  LLVMValueRef out = NULL, m[MAX_VECTOR_LANES];
  for (int at = 0, w; at < lanes; at += w) {
    w = g->dot_lanes;
    while (at + w > lanes) w /= 2;
    LLVMTypeRef vt = LLVMVectorType(g->i32, (unsigned)w);
    for (int i = 0; i < w; i++) m[i] = LLVMConstInt(g->i32, 0, 0);
    LLVMValueRef u = LLVMBuildInsertElement(g->b, LLVMGetPoison(vt), word, m[0], "");
    u = LLVMBuildShuffleVector(g->b, u, LLVMGetPoison(vt), LLVMConstVector(m, (unsigned)w), "");
    for (int i = 0; i < w; i++) m[i] = LLVMConstInt(g->i32, (unsigned)(at + i), 0);
    LLVMValueRef sel = LLVMConstVector(m, (unsigned)w);
    const char *name = g->dot_arm ? "llvm.aarch64.neon.usdot"
                       : w == 16   ? "llvm.x86.avx512.vpdpbusd.512"
                       : w == 8    ? "llvm.x86.avx512.vpdpbusd.256"
                                   : "llvm.x86.avx512.vpdpbusd.128";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef args[3] = {lanes == w ? a : LLVMBuildShuffleVector(g->b, a, LLVMGetPoison(LLVMTypeOf(a)), sel, ""), u,
                            lanes == w ? s : LLVMBuildShuffleVector(g->b, s, LLVMGetPoison(LLVMTypeOf(s)), sel, "")};
    /* usdot (unsigned bytes of its second operand by signed ones of its third) is overloaded
     * on its <4 x i32> and <16 x i8> types; vpdpbusd takes i32 vectors and is not */
    LLVMTypeRef ot[2] = {vt, LLVMVectorType(g->i8, (unsigned)(4 * w))};
    int nt = g->dot_arm ? 2 : 0;
    if (g->dot_arm)
      for (int i = 1; i < 3; i++) args[i] = LLVMBuildBitCast(g->b, args[i], ot[1], "");
    LLVMValueRef r = LLVMBuildCall2(g->b, LLVMIntrinsicGetType(g->ctx, id, nt ? ot : NULL, (size_t)nt),
                                    LLVMGetIntrinsicDeclaration(g->mod, id, nt ? ot : NULL, (size_t)nt), args, 3, "");
    if (lanes == w) return r;
    /* R's lanes into OUT at AT: R widened to LANES (its lanes first), then blended in */
    for (int i = 0; i < lanes; i++) m[i] = LLVMConstInt(g->i32, (unsigned)(i < w ? i : 0), 0);
    LLVMValueRef rw = LLVMBuildShuffleVector(g->b, r, LLVMGetPoison(vt), LLVMConstVector(m, (unsigned)lanes), "");
    for (int i = 0; i < lanes; i++) m[i] = LLVMConstInt(g->i32, (unsigned)(i >= at && i < at + w ? lanes + i - at : i), 0);
    out = LLVMBuildShuffleVector(g->b, out ? out : LLVMGetPoison(LLVMTypeOf(a)), rw, LLVMConstVector(m, (unsigned)lanes), "");
  }
  return out;
}

static LLVMValueRef emit_expr(CG *g, Expr *e) {
  LLVMValueRef v = emit_expr_raw(g, e);
  if (e->dtype == DT_F16 && (e->kind == E_FLOAT || e->kind == E_BIN || e->kind == E_CALL))
    return round_half(g, v);
  return v;
}

static LLVMValueRef emit_expr_raw(CG *g, Expr *e) {
  switch (e->kind) {
  case E_INT:
    return LLVMConstInt(reg_type(g, e->dtype), (unsigned long long)(e->dtype == DT_BOOL ? e->ival != 0 : e->ival), dtype_is_signed(e->dtype));
  case E_FLOAT: return LLVMConstReal(reg_type(g, e->dtype), e->fval);
  case E_VAR: return lookup_var(g, e->var);
  case E_LOAD: return emit_load(g, e);
  case E_BIN: {
    if (e->op == OP_ADD && e->dtype == DT_I32 && g->lanes >= 4 && g->dot_lanes) {
      LLVMValueRef d = emit_dot4(g, e->a, e->b);
      if (!d) d = emit_dot4(g, e->b, e->a);
      if (d) return d;
    }
    if (e->op == OP_ADD && (e->dtype == DT_F32 || e->dtype == DT_F64) && !g->exact) {
      Expr *m = is_fmul(e->a) ? e->a : is_fmul(e->b) ? e->b : NULL;
      if (m) return emit_fmuladd(g, m, m == e->a ? e->b : e->a);
    }
    LLVMValueRef a = emit_expr(g, e->a), b = emit_expr(g, e->b);
    unify(g, &a, &b);
    if ((e->op == OP_MAX || e->op == OP_MIN) && dtype_is_float(e->a->dtype)) {
      /* maxNum(x, k) for a K that is never NaN is `x > k ? x : k` (a NaN x gives k): one
       * maxps on x86, where llvm.maxnum takes three instructions. A reduction's
       * accumulator is never NaN (it starts at -inf or inf and maxNum keeps it so). */
      bool kb = never_nan(g, e->b), ka = !kb && never_nan(g, e->a);
      if (ka || kb) {
        LLVMValueRef x = kb ? a : b, k = kb ? b : a;
        return LLVMBuildSelect(g->b, emit_cmp(g, e->op == OP_MAX ? OP_GT : OP_LT, e->a->dtype, x, k), x, k, "");
      }
    }
    return emit_binop(g, e->op, e->a->dtype, a, b);
  }
  case E_UN: {
    LLVMValueRef a = emit_expr(g, e->a);
    if (e->op == OP_NOT) return LLVMBuildNot(g->b, a, "");
    return dtype_is_float(e->dtype) ? LLVMBuildFNeg(g->b, a, "") : LLVMBuildNeg(g->b, a, "");
  }
  case E_SELECT: return emit_select(g, e);
  case E_CALL: return emit_call(g, e);
  case E_CAST: {
    /* a float made an integer is computed without fused multiply-adds, as the interpreter
     * computes it: an integer is compared exactly, and one rounding less before the
     * conversion can move it (a quantization's round, x * 1e9 + y made i32) */
    bool to_int = dtype_is_float(e->a->dtype) && !dtype_is_float(e->dtype);
    g->exact += to_int;
    /* a float of known bounds well inside i32 (a quantization's clamp to [0, 255]) made an
     * integer of at most 32 bits through i32: what the i64 route gives, in one instruction
     * per vector rather than two and a pack */
    double lo, hi;
    LLVMValueRef r;
    if (to_int && e->dtype != DT_BOOL && dtype_bytes(e->dtype) <= 4 && float_bounds(e->a, &lo, &hi) &&
        lo > -2147483520.0 && hi < 2147483520.0) {
      LLVMValueRef x = emit_expr(g, e->a);
      int lanes = is_vec(x) ? (int)LLVMGetVectorSize(LLVMTypeOf(x)) : 1;
      r = LLVMBuildIntCast2(g->b, LLVMBuildFPToSI(g->b, x, vec_of(g->i32, lanes), ""), vec_of(reg_type(g, e->dtype), lanes), 1, "");
    } else {
      r = emit_convert(g, emit_expr(g, e->a), e->a->dtype, e->dtype);
    }
    g->exact -= to_int;
    return r;
  }
  default: die("llvm codegen: bad expression kind %d", e->kind);
  }
}

/* ============================================================= statements */

/* A scatter's update from a parallel loop, buf[idx] = buf[idx] OP v: one atomicrmw. */
static void emit_atomic(CG *g, Stmt *s) {
  BinOp how;
  Expr *rest = ir_update_operand(s, &how);
  if (!rest) die("llvm: atomic store of %s is not an update of it", s->buf->name);
  DType t = s->buf->dtype;
  bool f = dtype_is_float(t), sg = dtype_is_signed(t);
  LLVMAtomicRMWBinOp op = how == OP_ADD ? (f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd)
                          : how == OP_MAX ? (sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax)
                                          : (sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin);
  LLVMValueRef v = emit_expr(g, rest);
  if (is_vec(v)) v = LLVMBuildExtractElement(g->b, v, LLVMConstInt(g->i32, (unsigned)g->lanes - 1, 0), "");
  LLVMValueRef p = elem_ptr(g, s->buf, emit_expr(g, s->args[0]));
  LLVMBuildAtomicRMW(g->b, op, p, to_mem(g, v, t), LLVMAtomicOrderingMonotonic, 0);
}

static void emit_store(CG *g, Stmt *s) {
  if (s->atomic) {
    emit_atomic(g, s);
    return;
  }
  Buffer *buf = s->buf;
  Buffer *outer = g->store_buf;
  const Expr *kept = g->kept, *c = s->value->kind == E_SELECT ? s->value->c : NULL;
  g->store_buf = buf;
  /* only for a store no lane mask guards: then every lane writes, and may read, that element */
  g->kept = !g->mask && c && c->kind == E_LOAD && c->buf == buf && c->nargs == 1 && s->nargs == 1 && ir_equal(c->args[0], s->args[0]) ? c : NULL;
  LLVMValueRef v = emit_expr(g, s->value);
  g->store_buf = outer;
  g->kept = kept;
  bool vec = false;
  for (int d = 0; g->lanes > 1 && d < s->nargs; d++) vec |= ir_uses_var(s->args[d], g->vvar);
  if (!vec) { /* every lane writes the same place: the last one wins, as in serial order */
    if (is_vec(v)) v = LLVMBuildExtractElement(g->b, v, LLVMConstInt(g->i32, (unsigned)g->lanes - 1, 0), "");
    LLVMBuildStore(g->b, to_mem(g, v, buf->dtype), elem_ptr(g, buf, emit_expr(g, s->args[0])));
    return;
  }
  v = splat(g, v);
  if (classify(s->args, g->vvar) == ACC_CONTIG) {
    LLVMValueRef ptr = elem_ptr(g, buf, lane0_index(g, s->args)), m = to_mem(g, v, buf->dtype);
    if (g->mask) {
      LLVMValueRef args[4] = {m, ptr, LLVMConstInt(g->i32, (unsigned)dtype_bytes(buf->dtype), 0), g->mask};
      masked_intrinsic(g, "llvm.masked.store", LLVMTypeOf(m), g->ptr, args, 4);
      return;
    }
    LLVMValueRef st = LLVMBuildStore(g->b, m, ptr);
    LLVMSetAlignment(st, (unsigned)dtype_bytes(buf->dtype));
    return;
  }
  if (g->mask) die("llvm codegen: a scattered store under a lane guard"); /* vectorizable() */
  LLVMValueRef idx = emit_expr(g, s->args[0]);
  for (int i = 0; i < g->lanes; i++) {
    LLVMValueRef li = LLVMConstInt(g->i32, (unsigned)i, 0);
    LLVMValueRef x = LLVMBuildExtractElement(g->b, v, li, "");
    LLVMBuildStore(g->b, to_mem(g, x, buf->dtype), elem_ptr(g, buf, LLVMBuildExtractElement(g->b, idx, li, "")));
  }
}

/* A counted loop: VAR from MIN for EXT iterations, BODY emitted by emit_stmt. */
static void emit_loop(CG *g, IrVar *var, LLVMValueRef min, LLVMValueRef ext, Stmt *body) {
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for.head");
  LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for.body");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for.end");
  LLVMValueRef end = LLVMBuildAdd(g->b, min, ext, "");
  LLVMBuildBr(g->b, head);
  LLVMPositionBuilderAtEnd(g->b, head);
  LLVMValueRef i = LLVMBuildPhi(g->b, g->i64, var->name);
  LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, i, end, ""), bodyb, exit);
  LLVMPositionBuilderAtEnd(g->b, bodyb);
  bind_var(g, var, i);
  emit_stmt(g, body);
  g->nvars--;
  LLVMValueRef next = LLVMBuildNSWAdd(g->b, i, i64c(g, 1), ""); /* nsw: i < end */
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
  LLVMBuildBr(g->b, head);
  LLVMValueRef vals[2] = {min, next};
  LLVMBasicBlockRef blocks[2] = {pre, latch};
  LLVMAddIncoming(i, vals, blocks, 2);
  LLVMPositionBuilderAtEnd(g->b, exit);
}

/* Accesses of a body, for the vectorizer's dependence test. */
typedef struct Access {
  Buffer *buf;
  Expr **args;
  bool store;
} Access;
typedef struct Accesses {
  Access a[256];
  int n;
  bool overflow;
  int lanes;
} Accesses;

static void add_access(Accesses *acc, Buffer *b, Expr **args, bool store) {
  if (acc->n == 256) acc->overflow = true;
  else acc->a[acc->n++] = (Access){b, args, store};
}

/* Is every load of E that moves with V cheap on LANES lanes under a mask (masked, a
 * contiguous or a uniform access, few elements: few_offsets, or a short span:
 * span_load)? A masked gather is slower
 * than the scalar loop (argmax's lanes). */
static bool masked_loads_cheap(const Expr *e, const IrVar *v, int lanes) {
  LaneOffsets o;
  if (!e) return true;
  if (e->kind == E_LOAD && ir_uses_var(e->args[0], v) && classify(e->args, v) == ACC_GATHER &&
      !(lane_offsets(e->args, v, 0, lanes, &o) && (few(&o, lanes, true) || span_fits(&o, lanes))))
    return false;
  for (int i = 0; i < e->nargs; i++)
    if (!masked_loads_cheap(e->args[i], v, lanes)) return false;
  return masked_loads_cheap(e->a, v, lanes) && masked_loads_cheap(e->b, v, lanes) && masked_loads_cheap(e->c, v, lanes);
}

/* Can expression E be evaluated on lanes of V? Collects its loads into ACC. */
static bool vec_expr_ok(const Expr *e, const IrVar *v, Accesses *acc) {
  if (!e) return true;
  if (e->kind == E_LOAD) add_access(acc, e->buf, e->args, false);
  /* a guard that differs by lane over a branch that loads: that branch under a mask */
  if (e->kind == E_SELECT && ir_uses_var(e->a, v) && !((expr_safe(e->b) || masked_loads_cheap(e->b, v, acc->lanes)) &&
                                                       (expr_safe(e->c) || masked_loads_cheap(e->c, v, acc->lanes))))
    return false;
  for (int i = 0; i < e->nargs; i++)
    if (!vec_expr_ok(e->args[i], v, acc)) return false;
  return vec_expr_ok(e->a, v, acc) && vec_expr_ok(e->b, v, acc) && vec_expr_ok(e->c, v, acc);
}

/* Can statement S be emitted once on lanes of V? No inner loops or allocations; guards
 * that depend on V become lane masks. */
static bool vec_stmt_ok(const Stmt *s, const IrVar *v, Accesses *acc) {
  if (!s) return true;
  switch (s->kind) {
  case S_SEQ:
    for (int i = 0; i < s->n; i++)
      if (!vec_stmt_ok(s->stmts[i], v, acc)) return false;
    return true;
  case S_IF: /* a guard on V masks the lanes of its branches (emit_if) */
    return vec_expr_ok(s->cond, v, acc) && vec_stmt_ok(s->body, v, acc) && vec_stmt_ok(s->els, v, acc);
  case S_STORE:
    if (s->atomic) return false;
    for (int i = 0; i < s->nargs; i++)
      if (!vec_expr_ok(s->args[i], v, acc)) return false;
    add_access(acc, s->buf, s->args, true);
    return vec_expr_ok(s->value, v, acc);
  default: return false;
  }
}

static bool same_args(Expr **a, Expr **b, int n) {
  for (int i = 0; i < n; i++)
    if (!ir_equal(a[i], b[i])) return false;
  return true;
}

/* Lanes are independent when every buffer the body stores is accessed only at one
 * contiguous index (each lane then owns its element). */
static bool vectorizable(const Stmt *body, const IrVar *v, int lanes) {
  Accesses *acc = calloc(1, sizeof *acc);
  if (acc) acc->lanes = lanes;
  bool ok = acc && vec_stmt_ok(body, v, acc) && !acc->overflow;
  for (int i = 0; ok && i < acc->n; i++) {
    if (!acc->a[i].store) continue;
    Buffer *b = acc->a[i].buf;
    if (classify(acc->a[i].args, v) != ACC_CONTIG) ok = false;
    for (int j = 0; ok && j < acc->n; j++)
      if (acc->a[j].buf == b && !same_args(acc->a[j].args, acc->a[i].args, 1)) ok = false;
  }
  free(acc);
  return ok;
}

/* A vectorized loop: the var is <L x i64> = min + <0, 1, ..., L-1>. */
static void emit_vector(CG *g, Stmt *s, LLVMValueRef min, int lanes) {
  LLVMValueRef steps[MAX_VECTOR_LANES];
  for (int i = 0; i < lanes; i++) steps[i] = i64c(g, i);
  int old_lanes = g->lanes;
  IrVar *old_var = g->vvar;
  g->lanes = lanes;
  g->vvar = s->var;
  LLVMValueRef old_min = g->vmin;
  g->vmin = min;
  LLVMValueRef v = LLVMBuildAdd(g->b, splat(g, min), LLVMConstVector(steps, (unsigned)lanes), s->var->name);
  bind_var(g, s->var, v);
  emit_stmt(g, s->body);
  g->nvars--;
  g->lanes = old_lanes;
  g->vvar = old_var;
  g->vmin = old_min;
}

/* The `allocas` block's insertion point: before its terminator. */
static LLVMValueRef entry_alloca(CG *g, LLVMTypeRef t, unsigned align, const char *name) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(g->ctx);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(g->allocas));
  LLVMValueRef a = LLVMBuildAlloca(b, t, name);
  LLVMSetAlignment(a, align);
  LLVMDisposeBuilder(b);
  return a;
}

static LLVMValueRef declare_fn(CG *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n) {
  LLVMValueRef f = LLVMGetNamedFunction(g->mod, name);
  LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
  return f ? f : LLVMAddFunction(g->mod, name, fty);
}

static LLVMValueRef call_fn(CG *g, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n,
                            LLVMValueRef *args) {
  LLVMValueRef f = declare_fn(g, name, ret, params, n);
  return LLVMBuildCall2(g->b, LLVMGlobalGetValueType(f), f, args, (unsigned)n, "");
}

/* E, a size expression (an extent over the sizes), with + - * checked: *BAD is or-ed with
 * "it overflowed 64 bits", so that a wrapped extent never sizes an allocation. */
static LLVMValueRef emit_size_checked(CG *g, Expr *e, LLVMValueRef *bad) {
  const char *name = NULL;
  if (e->kind == E_BIN && e->dtype == DT_I64)
    name = e->op == OP_ADD ? "llvm.sadd.with.overflow" : e->op == OP_SUB ? "llvm.ssub.with.overflow"
         : e->op == OP_MUL ? "llvm.smul.with.overflow" : NULL;
  if (!name) return emit_expr(g, e);
  LLVMValueRef a = emit_size_checked(g, e->a, bad), b = emit_size_checked(g, e->b, bad);
  LLVMValueRef r = intrinsic1(g, name, a, b);
  *bad = LLVMBuildOr(g->b, *bad, LLVMBuildExtractValue(g->b, r, 1, ""), "");
  return LLVMBuildExtractValue(g->b, r, 0, "");
}

/* Error codes of a compiled function (rt.c's cpu_call turns them into messages). */
enum { ERR_SIZE = 1, ERR_ALLOC_SIZE = 2, ERR_ALLOC = 3, ERR_EXTERN = 4 };

/* The largest stack buffer (bytes) whose stale contents are declared dead at its scope's
 * start (emit_alloc): 32 AVX-512 registers, a register tile's most. */
enum { MAX_DEAD_STORE = 2048 };

/* S_ALLOC: small constant buffers on the stack (any scope: on the CPU a `global` buffer
 * of a function is its own memory too; a tile computed at a parallel loop, as the network
 * defaults' accumulators and padded patches, then costs no aligned_alloc per iteration and
 * can live in registers), the rest from aligned_alloc (a size that overflows or a failure
 * sets the error code and skips the body). */
static void emit_alloc(CG *g, Stmt *s) {
  Buffer *buf = s->buf;
  int64_t n = dtype_bytes(buf->dtype), ext;
  bool konst = true;
  for (int d = 0; d < buf->ndim; d++) { /* the last extent with storage_align's row padding */
    if (!ir_is_const(buf->shape[d], &ext) || ext < 0 ||
        (d == buf->ndim - 1 && buf->pad && ext > 0 && __builtin_add_overflow(ext, buf->pad, &ext)) ||
        __builtin_mul_overflow(n, ext, &n))
      konst = false;
  }
  if (konst && n <= MAX_STACK_ALLOC) {
    LLVMValueRef p = entry_alloca(g, LLVMArrayType(g->i8, (unsigned)(n ? n : 1)), 64, buf->name);
    bind_buf(g, buf, p);
    /* What the buffer held in an enclosing loop's previous iteration is dead: an
     * arbitrary byte (frozen poison, which costs no instruction) written over a small one
     * says so to SROA. Else a register tile whose rows a guarded (tail) path may leave
     * unwritten is carried from iteration to iteration: vit's products, a 28-register
     * tile, carried 4 more vectors, and LLVM spilled inside the k loop (1.83 -> 1.39 ms).
     * (llvm.lifetime.start does not say it to mem2reg, which drops the marker.) */
    if (n > 0 && n <= MAX_DEAD_STORE)
      LLVMBuildMemSet(g->b, p, LLVMBuildFreeze(g->b, LLVMGetPoison(g->i8), ""), i64c(g, n), 64);
    emit_stmt(g, s->body);
    g->nbufs--;
    return;
  }
  /* The size in bytes, with every product checked: an extent below 0 or a product that
   * overflows (sizes up to 2^40 can) fails the call instead of allocating too little. */
  LLVMValueRef bytes = i64c(g, dtype_bytes(buf->dtype)), bad = LLVMConstInt(g->i1, 0, 0);
  for (int d = 0; d < buf->ndim; d++) {
    LLVMValueRef extent = emit_size_checked(g, buf->shape[d], &bad);
    bad = LLVMBuildOr(g->b, bad, LLVMBuildICmp(g->b, LLVMIntSLT, extent, i64c(g, 0), ""), "");
    if (d == buf->ndim - 1 && buf->pad) /* storage_align: a constant row length (bounds.c) + pad */
      extent = LLVMBuildAdd(g->b, extent, i64c(g, buf->pad), "");
    LLVMValueRef prod = intrinsic1(g, "llvm.umul.with.overflow", bytes, extent);
    bytes = LLVMBuildExtractValue(g->b, prod, 0, "");
    bad = LLVMBuildOr(g->b, bad, LLVMBuildExtractValue(g->b, prod, 1, ""), "");
  }
  bad = LLVMBuildOr(g->b, bad, LLVMBuildICmp(g->b, LLVMIntUGT, bytes, i64c(g, INT64_MAX - 64), ""), "");
  bytes = LLVMBuildAnd(g->b, LLVMBuildAdd(g->b, bytes, i64c(g, 64), ""), i64c(g, -64), "");
  LLVMBasicBlockRef try = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "alloc.try");
  LLVMBasicBlockRef okb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "alloc.ok");
  LLVMBasicBlockRef failb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "alloc.fail");
  LLVMBasicBlockRef bigb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "alloc.overflow");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "alloc.done");
  LLVMBuildCondBr(g->b, bad, bigb, try);
  LLVMPositionBuilderAtEnd(g->b, bigb);
  LLVMBuildStore(g->b, LLVMConstInt(g->i32, ERR_ALLOC_SIZE, 0), g->errp);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, try);
  LLVMTypeRef at[2] = {g->i64, g->i64};
  LLVMValueRef aargs[2] = {i64c(g, 64), bytes};
  LLVMValueRef p = call_fn(g, "aligned_alloc", g->ptr, at, 2, aargs);
  LLVMBuildCondBr(g->b, LLVMBuildIsNull(g->b, p, ""), failb, okb);
  LLVMPositionBuilderAtEnd(g->b, failb);
  LLVMBuildStore(g->b, LLVMConstInt(g->i32, ERR_ALLOC, 0), g->errp);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, okb);
  bind_buf(g, buf, p);
  emit_stmt(g, s->body);
  g->nbufs--;
  call_fn(g, "free", g->voidt, &g->ptr, 1, &p);
  LLVMBuildBr(g->b, done);
  LLVMPositionBuilderAtEnd(g->b, done);
}

/* S_CALL: `int callee(T *inputs..., T *outputs..., int64_t sizes...)`, the ABI of texc's
 * own kernels; a non-zero result sets ERR_EXTERN (the first error code stays). */
static void emit_extern_call(CG *g, Stmt *s) {
  int n = s->nbufs + s->nargs;
  LLVMTypeRef *t = xalloc(sizeof *t * (size_t)(n + 1));
  LLVMValueRef *a = xalloc(sizeof *a * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    t[i] = i < s->nbufs ? g->ptr : g->i64;
    a[i] = i < s->nbufs ? lookup_buf(g, s->bufs[i])->ptr : emit_expr(g, s->args[i - s->nbufs]);
  }
  LLVMValueRef rc = call_fn(g, s->callee, g->i32, t, n, a);
  LLVMValueRef err = LLVMBuildLoad2(g->b, g->i32, g->errp, "");
  LLVMValueRef fail = LLVMBuildAnd(g->b, LLVMBuildICmp(g->b, LLVMIntNE, rc, LLVMConstInt(g->i32, 0, 0), ""),
                                   LLVMBuildICmp(g->b, LLVMIntEQ, err, LLVMConstInt(g->i32, 0, 0), ""), "");
  LLVMBuildStore(g->b, LLVMBuildSelect(g->b, fail, LLVMConstInt(g->i32, ERR_EXTERN, 0), err, ""), g->errp);
}

/* Inside a vectorized body: run BODY on the lanes of MASK (and the enclosing mask), and
 * only when one of them is on, so that a uniform load in it (one address for all lanes)
 * is performed only when the serial loop would perform it. */
static void emit_masked(CG *g, LLVMValueRef mask, Stmt *body) {
  if (!body) return;
  LLVMValueRef outer;
  LLVMBasicBlockRef jb = lanes_on(g, mask, &outer);
  emit_stmt(g, body);
  LLVMBuildBr(g->b, jb);
  LLVMPositionBuilderAtEnd(g->b, jb);
  g->mask = outer;
}

/* Split the conjuncts of a guard C into those that test the vectorized var (*LANES, and-ed)
 * and the rest (*UNIFORM, and-ed): one branch for the latter, a mask for the former. */
static void split_guard(CG *g, Expr *c, Expr **uniform, Expr **lanes) {
  if (c->kind == E_BIN && c->op == OP_AND) {
    split_guard(g, c->a, uniform, lanes);
    split_guard(g, c->b, uniform, lanes);
    return;
  }
  Expr **side = ir_uses_var(c, g->vvar) ? lanes : uniform;
  *side = *side ? ir_bin(OP_AND, *side, c) : c;
}

static void emit_if(CG *g, Stmt *s) {
  if (g->lanes > 1 && ir_uses_var(s->cond, g->vvar)) {
    Expr *uniform = NULL, *lanes = NULL;
    if (!s->els) split_guard(g, s->cond, &uniform, &lanes);
    else lanes = s->cond;
    if (uniform) { /* if (uniform) { lanes masked } */
      Stmt inner = *s;
      inner.cond = lanes;
      Stmt outer = *s;
      outer.cond = uniform;
      outer.body = &inner;
      outer.els = NULL;
      emit_if(g, &outer);
      return;
    }
    LLVMValueRef m = emit_expr(g, lanes);
    emit_masked(g, m, s->body);
    if (s->els) emit_masked(g, LLVMBuildNot(g->b, m, ""), s->els);
    return;
  }
  LLVMValueRef c = emit_expr(g, s->cond);
  if (is_vec(c)) die("llvm codegen: a guard depends on a vectorized var");
  LLVMBasicBlockRef tb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "if.then");
  LLVMBasicBlockRef eb = s->els ? LLVMAppendBasicBlockInContext(g->ctx, g->fn, "if.else") : NULL;
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "if.end");
  LLVMBuildCondBr(g->b, c, tb, eb ? eb : jb);
  LLVMPositionBuilderAtEnd(g->b, tb);
  emit_stmt(g, s->body);
  LLVMBuildBr(g->b, jb);
  if (eb) {
    LLVMPositionBuilderAtEnd(g->b, eb);
    emit_stmt(g, s->els);
    LLVMBuildBr(g->b, jb);
  }
  LLVMPositionBuilderAtEnd(g->b, jb);
}

/* ---------------------------------------------------------- parallel loops */

/* What the outlined body of a parallel loop receives: every binding in scope. */
typedef struct Captures {
  LLVMTypeRef *types; /* begin, end, errp, buffers, vars, min */
  LLVMValueRef *vals;
  int n;
} Captures;

/* Constants are not passed: the body uses them as they are, so sizes and bounds that
 * are known stay known (and index math folds) inside outlined bodies. */
static void capture(Captures *c, LLVMTypeRef t, LLVMValueRef v) {
  if (v && LLVMIsConstant(v)) return;
  c->types[c->n] = t;
  c->vals[c->n++] = v;
}

static Captures collect_captures(CG *g, LLVMValueRef min) {
  int cap = 4 + g->nvars;
  cap += g->nbufs;
  Captures c = {xalloc(sizeof(LLVMTypeRef) * (size_t)cap), xalloc(sizeof(LLVMValueRef) * (size_t)cap), 0};
  capture(&c, g->i64, NULL); /* begin */
  capture(&c, g->i64, NULL); /* end */
  capture(&c, g->ptr, g->errp);
  for (int i = 0; i < g->nbufs; i++) capture(&c, g->ptr, g->bufs[i].ptr);
  for (int i = 0; i < g->nvars; i++) capture(&c, g->i64, g->vars[i].val);
  capture(&c, g->i64, min);
  return c;
}

static void add_attr(CG *g, LLVMValueRef fn, unsigned idx, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(g->ctx, kind, 0));
}

/* Start building function FN: an `allocas` block branching to a body block. */
static void begin_function(CG *g, LLVMValueRef fn) {
  g->fn = fn;
  g->allocas = LLVMAppendBasicBlockInContext(g->ctx, fn, "allocas");
  LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(g->ctx, fn, "start");
  LLVMPositionBuilderAtEnd(g->b, g->allocas);
  LLVMBuildBr(g->b, start);
  LLVMPositionBuilderAtEnd(g->b, start);
  add_attr(g, fn, LLVMAttributeFunctionIndex, "nounwind");
}

/* Inside an outlined body: the value of outer value V (a constant, or the next param). */
static LLVMValueRef captured(LLVMValueRef fn, int *p, LLVMValueRef v) {
  return LLVMIsConstant(v) ? v : LLVMGetParam(fn, (unsigned)(*p)++);
}

/* The outlined body: params as in C; rebinds every capture, loops over [begin, end). */
static LLVMValueRef build_body_fn(CG *g, Stmt *s, Captures *c, LLVMValueRef min_outer) {
  const char *name = xprintf("%s.body.%d", g->lf->name, ++g->nouts);
  LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->voidt, c->types, (unsigned)c->n, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  begin_function(g, fn);
  int p = 2, nbufs = g->nbufs, nvars = g->nvars;
  g->errp = LLVMGetParam(fn, p++);
  for (int i = 0; i < nbufs; i++) {
    add_attr(g, fn, (unsigned)p + 1, "noalias");
    bind_buf(g, g->bufs[i].buf, LLVMGetParam(fn, (unsigned)p++));
  }
  for (int i = 0; i < nvars; i++) bind_var(g, g->vars[i].var, captured(fn, &p, g->vars[i].val));
  LLVMValueRef min = captured(fn, &p, min_outer);
  LLVMValueRef begin = LLVMGetParam(fn, 0), end = LLVMGetParam(fn, 1);
  emit_loop(g, s->var, LLVMBuildAdd(g->b, min, begin, ""), LLVMBuildSub(g->b, end, begin, ""), s->body);
  LLVMBuildRetVoid(g->b);
  g->nbufs = nbufs;
  g->nvars = nvars;
  return fn;
}

/* The RtTask: unpacks the closure struct and calls the body. */
static LLVMValueRef build_task_fn(CG *g, LLVMValueRef body, Captures *c, LLVMTypeRef cty) {
  LLVMTypeRef pt[3] = {g->i64, g->i64, g->ptr};
  const char *name = xprintf("%s.task.%d", g->lf->name, g->nouts);
  LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->voidt, pt, 3, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  begin_function(g, fn);
  LLVMValueRef *args = xalloc(sizeof *args * (size_t)c->n);
  args[0] = LLVMGetParam(fn, 0);
  args[1] = LLVMGetParam(fn, 1);
  for (int i = 2; i < c->n; i++) {
    LLVMValueRef f = LLVMBuildStructGEP2(g->b, cty, LLVMGetParam(fn, 2), (unsigned)i, "");
    args[i] = LLVMBuildLoad2(g->b, c->types[i], f, "");
  }
  LLVMBuildCall2(g->b, LLVMGlobalGetValueType(body), body, args, (unsigned)c->n, "");
  LLVMBuildRetVoid(g->b);
  return fn;
}

/* A parallel loop: outline, fill the closure, call rt_parallel_for(extent, task, closure). */
static void emit_parallel(CG *g, Stmt *s, LLVMValueRef min, LLVMValueRef ext) {
  Captures c = collect_captures(g, min);
  LLVMTypeRef cty = LLVMStructTypeInContext(g->ctx, c.types, (unsigned)c.n, 0);
  LLVMValueRef closure = entry_alloca(g, cty, 8, "closure");
  for (int i = 2; i < c.n; i++)
    LLVMBuildStore(g->b, c.vals[i], LLVMBuildStructGEP2(g->b, cty, closure, (unsigned)i, ""));
  LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
  LLVMValueRef fn = g->fn, errp = g->errp;
  LLVMBasicBlockRef allocas = g->allocas;
  g->in_parallel++;
  LLVMValueRef body = build_body_fn(g, s, &c, min);
  g->in_parallel--;
  LLVMValueRef task = build_task_fn(g, body, &c, cty);
  g->fn = fn;
  g->errp = errp;
  g->allocas = allocas;
  LLVMPositionBuilderAtEnd(g->b, here);
  LLVMTypeRef pt[3] = {g->i64, g->ptr, g->ptr};
  LLVMValueRef args[3] = {ext, task, closure};
  call_fn(g, "rt_parallel_for", g->voidt, pt, 3, args);
}

static void emit_for(CG *g, Stmt *s) {
  LLVMValueRef min = emit_expr(g, s->min), ext = emit_expr(g, s->extent);
  int64_t n;
  bool konst = ir_is_const(s->extent, &n);
  switch (s->for_kind) {
  case FOR_PARALLEL:
    /* A parallel loop inside another runs serially in its thread: the pool is busy with
     * the outer loop already, and outlining twice would capture the outer function. */
    if (g->in_parallel) break;
    emit_parallel(g, s, min, ext);
    return;
  case FOR_VECTORIZE: {
    /* A width that is not a power of two (48 = 3 x 16 lanes: a register tile of three
     * vectors) as chunks of its largest power-of-two factor: LLVM scalarizes much of a
     * <48 x float> (a 1x1 convolution ran 30x slower). An odd width stays one vector. */
    int64_t p = konst ? n & -n : 0, chunk = p >= 2 && p != n ? p : n;
    if (konst && n >= 2 && n <= MAX_VECTOR_LANES && g->lanes <= 1 && vectorizable(s->body, s->var, (int)chunk)) {
      for (int64_t k = 0; k < n; k += chunk) emit_vector(g, s, k ? LLVMBuildAdd(g->b, min, i64c(g, k), "") : min, (int)chunk);
      return;
    }
    break;
  }
  case FOR_UNROLL:
    if (konst && n <= MAX_UNROLL) {
      for (int64_t k = 0; k < n; k++) {
        bind_var(g, s->var, LLVMBuildAdd(g->b, min, i64c(g, k), ""));
        emit_stmt(g, s->body);
        g->nvars--;
      }
      return;
    }
    break;
  default: break;
  }
  emit_loop(g, s->var, min, ext, s->body);
}

static void emit_stmt(CG *g, Stmt *s) {
  if (!s) return;
  switch (s->kind) {
  case S_FOR: emit_for(g, s); break;
  case S_STORE: emit_store(g, s); break;
  case S_ALLOC: emit_alloc(g, s); break;
  case S_IF: emit_if(g, s); break;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) emit_stmt(g, s->stmts[i]);
    break;
  case S_BARRIER: break; /* one thread per block on the CPU */
  case S_CALL: emit_extern_call(g, s); break;
  default: die("llvm codegen: bad statement kind %d", s->kind);
  }
}

/* ================================================================= symbols */


/* The symbol of kernel F in the module that G builds. Exported (g->sym_prefix NULL or
 * --prefix P): the name as written, or P + name, which check_exports has allowed. In the
 * JIT: `__texc_jit_NAME`, which no user name can be (they may not start with '_'), so
 * that a kernel named malloc neither binds to nor replaces the process's malloc. */
static const char *kernel_symbol(const CG *g, const LoweredFunc *f) {
  return g->sym_prefix ? xprintf("%s%s", g->sym_prefix, f->name) : f->name;
}

/* Are the names that FNS would export (with O's --prefix) usable as C symbols? An error at
 * each kernel whose name is not. */
static bool check_exports(LoweredFunc **fns, int n, const Options *o) {
  const char *p = o && o->prefix ? o->prefix : "";
  bool ident = (*p < '0' || *p > '9');
  for (const char *c = p; *c; c++)
    ident = ident && ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_');
  if (!ident) {
    diag_error((Loc){0}, "--prefix '%s' is not the start of a C identifier ([A-Za-z_][A-Za-z0-9_]*)", p);
    return false;
  }
  bool ok = true;
  for (int i = 0; i < n; i++) {
    const char *sym = xprintf("%s%s", p, fns[i]->name), *why = c_symbol_clash(sym);
    if (!why) continue;
    diag_error(fns[i]->loc, "kernel %s would be exported as %s, which is %s: rename the kernel, "
               "or prefix the exported names with --prefix P", fns[i]->name, sym, why);
    ok = false;
  }
  return ok;
}

/* ============================================================== functions */

/* `int F(T *params..., int64_t sizes...)`. */
static LLVMValueRef build_kernel(CG *g, const LoweredFunc *f) {
  int np = f->nparams + f->nsizes;
  LLVMTypeRef *pt = xalloc(sizeof *pt * (size_t)(np ? np : 1));
  for (int i = 0; i < np; i++) pt[i] = i < f->nparams ? g->ptr : g->i64;
  LLVMValueRef fn = LLVMAddFunction(g->mod, kernel_symbol(g, f), LLVMFunctionType(g->i32, pt, (unsigned)np, 0));
  g->lf = f;
  g->nvars = g->nbufs = g->lanes = 0;
  g->vvar = NULL;
  begin_function(g, fn);
  g->errp = entry_alloca(g, g->i32, 4, "err");
  LLVMBuildStore(g->b, LLVMConstInt(g->i32, 0, 0), g->errp);
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(g->ctx, fn, "bad.size");
  for (int j = 0; j < f->nsizes; j++) {
    LLVMValueRef v = LLVMGetParam(fn, (unsigned)(f->nparams + j));
    LLVMSetValueName2(v, f->sizes[j]->name, strlen(f->sizes[j]->name));
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(g->ctx, fn, "size.ok");
    /* outside 1..ARITH_SIZE_MAX, which every bounds proof assumes: (u64)(v - 1) >= MAX */
    LLVMValueRef off = LLVMBuildSub(g->b, v, i64c(g, 1), "");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntUGE, off, i64c(g, ARITH_SIZE_MAX), ""), bad, ok);
    LLVMPositionBuilderAtEnd(g->b, ok);
    bind_var(g, f->sizes[j], v);
  }
  for (int i = 0; i < f->nparams; i++) {
    LLVMValueRef v = LLVMGetParam(fn, (unsigned)i);
    LLVMSetValueName2(v, f->params[i]->name, strlen(f->params[i]->name));
    add_attr(g, fn, (unsigned)i + 1, "noalias");
    if (i < f->ninputs) add_attr(g, fn, (unsigned)i + 1, "readonly");
    bind_buf(g, f->params[i], v);
  }
  /* sched_lower's flat body is simplified before it is flattened; a hand-made function
   * is simplified here, before flattening too (a simplified flat offset would move
   * constants out of the row-major form, and the vectorizers like that form better) */
  emit_stmt(g, f->flat ? f->flat : ir_flatten(simplify_stmt(f->body)));
  LLVMBuildRet(g->b, LLVMBuildLoad2(g->b, g->i32, g->errp, ""));
  LLVMPositionBuilderAtEnd(g->b, bad);
  LLVMBuildRet(g->b, LLVMConstInt(g->i32, 1, 0));
  return fn;
}

/* `int __texc_packed_F(void **args, const int64_t *sizes)`. */
static void build_packed(CG *g, const LoweredFunc *f, LLVMValueRef kernel) {
  LLVMTypeRef pt[2] = {g->ptr, g->ptr};
  const char *name = xprintf("__texc_packed_%s", kernel_symbol(g, f));
  LLVMValueRef fn = LLVMAddFunction(g->mod, name, LLVMFunctionType(g->i32, pt, 2, 0));
  begin_function(g, fn);
  int np = f->nparams + f->nsizes;
  LLVMValueRef *args = xalloc(sizeof *args * (size_t)(np ? np : 1));
  for (int i = 0; i < np; i++) {
    bool isbuf = i < f->nparams;
    LLVMValueRef idx = i64c(g, isbuf ? i : i - f->nparams);
    LLVMTypeRef t = isbuf ? g->ptr : g->i64;
    LLVMValueRef p = LLVMBuildInBoundsGEP2(g->b, t, LLVMGetParam(fn, isbuf ? 0 : 1), &idx, 1, "");
    args[i] = LLVMBuildLoad2(g->b, t, p, "");
  }
  LLVMBuildRet(g->b, LLVMBuildCall2(g->b, LLVMGlobalGetValueType(kernel), kernel, args, (unsigned)np, ""));
}

/* `__texc_kernels`: "NAME NARGS NSIZES\n" per kernel. */
static void build_kernel_table(CG *g, LoweredFunc **fns, int n) {
  char *text = xstrdup("");
  for (int i = 0; i < n; i++) text = xprintf("%s%s %d %d\n", text, kernel_symbol(g, fns[i]), fns[i]->nparams, fns[i]->nsizes);
  LLVMValueRef s = LLVMConstStringInContext(g->ctx, text, (unsigned)strlen(text), 0);
  LLVMValueRef gv = LLVMAddGlobal(g->mod, LLVMTypeOf(s), "__texc_kernels");
  LLVMSetInitializer(gv, s);
  LLVMSetGlobalConstant(gv, 1);
}

static void cg_init_types(CG *g) {
  g->i1 = LLVMInt1TypeInContext(g->ctx);
  g->i8 = LLVMInt8TypeInContext(g->ctx);
  g->i16 = LLVMInt16TypeInContext(g->ctx);
  g->i32 = LLVMInt32TypeInContext(g->ctx);
  g->i64 = LLVMInt64TypeInContext(g->ctx);
  g->half = LLVMHalfTypeInContext(g->ctx);
  g->f32 = LLVMFloatTypeInContext(g->ctx);
  g->f64 = LLVMDoubleTypeInContext(g->ctx);
  g->ptr = LLVMPointerTypeInContext(g->ctx, 0);
  g->voidt = LLVMVoidTypeInContext(g->ctx);
}

/* ========================================================= target machine */

static void init_llvm(bool all) {
  static bool native, every;
  if (!native) {
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    native = true;
  }
  if (all && !every) {
    LLVMInitializeAllTargetInfos();
    LLVMInitializeAllTargets();
    LLVMInitializeAllTargetMCs();
    LLVMInitializeAllAsmPrinters();
    every = true;
  }
}

/* A target machine for O's triple and CPU (default: this host, its CPU and features). */
static LLVMTargetMachineRef make_target(const Options *o) {
  bool host = !o || !o->mtriple;
  init_llvm(!host);
  char *triple = host ? LLVMGetDefaultTargetTriple() : LLVMNormalizeTargetTriple(o->mtriple);
  char *cpu = o && o->mcpu ? strdup(o->mcpu) : host ? LLVMGetHostCPUName() : strdup("generic");
  char *features = host && !(o && o->mcpu) ? LLVMGetHostCPUFeatures() : strdup("");
  LLVMTargetRef target;
  char *err = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    diag_error((Loc){0}, "llvm: unknown target triple '%s': %s", triple, err);
    LLVMDisposeMessage(err);
  } else {
    int lvl = o ? o->opt_level : 3;
    LLVMCodeGenOptLevel cl = lvl <= 0 ? LLVMCodeGenLevelNone : lvl == 1 ? LLVMCodeGenLevelLess
                           : lvl == 2 ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelAggressive;
    tm = LLVMCreateTargetMachine(target, triple, cpu, features, cl, LLVMRelocPIC, LLVMCodeModelDefault);
  }
  LLVMDisposeMessage(triple);
  free(cpu); /* LLVM's messages are malloc'd */
  free(features);
  return tm;
}

/* x86 CPUs by LLVM name (--mcpu) with AVX-512 VNNI (and VL), and with AVX-VNNI only. */
static const char *const cpus_vnni512[] = {
    "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake", "rocketlake",
    "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "znver4", "znver5", NULL};
static const char *const cpus_vnni256[] = {"alderlake", "raptorlake", "meteorlake", "arrowlake", "arrowlake-s",
                                           "lunarlake", "gracemont", "sierraforest", "grandridge", NULL};
static bool in_list(const char *const *l, const char *s);
static bool has_feature(const char *f, const char *feature);

/* AArch64 CPUs by LLVM name (--mcpu) with the I8MM extension (usdot: Armv8.6-A and later,
 * and these earlier cores that have it). */
static const char *const cpus_i8mm[] = {
    "neoverse-v1", "neoverse-v2", "neoverse-v3", "neoverse-n2", "neoverse-n3", "neoverse-512tvb",
    "cortex-a510", "cortex-a520", "cortex-a710", "cortex-a715", "cortex-a720", "cortex-a725",
    "cortex-x2", "cortex-x3", "cortex-x4", "cortex-x925", "apple-a15", "apple-a16", "apple-a17",
    "apple-m2", "apple-m3", "apple-m4", "ampere1", "ampere1a", "ampere1b", "grace", NULL};

/* The i32 lanes of the four-byte dot product with LLVM's feature list F ("+avx512vnni,...",
 * "+neon,+i8mm,..."): 16 with AVX-512 VNNI, 8 with AVX-VNNI or VNNI and VL, 4 with
 * AArch64's I8MM (usdot); 0: none. */
static int feature_dot_lanes(const char *f) {
  if (has_feature(f, "+i8mm") && has_feature(f, "+neon")) return 4;
  if (has_feature(f, "+avx512vnni") && has_feature(f, "+avx512f")) return 16;
  return has_feature(f, "+avxvnni") || (has_feature(f, "+avx512vnni") && has_feature(f, "+avx512vl")) ? 8 : 0;
}

/* The i32 lanes of TM's four-byte dot product (CG.dot_lanes): from its features, else its
 * CPU's name; *ARM: it is usdot. */
static int dot_lanes(LLVMTargetMachineRef tm, bool *arm) {
  char *cpu = LLVMGetTargetMachineCPU(tm), *f = LLVMGetTargetMachineFeatureString(tm);
  char *triple = LLVMGetTargetMachineTriple(tm);
  int lanes = 0;
  *arm = !strncmp(triple, "aarch64", 7) || !strncmp(triple, "arm64", 5);
  if (*arm)
    lanes = (*f && has_feature(f, "+i8mm")) || in_list(cpus_i8mm, cpu) ? 4 : 0;
  else if (!strncmp(triple, "x86_64", 6))
    lanes = *f ? feature_dot_lanes(f) : in_list(cpus_vnni512, cpu) ? 16 : in_list(cpus_vnni256, cpu) ? 8 : 0;
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(f);
  LLVMDisposeMessage(triple);
  return lanes;
}

/* Build and optimize the module of FNS for TM, the kernels' symbols starting with
 * SYM_PREFIX (NULL: none; see kernel_symbol). NULL after a diagnostic. */
static LLVMModuleRef build_module(LLVMContextRef ctx, LoweredFunc **fns, int n, LLVMTargetMachineRef tm,
                                  const Options *o, const char *sym_prefix) {
  CG g = {0};
  g.sym_prefix = sym_prefix;
  g.ctx = ctx;
  g.mod = LLVMModuleCreateWithNameInContext("texc", ctx);
  g.b = LLVMCreateBuilderInContext(ctx);
  cg_init_types(&g);
  g.dot_lanes = dot_lanes(tm, &g.dot_arm);
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(g.mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(g.mod, dl);
  LLVMDisposeTargetData(dl);
  for (int i = 0; i < n; i++) {
    if (fns[i]->target != TARGET_LLVM) diag_warning((Loc){0}, "%s was lowered for %s", fns[i]->name, target_names[fns[i]->target]);
    LLVMValueRef k = build_kernel(&g, fns[i]);
    build_packed(&g, fns[i], k);
  }
  build_kernel_table(&g, fns, n);
  LLVMDisposeBuilder(g.b);
  free(g.vars);
  free(g.bufs);
  char *msg = NULL;
  if (LLVMVerifyModule(g.mod, LLVMReturnStatusAction, &msg)) {
    char *ir = LLVMPrintModuleToString(g.mod);
    fprintf(stderr, "%s\n", ir);
    die("llvm codegen made an invalid module: %s", msg);
  }
  LLVMDisposeMessage(msg);
  int lvl = o ? o->opt_level : 3;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, lvl >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(po, lvl >= 2);
  char pipeline[32];
  snprintf(pipeline, sizeof pipeline, "default<O%d>", lvl < 0 ? 0 : lvl > 3 ? 3 : lvl);
  LLVMErrorRef e = LLVMRunPasses(g.mod, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) {
    char *m = LLVMGetErrorMessage(e);
    diag_error((Loc){0}, "llvm passes: %s", m);
    LLVMDisposeErrorMessage(m);
    LLVMDisposeModule(g.mod);
    return NULL;
  }
  return g.mod;
}

/* ================================================================== build */

typedef struct JitModule {
  LLVMOrcLLJITRef jit;
} JitModule;

static void jit_destroy(RtModule *m) {
  JitModule *j = m->impl;
  if (j->jit) LLVMOrcDisposeLLJIT(j->jit);
  free(j);
}

static bool llvm_failed(LLVMErrorRef e, const char *what) {
  if (!e) return false;
  char *m = LLVMGetErrorMessage(e);
  fprintf(stderr, "texc: llvm %s: %s\n", what, m);
  LLVMDisposeErrorMessage(m);
  return true;
}

/* Make a JIT that sees this process's symbols (rt_parallel_for, libm) and holds OBJ. */
static LLVMOrcLLJITRef make_jit(LLVMMemoryBufferRef obj) {
  LLVMOrcLLJITRef jit;
  if (llvm_failed(LLVMOrcCreateLLJIT(&jit, NULL), "jit")) {
    LLVMDisposeMemoryBuffer(obj);
    return NULL;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  LLVMOrcDefinitionGeneratorRef gen;
  if (llvm_failed(LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL), "jit symbols")) {
    LLVMDisposeMemoryBuffer(obj);
    LLVMOrcDisposeLLJIT(jit);
    return NULL;
  }
  LLVMOrcJITDylibAddGenerator(jd, gen);
  if (llvm_failed(LLVMOrcLLJITAddObjectFile(jit, jd, obj), "jit object")) {
    LLVMOrcDisposeLLJIT(jit);
    return NULL;
  }
  return jit;
}

/* The JIT's kernels are __texc_jit_NAME (kernel_symbol). */
#define JIT_PREFIX "__texc_jit_"

/* Is every extern kernel that S calls a function of this process (loaded by --extern)?
 * An error at the call for each that is not: the JIT would fail without saying which. */
static bool externs_loaded(const Stmt *s) {
  if (!s) return true;
  bool ok = true;
  if (s->kind == S_CALL && !dlsym(RTLD_DEFAULT, s->callee)) {
    diag_error(s->loc, "extern kernel %s: no function of that name is loaded; give the library "
               "that defines it with --extern LIB.so", s->callee);
    ok = false;
  }
  ok &= externs_loaded(s->body);
  ok &= externs_loaded(s->els);
  for (int i = 0; i < s->n; i++) ok &= externs_loaded(s->stmts[i]);
  return ok;
}

static RtModule *llvm_build(LoweredFunc **fns, int n, const Options *o) {
  for (int i = 0; i < n; i++)
    if (!externs_loaded(fns[i]->body)) return NULL;
  Options host = o ? *o : (Options){.opt_level = 3};
  host.mtriple = NULL; /* the JIT runs here, whatever --mtriple said */
  LLVMTargetMachineRef tm = make_target(&host);
  if (!tm) return NULL;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = build_module(ctx, fns, n, tm, o, JIT_PREFIX);
  LLVMMemoryBufferRef obj = NULL;
  char *err = NULL;
  if (mod && LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &obj)) {
    fprintf(stderr, "texc: llvm: %s\n", err);
    LLVMDisposeMessage(err);
    obj = NULL;
  }
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  LLVMOrcLLJITRef jit = obj ? make_jit(obj) : NULL;
  if (!jit) return NULL;
  JitModule *jm = calloc(1, sizeof *jm);
  jm->jit = jit;
  RtModule *m = rt_module_new(jm, jit_destroy);
  for (int i = 0; i < n; i++) {
    LLVMOrcExecutorAddress addr;
    const char *sym = xprintf("__texc_packed_" JIT_PREFIX "%s", fns[i]->name);
    if (llvm_failed(LLVMOrcLLJITLookup(jit, &addr, sym), "lookup")) {
      rt_module_free(m);
      return NULL;
    }
    rt_module_add(m, rt_cpu_func(fns[i]->name, (RtPackedFn)(uintptr_t)addr, fns[i]->nparams, fns[i]->nsizes));
  }
  return m;
}

/* =================================================================== emit */

static const char *c_type(DType t) {
  static const char *const names[DT_COUNT] = {"uint8_t", "int8_t", "int16_t", "int32_t", "int64_t",
                                              "uint8_t", "uint32_t", "uint16_t", "float", "double"};
  return names[t];
}

/* A parameter's NAME as the header prints it: with '_' after it when it is a keyword of C
 * or C++, a name of the C library, a reserved one, or a macro or type stdint.h or the
 * program may define (NULL, EOF, INFINITY, I, *_MIN, *_MAX, *_t): `const float *int_`. */
static const char *header_param(const char *name) {
  static const char *const words[] = {
      "auto", "bool", "break", "case", "char", "class", "const", "continue", "default", "delete",
      "do", "double", "else", "enum", "extern", "false", "float", "for", "goto", "if", "inline",
      "int", "long", "namespace", "new", "operator", "private", "public", "protected",
      "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
      "switch", "template", "this", "true", "typedef", "union", "unsigned", "using", "virtual",
      "void", "volatile", "while", "NULL", "EOF", "INFINITY", "NAN", "HUGE_VAL", "I",
      "complex", "imaginary", "alignas", "alignof", "noreturn", "static_assert", "thread_local",
      "nullptr", "constexpr", "decltype", "mutable", "explicit", "friend", "throw", "try",
      "catch", "typename", "typeid", NULL};
  size_t n = strlen(name);
  bool bad = c_symbol_clash(name) != NULL;
  for (int i = 0; words[i] && !bad; i++) bad = strcmp(name, words[i]) == 0;
  if (n > 2 && strcmp(name + n - 2, "_t") == 0) bad = true;
  if (n > 4 && (strcmp(name + n - 4, "_MIN") == 0 || strcmp(name + n - 4, "_MAX") == 0)) bad = true;
  return bad ? xprintf("%s_", name) : name;
}

/* The extern calls of S, each callee once, into OUT (Stmt*). */
static void extern_calls(const Stmt *s, Vec *out) {
  if (!s) return;
  bool seen = false;
  for (int i = 0; s->kind == S_CALL && i < out->len; i++)
    seen |= strcmp(((const Stmt *)VEC_AT(*out, i))->callee, s->callee) == 0;
  if (s->kind == S_CALL && !seen) vec_push(out, (void *)s);
  extern_calls(s->body, out);
  extern_calls(s->els, out);
  for (int i = 0; i < s->n; i++) extern_calls(s->stmts[i], out);
}

/* The C prototypes of FNS (f16 as uint16_t, bool as uint8_t), exported as PREFIX + name;
 * then those of the extern kernels they call, which the program defines. */
static void write_header(FILE *f, LoweredFunc **fns, int n, const char *prefix) {
  fprintf(f, "/* Generated by texc %s: kernels of this library. Each returns 0, or non-zero\n"
             " * on a size outside 1..2^40 (RT_SIZE_MAX) or a failed allocation. */\n"
             "#pragma once\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", TEXC_VERSION);
  for (int i = 0; i < n; i++) {
    const LoweredFunc *fn = fns[i];
    const char *sym = xprintf("%s%s", prefix ? prefix : "", fn->name);
    fprintf(f, "int %s(", sym);
    for (int p = 0; p < fn->nparams; p++)
      fprintf(f, "%s%s%s *%s", p ? ", " : "", p < fn->ninputs ? "const " : "", c_type(fn->params[p]->dtype), header_param(fn->params[p]->name));
    for (int s = 0; s < fn->nsizes; s++) fprintf(f, "%sint64_t %s", fn->nparams + s ? ", " : "", header_param(fn->sizes[s]->name));
    if (!fn->nparams && !fn->nsizes) fprintf(f, "void");
    fprintf(f, ");\nint __texc_packed_%s(void **args, const int64_t *sizes);\n\n", sym);
  }
  Vec calls = {0};
  for (int i = 0; i < n; i++) extern_calls(fns[i]->body, &calls);
  if (calls.len) fprintf(f, "/* The extern kernels they call: the program defines them (0 on success). */\n");
  for (int i = 0; i < calls.len; i++) {
    const Stmt *c = VEC_AT(calls, i);
    int nin = c->nin;
    fprintf(f, "int %s(", c->callee);
    for (int j = 0; j < c->nbufs; j++)
      fprintf(f, "%s%s%s *", j ? ", " : "", j < nin ? "const " : "", c_type(c->bufs[j]->dtype));
    for (int s = 0; s < c->nargs; s++) fprintf(f, "%sint64_t", c->nbufs + s ? ", " : "");
    if (!c->nbufs && !c->nargs) fprintf(f, "void");
    fprintf(f, ");\n");
  }
  if (calls.len) fprintf(f, "\n");
  fprintf(f, "#ifdef __cplusplus\n}\n#endif\n");
}

/* The runtime archive to link `--emit so` against: $TEXC_RUNTIME, or libtexrt.a next to
 * (or up to two levels above) the running executable. */
const char *cg_runtime_archive(void) {
  const char *env = getenv("TEXC_RUNTIME");
  if (env) return env;
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return NULL;
  exe[len] = 0;
  for (int up = 0; up < 3; up++) {
    char *slash = strrchr(exe, '/');
    if (!slash) break;
    *slash = 0;
    const char *p = xprintf("%s/libtexrt.a", exe);
    if (access(p, R_OK) == 0) return p;
  }
  return NULL;
}

/* Run `cc -shared -o OUT OBJ RUNTIME -lm -lpthread`. */
static bool link_shared(const char *obj, const char *out) {
  const char *rt = cg_runtime_archive();
  if (!rt) {
    diag_error((Loc){0}, "--emit so: cannot find libtexrt.a (set TEXC_RUNTIME to its path)");
    return false;
  }
  /* $CC may carry flags ("cc -fsanitize=address"), as make's CC does: split it on blanks. */
  const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
  char *words = xstrdup(cc), *argv[32];
  int argc = 0;
  for (char *w = strtok(words, " \t"); w && argc < 24; w = strtok(NULL, " \t")) argv[argc++] = w;
  if (argc == 0) argv[argc++] = "cc";
  /* nodelete: the .so's thread pool outlives dlclose */
  const char *rest[] = {"-shared", "-Wl,-z,nodelete", "-o", out, obj, rt, "-lm", "-lpthread"};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) argv[argc++] = (char *)rest[i];
  argv[argc] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    _exit(127);
  }
  int st;
  if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
    diag_error((Loc){0}, "--emit so: linking with '%s' failed", cc);
    return false;
  }
  return true;
}

static bool write_buffer(LLVMMemoryBufferRef mb, const char *path) {
  FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
  if (!f) {
    diag_error((Loc){0}, "cannot write %s", path);
    return false;
  }
  fwrite(LLVMGetBufferStart(mb), 1, LLVMGetBufferSize(mb), f);
  if (f != stdout) fclose(f);
  else fflush(f);
  return true;
}

/* Emit machine code of MOD (asm or obj) to PATH; for "so", link it as well. */
static bool emit_machine(LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *kind, const char *path) {
  bool so = strcmp(kind, "so") == 0;
  LLVMMemoryBufferRef mb;
  char *err = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, strcmp(kind, "asm") ? LLVMObjectFile : LLVMAssemblyFile, &err, &mb)) {
    diag_error((Loc){0}, "llvm: %s", err);
    LLVMDisposeMessage(err);
    return false;
  }
  bool ok;
  if (!so) ok = write_buffer(mb, path);
  else {
    char tmp[] = "/tmp/texc-XXXXXX.o";
    int fd = mkstemps(tmp, 2);
    ok = fd >= 0;
    if (ok) {
      close(fd);
      ok = write_buffer(mb, tmp) && link_shared(tmp, path);
      unlink(tmp);
    } else diag_error((Loc){0}, "--emit so: cannot create a temporary file");
  }
  LLVMDisposeMemoryBuffer(mb);
  return ok;
}

static bool llvm_emit(LoweredFunc **fns, int n, const char *kind, const char *path, const Options *o) {
  if (!check_exports(fns, n, o)) return false;
  if (strcmp(kind, "header") == 0) {
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f) {
      diag_error((Loc){0}, "cannot write %s", path);
      return false;
    }
    write_header(f, fns, n, o ? o->prefix : NULL);
    if (f != stdout) fclose(f);
    return true;
  }
  bool ir = strcmp(kind, "llvm") == 0, mc = !strcmp(kind, "asm") || !strcmp(kind, "obj") || !strcmp(kind, "so");
  if (!ir && !mc) {
    diag_error((Loc){0}, "--emit %s does not apply to the llvm target (llvm, asm, obj, so, header)", kind);
    return false;
  }
  if (!strcmp(kind, "so") && !strcmp(path, "-")) {
    diag_error((Loc){0}, "--emit so needs an output file (-o FILE.so)");
    return false;
  }
  LLVMTargetMachineRef tm = make_target(o);
  if (!tm) return false;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = build_module(ctx, fns, n, tm, o, o ? o->prefix : NULL);
  bool ok = mod != NULL;
  /* Only a shared library is read through `__texc_kernels` (rt_module_load); in an object
   * it stays local, so that a program can link several of texc's objects (unless the object
   * is meant for such a library: Options.so_object). */
  bool global_table = !strcmp(kind, "so") || (o && o->so_object);
  LLVMValueRef table = ok && !global_table ? LLVMGetNamedGlobal(mod, "__texc_kernels") : NULL;
  if (table) LLVMSetLinkage(table, LLVMInternalLinkage);
  if (ok && ir) {
    char *text = LLVMPrintModuleToString(mod);
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    ok = f != NULL;
    if (f) fputs(text, f);
    if (f && f != stdout) fclose(f);
    if (!f) diag_error((Loc){0}, "cannot write %s", path);
    LLVMDisposeMessage(text);
  } else if (ok) ok = emit_machine(tm, mod, kind, path);
  if (mod) LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return ok;
}

/* Is FEATURE ("+avx2") in LLVM's comma-separated feature list F? */
static bool has_feature(const char *f, const char *feature) {
  size_t n = strlen(feature);
  for (const char *p = f; (p = strstr(p, feature)) != NULL; p += n)
    if ((p == f || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return true;
  return false;
}

/* One cache size of the host from sysfs (LEVEL, "Data" or "Unified"); 0 when unknown. */
static int64_t sysfs_cache(int level, bool data) {
  int64_t bytes = 0;
  for (int i = 0; i < 8 && !bytes; i++) {
    char path[96], line[64];
    int lv = 0;
    bool match = false;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    if (fgets(line, sizeof line, f)) lv = atoi(line);
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if ((f = fopen(path, "r")) && fgets(line, sizeof line, f))
      match = lv == level && (!strncmp(line, "Unified", 7) || (data && !strncmp(line, "Data", 4)));
    if (f) fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (match && (f = fopen(path, "r")) && fgets(line, sizeof line, f)) {
      char *end;
      long long v = strtoll(line, &end, 10);
      bytes = v * (*end == 'K' ? 1024 : *end == 'M' ? 1024 * 1024 : 1);
    }
    if (match && f) fclose(f);
  }
  return bytes;
}

/* x86 CPUs by LLVM name (--mcpu) with AVX-512 and with AVX2 + FMA; others: SSE2. */
static const char *const cpus_avx512[] = {
    "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
    "icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
    "graniterapids", "graniterapids-d", "znver4", "znver5", "x86-64-v4", "knl", "knm", NULL};
static const char *const cpus_avx2[] = {
    "haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake", "arrowlake",
    "lunarlake", "gracemont", "znver1", "znver2", "znver3", "bdver4", "x86-64-v3",
    "core-avx2", NULL};

static bool in_list(const char *const *l, const char *s) {
  for (int i = 0; l[i]; i++)
    if (!strcmp(l[i], s)) return true;
  return false;
}

void cpu_describe(CpuInfo *c) {
  if (c->lanes < 1) c->lanes = 1;
  if (c->vregs < 4) c->vregs = 4;
  int nv = c->lanes >= 6 ? 2 : 12 / c->lanes; /* a B panel of >= 12 floats, >= 2 vectors */
  if (nv < 2) nv = 2;
  int rows = 1; /* rows x nv accumulators, nv B vectors, one broadcast (x86) or A vector per
                   LANES rows (lane-indexed FMA) */
  while ((rows + 1) * nv + nv + (rows + c->lanes) / c->lanes <= c->vregs) rows++;
  c->mr = rows;
  c->nr = nv * c->lanes;
}

/* The CPU that --mcpu/--mtriple name (no host facts): architecture from the triple, vector
 * extensions from the CPU's name; caches typical of such a CPU. */
static void cross_cpu(const Options *o, CpuInfo *c) {
  char *host = o->mtriple ? NULL : LLVMGetDefaultTargetTriple();
  const char *t = o->mtriple ? o->mtriple : host;
  bool arm = !strncmp(t, "aarch64", 7) || !strncmp(t, "arm64", 5);
  bool x86 = !strncmp(t, "x86_64", 6) || (t[0] == 'i' && t[2] == '8' && t[3] == '6');
  const char *mcpu = o->mcpu ? o->mcpu : "";
  *c = (CpuInfo){.lanes = 4, .vregs = 16, .l1d = 32 << 10, .l2 = 512 << 10, .l3 = 16 << 20,
                 .cores = rt_num_threads(), .source = o->mcpu ? o->mcpu : o->mtriple};
  if (arm) { /* NEON: 32 x 128-bit, FMA */
    c->vregs = 32, c->fma = true, c->l2 = 1 << 20;
  } else if (x86 && in_list(cpus_avx512, mcpu)) {
    c->lanes = 16, c->vregs = 32, c->fma = true, c->l2 = 1 << 20;
  } else if (x86 && in_list(cpus_avx2, mcpu)) {
    c->lanes = 8, c->fma = true;
  }
  if (x86) c->dot_lanes = in_list(cpus_vnni512, mcpu) ? 16 : in_list(cpus_vnni256, mcpu) ? 8 : 0;
  if (arm) c->dot_lanes = in_list(cpus_i8mm, mcpu) ? 4 : 0;
  if (c->cores < 1) c->cores = 1;
  if (host) LLVMDisposeMessage(host);
}

/* The CPU that O compiles for into D->cpu: the host's (LLVM's host features, sysfs caches)
 * when there is no --mcpu or --mtriple (then true, with the widest vector register), else
 * the named CPU's (false: not a device here). */
static bool llvm_query(const Options *o, DeviceInfo *d) {
  if (o && ((o->mcpu && strcmp(o->mcpu, "native")) || o->mtriple)) {
    cross_cpu(o, &d->cpu);
    cpu_describe(&d->cpu);
    return false;
  }
  char *f = LLVMGetHostCPUFeatures();
  if (!f) return false;
  CpuInfo *c = &d->cpu;
  bool arm = has_feature(f, "+neon");
  *c = (CpuInfo){.lanes = 4, .vregs = arm || has_feature(f, "+avx512f") ? 32 : 16,
                 .fma = arm || has_feature(f, "+fma"), .l1d = sysfs_cache(1, true),
                 .l2 = sysfs_cache(2, false), .l3 = sysfs_cache(3, false),
                 .cores = rt_num_threads(), .source = "host"};
  static const struct {
    const char *feature;
    int bits;
  } widest[] = {{"+avx512f", 512}, {"+avx", 256}, {"+sse2", 128}, {"+neon", 128}};
  c->dot_lanes = feature_dot_lanes(f);
  d->vector_bits = 0;
  for (size_t i = 0; i < sizeof widest / sizeof widest[0] && !d->vector_bits; i++)
    if (has_feature(f, widest[i].feature)) d->vector_bits = widest[i].bits;
  if (d->vector_bits) c->lanes = d->vector_bits / 32;
  if (!c->l1d) c->l1d = 32 << 10;
  if (!c->l2) c->l2 = 512 << 10;
  if (!c->l3) c->l3 = 8 << 20;
  if (c->cores < 1) c->cores = 1;
  cpu_describe(c);
  LLVMDisposeMessage(f);
  return true;
}

const Backend backend_llvm = {
    .id = TARGET_LLVM,
    .name = "llvm",
    .device = DEVICE_CPU,
    .rt_device = RT_CPU,
    .allows_parallel = true,
    .allows_vectorize = true,
    .default_emit = "so",
    .query = llvm_query,
    .emit = llvm_emit,
    .build = llvm_build,
};
