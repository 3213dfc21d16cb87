/* onnx_attention.c — the transformer operators of opset 23: Attention (scaled dot-product
 * attention: grouped-query heads, 3-D or 4-D inputs, boolean or float masks, causal
 * masking, a key / value cache, a soft cap), RotaryEmbedding, TensorScatter (24: a cache's
 * update) and LinearAttention (27: recurrent linear attention, unrolled); onnx_attention_op is
 * their entry from the table (onnx_ops.c's helpers; RMSNormalization is with the other
 * normalizations in onnx_nn.c).
 *
 * Attention becomes the kernels an exporter's MatMul, Softmax, MatMul chain imports to —
 * the scores (scale, cap and mask as their elementwise tail), a softmax, the product by
 * the values — so that a CPU network computes them as one kernel, a block of rows at a
 * time (front/network.c merge_attention); the keys are laid out [.., D, T] first, so that
 * the scores' vectors run along the keys. */
#include "onnx/onnx_internal.h"

#include <math.h>
#include <string.h>

/* -inf in kernel text: an f32 literal beyond FLT_MAX (as imp_flit writes it) */
#define NEG_INF "(-1.0e39)"

/* A kernel named BASE, `(PARAMS) -> Y: f32[OUT] { BODY }`, called on ARGS into a new network
 * tensor named after HINT; that tensor. */
static const char *emit(Imp *I, const char *base, const char *params, const char *args, const char *out, const char *body,
                        const char *hint) {
  const char *kn = imp_kernel(I, base, xprintf("(%s) -> Y: f32[%s] {\n%s\n}", params, out, body));
  const char *t = imp_name(I, hint);
  imp_call(I, t, kn, args);
  return t;
}

/* Integer input V (a constant, made an f32 weight, or run-time integers held either way) as
 * kernel parameter NAME, appended to *PARAMS and *ARGS; the i64 text of its read at IDX. */
static char *int_param(Imp *I, Val *v, const char *name, const char *idx, char **params, char **args) {
  *params = xprintf("%s, %s: %s", *params, name, imp_ty(v));
  *args = xprintf("%s, %s", *args, imp_tensor(I, v));
  return v->c ? xprintf("i64(%s[%s])", name, idx) : imp_int_at(v, name, idx);
}

/* The heads, lengths and sizes of an Attention node's inputs. */
typedef struct {
  int rank;          /* 3: [B, S, H x D]; 4: [B, H, S, D] */
  int64_t b, hq, hkv, sq, skv, d, dv;
  int64_t past, t;   /* cached keys before these, all keys (past + skv) */
} Heads;

/* Element (b, h, j, d) of K or V (an input of rank R, head size HD) in kernel text. */
static char *at4(const char *name, int r, int64_t hd, const char *b, const char *h, const char *j, const char *d) {
  return r == 4 ? xprintf("%s[%s, %s, %s, %s]", name, b, h, j, d) : xprintf("%s[%s, %s, %s * %lld + %s]", name, b, j, h, (long long)hd, d);
}

static bool attention_heads(Imp *I, const Val *q, const Val *k, const Val *v, const Val *pk, const Val *pv, Heads *h) {
  int r = h->rank = q->ndim;
  if (r != 3 && r != 4) return imp_error(I, "Q has rank %d (3: [B, S, H x D], or 4: [B, H, S, D])", r);
  if (k->ndim != r || v->ndim != r) return imp_error(I, "Q, K and V have ranks %d, %d and %d", r, k->ndim, v->ndim);
  h->b = q->shape[0];
  if (r == 3) {
    h->hq = imp_attr_i(I, "q_num_heads", 0), h->hkv = imp_attr_i(I, "kv_num_heads", 0);
    if (h->hq < 1 || h->hkv < 1) return imp_error(I, "3-D inputs need q_num_heads and kv_num_heads");
    if (q->shape[2] % h->hq || k->shape[2] % h->hkv || v->shape[2] % h->hkv)
      return imp_error(I, "the hidden sizes %lld, %lld, %lld do not divide by the heads %lld, %lld", (long long)q->shape[2],
                       (long long)k->shape[2], (long long)v->shape[2], (long long)h->hq, (long long)h->hkv);
    h->sq = q->shape[1], h->skv = k->shape[1], h->d = q->shape[2] / h->hq, h->dv = v->shape[2] / h->hkv;
    if (k->shape[2] / h->hkv != h->d) return imp_error(I, "K's head size %lld is not Q's %lld", (long long)(k->shape[2] / h->hkv), (long long)h->d);
  } else {
    if (imp_attr(I, "q_num_heads") || imp_attr(I, "kv_num_heads")) return imp_error(I, "q_num_heads and kv_num_heads are for 3-D inputs");
    h->hq = q->shape[1], h->hkv = k->shape[1], h->sq = q->shape[2], h->skv = k->shape[2], h->d = q->shape[3], h->dv = v->shape[3];
    if (k->shape[3] != h->d) return imp_error(I, "K's head size %lld is not Q's %lld", (long long)k->shape[3], (long long)h->d);
    if (v->shape[1] != h->hkv) return imp_error(I, "V has %lld heads, K %lld", (long long)v->shape[1], (long long)h->hkv);
  }
  if (k->shape[0] != h->b || v->shape[0] != h->b) return imp_error(I, "Q, K and V have batches %lld, %lld and %lld", (long long)h->b,
                                                                   (long long)k->shape[0], (long long)v->shape[0]);
  if (v->shape[r - 2] != h->skv) return imp_error(I, "V has %lld positions, K %lld", (long long)v->shape[r - 2], (long long)h->skv);
  if (h->hq % h->hkv) return imp_error(I, "%lld query heads are not a multiple of %lld key heads", (long long)h->hq, (long long)h->hkv);
  h->past = 0;
  if (pk) {
    int64_t want_k[4] = {h->b, h->hkv, pk->ndim == 4 ? pk->shape[2] : 0, h->d}, want_v[4] = {h->b, h->hkv, want_k[2], h->dv};
    if (pk->ndim != 4 || pv->ndim != 4 || memcmp(pk->shape, want_k, sizeof want_k) || memcmp(pv->shape, want_v, sizeof want_v))
      return imp_error(I, "past_key and past_value must be [%lld, %lld, P, %lld] and [%lld, %lld, P, %lld]", (long long)h->b,
                       (long long)h->hkv, (long long)h->d, (long long)h->b, (long long)h->hkv, (long long)h->dv);
    h->past = pk->shape[2];
  }
  h->t = h->past + h->skv;
  return true;
}

