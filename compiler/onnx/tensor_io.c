/* tensor_io.c — host tensors in files: numpy's .npy (inputs and outputs of `texc run`),
 * safetensors (a network's weights), serialized onnx.TensorProto (.pb: ONNX's test data).
 *
 *   .npy          "\x93NUMPY", version 1.x (2-byte header length) or 2.x/3.x (4-byte), a
 *                 Python dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), },
 *                 padded to 64 bytes, then the raw data
 *   .safetensors  8-byte little-endian header length N, N bytes of JSON
 *                 {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, ...},
 *                 then the data (offsets from the end of the header), every byte of it in
 *                 exactly one tensor (safetensors' own rule: no gap, nothing after the last)
 *
 * Only f32 is read as such; .npy of f64 and f16 are rounded to f32, of integers converted
 * when every value is exact in f32 (else an error).
 */
#include "onnx/onnx.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

int64_t ht_numel(const HostTensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) n *= t->shape[d];
  return n;
}

HostTensor *ws_find(const WeightSet *w, const char *name) {
  for (int i = 0; w && i < w->n; i++)
    if (strcmp(w->t[i].name, name) == 0) return &w->t[i];
  return NULL;
}

void ws_add(WeightSet *w, HostTensor t) {
  HostTensor *n = xalloc(sizeof *n * (size_t)(w->n + 1));
  if (w->n) memcpy(n, w->t, sizeof *n * (size_t)w->n);
  n[w->n++] = t;
  w->t = n;
}

static bool fail(const char *path, const char *what) {
  diag_error((Loc){0}, "%s: %s", path, what);
  return false;
}

/* Little-endian integers of a byte buffer (the host is little-endian: x86-64, aarch64). */
static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The product of SHAPE's N dimensions, false when one is negative or it exceeds 2^40. */
static bool shape_numel(const int64_t *shape, int n, int64_t *out) {
  int64_t m = 1;
  for (int d = 0; d < n; d++) {
    if (shape[d] < 0 || (shape[d] && m > ((int64_t)1 << 40) / shape[d])) return false;
    m *= shape[d];
  }
  *out = m;
  return true;
}

/* ---- .npy ------------------------------------------------------------------------ */

/* The value of KEY in a .npy header dict (the text after "'KEY':"), or NULL. */
static const char *npy_field(const char *hdr, const char *key) {
  const char *p = strstr(hdr, xprintf("'%s'", key));
  if (!p) return NULL;
  p = strchr(p + strlen(key) + 2, ':');
  if (!p) return NULL;
  for (p++; *p == ' '; p++) {}
  return p;
}

/* Element size and kind of a numpy descr: 'f' float, 'i' signed, 'u' unsigned. */
static bool npy_descr(const char *d, char *kind, int *size) {
  if (d[0] != '\'' || (d[1] != '<' && d[1] != '|' && d[1] != '=')) return false;
  *kind = d[2];
  *size = atoi(d + 3);
  if (*kind == 'f') return *size == 4 || *size == 8 || *size == 2;
  if (*kind == 'i' || *kind == 'u') return *size == 1 || *size == 2 || *size == 4 || *size == 8;
  if (*kind == 'b') return *size == 1;
  return false;
}

/* f16 bits to float. */
static float half_to_float(uint16_t h) {
  int e = h >> 10 & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}

/* N elements of KIND/SIZE at P as f32; false (after WHY) when one is not exact. */
static bool to_f32(const unsigned char *p, char kind, int size, int64_t n, float *out, const char **why) {
  for (int64_t i = 0; i < n; i++, p += size) {
    double v;
    if (kind == 'f' && size == 4) {
      memcpy(&out[i], p, 4);
      continue;
    }
    if (kind == 'f' && size == 2) {
      uint16_t h;
      memcpy(&h, p, 2);
      out[i] = half_to_float(h);
      continue;
    }
    if (kind == 'f') {
      memcpy(&v, p, 8);
    } else {
      int64_t s = 0;
      uint64_t u = 0;
      memcpy(&u, p, (size_t)size);
      if (kind == 'i' && size < 8 && (u >> (size * 8 - 1) & 1)) u |= ~(uint64_t)0 << (size * 8);
      s = (int64_t)u;
      v = kind == 'u' || kind == 'b' ? (double)u : (double)s;
    }
    out[i] = (float)v;
    if (kind != 'f' && (double)out[i] != v) { /* f64 rounds; an integer must be exact */
      *why = xprintf("element %lld (%.17g) is not exact as f32", (long long)i, v);
      return false;
    }
  }
  return true;
}

