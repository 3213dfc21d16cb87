#!/usr/bin/env python3
"""make_models.py DIR — small ONNX models and .npy files for tests/suites/onnx.sh.

A few protobuf fields written by hand (the test needs no onnx package): good models with
initializers, and bad ones (a cycle, an initializer of the wrong size, an unknown opset),
plus .npy files of a wrong shape, dtype or magic.
"""
import math
import struct
import sys


def varint(n):
    out = b""
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, payload):  # length-delimited (strings, messages, packed)
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def ivar(num, v):  # varint field
    return varint(num << 3) + varint(v)


def value_info(name, shape, elem=1):
    dims = b"".join(field(1, field(2, d) if isinstance(d, str) else ivar(1, d)) for d in shape)  # dim_param, dim_value
    tensor = ivar(1, elem) + field(2, dims)  # elem_type (1 FLOAT, 7 INT64), shape
    return field(1, name) + field(2, field(1, tensor))


def initializer(name, shape, values):
    return (b"".join(ivar(1, d) for d in shape) + ivar(2, 1) +
            field(4, struct.pack("<%df" % len(values), *values)) + field(8, name))


def attr(name, v):
    if isinstance(v, list) and v and isinstance(v[0], float):  # FLOATS
        return field(1, name) + b"".join(varint(7 << 3 | 5) + struct.pack("<f", x) for x in v) + ivar(20, 6)
    if isinstance(v, list) and v and isinstance(v[0], str):  # STRINGS
        return field(1, name) + b"".join(field(9, x) for x in v) + ivar(20, 8)
    if isinstance(v, list):
        return field(1, name) + b"".join(ivar(8, x) for x in v) + ivar(20, 7)
    if isinstance(v, float):
        return field(1, name) + varint(2 << 3 | 5) + struct.pack("<f", v) + ivar(20, 1)
    if isinstance(v, str):
        return field(1, name) + field(4, v) + ivar(20, 3)
    return field(1, name) + ivar(3, v) + ivar(20, 2)


def node(op, inputs, outputs, name, **attrs):
    return (b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs) +
            field(3, name) + field(4, op) + b"".join(field(5, attr(k, v)) for k, v in attrs.items()))


def int_init(name, values, shape=None):  # an int64 initializer (1-D unless SHAPE)
    dims = b"".join(ivar(1, d) for d in (shape or [len(values)]))
    return dims + ivar(2, 7) + field(7, b"".join(varint(v) for v in values)) + field(8, name)


def model(nodes, inits, inputs, outputs, opset=13):
    g = (b"".join(field(1, n) for n in nodes) + field(2, "g") +
         b"".join(field(5, t) for t in inits) + b"".join(field(11, v) for v in inputs) +
         b"".join(field(12, v) for v in outputs))
    return ivar(1, 8) + field(8, field(1, "") + ivar(2, opset)) + field(7, g)


def npy(path, descr, shape, data, version=1):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % s for s in shape))
    pre = 10 if version == 1 else 12
    h = d + " " * ((64 - (pre + len(d) + 1) % 64) % 64) + "\n"
    size = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    open(path, "wb").write(b"\x93NUMPY" + bytes([version, 0]) + size + h.encode() + data)


# ---- a small CNN as PyTorch exports it, and its result computed here in plain Python ----

def rand(n, seed, scale):
    out, x = [], seed
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2**31
        out.append(struct.unpack("<f", struct.pack("<f", ((x / 2**31) * 2 - 1) * scale))[0])
    return out


