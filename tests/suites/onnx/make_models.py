#!/usr/bin/env python3
"""make_models.py DIR — small ONNX models and .npy files for tests/suites/onnx.sh.

A few protobuf fields written by hand (the test needs no onnx package): good models with
initializers, and bad ones (a cycle, an initializer of the wrong size, an unknown opset),
plus .npy files of a wrong shape, dtype or magic.
"""
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


def value_info(name, shape):
    dims = b"".join(field(1, ivar(1, d)) for d in shape)
    tensor = ivar(1, 1) + field(2, dims)  # elem_type FLOAT, shape
    return field(1, name) + field(2, field(1, tensor))


def initializer(name, shape, values):
    return (b"".join(ivar(1, d) for d in shape) + ivar(2, 1) +
            field(4, struct.pack("<%df" % len(values), *values)) + field(8, name))


def node(op, inputs, outputs, name):
    return (b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs) +
            field(3, name) + field(4, op))


def model(nodes, inits, inputs, outputs, opset=13):
    g = (b"".join(field(1, n) for n in nodes) + field(2, "g") +
         b"".join(field(5, t) for t in inits) + b"".join(field(11, v) for v in inputs) +
         b"".join(field(12, v) for v in outputs))
    return ivar(1, 8) + field(8, field(1, "") + ivar(2, opset)) + field(7, g)


def npy(path, descr, shape, data):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % s for s in shape))
    h = d + " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + data)


def main(out):
    x, y = value_info("x", [2, 3]), value_info("y", [2, 3])
    w = initializer("w", [2, 3], [0.5, -1, 2, 0.25, 3, -2])
    files = {
        # y = relu(x * w + w): a model with weights
        "good.onnx": model([node("Mul", ["x", "w"], ["t"], "mul"), node("Add", ["t", "w"], ["u"], "add"),
                            node("Relu", ["u"], ["y"], "relu")], [w], [x], [y]),
        # a -> b -> a
        "cycle.onnx": model([node("Relu", ["b"], ["a"], "first"), node("Add", ["a", "x"], ["b"], "second"),
                             node("Relu", ["b"], ["y"], "last")], [], [x], [y]),
        "bad_init.onnx": model([node("Add", ["x", "w"], ["y"], "add")],
                               [initializer("w", [2, 3], [1, 2, 3])], [x], [y]),
        "opset5.onnx": model([node("Relu", ["x"], ["y"], "relu")], [], [x], [y], opset=5),
        "unknown_op.onnx": model([node("Frobnicate", ["x"], ["y"], "frob")], [], [x], [y]),
        "undefined.onnx": model([node("Add", ["x", "nowhere"], ["y"], "add")], [], [x], [y]),
    }
    for name, data in files.items():
        open("%s/%s" % (out, name), "wb").write(data)
    npy(out + "/x.npy", "<f4", (2, 3), struct.pack("<6f", 1, -2, 3, -4, 5, -6))
    npy(out + "/x64.npy", "<f8", (2, 3), struct.pack("<6d", 1, -2, 3, -4, 5, -6))
    npy(out + "/bad_shape.npy", "<f4", (3, 2), struct.pack("<6f", 1, 2, 3, 4, 5, 6))
    npy(out + "/complex.npy", "<c8", (2, 3), b"\0" * 48)
    npy(out + "/short.npy", "<f4", (2, 3), b"\0" * 20)
    open(out + "/not_npy.npy", "wb").write(b"this is text, not numpy\n")


if __name__ == "__main__":
    main(sys.argv[1])