/* Keys or values with the cache before them, [B, Hkv, T, HD] (TRANSPOSE: keys as [B, Hkv,
 * HD, T]) from X (rank R) and PAST (NULL: none): the tensor, named after HINT. */
static const char *cache_cat(Imp *I, Val *x, Val *past, const Heads *h, int64_t hd, bool transpose, const char *hint) {
  char *src = h->past ? xprintf("j < %lld ? P[b, h, j, e] : %s", (long long)h->past, at4("X", h->rank, hd, "b", "h", xprintf("j - %lld", (long long)h->past), "e"))
                      : at4("X", h->rank, hd, "b", "h", "j", "e");
  char *params = xprintf("X: %s", imp_ty(x)), *args = xstrdup(imp_tensor(I, x));
  if (past) params = xprintf("%s, P: %s", params, imp_ty(past)), args = xprintf("%s, %s", args, imp_tensor(I, past));
  char *out = transpose ? xprintf("%lld, %lld, %lld, %lld", (long long)h->b, (long long)h->hkv, (long long)hd, (long long)h->t)
                        : xprintf("%lld, %lld, %lld, %lld", (long long)h->b, (long long)h->hkv, (long long)h->t, (long long)hd);
  char *lhs = transpose ? "Y[b, h, e, j]" : "Y[b, h, j, e]";
  return emit(I, transpose ? "attention_keys" : "attention_cache", params, args, out, xprintf("  %s = %s", lhs, src), hint);
}

/* Attention (opset 23), as ONNX's reference computes it: the scores Q K^T times `scale`
 * (default 1 / sqrt(D)), capped (softcap c: c tanh(s / c)), the mask added (float) or
 * applied (boolean: false is -inf; a mask shorter than the keys masks the rest), causal
 * masking (key j for query i where j <= i + past), a softmax over the keys (a row with no
 * key left is zeros), times V. Query head h reads key head h / (Hq / Hkv) (grouped-query).
 * nonpad_kv_seqlen (opset 24) masks each batch's keys from its count, whose causal frontier is
 * then that count less the queries; left / right_window_size (25) keep the keys within
 * that far of the query's frontier.
 * Outputs 1 and 2: the keys and values with the cache before them; 3 the scores or weights
 * (qk_matmul_output_mode), which then exist whole (the network keeps them apart). */