def conv_any(x, c, h, w, k, co, kh, kw, st, dil, pads, group, bias):
    """NCHW convolution, x flat [c, h, w], k flat [co, c/group, kh, kw], strides ST and
    dilations DIL (rows, columns), PADS (top, left, bottom, right); (y, oh, ow)."""
    cg, og = c // group, co // group
    oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // st[0] + 1
    ow = (w + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // st[1] + 1
    y = []
    for o in range(co):
        g = o // og
        for i in range(oh):
            for j in range(ow):
                s = bias[o] if bias else 0.0
                for ci in range(cg):
                    for r in range(kh):
                        for q in range(kw):
                            hi, wj = i * st[0] + r * dil[0] - pads[0], j * st[1] + q * dil[1] - pads[1]
                            if 0 <= hi < h and 0 <= wj < w:
                                s += x[((g * cg + ci) * h + hi) * w + wj] * k[((o * cg + ci) * kh + r) * kw + q]
                y.append(s)
    return y, oh, ow


def conv(x, c, h, w, k, co, ks, pad, group, bias):
    """NCHW convolution, stride 1, x flat [c, h, w], k flat [co, c/group, ks, ks]."""
    return conv_any(x, c, h, w, k, co, ks, ks, (1, 1), (1, 1), (pad, pad, pad, pad), group, bias)[0]


def cnn(out):
    import math
    C, H = 8, 16
    x = rand(3 * H * H, 1, 1.0)
    w1, b1 = rand(C * 3 * 9, 2, 0.3), rand(C, 3, 0.1)
    gamma, beta, mean = [1 + v for v in rand(C, 4, 0.2)], rand(C, 5, 0.1), rand(C, 6, 0.1)
    var = [1 + abs(v) for v in rand(C, 7, 0.5)]
    w2 = rand(C * (C // 2) * 9, 8, 0.2)
    wd, bd = rand(C * 9, 15, 0.4), rand(C, 16, 0.1)
    wf, bf = rand(10 * 2 * C, 9, 0.5), rand(10, 10, 0.1)
    # reference
    y = conv(x, 3, H, H, w1, C, 3, 1, 1, b1)
    y = [max((v - mean[i // (H * H)]) / math.sqrt(var[i // (H * H)] + 1e-5) * gamma[i // (H * H)] + beta[i // (H * H)], 0.0)
         for i, v in enumerate(y)]
    P = H // 2
    p = [max(y[(c * H + 2 * i + a) * H + 2 * j + b] for a in range(2) for b in range(2))
         for c in range(C) for i in range(P) for j in range(P)]
    d = conv(p, C, P, P, wd, C, 3, 1, C, bd)  # depthwise
    z = conv(d, C, P, P, w2, C, 3, 1, 2, None)
    z = [max(a + b, 0.0) for a, b in zip(z, p)]
    z = z + p  # Concat on the channel axis (N = 1): 16 channels
    C2 = 2 * C
    # AveragePool 3x3, stride 2, pads 1, ceil_mode, count_include_pad 0: 8x8 -> 5x5
    Q = 5
    a = []
    for c in range(C2):
        for i in range(Q):
            for j in range(Q):
                win = [z[(c * P + r) * P + q] for r in range(2 * i - 1, 2 * i + 2) for q in range(2 * j - 1, 2 * j + 2)
                       if 0 <= r < P and 0 <= q < P]
                a.append(sum(win) / len(win))
    z, P = a, Q
    g = [sum(z[c * P * P:(c + 1) * P * P]) / (P * P) for c in range(C2)]
    f = [sum(g[k] * wf[o * C2 + k] for k in range(C2)) + bf[o] for o in range(10)]
    e = [math.exp(v - max(f)) for v in f]
    ref = [v / sum(e) for v in e]
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"], "bn1", epsilon=1e-5),
        node("Relu", ["bn"], ["r1"], "relu1"),
        node("MaxPool", ["r1"], ["p1"], "pool1", kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["p1", "wd", "bd"], ["dw"], "depthwise", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=C),
        node("Conv", ["dw", "w2"], ["c2"], "conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
        node("Add", ["c2", "p1"], ["s2"], "add2"),
        node("Relu", ["s2"], ["r2"], "relu2"),
        node("Concat", ["r2", "p1"], ["cat"], "concat_channels", axis=1),
        node("AveragePool", ["cat"], ["ap"], "avgpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             ceil_mode=1),
        node("GlobalAveragePool", ["ap"], ["gap"], "gap"),
        # the flatten as exporters write it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape
        node("Shape", ["gap"], ["shp"], "shape"),
        node("Gather", ["shp", "zero"], ["n"], "gather", axis=0),
        node("Unsqueeze", ["n", "axes0"], ["n1"], "unsqueeze"),
        node("Concat", ["n1", "minus1"], ["newshape"], "concat", axis=0),
        node("Reshape", ["gap", "newshape"], ["flat"], "reshape"),
        node("Gemm", ["flat", "wf", "bf"], ["fc"], "fc", transB=1),
        node("Softmax", ["fc"], ["prob"], "softmax", axis=1),
    ]
    inits = [initializer("w1", [C, 3, 3, 3], w1), initializer("b1", [C], b1), initializer("gamma", [C], gamma),
             initializer("beta", [C], beta), initializer("mean", [C], mean), initializer("var", [C], var),
             initializer("w2", [C, C // 2, 3, 3], w2), initializer("wd", [C, 1, 3, 3], wd), initializer("bd", [C], bd), initializer("wf", [10, 2 * C], wf), initializer("bf", [10], bf),
             ivar(2, 7) + field(7, varint(0)) + field(8, "zero"), int_init("axes0", [0]), int_init("minus1", [-1])]
    open(out + "/cnn.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 3, H, H])],
                                              [value_info("prob", [1, 10])]))
    npy(out + "/cnn_x.npy", "<f4", (1, 3, H, H), struct.pack("<%df" % len(x), *x))
    npy(out + "/cnn_ref.npy", "<f4", (1, 10), struct.pack("<10f", *ref))


def block(out):
    """LayerNormalization, Split, MatMul (batched against a matrix), Where, Concat, Transpose."""
    import math
    B, T, D = 2, 3, 6
    x = rand(B * T * D, 11, 1.0)
    sc, bi = [1 + v for v in rand(D, 12, 0.3)], rand(D, 13, 0.2)
    w = rand(3 * 4, 14, 0.5)  # [3, 4]
    cond = [1, 0, 1, 1]
    ln = []
    for r in range(B * T):
        row = x[r * D:(r + 1) * D]
        mu = sum(row) / D
        var = sum((v - mu) ** 2 for v in row) / D
        ln += [(v - mu) / math.sqrt(var + 1e-5) * sc[i] + bi[i] for i, v in enumerate(row)]
    a = [ln[r * D + i] for r in range(B * T) for i in range(3)]  # Split [3, 3] on the last axis
    b = [ln[r * D + 3 + i] for r in range(B * T) for i in range(3)]
    m = [sum(a[r * 3 + k] * w[k * 4 + j] for k in range(3)) for r in range(B * T) for j in range(4)]  # [B, T, 4]
    wh = [m[i] if cond[i % 4] else 0.5 for i in range(B * T * 4)]  # Where(cond[4], m, 0.5)
    cat = []  # Concat(wh, b) on the last axis: [B, T, 7]
    for r in range(B * T):
        cat += wh[r * 4:(r + 1) * 4] + b[r * 3:(r + 1) * 3]
    ref = [cat[(bb * T + t) * 7 + j] for bb in range(B) for j in range(7) for t in range(T)]  # Transpose 0 2 1
    bool_init = ivar(1, 4) + ivar(2, 9) + field(9, bytes(cond)) + field(8, "cond")
    half = initializer("half", [], [0.5])
    nodes = [
        node("LayerNormalization", ["x", "sc", "bi"], ["ln"], "ln", axis=-1, epsilon=1e-5),
        node("Split", ["ln", "parts"], ["a", "b"], "split", axis=2),
        node("MatMul", ["a", "w"], ["m"], "matmul"),
        node("Where", ["cond", "m", "half"], ["wh"], "where"),
        node("Concat", ["wh", "b"], ["cat"], "concat", axis=-1),
        node("Transpose", ["cat"], ["y"], "transpose", perm=[0, 2, 1]),
    ]
    inits = [initializer("sc", [D], sc), initializer("bi", [D], bi), initializer("w", [3, 4], w), bool_init, half,
             int_init("parts", [3, 3])]
    open(out + "/block.onnx", "wb").write(model(nodes, inits, [value_info("x", [B, T, D])], [value_info("y", [B, 7, T])],
                                                opset=17))
    npy(out + "/block_x.npy", "<f4", (B, T, D), struct.pack("<%df" % len(x), *x))
    npy(out + "/block_ref.npy", "<f4", (B, 7, T), struct.pack("<%df" % len(ref), *ref))


def act(out):
    """HardSigmoid then GlobalMaxPool (their node tests are of opsets 1 and 6)."""
    x = rand(2 * 9, 17, 4.0)
    h = [max(0.0, min(1.0, 0.3 * v + 0.4)) for v in x]
    ref = [max(h[c * 9:(c + 1) * 9]) for c in range(2)]
    nodes = [node("HardSigmoid", ["x"], ["h"], "hs", alpha=0.3, beta=0.4), node("GlobalMaxPool", ["h"], ["y"], "gmp")]
    open(out + "/act.onnx", "wb").write(model(nodes, [], [value_info("x", [1, 2, 3, 3])], [value_info("y", [1, 2, 1, 1])]))
    npy(out + "/act_x.npy", "<f4", (1, 2, 3, 3), struct.pack("<18f", *x))
    npy(out + "/act_ref.npy", "<f4", (1, 2, 1, 1), struct.pack("<2f", *ref))


def gather(out):
    """Gather of a run-time [5, 3] input by constant 2-D indices (one negative) along axis 0,
    and by [2, 3] indices along axis 1 (of a [2, 5, 3] input), with their results here;
    and an index out of range."""
    x = [float(v) for v in range(15)]
    npy(out + "/gx.npy", "<f4", (5, 3), struct.pack("<15f", *x))
    rows = [0, 4, 3, 4]  # [[0, -1], [3, 4]]
    ref = [x[3 * r + c] for r in rows for c in range(3)]
    npy(out + "/gather2d_ref.npy", "<f4", (2, 2, 3), struct.pack("<12f", *ref))
    open(out + "/gather2d.onnx", "wb").write(model(
        [node("Gather", ["x", "ix"], ["y"], "ga", axis=0)], [int_init("ix", [0, -1, 3, 4], [2, 2])],
        [value_info("x", [5, 3])], [value_info("y", [2, 2, 3])]))
    x3 = [float(v) for v in range(30)]  # [2, 5, 3]
    npy(out + "/gx3.npy", "<f4", (2, 5, 3), struct.pack("<30f", *x3))
    ix = [1, 1, -5, 2, 4, 0]  # [2, 3] along axis 1: y[a, i, j, c] = x[a, ix[i, j], c]
    ref = [x3[15 * a + 3 * (v % 5) + c] for a in range(2) for v in ix for c in range(3)]
    npy(out + "/gather_axis1_ref.npy", "<f4", (2, 2, 3, 3), struct.pack("<36f", *ref))
    open(out + "/gather_axis1.onnx", "wb").write(model(
        [node("Gather", ["x", "ix"], ["y"], "ga1", axis=1)], [int_init("ix", ix, [2, 3])],
        [value_info("x", [2, 5, 3])], [value_info("y", [2, 2, 3, 3])]))
    open(out + "/gather_range.onnx", "wb").write(model(
        [node("Gather", ["x", "ix"], ["y"], "gr", axis=0)], [int_init("ix", [0, 5, 1, 2], [2, 2])],
        [value_info("x", [5, 3])], [value_info("y", [2, 2, 3])]))


def layout_ops(out):
    """Conv (so the rest runs on a channels-last tensor), PRelu with a [C, 1, 1] slope, Pad
    (reflect; constant with negative pads), InstanceNormalization, Elu, Tile, DepthToSpace,
    Mean, and a constant folded through HardSwish and LeakyRelu; the result computed here."""
    import math
    C, H, W = 4, 4, 5
    f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
    x = rand(2 * H * W, 21, 1.0)
    wc, bc = rand(C * 2, 22, 1.0), rand(C, 23, 0.2)
    slope = [0.25, 0.1, -0.5, 0.75]
    sc, bi = [1.5, 0.5, 1.0, 2.0], [0.1, -0.2, 0.0, 0.3]
    kc = [f32(-4.0 + 9.0 * i / 27) for i in range(28)]  # HardSwish(k) + LeakyRelu(k, 0.1), broadcast on the last axis
    t = [[[sum(wc[o * 2 + i] * x[(i * H + h) * W + w] for i in range(2)) + bc[o] for w in range(W)] for h in range(H)]
         for o in range(C)]  # 1x1 conv: [C][H][W]
    t = [[[v if v >= 0 else slope[c] * v for v in row] for row in t[c]] for c in range(C)]  # PRelu
    def refl(i, n):
        i = abs(i)
        return n - 1 - abs(n - 1 - i)
    t = [[[t[c][refl(h - 1, H)][refl(w - 2, W)] for w in range(W + 3)] for h in range(H + 3)] for c in range(C)]  # Pad reflect [1, 2] / [2, 1]
    H2, W2 = H + 3, W + 3
    n = []
    for c in range(C):  # InstanceNormalization
        vals = [v for row in t[c] for v in row]
        mu = sum(vals) / len(vals)
        var = sum((v - mu) ** 2 for v in vals) / len(vals)
        n.append([[(v - mu) / math.sqrt(var + 1e-5) * sc[c] + bi[c] for v in row] for row in t[c]])
    e = [[[v if v >= 0 else 0.7 * math.expm1(v) for v in row] for row in n[c]] for c in range(C)]  # Elu 0.7
    # Pad constant 0.3, pads begin [0, 0, -1, 1], end [0, 0, 0, -2]: H2 - 1 rows, W2 - 1 columns
    pc = [[[0.3 if w == 0 else e[c][h + 1][w - 1] for w in range(W2 - 1)] for h in range(H2 - 1)] for c in range(C)]
    H3, W3 = H2 - 1, W2 - 1
    tl = [[[pc[c][h][w % W3] for w in range(2 * W3)] for h in range(H3)] for c in range(C)]  # Tile [1, 1, 1, 2]
    W4 = 2 * W3
    d2s = [[tl[(h % 2) * 2 + w % 2][h // 2][w // 2] for w in range(2 * W4)] for h in range(2 * H3)]  # DepthToSpace 2 (DCR)
    hs = [f32(v * max(0.0, min(1.0, v / 6 + 0.5)) + (v if v >= 0 else f32(0.1) * v)) for v in kc]
    ref = [(d2s[h][w] + hs[w]) / 2 + 1.0 for h in range(2 * H3) for w in range(2 * W4)]  # Mean(d, k2, ...) below
    # Mean(d + hs, 2.0 broadcast): (d + hs + 2) / 2 = (d + hs) / 2 + 1
    k_tensor = ivar(1, 28) + ivar(2, 1) + field(4, struct.pack("<28f", *kc)) + field(8, "kc")
    const_node = (field(2, "k") + field(3, "const") + field(4, "Constant") +
                  field(5, field(1, "value") + field(5, k_tensor) + ivar(20, 4)))
    nodes = [
        node("Conv", ["x", "wc", "bc"], ["c"], "conv", kernel_shape=[1, 1]),
        node("PRelu", ["c", "slope"], ["p"], "prelu"),
        node("Pad", ["p", "pads_r"], ["r"], "pad_reflect", mode="reflect"),
        node("InstanceNormalization", ["r", "sc", "bi"], ["n"], "inorm", epsilon=1e-5),
        node("Elu", ["n"], ["e"], "elu", alpha=0.7),
        node("Pad", ["e", "pads_c", "cval"], ["pc"], "pad_const"),
        node("Tile", ["pc", "reps"], ["tl"], "tile"),
        node("DepthToSpace", ["tl"], ["d"], "d2s", blocksize=2),
        const_node,
        node("HardSwish", ["k"], ["k1"], "hswish"),
        node("LeakyRelu", ["k"], ["k2"], "leaky", alpha=0.1),
        node("Sum", ["d", "k1", "k2"], ["s"], "sum"),
        node("Mean", ["s", "two"], ["y"], "mean"),
    ]
    inits = [initializer("wc", [C, 2, 1, 1], wc), initializer("bc", [C], bc), initializer("slope", [C, 1, 1], slope),
             int_init("pads_r", [0, 0, 1, 2, 0, 0, 2, 1]), initializer("sc", [C], sc), initializer("bi", [C], bi),
             int_init("pads_c", [0, 0, -1, 1, 0, 0, 0, -2]), initializer("cval", [], [0.3]), int_init("reps", [1, 1, 1, 2]),
             initializer("two", [], [2.0])]
    ys = (1, 1, 2 * H3, 2 * W4)
    open(out + "/layout_ops.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 2, H, W])], [value_info("y", list(ys))],
                                                     opset=14))
    npy(out + "/layout_ops_x.npy", "<f4", (1, 2, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/layout_ops_ref.npy", "<f4", ys, struct.pack("<%df" % len(ref), *ref))


def pad_old(out):
    """Pad-2 (opset 10: pads, mode and value as attributes): edge, then constant 1.5."""
    x = rand(3 * 4, 24, 1.0)  # [1, 1, 3, 4]
    e = [[x[min(max(h - 2, 0), 2) * 4 + min(max(w - 1, 0), 3)] for w in range(4 + 4)] for h in range(3 + 3)]  # [2, 1] / [1, 3]
    ref = [1.5 if h == 0 or w >= 8 else e[h - 1][w] for h in range(6 + 1) for w in range(8 + 1)]  # [1, 0] / [0, 1]
    nodes = [node("Pad", ["x"], ["e"], "edge", mode="edge", pads=[0, 0, 2, 1, 0, 0, 1, 3]),
             node("Pad", ["e"], ["y"], "const", pads=[0, 0, 1, 0, 0, 0, 0, 1], value=1.5)]
    open(out + "/pad_old.onnx", "wb").write(model(nodes, [], [value_info("x", [1, 1, 3, 4])], [value_info("y", [1, 1, 7, 9])],
                                                  opset=10))
    npy(out + "/pad_old_x.npy", "<f4", (1, 1, 3, 4), struct.pack("<12f", *x))
    npy(out + "/pad_old_ref.npy", "<f4", (1, 1, 7, 9), struct.pack("<63f", *ref))


def resize_coord(ct, x, scale, n, m):
    if ct == "asymmetric":
        return x / scale
    if ct == "align_corners":
        return 0.0 if m == 1 else x * (n - 1) / (m - 1)
    return (x + 0.5) / scale - 0.5  # half_pixel


def resize_axis(v, n, m, scale, ct, linear, nm="round_prefer_floor"):
    """One axis of a resize: v(i) reads input index i; returns output m values as functions."""
    import math
    out = []
    for i in range(m):
        c = resize_coord(ct, i, scale, n, m)
        if linear:
            c = min(max(c, 0.0), n - 1.0)
            lo = math.floor(c)
            hi = min(lo + 1, n - 1)
            out.append([(lo, 1 - (c - lo)), (hi, c - lo)])
        else:
            f = math.floor(c)
            r = (f + 1 if nm == "round_prefer_ceil" else f) if c - f == 0.5 else math.floor(c + 0.5)
            out.append([(min(max(r, 0), n - 1), 1.0)])
    return out


def resize2d(t, H, W, m_h, m_w, s_h, s_w, ct, linear, nm="round_prefer_floor"):
    """t[c][h][w] resized on H and W."""
    ah, aw = resize_axis(None, H, m_h, s_h, ct, linear, nm), resize_axis(None, W, m_w, s_w, ct, linear, nm)
    return [[[sum(wh * ww * t[c][h][w] for h, wh in ah[i] for w, ww in aw[j]) for j in range(m_w)] for i in range(m_h)]
            for c in range(len(t))]


def resize(out):
    """Resize after a Conv (channels last inside): linear half_pixel by scales [1, 1, 2, 1.5],
    then nearest align_corners round_prefer_ceil to sizes [1, 2, 4, 9]; Upsample-9 linear by
    [1, 1, 2, 2]; the results computed here."""
    H, W = 3, 4
    x = rand(2 * H * W, 31, 1.0)
    wc = rand(4, 32, 1.0)
    t = [[[sum(wc[o * 2 + i] * x[(i * H + h) * W + w] for i in range(2)) for w in range(W)] for h in range(H)]
         for o in range(2)]
    a = resize2d(t, H, W, 6, 6, 2.0, 1.5, "half_pixel", True)
    b = resize2d(a, 6, 6, 4, 9, 4 / 6, 9 / 6, "align_corners", False, "round_prefer_ceil")
    ref = [max(v, 0.0) for c in b for row in c for v in row]
    nodes = [node("Conv", ["x", "wc"], ["c"], "conv", kernel_shape=[1, 1]),
             node("Resize", ["c", "", "scales"], ["a"], "up", mode="linear"),
             node("Resize", ["a", "", "", "sizes"], ["b"], "down", mode="nearest",
                  coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_ceil"),
             node("Relu", ["b"], ["y"], "relu")]
    inits = [initializer("wc", [2, 2, 1, 1], wc), initializer("scales", [4], [1.0, 1.0, 2.0, 1.5]),
             int_init("sizes", [1, 2, 4, 9])]
    # the output's H and W symbolic, as an exporter writes what it could not infer: the graph's
    open(out + "/resize.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 2, H, W])],
                                                 [value_info("y", [1, 2, "Resize_dim_2", "Resize_dim_3"])]))
    npy(out + "/resize_x.npy", "<f4", (1, 2, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/resize_ref.npy", "<f4", (1, 2, 4, 9), struct.pack("<%df" % len(ref), *ref))
    u = rand(6, 33, 1.0)  # [1, 1, 2, 3]
    ref = [v for c in resize2d([[u[0:3], u[3:6]]], 2, 3, 4, 6, 2.0, 2.0, "asymmetric", True) for row in c for v in row]
    open(out + "/upsample.onnx", "wb").write(model(
        [node("Upsample", ["x", "scales"], ["y"], "up", mode="linear")], [initializer("scales", [4], [1.0, 1.0, 2.0, 2.0])],
        [value_info("x", [1, 1, 2, 3])], [value_info("y", [1, 1, 4, 6])], opset=9))
    npy(out + "/upsample_x.npy", "<f4", (1, 1, 2, 3), struct.pack("<6f", *u))
    npy(out + "/upsample_ref.npy", "<f4", (1, 1, 4, 6), struct.pack("<24f", *ref))


def grid_sample_ref(t, H, W, grid, mode, pad, align):
    """GridSample of t[c][h][w] at grid[i][j] = (x, y) as PyTorch computes it: for linear and
    nearest the coordinate clamped (border) or reflected (reflection) first; for cubic each of
    the 16 taps clamped or reflected (the ONNX reference clamps a cubic coordinate too; PyTorch
    and onnxruntime do not)."""
    import math

    def unnorm(g, n):
        return (g + 1) / 2 * (n - 1) if align else ((g + 1) * n - 1) / 2

    def reflect(v, n):
        lo, hi = (0.0, n - 1.0) if align else (-0.5, n - 0.5)
        span = hi - lo
        while v < lo or v > hi:
            v = 2 * lo - v if v < lo else 2 * hi - v
        return v if span > 0 else lo

    def bound(v, n):  # a coordinate or tap under the padding mode
        if pad == "border":
            return min(max(v, 0.0), n - 1.0)
        if pad == "reflection":
            return reflect(v, n)
        return v

    def pixel(c, h, w):
        h, w = int(bound(h, H)), int(bound(w, W))
        return t[c][h][w] if 0 <= h < H and 0 <= w < W else 0.0

    def cubic(d):
        a, d = -0.75, abs(d)
        return ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a

    out = []
    for c in range(len(t)):
        for row in grid:
            for gx, gy in row:
                x, y = unnorm(gx, W), unnorm(gy, H)
                if mode == "cubic":
                    fx, fy = math.floor(x), math.floor(y)
                    out.append(sum(cubic(y - (fy + a)) * cubic(x - (fx + b)) * pixel(c, fy + a, fx + b)
                                   for a in range(-1, 3) for b in range(-1, 3)))
                    continue
                x, y = bound(x, W), bound(y, H)
                if mode == "nearest":
                    out.append(pixel(c, round(y), round(x)))
                    continue
                fx, fy = math.floor(x), math.floor(y)
                tx, ty = x - fx, y - fy
                out.append(sum(wy * wx * pixel(c, fy + a, fx + b) for a, wy in ((0, 1 - ty), (1, ty))
                               for b, wx in ((0, 1 - tx), (1, tx))))
    return out


def grid_sample(out):
    """GridSample of a Conv's output (channels last inside) at a run-time grid reaching past
    the borders: bicubic with border padding (each tap clamped, as PyTorch), bilinear with
    reflection and align_corners, nearest with zeros; against grid_sample_ref."""
    C, H, W, Ho, Wo = 2, 4, 5, 3, 4
    x = rand(C * H * W, 41, 1.0)
    wc = rand(C * C, 42, 1.0)
    t = [[[sum(wc[o * C + i] * x[(i * H + h) * W + w] for i in range(C)) for w in range(W)] for h in range(H)]
         for o in range(C)]
    g = [1.4 * v for v in rand(Ho * Wo * 2, 43, 1.0)]
    grid = [[(g[(i * Wo + j) * 2], g[(i * Wo + j) * 2 + 1]) for j in range(Wo)] for i in range(Ho)]
    cases = [("bicubic", "border", 0), ("bilinear", "reflection", 1), ("nearest", "zeros", 0)]
    nodes = [node("Conv", ["x", "wc"], ["c"], "conv", kernel_shape=[1, 1])]
    for k, (mode, pad, align) in enumerate(cases):
        nodes.append(node("GridSample", ["c", "grid"], ["y%d" % (k + 1)], "gs%d" % k, mode=mode, padding_mode=pad,
                          align_corners=align))
        ref = grid_sample_ref(t, H, W, grid, mode[2:] if mode.startswith("bi") else mode, pad, align)
        npy(out + "/grid_sample_y%d.npy" % (k + 1), "<f4", (1, C, Ho, Wo), struct.pack("<%df" % len(ref), *ref))
    open(out + "/grid_sample.onnx", "wb").write(model(
        nodes, [initializer("wc", [C, C, 1, 1], wc)], [value_info("x", [1, C, H, W]), value_info("grid", [1, Ho, Wo, 2])],
        [value_info("y%d" % (k + 1), [1, C, Ho, Wo]) for k in range(3)], opset=16))
    npy(out + "/grid_sample_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/grid_sample_g.npy", "<f4", (1, Ho, Wo, 2), struct.pack("<%df" % len(g), *g))


def einsum_cumsum(out):
    """Einsum (a batched product with a weight, a contraction to a vector, and a row sum
    through an ellipsis),
    CumSum (reverse, exclusive, on axis 1), Trilu of a constant (folded: a mask),
    ReduceLogSumExp and Mish; the result here."""
    import math
    B, T, J, K = 2, 3, 4, 5
    x = rand(B * T * J, 41, 1.0)
    w, v = rand(J * K, 42, 1.0), rand(K, 43, 1.0)
    e = [[[sum(x[(b * T + i) * J + j] * w[j * K + k] for j in range(J)) for k in range(K)] for i in range(T)]
         for b in range(B)]  # bij,jk->bik
    c = [[[sum(e[b][q][k] for q in range(i + 1, T)) for k in range(K)] for i in range(T)] for b in range(B)]
    mask = [[1.0 if k - i >= 1 else 0.0 for k in range(K)] for i in range(T)]  # triu, k = 1
    pre = [sum(c[b][i][k] * v[k] for k in range(K)) + sum(e[b][i][k] * mask[i][k] for k in range(K)) +
           math.log(sum(math.exp(e[b][i][k]) for k in range(K))) for b in range(B) for i in range(T)]
    ref = [a * math.tanh(math.log1p(math.exp(a))) for a in pre]
    nodes = [node("Einsum", ["x", "w"], ["e"], "mm", equation="bij,jk->bik"),
             node("CumSum", ["e", "axis"], ["c"], "cs", reverse=1, exclusive=1),
             node("Einsum", ["c", "v"], ["cv"], "dot", equation="bik, k -> bi"),
             node("Trilu", ["ones", "one"], ["mask"], "triu", upper=1),
             node("Mul", ["e", "mask"], ["em"], "masked"),
             node("Einsum", ["em"], ["es"], "rowsum", equation="...k->..."),
             node("ReduceLogSumExp", ["e", "ax2"], ["lse"], "lse", keepdims=0),
             node("Sum", ["cv", "es", "lse"], ["pre"], "sum"),
             node("Mish", ["pre"], ["y"], "mish")]
    inits = [initializer("w", [J, K], w), initializer("v", [K], v), int_init("axis", [1], []),
             initializer("ones", [T, K], [1.0] * (T * K)), int_init("one", [1], []), int_init("ax2", [2])]
    open(out + "/einsum_cumsum.onnx", "wb").write(model(nodes, inits, [value_info("x", [B, T, J])], [value_info("y", [B, T])],
                                                        opset=18))
    npy(out + "/einsum_cumsum_x.npy", "<f4", (B, T, J), struct.pack("<%df" % len(x), *x))
    npy(out + "/einsum_cumsum_ref.npy", "<f4", (B, T), struct.pack("<%df" % len(ref), *ref))


def masks(out):
    """Comparisons of run-time tensors as masks: Greater, LessOrEqual, Or, Not, And, Equal, a
    Cast to bool and back, and Where with a run-time condition (ONNX's form of a hand-written
    activation `torch.where(x > a, x, b * x)`); the result here."""
    x = rand(2 * 6, 51, 1.0)
    x[3] = 0.0  # a zero: Cast to bool gives false
    ref = []
    for v in x:
        g, le = v > 0.3, v <= -0.4
        keep = not (g or le)  # Not(Or(...))
        w = v if keep else v * 0.1
        nz = v != 0.0  # Cast(x, BOOL)
        a = 1.0 if (nz and g) else 0.0  # Cast(And(nz, g), FLOAT)
        ref.append(w + a + 1.0)  # + Cast(Equal(x, x), FLOAT)
    tenth = initializer("tenth", [], [0.1])
    nodes = [node("Greater", ["x", "hi"], ["g"], "gt"), node("LessOrEqual", ["x", "lo"], ["le"], "le"),
             node("Or", ["g", "le"], ["o"], "or"), node("Not", ["o"], ["keep"], "not"),
             node("Mul", ["x", "tenth"], ["small"], "mul"), node("Where", ["keep", "x", "small"], ["w"], "where"),
             node("Cast", ["x"], ["nz"], "to_bool", to=9), node("And", ["nz", "g"], ["both"], "and"),
             node("Cast", ["both"], ["a"], "to_float", to=1), node("Equal", ["x", "x"], ["eq"], "eq"),
             node("Cast", ["eq"], ["one"], "eq_float", to=1), node("Sum", ["w", "a", "one"], ["y"], "sum")]
    inits = [initializer("hi", [], [0.3]), initializer("lo", [], [-0.4]), tenth]
    open(out + "/masks.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 6])], [value_info("y", [2, 6])]))
    npy(out + "/masks_x.npy", "<f4", (2, 6), struct.pack("<12f", *x))
    npy(out + "/masks_ref.npy", "<f4", (2, 6), struct.pack("<12f", *ref))


def rnn_ref(op, X, W, R, Bv, lens, H0, C0, P, H, direction, acts, clip=None, lbr=0):
    """ONNX's RNN / GRU / LSTM (layout 0) in plain Python: X[t][b] lists, W[d], R[d] rows,
    Bv[d]; ACTS per direction (functions); returns Y[t][d][b], Y_h[d][b], Y_c[d][b]."""
    T, B, D = len(X), len(X[0]), len(W)
    G = len(W[0]) // H
    cl = (lambda v: min(max(v, -clip), clip)) if clip else (lambda v: v)
    dot = lambda row, vec: sum(a * b for a, b in zip(row, vec))
    Y = [[[[0.0] * H for _ in range(B)] for _ in range(D)] for _ in range(T)]
    Yh = [[None] * B for _ in range(D)]
    Yc = [[None] * B for _ in range(D)]
    for d in range(D):
        f = acts[d]
        wb = Bv[d][:G * H] if Bv else [0.0] * (G * H)
        rb = Bv[d][G * H:] if Bv else [0.0] * (G * H)
        for b in range(B):
            h = list(H0[d][b]) if H0 else [0.0] * H
            c = list(C0[d][b]) if C0 else [0.0] * H
            n = lens[b] if lens else T
            steps = range(n - 1, -1, -1) if direction == "reverse" or d == 1 else range(n)
            for t in steps:
                x = X[t][b]
                xw = [dot(W[d][j], x) + wb[j] for j in range(G * H)]
                hr = [dot(R[d][j], h) for j in range(G * H)]
                if op == "RNN":
                    h = [f[0](cl(xw[j] + hr[j] + rb[j])) for j in range(H)]
                elif op == "LSTM":
                    g = [xw[j] + hr[j] + rb[j] for j in range(4 * H)]
                    p = P[d] if P else [0.0] * (3 * H)
                    i = [f[0](cl(g[j] + p[j] * c[j])) for j in range(H)]
                    ff = [f[0](cl(g[2 * H + j] + p[2 * H + j] * c[j])) for j in range(H)]
                    c = [ff[j] * c[j] + i[j] * f[1](cl(g[3 * H + j])) for j in range(H)]
                    o = [f[0](cl(g[H + j] + p[H + j] * c[j])) for j in range(H)]
                    h = [o[j] * f[2](c[j]) for j in range(H)]
                else:
                    z = [f[0](cl(xw[j] + hr[j] + rb[j])) for j in range(H)]
                    r = [f[0](cl(xw[H + j] + hr[H + j] + rb[H + j])) for j in range(H)]
                    if lbr:
                        hh = [f[1](cl(xw[2 * H + j] + r[j] * (hr[2 * H + j] + rb[2 * H + j]))) for j in range(H)]
                    else:
                        rh = [r[j] * h[j] for j in range(H)]
                        hh = [f[1](cl(xw[2 * H + j] + dot(R[d][2 * H + j], rh) + rb[2 * H + j])) for j in range(H)]
                    h = [(1 - z[j]) * hh[j] + z[j] * h[j] for j in range(H)]
                Y[t][d][b] = h
            Yh[d][b], Yc[d][b] = h, c
    return Y, Yh, Yc


def recurrent(out):
    """LSTM, GRU and RNN (the importer unrolls them: onnx_rnn.c) against rnn_ref: a
    bidirectional LSTM with peepholes, initial states and sequence_lens of 5, 2 and 4 steps
    (Y, Y_h, Y_c); on one batch-first input, a GRU of linear_before_reset 0 with clip, a
    bidirectional GRU of linear_before_reset 1, and a reverse RNN of LeakyRelu (alpha 0.2)."""
    import math
    sig = lambda v: 1 / (1 + math.exp(-v))
    mat = lambda rows, cols, seed, sc: [rand(cols, seed + i, sc) for i in range(rows)]
    flat = lambda m: [v for row in m for v in row]
    # the LSTM: T 5, B 3, In 2, H 3, both directions
    T, B, In, H = 5, 3, 2, 3
    X = [mat(B, In, 300 + t * 7, 1.0) for t in range(T)]
    W = [mat(4 * H, In, 310 + d * 50, 0.6) for d in range(2)]
    R = [mat(4 * H, H, 410 + d * 50, 0.6) for d in range(2)]
    Bv = [rand(8 * H, 510 + d, 0.4) for d in range(2)]
    H0 = [mat(B, H, 520 + d * 9, 0.5) for d in range(2)]
    C0 = [mat(B, H, 540 + d * 9, 0.5) for d in range(2)]
    P = [rand(3 * H, 560 + d, 0.5) for d in range(2)]
    lens = [5, 2, 4]
    acts = [[sig, math.tanh, math.tanh]] * 2
    Y, Yh, Yc = rnn_ref("LSTM", X, W, R, Bv, lens, H0, C0, P, H, "bidirectional", acts)
    seq = b"".join(ivar(1, d) for d in [B]) + ivar(2, 6) + field(5, b"".join(varint(v) for v in lens)) + field(8, "lens")
    nodes = [node("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0", "p"], ["y", "yh", "yc"], "lstm", hidden_size=H,
                  direction="bidirectional")]
    inits = [initializer("w", [2, 4 * H, In], flat(flat(W))), initializer("r", [2, 4 * H, H], flat(flat(R))),
             initializer("b", [2, 8 * H], flat(Bv)), seq, initializer("h0", [2, B, H], flat(flat(H0))),
             initializer("c0", [2, B, H], flat(flat(C0))), initializer("p", [2, 3 * H], flat(P))]
    outs = [value_info("y", [T, 2, B, H]), value_info("yh", [2, B, H]), value_info("yc", [2, B, H])]
    open(out + "/lstm_seq.onnx", "wb").write(model(nodes, inits, [value_info("x", [T, B, In])], outs, opset=14))
    xs = flat(flat(X))
    npy(out + "/lstm_seq_x.npy", "<f4", (T, B, In), struct.pack("<%df" % len(xs), *xs))
    for name, v, shape in (("y", flat(flat(flat(Y))), (T, 2, B, H)), ("yh", flat(flat(Yh)), (2, B, H)),
                           ("yc", flat(flat(Yc)), (2, B, H))):
        npy(out + "/lstm_seq_%s.npy" % name, "<f4", shape, struct.pack("<%df" % len(v), *v))
    # the same LSTM with sequence_lens at run time (an int32 input: a library's argument),
    # run with two length vectors
    nodes_rt = [node("LSTM", ["x", "w", "r", "b", "lens", "h0", "c0", "p"], ["y", "yh", "yc"], "lstm", hidden_size=H,
                     direction="bidirectional")]
    open(out + "/lstm_rtl.onnx", "wb").write(model(nodes_rt, inits[:3] + inits[4:], [value_info("x", [T, B, In]),
                                                   value_info("lens", [B], 6)], outs, opset=14))
    for k, lv in enumerate(([5, 2, 4], [1, 5, 3])):
        Y, Yh, Yc = rnn_ref("LSTM", X, W, R, Bv, lv, H0, C0, P, H, "bidirectional", acts)
        npy(out + "/lstm_rtl_l%d.npy" % k, "<i4", (B,), struct.pack("<3i", *lv))
        for name, v, shape in (("y", flat(flat(flat(Y))), (T, 2, B, H)), ("yh", flat(flat(Yh)), (2, B, H)),
                               ("yc", flat(flat(Yc)), (2, B, H))):
            npy(out + "/lstm_rtl_%s%d.npy" % (name, k), "<f4", shape, struct.pack("<%df" % len(v), *v))
    # GRUs and an RNN on one batch-first input [B 2, T 6, In 3], H 4
    T, B, In, H = 6, 2, 3, 4
    Xb = [mat(T, In, 600 + b * 11, 1.0) for b in range(B)]  # [b][t]
    X = [[Xb[b][t] for b in range(B)] for t in range(T)]
    Wg = [mat(3 * H, In, 610 + d * 50, 0.6) for d in range(2)]
    Rg = [mat(3 * H, H, 710 + d * 50, 0.6) for d in range(2)]
    Bg = [rand(6 * H, 810 + d, 0.4) for d in range(2)]
    Wr, Rr = [mat(H, In, 820, 0.6)], [mat(H, H, 830, 0.6)]
    leaky = lambda v: v if v >= 0 else 0.2 * v
    Y1, Yh1, _ = rnn_ref("GRU", X, Wg[:1], Rg[:1], Bg[:1], None, None, None, None, H, "forward", [[sig, math.tanh]],
                         clip=1.5, lbr=0)
    _, Yh2, _ = rnn_ref("GRU", X, Wg, Rg, Bg, None, None, None, None, H, "bidirectional", [[sig, math.tanh]] * 2, lbr=1)
    _, Yh3, _ = rnn_ref("RNN", X, Wr, Rr, None, None, None, None, None, H, "reverse", [[leaky]])
    nodes = [node("GRU", ["x", "wg1", "rg1", "bg1"], ["y1", "yh1"], "gru0", hidden_size=H, layout=1, clip=1.5),
             node("GRU", ["x", "wg", "rg", "bg"], ["", "yh2"], "gru1", hidden_size=H, layout=1, direction="bidirectional",
                  linear_before_reset=1),
             node("RNN", ["x", "wr", "rr"], ["", "yh3"], "rnn", hidden_size=H, layout=1, direction="reverse",
                  activations=["LeakyRelu"], activation_alpha=[0.2])]
    inits = [initializer("wg1", [1, 3 * H, In], flat(Wg[0])), initializer("rg1", [1, 3 * H, H], flat(Rg[0])),
             initializer("bg1", [1, 6 * H], Bg[0]), initializer("wg", [2, 3 * H, In], flat(flat(Wg))),
             initializer("rg", [2, 3 * H, H], flat(flat(Rg))), initializer("bg", [2, 6 * H], flat(Bg)),
             initializer("wr", [1, H, In], flat(Wr[0])), initializer("rr", [1, H, H], flat(Rr[0]))]
    outs = [value_info("y1", [B, T, 1, H]), value_info("yh1", [B, 1, H]), value_info("yh2", [B, 2, H]),
            value_info("yh3", [B, 1, H])]
    open(out + "/gru_rnn.onnx", "wb").write(model(nodes, inits, [value_info("x", [B, T, In])], outs, opset=14))
    xs = flat(flat(Xb))
    npy(out + "/gru_rnn_x.npy", "<f4", (B, T, In), struct.pack("<%df" % len(xs), *xs))
    y1 = [v for b in range(B) for t in range(T) for v in Y1[t][0][b]]
    batch_first = lambda yh, D: [v for b in range(B) for d in range(D) for v in yh[d][b]]
    for name, v, shape in (("y1", y1, (B, T, 1, H)), ("yh1", batch_first(Yh1, 1), (B, 1, H)),
                           ("yh2", batch_first(Yh2, 2), (B, 2, H)), ("yh3", batch_first(Yh3, 1), (B, 1, H))):
        npy(out + "/gru_rnn_%s.npy" % name, "<f4", shape, struct.pack("<%df" % len(v), *v))
    # refused: a length beyond the sequence, one of 0, an activation list of the wrong
    # length, Affine without its alpha and beta (onnxruntime takes 0, ONNX's Affine 1), a
    # W of the wrong shape
    x = value_info("x", [B, T, In])
    rnn_w = [initializer("wr", [1, H, In], flat(Wr[0])), initializer("rr", [1, H, H], flat(Rr[0]))]
    lens_of = lambda v: b"".join(ivar(1, d) for d in [B]) + ivar(2, 6) + field(5, b"".join(varint(u) for u in v)) + field(8, "l")
    bad = {"rnn_lens": (["x", "wr", "rr", "", "l"], {}, [lens_of([6, 7])]),
           "rnn_lens0": (["x", "wr", "rr", "", "l"], {}, [lens_of([0, 6])]),
           "rnn_acts": (["x", "wr", "rr"], {"activations": ["Tanh", "Relu"]}, []),
           "rnn_affine": (["x", "wr", "rr"], {"activations": ["Affine"]}, [])}
    for name, (ins, extra, more) in bad.items():
        nd = node("RNN", ins, ["", "yh"], "rnn", hidden_size=H, layout=1, **extra)
        open(out + "/%s.onnx" % name, "wb").write(model([nd], rnn_w + more, [x], [value_info("yh", [B, 1, H])], opset=14))
    nd = node("RNN", ["x", "wr", "rr"], ["", "yh"], "rnn", hidden_size=H, layout=1)
    wrong = [initializer("wr", [1, H, In + 1], rand(H * (In + 1), 840, 0.5)), rnn_w[1]]
    open(out + "/rnn_wshape.onnx", "wb").write(model([nd], wrong, [x], [value_info("yh", [B, 1, H])], opset=14))
    # geometry out of range (byte mutants overflowed computing with them): a MaxPool's
    # kernel_shape of 2^63 - 1
    nd = node("MaxPool", ["x"], ["yh"], "pool", kernel_shape=[1, 2 ** 63 - 1])
    open(out + "/pool_huge.onnx", "wb").write(model([nd], [], [value_info("x", [B, T, In, 1])], [value_info("yh", [B, T, 1, 1])]))
    # a graph output without a name (crashed: a byte mutant)
    nd = node("Relu", ["x"], ["yh"], "relu")
    noname = value_info("", [2, 3])[len(field(1, "")):]  # the ValueInfo without its name field
    open(out + "/out_noname.onnx", "wb").write(model([nd], [], [value_info("x", [2, 3])], [noname]))
    # a constant too large to fold: EyeLike of a [2^31, 5] input (2^61 values wrapped the
    # allocation's size)
    nd = node("EyeLike", ["x"], ["yh"], "eye")
    open(out + "/eye_huge.onnx", "wb").write(model([nd], [], [value_info("x", [2 ** 31, 5])], [value_info("yh", [2 ** 31, 5])]))
    # a hidden_size that is not R's (2^63 - 1 overflowed gates x hidden_size: a byte mutant)
    nd = node("RNN", ["x", "wr", "rr"], ["", "yh"], "rnn", hidden_size=2 ** 63 - 1, layout=1)
    open(out + "/rnn_hidden.onnx", "wb").write(model([nd], rnn_w, [x], [value_info("yh", [B, 1, H])], opset=14))


def conv1d(out):
    """1-D convolutions and pools (audio front ends, wav2vec's and Whisper's): Conv with
    stride and pads, then a grouped Conv with dilation and pads, a MaxPool (ceil_mode) and an
    AveragePool (pads, count_include_pad 0); the result here."""
    C, L = 4, 9
    x = rand(C * L, 71, 1.0)  # [1, 4, 9]
    w1, b1 = rand(6 * 4 * 3, 72, 0.5), rand(6, 73, 0.5)  # [6, 4, 3], stride 2, pads 1, 1
    w2 = rand(6 * 3 * 3, 74, 0.5)  # [6, 3, 3], group 2, dilation 2, pads 2, 2

    def conv(xs, cin, length, w, cout, k, stride, dil, pl, pr, group, bias):
        lo = (length + pl + pr - dil * (k - 1) - 1) // stride + 1
        y = []
        per_in, per_out = cin // group, cout // group
        for co in range(cout):
            g = co // per_out
            for t in range(lo):
                acc = bias[co] if bias else 0.0
                for ci in range(per_in):
                    for r in range(k):
                        pos = t * stride + r * dil - pl
                        if 0 <= pos < length:
                            acc += xs[(g * per_in + ci) * length + pos] * w[(co * per_in + ci) * k + r]
                y.append(acc)
        return y, lo
    y1, l1 = conv(x, C, L, w1, 6, 3, 2, 1, 1, 1, 1, b1)
    y1 = [max(v, 0.0) for v in y1]
    y2, l2 = conv(y1, 6, l1, w2, 6, 3, 1, 2, 2, 2, 2, None)
    # MaxPool kernel 2, stride 2, ceil_mode 1
    lm = -(-(l2 - 2) // 2) + 1
    if (lm - 1) * 2 >= l2:
        lm -= 1
    mp = [max(y2[c * l2 + t * 2 + r] for r in range(2) if t * 2 + r < l2) for c in range(6) for t in range(lm)]
    # AveragePool kernel 3, stride 1, pads 1, 1, count_include_pad 0 over mp
    ap = []
    for c in range(6):
        for t in range(lm):
            vals = [mp[c * lm + p] for p in range(t - 1, t + 2) if 0 <= p < lm]
            ap.append(sum(vals) / len(vals))
    nodes = [node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", strides=[2], pads=[1, 1], kernel_shape=[3]),
             node("Relu", ["c1"], ["r1"], "relu"),
             node("Conv", ["r1", "w2"], ["c2"], "conv2", group=2, dilations=[2], pads=[2, 2]),
             node("MaxPool", ["c2"], ["m"], "mp", kernel_shape=[2], strides=[2], ceil_mode=1),
             node("AveragePool", ["m"], ["y"], "ap", kernel_shape=[3], pads=[1, 1])]
    inits = [initializer("w1", [6, 4, 3], w1), initializer("b1", [6], b1), initializer("w2", [6, 3, 3], w2)]
    open(out + "/conv1d.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, L])], [value_info("y", [1, 6, lm])]))
    npy(out + "/conv1d_x.npy", "<f4", (1, C, L), struct.pack("<%df" % len(x), *x))
    npy(out + "/conv1d_ref.npy", "<f4", (1, 6, lm), struct.pack("<%df" % len(ap), *ap))


def const_reduce(out):
    """Reductions of constants, folded at import: wav2vec2's weight norm as PyTorch's dynamo
    exports it (ReduceL2 of the filter over its other axes, Div, Mul by g) feeding a 1-D
    Conv, and ReduceLogSumExp and ReduceMax of a constant added to the input; the result here."""
    import math
    C, L, CO, K = 3, 6, 2, 3
    x = rand(C * L, 91, 1.0)
    v, g = rand(CO * C * K, 92, 1.0), [1 + e for e in rand(CO, 93, 0.5)]
    t = rand(4 * L, 94, 2.0)  # [4, L]: its log-sum-exp over axis 0 and its maximum over all
    w = []
    for o in range(CO):
        row = v[o * C * K:(o + 1) * C * K]
        n = math.sqrt(sum(e * e for e in row))
        w += [g[o] * e / n for e in row]
    lse = [math.log(sum(math.exp(t[a * L + j]) for a in range(4))) for j in range(L)]
    tmax = max(t)
    y = []
    for o in range(CO):
        for j in range(L):
            acc = 0.0
            for ci in range(C):
                for r in range(K):
                    p = j + r - 1
                    if 0 <= p < L:
                        acc += (x[ci * L + p] + lse[p] + tmax) * w[(o * C + ci) * K + r]
            y.append(acc)
    nodes = [node("ReduceL2", ["v"], ["n"], "norm", axes=[1, 2], keepdims=1),
             node("Div", ["v", "n"], ["vn"], "div"), node("Mul", ["g", "vn"], ["w"], "mul"),
             node("ReduceLogSumExp", ["t"], ["lse"], "lse", axes=[0], keepdims=0),
             node("ReduceMax", ["t"], ["tmax"], "tmax", keepdims=0),
             node("Add", ["x", "lse"], ["xa"], "add1"), node("Add", ["xa", "tmax"], ["xb"], "add2"),
             node("Conv", ["xb", "w"], ["y"], "conv", pads=[1, 1], kernel_shape=[K])]
    inits = [initializer("v", [CO, C, K], v), initializer("g", [CO, 1, 1], g), initializer("t", [4, L], t)]
    open(out + "/const_reduce.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, L])], [value_info("y", [1, CO, L])]))
    npy(out + "/const_reduce_x.npy", "<f4", (1, C, L), struct.pack("<%df" % len(x), *x))
    npy(out + "/const_reduce_ref.npy", "<f4", (1, CO, L), struct.pack("<%df" % len(y), *y))


def conv3d(out):
    """A 3-D convolution (video models: r3d_18) with strides, pads, a dilation and a bias,
    then Relu and a channel-wise 3-D convolution (group = channels); the result here."""
    C, D, H, W, CO, K = 2, 4, 5, 5, 3, 3
    x = rand(C * D * H * W, 81, 1.0)
    w = rand(CO * C * K * K * K, 82, 0.5)
    bias = rand(CO, 83, 0.5)
    st, dil, pb, pe = (2, 1, 2), (1, 2, 1), (1, 1, 0), (1, 1, 1)
    osz = [(n + pb[i] + pe[i] - dil[i] * (K - 1) - 1) // st[i] + 1 for i, n in enumerate((D, H, W))]
    y = []
    for co in range(CO):
        for z in range(osz[0]):
            for yy in range(osz[1]):
                for xx in range(osz[2]):
                    acc = bias[co]
                    for ci in range(C):
                        for a in range(K):
                            for b_ in range(K):
                                for c_ in range(K):
                                    iz, iy, ix = z * st[0] + a * dil[0] - pb[0], yy * st[1] + b_ * dil[1] - pb[1], xx * st[2] + c_ * dil[2] - pb[2]
                                    if 0 <= iz < D and 0 <= iy < H and 0 <= ix < W:
                                        acc += x[((ci * D + iz) * H + iy) * W + ix] * w[(((co * C + ci) * K + a) * K + b_) * K + c_]
                    y.append(max(acc, 0.0))
    # then a channel-wise 3-D convolution (group 3, X3D's), pads 1: each channel by its own filter
    w2 = rand(CO * K * K * K, 84, 0.5)
    od, oh, ow = osz
    y2 = []
    for co in range(CO):
        for z in range(od):
            for yy in range(oh):
                for xx in range(ow):
                    acc = 0.0
                    for a in range(K):
                        for b_ in range(K):
                            for c_ in range(K):
                                iz, iy, ix = z + a - 1, yy + b_ - 1, xx + c_ - 1
                                if 0 <= iz < od and 0 <= iy < oh and 0 <= ix < ow:
                                    acc += y[((co * od + iz) * oh + iy) * ow + ix] * w2[((co * K + a) * K + b_) * K + c_]
                    y2.append(acc)
    y = y2
    nodes = [node("Conv", ["x", "w", "b"], ["c"], "conv3d", strides=list(st), dilations=list(dil), pads=list(pb + pe)),
             node("Relu", ["c"], ["r"], "relu"),
             node("Conv", ["r", "w2"], ["y"], "conv3d_dw", group=CO, pads=[1, 1, 1, 1, 1, 1])]
    inits = [initializer("w", [CO, C, K, K, K], w), initializer("b", [CO], bias), initializer("w2", [CO, 1, K, K, K], w2)]
    oshape = [1, CO] + osz
    open(out + "/conv3d.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, D, H, W])], [value_info("y", oshape)]))
    npy(out + "/conv3d_x.npy", "<f4", (1, C, D, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/conv3d_ref.npy", "<f4", tuple(oshape), struct.pack("<%df" % len(y), *y))


def conv3d_ref(x, c, dhw, w, co, k, st, dil, pb, pe, group, bias):
    """NCDHW convolution of x flat [c, D, H, W] by w flat [co, c / group, kd, kh, kw]; (y, odhw)."""
    cg, og = c // group, co // group
    osz = [(n + pb[i] + pe[i] - dil[i] * (k[i] - 1) - 1) // st[i] + 1 for i, n in enumerate(dhw)]
    D, H, W = dhw
    y = []
    for o in range(co):
        g = o // og
        for z in range(osz[0]):
            for yy in range(osz[1]):
                for xx in range(osz[2]):
                    acc = bias[o] if bias else 0.0
                    for ci in range(cg):
                        for a in range(k[0]):
                            for b_ in range(k[1]):
                                for c_ in range(k[2]):
                                    iz, iy, ix = z * st[0] + a * dil[0] - pb[0], yy * st[1] + b_ * dil[1] - pb[1], xx * st[2] + c_ * dil[2] - pb[2]
                                    if 0 <= iz < D and 0 <= iy < H and 0 <= ix < W:
                                        acc += x[(((g * cg + ci) * D + iz) * H + iy) * W + ix] * w[((((o * cg + ci) * k[0] + a) * k[1] + b_) * k[2]) + c_]
                    y.append(acc)
    return y, osz


def conv3d_t(out):
    """Temporal 3-D convolutions (KD x 1 x 1, (2+1)-D and separable video models' r2plus1d,
    s3d): a 3 x 1 x 1 one with stride 2, dilation 2 and uneven pads in depth and a bias,
    Relu, then a grouped (2 groups) 2 x 1 x 1 one; texc computes them as 2-D convolutions
    of a KD x 1 filter over [N, C, D, H x W] (onnx_nn.c conv3d_temporal)."""
    C, D, H, W, CO = 4, 7, 3, 5, 6
    x = rand(C * D * H * W, 85, 1.0)
    w = rand(CO * C * 3, 86, 0.5)
    bias = rand(CO, 87, 0.5)
    y, osz = conv3d_ref(x, C, (D, H, W), w, CO, (3, 1, 1), (2, 1, 1), (2, 1, 1), (2, 0, 0), (1, 0, 0), 1, bias)
    y = [max(v, 0.0) for v in y]
    w2 = rand(4 * (CO // 2) * 2, 88, 0.5)
    y2, osz2 = conv3d_ref(y, CO, osz, w2, 4, (2, 1, 1), (1, 1, 1), (1, 1, 1), (0, 0, 0), (0, 0, 0), 2, None)
    nodes = [node("Conv", ["x", "w", "b"], ["c"], "conv_t", strides=[2, 1, 1], dilations=[2, 1, 1], pads=[2, 0, 0, 1, 0, 0]),
             node("Relu", ["c"], ["r"], "relu"),
             node("Conv", ["r", "w2"], ["y"], "conv_t2", group=2)]
    inits = [initializer("w", [CO, C, 3, 1, 1], w), initializer("b", [CO], bias), initializer("w2", [4, CO // 2, 2, 1, 1], w2)]
    oshape = [1, 4] + osz2
    open(out + "/conv3d_t.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, D, H, W])], [value_info("y", oshape)]))
    npy(out + "/conv3d_t_x.npy", "<f4", (1, C, D, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/conv3d_t_ref.npy", "<f4", tuple(oshape), struct.pack("<%df" % len(y2), *y2))


def pool3d(out):
    """3-D pools (video models: s3d): a MaxPool with pads, strides and ceil_mode, and an
    AveragePool with pads (count_include_pad 0) and ceil_mode, summed; the result here."""
    C, D, H, W = 2, 3, 5, 4
    x = rand(C * D * H * W, 91, 1.0)

    def pool(kind, k, st, pb, pe):
        dims = (D, H, W)
        osz = []
        for i, n in enumerate(dims):
            span = n + pb[i] + pe[i] - k[i]
            o = -(-span // st[i]) + 1  # ceil_mode
            if (o - 1) * st[i] >= n + pb[i]:
                o -= 1
            osz.append(o)
        y = []
        for c in range(C):
            for z in range(osz[0]):
                for yy in range(osz[1]):
                    for xx in range(osz[2]):
                        vals = []
                        for a in range(k[0]):
                            for b_ in range(k[1]):
                                for c_ in range(k[2]):
                                    iz, iy, ix = z * st[0] + a - pb[0], yy * st[1] + b_ - pb[1], xx * st[2] + c_ - pb[2]
                                    if 0 <= iz < D and 0 <= iy < H and 0 <= ix < W:
                                        vals.append(x[((c * D + iz) * H + iy) * W + ix])
                        y.append(max(vals) if kind == "max" else sum(vals) / len(vals))
        return y, osz
    m, om = pool("max", (2, 3, 2), (2, 2, 2), (1, 1, 0), (1, 1, 1))
    a, oa = pool("avg", (2, 3, 2), (2, 2, 2), (1, 1, 0), (1, 1, 1))
    assert om == oa
    y = [u + v for u, v in zip(m, a)]
    attrs = dict(kernel_shape=[2, 3, 2], strides=[2, 2, 2], pads=[1, 1, 0, 1, 1, 1], ceil_mode=1)
    nodes = [node("MaxPool", ["x"], ["m"], "max3d", **attrs), node("AveragePool", ["x"], ["a"], "avg3d", **attrs),
             node("Add", ["m", "a"], ["y"], "add")]
    oshape = [1, C] + om
    open(out + "/pool3d.onnx", "wb").write(model(nodes, [], [value_info("x", [1, C, D, H, W])], [value_info("y", oshape)]))
    npy(out + "/pool3d_x.npy", "<f4", (1, C, D, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/pool3d_ref.npy", "<f4", tuple(oshape), struct.pack("<%df" % len(y), *y))


def convtr1d(out):
    """A 1-D ConvTranspose (vocoders' upsampling) with stride, pads, output_padding, a
    dilation and a bias; the result here."""
    CI, CO, L, K, st, dil, pb, pe, opad = 3, 2, 7, 4, 3, 2, 2, 1, 1
    x = rand(CI * L, 101, 1.0)
    w = rand(CI * CO * K, 102, 0.5)  # [CI, CO, K]
    bias = rand(CO, 103, 0.5)
    lo = st * (L - 1) + opad + (K - 1) * dil + 1 - pb - pe
    y = [bias[co] for co in range(CO) for _ in range(lo)]
    for ci in range(CI):
        for i in range(L):
            for co in range(CO):
                for r in range(K):
                    t = i * st + r * dil - pb
                    if 0 <= t < lo:
                        y[co * lo + t] += x[ci * L + i] * w[(ci * CO + co) * K + r]
    nodes = [node("ConvTranspose", ["x", "w", "b"], ["y"], "convtr", strides=[st], dilations=[dil], pads=[pb, pe],
                  output_padding=[opad])]
    inits = [initializer("w", [CI, CO, K], w), initializer("b", [CO], bias)]
    open(out + "/convtr1d.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, CI, L])], [value_info("y", [1, CO, lo])]))
    npy(out + "/convtr1d_x.npy", "<f4", (1, CI, L), struct.pack("<%df" % len(x), *x))
    npy(out + "/convtr1d_ref.npy", "<f4", (1, CO, lo), struct.pack("<%df" % len(y), *y))


def convtr2d(out):
    """2-D ConvTransposes by constant filters (onnx_nn.c conv_transpose_gemm: a 1 x 1
    product, then col2im): a U-Net's 2 x 2 upsampling of stride 2 (the taps tile the output)
    after a Conv (channels last), and a 3 x 2 filter with strides 2 and 3, a dilation,
    uneven pads and output_padding, with a bias; a depthwise one (group = channels, FCN's
    bilinear upsampling: 4 x 4, stride 2, pads 1); the results here."""
    CI, CO, H, W = 3, 4, 3, 4
    x = rand(CI * H * W, 121, 1.0)
    wc = rand(CI * CI, 122, 0.7)
    c = [sum(wc[o * CI + i] * x[(i * H + h) * W + w] for i in range(CI)) for o in range(CI) for h in range(H) for w in range(W)]

    def convtr(xs, kh, kw, st, dil, pb, pe, opad, w, bias):
        oh = st[0] * (H - 1) + opad[0] + (kh - 1) * dil[0] + 1 - pb[0] - pe[0]
        ow = st[1] * (W - 1) + opad[1] + (kw - 1) * dil[1] + 1 - pb[1] - pe[1]
        y = [bias[co] if bias else 0.0 for co in range(CO) for _ in range(oh * ow)]
        for ci in range(CI):
            for i in range(H):
                for j in range(W):
                    for co in range(CO):
                        for a in range(kh):
                            for b_ in range(kw):
                                ty, tx = i * st[0] + a * dil[0] - pb[0], j * st[1] + b_ * dil[1] - pb[1]
                                if 0 <= ty < oh and 0 <= tx < ow:
                                    y[(co * oh + ty) * ow + tx] += xs[(ci * H + i) * W + j] * w[((ci * CO + co) * kh + a) * kw + b_]
        return y, oh, ow
    w1 = rand(CI * CO * 4, 123, 0.5)
    y1, oh1, ow1 = convtr(c, 2, 2, (2, 2), (1, 1), (0, 0), (0, 0), (0, 0), w1, None)
    w2, b2 = rand(CI * CO * 6, 124, 0.5), rand(CO, 125, 0.5)
    y2, oh2, ow2 = convtr(x, 3, 2, (2, 3), (1, 2), (1, 0), (0, 1), (1, 2), w2, b2)
    # depthwise (group = channels): FCN's bilinear upsampling, 4 x 4 of stride 2, pads 1
    w3 = rand(CI * 16, 126, 0.5)
    oh3, ow3 = 2 * (H - 1) + 4 - 2, 2 * (W - 1) + 4 - 2
    y3 = [0.0] * (CI * oh3 * ow3)
    for ch in range(CI):
        for i in range(H):
            for j in range(W):
                for a in range(4):
                    for b_ in range(4):
                        ty, tx = i * 2 + a - 1, j * 2 + b_ - 1
                        if 0 <= ty < oh3 and 0 <= tx < ow3:
                            y3[(ch * oh3 + ty) * ow3 + tx] += c[(ch * H + i) * W + j] * w3[ch * 16 + a * 4 + b_]
    nodes = [node("Conv", ["x", "wc"], ["c"], "conv", kernel_shape=[1, 1]),
             node("ConvTranspose", ["c", "w1"], ["y1"], "up", strides=[2, 2], kernel_shape=[2, 2]),
             node("ConvTranspose", ["x", "w2", "b2"], ["y2"], "convtr", strides=[2, 3], dilations=[1, 2], pads=[1, 0, 0, 1],
                  output_padding=[1, 2]),
             node("ConvTranspose", ["c", "w3"], ["y3"], "dwup", strides=[2, 2], pads=[1, 1, 1, 1], group=CI, kernel_shape=[4, 4])]
    inits = [initializer("wc", [CI, CI, 1, 1], wc), initializer("w1", [CI, CO, 2, 2], w1), initializer("w2", [CI, CO, 3, 2], w2),
             initializer("b2", [CO], b2), initializer("w3", [CI, 1, 4, 4], w3)]
    open(out + "/convtr2d.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, CI, H, W])],
                                                   [value_info("y1", [1, CO, oh1, ow1]), value_info("y2", [1, CO, oh2, ow2]),
                                                    value_info("y3", [1, CI, oh3, ow3])]))
    npy(out + "/convtr2d_x.npy", "<f4", (1, CI, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/convtr2d_y1.npy", "<f4", (1, CO, oh1, ow1), struct.pack("<%df" % len(y1), *y1))
    npy(out + "/convtr2d_y2.npy", "<f4", (1, CO, oh2, ow2), struct.pack("<%df" % len(y2), *y2))
    npy(out + "/convtr2d_y3.npy", "<f4", (1, CI, oh3, ow3), struct.pack("<%df" % len(y3), *y3))


def atrous(out):
    """Convolutions whose taps mostly land in the padding (onnx_nn.c conv2d_regions: one
    convolution per region of the output that reads the same taps): DeepLab's atrous
    pyramid in small, 3 x 3 filters dilated 2 and 4 over a 5 x 6 map after a Conv (9
    regions each), one dilated 8 (only the centre tap in range: one region), and a 3 x 2
    filter dilated 4 x 5 with uneven pads and a bias whose bottom row reads no input (3 x 2
    regions, 2 of them zeros); the results here."""
    C, CO, H, W = 3, 4, 5, 6
    x = rand(C * H * W, 131, 1.0)
    wc = rand(C * C, 132, 0.7)
    c = [sum(wc[o * C + i] * x[(i * H + h) * W + w] for i in range(C)) for o in range(C) for h in range(H) for w in range(W)]

    cases = [(3, 3, (1, 1), (2, 2), (2, 2, 2, 2), False), (3, 3, (1, 1), (4, 4), (4, 4, 4, 4), False),
             (3, 3, (1, 1), (8, 8), (8, 8, 8, 8), False), (3, 2, (1, 1), (4, 5), (0, 0, 9, 5), True)]
    nodes, inits, outs = [node("Conv", ["x", "wc"], ["c"], "conv", kernel_shape=[1, 1])], [initializer("wc", [C, C, 1, 1], wc)], []
    for k, (kh, kw, st, dil, pads, has_b) in enumerate(cases):
        w, bias = rand(CO * C * kh * kw, 133 + k, 0.5), rand(CO, 140 + k, 0.5) if has_b else None
        y, oh, ow = conv_any(c, C, H, W, w, CO, kh, kw, st, dil, pads, 1, bias)
        name = "y%d" % (k + 1)
        inits.append(initializer("w%d" % k, [CO, C, kh, kw], w))
        ins = ["c", "w%d" % k]
        if bias:
            inits.append(initializer("b%d" % k, [CO], bias))
            ins.append("b%d" % k)
        nodes.append(node("Conv", ins, [name], "atrous%d" % k, kernel_shape=[kh, kw], strides=list(st), dilations=list(dil),
                          pads=list(pads)))
        outs.append(value_info(name, [1, CO, oh, ow]))
        npy(out + "/atrous_%s.npy" % name, "<f4", (1, CO, oh, ow), struct.pack("<%df" % len(y), *y))
    open(out + "/atrous.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])], outs))
    npy(out + "/atrous_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))



def attention23(out):
    """Opset 23's transformer operators in one graph, their results computed here: x [1, 6,
    16] RMS-normalized (y2), rotated (RotaryEmbedding, 4 heads of 4, positions 2..7 from
    [8, 2] caches: y3) as the queries; keys and values by MatMuls, 2 heads of 4 (grouped-query
    attention, 2 query heads each), after a cache of 2 positions; a boolean mask [6, 8] that
    leaves query 0 no key (a row of zeros), causal masking, softcap 10 (y1: [1, 6, 16]), and
    the keys with their cache (y4: [1, 2, 8, 4])."""
    S, C, H, HK, D, P = 6, 16, 4, 2, 4, 2
    T = P + S
    x = rand(S * C, 161, 1.5)
    sc = rand(C, 162, 1.0)
    wk, wv = rand(C * HK * D, 163, 0.5), rand(C * HK * D, 164, 0.5)
    pk, pv = rand(HK * P * D, 165, 1.0), rand(HK * P * D, 166, 1.0)
    cos_c, sin_c = rand(8 * 2, 167, 1.0), rand(8 * 2, 168, 1.0)
    pos = [2 + i for i in range(S)]
    mask = [[0 if i == 0 else (1 if (i + j) % 3 else 0) for j in range(T)] for i in range(S)]
    n = []
    for i in range(S):
        row = x[i * C:(i + 1) * C]
        r = (sum(v * v for v in row) / C + 1e-5) ** 0.5
        n += [row[c] / r * sc[c] for c in range(C)]
    q = []
    for i in range(S):
        for h in range(H):
            b = i * C + h * D
            for c in range(D):
                k2 = c % 2
                cs, sn = cos_c[pos[i] * 2 + k2], sin_c[pos[i] * 2 + k2]
                q.append(cs * n[b + c] - sn * n[b + c + 2] if c < 2 else sn * n[b + c - 2] + cs * n[b + c])
    km = [sum(n[i * C + c] * wk[c * HK * D + o] for c in range(C)) for i in range(S) for o in range(HK * D)]
    vm = [sum(n[i * C + c] * wv[c * HK * D + o] for c in range(C)) for i in range(S) for o in range(HK * D)]
    def full(cache, new, hk, j, d):
        return cache[(hk * P + j) * D + d] if j < P else new[(j - P) * HK * D + hk * D + d]
    y = [0.0] * (S * C)
    import math
    for h in range(H):
        hk = h // (H // HK)
        for i in range(S):
            sc_ = []
            for j in range(T):
                v = 0.5 * sum(q[i * C + h * D + d] * full(pk, km, hk, j, d) for d in range(D))
                v = 10 * math.tanh(v / 10)
                sc_.append(v if mask[i][j] and j <= i + P else None)
            live = [v for v in sc_ if v is not None]
            if not live:
                continue
            m = max(live)
            e = [math.exp(v - m) if v is not None else 0.0 for v in sc_]
            tot = sum(e)
            for d in range(D):
                y[i * C + h * D + d] = sum(e[j] / tot * full(pv, vm, hk, j, d) for j in range(T))
    pres = [full(pk, km, hk, j, d) for hk in range(HK) for j in range(T) for d in range(D)]
    mask_init = (b"".join(ivar(1, d) for d in [S, T]) + ivar(2, 9) +
                 field(9, bytes(mask[i][j] for i in range(S) for j in range(T))) + field(8, "mask"))
    nodes = [node("RMSNormalization", ["x", "sc"], ["y2"], "rms"),
             node("RotaryEmbedding", ["y2", "cos", "sin", "pos"], ["y3"], "rot", num_heads=H),
             node("MatMul", ["y2", "wk"], ["k"], "k"), node("MatMul", ["y2", "wv"], ["v"], "v"),
             node("Attention", ["y3", "k", "v", "mask", "pk", "pv"], ["y1", "y4"], "att", q_num_heads=H, kv_num_heads=HK,
                  is_causal=1, softcap=10.0)]
    inits = [initializer("sc", [C], sc), initializer("wk", [C, HK * D], wk), initializer("wv", [C, HK * D], wv),
             initializer("pk", [1, HK, P, D], pk), initializer("pv", [1, HK, P, D], pv),
             initializer("cos", [8, 2], cos_c), initializer("sin", [8, 2], sin_c), int_init("pos", pos, [1, S]), mask_init]
    open(out + "/attention23.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, S, C])],
                                                      [value_info("y1", [1, S, C]), value_info("y2", [1, S, C]),
                                                       value_info("y3", [1, S, C]), value_info("y4", [1, HK, T, D])], opset=23))
    npy(out + "/attention23_x.npy", "<f4", (1, S, C), struct.pack("<%df" % len(x), *x))
    for name, vals, shape in (("y1", y, (1, S, C)), ("y2", n, (1, S, C)), ("y3", q, (1, S, C)), ("y4", pres, (1, HK, T, D))):
        npy(out + "/attention23_%s.npy" % name, "<f4", shape, struct.pack("<%df" % len(vals), *vals))


def tensor_scatter(out):
    """TensorScatter (opset 24): a cache [2, 3, 5, 2] updated along axis 2 by [2, 3, 3, 2] from
    write indices 1 and 4, linear (y1: batch 1 writes up to the end) and circular (y2: batch
    1 wraps to positions 4, 0, 1); the results here."""
    B, H, L, D, N = 2, 3, 5, 2, 3
    past = rand(B * H * L * D, 171, 1.0)
    upd = rand(B * H * N * D, 172, 1.0)
    w = [1, 4]
    def scatter(circular, wv):
        y = list(past)
        for b in range(B):
            for h in range(H):
                for s in range(N):
                    p = wv[b] + s
                    if circular:
                        p %= L
                    if p >= L:
                        continue
                    for d in range(D):
                        y[((b * H + h) * L + p) * D + d] = upd[((b * H + h) * N + s) * D + d]
        return y
    y1, y2 = scatter(False, [1, 2]), scatter(True, w)
    nodes = [node("TensorScatter", ["x", "u", "w1"], ["y1"], "lin", axis=2),
             node("TensorScatter", ["x", "u", "w2"], ["y2"], "circ", axis=-2, mode="circular")]
    inits = [initializer("u", [B, H, N, D], upd), int_init("w1", [1, 2]), int_init("w2", w)]
    open(out + "/tensor_scatter.onnx", "wb").write(model(nodes, inits, [value_info("x", [B, H, L, D])],
                                                         [value_info("y1", [B, H, L, D]), value_info("y2", [B, H, L, D])], opset=24))
    npy(out + "/tensor_scatter_x.npy", "<f4", (B, H, L, D), struct.pack("<%df" % len(past), *past))
    npy(out + "/tensor_scatter_y1.npy", "<f4", (B, H, L, D), struct.pack("<%df" % len(y1), *y1))
    npy(out + "/tensor_scatter_y2.npy", "<f4", (B, H, L, D), struct.pack("<%df" % len(y2), *y2))


def float_types(out):
    """Models of float16, bfloat16 and double (held as f32 inside texc; docs/ONNX.md "Element
    types"). half.onnx: x float16 [2, 6] times W (float16, raw bytes) plus B (float16 as
    int32_data bits), y = Relu of it (float16), y2 = Sigmoid of it cast to float times a
    bfloat16 constant cast to float (float), y3 = y2 cast back to float16 at run time.
    double.onnx: y = Tanh(x W) in double, z = y cast to float. The results here, in double,
    rounded once to each output's type."""
    def half(v):
        return struct.unpack("<e", struct.pack("<e", v))[0]
    def bits16(v):
        return struct.unpack("<H", struct.pack("<e", v))[0]
    M, K, N = 2, 6, 4
    x = [half(v) for v in rand(M * K, 181, 2.0)]
    W = [half(v) for v in rand(K * N, 182, 1.0)]
    B = [half(v) for v in rand(N, 183, 0.5)]
    a = [sum(x[i * K + k] * W[k * N + j] for k in range(K)) + B[j] for i in range(M) for j in range(N)]
    y = [half(max(v, 0.0)) for v in a]
    y2 = [struct.unpack("<f", struct.pack("<f", 1.25 / (1 + math.exp(-v))))[0] for v in a]
    y3 = [half(v) for v in y2]
    bf = field(8, "c_bf") + ivar(2, 16) + field(9, struct.pack("<H", 0x3fa0))  # bfloat16 1.25, a scalar
    nodes = [node("MatMul", ["x", "W"], ["m"], "mm"), node("Add", ["m", "B"], ["a"], "add"),
             node("Relu", ["a"], ["y"], "relu"), node("Sigmoid", ["a"], ["s"], "sig"),
             node("Cast", ["s"], ["sf"], "to_f32", to=1), node("Cast", ["c_bf"], ["c"], "bf_to_f32", to=1),
             node("Mul", ["sf", "c"], ["y2"], "scale"), node("Cast", ["y2"], ["y3"], "to_f16", to=10)]
    inits = [b"".join(ivar(1, d) for d in (K, N)) + ivar(2, 10) + field(9, struct.pack("<%de" % len(W), *W)) + field(8, "W"),
             ivar(1, N) + ivar(2, 10) + field(5, b"".join(varint(bits16(v)) for v in B)) + field(8, "B"), bf]
    open(out + "/half.onnx", "wb").write(model(nodes, inits, [value_info("x", [M, K], 10)],
                                               [value_info("y", [M, N], 10), value_info("y2", [M, N]), value_info("y3", [M, N], 10)]))
    npy(out + "/half_x.npy", "<f2", (M, K), struct.pack("<%de" % len(x), *x))
    npy(out + "/half_y.npy", "<f2", (M, N), struct.pack("<%de" % len(y), *y))
    npy(out + "/half_y2.npy", "<f4", (M, N), struct.pack("<%df" % len(y2), *y2))
    npy(out + "/half_y3.npy", "<f2", (M, N), struct.pack("<%de" % len(y3), *y3))
    M, K, N = 3, 5, 2
    x = rand(M * K, 184, 1.0)
    W = rand(K * N, 185, 1.0)
    y = [math.tanh(sum(x[i * K + k] * W[k * N + j] for k in range(K))) for i in range(M) for j in range(N)]
    nodes = [node("MatMul", ["x", "W"], ["m"], "mm"), node("Tanh", ["m"], ["y"], "tanh"),
             node("Cast", ["y"], ["z"], "to_f32", to=1)]
    inits = [b"".join(ivar(1, d) for d in (K, N)) + ivar(2, 11) + field(9, struct.pack("<%dd" % len(W), *W)) + field(8, "W")]
    open(out + "/double.onnx", "wb").write(model(nodes, inits, [value_info("x", [M, K], 11)],
                                                 [value_info("y", [M, N], 11), value_info("z", [M, N])]))
    npy(out + "/double_x.npy", "<f8", (M, K), struct.pack("<%dd" % len(x), *x))
    npy(out + "/double_y.npy", "<f8", (M, N), struct.pack("<%dd" % len(y), *y))
    npy(out + "/double_z.npy", "<f4", (M, N), struct.pack("<%df" % len(y), *y))


def opset28(out):
    """Operators of opsets 26 to 28: CausalConvWithState (27) over a past state with SiLU, and
    its present state; SwiGLU (28) with alpha; CumProd (26), exclusive and reversed;
    SpaceToDepth's CRD mode (28); Mod of floats with fmod 0 (floor division's remainder, the
    divisor's sign, as opset 28 defines it). The results here."""
    B, C, L, K = 1, 4, 6, 3
    x = rand(B * C * L, 191, 1.0)
    w = rand(C * K, 192, 1.0)
    bias = rand(C, 193, 0.5)
    past = rand(B * C * (K - 1), 194, 1.0)
    u = rand(B * C * L, 195, 1.0)
    dv = [v if abs(v) > 0.1 else 0.5 for v in rand(B * C * L, 196, 2.0)]
    conv, state = [], []
    for c in range(C):
        seq = past[c * (K - 1):(c + 1) * (K - 1)] + x[c * L:(c + 1) * L]
        for t in range(L):
            v = bias[c] + sum(w[c * K + j] * seq[t + j] for j in range(K))
            conv.append(v / (1 + math.exp(-v)))
        state += seq[L:L + K - 1]
    swiglu = [a / (1 + math.exp(-1.5 * a)) * b for a, b in zip(x, u)]
    cumprod = []
    for c in range(C):
        row = x[c * L:(c + 1) * L]
        cumprod += [math.prod(row[t + 1:]) for t in range(L)]
    mod = [a - b * math.floor(a / b) for a, b in zip(x, dv)]
    H = W = 4
    x4 = rand(2 * H * W, 197, 1.0)  # [1, 2, 4, 4]
    s2d = [x4[(c // 4) * H * W + (2 * i + (c % 4) // 2) * W + 2 * j + c % 2] for c in range(8) for i in range(2) for j in range(2)]
    nodes = [node("CausalConvWithState", ["x", "w", "b", "past"], ["y1", "y2"], "conv", activation="silu"),
             node("SwiGLU", ["x", "u"], ["y3"], "swiglu", alpha=1.5),
             node("CumProd", ["x", "axis"], ["y4"], "cumprod", exclusive=1, reverse=1),
             node("SpaceToDepth", ["x4"], ["y5"], "s2d", blocksize=2, mode="CRD"),
             node("Mod", ["x", "dv"], ["y6"], "mod")]
    inits = [initializer("w", [C, 1, K], w), initializer("b", [C], bias), initializer("u", [B, C, L], u),
             int_init("axis", [2], shape=[]), initializer("dv", [B, C, L], dv)]
    outs = [("y1", [B, C, L], conv), ("y2", [B, C, K - 1], state), ("y3", [B, C, L], swiglu),
            ("y4", [B, C, L], cumprod), ("y5", [1, 8, 2, 2], s2d), ("y6", [B, C, L], mod)]
    open(out + "/opset28.onnx", "wb").write(model(nodes, inits, [value_info("x", [B, C, L]), value_info("past", [B, C, K - 1]),
                                                                 value_info("x4", [1, 2, H, W])],
                                                  [value_info(n, sh) for n, sh, _ in outs], opset=28))
    npy(out + "/opset28_x.npy", "<f4", (B, C, L), struct.pack("<%df" % len(x), *x))
    npy(out + "/opset28_past.npy", "<f4", (B, C, K - 1), struct.pack("<%df" % len(past), *past))
    npy(out + "/opset28_x4.npy", "<f4", (1, 2, H, W), struct.pack("<%df" % len(x4), *x4))
    for n, sh, v in outs:
        npy(out + "/opset28_%s.npy" % n, "<f4", sh, struct.pack("<%df" % len(v), *v))


def const_data(out):
    """Operators with no fold of constants, applied to a constant (a ViT's position embeddings
    resized, a LayerNormalization of a constant): each computes from the weight at run time (a
    call on weights alone: once at load). const_data_c.onnx applies them to an initializer C,
    const_data_x.onnx the same to the input X given C's values: their results must agree.
    Both add an input z (0) to every float result, for a graph with a run-time input."""
    N, C, H, W = 1, 4, 6, 6
    c = rand(N * C * H * W, 211, 1.0)
    ops = [("Resize", ["", "scales"], dict(mode="nearest"), [N, C, 2 * H, 2 * W]),
           ("Resize", ["", "scales"], dict(mode="linear"), [N, C, 2 * H, 2 * W]),
           ("LayerNormalization", ["ln_s", "ln_b"], dict(axis=-1), [N, C, H, W]),
           ("InstanceNormalization", ["in_s", "in_b"], {}, [N, C, H, W]),
           ("LRN", [], dict(size=3), [N, C, H, W]),
           ("Hardmax", [], dict(axis=-1), [N, C, H, W]),
           ("MeanVarianceNormalization", [], {}, [N, C, H, W]),
           ("DepthToSpace", [], dict(blocksize=2), [N, C // 4, 2 * H, 2 * W]),
           ("Tile", ["reps"], {}, [N, C, 2 * H, W]),
           ("Conv", ["cw"], dict(pads=[1, 1, 1, 1]), [N, 3, H, W]),
           ("ConvTranspose", ["tw"], dict(strides=[2, 2]), [N, 2, 2 * H + 1, 2 * W + 1]),
           ("Clip", ["lo", "hi"], {}, [N, C, H, W]),
           ("PRelu", ["slope"], {}, [N, C, H, W]),
           ("TopK", ["k"], dict(axis=-1), [N, C, H, 2]),
           ("ArgMax", [], dict(axis=-1), [N, C, H, 1])]
    inits = [initializer("scales", [4], [1.0, 1.0, 2.0, 2.0]), initializer("ln_s", [W], rand(W, 212, 1.0)),
             initializer("ln_b", [W], rand(W, 213, 1.0)), initializer("in_s", [C], rand(C, 214, 1.0)),
             initializer("in_b", [C], rand(C, 215, 1.0)), int_init("reps", [1, 1, 2, 1]),
             initializer("cw", [3, C, 3, 3], rand(3 * C * 9, 216, 0.5)), initializer("tw", [C, 2, 3, 3], rand(C * 18, 217, 0.5)),
             initializer("lo", [], [-0.5]), initializer("hi", [], [0.5]), initializer("slope", [C, 1, 1], rand(C, 218, 1.0)),
             int_init("k", [2])]
    for kind in ("c", "x"):
        nodes, outs = [], []
        for i, (op, rest, attrs, shape) in enumerate(ops):
            outputs = ["o%d" % i] + (["ix%d" % i] if op == "TopK" else [])
            nodes.append(node(op, ["src"] + rest, outputs, "n%d" % i, **attrs))
            if op == "ArgMax":
                outs.append(value_info("o%d" % i, shape, elem=7))
            else:
                nodes.append(node("Add", ["o%d" % i, "z"], ["y%d" % i], "a%d" % i))
                outs.append(value_info("y%d" % i, shape))
        ins = [value_info("z", [1])]
        more = []
        if kind == "c":
            more = [initializer("src", [N, C, H, W], c)]
        else:
            ins = [value_info("src", [N, C, H, W])] + ins
        open(out + "/const_data_%s.onnx" % kind, "wb").write(model(nodes, inits + more, ins, outs, opset=17))
    npy(out + "/const_data_src.npy", "<f4", (N, C, H, W), struct.pack("<%df" % len(c), *c))
    npy(out + "/const_data_z.npy", "<f4", (1,), struct.pack("<f", 0.0))


def col2im(out):
    """Col2Im (opset 18): blocks of 2 x 3 of 2 channels with strides, dilations and pads summed
    back into a 5 x 6 image; the result here."""
    N, C, H, W, KH, KW = 1, 2, 5, 6, 2, 3
    s, d, p = (1, 2), (2, 1), (1, 0, 0, 1)  # pads: top, left, bottom, right
    oh = (H + p[0] + p[2] - d[0] * (KH - 1) - 1) // s[0] + 1
    ow = (W + p[1] + p[3] - d[1] * (KW - 1) - 1) // s[1] + 1
    x = rand(N * C * KH * KW * oh * ow, 221, 1.0)
    y = [0.0] * (N * C * H * W)
    for c in range(C):
        for i in range(KH):
            for j in range(KW):
                for bh in range(oh):
                    for bw in range(ow):
                        yy, xx = bh * s[0] - p[0] + i * d[0], bw * s[1] - p[1] + j * d[1]
                        if 0 <= yy < H and 0 <= xx < W:
                            y[(c * H + yy) * W + xx] += x[((c * KH + i) * KW + j) * oh * ow + bh * ow + bw]
    nodes = [node("Col2Im", ["x", "image", "block"], ["y"], "c2i", strides=list(s), dilations=list(d), pads=list(p))]
    inits = [int_init("image", [H, W]), int_init("block", [KH, KW])]
    open(out + "/col2im.onnx", "wb").write(model(nodes, inits, [value_info("x", [N, C * KH * KW, oh * ow])],
                                                 [value_info("y", [N, C, H, W])], opset=18))
    npy(out + "/col2im_x.npy", "<f4", (N, C * KH * KW, oh * ow), struct.pack("<%df" % len(x), *x))
    npy(out + "/col2im_y.npy", "<f4", (N, C, H, W), struct.pack("<%df" % len(y), *y))


def if_const(out):
    """If whose condition shape arithmetic decides at import (Size(x) > 4: true): the then
    branch (Relu of the outer x, times a constant of the branch's own) imported in place,
    the else branch (Neg) never; y = the If's output plus 1."""
    x = rand(6, 198, 1.0)
    def graph(name, nodes, inits, outs):
        return (b"".join(field(1, n) for n in nodes) + field(2, name) + b"".join(field(5, t) for t in inits) +
                b"".join(field(12, v) for v in outs))
    then_g = graph("then", [node("Relu", ["x"], ["r"], "relu"), node("Mul", ["r", "three"], ["t_out"], "mul")],
                   [initializer("three", [], [3.0])], [value_info("t_out", [2, 3])])
    else_g = graph("else", [node("Neg", ["x"], ["e_out"], "neg")], [], [value_info("e_out", [2, 3])])
    branch = lambda name, g: field(1, name) + field(6, g) + ivar(20, 5)  # a GRAPH attribute
    if_node = (field(1, "c") + field(2, "z") + field(3, "if") + field(4, "If") + field(5, branch("then_branch", then_g)) +
               field(5, branch("else_branch", else_g)))
    nodes = [node("Size", ["x"], ["n"], "size"), node("Greater", ["n", "four"], ["c"], "gt"), if_node,
             node("Add", ["z", "one"], ["y"], "add")]
    inits = [int_init("four", [4], shape=[]), initializer("one", [], [1.0])]
    open(out + "/if_const.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 3])], [value_info("y", [2, 3])]))
    # the condition a run-time input (bool [1]): both branches computed, one kept
    open(out + "/if_runtime.onnx", "wb").write(model([if_node], [], [value_info("x", [2, 3]), value_info("c", [1], 9)],
                                                     [value_info("z", [2, 3])]))
    npy(out + "/if_runtime_c1.npy", "|u1", (1,), b"\x01")
    npy(out + "/if_runtime_c0.npy", "|u1", (1,), b"\x00")
    npy(out + "/if_runtime_z1.npy", "<f4", (2, 3), struct.pack("<6f", *[3 * max(v, 0.0) for v in x]))
    npy(out + "/if_runtime_z0.npy", "<f4", (2, 3), struct.pack("<6f", *[-v for v in x]))
    y = [3 * max(v, 0.0) + 1 for v in x]
    npy(out + "/if_const_x.npy", "<f4", (2, 3), struct.pack("<6f", *x))
    npy(out + "/if_const_y.npy", "<f4", (2, 3), struct.pack("<6f", *y))


def recurrences(out):
    """Scan (unrolled at import) and LinearAttention (27). scan.onnx: a state s [2] and two
    scan inputs, x [4, 2] along axis 0 and y [2, 4] along axis 1 read backwards; the body
    (s' = s + x_t y_t, z_t = s', w_t = x_t - y_t) reads an outer constant; z stacked along
    axis 0, w along axis 1 in reverse. linear_attention.onnx: the gated delta rule with 4
    query heads over 2 key / value heads, a per-head decay, per-head beta and a past state,
    3 tokens; its output and present state. The results here."""
    T = 4
    x = rand(T * 2, 201, 1.0)
    y = rand(2 * T, 202, 1.0)
    st = [0.5, -0.25]
    zs, ws = [], []
    for t in range(T):
        yt = [y[0 * T + (T - 1 - t)], y[1 * T + (T - 1 - t)]]
        st = [st[i] + x[t * 2 + i] * yt[i] * 2.0 for i in range(2)]
        zs.append(list(st))
        ws.append([x[t * 2 + i] - yt[i] for i in range(2)])
    z = [v for row in zs for v in row]
    w = [ws[T - 1 - t][i] for i in range(2) for t in range(T)]  # [2, T]: reversed along axis 1
    def graph(name, nodes, inits, ins, outs):
        return (b"".join(field(1, n) for n in nodes) + field(2, name) + b"".join(field(5, t) for t in inits) +
                b"".join(field(11, v) for v in ins) + b"".join(field(12, v) for v in outs))
    body = graph("body", [node("Mul", ["xt", "yt"], ["p"], "mul"), node("Mul", ["p", "two"], ["p2"], "mul2"),
                          node("Add", ["s", "p2"], ["s2"], "add"), node("Identity", ["s2"], ["zt"], "id"),
                          node("Sub", ["xt", "yt"], ["wt"], "sub")], [],
                 [value_info("s", [2]), value_info("xt", [2]), value_info("yt", [2])],
                 [value_info("s2", [2]), value_info("zt", [2]), value_info("wt", [2])])
    scan = (field(1, "s0") + field(1, "x") + field(1, "y") + field(2, "sT") + field(2, "z") + field(2, "w") +
            field(3, "scan") + field(4, "Scan") + field(5, field(1, "body") + field(6, body) + ivar(20, 5)) +
            field(5, attr("num_scan_inputs", 2)) + field(5, attr("scan_input_axes", [0, 1])) +
            field(5, attr("scan_input_directions", [0, 1])) + field(5, attr("scan_output_axes", [0, 1])) +
            field(5, attr("scan_output_directions", [0, 1])))
    open(out + "/scan.onnx", "wb").write(model([scan], [initializer("s0", [2], [0.5, -0.25]), initializer("two", [], [2.0])],
                                               [value_info("x", [T, 2]), value_info("y", [2, T])],
                                               [value_info("sT", [2]), value_info("z", [T, 2]), value_info("w", [2, T])], opset=16))
    npy(out + "/scan_x.npy", "<f4", (T, 2), struct.pack("<8f", *x))
    npy(out + "/scan_y.npy", "<f4", (2, T), struct.pack("<8f", *y))
    npy(out + "/scan_sT.npy", "<f4", (2,), struct.pack("<2f", *st))
    npy(out + "/scan_z.npy", "<f4", (T, 2), struct.pack("<8f", *z))
    npy(out + "/scan_w.npy", "<f4", (2, T), struct.pack("<8f", *w))
    B, T, HQ, HKV, DK, DV = 1, 3, 4, 2, 3, 2
    q = rand(B * T * HQ * DK, 203, 1.0)
    k = rand(B * T * HKV * DK, 204, 0.5)
    v = rand(B * T * HKV * DV, 205, 1.0)
    g = [-abs(a) for a in rand(B * T * HKV, 206, 0.5)]
    be = [0.5 + 0.5 * a for a in rand(B * T * HKV, 207, 0.9)]
    past = rand(B * HKV * DK * DV, 208, 0.5)
    S = [[[past[(h * DK + i) * DV + j] for j in range(DV)] for i in range(DK)] for h in range(HKV)]
    o = []
    for t in range(T):
        for h in range(HKV):
            d = math.exp(g[t * HKV + h])
            kt = [k[t * HKV * DK + h * DK + i] for i in range(DK)]
            vt = [v[t * HKV * DV + h * DV + j] for j in range(DV)]
            Sd = [[d * S[h][i][j] for j in range(DV)] for i in range(DK)]
            u = [sum(Sd[i][j] * kt[i] for i in range(DK)) for j in range(DV)]
            b_ = be[t * HKV + h]
            S[h] = [[Sd[i][j] + b_ * kt[i] * (vt[j] - u[j]) for j in range(DV)] for i in range(DK)]
        for hq in range(HQ):
            h = hq // (HQ // HKV)
            qt = [q[t * HQ * DK + hq * DK + i] for i in range(DK)]
            o += [sum(qt[i] * S[h][i][j] for i in range(DK)) / math.sqrt(DK) for j in range(DV)]
    present = [S[h][i][j] for h in range(HKV) for i in range(DK) for j in range(DV)]
    la = node("LinearAttention", ["q", "k", "v", "past", "g", "beta"], ["o", "present"], "la", q_num_heads=HQ, kv_num_heads=HKV)
    inits = [initializer("k", [B, T, HKV * DK], k), initializer("v", [B, T, HKV * DV], v), initializer("g", [B, T, HKV], g),
             initializer("beta", [B, T, HKV], be)]
    open(out + "/linear_attention.onnx", "wb").write(model([la], inits, [value_info("q", [B, T, HQ * DK]), value_info("past", [B, HKV, DK, DV])],
                                                           [value_info("o", [B, T, HQ * DV]), value_info("present", [B, HKV, DK, DV])], opset=27))
    npy(out + "/linear_attention_q.npy", "<f4", (B, T, HQ * DK), struct.pack("<%df" % len(q), *q))
    npy(out + "/linear_attention_past.npy", "<f4", (B, HKV, DK, DV), struct.pack("<%df" % len(past), *past))
    npy(out + "/linear_attention_o.npy", "<f4", (B, T, HQ * DV), struct.pack("<%df" % len(o), *o))
    npy(out + "/linear_attention_present.npy", "<f4", (B, HKV, DK, DV), struct.pack("<%df" % len(present), *present))


def loop(out):
    """Loop unrolled at import: M = 5 iterations, but the body's condition (iter < 2, folded)
    stops it after 3; the body doubles the state x [2, 3] and adds the iteration number,
    its scan output is the state each iteration (stacked along a new first axis). The
    results here. loop_runtime.onnx: a condition that depends on x (refused by name)."""
    x = rand(6, 209, 1.0)
    def graph(name, nodes, inits, ins, outs):
        return (b"".join(field(1, n) for n in nodes) + field(2, name) + b"".join(field(5, t) for t in inits) +
                b"".join(field(11, v) for v in ins) + b"".join(field(12, v) for v in outs))
    def the_loop(cond_nodes):
        body = graph("body", cond_nodes + [node("Cast", ["i"], ["fi"], "cast", to=1), node("Mul", ["s", "two"], ["d"], "mul"),
                                           node("Add", ["d", "fi"], ["s2"], "add"), node("Identity", ["s2"], ["each"], "id")],
                     [], [value_info("i", [], 7), value_info("c", [], 9), value_info("s", [2, 3])],
                     [value_info("c2", [], 9), value_info("s2", [2, 3]), value_info("each", [2, 3])])
        return (field(1, "M") + field(1, "") + field(1, "x") + field(2, "y") + field(2, "ys") + field(3, "loop") +
                field(4, "Loop") + field(5, field(1, "body") + field(6, body) + ivar(20, 5)))
    stop = [node("Less", ["i", "two_i"], ["c2"], "less")]
    inits = [int_init("M", [5], shape=[]), initializer("two", [], [2.0]), int_init("two_i", [2], shape=[])]
    open(out + "/loop.onnx", "wb").write(model([the_loop(stop)], inits, [value_info("x", [2, 3])],
                                               [value_info("y", [2, 3]), value_info("ys", [3, 2, 3])], opset=16))
    st, ys = list(x), []
    for i in range(3):
        st = [2 * v + i for v in st]
        ys += st
    npy(out + "/loop_x.npy", "<f4", (2, 3), struct.pack("<6f", *x))
    npy(out + "/loop_y.npy", "<f4", (2, 3), struct.pack("<6f", *st))
    npy(out + "/loop_ys.npy", "<f4", (3, 2, 3), struct.pack("<18f", *ys))
    data_cond = [node("ReduceSum", ["s"], ["sum"], "sum", keepdims=0), node("Less", ["sum", "two"], ["c2"], "less")]
    open(out + "/loop_runtime.onnx", "wb").write(model([the_loop(data_cond)], inits, [value_info("x", [2, 3])],
                                                       [value_info("y", [2, 3]), value_info("ys", [3, 2, 3])], opset=16))


def sequences(out):
    """A list built in a loop, as TorchScript exports `outs.append(h)` (SequenceEmpty, a Loop
    carrying the sequence, SequenceInsert in its body, ConcatFromSequence after), unrolled
    at import: the sequence's tensors are known there. y = the 3 states stacked (new_axis
    1), z = SequenceAt -1 of it plus its SequenceLength, w = the states concatenated along
    axis 1 after SequenceErase of the first, v = x's columns (SplitToSequence, keepdims 0)
    stacked again (x transposed). The results here."""
    x = rand(4, 211, 1.0)
    def graph(name, nodes, inits, ins, outs):
        return (b"".join(field(1, n) for n in nodes) + field(2, name) + b"".join(field(5, t) for t in inits) +
                b"".join(field(11, v) for v in ins) + b"".join(field(12, v) for v in outs))
    seq_type = lambda name: field(1, name) + field(2, field(4, field(1, field(1, ivar(1, 1)))))  # sequence(tensor(float))
    body = graph("body", [node("Cast", ["i"], ["fi"], "cast", to=1), node("Add", ["fi", "one"], ["f1"], "add"),
                          node("Mul", ["h", "f1"], ["hm"], "mul"), node("Tanh", ["hm"], ["h2"], "tanh"),
                          node("SequenceInsert", ["sq", "h2"], ["sq2"], "insert"), node("Identity", ["c"], ["c2"], "id")],
                 [], [value_info("i", [], 7), value_info("c", [], 9), value_info("h", [2, 2]), seq_type("sq")],
                 [value_info("c2", [], 9), value_info("h2", [2, 2]), seq_type("sq2")])
    loop = (field(1, "M") + field(1, "") + field(1, "x") + field(1, "empty") + field(2, "hT") + field(2, "list") +
            field(3, "loop") + field(4, "Loop") + field(5, field(1, "body") + field(6, body) + ivar(20, 5)))
    nodes = [node("SequenceEmpty", [], ["empty"], "empty"), loop,
             node("ConcatFromSequence", ["list"], ["y"], "stack", axis=0, new_axis=1),
             node("SequenceAt", ["list", "minus1"], ["last"], "at"), node("SequenceLength", ["list"], ["n"], "len"),
             node("Cast", ["n"], ["fn"], "castn", to=1), node("Add", ["last", "fn"], ["z"], "addn"),
             node("SequenceErase", ["list", "zero"], ["rest"], "erase"),
             node("ConcatFromSequence", ["rest"], ["w"], "cat", axis=1),
             node("SplitToSequence", ["x"], ["cols"], "split", axis=1, keepdims=0),
             node("ConcatFromSequence", ["cols"], ["v"], "restack", axis=0, new_axis=1)]
    inits = [int_init("M", [3], shape=[]), initializer("one", [], [1.0]), int_init("minus1", [-1], shape=[]),
             int_init("zero", [0], shape=[])]
    open(out + "/sequences.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 2])],
                                                    [value_info("y", [3, 2, 2]), value_info("z", [2, 2]), value_info("w", [2, 4]),
                                                     value_info("v", [2, 2])],
                                                    opset=16))
    h, hs = list(x), []
    for i in range(3):
        h = [math.tanh(v * (i + 1)) for v in h]
        hs.append(h)
    y = [v for st in hs for v in st]
    z = [v + 3 for v in hs[2]]
    w = [hs[k][r * 2 + c] for r in range(2) for k in (1, 2) for c in range(2)]
    npy(out + "/sequences_x.npy", "<f4", (2, 2), struct.pack("<4f", *x))
    npy(out + "/sequences_y.npy", "<f4", (3, 2, 2), struct.pack("<12f", *y))
    npy(out + "/sequences_z.npy", "<f4", (2, 2), struct.pack("<4f", *z))
    npy(out + "/sequences_w.npy", "<f4", (2, 4), struct.pack("<8f", *w))
    npy(out + "/sequences_v.npy", "<f4", (2, 2), struct.pack("<4f", x[0], x[2], x[1], x[3]))  # x's columns stacked: x^T


def decoder_step(out):
    """A decoder's step with a static key / value cache (opset 24), as a fixed-shape library
    runs it per token: the token's keys and values written into [1, 2, 6, 4] caches at
    position `pos` (TensorScatter), then Attention over the cache with nonpad_kv_seqlen =
    pos + 1 and causal masking (its frontier pos). pos = 3 (given as a file: an int64 input);
    the caches hold three earlier positions and stale values after them (y1: [1, 2, 1, 4],
    y2: the new key cache); the results here."""
    C, H, D, L, pos = 8, 2, 4, 6, 3
    x = rand(C, 181, 1.0)
    wk, wv, wq = rand(C * H * D, 182, 0.5), rand(C * H * D, 183, 0.5), rand(C * H * D, 184, 0.5)
    kc, vc = rand(H * L * D, 185, 1.0), rand(H * L * D, 186, 1.0)
    proj = lambda w: [sum(x[c] * w[c * H * D + o] for c in range(C)) for o in range(H * D)]
    k, v, q = proj(wk), proj(wv), proj(wq)
    kn, vn = list(kc), list(vc)
    for h in range(H):
        for d in range(D):
            kn[(h * L + pos) * D + d], vn[(h * L + pos) * D + d] = k[h * D + d], v[h * D + d]
    import math
    y = []
    for h in range(H):
        sc = [sum(q[h * D + d] * kn[(h * L + j) * D + d] for d in range(D)) / math.sqrt(D) for j in range(pos + 1)]
        m = max(sc)
        e = [math.exp(t - m) for t in sc]
        y += [sum(e[j] / sum(e) * vn[(h * L + j) * D + d] for j in range(pos + 1)) for d in range(D)]
    nodes = [node("MatMul", ["x", "wk"], ["k"], "k"), node("MatMul", ["x", "wv"], ["v"], "v"), node("MatMul", ["x", "wq"], ["q"], "q"),
             node("Reshape", ["k", "s4"], ["kr"], "kr"), node("Transpose", ["kr"], ["k4"], "kt", perm=[0, 2, 1, 3]),
             node("Reshape", ["v", "s4"], ["vr"], "vr"), node("Transpose", ["vr"], ["v4"], "vt", perm=[0, 2, 1, 3]),
             node("Reshape", ["q", "s4"], ["qr"], "qr"), node("Transpose", ["qr"], ["q4"], "qt", perm=[0, 2, 1, 3]),
             node("TensorScatter", ["kc", "k4", "pos"], ["y2"], "kw", axis=2), node("TensorScatter", ["vc", "v4", "pos"], ["vw"], "vw", axis=2),
             node("Add", ["pos", "one"], ["n"], "n"),
             node("Attention", ["q4", "y2", "vw", "", "", "", "n"], ["y1"], "att", is_causal=1)]
    inits = [initializer("wk", [C, H * D], wk), initializer("wv", [C, H * D], wv), initializer("wq", [C, H * D], wq),
             initializer("kc", [1, H, L, D], kc), initializer("vc", [1, H, L, D], vc), int_init("s4", [1, 1, H, D]), int_init("one", [1])]
    open(out + "/decoder_step.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 1, C]), value_info("pos", [1], 7)],
                                                       [value_info("y1", [1, H, 1, D]), value_info("y2", [1, H, L, D])], opset=24))
    npy(out + "/decoder_step_x.npy", "<f4", (1, 1, C), struct.pack("<%df" % C, *x))
    npy(out + "/decoder_step_pos.npy", "<i8", (1,), struct.pack("<q", pos))
    npy(out + "/decoder_step_y1.npy", "<f4", (1, H, 1, D), struct.pack("<%df" % len(y), *y))
    npy(out + "/decoder_step_y2.npy", "<f4", (1, H, L, D), struct.pack("<%df" % len(kn), *kn))

def reduce_scalar(out):
    """A full reduction of a constant without keepdims is a scalar (rank 0), which Unsqueeze
    makes [1] (torchvision's detection transform computes its padding so: Concat of [1]
    pieces); it was folded as [1], and the Concat refused ranks 1 and 2. y = x + [0, 320]."""
    nodes = [node("ReduceMax", ["c"], ["m"], "max", keepdims=0), node("Cast", ["m"], ["mi"], "cast", to=7),
             node("Unsqueeze", ["mi", "ax"], ["u"], "unsq"), node("Concat", ["z", "u"], ["p"], "cat", axis=0),
             node("Cast", ["p"], ["pf"], "castf", to=1), node("Add", ["x", "pf"], ["y"], "add")]
    inits = [initializer("c", [1], [320.0]), int_init("ax", [0]), int_init("z", [0])]
    open(out + "/reduce_scalar.onnx", "wb").write(model(nodes, inits, [value_info("x", [2])], [value_info("y", [2])]))
    npy(out + "/reduce_scalar_x.npy", "<f4", (2,), struct.pack("<2f", 1.0, 2.0))
    npy(out + "/reduce_scalar_y.npy", "<f4", (2,), struct.pack("<2f", 1.0, 322.0))


def gather_clip(out):
    """Run-time int64 ids clamped by Clip, then the rows of an embedding they index (LayoutLMv3's
    position embeddings of its boxes): a Clip of integers is integers; its result was floats,
    which Gather refused as indices. The result here."""
    V, D = 10, 2
    w = rand(V * D, 231, 1.0)
    ids = [-5, 3, 12, 0, 9, 7]
    y = [w[min(max(i, 0), V - 1) * D + d] for i in ids for d in range(D)]
    nodes = [node("Clip", ["ids", "lo", "hi"], ["c"], "clip"), node("Gather", ["w", "c"], ["y"], "gather")]
    inits = [initializer("w", [V, D], w), int_init("lo", [0], shape=[]), int_init("hi", [V - 1], shape=[])]
    open(out + "/gather_clip.onnx", "wb").write(model(nodes, inits, [value_info("ids", [1, 6], 7)], [value_info("y", [1, 6, D])]))
    npy(out + "/gather_clip_ids.npy", "<i8", (1, 6), struct.pack("<6q", *ids))
    npy(out + "/gather_clip_y.npy", "<f4", (1, 6, D), struct.pack("<%df" % len(y), *y))


def growing(out):
    """A decoder's step with a cache that grows by a position each token (a Concat, as
    exporters write a KV cache with a dynamic length `past`): present = past and x, y their
    mean over the positions. tests/suites/deploy.sh builds one library of the sizes past =
    1..5 and feeds each step's present back as the next one's past."""
    D = 3
    nodes = [node("Concat", ["past", "x"], ["present"], "cat", axis=1),
             node("ReduceMean", ["present"], ["y"], "mean", axes=[1], keepdims=1)]
    open(out + "/growing.onnx", "wb").write(model(nodes, [], [value_info("x", [1, 1, D]), value_info("past", [1, "past", D])],
                                                  [value_info("y", [1, 1, D]), value_info("present", [1, "total", D])]))


def se_mean(out):
    """A squeeze-excitation's mean: ReduceMean over H and W of a Conv's output (channels
    last inside), keepdims 1 then Mul back onto it (y1), and keepdims 0 (y2, [N, C]):
    reduced in place, not turned to NCHW first; the results here."""
    C, H, W = 3, 4, 5
    x = rand(C * H * W, 151, 1.0)
    wc = rand(C * C, 152, 0.7)
    c = [sum(wc[o * C + i] * x[(i * H + h) * W + w] for i in range(C)) for o in range(C) for h in range(H) for w in range(W)]
    m = [sum(c[ch * H * W:(ch + 1) * H * W]) / (H * W) for ch in range(C)]
    y1 = [c[ch * H * W + k] * m[ch] for ch in range(C) for k in range(H * W)]
    nodes = [node("Conv", ["x", "wc"], ["c"], "conv", kernel_shape=[1, 1]),
             node("ReduceMean", ["c"], ["m"], "mean", axes=[2, 3], keepdims=1), node("Mul", ["c", "m"], ["y1"], "scale"),
             node("ReduceMean", ["c"], ["y2"], "mean2", axes=[-1, -2], keepdims=0)]
    open(out + "/se_mean.onnx", "wb").write(model(nodes, [initializer("wc", [C, C, 1, 1], wc)], [value_info("x", [1, C, H, W])],
                                                  [value_info("y1", [1, C, H, W]), value_info("y2", [1, C])]))
    npy(out + "/se_mean_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/se_mean_y1.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(y1), *y1))
    npy(out + "/se_mean_y2.npy", "<f4", (1, C), struct.pack("<%df" % len(m), *m))


def convtr3d(out):
    """A 3-D ConvTranspose (3-D U-Nets' upsampling) with strides, pads, output_padding and a
    bias; the result here."""
    CI, CO, D, H, W, K = 2, 3, 2, 3, 2, 3
    st, pb, pe, opad = (2, 1, 2), (1, 0, 1), (0, 1, 1), (1, 0, 1)
    x = rand(CI * D * H * W, 111, 1.0)
    w = rand(CI * CO * K * K * K, 112, 0.5)  # [CI, CO, K, K, K]
    bias = rand(CO, 113, 0.5)
    dims = (D, H, W)
    osz = [st[i] * (dims[i] - 1) + opad[i] + K - pb[i] - pe[i] for i in range(3)]
    od, oh, ow = osz
    y = [bias[co] for co in range(CO) for _ in range(od * oh * ow)]
    for ci in range(CI):
        for z in range(D):
            for yy in range(H):
                for xx in range(W):
                    v = x[((ci * D + z) * H + yy) * W + xx]
                    for co in range(CO):
                        for a in range(K):
                            for b_ in range(K):
                                for c_ in range(K):
                                    tz, ty, tx = z * st[0] + a - pb[0], yy * st[1] + b_ - pb[1], xx * st[2] + c_ - pb[2]
                                    if 0 <= tz < od and 0 <= ty < oh and 0 <= tx < ow:
                                        y[((co * od + tz) * oh + ty) * ow + tx] += v * w[(((ci * CO + co) * K + a) * K + b_) * K + c_]
    nodes = [node("ConvTranspose", ["x", "w", "b"], ["y"], "convtr3d", strides=list(st), pads=list(pb + pe), output_padding=list(opad))]
    inits = [initializer("w", [CI, CO, K, K, K], w), initializer("b", [CO], bias)]
    oshape = [1, CO] + osz
    open(out + "/convtr3d.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, CI, D, H, W])], [value_info("y", oshape)]))
    npy(out + "/convtr3d_x.npy", "<f4", (1, CI, D, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/convtr3d_ref.npy", "<f4", tuple(oshape), struct.pack("<%df" % len(y), *y))


def scatter(out):
    """ScatterND (rows replaced), ScatterElements along axis 1 with duplicate indices and
    reduction add, and along axis 0 (none), with constant indices; the result here."""
    x = rand(3 * 4, 61, 1.0)  # [3, 4]
    u1 = rand(2 * 4, 62, 1.0)  # rows for indices [[2], [0]]
    u2 = rand(2 * 3, 63, 1.0)  # [2, 3], indices [[1, 0, 3], [1, 1, 2]] on axis 1, add
    u3 = rand(2, 64, 1.0)  # [2, 1], indices [[0], [2]] on axis 0
    a = [row[:] for row in [x[0:4], x[4:8], x[8:12]]]
    a[2], a[0] = u1[0:4], u1[4:8]
    ix2 = [[1, 0, 3], [1, 1, 2]]
    for i in range(2):
        for j in range(3):
            a[i][ix2[i][j]] += u2[i * 3 + j]
    for i, r in enumerate([0, 2]):  # along axis 0: a[ix3[i][0]][0] = u3[i][0]
        a[r][0] = u3[i]
    ref = [v for row in a for v in row]
    nodes = [node("ScatterND", ["x", "ix1", "u1"], ["a"], "snd"),
             node("ScatterElements", ["a", "ix2", "u2"], ["b"], "se_add", axis=1, reduction="add"),
             node("ScatterElements", ["b", "ix3", "u3"], ["y"], "se")]
    inits = [int_init("ix1", [2, 0], [2, 1]), initializer("u1", [2, 4], u1), int_init("ix2", [1, 0, 3, 1, 1, 2], [2, 3]),
             initializer("u2", [2, 3], u2), int_init("ix3", [0, 2], [2, 1]), initializer("u3", [2, 1], u3)]
    open(out + "/scatter.onnx", "wb").write(model(nodes, inits, [value_info("x", [3, 4])], [value_info("y", [3, 4])], opset=16))
    npy(out + "/scatter_x.npy", "<f4", (3, 4), struct.pack("<12f", *x))
    npy(out + "/scatter_ref.npy", "<f4", (3, 4), struct.pack("<12f", *ref))
    # Into constants (Swin's shifted-window mask: slice assignments into zeros): all three
    # constant, folded (ScatterND, then ScatterElements with reduction add into its result);
    # constant data with run-time updates (x's rows, swapped into zeros); y = x + m + s.
    z = [0.0] * 12
    m = [v for v in z]
    for r, val in [(0, 5.0), (2, -1.0)]:  # ScatterND rows [[0], [2]] <- 5, -1
        m[r * 4:r * 4 + 4] = [val] * 4
    m2 = m[:]
    ix_e = [[3, 3, 0], [0, 1, 2], [1, 1, 1]]
    up_e = [[2.0, 0.5, 1.5], [1.0, 1.0, 1.0], [0.25, 0.25, 0.25]]
    for i in range(3):
        for j in range(3):
            m2[i * 4 + ix_e[i][j]] += up_e[i][j]
    sw = x[8:12] + x[4:8] + x[0:4]  # ScatterND of x's rows into zeros at [[2], [1], [0]]
    ref_c = [x[i] + m2[i] + sw[i] for i in range(12)]
    nodes = [node("ScatterND", ["zeros", "ixc", "uc"], ["m"], "snd_const"),
             node("ScatterElements", ["m", "ixe", "ue"], ["m2"], "se_const", axis=1, reduction="add"),
             node("ScatterND", ["zeros", "ixs", "x"], ["sw"], "snd_rows"),
             node("Add", ["x", "m2"], ["t"], "add1"), node("Add", ["t", "sw"], ["y"], "add2")]
    inits = [initializer("zeros", [3, 4], z), int_init("ixc", [0, 2], [2, 1]),
             initializer("uc", [2, 4], [5.0] * 4 + [-1.0] * 4),
             int_init("ixe", [v for row in ix_e for v in row], [3, 3]),
             initializer("ue", [3, 3], [v for row in up_e for v in row]), int_init("ixs", [2, 1, 0], [3, 1])]
    open(out + "/scatter_const.onnx", "wb").write(model(nodes, inits, [value_info("x", [3, 4])], [value_info("y", [3, 4])], opset=16))
    npy(out + "/scatter_const_x.npy", "<f4", (3, 4), struct.pack("<12f", *x))
    npy(out + "/scatter_const_ref.npy", "<f4", (3, 4), struct.pack("<12f", *ref_c))


def multi(out):
    """A graph of five outputs: a Conv's Relu (channels last inside, so converted back to
    NCHW), its global average, the input itself (an Identity: a copy), and the two halves of
    a Split of the Relu (a node's second output)."""
    x = rand(18, 41, 1.0)
    w, b = [0.5, -1.0, 0.75, 0.25], [0.1, -0.2]
    r = [max(0.0, b[o] + w[2 * o] * x[p] + w[2 * o + 1] * x[9 + p]) for o in range(2) for p in range(9)]
    gp = [sum(r[9 * o:9 * o + 9]) / 9 for o in range(2)]
    nodes = [node("Conv", ["x", "w", "b"], ["c"], "conv", kernel_shape=[1, 1]), node("Relu", ["c"], ["r"], "relu"),
             node("GlobalAveragePool", ["r"], ["gp"], "gap"), node("Identity", ["x"], ["xi"], "id"),
             node("Split", ["r"], ["r0", "r1"], "split", axis=1)]
    outs = [("r", [1, 2, 3, 3], r), ("gp", [1, 2, 1, 1], gp), ("xi", [1, 2, 3, 3], x), ("r0", [1, 1, 3, 3], r[:9]),
            ("r1", [1, 1, 3, 3], r[9:])]
    inits = [initializer("w", [2, 2, 1, 1], w), initializer("b", [2], b)]
    open(out + "/multi.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 2, 3, 3])],
                                                 [value_info(n, sh) for n, sh, _ in outs]))
    npy(out + "/multi_x.npy", "<f4", (1, 2, 3, 3), struct.pack("<18f", *x))
    for n, sh, v in outs:
        npy(out + "/multi_%s.npy" % n, "<f4", tuple(sh), struct.pack("<%df" % len(v), *v))


def embed(out):
    """Token ids (int64, one negative) into an embedding (Gather), through an Unsqueeze too;
    an int64 attention mask cast to bool, unsqueezed (a mask moved) and used by Where, and
    cast to float and multiplied: the integer inputs stay run-time parameters."""
    V, D = 6, 3
    table = rand(V * D, 53, 1.0)
    ids, mask = [0, 5, -1, 2], [1, 1, 0, 1]
    row = lambda i: table[(i % V) * D:(i % V) * D + D]
    y = [v if mask[s] else -1.0 for s in range(4) for v in row(ids[s])]
    z = [v * mask[s] for s in range(4) for v in row(ids[s])]
    nodes = [node("Gather", ["table", "ids"], ["e"], "embed"), node("Cast", ["mask"], ["m"], "to_bool", to=9),
             node("Unsqueeze", ["m", "ax2"], ["mu"], "unsq"), node("Where", ["mu", "e", "neg"], ["y"], "where"),
             node("Unsqueeze", ["ids", "ax0"], ["ids0"], "unsq_ids"), node("Gather", ["table", "ids0"], ["e0"], "embed0"),
             node("Cast", ["mask"], ["mf"], "to_float", to=1), node("Unsqueeze", ["mf", "ax0"], ["mf0"], "unsq_mf"),
             node("Unsqueeze", ["mf0", "ax3"], ["mf1"], "unsq_mf1"), node("Mul", ["e0", "mf1"], ["z"], "mul")]
    inits = [initializer("table", [V, D], table), int_init("ax2", [2]), int_init("ax0", [0]), int_init("ax3", [3]),
             initializer("neg", [], [-1.0])]
    open(out + "/embed.onnx", "wb").write(model(nodes, inits, [value_info("ids", [1, 4], 7), value_info("mask", [1, 4], 7)],
                                                 [value_info("y", [1, 4, D]), value_info("z", [1, 1, 4, D])]))
    npy(out + "/embed_ids.npy", "<i8", (1, 4), struct.pack("<4q", *ids))
    npy(out + "/embed_mask.npy", "<i8", (1, 4), struct.pack("<4q", *mask))
    npy(out + "/embed_y.npy", "<f4", (1, 4, D), struct.pack("<12f", *y))
    npy(out + "/embed_z.npy", "<f4", (1, 1, 4, D), struct.pack("<12f", *z))


def external(out):
    """Initializers in a data file beside the model (what PyTorch's dynamo exporter writes:
    data_location EXTERNAL, `location`, `offset`, `length`): y = relu(x * w + b); and bad
    variants: the data file missing, too short, or named outside the model's folder."""
    w, b = [0.5, -1.0, 2.0, 0.25, 3.0, -2.0], [0.1, -0.2, 0.3]
    data = struct.pack("<6f", *w) + b"\0" * 8 + struct.pack("<3f", *b)  # b at offset 32

    def ext(name, shape, off, n, loc="ext.onnx.data"):
        entries = [("location", loc), ("offset", str(off)), ("length", str(4 * n))]
        return (b"".join(ivar(1, d) for d in shape) + ivar(2, 1) + field(8, name) +
                b"".join(field(13, field(1, k) + field(2, v)) for k, v in entries) + ivar(14, 1))

    nodes = [node("Mul", ["x", "w"], ["t"], "mul"), node("Add", ["t", "b"], ["u"], "add"), node("Relu", ["u"], ["y"], "relu")]
    io = ([value_info("x", [2, 3])], [value_info("y", [2, 3])])
    open(out + "/ext.onnx", "wb").write(model(nodes, [ext("w", [2, 3], 0, 6), ext("b", [3], 32, 3)], *io))
    open(out + "/ext.onnx.data", "wb").write(data)
    x = [1, -2, 3, -4, 5, -6]
    y = [max(0.0, x[i] * w[i] + b[i % 3]) for i in range(6)]
    npy(out + "/ext_ref.npy", "<f4", (2, 3), struct.pack("<6f", *y))
    open(out + "/ext_missing.onnx", "wb").write(model(nodes, [ext("w", [2, 3], 0, 6, "nowhere.data"), ext("b", [3], 32, 3)], *io))
    open(out + "/ext_short.onnx", "wb").write(model(nodes, [ext("w", [2, 3], 0, 6), ext("b", [3], 40, 3)], *io))
    open(out + "/ext_outside.onnx", "wb").write(model(nodes, [ext("w", [2, 3], 0, 6, "../ext.onnx.data"), ext("b", [3], 32, 3)], *io))


def opset20(out):
    """Opset 20, as PyTorch's dynamo exporter writes: Gelu (erf and tanh) and Resize-19's
    half_pixel_symmetric (linear, 4 -> 7 columns by scale 1.7: sized 6, so centred)."""
    import math
    x = rand(8, 61, 3.0)
    g = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x]
    t = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))) for v in x]
    adjust, cen = 6 / (1.7 * 4), 2.0  # the rounded size over the exact one; the input's centre
    nodes = [node("Gelu", ["x"], ["g"], "gelu"), node("Gelu", ["x"], ["t"], "gelu_tanh", approximate="tanh"),
             node("Slice", ["x", "s0", "s4", "ax1"], ["row"], "row"),
             node("Resize", ["row", "", "scales"], ["r"], "resize", mode="linear",
                  coordinate_transformation_mode="half_pixel_symmetric")]
    inits = [int_init("s0", [0]), int_init("s4", [4]), int_init("ax1", [1]), initializer("scales", [2], [1.0, 1.7])]
    open(out + "/opset20.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 4])],
                                                   [value_info("g", [2, 4]), value_info("t", [2, 4]), value_info("r", [2, 6])],
                                                   opset=20))
    npy(out + "/opset20_x.npy", "<f4", (2, 4), struct.pack("<8f", *x))
    npy(out + "/opset20_g.npy", "<f4", (2, 4), struct.pack("<8f", *g))
    npy(out + "/opset20_t.npy", "<f4", (2, 4), struct.pack("<8f", *t))
    rr = []
    for k in range(2):
        row = x[4 * k:4 * k + 4]
        for i in range(6):
            c = min(max(cen * (1 - adjust) + (i + 0.5) / 1.7 - 0.5, 0), 3)
            f = min(int(math.floor(c)), 2)
            rr.append(row[f] + (row[f + 1] - row[f]) * (c - f))
    npy(out + "/opset20_r.npy", "<f4", (2, 6), struct.pack("<12f", *rr))


def gather_nd(out):
    """GatherND with constant indices: of a run-time [2, 3, 4, 5] tensor with batch_dims 1
    (tables of the tuples' indices, one negative), and of a constant [2, 3, 4] (folded at
    import) times a run-time input."""
    x, c, sc = rand(120, 71, 1.0), rand(24, 73, 1.0), rand(12, 79, 1.0)
    i1 = [[[1, -1], [0, 2]], [[2, 3], [1, 0]]]
    i2 = [[1, 2], [0, -1], [1, 1]]
    a = [x[((bb * 3 + i1[bb][t][0] % 3) * 4 + i1[bb][t][1] % 4) * 5 + e] for bb in range(2) for t in range(2) for e in range(5)]
    b = [c[(i2[t][0] % 2 * 3 + i2[t][1] % 3) * 4 + e] * sc[t * 4 + e] for t in range(3) for e in range(4)]
    nodes = [node("GatherND", ["x", "i1"], ["a"], "gnd_batch", batch_dims=1), node("GatherND", ["c", "i2"], ["b0"], "gnd_const"),
             node("Mul", ["b0", "s"], ["b"], "mul")]
    inits = [int_init("i1", [v for p in i1 for t in p for v in t], [2, 2, 2]), int_init("i2", [v for t in i2 for v in t], [3, 2]),
             initializer("c", [2, 3, 4], c)]
    open(out + "/gather_nd.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 3, 4, 5]), value_info("s", [3, 4])],
                                                     [value_info("a", [2, 2, 5]), value_info("b", [3, 4])]))
    npy(out + "/gather_nd_x.npy", "<f4", (2, 3, 4, 5), struct.pack("<120f", *x))
    npy(out + "/gather_nd_s.npy", "<f4", (3, 4), struct.pack("<12f", *sc))
    npy(out + "/gather_nd_a.npy", "<f4", (2, 2, 5), struct.pack("<20f", *a))
    npy(out + "/gather_nd_b.npy", "<f4", (3, 4), struct.pack("<12f", *b))


def positions(out):
    """RoBERTa's position ids, integer arithmetic at run time: mask = Not(Equal(ids, pad)) cast
    to int32, CumSum of it times it, cast to int64, plus pad; then a Gather of a position
    table by them and a GatherElements of a constant row by them (both run-time indices)."""
    P, D, pad = 10, 2, 1
    ids = [[5, 7, 1, 9, 1, 4], [1, 3, 3, 1, 8, 1]]
    table, row = rand(P * D, 83, 1.0), rand(P, 89, 1.0)
    pos = []
    for r in ids:
        c, p = 0, []
        for v in r:
            m = int(v != pad)
            c += m
            p.append(c * m + pad)
        pos.append(p)
    y = [table[p * D + e] for r in pos for p in r for e in range(D)]
    z = [row[p] for r in pos for p in r]
    nodes = [node("Equal", ["ids", "pad"], ["eq"], "eq"), node("Not", ["eq"], ["ne"], "not"),
             node("Cast", ["ne"], ["m"], "to_int", to=6), node("CumSum", ["m", "ax1"], ["cs"], "cumsum"),
             node("Mul", ["cs", "m"], ["cm"], "mul"), node("Cast", ["cm"], ["cl"], "to_long", to=7),
             node("Add", ["cl", "pad"], ["pos"], "add"), node("Gather", ["table", "pos"], ["y"], "gather"),
             node("GatherElements", ["row", "pos"], ["z"], "gather_el", axis=1)]
    inits = [int_init("pad", [pad], []), int_init("ax1", [1], []), initializer("table", [P, D], table),
             initializer("row", [2, P], row + row)]
    open(out + "/positions.onnx", "wb").write(model(nodes, inits, [value_info("ids", [2, 6], 7)],
                                                     [value_info("y", [2, 6, D]), value_info("z", [2, 6])]))
    npy(out + "/positions_ids.npy", "<i8", (2, 6), struct.pack("<12q", *[v for r in ids for v in r]))
    npy(out + "/positions_y.npy", "<f4", (2, 6, D), struct.pack("<24f", *y))
    npy(out + "/positions_z.npy", "<f4", (2, 6), struct.pack("<12f", *z))


def labels(out):
    """Integer and boolean graph outputs: ArgMax of a Softmax (int64 labels, no keepdims),
    ArgMin with select_last_index over a tie, and Greater's booleans."""
    x = rand(10, 97, 2.0)
    x[7] = x[9] = min(x[5:10])  # a tie in row 1's minimum: the last one is 9 - 5 = 4
    lab = [max(range(5), key=lambda j: x[5 * b + j]) for b in range(2)]
    low = [max(j for j in range(5) if x[5 * b + j] == min(x[5 * b:5 * b + 5])) for b in range(2)]
    pos = [v > 0 for v in x]
    nodes = [node("Softmax", ["x"], ["p"], "softmax", axis=1), node("ArgMax", ["p"], ["lab"], "argmax", axis=1, keepdims=0),
             node("ArgMin", ["x"], ["low"], "argmin", axis=1, select_last_index=1),
             node("Greater", ["x", "zero"], ["pos"], "greater")]
    open(out + "/labels.onnx", "wb").write(model(nodes, [initializer("zero", [], [0.0])], [value_info("x", [2, 5])],
                                                  [value_info("lab", [2], 7), value_info("low", [2, 1], 7),
                                                   value_info("pos", [2, 5], 9)]))
    npy(out + "/labels_x.npy", "<f4", (2, 5), struct.pack("<10f", *x))
    npy(out + "/labels_lab.npy", "<i8", (2,), struct.pack("<2q", *lab))
    npy(out + "/labels_low.npy", "<i8", (2, 1), struct.pack("<2q", *low))
    npy(out + "/labels_pos.npy", "|b1", (2, 5), bytes(int(v) for v in pos))


def int_moves(out):
    """Run-time int64 values moved (token ids, MaxPool's indices): Transpose, then Slice, then
    Expand, an int64 graph output (Transpose and Slice declared their result f32 and the
    kernel did not build; Expand did not either); and a MaxPool with its Indices."""
    N, C, H, W = 1, 2, 3, 4
    x = [(i * 7) % 23 - 5 for i in range(N * C * H * W)]
    t = [[[[x[((n * C + c) * H + h) * W + w] for c in range(C)] for w in range(W)] for h in range(H)] for n in range(N)]
    sl = [[[[t[n][h][w][c] for c in range(C)] for w in range(1, 3)] for h in range(H)] for n in range(N)]
    y = [sl[0][h][w][c] for _ in range(2) for h in range(H) for w in range(2) for c in range(C)]
    nodes = [node("Transpose", ["x"], ["t"], "perm", perm=[0, 2, 3, 1]),
             node("Slice", ["t", "s", "e", "a"], ["sl"], "slice"),
             node("Expand", ["sl", "shape"], ["y"], "expand")]
    inits = [int_init("s", [1]), int_init("e", [3]), int_init("a", [2]), int_init("shape", [2, 1, 1, 1])]
    open(out + "/int_moves.onnx", "wb").write(model(nodes, inits, [value_info("x", [N, C, H, W], 7)],
                                                     [value_info("y", [2, H, 2, C], 7)]))
    npy(out + "/int_moves_x.npy", "<i8", (N, C, H, W), struct.pack("<%dq" % len(x), *x))
    npy(out + "/int_moves_y.npy", "<i8", (2, H, 2, C), struct.pack("<%dq" % len(y), *y))
    # MaxPool 2 x 2, stride 1, pad 1 (bottom and right) with Indices: flat NCHW positions
    f = rand(C * H * W, 61, 1.0)
    pv, pi = [], []
    for c in range(C):
        for i in range(H):
            for j in range(W):
                best = None
                for a in range(2):
                    for b in range(2):
                        h, w = i + a, j + b
                        if h < H and w < W and (best is None or f[(c * H + h) * W + w] > best[0]):
                            best = (f[(c * H + h) * W + w], (c * H + h) * W + w)
                pv.append(best[0])
                pi.append(best[1])
    open(out + "/pool_idx.onnx", "wb").write(model(
        [node("MaxPool", ["x"], ["y", "i"], "pool", kernel_shape=[2, 2], pads=[0, 0, 1, 1])], [],
        [value_info("x", [1, C, H, W])], [value_info("y", [1, C, H, W]), value_info("i", [1, C, H, W], 7)]))
    npy(out + "/pool_idx_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(f), *f))
    npy(out + "/pool_idx_y.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(pv), *pv))
    npy(out + "/pool_idx_i.npy", "<i8", (1, C, H, W), struct.pack("<%dq" % len(pi), *pi))


def scatter_rt(out):
    """ScatterND and ScatterElements whose indices are a run-time int64 input (a KV cache's
    update, the dynamo exporter's max_unpool): ScatterND add with a repeated and a negative
    index, ScatterElements none along axis 1 with a negative index, GatherND of two index
    pairs (one negative); against Python."""
    D0, D1, D2 = 5, 4, 3
    x = rand(D0 * D1 * D2, 71, 1.0)
    u = rand(2 * D1 * D2, 72, 1.0)
    ind = [1, -4]  # rows 1 and 5 - 4 = 1: both add to row 1
    y1 = list(x)
    for j, v in enumerate(ind):
        row = v + D0 if v < 0 else v
        for t in range(D1 * D2):
            y1[row * D1 * D2 + t] += u[j * D1 * D2 + t]
    ie = [0, -1, 2, 1, 2, 0]  # shape [1, 2, 3]; no position twice (ONNX leaves that undefined)
    ue = rand(6, 73, 1.0)
    y2 = list(x)
    for a in range(2):
        for c in range(D2):
            v = ie[a * D2 + c]
            v = v + D1 if v < 0 else v
            y2[(0 * D1 + v) * D2 + c] = ue[a * D2 + c]
    ig = [1, -1, 4, 0]
    y3 = [x[((ig[2 * t] % D0) * D1 + ig[2 * t + 1] % D1) * D2 + c] for t in range(2) for c in range(D2)]
    nodes = [node("ScatterND", ["x", "i", "u"], ["y1"], "nd", reduction="add"),
             node("ScatterElements", ["x", "ie", "ue"], ["y2"], "el", axis=1),
             node("GatherND", ["x", "ig"], ["y3"], "gnd")]
    open(out + "/scatter_rt.onnx", "wb").write(model(
        nodes, [], [value_info("x", [D0, D1, D2]), value_info("i", [2, 1], 7), value_info("u", [2, D1, D2]),
                    value_info("ie", [1, 2, D2], 7), value_info("ue", [1, 2, D2]), value_info("ig", [2, 2], 7)],
        [value_info("y1", [D0, D1, D2]), value_info("y2", [D0, D1, D2]), value_info("y3", [2, D2])], opset=16))
    for name, dt, shape, vals in [("x", "<f4", (D0, D1, D2), x), ("i", "<i8", (2, 1), ind), ("u", "<f4", (2, D1, D2), u),
                                  ("ie", "<i8", (1, 2, D2), ie), ("ue", "<f4", (1, 2, D2), ue), ("ig", "<i8", (2, 2), ig),
                                  ("y3", "<f4", (2, D2), y3),
                                  ("y1", "<f4", (D0, D1, D2), y1), ("y2", "<f4", (D0, D1, D2), y2)]:
        npy(out + "/scatter_rt_%s.npy" % name, dt, shape, struct.pack("<%d%s" % (len(vals), dt[-2] if dt != "<i8" else "q"), *vals))


def int_ops(out):
    """Run-time Cast of floats to int64 (truncated toward zero), then Div (truncating) and
    Mod (the divisor's sign; fmod 1: the dividend's) by int64 constants, and Mod of floats
    (fmod 1)."""
    import math
    x = [7.9, -7.9, 10.2, -10.2, 13, -13, 0.5, -0.5, 99.9, -99.9, 1, -22.7]
    d = [3, -3, 4, -4, 5, 7]
    xf = [struct.unpack("<f", struct.pack("<f", v))[0] for v in x]
    xi = [int(v) for v in xf]  # Python's int() truncates toward zero
    dd = [d[i % 6] for i in range(12)]
    q = [int(a / b) for a, b in zip(xi, dd)]
    m = [a - b * math.floor(a / b) for a, b in zip(xi, dd)]
    mf = [int(math.fmod(a, b)) for a, b in zip(xi, dd)]
    ff = [struct.unpack("<f", struct.pack("<f", math.fmod(v, 2.5)))[0] for v in xf]
    nodes = [node("Cast", ["x"], ["xi"], "to_long", to=7), node("Div", ["xi", "d"], ["q"], "div"),
             node("Mod", ["xi", "d"], ["m"], "mod"), node("Mod", ["xi", "d"], ["mf"], "fmod", fmod=1),
             node("Mod", ["x", "df"], ["ff"], "fmod_float", fmod=1)]
    open(out + "/int_ops.onnx", "wb").write(model(nodes, [int_init("d", d), initializer("df", [1], [2.5])],
                                                   [value_info("x", [2, 6])],
                                                   [value_info("q", [2, 6], 7), value_info("m", [2, 6], 7),
                                                    value_info("mf", [2, 6], 7), value_info("ff", [2, 6])]))
    npy(out + "/int_ops_x.npy", "<f4", (2, 6), struct.pack("<12f", *x))
    for name, v in (("q", q), ("m", m), ("mf", mf)):
        npy(out + "/int_ops_%s.npy" % name, "<i8", (2, 6), struct.pack("<12q", *v))
    npy(out + "/int_ops_ff.npy", "<f4", (2, 6), struct.pack("<12f", *ff))


def bool_in(out):
    """A boolean graph input at run time (a mask parameter): Where by it, and Not of it as a
    boolean output."""
    x, m = [1.5, -2.0, 3.0, -4.5, 5.0, 6.25], [1, 0, 0, 1, 1, 0]
    y = [v if b else -v for v, b in zip(x, m)]
    nodes = [node("Neg", ["x"], ["nx"], "neg"), node("Where", ["m", "x", "nx"], ["y"], "where"), node("Not", ["m"], ["n"], "not")]
    open(out + "/bool_in.onnx", "wb").write(model(nodes, [], [value_info("x", [2, 3]), value_info("m", [2, 3], 9)],
                                                   [value_info("y", [2, 3]), value_info("n", [2, 3], 9)]))
    npy(out + "/bool_in_x.npy", "<f4", (2, 3), struct.pack("<6f", *x))
    npy(out + "/bool_in_m.npy", "|b1", (2, 3), bytes(m))
    npy(out + "/bool_in_y.npy", "<f4", (2, 3), struct.pack("<6f", *y))
    npy(out + "/bool_in_n.npy", "|b1", (2, 3), bytes(1 - b for b in m))


# ---- quantized models (onnxruntime.quantization's two forms), computed here in f32 steps ----

def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def typed_init(name, shape, dt, values):  # raw data: 2 uint8, 3 int8, 6 int32, 1 float
    fmt = {1: "f", 2: "B", 3: "b", 6: "i"}[dt]
    return (b"".join(ivar(1, d) for d in shape) + ivar(2, dt) + field(8, name) +
            field(9, struct.pack("<%d%s" % (len(values), fmt), *values)))


def quantize(x, s, z, lo, hi):  # onnxruntime: x / s in f32, ties to even, + z, saturated
    return min(max(round(f32(f32(x) / f32(s))) + z, lo), hi)


def dequantize(q, s, z):
    return f32(f32(q - z) * f32(s))


def margin(x, s):  # how far x / s lies from a rounding boundary (.5)
    t = x / s
    return abs(abs(t - int(t)) - 0.5)


def qdq_conv_int(out, s8=False):
    """Two QDQ convolutions of one quantized input as integer kernels where the CPU has
    VNNI (qconv2d_nhwc_pad; docs/ONNX.md, "Quantized models"): 18 input channels (padded to
    20 with the zero point), a 3 x 3 filter of 40 output channels (16-lane vectors and a
    tail of 8) per channel, stride 2 and pads [1, 2, 2, 1]; a 1 x 1 filter of 24 per tensor
    with a bias. The input is dequantized integers (quantization gives them back exactly)
    and the outputs are float, so the reference is the exact sum, up to f32 rounding. S8: the
    input int8 (quantize_static's default activation type; made u8 by adding 128)."""
    C, H, W, xs, xz = 18, 9, 9, 0.05, (-5 if s8 else 131)
    q = [int((v + 1) * 127.99) - (128 if s8 else 0) for v in rand(C * H * W, 81, 1.0)]
    tag, qt = ("qdq_int8" if s8 else "qdq_int"), (3 if s8 else 2)
    x = [dequantize(v, xs, xz) for v in q]
    CA, CB = 40, 24
    wa = [int(v * 127.99) for v in rand(CA * C * 9, 82, 1.0)]
    wsa = [0.001 * (1 + o % 7) for o in range(CA)]
    wb = [int(v * 127.99) for v in rand(CB * C, 83, 1.0)]
    wsb, bias = 0.003, [v * 2 for v in rand(CB, 84, 1.0)]
    xd = [f32(v) for v in x]
    ya = []
    for o in range(CA):
        for i in range(5):
            for j in range(5):
                s = 0.0
                for c in range(C):
                    for r in range(3):
                        for t in range(3):
                            hi, wj = 2 * i + r - 1, 2 * j + t - 2
                            if 0 <= hi < H and 0 <= wj < W:
                                s += xd[(c * H + hi) * W + wj] * dequantize(wa[((o * C + c) * 3 + r) * 3 + t], wsa[o], 0)
                ya.append(s)
    yb = []
    for o in range(CB):
        for i in range(H * W):
            yb.append(f32(bias[o]) + sum(xd[c * H * W + i] * dequantize(wb[o * C + c], wsb, 0) for c in range(C)))
    # yb requantized (uint8, a scale that keeps every value 1e-3 from a rounding boundary)
    # and read by a third convolution: its conversion to u8 fuses into yb's quantization
    CC, yz = 16, 128
    ys = next(v for v in (0.11 + 0.0007 * t for t in range(400)) if min(margin(y, v) for y in yb) > 1e-3)
    wc = [int(v * 127.99) for v in rand(CC * CB, 87, 1.0)]
    wsc = 0.005
    ybq = [dequantize(quantize(y, ys, yz, 0, 255), ys, yz) for y in yb]
    yc = [sum(ybq[c * H * W + i] * dequantize(wc[o * CB + c], wsc, 0) for c in range(CB)) for o in range(CC) for i in range(H * W)]
    # ... and by a depthwise 3 x 3 convolution (24 channels, stride 2, pads [0, 1, 2, 1]): qdepthwise
    wd = [int(v * 127.99) for v in rand(CB * 9, 88, 1.0)]
    wsd = [0.004 + 0.001 * (o % 3) for o in range(CB)]
    OD = (H + 0 + 2 - 3) // 2 + 1, (W + 1 + 1 - 3) // 2 + 1
    yd = []
    for o in range(CB):
        for i in range(OD[0]):
            for j in range(OD[1]):
                t = 0.0
                for r in range(3):
                    for q in range(3):
                        hi, wj = 2 * i + r - 0, 2 * j + q - 1
                        if 0 <= hi < H and 0 <= wj < W:
                            t += ybq[(o * H + hi) * W + wj] * dequantize(wd[o * 9 + r * 3 + q], wsd[o], 0)
                yd.append(t)
    # ... and x by a depthwise 3 x 3 one (18 channels, not a multiple of 4: qdepthwise reads
    # x's u8 copy of 20, made for conv_a and conv_b), pads 1
    we = [int(v * 127.99) for v in rand(C * 9, 89, 1.0)]
    wse = [0.002 + 0.001 * (o % 4) for o in range(C)]
    ye = []
    for o in range(C):
        for i in range(H):
            for j in range(W):
                t = 0.0
                for r in range(3):
                    for q in range(3):
                        hi, wj = i + r - 1, j + q - 1
                        if 0 <= hi < H and 0 <= wj < W:
                            t += xd[(o * H + hi) * W + wj] * dequantize(we[o * 9 + r * 3 + q], wse[o], 0)
                ye.append(t)
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"), node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], "dqx"),
             node("DequantizeLinear", ["we", "wse"], ["fe"], "dqe", axis=0),
             node("Conv", ["xd", "fe"], ["ye"], "conv_e", group=C, pads=[1, 1, 1, 1]),
             node("DequantizeLinear", ["wa", "wsa"], ["fa"], "dqa", axis=0), node("DequantizeLinear", ["wb", "wsb"], ["fb"], "dqb"),
             node("Conv", ["xd", "fa"], ["ya"], "conv_a", strides=[2, 2], pads=[1, 2, 2, 1]),
             node("Conv", ["xd", "fb", "bias"], ["yb"], "conv_b"),
             node("QuantizeLinear", ["yb", "ys", "yz"], ["ybq"], "qyb"), node("DequantizeLinear", ["ybq", "ys", "yz"], ["ybd"], "dqyb"),
             node("DequantizeLinear", ["wc", "wsc"], ["fc"], "dqc"), node("Conv", ["ybd", "fc"], ["yc"], "conv_c"),
             node("DequantizeLinear", ["wd", "wsd"], ["fd"], "dqd", axis=0),
             node("Conv", ["ybd", "fd"], ["yd"], "conv_d", group=CB, strides=[2, 2], pads=[0, 1, 2, 1])]
    inits = [initializer("xs", [], [xs]), typed_init("xz", [], qt, [xz]), typed_init("wa", [CA, C, 3, 3], 3, wa),
             initializer("wsa", [CA], wsa), typed_init("wb", [CB, C, 1, 1], 3, wb), initializer("wsb", [], [wsb]),
             initializer("bias", [CB], bias), initializer("ys", [], [ys]), typed_init("yz", [], 2, [yz]),
             typed_init("wc", [CC, CB, 1, 1], 3, wc), initializer("wsc", [], [wsc]), typed_init("wd", [CB, 1, 3, 3], 3, wd),
             initializer("wsd", [CB], wsd), typed_init("we", [C, 1, 3, 3], 3, we), initializer("wse", [C], wse)]
    open(out + "/" + tag + ".onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])],
                                                      [value_info("ya", [1, CA, 5, 5]), value_info("yb", [1, CB, H, W]),
                                                       value_info("yc", [1, CC, H, W]), value_info("yd", [1, CB, OD[0], OD[1]]),
                                                       value_info("ye", [1, C, H, W])]))
    npy(out + "/" + tag + "_ye.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(ye), *ye))
    npy(out + "/" + tag + "_yc.npy", "<f4", (1, CC, H, W), struct.pack("<%df" % len(yc), *yc))
    npy(out + "/" + tag + "_yd.npy", "<f4", (1, CB, OD[0], OD[1]), struct.pack("<%df" % len(yd), *yd))
    npy(out + "/" + tag + "_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/" + tag + "_ya.npy", "<f4", (1, CA, 5, 5), struct.pack("<%df" % len(ya), *ya))
    npy(out + "/" + tag + "_yb.npy", "<f4", (1, CB, H, W), struct.pack("<%df" % len(yb), *yb))


def qdq_residual(out):
    """A QDQ residual block as a quantized ResNet writes it: the quantized input x
    (uint8, 8 channels) read by a 1 x 1 convolution and, dequantized, by the Add after it;
    the convolution's output quantized and dequantized for that Add only; the sum
    quantized again and dequantized (the output). With integer kernels both dequantizations
    read the values' u8 copies, and the Add's kernel takes them (docs/ONNX.md "Integer
    convolutions"). Scales keep every value 1e-3 from a rounding boundary."""
    C, H, W, xs, xz = 8, 6, 5, 0.04, 120
    q = [int((v + 1) * 127.99) for v in rand(C * H * W, 101, 1.0)]
    xd = [dequantize(v, xs, xz) for v in q]
    wq = [int(v * 127.99) for v in rand(C * C, 102, 1.0)]
    ws = 0.006
    ya = [sum(xd[c * H * W + i] * dequantize(wq[o * C + c], ws, 0) for c in range(C)) for o in range(C) for i in range(H * W)]
    az = 100
    as_ = next(v for v in (0.03 + 0.0003 * t for t in range(400)) if min(margin(y, v) for y in ya) > 1e-3)
    yad = [dequantize(quantize(y, as_, az, 0, 255), as_, az) for y in ya]
    s = [f32(a + b) for a, b in zip(yad, xd)]
    yz = 90
    ys = next(v for v in (0.05 + 0.0003 * t for t in range(400)) if min(margin(y, v) for y in s) > 1e-3)
    ref = [dequantize(quantize(v, ys, yz, 0, 255), ys, yz) for v in s]
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"), node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], "dqx"),
             node("DequantizeLinear", ["wq", "ws"], ["w"], "dqw"), node("Conv", ["xd", "w"], ["ya"], "conv"),
             node("QuantizeLinear", ["ya", "as", "az"], ["yaq"], "qa"), node("DequantizeLinear", ["yaq", "as", "az"], ["yad"], "dqa"),
             node("Add", ["yad", "xd"], ["s"], "add"),
             node("QuantizeLinear", ["s", "ys", "yz"], ["sq"], "qs"), node("DequantizeLinear", ["sq", "ys", "yz"], ["y"], "dqs")]
    inits = [initializer("xs", [], [xs]), typed_init("xz", [], 2, [xz]), typed_init("wq", [C, C, 1, 1], 3, wq),
             initializer("ws", [], [ws]), initializer("as", [], [as_]), typed_init("az", [], 2, [az]),
             initializer("ys", [], [ys]), typed_init("yz", [], 2, [yz])]
    open(out + "/qdq_res.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])], [value_info("y", [1, C, H, W])]))
    npy(out + "/qdq_res_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(xd), *xd))
    npy(out + "/qdq_res_y.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(ref), *ref))


def qconv3x3_acc(xq, xz, C, H, W, wq, wz, M, sw):
    """The integer sums of a 3 x 3 convolution, pads 1, stride 1 in height and SW in width:
    per output channel m and position, (x - XZ) * (w - WZ[m]) over the taps inside x
    (xq flat [C, H, W], wq flat [M, C, 3, 3]); in [m, i, j] order."""
    acc = []
    for m in range(M):
        for i in range(H):
            for j in range((W + 2 - 3) // sw + 1):
                a = 0
                for c in range(C):
                    for r in range(3):
                        for t in range(3):
                            hi, wj = i + r - 1, sw * j + t - 1
                            if 0 <= hi < H and 0 <= wj < W:
                                a += (xq[(c * H + hi) * W + wj] - xz) * (wq[((m * C + c) * 3 + r) * 3 + t] - wz[m])
                acc.append(a)
    return acc


def qlinear_conv_int(out):
    """QLinearConv (the QOperator form) as the integer kernels where the CPU has VNNI: a
    quantized input (uint8, 8 channels) through a 3 x 3 QLinearConv of 12 output channels
    (int8 filter per channel, int32 bias, pads 1) and a depthwise 3 x 3 stride-2 one (12
    channels, bias), dequantized. The reference is onnxruntime's requantization:
    round(f32(acc + B) * f32(f32(x_scale * w_scale) / y_scale)) + y_zero_point, saturated."""
    C, H, W, CA = 8, 7, 6, 12
    xs, xz = 0.05, 110
    q = [int((v + 1) * 127.99) for v in rand(C * H * W, 111, 1.0)]
    wa = [int(v * 127.99) for v in rand(CA * C * 9, 112, 1.0)]
    wsa = [0.002 * (1 + o % 5) for o in range(CA)]
    ba = [int(v * 3000) for v in rand(CA, 113, 1.0)]
    ys, yz = 0.09, 100
    wd = [int(v * 127.99) for v in rand(CA * 9, 114, 1.0)]
    wsd = [0.003 + 0.001 * (o % 4) for o in range(CA)]
    bd = [int(v * 2000) for v in rand(CA, 115, 1.0)]
    zs, zz = 0.07, 128

    def rq(acc, b, sx, sw, sy, zy):
        m = f32(f32(f32(sx) * f32(sw)) / f32(sy))
        return min(max(round(f32(f32(acc + b) * m)) + zy, 0), 255)

    ya = [rq(a, ba[k // (H * W)], xs, wsa[k // (H * W)], ys, yz)
          for k, a in enumerate(qconv3x3_acc(q, xz, C, H, W, wa, [0] * CA, CA, 1))]
    OH, OW = (H + 2 - 3) // 2 + 1, (W + 2 - 3) // 2 + 1
    y = []
    for o in range(CA):
        for i in range(OH):
            for j in range(OW):
                acc = 0
                for r in range(3):
                    for t in range(3):
                        hi, wj = 2 * i + r - 1, 2 * j + t - 1
                        if 0 <= hi < H and 0 <= wj < W:
                            acc += (ya[(o * H + hi) * W + wj] - yz) * wd[o * 9 + r * 3 + t]
                y.append(dequantize(rq(acc, bd[o], ys, wsd[o], zs, zz), zs, zz))
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"),
             node("QLinearConv", ["xq", "xs", "xz", "wa", "wsa", "w0", "ys", "yz", "ba"], ["ya"], "conv_a", pads=[1, 1, 1, 1]),
             node("QLinearConv", ["ya", "ys", "yz", "wd", "wsd", "w0", "zs", "zz", "bd"], ["yd"], "conv_d", group=CA, strides=[2, 2],
                  pads=[1, 1, 1, 1]),
             node("DequantizeLinear", ["yd", "zs", "zz"], ["y"], "dqy")]
    inits = [initializer("xs", [], [xs]), typed_init("xz", [], 2, [xz]), typed_init("wa", [CA, C, 3, 3], 3, wa),
             initializer("wsa", [CA], wsa), typed_init("w0", [CA], 3, [0] * CA), initializer("ys", [], [ys]), typed_init("yz", [], 2, [yz]),
             typed_init("ba", [CA], 6, ba), typed_init("wd", [CA, 1, 3, 3], 3, wd), initializer("wsd", [CA], wsd),
             initializer("zs", [], [zs]), typed_init("zz", [], 2, [zz]), typed_init("bd", [CA], 6, bd)]
    x = [dequantize(v, xs, xz) for v in q]
    open(out + "/qlinear_int.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])], [value_info("y", [1, CA, OH, OW])]))
    npy(out + "/qlinear_int_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/qlinear_int_y.npy", "<f4", (1, CA, OH, OW), struct.pack("<%df" % len(y), *y))
    # a 1 x 1 QLinearConv over 600 channels of filters near +-127 and x near 0 (zero point
    # 255): its sums pass 2^24, so without the integer kernels it is not an f32 convolution
    # (whose sums would round) but the plain i32 one; y = onnxruntime's requantization
    CB, P = 600, 3
    xb = [0 if v % 7 else 9 for v in range(CB * P)]
    wb = [127 - (v % 2) if v % 9 else 120 for v in range(2 * CB)]
    accs = [sum((xb[c * P + p] - 255) * wb[o * CB + c] for c in range(CB)) for o in range(2) for p in range(P)]
    xbs, wbs, ybs, ybz = 0.01, [0.02, 0.03], 60.0, 128
    yb = [dequantize(rq(a, 0, xbs, wbs[k // P], ybs, ybz), ybs, ybz) for k, a in enumerate(accs)]
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"),
             node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "w0", "ys", "yz"], ["yq"], "conv"),
             node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], "dqy")]
    inits = [initializer("xs", [], [xbs]), typed_init("xz", [], 2, [255]), typed_init("w", [2, CB, 1, 1], 3, wb),
             initializer("ws", [2], wbs), typed_init("w0", [2], 3, [0, 0]), initializer("ys", [], [ybs]), typed_init("yz", [], 2, [ybz])]
    xf = [dequantize(v, xbs, 255) for v in xb]
    open(out + "/qlinear_big.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, CB, 1, P])], [value_info("y", [1, 2, 1, P])]))
    npy(out + "/qlinear_big_x.npy", "<f4", (1, CB, 1, P), struct.pack("<%df" % len(xf), *xf))
    npy(out + "/qlinear_big_y.npy", "<f4", (1, 2, 1, P), struct.pack("<%df" % len(yb), *yb))


def qoperator_contrib(out):
    """onnxruntime's QOperator contrib operators (domain com.microsoft), as a quantized
    ResNet's tail uses them: x quantized (uint8 [1, 8, 4, 4]) through a 1 x 1 QLinearConv,
    QLinearAdd of that and x, QLinearMul of the sum and x, QLinearGlobalAveragePool,
    Flatten, and QGemm (transB, int32 bias) without y_scale: a float result; and
    QLinearConcat of the convolution's output and x (requantized). The reference
    computes onnxruntime's forms in f32; inputs keep every rounded value 1e-3 from a
    rounding boundary."""
    C, H, W, N = 8, 4, 4, 5
    xs, xz, ys, yz = 0.04, 100, 0.05, 90
    wq = [int(v * 127.99) for v in rand(C * C, 121, 1.0)]
    ws = 0.004
    bq = [int(v * 127.99) for v in rand(N * C, 122, 1.0)]
    bs, cb = 0.003, [int(v * 500) for v in rand(N, 123, 1.0)]

    def clamp(v):
        return min(max(v, 0), 255)

    def near_half(v):
        return abs(abs(v - int(v)) - 0.5) < 1e-3

    for seed in range(124, 400):
        q = [int((v + 1) * 127.99) for v in rand(C * H * W, seed, 1.0)]
        m = f32(f32(f32(xs) * f32(ws)) / f32(ys))
        ya, bad = [], False
        for o in range(C):
            for i in range(H * W):
                t = f32(sum((q[c * H * W + i] - xz) * wq[o * C + c] for c in range(C)) * m)
                bad |= near_half(t)
                ya.append(clamp(round(t) + yz))
        ss, sz = 0.06, 110
        sv = []
        for i in range(C * H * W):
            t = f32(f32(f32(f32(ys) * (ya[i] - yz)) + f32(f32(xs) * (q[i] - xz))) / f32(ss))
            bad |= near_half(t)
            sv.append(clamp(round(t) + sz))
        ms, mz = 0.08, 20
        mv = []
        for i in range(C * H * W):
            t = f32(f32(f32(f32(ss) * (sv[i] - sz)) * f32(f32(xs) * (q[i] - xz))) / f32(ms))
            bad |= near_half(t)
            mv.append(clamp(round(t) + mz))
        cat = []  # QLinearConcat of ya (Y's scale) and xq (requantized) along the channels
        for i in range(C * H * W):
            t = f32(f32(f32(q[i] - xz) * f32(xs)) / f32(ys))
            bad |= near_half(t)
            cat.append(clamp(round(t) + yz))
        cat = [dequantize(v, ys, yz) for v in ya + cat]
        gs, gz = 0.02, 30
        gm = f32(f32(ms) / f32(f32(gs) * f32(H * W)))
        g = []
        for c in range(C):
            t = f32(f32(sum(mv[c * H * W:(c + 1) * H * W]) - mz * H * W) * gm)
            bad |= near_half(t)
            g.append(clamp(round(t) + gz))
        if not bad:
            break
    y = [f32(f32(sum((g[k] - gz) * bq[j * C + k] for k in range(C)) + cb[j]) * f32(f32(gs) * f32(bs))) for j in range(N)]
    ms_node = lambda op, ins, outs, name, **a: node(op, ins, outs, name, **a) + field(7, "com.microsoft")
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"),
             node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "w0", "ys", "yz"], ["ya"], "conv"),
             ms_node("QLinearAdd", ["ya", "ys", "yz", "xq", "xs", "xz", "ss", "sz"], ["s"], "add"),
             ms_node("QLinearMul", ["s", "ss", "sz", "xq", "xs", "xz", "ms", "mz"], ["mo"], "mul"),
             ms_node("QLinearGlobalAveragePool", ["mo", "ms", "mz", "gs", "gz"], ["g"], "gap", channels_last=0),
             node("Flatten", ["g"], ["gf"], "flat"),
             ms_node("QGemm", ["gf", "gs", "gz", "b", "bs", "b0", "cb"], ["y"], "gemm", transB=1),
             ms_node("QLinearConcat", ["ys", "yz", "ya", "ys", "yz", "xq", "xs", "xz"], ["cq"], "concat", axis=1),
             node("DequantizeLinear", ["cq", "ys", "yz"], ["cat"], "dqcat")]
    inits = [initializer("xs", [], [xs]), typed_init("xz", [], 2, [xz]), typed_init("w", [C, C, 1, 1], 3, wq),
             initializer("ws", [], [ws]), typed_init("w0", [], 3, [0]), initializer("ys", [], [ys]), typed_init("yz", [], 2, [yz]),
             initializer("ss", [], [ss]), typed_init("sz", [], 2, [sz]), initializer("ms", [], [ms]), typed_init("mz", [], 2, [mz]),
             initializer("gs", [], [gs]), typed_init("gz", [], 2, [gz]), typed_init("b", [N, C], 3, bq), initializer("bs", [], [bs]),
             typed_init("b0", [], 3, [0]), typed_init("cb", [N], 6, cb)]
    x = [dequantize(v, xs, xz) for v in q]
    open(out + "/qop_contrib.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])],
                                                     [value_info("y", [1, N]), value_info("cat", [1, 2 * C, H, W])]))
    npy(out + "/qop_contrib_cat.npy", "<f4", (1, 2 * C, H, W), struct.pack("<%df" % len(cat), *cat))
    # a com.microsoft operator texc does not import, and QLinearAdd in the default domain
    other = [nodes[0], ms_node("QLinearSigmoid", ["xq", "xs", "xz", "xs", "xz"], ["y"], "sig")]
    open(out + "/qop_unknown.onnx", "wb").write(model(other, inits, [value_info("x", [1, C, H, W])], [value_info("y", [1, C, H, W])]))
    plain = [nodes[0], node("QLinearAdd", ["xq", "xs", "xz", "xq", "xs", "xz", "xs", "xz"], ["y"], "add")]
    open(out + "/qop_default.onnx", "wb").write(model(plain, inits, [value_info("x", [1, C, H, W])], [value_info("y", [1, C, H, W])]))
    npy(out + "/qop_contrib_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/qop_contrib_y.npy", "<f4", (1, N), struct.pack("<%df" % len(y), *y))


def qdq_matmul_int(out, s8=False):
    """QDQ products as integer kernels where the CPU has VNNI (qdense): a MatMul of a rank-3
    quantized input [2, 5, 18] (K = 18, padded to 20 with the zero point) by an int8 [18, 20]
    scaled per column (axis 1), and a Gemm (transB, bias) of a second input [10, 18] by an
    int8 [12, 18] scaled per tensor. Inputs are dequantized integers; the reference is the
    exact sum, up to f32 rounding. S8: the inputs int8."""
    o8 = 128 if s8 else 0
    K, xs, xz, x2s, x2z = 18, 0.05, 7 - o8, 0.02, 200 - o8
    q = [int((v + 1) * 127.99) - o8 for v in rand(2 * 5 * K, 91, 1.0)]
    q2 = [int((v + 1) * 127.99) - o8 for v in rand(10 * K, 92, 1.0)]
    tag, qt = ("qdq_mm8" if s8 else "qdq_mm"), (3 if s8 else 2)
    x, x2 = [dequantize(v, xs, xz) for v in q], [dequantize(v, x2s, x2z) for v in q2]
    wa = [int(v * 127.99) for v in rand(K * 20, 93, 1.0)]
    wsa = [0.002 * (1 + j % 5) for j in range(20)]
    wb = [int(v * 127.99) for v in rand(12 * K, 94, 1.0)]
    wsb, bias = 0.004, [v for v in rand(12, 95, 1.0)]
    ya = [sum(f32(x[m * K + k]) * dequantize(wa[k * 20 + j], wsa[j], 0) for k in range(K)) for m in range(10) for j in range(20)]
    yb = [f32(bias[j]) + sum(f32(x2[m * K + k]) * dequantize(wb[j * K + k], wsb, 0) for k in range(K)) for m in range(10) for j in range(12)]
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"), node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], "dqx"),
             node("QuantizeLinear", ["x2", "x2s", "x2z"], ["x2q"], "qx2"), node("DequantizeLinear", ["x2q", "x2s", "x2z"], ["x2d"], "dqx2"),
             node("DequantizeLinear", ["wa", "wsa"], ["fa"], "dqa", axis=1), node("DequantizeLinear", ["wb", "wsb"], ["fb"], "dqb"),
             node("MatMul", ["xd", "fa"], ["ya"], "mm"), node("Gemm", ["x2d", "fb", "bias"], ["yb"], "gemm", transB=1)]
    inits = [initializer("xs", [], [xs]), typed_init("xz", [], qt, [xz]), initializer("x2s", [], [x2s]), typed_init("x2z", [], qt, [x2z]),
             typed_init("wa", [K, 20], 3, wa), initializer("wsa", [20], wsa), typed_init("wb", [12, K], 3, wb),
             initializer("wsb", [], [wsb]), initializer("bias", [12], bias)]
    open(out + "/" + tag + ".onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 5, K]), value_info("x2", [10, K])],
                                                      [value_info("ya", [2, 5, 20]), value_info("yb", [10, 12])]))
    npy(out + "/" + tag + "_x.npy", "<f4", (2, 5, K), struct.pack("<%df" % len(x), *x))
    npy(out + "/" + tag + "_x2.npy", "<f4", (10, K), struct.pack("<%df" % len(x2), *x2))
    npy(out + "/" + tag + "_ya.npy", "<f4", (2, 5, 20), struct.pack("<%df" % len(ya), *ya))
    npy(out + "/" + tag + "_yb.npy", "<f4", (10, 12), struct.pack("<%df" % len(yb), *yb))


def qdq_conv(out):
    """QDQ as quantize_static writes it: QuantizeLinear -> DequantizeLinear around the
    activations (uint8), int8 filters per output channel and an int32 bias behind a
    DequantizeLinear (folded at import), a float Conv (3 x 3, pad 1) and Relu, requantized.
    Inputs are chosen so that no value lies within 1e-3 of a rounding boundary (float order
    cannot move a result)."""
    C, H, W, CO = 2, 5, 5, 3
    xs, xz, ys, yz = 0.05, 128, 0.04, 0
    ws = [0.01, 0.02, 0.015]
    wq = [int(v * 127) for v in rand(CO * C * 9, 71, 1.0)]
    bq = [int(v * 400) for v in rand(CO, 72, 1.0)]
    for seed in range(73, 200):
        x = rand(C * H * W, seed, 4.0)
        xd = [dequantize(quantize(v, xs, xz, 0, 255), xs, xz) for v in x]
        wd = [dequantize(wq[i], ws[i // (C * 9)], 0) for i in range(len(wq))]
        bd = [dequantize(bq[o], f32(f32(xs) * f32(ws[o])), 0) for o in range(CO)]
        y = [max(v, 0.0) for v in conv(xd, C, H, W, wd, CO, 3, 1, 1, bd)]
        if min(margin(v, xs) for v in x) > 1e-3 and min(margin(v, ys) for v in y) > 1e-3:
            break
    ref = [dequantize(quantize(v, ys, yz, 0, 255), ys, yz) for v in y]
    nodes = [node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], "qx"), node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], "dqx"),
             node("DequantizeLinear", ["wq", "ws"], ["w"], "dqw", axis=0), node("DequantizeLinear", ["bq", "bs"], ["b"], "dqb", axis=0),
             node("Conv", ["xd", "w", "b"], ["c"], "conv", pads=[1, 1, 1, 1]), node("Relu", ["c"], ["r"], "relu"),
             node("QuantizeLinear", ["r", "ys", "yz"], ["rq"], "qr"), node("DequantizeLinear", ["rq", "ys", "yz"], ["y"], "dqr")]
    inits = [initializer("xs", [], [xs]), typed_init("xz", [], 2, [xz]), initializer("ys", [], [ys]), typed_init("yz", [], 2, [yz]),
             typed_init("wq", [CO, C, 3, 3], 3, wq), initializer("ws", [CO], ws),
             typed_init("bq", [CO], 6, bq), initializer("bs", [CO], [f32(f32(xs) * f32(w)) for w in ws])]
    open(out + "/qdq_conv.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])], [value_info("y", [1, CO, H, W])]))
    npy(out + "/qdq_conv_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/qdq_conv_ref.npy", "<f4", (1, CO, H, W), struct.pack("<%df" % len(ref), *ref))


def dyn_conv(out):
    """quantize_dynamic's convolution: DynamicQuantizeLinear of a run-time [1, 5, 7, 6],
    ConvInteger (pads 1, stride 2 in width, the run-time zero point of x, a zero point per
    output channel of the int8 filter) read by a Cast to float only, Mul by x_scale * w_scale:
    imported as an f32 convolution of x - x_zero_point (channels last). And a ConvInteger
    whose int32 output is the graph's: the exact integer kernel."""
    C, H, W, M = 5, 7, 6, 4
    x = rand(C * H * W, 91, 2.0)
    lo, hi = min(min(x), 0.0), max(max(x), 0.0)
    s = f32(f32(hi - lo) / 255.0)
    z = round(min(max(f32(0.0 - f32(lo / s)), 0.0), 255.0))
    xq = [quantize(v, s, z, 0, 255) for v in x]
    wq = [int(v * 127) for v in rand(M * C * 9, 92, 1.0)]
    wz = [0, 2, -3, 1]
    ws = 0.015
    OH, OW = H, (W + 2 - 3) // 2 + 1

    def conv_acc(wq, wz, M):  # pads 1, strides 1 x 2
        return qconv3x3_acc(xq, z, C, H, W, wq, wz, M, 2)

    acc = conv_acc(wq, wz, M)
    y = [f32(f32(a) * f32(s * f32(ws))) for a in acc]
    nodes = [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], "dql"),
             node("ConvInteger", ["xq", "wq", "xz", "wz"], ["acc"], "ci", pads=[1, 1, 1, 1], strides=[1, 2]),
             node("Cast", ["acc"], ["accf"], "cast", to=1), node("Mul", ["xs", "ws"], ["sc"], "scale"),
             node("Mul", ["accf", "sc"], ["y"], "mul"),
             node("ConvInteger", ["xq", "wq", "xz", "wz"], ["acc2"], "ci2", pads=[1, 1, 1, 1], strides=[1, 2])]
    inits = [typed_init("wq", [M, C, 3, 3], 3, wq), typed_init("wz", [M], 3, wz), initializer("ws", [], [ws])]
    open(out + "/dyn_conv.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])],
                                                   [value_info("y", [1, M, OH, OW]), value_info("acc2", [1, M, OH, OW], 6)], opset=11))
    npy(out + "/dyn_conv_x.npy", "<f4", (1, C, H, W), struct.pack("<%df" % len(x), *x))
    npy(out + "/dyn_conv_y.npy", "<f4", (1, M, OH, OW), struct.pack("<%df" % len(y), *y))
    npy(out + "/dyn_conv_acc.npy", "<i4", (1, M, OH, OW), struct.pack("<%di" % len(acc), *acc))
    # without the filter's zero point, 8 output channels: the integer kernel where the CPU
    # has a four-byte dot product (qconv2d_nhwc_rzp: the run-time zero point pads)
    # (its i32 sums a graph output too: channels last converted back as i32, not f32)
    M = 8
    wq = [int(v * 127) for v in rand(M * C * 9, 93, 1.0)]
    acc8 = conv_acc(wq, [0] * M, M)
    y = [f32(f32(a) * f32(s * f32(ws))) for a in acc8]
    nodes = [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], "dql"),
             node("ConvInteger", ["xq", "wq", "xz"], ["acc"], "ci", pads=[1, 1, 1, 1], strides=[1, 2]),
             node("Cast", ["acc"], ["accf"], "cast", to=1), node("Mul", ["xs", "ws"], ["sc"], "scale"),
             node("Mul", ["accf", "sc"], ["y"], "mul")]
    inits = [typed_init("wq", [M, C, 3, 3], 3, wq), initializer("ws", [], [ws])]
    open(out + "/dyn_conv8.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, H, W])],
                                                    [value_info("y", [1, M, OH, OW]), value_info("acc", [1, M, OH, OW], 6)], opset=11))
    npy(out + "/dyn_conv8_y.npy", "<f4", (1, M, OH, OW), struct.pack("<%df" % len(y), *y))
    npy(out + "/dyn_conv8_acc.npy", "<i4", (1, M, OH, OW), struct.pack("<%di" % len(acc8), *acc8))


def dyn_matmul(out):
    """quantize_dynamic's product: DynamicQuantizeLinear of a run-time [2, 3, 4], MatMulInteger
    by an int8 weight with a zero point per column, Cast, Mul by x_scale * w_scale; the
    quantized x (uint8) and its zero point are outputs too. And MatMulInteger of a uint8 input
    whose sums pass 2^24 (300 x 255 x 255): exact in i32."""
    K, N = 4, 5
    x = rand(2 * 3 * K, 81, 3.0)
    x[5] = 0.0
    lo, hi = min(min(x), 0.0), max(max(x), 0.0)
    s = f32(f32(hi - lo) / 255.0)
    z = round(min(max(f32(0.0 - f32(lo / s)), 0.0), 255.0))
    xq = [quantize(v, s, z, 0, 255) for v in x]
    wq = [int(v * 127) for v in rand(K * N, 82, 1.0)]
    wz = [0, 1, -2, 3, 0]
    ws = 0.02
    y = []
    for r in range(6):
        for j in range(N):
            acc = sum((xq[r * K + k] - z) * (wq[k * N + j] - wz[j]) for k in range(K))
            y.append(f32(f32(acc) * f32(s * f32(ws))))
    nodes = [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], "dql"),
             node("MatMulInteger", ["xq", "wq", "xz", "wz"], ["acc"], "mmi"), node("Cast", ["acc"], ["accf"], "cast", to=1),
             node("Mul", ["xs", "ws"], ["sc"], "scale"), node("Mul", ["accf", "sc"], ["y"], "mul")]
    inits = [typed_init("wq", [K, N], 3, wq), typed_init("wz", [N], 3, wz), initializer("ws", [], [ws])]
    open(out + "/dyn_matmul.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 3, K])],
                                                     [value_info("y", [2, 3, N]), value_info("xq", [2, 3, K], 2),
                                                      value_info("xz", [], 2)], opset=11))
    npy(out + "/dyn_matmul_x.npy", "<f4", (2, 3, K), struct.pack("<%df" % len(x), *x))
    npy(out + "/dyn_matmul_y.npy", "<f4", (2, 3, N), struct.pack("<%df" % len(y), *y))
    npy(out + "/dyn_matmul_xq.npy", "<i4", (2, 3, K), struct.pack("<%di" % len(xq), *xq))
    npy(out + "/dyn_matmul_xz.npy", "<i4", (), struct.pack("<i", z))
    # the same without a zero point of B, K = 18 and N = 20: integer kernels where the CPU
    # has VNNI (qdense, the run-time zero point times the columns' sums taken away)
    K, N = 18, 20
    x = rand(2 * 5 * K, 85, 3.0)
    lo, hi = min(min(x), 0.0), max(max(x), 0.0)
    s = f32(f32(hi - lo) / 255.0)
    z = round(min(max(f32(0.0 - f32(lo / s)), 0.0), 255.0))
    xq = [quantize(v, s, z, 0, 255) for v in x]
    wq = [int(v * 127) for v in rand(K * N, 86, 1.0)]
    y = [f32(f32(sum((xq[r * K + k] - z) * wq[k * N + j] for k in range(K))) * f32(s * f32(ws))) for r in range(10) for j in range(N)]
    nodes = [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], "dql"),
             node("MatMulInteger", ["xq", "wq", "xz"], ["acc"], "mmi"), node("Cast", ["acc"], ["accf"], "cast", to=1),
             node("Mul", ["xs", "ws"], ["sc"], "scale"), node("Mul", ["accf", "sc"], ["y"], "mul")]
    inits = [typed_init("wq", [K, N], 3, wq), initializer("ws", [], [ws])]
    open(out + "/dyn_mm8.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 5, K])], [value_info("y", [2, 5, N])], opset=11))
    npy(out + "/dyn_mm8_x.npy", "<f4", (2, 5, K), struct.pack("<%df" % len(x), *x))
    npy(out + "/dyn_mm8_y.npy", "<f4", (2, 5, N), struct.pack("<%df" % len(y), *y))
    K = 300
    a = [255] * K + [(7 * k) % 256 for k in range(K)]
    b = [255 if k % 5 else 254 for k in range(K)] + [(3 * k + 1) % 256 for k in range(K)]  # [K, 2]: columns interleaved
    bt = [b[k] for k in range(K)], [b[K + k] for k in range(K)]
    acc = [sum(a[i * K + k] * bt[j][k] for k in range(K)) for i in range(2) for j in range(2)]
    nodes = [node("MatMulInteger", ["a", "b"], ["y"], "mmi")]
    inits = [typed_init("b", [K, 2], 2, [bt[j][k] for k in range(K) for j in range(2)])]
    open(out + "/int_acc.onnx", "wb").write(model(nodes, inits, [value_info("a", [2, K], 2)], [value_info("y", [2, 2], 6)], opset=10))
    npy(out + "/int_acc_a.npy", "<i4", (2, K), struct.pack("<%di" % len(a), *a))
    npy(out + "/int_acc_y.npy", "<i4", (2, 2), struct.pack("<4i", *acc))


def qaxis(out):
    """QuantizeLinear and DequantizeLinear per axis at run time (int8, axis 1, after a Conv:
    channels last inside), the int8 values an output too."""
    C = 3
    x = rand(C * 4, 91, 2.0)
    k = [1.0, 0.5, -1.0]  # a 1 x 1 Conv: channel c scaled by k[c]
    cx = [x[i] * k[i // 4] for i in range(len(x))]
    s, z = [0.02, 0.01, 0.03], [0, -3, 5]
    q = [quantize(cx[i], s[i // 4], z[i // 4], -128, 127) for i in range(len(x))]
    y = [dequantize(q[i], s[i // 4], z[i // 4]) for i in range(len(x))]
    nodes = [node("Conv", ["x", "k"], ["c"], "conv", group=C), node("QuantizeLinear", ["c", "s", "z"], ["q"], "q", axis=1),
             node("DequantizeLinear", ["q", "s", "z"], ["y"], "dq", axis=1)]
    inits = [initializer("k", [C, 1, 1, 1], k), initializer("s", [C], s), typed_init("z", [C], 3, z)]
    open(out + "/qaxis.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, C, 2, 2])],
                                                [value_info("y", [1, C, 2, 2]), value_info("q", [1, C, 2, 2], 3)]))
    npy(out + "/qaxis_x.npy", "<f4", (1, C, 2, 2), struct.pack("<%df" % len(x), *x))
    npy(out + "/qaxis_y.npy", "<f4", (1, C, 2, 2), struct.pack("<%df" % len(y), *y))
    npy(out + "/qaxis_q.npy", "<i4", (1, C, 2, 2), struct.pack("<%di" % len(q), *q))
    # refused forms
    xi = value_info("x", [2, 3])
    bad = {
        "q_block.onnx": model([node("QuantizeLinear", ["x", "s2", "z2"], ["y"], "qb", axis=1, block_size=2)],
                              [initializer("s2", [2, 2], [0.1] * 4), typed_init("z2", [2, 2], 2, [0] * 4)], [xi],
                              [value_info("y", [2, 3], 2)], opset=21),
        "q_zp_int32.onnx": model([node("QuantizeLinear", ["x", "s1", "z1"], ["y"], "qi")],
                                 [initializer("s1", [], [0.1]), typed_init("z1", [], 6, [0])], [xi], [value_info("y", [2, 3], 6)]),
        "q_axis_opset10.onnx": model([node("QuantizeLinear", ["x", "s3"], ["y"], "q10")], [initializer("s3", [3], [0.1] * 3)],
                                     [xi], [value_info("y", [2, 3], 2)], opset=10),
        "mmi_rows.onnx": model([node("MatMulInteger", ["a", "b", "za"], ["y"], "mr")],
                               [typed_init("b", [3, 2], 2, [1] * 6), typed_init("za", [2], 2, [1, 2])],
                               [value_info("a", [2, 3], 2)], [value_info("y", [2, 2], 6)], opset=10),
    }
    for name, data in bad.items():
        open(out + "/" + name, "wb").write(data)


def castlike(out):
    """CastLike (opset 15; the dynamo exporter writes it for the scalars of an expression):
    an int64 constant cast like the float input (folded), the float input cast like an
    int32 constant (truncated toward zero), both multiplied back in: y = x * 3 + trunc(x)."""
    x = [0.5, -2.25, 3.75, -0.5, 7.0, -7.9]
    y = [v * 3 + float(int(v)) for v in x]
    nodes = [node("CastLike", ["k", "x"], ["kf"], "c1"), node("Mul", ["x", "kf"], ["m"], "mul"),
             node("CastLike", ["x", "like"], ["xi"], "c2"), node("Cast", ["xi"], ["xf"], "back", to=1),
             node("Add", ["m", "xf"], ["y"], "add")]
    like = ivar(2, 6) + field(5, varint(0)) + field(8, "like")  # int32 scalar
    inits = [int_init("k", [3], shape=[]), like]
    open(out + "/castlike.onnx", "wb").write(model(nodes, inits, [value_info("x", [2, 3])], [value_info("y", [2, 3])], opset=15))
    npy(out + "/castlike_x.npy", "<f4", (2, 3), struct.pack("<6f", *x))
    npy(out + "/castlike_ref.npy", "<f4", (2, 3), struct.pack("<6f", *y))


def topk(out):
    """TopK along the middle axis of [2, 6, 3] with ties (integer values): the 4 largest,
    ties to the lower index (values and int64 indices); and the 2 smallest along the last
    axis of the same input."""
    x = [float((i * 7) % 5 - 2) for i in range(36)]
    at = lambda b, j, c: x[(b * 6 + j) * 3 + c]
    v1, i1, v2, i2 = [], [], [], []
    for b in range(2):
        for q in range(4):
            for c in range(3):
                j = sorted(range(6), key=lambda j: (-at(b, j, c), j))[q]
                v1.append(at(b, j, c))
                i1.append(j)
    for b in range(2):
        for j in range(6):
            for q in range(2):
                c = sorted(range(3), key=lambda c: (at(b, j, c), c))[q]
                v2.append(at(b, j, c))
                i2.append(c)
    nodes = [node("TopK", ["x", "k4"], ["v1", "i1"], "top", axis=1),
             node("TopK", ["x", "k2"], ["v2", "i2"], "bottom", axis=-1, largest=0)]
    outs = [value_info("v1", [2, 4, 3]), value_info("i1", [2, 4, 3], 7), value_info("v2", [2, 6, 2]),
            value_info("i2", [2, 6, 2], 7)]
    open(out + "/topk.onnx", "wb").write(model(nodes, [int_init("k4", [4]), int_init("k2", [2])],
                                               [value_info("x", [2, 6, 3])], outs, opset=11))
    npy(out + "/topk_x.npy", "<f4", (2, 6, 3), struct.pack("<36f", *x))
    npy(out + "/topk_v1.npy", "<f4", (2, 4, 3), struct.pack("<24f", *v1))
    npy(out + "/topk_i1.npy", "<i8", (2, 4, 3), struct.pack("<24q", *i1))
    npy(out + "/topk_v2.npy", "<f4", (2, 6, 2), struct.pack("<24f", *v2))
    npy(out + "/topk_i2.npy", "<i8", (2, 6, 2), struct.pack("<24q", *i2))


def shuffle(out):
    """ShuffleNet's channel shuffle after a 1 x 1 Conv (a channels-last value): Reshape [1, 6,
    3, 3] -> [1, 2, 3, 3, 3], Transpose (0, 2, 1, 3, 4), Reshape back, its shape from a
    Constant node that comes after the Transpose (as PyTorch writes it); a Split of the
    result in halves, one through a 1 x 1 Conv (y1), one an output (y2). texc imports the
    three as one channel permutation of the NHWC tensor, the halves as channels-last slices.
    A second shuffle whose transposed value is also an output (y3) is imported node by
    node."""
    C, G, H = 6, 2, 3
    x = rand(4 * H * H, 41, 1.0)
    w1, w2 = rand(C * 4, 42, 0.5), rand(2 * 3, 43, 0.5)
    c = conv(x, 4, H, H, w1, C, 1, 0, 1, None)
    sh = [c[((o % G) * (C // G) + o // G) * H * H + p] for o in range(C) for p in range(H * H)]
    y1 = conv(sh[:3 * H * H], 3, H, H, w2, 2, 1, 0, 1, None)
    y2 = sh[3 * H * H:]
    y3 = [c[(g * (C // G) + j) * H * H + p] for j in range(C // G) for g in range(G) for p in range(H * H)]
    shape_tensor = ivar(1, 4) + ivar(2, 7) + field(7, b"".join(varint(v) for v in [1, C, H, H])) + field(8, "s4")
    const_node = (field(2, "s4") + field(3, "shape4") + field(4, "Constant") +
                  field(5, field(1, "value") + field(5, shape_tensor) + ivar(20, 4)))
    nodes = [
        node("Conv", ["x", "w1"], ["c"], "conv1", kernel_shape=[1, 1]),
        node("Reshape", ["c", "s5"], ["r5"], "split_groups"),
        node("Transpose", ["r5"], ["t5"], "swap", perm=[0, 2, 1, 3, 4]),
        const_node,
        node("Reshape", ["t5", "s4"], ["sh"], "merge"),
        node("Split", ["sh", "halves"], ["a", "y2"], "split", axis=1),
        node("Conv", ["a", "w2"], ["y1"], "conv2", kernel_shape=[1, 1]),
        node("Reshape", ["c", "s5"], ["q5"], "split_groups2"),
        node("Transpose", ["q5"], ["y3"], "swap2", perm=[0, 2, 1, 3, 4]),
    ]
    inits = [initializer("w1", [C, 4, 1, 1], w1), initializer("w2", [2, 3, 1, 1], w2),
             int_init("s5", [1, G, C // G, H, H]), int_init("halves", [3, 3])]
    outs = [value_info("y1", [1, 2, H, H]), value_info("y2", [1, 3, H, H]), value_info("y3", [1, C // G, G, H, H])]
    open(out + "/shuffle.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 4, H, H])], outs))
    npy(out + "/shuffle_x.npy", "<f4", (1, 4, H, H), struct.pack("<%df" % len(x), *x))
    npy(out + "/shuffle_y1.npy", "<f4", (1, 2, H, H), struct.pack("<%df" % len(y1), *y1))
    npy(out + "/shuffle_y2.npy", "<f4", (1, 3, H, H), struct.pack("<%df" % len(y2), *y2))
    npy(out + "/shuffle_y3.npy", "<f4", (1, C // G, G, H, H), struct.pack("<%df" % len(y3), *y3))


def qdq_shuffle(out):
    """The channel shuffle of a QDQ model (onnxruntime's quantize_static after ShuffleNet):
    a QuantizeLinear -> DequantizeLinear pair after the first Reshape and after the
    Transpose, by the scale and zero point of the value shuffled (a Conv's output, quantized
    and dequantized): on that grid each pair is the identity, and texc imports the whole as
    one channel permutation (y1, then quantized again as the model does). A second shuffle
    whose pairs quantize by another scale (three times coarser) is imported node by node
    (y2: the values on the coarser grid, shuffled). A third shuffles the uint8 values
    themselves (QOperator models': y3, dequantized after), one kernel too."""
    C, G, H = 6, 2, 3
    x = rand(4 * H * H, 44, 1.0)
    w = rand(C * 4, 45, 0.5)
    c = conv(x, 4, H, H, w, C, 1, 0, 1, None)
    cz = 128
    cs = next(v for v in (0.01 + 0.0001 * t for t in range(400)) if min(margin(y, v) for y in c) > 1e-3)
    cd = [dequantize(quantize(v, cs, cz, 0, 255), cs, cz) for v in c]
    cs2 = f32(3 * cs)
    c2 = [dequantize(quantize(v, cs2, cz, 0, 255), cs2, cz) for v in cd]
    perm = [(o % G) * (C // G) + o // G for o in range(C)]
    y1 = [cd[perm[o] * H * H + p] for o in range(C) for p in range(H * H)]
    y2 = [c2[perm[o] * H * H + p] for o in range(C) for p in range(H * H)]

    def qdq(src, dst, tag, scale):
        return [node("QuantizeLinear", [src, scale, "cz"], [dst + "_q"], "q" + tag),
                node("DequantizeLinear", [dst + "_q", scale, "cz"], [dst], "dq" + tag)]
    nodes = [node("Conv", ["x", "w"], ["c"], "conv", kernel_shape=[1, 1])] + qdq("c", "cd", "c", "cs")
    for k, sc in (("1", "cs"), ("2", "cs2")):
        nodes += [node("Reshape", ["cd", "s5"], ["r" + k], "split" + k)] + qdq("r" + k, "rd" + k, "r" + k, sc)
        nodes += [node("Transpose", ["rd" + k], ["t" + k], "swap" + k, perm=[0, 2, 1, 3, 4])] + qdq("t" + k, "td" + k, "t" + k, sc)
        nodes += [node("Reshape", ["td" + k, "s4"], ["m" + k], "merge" + k)] + qdq("m" + k, "y" + k, "m" + k, sc)
    # the QOperator form: the shuffle of the uint8 values themselves, then dequantized (y3)
    nodes += [node("Reshape", ["cd_q", "s5"], ["u5"], "split3"), node("Transpose", ["u5"], ["ut"], "swap3", perm=[0, 2, 1, 3, 4]),
              node("Reshape", ["ut", "s4"], ["u4"], "merge3"), node("DequantizeLinear", ["u4", "cs", "cz"], ["y3"], "dq3")]
    inits = [initializer("w", [C, 4, 1, 1], w), initializer("cs", [], [cs]), initializer("cs2", [], [cs2]),
             typed_init("cz", [], 2, [cz]), int_init("s5", [1, G, C // G, H, H]), int_init("s4", [1, C, H, H])]
    outs = [value_info("y1", [1, C, H, H]), value_info("y2", [1, C, H, H]), value_info("y3", [1, C, H, H])]
    open(out + "/qdq_shuffle.onnx", "wb").write(model(nodes, inits, [value_info("x", [1, 4, H, H])], outs))
    npy(out + "/qdq_shuffle_x.npy", "<f4", (1, 4, H, H), struct.pack("<%df" % len(x), *x))
    npy(out + "/qdq_shuffle_y1.npy", "<f4", (1, C, H, H), struct.pack("<%df" % len(y1), *y1))
    npy(out + "/qdq_shuffle_y2.npy", "<f4", (1, C, H, H), struct.pack("<%df" % len(y2), *y2))
    npy(out + "/qdq_shuffle_y3.npy", "<f4", (1, C, H, H), struct.pack("<%df" % len(y1), *y1))


def main(out):
    shuffle(out)
    conv3d_t(out)
    qdq_shuffle(out)
    gather_clip(out)
    reduce_scalar(out)
    growing(out)
    col2im(out)
    const_data(out)
    topk(out)
    castlike(out)
    recurrent(out)
    qdq_conv(out)
    qdq_conv_int(out)
    qdq_conv_int(out, s8=True)
    qdq_residual(out)
    qlinear_conv_int(out)
    qoperator_contrib(out)
    qdq_matmul_int(out)
    qdq_matmul_int(out, s8=True)
    dyn_matmul(out)
    dyn_conv(out)
    qaxis(out)
    multi(out)
    bool_in(out)
    int_ops(out)
    labels(out)
    positions(out)
    gather_nd(out)
    opset20(out)
    external(out)
    embed(out)
    act(out)
    layout_ops(out)
    pad_old(out)
    resize(out)
    grid_sample(out)
    int_moves(out)
    scatter_rt(out)
    einsum_cumsum(out)
    masks(out)
    scatter(out)
    conv1d(out)
    const_reduce(out)
    conv3d(out)
    pool3d(out)
    convtr1d(out)
    convtr2d(out)
    atrous(out)
    se_mean(out)
    attention23(out)
    tensor_scatter(out)
    decoder_step(out)
    float_types(out)
    opset28(out)
    if_const(out)
    recurrences(out)
    loop(out)
    sequences(out)
    convtr3d(out)
    cnn(out)
    block(out)
    gather(out)
    x, y = value_info("x", [2, 3]), value_info("y", [2, 3])
    w = initializer("w", [2, 3], [0.5, -1, 2, 0.25, 3, -2])
    files = {
        # y = relu(x * w + w): a model with weights
        "good.onnx": model([node("Mul", ["x", "w"], ["t"], "mul"), node("Add", ["t", "w"], ["u"], "add"),
                            node("Relu", ["u"], ["y"], "relu")], [w], [x], [y]),
        # a -> b -> a
        "cycle.onnx": model([node("Relu", ["b"], ["a"], "first"), node("Add", ["a", "x"], ["b"], "second"),
                             node("Relu", ["b"], ["y"], "last")], [], [x], [y]),
        # a node without op_type (a corrupt file: it crashed the importer)
        "no_op.onnx": model([field(1, "x") + field(2, "y") + field(3, "anon")], [], [x], [y]),
        # an attribute without a name (a corrupt file: it crashed the attribute lookup)
        "no_attr_name.onnx": model([node("Relu", ["x"], ["y"], "relu") + field(5, ivar(3, 1) + ivar(20, 2))], [], [x], [y]),
        "bad_init.onnx": model([node("Add", ["x", "w"], ["y"], "add")],
                               [initializer("w", [2, 3], [1, 2, 3])], [x], [y]),
        # the same with a symbolic batch (relu(x * w + w), w broadcast over the batch)
        "dyn.onnx": model([node("Mul", ["x", "w"], ["t"], "mul"), node("Add", ["t", "w"], ["u"], "add"),
                           node("Relu", ["u"], ["y"], "relu")], [initializer("w", [3], [0.5, -1, 2])],
                          [value_info("x", ["batch", 3])], [value_info("y", ["batch", 3])]),
        # two inputs of one symbolic batch (x + z): their files must agree on it
        "dyn2.onnx": model([node("Add", ["x", "z"], ["y"], "add")], [],
                           [value_info("x", ["batch", 3]), value_info("z", ["batch", 3])],
                           [value_info("y", ["batch", 3])]),
        # an integer input, then a form texc refuses: the error shown is that form's, not the
        # one of the second attempt that folds the input in ("a graph without runtime inputs")
        "refused_after_int.onnx": model([node("Cast", ["ids"], ["f"], "cast", to=1),
                                         node("MaxPool", ["f"], ["y"], "pool4d", kernel_shape=[2, 2, 2, 2])], [],
                                        [value_info("ids", [1, 1, 2, 2, 2, 2], 7)], [value_info("y", [1, 1, 1, 1, 1, 1])]),
        # a pool whose pad is as large as its kernel (a window wholly in the padding), and a
        # Conv whose kernel_shape is not its filter's: both refused, as onnxruntime does
        "pool_pad.onnx": model([node("MaxPool", ["x4"], ["y4"], "mp", kernel_shape=[2, 2], pads=[2, 0, 0, 0])], [],
                               [value_info("x4", [1, 1, 4, 4])], [value_info("y4", [1, 1, 5, 3])]),
        "kshape.onnx": model([node("Conv", ["x4", "k"], ["y4"], "conv", kernel_shape=[2, 2])],
                             [initializer("k", [1, 1, 3, 3], [0.5] * 9)],
                             [value_info("x4", [1, 1, 4, 4])], [value_info("y4", [1, 1, 2, 2])]),
        "opset5.onnx": model([node("Relu", ["x"], ["y"], "relu")], [], [x], [y], opset=5),
        "opset30.onnx": model([node("Relu", ["x"], ["y"], "relu")], [], [x], [y], opset=30),
        # opsets before 11: Reshape-1 (the shape an attribute) refused, HardSwish before it exists
        "reshape_opset4.onnx": model([node("Reshape", ["x"], ["y"], "rs", shape=[3, 2])], [], [x],
                                     [value_info("y", [3, 2])], opset=4),
        "hardswish_opset13.onnx": model([node("HardSwish", ["x"], ["y"], "hs")], [], [x], [y]),
        # ... and read where they mean the same: Slice-1 (attributes), Clip-1 (min, max
        # attributes), Concat-1 (axis 1 by default): x = [[1, -2, 3], [-4, 5, -6]] ->
        # [[1, -2, 3, -1, 2], [-4, 5, -6, 2, -1]]
        "old.onnx": model([node("Slice", ["x"], ["s"], "slice", starts=[1], ends=[3], axes=[1]),
                           node("Clip", ["s"], ["c"], "clip", min=-1.0, max=2.0),
                           node("Concat", ["x", "c"], ["y"], "concat")], [], [x], [value_info("y", [2, 5])],
                          opset=3),
        "unknown_op.onnx": model([node("Frobnicate", ["x"], ["y"], "frob")], [], [x], [y]),
        # a scale that asks for 3e9 columns (found by mutating the resize model: the tables
        # of such a Resize took all the memory): refused
        "resize_huge.onnx": model([node("Resize", ["x", "", "scales"], ["y"], "up")],
                                  [initializer("scales", [2], [1.0, 1e9])], [x], [value_info("y", [2, 3000000000])]),
        "undefined.onnx": model([node("Add", ["x", "nowhere"], ["y"], "add")], [], [x], [y]),
        # an attribute longer than any form takes (7 pads): an error, not its first values
        # a graph input with no name field at all (protobuf-c leaves it NULL): once a crash
        # in the check for Resize's scales given as files
        "noname_input.onnx": model([node("Resize", ["x", "", "s"], ["y"], "up", mode="nearest")], [],
                                   [value_info("x", [1, 1, 2, 2]), field(2, field(1, ivar(1, 1) + field(2, field(1, ivar(1, 4)))))],
                                   [value_info("y", [1, 1, 4, 4])], opset=13),
        "long_attr.onnx": model([node("MaxPool", ["x"], ["y"], "pool", kernel_shape=[1], pads=[0] * 7)], [],
                                [value_info("x", [1, 2, 5])], [value_info("y", [1, 2, 5])]),
    }
    for name, data in files.items():
        open("%s/%s" % (out, name), "wb").write(data)
    npy(out + "/x.npy", "<f4", (2, 3), struct.pack("<6f", 1, -2, 3, -4, 5, -6))
    npy(out + "/x3.npy", "<f4", (3, 3), struct.pack("<9f", *range(9)))  # dyn2.onnx: a batch of 3
    npy(out + "/ids6.npy", "<i8", (1, 1, 2, 2, 2, 2), struct.pack("<16q", *range(16)))  # refused_after_int.onnx
    npy(out + "/x64.npy", "<f8", (2, 3), struct.pack("<6d", 1, -2, 3, -4, 5, -6))
    npy(out + "/x_v2.npy", "<f4", (2, 3), struct.pack("<6f", 1, -2, 3, -4, 5, -6), version=2)
    npy(out + "/x_i64.npy", "<i8", (2, 3), struct.pack("<6q", 1, -2, 3, -4, 5, -6))
    npy(out + "/x_inexact.npy", "<i8", (2, 3), struct.pack("<6q", 16777217, -2, 3, -4, 5, -6))
    npy(out + "/bad_shape.npy", "<f4", (3, 2), struct.pack("<6f", 1, 2, 3, 4, 5, 6))
    npy(out + "/complex.npy", "<c8", (2, 3), b"\0" * 48)
    npy(out + "/short.npy", "<f4", (2, 3), b"\0" * 20)
    open(out + "/not_npy.npy", "wb").write(b"this is text, not numpy\n")


if __name__ == "__main__":
    main(sys.argv[1])
