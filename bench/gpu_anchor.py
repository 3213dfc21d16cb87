#!/usr/bin/env python3
"""gpu_anchor.py — the anchors texc's CUDA figures are read against, on the same GPU in the
same run (bench/gpu.sh): cuBLAS sgemm through torch.mm with TF32 off, and torchvision's
resnet18 / mobilenet_v2 at batch 1 in eager mode (cuDNN) and replayed from a CUDA graph.

    python3 bench/gpu_anchor.py matmul 1024 4096     # one line per size
    python3 bench/gpu_anchor.py nets                   # resnet18, mobilenet_v2

Times are medians of ROUNDS (default 5) measurements by CUDA events, each the mean of
enough calls to last 50 ms, after a warm-up."""
import os
import statistics
import sys

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
ROUNDS = int(os.environ.get("ROUNDS", "5"))


def time_ms(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record(); fn(); end.record(); torch.cuda.synchronize()
    number = max(1, int(50 / max(start.elapsed_time(end), 1e-3)))
    runs = []
    for _ in range(ROUNDS):
        start.record()
        for _ in range(number):
            fn()
        end.record()
        torch.cuda.synchronize()
        runs.append(start.elapsed_time(end) / number)
    return statistics.median(runs)


def matmul(sizes):
    for n in sizes:
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        ms = time_ms(lambda: torch.mm(a, b))
        print(f"anchor matmul {n}: cuBLAS sgemm (torch.mm, TF32 off) {ms:.4f} ms "
              f"{2 * n ** 3 / ms / 1e9:.1f} TFLOP/s", flush=True)


def nets():
    import torchvision
    for name in ("resnet18", "mobilenet_v2"):
        model = getattr(torchvision.models, name)(weights=None).cuda().eval()
        x = torch.randn(1, 3, 224, 224, device="cuda")
        with torch.no_grad():
            eager = time_ms(lambda: model(x))
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    model(x)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                model(x)
            graphed = time_ms(graph.replay)
        print(f"anchor {name}: PyTorch eager (cuDNN) {eager:.3f} ms, CUDA graph {graphed:.3f} ms",
              flush=True)


if __name__ == "__main__":
    print(f"anchor device: {torch.cuda.get_device_name()} (torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()})", flush=True)
    if sys.argv[1] == "matmul":
        matmul([int(s) for s in sys.argv[2:]])
    else:
        nets()
