/* compare.c — the one check of computed results against the reference interpreter's:
 * `texc run --check`, fuzz-schedule, the tuner's check and networks' --check; and
 * against a file, `texc run --expect REF.npy` (kernels and networks).
 *
 * Per output, two tests (both must pass):
 *   elementwise: integers and bools exactly; floats |got - ref| <= rtol*|ref| + atol*S,
 *     S = max(max |ref|, 1) over the output; NaN equals NaN, NaN against a number (or
 *     an infinity against anything but itself) is a mismatch; the first mismatching
 *     flat index is kept.
 *   norm: rel L2 = ||got - ref||_2 / ||ref||_2 <= l2tol, unless the RMS error is within
 *     atol (outputs near zero, where a relative norm means nothing). NaN pairs are left
 *     out of the norms.
 * The tolerances (docs/CLI.md): f16 rtol 1e-2, atol 1e-3, l2tol 1e-2; f32 1e-3, 1e-4,
 * 1e-4; f64 1e-9, 1e-10, 1e-10. Reordered float sums (tiling, rfactor, vectorized
 * reductions) stay well inside them; a wrong index or a missed point does not. An f64
 * output of a kernel that computes in f32 somewhere (a model's double result of a float
 * convolution) takes f32's: its sums were rounded in f32 (compare_dtype).
 */
#include "texc.h"

#include <math.h>
#include <string.h>

typedef struct Tol {
  double rtol, atol, l2;
} Tol;

static Tol tolerance(DType t) {
  switch (t) {
  case DT_F16: return (Tol){1e-2, 1e-3, 1e-2};
  case DT_F32: return (Tol){1e-3, 1e-4, 1e-4};
  case DT_F64: return (Tol){1e-9, 1e-10, 1e-10};
  default: return (Tol){0, 0, 0};
  }
}

static double fvalue(const void *p, DType t, int64_t i) {
  switch (t) {
  case DT_F16: return f16_to_f32(((const uint16_t *)p)[i]);
  case DT_F32: return ((const float *)p)[i];
  default: return ((const double *)p)[i];
  }
}

/* Integers and bools exactly: every stored value of these fits in an int64. */
static int64_t ivalue(const void *p, DType t, int64_t i) {
  switch (t) {
  case DT_BOOL: case DT_U8: return ((const uint8_t *)p)[i];
  case DT_I8: return ((const int8_t *)p)[i];
  case DT_I16: return ((const int16_t *)p)[i];
  case DT_I32: return ((const int32_t *)p)[i];
  case DT_U32: return ((const uint32_t *)p)[i];
  case DT_I64: return ((const int64_t *)p)[i];
  default: return 0;
  }
}

bool compare_values(const void *got, const void *ref, DType t, int64_t n, const char *name,
                    CompareResult *r) {
  return compare_values_as(got, ref, t, t, n, name, r);
}

bool compare_values_as(const void *got, const void *ref, DType t, DType precision, int64_t n, const char *name,
                       CompareResult *r) {
  Tol tol = tolerance(dtype_is_float(t) ? precision : t);
  bool fl = dtype_is_float(t);
  double scale = 1;
  for (int64_t i = 0; fl && i < n; i++) {
    double y = fvalue(ref, t, i);
    if (isfinite(y)) scale = fmax(scale, fabs(y));
  }
  double dd = 0, yy = 0, gx = 0, gy = 0; /* sums of squares: difference, reference */
  int64_t bad = -1;
  for (int64_t i = 0; i < n; i++) {
    double x, y, d;
    bool match;
    if (fl) {
      x = fvalue(got, t, i), y = fvalue(ref, t, i);
      if (isnan(x) && isnan(y)) continue;
      d = x == y ? 0 : fabs(x - y);
      if (isnan(d) || (d > 0 && (isinf(x) || isinf(y)))) d = INFINITY;
      match = d < INFINITY && d <= tol.rtol * fabs(y) + tol.atol * scale;
    } else {
      int64_t a = ivalue(got, t, i), b = ivalue(ref, t, i);
      match = a == b;
      x = (double)a, y = (double)b;
      d = match ? 0 : fabs((double)a - (double)b);
    }
    r->max_abs = fmax(r->max_abs, d);
    if (d > 0) r->max_rel = fmax(r->max_rel, d / fmax(fabs(y), 1e-30));
    dd += d * d;
    yy += y * y;
    if (!match && bad < 0) bad = i, gx = x, gy = y;
  }
  double l2 = dd == 0 ? 0 : yy > 0 ? sqrt(dd) / sqrt(yy) : INFINITY;
  if (isnan(l2)) l2 = INFINITY;
  r->rel_l2 = fmax(r->rel_l2, l2);
  bool norm_bad = l2 > tol.l2 && !(n > 0 && sqrt(dd / (double)n) <= tol.atol);
  if (bad < 0 && !norm_bad) return true;
  if (!r->failed) {
    r->failed = true;
    r->name = name;
    r->index = bad;
    r->got = gx;
    r->want = gy;
    r->l2 = l2;
    r->l2_threshold = tol.l2;
  }
  return false;
}

