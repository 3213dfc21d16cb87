/* autosched.h — the auto-scheduler's private interfaces (compiler/autosched/).
 *
 *   records.c   the JSON-lines log: Record, load, append, `texc records`
 *   features.c  a fixed-length feature vector of a LoweredFunc
 *   model.c     the XGBoost cost model (C API)
 *   sketch.c    sketches, genes, random annotation, mutation, crossover, step text
 *   measure.c   the measurer: candidates built and timed in child processes
 *   search.c    the evolutionary search loop over a Task
 *   tune.c      `texc tune`, tune_auto_steps
 *
 * A candidate is a sketch index plus integer genes; it is rendered to LANGUAGE.md step
 * text, which is what gets applied (parse_steps + sched_build), measured and recorded.
 */
#ifndef AUTOSCHED_H
#define AUTOSCHED_H

#include "texc.h"
#include "texrt.h"

/* ---------------------------------------------------------------- rng */

/* A small deterministic generator (splitmix64), so that --seed reproduces a search. */
typedef struct Rng {
  uint64_t s;
} Rng;
uint64_t rng_next(Rng *r);
int rng_int(Rng *r, int n);     /* uniform in [0, n) */
double rng_unit(Rng *r);        /* uniform in [0, 1) */

/* ---------------------------------------------------------------- records.c */

/* Error codes of a record, as TVM's MeasureErrorNo. ORDER: tune_error_names[]. */
typedef enum {
  TE_OK, TE_INSTANTIATE, TE_COMPILE, TE_RUNTIME, TE_WRONG, TE_BUILD_TIMEOUT,
  TE_RUN_TIMEOUT, TE_COUNT
} TuneError;
extern const char *const tune_error_names[];
/* Not a record's code: a candidate a lost runner never measured (compiler/dist/); the
 * search drops it, so a later tune measures it. */
#define TE_UNMEASURED (-1)

#define REC_MAX_COSTS 16

/* One measurement. Strings are malloc'd (records outlive arenas); rec_free frees them. */
typedef struct Record {
  char *workload;   /* kernel_workload_key in hex */
  char *kernel;
  char *target;     /* "llvm", "cuda", "opencl" */
  char *cpu;        /* target properties: device / cpu name and threads */
  char *code;       /* what the code was compiled for beyond the target's name (rec_code):
                     * "--mcpu haswell", "--mtriple aarch64-linux-gnu"; NULL or "": the host */
  int threads;
  char *schedule;   /* LANGUAGE.md steps, one per line */
  double costs[REC_MAX_COSTS];
  int ncosts;
  int error;        /* TuneError */
  char *error_msg;
  double flops;     /* of one call, for GFLOP/s in `records show` */
  double timestamp; /* seconds since the epoch, to the millisecond */
  char *version;
  /* Optional ("machine" and "network" objects; NULL / 1 in older logs): machine.c. */
  char *host, *isa, *gpu; /* CPU model, architecture and vector extensions, GPU model */
  char *network;          /* the network a network tune measured this task for */
  int weight;             /* how often the task occurs in that network */
} Record;

typedef struct RecordList {
  Record *r;
  int n, cap;
} RecordList;

double rec_mean_cost(const Record *r); /* ms; +inf for an error record */
/* The median of the costs (ms; +inf for an error): what the search ranks by, robust to
 * one repeat disturbed by a shared machine. */
double rec_cost(const Record *r);
void rec_free(Record *r);
void reclist_free(RecordList *l);
void reclist_push(RecordList *l, Record r); /* takes ownership of R's strings */
/* One JSON line (no newline), malloc'd. */
char *rec_to_json(const Record *r);
/* Parse one line; false when it is not a texc record. */
bool rec_from_json(const char *line, Record *out);
/* Load every record of PATH (a missing file is an empty list). A corrupt or foreign line
 * is skipped with a warning naming its line number. Returns false only on read errors. */
bool records_load(const char *path, RecordList *out);
/* The log opened for appending (created when missing; emptied first when TRUNCATE), with
 * an flock held until records_close: NULL (reported) when it cannot be opened for
 * appending or another tune holds it. A last line cut off mid-write is ended first. */
typedef struct RecordLog RecordLog;
RecordLog *records_open(const char *path, bool truncate);
/* Append R as one line in one write(); false (reported) when it fails: stop then. */
bool records_write(RecordLog *log, const Record *r);
/* fsync, close and free LOG (NULL: nothing); false (reported) when that or a write failed. */
bool records_close(RecordLog *log);
bool records_failed(const RecordLog *log); /* a write failed (reported) */
/* "--mtriple T --mcpu C", either part only when given, "" for the host (and GPU targets,
 * whose code does not depend on them): what O compiles CPU code for beyond the target's
 * name. A record is used only where this is the same (records tuned for another CPU
 * would be correct, but at another CPU's speed). From the current arena. */
