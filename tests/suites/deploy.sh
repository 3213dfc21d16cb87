#!/bin/bash
# tests/suites/deploy.sh — texc-built kernels used as a library: `--emit so` + `--emit header`,
# linked into examples/deploy/deploy.c, called directly (a fixed-size matmul, a symbolic-size
# saxpy with two sizes), then loaded through the runtime (rt_module_load).
cd "$(dirname "$0")/../.."
TEXC=${TEXC:-$PWD/build/texc}
BUILD=${BUILD:-build}
OUT=$(mktemp -d /tmp/texc-deploy-XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# A sanitizer build of texc bundles an instrumented runtime into the library: link likewise.
SAN=""
nm -D "$TEXC" 2>/dev/null | grep -q __asan_init && SAN="-fsanitize=address,undefined"
if ! make -s -C examples/deploy TEXC="$TEXC" OUT="$OUT" ${SAN:+CC="cc $SAN"} >"$OUT/build.log" 2>&1; then
  echo "not ok - deploy build (texc --emit so/header, cc)"
  sed 's/^/  # /' "$OUT/build.log" | head -20
  exit 0
fi
echo "ok - deploy build (texc --emit so/header, cc)"
"$OUT/deploy" 2>&1 || echo "not ok - deploy run exited $?"

# The same library through the runtime API.
cat >"$OUT/load.c" <<'C'
#include <stdio.h>
#include "texrt.h"
int main(int argc, char **argv) {
  RtModule *m = rt_module_load(argv[1]);
  RtFunc *f = m ? rt_module_func(m, "saxpy") : NULL;
  if (!f) { printf("not ok - rt_module_load: %s\n", rt_last_error()); return 1; }
  int64_t n = 100;
  RtDevice cpu = {RT_CPU, 0};
  RtTensor *x = rt_tensor_alloc(cpu, 4, 1, &n), *y = rt_tensor_alloc(cpu, 4, 1, &n), *z = rt_tensor_alloc(cpu, 4, 1, &n);
  float *xs = x->data, *ys = y->data, *zs = z->data;
  for (int i = 0; i < n; i++) xs[i] = (float)i, ys[i] = 1.0f;
  RtTensor *args[3] = {x, y, z};
  int ok = rt_func_call(f, args, 3, &n, 1) == 0 && zs[99] == 199.0f && zs[0] == 1.0f;
  ok = ok && rt_func_call(f, args, 2, &n, 1) != 0; /* wrong arity is refused */
  printf("%s - rt_module_load + rt_func_call (symbolic size)\n", ok ? "ok" : "not ok");
  rt_module_free(m);
  return !ok;
}
C
if cc $SAN -O1 -Iruntime -o "$OUT/load" "$OUT/load.c" "$BUILD/libtexrt.a" -ldl -lpthread -lm 2>"$OUT/cc.log"; then
  "$OUT/load" "$OUT/libkernels.so"
else
  echo "not ok - rt_module_load + rt_func_call (symbolic size): cc failed"
  sed 's/^/  # /' "$OUT/cc.log" | head -10
fi
