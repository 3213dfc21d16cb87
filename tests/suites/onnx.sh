#!/bin/bash
# onnx.sh — ONNX's own backend node tests (Debian's libonnx-testdata) through `texc run
# MODEL.onnx --input ... --expect ...`, and bad ONNX/.npy/weights input (docs/ONNX.md).
# A node test of an operator texc imports is "ok", "not ok", or "skip - ...: not supported:
# WHY" (an attribute, dtype or form the importer refuses by name); tests of operators it
# does not import are counted in the closing note only.
#   TEXC=build/texc bash tests/suites/onnx.sh [PATTERN|bad]   (a glob of node tests; bad: the
#   bad-input tests alone)
TEXC=${TEXC:-build/texc}
DATA=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data/node}
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0 other=0

# ---- node tests -------------------------------------------------------------------
if [ "$1" = bad ]; then
  :
elif [ ! -d "$DATA" ]; then
  echo "skip - onnx node tests: no $DATA (install libonnx-testdata: scripts/install-deps.sh)"
else
  for dir in "$DATA"/${1:-test_*}/; do
    t=$(basename "$dir")
    [ -f "$dir/model.onnx" ] || continue
    status=ok why=""
    for set in "$dir"/test_data_set_*/; do
      args=()
      for f in "$set"/input_*.pb; do [ -e "$f" ] && args+=(--input "$f"); done
      for ((k = 0; k < 64; k++)); do [ -e "$set/output_$k.pb" ] && args+=(--expect "$set/output_$k.pb") || break; done
      out=$(TEX_NUM_THREADS=1 timeout 120 "$TEXC" run "$dir/model.onnx" "${args[@]}" 2>&1)
      rc=$?
      if grep -q "not supported: operator" <<<"$out"; then status=other; break; fi
      if grep -q "not supported: " <<<"$out"; then
        status=skip why=$(grep -m1 -o "not supported: .*" <<<"$out"); break
      fi
      nexp=$(grep -c "^--expect" < <(printf '%s\n' "${args[@]}")); nok=$(grep -c "^  expect .*: ok" <<<"$out")
      if [ $rc -ne 0 ] || [ "$nexp" -eq 0 ] || [ "$nok" -ne "$nexp" ]; then
        status=fail why=$(grep -m1 -E "error|MISMATCH" <<<"$out" | sed "s|$DATA/||g" | cut -c1-200); break
      fi
    done
    case $status in
      ok) echo "ok - onnx $t"; pass=$((pass + 1)) ;;
      skip) echo "skip - onnx $t: $why"; skip=$((skip + 1)) ;;
      fail) echo "not ok - onnx $t: ${why:-exit $rc}"; fail=$((fail + 1)) ;;
      other) other=$((other + 1)) ;;
    esac
  done
  echo "# onnx node tests: $pass passed, $fail failed, $skip not supported (of the operators texc imports); $other tests of other operators"
fi
[ -n "$1" ] && [ "$1" != bad ] && exit 0

# ---- bad input --------------------------------------------------------------------
# expect_error NAME PATTERN CMD...: exit 1, PATTERN in stderr, no crash.
expect_error() {
  local name=$1 pat=$2; shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 1 ] && grep -q -- "$pat" <<<"$err"; then echo "ok - onnx bad input: $name"
  else echo "not ok - onnx bad input: $name (exit $rc: $(head -c 300 <<<"$err"))"; fi
}
# expect_all LABEL ARGS...: `texc run ARGS --check` prints an ok line for every --expect in
# ARGS and a passing check against the interpreter.
expect_all() {
  local label=$1; shift
  local n=0 a out
  for a in "$@"; do [ "$a" = --expect ] && n=$((n + 1)); done
  out=$("$TEXC" run "$@" --check 2>&1)
  if [ "$(grep -c "expect .*: ok" <<<"$out")" = "$n" ] && grep -q "check: .*: ok" <<<"$out"; then echo "ok - onnx $label"
  else echo "not ok - onnx $label: $out"; fi
}
# expect_all under both paths of a quantized model: the integer kernels (TEXC_NET_INT8=1,
# where the CPU has them) and the f32 / plain ones (0); LABEL gets the setting.
expect_int8_paths() {
  local label=$1 i8; shift
  for i8 in 1 0; do TEXC_NET_INT8=$i8 expect_all "$label (TEXC_NET_INT8=$i8) = Python reference" "$@"; done
}
python3 "$HERE/onnx/make_models.py" "$tmp" || echo "not ok - onnx make_models.py"
B=$tmp
expect_error "truncated model" "trunc.onnx: not an ONNX model" bash -c "head -c 30 $B/good.onnx > $B/trunc.onnx; '$TEXC' import $B/trunc.onnx -o $B/trunc.tex"
[ ! -e "$B/trunc.tex" ] && echo "ok - onnx bad input: nothing written" || echo "not ok - onnx bad input: nothing written"
printf 'garbage\377\377\377\377 not a protobuf' > "$B/junk.onnx"
expect_error "corrupt model" "junk.onnx: not an ONNX model" "$TEXC" run "$B/junk.onnx"
expect_error "missing model" "nope.onnx: cannot read" "$TEXC" import "$B/nope.onnx"
expect_error "cycle" "cycle.onnx: node 'first' (Relu): the graph has a cycle" "$TEXC" import "$B/cycle.onnx"
expect_error "a node without op_type" "no_op.onnx: node 'anon' (?): the node has no op_type" "$TEXC" import "$B/no_op.onnx"
expect_error "an attribute without a name" "no_attr_name.onnx: node 'relu' (Relu): attribute 1 has no name" "$TEXC" import "$B/no_attr_name.onnx"
expect_error "a Resize to 3e9 columns" "resize_huge.onnx: node 'up' (Resize): not supported: an axis of 3e+09 elements" "$TEXC" import "$B/resize_huge.onnx"
expect_error "initializer size" "bad_init.onnx: initializer 'w': 3 values for a shape of 6" "$TEXC" import "$B/bad_init.onnx"
expect_error "unknown opset" "opset30.onnx: not supported: opset 30 of the default domain (texc imports opsets 1 to 28)" "$TEXC" run "$B/opset30.onnx"
expect_error "Reshape-1" "reshape_opset4.onnx: node 'rs' (Reshape): not supported: Reshape in opset 4 (Reshape-1 takes the shape as an attribute" "$TEXC" run "$B/reshape_opset4.onnx"
expect_error "an operator before its opset" "node 'hs' (HardSwish): not supported: HardSwish in opset 13 (it exists from opset 14)" "$TEXC" import "$B/hardswish_opset13.onnx"
"$TEXC" run "$B/opset5.onnx" --input "$B/x.npy" --output "$B/opset5.npy" >/dev/null 2>&1
od -A n -j 128 -t f4 "$B/opset5.npy" | tr -s ' \n' ' ' | grep -q "^ 1 0 3 0 5 0 *$" && echo "ok - onnx opset 5: Relu" || echo "not ok - onnx opset 5: Relu: $(od -A n -j 128 -t f4 "$B/opset5.npy")"
"$TEXC" run "$B/old.onnx" --input "$B/x.npy" --output "$B/old.npy" >/dev/null 2>&1
od -A n -j 128 -t f4 "$B/old.npy" | tr -s ' \n' ' ' | grep -q "^ 1 -2 3 -1 2 -4 5 -6 2 -1 *$" && echo "ok - onnx opset 3: Slice-1, Clip-1, Concat-1 attributes" || echo "not ok - onnx opset 3: Slice-1, Clip-1, Concat-1 attributes: $(od -A n -j 128 -t f4 "$B/old.npy")"
expect_error "unknown operator" "node 'frob' (Frobnicate): not supported: operator Frobnicate" "$TEXC" import "$B/unknown_op.onnx"
expect_error "a graph input without a name" "noname_input.onnx: graph input 1 has no name" "$TEXC" run "$B/noname_input.onnx" --input "$B/x.npy" --input "$B/x.npy"
expect_error "an attribute of 7 values" "long_attr.onnx: node 'pool' (MaxPool): attribute 'pads' has 7 values (at most 6 here)" "$TEXC" import "$B/long_attr.onnx"
expect_error "undefined input" "input 'nowhere' is defined by no node" "$TEXC" import "$B/undefined.onnx"
expect_error "npy shape" "bad_shape.npy: input 'x' is \[3, 2\], but the network's parameter x is \[2, 3\]" "$TEXC" run "$B/good.onnx" --input "$B/bad_shape.npy"
expect_error "npy magic" "not_npy.npy: not a .npy file" "$TEXC" run "$B/good.onnx" --input "$B/not_npy.npy"
expect_error "npy dtype" "complex.npy: dtype '<c8' is not supported" "$TEXC" run "$B/good.onnx" --input "$B/complex.npy"
expect_error "npy size" "short.npy: the data is 20 bytes" "$TEXC" run "$B/good.onnx" --input "$B/short.npy"
expect_error "too many inputs" "3 --input files, but network g has 2 parameters" "$TEXC" run "$B/good.onnx" --input "$B/x.npy" --input "$B/x.npy" --input "$B/x.npy"

