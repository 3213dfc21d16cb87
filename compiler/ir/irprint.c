/* irprint.c — the loop IR as text (`texc --emit ir`), in the style of lowered TVM TIR:
 *
 *   func matmul(A: f32[1024, 1024], B: f32[1024, 1024], C: f32[1024, 1024]) {
 *     parallel (i.outer, 0, 32) {
 *       for (k, 0, 1024) {
 *         C[i, j] = C[i, j] + A[i, k]*B[k, j]
 *
 * Loops print as `KIND (var, min, extent)`; GPU-bound loops as `for (...) {  // threadIdx.x`.
 * Allocations print as a line (`allocate AS: f32[32, 4] shared`) whose scope is the rest
 * of the enclosing block, as TIR does. Distinct variables (or buffers) that share a name
 * print with a suffix `_1`, `_2`, ... assigned in order of first appearance, so output
 * is deterministic. Expressions print with minimal parentheses; integer `/` and `%` are
 * floor division and modulo, as in the .tex language. */
#include "texc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The names chosen for variables and buffers while a function or statement prints.
 * Two open-addressing hash tables of indices into NAMES (0: empty slot, else index + 1),
 * by key and by name, keep naming linear in the size of the function. */
typedef struct Name {
  const void *key;
  const char *name;
} Name;
static Name *names;
static int nnames, capnames;
static int *by_key, *by_name; /* capnames * 2 slots each */
static bool naming;

static size_t hash_ptr(const void *p) { return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull); }

