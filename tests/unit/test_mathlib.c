/* test_mathlib.c — the reference interpreter's meaning of the math library and the integer
 * operators of LANGUAGE.md, on hand-picked values: round is half to even (numpy's round),
 * % on floats is numpy's mod, sign keeps NaN, shift counts are masked, ~ and << wrap at the
 * dtype's width, pow on integers wraps and truncates negative exponents. Every backend is
 * checked against the interpreter by tests/lit/lang. */
#include "texc.h"
#include "unit.h"

#include <math.h>
#include <string.h>

#define N 9

/* Kernel `k` of SRC on the interpreter (default schedule); ARGS: inputs then outputs. */
static bool run(const char *src, void **args) {
  Kernel *k = unit_kernel(src, "k");
  LoweredFunc *f = k ? sched_lower(sched_new(k, TARGET_LLVM), NULL) : NULL;
  return f && interp_run(f, args, NULL) == 0;
}

/* Same value, NaN equal to NaN, and the same sign of zero. */
static bool same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

/* Y = EXPR(X) in f64 over N values against WANT. */
static void f64_case(const char *name, const char *expr, const double *x, const double *want) {
  char *src = xprintf("kernel k(X: f64[%d]) -> Y: f64[%d] {\n  Y[i] = %s\n}\n", N, N, expr);
  double y[N];
  bool ok = run(src, (void *[]){(void *)x, y});
  for (int i = 0; ok && i < N; i++)
    if (!same(y[i], want[i])) {
      fprintf(stderr, "%s: at %g got %.17g, want %.17g\n", name, x[i], y[i], want[i]);
      ok = false;
    }
  check(name, ok);
}

static void test_round_sign(void) {
  double x[N] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999999999999996, 1e300, NAN};
  double r[N] = {0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, 1e300, NAN};
  f64_case("round is half to even", "round(X[i])", x, r);
  double s[N] = {1, 1, 1, -1, -1, -1, 1, 1, NAN};
  f64_case("sign is 1, -1, or NaN for NaN", "sign(X[i])", x, s);
  double z[N] = {0, -0.0, 3, -3, 0, 0, 0, 0, 0}, sz[N] = {0, 0, 1, -1, 0, 0, 0, 0, 0};
  f64_case("sign of a zero is 0", "sign(X[i])", z, sz);
  double t[N] = {0, 1, 2, -0.0, -1, -2, 2, 1e300, NAN};
  f64_case("trunc is toward zero", "trunc(X[i])", x, t);
}

/* Every function of one argument against C's libm, and the named constants of a few. */
static void test_libm(void) {
  double x[N] = {-0.9, -0.5, -0.1, 0.0, 0.1, 0.3, 0.5, 0.75, 0.99};
  static const struct {
    const char *name;
    double (*f)(double);
  } fns[] = {{"erf", erf},     {"sin", sin},     {"cos", cos},     {"tan", tan},   {"asin", asin},
             {"acos", acos},   {"atan", atan},   {"sinh", sinh},   {"cosh", cosh}, {"tanh", tanh},
             {"log2", log2},   {"log1p", log1p}, {"exp2", exp2},   {"expm1", expm1}, {"ceil", ceil},
             {"floor", floor}};
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
    double want[N];
    for (int i = 0; i < N; i++) want[i] = fns[k].f(x[i]);
    f64_case(xprintf("%s is libm's", fns[k].name), xprintf("%s(X[i])", fns[k].name), x, want);
  }
  double one[N] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, w[N];
  for (int i = 0; i < N; i++) w[i] = atan2(x[i], -1.0);
  f64_case("atan2(y, x) is libm's", "atan2(X[i], -1.0)", x, w);
  for (int i = 0; i < N; i++) w[i] = erf(one[i]);
  f64_case("erf(1)", "erf(X[i])", one, w);
}

