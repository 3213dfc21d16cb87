/* deploy.c — `texc NET.tex|MODEL.onnx --emit so|header`: one library per network.
 *
 * The library is three objects linked by cc into one .so:
 *   kernels   the task functions (CPU: an object from the LLVM back end, their symbols
 *             prefixed NAME__; CUDA: PTX from NVRTC and each function's launch plan)
 *   tables    a C file written here: the tensors (where each lives: input, output, weights
 *             offset, arena offset from plan.c), the calls in order, the weights (.incbin of
 *             a blob: embedded unless --weights), and the exported entry points
 * A library of several sizes (-D batch=1,8: one network per value, DeploySpec's nets) has
 * the tables of each network (suffixed _vK but the first's), one function per distinct task
 * (build_cpu_kernels: the networks' tasks of one kernel text share it), and one blob of
 * weights that each weight of equal name and data is in once.
 *   runtime   libtexrt.a: rt_net.c runs the tables; the thread pool; CUDA's driver loader
 * A version script exports only the entry points, so the library clashes with nothing
 * and needs nothing of texc (ldd: libc, libm, libpthread).
 */
#include "deploy/deploy.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx/onnx.h"

/* The weights of a library's networks, each once, in blob order. */
typedef struct Blob {
  WeightSet weights;
  int64_t *offset;     /* per weight: its byte offset in the blob */
  int64_t bytes;
} Blob;

/* What one network of a library is made of, gathered before anything is written. */
typedef struct Lib {
  const char *name;    /* the C name of the entry point */
  const char *sfx;     /* its tables' and kernels' suffix: "" (the first network), "_v1", ... */
  const char *label;   /* its sizes, "batch=8" (NULL: the library's only network) */
  const DeployNet *dn;
  Network *n;
  NetPlan plan;
  int ninputs;         /* the network's first parameters that are the caller's */
  int noutputs;        /* the network's results, all the caller's */
  int *kind;           /* per tensor: RT_NET_* */
  int64_t *offset;     /* per tensor: input or output number, weights or arena offset */
  const char **wname;  /* per weight tensor: its name in the blob (and a weights file) */
  int nweights;
  int64_t weights_bytes; /* its weights' (some shared with the library's other networks) */
  int64_t folded_bytes; /* the tensors computed from the weights at create (packed filters) */
  int ninit;           /* the folded groups: the first calls, run at create */
  const char *weights_file; /* the file create() reads (NULL: embedded) */
  const char **sym;    /* CPU: per task, its function's name in the kernels' object */
} Lib;

/* The kinds of rt_net.h, spelled as the generated C spells them. ORDER RT_NET_*. */
static const char *const kind_names[] = {"RT_NET_INPUT", "RT_NET_WEIGHT", "RT_NET_VALUE", "RT_NET_OUTPUT", "RT_NET_FOLDED"};
enum { K_INPUT, K_WEIGHT, K_VALUE, K_OUTPUT, K_FOLDED };


/* ---- the entry point's name ----------------------------------------------------------- */

static bool c_ident(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9') || *s == '_') return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
  return true;
}

/* --name, else OUT's base name without "lib" and its extension (libresnet.so: resnet),
 * else the network's name. NULL after an error. */
static const char *lib_name(const DeploySpec *s, Network *n) {
  const char *name = s->name;
  if (!name && s->out && strcmp(s->out, "-") != 0) {
    const char *base = strrchr(s->out, '/') ? strrchr(s->out, '/') + 1 : s->out;
    if (strncmp(base, "lib", 3) == 0 && base[3]) base += 3;
    const char *dot = strchr(base, '.');
    name = dot ? xstrndup(base, (size_t)(dot - base)) : base;
    if (!c_ident(name)) name = NULL; /* not usable: the network's name */
  }
  if (!name) name = n->name;
  if (!c_ident(name) || strlen(name) > 64) {
    diag_error((Loc){0}, "--name %s: the library's entry point must be a C identifier of at most 64 "
               "characters that does not start with '_'", name);
    return NULL;
  }
  return name;
}

/* ---- tensors: the caller's, the weights, the arena ------------------------------------ */

/* Weight T with data D in blob B, once for a name and data: its offset, and its name
 * there in *NAME (T's, or `T@LABEL` when another network has other data of that name). */
