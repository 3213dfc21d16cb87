/* network_sched.c — the untuned CPU schedule of a network task, written as steps.
 *
 * A task without a record would otherwise run the bare default schedule (serial, loops in
 * declaration order). This writes, for a group kernel of the usual form
 *
 *   [P = pad(X)]  A[..] (+|max)= ... over reductions   [T1 = f(A) ... O = g(..)]
 *
 * (at most one reduction stage A, the "anchor"; every other stage elementwise), the
 * schedule a person writes first for a CPU:
 *   - every elementwise stage but the output inlined (batch norm and relu into the output;
 *     padding into the reduction unless its patch for one tile fits half the L1 cache: then
 *     it is computed at the tile, and the reduction's loads are unguarded);
 *   - the output tiled: innermost axis split by V channels, the one before it by TW rows
 *     (and, where those rows leave the registers short of a tile, as 7 rows on AVX2, the
 *     axis before them by TH rows: tile_2d, the padding then computed whole first), the
 *     register tile (micro-kernel) derived from the CPU's lanes and vector registers
 *     (target_cpu); all outer loops fused into one parallel loop;
 *   - the anchor computed at that parallel loop, one tile at a time: its reductions
 *     outside, the TW x V tile inside (rows unrolled, channels vectorized); with a padded
 *     patch per tile and positions outermost, the channel tiles stay a serial loop inside
 *     the parallel loop of positions (the patch computed once for all of them), and the
 *     anchor is computed at that channel loop.
 * Row-wise kernels of several reductions (softmax, layer norm: rowwise_steps), pooling
 * over the middle axes (pooled_steps) and attention (attention_steps) have their own; any
 * other kernel gets its stages at the root, each in parallel (root_steps).
 */
#include "front/network.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A constant extent of dimension D of OP's output; 0 when it is not constant. */
static int64_t extent(const Op *op, int d) {
  int64_t v;
  return ir_is_const(op->out->shape[d], &v) ? v : 0;
}

/* The axis of the register-tile rows of an output of D axes with extents EXT (0: not
 * constant): the one before the channels (d - 2), or, when that one has extent 1, the
 * nearest longer axis before it (a transformer's [S, 1, C] products would otherwise get
 * one-row tiles). */
static int row_dim(int d, const int64_t *ext) {
  if (d < 2 || ext[d - 2] > 1) return d - 2;
  for (int i = d - 3; i >= 0; i--)
    if (ext[i] > 1) return i;
  return d - 2;
}

static int row_axis(const Op *o) {
  int64_t ext[NET_MAX_DIMS + 2] = {0};
  for (int i = 0; i < o->ndim && i < NET_MAX_DIMS + 2; i++) ext[i] = extent(o, i);
  return row_dim(o->ndim, ext);
}

/* The largest of CANDIDATES (descending, 0-terminated) that divides N; 1 if none. */
static int64_t pick_divisor(int64_t n, const int *candidates) {
  for (int i = 0; candidates[i]; i++)
    if (n >= candidates[i] && n % candidates[i] == 0) return candidates[i];
  return 1;
}

/* The anchor: the one reduction stage (NULL when there is none). *OK is false when the
 * kernel does not have the form above. */
static Op *find_anchor(Kernel *k, Op *out, bool *ok) {
  Op *anchor = NULL;
  *ok = true;
  for (int i = 0; i < k->nops; i++) {
    Op *op = k->ops[i];
    if (op->nred == 0) continue;
    if (anchor) *ok = false;
    anchor = op;
  }
  if (anchor && anchor != out && anchor->ndim != out->ndim) *ok = false;
  return anchor;
}

static int64_t numel(const Buffer *b) {
  int64_t n = 1, v;
  for (int d = 0; d < b->ndim; d++) n *= ir_is_const(b->shape[d], &v) ? v : 1;
  return n;
}

/* Are the weights (the second input, by the network's argument order) larger than the
 * activations (the first)? Then each weight should be read from memory once per call,
 * the activations once per channel tile. */
static bool weights_dominate(const Kernel *k) {
  return k->ninputs >= 2 && numel(k->inputs[1]) > numel(k->inputs[0]);
}

/* Append one step line to *S. */
static void step(char **s, const char *line) {
  *s = xprintf("%s%s\n", *s, line);
}

/* A register tile over two row axes (TH rows of an axis of extent H, by TW of the W
 * rows, by V channels) for an output whose tiles over the W rows alone give at most
 * SINGLE accumulator elements in registers, fewer than 8 vectors: the most accumulators
 * that fit the vector registers beside the tile's V / lanes weight vectors and one
 * broadcast (an x86 FMA takes a broadcast once, then it is dead: 14 + 1 + 1 of AVX2's 16
 * held without a spill), then TH dividing H, then fewer loads per FMA, then more rows of
 * the W axis (neighbours in memory). TW divides W, V
 * (whole vectors) divides C; TH need not divide H (the tail tile is guarded). E.g. AVX2,
 * 7 x 7 outputs: 2 x 7 x 8 (14 accumulators), where the one-axis tile was 7 x 16 with its
 * weight vectors read from memory, which LLVM kept in registers and spilled two
 * accumulators instead (resnet's 7 x 7 x 256 -> 512 stride-2 convolution 0.90 -> 0.54 ms
 * with its padding computed first, a 1 x 1 7 x 7 x 2048 -> 512 one 1.23 -> 0.60 ms).
 * A tile must leave every core 4 of the H / TH x W / TW x C / V tiles (the parallel loop's
 * chunks): AVX-512's 7 x 7 x 16 output would otherwise run as 2 chunks of 4 x 7 x 16 (0.07
 * -> 0.16 ms measured, its padding copied too). Returns false (tile unchanged) when no tile
 * beats SINGLE. */
static bool tile_2d(const CpuInfo *cpu, int64_t h, int64_t w, int64_t c, int64_t single, int64_t *th, int64_t *tw,
                    int64_t *v) {
  int L = cpu->lanes, R = cpu->vregs;
  int64_t best = single, best_loads = 0;
  bool found = false, best_divides = false;
  for (int nv = 1; nv <= 4; nv++) {
    int64_t width = (int64_t)nv * L;
    if (c % width) continue;
    for (int64_t rows = 1; rows <= w && rows <= 16; rows++) {
      if (w % rows) continue;
      for (int64_t t = 2; t <= h && t <= 16; t++) {
        int64_t acc = t * rows * nv;
        if (acc + nv + 1 > R) break;
        int64_t el = acc * L, loads = nv + t * rows, chunks = (h + t - 1) / t * (w / rows) * (c / width);
        if (chunks < 4 * (int64_t)(cpu->cores > 0 ? cpu->cores : 1)) continue;
        bool divides = h % t == 0, better = el > best;
        if (el == best && found)
          better = divides != best_divides ? divides : loads != best_loads ? loads < best_loads : rows > *tw;
        if (better) {
          best = el, best_loads = loads, best_divides = divides, found = true;
          *th = t, *tw = rows, *v = width;
        }
      }
    }
  }
  return found;
}

/* The register tile of an output with W rows (0: no row axis) and C channels (innermost)
 * on CPU: *TW rows x *V channels of accumulators. Channels are whole vectors (1-4 of
 * CPU's lanes) when they divide C, rows a divisor of W; the pair with the most accumulators
 * that fits the vector registers beside its B vectors and A broadcasts (cpu_describe's
 * rule), ties to fewer loads per FMA. When that leaves fewer than 8 accumulators (too few
 * to hide the FMA latency: 2 pipes x 4 cycles; e.g. 7 rows on AVX2 give 7 x 8), a tile
 * over a second axis (H, below) comes first; without one, the B vectors are meant to be
 * read from memory by the FMAs (accumulators + 2 registers; LLVM in fact keeps them in
 * registers and spills accumulators, see tile_2d): 7 x 16 on AVX2 measured 1.4x faster
 * than 7 x 8 on resnet's 7 x 7 x 512 convolution. C below a
 * vector: the largest of 32..4 dividing it. Returns whether the B vectors come from memory:
 * such a tile fills every register, and its rows are then left to LLVM rather than unrolled
 * (resnet's 7 x 7 layers on AVX2, 7 x 16 tiles: stride 2 1.04 -> 0.78 ms, stride 1 2.0 ->
 * 1.5 ms; unrolled, the padding's selects spilled accumulators).
 * With H > 1 (the extent of an axis before the rows, TH: NULL when there is none) a tile
 * short of 8 accumulators in registers takes *TH rows of that axis too, when some such
 * tile fits (see tile_2d); then nothing comes from memory. */
