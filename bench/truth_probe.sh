#!/bin/bash
# bench/truth_probe.sh BUILD MODE FILE KERNEL STEPS_FILE [NAME=VALUE ...] — build
# bench/truth_probe.c against BUILD's compiler objects and runtime (into BUILD/bench/), then run
# it once: one schedule (STEPS_FILE: the steps, one per line, as a record's "schedule") timed
# one way (MODE: tuner, tuner50, cand, bench, drift; see the file's header) in this fresh process.
# Example: bench/truth_probe.sh build cand examples/matmul.tex matmul best.steps M=1024 N=1024 K=1024
B=${1:-build}; shift
cd "$(dirname "$0")/.."
P=$B/bench/truth_probe
mkdir -p "$B/bench"
if [ ! -x "$P" ] || [ bench/truth_probe.c -nt "$P" ] || [ "$B/texc" -nt "$P" ]; then
  objs=()
  for o in $(find "$B/compiler" -mindepth 2 -name '*.o' ! -path '*/cli/main.o'); do
    s=${o#"$B"/}; [ -f "${s%.o}.c" ] && objs+=("$o") # skip objects of sources that moved
  done
  cc -std=c11 -D_GNU_SOURCE -O2 -rdynamic -Icompiler -Iruntime -I"$B/gen" -o "$P" bench/truth_probe.c \
    "${objs[@]}" $(find "$B/gen" -name '*.o') -Wl,--whole-archive "$B/libtexrt.a" -Wl,--no-whole-archive \
    $(llvm-config-19 --ldflags --libs) -lxgboost -lcjson -lprotobuf-c -lOpenCL -ldl -lpthread -lm || exit 1
fi
exec "$P" "$@"
