/* ast.c — AST nodes, `--emit ast`, and schedule steps back to text.
 *
 * steps_print writes steps in LANGUAGE.md's syntax, one per line, so that parse_steps of
 * the text gives the same steps: the tuner and the records store schedules that way.
 * Expressions are printed with the fewest parentheses that keep their tree.
 */
#include "texc.h"

#include <stdlib.h>
#include <string.h>

const char *const ast_kind_names[] = {
#define X(k) #k,
    AST_KINDS(X)
#undef X
};

Ast *ast_new(AstKind k, Loc loc) {
  Ast *a = xalloc(sizeof *a);
  a->kind = k;
  a->loc = loc;
  return a;
}

/* ---- expressions as text ------------------------------------------------------- */

/* The text of an operator: a char, or a TOKOP_. */
static void put_op(FILE *f, int op) {
  switch (op) {
  case TOKOP_LE: fputs("<=", f); break;
  case TOKOP_GE: fputs(">=", f); break;
  case TOKOP_EQ: fputs("==", f); break;
  case TOKOP_NE: fputs("!=", f); break;
  case TOKOP_AND: fputs("&&", f); break;
  case TOKOP_OR: fputs("||", f); break;
  case TOKOP_ADDEQ: fputs("+=", f); break;
  case TOKOP_MAXEQ: fputs("max=", f); break;
  case TOKOP_ARGMAXEQ: fputs("argmax=", f); break;
  case TOKOP_ARGMINEQ: fputs("argmin=", f); break;
  case TOKOP_MINEQ: fputs("min=", f); break;
  case TOKOP_MULEQ: fputs("*=", f); break;
  case TOKOP_SHL: fputs("<<", f); break;
  case TOKOP_SHR: fputs(">>", f); break;
  default: fputc(op > 0 && op < 128 ? op : '?', f); break;
  }
}

/* Binding strength, as in parser.y: ?: is 1, unary 12, primaries 13. */
enum { P_COND = 1, P_OR, P_AND, P_BOR, P_BXOR, P_BAND, P_EQ, P_REL, P_SHIFT, P_ADD, P_MUL, P_UNARY,
       P_PRIMARY };

static int binary_prec(int op) {
  switch (op) {
  case TOKOP_OR: return P_OR;
  case TOKOP_AND: return P_AND;
  case '|': return P_BOR;
  case '^': return P_BXOR;
  case '&': return P_BAND;
  case TOKOP_SHL: case TOKOP_SHR: return P_SHIFT;
  case TOKOP_EQ: case TOKOP_NE: return P_EQ;
  case '<': case '>': case TOKOP_LE: case TOKOP_GE: return P_REL;
  case '+': case '-': return P_ADD;
  default: return P_MUL;
  }
}

static int prec(const Ast *e) {
  switch (e->kind) {
  case A_COND: return P_COND;
  case A_BINARY: return binary_prec(e->op);
  case A_UNARY: return P_UNARY;
  case A_KWARG: return 0;
  case A_INT: return e->ival < 0 ? P_UNARY : P_PRIMARY;
  case A_FLOAT: return e->fval < 0 ? P_UNARY : P_PRIMARY;
  default: return P_PRIMARY;
  }
}

/* The shortest text of V that reads back as V, always with a '.' or an exponent. */
static void print_float(FILE *f, double v) {
  char buf[40];
  for (int digits = 1; digits <= 17; digits++) {
    snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) break;
  }
  fputs(buf, f);
  if (!strpbrk(buf, ".eEni")) fputs(".0", f);
}

static void print_expr(FILE *f, const Ast *e, int min);

static void print_list(FILE *f, const Vec *v) {
  for (int i = 0; i < v->len; i++) {
    if (i) fputs(", ", f);
    print_expr(f, v->data[i], 0);
  }
}

/* E as source text; parenthesised when it binds less tightly than MIN. */
static void print_expr(FILE *f, const Ast *e, int min) {
  if (!e) {
    fputs("?", f);
    return;
  }
  bool paren = prec(e) < min;
  if (paren) fputc('(', f);
  switch (e->kind) {
  case A_INT: fprintf(f, "%lld", (long long)e->ival); break;
  case A_FLOAT: print_float(f, e->fval); break;
  case A_STR: fprintf(f, "\"%s\"", e->sval ? e->sval : ""); break;
  case A_NAME: fputs(e->name, f); break;
  case A_MEMBER: fprintf(f, "%s.%s", e->name, e->name2); break;
  case A_ACCESS: fprintf(f, "%s[", e->name); print_list(f, &e->list); fputc(']', f); break;
  case A_CALL: fprintf(f, "%s(", e->name); print_list(f, &e->list); fputc(')', f); break;
  case A_UNARY:
    put_op(f, e->op);
    print_expr(f, e->a, P_UNARY);
    break;
  case A_BINARY: {
    int p = binary_prec(e->op);
    print_expr(f, e->a, p);
    fputc(' ', f);
    put_op(f, e->op);
    fputc(' ', f);
    print_expr(f, e->b, p + 1);
    break;
  }
  case A_COND:
    print_expr(f, e->a, P_COND + 1);
    fputs(" ? ", f);
    print_expr(f, e->b, P_COND);
    fputs(" : ", f);
    print_expr(f, e->c, P_COND);
    break;
  case A_KWARG: fprintf(f, "%s = ", e->name); print_expr(f, e->a, P_COND); break;
  default: fprintf(f, "<%s>", ast_kind_names[e->kind]); break;
  }
  if (paren) fputc(')', f);
}

/* ---- steps ------------------------------------------------------------------------ */

