/* network.c — a network: a graph of operator calls, fused into tasks (docs/NETWORKS.md).
 *
 *   network resnet(data: f32[1, 224, 224, 3], w1: f32[7, 7, 3, 64], ...) -> prob: f32[1, 1000] {
 *     x = conv2d_nhwc(data, w1, SH = 2, SW = 2, PH = 3, PW = 3)
 *     x = relu(x)
 *     ...
 *   }
 *
 * A network is an item of the grammar (parser.y: an A_NETWORK whose body holds A_NETCALL
 * nodes); a file may hold several, and commands pick one by name. Each call instantiates
 * an operator kernel (imported or of this file): its sizes are unified with the arguments'
 * shapes, its file's constants are its attributes. Every integer (constants, attributes,
 * shapes) is folded by the checker's check_const_expr, so floor division, overflow and
 * division by zero mean what they mean in a kernel. Elementwise calls whose first producer
 * has no other use are fused into it; each group becomes one kernel, written as an AST with
 * every size replaced by its value and checked as any kernel: a task of the tuner.
 */
#include "front/network.h"

#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.h"

/* ---- the file's networks ------------------------------------------------------ */

bool net_is_folded(const Network *n, const NetTensor *t) {
  return t->kind == NT_VALUE && t->producer >= 0 && n->groups[n->nodes[t->producer]->group]->folded;
}

bool net_is_network_file(const char *path) {
  bool quiet = diag_silent;
  int errors = diag_errors();
  diag_silent = true; /* a file that does not parse is reported by whoever parses it next */
  Ast *f = parse_file(path);
  diag_silent = quiet;
  if (errors == 0) diag_reset(); /* ... and counted then, once */
  for (int i = 0; f && i < f->list.len; i++)
    if (((Ast *)VEC_AT(f->list, i))->kind == A_NETWORK) return true;
  return false;
}

/* The names of the networks NETS, "a, b". */
static char *names_text(const Vec *nets) {
  char *s = xstrdup("");
  for (int i = 0; i < nets->len; i++) s = xprintf("%s%s%s", s, i ? ", " : "", ((Ast *)VEC_AT(*nets, i))->name);
  return s;
}

/* The network NAME of FILE (its own items; NULL: the only one). NULL: reported. */
static Ast *pick_network(Ast *file, const char *name) {
  Vec nets = {0};
  Ast *found = NULL;
  for (int i = 0; i < file->list.len; i++) {
    Ast *it = VEC_AT(file->list, i);
    if (it->kind != A_NETWORK) continue;
    for (int j = 0; j < nets.len; j++) {
      Ast *old = VEC_AT(nets, j);
      if (strcmp(old->name, it->name)) continue;
      diag_error(it->loc, "network '%s' is defined twice; rename one of them", it->name);
      diag_note(old->loc, "the first definition is here");
      return NULL;
    }
    vec_push(&nets, it);
    if (name && strcmp(name, it->name) == 0) found = it;
  }
  if (!nets.len) diag_error((Loc){file->sval, 1, 1}, "no `network NAME(...) -> ... { ... }` block");
  else if (name && !found)
    diag_error((Loc){0}, "--kernel %s: no network of that name in %s (its networks: %s)", name,
               file->sval, names_text(&nets));
  else if (!name && nets.len > 1)
    diag_error(((Ast *)VEC_AT(nets, 1))->loc, "%s has %d networks (%s): pick one with --kernel NAME",
               file->sval, nets.len, names_text(&nets));
  else if (!name) found = VEC_AT(nets, 0);
  return found;
}

/* ---- constants ------------------------------------------------------------------- */

static NetBinding *env_find(NetBinding *env, int n, const char *name) {
  for (int i = n - 1; i >= 0; i--)
    if (strcmp(env[i].name, name) == 0) return &env[i];
  return NULL;
}

/* A name's value among the bindings of a Bindings (check_const_expr's lookup). */
typedef struct Bindings {
  NetBinding *env;
  int n;
} Bindings;

static bool binding_value(void *bs, const char *name, int64_t *value) {
  Bindings *b = bs;
  NetBinding *e = env_find(b->env, b->n, name);
  if (e) *value = e->value;
  return e != NULL;
}

/* The value of integer expression A over ENV, folded as the checker folds constants. False
 * when it has none: reported, but for an unknown name, which goes to *UNKNOWN when that is
 * not NULL (the caller reports it in its words). */
static bool value_of(const Ast *a, NetBinding *env, int n, const char **unknown, int64_t *out) {
  Bindings b = {env, n};
  return check_const_expr(a, binding_value, &b, unknown, out);
}

/* Append NAME = V to the growable binding list. */
static void env_push(NetBinding **env, int *n, const char *name, int64_t v) {
  NetBinding *e = xalloc(sizeof *e * (size_t)(*n + 1));
  if (*n) memcpy(e, *env, sizeof *e * (size_t)*n);
  e[*n] = (NetBinding){name, v};
  *env = e;
  (*n)++;
}

/* The constants of ITEMS (one file's items), in order, each overridden by OVR (attributes
 * or -D). False when one does not evaluate (reported). */
static bool file_consts(Vec *items, NetBinding *ovr, int novr, NetBinding **env, int *n) {
  for (int i = 0; i < items->len; i++) {
    Ast *it = VEC_AT(*items, i);
    if (!it || it->kind != A_CONST) continue;
    NetBinding *o = env_find(ovr, novr, it->name);
    int64_t v;
    if (o) env_push(env, n, it->name, o->value);
    else if (value_of(it->a, *env, *n, NULL, &v)) env_push(env, n, it->name, v);
    else return false;
  }
  return true;
}

/* ---- operators ------------------------------------------------------------------- */

/* Where an operator lives: its kernel and the items of its file (for the constants). */
typedef struct OpDef {
  Ast *kernel;
  Vec *items;
} OpDef;

static void collect_ops(Vec *items, Vec *out) {
  for (int i = 0; i < items->len; i++) {
    Ast *it = VEC_AT(*items, i);
    if (it && it->kind == A_IMPORT) collect_ops(&it->list, out);
    if (it && it->kind == A_KERNEL && it->name) {
      OpDef *d = xalloc(sizeof *d);
      *d = (OpDef){it, items};
      vec_push(out, d);
    }
  }
}

static void collect_externs(Vec *items, Vec *out) {
  for (int i = 0; i < items->len; i++) {
    Ast *it = VEC_AT(*items, i);
    if (it && it->kind == A_IMPORT) collect_externs(&it->list, out);
    if (it && it->kind == A_EXTERN) vec_push(out, it);
  }
}

static OpDef *find_op(Vec *ops, const char *name) {
  for (int i = 0; i < ops->len; i++) {
    OpDef *d = VEC_AT(*ops, i);
    if (strcmp(d->kernel->name, name) == 0) return d;
  }
  return NULL;
}

/* The form of an elementwise operator: one `=` statement, no `tensor`, one output. */
static bool is_elementwise(const Ast *k) {
  if (k->list2.len != 1 || k->list3.len != 1) return false;
  const Ast *st = VEC_AT(k->list3, 0);
  return st && st->kind == A_STMT && st->op == '=';
}

static char *shape_text(const int64_t *shape, int nd) {
  char *s = xstrdup("[");
  for (int d = 0; d < nd; d++) s = xprintf("%s%s%lld", s, d ? ", " : "", (long long)shape[d]);
  return xprintf("%s]", s);
}

static char *param_text(const Ast *p) {
  char *s = xprintf("%s: %s[", p->name, p->name2 ? p->name2 : "f32");
  for (int d = 0; d < p->list.len; d++) {
    const Ast *e = VEC_AT(p->list, d);
    s = xprintf("%s%s%s", s, d ? ", " : "", e->kind == A_NAME ? e->name : e->kind == A_INT ? xprintf("%lld", (long long)e->ival) : "...");
  }
  return xprintf("%s]", s);
}

/* ---- the loader's state ---------------------------------------------------------- */

