/* parse.c — the parser's entry points: files with their imports, strings, step lists.
 *
 * The grammar itself is grammar/parser.y and the scanner grammar/lexer.re; this file
 * runs them and resolves `import "x.tex"`: relative to the importing file's folder, then
 * to texc_stdlib_dir. Each file is parsed once per parse_file call; an import of a file
 * already imported leaves its A_IMPORT node's list empty (ival = 1), so that every kernel
 * appears once in the tree. A resolved A_IMPORT's name is the path that was read. A cycle
 * or a missing file is an error at the import.
 */
#include "texc.h"
#include "parser.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *texc_stdlib_dir = "stdlib";

/* Imports nested deeper than this are an error (they are surely a mistake). */
#define MAX_IMPORT_DEPTH 64

/* Run the parser over TEXT (LEN bytes, NUL-terminated) in mode START (T_START_FILE or
 * T_START_STEPS). Returns the A_FILE (its steps in *STEPS for T_START_STEPS), or NULL
 * when there were errors (reported). */
static Ast *run_parser(const char *file, const char *text, size_t len, int start, Vec *steps) {
  int before = diag_errors();
  const char *name = xstrdup(file);
  Lexer lx;
  lex_init(&lx, name, text, len, start);
  Ast *f = ast_new(A_FILE, (Loc){name, 1, 1});
  f->sval = name;
  lx.out = f;
  int rc = yyparse(&lx);
  if (steps) *steps = lx.steps;
  if (rc != 0 && diag_errors() == before) diag_error(lx.prev_end, "syntax error");
  if (rc != 0 || diag_errors() != before) return NULL;
  return f;
}

/* ---- imports -------------------------------------------------------------------- */

typedef struct Seen {
  const char *key;  /* canonical path */
  const char *name; /* as the user sees it */
} Seen;

/* Files of one parse_file call: those being parsed (a stack: cycles) and those done. */
typedef struct Imports {
  Seen stack[MAX_IMPORT_DEPTH + 1];
  int depth;
  Vec done; /* Seen* */
} Imports;

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The folder of PATH ("." when it has none). */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  if (slash == path) return xstrdup("/");
  return xstrndup(path, (size_t)(slash - path));
}

static char *join(const char *dir, const char *rel) {
  if (rel[0] == '/' || strcmp(dir, ".") == 0) return xstrdup(rel);
  return xprintf("%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", rel);
}

/* A name that is the same for every path to one file. */
static const char *canonical(const char *path) {
  char buf[PATH_MAX];
  return realpath(path, buf) ? xstrdup(buf) : xstrdup(path);
}

static const Seen *find_done(const Imports *im, const char *key) {
  for (int i = 0; i < im->done.len; i++) {
    const Seen *s = im->done.data[i];
    if (strcmp(s->key, key) == 0) return s;
  }
  return NULL;
}

/* Does PATH name a .tex file? Only those are imported, and only their lines are quoted in
 * diagnostics: `import "/etc/shadow"` must not print the file's first line. */
static bool is_tex_name(const char *path) {
  size_t n = strlen(path);
  return n > 4 && strcmp(path + n - 4, ".tex") == 0;
}

/* Where `import "REL"` in a file of folder DIR points: DIR/REL, then STDLIB/REL. NULL
 * (and an error at IMP) when neither exists. */
static char *locate(const Ast *imp, const char *dir) {
  const char *rel = imp->sval;
  if (!rel[0]) {
    diag_error(imp->loc, "import of an empty path");
    return NULL;
  }
  if (!is_tex_name(rel)) {
    diag_error(imp->loc, "only .tex files can be imported, not '%s'", rel);
    return NULL;
  }
  char *p = join(dir, rel);
  if (is_file(p)) return p;
  if (rel[0] != '/' && texc_stdlib_dir) {
    char *q = join(texc_stdlib_dir, rel);
    if (is_file(q)) return q;
    diag_error(imp->loc, "cannot find '%s' (looked for '%s' and '%s')", rel, p, q);
    return NULL;
  }
  diag_error(imp->loc, "cannot find '%s'", rel);
  return NULL;
}

