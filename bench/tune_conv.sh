#!/bin/bash
# bench/tune_conv.sh BUILD [LAYER...] — the auto-scheduler on resnet-18's 3x3 convolutions
# (bench/tune_conv2d.tex = bench/kernels/conv2d.tex with `tuned = auto`: NHWC, batch 1, f32), 2 threads: per layer one `texc tune`
# search (fresh records, TRIALS trials), then its best schedule, the hand schedule `blocked`
# and oneDNN timed in one process by bench/bench.c (REPS times, interleaved); medians.
# Layers: l1 l2a l2b l3a l3b l4a l4b (default: all). Not part of `make test`.
#   env: TRIALS (300), REPS (3), TEXC (default BUILD/texc), SKIP_TUNE=1 (time the records
#   of an earlier run again)
B=${1:-build}
shift
TRIALS=${TRIALS:-300}
REPS=${REPS:-3}
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
# the anchors' idle worker threads must not spin on the cores while texc is timed (OpenBLAS
# spins ~2^28 cycles after a call by default, libgomp a while): bench/truth.sh
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
TEXC=${TEXC:-$B/texc}
OUT=$B/bench/tune_conv
mkdir -p "$OUT"
cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" \
  -lopenblas -ldnnl -ldl -lpthread -lm || exit 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); $TEX_NUM_THREADS threads"

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }

# name H W CI CO K S PAD
LAYERS="l1 56 56 64 64 3 1 1
l2a 56 56 64 128 3 2 1
l2b 28 28 128 128 3 1 1
l3a 28 28 128 256 3 2 1
l3b 14 14 256 256 3 1 1
l4a 14 14 256 512 3 2 1
l4b 7 7 512 512 3 1 1"
want=" $* "
while read -r name h w ci co k s pad; do
  [ $# -gt 0 ] && [[ $want != *" $name "* ]] && continue
  D=(-D H=$h -D W=$w -D CI=$ci -D CO=$co -D KS=$k -D S=$s -D PAD=$pad)
  R=$OUT/$name.jsonl
  t0=$(date +%s.%N)
  if [ -z "$SKIP_TUNE" ]; then
    rm -f "$R"
    "$TEXC" tune bench/tune_conv2d.tex "${D[@]}" --trials "$TRIALS" --records "$R" \
      >"$OUT/$name.out" 2>"$OUT/$name.err" || { echo "$name: tune failed"; continue; }
    echo "$(date +%s.%N) - $t0" | bc >"$OUT/$name.wall"
  fi
  wall=$(cat "$OUT/$name.wall" 2>/dev/null || echo 0)
  n=$(grep -c . "$R")
  "$TEXC" bench/tune_conv2d.tex --schedule tuned --records "$R" --emit so -o "$OUT/$name.so" \
    "${D[@]}" 2>/dev/null || { echo "$name: best record does not build"; continue; }
  "$TEXC" bench/tune_conv2d.tex --schedule blocked --emit so -o "$OUT/${name}_blocked.so" "${D[@]}"
  : >"$OUT/$name.man"
  for rep in $(seq 1 "$REPS"); do
    echo "conv tuned $name $h $w $ci $co $k $s $pad $OUT/$name.so" >>"$OUT/$name.man"
    echo "conv blocked $name $h $w $ci $co $k $s $pad $OUT/${name}_blocked.so" >>"$OUT/$name.man"
  done
  "$OUT/bench" "$OUT/$name.man" >"$OUT/$name.txt"
  # rows: conv LAYER DIMS kK sS VARIANT texc_ms anchor_ms anchor ratio gflops
  t_ms=$(awk '$6=="tuned" {print $7}' "$OUT/$name.txt" | median)
  b_ms=$(awk '$6=="blocked" {print $7}' "$OUT/$name.txt" | median)
  o_ms=$(awk '$1=="conv" {print $8}' "$OUT/$name.txt" | median)
  gf=$(awk '$6=="tuned" {print $11}' "$OUT/$name.txt" | median)
  printf '%s %sx%sx%s>%s s%s: %d trials in %.0f s (%.2f trials/s); bench medians: auto %s ms (%s GFLOP/s), blocked %s ms, onednn %s ms; auto/onednn %.2f, auto/blocked %.2f\n' \
    "$name" "$h" "$w" "$ci" "$co" "$s" "$n" "$wall" "$(echo "$n / ($wall + 0.001)" | bc -l)" "$t_ms" "$gf" \
    "$b_ms" "$o_ms" "$(echo "$o_ms / $t_ms" | bc -l)" "$(echo "$b_ms / $t_ms" | bc -l)"
done <<<"$LAYERS"
