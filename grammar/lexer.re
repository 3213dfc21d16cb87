/* lexer.re — the .tex scanner (re2c 3.0) over a NUL-terminated buffer.
 *
 * Tokens are those of LANGUAGE.md "Lexical". Newlines are whitespace; the scanner tracks
 * line and column (1-based, in bytes) for every token. Bad characters, unterminated
 * strings and out-of-range numbers are diagnostics, after which scanning goes on.
 *
 * The scanner also carries the parser's error recovery (see parser.y): when the parser
 * has dropped the lookahead after a syntax error, the scanner either puts that token back
 * (it starts a line, closes a block, or starts a top-level item; each token at most once)
 * or skips the rest of its line; either way the next token is SYNC.
 *
 * `network` is a keyword only where a network can start (network_keyword below), so
 * that it stays free as the name of a tensor, a kernel, a parameter or a constant.
 */
#include "parser.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void lex_init(Lexer *lx, const char *file, const char *text, size_t len, int start) {
  memset(lx, 0, sizeof *lx);
  lx->file = file;
  lx->buf = lx->cur = lx->line_start = lx->hw = text;
  lx->end = text + len;
  lx->line = 1;
  lx->bol = true;
  lx->start = start;
  lx->whole_file = start == T_START_FILE;
  lx->prev_end = (Loc){file, 1, 1};
}

static Loc loc_at(const Lexer *lx, const char *p) {
  return (Loc){lx->file, lx->line, (int)(p - lx->line_start) + 1};
}

/* Move past a token or a blank ending at P. Errors are reported once per position even
 * when recovery scans the same text twice. */
static void advance(Lexer *lx, const char *p) {
  lx->cur = p;
  if (p > lx->hw) lx->hw = p;
}

/* Whether to report a lexical error at P: not if it was reported before. The parser
 * keeps quiet about the rest of that line (one mistake, one message). */
static bool fresh(Lexer *lx, const char *p) {
  if (p < lx->hw) return false;
  lx->lex_error_line = lx->line;
  return true;
}

static void bad_char(Lexer *lx, const char *s) {
  if (!fresh(lx, s)) return;
  unsigned char c = (unsigned char)*s;
  if (c >= 32 && c < 127)
    diag_error(loc_at(lx, s), "unexpected character '%c'", c);
  else
    diag_error(loc_at(lx, s), "unexpected character '\\x%02x'", c);
}

/* A decimal integer literal; too large is an error (and 0). */
static int64_t scan_int(Lexer *lx, const char *s, const char *e) {
  uint64_t v = 0;
  for (const char *p = s; p < e; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (v > (UINT64_C(9223372036854775807) - d) / 10) {
      if (fresh(lx, s))
        diag_error(loc_at(lx, s), "integer literal '%.*s' is too large (the largest is %lld)",
                   (int)(e - s), s, (long long)INT64_MAX);
      return 0;
    }
    v = v * 10 + d;
  }
  return (int64_t)v;
}

/* A hexadecimal integer literal 0x...; above INT64_MAX is an error (and 0). */
static int64_t scan_hex(Lexer *lx, const char *s, const char *e) {
  uint64_t v = 0;
  for (const char *p = s + 2; p < e; p++) {
    unsigned d = *p <= '9' ? (unsigned)(*p - '0') : (unsigned)((*p | 32) - 'a' + 10);
    if (v > (UINT64_C(9223372036854775807) - d) / 16) {
      if (fresh(lx, s))
        diag_error(loc_at(lx, s), "integer literal '%.*s' is too large (the largest is 0x7fffffffffffffff)",
                   (int)(e - s), s);
      return 0;
    }
    v = v * 16 + d;
  }
  return (int64_t)v;
}

/* A floating-point literal; one that overflows to infinity is an error. */
static double scan_float(Lexer *lx, const char *s, const char *e) {
  char tmp[128];
  size_t n = (size_t)(e - s) < sizeof tmp - 1 ? (size_t)(e - s) : sizeof tmp - 1;
  memcpy(tmp, s, n);
  tmp[n] = 0;
  errno = 0;
  double v = strtod(tmp, NULL);
  if (errno == ERANGE && (v > 1 || v < -1)) {
    if (fresh(lx, s))
      diag_error(loc_at(lx, s), "floating-point literal '%.*s' is out of range", (int)(e - s), s);
    return 0;
  }
  return v;
}

