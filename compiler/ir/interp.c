/* interp.c — the reference interpreter: the loop IR run on host memory.
 *
 * It is the reference every schedule is checked against, so it follows the IR's exact
 * semantics: floor division and modulo on signed integers, integer results wrapped to
 * their dtype as C does, f32 arithmetic in f32, f16 values stored as 16-bit halves and
 * rounded to half after every operation, bools stored as one byte. Every load and store
 * is bounds-checked per dimension; the first violation is reported and the run stops
 * (nothing outside a buffer is ever touched). So it runs FN->body, the multi-dimensional
 * form, never FN->flat: an index outside its dimension whose row-major offset is still
 * inside the buffer is an error here, and the offset is computed as the check goes.
 *
 * Speed: the IR is compiled once into a tree of closures (Node for expressions, SNode for
 * statements) with variables in pre-resolved integer slots and buffers in slots.
 * Affine index expressions (i64 sums of slot*constant) become one node. In a loop, the
 * accesses of the stores directly in its body that execute unconditionally (not under
 * an If or a select arm) and have affine indices are checked once at loop entry, at
 * both ends of the loop (each index is monotone in the loop variable), and are then
 * addressed as base + var*step with no per-iteration check; a loop whose body is one
 * f32 store `D = X + A*B` or `D = const` runs as a tight C loop. */
#include "texc.h"

#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct Node Node;
typedef struct SNode SNode;
typedef struct Ctx Ctx;
typedef int64_t (*IFn)(const Node *, Ctx *);
typedef float (*FFn)(const Node *, Ctx *);
typedef double (*DFn)(const Node *, Ctx *);
typedef void (*SFn)(const SNode *, Ctx *);

enum { MAX_AFF = 8 };

/* An affine i64 form: c + sum(coef[i] * slot[s[i]]). */
typedef struct Aff {
  int64_t c;
  int n;
  int s[MAX_AFF];
  int64_t coef[MAX_AFF];
} Aff;

/* One buffer while running: data, extents, row-major strides. */
typedef struct BufRt {
  char *data;
  int64_t *dims, *strides;
  int64_t numel;
} BufRt;

/* A load or store site. FAST is set while an enclosing fast loop runs: the flat offset
 * is then FBASE + slot[FSLOT] * FSTEP, already checked for the whole loop. */
typedef struct Access {
  const Buffer *b;
  int buf, ndim;
  bool is_store;
  Node **idx;
  Aff *aff; /* per dimension, or NULL when some index is not affine */
  bool fast;
  int fslot;
  int64_t fbase, fstep;
} Access;

/* An expression node. Its category (which fn member) follows its dtype: f32/f16 ->
 * f (float), f64 -> d (double), integers and bool -> i (int64, wrapped to the dtype). */
struct Node {
  union {
    IFn i;
    FFn f;
    DFn d;
  } fn;
  DType t, st; /* result dtype; source dtype of casts and comparisons */
  int op;
  int64_t k;
  float kf;
  double kd;
  Node *a, *b, *c;
  Access *acc;
  Aff aff;
};

/* Statement nodes: the comment on each run_* function says which fields it uses. */
enum { PAT_NONE, PAT_MULADD, PAT_FILL };
struct SNode {
  SFn fn;
  int slot;           /* for: loop variable; alloc: buffer slot */
  Node *min, *extent; /* for */
  Node **shape;       /* alloc */
  const Buffer *b;    /* alloc */
  Access *acc;        /* store */
  Node *value, *cond; /* store; if */
  SNode *body, *els;  /* for, alloc; if */
  SNode **stmts;      /* seq */
  int n;
  Access **fast;      /* fast for: the accesses checked at loop entry */
  int nfast;
  int pattern;        /* fast for with a single f32 store: PAT_* */
  Access *pa[4];      /* muladd: dst, x, a, b */
  void *ext;          /* extern call: the function; slot: first of n buffer slots in */
  int *bslot;         /* bslot[0..n), shape: its nsizes sizes */
  const char *callee;
};

struct Ctx {
  int64_t *slot;
  BufRt *bufs;
  int nbufs, nparams;
  jmp_buf fail;
};

static _Noreturn void stop(Ctx *c) { longjmp(c->fail, 1); }

/* ---- f16 ------------------------------------------------------------------- */

static float round16(float x) { return f16_to_f32(f32_to_f16(x)); }

/* ---- integer helpers ----------------------------------------------------------- */

/* i64 arithmetic wraps (LANGUAGE.md): affine forms are computed modulo 2^64, which gives
 * the value of the expression they come from, every + - * wrapped. */
static inline int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

static int64_t aff_eval(const Aff *a, const int64_t *slot) {
  int64_t v = a->c;
  for (int i = 0; i < a->n; i++) v = wadd(v, wmul(a->coef[i], slot[a->s[i]]));
  return v;
}

/* ---- memory access --------------------------------------------------------------- */

static _Noreturn void report_oob(const Access *a, Ctx *c) {
  BufRt *br = &c->bufs[a->buf];
  fprintf(stderr, "error: out-of-bounds %s of %s[", a->is_store ? "write" : "read", a->b->name);
  for (int d = 0; d < a->ndim; d++)
    fprintf(stderr, "%s%lld", d ? ", " : "", (long long)a->idx[d]->fn.i(a->idx[d], c));
  fputs("] (shape [", stderr);
  for (int d = 0; d < a->ndim; d++) fprintf(stderr, "%s%lld", d ? ", " : "", (long long)br->dims[d]);
  fputs("])\n", stderr);
  stop(c);
}

/* The flat offset of an access: checked per dimension, or the fast loop's form. */
static inline int64_t offset(const Access *a, Ctx *c) {
  if (a->fast) return wadd(a->fbase, wmul(c->slot[a->fslot], a->fstep));
  const BufRt *br = &c->bufs[a->buf];
  int64_t off = 0;
  for (int d = 0; d < a->ndim; d++) {
    int64_t i = a->idx[d]->fn.i(a->idx[d], c);
    if ((uint64_t)i >= (uint64_t)br->dims[d]) report_oob(a, c);
    off = off * br->dims[d] + i;
  }
  return off;
}

