/* wire.c — frames of the measure protocol (wire.h). libc only. */
#include "wire.h"
#include "rt_gpu.h"
#include "texrt.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wire_put(WireText *t, const char *key, const char *fmt, ...) {
  char val[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(val, sizeof val, fmt, ap);
  va_end(ap);
  for (char *p = val; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  size_t need = t->len + strlen(key) + strlen(val) + 3;
  if (need > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < need) cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) abort();
    t->s = s, t->cap = cap;
  }
  t->len += (size_t)sprintf(t->s + t->len, "%s %s\n", key, val);
}

void wire_text_free(WireText *t) {
  free(t->s);
  *t = (WireText){0};
}

bool wire_get_nth(const char *hdr, const char *key, int index, char *buf, size_t n) {
  size_t k = strlen(key);
  for (const char *l = hdr; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    if (len >= k && strncmp(l, key, k) == 0 && (len == k || l[k] == ' ') && index-- == 0) {
      const char *v = len == k ? l + k : l + k + 1;
      size_t vl = len - (size_t)(v - l);
      if (vl >= n) vl = n - 1;
      memcpy(buf, v, vl);
      buf[vl] = 0;
      return true;
    }
    l = nl ? nl + 1 : NULL;
  }
  if (n) buf[0] = 0;
  return false;
}

bool wire_get(const char *hdr, const char *key, char *buf, size_t n) {
  return wire_get_nth(hdr, key, 0, buf, n);
}

double wire_num(const char *hdr, const char *key, double def) {
  char v[64];
  if (!wire_get(hdr, key, v, sizeof v)) return def;
  char *end;
  double d = strtod(v, &end);
  return end == v ? def : d;
}

/* ---------------------------------------------------------------- launch plans */

#define PLAN_LINE 4000 /* under wire_put's limit */

/* Append " N CODE..." of E to BUF (LEN so far); false when it does not fit. */
static bool put_expr(char *buf, size_t *len, const RtGpuExpr *e) {
  *len += (size_t)snprintf(buf + *len, PLAN_LINE - *len, " %d", e->n);
  for (int i = 0; i < 2 * e->n && *len < PLAN_LINE; i++)
    *len += (size_t)snprintf(buf + *len, PLAN_LINE - *len, " %lld", (long long)e->code[i]);
  return *len < PLAN_LINE;
}

bool wire_put_gpu_plan(WireText *t, const RtGpuFunc *f) {
  char buf[PLAN_LINE];
  size_t len = 0;
  wire_put(t, "gpu_func", "%s %d %d %d %d", f->name, f->nparams, f->nsizes, f->ntemps, f->nkernels);
  for (int i = 0; i < f->ntemps; i++) {
    len = 0;
    if (!put_expr(buf, &len, &f->temp_bytes[i])) return false;
    wire_put(t, "gpu_temp", "%s", buf + 1);
  }
  for (int k = 0; k < f->nkernels; k++) {
    const RtGpuKernel *kk = &f->kernels[k];
    len = (size_t)snprintf(buf, sizeof buf, "%s %d", kk->name, kk->nargs);
    for (int a = 0; a < kk->nargs && len < sizeof buf; a++)
      len += (size_t)snprintf(buf + len, sizeof buf - len, " %d", kk->args[a]);
    if (len >= sizeof buf) return false;
    wire_put(t, "gpu_kernel", "%s", buf);
    for (int d = 0; d < 6; d++) {
      len = 0;
      if (!put_expr(buf, &len, d < 3 ? &kk->grid[d] : &kk->block[d - 3])) return false;
      wire_put(t, "gpu_extent", "%s", buf + 1);
    }
  }
  return true;
}

/* The INDEX-th KEY line of HDR as an expression into *E; false when missing or malformed. */
static bool get_expr(const char *hdr, const char *key, int index, RtGpuExpr *e) {
  char buf[PLAN_LINE + 1], *p = buf, *end;
  if (!wire_get_nth(hdr, key, index, buf, sizeof buf)) return false;
  long n = strtol(p, &end, 10);
  if (end == p || n < 0 || n > 1024) return false;
  e->n = (int)n;
  e->code = calloc(2 * (size_t)n + 1, sizeof *e->code);
  for (long i = 0; i < 2 * n; i++) {
    p = end;
    e->code[i] = strtoll(p, &end, 10);
    if (end == p) return false;
  }
  return true;
}

/* The INDEX-th gpu_kernel line of HDR into *K; false when missing or malformed. */
static bool get_kernel(const char *hdr, int index, RtGpuKernel *k) {
  char buf[PLAN_LINE + 1], name[256], *end;
  int at = 0;
  if (!wire_get_nth(hdr, "gpu_kernel", index, buf, sizeof buf) ||
      sscanf(buf, "%255s %d%n", name, &k->nargs, &at) != 2 || k->nargs < 0 || k->nargs > 4096)
    return false;
  k->name = strdup(name);
  k->args = calloc((size_t)k->nargs + 1, sizeof *k->args);
  for (int a = 0; a < k->nargs; a++) {
    const char *p = buf + at;
    k->args[a] = (int)strtol(p, &end, 10);
    if (end == p) return false;
    at = (int)(end - buf);
  }
  for (int d = 0; d < 6; d++)
    if (!get_expr(hdr, "gpu_extent", 6 * index + d, d < 3 ? &k->grid[d] : &k->block[d - 3])) return false;
  return true;
}