/* The texc dtype of a numpy KIND/SIZE, or DT_COUNT (u16, u64: none). */
static DType npy_dtype(char kind, int size) {
  switch (kind) {
  case 'f': return size == 2 ? DT_F16 : size == 4 ? DT_F32 : DT_F64;
  case 'i': return size == 1 ? DT_I8 : size == 2 ? DT_I16 : size == 4 ? DT_I32 : DT_I64;
  case 'u': return size == 1 ? DT_U8 : size == 4 ? DT_U32 : DT_COUNT;
  default: return DT_BOOL;
  }
}

/* The tuple SH of a .npy header ("(2, 3, )") into ND, SHAPE; false when it is malformed. */
static bool npy_shape(const char *sh, int *nd, int64_t *shape) {
  *nd = 0;
  for (const char *p = sh + 1; *p && *p != ')';) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0 || *nd == HT_MAX_DIMS) return false;
    shape[(*nd)++] = d;
    p = end;
  }
  return true;
}

bool npy_read_shape(const char *path, int *nd, int64_t *shape) {
  unsigned char pre[12];
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = fread(pre, 1, sizeof pre, f) == sizeof pre && memcmp(pre, "\x93NUMPY", 6) == 0 && pre[6] >= 1 && pre[6] <= 3;
  size_t hlen = !ok ? 0 : pre[6] == 1 ? (size_t)(pre[8] | pre[9] << 8) : (size_t)(pre[8] | pre[9] << 8 | pre[10] << 16 | (uint32_t)pre[11] << 24);
  char *hdr = ok && hlen < (1u << 20) ? calloc(1, hlen + 1) : NULL;
  ok = hdr && fseek(f, pre[6] == 1 ? 10 : 12, SEEK_SET) == 0 && fread(hdr, 1, hlen, f) == hlen;
  fclose(f);
  const char *sh = ok ? npy_field(hdr, "shape") : NULL;
  ok = sh && *sh == '(' && npy_shape(sh, nd, shape);
  free(hdr);
  return ok;
}

bool npy_read_array(const char *path, NpyArray *a) {
  size_t len;
  unsigned char *b = (unsigned char *)read_file(path, &len);
  if (!b) return fail(path, "cannot read the file");
  if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) return free(b), fail(path, "not a .npy file (no \\x93NUMPY magic)");
  size_t hlen = b[6] == 1 ? (size_t)(b[8] | b[9] << 8) : (size_t)(b[8] | b[9] << 8 | b[10] << 16 | (uint32_t)b[11] << 24);
  size_t hstart = b[6] == 1 ? 10 : 12;
  if (b[6] < 1 || b[6] > 3 || hstart + hlen > len) return free(b), fail(path, "truncated or unknown .npy header");
  char *hdr = xalloc(hlen + 1);
  memcpy(hdr, b + hstart, hlen);
  const char *descr = npy_field(hdr, "descr"), *fo = npy_field(hdr, "fortran_order"), *sh = npy_field(hdr, "shape");
  char kind;
  int size;
  if (!descr || !fo || !sh || *sh != '(') return free(b), fail(path, "a .npy header without descr, fortran_order and shape");
  if (!npy_descr(descr, &kind, &size))
    return free(b), fail(path, xprintf("dtype %.*s is not supported (f32, f64, f16, integers)",
                                       (int)(strchr(descr + 1, '\'') ? strchr(descr + 1, '\'') - descr + 1 : 1), descr));
  if (strncmp(fo, "False", 5) != 0) return free(b), fail(path, "fortran_order arrays are not supported");
  memset(a, 0, sizeof *a);
  if (!npy_shape(sh, &a->ndim, a->shape)) return free(b), fail(path, "a bad shape in the .npy header");
  int64_t n;
  if (!shape_numel(a->shape, a->ndim, &n)) return free(b), fail(path, "the .npy shape is too large");
  size_t data = hstart + hlen;
  if (len - data != (size_t)n * (size_t)size)
    return free(b), fail(path, xprintf("the data is %zu bytes, but shape and dtype say %lld", len - data, (long long)n * size));
  a->kind = kind;
  a->size = size;
  a->dtype = npy_dtype(kind, size);
  a->data = malloc((size_t)n * (size_t)size + 1);
  if (!a->data) die_oom((size_t)n * (size_t)size);
  memcpy(a->data, b + data, (size_t)n * (size_t)size);
  free(b);
  return true;
}

char *npy_type_text(const NpyArray *a) {
  char *s = a->kind == 'b' ? xstrdup("bool") : xprintf("%c%d", a->kind, a->size * 8);
  for (int d = 0; d < a->ndim; d++) s = xprintf("%s%s%lld", s, d ? ", " : "[", (long long)a->shape[d]);
  return xprintf("%s%s", s, a->ndim ? "]" : "[]");
}

