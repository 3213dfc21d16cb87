/* target/cuda.c — the CUDA back end: CUDA C from target/gpu_source.c, PTX through NVRTC,
 * modules through the driver API (rt_cuda.c).
 *
 * NVRTC is loaded with dlopen so that texc has no link-time dependency on the CUDA
 * toolkit: `--emit ptx` works wherever libnvrtc is, with or without a GPU.
 */
#include "texc.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

/* The NVRTC entry points texc uses (nvrtc.h's signatures; the handle is opaque). */
typedef struct Nvrtc {
  int (*create)(void **prog, const char *src, const char *name, int nheaders,
                const char *const *headers, const char *const *include_names);
  int (*compile)(void *prog, int nopts, const char *const *opts);
  int (*ptx_size)(void *prog, size_t *n);
  int (*ptx)(void *prog, char *out);
  int (*log_size)(void *prog, size_t *n);
  int (*log)(void *prog, char *out);
  int (*destroy)(void **prog);
  const char *(*error_string)(int rc);
} Nvrtc;

/* Load libnvrtc once; NULL (with a diagnostic) when it is nowhere to be found. */
static const Nvrtc *nvrtc(void) {
  static Nvrtc api;
  static int state; /* 0 untried, 1 loaded, -1 missing */
  if (state) return state > 0 ? &api : NULL;
  static const char *const libs[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                     "/usr/local/cuda/lib64/libnvrtc.so", NULL};
  void *h = NULL;
  const char *home = getenv("CUDA_HOME");
  if (home) h = dlopen(xprintf("%s/lib64/libnvrtc.so", home), RTLD_NOW | RTLD_LOCAL);
  for (int i = 0; !h && libs[i]; i++) h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  state = -1;
  if (!h) {
    diag_error((Loc){0}, "NVRTC not found (libnvrtc.so): install the CUDA toolkit or set CUDA_HOME");
    return NULL;
  }
  *(void **)&api.create = dlsym(h, "nvrtcCreateProgram");
  *(void **)&api.compile = dlsym(h, "nvrtcCompileProgram");
  *(void **)&api.ptx_size = dlsym(h, "nvrtcGetPTXSize");
  *(void **)&api.ptx = dlsym(h, "nvrtcGetPTX");
  *(void **)&api.log_size = dlsym(h, "nvrtcGetProgramLogSize");
  *(void **)&api.log = dlsym(h, "nvrtcGetProgramLog");
  *(void **)&api.destroy = dlsym(h, "nvrtcDestroyProgram");
  *(void **)&api.error_string = dlsym(h, "nvrtcGetErrorString");
  if (!api.create || !api.compile || !api.ptx_size || !api.ptx || !api.log_size || !api.log ||
      !api.destroy || !api.error_string) {
    diag_error((Loc){0}, "NVRTC: %s lacks the expected entry points", "libnvrtc.so");
    return NULL;
  }
  state = 1;
  return &api;
}

/* The virtual architecture to compile for: the device's, else compute_90. */
static const char *default_arch(void) {
  int major, minor;
  if (rt_cuda_query(0, &major, &minor, NULL) == 0) return xprintf("compute_%d%d", major, minor);
  return "compute_90";
}

char *cg_nvrtc_compile(const char *src, const char *arch) {
  const Nvrtc *api = nvrtc();
  if (!api) return NULL;
  void *prog = NULL;
  int rc = api->create(&prog, src, "texc.cu", 0, NULL, NULL);
  if (rc) {
    diag_error((Loc){0}, "NVRTC: %s", api->error_string(rc));
    return NULL;
  }
  const char *opts[] = {xprintf("--gpu-architecture=%s", arch ? arch : default_arch()),
                        "--std=c++14", "-default-device"};
  rc = api->compile(prog, 3, opts);
  char *ptx = NULL;
  if (rc) {
    size_t n = 0;
    api->log_size(prog, &n);
    char *log = xalloc(n + 1);
    api->log(prog, log);
    diag_error((Loc){0}, "NVRTC could not compile the generated CUDA (%s):\n%s",
               api->error_string(rc), log);
  } else {
    size_t n = 0;
    api->ptx_size(prog, &n);
    ptx = malloc(n + 1);
    if (!ptx) die_oom(0);
    api->ptx(prog, ptx);
    ptx[n] = 0;
  }
  api->destroy(&prog);
  return ptx;
}

static bool write_text(const char *path, const char *text) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f) {
    diag_error((Loc){0}, "cannot write %s", path);
    return false;
  }
  fputs(text, f);
  if (f != stdout) fclose(f);
  else fflush(f);
  return true;
}

