# tests/fuzz/campaign.sh — sourced by run.sh and pipeline.sh: one fuzzing campaign that lasts
# its time whatever it finds, then a summary of executions and findings.
#
# campaign NAME OUT SECONDS REPLAY -- FUZZER ARGS...
#   runs FUZZER in libFuzzer's fork mode with crashes, timeouts and out-of-memory ignored
#   (each is saved as $OUT/crash-* / timeout-* / oom-* and the run goes on) for SECONDS;
#   the whole log goes to $OUT/fuzz.log. Then prints
#     NAME: N executions in S s, F findings (C crashes, T timeouts, O out of memory)
#   and, for each finding (the first 20), its file and the first line that says what it is
#   (REPLAY, a plain driver, run on it; REPLAY may be empty). Returns 1 when there was a
#   finding or the fuzzer failed. FUZZ_JOBS (default 1) parallel fuzzing processes.
campaign() {
  local name=$1 out=$2 secs=$3 replay=$4
  shift 5
  set +e
  local mark="$out/.campaign-start" log="$out/fuzz.log" t0 rc
  touch "$mark"
  : >"$log"
  t0=$(date +%s)
  "$@" -max_total_time="$secs" -fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 >"$log" 2>&1 &
  local pid=$!
  # progress: libFuzzer's status lines ("#N: cov: ... exec/s ...") as they come
  tail -n +1 -f "$log" --pid=$pid 2>/dev/null | grep --line-buffered -E '^#[0-9]+: |^INFO: (fuzzed|exiting)|^Done'
  wait $pid; rc=$?
  local execs
  execs=$(sed -n -e 's/^Done \([0-9]*\) runs.*/\1/p' -e 's/^#\([0-9]*\): .*/\1/p' "$log" | tail -1)
  local files=() f
  while IFS= read -r f; do files+=("$f"); done < <(find "$out" -maxdepth 1 -type f -newer "$mark" \
    \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | sort)
  local nc nt no
  nc=$(printf '%s\n' "${files[@]}" | grep -c '/crash-' || true)
  nt=$(printf '%s\n' "${files[@]}" | grep -c '/timeout-' || true)
  no=$(printf '%s\n' "${files[@]}" | grep -c '/oom-' || true)
  echo "$name: ${execs:-?} executions in $(( $(date +%s) - t0 )) s, ${#files[@]} findings ($nc crashes, $nt timeouts, $no out of memory); log $log"
  local i=0 why
  for f in "${files[@]}"; do
    i=$((i + 1)); [ $i -gt 20 ] && { echo "  ... and $(( ${#files[@]} - 20 )) more in $out"; break; }
    why=""
    if [ -n "$replay" ] && [ -x "$replay" ]; then
      why=$(ASAN_OPTIONS=detect_leaks=0 timeout 20 "$replay" "$f" 2>&1 |
        grep -m1 -E '^fuzz_[a-z]*: |ERROR: [A-Za-z]*Sanitizer|runtime error|internal error|SUMMARY' | cut -c1-160)
      [ -z "$why" ] && why="(does not reproduce alone, or a timeout)"
    fi
    echo "  $f: $why"
  done
  [ ${#files[@]} -eq 0 ] && [ "$rc" -eq 0 ]
}
