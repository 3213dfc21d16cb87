#!/bin/bash
# tests/fuzz/pipeline.sh SECONDS   build fuzz_pipeline (libFuzzer, ASan, UBSan) and fuzz the
#                                  whole pipeline for SECONDS, seeded with examples/*.tex,
#                                  tests/lit/**/*.tex and tests/fuzz/pipeline-corpus; the
#                                  whole time (findings are saved and the run goes on), then
#                                  executions and findings are printed (campaign.sh); exit 1
#                                  when there was a finding
# tests/fuzz/pipeline.sh replay    run each seed once (a plain driver without libFuzzer)
# Env: B (build folder, default build-fuzz). Seeds are never written; new inputs go to
# $B/fuzzp/corpus, findings to $B/fuzzp/crash-* / timeout-*.
set -e
cd "$(dirname "$0")/../.."
B=${B:-build-fuzz}
MODE=${1:-60}
OUT=$B/fuzzp
mkdir -p "$OUT/corpus" "$OUT/obj" "$OUT/seeds"
mk() { make -s --no-print-directory B="$B" "$@"; }
GEN_SRC=$(mk print-GEN_SRC)
# shellcheck disable=SC2086
mk $GEN_SRC >/dev/null
LLVM_CFLAGS=$(llvm-config-19 --cflags | sed 's/-std=[^ ]*//')
LIBS=$(mk print-LDLIBS)
CC=clang
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
FLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fPIC -Icompiler -Iruntime -I$B/gen -Wno-unused-function"
if ! $CC -fsanitize=fuzzer -x c /dev/null -c -o /dev/null 2>/dev/null; then
  [ "$MODE" = replay ] || { echo "no libFuzzer runtime (clang -fsanitize=fuzzer)" >&2; exit 2; }
  FUZZ=""
else
  FUZZ="-fsanitize=fuzzer-no-link"
fi

# Objects, rebuilt when their source or a header is newer (all but main.c).
objs=()
for src in $(mk print-COMPILER_SRC) $(mk print-RUNTIME_SRC) $GEN_SRC; do
  [ "$src" = compiler/cli/main.c ] && continue
  o="$OUT/obj/$(echo "$src" | tr / _).o"
  objs+=("$o")
  if [ ! -e "$o" ] || [ -n "$(find "$src" compiler/*.h compiler/*/*.h runtime/*.h -newer "$o" 2>/dev/null | head -1)" ]; then
    extra=""
    [ "$src" = compiler/target/llvm.c ] && extra="$LLVM_CFLAGS"
    $CC $FLAGS $SAN $FUZZ $extra -c "$src" -o "$o"
  fi
done

# Seeds: the examples and the golden tests (copied, so that names do not collide).
rm -f "$OUT/seeds/"*
for f in examples/*.tex tests/lit/*/*.tex tests/fuzz/pipeline-corpus/*; do
  [ -f "$f" ] && cp "$f" "$OUT/seeds/$(echo "$f" | tr / _)"
done

if [ "$MODE" = replay ]; then
  $CC $FLAGS $SAN tests/fuzz/fuzz_pipeline.c tests/fuzz/replay.c "${objs[@]}" -o "$OUT/replay" $LIBS
  ASAN_OPTIONS=detect_leaks=0 exec "$OUT/replay" "$OUT/seeds/"*
fi
$CC $FLAGS $SAN -fsanitize=fuzzer tests/fuzz/fuzz_pipeline.c "${objs[@]}" -o "$OUT/fuzz_pipeline" $LIBS
export ASAN_OPTIONS=detect_leaks=0
. tests/fuzz/campaign.sh
campaign "pipeline fuzzing" "$OUT" "$MODE" "$OUT/fuzz_pipeline" -- "$OUT/fuzz_pipeline" "$OUT/corpus" \
  "$OUT/seeds" -dict=tests/fuzz/tex.dict -max_len=4096 -timeout=10 -rss_limit_mb=3072 \
  -artifact_prefix="$OUT/" -print_final_stats=1 ${FUZZ_ARGS:-}
