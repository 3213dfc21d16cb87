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

# ---- one library per network (docs/DEPLOY.md) ------------------------------------------
# examples/deploy/classify.cpp on the small CNN examples/deploy/tiny_cnn.tex: the library's
# result against `texc run` on the same input, byte for byte; one-shot against
# create/run/destroy; nothing of texc needed at run time; weights in a file, and a wrong one.
CXX_SAN=""
[ -n "$SAN" ] && CXX_SAN="c++ $SAN"
export CC="cc $SAN" # texc links the libraries with $CC
NETOUT="$OUT/net"
if ! make -s -C examples/deploy classify TEXC="$TEXC" OUT="$NETOUT" NET=tiny_cnn.tex ${SAN:+CC="cc $SAN" CXX="$CXX_SAN"} >"$OUT/net.log" 2>&1; then
  echo "not ok - network library build (texc --emit so/header, c++ classify.cpp)"
  sed 's/^/  # /' "$OUT/net.log" | head -20
  exit 0
fi
echo "ok - network library build (texc --emit so/header, c++ classify.cpp)"
run_classify() { # DIR ARGS...: classify of DIR on the sample image
  local dir=$1
  shift
  "$dir/classify" examples/deploy/sample.ppm --runs 5 "$@"
}
out=$(run_classify "$NETOUT" --save-input "$OUT/x.npy" --save-output "$OUT/y.npy" 2>&1)
if [ $? -eq 0 ] && grep -q "top-5:" <<<"$out" && grep -q "^latency: [0-9.]* ms (median of 5" <<<"$out"; then
  echo "ok - classify: top-5 and latency"
else echo "not ok - classify: top-5 and latency"; sed 's/^/  # /' <<<"$out" | head; fi
grep -q "one-shot net() and net_create/net_run/net_destroy agree" <<<"$out" && echo "ok - one-shot call equals create/run/destroy" ||
  echo "not ok - one-shot call equals create/run/destroy"
# The same input through `texc run`: the same bytes (the same kernels, the same schedules).
"$TEXC" run examples/deploy/tiny_cnn.tex --input "$OUT/x.npy" --output "$OUT/ref.npy" >"$OUT/run.log" 2>&1
if cmp -s <(tail -c 40 "$OUT/y.npy") <(tail -c 40 "$OUT/ref.npy") && [ -s "$OUT/ref.npy" ]; then
  echo "ok - library output equals texc run --input X.npy --output Y.npy (byte for byte)"
else echo "not ok - library output equals texc run --input X.npy --output Y.npy"; sed 's/^/  # /' "$OUT/run.log" | head -5; fi
# Nothing of texc at run time: only libc and libm; only the entry points exported.
deps=$(ldd "$NETOUT/libnet.so" 2>&1)
syms=$(nm -D --defined-only "$NETOUT/libnet.so" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
undef=$(nm -D --undefined-only "$NETOUT/libnet.so" | awk '{print $2}')
if ! grep -qiE "texc|texrt|LLVM|xgboost|protobuf|cjson" <<<"$deps" && ! grep -qE "^(rt_|__texc)" <<<"$undef" &&
   [ "$syms" = "net net_create net_create_from net_destroy net_last_error net_run " ]; then
  echo "ok - the library needs nothing of texc (ldd, nm: exports only net*)"
else echo "not ok - the library needs nothing of texc"; echo "  # exports: $syms"; sed 's/^/  # /' <<<"$deps"; fi

# Weights in a file: written by texc (it did not exist), read at create; the same result.
mkdir -p "$OUT/ext"
cp "$NETOUT/classify" "$OUT/ext/"
"$TEXC" examples/deploy/tiny_cnn.tex --emit so --name net --weights "$OUT/w.safetensors" -o "$OUT/ext/libnet.so" 2>"$OUT/w.log"
out=$(run_classify "$OUT/ext" --save-output "$OUT/yw.npy" 2>&1)
if [ -s "$OUT/w.safetensors" ] && cmp -s <(tail -c 40 "$OUT/yw.npy") <(tail -c 40 "$OUT/y.npy"); then
  echo "ok - --weights FILE: written, read by create(), the same result"
else echo "not ok - --weights FILE: written, read by create(), the same result"; sed 's/^/  # /' <<<"$out" "$OUT/w.log" | head -5; fi
# A weights file of the wrong size (truncated), a wrong shape, a missing file: clear errors.
head -c -100 "$OUT/w.safetensors" >"$OUT/short.safetensors"
LC_ALL=C sed 's/"fc_b":{"dtype":"F32","shape":\[10\]/"fc_b":{"dtype":"F32","shape":[11]/' "$OUT/w.safetensors" >"$OUT/shape.safetensors"
for bad in "short:tensor '[a-z0-9_]*' needs bytes .* (a truncated or corrupt file)" \
           "shape:tensor 'fc_b' is \[11\], the network needs \[10\]" \
           "missing:cannot open weights file"; do
  f="$OUT/${bad%%:*}.safetensors"
  out=$(run_classify "$NETOUT" --weights "$f" 2>&1)
  rc=$?
  if [ $rc -eq 1 ] && grep -q "^classify: net: weights file $f: ${bad#*:}\|^classify: net: ${bad#*:} $f" <<<"$out"; then
    echo "ok - weights file: ${bad%%:*} is an error at create"
  else echo "not ok - weights file: ${bad%%:*} is an error at create (exit $rc)"; sed 's/^/  # /' <<<"$out" | head -3; fi
done