static int64_t load_int(DType t, const char *p) {
  switch (t) {
  case DT_BOOL: return *(const uint8_t *)p != 0;
  case DT_I8: return *(const int8_t *)p;
  case DT_I16: return *(const int16_t *)p;
  case DT_I32: return *(const int32_t *)p;
  case DT_I64: return *(const int64_t *)p;
  case DT_U8: return *(const uint8_t *)p;
  case DT_U32: return *(const uint32_t *)p;
  default: return 0;
  }
}

static void store_int(DType t, char *p, int64_t v) {
  switch (t) {
  case DT_BOOL: *(uint8_t *)p = v != 0; break;
  case DT_I8: *(int8_t *)p = (int8_t)v; break;
  case DT_I16: *(int16_t *)p = (int16_t)v; break;
  case DT_I32: *(int32_t *)p = (int32_t)v; break;
  case DT_I64: *(int64_t *)p = v; break;
  case DT_U8: *(uint8_t *)p = (uint8_t)v; break;
  case DT_U32: *(uint32_t *)p = (uint32_t)v; break;
  default: break;
  }
}

#define BUFDATA(c, a) ((c)->bufs[(a)->buf].data)

/* ---- integer nodes ------------------------------------------------------------------ */

static int64_t i_const(const Node *n, Ctx *c) { (void)c; return n->k; }
static int64_t i_slot(const Node *n, Ctx *c) { return c->slot[n->k]; }
static int64_t i_aff1(const Node *n, Ctx *c) { return wadd(n->aff.c, wmul(n->aff.coef[0], c->slot[n->aff.s[0]])); }
static int64_t i_aff2(const Node *n, Ctx *c) {
  return wadd(wadd(n->aff.c, wmul(n->aff.coef[0], c->slot[n->aff.s[0]])), wmul(n->aff.coef[1], c->slot[n->aff.s[1]]));
}
static int64_t i_aff(const Node *n, Ctx *c) { return aff_eval(&n->aff, c->slot); }
static int64_t i_load(const Node *n, Ctx *c) {
  int64_t off = offset(n->acc, c);
  return load_int(n->t, BUFDATA(c, n->acc) + off * dtype_bytes(n->t));
}

/* Integer arithmetic wrapped to the dtype; unsigned division is plain division. Division
 * and modulo are total (LANGUAGE.md): x / 0 == x % 0 == 0, as ir_int_floordiv. */
static int64_t int_arith(int op, DType t, int64_t x, int64_t y, Ctx *c) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  bool sgn = dtype_is_signed(t);
  switch (op) {
  case OP_ADD: return dtype_wrap(t, (int64_t)(ux + uy));
  case OP_SUB: return dtype_wrap(t, (int64_t)(ux - uy));
  case OP_MUL: return dtype_wrap(t, (int64_t)(ux * uy));
  case OP_DIV:
    if (!y) return 0;
    return dtype_wrap(t, sgn ? ir_int_floordiv(x, y) : (int64_t)(ux / uy));
  case OP_MOD:
    if (!y) return 0;
    return dtype_wrap(t, sgn ? ir_int_floormod(x, y) : (int64_t)(ux % uy));
  case OP_MIN: return x < y ? x : y;
  case OP_MAX: return x > y ? x : y;
  case OP_POW: return dtype_wrap(t, ir_int_pow(x, y, sgn));
  case OP_BAND: return x & y;
  case OP_BOR: return x | y;
  case OP_BXOR: return dtype_wrap(t, x ^ y);
  case OP_SHL: return dtype_wrap(t, (int64_t)(ux << (uy & (uint64_t)(dtype_bytes(t) * 8 - 1))));
  case OP_SHR: {
    unsigned k = (unsigned)(uy & (uint64_t)(dtype_bytes(t) * 8 - 1));
    return sgn ? x >> k : (int64_t)(ux >> k);
  }
  default: return 0;
  }
}

static int64_t i_bin(const Node *n, Ctx *c) {
  return int_arith(n->op, n->t, n->a->fn.i(n->a, c), n->b->fn.i(n->b, c), c);
}

static bool compare(int op, double x, double y) {
  switch (op) {
  case OP_EQ: return x == y;
  case OP_NE: return x != y;
  case OP_LT: return x < y;
  case OP_LE: return x <= y;
  case OP_GT: return x > y;
  default: return x >= y;
  }
}

static int64_t i_cmp_i(const Node *n, Ctx *c) {
  int64_t x = n->a->fn.i(n->a, c), y = n->b->fn.i(n->b, c);
  switch (n->op) {
  case OP_EQ: return x == y;
  case OP_NE: return x != y;
  case OP_LT: return x < y;
  case OP_LE: return x <= y;
  case OP_GT: return x > y;
  default: return x >= y;
  }
}
static int64_t i_cmp_f(const Node *n, Ctx *c) { return compare(n->op, n->a->fn.f(n->a, c), n->b->fn.f(n->b, c)); }
static int64_t i_cmp_d(const Node *n, Ctx *c) { return compare(n->op, n->a->fn.d(n->a, c), n->b->fn.d(n->b, c)); }
static int64_t i_and(const Node *n, Ctx *c) { return n->a->fn.i(n->a, c) && n->b->fn.i(n->b, c); }
static int64_t i_or(const Node *n, Ctx *c) { return n->a->fn.i(n->a, c) || n->b->fn.i(n->b, c); }
static int64_t i_not(const Node *n, Ctx *c) { return !n->a->fn.i(n->a, c); }
static int64_t i_neg(const Node *n, Ctx *c) { return dtype_wrap(n->t, (int64_t)(0 - (uint64_t)n->a->fn.i(n->a, c))); }
static int64_t i_select(const Node *n, Ctx *c) {
  return n->a->fn.i(n->a, c) ? n->b->fn.i(n->b, c) : n->c->fn.i(n->c, c);
}
static int64_t i_cast_i(const Node *n, Ctx *c) { return dtype_wrap(n->t, n->a->fn.i(n->a, c)); }

