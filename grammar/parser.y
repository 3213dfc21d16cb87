/* parser.y — the grammar of .tex files (LANGUAGE.md): a pure, reentrant LALR(1) parser
 * that builds the AST of texc.h.
 *
 * Statements and steps have no separators: a statement ends where the next token cannot
 * continue it. Error recovery works line by line: after a syntax error the lexer skips the
 * rest of the offending line and hands the parser a SYNC token, which the `error SYNC`
 * rules of items, statements and steps consume (see lex_next in lexer.re). One run
 * thus reports one error per broken line. Inside a block the next line surely starts a
 * statement or a step, so errors are reported again at once (yyerrok); at the top level
 * the parser may be inside a block it failed to open, so Bison's usual three tokens of
 * silence apply.
 *
 * Two entry points share the grammar: the lexer's first token is START_FILE (a whole
 * file) or START_STEPS (the steps of one schedule block, for parse_steps).
 *
 * `network` is a contextual keyword: the lexer returns NETWORK only in a file and before
 * `NAME (`, where no identifier can stand; everywhere else it is an identifier.
 */
%require "3.8"
%define api.pure full
%define api.location.type {Loc}
%define api.token.prefix {T_}
%define parse.error custom
%define parse.lac full
%locations
%param {Lexer *lx}
%expect 0

%code requires {
#include "texc.h"

/* The scanner's state: lexer.re scans with it, the parser's actions build through it,
 * parse.c creates it. */
typedef struct Lexer {
  const char *file;
  const char *buf, *end;    /* the text; *end == 0 */
  const char *cur;          /* next character to scan */
  const char *line_start;   /* first character of cur's line */
  int line;
  bool bol;                 /* no token yet on cur's line */
  const char *hw;           /* lexical errors before this point were already reported */
  int lex_error_line;       /* the line of the last lexical error */
  Loc error_loc;            /* where the last syntax error was reported */
  /* The last token returned: the lookahead at a syntax error. */
  const char *tok, *tok_end;
  int tok_kind;
  Loc tok_loc;
  bool tok_bol;             /* first token on its line */
  Loc prev_end;             /* just after the token before it: where end of file is */
  /* Recovery (lexer.re): */
  int start;                /* first token to return, then 0 */
  int open;                 /* '{' given to the parser, less '}' (blocks open) */
  int sync;                 /* LEX_SYNC_*: what lex_next does next */
  int skip_line;            /* LEX_SYNC_SKIP: skip the rest of this line */
  const char *rewound;      /* the last token put back; never twice */
  bool whole_file;          /* START_FILE: `network` may start an item */
  bool in_network;          /* since NETWORK, until its block closes: messages say "call" */
  /* Results: */
  bool too_deep;            /* "nested too deeply" was reported */
  Ast *out;                 /* START_FILE: items go to out->list */
  Vec steps;                /* START_STEPS: the steps */
} Lexer;

enum { LEX_SYNC_NONE, LEX_SYNC_NOW, LEX_SYNC_SKIP };

/* A node's location is its first token's; empty rules take the previous symbol's. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                   \
  do {                                                \
    if (N) (Cur) = YYRHSLOC(Rhs, 1);                  \
    else (Cur) = YYRHSLOC(Rhs, 0);                    \
  } while (0)
}

%code provides {
/* lexer.re */
void lex_init(Lexer *lx, const char *file, const char *text, size_t len, int start);
/* The next token. AFTER_ERROR: the parser has just shifted `error`, so it has dropped
 * the last token (the recovery of lexer.re then gives SYNC). */
int lex_next(YYSTYPE *lval, Loc *lloc, Lexer *lx, bool after_error);
}

