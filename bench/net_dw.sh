#!/bin/bash
# bench/net_dw.sh BUILD [OLD_TEXC] — mobilenet's depthwise layers (depthwise conv + batch norm
# + relu, one task each as the network runs them) as single-layer network libraries, timed by
# bench/bench.c beside oneDNN's depthwise convolution (groups = channels; batch norm folded
# into its weights and bias, relu as a post-op) in one process, ROUNDS (3) interleaved rounds.
# Rows "default": the untuned CPU defaults (network_sched.c); "old": OLD_TEXC's defaults;
# "tuned": the best records of $OUT/LAYER.jsonl, "oldtuned": OLD_TEXC's of
# $OUT/LAYER.old.jsonl, when TUNE=N (N trials of `texc tune` per layer and build, run first;
# TUNE=0 or unset: reuse the records already there, if any).
# Prints medians per layer and variant and the geometric mean of oneDNN ms / texc ms.
# Not part of `make test`.
B=${1:-build}
OLD=$2
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
OUT=$B/bench/net_dw
mkdir -p "$OUT"
cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" \
  -lopenblas -ldnnl -ldl -lpthread -lm || exit 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
  "ISA $(grep -o -w -E 'avx512f|avx2|fma|asimd' /proc/cpuinfo | sort -u | tr '\n' ' ');" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); $TEX_NUM_THREADS threads"
: >"$OUT/man1"
none=$OUT/none.jsonl
rm -f "$none"
while read -r name h c s; do
  oh=$(((h + 2 - 3) / s + 1))
  cat >"$OUT/$name.tex" <<TEX
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network $name(x: f32[1, $h, $h, $c], w: f32[3, 3, $c], s: f32[$c], b: f32[$c]) -> y: f32[1, $oh, $oh, $c] {
  a = depthwise_conv2d_nhwc(x, w, SH = $s, SW = $s, PH = 1, PW = 1)
  a = batch_norm(a, s, b)
  y = relu(a)
}
TEX
  "$B/texc" "$OUT/$name.tex" --emit so --name net -o "$OUT/$name.so" --records "$none" || continue
  echo "netdw default $name $h $h $c 3 $s 1 $OUT/$name.so" >>"$OUT/man1"
  if [ -n "$OLD" ] && "$OLD" "$OUT/$name.tex" --emit so --name net -o "$OUT/${name}_old.so" --records "$none"; then
    echo "netdw old $name $h $h $c 3 $s 1 $OUT/${name}_old.so" >>"$OUT/man1"
  fi
  for who in new old; do
    t=$B/texc rec=$OUT/$name.jsonl v=tuned
    [ $who = old ] && t=$OLD rec=$OUT/$name.old.jsonl v=oldtuned
    [ -z "$t" ] && continue
    if [ "${TUNE:-0}" -gt 0 ]; then
      rm -f "$rec"
      nice -n 0 "$t" tune "$OUT/$name.tex" --trials "$TUNE" --records "$rec" >"$OUT/$name.$v.log" 2>&1
    fi
    if [ -s "$rec" ] && "$t" "$OUT/$name.tex" --emit so --name net -o "$OUT/${name}_$v.so" --records "$rec"; then
      echo "netdw $v $name $h $h $c 3 $s 1 $OUT/${name}_$v.so" >>"$OUT/man1"
    fi
  done
done <<'LAYERS'
d1 112 32 1
d2 112 64 2
d3 56 128 1
d4 56 128 2
d5 28 256 1
d6 28 256 2
d7 14 512 1
d12 14 512 2
d13 7 1024 1
LAYERS
: >"$OUT/man"
for ((r = 0; r < ${ROUNDS:-3}; r++)); do cat "$OUT/man1" >>"$OUT/man"; done
nice -n 0 "$OUT/bench" "$OUT/man" | tee "$OUT/rows.txt"
# rows: dw LAYER SHAPE kK sS VARIANT texc_ms anchor_ms onednn ratio gflops (fields 1-11)
echo "medians (texc ms, oneDNN ms, oneDNN/texc, texc GFLOP/s):"
awk '$1 == "dw" {k = $2 " " $6; t[k] = t[k] " " $7; a[k] = a[k] " " $8; g[k] = g[k] " " $11}
     END {for (k in t) print k, t[k], "|", a[k], "|", g[k]}' "$OUT/rows.txt" | sort -V | while read -r layer v rest; do
  med() { tr ' ' '\n' | grep . | sort -g | awk '{x[NR]=$1} END {print x[int((NR+1)/2)]}'; }
  tm=$(echo "${rest%%|*}" | med)
  mid=${rest#*|}
  am=$(echo "${mid%%|*}" | med)
  gf=$(echo "${rest##*|}" | med)
  printf '%-4s %-8s %9.3f %9.3f %6.2f %7.1f\n' "$layer" "$v" "$tm" "$am" "$(echo "$am / $tm" | bc -l)" "$gf"
done | tee "$OUT/medians.txt"
awk '{g[$2] += log($5); n[$2]++} END {for (v in g) printf "geomean oneDNN/texc (%s): %.2f\n", v, exp(g[v] / n[v])}' "$OUT/medians.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
