#!/usr/bin/env python3
"""gen_kernels.py SEED [COUNT] [OUTDIR] — random VALID .tex kernels for differential testing.

Each file holds one kernel: random input tensors of random dtypes and ranks over a few
small sizes (constants and one symbolic size, bound with -D S=VALUE by the caller: see the
`# DEFINES:` line), then 1-3 statements (pure computes and reductions with += max= min= *=,
intermediates declared with `tensor`), whose values are random expression trees: loads with
indices kept in bounds by construction (same-extent axes, clamps, guards, reduction axes with
`where` ranges, floor division and modulo), arithmetic, math calls, selects and casts over all
dtypes, with integer literals at the edges of their dtype (INT64_MAX, INT64_MIN, 127, ...)
now and then. Every file must be accepted by texc; `texc run F --check` and
`texc fuzz-schedule F` must then agree with the interpreter (tests/fuzz/kernels.sh)."""
import os
import random
import sys

FLOATS = ["f32", "f64", "f16"]
# Integer literals at the edges of each dtype (sums of them wrap): the compiled code and the
# interpreter must agree there too.
EDGES = {
    "i64": ["9223372036854775807", "(-9223372036854775807 - 1)", "4611686018427387904",
            "-9223372036854775807"],
    "i32": ["2147483647", "(-2147483647 - 1)", "1073741824"],
    "i16": ["32767", "(-32767 - 1)"],
    "i8": ["127", "(-127 - 1)"],
    "u8": ["255", "128"],
    "u32": ["4294967295", "2147483648"],
}
INTS = ["i8", "i16", "i32", "i64", "u8", "u32"]
DTYPES = FLOATS * 3 + INTS + ["bool"]


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.sizes = {}  # name -> value
        self.tensors = []  # (name, dtype, [size names])
        self.depth = 0

    def size_names(self):
        n = self.r.randint(2, 3)
        for i in range(n):
            self.sizes["N%d" % i] = self.r.randint(1, 7)
        if self.r.random() < 0.4:
            self.sizes["S"] = self.r.randint(1, 6)  # symbolic: bound by -D

    def shape(self):
        return [self.r.choice(list(self.sizes)) for _ in range(self.r.randint(1, 3))]

    # ---- expressions: (text, dtype); kind 'f' float, 'i' int, 'b' bool ----
    def lit(self, dt):
        if dt == "bool":
            return "bool(%d)" % self.r.randint(0, 1)
        if dt in FLOATS:
            return self.r.choice(["0.0", "1.0", "0.5", "2.0", "-1.5", "3.0", "0.25"])
        if dt in EDGES and self.r.random() < 0.12:
            return self.r.choice(EDGES[dt])
        hi = 3 if dt in ("u8", "u32") else 5
        return str(self.r.randint(0 if dt[0] == "u" else -3, hi)) if self.r.random() < 0.8 else "1"

    def index(self, ctx, size, guards):
        """An index expression for a dimension of extent SIZE, in bounds by construction."""
        axes = [a for a, s in ctx["axes"] if s == size]
        c = self.r.random()
        if axes and c < 0.55:
            a = self.r.choice(axes)
            if self.r.random() < 0.2:  # a shifted access with a padding guard
                k = self.r.randint(1, 2)
                guards.append("%s >= %d" % (a, k))
                return "%s - %d" % (a, k)
            return a
        same = [r for r, s in ctx["raxes"] if s == size]
        if ctx["reduce"] and c < 0.75 and same and (len(ctx["raxes"]) >= 3 or self.r.random() < 0.6):
            return self.r.choice(same)
        if ctx["reduce"] and c < 0.75 and len(ctx["raxes"]) < 3:
            name = "r%d" % len(ctx["raxes"])
            ctx["raxes"].append((name, size))
            return name
        other = [a for a, s in ctx["axes"]]
        if not other:
            return "0"
        a = self.r.choice(other)
        c = self.r.random()
        if c < 0.3:
            return "min(%s, %s - 1)" % (a, size)
        if c < 0.5:
            return "%s %% %s" % (a, size)
        if c < 0.65:
            return "%s / 2 %% %s" % (a, size)
        if c < 0.8:
            return "max(min(%s, %s - 1), 0)" % (a, size)
        guards.append("%s < %s" % (a, size))
        return a

    def load(self, ctx, dt):
        cands = ctx["readable"]
        if not cands:
            return self.lit(dt)
        name, tdt, shape = self.r.choice(cands)
        guards = []
        idx = [self.index(ctx, s, guards) for s in shape]
        e = "%s[%s]" % (name, ", ".join(idx))
        if tdt != dt:
            if tdt in FLOATS and dt not in FLOATS and dt != "bool":
                e = "%s(floor(%s(%s) * 4.0))" % (dt, "f32", e)  # inputs are in [-1, 1)
            elif dt == "bool":
                e = "(%s != %s)" % (e, "0.0" if tdt in FLOATS else "0") if tdt != "bool" else e
            else:
                e = "%s(%s)" % (dt, e)
        if guards:
            e = "(%s ? %s : %s)" % (" && ".join(guards), e, self.lit(dt))
        return e

    def expr(self, ctx, dt):
        self.depth += 1
        try:
            if self.depth > 4 or self.r.random() < 0.3:
                return self.load(ctx, dt) if self.r.random() < 0.8 else self.lit(dt)
            if dt == "bool":
                return self.bool_expr(ctx)
            c = self.r.random()
            if c < 0.45:
                op = self.r.choice(["+", "-", "*"] + (["/"] if dt in FLOATS else []))
                return "(%s %s %s)" % (self.expr(ctx, dt), op, self.expr(ctx, dt))
            if c < 0.55 and dt not in FLOATS:
                op = self.r.choice(["/", "%"])
                d = self.r.choice([2, 3, 4]) if dt[0] == "u" else self.r.choice([2, 3, -2, 5])
                return "(%s %s %d)" % (self.expr(ctx, dt), op, d)
            if c < 0.65:
                return "%s(%s, %s)" % (self.r.choice(["min", "max"]), self.expr(ctx, dt), self.expr(ctx, dt))
            if c < 0.78 and dt in FLOATS:
                fn = self.r.choice(["exp", "tanh", "sigmoid", "abs", "floor", "ceil", "sqrt", "log",
                                    "erf", "sin", "atan", "round", "trunc", "sign", "expm1", "%"])
                if fn == "%":  # numpy's mod; the divisor kept away from zero
                    return "(%s %% (abs(%s) + 0.25))" % (self.expr(ctx, dt), self.expr(ctx, dt))
                arg = self.expr(ctx, dt)
                if fn in ("sqrt", "log"):
                    arg = "abs(%s) + 0.5" % arg
                if fn == "exp":
                    arg = "tanh(%s)" % arg
                return "%s(%s)" % (fn, arg)
            if c < 0.86:
                return "(%s ? %s : %s)" % (self.bool_expr(ctx), self.expr(ctx, dt), self.expr(ctx, dt))
            if c < 0.93:  # a cast from another dtype
                src = self.r.choice(INTS + ["bool"] + FLOATS)
                if src in FLOATS and dt not in FLOATS:
                    return self.load(ctx, dt)
                return "%s(%s)" % (dt, self.expr(ctx, src))
            if dt not in FLOATS and c < 0.97:  # bit operators, shift counts of any value
                op = self.r.choice(["&", "|", "^", "<<", ">>"])
                if self.r.random() < 0.2:
                    return "~%s" % self.expr(ctx, dt)
                return "(%s %s %s)" % (self.expr(ctx, dt), op, self.expr(ctx, dt))
            if dt in ("i32", "i64", "i16", "i8"):
                return "abs(%s)" % self.expr(ctx, dt)
            return "-%s" % self.expr(ctx, dt) if dt in FLOATS else self.expr(ctx, dt)
        finally:
            self.depth -= 1

    def bool_expr(self, ctx):
        c = self.r.random()
        if c < 0.5:
            t = self.r.choice(FLOATS + INTS)
            op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
            return "(%s %s %s)" % (self.expr(ctx, t), op, self.expr(ctx, t))
        if c < 0.7:
            return "(%s %s %s)" % (self.expr(ctx, "bool"), self.r.choice(["&&", "||"]), self.expr(ctx, "bool"))
        if c < 0.8:
            return "!%s" % self.expr(ctx, "bool")
        return self.load(ctx, "bool")

    def statement(self, name, dt, shape, last):
        axes = [("%s%d" % ("ijlmnp"[d], 0), s) for d, s in enumerate(shape)]
        axes = [("%s" % "ijlmnp"[d], s) for d, s in enumerate(shape)]
        rop = "="
        if dt != "bool" and self.r.random() < 0.5:
            rop = self.r.choice(["+=", "+=", "max=", "min=", "*="]) if dt in FLOATS else self.r.choice(["+=", "max=", "min="])
            if dt == "f16" and rop in ("+=", "*="):
                rop = "max="  # f16 sums in another order differ by more than a tolerance
        ctx = {"axes": axes, "reduce": rop != "=", "raxes": [], "readable": list(self.tensors)}
        value = self.expr(ctx, dt)
        if rop != "=" and not ctx["raxes"]:  # make sure there is a reduction axis
            ctx["raxes"].append(("r0", self.r.choice([s for s in self.sizes if s != "S"])))
            value = "%s + %s(r0)" % (value, dt) if dt not in FLOATS else "%s + %s(r0) * 0.125" % (value, dt)
        where = ""
        if ctx["raxes"]:
            where = " where " + ", ".join("%s in 0..%s" % (r, s) for r, s in ctx["raxes"])
        return "  %s[%s] %s %s%s" % (name, ", ".join(a for a, _ in axes), rop, value, where)

    def kernel(self, idx):
        self.size_names()
        consts = [s for s in self.sizes if s != "S"]
        lines = ["# generated by tests/fuzz/gen_kernels.py"]
        if "S" in self.sizes:
            lines.append("# DEFINES: -D S=%d" % self.sizes["S"])
        lines.append("const " + ", ".join("%s = %d" % (s, self.sizes[s]) for s in consts))
        params = []
        for t in range(self.r.randint(1, 3)):
            dt, shape = self.r.choice(DTYPES), self.shape()
            self.tensors.append(("X%d" % t, dt, shape))
            params.append("X%d: %s[%s]" % (t, dt, ", ".join(shape)))
        nstmt = self.r.randint(1, 3)
        body, out = [], None
        for s in range(nstmt):
            last = s == nstmt - 1
            dt, shape = self.r.choice(DTYPES), self.shape()
            if not last and "S" in shape and not any("S" in t[2] for t in self.tensors):
                shape = [d if d != "S" else "N0" for d in shape]  # a `tensor` cannot introduce a size
            name = "Y" if last else "T%d" % s
            decl = "%s: %s[%s]" % (name, dt, ", ".join(shape))
            if last:
                out = decl
            else:
                body.append("  tensor " + decl)
            body.append(self.statement(name, dt, shape, last))
            self.tensors.append((name, dt, shape))
        lines.append("kernel k%d(%s) -> %s {" % (idx, ", ".join(params), out))
        lines += body
        lines.append("}")
        return "\n".join(lines) + "\n"


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    outdir = sys.argv[3] if len(sys.argv) > 3 else None
    for n in range(count):
        text = Gen(random.Random(seed * 100003 + n)).kernel(n)
        if outdir:
            with open(os.path.join(outdir, "gen_%d_%d.tex" % (seed, n)), "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)


if __name__ == "__main__":
    main()
