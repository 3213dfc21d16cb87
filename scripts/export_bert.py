#!/usr/bin/env python3
"""export_bert.py — a BERT encoder (transformers' BertModel) to ONNX, with onnxruntime's results.

    PY scripts/export_bert.py OUTDIR [LAYERS HIDDEN SEQ]     (default 12 768 128: BERT-base)

Writes OUTDIR/bert.onnx (random weights from torch.manual_seed(0); eval mode, opset 17,
batch 1, the legacy TorchScript exporter, dynamo=False; three int64 inputs input_ids,
attention_mask, token_type_ids and two outputs, the last hidden state and the pooled
output), OUTDIR/ids.npy, mask.npy, tt.npy (seeded ids; the last quarter of the mask 0, the
second half of the token types 1) and OUTDIR/hidden.npy, pooled.npy (onnxruntime's results,
one thread). Needs torch, transformers, onnx and onnxruntime (PyPI); make test does not
(bench/bert.sh, docs/ONNX.md).
"""
import sys


def main(out, layers=12, hidden=768, seq=128):
    import numpy as np
    import onnxruntime as ort
    import torch
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=hidden // 64,
                     intermediate_size=4 * hidden, max_position_embeddings=512)
    torch.manual_seed(0)
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, seq))
    mask = torch.ones(1, seq, dtype=torch.int64)
    mask[0, seq - seq // 4:] = 0
    tt = torch.zeros(1, seq, dtype=torch.int64)
    tt[0, seq // 2:] = 1

    class Outputs(torch.nn.Module):  # the two tensors, not transformers' output object
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids, mask, tt):
            o = self.m(input_ids=ids, attention_mask=mask, token_type_ids=tt)
            return o.last_hidden_state, o.pooler_output

    torch.onnx.export(Outputs(model), (ids, mask, tt), f"{out}/bert.onnx",
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["hidden", "pooled"],
                      opset_version=17, dynamo=False)
    feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": tt.numpy()}
    for name, t in zip(["ids", "mask", "tt"], feed.values()):
        np.save(f"{out}/{name}.npy", t)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    h, p = ort.InferenceSession(f"{out}/bert.onnx", so).run(None, feed)
    np.save(f"{out}/hidden.npy", h)
    np.save(f"{out}/pooled.npy", p)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 5):
        sys.exit(__doc__.strip())
    main(sys.argv[1], *(int(a) for a in sys.argv[2:]))
