#!/usr/bin/env python3
"""export_zoo.py — models beyond classification to ONNX, as users export them today
(torch.onnx.export with dynamo=True, opset 18), with onnxruntime's result on a seeded input.

    /work/torchenv/bin/python scripts/export_zoo.py [--opset N] [--half] OUTDIR [MODEL ...]

(--opset 23: PyTorch writes scaled_dot_product_attention as ONNX's Attention, its RMSNorm as
RMSNormalization. --half: the model and its float inputs in float16, model.half(), as
exported for a GPU; texc computes such a model in f32, docs/ONNX.md "Element types".)

For each MODEL (default: all of ZOO) writes OUTDIR/MODEL.onnx (random weights from
torch.manual_seed(0): torchvision's and transformers' own initialization, small
configurations of the transformers so that a run takes a second), OUTDIR/MODEL.in0.npy
(.in1.npy, ...: one file per graph input, seeded) and OUTDIR/MODEL.ref.npy (onnxruntime's
first output, one thread). Segmentation (FCN, DeepLabV3 with its atrous pyramid, LR-ASPP,
SegFormer), a U-Net (GroupNorm, ConvTranspose, Concat), video (r3d_18), detection heads
(FCOS, SSDlite: the network without its box decoding and NMS), recurrent layers,
transformer encoders and decoders (DistilBERT, BART, DeBERTa, ConvBERT, T5, GPT-2, Llama
with grouped-query attention), audio (Whisper's encoder, wav2vec 2) and vision
transformers (CLIP, LeViT, MobileViT). bench/onnx_zoo.sh checks and times them against
onnxruntime. Needs torch, torchvision, transformers, onnx and onnxruntime (PyPI); make
test does not.
"""
import os
import sys


class Field:
    """A model whose forward returns a dict or a model output: the field KEY of it, called
    with its input as keyword KW (None: positionally)."""

    @staticmethod
    def wrap(model, key, kw=None):
        import torch

        class W(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, x):
                out = self.m(**{kw: x}) if kw else self.m(x)
                return out[key] if isinstance(out, dict) else getattr(out, key)

        return W()


def unet():
    import torch
    nn = torch.nn

    def block(a, b):
        return nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.GroupNorm(8, b), nn.SiLU(), nn.Conv2d(b, b, 3, padding=1),
                             nn.BatchNorm2d(b), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.d1, self.d2 = block(3, 32), block(32, 64)
            self.up = nn.ConvTranspose2d(64, 32, 2, stride=2)
            self.o, self.head = block(64, 32), nn.Conv2d(32, 2, 1)

        def forward(self, x):
            a = self.d1(x)
            b = self.d2(nn.functional.max_pool2d(a, 2))
            return self.head(self.o(torch.cat([a, self.up(b)], 1)))

    return UNet(), [torch.randn(1, 3, 128, 128)]


