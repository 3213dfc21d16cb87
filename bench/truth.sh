#!/bin/bash
# bench/truth.sh BUILD — one measured truth: a tuned schedule timed every way, for matmul
# 1024^3 and resnet-18's l2b convolution (28x28x128 -> 128, 3x3), 2 threads. After one tune,
# ROUNDS rounds each time the chosen schedule, one after the other:
#   tuner  the tuner's own measurer in a fresh process (bench/truth_probe.c `tuner50`: a
#          forked child, rt_time_candidate, batches of >= 50 ms as its final re-measurement);
#   bench  `texc bench --schedule tuned --records R` (JIT in texc, rt_time, median of 7);
#   lib    the exported library (`--emit so`) timed from C by bench/bench.c (rt_time, median
#          of 7 batches of >= 100 ms), which then times the anchor (OpenBLAS / oneDNN).
# Prints each round, the medians, how far the three ways and the tuner's own figure (its
# final line) are apart, and how far the host drifted between rounds (the anchor's spread).
# Measured in rounds because a shared host drifts by more than 10% over seconds
# (bench/RESULTS.md, "One measured truth"). Not part of `make test`.
#   env: TRIALS (200), ROUNDS (5), TEXC (default BUILD/texc), KERNELS ("matmul conv_l2b"),
#        TEXC_FLAGS (more texc options, e.g. "--mcpu haswell": AVX2 code on an AVX-512 host;
#        with ONEDNN_MAX_CPU_ISA=AVX2 oneDNN's anchor is limited the same way)
B=${1:-build}
TRIALS=${TRIALS:-200}
ROUNDS=${ROUNDS:-5}
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2} OMP_NUM_THREADS=${TEX_NUM_THREADS:-2}
# the anchors' worker threads must not spin on the cores while texc is timed
export OPENBLAS_THREAD_TIMEOUT=${OPENBLAS_THREAD_TIMEOUT:-4} OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
TEXC=${TEXC:-$B/texc}
OUT=$B/bench/truth
mkdir -p "$OUT"
cc -O2 -std=c11 -D_GNU_SOURCE -Iruntime -o "$OUT/bench" bench/bench.c "$B/libtexrt.a" \
  -lopenblas -ldnnl -ldl -lpthread -lm || exit 1
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
  "$(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1-3 /proc/loadavg); $TEX_NUM_THREADS threads; $TRIALS trials; $ROUNDS rounds"
[ -n "$TEXC_FLAGS$ONEDNN_MAX_CPU_ISA" ] && echo "texc flags: ${TEXC_FLAGS:-none}; oneDNN ISA limit: ${ONEDNN_MAX_CPU_ISA:-none}"