# 100 mutations of the CNN (bytes changed, cut, inserted): texc import exits 0 or 1, never crashes
out=$(python3 - "$TEXC" "$B" <<'PY'
import random, subprocess, sys
texc, d = sys.argv[1], sys.argv[2]
random.seed(12)
src = open(d + "/cnn.onnx", "rb").read()
for i in range(100):
    b = bytearray(src)
    for _ in range(random.randint(1, 6)):
        pos, op = random.randrange(len(b)), random.random()
        if op < 0.6: b[pos] = random.randrange(256)
        elif op < 0.8: del b[pos:pos + random.randint(1, 8)]
        else: b[pos:pos] = bytes(random.randrange(256) for _ in range(random.randint(1, 4)))
    open(d + "/mut.onnx", "wb").write(b)
    r = subprocess.run([texc, "import", d + "/mut.onnx", "-o", d + "/mut.tex"], capture_output=True, timeout=120)
    if r.returncode not in (0, 1) or (r.returncode == 1 and b"mut.onnx" not in r.stderr):
        print("mutation %d: exit %d: %s" % (i, r.returncode, r.stderr[-200:]))
        break
PY
)
[ -z "$out" ] && echo "ok - onnx bad input: 100 corrupt models, no crash" || echo "not ok - onnx bad input: corrupt models: $out"

# a small CNN as exporters write it (conv, batch norm, pool, grouped conv, residual add,
# channel concat, average pool, global pool, Shape/Gather/Unsqueeze/Concat/Reshape, Gemm,
# Softmax) against plain Python
expect_all "cnn = Python reference" "$B/cnn.onnx" --input "$B/cnn_x.npy" --expect "$B/cnn_ref.npy"
out=$("$TEXC" import "$B/cnn.onnx" -o "$B/cnn.tex" 2>&1 && "$TEXC" "$B/cnn.tex" --emit tasks 2>&1)
grep -q "conv2d_nhwc_pad_bias_add_batch_norm_relu" <<<"$out" && grep -q "x_nhwc = nchw_to_nhwc(x)" "$B/cnn.tex" && echo "ok - onnx cnn: NHWC inside, conv + bias + batch norm + relu fused" || echo "not ok - onnx cnn: NHWC inside, conv + bias + batch norm + relu fused: $out"
out=$("$TEXC" run "$B/act.onnx" --input "$B/act_x.npy" --expect "$B/act_ref.npy" 2>&1)
grep -q "expect .*: ok" <<<"$out" && echo "ok - onnx HardSigmoid, GlobalMaxPool = Python reference" || echo "not ok - onnx HardSigmoid, GlobalMaxPool = Python reference: $out"

# a symbolic batch: -D gives it, else the --input file's size, else 1 (with a note)
"$TEXC" import "$B/dyn.onnx" -o "$B/dyn.tex" -D batch=4 >/dev/null 2>&1
grep -q "network g(x: f32\[4, 3\]" "$B/dyn.tex" && grep -q "Symbolic sizes, fixed here: batch = 4" "$B/dyn.tex" \
  && echo "ok - onnx symbolic batch: import -D batch=4" || echo "not ok - onnx symbolic batch: import -D batch=4: $(head -5 "$B/dyn.tex")"
"$TEXC" run "$B/dyn.onnx" -D batch=2 --input "$B/x.npy" --output "$B/dyn.npy" >/dev/null 2>&1
od -A n -j 128 -t f4 "$B/dyn.npy" | tr -s ' \n' ' ' | grep -q "^ 1 1 8 0 0 0 *$" && echo "ok - onnx symbolic batch: run -D batch=2" || echo "not ok - onnx symbolic batch: run -D batch=2: $(od -A n -j 128 -t f4 "$B/dyn.npy")"
expect_error "symbolic batch -D batch=1 beside an input of batch 2" "x.npy: input 'x' is \[2, 3\], but the network's parameter x is \[1, 3\]" "$TEXC" run "$B/dyn.onnx" -D batch=1 --input "$B/x.npy"
"$TEXC" run "$B/dyn.onnx" --input "$B/x.npy" --output "$B/dyn_file.npy" >/dev/null 2>&1
cmp -s "$B/dyn.npy" "$B/dyn_file.npy" && echo "ok - onnx symbolic batch: the --input file's batch (2) without -D" || echo "not ok - onnx symbolic batch: the --input file's batch (2) without -D"
expect_error "symbolic batch: two input files that disagree on it" "the input files disagree on symbolic dimension batch: 2, and 3 in .*x3.npy (input 'z')" "$TEXC" run "$B/dyn2.onnx" --input "$B/x.npy" --input "$B/x3.npy"
expect_error "a pool's pad as large as its kernel" "node 'mp' (MaxPool): pads (2, 0) of axis 0 must be smaller than the kernel (2)" "$TEXC" run "$B/pool_pad.onnx"
expect_error "a Conv's kernel_shape that is not its filter's" "node 'conv' (Conv): kernel_shape \[2, 2\] is not the filter's spatial shape \[3, 3\]" "$TEXC" run "$B/kshape.onnx"
expect_error "a refused form after an integer input: its error, not the folded attempt's" "node 'pool4d' (MaxPool): not supported: a 4-D pool" "$TEXC" run "$B/refused_after_int.onnx" --input "$B/ids6.npy"
out=$("$TEXC" run "$B/dyn.onnx" 2>&1 >/dev/null)
grep -q "note: .*dyn.onnx: symbolic dimension batch taken as 1" <<<"$out" && echo "ok - onnx symbolic batch: taken as 1 with a note" || echo "not ok - onnx symbolic batch: taken as 1 with a note: $out"

