#!/bin/bash
# bench/deploy.sh — the deployed library (texc --emit so, called from
# examples/deploy/classify.cpp) against `texc bench` on the same network: the same kernels
# and schedules, so the two must agree within noise. Alternates the two ROUNDS times.
#   [RUNS=50] [ROUNDS=2] bench/deploy.sh [NET.tex|MODEL.onnx] [texc options: --records F, -D ...]
# Default: examples/resnet18.tex (untuned: the CPU defaults; --records for tuned schedules).
cd "$(dirname "$0")/.."
TEXC=${TEXC:-$PWD/build/texc}
NET=${1:-examples/resnet18.tex}
shift 2>/dev/null
RUNS=${RUNS:-50} ROUNDS=${ROUNDS:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C examples/deploy classify TEXC="$TEXC" OUT="$tmp" NET="$(realpath "$NET")" TEXCFLAGS="$* -v" \
  >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
echo "== $NET $* ($(nproc) cores, TEX_NUM_THREADS=${TEX_NUM_THREADS:-all})"
grep -m1 "memory:" "$tmp/build.log" | sed 's/^[^:]*: [^;]*; /  /'
for r in $(seq "$ROUNDS"); do
  lib=$("$tmp/classify" examples/deploy/sample.ppm --runs "$RUNS" | grep "^latency:")
  bench=$("$TEXC" bench "$NET" "$@" --repeat "$RUNS" | grep "^Measured latency:")
  printf "  library   %s\n  texc bench %s\n" "${lib#latency: }" "${bench#Measured latency: }"
done
