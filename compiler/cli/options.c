/* options.c — the one command-line parser of texc: a table of options (name, value, the
 * commands that take it, help line) read by every command, and the --help of each
 * command generated from it.
 *
 *   texc [COMMAND] FILE [options]     COMMAND: run, bench, tune, records, fuzz-schedule
 *
 * Long options take their value as `--name VALUE` or `--name=VALUE`; short ones as
 * `-D VALUE` or `-DVALUE`; `-O` only attached (`-O2`). Numbers are decimal. */
#include "options.h"
#include <dlfcn.h>
#include <unistd.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ORDER Command */
const char *const cli_command_names[CMD_COUNT] = {"", "run", "bench", "tune", "records",
                                                  "fuzz-schedule", "import"};

static const char *const command_help[CMD_COUNT] = {
    "check and lower FILE.tex; with -o or --emit write it",
    "run every kernel (or the network) once on random inputs; --check compares with the "
    "reference interpreter",
    "time every kernel under the default schedule and --schedule V (or all)",
    "search schedules for every kernel (or the network's tasks) and append them to the records",
    "show, pick the best of, distill, report (HTML) or plot (SVG) a records log",
    "differential testing: random schedules against the reference interpreter",
    "import an ONNX model: NET.tex (a network over stdlib operators) and NET.safetensors",
};

/* How an option's value is read (and where it goes: OptSpec.field). */
typedef enum {
  OV_FLAG,     /* bool, no value */
  OV_STR,      /* const char * */
  OV_LIST,     /* const char *: given again, the values joined by newlines */
  OV_COUNT,    /* int, 0 .. 1e9 */
  OV_POS,      /* int, 1 .. 1e9 */
  OV_U64,      /* uint64_t */
  OV_MS,       /* double, >= 0 */
  OV_DURATION, /* double seconds from 90, 90s, 10m, 1h; > 0 */
  OV_TARGET,   /* Target */
  OV_DEFINE,   /* NAME=INTEGER appended to defs */
  OV_OLEVEL,   /* -O0 .. -O3 into int */
  OV_PASS,     /* a lowering pass name or "all" (const char *) */
  OV_INPUT,    /* a file appended to inputs */
  OV_OUTPUT,   /* a file appended to outputs */
  OV_EXPECT,   /* a file appended to expects */
  OV_EXTERN,   /* a shared library loaded now (dlopen, RTLD_GLOBAL): extern kernels */
  OV_GPU,      /* GpuLimits from THREADS,SHARED,SMS (0: the device's) */
} ArgKind;

typedef struct OptSpec {
  const char *name; /* "--target", or "-D": one dash, one letter */
  const char *arg;  /* the value's name in the help; NULL: a flag */
  ArgKind kind;
  size_t field;     /* offsetof(Cli, ...) */
  unsigned cmds;    /* CMDS bits: the commands that take it */
  const char *help; /* NULL: not listed (for the tests) */
} OptSpec;

#define B(c) (1u << (c))
#define BUILDS (B(CMD_COMPILE) | B(CMD_RUN) | B(CMD_BENCH) | B(CMD_TUNE) | B(CMD_FUZZ))
#define F(f) offsetof(Cli, f)