/* One step: `a, b = split(C.i, 4)` or `reorder(a, b)`; also a network's call. */
static void print_step(FILE *f, const Ast *s) {
  for (int i = 0; i < s->list.len; i++) {
    const Ast *o = s->list.data[i];
    fprintf(f, "%s%s", i ? ", " : "", o->name);
  }
  if (s->list.len) fputs(" = ", f);
  fprintf(f, "%s(", s->name);
  print_list(f, &s->list2);
  fputc(')', f);
}

void steps_print(FILE *f, const Vec *steps, const char *indent) {
  for (int i = 0; i < steps->len; i++) {
    fputs(indent ? indent : "", f);
    print_step(f, steps->data[i]);
    fputc('\n', f);
  }
}

char *steps_to_text(const Vec *steps) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) die("open_memstream failed");
  steps_print(f, steps, "");
  fclose(f);
  char *s = xstrndup(buf, len);
  free(buf);
  return s;
}

/* ---- --emit ast ----------------------------------------------------------------- */

static void print_node(FILE *f, const Ast *a, int ind);

static void print_loc(FILE *f, const Ast *a) {
  if (a->loc.file) fprintf(f, "  @%d:%d", a->loc.line, a->loc.col);
  fputc('\n', f);
}

static void print_nodes(FILE *f, const Vec *v, int ind) {
  for (int i = 0; i < v->len; i++) print_node(f, v->data[i], ind);
}

/* A labelled list: "params:" and its nodes below it. */
static void print_section(FILE *f, const char *label, const Vec *v, int ind) {
  if (!v->len) return;
  fprintf(f, "%*s%s:\n", ind, "", label);
  print_nodes(f, v, ind + 2);
}

/* Kernels, statements, schedules: the nodes that are not expressions. */
static bool print_item(FILE *f, const Ast *a, int ind) {
  switch (a->kind) {
  case A_PARAM: case A_TENSOR:
    fprintf(f, "%s %s: %s", a->kind == A_PARAM ? "param" : "tensor", a->name, a->name2);
    print_loc(f, a);
    print_nodes(f, &a->list, ind + 2);
    return true;
  case A_STMT:
    fputs("stmt ", f);
    put_op(f, a->op);
    print_loc(f, a);
    print_node(f, a->a, ind + 2);
    print_node(f, a->b, ind + 2);
    print_section(f, "where", &a->list2, ind + 2);
    return true;
  case A_RANGE:
    fprintf(f, "range %s", a->name);
    print_loc(f, a);
    print_node(f, a->a, ind + 2);
    print_node(f, a->b, ind + 2);
    return true;
  case A_CONST:
    fprintf(f, "const %s", a->name);
    print_loc(f, a);
    print_node(f, a->a, ind + 2);
    return true;
  case A_IMPORT:
    fprintf(f, "import \"%s\"%s", a->sval, a->ival ? " (already imported)" : "");
    print_loc(f, a);
    print_nodes(f, &a->list, ind + 2);
    return true;
  case A_KERNEL: case A_NETWORK:
    fprintf(f, "%s %s", a->kind == A_KERNEL ? "kernel" : "network", a->name);
    print_loc(f, a);
    print_section(f, "params", &a->list, ind + 2);
    print_section(f, "outputs", &a->list2, ind + 2);
    print_section(f, "body", &a->list3, ind + 2);
    return true;
  case A_EXTERN:
    fprintf(f, "extern kernel %s", a->name);
    print_loc(f, a);
    print_section(f, "params", &a->list, ind + 2);
    print_section(f, "outputs", &a->list2, ind + 2);
    return true;
  default: return false;
  }
}

/* Schedules and steps; expressions print as one line each, their operands below. */
static void print_other(FILE *f, const Ast *a, int ind) {
  switch (a->kind) {
  case A_SCHEDULE:
    fprintf(f, "schedule %s.%s", a->name, a->name2);
    for (int i = 0; i < a->list.len; i++)
      fprintf(f, "%s%s", i ? ", " : " for ", ((const Ast *)a->list.data[i])->name);
    if (a->ival) fputs(" = auto", f);
    print_loc(f, a);
    print_nodes(f, &a->list2, ind + 2);
    return;
  case A_STEP: case A_NETCALL: case A_CALLSTMT:
    fputs(a->kind == A_STEP ? "step " : a->kind == A_NETCALL ? "netcall " : "extern call ", f);
    print_step(f, a);
    print_loc(f, a);
    return;
  case A_FILE:
    fprintf(f, "file %s\n", a->sval ? a->sval : "?");
    print_nodes(f, &a->list, ind + 2);
    return;
  case A_UNARY: case A_BINARY:
    fputs(a->kind == A_UNARY ? "unary " : "binary ", f);
    put_op(f, a->op);
    print_loc(f, a);
    print_node(f, a->a, ind + 2);
    if (a->b) print_node(f, a->b, ind + 2);
    return;
  case A_COND:
    fputs("cond", f);
    print_loc(f, a);
    print_node(f, a->a, ind + 2);
    print_node(f, a->b, ind + 2);
    print_node(f, a->c, ind + 2);
    return;
  case A_ACCESS: case A_CALL:
    fprintf(f, "%s %s", a->kind == A_ACCESS ? "access" : "call", a->name);
    print_loc(f, a);
    print_nodes(f, &a->list, ind + 2);
    return;
  default:
    fprintf(f, "%s ", ast_kind_names[a->kind] + 2); /* "INT 3", "NAME i", "MEMBER C.i" */
    print_expr(f, a, P_COND);
    print_loc(f, a);
    return;
  }
}

static void print_node(FILE *f, const Ast *a, int ind) {
  fprintf(f, "%*s", ind, "");
  if (!a) {
    fputs("(null)\n", f);
    return;
  }
  if (!print_item(f, a, ind)) print_other(f, a, ind);
}

void ast_print(FILE *f, const Ast *file) {
  if (file) print_node(f, file, 0);
}
