/* test_wire.c — the measure protocol's frames (compiler/dist/wire.c): header lines, a
 * round trip through a pipe, a broken frame, end of file and a timeout; an OpenCL
 * artifact's launch plan as header lines. */
#include "unit.h"
#include "dist/wire.h"
#include "rt_gpu.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_header(void) {
  WireText t = {0};
  wire_put(&t, "op", "measure");
  wire_put(&t, "arg", "f 4 2 %d %d", 3, 5);
  wire_put(&t, "arg", "o 4 1 7");
  wire_put(&t, "msg", "two\nlines");
  wire_put(&t, "repeat", "%d", 3);
  char v[64];
  check("wire: a key's value", wire_get(t.s, "op", v, sizeof v) && !strcmp(v, "measure"));
  check("wire: the second of a repeated key",
        wire_get_nth(t.s, "arg", 1, v, sizeof v) && !strcmp(v, "o 4 1 7"));
  check("wire: no third", !wire_get_nth(t.s, "arg", 2, v, sizeof v));
  check("wire: a newline in a value stays on its line",
        wire_get(t.s, "msg", v, sizeof v) && !strcmp(v, "two lines"));
  check("wire: a number, and the default of a missing key",
        wire_num(t.s, "repeat", 0) == 3 && wire_num(t.s, "nothing", -1) == -1);
  check("wire: a key is whole (op is not a prefix match of 'opx')", !wire_get("opx 1\n", "op", v, sizeof v));
  wire_text_free(&t);
}

static void test_frames(void) {
  int p[2];
  if (pipe(p)) return;
  unsigned char pl[1000];
  for (int i = 0; i < 1000; i++) pl[i] = (unsigned char)(i * 7);
  bool w = wire_write(p[1], "op run\nid 4\n", pl, sizeof pl) && wire_write(p[1], "op quit\n", NULL, 0);
  char *h, why[128];
  unsigned char *got;
  uint64_t n;
  int r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: a frame round trip (header and payload)",
        w && r == 1 && !strcmp(h, "op run\nid 4\n") && n == 1000 && !memcmp(got, pl, 1000));
  free(h), free(got);
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: an empty payload", r == 1 && n == 0 && !strcmp(h, "op quit\n"));
  free(h), free(got);
  check("wire: nothing to read is a timeout", wire_read(p[0], 0.05, &h, &got, &n, why, sizeof why) == -1);
  if (write(p[1], "HELLO, I AM A SH", 16) != 16) return; /* one header's worth */
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: bytes that are no frame are refused with a reason", r == 0 && strstr(why, "not a texc measure frame"));
  unsigned char big[16] = {'T', 'X', 'M', '1', 0xff, 0xff, 0xff, 0xff};
  if (write(p[1], big, 16) != 16) return;
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: a frame too large is refused", r == 0 && strstr(why, "too large"));
  if (write(p[1], "TXM1\0\0\0\x10", 8) != 8) return; /* cut off mid-frame */
  close(p[1]);
  r = wire_read(p[0], 1, &h, &got, &n, why, sizeof why);
  check("wire: a frame cut off by the end of the stream", r == 0 && strstr(why, "closed"));
  close(p[0]);
}

static bool same_expr(const RtGpuExpr *a, const RtGpuExpr *b) {
  return a->n == b->n && (a->n == 0 || !memcmp(a->code, b->code, sizeof(int64_t) * 2 * (size_t)a->n));
}

static bool same_plan(const RtGpuFunc *a, const RtGpuFunc *b) {
  bool ok = !strcmp(a->name, b->name) && a->nparams == b->nparams && a->nsizes == b->nsizes &&
            a->ntemps == b->ntemps && a->nkernels == b->nkernels;
  for (int t = 0; ok && t < a->ntemps; t++) ok = same_expr(&a->temp_bytes[t], &b->temp_bytes[t]);
  for (int k = 0; ok && k < a->nkernels; k++) {
    const RtGpuKernel *x = &a->kernels[k], *y = &b->kernels[k];
    ok = !strcmp(x->name, y->name) && x->nargs == y->nargs &&
         (x->nargs == 0 || !memcmp(x->args, y->args, sizeof(int) * (size_t)x->nargs));
    for (int d = 0; ok && d < 3; d++) ok = same_expr(&x->grid[d], &y->grid[d]) && same_expr(&x->block[d], &y->block[d]);
  }
  return ok;
}

static void test_gpu_plan(void) {
  int64_t c4[] = {RPN_CONST, 4}, csz[] = {RPN_SIZE, 0, RPN_CONST, 63, RPN_ADD, 0, RPN_CONST, 64, RPN_DIV, 0},
          cneg[] = {RPN_CONST, -3};
  RtGpuExpr one = {0, NULL}, four = {1, c4}, blocks = {5, csz}, neg = {1, cneg};
  RtGpuKernel ks[2] = {{"k0", {blocks, one, one}, {four, one, one}, 3, (int[]){0, 1, -1}},
                       {"k1_reduce", {four, four, one}, {neg, one, four}, 1, (int[]){2}}};
  RtGpuExpr temps[1] = {blocks};
  RtGpuFunc f = {"matmul", 2, 1, 1, 2, temps, ks}, g;
  WireText t = {0};
  wire_put(&t, "op", "measure");
  char why[128];
  bool put = wire_put_gpu_plan(&t, &f);
  check("wire: a launch plan round trip (temps, kernels, extents, size arguments)",
        put && wire_get_gpu_plan(t.s, &g, why, sizeof why) && same_plan(&f, &g));
  wire_free_gpu_plan(&g);
  char *cut = strstr(t.s, "gpu_extent 0\ngpu_extent 0\n"); /* from k0's grid y on, missing */
  if (cut) *cut = 0;
  check("wire: a launch plan with lines missing is refused with a reason",
        cut && !wire_get_gpu_plan(t.s, &g, why, sizeof why) && strstr(why, "malformed"));
  check("wire: a request without a plan says so",
        !wire_get_gpu_plan("op measure\n", &g, why, sizeof why) && strstr(why, "no launch plan"));
  wire_text_free(&t);
}

int main(void) {
  test_header();
  test_frames();
  test_gpu_plan();
  return failures != 0;
}