/* Float to integer as C converts, except that NaN and out-of-range values give 0
 * (undefined in C) rather than garbage. */
static int64_t from_double(DType t, double x) {
  if (t == DT_BOOL) return x != 0;
  if (!(x > -9.2e18 && x < 9.2e18)) return 0;
  return dtype_wrap(t, (int64_t)x);
}
static int64_t i_cast_f(const Node *n, Ctx *c) { return from_double(n->t, n->a->fn.f(n->a, c)); }
static int64_t i_cast_d(const Node *n, Ctx *c) { return from_double(n->t, n->a->fn.d(n->a, c)); }
static int64_t i_call(const Node *n, Ctx *c) {
  int64_t x = n->a->fn.i(n->a, c);
  if (n->op == FN_SIGN) return (x > 0) - (x < 0);
  return n->op == FN_ABS ? dtype_wrap(n->t, x < 0 ? (int64_t)(0 - (uint64_t)x) : x) : x;
}

/* ---- f32 (and f16) nodes ----------------------------------------------------------------- */

static float f_const(const Node *n, Ctx *c) { (void)c; return n->kf; }
static float f_load32(const Node *n, Ctx *c) {
  return ((const float *)BUFDATA(c, n->acc))[offset(n->acc, c)];
}
static float f_load16(const Node *n, Ctx *c) {
  return f16_to_f32(((const uint16_t *)BUFDATA(c, n->acc))[offset(n->acc, c)]);
}
static float f_add(const Node *n, Ctx *c) { return n->a->fn.f(n->a, c) + n->b->fn.f(n->b, c); }
static float f_sub(const Node *n, Ctx *c) { return n->a->fn.f(n->a, c) - n->b->fn.f(n->b, c); }
static float f_mul(const Node *n, Ctx *c) { return n->a->fn.f(n->a, c) * n->b->fn.f(n->b, c); }
static float f_div(const Node *n, Ctx *c) { return n->a->fn.f(n->a, c) / n->b->fn.f(n->b, c); }
/* x % y on floats: fmod moved into the divisor's sign, a zero too (numpy's mod). */
static float f_mod(const Node *n, Ctx *c) {
  float x = n->a->fn.f(n->a, c), y = n->b->fn.f(n->b, c), r = fmodf(x, y);
  return r == 0 ? copysignf(0.0f, y) : (r < 0) != (y < 0) ? r + y : r;
}
static float f_fmod(const Node *n, Ctx *c) { return fmodf(n->a->fn.f(n->a, c), n->b->fn.f(n->b, c)); }
static float f_atan2(const Node *n, Ctx *c) { return atan2f(n->a->fn.f(n->a, c), n->b->fn.f(n->b, c)); }
static float f_min(const Node *n, Ctx *c) {
  return fminf(n->a->fn.f(n->a, c), n->b->fn.f(n->b, c)); /* NaN: the other (LANGUAGE.md) */
}
static float f_max(const Node *n, Ctx *c) {
  return fmaxf(n->a->fn.f(n->a, c), n->b->fn.f(n->b, c));
}
static float f_pow(const Node *n, Ctx *c) { return powf(n->a->fn.f(n->a, c), n->b->fn.f(n->b, c)); }
static float f_neg(const Node *n, Ctx *c) { return -n->a->fn.f(n->a, c); }
static float f_select(const Node *n, Ctx *c) {
  return n->a->fn.i(n->a, c) ? n->b->fn.f(n->b, c) : n->c->fn.f(n->c, c);
}
static float f_round16(const Node *n, Ctx *c) { return round16(n->a->fn.f(n->a, c)); }
static float f_cast_i(const Node *n, Ctx *c) {
  int64_t x = n->a->fn.i(n->a, c);
  return dtype_is_signed(n->st) || n->st == DT_BOOL ? (float)x : (float)(uint64_t)x;
}
static float f_cast_d(const Node *n, Ctx *c) { return (float)n->a->fn.d(n->a, c); }

static float callf(int fn, float x) {
  switch (fn) {
  case FN_EXP: return expf(x);
  case FN_LOG: return logf(x);
  case FN_SQRT: return sqrtf(x);
  case FN_RSQRT: return 1.0f / sqrtf(x);
  case FN_TANH: return tanhf(x);
  case FN_SIGMOID: return 1.0f / (1.0f + expf(-x));
  case FN_ABS: return fabsf(x);
  case FN_FLOOR: return floorf(x);
  case FN_ERF: return erff(x);
  case FN_SIN: return sinf(x);
  case FN_COS: return cosf(x);
  case FN_TAN: return tanf(x);
  case FN_ASIN: return asinf(x);
  case FN_ACOS: return acosf(x);
  case FN_ATAN: return atanf(x);
  case FN_SINH: return sinhf(x);
  case FN_COSH: return coshf(x);
  case FN_ROUND: return nearbyintf(x);
  case FN_TRUNC: return truncf(x);
  case FN_SIGN: return x > 0 ? 1.0f : x < 0 ? -1.0f : x == 0 ? 0.0f : x;
  case FN_LOG2: return log2f(x);
  case FN_LOG1P: return log1pf(x);
  case FN_EXP2: return exp2f(x);
  case FN_EXPM1: return expm1f(x);
  default: return ceilf(x);
  }
}
static float f_call(const Node *n, Ctx *c) { return callf(n->op, n->a->fn.f(n->a, c)); }

/* ---- f64 nodes -------------------------------------------------------------------------- */

