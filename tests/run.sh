#!/bin/bash
# tests/run.sh BUILD — every test layer; ends with "N passed, N failed[, N skipped]".
#   1. C unit tests     tests/unit/test_*.c   (lines "ok - NAME" / "not ok - NAME")
#   2. golden tests     tests/lit/**/*.tex    (lit + FileCheck)
#   3. suites           tests/suites/*.sh     (lines "ok - NAME" / "not ok - NAME" / "skip - NAME: why")
B=${1:-build}
cd "$(dirname "$0")/.."
export TEXC="$PWD/$B/texc" BUILD="$B" TEX_NUM_THREADS=${TEX_NUM_THREADS:-2}
pass=0 fail=0 skip=0
failed=()

count() { # reads ok/not ok/skip lines from stdin, echoes the failures (and the indented
           # details a suite prints after one, up to 40 lines), tallies
  local detail=0
  while IFS= read -r line; do
    case "$line" in
      "ok - "*) pass=$((pass + 1)); detail=0 ;;
      "not ok - "*) fail=$((fail + 1)); failed+=("${line#not ok - }"); echo "$line"; detail=40 ;;
      "skip - "*) skip=$((skip + 1)); detail=0 ;;
      " "*|$'\t'*) [ $detail -gt 0 ] && { echo "$line"; detail=$((detail - 1)); } ;;
      *) detail=0 ;;
    esac
  done
}

echo "== unit tests"
make --no-print-directory -s B="$B" ${OPT:+OPT="$OPT"} unit-tests >/dev/null || { fail=$((fail + 1)); failed+=("unit tests build"); }
for t in "$B"/tests/unit/test_*; do
  [ -x "$t" ] || continue
  out=$(timeout 300 "$t" 2>&1); rc=$?
  count < <(echo "$out")
  # A crash with no "not ok" line is still a failure.
  if [ $rc -ne 0 ] && ! grep -q '^not ok - ' <<<"$out"; then
    fail=$((fail + 1)); failed+=("$(basename "$t") exited $rc")
  fi
done
echo "   $pass passed, $fail failed so far"

echo "== golden tests (lit)"
LIT="python3 /usr/lib/llvm-19/build/utils/lit/lit.py"
command -v lit >/dev/null && [ ! -e /usr/lib/llvm-19/build/utils/lit/lit.py ] && LIT=lit
litout=$($LIT -v --param build="$B" tests/lit 2>&1)
while IFS= read -r line; do
  case "$line" in
    "PASS: "*|"XFAIL: "*) pass=$((pass + 1)) ;;
    "FAIL: "*|"XPASS: "*|"UNRESOLVED: "*) fail=$((fail + 1)); failed+=("lit ${line#*: }") ;;
    "UNSUPPORTED: "*) skip=$((skip + 1)) ;;
  esac
done < <(grep -E '^(PASS|FAIL|XFAIL|XPASS|UNRESOLVED|UNSUPPORTED): ' <<<"$litout")
grep -q '^FAIL: ' <<<"$litout" && sed -n '/^\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\*\* TEST/,/^\*\*\*\*\*\*\*\*\*\*$/p' <<<"$litout" | head -150
echo "   $pass passed, $fail failed so far"

for s in tests/suites/*.sh; do
  [ -f "$s" ] || continue
  echo "== suite $(basename "$s" .sh)"
  count < <(timeout 1800 bash "$s" 2>&1)
  echo "   $pass passed, $fail failed so far"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failed[@]}" | head -50
fi
if [ $skip -gt 0 ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ $fail -eq 0 ]