static const OptSpec options[] = {
    {"-o", "OUT", OV_STR, F(out), B(CMD_COMPILE) | B(CMD_RECORDS) | B(CMD_IMPORT),
     "write to OUT (its kind from the extension: .so .o .ll .s .h .cu .ptx .cl; records "
     "distill: the new log; report: the page, default FILE.html; plot: the SVG; import: NET.tex)"},
    {"--weights", "F.safetensors", OV_STR, F(weights), B(CMD_COMPILE) | B(CMD_RUN) | B(CMD_BENCH),
     "networks: the weights (default: NET.safetensors beside NET.tex when there is one); "
     "--emit so: kept in F (written when it does not exist), not embedded"},
    {"--name", "NAME", OV_STR, F(name), B(CMD_COMPILE),
     "networks, --emit so|header: the library's entry point (default: from -o libNAME.so)"},
    {"--input", "X.npy", OV_INPUT, 0, B(CMD_RUN),
     "an input (.npy; networks: or an ONNX TensorProto .pb); again for the next input parameter"},
    {"--output", "OUT.npy", OV_OUTPUT, 0, B(CMD_RUN),
     "write the result as .npy (kernels: again for the next output)"},
    {"--expect", "REF.npy", OV_EXPECT, 0, B(CMD_RUN),
     "compare the result with REF (.npy; networks: or .pb) as --check does; exit 1 when it differs "
     "(kernels: again for the next output)"},
    {"--emit", "KIND", OV_STR, F(emit), B(CMD_COMPILE),
     "ast ir llvm asm obj so header cuda ptx ptx-info opencl (networks: tasks steps)"},
    {"--target", "T", OV_TARGET, F(o.target), BUILDS, "llvm (default), cuda or opencl"},
    {"--schedule", "V", OV_STR, F(schedule), B(CMD_COMPILE) | B(CMD_RUN) | B(CMD_BENCH),
     "the schedule variant V of each kernel (bench: also 'all'; networks: 'bare')"},
    {"-D", "NAME=VALUE", OV_DEFINE, 0, BUILDS | B(CMD_IMPORT), "give a constant or symbolic size a decimal value (a network's --emit so: V1,V2,... for one network per value)"},
    {"--kernel", "K", OV_STR, F(kernel), BUILDS, "only kernel K"},
    {"--extern", "LIB.so", OV_EXTERN, 0, B(CMD_RUN) | B(CMD_BENCH) | B(CMD_FUZZ),
     "load LIB.so, which defines the file's extern kernels (again for another library)"},
    {"--records", "F.jsonl", OV_STR, F(records),
     B(CMD_COMPILE) | B(CMD_RUN) | B(CMD_BENCH) | B(CMD_TUNE) | B(CMD_RECORDS),
     "the tuning log (default: $TEXC_RECORDS, else texc-records.jsonl)"},
    {"--check", NULL, OV_FLAG, F(check), B(CMD_RUN), "compare with the reference interpreter"},
    {"--random-weights", NULL, OV_FLAG, F(random_weights), BUILDS | B(CMD_IMPORT),
     "ONNX: fill initializers stored without data from their `texc:uniform` generators"},
    {"--int-edges", NULL, OV_FLAG, F(int_edges), B(CMD_RUN) | B(CMD_FUZZ),
     "integer inputs at their dtype's edges (MIN, MAX, -1, 0, ...) half of the time"},
    {"--interp", NULL, OV_FLAG, F(interp), B(CMD_RUN) | B(CMD_FUZZ),
     "run in the interpreter instead of compiled code"},
    {"--repeat", "N", OV_POS, F(repeat), B(CMD_BENCH) | B(CMD_TUNE),
     "measurements per schedule (bench: 5, tune: 3)"},
    {"--json", NULL, OV_FLAG, F(json), B(CMD_BENCH),
     "print one JSON document (machine, and per schedule median, min, runs, GFLOP/s, GB/s)"},
    {"--number", "N", OV_COUNT, F(number), B(CMD_BENCH),
     "calls per measurement (0: grown to --min-repeat-ms)"},
    {"--min-repeat-ms", "MS", OV_MS, F(min_repeat_ms), B(CMD_BENCH) | B(CMD_TUNE),
     "shortest measurement (bench: 50, tune: 0)"},
    {"--trials", "N", OV_POS, F(trials), B(CMD_TUNE),
     "schedules to measure (default 200; with --time alone: no limit)"},
    {"--time", "DURATION", OV_DURATION, F(time_s), B(CMD_TUNE),
     "stop after DURATION (90s, 10m, 1h); with --trials, whichever ends first"},
    {"--round", "N", OV_POS, F(round), B(CMD_TUNE), "networks: trials per round of a task (16)"},
    {"--batch", "N", OV_POS, F(batch), B(CMD_TUNE), "candidates measured per search round (16)"},
    {"--jobs", "N", OV_POS, F(jobs), B(CMD_TUNE), "candidates built at once (default: cores)"},
    {"--runner", "R", OV_LIST, F(runner), B(CMD_TUNE),
     "measure on R: ssh://[USER@]HOST[:PORT][/PATH] or exec:COMMAND (a texc-measure-server); "
     "again for more runners, each candidate to whichever is free"},
    {"--run-timeout", "DURATION", OV_DURATION, F(run_timeout_s), B(CMD_TUNE) | B(CMD_FUZZ),
     "longest run of one candidate (tune: 10s) or trial (fuzz-schedule: 60s)"},
    {"--seed", "S", OV_U64, F(seed), B(CMD_TUNE) | B(CMD_FUZZ), "random seed (tune: 1, fuzz: 0)"},
    {"--deterministic", NULL, OV_FLAG, F(deterministic), B(CMD_TUNE),
     "the same search for the same seed (no re-timing of the best)"},
    {"--quiet", NULL, OV_FLAG, F(quiet), B(CMD_TUNE), "no progress lines"},
    {"--check-all", NULL, OV_FLAG, F(check_all), B(CMD_TUNE), NULL},
    {"--count", "N", OV_POS, F(count), B(CMD_FUZZ), "random schedules per kernel (100)"},
    {"--mcpu", "CPU", OV_STR, F(o.mcpu), BUILDS, "llvm: the CPU to compile for (default: host)"},
    {"--mtriple", "TRIPLE", OV_STR, F(o.mtriple), BUILDS, "llvm: the target triple"},
    {"--prefix", "P", OV_STR, F(o.prefix), B(CMD_COMPILE),
     "llvm: export kernel K as the symbol PK (kernels named like C library functions need one)"},
    {"--opencl-device", "P:D", OV_STR, F(o.opencl_device), BUILDS,
     "opencl: platform P, device D (or a name substring)"},
    {"--gpu-limits", "T,S,M", OV_GPU, F(o.gpu), BUILDS,
     "cuda, opencl: schedule for T threads and S bytes of shared memory per block and M "
     "multiprocessors instead of the device's (0: the device's; e.g. 1024,49152,132 for an H100 "
     "from a machine without it)"},
    {"-O", "LEVEL", OV_OLEVEL, F(o.opt_level), BUILDS, "-O0 .. -O3 (default -O3)"},
    {"-v", NULL, OV_FLAG, F(o.verbose), BUILDS, "verbose"},
    {"--dump-after", "PASS", OV_PASS, F(o.lower.dump_after), B(CMD_COMPILE) | B(CMD_RUN),
     "print the IR after lowering pass PASS (or all; an unknown name lists them)"},
    {"--max-errors", "N", OV_COUNT, F(max_errors), BUILDS,
     "stop after N errors (default 20; 0: report them all)"},
    {"--verify-passes", NULL, OV_FLAG, F(o.lower.verify), BUILDS,
     "verify the IR after every lowering pass (always after the last)"},
};
#define NOPTIONS (sizeof options / sizeof options[0])

