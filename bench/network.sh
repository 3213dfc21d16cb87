#!/bin/bash
# bench/network.sh — resnet18 and mobilenet end to end: texc (best records of --records, else
# the untuned CPU defaults of network_sched.c) against onnxruntime with 1 and 2 threads on the
# same weights, in one run: ROUNDS rounds (default 3) of texc, ort 1 thread, ort 2 threads,
# interleaved so that all see the same load; prints each round and the medians.
#   [REPEAT=15] [ROUNDS=3] [NETS="resnet18 mobilenet"] [OLD=TEXC [OLD_ENV=VAR=VALUE]] bench/network.sh [BUILD] [RECORDS] [-D HW=...]
# OLD: another texc timed in the same rounds (before/after; OLD_ENV, e.g. TEXC_NET_PACK=0, in its
# environment).
# Needs: pip install onnxruntime onnx numpy (PY: the python to use, default python3).
cd "$(dirname "$0")/.."
B=${1:-build}; R=${2:-texc-records.jsonl}; shift 2 2>/dev/null
PY=${PY:-python3}
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2}
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores," \
  "ISA $(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')fma=$(grep -q -w fma /proc/cpuinfo && echo yes || echo no);" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); texc $TEX_NUM_THREADS threads"
for net in ${NETS:-resnet18 mobilenet}; do
  d=$(mktemp -d)
  TEXC_NET_DUMP=$d "$B/texc" run examples/$net.tex --records "$R" "$@" >/dev/null || exit 1
  echo "== $net $*"
  t=() o1=() o2=() old=()
  for ((r = 1; r <= ${ROUNDS:-3}; r++)); do
    line=$("$B/texc" bench examples/$net.tex --records "$R" --repeat "${REPEAT:-15}" "$@" | tail -1)
    echo "  round $r: $line"
    t+=("$(echo "$line" | sed -n 's/^Measured latency: \([0-9.]*\) ms.*/\1/p')")
    if [ -n "$OLD" ]; then
      # shellcheck disable=SC2086
      lo=$(env $OLD_ENV "$OLD" bench examples/$net.tex --records "$R" --repeat "${REPEAT:-15}" "$@" | tail -1)
      echo "  round $r: old: $lo"
      old+=("$(echo "$lo" | sed -n 's/^Measured latency: \([0-9.]*\) ms.*/\1/p')")
    fi
    l1=$($PY bench/network_ort.py examples/$net.tex "$d" 20 1); echo "  round $r: $l1"
    l2=$($PY bench/network_ort.py examples/$net.tex "$d" 20 2); echo "  round $r: $l2"
    o1+=("$(echo "$l1" | sed -n 's/.*: \([0-9.]*\) ms (min.*/\1/p')")
    o2+=("$(echo "$l2" | sed -n 's/.*: \([0-9.]*\) ms (min.*/\1/p')")
  done
  mt=$(printf '%s\n' "${t[@]}" | median) m1=$(printf '%s\n' "${o1[@]}" | median) m2=$(printf '%s\n' "${o2[@]}" | median)
  printf '%s medians: texc %s ms, onnxruntime 1 thread %s ms (texc %.2fx), 2 threads %s ms (texc %.2fx)\n' \
    "$net" "$mt" "$m1" "$(echo "$m1 / $mt" | bc -l)" "$m2" "$(echo "$m2 / $mt" | bc -l)"
  [ -n "$OLD" ] && printf '%s median: old texc %s ms (new / old %.2f)\n' "$net" "$(printf '%s\n' "${old[@]}" | median)" \
    "$(echo "$mt / $(printf '%s\n' "${old[@]}" | median)" | bc -l)"
  rm -rf "$d"
done