%code {
#include <string.h>

/* Deeper expressions are an error: later passes recurse on them. */
#define MAX_EXPR_DEPTH 500
/* The parser's own stack: beyond this, "nested too deeply" (yyerror). */
#define YYMAXDEPTH 2000

static void yyerror(const Loc *loc, Lexer *lx, const char *msg);

/* yyparse calls yylex only to read a new lookahead; in a state entered by shifting
 * `error`, that means it has just discarded the previous one. */
#define yylex(lval, lloc, lx) lex_next(lval, lloc, lx, yystos[yystate] == YYSYMBOL_YYerror)

/* Every node the parser makes carries its expression depth. */
typedef struct Node {
  Ast ast;
  int depth;
} Node;

/* A new node of kind K at LOC. */
static Ast *mk(AstKind k, Loc loc) {
  Node *n = xalloc(sizeof *n);
  n->ast.kind = k;
  n->ast.loc = loc;
  n->depth = 1;
  return &n->ast;
}

static int depth(const Ast *a) { return a ? ((const Node *)a)->depth : 0; }

/* Record that N sits above child C; report (once) when expressions nest too deeply. */
static void above(Lexer *lx, Ast *n, const Ast *c) {
  Node *p = (Node *)n;
  if (depth(c) + 1 > p->depth) p->depth = depth(c) + 1;
  if (p->depth > MAX_EXPR_DEPTH && !lx->too_deep) {
    lx->too_deep = true;
    diag_error(n->loc, "expression nested too deeply (more than %d levels)", MAX_EXPR_DEPTH);
  }
}

static Ast *mk_name(AstKind k, Loc loc, const char *name) {
  Ast *a = mk(k, loc);
  a->name = name;
  return a;
}

static Ast *mk_unary(Lexer *lx, Loc loc, int op, Ast *x) {
  Ast *a = mk(A_UNARY, loc);
  a->op = op;
  a->a = x;
  above(lx, a, x);
  return a;
}

static Ast *mk_binary(Lexer *lx, Loc loc, int op, Ast *x, Ast *y) {
  Ast *a = mk(A_BINARY, loc);
  a->op = op;
  a->a = x;
  a->b = y;
  above(lx, a, x);
  above(lx, a, y);
  return a;
}

/* NAME[list] or NAME(list): an access or a call. */
static Ast *mk_apply(Lexer *lx, AstKind k, Loc loc, const char *name, Vec list) {
  Ast *a = mk_name(k, loc, name);
  a->list = list;
  for (int i = 0; i < list.len; i++) above(lx, a, list.data[i]);
  return a;
}

/* NAME: DTYPE[SHAPE] as a kernel parameter, an output or a `tensor`:
 * name2 is the dtype's text and op its DType. */
static Ast *mk_param(AstKind k, Loc loc, const char *name, const char *dtype, Loc dloc,
                     Vec shape) {
  Ast *a = mk_name(k, loc, name);
  a->name2 = dtype;
  DType t = DT_F32;
  if (!dtype_parse(dtype, &t))
    diag_error(dloc, "unknown dtype '%s' (expected f32, f64, f16, i8, i16, i32, i64, u8, u32 "
               "or bool)", dtype);
  a->op = (int)t;
  a->list = shape;
  return a;
}

static Vec vec1(void *p) {
  Vec v = {0};
  vec_push(&v, p);
  return v;
}
}

%union {
  Ast *ast;
  Vec vec;
  const char *str;
  int64_t i;
  double f;
  int op;
}

%token END 0 "end of file"
%token <str> NAME "identifier"
%token <i> INT "integer"
%token <f> FLOAT "number"
%token <str> STRING "string"
%token LE "'<='" GE "'>='" EQ "'=='" NE "'!='" AND "'&&'" OR "'||'" SHL "'<<'" SHR "'>>'"
%token ADDEQ "'+='" MAXEQ "'max='" MINEQ "'min='" MULEQ "'*='"
%token ARGMAXEQ "'argmax='" ARGMINEQ "'argmin='"
%token DOTDOT "'..'" ARROW "'->'"
%token CONST "'const'" IMPORT "'import'" KERNEL "'kernel'" TENSOR "'tensor'"
%token WHERE "'where'" IN "'in'" SCHEDULE "'schedule'" FOR "'for'" AUTO "'auto'"
%token NETWORK "'network'" EXTERN "'extern'"
%token SYNC "end of line" START_FILE "start of file" START_STEPS "start of steps"

%type <ast> expr primary param stmt range kernel schedule step arg network call extern
%type <vec> exprs exprs_opt params params_opt outputs body where_opt ranges
%type <vec> names targets for_opt steps args args_opt calls names_opt
%type <op> assign

%right '?' ':'
%left OR
%left AND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' LE '>' GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%%

start:
  START_FILE items
| START_STEPS steps        { lx->steps = $2; }
;

/* ---- top level ---------------------------------------------------------------- */

items:
  %empty
| items item
| items error SYNC
;

item:
  CONST consts
