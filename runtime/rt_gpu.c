/* rt_gpu.c — what the GPU back ends (rt_cuda.c, rt_opencl.c) share: plan copies and the
 * evaluation of launch extents. Apart from both, so that a CUDA network library
 * (compiler/deploy/) links no OpenCL and an OpenCL module no CUDA. */
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "rt_gpu.h"

/* ------------------------------------------------------------ plans */

int64_t rt_gpu_eval(const RtGpuExpr *e, const int64_t *sizes) {
  int64_t st[64];
  int sp = 0;
  if (e->n == 0) return 1;
  for (int i = 0; i < e->n; i++) {
    int64_t op = e->code[2 * i], arg = e->code[2 * i + 1];
    if (op == RPN_CONST || op == RPN_SIZE) {
      if (sp == 64) return -1;
      st[sp++] = op == RPN_CONST ? arg : sizes[arg];
      continue;
    }
    if (sp < 2) return -1;
    int64_t b = st[--sp], a = st[sp - 1], r;
    switch (op) { /* a result that overflows 64 bits is no result */
    case RPN_ADD: if (__builtin_add_overflow(a, b, &r)) return -1; break;
    case RPN_SUB: if (__builtin_sub_overflow(a, b, &r)) return -1; break;
    case RPN_MUL: if (__builtin_mul_overflow(a, b, &r)) return -1; break;
    case RPN_DIV:
    case RPN_MOD: {
      if (b == 0) return -1;
      int64_t q = a / b;
      if (a % b != 0 && ((a < 0) != (b < 0))) q--;
      r = op == RPN_DIV ? q : a - q * b;
      break;
    }
    case RPN_MIN: r = a < b ? a : b; break;
    case RPN_MAX: r = a > b ? a : b; break;
    default: return -1;
    }
    st[sp - 1] = r;
  }
  return sp == 1 ? st[0] : -1;
}

/* A bump allocator over one block; with BASE NULL it only measures. */
typedef struct Bump {
  char *base;
  size_t used;
} Bump;

static void *bump(Bump *b, const void *src, size_t n) {
  size_t at = (b->used + 15) & ~(size_t)15;
  b->used = at + n;
  if (!b->base) return NULL;
  if (src && n) memcpy(b->base + at, src, n);
  return b->base + at;
}

static const char *bump_str(Bump *b, const char *s) { return bump(b, s, strlen(s) + 1); }

static RtGpuExpr bump_expr(Bump *b, RtGpuExpr e) {
  e.code = bump(b, e.code, sizeof(int64_t) * 2 * (size_t)e.n);
  return e;
}

static void copy_plans(Bump *b, const RtGpuFunc *fns, int n, RtGpuFunc *out) {
  for (int i = 0; i < n; i++) {
    RtGpuFunc f = fns[i];
    f.name = bump_str(b, fns[i].name);
    f.temp_bytes = bump(b, NULL, sizeof(RtGpuExpr) * (size_t)f.ntemps);
    for (int t = 0; t < f.ntemps; t++) {
      RtGpuExpr e = bump_expr(b, fns[i].temp_bytes[t]);
      if (b->base) f.temp_bytes[t] = e;
    }
    f.kernels = bump(b, NULL, sizeof(RtGpuKernel) * (size_t)f.nkernels);
    for (int k = 0; k < f.nkernels; k++) {
      RtGpuKernel kk = fns[i].kernels[k];
      kk.name = bump_str(b, kk.name);
      for (int d = 0; d < 3; d++) {
        kk.grid[d] = bump_expr(b, kk.grid[d]);
        kk.block[d] = bump_expr(b, kk.block[d]);
      }
      kk.args = bump(b, kk.args, sizeof(int) * (size_t)kk.nargs);
      if (b->base) f.kernels[k] = kk;
    }
    if (out) out[i] = f;
  }
}

RtGpuFunc *rt_gpu_plans_copy(const RtGpuFunc *fns, int n) {
  Bump b = {0};
  bump(&b, NULL, sizeof(RtGpuFunc) * (size_t)n);
  copy_plans(&b, fns, n, NULL);
  size_t total = b.used;
  b = (Bump){malloc(total ? total : 1), 0};
  if (!b.base) return NULL;
  RtGpuFunc *out = bump(&b, NULL, sizeof(RtGpuFunc) * (size_t)n);
  copy_plans(&b, fns, n, out);
  return out;
}
