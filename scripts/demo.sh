#!/bin/bash
# scripts/demo.sh BUILD — the main job: every example on the CPU with its hand schedules (and an
# auto schedule where the file asks for one), each checked against the reference interpreter,
# then a table of times: the median of each schedule, its GFLOP/s and GB/s (bytes of every
# tensor once per call: what a memory-bound kernel must move) and its speedup over the
# default, computed from the medians shown (default / schedule); last, the HTML report of
# the demo's tune (`texc records report`) and its path.
B=${1:-build}
cd "$(dirname "$0")/.."
TEXC=$B/texc
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-$(nproc)}
RECORDS=${RECORDS:-$B/demo-records.jsonl}
TRIALS=${TRIALS:-200}
fail=0
rows=()
for f in examples/*.tex; do
  name=$(basename "$f" .tex)
  echo "== $name"
  variants="default $(scripts/variants.sh "$f" llvm | tr '\n' ' ')"
  for v in $(AUTO=1 scripts/variants.sh "$f" llvm); do
    case " $variants " in *" $v "*) ;; *) variants="$variants $v"; auto_v=$v ;; esac
  done
  if [ -n "${auto_v:-}" ]; then
    echo "   tuning $name ($TRIALS trials, records in $RECORDS) for the auto schedule '$auto_v'"
    $TEXC tune "$f" --trials "$TRIALS" --records "$RECORDS" | tail -n 25
  fi
  unset auto_v
  def_ms=""
  for v in $variants; do
    sched=""; [ "$v" = default ] || sched="--schedule $v"
    out=$($TEXC run "$f" $sched --records "$RECORDS" --check 2>&1)
    rc=$?
    check=$(grep -oE 'check: .*' <<<"$out" | head -1)
    [ $rc -eq 0 ] || { fail=1; echo "$out" | head -20; }
    timing=$($TEXC bench "$f" --schedule "$v" --records "$RECORDS" --repeat 5 2>&1 | awk -v v="$v" '$2 == v {print $3, $4, $5}')
    [ "$v" = default ] && timing=$($TEXC bench "$f" --repeat 5 2>&1 | awk '$2 == "default" {print $3, $4, $5}')
    # A network prints its end-to-end latency instead of a table.
    grep -q '^network ' "$f" && timing="$($TEXC bench "$f" --records "$RECORDS" --repeat 5 2>&1 | sed -n 's/^Measured latency: \([0-9.]*\) ms.*/\1/p') - -"
    read -r ms gflops gbs <<<"$timing"
    [ "$v" = default ] && def_ms=$ms
    speedup=$(awk -v d="$def_ms" -v m="$ms" 'BEGIN { if (d + 0 > 0 && m + 0 > 0) printf "%.2fx", d / m; else print "-" }')
    rows+=("$(printf '%-14s %-10s %12s %10s %10s %9s   %s' "$name" "$v" "${ms:-error}" "${gflops:--}" "${gbs:--}" "$speedup" "${check:-check: FAILED}")")
  done
done
echo
printf '%-14s %-10s %12s %10s %10s %9s   %s\n' example schedule "median ms" GFLOP/s GB/s speedup "against the reference interpreter"
printf '%s\n' "${rows[@]}"
# The report of the demo's own tune: curves, errors, best schedules, the machine.
REPORT=${REPORT:-$B/demo-report.html}
if [ -s "$RECORDS" ]; then
  if $TEXC records report "$RECORDS" -o "$REPORT" 2>/dev/null; then
    echo
    echo "tuning report: $(cd "$(dirname "$REPORT")" && pwd)/$(basename "$REPORT")"
  else
    echo "texc records report $RECORDS failed"; fail=1
  fi
fi
exit $fail
