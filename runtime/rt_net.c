/* rt_net.c — run a whole network from its plain-data description (rt_net.h): what a
 * library from `texc NET --emit so` calls, with nothing of the compiler.
 *
 *   create   weights in place (embedded, or a safetensors file read by tensor name and
 *            checked against the shapes), the arena and the folded block allocated once,
 *            the functions of the device's module (CPU: the packed entries; CUDA: the PTX
 *            loaded through the driver, weights uploaded once), the folded tensors (packed
 *            weights) computed by the first NINIT calls
 *   run      the calls in order on views into the arena; the caller's pointers for the
 *            inputs and the outputs (CUDA with host pointers: copied through device
 *            buffers allocated at create). The calls are one sequence (rt_seq_new: on CUDA
 *            one graph, replayed with one synchronisation), made at the first run and again
 *            when the input or output pointers change.
 */
#include "rt_net.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CPU library links no CUDA code: rt_cuda.c is pulled in by the CUDA libraries' own
 * reference (deploy.c writes one), and this one stays weak. */
#pragma weak rt_cuda_module

struct RtNet {
  const RtNetDesc *d;
  RtDevice dev;
  RtModule *m;
  RtFunc **fns;         /* per function of the description */
  RtTensor *views;      /* per tensor: where it is (data set at create, inputs per run) */
  RtTensor ***args;     /* per call: pointers into VIEWS */
  RtTensor *arena, *folded, *weights_dev;
  RtTensor **in_dev, **out_dev; /* CUDA with host pointers: the staging buffers */
  void *weights_host;   /* read from a file (malloc'd), or NULL */
  RtSeq *seq;           /* the run's calls, made for the pointers in SEQ_PTRS */
  void **seq_ptrs;      /* per tensor: the data pointer the sequence was made with */
};

/* ---- safetensors: an 8-byte little-endian header length, a JSON header, the data ---- */

typedef struct StEntry {
  char name[256];
  char dtype[16];
  int ndim;
  int64_t shape[8];
  int64_t begin, end;
} StEntry;

typedef struct Json {
  const char *p, *end;
} Json;

static void skip_ws(Json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')) j->p++;
}

static bool eat(Json *j, char c) {
  skip_ws(j);
  if (j->p < j->end && *j->p == c) return j->p++, true;
  return false;
}

/* A string into OUT (CAP bytes); escapes other than \" \\ \/ are refused. */
static bool json_string(Json *j, char *out, size_t cap) {
  if (!eat(j, '"')) return false;
  size_t n = 0;
  while (j->p < j->end && *j->p != '"') {
    char c = *j->p++;
    if (c == '\\') {
      if (j->p >= j->end || (*j->p != '"' && *j->p != '\\' && *j->p != '/')) return false;
      c = *j->p++;
    }
    if (n + 1 >= cap) return false;
    out[n++] = c;
  }
  out[n] = 0;
  return j->p++ < j->end;
}

static bool json_int(Json *j, int64_t *v) {
  skip_ws(j);
  char *e;
  errno = 0;
  long long x = strtoll(j->p, &e, 10);
  if (e == j->p || e > j->end || errno || x < 0) return false;
  j->p = e;
  *v = x;
  return true;
}

/* [a, b, ...] of at most MAX non-negative integers. */
static bool json_ints(Json *j, int64_t *v, int max, int *n) {
  *n = 0;
  if (!eat(j, '[')) return false;
  if (eat(j, ']')) return true;
  do {
    if (*n == max || !json_int(j, &v[(*n)++])) return false;
  } while (eat(j, ','));
  return eat(j, ']');
}

/* Skip any value (the header's __metadata__ is an object of strings). */
static bool json_skip(Json *j, int depth) {
  char s[4096];
  skip_ws(j);
  if (depth > 16 || j->p >= j->end) return false;
  if (*j->p == '"') return json_string(j, s, sizeof s);
  if (*j->p == '{' || *j->p == '[') {
    char close = *j->p++ == '{' ? '}' : ']';
    if (eat(j, close)) return true;
    do {
      if (close == '}' && (!json_string(j, s, sizeof s) || !eat(j, ':'))) return false;
      if (!json_skip(j, depth + 1)) return false;
    } while (eat(j, ','));
    return eat(j, close);
  }
  while (j->p < j->end && *j->p != ',' && *j->p != '}' && *j->p != ']') j->p++;
  return true;
}

