#!/bin/bash
# models.sh — real models (torchvision's, exported to ONNX) against onnxruntime (docs/ONNX.md,
# Models). tests/models/ holds each model with its weights stripped (the graph, and per
# initializer a `texc:uniform` generator that `--random-weights` fills it from), a seeded
# input and onnxruntime's output on the filled model (tests/models/make_models.py wrote them;
# no PyPI package is needed here). Each must give ||out - ref|| / ||ref|| < 1e-4 and the
# same top-5 classes.
#   TEXC=build/texc bash tests/suites/models.sh [MODEL ...]
TEXC=${TEXC:-build/texc}
HERE=$(cd "$(dirname "$0")" && pwd)
M=$HERE/../models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# compare OUT REF: "rel E, top-5 same" and exit 0, or what differs and exit 1 (.npy f32,
# read with the standard library alone)
compare() {
  python3 - "$1" "$2" <<'PY'
import ast, math, struct, sys
def npy(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:6] != b"\x93NUMPY":
        sys.exit(f"{path}: not a .npy file")
    hl = struct.unpack("<H", b[8:10])[0] if b[6] == 1 else struct.unpack("<I", b[8:12])[0]
    off = 10 if b[6] == 1 else 12
    h = ast.literal_eval(b[off:off + hl].decode("latin1"))
    if h["descr"] != "<f4" or h["fortran_order"]:
        sys.exit(f"{path}: {h['descr']}, not little-endian f32")
    n = math.prod(h["shape"])
    return list(struct.unpack(f"<{n}f", b[off + hl:off + hl + 4 * n]))
out, ref = npy(sys.argv[1]), npy(sys.argv[2])
if len(out) != len(ref):
    sys.exit(f"{len(out)} values, the reference has {len(ref)}")
rel = math.sqrt(sum((a - b) ** 2 for a, b in zip(out, ref))) / max(math.sqrt(sum(b * b for b in ref)), 1e-30)
top = lambda v: sorted(range(len(v)), key=lambda i: -v[i])[:5]
same = top(out) == top(ref)
print(f"rel {rel:.2e}, top-5 {'same' if same else 'differs: %s, reference %s' % (top(out), top(ref))}")
sys.exit(0 if rel < 1e-4 and same and math.isfinite(rel) else 1)
PY
}

models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  for f in "$M"/*.onnx; do models+=("$(basename "$f" .onnx)"); done
fi
for m in "${models[@]}"; do
  out=$("$TEXC" run "$M/$m.onnx" --random-weights --input "$M/$m.in.npy" --output "$tmp/$m.npy" 2>&1)
  if [ $? -ne 0 ]; then
    echo "not ok - models $m: $(grep -m1 error <<<"$out" | cut -c1-200)"
    continue
  fi
  res=$(compare "$tmp/$m.npy" "$M/$m.ref.npy" 2>&1) && echo "ok - models $m against onnxruntime: $res" \
    || echo "not ok - models $m against onnxruntime: $res"
done
[ $# -gt 0 ] && exit 0

# `texc import --random-weights` writes the generated weights: NET.tex runs to the same result
m=squeezenet1_1
if "$TEXC" import "$M/$m.onnx" --random-weights -o "$tmp/$m.tex" >/dev/null 2>&1 \
   && "$TEXC" run "$tmp/$m.tex" --input "$M/$m.in.npy" --output "$tmp/$m.tex.npy" >/dev/null 2>&1 \
   && res=$(compare "$tmp/$m.tex.npy" "$M/$m.ref.npy"); then
  echo "ok - models $m imported to .tex + .safetensors: $res"
else
  echo "not ok - models $m imported to .tex + .safetensors: ${res:-import or run failed}"
fi
# without --random-weights a stripped model is an error that names the initializer
err=$("$TEXC" run "$M/resnet18.onnx" --input "$M/resnet18.in.npy" 2>&1 >/dev/null); rc=$?
if [ $rc -eq 1 ] && grep -q "resnet18.onnx: initializer '.*' has no data, only a generator .*--random-weights fills it" <<<"$err"; then
  echo "ok - models: a stripped model without --random-weights"
else
  echo "not ok - models: a stripped model without --random-weights (exit $rc: $(head -c 300 <<<"$err"))"
fi