bool npy_read(const char *path, HostTensor *t) {
  NpyArray a;
  if (!npy_read_array(path, &a)) return false;
  memset(t, 0, sizeof *t);
  t->ndim = a.ndim;
  memcpy(t->shape, a.shape, sizeof a.shape);
  int64_t n = ht_numel(t);
  t->data = malloc(sizeof(float) * (size_t)(n ? n : 1));
  const char *why = NULL;
  bool ok = to_f32(a.data, a.kind, a.size, n, t->data, &why);
  free(a.data);
  if (!ok) return free(t->data), fail(path, why);
  t->name = path;
  return true;
}

/* The numpy descr of texc dtype T. */
static const char *npy_descr_of(DType t) {
  static const char *const d[DT_COUNT] = {
      [DT_BOOL] = "|b1", [DT_I8] = "|i1", [DT_I16] = "<i2", [DT_I32] = "<i4", [DT_I64] = "<i8",
      [DT_U8] = "|u1",   [DT_U32] = "<u4", [DT_F16] = "<f2", [DT_F32] = "<f4", [DT_F64] = "<f8"};
  return d[t];
}

bool npy_write_array(const char *path, DType dt, int ndim, const int64_t *shape, const void *data) {
  char *sh = xstrdup("");
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    sh = xprintf("%s%lld,%s", sh, (long long)shape[d], d + 1 < ndim ? " " : "");
    n *= shape[d];
  }
  char *dict = xprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", npy_descr_of(dt), sh);
  size_t hlen = strlen(dict) + 1, pad = (64 - (10 + hlen) % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f) return fail(path, "cannot write the file");
  unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)((hlen + pad) & 255), (unsigned char)((hlen + pad) >> 8)};
  fwrite(magic, 1, 10, f);
  fputs(dict, f);
  for (size_t i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
  fwrite(data, (size_t)dtype_bytes(dt), (size_t)n, f);
  if (fclose(f) != 0) return fail(path, "cannot write the file");
  return true;
}

bool npy_write(const char *path, const HostTensor *t) {
  return npy_write_array(path, DT_F32, t->ndim, t->shape, t->data);
}

/* ---- safetensors ----------------------------------------------------------------- */

bool safetensors_write(const char *path, const WeightSet *w) {
  cJSON *root = cJSON_CreateObject();
  size_t off = 0;
  for (int i = 0; i < w->n; i++) {
    const HostTensor *t = &w->t[i];
    cJSON *e = cJSON_AddObjectToObject(root, t->name);
    cJSON_AddStringToObject(e, "dtype", "F32");
    cJSON *sh = cJSON_AddArrayToObject(e, "shape");
    for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)t->shape[d]));
    size_t bytes = sizeof(float) * (size_t)ht_numel(t);
    cJSON *o = cJSON_AddArrayToObject(e, "data_offsets");
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)off));
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)(off + bytes)));
    off += bytes;
  }
  char *json = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  size_t n = strlen(json), pad = (8 - n % 8) % 8; /* the data 8-aligned, as the format asks */
  FILE *f = fopen(path, "wb");
  if (!f) return free(json), fail(path, "cannot write the file");
  unsigned char len[8];
  for (int i = 0; i < 8; i++) len[i] = (unsigned char)((n + pad) >> (8 * i));
  fwrite(len, 1, 8, f);
  fwrite(json, 1, n, f);
  for (size_t i = 0; i < pad; i++) fputc(' ', f);
  free(json);
  for (int i = 0; i < w->n; i++) fwrite(w->t[i].data, sizeof(float), (size_t)ht_numel(&w->t[i]), f);
  if (fclose(f) != 0) return fail(path, "cannot write the file");
  return true;
}

/* One entry of a safetensors header into T; false after the error. */
static bool st_entry(const char *path, const cJSON *e, const unsigned char *data, size_t dlen, HostTensor *t) {
  const char *name = e->string;
  cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype"), *sh = cJSON_GetObjectItemCaseSensitive(e, "shape"),
        *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
  if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2)
    return fail(path, xprintf("tensor '%s': the header needs dtype, shape and data_offsets", name));
  if (strcmp(dt->valuestring, "F32") != 0)
    return fail(path, xprintf("tensor '%s' is %s; networks take F32", name, dt->valuestring));
  memset(t, 0, sizeof *t);
  t->name = xstrdup(name);
  if (cJSON_GetArraySize(sh) > HT_MAX_DIMS) return fail(path, xprintf("tensor '%s' has too many dimensions", name));
  const cJSON *d;
  cJSON_ArrayForEach(d, sh) {
    if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble != floor(d->valuedouble))
      return fail(path, xprintf("tensor '%s': a bad dimension", name));
    t->shape[t->ndim++] = (int64_t)d->valuedouble;
  }
  int64_t n;
  double b = cJSON_GetArrayItem(of, 0)->valuedouble, e2 = cJSON_GetArrayItem(of, 1)->valuedouble;
  if (!shape_numel(t->shape, t->ndim, &n)) return fail(path, xprintf("tensor '%s' is too large", name));
  if (!(b >= 0 && e2 >= b && e2 <= (double)dlen))
    return fail(path, xprintf("tensor '%s': data_offsets [%.0f, %.0f] outside the %zu bytes of data (truncated?)", name, b, e2, dlen));
  if ((e2 - b) != (double)n * 4)
    return fail(path, xprintf("tensor '%s': %.0f bytes of data, but its shape needs %lld", name, e2 - b, (long long)n * 4));
  t->data = malloc(sizeof(float) * (size_t)(n ? n : 1));
  memcpy(t->data, data + (size_t)b, (size_t)n * 4);
  return true;
}