typedef struct Loader {
  Network *net;
  Vec ops;        /* OpDef* */
  Vec scope;      /* NetTensor*: the latest tensor of each name is found last */
  NetBinding *consts;
  int nconsts;
  const NetRewrites *rw; /* the caller's rewrites for its target; NULL: none */
  Vec packed;            /* Packed*: each weight packed once, whatever calls read it */
  NetBinding *defs;      /* -D values: the constants of the network's own file, its kernels' too */
  int ndefs;
  const Vec *items;      /* the network file's items */
} Loader;

/* Weight W packed in blocks of B (pack_weight): tensor PACKED. */
typedef struct Packed {
  const NetTensor *w;
  int64_t b;
  NetTensor *packed;
} Packed;

static NetTensor *lookup(Loader *L, const char *name) {
  for (int i = L->scope.len - 1; i >= 0; i--) {
    NetTensor *t = VEC_AT(L->scope, i);
    if (strcmp(t->name, name) == 0) return t;
  }
  return NULL;
}

static NetTensor *new_tensor(Loader *L, const char *name, NetTensorKind kind, int nd,
                             const int64_t *shape) {
  Network *n = L->net;
  NetTensor *t = xalloc(sizeof *t);
  t->name = name;
  t->kind = kind;
  t->dtype = DT_F32;
  t->ndim = nd;
  memcpy(t->shape, shape, sizeof(int64_t) * (size_t)nd);
  t->index = n->ntensors;
  t->producer = -1;
  NetTensor **ts = xalloc(sizeof *ts * (size_t)(n->ntensors + 1));
  if (n->ntensors) memcpy(ts, n->tensors, sizeof *ts * (size_t)n->ntensors);
  ts[n->ntensors++] = t;
  n->tensors = ts;
  vec_push(&L->scope, t);
  return t;
}

/* The dtypes of network tensors: f32; the integers and booleans of ids, indices and masks;
 * u8 and i8 for quantized values and filters. */
static bool net_dtype(DType t) {
  return t == DT_F32 || t == DT_F16 || t == DT_F64 || t == DT_I32 || t == DT_I64 || t == DT_BOOL || t == DT_U8 || t == DT_I8;
}

/* The shape of a header parameter (constants of the network's file); false: reported. */
static bool param_shape(Loader *L, const Ast *p, int64_t *shape, int *nd) {
  if (p->list.len > NET_MAX_DIMS || p->list.len < 1) {
    diag_error(p->loc, "%s: a network tensor has 1 to %d dimensions", p->name, NET_MAX_DIMS);
    return false;
  }
  if (!net_dtype((DType)p->op)) {
    diag_error(p->loc, "%s: a network tensor is f32, f16, f64, i32, i64, u8, i8 or bool, not %s", p->name,
               dtype_name((DType)p->op));
    return false;
  }
  *nd = p->list.len;
  for (int d = 0; d < *nd; d++) {
    const char *unbound = NULL;
    const Ast *e = VEC_AT(p->list, d);
    if (!value_of(e, L->consts, L->nconsts, &unbound, &shape[d])) {
      if (unbound)
        diag_error(e->loc, "dimension %d of %s is not a constant expression: unknown constant %s",
                   d + 1, p->name, unbound);
      return false;
    }
    if (shape[d] < 1) {
      diag_error(e->loc, "dimension %d of %s is %lld: dimensions must be at least 1", d + 1,
                 p->name, (long long)shape[d]);
      return false;
    }
  }
  return true;
}

/* ---- one call -------------------------------------------------------------------- */

/* The attributes of call ST (A_KWARG args) as bindings; false: reported. */
static bool call_attrs(Loader *L, const Ast *st, OpDef *d, NetBinding **attrs, int *nattrs) {
  for (int i = 0; i < st->list2.len; i++) {
    const Ast *a = VEC_AT(st->list2, i);
    if (a->kind != A_KWARG) continue;
    bool is_const = false;
    for (int j = 0; j < d->items->len; j++) {
      const Ast *it = VEC_AT(*d->items, j);
      if (it && it->kind == A_CONST && strcmp(it->name, a->name) == 0) is_const = true;
    }
    if (!is_const) {
      char *names = xstrdup("");
      for (int j = 0; j < d->items->len; j++) {
        const Ast *it = VEC_AT(*d->items, j);
        if (it && it->kind == A_CONST) names = xprintf("%s %s", names, it->name);
      }
      diag_error(a->loc, "operator %s has no attribute '%s'%s%s", st->name, a->name,
                 names[0] ? "; its attributes are" : " (it has none)", names);
      return false;
    }
    int64_t v;
    const char *unbound = NULL;
    if (!value_of(a->a, L->consts, L->nconsts, &unbound, &v)) {
      if (unbound)
        diag_error(a->a->loc, "attribute %s must be an integer constant expression: unknown "
                   "constant %s", a->name, unbound);
      return false;
    }
    env_push(attrs, nattrs, a->name, v);
  }
  return true;
}

/* The tensor arguments of call ST; false: reported. */
static bool call_args(Loader *L, const Ast *st, NetNode *nd) {
  nd->args = xalloc(sizeof(NetTensor *) * (size_t)(st->list2.len + 1));
  for (int i = 0; i < st->list2.len; i++) {
    const Ast *a = VEC_AT(st->list2, i);
    if (a->kind == A_KWARG) continue;
    if (a->kind != A_NAME) {
      diag_error(a->loc, "an argument of %s must be a tensor name (attributes are NAME = value)", st->name);
      return false;
    }
    NetTensor *t = lookup(L, a->name);
    if (!t) {
      diag_error(a->loc, "unknown tensor '%s': a network parameter or the result of an earlier call", a->name);
      return false;
    }
    nd->args[nd->nargs++] = t;
  }
  int want = nd->kernel->list.len;
  if (nd->nargs != want) {
    diag_error(st->loc, "operator %s takes %d tensor argument%s, not %d", st->name, want,
               want == 1 ? "" : "s", nd->nargs);
    return false;
  }
  return true;
}

/* Bind the operator's sizes from the arguments' shapes: plain names first, then every
 * dimension checked. false: reported at the argument. */
static bool unify(const Ast *st, NetNode *nd) {
  for (int i = 0; i < nd->nargs; i++) {
    Ast *p = VEC_AT(nd->kernel->list, i);
    NetTensor *t = nd->args[i];
    if ((DType)p->op != t->dtype) {
      diag_error(st->loc, "argument %d of %s (%s) is %s, but %s is %s", i + 1, st->name, param_text(p),
                 dtype_name((DType)p->op), t->name, dtype_name(t->dtype));
      return false;
    }
    if (p->list.len != t->ndim) {
      diag_error(st->loc, "argument %d of %s (%s) has %d dimensions, but %s is %s", i + 1,
                 st->name, param_text(p), p->list.len, t->name, shape_text(t->shape, t->ndim));
      return false;
    }
    for (int d = 0; d < t->ndim; d++) {
      Ast *e = VEC_AT(p->list, d);
      if (e->kind == A_NAME && !env_find(nd->env, nd->nenv, e->name))
        env_push(&nd->env, &nd->nenv, e->name, t->shape[d]);
    }
  }
  for (int i = 0; i < nd->nargs; i++) {
    Ast *p = VEC_AT(nd->kernel->list, i);
    NetTensor *t = nd->args[i];
    int64_t want[NET_MAX_DIMS];
    bool ok = true;
    for (int d = 0; d < t->ndim; d++) {
      const char *unbound = NULL;
      if (!value_of(VEC_AT(p->list, d), nd->env, nd->nenv, &unbound, &want[d])) {
        if (unbound)
          diag_error(st->loc, "%s: size '%s' of parameter %s cannot be inferred from the arguments",
                     st->name, unbound, p->name);
        else
          diag_note(st->loc, "in this call of %s", st->name);
        return false;
      }
      if (want[d] != t->shape[d]) ok = false;
    }
    if (!ok) {
      const Ast *arg = NULL;
      for (int j = 0, k = 0; j < st->list2.len; j++) {
        const Ast *a = VEC_AT(st->list2, j);
        if (a->kind != A_KWARG && k++ == i) arg = a;
      }
      diag_error(arg ? arg->loc : st->loc, "shape mismatch: argument %d of %s (%s) must be %s here, but %s is %s",
                 i + 1, st->name, param_text(p), shape_text(want, t->ndim), t->name,
                 shape_text(t->shape, t->ndim));
      return false;
    }
  }
  return true;
}