static bool register_tile(const CpuInfo *cpu, int64_t h, int64_t w, int64_t c, int64_t *th, int64_t *tw,
                          int64_t *v) {
  static const int small[] = {32, 16, 8, 4, 0};
  int L = cpu->lanes, R = cpu->vregs;
  bool memory = false;
  /* the best tile's elements (rows x channels); per k step its loads (broadcasts and weight
   * vectors), FMAs and all reads (the weights from memory read once per FMA) */
  int64_t best = 0, best_loads = 0, best_fmas = 0, best_reads = 0, best_used = 0, in_registers = 0;
  *tw = 1;
  *v = pick_divisor(c, small);
  /* tiles of whole vectors that divide the rows and the channels; else of half vectors
   * (AVX-512's 24 channels as 3 x 8); else whole vectors with tails (197 rows, 19 channels) */
  /* a channel tail is a lane mask: cheap with AVX-512's mask registers; without them (AVX2,
   * NEON) its accumulators go through masked loads and stores in memory every step (a 7 x
   * 7 x 232 1 x 1 convolution in AVX2 code: 24-channel tiles with a tail of 16 took 0.60
   * ms, 8-channel ones 0.057; 14 x 14 x 116: 16-channel tiles 0.31 ms, 4-channel ones
   * 0.10), so there only rows may have tails when whole or half vectors divide C */
  bool masks = L >= 16;
  int unit = L / 2 >= 4 ? L / 2 : L;
  for (int pass = 0; pass < 3 && best < 8 * L; pass++) {
    int lanes = pass == 1 ? L / 2 : L;
    bool tail = pass == 2;
    if (lanes < 4) continue;
    for (int from_memory = 0; from_memory < 2 && best < 8 * L; from_memory++) {
      for (int nv = 1; nv <= 4; nv++) {
        int64_t width = (int64_t)nv * lanes;
        if (c % width && (!tail || c < width || (!masks && c % unit == 0))) continue;
        for (int64_t rows = 1; rows <= (w > 0 ? w : 1) && rows <= 16; rows++) {
          if (w > 0 && w % rows && !tail) continue;
          int64_t regs = from_memory ? rows * nv + 2 : rows * nv + nv + (rows + L - 1) / L;
          if (regs > R) break;
          int64_t el = rows * width, loads = nv + rows, fmas = rows * nv;
          int64_t reads = from_memory ? rows + fmas : loads; /* per k step, weights from memory */
          bool better = el > best || (el == best && loads < best_loads);
          /* with tails, FMAs per load first (up to one: below, a k step waits on its loads;
           * AVX2 on vit's 197 rows: 13 x 8 did 13 FMAs to 14 loads, 6 x 16 12 to 8: the QKV
           * product 3.2 -> 2.85 ms), then the most elements that are not tail waste (the
           * tiles' share of the output that exists: vit's 64-wide attention output as 4 x
           * 24, a masked tail of 16, 0.27 -> 0.58 ms; squeezenet's 13 x 13 x 1000
           * classifier as 9 x 48, a row tail of 4, where 13 x 32 wastes little: 1.37 ->
           * 0.83 ms), within 3% of it fewer loads (vit's QKV: 4 x 24, 7 loads, not 6 x 16) */
          int64_t wr = w > 0 ? w : 1, used = el * wr / ((wr + rows - 1) / rows * rows) * c / ((c + width - 1) / width * width);
          if (tail && best) {
            int64_t e = fmas >= reads ? 1000 : fmas * 1000 / reads;
            int64_t be = best_fmas >= best_reads ? 1000 : best_fmas * 1000 / best_reads;
            bool more = used * 32 > best_used * 33, less = used * 33 < best_used * 32; /* beyond 3% */
            better = e > be || (e == be && (more || (!less && (loads < best_loads || (loads == best_loads && used > best_used)))));
          }
          if (better)
            best = el, best_loads = loads, best_fmas = fmas, best_reads = reads, best_used = used, *tw = rows, *v = width,
            memory = from_memory;
          if (better && !from_memory) in_registers = el;
        }
      }
    }
  }
  if (th) *th = 1;
  if (th && h > 1 && in_registers < 8 * L) memory = !tile_2d(cpu, h, w, c, in_registers, th, tw, v) && memory;
  return memory;
}

/* The channel tiles of one group (channel_group in tile_output): the most of the C / V
 * tiles of O (a divisor) whose input, BYTES per channel, fits half the L1 cache, while the
 * loops left parallel (the positions' tiles times the groups) still give every core 4
 * chunks. E.g. AVX2, 32 KiB L1, 2 cores: mobilenet's 112 x 112 x 32 depthwise (4 x 16 tiles,
 * 3 x 6 x 4 bytes a channel) takes both of its channel tiles; 7 x 7 x 1024 (7 x 16 tiles,
 * 3 x 9 x 4 bytes) groups 8 of its 64. */
static int64_t channel_group(const Op *o, int64_t v, int64_t tw, int64_t bytes) {
  const CpuInfo *cpu = target_cpu(NULL);
  int d = o->ndim;
  int64_t tiles = extent(o, d - 1) / (v > 1 ? v : 1), positions = 1;
  for (int i = 0; i < d - 1; i++) positions *= extent(o, i);
  if (tw > 1) positions /= tw;
  int64_t best = 1, want = 4 * (int64_t)(cpu->cores > 0 ? cpu->cores : 1);
  for (int64_t g = 2; g <= tiles; g++) {
    if (tiles % g) continue;
    if (g * v * bytes * 2 > cpu->l1d) break;
    if (positions * (tiles / g) < want) break;
    best = g;
  }
  return best;
}

/* Does every load of B in E have the variable C as its last index? */
static bool loads_last(const Expr *e, const Buffer *b, const IrVar *c) {
  if (!e) return true;
  if (e->kind == E_LOAD && e->buf == b) {
    const Expr *last = e->nargs > 0 ? e->args[e->nargs - 1] : NULL;
    if (!last || last->kind != E_VAR || last->var != c) return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!loads_last(e->args[i], b, c)) return false;
  return loads_last(e->a, b, c) && loads_last(e->b, b, c) && loads_last(e->c, b, c);
}

/* Does a load in E index along C other than by its last index (a transposed read)? */
static bool reads_across(const Expr *e, const IrVar *c) {
  if (!e) return false;
  if (e->kind == E_LOAD)
    for (int i = 0; i + 1 < e->nargs; i++)
      if (ir_uses_var(e->args[i], c)) return true;
  for (int i = 0; i < e->nargs; i++)
    if (reads_across(e->args[i], c)) return true;
  return reads_across(e->a, c) || reads_across(e->b, c) || reads_across(e->c, c);
}

/* Does every stage of K read in the order it writes (no load along a stage's last axis
 * but by the load's last index)? */
static bool reads_in_order(const Kernel *k) {
  for (int i = 0; i < k->nops; i++) {
    const Op *op = k->ops[i];
    if (op->ndim < 1 || reads_across(op->value, op->axes[op->ndim - 1])) return false;
  }
  return true;
}

/* Does every load of B in E have the first N variables of AXES as its indices? */
static bool loads_prefix(const Expr *e, const Buffer *b, IrVar *const *axes, int n) {
  if (!e) return true;
  if (e->kind == E_LOAD && e->buf == b) {
    if (e->nargs != n) return false;
    for (int i = 0; i < n; i++)
      if (e->args[i]->kind != E_VAR || e->args[i]->var != axes[i]) return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!loads_prefix(e->args[i], b, axes, n)) return false;
  return loads_prefix(e->a, b, axes, n) && loads_prefix(e->b, b, axes, n) && loads_prefix(e->c, b, axes, n);
}

/* Does no load in E read with both the variables H and C? Then the vectors along C (a
 * convolution's weights) are the same for every H, and a tile over H shares them. */
static bool shared_along(const Expr *e, const IrVar *h, const IrVar *c) {
  if (!e) return true;
  if (e->kind == E_LOAD && ir_uses_var(e, h) && ir_uses_var(e, c)) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!shared_along(e->args[i], h, c)) return false;
  return shared_along(e->a, h, c) && shared_along(e->b, h, c) && shared_along(e->c, h, c);
}

/* Is the anchor A channel-wise (a depthwise convolution): does every tensor it reads have
 * A's last (channel) axis, unchanged, as its last index? Then no operand is broadcast
 * across the channels, and A reads, per channel of a tile, KH x (TW x stride + KW - 1)
 * input values (returned in *BYTES as floats x 4; KH, KW: A's reduction extents, all but
 * the last and the last). */
static bool channel_wise(const Op *a, const Op *o, int64_t tw, int64_t *bytes) {
  int d = a->ndim;
  if (d < 3 || a->nred < 1 || a->nreads < 2 || o->ndim != d) return false;
  for (int j = 0; j < a->nreads; j++) {
    const Buffer *b = a->reads[j];
    if (!loads_last(a->value, b, a->axes[d - 1])) return false;
  }
  int64_t kh = 1, kw = 1, e;
  for (int i = 0; i < a->nred; i++) {
    if (!ir_is_const(a->rext[i], &e)) return false;
    if (i < a->nred - 1) kh *= e;
    else kw = e;
  }
  const Buffer *in = a->reads[0];
  int64_t win = 0, wout = extent(o, d - 2);
  if (in->ndim < 2 || !ir_is_const(in->shape[in->ndim - 2], &win) || wout <= 0) return false;
  int64_t stride = win / wout > 0 ? win / wout : 1;
  *bytes = kh * (tw * stride + kw - 1) * 4;
  return true;
}

/* The output O tiled by the register tile TW rows x V channels; returns the name of the
 * loop the anchor is computed at (the fused parallel loop, or with GROUP its serial
 * channel-group loop); PATCH: see below (*INNER_AT).
 * CHANNELS_FIRST: output-channel tiles outermost (after the batch), so that one tile's
 * weights stay in cache over all positions; else positions outermost. CW: a channel-wise
 * anchor (channel_wise, NULL for others): the channel tiles are then split in two, the outer part fused into the parallel loop and the inner
 * part (as many tiles as channel_group allows) a serial loop inside it, at which the anchor
 * is computed: the tiles of one group are neighbours in memory and their index arithmetic
 * is a loop's increment instead of divisions of the fused index. */
