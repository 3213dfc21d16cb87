/* test_compare.c — the one result check (compare.c): equal, within and outside the
 * tolerance of each float dtype, NaN and infinity cases, integers and bools exact, the
 * norm-based error, the first mismatching index, several outputs of one function. */
#include "unit.h"

#include <math.h>
#include <string.h>

static bool cmp_f32(const float *got, const float *ref, int64_t n, CompareResult *r) {
  memset(r, 0, sizeof *r);
  return compare_values(got, ref, DT_F32, n, "Y", r);
}

static void test_f32(void) {
  float ref[8] = {1, -2, 3.5f, 100, 0, 0.25f, -7, 8};
  float got[8];
  CompareResult r;
  memcpy(got, ref, sizeof got);
  check("f32: equal", cmp_f32(got, ref, 8, &r) && r.max_abs == 0 && r.max_rel == 0 && r.rel_l2 == 0);
  got[0] = 1.0005f; /* 5e-4 relative: inside rtol 1e-3 */
  check("f32: within the relative tolerance", cmp_f32(got, ref, 8, &r) && r.max_abs > 4e-4 && r.max_abs < 6e-4);
  check("f32: the norm error is reported", r.rel_l2 > 4e-6 && r.rel_l2 < 6e-6);
  got[0] = 1.02f; /* 2e-2 relative, 2e-2 absolute: outside rtol and atol * 100 */
  check("f32: outside the relative tolerance", !cmp_f32(got, ref, 8, &r) && r.failed && r.index == 0);
  check("f32: the mismatch names the output and index", strcmp(compare_mismatch(&r), "Y at flat index 0: got 1.02, expected 1") == 0);
  got[0] = 1;
  got[4] = 0.005f; /* atol 1e-4 * max|ref| = 0.01 for a zero reference (the norm: 5e-5) */
  check("f32: within the absolute tolerance at zero", cmp_f32(got, ref, 8, &r));
  got[4] = 0.02f;
  check("f32: outside the absolute tolerance at zero", !cmp_f32(got, ref, 8, &r) && r.index == 4);
  got[4] = 0;
  got[1] = -2.01f;
  got[6] = -8;
  check("f32: the first mismatching index is kept", !cmp_f32(got, ref, 8, &r) && r.index == 6);
}

static void test_nan_inf(void) {
  float ref[4] = {NAN, 1, INFINITY, 2};
  float got[4] = {NAN, 1, INFINITY, 2};
  CompareResult r;
  check("nan: NaN against NaN is equal", cmp_f32(got, ref, 4, &r) && r.max_abs == 0);
  got[1] = NAN;
  check("nan: NaN against a number is a mismatch", !cmp_f32(got, ref, 4, &r) && r.index == 1 && isinf(r.max_abs));
  got[1] = 1;
  got[0] = 3;
  check("nan: a number against NaN is a mismatch", !cmp_f32(got, ref, 4, &r) && r.index == 0);
  got[0] = NAN;
  got[2] = -INFINITY;
  check("inf: -inf against inf is a mismatch", !cmp_f32(got, ref, 4, &r) && r.index == 2);
  got[2] = 1e30f;
  check("inf: a finite value against inf is a mismatch", !cmp_f32(got, ref, 4, &r) && r.index == 2);
}

static void test_norm(void) {
  /* every value off by 8e-4 relative: each inside rtol 1e-3, the norm error 8e-4 is not
   * inside l2tol 1e-4 */
  enum { N = 64 };
  float ref[N], got[N];
  for (int i = 0; i < N; i++) ref[i] = (float)(1 + i % 5), got[i] = ref[i] * 1.0008f;
  CompareResult r;
  check("norm: elementwise inside, norm outside fails", !cmp_f32(got, ref, N, &r) && r.index == -1);
  check("norm: rel L2 is reported", fabs(r.rel_l2 - 8e-4) < 1e-5);
  check("norm: the mismatch says rel L2", strstr(compare_mismatch(&r), "Y: rel L2 error") != NULL);
  for (int i = 0; i < N; i++) got[i] = ref[i] * 1.00005f;
  check("norm: inside l2tol passes", cmp_f32(got, ref, N, &r) && r.rel_l2 > 4e-5 && r.rel_l2 < 6e-5);
  /* outputs near zero: the relative norm means nothing, the RMS error is within atol */
  for (int i = 0; i < N; i++) ref[i] = 1e-7f, got[i] = 2e-7f;
  check("norm: an RMS error within atol passes near zero", cmp_f32(got, ref, N, &r) && r.rel_l2 > 0.9);
  for (int i = 0; i < N; i++) ref[i] = 0, got[i] = 0;
  check("norm: all zero is equal", cmp_f32(got, ref, N, &r) && r.rel_l2 == 0);
}