# LayerNormalization, Split, batched MatMul, Where (constant condition, broadcast), Concat,
# Transpose against plain Python
expect_all "block = Python reference" "$B/block.onnx" --input "$B/block_x.npy" --expect "$B/block_ref.npy"
# PRelu, Pad (reflect; constant, negative pads, a constant_value input), InstanceNormalization,
# Elu, Tile, DepthToSpace, Sum, Mean after a Conv (channels last inside), and HardSwish and
# LeakyRelu of a constant (folded at import: they once folded as the identity); Pad-2's
# attributes (edge, constant); Resize (linear half_pixel by scales, nearest align_corners
# round_prefer_ceil to sizes) after a Conv, and Upsample-9 (linear); Einsum, CumSum (reverse,
# exclusive) and ReduceLogSumExp, whose node tests are float64, Trilu of a constant, Mish;
# comparisons, Not/And/Or, Cast and Where on run-time masks; ScatterND and ScatterElements
# (duplicate indices, add) with constant indices; into constants (folded; constant data,
# run-time updates); 1-D Conv (stride, pads; groups, dilation) and pools; a 3-D Conv and pools;
# temporal (KD x 1 x 1) 3-D Convs, grouped too;
# a 1-D and a 3-D ConvTranspose; CastLike of a constant and of the input; reductions of
# constants (a weight norm's ReduceL2, ReduceLogSumExp, ReduceMax: folded at import)
for m in layout_ops pad_old resize upsample einsum_cumsum masks scatter scatter_const conv1d const_reduce conv3d conv3d_t pool3d convtr1d convtr3d castlike; do
  expect_all "$m = Python reference" "$B/$m.onnx" --input "$B/${m}_x.npy" --expect "$B/${m}_ref.npy"
done
# 2-D ConvTransposes by constant filters (a 1 x 1 product, then col2im): a 2 x 2 upsampling
# of stride 2 after a Conv, and strides, a dilation, uneven pads, output_padding and a bias;
# a depthwise one (group = channels)
expect_all "ConvTranspose 2-D = Python reference" "$B/convtr2d.onnx" --input "$B/convtr2d_x.npy" \
  --expect "$B/convtr2d_y1.npy" --expect "$B/convtr2d_y2.npy" --expect "$B/convtr2d_y3.npy"
# Convolutions whose taps mostly read padding, as one convolution per region of the output
# (dilated 2, 4 and 8 after a Conv: 9, 9 and 1 regions; uneven pads, a bias and a row that
# reads no input: 4 regions and 2 of zeros)
expect_all "atrous Conv = Python reference" "$B/atrous.onnx" --input "$B/atrous_x.npy" --expect "$B/atrous_y1.npy" \
  --expect "$B/atrous_y2.npy" --expect "$B/atrous_y3.npy" --expect "$B/atrous_y4.npy"
"$TEXC" import "$B/atrous.onnx" -o "$tmp/atrous.tex" >/dev/null 2>&1
[ "$(grep -c '= conv2d_region' "$tmp/atrous.tex")" -eq 23 ] && echo "ok - onnx atrous Conv: by regions" ||
  echo "not ok - onnx atrous Conv: by regions ($(grep -c '= conv2d_region' "$tmp/atrous.tex") region calls)"
# ReduceMean over H and W of a channels-last value (a squeeze-excitation's mean), keepdims 1
# and 0: reduced in place, no layout change before it
expect_all "opset 23: Attention (grouped-query, cache, masks, softcap), RMSNormalization, RotaryEmbedding = Python reference" \
  "$B/attention23.onnx" --input "$B/attention23_x.npy" --expect "$B/attention23_y1.npy" --expect "$B/attention23_y2.npy" \
  --expect "$B/attention23_y3.npy" --expect "$B/attention23_y4.npy"
expect_all "opset 24: TensorScatter, linear and circular = Python reference" "$B/tensor_scatter.onnx" \
  --input "$B/tensor_scatter_x.npy" --expect "$B/tensor_scatter_y1.npy" --expect "$B/tensor_scatter_y2.npy"
expect_all "opset 24: a decoder step with a static cache (TensorScatter, Attention with nonpad_kv_seqlen and causal) = Python reference" \
  "$B/decoder_step.onnx" --input "$B/decoder_step_x.npy" --input "$B/decoder_step_pos.npy" --expect "$B/decoder_step_y1.npy" \
  --expect "$B/decoder_step_y2.npy"
expect_all "opsets 26 to 28: CausalConvWithState, SwiGLU, CumProd, SpaceToDepth CRD, Mod of floats = Python reference" \
  "$B/opset28.onnx" --input "$B/opset28_x.npy" --input "$B/opset28_past.npy" --input "$B/opset28_x4.npy" \
  --expect "$B/opset28_y1.npy" --expect "$B/opset28_y2.npy" --expect "$B/opset28_y3.npy" --expect "$B/opset28_y4.npy" \
  --expect "$B/opset28_y5.npy" --expect "$B/opset28_y6.npy"
expect_all "If of a condition known at import: its branch in place = Python reference" "$B/if_const.onnx" \
  --input "$B/if_const_x.npy" --expect "$B/if_const_y.npy"
for c in 1 0; do
  expect_all "If of a run-time condition ($c): both branches, one kept = Python reference" "$B/if_runtime.onnx" \
    --input "$B/if_const_x.npy" --input "$B/if_runtime_c$c.npy" --expect "$B/if_runtime_z$c.npy"
done
expect_all "Scan unrolled (a state, scan inputs along axes 0 and 1, reversed ones) = Python reference" "$B/scan.onnx" \
  --input "$B/scan_x.npy" --input "$B/scan_y.npy" --expect "$B/scan_sT.npy" --expect "$B/scan_z.npy" --expect "$B/scan_w.npy"
expect_all "opset 27: LinearAttention (gated delta rule, grouped heads, past state) = Python reference" \
  "$B/linear_attention.onnx" --input "$B/linear_attention_q.npy" --input "$B/linear_attention_past.npy" \
  --expect "$B/linear_attention_o.npy" --expect "$B/linear_attention_present.npy"
