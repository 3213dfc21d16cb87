#!/bin/bash
# tests/suites/mpi.sh — `mpirun -n K texc-mpi tune` on this machine (compiler/dist/mpi/,
# docs/TUNING.md "A cluster"): the same records as texc for any K with --deterministic,
# a crash on a rank, a network tune over the ranks, a rank killed mid-tune.
# Environment: $TEXC (the texc binary; texc-mpi beside it). Prints ok / not ok / skip lines.
TEXC=${TEXC:-build/texc}
MPI="$(cd "$(dirname "$TEXC")" && pwd)/texc-mpi"
T=$(mktemp -d /tmp/texc-mpi-XXXXXX)
trap 'rm -rf "$T"' EXIT
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2}
export OMPI_MCA_rmaps_base_oversubscribe=1 PMIX_MCA_gds=hash # quiet PMIx on one host

ok() { echo "ok - mpi: $1"; }
bad() { echo "not ok - mpi: $1"; }
skip() { echo "skip - mpi: $1: $2"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1"; fi; }

if ! command -v mpirun >/dev/null; then skip "all" "no mpirun (apt-get install openmpi-bin libopenmpi-dev)"; exit 0; fi
if [ ! -x "$MPI" ]; then skip "all" "no $MPI (make mpi needs mpicc)"; exit 0; fi
RUN=(mpirun --allow-run-as-root --oversubscribe)

cat >"$T/mm.tex" <<'EOF'
const M = 24, N = 16, K = 20
kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {
  C[i, j] += A[i, k] * B[k, j]
}
EOF
. "$(dirname "${BASH_SOURCE[0]}")/lib/records.sh" # sched_err, field, valid_log
# the pid of texc-mpi's rank R among the children (and grandchildren) of mpirun's PID
rank_pid() {
  for p in $(ps -o pid= --ppid "$1") $(for q in $(ps -o pid= --ppid "$1"); do ps -o pid= --ppid "$q"; done); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = texc-mpi ] || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}