static _Noreturn __attribute__((format(printf, 1, 2))) void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("texc: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* ---- help ------------------------------------------------------------------------ */

static const char *command_usage(Command cmd) {
  switch (cmd) {
  case CMD_COMPILE: return "texc FILE.tex [options]";
  case CMD_RECORDS:
    return "texc records show|best [FILE.jsonl] | texc records distill [FILE.jsonl] -o OUT\n"
           "       texc records report [FILE.jsonl] [-o OUT.html] | texc records plot [FILE.jsonl] -o OUT.svg";
  case CMD_IMPORT: return "texc import MODEL.onnx [-o NET.tex]";
  default: return xprintf("texc %s FILE.tex [options]", cli_command_names[cmd]);
  }
}

static void print_usage(FILE *f, Command cmd) {
  fprintf(f, "usage: %s\n%s\noptions:\n", command_usage(cmd), command_help[cmd]);
  for (size_t i = 0; i < NOPTIONS; i++) {
    const OptSpec *s = &options[i];
    if (!s->help || !(s->cmds & B(cmd))) continue;
    const char *sep = !s->arg || s->kind == OV_OLEVEL ? "" : " ";
    char *lhs = xprintf("%s%s%s", s->name, sep, s->kind == OV_OLEVEL ? "N" : s->arg ? s->arg : "");
    fprintf(f, "  %-24s %s\n", lhs, s->help);
  }
  fprintf(f, "  %-24s %s\n", "--help", "this list");
}

static void print_overview(FILE *f) {
  fputs("usage: texc [COMMAND] FILE [options]    (texc [COMMAND] --help: its options)\ncommands:\n", f);
  for (int c = 0; c < CMD_COUNT; c++)
    fprintf(f, "  %-14s %s\n", c ? cli_command_names[c] : "(none)", command_help[c]);
  fputs("environment: TEXC_RECORDS (the records log), TEX_NUM_THREADS (CPU threads)\n", f);
}

/* ---- values ---------------------------------------------------------------------- */

/* "90", "90s", "10m", "1h" in seconds; negative when malformed. */
static double parse_duration(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v >= 0) || isinf(v)) return -1;
  if (*end == 0 || strcmp(end, "s") == 0) return v;
  if (strcmp(end, "m") == 0) return v * 60;
  if (strcmp(end, "h") == 0) return v * 3600;
  return -1;
}