/* The output tensor of the call, named by the step's result. false: reported. */
static bool call_output(Loader *L, const Ast *st, NetNode *nd) {
  Ast *k = nd->kernel;
  if (k->list2.len != 1) {
    diag_error(st->loc, "operator %s has %d outputs; a network call takes operators with one",
               st->name, k->list2.len);
    return false;
  }
  Ast *o = VEC_AT(k->list2, 0);
  int64_t shape[NET_MAX_DIMS];
  if (o->list.len > NET_MAX_DIMS) return diag_error(st->loc, "%s: too many dimensions", st->name), false;
  for (int d = 0; d < o->list.len; d++) {
    const char *unbound = NULL;
    if (!value_of(VEC_AT(o->list, d), nd->env, nd->nenv, &unbound, &shape[d])) {
      if (unbound)
        diag_error(st->loc, "%s: dimension %d of its output needs size '%s', which no argument gives",
                   st->name, d + 1, unbound);
      else
        diag_note(st->loc, "in this call of %s", st->name);
      return false;
    }
    if (shape[d] < 1) {
      diag_error(st->loc, "%s: dimension %d of its output would be %lld (the input is too small "
                 "for these attributes)", st->name, d + 1, (long long)shape[d]);
      return false;
    }
  }
  if (!net_dtype((DType)o->op)) {
    diag_error(st->loc, "operator %s makes %s: a network tensor is f32, f16, f64, i32, i64, u8, i8 or bool", st->name, dtype_name((DType)o->op));
    return false;
  }
  const Ast *res = VEC_AT(st->list, 0);
  nd->out = new_tensor(L, res->name, NT_VALUE, o->list.len, shape);
  nd->out->dtype = (DType)o->op;
  nd->out->producer = L->net->nnodes;
  return true;
}

static void push_node(Network *n, NetNode *nd) {
  NetNode **ns = xalloc(sizeof *ns * (size_t)(n->nnodes + 1));
  if (n->nnodes) memcpy(ns, n->nodes, sizeof *ns * (size_t)n->nnodes);
  ns[n->nnodes++] = nd;
  n->nodes = ns;
}

/* A node of operator OP (its A_KERNEL KERNEL) on the NARGS tensors ARGS, its sizes the NENV
 * bindings of ENV, writing a new tensor NAME of shape SHAPE (not an identifier: no call can
 * name it), pushed before BEFORE, the node that reads it. Returns that tensor. */
static NetTensor *insert_node(Loader *L, NetNode *before, const char *op, Ast *kernel, NetTensor **args, int nargs,
                              const NetBinding *env, int nenv, const char *name, int nd, const int64_t *shape) {
  NetNode *w = xalloc(sizeof *w);
  w->op = op;
  w->loc = before->loc;
  w->kernel = kernel;
  w->args = xalloc(sizeof(NetTensor *) * (size_t)nargs);
  memcpy(w->args, args, sizeof(NetTensor *) * (size_t)nargs);
  w->nargs = nargs;
  w->packed_arg = -1;
  for (int j = 0; j < nenv; j++) env_push(&w->env, &w->nenv, env[j].name, env[j].value);
  w->out = new_tensor(L, name, NT_VALUE, nd, shape);
  w->out->producer = L->net->nnodes;
  before->out->producer++; /* BEFORE goes after W */
  for (int j = 0; j < nargs; j++) args[j]->nuses++;
  push_node(L->net, w);
  return w->out;
}

/* ---- packed weights -------------------------------------------------------------- */

/* The operator that packs a [KH, KW, CI, CO] filter into CO / B blocks of B channels, each
 * block's weights contiguous in the order a register tile reads them (ci innermost but the
 * B channels): TVM's x86 NCHWc kernels and oneDNN's blocked weights do the same. A product's
 * [K, N] weights pack the same way, into N / B panels of [K, B] (a GEMM's packed B). */
static Ast *pack_kernel(int ndim) {
  static Ast *k[2];
  Ast **slot = &k[ndim == 2];
  if (*slot) return *slot;
  Ast *f = ndim == 2 ? parse_string("<pack>", "kernel pack_weights(K: f32[CI, CO]) -> Kp: f32[CO / B, CI, B] {\n"
                                              "  Kp[o, c, b] = K[c, o * B + b]\n}\n")
                     : parse_string("<pack>", "kernel pack_weights(K: f32[KH, KW, CI, CO]) -> Kp: f32[CO / B, KH, KW, CI, B] {\n"
                                              "  Kp[o, h, w, c, b] = K[h, w, c, o * B + b]\n}\n");
  if (!f) die("network: the packing kernel does not parse");
  return *slot = VEC_AT(f->list, 0);
}

/* Is argument A of node ND weights to pack: a weight [KH, KW, CI, CO] or [K, CO] of a
 * reduction whose output's innermost extent is CO (an NHWC convolution, plain or grouped; a
 * dense layer or a product by a constant matrix)? Its block, or 0. Any such weight may be
 * packed: emit_node rewrites its accesses to the packed layout, whatever they compute. */
static int64_t pack_block_of(const Loader *L, const NetNode *nd, int a) {
  const NetTensor *w = nd->args[a], *o = nd->out;
  if (nd->elementwise || w->kind != NT_WEIGHT || a == 0 || o->ndim < 2) return 0;
  bool filter = w->ndim == 4 && o->ndim == 4, matrix = w->ndim == 2;
  if ((!filter && !matrix) || w->shape[w->ndim - 1] != o->shape[o->ndim - 1]) return 0;
  return L->rw->pack_block(o);
}

/* A weight argument of ND (above) replaced by a pack node's output, which ND reads as
 * [co / B, kh, kw, ci, co % B] or [co / B, k, co % B] (emit_node), when the caller packs
 * (NetRewrites.pack_block). The pack node's group has only a weight as its input: it is
 * folded, computed once at load (NetGroup.folded). A weight that several calls read (a
 * recurrent layer's R at every step, ALBERT's shared layers) is packed once and read by
 * all: a copy per call multiplied its bytes and left every call's weights cold (an LSTM's
 * 1 MB R, unrolled over 100 steps: 100 copies, each product 4x slower than warm). */
static void pack_weight(Loader *L, NetNode *nd) {
  if (!L->rw || !L->rw->pack_block) return;
  for (int a = 1; a < nd->nargs; a++) {
    int64_t b = pack_block_of(L, nd, a);
    if (!b) continue;
    NetTensor *w = nd->args[a];
    nd->packed_arg = a;
    nd->pack_block = b;
    for (int i = 0; i < L->packed.len; i++) {
      Packed *p = VEC_AT(L->packed, i);
      if (p->w == w && p->b == b) {
        nd->args[a] = p->packed; /* its use is counted with the call's other arguments */
        return;
      }
    }
    int r = w->ndim;
    const NetBinding env4[] = {{"KH", w->shape[0]}, {"KW", w->shape[1]}, {"CI", w->shape[2]}, {"CO", w->shape[3]}, {"B", b}};
    const NetBinding env2[] = {{"CI", w->shape[0]}, {"CO", w->shape[1]}, {"B", b}};
    int64_t shape[5] = {w->shape[r - 1] / b};
    for (int d = 0; d < r - 1; d++) shape[1 + d] = w->shape[d];
    shape[r] = b;
    nd->args[a] = insert_node(L, nd, "pack_weights", pack_kernel(r), &w, 1, r == 4 ? env4 : env2, r == 4 ? 5 : 3,
                              xprintf("%s.packed", w->name), r + 1, shape);
    Packed *p = xalloc(sizeof *p);
    *p = (Packed){.w = w, .b = b, .packed = nd->args[a]};
    vec_push(&L->packed, p);
    return; /* one filter per call */
  }
}