char *rec_code(const Options *o);
/* Is R a record of WORKLOAD on TARGET compiled for CODE (rec_code; NULL as "")? */
bool rec_is(const Record *r, const char *workload, const char *target, const char *code);
/* The best successful record for WORKLOAD, TARGET and CODE, or NULL. */
const Record *records_best(const RecordList *l, const char *workload, const char *target, const char *code);
/* The target properties of this machine: threads (its CPU: rt_cpu_name, rt_cpu_isa). */
int tune_threads(void);
double tune_now(void); /* seconds since the epoch, to the millisecond */
/* Print TEXT (steps, one per line) as a `schedule K.V for T { ... }` block. */
void tune_print_block(FILE *f, const char *kernel, const char *variant, const char *target,
                      const char *text);

/* ---------------------------------------------------------------- machine.c */

struct cJSON;
const char *tune_gpu_name(void); /* the NVIDIA GPU's model from /proc; "" when none */
void rec_set_machine(Record *r); /* R's host, isa and gpu: this machine's */
/* Add {"cpu","isa","gpu"} as member "machine" of O; returns it. */
struct cJSON *machine_to_json(struct cJSON *o, const char *host, const char *isa, const char *gpu);
/* R's optional "machine" and "network" members, into and out of its JSON object. */
void rec_machine_to_json(struct cJSON *o, const Record *r);
void rec_machine_from_json(const struct cJSON *o, Record *r);

/* ---------------------------------------------------------------- progress.c */

/* The progress line of a tune on stderr: redrawn in place on a terminal, one plain line
 * per call otherwise (a file or a pipe stays readable). */
typedef struct TuneProgress {
  double t0;   /* when the tune started (monotonic seconds) */
  bool tty;    /* stderr is a terminal: redraw in place */
  bool drawn;  /* an in-place line is on the screen */
} TuneProgress;
void progress_start(TuneProgress *p);
/* LABEL (e.g. "round   3"): DONE of TOTAL trials (TOTAL <= 0 or INT_MAX: unknown), the rate,
 * BEST (ms; +inf: none yet) and GFLOPS (0: not shown), and with TIME_S > 0 the time left. */
void progress_show(TuneProgress *p, const char *label, int done, int total, double best_ms,
                   double gflops, double time_s);
void progress_end(TuneProgress *p); /* end an in-place line (before other output) */
/* The line itself (no newline) into BUF, for tests; ELAPSED in seconds. */
void progress_format(char *buf, size_t n, const char *label, int done, int total,
                     double best_ms, double gflops, double time_s, double elapsed);

/* ---------------------------------------------------------------- features.c */

#define FEAT_N 87 /* layout: features.c's header */
/* Fill V with FEAT_N features of FN (the store with the most work, plus totals). */
void features_extract(const LoweredFunc *fn, float *v);
/* A deterministic pseudo cost of a feature vector (for --deterministic searches). */
double features_pseudo_cost(const float *v);

/* ---------------------------------------------------------------- model.c */

typedef struct CostModel CostModel;
CostModel *model_new(int seed);
void model_free(CostModel *m);
/* Add a training row: features and a label (normalized throughput in [0, 1]). */
void model_add(CostModel *m, const float *feat, float label);
int model_rows(const CostModel *m);
/* Retrain from scratch on every row; false when there is too little data. */
bool model_train(CostModel *m);
bool model_trained(const CostModel *m);
/* Predict N rows of features (FEAT_N each) into OUT; uniform 0 when untrained. */
void model_predict(CostModel *m, const float *feat, int n, float *out);

/* ---------------------------------------------------------------- sketch.c */

#define CAND_MAX_GENES 96

/* A point of the search space. */
typedef struct Cand {
  int sketch;
  int ngenes;
  int genes[CAND_MAX_GENES];
} Cand;

typedef struct SketchSet SketchSet; /* opaque: the sketches of one kernel and target */

/* Derive the sketches of K for T (sketch rules over the compute DAG). */
SketchSet *sketch_new(Kernel *k, Target t, int threads);
void sketch_free(SketchSet *s);
int sketch_count(const SketchSet *s);
const char *sketch_name(const SketchSet *s, int i);
/* Random annotation: a random candidate of a random sketch. */
void sketch_sample(const SketchSet *s, Rng *r, Cand *out);
/* A random annotation of sketch K (0 <= K < sketch_count) into OUT. */
void sketch_sample_of(const SketchSet *s, int k, Rng *r, Cand *out);
/* Mutate one or two genes (tile sizes, unroll, parallel granularity, location). */
void sketch_mutate(const SketchSet *s, Rng *r, Cand *c);
/* Crossover of two candidates of one sketch: each op's genes from one parent. */
bool sketch_crossover(const SketchSet *s, Rng *r, const Cand *a, const Cand *b, Cand *out);
/* The candidate as LANGUAGE.md steps, one per line; malloc'd. */
char *sketch_render(const SketchSet *s, const Cand *c);
/* The untuned schedule of a network task on a GPU target: sketch 1 (shared-memory tiles)
 * when K has one, else sketch 0, annotated by the best of a fixed set of random draws under
 * a shape heuristic (gpu_default_score); the same text on every run. NULL when K has no
 * sketch (the kernel's own GPU default then applies). */