static bool op_attention(Imp *I) {
  if (!imp_attrs_known(I, "is_causal,kv_num_heads,q_num_heads,qk_matmul_output_mode,scale,softcap,softmax_precision,"
                          "left_window_size,right_window_size"))
    return false;
  int64_t mode = imp_attr_i(I, "qk_matmul_output_mode", 0);
  bool qk_out = I->node->n_output > 3 && *I->node->output[3];
  if (qk_out && (mode < 0 || mode > 3)) return imp_error(I, "qk_matmul_output_mode %lld (0 to 3)", (long long)mode);
  Val *q = imp_float_in(I, 0), *k = q ? imp_float_in(I, 1) : NULL, *v = k ? imp_float_in(I, 2) : NULL;
  if (!v) return false;
  Val *mask = imp_in(I, 3), *pk = imp_in(I, 4), *pv = imp_in(I, 5);
  if (!pk != !pv) return imp_error(I, "past_key and past_value must be given together");
  if (pk && (!(pk = imp_float_in(I, 4)) || !(pv = imp_float_in(I, 5)))) return false;
  Val *np = imp_in(I, 6); /* nonpad_kv_seqlen (opset 24): the keys of each batch that count */
  if (np && pk) return imp_error(I, "nonpad_kv_seqlen cannot be combined with past_key and past_value");
  if (np && (np->ndim != 1 || (!np->c && !imp_run_time_int(np) && !np->fint))) return imp_error(I, "nonpad_kv_seqlen must be a vector of integers");
  bool bool_mask = mask && mask->dtype == OT_BOOL;
  if (mask && !bool_mask && !(mask = imp_float_in(I, 3))) return false;
  Heads h;
  if (!attention_heads(I, q, k, v, pk, pv, &h)) return false;
  double scale = imp_attr(I, "scale") ? imp_attr_f(I, "scale", 1.0) : 1.0 / sqrt((double)h.d);
  double cap = imp_attr_f(I, "softcap", 0.0);
  bool causal = imp_attr_i(I, "is_causal", 0) != 0;
  int64_t g = h.hq / h.hkv, tm = 0;
  if (mask) {
    if (mask->ndim < 1 || mask->ndim > 4) return imp_error(I, "the mask has rank %d (at most 4)", mask->ndim);
    int64_t full[4] = {h.b, h.hq, h.sq, h.t};
    tm = mask->shape[mask->ndim - 1];
    if (tm > h.t) return imp_error(I, "the mask covers %lld keys of %lld", (long long)tm, (long long)h.t);
    for (int d = 0; d < mask->ndim - 1; d++) {
      int64_t want = full[4 - mask->ndim + d];
      if (mask->shape[d] != 1 && mask->shape[d] != want)
        return imp_error(I, "the mask's shape does not broadcast to [%lld, %lld, %lld, %lld]", (long long)h.b, (long long)h.hq,
                         (long long)h.sq, (long long)h.t);
    }
  }
  char *dims = xprintf("%lld, %lld, %lld, %lld", (long long)h.b, (long long)h.hq, (long long)h.sq, (long long)h.t);
  const char *kvh = g == 1 ? "h" : xprintf("h / %lld", (long long)g);
  /* the keys [B, Hkv, D, T], the values [B, Hkv, T, Dv] (4-D values without a cache: as given) */
  const char *kt = cache_cat(I, k, pk, &h, h.d, true, xprintf("%s_t", k->name));
  bool own_v = h.rank == 3 || pv;
  const char *vt = own_v ? cache_cat(I, v, pv, &h, h.dv, false, xprintf("%s_heads", v->name)) : imp_tensor(I, v);
  for (int o = 1; o < 3; o++) { /* present_key, present_value */
    if (I->node->n_output <= (size_t)o || !*I->node->output[o]) continue;
    int64_t os[4] = {h.b, h.hkv, h.t, o == 1 ? h.d : h.dv};
    Val *pres = imp_net_out(I, o, 4, os);
    const char *src = o == 1 ? "X[b, h, e, j]" : "X[b, h, j, e]";
    const char *kn = imp_kernel(I, "attention_present", xprintf("(X: f32[%s]) -> Y: %s {\n  Y[b, h, j, e] = %s\n}",
                                                                o == 1 ? xprintf("%lld, %lld, %lld, %lld", (long long)h.b, (long long)h.hkv, (long long)h.d, (long long)h.t)
                                                                       : xprintf("%lld, %lld, %lld, %lld", (long long)h.b, (long long)h.hkv, (long long)h.t, (long long)h.dv),
                                                                imp_ty(pres), src));
    imp_call(I, pres->tex, kn, o == 1 ? kt : vt);
  }
  /* the scores */
  char *qat = h.rank == 4 ? "Q[b, h, i, d]" : xprintf("Q[b, i, h * %lld + d]", (long long)h.d);
  char *kty = xprintf("f32[%lld, %lld, %lld, %lld]", (long long)h.b, (long long)h.hkv, (long long)h.d, (long long)h.t);
  /* scaled on the queries (fewer than the scores; the reference scales Q and K by the root
   * of the scale, the same within rounding), so that nothing but the masks is left between
   * the scores and their softmax */
  const char *tq = imp_tensor(I, q);
  if (scale != 1.0) {
    char *all = imp_idx("i", h.rank);
    tq = emit(I, "attention_scale", xprintf("X: %s", imp_ty(q)), tq, imp_dims_text(q->shape, q->ndim),
              xprintf("  Y[%s] = X[%s] * %s", all, all, imp_flit((float)scale)), xprintf("%s_scaled", q->name));
  }
  const char *s = emit(I, "attention_scores", xprintf("Q: %s, K: %s", imp_ty(q), kty), xprintf("%s, %s", tq, kt), dims,
                       xprintf("  Y[b, h, i, j] += %s * K[b, %s, d, j] where d in 0..%lld", qat, kvh, (long long)h.d), xprintf("%s_scores", q->name));
  /* their cap and masks: -inf where a key is masked (i0..i3: b, h, i, j, as imp_baccess
   * indexes the mask) */
  char *x = xstrdup("X[i0, i1, i2, i3]");
  if (cap > 0) x = xprintf("%s * tanh(%s / %s)", imp_flit((float)cap), x, imp_flit((float)cap));
  char *params = xprintf("X: f32[%s]", dims), *args = xstrdup(s), *allowed = xstrdup("");
  if (mask) {
    int64_t ms[4] = {h.b, h.hq, h.sq, tm};
    char *m = imp_baccess("M", mask, ms, 4);
    if (tm < h.t) m = xprintf("(i3 < %lld ? %s : 0.0)", (long long)tm, m); /* the keys past the mask's */
    params = xprintf("%s, M: %s", params, imp_ty(mask)), args = xprintf("%s, %s", args, imp_tensor(I, mask));
    if (tm < h.t) allowed = xprintf("i3 < %lld", (long long)tm);
    if (bool_mask) allowed = xprintf("%s%s%s != 0.0", allowed, *allowed ? " && " : "", m);
    else x = xprintf("%s + %s", x, m);
  }
  /* the query block's offset: the cached keys, or the keys that count less the queries */
  char *off = xprintf("%lld", (long long)h.past);
  if (np) {
    if (np->shape[0] != h.b) return imp_error(I, "nonpad_kv_seqlen has %lld values for %lld batches", (long long)np->shape[0], (long long)h.b);
    char *n = int_param(I, np, "NP", "i0", &params, &args);
    allowed = xprintf("%s%si3 < %s", allowed, *allowed ? " && " : "", n);
    off = xprintf("(%s - %lld)", n, (long long)h.sq);
  }
  if (causal) allowed = xprintf("%s%si3 <= i2 + %s", allowed, *allowed ? " && " : "", off);
  int64_t left = imp_attr_i(I, "left_window_size", -1), right = imp_attr_i(I, "right_window_size", -1);
  if (left < -1 || right < -1) return imp_error(I, "a window size below -1");
  if (left >= 0) allowed = xprintf("%s%si2 + %s - i3 <= %lld", allowed, *allowed ? " && " : "", off, (long long)left);
  if (right >= 0) allowed = xprintf("%s%si3 - (i2 + %s) <= %lld", allowed, *allowed ? " && " : "", off, (long long)right);
  if (*allowed) x = xprintf("%s ? %s : %s", allowed, x, NEG_INF);
  const char *sm = cap > 0 || mask || *allowed ? emit(I, "attention_bias", params, args, dims, xprintf("  Y[i0, i1, i2, i3] = %s", x),
                                                      xprintf("%s_masked", q->name))
                                                 : s;
  Val *qk = NULL;
  if (qk_out) { /* output 3: the scores scaled (0), capped (1), masked (2), or the weights (3) */
    int64_t qs[4] = {h.b, h.hq, h.sq, h.t};
    qk = imp_net_out(I, 3, 4, qs);
    char *e = xstrdup("X[i0, i1, i2, i3]");
    if (mode == 1 && cap > 0) e = xprintf("%s * tanh(%s / %s)", imp_flit((float)cap), e, imp_flit((float)cap));
    if (mode >= 2) e = xstrdup("X[i0, i1, i2, i3]");
    if (mode != 3)
      imp_call(I, qk->tex, imp_kernel(I, "attention_qk", xprintf("(X: f32[%s]) -> Y: f32[%s] {\n  Y[i0, i1, i2, i3] = %s\n}", dims, dims, e)),
               mode == 2 ? sm : s);
  }
  /* the softmax: a row of -inf (every key masked) is zeros, as the reference's */
  char *rows = xprintf("%lld, %lld, %lld", (long long)h.b, (long long)h.hq, (long long)h.sq);
  bool guard = mask || *allowed;
  const char *p = emit(I, guard ? "attention_softmax" : "softmax", xprintf("X: f32[%s]", dims), sm, dims,
                       xprintf("  tensor M: f32[%s]\n  tensor E: f32[%s]\n  tensor S: f32[%s]\n"
                               "  M[b, h, i] max= X[b, h, i, r] where r in 0..%lld\n"
                               "  E[b, h, i, j] = %s\n"
                               "  S[b, h, i] += E[b, h, i, r] where r in 0..%lld\n"
                               "  Y[b, h, i, j] = %s",
                               rows, dims, rows, (long long)h.t,
                               guard ? "X[b, h, i, j] > " NEG_INF " ? exp(X[b, h, i, j] - M[b, h, i]) : 0.0" : "exp(X[b, h, i, j] - M[b, h, i])",
                               (long long)h.t, guard ? "S[b, h, i] > 0.0 ? E[b, h, i, j] / S[b, h, i] : 0.0" : "E[b, h, i, j] / S[b, h, i]"),
                       xprintf("%s_weights", q->name));
  if (qk && mode == 3)
    imp_call(I, qk->tex, imp_kernel(I, "attention_qk", xprintf("(X: f32[%s]) -> Y: f32[%s] {\n  Y[i0, i1, i2, i3] = X[i0, i1, i2, i3]\n}", dims, dims)), p);
  /* times the values */
  char *vty = xprintf("f32[%lld, %lld, %lld, %lld]", (long long)h.b, (long long)h.hkv, (long long)h.t, (long long)h.dv);
  char *odims = xprintf("%lld, %lld, %lld, %lld", (long long)h.b, (long long)h.hq, (long long)h.sq, (long long)h.dv);
  char *prod = xprintf("  Y[b, h, i, e] += P[b, h, i, j] * V[b, %s, j, e] where j in 0..%lld", kvh, (long long)h.t);
  const char *kn = imp_kernel(I, "attention_values", xprintf("(P: f32[%s], V: %s) -> Y: f32[%s] {\n%s\n}", dims, vty, odims, prod));
  if (h.rank == 4) {
    int64_t os[4] = {h.b, h.hq, h.sq, h.dv};
    Val *o = imp_net_out(I, 0, 4, os);
    imp_call(I, o->tex, kn, xprintf("%s, %s", p, vt));
    return true;
  }
  const char *o4 = imp_name(I, xprintf("%s_heads", I->node->output[0]));
  imp_call(I, o4, kn, xprintf("%s, %s", p, vt));
  int64_t os[3] = {h.b, h.sq, h.hq * h.dv};
  Val *o = imp_net_out(I, 0, 3, os);
  const char *mk = imp_kernel(I, "attention_merge", xprintf("(X: f32[%s]) -> Y: %s {\n  Y[b, i, c] = X[b, c / %lld, i, c %% %lld]\n}", odims,
                                                           imp_ty(o), (long long)h.dv, (long long)h.dv));
  imp_call(I, o->tex, mk, o4);
  return true;
}

