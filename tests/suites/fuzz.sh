#!/bin/bash
# tests/suites/fuzz.sh — fuzz-schedule's crash isolation (an injected crash and hang), the
# parser's fuzz corpus as a regression test, then 20 seconds of fresh fuzzing where clang's
# libFuzzer runtime is available (else a skip line).
# Env: BUILD (the build folder), TEXC; the fuzz binaries go to $BUILD/fuzz.
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
TEXC=${TEXC:-$B/texc}

# texc fuzz-schedule isolates each trial: an injected crash and hang are findings with the
# block that reproduces them, the other trials still run, and the exit status is 1.
T=$(mktemp -d /tmp/texc-fuzzsuite-XXXXXX)
trap 'rm -rf "$T"' EXIT
cp docs/examples/blur.tex "$T/blur.tex"
out=$(TEXC_FUZZ_INJECT=crash:1,hang:3 timeout 120 "$TEXC" fuzz-schedule "$T/blur.tex" -D H=11 \
  -D W=13 --count 5 --seed 1 --run-timeout 1 2>&1); rc=$?
if [ $rc = 1 ] && grep -q "^FAIL blur trial 1: CRASH: crashed (signal 11" <<<"$out" &&
   grep -q "^FAIL blur trial 3: TIMEOUT" <<<"$out" &&
   grep -q "5 random schedules checked, 2 failed (1 crashes, 1 timeouts, 0 mismatches, 0 errors" <<<"$out"; then
  echo "ok - fuzz: fuzz-schedule reports a crash and a hang and runs every trial"
else
  echo "not ok - fuzz: fuzz-schedule reports a crash and a hang and runs every trial (rc $rc)"
  echo "$out" | tail -20 | sed 's/^/#   /'
fi
# the reported block pastes into the file and runs (the crash was only injected)
sed -n '/^schedule blur.repro1 {/,/^}/p' <<<"$out" >>"$T/blur.tex"
if "$TEXC" run "$T/blur.tex" --schedule repro1 --check -D H=11 -D W=13 >/dev/null 2>&1; then
  echo "ok - fuzz: fuzz-schedule's repro block pastes and runs"
else
  echo "not ok - fuzz: fuzz-schedule's repro block pastes and runs"
fi
help=$("$TEXC" fuzz-schedule --help 2>&1)
if "$TEXC" --help 2>&1 | grep -q "^  fuzz-schedule" && grep -q -- "--count N" <<<"$help" &&
   grep -q -- "--run-timeout" <<<"$help" && grep -q -- "--seed" <<<"$help"; then
  echo "ok - fuzz: texc --help lists fuzz-schedule, fuzz-schedule --help its options"
else
  echo "not ok - fuzz: texc --help lists fuzz-schedule, fuzz-schedule --help its options"
fi

