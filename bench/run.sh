#!/bin/bash
# bench/run.sh BUILD — texc kernels against OpenBLAS sgemm, oneDNN conv and memcpy, 2 threads
# (FULL=1: also bench/net_convs.sh, truth.sh and network.sh, at the end).
# Kernels come from `texc FILE.tex --emit so`, and also from hand-built loop IR through the
# same LLVM back end (tests/unit/test_llvm.c; variants "-hand"). Results: bench/RESULTS.md.
B=${1:-build}
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
# the anchors' idle worker threads must not spin on the cores while texc is timed (OpenBLAS
# spins ~2^28 cycles after a call by default, libgomp a while): bench/truth.sh
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
TEXC=$B/texc
OUT=$B/bench
mkdir -p "$OUT"
MAN=$OUT/manifest
: >"$MAN"

cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" -lopenblas -ldnnl -ldl -lpthread -lm || exit 1

# so KIND VARIANT "MANIFEST FIELDS" FILE.tex -D... : compile one kernel, add it to the manifest
so() {
  local kind=$1 variant=$2 fields=$3 file=$4; shift 4
  local out="$OUT/${kind}_${variant}_$(echo "$fields" | tr ' ' '_').so"
  if "$TEXC" "$file" --schedule "$variant" --emit so -o "$out" "$@" 2>"$OUT/err.log"; then
    echo "$kind $variant $fields $out" >>"$MAN"
  else
    echo "texc could not build $kind $variant $fields: $(head -1 "$OUT/err.log")" >&2
  fi
}

for v in tiled blocked; do
  for s in 256 512 1024 2048; do so matmul $v "$s $s $s" examples/matmul.tex -D M=$s -D N=$s -D K=$s; done
done
so vadd fast 16777216 examples/vadd.tex -D N=16777216
# resnet-18 conv layers: name H W CI CO K S PAD
while read -r name h w ci co k s pad; do
  for v in rows blocked; do
    so conv $v "$name $h $w $ci $co $k $s $pad" bench/kernels/conv2d.tex \
      -D H=$h -D W=$w -D CI=$ci -D CO=$co -D KS=$k -D S=$s -D PAD=$pad
  done
done <<'LAYERS'
conv1 224 224 3 64 7 2 3
l1 56 56 64 64 3 1 1
l2a 56 56 64 128 3 2 1
l2b 28 28 128 128 3 1 1
l2d 56 56 64 128 1 2 0
l3a 28 28 128 256 3 2 1
l3b 14 14 256 256 3 1 1
l3d 28 28 128 256 1 2 0
l4a 14 14 256 512 3 2 1
l4b 7 7 512 512 3 1 1
l4d 14 14 256 512 1 2 0
LAYERS

# The same schedules built by hand as loop IR through the same back end (rows "-hand"):
# separates code generation from lowering. Needs the unit tests to link.
if make -s B="$B" "$B/tests/unit/test_llvm" >/dev/null 2>&1; then
  mkdir -p "$OUT/hand" && TEXC_BENCH_OUT=$OUT/hand "$B/tests/unit/test_llvm" && cat "$OUT/hand/manifest" >>"$MAN"
else
  echo "(tests/unit/test_llvm does not link: no hand-built IR rows)"
fi
grep -q . "$MAN" || { echo "bench: nothing to measure"; exit 1; }

# compile time of texc itself: matmul .tex -> object
if [ -x "$TEXC" ]; then
  t0=$(date +%s%N)
  if "$TEXC" examples/matmul.tex --schedule blocked --emit obj -o "$OUT/m.o" 2>/dev/null; then
    echo "texc examples/matmul.tex --schedule blocked --emit obj: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  fi
fi
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, ISA $(grep -o -w -E 'avx512f|avx2|fma|asimd|sve' /proc/cpuinfo | sort -u | tr '\n' ' '); $(date -u +%F)"
"$OUT/bench" "$MAN"
# FULL=1 (`make bench FULL=1` passes it through the environment): also the untuned network
# convolutions against oneDNN, the three figures of one tuned schedule, and the networks
# against onnxruntime (PY: a python with onnxruntime; skipped without one).
if [ -n "$FULL" ]; then
  bench/net_convs.sh "$B" && bench/truth.sh "$B"
  if ${PY:-python3} -c 'import onnxruntime' 2>/dev/null; then bench/network.sh "$B" /dev/null
  else echo "(no onnxruntime for ${PY:-python3}: bench/network.sh skipped)"; fi
fi
