/* check_names.c — what the checker's files share about names and text: the symbol tables,
 * -D overrides, integer constant expressions (check_const_expr, also network.c's), size
 * expressions of shapes, and an expression's text for messages. It calls nothing in
 * check.c or check_expr.c, so that the checker's files form no cycle. */
#include "check_impl.h"

#include <string.h>

const char *const reduceop_names[] = {"", "+=", "max=", "min=", "*=", "argmax=", "argmin="};

/* ---- symbol tables ------------------------------------------------------------ */

/* A file may define tens of thousands of constants: names are found through a hash
 * index, not a scan (a scan made checking quadratic). */
static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603u; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
  return h;
}

/* The slot of NAME in T's index: the one holding it, or the empty one where it goes. */
static Sym **index_slot(const SymTab *t, const char *name) {
  unsigned mask = (unsigned)t->cap - 1;
  for (unsigned i = (unsigned)name_hash(name) & mask;; i = (i + 1) & mask)
    if (!t->index[i] || strcmp(t->index[i]->name, name) == 0) return &t->index[i];
}

static void index_put(SymTab *t, Sym *y) {
  if (2 * (t->syms.len + 1) > t->cap) { /* keep the load under one half */
    int cap = t->cap ? 2 * t->cap : 16;
    t->cap = cap;
    t->index = xalloc(sizeof(Sym *) * (size_t)cap);
    for (int i = 0; i < t->syms.len; i++) {
      Sym *old = VEC_AT(t->syms, i);
      *index_slot(t, old->name) = old;
    }
  }
  *index_slot(t, y->name) = y; /* a later definition of a name hides the earlier one */
}

Sym *chk_lookup(SymTab *t, const char *name) {
  for (; t; t = t->parent) {
    if (!t->cap) continue;
    Sym *y = *index_slot(t, name);
    if (y) return y;
  }
  return NULL;
}

Sym *chk_define(SymTab *t, SymKind k, const char *name, Loc loc) {
  Sym *y = xalloc(sizeof *y);
  y->kind = k;
  y->name = name;
  y->loc = loc;
  index_put(t, y);
  vec_push(&t->syms, y);
  return y;
}

/* The -D override of NAME, or NULL. */
Define *chk_find_define(Define *defs, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (defs[i].name && strcmp(defs[i].name, name) == 0) return &defs[i];
  return NULL;
}

/* ---- constants ---------------------------------------------------------------- */

/* X op Y on constants, floor division as in the language; false on overflow or /0. */
static bool fold_int(int op, int64_t x, int64_t y, int64_t *r) {
  switch (op) {
  case '+': return !__builtin_add_overflow(x, y, r);
  case '-': return !__builtin_sub_overflow(x, y, r);
  case '*': return !__builtin_mul_overflow(x, y, r);
  case '/':
  case '%':
    if (y == 0 || (x == INT64_MIN && y == -1)) return false;
    *r = op == '/' ? ir_int_floordiv(x, y) : ir_int_floormod(x, y);
    return true;
  case '&': *r = x & y; return true;
  case '|': *r = x | y; return true;
  case '^': *r = x ^ y; return true;
  case TOKOP_SHL: /* exact: a count outside 0..62 or bits shifted out is an overflow */
    if (y < 0 || y > 62 || x > (INT64_MAX >> y) || x < (INT64_MIN >> y)) return false;
    *r = (int64_t)((uint64_t)x << y);
    return true;
  case TOKOP_SHR:
    if (y < 0 || y > 63) return false;
    *r = x >> y; /* arithmetic, as on i64 */
    return true;
  default: return false;
  }
}

