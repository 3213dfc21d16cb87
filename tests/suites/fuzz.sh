#!/bin/bash
# tests/suites/fuzz.sh — the parser's fuzz corpus as a regression test, then 20 seconds of
# fresh fuzzing where clang's libFuzzer runtime is available (else a skip line).
# Env: BUILD (the build folder); the fuzz binaries go to $BUILD/fuzz.
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
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
  runs=$(echo "$out" | sed -n 's/^Done \([0-9]*\) runs.*/\1/p')
  echo "ok - fuzz: 20 seconds of fuzzing, ${runs:-?} inputs, no crash"
else
  echo "not ok - fuzz: 20 seconds of fuzzing found a problem (inputs in $B/fuzz/)"
  echo "$out" | grep -E 'ERROR|SUMMARY|abort|artifact|round-trip|stable' | head -20 | sed 's/^/#   /'
fi
