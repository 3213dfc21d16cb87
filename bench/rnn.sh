#!/bin/bash
# bench/rnn.sh — PyTorch's LSTM and GRU through ONNX (unrolled at import: docs/ONNX.md,
# Recurrent layers): texc against onnxruntime (PyPI), in one run, a table per round.
#   bench/rnn.sh [BUILD] [CASE...]   (cases: bench/rnn.py's CASES; all by default)
# Environment: PY (torch, onnx, onnxruntime; /work/torchenv/bin/python), RNN_DIR (the
# exported models, /tmp/texc-rnn), ROUNDS (2), REPEAT (texc bench's --repeat, 15), ORT_RUNS (30).
cd "$(dirname "$0")/.."
B=${1:-build}
shift
PY=${PY:-/work/torchenv/bin/python}
if ! "$PY" -c "import torch, onnx, onnxruntime" 2>/dev/null; then
  echo "rnn.sh: $PY lacks torch, onnx or onnxruntime (PY=... names another)" >&2
  exit 1
fi
echo "<!-- $(date -u '+%F %H:%M UTC'), commit $(git rev-parse --short HEAD), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) -->"
rc=0
for ((r = 1; r <= ${ROUNDS:-2}; r++)); do
  echo "round $r"
  "$PY" -W ignore bench/rnn.py "$B/texc" "${RNN_DIR:-/tmp/texc-rnn}" "$@" 2>/dev/null || rc=1
done
exit $rc
