/* test_network.c — networks (network.c, network_sched.c, network_run.c's weights): task
 * extraction (equal workloads are one task, weighted), fusion decisions (elementwise tails,
 * values with two uses, residual adds), errors, the untuned CPU default schedule (built,
 * and computing what the bare default computes, in the interpreter) and the weights. */
#include "front/network.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* SRC in a new temporary .tex file; its path (arena). */
static char *temp_file(const char *src) {
  char path[] = "/tmp/test_networkXXXXXX.tex";
  int fd = mkstemps(path, 4);
  if (fd < 0) return NULL;
  ssize_t n = write(fd, src, strlen(src));
  close(fd);
  return n == (ssize_t)strlen(src) ? xstrdup(path) : NULL;
}

/* Load network NAME (NULL: the only one) of SRC as a file (imports from stdlib/). NULL on
 * errors. */
static Network *load_named(const char *src, const char *name) {
  char *path = temp_file(src);
  if (!path) return NULL;
  diag_reset();
  bool quiet = diag_silent;
  diag_silent = true;
  NetRewrites rw = net_rewrites(TARGET_LLVM);
  Network *n = net_load(path, name, NULL, 0, &rw);
  diag_silent = quiet;
  unlink(path);
  return n;
}

static Network *load(const char *src) { return load_named(src, NULL); }

/* Is SRC a network file, by net_is_network_file? */
static bool is_network_file(const char *src) {
  char *path = temp_file(src);
  bool yes = path && net_is_network_file(path);
  if (path) unlink(path);
  return yes;
}

#define HEADER "import \"nn/conv2d.tex\"\nimport \"nn/elementwise.tex\"\nimport \"nn/pool.tex\"\n"

/* Two equal conv blocks and a different third: 3 groups, 2 tasks, weights 2 and 1. */
static void test_tasks(void) {
  Network *n = load(HEADER
      "network t(x: f32[1, 8, 8, 4], w1: f32[3, 3, 4, 4], b1: f32[4], w2: f32[3, 3, 4, 4],\n"
      "          b2: f32[4], w3: f32[1, 1, 4, 8]) -> y: f32[1, 8, 8, 8] {\n"
      "  a = conv2d_nhwc(x, w1, PH = 1, PW = 1)\n  a = bias_add(a, b1)\n  a = relu(a)\n"
      "  a = conv2d_nhwc(a, w2, PH = 1, PW = 1)\n  a = bias_add(a, b2)\n  a = relu(a)\n"
      "  y = conv2d_nhwc(a, w3)\n}\n");
  check("tasks: network loads", n != NULL);
  if (!n) return;
  check("tasks: 7 calls, 3 groups, 2 tasks", n->nnodes == 7 && n->ngroups == 3 && n->ntasks == 2);
  check("tasks: equal workloads share a task of weight 2",
        n->groups[0]->task == 0 && n->groups[1]->task == 0 && n->tasks[0].weight == 2);
  check("tasks: the 1x1 conv is its own task", n->groups[2]->task == 1 && n->tasks[1].weight == 1);
  check("tasks: keys differ", n->tasks[0].key != n->tasks[1].key);
  check("tasks: flops of a 3x3 conv 4->4 on 8x8", fabs(n->tasks[0].flops - 2.0 * 64 * 4 * 36) < 1e-6 * n->tasks[0].flops + 1 ||
                                                  n->tasks[0].flops >= 2.0 * 64 * 4 * 36);
  check("tasks: the kernel is named after its task and ops",
        strcmp(n->groups[0]->kernel->name, "t0_conv2d_nhwc_bias_add_relu") == 0);
}

/* Which parameters of a group the tuner times cold, as a forward pass leaves them:
 * weights, packed (folded) filters, activations written before the group run just before
 * (the network's input, a residual's shortcut) and the output; warm: what the previous
 * group just wrote. Nothing is cold when a cache holds all the weights. */