/* A tensor's bytes in the data of a safetensors file. */
typedef struct Span {
  const char *name;
  double begin, end;
} Span;

static int span_cmp(const void *a, const void *b) {
  const Span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

/* Do the N spans S (sorted here) index the DLEN bytes of data exactly: one after the
 * other from byte 0, no gap, no overlap, nothing after the last? What safetensors' own
 * reader asks (MetadataIncompleteBuffer). Else the error. */
static bool spans_cover(const char *path, Span *s, int n, size_t dlen) {
  qsort(s, (size_t)n, sizeof *s, span_cmp);
  double at = 0;
  for (int i = 0; i < n; i++) {
    if (s[i].begin > at)
      return fail(path, xprintf("bytes %.0f..%.0f of the data are in no tensor (a gap before '%s')", at, s[i].begin, s[i].name));
    if (s[i].begin < at) return fail(path, xprintf("tensors '%s' and '%s' overlap", s[i - 1].name, s[i].name));
    at = s[i].end;
  }
  if (at < (double)dlen)
    return fail(path, xprintf("%.0f bytes after the last tensor (a corrupt file, or another network's)", (double)dlen - at));
  return true;
}

bool safetensors_read(const char *path, WeightSet *w) {
  size_t len;
  unsigned char *b = (unsigned char *)read_file(path, &len);
  if (!b) return fail(path, "cannot read the weights file");
  uint64_t hlen = len >= 8 ? le64(b) : 0;
  if (len < 8 || hlen > len - 8) return free(b), fail(path, "not a safetensors file (header length beyond the file: truncated?)");
  cJSON *root = cJSON_ParseWithLength((const char *)b + 8, (size_t)hlen);
  if (!cJSON_IsObject(root)) return cJSON_Delete(root), free(b), fail(path, "not a safetensors file (its header is not a JSON object)");
  memset(w, 0, sizeof *w);
  w->file = path;
  const cJSON *e;
  bool ok = true;
  size_t dlen = len - 8 - (size_t)hlen;
  Span *spans = xalloc(sizeof *spans * (size_t)(cJSON_GetArraySize(root) + 1));
  cJSON_ArrayForEach(e, root) {
    if (strcmp(e->string, "__metadata__") == 0) continue;
    HostTensor t;
    if (!(ok = st_entry(path, e, b + 8 + hlen, dlen, &t))) break;
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    spans[w->n] = (Span){t.name, cJSON_GetArrayItem(of, 0)->valuedouble, cJSON_GetArrayItem(of, 1)->valuedouble};
    ws_add(w, t);
  }
  if (ok) ok = spans_cover(path, spans, w->n, dlen);
  cJSON_Delete(root);
  free(b);
  return ok;
}

/* ---- onnx.TensorProto ------------------------------------------------------------ */

bool pb_tensor_read(const char *path, HostTensor *t) {
  size_t len;
  unsigned char *b = (unsigned char *)read_file(path, &len);
  if (!b) return fail(path, "cannot read the file");
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, b);
  free(b);
  if (!tp) return fail(path, "not a serialized onnx.TensorProto (truncated or corrupt)");
  memset(t, 0, sizeof *t);
  const char *why = NULL;
  bool ok = onnx_tensor_f32(tp, t, &why);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  if (!ok) return fail(path, why);
  t->name = path;
  return true;
}

bool tensor_file_read(const char *path, HostTensor *t) {
  size_t n = strlen(path);
  if (n > 4 && strcmp(path + n - 4, ".npy") == 0) return npy_read(path, t);
  if (n > 3 && strcmp(path + n - 3, ".pb") == 0) return pb_tensor_read(path, t);
  return fail(path, "an input is a .npy file (or an onnx TensorProto .pb)");
}
