/* test_parse.c — the lexer, the parser, imports and steps_to_text.
 * One line per check: `ok - NAME` or `not ok - NAME`. */
#include "texc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

static void check(bool cond, const char *name) {
  printf("%sok - %s\n", cond ? "" : "not ", name);
  if (!cond) failures++;
}

/* ---- helpers ---------------------------------------------------------------------- */

/* Parse TEXT quietly; NULL on errors. *NERR gets the number of errors. */
static Ast *parse_quiet(const char *text, int *nerr) {
  diag_reset();
  diag_silent = true;
  Ast *f = parse_string("t.tex", text);
  diag_silent = false;
  if (nerr) *nerr = diag_errors();
  return f;
}

/* The first item of kind K in FILE. */
static Ast *item(Ast *file, AstKind k) {
  for (int i = 0; file && i < file->list.len; i++) {
    Ast *a = file->list.data[i];
    if (a->kind == k) return a;
  }
  return NULL;
}

/* The right-hand side of the only statement of `B[i] = EXPR`. */
static Ast *parse_expr(const char *expr) {
  char *text = xprintf("kernel k(A: f32[N]) -> B: f32[N] {\n  B[i] = %s\n}\n", expr);
  Ast *f = parse_quiet(text, NULL);
  Ast *k = item(f, A_KERNEL);
  if (!k || k->list3.len != 1) return NULL;
  return ((Ast *)k->list3.data[0])->b;
}

static void op_str(char *buf, size_t cap, int op) {
  static const char *const multi[] = {"<=", ">=", "==", "!=", "&&", "||"};
  if (op >= TOKOP_LE && op <= TOKOP_OR) snprintf(buf, cap, "%s", multi[op - TOKOP_LE]);
  else snprintf(buf, cap, "%c", op);
}

/* E fully parenthesised: shows the tree that precedence made. */
static char *paren(const Ast *e) {
  if (!e) return xstrdup("<null>");
  char op[4];
  switch (e->kind) {
  case A_INT: return xprintf("%lld", (long long)e->ival);
  case A_FLOAT: return xprintf("%g", e->fval);
  case A_NAME: return xstrdup(e->name);
  case A_MEMBER: return xprintf("%s.%s", e->name, e->name2);
  case A_UNARY: op_str(op, sizeof op, e->op); return xprintf("(%s%s)", op, paren(e->a));
  case A_BINARY:
    op_str(op, sizeof op, e->op);
    return xprintf("(%s %s %s)", paren(e->a), op, paren(e->b));
  case A_COND: return xprintf("(%s ? %s : %s)", paren(e->a), paren(e->b), paren(e->c));
  case A_ACCESS: case A_CALL: {
    char *s = xprintf("%s%c", e->name, e->kind == A_ACCESS ? '[' : '(');
    for (int i = 0; i < e->list.len; i++) s = xprintf("%s%s%s", s, i ? ", " : "", paren(e->list.data[i]));
    return xprintf("%s%c", s, e->kind == A_ACCESS ? ']' : ')');
  }
  case A_KWARG: return xprintf("%s = %s", e->name, paren(e->a));
  default: return xprintf("<%s>", ast_kind_names[e->kind]);
  }
}

static void check_paren(const char *src, const char *want) {
  char *got = paren(parse_expr(src));
  bool ok = strcmp(got, want) == 0;
  check(ok, xprintf("precedence: %s", src));
  if (!ok) printf("#   got %s, want %s\n", got, want);
}

/* Structural equality, locations aside. */
static bool same(const Ast *a, const Ast *b);

static bool same_list(const Vec *a, const Vec *b) {
  if (a->len != b->len) return false;
  for (int i = 0; i < a->len; i++)
    if (!same(a->data[i], b->data[i])) return false;
  return true;
}