static double d_const(const Node *n, Ctx *c) { (void)c; return n->kd; }
static double d_load(const Node *n, Ctx *c) {
  return ((const double *)BUFDATA(c, n->acc))[offset(n->acc, c)];
}
static double d_bin(const Node *n, Ctx *c) {
  double x = n->a->fn.d(n->a, c), y = n->b->fn.d(n->b, c);
  switch (n->op) {
  case OP_ADD: return x + y;
  case OP_SUB: return x - y;
  case OP_MUL: return x * y;
  case OP_DIV: return x / y;
  case OP_MOD: {
    double r = fmod(x, y);
    return r == 0 ? copysign(0.0, y) : (r < 0) != (y < 0) ? r + y : r;
  }
  case OP_MIN: return fmin(x, y);
  case OP_MAX: return fmax(x, y);
  case OP_FMOD: return fmod(x, y);
  case OP_ATAN2: return atan2(x, y);
  default: return pow(x, y);
  }
}
static double d_neg(const Node *n, Ctx *c) { return -n->a->fn.d(n->a, c); }
static double d_select(const Node *n, Ctx *c) {
  return n->a->fn.i(n->a, c) ? n->b->fn.d(n->b, c) : n->c->fn.d(n->c, c);
}
static double d_cast_i(const Node *n, Ctx *c) {
  int64_t x = n->a->fn.i(n->a, c);
  return dtype_is_signed(n->st) || n->st == DT_BOOL ? (double)x : (double)(uint64_t)x;
}
static double d_cast_f(const Node *n, Ctx *c) { return n->a->fn.f(n->a, c); }
static double d_call(const Node *n, Ctx *c) {
  double x = n->a->fn.d(n->a, c);
  switch (n->op) {
  case FN_EXP: return exp(x);
  case FN_LOG: return log(x);
  case FN_SQRT: return sqrt(x);
  case FN_RSQRT: return 1.0 / sqrt(x);
  case FN_TANH: return tanh(x);
  case FN_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case FN_ABS: return fabs(x);
  case FN_FLOOR: return floor(x);
  case FN_ERF: return erf(x);
  case FN_SIN: return sin(x);
  case FN_COS: return cos(x);
  case FN_TAN: return tan(x);
  case FN_ASIN: return asin(x);
  case FN_ACOS: return acos(x);
  case FN_ATAN: return atan(x);
  case FN_SINH: return sinh(x);
  case FN_COSH: return cosh(x);
  case FN_ROUND: return nearbyint(x);
  case FN_TRUNC: return trunc(x);
  case FN_SIGN: return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x;
  case FN_LOG2: return log2(x);
  case FN_LOG1P: return log1p(x);
  case FN_EXP2: return exp2(x);
  case FN_EXPM1: return expm1(x);
  default: return ceil(x);
  }
}

/* ---- compiling expressions ------------------------------------------------------------------ */

/* Compilation state: variable and buffer slots. */
typedef struct Comp {
  const LoweredFunc *fn;
  Vec vars, bufs; /* IrVar* / Buffer* by slot */
  Vec allocs;     /* SNode* of every S_ALLOC, to free after a failed run */
  bool error;
} Comp;

typedef enum { CAT_I, CAT_F, CAT_D } Cat;
static Cat cat(DType t) { return t == DT_F32 || t == DT_F16 ? CAT_F : t == DT_F64 ? CAT_D : CAT_I; }

/* The latest slot of P (a buffer allocated twice resolves to the enclosing one). */
static int slot_of(Vec *v, const void *p) {
  for (int i = v->len - 1; i >= 0; i--)
    if (v->data[i] == p) return i;
  return -1;
}

static int var_slot(Comp *cp, IrVar *v) {
  int s = slot_of(&cp->vars, v);
  if (s < 0) {
    fprintf(stderr, "interp: variable %s is not bound\n", v->name);
    cp->error = true;
    return 0;
  }
  return s;
}

/* The affine form of an i64 expression over slots; false when it is not affine. */
static bool affine(Comp *cp, const Expr *e, Aff *out, int64_t k) {
  int64_t v;
  if (e->dtype != DT_I64) return false;
  switch (e->kind) {
  case E_INT: out->c = wadd(out->c, wmul(k, e->ival)); return true;
  case E_VAR: {
    int s = slot_of(&cp->vars, e->var);
    if (s < 0) return false;
    for (int i = 0; i < out->n; i++)
      if (out->s[i] == s) {
        out->coef[i] = wadd(out->coef[i], k);
        return true;
      }
    if (out->n == MAX_AFF) return false;
    out->s[out->n] = s;
    out->coef[out->n++] = k;
    return true;
  }
  case E_UN: return e->op == OP_NEG && affine(cp, e->a, out, wmul(k, -1));
  case E_BIN:
    if (e->op == OP_ADD) return affine(cp, e->a, out, k) && affine(cp, e->b, out, k);
    if (e->op == OP_SUB) return affine(cp, e->a, out, k) && affine(cp, e->b, out, wmul(k, -1));
    if (e->op == OP_MUL && ir_is_const(e->b, &v)) return affine(cp, e->a, out, wmul(k, v));
    if (e->op == OP_MUL && ir_is_const(e->a, &v)) return affine(cp, e->b, out, wmul(k, v));
    return false;
  default: return false;
  }
}

static Node *node(DType t) {
  Node *n = xalloc(sizeof *n);
  n->t = t;
  return n;
}

static Node *cx(Comp *cp, const Expr *e);

static Access *access(Comp *cp, const Buffer *b, Expr **args, int nargs, bool store) {
  Access *a = xalloc(sizeof *a);
  a->b = b;
  a->buf = slot_of(&cp->bufs, b);
  a->is_store = store;
  a->ndim = nargs;
  if (a->buf < 0 || nargs != b->ndim) {
    fprintf(stderr, "interp: buffer %s is not allocated here or wrongly indexed\n", b->name);
    cp->error = true;
    a->buf = 0;
  }
  a->idx = xalloc(sizeof(Node *) * (size_t)(nargs ? nargs : 1));
  a->aff = xalloc(sizeof(Aff) * (size_t)(nargs ? nargs : 1));
  bool aff = true;
  for (int d = 0; d < nargs; d++) {
    a->idx[d] = cx(cp, args[d]);
    aff = aff && affine(cp, args[d], &a->aff[d], 1);
  }
  if (!aff) a->aff = NULL;
  return a;
}