# one NAME FILE MANIFEST_FIELDS FLOPS -D ...: tune once, then ROUNDS rounds of the three ways
one() {
  local name=$1 file=$2 fields=$3 flops=$4; shift 4
  local R=$OUT/$name.jsonl kern
  kern=$(echo "$fields" | cut -d' ' -f1)
  rm -f "$R"
  # shellcheck disable=SC2086
  "$TEXC" tune "$file" "$@" $TEXC_FLAGS --trials "$TRIALS" --seed 1 --records "$R" >"$OUT/$name.tune" 2>&1 ||
    { echo "$name: tune failed"; return; }
  # the tuner's figure: its last line "# KERNEL: MS ms" (the chosen best measured once more,
  # after the choice); and the least median of the records (what the search saw: optimistic)
  local tune_ms rec_ms
  tune_ms=$(awk '/^# [A-Za-z_0-9]+: [0-9.]+ ms/ {print $3}' "$OUT/$name.tune" | tail -1)
  rec_ms=$("$TEXC" records best "$R" | awk '/^# workload/ {print $(NF - 1); exit}')
  # the chosen schedule's steps, for truth_probe
  "$TEXC" records best "$R" | sed -n '/{$/,/^}/p' | sed '1d;$d;s/^ *//' >"$OUT/$name.steps"
  # shellcheck disable=SC2086
  "$TEXC" "$file" "$@" $TEXC_FLAGS --schedule tuned --records "$R" --emit so -o "$OUT/$name.so" || return
  printf '%s tuned %s %s\n' "$kern" "$(echo "$fields" | cut -d' ' -f2-)" "$OUT/$name.so" >"$OUT/$name.man"
  local defs=() a
  for a in "$@"; do [ "$a" != -D ] && defs+=("$a"); done
  echo "== $name: the tuner said $tune_ms ms (its records' least median: $rec_ms ms); $ROUNDS rounds:"
  printf '%-6s %10s %10s %10s %12s %12s\n' round tuner bench lib openblas/dnnl "(ms)"
  local r probe bench lib anchor
  : >"$OUT/$name.rounds"
  for r in $(seq "$ROUNDS"); do
    probe=$(TEXC_MCPU=$(echo " $TEXC_FLAGS" | sed -n 's/.* --mcpu[ =]\([^ ]*\).*/\1/p') bench/truth_probe.sh "$B" tuner50 "$file" "$kern" "$OUT/$name.steps" "${defs[@]}" | awk '{print $2}')
    # shellcheck disable=SC2086
    bench=$("$TEXC" bench "$file" "$@" $TEXC_FLAGS --schedule tuned --records "$R" --repeat 7 2>&1 | awk '$2 == "tuned" {print $3}')
    "$OUT/bench" "$OUT/$name.man" >"$OUT/$name.lib" 2>&1
    lib=$(awk '$0 ~ / tuned / {for (i = 1; i < NF; i++) if ($i == "tuned") {print $(i + 1); exit}}' "$OUT/$name.lib")
    anchor=$(awk '$0 ~ / tuned / {for (i = 1; i < NF; i++) if ($i == "tuned") {print $(i + 2); exit}}' "$OUT/$name.lib")
    printf '%-6s %10s %10s %10s %12s\n' "$r" "$probe" "$bench" "$lib" "$anchor"
    echo "$probe $bench $lib $anchor" >>"$OUT/$name.rounds"
  done
  python3 - "$OUT/$name.rounds" "$tune_ms" "$flops" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
tune, flops = float(sys.argv[2]), float(sys.argv[3])
med = [statistics.median(c) for c in zip(*rows)]
names = ["tuner's measurer (fresh child)", "texc bench", "library from C", "anchor (same process as lib)"]
print("medians of the rounds:")
for n, m in zip(names, med):
    print("  %-30s %9.3f ms  %7.1f GFLOP/s" % (n, m, flops / m / 1e6))
spread = lambda c: max(c) / min(c)
cols = list(zip(*rows))
print("  the tuner's own figure          %9.3f ms  %7.1f GFLOP/s" % (tune, flops / tune / 1e6))
print("agreement (max / min of the medians of the three ways): %.2f; with the tuner's figure: %.2f"
      % (max(med[:3]) / min(med[:3]), max(med[:3] + [tune]) / min(med[:3] + [tune])))
print("host drift (max / min across rounds): texc bench %.2f, library %.2f, anchor %.2f"
      % (spread(cols[1]), spread(cols[2]), spread(cols[3])))
print("library vs anchor (anchor ms / library ms, median of the rounds' ratios): %.2f"
      % statistics.median(a / l for l, a in zip(cols[2], cols[3])))
PY
}

KERNELS=${KERNELS:-matmul conv_l2b}
[[ " $KERNELS " == *" matmul "* ]] && one matmul examples/matmul.tex "matmul 1024 1024 1024" $((2 * 1024 * 1024 * 1024)) -D M=1024 -D N=1024 -D K=1024
[[ " $KERNELS " == *" conv_l2b "* ]] && one conv_l2b bench/tune_conv2d.tex "conv l2b 28 28 128 128 3 1 1" $((2 * 28 * 28 * 128 * 128 * 9)) \
  -D H=28 -D W=28 -D CI=128 -D CO=128 -D KS=3 -D S=1 -D PAD=1
