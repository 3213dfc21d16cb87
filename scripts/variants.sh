#!/bin/sh
# scripts/variants.sh FILE TARGET — the schedule variants of FILE that apply to TARGET, one per line
# (hand schedules only; `= auto` variants are listed when AUTO=1).
file=$1 target=$2
grep -E '^[[:space:]]*schedule[[:space:]]' "$file" | sed 's/#.*//' | while read -r _ name rest; do
  variant=${name#*.}
  case "$rest" in *"= auto"*) [ "${AUTO:-0}" = 1 ] || continue ;; esac
  case "$rest" in
    for*) targets=$(echo "$rest" | sed -E 's/^for[[:space:]]+//; s/[{=].*//; s/[ ,]+/ /g') ;;
    *) targets="llvm cuda opencl" ;;
  esac
  for t in $targets; do [ "$t" = "$target" ] && echo "$variant"; done
done | awk '!seen[$0]++'