static bool is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* P past blanks, newlines and comments. */
static const char *skip_blanks(const char *p) {
  for (;;) {
    if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v' || *p == '\n') p++;
    else if (*p == '#')
      while (*p && *p != '\n') p++;
    else return p;
  }
}

/* Does the word `network` ending at P start a network: in a file, with a name and '('
 * after it? No valid file has an identifier followed by `NAME (` anywhere, so `network`
 * stays an identifier wherever one can stand; inside a block left open by mistake, the
 * keyword lets recovery say "expected '}' before 'network'". */
static bool network_keyword(const Lexer *lx, const char *p) {
  if (!lx->whole_file) return false;
  p = skip_blanks(p);
  if (!is_id_char(*p) || (*p >= '0' && *p <= '9')) return false;
  while (is_id_char(*p)) p++;
  return *skip_blanks(p) == '(';
}

/* Does the word `extern` ending at P start an extern kernel: is the next word `kernel`?
 * No valid file has an identifier before `kernel`, so elsewhere `extern` is a name. */
static bool extern_keyword(const char *p) {
  p = skip_blanks(p);
  return strncmp(p, "kernel", 6) == 0 && !is_id_char(p[6]);
}

/* Scan one token from lx->cur: its kind (T_END at the end), value in *V, location in *LOC
 * and start in *START. */
static int scan(Lexer *lx, YYSTYPE *v, Loc *loc, const char **start) {
  for (;;) {
    const char *s = lx->cur;
    const unsigned char *YYCURSOR = (const unsigned char *)s, *YYMARKER = YYCURSOR;
    const unsigned char *YYCTXMARKER = YYCURSOR;
    (void)YYMARKER;
    (void)YYCTXMARKER;
    *start = s;
    *loc = loc_at(lx, s);
#define TOKEN(t) do { advance(lx, (const char *)YYCURSOR); return (t); } while (0)
    /*!re2c
      re2c:define:YYCTYPE = "unsigned char";
      re2c:yyfill:enable = 0;

      id    = [A-Za-z_][A-Za-z0-9_]*;
      digits = [0-9]+;
      exp   = [eE] [+-]? digits;
      float = digits "." digits exp? | digits exp;

      "\x00" {
        if (s < lx->end) { bad_char(lx, s); advance(lx, s + 1); continue; }
        lx->cur = s;
        return T_END;
      }
      [ \t\r\f\v]+ | "#" [^\n\x00]* { advance(lx, (const char *)YYCURSOR); continue; }
      "\n" {
        advance(lx, (const char *)YYCURSOR);
        lx->line++;
        lx->line_start = lx->cur;
        lx->bol = true;
        continue;
      }

      "const"    { TOKEN(T_CONST); }
      "import"   { TOKEN(T_IMPORT); }
      "kernel"   { TOKEN(T_KERNEL); }
      "tensor"   { TOKEN(T_TENSOR); }
      "where"    { TOKEN(T_WHERE); }
      "in"       { TOKEN(T_IN); }
      "schedule" { TOKEN(T_SCHEDULE); }
      "for"      { TOKEN(T_FOR); }
      "auto"     { TOKEN(T_AUTO); }
      "max=" / [^=] { TOKEN(T_MAXEQ); }
      "argmax=" / [^=] { TOKEN(T_ARGMAXEQ); }
      "argmin=" / [^=] { TOKEN(T_ARGMINEQ); }
      "min=" / [^=] { TOKEN(T_MINEQ); }

      id {
        if (YYCURSOR - (const unsigned char *)s == 7 && memcmp(s, "network", 7) == 0 &&
            network_keyword(lx, (const char *)YYCURSOR))
          TOKEN(T_NETWORK);
        if (YYCURSOR - (const unsigned char *)s == 6 && memcmp(s, "extern", 6) == 0 &&
            extern_keyword((const char *)YYCURSOR))
          TOKEN(T_EXTERN);
        v->str = xstrndup(s, (size_t)((const char *)YYCURSOR - s));
        TOKEN(T_NAME);
      }
      digits {
        v->i = scan_int(lx, s, (const char *)YYCURSOR);
        TOKEN(T_INT);
      }
      "0" [xX] [0-9a-fA-F]+ {
        v->i = scan_hex(lx, s, (const char *)YYCURSOR);
        TOKEN(T_INT);
      }
      float {
        v->f = scan_float(lx, s, (const char *)YYCURSOR);
        TOKEN(T_FLOAT);
      }
      ["] [^"\n\x00]* ["] {
        v->str = xstrndup(s + 1, (size_t)((const char *)YYCURSOR - s) - 2);
        TOKEN(T_STRING);
      }
      ["] [^"\n\x00]* {
        if (fresh(lx, s)) diag_error(*loc, "unterminated string");
        v->str = xstrndup(s + 1, (size_t)((const char *)YYCURSOR - s) - 1);
        TOKEN(T_STRING);
      }

      "<=" { TOKEN(T_LE); }
      ">=" { TOKEN(T_GE); }
      "==" { TOKEN(T_EQ); }
      "!=" { TOKEN(T_NE); }
      "&&" { TOKEN(T_AND); }
      "||" { TOKEN(T_OR); }
      "<<" { TOKEN(T_SHL); }
      ">>" { TOKEN(T_SHR); }
      "+=" { TOKEN(T_ADDEQ); }
      "*=" { TOKEN(T_MULEQ); }
      ".." { TOKEN(T_DOTDOT); }
      "->" { TOKEN(T_ARROW); }
      [-+*/%<>!?:=,.()[\]{}&|^~] { TOKEN((unsigned char)*s); }

      * { bad_char(lx, s); advance(lx, (const char *)YYCURSOR); continue; }
    */
#undef TOKEN
  }
}

