#!/bin/bash
# The differential test: many random valid step lists on every example, each checked against
# the interpreter's default-schedule result (texc fuzz-schedule). COUNT per kernel.
cd "$(dirname "$0")/../.."
COUNT=${FUZZ_COUNT:-150}
# A trial's limit: a schedule that fully unrolls two loops (19 x 23 bodies of a split k) takes
# LLVM 20 s to compile on one core, over 60 s under ASan on a loaded machine. A hang still
# shows at 180 s.
TRIAL=${FUZZ_TRIAL_TIMEOUT:-180s}
declare -A small=(
  [vadd]="-D N=77"
  [matmul]="-D M=19 -D N=23 -D K=9"
  [conv2d]="-D H=5 -D W=6 -D CI=3 -D CO=5"
  [softmax]="-D N=7 -D M=11"
  [transpose]="-D N=13 -D M=9"
  [blur]="-D H=11 -D W=13"
  [batch_matmul]="-D BATCH=2 -D M=7 -D N=9 -D K=5"
  [scan]="-D B=5 -D N=37"
  [histogram]="-D N=300 -D NB=256"
  [argmax]="-D M=7 -D N=29"
)
total=0
for f in examples/*.tex; do
  name=$(basename "$f" .tex)
  grep -q '^network ' "$f" && continue   # networks: tests/suites/network.sh
  out=$(timeout 900 "$TEXC" fuzz-schedule "$f" ${small[$name]} --count "$COUNT" --seed 7 --run-timeout "$TRIAL" 2>&1)
  rc=$?
  n=$(grep -oE '[0-9]+ random schedules checked' <<<"$out" | awk '{s+=$1} END {print s+0}')
  total=$((total + n))
  if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then echo "ok - differential $name: $n random schedules"
  else echo "not ok - differential $name (rc $rc)"; echo "$out" | grep -v '^ok' | head -40 | sed 's/^/    /'; fi
done
# Scans, scatters, argmax=, triangular ranges (LANGUAGE.md): random schedules of their golden kernels, the
# steps that would reorder a scan or race on a scatter refused at the step.
for f in tests/lit/scan/scan.tex tests/lit/scatter/scatter.tex tests/lit/argmax/argmax.tex \
         tests/lit/triangular/tri.tex tests/lit/scalar/scalar.tex tests/lit/anyall/anyall.tex \
         tests/lit/update/update.tex; do
  name=$(basename "$(dirname "$f")")
  out=$(timeout 900 "$TEXC" fuzz-schedule "$f" --count $(( (COUNT + 3) / 4 )) --seed 7 --run-timeout "$TRIAL" 2>&1)
  rc=$?
  n=$(grep -oE '[0-9]+ random schedules checked' <<<"$out" | awk '{s+=$1} END {print s+0}')
  total=$((total + n))
  if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then echo "ok - differential $name: $n random schedules"
  else echo "not ok - differential $name (rc $rc)"; echo "$out" | grep -v '^ok' | head -40 | sed 's/^/    /'; fi
done
echo "# differential: $total random schedules checked in all" >&2

# Integer edges and vector paths, compiled against the interpreter (texc run --check).
# edges.tex: wrapping, floor division, x / 0, INT_MIN / -1 at every width, inputs at the
# dtypes' edges (--int-edges), on LLVM (-O0 and -O3), OpenCL and CUDA (skipped without a
# device). vector.tex: every expression kind under vector / unroll schedules at sizes the
# vector width divides (odd sizes fall back to scalar loops), small and edge inputs.
if clinfo -l 2>/dev/null | grep -q 'Device'; then have_cl=1; else have_cl=0; fi
if [ -e /dev/nvidia0 ] || nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then have_cuda=1; else have_cuda=0; fi
check_run() { # LABEL ARGS...: ok when texc run --check passes every kernel
  local label=$1; shift
  local out rc
  out=$(timeout 600 "$TEXC" run "$@" --check 2>&1); rc=$?
  if [ $rc -eq 0 ] && ! grep -q 'FAILED\|MISMATCH' <<<"$out"; then echo "ok - $label"
  else echo "not ok - $label (rc $rc)"; echo "$out" | grep -v ': ok$' | head -20 | sed 's/^/    /'; fi
}
in=tests/suites/inputs
[ -e /usr/local/cuda/lib64/libnvrtc.so ] || ldconfig -p 2>/dev/null | grep -q libnvrtc && have_nvrtc=1 || have_nvrtc=0
for f in edges vector; do # the CUDA source compiles (NVRTC) even where no device runs it
  label="differential $f.tex cuda --emit ptx"
  if [ $have_nvrtc = 0 ]; then echo "skip - $label: no NVRTC"; continue; fi
  out=$(timeout 300 "$TEXC" $in/$f.tex --target cuda -D n=64 -D m=5 --emit ptx -o /dev/null 2>&1); rc=$?
  if [ $rc -eq 0 ]; then echo "ok - $label"; else echo "not ok - $label (rc $rc)"; echo "$out" | head -20 | sed 's/^/    /'; fi
done
for t in llvm opencl cuda; do
  for edges in "" --int-edges; do
    label="differential integer edges $t${edges:+ $edges}"
    if [ $t = opencl ] && [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; continue; fi
    if [ $t = cuda ] && [ $have_cuda = 0 ]; then echo "skip - $label: no CUDA device"; continue; fi
    check_run "$label" $in/edges.tex --target $t -D n=64 -D m=9 $edges
    [ $t = llvm ] && check_run "$label -O0" $in/edges.tex -O0 -D n=64 -D m=9 $edges
  done
done
out=$(timeout 900 "$TEXC" fuzz-schedule $in/edges.tex -D n=24 -D m=5 --count "$((COUNT / 5 + 1))" --seed 7 --int-edges --run-timeout "$TRIAL" 2>&1); rc=$?
n=$(grep -oE '[0-9]+ random schedules checked' <<<"$out" | awk '{s+=$1} END {print s+0}')
if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then echo "ok - differential edges.tex --int-edges: $n random schedules"
else echo "not ok - differential edges.tex --int-edges (rc $rc)"; echo "$out" | grep -v '^ok' | head -40 | sed 's/^/    /'; fi
for v in v8 v4 u vu; do
  for n in 64 128; do
    check_run "differential vector.$v n=$n" $in/vector.tex --schedule $v -D n=$n -D m=5
    check_run "differential vector.$v n=$n --int-edges" $in/vector.tex --schedule $v -D n=$n -D m=5 --int-edges
  done
done
for t in opencl cuda; do
  label="differential vector.tex default $t --int-edges"
  if [ $t = opencl ] && [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; continue; fi
  if [ $t = cuda ] && [ $have_cuda = 0 ]; then echo "skip - $label: no CUDA device"; continue; fi
  check_run "$label" $in/vector.tex --target $t -D n=64 -D m=5 --int-edges
done