static size_t hash_str(const char *s) {
  size_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of KEY (or NAME when KEY is NULL) in its table: where it is, or an empty one. */
static int *slot(const void *key, const char *name) {
  size_t mask = (size_t)capnames * 2 - 1, h = (key ? hash_ptr(key) : hash_str(name)) & mask;
  int *t = key ? by_key : by_name;
  for (;; h = (h + 1) & mask) {
    int i = t[h] - 1;
    if (i < 0 || (key ? names[i].key == key : strcmp(names[i].name, name) == 0)) return &t[h];
  }
}

static const char *lookup(const void *key) {
  if (!nnames) return NULL;
  int i = *slot(key, NULL) - 1;
  return i >= 0 ? names[i].name : NULL;
}

static bool name_taken(const char *s) { return nnames && *slot(NULL, s) != 0; }

/* Double the capacity and re-enter every name. */
static void grow_names(void) {
  capnames = capnames ? capnames * 2 : 64;
  names = realloc(names, sizeof *names * (size_t)capnames);
  free(by_key);
  free(by_name);
  by_key = calloc((size_t)capnames * 2, sizeof(int));
  by_name = calloc((size_t)capnames * 2, sizeof(int));
  if (!names || !by_key || !by_name) die_oom(0);
  for (int i = 0; i < nnames; i++) {
    *slot(names[i].key, NULL) = i + 1;
    *slot(NULL, names[i].name) = i + 1;
  }
}

/* Give KEY the name BASE, or BASE_1, BASE_2, ... when another key has it already. */
static void add_name(const void *key, const char *base) {
  if (lookup(key)) return;
  const char *s = base;
  for (int k = 1; name_taken(s); k++) s = xprintf("%s_%d", base, k);
  if (nnames == capnames) grow_names();
  names[nnames] = (Name){key, s};
  *slot(key, NULL) = nnames + 1;
  *slot(NULL, s) = nnames + 1;
  nnames++;
}

static void name_expr(const Expr *e) {
  if (!e) return;
  if (e->kind == E_VAR) add_name(e->var, e->var->name);
  if (e->kind == E_LOAD) add_name(e->buf, e->buf->name);
  for (int i = 0; i < e->nargs; i++) name_expr(e->args[i]);
  name_expr(e->a);
  name_expr(e->b);
  name_expr(e->c);
}

static void name_buffer(const Buffer *b) {
  add_name(b, b->name);
  for (int d = 0; d < b->ndim; d++) name_expr(b->shape[d]);
}

static void name_stmt(const Stmt *s) {
  if (!s) return;
  if (s->kind == S_FOR) add_name(s->var, s->var->name);
  if (s->buf) name_buffer(s->buf);
  name_expr(s->min);
  name_expr(s->extent);
  for (int i = 0; i < s->nargs; i++) name_expr(s->args[i]);
  name_expr(s->value);
  name_expr(s->cond);
  name_stmt(s->body);
  name_stmt(s->els);
  for (int i = 0; i < s->n; i++) name_stmt(s->stmts[i]);
}

static void names_clear(void) {
  if (nnames) {
    memset(by_key, 0, sizeof(int) * (size_t)capnames * 2);
    memset(by_name, 0, sizeof(int) * (size_t)capnames * 2);
  }
  nnames = 0;
}

static void names_begin(void) {
  names_clear();
  naming = true;
}

static void names_end(void) {
  naming = false;
  names_clear();
}

static const char *var_name(const IrVar *v) {
  const char *s = naming ? lookup(v) : NULL;
  return s ? s : v->name;
}

static const char *buf_name(const Buffer *b) {
  const char *s = naming ? lookup(b) : NULL;
  return s ? s : b->name;
}

/* ---- expressions -------------------------------------------------------- */

/* Binding strength, as C binds: select 0, || 1, && 2, | 3, ^ 4, & 5, == != 6,
 * < <= > >= 7, << >> 8, + - 9, * / % 10, unary 11, atoms and calls 12. */
enum { PR_MUL = 10, PR_UNARY = 11, PR_ATOM = 12 };
static int prec(const Expr *e) {
  static const int bin[BINOP_COUNT] = {
      [OP_ADD] = 9,  [OP_SUB] = 9,   [OP_MUL] = 10, [OP_DIV] = 10, [OP_MOD] = 10, [OP_MIN] = 12,
      [OP_MAX] = 12, [OP_EQ] = 6,    [OP_NE] = 6,   [OP_LT] = 7,   [OP_LE] = 7,   [OP_GT] = 7,
      [OP_GE] = 7,   [OP_AND] = 2,   [OP_OR] = 1,   [OP_POW] = 12, [OP_ATAN2] = 12,
      [OP_FMOD] = 12, [OP_BAND] = 5, [OP_BOR] = 3,  [OP_BXOR] = 4, [OP_SHL] = 8,  [OP_SHR] = 8};
  switch (e->kind) {
  case E_BIN: return bin[e->op];
  case E_UN: return PR_UNARY;
  case E_SELECT: return 0;
  case E_INT: return e->ival < 0 ? PR_UNARY : PR_ATOM;
  case E_FLOAT: return e->fval < 0 || signbit(e->fval) ? PR_UNARY : PR_ATOM;
  default: return PR_ATOM;
  }
}

static void pr(FILE *f, const Expr *e);

static void pr_wrapped(FILE *f, const Expr *e, bool paren) {
  if (paren) fputc('(', f);
  pr(f, e);
  if (paren) fputc(')', f);
}

/* The shortest decimal text that reads back as V in dtype T, with a dtype suffix. */
static void pr_float(FILE *f, DType t, double v) {
  char buf[64];
  if (!isfinite(v)) {
    fprintf(f, "%s(%s)", dtype_name(t), isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, v);
    double back = strtod(buf, NULL);
    if (t == DT_F64 ? back == v : (float)back == (float)v) break;
  }
  if (t == DT_F64 && !strpbrk(buf, ".e")) strcat(buf, ".0");
  fprintf(f, "%s%s", buf, t == DT_F32 ? "f" : t == DT_F16 ? "h" : "");
}

static void pr_args(FILE *f, Expr **args, int n) {
  for (int i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    pr(f, args[i]);
  }
}

static void pr_bin(FILE *f, const Expr *e) {
  int p = prec(e);
  if (p == PR_ATOM) { /* min, max, pow, atan2, fmod */
    fprintf(f, "%s(", binop_names[e->op]);
    pr(f, e->a);
    fputs(", ", f);
    pr(f, e->b);
    fputc(')', f);
    return;
  }
  /* (x/32)*32: floor division does not reassociate, so show its grouping */
  bool divleft = p == PR_MUL && e->a->kind == E_BIN && (e->a->op == OP_DIV || e->a->op == OP_MOD) &&
                 e->a->op != e->op;
  pr_wrapped(f, e->a, prec(e->a) < p || divleft);
  if (p == PR_MUL) fputs(binop_names[e->op], f); /* `i*32`, as TIR prints products */
  else fprintf(f, " %s ", binop_names[e->op]);
  pr_wrapped(f, e->b, prec(e->b) <= p);
}

static void pr(FILE *f, const Expr *e) {
  if (!e) {
    fputs("<null>", f);
    return;
  }
  switch (e->kind) {
  case E_INT:
    if (e->dtype == DT_BOOL) fputs(e->ival ? "true" : "false", f);
    else fprintf(f, "%lld", (long long)e->ival);
    break;
  case E_FLOAT: pr_float(f, e->dtype, e->fval); break;
  case E_VAR: fputs(var_name(e->var), f); break;
  case E_LOAD:
    fprintf(f, "%s[", buf_name(e->buf));
    pr_args(f, e->args, e->nargs);
    fputc(']', f);
    break;
  case E_BIN: pr_bin(f, e); break;
  case E_UN:
    fputc(e->op == OP_NOT ? '!' : '-', f);
    pr_wrapped(f, e->a, prec(e->a) < PR_UNARY || (e->op == OP_NEG && prec(e->a) == PR_UNARY));
    break;
  case E_SELECT:
    pr_wrapped(f, e->a, prec(e->a) <= 0);
    fputs(" ? ", f);
    pr_wrapped(f, e->b, prec(e->b) <= 0);
    fputs(" : ", f);
    pr(f, e->c);
    break;
  case E_CALL:
    fprintf(f, "%s(", callfn_names[e->op]);
    pr_args(f, e->args, e->nargs);
    fputc(')', f);
    break;
  case E_CAST:
    fprintf(f, "%s(", dtype_name(e->dtype));
    pr(f, e->a);
    fputc(')', f);
    break;
  default: fputs("<?>", f);
  }
}

void ir_print_expr(FILE *f, const Expr *e) { pr(f, e); }

char *ir_expr_str(const Expr *e) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) die_oom(0);
  pr(f, e);
  fclose(f);
  char *s = xstrdup(buf);
  free(buf);
  return s;
}

