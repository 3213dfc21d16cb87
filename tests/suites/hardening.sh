#!/bin/bash
# tests/suites/hardening.sh — bad input never crashes or hangs texc (well under a minute):
#   1. the fuzz corpora (parser: tests/fuzz/corpus, pipeline: tests/fuzz/pipeline-corpus)
#      replayed through the driver: every input ends with status 0 or 1, never a signal or a
#      timeout;
#   2. known pathological inputs (deep min/max nests, deep expressions) finish in seconds;
#   3. resource limits are clear errors: shapes whose size overflows, a tensor too big for
#      the machine in `texc run`;
#   4. a few random valid kernels (tests/fuzz/gen_kernels.py) agree with the interpreter.
# Env: TEXC (the texc binary), BUILD (the build folder).
cd "$(dirname "$0")/../.."
TEXC=${TEXC:-$PWD/build/texc}
TMP=$(mktemp -d /tmp/texc-hardening-XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# A status that is neither success nor a reported error: a crash (signal) or a timeout.
bad_status() { [ "$1" -ne 0 ] && [ "$1" -ne 1 ]; }

replay() { # replay NAME FILES... — each through `texc FILE --emit ir`
  local name=$1 n=0 bad=() f rc
  shift
  for f in "$@"; do
    [ -f "$f" ] || continue
    n=$((n + 1))
    timeout 10 "$TEXC" "$f" --emit ir >/dev/null 2>"$TMP/err"; rc=$?
    bad_status $rc && bad+=("$(basename "$f") (status $rc: $(grep -m1 -E 'internal error|ERROR|runtime error' "$TMP/err" | cut -c1-120))")
  done
  if [ ${#bad[@]} -eq 0 ]; then echo "ok - hardening: $name corpus, $n inputs through the driver"
  else
    echo "not ok - hardening: $name corpus: ${#bad[@]} of $n inputs crash or hang"
    printf '#   %s\n' "${bad[@]}" | head -10
  fi
}
replay parser tests/fuzz/corpus/*
replay pipeline tests/fuzz/pipeline-corpus/*

# expect NAME SECONDS WANT_STATUS PATTERN -- texc ARGS: finishes within SECONDS with status
# WANT_STATUS and PATTERN in its output.
expect() {
  local name=$1 secs=$2 want=$3 pat=$4 rc t0 t1
  shift 5
  t0=$(date +%s.%N)
  local args=() lim=unlimited
  while [ $# -gt 0 ]; do # --ulimit-v KB: run texc under that address-space limit
    if [ "$1" = --ulimit-v ]; then lim=$2; shift 2; else args+=("$1"); shift; fi
  done
  (ulimit -v "$lim"; exec timeout "$secs" "$TEXC" "${args[@]}") >"$TMP/out" 2>&1; rc=$?
  t1=$(date +%s.%N)
  local took
  took=$(echo "$t1 - $t0" | bc | sed 's/^\./0./' | cut -c1-5)
  if [ $rc -eq "$want" ] && grep -qE "$pat" "$TMP/out" &&
     ! grep -qE 'Sanitizer|runtime error|internal error' "$TMP/out"; then
    echo "ok - hardening: $name (${took} s)"
  elif [ $rc -eq 124 ]; then echo "not ok - hardening: $name: still running after $secs s"
  else
    echo "not ok - hardening: $name: status $rc (want $want), output:"
    head -c 600 "$TMP/out" | head -5 | sed 's/^/#   /'
  fi
}

# Pathological inputs.
python3 - "$TMP" <<'EOF'
import sys
d = sys.argv[1]
def clamp(n):
    e = "i"
    for k in range(n):
        e = ("min(%s, N - 1)" if k % 2 == 0 else "max(%s, 0)") % e
    return e
def mixed(n):
    e = "j"
    for k in range(n):
        e = ("min(%s, i)" if k % 2 == 0 else "max(%s, k)") % e
    return e
open(d + "/clamp60.tex", "w").write(
    "const N = 1000\nkernel k(A: f32[N]) -> B: f32[N] {\n  B[i] = A[%s]\n}\n" % clamp(60))
open(d + "/mixed60.tex", "w").write(
    "const N = 10\nkernel k(A: f32[N], X: f32[N, N]) -> B: f32[N, N] {\n"
    "  B[i, j] += A[%s] * X[k, j]\n}\n" % mixed(60))
e = "X[i]"
for k in range(450):
    e = "(%s + 1.0)" % e if k % 2 else "max(%s, 0.5)" % e
open(d + "/deep450.tex", "w").write("kernel k(X: f32[8]) -> Y: f32[8] {\n  Y[i] = %s\n}\n" % e)
open(d + "/parens.tex", "w").write(
    "kernel k(X: f32[8]) -> Y: f32[8] {\n  Y[i] = " + "(" * 5000 + "X[i]" + ")" * 5000 + "\n}\n")
open(d + "/overflow.tex", "w").write(
    "kernel k(A: f32[4000000000, 4000000000, 4000000000]) -> B: f32[4000000000, 4000000000, 4000000000] {\n"
    "  B[i, j, l] = A[i, j, l]\n}\n")
open(d + "/sym.tex", "w").write("kernel k(A: f32[N, M]) -> B: f32[N, M] {\n  B[i, j] = A[i, j]\n}\n")
open(d + "/huge.tex", "w").write(
    "kernel k(A: f32[1000000, 1000000]) -> B: f32[1000000, 1000000] {\n  B[i, j] = A[i, j] * 2.0\n}\n")
open(d + "/consts.tex", "w").write(
    "".join("const c%d = %d\n" % (i, i) for i in range(100000)) +
    "kernel k(A: f32[8]) -> B: f32[8] {\n  B[i] = A[i] * c99999\n}\n")
open(d + "/garbage.tex", "wb").write(bytes((i * 7919 + 13) % 251 for i in range(100000)))
open(d + "/shadow.tex", "w").write('import "/etc/passwd"\n')
open(d + "/bigconst.tex", "w").write(
    "const N = 99999999999999999999999\nkernel k(A: f32[N]) -> B: f32[N] {\n  B[i] = A[i]\n}\n")
EOF
expect "60 nested redundant clamps (-D N=10)" 10 0 "max abs err 0" -- run "$TMP/clamp60.tex" -D N=10 --check
expect "60 nested min/max over three axes" 10 0 "func k" -- "$TMP/mixed60.tex" --emit ir
expect "an expression 450 levels deep" 10 0 "ok" -- run "$TMP/deep450.tex" --check
expect "5000 nested parentheses are an error" 10 1 "nested too deeply" -- "$TMP/parens.tex" --emit ir
expect "a constant beyond 64 bits is an error" 10 1 "error" -- "$TMP/bigconst.tex" --emit ir
# 100k constants: names are hashed (a scan made this quadratic: 40k took 7 s, 100k minutes).
expect "100000 constants" 30 0 "func k" -- "$TMP/consts.tex" --emit ir
# 100 KB of garbage: 20 errors, then a stop (it printed 108k diagnostics).
expect "garbage stops after 20 errors" 10 1 "too many errors \(20\)" -- "$TMP/garbage.tex"
if [ "$(grep -c ': error: ' "$TMP/out")" -le 21 ]; then echo "ok - hardening: garbage prints at most 21 errors"
else echo "not ok - hardening: garbage printed $(grep -c ': error: ' "$TMP/out") errors"; fi
# Only .tex files are imported, and no line of another file is ever quoted.
expect "import of a file that is not .tex" 10 1 "only .tex files can be imported" -- "$TMP/shadow.tex"
expect "a file that is not .tex is not quoted" 10 1 "/etc/passwd:1:1: error" -- /etc/passwd
if grep -q '^root:' "$TMP/out"; then echo "not ok - hardening: /etc/passwd's first line was quoted"
else echo "ok - hardening: /etc/passwd's first line is not quoted"; fi
ln -sf /etc/passwd "$TMP/passwd.tex"
printf 'import "passwd.tex"\n' >"$TMP/link.tex"
expect "a .tex link to a file that is not .tex is not imported" 10 1 "leads to '/etc/passwd'" -- "$TMP/link.tex"
if grep -q '^root:' "$TMP/out"; then echo "not ok - hardening: a link's target /etc/passwd was quoted"
else echo "ok - hardening: a link's target /etc/passwd is not quoted"; fi

# Resource limits.
expect "a shape whose byte size overflows int64" 10 1 "overflow.tex:1:10: error: A has too many elements" -- "$TMP/overflow.tex" --emit ir
expect "symbolic sizes bound so that the size overflows" 10 1 "error: A has too many elements" -- run "$TMP/sym.tex" -D N=4294967296 -D M=4294967296
expect "a 4 TB tensor in texc run is a clear error" 20 1 "^texc: error|: error: " -- run "$TMP/huge.tex"
# Under `ulimit -v` the limit is the process's, not the machine's; out of memory anywhere
# is an error (exit 1), never an abort.
printf 'kernel k(A: f32[N, N]) -> B: f32[N, N] {\n  B[i, j] = A[i, j] * 2.0\n}\n' >"$TMP/square.tex"
if ldd "$TEXC" 2>/dev/null | grep -q libasan; then # ASan reserves terabytes of shadow: no ulimit -v
  echo "skip - hardening: tensors beyond ulimit -v: an ASan build cannot run under ulimit -v"
  echo "skip - hardening: out of memory under ulimit -v: an ASan build cannot run under ulimit -v"
else
  expect "tensors beyond ulimit -v are a clear error" 20 1 "ulimit -v" -- run "$TMP/square.tex" -D N=20000 --ulimit-v 1500000
  expect "out of memory under ulimit -v is an error" 20 1 "error: .*out of memory" -- run "$TMP/square.tex" -D N=10000 --ulimit-v 1000000
fi

# Random valid kernels against the interpreter.
if out=$(TEXC="$TEXC" OUT="$TMP/gen" timeout 60 tests/fuzz/kernels.sh 11 12 2>&1); then
  echo "ok - hardening: $(echo "$out" | tail -1)"
else
  echo "not ok - hardening: random kernels"
  echo "$out" | grep '^FAIL' | head -5 | sed 's/^/#   /'
fi
