#!/bin/bash
# Whole networks: resnet18 and mobilenet at a reduced input size (-D HW=32) compiled for
# llvm and opencl, every fused group checked against the interpreter; the task table at
# full size; a short `texc tune` of a small network that resumes from its log.
cd "$(dirname "$0")/../.."
TEXC=${TEXC:-build/texc}
for net in resnet18 mobilenet; do
  for t in llvm opencl; do
    label="run --check $net -D HW=32 on $t"
    if [ "$t" = opencl ] && ! "$TEXC" run examples/vadd.tex --target opencl -D N=16 >/dev/null 2>&1; then
      echo "skip - $label: no OpenCL device"; continue
    fi
    out=$(timeout 300 "$TEXC" run examples/$net.tex -D HW=32 --target $t --check 2>&1)
    if [ $? -eq 0 ] && grep -q 'check: .* groups against the interpreter, .*: ok' <<<"$out"; then echo "ok - $label"
    else echo "not ok - $label"; echo "$out" | tail -5 | sed 's/^/    /'; fi
  done
  out=$("$TEXC" examples/$net.tex --emit tasks 2>&1)
  if [ $? -eq 0 ] && grep -q "^network $net: .* tasks" <<<"$out"; then echo "ok - tasks of $net"
  else echo "not ok - tasks of $net"; echo "$out" | tail -5 | sed 's/^/    /'; fi
done
# Tune: 2 rounds, then a rerun that reads the trials back from the same log.
tmp=$(mktemp -d)
cat > "$tmp/small.tex" <<'NET'
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network small(x: f32[1, 8, 8, 8], w: f32[3, 3, 8, 8], b: f32[8]) -> y: f32[1, 8, 8, 8] {
  y = conv2d_nhwc(x, w, PH = 1, PW = 1)
  y = bias_add(y, b)
  y = relu(y)
}
NET
out=$(timeout 300 "$TEXC" tune "$tmp/small.tex" --trials 8 --round 4 --records "$tmp/r.jsonl" 2>&1)
if [ $? -eq 0 ] && grep -q 'Estimated total latency: [0-9.]* ms  Trials: 8 ' <<<"$out"; then echo "ok - tune a network"
else echo "not ok - tune a network"; echo "$out" | tail -8 | sed 's/^/    /'; fi
out=$(timeout 300 "$TEXC" tune "$tmp/small.tex" --trials 4 --round 4 --records "$tmp/r.jsonl" 2>&1)
if [ $? -eq 0 ] && grep -q 'Trials: 12 ' <<<"$out"; then echo "ok - tune resumes from the log"
else echo "not ok - tune resumes from the log"; echo "$out" | tail -8 | sed 's/^/    /'; fi
# --quiet: no round tables, the final one; --batch and --min-repeat-ms reach the search and
# the measurer (ignored before, as --quiet was); --deterministic is refused by name
out=$(timeout 300 "$TEXC" tune "$tmp/small.tex" --trials 4 --round 4 --batch 2 --min-repeat-ms 1 --quiet --records "$tmp/q.jsonl" 2>&1)
if [ $? -eq 0 ] && ! grep -q '^round ' <<<"$out" && [ "$(grep -c '^Estimated total latency' <<<"$out")" = 1 ]; then echo "ok - tune a network --quiet"
else echo "not ok - tune a network --quiet"; echo "$out" | tail -8 | sed 's/^/    /'; fi
out=$("$TEXC" tune "$tmp/small.tex" --trials 4 --deterministic --records "$tmp/q.jsonl" 2>&1)
if [ $? -eq 1 ] && grep -q 'deterministic applies to kernels' <<<"$out"; then echo "ok - tune a network --deterministic: refused"
else echo "not ok - tune a network --deterministic: refused"; echo "$out" | tail -5 | sed 's/^/    /'; fi
out=$("$TEXC" bench "$tmp/small.tex" --records "$tmp/r.jsonl" 2>&1)
if [ $? -eq 0 ] && grep -q 'Measured latency: [0-9.]* ms .* Estimated: [0-9.]* ms' <<<"$out"; then echo "ok - bench a tuned network"
else echo "not ok - bench a tuned network"; echo "$out" | tail -5 | sed 's/^/    /'; fi
# --interp: the whole network in the reference interpreter (each f32 operation rounded, as
# numpy's float32 would: a batch norm's x * s + b twice, where compiled code has one FMA);
# the compiled run within --check's tolerances of it.
cat > "$tmp/bn.tex" <<'NET'
import "nn/elementwise.tex"
network bn(x: f32[1, 4, 4, 16], scale: f32[16], bias: f32[16]) -> y: f32[1, 4, 4, 16] {
  y = batch_norm(x, scale, bias)
  y = relu(y)
}
NET
mkdir -p "$tmp/dump"
out=$(TEXC_NET_DUMP="$tmp/dump" "$TEXC" run "$tmp/bn.tex" --interp 2>&1) && out=$(python3 - "$tmp/dump" <<'PY' 2>&1
import struct, sys
d = sys.argv[1]
def f32s(name):
    b = open(f"{d}/{name}.bin", "rb").read()
    return struct.unpack(f"{len(b) // 4}f", b)
def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]
x, s, b, y = f32s("x"), f32s("scale"), f32s("bias"), f32s("output")
want = [max(f32(f32(v * s[i % 16]) + b[i % 16]), 0.0) for i, v in enumerate(x)]
bad = sum(1 for u, w in zip(y, want) if u != w)
print(f"{bad} of {len(y)} differ from the twice-rounded x * s + b" if bad else "exact")
PY
)
if [ "$out" = exact ]; then echo "ok - run --interp: a network in the interpreter, rounded as f32"
else echo "not ok - run --interp: a network in the interpreter, rounded as f32"; echo "$out" | tail -5 | sed 's/^/    /'; fi
out=$("$TEXC" run examples/resnet18.tex -D HW=32 --interp --output "$tmp/ref.npy" 2>&1) &&
  grep -q '\[.* tasks, interpreted\]' <<<"$out" &&
  out=$("$TEXC" run examples/resnet18.tex -D HW=32 --expect "$tmp/ref.npy" 2>&1)
if [ $? -eq 0 ] && grep -q "expect .*: ok" <<<"$out"; then echo "ok - resnet18 -D HW=32 compiled against its --interp run"
else echo "not ok - resnet18 -D HW=32 compiled against its --interp run"; echo "$out" | tail -5 | sed 's/^/    /'; fi
# bench: --number N passes per measurement (the JSON's calls_per_run), --min-repeat-ms grows them.
out=$("$TEXC" bench "$tmp/bn.tex" --number 3 --min-repeat-ms 0 --repeat 2 --json 2>&1)
if [ $? -eq 0 ] && grep -q '"calls_per_run":[[:space:]]*3$' <<<"$out"; then echo "ok - bench a network --number 3"
else echo "not ok - bench a network --number 3"; echo "$out" | tail -5 | sed 's/^/    /'; fi
out=$("$TEXC" bench "$tmp/bn.tex" --min-repeat-ms 20 --repeat 2 2>&1)
if [ $? -eq 0 ] && grep -q 'Measured latency: .*, [0-9]* passes each)' <<<"$out"; then echo "ok - bench a network --min-repeat-ms 20"
else echo "not ok - bench a network --min-repeat-ms 20"; echo "$out" | tail -5 | sed 's/^/    /'; fi
rm -rf "$tmp"