| IMPORT STRING           { Ast *a = mk(A_IMPORT, @1); a->sval = $2; vec_push(&lx->out->list, a); }
| kernel                  { vec_push(&lx->out->list, $1); }
| schedule                { vec_push(&lx->out->list, $1); }
| network                 { vec_push(&lx->out->list, $1); }
| extern                  { vec_push(&lx->out->list, $1); }
;

/* const M = 1024, N = 2 * M: one A_CONST per name */
consts:
  const_def
| consts ',' const_def
;

const_def:
  NAME '=' expr           { Ast *a = mk_name(A_CONST, @1, $1); a->a = $3; vec_push(&lx->out->list, a); }
;

/* ---- kernels ------------------------------------------------------------------ */

kernel:
  KERNEL NAME '(' params_opt ')' ARROW outputs '{' body '}'
      { $$ = mk_name(A_KERNEL, @1, $2); $$->list = $4; $$->list2 = $7; $$->list3 = $9; }
;

/* extern kernel sort(X: f32[n]) -> Y: f32[n]: a C function the user links (LANGUAGE.md) */
extern:
  EXTERN KERNEL NAME '(' params_opt ')' ARROW outputs
      { $$ = mk_name(A_EXTERN, @1, $3); $$->list = $5; $$->list2 = $8; }
;

params_opt:
  %empty                  { $$ = (Vec){0}; }
| params
;

params:
  param                   { $$ = vec1($1); }
| params ',' param         { $$ = $1; vec_push(&$$, $3); }
;

param:
  NAME ':' NAME '[' exprs_opt ']'  { $$ = mk_param(A_PARAM, @1, $1, $3, @3, $5); }
;

outputs:
  param                   { $$ = vec1($1); }
| '(' params ')'          { $$ = $2; }
;

body:
  %empty                  { $$ = (Vec){0}; }
| body stmt               { $$ = $1; vec_push(&$$, $2); }
| body error SYNC         { $$ = $1; yyerrok; }
;

stmt:
  NAME '[' exprs_opt ']' assign expr where_opt
      { $$ = mk(A_STMT, @1);
        $$->a = mk_apply(lx, A_ACCESS, @1, $1, $3);
        $$->op = $5; $$->b = $6; $$->list2 = $7; }
| TENSOR NAME ':' NAME '[' exprs_opt ']'
      { $$ = mk_param(A_TENSOR, @1, $2, $4, @4, $6); }
| names '=' NAME '(' names_opt ')'
      { $$ = mk_name(A_CALLSTMT, @1, $3); $$->list = $1; $$->list2 = $5; }
;

names_opt:
  %empty                  { $$ = (Vec){0}; }
| names
;

assign:
  '='                     { $$ = '='; }
| ADDEQ                   { $$ = TOKOP_ADDEQ; }
| MAXEQ                   { $$ = TOKOP_MAXEQ; }
| MINEQ                   { $$ = TOKOP_MINEQ; }
| MULEQ                   { $$ = TOKOP_MULEQ; }
| ARGMAXEQ                { $$ = TOKOP_ARGMAXEQ; }
| ARGMINEQ                { $$ = TOKOP_ARGMINEQ; }
;

where_opt:
  %empty                  { $$ = (Vec){0}; }
| WHERE ranges            { $$ = $2; }
;

ranges:
  range                   { $$ = vec1($1); }
| ranges ',' range        { $$ = $1; vec_push(&$$, $3); }
;

range:
  NAME IN expr DOTDOT expr  { $$ = mk_name(A_RANGE, @1, $1); $$->a = $3; $$->b = $5; }
;

/* ---- networks (NETWORKS.md) ---------------------------------------------------- */

network:
  NETWORK NAME '(' params_opt ')' ARROW outputs '{' calls '}'
      { $$ = mk_name(A_NETWORK, @1, $2); $$->list = $4; $$->list2 = $7; $$->list3 = $9; }
;

calls:
  %empty                  { $$ = (Vec){0}; }
| calls call              { $$ = $1; vec_push(&$$, $2); }
| calls error SYNC        { $$ = $1; yyerrok; }
;

/* y = conv2d_nhwc(x, w, PH = 1); a call without a result parses (network.c reports it) */
call:
  names '=' NAME '(' args_opt ')'  { $$ = mk_name(A_NETCALL, @1, $3); $$->list = $1; $$->list2 = $5; }
