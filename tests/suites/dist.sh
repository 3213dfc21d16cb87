#!/bin/bash
# tests/suites/dist.sh — measuring elsewhere (compiler/dist/, docs/TUNING.md): the
# measure server, `texc tune --runner exec:` and `ssh://` (an sshd started here on a
# loopback port), a lost connection, an aarch64 server under qemu-user, OpenCL candidates
# measured by the server's OpenCL (PoCL).
# Environment: $TEXC (the texc binary). Prints ok / not ok / skip lines.
TEXC=${TEXC:-build/texc}
BIN=$(dirname "$TEXC")
SERVER="$(cd "$BIN" && pwd)/texc-measure-server"
T=$(mktemp -d /tmp/texc-dist-XXXXXX)
mkdir "$T/tmp" && export TMPDIR="$T/tmp" # the runners: none may leave its folder (9.)
SSHD_PID=
cleanup() {
  [ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2}

ok() { echo "ok - dist: $1"; }
bad() { echo "not ok - dist: $1"; }
skip() { echo "skip - dist: $1: $2"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1"; fi; }

cat >"$T/mm.tex" <<'EOF'
const M = 24, N = 16, K = 20
kernel matmul(A: f32[M, K], B: f32[K, N]) -> C: f32[M, N] {
  C[i, j] += A[i, k] * B[k, j]
}
EOF
. "$(dirname "${BASH_SOURCE[0]}")/lib/records.sh" # sched_err, field, valid_log

if [ ! -x "$SERVER" ] || ! command -v ld.lld >/dev/null; then
  skip "all" "no $SERVER or no ld.lld (make all; apt-get install lld)"
  exit 0
fi

# 1. the server says what it has; texc forwards `measure-server`
out=$("$TEXC" measure-server --check 2>&1)
grep -q "^cpu ." <<<"$out" && grep -q "^isa $(uname -m)" <<<"$out" && grep -q "^threads [0-9]" <<<"$out" &&
  grep -q "^opencl " <<<"$out"
check "measure-server --check: cpu, isa, threads, opencl" $?

# 2. a local runner gives the candidates (and validity) of local measurement
TUNE=(tune "$T/mm.tex" --trials 12 --batch 6 --seed 5 --deterministic --check-all --quiet)
"$TEXC" "${TUNE[@]}" --records "$T/local.jsonl" >/dev/null 2>"$T/e0"
"$TEXC" "${TUNE[@]}" --records "$T/exec.jsonl" --runner "exec:$SERVER" >/dev/null 2>"$T/e1"; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T/exec.jsonl")" = 12 ] && diff <(sched_err "$T/local.jsonl") <(sched_err "$T/exec.jsonl") >/dev/null
check "--runner exec: the same 12 candidates as local, the same errors" $?
[ "$(field "$T/exec.jsonl" error | sort -u)" = 0 ] && ! grep -q '"costs_ms":\[\]' "$T/exec.jsonl"
check "--runner exec: every candidate timed and checked" $?

# 3. a candidate that crashes there is an error record; the tune goes on
TEXC_TUNE_INJECT=crash:2 "$TEXC" tune "$T/mm.tex" --trials 6 --seed 3 --quiet --records "$T/crash.jsonl" \
  --runner "exec:$SERVER" >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T/crash.jsonl")" = 6 ] && [ "$(field "$T/crash.jsonl" error | grep -c '^3$')" = 1 ] &&
  grep -q 'crashed (signal 11' "$T/crash.jsonl"
check "a crash there is one error record (signal 11), the tune goes on" $?

# 3b. a candidate that hangs there is a timeout record; the tune goes on
TEXC_TUNE_INJECT=hang:2 "$TEXC" tune "$T/mm.tex" --trials 6 --seed 3 --quiet --run-timeout 2s \
  --records "$T/hang.jsonl" --runner "exec:$SERVER" >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$T/hang.jsonl")" = 6 ] && [ "$(field "$T/hang.jsonl" error | grep -vc '^0$')" = 1 ]
check "a candidate that hangs there is one error record, the tune goes on" $?

