#!/usr/bin/env python3
"""onnx_models.py — the Python half of bench/onnx_models.sh (numpy, onnxruntime from PyPI).

    onnx_models.py compare OUT.npy REF.npy       -> "REL TOP5" (TOP5: same | differs)
    onnx_models.py quantize MODEL.onnx IN.npy OUT.onnx REF.npy
                                                 -> OUT.onnx: onnxruntime's quantize_static
                                                    (QDQ, uint8 activations, int8 weights per
                                                    channel; calibrated on IN and 4 noisy
                                                    copies), REF.npy: its output on IN
    onnx_models.py dynamic MODEL.onnx IN.npy[,IN2.npy...] OUT.onnx REF.npy
                                                 -> OUT.onnx: quantize_dynamic (int8 weights),
                                                    REF.npy: its first output on the inputs
    onnx_models.py ort MODEL.onnx IN.npy[,IN2.npy...] THREADS RUNS
                                                 -> "MEDIAN_MS MIN_MS" (onnxruntime, CPU,
                                                    THREADS intra-op threads, RUNS timed runs
                                                    after 3 warm-up runs; one file per graph
                                                    input, in order)
"""
import os
import sys
import time

import numpy as np


def compare(out_path, ref_path):
    o = np.load(out_path).astype(np.float64)
    r = np.load(ref_path).astype(np.float64)
    o = o.reshape(r.shape)
    rel = np.linalg.norm(o - r) / np.linalg.norm(r)
    same = list(np.argsort(-o.ravel(), kind="stable")[:5]) == list(np.argsort(-r.ravel(), kind="stable")[:5])
    print(f"{rel:.2e} {'same' if same else 'differs'}")


def ort(model, inp, threads, runs):
    import onnxruntime

    so = onnxruntime.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = onnxruntime.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(f) for i, f in zip(sess.get_inputs(), inp.split(","))}
    for _ in range(3):
        sess.run(None, feed)
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feed)
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    print(f"{ms[len(ms) // 2]:.3f} {ms[0]:.3f}")


def quantize(model, inp, out, ref, fmt="qdq"):
    import onnx
    import onnxruntime
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    x = np.load(inp)
    name = onnx.load(model, load_external_data=False).graph.input[0].name
    rng = np.random.default_rng(0)
    feeds = [{name: x}] + [{name: (x + 0.1 * rng.standard_normal(x.shape)).astype(np.float32)} for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(feeds)

        def get_next(self):
            return next(self.it, None)

    pre = out + ".pre.onnx"
    try:
        quant_pre_process(model, pre)
    except Exception:  # vit's shapes defeat the pre-processing; quantize as exported
        pre = model
    quantize_static(pre, out, Reader(), quant_format=QuantFormat.QOperator if fmt == "qop" else QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    if pre != model:
        os.remove(pre)
    sess = onnxruntime.InferenceSession(out, providers=["CPUExecutionProvider"])
    np.save(ref, sess.run(None, {name: x})[0])


def dynamic(model, inputs, out, ref):
    """quantize_dynamic (int8 weights) of MODEL into OUT; REF: its first output on INPUTS
    (.npy files, one per graph input, comma-separated)."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(model, out, weight_type=QuantType.QInt8)
    sess = onnxruntime.InferenceSession(out, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(f) for i, f in zip(sess.get_inputs(), inputs.split(","))}
    np.save(ref, sess.run(None, feed)[0])


if __name__ == "__main__":
    if len(sys.argv) in (6, 7) and sys.argv[1] == "quantize":  # FORMAT: qdq (default) or qop
        quantize(*sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) == 6 and sys.argv[1] == "dynamic":
        dynamic(*sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "ort":
        ort(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__.strip())