bool wire_get_gpu_plan(const char *hdr, RtGpuFunc *f, char *why, size_t whysz) {
  char buf[512], name[256];
  *f = (RtGpuFunc){0};
  if (!wire_get(hdr, "gpu_func", buf, sizeof buf)) {
    snprintf(why, whysz, "the request has no launch plan (gpu_func)");
    return false;
  }
  if (sscanf(buf, "%255s %d %d %d %d", name, &f->nparams, &f->nsizes, &f->ntemps, &f->nkernels) != 5 ||
      f->ntemps < 0 || f->nkernels < 0 || f->ntemps > 4096 || f->nkernels > 4096) {
    snprintf(why, whysz, "a malformed launch plan: gpu_func %s", buf);
    return false;
  }
  f->name = strdup(name);
  f->temp_bytes = calloc((size_t)f->ntemps + 1, sizeof *f->temp_bytes);
  f->kernels = calloc((size_t)f->nkernels + 1, sizeof *f->kernels);
  bool ok = true;
  for (int i = 0; ok && i < f->ntemps; i++) ok = get_expr(hdr, "gpu_temp", i, &f->temp_bytes[i]);
  for (int k = 0; ok && k < f->nkernels; k++) ok = get_kernel(hdr, k, &f->kernels[k]);
  if (!ok) {
    snprintf(why, whysz, "a malformed launch plan (gpu_temp, gpu_kernel or gpu_extent lines)");
    wire_free_gpu_plan(f);
  }
  return ok;
}

void wire_free_gpu_plan(RtGpuFunc *f) {
  for (int i = 0; f->temp_bytes && i < f->ntemps; i++) free(f->temp_bytes[i].code);
  for (int k = 0; f->kernels && k < f->nkernels; k++) {
    free((char *)f->kernels[k].name);
    free(f->kernels[k].args);
    for (int d = 0; d < 3; d++) free(f->kernels[k].grid[d].code), free(f->kernels[k].block[d].code);
  }
  free((char *)f->name);
  free(f->temp_bytes);
  free(f->kernels);
  *f = (RtGpuFunc){0};
}

/* ---------------------------------------------------------------- frames */

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w, n -= (size_t)w;
  }
  return true;
}

bool wire_write(int fd, const char *hdr, const void *payload, uint64_t n) {
  unsigned char head[16];
  uint32_t hl = (uint32_t)strlen(hdr);
  memcpy(head, WIRE_MAGIC, 4);
  for (int i = 0; i < 4; i++) head[4 + i] = (unsigned char)(hl >> (24 - 8 * i));
  for (int i = 0; i < 8; i++) head[8 + i] = (unsigned char)(n >> (56 - 8 * i));
  return write_all(fd, head, sizeof head) && write_all(fd, hdr, hl) &&
         (n == 0 || write_all(fd, payload, (size_t)n));
}

/* Read N bytes before DEADLINE (< 0: none). 1 read, 0 EOF or error, -1 timeout. */
static int read_all(int fd, void *p, size_t n, double deadline) {
  char *c = p;
  while (n) {
    if (deadline >= 0) {
      double left = deadline - (rt_now_ms() / 1e3);
      if (left <= 0) return -1;
      struct pollfd pf = {fd, POLLIN, 0};
      int r = poll(&pf, 1, (int)(left * 1000) + 1);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) return -1;
      if (r < 0) return 0;
    }
    ssize_t got = read(fd, c, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    c += got, n -= (size_t)got;
  }
  return 1;
}

int wire_read(int fd, double timeout_s, char **hdr, unsigned char **payload, uint64_t *n,
              char *why, size_t whysz) {
  double deadline = timeout_s < 0 ? -1 : (rt_now_ms() / 1e3) + timeout_s;
  unsigned char head[16];
  *hdr = NULL, *payload = NULL, *n = 0;
  int r = read_all(fd, head, sizeof head, deadline);
  if (r != 1) {
    snprintf(why, whysz, r < 0 ? "no answer in %.0f s" : "the connection was closed", timeout_s);
    return r;
  }
  if (memcmp(head, WIRE_MAGIC, 4)) {
    snprintf(why, whysz, "not a texc measure frame (does the command start texc-measure-server?)");
    return 0;
  }
  uint32_t hl = 0;
  uint64_t pl = 0;
  for (int i = 0; i < 4; i++) hl = hl << 8 | head[4 + i];
  for (int i = 0; i < 8; i++) pl = pl << 8 | head[8 + i];
  if (hl > WIRE_MAX_HEADER || pl > WIRE_MAX_PAYLOAD) {
    snprintf(why, whysz, "a frame too large (header %u, payload %llu bytes)", hl,
             (unsigned long long)pl);
    return 0;
  }
  char *h = malloc(hl + 1);
  unsigned char *p = malloc(pl ? (size_t)pl : 1);
  if (!h || !p) abort();
  if ((r = read_all(fd, h, hl, deadline)) == 1) r = read_all(fd, p, (size_t)pl, deadline);
  if (r != 1) {
    free(h);
    free(p);
    snprintf(why, whysz, r < 0 ? "no answer in %.0f s" : "the connection was closed mid-frame",
             timeout_s);
    return r;
  }
  h[hl] = 0;
  *hdr = h, *payload = p, *n = pl;
  return 1;
}
