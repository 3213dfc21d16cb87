#!/bin/bash
# bench/truth.sh BUILD — one measured truth: the same tuned schedule timed three ways, for
# matmul 1024^3 and resnet-18's l2b convolution (28x28x128 -> 128, 3x3), 2 threads:
#   tune   the search's own figure: its best schedule's median cost in the records;
#   bench  `texc bench --schedule tuned --records R` (JIT in texc, rt_time, medians);
#   lib    the exported library (`--emit so`) timed from C by bench/bench.c (rt_time, medians
#          of 7 runs of >= 100 ms), which then times the anchor (OpenBLAS / oneDNN).
# The three should agree within 10% on a quiet machine. Not part of `make test`.
#   env: TRIALS (200), TEXC (default BUILD/texc), KERNELS ("matmul conv_l2b": which to run)
B=${1:-build}
TRIALS=${TRIALS:-200}
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
# the anchors' worker threads must not spin on the cores while texc is timed
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
TEXC=${TEXC:-$B/texc}
OUT=$B/bench/truth
mkdir -p "$OUT"
cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" \
  -lopenblas -ldnnl -ldl -lpthread -lm || exit 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); $TEX_NUM_THREADS threads; $TRIALS trials"
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }

# one NAME FILE MANIFEST_FIELDS FLOPS -D ...: tune, then the three figures
one() {
  local name=$1 file=$2 fields=$3 flops=$4; shift 4
  local R=$OUT/$name.jsonl
  rm -f "$R"
  "$TEXC" tune "$file" "$@" --trials "$TRIALS" --seed 1 --records "$R" >"$OUT/$name.tune" 2>&1 ||
    { echo "$name: tune failed"; return; }
  # the search's figure: the lowest median of all the costs of one schedule (its final best)
  local tune_ms
  tune_ms=$(python3 -c '
import json, sys, statistics
costs = {}  # as records_best ranks: the median of all costs of one schedule
for line in open(sys.argv[1]):
    r = json.loads(line)
    c = r.get("costs_ms") or []
    if r.get("error", 0) or not c: continue
    costs.setdefault(r["schedule"], []).extend(c)
print("%.4f" % min(statistics.median(c) for c in costs.values()))' "$R")
  local bench_ms
  bench_ms=$("$TEXC" bench "$file" "$@" --schedule tuned --records "$R" --repeat 7 2>&1 |
             awk '$2 == "tuned" {print $3}')
  "$TEXC" "$file" "$@" --schedule tuned --records "$R" --emit so -o "$OUT/$name.so" || return
  printf '%s tuned %s %s\n' "$(echo "$fields" | cut -d' ' -f1)" "$(echo "$fields" | cut -d' ' -f2-)" "$OUT/$name.so" >"$OUT/$name.man"
  "$OUT/bench" "$OUT/$name.man" >"$OUT/$name.lib" 2>&1
  local lib_ms
  lib_ms=$(awk '{for (i = 1; i < NF; i++) if ($i == "tuned") {print $(i + 1); exit}}' "$OUT/$name.lib")
  printf '%-8s tune %8.3f ms  bench %8s ms  lib %8s ms  (%.1f / %s / %s GFLOP/s)  bench/tune %.2f  lib/tune %.2f\n' \
    "$name" "$tune_ms" "$bench_ms" "$lib_ms" "$(echo "$flops / $tune_ms / 10^6" | bc -l)" \
    "$(echo "$flops / $bench_ms / 10^6" | bc -l | xargs printf '%.1f')" \
    "$(echo "$flops / $lib_ms / 10^6" | bc -l | xargs printf '%.1f')" \
    "$(echo "$bench_ms / $tune_ms" | bc -l)" "$(echo "$lib_ms / $tune_ms" | bc -l)"
  cat "$OUT/$name.lib"
}

KERNELS=${KERNELS:-matmul conv_l2b}
[[ " $KERNELS " == *" matmul "* ]] && one matmul examples/matmul.tex "matmul 1024 1024 1024" $((2 * 1024 * 1024 * 1024)) -D M=1024 -D N=1024 -D K=1024
[[ " $KERNELS " == *" conv_l2b "* ]] && one conv_l2b bench/tune_conv2d.tex "conv l2b 28 28 128 128 3 1 1" $((2 * 28 * 28 * 128 * 128 * 9)) \
  -D H=28 -D W=28 -D CI=128 -D CO=128 -D KS=3 -D S=1 -D PAD=1
