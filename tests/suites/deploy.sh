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

# A run allocates nothing (docs/DEPLOY.md): a program that interposes malloc and its kin
# (forwarding to glibc's __libc_* entries) counts the calls the library makes during 5 runs
# after the first (which starts the thread pool); tiny_cnn and resnet18 at 32 x 32 (packed
# filters, padded patches and accumulator tiles per parallel iteration). Not under the
# sanitizers (they own malloc).
cat >"$OUT/noalloc.c" <<'C'
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "net.h"
extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);
static volatile int counting;
static volatile long calls;
void *malloc(size_t n) { calls += counting; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { calls += counting; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { calls += counting; return __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { calls += counting; return __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { calls += counting; return __libc_memalign(a, n); }
int posix_memalign(void **p, size_t a, size_t n) { calls += counting; *p = __libc_memalign(a, n); return *p ? 0 : 12; }
void free(void *p) { __libc_free(p); }
int main(void) {
  static float in[net_INPUT_SIZE], out[net_OUTPUT_SIZE];
  for (int i = 0; i < net_INPUT_SIZE; i++) in[i] = (float)(i % 7) / 7.0f;
  net_ctx *ctx = net_create();
  if (!ctx || net_run(ctx, in, out)) { printf("create/run failed: %s\n", net_last_error()); return 1; }
  counting = 1;
  for (int r = 0; r < 5; r++) if (net_run(ctx, in, out)) return 1;
  counting = 0;
  long n = calls;
  calls = 0;
  counting = 1; /* the check can fail: the counter sees a malloc */
  free(malloc(16));
  counting = 0;
  printf("%ld %ld\n", n, calls);
  net_destroy(ctx);
  return 0;
}
C
if [ -n "$SAN" ]; then
  echo "ok - a run allocates nothing # SKIP under the sanitizers"
else
  for net in examples/deploy/tiny_cnn.tex:"" examples/resnet18.tex:"-D HW=32"; do
    f=${net%%:*} d="$OUT/noalloc_$(basename "$f" .tex)"
    mkdir -p "$d"
    # shellcheck disable=SC2086
    if "$TEXC" "$f" ${net#*:} --emit so --name net -o "$d/libnet.so" 2>"$d/log" &&
       "$TEXC" "$f" ${net#*:} --emit header --name net -o "$d/net.h" 2>>"$d/log" &&
       cc -O1 -I"$d" -o "$d/noalloc" "$OUT/noalloc.c" -L"$d" -lnet -Wl,-rpath,"$d" 2>>"$d/log"; then
      got=$("$d/noalloc" 2>&1)
      if [ "$got" = "0 1" ]; then echo "ok - a run allocates nothing: $(basename "$f") ${net#*:} (5 runs: 0 malloc calls)"
      else echo "not ok - a run allocates nothing: $(basename "$f") ${net#*:} (calls during 5 runs, control: $got)"; fi
    else echo "not ok - a run allocates nothing: $(basename "$f"): build failed"; sed 's/^/  # /' "$d/log" | head -5; fi
  done
fi

# Weights in a file: written by texc (it did not exist), read at create; the same result.
mkdir -p "$OUT/ext"
cp "$NETOUT/classify" "$OUT/ext/"
"$TEXC" examples/deploy/tiny_cnn.tex --emit so --name net --weights "$OUT/w.safetensors" -o "$OUT/ext/libnet.so" 2>"$OUT/w.log"
out=$(run_classify "$OUT/ext" --save-output "$OUT/yw.npy" 2>&1)
if [ -s "$OUT/w.safetensors" ] && cmp -s <(tail -c 40 "$OUT/yw.npy") <(tail -c 40 "$OUT/y.npy"); then
  echo "ok - --weights FILE: written, read by create(), the same result"
else echo "not ok - --weights FILE: written, read by create(), the same result"; sed 's/^/  # /' <<<"$out" "$OUT/w.log" | head -5; fi
# A weights file of the wrong size (truncated, or 8 bytes too long), a wrong shape, a missing
# file: clear errors.
head -c -100 "$OUT/w.safetensors" >"$OUT/short.safetensors"
LC_ALL=C sed 's/"fc_b":{"dtype":"F32","shape":\[10\]/"fc_b":{"dtype":"F32","shape":[11]/' "$OUT/w.safetensors" >"$OUT/shape.safetensors"
{ cat "$OUT/w.safetensors"; printf abcdefgh; } >"$OUT/long.safetensors"
for bad in "short:tensor '[a-z0-9_]*' needs bytes .* (a truncated or corrupt file)" \
           "long:8 bytes after the last tensor" \
           "shape:tensor 'fc_b' is \[11\], the network needs \[10\]" \
           "missing:cannot open weights file"; do
  f="$OUT/${bad%%:*}.safetensors"
  out=$(run_classify "$NETOUT" --weights "$f" 2>&1)
  rc=$?
  if [ $rc -eq 1 ] && grep -q "^classify: net: weights file $f: ${bad#*:}\|^classify: net: ${bad#*:} $f" <<<"$out"; then
    echo "ok - weights file: ${bad%%:*} is an error at create"
  else echo "not ok - weights file: ${bad%%:*} is an error at create (exit $rc)"; sed 's/^/  # /' <<<"$out" | head -3; fi
done

# Tuned schedules: a short tune, then the library with --records (-v: all its tasks tuned)
# gives texc run --records' bytes.
R="$OUT/tuned.jsonl"
if timeout 300 "$TEXC" tune examples/deploy/tiny_cnn.tex --trials 16 --round 2 --records "$R" --quiet >"$OUT/tune.log" 2>&1 &&
   grep -q "(record)" <("$TEXC" examples/deploy/tiny_cnn.tex --records "$R" --emit steps) &&
   make -s -C examples/deploy classify TEXC="$TEXC" OUT="$OUT/tuned" NET=tiny_cnn.tex TEXCFLAGS="--records $R -v" \
     ${SAN:+CC="cc $SAN" CXX="$CXX_SAN"} >>"$OUT/tune.log" 2>&1 && grep -qE "([0-9]+) calls of \1 tasks \(\1 tuned\)" "$OUT/tune.log" &&
   "$OUT/tuned/classify" examples/deploy/sample.ppm --runs 1 --save-output "$OUT/yt.npy" >>"$OUT/tune.log" 2>&1 &&
   "$TEXC" run examples/deploy/tiny_cnn.tex --records "$R" --input "$OUT/x.npy" --output "$OUT/reft.npy" >>"$OUT/tune.log" 2>&1 &&
   cmp -s <(tail -c 40 "$OUT/yt.npy") <(tail -c 40 "$OUT/reft.npy"); then
  echo "ok - --records: the tuned library equals texc run --records"
else echo "not ok - --records: the tuned library equals texc run --records"; sed 's/^/  # /' "$OUT/tune.log" | tail -5; fi

# PNG through libpng (classify built with HAVE_PNG=1): the same pixels as sample.ppm, the same result.
if [ ! -f /usr/include/png.h ]; then
  echo "skip - classify reads PNG: no libpng-dev"
elif make -s -C examples/deploy classify TEXC="$TEXC" OUT="$OUT/png" NET=tiny_cnn.tex HAVE_PNG=1 \
     ${SAN:+CC="cc $SAN" CXX="$CXX_SAN"} >"$OUT/png.log" 2>&1 &&
     "$OUT/png/classify" examples/deploy/sample.png --runs 1 --save-output "$OUT/ypng.npy" >>"$OUT/png.log" 2>&1 &&
     cmp -s <(tail -c 40 "$OUT/ypng.npy") <(tail -c 40 "$OUT/y.npy"); then
  echo "ok - classify reads PNG (libpng): the PPM's result"
else echo "not ok - classify reads PNG (libpng): the PPM's result"; sed 's/^/  # /' "$OUT/png.log" | head -5; fi

# A graph of two inputs (ONNX's conv node test: x and W are both graph inputs): one pointer
# per input, in order; the result against `texc run --input x --input W`.
NODE=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}/test_conv_with_autopad_same/model.onnx
if [ ! -f "$NODE" ]; then
  echo "skip - a two-input ONNX graph as a library: no $NODE (libonnx-testdata)"
else
  mkdir -p "$OUT/two"
  cat >"$OUT/two/two.c" <<'C'
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "net.h"
/* numpy's .npy of float32 */
static void save(const char *path, const float *d, const long long *shape, int ndim, long long n) {
  char dict[128];
  int k = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < ndim; i++) k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld, ", shape[i]);
  k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
  while ((10 + k + 1) % 64) dict[k++] = ' ';
  dict[k++] = '\n';
  FILE *f = fopen(path, "wb");
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(k & 0xff, f), fputc(k >> 8, f);
  fwrite(dict, 1, (size_t)k, f);
  fwrite(d, sizeof(float), (size_t)n, f);
  fclose(f);
}
int main(void) {
  static float x[net_INPUT0_SIZE], w[net_INPUT1_SIZE], y[net_OUTPUT_SIZE], y1[net_OUTPUT_SIZE];
  long long sx[] = net_INPUT0_SHAPE, sw[] = net_INPUT1_SHAPE, sy[] = net_OUTPUT_SHAPE;
  for (int i = 0; i < net_INPUT0_SIZE; i++) x[i] = (float)sin(i * 0.37);
  for (int i = 0; i < net_INPUT1_SIZE; i++) w[i] = (float)cos(i * 0.91);
  net_ctx *c = net_create();
  if (!c || net_run(c, x, w, y) || net(x, w, y1) || memcmp(y, y1, sizeof y)) {
    printf("not ok - two inputs: %s\n", net_last_error());
    return 1;
  }
  net_destroy(c);
  save("x.npy", x, sx, net_INPUT0_NDIM, net_INPUT0_SIZE);
  save("w.npy", w, sw, net_INPUT1_NDIM, net_INPUT1_SIZE);
  save("y.npy", y, sy, net_OUTPUT_NDIM, net_OUTPUT_SIZE);
  return 0;
}
C
  (cd "$OUT/two" && "$TEXC" "$NODE" --emit so -o libnet.so && "$TEXC" "$NODE" --emit header -o net.h --name net &&
     cc $SAN -O1 -o two two.c -L. -lnet -Wl,-rpath,'$ORIGIN' -lm && ./two &&
     "$TEXC" run "$NODE" --input x.npy --input w.npy --output ref.npy) >"$OUT/two.log" 2>&1
  rc=$?
  bytes=$((4 * $(awk '/define net_OUTPUT_SIZE/ {print $3}' "$OUT/two/net.h" 2>/dev/null || echo 0)))
  if [ $rc -eq 0 ] && grep -q "^int net(const float \*input0, const float \*input1, float \*output);" "$OUT/two/net.h" &&
     [ $bytes -gt 0 ] && cmp -s <(tail -c $bytes "$OUT/two/y.npy") <(tail -c $bytes "$OUT/two/ref.npy"); then
    echo "ok - a two-input ONNX graph as a library: one pointer per input, equal to texc run"
  else echo "not ok - a two-input ONNX graph as a library"; sed 's/^/  # /' "$OUT/two.log" | head -8; fi
fi

# A network of three results (tests/lit/network/results.tex: a feature map that the next
# call reads too): one pointer per result, in the header's order; each equal to `texc run
# --output` byte for byte, from create/run and from the one-shot call.
mkdir -p "$OUT/multi"
cat >"$OUT/multi/multi.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "net.h"
int main(void) {
  static float x[net_INPUT_SIZE], a[net_OUTPUT0_SIZE], b[net_OUTPUT1_SIZE], c[net_OUTPUT2_SIZE];
  static float a1[net_OUTPUT0_SIZE], b1[net_OUTPUT1_SIZE], c1[net_OUTPUT2_SIZE];
  FILE *f = fopen("x.bin", "rb");
  if (!f || fread(x, sizeof(float), net_INPUT_SIZE, f) != net_INPUT_SIZE) return 2;
  fclose(f);
  net_ctx *ctx = net_create();
  if (net_NUM_OUTPUTS != 3 || !ctx || net_run(ctx, x, a, b, c) || net(x, a1, b1, c1)) {
    printf("not ok - three results: %s\n", net_last_error());
    return 1;
  }
  net_destroy(ctx);
  if (memcmp(a, a1, sizeof a) || memcmp(b, b1, sizeof b) || memcmp(c, c1, sizeof c)) return 3;
  f = fopen("out.bin", "wb");
  fwrite(a, sizeof a, 1, f), fwrite(b, sizeof b, 1, f), fwrite(c, sizeof c, 1, f);
  return fclose(f) != 0;
}
C
MNET=$PWD/tests/lit/network/results.tex
(cd "$OUT/multi" && rm -rf dump && mkdir dump && TEXC_NET_DUMP=dump "$TEXC" run "$MNET" --output f.npy --output h.npy --output p.npy &&
   cp dump/x.bin x.bin && "$TEXC" "$MNET" --emit so -o libnet.so && "$TEXC" "$MNET" --emit header -o net.h --name net &&
   cc $SAN -O1 -o multi multi.c -L. -lnet -Wl,-rpath,'$ORIGIN' && ./multi) >"$OUT/multi.log" 2>&1
rc=$?
# the .npy files' data: 512, 512 and 128 floats after their headers
if [ $rc -eq 0 ] && cmp -s "$OUT/multi/out.bin" <(tail -c 2048 "$OUT/multi/f.npy"; tail -c 2048 "$OUT/multi/h.npy"; tail -c 512 "$OUT/multi/p.npy"); then
  echo "ok - a network of three results as a library: one pointer each, equal to texc run --output"
else echo "not ok - a network of three results as a library (exit $rc)"; sed 's/^/  # /' "$OUT/multi.log" | head -8; fi

# A quantized model (tests/suites/onnx/make_models.py qdq_int: four QDQ convolutions, one
# depthwise, integer kernels where the CPU has VNNI: u8 activations, i8 filters made at load)
# as a library: the five results equal `texc run --output` byte for byte.
mkdir -p "$OUT/quant"
cat >"$OUT/quant/quant.c" <<'C'
#include <stdio.h>
#include "net.h"
int main(void) {
  static float x[net_INPUT_SIZE], a[net_OUTPUT0_SIZE], b[net_OUTPUT1_SIZE], c[net_OUTPUT2_SIZE], d[net_OUTPUT3_SIZE],
      e[net_OUTPUT4_SIZE];
  FILE *f = fopen("x.bin", "rb");
  if (!f || fread(x, sizeof(float), net_INPUT_SIZE, f) != net_INPUT_SIZE) return 2;
  fclose(f);
  if (net(x, a, b, c, d, e)) { printf("not ok - a quantized model: %s\n", net_last_error()); return 1; }
  f = fopen("out.bin", "wb");
  fwrite(a, sizeof a, 1, f), fwrite(b, sizeof b, 1, f), fwrite(c, sizeof c, 1, f), fwrite(d, sizeof d, 1, f), fwrite(e, sizeof e, 1, f);
  return fclose(f) != 0;
}
C
MM=$PWD/tests/suites/onnx/make_models.py
(cd "$OUT/quant" && python3 "$MM" . && Q=qdq_int.onnx &&
   "$TEXC" run $Q --input qdq_int_x.npy --output ya.npy --output yb.npy --output yc.npy --output yd.npy --output ye.npy && tail -c $((4 * 18 * 81)) qdq_int_x.npy > x.bin &&
   "$TEXC" $Q --emit so -o libnet.so && "$TEXC" $Q --emit header -o net.h --name net &&
   cc $SAN -O1 -o quant quant.c -L. -lnet -Wl,-rpath,'$ORIGIN' && ./quant) >"$OUT/quant.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && cmp -s "$OUT/quant/out.bin" <(tail -c $((4 * 40 * 25)) "$OUT/quant/ya.npy"; tail -c $((4 * 24 * 81)) "$OUT/quant/yb.npy"; tail -c $((4 * 16 * 81)) "$OUT/quant/yc.npy"; tail -c $((4 * 24 * 25)) "$OUT/quant/yd.npy"; tail -c $((4 * 18 * 81)) "$OUT/quant/ye.npy"); then
  echo "ok - a quantized model (QDQ convolutions) as a library: equal to texc run --output"
else echo "not ok - a quantized model (QDQ convolutions) as a library (exit $rc)"; sed 's/^/  # /' "$OUT/quant.log" | head -8; fi

# A constant graph output (ONNX's Shape node test: the int64 shape of the input) filled on
# every call, not only at create().
SHP=/usr/share/libonnx-testdata/data/node/test_shape/model.onnx
if [ -f "$SHP" ]; then
  mkdir -p "$OUT/shape"
  cat >"$OUT/shape/shape.c" <<'C'
#include <stdio.h>
#include "net.h"
int main(void) {
  static float x[net_INPUT_SIZE];
  for (int call = 0; call < 2; call++) {
    int64_t y[net_OUTPUT_SIZE] = {-1, -1, -1};
    if (net(x, y)) return 1;
    printf("%lld %lld %lld\n", (long long)y[0], (long long)y[1], (long long)y[2]);
  }
  return 0;
}
C
  out=$(cd "$OUT/shape" && "$TEXC" "$SHP" --emit so -o libnet.so && "$TEXC" "$SHP" --emit header -o net.h --name net &&
        cc $SAN -O1 -o shape shape.c -L. -lnet -Wl,-rpath,'$ORIGIN' && ./shape 2>&1)
  [ "$out" = "$(printf '3 4 5\n3 4 5')" ] && echo "ok - a constant output (Shape) as a library: filled on every call" ||
    echo "not ok - a constant output (Shape) as a library: filled on every call ($out)"
else echo "skip - a constant output (Shape) as a library: no $SHP"; fi

# Integer inputs (tests/lit/network/int_input.tex: i64 token ids, an i32 mask): the library
# takes `const int64_t *` and `const int32_t *`; the results equal `texc run`'s on the same ids.
mkdir -p "$OUT/ints"
cat >"$OUT/ints/ints.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include "net.h"
int main(void) {
  static int64_t ids[net_INPUT0_SIZE];
  static int32_t mask[net_INPUT1_SIZE];
  static float tok[net_OUTPUT0_SIZE], sen[net_OUTPUT1_SIZE];
  FILE *f = fopen("ids.bin", "rb"), *g = fopen("mask.bin", "rb");
  if (!f || !g || fread(ids, sizeof ids[0], net_INPUT0_SIZE, f) != net_INPUT0_SIZE ||
      fread(mask, sizeof mask[0], net_INPUT1_SIZE, g) != net_INPUT1_SIZE) return 2;
  if (net(ids, mask, tok, sen)) { printf("not ok - integer inputs: %s\n", net_last_error()); return 1; }
  f = fopen("out.bin", "wb");
  fwrite(tok, sizeof tok, 1, f), fwrite(sen, sizeof sen, 1, f);
  return fclose(f) != 0;
}
C
INET=$PWD/tests/lit/network/int_input.tex
(cd "$OUT/ints" && rm -rf dump && mkdir dump &&
   TEXC_NET_DUMP=dump "$TEXC" run "$INET" --kernel emb --output t.npy --output s.npy && cp dump/ids.bin dump/mask.bin . &&
   "$TEXC" "$INET" --kernel emb --emit so -o libnet.so && "$TEXC" "$INET" --kernel emb --emit header -o net.h --name net &&
   cc $SAN -O1 -o ints ints.c -L. -lnet -Wl,-rpath,'$ORIGIN' && ./ints) >"$OUT/ints.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "const int64_t \*input0, const int32_t \*input1" "$OUT/ints/net.h" &&
   cmp -s "$OUT/ints/out.bin" <(tail -c 256 "$OUT/ints/t.npy"; tail -c 32 "$OUT/ints/s.npy"); then
  echo "ok - integer inputs (i64 ids, i32 mask) as a library: equal to texc run"
else echo "not ok - integer inputs (i64 ids, i32 mask) as a library (exit $rc)"; sed 's/^/  # /' "$OUT/ints.log" | head -8; fi
# ... and an i64 result (int_result: the ids back): `int64_t *output`, the bytes texc run writes
cat >"$OUT/ints/ires.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include "ires.h"
int main(void) {
  static int64_t ids[ires_INPUT_SIZE], out[ires_OUTPUT_SIZE];
  FILE *f = fopen("ids.bin", "rb");
  if (!f || fread(ids, sizeof ids[0], ires_INPUT_SIZE, f) != ires_INPUT_SIZE) return 2;
  if (ires(ids, out)) { printf("not ok - an integer result: %s\n", ires_last_error()); return 1; }
  f = fopen("ires.bin", "wb");
  fwrite(out, sizeof out, 1, f);
  return fclose(f) != 0;
}
C
(cd "$OUT/ints" && rm -rf dump2 && mkdir dump2 && TEXC_NET_DUMP=dump2 "$TEXC" run "$INET" --kernel int_result --output ires.npy &&
   cp dump2/ids.bin ids.bin && "$TEXC" "$INET" --kernel int_result --emit so -o libires.so &&
   "$TEXC" "$INET" --kernel int_result --emit header -o ires.h --name ires &&
   cc $SAN -O1 -o ires ires.c -L. -lires -Wl,-rpath,'$ORIGIN' && ./ires) >"$OUT/ires.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "int ires(const int64_t \*input, int64_t \*output);" "$OUT/ints/ires.h" &&
   cmp -s "$OUT/ints/ires.bin" <(tail -c 128 "$OUT/ints/ires.npy"); then
  echo "ok - an integer result (int64_t *output) as a library: equal to texc run"
else echo "not ok - an integer result as a library (exit $rc)"; sed 's/^/  # /' "$OUT/ires.log" | head -8; fi

# Several sizes (tests/lit/network/deploy_sizes.tex, -D N=1,3): one library, a context per
# variant (create_variant, found by variant()), each variant's results equal `texc run -D
# N=...`'s on the same input; a weights file written by --weights serves every variant.
mkdir -p "$OUT/sizes"
cat >"$OUT/sizes/sizes.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "sz.h"
int main(int argc, char **argv) {
  const char *weights = argc > 1 ? argv[1] : NULL;
  int64_t sizes[][1] = sz_VARIANT_VALUES, none = 2, shape[8];
  if (sz_variant(&none) != -1 || sz_create_variant(sz_NUM_VARIANTS, NULL) || sz_shape(0, 3, shape) != -1) {
    printf("not ok - several sizes: a variant that is not there\n");
    return 1;
  }
  for (int i = 0; i < sz_NUM_VARIANTS; i++) {
    int v = sz_variant(sizes[i]);
    int64_t n[3] = {1, 1, 1};
    for (int k = 0; k < 3; k++) {
      int r = sz_shape(v, k, shape);
      for (int d = 0; d < r; d++) n[k] *= shape[d];
    }
    float *x = malloc(4 * n[0]), *y = malloc(4 * n[1]), *z = malloc(4 * n[2]);
    char path[64];
    snprintf(path, sizeof path, "x%lld.bin", (long long)sizes[i][0]);
    FILE *f = fopen(path, "rb");
    if (!f || fread(x, 4, n[0], f) != (size_t)n[0]) return 2;
    fclose(f);
    sz_ctx *c = sz_create_variant(v, weights);
    if (!c || sz_run(c, x, y, z)) { printf("not ok - several sizes: %s\n", sz_last_error()); return 1; }
    snprintf(path, sizeof path, "out%lld.bin", (long long)sizes[i][0]);
    f = fopen(path, "wb");
    fwrite(y, 4, n[1], f), fwrite(z, 4, n[2], f);
    if (fclose(f)) return 2;
    sz_destroy(c);
  }
  return 0;
}
C
SZ=$PWD/tests/lit/network/deploy_sizes.tex
(cd "$OUT/sizes" && for n in 1 3; do
   rm -rf dump && mkdir dump && TEXC_NET_DUMP=dump "$TEXC" run "$SZ" -D N=$n --output y$n.npy --output z$n.npy &&
   cp dump/x.bin x$n.bin || exit 1; done &&
   "$TEXC" "$SZ" -D N=1,3 --emit so -o libsz.so && "$TEXC" "$SZ" -D N=1,3 --emit header -o sz.h &&
   cc $SAN -O1 -o sizes sizes.c -L. -lsz -Wl,-rpath,'$ORIGIN' && ./sizes &&
   "$TEXC" "$SZ" -D N=1,3 --emit so --weights w.safetensors -o libsz.so && mkdir -p f && mv out1.bin out3.bin f/ &&
   ./sizes w.safetensors) >"$OUT/sizes.log" 2>&1
rc=$?
same=1
for n in 1 3; do
  cmp -s "$OUT/sizes/out$n.bin" <(tail -c $((n * 2048)) "$OUT/sizes/y$n.npy"; tail -c $((n * 20)) "$OUT/sizes/z$n.npy") &&
    cmp -s "$OUT/sizes/out$n.bin" "$OUT/sizes/f/out$n.bin" || same=0
done
if [ $rc -eq 0 ] && [ $same = 1 ] && [ "$(nm -D --defined-only "$OUT/sizes/libsz.so" | grep -c " T sz_\(create_variant\|variant\|shape\)$")" = 3 ]; then
  echo "ok - several sizes in one library (-D N=1,3): each variant equals texc run -D N=..., embedded or from a weights file"
else echo "not ok - several sizes in one library (exit $rc, equal $same)"; sed 's/^/  # /' "$OUT/sizes.log" | head -8; fi

# A cache that grows a position per token (tests/suites/onnx/make_models.py `growing`: present
# = Concat(past, x), y their mean): one library of past = 1..5, each step's present fed back
# as the next step's past through the variant of its length.
mkdir -p "$OUT/grow"
cat >"$OUT/grow/grow.c" <<'C'
#include <math.h>
#include <stdio.h>
#include "grow.h"
int main(void) {
  float cache[2][8 * 3] = {{0.0f, 0.0f, 0.0f}}, x[3], y[3], sum = 0.0f;
  int cur = 0;
  for (int64_t past = 1; past <= 5; past++) {
    for (int d = 0; d < 3; d++) x[d] = (float)past * (d + 1);
    grow_ctx *c = grow_create_variant(grow_variant(&past), NULL);
    if (!c || grow_run(c, x, cache[cur], y, cache[!cur])) { printf("not ok - a growing cache: %s\n", grow_last_error()); return 1; }
    grow_destroy(c);
    cur = !cur, sum += (float)past;
    for (int d = 0; d < 3; d++)
      if (fabsf(y[d] - sum * (d + 1) / (float)(past + 1)) > 1e-5f) { printf("not ok - a growing cache: step %lld\n", (long long)past); return 1; }
  }
  return grow_variant((int64_t[]){6}) == -1 ? 0 : 1;
}
C
[ -f "$OUT/quant/growing.onnx" ] || python3 "$MM" "$OUT/quant" >/dev/null 2>&1
(cd "$OUT/grow" && "$TEXC" "$OUT/quant/growing.onnx" -D past=1,2,3,4,5 --emit so -o libgrow.so &&
   "$TEXC" "$OUT/quant/growing.onnx" -D past=1,2,3,4,5 --emit header -o grow.h &&
   cc $SAN -O1 -o grow grow.c -L. -lgrow -lm -Wl,-rpath,'$ORIGIN' && ./grow) >"$OUT/grow.log" 2>&1 &&
  echo "ok - a cache that grows each token: one library of past = 1..5, each step through its variant" ||
  { echo "not ok - a cache that grows each token (past = 1..5)"; sed 's/^/  # /' "$OUT/grow.log" | head -8; }

# CUDA: the same library for --target cuda (PTX embedded, the driver loaded with dlopen at
# create). Without a GPU, create() fails with "no CUDA device"; with one, the top-5 classes
# are the CPU library's.
if ! "$TEXC" examples/vadd.tex --target cuda --emit ptx -o "$OUT/vadd.ptx" >/dev/null 2>&1; then
  echo "skip - CUDA network library: no NVRTC (the CUDA toolkit) to compile PTX"
elif ! make -s -C examples/deploy classify TEXC="$TEXC" OUT="$OUT/cuda" NET=tiny_cnn.tex TEXCFLAGS="--target cuda" \
     ${SAN:+CC="cc $SAN" CXX="$CXX_SAN"} >"$OUT/cuda.log" 2>&1; then
  echo "not ok - CUDA network library build"; sed 's/^/  # /' "$OUT/cuda.log" | head -10
else
  deps=$(ldd "$OUT/cuda/libnet.so" 2>&1)
  nm -D --defined-only "$OUT/cuda/libnet.so" | grep -q " T net_run_device$" && ! grep -qiE "cuda|texrt|OpenCL" <<<"$deps" &&
    echo "ok - CUDA network library build (net_run_device; libcuda through dlopen, not linked)" ||
    echo "not ok - CUDA network library build (net_run_device; libcuda not linked)"
  out=$(run_classify "$OUT/cuda" 2>&1)
  rc=$?
  if "$TEXC" run examples/vadd.tex --target cuda -D N=16 >/dev/null 2>&1; then
    cpu=$(run_classify "$NETOUT" 2>&1 | grep -E "^ +[0-9]+ " | awk '{print $1}' | tr '\n' ' ')
    gpu=$(grep -E "^ +[0-9]+ " <<<"$out" | awk '{print $1}' | tr '\n' ' ')
    [ $rc -eq 0 ] && [ "$cpu" = "$gpu" ] && echo "ok - CUDA library: the CPU library's top-5 ($gpu)" ||
      { echo "not ok - CUDA library: the CPU library's top-5 (cpu: $cpu, cuda: $gpu)"; sed 's/^/  # /' <<<"$out" | head -5; }
  elif [ $rc -eq 1 ] && grep -q "^classify: net: no CUDA device" <<<"$out"; then
    echo "ok - CUDA library without a GPU: create() fails with 'no CUDA device'"
  else echo "not ok - CUDA library without a GPU: create() fails with 'no CUDA device' (exit $rc)"; sed 's/^/  # /' <<<"$out" | head -3; fi
fi
