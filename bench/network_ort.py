#!/usr/bin/env python3
"""network_ort.py — the same network in onnxruntime, on the weights texc used.

  TEXC_NET_DUMP=DIR texc run NET.tex        # texc writes its parameters and result to DIR
  python3 bench/network_ort.py NET.tex DIR [REPEAT [THREADS]]  # builds the ONNX graph (NCHW) from NET.tex's calls,
                                            # checks its result against texc's, times it

The network's calls are read from the .tex file (one `y = op(args, ATTR = v)` per line) and
mapped to ONNX nodes; NHWC tensors and HWIO filters are transposed to ONNX's NCHW / OIHW.
Optional: REPEAT (20), THREADS (intra-op threads; 0: onnxruntime's default).
Prints `onnxruntime: MEDIAN ms (min MIN ms), max abs diff vs texc D`.
"""
import re, sys, time
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper
import onnxruntime as ort


def load(dirname):
    shapes = {}
    for line in open(dirname + "/manifest.txt"):
        f = line.split()
        shapes[f[0]] = [int(x) for x in f[1:]]
    return {n: np.fromfile("%s/%s.bin" % (dirname, n), dtype=np.float32).reshape(s) for n, s in shapes.items()}


def calls(path):
    text = open(path).read()
    body = text[text.index("{", text.index("network")) + 1:text.rindex("}")]
    out = []
    for line in body.splitlines():
        line = line.split("#")[0].strip()
        m = re.match(r"(\w+)\s*=\s*(\w+)\((.*)\)$", line)
        if not m:
            continue
        args, attrs = [], {}
        for a in m.group(3).split(","):
            a = a.strip()
            if "=" in a:
                k, v = a.split("=")
                attrs[k.strip()] = int(v)
            else:
                args.append(a)
        out.append((m.group(1), m.group(2), args, attrs))
    return out


class Builder:
    def __init__(self, w):
        self.w, self.nodes, self.inits, self.n, self.names = w, [], [], 0, {}

    def fresh(self, base):
        self.n += 1
        return "%s_%d" % (base, self.n)

    def init(self, name, arr):
        n = self.fresh(name)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr.astype(np.float32)), n))
        return n

    def node(self, op, ins, **kw):
        o = self.fresh(op)
        self.nodes.append(helper.make_node(op, ins, [o], **kw))
        return o

    def val(self, name):
        return self.names[name]


def build(path, w):
    b = Builder(w)
    first = next(iter(w))  # the input (first in the manifest)
    b.names[first] = b.node("Transpose", ["input"], perm=[0, 3, 1, 2])
    for res, op, args, at in calls(path):
        g = lambda k, d: at.get(k, d)
        x = b.val(args[0]) if args[0] in b.names else None
        if op in ("conv2d_nhwc", "depthwise_conv2d_nhwc"):
            k = w[args[1]]
            if op == "conv2d_nhwc":
                kw, group = k.transpose(3, 2, 0, 1), 1
            else:
                kw, group = k.transpose(2, 0, 1)[:, None, :, :], k.shape[2]
            y = b.node("Conv", [x, b.init(args[1], kw)], strides=[g("SH", 1), g("SW", 1)],
                       pads=[g("PH", 0), g("PW", 0), g("PH", 0), g("PW", 0)],
                       dilations=[g("DH", 1), g("DW", 1)], group=group)
        elif op == "batch_norm":
            y = b.node("Mul", [x, b.init(args[1], w[args[1]].reshape(1, -1, 1, 1))])
            y = b.node("Add", [y, b.init(args[2], w[args[2]].reshape(1, -1, 1, 1))])
        elif op == "bias_add":
            y = b.node("Add", [x, b.init(args[1], w[args[1]].reshape(1, -1, 1, 1))])
        elif op in ("relu", "relu_2d"):
            y = b.node("Relu", [x])
        elif op in ("add", "add_2d"):
            y = b.node("Add", [x, b.val(args[1])])
        elif op == "max_pool2d_nhwc":
            y = b.node("MaxPool", [x], kernel_shape=[g("KH", 2), g("KW", 2)], strides=[g("SH", 2), g("SW", 2)],
                       pads=[g("PH", 0), g("PW", 0), g("PH", 0), g("PW", 0)])
        elif op == "global_avg_pool2d_nhwc":
            y = b.node("Flatten", [b.node("GlobalAveragePool", [x])])
        elif op == "dense":
            y = b.node("MatMul", [x, b.init(args[1], w[args[1]])])
        elif op == "bias_add_2d":
            y = b.node("Add", [x, b.init(args[1], w[args[1]])])
        elif op == "softmax":
            y = b.node("Softmax", [x], axis=1)
        else:
            sys.exit("network_ort.py: no ONNX mapping for %s" % op)
        b.names[res] = y
    last = b.names[calls(path)[-1][0]]
    b.nodes.append(helper.make_node("Identity", [last], ["output"]))
    inp = w[first]
    graph = helper.make_graph(b.nodes, "net", [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(inp.shape))],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what every onnxruntime reads
    return model, inp


def main():
    path, d = sys.argv[1], sys.argv[2]
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    w = load(d)
    want = w.pop("output")
    model, inp = build(path, w)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 0  # 0: onnxruntime's default
    so.intra_op_num_threads = threads
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    got = s.run(None, {"input": inp})[0]
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s.run(None, {"input": inp})
        ts.append((time.perf_counter() - t0) * 1e3)
    ts.sort()
    print("onnxruntime %s (%s threads): %.3f ms (min %.3f ms, %d runs), max abs diff vs texc %.3g (argmax %d vs %d)" % (
        ort.__version__, threads or "default", ts[len(ts) // 2], ts[0], repeat, float(np.abs(got.reshape(want.shape) - want).max()),
        int(got.argmax()), int(want.argmax())))


if __name__ == "__main__":
    main()
