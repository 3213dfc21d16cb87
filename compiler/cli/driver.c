/* driver.c — texc's command line: options, then the command, each of which goes through
 * the pipeline of pipeline.c (load, pick steps, schedule, lower, build):
 *   compile   ... -> emit (--emit, -o)          run, bench   ... -> build -> call / time
 *   fuzz      random steps -> interpret         tune         searched steps -> measure
 *
 * The commands and their options are in options.c (one table); `texc CMD --help`.
 *   compile: cmd_compile here; run, bench: run.c; fuzz-schedule: randsched.c;
 *   tune: autosched/tune.c (--runner: started here, dist/runner.c); records:
 *   autosched/records.c, report|plot report/report.c; network files: network_run.c and
 *   autosched/network_tune.c.
 */
#include "driver.h"

#include <limits.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autosched/autosched.h" /* tune_shared_measurer */
#include "dist/dist.h"              /* tune --runner */
#include "front/network.h"          /* networks: network*.c */
#include "onnx/onnx.h"              /* models: onnx/ */
#include "report/report.h"          /* records report|plot */
#include "texrt.h"

/* Where stdlib/ is: beside the binary's folder (build/texc -> stdlib), else ./stdlib. */
static void find_stdlib(const char *argv0) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return;
  *slash = 0;
  char *dir = xprintf("%s/../stdlib", exe);
  if (access(dir, R_OK) == 0) texc_stdlib_dir = dir;
  (void)argv0;
}

/* The emit kind from -o's extension when --emit is not given. */
static const char *kind_from_output(const char *out, Target t) {
  static const char *const ext[][2] = {{".so", "so"},   {".o", "obj"},   {".ll", "llvm"},
                                       {".s", "asm"},   {".h", "header"}, {".cu", "cuda"},
                                       {".ptx", "ptx"}, {".cl", "opencl"}};
  size_t n = strlen(out);
  for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
    size_t m = strlen(ext[i][0]);
    if (n > m && strcmp(out + n - m, ext[i][0]) == 0) return ext[i][1];
  }
  return backend_for(t)->default_emit;
}

/* `texc FILE --emit ast`: the parse alone. */
static int emit_ast(Cli *c) {
  Ast *file = parse_file(c->file);
  if (!file || diag_errors()) return 1;
  ast_print(stdout, file);
  return 0;
}

/* `texc FILE`: steps -> lower every selected kernel -> emit. */
static int cmd_compile(Cli *c, Program *p) {
  LoweredFunc **fns;
  int n = drv_lower_all(c, p, &fns, NULL);
  if (n < 0) return 1;
  if (c->emit && strcmp(c->emit, "ir") == 0) {
    for (int i = 0; i < n; i++) {
      if (i) putchar('\n');
      ir_print_func(stdout, fns[i]);
    }
    return 0;
  }
  if (!c->emit && !c->out) return 0; /* checked and lowered: nothing to write */
  const char *kind = c->emit ? c->emit : kind_from_output(c->out, c->o.target);
  const Backend *be = backend_for(c->o.target);
  if (!be->emit(fns, n, kind, c->out ? c->out : "-", &c->o)) return 1;
  return 0;
}

/* `texc measure-server ...`: the separate program texc-measure-server beside this one
 * (compiler/dist/server/; no compiler in it, so that it can be built for a board). */
static int measure_server(char **argv) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
  if (slash) strcpy(slash + 1, "texc-measure-server");
  argv[0] = slash ? exe : "texc-measure-server";
  execvp(argv[0], argv);
  fprintf(stderr, "texc: error: cannot run %s (make builds it beside texc)\n", argv[0]);
  return 1;
}

/* `texc records ACTION LOG`: report and plot are report/'s, show, best and distill
 * autosched/records.c's. */
static int cmd_records(Cli *c) {
  if (access(c->file, R_OK) != 0) {
    fprintf(stderr, "texc: error: cannot read %s: %s\n", c->file, strerror(errno));
    return 1;
  }
  if (!strcmp(c->action, "report") || !strcmp(c->action, "plot")) return report_main(c);
  return records_main(c);
}

/* `texc tune NET -D N=1,8`: the network at each size (each combination of the -D lists)
 * tuned in turn into the same records, for an equal share of --time and --trials; a
 * library of those sizes (`--emit so -D N=1,8 --records`) finds each one's schedules. */