/* ---- Winograd convolutions ------------------------------------------------------- */

/* Winograd's F(2x2, 3x3) (Lavin and Gray, 2015): each 2 x 2 block of outputs of a 3 x 3
 * convolution from a 4 x 4 block of input, by 16 products per channel pair instead of 36.
 * Four operators, so that the transformed input V and the products M are network tensors
 * (planned in the arena: a run allocates nothing) and each part gets the default schedule
 * of its form (network_sched.c):
 *   winograd_weights  U = G g G^T, once at load (a folded group, as packed weights)
 *   winograd_input    V = B^T d B per 4 x 4 block (the padding and the row transform inlined)
 *   winograd_product  M: 16 matrix products over the channels, M[a, e] = V[a, e] U[a, e]
 *   winograd_output   Y = A^T M A (the convolution's fused tail, batch norm, relu, joins it)
 * with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
 * A^T = [1 1 1 0; 0 1 -1 -1], written out as selects. Odd heights and widths compute a last
 * half block that Y drops. PAD: the padding on every side, 1 (the same size out) or 0 (an
 * output 2 smaller: inception_v3's unpadded 3 x 3 layers); TY x TX blocks of the output. */
static const char winograd_src[] =
    "kernel winograd_weights(K: f32[3, 3, CI, CO]) -> U: f32[4, 4, CI, CO] {\n"
    "  tensor G: f32[4, 3, CI, CO]\n"
    "  G[a, x, ci, co] = a == 0 ? K[0, x, ci, co] : a == 3 ? K[2, x, ci, co] : a == 1 ? 0.5 * (K[0, x, ci, co] + K[1, x, ci, co] + K[2, x, ci, co]) : 0.5 * (K[0, x, ci, co] - K[1, x, ci, co] + K[2, x, ci, co])\n"
    "  U[a, e, ci, co] = e == 0 ? G[a, 0, ci, co] : e == 3 ? G[a, 2, ci, co] : e == 1 ? 0.5 * (G[a, 0, ci, co] + G[a, 1, ci, co] + G[a, 2, ci, co]) : 0.5 * (G[a, 0, ci, co] - G[a, 1, ci, co] + G[a, 2, ci, co])\n"
    "}\n"
    "kernel winograd_input(X: f32[N, H, W, CI]) -> V: f32[4, 4, N, TY, TX, CI] {\n"
    "  tensor P: f32[N, 2 * TY + 2, 2 * TX + 2, CI]\n"
    "  P[n, h, w, c] = h >= PAD && h < H + PAD && w >= PAD && w < W + PAD ? X[n, h - PAD, w - PAD, c] : 0.0\n"
    "  tensor T: f32[4, N, TY, TX, 4, CI]\n"
    "  T[a, n, ty, tx, j, c] = a == 0 ? P[n, 2 * ty, 2 * tx + j, c] - P[n, 2 * ty + 2, 2 * tx + j, c] : a == 1 ? P[n, 2 * ty + 1, 2 * tx + j, c] + P[n, 2 * ty + 2, 2 * tx + j, c] : a == 2 ? P[n, 2 * ty + 2, 2 * tx + j, c] - P[n, 2 * ty + 1, 2 * tx + j, c] : P[n, 2 * ty + 1, 2 * tx + j, c] - P[n, 2 * ty + 3, 2 * tx + j, c]\n"
    "  V[a, e, n, ty, tx, c] = e == 0 ? T[a, n, ty, tx, 0, c] - T[a, n, ty, tx, 2, c] : e == 1 ? T[a, n, ty, tx, 1, c] + T[a, n, ty, tx, 2, c] : e == 2 ? T[a, n, ty, tx, 2, c] - T[a, n, ty, tx, 1, c] : T[a, n, ty, tx, 1, c] - T[a, n, ty, tx, 3, c]\n"
    "}\n"
    "kernel winograd_product(V: f32[4, 4, N, TY, TX, CI], U: f32[4, 4, CI, CO]) -> M: f32[4, 4, N, TY, TX, CO] {\n"
    "  M[a, e, n, ty, tx, co] += V[a, e, n, ty, tx, ci] * U[a, e, ci, co]\n"
    "}\n"
    "kernel winograd_output(M: f32[4, 4, N, (H + 1) / 2, (W + 1) / 2, CO]) -> Y: f32[N, H, W, CO] {\n"
    "  tensor O: f32[2, 4, N, (H + 1) / 2, (W + 1) / 2, CO]\n"
    "  O[p, e, n, ty, tx, co] = p == 0 ? M[0, e, n, ty, tx, co] + M[1, e, n, ty, tx, co] + M[2, e, n, ty, tx, co] : M[1, e, n, ty, tx, co] - M[2, e, n, ty, tx, co] - M[3, e, n, ty, tx, co]\n"
    "  Y[n, y, x, co] = x % 2 == 0 ? O[y % 2, 0, n, y / 2, x / 2, co] + O[y % 2, 1, n, y / 2, x / 2, co] + O[y % 2, 2, n, y / 2, x / 2, co] : O[y % 2, 1, n, y / 2, x / 2, co] - O[y % 2, 2, n, y / 2, x / 2, co] - O[y % 2, 3, n, y / 2, x / 2, co]\n"
    "}\n";

/* Operator I of winograd_src (0 weights, 1 input, 2 product, 3 output). */
static Ast *winograd_kernel(int i) {
  static Ast *f;
  if (!f && !(f = parse_string("<winograd>", winograd_src))) die("network: the Winograd kernels do not parse");
  return VEC_AT(f->list, i);
}

/* The value bound to NAME in ND's environment, or DEF. */
static int64_t env_get(const NetNode *nd, const char *name, int64_t def) {
  NetBinding *e = env_find(nd->env, nd->nenv, name);
  return e ? e->value : def;
}

/* Is ND a convolution that Winograd's F(2x2, 3x3) computes: stdlib's conv2d_nhwc (or the
 * ONNX importer's conv2d_nhwc_pad) with a 3 x 3 filter that is a weight, stride 1,
 * dilation 1, the same padding on every side, 1 or 0 (*PADDING), and at least 16 channels
 * in and out (fewer leave the transforms' cost uncovered)? */
static bool winograd_fits(const NetNode *nd, int64_t *padding) {
  bool pad = strcmp(nd->op, "conv2d_nhwc_pad") == 0;
  if ((strcmp(nd->op, "conv2d_nhwc") != 0 && !pad) || nd->nargs != 2 || nd->args[1]->kind != NT_WEIGHT) return false;
  const NetTensor *k = nd->args[1], *x = nd->args[0];
  if (k->ndim != 4 || k->shape[0] != 3 || k->shape[1] != 3 || k->shape[2] < 16 || k->shape[3] < 16) return false;
  const char *one[] = {"SH", "SW", "DH", "DW"};
  for (int i = 0; i < 4; i++)
    if (env_get(nd, one[i], 1) != 1) return false;
  const char *pads[] = {"PT", "PL", "PB", "PR", "PH", "PW"};
  *padding = env_get(nd, pads[pad ? 0 : 4], 0);
  for (int i = pad ? 0 : 4; i < (pad ? 4 : 6); i++)
    if (env_get(nd, pads[i], 0) != *padding) return false;
  return (*padding == 1 || *padding == 0) && x->ndim == 4 && x->shape[1] + 2 * *padding >= 3 && x->shape[2] + 2 * *padding >= 3;
}

/* ND (when winograd_fits and the caller asks for it, NetRewrites.winograd) computed by
 * Winograd: the filter's transform, the input's and the products as three nodes before
 * it, and ND itself the output transform of the products. */