/* A decimal integer (optionally signed); false when S is anything else or out of range. */
static bool parse_decimal(const char *s, long long *v) {
  char *end;
  errno = 0;
  if (!*s || (*s != '-' && *s != '+' && (*s < '0' || *s > '9'))) return false;
  *v = strtoll(s, &end, 10);
  return !*end && end != s && errno == 0;
}

/* -D NAME=VALUE, or a list NAME=V1,V2,... whose items may be ranges A..B (A to B - 1, as
 * the language's ranges): a network library with one network per value. */
enum { MAX_DEFINE_VALUES = 64 };
static void add_define(Cli *c, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) fail("-D expects NAME=INTEGER or NAME=INTEGER,INTEGER,..., not '%s'", arg);
  if (c->ndefs == MAX_DEFINES) fail("more than %d -D options", MAX_DEFINES);
  int64_t *values = xalloc(sizeof(int64_t) * MAX_DEFINE_VALUES);
  int n = 0;
  for (const char *v = eq + 1;;) {
    const char *comma = strchr(v, ',');
    char *item = comma ? xstrndup(v, (size_t)(comma - v)) : xstrdup(v), *dots = strstr(item, "..");
    long long lo, hi = 0;
    if (dots) *dots = 0;
    if (!parse_decimal(item, &lo) || (dots && !parse_decimal(dots + 2, &hi))) {
      if (errno == ERANGE) fail("-D %s: the value does not fit in 64 bits", arg);
      fail("-D expects NAME=INTEGER or NAME=INTEGER,INTEGER,..., not '%s'", arg);
    }
    if (dots && hi <= lo) fail("-D %s: the range %lld..%lld is empty (A..B is A to B - 1)", arg, lo, hi);
    for (long long x = lo;; x++) { /* a single value: LO alone (LO + 1 may not exist) */
      if (n == MAX_DEFINE_VALUES) fail("-D %s: more than %d values", arg, MAX_DEFINE_VALUES);
      for (int k = 0; k < n; k++)
        if (values[k] == x) fail("-D %s: the value %lld twice", arg, x);
      values[n++] = x;
      if (!dots || x + 1 >= hi) break; /* x < hi: no overflow */
    }
    if (!comma) break;
    v = comma + 1;
  }
  for (int i = 0; i < c->ndefs; i++) /* the first value was taken and the second warned about as unknown */
    if (strlen(c->defs[i].name) == (size_t)(eq - arg) && !strncmp(c->defs[i].name, arg, (size_t)(eq - arg)))
      fail("-D %s: %s is given a value twice (a list gives several: -D %s=V1,V2)", arg, c->defs[i].name, c->defs[i].name);
  c->def_values[c->ndefs] = values;
  c->ndef_values[c->ndefs] = n;
  c->defs[c->ndefs++] = (Define){xstrndup(arg, (size_t)(eq - arg)), values[0], false};
}

int cli_size_combos(Cli *c, int v, int64_t *values) {
  int64_t total = 1; /* at most 256^64: saturated below */
  int nlists = 0;
  for (int i = 0; i < c->ndefs; i++) nlists += c->ndef_values[i] > 1;
  for (int i = c->ndefs - 1, k = nlists; i >= 0; i--) {
    if (c->ndef_values[i] < 2) continue;
    int n = c->ndef_values[i];
    c->defs[i].value = c->def_values[i][(v / total) % n];
    if (values) values[--k] = c->defs[i].value;
    if ((total *= n) > INT_MAX / 256) total = INT_MAX / 256; /* more than any library holds */
  }
  return (int)total;
}