static bool same_str(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same(const Ast *a, const Ast *b) {
  if (!a || !b) return a == b;
  return a->kind == b->kind && a->op == b->op && a->ival == b->ival && a->fval == b->fval &&
         same_str(a->name, b->name) && same_str(a->name2, b->name2) &&
         same_str(a->sval, b->sval) && same(a->a, b->a) && same(a->b, b->b) &&
         same(a->c, b->c) && same_list(&a->list, &b->list) && same_list(&a->list2, &b->list2) &&
         same_list(&a->list3, &b->list3);
}

/* ---- tests -------------------------------------------------------------------------- */

static const char *const example =
    "# matmul\n"
    "const M = 1024, N = 2 * M, K = 64      # sizes\n"
    "\n"
    "kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {\n"
    "  C[i, j] += A[i, k] * B[k, j]\n"
    "}\n"
    "\n"
    "schedule matmul.tiled for llvm {\n"
    "  io, jo, ii, ji = tile(C.i, C.j, 32, 32)\n"
    "  ko, ki = split(C.k, 4)\n"
    "  a, b = split(C.i, parts = 4)\n"
    "  reorder(io, jo, ko, ki, ii, ji)\n"
    "  bind(bx, blockIdx.x)\n"
    "  bind(v, vthread)\n"
    "  AS = cache_read(A, shared, C)\n"
    "  vectorize(ji)\n"
    "  parallel(io)\n"
    "}\n"
    "\n"
    "schedule matmul.tuned for llvm, cuda = auto\n"
    "schedule matmul.any { unroll(ki) }\n";

static void test_file_structure(void) {
  int nerr;
  Ast *f = parse_quiet(example, &nerr);
  check(f && nerr == 0, "example parses");
  if (!f) return;
  int nconst = 0, nsched = 0;
  for (int i = 0; i < f->list.len; i++) {
    Ast *a = f->list.data[i];
    nconst += a->kind == A_CONST;
    nsched += a->kind == A_SCHEDULE;
  }
  check(nconst == 3, "const list gives one A_CONST per name");
  Ast *c2 = f->list.data[1];
  check(c2->kind == A_CONST && strcmp(c2->name, "N") == 0 && c2->a->kind == A_BINARY,
        "const N = 2 * M");
  check(c2->loc.line == 2 && c2->loc.col == 17, "const location is its name's");
  Ast *k = item(f, A_KERNEL);
  check(k && strcmp(k->name, "matmul") == 0 && k->list.len == 2 && k->list2.len == 1 &&
            k->list3.len == 1, "kernel params, outputs, body");
  Ast *p = k->list.data[0];
  check(p->kind == A_PARAM && strcmp(p->name, "A") == 0 && strcmp(p->name2, "f32") == 0 &&
            p->op == DT_F32 && p->list.len == 2, "param A: f32[M, K]");
  Ast *s = k->list3.data[0];
  check(s->kind == A_STMT && s->op == TOKOP_ADDEQ && s->a->kind == A_ACCESS &&
            strcmp(s->a->name, "C") == 0 && s->a->list.len == 2, "statement C[i, j] += ...");
  check(s->loc.line == 5 && s->loc.col == 3, "statement location is its first token's");
  check(s->b->kind == A_BINARY && s->b->op == '*' && s->b->a->loc.col == 14,
        "operand locations");
  check(k->loc.line == 4 && k->loc.col == 1, "kernel location");
  check(nsched == 3, "three schedules");
  Ast *t = item(f, A_SCHEDULE);
  check(strcmp(t->name, "matmul") == 0 && strcmp(t->name2, "tiled") == 0 && t->list.len == 1 &&
            t->list2.len == 9 && !t->ival, "schedule matmul.tiled for llvm { 9 steps }");
  Ast *st = t->list2.data[0];
  check(st->kind == A_STEP && strcmp(st->name, "tile") == 0 && st->list.len == 4 &&
            st->list2.len == 4 && ((Ast *)st->list2.data[0])->kind == A_MEMBER,
        "tile step: 4 outputs, member args");
  check(st->loc.line == 9 && st->loc.col == 3, "step location");
  Ast *kw = ((Ast *)t->list2.data[2])->list2.data[1];
  check(kw->kind == A_KWARG && strcmp(kw->name, "parts") == 0 && kw->a->ival == 4,
        "split(C.i, parts = 4) has an A_KWARG");
  Ast *b1 = ((Ast *)t->list2.data[4])->list2.data[1];
  Ast *b2 = ((Ast *)t->list2.data[5])->list2.data[1];
  check(b1->kind == A_MEMBER && strcmp(b1->name2, "x") == 0 && b2->kind == A_NAME,
        "bind args: blockIdx.x member, vthread name");
  Ast *auto_s = f->list.data[f->list.len - 2];
  check(auto_s->ival == 1 && auto_s->list.len == 2 && auto_s->list2.len == 0,
        "schedule ... for llvm, cuda = auto");
  Ast *any = f->list.data[f->list.len - 1];
  check(any->list.len == 0 && any->list2.len == 1, "schedule without for: every target");
}

static void test_kernel_forms(void) {
  const char *text =
      "kernel two(X: f32[N, H + 2], Y: i32[N]) -> (S: f32[N], T: f64[N]) {\n"
      "  tensor P: f32[N, H + 2]\n"
      "  P[n, h] = h >= 1 && h <= H ? X[n, h - 1] : 0.0\n"
      "  S[n] max= P[n, h]\n"
      "  T[n] min= f64(P[n, r]) where r in 0..H, q in 1..2\n"
      "  Q[n] *= 2.5e-1\n"
      "  R[n] = max(P[n, 0], 1.0)\n"
      "}\n";
  int nerr;
  Ast *f = parse_quiet(text, &nerr);
  check(f && nerr == 0, "kernel with every statement form parses");
  if (!f) return;
  Ast *k = item(f, A_KERNEL);
  check(k->list2.len == 2, "parenthesised outputs");
  Ast *t = k->list3.data[0];
  check(t->kind == A_TENSOR && strcmp(t->name, "P") == 0 && t->list.len == 2,
        "tensor declaration");
  int ops[] = {'=', TOKOP_MAXEQ, TOKOP_MINEQ, TOKOP_MULEQ, '='};
  bool ok = true;
  for (int i = 0; i < 5; i++) ok &= ((Ast *)k->list3.data[i + 1])->op == ops[i];
  check(ok, "= max= min= *= operators");
  Ast *w = k->list3.data[3];
  check(w->list2.len == 2 && ((Ast *)w->list2.data[0])->kind == A_RANGE &&
            ((Ast *)w->list2.data[0])->b->kind == A_NAME,
        "where r in 0..H, q in 1..2 (0..H lexes as INT .. NAME)");
  Ast *mx = ((Ast *)k->list3.data[5])->b;
  check(mx->kind == A_CALL && strcmp(mx->name, "max") == 0 && mx->list.len == 2,
        "max(a, b) is a call");
  check(((Ast *)k->list3.data[4])->b->fval == 0.25, "float 2.5e-1");
}

static void test_expressions(void) {
  check_paren("a + b * c", "(a + (b * c))");
  check_paren("a * b + c", "((a * b) + c)");
  check_paren("a - b - c", "((a - b) - c)");
  check_paren("a / b % c", "((a / b) % c)");
  check_paren("-a * b", "((-a) * b)");
  check_paren("!a && b", "((!a) && b)");
  check_paren("a < b == c > d", "((a < b) == (c > d))");
  check_paren("a || b && c", "(a || (b && c))");
  check_paren("a && b || c", "((a && b) || c)");
  check_paren("a ? b : c ? d : e", "(a ? b : (c ? d : e))");
  check_paren("a || b ? c + 1 : d", "((a || b) ? (c + 1) : d)");
  check_paren("(a + b) * c", "((a + b) * c)");
  check_paren("a <= b != c >= d", "((a <= b) != (c >= d))");
  check_paren("- - a", "(-(-a))");
  check_paren("A[i, k + 1] * exp(x)", "(A[i, (k + 1)] * exp(x))");
  check_paren("f32(i) / 2.0", "(f32(i) / 2)");
  check_paren("1e-3 + 2.0e4 + 1.5", "((0.001 + 20000) + 1.5)");
  Ast *e = parse_expr("a +\n    b");
  check(e && e->loc.line == 2 && e->loc.col == 12 && e->a->loc.col == 10 && e->b->loc.line == 3 &&
            e->b->loc.col == 5,
        "binary op location is its operator's; operands keep theirs");
}

/* Steps print as text that parses back to the same steps. */
static void test_round_trip(void) {
  Ast *f = parse_quiet(example, NULL);
  Ast *t = item(f, A_SCHEDULE);
  if (!t) {
    check(false, "round trip: example");
    return;
  }
  char *text = steps_to_text(&t->list2);
  Vec back = {0};
  bool ok = parse_steps("<steps>", text, &back);
  check(ok && same_list(&t->list2, &back), "steps_to_text then parse_steps: same steps");
  check(strcmp(text, steps_to_text(&back)) == 0, "steps_to_text is stable");
  check(strstr(text, "a, b = split(C.i, parts = 4)\n") != NULL, "kwarg printed as written");
  const char *tricky = "x = f(a - (b - c), (a ? b : c) ? d : e, -(-3), 1.5e+300, 0.1, 2.0)\n"
                       "y = g(a * (b + c), (a + b) * c, !(a && b), a < b < c, a < (b < c))\n";
  Vec v = {0};
  ok = parse_steps("<tricky>", tricky, &v);
  char *t2 = steps_to_text(&v);
  Vec v2 = {0};
  check(ok && parse_steps("<tricky2>", t2, &v2) && same_list(&v, &v2),
        "expressions in steps round-trip");
  Vec one = {0};
  check(parse_steps("<s>", "io, ii = split(C.i, 32)\nparallel(io)", &one) && one.len == 2 &&
            strcmp(((Ast *)one.data[1])->name, "parallel") == 0,
        "parse_steps of two lines");
  Vec none = {0};
  diag_silent = true;
  check(!parse_steps("<s>", "split(C.i, ", &none) && none.len == 0,
        "parse_steps fails on bad text and adds nothing");
  diag_silent = false;
}

static void test_lexer_errors(void) {
  int nerr;
  check(!parse_quiet("const M = 99999999999999999999\n", &nerr) && nerr == 1 &&
            strstr(diag_last(), "t.tex:1:11: error: integer literal"),
        "integer overflow is a diagnostic");
  check(parse_quiet("const M = 9223372036854775807\n", &nerr) && nerr == 0, "INT64_MAX is fine");
  check(!parse_quiet("import \"abc\n", &nerr) && nerr >= 1 &&
            strstr(diag_last(), "unterminated string"),
        "unterminated string");
  check(!parse_quiet("const M = 1 @ 2\n", &nerr) && nerr == 1 &&
            strstr(diag_last(), "t.tex:1:13: error: unexpected character '@'"),
        "bad character, and no second message on its line");
  check(!parse_quiet("const M = 1e999\n", &nerr) && strstr(diag_last(), "out of range"),
        "float overflow");
  char path[] = "/tmp/texc_nul_XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) {
    static const char nul[] = "const M = 1\0\nconst N = 2\n";
    bool wrote = write(fd, nul, sizeof nul - 1) == (ssize_t)(sizeof nul - 1);
    close(fd);
    diag_reset();
    diag_silent = true;
    Ast *f = parse_file(path);
    diag_silent = false;
    check(wrote && !f && diag_errors() == 1 && strstr(diag_last(), "unexpected character '\\x00'"),
          "a NUL byte inside a file is a bad character, not the end");
    unlink(path);
  }
}