/* RotaryEmbedding (opset 23): each head's first R values (rotary_embedding_dim, default
 * the head size) rotated in pairs by the angles of the position: (x1, x2) -> (cos x1 - sin
 * x2, sin x1 + cos x2), the pairs the two halves of the R values or (interleaved) their
 * neighbours; the caches [positions, R / 2] read at position_ids [B, S] (or, without
 * them, [B, S, R / 2] as given). X: [B, H, S, D], or [B, S, H x D] with num_heads. */
static bool op_rotary_embedding(Imp *I) {
  if (!imp_attrs_known(I, "interleaved,num_heads,rotary_embedding_dim") || !imp_one_output(I)) return false;
  Val *x = imp_float_in(I, 0), *cs = x ? imp_float_in(I, 1) : NULL, *sn = cs ? imp_float_in(I, 2) : NULL, *pos = imp_in(I, 3);
  if (!sn) return false;
  int r = x->ndim;
  if (r != 3 && r != 4) return imp_error(I, "the input has rank %d (3: [B, S, H x D], or 4: [B, H, S, D])", r);
  int64_t b = x->shape[0], s = r == 4 ? x->shape[2] : x->shape[1], nh = r == 4 ? x->shape[1] : imp_attr_i(I, "num_heads", 0);
  if (nh < 1) return imp_error(I, "a 3-D input needs num_heads");
  if (r == 3 && x->shape[2] % nh) return imp_error(I, "the hidden size %lld does not divide by %lld heads", (long long)x->shape[2], (long long)nh);
  int64_t hd = r == 4 ? x->shape[3] : x->shape[2] / nh, rd = imp_attr_i(I, "rotary_embedding_dim", 0);
  if (rd == 0) rd = hd;
  if (rd < 2 || rd > hd || rd % 2) return imp_error(I, "rotary_embedding_dim %lld (an even number up to the head size %lld)", (long long)rd, (long long)hd);
  int64_t half = rd / 2;
  if (cs->ndim != sn->ndim || memcmp(cs->shape, sn->shape, sizeof(int64_t) * (size_t)cs->ndim))
    return imp_error(I, "the cos and sin caches differ in shape");
  if (cs->shape[cs->ndim - 1] != half) return imp_error(I, "the caches' last axis is %lld, not rotary_embedding_dim / 2 = %lld",
                                                        (long long)cs->shape[cs->ndim - 1], (long long)half);
  /* the position of (b, s): the angle row of the caches */
  char *params = xprintf("X: %s, C: %s, Sn: %s", imp_ty(x), imp_ty(cs), imp_ty(sn)), *row;
  const char *tx = imp_tensor(I, x), *tc = imp_tensor(I, cs), *ts = imp_tensor(I, sn);
  char *args = xprintf("%s, %s, %s", tx, tc, ts);
  if (pos) {
    if (pos->ndim != 2 || pos->shape[0] != b || pos->shape[1] != s) return imp_error(I, "position_ids must be [%lld, %lld]", (long long)b, (long long)s);
    if (cs->ndim != 2) return imp_error(I, "with position_ids the caches must be [positions, %lld]", (long long)half);
    if (!pos->c && !imp_run_time_int(pos) && !pos->fint) return imp_error(I, "position_ids must be integers");
    int64_t np = cs->shape[0];
    if (pos->c)
      for (int64_t i = 0; i < b * s; i++)
        if (pos->c[i] < 0 || pos->c[i] >= (double)np) return imp_error(I, "position %.0f outside the caches' %lld", pos->c[i], (long long)np);
    /* run-time positions clamped into the caches (no read leaves them) */
    row = xprintf("clamp(%s, 0, %lld)", int_param(I, pos, "Pos", "b, s", &params, &args), (long long)np - 1);
  } else {
    if (cs->ndim != 3 || cs->shape[0] != b || cs->shape[1] != s)
      return imp_error(I, "without position_ids the caches must be [%lld, %lld, %lld]", (long long)b, (long long)s, (long long)half);
    row = NULL;
  }
  /* X's element at channel C of head h, position s; the caches at pair K */
  char *xa = r == 4 ? "X[b, h, s, %s]" : xprintf("X[b, s, h * %lld + %%s]", (long long)hd);
  char *cat, *sat, *k, *x1, *x2, *first;
  if (row) cat = xprintf("C[%s, %%s]", row), sat = xprintf("Sn[%s, %%s]", row);
  else cat = xstrdup("C[b, s, %s]"), sat = xstrdup("Sn[b, s, %s]");
  if (imp_attr_i(I, "interleaved", 0)) {
    /* clamped where only the channels from R reach (c < R selects, but the bounds checker
     * must see every access inside) */
    k = xprintf("min(c / 2, %lld)", (long long)half - 1), first = xstrdup("c % 2 == 0");
    x1 = xprintf("min(c / 2 * 2, %lld)", (long long)rd - 2), x2 = xprintf("min(c / 2 * 2 + 1, %lld)", (long long)rd - 1);
  } else {
    k = xprintf("c %% %lld", (long long)half), first = xprintf("c < %lld", (long long)half);
    x1 = xprintf("c %% %lld", (long long)half), x2 = xprintf("c %% %lld + %lld", (long long)half, (long long)half);
  }
  char *ck = xprintf(cat, k), *sk = xprintf(sat, k);
  char *v1 = xprintf(xa, x1), *v2 = xprintf(xa, x2), *self = xprintf(xa, "c");
  char *e = xprintf("c < %lld ? (%s ? %s * %s - %s * %s : %s * %s + %s * %s) : %s", (long long)rd, first, ck, v1, sk, v2, sk, v1, ck, v2, self);
  char *body = r == 4 ? xprintf("  Y[b, h, s, c] = %s", e)
                      : xprintf("  tensor R: f32[%lld, %lld, %lld, %lld]\n  R[b, s, h, c] = %s\n  Y[b, s, hc] = R[b, s, hc / %lld, hc %% %lld]",
                                (long long)b, (long long)s, (long long)nh, (long long)hd, e, (long long)hd, (long long)hd);
  Val *o = imp_net_out(I, 0, r, x->shape);
  const char *kn = imp_kernel(I, "rotary_embedding", xprintf("(%s) -> Y: %s {\n%s\n}", params, imp_ty(o), body));
  imp_call(I, o->tex, kn, args);
  return true;
}

