#!/bin/bash
# tests/suites/records.sh — the records log's guarantees (docs/TUNING.md): a cut-off last
# line costs only itself, a log that cannot be written stops the tune with an error, and
# a second tune on a log in use fails at once while readers keep working.
# Environment: $TEXC (the texc binary). Prints ok / not ok / skip lines.
TEXC=${TEXC:-build/texc}
T=$(mktemp -d /tmp/texc-records-XXXXXX)
trap 'rm -rf "$T"' EXIT
export TEX_NUM_THREADS=${TEX_NUM_THREADS:-2}

ok() { echo "ok - records: $1"; }
bad() { echo "not ok - records: $1"; }
check() { if [ "$2" = 0 ]; then ok "$1"; else bad "$1"; fi; }

cat >"$T/v.tex" <<'EOF'
const N = 64
kernel scale(X: f32[N]) -> Y: f32[N] {
  Y[i] = X[i] * 2.0
}
EOF
tune() { "$TEXC" tune "$T/v.tex" --trials "$1" --batch 2 --repeat 1 --seed 1 --records "$2"; }
nrec() { grep -c '"workload"' "$1"; }

# 1. a last line cut mid-write: the next tune starts a new line; its records all load
tune 2 "$T/a.jsonl" >/dev/null 2>&1
printf '{"workload": "cut off mid-wri' >>"$T/a.jsonl"
out=$(tune 2 "$T/a.jsonl" 2>&1 >/dev/null); rc=$?
[ $rc = 0 ] && grep -q "last line was cut off" <<<"$out"; check "a cut-off last line is reported" $?
loaded=$("$TEXC" records show "$T/a.jsonl" 2>"$T/e" | grep -c ' ok$\| wrong\| compile\| runtime')
[ "$loaded" -ge 4 ] && grep -q "a.jsonl:3: warning: skipping" "$T/e"
check "the records after a cut-off line are kept; the cut line is named file:line" $?

# 2. a log that cannot be written: one error, a non-zero exit, records before kept
out=$(tune 4 /dev/full 2>&1 >/dev/null); rc=$?
[ $rc != 0 ] && [ "$(grep -c 'error: cannot append' <<<"$out")" = 1 ]
check "a full disk (/dev/full) stops the tune with one error and exit $rc" $?
out=$(tune 2 "$T" 2>&1 >/dev/null); rc=$?
[ $rc != 0 ] && grep -q "cannot open the records log .* Is a directory" <<<"$out"
check "a directory as the log is an error before the search" $?
cp "$T/a.jsonl" "$T/ro.jsonl"; chmod a-w "$T/ro.jsonl"
if [ -w "$T/ro.jsonl" ]; then
  echo "skip - records: a read-only log: running as root"
else
  out=$(tune 2 "$T/ro.jsonl" 2>&1 >/dev/null); rc=$?
  [ $rc != 0 ] && grep -q "cannot open the records log" <<<"$out" && ! grep -q "^round" <<<"$out"
  check "a read-only log is an error before the search" $?
fi

# 3. a log in use by another tune: fail fast, naming the holder; readers still read it
before=$(nrec "$T/a.jsonl")
flock -o "$T/a.jsonl" sleep 30 &
holder=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do grep -q FLOCK /proc/locks && break; sleep 0.2; done
out=$(timeout 20 "$TEXC" tune "$T/v.tex" --trials 2 --records "$T/a.jsonl" 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] && grep -q "a.jsonl is in use by another texc tune (pid [0-9]*)" <<<"$out" &&
  [ "$(nrec "$T/a.jsonl")" = "$before" ]
check "a second tune on a log in use fails at once" $?
"$TEXC" records show "$T/a.jsonl" >/dev/null 2>&1; check "records show reads a log in use" $?
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
tune 2 "$T/a.jsonl" >/dev/null 2>&1; check "the log is free again when the holder ends" $?