static int64_t blob_add(Blob *b, const NetTensor *t, const float *d, const char *label, const char **name) {
  size_t bytes = sizeof(float) * (size_t)net_numel(t);
  *name = t->name;
  for (int pass = 0; pass < 2; pass++) {
    const HostTensor *h = ws_find(&b->weights, *name);
    if (!h) break;
    if (h->ndim == t->ndim && !memcmp(h->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim) && !memcmp(h->data, d, bytes))
      return b->offset[h - b->weights.t];
    *name = xprintf("%s@%s", t->name, label ? label : "");
  }
  HostTensor h = {.name = *name, .ndim = t->ndim, .data = (float *)d};
  memcpy(h.shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  ws_add(&b->weights, h);
  int64_t *offset = xalloc(sizeof(int64_t) * (size_t)b->weights.n); /* grows as ws_add's set does */
  if (b->weights.n > 1) memcpy(offset, b->offset, sizeof(int64_t) * (size_t)(b->weights.n - 1));
  b->offset = offset;
  b->offset[b->weights.n - 1] = b->bytes;
  b->bytes += ((int64_t)bytes + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
  return b->offset[b->weights.n - 1];
}

/* Where every tensor of L lives; its weights (its DeployNet's data) added to blob B. */
static bool lib_layout(const DeployNet *s, Lib *l, Blob *b) {
  Network *n = l->n;
  l->kind = xalloc(sizeof(int) * (size_t)(n->ntensors + 1));
  l->offset = xalloc(sizeof(int64_t) * (size_t)(n->ntensors + 1));
  l->wname = xalloc(sizeof(char *) * (size_t)(n->ntensors + 1));
  for (int k = 0; k < n->ngroups; k++) { /* a group that reads a caller's tensor runs per call */
    NetGroup *g = n->groups[k];
    for (int a = 0; a < g->ninputs && g->folded; a++) {
      const NetTensor *t = g->inputs[a];
      if (t->kind == NT_VALUE ? !n->groups[n->nodes[t->producer]->group]->folded : s->input[t->index]) g->folded = false;
    }
    l->ninit += g->folded;
  }
  net_plan(n, &l->plan);
  l->noutputs = n->noutputs;
  for (int i = 0; i < n->ntensors; i++) {
    NetTensor *t = n->tensors[i];
    int out = net_output_index(n, t);
    if (out >= 0) l->kind[i] = K_OUTPUT, l->offset[i] = out;
    else if (net_is_folded(n, t)) {
      l->kind[i] = K_FOLDED, l->offset[i] = l->folded_bytes;
      l->folded_bytes += (net_numel(t) * 4 + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
    }
    else if (t->kind == NT_VALUE) /* not planned: fused away, never written (offset 0) */
      l->kind[i] = K_VALUE, l->offset[i] = l->plan.offset[i] >= 0 ? l->plan.offset[i] : 0;
    else if (s->input[i]) l->kind[i] = K_INPUT, l->offset[i] = l->ninputs++;
    else {
      l->kind[i] = K_WEIGHT, l->offset[i] = blob_add(b, t, s->data[i], l->label, &l->wname[i]);
      l->nweights++;
      l->weights_bytes += (net_numel(t) * 4 + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN;
    }
  }
  if (l->ninputs == 0) {
    diag_error(n->loc, "network %s has no input: every parameter is a weight", n->name);
    return false;
  }
  return true;
}

/* The weights as one blob (B's offsets) in a temporary file. */
static bool write_blob(const Blob *b, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  static const char zeros[PLAN_ALIGN];
  for (int i = 0; i < b->weights.n; i++) {
    const HostTensor *h = &b->weights.t[i];
    size_t bytes = sizeof(float) * (size_t)ht_numel(h);
    fwrite(h->data, 1, bytes, f);
    fwrite(zeros, 1, (PLAN_ALIGN - bytes % PLAN_ALIGN) % PLAN_ALIGN, f);
  }
  return fclose(f) == 0;
}

/* ---- the C file ----------------------------------------------------------------------- */

static void c_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* `.incbin PATH` as the hidden symbol SYM, 64-byte aligned. */
static void c_incbin(FILE *f, const char *sym, const char *path) {
  fprintf(f, "__asm__(\".section .rodata\\n.balign 64\\n.globl %s\\n.hidden %s\\n%s:\\n.incbin \\\"%s\\\"\\n.previous\\n\");\n"
             "extern const unsigned char %s[];\n", sym, sym, sym, path, sym);
}

static void c_tensors(FILE *f, const Lib *l) {
  fprintf(f, "static const RtNetTensor tensors%s[] = {\n", l->sfx);
  for (int i = 0; i < l->n->ntensors; i++) {
    const NetTensor *t = l->n->tensors[i];
    fprintf(f, "  {");
    c_string(f, l->kind[i] == K_WEIGHT ? l->wname[i] : t->name);
    fprintf(f, ", %s, %d, %d, {", kind_names[l->kind[i]], dtype_bytes(t->dtype), t->ndim);
    for (int d = 0; d < t->ndim; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    fprintf(f, "}, %lld, %lld},\n", (long long)l->offset[i], (long long)(dtype_bytes(t->dtype) * net_numel(t)));
  }
  fprintf(f, "};\n");
}

static void c_calls(FILE *f, const Lib *l) {
  Network *n = l->n;
  for (int k = 0; k < n->ngroups; k++) {
    NetGroup *g = n->groups[k];
    fprintf(f, "static const int args%s_%d[] = {", l->sfx, k);
    for (int a = 0; a < g->ninputs; a++) fprintf(f, "%d, ", g->inputs[a]->index);
    fprintf(f, "%d};\n", g->out->index);
  }
  fprintf(f, "static const RtNetCall calls%s[] = {\n", l->sfx); /* the folded groups first (NINIT) */
  for (int j = 0; j < 2 * n->ngroups; j++) {
    int k = j % n->ngroups;
    if (n->groups[k]->folded == (j < n->ngroups))
      fprintf(f, "  {%d, %d, args%s_%d},\n", n->groups[k]->task, n->groups[k]->ninputs + 1, l->sfx, k);
  }
  fprintf(f, "};\n");
}

static void c_expr(FILE *f, const RtGpuExpr *e) {
  if (!e->n) {
    fprintf(f, "{0, NULL}");
    return;
  }
  fprintf(f, "{%d, (int64_t[]){", e->n);
  for (int i = 0; i < 2 * e->n; i++) fprintf(f, "%s%lldLL", i ? ", " : "", (long long)e->code[i]);
  fprintf(f, "}}");
}

/* The launch plans of the CUDA functions (rt_gpu.h) as C data. */
static void c_gpu_plans(FILE *f, const RtGpuFunc *plans, int nfuncs, const char *sfx) {
  for (int i = 0; i < nfuncs; i++) {
    const RtGpuFunc *p = &plans[i];
    fprintf(f, "static RtGpuExpr temps%s_%d[] = {", sfx, i);
    for (int t = 0; t < p->ntemps; t++) {
      if (t) fprintf(f, ", ");
      c_expr(f, &p->temp_bytes[t]);
    }
    fprintf(f, "%s};\nstatic RtGpuKernel kernels%s_%d[] = {\n", p->ntemps ? "" : "{0, NULL}", sfx, i);
    for (int k = 0; k < p->nkernels; k++) {
      const RtGpuKernel *pk = &p->kernels[k];
      fprintf(f, "  {");
      c_string(f, pk->name);
      for (int g = 0; g < 2; g++) { /* grid, then block */
        fprintf(f, ", {");
        for (int d = 0; d < 3; d++) {
          if (d) fprintf(f, ", ");
          c_expr(f, g ? &pk->block[d] : &pk->grid[d]);
        }
        fprintf(f, "}");
      }
      fprintf(f, ", %d, (int[]){", pk->nargs);
      for (int a = 0; a < pk->nargs; a++) fprintf(f, "%s%d", a ? ", " : "", pk->args[a]);
      fprintf(f, "%s}},\n", pk->nargs ? "" : "0");
    }
    fprintf(f, "};\n");
  }
  fprintf(f, "static const RtGpuFunc gpu_fns%s[] = {\n", sfx);
  for (int i = 0; i < nfuncs; i++)
    fprintf(f, "  {\"%s\", %d, %d, %d, %d, temps%s_%d, kernels%s_%d},\n", plans[i].name, plans[i].nparams,
            plans[i].nsizes, plans[i].ntemps, plans[i].nkernels, sfx, i, sfx, i);
  fprintf(f, "};\n");
}

/* The C type of a tensor's elements: float, double, uint16_t for f16 (IEEE half's bits),
 * int32_t, int64_t, int8_t, or uint8_t for u8 and bool (0 or 1). */
static const char *c_type(DType t) {
  return t == DT_I64 ? "int64_t" : t == DT_I32 ? "int32_t" : t == DT_I8 ? "int8_t" : t == DT_BOOL || t == DT_U8 ? "uint8_t"
         : t == DT_F16 ? "uint16_t" : t == DT_F64 ? "double" : "float";
}

/* The C type of input I: `const float`, or `const int32_t` / `const int64_t` for integers. */
static const char *c_input_type(const Lib *l, int i) {
  for (int t = 0; t < l->n->ntensors; t++)
    if (l->kind[t] == K_INPUT && l->offset[t] == i) return xprintf("const %s", c_type(l->n->tensors[t]->dtype));
  return "const float";
}

/* The parameters of an entry point: `const float *input0, ..., float *output0, ...` (one
 * input: `input`; one output: `output`). */
static const char *c_params(const Lib *l) {
  char *s = xstrdup("");
  for (int i = 0; i < l->ninputs; i++)
    s = l->ninputs == 1 ? xprintf("%s *input, ", c_input_type(l, i)) : xprintf("%s%s *input%d, ", s, c_input_type(l, i), i);
  for (int i = 0; i < l->noutputs; i++) {
    const char *ty = c_type(l->n->outputs[i]->dtype);
    s = l->noutputs == 1 ? xprintf("%s%s *output", s, ty) : xprintf("%s%s%s *output%d", s, i ? ", " : "", ty, i);
  }
  return s;
}

/* `const void *in[] = {input0, ...}; void *out[] = {output0, ...};` */
static const char *c_arrays(const Lib *l) {
  char *s = xstrdup("const void *in[] = {");
  for (int i = 0; i < l->ninputs; i++)
    s = l->ninputs == 1 ? xprintf("%sinput", s) : xprintf("%s%sinput%d", s, i ? ", " : "", i);
  s = xprintf("%s};\n  void *out[] = {", s);
  for (int i = 0; i < l->noutputs; i++)
    s = l->noutputs == 1 ? xprintf("%soutput", s) : xprintf("%s%soutput%d", s, i ? ", " : "", i);
  return xprintf("%s};", s);
}

/* The exported functions around rt_net.c; L[0] is what create() and the one-shot call
 * run, and with NL > 1 networks create_variant(v, FILE) makes a context of any of them. */
static void c_entry_points(FILE *f, const DeploySpec *s, const Lib *l, int nl, bool cuda) {
  const char *N = l->name, *in = c_arrays(l);
  fprintf(f, "\nstruct %s_ctx;\nstatic RtNet *oneshot;\n"
             "int %s(%s) {\n  %s\n  return rt_net_oneshot(&desc, &oneshot, in, out);\n}\n", N, N,
          c_params(l), in);
  fprintf(f, "struct %s_ctx *%s_create(void) { return (struct %s_ctx *)rt_net_create(&desc, NULL); }\n", N, N, N);
  fprintf(f, "struct %s_ctx *%s_create_from(const char *weights_file) {\n"
             "  return (struct %s_ctx *)rt_net_create(&desc, weights_file);\n}\n", N, N, N);
  fprintf(f, "int %s_run(struct %s_ctx *ctx, %s) {\n  %s\n  return rt_net_run((RtNet *)ctx, in, out, 0);\n}\n", N,
          N, c_params(l), in);
  if (cuda)
    fprintf(f, "int %s_run_device(struct %s_ctx *ctx, %s) {\n  %s\n  return rt_net_run((RtNet *)ctx, in, out, 1);\n}\n",
            N, N, c_params(l), in);
  fprintf(f, "void %s_destroy(struct %s_ctx *ctx) { rt_net_destroy((RtNet *)ctx); }\n", N, N);
  fprintf(f, "const char *%s_last_error(void) { return rt_last_error(); }\n", N);
  if (nl == 1) return;
  fprintf(f, "\nstatic const RtNetDesc *const descs[] = {");
  for (int v = 0; v < nl; v++) fprintf(f, "%s&desc%s", v ? ", " : "", l[v].sfx);
  fprintf(f, "};\nstatic const int64_t sizes[%d][%d] = {", nl, s->nsizes);
  for (int v = 0; v < nl; v++) {
    fprintf(f, "%s{", v ? ", " : "");
    for (int k = 0; k < s->nsizes; k++) fprintf(f, "%s%lldLL", k ? ", " : "", (long long)s->nets[v].values[k]);
    fprintf(f, "}");
  }
  fprintf(f, "};\n");
  fprintf(f, "struct %s_ctx *%s_create_variant(int variant, const char *weights_file) {\n"
             "  if (variant < 0 || variant >= %d) {\n"
             "    rt_set_error(\"%s_create_variant(%%d): the library has variants 0 to %d\", variant);\n"
             "    return NULL;\n  }\n"
             "  return (struct %s_ctx *)rt_net_create(descs[variant], weights_file);\n}\n", N, N, nl, N, nl - 1, N);
  fprintf(f, "int %s_variant(const int64_t *values) {\n"
             "  for (int v = 0; v < %d; v++) {\n    int k = 0;\n"
             "    while (k < %d && sizes[v][k] == values[k]) k++;\n"
             "    if (k == %d) return v;\n  }\n  return -1;\n}\n", N, nl, s->nsizes, s->nsizes);
  fprintf(f, "int %s_shape(int variant, int tensor, int64_t *shape) {\n"
             "  if (variant < 0 || variant >= %d || tensor < 0) return -1;\n"
             "  const RtNetDesc *d = descs[variant];\n"
             "  int kind = tensor < d->ninputs ? RT_NET_INPUT : RT_NET_OUTPUT;\n"
             "  int64_t at = tensor < d->ninputs ? tensor : tensor - d->ninputs;\n"
             "  for (int i = 0; i < d->ntensors; i++)\n"
             "    if (d->tensors[i].kind == kind && d->tensors[i].offset == at) {\n"
             "      for (int k = 0; k < d->tensors[i].ndim; k++) shape[k] = d->tensors[i].shape[k];\n"
             "      return d->tensors[i].ndim;\n    }\n  return -1;\n}\n", N, nl);
}

/* The tables of network L: its tensors, calls, functions (KERNELS: the packed CPU
 * symbols' prefix, or NULL for CUDA with PLANS and the PTX in file PTX) and desc. */
static void c_network(FILE *f, const Lib *l, const Blob *b, const char *blob, const char *prefix,
                      const RtGpuFunc *plans, const char *ptx) {
  Network *n = l->n;
  LoweredFunc **fns = l->dn->fns;
  const char *S = l->sfx;
  fprintf(f, "\n/* network %s%s%s */\n", n->name, l->label ? ", " : "", l->label ? l->label : "");
  c_tensors(f, l);
  c_calls(f, l);
  fprintf(f, "static const char *const names%s[] = {", S);
  for (int t = 0; t < n->ntasks; t++) fprintf(f, "\"%s\", ", fns[t]->name);
  fprintf(f, "};\n");
  if (prefix) { /* a function several networks share is declared again: C allows it */
    for (int t = 0; t < n->ntasks; t++) fprintf(f, "int __texc_packed_%s%s(void **, const int64_t *);\n", prefix, l->sym[t]);
    fprintf(f, "static const RtPackedFn cpu_fns%s[] = {", S);
    for (int t = 0; t < n->ntasks; t++) fprintf(f, "__texc_packed_%s%s, ", prefix, l->sym[t]);
    fprintf(f, "};\n");
  } else {
    c_gpu_plans(f, plans, n->ntasks, S);
    c_incbin(f, xprintf("__texc_net_ptx%s", S), ptx);
  }
  fprintf(f, "static const RtNetDesc desc%s = {\n  .name = \"%s\", .device = %s,\n", S, l->name, prefix ? "RT_CPU" : "RT_CUDA");
  fprintf(f, "  .ntensors = %d, .ncalls = %d, .nfuncs = %d, .ninputs = %d, .noutputs = %d, .ninit = %d,\n",
          n->ntensors, n->ngroups, n->ntasks, l->ninputs, l->noutputs, l->ninit);
  fprintf(f, "  .tensors = tensors%s, .calls = calls%s, .func_names = names%s,\n", S, S, S);
  if (prefix) fprintf(f, "  .cpu_fns = cpu_fns%s,\n", S);
  else fprintf(f, "  .ptx = (const char *)__texc_net_ptx%s, .gpu_fns = gpu_fns%s,\n", S, S);
  fprintf(f, "  .arena_bytes = %lld, .weights_bytes = %lld, .folded_bytes = %lld,\n", (long long)l->plan.arena_bytes,
          (long long)b->bytes, (long long)l->folded_bytes);
  if (blob) fprintf(f, "  .weights = __texc_net_weights,\n");
  else {
    fprintf(f, "  .weights_file = ");
    c_string(f, l->weights_file);
    fprintf(f, ",\n");
  }
  fprintf(f, "};\n");
}

/* The C file of the NL networks L: their tables, the weights, the entry points. CPU (OBJ):
 * the kernels' object, whose symbols are NAME__ + each Lib's SYM; else CUDA, with per
 * network its PLANS and PTX. */
static bool write_c(const DeploySpec *s, const Lib *l, int nl, const Blob *b, const char *path, const char *blob,
                    const char *obj, RtGpuFunc **plans, const char **ptx) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fprintf(f, "/* Generated by texc %s: network %s as library %s. */\n#include <stddef.h>\n#include \"rt_net.h\"\n",
          TEXC_VERSION, l->n->name, l->name);
  if (blob) c_incbin(f, "__texc_net_weights", blob);
  for (int v = 0; v < nl; v++)
    c_network(f, &l[v], b, blob, obj ? xprintf("%s__", l->name) : NULL, obj ? NULL : plans[v], obj ? NULL : ptx[v]);
  if (!obj) fprintf(f, "/* rt_net.c refers to the CUDA loader weakly: this pulls it in */\n"
                          "__attribute__((used)) static RtModule *(*const cuda_loader)(const char *, const RtGpuFunc *, int) = rt_cuda_module;\n");
  c_entry_points(f, s, l, nl, !obj);
  return fclose(f) == 0;
}

/* ---- the header ----------------------------------------------------------------------- */

static void h_shape(FILE *f, const char *macro, const NetTensor *t) {
  fprintf(f, "#define %s_NDIM %d\n#define %s_SHAPE {", macro, t->ndim, macro);
  for (int d = 0; d < t->ndim; d++) fprintf(f, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
  fprintf(f, "}\n#define %s_SIZE %lld /* %s */\n", macro, (long long)net_numel(t),
          t->dtype == DT_F32 ? "floats" : t->dtype == DT_F16 ? "uint16_t values: IEEE half-precision bits"
                                    : xprintf("%s values", c_type(t->dtype)));
}

/* S as the text of a C comment: an ONNX name is any string, so no star-slash, no line break. */
static const char *comment_text(const char *s) {
  char *t = xstrdup(s);
  for (char *p = t; *p; p++)
    if (*p == '\n' || *p == '\r' || (*p == '*' && p[1] == '/')) *p = ' ';
  return t;
}

/* "[1, 3, 224, 224]" */
static const char *shape_text(const NetTensor *t) {
  char *s = xstrdup("[");
  for (int d = 0; d < t->ndim; d++) s = xprintf("%s%s%lld", s, d ? ", " : "", (long long)t->shape[d]);
  return xprintf("%s]", s);
}

/* The variants of a library of several sizes: what each holds, and the functions that
 * choose among them. */
static void h_variants(FILE *f, const DeploySpec *s, const Lib *l, int nl) {
  const char *N = l->name;
  fprintf(f, "\n/* Variants: one network per size, %s_create() and %s(...) run variant 0;\n"
             " * %s_create_variant(v, NULL) makes a context of variant v (a weights file instead of NULL:\n"
             " * as %s_create_from), whose %s_run takes that variant's shapes. %s_variant(values) finds\n"
             " * the variant of these values of %s_VARIANT_NAMES (-1: none); %s_shape(v, k, shape)\n"
             " * writes the shape of input k (k >= %s_NUM_INPUTS: of output k - %s_NUM_INPUTS) and\n"
             " * returns its rank (-1: no such variant or tensor).\n", N, N, N, N, N, N, N, N, N, N);
  for (int v = 0; v < nl; v++) {
    const Lib *x = &l[v];
    fprintf(f, " *   variant %d: %s:", v, x->label);
    for (int i = 0; i < x->n->ntensors; i++)
      if (x->kind[i] == K_INPUT) fprintf(f, " %s", shape_text(x->n->tensors[i]));
    fprintf(f, " ->");
    for (int i = 0; i < x->noutputs; i++) fprintf(f, " %s", shape_text(x->n->outputs[i]));
    fprintf(f, "; arena %.2f MiB\n", (double)x->plan.arena_bytes / (1024.0 * 1024.0));
  }
  fprintf(f, " */\n#define %s_NUM_VARIANTS %d\n#define %s_VARIANT_NAMES {", N, nl, N);
  for (int k = 0; k < s->nsizes; k++) fprintf(f, "%s\"%s\"", k ? ", " : "", s->size_names[k]);
  fprintf(f, "}\n#define %s_VARIANT_VALUES {", N);
  for (int v = 0; v < nl; v++) {
    fprintf(f, "%s{", v ? ", " : "");
    for (int k = 0; k < s->nsizes; k++) fprintf(f, "%s%lld", k ? ", " : "", (long long)s->nets[v].values[k]);
    fprintf(f, "}");
  }
  fprintf(f, "}\n");
}

static bool write_header(const DeploySpec *s, const Lib *l, int nl, const Blob *b, const char *path, bool cuda) {
  FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
  if (!f) {
    diag_error((Loc){0}, "cannot write %s", path);
    return false;
  }
  const char *N = l->name;
  fprintf(f, "/* Generated by texc %s: network %s (%s) as a library for %s (docs/DEPLOY.md).\n"
             " *\n * Every tensor is dense, row-major, in the model's layout, float32 unless typed otherwise\n"
             " * below. %s(...) runs the network once (its first call creates a context that later\n"
             " * calls reuse; calls are serialised). A program that keeps the network loaded creates a context with\n"
             " * %s_create() (the weights %s) or %s_create_from(FILE) (a safetensors file), calls\n"
             " * %s_run(ctx, ...) as often as it likes (one thread at a time per context: the\n"
             " * context holds the intermediate tensors), and frees it with %s_destroy(ctx).\n"
             " * Each returns 0 (or a context), else non-zero (NULL) and %s_last_error() says why.\n",
          TEXC_VERSION, l->n->name, l->n->file, cuda ? "CUDA" : "the CPU", N, N,
          l->weights_file ? xprintf("from %s", l->weights_file) : "embedded", N, N, N, N);
  if (cuda)
    fprintf(f, " * CUDA: %s and %s_run take host pointers; %s_run_device takes device pointers\n"
               " * (CUdeviceptr values cast to float *) and does not copy.\n", N, N, N);
  fprintf(f, " */\n#pragma once\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  if (nl > 1) fprintf(f, "/* The shapes of variant 0 (%s); the others' below. */\n", l->label);
  fprintf(f, "#define %s_NUM_INPUTS %d\n", N, l->ninputs);
  for (int i = 0; i < l->n->ntensors; i++)
    if (l->kind[i] == K_INPUT) {
      fprintf(f, "/* input %lld: '%s' */\n", (long long)l->offset[i], l->n->tensors[i]->name);
      h_shape(f, l->ninputs == 1 ? xprintf("%s_INPUT", N) : xprintf("%s_INPUT%lld", N, (long long)l->offset[i]), l->n->tensors[i]);
    }
  fprintf(f, "#define %s_NUM_OUTPUTS %d\n", N, l->noutputs);
  for (int i = 0; i < l->noutputs; i++) {
    fprintf(f, "/* output %d: '%s' */\n", i, comment_text(net_output_name(l->n, i)));
    h_shape(f, l->noutputs == 1 ? xprintf("%s_OUTPUT", N) : xprintf("%s_OUTPUT%d", N, i), l->n->outputs[i]);
  }
  fprintf(f, "#define %s_ARENA_BYTES %lld /* the intermediate tensors, planned */\n", N, (long long)l->plan.arena_bytes);
  fprintf(f, "#define %s_WEIGHTS_BYTES %lld\n", N, (long long)b->bytes);
  if (nl > 1) h_variants(f, s, l, nl);
  fprintf(f, "\ntypedef struct %s_ctx %s_ctx;\n", N, N);
  fprintf(f, "int %s(%s);\n", N, c_params(l));
  fprintf(f, "%s_ctx *%s_create(void);\n%s_ctx *%s_create_from(const char *weights_file);\n", N, N, N, N);
  fprintf(f, "int %s_run(%s_ctx *ctx, %s);\n", N, N, c_params(l));
  if (cuda) fprintf(f, "int %s_run_device(%s_ctx *ctx, %s);\n", N, N, c_params(l));
  fprintf(f, "void %s_destroy(%s_ctx *ctx);\nconst char *%s_last_error(void);\n", N, N, N);
  if (nl > 1)
    fprintf(f, "%s_ctx *%s_create_variant(int variant, const char *weights_file);\n"
               "int %s_variant(const int64_t *values);\nint %s_shape(int variant, int tensor, int64_t *shape);\n",
            N, N, N, N);
  fprintf(f, "\n#ifdef __cplusplus\n}\n#endif\n");
  if (f != stdout) fclose(f);
  return true;
}

/* ---- building the library -------------------------------------------------------------- */

/* Run ARGV (ARGV[0] a program on PATH); true when it exits 0. */
static bool spawn(char **argv) {
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv);
    _exit(127);
  }
  int st;
  return pid > 0 && waitpid(pid, &st, 0) >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The folder of rt_net.h: beside the runtime archive's folder (build/libtexrt.a:
 * runtime/), else $TEXC_RUNTIME_INCLUDE. */
static const char *runtime_include(const char *archive) {
  const char *env = getenv("TEXC_RUNTIME_INCLUDE");
  if (env) return env;
  char *dir = xstrdup(archive), *slash = strrchr(dir, '/');
  const char *up = slash ? (*slash = 0, xprintf("%s/../runtime", dir)) : "../runtime";
  return access(xprintf("%s/rt_net.h", up), R_OK) == 0 ? up : NULL;
}

/* cc -shared: the C file, the kernels' object (NULL for CUDA), the runtime. MORE: the entry
 * points of a library of several networks. */
static bool link_library(const Lib *l, bool more, const char *dir, const char *cfile, const char *obj, const char *out) {
  const char *rt = cg_runtime_archive();
  const char *inc = rt ? runtime_include(rt) : NULL;
  if (!inc) {
    diag_error((Loc){0}, "--emit so: cannot find %s (set TEXC_RUNTIME to libtexrt.a%s)",
               rt ? "runtime/rt_net.h" : "libtexrt.a", rt ? " and TEXC_RUNTIME_INCLUDE to the folder of rt_net.h" : "");
    return false;
  }
  const char *vs = xprintf("%s/exports.map", dir);
  FILE *f = fopen(vs, "w");
  if (!f) return false;
  const char *N = l->name;
  fprintf(f, "{ global: %s; %s_create; %s_create_from; %s_run; %s_run_device; %s_destroy; %s_last_error;", N, N, N, N, N,
          N, N);
  if (more) fprintf(f, " %s_create_variant; %s_variant; %s_shape;", N, N, N);
  fprintf(f, "\n  local: *; };\n");
  fclose(f);
  const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
  char *words = xstrdup(cc), *argv[48];
  int argc = 0;
  for (char *w = strtok(words, " \t"); w && argc < 24; w = strtok(NULL, " \t")) argv[argc++] = w;
  if (argc == 0) argv[argc++] = "cc";
  /* nodelete: the thread pool outlives dlclose */
  const char *rest[] = {"-shared", "-fPIC", "-O2", "-w", "-Wl,-z,nodelete", xprintf("-Wl,--version-script=%s", vs),
                        xprintf("-I%s", inc), "-o", out, cfile};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) argv[argc++] = (char *)rest[i];
  if (obj) argv[argc++] = (char *)obj;
  const char *libs[] = {rt, "-lm", "-lpthread", "-ldl"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) argv[argc++] = (char *)libs[i];
  argv[argc] = NULL;
  if (!spawn(argv)) {
    diag_error((Loc){0}, "--emit so: compiling and linking the library with '%s' failed", cc);
    return false;
  }
  return true;
}

/* Does every task of L have concrete sizes? Else the error. */
static bool sized(const Lib *l) {
  for (int t = 0; t < l->n->ntasks; t++)
    if (l->dn->fns[t]->nsizes) {
      diag_error(l->n->loc, "network %s: task %s has symbolic sizes; give them values with -D", l->n->name, l->dn->fns[t]->name);
      return false;
    }
  return true;
}

/* The CPU kernels of the NL networks L as one object OBJ, symbols NAME__ + each Lib's SYM.
 * A task lowered once for several networks (the CLI lowers a kernel text it has lowered
 * for another size no more: the same body) is one function, so a batch size's or cache
 * length's networks share every task their sizes leave alone. The first network's
 * functions keep their names; another's are `vK_` + name. */
static bool build_cpu_kernels(const DeploySpec *s, Lib *l, int nl, const char *obj) {
  int total = 0, nu = 0;
  for (int v = 0; v < nl; v++) total += l[v].n->ntasks;
  LoweredFunc **u = xalloc(sizeof *u * (size_t)(total + 1));
  for (int v = 0; v < nl; v++) {
    Network *n = l[v].n;
    l[v].sym = xalloc(sizeof(char *) * (size_t)(n->ntasks + 1));
    for (int t = 0; t < n->ntasks; t++) {
      const LoweredFunc *g = l[v].dn->fns[t];
      int j = 0;
      while (j < nu && u[j]->body != g->body) j++;
      if (j == nu) {
        LoweredFunc *f = xalloc(sizeof *f);
        *f = *g;
        if (v) f->name = xprintf("v%d_%s", v, f->name);
        u[nu++] = f;
      }
      l[v].sym[t] = u[j]->name;
    }
  }
  if (s->o->verbose && nl > 1)
    fprintf(stderr, "%s: %d functions for the %d tasks of %d networks\n", l->name, nu, total, nl);
  Options o = *s->o;
  o.prefix = xprintf("%s__", l->name);
  return backend_llvm.emit(u, nu, "obj", obj, &o);
}

/* The kernels of network L for CUDA: its PTX file in DIR and the plans. */
static bool build_cuda_kernels(const DeploySpec *s, const Lib *l, const char *dir, RtGpuFunc **plans, const char **ptx_file) {
  int n = l->n->ntasks;
  LoweredFunc **fns = l->dn->fns;
  const char *arch = s->o->mcpu;
  if (arch && strncmp(arch, "sm_", 3) == 0) arch = xprintf("compute_%s", arch + 3);
  char *src = cg_gpu_source(fns, n, TARGET_CUDA, plans);
  char *ptx = src ? cg_nvrtc_compile(src, arch) : NULL;
  if (!ptx) return false;
  *ptx_file = xprintf("%s/kernels%s.ptx", dir, l->sfx);
  FILE *f = fopen(*ptx_file, "wb");
  bool ok = f && fwrite(ptx, 1, strlen(ptx) + 1, f) == strlen(ptx) + 1; /* with its NUL */
  if (f && fclose(f) != 0) ok = false;
  free(ptx);
  return ok;
}

static void remove_dir(const char *dir, const Lib *l, int nl) {
  static const char *const files[] = {"lib.c", "kernels.o", "weights.bin", "exports.map", NULL};
  for (int i = 0; files[i]; i++) unlink(xprintf("%s/%s", dir, files[i]));
  for (int v = 0; v < nl; v++) unlink(xprintf("%s/kernels%s.ptx", dir, l[v].sfx));
  rmdir(dir);
}

/* "batch=8, seq=128": network V's sizes (NULL: the library's only network). */
static const char *size_label(const DeploySpec *s, int v) {
  if (!s->nsizes) return NULL;
  char *t = xstrdup("");
  for (int k = 0; k < s->nsizes; k++)
    t = xprintf("%s%s%s=%lld", t, k ? ", " : "", s->size_names[k], (long long)s->nets[v].values[k]);
  return t;
}

/* Do the networks of a library take and give the same kinds of tensors, as one API must? */
static bool same_signature(const Lib *a, const Lib *b) {
  if (a->ninputs != b->ninputs || a->noutputs != b->noutputs) {
    diag_error((Loc){0}, "--emit so: at %s network %s has %d inputs and %d outputs, at %s %d and %d: one library's "
               "networks must agree", a->label, a->n->name, a->ninputs, a->noutputs, b->label, b->ninputs, b->noutputs);
    return false;
  }
  for (int i = 0; i < a->noutputs; i++)
    if (a->n->outputs[i]->dtype != b->n->outputs[i]->dtype || a->n->outputs[i]->ndim != b->n->outputs[i]->ndim) {
      diag_error((Loc){0}, "--emit so: output %d of network %s is %s of rank %d at %s, %s of rank %d at %s", i,
                 a->n->name, dtype_name(a->n->outputs[i]->dtype), a->n->outputs[i]->ndim, a->label,
                 dtype_name(b->n->outputs[i]->dtype), b->n->outputs[i]->ndim, b->label);
      return false;
    }
  for (int i = 0; i < a->ninputs; i++)
    if (strcmp(c_input_type(a, i), c_input_type(b, i)) != 0) {
      diag_error((Loc){0}, "--emit so: input %d of network %s is %s at %s, %s at %s", i, a->n->name, c_input_type(a, i),
                 a->label, c_input_type(b, i), b->label);
      return false;
    }
  return true;
}

int net_deploy_emit(const DeploySpec *s) {
  bool so = strcmp(s->kind, "so") == 0, cuda = s->o->target == TARGET_CUDA;
  if (s->o->target != TARGET_LLVM && !cuda) {
    diag_error((Loc){0}, "--emit %s of a network: --target llvm or cuda, not %s", s->kind, target_names[s->o->target]);
    return 1;
  }
  if (so && (!s->out || !strcmp(s->out, "-"))) {
    diag_error((Loc){0}, "--emit so needs an output file (-o libNAME.so)");
    return 1;
  }
  int nl = s->nnets;
  Lib *l = xalloc(sizeof *l * (size_t)nl);
  Blob b = {0};
  const char *name = lib_name(s, s->nets[0].n);
  if (!name) return 1;
  for (int v = 0; v < nl; v++) {
    Lib *x = &l[v];
    *x = (Lib){.name = name, .sfx = v ? xprintf("_v%d", v) : "", .label = size_label(s, v), .dn = &s->nets[v],
               .n = s->nets[v].n, .weights_file = s->weights_file};
    if (!lib_layout(x->dn, x, &b) || (v && !same_signature(&l[0], x))) return 1;
    if (s->o->verbose) {
      Network *n = x->n;
      int folded_tasks = 0;
      for (int t = 0; t < n->ntasks; t++) folded_tasks += n->tasks[t].folded;
      fprintf(stderr, "%s%s%s: %d inputs, %d weights (%.2f MiB), %d calls of %d tasks (%d tuned)", x->name,
              x->label ? " at " : "", x->label ? x->label : "", x->ninputs, x->nweights,
              (double)x->weights_bytes / (1024.0 * 1024.0), n->ngroups - x->ninit, n->ntasks - folded_tasks, x->dn->ntuned);
      if (x->ninit)
        fprintf(stderr, ", %d calls at create (packed weights, %.2f MiB)", x->ninit, (double)x->folded_bytes / (1024.0 * 1024.0));
      fprintf(stderr, "; ");
      net_plan_print(stderr, &x->plan);
    }
  }
  if (s->o->verbose && nl > 1)
    fprintf(stderr, "%s: %d networks, their weights %.2f MiB (%d tensors, each once)\n", name, nl,
            (double)b.bytes / (1024.0 * 1024.0), b.weights.n);
  if (!so) return write_header(s, l, nl, &b, s->out ? s->out : "-", cuda) ? 0 : 1;
  char tmpl[] = "/tmp/texc-lib-XXXXXX";
  const char *dir = mkdtemp(tmpl);
  if (!dir) {
    diag_error((Loc){0}, "--emit so: cannot create a temporary folder");
    return 1;
  }
  const char *blob = NULL, *cfile = xprintf("%s/lib.c", dir), *obj = cuda ? NULL : xprintf("%s/kernels.o", dir);
  const char **ptx = xalloc(sizeof(char *) * (size_t)nl);
  RtGpuFunc **plans = xalloc(sizeof(RtGpuFunc *) * (size_t)nl);
  bool ok = true;
  for (int v = 0; v < nl && ok; v++) ok = sized(&l[v]);
  if (ok && !cuda) ok = build_cpu_kernels(s, l, nl, obj);
  for (int v = 0; v < nl && ok && cuda; v++) ok = build_cuda_kernels(s, &l[v], dir, &plans[v], &ptx[v]);
  if (ok && !s->weights_file) {
    blob = xprintf("%s/weights.bin", dir);
    ok = write_blob(&b, blob);
  }
  ok = ok && write_c(s, l, nl, &b, cfile, blob, obj, plans, ptx);
  ok = ok && link_library(l, nl > 1, dir, cfile, obj, s->out);
  if (ok && s->weights_out && !safetensors_write(s->weights_out, &b.weights)) ok = false;
  if (getenv("TEXC_KEEP_TEMPS")) fprintf(stderr, "texc: kept %s (lib.c, the kernels, the weights)\n", dir);
  else remove_dir(dir, l, nl);
  return ok ? 0 : 1;
}