/* {"dtype": "F32", "shape": [...], "data_offsets": [b, e]} */
static bool json_entry(Json *j, StEntry *e) {
  if (!eat(j, '{')) return false;
  char key[64];
  int n;
  do {
    if (!json_string(j, key, sizeof key) || !eat(j, ':')) return false;
    int64_t off[2];
    if (!strcmp(key, "dtype")) {
      if (!json_string(j, e->dtype, sizeof e->dtype)) return false;
    } else if (!strcmp(key, "shape")) {
      if (!json_ints(j, e->shape, 8, &e->ndim)) return false;
    } else if (!strcmp(key, "data_offsets")) {
      if (!json_ints(j, off, 2, &n) || n != 2 || off[1] < off[0]) return false;
      e->begin = off[0], e->end = off[1];
    } else if (!json_skip(j, 1)) return false;
  } while (eat(j, ','));
  return eat(j, '}');
}

/* The entries of a header (malloc'd), or NULL for a malformed one. */
static StEntry *parse_header(const char *text, size_t len, int *count) {
  Json j = {text, text + len};
  StEntry *v = NULL;
  int n = 0, cap = 0;
  bool ok = eat(&j, '{');
  if (ok && !eat(&j, '}')) {
    do {
      if (n == cap && !(v = realloc(v, sizeof *v * (size_t)(cap = cap ? 2 * cap : 64)))) return NULL;
      StEntry *e = memset(&v[n], 0, sizeof *v);
      e->begin = -1;
      ok = json_string(&j, e->name, sizeof e->name) && eat(&j, ':');
      if (ok && !strcmp(e->name, "__metadata__")) ok = json_skip(&j, 1);
      else if (ok) ok = json_entry(&j, e) && e->begin >= 0, n++;
    } while (ok && eat(&j, ','));
    ok = ok && eat(&j, '}');
  }
  if (!ok) {
    free(v);
    return NULL;
  }
  *count = n;
  return v ? v : calloc(1, sizeof *v);
}

static char *shape_text(const int64_t *s, int n) {
  static _Thread_local char buf[2][160];
  static _Thread_local int which;
  char *b = buf[which ^= 1];
  int k = snprintf(b, 160, "[");
  for (int d = 0; d < n && k < 140; d++) k += snprintf(b + k, (size_t)(160 - k), "%s%lld", d ? ", " : "", (long long)s[d]);
  snprintf(b + k, (size_t)(160 - k), "]");
  return b;
}

/* Does entry E of file PATH (data of DATA_LEN bytes) hold tensor T? Else the error. */
static bool entry_fits(const StEntry *e, const RtNetTensor *t, const char *path, int64_t data_len) {
  if (strcmp(e->dtype, "F32") != 0) {
    rt_set_error("weights file %s: tensor '%s' is %s, the network needs F32", path, t->name, e->dtype);
    return false;
  }
  bool same = e->ndim == t->ndim;
  for (int d = 0; same && d < t->ndim; d++) same = e->shape[d] == t->shape[d];
  if (!same) {
    rt_set_error("weights file %s: tensor '%s' is %s, the network needs %s", path, t->name,
                 shape_text(e->shape, e->ndim), shape_text(t->shape, t->ndim));
    return false;
  }
  if (e->end - e->begin != t->nbytes || e->end > data_len) {
    rt_set_error("weights file %s: tensor '%s' needs bytes %lld..%lld of the data, which has %lld "
                 "(a truncated or corrupt file)", path, t->name, (long long)e->begin,
                 (long long)e->begin + t->nbytes, (long long)data_len);
    return false;
  }
  return true;
}