/* ptxas: $PTXAS, else the one on PATH, else the toolkit's default place; NULL if none. */
static const char *find_ptxas(void) {
  const char *env = getenv("PTXAS");
  if (env && *env) return env;
  const char *path = getenv("PATH");
  static char buf[4096];
  for (const char *p = path; p && *p;) {
    const char *e = strchr(p, ':');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s/ptxas", (int)n, p);
    if (n && access(buf, X_OK) == 0) return buf;
    p = e ? e + 1 : NULL;
  }
  return access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas" : NULL;
}

/* `--emit ptx-info`: PTX assembled by `ptxas -v` for the PTX's own .target (sm_90 where
 * NVRTC had no device): per kernel its registers, spill stores and loads, shared memory.
 * Needs the toolkit's ptxas, not a GPU. */
static bool ptx_info(const char *ptx, const char *path) {
  const char *ptxas = find_ptxas();
  if (!ptxas) {
    diag_error((Loc){0}, "--emit ptx-info needs ptxas (set PTXAS or put it on PATH)");
    return false;
  }
  char arch[32] = "sm_90";
  const char *t = strstr(ptx, ".target ");
  if (t) sscanf(t + 8, "%31[a-z_0-9]", arch);
  char tmp[] = "/tmp/texc-ptx-XXXXXX";
  int fd = mkstemp(tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    diag_error((Loc){0}, "cannot write a temporary PTX file");
    return false;
  }
  fputs(ptx, f);
  fclose(f);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "'%s' -v --gpu-name %s '%s' -o /dev/null 2>&1", ptxas, arch, tmp);
  FILE *p = popen(cmd, "r");
  char out[16384];
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = 0;
  int st = p ? pclose(p) : -1;
  unlink(tmp);
  if (st != 0) {
    diag_error((Loc){0}, "ptxas failed: %s", out);
    return false;
  }
  return write_text(path, out);
}

static bool cuda_emit(LoweredFunc **fns, int n, const char *kind, const char *path,
                      const Options *o) {
  bool info = strcmp(kind, "ptx-info") == 0;
  if (strcmp(kind, "cuda") != 0 && strcmp(kind, "ptx") != 0 && !info) {
    diag_error((Loc){0}, "--emit %s does not apply to --target cuda (use cuda, ptx or ptx-info)",
               kind);
    return false;
  }
  char *src = cg_gpu_source(fns, n, TARGET_CUDA, NULL);
  if (!src) return false;
  if (strcmp(kind, "cuda") == 0) return write_text(path, src);
  char *ptx = cg_nvrtc_compile(src, NULL);
  if (!ptx) return false;
  bool ok = info ? ptx_info(ptx, path) : write_text(path, ptx);
  free(ptx);
  return ok;
}

static struct RtModule *cuda_build(LoweredFunc **fns, int n, const Options *o) {
  if (rt_cuda_query(0, NULL, NULL, NULL) != 0) {
    diag_error((Loc){0}, "%s", rt_last_error());
    return NULL;
  }
  RtGpuFunc *plans;
  char *src = cg_gpu_source(fns, n, TARGET_CUDA, &plans);
  if (!src) return NULL;
  char *ptx = cg_nvrtc_compile(src, NULL);
  if (!ptx) return NULL;
  struct RtModule *m = rt_cuda_module(ptx, plans, n);
  free(ptx);
  if (!m) diag_error((Loc){0}, "%s", rt_last_error());
  return m;
}

/* The limits of CUDA device 0. */
static bool cuda_query(const Options *o, DeviceInfo *d) {
  (void)o;
  return rt_cuda_query(0, NULL, NULL, &d->gpu) == 0;
}

const Backend backend_cuda = {
    .id = TARGET_CUDA,
    .name = "cuda",
    .device = DEVICE_GPU,
    .rt_device = RT_CUDA,
    .allows_bind = true,
    .allows_vectorize = true,
    .kernel_scopes = true,
    .atomic_add = 1u << DT_I32 | 1u << DT_U32 | 1u << DT_I64 | 1u << DT_F32 | 1u << DT_F64,
    .atomic_minmax = 1u << DT_I32 | 1u << DT_U32 | 1u << DT_I64,
    .default_emit = "ptx",
    .default_steps = gpu_default_steps,
    .check = gpu_check,
    .query = cuda_query,
    .emit = cuda_emit,
    .build = cuda_build,
};
