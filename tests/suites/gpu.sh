#!/bin/bash
# GPU back ends on every example: each opencl variant (and the default GPU schedule) runs on
# the OpenCL device (PoCL on a CPU-only machine) and matches the interpreter; each cuda variant
# compiles to PTX through NVRTC; CUDA runs need a device and are skipped without one.
cd "$(dirname "$0")/../.."
declare -A small=(
  [vadd]="-D N=1000"
  [matmul]="-D M=64 -D N=48 -D K=32"
  [conv2d]="-D H=9 -D W=7 -D CI=8 -D CO=16"
  [softmax]="-D N=13 -D M=40"
  [transpose]="-D N=70 -D M=37"
  [blur]="-D H=50 -D W=70"
  [batch_matmul]="-D BATCH=3 -D M=20 -D N=40 -D K=17"
  [scan]="-D B=100 -D N=300"
  [histogram]="-D N=100000"
  [argmax]="-D M=100 -D N=200"
)
report() { # LABEL RC OUT [PATTERN]
  if [ "$2" -eq 0 ] && { [ -z "$4" ] || grep -q "$4" <<<"$3"; }; then echo "ok - $1"
  else echo "not ok - $1"; echo "$3" | head -20 | sed 's/^/    /'; fi
}

if clinfo -l 2>/dev/null | grep -q 'Device'; then have_cl=1; else have_cl=0; fi
if [ -e /dev/nvidia0 ] || nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then have_cuda=1; else have_cuda=0; fi
[ -e /usr/local/cuda/lib64/libnvrtc.so ] || ldconfig -p 2>/dev/null | grep -q libnvrtc && have_nvrtc=1 || have_nvrtc=0

