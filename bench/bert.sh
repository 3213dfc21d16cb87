#!/bin/bash
# bench/bert.sh — a BERT encoder (transformers' BertModel, random weights) through ONNX:
# texc against onnxruntime (PyPI), in one run (docs/ONNX.md, Integer inputs).
#   bench/bert.sh [BUILD]     export (scripts/export_bert.py) when missing; check texc run
#                             against onnxruntime's two outputs; then latency: texc bench
#                             untuned (2 threads and TEX_NUM_THREADS=1), tuned when TUNE_TIME
#                             is set (texc tune --time TUNE_TIME, then bench with the records),
#                             onnxruntime with 1 and 2 threads (median of ORT_RUNS runs)
# Environment: PY (torch, transformers, onnx, onnxruntime; /work/torchenv/bin/python), SIZE
# ("12 768 128": layers, hidden, sequence), BERT_DIR (/tmp/texc-bert-L-H-S), REPEAT (texc
# bench's --repeat, 15), ORT_RUNS (30), TUNE_TIME (unset: no tuning).
cd "$(dirname "$0")/.."
B=${1:-build}
PY=${PY:-/work/torchenv/bin/python}
SIZE=${SIZE:-12 768 128}
read -r L H S <<<"$SIZE"
D=${BERT_DIR:-/tmp/texc-bert-$L-$H-$S}
TEXC=$B/texc
if ! "$PY" -c "import torch, transformers, onnx, onnxruntime" 2>/dev/null; then
  echo "bert.sh: $PY lacks torch, transformers, onnx or onnxruntime (PY=... names another)" >&2
  exit 1
fi
mkdir -p "$D"
[ -s "$D/bert.onnx" ] && [ -s "$D/pooled.npy" ] || "$PY" -W ignore scripts/export_bert.py "$D" $L $H $S >/dev/null 2>&1 ||
  { echo "bert.sh: export failed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
IN=(--input "$D/ids.npy" --input "$D/mask.npy" --input "$D/tt.npy")
echo "<!-- $(date -u '+%F %H:%M UTC'), commit $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) -->"
echo "BERT: $L layers, hidden $H, sequence $S, batch 1"
out=$("$TEXC" run "$D/bert.onnx" "${IN[@]}" --expect "$D/hidden.npy" --expect "$D/pooled.npy" 2>&1)
grep "expect" <<<"$out" | sed 's/^ */  /'
[ "$(grep -c 'expect .*: ok' <<<"$out")" = 2 ] || { echo "bert.sh: texc differs from onnxruntime" >&2; exit 1; }
lat() { grep -o 'Measured latency: [0-9.]* ms' | grep -o '[0-9.]*'; }
u=$("$TEXC" bench "$D/bert.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat)
u1=$(TEX_NUM_THREADS=1 "$TEXC" bench "$D/bert.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat)
t=""
if [ -n "$TUNE_TIME" ]; then
  "$TEXC" tune "$D/bert.onnx" --records "$D/bert.records.jsonl" --time "$TUNE_TIME" --quiet >/dev/null 2>&1
  t=$("$TEXC" bench "$D/bert.onnx" --records "$D/bert.records.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat)
fi
read -r o1 _ < <("$PY" bench/onnx_models.py ort "$D/bert.onnx" "$D/ids.npy,$D/mask.npy,$D/tt.npy" 1 "${ORT_RUNS:-30}")
read -r o2 _ < <("$PY" bench/onnx_models.py ort "$D/bert.onnx" "$D/ids.npy,$D/mask.npy,$D/tt.npy" 2 "${ORT_RUNS:-30}")
ratio() { [ -n "$1" ] && [ -n "$2" ] && echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }
echo "| model | texc untuned ms | texc untuned, 1 thread | texc tuned ms | onnxruntime 1 thread ms | onnxruntime 2 threads ms | untuned / ort-2 | untuned 1 thread / ort-1 | tuned / ort-2 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '| bert L%s H%s S%s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$L" "$H" "$S" "${u:-failed}" "${u1:-failed}" \
  "${t:+$t ($TUNE_TIME)}" "$o1" "$o2" "$(ratio "$u" "$o2")" "$(ratio "$u1" "$o1")" "$(ratio "$t" "$o2")"