/* FILE appended to the N files of LIST (option OPT, at most MAX_INPUTS). */
static void add_file(const char **list, int *n, const char *opt, const char *file) {
  if (*n == MAX_INPUTS) fail("more than %d %s files", MAX_INPUTS, opt);
  list[(*n)++] = file;
}

/* Store V, the value of option S, into C. */
static void set_value(Cli *c, const OptSpec *s, const char *v) {
  void *p = (char *)c + s->field;
  long long x;
  switch (s->kind) {
  case OV_FLAG: *(bool *)p = true; break;
  case OV_STR: *(const char **)p = v; break;
  case OV_LIST: *(const char **)p = *(const char **)p ? xprintf("%s\n%s", *(const char **)p, v) : v; break;
  case OV_COUNT:
  case OV_POS:
    if (!parse_decimal(v, &x) || x < (s->kind == OV_POS) || x > 1000000000)
      fail("%s expects a %s integer, not '%s'", s->name, s->kind == OV_POS ? "positive" : "non-negative", v);
    *(int *)p = (int)x;
    break;
  case OV_U64:
    if (!parse_decimal(v, &x) || x < 0) fail("%s expects a non-negative integer, not '%s'", s->name, v);
    *(uint64_t *)p = (uint64_t)x;
    break;
  case OV_MS: {
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= 0) || isinf(d)) fail("%s expects a non-negative number, not '%s'", s->name, v);
    *(double *)p = d;
    break;
  }
  case OV_DURATION:
    if (!((*(double *)p = parse_duration(v)) > 0))
      fail("%s expects a duration such as 90s, 10m or 1h, not '%s'", s->name, v);
    break;
  case OV_TARGET:
    for (int i = 0; i < TARGET_COUNT; i++)
      if (strcmp(v, target_names[i]) == 0) {
        *(Target *)p = (Target)i;
        return;
      }
    fail("unknown target '%s' (llvm, cuda, opencl)", v);
  case OV_DEFINE: add_define(c, v); break;
  case OV_OLEVEL:
    if (v[0] < '0' || v[0] > '3' || v[1]) fail("unknown option '-O%s' (-O0 .. -O3)", v);
    *(int *)p = v[0] - '0';
    break;
  case OV_INPUT: add_file(c->inputs, &c->ninputs, s->name, v); break;
  case OV_OUTPUT: add_file(c->outputs, &c->noutputs, s->name, v); break;
  case OV_EXPECT: add_file(c->expects, &c->nexpects, s->name, v); break;
  case OV_EXTERN: {
    /* a bare file name is the file here, not a search of the library path */
    const char *path = strchr(v, '/') || access(v, F_OK) != 0 ? v : xprintf("./%s", v);
    if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) fail("--extern %s: %s", v, dlerror());
    break;
  }
  case OV_PASS:
    if (!sched_pass_known(v)) exit(1); /* it listed the passes */
    *(const char **)p = v;
    break;
  case OV_GPU: {
    long long t, sh, m;
    char a[32], b[32], d[32], extra;
    if (sscanf(v, "%31[0-9],%31[0-9],%31[0-9]%c", a, b, d, &extra) != 3 || !parse_decimal(a, &t) ||
        !parse_decimal(b, &sh) || !parse_decimal(d, &m) || t > 65536 || sh > (1 << 30) || m > 65536)
      fail("%s expects THREADS,SHARED_BYTES,MULTIPROCESSORS (such as 1024,49152,132; 0: the "
           "device's), not '%s'", s->name, v);
    *(GpuLimits *)p = (GpuLimits){(int)t, (int)sh, (int)m};
    break;
  }
  }
}

/* ---- the command line ------------------------------------------------------------ */

/* The option spelled by A ("--name", "--name=V", "-D", "-DV"); *VAL gets an attached value. */
static const OptSpec *find_option(const char *a, const char **val) {
  *val = NULL;
  for (size_t i = 0; i < NOPTIONS; i++) {
    const OptSpec *s = &options[i];
    size_t n = strlen(s->name);
    if (strncmp(a, s->name, n) != 0) continue;
    if (a[n] == 0) return s;
    if (s->name[1] != '-' && s->arg) return *val = a + n, s; /* -DNAME=V, -O2 */
    if (s->name[1] == '-' && a[n] == '=') return *val = a + n + 1, s;
  }
  return NULL;
}

