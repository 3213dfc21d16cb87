#!/bin/bash
# bench/before_after.sh OLD_TEXC NEW_TEXC [ROUNDS] — every example's CPU variants (hand
# schedules and the default; networks end to end) timed with two texc binaries in one run,
# alternating old and new ROUNDS times (default 3), each time `bench --repeat 5`. Prints the
# median of the rounds' medians and new/old; a ratio above 1.10 is flagged "SLOWER".
# Used to show that a refactoring made no example slower.
old=$1 new=$2 rounds=${3:-3}
[ -x "$old" ] && [ -x "$new" ] || { echo "usage: $0 OLD_TEXC NEW_TEXC [ROUNDS]" >&2; exit 2; }
cd "$(dirname "$0")/.."
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-$(nproc)}

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# One timing (ms) of FILE's variant V with TEXC; "-" when it fails.
time_one() {
  local texc=$1 file=$2 v=$3 out
  if grep -q '^network ' "$file"; then
    out=$("$texc" bench "$file" --repeat 5 2>&1 | sed -n 's/^Measured latency: \([0-9.]*\) ms.*/\1/p')
  elif [ "$v" = default ]; then
    out=$("$texc" bench "$file" --repeat 5 2>&1 | awk '$2 == "default" {print $3}')
  else
    out=$("$texc" bench "$file" --schedule "$v" --repeat 5 2>&1 | awk -v v="$v" '$2 == v {print $3}')
  fi
  echo "${out:--}"
}

printf '%-14s %-10s %12s %12s %8s\n' example schedule "old ms" "new ms" new/old
slower=0
for f in examples/*.tex; do
  name=$(basename "$f" .tex)
  variants="default"
  grep -q '^network ' "$f" || variants="default $(scripts/variants.sh "$f" llvm | tr '\n' ' ')"
  for v in $variants; do
    o=() n=()
    for ((r = 0; r < rounds; r++)); do
      o+=("$(time_one "$old" "$f" "$v")")
      n+=("$(time_one "$new" "$f" "$v")")
    done
    mo=$(printf '%s\n' "${o[@]}" | grep -v '^-$' | median)
    mn=$(printf '%s\n' "${n[@]}" | grep -v '^-$' | median)
    ratio=$(awk -v a="$mo" -v b="$mn" 'BEGIN { if (a == "-" || b == "-" || a == 0) print "-"; else printf "%.2f", b / a }')
    flag=""
    awk -v r="$ratio" 'BEGIN { exit !(r != "-" && r > 1.10) }' && { flag="  SLOWER"; slower=$((slower + 1)); }
    printf '%-14s %-10s %12s %12s %8s%s\n' "$name" "$v" "$mo" "$mn" "$ratio" "$flag"
  done
done
echo "$slower variant(s) more than 10% slower"