| NAME '(' args_opt ')'            { $$ = mk_name(A_NETCALL, @1, $1); $$->list2 = $3; }
;

/* ---- schedules ---------------------------------------------------------------- */

schedule:
  SCHEDULE NAME '.' NAME for_opt '{' steps '}'
      { $$ = mk_name(A_SCHEDULE, @1, $2); $$->name2 = $4; $$->list = $5; $$->list2 = $7; }
| SCHEDULE NAME '.' NAME for_opt '=' AUTO
      { $$ = mk_name(A_SCHEDULE, @1, $2); $$->name2 = $4; $$->list = $5; $$->ival = 1; }
;

for_opt:
  %empty                  { $$ = (Vec){0}; }
| FOR targets             { $$ = $2; }
;

targets:
  NAME                    { $$ = vec1(mk_name(A_NAME, @1, $1)); }
| targets ',' NAME        { $$ = $1; vec_push(&$$, mk_name(A_NAME, @3, $3)); }
;

steps:
  %empty                  { $$ = (Vec){0}; }
| steps step              { $$ = $1; vec_push(&$$, $2); }
| steps error SYNC        { $$ = $1; yyerrok; }
;

/* a, b = split(C.i, 4)   or   reorder(a, b) */
step:
  names '=' NAME '(' args_opt ')'  { $$ = mk_name(A_STEP, @1, $3); $$->list = $1; $$->list2 = $5; }
| NAME '(' args_opt ')'            { $$ = mk_name(A_STEP, @1, $1); $$->list2 = $3; }
;

names:
  NAME                    { $$ = vec1(mk_name(A_NAME, @1, $1)); }
| names ',' NAME          { $$ = $1; vec_push(&$$, mk_name(A_NAME, @3, $3)); }
;

args_opt:
  %empty                  { $$ = (Vec){0}; }
| args
;

args:
  arg                     { $$ = vec1($1); }
| args ',' arg            { $$ = $1; vec_push(&$$, $3); }
;

arg:
  expr
| NAME '=' expr           { $$ = mk_name(A_KWARG, @1, $1); $$->a = $3; above(lx, $$, $3); }
;

/* ---- expressions -------------------------------------------------------------- */

exprs:
  expr                    { $$ = vec1($1); }
| exprs ',' expr          { $$ = $1; vec_push(&$$, $3); }
;

exprs_opt:
  %empty                  { $$ = (Vec){0}; }
| exprs
;

expr:
  expr '?' expr ':' expr
      { $$ = mk(A_COND, @1); $$->a = $1; $$->b = $3; $$->c = $5;
        above(lx, $$, $1); above(lx, $$, $3); above(lx, $$, $5); }
| expr OR expr            { $$ = mk_binary(lx, @2, TOKOP_OR, $1, $3); }
| expr AND expr           { $$ = mk_binary(lx, @2, TOKOP_AND, $1, $3); }
| expr '|' expr           { $$ = mk_binary(lx, @2, '|', $1, $3); }
| expr '^' expr           { $$ = mk_binary(lx, @2, '^', $1, $3); }
| expr '&' expr           { $$ = mk_binary(lx, @2, '&', $1, $3); }
| expr EQ expr            { $$ = mk_binary(lx, @2, TOKOP_EQ, $1, $3); }
| expr NE expr            { $$ = mk_binary(lx, @2, TOKOP_NE, $1, $3); }
| expr '<' expr           { $$ = mk_binary(lx, @2, '<', $1, $3); }
| expr LE expr            { $$ = mk_binary(lx, @2, TOKOP_LE, $1, $3); }
| expr '>' expr           { $$ = mk_binary(lx, @2, '>', $1, $3); }
| expr GE expr            { $$ = mk_binary(lx, @2, TOKOP_GE, $1, $3); }
| expr SHL expr           { $$ = mk_binary(lx, @2, TOKOP_SHL, $1, $3); }
| expr SHR expr           { $$ = mk_binary(lx, @2, TOKOP_SHR, $1, $3); }
| expr '+' expr           { $$ = mk_binary(lx, @2, '+', $1, $3); }
| expr '-' expr           { $$ = mk_binary(lx, @2, '-', $1, $3); }
| expr '*' expr           { $$ = mk_binary(lx, @2, '*', $1, $3); }
| expr '/' expr           { $$ = mk_binary(lx, @2, '/', $1, $3); }
| expr '%' expr           { $$ = mk_binary(lx, @2, '%', $1, $3); }
| '-' expr %prec UNARY    { $$ = mk_unary(lx, @1, '-', $2); }
| '!' expr %prec UNARY    { $$ = mk_unary(lx, @1, '!', $2); }
| '~' expr %prec UNARY    { $$ = mk_unary(lx, @1, '~', $2); }
| primary
;