static int by_begin(const void *a, const void *b) {
  const StEntry *x = *(const StEntry *const *)a, *y = *(const StEntry *const *)b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

/* Do the N entries ES index the DATA_LEN bytes of data exactly: one after the other from
 * byte 0, no gap, no overlap, nothing after the last? What safetensors' own reader asks
 * (MetadataIncompleteBuffer): a file with stray bytes is not this network's, or corrupt.
 * Else the error. */
static bool entries_cover(const StEntry *es, int n, const char *path, int64_t data_len) {
  const StEntry **by = malloc(sizeof *by * (size_t)(n + 1));
  if (!by) {
    rt_set_error("weights file %s: out of memory", path);
    return false;
  }
  for (int i = 0; i < n; i++) by[i] = &es[i];
  qsort(by, (size_t)n, sizeof *by, by_begin);
  int64_t at = 0;
  bool ok = true;
  for (int i = 0; ok && i < n; i++) {
    if (by[i]->begin > at)
      rt_set_error("weights file %s: bytes %lld..%lld of the data are in no tensor (a gap before '%s')", path,
                   (long long)at, (long long)by[i]->begin, by[i]->name);
    else if (by[i]->begin < at)
      rt_set_error("weights file %s: tensors '%s' and '%s' overlap", path, by[i - 1]->name, by[i]->name);
    ok = by[i]->begin == at;
    at = by[i]->end;
  }
  if (ok && at > data_len)
    rt_set_error("weights file %s: the tensors need %lld bytes of data, the file has %lld (a truncated or corrupt file)",
                 path, (long long)at, (long long)data_len), ok = false;
  if (ok && at < data_len)
    rt_set_error("weights file %s: %lld bytes after the last tensor (a corrupt file, or another network's)", path,
                 (long long)(data_len - at)), ok = false;
  free(by);
  return ok;
}

/* The whole of PATH (malloc'd) and its size; NULL after the error. */
static unsigned char *read_file(const char *path, int64_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    rt_set_error("cannot open weights file %s: %s", path, strerror(errno));
    return NULL;
  }
  unsigned char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0; /* the header's numbers end here at the latest (strtoll) */
  if (!buf) rt_set_error("cannot read weights file %s", path);
  *size = n;
  return buf;
}

/* Every weight of D from safetensors file PATH into BLOB (D's layout). */
static bool load_weights(const RtNetDesc *d, const char *path, unsigned char *blob) {
  int64_t size;
  unsigned char *buf = read_file(path, &size);
  if (!buf) return false;
  uint64_t hlen = 0;
  for (int i = 0; i < 8 && size >= 8; i++) hlen |= (uint64_t)buf[i] << (8 * i);
  int n = 0;
  StEntry *es = size >= 8 && hlen <= (uint64_t)size - 8 ? parse_header((char *)buf + 8, hlen, &n) : NULL;
  bool ok = es != NULL;
  if (!ok) rt_set_error("weights file %s: not a safetensors file (a truncated or corrupt header)", path);
  int64_t data_len = ok ? size - 8 - (int64_t)hlen : 0;
  for (int i = 0; ok && i < d->ntensors; i++) {
    const RtNetTensor *t = &d->tensors[i];
    if (t->kind != RT_NET_WEIGHT) continue;
    const StEntry *e = NULL;
    for (int k = 0; k < n && !e; k++)
      if (!strcmp(es[k].name, t->name)) e = &es[k];
    if (!e) rt_set_error("weights file %s: no tensor '%s' (a weight of network %s)", path, t->name, d->name);
    ok = e && entry_fits(e, t, path, data_len);
    if (ok) memcpy(blob + t->offset, buf + 8 + hlen + e->begin, (size_t)t->nbytes);
  }
  if (ok) ok = entries_cover(es, n, path, data_len);
  free(es);
  free(buf);
  return ok;
}

/* ---- create, run, destroy ------------------------------------------------------------ */

static RtTensor *alloc_bytes(RtDevice dev, int64_t bytes) {
  return rt_tensor_alloc(dev, 1, 1, &bytes);
}

/* The functions of D: the packed CPU entries, or the PTX module's. */
static bool load_module(RtNet *net) {
  const RtNetDesc *d = net->d;
  if (d->device == RT_CUDA) {
    if (!rt_cuda_module) rt_set_error("CUDA support is not linked into this library");
    else net->m = rt_cuda_module(d->ptx, d->gpu_fns, d->nfuncs);
  } else {
    net->m = rt_module_new(NULL, NULL);
    for (int f = 0; f < d->nfuncs && net->m; f++) {
      int nargs = 0;
      for (int c = 0; c < d->ncalls; c++)
        if (d->calls[c].func == f) nargs = d->calls[c].nargs;
      RtFunc *fn = rt_cpu_func(d->func_names[f], d->cpu_fns[f], nargs, 0);
      if (!fn) return false;
      rt_module_add(net->m, fn);
    }
  }
  if (!net->m) return false;
  for (int f = 0; f < d->nfuncs; f++)
    if (!(net->fns[f] = rt_module_func(net->m, d->func_names[f]))) return false;
  return true;
}