static Node *cx_int_leaf(Comp *cp, const Expr *e) {
  Node *n = node(e->dtype);
  Aff a = {0};
  if (e->kind == E_INT) {
    n->fn.i = i_const;
    n->k = dtype_wrap(e->dtype, e->ival);
  } else if (e->kind == E_VAR) {
    n->fn.i = i_slot;
    n->k = var_slot(cp, e->var);
  } else if (affine(cp, e, &a, 1)) {
    n->aff = a;
    n->fn.i = a.n == 0 ? i_const : a.n == 1 ? i_aff1 : a.n == 2 ? i_aff2 : i_aff;
    n->k = a.c;
  } else {
    return NULL;
  }
  return n;
}

static Node *cx_load(Comp *cp, const Expr *e) {
  Node *n = node(e->dtype);
  n->acc = access(cp, e->buf, e->args, e->nargs, false);
  switch (e->dtype) {
  case DT_F32: n->fn.f = f_load32; break;
  case DT_F16: n->fn.f = f_load16; break;
  case DT_F64: n->fn.d = d_load; break;
  default: n->fn.i = i_load; break;
  }
  return n;
}

/* f16 results are f32 operations rounded to half. */
static Node *round_if16(Node *n) {
  if (n->t != DT_F16) return n;
  Node *r = node(DT_F16);
  r->fn.f = f_round16;
  r->a = n;
  return r;
}

static Node *cx_bin(Comp *cp, const Expr *e) {
  Node *n = node(e->dtype);
  n->op = e->op;
  n->a = cx(cp, e->a);
  n->b = cx(cp, e->b);
  n->st = e->a->dtype;
  if (e->op >= OP_EQ && e->op <= OP_GE) {
    Cat k = cat(e->a->dtype);
    n->fn.i = k == CAT_I ? i_cmp_i : k == CAT_F ? i_cmp_f : i_cmp_d;
    return n;
  }
  if (e->op == OP_AND || e->op == OP_OR) {
    n->fn.i = e->op == OP_AND ? i_and : i_or;
    return n;
  }
  static const FFn ff[BINOP_COUNT] = {[OP_ADD] = f_add, [OP_SUB] = f_sub, [OP_MUL] = f_mul,
                                      [OP_DIV] = f_div, [OP_MOD] = f_mod, [OP_MIN] = f_min,
                                      [OP_MAX] = f_max, [OP_POW] = f_pow, [OP_FMOD] = f_fmod,
                                      [OP_ATAN2] = f_atan2};
  switch (cat(e->dtype)) {
  case CAT_I: n->fn.i = i_bin; return n;
  case CAT_D: n->fn.d = d_bin; return n;
  default: n->fn.f = ff[e->op]; return round_if16(n);
  }
}

static Node *cx_cast(Comp *cp, const Expr *e) {
  if (e->dtype == e->a->dtype) return cx(cp, e->a);
  Node *n = node(e->dtype);
  n->a = cx(cp, e->a);
  n->st = e->a->dtype;
  Cat from = cat(e->a->dtype);
  switch (cat(e->dtype)) {
  case CAT_I: n->fn.i = from == CAT_I ? i_cast_i : from == CAT_F ? i_cast_f : i_cast_d; return n;
  case CAT_D: n->fn.d = from == CAT_I ? d_cast_i : d_cast_f; return n;
  default:
    if (from == CAT_F) { /* f32 <-> f16: the value, rounded when the target is f16 */
      if (e->dtype == DT_F32) return n->a; /* f16 -> f32 is exact */
      n->fn.f = f_round16;
      return n;
    }
    n->fn.f = from == CAT_I ? f_cast_i : f_cast_d;
    return round_if16(n);
  }
}

static Node *cx(Comp *cp, const Expr *e) {
  Node *n;
  if (cat(e->dtype) == CAT_I && (n = cx_int_leaf(cp, e))) return n;
  switch (e->kind) {
  case E_FLOAT:
  case E_INT:
    n = node(e->dtype);
    if (cat(e->dtype) == CAT_D) n->fn.d = d_const, n->kd = e->kind == E_INT ? (double)e->ival : e->fval;
    else n->fn.f = f_const, n->kf = e->kind == E_INT ? (float)e->ival : (float)e->fval;
    if (e->dtype == DT_F16) n->kf = round16(n->kf);
    return n;
  case E_LOAD: return cx_load(cp, e);
  case E_BIN: return cx_bin(cp, e);
  case E_CAST: return cx_cast(cp, e);
  case E_UN:
    n = node(e->dtype);
    n->a = cx(cp, e->a);
    if (e->op == OP_NOT) n->fn.i = i_not;
    else if (cat(e->dtype) == CAT_I) n->fn.i = i_neg;
    else if (cat(e->dtype) == CAT_D) n->fn.d = d_neg;
    else n->fn.f = f_neg;
    return n;
  case E_SELECT:
    n = node(e->dtype);
    n->a = cx(cp, e->a);
    n->b = cx(cp, e->b);
    n->c = cx(cp, e->c);
    if (cat(e->dtype) == CAT_I) n->fn.i = i_select;
    else if (cat(e->dtype) == CAT_D) n->fn.d = d_select;
    else n->fn.f = f_select;
    return n;
  case E_CALL:
    n = node(e->dtype);
    n->op = e->op;
    n->a = cx(cp, e->args[0]);
    if (cat(e->dtype) == CAT_I) n->fn.i = i_call;
    else if (cat(e->dtype) == CAT_D) n->fn.d = d_call;
    else n->fn.f = f_call, n = round_if16(n);
    return n;
  default:
    fprintf(stderr, "interp: unsupported expression\n");
    cp->error = true;
    return cx(cp, ir_int(0));
  }
}

/* ---- statements ------------------------------------------------------------------------------ */

/* store: acc, value */
static void run_store(const SNode *s, Ctx *c) {
  const Access *a = s->acc;
  DType t = a->b->dtype;
  switch (t) {
  case DT_F32: {
    float v = s->value->fn.f(s->value, c);
    ((float *)BUFDATA(c, a))[offset(a, c)] = v;
    break;
  }
  case DT_F16: {
    float v = s->value->fn.f(s->value, c);
    ((uint16_t *)BUFDATA(c, a))[offset(a, c)] = f32_to_f16(v);
    break;
  }
  case DT_F64: {
    double v = s->value->fn.d(s->value, c);
    ((double *)BUFDATA(c, a))[offset(a, c)] = v;
    break;
  }
  default: {
    int64_t v = s->value->fn.i(s->value, c);
    store_int(t, BUFDATA(c, a) + offset(a, c) * dtype_bytes(t), v);
  }
  }
}

