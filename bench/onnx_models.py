#!/usr/bin/env python3
"""onnx_models.py — the Python half of bench/onnx_models.sh (numpy, onnxruntime from PyPI).

    onnx_models.py compare OUT.npy REF.npy       -> "REL TOP5" (TOP5: same | differs)
    onnx_models.py ort MODEL.onnx IN.npy[,IN2.npy...] THREADS RUNS
                                                 -> "MEDIAN_MS MIN_MS" (onnxruntime, CPU,
                                                    THREADS intra-op threads, RUNS timed runs
                                                    after 3 warm-up runs; one file per graph
                                                    input, in order)
"""
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


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "ort":
        ort(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__.strip())