static void winograd(Loader *L, NetNode *nd) {
  int64_t pad;
  if (!L->rw || !L->rw->winograd || !winograd_fits(nd, &pad)) return;
  NetTensor *x = nd->args[0], *k = nd->args[1];
  int64_t n = x->shape[0], h = x->shape[1], w = x->shape[2], ci = k->shape[2], co = k->shape[3];
  int64_t oh = h + 2 * pad - 2, ow = w + 2 * pad - 2, ty = (oh + 1) / 2, tx = (ow + 1) / 2;
  NetBinding we[] = {{"CI", ci}, {"CO", co}},
             ie[] = {{"N", n}, {"H", h}, {"W", w}, {"CI", ci}, {"TY", ty}, {"TX", tx}, {"PAD", pad}},
             pe[] = {{"N", n}, {"TY", ty}, {"TX", tx}, {"CI", ci}, {"CO", co}};
  NetTensor *u = insert_node(L, nd, "winograd_weights", winograd_kernel(0), &k, 1, we, 2,
                             xprintf("%s.winograd", k->name), 4, (int64_t[]){4, 4, ci, co});
  NetTensor *v = insert_node(L, nd, "winograd_input", winograd_kernel(1), &x, 1, ie, 7,
                             xprintf("%s.winograd_in", nd->out->name), 6, (int64_t[]){4, 4, n, ty, tx, ci});
  NetTensor *m = insert_node(L, nd, "winograd_product", winograd_kernel(2), (NetTensor *[]){v, u}, 2, pe, 5,
                             xprintf("%s.winograd_m", nd->out->name), 6, (int64_t[]){4, 4, n, ty, tx, co});
  nd->args[0] = m;
  nd->nargs = 1;
  nd->op = "winograd_output";
  nd->kernel = winograd_kernel(3);
  nd->env = NULL, nd->nenv = 0;
  const NetBinding oe[] = {{"N", n}, {"H", oh}, {"W", ow}, {"CO", co}};
  for (int j = 0; j < 4; j++) env_push(&nd->env, &nd->nenv, oe[j].name, oe[j].value);
}

/* One call `y = op(args)` of the body as a node. false: reported. */
static bool add_call(Loader *L, const Ast *st) {
  if (st->list.len != 1) {
    diag_error(st->loc, "an operator call names one result: `y = %s(...)`", st->name);
    return false;
  }
  OpDef *d = find_op(&L->ops, st->name);
  if (!d) {
    diag_error(st->loc, "unknown operator '%s': define it with `kernel %s(...)` or import its file "
               "(the operators of stdlib/nn/ are listed in docs/STDLIB.md)", st->name, st->name);
    return false;
  }
  NetNode *nd = xalloc(sizeof *nd);
  nd->op = st->name;
  nd->loc = st->loc;
  nd->kernel = d->kernel;
  NetBinding *attrs = NULL;
  int nattrs = 0;
  if (!call_attrs(L, st, d, &attrs, &nattrs) || !call_args(L, st, nd)) return false;
  for (int i = 0; d->items == L->items && i < L->ndefs; i++) /* a kernel of the network's file: -D too */
    if (!env_find(attrs, nattrs, L->defs[i].name)) env_push(&attrs, &nattrs, L->defs[i].name, L->defs[i].value);
  if (!file_consts(d->items, attrs, nattrs, &nd->env, &nd->nenv)) {
    diag_note(st->loc, "in this call of %s", st->name);
    return false;
  }
  if (!unify(st, nd) || !call_output(L, st, nd)) return false;
  nd->elementwise = is_elementwise(d->kernel);
  nd->packed_arg = -1;
  winograd(L, nd);
  pack_weight(L, nd);
  for (int i = 0; i < nd->nargs; i++) nd->args[i]->nuses++;
  push_node(L->net, nd);
  return true;
}

/* ---- fused kernels as ASTs ------------------------------------------------------- */

/* Renames of one node inside its group's kernel: tensors to group names, sizes and
 * constants to their values. */
typedef struct Subst {
  const char **from, **to;
  int n;
  NetBinding *env;
  int nenv;
  const char *packed;  /* the parameter read in the packed layout (NetNode.packed_arg), or NULL */
  int64_t block;
} Subst;

static void subst_add(Subst *s, const char *from, const char *to) {
  const char **f = xalloc(sizeof *f * (size_t)(s->n + 1)), **t = xalloc(sizeof *t * (size_t)(s->n + 1));
  if (s->n) {
    memcpy(f, s->from, sizeof *f * (size_t)s->n);
    memcpy(t, s->to, sizeof *t * (size_t)s->n);
  }
  f[s->n] = from;
  t[s->n++] = to;
  s->from = f;
  s->to = t;
}

static const char *renamed(const Subst *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->from[i], name) == 0) return s->to[i];
  return NULL;
}

static Ast *copy_ast(const Ast *a, const Subst *s);

static Vec copy_list(const Vec *v, const Subst *s) {
  Vec out = {0};
  for (int i = 0; i < v->len; i++) vec_push(&out, copy_ast(VEC_AT(*v, i), s));
  return out;
}

/* A deep copy of A with tensors renamed and sizes and constants replaced by integers. */
static Ast *copy_ast(const Ast *a, const Subst *s) {
  if (!a) return NULL;
  Ast *c = ast_new(a->kind, a->loc);
  *c = *a;
  if (a->kind == A_NAME || a->kind == A_ACCESS) {
    const char *r = renamed(s, a->name);
    NetBinding *b = r ? NULL : env_find(s->env, s->nenv, a->name);
    if (r) c->name = r;
    else if (b && a->kind == A_NAME) {
      c->kind = A_INT;
      c->ival = b->value;
      c->name = NULL;
    }
  }
  if ((a->kind == A_PARAM || a->kind == A_TENSOR) && renamed(s, a->name)) c->name = renamed(s, a->name);
  c->a = copy_ast(a->a, s);
  c->b = copy_ast(a->b, s);
  c->c = copy_ast(a->c, s);
  c->list = copy_list(&a->list, s);
  c->list2 = copy_list(&a->list2, s);
  c->list3 = copy_list(&a->list3, s);
  if (a->kind == A_ACCESS && s->packed && strcmp(a->name, s->packed) == 0 && (c->list.len == 4 || c->list.len == 2)) {
    /* K[kh, kw, ci, co] -> Kp[co / B, kh, kw, ci, co % B]; K[k, co] -> Kp[co / B, k, co % B] */
    int rank = c->list.len;
    Ast *co = VEC_AT(c->list, rank - 1), *blk = ast_new(A_INT, a->loc);
    blk->ival = s->block;
    Ast *q = ast_new(A_BINARY, a->loc), *r = ast_new(A_BINARY, a->loc);
    q->op = '/', q->a = co, q->b = blk;
    Subst none = {0};
    r->op = '%', r->a = copy_ast(co, &none), r->b = blk;
    Vec v = {0};
    vec_push(&v, q);
    for (int d = 0; d < rank - 1; d++) vec_push(&v, VEC_AT(c->list, d));
    vec_push(&v, r);
    c->list = v;
  }
  return c;
}

/* `NAME: f32[shape]` (T's dtype) with integer dimensions, as kind K. */
static Ast *decl(AstKind k, Loc loc, const char *name, const NetTensor *t) {
  Ast *p = ast_new(k, loc);
  p->name = name;
  p->name2 = dtype_name(t->dtype);
  p->op = t->dtype;
  for (int d = 0; d < t->ndim; d++) {
    Ast *e = ast_new(A_INT, loc);
    e->ival = t->shape[d];
    vec_push(&p->list, e);
  }
  return p;
}

static int input_index(NetGroup *g, NetTensor *t) {
  for (int i = 0; i < g->ninputs; i++)
    if (g->inputs[i] == t) return i;
  return -1;
}

