"""rnn.py — recurrent layers through ONNX: texc against onnxruntime in one run (bench/rnn.sh).

  rnn.py TEXC DIR [CASE...]   export each case (PyTorch, TorchScript exporter, opset 17) into
                              DIR when missing, check `texc run` against onnxruntime, then time
                              texc bench (2 threads and TEX_NUM_THREADS=1, median of REPEAT)
                              and onnxruntime (1 and 2 intra-op threads, median of ORT_RUNS)
"""
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort
import torch

CASES = {  # name: (cell, its arguments, input shape)
    "lstm_h256_t100_b1": ("LSTM", dict(input_size=128, hidden_size=256, batch_first=True), (1, 100, 128)),
    "lstm_h256_t100_b16": ("LSTM", dict(input_size=128, hidden_size=256, batch_first=True), (16, 100, 128)),
    "gru_h512_t50_b1_2layers": ("GRU", dict(input_size=256, hidden_size=512, num_layers=2, batch_first=True), (1, 50, 256)),
    "lstm_bi_h128_t200_b4": ("LSTM", dict(input_size=64, hidden_size=128, bidirectional=True, batch_first=True), (4, 200, 64)),
}


class Net(torch.nn.Module):
    def __init__(self, cell, kw):
        super().__init__()
        self.rnn = getattr(torch.nn, cell)(**kw)

    def forward(self, x):
        return self.rnn(x)[0]


def median(xs):
    return sorted(xs)[len(xs) // 2]


def texc_ms(texc, path, threads):
    env = dict(os.environ)
    if threads:
        env["TEX_NUM_THREADS"] = str(threads)
    out = subprocess.run([texc, "bench", path, "--repeat", os.environ.get("REPEAT", "15")], capture_output=True,
                         text=True, env=env).stdout
    m = re.search(r"Measured latency: ([0-9.]+) ms", out)
    return float(m.group(1)) if m else float("nan")


def ort_ms(path, x, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for _ in range(5):
        s.run(None, {"x": x})
    ts = []
    for _ in range(int(os.environ.get("ORT_RUNS", "30"))):
        t = time.perf_counter()
        s.run(None, {"x": x})
        ts.append(time.perf_counter() - t)
    return median(ts) * 1e3


def main(texc, d, names):
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(0)
    print("| layer | texc, 2 threads | texc, 1 thread | onnxruntime 2 threads | onnxruntime 1 thread | texc / ort-2 | texc against ort (rel L2) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    bad = 0
    for name in names or CASES:
        cell, kw, shape = CASES[name]
        path, xin = "%s/%s.onnx" % (d, name), "%s/%s.x.npy" % (d, name)
        if not os.path.exists(path) or not os.path.exists(xin):
            x = torch.randn(*shape)
            torch.onnx.export(Net(cell, kw).eval(), (x,), path, opset_version=17, dynamo=False,
                              input_names=["x"], output_names=["y"])
            np.save(xin, x.numpy())
        x = np.load(xin)
        ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        r = subprocess.run([texc, "run", path, "--input", xin, "--output", "%s/%s.y.npy" % (d, name)],
                           capture_output=True, text=True)
        rel = float("nan")
        if r.returncode == 0:
            y = np.load("%s/%s.y.npy" % (d, name))
            rel = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
        if not rel < 1e-5:
            bad += 1
        t2, t1 = texc_ms(texc, path, 0), texc_ms(texc, path, 1)
        o2, o1 = ort_ms(path, x, 2), ort_ms(path, x, 1)
        print("| %s | %.3f ms | %.3f | %.3f | %.3f | %.2f | %.1e |" % (name, t2, t1, o2, o1, t2 / o2, rel), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