static bool is_toplevel(int t) {
  return t == T_CONST || t == T_IMPORT || t == T_KERNEL || t == T_SCHEDULE || t == T_NETWORK ||
         t == T_EXTERN;
}

/* LEX_SYNC_SKIP: drop the tokens left on lx->skip_line, but stop before one that closes
 * an open block or starts a top-level item. */
static void skip_line(Lexer *lx) {
  for (;;) {
    const char *cur = lx->cur, *ls = lx->line_start;
    int line = lx->line;
    bool bol = lx->bol;
    YYSTYPE v;
    Loc loc;
    const char *s;
    int t = scan(lx, &v, &loc, &s);
    if (t == T_END || loc.line != lx->skip_line || is_toplevel(t) || (t == '}' && lx->open > 0)) {
      lx->cur = cur;
      lx->line_start = ls;
      lx->line = line;
      lx->bol = bol;
      break;
    }
    lx->bol = false;
  }
  lx->sync = LEX_SYNC_NOW;
}

/* The parser has dropped the last token: put it back or skip its line, then SYNC. */
static void discarded(Lexer *lx) {
  int t = lx->tok_kind;
  if (t == '{') lx->open--;
  if (t == '}') lx->open++;
  if (!lx->tok) {
    lx->sync = LEX_SYNC_NOW;
    return;
  }
  bool stop = lx->tok_bol || is_toplevel(t) || (t == '}' && lx->open > 0);
  if (stop && lx->rewound != lx->tok) {
    lx->rewound = lx->tok;
    lx->cur = lx->tok;
    lx->line = lx->tok_loc.line;
    lx->line_start = lx->tok - (lx->tok_loc.col - 1);
    lx->bol = lx->tok_bol;
    lx->sync = LEX_SYNC_NOW;
  } else {
    lx->sync = LEX_SYNC_SKIP;
    lx->skip_line = lx->tok_loc.line;
  }
}

int lex_next(YYSTYPE *v, Loc *loc, Lexer *lx, bool after_error) {
  if (lx->start) {
    int t = lx->start;
    lx->start = 0;
    *loc = (Loc){lx->file, 1, 1};
    return t;
  }
  if (after_error) discarded(lx);
  if (lx->sync == LEX_SYNC_SKIP) skip_line(lx);
  if (lx->sync == LEX_SYNC_NOW) {
    lx->sync = LEX_SYNC_NONE;
    lx->tok = NULL;
    lx->tok_kind = T_SYNC;
    *loc = lx->prev_end;
    return T_SYNC;
  }
  const char *s;
  int t = scan(lx, v, loc, &s);
  lx->tok_kind = t;
  if (t == T_END) {
    *loc = lx->prev_end;
    lx->tok = NULL;
    return t;
  }
  if (t == '{') lx->open++;
  if (t == '}') lx->open--;
  if (is_toplevel(t)) lx->in_network = t == T_NETWORK;
  if (t == '}' && lx->open <= 0) lx->in_network = false;
  lx->tok = s;
  lx->tok_end = lx->cur;
  lx->tok_loc = *loc;
  lx->tok_bol = lx->bol;
  lx->bol = false;
  lx->prev_end = (Loc){lx->file, loc->line, loc->col + (int)(lx->cur - s)};
  return t;
}