/* x % y on floats is numpy's mod (the divisor's sign); fmod is C's. */
static void test_float_mod(void) {
  double x[N] = {-7, 7, 7, -7.5, 7.5, -5.5, 5.5, 6, -6};
  double m3[N] = {2, 1, 1, 1.5, 1.5, 0.5, 2.5, 0, 0}; /* a zero takes the divisor's sign too */
  f64_case("x % 3.0 has the divisor's sign", "X[i] % 3.0", x, m3);
  double mm3[N] = {-1, -2, -2, -1.5, -1.5, -2.5, -0.5, -0.0, -0.0};
  f64_case("x % -3.0 has the divisor's sign", "X[i] % -3.0", x, mm3);
  double f3[N] = {-1, 1, 1, -1.5, 1.5, -2.5, 2.5, 0, -0.0};
  f64_case("fmod(x, 3.0) has the dividend's sign", "fmod(X[i], 3.0)", x, f3);
  double inf[N] = {INFINITY, 7, 7, INFINITY, 7.5, INFINITY, 5.5, 6, INFINITY};
  f64_case("x % inf", "X[i] % inf", x, inf);
}

static void test_isnan(void) {
  double x[N] = {0, NAN, INFINITY, -INFINITY, 1, -1, 1e308, NAN, 0};
  double n[N] = {0, 1, 0, 0, 0, 0, 0, 1, 0}, i[N] = {0, 0, 1, 1, 0, 0, 0, 0, 0};
  f64_case("isnan", "isnan(X[i]) ? 1.0 : 0.0", x, n);
  f64_case("isinf", "isinf(X[i]) ? 1.0 : 0.0", x, i);
  double fin[N] = {0, 1, -1, 2, -2, 1e300, -1e300, 0.5, 3};
  double ninf[N] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                    -INFINITY, -INFINITY};
  f64_case("-inf", "-inf + X[i]", fin, ninf);
  double nan[N] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
  f64_case("nan", "X[i] * nan", fin, nan);
}

/* Y = EXPR(A, B) on dtype T (i8, i32, i64 or u8), values as int64. */
static void int_case(const char *name, const char *t, const char *expr, const int64_t *a,
                     const int64_t *b, const int64_t *want) {
  char *src = xprintf("kernel k(A: %s[%d], B: %s[%d]) -> Y: %s[%d] {\n  Y[i] = %s\n}\n", t, N, t, N,
                      t, N, expr);
  DType dt;
  dtype_parse(t, &dt);
  int sz = dtype_bytes(dt);
  char abuf[N * 8], bbuf[N * 8], ybuf[N * 8];
  for (int i = 0; i < N; i++) {
    memcpy(abuf + i * sz, &a[i], (size_t)sz); /* little-endian: the low bytes */
    memcpy(bbuf + i * sz, &b[i], (size_t)sz);
  }
  bool ok = run(src, (void *[]){abuf, bbuf, ybuf});
  for (int i = 0; ok && i < N; i++) {
    int64_t y = 0;
    memcpy(&y, ybuf + i * sz, (size_t)sz);
    y = dtype_wrap(dt, y);
    if (y != want[i]) {
      fprintf(stderr, "%s: at (%lld, %lld) got %lld, want %lld\n", name, (long long)a[i],
              (long long)b[i], (long long)y, (long long)want[i]);
      ok = false;
    }
  }
  check(name, ok);
}