bool check_const_expr(const Ast *a, ConstLookup lookup, void *env, const char **unknown,
                      int64_t *out) {
  int64_t x, y;
  if (!a) return false;
  switch (a->kind) {
  case A_INT: *out = a->ival; return true;
  case A_NAME:
    if (a->name && lookup(env, a->name, out)) return true;
    if (unknown) {
      if (!*unknown) *unknown = a->name ? a->name : "?";
      return false;
    }
    diag_error(a->loc, "unknown constant '%s': a constant may use only constants defined before it",
               a->name ? a->name : "?");
    return false;
  case A_UNARY:
    if ((a->op != '-' && a->op != '~') || !check_const_expr(a->a, lookup, env, unknown, &x)) break;
    if (a->op == '~') {
      *out = ~x;
      return true;
    }
    if (x == INT64_MIN) break;
    *out = -x;
    return true;
  case A_BINARY: {
    bool okx = check_const_expr(a->a, lookup, env, unknown, &x);
    bool oky = check_const_expr(a->b, lookup, env, unknown, &y);
    if (!okx || !oky) return false;
    if (fold_int(a->op, x, y, out)) return true;
    bool shift = a->op == TOKOP_SHL || a->op == TOKOP_SHR;
    if (shift)
      diag_error(a->loc, "'%s': %s", chk_ast_text(a),
                 y < 0 || y > 63 || (a->op == TOKOP_SHL && y > 62) ? "the shift count must be in 0..62 "
                 "(0..63 for >>) in a constant" : "the value overflows 64 bits");
    else if (!a->op || a->op > 127 || !strchr("+-*/%&|^", a->op))
      diag_error(a->loc, "'%s': only + - * / %% & | ^ << >> are allowed in a constant", chk_ast_text(a));
    else
      diag_error(a->loc, "'%s': %s", chk_ast_text(a),
                 y == 0 && (a->op == '/' || a->op == '%') ? "division by zero" : "the value overflows 64 bits");
    return false;
  }
  case A_CALL:
    if (a->name && (!strcmp(a->name, "max") || !strcmp(a->name, "min")) && a->list.len == 2) {
      bool okx = check_const_expr(VEC_AT(a->list, 0), lookup, env, unknown, &x);
      bool oky = check_const_expr(VEC_AT(a->list, 1), lookup, env, unknown, &y);
      if (!okx || !oky) return false;
      *out = (a->name[1] == 'a') == (x > y) ? x : y;
      return true;
    }
    break;
  default: break;
  }
  diag_error(a->loc, "'%s' is not an integer constant expression: use integers, earlier constants, "
             "+ - * / %% & | ^ ~ << >>, max and min", chk_ast_text(a));
  return false;
}

/* ---- sizes and shapes --------------------------------------------------------- */

/* A new symbolic size, or a -D binding of it (then a constant). */
static Sym *new_size(KCtx *kc, const char *name, Loc loc) {
  Sym *y = chk_define(&kc->syms, SYM_SIZE, name, loc);
  Define *d = chk_find_define(kc->defs, kc->ndefs, name);
  if (d) {
    d->used = true;
    y->size = ir_int(d->value);
    if (d->value < 1 || d->value > ARITH_SIZE_MAX) {
      diag_error(loc, "-D %s=%lld: a size must be 1 .. %lld (2^40)", name, (long long)d->value,
                 (long long)ARITH_SIZE_MAX);
      y->size = ir_int(1); /* one message, not one per tensor of that size */
    }
    return y;
  }
  y->var = ir_newvar(name, DT_I64);
  y->size = ir_var(y->var);
  vec_push(&kc->sizes, y->var);
  return y;
}

static Expr *size_name(KCtx *kc, Ast *a, bool create) {
  Sym *y = chk_lookup(&kc->syms, a->name);
  if (y && y->kind == SYM_CONST) return ir_int(y->value);
  if (y && y->kind == SYM_SIZE) return y->size;
  if (y) {
    diag_error(a->loc, "'%s' is a tensor; a shape uses only constants and sizes", a->name);
    return NULL;
  }
  if (create) return new_size(kc, a->name, a->loc)->size;
  diag_error(a->loc, "unknown size '%s': it is not a constant and no parameter or output shape "
             "uses it", a->name);
  return NULL;
}

/* X op Y for shapes: folded (checked) when both are constants. */
static Expr *size_bin(Ast *a, Expr *x, Expr *y) {
  int64_t cx, cy, r;
  static const int ops[] = {['+'] = OP_ADD, ['-'] = OP_SUB, ['*'] = OP_MUL, ['/'] = OP_DIV, ['%'] = OP_MOD};
  if (a->op <= 0 || a->op > '/' || !strchr("+-*/%", a->op)) {
    diag_error(a->loc, "'%s' is not allowed in a size expression: use + - * / %%", chk_ast_text(a));
    return NULL;
  }
  if (ir_is_const(x, &cx) && ir_is_const(y, &cy)) {
    if (fold_int(a->op, cx, cy, &r)) return ir_int(r);
    diag_error(a->loc, "%s: %s", chk_ast_text(a), cy == 0 ? "division by zero" : "the value overflows 64 bits");
    return NULL;
  }
  return ir_bin((BinOp)ops[a->op], x, y);
}

