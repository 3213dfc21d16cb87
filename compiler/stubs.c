/* stubs.c — weak placeholders so that texc links while its parts are written.
 * Each real definition overrides its stub; this file goes once all parts exist. */
#include "texc.h"
#include "texrt.h"

#define WEAK __attribute__((weak))

/* grammar */
WEAK const char *const ast_kind_names[] = {0};
WEAK const char *texc_stdlib_dir = "stdlib";
WEAK Ast *ast_new(AstKind k, Loc loc) { Ast *a = xalloc(sizeof *a); a->kind = k; a->loc = loc; return a; }
WEAK Ast *parse_file(const char *path) { diag_error((Loc){0}, "parser not built yet: %s", path); return NULL; }
WEAK Ast *parse_string(const char *file, const char *text) { (void)text; return parse_file(file); }
WEAK bool parse_steps(const char *file, const char *text, Vec *out) { (void)text; (void)out; parse_file(file); return false; }
WEAK void ast_print(FILE *f, const Ast *file) { (void)f; (void)file; }
WEAK void steps_print(FILE *f, const Vec *steps, const char *indent) { (void)f; (void)steps; (void)indent; }
WEAK char *steps_to_text(const Vec *steps) { (void)steps; return xstrdup(""); }

/* arith / simplify */
WEAK void range_push(RangeMap *m, IrVar *v, Expr *min, Expr *extent) { (void)m; (void)v; (void)min; (void)extent; }
WEAK void range_pop(RangeMap *m) { (void)m; }
WEAK Expr *simplify(Expr *e, const RangeMap *r) { (void)r; return e; }
WEAK Stmt *simplify_stmt(Stmt *s) { return s; }
WEAK bool prove(Expr *c, const RangeMap *r) { (void)r; int64_t v; return ir_is_const(c, &v) && v; }
WEAK Interval interval_of(Expr *e, const RangeMap *r) { (void)r; return (Interval){e, e}; }
WEAK bool const_bounds(Expr *e, const RangeMap *r, int64_t *lo, int64_t *hi) { (void)r; if (!ir_is_const(e, lo)) return false; *hi = *lo; return true; }

/* check */
WEAK const char *const reduceop_names[] = {"", "+=", "max=", "min=", "*="};
WEAK Program *check_program(Ast *file, Define *defs, int ndefs) { (void)file; (void)defs; (void)ndefs; diag_error((Loc){0}, "checker not built yet"); return NULL; }
WEAK Kernel *program_kernel(Program *p, const char *name) { (void)p; (void)name; return NULL; }
WEAK Op *kernel_op(Kernel *k, const char *t) { (void)k; (void)t; return NULL; }
WEAK Variant *kernel_variant(Kernel *k, const char *n) { (void)k; (void)n; return NULL; }
WEAK Variant *kernel_pick_variant(Kernel *k, const char *n, Target t) { (void)k; (void)n; (void)t; return NULL; }
WEAK char *kernel_canonical(Kernel *k) { (void)k; return xstrdup(""); }
WEAK uint64_t kernel_workload_key(Kernel *k) { (void)k; return 0; }
WEAK double kernel_flops(Kernel *k) { (void)k; return 0; }

/* schedule */
WEAK Schedule *sched_new(Kernel *k, Target t) { (void)k; (void)t; return NULL; }
WEAK bool sched_step(Schedule *s, const Ast *st) { (void)s; diag_error(st->loc, "schedules not built yet"); return false; }
WEAK Schedule *sched_build(Kernel *k, Target t, const Vec *st) { (void)k; (void)t; (void)st; diag_error((Loc){0}, "schedules not built yet"); return NULL; }
WEAK LoweredFunc *sched_lower(Schedule *s, const GpuLimits *l) { (void)s; (void)l; return NULL; }
WEAK char *sched_describe(Schedule *s) { (void)s; return xstrdup(""); }

/* print, verify, interp */
WEAK void ir_print_expr(FILE *f, const Expr *e) { (void)f; (void)e; }
WEAK void ir_print_stmt(FILE *f, const Stmt *s, int i) { (void)f; (void)s; (void)i; }
WEAK void ir_print_func(FILE *f, const LoweredFunc *fn) { (void)f; (void)fn; }
WEAK char *ir_expr_str(const Expr *e) { (void)e; return xstrdup("?"); }
WEAK bool ir_verify(const LoweredFunc *fn) { (void)fn; return true; }
WEAK int interp_run(const LoweredFunc *fn, void **a, const int64_t *s) { (void)fn; (void)a; (void)s; fprintf(stderr, "interpreter not built yet\n"); return 1; }

/* backends */
static bool no_emit(LoweredFunc **f, int n, const char *k, const char *p, const Options *o) { (void)f; (void)n; (void)p; (void)o; diag_error((Loc){0}, "--emit %s: backend not built yet", k); return false; }
static struct RtModule *no_build(LoweredFunc **f, int n, const Options *o) { (void)f; (void)n; (void)o; fprintf(stderr, "backend not built yet\n"); return NULL; }
WEAK const Backend backend_llvm = {"llvm", false, no_emit, no_build};
WEAK const Backend backend_cuda = {"cuda", true, no_emit, no_build};
WEAK const Backend backend_opencl = {"opencl", true, no_emit, no_build};

WEAK bool gpu_default_steps(Kernel *k, Target t, Vec *steps) { (void)k; (void)t; (void)steps; return true; }
WEAK bool gpu_check(const LoweredFunc *fn, const GpuLimits *l) { (void)fn; (void)l; return true; }
WEAK int tune_main(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "texc tune: not built yet\n"); return 1; }
WEAK int records_main(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "texc records: not built yet\n"); return 1; }
WEAK bool tune_auto_steps(Kernel *k, Target t, const Options *o, const char *r, Vec *steps) { (void)k; (void)t; (void)o; (void)r; (void)steps; diag_error(k->loc, "auto schedules: the searcher is not built yet"); return false; }

/* runtime (runtime/) */
WEAK const char *rt_last_error(void) { return "runtime not built yet"; }
WEAK RtTensor *rt_tensor_alloc(RtDevice dev, int b, int nd, const int64_t *s) { (void)dev; (void)b; (void)nd; (void)s; return NULL; }
WEAK void rt_tensor_free(RtTensor *t) { (void)t; }
WEAK int rt_tensor_from_host(RtTensor *d, const void *s) { (void)d; (void)s; return 1; }
WEAK int rt_tensor_to_host(void *d, const RtTensor *s) { (void)d; (void)s; return 1; }
WEAK RtFunc *rt_module_func(RtModule *m, const char *n) { (void)m; (void)n; return NULL; }
WEAK void rt_module_free(RtModule *m) { (void)m; }
WEAK int rt_func_call(RtFunc *f, RtTensor **a, int n, const int64_t *s, int ns) { (void)f; (void)a; (void)n; (void)s; (void)ns; return 1; }
WEAK int rt_time(RtFunc *f, RtTensor **a, int n, const int64_t *s, int ns, int num, int rep, double mr, RtTiming *o) { (void)f; (void)a; (void)n; (void)s; (void)ns; (void)num; (void)rep; (void)mr; (void)o; return 1; }