# 3c. a server that stops answering (SIGSTOP after its first answers): the tune waits out
# the answer's timeout (run + build limits + slack, ~50 s), names it, exits 1 and keeps the records it already has
cat >"$T/stall.sh" <<EOF
#!/bin/sh
exec 3<&0 # a background job's stdin would be /dev/null
"$SERVER" <&3 3<&- & p=\$!
sleep 4; kill -STOP \$p; wait \$p
EOF
chmod +x "$T/stall.sh"
start=$(date +%s)
timeout 120 "$TEXC" tune "$T/mm.tex" --trials 400 --batch 4 --seed 3 --quiet --run-timeout 2s \
  --records "$T/stall.jsonl" --runner "exec:$T/stall.sh" >/dev/null 2>"$T/e3"; rc=$?
pkill -KILL -f "$T/stall.sh" 2>/dev/null
n=$(valid_log "$T/stall.jsonl" 2>/dev/null)
[ $rc = 1 ] && [ "${n:-0}" -ge 1 ] && [ "$n" -lt 400 ] && [ $(($(date +%s) - start)) -lt 110 ] &&
  grep -q 'no answer in' "$T/e3" && grep -q 'no runner' "$T/e3"
check "a server that stops answering: exit 1 after the timeout, $n records kept" $?

# 4. the check against the interpreter really looks at the server's outputs
TEXC_SERVER_INJECT_WRONG=1 "$TEXC" tune "$T/mm.tex" --trials 3 --seed 3 --check-all --quiet \
  --records "$T/wrong.jsonl" --runner "exec:$SERVER" >/dev/null 2>&1
[ "$(field "$T/wrong.jsonl" error | sort -u)" = 4 ] && grep -q 'wrong result against the interpreter' "$T/wrong.jsonl"
check "--check-all: a server with wrong outputs gives 'wrong' records" $?

