#!/bin/bash
# bench/deploy.sh — the deployed library (texc --emit so, called from
# examples/deploy/classify.cpp, or for a network whose input is not one image from the
# program bench/net_harness.py writes for its header) against `texc bench` on the same
# network: the same kernels and schedules, so the two must agree within noise. Alternates
# the two ROUNDS times.
#   [RUNS=50] [ROUNDS=2] bench/deploy.sh [NET.tex|MODEL.onnx] [texc options: --records F, -D ...]
# Default: examples/resnet18.tex (untuned: the CPU defaults; --records for tuned schedules).
cd "$(dirname "$0")/.."
TEXC=${TEXC:-$PWD/build/texc}
NET=${1:-examples/resnet18.tex}
shift 2>/dev/null
RUNS=${RUNS:-50} ROUNDS=${ROUNDS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C examples/deploy "$tmp/libnet.so" "$tmp/net.h" TEXC="$TEXC" OUT="$tmp" NET="$(realpath "$NET")" TEXCFLAGS="$* -v" \
  >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
make -s -C examples/deploy classify TEXC="$TEXC" OUT="$tmp" NET="$(realpath "$NET")" TEXCFLAGS="$* -v" >/dev/null 2>&1
echo "== $NET $* ($(nproc) cores, TEX_NUM_THREADS=${TEX_NUM_THREADS:-all})"
grep -m1 "memory:" "$tmp/build.log" | sed 's/^[^:]*: [^;]*; /  /'
run_lib=("$tmp/classify" examples/deploy/sample.ppm)
if ! "$tmp/classify" examples/deploy/sample.ppm --runs 1 >/dev/null 2>&1; then # not one image: any inputs
  python3 bench/net_harness.py "$tmp/net.h" "$tmp/harness.c" net &&
    ${CC:-cc} -O2 -I"$tmp" -o "$tmp/harness" "$tmp/harness.c" -L"$tmp" -lnet -Wl,-rpath,"$tmp" || exit 1
  run_lib=("$tmp/harness")
fi
for r in $(seq "$ROUNDS"); do
  lib=$("${run_lib[@]}" --runs "$RUNS" | grep "^latency:")
  bench=$("$TEXC" bench "$NET" "$@" --repeat "$RUNS" | grep "^Measured latency:")
  printf "  library   %s\n  texc bench %s\n" "${lib#latency: }" "${bench#Measured latency: }"
done
