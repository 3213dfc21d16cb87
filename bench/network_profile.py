#!/usr/bin/env python3
"""network_profile.py — where a network's time goes, texc beside onnxruntime, layer by layer.

  python3 bench/network_profile.py NET.tex [RECORDS] [THREADS]

Runs `texc bench -v NET.tex` (each task's time inside the network and hot, with the records
of RECORDS when given; an empty records file means the untuned defaults) and the same
network in onnxruntime (built by bench/network_ort.py from NET.tex on texc's own weights,
TEXC_NET_DUMP) with its profiler on, THREADS intra-op threads (default 2) for both. Prints
texc's task table, then onnxruntime's nodes in execution order with their mean time over 70
runs and input shapes (NCHW), so that a layer that loses stands out. Needs: onnxruntime,
onnx, numpy. Not part of `make test`.
"""
import collections, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import network_ort  # noqa: E402
import onnxruntime as ort  # noqa: E402


def main():
    net = sys.argv[1]
    records = sys.argv[2] if len(sys.argv) > 2 else None
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    texc = os.environ.get("TEXC", os.path.join(HERE, "..", "build", "texc"))
    env = dict(os.environ, TEX_NUM_THREADS=str(threads))
    rec = ["--records", records] if records else ["--records", os.devnull]
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([texc, "run", net] + rec, env=dict(env, TEXC_NET_DUMP=d), check=True,
                       stdout=subprocess.DEVNULL)
        out = subprocess.run([texc, "bench", "-v", net, "--repeat", "20"] + rec, env=env, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        print("== texc (%d threads)" % threads)
        print(out.rstrip())
        w = network_ort.load(d)
        w.pop("output")
        model, inp = network_ort.build(net, w)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(d, "ort")
        s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        runs = 70
        for _ in range(runs):
            s.run(None, {"input": inp})
        events = json.load(open(s.end_profiling()))
    total, info, order = collections.defaultdict(float), {}, []
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        n = e["name"][:-len("_kernel_time")]
        if n not in total:
            order.append(n)
        total[n] += e["dur"]
        a = e.get("args", {})
        info[n] = (a.get("op_name", "?"), [list(x.values())[0] for x in a.get("input_type_shape", [])][:2])
    print("== onnxruntime %s (%d threads): mean of %d runs, nodes in order" % (ort.__version__, threads, runs))
    print("%-32s %-18s %10s  %s" % ("node", "op", "ms", "inputs (NCHW)"))
    for n in order:
        print("%-32s %-18s %10.4f  %s" % (n[:32], info[n][0], total[n] / runs / 1000, info[n][1]))
    print("sum %.3f ms" % (sum(total.values()) / runs / 1000))


if __name__ == "__main__":
    main()