/* store of an f32 value: acc, value (the common case, without the dtype switch) */
static void run_store_f32(const SNode *s, Ctx *c) {
  float v = s->value->fn.f(s->value, c);
  ((float *)BUFDATA(c, s->acc))[offset(s->acc, c)] = v;
}

/* seq: stmts[0..n) */
static void run_seq(const SNode *s, Ctx *c) {
  for (int i = 0; i < s->n; i++) s->stmts[i]->fn(s->stmts[i], c);
}

/* if: cond, body, els */
static void run_if(const SNode *s, Ctx *c) {
  if (s->cond->fn.i(s->cond, c)) s->body->fn(s->body, c);
  else if (s->els) s->els->fn(s->els, c);
}

static void run_nop(const SNode *s, Ctx *c) { (void)s; (void)c; }

/* An extern kernel: int f(T *buffers..., int64_t sizes...). Pointers and int64_t travel
 * in the same integer registers and stack slots on the ABIs texc runs on (x86-64 SysV,
 * AArch64 AAPCS64), so the call passes every argument as an int64_t. */
enum { MAX_EXTERN_ARGS = 16 };
static int call_extern(void *f, const int64_t *a, int n) {
  switch (n) {
  case 0: return ((int (*)(void))f)();
  case 1: return ((int (*)(int64_t))f)(a[0]);
  case 2: return ((int (*)(int64_t, int64_t))f)(a[0], a[1]);
  case 3: return ((int (*)(int64_t, int64_t, int64_t))f)(a[0], a[1], a[2]);
  case 4: return ((int (*)(int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3]);
  case 5: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4]);
  case 6: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5]);
  case 7: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  case 8: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  case 9: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
  case 10: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
  case 11: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
  case 12: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
  case 13: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12]);
  case 14: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13]);
  case 15: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14]);
  case 16: return ((int (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t))f)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
  default: return -1;
  }
}

/* extern call: ext, bslot[0..n), shape[0..nfast) (sizes) */
static void run_extern(const SNode *s, Ctx *c) {
  int64_t a[MAX_EXTERN_ARGS];
  for (int i = 0; i < s->n; i++) a[i] = (int64_t)(intptr_t)c->bufs[s->bslot[i]].data;
  for (int i = 0; i < s->nfast; i++) a[s->n + i] = s->shape[i]->fn.i(s->shape[i], c);
  int rc = call_extern(s->ext, a, s->n + s->nfast);
  if (rc) {
    fprintf(stderr, "error: extern kernel %s returned %d\n", s->callee, rc);
    stop(c);
  }
}

/* for: slot, min, extent, body */
static void run_for(const SNode *s, Ctx *c) {
  int64_t lo = s->min->fn.i(s->min, c), n = s->extent->fn.i(s->extent, c);
  int64_t *v = &c->slot[s->slot];
  const SNode *body = s->body;
  for (int64_t i = 0; i < n; i++) {
    *v = wadd(lo, i);
    body->fn(body, c);
  }
}

/* Set up one access of a fast loop over slot S in [lo, lo + n): false when it would leave
 * its buffer somewhere in the loop (the slow path then reports where). */
static bool fast_setup(Access *a, Ctx *c, int s, int64_t lo, int64_t n) {
  const BufRt *br = &c->bufs[a->buf];
  int64_t save = c->slot[s], base = 0, step = 0;
  for (int d = 0; d < a->ndim; d++) {
    const Aff *f = &a->aff[d];
    int64_t k = 0;
    for (int i = 0; i < f->n; i++)
      if (f->s[i] == s) k = wadd(k, f->coef[i]);
    c->slot[s] = lo;
    int64_t first = aff_eval(f, c->slot), last, span;
    /* first .. last without a wrap between them: every index of the loop lies in between */
    bool wraps = __builtin_mul_overflow(k, n - 1, &span) || __builtin_add_overflow(first, span, &last);
    if (wraps || (uint64_t)first >= (uint64_t)br->dims[d] || (uint64_t)last >= (uint64_t)br->dims[d]) {
      c->slot[s] = save;
      return false;
    }
    base = wadd(base, wmul(br->strides[d], (int64_t)((uint64_t)first - (uint64_t)wmul(k, lo))));
    step = wadd(step, wmul(br->strides[d], k));
  }
  c->slot[s] = save;
  a->fbase = base;
  a->fstep = step;
  a->fslot = s;
  return true;
}

/* D[..] = X[..] + A[..]*B[..] in f32, all accesses strided: the matmul update. */
static void muladd_loop(const SNode *s, Ctx *c, int64_t lo, int64_t n) {
  Access *const *p = s->pa;
  float *d = (float *)BUFDATA(c, p[0]), *x = (float *)BUFDATA(c, p[1]);
  const float *a = (const float *)BUFDATA(c, p[2]), *b = (const float *)BUFDATA(c, p[3]);
  int64_t od = wadd(p[0]->fbase, wmul(lo, p[0]->fstep)), sd = p[0]->fstep;
  int64_t ox = wadd(p[1]->fbase, wmul(lo, p[1]->fstep)), sx = p[1]->fstep;
  int64_t oa = wadd(p[2]->fbase, wmul(lo, p[2]->fstep)), sa = p[2]->fstep;
  int64_t ob = wadd(p[3]->fbase, wmul(lo, p[3]->fstep)), sb = p[3]->fstep;
  for (int64_t i = 0; i < n; i++, od += sd, ox += sx, oa += sa, ob += sb) {
    float prod = a[oa] * b[ob];
    d[od] = x[ox] + prod;
  }
}

