#!/usr/bin/env python3
"""onnx_node_tests.py DIR OP... — write ONNX's backend node tests of the operators OP (all
their cases in the installed `onnx` package, PyPI) into DIR in libonnx-testdata's layout, so
that tests/suites/onnx.sh runs them: `ONNX_TESTDATA=DIR bash tests/suites/onnx.sh`.

Debian's libonnx-testdata stops at the operators of ONNX 1.14; this is how the operators of
later opsets (GroupNormalization: 18 and 21; Attention, RMSNormalization, RotaryEmbedding:
23; Swish, TensorScatter: 24; CumProd: 26; CausalConvWithState: 27; SwiGLU and the changed
ones: 28) are checked against ONNX's reference. Comparison only: `make test` does not need it.
  /work/torchenv/bin/python scripts/onnx_node_tests.py /tmp/nodes Attention RMSNormalization RotaryEmbedding Swish GroupNormalization TensorScatter
  /work/torchenv/bin/python scripts/onnx_node_tests.py /tmp/n28 CumProd SwiGLU SpaceToDepth Range CausalConvWithState \
      Mod DepthToSpace Celu Einsum OneHot ReduceLogSum ReduceLogSumExp ReverseSequence Compress
"""
import os
import shutil
import subprocess
import sys


def write_op(out, op):
    from onnx import numpy_helper
    from onnx.backend.test.case import node
    n = 0
    for case in node.collect_testcases(op):
        d = os.path.join(out, case.name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (ins, outs) in enumerate(case.data_sets):
            sd = os.path.join(d, "test_data_set_%d" % i)
            os.makedirs(sd)
            for kind, vals, names in (("input", ins, case.model.graph.input), ("output", outs, case.model.graph.output)):
                for j, x in enumerate(vals):
                    with open(os.path.join(sd, "%s_%d.pb" % (kind, j)), "wb") as f:
                        f.write(numpy_helper.from_array(x, names[j].name).SerializeToString())
        n += 1
    print("%s: %d tests" % (op, n))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    if sys.argv[1] == "--one":  # one operator per process: collect_testcases keeps its first filter
        write_op(sys.argv[2], sys.argv[3])
    else:
        for op in sys.argv[2:]:
            subprocess.run([sys.executable, __file__, "--one", sys.argv[1], op], check=True, stderr=subprocess.DEVNULL)
