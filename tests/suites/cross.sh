#!/bin/bash
# tests/suites/cross.sh — the untuned network schedule derived for another machine is still
# right there: a conv + relu task compiled with `--mtriple aarch64-linux-gnu` (NEON register
# tiles, the padded patch per tile) is linked with the CPU runtime by aarch64-linux-gnu-gcc and
# run under qemu-aarch64-static against a plain C reference (the filter packed by the
# network's folded pack_weights task first when it has one); the same for the Winograd
# default of 3 x 3 convolutions (its four tasks), then the direct convolution's default
# (TEXC_NET_WINOGRAD=0); then the four-byte dot products of quantized convolutions as
# usdot (AArch64's I8MM: --mcpu neoverse-v1; qemu's default CPU has it) against exact
# integer references: lit's dot4 kernel and a network's qconv2d_nhwc_pad task. Skipped
# without those tools.
# Environment: $TEXC (the texc binary). Prints ok / not ok / skip lines.
TEXC=${TEXC:-build/texc}
ok() { echo "ok - cross: $1"; }
bad() { echo "not ok - cross: $1"; }
CC=aarch64-linux-gnu-gcc QEMU=qemu-aarch64-static
if ! command -v $CC >/dev/null || ! command -v $QEMU >/dev/null; then
  echo "skip - cross: aarch64 network defaults under qemu: no $CC or $QEMU"
  exit 0
