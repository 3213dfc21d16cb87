#!/bin/bash
# bench/onnx_zoo.sh — models beyond classification (scripts/export_zoo.py: segmentation, a
# U-Net, video, detection heads, recurrent layers, transformer encoders and decoders, audio),
# exported by PyTorch's dynamo exporter: texc against onnxruntime (PyPI), in one run.
#   bench/onnx_zoo.sh check [BUILD]   texc run MODEL.onnx against onnxruntime on the same
#                                     inputs (||out - ref|| / ||ref||): a markdown table
#   bench/onnx_zoo.sh bench [BUILD]   texc bench untuned (no records, TEX_NUM_THREADS=2) and
#                                     onnxruntime with 2 threads (median of ORT_RUNS runs),
#                                     ROUNDS alternated rounds, the medians: a markdown table
# Environment: PY (a python with torch, torchvision, transformers, onnx, onnxruntime;
# /work/torchenv/bin/python), ZOO (the models: default all of export_zoo.py's),
# MODELS_DIR (where the exported models are kept, made when missing; /tmp/texc-onnx-zoo),
# ROUNDS (3), REPEAT (texc bench's --repeat, 5), ORT_RUNS (20).
cd "$(dirname "$0")/.."
mode=${1:-check}; B=${2:-build}
PY=${PY:-/work/torchenv/bin/python}
D=${MODELS_DIR:-/tmp/texc-onnx-zoo}
TEXC=$B/texc
if ! "$PY" -c "import torch, torchvision, transformers, onnx, onnxruntime" 2>/dev/null; then
  echo "onnx_zoo.sh: $PY lacks torch, torchvision, transformers, onnx or onnxruntime (PY=... names another)" >&2
  exit 1
fi
[ "$mode" = check ] || [ "$mode" = bench ] || { echo "usage: bench/onnx_zoo.sh check|bench [BUILD]" >&2; exit 2; }
mkdir -p "$D"
ZOO=${ZOO:-$("$PY" -c "import sys; sys.path.insert(0, 'scripts'); import export_zoo; print(' '.join(export_zoo.ZOO))")}
miss=()
for m in $ZOO; do [ -s "$D/$m.onnx" ] && [ -s "$D/$m.ref.npy" ] || miss+=("$m"); done
[ ${#miss[@]} -eq 0 ] || "$PY" -W ignore scripts/export_zoo.py "$D" "${miss[@]}" >&2 # a failed export is reported; the others go on
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inputs() { ls "$D/$1".in*.npy | sort; }
echo "<!-- $(date -u '+%F %H:%M UTC'), commit $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) -->"

if [ "$mode" = check ]; then
  echo "| model | ONNX nodes | texc tasks | ‖out − ref‖/‖ref‖ | import + compile + run |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  for m in $ZOO; do
    [ -s "$D/$m.onnx" ] || { echo "| $m | | | export failed | |"; continue; }
    nodes=$("$PY" -c "import onnx; print(len(onnx.load('$D/$m.onnx', load_external_data=False).graph.node))")
    args=()
    for f in $(inputs "$m"); do args+=(--input "$f"); done
    t0=$(date +%s.%N)
    out=$("$TEXC" run "$D/$m.onnx" "${args[@]}" --output "$tmp/$m.npy" 2>&1)
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ]; then
      echo "| $m | $nodes | | $(grep -m1 error <<<"$out" | cut -c1-120) | |"
      continue
    fi
    tasks=$(grep -o '\[[0-9]* tasks' <<<"$out" | tr -dc 0-9)
    read -r rel _ < <("$PY" bench/onnx_models.py compare "$tmp/$m.npy" "$D/$m.ref.npy")
    printf '| %s | %s | %s | %s | %.1f s |\n' "$m" "$nodes" "$tasks" "$rel" "$(echo "$t1 - $t0" | bc)"
  done
  exit 0
fi

med() { sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
echo "| model | texc untuned ms (rounds) | onnxruntime 2 threads ms (rounds) | texc / ort |"
echo "| --- | --- | --- | ---: |"
for m in $ZOO; do
  [ -s "$D/$m.onnx" ] || continue
  ts=() os=()
  for ((r = 0; r < ${ROUNDS:-3}; r++)); do
    ts+=("$(TEX_NUM_THREADS=2 "$TEXC" bench "$D/$m.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-5}" 2>&1 |
      grep -o 'Measured latency: [0-9.]*' | grep -o '[0-9.]*$')")
    os+=("$("$PY" bench/onnx_models.py ort "$D/$m.onnx" "$(inputs "$m" | paste -sd,)" 2 "${ORT_RUNS:-20}" | cut -d' ' -f1)")
  done
  t=$(printf '%s\n' "${ts[@]}" | grep . | med) o=$(printf '%s\n' "${os[@]}" | grep . | med)
  ratio=$([ -n "$t" ] && [ -n "$o" ] && echo "scale=2; $t / $o" | bc | sed 's/^\./0./')
  printf '| %s | %s | %s | %s |\n' "$m" "${ts[*]:-failed}" "${os[*]}" "$ratio"
done