def recurrent(kind):
    import torch

    class R(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "lstm":
                self.r, self.fc = torch.nn.LSTM(64, 128, 2, batch_first=True), torch.nn.Linear(128, 10)
            else:
                self.r, self.fc = torch.nn.GRU(64, 128, 1, batch_first=True, bidirectional=True), None

        def forward(self, x):
            y, _ = self.r(x)
            return self.fc(y[:, -1]) if self.fc is not None else y

    return R(), [torch.randn(1, 50, 64)]


def tv_seg(name):
    import torch
    import torchvision
    kw = {"weights": None, "weights_backbone": None}
    if name != "lraspp_mobilenet_v3_large":
        kw["aux_loss"] = False
    m = getattr(torchvision.models.segmentation, name)(**kw)
    return Field.wrap(m, "out"), [torch.randn(1, 3, 224, 224)]


def detection_head(name):
    import torch
    import torchvision
    if name == "fcos":
        m = torchvision.models.detection.fcos_resnet50_fpn(weights=None, weights_backbone=None)
        key, size = "cls_logits", 256
    else:
        m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
        key, size = "bbox_regression", 320

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m.head(list(self.m.backbone(x).values()))[key]

    return Head(), [torch.randn(1, 3, size, size)]


def hf(name):
    import torch
    import transformers as T
    ids = torch.randint(0, 1000, (1, 64))
    text = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, vocab_size=1000)
    if name == "distilbert":
        m = T.DistilBertModel(T.DistilBertConfig(dim=128, n_layers=2, n_heads=4, hidden_dim=256, vocab_size=1000))
        return Field.wrap(m, "last_hidden_state", "input_ids"), [ids]
    if name == "bart_encoder":
        c = T.BartConfig(d_model=128, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
                         encoder_ffn_dim=256, decoder_ffn_dim=256, vocab_size=1000)
        return Field.wrap(T.BartModel(c).encoder, "last_hidden_state", "input_ids"), [ids]
    if name == "deberta_v2":
        return Field.wrap(T.DebertaV2Model(T.DebertaV2Config(**text)), "last_hidden_state", "input_ids"), [ids]
    if name == "convbert":
        return Field.wrap(T.ConvBertModel(T.ConvBertConfig(embedding_size=128, **text)), "last_hidden_state", "input_ids"), [ids]
    if name == "gpt2":
        c = T.GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=1000, n_positions=128)
        return Field.wrap(T.GPT2Model(c), "last_hidden_state", "input_ids"), [ids]
    if name == "llama":
        c = T.LlamaConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          intermediate_size=256, vocab_size=1000)
        return Field.wrap(T.LlamaForCausalLM(c), "logits", "input_ids"), [ids[:, :32]]
    if name == "whisper_encoder":
        c = T.WhisperConfig(d_model=128, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4,
                            encoder_ffn_dim=256, decoder_ffn_dim=256, num_mel_bins=80, max_source_positions=1500)
        return Field.wrap(T.WhisperModel(c).encoder, "last_hidden_state"), [torch.randn(1, 80, 3000)]
    if name == "wav2vec2":
        c = T.Wav2Vec2Config(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, conv_dim=(64,) * 7)
        return Field.wrap(T.Wav2Vec2Model(c), "last_hidden_state"), [torch.randn(1, 16000)]
    if name == "clip_vision":
        c = T.CLIPVisionConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256, image_size=224,
                               patch_size=32)
        return Field.wrap(T.CLIPVisionModel(c), "pooler_output", "pixel_values"), [torch.randn(1, 3, 224, 224)]
    if name == "levit":
        c = T.LevitConfig(image_size=128, hidden_sizes=[64, 128, 192], num_attention_heads=[2, 4, 6], depths=[1, 1, 1],
                          key_dim=[16, 16, 16], num_labels=10)
        return Field.wrap(T.LevitForImageClassification(c), "logits", "pixel_values"), [torch.randn(1, 3, 128, 128)]
    if name == "segformer":
        c = T.SegformerConfig(num_encoder_blocks=4, depths=[1, 1, 1, 1], hidden_sizes=[16, 32, 64, 128], decoder_hidden_size=64,
                              num_labels=5)
        return Field.wrap(T.SegformerForSemanticSegmentation(c), "logits", "pixel_values"), [torch.randn(1, 3, 128, 128)]
    raise KeyError(name)


def r3d_18():
    import torch
    import torchvision
    return torchvision.models.video.r3d_18(weights=None), [torch.randn(1, 3, 8, 112, 112)]


ZOO = {
    "fcn_resnet50": lambda: tv_seg("fcn_resnet50"),
    "deeplabv3_mobilenet_v3_large": lambda: tv_seg("deeplabv3_mobilenet_v3_large"),
    "lraspp_mobilenet_v3_large": lambda: tv_seg("lraspp_mobilenet_v3_large"),
    "unet": unet,
    "r3d_18": r3d_18,
    "fcos_head": lambda: detection_head("fcos"),
    "ssdlite_head": lambda: detection_head("ssdlite"),
    "lstm": lambda: recurrent("lstm"),
    "gru": lambda: recurrent("gru"),
    **{n: (lambda n=n: hf(n)) for n in ["distilbert", "bart_encoder", "deberta_v2", "convbert", "gpt2", "llama",
                                        "whisper_encoder", "wav2vec2", "clip_vision", "levit", "segformer"]},
}


def export(name, outdir, opset, half=False):
    import numpy as np
    import onnxruntime as ort
    import torch

    torch.manual_seed(0)
    model, inputs = ZOO[name]()
    model.eval()
    if half:
        model = model.half()
        inputs = [x.half() if x.is_floating_point() else x for x in inputs]
    path = os.path.join(outdir, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(inputs), path, opset_version=opset, dynamo=True)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {i.name: x.numpy() for i, x in zip(sess.get_inputs(), inputs)}
    ref = sess.run(None, feed)[0]
    for k, x in enumerate(inputs):
        np.save(os.path.join(outdir, f"{name}.in{k}.npy"), x.numpy())
    np.save(os.path.join(outdir, name + ".ref.npy"), ref)
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB, {len(inputs)} input(s), output {list(ref.shape)}", flush=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    args = sys.argv[1:]
    opset, half = 18, False
    while args and args[0] in ("--opset", "--half"):
        if args[0] == "--half":
            half, args = True, args[1:]
        elif len(args) > 2:  # 23: scaled_dot_product_attention as ONNX's Attention
            opset, args = int(args[1]), args[2:]
        else:
            break
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    names = args[1:] or list(ZOO)
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        print(f"export_zoo.py: unknown model {unknown[0]} (one of {', '.join(ZOO)})", file=sys.stderr)
        return 2
    import warnings
    warnings.filterwarnings("ignore")
    failed = 0
    for n in names:
        try:
            export(n, outdir, opset, half)
        except Exception as e:  # an exporter's failure: report it and go on with the others
            print(f"{n}: export failed: {str(e).splitlines()[0][:200]}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