fi
T=$(mktemp -d /tmp/texc-cross-XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$(dirname "$0")/../.."
cat >"$T/drv.c" <<'C'
/* relu(conv 3x3, padding 1) of NHWC x and HWIO w by the network's tasks, against a plain
 * loop; argv: H C. Direct: the conv task, after the filter is packed as [C / B, 3, 3, C, B]
 * (a folded task, NETWORKS.md) when it has one. -DWINOGRAD: the Winograd default's four
 * tasks in order (filter transform, input transform, products, output transform + relu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef WINOGRAD
int t0_winograd_input(const float *x, float *v);
int t1_winograd_product(const float *v, const float *u, float *m);
int t2_winograd_output_relu(const float *m, float *y);
int t3_winograd_weights(const float *w, float *u);
static int run(const float *x, const float *w, float *y, int H, int C, const char **how) {
  long B = (H + 1) / 2;
  float *u = malloc(sizeof(float) * 16 * C * C), *v = malloc(sizeof(float) * 16 * B * B * C),
        *m = malloc(sizeof(float) * 16 * B * B * C);
  *how = "";
  return t3_winograd_weights(w, u) || t0_winograd_input(x, v) || t1_winograd_product(v, u, m) ||
         t2_winograd_output_relu(m, y);
}
#else
int t0_conv2d_nhwc_relu(const float *in0, const float *in1, float *out);
int t1_pack_weights(const float *in0, float *out) __attribute__((weak));
static int run(const float *x, const float *w, float *y, int H, int C, const char **how) {
  (void)H;
  float *wp = (float *)w;
  *how = "";
  if (t1_pack_weights) {
    if (t1_pack_weights(w, wp = malloc(sizeof(float) * 9 * C * C))) return 1;
    *how = ", packed filter";
  }
  return t0_conv2d_nhwc_relu(x, wp, y);
}
#endif
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  int H = atoi(argv[1]), C = atoi(argv[2]);
  float *x = malloc(sizeof(float) * H * H * C), *w = malloc(sizeof(float) * 9 * C * C),
        *y = malloc(sizeof(float) * H * H * C);
  for (long i = 0; i < (long)H * H * C; i++) x[i] = (float)((i * 7919) % 13) / 13.0f - 0.4f;
  for (long i = 0; i < 9L * C * C; i++) w[i] = (float)((i * 104729) % 17) / 17.0f - 0.5f;
  const char *how;
  if (run(x, w, y, H, C, &how)) return 2;
  double maxerr = 0;
  for (int h = 0; h < H; h++)
    for (int ww = 0; ww < H; ww++)
      for (int co = 0; co < C; co++) {
        double s = 0;
        for (int rh = 0; rh < 3; rh++)
          for (int rw = 0; rw < 3; rw++) {
            int ih = h + rh - 1, iw = ww + rw - 1;
            if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
            for (int ci = 0; ci < C; ci++)
              s += x[((long)ih * H + iw) * C + ci] * w[((rh * 3 + rw) * (long)C + ci) * C + co];
          }
        double ref = s > 0 ? s : 0, e = fabs(y[((long)h * H + ww) * C + co] - ref) / (1 + fabs(ref));
        if (e > maxerr) maxerr = e;
      }
  printf("max rel err %.3g%s\n", maxerr, how);
  return maxerr < 1e-4 ? 0 : 1;
}
C
# check WINOGRAD H C: the default of conv+relu on H x H x C compiled for aarch64, run under qemu.
check() {
  cat >"$T/n.tex" <<TEX
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network n(x: f32[1, $2, $2, $3], w: f32[3, 3, $3, $3]) -> y: f32[1, $2, $2, $3] {
  a = conv2d_nhwc(x, w, PH = 1, PW = 1)
  y = relu(a)
}
TEX
  local name="aarch64 network default ${2}x${2}x$3 conv+relu" def=""
  if [ "$1" = 1 ]; then name="$name as Winograd"; def=-DWINOGRAD; fi
  if TEXC_NET_WINOGRAD=$1 "$TEXC" "$T/n.tex" --emit obj --mtriple aarch64-linux-gnu -o "$T/n.o" --records "$T/none.jsonl" 2>"$T/err" &&
     $CC -O1 -static -D_GNU_SOURCE $def -Iruntime -o "$T/drv" "$T/drv.c" "$T/n.o" runtime/rt_cpu.c -lpthread -lm 2>>"$T/err" &&
     TEX_NUM_THREADS=2 timeout 300 $QEMU "$T/drv" "$2" "$3" >"$T/out" 2>>"$T/err"; then
    ok "$name under qemu ($(cat "$T/out"))"
  else
    bad "$name under qemu: $(head -3 "$T/err" "$T/out" | tr '\n' ' ')"
  fi
}
for shape in "14 32" "7 64" "28 16"; do check 1 $shape; done
for shape in "56 16" "14 64" "7 32" "28 24"; do check 0 $shape; done

# Quantized products on AArch64 (llvm.c emit_dot4): with I8MM one usdot per 4 output
# channels, without it (cortex-a72) plain i32 arithmetic; both exact.
cat >"$T/dot4.c" <<'C'
#include <stdint.h>
#include <stdio.h>
int conv(const uint8_t *x, const int8_t *k, int32_t *y);
int rzp(const uint8_t *x, const uint8_t *z, const int8_t *k, int32_t *y); /* the padding byte at run time */
enum { CO = 40, C = 6, H = 7 };
int main(void) {
  static uint8_t x[H * 4 * C];
  static int8_t k[C * CO * 4];
  static int32_t y[(H + 2) * CO];
  for (int i = 0; i < H * 4 * C; i++) x[i] = (uint8_t)(i * 7919 % 256);
  for (int i = 0; i < C * CO * 4; i++) k[i] = (int8_t)(i * 104729 % 256 - 128);
#ifdef RZP
  static const uint8_t z[1] = {200};
  if (rzp(x, z, k, y)) return 2;
#else
  if (conv(x, k, y)) return 2;
#endif
  int bad = 0;
  for (int h = 0; h < H + 2; h++)
    for (int co = 0; co < CO; co++) {
      int32_t s = 0;
      for (int c = 0; c < C; c++)
        for (int j = 0; j < 4; j++) s += (h >= 1 && h <= H ? x[(h - 1) * 4 * C + 4 * c + j] : 200) * k[(c * CO + co) * 4 + j];
      bad += s != y[h * CO + co];
    }
  printf("%d of %d wrong", bad, (H + 2) * CO);
  return bad != 0;
}
C
cat >"$T/qconv.c" <<'C'
#include <stdint.h>
#include <stdio.h>
int t0_qconv2d_nhwc_pad(const uint8_t *x, const int8_t *k, const float *s, const int32_t *z, float *y);
enum { H = 9, CI = 16, CO = 48, ZX = 3 };
int main(void) {
  static uint8_t x[H * H * CI];
  static int8_t k[9 * CI * CO];
  static float s[CO], y[H * H * CO];
  static int32_t z[CO];
  for (int i = 0; i < H * H * CI; i++) x[i] = (uint8_t)(i * 7919 % 256);
  for (int i = 0; i < 9 * CI * CO; i++) k[i] = (int8_t)(i * 104729 % 256 - 128);
  for (int o = 0; o < CO; o++) s[o] = 0.001f * (1 + o % 7), z[o] = o * 37 - 500;
  if (t0_qconv2d_nhwc_pad(x, k, s, z, y)) return 2;
  int bad = 0;
  for (int h = 0; h < H; h++)
    for (int w = 0; w < H; w++)
      for (int o = 0; o < CO; o++) {
        int32_t a = 0;
        for (int ry = 0; ry < 3; ry++)
          for (int rx = 0; rx < 3; rx++)
            for (int c = 0; c < CI; c++) {
              int ih = h + ry - 1, iw = w + rx - 1;
              int u = ih >= 0 && ih < H && iw >= 0 && iw < H ? x[(ih * H + iw) * CI + c] : ZX;
              a += u * k[(((ry * 3 + rx) * (CI / 4) + c / 4) * CO + o) * 4 + c % 4];
            }
        bad += (float)(a - z[o]) * s[o] != y[(h * H + w) * CO + o];
      }
  printf("%d of %d wrong", bad, H * H * CO);
  return bad != 0;
}
C
cat >"$T/q.tex" <<'TEX'
import "nn/onnx.tex"
network n(x: u8[1, 9, 9, 16], k: i8[3, 3, 4, 48, 4], s: f32[48], z: i32[48]) -> y: f32[1, 9, 9, 48] {
  y = qconv2d_nhwc_pad(x, k, s, z, ZX = 3, PT = 1, PL = 1, PB = 1, PR = 1)
}
TEX
# qcheck NAME DRIVER CPU TEXC-ARGS...: compile for aarch64 CPU, run under qemu; the usdot count
# ($DEF: a -D for the driver)
qcheck() {
  local name=$1 drv=$2 cpu=$3
  shift 3
  if "$TEXC" "$@" --emit obj --mtriple aarch64-linux-gnu --mcpu "$cpu" -o "$T/k.o" 2>"$T/err" &&
     $CC -O1 -static -D_GNU_SOURCE $DEF -Iruntime -o "$T/qdrv" "$T/$drv" "$T/k.o" runtime/rt_cpu.c -lpthread -lm 2>>"$T/err" &&
     out=$(TEX_NUM_THREADS=2 timeout 300 $QEMU "$T/qdrv" 2>>"$T/err"); then
    local n=$(aarch64-linux-gnu-objdump -d "$T/k.o" 2>/dev/null | grep -c usdot)
    if { [ "$cpu" = cortex-a72 ] && [ "$n" = 0 ]; } || { [ "$cpu" != cortex-a72 ] && [ "$n" -gt 0 ]; }; then
      ok "$name on $cpu under qemu ($out, $n usdot)"
    else
      bad "$name on $cpu: $n usdot instructions"
    fi
  else
    bad "$name on $cpu under qemu: $(head -3 "$T/err" | tr '\n' ' ') $out"
  fi
}
for cpu in neoverse-v1 cortex-a72; do
  qcheck "dot4 kernel, 32-lane vectors" dot4.c $cpu tests/lit/hardening/dot4.tex --kernel conv --schedule v
  qcheck "dot4 kernel, 24-lane vectors" dot4.c $cpu tests/lit/hardening/dot4.tex --kernel conv --schedule v24
  DEF=-DRZP qcheck "dot4 kernel, the padding byte at run time" dot4.c $cpu tests/lit/hardening/dot4.tex --kernel rzp --schedule v
  qcheck "network default of a quantized 3x3 convolution" qconv.c $cpu "$T/q.tex" --records "$T/none.jsonl"
done
