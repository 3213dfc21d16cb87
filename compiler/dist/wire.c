/* wire.c — frames of the measure protocol (wire.h). libc only. */
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read N bytes before DEADLINE (< 0: none). 1 read, 0 EOF or error, -1 timeout. */
static int read_all(int fd, void *p, size_t n, double deadline) {
  char *c = p;
  while (n) {
    if (deadline >= 0) {
      double left = deadline - now_s();
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
  double deadline = timeout_s < 0 ? -1 : now_s() + timeout_s;
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
