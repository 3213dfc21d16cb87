#!/bin/bash
# bench/net_convs.sh BUILD [OLD_TEXC] — resnet-18's 3x3 convolutions as the network runs them
# (conv + relu fused in one task) under the untuned CPU defaults (network_sched.c), against
# oneDNN's convolution, timed by bench/bench.c in one process, ROUNDS (3) interleaved rounds;
# with OLD_TEXC also that build's defaults (rows "old"). Prints medians per layer, the
# geometric mean of oneDNN ms / texc ms and the machine. Not part of `make test`.
# TEXC_FLAGS: more texc options ("--mcpu haswell": AVX2 code on an AVX-512 host, beside
# ONEDNN_MAX_CPU_ISA=AVX2 for oneDNN).
B=${1:-build}
OLD=$2
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
OUT=$B/bench/net_convs
mkdir -p "$OUT"
cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" \
  -lopenblas -ldnnl -ldl -lpthread -lm || exit 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
  "ISA $(grep -o -w -E 'avx512f|avx2|fma|asimd' /proc/cpuinfo | sort -u | tr '\n' ' ');" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); $TEX_NUM_THREADS threads"
[ -n "$TEXC_FLAGS$ONEDNN_MAX_CPU_ISA" ] && echo "texc flags: ${TEXC_FLAGS:-none}; oneDNN ISA limit: ${ONEDNN_MAX_CPU_ISA:-none}"
: >"$OUT/man1"
while read -r name h w ci co k s pad; do
  oh=$(((h + 2 * pad - k) / s + 1))
  cat >"$OUT/$name.tex" <<TEX
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network $name(x: f32[1, $h, $w, $ci], w: f32[$k, $k, $ci, $co]) -> y: f32[1, $oh, $oh, $co] {
  a = conv2d_nhwc(x, w, SH = $s, SW = $s, PH = $pad, PW = $pad)
  y = relu(a)
}
TEX
  none=$OUT/none.jsonl
  # shellcheck disable=SC2086
  "$B/texc" "$OUT/$name.tex" $TEXC_FLAGS --emit so --name net -o "$OUT/$name.so" --records "$none" || continue
  echo "netconvrelu default $name $h $w $ci $co $k $s $pad $OUT/$name.so" >>"$OUT/man1"
  # shellcheck disable=SC2086
  if [ -n "$OLD" ] && "$OLD" "$OUT/$name.tex" $TEXC_FLAGS --emit so --name net -o "$OUT/${name}_old.so" --records "$none"; then
    echo "netconvrelu old $name $h $w $ci $co $k $s $pad $OUT/${name}_old.so" >>"$OUT/man1"
  fi
done <<'LAYERS'
l1 56 56 64 64 3 1 1
l2a 56 56 64 128 3 2 1
l2b 28 28 128 128 3 1 1
l3a 28 28 128 256 3 2 1
l3b 14 14 256 256 3 1 1
l4a 14 14 256 512 3 2 1
l4b 7 7 512 512 3 1 1
LAYERS
: >"$OUT/man"
for ((r = 0; r < ${ROUNDS:-3}; r++)); do cat "$OUT/man1" >>"$OUT/man"; done
"$OUT/bench" "$OUT/man" | tee "$OUT/rows.txt"
# rows: conv LAYER SHAPE kK sS VARIANT texc_ms anchor_ms onednn ratio gflops (fields 1-10)
echo "medians (texc ms, oneDNN ms, oneDNN/texc):"
awk '$1 == "conv" {k = $2 " " $6; t[k] = t[k] " " $7; a[k] = a[k] " " $8}
     END {for (k in t) print k, t[k], "|", a[k]}' "$OUT/rows.txt" | sort | while read -r layer v rest; do
  tm=$(echo "${rest%%|*}" | tr ' ' '\n' | grep . | sort -g | awk '{x[NR]=$1} END {print x[int((NR+1)/2)]}')
  am=$(echo "${rest#*|}" | tr ' ' '\n' | grep . | sort -g | awk '{x[NR]=$1} END {print x[int((NR+1)/2)]}')
  printf '%-4s %-8s %9.3f %9.3f %6.2f\n' "$layer" "$v" "$tm" "$am" "$(echo "$am / $tm" | bc -l)"
done | tee "$OUT/medians.txt"
awk '{g[$2] += log($5); n[$2]++} END {for (v in g) printf "geomean oneDNN/texc (%s): %.2f\n", v, exp(g[v] / n[v])}' "$OUT/medians.txt"
