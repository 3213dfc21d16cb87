/* diag.c — diagnostics in GCC's form: FILE:LINE:COL: error: MESSAGE, the line, a caret. */
#include "texc.h"

#include <stdlib.h>
#include <string.h>

typedef struct Source {
  const char *file, *text;
  struct Source *next;
} Source;

static Source *sources; /* malloc'd: lives across arenas */
static int nerrors;
static char last[1024];
bool diag_silent;
int diag_max_errors;

void diag_source(const char *file, const char *text) {
  Source *s = malloc(sizeof *s);
  if (!s) die_oom(0);
  s->file = strdup(file);
  s->text = strdup(text);
  s->next = sources;
  sources = s;
}

static const char *source_text(const char *file) {
  for (Source *s = sources; s; s = s->next)
    if (strcmp(s->file, file) == 0) return s->text;
  return NULL;
}

/* Print line LINE of FILE's text and a caret under column COL. */
static void print_caret(Loc loc) {
  const char *p = source_text(loc.file);
  if (!p || loc.line < 1) return;
  for (int l = 1; l < loc.line && *p; p++)
    if (*p == '\n') l++;
  const char *end = strchr(p, '\n');
  int len = end ? (int)(end - p) : (int)strlen(p);
  /* Control bytes (a binary file, escape sequences) are shown as '?', never sent to the
   * terminal. */
  for (int i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)p[i];
    fputc(ch == '\t' || ch >= 0x20 ? ch : '?', stderr);
  }
  fputc('\n', stderr);
  for (int i = 1; i < loc.col && i <= len; i++) fputc(p[i - 1] == '\t' ? '\t' : ' ', stderr);
  fputs("^\n", stderr);
}

static void report(Loc loc, const char *kind, const char *fmt, va_list ap) {
  char msg[900];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (loc.file)
    snprintf(last, sizeof last, "%s:%d:%d: %s: %s", loc.file, loc.line, loc.col, kind, msg);
  else
    snprintf(last, sizeof last, "texc: %s: %s", kind, msg);
  if (diag_silent) return;
  fprintf(stderr, "%s\n", last);
  if (loc.file) print_caret(loc);
}

void diag_error(Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  nerrors++;
  report(loc, "error", fmt, ap);
  va_end(ap);
  /* As compilers do: 100 KB of garbage is not worth 100k diagnostics. */
  if (!diag_silent && diag_max_errors > 0 && nerrors >= diag_max_errors) {
    fprintf(stderr, "texc: error: too many errors (%d); stopping (--max-errors 0 shows all)\n", nerrors);
    exit(1);
  }
}

void diag_warning(Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char keep[sizeof last];
  memcpy(keep, last, sizeof last);
  report(loc, "warning", fmt, ap);
  memcpy(last, keep, sizeof last);
  va_end(ap);
}

void diag_note(Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char keep[sizeof last];
  memcpy(keep, last, sizeof last);
  report(loc, "note", fmt, ap);
  memcpy(last, keep, sizeof last);
  va_end(ap);
}

int diag_errors(void) { return nerrors; }
void diag_reset(void) { nerrors = 0; last[0] = 0; }
const char *diag_last(void) { return last; }

_Noreturn void die_oom(size_t bytes) {
  fputs("texc: error: out of memory", stderr);
  if (bytes) fprintf(stderr, " (asking for %zu bytes more)", bytes);
  fputs(": use -D to work at smaller sizes, or allow more memory\n", stderr);
  exit(1);
}

_Noreturn void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("texc: internal error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}