static void test_cold_params(void) {
  Network *n = load(HEADER
      "network t(x: f32[1, 8, 8, 4], w1: f32[3, 3, 4, 128], b1: f32[128], w2: f32[1, 1, 128, 4],\n"
      "          w3: f32[1, 1, 4, 4]) -> y: f32[1, 8, 8, 4] {\n"
      "  a = conv2d_nhwc(x, w1, PH = 1, PW = 1)\n  a = bias_add(a, b1)\n  a = relu(a)\n"
      "  b = conv2d_nhwc(a, w2)\n  c = conv2d_nhwc(b, w3)\n  d = conv2d_nhwc(c, w3)\n  y = add(d, b)\n}\n");
  check("cold: network loads", n != NULL);
  if (!n) return;
  int checked = 0, right = 0, packed = 0, shortcut = 0, prev = -1;
  for (int gi = 0; gi < n->ngroups; gi++) {
    NetGroup *g = n->groups[gi];
    if (g->folded) continue;
    CpuInfo small = {.l3 = 0}, large = {.l3 = (int64_t)1 << 40};
    uint64_t cold = net_cold_params(n, g, &small);
    for (int p = 0; p < g->ninputs; p++) {
      const NetTensor *t = g->inputs[p];
      bool just_written = t->producer >= 0 && n->nodes[t->producer]->group == prev;
      packed += t->kind == NT_VALUE && strstr(t->name, ".packed") != NULL;
      shortcut += t->kind == NT_VALUE && !just_written && !strstr(t->name, ".packed");
      checked++;
      right += ((cold >> p) & 1) == !just_written;
    }
    checked++;
    right += (cold >> g->ninputs & 1) == 1; /* the output */
    check("cold: a cache holding every weight keeps all warm", net_cold_params(n, g, &large) == 0);
    uint64_t dev = net_cold_params(n, g, NULL);
    for (int p = 0; p < g->ninputs; p++) {
      const NetTensor *t = g->inputs[p];
      bool w = t->kind == NT_WEIGHT || (t->kind == NT_VALUE && strstr(t->name, ".packed"));
      checked++;
      right += (dev >> p & 1) == w; /* on a device: the weights only */
    }
    prev = gi;
  }
  printf("# cold: %d parameters, %d right, %d packed filters, %d shortcuts\n", checked, right, packed, shortcut);
  check("cold: weights, packed filters, shortcuts and outputs cold; the producer's output warm",
        checked > 0 && right == checked);
  check("cold: the residual add reads its shortcut cold", shortcut >= 1);
  /* 128 channels: more than one register tile's channels on every CPU (AVX2 takes 16 or
   * 32, AVX-512 up to 64), so the filter is packed whatever the host */
  check("cold: the 3x3 filter of 128 channels is packed (a folded group's output)",
        !net_rewrites(TARGET_LLVM).pack_block || packed >= 1);
}

/* conv + batch_norm + relu fuse; the residual add written after the shortcut fuses into
 * the main path's convolution; an activation that reads its input twice (relu + add after
 * it, as x * sigmoid(x)) fuses whole; a value that a non-elementwise call reads too ends
 * its group. */
static void test_fusion(void) {
  Network *n = load(HEADER
      "network f(x: f32[1, 8, 8, 4], w: f32[3, 3, 4, 4], s: f32[4], t: f32[4], ws: f32[1, 1, 4, 4])\n"
      "    -> y: f32[1, 4, 4, 4] {\n"
      "  sc = conv2d_nhwc(x, ws)\n"
      "  a = conv2d_nhwc(x, w, PH = 1, PW = 1)\n  a = batch_norm(a, s, t)\n  a = add(a, sc)\n  a = relu(a)\n"
      "  r = relu(a)\n  b = add(r, a)\n"
      "  y = max_pool2d_nhwc(b)\n}\n");
  check("fusion: network loads", n != NULL);
  if (!n) return;
  check("fusion: 3 groups", n->ngroups == 3);
  if (n->ngroups != 3) return;
  check("fusion: the shortcut alone", n->groups[0]->nnodes == 1);
  check("fusion: conv + batch_norm + add + relu, and relu + add reading it twice, in one group",
        n->groups[1]->nnodes == 6 && strcmp(n->groups[1]->name, "conv2d_nhwc_batch_norm_add_relu_relu_add") == 0);
  check("fusion: the shortcut is an input of the fused group", n->groups[1]->ninputs == 5);
  check("fusion: pooling is not elementwise", n->groups[2]->nnodes == 1 && !n->nodes[n->groups[2]->nodes[0]]->elementwise);
  n = load(HEADER
      "network g(x: f32[1, 8, 8, 4], w: f32[3, 3, 4, 4]) -> y: f32[1, 4, 4, 4] {\n"
      "  a = conv2d_nhwc(x, w, PH = 1, PW = 1)\n  r = relu(a)\n  m = max_pool2d_nhwc(r)\n"
      "  p = max_pool2d_nhwc(a)\n  y = add(m, p)\n}\n");
  check("fusion: second network loads", n != NULL);
  if (!n) return;
  check("fusion: a value read by a pool too ends its group (conv | relu | pool | pool + add)",
        n->ngroups == 4 && n->groups[0]->nnodes == 1 && n->groups[1]->nnodes == 1 &&
            n->groups[3]->nnodes == 2);
}

