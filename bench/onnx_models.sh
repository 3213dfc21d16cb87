#!/bin/bash
# bench/onnx_models.sh — torchvision's models through ONNX: texc against onnxruntime (PyPI),
# in one run (docs/ONNX.md, Models).
#   bench/onnx_models.sh check [BUILD]   every model of scripts/export_models.py: texc run
#                                        MODEL.onnx against onnxruntime on the same input
#                                        (||out - ref|| / ||ref||, top-5): a markdown table
#   bench/onnx_models.sh bench [BUILD]   latency: texc bench untuned (no records; 2 threads and
#                                        TEX_NUM_THREADS=1) for BENCH,
#                                        tuned (texc tune --time TUNE_TIME, then bench with
#                                        those records) for TUNE, onnxruntime with 1 and 2
#                                        threads (median of ORT_RUNS runs): a markdown table
# Environment: PY (a python with torch, torchvision, onnx, onnxruntime; /work/pyenv/bin/python),
# CHECK (check's models: default export_models.py's MODELS; "more": its MORE, 20 others; or
# any torchvision classification models by name),
# MODELS_DIR (where the exported models are kept, made when missing; /tmp/texc-onnx-models),
# BENCH (resnet18 mobilenet_v2 vit_b_16), TUNE (resnet18), TUNE_TIME (10m), REPEAT (texc
# bench's --repeat, 15), ORT_RUNS (30).
cd "$(dirname "$0")/.."
mode=${1:-check}; B=${2:-build}
PY=${PY:-/work/pyenv/bin/python}
D=${MODELS_DIR:-/tmp/texc-onnx-models}
TEXC=$B/texc
if ! "$PY" -c "import torch, torchvision, onnx, onnxruntime" 2>/dev/null; then
  echo "onnx_models.sh: $PY lacks torch, torchvision, onnx or onnxruntime (PY=... names another)" >&2
  exit 1
fi
mkdir -p "$D"
need() { # export the models not yet in $D
  local miss=()
  for m in "$@"; do [ -s "$D/$m.onnx" ] && [ -s "$D/$m.ref.npy" ] || miss+=("$m"); done
  [ ${#miss[@]} -eq 0 ] || "$PY" -W ignore scripts/export_models.py "$D" "${miss[@]}" >&2 || exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "<!-- $(date -u '+%F %H:%M UTC'), commit $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) -->"

if [ "$mode" = check ]; then
  ALL=$("$PY" -c "import sys; sys.path.insert(0, 'scripts'); import export_models; print(' '.join(export_models.MODELS))")
  [ "$CHECK" = more ] && CHECK=$("$PY" -c "import sys; sys.path.insert(0, 'scripts'); import export_models; print(' '.join(export_models.MORE))")
  ALL=${CHECK:-$ALL}
  need $ALL
  echo "| model | ONNX nodes | texc tasks | ‖out − ref‖/‖ref‖ | top-5 | import + compile + run |"
  echo "| --- | ---: | ---: | ---: | --- | ---: |"
  for m in $ALL; do
    nodes=$("$PY" -c "import onnx; print(len(onnx.load('$D/$m.onnx', load_external_data=False).graph.node))")
    t0=$(date +%s.%N)
    out=$("$TEXC" run "$D/$m.onnx" --input "$D/$m.in.npy" --output "$tmp/$m.npy" 2>&1)
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ]; then
      echo "| $m | $nodes | | $(grep -m1 error <<<"$out" | cut -c1-120) | | |"
      continue
    fi
    tasks=$(grep -o '\[[0-9]* tasks' <<<"$out" | tr -dc 0-9)
    read -r rel top < <("$PY" bench/onnx_models.py compare "$tmp/$m.npy" "$D/$m.ref.npy")
    printf '| %s | %s | %s | %s | %s | %.1f s |\n' "$m" "$nodes" "$tasks" "$rel" "$top" "$(echo "$t1 - $t0" | bc)"
  done
  exit 0
fi

[ "$mode" = bench ] || { echo "usage: bench/onnx_models.sh check|bench [BUILD]" >&2; exit 2; }
BENCH=${BENCH:-resnet18 mobilenet_v2 vit_b_16}
TUNE=${TUNE-resnet18}  # TUNE="" tunes none
need $BENCH
lat() { grep -o 'Measured latency: [0-9.]* ms' | grep -o '[0-9.]*'; }
echo "| model | texc untuned ms | texc untuned, 1 thread | texc tuned ms (tune time) | onnxruntime 1 thread ms | onnxruntime 2 threads ms | untuned / ort-2 | tuned / ort-2 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for m in $BENCH; do
  u=$("$TEXC" bench "$D/$m.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat)
  u1=$(TEX_NUM_THREADS=1 "$TEXC" bench "$D/$m.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat)
  t=""
  if [[ " $TUNE " == *" $m "* ]]; then
    "$TEXC" tune "$D/$m.onnx" --records "$tmp/$m.jsonl" --time "${TUNE_TIME:-10m}" --quiet >/dev/null 2>&1
    t=$("$TEXC" bench "$D/$m.onnx" --records "$tmp/$m.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat)
    [ -n "$t" ] && cp "$tmp/$m.jsonl" "$D/$m.records.jsonl"
  fi
  read -r o1 _ < <("$PY" bench/onnx_models.py ort "$D/$m.onnx" "$D/$m.in.npy" 1 "${ORT_RUNS:-30}")
  read -r o2 _ < <("$PY" bench/onnx_models.py ort "$D/$m.onnx" "$D/$m.in.npy" 2 "${ORT_RUNS:-30}")
  ratio() { [ -n "$1" ] && [ -n "$2" ] && echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$m" "${u:-failed}" "${u1:-failed}" "${t:+$t (${TUNE_TIME:-10m})}" "$o1" "$o2" \
    "$(ratio "$u" "$o2")" "$(ratio "$t" "$o2")"
done
