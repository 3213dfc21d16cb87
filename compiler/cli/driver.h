/* driver.h — what the driver's files (driver.c, run.c, randsched.c) share. */
#ifndef DRIVER_H
#define DRIVER_H
#include "texc.h"

#define MAX_DEFINES 64

/* The parsed command line. */
typedef struct Cli {
  const char *file, *out, *schedule, *emit, *kernel, *records;
  Define defs[MAX_DEFINES];
  int ndefs;
  Options o;
  bool check, interp;
  int repeat, number, min_repeat_ms, count;
  uint64_t seed;
} Cli;

/* The whole command line (main.c calls it). */
int drv_main(int argc, char **argv);
Program *drv_load(Cli *c);
bool drv_selected(Cli *c, Kernel *k);
bool drv_steps(Cli *c, Kernel *k, const char *name, Target t, Vec *steps, Variant **variant_out);
LoweredFunc *drv_lower(Cli *c, Kernel *k, Target t, const Vec *steps);

/* run.c */
int drv_run(Cli *c);
int drv_bench(Cli *c);
/* True when K has no symbolic size left; else an error at the kernel that says to use -D. */
bool drv_sizes_bound(Kernel *k);
/* Whether COPIES copies of F's tensors fit in memory (and its sizes are bound); an error
 * that says what to do when not. */
bool drv_fits(const LoweredFunc *f, int copies);
/* Host data for every param of F: inputs random (seeded by position), outputs filled with
 * a garbage pattern so that a point a schedule forgets to write is caught. */
void **drv_host_args(const LoweredFunc *f);
void **drv_copy_args(const LoweredFunc *f, void **args);
/* Run F on ARGS (host memory) with the interpreter or the target's compiled code;
 * *MS gets the time of the call. 0 on success. */
int drv_execute(Cli *c, LoweredFunc *f, void **args, bool interp, double *ms);
/* Compare every output of F in GOT against REF; prints one line; true when they match. */
bool drv_compare(const LoweredFunc *f, void **got, void **ref, bool quiet);
/* The reference: the default schedule of K, interpreted, on ARGS (copied). */
void **drv_reference(Cli *c, Kernel *k, void **args, const LoweredFunc *like);

/* network_run.c: `texc NET.tex`, `texc run NET.tex`, `texc bench NET.tex`. */
int net_run_cli(Cli *c, const char *cmd);

/* randsched.c */
int drv_fuzz_schedule(Cli *c);
#endif
