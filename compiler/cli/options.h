/* options.h — texc's command line: its commands, the parsed options (Cli), and the one
 * parser (options.c) that every command goes through. The option table itself, with the
 * commands each option applies to and its help line, is in options.c. */
#ifndef CLI_OPTIONS_H
#define CLI_OPTIONS_H
#include "texc.h"

#define MAX_DEFINES 64
#define MAX_INPUTS 16

/* ORDER cli_command_names[] (options.c) */
typedef enum {
  CMD_COMPILE, /* texc FILE.tex: check, lower, emit */
  CMD_RUN,
  CMD_BENCH,
  CMD_TUNE,
  CMD_RECORDS,
  CMD_FUZZ,    /* fuzz-schedule */
  CMD_IMPORT,  /* import MODEL.onnx: a .tex network and its weights (onnx/) */
  CMD_COUNT
} Command;

extern const char *const cli_command_names[CMD_COUNT];

/* The parsed command line. Fields an option did not set keep their command's default
 * (cli_parse). */
typedef struct Cli {
  Command cmd;
  const char *file, *out, *schedule, *emit, *kernel, *records;
  const char *action;          /* records: show, best or distill */
  Define defs[MAX_DEFINES];
  int ndefs;
  int64_t *def_values[MAX_DEFINES]; /* -D NAME=V1,V2,...: a network library's sizes (deploy/); defs[i].value is V1 */
  int ndef_values[MAX_DEFINES];
  Options o;                   /* target, -O, --mcpu, --mtriple, --opencl-device, -v */
  bool check, interp;          /* run (interp: also fuzz-schedule) */
  bool int_edges;              /* run, fuzz-schedule: edge-heavy integer inputs */
  bool random_weights;         /* ONNX: fill stripped initializers from their generators */
  int repeat, number, count;   /* bench (repeat: also tune), fuzz-schedule */
  double min_repeat_ms;        /* bench, tune */
  bool json;                   /* bench: one JSON document instead of the table */
  uint64_t seed;               /* fuzz-schedule, tune */
  /* tune */
  int trials;                  /* a --time alone: no limit but the time */
  int batch, jobs, round;
  double time_s, run_timeout_s; /* 0: none / the default */
  bool check_all, quiet, deterministic;
  int max_errors;              /* stop after this many errors (0: never) */
  const char *runner;          /* tune --runner: measure through a texc-measure-server */
  /* tensor files (docs/CLI.md "Tensor files"; networks: docs/NETWORKS.md) and weights */
  const char *weights;         /* --weights F.safetensors */
  const char *inputs[MAX_INPUTS]; /* --input X.npy, in the kernel's or network's parameter order */
  int ninputs;
  const char *outputs[MAX_INPUTS]; /* --output OUT.npy, per output in order (networks: per result) */
  int noutputs;
  const char *expects[MAX_INPUTS]; /* --expect REF.npy (networks: or .pb), per output in order */
  int nexpects;
  const char *name;            /* --name: a network library's entry point (deploy/) */
  Ast *ast;                    /* drv_load's parse of FILE */
} Cli;

/* The -D lists (NAME=V1,V2,...): how many combinations of their values there are (1: no
 * list), and with V in [0, that) C's defines set to combination V (the last list varying
 * fastest) and, if VALUES, the lists' values of it written there in the order of C's -D. */
int cli_size_combos(Cli *c, int v, int64_t *values);

/* Parse ARGV (ARGV[0] is the program) into C. On a bad command line: `texc: error: ...`
 * and exit 1; on --help: the command's usage and exit 0. */
void cli_parse(Cli *c, int argc, char **argv);
#endif