static const char *tile_output(char **s, Op *o, bool channels_first, const Op *cw, bool patch, int64_t v,
                               int64_t th, int64_t tw, bool elementwise, const char **inner_at) {
  int d = o->ndim;
  const char *on = o->name;
  const char *c = o->axes[d - 1]->name;
  char *inner = xstrdup("");
  const char *c_outer = xprintf("%s.%s", on, c);
  const char *attach = NULL;
  if (v > 1) {
    step(s, xprintf("%s_c0, %s_c1 = split(%s.%s, %lld)", on, on, on, c, (long long)v));
    c_outer = xprintf("%s_c0", on);
    inner = xprintf(", %s_c1", on);
  }
  int r = row_axis(o);
  const char *w_outer = d >= 2 ? xprintf("%s.%s", on, o->axes[r]->name) : NULL;
  if (th > 1) { /* a second row axis, before the rows (tile_2d) */
    const char *hn = o->axes[r - 1]->name;
    step(s, xprintf("%s_h0, %s_h1 = split(%s.%s, %lld)", on, on, on, hn, (long long)th));
  }
  if (tw > 1) {
    const char *w = o->axes[r]->name;
    step(s, xprintf("%s_w0, %s_w1 = split(%s.%s, %lld)", on, on, on, w, (long long)tw));
    w_outer = xprintf("%s_w0", on);
    inner = xprintf(", %s_w1%s", on, inner);
  }
  if (th > 1) inner = xprintf(", %s_h1%s", on, inner);
  int64_t bytes, ci = cw && channel_wise(cw, o, tw, &bytes) ? channel_group(o, v, tw, bytes) : 1;
  if (ci > 1) {
    step(s, xprintf("%s_co, %s_ci = split(%s, %lld)", on, on, c_outer, (long long)ci));
    c_outer = xprintf("%s_co", on);
    attach = xprintf("%s_ci", on);
    inner = xprintf(", %s%s", attach, inner);
    channels_first = false;
  }
  /* the outer loops in order (and their extents), then the tile */
  const char *outer[NET_MAX_DIMS + 2];
  int64_t ext[NET_MAX_DIMS + 2];
  int n = 0;
  int64_t c_ext = (extent(o, d - 1) + v - 1) / v / ci, w_ext = d >= 2 ? (extent(o, r) + tw - 1) / tw : 1;
  /* channels first: after the batch when the rows are the axis before the channels (NHWC:
   * n, channel tiles, h, row tiles); else (a product's [S, C] or [S, 1, C], whose rows are
   * S) after every other axis, just outside the row tiles */
  bool nhwc = channels_first && d >= 3 && r == d - 2, late = channels_first && d >= 2 && !nhwc;
  if (nhwc) {
    ext[n] = extent(o, 0), outer[n++] = xprintf("%s.%s", on, o->axes[0]->name);
    ext[n] = c_ext, outer[n++] = c_outer;
  }
  for (int i = nhwc ? 1 : 0; i < d - 1; i++) {
    if (i == r) continue;
    if (th > 1 && i == r - 1) ext[n] = (extent(o, i) + th - 1) / th, outer[n++] = xprintf("%s_h0", on);
    else ext[n] = extent(o, i), outer[n++] = xprintf("%s.%s", on, o->axes[i]->name);
  }
  if (late) ext[n] = c_ext, outer[n++] = c_outer;
  if (w_outer) ext[n] = w_ext, outer[n++] = w_outer;
  channels_first = nhwc || late;
  if (!channels_first) ext[n] = c_ext, outer[n++] = c_outer;
  char *order = xstrdup(outer[0]);
  for (int i = 1; i < n; i++) order = xprintf("%s, %s", order, outer[i]);
  /* without inner loops too when the order is not the axes' own: channels first puts c
   * before h and w, and the fuse below needs them adjacent (a network's last NHWC-to-NCHW
   * layout change and squeeze-excitations' 1 x 1 x 1 x 6 products had no reorder: their
   * steps failed and they ran the bare default, in 11 of 12 torchvision models) */
  char *natural = xprintf("%s.%s", on, o->axes[0]->name);
  for (int i = 1; i < d; i++) natural = xprintf("%s, %s.%s", natural, on, o->axes[i]->name);
  if (inner[0] || strcmp(order, natural) != 0) step(s, xprintf("reorder(%s%s)", order, inner));
  /* PATCH (a padded patch computed per tile, positions outermost, several channel tiles):
   * the channel-tile loop stays serial inside the parallel loop of positions, so that one
   * patch serves every channel tile of its positions (*INNER_AT: where the anchor goes) */
  *inner_at = NULL;
  if (patch && !channels_first && !attach && v > 1 && extent(o, d - 1) > v && n >= 2)
    *inner_at = outer[--n];
  /* ELEMENTWISE (no anchor) without a tile of rows (a layout change of 3 channels; a large
   * output that reads in order, default_steps): only the outer loops that give the
   * threads enough iterations are fused, the rest stay loops (fusing them all divided the
   * fused index per element: efficientnet's 3 x 224 x 224 NCHW-to-NHWC input took 0.22 ms) */
  int nf = n;
  if (elementwise && tw == 1 && !attach && !*inner_at) {
    int64_t grain = 16 * (int64_t)(target_cpu(NULL)->cores > 0 ? target_cpu(NULL)->cores : 1), prod = 1;
    for (nf = 0; nf < n && (nf == 0 || prod < grain);) prod *= ext[nf] > 0 ? ext[nf] : grain, nf++;
  }
  const char *fused = outer[0];
  for (int i = 1; i < nf; i++) {
    const char *f = xprintf("%s_f%d", on, i);
    step(s, xprintf("%s = fuse(%s, %s)", f, fused, outer[i]));
    fused = f;
  }
  step(s, xprintf("parallel(%s)", fused));
  if (v > 1) step(s, xprintf("vectorize(%s_c1)", on));
  return attach ? attach : fused;
}

/* The anchor A, attached at loop AT of O (NULL: A is the output, already tiled): its
 * reductions outside its tile, the tile's rows unrolled (with UNROLL) and channels
 * vectorized. */
static void schedule_anchor(char **s, Op *a, Op *o, const char *at, int64_t v, int64_t th, int64_t tw,
                            bool unroll) {
  if (at) step(s, xprintf("compute_at(%s, %s, %s)", a->name, o->name, at));
  const char *an = a->name;
  int d = a->ndim, ra = row_axis(a);
  bool two = at && th > 1 && ra >= 1; /* rows of two axes (tile_2d) */
  /* reorder: [outer spatial], reductions, [second row axis], [row], [channel] */
  char *r = xstrdup("");
  if (at)
    for (int i = 0; i < d - 1; i++)
      if (i != ra && !(two && i == ra - 1)) r = xprintf("%s%s.%s, ", r, an, a->axes[i]->name);
  for (int i = 0; i < a->nred; i++) r = xprintf("%s%s.%s, ", r, an, a->raxes[i]->name);
  if (two) r = xprintf("%s%s.%s, ", r, an, a->axes[ra - 1]->name);
  if (at) {
    if (d >= 2) r = xprintf("%s%s.%s, ", r, an, a->axes[ra]->name);
    r = xprintf("%s%s.%s", r, an, a->axes[d - 1]->name);
  } else {
    if (tw == 1 && v == 1) return; /* no tile: the reductions are innermost already */
    if (tw > 1) r = xprintf("%s%s_w1%s", r, an, v > 1 ? ", " : "");
    if (v > 1) r = xprintf("%s%s_c1", r, an);
  }
  step(s, xprintf("reorder(%s)", r));
  const char *row = at ? xprintf("%s.%s", an, d >= 2 ? a->axes[ra]->name : "") : xprintf("%s_w1", an);
  const char *col = at ? xprintf("%s.%s", an, a->axes[d - 1]->name) : xprintf("%s_c1", an);
  if (tw > 1 && unroll) step(s, xprintf("unroll(%s)", row));
  if (two && unroll) step(s, xprintf("unroll(%s.%s)", an, a->axes[ra - 1]->name));
  if (v > 1 && at) step(s, xprintf("vectorize(%s)", col));
}

/* Is OP padding that the anchor A reads: elementwise, its value a select (the border
 * test)? Inlined, its test would run in the innermost loop at every load of the
 * reduction; computed at the tile, the reduction reads a small padded patch unguarded. */
static bool is_padding(const Op *op, const Op *a) {
  if (op->nred != 0 || !op->value || op->value->kind != E_SELECT || op->nreads != 1) return false;
  const Buffer *in = op->reads[0];
  bool pads = in->ndim != op->ndim; /* no border at all (padding 0): inlined, it folds away */
  for (int d = 0; d < op->ndim && !pads; d++) {
    int64_t x, y;
    pads = !ir_is_const(in->shape[d], &x) || !ir_is_const(op->out->shape[d], &y) || x != y;
  }
  if (!pads) return false;
  for (int j = 0; j < a->nreads; j++)
    if (a->reads[j] == op->out) return true;
  return false;
}

/* The bytes of the padded patch that one TW-row tile of O reads from PAD through the
 * anchor A (a convolution: A's reductions are KH x KW x CI, CI = PAD's last extent), for a
 * square kernel: KH x (TW x stride + KW - 1) x CI floats; a huge value when A is not of
 * that form (a depthwise convolution: no CI reduction). */
static int64_t patch_bytes(const Op *pad, const Op *a, const Op *o, int64_t tw) {
  int nd = pad->ndim;
  int64_t ci = extent(pad, nd - 1), red = 1, e, wout = o->ndim >= 2 ? extent(o, o->ndim - 2) : 0;
  for (int i = 0; i < a->nred; i++) red *= ir_is_const(a->rext[i], &e) ? e : 0;
  if (nd < 2 || ci <= 0 || red <= 0 || red % ci || wout <= 0) return INT64_MAX / 4;
  int64_t khkw = red / ci, kw = 1;
  while ((kw + 1) * (kw + 1) <= khkw) kw++;
  int64_t stride = extent(pad, nd - 2) / wout;
  if (stride < 1) stride = 1;
  return khkw / kw * (tw * stride + kw - 1) * ci * 4;
}

