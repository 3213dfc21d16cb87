/* gpu_default.c — the default GPU schedule, as steps of the language.
 *
 * For each stage (every op stays at the root, in global memory; nothing is inlined):
 *     C_f0 = fuse(C.i, C.j)          # chained over all spatial axes
 *     C_bx, C_tx = split(C_f0, 64)   # 64, or the extent when it is smaller
 *     bind(C_bx, blockIdx.x)
 *     bind(C_tx, threadIdx.x)
 * Reduction loops stay serial inside each thread. A stage with no spatial axis gets no
 * steps (gpu_check then says it is not bound).
 */
#include "texc.h"

static Ast *name_node(Loc loc, const char *name) {
  Ast *a = ast_new(A_NAME, loc);
  a->name = name;
  return a;
}

static Ast *member(Loc loc, const char *a, const char *b) {
  Ast *m = ast_new(A_MEMBER, loc);
  m->name = a;
  m->name2 = b;
  return m;
}

static Ast *int_node(Loc loc, int64_t v) {
  Ast *a = ast_new(A_INT, loc);
  a->ival = v;
  return a;
}

/* OUTS = FN(ARGS), each list NULL-terminated. */
static Ast *step(Loc loc, const char *fn, const char **outs, Ast **args) {
  Ast *s = ast_new(A_STEP, loc);
  s->name = fn;
  for (int i = 0; outs && outs[i]; i++) vec_push(&s->list, name_node(loc, outs[i]));
  for (int i = 0; args[i]; i++) vec_push(&s->list2, args[i]);
  return s;
}

/* The product of OP's output extents when all are constant, else -1. */
static int64_t spatial_extent(const Op *op) {
  int64_t n = 1, v;
  for (int d = 0; d < op->ndim; d++) {
    if ((op->is_scan && d == op->scan_dim) || (op->scatter && op->scatter[d])) continue;
    if (!ir_is_const(op->out->shape[d], &v)) return -1;
    n *= v;
  }
  return n;
}

static Ast *kwarg(Loc loc, const char *name, int64_t v) {
  Ast *a = ast_new(A_KWARG, loc);
  a->name = name;
  a->a = int_node(loc, v);
  return a;
}

/* A scan's default: its other axes as below, the scan axis last and serial in each
 * thread (reorder first when it is not last); a 1-d scan runs in one thread of one block
 * (`S_bx, S_t = split(S.i, parts = 1)`, S_bx bound). */
static bool scan_steps(const Op *op, Loc loc, Vec *steps) {
  if (!op->is_scan) return false;
  Ast *scan = member(loc, op->name, op->axes[op->scan_dim]->name);
  if (op->ndim == 1) {
    const char *bx = xprintf("%s_bx", op->name), *t = xprintf("%s_t", op->name);
    vec_push(steps, step(loc, "split", (const char *[]){bx, t, NULL},
                         (Ast *[]){scan, kwarg(loc, "parts", 1), NULL}));
    vec_push(steps, step(loc, "bind", NULL,
                         (Ast *[]){name_node(loc, bx), member(loc, "blockIdx", "x"), NULL}));
    return true;
  }
  if (op->scan_dim == op->ndim - 1) return false;
  Ast **order = xalloc(sizeof(Ast *) * (size_t)(op->ndim + 1));
  int n = 0;
  for (int d = 0; d < op->ndim; d++)
    if (d != op->scan_dim) order[n++] = member(loc, op->name, op->axes[d]->name);
  order[n++] = scan;
  order[n] = NULL;
  vec_push(steps, step(loc, "reorder", NULL, order));
  return false;
}

/* A scatter with no plain axis (H[A[i]] += 1) runs in one thread of one block:
 * `H_bx, H_r = split(H.i, parts = 1)`, H_bx bound. */
static bool scatter_steps(const Op *op, Loc loc, Vec *steps) {
  if (!op->scatter) return false;
  for (int d = 0; d < op->ndim; d++)
    if (!op->scatter[d]) return false;
  if (op->nred == 0) return true;
  const char *bx = xprintf("%s_bx", op->name), *r = xprintf("%s_r", op->name);
  vec_push(steps, step(loc, "split", (const char *[]){bx, r, NULL},
                       (Ast *[]){member(loc, op->name, op->raxes[0]->name), kwarg(loc, "parts", 1), NULL}));
  vec_push(steps, step(loc, "bind", NULL,
                       (Ast *[]){name_node(loc, bx), member(loc, "blockIdx", "x"), NULL}));
  return true;
}

/* Append the default GPU steps of OP to STEPS. */
static void op_steps(const Op *op, Loc loc, Vec *steps) {
  if (op->ndim == 0 || scan_steps(op, loc, steps) || scatter_steps(op, loc, steps)) return;
  IrVar **axes = xalloc(sizeof(IrVar *) * (size_t)(op->ndim + 1));
  int nd = 0; /* the axes but a scan's, which stays serial inside (scan_steps) */
  for (int d = 0; d < op->ndim; d++)
    if ((!op->is_scan || d != op->scan_dim) && (!op->scatter || !op->scatter[d])) axes[nd++] = op->axes[d];
  const char *cur = NULL; /* the fused loop so far, as a name */
  Ast *first = member(loc, op->name, axes[0]->name);
  for (int d = 1; d < nd; d++) {
    const char *f = xprintf("%s_f%d", op->name, d - 1);
    Ast *a = cur ? name_node(loc, cur) : first;
    vec_push(steps, step(loc, "fuse", (const char *[]){f, NULL},
                         (Ast *[]){a, member(loc, op->name, axes[d]->name), NULL}));
    cur = f;
  }
  int64_t ext = spatial_extent(op), factor = 64;
  if (ext > 0 && ext < factor) factor = ext;
  const char *bx = xprintf("%s_bx", op->name), *tx = xprintf("%s_tx", op->name);
  Ast *loop = cur ? name_node(loc, cur) : first;
  vec_push(steps, step(loc, "split", (const char *[]){bx, tx, NULL},
                       (Ast *[]){loop, int_node(loc, factor), NULL}));
  vec_push(steps, step(loc, "bind", NULL,
                       (Ast *[]){name_node(loc, bx), member(loc, "blockIdx", "x"), NULL}));
  vec_push(steps, step(loc, "bind", NULL,
                       (Ast *[]){name_node(loc, tx), member(loc, "threadIdx", "x"), NULL}));
}

bool gpu_default_steps(Kernel *k, Target t, Vec *steps) {
  (void)t;
  for (int i = 0; i < k->nops; i++) op_steps(k->ops[i], k->loc, steps);
  return true;
}
