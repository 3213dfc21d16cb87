/* driver.c — texc's command line: the pipeline as a short list of passes.
 *
 *   texc FILE.tex [-o OUT] [--target T] [--schedule V] [-D N=V] [--emit KIND]
 *   texc run   FILE.tex [--schedule V] [--check] [--interp]
 *   texc bench FILE.tex [--schedule V|all] [--repeat N] [--number N] [--min-repeat-ms MS]
 *   texc tune  ...        (autosched/tune.c)
 *   texc records ...      (autosched/records.c)
 *   texc fuzz-schedule FILE.tex [--count N] [--seed S]   (randsched.c: differential testing)
 */
#include "driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "front/network.h" /* networks: network*.c */
#include "texrt.h"

static void usage(void) {
  fputs("usage: texc FILE.tex [-o OUT] [--target llvm|cuda|opencl] [--schedule VARIANT]\n"
        "                     [-D NAME=VALUE] [--emit ast|ir|llvm|asm|obj|so|header|cuda|ptx|opencl]\n"
        "       texc run   FILE.tex [--schedule VARIANT] [--check] [--interp] [--kernel K]\n"
        "       texc bench FILE.tex [--schedule VARIANT|all] [--repeat N] [--min-repeat-ms MS]\n"
        "       texc tune  FILE.tex [--trials N] [--records FILE.jsonl] [--target T]\n"
        "       texc records show|best|distill FILE.jsonl\n"
        "options: --kernel K, --mcpu CPU, --mtriple TRIPLE, --opencl-device P:D, --records F,\n"
        "         -O0..-O3, -v, --dump-after PASS|all, --verify-passes\n",
        stderr);
}

static bool parse_target(const char *s, Target *t) {
  for (int i = 0; i < TARGET_COUNT; i++)
    if (strcmp(s, target_names[i]) == 0) {
      *t = (Target)i;
      return true;
    }
  return false;
}

static bool add_define(Cli *c, const char *arg) {
  const char *eq = strchr(arg, '=');
  char *end;
  if (!eq || eq == arg) return false;
  long long v = strtoll(eq + 1, &end, 0);
  if (*end || end == eq + 1) return false;
  if (c->ndefs == MAX_DEFINES) return false;
  c->defs[c->ndefs++] = (Define){xstrndup(arg, (size_t)(eq - arg)), v, false};
  return true;
}

/* The value of an option: "--name VALUE" or "--name=VALUE". */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n) != 0) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] != 0) return NULL;
  if (*i + 1 >= argc) {
    fprintf(stderr, "texc: error: %s needs a value\n", name);
    exit(1);
  }
  return argv[++*i];
}

static int parse_int_opt(const char *name, const char *v) {
  char *end;
  long x = strtol(v, &end, 10);
  if (*end || x < 0 || x > 1000000000) {
    fprintf(stderr, "texc: error: %s expects a non-negative integer, not '%s'\n", name, v);
    exit(1);
  }
  return (int)x;
}

/* Parse the options shared by every command; unknown options are errors. */
static void parse_cli(Cli *c, int argc, char **argv, int first) {
  c->o.target = TARGET_LLVM;
  c->o.opt_level = 3;
  c->repeat = 5;
  c->min_repeat_ms = 50;
  c->records = getenv("TEXC_RECORDS") ? getenv("TEXC_RECORDS") : "texc-records.jsonl";
  for (int i = first; i < argc; i++) {
    const char *a = argv[i], *v;
    if ((v = opt_value(argc, argv, &i, "-o"))) c->out = v;
    else if ((v = opt_value(argc, argv, &i, "--target"))) {
      if (!parse_target(v, &c->o.target)) {
        fprintf(stderr, "texc: error: unknown target '%s' (llvm, cuda, opencl)\n", v);
        exit(1);
      }
    } else if ((v = opt_value(argc, argv, &i, "--schedule"))) c->schedule = v;
    else if ((v = opt_value(argc, argv, &i, "--emit"))) c->emit = v;
    else if ((v = opt_value(argc, argv, &i, "--kernel"))) c->kernel = v;
    else if ((v = opt_value(argc, argv, &i, "--mcpu"))) c->o.mcpu = v;
    else if ((v = opt_value(argc, argv, &i, "--mtriple"))) c->o.mtriple = v;
    else if ((v = opt_value(argc, argv, &i, "--opencl-device"))) c->o.opencl_device = v;
    else if ((v = opt_value(argc, argv, &i, "--records"))) c->records = v;
    else if ((v = opt_value(argc, argv, &i, "--repeat"))) c->repeat = parse_int_opt("--repeat", v);
    else if ((v = opt_value(argc, argv, &i, "--number"))) c->number = parse_int_opt("--number", v);
    else if ((v = opt_value(argc, argv, &i, "--min-repeat-ms")))
      c->min_repeat_ms = parse_int_opt("--min-repeat-ms", v);
    else if ((v = opt_value(argc, argv, &i, "--count"))) c->count = parse_int_opt("--count", v);
    else if ((v = opt_value(argc, argv, &i, "--seed"))) c->seed = (uint64_t)parse_int_opt("--seed", v);
    else if ((v = opt_value(argc, argv, &i, "--dump-after"))) {
      if (!sched_pass_known(v)) exit(1);
      c->o.lower.dump_after = v;
    } else if (strcmp(a, "--verify-passes") == 0) c->o.lower.verify = true;
    else if (strcmp(a, "-D") == 0 && i + 1 < argc) {
      if (!add_define(c, argv[++i])) goto bad_define;
    } else if (strncmp(a, "-D", 2) == 0 && a[2]) {
      if (!add_define(c, a + 2)) goto bad_define;
    } else if (strcmp(a, "--check") == 0) c->check = true;
    else if (strcmp(a, "--interp") == 0) c->interp = true;
    else if (strcmp(a, "-v") == 0) c->o.verbose = true;
    else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && !a[3]) c->o.opt_level = a[2] - '0';
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "texc: error: unknown option '%s'\n", a);
      usage();
      exit(1);
    } else if (!c->file) c->file = a;
    else {
      fprintf(stderr, "texc: error: more than one input file ('%s' and '%s')\n", c->file, a);
      exit(1);
    }
    continue;
  bad_define:
    fprintf(stderr, "texc: error: -D expects NAME=INTEGER, not '%s'\n", argv[i]);
    exit(1);
  }
  if (!c->file) {
    usage();
    exit(1);
  }
}

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