/* The statements of the I-th node of group G into kernel KN. */
static void emit_node(Network *n, NetGroup *g, int i, Ast *kn) {
  NetNode *nd = n->nodes[g->nodes[i]];
  Subst s = {.env = nd->env, .nenv = nd->nenv};
  for (int a = 0; a < nd->nargs; a++) {
    Ast *p = VEC_AT(nd->kernel->list, a);
    if (a == nd->packed_arg) s.packed = p->name, s.block = nd->pack_block;
    int in = input_index(g, nd->args[a]);
    const char *to = in >= 0 ? xprintf("in%d", in) : NULL;
    for (int j = 0; j < i && !to; j++)
      if (n->nodes[g->nodes[j]]->out == nd->args[a]) to = xprintf("v%d", j);
    if (!to) die("network: argument %s of %s is neither an input nor fused", nd->args[a]->name, nd->op);
    subst_add(&s, p->name, to);
  }
  Ast *o = VEC_AT(nd->kernel->list2, 0);
  subst_add(&s, o->name, i == g->nnodes - 1 ? "out" : xprintf("v%d", i));
  for (int j = 0; j < nd->kernel->list3.len; j++) {
    Ast *st = VEC_AT(nd->kernel->list3, j);
    if (st && st->kind == A_TENSOR) subst_add(&s, st->name, xprintf("%s_%d", st->name, i));
  }
  if (i < g->nnodes - 1) vec_push(&kn->list3, decl(A_TENSOR, nd->loc, xprintf("v%d", i), nd->out));
  for (int j = 0; j < nd->kernel->list3.len; j++) vec_push(&kn->list3, copy_ast(VEC_AT(nd->kernel->list3, j), &s));
}

/* The kernel of group G as an A_FILE holding one A_KERNEL. */
static Ast *group_ast(Network *n, NetGroup *g) {
  NetNode *first = n->nodes[g->nodes[0]];
  Ast *kn = ast_new(A_KERNEL, first->loc);
  kn->name = g->name;
  for (int i = 0; i < g->ninputs; i++) vec_push(&kn->list, decl(A_PARAM, first->loc, xprintf("in%d", i), g->inputs[i]));
  vec_push(&kn->list2, decl(A_PARAM, first->loc, "out", g->out));
  for (int i = 0; i < g->nnodes; i++) emit_node(n, g, i, kn);
  Ast *f = ast_new(A_FILE, first->loc);
  f->sval = first->loc.file;
  for (int i = 0; i < n->externs.len; i++) vec_push(&f->list, VEC_AT(n->externs, i));
  vec_push(&f->list, kn);
  return f;
}

/* ---- grouping -------------------------------------------------------------------- */

static bool same_shape(const NetTensor *a, const NetTensor *b) {
  return a->ndim == b->ndim && !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim);
}

/* May node K join the nodes FIRST..K-1 (a group being formed): an elementwise node of the
 * group's output's shape that reads some tensor the group makes, each at that shape (at
 * the same index)? Its other arguments come from outside. */
static bool joins(const Network *n, int first, int k) {
  const NetNode *nd = n->nodes[k];
  if (!nd->elementwise || !same_shape(nd->out, n->nodes[k - 1]->out)) return false;
  bool reads = false;
  for (int a = 0; a < nd->nargs; a++) {
    int p = nd->args[a]->producer;
    if (p < first || p >= k) continue;
    if (!same_shape(nd->args[a], nd->out)) return false;
    reads = true;
  }
  return reads;
}

/* Can nodes FIRST..LAST be one kernel: is every tensor they make but the last read only
 * by them (and not the network's output)? Then those stay inside the kernel. */
static bool closed(const Network *n, int first, int last) {
  for (int j = first; j < last; j++) {
    const NetTensor *t = n->nodes[j]->out;
    if (net_output_index(n, t) >= 0) return false;
    int uses = 0;
    for (int k = j + 1; k <= last; k++)
      for (int a = 0; a < n->nodes[k]->nargs; a++) uses += n->nodes[k]->args[a] == t;
    if (uses != t->nuses) return false;
  }
  return true;
}

static void group_add_input(NetGroup *g, NetTensor *t) {
  if (input_index(g, t) >= 0) return;
  NetTensor **in = xalloc(sizeof *in * (size_t)(g->ninputs + 1));
  if (g->ninputs) memcpy(in, g->inputs, sizeof *in * (size_t)g->ninputs);
  in[g->ninputs++] = t;
  g->inputs = in;
}

/* Does node K read a tensor that nodes FIRST..LAST make? */
static bool reads_from(const Network *n, int first, int last, int k) {
  for (int a = 0; a < n->nodes[k]->nargs; a++) {
    int p = n->nodes[k]->args[a]->producer;
    if (p >= first && p <= last) return true;
  }
  return false;
}

/* How many of node K's arguments nodes FIRST..LAST make (at least 1). Inlined into K, each
 * is a copy of its producer's expression: a chain of `t = t + t` doubles the group's
 * expression with every node (20 such Adds took 2.5 GB and 3.5 s to compile, and their
 * kernel computed 2^20 additions an element), so a group stops where its first node's
 * value would be copied more than MAX_FUSED_COPIES times. */
enum { MAX_FUSED_COPIES = 64 };
static int64_t reads_of(const Network *n, int first, int last, int k) {
  int64_t r = 0;
  for (int a = 0; a < n->nodes[k]->nargs; a++) {
    int p = n->nodes[k]->args[a]->producer;
    r += p >= first && p <= last;
  }
  return r > 1 ? r : 1;
}

/* Group K's name, its inputs (every argument its nodes read from outside it) and whether
 * it is folded. */
static void group_inputs(Network *n, int k) {
  NetGroup *g = n->groups[k];
  g->ninputs = 0;
  for (int i = 0; i < g->nnodes; i++) {
    NetNode *nd = n->nodes[g->nodes[i]];
    g->name = i ? xprintf("%s_%s", g->name, nd->op) : nd->op;
    for (int a = 0; a < nd->nargs; a++)
      if (nd->args[a]->producer < 0 || n->nodes[nd->args[a]->producer]->group != k) group_add_input(g, nd->args[a]);
  }
  g->folded = g->ninputs > 0 && net_output_index(n, g->out) < 0;
  for (int i = 0; i < g->ninputs; i++) {
    const NetTensor *t = g->inputs[i];
    if (t->kind == NT_INPUT || (t->kind == NT_VALUE && !n->groups[n->nodes[t->producer]->group]->folded)) g->folded = false;
  }
}

/* Nodes into groups, in order: each group a node and the elementwise nodes after it that
 * read what it makes, as many as can be closed (an activation that reads its input twice,
 * x * sigmoid(x) or GELU's, is fused whole), with the side calls moved before one of them
 * (order_for_fusion); then each group's inputs and name. */
static void make_groups(Network *n) {
  n->groups = xalloc(sizeof(NetGroup *) * (size_t)(n->nnodes + 1));
  for (int i = 0; i < n->nnodes;) {
    int last = i;
    int64_t copies = 1; /* of the first node's value in the group's one expression */
    while (last + 1 < n->nnodes) {
      if (joins(n, i, last + 1) && (copies *= reads_of(n, i, last, last + 1)) <= MAX_FUSED_COPIES) {
        last++;
        continue;
      }
      if (copies > MAX_FUSED_COPIES) break;
      int e = last + 1; /* side calls, then the call they feed: that call joins with them */
      while (e < n->nnodes && n->nodes[e]->side) e++;
      if (e == last + 1 || e >= n->nnodes || !reads_from(n, i, last, e) || !joins(n, i, e)) break;
      last = e;
    }
    while (last > i && !closed(n, i, last)) last--;
    NetGroup *g = n->groups[n->ngroups++] = xalloc(sizeof *g);
    g->nodes = xalloc(sizeof(int) * (size_t)(last - i + 1));
    for (int k = i; k <= last; k++) {
      g->nodes[g->nnodes++] = k;
      n->nodes[k]->group = n->ngroups - 1;
    }
    g->out = n->nodes[last]->out;
    i = last + 1;
  }
  for (int k = 0; k < n->ngroups; k++) group_inputs(n, k);
}

/* Group K's nodes, then group K + 1's and K + 2's, as one group (in place of the three)
 * when the target's default computes their kernel one block of rows at a time
 * (NetRewrites.attention): a product, a row-wise kernel of its result alone (softmax) and
 * a product of that alone: attention's scores, their softmax and its product by the
 * values, of which only a block of rows then exists at a time (NETWORKS.md, "Attention").
 * False (the groups unchanged) otherwise. */