static void test_syntax_errors(void) {
  const char *bad =
      "kernel k(A: f32[N]) -> B: f32[N] {\n"
      "  B[i] = A[i k]\n"
      "  C[i] = (A[i] + 1\n"
      "  D[i] = 2\n"
      "}\n"
      "schedule k.s {\n"
      "  io, ii = split(B.i 4)\n"
      "  reorder io\n"
      "}\n"
      "kernal x\n"
      "const Z = 1\n";
  int nerr;
  check(!parse_quiet(bad, &nerr) && nerr == 5, "five errors reported in one run");
  parse_quiet("kernel k(A: f32[N]) -> B: f32[N] {\n  B[i] = A[i k]\n}\n", NULL);
  check(strcmp(diag_last(), "t.tex:2:14: error: expected ']' before 'k'") == 0,
        "expected ']' before 'k'");
  parse_quiet("kernel k(A: f32[N]) -> B: f32[N] {\n  B[i] = A[i]\n", NULL);
  check(strcmp(diag_last(), "t.tex:2:14: error: expected '}' before end of file") == 0,
        "expected '}' before end of file");
  parse_quiet("const M = \n", NULL);
  check(strcmp(diag_last(), "t.tex:1:10: error: expected expression before end of file") == 0,
        "expected expression");
  parse_quiet("kernel k(A: f33[N]) -> B: f32[N] { B[i] = A[i] }\n", NULL);
  check(strstr(diag_last(), "t.tex:1:13: error: unknown dtype 'f33'") != NULL, "unknown dtype");
}

