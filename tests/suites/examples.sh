#!/bin/bash
# Every example x every llvm variant (and the default schedule) runs compiled and matches the
# interpreter (`texc run --check`), at reduced sizes so the interpreter stays quick.
cd "$(dirname "$0")/../.."
declare -A small=(
  [vadd]="-D N=1000"
  [matmul]="-D M=67 -D N=45 -D K=33"
  [conv2d]="-D H=9 -D W=7 -D CI=8 -D CO=16"
  [softmax]="-D N=13 -D M=40"
  [transpose]="-D N=70 -D M=37"
  [blur]="-D H=50 -D W=70"
  [batch_matmul]="-D BATCH=3 -D M=20 -D N=40 -D K=17"
  [scan]="-D B=20 -D N=300"
  [histogram]="-D N=5000"
  [argmax]="-D M=30 -D N=200"
)
for f in examples/*.tex; do
  name=$(basename "$f" .tex)
  for v in default $(scripts/variants.sh "$f" llvm); do
    sched=""; [ "$v" = default ] || sched="--schedule $v"
    for sizes in "${small[$name]}" ""; do
      label="run --check $name.$v ${sizes:-(file sizes)}"
      # The files' own sizes only for the cheap examples: the interpreter is the reference.
      if [ -z "$sizes" ] && [[ "$name" != vadd && "$name" != transpose && "$name" != softmax ]]; then continue; fi
      out=$(timeout 300 "$TEXC" run "$f" $sched $sizes --check 2>&1)
      if [ $? -eq 0 ] && grep -q 'check: .*: ok' <<<"$out"; then echo "ok - $label"
      else echo "not ok - $label"; echo "$out" | head -20 | sed 's/^/    /'; fi
    done
  done
done
# Every example lowers and verifies with every schedule of every target (file sizes).
for f in examples/*.tex; do
  for t in llvm cuda opencl; do
    for v in default $(scripts/variants.sh "$f" "$t"); do
      sched=""; [ "$v" = default ] || sched="--schedule $v"
      if out=$("$TEXC" "$f" --target "$t" $sched --emit ir 2>&1 >/dev/null); then echo "ok - lower $(basename "$f" .tex).$v for $t"
      else echo "not ok - lower $(basename "$f" .tex).$v for $t"; echo "$out" | head -5 | sed 's/^/    /'; fi
    done
  done
done
