/* util.c — arenas, strings, growable arrays, dtypes. */
#include "texc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct Chunk {
  struct Chunk *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} Chunk;

struct Arena {
  Chunk *head;
};

static Arena root_arena;
static Arena *current = &root_arena;

Arena *arena_new(void) {
  Arena *a = calloc(1, sizeof *a);
  if (!a) die_oom(0);
  return a;
}

void arena_free(Arena *a) {
  for (Chunk *c = a->head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  a->head = NULL;
  if (a != &root_arena) free(a);
}

Arena *arena_swap(Arena *a) {
  Arena *old = current;
  current = a ? a : &root_arena;
  return old;
}

void *xalloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  Chunk *c = current->head;
  if (!c || c->used + n > c->size) {
    size_t size = n > 65536 ? n : 65536;
    c = malloc(sizeof(Chunk) + size);
    if (!c) die_oom(sizeof(Chunk) + size);
    c->size = size;
    c->used = 0;
    c->next = current->head;
    current->head = c;
  }
  void *p = c->data + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

char *xstrndup(const char *s, size_t n) {
  char *p = xalloc(n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xprintf(const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = xalloc((size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  return p;
}

char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) die_oom(0);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) { /* a directory opens but does not read (EISDIR): not an empty file */
    int e = errno;
    fclose(f);
    free(buf);
    errno = e ? e : EIO;
    return NULL;
  }
  fclose(f);
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

void vec_push(Vec *v, void *p) {
  if (v->len == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void **data = xalloc(sizeof(void *) * (size_t)cap);
    if (v->len) memcpy(data, v->data, sizeof(void *) * (size_t)v->len);
    v->data = data;
    v->cap = cap;
  }
  v->data[v->len++] = p;
}

/* ORDER DType */
static const char *const dtype_names[DT_COUNT] = {"bool", "i8",  "i16", "i32", "i64",
                                                  "u8",   "u32", "f16", "f32", "f64"};
static const int dtype_sizes[DT_COUNT] = {1, 1, 2, 4, 8, 1, 4, 2, 4, 8};

/* ORDER Target (texc.h): the names --target takes and every table keyed by Target prints. */
const char *const target_names[TARGET_COUNT] = {
    [TARGET_LLVM] = "llvm",
    [TARGET_CUDA] = "cuda",
    [TARGET_OPENCL] = "opencl",
};

const char *dtype_name(DType t) { return (unsigned)t < DT_COUNT ? dtype_names[t] : "?"; }

bool dtype_parse(const char *s, DType *out) {
  for (int i = 0; i < DT_COUNT; i++)
    if (strcmp(s, dtype_names[i]) == 0) {
      *out = (DType)i;
      return true;
    }
  return false;
}

int dtype_bytes(DType t) { return dtype_sizes[t]; }
bool dtype_is_float(DType t) { return t == DT_F16 || t == DT_F32 || t == DT_F64; }
bool dtype_is_int(DType t) { return t >= DT_I8 && t <= DT_U32; }
bool dtype_is_signed(DType t) { return t >= DT_I8 && t <= DT_I64; }

int64_t dtype_wrap(DType t, int64_t v) {
  switch (t) {
  case DT_BOOL: return v != 0;
  case DT_I8: return (int8_t)v;
  case DT_I16: return (int16_t)v;
  case DT_I32: return (int32_t)v;
  case DT_U8: return (uint8_t)v;
  case DT_U32: return (uint32_t)v;
  default: return v;
  }
}


/* IEEE half precision <-> float: the interpreter's f16 storage and texc's comparisons. */
float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f) bits = sign | 0x7f800000 | (man << 13);
  else if (exp) bits = sign | ((exp + 112) << 23) | (man << 13);
  else if (!man) bits = sign;
  else { /* subnormal: normalise */
    exp = 113;
    while (!(man & 0x400)) {
      man <<= 1;
      exp--;
    }
    bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Round to nearest even, with overflow to infinity and gradual underflow. */
uint16_t f32_to_f16(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  uint32_t sign = (b >> 16) & 0x8000, absb = b & 0x7fffffff;
  if (absb >= 0x7f800000) return (uint16_t)(sign | 0x7c00 | (absb > 0x7f800000 ? 0x200 : 0));
  if (absb >= 0x477ff000) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520 */
  if (absb < 0x38800000) {                                     /* below 2^-14: subnormal */
    if (absb < 0x33000000) return (uint16_t)sign;              /* below half the smallest */
    uint32_t exp = absb >> 23, man = (absb & 0x7fffff) | 0x800000;
    int shift = (int)(126 - exp); /* bits to drop to reach units of 2^-24 */
    uint32_t q = man >> (shift), rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t h = ((absb >> 13) - (112u << 10)), rem = absb & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

/* splitmix64: a fixed, portable sequence, so every run sees the same inputs. */
static uint64_t next_random(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool fill_int_edges;

/* An integer of dtype T at or near its edges (R: random bits): MIN, MIN + 1, MAX, MAX - 1,
 * 0, 1, -1, MIN / 2, MAX / 2 + 1 (the values where + - * / wrap or trap). */
static int64_t edge_value(DType t, uint64_t r) {
  int bits = 8 * dtype_bytes(t);
  bool sgn = dtype_is_signed(t);
  int64_t hi = bits == 64 ? INT64_MAX : sgn ? (INT64_C(1) << (bits - 1)) - 1 : (INT64_C(1) << bits) - 1;
  int64_t lo = sgn ? -hi - 1 : 0;
  int64_t v[] = {lo, lo + 1, hi, hi - 1, 0, 1, -1, lo / 2, hi / 2 + 1};
  return dtype_wrap(t, v[r % (sizeof v / sizeof v[0])]);
}

void fill_random(void *data, DType t, int64_t n, uint64_t seed) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_random(&s);
    double u = (double)(r >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    int64_t k = (int64_t)(r % 7) - 3;
    if (fill_int_edges && dtype_is_int(t) && (r >> 60) < 8) k = edge_value(t, r >> 3);
    switch (t) {
    case DT_F32: ((float *)data)[i] = (float)u; break;
    case DT_F64: ((double *)data)[i] = u; break;
    case DT_F16: /* u rounded to 1/64: exact in half precision */
      ((uint16_t *)data)[i] = f32_to_f16((float)((int)(u * 64)) / 64.0f);
      break;
    case DT_BOOL: ((uint8_t *)data)[i] = (uint8_t)(r & 1); break;
    case DT_I8: ((int8_t *)data)[i] = (int8_t)k; break;
    case DT_U8: ((uint8_t *)data)[i] = (uint8_t)(fill_int_edges ? k : (int64_t)(r % 7)); break;
    case DT_I16: ((int16_t *)data)[i] = (int16_t)k; break;
    case DT_I32: ((int32_t *)data)[i] = (int32_t)k; break;
    case DT_U32: ((uint32_t *)data)[i] = (uint32_t)(fill_int_edges ? k : (int64_t)(r % 7)); break;
    case DT_I64: ((int64_t *)data)[i] = k; break;
    default: break;
    }
  }
}

/* ---- C symbols ---- */

/* The names a library of kernels is linked with: the C library (C11 and POSIX functions
 * and the macros and objects a C program sees), libm (each also with its f and l forms),
 * the dynamic loader, and the OpenCL and CUDA entry points texc's runtime calls. Exported
 * under one of these, a kernel would replace the library's function in every program that
 * links it (a kernel named malloc becomes the program's allocator), or break the module
 * that calls it (free, aligned_alloc). Names with a reserved prefix: reserved_prefixes. */
static const char *const c_symbols[] = {
    /* stdlib.h */
    "abort", "abs", "aligned_alloc", "atexit", "at_quick_exit", "atof", "atoi", "atol", "atoll",
    "bsearch", "calloc", "div", "exit", "free", "getenv", "labs", "ldiv", "llabs", "lldiv",
    "malloc", "mblen", "mbstowcs", "mbtowc", "memalign", "posix_memalign", "pvalloc", "qsort",
    "quick_exit", "rand", "rand_r", "realloc", "reallocarray", "setenv", "srand", "strtod",
    "strtof", "strtol", "strtold", "strtoll", "strtoul", "strtoull", "system", "unsetenv",
    "valloc", "wcstombs", "wctomb", "mkstemp", "mkstemps", "mkdtemp", "realpath",
    /* string.h, strings.h */
    "bcmp", "bcopy", "bzero", "memccpy", "memchr", "memcmp", "memcpy", "memmove", "mempcpy",
    "memset", "stpcpy", "stpncpy", "strcasecmp", "strcat", "strchr", "strcmp", "strcoll",
    "strcpy", "strcspn", "strdup", "strerror", "strlen", "strncasecmp", "strncat", "strncmp",
    "strncpy", "strndup", "strnlen", "strpbrk", "strrchr", "strsignal", "strspn", "strstr",
    "strtok", "strtok_r", "strxfrm",
    /* stdio.h */
    "clearerr", "dprintf", "fclose", "fdopen", "feof", "ferror", "fflush", "fgetc", "fgetpos",
    "fgets", "fileno", "fopen", "fprintf", "fputc", "fputs", "fread", "freopen", "fscanf",
    "fseek", "fsetpos", "ftell", "fwrite", "getc", "getchar", "getdelim", "getline", "gets",
    "pclose", "perror", "popen", "printf", "putc", "putchar", "puts", "remove", "rename",
    "rewind", "scanf", "setbuf", "setvbuf", "snprintf", "sprintf", "sscanf", "stderr", "stdin",
    "stdout", "tmpfile", "tmpnam", "ungetc", "vfprintf", "vprintf", "vsnprintf", "vsprintf",
    /* ctype.h, errno.h, assert.h, signal.h, setjmp.h, time.h */
    "isalnum", "isalpha", "isblank", "iscntrl", "isdigit", "isgraph", "islower", "isprint",
    "ispunct", "isspace", "isupper", "isxdigit", "tolower", "toupper", "errno", "assert",
    "signal", "raise", "sigaction", "setjmp", "longjmp", "asctime", "clock", "clock_gettime",
    "ctime", "difftime", "gmtime", "localtime", "mktime", "nanosleep", "strftime", "time",
    "timespec_get",
    /* POSIX (unistd.h, fcntl.h, sys/ headers, sched.h, dlfcn.h) and the loader */
    "access", "chdir", "close", "dup", "dup2", "environ", "execl", "execlp", "execv", "execve",
    "execvp", "fcntl", "fork", "fstat", "getcwd", "getpid", "getppid", "ioctl", "isatty",
    "kill", "lseek", "lstat", "mkdir", "mmap", "mprotect", "munmap", "open", "pipe", "poll",
    "read", "readlink", "rmdir", "select", "sleep", "stat", "sysconf", "unlink", "usleep",
    "wait", "waitpid", "write", "sched_yield", "dlclose", "dlerror", "dlopen", "dlsym",
    "main", "etext", "edata",
    /* libm: also NAMEf and NAMEl (c_symbol_clash) */
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
    "cos", "cosh", "erf", "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "fdim", "floor",
    "fma", "fmax", "fmin", "fmod", "frexp", "gamma", "hypot", "ilogb", "j0", "j1", "jn",
    "ldexp", "lgamma", "llrint", "llround", "log", "log10", "log1p", "log2", "logb", "lrint",
    "lround", "modf", "nan", "nearbyint", "nextafter", "nexttoward", "pow", "remainder",
    "remquo", "rint", "round", "scalbln", "scalbn", "sin", "sincos", "sinh", "sqrt", "tan",
    "tanh", "tgamma", "trunc", "y0", "y1", "yn", NULL};

/* Prefixes of names that are not the user's to export: C reserves every external name
 * that starts with '_' (texc's own symbols are __texc_*), texc's runtime is rt_*, and the
 * threads, OpenCL, CUDA and NVRTC libraries the runtime calls are pthread_*, cl*, cu*. */
static const char *const reserved_prefixes[] = {"_", "rt_", "pthread_", "cl", "cu", "nvrtc", NULL};

/* Why NAME cannot be an exported symbol (a phrase after "which is"), or NULL. */
const char *c_symbol_clash(const char *name) {
  size_t n = strlen(name);
  for (int i = 0; c_symbols[i]; i++) {
    size_t m = strlen(c_symbols[i]);
    bool fl = n == m + 1 && (name[m] == 'f' || name[m] == 'l');
    if ((n == m || fl) && strncmp(name, c_symbols[i], m) == 0)
      return "a name of the C library (a program linking it would call the kernel instead)";
  }
  for (int i = 0; reserved_prefixes[i]; i++) {
    const char *p = reserved_prefixes[i];
    size_t m = strlen(p);
    bool camel = p[m - 1] != '_'; /* cl, cu, nvrtc only before a capital: clip is fine */
    if (strncmp(name, p, m) != 0 || (camel && !(name[m] >= 'A' && name[m] <= 'Z'))) continue;
    if (m == 1) return "reserved for the C implementation (names that start with '_'; texc's own are __texc_*)";
    return xprintf("reserved for the libraries texc links with (%s%s)", p, camel ? "[A-Z]*" : "*");
  }
  return NULL;
}