static void test_deep_nesting(void) {
  int n = 20000;
  char *s = malloc((size_t)n * 2 + 64);
  strcpy(s, "const M = ");
  size_t len = strlen(s);
  for (int i = 0; i < n; i++) s[len++] = '(';
  s[len++] = '1';
  for (int i = 0; i < n; i++) s[len++] = ')';
  strcpy(s + len, "\n");
  int nerr;
  check(!parse_quiet(s, &nerr) && nerr == 1 && strstr(diag_last(), "nested too deeply"),
        "20000 parentheses: one error, no crash");
  len = strlen("const M = ");
  for (int i = 0; i < n; i++) {
    s[len++] = '1';
    s[len++] = '+';
  }
  strcpy(s + len, "1\n");
  check(!parse_quiet(s, &nerr) && nerr == 1 && strstr(diag_last(), "nested too deeply"),
        "a 20000-term sum: too deep");
  len = strlen("const M = ");
  for (int i = 0; i < n; i++) s[len++] = '-';
  strcpy(s + len, "1\n");
  check(!parse_quiet(s, &nerr) && nerr == 1, "20000 unary minus: one error");
  free(s);
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void test_imports(void) {
  char dir[] = "/tmp/texc_parse_XXXXXX";
  if (!mkdtemp(dir)) {
    check(false, "imports: mkdtemp");
    return;
  }
  const char *kern = "kernel %s(A: f32[N]) -> B: f32[N] { B[i] = A[i] }\n";
  char *sub = xprintf("%s/sub", dir), *lib = xprintf("%s/lib", dir);
  mkdir(sub, 0755);
  mkdir(lib, 0755);
  put(xprintf("%s/main.tex", dir), "import \"sub/a.tex\"\nimport \"sub/b.tex\"\n");
  put(xprintf("%s/a.tex", sub), xprintf("import \"c.tex\"\n%s", xprintf(kern, "ka")));
  put(xprintf("%s/b.tex", sub), xprintf("import \"c.tex\"\nimport \"std.tex\"\n%s",
                                          xprintf(kern, "kb")));
  put(xprintf("%s/c.tex", sub), xprintf(kern, "kc"));
  put(xprintf("%s/std.tex", lib), xprintf(kern, "kstd"));
  texc_stdlib_dir = lib;
  diag_reset();
  diag_silent = true;
  Ast *f = parse_file(xprintf("%s/main.tex", dir));
  diag_silent = false;
  check(f != NULL, "imports: relative to the file, then to the stdlib");
  if (f) {
    Ast *a = f->list.data[0], *b = f->list.data[1];
    Ast *ac = a->list.data[0], *bc = b->list.data[0], *bs = b->list.data[1];
    check(a->list.len == 2 && ac->kind == A_IMPORT && ac->list.len == 1 &&
              strcmp(((Ast *)ac->list.data[0])->name, "kc") == 0,
          "imports: nested import's items in its node");
    check(bc->ival == 1 && bc->list.len == 0, "imports: a file imported twice is parsed once");
    check(bs->list.len == 1 && strcmp(((Ast *)bs->list.data[0])->name, "kstd") == 0,
          "imports: stdlib fallback");
  }
  put(xprintf("%s/x.tex", dir), "import \"y.tex\"\n");
  put(xprintf("%s/y.tex", dir), "\n\nimport \"x.tex\"\n");
  diag_reset();
  diag_silent = true;
  f = parse_file(xprintf("%s/x.tex", dir));
  diag_silent = false;
  check(!f && strstr(diag_last(), "y.tex:3:1: error: import cycle:") != NULL,
        "imports: a cycle is an error at the import's line");
  put(xprintf("%s/m.tex", dir), "const A = 1\nimport \"nope.tex\"\n");
  diag_reset();
  diag_silent = true;
  f = parse_file(xprintf("%s/m.tex", dir));
  diag_silent = false;
  check(!f && strstr(diag_last(), "m.tex:2:1: error: cannot find 'nope.tex'") != NULL,
        "imports: a missing file is an error at the import's line");
  texc_stdlib_dir = "stdlib";
  char *cmd = xprintf("rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("# could not remove %s\n", dir);
}

static void test_print(void) {
  Ast *f = parse_quiet(example, NULL);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  ast_print(out, f);
  fclose(out);
  check(buf && strstr(buf, "kernel matmul  @4:1\n") && strstr(buf, "stmt +=  @5:3\n") &&
            strstr(buf, "step a, b = split(C.i, parts = 4)  @11:3\n"),
        "ast_print: kinds, steps and locations");
  free(buf);
}

int main(void) {
  test_file_structure();
  test_kernel_forms();
  test_expressions();
  test_round_trip();
  test_lexer_errors();
  test_syntax_errors();
  test_deep_nesting();
  test_imports();
  test_print();
  return failures ? 1 : 0;
}