/* Winograd's products (network.c's winograd_product: 16 matrix products over the channels,
 * M[a, e, n, ty, tx, co] += V[a, e, n, ty, tx, ci] * U[a, e, ci, co]): the register tile of
 * the CPU (TW blocks of a row x NR channels, as a convolution's rows x channels) accumulated
 * in a local buffer with the channel reduction outside it; one parallel loop over the 16
 * (a, e) planes and the channel blocks, so that a chunk reads its U[a, e] block from cache
 * for every row of blocks. NULL when K is not that kernel. */
static char *winograd_product_steps(Kernel *k) {
  Op *o = k->outputs[0]->op;
  if (!strstr(k->name, "winograd_product") || k->nops != 1 || o->ndim != 6 || o->nred != 1) return NULL;
  int64_t tx = extent(o, 4), co = extent(o, 5), tw, nr;
  if (!tx || !co) return NULL;
  register_tile(target_cpu(NULL), 0, tx, co, NULL, &tw, &nr);
  const char *O = o->name, *ax[6], *ci = o->raxes[0]->name;
  for (int d = 0; d < 6; d++) ax[d] = o->axes[d]->name;
  char *s = xstrdup("");
  step(&s, xprintf("%s_l = cache_write(%s, local)", O, O));
  step(&s, xprintf("%s_c0, %s_c1 = split(%s.%s, %lld)", O, O, O, ax[5], (long long)nr));
  step(&s, xprintf("%s_t0, %s_t1 = split(%s.%s, %lld)", O, O, O, ax[4], (long long)tw));
  step(&s, xprintf("reorder(%s.%s, %s.%s, %s_c0, %s.%s, %s.%s, %s_t0, %s_t1, %s_c1)", O, ax[0], O, ax[1], O, O, ax[2], O,
                   ax[3], O, O, O));
  step(&s, xprintf("%s_f1 = fuse(%s.%s, %s.%s)", O, O, ax[0], O, ax[1]));
  step(&s, xprintf("%s_f2 = fuse(%s_f1, %s_c0)", O, O, O));
  step(&s, xprintf("parallel(%s_f2)", O));
  step(&s, xprintf("vectorize(%s_c1)", O));
  step(&s, xprintf("compute_at(%s_l, %s, %s_t0)", O, O, O));
  step(&s, xprintf("reorder(%s_l.%s, %s_l.%s, %s_l.%s, %s_l.%s, %s_l.%s, %s_l.%s, %s_l.%s)", O, ax[0], O, ax[1], O, ax[2],
                   O, ax[3], O, ci, O, ax[4], O, ax[5]));
  step(&s, xprintf("unroll(%s_l.%s)", O, ax[4]));
  step(&s, xprintf("vectorize(%s_l.%s)", O, ax[5]));
  return s;
}

/* Steps: the first N axes of stage O fused into one loop (O_r1, ..., the last returned as
 * "O_rK", or "O.axis" for N = 1), run in parallel: O's rows. */
static const char *parallel_rows(char **s, const Op *o, int n) {
  const char *on = o->name, *row = xprintf("%s.%s", on, o->axes[0]->name);
  for (int a = 1; a < n; a++) {
    const char *f = xprintf("%s_r%d", on, a);
    step(s, xprintf("%s = fuse(%s, %s.%s)", f, row, on, o->axes[a]->name));
    row = f;
  }
  step(s, xprintf("parallel(%s)", row));
  return row;
}

/* Steps: statistic PN (a sum, max or min over its reduction axis R) L lanes at a time:
 * `PN_rf` accumulates L partial results over the axis in steps of L, PN combines them; the
 * partial results computed at loop AT (NULL: at the root). */
static void statistic_steps(char **s, const char *pn, const char *r, int L, const char *at) {
  step(s, xprintf("%s_ko, %s_kv = split(%s.%s, %d)", pn, pn, pn, r, L));
  step(s, xprintf("%s_rf = rfactor(%s, %s_kv)", pn, pn, pn));
  if (at) step(s, xprintf("compute_at(%s_rf, %s)", pn, at));
  step(s, xprintf("reorder(%s_rf.%s_ko, %s_rf.%s_kv)", pn, pn, pn, pn));
  step(s, xprintf("vectorize(%s_rf.%s_kv)", pn, pn));
}

/* Steps: axis AX of stage PN by vectors of L lanes (PN_v0 outside, PN_v1 vectorized). */
static void vector_steps(char **s, const char *pn, const char *ax, int L) {
  step(s, xprintf("%s_v0, %s_v1 = split(%s.%s, %d)", pn, pn, pn, ax, L));
  step(s, xprintf("vectorize(%s_v1)", pn));
}

/* Can the statistic P (a reduction over the row) be computed L lanes at a time: one
 * reduction axis of constant extent at least L, a sum, max or min that rfactor splits
 * (no `where` over the indices, no update definition)? */
static bool statistic_lanes(const Op *p, int L) {
  int64_t e;
  if (p->nred != 1 || p->rcond || p->init || p->scatter || p->is_scan) return false;
  if (p->rop != RED_SUM && p->rop != RED_MAX && p->rop != RED_MIN) return false;
  return ir_is_const(p->rext[0], &e) && e >= L;
}

/* Row-wise kernels of several reductions (softmax: a row's max, its exponentials, their
 * sum, the quotients; layer normalisation: mean, variance, the normalised row): every stage
 * either has the output's shape or is a statistic of its rows (the output's leading axes).
 * One parallel loop over the output's rows (its leading axes fused), each stage computed
 * at it for its row, the full-width stages' rows vectorized; the statistics stay serial
 * reductions over the row. NULL when K does not have that form. (Without it such a kernel
 * ran serial and scalar: vit_b_16's softmax of 12 x 197 x 197 took 1.08 ms.) */
static char *rowwise_steps(Kernel *k, Op *o) {
  int d = o->ndim, L = target_cpu(NULL)->lanes;
  if (d < 2 || k->nops < 2 || o->nred) return NULL;
  for (int i = 0; i < k->nops; i++) {
    Op *p = k->ops[i];
    if (p == o) continue;
    if (p->ndim != d && p->ndim != d - 1) return NULL;
    if (p->ndim == d && p->nred) return NULL;
    for (int a = 0; a < p->ndim; a++)
      if (!extent(p, a) || extent(p, a) != extent(o, a)) return NULL;
    /* a row statistic is read at its row (the first d - 1 axes of each stage that reads
     * it), not at axes of the same extents: a mean over the middle axis of a square read
     * at [i, k] would be recomputed for every row */
    for (int j = 0; p->ndim == d - 1 && j < k->nops; j++)
      if (k->ops[j] != p && k->ops[j]->ndim == d && !loads_prefix(k->ops[j]->value, p->out, k->ops[j]->axes, d - 1)) return NULL;
  }
  const char *on = o->name;
  char *s = xstrdup("");
  const char *row = parallel_rows(&s, o, d - 1);
  bool vec = extent(o, d - 1) >= L;
  if (vec) vector_steps(&s, on, o->axes[d - 1]->name, L);
  for (int i = 0; i < k->nops; i++) {
    Op *p = k->ops[i];
    if (p == o) continue;
    /* the row's statistic by vectors: L partial results (a sum's or a max's lanes) over the
     * row in steps of L, then the L lanes combined (vit's softmax of 12 x 197 x 197: 0.28 ->
     * 0.12 ms, its max and sum had been serial scalar chains) */
    if (vec && statistic_lanes(p, L)) statistic_steps(&s, p->name, p->raxes[0]->name, L, xprintf("%s, %s", on, row));
    step(&s, xprintf("compute_at(%s, %s, %s)", p->name, on, row));
    if (vec && p->ndim == d) vector_steps(&s, p->name, p->axes[d - 1]->name, L);
  }
  return s;
}

/* Does every load of B in E index B by the first N variables of AXES and then LAST? */
static bool loads_row(const Expr *e, const Buffer *b, IrVar *const *axes, int n, const IrVar *last) {
  if (!e) return true;
  if (e->kind == E_LOAD && e->buf == b) {
    if (e->nargs != n + 1 || e->args[n]->kind != E_VAR || e->args[n]->var != last) return false;
    for (int i = 0; i < n; i++)
      if (e->args[i]->kind != E_VAR || e->args[i]->var != axes[i]) return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!loads_row(e->args[i], b, axes, n, last)) return false;
  return loads_row(e->a, b, axes, n, last) && loads_row(e->b, b, axes, n, last) && loads_row(e->c, b, axes, n, last);
}

/* One reduction axis of constant extent, over a box, no update, scatter, scan or call. */
static bool plain_reduction(const Op *p) {
  int64_t e;
  return p->nred == 1 && !p->rcond && !p->init && !p->scatter && !p->is_scan && !p->ext && ir_is_const(p->rext[0], &e);
}

/* Does stage P of K, whose first R axes are rows, read every other stage of K at its own
 * row: a stage of R axes at P's first R, a stage of R + 1 at those and then P's last axis
 * (LAST, or its reduction axis where P is a statistic of R axes)? */
static bool reads_at_row(const Kernel *k, const Op *p, int r) {
  const IrVar *last = p->ndim == r + 1 ? p->axes[r] : p->nred == 1 ? p->raxes[0] : NULL;
  for (int j = 0; j < p->nreads; j++) {
    const Buffer *b = p->reads[j];
    if (!b->op || b->kind == BUF_INPUT) continue;
    if (b->ndim == r ? !loads_prefix(p->value, b, p->axes, r) : !last || !loads_row(p->value, b, p->axes, r, last)) return false;
  }
  return true;
}