static void test_other_floats(void) {
  double rd[3] = {1, 2, 3}, gd[3] = {1, 2, 3 + 1e-10};
  CompareResult r = {0};
  check("f64: within 1e-9", compare_values(gd, rd, DT_F64, 3, "D", &r));
  gd[2] = 3 + 1e-7;
  memset(&r, 0, sizeof r);
  check("f64: 3e-8 relative is outside", !compare_values(gd, rd, DT_F64, 3, "D", &r) && r.index == 2);
  uint16_t rh[2] = {f32_to_f16(1.0f), f32_to_f16(10.0f)}, gh[2] = {f32_to_f16(1.0f), f32_to_f16(10.05f)};
  memset(&r, 0, sizeof r);
  check("f16: 5e-3 relative is inside", compare_values(gh, rh, DT_F16, 2, "H", &r));
  gh[1] = f32_to_f16(10.5f);
  memset(&r, 0, sizeof r);
  check("f16: 5e-2 relative is outside", !compare_values(gh, rh, DT_F16, 2, "H", &r) && r.index == 1);
}

static void test_ints(void) {
  int32_t ri[3] = {5, -7, 1 << 30}, gi[3] = {5, -7, 1 << 30};
  CompareResult r = {0};
  check("i32: equal", compare_values(gi, ri, DT_I32, 3, "I", &r));
  gi[2] += 1; /* 1e-9 relative: a float tolerance would let it pass */
  memset(&r, 0, sizeof r);
  check("i32: exact, off by one fails", !compare_values(gi, ri, DT_I32, 3, "I", &r) && r.index == 2 && r.max_abs == 1);
  int64_t rl[2] = {INT64_MAX, 0}, gl[2] = {INT64_MAX - 1, 0};
  memset(&r, 0, sizeof r);
  check("i64: exact beyond double precision", !compare_values(gl, rl, DT_I64, 2, "L", &r) && r.index == 0);
  uint8_t rb[3] = {1, 0, 1}, gb[3] = {1, 0, 1};
  memset(&r, 0, sizeof r);
  check("bool: equal", compare_values(gb, rb, DT_BOOL, 3, "B", &r));
  gb[1] = 1;
  memset(&r, 0, sizeof r);
  check("bool: exact", !compare_values(gb, rb, DT_BOOL, 3, "B", &r) && r.index == 1);
  uint32_t ru[1] = {4000000000u}, gu[1] = {4000000000u};
  memset(&r, 0, sizeof r);
  check("u32: large values equal", compare_values(gu, ru, DT_U32, 1, "U", &r));
}

/* compare_outputs: every output of a function, the first failing one named. */
static void test_outputs(void) {
  Ast *a = parse_string("t.tex", "kernel t(A: f32[4]) -> (Y: f32[4], Z: i32[2]) {\n"
                                  "  Y[i] = A[i]\n  Z[i] = 1\n}\n");
  Program *p = a ? check_program(a, NULL, 0) : NULL;
  Kernel *k = p ? program_kernel(p, "t") : NULL;
  Schedule *s = k ? sched_new(k, TARGET_LLVM) : NULL;
  LoweredFunc *f = s ? sched_lower(s, NULL) : NULL;
  if (!f) {
    check("outputs: the kernel lowers", false);
    return;
  }
  float y0[4] = {1, 2, 3, 4}, y1[4] = {1, 2, 3, 4};
  int32_t z0[2] = {1, 1}, z1[2] = {1, 1};
  void *got[3] = {NULL, y1, z1}, *ref[3] = {NULL, y0, z0};
  CompareResult r;
  check("outputs: equal", compare_outputs(f, got, ref, &r));
  z1[1] = 2;
  check("outputs: the failing output is named", !compare_outputs(f, got, ref, &r) && strcmp(r.name, "Z") == 0 && r.index == 1);
  z1[1] = 1;
  check("outputs: the result is reset each call", compare_outputs(f, got, ref, &r) && !r.failed);
  FILE *tmp = tmpfile();
  char line[200] = "";
  compare_print(tmp, &r);
  rewind(tmp);
  check("outputs: the printed line", fgets(line, sizeof line, tmp) &&
        strcmp(line, "  check: max abs err 0, max rel err 0, rel L2 0: ok\n") == 0);
  fclose(tmp);
}

int main(void) {
  test_f32();
  test_nan_inf();
  test_norm();
  test_other_floats();
  test_ints();
  test_outputs();
  return failures != 0;
}