char *sketch_gpu_default(Kernel *k, Target t);

/* ---------------------------------------------------------------- measure.c */

/* What the tuner knows of one kernel: its checked program, sizes and target. */
typedef struct Task {
  Ast *file;          /* the parsed file, for re-checks with reduced sizes */
  const char *path;
  Define *defs;       /* the user's -D */
  int ndefs;
  Kernel *kernel;
  Target target;
  Options opts;
  char workload[17];
  double flops;
  const char *network; /* a network tune's: the network's name and the task's weight */
  int weight;
  uint64_t cold_args;  /* parameters (bit i: parameter i) evicted from the caches before each
                        * timed measurement: a network task's weights (rt_time_candidate_cold) */
  /* Features of a candidate; NULL: tune_lower_features (tests plug in a fake). */
  bool (*featurize)(const struct Task *t, const char *text, float *feat);
  /* A network's task: index INDEX of SOURCE, which makes any task of the network again,
   * so that a measurer's workers (forked after the network was loaded) move from task to
   * task keeping their device. NULL: a kernel's task (workers serve it alone). */
  const struct TaskSource *source;
  int index;
} Task;

typedef struct TaskSource {
  Task (*at)(const void *ctx, int index);
  const void *ctx;
} TaskSource;

typedef struct MeasureOpts {
  int repeat;           /* 3 */
  double min_repeat_ms; /* 0 */
  double build_timeout_s, run_timeout_s;
  int jobs;             /* parallel builds: the number of cores */
  bool check_all;       /* compare every candidate with the interpreter (tests) */
  bool full;            /* every repeat of every candidate: no "clearly worse than the best"
                         * shortcut (the end-of-search re-timings) */
} MeasureOpts;

/* The measurement interface: N schedules (step text) in, N records out (filled except
 * for workload, kernel, target fields, which the caller sets). */
typedef struct Measurer {
  void (*measure)(struct Measurer *m, const Task *task, char **texts, int n, Record *out);
  void *ctx;
  MeasureOpts o;
  /* A runner (compiler/dist/) sets LOST when no device is left: the search stops. */
  bool lost;
  /* The interpreter check of a candidate where it runs; NULL: measure_check here. */
  int (*check)(struct Measurer *m, const Task *task, const char *text, bool small, char *msg,
               size_t msgsz);
} Measurer;

Measurer measurer_local(const MeasureOpts *o);
/* Done with a measurer_local: its workers end (they hold a device each). */
void measurer_local_free(Measurer *m);
/* The measurer every tune of this process uses instead of a local one, when set by the
 * caller that started it: `tune --runner`'s (cli/driver.c, compiler/dist/) or texc-mpi's
 * ranks (compiler/dist/mpi/). Its MeasureOpts are the tune's; its ctx is never freed here. */
extern Measurer *tune_shared_measurer;
struct Cli;
/* The MeasureOpts of `texc tune` with the options of C (repeat, jobs, timeouts). */
MeasureOpts tune_measure_opts(const struct Cli *c);
/* Compare the candidate (step text) with the interpreter on small sizes in a child
 * process. 1: matches; 0: wrong (MSG says how); -1: could not check. */
int measure_check(const Task *task, const char *text, bool small, char *msg, size_t msgsz);

/* ---------------------------------------------------------------- search.c */

typedef struct SearchOpts {
  int trials;           /* measurements (successful or not) */
  double time_s;        /* 0: no limit */
  uint64_t seed;
  int batch;            /* candidates measured per round */
  int population;
  int generations;
  double eps_random;    /* fraction of each batch chosen at random */
  RecordLog *log;       /* NULL: records are not written */
  bool quiet;
  /* The model and the seeds of evolution see features_pseudo_cost instead of measured
   * times: a seeded search then measures the same candidates in the same order. */
  bool deterministic;
} SearchOpts;

typedef struct SearchResult {
  char *best_text;      /* malloc'd; NULL when nothing succeeded */
  double best_ms;
  int measured, errors;
  bool log_failed;      /* stopped at a record that could not be appended (reported) */
} SearchResult;

/* Search schedules of TASK; prior records (PRIOR, may be NULL) warm-start the model and
 * are not measured again. */
bool tune_search(Task *task, Measurer *m, const SearchOpts *o, const RecordList *prior,
                 SearchResult *res);
/* Lower TEXT for TASK into a feature vector; false when the steps do not apply. */
bool tune_lower_features(const Task *task, const char *text, float *feat);

#endif