/* Attention as one kernel (network.c merge_attention fuses it on a CPU): scores S[.., i, j]
 * += Q[.., i, k] * K[.., k, j], a row-wise kernel of them (softmax: the row's max, the
 * exponentials, their sum, the quotients P) and the output O[.., i, e] += P[.., i, j] *
 * V[.., j, e]. Every stage has the output's rows (its leading axes): the scores' length
 * M or E wide, or a statistic of the row. One parallel loop over blocks of R rows (the
 * batch axes fused with them), every stage computed at it for the block: the scores and
 * the output as register tiles of R rows by one or two vectors (reduction outside, rows
 * unrolled), the statistics by vectors (rfactor, as rowwise_steps), the elementwise
 * stages by vectors. So the scores, whole 4 x 1500 x 1500 x 4 bytes = 36 MB for Whisper's
 * encoder, exist R rows at a time in the L2 cache, never in memory (Whisper's 4 heads of
 * 1500 x 32: 10.1 ms as three kernels, 7.5 fused). R: the most rows of a register tile
 * (as many vectors of accumulators as the registers hold beside the loads, at most 8),
 * fewer where R rows of every row-length stage would pass half the L2. NULL when K does
 * not have that form. */
static char *attention_steps(Kernel *k, Op *o) {
  const CpuInfo *cpu = target_cpu(NULL);
  int d = o->ndim, L = cpu->lanes, r = d - 1;
  if (d < 2 || !plain_reduction(o) || o->rop != RED_SUM || k->nops < 4) return NULL;
  for (int a = 0; a < d; a++)
    if (!extent(o, a)) return NULL;
  int64_t m, e = extent(o, d - 1);
  ir_is_const(o->rext[0], &m);
  /* the output reads one stage (P) at [rows, j], its other operands along its last axis */
  Op *s = NULL;
  int rowlen = 0, stats = 0;
  for (int j = 0; j < o->nreads; j++) {
    const Buffer *b = o->reads[j];
    if (b->op && b->kind != BUF_INPUT ? b->ndim != d || !loads_row(o->value, b, o->axes, r, o->raxes[0])
                                      : !loads_last(o->value, b, o->axes[d - 1]))
      return NULL;
  }
  for (int i = 0; i < k->nops; i++) {
    Op *p = k->ops[i];
    if (p == o) continue;
    if (p->ext || p->scatter || p->is_scan || (p->ndim != d && p->ndim != r)) return NULL;
    for (int a = 0; a < r; a++)
      if (extent(p, a) != extent(o, a)) return NULL;
    if (p->ndim == d && extent(p, d - 1) != m) return NULL;
    if (!reads_at_row(k, p, r)) return NULL;
    if (p->ndim == d) rowlen++;
    if (p->ndim == r && p->nred) stats++;
    if (p->ndim == d && p->nred) { /* the scores: a product of inputs, read along j in order */
      if (s || !plain_reduction(p) || p->rop != RED_SUM || reads_across(p->value, p->axes[d - 1])) return NULL;
      for (int j = 0; j < p->nreads; j++)
        if (p->reads[j]->op && p->reads[j]->kind != BUF_INPUT) return NULL;
      s = p;
    }
  }
  if (!s || !stats) return NULL;
  int nv = (m >= 2 * L || e >= 2 * L) ? 2 : 1;
  int64_t rows = (cpu->vregs - 2 - nv) / nv;
  if (rows > 8) rows = 8;
  while (rows > 1 && rows * m * 4 * rowlen > cpu->l2 / 2) rows--;
  if (rows * m * 4 * rowlen > cpu->l2 / 2) return NULL;
  if (rows > extent(o, d - 2)) rows = extent(o, d - 2);
  const char *on = o->name, *acc = xprintf("%s_acc", on);
  char *st = xstrdup("");
  step(&st, xprintf("%s = cache_write(%s, local)", acc, on));
  step(&st, xprintf("%s_ro, %s_ri = split(%s.%s, %d)", on, on, on, o->axes[d - 2]->name, (int)rows));
  const char *par = xprintf("%s_ro", on);
  if (d >= 3) {
    const char *row = xprintf("%s.%s", on, o->axes[0]->name);
    for (int a = 1; a < d - 2; a++) {
      const char *f = xprintf("%s_b%d", on, a);
      step(&st, xprintf("%s = fuse(%s, %s.%s)", f, row, on, o->axes[a]->name));
      row = f;
    }
    step(&st, xprintf("%s_p = fuse(%s, %s_ro)", on, row, on));
    par = xprintf("%s_p", on);
  }
  step(&st, xprintf("parallel(%s)", par));
  if (e >= L) vector_steps(&st, on, o->axes[d - 1]->name, L);
  /* a register tile of ROWS rows by one or two vectors of stage P (its last axis C, its
   * reduction K), the reduction outside the rows */
  const Op *tiles[2] = {o, s};
  const char *tname[2] = {acc, s->name};
  for (int t = 0; t < 2; t++) {
    const Op *p = tiles[t];
    const char *pn = tname[t], *row = p->axes[d - 2]->name, *c = p->axes[d - 1]->name, *kx = p->raxes[0]->name;
    int64_t w = extent(p, d - 1);
    step(&st, xprintf("compute_at(%s, %s, %s)", pn, on, par));
    if (w < L) {
      step(&st, xprintf("reorder(%s.%s, %s.%s, %s.%s)", pn, kx, pn, row, pn, c));
      step(&st, xprintf("unroll(%s.%s)", pn, row));
      continue;
    }
    int v = w >= 2 * L ? nv : 1;
    step(&st, xprintf("%s_to, %s_tv = split(%s.%s, %d)", pn, pn, pn, c, v * L));
    step(&st, xprintf("%s_tvo, %s_tvi = split(%s_tv, %d)", pn, pn, pn, L));
    step(&st, xprintf("reorder(%s_to, %s.%s, %s.%s, %s_tvo, %s_tvi)", pn, pn, kx, pn, row, pn, pn));
    step(&st, xprintf("unroll(%s.%s)", pn, row));
    step(&st, xprintf("unroll(%s_tvo)", pn));
    step(&st, xprintf("vectorize(%s_tvi)", pn));
  }
  for (int i = k->nops - 1; i >= 0; i--) {
    Op *p = k->ops[i];
    if (p == o || p == s) continue;
    const char *pn = p->name;
    /* a statistic's partial results computed per row (at the block, its buffer's lanes would
     * lie a row apart: gathers) */
    if (p->ndim == r && m >= L && statistic_lanes(p, L))
      statistic_steps(&st, pn, p->raxes[0]->name, L, xprintf("%s, %s.%s", pn, pn, p->axes[r - 1]->name));
    step(&st, xprintf("compute_at(%s, %s, %s)", pn, on, par));
    if (p->ndim == d && m >= L) vector_steps(&st, pn, p->axes[d - 1]->name, L);
  }
  return st;
}

bool net_attention(Kernel *k) {
  return k->noutputs == 1 && k->outputs[0]->op && attention_steps(k, k->outputs[0]->op) != NULL;
}

/* Pooling over the middle axes (a global average pool, ONNX ReduceMean over H and W): one
 * reduction S[n, c] += X[n, r1, r2, c] of fewer axes than the output O[n, 1, 1, c] = f(S),
 * whose last axis (the channels, contiguous in X) is S's last. The output's channels split
 * by the vector lanes, every other axis fused with the outer part into one parallel loop;
 * S computed there, its reductions outside its vector of channels. NULL when K does not
 * have that form. (Without it the reduction ran serial and scalar: efficientnet_b0's pools
 * of 112 x 112 x 32 and 56 x 56 x 144 took 0.24 and 0.22 ms.) */
static char *pooled_steps(Kernel *k, Op *o, Op *a) {
  int d = o->ndim, da = a ? a->ndim : 0;
  if (!a || a == o || da < 1 || da >= d || o->nred) return NULL;
  if (!extent(o, d - 1) || extent(o, d - 1) != extent(a, da - 1)) return NULL;
  for (int i = 0; i < d; i++)
    if (!extent(o, i)) return NULL;
  char *s = xstrdup("");
  /* elementwise stages between S and O (a quantized model's QuantizeLinear after the
   * mean, fused into the pool's group) inlined into O: otherwise the bare default ran the
   * pool serial and scalar again (0.33 ms for 112 x 112 x 32) */
  for (int i = 0; i < k->nops; i++) {
    if (k->ops[i] == o || k->ops[i] == a) continue;
    if (k->ops[i]->nred || k->ops[i]->ndim != d) return NULL;
    step(&s, xprintf("compute_inline(%s)", k->ops[i]->name));
  }
  /* S's last axis must be the output's (each stage reads S at its own last axis), not an
   * axis of the same extent: x - max(x) over a square 1500 x 1500 (attention scores) read
   * M[i, j] at O[i, j, k] and recomputed M for every vector of k (1.8 s, not 3 ms) */
  for (int i = 0; i < k->nops; i++)
    if (k->ops[i] != a && k->ops[i]->ndim >= 1 && !loads_last(k->ops[i]->value, a->out, k->ops[i]->axes[k->ops[i]->ndim - 1]))
      return NULL;
  /* and the output no larger than S (its other axes of extent 1, a pool's): S is computed
   * at the loop over all of them, again for each point of a broadcast axis (a mean over the
   * middle axis of 8 x 256 x 256 read back at every row: 4.2 ms) */
  if (numel(o->out) != numel(a->out)) return NULL;
  static const int lanes[] = {64, 32, 16, 8, 4, 0};
  int64_t v = pick_divisor(extent(o, d - 1), lanes);
  while (v > target_cpu(NULL)->lanes) v /= 2;
  const char *on = o->name, *an = a->name;
  const char *par = xprintf("%s.%s", on, o->axes[d - 1]->name);
  if (v > 1) {
    step(&s, xprintf("%s_c0, %s_c1 = split(%s, %lld)", on, on, par, (long long)v));
    par = xprintf("%s_c0", on);
  }
  for (int i = d - 2; i >= 0; i--) {
    const char *f = xprintf("%s_f%d", on, i);
    step(&s, xprintf("%s = fuse(%s.%s, %s)", f, on, o->axes[i]->name, par));
    par = f;
  }
  step(&s, xprintf("parallel(%s)", par));
  if (v > 1) step(&s, xprintf("vectorize(%s_c1)", on));
  step(&s, xprintf("compute_at(%s, %s, %s)", an, on, par));
  char *order = xstrdup("");
  for (int i = 0; i < da - 1; i++) order = xprintf("%s%s.%s, ", order, an, a->axes[i]->name);
  for (int i = 0; i < a->nred; i++) order = xprintf("%s%s.%s, ", order, an, a->raxes[i]->name);
  step(&s, xprintf("reorder(%s%s.%s)", order, an, a->axes[da - 1]->name));
  if (v > 1) step(&s, xprintf("vectorize(%s.%s)", an, a->axes[da - 1]->name));
  return s;
}