static void test_errors(void) {
  Network *n = load(HEADER
      "network e(x: f32[1, 8, 8, 4], w: f32[3, 3, 5, 4]) -> y: f32[1, 8, 8, 4] {\n"
      "  y = conv2d_nhwc(x, w, PH = 1, PW = 1)\n}\n");
  if (getenv("TEST_VERBOSE")) printf("%s\n", diag_last());
  check("errors: a weight of the wrong shape", n == NULL && strstr(diag_last(), "shape mismatch") &&
                                              strstr(diag_last(), ":5:"));
  n = load(HEADER "network e(x: f32[1, 8, 8, 4]) -> y: f32[1, 8, 8, 4] {\n  y = nosuch(x)\n}\n");
  check("errors: an unknown operator", n == NULL && strstr(diag_last(), "unknown operator 'nosuch'"));
}

/* `network` is found by the parser: a contextual keyword, never a word of the text. */
static void test_grammar(void) {
  check("grammar: a network file", is_network_file("network n(x: f32[4]) -> y: f32[4] { y = relu(x) }\n"));
  check("grammar: `network` as a parameter, a kernel and a tensor is no network",
        !is_network_file("kernel scale(network: f32[8]) -> y: f32[8] { y[i] = network[i] }\n"
                         "kernel network(x: f32[8]) -> y: f32[8] {\n  tensor network: f32[8]\n"
                         "  network[i] = x[i]\n  y[i] = network[i]\n}\n"));
  check("grammar: `network` in a comment or a string is no network",
        !is_network_file("# network n(x: f32[4]) -> y: f32[4] { }\nimport \"network (\"\n"));
  check("grammar: a file that does not parse is no network file",
        !is_network_file("network n(x: f32[4]) -> y: f32[4] { y = relu(x) + }\n"));
  const char *two = HEADER
      "network a(x: f32[1, 4, 4, 4]) -> y: f32[1, 4, 4, 4] {  # {\n  y = relu(x)  # }\n}\n"
      "network b(x: f32[1, 8, 8, 4], w: f32[3, 3, 4, 4]) -> y: f32[1, 8, 8, 4] {\n"
      "  y = conv2d_nhwc(x, w, PH = 1, PW = 1)\n  y = relu(y)\n}\n";
  Network *a = load_named(two, "a"), *b = load_named(two, "b");
  check("grammar: two networks in a file, picked by name",
        a && b && !strcmp(a->name, "a") && !strcmp(b->name, "b") && a->nnodes == 1 && b->nnodes == 2);
  check("grammar: several networks and no name is an error",
        !load(two) && strstr(diag_last(), "has 2 networks (a, b): pick one with --kernel NAME"));
  check("grammar: an unknown name is an error", !load_named(two, "c") && strstr(diag_last(), "its networks: a, b"));
  check("grammar: no network is an error", !load("const A = 1\n") && strstr(diag_last(), "no `network"));
  Network *r = load(HEADER "network relu(x: f32[1, 4, 4, 4]) -> y: f32[1, 4, 4, 4] {\n  y = relu(x)\n}\n");
  check("grammar: a network may share its name with an operator", r && r->nnodes == 1);
}