/* TensorScatter (opset 24), a key / value cache's update: the cache with UPDATE written
 * along `axis` (after the batch) from each batch's write index (write_indices, default 0),
 * or wrapping around the cache's length (mode circular). As a read, one kernel: each cache
 * position takes the update's element that lands there, else its own; a linear write index
 * past the cache writes nothing there (ONNX leaves it undefined). */
static bool op_tensor_scatter(Imp *I) {
  if (!imp_attrs_known(I, "axis,mode") || !imp_one_output(I)) return false;
  Val *pc = imp_float_in(I, 0), *up = pc ? imp_float_in(I, 1) : NULL, *wi = imp_in(I, 2);
  if (!up) return false;
  int r = pc->ndim, a = imp_axis_of(I, imp_attr_i(I, "axis", -2), r);
  if (a < 0) return false;
  if (a == 0) return imp_error(I, "axis 0 is the batch");
  const char *mode = imp_attr_s(I, "mode", "linear");
  bool circular = !strcmp(mode, "circular");
  if (!circular && strcmp(mode, "linear")) return imp_error(I, "mode '%s' (linear or circular)", mode);
  if (up->ndim != r) return imp_error(I, "the update has rank %d, the cache %d", up->ndim, r);
  for (int d = 0; d < r; d++)
    if (d == a ? up->shape[d] > pc->shape[d] : up->shape[d] != pc->shape[d])
      return imp_error(I, "the update's shape does not fit the cache's along axis %d", d);
  char *params = xprintf("P: %s, U: %s", imp_ty(pc), imp_ty(up)), *w = xstrdup("0");
  const char *tp = imp_tensor(I, pc), *tu = imp_tensor(I, up);
  char *args = xprintf("%s, %s", tp, tu);
  if (wi) {
    if (wi->ndim != 1 || wi->shape[0] != pc->shape[0] || (!wi->c && !imp_run_time_int(wi) && !wi->fint))
      return imp_error(I, "write_indices must be %lld integers", (long long)pc->shape[0]);
    w = int_param(I, wi, "W", "i0", &params, &args);
  }
  long long len = (long long)pc->shape[a], n = (long long)up->shape[a];
  char *sidx = circular ? xprintf("(i%d - %s) %% %lld", a, w, len) : xprintf("i%d - %s", a, w);
  char *cond = circular ? xprintf("%s < %lld", sidx, n) : xprintf("%s >= 0 && %s < %lld", sidx, sidx, n);
  char *uat = xstrdup("");
  for (int d = 0; d < r; d++) uat = xprintf("%s%s%s", uat, d ? ", " : "", d == a ? xprintf("clamp(%s, 0, %lld)", sidx, n - 1) : xprintf("i%d", d));
  Val *o = imp_net_out(I, 0, r, pc->shape);
  char *all = imp_idx("i", r);
  const char *kn = imp_kernel(I, "tensor_scatter", xprintf("(%s) -> Y: %s {\n  Y[%s] = %s ? U[%s] : P[%s]\n}", params, imp_ty(o), all, cond, uat, all));
  imp_call(I, o->tex, kn, args);
  return true;
}