expect_all "Loop unrolled (a folded condition stops it early; a scan output) = Python reference" "$B/loop.onnx" \
  --input "$B/loop_x.npy" --expect "$B/loop_y.npy" --expect "$B/loop_ys.npy"
expect_error "Loop of a run-time condition" "node 'loop' (Loop): not supported: a Loop whose condition is computed at run time" \
  "$TEXC" run "$B/loop_runtime.onnx"
expect_all "a list built in a Loop (SequenceEmpty, SequenceInsert, SequenceAt, SequenceLength, SequenceErase, ConcatFromSequence, SplitToSequence) = Python reference" \
  "$B/sequences.onnx" --input "$B/sequences_x.npy" --expect "$B/sequences_y.npy" --expect "$B/sequences_z.npy" \
  --expect "$B/sequences_w.npy" --expect "$B/sequences_v.npy"
# operators with no fold of constants, of a constant (Resize, LayerNormalization, Conv, TopK,
# ... 15 of them): computed from the weight, equal to the same operators of an input of its values
cd_out=() cd_exp=()
for i in $(seq 0 14); do cd_out+=(--output "$tmp/cd_$i.npy"); cd_exp+=(--expect "$tmp/cd_$i.npy"); done
if "$TEXC" run "$B/const_data_x.onnx" --input "$B/const_data_src.npy" --input "$B/const_data_z.npy" "${cd_out[@]}" >/dev/null 2>&1; then
  expect_all "15 operators of a constant (Resize, LayerNormalization, Conv, TopK, ...) = the same of an input" \
    "$B/const_data_c.onnx" --input "$B/const_data_z.npy" "${cd_exp[@]}"
else echo "not ok - onnx 15 operators of an input (const_data_x.onnx)"; fi
expect_all "a full reduction of a constant is a scalar (Unsqueeze, Concat: a detection transform's padding)" "$B/reduce_scalar.onnx" \
  --input "$B/reduce_scalar_x.npy" --expect "$B/reduce_scalar_y.npy"
expect_all "a Gather of run-time int64 ids clamped by Clip = Python reference" "$B/gather_clip.onnx" --input "$B/gather_clip_ids.npy" \
  --expect "$B/gather_clip_y.npy"
expect_all "Col2Im (strides, dilations, pads) = Python reference" "$B/col2im.onnx" --input "$B/col2im_x.npy" --expect "$B/col2im_y.npy"
# float16 and double models (held as f32): their inputs, weights (raw bytes, int32_data bits,
# a bfloat16 constant) and results in their own types; Casts to float16 round
expect_all "float16 model (f16 input and results, a bfloat16 constant, Casts) = Python reference" "$B/half.onnx" \
  --input "$B/half_x.npy" --expect "$B/half_y.npy" --expect "$B/half_y2.npy" --expect "$B/half_y3.npy"
expect_all "double model (f64 input and result) = Python reference" "$B/double.onnx" --input "$B/double_x.npy" \
  --expect "$B/double_y.npy" --expect "$B/double_z.npy"
"$TEXC" "$B/half.onnx" --emit header --name half -o "$tmp/half.h" 2>/dev/null
grep -q "^int half(const uint16_t \*input, uint16_t \*output0, float \*output1, uint16_t \*output2);" "$tmp/half.h" &&
  echo "ok - onnx float16 model: a library of uint16_t (half) inputs and results" ||
  echo "not ok - onnx float16 model: a library of uint16_t (half) inputs and results"
# the header names each result as the graph does: y (converted to double: the tensor y_out)
# and z (a Cast of y to float: the tensor y itself)
"$TEXC" "$B/double.onnx" --emit header --name dbl -o "$tmp/dbl.h" 2>/dev/null
grep -q "^/\* output 0: 'y' \*/" "$tmp/dbl.h" && grep -q "^/\* output 1: 'z' \*/" "$tmp/dbl.h" &&
  echo "ok - onnx library header: the results named as the graph's outputs" ||
  echo "not ok - onnx library header: the results named as the graph's outputs"
expect_all "ReduceMean of NHWC = Python reference" "$B/se_mean.onnx" --input "$B/se_mean_x.npy" --expect "$B/se_mean_y1.npy" \
  --expect "$B/se_mean_y2.npy"
"$TEXC" import "$B/se_mean.onnx" -o "$tmp/se_mean.tex" >/dev/null 2>&1
grep -q "^kernel reduce_mean.*(X: f32\[1, 4, 5, 3\])" "$tmp/se_mean.tex" && ! grep -q "= nhwc_to_nchw(c)" "$tmp/se_mean.tex" &&
  echo "ok - onnx ReduceMean of NHWC: in place" || echo "not ok - onnx ReduceMean of NHWC: in place"
# GridSample at a run-time grid past the borders: bicubic / border (taps clamped, as
# PyTorch), bilinear / reflection / align_corners, nearest / zeros
expect_all "GridSample = Python reference" "$B/grid_sample.onnx" --input "$B/grid_sample_x.npy" \
  --input "$B/grid_sample_g.npy" --expect "$B/grid_sample_y1.npy" --expect "$B/grid_sample_y2.npy" \
  --expect "$B/grid_sample_y3.npy"
# a model's float inputs after the first, given no file, are filled as the first is (bench
# takes no --input; it failed with "no tensor 'grid'")
out=$("$TEXC" bench "$B/grid_sample.onnx" --repeat 2 2>&1)
grep -q "Measured latency" <<<"$out" && echo "ok - onnx bench of a model of two float inputs" ||
  echo "not ok - onnx bench of a model of two float inputs: $out"
# the same in a QDQ model: the QuantizeLinear -> DequantizeLinear pairs inside by the
# shuffled value's own scale skipped (one channel_shuffle kernel); by another, node by node;
# of the uint8 values themselves (QOperator form), one kernel
expect_int8_paths "QDQ shuffle" "$B/qdq_shuffle.onnx" --input "$B/qdq_shuffle_x.npy" \
  --expect "$B/qdq_shuffle_y1.npy" --expect "$B/qdq_shuffle_y2.npy" --expect "$B/qdq_shuffle_y3.npy"
out=$("$TEXC" import "$B/qdq_shuffle.onnx" -o "$B/qdq_shuffle.tex" 2>&1)
[ "$(grep -c "= channel_shuffle" "$B/qdq_shuffle.tex")" = 2 ] && [ "$(grep -c "= transpose" "$B/qdq_shuffle.tex")" = 1 ] &&
  echo "ok - onnx QDQ shuffle: channel_shuffle kernels, the other node by node" ||
  echo "not ok - onnx QDQ shuffle: channel_shuffle kernels, the other node by node: $out $(cat "$B/qdq_shuffle.tex")"
# ShuffleNet's channel shuffle (Reshape, Transpose, Reshape after a Conv) and a Split in
# halves: one kernel permuting the channels of the NHWC tensor, channels-last slices; a
# second shuffle whose transposed value is an output, node by node
expect_all "shuffle = Python reference" "$B/shuffle.onnx" --input "$B/shuffle_x.npy" \
  --expect "$B/shuffle_y1.npy" --expect "$B/shuffle_y2.npy" --expect "$B/shuffle_y3.npy"
