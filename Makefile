# texc — build, test, demo.  `make` builds build/texc; `make test`, `make demo`, `make asan`, `make bench`.
B ?= build
CC ?= cc
LLVM_CONFIG ?= llvm-config-19
LLVM_CFLAGS := $(shell $(LLVM_CONFIG) --cflags 2>/dev/null | sed 's/-std=[^ ]*//')
LLVM_LIBS := $(shell $(LLVM_CONFIG) --ldflags --libs 2>/dev/null) $(shell $(LLVM_CONFIG) --system-libs 2>/dev/null)
OPT ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wno-unused-parameter
CFLAGS := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -Icompiler -Iruntime -I$(B)/gen $(EXTRA_CFLAGS)
LDLIBS := $(LLVM_LIBS) -lxgboost -lcjson -lprotobuf-c -lOpenCL -ldl -lpthread -lm $(EXTRA_LDFLAGS)
# ONNX import (compiler/onnx/): protobuf-c code generated from the onnx.proto of libonnx-dev.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto

COMPILER_SRC := $(wildcard compiler/*/*.c)
RUNTIME_SRC := $(wildcard runtime/*.c)
GEN_SRC := $(B)/gen/lexer.c $(B)/gen/parser.c $(B)/gen/onnx.pb-c.c
COMPILER_OBJ := $(COMPILER_SRC:%.c=$(B)/%.o) $(GEN_SRC:%.c=%.o)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(B)/%.o)
HEADERS := compiler/texc.h runtime/texrt.h runtime/rt_internal.h $(wildcard compiler/*.h compiler/*/*.h runtime/*.h)

# texc-mpi (compiler/dist/mpi/) when Open MPI's mpicc is there: `make mpi`
MPICC ?= mpicc
MPI_BIN := $(if $(shell command -v $(MPICC) 2>/dev/null),$(B)/texc-mpi)

all: $(B)/texc $(B)/libtexrt.a $(B)/texc-measure-server $(MPI_BIN)

$(B)/gen/parser.c $(B)/gen/parser.h &: grammar/parser.y
	@mkdir -p $(B)/gen
	bison -Wall -Werror --defines=$(B)/gen/parser.h -o $(B)/gen/parser.c $<

$(B)/gen/lexer.c: grammar/lexer.re $(B)/gen/parser.h
	@mkdir -p $(B)/gen
	re2c -W --no-generation-date -o $@ $<

$(B)/gen/onnx.pb-c.c $(B)/gen/onnx.pb-c.h &: $(ONNX_PROTO)
	@mkdir -p $(B)/gen
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(B)/gen $(notdir $(ONNX_PROTO))

$(B)/compiler/onnx/%.o: compiler/onnx/%.c $(HEADERS) $(B)/gen/parser.h $(B)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/gen/%.o: $(B)/gen/%.c $(HEADERS) $(B)/gen/parser.h
	$(CC) $(CFLAGS) -Wno-unused-function -Wno-missing-prototypes -c $< -o $@

$(B)/compiler/target/llvm.o: compiler/target/llvm.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LLVM_CFLAGS) -c $< -o $@

$(B)/%.o: %.c $(HEADERS) $(B)/gen/parser.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libtexrt.a: $(RUNTIME_OBJ)
	@rm -f $@
	ar rcs $@ $^

# -rdynamic: JIT-compiled kernels find the runtime (rt_parallel_for) in texc itself.
$(B)/texc: $(COMPILER_OBJ) $(B)/libtexrt.a
	$(CC) $(CFLAGS) -rdynamic -o $@ $(COMPILER_OBJ) -Wl,--whole-archive $(B)/libtexrt.a -Wl,--no-whole-archive $(LDLIBS)

# texc-measure-server (compiler/dist/server/): the runtime and libc only, no LLVM, so that
# it builds for a board. -rdynamic and the whole runtime: the candidates' shared objects
# find rt_parallel_for (and libm's functions) in it.
SERVER_SRC := compiler/dist/server/server.c compiler/dist/wire.c
$(B)/texc-measure-server: $(SERVER_SRC) compiler/dist/wire.h runtime/texrt.h $(B)/libtexrt.a
	$(CC) $(CFLAGS) -rdynamic -o $@ $(SERVER_SRC) -Wl,--whole-archive $(B)/libtexrt.a -Wl,--no-whole-archive -lOpenCL -ldl -lpthread -Wl,--no-as-needed -lm
# The server for an aarch64 board (Debian: gcc-aarch64-linux-gnu); without OpenCL. Under
# qemu: qemu-aarch64-static -L /usr/aarch64-linux-gnu $(B)/aarch64/texc-measure-server
AARCH64_CC ?= aarch64-linux-gnu-gcc
$(B)/aarch64/texc-measure-server: $(SERVER_SRC) compiler/dist/wire.h runtime/rt.c runtime/rt_cpu.c runtime/rt_machine.c runtime/texrt.h runtime/rt_internal.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) -std=c11 -D_GNU_SOURCE -O2 $(WARN) -Iruntime -rdynamic -o $@ $(SERVER_SRC) runtime/rt.c runtime/rt_cpu.c runtime/rt_machine.c -ldl -lpthread -Wl,--no-as-needed -lm
aarch64-server: $(B)/aarch64/texc-measure-server

# C unit tests: each tests/unit/test_X.c links against the compiler (without main.c).
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:%.c=$(B)/%)
LIB_OBJ := $(filter-out $(B)/compiler/cli/main.o,$(COMPILER_OBJ))
$(B)/tests/unit/%: tests/unit/%.c tests/unit/unit.h tests/unit/space.h $(LIB_OBJ) $(B)/libtexrt.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -rdynamic -o $@ $< $(LIB_OBJ) -Wl,--whole-archive $(B)/libtexrt.a -Wl,--no-whole-archive $(LDLIBS)
unit-tests: $(UNIT_BIN)

# texc-mpi: texc (without main.c) plus the MPI measurer; -rdynamic as texc.
$(B)/texc-mpi: compiler/dist/mpi/texc_mpi.c $(HEADERS) $(LIB_OBJ) $(B)/libtexrt.a
	$(MPICC) $(CFLAGS) -rdynamic -o $@ $< $(LIB_OBJ) -Wl,--whole-archive $(B)/libtexrt.a -Wl,--no-whole-archive $(LDLIBS)
mpi: $(B)/texc-mpi

deps:
	@./scripts/install-deps.sh

test: deps
	@$(MAKE) --no-print-directory all
	@./tests/run.sh $(B)

demo: deps
	@$(MAKE) --no-print-directory all
	@./scripts/demo.sh $(B)

bench: deps
	@$(MAKE) --no-print-directory all
	@./bench/run.sh $(B)

ASAN_OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DTEXC_DEBUG
asan: deps
	@$(MAKE) --no-print-directory B=build-asan OPT="$(ASAN_OPT)" all unit-tests
	@OPT="$(ASAN_OPT)" ASAN_OPTIONS=detect_leaks=0:handle_segv=0 UBSAN_OPTIONS=print_stacktrace=1 ./tests/run.sh build-asan

clean:
	rm -rf build build-asan

# `make -s print-VAR` prints a variable: tests/fuzz/pipeline.sh builds the same sources and
# links the same libraries as texc (with libFuzzer), so it asks here instead of keeping a copy.
print-%:
	@echo $($*)

.PHONY: all unit-tests deps test demo bench asan clean aarch64-server mpi