/* ---- LinearAttention (opset 27) -------------------------------------------------------- */

/* A LinearAttention being unrolled: its form, sizes, the state so far and the tokens'
 * outputs. */
typedef struct {
  bool gated, delta, dc_dim, be_head; /* decay per key dimension, beta per head */
  long long b, hq, hkv, dk, dv;
  double scale;
  const char *name;
  Val *state;  /* S after the last token (NULL: none yet, and no past_state) */
  Val **outs;  /* each token's output [B, Hq x dv] */
} Linear;

/* Token T (ImpStepFn): ROWS holds its row (one along axis 1) of Q, K, V, then decay and beta
 * when the rule reads them; its state and output kernels read row 0, alike for every token. */
static bool linear_step(Imp *I, void *ctx, int64_t t, Val **rows) {
  Linear *L = ctx;
  Val *q = rows[0], *k = rows[1], *v = rows[2], *dc = L->gated ? rows[3] : NULL, *be = L->delta ? rows[3 + L->gated] : NULL;
  long long dk = L->dk, dv = L->dv;
  int64_t ss[4] = {L->b, L->hkv, dk, dv}, os[2] = {L->b, L->hq * dv};
  const char *st = xprintf("f32[%lld, %lld, %lld, %lld]", L->b, L->hkv, dk, dv);
  char *params = xprintf("K: %s, V: %s", imp_ty(k), imp_ty(v)), *args = xprintf("%s, %s", imp_tensor(I, k), imp_tensor(I, v));
  if (L->state) params = xprintf("SP: %s, %s", st, params), args = xprintf("%s, %s", L->state->tex, args);
  if (dc) params = xprintf("%s, Dc: %s", params, imp_ty(dc)), args = xprintf("%s, %s", args, imp_tensor(I, dc));
  if (be) params = xprintf("%s, Be: %s", params, imp_ty(be)), args = xprintf("%s, %s", args, imp_tensor(I, be));
#define KT(i) xprintf("K[i0, 0, i1 * %lld + %s]", dk, i)
#define SD(i, j) (dc ? xprintf("exp(%s) * SP[i0, i1, %s, %s]", L->dc_dim ? xprintf("Dc[i0, 0, i1 * %lld + %s]", dk, i) : "Dc[i0, 0, i1]", i, j) \
                     : xprintf("SP[i0, i1, %s, %s]", i, j))
  const char *vt = xprintf("V[i0, 0, i1 * %lld + i3]", dv), *bt = L->be_head ? "Be[i0, 0, i1]" : "Be[i0, 0, 0]", *body;
  if (!L->delta)
    body = xprintf("  Y[i0, i1, i2, i3] = %s%s * %s", L->state ? xprintf("%s + ", SD("i2", "i3")) : "", KT("i2"), vt);
  else if (!L->state)
    body = xprintf("  Y[i0, i1, i2, i3] = %s * %s * %s", bt, KT("i2"), vt);
  else
    body = xprintf("  tensor U: f32[%lld, %lld, %lld]\n  U[i0, i1, i2] += %s * %s where m in 0..%lld\n"
                   "  Y[i0, i1, i2, i3] = %s + %s * %s * (%s - U[i0, i1, i3])",
                   L->b, L->hkv, dv, SD("m", "i2"), KT("m"), dk, SD("i2", "i3"), bt, KT("i2"), vt);
