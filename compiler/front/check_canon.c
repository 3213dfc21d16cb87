/* check_canon.c — what names a workload: the canonical text of a kernel's compute DAG
 * (tensors, axes and sizes renamed by position; dtypes and shapes kept), its FNV-1a
 * hash, and the floating-point operation count of one call.
 */
#include "check_impl.h"

#include <stdlib.h>
#include <string.h>

/* Positional names: buffers in0.., out0.., t0..; sizes s0..; axes a0.., r0.. */
typedef struct Names {
  const void *key[256];
  const char *name[256];
  int n;
} Names;

static void name_add(Names *m, const void *key, const char *name) {
  if (m->n < 256) {
    m->key[m->n] = key;
    m->name[m->n++] = name;
  }
}

static const char *name_of(const Names *m, const void *key, const char *fallback) {
  for (int i = m->n - 1; i >= 0; i--)
    if (m->key[i] == key) return m->name[i];
  return fallback;
}

static void put_expr(FILE *f, const Expr *e, const Names *m);

static void put_args(FILE *f, Expr **args, int n, const Names *m) {
  for (int i = 0; i < n; i++) {
    if (i) fputc(',', f);
    put_expr(f, args[i], m);
  }
}

/* Fully parenthesised, dtypes on literals and casts. */
static void put_expr(FILE *f, const Expr *e, const Names *m) {
  if (!e) {
    fputs("?", f);
    return;
  }
  switch (e->kind) {
  case E_INT: fprintf(f, "%lld:%s", (long long)e->ival, dtype_name(e->dtype)); break;
  case E_FLOAT: fprintf(f, "%a:%s", e->fval, dtype_name(e->dtype)); break;
  case E_VAR: fputs(name_of(m, e->var, "?v"), f); break;
  case E_LOAD:
    fprintf(f, "%s[", name_of(m, e->buf, "?b"));
    put_args(f, e->args, e->nargs, m);
    fputc(']', f);
    break;
  case E_BIN:
    fprintf(f, "%s(", binop_names[e->op]);
    put_expr(f, e->a, m);
    fputc(',', f);
    put_expr(f, e->b, m);
    fputc(')', f);
    break;
  case E_UN:
    fputs(e->op == OP_NOT ? "!(" : "neg(", f);
    put_expr(f, e->a, m);
    fputc(')', f);
    break;
  case E_SELECT:
    fputs("select(", f);
    put_expr(f, e->a, m);
    fputc(',', f);
    put_expr(f, e->b, m);
    fputc(',', f);
    put_expr(f, e->c, m);
    fputc(')', f);
    break;
  case E_CALL:
    fprintf(f, "%s:%s(", callfn_names[e->op], dtype_name(e->dtype));
    put_args(f, e->args, e->nargs, m);
    fputc(')', f);
    break;
  case E_CAST:
    fprintf(f, "%s(", dtype_name(e->dtype));
    put_expr(f, e->a, m);
    fputc(')', f);
    break;
  default: fputs("?", f); break;
  }
}

static void put_buffer(FILE *f, const Buffer *b, const Names *m) {
  fprintf(f, "%s %s[", name_of(m, b, "?b"), dtype_name(b->dtype));
  put_args(f, b->shape, b->ndim, m);
  fputs("]\n", f);
}

static void put_op(FILE *f, const Op *op, Names *m) {
  int mark = m->n;
  for (int d = 0; d < op->ndim; d++) name_add(m, op->axes[d], xprintf("a%d", d));
  for (int r = 0; r < op->nred; r++) name_add(m, op->raxes[r], xprintf("r%d", r));
  fprintf(f, "%s %s", name_of(m, op->out, "?b"), op->rop ? reduceop_names[op->rop] : "=");
  if (op->ext) { /* an extern call's output: the function and its arguments */
    fprintf(f, " extern %s(", op->ext->callee);
    for (int i = 0; i < op->ext->nin + op->ext->nout; i++)
      fprintf(f, "%s%s", i ? ", " : "", name_of(m, op->ext->bufs[i], "?b"));
    fputc(')', f);
  }
  for (int r = 0; r < op->nred; r++) {
    fprintf(f, " r%d in [", r);
    put_expr(f, op->rmin[r], m);
    fputc(',', f);
    put_expr(f, op->rext[r], m);
    fputc(']', f);
  }
  for (int d = 0; op->scatter && d < op->ndim; d++) {
    if (!op->scatter[d]) continue;
    fprintf(f, " at%d [", d); /* a scatter's computed index */
    put_expr(f, op->scatter[d], m);
    fputc(']', f);
  }
  if (op->init) {
    fputs(" from [", f);
    put_expr(f, op->init, m);
    fputc(']', f);
  }
  if (op->rcond) {
    fputs(" where [", f);
    put_expr(f, op->rcond, m);
    fputc(']', f);
  }
  fputs(" : ", f);
  put_expr(f, op->value, m);
  fputc('\n', f);
  m->n = mark;
}

