#!/bin/bash
# tests/suites/xreduce.sh — the GPU cross-thread reduction sketch (sketch.c, PLAN_GPU_XREDUCE)
# end to end: `texc tune --target opencl` of a small row sum and mat-vec on the OpenCL device
# (PoCL on a CPU-only machine) measures cross-thread candidates that match the interpreter
# (--check-all); one of them, printed as a schedule, runs with --check on OpenCL and compiles
# for CUDA through NVRTC (one within CUDA's 1024 threads per block: PoCL allows 4096).
# TEXC_NO_XREDUCE=1 (which leaves the sketch out) is tested in tests/unit/test_xreduce.c.
# The 6 random trials of the first round take the three sketches in turn (search.c
# sample_random): two of them are cross-thread candidates whatever the seed.
# Environment: $TEXC (the texc binary). Prints ok / not ok / skip lines.
cd "$(dirname "$0")/../.."
TEXC=${TEXC:-build/texc}
T=$(mktemp -d /tmp/texc-xreduce-XXXXXX)
trap 'rm -rf "$T"' EXIT

ok() { echo "ok - xreduce: $1"; }
bad() { echo "not ok - xreduce: $1"; [ -n "$2" ] && echo "$2" | head -15 | sed 's/^/    /'; }
skip() { echo "skip - xreduce: $1: $2"; }

if clinfo -l 2>/dev/null | grep -q 'Device'; then have_cl=1; else have_cl=0; fi
[ -e /usr/local/cuda/lib64/libnvrtc.so ] || ldconfig -p 2>/dev/null | grep -q libnvrtc && have_nvrtc=1 || have_nvrtc=0

cat >"$T/rowsum.tex" <<'EOF'
const M = 8, K = 16384
kernel rowsum(A: f32[M, K]) -> C: f32[M] {
  C[i] += A[i, k]
}
EOF
cat >"$T/matvec.tex" <<'EOF'
const M = 16, K = 4096
kernel matvec(A: f32[M, K], x: f32[K]) -> y: f32[M] {
  y[i] += A[i, k] * x[k]
}
EOF

# The schedules of the records in $1 whose steps bind an rfactored reduction to threadIdx.x,
# one per line with the steps joined by ';', those of at most $2 threads per block (default:
# any): the T of threadIdx.x times the rows Y on threadIdx.y (PoCL allows 4096, CUDA 1024).
xr_schedules() { python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except Exception: continue
    s = r.get("schedule") or ""
    if r.get("error") != 0 or "rfactor(" not in s or "_kt, threadIdx.x)" not in s: continue
    f = lambda tag: [int(l.split(",")[-1].strip(" )")) for l in s.splitlines() if tag in l and "split(" in l]
    t, y = f("_kt = split("), f("_by = split(")
    n = (t[0] if t else 1) * (y[0] if y and "threadIdx.y)" in s else 1)
    if len(sys.argv) > 2 and n > int(sys.argv[2]): continue
    print(";".join(l for l in s.splitlines() if l.strip()))' "$@"; }

for k in rowsum matvec; do
  label="tune --target opencl of $k measures cross-thread candidates, all checked"
  if [ $have_cl = 0 ]; then skip "$label" "no OpenCL device"; continue; fi
  out=$(timeout 300 "$TEXC" tune "$T/$k.tex" --target opencl --trials 6 --batch 6 --seed 1 \
    --check-all --repeat 2 --records "$T/$k.jsonl" 2>&1); rc=$?
  n=$(grep -c . "$T/$k.jsonl" 2>/dev/null || echo 0)
  errs=$(python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("error") != 0))' "$T/$k.jsonl" 2>/dev/null)
  nx=$(xr_schedules "$T/$k.jsonl" | grep -c .)
  if [ $rc = 0 ] && [ "$n" = 6 ] && [ "$errs" = 0 ] && [ "$nx" -ge 1 ]; then ok "$label ($nx of $n)"
  else bad "$label (rc $rc, $n records, $errs errors, $nx cross-thread)" "$out"; continue; fi

  # one cross-thread candidate as a schedule: runs with --check on OpenCL, compiles for CUDA
  { cat "$T/$k.tex"; echo "schedule $k.x for opencl, cuda {"
    xr_schedules "$T/$k.jsonl" 1024 2>/dev/null | head -1 | tr ';' '\n' | sed 's/^/  /'; echo "}"; } >"$T/${k}_x.tex"
  label="a tuned cross-thread $k runs with --check on opencl"
  out=$(timeout 120 "$TEXC" run "$T/${k}_x.tex" --target opencl --schedule x --check 2>&1)
  if [ $? = 0 ] && grep -q 'check: .*: ok' <<<"$out"; then ok "$label"; else bad "$label" "$out"; fi
  label="a cross-thread $k compiles for CUDA (NVRTC): a tree with barriers"
  if [ $have_nvrtc = 0 ]; then skip "$label" "no NVRTC"; continue; fi
  out=$(timeout 120 "$TEXC" "$T/${k}_x.tex" --target cuda --schedule x --emit ptx -o - 2>&1)
  if [ $? = 0 ] && grep -q '\.entry' <<<"$out" && grep -q 'bar.sync' <<<"$out"; then ok "$label"
  else bad "$label" "$out"; fi
done