static bool merge_attention(Network *n, int k, const NetRewrites *rw) {
  NetGroup **g = n->groups + k;
  for (int i = 0; i < 3; i++)
    if (g[i]->folded) return false;
  for (int i = 0; i < 2; i++) {
    NetTensor *t = g[i]->out;
    if (t->nuses != 1 || net_output_index(n, t) >= 0 || input_index(g[i + 1], t) < 0) return false;
  }
  if (!same_shape(g[0]->out, g[1]->out)) return false;
  NetGroup *m = xalloc(sizeof *m);
  m->nodes = xalloc(sizeof(int) * (size_t)(g[0]->nnodes + g[1]->nnodes + g[2]->nnodes));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < g[i]->nnodes; j++) {
      m->nodes[m->nnodes++] = g[i]->nodes[j];
      n->nodes[g[i]->nodes[j]]->group = k;
    }
  m->out = g[2]->out;
  NetGroup *keep = g[0];
  g[0] = m;
  group_inputs(n, k);
  Program *p = check_program(group_ast(n, m), NULL, 0);
  if (!p || p->nkernels != 1) die("network: the fused kernel of %s does not check", m->name);
  m->kernel = p->kernels[0];
  if (!rw->attention(m->kernel)) {
    g[0] = keep;
    for (int i = 1; i < 3; i++)
      for (int j = 0; j < g[i]->nnodes; j++) n->nodes[g[i]->nodes[j]]->group = k + i;
    return false;
  }
  n->ngroups -= 2;
  for (int i = k + 1; i < n->ngroups; i++) {
    n->groups[i] = n->groups[i + 2];
    for (int j = 0; j < n->groups[i]->nnodes; j++) n->nodes[n->groups[i]->nodes[j]]->group = i;
  }
  return true;
}

/* Check each group's kernel and collect the distinct workloads. false: reported. */
static bool make_tasks(Network *n) {
  n->tasks = xalloc(sizeof(NetTask) * (size_t)(n->ngroups + 1));
  for (int j = 0; j < 2 * n->ngroups; j++) { /* the groups run per call first, then the folded */
    int k = j % n->ngroups;
    NetGroup *g = n->groups[k];
    if (g->folded != (j >= n->ngroups)) continue;
    if (!g->kernel) { /* checked once: a second pass (after merge_attention) keeps each kernel */
      Program *p = check_program(group_ast(n, g), NULL, 0);
      if (!p || p->nkernels != 1) {
        diag_note(n->nodes[g->nodes[0]]->loc, "in the kernel of the call(s) fused here");
        return false;
      }
      g->kernel = p->kernels[0];
    }
    g->key = kernel_workload_key(g->kernel);
    g->task = -1;
    for (int t = 0; t < n->ntasks; t++)
      if (n->tasks[t].key == g->key) {
        g->task = t;
        n->tasks[t].weight++;
      }
    if (g->task < 0) {
      g->task = n->ntasks;
      n->tasks[n->ntasks++] = (NetTask){k, 1, g->key, kernel_flops(g->kernel), g->folded};
    }
    g->kernel->name = xprintf("t%d_%s", g->task, g->name); /* one function per task */
  }
  return true;
}

/* ---- loading --------------------------------------------------------------------- */

/* The network's header (its A_NETWORK) into parameters; its results are checked once the
 * calls are in (check_results). */
static bool load_header(Loader *L, Ast *hdr) {
  for (int i = 0; i < hdr->list.len; i++) {
    Ast *p = VEC_AT(hdr->list, i);
    int64_t shape[NET_MAX_DIMS];
    int nd;
    if (!param_shape(L, p, shape, &nd)) return false;
    if (lookup(L, p->name)) {
      diag_error(p->loc, "parameter '%s' is declared twice", p->name);
      return false;
    }
    new_tensor(L, p->name, i == 0 ? NT_INPUT : NT_WEIGHT, nd, shape)->dtype = (DType)p->op;
  }
  for (int i = 0; i < hdr->list2.len; i++) {
    const Ast *r = VEC_AT(hdr->list2, i);
    for (int j = 0; j < i; j++)
      if (strcmp(r->name, ((const Ast *)VEC_AT(hdr->list2, j))->name) == 0) {
        diag_error(r->loc, "result '%s' is declared twice", r->name);
        return false;
      }
  }
  return true;
}

/* The declared results: a call must have assigned each, with the declared shape; they
 * become N's outputs in the header's order. */
static bool check_results(Loader *L, const Ast *hdr) {
  Network *n = L->net;
  n->outputs = xalloc(sizeof(NetTensor *) * (size_t)(hdr->list2.len + 1));
  for (int i = 0; i < hdr->list2.len; i++) {
    Ast *decl_ast = VEC_AT(hdr->list2, i);
    int64_t shape[NET_MAX_DIMS];
    int nd;
    if (!param_shape(L, decl_ast, shape, &nd)) return false;
    NetTensor *t = lookup(L, decl_ast->name);
    if (t && t->kind != NT_VALUE) {
      diag_error(decl_ast->loc, "the result '%s' is the parameter of that name: a result is made by a call "
                 "(`%s = op(...)`)", decl_ast->name, decl_ast->name);
      return false;
    }
    if (!t) {
      diag_error(decl_ast->loc, "the result '%s' is never assigned: end the body with `%s = op(...)`",
                 decl_ast->name, decl_ast->name);
      return false;
    }
    if (t->dtype != (DType)decl_ast->op) {
      diag_error(decl_ast->loc, "the result %s is declared %s but the calls make it %s", decl_ast->name,
                 dtype_name((DType)decl_ast->op), dtype_name(t->dtype));
      return false;
    }
    if (t->ndim != nd || memcmp(t->shape, shape, sizeof(int64_t) * (size_t)nd)) {
      diag_error(decl_ast->loc, "the result %s is declared %s but the calls make it %s",
                 decl_ast->name, shape_text(shape, nd), shape_text(t->shape, t->ndim));
      return false;
    }
    n->outputs[n->noutputs++] = t;
  }
  return true;
}

const char *net_output_name(const Network *n, int i) {
  return n->output_names && n->output_names[i] ? n->output_names[i] : n->outputs[i]->name;
}

int net_output_index(const Network *n, const NetTensor *t) {
  for (int i = 0; i < n->noutputs; i++)
    if (n->outputs[i] == t) return i;
  return -1;
}

/* Calls whose results nothing reads (no later call, not a result of the network) dropped,
 * back to front, with the calls only they read: what an import leaves behind (a
 * DequantizeLinear whose convolution reads the quantized value itself, as integer kernels),
 * a name rebound before it is read. Their kernels are pure, so nothing else could see them;
 * they were computed for nothing. */
static void prune_dead(Network *n) {
  bool *dead = xalloc(sizeof *dead * (size_t)(n->nnodes + 1));
  for (int i = n->nnodes - 1; i >= 0; i--) {
    NetNode *nd = n->nodes[i];
    if (nd->out->nuses > 0 || net_output_index(n, nd->out) >= 0) continue;
    dead[i] = true;
    for (int a = 0; a < nd->nargs; a++) nd->args[a]->nuses--;
  }
  int k = 0;
  for (int i = 0; i < n->nnodes; i++)
    if (!dead[i]) {
      n->nodes[k] = n->nodes[i];
      n->nodes[k]->out->producer = k;
      k++;
    }
  n->nnodes = k;
  k = 0;
  for (int i = 0; i < n->ntensors; i++) {
    NetTensor *t = n->tensors[i];
    if (t->kind == NT_VALUE && (t->producer >= n->nnodes || n->nodes[t->producer]->out != t)) continue;
    t->index = k;
    n->tensors[k++] = t;
  }
  n->ntensors = k;
}