char *kernel_canonical(Kernel *k) {
  if (!k) return xstrdup("");
  Names *m = xalloc(sizeof *m);
  for (int i = 0; i < k->nsizes; i++) name_add(m, k->sizes[i], xprintf("s%d", i));
  for (int i = 0; i < k->ninputs; i++) name_add(m, k->inputs[i], xprintf("in%d", i));
  for (int i = 0; i < k->noutputs; i++) name_add(m, k->outputs[i], xprintf("out%d", i));
  for (int i = 0; i < k->ntemps; i++) name_add(m, k->temps[i], xprintf("t%d", i));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) die("open_memstream failed");
  for (int i = 0; i < k->ninputs; i++) put_buffer(f, k->inputs[i], m);
  for (int i = 0; i < k->noutputs; i++) put_buffer(f, k->outputs[i], m);
  for (int i = 0; i < k->ntemps; i++) put_buffer(f, k->temps[i], m);
  for (int i = 0; i < k->nops; i++) put_op(f, k->ops[i], m);
  fclose(f);
  char *out = xstrndup(text, len);
  free(text);
  return out;
}

uint64_t kernel_workload_key(Kernel *k) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char *p = (const unsigned char *)kernel_canonical(k); *p; p++) {
    h ^= *p;
    h *= 0x100000001b3ull;
  }
  return h;
}

/* Arithmetic operations in one evaluation of E: every operation on floats (comparisons
 * too), and the arithmetic of integers (+ - * / % min max pow, bitwise and shifts, negation,
 * calls) outside indices and conditions, so that a quantized model's integer kernels count
 * their multiply-adds as float kernels do (TVM's FLOP counts, and onnxruntime's, count them
 * so too); an index's or a border test's integers are addressing, not work. */
static double expr_ops(const Expr *e, bool index) {
  if (!e) return 0;
  bool args_index = index || e->kind == E_LOAD;
  double n = 0;
  for (int i = 0; i < e->nargs; i++) n += expr_ops(e->args[i], args_index);
  n += expr_ops(e->a, index || e->kind == E_SELECT) + expr_ops(e->b, index) + expr_ops(e->c, index);
  DType t = e->kind == E_BIN && e->a ? e->a->dtype : e->dtype;
  bool fl = dtype_is_float(t), in = !index && dtype_is_int(t);
  switch (e->kind) {
  case E_BIN:
    if (e->op == OP_AND || e->op == OP_OR) return n;
    if (fl) return n + 1;
    return n + (in && (e->op <= OP_MAX || e->op >= OP_POW));
  case E_UN: return n + (fl || (in && e->op == OP_NEG));
  case E_CALL: return n + (fl || in);
  default: return n;
  }
}

double kernel_flops(Kernel *k) {
  double total = 0;
  for (int i = 0; k && i < k->nops; i++) {
    Op *op = k->ops[i];
    double dom = 1;
    int64_t c;
    for (int d = 0; d < op->ndim; d++) {
      if (!ir_is_const(op->out->shape[d], &c)) return 0;
      dom *= (double)c;
    }
    for (int r = 0; r < op->nred; r++) {
      if (!ir_is_const(op->rext[r], &c)) return 0;
      dom *= (double)c;
    }
    double per = expr_ops(op->value, false) + (op->rop != RED_NONE && op->out->dtype != DT_BOOL);
    total += per * dom;
  }
  return total;
}
