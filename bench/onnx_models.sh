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
#   bench/onnx_models.sh quant [BUILD]   quantized models (docs/ONNX.md, "Quantized models"):
#                                        QUANT's models through quantize_static (QDQ), QOP's
#                                        in the QOperator form (QLinearConv, com.microsoft's
#                                        QLinearAdd, ...; QOP= for none), DYN's through
#                                        quantize_dynamic (ConvInteger; DYN= for none) and a
#                                        4-layer BERT-base through quantize_dynamic (when
#                                        transformers is there): texc (integer kernels where
#                                        the CPU has VNNI), texc with TEXC_NET_INT8=0 (f32) and
#                                        onnxruntime 2 threads, medians of ROUNDS alternated
#                                        rounds; the output against onnxruntime's
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

if [ "$mode" = quant ]; then
  QUANT=${QUANT:-resnet18 mobilenet_v2 resnet50 efficientnet_b0 googlenet vit_b_16}
  need $QUANT
  Q=$D/quant
  mkdir -p "$Q"
  models=()
  for m in $QUANT; do
    [ -s "$Q/${m}_qdq.onnx" ] || "$PY" -W ignore bench/onnx_models.py quantize "$D/$m.onnx" "$D/$m.in.npy" "$Q/${m}_qdq.onnx" "$Q/${m}_qdq.ref.npy" >/dev/null 2>&1 ||
      { echo "onnx_models.sh: quantize_static of $m failed" >&2; continue; }
    models+=("${m}_qdq")
  done
  for m in ${QOP-resnet18 resnet50 mobilenet_v2 googlenet}; do # the QOperator form (QLinearConv, com.microsoft's QLinearAdd, ...)
    [ -s "$Q/${m}_qop.onnx" ] || "$PY" -W ignore bench/onnx_models.py quantize "$D/$m.onnx" "$D/$m.in.npy" "$Q/${m}_qop.onnx" "$Q/${m}_qop.ref.npy" qop >/dev/null 2>&1 ||
      { echo "onnx_models.sh: quantize_static (QOperator) of $m failed" >&2; continue; }
    models+=("${m}_qop")
  done
  for m in ${DYN-resnet18 mobilenet_v2}; do # quantize_dynamic of a CNN: ConvInteger read as floats
    [ -s "$Q/${m}_dyn.onnx" ] || "$PY" -W ignore bench/onnx_models.py dynamic "$D/$m.onnx" "$D/$m.in.npy" "$Q/${m}_dyn.onnx" "$Q/${m}_dyn.ref.npy" >/dev/null 2>&1 ||
      { echo "onnx_models.sh: quantize_dynamic of $m failed" >&2; continue; }
    models+=("${m}_dyn")
  done
  if "$PY" -c "import transformers" 2>/dev/null; then # scripts/export_bert.py's, 4 layers
    B4=$Q/bert4
    mkdir -p "$B4"
    bin="$B4/ids.npy,$B4/mask.npy,$B4/tt.npy"
    { [ -s "$B4/bert.onnx" ] || "$PY" -W ignore scripts/export_bert.py "$B4" 4 768 128 >/dev/null 2>&1; } &&
      { [ -s "$Q/bert_dq.onnx" ] || "$PY" -W ignore bench/onnx_models.py dynamic "$B4/bert.onnx" "$bin" "$Q/bert_dq.onnx" "$Q/bert_dq.ref.npy" >/dev/null 2>&1; } &&
      models+=(bert_dq) || echo "onnx_models.sh: the BERT export or its quantize_dynamic failed" >&2
  fi
  med() { sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'; }
  lat() { grep -o 'Measured latency: [0-9.]* ms' | grep -o '[0-9.]*'; }
  echo "| model | texc int8 ms | texc f32 (TEXC_NET_INT8=0) ms | onnxruntime 2 threads ms | int8 / ort | f32 / int8 | ‖texc − ort‖/‖ort‖ | top-5 |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
  for m in "${models[@]}"; do
    if [ "$m" = bert_dq ]; then in=(--input "$B4/ids.npy" --input "$B4/mask.npy" --input "$B4/tt.npy"); oin=$bin
    else b=${m%_qdq}; b=${b%_qop}; b=${b%_dyn}; in=(--input "$D/$b.in.npy"); oin="$D/$b.in.npy"; fi
    "$TEXC" run "$Q/$m.onnx" "${in[@]}" --output "$tmp/$m.npy" >/dev/null 2>&1
    read -r rel top < <("$PY" bench/onnx_models.py compare "$tmp/$m.npy" "$Q/$m.ref.npy" 2>/dev/null)
    : >"$tmp/a"; : >"$tmp/b"; : >"$tmp/o"
    for r in $(seq "${ROUNDS:-3}"); do
      "$TEXC" bench "$Q/$m.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat >>"$tmp/a"
      TEXC_NET_INT8=0 "$TEXC" bench "$Q/$m.onnx" --records "$tmp/none.jsonl" --repeat "${REPEAT:-15}" 2>&1 | lat >>"$tmp/b"
      "$PY" bench/onnx_models.py ort "$Q/$m.onnx" "$oin" 2 "${ORT_RUNS:-30}" | cut -d' ' -f1 >>"$tmp/o"
    done
    a=$(med <"$tmp/a"); b=$(med <"$tmp/b"); o=$(med <"$tmp/o")
    ratio() { [ -n "$1" ] && [ -n "$2" ] && echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$m" "${a:-failed}" "${b:-failed}" "$o" "$(ratio "$a" "$o")" "$(ratio "$b" "$a")" "$rel" "$top"
  done
  exit 0
fi

[ "$mode" = bench ] || { echo "usage: bench/onnx_models.sh check|bench|quant [BUILD]" >&2; exit 2; }
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
