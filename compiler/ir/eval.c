/* eval.c — the integer semantics of the loop IR, written once: 64-bit two's-complement
 * wrapping + - *, floor division and modulo (x / 0 == 0, x % 0 == 0, INT_MIN / -1 ==
 * INT_MIN, INT_MIN % -1 == 0: every operation is total), values wrapped to their dtype. The
 * interpreter, constant folding (ir.c), the analyzer (arith/), the checker, the tuner's
 * features and its measurement sizes all compute integers with these. */
#include "texc.h"

int64_t ir_int_floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

int64_t ir_int_floormod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b; /* no overflow: b is neither 0 nor -1; |r| < |b| */
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

bool ir_int_apply(BinOp op, int64_t x, int64_t y, int64_t *out) {
  switch (op) {
  case OP_ADD: *out = (int64_t)((uint64_t)x + (uint64_t)y); return true;
  case OP_SUB: *out = (int64_t)((uint64_t)x - (uint64_t)y); return true;
  case OP_MUL: *out = (int64_t)((uint64_t)x * (uint64_t)y); return true;
  case OP_DIV: *out = ir_int_floordiv(x, y); return true;
  case OP_MOD: *out = ir_int_floormod(x, y); return true;
  case OP_MIN: *out = x < y ? x : y; return true;
  case OP_MAX: *out = x > y ? x : y; return true;
  case OP_EQ: *out = x == y; return true;
  case OP_NE: *out = x != y; return true;
  case OP_LT: *out = x < y; return true;
  case OP_LE: *out = x <= y; return true;
  case OP_GT: *out = x > y; return true;
  case OP_GE: *out = x >= y; return true;
  case OP_AND: *out = x && y; return true;
  case OP_OR: *out = x || y; return true;
  default: return false;
  }
}

bool ir_eval_int(const Expr *e, IrIntLeaf leaf, void *ctx, int64_t *out) {
  int64_t x, y;
  switch (e->kind) {
  case E_INT: *out = e->ival; return true;
  case E_BIN:
    if (!dtype_is_int(e->a->dtype) && e->a->dtype != DT_BOOL) break; /* a float operation */
    if (!ir_eval_int(e->a, leaf, ctx, &x) || !ir_eval_int(e->b, leaf, ctx, &y)) return false;
    if (!ir_int_apply((BinOp)e->op, x, y, out)) return false;
    *out = dtype_wrap(e->dtype, *out);
    return true;
  case E_UN:
    if (!ir_eval_int(e->a, leaf, ctx, &x)) return false;
    *out = e->op == OP_NOT ? !x : dtype_wrap(e->dtype, (int64_t)(0 - (uint64_t)x));
    return true;
  case E_CAST:
    if (!dtype_is_int(e->dtype) || !dtype_is_int(e->a->dtype)) break;
    if (!ir_eval_int(e->a, leaf, ctx, &x)) return false;
    *out = dtype_wrap(e->dtype, x);
    return true;
  case E_SELECT:
    if (!ir_eval_int(e->a, leaf, ctx, &x)) return false;
    return ir_eval_int(x ? e->b : e->c, leaf, ctx, out);
  default: break;
  }
  return leaf && leaf(e, ctx, out);
}


int64_t ir_int_pow(int64_t x, int64_t n, bool is_signed) {
  if (is_signed && n < 0) return x == 1 ? 1 : x == -1 ? (n & 1 ? -1 : 1) : 0;
  uint64_t r = 1, b = (uint64_t)x;
  for (uint64_t k = (uint64_t)n; k; k >>= 1, b *= b)
    if (k & 1) r *= b;
  return (int64_t)r;
}
