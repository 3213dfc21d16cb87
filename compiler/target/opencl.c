/* target/opencl.c — the OpenCL back end: OpenCL C from target/gpu_source.c, built and run by the
 * ICD loader in rt_opencl.c on the device that Options.opencl_device picks. */
#include "texc.h"

#include <string.h>

#include "rt_internal.h"

static bool opencl_emit(LoweredFunc **fns, int n, const char *kind, const char *path,
                        const Options *o) {
  if (strcmp(kind, "opencl") != 0) {
    diag_error((Loc){0}, "--emit %s does not apply to --target opencl (use opencl)", kind);
    return false;
  }
  char *src = cg_gpu_source(fns, n, TARGET_OPENCL, NULL);
  if (!src) return false;
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f) {
    diag_error((Loc){0}, "cannot write %s", path);
    return false;
  }
  fputs(src, f);
  if (f != stdout) fclose(f);
  else fflush(f);
  return true;
}

static struct RtModule *opencl_build(LoweredFunc **fns, int n, const Options *o) {
  int id;
  if (rt_opencl_query(o ? o->opencl_device : NULL, &id, NULL) != 0) {
    diag_error((Loc){0}, "%s", rt_last_error());
    return NULL;
  }
  RtGpuFunc *plans;
  char *src = cg_gpu_source(fns, n, TARGET_OPENCL, &plans);
  if (!src) return NULL;
  struct RtModule *m = rt_opencl_module(src, o ? o->opencl_device : NULL, plans, n);
  if (!m) diag_error((Loc){0}, "%s", rt_last_error());
  return m;
}

/* The limits of the device that O->opencl_device picks. */
static bool opencl_query(const Options *o, DeviceInfo *d) {
  int id;
  return rt_opencl_query(o ? o->opencl_device : NULL, &id, &d->gpu) == 0;
}

const Backend backend_opencl = {
    .id = TARGET_OPENCL,
    .name = "opencl",
    .device = DEVICE_GPU,
    .rt_device = RT_OPENCL,
    .allows_bind = true,
    .allows_vectorize = true,
    .kernel_scopes = true,
    .atomic_add = 1u << DT_I32 | 1u << DT_U32 | 1u << DT_F32, /* OpenCL 1.2's, f32 by compare-exchange */
    .atomic_minmax = 1u << DT_I32 | 1u << DT_U32,
    .default_emit = "opencl",
    .default_steps = gpu_default_steps,
    .check = gpu_check,
    .query = opencl_query,
    .emit = opencl_emit,
    .build = opencl_build,
};