# fuzz-schedule of a network: every task (fused kernels with their producers and
# consumers) under its network default (the schedule `texc run` gives it), then random
# schedules, each against the interpreter; --kernel takes a task's id; a failure says how
# to reproduce it (no block to paste into a network).
NET=tests/lit/network/fusion_order.tex
out=$(timeout 300 "$TEXC" fuzz-schedule $NET --count 6 --seed 2 2>&1); rc=$?
if [ $rc = 0 ] && [ "$(grep -c ": 6 schedules (the task's default, then random ones) checked, 0 failed" <<<"$out")" = 3 ] &&
   grep -q '^t2_mm_from_u8_add: 6 schedules' <<<"$out"; then
  echo "ok - fuzz: fuzz-schedule of a network checks each of its 3 tasks"
else
  echo "not ok - fuzz: fuzz-schedule of a network checks each of its 3 tasks (rc $rc)"
  echo "$out" | tail -10 | sed 's/^/#   /'
fi
one=$(timeout 120 "$TEXC" fuzz-schedule $NET --kernel t1 --count 3 2>&1); rc1=$?
bad=$(timeout 60 "$TEXC" fuzz-schedule $NET --kernel t9 --count 3 2>&1); rc2=$?
inj=$(TEXC_FUZZ_INJECT=crash:1 timeout 120 "$TEXC" fuzz-schedule $NET --kernel t0 --count 2 --seed 4 2>&1); rc3=$?
if [ $rc1 = 0 ] && [ "$(grep -c 'schedules .*checked' <<<"$one")" = 1 ] && grep -q '^t1_mm_relu: 3 schedules' <<<"$one" &&
   [ $rc2 = 1 ] && grep -q 'error: --kernel t9: no task of that name or id in network net' <<<"$bad" &&
   [ $rc3 = 1 ] && grep -q "^# to reproduce: texc fuzz-schedule $NET --kernel t0_mm_relu_to_u8 --seed 4 --count 2" <<<"$inj"; then
  echo "ok - fuzz: fuzz-schedule --kernel picks a network's task by id; an unknown one is an error; a failure's reproduction"
else
  echo "not ok - fuzz: fuzz-schedule --kernel picks a network's task by id; an unknown one is an error; a failure's reproduction ($rc1 $rc2 $rc3)"
  echo "$one$bad$inj" | tail -10 | sed 's/^/#   /'
fi

n=$(ls tests/fuzz/corpus | wc -l)
if out=$(B="$B" timeout 600 tests/fuzz/run.sh replay 2>&1); then
  echo "ok - fuzz: corpus of $n inputs replays cleanly"
else
  echo "not ok - fuzz: corpus replay failed"
  echo "$out" | tail -30 | sed 's/^/#   /'
  exit 0
fi
if [ ! -x "$B/fuzz/fuzz_parse" ]; then
  echo "skip - fuzz: 20 seconds of fuzzing: no libFuzzer runtime (clang -fsanitize=fuzzer)"
  exit 0
fi
if out=$(B="$B" timeout 120 tests/fuzz/run.sh 20 2>&1); then
  runs=$(echo "$out" | sed -n 's/^parser fuzzing: \([0-9?]*\) executions.*/\1/p')
  echo "ok - fuzz: 20 seconds of fuzzing, ${runs:-?} inputs, no crash"
else
  echo "not ok - fuzz: 20 seconds of fuzzing found a problem (inputs in $B/fuzz/)"
  echo "$out" | grep -E -A20 '^parser fuzzing: ' | head -22 | sed 's/^/#   /'
fi
# The GPU default of a network task that reads at indices computed from data (Resize's
# tables, GridSample, Gather) is its first trial on OpenCL: it lowered to IR that did not
# verify (its cached regions were i32-typed and written with an inlined table's indices).
if "$TEXC" run examples/vadd.tex --target opencl -D N=16 >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  cat >"$tmp/taps.tex" <<'NET'
kernel taps(X: f32[8, 4], G: f32[6]) -> Y: f32[6, 4] {
  tensor P: f32[6, 2]
  tensor Q: f32[6, 2]
  P[o, t] = clamp(floor(G[o] * 7.0) + f32(t), 0.0, 7.0)
  Q[o, t] = t == 0 ? 1.0 - (G[o] * 7.0 - floor(G[o] * 7.0)) : G[o] * 7.0 - floor(G[o] * 7.0)
  Y[o, c] += Q[o, r] * X[clamp(i32(P[o, r]), 0, 7), c]
}
network net(X: f32[8, 4], G: f32[6]) -> Y: f32[6, 4] {
  Y = taps(X, G)
}
NET
  out=$(timeout 300 "$TEXC" fuzz-schedule "$tmp/taps.tex" --target opencl --count 2 2>&1); rc=$?
  if [ $rc = 0 ] && grep -q "^t0_taps: 2 schedules (the task's default, then random ones) checked, 0 failed" <<<"$out"; then
    echo "ok - fuzz: a network task's GPU default (data-dependent reads) is checked on OpenCL"
  else
    echo "not ok - fuzz: a network task's GPU default (data-dependent reads) is checked on OpenCL (rc $rc)"
    echo "$out" | tail -5 | sed 's/^/#   /'
  fi
  rm -rf "$tmp"
else
  echo "skip - fuzz: a network task's GPU default on OpenCL: no OpenCL device"
fi