/* parse -> check. NULL when there were errors (reported). */
Program *drv_load(Cli *c) {
  Ast *file = parse_file(c->file);
  if (!file || diag_errors()) return NULL;
  Program *p = check_program(file, c->defs, c->ndefs);
  if (!p || diag_errors()) return NULL;
  for (int i = 0; i < c->ndefs; i++)
    if (!c->defs[i].used)
      diag_warning((Loc){0}, "-D %s: no constant or symbolic size of that name", c->defs[i].name);
  if (c->kernel && !program_kernel(p, c->kernel)) {
    diag_error((Loc){0}, "--kernel %s: no kernel of that name in %s", c->kernel, c->file);
    return NULL;
  }
  return p;
}

bool drv_selected(Cli *c, Kernel *k) { return !c->kernel || strcmp(c->kernel, k->name) == 0; }

/* The steps for kernel K on T under --schedule NAME: a variant's, auto's, or the default's
 * (empty on the CPU, gpu_default_steps on GPUs). *VARIANT_OUT gets the variant used (or NULL). */
bool drv_steps(Cli *c, Kernel *k, const char *name, Target t, Vec *steps, Variant **variant_out) {
  Variant *v = name ? kernel_pick_variant(k, name, t) : NULL;
  Variant *other = name && !v ? kernel_variant(k, name) : NULL;
  if (other) {
    diag_error(other->loc, "schedule %s.%s is not for target %s", k->name, other->name, target_names[t]);
    return false;
  }
  if (variant_out) *variant_out = v;
  if (v && v->is_auto) return tune_auto_steps(k, t, &c->o, c->records, steps);
  if (v) {
    *steps = v->steps;
    return true;
  }
  const Backend *be = backend_for(t);
  return be->default_steps ? be->default_steps(k, t, steps) : true;
}

/* Build and lower one kernel under STEPS. NULL on error (reported). */
LoweredFunc *drv_lower(Cli *c, Kernel *k, Target t, const Vec *steps) {
  Schedule *s = sched_build(k, t, steps);
  if (!s) return NULL;
  return sched_lower(s, &c->o); /* verified, and checked by the target (GPU limits) */
}

/* Lower every selected kernel of P under --schedule. */
static int lower_all(Cli *c, Program *p, LoweredFunc ***out) {
  LoweredFunc **fns = xalloc(sizeof(LoweredFunc *) * (size_t)(p->nkernels + 1));
  int n = 0;
  bool found = !c->schedule;
  for (int i = 0; i < p->nkernels; i++) {
    Kernel *k = p->kernels[i];
    if (!drv_selected(c, k)) continue;
    if (c->schedule && kernel_variant(k, c->schedule)) found = true;
    Vec steps = {0};
    if (!drv_steps(c, k, c->schedule, c->o.target, &steps, NULL)) continue;
    LoweredFunc *f = drv_lower(c, k, c->o.target, &steps);
    if (f) fns[n++] = f;
  }
  if (!found) diag_error((Loc){0}, "--schedule %s: no kernel in %s has a schedule of that name", c->schedule, c->file);
  *out = fns;
  return diag_errors() ? -1 : n;
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

static int cmd_compile(Cli *c) {
  if (c->emit && strcmp(c->emit, "ast") == 0) {
    Ast *file = parse_file(c->file);
    if (!file || diag_errors()) return 1;
    ast_print(stdout, file);
    return 0;
  }
  Program *p = drv_load(c);
  if (!p) return 1;
  LoweredFunc **fns;
  int n = lower_all(c, p, &fns);
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

static const char *cmd_name(const char *s) {
  static const char *const cmds[] = {"run", "bench", "tune", "records", "fuzz-schedule"};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (strcmp(s, cmds[i]) == 0) return cmds[i];
  return NULL;
}

int drv_main(int argc, char **argv) {
  find_stdlib(argv[0]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage();
    return argc < 2;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("texc %s\n", TEXC_VERSION);
    return 0;
  }
  const char *cmd = cmd_name(argv[1]);
  int nf = net_file_arg(argc, argv); /* a file with a `network` block: network*.c */
  if (cmd && strcmp(cmd, "tune") == 0 && nf && net_is_network_file(argv[nf])) return net_tune_main(argc - 1, argv + 1);
  if (cmd && strcmp(cmd, "tune") == 0) return tune_main(argc - 1, argv + 1);
  if (cmd && strcmp(cmd, "records") == 0) return records_main(argc - 1, argv + 1);
  Cli c = {0};
  parse_cli(&c, argc, argv, cmd ? 2 : 1);
  bool ast = !cmd && c.emit && strcmp(c.emit, "ast") == 0; /* the AST of any file */
  if (!ast && net_is_network_file(c.file)) return net_run_cli(&c, cmd);
  if (!cmd) return cmd_compile(&c);
  if (strcmp(cmd, "run") == 0) return drv_run(&c);
  if (strcmp(cmd, "bench") == 0) return drv_bench(&c);
  return drv_fuzz_schedule(&c);
}
