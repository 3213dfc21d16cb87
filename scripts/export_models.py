#!/usr/bin/env python3
"""export_models.py — torchvision models to ONNX, with onnxruntime's result on a seeded input.

    /work/pyenv/bin/python scripts/export_models.py OUTDIR [MODEL ...]

For each MODEL (default: all of MODELS; any other torchvision classification model by its
name too, e.g. resnext50_32x4d, mobilenet_v3_small, swin_t: MORE lists 20 that texc has
matched) writes OUTDIR/MODEL.onnx (random weights from
torch.manual_seed(0), the constant-initialized ones drawn too: randomize; eval mode, opset
17, batch 1, 224x224; the legacy TorchScript exporter, dynamo=False, which writes plain
graphs), OUTDIR/MODEL.in.npy (a seeded normal input, [1, 3, 224, 224] f32) and
OUTDIR/MODEL.ref.npy (onnxruntime's output on it, one thread). Needs torch, torchvision,
onnx and onnxruntime (PyPI); make test does not (docs/ONNX.md, Models).
"""
import os
import sys

MODELS = [
    "resnet18", "mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0", "efficientnet_b0",
    "resnet50", "densenet121", "googlenet", "regnet_y_400mf", "mnasnet0_5",
    "convnext_tiny", "vit_b_16",
]

# Beyond MODELS: checked by hand against onnxruntime (docs/ONNX.md, Models), 2026-11-28.
MORE = [
    "resnext50_32x4d", "mobilenet_v3_large", "mobilenet_v3_small", "inception_v3", "wide_resnet50_2",
    "efficientnet_v2_s", "swin_t", "maxvit_t", "regnet_x_1_6gf", "shufflenet_v2_x0_5", "alexnet", "vgg11",
    "densenet161", "mnasnet1_0", "efficientnet_b3", "convnext_small", "vit_b_32", "squeezenet1_0",
    "regnet_y_1_6gf", "resnet34",
]


def build(name):
    import torch
    import torchvision

    torch.manual_seed(0)
    kw = {"weights": None}
    if name == "googlenet":
        kw.update(aux_logits=False, init_weights=False)
    model = getattr(torchvision.models, name)(**kw)
    randomize(model)
    return model.eval()


def randomize(model):
    """Draw what torchvision initializes to constants, so that every path counts: batch
    norm statistics and affine parameters (else the identity), layer norm's, and any
    parameter whose values are all equal (vit's zero head and class token, convnext's
    1e-6 layer scales)."""
    import torch

    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
                mod.running_mean.normal_(0, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
            if isinstance(mod, (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm)):
                if mod.weight is not None:
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.normal_(0, 0.1)
        for p in model.parameters():
            flat = p.reshape(-1)
            if flat.numel() > 1 and bool((flat == flat[0]).all()):
                v = float(flat[0])
                if v == 0:
                    p.normal_(0, 0.02)
                else:
                    p.uniform_(0.1, 0.5)


def export(name, outdir):
    import numpy as np
    import onnxruntime as ort
    import torch

    model = build(name)
    # nn.MultiheadAttention's fused inference path (aten::_native_multi_head_attention)
    # has no ONNX form in the legacy exporter: the plain path exports MatMul/Softmax.
    torch.backends.mha.set_fastpath_enabled(False)
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32))
    path = os.path.join(outdir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, opset_version=17, dynamo=False,
                          input_names=["input"], output_names=["output"])
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    ref = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    np.save(os.path.join(outdir, name + ".in.npy"), x.numpy())
    np.save(os.path.join(outdir, name + ".ref.npy"), ref)
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, output {list(ref.shape)}", flush=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    names = sys.argv[2:] or MODELS
    import torchvision

    for n in names:
        if n not in MODELS and n not in torchvision.models.list_models(module=torchvision.models):
            print(f"export_models.py: unknown model {n} (one of {', '.join(MODELS)}, or a torchvision "
                  f"classification model)", file=sys.stderr)
            return 2
    for n in names:
        export(n, outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