static void defaults(Cli *c, Command cmd) {
  memset(c, 0, sizeof *c);
  c->cmd = cmd;
  c->o = (Options){.target = TARGET_LLVM, .opt_level = 3}; /* .gpu 0: the device's limits */
  c->records = getenv("TEXC_RECORDS") && *getenv("TEXC_RECORDS") ? getenv("TEXC_RECORDS")
                                                                  : "texc-records.jsonl";
  c->repeat = cmd == CMD_TUNE ? 3 : 5;
  c->min_repeat_ms = cmd == CMD_TUNE ? 0 : 50;
  c->seed = cmd == CMD_TUNE ? 1 : 0;
  c->count = 100;
  c->trials = -1; /* cli_parse: 200, or no limit with --time alone */
  c->batch = c->round = 16;
  c->max_errors = 20;
}

/* A positional argument: the file (records: first the action). */
static void positional(Cli *c, const char *a) {
  if (c->cmd == CMD_RECORDS && !c->action) c->action = a;
  else if (!c->file) c->file = a;
  else fail("more than one input file ('%s' and '%s')", c->file, a);
}

/* Option A (ARGV[*I]); its value may be the next argument. */
static void option(Cli *c, int argc, char **argv, int *i) {
  const char *a = argv[*i], *v;
  const OptSpec *s = find_option(a, &v);
  if (!s) fail("unknown option '%s' (texc %s--help lists the options)", a,
               c->cmd ? xprintf("%s ", cli_command_names[c->cmd]) : "");
  if (!(s->cmds & B(c->cmd)))
    fail("option '%s' does not apply to %s (texc %s--help lists its options)", s->name,
         c->cmd ? xprintf("'texc %s'", cli_command_names[c->cmd]) : "compiling",
         c->cmd ? xprintf("%s ", cli_command_names[c->cmd]) : "");
  if (!s->arg && v) fail("option '%s' takes no value", s->name);
  if (s->arg && !v) {
    if (s->kind == OV_OLEVEL) fail("unknown option '%s' (-O0 .. -O3)", a);
    if (*i + 1 >= argc) fail("option '%s' needs a value (%s)", s->name, s->arg);
    v = argv[++*i];
  }
  set_value(c, s, v);
}

static void finish(Cli *c) {
  if (c->cmd == CMD_RECORDS) {
    if (!c->file) c->file = c->records;
    bool known = c->action && (!strcmp(c->action, "show") || !strcmp(c->action, "best") ||
                               !strcmp(c->action, "distill") || !strcmp(c->action, "report") ||
                               !strcmp(c->action, "plot"));
    bool needs_out = known && (!strcmp(c->action, "distill") || !strcmp(c->action, "plot"));
    if (!known || !c->file || (needs_out && !c->out)) {
      print_usage(stderr, CMD_RECORDS);
      exit(1);
    }
  }
  if (!c->file) {
    fprintf(stderr, "texc: error: no input file\n");
    print_usage(stderr, c->cmd);
    exit(1);
  }
  if (c->trials < 0) c->trials = c->time_s > 0 ? INT_MAX : 200;
  diag_max_errors = c->max_errors;
  target_cli_options = &c->o; /* the CPU that untuned schedules are derived for */
}

void cli_parse(Cli *c, int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    print_overview(argc < 2 ? stderr : stdout);
    exit(argc < 2);
  }
  if (!strcmp(argv[1], "--version")) {
    printf("texc %s\n", TEXC_VERSION);
    exit(0);
  }
  Command cmd = CMD_COMPILE;
  for (int k = 1; k < CMD_COUNT; k++)
    if (!strcmp(argv[1], cli_command_names[k])) cmd = (Command)k;
  defaults(c, cmd);
  for (int i = cmd == CMD_COMPILE ? 1 : 2; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      print_usage(stdout, cmd);
      exit(0);
    }
    if (a[0] == '-' && a[1]) option(c, argc, argv, &i);
    else positional(c, a);
  }
  finish(c);
}