/* Constants, attributes and shapes fold as the checker's constants: floor division and
 * modulo; overflow and division by zero are errors. */
static void test_consts(void) {
  Network *n = load(HEADER "const S = 7 / -2 + 6, T = -7 % 2 + 1\n"
      "network c(x: f32[1, 8, 8, 4]) -> y: f32[1, 4, 4, 4] {\n  y = max_pool2d_nhwc(x, SH = S, SW = T)\n}\n");
  check("consts: floor division and modulo (7 / -2 = -4, -7 % 2 = 1)", n && n->outputs[0]->shape[1] == 4 && n->outputs[0]->shape[2] == 4);
  n = load(HEADER "network c(x: f32[1, 8, 8, 4]) -> y: f32[1, 4, 4, 4] {\n  y = max_pool2d_nhwc(x, SH = 1 % 0)\n}\n");
  check("consts: an attribute that divides by zero", !n && strstr(diag_last(), "'1 % 0': division by zero"));
  n = load(HEADER "const A = 3037000500 * 3037000500\n"
      "network c(x: f32[1, 8, 8, 4]) -> y: f32[1, 4, 4, 4] {\n  y = max_pool2d_nhwc(x)\n}\n");
  check("consts: a constant that overflows", !n && strstr(diag_last(), "overflows 64 bits"));
  n = load(HEADER "network c(x: f32[1, 8, 8, 4]) -> y: f32[1, 4, 4, 4] {\n  y = max_pool2d_nhwc(x, SW = 0)\n}\n");
  check("consts: a stride of 0 divides by zero in the operator's shape",
        !n && strstr(diag_last(), "pool.tex:") && strstr(diag_last(), "/ SW': division by zero"));
}

/* Run F (lowered) in the interpreter on seeded inputs; the output, malloc'd. */
static float *interpret(LoweredFunc *f) {
  void **args = xalloc(sizeof(void *) * (size_t)f->nparams);
  float *out = NULL;
  for (int i = 0; i < f->nparams; i++) {
    int64_t n = ir_buffer_numel(f->params[i], f, NULL);
    args[i] = calloc((size_t)n, sizeof(float));
    if (i < f->ninputs) fill_random(args[i], DT_F32, n, 7u + (uint64_t)i);
    else out = args[i];
  }
  if (interp_run(f, args, NULL)) return NULL;
  return out;
}

/* The default steps of group G build, and compute what the bare default computes. */
static bool default_matches(NetGroup *g, const char **why) {
  const char *text = net_default_steps(g->kernel);
  Vec steps = {0};
  *why = "no steps";
  if (!text || !parse_steps("<default>", text, &steps)) return false;
  Schedule *s = sched_build(g->kernel, TARGET_LLVM, &steps);
  *why = "does not build";
  LoweredFunc *f = s ? sched_lower(s, NULL) : NULL, *ref = sched_lower(sched_new(g->kernel, TARGET_LLVM), NULL);
  if (!f || !ref) return false;
  *why = "wrong values";
  float *a = interpret(f), *b = interpret(ref);
  if (!a || !b) return false;
  int64_t n = ir_buffer_numel(f->params[f->nparams - 1], f, NULL);
  for (int64_t i = 0; i < n; i++)
    if (fabsf(a[i] - b[i]) > 1e-4f * (1 + fabsf(b[i]))) return false;
  *why = net_threads_pay(g->kernel) ? "no parallel loop or no vector" : "a parallel loop for too little work, or no vector";
  return (strstr(text, "parallel(") != NULL) == net_threads_pay(g->kernel) && strstr(text, "vectorize(");
}