/* The FLOPs of anchor A (2 per multiply-add: O's elements x A's reduction) per element of
 * the padded input PAD. */
static double flops_per_element(const Op *a, const Op *o, const Op *pad) {
  double red = 1, out = 1, in = 1;
  int64_t e;
  for (int i = 0; i < a->nred; i++) red *= ir_is_const(a->rext[i], &e) ? (double)e : 1;
  for (int d = 0; d < o->ndim; d++) out *= (double)extent(o, d);
  for (int d = 0; d < pad->ndim; d++) in *= (double)extent(pad, d);
  return in > 0 ? 2 * red * out / in : 0;
}

/* Padding PAD computed whole before the reduction: all its axes but the last two fused
 * into one parallel loop, its channels (the last) vectorized by LANES when they divide. */
static void pad_root(char **s, const Op *pad, int lanes) {
  const char *pn = pad->name;
  int d = pad->ndim;
  const char *fused = xprintf("%s.%s", pn, pad->axes[0]->name);
  for (int i = 1; i < d - 2; i++) {
    const char *f = xprintf("%s_f%d", pn, i);
    step(s, xprintf("%s = fuse(%s, %s.%s)", f, fused, pn, pad->axes[i]->name));
    fused = f;
  }
  step(s, xprintf("parallel(%s)", fused));
  int64_t c = extent(pad, d - 1);
  if (d >= 2 && lanes > 1 && c % lanes == 0) {
    step(s, xprintf("%s_c0, %s_c1 = split(%s.%s, %d)", pn, pn, pn, pad->axes[d - 1]->name, lanes));
    step(s, xprintf("vectorize(%s_c1)", pn));
  }
}

/* A kernel with less work than this runs on one thread: handing it to the pool (waking
 * the workers, their chunks' claims, waiting for the last) costs about a microsecond,
 * more than 64 K multiply-adds take on one core. An unrolled LSTM's cells (256 x 4
 * gates) and slices made its run 1.3x slower in parallel (bench/RESULTS.md, 2026-11-28). */
#define SERIAL_WORK 65536.0

/* The work of K in multiply-adds: each stage's output elements times its reductions'
 * extents, an elementwise stage's elements counted 16 times (its arithmetic per element,
 * a transcendental function's polynomial, against one vector lane of a product's FMA). */
static double kernel_work(const Kernel *k) {
  double w = 0;
  for (int i = 0; i < k->nops; i++) {
    const Op *op = k->ops[i];
    double e = op->nred ? 1 : 16;
    int64_t v;
    for (int d = 0; d < op->ndim; d++) e *= extent(op, d) ? (double)extent(op, d) : 1;
    for (int r = 0; r < op->nred; r++) e *= ir_is_const(op->rext[r], &v) ? (double)v : 1;
    w += e;
  }
  return w;
}

/* Does P fold a whole tensor into at most 4 values (a sum, max or min over at least 4096
 * elements), its last reduction axis of constant extent a multiple of L and the last index
 * of the loads of the tensor it reads (contiguous)? */
static bool folds_tensor(const Op *p, int L) {
  if (!p->nred || p->rcond || p->init || p->scatter || p->is_scan) return false;
  if (p->rop != RED_SUM && p->rop != RED_MAX && p->rop != RED_MIN) return false;
  int64_t out = 1, red = 1, e = 0;
  for (int a = 0; a < p->ndim; a++) {
    if (!extent(p, a)) return false;
    out *= extent(p, a);
  }
  for (int r = 0; r < p->nred; r++) {
    if (!ir_is_const(p->rext[r], &e) || e <= 0) return false;
    red *= e;
  }
  const Expr *v = p->value;
  while (v && v->kind != E_LOAD) v = v->kind == E_CAST || v->kind == E_UN ? v->a : NULL;
  return out <= 4 && red >= 4096 && e % L == 0 && v && v->nargs > 0 && loads_last(p->value, v->buf, p->raxes[p->nred - 1]);
}

/* A kernel whose reductions fold whole tensors into a few values (DynamicQuantizeLinear's
 * minimum and maximum): each such statistic by vectors, L partial results over the tensor
 * in steps of L along its contiguous last axis, then the L lanes combined (exact for max
 * and min). NULL when K has none. (Without it they ran serial and scalar: a quantize_dynamic
 * resnet18's 56 x 56 x 64 minimum and maximum took 0.22 ms, 0.015 by vectors.) */
static char *totals_steps(Kernel *k) {
  int L = target_cpu(NULL)->lanes;
  char *s = NULL;
  for (int i = 0; i < k->nops; i++) {
    Op *p = k->ops[i];
    if (!folds_tensor(p, L)) continue;
    const char *pn = p->name, *r = p->raxes[p->nred - 1]->name;
    if (!s) s = xstrdup("");
    statistic_steps(&s, pn, r, L, NULL);
  }
  return s;
}

/* STEPS without their parallel loops. */
/* A transpose: a kernel of one statement, the output a permutation of an input (every
 * index a plain output axis) whose contiguous (last) index is an output axis Q other than
 * the output's last, P. Blocks of L x L elements over P and Q, one of them vectorized and
 * the other unrolled, so that LLVM turns the block around in registers: vectorized, Q's
 * loads are whole vectors and its stores go a stride apart in the output, P's stores whole
 * and its loads a stride apart in the input; the smaller stride wins (a channel count C
 * rather than a plane H x W), P on a tie (strided loads cost less than strided stores: a
 * 1024 x 1024 transpose 0.64 ms, 1.3 with Q vectorized). The product default vectorized P always, its loads H x W
 * apart: NCHW -> NHWC of 64 x 128 x 128 took 1.5 ms, 0.27 in blocks; NHWC -> NCHW 1.1 ->
 * 0.24 (AVX-512, 16 x 16; AVX2 code, 8 x 8: 0.23 and 0.18). The unrolled axis need not
 * divide by L when the vectorized one does (its last block shorter): a segmentation's 21
 * classes, 224 x 224 x 21 to NCHW, 0.57 -> 0.27 ms (AVX2 code 0.47 -> 0.17). The other
 * indices may be expressions, and an elementwise stage may read the transpose (inlined):
 * s3d's depth slices back to NCDHW, `X[n * 16 + z, y, x, c]` with its Relu, 52 -> 7.4 ms;
 * so may P's own (in the input's index nearest the last), and the load may be guarded
 * (`zin >= 0 && zin < D ? X[..] : 0`): s3d's depth slices of NCDHW into channels
 * (`X[b / 8, c % 64, zin, h, w]`, zin from b and c / 64), the guard uniform in a block.
 * The load's last index may be Q % W (a plane read as rows of W: `X[n, c, z, q / W, q %
 * W]`, a temporal convolution's input channels last), Q's vectors then within a row.
 * NULL when K is not one, or the vectorized axis does not divide by 4 lanes, or the
 * unrolled one is shorter than L (an image's 3 channels). */