# 5. a runner that is no measure server: a clear error, exit 1
out=$("$TEXC" tune "$T/mm.tex" --trials 2 --records "$T/none.jsonl" --runner "exec:echo hello" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "no texc-measure-server answered" <<<"$out"
check "--runner that is not a server: error, exit 1" $?
out=$("$TEXC" tune "$T/mm.tex" --trials 2 --records "$T/none.jsonl" --runner "ftp://x" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "expected ssh://" <<<"$out"
check "--runner with a bad scheme: error, exit 1" $?

# 5b. a network tune measures every task through the runner
cat >"$T/small.tex" <<'NET'
import "nn/conv2d.tex"
import "nn/elementwise.tex"
network small(x: f32[1, 8, 8, 8], w: f32[3, 3, 8, 8], b: f32[8]) -> y: f32[1, 8, 8, 8] {
  y = conv2d_nhwc(x, w, PH = 1, PW = 1)
  y = bias_add(y, b)
  y = relu(y)
}
NET
out=$(cd "$(dirname "$0")/../.." && "$TEXC" tune "$T/small.tex" --trials 6 --round 3 --records "$T/net.jsonl" \
  --runner "exec:TEX_NUM_THREADS=1 $SERVER" 2>&1); rc=$?
[ $rc = 0 ] && grep -q 'Estimated total latency: [0-9.]* ms  Trials: 6 ' <<<"$out" &&
  [ "$(field "$T/net.jsonl" network.name | sort -u)" = small ] && [ "$(field "$T/net.jsonl" target.threads | sort -u)" = 1 ]
check "a network tune through --runner (the server's thread count recorded)" $?

# 5c. several runners: each candidate to whichever is free (two local servers, told apart
# by their thread counts); one killed mid-tune costs only its candidate in flight
cat >"$T/die.sh" <<EOF
#!/bin/sh
# a measure server killed (SIGKILL) once the records log \$1 has \$2 lines: while it
# measures a candidate (its forked child is there) when that comes within 0.5 s
exec 3<&0
"$SERVER" <&3 3<&- & p=\$!
until [ "\$(cat "\$1" 2>/dev/null | wc -l)" -ge \$2 ] || ! kill -0 \$p 2>/dev/null; do sleep 0.05; done
for i in \$(seq 25); do pgrep -P \$p >/dev/null && break; sleep 0.02; done
kill -9 \$p; wait \$p
EOF
chmod +x "$T/die.sh"
"$TEXC" tune "$T/mm.tex" --trials 16 --batch 8 --seed 5 --quiet --records "$T/two.jsonl" \
  --runner "exec:TEX_NUM_THREADS=1 $SERVER" --runner "exec:TEX_NUM_THREADS=2 $SERVER" >/dev/null 2>"$T/e5"; rc=$?
n1=$(field "$T/two.jsonl" target.threads | grep -c '^1$'); n2=$(field "$T/two.jsonl" target.threads | grep -c '^2$')
[ $rc = 0 ] && [ "$(valid_log "$T/two.jsonl")" = 16 ] && [ "$(field "$T/two.jsonl" error | sort -u)" = 0 ] &&
  [ "$n1" -ge 1 ] && [ "$n2" -ge 1 ] && [ "$(grep -c '^runner exec:' "$T/e5")" = 2 ]
check "two runners: both measure (16 candidates: $n1 on one, $n2 on the other)" $?
"$TEXC" tune "$T/mm.tex" --trials 48 --batch 8 --seed 6 --min-repeat-ms 30 --quiet --records "$T/one-left.jsonl" \
  --runner "exec:TEX_NUM_THREADS=1 $SERVER" --runner "exec:TEX_NUM_THREADS=2 $T/die.sh $T/one-left.jsonl 8" >/dev/null 2>"$T/e6"; rc=$?
n2=$(field "$T/one-left.jsonl" target.threads | grep -c '^2$')
n_lost=$(grep -c '"error_msg":"the runner exec:.*die.sh .* was lost' "$T/one-left.jsonl")
tail -n 8 "$T/one-left.jsonl" >"$T/tail.jsonl"
[ $rc = 0 ] && [ "$(valid_log "$T/one-left.jsonl")" = 48 ] && [ "$n2" -ge 1 ] && [ "$n_lost" -le 1 ] &&
  grep -q "runner exec:.*die.sh .*: the connection was closed.*; 1 runner(s) left" "$T/e6" &&
  [ "$(field "$T/tail.jsonl" target.threads | sort -u)" = 1 ]
check "two runners, one killed mid-tune: the other finishes all 48 ($n2 measured there before, $n_lost lost in flight)" $?
"$TEXC" tune "$T/mm.tex" --trials 400 --batch 8 --seed 7 --min-repeat-ms 30 --quiet --records "$T/none-left.jsonl" \
  --runner "exec:$T/die.sh $T/none-left.jsonl 8" --runner "exec:$T/die.sh $T/none-left.jsonl 16" >/dev/null 2>"$T/e7"; rc=$?
n=$(valid_log "$T/none-left.jsonl" 2>/dev/null)
[ $rc = 1 ] && grep -q "no runner (or rank) is left" "$T/e7" && [ "${n:-0}" -ge 1 ] && [ "$n" -lt 400 ] &&
  [ "$(grep -c 'runner(s) left' "$T/e7")" = 2 ]
check "two runners, both killed: exit 1, 'no runner is left', $n records kept" $?

# 6. ssh: an sshd of our own on a loopback port (own host key, authorized_keys, config)
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
  skip "ssh" "no sshd/ssh (apt-get install openssh-server openssh-client)"
else
  ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey" && ssh-keygen -q -t ed25519 -N '' -f "$T/key"
  cp "$T/key.pub" "$T/authorized_keys"
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  cat >"$T/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $T/hostkey
AuthorizedKeysFile $T/authorized_keys
PidFile $T/sshd.pid
StrictModes no
UsePAM no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
EOF
  [ -d /run/sshd ] || mkdir -p /run/sshd 2>/dev/null
  "$SSHD" -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
  SSHD_PID=$!
  export TEXC_SSH="ssh -i $T/key -o UserKnownHostsFile=$T/known -o StrictHostKeyChecking=no -o LogLevel=ERROR"
  for i in $(seq 50); do $TEXC_SSH -p "$PORT" -o BatchMode=yes "$(id -un)@127.0.0.1" true 2>/dev/null && break; sleep 0.1; done
  RUNNER="ssh://$(id -un)@127.0.0.1:$PORT$SERVER"
  "$TEXC" "${TUNE[@]}" --records "$T/ssh.jsonl" --runner "$RUNNER" >/dev/null 2>"$T/e2"; rc=$?
  [ $rc = 0 ] && diff <(sched_err "$T/local.jsonl") <(sched_err "$T/ssh.jsonl") >/dev/null &&
    [ "$(field "$T/ssh.jsonl" machine.isa | sort -u)" = "$(field "$T/local.jsonl" machine.isa | sort -u)" ]
  check "--runner ssh://: the same candidates and errors as local, the machine recorded" $?
  grep -q "^runner ssh://.*threads" "$T/e2"; check "--runner ssh:// names the machine it measures on" $?
  # one connection for the whole tune: sshd accepts one session (its log lists each)
  n_before=$(grep -c 'Accepted publickey' "$T/sshd.log")
  "$TEXC" tune "$T/mm.tex" --trials 8 --batch 2 --seed 9 --quiet --records "$T/one.jsonl" --runner "$RUNNER" >/dev/null 2>&1
  [ "$(grep -c 'Accepted publickey' "$T/sshd.log")" = $((n_before + 1)) ] && [ "$(wc -l <"$T/one.jsonl")" = 8 ]
  check "--runner ssh://: one connection for 4 rounds" $?

  # 7. sshd killed mid-tune: the in-flight candidate is an error record, the tune stops
  # with exit 1 and a clear message, every record measured is kept (whole lines)
  "$TEXC" tune "$T/mm.tex" --trials 400 --batch 4 --seed 11 --min-repeat-ms 20 --records "$T/kill.jsonl" \
    --runner "$RUNNER" >/dev/null 2>"$T/e3" &
  TUNE_PID=$!
  for i in $(seq 200); do [ -s "$T/kill.jsonl" ] && [ "$(wc -l <"$T/kill.jsonl")" -ge 6 ] && break; sleep 0.1; done
  kids() { for p in $(ps -o pid= --ppid "$1"); do echo "$p"; kids "$p"; done; }
  victims="$SSHD_PID $(kids "$SSHD_PID")"
  kill $victims 2>/dev/null
  SSHD_PID=
  wait "$TUNE_PID"; rc=$?
  n=$(valid_log "$T/kill.jsonl" 2>/dev/null)
  [ $rc = 1 ] && grep -q "no runner (or rank) is left" "$T/e3" && [ -n "$n" ] && [ "$n" -ge 6 ] && [ "$n" -lt 400 ]
  check "sshd killed mid-tune: exit 1, 'no runner is left', $n records kept" $?
  grep -q "runner ssh://.*: the connection was closed" "$T/e3"; check "sshd killed: the reason is named" $?
  # a later tune on the same log measures what the lost one did not (nothing is skipped)
  "$TEXC" tune "$T/mm.tex" --trials 4 --seed 11 --quiet --records "$T/kill.jsonl" >/dev/null 2>&1
  [ "$(valid_log "$T/kill.jsonl")" = $((n + 4)) ]; check "the log resumes locally after a lost runner" $?
fi

# 8. aarch64: the server cross-built, run under qemu-user; candidates cross-compiled
A64="$(cd "$BIN" && pwd)/aarch64/texc-measure-server"
if ! command -v qemu-aarch64-static >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
  skip "aarch64" "no qemu-aarch64-static or aarch64-linux-gnu-gcc (scripts/install-deps.sh)"
elif ! make -s --no-print-directory -C "$(dirname "$0")/../.." B="$(cd "$BIN" && pwd)" aarch64-server >/dev/null 2>&1; then
  bad "aarch64: make aarch64-server"
else
  Q="qemu-aarch64-static -L /usr/aarch64-linux-gnu $A64"
  out=$($Q --check 2>&1)
  grep -q "^isa aarch64" <<<"$out"; check "aarch64 server under qemu: --check says aarch64" $?
  "$TEXC" "${TUNE[@]}" --mtriple aarch64-linux-gnu --records "$T/a64.jsonl" --runner "exec:$Q" >/dev/null 2>"$T/e4"; rc=$?
  # the sketches derive their tiles from the target (NEON: 32 registers of 4 lanes), so the
  # candidates are not the host's: each one is checked against the interpreter instead
  [ $rc = 0 ] && [ "$(wc -l <"$T/a64.jsonl")" = 12 ] && [ "$(field "$T/a64.jsonl" error | sort -u)" = 0 ] &&
    [ "$(field "$T/a64.jsonl" machine.isa | sort -u)" = aarch64 ]
  check "--mtriple aarch64 under qemu: 12 candidates, every one checked against the interpreter" $?
  # built without OpenCL: its hello says so, and an OpenCL tune through it stops with why
  out=$("$TEXC" tune "$T/mm.tex" --target opencl --trials 2 --records "$T/a64-ocl.jsonl" --runner "exec:$Q" 2>&1); rc=$?
  [ $rc = 1 ] && grep -q "built without OpenCL" <<<"$out" && grep -q "^artifacts so$" <<<"$($Q --check 2>&1)"
  check "aarch64 server without OpenCL: --target opencl through it is a clear error" $?
fi

# 8b. --target opencl: each candidate's OpenCL C and launch plan go to the server, whose
# OpenCL (PoCL here) builds and times it; --check-all runs each there against the
# interpreter here; OpenCL C that does not build there is one error record
OCL_DEV=$("$SERVER" --check 2>/dev/null | sed -n 's/^opencl 0 //p')
if [ -z "$OCL_DEV" ]; then
  skip "opencl runner" "no OpenCL device (apt-get install pocl-opencl-icd)"
else
  OCL=(tune "$T/mm.tex" --target opencl -D M=64 -D N=64 -D K=64 --trials 6 --batch 6 --seed 5 --check-all --quiet)
  "$TEXC" "${OCL[@]}" --records "$T/ocl-local.jsonl" >/dev/null 2>&1
  "$TEXC" "${OCL[@]}" --records "$T/ocl.jsonl" --runner "exec:$SERVER" >/dev/null 2>"$T/e8"; rc=$?
  # the local records have no machine.gpu (only NVIDIA's is read here); the server names
  # the OpenCL device it measured on
  [ $rc = 0 ] && [ "$(valid_log "$T/ocl.jsonl")" = 6 ] && [ "$(field "$T/ocl.jsonl" error | sort -u)" = 0 ] &&
    diff <(sched_err "$T/ocl-local.jsonl") <(sched_err "$T/ocl.jsonl") >/dev/null &&
    [ "$(field "$T/ocl.jsonl" machine.gpu | sort -u)" = "$OCL_DEV" ] && [ "$(field "$T/ocl.jsonl" target.cpu | sort -u)" = opencl ]
  check "--target opencl --runner: the 6 candidates of local, built, timed and checked on the server's $OCL_DEV" $?
  TEXC_SERVER_INJECT_WRONG=1 "$TEXC" "${OCL[@]}" --trials 3 --records "$T/ocl-wrong.jsonl" --runner "exec:$SERVER" >/dev/null 2>&1
  [ "$(field "$T/ocl-wrong.jsonl" error | sort -u)" = 4 ] && grep -q 'wrong result against the interpreter' "$T/ocl-wrong.jsonl"
  check "--target opencl --check-all: the server's outputs are what is checked" $?
  TEXC_TUNE_INJECT=badsource:2 "$TEXC" "${OCL[@]}" --records "$T/ocl-bad.jsonl" --runner "exec:$SERVER" >/dev/null 2>&1; rc=$?
  [ $rc = 0 ] && [ "$(valid_log "$T/ocl-bad.jsonl")" = 6 ] && [ "$(field "$T/ocl-bad.jsonl" error | sort | uniq -c | awk '{print $1 ":" $2}' | tr '\n' ' ')" = "5:0 1:2 " ] &&
    grep -q '"error_msg":"OpenCL program build failed on ' "$T/ocl-bad.jsonl"
  check "--target opencl: OpenCL C that fails to build on the server is one error record, the tune goes on" $?
fi
out=$("$TEXC" tune "$T/mm.tex" --target cuda --trials 2 --records "$T/cuda.jsonl" --runner "exec:$SERVER" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "measures llvm (CPU) and opencl candidates" <<<"$out"
check "--target cuda --runner: a clear error" $?

# 9. no runner left its artifacts behind (a lost one's built candidates included)
left=$(ls -d "$TMPDIR"/texc-runner-* 2>/dev/null | wc -l)
[ "$left" = 0 ]; check "no texc-runner-* folder left in TMPDIR ($left)" $?