static void test_default_schedule(void) {
  Network *n = load(HEADER "import \"nn/dense.tex\"\nimport \"nn/softmax.tex\"\n"
      "network d(x: f32[1, 14, 14, 8], w: f32[3, 3, 8, 16], s: f32[16], t: f32[16], dw: f32[3, 3, 16],\n"
      "          wl: f32[1, 1, 16, 64], fc: f32[64, 16], fb: f32[16]) -> y: f32[1, 16] {\n"
      "  a = conv2d_nhwc(x, w, SH = 2, SW = 2, PH = 1, PW = 1)\n  a = batch_norm(a, s, t)\n  a = relu(a)\n"
      "  a = depthwise_conv2d_nhwc(a, dw, PH = 1, PW = 1)\n  a = relu(a)\n"
      "  a = conv2d_nhwc(a, wl)\n"
      "  g = global_avg_pool2d_nhwc(a)\n  d = dense(g, fc)\n  d = bias_add_2d(d, fb)\n  y = softmax(d)\n}\n");
  check("default: network loads", n != NULL);
  if (!n) return;
  NetGroup *run[16] = {0}; /* the groups a run calls: not the packing of the filters (folded) */
  int nrun = 0, nfolded = 0;
  for (int k = 0; k < n->ngroups && nrun < 16; k++)
    if (n->groups[k]->folded) nfolded++;
    else run[nrun++] = n->groups[k];
  check("default: the 64-channel filter is packed, once at load", nfolded == (net_rewrites(TARGET_LLVM).pack_block ? 1 : 0));
  if (getenv("TEST_VERBOSE"))
    for (int k = 0; k < n->ngroups; k++) printf("%s", net_default_steps(n->groups[k]->kernel));
  const char *names[] = {"conv + bn + relu", "depthwise + relu", "1x1 conv, weights dominate",
                         "global pool", "dense + bias"};
  for (int k = 0; k < 5 && k < nrun; k++) {
    const char *why = "";
    bool ok = default_matches(run[k], &why);
    check(xprintf("default: %s: parallel where it pays, vectorized, same values%s%s", names[k], ok ? "" : ": ", ok ? "" : why), ok);
  }
  /* 14 x 14 x 16 outputs of 72 multiply-adds each: threads; a [1, 64] x [64, 16] dense: one */
  check("default: threads for conv + bn + relu (225 K multiply-adds), one thread for the 1 K of the dense",
        nrun >= 5 && net_threads_pay(run[0]->kernel) && strstr(net_default_steps(run[0]->kernel), "parallel(") &&
            !net_threads_pay(run[4]->kernel) && !strstr(net_default_steps(run[4]->kernel), "parallel("));
  const char *text = nrun > 2 ? net_default_steps(run[2]->kernel) : NULL;
  check("default: channel tiles outermost when the weights are larger",
        text && strstr(text, "reorder(out.n, out_c0, out.y"));
  text = net_default_steps(run[0]->kernel);
  /* (7 rows of 16 channels: a register tile over rows of h too where the rows alone leave
   * the registers short, as on AVX2 and AVX-512: out_h0) */
  check("default: positions outermost otherwise",
        text && (strstr(text, "reorder(out.n, out.h, out_w0, out_c0") || strstr(text, "reorder(out.n, out_h0, out_w0, out_c0")));
  const char *why = "";
  bool ok = nrun == 6 && default_matches(run[5], &why);
  check(xprintf("default: softmax (two reductions, row-wise): parallel where it pays, vectorized, same values%s%s", ok ? "" : ": ",
                ok ? "" : why), ok);
  text = nrun == 6 ? net_default_steps(run[5]->kernel) : NULL;
  check("default: softmax's stages computed at its row loop", text && strstr(text, "compute_at("));
}

/* Products as a transformer imports them: [S, 1, K] x [K, N] (the row tile goes on S, the
 * axis before the channels being 1), a 2-D dense (a row tile too), and a batch of products
 * whose rows (S = 13) and channels (19) nothing divides (tails on both), and 24 channels
 * (half vectors on AVX-512). */