static char *transpose_steps(Kernel *k, Op *o) {
  int d = o->ndim, L = target_cpu(NULL)->lanes, q = -1, at[NET_MAX_DIMS];
  /* the transposing stage T: the output, or the one stage the output (elementwise) reads
   * at its own axes, inlined into it (a layout change with its Relu fused: s3d's) */
  Op *t = o;
  if (k->nops == 2) {
    t = k->ops[0] == o ? k->ops[1] : k->ops[0];
    if (o->nred || t->ndim != d || !loads_prefix(o->value, t->out, o->axes, d)) return NULL;
  }
  const Expr *v = t->value;
  /* a guarded load (`inside ? X[...] : 0`, a padded window: s3d's depth slices) as the load */
  if (v && v->kind == E_SELECT && v->b->kind == E_LOAD && (v->c->kind == E_FLOAT || v->c->kind == E_INT)) v = v->b;
  if (k->nops > 2 || d < 2 || d > NET_MAX_DIMS || t->nred || t->scatter || t->is_scan || o->scatter || o->is_scan || !v ||
      v->kind != E_LOAD || v->nargs < 1 || v->nargs > NET_MAX_DIMS)
    return NULL;
  int n = v->nargs, jp = -1;
  bool seen[NET_MAX_DIMS] = {false};
  int64_t wrap = 0; /* the last index Q % WRAP (Q / WRAP the one before: a plane's rows of W) */
  for (int j = 0; j < n; j++) { /* at[j]: the output axis of the load's index j, or -1 (an expression) */
    const Expr *ix = v->args[j];
    at[j] = -1;
    if (j == n - 1 && ix->kind == E_BIN && ix->op == OP_MOD && ix->a->kind == E_VAR && ir_is_const(ix->b, &wrap) && wrap > 0)
      ix = ix->a;
    for (int i = 0; ix->kind == E_VAR && i < d; i++)
      if (t->axes[i] == ix->var) at[j] = i;
    if (at[j] >= 0 && seen[at[j]]) return NULL;
    if (at[j] >= 0) seen[at[j]] = true;
    if (j < n - 1 && ir_uses_var(ix, t->axes[d - 1])) jp = j; /* P's innermost index (P itself, or P % 64) */
  }
  q = at[n - 1];
  int p = d - 1;
  if (q < 0 || q == p || jp < 0) return NULL;
  int64_t out_q = 1, in_p = 1, e; /* Q's stride in the output, P's in the input */
  for (int i = q + 1; i < d; i++) out_q *= extent(o, i);
  for (int j = n - 1; j > jp; j--) {
    if (!ir_is_const(v->buf->shape[j], &e)) return NULL;
    in_p *= e;
  }
  int vec = out_q < in_p ? q : p, unr = vec == q ? p : q;
  int64_t ev = extent(o, vec), eu = extent(o, unr);
  if (wrap && vec == q) ev = wrap; /* Q's vectors must not cross a row of WRAP */
  int full = L;
  while (L >= 4 && (ev % L || eu % L)) L /= 2;
  if (L < 4) { /* the unrolled axis need not divide (its last block shorter): 21 classes */
    for (L = full; L >= 4 && ev % L;) L /= 2;
    if (L < 4 || eu < L) return NULL;
  }
  if (wrap && extent(o, q) % wrap) return NULL;
  const char *on = o->name, *ax[NET_MAX_DIMS + 1];
  char *s = xstrdup(""), *order = xstrdup(""), *par = NULL;
  if (t != o) step(&s, xprintf("compute_inline(%s)", t->name));
  for (int i = 0; i < d; i++) ax[i] = xprintf("%s.%s", on, o->axes[i]->name);
  bool rows = wrap && vec == q && extent(o, q) > wrap; /* Q as rows of WRAP first: the vectors' index Q % WRAP then a plain one */
  if (rows) {
    step(&s, xprintf("%s_tr0, %s_tr1 = split(%s, %lld)", on, on, ax[q], (long long)wrap));
    ax[q] = xprintf("%s_tr1", on);
  }
  step(&s, xprintf("%s_tv0, %s_tv1 = split(%s, %d)", on, on, ax[vec], L));
  step(&s, xprintf("%s_tu0, %s_tu1 = split(%s, %d)", on, on, ax[unr], L));
  for (int i = 0; i < d; i++) {
    if (i != p && i != q) order = xprintf("%s%s, ", order, ax[i]);
    if (i == q && rows) order = xprintf("%s%s_tr0, ", order, on);
  }
  /* the two block loops in the output's order (Q before P, the last), then the block */
  step(&s, xprintf(vec == q ? "reorder(%s%s_tv0, %s_tu0, %s_tu1, %s_tv1)" : "reorder(%s%s_tu0, %s_tv0, %s_tu1, %s_tv1)", order, on,
                   on, on, on));
  for (int i = 0; i <= d; i++) { /* the axes outside the block and its first loop, fused: the parallel loop */
    if (i == p || (i == q && !rows)) continue;
    const char *a = i == q ? xprintf("%s_tr0", on) : i < d ? ax[i] : xprintf("%s_%s", on, vec == q ? "tv0" : "tu0");
    if (!par) par = xstrdup(a);
    else {
      const char *f = xprintf("%s_tf%d", on, i);
      step(&s, xprintf("%s = fuse(%s, %s)", f, par, a));
      par = xstrdup(f);
    }
  }
  step(&s, xprintf("parallel(%s)", par));
  step(&s, xprintf("unroll(%s_tu1)", on));
  step(&s, xprintf("vectorize(%s_tv1)", on));
  return s;
}

/* Any other kernel: each stage where the language puts it (at the root, in order), its
 * leading axes fused until they give every core 4 iterations (or all are fused, but the
 * last of an elementwise stage that is vectorized) and run in parallel, an elementwise
 * stage's last axis by vectors where it reads in that order. Every iteration of a stage's
 * data-parallel axes writes its own elements, so this holds for any stage but a scatter, a
 * scan or an extern call, which stay serial.
 * (Such kernels ran as the bare loop nest, serial: a mean over the first axis read back at
 * every element, r3d_18's mean over a clip's depth, height and width, a user's kernel of a
 * form no default knows.) NULL when no stage gains a step. */
static char *root_steps(Kernel *k) {
  const CpuInfo *cpu = target_cpu(NULL);
  int L = cpu->lanes;
  char *s = xstrdup("");
  for (int i = 0; i < k->nops; i++) {
    Op *p = k->ops[i];
    if (p->scatter || p->is_scan || p->ext || p->ndim < 1) continue;
    bool known = true;
    for (int d = 0; d < p->ndim; d++) known &= extent(p, d) > 0;
    if (!known) continue;
    const char *pn = p->name, *lead = xprintf("%s.%s", pn, p->axes[0]->name);
    int64_t iters = extent(p, 0);
    int fused = 1;
    /* a reduction's last data axis may join (its reductions stay inside); an elementwise
     * stage keeps its last for the vectors when it is long enough */
    bool vec = !p->nred && extent(p, p->ndim - 1) >= L && !reads_across(p->value, p->axes[p->ndim - 1]);
    while (iters < 4 * (int64_t)cpu->cores && fused < p->ndim - (vec ? 1 : 0)) {
      const char *f = xprintf("%s_g%d", pn, fused);
      step(&s, xprintf("%s = fuse(%s, %s.%s)", f, lead, pn, p->axes[fused]->name));
      iters *= extent(p, fused++);
      lead = f;
    }
    if (iters > 1) step(&s, xprintf("parallel(%s)", lead));
    if (vec) vector_steps(&s, pn, p->axes[p->ndim - 1]->name, L);
  }
  return *s ? s : NULL;
}

static char *serial(const char *steps) {
  char *s = xstrdup("");
  for (const char *p = steps; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    if (strncmp(p, "parallel(", 9) != 0) s = xprintf("%s%.*s", s, (int)len, p);
    p += len;
  }
  return s;
}

/* Does some load in E read its buffer along V (V its last index: contiguous)? */
static bool loads_along(const Expr *e, const IrVar *v) {
  if (!e) return false;
  if (e->kind == E_LOAD && e->nargs > 0 && e->args[e->nargs - 1]->kind == E_VAR && e->args[e->nargs - 1]->var == v) return true;
  for (int i = 0; i < e->nargs; i++)
    if (loads_along(e->args[i], v)) return true;
  return loads_along(e->a, v) || loads_along(e->b, v) || loads_along(e->c, v);
}

/* Dot products: a kernel of one sum over an axis its operands hold contiguously, whose
 * output is too narrow for vectors (a matrix times a vector: MoE experts gathered per
 * token, [64, 512, 128] by [64, 128, 1]). One parallel loop over the outputs (their axes
 * fused), each a dot product L lanes at a time (rfactor, as a row's statistic). The
 * product defaults vectorize over the output's last axis, of extent 1 here: serial scalar
 * dot products, 1.34 ms where these take 0.13 (in cache). NULL when K is not of that form. */
static char *dot_steps(Kernel *k, Op *o) {
  int L = target_cpu(NULL)->lanes, d = o->ndim;
  if (k->nops != 1 || d < 1 || !plain_reduction(o) || o->rop != RED_SUM || !statistic_lanes(o, L)) return NULL;
  if (extent(o, d - 1) >= L || !loads_along(o->value, o->raxes[0])) return NULL;
  /* an output axis some operand holds contiguously (a convolution's 8 channels): the
   * product defaults' vectors of it */
  if (extent(o, d - 1) > 1 && loads_along(o->value, o->axes[d - 1])) return NULL;
  for (int a = 0; a < d; a++)
    if (!extent(o, a)) return NULL;
  const char *on = o->name, *r = o->raxes[0]->name;
  char *s = xstrdup("");
  step(&s, xprintf("%s_ko, %s_kv = split(%s.%s, %d)", on, on, on, r, L));
  step(&s, xprintf("%s_rf = rfactor(%s, %s_kv)", on, on, on));
  const char *row = parallel_rows(&s, o, d);
  step(&s, xprintf("compute_at(%s_rf, %s, %s)", on, on, row));
  step(&s, xprintf("reorder(%s_rf.%s_ko, %s_rf.%s_kv)", on, on, on, on));
  step(&s, xprintf("vectorize(%s_rf.%s_kv)", on, on));
  return s;
}

/* A product into one output channel (a depth or mask head: 32 channels to 1 by a 3 x 3
 * filter at 224 x 224), whose innermost reduction axis its operands hold contiguously:
 * the product defaults vectorize the output channels, one here, and computed a padded patch
 * per output point (GLPN's head: 8.6 ms). The padding whole at the root, in parallel; per
 * output point its sum L lanes of that axis at a time (rfactor), in a parallel loop over
 * the output's rows; the other elementwise stages inlined (0.66 ms). NULL when K is not of
 * that form. */