static int cmd_tune(Cli *c, Program *p);
static int tune_sizes(Cli *c) {
  int nnets = cli_size_combos(c, 0, NULL), rc = 0;
  Cli one = *c;
  for (int i = 0; i < one.ndefs; i++) one.ndef_values[i] = 1;
  if (c->time_s > 0) one.time_s = c->time_s / nnets;
  if (c->trials > 0 && c->trials < INT_MAX) one.trials = (c->trials + nnets - 1) / nnets; /* INT_MAX: --time alone */
  for (int v = 0; v < nnets && rc == 0; v++) {
    cli_size_combos(c, v, NULL);
    printf("%s%s at", v ? "\n" : "", c->file);
    for (int i = 0, k = 0; i < c->ndefs; i++) {
      one.defs[i].value = c->defs[i].value;
      if (c->ndef_values[i] > 1) printf("%s %s=%lld", k++ ? "," : "", c->defs[i].name, (long long)c->defs[i].value);
    }
    printf(" (%d of %d sizes)\n", v + 1, nnets);
    rc = cmd_tune(&one, NULL);
  }
  return rc;
}

/* `texc tune` of the kernels of P, or of the network of C's file when P is NULL. With
 * --runner, the runner (compiler/dist/) is started here and measures every candidate as
 * the tuner's shared measurer. */
static int cmd_tune(Cli *c, Program *p) {
  if (!p && cli_size_combos(c, 0, NULL) > 1) return tune_sizes(c);
  if (!c->runner) return p ? tune_main(c, p) : net_tune_main(c);
  if (c->o.target != TARGET_LLVM && c->o.target != TARGET_OPENCL) {
    fprintf(stderr, "texc tune: error: --runner measures llvm (CPU) and opencl candidates; "
                    "tune --target %s on the machine that has the device\n", target_names[c->o.target]);
    return 1;
  }
  MeasureOpts mo = tune_measure_opts(c);
  Measurer runner = {0};
  if (!runner_start(c->runner, &mo, &runner)) return 1;
  tune_shared_measurer = &runner;
  int rc = p ? tune_main(c, p) : net_tune_main(c);
  tune_shared_measurer = NULL;
  runner_stop(&runner);
  return rc;
}

int drv_main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "measure-server") == 0) return measure_server(argv + 1);
  find_stdlib(argv[0]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  Cli c;
  cli_parse(&c, argc, argv);                             /* options.c */
  fill_int_edges = c.int_edges;
  onnx_random_weights(c.random_weights);
  if (c.cmd == CMD_RECORDS) return cmd_records(&c);      /* no .tex file */
  for (int i = 0; i < c.ndefs; i++)
    if (c.ndef_values[i] > 1 && ((c.cmd != CMD_COMPILE && c.cmd != CMD_TUNE && c.cmd != CMD_BENCH) ||
                                 !(onnx_is_model(c.file) || net_is_network_file(c.file)))) {
      fprintf(stderr, "texc: error: -D %s with several values makes a network's library of several sizes (`texc "
              "NET --emit so`, timed by `texc bench NET`, tuned by `texc tune NET`); `texc %s%s` takes one value\n", c.defs[i].name,
              c.cmd == CMD_COMPILE ? "" : cli_command_names[c.cmd], c.cmd == CMD_COMPILE ? "KERNELS.tex" : "");
      return 1;
    }
  if (c.cmd == CMD_IMPORT) { /* onnx/: the text for this target's CPU (integer convolutions with VNNI) */
    onnx_int8_convs(net_rewrites(c.o.target).int8);
    return onnx_import_main(c.file, c.out, c.defs, c.ndefs);
  }
  if (c.cmd == CMD_COMPILE && c.emit && strcmp(c.emit, "ast") == 0) return emit_ast(&c); /* any file */
  if (onnx_is_model(c.file) || net_is_network_file(c.file)) { /* networks: network*.c */
    if (c.cmd == CMD_TUNE) return cmd_tune(&c, NULL);
    return net_run_cli(&c);
  }
  Program *p = drv_load(&c);                             /* 1. parse + check */
  if (!p) return 1;
  if (c.cmd != CMD_COMPILE && p->nkernels == 0) { /* not a silent empty result */
    fprintf(stderr, "texc: error: %s defines no kernel to %s\n", c.file, cli_command_names[c.cmd]);
    return 1;
  }
  switch (c.cmd) {                                       /* 2.. pick steps, schedule, lower */
  case CMD_COMPILE: return cmd_compile(&c, p);           /* ... -> emit */
  case CMD_RUN: return drv_run(&c, p);                   /* ... -> build -> call (--check) */
  case CMD_BENCH: return drv_bench(&c, p);               /* ... -> build -> time */
  case CMD_FUZZ: return drv_fuzz_schedule(&c, p, false);        /* random steps -> interpret */
  case CMD_TUNE: return cmd_tune(&c, p);                 /* searched steps -> measure */
  default: return 1;
  }
}
