#!/bin/bash
# tests/fuzz/kernels.sh SEED COUNT [FUZZ_SCHEDULES]   random valid kernels (gen_kernels.py),
# each run with `texc run --check` (compiled vs interpreted) and, when FUZZ_SCHEDULES > 0,
# `texc fuzz-schedule --count FUZZ_SCHEDULES` (random schedules vs the default one).
# Env: TEXC (default build/texc), OUT (default /tmp/texc-kernels). Prints one line per
# finding ("FAIL FILE: what") and a summary; exits 1 when there was a finding.
cd "$(dirname "$0")/../.."
SEED=${1:-1}
COUNT=${2:-20}
NSCHED=${3:-0}
TEXC=${TEXC:-build/texc}
OUT=${OUT:-/tmp/texc-kernels}
mkdir -p "$OUT"
rm -f "$OUT"/gen_"$SEED"_*.tex
python3 tests/fuzz/gen_kernels.py "$SEED" "$COUNT" "$OUT"
fail=0 runs=0
for f in "$OUT"/gen_"$SEED"_*.tex; do
  defs=$(sed -n 's/^# DEFINES: //p' "$f")
  runs=$((runs + 1))
  # shellcheck disable=SC2086
  out=$(timeout 30 "$TEXC" run "$f" $defs --check 2>&1); rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL $f: texc run --check exited $rc: $(echo "$out" | grep -m1 -E 'error|MISMATCH|FAILED|Sanitizer|runtime error' || echo "$out" | tail -1)"
    fail=$((fail + 1))
    continue
  fi
  if [ "$NSCHED" -gt 0 ]; then
    # shellcheck disable=SC2086
    out=$(timeout 60 "$TEXC" fuzz-schedule "$f" $defs --count "$NSCHED" --seed "$SEED" 2>&1); rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL $f: texc fuzz-schedule exited $rc: $(echo "$out" | grep -m1 -E 'error|MISMATCH|FAIL|Sanitizer|runtime error' || echo "$out" | tail -1)"
      fail=$((fail + 1))
    fi
  fi
done
echo "kernels: $runs generated (seed $SEED), $fail failed"
[ $fail -eq 0 ]