static char *narrow_steps(Kernel *k, Op *o) {
  int L = target_cpu(NULL)->lanes, d = o->ndim;
  bool ok;
  Op *a = find_anchor(k, o, &ok);
  if (!ok || !a || d < 3 || a->ndim != d || extent(o, d - 1) != 1) return NULL;
  if (a->rop != RED_SUM || a->rcond || a->init || a->scatter || a->is_scan || a->ext || a->nred < 1) return NULL;
  int64_t e = 0;
  for (int i = 0; i < a->nred; i++)
    if (!ir_is_const(a->rext[i], &e)) return NULL;
  const IrVar *ci = a->raxes[a->nred - 1]; /* E: its extent */
  if (e < L || !loads_along(a->value, ci)) return NULL;
  for (int x = 0; x < d; x++)
    if (!extent(o, x) || extent(a, x) != extent(o, x)) return NULL;
  char *s = xstrdup("");
  Op *pad = NULL;
  for (int i = 0; i < k->nops; i++) {
    Op *p = k->ops[i];
    if (p == o || p == a) continue;
    if (!pad && is_padding(p, a) && p->ndim >= 2) pad = p;
    else if (p->nred == 0) step(&s, xprintf("compute_inline(%s)", p->name));
    else return NULL;
  }
  if (pad) {
    step(&s, xprintf("%s_f = fuse(%s.%s, %s.%s)", pad->name, pad->name, pad->axes[0]->name, pad->name, pad->axes[1]->name));
    step(&s, xprintf("parallel(%s_f)", pad->name));
  }
  const char *an = a->name, *on = o->name;
  step(&s, xprintf("%s_ko, %s_kv = split(%s.%s, %d)", an, an, an, ci->name, L));
  step(&s, xprintf("%s_rf = rfactor(%s, %s_kv)", an, an, an));
  parallel_rows(&s, o, d - 2);
  const char *at = xprintf("%s, %s.%s", on, on, o->axes[d - 2]->name);
  if (a != o) step(&s, xprintf("compute_at(%s, %s)", an, at));
  step(&s, xprintf("compute_at(%s_rf, %s)", an, at));
  step(&s, xprintf("vectorize(%s_rf.%s_kv)", an, an));
  return s;
}

static char *default_steps(Kernel *k);

bool net_threads_pay(const Kernel *k) {
  return kernel_work(k) >= SERIAL_WORK;
}

char *net_default_steps(Kernel *k) {
  char *s = default_steps(k);
  if (!s) s = root_steps(k);
  return s && !net_threads_pay(k) ? serial(s) : s;
}

static char *default_steps(Kernel *k) {
  if (k->noutputs != 1 || !k->outputs[0]->op) return NULL;
  char *wp = winograd_product_steps(k);
  if (wp) return wp;
  Op *o = k->outputs[0]->op;
  char *tr = transpose_steps(k, o);
  if (tr) return tr;
  char *dot = dot_steps(k, o);
  if (dot) return dot;
  char *narrow = narrow_steps(k, o);
  if (narrow) return narrow;
  bool ok;
  Op *a = find_anchor(k, o, &ok);
  if (!ok) {
    char *att = attention_steps(k, o);
    if (att) return att;
    char *pooled = pooled_steps(k, o, a), *rows = pooled ? NULL : rowwise_steps(k, o);
    return pooled ? pooled : rows ? rows : totals_steps(k);
  }
  if (o->ndim < 1) return NULL;
  for (int d = 0; d < o->ndim; d++)
    if (!extent(o, d)) return NULL;
  char *s = xstrdup("");
  Op *pad = NULL;
  int64_t bytes;
  /* a channel-wise anchor (depthwise) reads its padding inlined: a padded patch per tile
   * holds only the tile's channels, and copying it cost more than the border tests it saves
   * (mobilenet's 112 x 112 x 32 and 112 x 112 x 64 / 2 depthwise layers, AVX2: 1.5-1.7x) */
  bool cw = a && a != o && channel_wise(a, o, 1, &bytes);
  for (int i = 0; i < k->nops; i++) {
    if (k->ops[i] == o || k->ops[i] == a) continue;
    if (!pad && a && !cw && is_padding(k->ops[i], a)) pad = k->ops[i];
    else step(&s, xprintf("compute_inline(%s)", k->ops[i]->name));
  }
  /* the micro-kernel of the CPU (target_cpu): e.g. 4 rows x 16 channels on AVX2 when the
   * rows divide by 4 (8 of its 16 ymm registers accumulate), 14 x 32 on AVX-512 (7 x 64 for 7
   * rows), 8 x 12 on NEON */
  int64_t v, tw, th = 1;
  int r = row_axis(o);
  /* rows of a second axis too (tile_2d) when the anchor is a reduction computed per tile
   * that reads its channel vectors independently of that axis (not a batched product) */
  bool two = a && !cw && a->nred > 0 && !a->scatter && !a->is_scan && r >= 1 &&
             shared_along(a->value, a->axes[r - 1], a->axes[a->ndim - 1]);
  bool memory = register_tile(target_cpu(NULL), two ? extent(o, r - 1) : 0, o->ndim >= 2 ? extent(o, r) : 0,
                              extent(o, o->ndim - 1), two ? &th : NULL, &tw, &v);
  /* no anchor (elementwise), no transposed read and an output beyond a core's L2: no rows
   * in the tile, which holds no accumulators; each row is read and written in order (a
   * tile of 14 rows x 32 lanes streamed 14 rows at once: exp of 4 x 1500 x 1500, 1
   * thread, 12.4 ms against 2.7; a multiply 5.6 against 2.7). Smaller outputs keep the
   * rows, which give each parallel iteration more work (vit's 197 x 768 layout changes:
   * 5-40% slower without), and so does a transposed read (vit's 12 x 64 x 197 multiply
   * of a transpose: 0.038 ms, 0.05 without). */
  if (!a && (double)numel(o->out) * 4 > (double)target_cpu(NULL)->l2 && reads_in_order(k)) tw = 1;
  if (pad && th > 1 && flops_per_element(a, o, pad) >= 32) {
    /* a tile of several rows of both axes would meet the border in most of its tiles, and
     * tails.c's unguarded version would not serve them: the padding is computed first,
     * whole. The copy costs a load and a store per padded element; measured in AVX2 code
     * against the padding inlined, it paid at 55 FLOPs of the convolution per element (14 x
     * 14 x 1024 -> 7 x 7 x 16: 0.13-0.20 against 0.25 ms), 220 (x 32 -> x 64: 0.016 against
     * 0.025; x 256 -> x 64: 0.13 against 0.22) and 1764 (resnet's x 256 -> x 512: 0.52
     * against 0.89). Below 32 (fewer output channels than any such tile holds) the copy
     * would rival the convolution: inlined. */
    pad_root(&s, pad, target_cpu(NULL)->lanes);
    pad = NULL;
  } else if (pad && (th > 1 || r != o->ndim - 2 || patch_bytes(pad, a, o, tw) * 2 > target_cpu(NULL)->l1d)) {
    step(&s, xprintf("compute_inline(%s)", pad->name));
    pad = NULL;
  }
  /* an anchor that is the output (a product with nothing after it: vit's attention)
   * accumulates its tile in a local copy (cache_write), whose registers LLVM keeps over
   * the reduction; accumulated in the output itself, every step of k loaded and stored the
   * tile (vit's 12 x 197 x 197 by 197 x 64: 0.33 -> 0.12 ms) */
  Op acc;
  bool own = a == o;
  if (own && a->nred > 0 && !a->scatter && !a->is_scan && (tw > 1 || v > 1)) {
    acc = *a;
    acc.name = xprintf("%s_acc", o->name);
    step(&s, xprintf("%s = cache_write(%s, local)", acc.name, o->name));
    a = &acc;
  }
  char *tiles = xstrdup("");
  const char *at = NULL;
  const char *par = tile_output(&tiles, o, weights_dominate(k), cw ? a : NULL, pad && a && !own, v, th, tw, !a, &at);
  s = xprintf("%s%s", s, tiles);
  if (pad) step(&s, xprintf("compute_at(%s, %s, %s)", pad->name, o->name, par));
  if (a) schedule_anchor(&s, a, o, a == o ? NULL : at ? at : par, v, th, tw, !memory);
  return s;
}

int64_t net_pack_block(const NetTensor *out) {
  int64_t th, tw, v, c = out->shape[out->ndim - 1];
  const CpuInfo *cpu = target_cpu(NULL);
  if (out->ndim < 2) return 0;
  int r = row_dim(out->ndim, out->shape);
  register_tile(cpu, r >= 1 ? out->shape[r - 1] : 0, out->shape[r], c, &th, &tw, &v);
  if (v < cpu->lanes || v % cpu->lanes || c % v || c == v) return 0;
  return v;
}

/* An environment switch NAME: on unless set to "0" (before/after measurements). */
static bool env_on(const char *name) {
  const char *env = getenv(name);
  return !env || strcmp(env, "0") != 0;
}

NetRewrites net_rewrites(Target t) {
  bool cpu = backend_for(t)->device == DEVICE_CPU;
  return (NetRewrites){.winograd = cpu && env_on("TEXC_NET_WINOGRAD"),
                       .pack_block = cpu && env_on("TEXC_NET_PACK") ? net_pack_block : NULL,
                       .int8 = cpu && target_cpu(NULL)->dot_lanes > 0 && env_on("TEXC_NET_INT8"),
                       .attention = cpu && env_on("TEXC_NET_ATTENTION") ? net_attention : NULL};
}