/* The weights where the device reads them: the embedded block, or PATH's tensors. */
static bool place_weights(RtNet *net, const char *path, const unsigned char **host) {
  const RtNetDesc *d = net->d;
  *host = d->weights;
  if (path || !d->weights) {
    if (!path) path = d->weights_file;
    unsigned char *blob = rt_host_alloc((size_t)d->weights_bytes + 64);
    net->weights_host = blob;
    if (!blob) {
      rt_set_error("%s: out of memory for the weights", d->name);
      return false;
    }
    memset(blob, 0, (size_t)d->weights_bytes);
    if (!load_weights(d, path, blob)) return false;
    *host = blob;
  }
  if (net->dev.kind == RT_CPU) return true;
  net->weights_dev = alloc_bytes(net->dev, d->weights_bytes);
  return net->weights_dev && rt_tensor_from_host(net->weights_dev, *host) == 0;
}

/* VIEWS and ARGS: every tensor where it lives (inputs and outputs: set per run). */
static bool make_views(RtNet *net, const unsigned char *weights) {
  const RtNetDesc *d = net->d;
  for (int i = 0; i < d->ntensors; i++) {
    const RtNetTensor *t = &d->tensors[i];
    RtTensor *v = &net->views[i];
    *v = (RtTensor){.dev = net->dev, .dtype_bytes = t->dtype_bytes, .ndim = t->ndim, .nbytes = t->nbytes};
    memcpy(v->shape, t->shape, sizeof v->shape);
    if (t->kind == RT_NET_WEIGHT)
      v->data = (char *)(net->weights_dev ? net->weights_dev->data : (void *)weights) + t->offset;
    else if (t->kind == RT_NET_VALUE) v->data = (char *)net->arena->data + t->offset;
    else if (t->kind == RT_NET_FOLDED) v->data = (char *)net->folded->data + t->offset;
  }
  for (int c = 0; c < d->ncalls; c++) {
    const RtNetCall *call = &d->calls[c];
    if (!(net->args[c] = calloc((size_t)call->nargs, sizeof(RtTensor *)))) return false;
    for (int a = 0; a < call->nargs; a++) net->args[c][a] = &net->views[call->args[a]];
  }
  return true;
}

/* CUDA with host pointers: a device buffer per input and per output. */
static bool make_staging(RtNet *net) {
  const RtNetDesc *d = net->d;
  if (net->dev.kind == RT_CPU) return true;
  for (int i = 0; i < d->ntensors; i++) {
    const RtNetTensor *t = &d->tensors[i];
    if (t->kind == RT_NET_INPUT && !(net->in_dev[t->offset] = alloc_bytes(net->dev, t->nbytes))) return false;
    if (t->kind == RT_NET_OUTPUT && !(net->out_dev[t->offset] = alloc_bytes(net->dev, t->nbytes))) return false;
  }
  return true;
}

RtNet *rt_net_create(const RtNetDesc *d, const char *weights_path) {
  RtNet *net = calloc(1, sizeof *net);
  if (!net) {
    rt_set_error("%s: out of memory", d->name);
    return NULL;
  }
  net->d = d;
  net->dev = (RtDevice){d->device, 0};
  net->fns = calloc((size_t)d->nfuncs + 1, sizeof *net->fns);
  net->views = calloc((size_t)d->ntensors + 1, sizeof *net->views);
  net->args = calloc((size_t)d->ncalls + 1, sizeof *net->args);
  net->in_dev = calloc((size_t)d->ninputs + 1, sizeof *net->in_dev);
  net->out_dev = calloc((size_t)d->noutputs + 1, sizeof *net->out_dev);
  net->seq_ptrs = calloc((size_t)d->ntensors + 1, sizeof *net->seq_ptrs);
  const unsigned char *weights = NULL;
  bool ok = net->fns && net->views && net->args && net->in_dev && net->out_dev && net->seq_ptrs;
  if (!ok) rt_set_error("%s: out of memory", d->name);
  ok = ok && load_module(net) && place_weights(net, weights_path, &weights);
  ok = ok && (net->arena = alloc_bytes(net->dev, d->arena_bytes)) != NULL;
  ok = ok && (net->folded = alloc_bytes(net->dev, d->folded_bytes > 0 ? d->folded_bytes : 1)) != NULL;
  ok = ok && make_views(net, weights) && make_staging(net);
  for (int c = 0; ok && c < d->ninit; c++) /* the folded tensors (packed weights), once */
    ok = rt_func_call(net->fns[d->calls[c].func], net->args[c], d->calls[c].nargs, NULL, 0) == 0;
  if (!ok) {
    char why[1024];
    snprintf(why, sizeof why, "%s", rt_last_error());
    rt_net_destroy(net);
    rt_set_error("%s: %s", d->name, why);
    return NULL;
  }
  return net;
}

