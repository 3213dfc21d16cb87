#!/bin/bash
# bench/gpu.sh OUTDIR — texc on an NVIDIA GPU, everything in one run (a lent GPU is short):
#   tests   every example's CUDA variants and default run --check (SUITE=1: all of
#           tests/suites/gpu.sh, OpenCL too), random GPU schedules checked against the
#           interpreter (fuzz-schedule --target cuda), integer edges and vector paths, the
#           deploy suite (the CUDA library), resnet18 and mobilenet --check at -D HW=112
#   bench   matmul hand schedules at 1024 and 4096 beside cuBLAS (bench/gpu_anchor.py), each
#           shared-memory one with and without double_buffer (gpu_searched / _db, gpu_coop /
#           gpu_db) and with its copies staged through registers (gpu_dbl, gpu_stage)
#   tune    `texc tune` of matmul 1024 and 4096 for TUNE_TIME each; trials per second; the
#           tuned kernel beside cuBLAS
#   nets    resnet18 and mobilenet untuned (with and without the CUDA graph, and the bare
#           kernels' default) beside torchvision's in eager mode and CUDA graphs
#   defaults per task: the GPU network default (TEXC_GPU_DEFAULT_BLOCKS in WANTS) and bare
#   onnx    torchvision's ONNX_MODELS exported here: texc on CUDA against onnxruntime's result,
#           untuned and bare latency; ONNX_TUNE tuned for ONNX_TUNE_TIME
#   nettune `texc tune` of resnet18 for NET_TUNE_TIME, then its measured latency
# SECTIONS="tests bench" picks some. Each step has its own time limit; the log is OUTDIR/log.
# With the device tool: ../shared/tools/gpu-bundle.sh, then carry .gpu and run
#   bash .gpu/run.sh bash bench/gpu.sh $OUT
cd "$(dirname "$0")/.."
O=${1:-/tmp/texc-gpu}; mkdir -p "$O"
T=${TEXC:-$PWD/build/texc}
PY=${PY:-python3}
SECTIONS=${SECTIONS:-tests bench tune nets nettune}
TUNE_TIME=${TUNE_TIME:-60s}
exec > >(tee -a "$O/log") 2>&1
step() { echo "== $* ($(date +%T))"; }
has() { [[ " $SECTIONS " == *" $1 "* ]]; }
mm() { echo "-D M=$1 -D N=$1 -D K=$1"; }

step "device"; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
"$T" --version 2>&1 | head -2

