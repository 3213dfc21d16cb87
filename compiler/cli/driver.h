/* driver.h — what the command line's files share: the parsed command line (options.c),
 * the pipeline (pipeline.c) and the commands (driver.c, run.c, kernel_io.c, randsched.c,
 * network_run.c). */
#ifndef DRIVER_H
#define DRIVER_H
#include "texc.h"

#include "cli/options.h"

/* The whole command line (main.c calls it). */
int drv_main(int argc, char **argv);

/* The pipeline (pipeline.c), in order; NULL / false after a diagnostic. */
Program *drv_load(Cli *c);                   /* parse + check FILE */
bool drv_selected(Cli *c, Kernel *k);        /* by --kernel */
bool drv_steps(Cli *c, Kernel *k, const char *name, Target t, Vec *steps, Variant **variant_out);
LoweredFunc *drv_lower(Cli *c, Kernel *k, Target t, const Vec *steps); /* build + lower */
/* drv_steps then drv_lower for kernel K under VARIANT (NULL: the default) on --target. */
LoweredFunc *drv_kernel(Cli *c, Kernel *k, const char *variant, Variant **variant_out);
/* drv_kernel of every selected kernel under --schedule into *OUT (and the variants used
 * into *VARIANTS when not NULL); how many, or -1 after errors. */
int drv_lower_all(Cli *c, Program *p, LoweredFunc ***out, Variant ***variants);
/* Build F for its target in this process; *M gets the module. NULL after printing why. */
struct RtFunc *drv_build(Cli *c, LoweredFunc *f, struct RtModule **m);

/* run.c: `texc run`, `texc bench` */
int drv_run(Cli *c, Program *p);
int drv_bench(Cli *c, Program *p);
/* A `bench --json` document's head: texc's version, the machine, the target and FILE
 * (run.c); the caller adds its results and prints it. */
struct cJSON *drv_bench_json(Cli *c);
/* True when K has no symbolic size left; else an error at the kernel that says to use -D. */
bool drv_sizes_bound(Kernel *k);
/* Whether COPIES copies of F's tensors fit in memory (and its sizes are bound); an error
 * that says what to do when not. */
bool drv_fits(const LoweredFunc *f, int copies);
/* Host data for every param of F: inputs random (seeded by position), outputs filled with
 * a garbage pattern so that a point a schedule forgets to write is caught. */
void **drv_host_args(const LoweredFunc *f);
void **drv_copy_args(const LoweredFunc *f, void **args);
/* pipeline.c: the bytes of parameter I of F (its sizes constant). */
size_t drv_param_bytes(const LoweredFunc *f, int i);
/* Run F on ARGS (host memory) with the interpreter or the target's compiled code;
 * *MS gets the time of the call. 0 on success. */
int drv_execute(Cli *c, LoweredFunc *f, void **args, bool interp, double *ms);
/* Compare every output of F in GOT against REF; prints one line; true when they match. */
bool drv_compare(const LoweredFunc *f, void **got, void **ref, bool quiet);
/* The reference: the default schedule of K, interpreted, on ARGS (copied). */
void **drv_reference(Cli *c, Kernel *k, void **args, const LoweredFunc *like);

/* kernel_io.c: `texc run KERNEL.tex --input A.npy --output C.npy --expect R.npy`. Each false
 * (or NULL) after an error. */
bool kio_check(Cli *c, Program *p);              /* one kernel, and no more files than it has tensors */
Program *kio_bind_sizes(Cli *c, Program *p);     /* symbolic sizes without -D from the inputs' shapes */
bool kio_read_inputs(Cli *c, const LoweredFunc *f, void **args);   /* into F's host ARGS */
bool kio_write_outputs(Cli *c, const LoweredFunc *f, void **args); /* --output, then --expect */

/* network_run.c: `texc NET.tex`, `texc run NET.tex`, `texc bench NET.tex`. */
int net_run_cli(Cli *c);

/* randsched.c. TASKS: P's kernels are a network's tasks, whose first trial is the
 * network's default on the target (the schedule `texc run` gives them). */
int drv_fuzz_schedule(Cli *c, Program *p, bool tasks);
#endif