primary:
  INT                     { $$ = mk(A_INT, @1); $$->ival = $1; }
| FLOAT                   { $$ = mk(A_FLOAT, @1); $$->fval = $1; }
| NAME                    { $$ = mk_name(A_NAME, @1, $1); }
| NAME '.' NAME           { $$ = mk_name(A_MEMBER, @1, $1); $$->name2 = $3; }
| NAME '[' exprs_opt ']'  { $$ = mk_apply(lx, A_ACCESS, @1, $1, $3); }
| NAME '(' exprs_opt ')'  { $$ = mk_apply(lx, A_CALL, @1, $1, $3); }
| '(' expr ')'            { $$ = $2; }
;

%%

/* Memory exhaustion of the parser's stack is the only message that comes here. */
static void yyerror(const Loc *loc, Lexer *lx, const char *msg) {
  if (strcmp(msg, "memory exhausted") == 0) {
    if (!lx->too_deep) diag_error(*loc, "input nested too deeply");
    lx->too_deep = true;
    return;
  }
  diag_error(*loc, "%s", msg);
}

/* ---- syntax error messages: "expected ']' before 'x'" ---------------------------- */

typedef struct Expect {
  bool has[YYNTOKENS];
} Expect;

static bool all_of(const Expect *e, const yysymbol_kind_t *ks, int n) {
  for (int i = 0; i < n; i++)
    if (!e->has[ks[i]]) return false;
  return true;
}

static void drop(Expect *e, const yysymbol_kind_t *ks, int n) {
  for (int i = 0; i < n; i++) e->has[ks[i]] = false;
}

/* Token kinds of single characters. */
#define CH(c) ((yysymbol_kind_t)YYTRANSLATE(c))

/* Tokens that only continue what came before: binary operators (OPERATORS) and, after an
 * operand, '[' '(' '.'. They are never what is missing, so messages leave them out when
 * something else is expected. */
static bool is_in(yysymbol_kind_t k, const char *const *names, size_t n) {
  const char *name = yysymbol_name(k);
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, names[i]) == 0) return true;
  return false;
}

static bool is_operator(yysymbol_kind_t k) {
  static const char *const ops[] = {"'+'",  "'-'",  "'*'",  "'/'",  "'%'",  "'<'",
                                    "'>'",  "'?'",  "'<='", "'>='", "'=='", "'!='",
                                    "'&&'", "'||'", "'where'", "'&'", "'|'", "'^'", "'<<'",
                                    "'>>'"};
  return is_in(k, ops, sizeof ops / sizeof ops[0]);
}

static bool is_postfix(yysymbol_kind_t k) {
  static const char *const ops[] = {"'['", "'('", "'.'"};
  return is_in(k, ops, sizeof ops / sizeof ops[0]);
}

static void add_name(char *buf, size_t cap, const char *name) {
  size_t len = strlen(buf);
  snprintf(buf + len, cap - len, "%s", name);
}

/* The lookahead as the user wrote it: `'x'`, or "end of file". */
static void describe_lookahead(Lexer *lx, yysymbol_kind_t la, char *buf, size_t cap) {
  if (la == YYSYMBOL_YYEOF || !lx->tok) {
    snprintf(buf, cap, "end of file");
    return;
  }
  int n = (int)(lx->tok_end - lx->tok);
  if (n > 32) snprintf(buf, cap, "'%.29s...'", lx->tok);
  else snprintf(buf, cap, "'%.*s'", n, lx->tok);
}

/* Which tokens a message lists: expression starters become "expression", continuations
 * go when anything else is possible, a ',' goes when a closing bracket would do. */