if has tests; then
  step "tests: every example's CUDA variants and default, run --check (tests/suites/gpu.sh's CUDA part)"
  declare -A small=([vadd]="-D N=1000" [matmul]="-D M=64 -D N=48 -D K=32" [conv2d]="-D H=9 -D W=7 -D CI=8 -D CO=16"
    [softmax]="-D N=13 -D M=40" [transpose]="-D N=70 -D M=37" [blur]="-D H=50 -D W=70"
    [batch_matmul]="-D BATCH=3 -D M=20 -D N=40 -D K=17" [scan]="-D B=100 -D N=300" [histogram]="-D N=100000"
    [argmax]="-D M=100 -D N=200")
  ok=0; bad=0
  for f in examples/*.tex; do
    name=$(basename "$f" .tex); grep -q '^network ' "$f" && continue
    for v in default $(scripts/variants.sh "$f" cuda); do
      s=""; [ $v = default ] || s="--schedule $v"
      out=$(timeout 120 "$T" run "$f" --target cuda $s ${small[$name]} --check 2>&1)
      if [ $? -eq 0 ] && grep -q 'check: .*: ok' <<<"$out"; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "not ok - $name.$v"; head -8 <<<"$out"; fi
    done
  done
  echo "cuda run --check: $ok ok, $bad not ok"
  [ -n "$SUITE" ] && { timeout 240 bash tests/suites/gpu.sh > "$O/suite_gpu.log" 2>&1
    echo "gpu.sh: $(grep -c '^ok' "$O/suite_gpu.log") ok, $(grep -c '^not ok' "$O/suite_gpu.log") not ok"; }
  step "tests: tests/suites/deploy.sh (the CUDA library: net_run_device, top-5 as the CPU library's)"
  timeout 180 bash tests/suites/deploy.sh > "$O/suite_deploy.log" 2>&1
  echo "deploy.sh: $(grep -c '^ok' "$O/suite_deploy.log") ok, $(grep -c '^not ok' "$O/suite_deploy.log") not ok"
  grep -A6 '^not ok' "$O/suite_deploy.log" | head -30; grep 'CUDA' "$O/suite_deploy.log"
  step "tests: networks on CUDA (GPU default, one CUDA graph) against the interpreter, -D HW=${CHECK_HW:-112}"
  for net in resnet18 mobilenet; do
    timeout 150 "$T" run examples/$net.tex --target cuda -D HW=${CHECK_HW:-112} --check --records "$O/none.jsonl" 2>&1 | grep -E 'check:|MISMATCH|error|tasks'
  done
  step "tests: random CUDA schedules against the interpreter"
  for k in "matmul:-D M=19 -D N=23 -D K=9" "conv2d:-D H=5 -D W=6 -D CI=3 -D CO=5" "softmax:-D N=7 -D M=11" \
           "transpose:-D N=13 -D M=9" "batch_matmul:-D BATCH=2 -D M=7 -D N=9 -D K=5" "blur:-D H=11 -D W=13"; do
    out=$(timeout 60 "$T" fuzz-schedule examples/${k%%:*}.tex --target cuda ${k#*:} --count ${FUZZ:-25} --seed 3 2>&1); rc=$?
    echo "fuzz ${k%%:*} rc=$rc: $(grep -oE '[0-9]+ random schedules checked' <<<"$out" | head -1)"
    [ $rc -eq 0 ] || grep -v '^ok' <<<"$out" | head -15
  done
  step "tests: integer edges and vectors on CUDA"
  for a in "tests/suites/inputs/edges.tex -D n=64 -D m=9" "tests/suites/inputs/edges.tex -D n=64 -D m=9 --int-edges" \
           "tests/suites/inputs/vector.tex -D n=64 -D m=5 --int-edges"; do
    out=$(timeout 120 "$T" run $a --target cuda --check 2>&1); rc=$?
    if [ $rc -eq 0 ] && ! grep -q 'FAILED\|MISMATCH' <<<"$out"; then echo "ok - $a"; else echo "not ok - $a (rc $rc)"; grep -v ': ok$' <<<"$out" | head -10; fi
  done
fi

if has bench; then
  step "bench: matmul hand schedules"
  for n in 1024 4096; do
    for v in default gpu shared gpu_fast gpu_searched gpu_searched_db gpu_stage; do
      s=""; [ $v = default ] || s="--schedule $v"
      timeout 60 "$T" bench examples/matmul.tex --target cuda $s $(mm $n) --repeat 5 2>&1 | grep -E '^matmul' | sed "s/^/$n /"
    done
    for v in gpu_pad gpu_coop gpu_db gpu_dbl; do
      timeout 60 "$T" bench docs/examples/matmul.tex --target cuda --schedule $v $(mm $n) --repeat 5 2>&1 | grep -E '^matmul' | sed "s/^/$n /"
    done
  done
  timeout 60 $PY bench/gpu_anchor.py matmul 1024 4096
fi

if has tune; then
  for n in 1024 4096; do
    step "tune: matmul $n for $TUNE_TIME"
    timeout 200 "$T" tune examples/matmul.tex --target cuda $(mm $n) --time $TUNE_TIME --records "$O/mm$n.jsonl" > "$O/tune$n.log" 2>&1
    echo "rc=$?; $(wc -l < "$O/mm$n.jsonl") records"; tail -4 "$O/tune$n.log"
    timeout 60 "$T" bench examples/matmul.tex --target cuda --schedule tuned $(mm $n) --records "$O/mm$n.jsonl" --repeat 5 2>&1 | grep -E '^matmul|error'
  done
fi

if has nets; then
  for net in resnet18 mobilenet; do
    step "nets: $net untuned: GPU default in one CUDA graph; without the graph; --schedule bare"
    timeout 150 "$T" bench examples/$net.tex --target cuda --records "$O/none.jsonl" --repeat 20 2>&1 | grep -E 'Measured|error'
    TEXC_CUDA_GRAPH=0 timeout 150 "$T" bench examples/$net.tex --target cuda --records "$O/none.jsonl" --repeat 20 2>&1 | grep -E 'Measured|error'
    timeout 150 "$T" bench examples/$net.tex --target cuda --schedule bare --repeat 20 2>&1 | grep -E 'Measured|error'
  done
  timeout 150 "$T" bench examples/resnet18.tex --target cuda --records "$O/none.jsonl" --repeat 10 -v 2>&1 | grep -A40 '^ ID'
  timeout 120 $PY bench/gpu_anchor.py nets
fi

if has defaults; then # per task: the GPU network default for each TEXC_GPU_DEFAULT_BLOCKS in WANTS, and bare
  for net in resnet18 mobilenet; do
    for w in ${WANTS:-512} bare; do
      step "defaults: $net $w"
      if [ $w = bare ]; then a="--schedule bare"; else a="--records $O/none.jsonl"; fi
      TEXC_GPU_DEFAULT_BLOCKS=$w timeout 100 "$T" bench examples/$net.tex --target cuda $a --repeat 10 -v 2>&1 | grep -E '^ +[0-9]+  t|^sum|Measured|error'
    done
  done
fi

if has onnx; then # torchvision models exported on this machine (scripts/export_models.py)
  M=$O/models
  step "onnx: export ${ONNX_MODELS:=resnet18 mobilenet_v2}"
  timeout 120 $PY -W ignore scripts/export_models.py "$M" $ONNX_MODELS 2>&1 | tail -3
  for m in $ONNX_MODELS; do
    step "onnx: $m on CUDA against onnxruntime's result; untuned default and bare"
    timeout 120 "$T" run "$M/$m.onnx" --target cuda --input "$M/$m.in.npy" --expect "$M/$m.ref.npy" --records "$O/none.jsonl" 2>&1 | grep -E 'expect|error'
    timeout 100 "$T" bench "$M/$m.onnx" --target cuda --records "$O/none.jsonl" --repeat 20 2>&1 | grep -E 'Measured|error'
    timeout 100 "$T" bench "$M/$m.onnx" --target cuda --schedule bare --repeat 20 2>&1 | grep -E 'Measured|error'
  done
  for m in $ONNX_TUNE; do
    step "onnx: tune $m for ${ONNX_TUNE_TIME:-60s}"
    timeout 300 "$T" tune "$M/$m.onnx" --target cuda --time ${ONNX_TUNE_TIME:-60s} --records "$O/$m.jsonl" > "$O/tune_$m.log" 2>&1
    echo "rc=$?"; grep -E 'Estimated total' "$O/tune_$m.log" | tail -1
    timeout 120 "$T" run "$M/$m.onnx" --target cuda --input "$M/$m.in.npy" --expect "$M/$m.ref.npy" --records "$O/$m.jsonl" 2>&1 | grep -E 'expect|error'
    timeout 100 "$T" bench "$M/$m.onnx" --target cuda --records "$O/$m.jsonl" --repeat 20 2>&1 | grep -E 'Measured|error'
  done
fi

if has anchors; then
  step "anchors: torchvision resnet18 and mobilenet_v2"
  timeout 120 $PY bench/gpu_anchor.py nets
fi

if has nettune; then
  step "nettune: resnet18 for ${NET_TUNE_TIME:-120s}"
  timeout 400 "$T" tune examples/resnet18.tex --target cuda --time ${NET_TUNE_TIME:-120s} --records "$O/r18.jsonl" > "$O/nettune.log" 2>&1
  echo "rc=$?; $(wc -l < "$O/r18.jsonl") records"; grep -E 'Estimated total|Trials' "$O/nettune.log" | tail -3
  timeout 150 "$T" bench examples/resnet18.tex --target cuda --records "$O/r18.jsonl" --repeat 20 2>&1 | grep -E 'Measured|error'
fi
step "done"