/* NET->seq for the views' pointers as they are: kept, or made again when one changed. */
static bool sequence(RtNet *net) {
  const RtNetDesc *d = net->d;
  bool same = net->seq != NULL;
  for (int i = 0; same && i < d->ntensors; i++) same = net->seq_ptrs[i] == net->views[i].data;
  if (same) return true;
  rt_seq_free(net->seq);
  int n = d->ncalls - d->ninit;
  RtFunc **fns = calloc((size_t)n + 1, sizeof *fns);
  int *nargs = calloc((size_t)n + 1, sizeof *nargs);
  if (fns && nargs) {
    for (int c = 0; c < n; c++) {
      fns[c] = net->fns[d->calls[d->ninit + c].func];
      nargs[c] = d->calls[d->ninit + c].nargs;
    }
    net->seq = rt_seq_new(fns, net->args + d->ninit, nargs, n);
  } else {
    net->seq = NULL;
    rt_set_error("%s: out of memory", d->name);
  }
  free(fns);
  free(nargs);
  for (int i = 0; i < d->ntensors; i++) net->seq_ptrs[i] = net->seq ? net->views[i].data : NULL;
  return net->seq != NULL;
}

int rt_net_run(RtNet *net, const void *const *inputs, void *const *outputs, int on_device) {
  const RtNetDesc *d = net->d;
  bool stage = net->dev.kind != RT_CPU && !on_device;
  if (on_device && net->dev.kind == RT_CPU) {
    rt_set_error("%s: a CPU library takes host pointers (use %s_run)", d->name, d->name);
    return 1;
  }
  for (int i = 0; i < d->ntensors; i++) {
    const RtNetTensor *t = &d->tensors[i];
    if (t->kind == RT_NET_INPUT) {
      if (stage && rt_tensor_from_host(net->in_dev[t->offset], inputs[t->offset])) return 1;
      net->views[i].data = stage ? net->in_dev[t->offset]->data : (void *)inputs[t->offset];
    } else if (t->kind == RT_NET_OUTPUT) net->views[i].data = stage ? net->out_dev[t->offset]->data : outputs[t->offset];
  }
  if (!sequence(net) || rt_seq_run(net->seq)) return 1;
  for (int o = 0; stage && o < d->noutputs; o++)
    if (rt_tensor_to_host(outputs[o], net->out_dev[o])) return 1;
  return 0;
}

void rt_net_destroy(RtNet *net) {
  if (!net) return;
  rt_seq_free(net->seq);
  free(net->seq_ptrs);
  for (int c = 0; net->args && c < net->d->ncalls; c++) free(net->args[c]);
  for (int i = 0; net->in_dev && i < net->d->ninputs; i++) rt_tensor_free(net->in_dev[i]);
  for (int i = 0; net->out_dev && i < net->d->noutputs; i++) rt_tensor_free(net->out_dev[i]);
  rt_tensor_free(net->arena);
  rt_tensor_free(net->folded);
  rt_tensor_free(net->weights_dev);
  if (net->m) rt_module_free(net->m);
  free(net->weights_host);
  free(net->args);
  free(net->in_dev);
  free(net->out_dev);
  free(net->views);
  free(net->fns);
  free(net);
}

/* The one-shot entry `NAME(inputs..., outputs...)`: a context created on the first call and
 * kept in *SLOT; calls are serialised (they share its arena). */
int rt_net_oneshot(const RtNetDesc *d, RtNet **slot, const void *const *inputs, void *const *outputs) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  if (!*slot) *slot = rt_net_create(d, NULL);
  int rc = *slot ? rt_net_run(*slot, inputs, outputs, 0) : 1;
  pthread_mutex_unlock(&lock);
  return rc;
}
