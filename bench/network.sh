#!/bin/bash
# bench/network.sh — resnet18 and mobilenet end to end: texc (best records of --records, else
# the untuned CPU defaults of network_sched.c) against onnxruntime on the same weights, in one run.
#   [REPEAT=15] bench/network.sh [BUILD] [RECORDS] [-D HW=...]
# Needs: pip install onnxruntime onnx numpy.
cd "$(dirname "$0")/.."
B=${1:-build}; R=${2:-texc-records.jsonl}; shift 2 2>/dev/null
for net in resnet18 mobilenet; do
  d=$(mktemp -d)
  TEXC_NET_DUMP=$d "$B/texc" run examples/$net.tex --records "$R" "$@" >/dev/null || exit 1
  echo "== $net $*"
  "$B/texc" bench examples/$net.tex --records "$R" --repeat "${REPEAT:-15}" "$@" | tail -1
  python3 bench/network_ort.py examples/$net.tex "$d" 20
  rm -rf "$d"
done
