"""vector_math.py — inputs for vector_math.tex and the check of its outputs, without numpy.

  vector_math.py inputs X.npy          floats over the functions' whole ranges and edges
  vector_math.py check FN X.npy Y.npy ULPS
      Y = FN(X) lane by lane (FN: exp, erf, tanh, log, log1p, expm1) within ULPS units in the
      last place of the correctly rounded f32 result (Python's math in double, rounded); infinities,
      NaN and zeros exactly. Prints the worst error and its input.
"""
import math
import random
import struct
import sys


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def write(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def read(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


def inputs(path):
    v = [i * 0.004 - 130.0 for i in range(65000)]  # -130 .. 130
    v += [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, -1e-30, 1e-8, 3e-39, -3e-39,
          88.72, 88.73, -87.33, -103.9, -104.0, 0.5, 1.0, -1.0, 3.99, 4.0, 4.01, 1e30, -1e30,
          0.55, -0.55, 0.5499999, 9.0, 9.01, -9.0, -1.0, -0.9999999, 1e-38, 1.4e-45, 0.70710677, 0.70710683]
    v += [i * 0.0001 - 1.0 for i in range(0, 20001, 7)]  # tanh's two forms meet at 0.55
    rng = random.Random(7)
    while len(v) < 70000:  # random finite floats of every exponent
        x = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
        if math.isfinite(x):
            v.append(x)
    write(path, [f32(x) for x in v])


def ulp(y):
    y = abs(y)
    if y == 0 or y < 1.1754943508222875e-38:
        return 1.401298464324817e-45
    e = math.frexp(y)[1]
    return math.ldexp(1.0, e - 24)


def check(fn, xpath, ypath, ulps):
    def domain(g, lo):  # g outside its domain: NaN, at its pole: -inf
        return lambda v: math.nan if v < lo else -math.inf if v == lo else g(v)
    f = {"exp": math.exp, "erf": math.erf, "tanh": math.tanh, "log": domain(math.log, 0.0),
         "log1p": domain(math.log1p, -1.0), "expm1": math.expm1}[fn]
    xs, ys = read(xpath), read(ypath)
    if len(xs) != len(ys):
        print("length %d != %d" % (len(xs), len(ys)))
        return 1
    worst, at, bad = 0.0, None, 0
    for x, y in zip(xs, ys):
        try:
            ref = f(x)
        except OverflowError:
            ref = math.inf
        if not math.isnan(ref) and abs(ref) <= 3.4028234663852886e38:
            ref = f32(ref)  # rounded to f32; may round to inf
        else:
            ref = ref if math.isnan(ref) else math.copysign(math.inf, ref)
        if math.isnan(ref) or math.isnan(y):
            if math.isnan(ref) != math.isnan(y):
                bad += 1
                print("mismatch at %r: %r against %r" % (x, y, ref))
            continue
        if math.isinf(ref) or math.isinf(y) or ref == 0 or y == 0:
            err = 0.0 if y == ref or abs(y - ref) <= ulp(ref) else math.inf
        else:
            err = abs(y - ref) / ulp(ref)
        if err > worst:
            worst, at = err, x
    print("%s: %d values, worst %.2f ulp at %r" % (fn, len(xs), worst, at))
    ok = worst <= float(ulps) and not bad
    print("ok" if ok else "FAILED: more than %s ulp" % ulps)
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        inputs(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]))