static void test_bits(void) {
  int64_t a[N] = {1, -8, -8, 100, 5, -1, 12, 7, 3}, b[N] = {33, 1, 33, 1, -1, 31, 10, 0, -31};
  int64_t shl[N] = {2, -16, -16, 200, INT32_MIN, INT32_MIN, 12288, 7, 6};
  int_case("i32 << masks the count to 31", "i32", "A[i] << B[i]", a, b, shl);
  int64_t shr[N] = {0, -4, -4, 50, 0, -1, 0, 7, 1};
  int_case("i32 >> is arithmetic, the count masked", "i32", "A[i] >> B[i]", a, b, shr);
  int64_t shl8[N] = {2, -16, -16, -56, -128, -128, 48, 7, 6};
  int_case("i8 << wraps, the count masked to 7", "i8", "A[i] << B[i]", a, b, shl8);
  int64_t ua[N] = {200, 255, 1, 128, 5, 17, 12, 7, 3}, ub[N] = {9, 4, 7, 8, 3, 2, 10, 0, 1};
  int64_t shr8[N] = {100, 15, 0, 128, 0, 4, 3, 7, 1};
  int_case("u8 >> is logical, the count masked to 7", "u8", "A[i] >> B[i]", ua, ub, shr8);
  int64_t notu8[N] = {55, 0, 254, 127, 250, 238, 243, 248, 252};
  int_case("~ on u8", "u8", "~A[i] + B[i] * 0", ua, ub, notu8);
  int64_t mix[N];
  for (int i = 0; i < N; i++) mix[i] = (int64_t)(int32_t)((a[i] & b[i]) | (a[i] ^ ~b[i]));
  int_case("& | ^ ~", "i32", "A[i] & B[i] | A[i] ^ ~B[i]", a, b, mix);
  int64_t prec[N];
  for (int i = 0; i < N; i++) prec[i] = (int64_t)(int32_t)(a[i] | ((b[i] & 6) ^ 3));
  int_case("| binds looser than ^, ^ than &", "i32", "A[i] | B[i] & 6 ^ 3", a, b, prec);
}

static void test_ipow(void) {
  int64_t a[N] = {3, 2, -1, 2, 1, 0, 0, -3, 7}, b[N] = {100, 64, -3, -1, -5, -1, 0, 5, 21};
  uint64_t p3 = 1;
  for (int i = 0; i < 100; i++) p3 *= 3;
  uint64_t p7 = 1;
  for (int i = 0; i < 21; i++) p7 *= 7;
  int64_t want[N] = {(int64_t)p3, 0, -1, 0, 1, 0, 1, -243, (int64_t)p7};
  int_case("pow on i64 wraps; negative exponents truncate", "i64", "pow(A[i], B[i])", a, b, want);
  int64_t w8[N] = {(int8_t)p3, 0, -1, 0, 1, 0, 1, 13, (int8_t)p7};
  int_case("pow on i8 wraps at 8 bits", "i8", "pow(A[i], B[i])", a, b, w8);
}

/* The f32 functions on the interpreter are within 2e-6 relative (16 to 32 ulp) of the f64
 * ones at the same argument, on a grid over [-1, 1]: the bound tests/lit/lang/accuracy.tex
 * holds every backend to. */
static void test_accuracy(void) {
  enum { G = 2001 };
  static const char *const fns[] = {"erf",  "sin",  "cos",  "tan",   "asin",  "acos", "atan", "sinh",
                                    "cosh", "tanh", "exp",  "log1p", "expm1", "exp2", "log2", "sqrt"};
  static float x[G];
  static double y[G], ref[G];
  for (int i = 0; i < G; i++) x[i] = (float)(i - 1000) / 1000.0f;
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
    bool pos = !strcmp(fns[k], "log2") || !strcmp(fns[k], "sqrt");
    const char *arg = pos ? "(abs(X[i]) + 0.125)" : "X[i]";
    char *src = xprintf("kernel k(X: f32[%d]) -> (Y: f64[%d], R: f64[%d]) {\n  Y[i] = f64(%s(%s))\n"
                        "  R[i] = %s(f64(%s))\n}\n", G, G, G, fns[k], arg, fns[k], arg);
    bool ok = run(src, (void *[]){x, y, ref});
    for (int i = 0; ok && i < G; i++)
      if (y[i] != ref[i] && !(fabs(y[i] - ref[i]) <= 2e-6 * fabs(ref[i]) + 1e-30)) {
        fprintf(stderr, "%s(%g): f32 %.9g, f64 %.17g\n", fns[k], x[i], y[i], ref[i]);
        ok = false;
      }
    check(xprintf("f32 %s within 2e-6 of f64", fns[k]), ok);
  }
}

int main(void) {
  test_accuracy();
  test_round_sign();
  test_libm();
  test_float_mod();
  test_isnan();
  test_bits();
  test_ipow();
  return failures != 0;
}
