#!/usr/bin/env python3
"""make_models.py — the small test models of tests/models/ (run by tests/suites/models.sh).

    /work/pyenv/bin/python tests/models/make_models.py [OUTDIR] [MODEL ...]

Needs torch, torchvision, onnx and onnxruntime (PyPI); make test does not: it runs what this
wrote and was committed. For each MODEL (default: all of MODELS) it exports the torchvision
model (eval mode, opset 17, the legacy exporter — vit_small_dynamo: torch.export, opset 18
— batch 1, a small image), then STRIPS its
weights: every float initializer of at least MIN_STRIPPED values keeps its name, type and
shape but loses its data, and its doc_string names a generator instead,
`texc:uniform SEED LO HI` (value i = (float)(LO + (HI - LO) * u_i), u_i the top 24 bits of
splitmix64's output number i + 1 from SEED, over 2^24: onnx_import.c computes the same
under `texc --random-weights`). LO and HI follow the op that reads the tensor, so that
activations neither vanish nor explode: a Conv's or a MatMul's weight +-sqrt(6 / fan_in)
(He) or +-sqrt(3 / fan_in) (a MatMul's, a Gemm's), a normalization's scale 0.5..1.5, a
batch norm's variance 0.5..1.5, anything else +-0.1.

Writes OUTDIR/MODEL.onnx (stripped: a few KB), OUTDIR/MODEL.in.npy (a seeded normal input)
and OUTDIR/MODEL.ref.npy (onnxruntime's output on the model with the generated weights).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_STRIPPED = 16
IMAGE = 64


def vit_small():
    """vit_b_16's graph with fewer and narrower layers (torchvision's VisionTransformer)."""
    from torchvision.models.vision_transformer import VisionTransformer

    return VisionTransformer(image_size=IMAGE, patch_size=16, num_layers=2, num_heads=4,
                             hidden_dim=64, mlp_dim=128, num_classes=1000)


def tv(name, **kw):
    import torchvision

    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


MODELS = {
    "resnet18": tv("resnet18"),
    "mobilenet_v2": tv("mobilenet_v2"),
    "squeezenet1_1": tv("squeezenet1_1"),
    "efficientnet_b0": tv("efficientnet_b0"),
    "shufflenet_v2_x1_0": tv("shufflenet_v2_x1_0"),
    "convnext_tiny": tv("convnext_tiny"),
    "vit_small": vit_small,
    # the same through torch.export (dynamo=True, opset 18: other patterns for the same
    # operators, e.g. LayerNormalization and attention as ONNX script functions inlined)
    "vit_small_dynamo": vit_small,
}


def splitmix_uniform(seed, n, lo, hi):
    """The generator of onnx_import.c's stripped_values, in numpy (uint64 arithmetic wraps)."""
    i = np.arange(1, n + 1, dtype=np.uint64)
    z = np.uint64(seed) + i * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) * 2.0 ** -24
    return (lo + (hi - lo) * u).astype(np.float32)


def value_range(name, dims, consumers):
    """LO, HI for the initializer NAME of shape DIMS read by CONSUMERS [(node, input index)]."""
    import onnx

    n = int(np.prod(dims))
    for node, k in consumers:
        op = node.op_type
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if op in ("Conv", "ConvTranspose") and k == 1:
            fan_in = n // dims[0] if op == "Conv" else n // dims[1]
            b = (6.0 / fan_in) ** 0.5
            return -b, b
        if op == "Gemm" and k == 1:
            fan_in = dims[1] if attrs.get("transB", 0) else dims[0]
            b = (3.0 / fan_in) ** 0.5
            return -b, b
        if op == "MatMul" and k == 1 and len(dims) >= 2:
            b = (3.0 / dims[-2]) ** 0.5
            return -b, b
        if op == "BatchNormalization" and k in (1, 4):
            return 0.5, 1.5
        if op == "LayerNormalization" and k == 1:
            return 0.5, 1.5
    return -0.1, 0.1


def strip(model, seed0):
    """The initializers of MODEL stripped in place; returns the full model (filled)."""
    import onnx
    from onnx import numpy_helper

    consumers = {}
    for node in model.graph.node:
        for k, x in enumerate(node.input):
            consumers.setdefault(x, []).append((node, k))
    full = onnx.ModelProto()
    full.CopyFrom(model)
    for idx, t in enumerate(model.graph.initializer):
        arr = numpy_helper.to_array(t)
        if t.data_type != onnx.TensorProto.FLOAT or arr.size < MIN_STRIPPED:
            continue
        lo, hi = value_range(t.name, list(t.dims), consumers.get(t.name, []))
        seed = seed0 * 100003 + idx
        vals = splitmix_uniform(seed, arr.size, lo, hi).reshape(arr.shape)
        full.graph.initializer[idx].CopyFrom(numpy_helper.from_array(vals, t.name))
        dims = list(t.dims)
        t.Clear()
        t.name = full.graph.initializer[idx].name
        t.data_type = onnx.TensorProto.FLOAT
        t.dims.extend(dims)
        t.doc_string = f"texc:uniform {seed} {lo!r} {hi!r}"
    return full


def make(name, outdir, seed):
    import io

    import onnx
    import onnxruntime as ort
    import torch

    torch.manual_seed(seed)
    torch.backends.mha.set_fastpath_enabled(False)  # plain MatMul/Softmax for attention
    model = MODELS[name]().eval()
    x = np.random.default_rng(seed).standard_normal((1, 3, IMAGE, IMAGE)).astype(np.float32)
    if name.endswith("_dynamo"):
        prog = torch.onnx.export(model, (torch.from_numpy(x),), dynamo=True, opset_version=18,
                                 input_names=["input"], output_names=["output"])
        stripped = prog.model_proto
        for n in stripped.graph.node:  # the exporter's stack traces: most of the file
            del n.metadata_props[:]
            n.doc_string = ""
    else:
        buf = io.BytesIO()
        with torch.no_grad():
            torch.onnx.export(model, (torch.from_numpy(x),), buf, opset_version=17, dynamo=False,
                              input_names=["input"], output_names=["output"])
        stripped = onnx.load_from_string(buf.getvalue())
    full = strip(stripped, seed)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(full.SerializeToString(), so, providers=["CPUExecutionProvider"])
    ref = sess.run(None, {"input": x})[0]
    if not np.all(np.isfinite(ref)):
        raise SystemExit(f"{name}: the reference is not finite")
    path = os.path.join(outdir, name + ".onnx")
    onnx.save(stripped, path)
    np.save(os.path.join(outdir, name + ".in.npy"), x)
    np.save(os.path.join(outdir, name + ".ref.npy"), ref)
    print(f"{name}: {os.path.getsize(path)} bytes, output {list(ref.shape)}, "
          f"std {ref.std():.3g}, top-5 {list(np.argsort(-ref.ravel())[:5])}")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else HERE
    names = sys.argv[2:] or list(MODELS)
    for n in names:
        if n not in MODELS:
            print(f"make_models.py: unknown model {n} (one of {', '.join(MODELS)})", file=sys.stderr)
            return 2
    os.makedirs(outdir, exist_ok=True)
    for n in names:
        make(n, outdir, list(MODELS).index(n) + 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