/* ---- statements --------------------------------------------------------- */

static const char *const scope_names[] = {"global", "shared", "local"};

static void pr_stmt(FILE *f, const Stmt *s, int ind);

static void pad(FILE *f, int ind) {
  for (int i = 0; i < ind; i++) fputs("  ", f);
}

static void pr_block(FILE *f, const Stmt *s, int ind) {
  fputs("{\n", f);
  pr_stmt(f, s, ind + 1);
  pad(f, ind);
  fputs("}", f);
}

static void pr_shape(FILE *f, const Buffer *b) {
  fprintf(f, "%s[", dtype_name(b->dtype));
  pr_args(f, b->shape, b->ndim);
  fputc(']', f);
}

static void pr_for(FILE *f, const Stmt *s, int ind) {
  static const char *const kw[] = {[FOR_SERIAL] = "for", [FOR_PARALLEL] = "parallel",
                                   [FOR_VECTORIZE] = "vectorized", [FOR_UNROLL] = "unrolled"};
  bool gpu = forkind_is_gpu(s->for_kind);
  fprintf(f, "%s (%s, ", gpu ? "for" : kw[s->for_kind], var_name(s->var));
  pr(f, s->min);
  fputs(", ", f);
  pr(f, s->extent);
  fputs(") {", f);
  if (gpu) fprintf(f, "  // %s", forkind_names[s->for_kind]);
  fputc('\n', f);
  pr_stmt(f, s->body, ind + 1);
  pad(f, ind);
  fputs("}\n", f);
}

static void pr_stmt(FILE *f, const Stmt *s, int ind) {
  if (!s) return;
  switch (s->kind) {
  case S_FOR: pad(f, ind); pr_for(f, s, ind); break;
  case S_STORE:
    pad(f, ind);
    fprintf(f, "%s[", buf_name(s->buf));
    pr_args(f, s->args, s->nargs);
    fputs("] = ", f);
    pr(f, s->value);
    fputs(s->atomic ? "  // atomic\n" : "\n", f);
    break;
  case S_ALLOC:
    pad(f, ind);
    fprintf(f, "allocate %s: ", buf_name(s->buf));
    pr_shape(f, s->buf);
    fprintf(f, " %s", scope_names[s->buf->scope]);
    if (s->buf->pad) fprintf(f, ", rows padded by %lld", (long long)s->buf->pad);
    fputc('\n', f);
    pr_stmt(f, s->body, ind);
    break;
  case S_IF:
    pad(f, ind);
    fputs("if (", f);
    pr(f, s->cond);
    fputs(") ", f);
    pr_block(f, s->body, ind);
    if (s->els) {
      fputs(" else ", f);
      pr_block(f, s->els, ind);
    }
    fputc('\n', f);
    break;
  case S_SEQ:
    for (int i = 0; i < s->n; i++) pr_stmt(f, s->stmts[i], ind);
    break;
  case S_BARRIER: pad(f, ind); fputs("barrier()\n", f); break;
  case S_CALL: /* extern f(inputs..., outputs..., sizes...) */
    pad(f, ind);
    fprintf(f, "extern %s(", s->callee);
    for (int i = 0; i < s->nbufs; i++) fprintf(f, "%s%s", i ? ", " : "", buf_name(s->bufs[i]));
    for (int i = 0; i < s->nargs; i++) {
      fputs(", ", f);
      pr(f, s->args[i]);
    }
    fputs(")\n", f);
    break;
  default: pad(f, ind); fputs("<?>\n", f);
  }
}

void ir_print_stmt(FILE *f, const Stmt *s, int indent) {
  bool outer = naming;
  if (!outer) {
    names_begin();
    name_stmt(s);
  }
  pr_stmt(f, s, indent);
  if (!outer) names_end();
}

void ir_print_func(FILE *f, const LoweredFunc *fn) {
  names_begin();
  for (int i = 0; i < fn->nparams; i++) name_buffer(fn->params[i]);
  for (int i = 0; i < fn->nsizes; i++) add_name(fn->sizes[i], fn->sizes[i]->name);
  name_stmt(fn->body);
  fprintf(f, "func %s(", fn->name);
  for (int i = 0; i < fn->nparams; i++) {
    fprintf(f, "%s%s: ", i ? ", " : "", buf_name(fn->params[i]));
    pr_shape(f, fn->params[i]);
  }
  fputs(") {\n", f);
  pr_stmt(f, fn->body, 1);
  fputs("}\n", f);
  names_end();
}
