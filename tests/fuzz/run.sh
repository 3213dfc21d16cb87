#!/bin/bash
# tests/fuzz/run.sh SECONDS   build the libFuzzer target and fuzz the parser for SECONDS
#                             (the whole time: findings are saved and the run goes on),
#                             then print executions and findings (tests/fuzz/campaign.sh);
#                             exit 1 when there was a finding
# tests/fuzz/run.sh replay    run every input of tests/fuzz/corpus once (libFuzzer, or a
#                             plain replay driver where clang's fuzzer runtime is missing)
# Env: B (build folder, default build-fuzz). Seeds come from tests/fuzz/corpus and are never
# written; new inputs go to $B/fuzz/corpus, crashes to $B/fuzz/crash-* (add the ones worth
# keeping to tests/fuzz/corpus by hand).
set -e
cd "$(dirname "$0")/../.."
B=${B:-build-fuzz}
MODE=${1:-60}
OUT=$B/fuzz
mkdir -p "$OUT/corpus"
make -s --no-print-directory B="$B" "$B/gen/parser.c" "$B/gen/lexer.c" >/dev/null
SRC="compiler/front/parse.c compiler/front/ast.c compiler/util/util.c compiler/util/diag.c $B/gen/parser.c $B/gen/lexer.c tests/fuzz/fuzz_parse.c"
FLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -Icompiler -Iruntime -I$B/gen -Wno-unused-function"

# The libFuzzer binary, when clang and its fuzzer runtime are there.
fuzzer=""
if command -v clang >/dev/null &&
   clang $FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
     $SRC -o "$OUT/fuzz_parse" -lm 2>"$OUT/build.log"; then
  fuzzer="$OUT/fuzz_parse"
fi

if [ "$MODE" = replay ]; then
  if [ -n "$fuzzer" ]; then
    exec "$fuzzer" -runs=0 tests/fuzz/corpus 2>&1
  fi
  SAN=""
  ${CC:-cc} $FLAGS -fsanitize=address,undefined -x c /dev/null -c -o /dev/null 2>/dev/null &&
    SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
  ${CC:-cc} $FLAGS $SAN $SRC tests/fuzz/replay.c -o "$OUT/replay" -lm
  exec "$OUT/replay" tests/fuzz/corpus/*
fi

if [ -z "$fuzzer" ]; then
  echo "no libFuzzer: clang -fsanitize=fuzzer failed (see $OUT/build.log)" >&2
  exit 2
fi
. tests/fuzz/campaign.sh
campaign "parser fuzzing" "$OUT" "$MODE" "$fuzzer" -- "$fuzzer" "$OUT/corpus" tests/fuzz/corpus \
  -dict=tests/fuzz/tex.dict -max_len=4096 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$OUT/" \
  -print_final_stats=1
