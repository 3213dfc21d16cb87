/* model.c — the cost model: gradient-boosted trees (XGBoost's C API) from program
 * features to normalized throughput. Retrained from scratch as measurements come. */
#include "autosched.h"

#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#define MIN_ROWS 8   /* below this the model stays untrained: the search samples at random */
#define ROUNDS 40    /* boosting rounds per training */

struct CostModel {
  float *x, *y;      /* rows x FEAT_N, labels */
  int n, cap;
  BoosterHandle booster;
  int seed;
};

CostModel *model_new(int seed) {
  CostModel *m = calloc(1, sizeof *m);
  if (!m) die_oom(0);
  m->seed = seed;
  return m;
}

void model_free(CostModel *m) {
  if (!m) return;
  if (m->booster) XGBoosterFree(m->booster);
  free(m->x);
  free(m->y);
  free(m);
}

void model_add(CostModel *m, const float *feat, float label) {
  if (m->n == m->cap) {
    m->cap = m->cap ? m->cap * 2 : 256;
    m->x = realloc(m->x, sizeof(float) * FEAT_N * (size_t)m->cap);
    m->y = realloc(m->y, sizeof(float) * (size_t)m->cap);
    if (!m->x || !m->y) die_oom(0);
  }
  memcpy(m->x + (size_t)m->n * FEAT_N, feat, sizeof(float) * FEAT_N);
  m->y[m->n++] = label;
}

int model_rows(const CostModel *m) { return m->n; }
bool model_trained(const CostModel *m) { return m->booster != NULL; }

/* Parameters as Ansor's XGBModel: shallow-ish trees, a small learning rate, and one
 * thread so that a seeded search is reproducible. */
static void set_params(BoosterHandle b, int seed) {
  char sd[32];
  snprintf(sd, sizeof sd, "%d", seed);
  XGBoosterSetParam(b, "objective", "reg:squarederror");
  XGBoosterSetParam(b, "max_depth", "8");
  XGBoosterSetParam(b, "eta", "0.2");
  XGBoosterSetParam(b, "gamma", "0.0001");
  XGBoosterSetParam(b, "min_child_weight", "0");
  XGBoosterSetParam(b, "subsample", "1.0");
  XGBoosterSetParam(b, "nthread", "1");
  XGBoosterSetParam(b, "seed", sd);
  XGBoosterSetParam(b, "verbosity", "0");
}

bool model_train(CostModel *m) {
  if (m->n < MIN_ROWS) return false;
  DMatrixHandle d;
  if (XGDMatrixCreateFromMat(m->x, (bst_ulong)m->n, FEAT_N, -1e30f, &d) != 0) return false;
  XGDMatrixSetFloatInfo(d, "label", m->y, (bst_ulong)m->n);
  BoosterHandle b;
  bool ok = XGBoosterCreate(&d, 1, &b) == 0;
  if (ok) {
    set_params(b, m->seed);
    for (int i = 0; i < ROUNDS && ok; i++) ok = XGBoosterUpdateOneIter(b, i, d) == 0;
    if (!ok) {
      fprintf(stderr, "texc tune: warning: cost model: %s\n", XGBGetLastError());
      XGBoosterFree(b);
    }
  }
  XGDMatrixFree(d);
  if (!ok) return false;
  if (m->booster) XGBoosterFree(m->booster);
  m->booster = b;
  return true;
}

void model_predict(CostModel *m, const float *feat, int n, float *out) {
  memset(out, 0, sizeof(float) * (size_t)n);
  if (!m->booster || n == 0) return;
  DMatrixHandle d;
  if (XGDMatrixCreateFromMat(feat, (bst_ulong)n, FEAT_N, -1e30f, &d) != 0) return;
  bst_ulong len = 0;
  const float *res = NULL;
  if (XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res) == 0 && len == (bst_ulong)n)
    memcpy(out, res, sizeof(float) * (size_t)n);
  XGDMatrixFree(d);
}
