#!/bin/bash
# The differential test: many random valid step lists on every example, each checked against
# the interpreter's default-schedule result (texc fuzz-schedule). COUNT per kernel.
cd "$(dirname "$0")/../.."
COUNT=${FUZZ_COUNT:-150}
declare -A small=(
  [vadd]="-D N=77"
  [matmul]="-D M=19 -D N=23 -D K=9"
  [conv2d]="-D H=5 -D W=6 -D CI=3 -D CO=5"
  [softmax]="-D N=7 -D M=11"
  [transpose]="-D N=13 -D M=9"
  [blur]="-D H=11 -D W=13"
  [batch_matmul]="-D BATCH=2 -D M=7 -D N=9 -D K=5"
)
total=0
for f in examples/*.tex; do
  name=$(basename "$f" .tex)
  grep -q '^network ' "$f" && continue   # networks: tests/suites/network.sh
  out=$(timeout 900 "$TEXC" fuzz-schedule "$f" ${small[$name]} --count "$COUNT" --seed 7 2>&1)
  rc=$?
  n=$(grep -oE '[0-9]+ random schedules checked' <<<"$out" | awk '{s+=$1} END {print s+0}')
  total=$((total + n))
  if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then echo "ok - differential $name: $n random schedules"
  else echo "not ok - differential $name (rc $rc)"; echo "$out" | grep -v '^ok' | head -40 | sed 's/^/    /'; fi
done
echo "# differential: $total random schedules checked in all" >&2