for f in examples/*.tex; do
  name=$(basename "$f" .tex)
  sizes=${small[$name]}
  for v in default $(scripts/variants.sh "$f" opencl); do
    sched=""; [ "$v" = default ] || sched="--schedule $v"
    label="opencl run --check $name.$v"
    if [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; continue; fi
    out=$(timeout 300 "$TEXC" run "$f" --target opencl $sched $sizes --check 2>&1)
    report "$label" $? "$out" 'check: .*: ok'
  done
  for v in default $(scripts/variants.sh "$f" cuda); do
    sched=""; [ "$v" = default ] || sched="--schedule $v"
    label="cuda --emit ptx $name.$v"
    if [ $have_nvrtc = 0 ]; then echo "skip - $label: no NVRTC"; continue; fi
    out=$(timeout 120 "$TEXC" "$f" --target cuda $sched $sizes --emit ptx -o - 2>&1)
    report "$label" $? "$out" '\.entry'
    label="cuda run --check $name.$v"
    if [ $have_cuda = 0 ]; then echo "skip - $label: no CUDA device"; continue; fi
    out=$(timeout 300 "$TEXC" run "$f" --target cuda $sched $sizes --check 2>&1)
    report "$label" $? "$out" 'check: .*: ok'
  done
done

# Errors are clear, never a hang: a kernel too wide for a block, and CUDA without a device.
# The limit is the device's (PoCL allows 4096 threads per block): 65536 exceeds any.
tmp=$(mktemp -d)
cat > "$tmp/wide.tex" <<'TEX'
const N = 131072
kernel wide(A: f32[N]) -> B: f32[N] {
  B[i] = A[i] * 2.0
}
schedule wide.g for opencl, cuda {
  o, i = split(B.i, 65536)
  bind(o, blockIdx.x)
  bind(i, threadIdx.x)
}
TEX
out=$(timeout 60 "$TEXC" "$tmp/wide.tex" --target opencl --schedule g --emit opencl 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q 'threads per block' <<<"$out" && grep -q 'wide.tex:8:' <<<"$out"; then
  echo "ok - too many threads per block is an error at the bind step"
else echo "not ok - too many threads per block is an error at the bind step"; echo "$out" | head -5 | sed 's/^/    /'; fi
if [ $have_cuda = 0 ]; then
  out=$(timeout 60 "$TEXC" run examples/vadd.tex --target cuda -D N=64 2>&1); rc=$?
  if [ $rc -ne 0 ] && grep -qi 'no CUDA device' <<<"$out"; then echo "ok - cuda run without a device says so"
  else echo "not ok - cuda run without a device says so"; echo "$out" | head -5 | sed 's/^/    /'; fi
fi
# A network of three results on the device: each group against the interpreter, and the
# results equal to the CPU's within --check's tolerance.
if [ $have_cuda = 1 ]; then
  label="cuda network of three results (tests/lit/network/results.tex)"
  out=$(timeout 120 "$TEXC" run tests/lit/network/results.tex --target cuda --check --output "$tmp/f.npy" --output "$tmp/h.npy" \
    --output "$tmp/p.npy" 2>&1 && timeout 60 "$TEXC" run tests/lit/network/results.tex --expect "$tmp/f.npy" --expect "$tmp/h.npy" \
    --expect "$tmp/p.npy" 2>&1)
  if [ $? -eq 0 ] && grep -q "check: .*: ok" <<<"$out" && [ "$(grep -c "expect .*: ok" <<<"$out")" = 3 ]; then echo "ok - $label"
  else echo "not ok - $label"; echo "$out" | tail -5 | sed 's/^/    /'; fi
  label="cuda network of integer inputs and an integer result (tests/lit/network/int_input.tex)"
  out=$(timeout 120 "$TEXC" run tests/lit/network/int_input.tex --kernel emb --target cuda --check 2>&1 &&
    timeout 120 "$TEXC" run tests/lit/network/int_input.tex --kernel int_result --target cuda --check 2>&1)
  if [ $? -eq 0 ] && [ "$(grep -c "check: .*: ok" <<<"$out")" = 2 ]; then echo "ok - $label"
  else echo "not ok - $label"; echo "$out" | tail -5 | sed 's/^/    /'; fi
fi
# texc bench of an `= auto` variant on a GPU: the default is timed after the auto search, whose
# candidates run in forked children, so no device is initialised in texc before it forks
# (a CUDA context does not survive fork, nor PoCL's threads: every candidate used to fail).
for t in opencl cuda; do
  label="$t bench of an auto variant (search in children, then time)"
  if [ $t = opencl ] && [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; continue; fi
  if [ $t = cuda ] && [ $have_cuda = 0 ]; then echo "skip - $label: no CUDA device"; continue; fi
  out=$(timeout 600 "$TEXC" bench examples/matmul.tex --target $t --schedule tuned ${small[matmul]} \
    --records "$tmp/auto-$t.jsonl" 2>&1)
  report "$label" $? "$out" '^matmul  *tuned  *[0-9]'
done
# Tuning on a GPU target: a worker (one device context, many candidates) whose candidate
# crashes or hangs costs that record and that worker; the next worker goes on. The crash is
# a real SIGSEGV, not one that PoCL's own handler swallows.
label="opencl tune: an injected crash and hang become error records, the search goes on"
if [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; else
  TEXC_TUNE_INJECT=crash:1,hang:4 timeout 300 "$TEXC" tune examples/matmul.tex --target opencl \
    ${small[matmul]} --trials 12 --run-timeout 2 --quiet --records "$tmp/inject.jsonl" >/dev/null 2>&1
  errs=$(python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["error"]) for l in open(sys.argv[1])))' \
    "$tmp/inject.jsonl" 2>/dev/null)
  [ "$(wc -w <<<"$errs")" = 12 ] && [ "$(grep -o '\b3\b' <<<"$errs" | wc -l)" = 1 ] &&
    [ "$(grep -o '\b6\b' <<<"$errs" | wc -l)" = 1 ] && grep -q 'signal 11' "$tmp/inject.jsonl"
  report "$label" $? "errors: $errs"
fi
# fuzz-schedule on a GPU target: its odd trials are the tuner's GPU candidates (sketches
# sampled and mutated), the even ones random steps; each checked against the interpreter.
# It found a batch axis named `b` making a name twice (Z_b2) and scans fused across their
# axis (the tuner then had no candidate for a scan on a GPU).
for spec in "batch_matmul:${small[batch_matmul]}" "scan:${small[scan]}"; do
  IFS=: read -r name sizes <<<"$spec"
  label="opencl fuzz-schedule $name: random steps and the tuner's GPU candidates match the interpreter"
  if [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; continue; fi
  out=$(timeout 400 "$TEXC" fuzz-schedule "examples/$name.tex" --target opencl --count 16 --seed 5 $sizes 2>&1)
  report "$label" $? "$out" ' 0 failed .*8 of them the tuner.s GPU candidates'
done

# The tuner's GPU space against the interpreter on this OpenCL device: every candidate (shared
# tiles fetched cooperatively, some shorter than the block, padded rows, double buffers) of a
# padded stride-2 convolution (resnet18's t5 in small) under an H100's limits and of a
# matmul under the device's is run and compared (--check-all): none may be wrong.
cat > "$tmp/s2conv.tex" <<'TEX'
const H = 10, W = 10, CI = 8, CO = 16
kernel s2conv(X: f32[1, H, W, CI], F: f32[3, 3, CI, CO]) -> Y: f32[1, H / 2, W / 2, CO] {
  tensor P: f32[1, H + 2, W + 2, CI]
  P[n, h, w, c] = h >= 1 && h <= H && w >= 1 && w <= W ? X[n, h - 1, w - 1, c] : 0.0
  Y[n, h, w, co] += P[n, 2 * h + rh, 2 * w + rw, ci] * F[rh, rw, ci, co]
}
TEX
for spec in "s2conv:$tmp/s2conv.tex:--gpu-limits 1024,49152,132" "matmul:examples/matmul.tex:${small[matmul]}"; do
  IFS=: read -r name file extra <<<"$spec"
  label="opencl tune --check-all: every candidate of $name matches the interpreter"
  if [ $have_cl = 0 ]; then echo "skip - $label: no OpenCL device"; continue; fi
  timeout 400 "$TEXC" tune "$file" --target opencl $extra --check-all --trials 24 --seed 3 --quiet \
    --records "$tmp/$name-all.jsonl" >/dev/null 2>&1
  counts=$(python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
print(len(rs), sum(r["error"] == 0 for r in rs), sum(r["error"] == 4 for r in rs), sum("shared" in r["schedule"] for r in rs))' \
    "$tmp/$name-all.jsonl" 2>/dev/null)
  read -r n good wrong shared <<<"$counts"
  [ "${n:-0}" = 24 ] && [ "${wrong:-1}" = 0 ] && [ "${good:-0}" -ge 12 ] && [ "${shared:-0}" -ge 3 ]
  report "$label" $? "records $n, ok $good, wrong $wrong, with shared tiles $shared"
done
rm -rf "$tmp"