out=$("$TEXC" import "$B/shuffle.onnx" -o "$B/shuffle.tex" 2>&1)
[ "$(grep -c "= channel_shuffle" "$B/shuffle.tex")" = 1 ] && ! grep -q "slice.*_nchw)" "$B/shuffle.tex" &&
  echo "ok - onnx shuffle: one channel_shuffle kernel, slices channels last" || echo "not ok - onnx shuffle: one channel_shuffle kernel, slices channels last: $out $(cat "$B/shuffle.tex")"
# TopK with ties (integer values): the 4 largest along the middle axis, the 2 smallest along
# the last; values and int64 indices, ties to the lower index
expect_all "TopK: ties, both directions = Python reference" "$B/topk.onnx" --input "$B/topk_x.npy" \
  --expect "$B/topk_v1.npy" --expect "$B/topk_i1.npy" --expect "$B/topk_v2.npy" --expect "$B/topk_i2.npy"
# LSTM, GRU and RNN, unrolled at import (onnx_rnn.c), against make_models.py's rnn_ref: a
# bidirectional LSTM with peepholes, initial states and sequence_lens of 5, 2 and 4 of 5
# steps (Y, Y_h, Y_c); on one batch-first input a GRU (linear_before_reset 0, clip), a
# bidirectional GRU (linear_before_reset 1) and a reverse RNN of LeakyRelu
expect_all "LSTM: both directions, peepholes, sequence_lens = Python reference" "$B/lstm_seq.onnx" --input "$B/lstm_seq_x.npy" \
  --expect "$B/lstm_seq_y.npy" --expect "$B/lstm_seq_yh.npy" --expect "$B/lstm_seq_yc.npy"
for k in 0 1; do # sequence_lens at run time: one network, two length vectors
  expect_all "LSTM: sequence_lens at run time ($k) = Python reference" "$B/lstm_rtl.onnx" --input "$B/lstm_seq_x.npy" \
    --input "$B/lstm_rtl_l$k.npy" --expect "$B/lstm_rtl_y$k.npy" --expect "$B/lstm_rtl_yh$k.npy" --expect "$B/lstm_rtl_yc$k.npy"
done
expect_all "GRU (both resets, clip) and RNN (LeakyRelu), batch first = Python reference" "$B/gru_rnn.onnx" \
  --input "$B/gru_rnn_x.npy" --expect "$B/gru_rnn_y1.npy" --expect "$B/gru_rnn_yh1.npy" --expect "$B/gru_rnn_yh2.npy" \
  --expect "$B/gru_rnn_yh3.npy"
expect_error "RNN: a length beyond the sequence" "rnn_lens.onnx: node 'rnn' (RNN): sequence_lens\[1\] is 7, outside 1..6" "$TEXC" import "$B/rnn_lens.onnx"
expect_error "RNN: an empty sequence" "node 'rnn' (RNN): not supported: sequence_lens\[0\] is 0 (an empty sequence)" "$TEXC" import "$B/rnn_lens0.onnx"
expect_error "RNN: two activations for one" "node 'rnn' (RNN): 2 activations (1 for 1 direction)" "$TEXC" import "$B/rnn_acts.onnx"
expect_error "RNN: Affine without alpha" "node 'rnn' (RNN): not supported: activation 'affine' without its activation_alpha and activation_beta" "$TEXC" import "$B/rnn_affine.onnx"
expect_error "a kernel_shape out of range" "node 'pool' (MaxPool): attribute 'kernel_shape' is 9223372036854775807, out of range" "$TEXC" import "$B/pool_huge.onnx"
expect_error "a graph output without a name" "out_noname.onnx: graph output 1 has no name" "$TEXC" run "$B/out_noname.onnx"
expect_error "a constant too large to fold" "node 'eye' (EyeLike): not supported: a constant of 10737418240 values to compute at import" "$TEXC" import "$B/eye_huge.onnx"
expect_error "RNN: hidden_size not R's" "node 'rnn' (RNN): hidden_size 9223372036854775807, but R is f32\[1, 4, 4\]" "$TEXC" import "$B/rnn_hidden.onnx"
expect_error "RNN: W of the wrong shape" "node 'rnn' (RNN): W is f32\[1, 4, 4\], expected f32\[1, 4, 3\]" "$TEXC" import "$B/rnn_wshape.onnx"
# Five graph outputs (a Conv's Relu, converted back to NCHW; its global average; the input
# through an Identity; both halves of a Split): one --expect each, in the graph's order
expect_all "five graph outputs = Python reference" "$B/multi.onnx" --input "$B/multi_x.npy" --expect "$B/multi_r.npy" \
  --expect "$B/multi_gp.npy" --expect "$B/multi_xi.npy" --expect "$B/multi_r0.npy" --expect "$B/multi_r1.npy"
# int64 inputs that stay run-time: token ids into an embedding (Gather; one negative id;
# through an Unsqueeze too) and an attention mask cast to bool (Where) and to float (Mul)
expect_all "int64 ids and mask at run time = Python reference" "$B/embed.onnx" --input "$B/embed_ids.npy" \
  --input "$B/embed_mask.npy" --expect "$B/embed_y.npy" --expect "$B/embed_z.npy"
# Initializers in a data file beside the model (PyTorch's dynamo exporter): read; a missing
# or short file and a location outside the model's folder are errors naming the initializer
expect_all "external data = Python reference" "$B/ext.onnx" --input "$B/x.npy" --expect "$B/ext_ref.npy"
expect_error "external data file missing" "ext_missing.onnx: initializer 'w': cannot open its external data file .*nowhere.data" "$TEXC" run "$B/ext_missing.onnx"
expect_error "external data file short" "ext_short.onnx: initializer 'b': bytes 40 to 52 of .*ext.onnx.data, a file of 44 bytes" "$TEXC" run "$B/ext_short.onnx"
expect_error "external data outside the folder" "ext_outside.onnx: initializer 'w': external data needs a location inside the model's folder (got '../ext.onnx.data')" "$TEXC" import "$B/ext_outside.onnx"
# Opset 20 (PyTorch's dynamo exporter): Gelu (erf, tanh), Resize-19's half_pixel_symmetric
expect_all "opset 20: Gelu, half_pixel_symmetric = Python reference" "$B/opset20.onnx" --input "$B/opset20_x.npy" \
  --expect "$B/opset20_g.npy" --expect "$B/opset20_t.npy" --expect "$B/opset20_r.npy"
# GatherND with constant indices: batch_dims 1 on a run-time tensor, and of a constant
expect_all "GatherND = Python reference" "$B/gather_nd.onnx" --input "$B/gather_nd_x.npy" --input "$B/gather_nd_s.npy" \
  --expect "$B/gather_nd_a.npy" --expect "$B/gather_nd_b.npy"