static void test_default_products(void) {
  const char *src = "kernel seq(A: f32[S, B, K], W: f32[K, N]) -> Y: f32[S, B, N] {\n"
                    "  Y[s, b, j] += A[s, b, k] * W[k, j]\n}\n"
                    "kernel mm(A: f32[M, K], W: f32[K, N]) -> Y: f32[M, N] {\n  Y[i, j] += A[i, k] * W[k, j]\n}\n"
                    "kernel bmm(A: f32[H, S, K], B: f32[H, K, T]) -> Y: f32[H, S, T] {\n"
                    "  Y[h, i, j] += A[h, i, k] * B[h, k, j]\n}\n"
                    "network p1(x: f32[13, 1, 24], w: f32[24, 64]) -> o: f32[13, 1, 64] {\n  o = seq(x, w)\n}\n"
                    "network p2(x: f32[10, 24], w: f32[24, 32]) -> o: f32[10, 32] {\n  o = mm(x, w)\n}\n"
                    "network p3(x: f32[2, 13, 24], y: f32[2, 24, 19]) -> o: f32[2, 13, 19] {\n  o = bmm(x, y)\n}\n"
                    "network p4(x: f32[12, 40], w: f32[40, 24]) -> o: f32[12, 24] {\n  o = mm(x, w)\n}\n";
  const char *nets[] = {"p1", "p2", "p3", "p4"}, *what[] = {"[13, 1, 24] x [24, 64]", "[10, 24] x [24, 32]",
                                                            "[2, 13, 24] x [2, 24, 19]", "[12, 40] x [40, 24]"};
  for (int i = 0; i < 4; i++) {
    Network *n = load_named(src, nets[i]);
    NetGroup *g = NULL; /* the product; a weight packed into panels is a folded group beside it */
    int run = 0, folded = 0;
    for (int k = 0; n && k < n->ngroups; k++)
      if (n->groups[k]->folded) folded++;
      else g = n->groups[k], run++;
    if (run != 1) g = NULL;
    if (i == 0 && net_rewrites(TARGET_LLVM).pack_block)
      check("products: [K, N] weights of 64 channels packed into panels, once at load", folded == 1);
    const char *text = g ? net_default_steps(g->kernel) : NULL, *why = "no network";
    bool ok = g && default_matches(g, &why);
    check(xprintf("products: %s: parallel where it pays, vectorized, same values%s%s", what[i], ok ? "" : ": ", ok ? "" : why), ok);
    if (getenv("TEST_VERBOSE") && text) printf("%s", text);
    if (i == 0) /* the row tile on S (the axis before the channels is 1) */
      check("products: [S, 1, K] x [K, N] tiles rows of S", text && strstr(text, "_w0, ") && strstr(text, ".s, "));
    if (i == 1) check("products: a 2-D product has a row tile", text && strstr(text, "_w0, "));
  }
}

/* Weights: deterministic, scaled by fan-in; scales near 1; the input in [-1, 1). */
static void test_weights(void) {
  Network *n = load(HEADER
      "network w(x: f32[1, 4, 4, 3], k: f32[3, 3, 3, 8], bn_scale: f32[8], bn_shift: f32[8])\n"
      "    -> y: f32[1, 4, 4, 8] {\n  y = conv2d_nhwc(x, k, PH = 1, PW = 1)\n"
      "  y = batch_norm(y, bn_scale, bn_shift)\n}\n");
  if (!n) return check("weights: network loads", false);
  float k1[216], k2[216], sc[8], sh[8], in[48];
  net_fill(n->tensors[1], k1);
  net_fill(n->tensors[1], k2);
  net_fill(n->tensors[2], sc);
  net_fill(n->tensors[3], sh);
  net_fill(n->tensors[0], in);
  check("weights: deterministic", memcmp(k1, k2, sizeof k1) == 0);
  double bound = sqrt(3.0 / 27), mx = 0;
  for (int i = 0; i < 216; i++) mx = fmax(mx, fabs(k1[i]));
  check("weights: |w| < sqrt(3 / fan_in)", mx <= bound && mx > 0.5 * bound);
  bool ok = true;
  for (int i = 0; i < 8; i++) ok = ok && sc[i] >= 0.8f && sc[i] <= 1.2f && fabsf(sh[i]) <= 0.1f;
  check("weights: scales in [0.8, 1.2], shifts in [-0.1, 0.1]", ok);
  ok = true;
  for (int i = 0; i < 48; i++) ok = ok && in[i] >= -1 && in[i] < 1;
  check("weights: the input in [-1, 1)", ok);
}

int main(void) {
  test_grammar();
  test_consts();
  test_tasks();
  test_cold_params();
  test_fusion();
  test_errors();
  test_default_schedule();
  test_default_products();
  test_weights();
  return failures ? 1 : 0;
}