/* "a.tex -> b.tex -> a.tex": the cycle that importing KEY again would close. */
static char *cycle_text(const Imports *im, const char *key, const char *name) {
  int from = 0;
  for (int i = 0; i < im->depth; i++)
    if (strcmp(im->stack[i].key, key) == 0) from = i;
  char *s = xstrdup("");
  for (int i = from; i < im->depth; i++) s = xprintf("%s%s -> ", s, im->stack[i].name);
  return xprintf("%s%s", s, name);
}

static void resolve(Ast *file, Imports *im);

/* Resolve one A_IMPORT node of a file in folder DIR: parse what it names (unless already
 * parsed) and put that file's items in the node's list. */
static void import_one(Ast *imp, const char *dir, Imports *im) {
  char *path = locate(imp, dir);
  if (!path) return;
  const char *key = canonical(path);
  if (!is_tex_name(key)) { /* a link named x.tex to a file that is not one: quote none of it */
    diag_error(imp->loc, "only .tex files can be imported: '%s' leads to '%s'", imp->sval, key);
    return;
  }
  imp->name = path;
  for (int i = 0; i < im->depth; i++)
    if (strcmp(im->stack[i].key, key) == 0) {
      diag_error(imp->loc, "import cycle: %s", cycle_text(im, key, path));
      return;
    }
  if (find_done(im, key)) {
    imp->ival = 1;
    return;
  }
  if (im->depth >= MAX_IMPORT_DEPTH) {
    diag_error(imp->loc, "imports nested too deeply (more than %d files)", MAX_IMPORT_DEPTH);
    return;
  }
  size_t len;
  char *text = read_file(path, &len);
  if (!text) {
    diag_error(imp->loc, "cannot read '%s'", path);
    return;
  }
  if (!diag_silent) diag_source(path, text);
  Ast *f = run_parser(path, text, len, T_START_FILE, NULL);
  free(text);
  Seen *s = xalloc(sizeof *s);
  *s = (Seen){key, path};
  vec_push(&im->done, s);
  if (!f) return;
  im->stack[im->depth++] = *s;
  resolve(f, im);
  im->depth--;
  imp->list = f->list;
}

/* Resolve every import of FILE (an A_FILE whose sval is its path), recursively. */
static void resolve(Ast *file, Imports *im) {
  const char *dir = dir_of(file->sval);
  for (int i = 0; i < file->list.len; i++) {
    Ast *item = file->list.data[i];
    if (item->kind == A_IMPORT) import_one(item, dir, im);
  }
}

/* Parse TEXT as the file PATH, then its imports. */
static Ast *parse_with_imports(const char *path, const char *text, size_t len) {
  int before = diag_errors();
  Ast *f = run_parser(path, text, len, T_START_FILE, NULL);
  if (!f) return NULL;
  Imports im = {0};
  Seen top = {canonical(path), f->sval};
  im.stack[im.depth++] = top;
  Seen *done = xalloc(sizeof *done);
  *done = top;
  vec_push(&im.done, done);
  resolve(f, &im);
  return diag_errors() == before ? f : NULL;
}

/* ---- entry points ---------------------------------------------------------------- */

Ast *parse_file(const char *path) {
  size_t len;
  char *text = read_file(path, &len);
  if (!text) {
    diag_error((Loc){0}, "cannot read '%s'", path);
    return NULL;
  }
  if (is_tex_name(path)) diag_source(path, text);
  Ast *f = parse_with_imports(path, text, len);
  free(text);
  return f;
}

Ast *parse_string(const char *file, const char *text) {
  if (!diag_silent) diag_source(file, text);
  return parse_with_imports(file, text, strlen(text));
}

bool parse_steps(const char *file, const char *text, Vec *out) {
  if (!diag_silent) diag_source(file, text);
  Vec steps = {0};
  if (!run_parser(file, text, strlen(text), T_START_STEPS, &steps)) return false;
  for (int i = 0; i < steps.len; i++) vec_push(out, steps.data[i]);
  return true;
}