Expr *chk_size_expr(KCtx *kc, Ast *a, bool create) {
  if (!a) return NULL;
  switch (a->kind) {
  case A_INT: return ir_int(a->ival);
  case A_NAME: return a->name ? size_name(kc, a, create) : NULL;
  case A_UNARY: {
    if (a->op != '-') break;
    Expr *x = chk_size_expr(kc, a->a, create);
    int64_t c;
    if (!x) return NULL;
    if (ir_is_const(x, &c) && c != INT64_MIN) return ir_int(-c);
    return ir_bin(OP_SUB, ir_int(0), x);
  }
  case A_BINARY: {
    Expr *x = chk_size_expr(kc, a->a, create), *y = chk_size_expr(kc, a->b, create);
    return x && y ? size_bin(a, x, y) : NULL;
  }
  case A_CALL:
    if (a->name && (!strcmp(a->name, "max") || !strcmp(a->name, "min")) && a->list.len == 2) {
      Expr *x = chk_size_expr(kc, VEC_AT(a->list, 0), create), *y = chk_size_expr(kc, VEC_AT(a->list, 1), create);
      if (!x || !y) return NULL;
      return a->name[1] == 'a' ? ir_max(x, y) : ir_min(x, y);
    }
    break;
  default: break;
  }
  diag_error(a->loc, "'%s' is not a size expression: use integers, constants, size names, + - * / %%, "
               "max and min", chk_ast_text(a));
  return NULL;
}

/* ---- AST text for messages ---------------------------------------------------- */

const char *chk_op_text(int op) {
  static char one[2];
  switch (op) {
  case TOKOP_LE: return "<=";
  case TOKOP_GE: return ">=";
  case TOKOP_EQ: return "==";
  case TOKOP_NE: return "!=";
  case TOKOP_AND: return "&&";
  case TOKOP_OR: return "||";
  case TOKOP_ADDEQ: return "+=";
  case TOKOP_MAXEQ: return "max=";
  case TOKOP_ARGMAXEQ: return "argmax=";
  case TOKOP_ARGMINEQ: return "argmin=";
  case TOKOP_MINEQ: return "min=";
  case TOKOP_MULEQ: return "*=";
  case TOKOP_SHL: return "<<";
  case TOKOP_SHR: return ">>";
  default: one[0] = (char)op; one[1] = 0; return xstrdup(one);
  }
}

static int ast_prec(int op) {
  switch (op) {
  case TOKOP_OR: return 1;
  case TOKOP_AND: return 2;
  case '|': return 3;
  case '^': return 4;
  case '&': return 5;
  case TOKOP_EQ: case TOKOP_NE: return 6;
  case '<': case '>': case TOKOP_LE: case TOKOP_GE: return 7;
  case TOKOP_SHL: case TOKOP_SHR: return 8;
  case '+': case '-': return 9;
  case '*': case '/': case '%': return 10;
  default: return 11;
  }
}

static char *list_text(const Vec *l) {
  char *s = "";
  for (int i = 0; i < l->len; i++) s = xprintf("%s%s%s", s, i ? ", " : "", chk_ast_text(VEC_AT(*l, i)));
  return s;
}

/* Text of A, parenthesised where needed under an operator of precedence PREC. */
static char *ast_text_prec(const Ast *a, int prec) {
  if (!a) return "?";
  char *t;
  switch (a->kind) {
  case A_INT: return xprintf("%lld", (long long)a->ival);
  case A_FLOAT: return xprintf("%g", a->fval);
  case A_STR: return xprintf("\"%s\"", a->sval ? a->sval : "");
  case A_NAME: return xstrdup(a->name ? a->name : "?");
  case A_MEMBER: return xprintf("%s.%s", a->name ? a->name : "?", a->name2 ? a->name2 : "?");
  case A_ACCESS: return xprintf("%s[%s]", a->name ? a->name : "?", list_text(&a->list));
  case A_CALL: return xprintf("%s(%s)", a->name ? a->name : "?", list_text(&a->list));
  case A_UNARY: return xprintf("%c%s", a->op == '!' || a->op == '~' ? a->op : '-', ast_text_prec(a->a, 12));
  case A_BINARY: {
    int p = ast_prec(a->op);
    t = xprintf("%s %s %s", ast_text_prec(a->a, p), chk_op_text(a->op), ast_text_prec(a->b, p + 1));
    return p < prec ? xprintf("(%s)", t) : t;
  }
  case A_COND:
    t = xprintf("%s ? %s : %s", ast_text_prec(a->a, 1), ast_text_prec(a->b, 0), ast_text_prec(a->c, 0));
    return prec > 0 ? xprintf("(%s)", t) : t;
  default: return "?";
  }
}

char *chk_ast_text(const Ast *a) { return ast_text_prec(a, 0); }