static int simplify_expected(Expect *e, yysymbol_kind_t la, bool *expr, bool *stmt,
                             bool *step) {
  *step = false;
  const yysymbol_kind_t expr_start[] = {YYSYMBOL_NAME, YYSYMBOL_INT, YYSYMBOL_FLOAT,
                                        CH('('), CH('-'), CH('!'), CH('~')};
  *expr = all_of(e, expr_start, 7);
  if (*expr) drop(e, expr_start, 7);
  e->has[YYSYMBOL_NETWORK] = false; /* contextual: messages keep to the real keywords */
  e->has[YYSYMBOL_EXTERN] = false;
  *stmt = e->has[YYSYMBOL_NAME] && e->has[YYSYMBOL_TENSOR];
  if (*stmt) e->has[YYSYMBOL_NAME] = e->has[YYSYMBOL_TENSOR] = false;
  e->has[YYSYMBOL_YYEOF] = false;
  if (e->has[CH('=')] && e->has[YYSYMBOL_ADDEQ]) /* "expected '='" says it well enough */
    e->has[YYSYMBOL_ADDEQ] = e->has[YYSYMBOL_MAXEQ] = e->has[YYSYMBOL_MINEQ] =
        e->has[YYSYMBOL_MULEQ] = e->has[YYSYMBOL_ARGMAXEQ] = e->has[YYSYMBOL_ARGMINEQ] = false;
  int others = *expr + *stmt, operators = 0;
  for (int k = 0; k < YYNTOKENS; k++) {
    others += e->has[k] && !is_operator(k) && !is_postfix(k);
    operators += e->has[k] && is_operator(k);
  }
  if (others && operators)
    for (int k = 0; k < YYNTOKENS; k++)
      if (is_operator(k) || is_postfix(k)) e->has[k] = false;
  if (e->has[CH(')')] || e->has[CH(']')]) e->has[CH(',')] = false;
  if (e->has[CH(')')]) e->has[CH('=')] = false; /* a step's kwarg */
  bool toplevel = la == YYSYMBOL_YYEOF || la == YYSYMBOL_KERNEL || la == YYSYMBOL_SCHEDULE ||
                  la == YYSYMBOL_CONST || la == YYSYMBOL_IMPORT || la == YYSYMBOL_NETWORK ||
                  la == YYSYMBOL_EXTERN;
  if (toplevel && e->has[CH('}')]) {
    memset(e->has, 0, sizeof e->has);
    e->has[CH('}')] = true;
    *expr = *stmt = false;
  }
  int n = *expr + *stmt;
  for (int k = 0; k < YYNTOKENS; k++) n += e->has[k];
  if (n == 2 && e->has[YYSYMBOL_NAME] && e->has[CH('}')]) *step = true; /* only after a step */
  return n;
}

/* parse.error custom: one diagnostic at the lookahead, in GCC's words. */
static int yyreport_syntax_error(const yypcontext_t *ctx, Lexer *lx) {
  yysymbol_kind_t exp[YYNTOKENS];
  int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
  if (n < 0) return n;
  yysymbol_kind_t la = yypcontext_token(ctx);
  Loc loc = *yypcontext_location(ctx);
  if (loc.line == lx->lex_error_line) {
    /* The scanner has reported this line's mistake; say nothing more, but fail. */
    return 0;
  }
  if (loc.line == lx->error_loc.line && loc.col == lx->error_loc.col) return 0; /* put back */
  lx->error_loc = loc;
  char what[48];
  describe_lookahead(lx, la, what, sizeof what);
  Expect e = {{0}};
  for (int i = 0; i < n; i++) e.has[exp[i]] = true;
  bool expr, stmt, step;
  int count = simplify_expected(&e, la, &expr, &stmt, &step);
  if (count == 0 || count > 4) {
    diag_error(loc, "unexpected %s", what);
    return 0;
  }
  char list[256] = "";
  int i = 0;
  for (int k = -2; k < YYNTOKENS; k++) {
    const char *name = k == -2 ? (expr ? "expression" : NULL)
                     : k == -1 ? (stmt ? "statement" : NULL)
                     : !e.has[k] ? NULL
                     : step && k == YYSYMBOL_NAME ? (lx->in_network ? "call" : "step")
                     : yysymbol_name((yysymbol_kind_t)k);
    if (!name) continue;
    if (i > 0) strcat(list, i == count - 1 ? " or " : ", ");
    add_name(list, sizeof list, name);
    i++;
  }
  diag_error(loc, "expected %s before %s", list, what);
  return 0;
}