/* T, or U when U is a narrower float type. */
static DType narrower(DType t, DType u) { return dtype_is_float(u) && u < t ? u : t; }

/* The narrowest float type of expression E (DT_F64 when it has none). */
static DType narrowest_expr(const Expr *e) {
  if (!e) return DT_F64;
  DType t = narrower(DT_F64, e->dtype);
  if (e->kind == E_LOAD) t = narrower(t, e->buf->dtype);
  const Expr *sub[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3; i++) t = narrower(t, narrowest_expr(sub[i]));
  for (int i = 0; i < e->nargs; i++) t = narrower(t, narrowest_expr(e->args[i]));
  return t;
}

static DType narrowest_stmt(const Stmt *s) {
  if (!s) return DT_F64;
  const Expr *es[4] = {s->min, s->extent, s->value, s->cond};
  DType t = s->buf ? narrower(DT_F64, s->buf->dtype) : DT_F64;
  for (int i = 0; i < 4; i++) t = narrower(t, narrowest_expr(es[i]));
  for (int i = 0; i < s->nbufs; i++) t = narrower(t, s->bufs[i]->dtype);
  t = narrower(narrower(t, narrowest_stmt(s->body)), narrowest_stmt(s->els));
  for (int i = 0; i < s->n; i++) t = narrower(t, narrowest_stmt(s->stmts[i]));
  return t;
}

DType compare_dtype(const LoweredFunc *f, DType t) {
  if (t != DT_F64 || !f) return t;
  DType u = narrowest_stmt(f->body);
  for (int i = 0; i < f->nparams; i++) u = narrower(u, f->params[i]->dtype);
  return u;
}

bool compare_outputs(const LoweredFunc *f, void **got, void **ref, CompareResult *r) {
  memset(r, 0, sizeof *r);
  for (int i = f->ninputs; i < f->nparams; i++) {
    Buffer *b = f->params[i];
    int64_t n = ir_buffer_numel(b, f, NULL);
    if (n < 0) die("size of %s is not constant", b->name);
    compare_values_as(got[i], ref[i], b->dtype, compare_dtype(f, b->dtype), n, b->name, r);
  }
  return !r->failed;
}

char *compare_mismatch(const CompareResult *r) {
  if (!r->failed) return xstrdup("");
  if (r->index >= 0)
    return xprintf("%s at flat index %lld: got %g, expected %g", r->name, (long long)r->index, r->got, r->want);
  return xprintf("%s: rel L2 error %.3g above %.3g", r->name, r->l2, r->l2_threshold);
}

void compare_print_as(FILE *out, const char *what, const CompareResult *r) {
  if (r->failed) fprintf(out, "  MISMATCH in %s\n", compare_mismatch(r));
  fprintf(out, "  %s: max abs err %.3g, max rel err %.3g, rel L2 %.3g: %s\n", what, r->max_abs, r->max_rel,
          r->rel_l2, r->failed ? "FAILED" : "ok");
}

void compare_print(FILE *out, const CompareResult *r) { compare_print_as(out, "check", r); }
