/* fuzz_parse.c — a libFuzzer target over the parser (tests/fuzz/run.sh builds and runs it).
 *
 * Any input: parse_string and parse_steps must return (no crash, no hang, no sanitizer
 * report). Inputs that parse: ast_print must work, and every hand schedule's steps must
 * survive steps_to_text -> parse_steps unchanged (the tuner relies on it); a difference
 * aborts, so the fuzzer keeps the input as a crash.
 */
#include "texc.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

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

/* Structural equality of two ASTs, locations aside. */
static bool same(const Ast *a, const Ast *b) {
  if (!a || !b) return a == b;
  return a->kind == b->kind && a->op == b->op && a->ival == b->ival &&
         memcmp(&a->fval, &b->fval, sizeof a->fval) == 0 && same_str(a->name, b->name) &&
         same_str(a->name2, b->name2) && same_str(a->sval, b->sval) && same(a->a, b->a) &&
         same(a->b, b->b) && same(a->c, b->c) && same_list(&a->list, &b->list) &&
         same_list(&a->list2, &b->list2) && same_list(&a->list3, &b->list3);
}

/* Every schedule of FILE: its steps as text parse back to the same steps. */
static void check_round_trips(const Ast *file) {
  for (int i = 0; i < file->list.len; i++) {
    const Ast *s = file->list.data[i];
    if (s->kind != A_SCHEDULE) continue;
    char *text = steps_to_text(&s->list2);
    Vec back = {0};
    if (!parse_steps("<round trip>", text, &back) || !same_list(&s->list2, &back)) {
      fprintf(stderr, "steps do not round-trip:\n%s", text);
      abort();
    }
    if (strcmp(text, steps_to_text(&back)) != 0) {
      fprintf(stderr, "steps_to_text is not stable:\n%s", text);
      abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  static FILE *devnull;
  if (!devnull) devnull = fopen("/dev/null", "w");
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  Arena *arena = arena_new();
  Arena *old = arena_swap(arena);
  diag_silent = true;
  texc_stdlib_dir = "/nonexistent-texc-stdlib";
  diag_reset();
  /* Relative imports look in a folder that does not exist. */
  Ast *f = parse_string("/nonexistent-texc-fuzz/fuzz.tex", text);
  if (f) {
    ast_print(devnull, f);
    check_round_trips(f);
  }
  diag_reset();
  Vec steps = {0};
  if (parse_steps("<fuzz steps>", text, &steps)) {
    char *back = steps_to_text(&steps);
    Vec again = {0};
    if (!parse_steps("<round trip>", back, &again) || !same_list(&steps, &again)) {
      fprintf(stderr, "steps do not round-trip:\n%s", back);
      abort();
    }
  }
  arena_swap(old);
  arena_free(arena);
  free(text);
  return 0;
}