#undef KT
#undef SD
  L->state = imp_tmp_val(I, NULL, xprintf("%s_state", L->name), 4, ss);
  imp_call(I, L->state->tex, imp_kernel(I, L->delta ? "linear_attention_delta" : "linear_attention_state",
                                        xprintf("(%s) -> Y: %s {\n%s\n}", params, st, body)), args);
  /* the token's output: query head h = i1 / dv reads state h / (Hq / Hkv) */
  const char *h = xprintf("(i1 / %lld)", dv), *kvh = L->hq == L->hkv ? h : xprintf("(i1 / %lld)", dv * (L->hq / L->hkv));
  Val *o = L->outs[t] = imp_tmp_val(I, NULL, xprintf("%s_out", L->name), 2, os);
  imp_call(I, o->tex,
           imp_kernel(I, "linear_attention_out",
                      xprintf("(S: %s, Q: %s) -> Y: %s {\n  Y[i0, i1] += %s * Q[i0, 0, %s * %lld + m] * S[i0, %s, m, i1 %% %lld] "
                              "where m in 0..%lld\n}", st, imp_ty(q), imp_ty(o), imp_flit((float)L->scale), h, dk, kvh, dv, dk)),
           xprintf("%s, %s", L->state->tex, imp_tensor(I, q)));
  return true;
}

/* LinearAttention: the recurrence over the tokens unrolled at import (imp_walk_steps: a state
 * kernel and an output kernel a token, alike for every token, each reading its token's row
 * of the inputs; the outputs stacked by pairs): S_t = G_t S_{t-1} + k_t (x) w_t, where G_t
 * is exp(decay) per key dimension or per head (gated rules; else 1) and w_t is v_t (linear,
 * gated) or beta_t (v_t - (G_t S_{t-1})^T k_t) (delta rules); o_t = scale q_t^T S_t, query
 * head h reading state h / (Hq / Hkv). past_state (else zeros) is S_0's predecessor,
 * present_state the last. */