wait_records() { for i in $(seq 300); do [ -s "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ] && return; sleep 0.1; done; }

# 1. --deterministic: the same candidates and errors for K = 1 (texc), 2 and 3
TUNE=(tune "$T/mm.tex" --trials 16 --batch 8 --seed 5 --deterministic --quiet)
"$TEXC" "${TUNE[@]}" --records "$T/k1.jsonl" >/dev/null 2>&1
for k in 2 3; do
  "${RUN[@]}" -n $k "$MPI" "${TUNE[@]}" --records "$T/k$k.jsonl" >/dev/null 2>"$T/e$k"; rc=$?
  [ $rc = 0 ] && diff <(sched_err "$T/k1.jsonl") <(sched_err "$T/k$k.jsonl") >/dev/null
  check "-n $k --deterministic: the records of texc alone (16 candidates, same errors)" $?
done
# the ranks >= 1 measured (pinned: 2 cores over 3 local ranks, one thread each)
[ "$(field "$T/k3.jsonl" target.threads | sort -u)" = 1 ]; check "-n 3: ranks pinned to one core each measured" $?

# 2. a candidate that crashes on a rank is an error record, the tune goes on
TEXC_TUNE_INJECT=crash:3 "${RUN[@]}" -n 3 "$MPI" tune "$T/mm.tex" --trials 8 --seed 2 --quiet \
  --records "$T/crash.jsonl" >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T/crash.jsonl")" = 8 ] && [ "$(grep -c '"error":3,.*signal 11' "$T/crash.jsonl")" = 1 ]
check "a crash on a rank: one error record (signal 11), the tune goes on" $?

# 3. a network tune spreads its measurements over the ranks
cat >"$T/small.tex" <<'NET'
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network small(x: f32[1, 8, 8, 8], w: f32[3, 3, 8, 8], b: f32[8]) -> y: f32[1, 8, 8, 8] {
  y = conv2d_nhwc(x, w, PH = 1, PW = 1)
  y = bias_add(y, b)
  y = relu(y)
}
NET
out=$(cd "$(dirname "$0")/../.." && "${RUN[@]}" -n 3 "$MPI" tune "$T/small.tex" --trials 8 --round 4 --records "$T/net.jsonl" 2>&1); rc=$?
[ $rc = 0 ] && grep -q 'Estimated total latency: [0-9.]* ms  Trials: 8 ' <<<"$out" &&
  [ "$(field "$T/net.jsonl" network.name | sort -u)" = small ] && [ "$(field "$T/net.jsonl" target.threads | sort -u)" = 1 ]
check "a network tune measured on the ranks" $?

# 4. a rank killed mid-tune (mpirun --enable-recovery): its candidate in flight is an
# error record, the others finish the tune, nothing measured is lost
"${RUN[@]}" --enable-recovery -n 3 "$MPI" tune "$T/mm.tex" --trials 40 --batch 8 --seed 5 --min-repeat-ms 20 \
  --quiet --records "$T/kill.jsonl" >/dev/null 2>"$T/e4" &
MP=$!
wait_records "$T/kill.jsonl" 6
victim=$(rank_pid $MP 2)
[ -n "$victim" ] && kill -9 "$victim"
wait $MP; rc=$?
[ -n "$victim" ] && [ $rc = 0 ] && [ "$(valid_log "$T/kill.jsonl")" = 40 ] && grep -q "rank 2 was lost" "$T/e4"
check "a rank killed mid-tune: the other ranks finish all 40 trials" $?
n_lost=$(grep -c '"error":3,"error_msg":"rank 2 was lost' "$T/kill.jsonl")
[ "$n_lost" -le 1 ]; check "a rank killed mid-tune: at most its in-flight candidate is an error ($n_lost)" $?

# 5. the only measuring rank killed: rank 0 exits 1 with a clear message, every record
# kept. (Under --enable-recovery mpirun itself exits 0 whatever its ranks' statuses:
# a shell around each rank keeps rank 0's.)
"${RUN[@]}" --enable-recovery -n 2 sh -c '"$0" "$@"; echo $? >"'"$T"'/status.$OMPI_COMM_WORLD_RANK"' \
  "$MPI" tune "$T/mm.tex" --trials 200 --batch 4 --seed 7 --min-repeat-ms 20 \
  --quiet --records "$T/all.jsonl" >/dev/null 2>"$T/e5" &
MP=$!
wait_records "$T/all.jsonl" 4
victim=$(rank_pid $MP 1)
[ -n "$victim" ] && kill -9 "$victim"
wait $MP
n=$(valid_log "$T/all.jsonl")
[ "$(cat "$T/status.0" 2>/dev/null)" = 1 ] && grep -q "no runner (or rank) is left" "$T/e5" && [ "$n" -ge 4 ] && [ "$n" -lt 200 ]
check "the last rank killed: rank 0 exits 1, 'no rank is left', $n records kept" $?

# 6. without --enable-recovery Open MPI ends the whole job: the log is still whole lines
"${RUN[@]}" -n 3 "$MPI" tune "$T/mm.tex" --trials 200 --batch 4 --seed 8 --min-repeat-ms 20 \
  --quiet --records "$T/abort.jsonl" >/dev/null 2>"$T/e6" &
MP=$!
wait_records "$T/abort.jsonl" 4
victim=$(rank_pid $MP 1)
[ -n "$victim" ] && kill -9 "$victim"
wait $MP; rc=$?
n=$(valid_log "$T/abort.jsonl" 2>/dev/null)
[ $rc != 0 ] && [ -n "$n" ] && [ "$n" -ge 4 ]
check "a rank killed without --enable-recovery: the job ends (exit $rc), $n whole records kept" $?

# 7. one GPU per rank: an OpenCL tune on the ranks (PoCL has one device, so every rank
# takes device 0:0); its records as texc's alone, each rank naming its device
if ! clinfo -l 2>/dev/null | grep -q 'Device'; then
  skip "opencl on the ranks" "no OpenCL device"
else
  CL=(tune "$T/mm.tex" --target opencl --trials 8 --batch 4 --seed 5 --deterministic --quiet)
  "$TEXC" "${CL[@]}" --records "$T/cl1.jsonl" >/dev/null 2>&1
  "${RUN[@]}" -n 3 "$MPI" "${CL[@]}" --records "$T/cl3.jsonl" >/dev/null 2>"$T/e7"; rc=$?
  [ $rc = 0 ] && [ "$(valid_log "$T/cl3.jsonl")" = 8 ] && diff <(sched_err "$T/cl1.jsonl") <(sched_err "$T/cl3.jsonl") >/dev/null &&
    [ "$(field "$T/cl3.jsonl" target.name | sort -u)" = opencl ] && [ "$(field "$T/cl3.jsonl" error | sort -u)" = 0 ]
  check "-n 3 --target opencl: 8 candidates measured on the ranks, the records of texc alone" $?
  [ "$(grep -c 'measuring rank [12] here): opencl device 0 of 1 (--opencl-device 0:0)' "$T/e7")" = 2 ]
  check "-n 3 --target opencl: each rank names its device (0:0, the only one)" $?
fi
# the rule for a node of N devices: measuring rank R takes device (R - 1) mod N
# (TEXC_MPI_GPUS pretends N; ranks 1 2 3 with N = 2 take 0 1 0; PoCL has no 0:1, so
# rank 2's candidates are error records naming that device)
"${RUN[@]}" -x TEXC_MPI_GPUS=2 -n 4 "$MPI" tune "$T/mm.tex" --target opencl --trials 2 --batch 4 --quiet \
  --records "$T/rule.jsonl" >/dev/null 2>"$T/e8"
got=$(sed -n 's/^texc-mpi: rank \([0-9]\) (measuring rank \1 here): opencl device \([0-9]\) of 2 .*/\1:\2/p' "$T/e8" | sort | tr '\n' ' ')
[ "$got" = "1:0 2:1 3:0 " ]; check "GPUs per rank: with 2 devices, measuring ranks 1 2 3 take 0 1 0 ($got)" $?
