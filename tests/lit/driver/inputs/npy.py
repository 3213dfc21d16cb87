"""npy.py — .npy files for the lit tests without numpy (numpy's format 1.0, by hand).

  npy.py write OUT.npy DESCR SHAPE V...   e.g. write a.npy '<f4' 2,3 0 1 2 3 4 5 ('' SHAPE: rank 0)
  npy.py show FILE.npy                    prints `DESCR SHAPE: V V ...`
"""
import ast
import struct
import sys

CODES = {"f2": "e", "f4": "f", "f8": "d", "i1": "b", "i2": "h", "i4": "i", "i8": "q",
         "u1": "B", "u2": "H", "u4": "I", "u8": "Q", "b1": "?"}


def write(path, descr, shape, values):
    dims = tuple(int(d) for d in shape.split(",") if d)
    code = CODES[descr[1:]]
    conv = float if code in "efd" else (lambda v: v not in ("0", "False")) if code == "?" else int
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, dims)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%d%s" % (len(values), code), *[conv(v) for v in values]))


def show(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    h = ast.literal_eval(data[10:10 + hlen].decode())
    code = CODES[h["descr"][1:]]
    n = 1
    for d in h["shape"]:
        n *= d
    vals = struct.unpack("<%d%s" % (n, code), data[10 + hlen:])
    print(h["descr"], list(h["shape"]), ":", " ".join("%g" % v if code in "efd" else str(v) for v in vals))


if sys.argv[1] == "write":
    write(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
else:
    show(sys.argv[2])