static void fill_loop(const SNode *s, Ctx *c, int64_t lo, int64_t n) {
  const Access *a = s->pa[0];
  float *d = (float *)BUFDATA(c, a), v = s->stmts[0]->value->kf;
  int64_t o = wadd(a->fbase, wmul(lo, a->fstep));
  for (int64_t i = 0; i < n; i++, o += a->fstep) d[o] = v;
}

/* fast for: slot, min, extent, body, fast[0..nfast), pattern, pa, stmts[0] (the store) */
static void run_fast_for(const SNode *s, Ctx *c) {
  int64_t lo = s->min->fn.i(s->min, c), n = s->extent->fn.i(s->extent, c);
  if (n <= 0) return;
  for (int i = 0; i < s->nfast; i++)
    if (!fast_setup(s->fast[i], c, s->slot, lo, n)) {
      run_for(s, c);
      return;
    }
  if (s->pattern == PAT_MULADD) {
    muladd_loop(s, c, lo, n);
    c->slot[s->slot] = wadd(lo, n - 1);
    return;
  }
  if (s->pattern == PAT_FILL) {
    fill_loop(s, c, lo, n);
    c->slot[s->slot] = wadd(lo, n - 1);
    return;
  }
  for (int i = 0; i < s->nfast; i++) s->fast[i]->fast = true;
  run_for(s, c);
  for (int i = 0; i < s->nfast; i++) s->fast[i]->fast = false;
}

static void set_strides(BufRt *br, int ndim) {
  int64_t st = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    br->strides[d] = st;
    st *= br->dims[d];
  }
}

/* Evaluate an alloc's shape, allocate zeroed memory, run the body, free. */
static void run_alloc(const SNode *s, Ctx *c) {
  BufRt *br = &c->bufs[s->slot];
  int64_t numel = 1;
  for (int d = 0; d < s->b->ndim; d++) {
    int64_t e = s->shape[d]->fn.i(s->shape[d], c);
    if (e < 0) e = 0;
    br->dims[d] = e;
    if (__builtin_mul_overflow(numel, e, &numel) || numel > INT64_MAX / 8) {
      fprintf(stderr, "error: cannot allocate %s: too many elements\n", s->b->name);
      stop(c);
    }
  }
  set_strides(br, s->b->ndim);
  br->numel = numel;
  br->data = calloc((size_t)(numel ? numel : 1), (size_t)dtype_bytes(s->b->dtype));
  if (!br->data) {
    fprintf(stderr, "error: cannot allocate %s (%lld elements)\n", s->b->name, (long long)numel);
    stop(c);
  }
  s->body->fn(s->body, c);
  free(br->data);
  br->data = NULL;
}

static SNode *snode(SFn fn) {
  SNode *s = xalloc(sizeof *s);
  s->fn = fn;
  return s;
}

static SNode *cs(Comp *cp, const Stmt *st);

/* Collect the loads of E that always execute when E does (not under a select's arms or
 * the right side of && / ||) and have affine indices. */
static void fast_loads(const Node *n, Vec *out) {
  if (!n) return;
  if (n->acc && n->acc->aff) vec_push(out, n->acc);
  if (n->fn.i == i_select || n->fn.f == f_select || n->fn.d == d_select) {
    fast_loads(n->a, out);
    return;
  }
  if (n->fn.i == i_and || n->fn.i == i_or) {
    fast_loads(n->a, out);
    return;
  }
  fast_loads(n->a, out);
  fast_loads(n->b, out);
  fast_loads(n->c, out);
}

static bool is_f32_load(const Node *n) { return n->fn.f == f_load32 && n->t == DT_F32 && n->acc->aff; }

/* Recognise D = X + A*B (either order) and D = constant over f32 buffers. */
static void find_pattern(SNode *loop, SNode *store) {
  Node *v = store->value;
  if (store->acc->b->dtype != DT_F32 || !store->acc->aff) return;
  if (v->fn.f == f_const && v->t == DT_F32) {
    loop->pattern = PAT_FILL;
    loop->pa[0] = store->acc;
    return;
  }
  if (v->fn.f != f_add || v->t != DT_F32) return;
  Node *x = v->a, *m = v->b;
  if (m->fn.f != f_mul) x = v->b, m = v->a;
  if (m->fn.f != f_mul || m->t != DT_F32 || !is_f32_load(x) || !is_f32_load(m->a) ||
      !is_f32_load(m->b))
    return;
  loop->pattern = PAT_MULADD;
  loop->pa[0] = store->acc;
  loop->pa[1] = x->acc;
  loop->pa[2] = m->a->acc;
  loop->pa[3] = m->b->acc;
}

static bool is_store(const SNode *s) { return s->fn == run_store || s->fn == run_store_f32; }

/* A loop hoists the bounds checks of the unconditional accesses of the stores directly in
 * its body (their indices can only use outer variables, fixed during the loop, and the
 * loop's own); stores under an If and statements in inner loops keep their own checks.
 * A loop whose body is one f32 store may match a tight pattern. */
static void try_fast(SNode *loop) {
  SNode *b = loop->body;
  SNode **list = b->fn == run_seq ? b->stmts : &loop->body;
  int n = b->fn == run_seq ? b->n : 1;
  Vec acc = {0};
  for (int i = 0; i < n; i++) {
    if (!is_store(list[i]) || !list[i]->acc->aff) continue;
    vec_push(&acc, list[i]->acc);
    fast_loads(list[i]->value, &acc);
  }
  if (acc.len == 0) return;
  loop->fn = run_fast_for;
  loop->fast = (Access **)acc.data;
  loop->nfast = acc.len;
  if (n == 1 && is_store(list[0])) {
    loop->stmts = list;
    find_pattern(loop, list[0]);
  }
}

static SNode *cs_for(Comp *cp, const Stmt *st) {
  SNode *s = snode(run_for);
  s->min = cx(cp, st->min);
  s->extent = cx(cp, st->extent);
  s->slot = slot_of(&cp->vars, st->var);
  if (s->slot < 0) {
    s->slot = cp->vars.len;
    vec_push(&cp->vars, st->var);
  }
  s->body = cs(cp, st->body);
  try_fast(s);
  return s;
}

