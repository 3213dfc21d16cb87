/* kernel_io.c — `texc run KERNEL.tex --input A.npy ... --output C.npy ... --expect R.npy ...`:
 * a kernel's tensors from and to numpy's .npy files (read and written by onnx/tensor_io.c,
 * the one .npy reader and writer; networks' files are network_run.c's).
 *
 *   --input   the kernel's inputs in parameter order; an input without a file gets the
 *             random data of a plain `texc run`. A file's dtype and shape must be the
 *             parameter's after -D (no conversion): else an error naming the file, the
 *             parameter's type and the file's, and nothing runs or is written.
 *   --output  the outputs in order, each written as .npy of its dtype and shape; outputs
 *             after the last --output are not written.
 *   --expect  the outputs in order, each compared with compare_values (what --check uses)
 *             and its line printed as --check prints; exit 1 when one differs.
 *
 * The files are for one kernel: with several in FILE, --kernel picks it. A symbolic size
 * that no -D gives takes its value from the first --input whose dimension is that size
 * alone (`A: f32[N, K]` and a [4, 8] file: N = 4, K = 8); any other is an error asking
 * for -D, as a plain `texc run` gives.
 */
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

static bool any_files(const Cli *c) { return c->ninputs || c->noutputs || c->nexpects; }

/* The one kernel of P that --kernel selects (or the file's only one); NULL after an error. */
static Kernel *the_kernel(Cli *c, Program *p) {
  Kernel *k = NULL;
  int n = 0;
  char *names = xstrdup("");
  for (int i = 0; i < p->nkernels; i++) {
    if (!drv_selected(c, p->kernels[i])) continue;
    k = p->kernels[i];
    names = xprintf("%s%s%s", names, n++ ? ", " : "", k->name);
  }
  if (n == 1) return k;
  diag_error((Loc){0}, "--input, --output and --expect are for one kernel, and %s has %d (%s): pick one with --kernel K",
             c->file, n, names);
  return NULL;
}

/* N files of option OPT for the HAVE tensors (WHAT) of K? Else the error. */
static bool at_most(int n, const char *opt, const Kernel *k, int have, const char *what) {
  if (n <= have) return true;
  diag_error((Loc){0}, "%d %s files, but kernel %s has %d %s%s", n, opt, k->name, have, what, have == 1 ? "" : "s");
  return false;
}

bool kio_check(Cli *c, Program *p) {
  if (!any_files(c)) return true;
  Kernel *k = the_kernel(c, p);
  if (!k) return false;
  return at_most(c->ninputs, "--input", k, k->ninputs, "input") & at_most(c->noutputs, "--output", k, k->noutputs, "output") &
         at_most(c->nexpects, "--expect", k, k->noutputs, "output");
}

static bool defined(const Cli *c, const char *name) {
  for (int i = 0; i < c->ndefs; i++)
    if (!strcmp(c->defs[i].name, name)) return true;
  return false;
}

/* -D for every symbolic size of input buffer B that is one of its dimensions alone and has
 * no -D yet, from the file's SHAPE (when the ranks agree); how many were added. */
static int bind_from(Cli *c, const Buffer *b, const NpyArray *a) {
  int added = 0;
  for (int d = 0; a->ndim == b->ndim && d < b->ndim; d++) {
    const Expr *e = b->shape[d];
    if (e->kind != E_VAR || defined(c, e->var->name) || c->ndefs == MAX_DEFINES) continue;
    c->defs[c->ndefs++] = (Define){e->var->name, a->shape[d], false};
    added++;
  }
  return added;
}

Program *kio_bind_sizes(Cli *c, Program *p) {
  if (!c->ninputs) return p;
  Kernel *k = the_kernel(c, p);
  if (!k || !k->nsizes) return p;
  int added = 0;
  for (int i = 0; i < c->ninputs; i++) {
    NpyArray a;
    if (!npy_read_array(c->inputs[i], &a)) return NULL;
    added += bind_from(c, k->inputs[i], &a);
    free(a.data);
  }
  return added ? drv_load(c) : p; /* checked again, the sizes now constants */
}

/* B's type as the file's is written: "f32[2, 3]". */
static char *param_type_text(const Buffer *b) {
  char *s = xprintf("%s[", dtype_name(b->dtype));
  for (int d = 0; d < b->ndim; d++) {
    int64_t v;
    s = ir_is_const(b->shape[d], &v) ? xprintf("%s%s%lld", s, d ? ", " : "", (long long)v) : xprintf("%s%s?", s, d ? ", " : "");
  }
  return xprintf("%s]", s);
}

/* Does file A (PATH) hold parameter I of F, dtype and shape? Else an error naming both. */
static bool same_type(const LoweredFunc *f, int i, const NpyArray *a, const char *path) {
  const Buffer *b = f->params[i];
  bool same = a->dtype == b->dtype && a->ndim == b->ndim;
  for (int d = 0; same && d < b->ndim; d++) {
    int64_t v;
    same = ir_is_const(b->shape[d], &v) && v == a->shape[d];
  }
  if (!same)
    diag_error((Loc){0}, "%s: the file is %s, but %s %s of kernel %s is %s", path, npy_type_text(a),
               i < f->ninputs ? "input" : "output", b->name, f->name, param_type_text(b));
  return same;
}

bool kio_read_inputs(Cli *c, const LoweredFunc *f, void **args) {
  bool ok = true;
  for (int i = 0; i < c->ninputs; i++) {
    NpyArray a;
    if (!npy_read_array(c->inputs[i], &a)) {
      ok = false;
      continue;
    }
    if (same_type(f, i, &a, c->inputs[i])) memcpy(args[i], a.data, drv_param_bytes(f, i));
    else ok = false;
    free(a.data);
  }
  return ok;
}

/* Output J of F (ARGS) against --expect file J; prints its line. false: differs or reported. */
static bool expect_one(Cli *c, const LoweredFunc *f, void **args, int j) {
  int i = f->ninputs + j;
  NpyArray a;
  if (!npy_read_array(c->expects[j], &a)) return false;
  bool ok = same_type(f, i, &a, c->expects[j]);
  if (ok) {
    CompareResult r = {0};
    ok = compare_values_as(args[i], a.data, f->params[i]->dtype, compare_dtype(f, f->params[i]->dtype),
                           ir_buffer_numel(f->params[i], f, NULL), f->params[i]->name, &r);
    compare_print_as(stdout, xprintf("expect %s", c->expects[j]), &r);
  }
  free(a.data);
  return ok;
}

bool kio_write_outputs(Cli *c, const LoweredFunc *f, void **args) {
  bool ok = true;
  for (int j = 0; j < c->noutputs; j++) {
    const Buffer *b = f->params[f->ninputs + j];
    int64_t shape[HT_MAX_DIMS];
    if (b->ndim > HT_MAX_DIMS) {
      diag_error((Loc){0}, "%s: output %s has %d dimensions (a .npy file here: at most %d)", c->outputs[j], b->name,
                 b->ndim, HT_MAX_DIMS);
      ok = false;
      continue;
    }
    for (int d = 0; d < b->ndim; d++)
      if (!ir_is_const(b->shape[d], &shape[d])) die("size of %s is not constant", b->name);
    if (!npy_write_array(c->outputs[j], b->dtype, b->ndim, shape, args[f->ninputs + j])) ok = false;
  }
  for (int j = 0; j < c->nexpects; j++)
    if (!expect_one(c, f, args, j)) ok = false;
  return ok;
}