int64_t net_numel(const NetTensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

/* Bytes of tensor T. */
static int64_t tensor_bytes_of(const NetTensor *t) {
  return dtype_bytes(t->dtype) * net_numel(t);
}

/* Can node C be placed now: is each tensor it reads made by a placed node, or by one of
 * its side calls (order_for_fusion) that can? */
static bool ready(const Network *n, int c, const bool *placed) {
  const NetNode *nd = n->nodes[c];
  for (int a = 0; a < nd->nargs; a++) {
    const NetTensor *t = nd->args[a];
    if (t->kind != NT_VALUE || placed[t->producer]) continue;
    if (!n->nodes[t->producer]->side || !ready(n, t->producer, placed)) return false;
  }
  return true;
}

/* Node I into ORDER at *K, its side calls (BEFORE[I]) first. */
static void place_node(const Network *n, int i, const Vec *before, NetNode **order, int *k, bool *placed) {
  for (int j = 0; j < before[i].len; j++) place_node(n, (int)(intptr_t)VEC_AT(before[i], j), before, order, k, placed);
  order[(*k)++] = n->nodes[i];
  placed[i] = true;
}

/* The order in which make_groups fuses: the calls as written, except that (1) a side call
 * (below) moves to just before the call that reads it, and (2) after each call comes at
 * once the first elementwise call of its shape that reads it and can run (what it reads
 * is made), and so on along the chain. A quantized model interleaves its branches (a
 * ResNet stage's first block: the downsampling convolution, then the quantization of the
 * main branch's activation, then its own), which cut each chain into kernels of one call.
 *
 * Side calls: an elementwise call P that varies per run, whose result one later
 * elementwise call R of the same shape reads and nothing else, moves to just before R,
 * into whose group it then fuses instead of writing its result to memory, when that pays:
 * when P widens what it reads (a dequantization of bytes to floats: the group that made
 * the bytes stores them, not four times as many), or when P could not have joined the
 * group before it anyway (everything it reads is read elsewhere too: a kernel of its own).
 * A QDQ ResNet's residual: the block's output, quantized, is read as bytes by the next
 * block's convolutions, and dequantized by its Add three convolutions later, which was a
 * kernel of its own per block. Both moves keep the order topological: a side call's
 * inputs come before it already and only R reads it; a chained call comes after what it
 * reads. */
static void order_for_fusion(Network *n) {
  int nn = n->nnodes;
  bool *varies = xalloc(sizeof(bool) * (size_t)(nn + 1));
  Vec *readers = xalloc(sizeof(Vec) * (size_t)(n->ntensors + 1));
  for (int i = 0; i < nn; i++) {
    NetNode *nd = n->nodes[i];
    for (int a = 0; a < nd->nargs; a++) {
      const NetTensor *t = nd->args[a];
      varies[i] |= t->kind == NT_INPUT || (t->kind == NT_VALUE && varies[t->producer]);
      Vec *rv = &readers[t->index];
      if (!rv->len || (int)(intptr_t)VEC_AT(*rv, rv->len - 1) != i) vec_push(rv, (void *)(intptr_t)i);
    }
  }
  Vec *before = xalloc(sizeof(Vec) * (size_t)(nn + 1));
  for (int i = nn - 1; i >= 0; i--) { /* readers first: P before a side reader moves with it */
    NetNode *p = n->nodes[i];
    if (!p->elementwise || !varies[i] || p->out->nuses != 1 || net_output_index(n, p->out) >= 0) continue;
    int r = (int)(intptr_t)VEC_AT(readers[p->out->index], 0); /* its one reader */
    if (r <= i || !n->nodes[r]->elementwise || !same_shape(p->out, n->nodes[r]->out) || (r == i + 1 && !n->nodes[r]->side))
      continue;
    int64_t in_bytes = 0;
    bool alone = true;
    for (int a = 0; a < p->nargs; a++) {
      const NetTensor *t = p->args[a];
      if (t->kind == NT_WEIGHT || (t->kind == NT_VALUE && !varies[t->producer])) continue;
      in_bytes += tensor_bytes_of(t);
      alone &= t->nuses > 1;
    }
    if (!alone && tensor_bytes_of(p->out) <= in_bytes) continue;
    p->side = true;
    vec_push(&before[r], (void *)(intptr_t)i);
  }
  NetNode **order = xalloc(sizeof(NetNode *) * (size_t)(nn + 1));
  bool *placed = xalloc(sizeof(bool) * (size_t)(nn + 1));
  int k = 0;
  for (int i = 0; i < nn; i++) {
    if (placed[i] || n->nodes[i]->side) continue;
    place_node(n, i, before, order, &k, placed);
    for (int last = i, next = 0; next >= 0; last = next) {
      const Vec *rv = &readers[n->nodes[last]->out->index];
      next = -1;
      for (int j = 0; j < rv->len && next < 0; j++) {
        int c = (int)(intptr_t)VEC_AT(*rv, j);
        const NetNode *cn = n->nodes[c];
        if (!placed[c] && !cn->side && cn->elementwise && same_shape(cn->out, n->nodes[last]->out) && ready(n, c, placed))
          next = c;
      }
      if (next >= 0) place_node(n, next, before, order, &k, placed);
    }
  }
  for (int i = 0; i < nn; i++) {
    n->nodes[i] = order[i];
    n->nodes[i]->out->producer = i;
  }
}

/* FILE parsed; a model (.onnx) imported into *WEIGHTS first (DEFS give its symbolic
 * sizes). NULL: reported. */
static Ast *parse_network_file(const char *file, Define *defs, int ndefs, WeightSet **weights, const char ***names) {
  *weights = NULL, *names = NULL;
  if (!onnx_is_model(file)) return parse_file(file);
  OnnxImport im;
  const char *tex = xprintf("%s.tex", file); /* the text's name in diagnostics */
  if (!onnx_import(file, tex, defs, ndefs, &im)) return NULL;
  *weights = xalloc(sizeof **weights);
  **weights = im.weights;
  (*weights)->file = file;
  *names = im.output_names;
  return parse_string(tex, im.text);
}

Network *net_load(const char *file, const char *name, Define *defs, int ndefs, const NetRewrites *rw) {
  WeightSet *weights;
  const char **output_names;
  for (int i = 0; i < ndefs; i++) defs[i].used = false;
  onnx_int8_convs(rw && rw->int8);
  Ast *ast = parse_network_file(file, defs, ndefs, &weights, &output_names);
  Ast *hdr = ast ? pick_network(ast, name) : NULL;
  if (!hdr) return NULL;
  Loader L = {.rw = rw, .items = &ast->list};
  L.net = xalloc(sizeof *L.net);
  L.net->name = hdr->name;
  L.net->file = file;
  L.net->loc = hdr->loc;
  L.net->weights = weights;
  L.net->output_names = output_names;
  NetBinding *ovr = NULL;
  int novr = 0;
  for (int i = 0; i < ndefs; i++) env_push(&ovr, &novr, defs[i].name, defs[i].value);
  L.defs = ovr, L.ndefs = novr;
  if (!file_consts(&ast->list, ovr, novr, &L.consts, &L.nconsts)) return NULL;
  for (int i = 0; i < ndefs; i++) defs[i].used |= env_find(L.consts, L.nconsts, defs[i].name) != NULL;
  collect_ops(&ast->list, &L.ops);
  collect_externs(&ast->list, &L.net->externs);
  if (!load_header(&L, hdr)) return NULL;
  for (int i = 0; i < hdr->list3.len; i++)
    if (!add_call(&L, VEC_AT(hdr->list3, i))) return NULL;
  if (!check_results(&L, hdr)) return NULL;
  prune_dead(L.net);
  order_for_fusion(L.net);
  make_groups(L.net);
  if (!make_tasks(L.net)) return NULL;
  bool merged = false; /* among groups that check: a fused kernel that does not is texc's error */
  for (int k = 0; rw && rw->attention && k + 2 < L.net->ngroups; k++) merged |= merge_attention(L.net, k, rw);
  if (merged) { /* the tasks again, of the kernels already checked */
    L.net->ntasks = 0;
    if (!make_tasks(L.net)) return NULL;
  }
  return L.net;
}