static SNode *cs_alloc(Comp *cp, const Stmt *st) {
  SNode *s = snode(run_alloc);
  s->b = st->buf;
  s->shape = xalloc(sizeof(Node *) * (size_t)(st->buf->ndim ? st->buf->ndim : 1));
  for (int d = 0; d < st->buf->ndim; d++) s->shape[d] = cx(cp, st->buf->shape[d]);
  s->slot = cp->bufs.len;
  vec_push(&cp->bufs, st->buf);
  vec_push(&cp->allocs, s);
  s->body = cs(cp, st->body);
  return s;
}

/* An extern kernel's call: its function found among the process's symbols (the
 * libraries that `--extern` loaded). */
static SNode *cs_extern(Comp *cp, const Stmt *st) {
  SNode *s = snode(run_extern);
  s->callee = st->callee;
  s->ext = dlsym(RTLD_DEFAULT, st->callee);
  if (!s->ext) {
    fprintf(stderr, "error: extern kernel %s: no function of that name is loaded; give the library "
            "that defines it with --extern LIB.so\n", st->callee);
    cp->error = true;
  }
  if (st->nbufs + st->nargs > MAX_EXTERN_ARGS) {
    fprintf(stderr, "error: extern kernel %s: more than %d arguments (buffers and sizes)\n",
            st->callee, MAX_EXTERN_ARGS);
    cp->error = true;
  }
  s->n = st->nbufs;
  s->bslot = xalloc(sizeof(int) * (size_t)(st->nbufs + 1));
  for (int i = 0; i < st->nbufs; i++) {
    s->bslot[i] = slot_of(&cp->bufs, st->bufs[i]);
    if (s->bslot[i] < 0) {
      fprintf(stderr, "interp: buffer %s is not allocated\n", st->bufs[i]->name);
      cp->error = true;
      s->bslot[i] = 0;
    }
  }
  s->nfast = st->nargs;
  s->shape = xalloc(sizeof(Node *) * (size_t)(st->nargs + 1));
  for (int i = 0; i < st->nargs; i++) s->shape[i] = cx(cp, st->args[i]);
  return s;
}

static SNode *cs(Comp *cp, const Stmt *st) {
  SNode *s;
  if (!st) return snode(run_nop);
  switch (st->kind) {
  case S_FOR: return cs_for(cp, st);
  case S_ALLOC: return cs_alloc(cp, st);
  case S_STORE:
    s = snode(run_store);
    s->acc = access(cp, st->buf, st->args, st->nargs, true);
    s->value = cx(cp, st->value);
    if (st->buf->dtype == DT_F32) s->fn = run_store_f32;
    return s;
  case S_IF:
    s = snode(run_if);
    s->cond = cx(cp, st->cond);
    s->body = cs(cp, st->body);
    s->els = st->els ? cs(cp, st->els) : NULL;
    return s;
  case S_SEQ:
    s = snode(run_seq);
    s->n = st->n;
    s->stmts = xalloc(sizeof(SNode *) * (size_t)(st->n ? st->n : 1));
    for (int i = 0; i < st->n; i++) s->stmts[i] = cs(cp, st->stmts[i]);
    return s;
  case S_CALL: return cs_extern(cp, st);
  default: return snode(run_nop); /* barriers: loops run one after another */
  }
}

/* ---- running --------------------------------------------------------------------------------- */

/* Shapes of the parameters from the sizes; false (reported) for a negative extent. */
static bool bind_params(Comp *cp, Ctx *c, void **args) {
  for (int i = 0; i < cp->fn->nparams; i++) {
    const Buffer *b = cp->fn->params[i];
    BufRt *br = &c->bufs[i];
    int64_t numel = 1;
    for (int d = 0; d < b->ndim; d++) {
      Node *n = cx(cp, b->shape[d]);
      br->dims[d] = n->fn.i(n, c);
      if (br->dims[d] < 0) {
        fprintf(stderr, "error: %s has a negative extent\n", b->name);
        return false;
      }
      if (__builtin_mul_overflow(numel, br->dims[d], &numel)) {
        fprintf(stderr, "error: %s has too many elements\n", b->name);
        return false;
      }
    }
    set_strides(br, b->ndim);
    br->numel = numel;
    br->data = args[i];
  }
  return true;
}

int interp_run(const LoweredFunc *fn, void **args, const int64_t *sizes) {
  if (fn->nsizes > 0 && !sizes) {
    fprintf(stderr, "error: %s has symbolic sizes but none were given\n", fn->name);
    return 1;
  }
  Comp cp = {.fn = fn};
  for (int i = 0; i < fn->nsizes; i++) vec_push(&cp.vars, fn->sizes[i]);
  for (int i = 0; i < fn->nparams; i++) vec_push(&cp.bufs, fn->params[i]);
  SNode *root = cs(&cp, fn->body);
  if (cp.error) return 1;
  Ctx *c = calloc(1, sizeof *c);
  c->slot = calloc((size_t)cp.vars.len + 1, sizeof(int64_t));
  c->bufs = calloc((size_t)cp.bufs.len + 1, sizeof(BufRt));
  c->nbufs = cp.bufs.len;
  c->nparams = fn->nparams;
  for (int i = 0; i < cp.bufs.len; i++) {
    int nd = ((Buffer *)cp.bufs.data[i])->ndim;
    c->bufs[i].dims = xalloc(sizeof(int64_t) * (size_t)(nd + 1));
    c->bufs[i].strides = xalloc(sizeof(int64_t) * (size_t)(nd + 1));
  }
  for (int i = 0; i < fn->nsizes; i++) c->slot[i] = sizes[i];
  int rc = 1;
  if (bind_params(&cp, c, args)) {
    if (setjmp(c->fail) == 0) {
      root->fn(root, c);
      rc = 0;
    }
  }
  for (int i = fn->nparams; i < c->nbufs; i++) free(c->bufs[i].data);
  free(c->slot);
  free(c->bufs);
  free(c);
  return rc;
}