# Integer arithmetic at run time (RoBERTa's position ids): Equal, Not, Cast to int32, CumSum,
# Mul, Cast to int64, Add, then Gather and GatherElements by the result
expect_all "integer arithmetic at run time = Python reference" "$B/positions.onnx" --input "$B/positions_ids.npy" \
  --expect "$B/positions_y.npy" --expect "$B/positions_z.npy"
# Integer and boolean graph outputs: ArgMax (no keepdims), ArgMin (select_last_index, a tie),
# Greater's booleans; compared exactly
expect_all "int64 values through Transpose, Slice, Expand = Python reference" "$B/int_moves.onnx" \
  --input "$B/int_moves_x.npy" --expect "$B/int_moves_y.npy"
expect_all "MaxPool with its Indices = Python reference" "$B/pool_idx.onnx" --input "$B/pool_idx_x.npy" \
  --expect "$B/pool_idx_y.npy" --expect "$B/pool_idx_i.npy"
expect_all "ScatterND / ScatterElements / GatherND by run-time indices = Python reference" "$B/scatter_rt.onnx" \
  --input "$B/scatter_rt_x.npy" --input "$B/scatter_rt_i.npy" --input "$B/scatter_rt_u.npy" \
  --input "$B/scatter_rt_ie.npy" --input "$B/scatter_rt_ue.npy" --input "$B/scatter_rt_ig.npy" \
  --expect "$B/scatter_rt_y1.npy" --expect "$B/scatter_rt_y2.npy" --expect "$B/scatter_rt_y3.npy"
out=$("$TEXC" import "$B/scatter_rt.onnx" -o "$B/scatter_rt.tex" 2>&1) && grep -q "^kernel scatter_add" "$B/scatter_rt.tex" &&
  grep -q "^kernel scatter_none" "$B/scatter_rt.tex" && grep -q "^kernel gather_nd" "$B/scatter_rt.tex" && echo "ok - onnx scatters by run-time indices import without the index files" ||
  echo "not ok - onnx scatters by run-time indices import without the index files: $out"
expect_all "int64 and bool outputs = Python reference" "$B/labels.onnx" --input "$B/labels_x.npy" \
  --expect "$B/labels_lab.npy" --expect "$B/labels_low.npy" --expect "$B/labels_pos.npy"
# Cast of floats to int64, Div and Mod (fmod 0 and 1) of integers, Mod of floats, at run time
expect_all "integer Cast, Div, Mod at run time = Python reference" "$B/int_ops.onnx" --input "$B/int_ops_x.npy" \
  --expect "$B/int_ops_q.npy" --expect "$B/int_ops_m.npy" --expect "$B/int_ops_mf.npy" --expect "$B/int_ops_ff.npy"
# A boolean graph input at run time: Where by it, Not of it (a boolean output)
expect_all "bool input at run time = Python reference" "$B/bool_in.onnx" --input "$B/bool_in_x.npy" \
  --input "$B/bool_in_m.npy" --expect "$B/bool_in_y.npy" --expect "$B/bool_in_n.npy"