static bool op_linear_attention(Imp *I) {
  if (!imp_attrs_known(I, "chunk_size,kv_num_heads,q_num_heads,scale,update_rule")) return false;
  for (size_t k = 2; k < I->node->n_output; k++)
    if (*I->node->output[k]) return imp_error(I, "output %zu: LinearAttention has two", k + 1);
  Val *q = imp_float_in(I, 0), *k = q ? imp_float_in(I, 1) : NULL, *v = k ? imp_float_in(I, 2) : NULL;
  Val *past = imp_in(I, 3), *dc = imp_in(I, 4), *be = imp_in(I, 5);
  if (!v || (past && !(past = imp_float_in(I, 3))) || (dc && !(dc = imp_float_in(I, 4))) || (be && !(be = imp_float_in(I, 5))))
    return false;
  const char *rule = imp_attr_s(I, "update_rule", "gated_delta");
  Linear L = {.gated = !strcmp(rule, "gated") || !strcmp(rule, "gated_delta"), .delta = !strcmp(rule, "delta") || !strcmp(rule, "gated_delta"),
              .hq = imp_attr_i(I, "q_num_heads", 0), .hkv = imp_attr_i(I, "kv_num_heads", 0), .name = I->node->output[0]};
  if (!L.gated && !L.delta && strcmp(rule, "linear")) return imp_error(I, "update_rule '%s' (linear, gated, delta, gated_delta)", rule);
  if (L.hq < 1 || L.hkv < 1 || L.hq % L.hkv) return imp_error(I, "q_num_heads %lld and kv_num_heads %lld (a multiple of it)", L.hq, L.hkv);
  if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3) return imp_error(I, "query, key and value of ranks %d, %d, %d (3)", q->ndim, k->ndim, v->ndim);
  long long b = L.b = q->shape[0], t = q->shape[1], dk = L.dk = q->shape[2] / L.hq, dv = L.dv = v->shape[2] / L.hkv, hkv = L.hkv;
  if (q->shape[2] % L.hq || k->shape[2] != hkv * dk || v->shape[2] % hkv || k->shape[0] != b || v->shape[0] != b ||
      k->shape[1] != t || v->shape[1] != t)
    return imp_error(I, "query %s, key %s and value %s do not hold %lld and %lld heads of one size", imp_ty(q), imp_ty(k),
                     imp_ty(v), L.hq, hkv);
  if (t > 4096) return imp_unsupported(I, "%lld tokens (unrolled at import: 4096 at most)", t);
  if (L.gated && !dc) return imp_error(I, "update_rule '%s' needs decay (input 5)", rule);
  if (L.delta && !be) return imp_error(I, "update_rule '%s' needs beta (input 6)", rule);
  L.dc_dim = dc && dc->ndim == 3 && dc->shape[2] == hkv * dk, L.be_head = be && be->ndim == 3 && be->shape[2] == hkv;
  if (L.gated && !(dc->ndim == 3 && dc->shape[0] == b && dc->shape[1] == t && (L.dc_dim || dc->shape[2] == hkv)))
    return imp_error(I, "decay is %s: [%lld, %lld, %lld] or [%lld, %lld, %lld]", imp_ty(dc), b, t, hkv * dk, b, t, hkv);
  if (L.delta && !(be->ndim == 3 && be->shape[0] == b && be->shape[1] == t && (L.be_head || be->shape[2] == 1)))
    return imp_error(I, "beta is %s: [%lld, %lld, %lld] or [%lld, %lld, 1]", imp_ty(be), b, t, hkv, b, t);
  if (past && (past->ndim != 4 || past->shape[0] != b || past->shape[1] != hkv || past->shape[2] != dk || past->shape[3] != dv))
    return imp_error(I, "past_state is %s, not f32[%lld, %lld, %lld, %lld]", imp_ty(past), b, hkv, dk, dv);
  L.scale = imp_attr_f(I, "scale", 0);
  if (L.scale == 0) L.scale = 1 / sqrt((double)dk);
  if (past) {
    int64_t ss[4] = {b, hkv, dk, dv};
    L.state = imp_tmp_val(I, NULL, "past", 4, ss);
    L.state->tex = imp_tensor(I, past);
  }
  L.outs = xalloc(sizeof(Val *) * (size_t)t);
  Val *xs[5] = {q, k, v};
  int m = 3, axes[5] = {1, 1, 1, 1, 1};
  bool rev[5] = {0};
  if (L.gated) xs[m++] = dc;
  if (L.delta) xs[m++] = be;
  if (!imp_walk_steps(I, xs, axes, rev, m, t, linear_step, &L, xprintf("%s_rows", L.name))) return false;
  imp_alias_as(I, L.name, imp_stack(I, L.outs, t, 1, L.name));
  if (I->node->n_output > 1 && *I->node->output[1]) imp_alias_as(I, I->node->output[1], L.state);
  return true;
}

int onnx_attention_op(Imp *I, const char *op) {
  if (!strcmp(op, "Attention")) return op_attention(I);
  if (!strcmp(op, "RotaryEmbedding")) return op_rotary_embedding(I);
  if (!strcmp(op, "TensorScatter")) return op_tensor_scatter(I);
  if (!strcmp(op, "LinearAttention")) return op_linear_attention(I);
  return -1;
}
