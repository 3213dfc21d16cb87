#!/bin/bash
# bench/tune_matmul.sh BUILD [RUNS] — the auto-scheduler on matmul 1024^3 f32, 2 threads:
# RUNS independent `texc tune` searches (seeds 1..RUNS, fresh records, TRIALS trials each),
# then each search's best schedule, the hand schedule examples/matmul.tex `blocked` and
# OpenBLAS sgemm timed in one process by bench/bench.c (REPS times, interleaved).
# Prints per run: trials, wall time, trials/s, best GFLOP/s as tune measured it, and the
# medians of the bench: texc ms, blocked ms, OpenBLAS ms, ratios. Not part of `make test`.
#   env: TRIALS (1000), REPS (3), SIZE (1024), TEXC (default BUILD/texc)
B=${1:-build}
RUNS=${2:-3}
TRIALS=${TRIALS:-1000}
REPS=${REPS:-3}
S=${SIZE:-1024}
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
# the anchors' idle worker threads must not spin on the cores while texc is timed (OpenBLAS
# spins ~2^28 cycles after a call by default, libgomp a while): bench/truth.sh
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
TEXC=${TEXC:-$B/texc}
OUT=$B/bench/tune_matmul
mkdir -p "$OUT"
cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" \
  -lopenblas -ldnnl -ldl -lpthread -lm || exit 1
D=(-D M=$S -D N=$S -D K=$S)
"$TEXC" examples/matmul.tex --schedule blocked --emit so -o "$OUT/blocked.so" "${D[@]}" || exit 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); $TEX_NUM_THREADS threads"

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }

for run in $(seq 1 "$RUNS"); do
  R=$OUT/run$run.jsonl
  rm -f "$R"
  t0=$(date +%s.%N)
  "$TEXC" tune examples/matmul.tex "${D[@]}" --trials "$TRIALS" --seed "$run" --records "$R" \
    >"$OUT/run$run.out" 2>"$OUT/run$run.err" || { echo "run $run: tune failed"; continue; }
  wall=$(echo "$(date +%s.%N) - $t0" | bc)
  n=$(grep -c . "$R")
  tuned_gf=$(head -1 "$OUT/run$run.out" | sed 's/.*ms, \([0-9.]*\) GFLOP.*/\1/')
  "$TEXC" examples/matmul.tex --schedule tuned --records "$R" --emit so -o "$OUT/tuned$run.so" \
    "${D[@]}" 2>/dev/null || { echo "run $run: best record does not build"; continue; }
  : >"$OUT/man$run"
  for rep in $(seq 1 "$REPS"); do
    echo "matmul tuned $S $S $S $OUT/tuned$run.so" >>"$OUT/man$run"
    echo "matmul blocked $S $S $S $OUT/blocked.so" >>"$OUT/man$run"
  done
  "$OUT/bench" "$OUT/man$run" >"$OUT/bench$run.txt"
  # rows: matmul SIZE VARIANT texc_ms anchor_ms anchor ratio gflops
  t_ms=$(awk '$3=="tuned" {print $4}' "$OUT/bench$run.txt" | median)
  b_ms=$(awk '$3=="blocked" {print $4}' "$OUT/bench$run.txt" | median)
  o_ms=$(awk '$1=="matmul" {print $5}' "$OUT/bench$run.txt" | median)
  printf 'run %d: %d trials in %.0f s (%.2f trials/s, %.3f s/trial); tune best %s GFLOP/s; bench medians: auto %s ms (%.1f GFLOP/s), blocked %s ms, openblas %s ms; auto/openblas %.2f, auto/blocked %.2f\n' \
    "$run" "$n" "$wall" "$(echo "$n / $wall" | bc -l)" "$(echo "$wall / $n" | bc -l)" "$tuned_gf" \
    "$t_ms" "$(echo "2 * $S^3 / $t_ms / 10^6" | bc -l)" "$b_ms" "$o_ms" \
    "$(echo "$o_ms / $t_ms" | bc -l)" "$(echo "$b_ms / $t_ms" | bc -l)"
done