# Quantized models (onnxruntime.quantization's forms; docs/ONNX.md "Quantized models"): QDQ
# around a float Conv (int8 filters per channel and an int32 bias folded), quantize_dynamic's
# DynamicQuantizeLinear + MatMulInteger (per-column zero points) + Cast + Mul, with the uint8
# values and zero point as outputs (exact), sums past 2^24 exact in i32, and per-axis
# QuantizeLinear / DequantizeLinear at run time after a Conv (int8 output)
expect_all "QDQ Conv = Python reference" "$B/qdq_conv.onnx" --input "$B/qdq_conv_x.npy" --expect "$B/qdq_conv_ref.npy"
# QDQ convolutions as integer kernels (qconv2d_nhwc_pad, qdepthwise_conv2d_nhwc_pad) where the CPU has VNNI, in f32
# otherwise (and with TEXC_NET_INT8=0): both = the exact sums; one u8 copy of the input (its 18
# channels padded to 20), which a depthwise convolution of 18 channels reads too
int8=$("$TEXC" import "$B/qdq_int.onnx" -o "$B/qdq_int.tex" >/dev/null 2>&1 && grep -c "= qconv2d_nhwc_pad(" "$B/qdq_int.tex")
vnni=$(grep -c -m1 -w -e avx512_vnni -e avx_vnni /proc/cpuinfo)
if [ "$vnni" != 0 ]; then
  [ "$int8" = 3 ] && [ "$(grep -c "= quant_u8_nhwc(" "$B/qdq_int.tex")" = 2 ] && [ "$(grep -c "= qdepthwise_conv2d_nhwc_pad(" "$B/qdq_int.tex")" = 2 ] && echo "ok - onnx QDQ convolutions: integer kernels with VNNI" || echo "not ok - onnx QDQ convolutions: integer kernels with VNNI: $(grep conv "$B/qdq_int.tex")"
  # the requantized yb made u8 in the kernel that quantizes it (its DequantizeLinear unread)
  "$TEXC" "$B/qdq_int.onnx" --emit tasks 2>&1 | grep -q "_quantize_[0-9x]*_quant_u8_nhwc" && echo "ok - onnx QDQ convolutions: the u8 copy fused into the quantization" || echo "not ok - onnx QDQ convolutions: the u8 copy fused into the quantization: $("$TEXC" "$B/qdq_int.onnx" --emit tasks 2>&1)"
else
  [ "$int8" = 0 ] && echo "ok - onnx QDQ convolutions: f32 without VNNI" || echo "not ok - onnx QDQ convolutions: f32 without VNNI: $(grep conv "$B/qdq_int.tex")"
fi
expect_int8_paths "QDQ convolutions" "$B/qdq_int.onnx" --input "$B/qdq_int_x.npy" \
    --expect "$B/qdq_int_ya.npy" --expect "$B/qdq_int_yb.npy" --expect "$B/qdq_int_yc.npy" --expect "$B/qdq_int_yd.npy" --expect "$B/qdq_int_ye.npy"
# a residual block: the convolution's quantized output stored as bytes, dequantized in the
# Add's kernel (its u8 copy fused into the quantization; no kernel of its own dequantizes)
expect_int8_paths "QDQ residual block" "$B/qdq_res.onnx" --input "$B/qdq_res_x.npy" --expect "$B/qdq_res_y.npy"
if [ "$vnni" != 0 ]; then
  rt=$("$TEXC" "$B/qdq_res.onnx" --emit tasks 2>&1)
  echo "$rt" | grep -q "t[0-9]*_qconv2d_nhwc_pad_quantize_[0-9x]*_quant_u8_nhwc " && echo "$rt" | grep -q "_dequantize_u8_[0-9x]*_add_" &&
    ! echo "$rt" | grep -q " t[0-9]*_dequantize_u8" && echo "ok - onnx QDQ residual block: bytes between the kernels" || echo "not ok - onnx QDQ residual block: bytes between the kernels: $rt"
fi
# QLinearConv (the QOperator form: a convolution, a depthwise one, int32 biases) as the same
# integer kernels where the CPU has VNNI, plain i32 kernels otherwise: onnxruntime's
# requantization exactly
ql=$("$TEXC" import "$B/qlinear_int.onnx" -o "$B/qlinear_int.tex" >/dev/null 2>&1 && grep -c "= q[a-z_]*conv2d_nhwc_pad(" "$B/qlinear_int.tex")
[ "$ql" = $((vnni ? 2 : 0)) ] && echo "ok - onnx QLinearConv: integer kernels with VNNI only" || echo "not ok - onnx QLinearConv: integer kernels with VNNI only: $ql"
expect_int8_paths "QLinearConv" "$B/qlinear_int.onnx" --input "$B/qlinear_int_x.npy" --expect "$B/qlinear_int_y.npy"
# without the integer kernels, Conv's f32 convolutions of the values less their zero points
# where no sum can reach 2^24 (exact), the plain i32 one where one can (qlinear_big: 600
# channels, sums near -1.9e7)
expect_int8_paths "QLinearConv past 2^24" "$B/qlinear_big.onnx" --input "$B/qlinear_big_x.npy" --expect "$B/qlinear_big_y.npy"
f32a=$(TEXC_NET_INT8=0 "$TEXC" import "$B/qlinear_int.onnx" -o "$B/qlinear_f32.tex" >/dev/null 2>&1 && grep -c "= conv2d_nhwc_pad(\|= depthwise_conv2d_nhwc(" "$B/qlinear_f32.tex")
f32b=$(TEXC_NET_INT8=0 "$TEXC" import "$B/qlinear_big.onnx" -o "$B/qlinear_big.tex" >/dev/null 2>&1 && grep -c "= conv_integer_" "$B/qlinear_big.tex")
[ "$f32a" = 2 ] && [ "$f32b" = 1 ] && echo "ok - onnx QLinearConv without integer kernels: f32 convolutions, i32 past 2^24" ||
  echo "not ok - onnx QLinearConv without integer kernels: f32 convolutions, i32 past 2^24: $f32a $f32b"
# onnxruntime's QOperator contrib operators (com.microsoft): QLinearAdd, QLinearMul,
# QLinearGlobalAveragePool, QGemm, QLinearConcat, as their definitions compute them; other contrib
# operators and these names in the default domain refused by name
expect_int8_paths "QOperator contrib operators" "$B/qop_contrib.onnx" --input "$B/qop_contrib_x.npy" \
    --expect "$B/qop_contrib_y.npy" --expect "$B/qop_contrib_cat.npy"
expect_error "unknown contrib operator" "node 'sig' (QLinearSigmoid): not supported: operator QLinearSigmoid of domain 'com.microsoft'" "$TEXC" run "$B/qop_unknown.onnx"
expect_error "contrib operator in the default domain" "node 'add' (QLinearAdd): not supported: operator QLinearAdd" "$TEXC" run "$B/qop_default.onnx"
# the imported text (u8 and i8 tensors, the integer kernels) on OpenCL (PoCL in CI)
expect_all "QDQ convolutions' imported text on OpenCL = Python reference" "$B/qdq_int.tex" --target opencl \
  --input "$B/qdq_int_x.npy" --expect "$B/qdq_int_ya.npy" --expect "$B/qdq_int_yb.npy" --expect "$B/qdq_int_yc.npy" --expect "$B/qdq_int_yd.npy" --expect "$B/qdq_int_ye.npy"
# ... and QDQ products (a rank-3 MatMul scaled per column, a Gemm with transB) as qdense
mm=$("$TEXC" import "$B/qdq_mm.onnx" -o "$B/qdq_mm.tex" >/dev/null 2>&1 && grep -c "= qdense" "$B/qdq_mm.tex")
[ "$mm" = $((vnni ? 2 : 0)) ] && echo "ok - onnx QDQ products: integer kernels with VNNI only" || echo "not ok - onnx QDQ products: integer kernels with VNNI only: $mm"
expect_int8_paths "QDQ MatMul and Gemm" "$B/qdq_mm.onnx" --input "$B/qdq_mm_x.npy" \
    --input "$B/qdq_mm_x2.npy" --expect "$B/qdq_mm_ya.npy" --expect "$B/qdq_mm_yb.npy"
# int8 activations (quantize_static's default): made u8 by adding 128 to the values and
# the zero point
i8c=$("$TEXC" import "$B/qdq_int8.onnx" -o "$B/qdq_int8.tex" >/dev/null 2>&1 && grep -c "= qconv2d_nhwc_pad(" "$B/qdq_int8.tex")
i8m=$("$TEXC" import "$B/qdq_mm8.onnx" -o "$B/qdq_mm8.tex" >/dev/null 2>&1 && grep -c "= qdense" "$B/qdq_mm8.tex")
[ "$i8c $i8m" = "$((vnni ? 3 : 0)) $((vnni ? 2 : 0))" ] && echo "ok - onnx QDQ with int8 activations: integer kernels with VNNI only" || echo "not ok - onnx QDQ with int8 activations: integer kernels with VNNI only: $i8c $i8m"
expect_all "QDQ convolutions, int8 activations = Python reference" "$B/qdq_int8.onnx" --input "$B/qdq_int8_x.npy" \
  --expect "$B/qdq_int8_ya.npy" --expect "$B/qdq_int8_yb.npy" --expect "$B/qdq_int8_yc.npy" --expect "$B/qdq_int8_yd.npy" --expect "$B/qdq_int8_ye.npy"
expect_all "QDQ MatMul and Gemm, int8 activations = Python reference" "$B/qdq_mm8.onnx" --input "$B/qdq_mm8_x.npy" \
  --input "$B/qdq_mm8_x2.npy" --expect "$B/qdq_mm8_ya.npy" --expect "$B/qdq_mm8_yb.npy"
TEXC_NET_INT8=0 "$TEXC" import "$B/qdq_int.onnx" -o "$B/qdq_f32.tex" >/dev/null 2>&1
grep -q qconv "$B/qdq_f32.tex" && echo "not ok - onnx QDQ convolutions: TEXC_NET_INT8=0 imports f32" || echo "ok - onnx QDQ convolutions: TEXC_NET_INT8=0 imports f32"
# quantize_dynamic's convolution: ConvInteger read as floats is an f32 convolution of x less
# its zero point (channels last); one whose int32 output is the graph's, the exact kernel
dc=$("$TEXC" import "$B/dyn_conv.onnx" -o "$B/dyn_conv.tex" >/dev/null 2>&1 && grep -c "= conv2d_nhwc_pad(\|= conv_integer" "$B/dyn_conv.tex")
[ "$dc" = 2 ] && grep -q "= conv2d_nhwc_pad(" "$B/dyn_conv.tex" && grep -q "less_zero_point" "$B/dyn_conv.tex" &&
  echo "ok - onnx ConvInteger read as floats: an f32 convolution" || echo "not ok - onnx ConvInteger read as floats: an f32 convolution: $dc"
expect_all "dynamic quantized Conv = Python reference" "$B/dyn_conv.onnx" --input "$B/dyn_conv_x.npy" \
  --expect "$B/dyn_conv_y.npy" --expect "$B/dyn_conv_acc.npy"
# without the filter's zero point: the integer kernel (its padding the run-time zero point)
# where the CPU has a four-byte dot product, else the f32 convolution; both exact
d8=$("$TEXC" import "$B/dyn_conv8.onnx" -o "$B/dyn_conv8.tex" >/dev/null 2>&1 && grep -c "= qconv2d_nhwc_rzp(" "$B/dyn_conv8.tex")
[ "$d8" = $((vnni ? 1 : 0)) ] && echo "ok - onnx dynamic quantized Conv: the integer kernel with VNNI only" || echo "not ok - onnx dynamic quantized Conv: the integer kernel with VNNI only: $d8"
expect_int8_paths "dynamic quantized Conv without a filter zero point (its i32 sums an output too)" "$B/dyn_conv8.onnx" \
    --input "$B/dyn_conv_x.npy" --expect "$B/dyn_conv8_y.npy" --expect "$B/dyn_conv8_acc.npy"
expect_all "dynamic quantized MatMul = Python reference" "$B/dyn_matmul.onnx" --input "$B/dyn_matmul_x.npy" \
  --expect "$B/dyn_matmul_y.npy" --expect "$B/dyn_matmul_xq.npy" --expect "$B/dyn_matmul_xz.npy"
# MatMulInteger of an int8 weight without a zero point: qdense where the CPU has VNNI
dm=$("$TEXC" import "$B/dyn_mm8.onnx" -o "$B/dyn_mm8.tex" >/dev/null 2>&1 && grep -c "= qdense" "$B/dyn_mm8.tex")
[ "$dm" = $((vnni ? 1 : 0)) ] && echo "ok - onnx dynamic quantized MatMul: integer kernels with VNNI only" || echo "not ok - onnx dynamic quantized MatMul: integer kernels with VNNI only: $dm"
expect_int8_paths "dynamic quantized MatMul, int8 weight" "$B/dyn_mm8.onnx" \
    --input "$B/dyn_mm8_x.npy" --expect "$B/dyn_mm8_y.npy"
expect_all "MatMulInteger past 2^24 = Python reference" "$B/int_acc.onnx" --input "$B/int_acc_a.npy" --expect "$B/int_acc_y.npy"
expect_all "per-axis int8 Quantize/DequantizeLinear = Python reference" "$B/qaxis.onnx" --input "$B/qaxis_x.npy" \
  --expect "$B/qaxis_y.npy" --expect "$B/qaxis_q.npy"
expect_error "blocked quantization" "node 'qb' (QuantizeLinear): not supported: block_size 2" "$TEXC" import "$B/q_block.onnx"
expect_error "int32 zero point of QuantizeLinear" "node 'qi' (QuantizeLinear): not supported: input 3 (y_zero_point) of element type int32" "$TEXC" import "$B/q_zp_int32.onnx"
expect_error "per-axis scale in opset 10" "node 'q10' (QuantizeLinear): not supported: a scale of 3 values in opset 10" "$TEXC" import "$B/q_axis_opset10.onnx"
expect_error "per-row zero point of MatMulInteger" "node 'mr' (MatMulInteger): not supported: a zero point of A with 2 values" "$TEXC" import "$B/mmi_rows.onnx"
out=$("$TEXC" bench "$B/cnn.onnx" --repeat 2 2>&1)
grep -q "Measured latency" <<<"$out" && echo "ok - onnx bench MODEL.onnx" || echo "not ok - onnx bench MODEL.onnx: $out"

# import writes NET.tex + NET.safetensors; run reads the sidecar: the same result as the model
if "$TEXC" import "$B/good.onnx" -o "$B/net.tex" >/dev/null && [ -s "$B/net.tex" ] && [ -s "$B/net.safetensors" ]; then
  echo "ok - onnx import writes NET.tex and NET.safetensors"
else echo "not ok - onnx import writes NET.tex and NET.safetensors"; fi
"$TEXC" run "$B/good.onnx" --input "$B/x.npy" --output "$B/ref.npy" >/dev/null 2>&1
out=$("$TEXC" run "$B/net.tex" --input "$B/x64.npy" --expect "$B/ref.npy" 2>&1)
grep -q "expect .*: ok" <<<"$out" && echo "ok - onnx NET.tex with its sidecar = the model" || echo "not ok - onnx NET.tex with its sidecar = the model: $out"
# relu(x * w + w) for x = 1 -2 3 -4 5 -6 and w = .5 -1 2 .25 3 -2: 1 1 8 0 18 10
od -A n -j 128 -t f4 "$B/ref.npy" | tr -s ' \n' ' ' | grep -q "^ 1 1 8 0 18 10 *$" && echo "ok - onnx --output values" || echo "not ok - onnx --output values: $(od -A n -j 128 -t f4 "$B/ref.npy")"
for f in x_v2 x_i64; do  # .npy format 2.0; integers exact in f32
  out=$("$TEXC" run "$B/net.tex" --input "$B/$f.npy" --expect "$B/ref.npy" 2>&1)
  grep -q "expect .*: ok" <<<"$out" && echo "ok - onnx --input $f.npy" || echo "not ok - onnx --input $f.npy: $out"
done
expect_error "npy not exact in f32" "x_inexact.npy: element 0 (16777217) is not exact as f32" "$TEXC" run "$B/net.tex" --input "$B/x_inexact.npy"
out=$("$TEXC" run "$B/net.tex" --input "$B/x.npy" --expect "$B/x.npy" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "MISMATCH in y at flat index 1: got 1, expected -2" <<<"$out" && grep -q "expect .*: FAILED" <<<"$out" && echo "ok - onnx --expect catches a mismatch" || echo "not ok - onnx --expect catches a mismatch: $out"
head -c 80 "$B/net.safetensors" > "$B/short.safetensors"
expect_error "truncated weights" "short.safetensors: tensor .w.: data_offsets \\[0, 24\\] outside" "$TEXC" run "$B/net.tex" --weights "$B/short.safetensors"
{ cat "$B/net.safetensors"; printf abcdefgh; } > "$B/long.safetensors"
expect_error "weights with 8 bytes after the last tensor" "long.safetensors: 8 bytes after the last tensor" "$TEXC" run "$B/net.tex" --weights "$B/long.safetensors"
"$TEXC" import "$B/good.onnx" -o "$B/other.tex" >/dev/null
sed -i 's/w: f32\[2, 3\]/w: f32[3, 2]/; s/mul_2x3(x, w)/mul_2x3(x, x)/; s/add_2d(t, w)/add_2d(t, x)/' "$B/other.tex"
expect_error "weights shape" "other.safetensors: tensor 'w' is \[2, 3\], but the network's parameter w is \[3, 2\]" "$TEXC" run "$B/other.tex"
